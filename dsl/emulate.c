/*
 * dsl/emulate.c — teeny_spec_emulate (include/teeny/compile.h): a spec's
 * kernel through the real code generator, run on the host emulator
 * (dsl/nvptx/emu.c).  Part of the library teeny_codegen_emu (tests and tools), never
 * of libteenyc-client, so programs that only compile never link a host
 * back end.
 */
#include "dsl/front.h"
#include "dsl/nvptx/nvptx.h"

static int emulate_ir(teeny_ctx *cx, const teeny_ir_func *f, const char *target,
                      const unsigned grid[3], const teeny_interp_arg *args, int nargs,
                      void *arg) {
  (void)arg;
  teeny_codegen_opts o = {target, f->num_warps};
  return teeny__codegen_emulate(cx, f, &o, grid, args, nargs);
}

int teeny_spec_emulate(const teeny_spec *spec, const unsigned grid[3],
                       const teeny_interp_arg *args, size_t nargs, teeny_diags *diags) {
  return teeny__spec_run_ir(spec, grid, args, nargs, diags, emulate_ir, NULL);
}
