/*
 * dsl/nvptx/mem.c — loads, stores and atomics on global memory.
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
 * A load's or store's cache operator (cache_cg ...) becomes the access's
 * PTX one (`ld.global.cg`); evict_first / evict_last, as Triton does, an
 * L2 cache policy made by createpolicy and given with .L2::cache_hint.
 * Hinted accesses are always inline PTX (LLVM's loads carry no hints);
 * cp.async copies keep their own caching, and the emulator ignores hints.
 *
 * Elements held by more than one thread are stored and updated by one of
 * them only.  Scalar (rank-0) stores and atomics run in thread 0; an
 * atomic's old value is then broadcast through shared memory.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dsl/nvptx/codegen.h"

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
  bool u8 = p->wbits == 32 && p->ty[0] == 'u';
  int bytes = p->nwords * (u8 ? 1 : p->wbits / 8);
  if (bytes > 1) { /* the GPU faults on an access off its size: so does this */
    LLVMValueRef low = LLVMBuildAnd(g->b, LLVMBuildPtrToInt(g->b, addr, g->t_i64, ""),
                                    teeny__cg_i64(g, bytes - 1), "");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "emu.misaligned");
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "emu.aligned");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, low, teeny__cg_i64(g, 0), ""), bad, ok);
    LLVMPositionBuilderAtEnd(g->b, bad);
    LLVMValueRef a[2] = {LLVMBuildPtrToInt(g->b, addr, g->t_i64, ""), teeny__cg_i32(g, bytes)};
    teeny__cg_emu_call(g, "teeny_emu_misaligned", g->t_void, a, 2);
    LLVMBuildBr(g->b, ok);
    LLVMPositionBuilderAtEnd(g->b, ok);
  }
  LLVMValueRef got[4];
  for (int i = 0; i < p->nwords; i++) {
    LLVMValueRef off = teeny__cg_i64(g, (long long)i * p->wbits / 8);
    LLVMValueRef a = LLVMBuildGEP2(g->b, g->t_i8, addr, &off, 1, "");
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

/* ---- cache hints ------------------------------------------------------------------------ */

/* Whether the access being lowered carries a hint the PTX must show. */
static bool hinted(cg *g) {
  const teeny_op *o = g->hint_op;
  return !g->emu && o && (o->cache || o->evict == TEENY_EVICT_FIRST ||
                          o->evict == TEENY_EVICT_LAST);
}

/* The PTX cache operator of the access (".cg"), or "". */
static const char *hint_cop(cg *g) {
  static const char *const cop[] = {"", ".ca", ".cg", ".cs", ".cv", ".wb", ".wt"};
  return g->hint_op && !g->emu ? cop[g->hint_op->cache] : "";
}

/* The 64-bit L2 cache policy of an evict_first / evict_last access, or
 * NULL.  No side effects: LLVM keeps one per block. */
static LLVMValueRef hint_policy(cg *g) {
  const teeny_op *o = g->hint_op;
  if (g->emu || !o || (o->evict != TEENY_EVICT_FIRST && o->evict != TEENY_EVICT_LAST))
    return NULL;
  const char *text = o->evict == TEENY_EVICT_FIRST
                         ? "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;"
                         : "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;";
  return teeny__cg_asm(g, g->t_i64, text, "=l", NULL, 0, false);
}

/* words = @pred ld.global[.cop][.nc][.L2::cache_hint] [addr], the registers
 * starting as dflt. */
static void asm_load(cg *g, const pack *p, bool nc, LLVMValueRef addr,
                     LLVMValueRef pred, LLVMValueRef *dflt, LLVMValueRef *words) {
  if (g->emu) {
    emu_access(g, p, addr, pred, dflt, words, false);
    return;
  }
  int n = p->nwords;
  char text[640], cons[128];
  size_t tn = 0, cn = 0;
  const char *cop = hint_cop(g);
  if (strcmp(cop, ".cv") == 0)
    nc = false; /* ld.global.cv has no .nc form */
  LLVMValueRef policy = hint_policy(g);
  for (int i = 0; i < n; i++)
    append(text, sizeof text, &tn, "mov.b%d $%d, $%d;\n\t", p->wbits, i, n + 2 + i);
  append(text, sizeof text, &tn, "@$%d ld.global%s%s%s%s.%s ", n + 1, cop, nc ? ".nc" : "",
         policy ? ".L2::cache_hint" : "", n == 2 ? ".v2" : n == 4 ? ".v4" : "", p->ty);
  reg_list(text, sizeof text, &tn, 0, n);
  append(text, sizeof text, &tn, ", [$%d]", n);
  if (policy)
    append(text, sizeof text, &tn, ", $%d", 2 * n + 2);
  append(text, sizeof text, &tn, ";");
  for (int i = 0; i < n; i++)
    append(cons, sizeof cons, &cn, "%s=%c", i ? "," : "", p->cons);
  append(cons, sizeof cons, &cn, ",l,b");
  for (int i = 0; i < n; i++)
    append(cons, sizeof cons, &cn, ",%c", p->cons);
  if (policy)
    append(cons, sizeof cons, &cn, ",l");
  if (!nc)
    append(cons, sizeof cons, &cn, ",~{memory}");
  LLVMValueRef args[2 + 4 + 1];
  args[0] = addr;
  args[1] = pred;
  for (int i = 0; i < n; i++)
    args[2 + i] = dflt[i];
  if (policy)
    args[2 + n] = policy;
  LLVMTypeRef rt = p->wt;
  if (n > 1) {
    LLVMTypeRef el[4] = {p->wt, p->wt, p->wt, p->wt};
    rt = LLVMStructTypeInContext(g->ctx, el, (unsigned)n, 0);
  }
  LLVMValueRef r = teeny__cg_asm(g, rt, text, cons, args, 2 + n + (policy ? 1 : 0),
                                 !nc || g->ordered_loads);
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
  char text[320], cons[128];
  size_t tn = 0, cn = 0;
  LLVMValueRef policy = hint_policy(g);
  int npol = n + 1 + (pred ? 1 : 0); /* the policy's operand */
  if (pred)
    append(text, sizeof text, &tn, "@$%d ", n + 1);
  append(text, sizeof text, &tn, "st.global%s%s%s.%s [$0], ", hint_cop(g),
         policy ? ".L2::cache_hint" : "", n == 2 ? ".v2" : n == 4 ? ".v4" : "", p->ty);
  reg_list(text, sizeof text, &tn, 1, n);
  if (policy)
    append(text, sizeof text, &tn, ", $%d", npol);
  append(text, sizeof text, &tn, ";");
  append(cons, sizeof cons, &cn, "l");
  for (int i = 0; i < n; i++)
    append(cons, sizeof cons, &cn, ",%c", p->cons);
  if (pred)
    append(cons, sizeof cons, &cn, ",b");
  if (policy)
    append(cons, sizeof cons, &cn, ",l");
  append(cons, sizeof cons, &cn, ",~{memory}");
  LLVMValueRef args[7];
  args[0] = addr;
  for (int i = 0; i < n; i++)
    args[1 + i] = words[i];
  if (pred)
    args[1 + n] = pred;
  if (policy)
    args[npol] = policy;
  teeny__cg_asm(g, g->t_void, text, cons, args, npol + (policy ? 1 : 0), true);
}

/* ---- planning a tile access ------------------------------------------------------------ */

typedef struct plan {
  int w;            /* elements per group */
  bool aligned;     /* groups are statically w*size aligned */
  bool uniform;     /* the mask is statically constant per group */
  bool contig;      /* groups are statically contiguous (else checked) */
  int mono;         /* mask true-then-false (1), false-then-true (-1) per
                       group, or 0: all elements are checked */
  int mask;         /* the mask's value id, or -1 */
  int base;         /* not aligned: a scalar pointer whose alignment decides
                       every group's (ptr = splat(base) + offsets that are
                       multiples of w at group starts), or -1 */
  bool ustep;       /* not contig: one step between elements over the whole
                       tile (cg_axis.ustep), taken from the first group */
  LLVMValueRef step; /* then: that step in bytes (i64), set by plan_step() */
  int axis;         /* the dim along which a group's elements lie */
} plan;

/* The scalar s of a pointer tile splat(s) + off whose groups of w along d
 * start at offsets divisible by w (so are aligned iff s is), or -1. */
static int scalar_base(cg *g, int ptr, int d, int w) {
  const teeny_op *op = g->f->values[ptr].def;
  if (!op || op->code != IR_ADDPTR)
    return -1;
  const cg_axis *o = &g->vi[op->args[1]].ax;
  if (o->contig[d] < w || o->div[d] < w)
    return -1;
  int b = op->args[0];
  const teeny_op *bd = g->f->values[b].def;
  while (bd && (bd->code == IR_BROADCAST || bd->code == IR_EXPAND_DIMS ||
                bd->code == IR_RESHAPE)) {
    b = bd->args[0];
    bd = g->f->values[b].def;
  }
  return bd && bd->code == IR_SPLAT ? bd->args[0] : -1;
}

/* Widest vector along some dim: statically contiguous runs first, then
 * affine runs (contiguity checked at run time). */
static plan make_plan(cg *g, int ptr, int mask, const cg_layout *L, teeny_dtype dt) {
  const cg_axis *a = &g->vi[ptr].ax;
  int es = elem_size(dt), best = 1, bd = L->rank - 1;
  bool contig = true;
  for (int pass = 0; pass < 2 && best == 1; pass++)
    for (int d = 0; d < L->rank; d++) {
      int w = 1 << teeny__cg_run_bits(L, d);
      int run = pass == 0 ? a->contig[d] : a->affine[d];
      if (w > run)
        w = run;
      while (w * es > 16)
        w >>= 1;
      if (w > best) {
        best = w;
        bd = d;
        contig = pass == 0;
      }
    }
  plan p = {best, contig && a->div[bd] >= best * es, true, contig, 0, mask, -1,
            !contig && a->ustep[bd], NULL, bd};
  if (!p.aligned && contig && best > 1)
    p.base = scalar_base(g, ptr, bd, best);
  if (mask >= 0) {
    int m = g->vi[mask].ax.mono[bd];
    p.uniform = g->vi[mask].ax.cnst[bd] >= best;
    p.mono = m >= best ? 1 : m <= -best ? -1 : 0;
  }
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

static void pred_load(cg *g, LLVMValueRef addr, teeny_dtype dt, int w, bool nc,
                      LLVMValueRef pred, LLVMValueRef *dflt, LLVMValueRef *out);
static LLVMValueRef zero_of(cg *g, teeny_dtype dt);

static void native_load(cg *g, LLVMValueRef addr, teeny_dtype dt, int w, bool nc,
                        LLVMValueRef *out) {
  if (hinted(g)) { /* LLVM's loads carry no cache operator */
    LLVMValueRef zeros[16];
    for (int i = 0; i < w; i++)
      zeros[i] = zero_of(g, dt);
    pred_load(g, addr, dt, w, nc, teeny__cg_bool(g, true), zeros, out);
    return;
  }
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

/* w elements at addr, predicated on pred, masked-off ones from dflt; the
 * PTX registers of the access go to words too (when not NULL). */
static void pred_load_words(cg *g, LLVMValueRef addr, teeny_dtype dt, int w, bool nc,
                            LLVMValueRef pred, LLVMValueRef *dflt, LLVMValueRef *out,
                            LLVMValueRef *words_out) {
  pack p = pack_for(g, dt, w);
  LLVMValueRef dw[4], words[4];
  for (int i = 0; i < p.nwords; i++)
    dw[i] = pack_word(g, &p, dt, dflt + i * p.per_word);
  asm_load(g, &p, nc, addr, pred, dw, words);
  for (int i = 0; i < p.nwords; i++) {
    unpack_word(g, &p, dt, words[i], out + i * p.per_word);
    if (words_out)
      words_out[i] = words[i];
  }
}

static void pred_load(cg *g, LLVMValueRef addr, teeny_dtype dt, int w, bool nc,
                      LLVMValueRef pred, LLVMValueRef *dflt, LLVMValueRef *out) {
  pred_load_words(g, addr, dt, w, nc, pred, dflt, out, NULL);
}

/* Where a fallback's elements are: the group's first address and the step
 * between its elements (contiguous: the element size; affine: its first
 * two addresses' difference), so the fallback keeps no per-element pointers
 * alive.  Both pass through an asm LLVM cannot hoist: otherwise each
 * element's address is hoisted out of a loop as an invariant base and held
 * in registers throughout (7 64-bit pointers per group of every cp.async'd
 * matmul operand). */
typedef struct gaddr {
  LLVMValueRef p0;   /* i64 */
  LLVMValueRef step; /* i64 bytes */
} gaddr;

static LLVMValueRef opaque64(cg *g, LLVMValueRef v) {
  return g->emu ? v : teeny__cg_asm(g, g->t_i64, "mov.b64 $0, $1;", "=l,l", &v, 1, true);
}

/* The same without side effects (LLVM may move or merge it). */
static LLVMValueRef opaque_pure(cg *g, LLVMValueRef v) {
  return g->emu ? v : teeny__cg_asm(g, g->t_i64, "mov.b64 $0, $1;", "=l,l", &v, 1, false);
}

static gaddr group_addr(cg *g, const plan *pl, LLVMValueRef *ptr, teeny_dtype dt) {
  gaddr a;
  LLVMValueRef p0 = LLVMBuildPtrToInt(g->b, ptr[0], g->t_i64, "");
  a.p0 = opaque64(g, p0);
  if (pl->contig || pl->w == 1)
    a.step = teeny__cg_i64(g, elem_size(dt));
  else if (pl->step)
    a.step = pl->step;
  else
    a.step = opaque64(g, LLVMBuildSub(g->b, LLVMBuildPtrToInt(g->b, ptr[1], g->t_i64, ""), p0, ""));
  return a;
}

/* The same, the first address given (opaque already where it needs to be). */
static gaddr group_addr_at(cg *g, const plan *pl, LLVMValueRef *ptr, teeny_dtype dt,
                           LLVMValueRef first) {
  gaddr a;
  a.p0 = LLVMBuildPtrToInt(g->b, first, g->t_i64, "");
  if (pl->contig || pl->w == 1)
    a.step = teeny__cg_i64(g, elem_size(dt));
  else if (pl->step)
    a.step = pl->step;
  else
    a.step = opaque64(g, LLVMBuildSub(g->b, LLVMBuildPtrToInt(g->b, ptr[1], g->t_i64, ""),
                                      LLVMBuildPtrToInt(g->b, ptr[0], g->t_i64, ""), ""));
  return a;
}

static LLVMValueRef elem_addr(cg *g, const gaddr *a, int i) {
  LLVMValueRef off = LLVMBuildMul(g->b, a->step, teeny__cg_i64(g, i), "");
  return LLVMBuildIntToPtr(g->b, LLVMBuildAdd(g->b, a->p0, off, ""), g->t_gptr, "");
}

/* The mask again, computed afresh where the fallback runs, so its
 * per-element predicates are not kept alive across the fast path (ptxas
 * has 7 predicate registers; more spill into general ones). */
/* Before a branch whose slow side recomputes the mask (fresh_mask): make
 * the mask in L here, so every conversion it needs (through shared memory,
 * with barriers) happens where all threads are; inside the branch, which
 * threads take per their own data, only lazy index math is recomputed. */
static void materialise_mask(cg *g, int mask_id, const cg_layout *L) {
  if (mask_id >= 0)
    (void)teeny__cg_get(g, mask_id, L);
}

static LLVMValueRef *fresh_mask(cg *g, int mask_id, const cg_layout *L, LLVMValueRef extra) {
  if (mask_id < 0)
    return NULL;
  int keep = g->fresh_from, keepn = g->nfresh, saved = teeny__cg_scope_push(g);
  g->fresh_from = g->scope;
  g->nfresh = 0;
  LLVMValueRef *m = teeny__cg_get(g, mask_id, L);
  g->fresh_from = keep;
  g->nfresh = keepn;
  teeny__cg_scope_pop(g, saved);
  if (!extra)
    return m;
  LLVMValueRef *x = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r++)
    x[r] = LLVMBuildAnd(g->b, m[r], extra, "");
  return x;
}

/* The mask of the vector path (with extra ANDed in).  When groups check
 * only one element of a monotone mask, it is made afresh so that the other
 * elements' predicates, dead here, are not merged with the fallback's and
 * kept alive through the fast path. */
static LLVMValueRef *main_mask(cg *g, const plan *pl, const cg_layout *L, LLVMValueRef extra) {
  if (pl->mask < 0 && !extra)
    return NULL;
  if (pl->mask >= 0 && pl->mono)
    return fresh_mask(g, pl->mask, L, extra);
  LLVMValueRef *m = pl->mask >= 0 ? teeny__cg_get(g, pl->mask, L) : NULL;
  if (!extra)
    return m;
  LLVMValueRef *x = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r++)
    x[r] = m ? LLVMBuildAnd(g->b, m[r], extra, "") : extra;
  return x;
}

/* Groups whose vector access waits on a run-time check ("dynamic") keep
 * their check here; their per-element fallbacks run behind one branch per
 * access, taken only when some group of this thread failed its check. */
typedef struct fallback {
  long *reg;          /* first register of each dynamic group */
  LLVMValueRef *ok;   /* its check */
  LLVMValueRef *words; /* loads: the vector access's PTX registers, 4 per group */
  int n;
} fallback;

static void fallback_init(cg *g, fallback *fb, long groups) {
  fb->reg = teeny__cg_alloc(g, sizeof *fb->reg * (size_t)(groups + 1));
  fb->ok = teeny__cg_alloc(g, sizeof *fb->ok * (size_t)(groups + 1));
  fb->words = teeny__cg_alloc(g, sizeof *fb->words * (size_t)(4 * groups + 4));
  fb->n = 0;
}

/* When the per-element fallbacks of an access can be skipped: every group
 * passed its check, or the access is off as a whole (`extra` false: a
 * prefetch of a loop iteration that does not exist, where every element
 * keeps its default).  Without the second case each prefetch past the end
 * of a loop (D of them per loop) ran the whole fallback for nothing. */
static LLVMValueRef skip_fallbacks(cg *g, const fallback *fb, LLVMValueRef extra) {
  LLVMValueRef all = and_all(g, fb->ok, fb->n);
  if (extra)
    all = LLVMBuildOr(g->b, all, LLVMBuildNot(g->b, extra, ""), "");
  return all;
}

/* The run-time condition of a dynamic group: aligned and fully unmasked. */
static LLVMValueRef contig_check(cg *g, LLVMValueRef first, LLVMValueRef last, int bytes) {
  LLVMValueRef d = LLVMBuildSub(g->b, LLVMBuildPtrToInt(g->b, last, g->t_i64, ""),
                                LLVMBuildPtrToInt(g->b, first, g->t_i64, ""), "");
  return LLVMBuildICmp(g->b, LLVMIntEQ, d, teeny__cg_i64(g, bytes), "");
}

static LLVMValueRef group_ok(cg *g, const plan *pl, teeny_dtype dt, LLVMValueRef *ptr,
                             LLVMValueRef *mask) {
  /* a scalar base's check is the same for every group (and hoisted out of
   * loops it does not change in) */
  LLVMValueRef ok = pl->aligned      ? NULL
                    : pl->base >= 0 ? aligned_check(g, teeny__cg_scalar(g, pl->base),
                                                    pl->w * elem_size(dt))
                                    : aligned_check(g, ptr[0], pl->w * elem_size(dt));
  if (pl->step) /* affine, one step: contiguous iff it is one element */
    ok = and_pred(g, ok, LLVMBuildICmp(g->b, LLVMIntEQ, pl->step,
                                       teeny__cg_i64(g, elem_size(dt)), ""));
  else if (!pl->contig) /* affine: contiguous iff the first step is one element */
    ok = and_pred(g, ok, contig_check(g, ptr[0], ptr[1], elem_size(dt)));
  LLVMValueRef all = NULL;
  if (mask) /* a monotone mask is all true iff its far end is */
    all = pl->mono > 0 ? mask[pl->w - 1] : pl->mono < 0 ? mask[0] : and_all(g, mask, pl->w);
  ok = and_pred(g, ok, all);
  return ok ? ok : teeny__cg_bool(g, true);
}

/* A uniform step from the first group's first two addresses (registers 0
 * and 1 are consecutive along the vector axis), so that no group needs its
 * second address to check contiguity or to find its elements. */
static void plan_step(cg *g, plan *pl, LLVMValueRef *ptr) {
  if (pl->ustep && pl->w > 1)
    pl->step = LLVMBuildSub(g->b, LLVMBuildPtrToInt(g->b, ptr[1], g->t_i64, ""),
                            LLVMBuildPtrToInt(g->b, ptr[0], g->t_i64, ""), "");
}

static bool is_dynamic(const plan *pl) {
  return pl->w > 1 && !(pl->aligned && pl->uniform && pl->contig);
}

/* One group of a tile load: the vector (or only) access; a dynamic
 * group's PTX registers also go to words. */
static void load_group(cg *g, const plan *pl, teeny_dtype dt, bool nc,
                       LLVMValueRef *ptr, LLVMValueRef *mask, LLVMValueRef *dflt,
                       LLVMValueRef ok, LLVMValueRef *out, LLVMValueRef *words) {
  int w = pl->w;
  if (!is_dynamic(pl)) {
    if (!mask)
      native_load(g, ptr[0], dt, w, nc, out);
    else
      pred_load(g, ptr[0], dt, w, nc, mask[0], dflt, out);
    return;
  }
  pred_load_words(g, ptr[0], dt, w, nc, ok, dflt, out, words);
}

/* if (!all ok) { per-element loads of the failed groups }, joined by phis.
 * The phis join whole PTX registers (two halves, four bytes) rather than
 * elements, so a 16-bit tile stays packed through the join (and through a
 * loop that carries it) instead of taking a register per element. */
static void load_fallbacks(cg *g, const plan *pl, const fallback *fb, teeny_dtype dt,
                           bool nc, LLVMValueRef *ptr, int mask_id, const cg_layout *L,
                           LLVMValueRef extra, LLVMValueRef *out) {
  if (!fb->n)
    return;
  LLVMValueRef all = skip_fallbacks(g, fb, extra);
  materialise_mask(g, mask_id, L);
  LLVMBasicBlockRef fast = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "ld.slow");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "ld.join");
  LLVMBuildCondBr(g->b, all, join, slow);
  LLVMPositionBuilderAtEnd(g->b, slow);
  g->divergent++;
  LLVMValueRef *mask = fresh_mask(g, mask_id, L, extra);
  int w = pl->w;
  pack p = pack_for(g, dt, w);
  LLVMValueRef *got = teeny__cg_alloc(g, sizeof *got * (size_t)(fb->n * w));
  LLVMValueRef *gw = teeny__cg_alloc(g, sizeof *gw * (size_t)(fb->n * 4));
  for (int k = 0; k < fb->n; k++) {
    long r = fb->reg[k];
    LLVMValueRef notok = LLVMBuildNot(g->b, fb->ok[k], "");
    gaddr ga = group_addr(g, pl, ptr + r, dt);
    for (int i = 0; i < w; i++) {
      LLVMValueRef q = and_pred(g, mask ? mask[r + i] : NULL, notok);
      pred_load(g, elem_addr(g, &ga, i), dt, 1, nc, q, &out[r + i], &got[k * w + i]);
    }
    for (int m = 0; m < p.nwords; m++)
      gw[k * 4 + m] = pack_word(g, &p, dt, got + k * w + m * p.per_word);
  }
  g->divergent--;
  LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
  LLVMValueRef *phi = teeny__cg_alloc(g, sizeof *phi * (size_t)(fb->n * 4));
  for (int k = 0; k < fb->n; k++) /* phis first, then the unpacking */
    for (int m = 0; m < p.nwords; m++) {
      phi[k * 4 + m] = LLVMBuildPhi(g->b, p.wt, "");
      LLVMValueRef in[2] = {fb->words[k * 4 + m], gw[k * 4 + m]};
      LLVMBasicBlockRef bb[2] = {fast, slow_end};
      LLVMAddIncoming(phi[k * 4 + m], in, bb, 2);
    }
  for (int k = 0; k < fb->n; k++)
    for (int m = 0; m < p.nwords; m++)
      unpack_word(g, &p, dt, phi[k * 4 + m], out + fb->reg[k] + m * p.per_word);
}

