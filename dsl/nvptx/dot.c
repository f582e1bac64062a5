/*
 * dsl/nvptx/dot.c — dot(a[M,K], b[K,N], acc[M,N]).
 *
 * On sm_90a, f16/bf16 dots with big enough tiles use Hopper's wgmma from
 * shared-memory descriptors ("wgmma" below), and so do dots of two fp8
 * tiles whose B arrives K-major (k32 instructions reading the fp8 tiles
 * themselves, not the f16 casts irgen puts before the dot: native_f8).
 * Otherwise tensor cores
 * through mma.sync (sm_80 and later, all our targets):
 *   f16, bf16  m16n8k16, f32 accumulate
 *   f32        m16n8k8 on TF32 (operands rounded with cvt.rna.tf32.f32)
 *   i8         m16n8k32, i32 accumulate
 *   fp8 x fp8  m16n8k32, f32 accumulate (sm_89 and sm_90: native_f8)
 * The result, and the loop-carried accumulator, live in the mma C-fragment
 * layout; the operands are brought into the A/B fragment layouts (through
 * shared memory when they come from loads).  Warps split M and N so that
 * each warp's tile stays as square as possible.
 *
 * Everything else (f64, shapes too small for one mma, i8 with K < 32) uses
 * a plain FMA loop: each thread holds whole rows of A and columns of B for
 * the accumulator elements it owns.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dsl/nvptx/codegen.h"

typedef enum { DOT_FMA, DOT_F16, DOT_BF16, DOT_TF32, DOT_I8, DOT_F8 } dot_kind;

typedef struct dot_plan {
  dot_kind kind;
  int rank;             /* 2, or 3 for a batched dot (on the FMA path) */
  int B, lb;            /* batch and its log2 (1 and 0 for rank 2) */
  int M, N, K;
  int lm, ln, lk;       /* log2 of M, N, K */
  int mk;               /* K of one instruction */
  int ea, eb;           /* fragment element bits of A and B */
  char warp[CG_LANE_BITS]; /* per warp bit: 'm', 'n' or 0 (unused) */
  int nwm, nwn;         /* warp bits along M and N */
  int part_a, part_b;   /* DOT_TF32: which part of each f32 operand this pass
                           multiplies: 1 its TF32 rounding (prec_tf32), 2 the
                           rest, rounded (prec_tf32x3's small terms) */
  int opnd[2];          /* the values read as A and B: the dot's operands,
                           or for DOT_F8 the fp8 tiles its f16 casts convert */
  teeny_dtype f8[2];    /* DOT_F8: their dtypes (f8e4m3 or f8e5m2) */
} dot_plan;

/* How warpgroups share a wgmma dot (see "wgmma" below). */
typedef struct wg_plan {
  int wgm, wgn;  /* warpgroups along M and N */
  int lwm, lwn;  /* their log2 */
  int MR, NR;    /* instructions per k step along M (64 rows each) and N */
  int NI;        /* N of one instruction */
} wg_plan;

static dot_kind kind_of(cg *g, const teeny_op *op, int M, int N, int K) {
  teeny_dtype a = teeny__ir_type(g->f, op->args[0]).dt;
  teeny_dtype c = teeny__ir_type(g->f, op->args[2]).dt;
  if (M < 16 || N < 8)
    return DOT_FMA;
  if ((a == TEENY_DT_F16 || a == TEENY_DT_BF16) && c == TEENY_DT_F32 && K >= 16)
    return a == TEENY_DT_F16 ? DOT_F16 : DOT_BF16;
  if (a == TEENY_DT_F32 && c == TEENY_DT_F32 && K >= 8)
    return op->prec == TEENY_PREC_IEEE ? DOT_FMA : DOT_TF32; /* ieee: fma in k order */
  if (a == TEENY_DT_I8 && c == TEENY_DT_I32 && K >= 32)
    return DOT_I8;
  return DOT_FMA;
}

static bool wg_make(cg *g, const dot_plan *p, wg_plan *w);

/* The fp8 tile that v converts to f16 (irgen's form of a dot on fp8
 * operands: both cast to f16, exactly), or -1. */
static int f8_source(cg *g, int v) {
  const teeny_op *d = g->f->values[v].def;
  if (!d || d->code != IR_CAST || teeny__ir_type(g->f, v).dt != TEENY_DT_F16)
    return -1;
  return teeny__dt_is_fp8(teeny__ir_type(g->f, d->args[0]).dt) ? d->args[0] : -1;
}

/* Does the target run mma.sync on fp8 operands (m16n8k32, PTX ISA 8.4)?
 * sm_89 and plain sm_90; sm_90a multiplies fp8 on wgmma instead. */
static bool f8_mma_sync(const cg *g) { return g->sm >= 89 && !g->sm_a; }

/* A dot of two fp8 tiles (cast to f16) reads the fp8 tiles themselves
 * where the target has an fp8 instruction for it, at twice the f16 rate.
 * On sm_90a that is Hopper's fp8 wgmma, where the wgmma tiling takes it:
 * k32 instructions read both operands K-major from shared memory (the
 * instruction has no transposed fp8 form), so B must arrive K-major
 * (stored [N, K], as Triton's fp8 matmuls take it).  On sm_89 and sm_90
 * it is mma.sync m16n8k32 (the i8 fragment layouts, B gathered from
 * shared memory in any order), for K of 32 or more.  Otherwise the f16
 * path multiplies the casts (the same products, summed in f32). */
static void native_f8(cg *g, const teeny_op *op, dot_plan *p) {
  int a = f8_source(g, op->args[0]), b = f8_source(g, op->args[1]);
  if (a < 0 || b < 0)
    return;
  dot_plan q = *p;
  q.kind = DOT_F8;
  q.opnd[0] = a;
  q.opnd[1] = b;
  q.f8[0] = teeny__ir_type(g->f, a).dt;
  q.f8[1] = teeny__ir_type(g->f, b).dt;
  if (g->sm_a) {
    const cg_layout *LB = teeny__cg_use_layout(g, b);
    wg_plan w;
    if (teeny__cg_run_bits(LB, 0) > teeny__cg_run_bits(LB, 1) && wg_make(g, &q, &w))
      *p = q;
  } else if (f8_mma_sync(g) && p->K >= 32) {
    *p = q;
  }
}

static dot_plan make_plan(cg *g, const teeny_op *op) {
  teeny_type at = teeny__ir_type(g->f, op->args[0]), bt = teeny__ir_type(g->f, op->args[1]);
  dot_plan p;
  memset(&p, 0, sizeof p);
  int lo = at.rank - 2;
  p.rank = at.rank;
  p.B = lo ? at.shape[0] : 1;
  p.M = at.shape[lo];
  p.K = at.shape[lo + 1];
  p.N = bt.shape[lo + 1];
  p.lb = teeny__cg_log2(p.B);
  p.lm = teeny__cg_log2(p.M);
  p.ln = teeny__cg_log2(p.N);
  p.lk = teeny__cg_log2(p.K);
  p.kind = lo ? DOT_FMA : kind_of(g, op, p.M, p.N, p.K);
  p.part_a = p.part_b = 1;
  p.opnd[0] = op->args[0];
  p.opnd[1] = op->args[1];
  if (p.kind == DOT_F16)
    native_f8(g, op, &p);
  switch (p.kind) {
  case DOT_F16:
  case DOT_BF16:
    p.mk = 16, p.ea = 3, p.eb = 2;
    break;
  case DOT_TF32:
    p.mk = 8, p.ea = 2, p.eb = 1;
    break;
  case DOT_I8:
  case DOT_F8:
    p.mk = 32, p.ea = 4, p.eb = 3;
    break;
  default:
    return p;
  }
  int tm = p.M, tn = p.N;
  /* warp_bits <= 5 (num_warps <= 32); the second bound makes that evident
   * to the compiler (gcc -O3's -Wstringop-overflow) */
  for (int k = 0; k < g->warp_bits && k < CG_LANE_BITS; k++) {
    bool can_m = tm >= 32, can_n = tn >= 16;
    if (can_m && (!can_n || tm >= tn)) {
      p.warp[k] = 'm';
      p.nwm++;
      tm /= 2;
    } else if (can_n) {
      p.warp[k] = 'n';
      p.nwn++;
      tn /= 2;
    }
  }
  return p;
}

/* ---- layouts ------------------------------------------------------------------------------ */

typedef struct lbuild {
  cg_layout L;
} lbuild;

static void lb_init_shape(cg *g, lbuild *b, int rank, const int *shape) {
  memset(&b->L, 0, sizeof b->L);
  b->L.rank = rank;
  for (int d = 0; d < rank; d++)
    b->L.shape[d] = shape[d];
  b->L.nwarp = g->warp_bits;
  memset(b->L.lane, -1, sizeof b->L.lane);
  memset(b->L.warp, -1, sizeof b->L.warp);
}

static void lb_init(cg *g, lbuild *b, int m, int n) {
  int shape[2] = {m, n};
  lb_init_shape(g, b, 2, shape);
}

static void lb_reg(lbuild *b, int bit) { b->L.reg[b->L.nreg++] = (signed char)bit; }

/* flat bit of (row bit r) and (col bit c) in a [rows, 2^lc] tile */
static int rowbit(int lc, int r) { return lc + r; }

/* C fragments: lanes (c1 c2 r0 r1 r2), registers (c0 r3, n repeats, m repeats) */
static const cg_layout *c_layout(cg *g, const dot_plan *p) {
  lbuild b;
  lb_init(g, &b, p->M, p->N);
  int lane[5] = {1, 2, rowbit(p->ln, 0), rowbit(p->ln, 1), rowbit(p->ln, 2)};
  for (int k = 0; k < 5; k++)
    b.L.lane[k] = (signed char)lane[k];
  lb_reg(&b, 0);
  lb_reg(&b, rowbit(p->ln, 3));
  for (int c = 3 + p->nwn; c < p->ln; c++)
    lb_reg(&b, c);
  for (int r = 4 + p->nwm; r < p->lm; r++)
    lb_reg(&b, rowbit(p->ln, r));
  int im = 0, in = 0;
  for (int k = 0; k < g->warp_bits; k++)
    if (p->warp[k] == 'm')
      b.L.warp[k] = (signed char)rowbit(p->ln, 4 + im++);
    else if (p->warp[k] == 'n')
      b.L.warp[k] = (signed char)(3 + in++);
  return teeny__cg_intern(g, &b.L);
}

