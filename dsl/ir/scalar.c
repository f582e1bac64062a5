/*
 * dsl/ir/scalar.c — the language's scalar semantics (docs/dsl.md §4), one
 * element at a time; the contract is dsl/ir/scalar.h.  The interpreter and
 * constant folding both compute through here, so they cannot disagree.
 *
 * Invariant: arguments and results are canonical (ints wrapped to their
 * width and extended to 64 bits, bools 0/1, floats rounded to their format;
 * f16/bf16 by common/fpround.c in software, nearest-even), so comparisons
 * and casts can read any member directly.  The language defines every edge
 * case, so this file uses unsigned arithmetic for wrapping and guards
 * shifts, divisions and float-to-int conversions: it has no undefined
 * behaviour of its own.  Pure functions; no state.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "dsl/ir/scalar.h"

/* ---- integers ---------------------------------------------------------------- */

teeny_scalar teeny__scalar_int(teeny_dtype dt, uint64_t bits) {
  teeny_scalar r;
  int w = teeny__dt_bits(dt);
  if (w < 64) {
    uint64_t mask = ((uint64_t)1 << w) - 1;
    bits &= mask;
    if (teeny__dt_is_signed(dt) && (bits >> (w - 1)) & 1)
      bits |= ~mask;
  }
  r.u = bits;
  return r;
}

static uint64_t sdiv(int64_t a, int64_t b) {
  if (b == 0)
    return UINT64_MAX; /* -1 */
  if (b == -1)
    return 0 - (uint64_t)a; /* MIN / -1 = MIN */
  return (uint64_t)(a / b);
}

static uint64_t srem(int64_t a, int64_t b) {
  if (b == 0)
    return (uint64_t)a;
  if (b == -1)
    return 0;
  return (uint64_t)(a % b);
}

/* Arithmetic right shift by 0 <= n < 64, without shifting a negative. */
static uint64_t ashr(int64_t a, unsigned n) {
  return a >= 0 ? (uint64_t)(a >> n) : ~((uint64_t)(~a) >> n);
}

/* A shift amount that gives 0 (or -1): negative, or the width or more. */
static bool shift_too_far(teeny_dtype dt, teeny_scalar b) {
  if (teeny__dt_is_signed(dt) && b.i < 0)
    return true;
  return b.u >= (uint64_t)teeny__dt_bits(dt);
}

static uint64_t int_shift(teeny_opcode code, teeny_dtype dt, teeny_scalar a,
                          teeny_scalar b) {
  bool s = teeny__dt_is_signed(dt);
  if (shift_too_far(dt, b))
    return code == IR_SHR && s && a.i < 0 ? UINT64_MAX : 0;
  if (code == IR_SHL)
    return a.u << b.u;
  return s ? ashr(a.i, (unsigned)b.u) : a.u >> b.u;
}

/* The high half of the product of a and b as unsigned ints of dt's width. */
static uint64_t umulhi(teeny_dtype dt, uint64_t a, uint64_t b) {
  int w = teeny__dt_bits(dt);
  if (w >= 64)
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
  uint64_t m = (UINT64_C(1) << w) - 1;
  return ((a & m) * (b & m)) >> w;
}

static bool int_le(teeny_dtype dt, teeny_scalar a, teeny_scalar b) {
  return teeny__dt_is_signed(dt) ? a.i <= b.i : a.u <= b.u;
}

static teeny_scalar int_binop(teeny_opcode code, teeny_dtype dt, teeny_scalar a,
                              teeny_scalar b) {
  bool s = teeny__dt_is_signed(dt);
  uint64_t r;
  switch (code) {
  case IR_ADD: r = a.u + b.u; break;
  case IR_SUB: r = a.u - b.u; break;
  case IR_MUL: r = a.u * b.u; break;
  case IR_DIV: r = s ? sdiv(a.i, b.i) : b.u ? a.u / b.u : UINT64_MAX; break;
  case IR_REM: r = s ? srem(a.i, b.i) : b.u ? a.u % b.u : a.u; break;
  case IR_AND: r = a.u & b.u; break;
  case IR_OR: r = a.u | b.u; break;
  case IR_XOR: r = a.u ^ b.u; break;
  case IR_SHL:
  case IR_SHR: r = int_shift(code, dt, a, b); break;
  case IR_MIN: r = int_le(dt, a, b) ? a.u : b.u; break;
  case IR_MAX: r = int_le(dt, a, b) ? b.u : a.u; break;
  case IR_UMULHI: r = umulhi(dt, a.u, b.u); break;
  default: r = 0; break;
  }
  return teeny__scalar_int(dt, r);
}

