/*
 * daemon/subproc.h — what teenycd's helper processes share: the compile
 * processes (helper.h) and the driver's JIT (sass.h) are teenycd itself
 * started with a flag, fed protocol-style frames on stdin and answering
 * one frame per request on stdout.
 *
 * The daemon side starts one (teeny__subproc_spawn: two pipes, signals at
 * their defaults and unblocked, its own process group so a terminal's ^C
 * reaches only the daemon, non-blocking ends for the caller's deadlines).
 * The helper side checks it is still wanted (teeny__subproc_enter: SIGKILL
 * when the daemon dies, nothing of the daemon's inherited, replies on a
 * private copy of stdout while stdout itself becomes stderr, so nothing a
 * library prints can corrupt the frames) and serves frames until its input
 * closes (teeny__subproc_serve).  No state: each call stands alone.
 */
#ifndef TEENY_DAEMON_SUBPROC_H
#define TEENY_DAEMON_SUBPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/common.h"

/* Start image with argv (argv[0] is the name it sees) on two new pipes:
 * *to is its stdin, *from its stdout, both non-blocking and close-on-exec
 * here.  0, or TEENY_E_INTERNAL with msg (n bytes) saying why. */
int teeny__subproc_spawn(const char *image, char *const argv[], pid_t *pid, int *to,
                         int *from, char *msg, size_t n);

/* The helper's first step, ppid being the daemon's pid as its argv says:
 * the fd to write replies to (> 2); 0 when the daemon is already gone
 * (exit 0 then); -1 when the descriptors cannot be set up. */
int teeny__subproc_enter(const char *ppid);

/* What serves one request frame p[0..n): append exactly one reply frame
 * to out (which is empty). */
typedef void (*teeny_subproc_fn)(void *ctx, const char *p, size_t n, teeny_buf *out);

/* Read frames (at most max_frame bytes; 0: the default) from stdin until
 * it closes, answering each on out_fd.  0 at the end of input, 1 when a
 * frame is malformed or a reply cannot be written. */
int teeny__subproc_serve(int out_fd, uint32_t max_frame, teeny_subproc_fn serve,
                         void *ctx);

/* All of p[0..n) to fd (blocking).  0 or -1. */
int teeny__subproc_write(int fd, const char *p, size_t n);

#endif /* TEENY_DAEMON_SUBPROC_H */
