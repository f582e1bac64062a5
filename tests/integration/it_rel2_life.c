/*
 * tests/integration/it_rel2_life.c — the daemon's life and its store's
 * files, second round (issue 18): a FIFO planted in the store never
 * wedges a request or the next start; a stopping daemon leaves its
 * successor's socket alone; temp files of dead puts are cleaned at every
 * start; waiters past --shutdown-timeout get SHUTDOWN, not EOF; a reader
 * that the daemon paused is not timed out for the daemon's own pause; and
 * the small things: TOOBIG names the real frame size, a missing socket
 * directory says so, NOTFOUND for an unknown kernel is documented, and
 * refused connections are logged at a bounded rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/integration/reliability.h"
#include "tests/integration/synth.h"

static const char *const va_f32[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
static const char *const va_512[] = {"D=f32", "BLOCK_SIZE=512", NULL};

/* A compile of vector_add with bindings b over c (filename may be NULL):
 * its status; its key into key (65 bytes) when it succeeds. */
static int va_key(tclient *c, const char *const *b, const char *filename,
                  char *key, int timeout_ms) {
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  if (!src)
    return -1;
  tc_compile t;
  tc_compile_init(&t, src, n, "vector_add", b);
  t.req.u.compile.req.filename = filename;
  teeny_msg_reply rep;
  int rc = tc_call_timeout(c, &t.req, &rep, timeout_ms);
  if (!rc) {
    if (!rep.status && key)
      memcpy(key, rep.u.compile.art.key, 65);
    rc = rep.status;
    teeny_msg_reply_free(&rep);
  }
  free(src);
  return rc;
}

/* One op (no fields but the ones set in req) within timeout_ms: its status
 * (a transport error when no reply came); rep kept when out is non-NULL. */
static int op_within(tclient *c, teeny_msg_request *req, int timeout_ms,
                     teeny_msg_reply *out) {
  teeny_msg_reply rep;
  int rc = tc_call_timeout(c, req, &rep, timeout_ms);
  if (rc)
    return rc;
  rc = rep.status;
  if (out)
    *out = rep;
  else
    teeny_msg_reply_free(&rep);
  return rc;
}

/* ---- a FIFO in the store ------------------------------------------------------- */

static int plant_fifo(const tdaemon *d, const char *key) {
  char path[512];
  if (rel_object_path(d->cache, key, "o", path, sizeof path))
    return -1;
  return unlink(path) || mkfifo(path, 0640) ? -1 : 0;
}

/* verify, show --ptx, stats and a disk lookup of the entry whose .o is a
 * FIFO: each answered (within 15 s, where opening the FIFO would block
 * for ever), the FIFO reported as not a regular file. */
static int fifo_requests(const tdaemon *d, const char *key) {
  tclient c;
  tc_init(&c);
  int bad = 0;
  if (tc_open(&c, d->sock))
    return 1;
  teeny_msg_request req;
  teeny_msg_reply rep;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_VERIFY;
  int st = op_within(&c, &req, 15000, &rep);
  bool reported = false;
  for (size_t i = 0; !st && i < rep.u.verify.nproblems; i++)
    reported |= strcmp(rep.u.verify.problems[i].key, key) == 0 &&
                strstr(rep.u.verify.problems[i].problem, "not-regular");
  if (!st)
    teeny_msg_reply_free(&rep);
  if (st || !reported)
    bad++, fprintf(stderr, "verify with a FIFO: status %d, reported %d\n", st,
                   reported);
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_SHOW;
  req.u.show.key = key;
  req.u.show.emit = TEENY_MSG_EMIT_PTX;
  st = op_within(&c, &req, 15000, NULL);
  if (st != TEENY_E_CORRUPT)
    bad++, fprintf(stderr, "show --ptx of the FIFO entry: %d\n", st);
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_STATS;
  if ((st = op_within(&c, &req, 15000, NULL)))
    bad++, fprintf(stderr, "stats after the FIFO: %d\n", st);
  /* another file name: a disk lookup, which finds the damage and
   * compiles the entry afresh */
  char k2[65] = "";
  if ((st = va_key(&c, va_f32, "other.c", k2, 15000)) || strcmp(k2, key))
    bad++, fprintf(stderr, "disk lookup of the FIFO entry: %d\n", st);
  tc_close(&c);
  return bad;
}

