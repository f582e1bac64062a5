/*
 * tests/unit/test_scalar.c — the language's scalar semantics (dsl/ir/scalar.c,
 * docs/dsl.md §4) at their edges, and constant folding agreeing with the
 * interpreter on them.
 *
 * The first cases call teeny__scalar_* directly: integer division by zero
 * and MIN / -1, shifts by the width or more, narrow-int wrapping, f16/bf16/
 * f32 rounding (ties to even, overflow to inf), int -> float rounded once
 * from the exact integer, float -> int saturation and NaN.  The last one
 * compiles, per case, a kernel computing an expression from its arguments
 * (run by the interpreter) and a kernel computing it from literals (folded
 * by irgen: its MLIR must hold no arithmetic), and checks that both store
 * the expected value, bit for bit the same.
 */
#include <check.h>
#include <float.h>
#include <math.h>

#include "dsl/ir/scalar.h"
#include "kernel_util.h"

/* ---- helpers ------------------------------------------------------------------- */

static teeny_scalar ival(teeny_dtype dt, int64_t v) {
  return teeny__scalar_int(dt, (uint64_t)v);
}

static teeny_scalar fval(double v) {
  teeny_scalar s;
  s.f = v;
  return s;
}

/* a code b on ints of dtype dt; the result as an int64 (.i) */
static int64_t ibin(teeny_opcode code, teeny_dtype dt, int64_t a, int64_t b) {
  return teeny__scalar_binop(code, dt, ival(dt, a), ival(dt, b)).i;
}

static double fbin(teeny_opcode code, teeny_dtype dt, double a, double b) {
  return teeny__scalar_binop(code, dt, fval(a), fval(b)).f;
}

/* int bits of dtype `from` cast to the float dtype `to` */
static double i2f(teeny_dtype from, teeny_dtype to, uint64_t bits) {
  return teeny__scalar_cast(from, to, teeny__scalar_int(from, bits)).f;
}

/* float x (already of dtype `from`) cast to the int dtype `to` */
static teeny_scalar f2i(teeny_dtype from, teeny_dtype to, double x) {
  return teeny__scalar_cast(from, to, fval(x));
}

static double round_to(teeny_dtype dt, double x) { return teeny__scalar_round(dt, x); }

/* Same value, same sign of zero, or both NaN. */
static bool same_float(double x, double y) {
  if (isnan(x) || isnan(y))
    return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

#define ck_float_eq(x, y)                                                     \
  ck_assert_msg(same_float((x), (y)), "%s = %a, want %a", #x, (double)(x),   \
                (double)(y))

/* ---- integers ---------------------------------------------------------------- */

START_TEST(division_by_zero_and_min_over_minus_one) {
  /* docs/dsl.md §4: x / 0 is -1 (all bits set), x % 0 is x */
  ck_assert_int_eq(ibin(IR_DIV, TEENY_DT_I32, 7, 0), -1);
  ck_assert_int_eq(ibin(IR_DIV, TEENY_DT_I32, -7, 0), -1);
  ck_assert_int_eq(ibin(IR_REM, TEENY_DT_I32, 7, 0), 7);
  ck_assert_int_eq(ibin(IR_REM, TEENY_DT_I32, -7, 0), -7);
  ck_assert_uint_eq(teeny__scalar_binop(IR_DIV, TEENY_DT_U32, ival(TEENY_DT_U32, 5),
                                        ival(TEENY_DT_U32, 0)).u, UINT32_MAX);
  ck_assert_uint_eq(teeny__scalar_binop(IR_REM, TEENY_DT_U32, ival(TEENY_DT_U32, 5),
                                        ival(TEENY_DT_U32, 0)).u, 5);
  ck_assert_uint_eq(teeny__scalar_binop(IR_DIV, TEENY_DT_U8, ival(TEENY_DT_U8, 5),
                                        ival(TEENY_DT_U8, 0)).u, 255);
  /* MIN / -1 is MIN, MIN % -1 is 0 */
  ck_assert_int_eq(ibin(IR_DIV, TEENY_DT_I32, INT32_MIN, -1), INT32_MIN);
  ck_assert_int_eq(ibin(IR_REM, TEENY_DT_I32, INT32_MIN, -1), 0);
  ck_assert_int_eq(ibin(IR_DIV, TEENY_DT_I8, INT8_MIN, -1), INT8_MIN);
  ck_assert_int_eq(ibin(IR_DIV, TEENY_DT_I64, INT64_MIN, -1), INT64_MIN);
  ck_assert_int_eq(ibin(IR_REM, TEENY_DT_I64, INT64_MIN, -1), 0);
  /* truncation toward zero; the remainder has the dividend's sign */
  ck_assert_int_eq(ibin(IR_DIV, TEENY_DT_I32, -7, 2), -3);
  ck_assert_int_eq(ibin(IR_REM, TEENY_DT_I32, -7, 2), -1);
  ck_assert_int_eq(ibin(IR_REM, TEENY_DT_I32, 7, -2), 1);
}
END_TEST

START_TEST(shifts_by_the_width_or_more) {
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I32, 1, 31), INT32_MIN);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I32, 1, 32), 0);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I32, 1, 100), 0);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I32, 1, -1), 0);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I32, -8, 1), -4);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I32, INT32_MIN, 31), -1);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I32, -8, 32), -1); /* >> of a negative: -1 */
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I32, -8, -1), -1);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I32, 8, 32), 0);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I32, 8, -1), 0);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I64, 1, 63), INT64_MIN);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I64, 1, 64), 0);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I64, -1, 64), -1);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I8, INT8_MIN, 7), -1);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_I8, INT8_MIN, 8), -1);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_I8, 1, 7), INT8_MIN);
  /* unsigned: logical, and a huge amount is not negative */
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_U32, 0x80000000, 31), 1);
  ck_assert_int_eq(ibin(IR_SHR, TEENY_DT_U32, 0x80000000, 32), 0);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_U32, 1, 0xffffffff), 0);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_U8, 1, 7), 128);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_U8, 1, 8), 0);
  ck_assert_int_eq(ibin(IR_SHL, TEENY_DT_U8, 255, 1), 254);
}
END_TEST

