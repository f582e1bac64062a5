/*
 * dsl/codegen_mem.c — loads, stores and atomics on global memory.
 *
 * A tile access is cut into groups of w consecutive registers that hold w
 * consecutive elements along the pointer's contiguous axis (w * size <= 16
 * bytes).  Each group is accessed one of three ways:
 *   static   the axis facts prove the addresses aligned and the mask the
 *            same for the whole group: one 128-bit (or narrower) access,
 *            predicated on the group's mask;
 *   dynamic  contiguous, but alignment or mask uniformity is only known at
 *            run time: the vector access runs when the group is aligned and
 *            fully in bounds, per-element accesses predicated on the
 *            element's mask run otherwise (so the interior of a tile is
 *            vectorised for any length and no masked-off element is touched);
 *   scalar   one predicated access per element.
 * Predicated accesses are inline PTX (`@p ld.global.nc.v4.f32`), the
 * masked-off lanes keeping the `other` value moved in beforehand, as
 * llvm.masked.load would be scalarised.  Loads through pointers the kernel
 * never writes use ld.global.nc and carry no memory clobber, so LLVM may
 * schedule them freely; the others are ordered with stores.
 *
 * Elements held by more than one thread are stored and updated by one of
 * them only.  Scalar (rank-0) stores and atomics run in thread 0; an
 * atomic's old value is then broadcast through shared memory.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/codegen_llvm.h"

static int elem_size(teeny_dtype dt) {
  return dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(dt);
}

static teeny_type vtype(cg *g, int id) { return teeny__ir_type(g->f, id); }

/* Loads through p may use the non-coherent path: nothing the kernel writes
 * can be behind it. */
static bool readonly_ptr(cg *g, int ptr) { return !(g->vi[ptr].roots & g->written); }

/* ---- packing elements into PTX registers --------------------------------------------- */

typedef struct pack {
  int nwords;      /* registers of the access: 1, 2 or 4 */
  int per_word;    /* elements per register */
  char cons;       /* asm constraint letter */
  const char *ty;  /* PTX type of the access */
  int wbits;       /* register width */
  LLVMTypeRef wt;  /* LLVM type of a register */
} pack;

static pack pack_for(cg *g, teeny_dtype dt, int w) {
  int es = elem_size(dt), bytes = w * es;
  pack p;
  if (es >= 4) {
    p.per_word = 1;
    p.nwords = w;
    p.wbits = 8 * es;
    p.cons = dt == TEENY_DT_F32 ? 'f' : dt == TEENY_DT_F64 ? 'd' : es == 4 ? 'r' : 'l';
    p.ty = dt == TEENY_DT_F32 ? "f32" : dt == TEENY_DT_F64 ? "f64" : es == 4 ? "b32" : "b64";
    p.wt = dt == TEENY_DT_F32 ? g->t_f32 : dt == TEENY_DT_F64 ? g->t_f64
           : es == 4 ? g->t_i32 : g->t_i64;
  } else if (bytes >= 4) {
    p.per_word = 4 / es;
    p.nwords = bytes / 4;
    p.wbits = 32;
    p.cons = 'r';
    p.ty = "b32";
    p.wt = g->t_i32;
  } else {
    p.per_word = w;
    p.nwords = 1;
    p.wbits = bytes == 2 ? 16 : 32;
    p.cons = bytes == 2 ? 'h' : 'r';
    p.ty = bytes == 2 ? "b16" : "u8";
    p.wt = bytes == 2 ? g->t_i16 : g->t_i32;
  }
  return p;
}

/* Register values (bool: i1) -> one PTX register's worth. */
static LLVMValueRef pack_word(cg *g, const pack *p, teeny_dtype dt, LLVMValueRef *e) {
  LLVMTypeRef mt = teeny__cg_memtype(g, dt);
  if (p->per_word == 1 && elem_size(dt) >= 4)
    return e[0];
  if (p->per_word == 1) { /* one 8- or 16-bit element */
    LLVMValueRef m = teeny__cg_to_mem(g, dt, e[0]);
    if (elem_size(dt) == 1)
      return LLVMBuildZExt(g->b, m, g->t_i32, "");
    return LLVMBuildBitCast(g->b, m, g->t_i16, "");
  }
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)p->per_word));
  for (int i = 0; i < p->per_word; i++)
    v = LLVMBuildInsertElement(g->b, v, teeny__cg_to_mem(g, dt, e[i]),
                               teeny__cg_i32(g, i), "");
  return LLVMBuildBitCast(g->b, v, LLVMIntTypeInContext(g->ctx, (unsigned)p->wbits), "");
}

