/*
 * tests/integration/tclient.c — the blocking test client and the daemon
 * harness (see tclient.h).  Test code: simple and strict, never clever.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/tclient.h"

uint64_t tc_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- the client ------------------------------------------------------------ */

void tc_init(tclient *c) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
}

int tc_connect(tclient *c, const char *path) {
  tc_close(c);
  tc_init(c);
  c->next_id = 1;
  teeny_frame_reader_init(&c->rd, 0);
  c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c->fd < 0)
    return -1;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (connect(c->fd, (struct sockaddr *)&a, sizeof a)) {
    int e = errno;
    close(c->fd);
    c->fd = -1;
    errno = e;
    return -1;
  }
  return 0;
}

int tc_open(tclient *c, const char *path) {
  if (tc_connect(c, path))
    return TEENY_E_CONNECT;
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_HELLO;
  req.u.hello.version = TEENY_PROTO_VERSION;
  req.u.hello.client = "tclient/1";
  req.u.hello.pid = (uint32_t)getpid();
  teeny_msg_reply rep;
  int rc = tc_call(c, &req, &rep);
  if (!rc) {
    rc = rep.status;
    teeny_msg_reply_free(&rep);
  }
  if (rc)
    tc_close(c);
  return rc;
}

void tc_close(tclient *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  teeny_frame_reader_free(&c->rd);
  free(c->payload);
  c->payload = NULL;
  c->pcap = 0;
  teeny__buf_free(&c->out);
}