START_TEST(narrow_ints_wrap) {
  ck_assert_int_eq(ibin(IR_ADD, TEENY_DT_U8, 255, 1), 0);
  ck_assert_int_eq(ibin(IR_SUB, TEENY_DT_U8, 0, 1), 255);
  ck_assert_int_eq(ibin(IR_MUL, TEENY_DT_U8, 200, 2), 144);
  ck_assert_int_eq(ibin(IR_ADD, TEENY_DT_I8, 127, 1), -128);
  ck_assert_int_eq(ibin(IR_SUB, TEENY_DT_I8, -128, 1), 127);
  ck_assert_int_eq(ibin(IR_MUL, TEENY_DT_I8, -128, -1), -128);
  ck_assert_int_eq(ibin(IR_ADD, TEENY_DT_U16, 65535, 1), 0);
  ck_assert_int_eq(ibin(IR_ADD, TEENY_DT_I32, INT32_MAX, 1), INT32_MIN);
  ck_assert_int_eq(ibin(IR_MUL, TEENY_DT_I32, 65536, 65536), 0);
  ck_assert_int_eq(teeny__scalar_unop(IR_NEG, TEENY_DT_I8, ival(TEENY_DT_I8, -128)).i, -128);
  ck_assert_int_eq(teeny__scalar_unop(IR_ABS, TEENY_DT_I8, ival(TEENY_DT_I8, -128)).i, -128);
  ck_assert_int_eq(teeny__scalar_unop(IR_NOT, TEENY_DT_U8, ival(TEENY_DT_U8, 0)).i, 255);
  ck_assert_int_eq(teeny__scalar_unop(IR_NOT, TEENY_DT_BOOL, ival(TEENY_DT_BOOL, 1)).i, 0);
  ck_assert_int_eq(teeny__scalar_unop(IR_NOT, TEENY_DT_BOOL, ival(TEENY_DT_BOOL, 0)).i, 1);
  /* canonical form: wrapped, extended by the dtype's signedness */
  ck_assert_int_eq(teeny__scalar_int(TEENY_DT_I8, 0x1ff).i, -1);
  ck_assert_uint_eq(teeny__scalar_int(TEENY_DT_U16, UINT64_MAX).u, 65535);
  ck_assert_uint_eq(teeny__scalar_int(TEENY_DT_BOOL, 2).u, 0); /* bit 0 */
  ck_assert_uint_eq(teeny__scalar_normalize(TEENY_DT_BOOL, ival(TEENY_DT_U8, 2)).u, 1);
  /* int -> int casts wrap, extending by the source's signedness; to bool is != 0 */
  ck_assert_int_eq(teeny__scalar_cast(TEENY_DT_I32, TEENY_DT_U8, ival(TEENY_DT_I32, 300)).i, 44);
  ck_assert_int_eq(teeny__scalar_cast(TEENY_DT_I32, TEENY_DT_U8, ival(TEENY_DT_I32, -1)).i, 255);
  ck_assert_int_eq(teeny__scalar_cast(TEENY_DT_U8, TEENY_DT_I8, ival(TEENY_DT_U8, 200)).i, -56);
  ck_assert_int_eq(teeny__scalar_cast(TEENY_DT_I64, TEENY_DT_I32,
                                      ival(TEENY_DT_I64, (INT64_C(1) << 32) + 5)).i, 5);
  ck_assert_uint_eq(teeny__scalar_cast(TEENY_DT_I8, TEENY_DT_U64, ival(TEENY_DT_I8, -1)).u,
                    UINT64_MAX);
  ck_assert_int_eq(teeny__scalar_cast(TEENY_DT_U8, TEENY_DT_I64, ival(TEENY_DT_U8, 255)).i, 255);
  ck_assert_int_eq(teeny__scalar_cast(TEENY_DT_I32, TEENY_DT_BOOL, ival(TEENY_DT_I32, 256)).i, 1);
}
END_TEST

