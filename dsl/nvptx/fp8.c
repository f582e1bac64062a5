/*
 * dsl/nvptx/fp8.c — f8e4m3 and f8e5m2 in LLVM IR: values live as their i8
 * bits; arithmetic goes through f32 (ops.c promotes); this file converts.
 *
 * The conversions are integer and f16 arithmetic that runs the same on the
 * GPU and in the host emulator, and compute what common/fp8.c computes:
 *   to f32     exact.  e5m2 bits are the top byte of the f16 with the same
 *              value; e4m3 bits shifted into an f16 and scaled by 2^8 (its
 *              bias is 8 less), S.1111.111 made a NaN.
 *   from f32   nearest, ties to even, saturating at the largest finite
 *              value (infinities too), NaN to S.1111.111 / S.11111.11:
 *              normal results round on the f32 bits (add half an ulp of
 *              the target, minus one unless the kept lsb is odd), subnormal
 *              ones as roundeven(|x| 2^k) with k the scale of the smallest
 *              subnormal.
 */
#include <math.h>

#include "dsl/nvptx/codegen.h"

typedef struct fp8_shape {
  int mant;          /* fraction bits */
  int bias;
  unsigned max_bits; /* largest finite value, as bits */
  uint32_t max_f32;  /* the same value, as f32 bits */
} fp8_shape;

static fp8_shape shape_of(teeny_dtype dt) {
  if (dt == TEENY_DT_F8E5M2)
    return (fp8_shape){2, 15, 0x7b, 0x47600000u}; /* 57344 */
  return (fp8_shape){3, 7, 0x7e, 0x43e00000u};    /* 448 */
}

static LLVMValueRef i32c(cg *g, long long v) { return teeny__cg_i32(g, v); }

/* The quiet NaN with the sign of fp8 bits w (i16), for a NaN code. */
static LLVMValueRef signed_nan(cg *g, LLVMValueRef w) {
  LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntNE,
                                   LLVMBuildAnd(g->b, w, LLVMConstInt(g->t_i16, 0x80, 0), ""),
                                   LLVMConstInt(g->t_i16, 0, 0), "");
  return LLVMBuildSelect(g->b, neg, LLVMConstReal(g->t_f32, -NAN), LLVMConstReal(g->t_f32, NAN),
                         "");
}

LLVMValueRef teeny__cg_fp8_to_f32(cg *g, LLVMValueRef bits, teeny_dtype dt) {
  LLVMBuilderRef b = g->b;
  LLVMValueRef w = LLVMBuildZExt(b, bits, g->t_i16, "");
  LLVMValueRef f, nan;
  if (dt == TEENY_DT_F8E5M2) {
    LLVMValueRef h = LLVMBuildShl(b, w, LLVMConstInt(g->t_i16, 8, 0), "");
    f = LLVMBuildFPExt(b, LLVMBuildBitCast(b, h, g->t_f16, ""), g->t_f32, "");
    nan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
  } else {
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, w, LLVMConstInt(g->t_i16, 0x80, 0), ""),
                                     LLVMConstInt(g->t_i16, 8, 0), "");
    LLVMValueRef mag = LLVMBuildAnd(b, w, LLVMConstInt(g->t_i16, 0x7f, 0), "");
    LLVMValueRef h = LLVMBuildOr(b, sign, LLVMBuildShl(b, mag, LLVMConstInt(g->t_i16, 7, 0), ""), "");
    f = LLVMBuildFPExt(b, LLVMBuildBitCast(b, h, g->t_f16, ""), g->t_f32, "");
    f = LLVMBuildFMul(b, f, LLVMConstReal(g->t_f32, 256.0), ""); /* exact */
    nan = LLVMBuildICmp(b, LLVMIntEQ, mag, LLVMConstInt(g->t_i16, 0x7f, 0), "");
  }
  return LLVMBuildSelect(b, nan, signed_nan(g, w), f, ""); /* one NaN per sign */
}

LLVMValueRef teeny__cg_f32_to_fp8(cg *g, LLVMValueRef f, teeny_dtype dt) {
  LLVMBuilderRef b = g->b;
  fp8_shape s = shape_of(dt);
  int drop = 23 - s.mant;                 /* f32 fraction bits that go */
  long long rebias = (long long)(127 - s.bias) << s.mant;
  LLVMValueRef u = LLVMBuildBitCast(b, f, g->t_i32, "");
  LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, u, i32c(g, 24), ""), i32c(g, 0x80), "");
  LLVMValueRef a = LLVMBuildAnd(b, u, i32c(g, 0x7fffffff), "");
  /* normal: round the f32 bits to the kept fraction, rebias */
  LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, a, i32c(g, drop), ""), i32c(g, 1), "");
  LLVMValueRef r = LLVMBuildAdd(b, a, LLVMBuildAdd(b, odd, i32c(g, (1ll << (drop - 1)) - 1), ""), "");
  LLVMValueRef norm = LLVMBuildSub(b, LLVMBuildLShr(b, r, i32c(g, drop), ""), i32c(g, rebias), "");
  LLVMValueRef over = LLVMBuildICmp(b, LLVMIntSGT, norm, i32c(g, s.max_bits), "");
  norm = LLVMBuildSelect(b, over, i32c(g, s.max_bits), norm, "");
  /* subnormal: |x| in units of the smallest subnormal, rounded to even */
  LLVMTypeRef ft = g->t_f32;
  LLVMValueRef af = LLVMBuildBitCast(b, a, ft, "");
  LLVMValueRef scaled = LLVMBuildFMul(b, af, LLVMConstReal(ft, ldexp(1.0, s.bias - 1 + s.mant)), "");
  LLVMValueRef q = teeny__cg_intrin(g, "llvm.roundeven", &ft, 1, &scaled, 1);
  LLVMValueRef sub = LLVMBuildFPToUI(b, q, g->t_i32, "");
  uint32_t min_normal = (uint32_t)(127 + 1 - s.bias) << 23;
  LLVMValueRef is_sub = LLVMBuildICmp(b, LLVMIntULT, a, i32c(g, min_normal), "");
  LLVMValueRef code = LLVMBuildSelect(b, is_sub, sub, norm, "");
  LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, a, i32c(g, s.max_f32), "");
  code = LLVMBuildSelect(b, big, i32c(g, s.max_bits), code, "");
  LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, a, i32c(g, 0x7f800000), "");
  code = LLVMBuildSelect(b, nan, i32c(g, 0x7f), code, "");
  return LLVMBuildTrunc(b, LLVMBuildOr(b, sign, code, ""), g->t_i8, "");
}
