/*
 * tests/diff/run.c — one case, both ways, in this process: the spec and
 * host buffers from bufs.c (outputs poisoned, inputs identical on both
 * sides), the interpreter's run, the engine's run (host emulator on
 * guarded buffers, or the GPU through gpu.c), and the comparison of every
 * pointer argument (check.c).  The outcome classifies what happened
 * (dfz.h): a spec or interpreter failure is the generator's fault,
 * anything after that is the code generator's.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/diff/run.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the run --------------------------------------------------------------------------------- */

static void set(dfz_outcome *o, dfz_status s, const char *cat, const char *detail) {
  o->status = s;
  snprintf(o->cat, sizeof o->cat, "%s", cat);
  snprintf(o->detail, sizeof o->detail, "%s", detail ? detail : "");
}

static dfz_status engine_status(int rc, const char **cat) {
  switch (rc) {
  case TEENY_E_UNSUPPORTED: *cat = "unsupported"; return DFZ_UNSUPPORTED;
  case TEENY_E_RUNTIME: *cat = "runtime"; return DFZ_ENGINE_ERROR;
  default: *cat = "compile"; return DFZ_CODEGEN_ERROR;
  }
}

static const char *engine_name(dfz_engine e) {
  return e == DFZ_ENGINE_GPU ? "gpu" : e == DFZ_ENGINE_INTERP ? "interp" : "emu";
}

/* Every pointer argument compared; the first differing one names the category. */
static void compare_all(const dfz_case *c, dfz_engine eng, const dfz_bufs *ref,
                        const dfz_bufs *got, dfz_outcome *out) {
  char msg[sizeof out->detail];
  msg[0] = '\0';
  const char *first = NULL;
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    if (!p->is_ptr)
      continue;
    size_t len = strlen(msg);
    if (!dfz_check_buffer(p, ref->data[i], got->data[i], engine_name(eng), msg + len,
                          sizeof msg - len) &&
        !first)
      first = p->cat[0] ? p->cat : "store";
  }
  if (first)
    set(out, DFZ_MISMATCH, first, msg);
  else
    set(out, DFZ_OK, "", "");
}

void dfz_run_case(const dfz_case *c, dfz_engine eng, dfz_outcome *out) {
  char err[sizeof out->detail];
  memset(out, 0, sizeof *out);
  teeny_spec *spec = dfz_case_spec(c, err, sizeof err);
  if (!spec) {
    set(out, DFZ_INVALID, "spec", err);
    return;
  }
  dfz_bufs ref, got;
  teeny_interp_arg args[DFZ_MAX_PARAMS];
  teeny_diags d;
  teeny_diags_init(&d);
  memset(&ref, 0, sizeof ref);
  memset(&got, 0, sizeof got);
  if (!dfz_bufs_make(c, false, &ref) || !dfz_bufs_make(c, eng == DFZ_ENGINE_EMU, &got)) {
    set(out, DFZ_INVALID, "memory", "cannot allocate the buffers");
    goto done;
  }
  dfz_case_args(c, &ref, args);
  double t0 = now_s();
  int rc = teeny_spec_interpret(spec, c->grid, args, (size_t)c->nparams, &d);
  out->interp_s = now_s() - t0;
  if (rc) {
    int off = snprintf(err, sizeof err, "interpreter: %s: ", teeny_strerror(rc));
    dfz_diags_text(&d, err + off, sizeof err - (size_t)off);
    set(out, DFZ_INVALID, "interp", err);
    goto done;
  }
  teeny_diags_close(&d);
  teeny_diags_init(&d);
  dfz_case_args(c, &got, args);
  t0 = now_s();
  if (eng == DFZ_ENGINE_GPU) {
    dfz_status s = dfz_gpu_run(c, spec, &got, err, sizeof err);
    out->engine_s = now_s() - t0;
    if (s != DFZ_OK) {
      set(out, s, s == DFZ_UNSUPPORTED ? "unsupported" : s == DFZ_CODEGEN_ERROR ? "compile" : "runtime", err);
      goto done;
    }
  } else {
#ifdef DFZ_NO_EMULATOR
    rc = eng == DFZ_ENGINE_EMU ? TEENY_E_UNSUPPORTED /* built without the emulator */
#else
    rc = eng == DFZ_ENGINE_EMU ? teeny_spec_emulate(spec, c->grid, args, (size_t)c->nparams, &d)
#endif
                               : teeny_spec_interpret(spec, c->grid, args, (size_t)c->nparams, &d);
    out->engine_s = now_s() - t0;
    if (rc) {
      const char *cat;
      dfz_status s = engine_status(rc, &cat);
      int off = snprintf(err, sizeof err, "%s: %s: ", engine_name(eng), teeny_strerror(rc));
      dfz_diags_text(&d, err + off, sizeof err - (size_t)off);
      if (strstr(err, "deadlock"))
        cat = "deadlock";
      set(out, s, cat, err);
      goto done;
    }
    int which;
    if (!dfz_bufs_canary_ok(c, &got, &which)) {
      snprintf(err, sizeof err, "%s: wrote past the end of '%s'", engine_name(eng),
               c->params[which].name);
      set(out, DFZ_MISMATCH, "overrun", err);
      goto done;
    }
  }
  compare_all(c, eng, &ref, &got, out);
done:
  teeny_diags_close(&d);
  dfz_bufs_free(c, &ref);
  dfz_bufs_free(c, &got);
  teeny_spec_destroy(spec);
}