START_TEST(int_compare_and_min_max) {
  ck_assert(teeny__scalar_compare(CMP_LT, TEENY_DT_I32, ival(TEENY_DT_I32, -1),
                                  ival(TEENY_DT_I32, 1)));
  ck_assert(!teeny__scalar_compare(CMP_LT, TEENY_DT_U32, ival(TEENY_DT_U32, -1),
                                   ival(TEENY_DT_U32, 1)));
  ck_assert(teeny__scalar_compare(CMP_GT, TEENY_DT_U64, ival(TEENY_DT_U64, -1),
                                  ival(TEENY_DT_U64, 0)));
  ck_assert(teeny__scalar_compare(CMP_LT, TEENY_DT_I64, ival(TEENY_DT_I64, INT64_MIN),
                                  ival(TEENY_DT_I64, INT64_MAX)));
  ck_assert_int_eq(ibin(IR_MIN, TEENY_DT_I32, -1, 1), -1);
  ck_assert_int_eq(ibin(IR_MAX, TEENY_DT_I32, -1, 1), 1);
  ck_assert_int_eq(ibin(IR_MIN, TEENY_DT_U32, -1, 1), 1);
  ck_assert_int_eq(ibin(IR_MAX, TEENY_DT_U8, 255, 1), 255);
}
END_TEST

/* ---- floats ---------------------------------------------------------------------- */

START_TEST(f16_bf16_f32_rounding) {
  const teeny_dtype h = TEENY_DT_F16, bf = TEENY_DT_BF16, f = TEENY_DT_F32;
  /* f16: 11 significant bits; ties to even */
  ck_float_eq(round_to(h, 2049), 2048);
  ck_float_eq(round_to(h, 2051), 2052);
  ck_float_eq(round_to(h, 1 + 0x1p-11), 1);
  ck_float_eq(round_to(h, 1 + 0x1.8p-10), 1 + 0x1p-9);
  /* f16 overflow: 65504 is the largest; the midpoint 65520 goes to inf */
  ck_float_eq(round_to(h, 65504), 65504);
  ck_float_eq(round_to(h, 65519), 65504);
  ck_float_eq(round_to(h, 65520), INFINITY);
  ck_float_eq(round_to(h, -65520), -INFINITY);
  /* f16 subnormals: 2^-24 is the smallest; half of it ties to +0 */
  ck_float_eq(round_to(h, 0x1p-24), 0x1p-24);
  ck_float_eq(round_to(h, 0x1p-25), 0);
  ck_float_eq(round_to(h, -0x1p-25), -0.0);
  ck_float_eq(round_to(h, 0x1.8p-25), 0x1p-24);
  ck_float_eq(round_to(h, NAN), NAN);
  /* arithmetic rounds its result */
  ck_float_eq(fbin(IR_ADD, h, 2048, 1), 2048);
  ck_float_eq(fbin(IR_ADD, h, 2048, 3), 2052);
  ck_float_eq(fbin(IR_ADD, h, 65504, 16), INFINITY);
  ck_float_eq(fbin(IR_ADD, h, 65504, 15), 65504);
  /* bf16: 8 significant bits, f32's range */
  ck_float_eq(round_to(bf, 1 + 0x1p-8), 1);
  ck_float_eq(round_to(bf, 1 + 0x1.8p-7), 1 + 0x1p-6);
  ck_float_eq(round_to(bf, 257), 256);
  ck_float_eq(round_to(bf, 259), 260);
  ck_float_eq(round_to(bf, 0x1.fe8p127), 0x1.fep127);
  ck_float_eq(round_to(bf, 0x1.ffp127), INFINITY);
  ck_float_eq(round_to(bf, FLT_MAX), INFINITY);
  ck_float_eq(fbin(IR_ADD, bf, 256, 1), 256);
  /* f32: ties to even; past FLT_MAX by less than half an ulp stays finite */
  ck_float_eq(round_to(f, 1 + 0x1p-24), 1);
  ck_float_eq(round_to(f, 1 + 0x1.8p-23), 1 + 0x1p-22);
  ck_float_eq(round_to(f, 0x1.fffffe8p127), FLT_MAX);
  ck_float_eq(round_to(f, -0x1.fffffe8p127), -FLT_MAX);
  ck_float_eq(round_to(f, 0x1.ffffffp127), INFINITY);
  ck_float_eq(round_to(f, 1e39), INFINITY);
  ck_float_eq(fbin(IR_ADD, f, FLT_MAX, FLT_MAX), INFINITY);
  ck_float_eq(round_to(TEENY_DT_F64, 0x1.0000000000001p0), 0x1.0000000000001p0);
}
END_TEST

