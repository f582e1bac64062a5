/*
 * tests/diff/run.h — running one case both ways (bufs.c prepares, run.c
 * runs), comparing the
 * buffers (check.c), the GPU engine (gpu.c), and the executor process
 * that does it away from the fuzzer's own (sandbox.c).
 */
#ifndef TEENY_TESTS_DIFF_RUN_H
#define TEENY_TESTS_DIFF_RUN_H

#include "tests/diff/dfz.h"

/* ---- bufs.c ------------------------------------------------------------------------ */

/* The spec of c (teeny_spec_create); on failure NULL with the diagnostics in err. */
teeny_spec *dfz_case_spec(const dfz_case *c, char *err, size_t errsz);
/* Host buffers of c's pointer arguments, filled (outputs poisoned). */
typedef struct dfz_bufs {
  void *data[DFZ_MAX_PARAMS];
  size_t bytes[DFZ_MAX_PARAMS];
  void *map[DFZ_MAX_PARAMS]; /* guarded mappings (emulator) or NULL */
  size_t maplen[DFZ_MAX_PARAMS];
  size_t slack[DFZ_MAX_PARAMS];
} dfz_bufs;
/* guarded: each buffer ends just before a PROT_NONE page, its 16-byte
 * rounding filled with a canary (engines that do not check bounds). */
bool dfz_bufs_make(const dfz_case *c, bool guarded, dfz_bufs *b);
bool dfz_bufs_canary_ok(const dfz_case *c, const dfz_bufs *b, int *which);
void dfz_bufs_free(const dfz_case *c, dfz_bufs *b);
/* Kernel arguments for the interpreter and the emulator. */
void dfz_case_args(const dfz_case *c, const dfz_bufs *b, teeny_interp_arg *args);
/* Format diagnostics into out (first lines only). */
void dfz_diags_text(const teeny_diags *d, char *out, size_t size);

/* ---- run.c --------------------------------------------------------------------------- */

/* Run c in the interpreter and in eng here, in this process, and compare. */
void dfz_run_case(const dfz_case *c, dfz_engine eng, dfz_outcome *out);

/* ---- check.c ---------------------------------------------------------------------------- */

/* Compare one buffer: true if every element agrees (NaN = NaN, -0 = +0,
 * floats within p->tol).  On a difference, appends "name: k of n differ:
 * [i] interp a, engine b; ..." to msg. */
bool dfz_check_buffer(const dfz_param *p, const void *ref, const void *got, const char *engine,
                      char *msg, size_t msgsz);

/* ---- gpu.c ------------------------------------------------------------------------------- */

/* Run c's kernel on the GPU (PTX through the CUDA driver) on copies of b,
 * copying every pointer argument back into b.  Returns a dfz_status: OK,
 * CODEGEN_ERROR (compile or module load), ENGINE_ERROR (launch or sync),
 * UNSUPPORTED; err says why. */
dfz_status dfz_gpu_run(const dfz_case *c, const teeny_spec *spec, dfz_bufs *b, char *err,
                       size_t errsz);
/* The device's compile target ("sm_90a"), or NULL without a usable GPU. */
const char *dfz_gpu_target(char *buf, size_t size);

/* ---- sandbox.c: an executor process --------------------------------------------------------- */

typedef struct dfz_exec dfz_exec;
/* Start an executor child for engine eng (its CUDA context or JIT lives there). */
dfz_exec *dfz_exec_start(dfz_engine eng);
/* Run c there; a crash or a run past timeout_s is reported in out (and a
 * fresh executor replaces the dead one).  Returns out->status. */
dfz_status dfz_exec_run(dfz_exec *x, const dfz_case *c, double timeout_s, dfz_outcome *out);
void dfz_exec_stop(dfz_exec *x);

#endif /* TEENY_TESTS_DIFF_RUN_H */
