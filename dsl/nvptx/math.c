/*
 * dsl/nvptx/math.c — the math builtins on scalar LLVM values.
 *
 * f32 (and f16/bf16, computed in f32 and rounded).  Accurate by default,
 * within the bounds docs/dsl.md §5 states and tests/gpu/math_accuracy.py
 * measures on the GPU against float64:
 *   exp     ex2.approx of x log2(e), corrected by the product's rounding
 *           error (one fma recovers it exactly): a few ulp over the range
 *   exp2    ex2.approx (a few ulp)
 *   log     x = m 2^e with m in [sqrt(1/2), sqrt(2)): e ln2 (two parts) +
 *   log2    log1p(m - 1) = 2 atanh(s), s = f / (2 + f), to the s^9 term
 *   sin     x - q pi/2 in three parts (Cody-Waite, by fma), Taylor
 *   cos     polynomials to x^9 / x^10 on [-pi/4, pi/4]; stated for
 *           |x| <= 105615, where the reduction is exact enough
 *   tanh    |x| < 0.55: x + x^3 P(x^2), Taylor to x^17; else
 *           1 - 2 / (exp(2|x|) + 1), with tanh's sign
 *   erf     its Maclaurin series and Abramowitz & Stegun 7.1.26
 *   sqrt    sqrt.rn (correctly rounded); rsqrt: rsqrt.approx
 * fast_* (op->fast) are the single PTX approximations, as Triton uses:
 * ex2.approx of x log2(e), lg2.approx, sin.approx, cos.approx,
 * tanh.approx.
 *
 * f64: sqrt, floor, ceil natively; exp, exp2 (Cody-Waite reduction by
 * ln 2 in two parts, a degree-13 Taylor polynomial, exponent scaling in two
 * steps so subnormal results are right) and log, log2 (x = m 2^e with m in
 * [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1)) to the s^25 term) to
 * about 1 ulp; rsqrt = 1/sqrt; sin and cos by a three-part Cody-Waite
 * reduction and Taylor polynomials; tanh and expm1/log1p through exp/log
 * with Kahan's and Goldberg's corrections; erf/erfc by their series and
 * continued fraction; pow as 2^(y log2 x) with C's special cases; atan by
 * two reductions (1/x, then pi/4 + atan((t-1)/(t+1))) and its Maclaurin
 * series; atan2 with C's special cases, asin and acos through it on
 * sqrt((1-x)(1+x)).  log1p, expm1, erfc, pow and the inverse trigonometric
 * functions on f32 run in f64 and round once.
 */
#include <math.h>

#include "dsl/nvptx/codegen.h"

static LLVMValueRef cf32(cg *g, double v) { return LLVMConstReal(g->t_f32, v); }

static LLVMValueRef call1(cg *g, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return teeny__cg_intrin(g, name, &t, 1, &x, 1);
}

static LLVMValueRef nvvm1(cg *g, const char *name, LLVMValueRef x) {
  return teeny__cg_intrin(g, name, NULL, 0, &x, 1);
}

static LLVMValueRef fmul_c(cg *g, LLVMValueRef a, double c) {
  return LLVMBuildFMul(g->b, a, cf32(g, c), "");
}

static LLVMValueRef fmaf_(cg *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  LLVMTypeRef t = g->t_f32;
  return teeny__cg_intrin(g, "llvm.fma", &t, 1, args, 3);
}

static LLVMValueRef exp2_approx(cg *g, LLVMValueRef x) {
  return nvvm1(g, "llvm.nvvm.ex2.approx.f", x);
}

/* erf on f32: |x| < 1: the Maclaurin series in x^2 to the x^21 term
 * (truncation < 2e-9 relative); |x| >= 1: Abramowitz & Stegun 7.1.26,
 * erf = 1 - t*P(t)*exp(-x^2), t = 1/(1 + 0.3275911|x|) (|error| <= 1.5e-7);
 * odd symmetry restores the sign. */
static LLVMValueRef erf_f32(cg *g, LLVMValueRef x) {
  LLVMValueRef ax = call1(g, "llvm.fabs", x);
  LLVMValueRef x2 = LLVMBuildFMul(g->b, x, x, "");
  /* series: sum_{n=0..10} (-1)^n x^(2n) / (n! (2n+1)), times 2/sqrt(pi) x */
  double c[11];
  double fact = 1;
  for (int n = 0; n <= 10; n++) {
    if (n)
      fact *= n;
    c[n] = (n & 1 ? -1.0 : 1.0) / (fact * (2 * n + 1));
  }
  LLVMValueRef p = cf32(g, c[10]);
  for (int n = 9; n >= 0; n--)
    p = fmaf_(g, p, x2, cf32(g, c[n]));
  LLVMValueRef small = LLVMBuildFMul(g->b, fmul_c(g, x, 1.1283791670955126), p, "");
  /* A&S 7.1.26 on |x| */
  LLVMValueRef den = fmaf_(g, ax, cf32(g, 0.3275911), cf32(g, 1.0));
  LLVMValueRef t = LLVMBuildFDiv(g->b, cf32(g, 1.0), den, "");
  static const double a[5] = {0.254829592, -0.284496736, 1.421413741,
                              -1.453152027, 1.061405429};
  LLVMValueRef q = cf32(g, a[4]);
  for (int i = 3; i >= 0; i--)
    q = fmaf_(g, q, t, cf32(g, a[i]));
  q = LLVMBuildFMul(g->b, q, t, "");
  LLVMValueRef e = exp2_approx(g, fmul_c(g, LLVMBuildFNeg(g->b, x2, ""), 1.4426950408889634));
  LLVMValueRef big = LLVMBuildFSub(g->b, cf32(g, 1.0), LLVMBuildFMul(g->b, q, e, ""), "");
  LLVMTypeRef ft = g->t_f32;
  LLVMValueRef sargs[2] = {big, x};
  big = teeny__cg_intrin(g, "llvm.copysign", &ft, 1, sargs, 2);
  LLVMValueRef is_small = LLVMBuildFCmp(g->b, LLVMRealOLT, ax, cf32(g, 1.0), "");
  return LLVMBuildSelect(g->b, is_small, small, big, "");
}