static LLVMValueRef zero_of(cg *g, teeny_dtype dt) {
  teeny_scalar z = {0};
  return teeny__cg_const(g, dt, z);
}

static LLVMValueRef is_thread0(cg *g) {
  return LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, teeny__cg_i32(g, 0), "");
}

/* The pending-set entry of op's access (order.c): roots the kernel writes
 * only; L NULL for thread 0's scalar accesses. */
static cg_access access_of(cg *g, const teeny_op *op, const cg_layout *L, bool write) {
  cg_access a;
  memset(&a, 0, sizeof a);
  a.roots = g->vi[op->args[0]].roots & g->written;
  a.ptr = op->args[0];
  a.L = L;
  a.write = write;
  a.owner_only = write;
  a.comm = -1;
  return a;
}

/* A scalar is the same in every thread (docs/dsl.md §9).  Through a
 * pointer nothing in the kernel writes, every thread may load it itself;
 * otherwise another thread's store (or atomic) could land between two
 * threads' loads, so thread 0 loads it, in program order with its scalar
 * stores and after a barrier where a tile store may alias, and broadcasts
 * the value. */
static void load_scalar(cg *g, const teeny_op *op, teeny_dtype dt, bool nc) {
  LLVMValueRef p = teeny__cg_scalar(g, op->args[0]), v;
  LLVMValueRef d = op->nargs == 3 ? teeny__cg_scalar(g, op->args[2]) : zero_of(g, dt);
  if (nc) {
    LLVMValueRef m = op->nargs >= 2 ? teeny__cg_scalar(g, op->args[1]) : NULL;
    g->hint_op = op;
    if (!m)
      native_load(g, p, dt, 1, nc, &v);
    else
      pred_load(g, p, dt, 1, nc, m, &d, &v);
    g->hint_op = NULL;
    teeny__cg_set_scalar(g, op->res[0], v);
    return;
  }
  cg_access a = access_of(g, op, NULL, false);
  teeny__cg_order_access(g, &a);
  LLVMValueRef pred = is_thread0(g);
  if (op->nargs >= 2)
    pred = LLVMBuildAnd(g->b, pred, teeny__cg_scalar(g, op->args[1]), "");
  g->hint_op = op;
  pred_load(g, p, dt, 1, false, pred, &d, &v);
  g->hint_op = NULL;
  teeny__cg_order_done(g);
  teeny__cg_set_scalar(g, op->res[0], teeny__cg_bcast_thread0(g, v, dt));
}

