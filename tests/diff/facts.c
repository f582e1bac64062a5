/*
 * tests/diff/facts.c — the value facts of facts.h: interval arithmetic on
 * the interpreter's values plus an error bound for the engine's, one
 * transfer function per operation.
 *
 * The error model (docs/reliability.md, "Differential fuzzing"):
 *   * + - * / fma sqrt, casts, min/max, floor/ceil, where, comparisons and
 *     every integer operation are exact: both sides round correctly, so
 *     they agree bit for bit (NaN = NaN, -0 = +0) on equal inputs;
 *   * exp/exp2/log/log2/rsqrt/sin/cos/tanh/sigmoid/erf are approximate:
 *     a few ulp (relative) or a stated absolute error, PTX's documented
 *     bounds for the .approx instructions; tanh is held to a few ulp (the
 *     accurate function docs/dsl.md promises; tanh.approx misses it);
 *   * a sum, scan or dot of n values is exact when every value is an
 *     integer and n * max|x| fits the accumulator's significand, else
 *     within 2 (n - 1) n max|x| 2^-p, the two orders' worst case;
 *   * f32 dot operands go through TF32 (11 significant bits) on the GPU;
 *   * an approximate value never reaches an operation that is not
 *     continuous (comparisons, float->int casts, floor, %, argmax), and
 *     never a value that may overflow: dfz_fact_op refuses those.
 * Errors propagate by the Lipschitz bound of each operation on its
 * (widened) input interval, plus one rounding of the result dtype.
 */
#include <math.h>

#include "tests/diff/ast.h"
#include "tests/diff/facts.h"

dfz_fact dfz_fact_const(double v) {
  dfz_fact f = {v, v, 0, v == floor(v)};
  if (isnan(v))
    f.lo = -INFINITY, f.hi = INFINITY, f.intval = false;
  return f;
}

dfz_fact dfz_fact_range(double lo, double hi, bool intval) {
  dfz_fact f = {lo, hi, 0, intval};
  return f;
}

dfz_fact dfz_fact_any(teeny_dtype dt) {
  if (dfz_is_float(dt))
    return dfz_fact_range(-INFINITY, INFINITY, false);
  return dfz_fact_range(dfz_min_value(dt), dfz_max_finite(dt), true);
}

dfz_fact dfz_fact_hull(dfz_fact a, dfz_fact b) {
  dfz_fact f = {fmin(a.lo, b.lo), fmax(a.hi, b.hi), fmax(a.err, b.err), a.intval && b.intval};
  return f;
}

bool dfz_fact_finite(dfz_fact f) { return isfinite(f.lo) && isfinite(f.hi); }

double dfz_fact_mag(dfz_fact f) { return fmax(fabs(f.lo), fabs(f.hi)); }

bool dfz_fact_within(dfz_fact a, dfz_fact b) {
  return a.lo >= b.lo && a.hi <= b.hi && a.err <= b.err && (a.intval || !b.intval);
}

/* ---- helpers ------------------------------------------------------------------------ */

static dfz_fact any_float(void) { return dfz_fact_range(-INFINITY, INFINITY, false); }

/* Fit an integer result into dt: out of range means it may wrap anywhere. */
static dfz_fact fit_int(teeny_dtype dt, double lo, double hi) {
  if (dt == TEENY_DT_BOOL)
    return dfz_fact_range(0, 1, true);
  if (!(lo >= dfz_min_value(dt) && hi <= dfz_max_finite(dt)))
    return dfz_fact_any(dt);
  return dfz_fact_range(lo, hi, true);
}

/* Fit a float result into dt: widen by a rounding, overflow -> infinite.
 * err is the propagated error; one rounding is added when it is non-zero.
 * Returns false if an approximate value could overflow. */