static void unpack_word(cg *g, const pack *p, teeny_dtype dt, LLVMValueRef w,
                        LLVMValueRef *e) {
  LLVMTypeRef mt = teeny__cg_memtype(g, dt);
  if (p->per_word == 1 && elem_size(dt) >= 4) {
    e[0] = w;
    return;
  }
  if (p->per_word == 1) {
    LLVMValueRef m = elem_size(dt) == 1 ? LLVMBuildTrunc(g->b, w, g->t_i8, "")
                                        : LLVMBuildBitCast(g->b, w, mt, "");
    e[0] = teeny__cg_from_mem(g, dt, m);
    return;
  }
  LLVMValueRef v = LLVMBuildBitCast(g->b, w, LLVMVectorType(mt, (unsigned)p->per_word), "");
  for (int i = 0; i < p->per_word; i++)
    e[i] = teeny__cg_from_mem(g, dt,
                              LLVMBuildExtractElement(g->b, v, teeny__cg_i32(g, i), ""));
}

/* ---- inline PTX accesses -------------------------------------------------------------- */

static void append(char *buf, size_t cap, size_t *n, const char *fmt, ...) TEENY_PRINTF(4, 5);
static void append(char *buf, size_t cap, size_t *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *n, cap - *n, fmt, ap);
  va_end(ap);
  if (k > 0)
    *n += (size_t)k < cap - *n ? (size_t)k : cap - *n - 1;
}

static void reg_list(char *buf, size_t cap, size_t *n, int first, int count) {
  if (count == 1) {
    append(buf, cap, n, "$%d", first);
    return;
  }
  append(buf, cap, n, "{");
  for (int i = 0; i < count; i++)
    append(buf, cap, n, "%s$%d", i ? ", " : "", first + i);
  append(buf, cap, n, "}");
}

/* The emulator's predicated access: a branch around plain loads/stores. */
static void emu_access(cg *g, const pack *p, LLVMValueRef addr, LLVMValueRef pred,
                       LLVMValueRef *dflt, LLVMValueRef *words, bool store) {
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef doit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "emu.mem");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "emu.end");
  LLVMBuildCondBr(g->b, pred ? pred : teeny__cg_bool(g, true), doit, done);
  LLVMPositionBuilderAtEnd(g->b, doit);
  LLVMValueRef got[4];
  for (int i = 0; i < p->nwords; i++) {
    LLVMValueRef off = teeny__cg_i64(g, (long long)i * p->wbits / 8);
    LLVMValueRef a = LLVMBuildGEP2(g->b, g->t_i8, addr, &off, 1, "");
    bool u8 = p->wbits == 32 && p->ty[0] == 'u';
    LLVMTypeRef mt = u8 ? g->t_i8 : p->wt;
    if (store) {
      LLVMValueRef v = u8 ? LLVMBuildTrunc(g->b, words[i], g->t_i8, "") : words[i];
      LLVMSetAlignment(LLVMBuildStore(g->b, v, a), 1);
    } else {
      LLVMValueRef v = LLVMBuildLoad2(g->b, mt, a, "");
      LLVMSetAlignment(v, 1);
      got[i] = u8 ? LLVMBuildZExt(g->b, v, g->t_i32, "") : v;
    }
  }
  LLVMBasicBlockRef end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  if (store)
    return;
  for (int i = 0; i < p->nwords; i++) {
    LLVMValueRef phi = LLVMBuildPhi(g->b, p->wt, "");
    LLVMValueRef in[2] = {got[i], dflt[i]};
    LLVMBasicBlockRef bb[2] = {end, from};
    LLVMAddIncoming(phi, in, bb, 2);
    words[i] = phi;
  }
}

