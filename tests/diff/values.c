/*
 * tests/diff/values.c — element values of every dtype for the fuzzer:
 * sizes and ranges, rounding to a float format, one element read or
 * written as a double or as raw bits (f16/bf16 converted here), and the
 * fills that initialise a buffer (zeros, iota, random integers or reals,
 * special floats, poison).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/diff/dfz.h"

int dfz_esize(teeny_dtype dt) { return dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(dt); }

bool dfz_is_float(teeny_dtype dt) {
  return dt == TEENY_DT_F16 || dt == TEENY_DT_BF16 || dt == TEENY_DT_F32 || dt == TEENY_DT_F64 ||
         dfz_is_fp8(dt);
}

/* fp8 appears only as dot operands: casts of exact small integers. */
bool dfz_is_fp8(teeny_dtype dt) { return dt == TEENY_DT_F8E4M3 || dt == TEENY_DT_F8E5M2; }

bool dfz_is_signed(teeny_dtype dt) {
  return dt == TEENY_DT_I8 || dt == TEENY_DT_I16 || dt == TEENY_DT_I32 || dt == TEENY_DT_I64;
}

bool dfz_is_int(teeny_dtype dt) { return dt >= TEENY_DT_BOOL && dt <= TEENY_DT_U64; }

int dfz_bits(teeny_dtype dt) { return dt == TEENY_DT_BOOL ? 1 : 8 * teeny_dtype_size(dt); }

int dfz_precision(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_F16: return 11;
  case TEENY_DT_BF16: return 8;
  case TEENY_DT_F32: return 24;
  case TEENY_DT_F64: return 53;
  case TEENY_DT_F8E4M3: return 4;
  case TEENY_DT_F8E5M2: return 3;
  default: return dfz_bits(dt);
  }
}

double dfz_max_finite(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL: return 1;
  case TEENY_DT_F16: return 65504.0;
  case TEENY_DT_BF16: return ldexp(255.0 / 128.0, 127);
  case TEENY_DT_F32: return ldexp(2.0 - ldexp(1.0, -23), 127);
  case TEENY_DT_F64: return 1.7976931348623157e308;
  case TEENY_DT_F8E4M3: return 448.0;
  case TEENY_DT_F8E5M2: return 57344.0;
  default:
    return dfz_is_signed(dt) ? ldexp(1.0, dfz_bits(dt) - 1) - 1 : ldexp(1.0, dfz_bits(dt)) - 1;
  }
}

double dfz_min_value(teeny_dtype dt) {
  if (dfz_is_float(dt))
    return -dfz_max_finite(dt);
  return dfz_is_signed(dt) ? -ldexp(1.0, dfz_bits(dt) - 1) : 0;
}

/* Round to a format with `mant` fraction bits, minimum normal exponent emin. */
static double round_format(double x, int mant, int emin, double maxf) {
  if (x == 0 || isnan(x) || isinf(x))
    return x;
  int e;
  frexp(x, &e);
  int lead = e - 1 < emin ? emin : e - 1;
  double q = ldexp(1.0, lead - mant);
  double r = nearbyint(x / q) * q;
  return fabs(r) > maxf ? copysign(INFINITY, x) : r;
}

double dfz_round(teeny_dtype dt, double x) {
  switch (dt) {
  case TEENY_DT_F16: return round_format(x, 10, -14, 65504.0);
  case TEENY_DT_BF16: return round_format(x, 7, -126, dfz_max_finite(dt));
  case TEENY_DT_F32: return round_format(x, 23, -126, dfz_max_finite(dt));
  case TEENY_DT_F8E4M3: /* the language's fp8 conversions saturate */
  case TEENY_DT_F8E5M2: {
    double r = round_format(x, dfz_precision(dt) - 1, dt == TEENY_DT_F8E4M3 ? -6 : -14, INFINITY);
    return fabs(r) > dfz_max_finite(dt) ? copysign(dfz_max_finite(dt), x) : r;
  }
  default: return x;
  }
}

