/*
 * daemon/subproc.c — starting helper processes and the helper side's loop
 * (see subproc.h).  posix_spawn, so it is safe from any thread: the
 * daemon's workers and its SASS lane start helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "daemon/subproc.h"
#include "proto/frame.h"

extern char **environ;

#define READ_CHUNK (64u * 1024)

int teeny__subproc_spawn(const char *image, char *const argv[], pid_t *pid, int *to,
                         int *from, char *msg, size_t n) {
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
    snprintf(msg, n, "cannot start %s: pipe: %s", argv[0], strerror(errno));
    if (in[0] >= 0)
      close(in[0]), close(in[1]);
    return TEENY_E_INTERNAL;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawnattr_init(&at);
  sigset_t none, dflt;
  sigemptyset(&none);
  sigemptyset(&dflt);
  sigaddset(&dflt, SIGPIPE);
  sigaddset(&dflt, SIGTERM);
  sigaddset(&dflt, SIGINT);
  sigaddset(&dflt, SIGHUP);
  posix_spawnattr_setsigmask(&at, &none); /* worker threads block signals */
  posix_spawnattr_setsigdefault(&at, &dflt);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                    POSIX_SPAWN_SETPGROUP);
  *pid = 0;
  int e = posix_spawn(pid, image, &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(in[0]);
  close(out[1]);
  if (e) {
    close(in[1]);
    close(out[0]);
    snprintf(msg, n, "cannot start %s: %s", argv[0], strerror(e));
    return TEENY_E_INTERNAL;
  }
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  *to = in[1];
  *from = out[0];
  return 0;
}

int teeny__subproc_enter(const char *ppid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if ((long)getppid() != strtol(ppid, NULL, 10))
    return 0; /* the daemon died before we got here */
  close_range(3, ~0u, 0); /* nothing of the daemon's (store lock, sockets) */
  int out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    return -1;
  return out_fd;
}

int teeny__subproc_write(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int teeny__subproc_serve(int out_fd, uint32_t max_frame, teeny_subproc_fn serve,
                         void *ctx) {
  teeny_frame_reader rd;
  teeny_frame_reader_init(&rd, max_frame);
  teeny_buf out;
  teeny__buf_init(&out);
  static char buf[READ_CHUNK];
  int status = 0;
  for (;;) {
    ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break; /* the daemon closed our input: done */
    const char *p;
    size_t n;
    int rc = teeny_frame_reader_feed(&rd, buf, (size_t)r);
    while (!rc && (rc = teeny_frame_reader_next(&rd, &p, &n)) == 1) {
      out.len = 0;
      serve(ctx, p, n, &out);
      if (out.oom || teeny__subproc_write(out_fd, out.p, out.len)) {
        status = 1;
        goto done;
      }
      if (out.cap > (8u << 20))
        teeny__buf_free(&out);
      rc = 0;
    }
    if (rc < 0) {
      status = 1;
      break;
    }
  }
done:
  teeny_frame_reader_free(&rd);
  teeny__buf_free(&out);
  return status;
}