static bool fit_float(teeny_dtype dt, double lo, double hi, double err, bool intval,
                      dfz_fact *out) {
  if (isnan(lo) || isnan(hi)) {
    lo = -INFINITY;
    hi = INFINITY;
  }
  double m = fmax(fabs(lo), fabs(hi));
  bool exact_ints = intval && m <= ldexp(1.0, dfz_precision(dt));
  if (!exact_ints && isfinite(m)) {
    lo -= dfz_ulp(dt, lo); /* each end rounds by its own ulp */
    hi += dfz_ulp(dt, hi);
    if (err > 0)
      err += dfz_ulp(dt, m);
  }
  double maxf = dfz_max_finite(dt);
  if (lo < -maxf)
    lo = -INFINITY;
  if (hi > maxf)
    hi = INFINITY;
  if (err > 0 && !(isfinite(lo) && isfinite(hi)))
    return false;
  out->lo = lo;
  out->hi = hi;
  out->err = err;
  out->intval = intval;
  return true;
}

/* Interval of the products of [a] and [b]; NaN products (0 * inf) make it infinite. */
static void mul_interval(dfz_fact a, dfz_fact b, double *lo, double *hi) {
  double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int i = 0; i < 4; i++) {
    if (isnan(p[i])) {
      *lo = -INFINITY;
      *hi = INFINITY;
      return;
    }
    *lo = fmin(*lo, p[i]);
    *hi = fmax(*hi, p[i]);
  }
}

static bool contains_zero(dfz_fact f) { return f.lo <= 0 && f.hi >= 0; }

/* Smallest |x| over the interval widened by its error (0 if it may be 0). */
static double min_mag(dfz_fact f) {
  double lo = f.lo - f.err, hi = f.hi + f.err;
  if (lo <= 0 && hi >= 0)
    return 0;
  return fmin(fabs(lo), fabs(hi));
}

static bool ints_exact(const dfz_fact *a, int n) {
  for (int i = 0; i < n; i++)
    if (a[i].err > 0)
      return false;
  return true;
}

/* ---- integer operations ---------------------------------------------------------------- */

static bool int_op(int op, teeny_dtype rdt, teeny_dtype adt, const dfz_fact *a, dfz_fact *out) {
  double lo, hi;
  switch (op) {
  case OP_ADD: *out = fit_int(rdt, a[0].lo + a[1].lo, a[0].hi + a[1].hi); return true;
  case OP_SUB: *out = fit_int(rdt, a[0].lo - a[1].hi, a[0].hi - a[1].lo); return true;
  case OP_MUL:
    mul_interval(a[0], a[1], &lo, &hi);
    *out = fit_int(rdt, lo, hi);
    return true;
  case OP_DIV: {
    double m = dfz_fact_mag(a[0]) + 1;
    if (!dfz_is_signed(rdt))
      *out = contains_zero(a[1]) ? dfz_fact_any(rdt) : fit_int(rdt, 0, a[0].hi);
    else
      *out = fit_int(rdt, -m, m);
    return true;
  }
  case OP_REM: {
    double m = dfz_fact_mag(a[0]);
    if (!contains_zero(a[1]))
      m = fmin(m, dfz_fact_mag(a[1]) - 1); /* |x % y| < |y| when y != 0 */
    *out = fit_int(rdt, a[0].lo < 0 ? -m : 0, a[0].hi > 0 ? m : 0);
    return true;
  }
  case OP_MINIMUM:
    *out = fit_int(rdt, fmin(a[0].lo, a[1].lo), fmin(a[0].hi, a[1].hi));
    return true;
  case OP_MAXIMUM:
    *out = fit_int(rdt, fmax(a[0].lo, a[1].lo), fmax(a[0].hi, a[1].hi));
    return true;
  case OP_NEG:
    *out = dfz_is_signed(rdt) ? fit_int(rdt, -a[0].hi, -a[0].lo) : dfz_fact_any(rdt);
    return true;
  case OP_ABS:
    if (!dfz_is_signed(rdt)) {
      *out = a[0];
      return true;
    }
    *out = a[0].lo <= dfz_min_value(rdt) ? dfz_fact_any(rdt)
         : fit_int(rdt, a[0].lo >= 0 ? a[0].lo : a[0].hi <= 0 ? -a[0].hi : 0, dfz_fact_mag(a[0]));
    return true;
  case OP_AND:
  case OP_OR:
  case OP_XOR:
  case OP_SHL:
  case OP_SHR:
  case OP_BNOT:
  case OP_CDIV:
    *out = dfz_fact_any(rdt);
    return true;
  default:
    (void)adt;
    return false;
  }
}