/* ---- accurate f32 ------------------------------------------------------------------- */

static LLVMValueRef selv(cg *g, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(g->b, c, a, b, "");
}

static LLVMValueRef fcmp32(cg *g, LLVMRealPredicate p, LLVMValueRef a, double b) {
  return LLVMBuildFCmp(g->b, p, a, cf32(g, b), "");
}

/* e^x = 2^(x log2 e): y = x * L rounds; fma(x, L, -y) is that rounding
 * error exactly, x * (log2 e - L) the constant's, and 2^(y + d) =
 * 2^y (1 + d ln 2) to far below an ulp since |d| < 2^-16. */
static LLVMValueRef exp_f32(cg *g, LLVMValueRef x) {
  const double L = 1.44269502162933349609375;       /* log2(e) in f32 */
  const double L_lo = 1.925963033500011e-08;          /* log2(e) - L */
  LLVMValueRef y = fmul_c(g, x, L);
  LLVMValueRef d = fmaf_(g, x, cf32(g, L), LLVMBuildFNeg(g->b, y, ""));
  d = fmaf_(g, x, cf32(g, L_lo), d);
  LLVMValueRef r = exp2_approx(g, y);
  LLVMValueRef c = fmaf_(g, r, fmul_c(g, d, 0.6931471805599453), r);
  /* at 0 and inf (x = -inf gives d = NaN) keep 2^y */
  LLVMValueRef normal = LLVMBuildAnd(g->b, fcmp32(g, LLVMRealOGT, r, 0),
                                     fcmp32(g, LLVMRealOLT, r, INFINITY), "");
  return selv(g, normal, c, r);
}

/* log2(x) (base2) or ln(x): x = m 2^e, m in [sqrt(1/2), sqrt(2)); f = m - 1
 * (exact); log1p(f) = 2 atanh(s) with s = f / (2 + f). */
static LLVMValueRef log_f32(cg *g, LLVMValueRef x, bool base2) {
  LLVMValueRef sub = fcmp32(g, LLVMRealOLT, x, 1.1754943508222875e-38);
  LLVMValueRef xs = selv(g, sub, fmul_c(g, x, 8388608.0), x); /* 2^23 */
  LLVMValueRef bits = LLVMBuildBitCast(g->b, xs, g->t_i32, "");
  LLVMValueRef e = LLVMBuildSub(g->b, LLVMBuildLShr(g->b, bits, teeny__cg_i32(g, 23), ""),
                                teeny__cg_i32(g, 127), "");
  LLVMValueRef mb = LLVMBuildOr(g->b, LLVMBuildAnd(g->b, bits, teeny__cg_i32(g, 0x7fffff), ""),
                                teeny__cg_i32(g, 0x3f800000), "");
  LLVMValueRef m = LLVMBuildBitCast(g->b, mb, g->t_f32, "");
  LLVMValueRef big = fcmp32(g, LLVMRealOGT, m, 1.41421353816986083984375);
  m = selv(g, big, fmul_c(g, m, 0.5), m);
  e = selv(g, big, LLVMBuildAdd(g->b, e, teeny__cg_i32(g, 1), ""), e);
  LLVMValueRef ef = LLVMBuildSIToFP(g->b, e, g->t_f32, "");
  ef = selv(g, sub, LLVMBuildFSub(g->b, ef, cf32(g, 23), ""), ef);
  LLVMValueRef f = LLVMBuildFSub(g->b, m, cf32(g, 1.0), "");
  LLVMValueRef s = LLVMBuildFDiv(g->b, f, LLVMBuildFAdd(g->b, f, cf32(g, 2.0), ""), "");
  LLVMValueRef t = LLVMBuildFMul(g->b, s, s, "");
  LLVMValueRef p = cf32(g, 1.0 / 9);
  p = fmaf_(g, p, t, cf32(g, 1.0 / 7));
  p = fmaf_(g, p, t, cf32(g, 1.0 / 5));
  p = fmaf_(g, p, t, cf32(g, 1.0 / 3));
  p = LLVMBuildFMul(g->b, p, t, "");
  LLVMValueRef s2 = fmul_c(g, s, 2.0);
  LLVMValueRef l1p = fmaf_(g, s2, p, s2); /* ln(m) */
  LLVMValueRef y;
  if (base2) /* e + ln(m) log2(e), the constant in two parts */
    y = LLVMBuildFAdd(g->b, ef,
                      fmaf_(g, l1p, cf32(g, 1.44269502162933349609375),
                            fmul_c(g, l1p, 1.925963033500011e-08)), "");
  else /* e ln2_hi (exact: ln2_hi has 12 trailing zero bits) + (e ln2_lo + ln m) */
    y = fmaf_(g, ef, cf32(g, 0.693145751953125),
              fmaf_(g, ef, cf32(g, 1.428606765330187e-06), l1p));
  y = selv(g, fcmp32(g, LLVMRealOEQ, x, 0), cf32(g, -INFINITY), y);
  y = selv(g, fcmp32(g, LLVMRealOLT, x, 0), cf32(g, NAN), y);
  y = selv(g, fcmp32(g, LLVMRealOEQ, x, INFINITY), x, y);
  return selv(g, fcmp32(g, LLVMRealUNO, x, 0), x, y);
}

/* sin or cos: q = rint(x 2/pi), r = x - q pi/2 (three parts by fma: the
 * first step is exact for |q| < 2^17), then the polynomial of the
 * quadrant: q even: sin r / cos r, odd: cos r / -sin r, and the sign of
 * quadrants 2 and 3. */