double dfz_ulp(teeny_dtype dt, double m) {
  if (!dfz_is_float(dt))
    return 0;
  int p = dfz_precision(dt);
  double tiny = dt == TEENY_DT_F16      ? ldexp(1.0, -24)
                : dt == TEENY_DT_F64    ? ldexp(1.0, -1074)
                : dt == TEENY_DT_F8E4M3 ? ldexp(1.0, -9)
                : dt == TEENY_DT_F8E5M2 ? ldexp(1.0, -16)
                                        : ldexp(1.0, -149);
  double u = ldexp(fabs(m), 1 - p);
  return u > tiny ? u : tiny;
}

/* ---- half formats ------------------------------------------------------------------------ */

static uint16_t half_bits(teeny_dtype dt, double x) {
  float f = (float)dfz_round(dt, x);
  uint32_t u;
  memcpy(&u, &f, 4);
  if (dt == TEENY_DT_BF16)
    return isnan(f) ? 0x7FC0 : (uint16_t)(u >> 16); /* exact: already rounded */
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  if (isnan(f))
    return 0x7E00;
  double a = fabs((double)f);
  if (isinf(a))
    return sign | 0x7C00;
  if (a == 0)
    return sign;
  int e;
  double m = frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
  if (e < -13)             /* subnormal: a = k 2^-24 */
    return sign | (uint16_t)ldexp(a, 24);
  return sign | (uint16_t)((e + 14) << 10) | (uint16_t)((uint32_t)ldexp(m, 11) & 1023);
}

static double half_value(teeny_dtype dt, uint16_t h) {
  if (dt == TEENY_DT_BF16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 1024, e - 25);
  return s ? -v : v;
}

/* ---- elements ------------------------------------------------------------------------------ */

uint64_t dfz_get_bits(teeny_dtype dt, const void *buf, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)dfz_esize(dt);
  uint64_t v = 0;
  memcpy(&v, p, (size_t)dfz_esize(dt)); /* little endian */
  return v;
}

void dfz_put_bits(teeny_dtype dt, void *buf, size_t i, uint64_t bits) {
  unsigned char *p = (unsigned char *)buf + i * (size_t)dfz_esize(dt);
  memcpy(p, &bits, (size_t)dfz_esize(dt));
}

double dfz_get(teeny_dtype dt, const void *buf, size_t i) {
  uint64_t b = dfz_get_bits(dt, buf, i);
  switch (dt) {
  case TEENY_DT_BOOL: return (double)(b & 0xff);
  case TEENY_DT_I8: return (double)(int8_t)b;
  case TEENY_DT_I16: return (double)(int16_t)b;
  case TEENY_DT_I32: return (double)(int32_t)b;
  case TEENY_DT_I64: return (double)(int64_t)b;
  case TEENY_DT_U8: case TEENY_DT_U16: case TEENY_DT_U32: case TEENY_DT_U64: return (double)b;
  case TEENY_DT_F16: case TEENY_DT_BF16: return half_value(dt, (uint16_t)b);
  case TEENY_DT_F32: { uint32_t u = (uint32_t)b; float f; memcpy(&f, &u, 4); return f; }
  case TEENY_DT_F64: { double d; memcpy(&d, &b, 8); return d; }
  default: return 0;
  }
}

/* v converted as a cast would: ints wrap, floats round. */
void dfz_put(teeny_dtype dt, void *buf, size_t i, double v) {
  uint64_t b = 0;
  if (dt == TEENY_DT_BOOL) {
    b = v != 0;
  } else if (dfz_is_int(dt)) {
    double w = fmod(trunc(v), 18446744073709551616.0); /* wrap modulo 2^64 */
    if (w < 0)
      w += 18446744073709551616.0;
    b = w >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)w;
  } else if (dt == TEENY_DT_F16 || dt == TEENY_DT_BF16) {
    b = half_bits(dt, v);
  } else if (dt == TEENY_DT_F32) {
    float f = (float)dfz_round(dt, v);
    uint32_t u;
    memcpy(&u, &f, 4);
    b = u;
  } else if (dt == TEENY_DT_F64) {
    memcpy(&b, &v, 8);
  }
  dfz_put_bits(dt, buf, i, b);
}

