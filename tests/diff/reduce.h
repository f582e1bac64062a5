/*
 * tests/diff/reduce.h — shrinking a failing kernel while it keeps failing
 * the same way (same status, same category).
 */
#ifndef TEENY_TESTS_DIFF_REDUCE_H
#define TEENY_TESTS_DIFF_REDUCE_H

#include "tests/diff/ast.h"
#include "tests/diff/run.h"

typedef struct dfz_reduce_opts {
  dfz_exec *exec;     /* runs the candidates */
  double timeout_s;   /* per candidate */
  int max_runs;       /* candidates at most (0: 2000) */
  double max_seconds; /* wall time at most (0: 300) */
  bool verbose;       /* one line per accepted step on stderr */
} dfz_reduce_opts;

typedef struct dfz_reduce_stats {
  int runs, accepted;
  double seconds;
} dfz_reduce_stats;

/* Edit p in place (statements deleted, branches and loops flattened,
 * expressions replaced by operands or constants, tile consts halved, the
 * grid and num_warps reduced, fills simplified, unused helpers dropped)
 * for as long as the case still fails like want; *last gets the final
 * candidate's outcome. */
void dfz_reduce(dfz_prog *p, const dfz_outcome *want, const dfz_reduce_opts *o,
                dfz_outcome *last, dfz_reduce_stats *stats);

#endif /* TEENY_TESTS_DIFF_REDUCE_H */