START_TEST(float_ops_and_compares) {
  const teeny_dtype f = TEENY_DT_F32;
  ck_float_eq(fbin(IR_DIV, f, 1, 0), INFINITY);
  ck_float_eq(fbin(IR_DIV, f, -1, 0), -INFINITY);
  ck_float_eq(fbin(IR_DIV, f, 0, 0), NAN);
  ck_float_eq(fbin(IR_REM, f, 5.5, 2), 1.5);
  ck_float_eq(fbin(IR_REM, f, -5.5, 2), -1.5);
  ck_float_eq(fbin(IR_MIN, f, NAN, 1), 1); /* min/max ignore a NaN */
  ck_float_eq(fbin(IR_MAX, f, 1, NAN), 1);
  for (int swap = 0; swap < 2; swap++) { /* -0 orders below +0, whichever comes first */
    double a = swap ? 0.0 : -0.0, b = swap ? -0.0 : 0.0;
    ck_assert_msg(!signbit(fbin(IR_MAX, TEENY_DT_F64, a, b)), "maximum(%g, %g) is -0", a, b);
    ck_assert_msg(signbit(fbin(IR_MIN, TEENY_DT_F64, a, b)), "minimum(%g, %g) is +0", a, b);
    ck_assert(!signbit(fbin(IR_MAX, TEENY_DT_F16, a, b)));
    ck_assert(signbit(fbin(IR_MIN, TEENY_DT_BF16, a, b)));
  }
  ck_float_eq(fbin(IR_MAX, f, -0.0, NAN), -0.0);
  ck_assert(signbit(fbin(IR_MAX, f, -0.0, NAN)));
  ck_float_eq(teeny__scalar_unop(IR_NEG, f, fval(0)).f, -0.0);
  ck_float_eq(teeny__scalar_unop(IR_ABS, f, fval(-0.0)).f, 0);
  ck_float_eq(teeny__scalar_fma(f, 1 + 0x1p-12, 1 + 0x1p-12, -1), 0x1p-11 + 0x1p-24);
  teeny_scalar nan = fval(NAN), one = fval(1);
  ck_assert(!teeny__scalar_compare(CMP_EQ, f, nan, nan));
  ck_assert(teeny__scalar_compare(CMP_NE, f, nan, nan));
  ck_assert(!teeny__scalar_compare(CMP_LT, f, nan, one));
  ck_assert(!teeny__scalar_compare(CMP_GE, f, nan, one));
  ck_assert(teeny__scalar_compare(CMP_EQ, f, fval(0), fval(-0.0)));
}
END_TEST

/* ---- conversions -------------------------------------------------------------- */

/* The old constant folder converted int -> float through double, rounding
 * twice; these are the values where that differs from one rounding. */
static double via_double(teeny_dtype from, teeny_dtype to, uint64_t bits) {
  teeny_scalar v = teeny__scalar_int(from, bits);
  return teeny__round_dtype(to, teeny__dt_is_signed(from) ? (double)v.i : (double)v.u);
}

START_TEST(int_to_float_rounds_once) {
  const teeny_dtype i64 = TEENY_DT_I64, u64 = TEENY_DT_U64, f32 = TEENY_DT_F32;
  ck_float_eq(i2f(i64, f32, (UINT64_C(1) << 53) + 1), 0x1p53);
  ck_float_eq(i2f(i64, f32, INT64_MAX), 0x1p63);
  ck_float_eq(i2f(i64, f32, (uint64_t)INT64_MIN), -0x1p63);
  ck_float_eq(i2f(u64, f32, UINT64_MAX), 0x1p64);
  ck_float_eq(i2f(i64, TEENY_DT_F64, (UINT64_C(1) << 53) + 1), 0x1p53); /* tie: even */
  ck_float_eq(i2f(i64, TEENY_DT_F64, (UINT64_C(1) << 53) + 3), 0x1p53 + 4);
  ck_float_eq(i2f(u64, TEENY_DT_F64, UINT64_MAX), 0x1p64);
  /* just above a tie of f32: 2^60 + 2^36 + 1 rounds up to 2^60 + 2^37;
   * through double the +1 is lost first, leaving a tie that goes to 2^60 */
  uint64_t up = (UINT64_C(1) << 60) + (UINT64_C(1) << 36) + 1;
  ck_float_eq(i2f(i64, f32, up), 0x1p60 + 0x1p37);
  ck_float_eq(i2f(i64, f32, 0 - up), -(0x1p60 + 0x1p37));
  ck_float_eq(via_double(i64, f32, up), 0x1p60);
  uint64_t uup = (UINT64_C(1) << 63) + (UINT64_C(1) << 39) + 1;
  ck_float_eq(i2f(u64, f32, uup), 0x1p63 + 0x1p40);
  ck_float_eq(via_double(u64, f32, uup), 0x1p63);
  uint64_t bup = (UINT64_C(1) << 60) + (UINT64_C(1) << 52) + 1;
  ck_float_eq(i2f(i64, TEENY_DT_BF16, bup), 0x1p60 + 0x1p53);
  ck_float_eq(via_double(i64, TEENY_DT_BF16, bup), 0x1p60);
  /* narrower sources and dtypes: ties to even, overflow to inf */
  ck_float_eq(i2f(TEENY_DT_I32, f32, 16777217), 16777216);
  ck_float_eq(i2f(TEENY_DT_I32, f32, 16777219), 16777220);
  ck_float_eq(i2f(TEENY_DT_I32, TEENY_DT_F16, 2049), 2048);
  ck_float_eq(i2f(i64, TEENY_DT_F16, 65519), 65504);
  ck_float_eq(i2f(i64, TEENY_DT_F16, 65520), INFINITY);
  ck_float_eq(i2f(TEENY_DT_I32, TEENY_DT_F16, (uint64_t)-70000), -INFINITY);
  ck_float_eq(i2f(TEENY_DT_U8, f32, 255), 255);
  ck_float_eq(i2f(TEENY_DT_BOOL, f32, 1), 1);
}
END_TEST

