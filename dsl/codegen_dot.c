/*
 * dsl/codegen_dot.c — dot(a[M,K], b[K,N], acc[M,N]).
 *
 * Tensor cores through mma.sync (sm_80 and later, all our targets):
 *   f16, bf16  m16n8k16, f32 accumulate
 *   f32        m16n8k8 on TF32 (operands rounded with cvt.rna.tf32.f32)
 *   i8         m16n8k32, i32 accumulate
 * The result, and the loop-carried accumulator, live in the mma C-fragment
 * layout; the operands are brought into the A/B fragment layouts (through
 * shared memory when they come from loads).  Warps split M and N so that
 * each warp's tile stays as square as possible.
 *
 * Everything else (f64, shapes too small for one mma, i8 with K < 32) uses
 * a plain FMA loop: each thread holds whole rows of A and columns of B for
 * the accumulator elements it owns.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/codegen_llvm.h"

typedef enum { DOT_FMA, DOT_F16, DOT_BF16, DOT_TF32, DOT_I8 } dot_kind;

typedef struct dot_plan {
  dot_kind kind;
  int M, N, K;
  int lm, ln, lk;       /* log2 of M, N, K */
  int mk;               /* K of one instruction */
  int ea, eb;           /* fragment element bits of A and B */
  char warp[CG_LANE_BITS]; /* per warp bit: 'm', 'n' or 0 (unused) */
  int nwm, nwn;         /* warp bits along M and N */
} dot_plan;

static dot_kind kind_of(cg *g, const teeny_op *op, int M, int N, int K) {
  teeny_dtype a = teeny__ir_type(g->f, op->args[0]).dt;
  teeny_dtype c = teeny__ir_type(g->f, op->args[2]).dt;
  if (M < 16 || N < 8)
    return DOT_FMA;
  if ((a == TEENY_DT_F16 || a == TEENY_DT_BF16) && c == TEENY_DT_F32 && K >= 16)
    return a == TEENY_DT_F16 ? DOT_F16 : DOT_BF16;
  if (a == TEENY_DT_F32 && c == TEENY_DT_F32 && K >= 8)
    return DOT_TF32;
  if (a == TEENY_DT_I8 && c == TEENY_DT_I32 && K >= 32)
    return DOT_I8;
  return DOT_FMA;
}

