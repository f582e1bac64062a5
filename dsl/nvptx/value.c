/*
 * dsl/nvptx/value.c — where a value's registers come from.
 *
 * Eager values (loads, reductions, dots, loop-carried values, element-wise
 * ops on them) are emitted where the IR defines them, in their natural
 * layout.  Lazy values (constants, ranges, splats, views, index math) are
 * emitted where they are used, directly in the layout the user asks for, so
 * that address and mask arithmetic never needs a layout conversion.
 *
 * Each materialisation is remembered with the scope it was made in; a scope
 * closes when its region ends, so a cached value always dominates its uses.
 * Register arrays are immutable once recorded (views share them).
 *
 * Conversions between layouts are free when every thread already holds what
 * it needs (a re-indexing of registers); otherwise they go through shared
 * memory: barrier, every holder writes, barrier, every thread reads.
 */
#include <string.h>

#include "dsl/nvptx/codegen.h"

/* ---- scopes -------------------------------------------------------------------- */

int teeny__cg_scope_push(cg *g) {
  if (g->nscopes == g->capscopes) {
    int cap = g->capscopes ? 2 * g->capscopes : 64;
    bool *v = teeny__cg_alloc(g, sizeof *v * (size_t)cap);
    if (g->nscopes)
      memcpy(v, g->scope_open, sizeof *v * (size_t)g->nscopes);
    g->scope_open = v;
    g->capscopes = cap;
  }
  int saved = g->scope;
  g->scope = g->nscopes++;
  g->scope_open[g->scope] = true;
  return saved;
}

void teeny__cg_scope_pop(cg *g, int saved) {
  g->scope_open[g->scope] = false;
  g->scope = saved;
}

/* ---- the value table ----------------------------------------------------------------- */

/* The live materialisation of id in L; entries of closed scopes are
 * unlinked on the way (combine regions are re-emitted many times). */
static cg_regs *find(cg *g, int id, const cg_layout *L) {
  for (cg_regs **pe = &g->vals[id]; *pe;) {
    cg_regs *e = *pe;
    if (!g->scope_open[e->scope]) {
      *pe = e->next;
      continue;
    }
    if (e->L == L && (e->scope < g->hide_lo || e->scope >= g->hide_hi) &&
        !(e->scope < g->fresh_from && g->vi[id].lazy))
      return e;
    pe = &e->next;
  }
  return NULL;
}

LLVMValueRef *teeny__cg_regs_new(cg *g, const cg_layout *L) {
  g->work += 1L << L->nreg;
  if (g->work > CG_MAX_WORK)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "kernel too large for the code generator (more than %ld values "
                   "per thread in all); use smaller tiles or more warps",
                   CG_MAX_WORK);
  return teeny__cg_alloc(g, sizeof(LLVMValueRef) * ((size_t)1 << L->nreg));
}

void teeny__cg_set(cg *g, int id, const cg_layout *L, LLVMValueRef *regs) {
  cg_regs *e = teeny__cg_alloc(g, sizeof *e);
  e->L = L;
  e->scope = g->scope;
  e->v = regs;
  e->next = g->vals[id];
  g->vals[id] = e;
}

void teeny__cg_set_scalar(cg *g, int id, LLVMValueRef v) {
  LLVMValueRef *one = teeny__cg_alloc(g, sizeof *one);
  one[0] = v;
  teeny__cg_set(g, id, NULL, one);
}

LLVMValueRef teeny__cg_scalar(cg *g, int id) {
  cg_regs *e = find(g, id, NULL);
  if (!e)
    teeny__cg_fail(g, TEENY_E_INTERNAL,
                   "internal error: scalar %%%d used before it was lowered", id);
  return e->v[0];
}

static LLVMValueRef *fill(cg *g, const cg_layout *L, LLVMValueRef v) {
  LLVMValueRef *r = teeny__cg_regs_new(g, L);
  for (long i = 0; i < (1L << L->nreg); i++)
    r[i] = v;
  return r;
}

/* Compute a lazy value directly in L. */
static LLVMValueRef *remat(cg *g, int id, const cg_layout *L) {
  const teeny_op *op = g->f->values[id].def;
  teeny_type t = teeny__ir_type(g->f, id);
  switch (op->code) {
  case IR_CONST:
    return fill(g, L, teeny__cg_const(g, t.dt, op->cval));
  case IR_SPLAT:
    return fill(g, L, teeny__cg_scalar(g, op->args[0]));
  case IR_MAKE_RANGE: {
    LLVMValueRef *r = teeny__cg_regs_new(g, L);
    for (long i = 0; i < (1L << L->nreg); i++) {
      long s = teeny__cg_dup_src(L, i);
      if (s != i) {
        r[i] = r[s];
        continue;
      }
      LLVMValueRef v = teeny__cg_flat(g, L, i);
      if (op->start)
        v = LLVMBuildAdd(g->b, v, teeny__cg_i32(g, op->start), "");
      r[i] = v;
    }
    return r;
  }
  case IR_BROADCAST:
  case IR_EXPAND_DIMS:
  case IR_RESHAPE:
  case IR_TRANS: {
    teeny_type st = teeny__ir_type(g->f, op->args[0]);
    return teeny__cg_get(g, op->args[0], teeny__cg_pullback(g, L, op, st));
  }
  default:
    return teeny__cg_elementwise_regs(g, op, L);
  }
}

