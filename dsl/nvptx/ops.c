/*
 * dsl/nvptx/ops.c — element-wise ops on scalar LLVM values: arithmetic
 * with the language's defined edge behaviour (docs/dsl.md §4), casts,
 * comparisons and the math builtins.  Tiles apply the same function to each
 * register, so this file is also what tile arithmetic costs.
 *
 * Edge rules, all without LLVM undefined behaviour: x/0 = -1 and x%0 = x;
 * MIN/-1 = MIN and MIN%-1 = 0; a shift by a negative amount or >= width
 * gives 0 (-1 for >> of a negative signed value); float -> int saturates and
 * NaN gives 0 (llvm.fptosi.sat).
 *
 * The math builtins are in math.c.
 */
#include <math.h>
#include <string.h>

#include "dsl/nvptx/codegen.h"

static bool is_float(teeny_dtype dt) { return teeny__dt_is_float(dt); }

/* f32 bits -> bf16 bits, nearest even (the emulator's constants) */
static unsigned bf16_bits(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (f != f)
    return 0x7FC0;
  return (u + 0x7FFF + ((u >> 16) & 1)) >> 16;
}

LLVMValueRef teeny__cg_const(cg *g, teeny_dtype dt, teeny_scalar s) {
  LLVMTypeRef t = teeny__cg_type(g, dt);
  if (g->emu && dt == TEENY_DT_BF16)
    return LLVMConstInt(t, bf16_bits(s.f), 0);
  if (teeny__dt_is_fp8(dt))
    return LLVMConstInt(t, teeny__fp8_bits(dt, s.f), 0);
  if (dt == TEENY_DT_BOOL)
    return teeny__cg_bool(g, s.i != 0);
  if (is_float(dt))
    return LLVMConstReal(t, s.f);
  if (dt == TEENY_DT_PTR)
    return LLVMConstNull(t);
  return LLVMConstInt(t, s.u, 0);
}

static LLVMValueRef cint(cg *g, LLVMTypeRef t, long long v) {
  return LLVMConstInt(t, (unsigned long long)v, 1);
}


/* ---- casts ------------------------------------------------------------------------ */

static LLVMValueRef float_to_int(cg *g, LLVMValueRef v, teeny_dtype from,
                                 teeny_dtype to) {
  if (from == TEENY_DT_F16 || from == TEENY_DT_BF16)
    v = LLVMBuildFPExt(g->b, v, g->t_f32, "");
  LLVMTypeRef tys[2] = {teeny__cg_type(g, to), LLVMTypeOf(v)};
  return teeny__cg_intrin(g, teeny__dt_is_signed(to) ? "llvm.fptosi.sat"
                                                      : "llvm.fptoui.sat",
                          tys, 2, &v, 1);
}

static LLVMValueRef float_to_float(cg *g, LLVMValueRef v, teeny_dtype from,
                                   teeny_dtype to) {
  LLVMTypeRef t = teeny__cg_type(g, to);
  if (from == TEENY_DT_BF16 || (from == TEENY_DT_F16 && to == TEENY_DT_BF16)) {
    v = LLVMBuildFPExt(g->b, v, g->t_f32, ""); /* exact */
    from = TEENY_DT_F32;
    if (to == TEENY_DT_F32)
      return v;
  }
  if (teeny__dt_bits(to) > teeny__dt_bits(from))
    return LLVMBuildFPExt(g->b, v, t, "");
  return LLVMBuildFPTrunc(g->b, v, t, "");
}

/* The emulator keeps bf16 values as i16 bits: x86 has no bf16 registers and
 * its legalisation calls __truncsfbf2, which libgcc 12 lacks.  f32 -> bf16
 * rounds to nearest even on the bits; NaN stays NaN. */
static LLVMValueRef emu_to_bf16(cg *g, LLVMValueRef f) {
  LLVMValueRef bits = LLVMBuildBitCast(g->b, f, g->t_i32, "");
  LLVMValueRef odd = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, bits, teeny__cg_i32(g, 16), ""),
                                  teeny__cg_i32(g, 1), "");
  LLVMValueRef r = LLVMBuildAdd(g->b, bits, LLVMBuildAdd(g->b, odd, teeny__cg_i32(g, 0x7FFF), ""), "");
  r = LLVMBuildLShr(g->b, r, teeny__cg_i32(g, 16), "");
  LLVMValueRef nan = LLVMBuildFCmp(g->b, LLVMRealUNO, f, f, "");
  r = LLVMBuildSelect(g->b, nan, teeny__cg_i32(g, 0x7FC0), r, "");
  return LLVMBuildTrunc(g->b, r, g->t_i16, ""); /* bf16 bits */
}

/* ---- conversions that must round once --------------------------------------------- *
 * The language rounds a conversion once, from the exact value.  Going
 * through f32 rounds twice, which is wrong for bf16 (and f16) from a source
 * with more than 24 significant bits: i32, u32, i64, u64, f64 (for f16 only
 * f64 matters).  sm_90 has
 * cvt.rn.bf16.{s32,u32,s64,u64,f64}; below it LLVM goes through f32, and so
 * does the emulator.  There the value first rounds to odd at f32's
 * precision (toward zero, the last bit set when inexact), which keeps
 * enough to round once more to nearest even correctly: f32 holds at least
 * two more bits than bf16 or f16 at every magnitude. */