int tc_send_raw(tclient *c, const void *p, size_t n) {
  const char *s = p;
  while (n) {
    ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

int tc_send(tclient *c, teeny_msg_request *req) {
  if (!req->id)
    req->id = c->next_id++;
  c->out.len = 0;
  size_t b = teeny_frame_begin(&c->out);
  int rc = teeny_msg_request_encode(req, &c->out);
  if (!rc)
    rc = teeny_frame_end(&c->out, b, 0);
  if (rc)
    return rc;
  return tc_send_raw(c, c->out.p, c->out.len) ? TEENY_E_IO : 0;
}

static int keep(tclient *c, const char *p, size_t n) {
  if (n > c->pcap) {
    char *q = realloc(c->payload, n);
    if (!q)
      return TEENY_E_NOMEM;
    c->payload = q;
    c->pcap = n;
  }
  memcpy(c->payload, p, n);
  c->plen = n;
  return 0;
}

/* A reply to a hit comes within microseconds: try for SPIN_US without
 * sleeping (yielding to a daemon on this CPU) before blocking in poll. */
#define SPIN_US 30
static ssize_t spin_read(tclient *c) {
  uint64_t end = tc_now_us() + SPIN_US;
  do {
    ssize_t r = recv(c->fd, c->buf, sizeof c->buf, MSG_DONTWAIT);
    if (r >= 0 || (errno != EAGAIN && errno != EINTR))
      return r;
    sched_yield();
  } while (tc_now_us() < end);
  errno = EAGAIN;
  return -1;
}

/* Read more bytes into the frame reader.  0, TEENY_E_CLOSED, TIMEOUT. */
static int fill(tclient *c, int timeout_ms) {
  ssize_t sr = spin_read(c);
  if (sr > 0)
    return teeny_frame_reader_feed(&c->rd, c->buf, (size_t)sr);
  if (sr == 0)
    return TEENY_E_CLOSED;
  struct pollfd pfd = {c->fd, POLLIN, 0};
  int pr = poll(&pfd, 1, timeout_ms);
  if (pr == 0)
    return TEENY_E_TIMEOUT;
  if (pr < 0)
    return errno == EINTR ? 0 : TEENY_E_IO;
  ssize_t r = read(c->fd, c->buf, sizeof c->buf);
  if (r < 0 && errno == EINTR)
    return 0;
  if (r <= 0)
    return TEENY_E_CLOSED;
  return teeny_frame_reader_feed(&c->rd, c->buf, (size_t)r);
}

int tc_recv_frame(tclient *c, int timeout_ms, const char **p, size_t *n) {
  for (;;) {
    const char *q;
    size_t m;
    int rc = teeny_frame_reader_next(&c->rd, &q, &m);
    if (rc == 1) {
      if ((rc = keep(c, q, m)))
        return rc;
      *p = c->payload;
      *n = c->plen;
      return 0;
    }
    if (rc < 0)
      return rc;
    if ((rc = fill(c, timeout_ms)))
      return rc;
  }
}

int tc_recv(tclient *c, teeny_proto_op op, teeny_msg_reply *rep,
            int timeout_ms) {
  const char *p;
  size_t n;
  int rc = tc_recv_frame(c, timeout_ms, &p, &n);
  if (rc) {
    memset(rep, 0, sizeof *rep);
    return rc;
  }
  char err[TEENY_PROTO_ERR_LEN];
  rc = teeny_msg_reply_decode(p, n, op, rep, err);
  if (rc)
    fprintf(stderr, "tclient: bad reply: %s\n", err);
  return rc;
}

int tc_call(tclient *c, teeny_msg_request *req, teeny_msg_reply *rep) {
  return tc_call_timeout(c, req, rep, 60000);
}

int tc_call_timeout(tclient *c, teeny_msg_request *req, teeny_msg_reply *rep,
                    int timeout_ms) {
  req->id = 0;
  int rc = tc_send(c, req);
  if (rc) {
    memset(rep, 0, sizeof *rep);
    return rc;
  }
  for (;;) {
    const char *p;
    size_t n;
    if ((rc = tc_recv_frame(c, timeout_ms, &p, &n))) {
      memset(rep, 0, sizeof *rep);
      return rc;
    }
    char err[TEENY_PROTO_ERR_LEN];
    if ((rc = teeny_msg_reply_decode(p, n, TEENY_OP_NONE, rep, err)))
      return rc;
    bool mine = rep->id == req->id;
    teeny_msg_reply_free(rep);
    if (!mine)
      continue;
    rc = teeny_msg_reply_decode(p, n, req->op, rep, err);
    if (rc)
      fprintf(stderr, "tclient: bad reply: %s\n", err);
    return rc;
  }
}

bool tc_closed(tclient *c, int timeout_ms) {
  uint64_t end = tc_now_us() + (uint64_t)timeout_ms * 1000;
  for (;;) {
    const char *p;
    size_t n;
    uint64_t now = tc_now_us();
    if (now >= end)
      return false;
    int rc = tc_recv_frame(c, (int)((end - now) / 1000) + 1, &p, &n);
    if (rc == TEENY_E_CLOSED || rc == TEENY_E_IO)
      return true;
    if (rc == TEENY_E_TIMEOUT)
      return false;
  }
}

void tc_compile_init(tc_compile *t, const char *source, size_t len,
                     const char *kernel, const char *const *bindings) {
  memset(t, 0, sizeof *t);
  teeny_msg_request *r = &t->req;
  r->op = TEENY_OP_COMPILE;
  r->u.compile.req.source = source;
  r->u.compile.req.source_len = len;
  r->u.compile.req.kernel = kernel;
  r->u.compile.req.dtypes = t->dtypes;
  r->u.compile.req.consts = t->consts;
  r->u.compile.emit = TEENY_MSG_EMIT_PTX;
  size_t nd = 0, nc = 0;
  for (size_t i = 0; bindings && bindings[i] && i < 32; i++) {
    const char *eq = strchr(bindings[i], '=');
    if (!eq)
      continue;
    snprintf(t->names[i], sizeof t->names[i], "%.*s", (int)(eq - bindings[i]),
             bindings[i]);
    const char *v = eq + 1;
    if ((*v >= '0' && *v <= '9') || *v == '-') {
      if (nc < 16)
        t->consts[nc++] = (teeny_const_binding){t->names[i], atoll(v)};
    } else if (nd < 16) {
      snprintf(t->values[nd], sizeof t->values[nd], "%s", v);
      t->dtypes[nd] = (teeny_dtype_binding){t->names[i], t->values[nd]};
      nd++;
    }
  }
  r->u.compile.req.ndtypes = nd;
  r->u.compile.req.nconsts = nc;
}

int tc_stats(tclient *c, teeny_msg_stats_reply *out) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_STATS;
  teeny_msg_reply rep;
  int rc = tc_call(c, &req, &rep);
  if (rc)
    return rc;
  rc = rep.status;
  if (!rc) {
    *out = rep.u.stats;
    out->extra = NULL;
    out->nextra = 0;
  }
  teeny_msg_reply_free(&rep);
  return rc;
}

int tc_ping(tclient *c) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_PING;
  teeny_msg_reply rep;
  int rc = tc_call(c, &req, &rep);
  if (!rc)
    rc = rep.status;
  teeny_msg_reply_free(&rep);
  return rc;
}

int tc_reply_status(teeny_msg_reply *rep, char *err, size_t n) {
  int rc = rep->status;
  snprintf(err, n, "%s", rep->error ? rep->error : "");
  teeny_msg_reply_free(rep);
  return rc;
}

int tc_verify(tclient *c, bool repair) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_VERIFY;
  req.u.verify.repair = repair;
  teeny_msg_reply rep;
  if (tc_call(c, &req, &rep))
    return -1;
  int n = -1;
  if (rep.status == 0) {
    n = (int)rep.u.verify.nproblems;
    for (size_t i = 0; i < rep.u.verify.nproblems; i++)
      fprintf(stderr, "  verify%s: %s: %s\n", repair ? " --repair" : "",
              rep.u.verify.problems[i].key, rep.u.verify.problems[i].problem);
  }
  teeny_msg_reply_free(&rep);
  return n;
}

int tc_verify_at(const char *sock, bool repair) {
  tclient c;
  tc_init(&c);
  int n = tc_open(&c, sock) ? -1 : tc_verify(&c, repair);
  tc_close(&c);
  return n;
}

/* ---- files ------------------------------------------------------------------ */

char *tc_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  size_t r;
  while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (cap - n - 1 == 0) {
      char *t = realloc(s, cap *= 2);
      if (!t) {
        free(s);
        s = NULL;
      }
      s = t;
    }
  }
  fclose(f);
  if (s)
    s[n] = '\0';
  if (len)
    *len = n;
  return s;
}