int it_store_fifo(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char k1[65], k2[65];
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--workers", "2", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_key(&c, va_f32, NULL, k1, 60000), ==, 0);
  CHECK_INT(va_key(&c, va_512, NULL, k2, 60000), ==, 0);
  CHECK(plant_fifo(&d, k1) == 0);
  CHECK_INT(fifo_requests(&d, k1), ==, 0);
  /* kill -9 with a FIFO in the store: startup recovery must not block */
  CHECK(plant_fifo(&d, k2) == 0);
  tc_close(&c);
  td_kill(&d);
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0 && tc_ping(&c) == 0);
  CHECK_INT(tc_verify(&c, false), ==, 0); /* recovery removed it */
  char path[512];
  CHECK(rel_object_path(d.cache, k2, "o", path, sizeof path) != 0);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the successor's socket ------------------------------------------------------- */

/* Daemon A drains a compile after SIGTERM; daemon B (another store) takes
 * the socket path meanwhile; A's exit must leave B's socket in place. */
int it_socket_successor(void) {
  tdaemon a, b;
  tclient c;
  bool failed = true;
  teeny_msg_reply rep;
  tc_init(&c);
  memset(&b, 0, sizeof b);
  CHECK(td_init(&a) == 0);
  CHECK(td_init(&b) == 0);
  snprintf(b.sock, sizeof b.sock, "%s", a.sock);
  const char *args[] = {"--shutdown-timeout", "60s", NULL};
  CHECK(td_start(&a, args, NULL) == 0);
  CHECK(tc_open(&c, a.sock) == 0);
  CHECK(it_send_slow(&c, 400, 1, 8192, 7) == 0);
  usleep(200000); /* the compile runs */
  kill(a.pid, SIGTERM);
  CHECK(it_stopped_listening(a.sock, 10000));
  CHECK(td_start(&b, NULL, NULL) == 0);
  CHECK_INT(tc_recv(&c, TEENY_OP_COMPILE, &rep, 60000), ==, 0);
  CHECK_INT(rep.status, ==, 0);
  teeny_msg_reply_free(&rep);
  int st = td_wait(a.pid, 30000);
  CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  a.pid = 0;
  tc_close(&c);
  CHECK(access(b.sock, F_OK) == 0);
  CHECK(tc_open(&c, b.sock) == 0 && tc_ping(&c) == 0);
  char *log = tc_read_file(a.log, NULL);
  CHECK(log && strstr(log, "not ours"));
  free(log);
  failed = false;
fail:
  tc_close(&c);
  failed = td_fini(&b, failed);
  return td_fini(&a, failed) ? IT_FAIL : IT_PASS;
}

/* ---- temp files of dead puts -------------------------------------------------------- */

static pid_t dead_pid(void) {
  pid_t p = fork();
  if (p == 0)
    _exit(0);
  waitpid(p, NULL, 0);
  return p;
}

static int plant_tmp(const tdaemon *d, const char *name, long age_s) {
  char path[512];
  snprintf(path, sizeof path, "%s/tmp/%s", d->cache, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
  if (fd < 0 || write(fd, "partial", 7) != 7)
    return -1;
  close(fd);
  struct timeval tv[2];
  gettimeofday(&tv[0], NULL);
  tv[0].tv_sec -= age_s;
  tv[1] = tv[0];
  return utimes(path, tv);
}

static bool tmp_exists(const tdaemon *d, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/tmp/%s", d->cache, name);
  return access(path, F_OK) == 0;
}

int it_tmp_cleanup(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char dead1[128], dead2[128], live[128];
  const char *old = "ab.o.0123456789abcdef.tmp"; /* no pid, 2 h old */
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_key(&c, va_f32, NULL, NULL, 60000), ==, 0);
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  snprintf(dead1, sizeof dead1, "ab.o.%d-0123456789abcdef.tmp", (int)dead_pid());
  snprintf(live, sizeof live, "ab.c.%d-0123456789abcdef.tmp", (int)getpid());
  CHECK(plant_tmp(&d, dead1, 0) == 0);
  CHECK(plant_tmp(&d, old, 7200) == 0);
  CHECK(plant_tmp(&d, live, 0) == 0);
  /* a clean start: the dead writer's and the old file go, the live
   * writer's stays */
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0 && tc_ping(&c) == 0);
  CHECK(!tmp_exists(&d, dead1));
  CHECK(!tmp_exists(&d, old));
  CHECK(tmp_exists(&d, live));
  /* after kill -9 too */
  snprintf(dead2, sizeof dead2, "cd.mlir.%d-fedcba9876543210.tmp",
           (int)dead_pid());
  CHECK(plant_tmp(&d, dead2, 0) == 0);
  tc_close(&c);
  td_kill(&d);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(!tmp_exists(&d, dead2));
  CHECK(tmp_exists(&d, live));
  CHECK(it_count_in_file(d.log, "stale temp file") >= 2);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- past --shutdown-timeout -------------------------------------------------------- */

