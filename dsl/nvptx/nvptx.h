/*
 * dsl/nvptx/nvptx.h — what the rest of the compiler asks of the NVPTX back
 * end: tile IR -> PTX (dsl/nvptx/codegen.c and the files its internal
 * header dsl/nvptx/codegen.h lists; dsl/nvptx/none.c in builds without
 * LLVM), and the test-only host emulator (emu.c).  This header includes no
 * LLVM header: only the .c files of dsl/nvptx/ do.
 */
#ifndef TEENY_DSL_NVPTX_NVPTX_H
#define TEENY_DSL_NVPTX_NVPTX_H

#include "dsl/ir/ir.h"

/* ============================================================================
 * codegen.c — tile IR -> PTX (none.c in builds without LLVM)
 * ========================================================================== */

typedef struct teeny_codegen_opts {
  const char *target; /* "sm_90a", "sm_80", ... */
  int num_warps;      /* threads per block = 32 * num_warps */
  int num_stages;     /* cp.async pipeline depth (0: the code generator's) */
} teeny_codegen_opts;

typedef struct teeny_codegen_out {
  char *ptx;          /* malloc'd PTX text (teeny__free) */
  size_t ptx_len;
  int shared_bytes;   /* dynamic shared memory per block */
} teeny_codegen_out;

/* Returns 0, TEENY_E_LLVM / TEENY_E_UNSUPPORTED with a diagnostic, or
 * TEENY_E_NOMEM. */
int teeny__codegen_ptx(teeny_ctx *cx, const teeny_ir_func *f,
                       const teeny_codegen_opts *o, teeny_codegen_out *out);
/* "19.1.7", or "none" in builds without the code generator. */
const char *teeny__codegen_llvm_version(void);
/* The optimised LLVM IR the PTX would be emitted from (*ir: teeny__malloc'd
 * text, NULL on error), for debugging the code generator and `--emit llvm`.
 * Only in builds with LLVM (teeny_compiler).  Returns as teeny__codegen_ptx. */
int teeny__codegen_llvm_ir(teeny_ctx *cx, const teeny_ir_func *f,
                           const teeny_codegen_opts *o, char **ir);
/* cfg.c: whether every loop of every function in the PTX text is entered
 * only through its header.  0: yes; 1: no, with where in why; -1: not
 * known (an indirect branch); -2: out of memory.  The code generator
 * refuses PTX that is not reducible (cfg.c says why). */
int teeny__ptx_check_reducible(const char *ptx, char *why, size_t why_len);
/* Test aid (dsl/nvptx/emu.c, only in builds with LLVM: teeny_compiler):
 * run the code generator's output for f on the host — the same layouts,
 * conversions, reductions and mma fragments, JIT-compiled for the CPU with
 * each thread of a block a coroutine — over grid[0] x grid[1] x grid[2]
 * blocks, with args as for the interpreter.  Returns 0, TEENY_E_RUNTIME
 * (a block deadlocked), TEENY_E_LLVM, TEENY_E_UNSUPPORTED, TEENY_E_INVAL or
 * TEENY_E_NOMEM, with diagnostics.  Out-of-bounds accesses are not checked. */
int teeny__codegen_emulate(teeny_ctx *cx, const teeny_ir_func *f,
                           const teeny_codegen_opts *o, const unsigned grid[3],
                           const teeny_interp_arg *args, int nargs);

#endif /* TEENY_DSL_NVPTX_NVPTX_H */