/* ---- float operations -------------------------------------------------------------------- */

/* Error and interval of an approximate unary function: L is its Lipschitz
 * bound on the widened input, approx its own absolute error. */
static bool approx_result(teeny_dtype rdt, double lo, double hi, double L, dfz_fact x,
                          double approx, dfz_fact *out) {
  double err = L * x.err + approx;
  if (err == 0)
    err = dfz_ulp(rdt, fmax(fabs(lo), fabs(hi)));
  return fit_float(rdt, lo, hi, err, false, out);
}

static bool float_math(int op, teeny_dtype rdt, dfz_fact x, dfz_fact *out) {
  /* fast_x is held to the bounds of the approximate instructions, which
   * every x but tanh is held to already */
  static const int base[] = {OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_SIN, OP_COS};
  if (op >= OP_FAST_EXP && op <= OP_FAST_COS)
    op = base[op - OP_FAST_EXP];
  bool f64 = rdt == TEENY_DT_F64;
  double rel = f64 ? ldexp(1.0, -50) : ldexp(1.0, -21);
  double wlo = x.lo - x.err, whi = x.hi + x.err, m = fmax(fabs(wlo), fabs(whi));
  if (!dfz_fact_finite(x))
    return false;
  switch (op) {
  case OP_EXP:
  case OP_EXP2: {
    double ln2 = op == OP_EXP2 ? log(2.0) : 1.0;
    if (whi * ln2 > log(dfz_max_finite(rdt)) - 1 || (!f64 && m > 80))
      return false;
    double top = exp(whi * ln2);
    double scale = f64 ? 0 : top * m * ln2 * ldexp(1.0, -23); /* x * log2(e) rounded */
    return approx_result(rdt, exp(x.lo * ln2), exp(x.hi * ln2), top * ln2, x,
                         top * rel + scale, out);
  }
  case OP_LOG:
  case OP_LOG2: {
    if (wlo <= 0)
      return false;
    double k = op == OP_LOG2 ? 1 / log(2.0) : 1.0;
    double ylo = log(x.lo) * k, yhi = log(x.hi) * k, ym = fmax(fabs(ylo), fabs(yhi));
    return approx_result(rdt, ylo, yhi, k / wlo, x,
                         f64 ? ym * rel + ldexp(1.0, -52) : ldexp(1.0, -21) + ym * ldexp(1.0, -23),
                         out);
  }
  case OP_RSQRT: {
    if (wlo <= 0)
      return false;
    double top = 1 / sqrt(wlo);
    return approx_result(rdt, 1 / sqrt(x.hi), 1 / sqrt(x.lo), 0.5 * top / wlo, x, top * rel, out);
  }
  case OP_SIN:
  case OP_COS:
    if (f64 || m > 1e4)
      return false;
    return approx_result(rdt, -1, 1, 1, x, ldexp(1.0, -20) + m * ldexp(1.0, -22), out);
  case OP_TANH:
    if (f64)
      return false;
    return approx_result(rdt, tanh(x.lo), tanh(x.hi), 1, x, ldexp(1.0, -21), out);
  case OP_FAST_TANH: { /* tanh.approx.f32: 2^-10.987 relative */
    if (f64)
      return false;
    double top = fmax(fabs(tanh(wlo)), fabs(tanh(whi)));
    return approx_result(rdt, tanh(x.lo), tanh(x.hi), 1, x, top * ldexp(1.0, -10) + ldexp(1.0, -21), out);
  }
  case OP_SIGMOID:
    return approx_result(rdt, 1 / (1 + exp(-x.lo)), 1 / (1 + exp(-x.hi)), 0.25, x,
                         f64 ? ldexp(1.0, -50) : ldexp(1.0, -20), out);
  case OP_ERF:
    if (f64)
      return false;
    return approx_result(rdt, erf(x.lo), erf(x.hi), 1.13, x, 5e-7, out);
  case OP_ATAN: /* in f64, rounded once: an ulp of pi/2 apart at most */
    return approx_result(rdt, atan(x.lo), atan(x.hi), 1, x, f64 ? ldexp(1.0, -50) : 5e-7, out);
  default:
    return false;
  }
}

