/*
 * tests/diff/sandbox.c — the executor: a child process that runs cases
 * (dfz_run_case) for the fuzzer, so that a crash, a hang or a broken GPU
 * context of the code under test costs one case, not the campaign.  The
 * child keeps its JIT or CUDA state between cases; the parent sends each
 * case as text (repro.c's format, source inline) in a length-prefixed
 * frame and reads the outcome struct back.  A child that dies or runs
 * past the timeout is killed, reported (CRASH, TIMEOUT) and replaced on
 * the next run.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/diff/repro.h"
#include "tests/diff/run.h"

struct dfz_exec {
  dfz_engine eng;
  pid_t pid;
  int to_child, from_child;
};

/* Move n bytes through fd (a write when out, else a read), whatever the
 * pipe's chunking; false on EOF or error. */
static bool transfer(int fd, void *buf, size_t n, bool out) {
  char *p = buf;
  while (n > 0) {
    ssize_t k = out ? write(fd, p, n) : read(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) { return transfer(fd, (void *)buf, n, true); }
static bool read_all(int fd, void *buf, size_t n) { return transfer(fd, buf, n, false); }

/* The child: read a case, run it, answer; until the pipe closes. */
static void child_loop(dfz_engine eng, int in, int out) {
  for (;;) {
    uint32_t len;
    if (!read_all(in, &len, sizeof len))
      _exit(0);
    char *text = malloc((size_t)len + 1);
    if (!text || !read_all(in, text, len))
      _exit(1);
    text[len] = '\0';
    dfz_case c;
    dfz_outcome o;
    char err[512];
    memset(&o, 0, sizeof o);
    if (!dfz_case_from_text(text, NULL, &c, NULL, 0, err, sizeof err)) {
      o.status = DFZ_INVALID;
      snprintf(o.cat, sizeof o.cat, "protocol");
      snprintf(o.detail, sizeof o.detail, "%s", err);
    } else {
      dfz_run_case(&c, eng, &o);
    }
    dfz_case_free(&c);
    free(text);
    if (!write_all(out, &o, sizeof o))
      _exit(1);
    /* a failed launch may leave the CUDA context unusable: start afresh */
    if (eng == DFZ_ENGINE_GPU && o.status == DFZ_ENGINE_ERROR)
      _exit(0);
  }
}

static bool spawn(dfz_exec *x) {
  int a[2], b[2];
  if (pipe(a) || pipe(b))
    return false;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    close(a[1]);
    close(b[0]);
    signal(SIGPIPE, SIG_IGN);
    child_loop(x->eng, a[0], b[1]);
    _exit(0);
  }
  close(a[0]);
  close(b[1]);
  x->pid = pid;
  x->to_child = a[1];
  x->from_child = b[0];
  return true;
}

static void reap(dfz_exec *x, bool kill_it, int *status) {
  if (x->pid <= 0)
    return;
  close(x->to_child);
  close(x->from_child);
  if (kill_it)
    kill(x->pid, SIGKILL);
  int st = 0;
  while (waitpid(x->pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (status)
    *status = st;
  x->pid = -1;
}

dfz_exec *dfz_exec_start(dfz_engine eng) {
  signal(SIGPIPE, SIG_IGN);
  dfz_exec *x = calloc(1, sizeof *x);
  if (!x)
    return NULL;
  x->eng = eng;
  x->pid = -1;
  return x;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

dfz_status dfz_exec_run(dfz_exec *x, const dfz_case *c, double timeout_s, dfz_outcome *out) {
  memset(out, 0, sizeof *out);
  if (x->pid <= 0 && !spawn(x)) {
    out->status = DFZ_CRASH;
    snprintf(out->cat, sizeof out->cat, "fork");
    snprintf(out->detail, sizeof out->detail, "cannot start the executor: %s", strerror(errno));
    return out->status;
  }
  char *text = dfz_case_to_text(c, NULL);
  uint32_t len = (uint32_t)strlen(text);
  bool sent = write_all(x->to_child, &len, sizeof len) && write_all(x->to_child, text, len);
  free(text);
  double deadline = now_s() + timeout_s;
  bool ready = false;
  while (sent) {
    double left = deadline - now_s();
    if (left <= 0)
      break;
    struct pollfd pf = {x->from_child, POLLIN, 0};
    int r = poll(&pf, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR)
      continue;
    ready = r > 0;
    break;
  }
  if (ready && read_all(x->from_child, out, sizeof *out))
    return out->status;
  int st = 0;
  bool timed_out = sent && !ready;
  reap(x, true, &st);
  memset(out, 0, sizeof *out);
  if (timed_out) {
    out->status = DFZ_TIMEOUT;
    snprintf(out->cat, sizeof out->cat, "timeout");
    snprintf(out->detail, sizeof out->detail, "no answer within %.3g s", timeout_s);
  } else {
    out->status = DFZ_CRASH;
    if (WIFSIGNALED(st)) {
      snprintf(out->cat, sizeof out->cat, "signal-%d", WTERMSIG(st));
      snprintf(out->detail, sizeof out->detail, "the run died on signal %d (%s)", WTERMSIG(st),
               strsignal(WTERMSIG(st)));
    } else {
      snprintf(out->cat, sizeof out->cat, "exit-%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
      snprintf(out->detail, sizeof out->detail, "the executor exited (status %d) without an answer",
               WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
  }
  return out->status;
}

void dfz_exec_stop(dfz_exec *x) {
  if (!x)
    return;
  reap(x, false, NULL);
  free(x);
}
