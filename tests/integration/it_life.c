/*
 * tests/integration/it_life.c — the daemon's life and its boundaries:
 * admin rights by peer credentials, one daemon per socket and per store,
 * stale sockets, SIGTERM with sd_notify, socket activation, and the
 * command line (--help, --version, --config).
 */
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/integration/reliability.h"

#define NOBODY 65534

/* ---- permissions ------------------------------------------------------------- */

static int op_status(tclient *c, teeny_msg_request *req, char *err,
                     size_t errsz) {
  teeny_msg_reply rep;
  int rc = tc_call(c, req, &rep);
  return rc ? rc : tc_reply_status(&rep, err, errsz);
}

static int purge_all(tclient *c, char *err, size_t n) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_PURGE;
  req.u.purge.all = true;
  return op_status(c, &req, err, n);
}

static int simple_op(tclient *c, teeny_proto_op op, bool repair, char *err,
                     size_t n) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = op;
  req.u.verify.repair = repair;
  return op_status(c, &req, err, n);
}

/* In a child running as nobody: admin ops refused (or, with admin,
 * allowed).  Returns the number of wrong answers. */
static int as_nobody(const char *sock, bool admin) {
  char err[256];
  int bad = 0, want = admin ? 0 : TEENY_E_PERM;
  tclient c;
  tc_init(&c);
  if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
    return 100;
  if (tc_open(&c, sock))
    return 101;
  int st = purge_all(&c, err, sizeof err);
  if (st != want ||
      (!admin && !strstr(err, "permission denied: purge needs root")))
    bad++, fprintf(stderr, "purge as nobody: %d %s\n", st, err);
  st = simple_op(&c, TEENY_OP_VERIFY, true, err, sizeof err);
  if (st != want)
    bad++, fprintf(stderr, "verify --repair as nobody: %d %s\n", st, err);
  /* reading is for everyone */
  if (simple_op(&c, TEENY_OP_VERIFY, false, err, sizeof err) ||
      simple_op(&c, TEENY_OP_STATS, false, err, sizeof err) ||
      simple_op(&c, TEENY_OP_LIST, false, err, sizeof err))
    bad++, fprintf(stderr, "read-only ops as nobody failed: %s\n", err);
  teeny_msg_request zr;
  memset(&zr, 0, sizeof zr);
  zr.op = TEENY_OP_STATS;
  zr.u.stats.zero = true;
  st = op_status(&c, &zr, err, sizeof err);
  if (st != want)
    bad++, fprintf(stderr, "stats --zero as nobody: %d %s\n", st, err);
  if (!admin) {
    st = simple_op(&c, TEENY_OP_SHUTDOWN, false, err, sizeof err);
    if (st != TEENY_E_PERM)
      bad++, fprintf(stderr, "shutdown as nobody: %d %s\n", st, err);
  }
  tc_close(&c);
  return bad;
}

static int run_as_nobody(const char *sock, bool admin) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0)
    _exit(as_nobody(sock, admin));
  int st = td_wait(pid, 30000);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

int it_permission(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char err[256];
  tc_init(&c);
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: needs root to run a client as nobody (%d)\n",
            NOBODY);
    return IT_SKIP;
  }
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--socket-mode", "0666", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  struct stat sst;
  CHECK(stat(d.sock, &sst) == 0 && (sst.st_mode & 0777) == 0666);
  CHECK_INT(run_as_nobody(d.sock, false), ==, 0);
  /* root (and the daemon's uid, here the same) may */
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(purge_all(&c, err, sizeof err), ==, 0);
  teeny_msg_request zr;
  memset(&zr, 0, sizeof zr);
  zr.op = TEENY_OP_STATS;
  zr.u.stats.zero = true;
  CHECK_INT(op_status(&c, &zr, err, sizeof err), ==, 0);
  teeny_msg_stats_reply sr;
  CHECK(tc_stats(&c, &sr) == 0);
  CHECK_INT(sr.requests, ==, 1); /* the zeroing stats reply itself */
  CHECK_INT(sr.errors, ==, 0);
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  /* members of --admin-group may too (nobody's group is 65534) */
  const char *gargs[] = {"--socket-mode", "0666", "--admin-group", "65534",
                         NULL};
  CHECK(td_start(&d, gargs, NULL) == 0);
  CHECK_INT(run_as_nobody(d.sock, true), ==, 0);
  /* the shutdown op: answered, then the daemon exits 0 */
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(simple_op(&c, TEENY_OP_SHUTDOWN, false, err, sizeof err), ==, 0);
  int st = td_wait(d.pid, 20000);
  d.pid = 0;
  CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK(access(d.sock, F_OK) != 0); /* socket file removed */
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- one daemon per socket and per store ---------------------------------------- */

