/*
 * tests/unit/test_codegen.h — the IR cases the code generator tests share
 * (test_codegen_cases.c): the hand-built samples of tests/ir_samples.c plus
 * IR written here for the ops those do not reach, each with a grid and
 * arguments so it can also be run (emulated on the host, and interpreted)
 * and the two results compared.
 */
#ifndef TEENY_TESTS_TEST_CODEGEN_H
#define TEENY_TESTS_TEST_CODEGEN_H

#include "dsl/nvptx/nvptx.h"
#include "ir_samples.h"

#define TEENY_CG_MAX_PARAMS 12

typedef enum teeny_cg_fill {
  CG_FILL_RANDOM, /* uniform in [-1, 1) for floats, [-20, 20] for ints */
  CG_FILL_ZERO,
  CG_FILL_INDEX,  /* element i holds i (ints) or i / 16 (floats) */
  CG_FILL_SMALL   /* ints in [0, 3]: many ties (argmax) */
} teeny_cg_fill;

typedef struct teeny_cg_param {
  long n;             /* pointer params: elements in the buffer; 0: scalar */
  double v;           /* scalar params: the value */
  teeny_cg_fill fill; /* pointer params: initial contents */
} teeny_cg_param;

typedef struct teeny_cg_case {
  const char *name;                        /* "vector_add_f32_1024" */
  teeny_ir_func *f;                        /* built in the caller's arena */
  unsigned grid[3];                        /* programs to run */
  teeny_cg_param p[TEENY_CG_MAX_PARAMS];   /* per parameter */
  double tol;                              /* float tolerance (relative+absolute) */
  int min_warps;                           /* fewer warps are skipped (0: none);
                                              big tiles make 1-warp compiles slow */
} teeny_cg_case;

/* Build every case into a (at most max); returns how many. */
int teeny_cg_cases(teeny_arena *a, teeny_cg_case *out, int max);

/* Compile f for target/num_warps; returns the PTX (teeny__free) or NULL
 * with the diagnostics appended to err. */
char *teeny_cg_compile(teeny_ir_func *f, const char *target, int num_warps,
                       teeny_buf *err);

/* Run c through the interpreter and through the emulated code generator
 * for target ("sm_90a": wgmma through the emulator's reference; "sm_80":
 * mma.sync) with num_warps; returns 0 when every output element agrees,
 * else writes what differs to err. */
int teeny_cg_check(const teeny_cg_case *c, const char *target, int num_warps, teeny_buf *err);

#endif