/* words = @pred ld.global[.nc] [addr], the registers starting as dflt. */
static void asm_load(cg *g, const pack *p, bool nc, LLVMValueRef addr,
                     LLVMValueRef pred, LLVMValueRef *dflt, LLVMValueRef *words) {
  if (g->emu) {
    emu_access(g, p, addr, pred, dflt, words, false);
    return;
  }
  int n = p->nwords;
  char text[512], cons[128];
  size_t tn = 0, cn = 0;
  for (int i = 0; i < n; i++)
    append(text, sizeof text, &tn, "mov.b%d $%d, $%d;\n\t", p->wbits, i, n + 2 + i);
  append(text, sizeof text, &tn, "@$%d ld.global%s%s.%s ", n + 1, nc ? ".nc" : "",
         n == 2 ? ".v2" : n == 4 ? ".v4" : "", p->ty);
  reg_list(text, sizeof text, &tn, 0, n);
  append(text, sizeof text, &tn, ", [$%d];", n);
  for (int i = 0; i < n; i++)
    append(cons, sizeof cons, &cn, "%s=%c", i ? "," : "", p->cons);
  append(cons, sizeof cons, &cn, ",l,b");
  for (int i = 0; i < n; i++)
    append(cons, sizeof cons, &cn, ",%c", p->cons);
  if (!nc)
    append(cons, sizeof cons, &cn, ",~{memory}");
  LLVMValueRef args[2 + 4];
  args[0] = addr;
  args[1] = pred;
  for (int i = 0; i < n; i++)
    args[2 + i] = dflt[i];
  LLVMTypeRef rt = p->wt;
  if (n > 1) {
    LLVMTypeRef el[4] = {p->wt, p->wt, p->wt, p->wt};
    rt = LLVMStructTypeInContext(g->ctx, el, (unsigned)n, 0);
  }
  LLVMValueRef r = teeny__cg_asm(g, rt, text, cons, args, 2 + n, !nc);
  for (int i = 0; i < n; i++)
    words[i] = n == 1 ? r : LLVMBuildExtractValue(g->b, r, (unsigned)i, "");
}

/* @pred st.global [addr], words (pred NULL: always). */
static void asm_store(cg *g, const pack *p, LLVMValueRef addr, LLVMValueRef pred,
                      LLVMValueRef *words) {
  if (g->emu) {
    emu_access(g, p, addr, pred, NULL, words, true);
    return;
  }
  int n = p->nwords;
  char text[256], cons[128];
  size_t tn = 0, cn = 0;
  if (pred)
    append(text, sizeof text, &tn, "@$%d ", n + 1);
  append(text, sizeof text, &tn, "st.global%s.%s [$0], ",
         n == 2 ? ".v2" : n == 4 ? ".v4" : "", p->ty);
  reg_list(text, sizeof text, &tn, 1, n);
  append(text, sizeof text, &tn, ";");
  append(cons, sizeof cons, &cn, "l");
  for (int i = 0; i < n; i++)
    append(cons, sizeof cons, &cn, ",%c", p->cons);
  if (pred)
    append(cons, sizeof cons, &cn, ",b");
  append(cons, sizeof cons, &cn, ",~{memory}");
  LLVMValueRef args[6];
  args[0] = addr;
  for (int i = 0; i < n; i++)
    args[1 + i] = words[i];
  if (pred)
    args[1 + n] = pred;
  teeny__cg_asm(g, g->t_void, text, cons, args, 2 + n - (pred ? 0 : 1), true);
}

/* ---- planning a tile access ------------------------------------------------------------ */

typedef struct plan {
  int w;            /* elements per group */
  bool aligned;     /* groups are statically w*size aligned */
  bool uniform;     /* the mask is statically constant per group */
} plan;

static plan make_plan(cg *g, int ptr, int mask, const cg_layout *L, teeny_dtype dt) {
  const cg_axis *a = &g->vi[ptr].ax;
  int es = elem_size(dt), best = 1, bd = L->rank - 1;
  for (int d = 0; d < L->rank; d++) {
    int w = 1 << teeny__cg_run_bits(L, d);
    if (w > a->contig[d])
      w = a->contig[d];
    while (w * es > 16)
      w >>= 1;
    if (w > best) {
      best = w;
      bd = d;
    }
  }
  plan p = {best, a->div[bd] >= best * es, true};
  if (mask >= 0)
    p.uniform = g->vi[mask].ax.cnst[bd] >= best;
  return p;
}

static LLVMValueRef and_all(cg *g, LLVMValueRef *m, int n) {
  LLVMValueRef r = m[0];
  for (int i = 1; i < n; i++)
    r = LLVMBuildAnd(g->b, r, m[i], "");
  return r;
}

