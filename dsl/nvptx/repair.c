/*
 * dsl/nvptx/repair.c — rewrites of the optimised LLVM IR that step around
 * known bugs of LLVM 19's NVPTX back end, run after the passes and before
 * PTX emission (the host emulator's x86 back end does not have them, so
 * the differential fuzzer on the GPU is what finds them; each has a
 * reproducer in tests/diff/repro-gpu/ and a PTX test in test_emulator).
 *
 *   sitofp i1   `sitofp i1 %c to T` is lowered as `selp 1, 0` and a signed
 *               conversion: true becomes +1.0 instead of -1.0.  InstCombine
 *               makes this form from `sitofp (sub 0, zext %c)` (the
 *               language's `-(i32)mask` converted to a float), so we cannot
 *               avoid emitting it; rewritten as `select %c, -1.0, 0.0`.
 *
 * and of NVIDIA's assembler (the driver's JIT and ptxas 12.8/13.0 at -O1 and
 * above; right at -O0: docs/reliability.md "On the H200"), whose output we
 * cannot repair, so the PTX avoids the forms it gets wrong:
 *
 *   neg         an integer `neg.s32` (also .s16, .s64) feeding a min/max,
 *               a reduction or a store mask was dropped or taken as its
 *               operand (reduce_max_neg_i8_gpu, order_scan_i16_mask_gpu,
 *               loop_max_neg_to_f32_gpu).  `sub 0, x` is emitted as inline
 *               `not` + `add 1`, which the H200 ran right in each.
 *   sub         `sub.s32 a, x` feeding `max.u32` was fused into VIADDMNMX
 *               with the sign of x dropped: max(1 - x, s) computed as
 *               max(x - 1, s) (seed 84003053, SASS read).  A subtraction
 *               of a register that feeds a min/max is emitted as inline
 *               a + ~x + 1, which the H200 ran right.
 *   uitofp sext `cvt.rn.f32.u32` of a sign-extended byte (`bfe.s32`) became
 *               a signed I2F.S8 in the SASS: -5 as u32 converted to -5.0
 *               instead of 4294967296.0 (reduce_u32_of_i8_gpu).  Rewritten
 *               as `x < 0 ? 2^N + (float)x : (float)x` with signed
 *               conversions, exact because x has at most 16 significant
 *               bits (one rounding, in the addition).
 *   min/max i16 `max.u16 %rs, %rs, 1` (the language's x / y on u16 keeps y
 *               at least 1 where it matters) gave 32 of 838 wrong
 *               quotients (store_u16_division_gpu); narrow min/max is done
 *               in 32 bits (`llvm.umax.i16` as zext, `llvm.umax.i32`,
 *               trunc), which the H200 ran right.
 *   abs i16     `abs.s16` in an i16 scan of maximum(abs(a), abs(b)) gave 0
 *               for -55 (scan_amax_i16_gpu; the same PTX with each abs.s16
 *               done as cvt.s32.s16, abs.s32, cvt.u16.u32 ran right on the
 *               H200, and no other rewrite did): narrow `llvm.abs` is done
 *               in 32 bits as min/max are.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dsl/nvptx/codegen.h"

/* `sitofp i1 x to T` (or the vector form) as a select of -1 and 0. */
static bool repair_sitofp_i1(LLVMBuilderRef b, LLVMValueRef in) {
  if (LLVMGetInstructionOpcode(in) != LLVMSIToFP)
    return false;
  LLVMValueRef x = LLVMGetOperand(in, 0);
  LLVMTypeRef xt = LLVMTypeOf(x);
  LLVMTypeRef et = LLVMGetTypeKind(xt) == LLVMVectorTypeKind ? LLVMGetElementType(xt) : xt;
  if (LLVMGetTypeKind(et) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(et) != 1)
    return false;
  LLVMTypeRef t = LLVMTypeOf(in);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMValueRef minus_one = LLVMConstReal(vec ? LLVMGetElementType(t) : t, -1.0);
  LLVMValueRef zero = LLVMConstNull(t);
  LLVMPositionBuilderBefore(b, in);
  if (vec) { /* splat: insert into lane 0, shuffle lane 0 everywhere */
    LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetTypeContext(t));
    LLVMValueRef one = LLVMBuildInsertElement(b, LLVMGetPoison(t), minus_one,
                                              LLVMConstInt(i32, 0, 0), "");
    minus_one = LLVMBuildShuffleVector(b, one, LLVMGetPoison(t),
                                       LLVMConstNull(LLVMVectorType(i32, LLVMGetVectorSize(t))), "");
  }
  LLVMValueRef r = LLVMBuildSelect(b, x, minus_one, zero, "");
  LLVMReplaceAllUsesWith(in, r);
  LLVMInstructionEraseFromParent(in);
  return true;
}