/* A fragments on [M, K]; the k bits of one fragment element come first. */
static const cg_layout *a_layout(cg *g, const dot_plan *p) {
  lbuild b;
  lb_init(g, &b, p->M, p->K);
  int lk = p->lk;
  int r0 = rowbit(lk, 0), r1 = rowbit(lk, 1), r2 = rowbit(lk, 2), r3 = rowbit(lk, 3);
  int first_rep;
  if (p->kind == DOT_TF32) {
    signed char lane[5] = {0, 1, (signed char)r0, (signed char)r1, (signed char)r2};
    memcpy(b.L.lane, lane, 5);
    lb_reg(&b, r3);
    lb_reg(&b, 2);
    first_rep = 3;
  } else if (p->kind == DOT_I8 || p->kind == DOT_F8) {
    signed char lane[5] = {2, 3, (signed char)r0, (signed char)r1, (signed char)r2};
    memcpy(b.L.lane, lane, 5);
    lb_reg(&b, 0);
    lb_reg(&b, 1);
    lb_reg(&b, r3);
    lb_reg(&b, 4);
    first_rep = 5;
  } else {
    signed char lane[5] = {1, 2, (signed char)r0, (signed char)r1, (signed char)r2};
    memcpy(b.L.lane, lane, 5);
    lb_reg(&b, 0);
    lb_reg(&b, r3);
    lb_reg(&b, 3);
    first_rep = 4;
  }
  for (int k = first_rep; k < lk; k++)
    lb_reg(&b, k);
  for (int r = 4 + p->nwm; r < p->lm; r++)
    lb_reg(&b, rowbit(lk, r));
  int im = 0;
  for (int k = 0; k < g->warp_bits; k++)
    if (p->warp[k] == 'm')
      b.L.warp[k] = (signed char)rowbit(lk, 4 + im++);
  return teeny__cg_intern(g, &b.L);
}

/* B fragments on [K, N]. */
static const cg_layout *b_layout(cg *g, const dot_plan *p) {
  lbuild b;
  lb_init(g, &b, p->K, p->N);
  int ln = p->ln;
#define KB(x) ((signed char)rowbit(ln, (x)))
  int first_rep;
  if (p->kind == DOT_TF32) {
    signed char lane[5] = {KB(0), KB(1), 0, 1, 2};
    memcpy(b.L.lane, lane, 5);
    lb_reg(&b, KB(2));
    first_rep = 3;
  } else if (p->kind == DOT_I8 || p->kind == DOT_F8) {
    signed char lane[5] = {KB(2), KB(3), 0, 1, 2};
    memcpy(b.L.lane, lane, 5);
    lb_reg(&b, KB(0));
    lb_reg(&b, KB(1));
    lb_reg(&b, KB(4));
    first_rep = 5;
  } else {
    signed char lane[5] = {KB(1), KB(2), 0, 1, 2};
    memcpy(b.L.lane, lane, 5);
    lb_reg(&b, KB(0));
    lb_reg(&b, KB(3));
    first_rep = 4;
  }
  for (int k = first_rep; k < p->lk; k++)
    lb_reg(&b, KB(k));
#undef KB
  for (int c = 3 + p->nwn; c < ln; c++)
    lb_reg(&b, c);
  int in = 0;
  for (int k = 0; k < g->warp_bits; k++)
    if (p->warp[k] == 'n')
      b.L.warp[k] = (signed char)(3 + in++);
  return teeny__cg_intern(g, &b.L);
}

/* FMA operands: bit of the accumulator layout C -> the same bit of the
 * operand (shape osh) when it is on a dim the two share (the batch, and
 * M for A or N for B: dims below `keep`, or `keep` itself), else -1. */
static int share_bit(const cg_layout *C, int bit, int keep, const int *osh) {
  if (bit < 0)
    return -1;
  int d, k;
  teeny__cg_dimbit(C->rank, C->shape, bit, &d, &k);
  return d == keep || d < C->rank - 2 ? teeny__cg_flatbit(C->rank, osh, d, k) : -1;
}

/* FMA: the accumulator's default layout; A and B hold, per thread, the
 * whole K extent of the rows (columns) of the accumulator it owns. */
static const cg_layout *fma_operand(cg *g, const cg_layout *C, const dot_plan *p,
                                    bool is_a) {
  int lo = p->rank - 2, osh[3] = {p->B, 0, 0};
  osh[lo] = is_a ? p->M : p->K;
  osh[lo + 1] = is_a ? p->K : p->N;
  lbuild b;
  lb_init_shape(g, &b, p->rank, osh);
  int keep = is_a ? lo : lo + 1; /* the accumulator dim this operand shares */
  int kdim = is_a ? lo + 1 : lo; /* and where K is in the operand */
  for (int j = 0; j < C->nreg; j++) {
    int m = share_bit(C, C->reg[j], keep, osh);
    if (m >= 0)
      lb_reg(&b, m);
  }
  for (int k = 0; k < CG_LANE_BITS; k++)
    b.L.lane[k] = (signed char)share_bit(C, C->lane[k], keep, osh);
  for (int k = 0; k < C->nwarp; k++)
    b.L.warp[k] = (signed char)share_bit(C, C->warp[k], keep, osh);
  if (b.L.nreg + p->lk > CG_MAX_REGS_LOG2)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "dot of [%d, %d] x [%d, %d] is too large for the FMA path with "
                   "num_warps=%d; use smaller tiles",
                   p->M, p->K, p->K, p->N, g->num_warps);
  for (int k = 0; k < p->lk; k++)
    lb_reg(&b, teeny__cg_flatbit(p->rank, osh, kdim, k));
  return teeny__cg_intern(g, &b.L);
}

static const cg_layout *wg_c_layout(cg *g, const dot_plan *p, const wg_plan *w);

const cg_layout *teeny__cg_dot_layout(cg *g, const teeny_op *op) {
  dot_plan p = make_plan(g, op);
  if (p.kind == DOT_FMA)
    return teeny__cg_default(g, teeny__ir_type(g->f, op->res[0]));
  wg_plan w;
  if (wg_make(g, &p, &w))
    return wg_c_layout(g, &p, &w);
  return c_layout(g, &p);
}

/* ---- the FMA path ---------------------------------------------------------------------------- */

/* Register of L holding the element with these flat bits (register part). */
static long reg_of(const cg_layout *L, long flatbits) {
  long r = 0;
  for (int j = 0; j < L->nreg; j++)
    if (L->reg[j] >= 0 && (flatbits >> L->reg[j] & 1))
      r |= 1L << j;
  return r;
}

static LLVMValueRef tf32(cg *g, LLVMValueRef x, int part);

/* f32 operand registers v[0..n) reduced to TF32 part `part` (1: the
 * rounding, 2: the rounded rest), as f32 values; part 0: unchanged. */
static LLVMValueRef *tf32_regs(cg *g, LLVMValueRef *v, long n, int part) {
  if (!part)
    return v;
  LLVMValueRef *w = teeny__cg_alloc(g, sizeof *w * (size_t)n);
  for (long i = 0; i < n; i++)
    w[i] = LLVMBuildBitCast(g->b, tf32(g, v[i], part), g->t_f32, "");
  return w;
}

/* out += A.B by one fma per k, in k order (what the interpreter computes
 * for prec_ieee, and for the TF32 parts when the operands are rounded
 * first: their products are exact in f32). */
static void fma_pass(cg *g, const dot_plan *p, const cg_layout *C, const cg_layout *LA,
                     const cg_layout *LB, LLVMValueRef *A, LLVMValueRef *B, teeny_dtype adt,
                     teeny_dtype bdt, teeny_dtype cdt, LLVMValueRef *out) {
  bool f = teeny__dt_is_float(cdt);
  for (long r = 0; r < (1L << C->nreg); r++) {
    long s = teeny__cg_dup_src(C, r);
    if (s != r)
      continue;
    long bits = teeny__cg_reg_bits(C, r);
    /* row: batch and M bits; B's index has the batch above its K and N */
    long row = bits >> p->ln, col = bits & (p->N - 1);
    long bcol = (bits >> (p->lm + p->ln) << (p->lk + p->ln)) | col;
    LLVMValueRef v = out[r];
    for (int k = 0; k < p->K; k++) {
      LLVMValueRef x = teeny__cg_cast(g, A[reg_of(LA, (row << p->lk) | k)], adt, cdt);
      LLVMValueRef y = teeny__cg_cast(g, B[reg_of(LB, ((long)k << p->ln) | bcol)], bdt, cdt);
      if (f) {
        LLVMTypeRef t = LLVMTypeOf(v);
        LLVMValueRef args[3] = {x, y, v};
        v = teeny__cg_intrin(g, "llvm.fma", &t, 1, args, 3);
      } else {
        v = LLVMBuildAdd(g->b, v, LLVMBuildMul(g->b, x, y, ""), "");
      }
    }
    out[r] = v;
  }
}

/* The FMA path.  f32 operands follow the dot's precision as on the tensor
 * cores (docs/dsl.md §5): prec_tf32 rounds them to TF32 first, prec_tf32x3
 * sums the three TF32 part products (small terms first), prec_ieee uses
 * them as they are. */
static void emit_fma(cg *g, const teeny_op *op, const dot_plan *p) {
  const cg_layout *C = g->vi[op->res[0]].nat;
  const cg_layout *LA = fma_operand(g, C, p, true), *LB = fma_operand(g, C, p, false);
  teeny_dtype adt = teeny__ir_type(g->f, op->args[0]).dt;
  teeny_dtype bdt = teeny__ir_type(g->f, op->args[1]).dt; /* fp8: may differ */
  teeny_dtype cdt = teeny__ir_type(g->f, op->res[0]).dt;
  LLVMValueRef *A = teeny__cg_get(g, op->args[0], LA);
  LLVMValueRef *B = teeny__cg_get(g, op->args[1], LB);
  LLVMValueRef *acc = teeny__cg_get(g, op->args[2], C);
  LLVMValueRef *out = teeny__cg_regs_new(g, C);
  long nc = 1L << C->nreg, na = 1L << LA->nreg, nb = 1L << LB->nreg;
  memcpy(out, acc, sizeof *out * (size_t)nc);
  static const int x3[3][2] = {{2, 1}, {1, 2}, {1, 1}};
  int passes = 1;
  const int(*parts)[2] = NULL;
  if (adt == TEENY_DT_F32 && cdt == TEENY_DT_F32 && op->prec != TEENY_PREC_IEEE) {
    static const int one[1][2] = {{1, 1}};
    parts = op->prec == TEENY_PREC_TF32X3 ? x3 : one;
    passes = op->prec == TEENY_PREC_TF32X3 ? 3 : 1;
  }
  for (int k = 0; k < passes; k++)
    fma_pass(g, p, C, LA, LB, tf32_regs(g, A, na, parts ? parts[k][0] : 0),
             tf32_regs(g, B, nb, parts ? parts[k][1] : 0), adt, bdt, cdt, out);
  for (long r = 0; r < nc; r++)
    out[r] = out[teeny__cg_dup_src(C, r)];
  teeny__cg_set(g, op->res[0], C, out);
}