static LLVMValueRef aligned_check(cg *g, LLVMValueRef p, int bytes) {
  LLVMValueRef i = LLVMBuildPtrToInt(g->b, p, g->t_i64, "");
  i = LLVMBuildAnd(g->b, i, teeny__cg_i64(g, bytes - 1), "");
  return LLVMBuildICmp(g->b, LLVMIntEQ, i, teeny__cg_i64(g, 0), "");
}

static LLVMValueRef and_pred(cg *g, LLVMValueRef a, LLVMValueRef b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return LLVMBuildAnd(g->b, a, b, "");
}

/* ---- loads --------------------------------------------------------------------------------- */

static void native_load(cg *g, LLVMValueRef addr, teeny_dtype dt, int w, bool nc,
                        LLVMValueRef *out) {
  LLVMTypeRef mt = teeny__cg_memtype(g, dt);
  LLVMTypeRef t = w == 1 ? mt : LLVMVectorType(mt, (unsigned)w);
  LLVMValueRef ld = LLVMBuildLoad2(g->b, t, addr, "");
  LLVMSetAlignment(ld, (unsigned)(w * elem_size(dt)));
  if (nc) {
    unsigned kind = LLVMGetMDKindIDInContext(g->ctx, "invariant.load", 14);
    LLVMSetMetadata(ld, kind, LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, NULL, 0)));
  }
  for (int i = 0; i < w; i++)
    out[i] = teeny__cg_from_mem(
        g, dt, w == 1 ? ld : LLVMBuildExtractElement(g->b, ld, teeny__cg_i32(g, i), ""));
}

/* w elements at addr, predicated on pred, masked-off ones from dflt. */
static void pred_load(cg *g, LLVMValueRef addr, teeny_dtype dt, int w, bool nc,
                      LLVMValueRef pred, LLVMValueRef *dflt, LLVMValueRef *out) {
  pack p = pack_for(g, dt, w);
  LLVMValueRef dw[4], words[4];
  for (int i = 0; i < p.nwords; i++)
    dw[i] = pack_word(g, &p, dt, dflt + i * p.per_word);
  asm_load(g, &p, nc, addr, pred, dw, words);
  for (int i = 0; i < p.nwords; i++)
    unpack_word(g, &p, dt, words[i], out + i * p.per_word);
}

/* Groups whose vector access waits on a run-time check ("dynamic") keep
 * their check here; their per-element fallbacks run behind one branch per
 * access, taken only when some group of this thread failed its check. */
typedef struct fallback {
  long *reg;          /* first register of each dynamic group */
  LLVMValueRef *ok;   /* its check */
  int n;
} fallback;

static void fallback_init(cg *g, fallback *fb, long groups) {
  fb->reg = teeny__cg_alloc(g, sizeof *fb->reg * (size_t)(groups + 1));
  fb->ok = teeny__cg_alloc(g, sizeof *fb->ok * (size_t)(groups + 1));
  fb->n = 0;
}

/* The run-time condition of a dynamic group: aligned and fully unmasked. */
static LLVMValueRef group_ok(cg *g, const plan *pl, teeny_dtype dt, LLVMValueRef *ptr,
                             LLVMValueRef *mask) {
  LLVMValueRef ok = pl->aligned ? NULL : aligned_check(g, ptr[0], pl->w * elem_size(dt));
  ok = and_pred(g, ok, mask ? and_all(g, mask, pl->w) : NULL);
  return ok ? ok : teeny__cg_bool(g, true);
}

static bool is_dynamic(const plan *pl) { return pl->w > 1 && !(pl->aligned && pl->uniform); }

/* One group of a tile load: the vector (or only) access. */
static void load_group(cg *g, const plan *pl, teeny_dtype dt, bool nc,
                       LLVMValueRef *ptr, LLVMValueRef *mask, LLVMValueRef *dflt,
                       LLVMValueRef ok, LLVMValueRef *out) {
  int w = pl->w;
  if (!is_dynamic(pl)) {
    if (!mask)
      native_load(g, ptr[0], dt, w, nc, out);
    else
      pred_load(g, ptr[0], dt, w, nc, mask[0], dflt, out);
    return;
  }
  pred_load(g, ptr[0], dt, w, nc, ok, dflt, out);
}

