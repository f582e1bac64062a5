/*
 * dsl/nvptx/emu_ir.c — the code generator's side of host emulation: when
 * a module is built for the emulator (g->emu), llvm.nvvm.* intrinsics
 * become host math or calls into the emulator's runtime by name.  Only IR
 * construction lives here, so the production library (teeny_compiler)
 * needs no host back end or JIT; the runtime and the JIT are in
 * emu.c, which only the tests link (teeny_codegen_emu).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "dsl/nvptx/codegen.h"

/* ---- code generation side -------------------------------------------------------- */

LLVMValueRef teeny__cg_emu_call(cg *g, const char *name, LLVMTypeRef ret,
                                LLVMValueRef *args, int nargs) {
  LLVMValueRef all[16];
  LLVMTypeRef ty[16];
  all[0] = g->emu_arg;
  ty[0] = LLVMTypeOf(g->emu_arg);
  for (int i = 0; i < nargs && i < 15; i++) {
    all[i + 1] = args[i];
    ty[i + 1] = LLVMTypeOf(args[i]);
  }
  LLVMTypeRef fty = LLVMFunctionType(ret, ty, (unsigned)nargs + 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
  if (!fn)
    fn = LLVMAddFunction(g->mod, name, fty);
  return LLVMBuildCall2(g->b, fty, fn, all, (unsigned)nargs + 1, "");
}

static LLVMValueRef host_math(cg *g, const char *intrin, LLVMValueRef x) {
  LLVMTypeRef t = g->t_f32;
  return teeny__cg_intrin(g, intrin, &t, 1, &x, 1);
}

static int sreg_index(const char *name) {
  static const char *const regs[] = {"tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y",
                                     "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z"};
  for (int i = 0; i < 9; i++)
    if (strcmp(name, regs[i]) == 0)
      return i;
  return -1;
}

LLVMValueRef teeny__cg_emu_intrin(cg *g, const char *name, LLVMValueRef *args,
                                  int nargs) {
  const char *n = name + strlen("llvm.nvvm.");
  if (strncmp(n, "read.ptx.sreg.", 14) == 0) {
    int i = sreg_index(n + 14);
    if (i >= 0) {
      LLVMValueRef w = teeny__cg_i32(g, i);
      return teeny__cg_emu_call(g, "teeny_emu_sreg", g->t_i32, &w, 1);
    }
  } else if (strcmp(n, "barrier0") == 0) {
    return teeny__cg_emu_call(g, "teeny_emu_barrier", g->t_void, NULL, 0);
  } else if (strcmp(n, "barrier0.and") == 0 && nargs == 1) {
    return teeny__cg_emu_call(g, "teeny_emu_barrier_and", g->t_i32, args, 1);
  } else if (strncmp(n, "shfl.sync.bfly.", 15) == 0 && nargs == 4) {
    bool f = strcmp(n + 15, "f32") == 0;
    LLVMValueRef a[2] = {f ? LLVMBuildBitCast(g->b, args[1], g->t_i32, "") : args[1],
                         args[2]};
    LLVMValueRef r = teeny__cg_emu_call(g, "teeny_emu_shfl", g->t_i32, a, 2);
    return f ? LLVMBuildBitCast(g->b, r, g->t_f32, "") : r;
  } else if (strcmp(n, "ex2.approx.f") == 0) {
    return host_math(g, "llvm.exp2", args[0]);
  } else if (strcmp(n, "lg2.approx.f") == 0) {
    return host_math(g, "llvm.log2", args[0]);
  } else if (strcmp(n, "sin.approx.f") == 0) {
    return host_math(g, "llvm.sin", args[0]);
  } else if (strcmp(n, "cos.approx.f") == 0) {
    return host_math(g, "llvm.cos", args[0]);
  } else if (strcmp(n, "rsqrt.approx.f") == 0) {
    return LLVMBuildFDiv(g->b, LLVMConstReal(g->t_f32, 1.0),
                         host_math(g, "llvm.sqrt", args[0]), "");
  }
  teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: the emulator has no %s", name);
}