static LLVMValueRef sincos_f32(cg *g, LLVMValueRef x, bool is_cos) {
  LLVMTypeRef ft = g->t_f32;
  LLVMValueRef qf = fmul_c(g, x, 0.63661977236758134);
  qf = teeny__cg_intrin(g, "llvm.rint", &ft, 1, &qf, 1);
  LLVMValueRef nq = LLVMBuildFNeg(g->b, qf, "");
  LLVMValueRef r = fmaf_(g, nq, cf32(g, 1.5707962513), x);
  r = fmaf_(g, nq, cf32(g, 7.5497894159e-08), r);
  r = fmaf_(g, nq, cf32(g, 5.3903029534e-15), r);
  LLVMValueRef t = LLVMBuildFMul(g->b, r, r, "");
  /* sin r = r + r t S(t), to r^9 */
  LLVMValueRef ps = cf32(g, 1.0 / 362880);
  ps = fmaf_(g, ps, t, cf32(g, -1.0 / 5040));
  ps = fmaf_(g, ps, t, cf32(g, 1.0 / 120));
  ps = fmaf_(g, ps, t, cf32(g, -1.0 / 6));
  LLVMValueRef sr = fmaf_(g, LLVMBuildFMul(g->b, r, t, ""), ps, r);
  /* cos r = 1 - t/2 + t^2 C(t), to r^10 */
  LLVMValueRef pc = cf32(g, -1.0 / 3628800);
  pc = fmaf_(g, pc, t, cf32(g, 1.0 / 40320));
  pc = fmaf_(g, pc, t, cf32(g, -1.0 / 720));
  pc = fmaf_(g, pc, t, cf32(g, 1.0 / 24));
  LLVMValueRef cr = fmaf_(g, LLVMBuildFMul(g->b, t, t, ""), pc,
                          fmaf_(g, t, cf32(g, -0.5), cf32(g, 1.0)));
  LLVMTypeRef qt[2] = {g->t_i32, g->t_f32}; /* saturating: no poison for huge x */
  LLVMValueRef q = teeny__cg_intrin(g, "llvm.fptosi.sat", qt, 2, &qf, 1);
  if (is_cos)
    q = LLVMBuildAdd(g->b, q, teeny__cg_i32(g, 1), ""); /* cos x = sin(x + pi/2) */
  LLVMValueRef odd = LLVMBuildTrunc(g->b, q, g->t_i1, "");
  LLVMValueRef neg = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, q, teeny__cg_i32(g, 1), ""),
                                    g->t_i1, "");
  LLVMValueRef v = selv(g, odd, cr, sr);
  v = selv(g, neg, LLVMBuildFNeg(g->b, v, ""), v);
  /* inf and NaN: NaN */
  LLVMValueRef ax = call1(g, "llvm.fabs", x);
  return selv(g, fcmp32(g, LLVMRealUEQ, ax, INFINITY), cf32(g, NAN), v);
}

/* tanh: |x| < 0.55 by its Taylor series to x^17; else 1 - 2/(e^(2|x|) + 1)
 * with x's sign (e^(2|x|) = inf gives 1). */
static LLVMValueRef tanh_f32(cg *g, LLVMValueRef x) {
  static const double c[8] = {-0.33333333333333333, 0.13333333333333333,
                              -0.053968253968253968, 0.021869488536155203,
                              -0.0088632355299021966, 0.0035921280365724810,
                              -0.0014558343870513183, 0.00059002744094558602};
  LLVMValueRef t = LLVMBuildFMul(g->b, x, x, "");
  LLVMValueRef p = cf32(g, c[7]);
  for (int i = 6; i >= 0; i--)
    p = fmaf_(g, p, t, cf32(g, c[i]));
  LLVMValueRef small = fmaf_(g, LLVMBuildFMul(g->b, x, t, ""), p, x);
  LLVMValueRef ax = call1(g, "llvm.fabs", x);
  LLVMValueRef e = exp_f32(g, fmul_c(g, ax, 2.0));
  LLVMValueRef big = LLVMBuildFSub(
      g->b, cf32(g, 1.0),
      LLVMBuildFDiv(g->b, cf32(g, 2.0), LLVMBuildFAdd(g->b, e, cf32(g, 1.0), ""), ""), "");
  LLVMTypeRef ft = g->t_f32;
  LLVMValueRef sargs[2] = {big, x};
  big = teeny__cg_intrin(g, "llvm.copysign", &ft, 1, sargs, 2);
  return selv(g, fcmp32(g, LLVMRealOLT, ax, 0.55), small, big); /* NaN: big is NaN */
}

/* The hardware approximations (fast_*). */
static LLVMValueRef fast_f32(cg *g, teeny_opcode code, LLVMValueRef x) {
  switch (code) {
  case IR_EXP:
    return exp2_approx(g, fmul_c(g, x, 1.4426950408889634));
  case IR_EXP2:
    return exp2_approx(g, x);
  case IR_LOG:
    return fmul_c(g, nvvm1(g, "llvm.nvvm.lg2.approx.f", x), 0.6931471805599453);
  case IR_LOG2:
    return nvvm1(g, "llvm.nvvm.lg2.approx.f", x);
  case IR_SIN:
    return nvvm1(g, "llvm.nvvm.sin.approx.f", x);
  case IR_COS:
    return nvvm1(g, "llvm.nvvm.cos.approx.f", x);
  case IR_TANH:
    if (g->emu)
      return teeny__cg_emu_call(g, "teeny_emu_tanhf", g->t_f32, &x, 1);
    return teeny__cg_asm(g, g->t_f32, "tanh.approx.f32 $0, $1;", "=f,f", &x, 1, false);
  default:
    return NULL;
  }
}