LLVMValueRef *teeny__cg_load_regs(cg *g, const teeny_op *op, LLVMValueRef extra) {
  teeny_type pt = vtype(g, op->args[0]);
  teeny_dtype dt = pt.pointee;
  bool nc = readonly_ptr(g, op->args[0]);
  const cg_layout *L = g->vi[op->res[0]].nat;
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  plan pl = make_plan(g, op->args[0], op->nargs >= 2 ? op->args[1] : -1, L, dt);
  plan_step(g, &pl, ptr);
  LLVMValueRef *mask = main_mask(g, &pl, L, extra);
  LLVMValueRef *other = op->nargs == 3 ? teeny__cg_get(g, op->args[2], L) : NULL;
  cg_access acc = access_of(g, op, L, false); /* once its operands are made */
  teeny__cg_order_access(g, &acc);
  long n = 1L << L->nreg;
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  LLVMValueRef zeros[16];
  for (int i = 0; i < 16; i++)
    zeros[i] = zero_of(g, dt);
  fallback fb;
  fallback_init(g, &fb, n / pl.w);
  g->hint_op = op;
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
    load_group(g, &pl, dt, nc, ptr + r, m, other ? other + r : zeros, ok, out + r,
               ok ? fb.words + 4 * (fb.n - 1) : NULL);
  }
  load_fallbacks(g, &pl, &fb, dt, nc, ptr, op->nargs >= 2 ? op->args[1] : -1, L,
                 extra, out);
  g->hint_op = NULL;
  for (long r = 0; r < n; r++)
    out[r] = out[teeny__cg_dup_src(L, r)];
  return out;
}