/* `sub iN 0, x` (N 16, 32, 64; scalars) as inline not + add. */
static bool repair_neg(LLVMBuilderRef b, LLVMValueRef in) {
  if (LLVMGetInstructionOpcode(in) != LLVMSub)
    return false;
  LLVMValueRef z = LLVMGetOperand(in, 0), x = LLVMGetOperand(in, 1);
  LLVMTypeRef t = LLVMTypeOf(in);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || !LLVMIsAConstantInt(z) ||
      LLVMConstIntGetZExtValue(z) != 0)
    return false;
  unsigned w = LLVMGetIntTypeWidth(t);
  if (w != 16 && w != 32 && w != 64)
    return false;
  char text[64];
  snprintf(text, sizeof text, "not.b%u $0, $1;\n\tadd.s%u $0, $0, 1;", w, w);
  const char *cons = w == 16 ? "=h,h" : w == 32 ? "=r,r" : "=l,l";
  LLVMTypeRef ft = LLVMFunctionType(t, &t, 1, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(ft, text, strlen(text), (char *)cons, strlen(cons),
                                     false, false, LLVMInlineAsmDialectATT, false);
  LLVMPositionBuilderBefore(b, in);
  LLVMValueRef r = LLVMBuildCall2(b, ft, fn, &x, 1, "");
  LLVMReplaceAllUsesWith(in, r);
  LLVMInstructionEraseFromParent(in);
  return true;
}

/* Is v used by an integer min/max: an llvm.{s,u}{min,max} call, or a
 * select whose condition compares v? */
static bool feeds_min_max(LLVMValueRef v) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsACallInst(user)) {
      LLVMValueRef callee = LLVMGetCalledValue(user);
      size_t n = 0;
      const char *name = callee ? LLVMGetValueName2(callee, &n) : "";
      if (strncmp(name, "llvm.smax.", 10) == 0 || strncmp(name, "llvm.smin.", 10) == 0 ||
          strncmp(name, "llvm.umax.", 10) == 0 || strncmp(name, "llvm.umin.", 10) == 0)
        return true;
    } else if (LLVMIsAICmpInst(user)) {
      for (LLVMUseRef c = LLVMGetFirstUse(user); c; c = LLVMGetNextUse(c))
        if (LLVMIsASelectInst(LLVMGetUser(c)))
          return true;
    }
  }
  return false;
}

/* `sub iN a, x` (N 16, 32, 64; scalars; x not a constant) feeding a
 * min/max as inline a + ~x + 1. */
static bool repair_sub_min_max(LLVMBuilderRef b, LLVMValueRef in) {
  if (LLVMGetInstructionOpcode(in) != LLVMSub)
    return false;
  LLVMValueRef ops[2] = {LLVMGetOperand(in, 0), LLVMGetOperand(in, 1)};
  LLVMTypeRef t = LLVMTypeOf(in);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMIsAConstant(ops[1]) ||
      !feeds_min_max(in))
    return false;
  unsigned w = LLVMGetIntTypeWidth(t);
  if (w != 16 && w != 32 && w != 64)
    return false;
  char text[128], cons[16];
  snprintf(text, sizeof text,
           "{\n\t.reg .b%u t;\n\tnot.b%u t, $2;\n\tadd.s%u $0, $1, t;\n\tadd.s%u $0, $0, 1;\n\t}",
           w, w, w, w);
  char c = w == 16 ? 'h' : w == 32 ? 'r' : 'l';
  snprintf(cons, sizeof cons, "=%c,%c,%c", c, c, c);
  LLVMTypeRef pt[2] = {t, t};
  LLVMTypeRef ft = LLVMFunctionType(t, pt, 2, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), false, false,
                                     LLVMInlineAsmDialectATT, false);
  LLVMPositionBuilderBefore(b, in);
  LLVMValueRef r = LLVMBuildCall2(b, ft, fn, ops, 2, "");
  LLVMReplaceAllUsesWith(in, r);
  LLVMInstructionEraseFromParent(in);
  return true;
}

/* The significant bits of an integer made by sign extension: `sext iK`
 * (K), or `ashr x, c` (width - c); 0 when it is not one. */
static unsigned sign_extended_bits(LLVMValueRef v) {
  if (!LLVMIsAInstruction(v))
    return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMSExt)
    return LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0)));
  if (op == LLVMAShr && LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
    unsigned long long c = LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1));
    unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(v));
    return c < w ? w - (unsigned)c : 0;
  }
  return 0;
}