START_TEST(float_to_int_saturates_and_nan_is_zero) {
  const teeny_dtype f32 = TEENY_DT_F32, f64 = TEENY_DT_F64, i32 = TEENY_DT_I32;
  ck_assert_int_eq(f2i(f32, i32, NAN).i, 0);
  ck_assert_int_eq(f2i(f32, i32, INFINITY).i, INT32_MAX);
  ck_assert_int_eq(f2i(f32, i32, -INFINITY).i, INT32_MIN);
  ck_assert_int_eq(f2i(f32, i32, 3e9).i, INT32_MAX);
  ck_assert_int_eq(f2i(f32, i32, -3e9).i, INT32_MIN);
  ck_assert_int_eq(f2i(f32, i32, -2.9).i, -2);
  ck_assert_int_eq(f2i(f32, i32, 2.9).i, 2);
  ck_assert_int_eq(f2i(f64, TEENY_DT_I64, 0x1p63).i, INT64_MAX);
  ck_assert_int_eq(f2i(f64, TEENY_DT_I64, -0x1p63).i, INT64_MIN);
  ck_assert_int_eq(f2i(f64, TEENY_DT_I64, 9.3e18).i, INT64_MAX);
  ck_assert_int_eq(f2i(f64, TEENY_DT_I64, NAN).i, 0);
  ck_assert_int_eq(f2i(f32, TEENY_DT_U8, -1.5).i, 0);
  ck_assert_int_eq(f2i(f32, TEENY_DT_U8, -0.9).i, 0);
  ck_assert_int_eq(f2i(f32, TEENY_DT_U8, 255.9).i, 255);
  ck_assert_int_eq(f2i(f32, TEENY_DT_U8, 300.7).i, 255);
  ck_assert_int_eq(f2i(f32, TEENY_DT_U8, NAN).i, 0);
  ck_assert_int_eq(f2i(TEENY_DT_F16, TEENY_DT_I8, 65504).i, 127);
  ck_assert_int_eq(f2i(TEENY_DT_F16, TEENY_DT_I8, -INFINITY).i, -128);
  ck_assert_uint_eq(f2i(f64, TEENY_DT_U64, 1.8e19).u, UINT64_C(18000000000000000000));
  ck_assert_uint_eq(f2i(f64, TEENY_DT_U64, 0x1p64).u, UINT64_MAX);
  ck_assert_uint_eq(f2i(f64, TEENY_DT_U64, -1).u, 0);
  ck_assert_uint_eq(f2i(f64, TEENY_DT_U64, NAN).u, 0);
  /* to bool is != 0: NaN is true, -0 is false */
  ck_assert_uint_eq(f2i(f32, TEENY_DT_BOOL, NAN).u, 1);
  ck_assert_uint_eq(f2i(f32, TEENY_DT_BOOL, -0.0).u, 0);
  ck_assert_uint_eq(f2i(f32, TEENY_DT_BOOL, 0x1p-149).u, 1);
  /* float -> float rounds */
  ck_float_eq(teeny__scalar_cast(f64, f32, fval(1e39)).f, INFINITY);
  ck_float_eq(teeny__scalar_cast(f32, TEENY_DT_F16, fval(65520)).f, INFINITY);
  ck_float_eq(teeny__scalar_cast(f32, TEENY_DT_BF16, fval(FLT_MAX)).f, INFINITY);
  ck_float_eq(teeny__scalar_cast(TEENY_DT_F16, f32, fval(65504)).f, 65504);
}
END_TEST

/* ---- folding agrees with the interpreter --------------------------------------------- */

typedef struct fold_case {
  const char *expr;     /* over $a and $b */
  teeny_dtype r;        /* what out points to */
  teeny_dtype a, b;     /* the operands' dtypes */
  teeny_scalar va, vb;  /* their values */
  teeny_scalar want;    /* the result, of dtype r */
  const char *folded;   /* the constant kernel's expression, if not expr's */
} fold_case;

#define I(v) {.i = (v)}
#define U(v) {.u = (v)}
#define F(v) {.f = (v)}
#define T_I32 TEENY_DT_I32
#define T_U32 TEENY_DT_U32
#define T_F32 TEENY_DT_F32