/* Run a second teenycd with dir/socket overrides; it must exit 1 and say
 * why (want in its log). */
static int refused(tdaemon *d, const char *sock, const char *cache,
                   const char *want) {
  tdaemon d2 = *d;
  snprintf(d2.log, sizeof d2.log, "%s/second.log", d->dir);
  snprintf(d2.sock, sizeof d2.sock, "%s", sock);
  snprintf(d2.cache, sizeof d2.cache, "%s", cache);
  unlink(d2.log);
  pid_t pid = td_spawn(&d2, NULL, NULL, -1);
  int st = td_wait(pid, 20000);
  char *log = tc_read_file(d2.log, NULL);
  int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && log &&
           strstr(log, want);
  if (!ok)
    fprintf(stderr, "second daemon: status 0x%x, log:\n%s\n", st,
            log ? log : "(none)");
  if (st == -1) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
  free(log);
  return ok;
}

int it_second_daemon(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char other_sock[200], other_cache[200];
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  snprintf(other_sock, sizeof other_sock, "%s/other.sock", d.dir);
  snprintf(other_cache, sizeof other_cache, "%s/other-cache", d.dir);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(refused(&d, d.sock, d.cache, "in use by another teenycd"));
  CHECK(refused(&d, other_sock, d.cache, "in use by another teenycd"));
  CHECK(refused(&d, d.sock, other_cache, "already listening on"));
  CHECK(tc_open(&c, d.sock) == 0 && tc_ping(&c) == 0);
  tc_close(&c);
  /* kill -9 leaves a stale socket file: the next daemon replaces it */
  td_kill(&d);
  CHECK(access(d.sock, F_OK) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0 && tc_ping(&c) == 0);
  char *log = tc_read_file(d.log, NULL);
  CHECK(log && strstr(log, "removed stale socket"));
  free(log);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- SIGTERM and sd_notify ------------------------------------------------------- */

/* Read notify datagrams until one contains want. */
static int wait_notify(int fd, const char *want, int timeout_ms) {
  uint64_t end = tc_now_us() + (uint64_t)timeout_ms * 1000;
  while (tc_now_us() < end) {
    struct timeval tv = {0, 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[1024];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
      continue;
    buf[n] = '\0';
    if (strstr(buf, want))
      return 1;
  }
  return 0;
}

/* A datagram socket at name ("/path" or "@abstract"). */
static int notify_socket(const char *name) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t len = strlen(name);
  memcpy(a.sun_path, name, len);
  if (name[0] == '@')
    a.sun_path[0] = '\0';
  socklen_t al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
                             (name[0] == '/'));
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, al)) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

static int notify_cycle(tdaemon *d, const char *name) {
  char env[256];
  snprintf(env, sizeof env, "NOTIFY_SOCKET=%s", name);
  const char *envs[] = {env, NULL};
  int fd = notify_socket(name);
  tclient c;
  tc_init(&c);
  int ok = fd >= 0 && td_spawn(d, NULL, envs, -1) > 0 &&
           wait_notify(fd, "READY=1", 20000) && tc_open(&c, d->sock) == 0 &&
           tc_ping(&c) == 0;
  tc_close(&c);
  if (d->pid > 0)
    kill(d->pid, SIGTERM);
  ok = ok && wait_notify(fd, "STOPPING=1", 20000);
  int st = d->pid > 0 ? td_wait(d->pid, 20000) : -1;
  d->pid = 0;
  ok = ok && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
       access(d->sock, F_OK) != 0;
  if (!ok)
    fprintf(stderr, "notify via %s: status 0x%x\n", name, st);
  if (fd >= 0)
    close(fd);
  return ok;
}