LLVMValueRef *teeny__cg_get(cg *g, int id, const cg_layout *L) {
  teeny_type t = teeny__ir_type(g->f, id);
  if (t.rank == 0) {
    cg_regs *e = find(g, id, NULL);
    if (!e)
      teeny__cg_fail(g, TEENY_E_INTERNAL,
                     "internal error: scalar %%%d used before it was lowered", id);
    return e->v;
  }
  cg_regs *e = find(g, id, L);
  if (e)
    return e->v;
  LLVMValueRef *regs;
  const cg_vinfo *vi = &g->vi[id];
  if (vi->lazy) {
    regs = remat(g, id, L);
  } else {
    cg_regs *home = find(g, id, vi->nat);
    if (!home)
      teeny__cg_fail(g, TEENY_E_INTERNAL,
                     "internal error: tile %%%d used before it was lowered", id);
    regs = teeny__cg_convert(g, home->v, vi->nat, L, t.dt);
  }
  teeny__cg_set(g, id, L, regs);
  return regs;
}

/* ---- shared memory ------------------------------------------------------------------ */

void teeny__cg_smem_begin(cg *g) {
  teeny__cg_barrier(g); /* the previous exchange's readers are done */
  g->smem_cur = 0;
}

int teeny__cg_smem_take(cg *g, int bytes, int align) {
  int off = (g->smem_cur + align - 1) & ~(align - 1);
  g->smem_cur = off + bytes;
  if (g->smem_cur > g->smem_bytes)
    g->smem_bytes = g->smem_cur;
  /* the dot/stage buffers must stay clear of exchanges made while they are
   * in use, and of those in a loop body that uses them (made, in the
   * body, before the dot takes its buffers) */
  if ((g->db_bytes || g->db_body) && g->smem_cur > g->smem_db_x)
    g->smem_db_x = g->smem_cur;
  if (align > g->smem_align)
    g->smem_align = align;
  return off;
}

int teeny__cg_db_take(cg *g, int bytes, int align) {
  int off = (g->db_bytes + align - 1) & ~(align - 1);
  g->db_bytes = off + bytes;
  if (g->db_bytes > g->db_hwm)
    g->db_hwm = g->db_bytes;
  if (align > g->smem_align)
    g->smem_align = align;
  return off;
}

LLVMValueRef teeny__cg_smem_ptr(cg *g, LLVMValueRef byte_off) {
  return LLVMBuildGEP2(g->b, g->t_i8, g->smem, &byte_off, 1, "");
}

static int mem_size(teeny_dtype dt) {
  return dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(dt);
}

void teeny__cg_smem_store(cg *g, LLVMValueRef addr, teeny_dtype dt,
                          LLVMValueRef *v, int n) {
  LLVMTypeRef et = teeny__cg_memtype(g, dt);
  LLVMValueRef st;
  if (n == 1) {
    st = LLVMBuildStore(g->b, teeny__cg_to_mem(g, dt, v[0]), addr);
  } else {
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(et, (unsigned)n));
    for (int i = 0; i < n; i++)
      vec = LLVMBuildInsertElement(g->b, vec, teeny__cg_to_mem(g, dt, v[i]),
                                   teeny__cg_i32(g, i), "");
    st = LLVMBuildStore(g->b, vec, addr);
  }
  LLVMSetAlignment(st, (unsigned)(n * mem_size(dt)));
}

void teeny__cg_smem_load(cg *g, LLVMValueRef addr, teeny_dtype dt,
                         LLVMValueRef *out, int n) {
  LLVMTypeRef et = teeny__cg_memtype(g, dt);
  if (n == 1) {
    LLVMValueRef ld = LLVMBuildLoad2(g->b, et, addr, "");
    LLVMSetAlignment(ld, (unsigned)mem_size(dt));
    out[0] = teeny__cg_from_mem(g, dt, ld);
    return;
  }
  LLVMValueRef ld = LLVMBuildLoad2(g->b, LLVMVectorType(et, (unsigned)n), addr, "");
  LLVMSetAlignment(ld, (unsigned)(n * mem_size(dt)));
  for (int i = 0; i < n; i++)
    out[i] = teeny__cg_from_mem(
        g, dt, LLVMBuildExtractElement(g->b, ld, teeny__cg_i32(g, i), ""));
}