static bool wide_source(teeny_dtype from) {
  return from == TEENY_DT_I32 || from == TEENY_DT_U32 || from == TEENY_DT_I64 ||
         from == TEENY_DT_U64 || from == TEENY_DT_F64;
}

/* f64 -> f32 rounded to odd (a NaN stays a NaN). */
static LLVMValueRef f64_to_f32_odd(cg *g, LLVMValueRef d) {
  LLVMValueRef f = LLVMBuildFPTrunc(g->b, d, g->t_f32, "");
  LLVMValueRef back = LLVMBuildFPExt(g->b, f, g->t_f64, "");
  LLVMValueRef exact = LLVMBuildFCmp(g->b, LLVMRealUEQ, back, d, "");
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef ab = teeny__cg_intrin(g, "llvm.fabs", &t, 1, &back, 1);
  LLVMValueRef ad = teeny__cg_intrin(g, "llvm.fabs", &t, 1, &d, 1);
  LLVMValueRef away = LLVMBuildFCmp(g->b, LLVMRealOGT, ab, ad, ""); /* rounded up in magnitude */
  LLVMValueRef bits = LLVMBuildBitCast(g->b, f, g->t_i32, "");
  bits = LLVMBuildSub(g->b, bits, LLVMBuildZExt(g->b, away, g->t_i32, ""), ""); /* toward zero */
  bits = LLVMBuildOr(g->b, bits, teeny__cg_i32(g, 1), "");
  return LLVMBuildSelect(g->b, exact, f, LLVMBuildBitCast(g->b, bits, g->t_f32, ""), "");
}

/* A 64-bit integer -> f64 rounded to odd at 53 bits: the bits below the top
 * 53 collapse into the lowest kept one, and the rest converts exactly. */
static LLVMValueRef i64_to_f64_odd(cg *g, LLVMValueRef x, bool sign) {
  LLVMTypeRef t = g->t_i64;
  LLVMValueRef zero = teeny__cg_i64(g, 0);
  LLVMValueRef neg = sign ? LLVMBuildICmp(g->b, LLVMIntSLT, x, zero, "") : NULL;
  LLVMValueRef u = sign ? LLVMBuildSelect(g->b, neg, LLVMBuildNeg(g->b, x, ""), x, "") : x;
  LLVMValueRef ca[2] = {u, teeny__cg_bool(g, false)};
  LLVMValueRef lz = teeny__cg_intrin(g, "llvm.ctlz", &t, 1, ca, 2);
  LLVMValueRef eleven = teeny__cg_i64(g, 11);
  LLVMValueRef sh = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntULT, lz, eleven, ""),
                                    LLVMBuildSub(g->b, eleven, lz, ""), zero, "");
  LLVMValueRef one = teeny__cg_i64(g, 1);
  LLVMValueRef mask = LLVMBuildSub(g->b, LLVMBuildShl(g->b, one, sh, ""), one, "");
  LLVMValueRef low = LLVMBuildAnd(g->b, u, mask, "");
  LLVMValueRef sticky = LLVMBuildZExt(g->b, LLVMBuildICmp(g->b, LLVMIntNE, low, zero, ""), t, "");
  u = LLVMBuildOr(g->b, LLVMBuildXor(g->b, u, low, ""), LLVMBuildShl(g->b, sticky, sh, ""), "");
  LLVMValueRef f = LLVMBuildUIToFP(g->b, u, g->t_f64, "");
  return sign ? LLVMBuildSelect(g->b, neg, LLVMBuildFNeg(g->b, f, ""), f, "") : f;
}

/* A wide source (wide_source) as f32 rounded to odd. */
static LLVMValueRef to_f32_odd(cg *g, LLVMValueRef v, teeny_dtype from) {
  LLVMValueRef d = v;
  if (from == TEENY_DT_I64 || from == TEENY_DT_U64)
    d = i64_to_f64_odd(g, v, from == TEENY_DT_I64);
  else if (from != TEENY_DT_F64) /* 32-bit ints are exact in f64 */
    d = from == TEENY_DT_I32 ? LLVMBuildSIToFP(g->b, v, g->t_f64, "")
                             : LLVMBuildUIToFP(g->b, v, g->t_f64, "");
  return f64_to_f32_odd(g, d);
}

/* Whether from -> to rounds through f32 here and needs to_f32_odd first. */
static bool needs_odd_step(cg *g, teeny_dtype from, teeny_dtype to) {
  if (!wide_source(from))
    return false;
  if (to == TEENY_DT_BF16)
    return g->emu || g->sm < 90;
  /* f16: only f64 has more bits than f32 within f16's range (an integer
   * beyond 2^24 overflows it); the GPU has cvt.rn.f16.f64 */
  return to == TEENY_DT_F16 && from == TEENY_DT_F64 && g->emu;
}