/* ---- the mma.sync path ------------------------------------------------------------------------ */

static LLVMValueRef pack2(cg *g, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(lo), 2));
  v = LLVMBuildInsertElement(g->b, v, lo, teeny__cg_i32(g, 0), "");
  v = LLVMBuildInsertElement(g->b, v, hi, teeny__cg_i32(g, 1), "");
  return LLVMBuildBitCast(g->b, v, g->t_i32, "");
}

static LLVMValueRef pack4(cg *g, LLVMValueRef *e) {
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(g->t_i8, 4));
  for (int i = 0; i < 4; i++)
    v = LLVMBuildInsertElement(g->b, v, e[i], teeny__cg_i32(g, i), "");
  return LLVMBuildBitCast(g->b, v, g->t_i32, "");
}

static LLVMValueRef tf32_rna(cg *g, LLVMValueRef x) {
  if (g->emu) /* round to 10 mantissa bits, ties away from zero */
    return LLVMBuildAnd(g->b,
                        LLVMBuildAdd(g->b, LLVMBuildBitCast(g->b, x, g->t_i32, ""),
                                     teeny__cg_i32(g, 0x1000), ""),
                        teeny__cg_i32(g, (int)0xFFFFE000u), "");
  return teeny__cg_asm(g, g->t_i32, "cvt.rna.tf32.f32 $0, $1;", "=r,f", &x, 1, false);
}

/* Part 1 of x: its TF32 rounding; part 2: x minus that (exact), rounded
 * (the interpreter's tf32_part). */
static LLVMValueRef tf32(cg *g, LLVMValueRef x, int part) {
  LLVMValueRef hi = tf32_rna(g, x);
  if (part != 2)
    return hi;
  LLVMValueRef rest = LLVMBuildFSub(g->b, x, LLVMBuildBitCast(g->b, hi, g->t_f32, ""), "");
  return tf32_rna(g, rest);
}

/* The A (or B) registers of one mma as b32 words. */
static int frag_words(cg *g, const dot_plan *p, LLVMValueRef *e, bool is_a,
                      LLVMValueRef *w) {
  int n = 1 << (is_a ? p->ea : p->eb);
  switch (p->kind) {
  case DOT_TF32:
    for (int i = 0; i < n; i++)
      w[i] = tf32(g, e[i], is_a ? p->part_a : p->part_b);
    return n;
  case DOT_I8:
  case DOT_F8:
    for (int i = 0; i < n / 4; i++)
      w[i] = pack4(g, e + 4 * i);
    return n / 4;
  default:
    for (int i = 0; i < n / 2; i++)
      w[i] = pack2(g, e[2 * i], e[2 * i + 1]);
    return n / 2;
  }
}

static const char *f8_name(teeny_dtype dt) { return dt == TEENY_DT_F8E5M2 ? "e5m2" : "e4m3"; }

/* The mma.sync instruction of p's kind, in buf. */
static const char *mma_name(const dot_plan *p, char *buf, size_t cap) {
  switch (p->kind) {
  case DOT_F16:
    return "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  case DOT_BF16:
    return "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  case DOT_TF32:
    return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  case DOT_F8:
    snprintf(buf, cap, "mma.sync.aligned.m16n8k32.row.col.f32.%s.%s.f32", f8_name(p->f8[0]),
             f8_name(p->f8[1]));
    return buf;
  default:
    return "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  }
}

/* The operand kind as the emulator's mma and wgmma take it: dot_kind, and for
 * DOT_F8 bit 4 (A) and bit 5 (B) set for f8e5m2 (clear: f8e4m3). */
static int emu_kind(const dot_plan *p) {
  if (p->kind != DOT_F8)
    return p->kind;
  return p->kind | (p->f8[0] == TEENY_DT_F8E5M2) << 4 | (p->f8[1] == TEENY_DT_F8E5M2) << 5;
}

/* d[0..3] = mma(a words, b words, c[0..3]) */
/* The emulator: teeny_emu_mma(emu, kind, a0..a3, b0, b1, c0..c3 bits, out) */
static void emu_mma(cg *g, const dot_plan *p, LLVMValueRef *a, LLVMValueRef *b,
                    LLVMValueRef *c, LLVMValueRef *d) {
  LLVMTypeRef ct = LLVMTypeOf(c[0]);
  LLVMTypeRef at = LLVMArrayType2(g->t_i32, 4);
  LLVMBuilderRef keep = g->b;
  g->b = g->pb;
  LLVMValueRef out = LLVMBuildAlloca(g->b, at, "");
  g->b = keep;
  LLVMValueRef args[12];
  args[0] = teeny__cg_i32(g, emu_kind(p));
  for (int i = 0; i < 4; i++)
    args[1 + i] = a[i];
  args[5] = b[0];
  args[6] = b[1];
  for (int i = 0; i < 4; i++)
    args[7 + i] = LLVMBuildBitCast(g->b, c[i], g->t_i32, "");
  args[11] = out;
  teeny__cg_emu_call(g, "teeny_emu_mma", g->t_void, args, 12);
  for (int i = 0; i < 4; i++) {
    LLVMValueRef idx[2] = {teeny__cg_i32(g, 0), teeny__cg_i32(g, i)};
    LLVMValueRef v = LLVMBuildLoad2(g->b, g->t_i32, LLVMBuildGEP2(g->b, at, out, idx, 2, ""), "");
    d[i] = LLVMBuildBitCast(g->b, v, ct, "");
  }
}

static void mma(cg *g, const dot_plan *p, LLVMValueRef *a, int na, LLVMValueRef *b,
                int nb, LLVMValueRef *c, LLVMValueRef *d) {
  if (g->emu) {
    emu_mma(g, p, a, b, c, d);
    return;
  }
  char text[256], cons[128], name[64];
  char cc = p->kind == DOT_I8 ? 'r' : 'f';
  int n = 0;
  n += snprintf(text + n, sizeof text - (size_t)n, "%s {$0, $1, $2, $3}, {",
                mma_name(p, name, sizeof name));
  for (int i = 0; i < na; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%s$%d", i ? ", " : "", 4 + i);
  n += snprintf(text + n, sizeof text - (size_t)n, "}, {");
  for (int i = 0; i < nb; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%s$%d", i ? ", " : "", 4 + na + i);
  snprintf(text + n, sizeof text - (size_t)n, "}, {$%d, $%d, $%d, $%d};", 4 + na + nb,
           5 + na + nb, 6 + na + nb, 7 + na + nb);
  int m = snprintf(cons, sizeof cons, "=%c,=%c,=%c,=%c", cc, cc, cc, cc);
  for (int i = 0; i < na + nb; i++)
    m += snprintf(cons + m, sizeof cons - (size_t)m, ",r");
  for (int i = 0; i < 4; i++)
    m += snprintf(cons + m, sizeof cons - (size_t)m, ",%d", i);
  LLVMValueRef args[4 + 4 + 4];
  int k = 0;
  for (int i = 0; i < na; i++)
    args[k++] = a[i];
  for (int i = 0; i < nb; i++)
    args[k++] = b[i];
  for (int i = 0; i < 4; i++)
    args[k++] = c[i];
  LLVMTypeRef ct = LLVMTypeOf(c[0]);
  LLVMTypeRef el[4] = {ct, ct, ct, ct};
  LLVMValueRef r = teeny__cg_asm(g, LLVMStructTypeInContext(g->ctx, el, 4, 0), text, cons,
                                 args, k, false);
  for (int i = 0; i < 4; i++)
    d[i] = LLVMBuildExtractValue(g->b, r, (unsigned)i, "");
}

/* ---- operands through shared memory ---------------------------------------------------- */

/* Operand tiles (cg_stile, codegen.h): rows of 16-byte chunks XORed
 * with the row's phase. */
cg_stile teeny__cg_stile(cg *g, int R, int C, teeny_dtype dt, bool take, int at, int align) {
  cg_stile t;
  t.rbase = NULL;
  t.R = R;
  t.C = C;
  t.es = teeny_dtype_size(dt);
  t.row_bytes = C * t.es;
  t.blk = t.row_bytes > 128 ? 128 : t.row_bytes;
  int cpr = t.blk / 16; /* chunks per block row */
  t.per_phase = cpr >= 8 ? 1 : cpr ? 8 / cpr : 1;
  t.max_phase = cpr >= 8 ? 8 : cpr ? cpr : 1;
  t.tr = false;
  t.base = take ? teeny__cg_smem_take(g, R * t.row_bytes, align) : at;
  return t;
}

cg_stile teeny__cg_stile_tr(cg *g, int R, int C, teeny_dtype dt, bool take, int at, int align) {
  cg_stile t = teeny__cg_stile(g, C, R, dt, take, at, align);
  t.tr = true;
  return t;
}

static LLVMValueRef i32c(cg *g, long v) { return teeny__cg_i32(g, v); }

/* Byte offset of (row, col) from the tile's start. */
static LLVMValueRef stile_off(cg *g, const cg_stile *t, LLVMValueRef row, LLVMValueRef col) {
  LLVMValueRef byte = LLVMBuildMul(g->b, col, i32c(g, t->es), "");
  LLVMValueRef blk = NULL;
  if (t->row_bytes > t->blk) { /* column block, and the byte within it */
    blk = LLVMBuildMul(g->b, LLVMBuildLShr(g->b, byte, i32c(g, teeny__cg_log2(t->blk)), ""),
                       i32c(g, (long)t->R * t->blk), "");
    byte = LLVMBuildAnd(g->b, byte, i32c(g, t->blk - 1), "");
  }
  if (t->max_phase > 1) {
    LLVMValueRef phase = LLVMBuildAnd(
        g->b, LLVMBuildLShr(g->b, row, i32c(g, teeny__cg_log2(t->per_phase)), ""),
        i32c(g, t->max_phase - 1), "");
    byte = LLVMBuildXor(g->b, byte, LLVMBuildShl(g->b, phase, i32c(g, 4), ""), "");
  }
  LLVMValueRef off = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, row, i32c(g, t->blk), ""), byte, "");
  return blk ? LLVMBuildAdd(g->b, off, blk, "") : off;
}

LLVMValueRef teeny__cg_stile_addr(cg *g, const cg_stile *t, LLVMValueRef row,
                                  LLVMValueRef col) {
  LLVMValueRef off = t->tr ? stile_off(g, t, col, row) : stile_off(g, t, row, col);
  if (t->rbase) {
    off = LLVMBuildAdd(g->b, off, t->rbase, "");
    return LLVMBuildGEP2(g->b, g->t_i8, g->db_smem, &off, 1, "");
  }
  return teeny__cg_smem_ptr(g, LLVMBuildAdd(g->b, off, i32c(g, t->base), ""));
}

/* Every holder writes its elements (16 bytes at a time where it can). */
static void stile_write(cg *g, const cg_stile *t, int id) {
  teeny_dtype dt = teeny__ir_type(g->f, id).dt;
  const cg_layout *S = teeny__cg_use_layout(g, id);
  LLVMValueRef *v = teeny__cg_get(g, id, S);
  int n = 1 << teeny__cg_run_bits(S, t->tr ? 0 : 1); /* along the stored rows */
  while (n * t->es > 16)
    n >>= 1;
  for (long r = 0; r < (1L << S->nreg); r += n) {
    if (!teeny__cg_reg_owner(S, r))
      continue;
    LLVMValueRef flat = teeny__cg_flat(g, S, r);
    teeny__cg_smem_store(g, teeny__cg_stile_addr(g, t, teeny__cg_coord(g, S, flat, 0),
                                       teeny__cg_coord(g, S, flat, 1)),
                         dt, v + r, n);
  }
}

/* The registers of layout X read back one element at a time. */
static LLVMValueRef *stile_gather(cg *g, const cg_stile *t, const cg_layout *X, teeny_dtype dt) {
  LLVMValueRef *out = teeny__cg_regs_new(g, X);
  for (long r = 0; r < (1L << X->nreg); r++) {
    long s = teeny__cg_dup_src(X, r);
    if (s != r) {
      out[r] = out[s];
      continue;
    }
    LLVMValueRef flat = teeny__cg_flat(g, X, r);
    teeny__cg_smem_load(g, teeny__cg_stile_addr(g, t, teeny__cg_coord(g, X, flat, 0),
                                      teeny__cg_coord(g, X, flat, 1)),
                        dt, &out[r], 1);
  }
  return out;
}

/* ldmatrix .x1/.x2/.x4 [.trans]: out[0..num) get the b32 fragments. */
static void ldmatrix(cg *g, LLVMValueRef addr, int num, bool trans, LLVMValueRef *out) {
  if (g->emu) {
    LLVMTypeRef at = LLVMArrayType2(g->t_i32, 4);
    LLVMBuilderRef keep = g->b;
    g->b = g->pb;
    LLVMValueRef buf = LLVMBuildAlloca(g->b, at, "");
    g->b = keep;
    LLVMValueRef args[4] = {addr, i32c(g, trans), i32c(g, num), buf};
    teeny__cg_emu_call(g, "teeny_emu_ldmatrix", g->t_void, args, 4);
    for (int i = 0; i < num; i++) {
      LLVMValueRef idx[2] = {i32c(g, 0), i32c(g, i)};
      out[i] = LLVMBuildLoad2(g->b, g->t_i32, LLVMBuildGEP2(g->b, at, buf, idx, 2, ""), "");
    }
    return;
  }
  char text[160], cons[64];
  int n = snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {", num,
                   trans ? ".trans" : "");
  for (int i = 0; i < num; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%s$%d", i ? ", " : "", i);
  snprintf(text + n, sizeof text - (size_t)n, "}, [$%d];", num);
  n = 0;
  for (int i = 0; i < num; i++)
    n += snprintf(cons + n, sizeof cons - (size_t)n, "=r,");
  snprintf(cons + n, sizeof cons - (size_t)n, "r,~{memory}"); /* 32-bit shared address */
  LLVMTypeRef el[4] = {g->t_i32, g->t_i32, g->t_i32, g->t_i32};
  LLVMTypeRef rt = num == 1 ? g->t_i32 : LLVMStructTypeInContext(g->ctx, el, (unsigned)num, 0);
  LLVMValueRef r = teeny__cg_asm(g, rt, text, cons, &addr, 1, false);
  for (int i = 0; i < num; i++)
    out[i] = num == 1 ? r : LLVMBuildExtractValue(g->b, r, (unsigned)i, "");
}

/* This warp's index along M ('m') or N ('n'). */
static LLVMValueRef warp_index(cg *g, const dot_plan *p, char which) {
  LLVMValueRef idx = i32c(g, 0);
  int n = 0;
  for (int k = 0; k < g->warp_bits; k++) {
    if (p->warp[k] != which)
      continue;
    LLVMValueRef bit = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, g->warp, i32c(g, k), ""),
                                    i32c(g, 1), "");
    idx = LLVMBuildOr(g->b, idx, LLVMBuildShl(g->b, bit, i32c(g, n++), ""), "");
  }
  return idx;
}