static const fold_case fold_cases[] = {
    {"$a / $b", T_I32, T_I32, T_I32, I(7), I(0), I(-1), NULL},
    {"$a % $b", T_I32, T_I32, T_I32, I(-7), I(0), I(-7), NULL},
    {"$a / $b", T_I32, T_I32, T_I32, I(INT32_MIN), I(-1), I(INT32_MIN), NULL},
    {"$a % $b", T_I32, T_I32, T_I32, I(INT32_MIN), I(-1), I(0), NULL},
    {"$a / $b", T_U32, T_U32, T_U32, U(5), U(0), U(UINT32_MAX), NULL},
    {"$a / $b", TEENY_DT_I64, TEENY_DT_I64, TEENY_DT_I64, I(INT64_MIN), I(-1), I(INT64_MIN), NULL},
    {"$a << $b", T_I32, T_I32, T_I32, I(1), I(32), I(0), NULL},
    {"$a << $b", T_I32, T_I32, T_I32, I(1), I(-1), I(0), NULL},
    {"$a >> $b", T_I32, T_I32, T_I32, I(-8), I(33), I(-1), NULL},
    {"$a >> $b", T_U32, T_U32, T_U32, U(0x80000000u), U(32), U(0), NULL},
    {"$a >> $b", TEENY_DT_I64, TEENY_DT_I64, TEENY_DT_I64, I(-1), I(64), I(-1), NULL},
    {"$a + $b", TEENY_DT_U8, TEENY_DT_U8, TEENY_DT_U8, U(255), U(1), U(0), NULL},
    {"$a - $b", TEENY_DT_U8, TEENY_DT_U8, TEENY_DT_U8, U(0), U(1), U(255), NULL},
    {"$a * $b", TEENY_DT_I8, TEENY_DT_I8, TEENY_DT_I8, I(-128), I(-1), I(-128), NULL},
    {"$a + $b", TEENY_DT_I8, TEENY_DT_I8, TEENY_DT_I8, I(127), I(1), I(-128), NULL},
    {"-$a", TEENY_DT_I8, TEENY_DT_I8, TEENY_DT_I8, I(-128), I(0), I(-128), NULL},
    {"~$a", TEENY_DT_U8, TEENY_DT_U8, TEENY_DT_U8, U(0), U(0), U(255), NULL},
    {"minimum($a, $b)", T_U32, T_U32, T_U32, U(UINT32_MAX), U(1), U(1), NULL},
    {"maximum($a, $b)", T_I32, T_I32, T_I32, I(-1), I(1), I(1), NULL},
    {"$a < $b", TEENY_DT_BOOL, T_U32, T_U32, U(UINT32_MAX), U(1), U(0), NULL},
    {"$a < $b", TEENY_DT_BOOL, T_I32, T_I32, I(-1), I(1), U(1), NULL},
    {"$a != $b", TEENY_DT_BOOL, T_F32, T_F32, F(NAN), F(NAN), U(1), NULL},
    {"$a == $b", TEENY_DT_BOOL, T_F32, T_F32, F(0.0), F(-0.0), U(1), NULL},
    {"$a / $b", T_F32, T_F32, T_F32, F(-1), F(0), F(-INFINITY), NULL},
    {"$a % $b", T_F32, T_F32, T_F32, F(-5.5), F(2), F(-1.5), NULL},
    {"$a + $b", T_F32, T_F32, T_F32, F(FLT_MAX), F(FLT_MAX), F(INFINITY), NULL},
    {"minimum($a, $b)", T_F32, T_F32, T_F32, F(NAN), F(1), F(1), NULL},
    {"-$a", T_F32, T_F32, T_F32, F(0.0), F(0), F(-0.0), NULL},
    /* a negated weak literal keeps the sign of zero: -0.0 is not 0 - 0.0 */
    {"$a / $b", T_F32, T_F32, T_F32, F(1), F(-0.0), F(-INFINITY), "(f32)1.0 / -0.0"},
    {"$a + $b", TEENY_DT_F16, TEENY_DT_F16, TEENY_DT_F16, F(2048), F(1), F(2048), NULL},
    {"$a + $b", TEENY_DT_F16, TEENY_DT_F16, TEENY_DT_F16, F(65504), F(16), F(INFINITY), NULL},
    {"$a * $b", TEENY_DT_F16, TEENY_DT_F16, TEENY_DT_F16, F(1 + 0x1p-10), F(1 + 0x1p-10),
     F(1 + 0x1p-9), NULL},
    {"$a + $b", TEENY_DT_BF16, TEENY_DT_BF16, TEENY_DT_BF16, F(256), F(3), F(260), NULL},
    /* int -> float: one rounding of the exact integer */
    {"(f32)$a", T_F32, TEENY_DT_I64, TEENY_DT_I64, I((INT64_C(1) << 53) + 1), I(0), F(0x1p53), NULL},
    {"(f32)$a", T_F32, TEENY_DT_I64, TEENY_DT_I64, I(INT64_MAX), I(0), F(0x1p63), NULL},
    {"(f32)$a", T_F32, TEENY_DT_I64, TEENY_DT_I64,
     I((INT64_C(1) << 60) + (INT64_C(1) << 36) + 1), I(0), F(0x1p60 + 0x1p37), NULL},
    {"(f32)$a", T_F32, TEENY_DT_I64, TEENY_DT_I64,
     I(-((INT64_C(1) << 60) + (INT64_C(1) << 36) + 1)), I(0), F(-(0x1p60 + 0x1p37)), NULL},
    {"(f32)$a", T_F32, TEENY_DT_U64, TEENY_DT_U64, U(UINT64_MAX), U(0), F(0x1p64), NULL},
    {"(bf16)$a", TEENY_DT_BF16, TEENY_DT_I64, TEENY_DT_I64,
     I((INT64_C(1) << 60) + (INT64_C(1) << 52) + 1), I(0), F(0x1p60 + 0x1p53), NULL},
    {"(f16)$a", TEENY_DT_F16, T_I32, T_I32, I(65520), I(0), F(INFINITY), NULL},
    {"(f64)$a", TEENY_DT_F64, TEENY_DT_I64, TEENY_DT_I64, I((INT64_C(1) << 53) + 1), I(0),
     F(0x1p53), NULL},
    /* a weak int literal adopting a float dtype rounds like the cast */
    {"(f32)$a", T_F32, TEENY_DT_I64, TEENY_DT_I64,
     I((INT64_C(1) << 60) + (INT64_C(1) << 36) + 1), I(0), F(0x1p60 + 0x1p37),
     "(f32)0 + 1152921573326323713"},
    /* float -> int: truncate, saturate, NaN is 0 */
    {"(i32)$a", T_I32, T_F32, T_F32, F(NAN), F(0), I(0), NULL},
    {"(i32)$a", T_I32, T_F32, T_F32, F(-3e9), F(0), I(INT32_MIN), NULL},
    {"(i32)$a", T_I32, T_F32, T_F32, F(-2.75), F(0), I(-2), NULL},
    {"(u8)$a", TEENY_DT_U8, T_F32, T_F32, F(300.5), F(0), U(255), NULL},
    {"(u8)$a", TEENY_DT_U8, T_F32, T_F32, F(-1.5), F(0), U(0), NULL},
    {"(i64)$a", TEENY_DT_I64, TEENY_DT_F64, TEENY_DT_F64, F(0x1p63), F(0), I(INT64_MAX), NULL},
    {"(u64)$a", TEENY_DT_U64, TEENY_DT_F64, TEENY_DT_F64, F(0x1p64), F(0), U(UINT64_MAX), NULL},
    {"(bool)$a", TEENY_DT_BOOL, T_F32, T_F32, F(NAN), F(0), U(1), NULL},
    /* narrowing casts */
    {"(u8)$a", TEENY_DT_U8, T_I32, T_I32, I(300), I(0), U(44), NULL},
    {"(i8)$a", TEENY_DT_I8, TEENY_DT_U8, TEENY_DT_U8, U(200), U(0), I(-56), NULL},
    {"(f16)$a", TEENY_DT_F16, T_F32, T_F32, F(65519), F(0), F(65504), NULL},
    {"(bf16)$a", TEENY_DT_BF16, T_F32, T_F32, F(FLT_MAX), F(0), F(INFINITY), NULL},
};