LLVMValueRef teeny__cg_cast(cg *g, LLVMValueRef v, teeny_dtype from, teeny_dtype to) {
  if (from == to)
    return v;
  if (teeny__dt_is_fp8(from)) { /* exact to f32, then on */
    LLVMValueRef f = teeny__cg_fp8_to_f32(g, v, from);
    return to == TEENY_DT_F32 ? f : teeny__cg_cast(g, f, TEENY_DT_F32, to);
  }
  if (teeny__dt_is_fp8(to)) /* every source rounds to f32 first, as common/fp8.c */
    return teeny__cg_f32_to_fp8(g, from == TEENY_DT_F32 ? v : teeny__cg_cast(g, v, from, TEENY_DT_F32),
                                to);
  if (needs_odd_step(g, from, to))
    return teeny__cg_cast(g, to_f32_odd(g, v, from), TEENY_DT_F32, to);
  if (g->emu && (from == TEENY_DT_BF16 || to == TEENY_DT_BF16) && from != TEENY_DT_F32 &&
      to != TEENY_DT_F32) /* through f32 */
    return teeny__cg_cast(g, teeny__cg_cast(g, v, from, TEENY_DT_F32), TEENY_DT_F32, to);
  if (g->emu && to == TEENY_DT_BF16)
    return emu_to_bf16(g, v);
  /* bf16 to f32: the bits are its top half.  Also on the GPU, and bf16 to
   * f64 by way of it: LLVM 19's InstCombine shrinks fptrunc(fmul(fpext
   * bf16 x, fpext f16 y)) to half into an f16 multiply, converting x to
   * f16 first, as though every bf16 fitted f16 (bf16's largest finite
   * became inf, and inf * 0 NaN where the f32 product is 0:
   * bf16_times_f16_gpu); no fpext from bf16, nothing for it to shrink. */
  if (from == TEENY_DT_BF16 && (to == TEENY_DT_F32 || to == TEENY_DT_F64)) {
    if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind) /* bfloat on the GPU */
      v = LLVMBuildBitCast(g->b, v, LLVMInt16TypeInContext(g->ctx), "");
    LLVMValueRef f = LLVMBuildBitCast(g->b, LLVMBuildShl(g->b, LLVMBuildZExt(g->b, v, g->t_i32, ""),
                                                         teeny__cg_i32(g, 16), ""), g->t_f32, "");
    return to == TEENY_DT_F32 ? f : teeny__cg_cast(g, f, TEENY_DT_F32, to);
  }
  LLVMTypeRef t = teeny__cg_type(g, to);
  if (to == TEENY_DT_BOOL) {
    if (is_float(from))
      return LLVMBuildFCmp(g->b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0), "");
    return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  }
  if (from == TEENY_DT_BOOL)
    return is_float(to) ? LLVMBuildUIToFP(g->b, v, t, "") : LLVMBuildZExt(g->b, v, t, "");
  if (is_float(from) && is_float(to))
    return float_to_float(g, v, from, to);
  if (is_float(from))
    return float_to_int(g, v, from, to);
  if (is_float(to))
    return teeny__dt_is_signed(from) ? LLVMBuildSIToFP(g->b, v, t, "")
                                     : LLVMBuildUIToFP(g->b, v, t, "");
  int fb = teeny__dt_bits(from), tb = teeny__dt_bits(to);
  if (tb < fb)
    return LLVMBuildTrunc(g->b, v, t, "");
  if (tb == fb)
    return v;
  return teeny__dt_is_signed(from) ? LLVMBuildSExt(g->b, v, t, "")
                                   : LLVMBuildZExt(g->b, v, t, "");
}

/* ---- integer edges ---------------------------------------------------------------- */

static LLVMValueRef int_divrem(cg *g, bool rem, teeny_dtype dt, LLVMValueRef a,
                               LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef zero = LLVMBuildICmp(g->b, LLVMIntEQ, b, LLVMConstNull(t), "");
  LLVMValueRef bad = zero;
  if (teeny__dt_is_signed(dt)) {
    int bits = teeny__dt_bits(dt);
    LLVMValueRef min = LLVMConstInt(t, 1ull << (bits - 1), 0);
    LLVMValueRef ovf = LLVMBuildAnd(
        g->b, LLVMBuildICmp(g->b, LLVMIntEQ, a, min, ""),
        LLVMBuildICmp(g->b, LLVMIntEQ, b, LLVMConstAllOnes(t), ""), "");
    bad = LLVMBuildOr(g->b, zero, ovf, "");
  }
  LLVMValueRef safe = LLVMBuildSelect(g->b, bad, cint(g, t, 1), b, "");
  LLVMValueRef r;
  if (teeny__dt_is_signed(dt))
    r = rem ? LLVMBuildSRem(g->b, a, safe, "") : LLVMBuildSDiv(g->b, a, safe, "");
  else
    r = rem ? LLVMBuildURem(g->b, a, safe, "") : LLVMBuildUDiv(g->b, a, safe, "");
  /* MIN/-1 already came out as MIN/1 = MIN and MIN%1 = 0 */
  return LLVMBuildSelect(g->b, zero, rem ? a : LLVMConstAllOnes(t), r, "");
}

