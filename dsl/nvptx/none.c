/*
 * dsl/nvptx/none.c — the code generator of builds without LLVM
 * (libteeny-dsl): every PTX request is answered with TEENY_E_UNSUPPORTED.
 * Front-end tests link this so they never need LLVM.
 */
#include "dsl/nvptx/nvptx.h"

int teeny__codegen_ptx(teeny_ctx *cx, const teeny_ir_func *f,
                       const teeny_codegen_opts *o, teeny_codegen_out *out) {
  (void)f;
  (void)o;
  out->ptx = NULL;
  out->ptx_len = 0;
  out->shared_bytes = 0;
  teeny__error_at(cx, (teeny_loc){0, 0},
                  "this build of teenyc has no PTX code generator "
                  "(configure with -DTEENY_WITH_LLVM=ON)");
  return TEENY_E_UNSUPPORTED;
}

const char *teeny__codegen_llvm_version(void) { return "none"; }