static dot_plan make_plan(cg *g, const teeny_op *op) {
  teeny_type at = teeny__ir_type(g->f, op->args[0]), bt = teeny__ir_type(g->f, op->args[1]);
  dot_plan p;
  memset(&p, 0, sizeof p);
  p.M = at.shape[0];
  p.K = at.shape[1];
  p.N = bt.shape[1];
  p.lm = teeny__cg_log2(p.M);
  p.ln = teeny__cg_log2(p.N);
  p.lk = teeny__cg_log2(p.K);
  p.kind = kind_of(g, op, p.M, p.N, p.K);
  switch (p.kind) {
  case DOT_F16:
  case DOT_BF16:
    p.mk = 16, p.ea = 3, p.eb = 2;
    break;
  case DOT_TF32:
    p.mk = 8, p.ea = 2, p.eb = 1;
    break;
  case DOT_I8:
    p.mk = 32, p.ea = 4, p.eb = 3;
    break;
  default:
    return p;
  }
  int tm = p.M, tn = p.N;
  for (int k = 0; k < g->warp_bits; k++) {
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

static void lb_init(cg *g, lbuild *b, int m, int n) {
  memset(&b->L, 0, sizeof b->L);
  b->L.rank = 2;
  b->L.shape[0] = m;
  b->L.shape[1] = n;
  b->L.nwarp = g->warp_bits;
  memset(b->L.lane, -1, sizeof b->L.lane);
  memset(b->L.warp, -1, sizeof b->L.warp);
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
  } else if (p->kind == DOT_I8) {
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
  } else if (p->kind == DOT_I8) {
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

/* FMA operands: bit of the accumulator layout C -> bit of the operand
 * (shape osh) when it is on the shared dim, else -1. */
static int share_bit(const cg_layout *C, int bit, int keep_dim, const int *osh,
                     int odim) {
  if (bit < 0)
    return -1;
  int d, k;
  teeny__cg_dimbit(2, C->shape, bit, &d, &k);
  return d == keep_dim ? teeny__cg_flatbit(2, osh, odim, k) : -1;
}

/* FMA: the accumulator's default layout; A and B hold, per thread, the
 * whole K extent of the rows (columns) of the accumulator it owns. */
static const cg_layout *fma_operand(cg *g, const cg_layout *C, const dot_plan *p,
                                    bool is_a) {
  lbuild b;
  if (is_a)
    lb_init(g, &b, p->M, p->K);
  else
    lb_init(g, &b, p->K, p->N);
  int keep = is_a ? 0 : 1; /* the accumulator dim this operand shares */
  int odim = is_a ? 0 : 1; /* ... and where it is in the operand */
  int osh[2] = {b.L.shape[0], b.L.shape[1]};
  for (int j = 0; j < C->nreg; j++) {
    int m = share_bit(C, C->reg[j], keep, osh, odim);
    if (m >= 0)
      lb_reg(&b, m);
  }
  for (int k = 0; k < CG_LANE_BITS; k++)
    b.L.lane[k] = (signed char)share_bit(C, C->lane[k], keep, osh, odim);
  for (int k = 0; k < C->nwarp; k++)
    b.L.warp[k] = (signed char)share_bit(C, C->warp[k], keep, osh, odim);
  if (b.L.nreg + p->lk > CG_MAX_REGS_LOG2)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "dot of [%d, %d] x [%d, %d] is too large for the FMA path with "
                   "num_warps=%d; use smaller tiles",
                   p->M, p->K, p->K, p->N, g->num_warps);
  for (int k = 0; k < p->lk; k++)
    lb_reg(&b, teeny__cg_flatbit(2, osh, 1 - odim, k));
  return teeny__cg_intern(g, &b.L);
}

const cg_layout *teeny__cg_dot_layout(cg *g, const teeny_op *op) {
  dot_plan p = make_plan(g, op);
  if (p.kind == DOT_FMA)
    return teeny__cg_default(g, teeny__ir_type(g->f, op->res[0]));
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

static void emit_fma(cg *g, const teeny_op *op, const dot_plan *p) {
  const cg_layout *C = g->vi[op->res[0]].nat;
  const cg_layout *LA = fma_operand(g, C, p, true), *LB = fma_operand(g, C, p, false);
  teeny_dtype adt = teeny__ir_type(g->f, op->args[0]).dt;
  teeny_dtype cdt = teeny__ir_type(g->f, op->res[0]).dt;
  LLVMValueRef *A = teeny__cg_get(g, op->args[0], LA);
  LLVMValueRef *B = teeny__cg_get(g, op->args[1], LB);
  LLVMValueRef *acc = teeny__cg_get(g, op->args[2], C);
  LLVMValueRef *out = teeny__cg_regs_new(g, C);
  bool f = teeny__dt_is_float(cdt);
  for (long r = 0; r < (1L << C->nreg); r++) {
    long s = teeny__cg_dup_src(C, r);
    if (s != r) {
      out[r] = out[s];
      continue;
    }
    long bits = teeny__cg_reg_bits(C, r);
    long row = bits >> p->ln, col = bits & (p->N - 1);
    LLVMValueRef v = acc[r];
    for (int k = 0; k < p->K; k++) {
      LLVMValueRef x = teeny__cg_cast(g, A[reg_of(LA, (row << p->lk) | k)], adt, cdt);
      LLVMValueRef y = teeny__cg_cast(g, B[reg_of(LB, ((long)k << p->ln) | col)], adt, cdt);
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

static LLVMValueRef tf32(cg *g, LLVMValueRef x) {
  if (g->emu) /* round to 10 mantissa bits, ties away from zero */
    return LLVMBuildAnd(g->b,
                        LLVMBuildAdd(g->b, LLVMBuildBitCast(g->b, x, g->t_i32, ""),
                                     teeny__cg_i32(g, 0x1000), ""),
                        teeny__cg_i32(g, (int)0xFFFFE000u), "");
  return teeny__cg_asm(g, g->t_i32, "cvt.rna.tf32.f32 $0, $1;", "=r,f", &x, 1, false);
}

/* The A (or B) registers of one mma as b32 words. */
static int frag_words(cg *g, const dot_plan *p, LLVMValueRef *e, bool is_a,
                      LLVMValueRef *w) {
  int n = 1 << (is_a ? p->ea : p->eb);
  switch (p->kind) {
  case DOT_TF32:
    for (int i = 0; i < n; i++)
      w[i] = tf32(g, e[i]);
    return n;
  case DOT_I8:
    for (int i = 0; i < n / 4; i++)
      w[i] = pack4(g, e + 4 * i);
    return n / 4;
  default:
    for (int i = 0; i < n / 2; i++)
      w[i] = pack2(g, e[2 * i], e[2 * i + 1]);
    return n / 2;
  }
}

static const char *mma_name(dot_kind k) {
  switch (k) {
  case DOT_F16:
    return "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  case DOT_BF16:
    return "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  case DOT_TF32:
    return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  default:
    return "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  }
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
  args[0] = teeny__cg_i32(g, p->kind);
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
  char text[256], cons[128];
  char cc = p->kind == DOT_I8 ? 'r' : 'f';
  int n = 0;
  n += snprintf(text + n, sizeof text - (size_t)n, "%s {$0, $1, $2, $3}, {", mma_name(p->kind));
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

static void emit_mma(cg *g, const teeny_op *op, const dot_plan *p) {
  const cg_layout *C = c_layout(g, p), *LA = a_layout(g, p), *LB = b_layout(g, p);
  LLVMValueRef *A = teeny__cg_get(g, op->args[0], LA);
  LLVMValueRef *B = teeny__cg_get(g, op->args[1], LB);
  LLVMValueRef *acc = teeny__cg_get(g, op->args[2], C);
  LLVMValueRef *out = teeny__cg_regs_new(g, C);
  memcpy(out, acc, sizeof *out * ((size_t)1 << C->nreg));
  int nk = p->lk - teeny__cg_log2(p->mk);
  int nm = p->lm - 4 - p->nwm, nn = p->ln - 3 - p->nwn;
  for (long ki = 0; ki < (1L << nk); ki++)
    for (long mi = 0; mi < (1L << nm); mi++) {
      LLVMValueRef aw[4];
      long abase = (ki << p->ea) | (mi << (p->ea + nk));
      int na = frag_words(g, p, A + abase, true, aw);
      for (long ni = 0; ni < (1L << nn); ni++) {
        LLVMValueRef bw[4];
        long bbase = (ki << p->eb) | (ni << (p->eb + nk));
        int nb = frag_words(g, p, B + bbase, false, bw);
        long cbase = (ni << 2) | (mi << (2 + nn));
        mma(g, p, aw, na, bw, nb, out + cbase, out + cbase);
      }
    }
  teeny__cg_set(g, op->res[0], C, out);
}

void teeny__cg_emit_dot(cg *g, const teeny_op *op) {
  dot_plan p = make_plan(g, op);
  if (p.kind == DOT_FMA)
    emit_fma(g, op, &p);
  else
    emit_mma(g, op, &p);
}