static LLVMValueRef int_shift(cg *g, bool left, teeny_dtype dt, LLVMValueRef a,
                              LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  int bits = teeny__dt_bits(dt);
  LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntULT, b, cint(g, t, bits), "");
  if (!left && teeny__dt_is_signed(dt)) /* sign fill: shift by width-1 */
    return LLVMBuildAShr(g->b, a, LLVMBuildSelect(g->b, ok, b, cint(g, t, bits - 1), ""),
                         "");
  LLVMValueRef amt = LLVMBuildSelect(g->b, ok, b, LLVMConstNull(t), "");
  LLVMValueRef r = left ? LLVMBuildShl(g->b, a, amt, "") : LLVMBuildLShr(g->b, a, amt, "");
  return LLVMBuildSelect(g->b, ok, r, LLVMConstNull(t), "");
}

static LLVMValueRef int_minmax(cg *g, bool max, teeny_dtype dt, LLVMValueRef a,
                               LLVMValueRef b) {
  bool s = teeny__dt_is_signed(dt);
  LLVMIntPredicate p = max ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT);
  return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, p, a, b, ""), a, b, "");
}

static LLVMValueRef compare(cg *g, teeny_cmp_pred pred, teeny_dtype dt,
                            LLVMValueRef a, LLVMValueRef b) {
  if (is_float(dt)) {
    static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                           LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(g->b, fp[pred], a, b, "");
  }
  static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT,
                                        LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT,
                                        LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  return LLVMBuildICmp(g->b, teeny__dt_is_signed(dt) ? sp[pred] : up[pred], a, b, "");
}

/* ---- the dispatcher -------------------------------------------------------------------- */

bool teeny__cg_is_elementwise(teeny_opcode code) {
  switch (code) {
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM:
  case IR_AND: case IR_OR: case IR_XOR: case IR_SHL: case IR_SHR:
  case IR_MIN: case IR_MAX: case IR_NEG: case IR_NOT: case IR_CMP:
  case IR_SELECT: case IR_CAST: case IR_EXP: case IR_EXP2: case IR_LOG:
  case IR_LOG2: case IR_SQRT: case IR_RSQRT: case IR_SIN: case IR_COS:
  case IR_TANH: case IR_ERF: case IR_ABS: case IR_FLOOR: case IR_CEIL:
  case IR_FMA: case IR_ADDPTR: case IR_UMULHI: case IR_BITCAST: case IR_POW:
  case IR_INTTOPTR: case IR_PTRTOINT: case IR_PTRCAST:
  case IR_ERFC: case IR_LOG1P: case IR_EXPM1: case IR_ASIN: case IR_ACOS: case IR_ATAN:
  case IR_ATAN2:
    return true;
  default:
    return false;
  }
}

/* One exact step of fmod in f64: x - trunc(x/y) y, for |x/y| < 2^53:
 * q = trunc(x/y) is then the true quotient or one off (x/y rounded across
 * an integer), r = fma(-q, y, x) is exact, and one step of |y| puts r
 * back in (-|y|, |y|) with the sign of x.  y = inf gives x. */
static LLVMValueRef rem_step(cg *g, LLVMValueRef dx, LLVMValueRef dy) {
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef q = LLVMBuildFDiv(g->b, dx, dy, "");
  q = teeny__cg_intrin(g, "llvm.trunc", &t, 1, &q, 1);
  LLVMValueRef args[3] = {LLVMBuildFNeg(g->b, q, ""), dy, dx};
  LLVMValueRef r = teeny__cg_intrin(g, "llvm.fma", &t, 1, args, 3);
  LLVMValueRef ay = teeny__cg_intrin(g, "llvm.fabs", &t, 1, &dy, 1);
  LLVMValueRef zero = LLVMConstReal(t, 0);
  LLVMValueRef xneg = LLVMBuildFCmp(g->b, LLVMRealOLT, dx, zero, "");
  LLVMValueRef sy = LLVMBuildSelect(g->b, xneg, LLVMBuildFNeg(g->b, ay, ""), ay, "");
  LLVMValueRef wrong = LLVMBuildSelect(g->b, xneg, LLVMBuildFCmp(g->b, LLVMRealOGT, r, zero, ""),
                                       LLVMBuildFCmp(g->b, LLVMRealOLT, r, zero, ""), "");
  r = LLVMBuildSelect(g->b, wrong, LLVMBuildFAdd(g->b, r, sy, ""), r, "");
  LLVMValueRef ar = teeny__cg_intrin(g, "llvm.fabs", &t, 1, &r, 1);
  LLVMValueRef big = LLVMBuildFCmp(g->b, LLVMRealOGE, ar, ay, "");
  r = LLVMBuildSelect(g->b, big, LLVMBuildFSub(g->b, r, sy, ""), r, "");
  LLVMValueRef yinf = LLVMBuildFCmp(g->b, LLVMRealOEQ, ay, LLVMConstReal(t, INFINITY), "");
  LLVMValueRef xfin = LLVMBuildFCmp(g->b, LLVMRealONE, teeny__cg_intrin(g, "llvm.fabs", &t, 1, &dx, 1),
                                    LLVMConstReal(t, INFINITY), "");
  return LLVMBuildSelect(g->b, LLVMBuildAnd(g->b, yinf, xfin, ""), dx, r, "");
}