static bool float_op(int op, teeny_dtype rdt, const dfz_fact *a, int nargs, dfz_fact *out) {
  double lo, hi;
  bool exact = ints_exact(a, nargs);
  bool iv = nargs >= 1 && a[0].intval && (nargs < 2 || a[1].intval) && (nargs < 3 || a[2].intval);
  switch (op) {
  case OP_ADD:
    return fit_float(rdt, a[0].lo + a[1].lo, a[0].hi + a[1].hi, a[0].err + a[1].err, iv, out);
  case OP_SUB:
    return fit_float(rdt, a[0].lo - a[1].hi, a[0].hi - a[1].lo, a[0].err + a[1].err, iv, out);
  case OP_MUL: {
    mul_interval(a[0], a[1], &lo, &hi);
    double err = dfz_fact_mag(a[0]) * a[1].err + dfz_fact_mag(a[1]) * a[0].err + a[0].err * a[1].err;
    if (!exact && !isfinite(err))
      return false;
    return fit_float(rdt, lo, hi, exact ? 0 : err, iv, out);
  }
  case OP_FMA: {
    mul_interval(a[0], a[1], &lo, &hi);
    double err = dfz_fact_mag(a[0]) * a[1].err + dfz_fact_mag(a[1]) * a[0].err +
                 a[0].err * a[1].err + a[2].err;
    if (!exact && !isfinite(err))
      return false;
    return fit_float(rdt, lo + a[2].lo, hi + a[2].hi, exact ? 0 : err, iv, out);
  }
  case OP_DIV: {
    if (exact && contains_zero(a[1])) {
      *out = any_float();
      return true;
    }
    double mb = min_mag(a[1]);
    if (mb == 0)
      return false;
    double ma = dfz_fact_mag(a[0]) + a[0].err;
    lo = -ma / mb;
    hi = ma / mb;
    if (a[0].lo >= 0 && a[1].lo > 0)
      lo = a[0].lo / (a[1].hi + a[1].err);
    double err = exact ? 0 : (a[0].err / mb + ma * a[1].err / (mb * mb)) * 1.001;
    if (!exact && !dfz_fact_finite(a[0]))
      return false;
    return fit_float(rdt, lo, hi, err, false, out);
  }
  case OP_REM: {
    if (!exact)
      return false;
    if (!dfz_fact_finite(a[0]) || contains_zero(a[1])) {
      *out = any_float();
      return true;
    }
    double m = fmin(dfz_fact_mag(a[0]), dfz_fact_mag(a[1]));
    return fit_float(rdt, a[0].lo < 0 ? -m : 0, a[0].hi > 0 ? m : 0, 0, iv, out);
  }
  case OP_MINIMUM:
    return fit_float(rdt, fmin(a[0].lo, a[1].lo), fmin(a[0].hi, a[1].hi),
                     fmax(a[0].err, a[1].err), iv, out);
  case OP_MAXIMUM:
    return fit_float(rdt, fmax(a[0].lo, a[1].lo), fmax(a[0].hi, a[1].hi),
                     fmax(a[0].err, a[1].err), iv, out);
  case OP_NEG:
    *out = a[0];
    out->lo = -a[0].hi;
    out->hi = -a[0].lo;
    return true;
  case OP_ABS:
    *out = a[0];
    out->lo = a[0].lo >= 0 ? a[0].lo : a[0].hi <= 0 ? -a[0].hi : 0;
    out->hi = dfz_fact_mag(a[0]);
    return true;
  case OP_FLOOR:
  case OP_CEIL:
    if (!exact)
      return false;
    return fit_float(rdt, floor(a[0].lo), ceil(a[0].hi), 0, true, out);
  case OP_SQRT:
    if (exact) {
      if (a[0].lo < 0) {
        *out = any_float();
        return true;
      }
      return fit_float(rdt, sqrt(a[0].lo), sqrt(a[0].hi), 0, false, out);
    } else {
      double w = a[0].lo - a[0].err;
      if (w <= 0)
        return false;
      return fit_float(rdt, sqrt(a[0].lo), sqrt(a[0].hi), a[0].err / (2 * sqrt(w)), false, out);
    }
  default:
    return float_math(op, rdt, a[0], out);
  }
}