/* Fragment words of the whole dot: aw[(mi * KT + ki) * 4 + j], bw[(ni * KT + ki) * 2 + j]. */
typedef struct frags {
  LLVMValueRef *aw, *bw;
  int MT, NT, KT;      /* mma tiles per warp along M, N and K */
} frags;

static void frags_from_regs(cg *g, const dot_plan *p, frags *F, LLVMValueRef *A,
                            LLVMValueRef *B) {
  int nk = teeny__cg_log2(F->KT), nn = teeny__cg_log2(F->NT);
  for (long mi = 0; mi < F->MT && A; mi++)
    for (long ki = 0; ki < F->KT; ki++)
      frag_words(g, p, A + ((ki << p->ea) | (mi << (p->ea + nk))), true,
                 F->aw + (mi * F->KT + ki) * 4);
  for (long ni = 0; ni < F->NT && B; ni++)
    for (long ki = 0; ki < F->KT; ki++)
      frag_words(g, p, B + ((ki << p->eb) | (ni << (p->eb + nk))), false,
                 F->bw + (ni * F->KT + ki) * 2);
  (void)nn;
}

/* A fragments by ldmatrix.x4: matrix q of lane l's address: rows + (q&1)*8,
 * columns + (q>>1)*16 bytes. */
static void frags_a_ldmatrix(cg *g, const dot_plan *p, frags *F, const cg_stile *t, long ki) {
  LLVMValueRef lane = g->lane;
  LLVMValueRef lrow = LLVMBuildAnd(g->b, lane, i32c(g, 7), "");
  LLVMValueRef q = LLVMBuildLShr(g->b, lane, i32c(g, 3), "");
  LLVMValueRef rbase = LLVMBuildAdd(
      g->b, LLVMBuildShl(g->b, warp_index(g, p, 'm'), i32c(g, 4), ""),
      LLVMBuildAdd(g->b, LLVMBuildShl(g->b, LLVMBuildAnd(g->b, q, i32c(g, 1), ""), i32c(g, 3), ""),
                   lrow, ""), "");
  LLVMValueRef cbase = LLVMBuildMul(g->b, LLVMBuildLShr(g->b, q, i32c(g, 1), ""),
                                    i32c(g, 16 / t->es), "");
  for (long mi = 0; mi < F->MT; mi++) {
    LLVMValueRef row = LLVMBuildAdd(g->b, rbase, i32c(g, mi << (4 + p->nwm)), "");
    LLVMValueRef col = LLVMBuildAdd(g->b, cbase, i32c(g, ki * p->mk), "");
    LLVMValueRef *w = F->aw + (mi * F->KT + ki) * 4;
    ldmatrix(g, teeny__cg_stile_addr(g, t, row, col), 4, false, w);
    if (p->kind == DOT_TF32)
      for (int j = 0; j < 4; j++)
        w[j] = tf32(g, LLVMBuildBitCast(g->b, w[j], g->t_f32, ""), p->part_a);
  }
}

/* f16/bf16 B fragments by ldmatrix.trans from the [K, N] tile: matrix q:
 * k rows + (q&1)*8, n columns of tile ni + (q>>1). */
static void frags_b_ldmatrix(cg *g, const dot_plan *p, frags *F, const cg_stile *t, long ki) {
  LLVMValueRef lane = g->lane;
  LLVMValueRef lrow = LLVMBuildAnd(g->b, lane, i32c(g, 7), "");
  LLVMValueRef q = LLVMBuildLShr(g->b, lane, i32c(g, 3), "");
  LLVMValueRef kbase = LLVMBuildAdd(
      g->b, LLVMBuildShl(g->b, LLVMBuildAnd(g->b, q, i32c(g, 1), ""), i32c(g, 3), ""), lrow, "");
  int tile_step = 1 << (3 + p->nwn); /* columns between a warp's n tiles */
  LLVMValueRef nbase = LLVMBuildShl(g->b, warp_index(g, p, 'n'), i32c(g, 3), "");
  bool pairs = F->NT >= 2;
  if (pairs)
    nbase = LLVMBuildAdd(g->b, nbase,
                         LLVMBuildMul(g->b, LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, q, i32c(g, 1), ""),
                                                         i32c(g, 1), ""),
                                      i32c(g, tile_step), ""), "");
  for (long ni = 0; ni < F->NT; ni += pairs ? 2 : 1) {
    LLVMValueRef k = LLVMBuildAdd(g->b, kbase, i32c(g, ki * 16), "");
    LLVMValueRef n = LLVMBuildAdd(g->b, nbase, i32c(g, ni * tile_step), "");
    LLVMValueRef w[4];
    ldmatrix(g, teeny__cg_stile_addr(g, t, k, n), pairs ? 4 : 2, true, w);
    F->bw[(ni * F->KT + ki) * 2] = w[0];
    F->bw[(ni * F->KT + ki) * 2 + 1] = w[1];
    if (pairs) {
      F->bw[((ni + 1) * F->KT + ki) * 2] = w[2];
      F->bw[((ni + 1) * F->KT + ki) * 2 + 1] = w[3];
    }
  }
}

/* 8-bit B fragments (i8, fp8: per lane 4 consecutive k of column l / 4)
 * by ldmatrix without .trans from a K-major tile (teeny__cg_stile_tr, rows
 * of N holding K bytes): matrix q: n rows of tile ni + (q >> 1), k bytes
 * + (q & 1) * 16, its b16 pairs being the fragment's 4-byte words. */