/* floor(log2(|v|)) of a finite non-zero f64, subnormals included (i64). */
static LLVMValueRef ilogb64(cg *g, LLVMValueRef v) {
  LLVMValueRef bits = LLVMBuildBitCast(g->b, v, g->t_i64, "");
  LLVMValueRef e = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, bits, teeny__cg_i64(g, 52), ""),
                                teeny__cg_i64(g, 0x7ff), "");
  LLVMValueRef mant = LLVMBuildAnd(g->b, bits, teeny__cg_i64(g, 0xfffffffffffffll), "");
  LLVMValueRef args[2] = {mant, LLVMConstInt(g->t_i1, 0, 0)};
  LLVMTypeRef it = g->t_i64;
  LLVMValueRef lz = teeny__cg_intrin(g, "llvm.ctlz", &it, 1, args, 2);
  LLVMValueRef sub = LLVMBuildSub(g->b, teeny__cg_i64(g, -1074 + 63), lz, "");
  LLVMValueRef norm = LLVMBuildSub(g->b, e, teeny__cg_i64(g, 1023), "");
  return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, e, teeny__cg_i64(g, 0), ""),
                         sub, norm, "");
}

/* C's fmod, exactly, for every input (LLVM's NVPTX frem is x - trunc(x/y) y,
 * wrong for large quotients), in f64: while |x/y| >= 2^52, reduce x by
 * y 2^k with k = ilogb(x) - ilogb(y) - 50 (a multiple of y, so x mod y
 * stays; one exact step each, about 50 bits of the exponent gap per trip:
 * at most 6 for f32 operands), then one last step by y.  A zero result
 * has the sign of x (docs/dsl.md §4). */
static LLVMValueRef float_rem(cg *g, teeny_dtype dt, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef t = g->t_f64;
  LLVMValueRef dx = dt == TEENY_DT_F64 ? x : teeny__cg_cast(g, x, dt, TEENY_DT_F64);
  LLVMValueRef dy = dt == TEENY_DT_F64 ? y : teeny__cg_cast(g, y, dt, TEENY_DT_F64);
  LLVMValueRef ay = teeny__cg_intrin(g, "llvm.fabs", &t, 1, &dy, 1);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "rem.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "rem.body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "rem.done");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef r = LLVMBuildPhi(g->b, t, "rem.r");
  LLVMValueRef ar = teeny__cg_intrin(g, "llvm.fabs", &t, 1, &r, 1);
  /* finite, y finite and non-zero, and 2^52 |y| <= |r| */
  LLVMValueRef far = LLVMBuildFCmp(g->b, LLVMRealOGE, ar,
                                   LLVMBuildFMul(g->b, ay, LLVMConstReal(t, 4503599627370496.0), ""), "");
  LLVMValueRef ok = LLVMBuildAnd(
      g->b, LLVMBuildFCmp(g->b, LLVMRealOLT, ar, LLVMConstReal(t, INFINITY), ""),
      LLVMBuildAnd(g->b, LLVMBuildFCmp(g->b, LLVMRealOGT, ay, LLVMConstReal(t, 0), ""),
                   LLVMBuildFCmp(g->b, LLVMRealOLT, ay, LLVMConstReal(t, INFINITY), ""), ""), "");
  LLVMBuildCondBr(g->b, LLVMBuildAnd(g->b, far, ok, ""), body, done);
  LLVMPositionBuilderAtEnd(g->b, body);
  LLVMValueRef k = LLVMBuildSub(g->b, LLVMBuildSub(g->b, ilogb64(g, ar), ilogb64(g, ay), ""),
                                teeny__cg_i64(g, 50), "");
  /* |y| 2^k <= |r| < inf: exact (k fits the exponent) */
  LLVMValueRef kk = LLVMBuildTrunc(g->b, k, g->t_i32, "");
  LLVMValueRef half = LLVMBuildSDiv(g->b, kk, teeny__cg_i32(g, 2), "");
  LLVMValueRef p1 = LLVMBuildBitCast(
      g->b, LLVMBuildShl(g->b, LLVMBuildZExt(g->b, LLVMBuildAdd(g->b, half, teeny__cg_i32(g, 1023), ""), g->t_i64, ""),
                         teeny__cg_i64(g, 52), ""), t, "");
  LLVMValueRef p2 = LLVMBuildBitCast(
      g->b, LLVMBuildShl(g->b, LLVMBuildZExt(g->b, LLVMBuildAdd(g->b, LLVMBuildSub(g->b, kk, half, ""),
                                                                teeny__cg_i32(g, 1023), ""), g->t_i64, ""),
                         teeny__cg_i64(g, 52), ""), t, "");
  LLVMValueRef big_y = LLVMBuildFMul(g->b, LLVMBuildFMul(g->b, ay, p1, ""), p2, "");
  LLVMValueRef next = rem_step(g, r, big_y);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  LLVMValueRef in[2] = {dx, next};
  LLVMBasicBlockRef from[2] = {pre, latch};
  LLVMAddIncoming(r, in, from, 2);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef res = rem_step(g, r, dy);
  LLVMValueRef sargs[2] = {res, dx}; /* a zero result keeps x's sign */
  LLVMValueRef signed0 = teeny__cg_intrin(g, "llvm.copysign", &t, 1, sargs, 2);
  res = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, res, LLVMConstReal(t, 0), ""),
                        signed0, res, "");
  return dt == TEENY_DT_F64 ? res : teeny__cg_cast(g, res, TEENY_DT_F64, dt);
}

