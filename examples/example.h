/*
 * examples/example.h — what the four example apps share: opening a client,
 * reporting a compile, deciding whether there is a GPU, timing, random
 * data, f16 conversion and comparing against a CPU reference.
 *
 * Each app (vector_add.c, softmax.c, layernorm.c, matmul.c) uses the typed
 * API that teeny_add_kernels() generated from examples/kernels/NAME.c:
 * NAME_dispatch / NAME_init, NAME_compile through libteenyc-client (via
 * teenycd, or embedded, as $TEENYC_MODE says), and on a GPU NAME_launch.
 */
#ifndef TEENY_EXAMPLE_H
#define TEENY_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include <teeny/client.h>

/* Exit statuses of the apps. */
enum { EX_OK = 0, EX_FAIL = 1, EX_USAGE = 2 };

/* Open a client in the mode the environment asks for; prints and returns
 * NULL on failure. */
teeny_client *ex_open(const char *app);
/* The target to compile for: the GPU's ("sm_90a" on an H200), or NULL
 * (the default) without one.  *gpu says whether a GPU can run kernels;
 * why gets the reason when not. */
const char *ex_target(int *gpu, char *why, size_t whysz);
/* Compile k (the `base` of a generated kernel struct) through c and print
 * one line: id, key, cache status, compile and call time, mode.  Then, when
 * gpu is 0, "no GPU here (why): compile only".  Returns 1 when the app
 * should launch, 0 when it is done (no GPU), -1 on a compile error (printed). */
int ex_compile(const char *app, teeny_client *c, teeny_kernel *k, int gpu, const char *why);
/* In run_gpu functions: on failure of call print err and goto out. */
#define EX_TRY(app, err, call)                                                 \
  do {                                                                         \
    if ((call)) {                                                              \
      fprintf(stderr, "%s: %s\n", app, err);                                   \
      goto out;                                                                \
    }                                                                          \
  } while (0)
/* Milliseconds since some fixed point (monotonic). */
double ex_now_ms(void);
/* Fill x with values in [-1, 1) from a fixed seed. */
void ex_random(float *x, size_t n, uint32_t seed);
/* f32 <-> f16 bits (round to nearest even). */
uint16_t ex_f16(float f);
float ex_f32(uint16_t h);
/* Largest |a - b| / max(|b|, floor) over n values. */
double ex_max_rel_err(const float *a, const float *b, size_t n, double floor);
/* Print "label: N.NN GB/s (T ms)" or TFLOP/s for flops. */
void ex_report_rate(const char *app, const char *what, double units, double ms,
                    const char *unit);
/* Parse "--name value" as a positive integer (argv scan); def if absent. */
long ex_arg(int argc, char **argv, const char *name, long def);

#endif /* TEENY_EXAMPLE_H */