/* ---- reductions, scans, dot ---------------------------------------------------------------- */

/* Accumulator dtype of a sum of adt (docs/dsl.md §5). */
static teeny_dtype sum_acc(teeny_dtype adt) {
  if (adt == TEENY_DT_F16 || adt == TEENY_DT_BF16)
    return TEENY_DT_F32;
  return adt;
}

static bool sum_facts(teeny_dtype rdt, teeny_dtype adt, dfz_fact x, long n, bool scan,
                      dfz_fact *out) {
  if (!dfz_is_float(rdt)) {
    if (x.err > 0)
      return false;
    double lo = scan ? fmin(x.lo, x.lo * n) : x.lo * n, hi = scan ? fmax(x.hi, x.hi * n) : x.hi * n;
    *out = fit_int(rdt, lo, hi);
    return true;
  }
  if (!dfz_fact_finite(x))
    return false;
  /* the builtin sums of f16/bf16 accumulate in f32 (rdt); a combine
   * function's sum accumulates in the operand's own dtype (rdt == adt) */
  teeny_dtype acc = rdt == adt ? adt : sum_acc(adt);
  double m = dfz_fact_mag(x) + x.err;
  double lo = scan ? fmin(x.lo, x.lo * n) : x.lo * n, hi = scan ? fmax(x.hi, x.hi * n) : x.hi * n;
  if (m * n > dfz_max_finite(acc) / 4)
    return false;
  if (x.err == 0 && x.intval && m * n <= ldexp(1.0, dfz_precision(acc)))
    return fit_float(rdt, lo, hi, 0, true, out);
  double err = n * x.err + 2.0 * (double)(n - 1) * (double)n * m * ldexp(1.0, -dfz_precision(acc));
  if (err == 0)
    err = dfz_ulp(acc, m * n);
  return fit_float(rdt, lo, hi, err, false, out);
}

bool dfz_fact_dot(teeny_dtype rdt, teeny_dtype adt, const dfz_fact *a, int nargs, long k,
                  int prec, dfz_fact *out) {
  dfz_fact acc = nargs > 2 ? a[2] : dfz_fact_const(0);
  if (adt == TEENY_DT_I8) {
    if (!ints_exact(a, nargs))
      return false;
    *out = dfz_fact_any(rdt);
    return true;
  }
  if (!dfz_fact_finite(a[0]) || !dfz_fact_finite(a[1]) || !dfz_fact_finite(acc))
    return false;
  double ma = dfz_fact_mag(a[0]) + a[0].err, mb = dfz_fact_mag(a[1]) + a[1].err;
  double m = (double)k * ma * mb + dfz_fact_mag(acc) + acc.err;
  if (m > 1e30)
    return false;
  /* TF32 (and TF32x3, whose low parts are 0 then) hold integers up to 2048 */
  bool tf32_exact = adt != TEENY_DT_F32 || prec == DFZ_PREC_IEEE || (ma <= 2048 && mb <= 2048);
  if (ints_exact(a, nargs) && a[0].intval && a[1].intval && acc.intval && tf32_exact &&
      m <= ldexp(1.0, 24))
    return fit_float(rdt, -m, m, 0, true, out);
  double err = (double)k * (a[0].err * mb + a[1].err * ma) + acc.err +
               2.0 * (double)k * (double)k * ma * mb * ldexp(1.0, -24);
  if (adt == TEENY_DT_F32 && prec == DFZ_PREC_TF32)
    err += (double)k * ma * mb * ldexp(1.0, -9); /* both operands rounded to 11 bits */
  else if (adt == TEENY_DT_F32 && prec == DFZ_PREC_TF32X3)
    err += (double)k * ma * mb * ldexp(1.0, -20); /* the dropped low x low term */
  return fit_float(rdt, -m, m, err, false, out);
}