/* The emulator's f16/bf16 fma, rounded once (teeny_emu_fma16), element by
 * element where the operands are vectors. */
static LLVMValueRef emu_fma16_one(cg *g, teeny_dtype dt, LLVMValueRef *x) {
  LLVMValueRef args[4];
  for (int i = 0; i < 3; i++)
    args[i] = teeny__cg_cast(g, x[i], dt, TEENY_DT_F64);
  args[3] = teeny__cg_i32(g, (int)dt);
  LLVMValueRef r = teeny__cg_emu_call(g, "teeny_emu_fma16", g->t_f64, args, 4);
  return teeny__cg_cast(g, r, TEENY_DT_F64, dt); /* exact: r is a value of dt */
}

static LLVMValueRef emu_fma16(cg *g, teeny_dtype dt, LLVMValueRef *a) {
  LLVMTypeRef t = LLVMTypeOf(a[0]);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
    return emu_fma16_one(g, dt, a);
  LLVMValueRef r = LLVMGetUndef(t);
  for (unsigned i = 0; i < LLVMGetVectorSize(t); i++) {
    LLVMValueRef k = teeny__cg_i32(g, (int)i), x[3];
    for (int j = 0; j < 3; j++)
      x[j] = LLVMBuildExtractElement(g->b, a[j], k, "");
    r = LLVMBuildInsertElement(g->b, r, emu_fma16_one(g, dt, x), k, "");
  }
  return r;
}

/* abs of a float, hidden from LLVM 19's sign-bit reasoning.  llvm.fabs
 * gives a value whose sign bit LLVM knows to be clear even when it is a
 * NaN, and LLVM then takes maxnum(fabs(x), y) for a never-NaN y (a
 * constant, a converted integer) to have a clear sign bit too, which is
 * false when x is NaN (the result is y): it drops a later abs and folds
 * `maximum(abs(x), -8.0f) < 0` to false (difffuzz's scan_amax_f16_clamped;
 * `opt-19 -O1` shows it on three lines of IR).  So abs clears the sign bit
 * where LLVM cannot see it: on the GPU, PTX's own abs in inline asm (ptxas
 * still folds it into its users' |x| operand modifiers); in the emulator,
 * an AND in its runtime.  Vectors (none today) would keep llvm.fabs. */
static LLVMValueRef float_abs(cg *g, teeny_dtype dt, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
    return teeny__cg_intrin(g, "llvm.fabs", &t, 1, &x, 1);
  unsigned bits = (unsigned)teeny__dt_bits(dt);
  if (g->emu) {
    LLVMTypeRef it = LLVMIntTypeInContext(g->ctx, bits);
    LLVMValueRef a[2] = {LLVMBuildZExt(g->b, LLVMBuildBitCast(g->b, x, it, ""), g->t_i64, ""),
                         teeny__cg_i64(g, (long long)(~0ull >> (65 - bits)))};
    LLVMValueRef r = teeny__cg_emu_call(g, "teeny_emu_and", g->t_i64, a, 2);
    return LLVMBuildBitCast(g->b, LLVMBuildTrunc(g->b, r, it, ""), t, "");
  }
  switch (dt) {
  case TEENY_DT_F32:
    return teeny__cg_asm(g, t, "abs.f32 $0, $1;", "=f,f", &x, 1, false);
  case TEENY_DT_F64:
    return teeny__cg_asm(g, t, "abs.f64 $0, $1;", "=d,d", &x, 1, false);
  default: { /* f16, bf16: PTX's abs (sm_53, sm_80), not an and.b16 of the
              * sign bit: ptxas (12.8, and the 13.0 driver JIT) at -O1 and
              * above drops such an and on the low half of a packed pair
              * (repro-gpu/abs_f16_pair_gpu; docs/reliability.md) */
    LLVMValueRef b = LLVMBuildBitCast(g->b, x, g->t_i16, "");
    b = teeny__cg_asm(g, g->t_i16, dt == TEENY_DT_BF16 ? "abs.bf16 $0, $1;" : "abs.f16 $0, $1;",
                      "=h,h", &b, 1, false);
    return LLVMBuildBitCast(g->b, b, t, "");
  }
  }
}

/* minimum/maximum of floats: IEEE 754-2019's minimumNumber/maximumNumber
 * (docs/dsl.md).  The GPU's min and max are that already (a NaN gives the
 * other operand, -0 orders below +0); llvm.minnum/maxnum may return either
 * zero, and the host's lowering (minsd/maxsd) returns the second operand,
 * so the emulator combines equal operands' bits: OR keeps a sign for min,
 * AND drops it for max (equal nonzero operands have equal bits). */