static teeny_scalar int_unop(teeny_opcode code, teeny_dtype dt, teeny_scalar a) {
  switch (code) {
  case IR_NEG:
    return teeny__scalar_int(dt, 0 - a.u);
  case IR_NOT:
    return teeny__scalar_int(dt, ~a.u); /* bool: bit 0 flips */
  case IR_ABS:
    return teeny__scalar_int(dt, teeny__dt_is_signed(dt) && a.i < 0 ? 0 - a.u : a.u);
  default:
    return teeny__scalar_int(dt, 0);
  }
}

/* ---- float formats ---------------------------------------------------------- */

static double round_f32(double x) {
  /* (float) is exact IEEE rounding in range; past FLT_MAX ISO C leaves it
   * undefined, so that case is decided here: up to half an ulp above
   * FLT_MAX rounds down (a tie goes to inf, FLT_MAX being odd) */
  if (!(fabs(x) > FLT_MAX) || isinf(x))
    return (float)x;
  return copysign(fabs(x) < ldexp(2.0 - ldexp(1.0, -24), 127) ? FLT_MAX : INFINITY, x);
}

/* f16 and bf16 use the compiler's one software rounding (common/fpround.c). */
double teeny__scalar_round(teeny_dtype dt, double x) {
  switch (dt) {
  case TEENY_DT_F16:
  case TEENY_DT_BF16:
  case TEENY_DT_F8E4M3: /* through f32 (common/fp8.c) */
  case TEENY_DT_F8E5M2: return teeny__round_dtype(dt, x);
  case TEENY_DT_F32: return round_f32(x);
  default: return x;
  }
}

/* Significant bits of a float dtype. */
static int float_precision(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_F16: return 11;
  case TEENY_DT_BF16: return 8;
  case TEENY_DT_F8E4M3: return 4;
  case TEENY_DT_F8E5M2: return 3;
  case TEENY_DT_F32: return 24;
  default: return 53;
  }
}

/* ---- float arithmetic ----------------------------------------------------------
 * Operands are exact values of their format, so one IEEE double operation
 * followed by one rounding gives the correctly rounded +, -, *, / of f32,
 * f16 and bf16 (double has more than 2p+2 bits for each). */

/* minimum and maximum are IEEE 754-2019's minimumNumber and maximumNumber:
 * a NaN operand gives the other operand, and -0 orders below +0 (C's fmin
 * and fmax may return either zero; the GPU's min and max do not). */
static double float_minmax(bool max, double a, double b) {
  if (isnan(a))
    return b;
  if (isnan(b))
    return a;
  if (a == b)
    return signbit(a) == max ? b : a;
  return (a < b) == max ? b : a;
}

static double float_binop(teeny_opcode code, double a, double b) {
  switch (code) {
  case IR_ADD: return a + b;
  case IR_SUB: return a - b;
  case IR_MUL: return a * b;
  case IR_DIV: return a / b;
  case IR_REM: return fmod(a, b);
  case IR_MIN: return float_minmax(false, a, b);
  case IR_MAX: return float_minmax(true, a, b);
  case IR_POW: return pow(a, b);
  case IR_ATAN2: return atan2(a, b);
  default: return NAN;
  }
}

