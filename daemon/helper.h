/*
 * daemon/helper.h — compiles run in helper processes, so that a compile
 * can be cancelled, its memory bounded, and a crash in the compiler (LLVM
 * included) cannot take the daemon down.
 *
 * A helper is teenycd itself started as `teenycd --compile-helper PPID
 * MEMORY` (posix_spawn, so it is safe from the daemon's worker threads;
 * from an fd of the daemon's own executable opened at startup, so that a
 * package upgrade replacing or deleting the file neither breaks nor
 * changes the compiler of a running daemon):
 * it reads compile requests on stdin and writes one reply per request on
 * stdout, both as protocol frames (PROTOCOL.md: the compile request, and
 * the compile reply or the error reply with diagnostics).  Two steps use
 * it, so that no byte of a request's kernel source is parsed in the
 * daemon's own process (whose memory therefore does not depend on what
 * clients send):
 *   spec     emit 0: teeny_spec_create only; the reply carries the key,
 *            id, entry and parameters, and every diagnostic
 *   compile  emit MLIR|PTX: teeny_spec_create + teeny_spec_compile, exactly
 *            what the daemon did in-process before, so the artifacts are
 *            identical; only the compile step's diagnostics come back.
 *
 * Each worker thread borrows one helper for a compile (there are as many
 * helpers of each kind as workers, so a borrow never waits).  Helpers are
 * of two kinds: foreground ones at the daemon's priority, and background
 * ones at nice +BACKGROUND_NICE, for a compile whose connection has other
 * compiles running or queued (a bulk client): a client with many slow
 * kernels then takes cores only as far as others leave them idle, and
 * another client's small compile still gets a core (the lanes' caps give
 * it a thread, this gives it the CPU).  A
 * helper is started on first use and reused; it is killed (SIGKILL) and
 * reaped when
 *   - the compile runs past --compile-timeout: the waiters get
 *     TEENY_E_TIMEOUT, the worker is free at once and the next compile
 *     starts a fresh helper;
 *   - the daemon stops and gives up on running compiles
 *     (teeny__helpers_abort): TEENY_E_SHUTDOWN;
 *   - its resident size passed HELPER_RECYCLE_RSS after a compile.
 * A helper that dies by itself (a crash, or the --compile-memory address
 * space limit) is reported as TEENY_E_INTERNAL, or TEENY_E_LIMIT when its
 * peak RSS says it ran into the memory budget.  The helper asks the kernel
 * to SIGKILL it when the daemon dies (PR_SET_PDEATHSIG), runs in its own
 * process group (a terminal's Ctrl-C reaches only the daemon, whose orderly
 * stop lets running compiles finish), and never touches the store: the
 * daemon stores what it returns.
 */
#ifndef TEENY_DAEMON_HELPER_H
#define TEENY_DAEMON_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/log.h"
#include "proto/msg.h"
#include "teeny/compile.h"

#define TEENY_HELPER_FLAG "--compile-helper" /* argv[1] of a helper */

typedef struct teeny_helper_opts {
  const char *exe;       /* the helper binary (teenycd's own path) */
  uint64_t timeout_ms;   /* wall-time budget of one compile; 0: none */
  uint64_t memory_bytes; /* address-space limit of a helper; 0: none */
  teeny_log *log;        /* for helper deaths and restarts */
} teeny_helper_opts;

/* What happened to the helper during one compile (for counters). */
typedef struct teeny_helper_outcome {
  bool timed_out; /* killed at the deadline */
  bool died;      /* died by itself (crash, memory) */
  bool spawned;   /* a new helper was started for this compile */
} teeny_helper_outcome;

typedef struct teeny_helpers teeny_helpers;

/* teenycd's own executable (readlink /proc/self/exe, which valgrind also
 * answers with the client's path) into buf.  0 or TEENY_E_IO. */
int teeny__helper_self_exe(char *buf, size_t n);

/* n helper slots of each kind (started lazily).  o is copied (exe too).
 * 0 or TEENY_E_NOMEM. */
int teeny__helpers_create(const teeny_helper_opts *o, unsigned n,
                          teeny_helpers **out);
/* Close every helper's pipes (it exits on end of input), then reap it,
 * killing it after a short grace.  No compile may be running.  NULL is a
 * no-op. */
void teeny__helpers_destroy(teeny_helpers *hs);

/* Run one step for c (its source, kernel, bindings, target, num_warps) in
 * a helper, blocking the calling worker thread for at most the timeout.
 * emit 0 is the spec step (*out has no texts); else the compile step,
 * with key the cache key the spec step gave: a helper whose artifact has
 * another key is another build (TEENY_E_INTERNAL).  On success *out owns a
 * new artifact.  On failure the status is the compiler's (COMPILE,
 * BINDING, INVAL, LLVM, LIMIT, ...) or TIMEOUT, SHUTDOWN, LIMIT (memory
 * budget) or INTERNAL, and diags explains (always at least one error).
 * background: in a background helper (see the top).  Thread-safe. */
int teeny__helpers_run(teeny_helpers *hs, const teeny_msg_compile *c,
                       unsigned emit, const char *key, bool background,
                       teeny_artifact **out, teeny_diags *diags,
                       teeny_helper_outcome *what);

/* Kill the helpers of every compile running now; those compiles return
 * TEENY_E_SHUTDOWN.  For the stop, from any thread. */
void teeny__helpers_abort(teeny_helpers *hs);

/* Helpers started so far (for stats and tests). */
uint64_t teeny__helpers_started(teeny_helpers *hs);

/* main() of a helper process: argv is {exe, TEENY_HELPER_FLAG, PPID,
 * MEMORY_BYTES}.  Returns the exit status. */
int teeny__helper_main(int argc, char **argv);

/* An owned copy of an artifact view (a decoded reply's): every string and
 * text duplicated.  NULL when out of memory.  (The remote tier uses it for
 * fetched entries too.) */
teeny_artifact *teeny__artifact_copy(const teeny_artifact *v);

#endif /* TEENY_DAEMON_HELPER_H */