static void frags_b8_ldmatrix(cg *g, const dot_plan *p, frags *F, const cg_stile *t, long ki) {
  LLVMValueRef lane = g->lane;
  LLVMValueRef lrow = LLVMBuildAnd(g->b, lane, i32c(g, 7), "");
  LLVMValueRef q = LLVMBuildLShr(g->b, lane, i32c(g, 3), "");
  LLVMValueRef kbase = LLVMBuildShl(g->b, LLVMBuildAnd(g->b, q, i32c(g, 1), ""), i32c(g, 4), "");
  int tile_step = 1 << (3 + p->nwn);
  LLVMValueRef nbase = LLVMBuildAdd(
      g->b, LLVMBuildShl(g->b, warp_index(g, p, 'n'), i32c(g, 3), ""), lrow, "");
  bool pairs = F->NT >= 2;
  if (pairs)
    nbase = LLVMBuildAdd(g->b, nbase,
                         LLVMBuildMul(g->b, LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, q, i32c(g, 1), ""),
                                                         i32c(g, 1), ""),
                                      i32c(g, tile_step), ""), "");
  for (long ni = 0; ni < F->NT; ni += pairs ? 2 : 1) {
    LLVMValueRef k = LLVMBuildAdd(g->b, kbase, i32c(g, ki * p->mk), "");
    LLVMValueRef n = LLVMBuildAdd(g->b, nbase, i32c(g, ni * tile_step), "");
    LLVMValueRef w[4];
    ldmatrix(g, teeny__cg_stile_addr(g, t, k, n), pairs ? 4 : 2, false, w);
    for (int j = 0; j < (pairs ? 4 : 2); j++)
      F->bw[((ni + j / 2) * F->KT + ki) * 2 + j % 2] = w[j];
  }
}

/* Dots at the top level of a for body stage through their own pair of
 * buffers, alternating per iteration: the barrier after one iteration's
 * stores already separates the previous iteration's reads of the other
 * half, so the leading barrier of an exchange is not needed. */
static bool in_db_body(cg *g, const teeny_op *op) {
  if (!g->db_body)
    return false;
  for (int i = 0; i < g->db_body->nops; i++)
    if (g->db_body->ops[i] == op)
      return true;
  return false;
}

/* Move the tiles (laid out from offset 0 by stile_make) into a new double
 * buffer of the dot, at this iteration's half. */
static void double_buffer(cg *g, cg_stile *ta, cg_stile *tb, int align) {
  int lo = ta ? ta->base : tb->base;
  int hi = tb ? tb->base + tb->R * tb->row_bytes : ta->base + ta->R * ta->row_bytes;
  int half = (hi - lo + align - 1) & ~(align - 1);
  int start = teeny__cg_db_take(g, 2 * half, align);
  LLVMValueRef base = LLVMBuildAdd(g->b, i32c(g, start - lo),
                                   LLVMBuildMul(g->b, g->db_phase, i32c(g, half), ""), "");
  if (ta)
    ta->rbase = LLVMBuildAdd(g->b, base, i32c(g, ta->base), "");
  if (tb)
    tb->rbase = LLVMBuildAdd(g->b, base, i32c(g, tb->base), "");
}

/* How the operands reach the fragments. */
typedef struct operands {
  bool ldm_a, ldm_b;   /* per k step by ldmatrix from ta / tb */
  cg_stile ta, tb;
} operands;

/* Operands not already in the fragment layouts are staged together in one
 * shared-memory exchange; those that cannot use ldmatrix (tf32 and i8 B)
 * are gathered from it at once, the others read per k step by the caller. */
static void stage_operands(cg *g, const teeny_op *op, const dot_plan *p, frags *F,
                           operands *O) {
  const cg_layout *LA = a_layout(g, p), *LB = b_layout(g, p);
  int a = p->opnd[0], b = p->opnd[1];
  teeny_dtype dt = teeny__ir_type(g->f, a).dt, dtb = teeny__ir_type(g->f, b).dt;
  const cg_stile *sa = g->vi[a].astage, *sb = g->vi[b].astage; /* cp.async'd */
  bool stage_a = sa || teeny__cg_use_layout(g, a) != LA;
  bool stage_b = sb || teeny__cg_use_layout(g, b) != LB;
  bool write_a = stage_a && !sa, write_b = stage_b && !sb;
  memset(O, 0, sizeof *O);
  if (sa)
    O->ta = *sa;
  if (sb)
    O->tb = *sb;
  if (write_a || write_b) {
    /* get() may itself need shared memory: make the sources first */
    if (write_a)
      teeny__cg_get(g, a, teeny__cg_use_layout(g, a));
    if (write_b)
      teeny__cg_get(g, b, teeny__cg_use_layout(g, b));
    bool dbuf = in_db_body(g, op);
    if (!dbuf)
      teeny__cg_smem_begin(g);
    int es = teeny_dtype_size(dt), bo = write_a ? p->M * p->K * es : 0;
    if (write_a)
      O->ta = teeny__cg_stile(g, p->M, p->K, dt, !dbuf, 0, 16);
    if (write_b && teeny__cg_dot_b_kmajor(g, op, teeny__cg_use_layout(g, b)))
      O->tb = teeny__cg_stile_tr(g, p->K, p->N, dtb, !dbuf, (bo + 15) & ~15, 16);
    else if (write_b)
      O->tb = teeny__cg_stile(g, p->K, p->N, dtb, !dbuf, (bo + 15) & ~15, 16);
    if (dbuf) /* this iteration's half of the dot's own double buffer */
      double_buffer(g, write_a ? &O->ta : NULL, write_b ? &O->tb : NULL, 16);
    if (write_a)
      stile_write(g, &O->ta, a);
    if (write_b)
      stile_write(g, &O->tb, b);
    teeny__cg_barrier(g);
  }
  O->ldm_a = stage_a;
  O->ldm_b = stage_b && (p->kind == DOT_F16 || p->kind == DOT_BF16 ||
                         ((p->kind == DOT_I8 || p->kind == DOT_F8) && O->tb.tr));
  if (!stage_a)
    frags_from_regs(g, p, F, teeny__cg_get(g, a, LA), NULL);
  if (!O->ldm_b)
    frags_from_regs(g, p, F, NULL,
                    stage_b ? stile_gather(g, &O->tb, LB, dtb) : teeny__cg_get(g, b, LB));
}

/* One pass of the mma path over every k step, accumulating into out. */
static void mma_pass(cg *g, const teeny_op *op, const dot_plan *p, LLVMValueRef *out) {
  frags F;
  F.KT = 1 << (p->lk - teeny__cg_log2(p->mk));
  F.MT = 1 << (p->lm - 4 - p->nwm);
  F.NT = 1 << (p->ln - 3 - p->nwn);
  F.aw = teeny__cg_alloc(g, sizeof *F.aw * (size_t)(F.MT * F.KT * 4));
  F.bw = teeny__cg_alloc(g, sizeof *F.bw * (size_t)(F.NT * F.KT * 2));
  operands O;
  stage_operands(g, op, p, &F, &O);
  int nn = p->ln - 3 - p->nwn;
  /* one k step at a time: only that step's fragments are live */
  for (long ki = 0; ki < F.KT; ki++) {
    if (O.ldm_a)
      frags_a_ldmatrix(g, p, &F, &O.ta, ki);
    if (O.ldm_b && O.tb.tr)
      frags_b8_ldmatrix(g, p, &F, &O.tb, ki);
    else if (O.ldm_b)
      frags_b_ldmatrix(g, p, &F, &O.tb, ki);
    for (long mi = 0; mi < F.MT; mi++)
      for (long ni = 0; ni < F.NT; ni++) {
        long cbase = (ni << 2) | (mi << (2 + nn));
        mma(g, p, F.aw + (mi * F.KT + ki) * 4, 4, F.bw + (ni * F.KT + ki) * 2, 2,
            out + cbase, out + cbase);
      }
  }
}

/* prec_tf32x3 (f32 operands): three passes, the small terms first, as the
 * interpreter sums them: a_lo.b_hi, a_hi.b_lo, a_hi.b_hi. */
static void emit_mma(cg *g, const teeny_op *op, dot_plan *p) {
  const cg_layout *C = c_layout(g, p);
  LLVMValueRef *acc = teeny__cg_get(g, op->args[2], C);
  LLVMValueRef *out = teeny__cg_regs_new(g, C);
  memcpy(out, acc, sizeof *out * ((size_t)1 << C->nreg));
  if (p->kind == DOT_TF32 && op->prec == TEENY_PREC_TF32X3) {
    static const int parts[3][2] = {{2, 1}, {1, 2}, {1, 1}};
    for (int k = 0; k < 3; k++) {
      p->part_a = parts[k][0];
      p->part_b = parts[k][1];
      mma_pass(g, op, p, out);
    }
  } else {
    mma_pass(g, op, p, out);
  }
  teeny__cg_set(g, op->res[0], C, out);
}

/* ---- wgmma (sm_90a) ------------------------------------------------------------------------ */

/* Hopper's warpgroup MMA: each warpgroup (4 consecutive warps) issues
 * wgmma.mma_async m64nNk16 with both operands in shared memory, read
 * through 64-bit matrix descriptors (start address, leading and stride
 * byte offsets, swizzle mode) from the operand tiles (cg_stile, whose
 * layout is the PTX ISA's canonical swizzled one: A [M, K] K-major, B
 * [K, N] N-major, i.e. "transposed" B).  Warpgroups split M (64 rows each)
 * first, then N; a warpgroup repeats the instruction MR times along M and
 * NR times along N (N of one instruction at most 256).
 *
 * The accumulator is the instruction's D fragment: warp w of the group
 * holds rows 16w .. 16w+15, lane l rows l/4 and l/4 + 8 and columns
 * 8j + 2(l%4) + {0, 1}, register 4j + 2h + e (h: the +8 row, e: the +1
 * column), which is the mma.sync C fragment repeated across N.
 *
 * Synchronous use: wgmma.fence, every k step's instructions, commit, wait
 * for all of them; the accumulator registers pass through the fence and
 * the wait (tied operands), so LLVM cannot move other accesses to them
 * across either.  Shared memory written by ordinary stores (or cp.async)
 * is published to the tensor cores' async proxy by fence.proxy.async in
 * every writing thread before the barrier.  The emulator runs the same
 * descriptors through a reference (emu.c).
 *
 * In a cp.async-pipelined k loop (ctrl.c) the wait moves: after the
 * next stage's copies (g->wg_defer), and where the accumulator only feeds
 * the next iteration's dot, to `wait_group 1` there and `wait_group 0`
 * after the loop, so one group is always queued on the tensor cores. */