/* One f32 transcendental. */
static LLVMValueRef math_f32(cg *g, teeny_opcode code, bool fast, LLVMValueRef x) {
  if (fast)
    return fast_f32(g, code, x);
  switch (code) {
  case IR_EXP:
    return exp_f32(g, x);
  case IR_EXP2:
    return exp2_approx(g, x);
  case IR_LOG:
  case IR_LOG2:
    return log_f32(g, x, code == IR_LOG2);
  case IR_RSQRT:
    return nvvm1(g, "llvm.nvvm.rsqrt.approx.f", x);
  case IR_SIN:
  case IR_COS:
    return sincos_f32(g, x, code == IR_COS);
  case IR_TANH:
    return tanh_f32(g, x);
  case IR_ERF:
    return erf_f32(g, x);
  default:
    return NULL;
  }
}

/* ---- f64 ------------------------------------------------------------------------------- */

static LLVMValueRef cf64(cg *g, double v) { return LLVMConstReal(g->t_f64, v); }

static LLVMValueRef fma64(cg *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  LLVMTypeRef t = g->t_f64;
  return teeny__cg_intrin(g, "llvm.fma", &t, 1, args, 3);
}

static LLVMValueRef sel(cg *g, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(g->b, c, a, b, "");
}

static LLVMValueRef fcmp(cg *g, LLVMRealPredicate p, LLVMValueRef a, double b) {
  return LLVMBuildFCmp(g->b, p, a, cf64(g, b), "");
}

/* 2^k for an integer-valued double k in [-1022, 1023] */
static LLVMValueRef pow2i(cg *g, LLVMValueRef k) {
  LLVMValueRef i = LLVMBuildFPToSI(g->b, k, g->t_i64, "");
  i = LLVMBuildShl(g->b, LLVMBuildAdd(g->b, i, teeny__cg_i64(g, 1023), ""),
                   teeny__cg_i64(g, 52), "");
  return LLVMBuildBitCast(g->b, i, g->t_f64, "");
}

/* p * 2^k, k integer-valued in [-1100, 1100]: two factors, so results that
 * are subnormal or near overflow are scaled exactly */
static LLVMValueRef scale(cg *g, LLVMValueRef p, LLVMValueRef k) {
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef half = LLVMBuildFMul(g->b, k, cf64(g, 0.5), "");
  LLVMValueRef k1 = teeny__cg_intrin(g, "llvm.trunc", &t, 1, &half, 1);
  LLVMValueRef k2 = LLVMBuildFSub(g->b, k, k1, "");
  return LLVMBuildFMul(g->b, LLVMBuildFMul(g->b, p, pow2i(g, k1), ""), pow2i(g, k2), "");
}

/* e^r for |r| <= 0.35: Taylor to r^13 (truncation < 1e-18 relative) */
static LLVMValueRef exp_poly(cg *g, LLVMValueRef r) {
  double c[14];
  c[0] = 1;
  for (int n = 1; n < 14; n++)
    c[n] = c[n - 1] / n;
  LLVMValueRef p = cf64(g, c[13]);
  for (int n = 12; n >= 0; n--)
    p = fma64(g, p, r, cf64(g, c[n]));
  return p;
}

/* e^x (base2: 2^x): k = rint(x / ln 2), r = x - k ln 2 in two parts */
static LLVMValueRef exp_f64(cg *g, LLVMValueRef x, bool base2) {
  LLVMTypeRef t = g->t_f64;
  static const double ln2_hi = 6.93147180369123816490e-01; /* 0x3FE62E42FEE00000 */
  static const double ln2_lo = 1.90821492927058770002e-10; /* 0x3DEA39EF35793C76 */
  LLVMValueRef r, k;
  if (base2) {
    k = teeny__cg_intrin(g, "llvm.rint", &t, 1, &x, 1);
    /* 2^(x-k) = e^((x-k) ln 2); x - k is exact */
    LLVMValueRef f = LLVMBuildFSub(g->b, x, k, "");
    r = fma64(g, f, cf64(g, ln2_hi), LLVMBuildFMul(g->b, f, cf64(g, ln2_lo), ""));
  } else {
    LLVMValueRef q = LLVMBuildFMul(g->b, x, cf64(g, 1.4426950408889634), "");
    k = teeny__cg_intrin(g, "llvm.rint", &t, 1, &q, 1);
    r = fma64(g, LLVMBuildFNeg(g->b, k, ""), cf64(g, ln2_hi), x);
    r = fma64(g, LLVMBuildFNeg(g->b, k, ""), cf64(g, ln2_lo), r);
  }
  /* clamp k so the scaling stays in range; the edges are fixed below */
  LLVMValueRef kc = sel(g, fcmp(g, LLVMRealOGT, k, 1100), cf64(g, 1100), k);
  kc = sel(g, fcmp(g, LLVMRealOLT, kc, -1100), cf64(g, -1100), kc);
  LLVMValueRef y = scale(g, exp_poly(g, r), kc);
  double hi = base2 ? 1024.0 : 709.782712893384, lo = base2 ? -1075.0 : -745.1332191019412;
  y = sel(g, fcmp(g, LLVMRealOGT, x, hi), cf64(g, INFINITY), y);
  y = sel(g, fcmp(g, LLVMRealOLT, x, lo), cf64(g, 0.0), y);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, y);
}

