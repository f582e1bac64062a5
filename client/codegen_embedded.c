/*
 * client/codegen_embedded.c — the NVPTX back end of the thin client: the
 * compiler's front end is in libteenyc-client (teeny_spec_create, keys,
 * typed kernels, teeny_source_inspect need no LLVM), and its one call
 * into the back end (dsl/nvptx/nvptx.h) is answered by libteenyc-embedded,
 * loaded here on the first PTX request.  Without that library the request
 * fails with TEENY_E_UNSUPPORTED and a diagnostic saying what is missing.
 *
 * The one file of the thin client that sees the compiler's internals
 * (scripts/check-layout).
 */
#include "client/client_int.h"
#include "client/embedded_api.h"
#include "dsl/nvptx/nvptx.h"

int teeny__codegen_ptx(teeny_ctx *cx, const teeny_ir_func *f,
                       const teeny_codegen_opts *o, teeny_codegen_out *out) {
  char why[TEENY__ERR_LEN];
  const teeny__embedded_api *e = teeny__embedded_get(why, sizeof why);
  if (e)
    return e->codegen_ptx(cx, f, o, out);
  out->ptx = NULL;
  out->ptx_len = 0;
  out->shared_bytes = 0;
  teeny__error_at(cx, (teeny_loc){0, 0}, "%s", why);
  return TEENY_E_UNSUPPORTED;
}

const char *teeny__codegen_llvm_version(void) { return teeny_llvm_version(); }