/* if (!all ok) { per-element loads of the failed groups }, joined by phis */
static void load_fallbacks(cg *g, const plan *pl, const fallback *fb, teeny_dtype dt,
                           bool nc, LLVMValueRef *ptr, LLVMValueRef *mask,
                           LLVMValueRef *out) {
  if (!fb->n)
    return;
  LLVMValueRef all = and_all(g, fb->ok, fb->n);
  LLVMBasicBlockRef fast = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "ld.slow");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "ld.join");
  LLVMBuildCondBr(g->b, all, join, slow);
  LLVMPositionBuilderAtEnd(g->b, slow);
  int w = pl->w;
  LLVMValueRef *got = teeny__cg_alloc(g, sizeof *got * (size_t)(fb->n * w));
  for (int k = 0; k < fb->n; k++) {
    long r = fb->reg[k];
    LLVMValueRef notok = LLVMBuildNot(g->b, fb->ok[k], "");
    for (int i = 0; i < w; i++) {
      LLVMValueRef q = and_pred(g, mask ? mask[r + i] : NULL, notok);
      pred_load(g, ptr[r + i], dt, 1, nc, q, &out[r + i], &got[k * w + i]);
    }
  }
  LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
  LLVMTypeRef t = teeny__cg_type(g, dt);
  for (int k = 0; k < fb->n; k++)
    for (int i = 0; i < w; i++) {
      long r = fb->reg[k] + i;
      LLVMValueRef phi = LLVMBuildPhi(g->b, t, "");
      LLVMValueRef in[2] = {out[r], got[k * w + i]};
      LLVMBasicBlockRef bb[2] = {fast, slow_end};
      LLVMAddIncoming(phi, in, bb, 2);
      out[r] = phi;
    }
}

static LLVMValueRef zero_of(cg *g, teeny_dtype dt) {
  teeny_scalar z = {0};
  return teeny__cg_const(g, dt, z);
}

static void load_scalar(cg *g, const teeny_op *op, teeny_dtype dt, bool nc) {
  LLVMValueRef p = teeny__cg_scalar(g, op->args[0]), v;
  if (op->nargs < 2) {
    native_load(g, p, dt, 1, nc, &v);
  } else {
    LLVMValueRef d = op->nargs == 3 ? teeny__cg_scalar(g, op->args[2]) : zero_of(g, dt);
    pred_load(g, p, dt, 1, nc, teeny__cg_scalar(g, op->args[1]), &d, &v);
  }
  teeny__cg_set_scalar(g, op->res[0], v);
}

void teeny__cg_emit_load(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  teeny_dtype dt = pt.pointee;
  bool nc = readonly_ptr(g, op->args[0]);
  if (pt.rank == 0) {
    load_scalar(g, op, dt, nc);
    return;
  }
  const cg_layout *L = g->vi[op->res[0]].nat;
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  LLVMValueRef *mask = op->nargs >= 2 ? teeny__cg_get(g, op->args[1], L) : NULL;
  LLVMValueRef *other = op->nargs == 3 ? teeny__cg_get(g, op->args[2], L) : NULL;
  plan pl = make_plan(g, op->args[0], op->nargs >= 2 ? op->args[1] : -1, L, dt);
  long n = 1L << L->nreg;
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  LLVMValueRef zeros[16];
  for (int i = 0; i < 16; i++)
    zeros[i] = zero_of(g, dt);
  fallback fb;
  fallback_init(g, &fb, n / pl.w);
  for (long r = 0; r < n; r += pl.w) {
    if (teeny__cg_dup_src(L, r) != r)
      continue;
    LLVMValueRef *m = mask ? mask + r : NULL;
    LLVMValueRef ok = NULL;
    if (is_dynamic(&pl)) {
      ok = group_ok(g, &pl, dt, ptr + r, m);
      fb.reg[fb.n] = r;
      fb.ok[fb.n++] = ok;
    }
    load_group(g, &pl, dt, nc, ptr + r, m, other ? other + r : zeros, ok, out + r);
  }
  load_fallbacks(g, &pl, &fb, dt, nc, ptr, mask, out);
  for (long r = 0; r < n; r++)
    out[r] = out[teeny__cg_dup_src(L, r)];
  teeny__cg_set(g, op->res[0], L, out);
}

/* ---- stores ---------------------------------------------------------------------------------- */