static LLVMValueRef float_minmax(cg *g, bool max, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef ab[2] = {a, b};
  LLVMValueRef r = teeny__cg_intrin(g, max ? "llvm.maxnum" : "llvm.minnum", &t, 1, ab, 2);
  if (!g->emu)
    return r;
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef et = vec ? LLVMGetElementType(t) : t;
  LLVMTypeRef it = LLVMIntTypeInContext(g->ctx, LLVMGetTypeKind(et) == LLVMDoubleTypeKind ? 64
                                                : LLVMGetTypeKind(et) == LLVMFloatTypeKind ? 32
                                                                                           : 16);
  if (vec)
    it = LLVMVectorType(it, LLVMGetVectorSize(t));
  LLVMValueRef ia = LLVMBuildBitCast(g->b, a, it, ""), ib = LLVMBuildBitCast(g->b, b, it, "");
  LLVMValueRef both = max ? LLVMBuildAnd(g->b, ia, ib, "") : LLVMBuildOr(g->b, ia, ib, "");
  LLVMValueRef eq = LLVMBuildFCmp(g->b, LLVMRealOEQ, a, b, "");
  return LLVMBuildSelect(g->b, eq, LLVMBuildBitCast(g->b, both, t, ""), r, "");
}

static LLVMValueRef arith(cg *g, teeny_opcode code, teeny_dtype dt, LLVMValueRef a,
                          LLVMValueRef b) {
  bool f = is_float(dt);
  switch (code) {
  case IR_ADD:
    return f ? LLVMBuildFAdd(g->b, a, b, "") : LLVMBuildAdd(g->b, a, b, "");
  case IR_SUB:
    return f ? LLVMBuildFSub(g->b, a, b, "") : LLVMBuildSub(g->b, a, b, "");
  case IR_MUL:
    return f ? LLVMBuildFMul(g->b, a, b, "") : LLVMBuildMul(g->b, a, b, "");
  case IR_DIV:
    return f ? LLVMBuildFDiv(g->b, a, b, "") : int_divrem(g, false, dt, a, b);
  case IR_REM:
    return f ? float_rem(g, dt, a, b) : int_divrem(g, true, dt, a, b);
  case IR_AND:
    return LLVMBuildAnd(g->b, a, b, "");
  case IR_OR:
    return LLVMBuildOr(g->b, a, b, "");
  case IR_XOR:
    return LLVMBuildXor(g->b, a, b, "");
  case IR_SHL:
  case IR_SHR:
    return int_shift(g, code == IR_SHL, dt, a, b);
  case IR_MIN:
  case IR_MAX:
    return f ? float_minmax(g, code == IR_MAX, a, b) : int_minmax(g, code == IR_MAX, dt, a, b);
  default:
    return NULL;
  }
}

static LLVMValueRef addptr(cg *g, teeny_dtype pointee, teeny_dtype offdt,
                           LLVMValueRef p, LLVMValueRef off) {
  if (teeny__dt_bits(offdt) < 64)
    off = teeny__dt_is_signed(offdt) ? LLVMBuildSExt(g->b, off, g->t_i64, "")
                                     : LLVMBuildZExt(g->b, off, g->t_i64, "");
  return LLVMBuildGEP2(g->b, teeny__cg_memtype(g, pointee), p, &off, 1, "");
}

/* A dtype computed in f32: fp8 always, bf16 in the emulator (see
 * emu_to_bf16). */
static bool through_f32(cg *g, teeny_dtype dt) {
  return teeny__dt_is_fp8(dt) || (g->emu && dt == TEENY_DT_BF16);
}

/* Whether op computes in f32 on operands of such dtypes.  Selects, casts
 * and bitcasts keep the bits. */
static bool promote_f32(cg *g, const teeny_op *op, const teeny_dtype *adt) {
  if (op->code == IR_SELECT || op->code == IR_CAST || op->code == IR_BITCAST)
    return false;
  if (op->code == IR_FMA && g->emu && adt[0] == TEENY_DT_BF16)
    return false; /* rounded once by emu_fma16, not in f32 */
  for (int i = 0; i < op->nargs && i < 3; i++)
    if (through_f32(g, adt[i]))
      return true;
  return false;
}

