/*
 * daemon/helper.c — compile helper processes: the daemon side (spawn,
 * one request/reply exchange under a deadline, kill, reap) and the helper
 * side (teeny__helper_main).  See helper.h.
 *
 * Locking: hs->mu guards each slot's pid, busy and aborted, and the
 * started count.  A slot's pipes and frame reader belong to the worker
 * that borrowed it.  A pid is reaped only under the mutex, and cleared in
 * the same critical section, so teeny__helpers_abort (which kills under
 * the mutex) can never signal a reused pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/helper.h"
#include "daemon/subproc.h"
#include "proto/frame.h"
#include "common/common.h"


#define HELPER_MAX_FRAME (256u << 20)        /* a reply with artifacts */
#define HELPER_RECYCLE_RSS (1ull << 30)      /* restart a helper this big */
#define HELPER_READ_BUF (64u * 1024)         /* read chunk */
#define DESTROY_GRACE_MS 2000                /* exit on EOF, else SIGKILL */
#define BACKGROUND_NICE 10                   /* a background helper's nice */


typedef struct helper {
  pid_t pid;             /* the process, 0: none (mu) */
  bool busy;             /* lent to a compile (mu) */
  bool aborted;          /* killed by teeny__helpers_abort (mu) */
  bool background;       /* runs at nice +BACKGROUND_NICE */
  int to;                /* its stdin, our write end; -1: none */
  int from;              /* its stdout, our read end; -1: none */
  teeny_frame_reader rd; /* replies */
  char *buf;             /* read buffer, HELPER_READ_BUF bytes */
} helper;

struct teeny_helpers {
  teeny_helper_opts o;   /* options (o.exe points at exe) */
  char *exe;             /* owned copy of the path (argv[0], messages) */
  int image_fd;          /* our own executable, opened at create (or -1) */
  char image[64];        /* "/proc/PID/fd/N": what a helper is spawned
                            from, so an upgrade that replaces or deletes
                            the file at exe cannot change or break the
                            compiler of a running daemon ("" : use exe) */
  pthread_mutex_t mu;    /* see the top of the file */
  pthread_cond_t cv;     /* a slot was returned */
  helper *v;             /* the slots: foreground, then background ones */
  unsigned n;            /* how many (twice the workers) */
  uint64_t started;      /* helpers spawned (mu) */
};

int teeny__helper_self_exe(char *buf, size_t n) {
  ssize_t r = readlink("/proc/self/exe", buf, n - 1);
  if (r <= 0 || (size_t)r >= n - 1)
    return TEENY_E_IO;
  buf[r] = '\0';
  return 0;
}

/* ---- slots ------------------------------------------------------------------ */

int teeny__helpers_create(const teeny_helper_opts *o, unsigned n,
                          teeny_helpers **out) {
  *out = NULL;
  teeny_helpers *hs = teeny__calloc(1, sizeof *hs);
  if (!hs)
    return TEENY_E_NOMEM;
  hs->o = *o;
  hs->exe = teeny__strdup(o->exe ? o->exe : "");
  n = n ? n : 1;
  hs->v = teeny__calloc(2 * (size_t)n, sizeof *hs->v);
  if (!hs->exe || !hs->v) {
    teeny__free(hs->exe);
    teeny__free(hs->v);
    teeny__free(hs);
    return TEENY_E_NOMEM;
  }
  hs->o.exe = hs->exe;
  hs->image_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (hs->image_fd >= 0)
    snprintf(hs->image, sizeof hs->image, "/proc/%ld/fd/%d", (long)getpid(),
             hs->image_fd);
  hs->n = 2 * n;
  for (unsigned i = 0; i < hs->n; i++) {
    hs->v[i].to = hs->v[i].from = -1;
    hs->v[i].background = i >= n;
  }
  pthread_mutex_init(&hs->mu, NULL);
  pthread_cond_init(&hs->cv, NULL);
  *out = hs;
  return 0;
}

