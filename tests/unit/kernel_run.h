/*
 * tests/unit/kernel_run.h — run a kernel of the language (source text,
 * bindings, grid, argument fills) in the interpreter and on the host
 * emulator of the generated code, and require every buffer to agree bit
 * for bit (check assertions).  Shared by the tests that hold the code
 * generator to the interpreter's semantics kernel by kernel
 * (test_memmodel, test_masks).
 */
#ifndef TEENY_TESTS_UNIT_KERNEL_RUN_H
#define TEENY_TESTS_UNIT_KERNEL_RUN_H

#include "kernel_util.h"

#define MAXP 8

/* One pointer argument: elements of the parameter's dtype, filled with
 * `fill` (0: zeros, 1: iota, 2: small ints i % 7 - 3, 3: 0xff bytes). */
typedef struct buf_spec {
  long n;
  int fill;
} buf_spec;

typedef struct kcase {
  const char *name;
  const char *src;
  const char *kernel;
  const char *bindings;   /* "B=128" */
  unsigned grid;
  buf_spec bufs[MAXP];    /* by pointer parameter, in order */
  long long scalars[MAXP]; /* by scalar parameter, in order */
} kcase;

/* The spec of c for target and warps (check-fails if it does not build). */
teeny_spec *kr_spec(const kcase *c, const char *target, int warps);

size_t kr_esize(teeny_dtype dt);

/* Fill n elements of dtype dt: fill 0 zeros, 1 iota, 2 i % 7 - 3, 3 0xff
 * bytes (poison). */
void kr_fill(void *p, teeny_dtype dt, long n, int fill);

/* Run c in the interpreter and the emulator; out[i] gets the interpreter's
 * buffer of pointer parameter i (caller frees).  Fails on any difference. */
void kr_run_both(const kcase *c, const char *target, int warps, void **out);
/* The same with every emulator buffer starting shift elements (0 to 8)
 * past a 16-byte boundary (for bindings with teeny.unaligned). */
void kr_run_shifted(const kcase *c, const char *target, int warps, int shift, void **out);

void kr_free_all(void **b);

/* Every target (sm_90a, sm_80) and warp count (1, 4, 8); check(out), when
 * not NULL, on the interpreter's buffers. */
void kr_run_everywhere(const kcase *c, void (*check)(void **out));
void kr_run_everywhere_shifted(const kcase *c, int shift, void (*check)(void **out));

/* The PTX of src's kernel (4 warps) for target, then its MLIR, as one
 * text (caller frees). */
char *kr_text(const char *src, const char *kernel, const char *bindings, const char *target);

/* The PTX of c's kernel alone, for target and warps (caller frees). */
char *kr_ptx(const kcase *c, const char *target, int warps);

/* How often what occurs in text. */
int kr_count(const char *text, const char *what);

#endif