/* ln x: x = m 2^e, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m-1)/(m+1) */
static LLVMValueRef log_f64(cg *g, LLVMValueRef x, bool base2) {
  /* subnormals: scale up by 2^54 first */
  LLVMValueRef sub = fcmp(g, LLVMRealOLT, x, 2.2250738585072014e-308);
  LLVMValueRef xs = sel(g, sub, LLVMBuildFMul(g->b, x, cf64(g, 18014398509481984.0), ""), x);
  LLVMValueRef bits = LLVMBuildBitCast(g->b, xs, g->t_i64, "");
  LLVMValueRef e = LLVMBuildSub(g->b, LLVMBuildLShr(g->b, bits, teeny__cg_i64(g, 52), ""),
                                teeny__cg_i64(g, 1023), "");
  LLVMValueRef mb = LLVMBuildOr(g->b, LLVMBuildAnd(g->b, bits, teeny__cg_i64(g, 0xFFFFFFFFFFFFFll), ""),
                                teeny__cg_i64(g, 0x3FF0000000000000ll), "");
  LLVMValueRef m = LLVMBuildBitCast(g->b, mb, g->t_f64, "");
  LLVMValueRef big = fcmp(g, LLVMRealOGT, m, 1.4142135623730951);
  m = sel(g, big, LLVMBuildFMul(g->b, m, cf64(g, 0.5), ""), m);
  e = sel(g, big, LLVMBuildAdd(g->b, e, teeny__cg_i64(g, 1), ""), e);
  LLVMValueRef ef = LLVMBuildSIToFP(g->b, e, g->t_f64, "");
  ef = sel(g, sub, LLVMBuildFSub(g->b, ef, cf64(g, 54), ""), ef);
  LLVMValueRef s = LLVMBuildFDiv(g->b, LLVMBuildFSub(g->b, m, cf64(g, 1), ""),
                                 LLVMBuildFAdd(g->b, m, cf64(g, 1), ""), "");
  LLVMValueRef s2 = LLVMBuildFMul(g->b, s, s, "");
  LLVMValueRef p = cf64(g, 1.0 / 25);
  for (int n = 23; n >= 1; n -= 2)
    p = fma64(g, p, s2, cf64(g, 1.0 / n));
  LLVMValueRef lm = LLVMBuildFMul(g->b, LLVMBuildFMul(g->b, s, cf64(g, 2), ""), p, ""); /* ln m */
  LLVMValueRef y;
  if (base2) /* e + ln m / ln 2 */
    y = fma64(g, lm, cf64(g, 1.4426950408889634), ef);
  else /* e ln 2 + ln m, ln 2 in two parts */
    y = fma64(g, ef, cf64(g, 6.93147180369123816490e-01),
              fma64(g, ef, cf64(g, 1.90821492927058770002e-10), lm));
  y = sel(g, fcmp(g, LLVMRealOEQ, x, 0), cf64(g, -INFINITY), y);
  y = sel(g, fcmp(g, LLVMRealOLT, x, 0), cf64(g, NAN), y);
  y = sel(g, fcmp(g, LLVMRealOEQ, x, INFINITY), x, y);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, y);
}

static LLVMValueRef fabs64(cg *g, LLVMValueRef x) {
  LLVMTypeRef t = g->t_f64;
  return teeny__cg_intrin(g, "llvm.fabs", &t, 1, &x, 1);
}

static LLVMValueRef copysign64(cg *g, LLVMValueRef mag, LLVMValueRef sgn) {
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef a[2] = {mag, sgn};
  return teeny__cg_intrin(g, "llvm.copysign", &t, 1, a, 2);
}

static LLVMValueRef fadd64(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(g->b, a, b, ""); }
static LLVMValueRef fsub64(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(g->b, a, b, ""); }
static LLVMValueRef fmul64(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(g->b, a, b, ""); }
static LLVMValueRef fdiv64(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(g->b, a, b, ""); }

/* log1p: u = 1 + x; x exactly when u == 1, else log(u) x / (u - 1), which
 * cancels the rounding of 1 + x (Goldberg). */
static LLVMValueRef log1p_f64(cg *g, LLVMValueRef x) {
  LLVMValueRef u = fadd64(g, cf64(g, 1.0), x);
  LLVMValueRef um1 = fsub64(g, u, cf64(g, 1.0));
  LLVMValueRef y = fdiv64(g, fmul64(g, log_f64(g, u, false), x), um1);
  y = sel(g, fcmp(g, LLVMRealOEQ, um1, 0), x, y);
  y = sel(g, fcmp(g, LLVMRealOEQ, u, INFINITY), u, y); /* x = +inf */
  y = sel(g, fcmp(g, LLVMRealOEQ, x, -1.0), cf64(g, -INFINITY), y);
  y = sel(g, fcmp(g, LLVMRealOLT, x, -1.0), cf64(g, NAN), y);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, y);
}

/* expm1: u = e^x; x exactly when u == 1, -1 when u - 1 is, else
 * (u - 1) x / log(u), which cancels the rounding of e^x (Kahan). */
static LLVMValueRef expm1_f64(cg *g, LLVMValueRef x) {
  LLVMValueRef u = exp_f64(g, x, false);
  LLVMValueRef um1 = fsub64(g, u, cf64(g, 1.0));
  LLVMValueRef y = fdiv64(g, fmul64(g, um1, x), log_f64(g, u, false));
  y = sel(g, fcmp(g, LLVMRealOEQ, um1, -1.0), um1, y);
  y = sel(g, fcmp(g, LLVMRealOEQ, u, 1.0), x, y);
  y = sel(g, fcmp(g, LLVMRealOEQ, u, INFINITY), u, y);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, y);
}

/* sin or cos in f64: q = rint(x 2/pi), r = x - q pi/2 by fma in three
 * parts of pi/2 (the first step exact), Taylor polynomials to r^19 / r^18
 * on [-pi/4, pi/4], and the quadrant's choice and sign.  Stated for
 * |x| < 2^40 (docs/dsl.md §5). */