static bool wg_make(cg *g, const dot_plan *p, wg_plan *w) {
  memset(w, 0, sizeof *w);
  if (!g->sm_a || (p->kind != DOT_F16 && p->kind != DOT_BF16 && p->kind != DOT_F8) ||
      g->num_warps < 4 || p->M < 64)
    return false;
  int es = p->kind == DOT_F8 ? 1 : 2;
  int nwg = g->num_warps / 4;
  w->wgm = nwg < p->M / 64 ? nwg : p->M / 64;
  w->wgn = nwg / w->wgm;
  int nper = p->N / w->wgn; /* columns of one warpgroup */
  /* Only the 128-byte swizzle, and warpgroup slices that start on a
   * 128-byte column block: the descriptors of that mode are checked bit
   * for bit against Triton's (which runs on this hardware); the 64- and
   * 32-byte modes (K or N under 64) are encoded too, and pass the
   * emulator, but nothing has run them on a GPU yet.  Smaller tiles keep
   * mma.sync. */
  if (p->K * es < 128 || nper * es < 128)
    return false;
  w->lwm = teeny__cg_log2(w->wgm);
  w->lwn = teeny__cg_log2(w->wgn);
  w->NI = nper > 256 ? 256 : nper;
  w->NR = nper / w->NI;
  w->MR = p->M / (64 * w->wgm);
  return true;
}

/* The accumulator layout: lanes (c1 c2 r0 r1 r2), warps (r4 r5, then the
 * warpgroup bits: rows 6.. for wgm, the top column bits for wgn),
 * registers (c0 r3 c3 .. of one instruction, then M repeats, then N
 * repeats). */
static const cg_layout *wg_c_layout(cg *g, const dot_plan *p, const wg_plan *w) {
  lbuild b;
  lb_init(g, &b, p->M, p->N);
  int ln = p->ln, lni = teeny__cg_log2(w->NI);
  int lane[5] = {1, 2, rowbit(ln, 0), rowbit(ln, 1), rowbit(ln, 2)};
  for (int k = 0; k < 5; k++)
    b.L.lane[k] = (signed char)lane[k];
  b.L.warp[0] = (signed char)rowbit(ln, 4);
  b.L.warp[1] = (signed char)rowbit(ln, 5);
  for (int k = 0; k < w->lwm && 2 + k < CG_LANE_BITS; k++)
    b.L.warp[2 + k] = (signed char)rowbit(ln, 6 + k);
  for (int k = 0; k < w->lwn && 2 + w->lwm + k < CG_LANE_BITS; k++)
    b.L.warp[2 + w->lwm + k] = (signed char)(ln - w->lwn + k);
  lb_reg(&b, 0);
  lb_reg(&b, rowbit(ln, 3));
  for (int c = 3; c < lni; c++)
    lb_reg(&b, c);
  for (int r = 6 + w->lwm; r < p->lm; r++)
    lb_reg(&b, rowbit(ln, r));
  for (int c = lni; c < ln - w->lwn; c++)
    lb_reg(&b, c);
  return teeny__cg_intern(g, &b.L);
}

/* The A operand from registers (PTX ISA: wgmma's A fragment, which is
 * the D fragment's pattern over [M, K]): lanes (k1 k2 r0 r1 r2), warps
 * (r4 r5, then the warpgroup bits along M; warpgroups along N hold the
 * same rows), registers (k0 r3 k3, the k steps k4 .., then the M
 * repeats).  A dot's result with the same row split is already in it
 * (attention's P = exp2(Q K^T - m), cast to f16, feeding P V). */
static const cg_layout *wg_a_layout(cg *g, const dot_plan *p, const wg_plan *w) {
  lbuild b;
  lb_init(g, &b, p->M, p->K);
  int lk = p->lk;
  int lane[5] = {1, 2, rowbit(lk, 0), rowbit(lk, 1), rowbit(lk, 2)};
  for (int k = 0; k < 5; k++)
    b.L.lane[k] = (signed char)lane[k];
  b.L.warp[0] = (signed char)rowbit(lk, 4);
  b.L.warp[1] = (signed char)rowbit(lk, 5);
  for (int k = 0; k < w->lwm && 2 + k < CG_LANE_BITS; k++)
    b.L.warp[2 + k] = (signed char)rowbit(lk, 6 + k);
  lb_reg(&b, 0);
  lb_reg(&b, rowbit(lk, 3));
  for (int k = 3; k < lk; k++)
    lb_reg(&b, k);
  for (int r = 6 + w->lwm; r < p->lm; r++)
    lb_reg(&b, rowbit(lk, r));
  return teeny__cg_intern(g, &b.L);
}

/* Does this wgmma dot read A from registers?  When A is not staged in
 * shared memory already and its registers are in wg_a_layout: no shared
 * memory, no store, fence or barrier for it. */
static bool wg_a_regs(cg *g, const teeny_op *op, const dot_plan *p, const wg_plan *w) {
  int a = op->args[0];
  return p->kind != DOT_F8 && !g->vi[a].astage &&
         teeny__cg_use_layout(g, a) == wg_a_layout(g, p, w);
}

bool teeny__cg_wg_a_regs(cg *g, const teeny_op *op) {
  dot_plan p = make_plan(g, op);
  wg_plan w;
  return p.kind != DOT_FMA && wg_make(g, &p, &w) && wg_a_regs(g, op, &p, &w);
}

/* Both operands as wgmma tiles: cp.async'd stage tiles as they are, the
 * others written to 1024-byte aligned tiles of the exchange (or the dot's
 * double) buffer, published to the async proxy, then one barrier; with ra
 * (A from registers), B alone. */
static void wg_stage(cg *g, const teeny_op *op, const dot_plan *p, bool ra, cg_stile *ta,
                     cg_stile *tb) {
  int a = p->opnd[0], b = p->opnd[1];
  teeny_dtype dt = teeny__ir_type(g->f, a).dt;
  const cg_stile *sa = g->vi[a].astage, *sb = g->vi[b].astage;
  if (ra) /* A from registers: nothing to stage (ta unused) */
    sa = ta;
  if (sa)
    *ta = *sa;
  if (sb)
    *tb = *sb;
  if (sa && sb)
    return;
  if (g->smem_align < CG_WG_ALIGN)
    g->smem_align = CG_WG_ALIGN;
  if (!sa) /* get() may itself need shared memory: make the sources first */
    teeny__cg_get(g, a, teeny__cg_use_layout(g, a));
  if (!sb)
    teeny__cg_get(g, b, teeny__cg_use_layout(g, b));
  bool dbuf = in_db_body(g, op);
  if (!dbuf)
    teeny__cg_smem_begin(g);
  int es = teeny_dtype_size(dt);
  int bo = sa ? 0 : (p->M * p->K * es + CG_WG_ALIGN - 1) & ~(CG_WG_ALIGN - 1);
  if (!sa)
    *ta = teeny__cg_stile(g, p->M, p->K, dt, !dbuf, 0, CG_WG_ALIGN);
  if (!sb)
    *tb = p->kind == DOT_F8 || teeny__cg_dot_b_kmajor(g, op, teeny__cg_use_layout(g, b))
              ? teeny__cg_stile_tr(g, p->K, p->N, dt, !dbuf, bo, CG_WG_ALIGN)
              : teeny__cg_stile(g, p->K, p->N, dt, !dbuf, bo, CG_WG_ALIGN);
  if (dbuf)
    double_buffer(g, sa ? NULL : ta, sb ? NULL : tb, CG_WG_ALIGN);
  if (!sa)
    stile_write(g, ta, a);
  if (!sb)
    stile_write(g, tb, b);
  teeny__cg_fence_proxy_async(g);
  teeny__cg_barrier(g);
}

/* The shared address of a tile byte offset (i32; the emulator's: from the
 * start of its shared buffer). */
static LLVMValueRef wg_addr(cg *g, const cg_stile *t, LLVMValueRef off) {
  LLVMValueRef p;
  if (t->rbase) {
    off = LLVMBuildAdd(g->b, off, t->rbase, "");
    p = LLVMBuildGEP2(g->b, g->t_i8, g->db_smem, &off, 1, "");
  } else {
    p = teeny__cg_smem_ptr(g, LLVMBuildAdd(g->b, off, i32c(g, t->base), ""));
  }
  if (!g->emu)
    return LLVMBuildPtrToInt(g->b, p, g->t_i32, "");
  LLVMValueRef d = LLVMBuildSub(g->b, LLVMBuildPtrToInt(g->b, p, g->t_i64, ""),
                                LLVMBuildPtrToInt(g->b, g->smem, g->t_i64, ""), "");
  return LLVMBuildTrunc(g->b, d, g->t_i32, "");
}

/* Offset of column c's 16-byte chunk in row `row` of a tile, ignoring the
 * swizzle (which the hardware applies to the address): block and byte. */
static LLVMValueRef wg_off(cg *g, const cg_stile *t, LLVMValueRef row, LLVMValueRef col) {
  LLVMValueRef byte = LLVMBuildMul(g->b, col, i32c(g, t->es), "");
  LLVMValueRef blk = LLVMBuildMul(g->b, LLVMBuildLShr(g->b, byte, i32c(g, teeny__cg_log2(t->blk)), ""),
                                  i32c(g, (long)t->R * t->blk), "");
  byte = LLVMBuildAnd(g->b, byte, i32c(g, t->blk - 1), "");
  return LLVMBuildAdd(g->b, LLVMBuildAdd(g->b, blk, byte, ""),
                      LLVMBuildMul(g->b, row, i32c(g, t->blk), ""), "");
}

/* A descriptor: start address >> 4 in bits 0-13, leading and stride byte
 * offsets >> 4 in bits 16-29 and 32-45, the swizzle mode in bits 62-63
 * (1: 128-byte, 2: 64-byte, 3: 32-byte rows). */
static LLVMValueRef wg_desc(cg *g, LLVMValueRef addr, int lbo, int sbo, int blk) {
  unsigned long long swz = blk == 128 ? 1 : blk == 64 ? 2 : 3;
  unsigned long long hi = ((unsigned long long)(lbo >> 4) & 0x3FFF) << 16 |
                          ((unsigned long long)(sbo >> 4) & 0x3FFF) << 32 | swz << 62;
  LLVMValueRef lo = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, addr, i32c(g, 4), ""),
                                 i32c(g, 0x3FFF), "");
  return LLVMBuildOr(g->b, LLVMBuildZExt(g->b, lo, g->t_i64, ""),
                     LLVMConstInt(g->t_i64, hi, 0), "");
}

/* Pass the registers (f32 accumulators, b32 A words) through an (empty
 * or given) asm with side effects, tied, so that no other access to them
 * moves across it. */