/* ---- asynchronous copies into shared memory (cp.async, sm_80+) -------------------- */

void teeny__cg_cp_async_commit(cg *g) {
  if (!g->emu)
    teeny__cg_asm(g, g->t_void, "cp.async.commit_group;", "~{memory}", NULL, 0, true);
}

void teeny__cg_cp_async_wait(cg *g, int pending) {
  if (g->emu)
    return; /* the emulator's copies are synchronous */
  char text[48];
  snprintf(text, sizeof text, "cp.async.wait_group %d;", pending);
  teeny__cg_asm(g, g->t_void, text, "~{memory}", NULL, 0, true);
}

/* Copy `bytes` (4, 8, 16) from src to shared dst, reading src_size bytes
 * and zero-filling the rest, if pred (NULL: always). */
static void cp_async(cg *g, LLVMValueRef dst, LLVMValueRef src, int bytes,
                     LLVMValueRef src_size, LLVMValueRef pred) {
  if (g->emu) {
    LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)(8 * bytes));
    LLVMValueRef go = pred ? pred : teeny__cg_bool(g, true);
    LLVMValueRef full = LLVMBuildICmp(g->b, LLVMIntEQ, src_size, teeny__cg_i32(g, bytes), "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef rd = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.rd");
    LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.wr");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.end");
    LLVMBuildCondBr(g->b, LLVMBuildAnd(g->b, go, full, ""), rd, wr);
    LLVMPositionBuilderAtEnd(g->b, rd);
    LLVMValueRef v = LLVMBuildLoad2(g->b, t, src, "");
    LLVMSetAlignment(v, 1);
    LLVMBuildBr(g->b, wr);
    LLVMPositionBuilderAtEnd(g->b, wr);
    LLVMValueRef phi = LLVMBuildPhi(g->b, t, "");
    LLVMValueRef in[2] = {v, LLVMConstNull(t)};
    LLVMBasicBlockRef bb[2] = {rd, from};
    LLVMAddIncoming(phi, in, bb, 2);
    LLVMBasicBlockRef st = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.st");
    LLVMBuildCondBr(g->b, go, st, done);
    LLVMPositionBuilderAtEnd(g->b, st);
    LLVMSetAlignment(LLVMBuildStore(g->b, phi, dst), 1);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, done);
    return;
  }
  char text[96];
  snprintf(text, sizeof text, "%scp.async.%s.shared.global [$0], [$1], %d, $2;",
           pred ? "@$3 " : "", bytes == 16 ? "cg" : "ca", bytes);
  LLVMValueRef args[4] = {dst, src, src_size, pred};
  teeny__cg_asm(g, g->t_void, text, pred ? "r,l,r,b,~{memory}" : "r,l,r,~{memory}", args,
                pred ? 4 : 3, true);
}

/* axis: the dim along which the stage tile's stored rows run (1; 0 for a
 * transposed tile, teeny__cg_stile_tr): each group's elements must lie
 * along it, so that they are consecutive in shared memory too. */
bool teeny__cg_async_ok(cg *g, const teeny_op *op, int axis) {
  teeny_type pt = vtype(g, op->args[0]);
  if (pt.rank != 2 || g->sm < 80)
    return false;
  if (op->nargs == 3) { /* cp.async can only fill with zeros */
    teeny_scalar z;
    const teeny_op *d = g->f->values[op->args[2]].def;
    if (d && d->code == IR_SPLAT)
      d = g->f->values[d->args[0]].def;
    if (!d || d->code != IR_CONST)
      return false;
    z = d->cval;
    if (teeny__dt_is_float(pt.pointee) ? z.f != 0 || signbit(z.f) : z.i != 0)
      return false;
  }
  const cg_layout *L = g->vi[op->res[0]].nat;
  plan pl = make_plan(g, op->args[0], op->nargs >= 2 ? op->args[1] : -1, L, pt.pointee);
  int bytes = pl.w * elem_size(pt.pointee);
  return (bytes == 4 || bytes == 8 || bytes == 16) && pl.axis == axis &&
         teeny__cg_run_bits(L, axis) >= teeny__cg_log2(pl.w);
}

/* Loop versioning (ctrl.c): this thread's part of the condition
 * under which every vector group of the cp.async load op, with the
 * pointers bound now (the first iteration's), is aligned and contiguous,
 * and stays aligned when the pointers all move by `inc` elements (a
 * uniform loop-invariant integer) per iteration.  The mask is not part of
 * it.  NULL when the plan has nothing but its mask to check. */
LLVMValueRef teeny__cg_async_layout_ok(cg *g, const teeny_op *op, LLVMValueRef inc) {
  teeny_dtype dt = vtype(g, op->args[0]).pointee;
  const cg_layout *L = g->vi[op->res[0]].nat;
  plan pl = make_plan(g, op->args[0], -1, L, dt);
  if (pl.w == 1 || (pl.aligned && pl.contig))
    return NULL;
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  plan_step(g, &pl, ptr);
  int bytes = pl.w * elem_size(dt);
  LLVMValueRef ok = NULL, first = NULL;
  LLVMValueRef *delta = teeny__cg_alloc(g, sizeof *delta * (size_t)((1L << L->nreg) + 1));
  for (long r = 0; r < (1L << L->nreg); r += pl.w)
    if (teeny__cg_reg_owner(L, r)) {
      ok = and_pred(g, ok, group_ok(g, &pl, dt, ptr + r, NULL));
      LLVMValueRef p = LLVMBuildPtrToInt(g->b, ptr[r], g->t_i64, "");
      first = first ? first : p;
      delta[r] = LLVMBuildSub(g->b, p, first, "");
    }
  /* every pointer moves by the same step, so these differences hold in
   * every iteration: the fast copy addresses each group from the first
   * group's pointer (one induction variable per load, not one per group) */
  g->vi[op->res[0]].cp_delta = delta;
  if (!pl.aligned) {
    LLVMValueRef i = LLVMTypeOf(inc) == g->t_i64 ? inc : LLVMBuildSExt(g->b, inc, g->t_i64, "");
    i = LLVMBuildMul(g->b, i, teeny__cg_i64(g, elem_size(dt)), "");
    i = LLVMBuildAnd(g->b, i, teeny__cg_i64(g, bytes - 1), "");
    ok = and_pred(g, ok, LLVMBuildICmp(g->b, LLVMIntEQ, i, teeny__cg_i64(g, 0), ""));
  }
  return ok;
}

/* ---- the fast copy's mask: a loop-invariant part and a k bound ---------------------- */

static int strip_shape(cg *g, int v) {
  const teeny_op *d = g->f->values[v].def;
  while (d && (d->code == IR_BROADCAST || d->code == IR_EXPAND_DIMS || d->code == IR_RESHAPE)) {
    v = d->args[0];
    d = g->f->values[v].def;
  }
  return v;
}