static LLVMValueRef sincos_f64(cg *g, LLVMValueRef x, bool is_cos) {
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef qf = fmul64(g, x, cf64(g, 0.63661977236758134308));
  qf = teeny__cg_intrin(g, "llvm.rint", &t, 1, &qf, 1);
  LLVMValueRef nq = LLVMBuildFNeg(g->b, qf, "");
  LLVMValueRef r = fma64(g, nq, cf64(g, 1.5707963267948966), x);
  r = fma64(g, nq, cf64(g, 6.123233995736766e-17), r);
  r = fma64(g, nq, cf64(g, -1.4973849048591698e-33), r);
  LLVMValueRef r2 = fmul64(g, r, r);
  double fs = 1, fc = 1;
  double cs[10], cc[10];
  for (int n = 0; n < 10; n++) { /* (-1)^n / (2n+1)! and / (2n)! */
    if (n)
      fs *= (2.0 * n) * (2.0 * n + 1), fc *= (2.0 * n - 1) * (2.0 * n);
    cs[n] = (n & 1 ? -1.0 : 1.0) / fs;
    cc[n] = (n & 1 ? -1.0 : 1.0) / fc;
  }
  LLVMValueRef ps = cf64(g, cs[9]), pc = cf64(g, cc[9]);
  for (int n = 8; n >= 0; n--) {
    ps = fma64(g, ps, r2, cf64(g, cs[n]));
    pc = fma64(g, pc, r2, cf64(g, cc[n]));
  }
  LLVMValueRef sr = fmul64(g, ps, r), cr = pc;
  LLVMTypeRef qt[2] = {g->t_i64, g->t_f64};
  LLVMValueRef q = teeny__cg_intrin(g, "llvm.fptosi.sat", qt, 2, &qf, 1);
  if (is_cos)
    q = LLVMBuildAdd(g->b, q, teeny__cg_i64(g, 1), "");
  LLVMValueRef odd = LLVMBuildTrunc(g->b, q, g->t_i1, "");
  LLVMValueRef neg = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, q, teeny__cg_i64(g, 1), ""),
                                    g->t_i1, "");
  LLVMValueRef v = sel(g, odd, cr, sr);
  v = sel(g, neg, LLVMBuildFNeg(g->b, v, ""), v);
  return sel(g, fcmp(g, LLVMRealUEQ, fabs64(g, x), INFINITY), cf64(g, NAN), v);
}

/* tanh = em / (em + 2) with em = expm1(2|x|), x's sign; 1 past |x| = 22. */
static LLVMValueRef tanh_f64(cg *g, LLVMValueRef x) {
  LLVMValueRef ax = fabs64(g, x);
  LLVMValueRef em = expm1_f64(g, fmul64(g, ax, cf64(g, 2.0)));
  LLVMValueRef y = fdiv64(g, em, fadd64(g, em, cf64(g, 2.0)));
  y = sel(g, fcmp(g, LLVMRealOGT, ax, 22.0), cf64(g, 1.0), y);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, copysign64(g, y, x));
}

/* erf on |x| < 1.5: 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)), 36 terms. */
static LLVMValueRef erf_series64(cg *g, LLVMValueRef x) {
  LLVMValueRef x2 = fmul64(g, x, x);
  double c[36], f = 1;
  for (int n = 0; n < 36; n++) {
    if (n)
      f *= n;
    c[n] = (n & 1 ? -1.0 : 1.0) / (f * (2 * n + 1));
  }
  LLVMValueRef p = cf64(g, c[35]);
  for (int n = 34; n >= 0; n--)
    p = fma64(g, p, x2, cf64(g, c[n]));
  return fmul64(g, fmul64(g, x, cf64(g, 1.1283791670955126)), p);
}

/* erfc on x >= 1.5: e^-x^2 / (sqrt(pi) t), t the continued fraction
 * x + (1/2)/(x + 1/(x + (3/2)/(x + ...))) to 100 levels (2e-16 at 1.5),
 * evaluated from the tail; x^2 in two parts, so e^-x^2 keeps its accuracy
 * for large x. */
static LLVMValueRef erfc_cf64(cg *g, LLVMValueRef x) {
  LLVMValueRef t = x;
  for (int k = 100; k >= 1; k--)
    t = fadd64(g, x, fdiv64(g, cf64(g, k / 2.0), t));
  LLVMValueRef hi = fmul64(g, x, x);
  LLVMValueRef lo = fma64(g, x, x, LLVMBuildFNeg(g->b, hi, ""));
  LLVMValueRef e = fmul64(g, exp_f64(g, LLVMBuildFNeg(g->b, hi, ""), false),
                          fsub64(g, cf64(g, 1.0), lo)); /* e^-(hi+lo), |lo| tiny */
  return fdiv64(g, e, fmul64(g, t, cf64(g, 1.7724538509055160)));
}

/* erf (want_erfc false) or erfc of x in f64, from the series below 1.5
 * and the continued fraction above (erf = 1 - erfc there), odd symmetry
 * (erfc: erfc(-x) = 2 - erfc(x)).  erfc below 1.5 is 1 - erf: up to about
 * 32 ulp in f64 near 1.5 (docs/dsl.md §5), far below an f32 ulp. */
static LLVMValueRef erf_f64(cg *g, LLVMValueRef x, bool want_erfc) {
  LLVMValueRef ax = fabs64(g, x);
  LLVMValueRef big = fcmp(g, LLVMRealOGE, ax, 1.5);
  LLVMValueRef axc = sel(g, big, ax, cf64(g, 1.5)); /* keep the unused side finite */
  LLVMValueRef tail = erfc_cf64(g, axc);
  tail = sel(g, fcmp(g, LLVMRealOGT, ax, 27.3), cf64(g, 0.0), tail);
  LLVMValueRef ser = erf_series64(g, sel(g, big, cf64(g, 0.0), x));
  if (!want_erfc) {
    LLVMValueRef y = sel(g, big, copysign64(g, fsub64(g, cf64(g, 1.0), tail), x), ser);
    return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, y);
  }
  LLVMValueRef pos = sel(g, big, tail, fsub64(g, cf64(g, 1.0), ser)); /* erfc(|x|) or 1 - erf(x) */
  LLVMValueRef negx = fcmp(g, LLVMRealOLT, x, 0);
  LLVMValueRef y = sel(g, big, sel(g, negx, fsub64(g, cf64(g, 2.0), tail), tail), pos);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, y);
}

/* pi/4, pi/2 and pi as a double and the double of the rest. */
#define PIO4_HI 0.78539816339744828
#define PIO4_LO 3.0616169978683830e-17
#define PIO2_HI 1.5707963267948966
#define PIO2_LO 6.1232339957367660e-17
#define PI_HI 3.1415926535897931
#define PI_LO 1.2246467991473532e-16