int it_sigterm_notify(void) {
  tdaemon d;
  bool failed = true;
  char path[256], abstract[64];
  CHECK(td_init(&d) == 0);
  snprintf(path, sizeof path, "%s/notify", d.dir);
  snprintf(abstract, sizeof abstract, "@teenycd-it-%d", (int)getpid());
  CHECK(notify_cycle(&d, path));
  CHECK(notify_cycle(&d, abstract));
  failed = false;
fail:
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- SIGTERM with work in flight --------------------------------------------------- */

static int send_slow_bs(tclient *c, const char *src, size_t n, const char *bs,
                        uint64_t id) {
  const char *b[] = {"D=f32", bs, NULL};
  tc_compile t;
  tc_compile_init(&t, src, n, "slow", b);
  t.req.id = id;
  return tc_send(c, &t.req);
}

/* The running compile finishes and is answered; a request after the
 * signal gets SHUTDOWN; then the daemon exits 0. */
static int finish_on_sigterm(tdaemon *d, const char *src, size_t n) {
  tclient c;
  teeny_msg_reply rep;
  int ok = 0, st1 = 1, st2 = 1;
  tc_init(&c);
  if (td_start(d, NULL, NULL) || tc_open(&c, d->sock) ||
      send_slow_bs(&c, src, n, "BLOCK_SIZE=1024", 1))
    goto done;
  usleep(30000); /* the compile is running */
  kill(d->pid, SIGTERM);
  if (!it_stopped_listening(d->sock, 10000) ||
      send_slow_bs(&c, src, n, "BLOCK_SIZE=512", 2))
    goto done;
  for (int i = 0; i < 2 && !tc_recv(&c, TEENY_OP_NONE, &rep, 20000); i++) {
    if (rep.id == 1)
      st1 = rep.status;
    if (rep.id == 2)
      st2 = rep.status;
    teeny_msg_reply_free(&rep);
  }
  int st = td_wait(d->pid, 20000);
  d->pid = st == -1 ? d->pid : 0;
  ok = st1 == 0 && st2 == TEENY_E_SHUTDOWN && tc_closed(&c, 5000) &&
       st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (!ok)
    fprintf(stderr, "sigterm in flight: compile %d, late request %d, exit 0x%x\n",
            st1, st2, st);
done:
  tc_close(&c);
  return ok;
}

/* --shutdown-timeout 0: queued work is cancelled, the daemon still exits
 * 0 once the running compile ends, and the next start finds a clean
 * store. */
static int cancel_on_sigterm(tdaemon *d, const char *src, size_t n) {
  tclient c;
  const char *args[] = {"--shutdown-timeout", "0", "--workers", "1", NULL};
  const char *bs[] = {"BLOCK_SIZE=2048", "BLOCK_SIZE=256", "BLOCK_SIZE=128",
                      "BLOCK_SIZE=64"};
  int ok = 0;
  tc_init(&c);
  if (td_start(d, args, NULL) || tc_open(&c, d->sock))
    goto done;
  for (int i = 0; i < 4; i++)
    if (send_slow_bs(&c, src, n, bs[i], (uint64_t)i + 10))
      goto done;
  usleep(30000);
  uint64_t t0 = tc_now_us();
  kill(d->pid, SIGTERM);
  int st = td_wait(d->pid, 20000);
  double s = (double)(tc_now_us() - t0) / 1e6;
  d->pid = st == -1 ? d->pid : 0;
  ok = tc_closed(&c, 5000) && st != -1 && WIFEXITED(st) &&
       WEXITSTATUS(st) == 0 && s < 3.0;
  if (!ok)
    fprintf(stderr, "cancel on sigterm: exit 0x%x after %.2f s\n", st, s);
  char *log = tc_read_file(d->log, NULL);
  ok = ok && log && strstr(log, "cancelling");
  free(log);
done:
  tc_close(&c);
  return ok;
}

int it_sigterm_inflight(void) {
  tdaemon d;
  bool failed = true;
  size_t n;
  char *src = it_slow_kernel(300, &n);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(finish_on_sigterm(&d, src, n));
  CHECK(cancel_on_sigterm(&d, src, n));
  CHECK(td_start(&d, NULL, NULL) == 0);
  char *log = tc_read_file(d.log, NULL);
  bool unclean = log && strstr(log, "did not stop cleanly");
  free(log);
  CHECK(!unclean);
  failed = false;
fail:
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- socket activation ------------------------------------------------------------ */

int it_listen_fds(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  int fd = -1;
  char act[200];
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  snprintf(act, sizeof act, "%s/activated.sock", d.dir);
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.100s", act);
  CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(listen(fd, 16) == 0);
  CHECK(td_spawn(&d, NULL, NULL, fd) > 0);
  close(fd);
  fd = -1;
  int tries = 0;
  while (tc_open(&c, act) != 0 && tries++ < 2000)
    usleep(10000);
  CHECK(tc_ping(&c) == 0);
  CHECK(access(d.sock, F_OK) != 0); /* it did not bind --socket */
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(access(act, F_OK) == 0); /* not ours to remove */
  char *log = tc_read_file(d.log, NULL);
  CHECK(log && strstr(log, "socket-activated"));
  free(log);
  failed = false;
fail:
  if (fd >= 0)
    close(fd);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the command line ----------------------------------------------------------------- */

/* Run teenycd with args (a shell fragment); exit status, output in *out. */
static int run_cli(const tdaemon *d, const char *args, char **out) {
  char cmd[1024];
  const char *bin = getenv("TEENYCD_BIN");
  snprintf(cmd, sizeof cmd, "'%s' %s > '%s/cli.out' 2>&1",
           bin ? bin : "teenycd", args, d->dir);
  int st = system(cmd);
  char path[256];
  snprintf(path, sizeof path, "%s/cli.out", d->dir);
  *out = tc_read_file(path, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

static int hello_inflight(const char *sock) {
  tclient c;
  tc_init(&c);
  if (tc_connect(&c, sock))
    return -1;
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_HELLO;
  req.u.hello.version = 1;
  req.u.hello.client = "it/1";
  teeny_msg_reply rep;
  int v = -1;
  if (!tc_call(&c, &req, &rep)) {
    v = rep.status ? -1 : (int)rep.u.hello.max_inflight;
    teeny_msg_reply_free(&rep);
  }
  tc_close(&c);
  return v;
}

int it_config_help(void) {
  tdaemon d;
  bool failed = true;
  char *out = NULL, args[512], conf[256];
  CHECK(td_init(&d) == 0);
  CHECK_INT(run_cli(&d, "--help", &out), ==, 0);
  CHECK(out && strstr(out, "--max-size BYTES") && strstr(out, "default: 2G") &&
        strstr(out, "--admin-group") && strstr(out, "e.g. --workers 4"));
  CHECK(strstr(out, "--sass HOW") && strstr(out, "--ptxas PATH") &&
        strstr(out, "--sass-timeout TIME") && strstr(out, "--tune-timeout TIME"));
  free(out);
  CHECK_INT(run_cli(&d, "--sass bogus", &out), ==, 2);
  CHECK(out && strstr(out, "bad value 'bogus' (auto, driver, ptxas, off)"));
  free(out);
  CHECK_INT(run_cli(&d, "--version", &out), ==, 0);
  CHECK(out && strstr(out, "teenycd " TEENY_VERSION_STRING));
  free(out);
  CHECK_INT(run_cli(&d, "--bogus-flag", &out), ==, 2);
  free(out);
  CHECK_INT(run_cli(&d, "--max-size lots", &out), ==, 2);
  CHECK(out && strstr(out, "--max-size: max_size: bad size 'lots'"));
  free(out);
  /* unknown keys name file and line */
  snprintf(conf, sizeof conf, "%s/teenycd.conf", d.dir);
  CHECK(write_file(conf, "# test\nworkers = 2\n\nno_such_key = 1\n") == 0);
  snprintf(args, sizeof args, "--config '%s'", conf);
  CHECK_INT(run_cli(&d, args, &out), ==, 2);
  CHECK(out && strstr(out, "teenycd.conf:4: unknown key 'no_such_key'"));
  free(out);
  out = NULL;
  /* the file sets, a flag overrides */
  CHECK(write_file(conf, "max_inflight = 3   # comment\n"
                         "log-level = \"debug\"\n") == 0);
  const char *cargs[] = {"--config", conf, NULL};
  CHECK(td_start(&d, cargs, NULL) == 0);
  CHECK_INT(hello_inflight(d.sock), ==, 3);
  CHECK_INT(td_stop(&d), ==, 0);
  const char *fargs[] = {"--config", conf, "--max-inflight", "5", NULL};
  CHECK(td_start(&d, fargs, NULL) == 0);
  CHECK_INT(hello_inflight(d.sock), ==, 5);
  CHECK_INT(td_stop(&d), ==, 0);
  /* issue 18's settings: in --help, in the file, checked together */
  CHECK_INT(run_cli(&d, "--help", &out), ==, 0);
  CHECK(out && strstr(out, "--memory-budget BYTES") && strstr(out, "default: 1G") &&
        strstr(out, "--max-connections-per-uid N") &&
        strstr(out, "--max-inflight-per-uid N") && strstr(out, "--store-workers N") &&
        strstr(out, "--admin-workers N"));
  free(out);
  out = NULL;
  CHECK(write_file(conf, "memory_budget = 64M\nmax_connections_per_uid = 8\n"
                         "max_inflight_per_uid = 100\nstore_workers = 2\n"
                         "admin_workers = 1\n") == 0);
  CHECK(td_start(&d, cargs, NULL) == 0);
  CHECK(rel_counter(d.sock, "memory_budget") == 64.0 * 1048576);
  CHECK_INT(td_stop(&d), ==, 0);
  snprintf(args, sizeof args, "--config '%s' --memory-budget 8M", conf);
  CHECK_INT(run_cli(&d, args, &out), ==, 2);
  CHECK(out && strstr(out, "must be at least twice max_frame"));
  failed = false;
fail:
  free(out);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
