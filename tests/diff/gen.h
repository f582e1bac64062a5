/*
 * tests/diff/gen.h — the kernel generator's public face: a seed (and the
 * features to leave out) in, a program tree (ast.h) out.  The same seed
 * and options always give the same kernel, byte for byte.
 */
#ifndef TEENY_TESTS_DIFF_GEN_H
#define TEENY_TESTS_DIFF_GEN_H

#include "tests/diff/ast.h"

/* What the generator can put in a kernel; --skip turns features off. */
typedef enum dfz_feature {
  DFZ_F_CAST,          /* conversions between dtypes */
  DFZ_F_2D,            /* 2-D tiles and grids, broadcasting */
  DFZ_F_SHAPE,         /* col/row/expand_dims/broadcast_to/reshape/trans */
  DFZ_F_REDUCE,        /* sum/max/min/argmax/argmin/reduce */
  DFZ_F_SCAN,          /* cumsum/scan */
  DFZ_F_DOT,           /* dot on f16, bf16, i8 */
  DFZ_F_DOT_F32,       /* dot on f32 (TF32 on the GPU) */
  DFZ_F_CTRL,          /* if/else on uniform scalars */
  DFZ_F_LOOP,          /* for/while/do loops, loop-carried values */
  DFZ_F_ATOMIC,        /* atomics on distinct addresses, old values used */
  DFZ_F_ATOMIC_SHARED, /* commutative atomics on shared addresses */
  DFZ_F_HELPER,        /* helper functions */
  DFZ_F_ORDER,         /* store -> load/store of the same address by other lanes */
  DFZ_F_UNIFORM,       /* scalar loads of a flag, then stores to it, branches on it */
  DFZ_F_GATHER,        /* loads at data-dependent addresses */
  DFZ_F_MATH,          /* approximate math (exp, log, sin, ...) and real-valued data */
  DFZ_F_TANH,          /* tanh (held to a few ulp) */
  DFZ_F_SPECIAL,       /* inf, NaN, -0, subnormals in float inputs */
  DFZ_F_LOCK,          /* a spin lock (atomic_cas/atomic_xchg) around a read-modify-write */
  DFZ_F_FREM,          /* % on floats */
  DFZ_F_BARRIER,       /* barrier() statements */
  DFZ_F_SEM,           /* sem_* and scope_* options on atomics */
  DFZ_F_FAST,          /* fast_exp ... fast_tanh */
  DFZ_F_PREC,          /* prec_* options on f32 dots */
  DFZ_F_HINT,          /* cache_* and evict_* options on loads and stores */
  DFZ_F_RANK3,         /* 2-D values by way of tiles of rank 3 and 4 */
  DFZ_F_DESC,          /* block loads and stores through tensor descriptors (TMA on sm_90+) */
  DFZ_F__COUNT
} dfz_feature;

const char *dfz_feature_name(dfz_feature f);
/* "order,uniform" -> a mask of features; false (and *bad the name) if one is unknown. */
bool dfz_feature_parse(const char *list, unsigned *mask, const char **bad);

typedef struct dfz_gen_opts {
  unsigned skip;     /* features (1u << DFZ_F_x) never generated */
  int max_segments;  /* 0: the default (6) */
} dfz_gen_opts;

/* Generate the kernel of seed into *out (free with dfz_prog_free).
 * Always succeeds: an impossible choice falls back to a simpler one. */
void dfz_generate(uint64_t seed, const dfz_gen_opts *opts, dfz_prog *out);

#endif /* TEENY_TESTS_DIFF_GEN_H */
