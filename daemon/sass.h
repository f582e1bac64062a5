/*
 * daemon/sass.h — the SASS lane: turning stored PTX into cubins, once per
 * (key, GPU architecture, toolchain), in the background.
 *
 * A reply never waits for a cubin.  When a compile request names its
 * client's GPU (arch) and the store has no cubin of the key for it (or one
 * an older toolchain made), the scheduler asks the lane for one
 * (teeny__sass_want: O(1) on the loop thread) and answers with the PTX.
 * The lane is its own thread with its own store handle, outside the
 * daemon's worker lanes (lanes.h), so a 1-second ptxas of a large matmul
 * never delays a cold compile or a store hit; it takes one job at a time,
 * in arrival order, deduplicated by (key, arch), and a job that failed is
 * not retried until the daemon restarts.  When a cubin is stored the loop is told (uv_async)
 * and forgets the in-memory replies of that key, so the next request reads
 * the store and carries the cubin.
 *
 * Toolchains (--sass):
 *   driver  the CUDA driver's own JIT (cuLinkCreate/cuLinkAddData/
 *           cuLinkComplete) in a helper process, `teenycd --sass-helper`
 *           (sass_driver.c), so that libcuda is never mapped into the daemon
 *           and its GPU context lives only while cubins are being made (the
 *           helper exits after SASS_IDLE_MS without work); it makes cubins
 *           for its own GPU's architecture.  Keyed "driver <version>".
 *   ptxas   the CUDA toolkit's ptxas (sass_ptxas.c), any architecture, no
 *           GPU needed.  Keyed "ptxas <version>".
 *   auto    (default) the driver where a GPU answers, for its architecture,
 *           ptxas for the rest and where no GPU does; the driver wins when
 *           both exist because its cubin is exactly what the driver would
 *           have made of the PTX at load time (same code, and a driver
 *           never refuses its own output), where a toolkit newer than the
 *           driver can make cubins the driver will not load.
 *   off     make nothing; stored cubins are still served.
 * A stored cubin is made again (replaced) only when the lane's toolchain
 * for that architecture is of a better kind (driver over ptxas) or another
 * version of the same kind.
 */
#ifndef TEENY_DAEMON_SASS_H
#define TEENY_DAEMON_SASS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "daemon/log.h"
#include "store/store.h"

#define TEENY_SASS_HELPER_FLAG "--sass-helper" /* argv[1] of the helper */
#define TEENY_SASS_TC_LEN 80                   /* toolchain strings */

typedef enum teeny_sass_mode {
  TEENY_SASS_AUTO = 0, /* driver for its GPU, ptxas for the rest */
  TEENY_SASS_DRIVER,   /* the driver's JIT only */
  TEENY_SASS_PTXAS,    /* ptxas only */
  TEENY_SASS_OFF       /* make none (serve stored ones) */
} teeny_sass_mode;

/* "auto", "driver", "ptxas", "off" -> the mode; -1 for anything else. */
int teeny__sass_mode_parse(const char *s);
const char *teeny__sass_mode_name(teeny_sass_mode m);

/* What the loop learns when one job ends. */
typedef struct teeny_sass_done {
  char key[TEENY_STORE_KEY_LEN + 1];   /* the entry */
  char arch[TEENY_STORE_ARCH_MAX + 1]; /* the GPU architecture */
  bool stored;                         /* a cubin was stored */
  bool skipped;                        /* the stored one was good enough */
  double ms;                           /* making it took */
} teeny_sass_done;

typedef void (*teeny_sass_done_fn)(void *ctx, const teeny_sass_done *d);

typedef struct teeny_sass_opts {
  uv_loop_t *loop;               /* where done is called */
  teeny_log *log;                /* thread-safe */
  const teeny_store_opts *store; /* the lane opens its own handle */
  teeny_sass_mode mode;          /* --sass */
  const char *ptxas;             /* --ptxas; NULL: $PATH, then
                                    /usr/local/cuda/bin/ptxas */
  const char *exe;               /* teenycd's own executable (the helper) */
  uint64_t timeout_ms;           /* one cubin's budget (--sass-timeout) */
  teeny_sass_done_fn done;       /* on the loop, after each job */
  void *ctx;                     /* its argument */
} teeny_sass_opts;

typedef struct teeny_sass teeny_sass;

/* Counters, read on the loop thread. */
typedef struct teeny_sass_counts {
  uint64_t queued;   /* jobs waiting now (running one included) */
  uint64_t made;     /* cubins stored */
  uint64_t failed;   /* jobs that made none */
  double ms_total;   /* time spent making cubins */
} teeny_sass_counts;

/* Start the lane (its thread and store handle; ptxas is looked up and its
 * version read now, the driver helper on first need).  0, or an error with
 * err (TEENY_STORE_ERR_LEN bytes) filled. */
