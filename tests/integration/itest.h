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
 * `lines` dependent tile statements (400 at BLOCK_SIZE=1024: ~0.3 s; they
 * use fast_sin, the approximate form: the accurate sin takes LLVM 15x
 * longer).
 * Independent of the example kernels.  Free with free(). */
char *it_slow_kernel(int lines, size_t *len);
/* it_slow_kernel with a "// variant N" line appended: a distinct source
 * (and key) per variant. */
char *it_slow_variant(int lines, int variant, size_t *len);
/* Send (not wait for) a compile of it_slow_variant(lines, variant) with
 * D=f32 and BLOCK_SIZE=block_size on c, as request id (0: the next).  0 or
 * an error. */
int it_send_slow(tclient *c, int lines, int variant, int block_size,
                 uint64_t id);
/* Wait until the daemon at sock has taken its stop (its listener is
 * closed: a new connection is refused), however slowly it runs (valgrind):
 * true, or false after timeout_ms. */
bool it_stopped_listening(const char *sock, int timeout_ms);
/* Run fn(arg) in a child process as uid/gid (setgroups, setgid, setuid
 * first); its return value is the child's exit status.  The status, or
 * 200 when the child could not run or did not end within timeout_ms. */
int it_as_user(unsigned uid, int (*fn)(void *), void *arg, int timeout_ms);
/* How many times needle occurs in the file at path (-1: unreadable). */
int it_count_in_file(const char *path, const char *needle);
/* The cache field of a compile reply as text. */
const char *it_cache_name(teeny_msg_cache c);
/* Fresh stats over a new connection to sock; 0 or an error. */
int it_stats(const char *sock, teeny_msg_stats_reply *out);

/* The tests, by file. */
int it_remote_single_flight(void); /* it_remote.c */
int it_remote_fifth_node(void);
int it_remote_redis_killed(void);
int it_remote_corrupt_entry(void);
int it_remote_silent(void);
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
/* it_rel2_life.c (issue 18) */
int it_store_fifo(void);
int it_socket_successor(void);
int it_tmp_cleanup(void);
int it_shutdown_reply(void);
int it_paused_reader(void);
int it_toobig_size(void);
int it_socket_parent(void);
int it_unknown_kernel(void);
int it_refused_log(void);
int it_index_heal(void);
int it_list_paged(void);
/* it_rel2_serve.c (issue 18) */
int it_fair_lanes(void);
int it_memory_budget(void);
int it_memcache_lru(void);
int it_uid_limits(void);
/* it_sass.c (issue 16) */
int it_sass_background(void);
int it_sass_arch(void);
int it_sass_corrupt(void);

#endif /* TEENY_TESTS_ITEST_H */