/* c_hi + c_lo - r (c_hi + c_lo a constant split in two). */
static LLVMValueRef const_minus(cg *g, double hi, double lo, LLVMValueRef r) {
  return fadd64(g, fsub64(g, cf64(g, hi), r), cf64(g, lo));
}

/* atan on [0, 1] (NaN stays NaN): above tan(pi/8), pi/4 + atan(u) with
 * u = (t - 1) / (t + 1) (t - 1 exact there); then |u| <= tan(pi/8) and the
 * series u - u^3/3 + u^5/5 ... to the u^41 term (0.1716^21 / 43 < 2^-60). */
static LLVMValueRef atan01_f64(cg *g, LLVMValueRef t) {
  LLVMValueRef mid = fcmp(g, LLVMRealOGT, t, 0.41421356237309503);
  LLVMValueRef u = sel(g, mid, fdiv64(g, fsub64(g, t, cf64(g, 1.0)), fadd64(g, t, cf64(g, 1.0))), t);
  LLVMValueRef u2 = fmul64(g, u, u), p = cf64(g, 1.0 / 41);
  for (int k = 19; k >= 0; k--)
    p = fadd64(g, fmul64(g, p, u2), cf64(g, (k % 2 ? -1.0 : 1.0) / (2 * k + 1)));
  LLVMValueRef r = fmul64(g, u, p);
  return sel(g, mid, fadd64(g, fadd64(g, r, cf64(g, PIO4_LO)), cf64(g, PIO4_HI)), r);
}

/* atan: |x| > 1 through pi/2 - atan(1/|x|) (inf gives pi/2), x's sign. */
static LLVMValueRef atan_f64(cg *g, LLVMValueRef x) {
  LLVMValueRef ax = fabs64(g, x);
  LLVMValueRef big = fcmp(g, LLVMRealOGT, ax, 1.0);
  LLVMValueRef a = atan01_f64(g, sel(g, big, fdiv64(g, cf64(g, 1.0), ax), ax));
  a = sel(g, big, const_minus(g, PIO2_HI, PIO2_LO, a), a);
  return sel(g, fcmp(g, LLVMRealUNO, x, 0), x, copysign64(g, a, x));
}

/* atan2(y, x) as C's: t = atan of the smaller of |x|, |y| over the larger,
 * then base + t or base - t with base 0, pi/2 or pi (in two parts, so
 * that pi - pi/2 is pi/2) by the octant; (±0, ±0) and (±inf, ±inf) by
 * their own rules (0 or pi, pi/4 or 3pi/4); y's sign on everything. */
static LLVMValueRef atan2_f64(cg *g, LLVMValueRef y, LLVMValueRef x) {
  LLVMValueRef ax = fabs64(g, x), ay = fabs64(g, y);
  LLVMValueRef swap = LLVMBuildFCmp(g->b, LLVMRealOGT, ay, ax, "");
  LLVMValueRef xneg = fcmp(g, LLVMRealOLT, copysign64(g, cf64(g, 1.0), x), 0); /* -0 too */
  LLVMValueRef t = atan01_f64(g, fdiv64(g, sel(g, swap, ax, ay), sel(g, swap, ay, ax)));
  t = sel(g, LLVMBuildXor(g->b, swap, xneg, ""), LLVMBuildFNeg(g->b, t, ""), t);
  LLVMValueRef hi = sel(g, swap, cf64(g, PIO2_HI), sel(g, xneg, cf64(g, PI_HI), cf64(g, 0.0)));
  LLVMValueRef lo = sel(g, swap, cf64(g, PIO2_LO), sel(g, xneg, cf64(g, PI_LO), cf64(g, 0.0)));
  LLVMValueRef a = fadd64(g, fadd64(g, hi, t), lo);
  LLVMValueRef both_inf = LLVMBuildAnd(g->b, fcmp(g, LLVMRealOEQ, ax, INFINITY),
                                       fcmp(g, LLVMRealOEQ, ay, INFINITY), "");
  a = sel(g, both_inf, sel(g, xneg, cf64(g, 3 * PIO4_HI), cf64(g, PIO4_HI)), a);
  LLVMValueRef both_zero = LLVMBuildAnd(g->b, fcmp(g, LLVMRealOEQ, ax, 0), fcmp(g, LLVMRealOEQ, ay, 0), "");
  a = sel(g, both_zero, sel(g, xneg, cf64(g, PI_HI), cf64(g, 0.0)), a);
  LLVMValueRef r = copysign64(g, a, y);
  LLVMValueRef nan = LLVMBuildOr(g->b, fcmp(g, LLVMRealUNO, x, 0), fcmp(g, LLVMRealUNO, y, 0), "");
  return sel(g, nan, fadd64(g, x, y), r); /* a NaN operand's NaN, as libm's */
}

/* asin = atan2(x, sqrt((1 - x)(1 + x))), acos = atan2(sqrt(...), x): the
 * product keeps its precision near |x| = 1 (1 - x is exact there); |x| > 1
 * makes the root NaN. */
static LLVMValueRef asin_acos_f64(cg *g, LLVMValueRef x, bool acos) {
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef w = fmul64(g, fsub64(g, cf64(g, 1.0), x), fadd64(g, cf64(g, 1.0), x));
  LLVMValueRef c = teeny__cg_intrin(g, "llvm.sqrt", &t, 1, &w, 1);
  return acos ? atan2_f64(g, c, x) : atan2_f64(g, x, c);
}

LLVMValueRef teeny__cg_atan2(cg *g, teeny_dtype dt, LLVMValueRef y, LLVMValueRef x) {
  if (dt != TEENY_DT_F64) {
    y = teeny__cg_cast(g, y, dt, TEENY_DT_F64);
    x = teeny__cg_cast(g, x, dt, TEENY_DT_F64);
  }
  LLVMValueRef r = atan2_f64(g, y, x);
  return dt == TEENY_DT_F64 ? r : teeny__cg_cast(g, r, TEENY_DT_F64, dt);
}

