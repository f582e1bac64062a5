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
 */
#include <stdbool.h>

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

void teeny__cg_repair_nvptx(LLVMModuleRef m) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;) {
        LLVMValueRef next = LLVMGetNextInstruction(in);
        repair_sitofp_i1(b, in);
        in = next;
      }
  LLVMDisposeBuilder(b);
}