/* Elements per shared-memory access for layout L: consecutive registers
 * that hold consecutive flat indices, at most 16 bytes. */
static int smem_vec(const cg_layout *L, teeny_dtype dt) {
  int run = teeny__cg_run_bits(L, L->rank - 1);
  int n = 1 << run;
  while (n * mem_size(dt) > 16)
    n >>= 1;
  return n;
}

/* Byte offset of flat index `flat` in a row-major [R, C] tile whose rows
 * of 16 bytes or more are cut into 16-byte chunks XORed with the row's
 * phase (as the dot operand tiles are), so that a warp writing or reading
 * down a column of rows does not hit one bank eight times over. */
static LLVMValueRef swizzled(cg *g, const cg_layout *L, LLVMValueRef flat, int es) {
  LLVMValueRef off = LLVMBuildMul(g->b, flat, teeny__cg_i32(g, es), "");
  if (L->rank != 2)
    return off;
  int row_bytes = L->shape[1] * es, cpr = row_bytes / 16;
  if (cpr < 2)
    return off;
  int per_phase = cpr >= 8 ? 1 : 8 / cpr, max_phase = cpr >= 8 ? 8 : cpr;
  LLVMValueRef row = teeny__cg_coord(g, L, flat, 0);
  LLVMValueRef phase = LLVMBuildAnd(
      g->b, LLVMBuildLShr(g->b, row, teeny__cg_i32(g, teeny__cg_log2(per_phase)), ""),
      teeny__cg_i32(g, max_phase - 1), "");
  return LLVMBuildXor(g->b, off, LLVMBuildShl(g->b, phase, teeny__cg_i32(g, 4), ""), "");
}

/* The general conversion: through shared memory, row-major and swizzled. */
static LLVMValueRef *smem_exchange(cg *g, LLVMValueRef *src, const cg_layout *A,
                                   const cg_layout *B, teeny_dtype dt) {
  int es = mem_size(dt);
  long numel = 1;
  for (int d = 0; d < A->rank; d++)
    numel *= A->shape[d];
  teeny__cg_smem_begin(g);
  int base = teeny__cg_smem_take(g, (int)(numel * es), 16);
  int va = smem_vec(A, dt), vb = smem_vec(B, dt);
  for (long r = 0; r < (1L << A->nreg); r += va) {
    if (!teeny__cg_reg_owner(A, r))
      continue;
    LLVMValueRef off = swizzled(g, A, teeny__cg_flat(g, A, r), es);
    off = LLVMBuildAdd(g->b, off, teeny__cg_i32(g, base), "");
    teeny__cg_smem_store(g, teeny__cg_smem_ptr(g, off), dt, src + r, va);
  }
  teeny__cg_barrier(g);
  LLVMValueRef *out = teeny__cg_regs_new(g, B);
  for (long r = 0; r < (1L << B->nreg); r += vb) {
    long s = teeny__cg_dup_src(B, r);
    if (s != r) {
      for (int i = 0; i < vb; i++)
        out[r + i] = out[s + i];
      continue;
    }
    LLVMValueRef off = swizzled(g, B, teeny__cg_flat(g, B, r), es);
    off = LLVMBuildAdd(g->b, off, teeny__cg_i32(g, base), "");
    teeny__cg_smem_load(g, teeny__cg_smem_ptr(g, off), dt, out + r, vb);
  }
  return out;
}

LLVMValueRef *teeny__cg_convert(cg *g, LLVMValueRef *src, const cg_layout *A,
                                const cg_layout *B, teeny_dtype dt) {
  if (A == B)
    return src;
  int *map = teeny__cg_alloc(g, sizeof(int) * ((size_t)1 << B->nreg));
  if (teeny__cg_free_conv(A, B, map)) {
    LLVMValueRef *out = teeny__cg_regs_new(g, B);
    for (long r = 0; r < (1L << B->nreg); r++)
      out[r] = src[map[r]];
    return out;
  }
  return smem_exchange(g, src, A, B, dt);
}

LLVMValueRef teeny__cg_bcast_thread0(cg *g, LLVMValueRef v, teeny_dtype dt) {
  teeny__cg_smem_begin(g);
  int off = teeny__cg_smem_take(g, 16, 16);
  LLVMValueRef addr = teeny__cg_smem_ptr(g, teeny__cg_i32(g, off));
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "t0");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "t0.end");
  LLVMValueRef is0 = LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, teeny__cg_i32(g, 0), "");
  LLVMBuildCondBr(g->b, is0, then, cont);
  LLVMPositionBuilderAtEnd(g->b, then);
  teeny__cg_smem_store(g, addr, dt, &v, 1);
  LLVMBuildBr(g->b, cont);
  LLVMPositionBuilderAtEnd(g->b, cont);
  teeny__cg_barrier(g);
  LLVMValueRef out;
  teeny__cg_smem_load(g, addr, dt, &out, 1);
  return out;
}