static helper *borrow(teeny_helpers *hs, bool background) {
  pthread_mutex_lock(&hs->mu);
  helper *h = NULL;
  for (;;) {
    for (unsigned i = 0; i < hs->n; i++) { /* prefer a running helper */
      helper *x = &hs->v[i];
      if (x->background == background && !x->busy &&
          (!h || (!h->pid && x->pid)))
        h = x;
    }
    if (h)
      break;
    pthread_cond_wait(&hs->cv, &hs->mu);
  }
  h->busy = true;
  h->aborted = false;
  pthread_mutex_unlock(&hs->mu);
  return h;
}

static void give_back(teeny_helpers *hs, helper *h) {
  pthread_mutex_lock(&hs->mu);
  h->busy = false;
  h->aborted = false;
  pthread_cond_signal(&hs->cv);
  pthread_mutex_unlock(&hs->mu);
}

static void close_pipes(helper *h) {
  if (h->to >= 0)
    close(h->to);
  if (h->from >= 0)
    close(h->from);
  h->to = h->from = -1;
  teeny_frame_reader_free(&h->rd);
}

/* Kill h's process (if it still runs) and reap it.  The wait status, and
 * its peak resident size in KiB in *maxrss_kb. */
static int reap(teeny_helpers *hs, helper *h, long *maxrss_kb) {
  close_pipes(h);
  int st = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  pthread_mutex_lock(&hs->mu);
  if (h->pid > 0) {
    kill(h->pid, SIGKILL); /* a process that already exited keeps its status */
    while (wait4(h->pid, &st, 0, &ru) < 0 && errno == EINTR)
      ;
  }
  h->pid = 0;
  pthread_mutex_unlock(&hs->mu);
  if (maxrss_kb)
    *maxrss_kb = ru.ru_maxrss;
  return st;
}

/* ---- starting a helper -------------------------------------------------------- */

static int spawn(teeny_helpers *hs, helper *h, char *msg, size_t msgsz) {
  char ppid[24], mem[24];
  snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
  snprintf(mem, sizeof mem, "%" PRIu64, hs->o.memory_bytes);
  char *argv[] = {hs->exe, (char *)TEENY_HELPER_FLAG, ppid, mem, NULL};
  pid_t pid = 0;
  int rc = teeny__subproc_spawn(hs->image[0] ? hs->image : hs->exe, argv, &pid, &h->to,
                                &h->from, msg, msgsz);
  if (rc)
    return rc;
  if (h->background && setpriority(PRIO_PROCESS, (id_t)pid, BACKGROUND_NICE))
    TEENY_LOGD(hs->o.log, "cannot lower the priority of compiler process %ld: %s",
               (long)pid, strerror(errno));
  teeny_frame_reader_init(&h->rd, HELPER_MAX_FRAME);
  pthread_mutex_lock(&hs->mu);
  h->pid = pid;
  hs->started++;
  pthread_mutex_unlock(&hs->mu);
  TEENY_LOGD(hs->o.log, "compiler process %ld started", (long)pid);
  return 0;
}

/* ---- one exchange --------------------------------------------------------------- */

/* Wait until fd is ready for ev or the deadline (0: none) passes.  0,
 * TEENY_E_TIMEOUT or TEENY_E_IO. */
static int wait_fd(int fd, short ev, uint64_t deadline_ns) {
  for (;;) {
    int ms = -1;
    if (deadline_ns) {
      uint64_t now = teeny__now_ns();
      if (now >= deadline_ns)
        return TEENY_E_TIMEOUT;
      uint64_t left = (deadline_ns - now + 999999) / 1000000;
      ms = left > INT_MAX ? INT_MAX : (int)left;
    }
    struct pollfd p = {fd, ev, 0};
    int r = poll(&p, 1, ms);
    if (r > 0)
      return 0; /* also POLLHUP/POLLERR: the read or write says what */
    if (r < 0 && errno != EINTR)
      return TEENY_E_IO;
  }
}

