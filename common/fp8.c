/*
 * common/fp8.c — the two 8-bit float formats (OCP FP8, as torch's
 * float8_e4m3fn and float8_e5m2): their bits, their values, and rounding
 * to them.  The interpreter, constant folding, the client's scalar
 * arguments and the tools all use these; the code generator emits the same
 * arithmetic (dsl/nvptx/fp8.c) and the tests hold the two together.
 *
 *   f8e4m3  1 sign, 4 exponent (bias 7), 3 fraction bits; no infinities,
 *           NaN is S.1111.111; largest finite 448; smallest 2^-9.
 *   f8e5m2  1 sign, 5 exponent (bias 15), 2 fraction bits; IEEE-like:
 *           S.11111.00 is infinity, S.11111.xx (xx != 0) NaN; largest
 *           finite 57344; smallest 2^-16.
 *
 * Rounding to either format is Triton's on Hopper (cvt.rn.satfinite):
 * the value is first rounded to f32 (so f64 sources round twice, as on the
 * GPU), then to nearest, ties to even; a result past the largest finite
 * value, infinities included, saturates to the largest finite value of its
 * sign; NaN stays NaN (S.1111.111 / S.11111.11).  torch instead turns an
 * overflow into NaN (e4m3fn) or infinity (e5m2): docs/dsl.md says so.
 */
#include <math.h>

#include "common/common.h"

typedef struct fp8_format {
  int mant;      /* fraction bits */
  int bias;
  int emax_code; /* exponent field of the largest finite value */
  uint8_t max;   /* bits of the largest finite value */
  uint8_t nan;   /* bits of the (positive) NaN produced */
  bool has_inf;
} fp8_format;

static const fp8_format e4m3 = {3, 7, 15, 0x7e, 0x7f, false};
static const fp8_format e5m2 = {2, 15, 30, 0x7b, 0x7f, true};

static const fp8_format *format_of(teeny_dtype dt) {
  return dt == TEENY_DT_F8E5M2 ? &e5m2 : &e4m3;
}

bool teeny__dt_is_fp8(teeny_dtype dt) {
  return dt == TEENY_DT_F8E4M3 || dt == TEENY_DT_F8E5M2;
}

double teeny__fp8_value(teeny_dtype dt, uint8_t bits) {
  const fp8_format *f = format_of(dt);
  int e = (bits & 0x7f) >> f->mant, m = bits & ((1 << f->mant) - 1);
  double r;
  if (!f->has_inf && (bits & 0x7f) == 0x7f)
    r = NAN;
  else if (f->has_inf && e == (1 << (7 - f->mant)) - 1)
    r = m ? NAN : INFINITY;
  else if (e == 0)
    r = ldexp(m, 1 - f->bias - f->mant); /* subnormal */
  else
    r = ldexp(m + (1 << f->mant), e - f->bias - f->mant);
  return bits & 0x80 ? -r : r;
}

double teeny__fp8_max(teeny_dtype dt) {
  return teeny__fp8_value(dt, format_of(dt)->max);
}

uint8_t teeny__fp8_bits(teeny_dtype dt, double x) {
  const fp8_format *f = format_of(dt);
  uint8_t sign = signbit(x) ? 0x80 : 0;
  if (isnan(x))
    return sign | f->nan;
  if (!(fabs(x) < teeny__fp8_max(dt)))
    return sign | f->max; /* satfinite (and no f32 conversion out of range) */
  double a = fabs((double)(float)x); /* through f32, as the GPU converts */
  int emin = 1 - f->bias;  /* exponent of the smallest normal */
  int e = a == 0 ? emin : ilogb(a);
  if (e < emin)
    e = emin; /* subnormals share the smallest normal's quantum */
  double q = nearbyint(ldexp(a, f->mant - e)); /* ties to even (default mode) */
  /* q in [0, 2^(mant+1)]: 2^(mant+1) carries into the next binade */
  int code = (int)q;
  int biased = code >= (1 << f->mant) ? e + f->bias : 0;
  if (code >= (2 << f->mant)) {
    biased++;
    code >>= 1;
  }
  unsigned v = biased ? ((unsigned)biased << f->mant) | (unsigned)(code - (1 << f->mant))
                      : (unsigned)code;
  if (v > f->max)
    v = f->max; /* rounded up past the largest finite value */
  return sign | (uint8_t)v;
}

double teeny__fp8_round(teeny_dtype dt, double x) {
  return teeny__fp8_value(dt, teeny__fp8_bits(dt, x));
}