char *tc_kernel_source(const char *name, size_t *len) {
  const char *dir = getenv("TEENY_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/%s.c", dir ? dir : ".",
           name);
  char *s = tc_read_file(path, len);
  if (!s)
    fprintf(stderr, "cannot read %s\n", path);
  return s;
}

/* ---- the daemon -------------------------------------------------------------- */

int td_init(tdaemon *d) {
  memset(d, 0, sizeof *d);
  const char *tmp = getenv("TMPDIR");
  snprintf(d->dir, sizeof d->dir, "%s/teenycd-it-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(d->dir))
    return -1;
  chmod(d->dir, 0755); /* a test may connect as nobody */
  snprintf(d->sock, sizeof d->sock, "%s/s.sock", d->dir);
  snprintf(d->cache, sizeof d->cache, "%s/cache", d->dir);
  snprintf(d->log, sizeof d->log, "%s/teenycd.log", d->dir);
  return 0;
}

static void child_exec(const tdaemon *d, const char *const *args,
                       const char *const *env, int fd3) {
  const char *bin = getenv("TEENYCD_BIN");
  const char *argv[64];
  int n = 0;
  argv[n++] = bin ? bin : "teenycd";
  argv[n++] = "--socket";
  argv[n++] = d->sock;
  argv[n++] = "--cache-dir";
  argv[n++] = d->cache;
  argv[n++] = "--log-level";
  argv[n++] = "debug";
  for (int i = 0; args && args[i] && n < 62; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  for (int i = 0; env && env[i]; i++)
    putenv((char *)env[i]);
  int lf = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (lf >= 0) { /* stdout too: the daemon must not hold a test's pipes */
    dup2(lf, STDOUT_FILENO);
    dup2(lf, STDERR_FILENO);
    if (lf > STDERR_FILENO)
      close(lf);
  }
  if (fd3 >= 0 && fd3 != 3) {
    dup2(fd3, 3);
    close(fd3);
  }
  if (fd3 >= 0) {
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("LISTEN_PID", pid, 1);
    setenv("LISTEN_FDS", "1", 1);
  }
  if (d->run_uid && (setgroups(0, NULL) || setgid(d->run_gid) || setuid(d->run_uid))) {
    fprintf(stderr, "cannot become %u:%u: %s\n", (unsigned)d->run_uid,
            (unsigned)d->run_gid, strerror(errno));
    _exit(126);
  }
  execv(argv[0], (char *const *)argv);
  fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

pid_t td_spawn(tdaemon *d, const char *const *args, const char *const *env,
               int fd3) {
  pid_t pid = fork();
  if (pid == 0)
    child_exec(d, args, env, fd3);
  if (pid > 0)
    d->pid = pid;
  return pid;
}

static bool answers(const char *path) {
  tclient c;
  tc_init(&c);
  if (tc_connect(&c, path))
    return false;
  tc_close(&c);
  return true;
}

int td_start(tdaemon *d, const char *const *args, const char *const *env) {
  if (td_spawn(d, args, env, -1) < 0)
    return -1;
  for (int i = 0; i < 2000; i++) { /* up to 20 s (sanitizers, recovery) */
    if (answers(d->sock))
      return 0;
    int st;
    if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
      fprintf(stderr, "teenycd exited early (status 0x%x)\n", st);
      d->pid = 0;
      td_dump_log(d);
      return -1;
    }
    usleep(10000);
  }
  fprintf(stderr, "teenycd did not answer on %s\n", d->sock);
  td_dump_log(d);
  return -1;
}

int td_wait(pid_t pid, int timeout_ms) {
  for (int i = 0; i < timeout_ms; i += 5) {
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid)
      return st;
    if (r < 0)
      return -1;
    usleep(5000);
  }
  return -1;
}

int td_stop(tdaemon *d) {
  if (d->pid <= 0)
    return -1;
  kill(d->pid, SIGTERM);
  int st = td_wait(d->pid, 30000);
  if (st == -1) {
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
  }
  d->pid = 0;
  return st;
}

void td_kill(tdaemon *d) {
  if (d->pid <= 0)
    return;
  kill(d->pid, SIGKILL);
  waitpid(d->pid, NULL, 0);
  d->pid = 0;
}

void td_dump_log(const tdaemon *d) {
  size_t n;
  char *s = tc_read_file(d->log, &n);
  if (!s)
    return;
  const char *start = n > 8000 ? s + n - 8000 : s;
  fprintf(stderr, "---- teenycd log (%s) ----\n%s---- end of log ----\n",
          d->log, start);
  free(s);
}

bool td_fini(tdaemon *d, bool failed) {
  if (d->pid > 0) {
    int st = td_stop(d);
    if (!failed && (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
      fprintf(stderr, "teenycd did not exit cleanly (status 0x%x)\n", st);
      failed = true;
    }
  }
  if (failed)
    td_dump_log(d);
  if (!d->dir[0])
    return failed;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", d->dir);
  d->dir[0] = '\0';
  return failed;
}