static void store_elems(cg *g, LLVMValueRef addr, teeny_dtype dt, int w,
                        LLVMValueRef pred, LLVMValueRef *v) {
  if (!pred) {
    LLVMTypeRef mt = teeny__cg_memtype(g, dt);
    LLVMValueRef val;
    if (w == 1) {
      val = teeny__cg_to_mem(g, dt, v[0]);
    } else {
      val = LLVMGetUndef(LLVMVectorType(mt, (unsigned)w));
      for (int i = 0; i < w; i++)
        val = LLVMBuildInsertElement(g->b, val, teeny__cg_to_mem(g, dt, v[i]),
                                     teeny__cg_i32(g, i), "");
    }
    LLVMSetAlignment(LLVMBuildStore(g->b, val, addr), (unsigned)(w * elem_size(dt)));
    return;
  }
  pack p = pack_for(g, dt, w);
  LLVMValueRef words[4];
  for (int i = 0; i < p.nwords; i++)
    words[i] = pack_word(g, &p, dt, v + i * p.per_word);
  asm_store(g, &p, addr, pred, words);
}

static void store_group(cg *g, const plan *pl, teeny_dtype dt, LLVMValueRef *ptr,
                        LLVMValueRef *mask, LLVMValueRef owner, LLVMValueRef ok,
                        LLVMValueRef *val) {
  int w = pl->w;
  if (!is_dynamic(pl)) {
    store_elems(g, ptr[0], dt, w, and_pred(g, mask ? mask[0] : NULL, owner), val);
    return;
  }
  store_elems(g, ptr[0], dt, w, and_pred(g, ok, owner), val);
}

/* if (!all ok) { per-element stores of the failed groups } */
static void store_fallbacks(cg *g, const plan *pl, const fallback *fb, teeny_dtype dt,
                            LLVMValueRef *ptr, LLVMValueRef *mask, LLVMValueRef owner,
                            LLVMValueRef *val) {
  if (!fb->n)
    return;
  LLVMValueRef all = and_all(g, fb->ok, fb->n);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "st.slow");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "st.join");
  LLVMBuildCondBr(g->b, all, join, slow);
  LLVMPositionBuilderAtEnd(g->b, slow);
  for (int k = 0; k < fb->n; k++) {
    long r = fb->reg[k];
    LLVMValueRef notok = and_pred(g, LLVMBuildNot(g->b, fb->ok[k], ""), owner);
    for (int i = 0; i < pl->w; i++)
      store_elems(g, ptr[r + i], dt, 1, and_pred(g, mask ? mask[r + i] : NULL, notok),
                  val + r + i);
  }
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

static LLVMValueRef is_thread0(cg *g) {
  return LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, teeny__cg_i32(g, 0), "");
}

void teeny__cg_emit_store(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  teeny_dtype dt = pt.pointee;
  if (pt.rank == 0) {
    LLVMValueRef pred = is_thread0(g);
    if (op->nargs == 3)
      pred = LLVMBuildAnd(g->b, pred, teeny__cg_scalar(g, op->args[2]), "");
    LLVMValueRef v = teeny__cg_scalar(g, op->args[1]);
    store_elems(g, teeny__cg_scalar(g, op->args[0]), dt, 1, pred, &v);
    return;
  }
  const cg_layout *L = teeny__cg_mem_layout(g, op);
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  LLVMValueRef *val = teeny__cg_get(g, op->args[1], L);
  LLVMValueRef *mask = op->nargs == 3 ? teeny__cg_get(g, op->args[2], L) : NULL;
  LLVMValueRef owner = teeny__cg_owner(g, L);
  if (LLVMIsAConstantInt(owner))
    owner = NULL; /* every holder is the only one */
  plan pl = make_plan(g, op->args[0], op->nargs == 3 ? op->args[2] : -1, L, dt);
  long n = 1L << L->nreg;
  fallback fb;
  fallback_init(g, &fb, n / pl.w);
  for (long r = 0; r < n; r += pl.w) {
    if (!teeny__cg_reg_owner(L, r))
      continue;
    LLVMValueRef *m = mask ? mask + r : NULL;
    LLVMValueRef ok = NULL;
    if (is_dynamic(&pl)) {
      ok = group_ok(g, &pl, dt, ptr + r, m);
      fb.reg[fb.n] = r;
      fb.ok[fb.n++] = ok;
    }
    store_group(g, &pl, dt, ptr + r, m, owner, ok, val + r);
  }
  store_fallbacks(g, &pl, &fb, dt, ptr, mask, owner, val);
}

/* ---- atomics ------------------------------------------------------------------------------------ */