/* A literal expression of dtype dt with the (canonical) value v. */
static void literal(char *out, size_t n, teeny_dtype dt, teeny_scalar v) {
  const char *t = teeny_dtype_name(dt);
  if (!teeny__dt_is_float(dt))
    snprintf(out, n, "((%s)%lluul)", t, (unsigned long long)v.u);
  else if (isnan(v.f))
    snprintf(out, n, "((%s)NAN)", t);
  else if (isinf(v.f))
    snprintf(out, n, "((%s)%sINFINITY)", t, v.f < 0 ? "-" : "");
  else if (v.f == 0)
    snprintf(out, n, "(%s(%s)0.0)", signbit(v.f) ? "-" : "", t); /* typed: keeps -0 */
  else
    snprintf(out, n, "((%s)%a)", t, v.f);
}

/* expr with $a and $b replaced by a and b. */
static void substitute(char *out, size_t n, const char *expr, const char *a,
                       const char *b) {
  size_t k = 0;
  for (const char *p = expr; *p && k + 1 < n; p++) {
    const char *rep = NULL;
    if (p[0] == '$' && (p[1] == 'a' || p[1] == 'b'))
      rep = p[1] == 'a' ? a : b;
    if (!rep) {
      out[k++] = *p;
      continue;
    }
    k += (size_t)snprintf(out + k, n - k, "%s", rep);
    p++;
  }
  out[k < n ? k : n - 1] = '\0';
}

static teeny_spec *make_spec(const char *src, const char *kernel) {
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = ku_spec_src(src, strlen(src), "fold.c", kernel, "", &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "spec %s: %s\n%s", kernel, teeny_strerror(rc), src);
  teeny_diags_close(&d);
  return s;
}

/* The number of arithmetic ops in s's MLIR (anything but constants). */
static int arith_ops(const teeny_spec *s) {
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_artifact *art = NULL;
  int rc = teeny_spec_compile(s, TEENY_EMIT_MLIR, &art, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "compile: %s", teeny_strerror(rc));
  teeny_diags_close(&d);
  int n = 0;
  static const char *const dialects[] = {"arith.", "math.", "tt.precise_divf"};
  for (size_t k = 0; k < 3; k++)
    for (const char *p = art->mlir; (p = strstr(p, dialects[k])); p++) {
      const char *eol = strchr(p, '\n');
      const char *to_i8 = strstr(p, ": i1 to i8"); /* a bool stored as i8 (Triton's form) */
      bool widen = strncmp(p, "arith.extui", 11) == 0 && to_i8 && (!eol || to_i8 < eol);
      n += strncmp(p, "arith.constant", 14) != 0 && !widen;
    }
  teeny_artifact_destroy(art);
  return n;
}

static teeny_interp_arg scalar_arg(teeny_dtype dt, teeny_scalar v) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  if (teeny__dt_is_float(dt))
    a.v.f = v.f;
  else
    a.v.u = v.u;
  return a;
}