/* `uitofp (sign-extended x) to T` (scalars, x of at most 16 significant
 * bits, T a float type) as select(x < 0, 2^N + sitofp x, sitofp x), in f32
 * (f64 for T f64) and then rounded to T: 2^N + x is rounded once, and
 * for T f16/bf16 the second rounding is of a value the first left within
 * 2^15 of 2^N, which rounds as the exact one does (to inf or to 2^N). */
static bool repair_uitofp_sext(LLVMBuilderRef b, LLVMValueRef in) {
  if (LLVMGetInstructionOpcode(in) != LLVMUIToFP)
    return false;
  LLVMValueRef x = LLVMGetOperand(in, 0);
  LLVMTypeRef xt = LLVMTypeOf(x), t = LLVMTypeOf(in);
  if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind)
    return false;
  unsigned bits = sign_extended_bits(x), n = LLVMGetIntTypeWidth(xt);
  if (bits == 0 || bits > 16 || n > 64)
    return false;
  LLVMContextRef cx = LLVMGetTypeContext(t);
  LLVMTypeKind k = LLVMGetTypeKind(t);
  LLVMTypeRef wt = k == LLVMDoubleTypeKind ? LLVMDoubleTypeInContext(cx) : LLVMFloatTypeInContext(cx);
  if (k != LLVMDoubleTypeKind && k != LLVMFloatTypeKind && k != LLVMHalfTypeKind &&
      k != LLVMBFloatTypeKind)
    return false;
  LLVMPositionBuilderBefore(b, in);
  LLVMValueRef f = LLVMBuildSIToFP(b, x, wt, "");
  LLVMValueRef big = LLVMBuildFAdd(b, f, LLVMConstReal(wt, ldexp(1.0, (int)n)), "");
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, x, LLVMConstNull(xt), "");
  LLVMValueRef r = LLVMBuildSelect(b, neg, big, f, "");
  if (wt != t)
    r = LLVMBuildFPTrunc(b, r, t, "");
  LLVMReplaceAllUsesWith(in, r);
  LLVMInstructionEraseFromParent(in);
  return true;
}

/* `llvm.{s,u}{min,max}.i8/i16(a, b)` and `llvm.abs.i8/i16(a, poison)`
 * (scalars) in 32 bits: each operand sign- or zero-extended as the
 * operation reads it, the result truncated. */
static bool repair_narrow_int(LLVMBuilderRef b, LLVMModuleRef m, LLVMValueRef in) {
  if (LLVMGetInstructionOpcode(in) != LLVMCall)
    return false;
  LLVMValueRef callee = LLVMGetCalledValue(in);
  if (!callee || !LLVMIsAFunction(callee))
    return false;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  static const char *const ops[] = {"llvm.smax.", "llvm.smin.", "llvm.umax.", "llvm.umin.",
                                    "llvm.abs."};
  int op = -1;
  for (int i = 0; i < (int)(sizeof ops / sizeof *ops); i++)
    if (len > strlen(ops[i]) && strncmp(name, ops[i], strlen(ops[i])) == 0)
      op = i;
  LLVMTypeRef t = LLVMTypeOf(in);
  if (op < 0 || LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) > 16)
    return false;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetTypeContext(t));
  bool abs = op == 4; /* abs(x, is_int_min_poison): the flag stays i1 */
  char wide[24];
  snprintf(wide, sizeof wide, "%si32", ops[op]);
  LLVMTypeRef second = abs ? LLVMInt1TypeInContext(LLVMGetTypeContext(t)) : i32;
  LLVMTypeRef ft = LLVMFunctionType(i32, (LLVMTypeRef[]){i32, second}, 2, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(m, wide);
  if (!fn)
    fn = LLVMAddFunction(m, wide, ft);
  LLVMPositionBuilderBefore(b, in);
  LLVMValueRef a[2];
  for (int i = 0; i < 2; i++)
    a[i] = abs && i ? LLVMConstInt(second, 0, 0) /* INT16_MIN's abs is defined in 32 bits */
           : op < 2 || abs ? LLVMBuildSExt(b, LLVMGetOperand(in, (unsigned)i), i32, "")
                           : LLVMBuildZExt(b, LLVMGetOperand(in, (unsigned)i), i32, "");
  LLVMValueRef r = LLVMBuildTrunc(b, LLVMBuildCall2(b, ft, fn, a, 2, ""), t, "");
  LLVMReplaceAllUsesWith(in, r);
  LLVMInstructionEraseFromParent(in);
  return true;
}

void teeny__cg_repair_nvptx(LLVMModuleRef m) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;) {
        LLVMValueRef next = LLVMGetNextInstruction(in);
        if (!repair_sitofp_i1(b, in) && !repair_neg(b, in) && !repair_sub_min_max(b, in) &&
            !repair_uitofp_sext(b, in))
          repair_narrow_int(b, m, in);
        in = next;
      }
  LLVMDisposeBuilder(b);
}