static LLVMValueRef rmw(cg *g, LLVMAtomicRMWBinOp o, LLVMValueRef p, LLVMValueRef v) {
  return LLVMBuildAtomicRMW(g->b, o, p, v, LLVMAtomicOrderingMonotonic, 0);
}

/* f32 max/min on the integer view: non-negative floats order like signed
 * ints, negative ones in reverse like unsigned ints. */
static LLVMValueRef float_minmax(cg *g, bool max, LLVMValueRef p, LLVMValueRef v) {
  LLVMValueRef bits = LLVMBuildBitCast(g->b, v, g->t_i32, "");
  LLVMValueRef pos = LLVMBuildICmp(g->b, LLVMIntSGE, bits, teeny__cg_i32(g, 0), "");
  LLVMBasicBlockRef bp = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "fpos");
  LLVMBasicBlockRef bn = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "fneg");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "fdone");
  LLVMBuildCondBr(g->b, pos, bp, bn);
  LLVMPositionBuilderAtEnd(g->b, bp);
  LLVMValueRef a = rmw(g, max ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpMin, p, bits);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, bn);
  LLVMValueRef b = rmw(g, max ? LLVMAtomicRMWBinOpUMin : LLVMAtomicRMWBinOpUMax, p, bits);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef phi = LLVMBuildPhi(g->b, g->t_i32, "");
  LLVMValueRef in[2] = {a, b};
  LLVMBasicBlockRef from[2] = {bp, bn};
  LLVMAddIncoming(phi, in, from, 2);
  return LLVMBuildBitCast(g->b, phi, g->t_f32, "");
}

static LLVMValueRef rmw_elem(cg *g, const teeny_op *op, teeny_dtype dt, LLVMValueRef p,
                             LLVMValueRef v) {
  bool f = teeny__dt_is_float(dt), s = teeny__dt_is_signed(dt);
  switch (op->rmw) {
  case RMW_ADD:
    if (dt == TEENY_DT_BF16 || dt == TEENY_DT_BOOL)
      break;
    return rmw(g, f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, p, v);
  case RMW_MAX:
  case RMW_MIN:
    if (dt == TEENY_DT_F32)
      return float_minmax(g, op->rmw == RMW_MAX, p, v);
    if (f || dt == TEENY_DT_BOOL)
      break;
    if (op->rmw == RMW_MAX)
      return rmw(g, s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax, p, v);
    return rmw(g, s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin, p, v);
  case RMW_XCHG:
    if (elem_size(dt) < 4)
      break;
    return rmw(g, LLVMAtomicRMWBinOpXchg, p, v);
  }
  static const char *const names[] = {"atomic_add", "atomic_max", "atomic_min",
                                      "atomic_xchg"};
  teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "%s on %s is not supported",
                 names[op->rmw], teeny_dtype_name(dt));
}

static LLVMValueRef cas_elem(cg *g, teeny_dtype dt, LLVMValueRef p, LLVMValueRef cmp,
                             LLVMValueRef v) {
  int es = elem_size(dt);
  if (es < 4)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "atomic_cas on %s is not supported "
                   "(32- and 64-bit dtypes only)", teeny_dtype_name(dt));
  LLVMTypeRef it = es == 4 ? g->t_i32 : g->t_i64;
  if (teeny__dt_is_float(dt)) { /* compared bit for bit, like atom.cas */
    cmp = LLVMBuildBitCast(g->b, cmp, it, "");
    v = LLVMBuildBitCast(g->b, v, it, "");
  }
  LLVMValueRef r = LLVMBuildAtomicCmpXchg(g->b, p, cmp, v, LLVMAtomicOrderingMonotonic,
                                          LLVMAtomicOrderingMonotonic, 0);
  LLVMValueRef old = LLVMBuildExtractValue(g->b, r, 0, "");
  return teeny__dt_is_float(dt) ? LLVMBuildBitCast(g->b, old, teeny__cg_type(g, dt), "")
                                : old;
}