LLVMValueRef teeny__cg_scalar_op(cg *g, const teeny_op *op, const teeny_dtype *adt,
                                 teeny_dtype res_dt, LLVMValueRef *a) {
  teeny_dtype dt = adt[0];
  LLVMValueRef r = NULL;
  if (promote_f32(g, op, adt)) {
    LLVMValueRef w[3];
    teeny_dtype wdt[3];
    for (int i = 0; i < op->nargs && i < 3; i++) {
      bool b = through_f32(g, adt[i]);
      w[i] = b ? teeny__cg_cast(g, a[i], adt[i], TEENY_DT_F32) : a[i];
      wdt[i] = b ? TEENY_DT_F32 : adt[i];
    }
    bool rb = through_f32(g, res_dt);
    r = teeny__cg_scalar_op(g, op, wdt, rb ? TEENY_DT_F32 : res_dt, w);
    return rb ? teeny__cg_cast(g, r, TEENY_DT_F32, res_dt) : r;
  }
  switch (op->code) {
  case IR_NEG:
    return is_float(dt) ? LLVMBuildFNeg(g->b, a[0], "")
                        : LLVMBuildNeg(g->b, a[0], "");
  case IR_NOT:
    return LLVMBuildNot(g->b, a[0], "");
  case IR_ABS:
    if (is_float(dt))
      return float_abs(g, dt, a[0]);
    if (!teeny__dt_is_signed(dt))
      return a[0];
    return LLVMBuildSelect(
        g->b, LLVMBuildICmp(g->b, LLVMIntSLT, a[0], LLVMConstNull(LLVMTypeOf(a[0])), ""),
        LLVMBuildNeg(g->b, a[0], ""), a[0], "");
  case IR_CMP:
    return compare(g, op->pred, dt, a[0], a[1]);
  case IR_SELECT:
    return LLVMBuildSelect(g->b, a[0], a[1], a[2], "");
  case IR_CAST:
    return teeny__cg_cast(g, a[0], dt, res_dt);
  case IR_BITCAST:
    return LLVMBuildBitCast(g->b, a[0], teeny__cg_type(g, res_dt), "");
  case IR_INTTOPTR:
    return LLVMBuildIntToPtr(g->b, a[0], teeny__cg_type(g, TEENY_DT_PTR), "");
  case IR_PTRTOINT:
    return LLVMBuildPtrToInt(g->b, a[0], g->t_i64, "");
  case IR_PTRCAST: /* opaque pointers: the same value */
    return a[0];
  case IR_UMULHI: { /* the wide product's high half: mul.hi.u32 / .u64 */
    unsigned w = (unsigned)teeny__dt_bits(dt);
    LLVMTypeRef wt = LLVMIntTypeInContext(g->ctx, 2 * w);
    LLVMValueRef p = LLVMBuildMul(g->b, LLVMBuildZExt(g->b, a[0], wt, ""),
                                  LLVMBuildZExt(g->b, a[1], wt, ""), "");
    return LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, p, LLVMConstInt(wt, w, 0), ""),
                          LLVMTypeOf(a[0]), "");
  }
  case IR_FMA: {
    LLVMTypeRef t = LLVMTypeOf(a[0]);
    if (g->emu && (dt == TEENY_DT_F16 || dt == TEENY_DT_BF16))
      return emu_fma16(g, dt, a);
    return teeny__cg_intrin(g, "llvm.fma", &t, 1, a, 3);
  }
  case IR_ADDPTR: {
    teeny_type pt = teeny__ir_type(g->f, op->args[0]);
    return addptr(g, pt.pointee, adt[1], a[0], a[1]);
  }
  case IR_EXP: case IR_EXP2: case IR_LOG: case IR_LOG2: case IR_SQRT:
  case IR_RSQRT: case IR_SIN: case IR_COS: case IR_TANH: case IR_ERF:
  case IR_FLOOR: case IR_CEIL: case IR_ERFC: case IR_LOG1P: case IR_EXPM1:
  case IR_ASIN: case IR_ACOS: case IR_ATAN:
    return teeny__cg_math(g, op->code, dt, op->fast, a[0]);
  case IR_POW:
    return teeny__cg_pow(g, dt, a[0], a[1]);
  case IR_ATAN2:
    return teeny__cg_atan2(g, dt, a[0], a[1]);
  case IR_DIV:
    if (op->fast && dt == TEENY_DT_F32 && !g->emu) /* fdiv: Triton's fast division */
      return teeny__cg_asm(g, g->t_f32, "div.full.f32 $0, $1, $2;", "=f,f,f", a, 2, false);
    r = arith(g, op->code, dt, a[0], a[1]);
    break;
  default:
    r = arith(g, op->code, dt, a[0], a[1]);
  }
  if (!r)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "cannot lower '%s' on %s yet",
                   teeny__opcode_name(op->code), teeny_dtype_name(dt));
  return r;
}

/* ---- on tiles ------------------------------------------------------------------------------ */

LLVMValueRef *teeny__cg_elementwise_regs(cg *g, const teeny_op *op,
                                         const cg_layout *L) {
  LLVMValueRef *in[3];
  teeny_dtype adt[3];
  for (int i = 0; i < op->nargs && i < 3; i++) {
    in[i] = teeny__cg_get(g, op->args[i], L);
    adt[i] = teeny__ir_type(g->f, op->args[i]).dt;
  }
  teeny_dtype rdt = teeny__ir_type(g->f, op->res[0]).dt;
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  teeny_loc keep = g->loc;
  g->loc = op->loc;
  for (long r = 0; r < (1L << L->nreg); r++) {
    long s = teeny__cg_dup_src(L, r);
    if (s != r) {
      out[r] = out[s];
      continue;
    }
    LLVMValueRef a[3];
    for (int i = 0; i < op->nargs && i < 3; i++)
      a[i] = in[i][r];
    out[r] = teeny__cg_scalar_op(g, op, adt, rdt, a);
  }
  g->loc = keep;
  return out;
}

void teeny__cg_emit_elementwise(cg *g, const teeny_op *op) {
  teeny_type t = teeny__ir_type(g->f, op->res[0]);
  if (t.rank == 0) {
    LLVMValueRef a[3];
    teeny_dtype adt[3];
    for (int i = 0; i < op->nargs && i < 3; i++) {
      a[i] = teeny__cg_scalar(g, op->args[i]);
      adt[i] = teeny__ir_type(g->f, op->args[i]).dt;
    }
    teeny__cg_set_scalar(g, op->res[0], teeny__cg_scalar_op(g, op, adt, t.dt, a));
    return;
  }
  const cg_vinfo *vi = &g->vi[op->res[0]];
  if (vi->lazy)
    return; /* made where it is used */
  teeny__cg_set(g, op->res[0], vi->nat, teeny__cg_elementwise_regs(g, op, vi->nat));
}