/* ---- the entry points ---------------------------------------------------------------------- */

static bool cmp_op(int op) { return op >= OP_LAND && op <= OP_GE; }

bool dfz_fact_op(int op, teeny_dtype rdt, teeny_dtype adt, const dfz_fact *a, int nargs, long n,
                 dfz_fact *out) {
  if (cmp_op(op) || op == OP_LNOT) {
    if (!ints_exact(a, nargs))
      return false;
    *out = dfz_fact_range(0, 1, true);
    return true;
  }
  switch (op) {
  case OP_WHERE:
    if (a[0].err > 0)
      return false;
    *out = dfz_fact_hull(a[1], a[2]);
    if (dfz_is_float(rdt))
      return fit_float(rdt, out->lo, out->hi, out->err, out->intval, out);
    return out->err == 0;
  case OP_SUM:
  case OP_CUMSUM:
    return sum_facts(rdt, adt, a[0], n, op == OP_CUMSUM, out);
  case OP_MAX:
  case OP_MIN:
    *out = a[0];
    return true;
  case OP_ARGMAX:
  case OP_ARGMIN:
    if (a[0].err > 0 || (dfz_is_float(adt) && !dfz_fact_finite(a[0])))
      return false;
    *out = dfz_fact_range(0, (double)n - 1, true);
    return true;
  case OP_DOT:
    return dfz_fact_dot(rdt, adt, a, nargs, n, DFZ_PREC_TF32, out);
  default:
    break;
  }
  if (!dfz_is_float(adt) || !dfz_is_float(rdt)) {
    if (!ints_exact(a, nargs))
      return false;
    return int_op(op, rdt, adt, a, out);
  }
  return float_op(op, rdt, a, nargs, out);
}

bool dfz_fact_cast(teeny_dtype from, teeny_dtype to, dfz_fact a, dfz_fact *out) {
  if (to == TEENY_DT_BOOL) {
    if (a.err > 0)
      return false;
    *out = dfz_fact_range(0, 1, true);
    return true;
  }
  if (!dfz_is_float(from)) {
    if (!dfz_is_float(to)) {
      *out = fit_int(to, a.lo, a.hi);
      return true;
    }
    return fit_float(to, a.lo, a.hi, 0, true, out);
  }
  if (!dfz_is_float(to)) {
    if (a.err > 0)
      return false;
    if (!dfz_fact_finite(a)) {
      *out = dfz_fact_any(to);
      return true;
    }
    double lo = fmax(trunc(a.lo), dfz_min_value(to)), hi = fmin(trunc(a.hi), dfz_max_finite(to));
    *out = dfz_fact_range(fmin(lo, hi), fmax(lo, hi), true);
    return true;
  }
  if (dfz_precision(to) >= dfz_precision(from) && dfz_max_finite(to) >= dfz_max_finite(from)) {
    *out = a;
    return true;
  }
  return fit_float(to, a.lo, a.hi, a.err, a.intval, out);
}

double dfz_fact_store_tol(dfz_fact f, teeny_dtype value_dt, teeny_dtype dt) {
  dfz_fact s;
  if (f.err == 0)
    return 0;
  if (!dfz_fact_cast(value_dt, dt, f, &s))
    return INFINITY;
  return s.err;
}