/* if (pred) old = atomic(...) ; else old = 0 */
static LLVMValueRef atomic_elem(cg *g, const teeny_op *op, teeny_dtype dt,
                                LLVMValueRef pred, LLVMValueRef p, LLVMValueRef a,
                                LLVMValueRef b) {
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef doit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "atom");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "atom.end");
  LLVMBuildCondBr(g->b, pred, doit, done);
  LLVMPositionBuilderAtEnd(g->b, doit);
  LLVMValueRef v = teeny__cg_to_mem(g, dt, a);
  LLVMValueRef old = op->code == IR_ATOMIC_CAS
                         ? cas_elem(g, dt, p, v, teeny__cg_to_mem(g, dt, b))
                         : rmw_elem(g, op, dt, p, v);
  LLVMBasicBlockRef end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef phi = LLVMBuildPhi(g->b, LLVMTypeOf(old), "");
  LLVMValueRef in[2] = {old, LLVMConstNull(LLVMTypeOf(old))};
  LLVMBasicBlockRef bb[2] = {end, from};
  LLVMAddIncoming(phi, in, bb, 2);
  return teeny__cg_from_mem(g, dt, phi);
}

/* Owners wrote their old values; everyone reads them back. */
static LLVMValueRef *share_owned(cg *g, const cg_layout *L, teeny_dtype dt,
                                 LLVMValueRef owner, LLVMValueRef *v) {
  int es = elem_size(dt);
  long numel = (long)L->shape[0] * (L->rank == 2 ? L->shape[1] : 1);
  teeny__cg_smem_begin(g);
  int base = teeny__cg_smem_take(g, (int)(numel * es), 16);
  LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "own");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "own.end");
  LLVMBuildCondBr(g->b, owner, wr, done);
  LLVMPositionBuilderAtEnd(g->b, wr);
  LLVMValueRef *addr = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r++) {
    LLVMValueRef off = LLVMBuildMul(g->b, teeny__cg_flat(g, L, r), teeny__cg_i32(g, es), "");
    addr[r] = teeny__cg_smem_ptr(g, LLVMBuildAdd(g->b, off, teeny__cg_i32(g, base), ""));
    if (teeny__cg_reg_owner(L, r))
      teeny__cg_smem_store(g, addr[r], dt, v + r, 1);
  }
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  teeny__cg_barrier(g);
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r++) {
    LLVMValueRef off = LLVMBuildMul(g->b, teeny__cg_flat(g, L, r), teeny__cg_i32(g, es), "");
    teeny__cg_smem_load(g, teeny__cg_smem_ptr(g, LLVMBuildAdd(g->b, off, teeny__cg_i32(g, base), "")),
                        dt, out + r, 1);
  }
  return out;
}

static void atomic_scalar(cg *g, const teeny_op *op, teeny_dtype dt) {
  LLVMValueRef pred = is_thread0(g);
  if (op->code == IR_ATOMIC_RMW && op->nargs == 3)
    pred = LLVMBuildAnd(g->b, pred, teeny__cg_scalar(g, op->args[2]), "");
  LLVMValueRef b = op->code == IR_ATOMIC_CAS ? teeny__cg_scalar(g, op->args[2]) : NULL;
  LLVMValueRef old = atomic_elem(g, op, dt, pred, teeny__cg_scalar(g, op->args[0]),
                                 teeny__cg_scalar(g, op->args[1]), b);
  teeny__cg_set_scalar(g, op->res[0], teeny__cg_bcast_thread0(g, old, dt));
}

void teeny__cg_emit_atomic(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  teeny_dtype dt = pt.pointee;
  if (pt.rank == 0) {
    atomic_scalar(g, op, dt);
    return;
  }
  const cg_layout *L = g->vi[op->res[0]].nat;
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  LLVMValueRef *a = teeny__cg_get(g, op->args[1], L);
  LLVMValueRef *b = NULL, *mask = NULL;
  if (op->code == IR_ATOMIC_CAS)
    b = teeny__cg_get(g, op->args[2], L);
  else if (op->nargs == 3)
    mask = teeny__cg_get(g, op->args[2], L);
  LLVMValueRef owner = teeny__cg_owner(g, L);
  LLVMValueRef *old = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r++) {
    long s = teeny__cg_dup_src(L, r);
    if (s != r) {
      old[r] = old[s];
      continue;
    }
    LLVMValueRef pred = and_pred(g, mask ? mask[r] : NULL, owner);
    old[r] = atomic_elem(g, op, dt, pred, ptr[r], a[r], b ? b[r] : NULL);
  }
  if (!LLVMIsAConstantInt(owner))
    old = share_owned(g, L, dt, owner, old);
  teeny__cg_set(g, op->res[0], L, old);
}