/* 0, TEENY_E_CLOSED (the helper is gone), TIMEOUT or IO. */
static int write_all(int fd, const char *p, size_t n, uint64_t deadline_ns) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && errno == EAGAIN) {
      int rc = wait_fd(fd, POLLOUT, deadline_ns);
      if (rc)
        return rc;
      continue;
    }
    return TEENY_E_CLOSED;
  }
  return 0;
}

/* The next reply frame: 0 with *p, *n (valid until the next read), or
 * TEENY_E_CLOSED (end of stream), TIMEOUT, IO, or a framing error. */
static int read_frame(helper *h, uint64_t deadline_ns, const char **p,
                      size_t *n) {
  for (;;) {
    int rc = teeny_frame_reader_next(&h->rd, p, n);
    if (rc == 1)
      return 0;
    if (rc < 0)
      return rc;
    ssize_t r = read(h->from, h->buf, HELPER_READ_BUF);
    if (r > 0) {
      if ((rc = teeny_frame_reader_feed(&h->rd, h->buf, (size_t)r)))
        return rc;
      continue;
    }
    if (r == 0)
      return TEENY_E_CLOSED;
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN)
      return TEENY_E_CLOSED;
    if ((rc = wait_fd(h->from, POLLIN, deadline_ns)))
      return rc;
  }
}

/* Decode the helper's reply into *out / diags.  The reply's status, or
 * INTERNAL (undecodable, another build) or NOMEM. */
static int take_reply(const char *p, size_t n, const char *key,
                      uint64_t mem, teeny_artifact **out, teeny_diags *diags,
                      char *msg, size_t msgsz) {
  teeny_msg_reply rep;
  char err[TEENY_PROTO_ERR_LEN] = "";
  int rc = teeny_msg_reply_decode(p, n, TEENY_OP_COMPILE, &rep, err);
  if (rc) {
    snprintf(msg, msgsz, "bad reply from the compiler process: %s", err);
    return TEENY_E_INTERNAL;
  }
  bool has_error = false;
  for (size_t i = 0; i < rep.ndiags; i++) {
    const teeny_diag *g = &rep.diags[i];
    has_error |= g->level == TEENY_DIAG_ERROR;
    teeny_diags_add(diags, g->level, g->file, g->line, g->col, g->source_line,
                    g->message);
  }
  rc = rep.status;
  if (rc == TEENY_E_NOMEM && mem && !TEENY_ASAN) {
    snprintf(msg, msgsz,
             "the compile ran out of its memory budget (%" PRIu64
             " MiB, --compile-memory)",
             mem >> 20);
    rc = TEENY_E_LIMIT;
  } else if (rc < 0) {
    if (!has_error)
      snprintf(msg, msgsz, "%s", rep.error ? rep.error : teeny_strerror(rc));
  } else if (key && strcmp(rep.u.compile.art.key, key) != 0) {
    snprintf(msg, msgsz,
             "the compiler process is another build (key %.16s..., expected "
             "%.16s...); restart teenycd",
             rep.u.compile.art.key, key);
    rc = TEENY_E_INTERNAL;
  } else if (!(*out = teeny__artifact_copy(&rep.u.compile.art))) {
    rc = TEENY_E_NOMEM;
  }
  teeny_msg_reply_free(&rep);
  return rc;
}

static long rss_bytes(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
  FILE *f = fopen(path, "re");
  long size = 0, rss = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &rss) != 2)
      rss = 0;
    fclose(f);
  }
  return rss * sysconf(_SC_PAGESIZE);
}

