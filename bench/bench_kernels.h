/*
 * bench/bench_kernels.h — the two kernels the start-up and autotuning
 * benchmarks launch, as the example apps do: vector_add (f32, 2^20
 * elements, BLOCK_SIZE 1024) and matmul (f16, 4096^3, 128x256x64 blocks,
 * GROUP_M 8, 8 warps: examples/matmul.c's configuration), with their
 * device buffers and launch arguments.
 */
#ifndef TEENY_BENCH_KERNELS_H
#define TEENY_BENCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "teeny/client.h"

typedef struct bk_case {
  const char *name;            /* "vector_add" or "matmul" */
  char *source;                /* examples/kernels/NAME.c (owned) */
  teeny_compile_req req;       /* the example's specialisation */
  teeny_dtype_binding dt[1];
  teeny_const_binding ct[4];
  long n;                      /* elements (vector_add) or M = N = K */
  teeny_dptr buf[3];           /* device buffers */
  int32_t ints[9];             /* scalar arguments */
  void *args[12];              /* launch arguments */
  size_t nargs;
} bk_case;

/* Fill k for name (source from $TEENY_SOURCE_DIR or .); n 0: the default
 * size.  0, or -1 with a message printed. */
int bk_init(bk_case *k, const char *name, long n);
/* The grid for block sizes bm x bn (matmul) or the BLOCK_SIZE (vector_add). */
teeny_grid bk_grid(const bk_case *k, long bm, long bn);
/* Allocate and zero the buffers, fill args.  0 or a teeny_err (err). */
int bk_alloc(bk_case *k, char *err, size_t errsz);
void bk_close(bk_case *k);

#endif /* TEENY_BENCH_KERNELS_H */