static bool in_body(const teeny_region *body, const teeny_op *d) {
  for (int i = 0; i < body->nops; i++)
    if (body->ops[i] == d)
      return true;
  return false;
}

/* v does not change between iterations of the loop whose body is `body`:
 * made before the loop, or in the body by pure index arithmetic from such
 * values only. */
static bool loop_invariant(cg *g, const teeny_region *body, int v, int depth) {
  const teeny_op *d = g->f->values[v].def;
  if (!d) {
    for (int i = 0; i < body->nargs; i++)
      if (body->args[i] == v)
        return false;
    return true;
  }
  if (!in_body(body, d))
    return true;
  if (depth > 32 || d->nregions)
    return false;
  switch (d->code) {
  case IR_CONST: case IR_PROGRAM_ID: case IR_NUM_PROGRAMS: case IR_MAKE_RANGE:
  case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_TRANS:
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM: case IR_AND: case IR_OR:
  case IR_XOR: case IR_SHL: case IR_SHR: case IR_MIN: case IR_MAX: case IR_NEG: case IR_NOT:
  case IR_CMP: case IR_SELECT: case IR_CAST: case IR_ADDPTR:
    break;
  default:
    return false;
  }
  for (int i = 0; i < d->nargs; i++)
    if (!loop_invariant(g, body, d->args[i], depth + 1))
      return false;
  return true;
}

/* The op that makes v, shape ops (broadcasts, reshapes) looked through. */
static const teeny_op *def_of(cg *g, int v) { return g->f->values[strip_shape(g, v)].def; }

/* `(u32)(range + splat(o)) < splat(s)`, s a u32 scalar and range an i32
 * make_range from 0 (up to broadcasts): the bounds mask of a tensor
 * descriptor's block along one dim (irgen_desc.c), `0 <= o + i < shape`. */
static bool offset_bound(cg *g, const teeny_op *c, int *s, int *kmax, int *koff) {
  const teeny_op *cv = def_of(g, c->args[0]), *sp = def_of(g, c->args[1]);
  if (!cv || cv->code != IR_CAST || vtype(g, c->args[0]).dt != TEENY_DT_U32 || !sp ||
      sp->code != IR_SPLAT || vtype(g, sp->args[0]).dt != TEENY_DT_U32)
    return false;
  const teeny_op *add = def_of(g, cv->args[0]);
  if (vtype(g, cv->args[0]).dt != TEENY_DT_I32 || !add || add->code != IR_ADD)
    return false;
  for (int i = 0; i < 2; i++) {
    const teeny_op *r = def_of(g, add->args[i]), *o = def_of(g, add->args[1 - i]);
    if (r && r->code == IR_MAKE_RANGE && r->start == 0 && r->end > 0 && o && o->code == IR_SPLAT &&
        vtype(g, o->args[0]).dt == TEENY_DT_I32) {
      *s = sp->args[0];
      *kmax = r->end - 1;
      *koff = o->args[0];
      return true;
    }
  }
  return false;
}

/* `range < splat(s)` with range an i32 make_range (up to broadcasts):
 * true everywhere iff the range's largest value is below s (*koff -1); or
 * offset_bound's form: true everywhere iff o .. o + kmax, unsigned, do not
 * wrap and stay below s (*koff o). */
static bool range_bound(cg *g, int v, int *s, int *kmax, int *koff) {
  const teeny_op *c = def_of(g, v);
  if (!c || c->code != IR_CMP || c->pred != CMP_LT)
    return false;
  *koff = -1;
  if (offset_bound(g, c, s, kmax, koff))
    return true;
  const teeny_op *r = def_of(g, c->args[0]);
  const teeny_op *sp = def_of(g, c->args[1]);
  if (!r || r->code != IR_MAKE_RANGE || r->end <= r->start || !sp || sp->code != IR_SPLAT)
    return false;
  if (vtype(g, sp->args[0]).dt != TEENY_DT_I32 || vtype(g, c->args[0]).dt != TEENY_DT_I32)
    return false;
  *s = sp->args[0];
  *kmax = r->end - 1;
  return true;
}

/* Loop versioning (ctrl.c): a cp.async load of the loop `body`
 * whose mask is inv & (range < splat(s)) (either order), inv loop-invariant:
 * recorded, so that the fast copy tests range's largest value < s once per
 * iteration and, when it holds (every k tile but a partial last one), checks
 * inv alone: a predicate that does not change between iterations. */
void teeny__cg_async_mask_split(cg *g, const teeny_op *op, const teeny_region *body) {
  cg_vinfo *vi = &g->vi[op->res[0]];
  vi->cp_split = false;
  if (op->nargs < 2)
    return;
  int s0, kmax0, koff0;
  /* the k bound alone (tutorial 03's matmul): full tiles need no mask */
  if (range_bound(g, op->args[1], &s0, &kmax0, &koff0)) {
    vi->cp_split = true;
    vi->cp_inv = -1;
    vi->cp_ks = s0;
    vi->cp_kmax = kmax0;
    vi->cp_koff = koff0;
    return;
  }
  const teeny_op *m = g->f->values[op->args[1]].def;
  if (!m || m->code != IR_AND || m->nargs != 2)
    return;
  for (int i = 0; i < 2; i++) {
    int s, kmax, koff;
    if (range_bound(g, m->args[1 - i], &s, &kmax, &koff) &&
        loop_invariant(g, body, m->args[i], 0)) {
      vi->cp_split = true;
      vi->cp_inv = m->args[i];
      vi->cp_ks = s;
      vi->cp_kmax = kmax;
      vi->cp_koff = koff;
      return;
    }
  }
}

/* The mask the fast copy of a versioned loop checks in a full k tile: the
 * invariant part of a split mask, else the whole mask when it is loop-
 * invariant; -1 when there is none (or it changes between iterations). */
static int fast_mask(cg *g, const teeny_op *op, const teeny_region *body) {
  const cg_vinfo *vi = &g->vi[op->res[0]];
  if (vi->cp_split)
    return vi->cp_inv;
  if (op->nargs < 2 || !loop_invariant(g, body, op->args[1], 0))
    return -1;
  return op->args[1];
}

/* Loop versioning (ctrl.c), after teeny__cg_async_mask_split: this
 * thread's part of the condition under which the fast copy's mask
 * (fast_mask) is constant over each of the load's vector groups.  A mask
 * that is monotone along the vector axis, such as `rn < N` with N a
 * multiple of the group's width, then copies each group whole or zero-
 * fills it (cp.async's source size 0), with no per-element fallback:
 * without this the groups past an N edge, wholly masked off, took the
 * fallback's element loads in every k step, and a matmul's edge tiles ran
 * at about half speed.  The mask holds the same in every iteration, so the
 * first iteration's (bound now) decides.  NULL, with cp_whole cleared,
 * where there is nothing to check. */
LLVMValueRef teeny__cg_async_whole_ok(cg *g, const teeny_op *op, const teeny_region *body) {
  cg_vinfo *vi = &g->vi[op->res[0]];
  vi->cp_whole = false;
  int mask = fast_mask(g, op, body);
  if (mask < 0)
    return NULL;
  const cg_layout *L = vi->nat;
  plan pl = make_plan(g, op->args[0], mask, L, vtype(g, op->args[0]).pointee);
  if (pl.w == 1 || pl.uniform || !pl.mono)
    return NULL;
  LLVMValueRef *m = teeny__cg_get(g, mask, L), ok = NULL;
  for (long r = 0; r < (1L << L->nreg); r += pl.w)
    if (teeny__cg_reg_owner(L, r))
      ok = and_pred(g, ok, LLVMBuildICmp(g->b, LLVMIntEQ, m[r], m[r + pl.w - 1], ""));
  vi->cp_whole = ok != NULL;
  vi->cp_whole_mask = mask;
  return ok;
}

static void load_async_with(cg *g, const teeny_op *op, LLVMValueRef extra, const cg_stile *t,
                            int mask_id);

/* Whether a split mask (teeny__cg_async_mask_split) holds everywhere in
 * this iteration: kmax < s, or for a descriptor's bound, o <= o + kmax <
 * s unsigned (o + kmax in i32, wrapping: no wrap then means every o + i
 * lies between the two). */
static LLVMValueRef split_full(cg *g, const cg_vinfo *vi) {
  LLVMValueRef s = teeny__cg_scalar(g, vi->cp_ks), kmax = teeny__cg_i32(g, vi->cp_kmax);
  if (vi->cp_koff < 0)
    return LLVMBuildICmp(g->b, LLVMIntSLT, kmax, s, "kfull");
  LLVMValueRef o = teeny__cg_scalar(g, vi->cp_koff);
  LLVMValueRef hi = LLVMBuildAdd(g->b, o, kmax, "");
  return LLVMBuildAnd(g->b, LLVMBuildICmp(g->b, LLVMIntULE, o, hi, ""),
                      LLVMBuildICmp(g->b, LLVMIntULT, hi, s, ""), "kfull");
}