static double float_math(teeny_opcode code, double a) {
  switch (code) {
  case IR_NEG: return -a;
  case IR_ABS: return fabs(a);
  case IR_FLOOR: return floor(a);
  case IR_CEIL: return ceil(a);
  case IR_EXP: return exp(a);
  case IR_EXP2: return exp2(a);
  case IR_LOG: return log(a);
  case IR_LOG2: return log2(a);
  case IR_SQRT: return sqrt(a);
  case IR_RSQRT: return 1.0 / sqrt(a);
  case IR_SIN: return sin(a);
  case IR_COS: return cos(a);
  case IR_TANH: return tanh(a);
  case IR_ERF: return erf(a);
  case IR_ERFC: return erfc(a);
  case IR_LOG1P: return log1p(a);
  case IR_EXPM1: return expm1(a);
  case IR_ASIN: return asin(a);
  case IR_ACOS: return acos(a);
  case IR_ATAN: return atan(a);
  default: return NAN;
  }
}

teeny_scalar teeny__scalar_binop(teeny_opcode code, teeny_dtype dt,
                                 teeny_scalar a, teeny_scalar b) {
  teeny_scalar r;
  if (!teeny__dt_is_float(dt))
    return int_binop(code, dt, a, b);
  r.f = teeny__scalar_round(dt, float_binop(code, a.f, b.f));
  return r;
}

teeny_scalar teeny__scalar_unop(teeny_opcode code, teeny_dtype dt, teeny_scalar a) {
  teeny_scalar r;
  if (!teeny__dt_is_float(dt))
    return int_unop(code, dt, a);
  double x = float_math(code, a.f);
  if (dt == TEENY_DT_F16 || dt == TEENY_DT_BF16 || teeny__dt_is_fp8(dt))
    x = round_f32(x);
  r.f = teeny__scalar_round(dt, x);
  return r;
}

double teeny__scalar_fma(teeny_dtype dt, double a, double b, double c) {
  return teeny__fma_dtype(dt, a, b, c); /* rounded once, as the GPU's fma */
}

/* ---- comparisons ---------------------------------------------------------------- */

static bool float_compare(teeny_cmp_pred pred, double a, double b) {
  switch (pred) {
  case CMP_EQ: return a == b;
  case CMP_NE: return a != b;
  case CMP_LT: return a < b;
  case CMP_LE: return a <= b;
  case CMP_GT: return a > b;
  case CMP_GE: return a >= b;
  }
  return false;
}

bool teeny__scalar_compare(teeny_cmp_pred pred, teeny_dtype dt, teeny_scalar a,
                           teeny_scalar b) {
  if (teeny__dt_is_float(dt))
    return float_compare(pred, a.f, b.f);
  bool s = teeny__dt_is_signed(dt);
  switch (pred) {
  case CMP_EQ: return a.u == b.u;
  case CMP_NE: return a.u != b.u;
  case CMP_LT: return s ? a.i < b.i : a.u < b.u;
  case CMP_LE: return s ? a.i <= b.i : a.u <= b.u;
  case CMP_GT: return s ? a.i > b.i : a.u > b.u;
  case CMP_GE: return s ? a.i >= b.i : a.u >= b.u;
  }
  return false;
}

/* ---- conversions ------------------------------------------------------------ */

/* m rounded to nearest-even to p significant bits (exact as a double). */
static double round_mag(uint64_t m, int p) {
  if (m >> p == 0)
    return (double)m;
  int msb = 63;
  while (!(m >> msb & 1))
    msb--;
  int shift = msb + 1 - p;
  uint64_t q = m >> shift, rest = m & (((uint64_t)1 << shift) - 1);
  uint64_t half = (uint64_t)1 << (shift - 1);
  if (rest > half || (rest == half && (q & 1)))
    q++;
  return ldexp((double)q, shift);
}

/* An int (signedness from `from`) to the float dtype `to`, one rounding. */
static double int_to_float(teeny_dtype from, teeny_dtype to, teeny_scalar v) {
  bool neg = teeny__dt_is_signed(from) && v.i < 0;
  double r = round_mag(neg ? 0 - v.u : v.u, float_precision(to));
  return teeny__scalar_round(to, neg ? -r : r); /* exact, or inf past the range */
}