int teeny__sass_create(const teeny_sass_opts *o, teeny_sass **out, char *err);
/* Ask for the cubin of key (its PTX was made for ptx_target) on a GPU of
 * arch.  Loop thread; never blocks on the lane's work.  ptx (may be NULL:
 * the lane reads it from the store) is copied.  Dropped when the lane is
 * off, cannot make that architecture, has it queued or running, failed it
 * before, or has SASS_QUEUE_MAX jobs waiting. */
void teeny__sass_want(teeny_sass *s, const char *key, const char *ptx_target,
                      const char *arch, const char *ptx, size_t ptx_len);
/* Worker thread, with the worker's store handle: the cubin of key for a
 * GPU of arch (PTX made for ptx_target), read and checked, into *out (0;
 * close it), else TEENY_E_NOTFOUND.  A cubin that fails its checks is
 * removed (and logged), never returned.  *want says whether the lane
 * should make one (none, or an outdated one).  s may be NULL. */
int teeny__sass_lookup(teeny_sass *s, teeny_store *st, const char *key,
                       const char *ptx_target, const char *arch,
                       teeny_store_cubin *out, bool *want);
/* Should a stored cubin of arch that toolchain tc made be made again? */
bool teeny__sass_outdated(teeny_sass *s, const char *arch, const char *tc);
void teeny__sass_counts(teeny_sass *s, teeny_sass_counts *out);
/* Drop the queued jobs and kill the running one's toolchain process; the
 * lane makes nothing more.  Loop thread, at the daemon's stop. */
void teeny__sass_stop(teeny_sass *s);
/* Join the thread, close the store handle and the async handle's memory.
 * After the loop ended.  NULL is a no-op. */
void teeny__sass_destroy(teeny_sass *s);

/* ============================================================================
 * sass_ptxas.c — the toolkit's ptxas
 * ========================================================================== */

typedef struct teeny_ptxas {
  char path[4096];                    /* the executable */
  char toolchain[TEENY_SASS_TC_LEN];  /* "ptxas 13.0.88" */
} teeny_ptxas;

/* Find ptxas (given, else $PATH, else /usr/local/cuda/bin/ptxas) and read
 * its version.  0, or TEENY_E_NOTFOUND / TEENY_E_IO with why. */
int teeny__ptxas_find(const char *given, teeny_ptxas *out, char *why, size_t n);
/* ptxas -arch=target on ptx[0..len) in a private temp directory, killed
 * at timeout_ms or as soon as *stop is set (checked every few ms).  0
 * with *cubin (teeny__free) and *cubin_len, or an error with why (ptxas's
 * own message when it refused the PTX; TEENY_E_TIMEOUT; TEENY_E_SHUTDOWN). */
int teeny__ptxas_run(const teeny_ptxas *p, const char *target, const char *ptx,
                     size_t len, uint64_t timeout_ms, const atomic_bool *stop,
                     char **cubin, size_t *cubin_len, char *why, size_t n);

/* ============================================================================
 * sass_driver.c — the driver's JIT in a helper process
 * ========================================================================== */

typedef struct teeny_jit teeny_jit;

/* A helper slot (no process yet); its exchanges give up when *stop is set. */
teeny_jit *teeny__jit_create(const char *exe, teeny_log *log, const atomic_bool *stop);
/* Start the helper if it is not running: it loads libcuda, makes the
 * primary context of $TEENY_CUDA_DEVICE (default 0) current and says its
 * toolchain and architecture.  0, or TEENY_E_NOCUDA / TEENY_E_CUDA /
 * TEENY_E_INTERNAL with why (no driver, no GPU, exclusive-process mode). */
int teeny__jit_start(teeny_jit *j, uint64_t timeout_ms, char *why, size_t n);
/* "driver 580.65.06" and "sm_90" of the running helper ("" before). */
const char *teeny__jit_toolchain(const teeny_jit *j);
const char *teeny__jit_arch(const teeny_jit *j);
/* JIT ptx for target (the helper's own architecture's target) within
 * timeout_ms: 0 with *cubin (teeny__free), or an error with why (the JIT
 * log).  A helper that times out or dies is reaped; the next call starts
 * another. */
int teeny__jit_run(teeny_jit *j, const char *target, const char *ptx, size_t len,
                   uint64_t timeout_ms, char **cubin, size_t *cubin_len, char *why,
                   size_t n);
/* Close the helper's input (it exits, releasing its GPU context) and reap
 * it, killing it after a short grace.  Idempotent. */
void teeny__jit_close(teeny_jit *j);
bool teeny__jit_running(const teeny_jit *j);
void teeny__jit_destroy(teeny_jit *j); /* closes it; NULL is a no-op */
/* main() of `teenycd --sass-helper PPID`: returns the exit status. */
int teeny__jit_helper_main(int argc, char **argv);

#endif /* TEENY_DAEMON_SASS_H */