/* A tile load that writes the stage tile t instead of registers: cp.async
 * per vector group, and for the groups of a dynamic plan that fail their
 * check, ordinary loads and shared stores of each element (0 when masked).
 * In the fast copy with a split mask (teeny__cg_async_mask_split), two
 * versions behind one uniform branch: the full k tile's, masked by the
 * invariant part alone, and the partial one's, masked by the whole mask. */
void teeny__cg_load_async(cg *g, const teeny_op *op, LLVMValueRef extra, const cg_stile *t) {
  int mask_id = op->nargs >= 2 ? op->args[1] : -1;
  const cg_vinfo *vi = &g->vi[op->res[0]];
  if (!g->cp_fast || !vi->cp_split) {
    load_async_with(g, op, extra, t, mask_id);
    return;
  }
  LLVMValueRef full = split_full(g, vi);
  LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.kfull");
  LLVMBasicBlockRef bp = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.kpart");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.kjoin");
  LLVMBuildCondBr(g->b, full, bf, bp);
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->b, k ? bp : bf);
    int saved = teeny__cg_scope_push(g); /* nothing made in one is reused in the other */
    load_async_with(g, op, extra, t, k ? mask_id : vi->cp_inv);
    teeny__cg_scope_pop(g, saved);
    LLVMBuildBr(g->b, join);
  }
  LLVMPositionBuilderAtEnd(g->b, join);
}

static void load_async_with(cg *g, const teeny_op *op, LLVMValueRef extra, const cg_stile *t,
                            int mask_id) {
  teeny_type pt = vtype(g, op->args[0]);
  teeny_dtype dt = pt.pointee;
  bool nc = readonly_ptr(g, op->args[0]);
  const cg_layout *L = g->vi[op->res[0]].nat;
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  plan pl = make_plan(g, op->args[0], mask_id, L, dt);
  if (g->cp_fast) { /* the loop's version test proved every group aligned
                       and contiguous: only the mask is left to check */
    pl.aligned = pl.contig = true;
    pl.ustep = false;
    pl.base = -1;
    if (g->vi[op->res[0]].cp_whole && mask_id == g->vi[op->res[0]].cp_whole_mask)
      pl.uniform = true; /* and that each group is wholly on or off (teeny__cg_async_whole_ok) */
  } else {
    plan_step(g, &pl, ptr);
  }
  LLVMValueRef *mask = main_mask(g, &pl, L, extra);
  int es = elem_size(dt), bytes = pl.w * es;
  long n = 1L << L->nreg;
  fallback fb;
  fallback_init(g, &fb, n / pl.w);
  LLVMValueRef full = teeny__cg_i32(g, bytes);
  LLVMValueRef *delta = g->cp_fast ? g->vi[op->res[0]].cp_delta : NULL, first = NULL;
  for (long r = 0; r < n; r += pl.w) {
    if (!teeny__cg_reg_owner(L, r))
      continue;
    LLVMValueRef flat = teeny__cg_flat(g, L, r);
    LLVMValueRef dst = teeny__cg_stile_addr(g, t, teeny__cg_coord(g, L, flat, 0),
                                            teeny__cg_coord(g, L, flat, 1));
    /* the copy and its fallback read the group's address through one
     * opaque copy: with two uses of the pointer (the fallback's in its cold
     * block) LLVM's loop strength reduction kept a second induction
     * variable per group, updated every iteration for the fallback alone
     * (12 64-bit adds per k step of the 128x256x64 matmul).  In the fast
     * copy of a versioned loop, the first group's address plus a
     * loop-invariant difference (teeny__cg_async_layout_ok). */
    LLVMValueRef src = ptr[r];
    if (delta || (is_dynamic(&pl) && !g->emu)) {
      LLVMValueRef p = LLVMBuildPtrToInt(g->b, src, g->t_i64, "");
      if (!delta || !first)
        p = opaque_pure(g, p);
      if (delta) {
        first = first ? first : p;
        p = LLVMBuildAdd(g->b, first, delta[r], "");
      }
      src = LLVMBuildIntToPtr(g->b, p, g->t_gptr, "");
    }
    if (!is_dynamic(&pl)) {
      LLVMValueRef size = mask ? LLVMBuildSelect(g->b, mask[r], full, teeny__cg_i32(g, 0), "")
                               : full;
      cp_async(g, dst, src, bytes, size, NULL);
      continue;
    }
    LLVMValueRef ok = group_ok(g, &pl, dt, ptr + r, mask ? mask + r : NULL);
    fb.reg[fb.n] = r;
    fb.words[4 * fb.n] = dst; /* (the shared address, for the fallback) */
    fb.words[4 * fb.n + 1] = src; /* (and the global one) */
    fb.ok[fb.n++] = ok;
    cp_async(g, dst, src, bytes, full, ok);
  }
  if (!fb.n)
    return;
  /* if (!all ok) for each failed group: each element loaded (or 0) and stored */
  LLVMValueRef all = skip_fallbacks(g, &fb, extra);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.slow");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.join");
  LLVMBuildCondBr(g->b, all, join, slow);
  LLVMPositionBuilderAtEnd(g->b, slow);
  LLVMValueRef *m = fresh_mask(g, mask_id, L, extra);
  LLVMValueRef zero = zero_of(g, dt);
  for (int k = 0; k < fb.n; k++) {
    long r = fb.reg[k];
    LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.el");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cpa.next");
    LLVMBuildCondBr(g->b, fb.ok[k], next, wr);
    LLVMPositionBuilderAtEnd(g->b, wr);
    gaddr ga = group_addr_at(g, &pl, ptr + r, dt, fb.words[4 * k + 1]);
    /* the group's elements share one 16-byte chunk of the tile, which the
     * swizzle moves as a whole: element i is i * size past the group's
     * shared address (opaque, so that LLVM does not hoist a per-element
     * address out of the loop and keep it in a register throughout) */
    LLVMValueRef dst = fb.words[4 * k];
    LLVMValueRef d0 = g->emu ? NULL
                             : teeny__cg_asm(g, g->t_i32, "mov.b32 $0, $1;", "=r,r",
                                             (LLVMValueRef[]){LLVMBuildPtrToInt(g->b, dst, g->t_i32, "")},
                                             1, true);
    for (int i = 0; i < pl.w; i++) {
      LLVMValueRef v;
      LLVMValueRef q = m ? m[r + i] : extra ? extra : teeny__cg_bool(g, true);
      pred_load(g, elem_addr(g, &ga, i), dt, 1, nc, q, &zero, &v);
      LLVMValueRef off = teeny__cg_i32(g, i * es);
      LLVMValueRef a = d0 ? LLVMBuildIntToPtr(g->b, LLVMBuildAdd(g->b, d0, off, ""), g->t_sptr, "")
                          : LLVMBuildGEP2(g->b, g->t_i8, dst, &off, 1, "");
      teeny__cg_smem_store(g, a, dt, &v, 1);
    }
    LLVMBuildBr(g->b, next);
    LLVMPositionBuilderAtEnd(g->b, next);
  }
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

void teeny__cg_emit_load(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  if (pt.rank == 0) {
    load_scalar(g, op, pt.pointee, readonly_ptr(g, op->args[0]));
    return;
  }
  if (g->vi[op->res[0]].prefetched)
    return; /* the loop that owns it loaded it one iteration ahead */
  if (teeny__cg_tma_ok(g, op)) {
    teeny__cg_emit_tma(g, op);
    return;
  }
  teeny__cg_set(g, op->res[0], g->vi[op->res[0]].nat, teeny__cg_load_regs(g, op, NULL));
}

bool teeny__cg_readonly(cg *g, int ptr) { return readonly_ptr(g, ptr); }

/* ---- stores ---------------------------------------------------------------------------------- */

static void store_elems(cg *g, LLVMValueRef addr, teeny_dtype dt, int w,
                        LLVMValueRef pred, LLVMValueRef *v) {
  if (!pred && !hinted(g)) {
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
                            LLVMValueRef *ptr, int mask_id, const cg_layout *L,
                            LLVMValueRef owner, LLVMValueRef *val) {
  if (!fb->n)
    return;
  LLVMValueRef all = and_all(g, fb->ok, fb->n);
  materialise_mask(g, mask_id, L);
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "st.slow");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "st.join");
  LLVMBuildCondBr(g->b, all, join, slow);
  LLVMPositionBuilderAtEnd(g->b, slow);
  g->divergent++;
  LLVMValueRef *mask = fresh_mask(g, mask_id, L, NULL);
  for (int k = 0; k < fb->n; k++) {
    long r = fb->reg[k];
    LLVMValueRef notok = and_pred(g, LLVMBuildNot(g->b, fb->ok[k], ""), owner);
    gaddr ga = group_addr(g, pl, ptr + r, dt);
    for (int i = 0; i < pl->w; i++)
      store_elems(g, elem_addr(g, &ga, i), dt, 1,
                  and_pred(g, mask ? mask[r + i] : NULL, notok),
                  val + r + i);
  }
  g->divergent--;
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