void dfz_format(teeny_dtype dt, const void *buf, size_t i, char *out, size_t size) {
  uint64_t b = dfz_get_bits(dt, buf, i);
  if (dt == TEENY_DT_I64)
    snprintf(out, size, "%lld", (long long)(int64_t)b);
  else if (dt == TEENY_DT_U64)
    snprintf(out, size, "%llu", (unsigned long long)b);
  else if (dfz_is_int(dt))
    snprintf(out, size, "%.0f", dfz_get(dt, buf, i));
  else
    snprintf(out, size, "%.9g", dfz_get(dt, buf, i));
}

/* ---- fills ------------------------------------------------------------------------------------ */

static const char *const fill_names[DFZ_FILL__COUNT] = {
    "poison", "zeros", "iota", "ints", "reals", "bits", "special"};

const char *dfz_fill_name(dfz_fill_kind k) {
  return k >= 0 && k < DFZ_FILL__COUNT ? fill_names[k] : "?";
}

dfz_fill_kind dfz_fill_parse(const char *name) {
  for (int k = 0; k < DFZ_FILL__COUNT; k++)
    if (strcmp(name, fill_names[k]) == 0)
      return (dfz_fill_kind)k;
  return DFZ_FILL__COUNT;
}

static double special_value(teeny_dtype dt, dfz_rng *r) {
  switch (dfz_below(r, 12)) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return INFINITY;
  case 3: return -INFINITY;
  case 4: return NAN;
  case 5: return ldexp(dfz_range(r, 1, 7), dt == TEENY_DT_F16 ? -24 : dt == TEENY_DT_F64 ? -1070 : -147);
  case 6: return dfz_max_finite(dt) * (dfz_chance(r, 50) ? 1 : -1);
  case 7: return ldexp(1.0, dfz_precision(dt)) + 1; /* rounds */
  case 8: return dfz_unit(r) * 1e6 - 5e5;
  default: return dfz_range(r, -8, 8);
  }
}

void dfz_fill_buffer(const dfz_fill *f, teeny_dtype dt, void *buf, size_t count) {
  dfz_rng r = {f->seed * 0x2545F4914F6CDD1Dull + 17};
  for (size_t i = 0; i < count; i++) {
    switch (f->kind) {
    case DFZ_FILL_POISON: dfz_put_bits(dt, buf, i, UINT64_MAX); break;
    case DFZ_FILL_ZEROS: dfz_put_bits(dt, buf, i, 0); break;
    case DFZ_FILL_IOTA:
      if (dfz_is_int(dt) && dt != TEENY_DT_BOOL)
        dfz_put_bits(dt, buf, i, (uint64_t)i);
      else
        dfz_put(dt, buf, i, dt == TEENY_DT_BOOL ? (double)(i & 1) : (double)i);
      break;
    case DFZ_FILL_INTS: {
      long span = (long)(f->hi - f->lo) + 1;
      dfz_put(dt, buf, i, f->lo + (double)(dfz_next(&r) % (uint64_t)(span > 0 ? span : 1)));
      break;
    }
    case DFZ_FILL_REALS: dfz_put(dt, buf, i, f->lo + (f->hi - f->lo) * dfz_unit(&r)); break;
    case DFZ_FILL_BITS:
      if (dfz_is_float(dt))
        dfz_put(dt, buf, i, (dfz_unit(&r) * 2 - 1) * 1e4);
      else if (dt == TEENY_DT_BOOL)
        dfz_put_bits(dt, buf, i, dfz_next(&r) & 1);
      else
        dfz_put_bits(dt, buf, i, dfz_next(&r));
      break;
    case DFZ_FILL_SPECIAL:
      if (dfz_is_float(dt))
        dfz_put(dt, buf, i, special_value(dt, &r));
      else if (dt == TEENY_DT_BOOL)
        dfz_put_bits(dt, buf, i, dfz_next(&r) & 1);
      else
        dfz_put_bits(dt, buf, i, dfz_chance(&r, 50) ? dfz_next(&r) : (uint64_t)dfz_range(&r, -2, 2));
      break;
    default: break;
    }
  }
}