/* Truncate toward zero and saturate to the int dtype `to`; NaN gives 0. */
static teeny_scalar float_to_int(teeny_dtype to, double x) {
  int w = teeny__dt_bits(to);
  if (isnan(x))
    return teeny__scalar_int(to, 0);
  double t = trunc(x);
  if (teeny__dt_is_signed(to)) {
    double lim = ldexp(1.0, w - 1);
    if (t >= lim)
      return teeny__scalar_int(to, ((uint64_t)1 << (w - 1)) - 1);
    if (t <= -lim)
      return teeny__scalar_int(to, (uint64_t)1 << (w - 1));
    return teeny__scalar_int(to, (uint64_t)(int64_t)t);
  }
  if (t <= 0)
    return teeny__scalar_int(to, 0);
  if (t >= ldexp(1.0, w))
    return teeny__scalar_int(to, UINT64_MAX);
  return teeny__scalar_int(to, (uint64_t)t);
}

/* Float to bool is `!= 0` (so NaN is true), as C and LLVM's fcmp une do. */
teeny_scalar teeny__scalar_cast(teeny_dtype from, teeny_dtype to, teeny_scalar v) {
  teeny_scalar r;
  bool ffrom = teeny__dt_is_float(from);
  if (to == TEENY_DT_BOOL) {
    r.u = ffrom ? v.f != 0 : v.u != 0;
  } else if (teeny__dt_is_float(to)) {
    r.f = ffrom ? teeny__scalar_round(to, v.f) : int_to_float(from, to, v);
  } else {
    r = ffrom ? float_to_int(to, v.f) : teeny__scalar_int(to, v.u);
  }
  return r;
}

teeny_scalar teeny__scalar_normalize(teeny_dtype dt, teeny_scalar v) {
  if (teeny__dt_is_float(dt)) {
    v.f = teeny__scalar_round(dt, v.f);
    return v;
  }
  if (dt == TEENY_DT_BOOL) {
    v.u = v.u != 0;
    return v;
  }
  return dt == TEENY_DT_PTR ? v : teeny__scalar_int(dt, v.u);
}

/* ---- reinterpreting bits ---------------------------------------------------------- */

/* The IEEE bits of float v of dtype dt (f16/bf16: 16 bits, f32: 32, f64: 64). */
static uint64_t float_bits(teeny_dtype dt, double v) {
  if (teeny__dt_is_fp8(dt))
    return teeny__fp8_bits(dt, v);
  if (dt == TEENY_DT_F64) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
  }
  float f = (float)teeny__scalar_round(dt == TEENY_DT_F32 ? TEENY_DT_F32 : dt, v);
  uint32_t u;
  memcpy(&u, &f, 4);
  if (dt == TEENY_DT_F32)
    return u;
  if (dt == TEENY_DT_BF16) /* an exact bf16 value: the top half */
    return isnan(f) ? (u >> 16) | 0x40 : u >> 16;
  /* f16 from the (exactly representable) f32 value */
  uint32_t sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
  if (a > 0x7f800000)
    return sign | 0x7e00 | ((a >> 13) & 0x3ff);
  if (a == 0x7f800000)
    return sign | 0x7c00;
  if (a < 0x38800000) /* subnormal: |v| = m 2^-24 exactly */
    return sign | (uint32_t)(fabs((double)f) * 16777216.0);
  return sign | ((a - 0x38000000) >> 13);
}

static double float_of_bits(teeny_dtype dt, uint64_t bits) {
  if (teeny__dt_is_fp8(dt))
    return teeny__fp8_value(dt, (uint8_t)bits);
  if (dt == TEENY_DT_F64) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
  }
  if (dt == TEENY_DT_F32 || dt == TEENY_DT_BF16) {
    uint32_t u = dt == TEENY_DT_F32 ? (uint32_t)bits : (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int e = (int)(bits >> 10) & 31, m = (int)(bits & 1023);
  double r = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return bits & 0x8000 ? -r : r;
}

teeny_scalar teeny__scalar_bitcast(teeny_dtype from, teeny_dtype to, teeny_scalar v) {
  uint64_t bits = teeny__dt_is_float(from) ? float_bits(from, v.f) : v.u;
  int w = teeny__dt_bits(from);
  if (w < 64)
    bits &= (UINT64_C(1) << w) - 1;
  teeny_scalar r;
  if (teeny__dt_is_float(to))
    r.f = float_of_bits(to, bits);
  else
    r = teeny__scalar_int(to, bits);
  return r;
}
