/*
 * tests/integration/itest.h — the integration tests' shared harness: the
 * check macros, the test table and helpers over tclient.
 *
 * Each test is a function returning IT_PASS, IT_FAIL or IT_SKIP (77, which
 * ctest reports as skipped); `teenycd_itest NAME` runs one, so ctest lists
 * and times every test on its own.  A test starts the real teenycd (see
 * tclient.h), talks to it over its socket and checks what comes back.
 * Checks jump to the test's one `fail` label, which cleans up.
 */
#ifndef TEENY_TESTS_ITEST_H
#define TEENY_TESTS_ITEST_H

#include <stdio.h>
#include <string.h>

#include "tests/integration/tclient.h"

enum { IT_PASS = 0, IT_FAIL = 1, IT_SKIP = 77 };

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

#define CHECK_INT(a, op, b)                                                    \
  do {                                                                         \
    long long a_ = (long long)(a), b_ = (long long)(b);                        \
    if (!(a_ op b_)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s %s %s (%lld vs %lld)\n",        \
              __FILE__, __LINE__, #a, #op, #b, a_, b_);                        \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

typedef struct it_test {
  const char *name; /* as given on the command line */
  int (*fn)(void);  /* IT_PASS, IT_FAIL or IT_SKIP */
} it_test;

/* One compile over c: bindings as for tc_compile_init; flags and emit as
 * in the protocol (emit 0 means PTX).  0 and *rep (free it), or an error. */
int it_compile(tclient *c, const char *src, size_t len, const char *kernel,
               const char *const *bindings, unsigned flags, unsigned emit,
               teeny_msg_reply *rep);
/* A kernel "slow" (bindings D, BLOCK_SIZE) whose compile takes long:
 * `lines` dependent tile statements (400 at BLOCK_SIZE=1024: ~0.2 s).
 * Independent of the example kernels.  Free with free(). */
char *it_slow_kernel(int lines, size_t *len);
/* The cache field of a compile reply as text. */
const char *it_cache_name(teeny_msg_cache c);
/* Fresh stats over a new connection to sock; 0 or an error. */
int it_stats(const char *sock, teeny_msg_stats_reply *out);

/* The tests, by file. */
int it_hello_version(void);
int it_malformed_frames(void);
int it_limits(void);
int it_pipelined(void);
int it_hit_miss_force_restart(void);
int it_ptx_matches_teenyc(void);
int it_diagnostics(void);
int it_eviction_lru(void);
int it_corrupt_entry(void);
int it_single_flight(void);
int it_responsive_storm(void);
int it_kill9_recover(void);
int it_permission(void);
int it_second_daemon(void);
int it_sigterm_notify(void);
int it_sigterm_inflight(void);
int it_listen_fds(void);
int it_config_help(void);
/* it_reliability.c, it_reliability_sec.c (issue 6) */
int it_compile_timeout(void);
int it_compiler_crash(void);
int it_binary_replaced(void);
int it_compile_memory(void);
int it_hostile_kernels(void);
int it_disk_full(void);
int it_crash_storm(void);
int it_load_mixed(void);
int it_hostile_names(void);
int it_store_symlinks(void);
int it_modes(void);
int it_slow_clients(void);
int it_nonadmin(void);
/* it_sass.c (issue 16) */
int it_sass_background(void);
int it_sass_arch(void);
int it_sass_corrupt(void);

#endif /* TEENY_TESTS_ITEST_H */