void teeny__cg_emit_store(cg *g, const teeny_op *op) {
  if (teeny__cg_tma_ok(g, op))
    teeny__cg_emit_tma(g, op);
  else
    teeny__cg_emit_pointer_store(g, op);
}

void teeny__cg_emit_pointer_store(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  teeny_dtype dt = pt.pointee;
  if (pt.rank == 0) {
    cg_access a = access_of(g, op, NULL, true);
    teeny__cg_order_access(g, &a);
    LLVMValueRef pred = is_thread0(g);
    if (op->nargs == 3)
      pred = LLVMBuildAnd(g->b, pred, teeny__cg_scalar(g, op->args[2]), "");
    LLVMValueRef v = teeny__cg_scalar(g, op->args[1]);
    LLVMValueRef p = teeny__cg_scalar(g, op->args[0]);
    g->hint_op = op;
    store_elems(g, p, dt, 1, pred, &v);
    g->hint_op = NULL;
    return;
  }
  const cg_layout *L = teeny__cg_mem_layout(g, op);
  LLVMValueRef *ptr = teeny__cg_get(g, op->args[0], L);
  LLVMValueRef *val = teeny__cg_get(g, op->args[1], L);
  LLVMValueRef owner = teeny__cg_owner(g, L);
  if (LLVMIsAConstantInt(owner))
    owner = NULL; /* every holder is the only one */
  plan pl = make_plan(g, op->args[0], op->nargs == 3 ? op->args[2] : -1, L, dt);
  plan_step(g, &pl, ptr);
  LLVMValueRef *mask = main_mask(g, &pl, L, NULL);
  cg_access acc = access_of(g, op, L, true); /* once its operands are made */
  teeny__cg_order_access(g, &acc);
  long n = 1L << L->nreg;
  fallback fb;
  fallback_init(g, &fb, n / pl.w);
  g->hint_op = op;
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
  store_fallbacks(g, &pl, &fb, dt, ptr, op->nargs == 3 ? op->args[2] : -1, L, owner, val);
  g->hint_op = NULL;
}

/* ---- atomics ------------------------------------------------------------------------------------ */

/* PTX's name of an LLVM atomic operation on a value of LLVM type t. */
static const char *ptx_rmw(cg *g, LLVMAtomicRMWBinOp o, LLVMTypeRef t, char *buf, size_t n) {
  bool wide = t == g->t_i64 || t == g->t_f64;
  const char *op, *ty;
  switch (o) {
  case LLVMAtomicRMWBinOpFAdd:
    op = "add";
    ty = t == g->t_f16 ? "noftz.f16" : t == g->t_bf16 ? "noftz.bf16" : t == g->t_f32 ? "f32"
                                                                                     : "f64";
    break;
  case LLVMAtomicRMWBinOpAdd: op = "add"; ty = wide ? "u64" : "u32"; break;
  case LLVMAtomicRMWBinOpMax: op = "max"; ty = wide ? "s64" : "s32"; break;
  case LLVMAtomicRMWBinOpMin: op = "min"; ty = wide ? "s64" : "s32"; break;
  case LLVMAtomicRMWBinOpUMax: op = "max"; ty = wide ? "u64" : "u32"; break;
  case LLVMAtomicRMWBinOpUMin: op = "min"; ty = wide ? "u64" : "u32"; break;
  case LLVMAtomicRMWBinOpAnd: op = "and"; ty = wide ? "b64" : "b32"; break;
  case LLVMAtomicRMWBinOpOr: op = "or"; ty = wide ? "b64" : "b32"; break;
  case LLVMAtomicRMWBinOpXor: op = "xor"; ty = wide ? "b64" : "b32"; break;
  default: op = "exch"; ty = wide ? "b64" : "b32"; break;
  }
  snprintf(buf, n, "%s.%s", op, ty);
  return buf;
}

static char reg_letter(cg *g, LLVMTypeRef t) {
  return t == g->t_i64 ? 'l' : t == g->t_f32 ? 'f' : t == g->t_f64 ? 'd'
       : t == g->t_i16 ? 'h' : 'r';
}

/* `atom.<sem>.<scope>.global.<what>` on p with operands v[0..n) (1, or 2
 * for cas), as inline PTX: LLVM 19's NVPTX back end drops an atomicrmw's
 * ordering and scope.  f16 travels as its bits. */
static LLVMValueRef atom_ptx(cg *g, const teeny_op *op, const char *what, LLVMValueRef p,
                             LLVMValueRef *v, int n) {
  static const char *const sem[] = {"acq_rel", "relaxed", "acquire", "release"};
  static const char *const scope[] = {"gpu", "cta", "sys"};
  LLVMTypeRef t = LLVMTypeOf(v[0]);
  bool half = t == g->t_f16 || t == g->t_bf16;
  LLVMValueRef args[3] = {p};
  for (int i = 0; i < n; i++)
    args[1 + i] = half ? LLVMBuildBitCast(g->b, v[i], g->t_i16, "") : v[i];
  LLVMTypeRef rt = half ? g->t_i16 : t;
  char text[128], cons[32];
  snprintf(text, sizeof text, "atom.%s.%s.global.%s $0, [$1], $2%s;", sem[op->sem],
           scope[op->scope], what, n == 2 ? ", $3" : "");
  char c = reg_letter(g, rt);
  if (n == 2)
    snprintf(cons, sizeof cons, "=%c,l,%c,%c,~{memory}", c, c, c);
  else
    snprintf(cons, sizeof cons, "=%c,l,%c,~{memory}", c, c);
  LLVMValueRef r = teeny__cg_asm(g, rt, text, cons, args, 1 + n, true);
  return half ? LLVMBuildBitCast(g->b, r, t, "") : r;
}

static LLVMValueRef rmw(cg *g, const teeny_op *op, LLVMAtomicRMWBinOp o, LLVMValueRef p,
                        LLVMValueRef v) {
  if (g->emu) /* the emulator's threads are coroutines of one host thread */
    return LLVMBuildAtomicRMW(g->b, o, p, v, LLVMAtomicOrderingSequentiallyConsistent, 0);
  char what[24];
  return atom_ptx(g, op, ptx_rmw(g, o, LLVMTypeOf(v), what, sizeof what), p, &v, 1);
}

/* f32 max/min on the integer view: non-negative floats order like signed
 * ints, negative ones in reverse like unsigned ints. */
static LLVMValueRef float_minmax(cg *g, const teeny_op *op, bool max, LLVMValueRef p,
                                 LLVMValueRef v) {
  LLVMValueRef bits = LLVMBuildBitCast(g->b, v, g->t_i32, "");
  LLVMValueRef pos = LLVMBuildICmp(g->b, LLVMIntSGE, bits, teeny__cg_i32(g, 0), "");
  LLVMBasicBlockRef bp = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "fpos");
  LLVMBasicBlockRef bn = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "fneg");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "fdone");
  LLVMBuildCondBr(g->b, pos, bp, bn);
  LLVMPositionBuilderAtEnd(g->b, bp);
  LLVMValueRef a = rmw(g, op, max ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpMin, p, bits);
  LLVMBasicBlockRef ep = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, bn);
  LLVMValueRef b = rmw(g, op, max ? LLVMAtomicRMWBinOpUMin : LLVMAtomicRMWBinOpUMax, p, bits);
  LLVMBasicBlockRef en = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef phi = LLVMBuildPhi(g->b, g->t_i32, "");
  LLVMValueRef in[2] = {a, b};
  LLVMBasicBlockRef from[2] = {ep, en};
  LLVMAddIncoming(phi, in, from, 2);
  return LLVMBuildBitCast(g->b, phi, g->t_f32, "");
}

static LLVMValueRef cas32(cg *g, const teeny_op *op, LLVMValueRef p, LLVMValueRef cmp,
                          LLVMValueRef v);

/* bf16 atomic add where the hardware has none (before sm_90, and on the
 * host): a compare-and-swap loop on the aligned 32-bit word holding the
 * element, the sum computed in f32 and rounded (as the element-wise add
 * is; rounding twice, f32 then bf16, is exact for a sum of two bf16s). */