/* Run s on one program; the 8 bytes at out hold the stored element. */
static void interpret(const teeny_spec *s, teeny_dtype rdt, uint64_t *out,
                      const teeny_interp_arg *scalars, size_t nscalars) {
  teeny_interp_arg args[3];
  memset(args, 0, sizeof args);
  args[0].data = out;
  args[0].bytes = (size_t)teeny_dtype_size(rdt);
  for (size_t i = 0; i < nscalars; i++)
    args[1 + i] = scalars[i];
  unsigned grid[3] = {1, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_interpret(s, grid, args, 1 + nscalars, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "interpret: %s", teeny_strerror(rc));
  teeny_diags_close(&d);
}

/* The element of dtype dt stored at p, in canonical form. */
static teeny_scalar stored(teeny_dtype dt, const void *p) {
  teeny_scalar v = {.u = 0};
  uint16_t h;
  float f;
  switch (dt) {
  case TEENY_DT_F16: memcpy(&h, p, 2); v.f = ku_f16_to_f32(h); break;
  case TEENY_DT_BF16: memcpy(&h, p, 2); v.f = ku_bf16_to_f32(h); break;
  case TEENY_DT_F32: memcpy(&f, p, 4); v.f = f; break;
  case TEENY_DT_F64: memcpy(&v.f, p, 8); break;
  default: /* little-endian host: the low bytes, then extended */
    memcpy(&v.u, p, (size_t)teeny_dtype_size(dt));
    v = teeny__scalar_normalize(dt, v);
    break;
  }
  return v;
}

static bool same_value(teeny_dtype dt, teeny_scalar x, teeny_scalar y) {
  return teeny__dt_is_float(dt) ? same_float(x.f, y.f) : x.u == y.u;
}

START_TEST(folding_agrees_with_the_interpreter) {
  const fold_case *c = &fold_cases[_i];
  teeny_scalar va = teeny__scalar_normalize(c->a, c->va);
  teeny_scalar vb = teeny__scalar_normalize(c->b, c->vb);
  teeny_scalar want = teeny__scalar_normalize(c->r, c->want);
  char la[96], lb[96], run_expr[512], fold_expr[512], src[2048];
  literal(la, sizeof la, c->a, va);
  literal(lb, sizeof lb, c->b, vb);
  substitute(run_expr, sizeof run_expr, c->expr, "a", "b");
  if (c->folded)
    snprintf(fold_expr, sizeof fold_expr, "%s", c->folded);
  else
    substitute(fold_expr, sizeof fold_expr, c->expr, la, lb);
  const char *r = teeny_dtype_name(c->r);
  snprintf(src, sizeof src,
           "#include <teeny/dsl.h>\n"
           "TEENY_KERNEL()\nvoid run(ptr(%s) out, %s a, %s b)\n{\n    store(out, %s);\n}\n"
           "TEENY_KERNEL()\nvoid fold(ptr(%s) out)\n{\n    store(out, %s);\n}\n",
           r, teeny_dtype_name(c->a), teeny_dtype_name(c->b), run_expr, r, fold_expr);
  teeny_spec *run = make_spec(src, "run"), *fold = make_spec(src, "fold");
  ck_assert_msg(arith_ops(run) > 0, "the run kernel computes nothing:\n%s", src);
  ck_assert_msg(arith_ops(fold) == 0, "the constant kernel was not folded:\n%s", src);
  uint64_t out_run = 0, out_fold = 0;
  teeny_interp_arg ab[2] = {scalar_arg(c->a, va), scalar_arg(c->b, vb)};
  interpret(run, c->r, &out_run, ab, 2);
  interpret(fold, c->r, &out_fold, NULL, 0);
  teeny_scalar got_run = stored(c->r, &out_run), got_fold = stored(c->r, &out_fold);
  ck_assert_msg(same_value(c->r, got_run, want),
                "interpreted %s with a=%s b=%s: got 0x%llx (%a), want 0x%llx (%a)",
                c->expr, la, lb, (unsigned long long)got_run.u, got_run.f,
                (unsigned long long)want.u, want.f);
  ck_assert_msg(same_value(c->r, got_fold, want),
                "folded %s: got 0x%llx (%a), want 0x%llx (%a)", fold_expr,
                (unsigned long long)got_fold.u, got_fold.f, (unsigned long long)want.u,
                want.f);
  ck_assert_msg(out_run == out_fold, "%s: interpreted bits 0x%llx, folded 0x%llx",
                c->expr, (unsigned long long)out_run, (unsigned long long)out_fold);
  teeny_spec_destroy(run);
  teeny_spec_destroy(fold);
}
END_TEST

int main(void) {
  Suite *s = suite_create("scalar");
  TCase *tc = tcase_create("semantics");
  tcase_add_test(tc, division_by_zero_and_min_over_minus_one);
  tcase_add_test(tc, shifts_by_the_width_or_more);
  tcase_add_test(tc, narrow_ints_wrap);
  tcase_add_test(tc, int_compare_and_min_max);
  tcase_add_test(tc, f16_bf16_f32_rounding);
  tcase_add_test(tc, float_ops_and_compares);
  tcase_add_test(tc, int_to_float_rounds_once);
  tcase_add_test(tc, float_to_int_saturates_and_nan_is_zero);
  suite_add_tcase(s, tc);
  TCase *tf = tcase_create("folding");
  tcase_add_loop_test(tf, folding_agrees_with_the_interpreter, 0,
                      (int)(sizeof fold_cases / sizeof *fold_cases));
  suite_add_tcase(s, tf);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
