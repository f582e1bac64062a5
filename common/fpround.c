/*
 * common/fpround.c — rounding a double to each float dtype (round to
 * nearest, ties to even; overflow to infinity; subnormals kept), used
 * wherever the compiler folds constants of a dtype narrower than f64.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/common.h"

/* Round x to a binary format with mant_bits fraction bits and minimum
 * normal exponent emin; values past max_finite become infinities. */
static double round_format(double x, int mant_bits, int emin, double max_finite) {
  if (isnan(x) || isinf(x) || x == 0.0)
    return x;
  int e;
  frexp(x, &e); /* |x| = m * 2^e, 0.5 <= m < 1: leading bit at 2^(e-1) */
  int lead = e - 1;
  if (lead < emin)
    lead = emin; /* subnormal range: the quantum stops shrinking */
  double quantum = ldexp(1.0, lead - mant_bits);
  double r = nearbyint(x / quantum) * quantum; /* exact scaling, RNE */
  if (fabs(r) > max_finite)
    return copysign(INFINITY, x);
  return r;
}

double teeny__round_dtype(teeny_dtype dt, double x) {
  switch (dt) {
  case TEENY_DT_F16:
    return round_format(x, 10, -14, 65504.0);
  case TEENY_DT_BF16:
    return round_format(x, 7, -126, ldexp(255.0 / 128.0, 127));
  case TEENY_DT_F32:
    return (double)(float)x;
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2:
    return teeny__fp8_round(dt, x);
  default:
    return x;
  }
}

/* The sum p + c (doubles) rounded to odd: when inexact, of the two doubles
 * around the exact sum, the one whose last bit is 1.  A later rounding to a
 * format at least two bits narrower is then the single rounding of the
 * exact sum.  The sum's error comes from Knuth's TwoSum. */
static double sum_round_odd(double p, double c) {
  double s = p + c;
  if (!isfinite(s))
    return s;
  double bb = s - p;
  double err = (p - (s - bb)) + (c - bb);
  uint64_t u;
  memcpy(&u, &s, sizeof u);
  if (err != 0.0 && !(u & 1)) /* s is the even neighbour: the odd one is toward err */
    s = nextafter(s, err > 0.0 ? INFINITY : -INFINITY);
  return s;
}

double teeny__fma_dtype(teeny_dtype dt, double a, double b, double c) {
  switch (dt) {
  case TEENY_DT_F64:
    return fma(a, b, c);
  case TEENY_DT_F16:
  case TEENY_DT_BF16: /* a * b is exact in a double (at most 22 bits) */
    return teeny__round_dtype(dt, sum_round_odd(a * b, c));
  default: /* f32; fp8 computes in f32 */
    return teeny__round_dtype(dt, (double)fmaf((float)a, (float)b, (float)c));
  }
}