static LLVMValueRef bf16_add_cas(cg *g, const teeny_op *op, LLVMValueRef p, LLVMValueRef v) {
  LLVMValueRef addr = LLVMBuildPtrToInt(g->b, p, g->t_i64, "");
  LLVMValueRef wp = LLVMBuildIntToPtr(g->b, LLVMBuildAnd(g->b, addr, teeny__cg_i64(g, ~3ll), ""),
                                      LLVMTypeOf(p), "");
  LLVMValueRef shift = LLVMBuildTrunc(
      g->b, LLVMBuildShl(g->b, LLVMBuildAnd(g->b, addr, teeny__cg_i64(g, 2), ""),
                         teeny__cg_i64(g, 3), ""), g->t_i32, "");
  LLVMValueRef first = LLVMBuildLoad2(g->b, g->t_i32, wp, "");
  LLVMSetVolatile(first, 1);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "bf16.cas");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "bf16.done");
  LLVMBuildBr(g->b, loop);
  LLVMPositionBuilderAtEnd(g->b, loop);
  LLVMValueRef old = LLVMBuildPhi(g->b, g->t_i32, "");
  LLVMValueRef o16 = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, old, shift, ""), g->t_i16, "");
  LLVMValueRef ob = g->emu ? o16 : LLVMBuildBitCast(g->b, o16, g->t_bf16, "");
  LLVMValueRef sum = LLVMBuildFAdd(g->b, teeny__cg_cast(g, ob, TEENY_DT_BF16, TEENY_DT_F32),
                                   teeny__cg_cast(g, v, TEENY_DT_BF16, TEENY_DT_F32), "");
  LLVMValueRef nb = teeny__cg_cast(g, sum, TEENY_DT_F32, TEENY_DT_BF16);
  LLVMValueRef n16 = g->emu ? nb : LLVMBuildBitCast(g->b, nb, g->t_i16, "");
  LLVMValueRef keep = LLVMBuildAnd(g->b, old, LLVMBuildNot(g->b, LLVMBuildShl(g->b, teeny__cg_i32(g, 0xffff), shift, ""), ""), "");
  LLVMValueRef word = LLVMBuildOr(g->b, keep, LLVMBuildShl(g->b, LLVMBuildZExt(g->b, n16, g->t_i32, ""), shift, ""), "");
  LLVMValueRef got = cas32(g, op, wp, old, word);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, got, old, ""), done, loop);
  LLVMValueRef in[2] = {first, got};
  LLVMBasicBlockRef from[2] = {pre, latch};
  LLVMAddIncoming(old, in, from, 2);
  LLVMPositionBuilderAtEnd(g->b, done);
  return ob;
}

static LLVMValueRef rmw_elem(cg *g, const teeny_op *op, teeny_dtype dt, LLVMValueRef p,
                             LLVMValueRef v) {
  bool f = teeny__dt_is_float(dt), s = teeny__dt_is_signed(dt);
  switch (op->rmw) {
  case RMW_ADD:
    if (dt == TEENY_DT_BOOL)
      break;
    if (dt == TEENY_DT_BF16 && (g->emu || g->sm < 90))
      return bf16_add_cas(g, op, p, v);
    return rmw(g, op, f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd, p, v);
  case RMW_AND:
  case RMW_OR:
  case RMW_XOR:
    if (f || elem_size(dt) < 4)
      break;
    return rmw(g, op, op->rmw == RMW_AND ? LLVMAtomicRMWBinOpAnd
                      : op->rmw == RMW_OR ? LLVMAtomicRMWBinOpOr : LLVMAtomicRMWBinOpXor, p, v);
  case RMW_MAX:
  case RMW_MIN:
    if (dt == TEENY_DT_F32)
      return float_minmax(g, op, op->rmw == RMW_MAX, p, v);
    if (f || dt == TEENY_DT_BOOL)
      break;
    if (op->rmw == RMW_MAX)
      return rmw(g, op, s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax, p, v);
    return rmw(g, op, s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin, p, v);
  case RMW_XCHG:
    if (elem_size(dt) < 4)
      break;
    return rmw(g, op, LLVMAtomicRMWBinOpXchg, p, v);
  }
  static const char *const names[] = {"atomic_add", "atomic_max", "atomic_min",
                                      "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor"};
  teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "%s on %s is not supported",
                 names[op->rmw], teeny_dtype_name(dt));
}

/* One 32-bit compare-and-swap with op's sem and scope; the old word. */
static LLVMValueRef cas32(cg *g, const teeny_op *op, LLVMValueRef p, LLVMValueRef cmp,
                          LLVMValueRef v) {
  if (g->emu) {
    LLVMValueRef r = LLVMBuildAtomicCmpXchg(g->b, p, cmp, v,
                                            LLVMAtomicOrderingSequentiallyConsistent,
                                            LLVMAtomicOrderingSequentiallyConsistent, 0);
    return LLVMBuildExtractValue(g->b, r, 0, "");
  }
  LLVMValueRef ops[2] = {cmp, v};
  return atom_ptx(g, op, "cas.b32", p, ops, 2);
}

static LLVMValueRef cas_elem(cg *g, const teeny_op *op, teeny_dtype dt, LLVMValueRef p,
                             LLVMValueRef cmp, LLVMValueRef v) {
  int es = elem_size(dt);
  if (es < 4)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "atomic_cas on %s is not supported "
                   "(32- and 64-bit dtypes only)", teeny_dtype_name(dt));
  LLVMTypeRef it = es == 4 ? g->t_i32 : g->t_i64;
  if (teeny__dt_is_float(dt)) { /* compared bit for bit, like atom.cas */
    cmp = LLVMBuildBitCast(g->b, cmp, it, "");
    v = LLVMBuildBitCast(g->b, v, it, "");
  }
  LLVMValueRef old;
  if (g->emu) {
    LLVMValueRef r = LLVMBuildAtomicCmpXchg(g->b, p, cmp, v,
                                            LLVMAtomicOrderingSequentiallyConsistent,
                                            LLVMAtomicOrderingSequentiallyConsistent, 0);
    old = LLVMBuildExtractValue(g->b, r, 0, "");
  } else {
    LLVMValueRef ops[2] = {cmp, v};
    old = atom_ptx(g, op, es == 4 ? "cas.b32" : "cas.b64", p, ops, 2);
  }
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
                         ? cas_elem(g, op, dt, p, v, teeny__cg_to_mem(g, dt, b))
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
  long numel = 1;
  for (int d = 0; d < L->rank; d++)
    numel *= L->shape[d];
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

static bool releases(const teeny_op *op) {
  return op->sem == TEENY_SEM_RELEASE || op->sem == TEENY_SEM_ACQ_REL;
}

static bool acquires(const teeny_op *op) {
  return op->sem == TEENY_SEM_ACQUIRE || op->sem == TEENY_SEM_ACQ_REL;
}

/* The mask operand of an atomic, or -1. */
static int atomic_mask(const teeny_op *op) {
  if (op->code == IR_ATOMIC_CAS)
    return op->nargs == 4 ? op->args[3] : -1;
  return op->nargs == 3 ? op->args[2] : -1;
}

/* The pending-set entry of an atomic; integer add/max/min whose old values
 * no one reads commute with each other (order.c). */
static cg_access atomic_access(cg *g, const teeny_op *op, const cg_layout *L) {
  cg_access a = access_of(g, op, L, true);
  teeny_dtype dt = vtype(g, op->args[0]).pointee;
  if (op->code == IR_ATOMIC_RMW && op->rmw != RMW_XCHG && teeny__dt_is_int(dt) &&
      g->uses[op->res[0]] == 0)
    a.comm = (signed char)op->rmw;
  return a;
}

/* Thread 0 runs a scalar atomic; its old value reaches the other threads
 * only when something uses it.  A release waits for the other threads'
 * earlier accesses; an acquire holds back their later ones. */
static void atomic_scalar(cg *g, const teeny_op *op, teeny_dtype dt) {
  if (releases(op))
    teeny__cg_order_release(g, true);
  cg_access acc = atomic_access(g, op, NULL);
  teeny__cg_order_access(g, &acc);
  LLVMValueRef pred = is_thread0(g);
  int m = atomic_mask(op);
  if (m >= 0)
    pred = LLVMBuildAnd(g->b, pred, teeny__cg_scalar(g, m), "");
  LLVMValueRef b = op->code == IR_ATOMIC_CAS ? teeny__cg_scalar(g, op->args[2]) : NULL;
  LLVMValueRef old = atomic_elem(g, op, dt, pred, teeny__cg_scalar(g, op->args[0]),
                                 teeny__cg_scalar(g, op->args[1]), b);
  teeny__cg_order_done(g);
  if (acquires(op))
    teeny__cg_order_acquired(g, true);
  if (g->uses[op->res[0]])
    old = teeny__cg_bcast_thread0(g, old, dt);
  teeny__cg_set_scalar(g, op->res[0], old);
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
  if (atomic_mask(op) >= 0)
    mask = teeny__cg_get(g, atomic_mask(op), L);
  if (releases(op)) /* once its operands are made */
    teeny__cg_order_release(g, false);
  cg_access acc = atomic_access(g, op, L);
  teeny__cg_order_access(g, &acc);
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
  teeny__cg_order_done(g);
  if (acquires(op))
    teeny__cg_order_acquired(g, false);
  if (!LLVMIsAConstantInt(owner) && g->uses[op->res[0]])
    old = share_owned(g, L, dt, owner, old);
  teeny__cg_set(g, op->res[0], L, old);
}