/* x^y in f64 (C's pow): 2^(y log2|x|), with pow's special cases: y = 0 or
 * x = 1 give 1 (even NaN), a negative x needs an integer y (odd: negative
 * result), |x| = 1 with y = +-inf gives 1.  Relative error about
 * |y log2 x| 2^-53 more than exp2's: exact enough for every f32 result;
 * docs/dsl.md §5 states the f64 bound. */
LLVMValueRef teeny__cg_pow(cg *g, teeny_dtype dt, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef t = g->t_f64;
  if (dt != TEENY_DT_F64) {
    x = LLVMBuildFPExt(g->b, x, t, "");
    y = LLVMBuildFPExt(g->b, y, t, "");
  }
  LLVMValueRef ax = fabs64(g, x);
  LLVMValueRef r = exp_f64(g, fmul64(g, y, log_f64(g, ax, true)), true);
  LLVMValueRef fy = teeny__cg_intrin(g, "llvm.floor", &t, 1, &y, 1);
  LLVMValueRef is_int = LLVMBuildFCmp(g->b, LLVMRealOEQ, fy, y, "");
  LLVMValueRef half = fmul64(g, y, cf64(g, 0.5));
  LLVMValueRef hf = teeny__cg_intrin(g, "llvm.floor", &t, 1, &half, 1);
  LLVMValueRef odd = LLVMBuildAnd(g->b, is_int, LLVMBuildFCmp(g->b, LLVMRealONE, hf, half, ""), "");
  LLVMValueRef xneg = LLVMBuildFCmp(g->b, LLVMRealOLT, x, cf64(g, 0), ""); /* -0 is not */
  LLVMValueRef xsign = LLVMBuildFCmp(g->b, LLVMRealOLT, copysign64(g, cf64(g, 1.0), x), cf64(g, 0), "");
  r = sel(g, LLVMBuildAnd(g->b, xsign, odd, ""), LLVMBuildFNeg(g->b, r, ""), r);
  LLVMValueRef xfin = LLVMBuildFCmp(g->b, LLVMRealONE, ax, cf64(g, INFINITY), "");
  r = sel(g, LLVMBuildAnd(g->b, LLVMBuildAnd(g->b, xneg, xfin, ""), LLVMBuildNot(g->b, is_int, ""), ""),
          cf64(g, NAN), r);
  r = sel(g, fcmp(g, LLVMRealUNO, y, 0), y, r);
  r = sel(g, fcmp(g, LLVMRealUNO, x, 0), x, r);
  r = sel(g, fcmp(g, LLVMRealOEQ, ax, 1.0),
          sel(g, fcmp(g, LLVMRealOEQ, fabs64(g, y), INFINITY), cf64(g, 1.0), r), r);
  r = sel(g, fcmp(g, LLVMRealOEQ, x, 1.0), cf64(g, 1.0), r);
  r = sel(g, fcmp(g, LLVMRealOEQ, y, 0.0), cf64(g, 1.0), r);
  return dt == TEENY_DT_F64 ? r : teeny__cg_cast(g, r, TEENY_DT_F64, dt);
}

static LLVMValueRef math_f64(cg *g, teeny_opcode code, LLVMValueRef x) {
  LLVMTypeRef t = g->t_f64;
  switch (code) {
  case IR_EXP:
  case IR_EXP2:
    return exp_f64(g, x, code == IR_EXP2);
  case IR_LOG:
  case IR_LOG2:
    return log_f64(g, x, code == IR_LOG2);
  case IR_RSQRT:
    return LLVMBuildFDiv(g->b, cf64(g, 1.0), teeny__cg_intrin(g, "llvm.sqrt", &t, 1, &x, 1), "");
  case IR_LOG1P:
    return log1p_f64(g, x);
  case IR_EXPM1:
    return expm1_f64(g, x);
  case IR_SIN:
  case IR_COS:
    return sincos_f64(g, x, code == IR_COS);
  case IR_TANH:
    return tanh_f64(g, x);
  case IR_ERF:
  case IR_ERFC:
    return erf_f64(g, x, code == IR_ERFC);
  case IR_ATAN:
    return atan_f64(g, x);
  case IR_ASIN:
  case IR_ACOS:
    return asin_acos_f64(g, x, code == IR_ACOS);
  default:
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "'%s' on f64 is not supported by the PTX code generator yet; cast to f32",
                   teeny__opcode_name(code));
  }
}

/* log1p, expm1, erfc, asin, acos and atan on f32 (and f16/bf16): in f64,
 * rounded once. */
static bool via_f64(teeny_opcode code) {
  return code == IR_LOG1P || code == IR_EXPM1 || code == IR_ERFC || code == IR_ASIN ||
         code == IR_ACOS || code == IR_ATAN;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

LLVMValueRef teeny__cg_math(cg *g, teeny_opcode code, teeny_dtype dt, bool fast,
                           LLVMValueRef x) {
  switch (code) {
  case IR_SQRT:
    return call1(g, "llvm.sqrt", x);
  case IR_FLOOR:
    return call1(g, "llvm.floor", x);
  case IR_CEIL:
    return call1(g, "llvm.ceil", x);
  default:
    break;
  }
  if (dt == TEENY_DT_F64)
    return math_f64(g, code, x);
  if (via_f64(code))
    return teeny__cg_cast(g, math_f64(g, code, teeny__cg_cast(g, x, dt, TEENY_DT_F64)),
                          TEENY_DT_F64, dt);
  LLVMValueRef w = dt == TEENY_DT_F32 ? x : LLVMBuildFPExt(g->b, x, g->t_f32, "");
  LLVMValueRef r = math_f32(g, code, fast, w);
  return dt == TEENY_DT_F32 ? r : teeny__cg_cast(g, r, TEENY_DT_F32, dt);
}