/* A running compile and a queued one when the deadline passes: both
 * waiters get a SHUTDOWN reply before their connection closes. */
int it_shutdown_reply(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  int got = 0, shut = 0;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--shutdown-timeout", "1s", "--workers", "1", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK(it_send_slow(&c, 400, 2, 16384, 21) == 0);
  CHECK(it_send_slow(&c, 400, 3, 16384, 22) == 0);
  usleep(300000); /* the first compile runs */
  kill(d.pid, SIGTERM);
  for (;;) {
    teeny_msg_reply rep;
    if (tc_recv(&c, TEENY_OP_COMPILE, &rep, 20000))
      break;
    got++;
    shut += rep.status == TEENY_E_SHUTDOWN;
    teeny_msg_reply_free(&rep);
  }
  if (got != 2 || shut != 2)
    fprintf(stderr, "past the deadline: %d replies, %d SHUTDOWN\n", got, shut);
  CHECK_INT(got, ==, 2);
  CHECK_INT(shut, ==, 2);
  int st = td_wait(d.pid, 20000);
  CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  d.pid = 0;
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a reader the daemon paused ----------------------------------------------------- */

#define PAUSED_N 1800 /* ~12 KB replies: more than the 16 MiB pause mark */

typedef struct writer_arg {
  tclient *c;
  const char *src;
  size_t n;
  int sent;
} writer_arg;

/* The requests go out as one byte stream written in 50 000-byte pieces,
 * so that the daemon's reads end inside frames (as a buffered writer's
 * would). */
static void *pipeline_writer(void *p) {
  writer_arg *w = p;
  tc_compile t;
  teeny_buf b;
  teeny__buf_init(&b);
  for (int i = 0; i < PAUSED_N; i++) {
    tc_compile_init(&t, w->src, w->n, "vector_add", va_f32);
    t.req.u.compile.emit =
        TEENY_MSG_EMIT_PTX | TEENY_MSG_EMIT_MLIR | TEENY_MSG_EMIT_SOURCE;
    t.req.id = (uint64_t)i + 1;
    size_t at = teeny_frame_begin(&b);
    if (teeny_msg_request_encode(&t.req, &b) || teeny_frame_end(&b, at, 0))
      break;
    w->sent++;
  }
  for (size_t off = 0; off < b.len; off += 50000)
    if (tc_send_raw(w->c, b.p + off, b.len - off < 50000 ? b.len - off : 50000))
      break;
  teeny__buf_free(&b);
  return NULL;
}

/* Read replies slowly (about 5 MB/s): the daemon pauses reading this
 * connection when 16 MiB of replies are pending, and for longer than the
 * read timeout each time; the pause is the daemon's, so the partial frame
 * it leaves unread must not count against the peer. */
static int slow_reader(tclient *c, int want) {
  teeny_frame_reader rd;
  teeny_frame_reader_init(&rd, 0);
  static char buf[64 * 1024];
  int got = 0, bad = 0;
  while (got < want) {
    struct pollfd pfd = {c->fd, POLLIN, 0};
    if (poll(&pfd, 1, 20000) <= 0)
      break;
    ssize_t r = read(c->fd, buf, sizeof buf);
    if (r <= 0)
      break;
    teeny_frame_reader_feed(&rd, buf, (size_t)r);
    const char *p;
    size_t n;
    while (teeny_frame_reader_next(&rd, &p, &n) == 1) {
      teeny_msg_reply rep;
      char err[TEENY_PROTO_ERR_LEN];
      if (teeny_msg_reply_decode(p, n, TEENY_OP_COMPILE, &rep, err) ||
          rep.status)
        bad++;
      got++;
      teeny_msg_reply_free(&rep);
    }
    usleep(12000);
  }
  teeny_frame_reader_free(&rd);
  if (bad)
    fprintf(stderr, "slow reader: %d bad replies\n", bad);
  return bad ? -1 : got;
}

int it_paused_reader(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  pthread_t th;
  bool writing = false;
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  writer_arg w = {&c, src, n, 0};
  tc_init(&c);
  CHECK(src != NULL);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--read-timeout", "1s", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  teeny_msg_reply rep; /* the same request, so that the rest are hits */
  CHECK_INT(it_compile(&c, src, n, "vector_add", va_f32, 0,
                       TEENY_MSG_EMIT_PTX | TEENY_MSG_EMIT_MLIR |
                           TEENY_MSG_EMIT_SOURCE,
                       &rep), ==, 0);
  CHECK_INT(tc_reply_status(&rep, NULL, 0), ==, 0);
  CHECK(pthread_create(&th, NULL, pipeline_writer, &w) == 0);
  writing = true;
  int got = slow_reader(&c, PAUSED_N);
  pthread_join(th, NULL);
  writing = false;
  if (got != PAUSED_N)
    fprintf(stderr, "paused reader: %d of %d replies (%d sent)\n", got,
            PAUSED_N, w.sent);
  CHECK_INT(got, ==, PAUSED_N);
  CHECK_INT(it_count_in_file(d.log, "frame incomplete"), ==, 0);
  failed = false;
fail:
  if (writing) {
    shutdown(c.fd, SHUT_RDWR);
    pthread_join(th, NULL);
  }
  tc_close(&c);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the small things ------------------------------------------------------------------ */

int it_toobig_size(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  teeny_msg_reply rep;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_connect(&c, d.sock) == 0);
  CHECK(tc_send_raw(&c, "\x01\x00\x00\x01", 4) == 0); /* 16 MiB + 1 */
  CHECK_INT(tc_recv(&c, TEENY_OP_NONE, &rep, 10000), ==, 0);
  CHECK_INT(rep.status, ==, TEENY_E_TOOBIG);
  bool named = rep.error && strstr(rep.error, "frame of 16777217 bytes");
  if (!named)
    fprintf(stderr, "TOOBIG says: %s\n", rep.error ? rep.error : "(nothing)");
  teeny_msg_reply_free(&rep);
  CHECK(named);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

int it_socket_parent(void) {
  tdaemon d;
  bool failed = true;
  char *log = NULL;
  CHECK(td_init(&d) == 0);
  snprintf(d.sock, sizeof d.sock, "%s/no/such/s.sock", d.dir);
  pid_t pid = td_spawn(&d, NULL, NULL, -1);
  int st = td_wait(pid, 20000);
  d.pid = st == -1 ? pid : 0;
  CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
  log = tc_read_file(d.log, NULL);
  bool says = log && strstr(log, "/no: no such directory");
  if (!says)
    fprintf(stderr, "log:\n%s\n", log ? log : "(none)");
  CHECK(says);
  failed = false;
fail:
  free(log);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

int it_unknown_kernel(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char path[1024], *doc = NULL;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  CHECK(src != NULL);
  teeny_msg_reply rep;
  int rc = it_compile(&c, src, n, "no_such_kernel", va_f32, 0, 0, &rep);
  free(src);
  CHECK_INT(rc, ==, 0);
  CHECK_INT(rep.status, ==, TEENY_E_NOTFOUND);
  teeny_msg_reply_free(&rep);
  /* and PROTOCOL.md says so, in the table of codes */
  const char *dir = getenv("TEENY_SOURCE_DIR");
  snprintf(path, sizeof path, "%s/proto/PROTOCOL.md", dir ? dir : ".");
  CHECK((doc = tc_read_file(path, NULL)) != NULL);
  CHECK(strstr(doc, "| −8 | NOTFOUND | `compile`: the source has no "
                    "`TEENY_KERNEL` function of that name;"));
  failed = false;
fail:
  free(doc);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* 200 connections over --max-connections 4: a handful of log lines. */
int it_refused_log(void) {
  tdaemon d;
  bool failed = true;
  tclient held[4], extra;
  for (int i = 0; i < 4; i++)
    tc_init(&held[i]);
  tc_init(&extra);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--max-connections", "4", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  for (int i = 0; i < 4; i++)
    CHECK(tc_open(&held[i], d.sock) == 0);
  int refused = 0;
  for (int i = 0; i < 200; i++) {
    if (tc_connect(&extra, d.sock))
      continue;
    teeny_msg_reply rep;
    if (tc_recv(&extra, TEENY_OP_NONE, &rep, 5000) == 0) {
      refused += rep.status == TEENY_E_BUSY;
      teeny_msg_reply_free(&rep);
    }
    tc_close(&extra);
  }
  CHECK_INT(refused, ==, 200);
  CHECK(tc_ping(&held[0]) == 0);
  int lines = it_count_in_file(d.log, "refusing");
  if (lines > 5)
    fprintf(stderr, "%d log lines for 200 refused connections\n", lines);
  CHECK(lines >= 1 && lines <= 5);
  /* what was not logged is summed up within a few seconds */
  bool summed = false;
  for (int i = 0; i < 100 && !summed; i++) {
    summed = it_count_in_file(d.log, "refused connection(s) not logged") > 0;
    if (!summed)
      usleep(50000);
  }
  CHECK(summed);
  failed = false;
fail:
  for (int i = 0; i < 4; i++)
    tc_close(&held[i]);
  tc_close(&extra);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a damaged index ------------------------------------------------------------ */

static int scribble(const tdaemon *d, long off, long len) {
  char path[512];
  snprintf(path, sizeof path, "%s/index.db", d->cache);
  int fd = open(path, O_WRONLY);
  if (fd < 0)
    return -1;
  char junk[4096];
  memset(junk, 0xa5, sizeof junk);
  for (long done = 0; done < len;) {
    size_t n = len - done < (long)sizeof junk ? (size_t)(len - done) : sizeof junk;
    if (pwrite(fd, junk, n, off + done) != (ssize_t)n) {
      close(fd);
      return -1;
    }
    done += (long)n;
  }
  return close(fd);
}

static long index_size(const tdaemon *d) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/index.db", d->cache);
  return stat(path, &st) ? -1 : (long)st.st_size;
}

static int damaged_copies(const tdaemon *d) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '^index.db.damaged-[0-9]*-[0-9]*$'",
           d->cache);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p && fscanf(p, "%d", &n) != 1)
    n = -1;
  if (p)
    pclose(p);
  return n;
}

static const char *const heal_bs[] = {"BLOCK_SIZE=256", "BLOCK_SIZE=512",
                                      "BLOCK_SIZE=1024"};

/* The three entries answer from the store (another file name: not the
 * memory map) with the keys they had. */
static int heal_entries_back(const tdaemon *d, char keys[3][65]) {
  tclient c;
  tc_init(&c);
  int bad = tc_open(&c, d->sock) ? 10 : 0;
  for (int i = 0; !bad && i < 3; i++) {
    const char *b[] = {"D=f32", heal_bs[i], NULL};
    size_t n;
    char *src = tc_kernel_source("vector_add", &n);
    tc_compile t;
    tc_compile_init(&t, src, n, "vector_add", b);
    t.req.u.compile.req.filename = "elsewhere.c";
    teeny_msg_reply rep;
    if (tc_call(&c, &t.req, &rep) || rep.status ||
        rep.u.compile.cache != TEENY_CACHE_DISK ||
        strcmp(rep.u.compile.art.key, keys[i]) != 0)
      bad++, fprintf(stderr, "entry %d after the rebuild: status %d, %s\n", i,
                     rep.status, it_cache_name(rep.u.compile.cache));
    teeny_msg_reply_free(&rep);
    free(src);
  }
  tc_close(&c);
  return bad;
}

int it_index_heal(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char keys[3][65];
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  for (int i = 0; i < 3; i++) {
    const char *b[] = {"D=f32", heal_bs[i], NULL};
    CHECK_INT(va_key(&c, b, NULL, keys[i], 60000), ==, 0);
  }
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  /* a garbage header: SQLite says "file is not a database" at open */
  CHECK(scribble(&d, 0, 100) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(rel_counter(d.sock, "index_rebuilds"), ==, 1);
  CHECK_INT(rel_counter(d.sock, "entries"), ==, 3);
  CHECK_INT(heal_entries_back(&d, keys), ==, 0);
  CHECK_INT(tc_verify_at(d.sock, false), ==, 0);
  CHECK_INT(damaged_copies(&d), ==, 1);
  CHECK_INT(td_stop(&d), ==, 0);
  /* garbage pages behind a good header: found by the first lookup while
   * serving, and rebuilt then */
  long size = index_size(&d);
  CHECK(size > 8192);
  CHECK(scribble(&d, 4096, size - 4096) == 0);
  sleep(1); /* another second in the moved-aside name */
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_key(&c, va_f32, "first.c", NULL, 60000), ==, 0);
  bool rebuilt = false;
  for (int i = 0; i < 200 && !rebuilt; i++) {
    rebuilt = rel_counter(d.sock, "index_rebuilds") == 1;
    if (!rebuilt)
      usleep(50000);
  }
  CHECK(rebuilt);
  CHECK_INT(rel_counter(d.sock, "entries"), ==, 3);
  CHECK_INT(heal_entries_back(&d, keys), ==, 0);
  CHECK_INT(tc_verify(&c, true), ==, 0);
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  teeny_msg_reply rep;
  CHECK(tc_call(&c, &req, &rep) == 0);
  size_t listed = rep.status ? 0 : rep.u.list.nentries;
  teeny_msg_reply_free(&rep);
  CHECK_INT(listed, ==, 3);
  CHECK_INT(damaged_copies(&d), ==, 2);
  CHECK(it_count_in_file(d.log, "index.db was damaged") == 2);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- paged lists ---------------------------------------------------------------- */

#define NSYNTH 42000 /* with 300-byte ids an unpaged list of them is ~20 MB:
                        over a frame */

/* teenyctl with args (a shell fragment): exit status; its stdout in *out. */
static int teenyctl(const tdaemon *d, const char *args, char **out) {
  char cmd[1024], path[256];
  const char *bin = getenv("TEENYCTL_BIN");
  snprintf(path, sizeof path, "%s/ctl.out", d->dir);
  snprintf(cmd, sizeof cmd, "'%s' --socket '%s' %s > '%s' 2>&1",
           bin ? bin : "teenyctl", d->sock, args, path);
  int st = system(cmd);
  *out = tc_read_file(path, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Occurrences of needle in s.  memmem with lengths: under ASan strstr
 * checks the whole rest of the string at every call (quadratic here). */
static int count_lines_with(const char *s, const char *needle) {
  int n = 0;
  size_t nl = strlen(needle);
  const char *end = s ? s + strlen(s) : NULL;
  for (const char *p = s; p && (p = memmem(p, (size_t)(end - p), needle, nl));
       p += nl)
    n++;
  return n;
}

/* Two pages over the protocol: full pages, a cursor, no overlap, in order. */
static int two_pages(tclient *c) {
  teeny_msg_request req;
  teeny_msg_reply p1, p2;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  req.u.list.sort = TEENY_SORT_SIZE;
  if (tc_call(c, &req, &p1) || p1.status)
    return 1;
  char after[TEENY_PROTO_MAX_CURSOR + 1] = "";
  if (p1.u.list.next)
    snprintf(after, sizeof after, "%s", p1.u.list.next);
  req.u.list.after = after;
  int bad = tc_call(c, &req, &p2) || p2.status ? 2 : 0;
  size_t n1 = p1.u.list.nentries, n2 = bad ? 0 : p2.u.list.nentries;
  if (!bad && (n1 != 10000 || n2 != 10000 || !after[0]))
    bad = 3;
  for (size_t i = 1; !bad && i < n1; i++)
    if (p1.u.list.entries[i].size > p1.u.list.entries[i - 1].size)
      bad = 4;
  if (!bad && p2.u.list.entries[0].size > p1.u.list.entries[n1 - 1].size)
    bad = 5;
  for (size_t i = 0; !bad && i < n2; i++)
    if (strcmp(p2.u.list.entries[i].key, p1.u.list.entries[n1 - 1].key) == 0)
      bad = 6;
  if (bad)
    fprintf(stderr, "two pages: problem %d (%zu + %zu entries, next '%s')\n",
            bad, n1, n2, after);
  teeny_msg_reply_free(&p1);
  if (bad != 2)
    teeny_msg_reply_free(&p2);
  return bad;
}

int it_list_paged(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char *out = NULL;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0); /* makes the index */
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(synth_rows(d.cache, "synth", NSYNTH, 300) == 0);
  CHECK(synth_rows(d.cache, "gone", 1000, 0) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(two_pages(&c), ==, 0);
  /* the whole list, page after page */
  CHECK_INT(teenyctl(&d, "list", &out), ==, 0);
  CHECK(out && strstr(out, "43000 entries"));
  CHECK_INT(count_lines_with(out, "synth__"), ==, NSYNTH);
  free(out);
  CHECK_INT(teenyctl(&d, "list --sort hits --limit 20", &out), ==, 0);
  CHECK(out && strstr(out, "\n20 entries"));
  free(out);
  /* purge shows what goes before it goes */
  CHECK_INT(teenyctl(&d, "purge --name gone", &out), ==, 0);
  CHECK(out && strstr(out, "removed 1000 entries"));
  CHECK_INT(count_lines_with(out, "gone__"), ==, 1000);
  CHECK_INT(rel_counter(d.sock, "entries"), ==, NSYNTH);
  failed = false;
fail:
  free(out);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