static void wg_pass(cg *g, const char *text, LLVMValueRef *v, int n) {
  if (g->emu || !n)
    return;
  char *cons = teeny__cg_alloc(g, (size_t)n * 10 + 16);
  size_t k = 0;
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(cons + k, 10, "%s=%c", i ? "," : "",
                          LLVMTypeOf(v[i]) == g->t_f32 ? 'f' : 'r');
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(cons + k, 10, ",%d", i);
  LLVMTypeRef *el = teeny__cg_alloc(g, sizeof *el * (size_t)n);
  for (int i = 0; i < n; i++)
    el[i] = LLVMTypeOf(v[i]);
  LLVMValueRef r = teeny__cg_asm(g, LLVMStructTypeInContext(g->ctx, el, (unsigned)n, 0), text,
                                 cons, v, n, true);
  for (int i = 0; i < n; i++)
    v[i] = LLVMBuildExtractValue(g->b, r, (unsigned)i, "");
}

/* Is v a constant zero tile (a splat of 0)? */
static bool is_zero_const(cg *g, int v) {
  const teeny_op *d = g->f->values[v].def;
  if (d && d->code == IR_SPLAT)
    d = g->f->values[d->args[0]].def;
  if (!d || d->code != IR_CONST)
    return false;
  teeny_dtype dt = teeny__ir_type(g->f, v).dt;
  return teeny__dt_is_float(dt) ? d->cval.f == 0 && !signbit(d->cval.f) : d->cval.i == 0;
}

/* An alloca in the function's entry block. */
static LLVMValueRef entry_alloca(cg *g, LLVMTypeRef t) {
  LLVMBuilderRef keep = g->b;
  g->b = g->pb;
  LLVMValueRef v = LLVMBuildAlloca(g->b, t, "");
  g->b = keep;
  return v;
}

/* The emulator's wgmma: fn(emu, kind, NI, a, descB, trans-b, scale-d, smem,
 * acc), the n accumulators d passed through memory and read back. */
static void emu_wgmma(cg *g, const char *fn, const dot_plan *p, int NI, LLVMValueRef a,
                      LLVMValueRef db, bool kmajor, bool scale_d, LLVMValueRef *d) {
  int n = NI / 2;
  LLVMTypeRef at = LLVMArrayType2(g->t_f32, (uint64_t)n);
  LLVMValueRef buf = entry_alloca(g, at);
  for (int i = 0; i < n; i++) {
    LLVMValueRef idx[2] = {i32c(g, 0), i32c(g, i)};
    LLVMBuildStore(g->b, d[i], LLVMBuildGEP2(g->b, at, buf, idx, 2, ""));
  }
  LLVMValueRef args[8] = {i32c(g, emu_kind(p)), i32c(g, NI), a, db, i32c(g, !kmajor),
                          i32c(g, scale_d), g->smem, buf};
  teeny__cg_emu_call(g, fn, g->t_void, args, 8);
  for (int i = 0; i < n; i++) {
    LLVMValueRef idx[2] = {i32c(g, 0), i32c(g, i)};
    d[i] = LLVMBuildLoad2(g->b, g->t_f32, LLVMBuildGEP2(g->b, at, buf, idx, 2, ""), "");
  }
}

/* The start of a wgmma's asm text: its scale-d predicate from operand
 * $pred, the instruction, and its n accumulators $0 .. $n-1 in braces. */
static size_t wg_text_head(char *text, size_t cap, const dot_plan *p, int NI, int pred) {
  const char *ta = p->kind == DOT_F16 ? "f16" : "bf16", *tb = ta;
  if (p->kind == DOT_F8) {
    ta = f8_name(p->f8[0]);
    tb = f8_name(p->f8[1]);
  }
  size_t k = (size_t)snprintf(text, cap, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n"
                              "wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {",
                              pred, NI, p->mk, ta, tb);
  for (int i = 0; i < NI / 2; i++)
    k += (size_t)snprintf(text + k, cap - k, "%s$%d", i ? ", " : "", i);
  return k;
}

/* Run asm text whose outputs are the n accumulators d, tied to their
 * inputs: operands $0 .. $n-1 (=f), then the nin inputs in[] (constraints
 * in_cons), then d again (tied); d gets the results. */
static void wg_asm_acc(cg *g, const char *text, const char *in_cons, LLVMValueRef *in, int nin,
                       int n, LLVMValueRef *d) {
  size_t cap = (size_t)n * 12 + 256, k = 0;
  char *cons = teeny__cg_alloc(g, cap);
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(cons + k, cap - k, "%s=f", i ? "," : "");
  k += (size_t)snprintf(cons + k, cap - k, ",%s", in_cons);
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(cons + k, cap - k, ",%d", i);
  LLVMValueRef *args = teeny__cg_alloc(g, sizeof *args * (size_t)(nin + n));
  for (int i = 0; i < nin; i++)
    args[i] = in[i];
  for (int i = 0; i < n; i++)
    args[nin + i] = d[i];
  LLVMTypeRef *el = teeny__cg_alloc(g, sizeof *el * (size_t)n);
  for (int i = 0; i < n; i++)
    el[i] = g->t_f32;
  LLVMValueRef r = teeny__cg_asm(g, LLVMStructTypeInContext(g->ctx, el, (unsigned)n, 0), text,
                                 cons, args, nin + n, true);
  for (int i = 0; i < n; i++)
    d[i] = LLVMBuildExtractValue(g->b, r, (unsigned)i, "");
}

/* d[0 .. NI/2) = wgmma(descA, descB) + d; B N-major (imm-trans-b 1) or,
 * when kmajor, K-major (0). */
static void wg_mma(cg *g, const dot_plan *p, int NI, LLVMValueRef da, LLVMValueRef db,
                   bool kmajor, bool scale_d, LLVMValueRef *d) {
  int n = NI / 2;
  if (g->emu) {
    emu_wgmma(g, "teeny_emu_wgmma", p, NI, da, db, kmajor, scale_d, d);
    return;
  }
  size_t cap = (size_t)n * 12 + 256;
  char *text = teeny__cg_alloc(g, cap);
  size_t k = wg_text_head(text, cap, p, NI, n + 2);
  if (p->kind == DOT_F8) /* K-major only: no transpose immediates */
    snprintf(text + k, cap - k, "}, $%d, $%d, p, 1, 1;\n}", n, n + 1);
  else
    snprintf(text + k, cap - k, "}, $%d, $%d, p, 1, 1, 0, %d;\n}", n, n + 1, !kmajor);
  /* scale-d: D = A B + D, or (0) D = A B */
  LLVMValueRef in[3] = {da, db, i32c(g, scale_d)};
  wg_asm_acc(g, text, "l,l,r", in, 3, n, d);
}

/* d[0 .. NI/2) = wgmma(A words a[0..3], descB) + d (A from registers). */
static void wg_mma_ra(cg *g, const dot_plan *p, int NI, LLVMValueRef *a, LLVMValueRef db,
                      bool kmajor, bool scale_d, LLVMValueRef *d) {
  int n = NI / 2;
  if (g->emu) { /* the four A words of each thread through memory too */
    LLVMTypeRef wt = LLVMArrayType2(g->t_i32, 4);
    LLVMValueRef wbuf = entry_alloca(g, wt);
    for (int i = 0; i < 4; i++) {
      LLVMValueRef idx[2] = {i32c(g, 0), i32c(g, i)};
      LLVMBuildStore(g->b, a[i], LLVMBuildGEP2(g->b, wt, wbuf, idx, 2, ""));
    }
    emu_wgmma(g, "teeny_emu_wgmma_ra", p, NI, wbuf, db, kmajor, scale_d, d);
    return;
  }
  size_t cap = (size_t)n * 12 + 256;
  char *text = teeny__cg_alloc(g, cap);
  size_t k = wg_text_head(text, cap, p, NI, n + 5);
  snprintf(text + k, cap - k, "}, {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d;\n}", n, n + 1, n + 2,
           n + 3, n + 4, !kmajor);
  LLVMValueRef in[6] = {a[0], a[1], a[2], a[3], db, i32c(g, scale_d)};
  wg_asm_acc(g, text, "r,r,r,r,l,r", in, 6, n, d);
}

/* The A words of a register-A wgmma dot: w[(mr * KS + kk) * 4 + i] packs
 * the two 16-bit elements of fragment register i of k step kk, M repeat
 * mr (wg_a_layout's registers: e | h << 1 | j << 2 | kk << 3 | mr << ..). */
static LLVMValueRef *wg_a_words(cg *g, const teeny_op *op, const dot_plan *p, const wg_plan *w) {
  LLVMValueRef *v = teeny__cg_get(g, op->args[0], wg_a_layout(g, p, w));
  int KS = p->K / 16;
  LLVMValueRef *words = teeny__cg_alloc(g, sizeof *words * (size_t)(w->MR * KS * 4));
  for (int mr = 0; mr < w->MR; mr++)
    for (int kk = 0; kk < KS; kk++)
      for (int i = 0; i < 4; i++) {
        long r = 2L * (i & 1) + 4L * (i >> 1) + 8L * kk + 8L * KS * mr;
        words[(mr * KS + kk) * 4 + i] = pack2(g, v[r], v[r + 1]);
      }
  return words;
}

