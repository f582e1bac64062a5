/*
 * tests/integration/it_reliability.c — teenycd under faults and hostile
 * work (issue 6): the compile time budget (a runaway compile is cancelled,
 * its waiters get TIMEOUT, the worker goes on), a compiler process that
 * crashes or runs out of its memory budget, every hostile kernel of
 * hostile.c through the daemon, a full disk, kill -9 at random points of a
 * compile-and-evict storm, and a bounded run of the load generator.
 * Longer runs of the same code: scripts/soak (docs/reliability.md).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#include "tests/integration/hostile.h"
#include "tests/integration/itest.h"
#include "tests/integration/reliability.h"
#include "common/common.h"


static const char *const va_f32[] = {"D=f32", "BLOCK_SIZE=1024", NULL};

static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}

/* A compile of hostile case name over a new connection: its status, the
 * error (malloc'ed) and the wall time. */
static int hostile_call(const char *sock, const char *name, char **err,
                        double *secs) {
  const hostile_case *hc = hostile_find(name);
  size_t n;
  char *src = hc->gen(&n);
  tclient c;
  tc_init(&c);
  uint64_t t0 = tc_now_us();
  int rc = tc_open(&c, sock);
  if (!rc) {
    tc_compile t;
    tc_compile_init(&t, src, n, hc->kernel, hc->bindings);
    t.req.u.compile.req.num_warps = hc->num_warps;
    teeny_msg_reply rep;
    rc = tc_call(&c, &t.req, &rep);
    if (!rc) {
      rc = rep.status;
      if (err)
        *err = rep.error ? strdup(rep.error) : NULL;
      teeny_msg_reply_free(&rep);
    }
  }
  *secs = (double)(tc_now_us() - t0) / 1e6;
  tc_close(&c);
  free(src);
  return rc;
}

/* The vector_add example through c: 0 when it compiles. */
static int va_ok(tclient *c) {
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  int rc = src ? rel_compile(c, src, n, "vector_add", va_f32, NULL) : -1;
  free(src);
  return rc;
}

/* ---- the compile time budget ------------------------------------------------- */

typedef struct waiter_arg {
  const char *sock;
  int status;
  double secs;
  char *err;
} waiter_arg;

static void *hostile_waiter(void *p) {
  waiter_arg *w = p;
  w->status = hostile_call(w->sock, "unrolled_max_tile", &w->err, &w->secs);
  return NULL;
}

/* Pings every 20 ms until *stop; the slowest in *max_us. */
typedef struct pinger_arg {
  const char *sock;
  volatile int *stop;
  uint64_t max_us;
  int n, failed;
} pinger_arg;

static void *pinger(void *p) {
  pinger_arg *a = p;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, a->sock)) {
    a->failed++;
    return NULL;
  }
  while (!*a->stop) {
    uint64_t t0 = tc_now_us();
    if (tc_ping(&c)) {
      a->failed++;
      break;
    }
    uint64_t us = tc_now_us() - t0;
    if (us > a->max_us)
      a->max_us = us;
    a->n++;
    usleep(20000);
  }
  tc_close(&c);
  return NULL;
}

