/*
 * tests/integration/reliability.h — helpers shared by the reliability
 * tests (it_reliability*.c) and the soak/bench programs (bench/load.c,
 * bench/soak.c): process inspection through /proc, stats counters by
 * name, the store's files, and the load generator that bench/load and the
 * CI-sized load test both run.
 */
#ifndef TEENY_TESTS_RELIABILITY_H
#define TEENY_TESTS_RELIABILITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tests/integration/tclient.h"

/* ---- processes ------------------------------------------------------------- */

/* A "Name:  N kB" field of /proc/PID/status in KiB (VmRSS, VmHWM), or -1. */
long rel_status_kb(pid_t pid, const char *field);
/* Children of pid (by scanning /proc/NN/stat), up to max.  How many. */
int rel_children(pid_t pid, pid_t *out, int max);

/* ---- the daemon ------------------------------------------------------------ */

/* A counter of a stats reply by name (required ones and extras), over a
 * new connection to sock; -1 when missing or on error. */
double rel_counter(const char *sock, const char *name);
/* A compile with a raw frame reply: status and (if wanted) the error text
 * (malloc'ed, may be NULL).  Transport errors come back as the status. */
int rel_compile(tclient *c, const char *src, size_t n, const char *kernel,
                const char *const *bindings, char **error);

/* ---- files ----------------------------------------------------------------- */

/* One line per file or directory under dir ("path mode size mtime inode",
 * sorted), so two snapshots compare with strcmp.  malloc'ed or NULL. */
char *rel_tree(const char *dir);
/* The path of one object file of the entry with key, ext "o", "mlir" or
 * "c", found by listing dir/objects/KK/; 0 or -1. */
int rel_object_path(const char *cache, const char *key, const char *ext,
                    char *out, size_t n);

/* ---- the load generator ------------------------------------------------------ */

typedef struct rel_load_opts {
  const char *sock;       /* the daemon */
  const char *srcdir;     /* source tree (examples/kernels) */
  int procs;              /* client processes */
  int requests;           /* requests per process */
  int window;             /* requests in flight per process */
  int miss_permille;      /* cold compiles per 1000 requests */
  int bad_permille;       /* bad requests per 1000 requests */
  pid_t daemon_pid;       /* sampled for RSS (0: not sampled) */
  int sample_ms;          /* RSS sampling interval */
  unsigned seed;          /* request mix */
  bool quiet;             /* no progress lines */
} rel_load_opts;

typedef struct rel_load_result {
  uint64_t sent, replies;     /* requests sent, replies received */
  uint64_t wrong;             /* replies that were not the right answer */
  uint64_t lost;              /* requests that got no reply */
  uint64_t hits, misses, bad; /* requests by kind */
  uint64_t by_cache[4];       /* good replies by their cache field */
  double seconds;             /* wall time of the run */
  double p50_us, p99_us, p999_us, max_us; /* latency of every request */
  double hit_p50_us, hit_p99_us;          /* of hit requests only */
  long rss_start_kb, rss_max_kb, rss_end_kb; /* the daemon's VmRSS */
  int failed_procs;           /* client processes that did not finish */
} rel_load_result;

/* Run the load: fork opts->procs clients, each sending opts->requests mixed
 * requests and checking every reply; sample the daemon's RSS meanwhile.
 * 0, or -1 when the reference compiles or the processes could not be set
 * up.  Wrong answers are counted, not fatal; details go to stderr. */
int rel_load_run(const rel_load_opts *opts, rel_load_result *r);
/* Print r as Markdown-ish lines. */
void rel_load_print(const rel_load_opts *o, const rel_load_result *r);

#endif /* TEENY_TESTS_RELIABILITY_H */