static void emit_wgmma(cg *g, const teeny_op *op, const dot_plan *p, const wg_plan *w) {
  const cg_layout *C = wg_c_layout(g, p, w);
  LLVMValueRef *acc = teeny__cg_get(g, op->args[2], C);
  bool ra = wg_a_regs(g, op, p, w);
  int KS = p->K / p->mk, naw = ra ? w->MR * KS * 4 : 0;
  LLVMValueRef *aw = ra ? wg_a_words(g, op, p, w) : NULL;
  cg_stile ta, tb;
  memset(&ta, 0, sizeof ta); /* with ra, wg_stage leaves it unset */
  wg_stage(g, op, p, ra, &ta, &tb);
  if (p->kind == DOT_F8 && (!tb.tr || ta.tr)) /* the instruction reads both K-major */
    teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: an fp8 wgmma operand is staged N-major");
  long nacc = 1L << C->nreg;
  /* the accumulators and the A words pass the fence and the wait together */
  LLVMValueRef *out = teeny__cg_alloc(g, sizeof *out * (size_t)(nacc + naw + 1));
  memcpy(out, acc, sizeof *out * (size_t)nacc);
  /* dot(a, b) without an accumulator (a zero constant): the first k step
   * runs with scale-d = 0 (D = A B), so the registers need no zeros (32
   * movs per iteration in attention's Q K^T); the emulator is told
   * scale-d too and then does not read the (undefined) registers */
  bool zacc = is_zero_const(g, op->args[2]);
  for (long i = 0; i < nacc && zacc; i++)
    out[i] = LLVMGetUndef(g->t_f32);
  if (ra)
    memcpy(out + nacc, aw, sizeof *out * (size_t)naw);
  wg_pass(g, "wgmma.fence.sync.aligned;", out, (int)(nacc + naw));
  aw = out + nacc;
  /* this warpgroup's first row and column */
  LLVMValueRef wg = LLVMBuildLShr(g->b, g->warp, i32c(g, 2), "");
  LLVMValueRef wm = LLVMBuildAnd(g->b, wg, i32c(g, w->wgm - 1), "");
  LLVMValueRef wn = LLVMBuildLShr(g->b, wg, i32c(g, w->lwm), "");
  LLVMValueRef row0 = LLVMBuildShl(g->b, wm, i32c(g, 6), "");
  LLVMValueRef col0 = LLVMBuildMul(g->b, wn, i32c(g, p->N / w->wgn), "");
  int lmr = teeny__cg_log2(w->MR), lni = teeny__cg_log2(w->NI);
  /* The descriptors of the first k step, once; a later step's start
   * address is a constant number of bytes further (wg_off is linear: k
   * moves A along its columns, B along its rows), and since shared
   * addresses stay under 256 KiB the 14-bit address field never carries:
   * one 64-bit add per descriptor instead of the address math, shift,
   * mask, widening and or of wg_desc (Triton does the same). */
  LLVMValueRef *da0 = teeny__cg_alloc(g, sizeof *da0 * (size_t)(w->MR + 1));
  LLVMValueRef *db0 = teeny__cg_alloc(g, sizeof *db0 * (size_t)(w->NR + 1));
  for (int mr = 0; mr < w->MR && !ra; mr++) {
    LLVMValueRef arow = LLVMBuildAdd(g->b, row0, i32c(g, (long)mr * 64 * w->wgm), "");
    da0[mr] = wg_desc(g, wg_addr(g, &ta, wg_off(g, &ta, arow, i32c(g, 0))), 0, 8 * ta.blk, ta.blk);
  }
  for (int nr = 0; nr < w->NR; nr++) {
    LLVMValueRef bcol = LLVMBuildAdd(g->b, col0, i32c(g, (long)nr * w->NI), "");
    if (tb.tr) /* K-major: stored [N, K], read like A */
      db0[nr] = wg_desc(g, wg_addr(g, &tb, wg_off(g, &tb, bcol, i32c(g, 0))), 0, 8 * tb.blk,
                        tb.blk);
    else
      db0[nr] = wg_desc(g, wg_addr(g, &tb, wg_off(g, &tb, i32c(g, 0), bcol)), tb.R * tb.blk,
                        8 * tb.blk, tb.blk);
  }
  for (int kk = 0; kk < KS; kk++) {
    long abyte = (long)kk * p->mk * ta.es; /* A: k columns further (no tile: ra) */
    long adelta =
        ra ? 0 : (abyte >> teeny__cg_log2(ta.blk)) * ta.R * ta.blk + (abyte & (ta.blk - 1));
    long bbyte = (long)kk * p->mk * tb.es; /* K-major B: the same along its stored rows */
    long bdelta = tb.tr ? (bbyte >> teeny__cg_log2(tb.blk)) * tb.R * tb.blk + (bbyte & (tb.blk - 1))
                        : (long)kk * p->mk * tb.blk; /* N-major B: k rows further */
    for (int mr = 0; mr < w->MR; mr++) {
      LLVMValueRef da = ra ? NULL
                        : kk ? LLVMBuildAdd(g->b, da0[mr], LLVMConstInt(g->t_i64, (unsigned long long)(adelta >> 4), 0), "")
                             : da0[mr];
      for (int nr = 0; nr < w->NR; nr++) {
        LLVMValueRef db = kk ? LLVMBuildAdd(g->b, db0[nr], LLVMConstInt(g->t_i64, (unsigned long long)(bdelta >> 4), 0), "")
                             : db0[nr];
        long base = ((long)mr << (lni - 1)) | ((long)nr << (lni - 1 + lmr));
        bool scale_d = kk || !zacc; /* a zero accumulator is never read */
        if (ra)
          wg_mma_ra(g, p, w->NI, aw + (mr * KS + kk) * 4, db, tb.tr, scale_d, out + base);
        else
          wg_mma(g, p, w->NI, da, db, tb.tr, scale_d, out + base);
      }
    }
  }
  if (!g->emu)
    teeny__cg_asm(g, g->t_void, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0, true);
  if (op == g->wg_defer) { /* waited by teeny__cg_wgmma_finish */
    g->wg_pend = out;
    g->wg_pend_L = C;
    g->wg_pend_extra = naw;
    teeny__cg_set(g, op->res[0], C, out); /* only the loop's yield uses it */
    return;
  }
  /* the A words stay live until the wait: the tensor cores read them */
  wg_pass(g, "wgmma.wait_group.sync.aligned 0;", out, (int)(nacc + naw));
  teeny__cg_set(g, op->res[0], C, out);
}

/* ---- loop-invariant operands, staged once ------------------------------------------------ */

/* Is v made in region r: one of its arguments, or a result of one of its
 * ops (nested regions included)? */
static bool made_in(const teeny_region *r, int v) {
  for (int i = 0; i < r->nargs; i++)
    if (r->args[i] == v)
      return true;
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    for (int j = 0; j < op->nres; j++)
      if (op->res[j] == v)
        return true;
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k] && made_in(op->regions[k], v))
        return true;
  }
  return false;
}

/* Is every use of v in r (nested regions included) operand `pos` of a
 * wgmma dot at r's top level? */
static bool only_wg_operand(cg *g, const teeny_region *r, int v, int pos, bool top) {
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    for (int j = 0; j < op->nargs; j++)
      if (op->args[j] == v &&
          !(top && op->code == IR_DOT && j == pos && teeny__cg_dot_uses_wgmma(g, op) &&
            teeny__cg_dot_operand(g, op, pos) == v))
        return false;
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k] && !only_wg_operand(g, op->regions[k], v, pos, false))
        return false;
  }
  return true;
}

int teeny__cg_wg_hoist(cg *g, const teeny_region *body, int *ids, int max) {
  int n = 0;
  for (int i = 0; i < body->nops && n < max; i++) {
    const teeny_op *op = body->ops[i];
    if (op->code != IR_DOT || !teeny__cg_dot_uses_wgmma(g, op))
      continue;
    for (int pos = 0; pos < 2 && n < max; pos++) {
      int v = teeny__cg_dot_operand(g, op, pos);
      if (g->vi[v].astage || made_in(body, v) || !only_wg_operand(g, body, v, pos, true) ||
          (pos == 0 && teeny__cg_wg_a_regs(g, op)))
        continue;
      teeny_type t = teeny__ir_type(g->f, v);
      const cg_layout *L = teeny__cg_use_layout(g, v);
      teeny__cg_get(g, v, L);
      cg_stile *s = teeny__cg_alloc(g, sizeof *s);
      bool tr = pos == 1 && teeny__cg_dot_b_kmajor(g, op, L);
      *s = tr ? teeny__cg_stile_tr(g, t.shape[0], t.shape[1], t.dt, false, 0, CG_WG_ALIGN)
              : teeny__cg_stile(g, t.shape[0], t.shape[1], t.dt, false, 0, CG_WG_ALIGN);
      s->rbase = i32c(g, teeny__cg_db_take(g, s->R * s->row_bytes, CG_WG_ALIGN));
      stile_write(g, s, v);
      g->vi[v].astage = s;
      ids[n++] = v;
    }
  }
  if (n) {
    teeny__cg_fence_proxy_async(g);
    teeny__cg_barrier(g);
  }
  return n;
}

void teeny__cg_wgmma_finish(cg *g) {
  if (!g->wg_pend)
    return;
  long n = 1L << g->wg_pend_L->nreg;
  LLVMValueRef *v = teeny__cg_alloc(g, sizeof *v * (size_t)(n + g->wg_pend_extra + 1));
  memcpy(v, g->wg_pend, sizeof *v * (size_t)(n + g->wg_pend_extra)); /* + the A words */
  wg_pass(g, "wgmma.wait_group.sync.aligned 0;", v, (int)(n + g->wg_pend_extra));
  teeny__cg_set(g, g->wg_defer->res[0], g->wg_pend_L, v);
  g->wg_pend = NULL;
}

void teeny__cg_wgmma_wait_prev(cg *g) {
  if (!g->wg_pend)
    return;
  g->wg_pend = NULL; /* the result stays bound to the in-flight registers */
  if (!g->emu)
    teeny__cg_asm(g, g->t_void, "wgmma.wait_group.sync.aligned 1;", "~{memory}", NULL, 0, true);
}

void teeny__cg_wgmma_wait_all(cg *g, LLVMValueRef *v, long n) {
  wg_pass(g, "wgmma.wait_group.sync.aligned 0;", v, (int)n);
}

void teeny__cg_fence_proxy_async(cg *g) {
  if (!g->emu)
    teeny__cg_asm(g, g->t_void, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0, true);
}

bool teeny__cg_dot_uses_mma(cg *g, const teeny_op *op) {
  return make_plan(g, op).kind != DOT_FMA;
}

bool teeny__cg_dot_uses_wgmma(cg *g, const teeny_op *op) {
  dot_plan p = make_plan(g, op);
  wg_plan w;
  return p.kind != DOT_FMA && wg_make(g, &p, &w);
}

bool teeny__cg_dot_b_kmajor(cg *g, const teeny_op *dot, const cg_layout *L) {
  if (teeny__cg_run_bits(L, 0) <= teeny__cg_run_bits(L, 1))
    return false;
  dot_kind k = make_plan(g, dot).kind;
  return teeny__cg_dot_uses_wgmma(g, dot) || k == DOT_I8 || k == DOT_F8;
}

int teeny__cg_dot_operand(cg *g, const teeny_op *dot, int i) {
  return make_plan(g, dot).opnd[i];
}

void teeny__cg_emit_dot(cg *g, const teeny_op *op) {
  dot_plan p = make_plan(g, op);
  wg_plan w;
  if (p.kind == DOT_FMA)
    emit_fma(g, op, &p);
  else if (wg_make(g, &p, &w))
    emit_wgmma(g, op, &p, &w);
  else
    emit_mma(g, op, &p);
}