/* Why a helper that stopped answering is gone, as a status and message. */
static int death(teeny_helpers *hs, helper *h, char *msg, size_t msgsz) {
  long maxrss_kb = 0;
  int st = reap(hs, h, &maxrss_kb);
  uint64_t mem = hs->o.memory_bytes;
  /* A helper that hits its address-space limit dies in LLVM (bad_alloc:
   * SIGABRT) with much of the budget resident (the rest is libraries and
   * reservations: ~200 MiB of address space at rest); a crash from a bug
   * rarely holds a quarter of the budget. */
  if (WIFSIGNALED(st) && mem && TEENY_ASAN == 0 &&
      (uint64_t)maxrss_kb * 1024 * 4 >= mem) {
    snprintf(msg, msgsz,
             "the compile ran out of its memory budget (%" PRIu64
             " MiB, --compile-memory; peak %ld MiB resident)",
             mem >> 20, maxrss_kb >> 10);
    return TEENY_E_LIMIT;
  }
  if (WIFSIGNALED(st))
    snprintf(msg, msgsz, "the compiler process died (signal %d, %s)",
             WTERMSIG(st), strsignal(WTERMSIG(st)));
  else
    snprintf(msg, msgsz, "the compiler process exited (status %d)",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return TEENY_E_INTERNAL;
}

static bool was_aborted(teeny_helpers *hs, helper *h) {
  pthread_mutex_lock(&hs->mu);
  bool a = h->aborted;
  pthread_mutex_unlock(&hs->mu);
  return a;
}

/* Send the request frame and read the reply: 0 with the reply decoded, or
 * a failure status with msg filled. */
static int exchange(teeny_helpers *hs, helper *h, const teeny_buf *req,
                    const char *key, uint64_t deadline, teeny_artifact **out,
                    teeny_diags *diags, teeny_helper_outcome *what, char *msg,
                    size_t msgsz) {
  int rc;
  for (int attempt = 0;; attempt++) {
    if (!h->pid) {
      if (!h->buf && !(h->buf = teeny__malloc(HELPER_READ_BUF)))
        return TEENY_E_NOMEM;
      if ((rc = spawn(hs, h, msg, msgsz)))
        return rc;
      what->spawned = true;
    }
    rc = write_all(h->to, req->p, req->len, deadline);
    /* a helper that died while idle (OOM killer, a stray signal): once
     * more with a fresh one */
    if (rc == TEENY_E_CLOSED && attempt == 0 && !what->spawned &&
        !was_aborted(hs, h)) {
      reap(hs, h, NULL);
      continue;
    }
    break;
  }
  const char *p = NULL;
  size_t n = 0;
  if (!rc)
    rc = read_frame(h, deadline, &p, &n);
  if (!rc)
    return take_reply(p, n, key, hs->o.memory_bytes, out, diags, msg, msgsz);
  if (was_aborted(hs, h)) {
    reap(hs, h, NULL);
    snprintf(msg, msgsz, "daemon is shutting down");
    return TEENY_E_SHUTDOWN;
  }
  if (rc == TEENY_E_TIMEOUT) {
    what->timed_out = true;
    reap(hs, h, NULL);
    snprintf(msg, msgsz,
             "the compile did not finish within its time budget of %" PRIu64
             " ms (--compile-timeout); it was cancelled",
             hs->o.timeout_ms);
    return TEENY_E_TIMEOUT;
  }
  if (rc == TEENY_E_CLOSED) {
    what->died = true;
    return death(hs, h, msg, msgsz);
  }
  reap(hs, h, NULL);
  snprintf(msg, msgsz, "talking to the compiler process: %s",
           teeny_strerror(rc));
  return TEENY_E_INTERNAL;
}

int teeny__helpers_run(teeny_helpers *hs, const teeny_msg_compile *c,
                       unsigned emit, const char *key, bool background,
                       teeny_artifact **out, teeny_diags *diags,
                       teeny_helper_outcome *what) {
  *out = NULL;
  memset(what, 0, sizeof *what);
  uint64_t t0 = teeny__now_ns();
  uint64_t deadline = hs->o.timeout_ms ? t0 + hs->o.timeout_ms * 1000000 : 0;
  char msg[256] = "";
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_COMPILE;
  req.id = 1;
  req.u.compile = *c;
  req.u.compile.flags = 0;
  req.u.compile.emit = emit;
  teeny_buf b;
  teeny__buf_init(&b);
  size_t at = teeny_frame_begin(&b);
  int rc = teeny_msg_request_encode(&req, &b);
  if (!rc)
    rc = teeny_frame_end(&b, at, 0);
  if (rc) {
    snprintf(msg, sizeof msg, "cannot encode the compile request: %s",
             teeny_strerror(rc));
    rc = TEENY_E_INTERNAL;
  } else {
    helper *h = borrow(hs, background);
    rc = exchange(hs, h, &b, key, deadline, out, diags, what, msg,
                  sizeof msg);
    if (h->pid && rss_bytes(h->pid) > (long)HELPER_RECYCLE_RSS) {
      TEENY_LOGD(hs->o.log, "compiler process %ld is over %llu MiB; restarting",
                 (long)h->pid, HELPER_RECYCLE_RSS >> 20);
      reap(hs, h, NULL);
    }
    give_back(hs, h);
  }
  teeny__buf_free(&b);
  if (rc && msg[0]) {
    const char *file = c->req.filename ? c->req.filename : "<source>";
    teeny_diags_add(diags, TEENY_DIAG_ERROR, file, 0, 0, NULL, msg);
    if (rc != TEENY_E_SHUTDOWN)
      TEENY_LOGW(hs->o.log, "%s of %.16s... (%s) after %.0f ms: %s",
                 emit ? "compile" : "spec", key ? key : "(no key yet)",
                 c->req.kernel ? c->req.kernel : "?",
                 (double)(teeny__now_ns() - t0) / 1e6, msg);
  }
  return rc;
}

void teeny__helpers_abort(teeny_helpers *hs) {
  if (!hs)
    return;
  pthread_mutex_lock(&hs->mu);
  for (unsigned i = 0; i < hs->n; i++) {
    helper *h = &hs->v[i];
    if (h->busy && h->pid > 0) {
      h->aborted = true;
      kill(h->pid, SIGKILL);
    }
  }
  pthread_mutex_unlock(&hs->mu);
}

uint64_t teeny__helpers_started(teeny_helpers *hs) {
  pthread_mutex_lock(&hs->mu);
  uint64_t n = hs->started;
  pthread_mutex_unlock(&hs->mu);
  return n;
}

void teeny__helpers_destroy(teeny_helpers *hs) {
  if (!hs)
    return;
  for (unsigned i = 0; i < hs->n; i++) /* end of input: they exit */
    close_pipes(&hs->v[i]);
  for (int waited = 0; waited < DESTROY_GRACE_MS; waited += 10) {
    bool left = false;
    for (unsigned i = 0; i < hs->n; i++) {
      helper *h = &hs->v[i];
      if (h->pid > 0 && waitpid(h->pid, NULL, WNOHANG) == h->pid)
        h->pid = 0;
      left |= h->pid > 0;
    }
    if (!left)
      break;
    usleep(10000);
  }
  for (unsigned i = 0; i < hs->n; i++) {
    reap(hs, &hs->v[i], NULL);
    teeny__free(hs->v[i].buf);
  }
  pthread_mutex_destroy(&hs->mu);
  pthread_cond_destroy(&hs->cv);
  if (hs->image_fd >= 0)
    close(hs->image_fd);
  teeny__free(hs->v);
  teeny__free(hs->exe);
  teeny__free(hs);
}

/* ---- the helper process ----------------------------------------------------------- */

/* The spec step's answer: the spec's fields as an artifact view (params
 * into *params, which the caller frees). */
static void spec_view(const teeny_spec *spec, teeny_artifact *v,
                      teeny_param **params) {
  memset(v, 0, sizeof *v);
  v->name = (char *)teeny_spec_name(spec);
  v->id = (char *)teeny_spec_id(spec);
  memcpy(v->key, teeny_spec_key(spec), sizeof v->key);
  v->entry = (char *)teeny_spec_entry(spec);
  v->target = (char *)teeny_spec_target(spec);
  v->num_warps = teeny_spec_num_warps(spec);
  v->threads_per_block = 32 * v->num_warps;
  size_t n = teeny_spec_nparams(spec);
  *params = teeny__calloc(n + 1, sizeof **params);
  for (size_t i = 0; *params && i < n; i++)
    (*params)[i] = *teeny_spec_param(spec, i);
  v->params = *params;
  v->nparams = *params ? n : 0;
}

/* Run one request frame (spec step when emit is 0, else the compile step)
 * and append the reply frame to out. */
static void serve(const char *p, size_t n, teeny_buf *out) {
  teeny_msg_request req;
  char err[TEENY_PROTO_ERR_LEN] = "";
  teeny_diags d, sd;
  teeny_diags_init(&d);
  teeny_diags_init(&sd);
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = TEENY_OP_COMPILE;
  teeny_spec *spec = NULL;
  teeny_artifact *a = NULL, view;
  teeny_param *params = NULL;
  int rc = teeny_msg_request_decode(p, n, &req, err);
  rep.id = req.id;
  if (!rc && req.op != TEENY_OP_COMPILE) {
    rc = TEENY_E_PROTO;
    snprintf(err, sizeof err, "expected a compile request");
  }
  unsigned emit = req.u.compile.emit & (TEENY_EMIT_MLIR | TEENY_EMIT_PTX);
  if (!rc) {
    /* the compile step: the daemon already has the spec step's warnings */
    rc = teeny_spec_create(&req.u.compile.req, &spec, emit ? &sd : &d);
    if (rc && emit)
      for (size_t i = 0; i < sd.n; i++)
        teeny_diags_add(&d, sd.v[i].level, sd.v[i].file, sd.v[i].line,
                        sd.v[i].col, sd.v[i].source_line, sd.v[i].message);
    else if (!rc && emit)
      rc = teeny_spec_compile(spec, emit, &a, &d);
    else if (!rc)
      spec_view(spec, a = &view, &params);
  }
  rep.status = rc;
  rep.diags = d.v;
  rep.ndiags = d.n;
  if (rc) {
    rep.error = err[0] ? err : teeny_strerror(rc);
    for (size_t i = 0; i < d.n; i++)
      if (d.v[i].level == TEENY_DIAG_ERROR) {
        rep.error = d.v[i].message;
        break;
      }
  } else {
    rep.u.compile.art = *a;
    rep.u.compile.cache = TEENY_CACHE_MISS;
  }
  size_t at = teeny_frame_begin(out);
  int e = teeny_msg_reply_encode(&rep, out);
  if (!e)
    e = teeny_frame_end(out, at, HELPER_MAX_FRAME);
  if (e) {
    out->len = at;
    out->oom = false;
    at = teeny_frame_begin(out);
    teeny_msg_error_encode(out, rep.id,
                           e == TEENY_E_TOOBIG ? TEENY_E_LIMIT
                                               : TEENY_E_INTERNAL,
                           e == TEENY_E_TOOBIG
                               ? "the compiled artifacts are over 256 MiB"
                               : "the compile reply could not be encoded");
    teeny_frame_end(out, at, 0);
  }
  if (a != &view)
    teeny_artifact_destroy(a);
  teeny__free(params);
  teeny_spec_destroy(spec);
  teeny_diags_close(&d);
  teeny_diags_close(&sd);
  teeny_msg_request_free(&req);
}

/* teeny_subproc_fn over serve(). */
static void serve_one(void *ctx, const char *p, size_t n, teeny_buf *out) {
  (void)ctx;
  serve(p, n, out);
}

int teeny__helper_main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "teenycd: %s is for teenycd's own use\n",
            TEENY_HELPER_FLAG);
    return 2;
  }
  uint64_t mem = strtoull(argv[3], NULL, 10);
  int out_fd = teeny__subproc_enter(argv[2]);
  if (out_fd <= 0)
    return out_fd == 0 ? 0 : 1;
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  if (mem && !TEENY_ASAN) { /* ASan reserves terabytes of address space */
    struct rlimit as = {(rlim_t)mem, (rlim_t)mem};
    if (setrlimit(RLIMIT_AS, &as)) /* stderr is the daemon's: the log */
      fprintf(stderr, "teenycd compile process %ld: cannot set its memory "
                      "budget (--compile-memory): %s\n",
              (long)getpid(), strerror(errno));
  }
  return teeny__subproc_serve(out_fd, 0, serve_one, NULL);
}