int it_compile_timeout(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  waiter_arg w[2];
  pthread_t th[2], pt;
  int started = 0, pinging = 0;
  volatile int stop = 0;
  pinger_arg pa = {NULL, &stop, 0, 0, 0};
  memset(w, 0, sizeof w);
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--compile-timeout", "1s", "--workers", "1", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  pa.sock = d.sock;
  CHECK(pthread_create(&pt, NULL, pinger, &pa) == 0);
  pinging = 1;
  /* two waiters on one runaway compile (the second joins the first) */
  for (; started < 2; started++) {
    w[started].sock = d.sock;
    CHECK(pthread_create(&th[started], NULL, hostile_waiter, &w[started]) ==
          0);
  }
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  started = 0;
  stop = 1;
  pthread_join(pt, NULL);
  pinging = 0;
  for (int i = 0; i < 2; i++) {
    fprintf(stderr, "waiter %d: %s after %.2f s: %s\n", i,
            teeny_err_name(w[i].status), w[i].secs, w[i].err ? w[i].err : "");
    CHECK_INT(w[i].status, ==, TEENY_E_TIMEOUT);
    CHECK(w[i].err && strstr(w[i].err, "--compile-timeout"));
    CHECK(w[i].secs >= 0.9 && w[i].secs < 8.0);
  }
  fprintf(stderr, "%d pings during the runaway compile, slowest %.1f ms\n",
          pa.n, (double)pa.max_us / 1e3);
  CHECK_INT(pa.failed, ==, 0);
  CHECK(pa.n >= 10);
  CHECK(pa.max_us < 250000);
  /* the one worker is free: a normal compile goes through at once */
  CHECK(tc_open(&c, d.sock) == 0);
  uint64_t t0 = tc_now_us();
  CHECK_INT(va_ok(&c), ==, 0);
  fprintf(stderr, "next compile on the same worker: %.0f ms\n",
          (double)(tc_now_us() - t0) / 1e3);
  CHECK(tc_now_us() - t0 < 20000000);
  pid_t kids[16];
  int nkids = rel_children(d.pid, kids, 16);
  CHECK_INT(nkids, <=, 1); /* the killed helper is gone, one new */
  CHECK_INT(rel_counter(d.sock, "compile_timeouts"), ==, 1);
  CHECK_INT(rel_counter(d.sock, "compiles"), ==, 2);
  /* a timeout is not cached: asking again compiles (and times out) again */
  double s;
  CHECK_INT(hostile_call(d.sock, "unrolled_max_tile", NULL, &s), ==,
            TEENY_E_TIMEOUT);
  CHECK_INT(rel_counter(d.sock, "compile_timeouts"), ==, 2);
  failed = false;
fail:
  stop = 1;
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  if (pinging)
    pthread_join(pt, NULL);
  for (int i = 0; i < 2; i++)
    free(w[i].err);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the binary replaced under a running daemon ------------------------------ */

/* cp src dst (mode 0755).  0 or -1. */
static int copy_exe(const char *src, const char *dst) {
  size_t n;
  char *data = tc_read_file(src, &n);
  if (!data)
    return -1;
  FILE *f = fopen(dst, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  ok = f && fclose(f) == 0 && ok;
  free(data);
  return ok && chmod(dst, 0755) == 0 ? 0 : -1;
}

/* An upgrade deletes (or replaces) teenycd's file while it runs: compile
 * processes started afterwards still run the daemon's own compiler. */
int it_binary_replaced(void) {
  const char *bin = getenv("TEENYCD_BIN");
  if (!bin || getenv("TEENY_VALGRIND_TARGET")) {
    fprintf(stderr, "SKIP: needs the real teenycd binary, not a wrapper\n");
    return IT_SKIP;
  }
  tdaemon d;
  tclient c;
  bool failed = true;
  char copy[256], *saved = strdup(bin);
  tc_init(&c);
  CHECK(saved && td_init(&d) == 0);
  snprintf(copy, sizeof copy, "%s/teenycd-copy", d.dir);
  CHECK(copy_exe(bin, copy) == 0);
  setenv("TEENYCD_BIN", copy, 1);
  const char *args[] = {"--workers", "1", NULL};
  int started = td_start(&d, args, NULL);
  setenv("TEENYCD_BIN", saved, 1);
  CHECK(started == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_ok(&c), ==, 0);
  /* the upgrade: the file is gone; and the idle compile process dies */
  CHECK(unlink(copy) == 0);
  pid_t kids[4];
  CHECK_INT(rel_children(d.pid, kids, 4), ==, 1);
  CHECK(kill(kids[0], SIGKILL) == 0);
  usleep(100000);
  /* a cold request needs a new compile process */
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  const char *b2[] = {"D=f16", "BLOCK_SIZE=256", NULL};
  int rc = src ? rel_compile(&c, src, n, "vector_add", b2, NULL) : -1;
  free(src);
  fprintf(stderr, "compile after the binary was deleted: %s\n",
          rc ? teeny_err_name(rc) : "ok");
  CHECK_INT(rc, ==, 0);
  failed = false;
fail:
  free(saved);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a compiler process that dies ----------------------------------------------- */

int it_compiler_crash(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  waiter_arg w;
  pthread_t th;
  int started = 0;
  memset(&w, 0, sizeof w);
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--workers", "1", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  w.sock = d.sock;
  CHECK(pthread_create(&th, NULL, hostile_waiter, &w) == 0);
  started = 1;
  /* the compile step runs in the (one) helper: crash it */
  pid_t kids[4];
  int n = 0;
  for (int i = 0; i < 200 && n == 0; i++) {
    usleep(20000);
    n = rel_children(d.pid, kids, 4);
  }
  CHECK_INT(n, ==, 1);
  usleep(300000);
  /* ASan turns a SIGSEGV into its own report and exit(1); SIGABRT is not
   * intercepted there, so the death by a signal is seen either way */
  const int sig = TEENY_ASAN ? SIGABRT : SIGSEGV;
  char died[64];
  snprintf(died, sizeof died, "compiler process died (signal %d", sig);
  CHECK(kill(kids[0], sig) == 0);
  pthread_join(th, NULL);
  started = 0;
  fprintf(stderr, "crashed compile: %s after %.2f s: %s\n",
          teeny_err_name(w.status), w.secs, w.err ? w.err : "");
  CHECK_INT(w.status, ==, TEENY_E_INTERNAL);
  CHECK(w.err && strstr(w.err, died));
  CHECK(w.secs < 10.0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_ok(&c), ==, 0);
  CHECK_INT(rel_counter(d.sock, "compiler_deaths"), ==, 1);
  /* a helper killed while idle is replaced on the next request */
  n = rel_children(d.pid, kids, 4);
  CHECK_INT(n, ==, 1);
  CHECK(kill(kids[0], SIGKILL) == 0);
  usleep(100000);
  const char *b2[] = {"D=f16", "BLOCK_SIZE=512", NULL};
  size_t len;
  char *src = tc_kernel_source("vector_add", &len);
  CHECK(src != NULL);
  int rc = rel_compile(&c, src, len, "vector_add", b2, NULL);
  free(src);
  CHECK_INT(rc, ==, 0);
  failed = false;
fail:
  if (started)
    pthread_join(th, NULL);
  free(w.err);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the memory budget ---------------------------------------------------------- */

int it_compile_memory(void) {
  if (TEENY_ASAN) {
    fprintf(stderr, "SKIP: an ASan build does not limit its compile "
                    "processes' address space\n");
    return IT_SKIP;
  }
  tdaemon d;
  tclient c;
  bool failed = true;
  char *err = NULL;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--compile-memory", "400M", "--compile-timeout",
                        "120s", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  double s;
  int rc = hostile_call(d.sock, "unrolled_max_tile", &err, &s);
  fprintf(stderr, "over the memory budget: %s after %.2f s: %s\n",
          teeny_err_name(rc), s, err ? err : "");
  CHECK_INT(rc, ==, TEENY_E_LIMIT);
  CHECK(err && strstr(err, "memory budget"));
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_ok(&c), ==, 0);
  failed = false;
fail:
  free(err);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- hostile kernels through the daemon ------------------------------------------ */

int it_hostile_kernels(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  int timeouts = 0;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  /* the budget must leave the front end's worst case (0.6 s) room to
   * answer on a loaded CI machine (it failed at 2 s while another build ran)
   * and in a sanitizer build (about 5x slower) */
  const char *budget = TEENY_ASAN ? "8s" : "5s";
  const char *args[] = {"--compile-timeout", budget, "--log-level", "info",
                        NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  long rss0 = rel_status_kb(d.pid, "VmRSS");
  for (size_t i = 0; i < hostile_ncases; i++) {
    const hostile_case *hc = &hostile_cases[i];
    size_t n;
    char *src = hc->gen(&n), *frame = NULL;
    size_t flen;
    teeny_msg_reply rep;
    memset(&rep, 0, sizeof rep);
    CHECK(src && hostile_frame(hc, src, n, 42, &frame, &flen) == 0);
    free(src);
    uint64_t t0 = tc_now_us();
    int rc = tc_open(&c, d.sock);
    if (!rc)
      rc = tc_send_raw(&c, frame, flen) ? TEENY_E_IO : 0;
    free(frame);
    if (!rc)
      rc = tc_recv(&c, TEENY_OP_COMPILE, &rep, 120000);
    double secs = (double)(tc_now_us() - t0) / 1e6;
    int st = rc ? rc : rep.status;
    fprintf(stderr, "%-18s %-11s %6.2f s  %.70s\n", hc->name,
            st ? teeny_err_name(st) : "ok", secs,
            rep.error ? rep.error : "");
    bool ok = st == hc->want_daemon &&
              (!st || !hc->want_msg || (rep.error && strstr(rep.error,
                                                            hc->want_msg)));
    teeny_msg_reply_free(&rep);
    CHECK(ok);
    timeouts += st == TEENY_E_TIMEOUT;
    CHECK(secs < (st == TEENY_E_TIMEOUT ? 8.0 : 0.0) + 30.0);
    CHECK_INT(tc_ping(&c), ==, 0);
    tc_close(&c);
  }
  long hwm = rel_status_kb(d.pid, "VmHWM");
  fprintf(stderr, "daemon VmRSS %ld KiB at start, peak %ld KiB\n", rss0, hwm);
  /* no kernel source is parsed in the daemon: its memory does not grow
   * with what clients send (1 MiB requests: a few buffers) */
  if (!TEENY_ASAN)
    CHECK(hwm < rss0 + 64 * 1024);
  CHECK_INT(rel_counter(d.sock, "compile_timeouts"), ==, timeouts);
  CHECK(timeouts >= 3);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a full disk ----------------------------------------------------------------- */

/* "slow" with lines statements: a distinct source per line count, each
 * with tens of KB of artifacts. */
static int slow_call(tclient *c, int lines, char *key, bool *warned,
                     char **ptx, size_t *ptx_len) {
  size_t n;
  char *src = it_slow_kernel(lines, &n);
  const char *b[] = {"D=f32", "BLOCK_SIZE=256", NULL};
  tc_compile t;
  tc_compile_init(&t, src, n, "slow", b);
  teeny_msg_reply rep;
  int rc = tc_call(c, &t.req, &rep);
  free(src);
  if (rc)
    return rc;
  rc = rep.status;
  *warned = false;
  for (size_t i = 0; i < rep.ndiags; i++)
    *warned |= rep.diags[i].level == TEENY_DIAG_WARNING &&
               strstr(rep.diags[i].message, "not cached") != NULL;
  if (!rc) {
    memcpy(key, rep.u.compile.art.key, 65);
    if (ptx) {
      *ptx = malloc(rep.u.compile.art.ptx_len);
      memcpy(*ptx, rep.u.compile.art.ptx, rep.u.compile.art.ptx_len);
      *ptx_len = rep.u.compile.art.ptx_len;
    }
  }
  teeny_msg_reply_free(&rep);
  return rc;
}

/* The PTX of "slow" with lines statements, compiled in this process. */
static char *slow_fresh(int lines, size_t *len) {
  size_t n;
  char *src = it_slow_kernel(lines, &n);
  const char *b[] = {"D=f32", "BLOCK_SIZE=256", NULL};
  tc_compile t;
  tc_compile_init(&t, src, n, "slow", b);
  teeny_artifact *a = NULL;
  char *ptx = NULL;
  if (!teeny_compile(&t.req.u.compile.req, TEENY_EMIT_PTX, &a, NULL)) {
    ptx = malloc(a->ptx_len);
    memcpy(ptx, a->ptx, a->ptx_len);
    *len = a->ptx_len;
  }
  teeny_artifact_destroy(a);
  free(src);
  return ptx;
}

/* Every listed entry's PTX against a fresh compile of slow(lines) for
 * lines in [lo, hi): how many matched, -1 on a mismatch. */
static int entries_fresh(tclient *c, int lo, int hi) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  teeny_msg_reply list;
  if (tc_call(c, &req, &list) || list.status)
    return -1;
  int matched = 0;
  for (size_t i = 0; i < list.u.list.nentries && matched >= 0; i++) {
    const char *key = list.u.list.entries[i].key;
    memset(&req, 0, sizeof req);
    req.op = TEENY_OP_SHOW;
    req.u.show.key = key;
    req.u.show.emit = TEENY_MSG_EMIT_PTX | TEENY_MSG_EMIT_SOURCE;
    teeny_msg_reply rep;
    if (tc_call(c, &req, &rep) || rep.status) {
      matched = -1;
      break;
    }
    /* which line count: count the statements in the stored source */
    int lines = 0;
    const char *p = rep.u.show.source, *end = p + rep.u.show.source_len;
    while (p && (p = memmem(p, (size_t)(end - p), "acc * x", 7)))
      lines++, p += 7;
    size_t flen = 0;
    char *fresh = lines >= lo && lines < hi ? slow_fresh(lines, &flen) : NULL;
    if (!fresh || flen != rep.u.show.ptx_len ||
        memcmp(fresh, rep.u.show.ptx, flen) != 0) {
      fprintf(stderr, "entry %s (%d lines) differs from a fresh compile\n",
              key, lines);
      matched = -1;
    } else {
      matched++;
    }
    free(fresh);
    teeny_msg_reply_free(&rep);
  }
  teeny_msg_reply_free(&list);
  return matched;
}

int it_disk_full(void) {
  tdaemon d;
  tclient c;
  bool failed = true, mounted = false;
  tc_init(&c);
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: mounting a tmpfs needs root\n");
    return IT_SKIP;
  }
  CHECK(td_init(&d) == 0);
  CHECK(mkdir(d.cache, 0755) == 0);
  if (mount("tmpfs", d.cache, "tmpfs", 0, "size=2m")) {
    fprintf(stderr, "SKIP: cannot mount a tmpfs here: %s\n", strerror(errno));
    td_fini(&d, false);
    return IT_SKIP;
  }
  mounted = true;
  const char *args[] = {"--max-size", "0", "--log-level", "info", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  int stored = 0, warned_n = 0, i;
  /* fill the 2 MiB: every compile is still answered, with the right PTX;
   * once the disk is full each answer carries a "not cached" warning */
  for (i = 0; i < 120 && warned_n < 5; i++) {
    char key[65];
    bool warned;
    char *ptx = NULL;
    size_t plen = 0, flen = 0;
    CHECK_INT(slow_call(&c, 10 + i, key, &warned, &ptx, &plen), ==, 0);
    char *fresh = slow_fresh(10 + i, &flen);
    bool same = fresh && flen == plen && memcmp(fresh, ptx, plen) == 0;
    free(fresh);
    free(ptx);
    CHECK(same);
    warned_n += warned;
    stored += !warned;
  }
  fprintf(stderr, "disk full after %d stored entries (%d compiles, %d not "
                  "cached)\n",
          stored, i, warned_n);
  CHECK(warned_n >= 5);
  /* the store is consistent and every entry it has is right */
  CHECK_INT(tc_verify(&c, false), ==, 0);
  int matched = entries_fresh(&c, 10, 10 + i);
  fprintf(stderr, "%d stored entries match a fresh compile\n", matched);
  CHECK(matched >= 1);
  CHECK_INT(rel_counter(d.sock, "entries"), ==, matched);
  /* a restart on the full disk recovers nothing wrong either */
  tc_close(&c);
  td_kill(&d);
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(tc_verify(&c, false), ==, 0);
  /* room again: new compiles are stored */
  CHECK(mount("tmpfs", d.cache, "tmpfs", MS_REMOUNT, "size=16m") == 0);
  char key[65];
  bool warned = true;
  CHECK_INT(slow_call(&c, 9, key, &warned, NULL, NULL), ==, 0);
  CHECK(!warned);
  CHECK_INT(tc_verify(&c, false), ==, 0);
  failed = false;
fail:
  tc_close(&c);
  if (d.pid > 0 && td_stop(&d) != 0)
    failed = true;
  if (mounted && umount2(d.cache, MNT_DETACH))
    fprintf(stderr, "cannot unmount %s\n", d.cache);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- kill -9 during a compile-and-evict storm -------------------------------------- */

/* The storm's requests: vector_add and softmax variants; references
 * computed once in this process. */
typedef struct storm_ref {
  const char *file, *kernel;
  const char *b[3];
  int warps;
  char *src;
  size_t len;
  char key[65];
  char *ptx;
  size_t ptx_len;
} storm_ref;

#define NSTORM_REFS 36
static storm_ref storm_refs[NSTORM_REFS];

static int storm_prepare(void) {
  static const char *const dts[] = {"D=f32", "D=f16", "D=bf16"};
  static const char *const bss[] = {"BLOCK_SIZE=256", "BLOCK_SIZE=1024",
                                    "BLOCK_SIZE=2048"};
  static const int warps[] = {4, 8};
  static const char *const files[] = {"vector_add", "softmax"};
  int k = 0;
  for (int f = 0; f < 2; f++)
    for (int dt = 0; dt < 3; dt++)
      for (int bs = 0; bs < 3; bs++)
        for (int w = 0; w < 2; w++, k++) {
          storm_ref *r = &storm_refs[k];
          r->file = r->kernel = files[f];
          r->b[0] = dts[dt];
          r->b[1] = bss[bs];
          r->b[2] = NULL;
          r->warps = warps[w];
          if (!(r->src = tc_kernel_source(r->file, &r->len)))
            return -1;
          tc_compile t;
          tc_compile_init(&t, r->src, r->len, r->kernel, r->b);
          t.req.u.compile.req.num_warps = r->warps;
          teeny_artifact *a = NULL;
          if (teeny_compile(&t.req.u.compile.req, TEENY_EMIT_PTX, &a, NULL))
            return -1;
          memcpy(r->key, a->key, 65);
          r->ptx = malloc(a->ptx_len);
          memcpy(r->ptx, a->ptx, a->ptx_len);
          r->ptx_len = a->ptx_len;
          teeny_artifact_destroy(a);
        }
  return 0;
}

static void storm_free(void) {
  for (int i = 0; i < NSTORM_REFS; i++) {
    free(storm_refs[i].src);
    free(storm_refs[i].ptx);
    memset(&storm_refs[i], 0, sizeof storm_refs[i]);
  }
}

typedef struct stormer {
  const char *sock;
  unsigned seed;
  int sent;     /* requests sent */
  int answered; /* replies read before the kill */
} stormer;

/* Until the daemon dies: pipeline a batch of storm requests in a random
 * order (half of them forced, so compiles and puts never stop), with a
 * purge to a small size now and then, and read the batch's replies. */
static void *stormer_main(void *p) {
  stormer *s = p;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, s->sock))
    return NULL;
  unsigned rng = s->seed;
  for (;;) {
    int batch = 0;
    for (int i = 0; i < 12; i++) {
      rng = rng * 1103515245u + 12345u;
      const storm_ref *r = &storm_refs[(rng >> 8) % NSTORM_REFS];
      tc_compile t;
      tc_compile_init(&t, r->src, r->len, r->kernel, r->b);
      t.req.u.compile.req.num_warps = r->warps;
      t.req.u.compile.flags = (rng >> 20) % 2 == 0 ? TEENY_MSG_FORCE : 0;
      if (tc_send(&c, &t.req))
        goto done;
      batch++;
      if ((rng >> 24) % 16 == 0) {
        teeny_msg_request pr;
        memset(&pr, 0, sizeof pr);
        pr.op = TEENY_OP_PURGE;
        pr.u.purge.has_to_size = true;
        pr.u.purge.to_size = 60000;
        if (tc_send(&c, &pr))
          goto done;
        batch++;
      }
    }
    s->sent += batch;
    for (int i = 0; i < batch; i++) {
      teeny_msg_reply rep;
      if (tc_recv(&c, TEENY_OP_NONE, &rep, 30000))
        goto done;
      s->answered++;
      teeny_msg_reply_free(&rep);
    }
  }
done:
  tc_close(&c);
  return NULL;
}

/* After a restart: verify clean, every entry equal to its reference.
 * Entries checked, or -1. */
static int storm_check(const char *sock) {
  tclient c;
  tc_init(&c);
  if (tc_open(&c, sock))
    return -1;
  int checked = -1;
  if (tc_verify(&c, false) != 0)
    goto done;
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  teeny_msg_reply list;
  if (tc_call(&c, &req, &list) || list.status)
    goto done;
  checked = 0;
  for (size_t i = 0; i < list.u.list.nentries && checked >= 0; i++) {
    const char *key = list.u.list.entries[i].key;
    const storm_ref *ref = NULL;
    for (int k = 0; k < NSTORM_REFS; k++)
      if (strcmp(storm_refs[k].key, key) == 0)
        ref = &storm_refs[k];
    memset(&req, 0, sizeof req);
    req.op = TEENY_OP_SHOW;
    req.u.show.key = key;
    req.u.show.emit = TEENY_MSG_EMIT_PTX;
    teeny_msg_reply rep;
    if (!ref || tc_call(&c, &req, &rep) || rep.status) {
      fprintf(stderr, "entry %s: unknown or unreadable\n", key);
      checked = -1;
      break;
    }
    if (rep.u.show.ptx_len != ref->ptx_len ||
        memcmp(rep.u.show.ptx, ref->ptx, ref->ptx_len) != 0) {
      fprintf(stderr, "entry %s: PTX differs from a fresh compile\n", key);
      checked = -1;
    } else {
      checked++;
    }
    teeny_msg_reply_free(&rep);
  }
  teeny_msg_reply_free(&list);
done:
  tc_close(&c);
  return checked;
}

/* Repairs the startup recovery logged ("store verified ...: N problem(s)"),
 * and how many of each kind ("store: KIND ..."), into kinds. */
static int recovered_problems(const char *log, char *kinds, size_t n,
                              int *broken) {
  static const char *const names[] = {"missing", "not-regular", "size",
                                      "hash",    "bad-row",     "orphan",
                                      "stale-tmp", "counters"};
  int count[8] = {0};
  char *s = tc_read_file(log, NULL);
  int total = 0;
  const char *p = s;
  while (p && (p = strstr(p, "store verified in "))) {
    const char *colon = strstr(p, "ms: ");
    if (colon)
      total += atoi(colon + 4);
    p += 18;
  }
  for (p = s; p && (p = strstr(p, "warn: store: ")); p += 13)
    for (int k = 0; k < 8; k++)
      if (strncmp(p + 13, names[k], strlen(names[k])) == 0 &&
          p[13 + strlen(names[k])] == ' ')
        count[k]++;
  /* only leftovers of unfinished puts are allowed: the index must never
   * have named a missing, short or wrong file */
  *broken = count[0] + count[1] + count[2] + count[3] + count[4];
  size_t len = 0;
  kinds[0] = '\0';
  for (int k = 0; k < 8 && len < n; k++)
    if (count[k])
      len += (size_t)snprintf(kinds + len, n - len, "%s%d %s",
                              len ? ", " : "", count[k], names[k]);
  free(s);
  return total;
}

int it_crash_storm(void) {
  tdaemon d;
  bool failed = true;
  int iterations = env_int("TEENY_SOAK_ITERATIONS", 3);
  unsigned seed = (unsigned)env_int("TEENY_SOAK_SEED", (int)time(NULL));
  CHECK(td_init(&d) == 0);
  CHECK(storm_prepare() == 0);
  const char *args[] = {"--max-size", "150K", "--log-level", "info",
                        "--workers", "2", NULL};
  int total_checked = 0, min_entries = 1 << 30, max_entries = 0;
  int total_answered = 0, total_sent = 0;
  srand(seed);
  fprintf(stderr, "crash storm: %d iterations, seed %u\n", iterations, seed);
  for (int it = 0; it < iterations; it++) {
    CHECK(td_start(&d, args, NULL) == 0);
    stormer st[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
      st[i] = (stormer){d.sock, seed * 31u + (unsigned)(it * 3 + i), 0, 0};
      CHECK(pthread_create(&th[i], NULL, stormer_main, &st[i]) == 0);
    }
    useconds_t delay = (useconds_t)(20000 + rand() % 1500000);
    usleep(delay);
    td_kill(&d);
    int answered = 0, sent = 0;
    for (int i = 0; i < 3; i++) {
      pthread_join(th[i], NULL);
      answered += st[i].answered;
      sent += st[i].sent;
    }
    total_answered += answered;
    total_sent += sent;
    CHECK(td_start(&d, args, NULL) == 0);
    int checked = storm_check(d.sock);
    if (checked < 0)
      fprintf(stderr, "iteration %d (kill after %u ms): store check failed\n",
              it, (unsigned)delay / 1000);
    CHECK(checked >= 0);
    total_checked += checked;
    if (checked < min_entries)
      min_entries = checked;
    if (checked > max_entries)
      max_entries = checked;
    CHECK_INT(td_stop(&d), ==, 0);
  }
  char kinds[256];
  int broken = 0;
  int recovered = recovered_problems(d.log, kinds, sizeof kinds, &broken);
  fprintf(stderr,
          "crash storm: %d kill -9s (%d of %d requests answered before "
          "them); after each restart verify found 0 problems; %d entries "
          "checked against fresh compiles (%d..%d per restart); startup "
          "recovery repaired %d problem(s) in total (%s)\n",
          iterations, total_answered, total_sent, total_checked, min_entries,
          max_entries, recovered, kinds);
  CHECK_INT(broken, ==, 0);
  failed = false;
fail:
  storm_free();
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- load, CI-sized ---------------------------------------------------------------- */

int it_load_mixed(void) {
  tdaemon d;
  bool failed = true;
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--log-level", "warn", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  rel_load_opts o = {d.sock, getenv("TEENY_SOURCE_DIR"),
                     env_int("TEENY_LOAD_PROCS", 8),
                     env_int("TEENY_LOAD_REQUESTS", 400),
                     4, 20, 60, d.pid, 20, 7, true};
  rel_load_result r;
  CHECK(rel_load_run(&o, &r) == 0);
  rel_load_print(&o, &r);
  fflush(stdout);
  CHECK_INT(r.wrong, ==, 0);
  CHECK_INT(r.lost, ==, 0);
  CHECK_INT(r.failed_procs, ==, 0);
  CHECK_INT(r.replies, ==, (uint64_t)o.procs * (uint64_t)o.requests);
  if (!TEENY_ASAN)
    CHECK(r.rss_max_kb < r.rss_start_kb + 128 * 1024);
  failed = false;
fail:
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
