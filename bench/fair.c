/*
 * bench/fair.c — teeny_bench_fair: what one client's heavy work costs
 * another client.  A second uid (nobody, a child process) times stats, a
 * disk hit and a small cold compile (vector_add with a fresh comment) on
 * an idle daemon, then again while one connection pipelines many slow but
 * legal kernels (400 dependent tile statements at BLOCK_SIZE 8192, each a
 * second or more of LLVM) and another runs verify over and over on a store
 * of --entries entries whose files exist (synthetic rows: verify reads and
 * hashes them all).  Issue 18's bar: each within 2x its idle latency.
 *
 *   teeny_bench_fair --teenycd BIN --source-dir DIR [--entries 100000]
 *                    [--slow 64] [--samples 30] [-- teenycd args...]
 */
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/integration/reliability.h"
#include "tests/integration/synth.h"

#define NOBODY 65534
#define MAX_SAMPLES 200

typedef struct sample_set {
  int n;                          /* samples taken */
  int bad;                        /* calls that failed */
  uint64_t stats[MAX_SAMPLES];    /* µs */
  uint64_t disk[MAX_SAMPLES];     /* µs */
  uint64_t cold[MAX_SAMPLES];     /* µs */
} sample_set;

static const char *sock_path;
static const char *va_src;
static size_t va_len;
static int round_no;

static uint64_t call_us(tclient *c, teeny_msg_request *req, int *bad) {
  teeny_msg_reply rep;
  uint64_t t0 = tc_now_us();
  int rc = tc_call(c, req, &rep);
  uint64_t us = tc_now_us() - t0;
  if (rc || rep.status)
    (*bad)++;
  if (!rc)
    teeny_msg_reply_free(&rep);
  return us;
}

/* In the child (as nobody): samples of the three requests, interleaved. */
static void measure(sample_set *s, int n) {
  tclient c;
  tc_init(&c);
  memset(s, 0, sizeof *s);
  if (tc_open(&c, sock_path)) {
    s->bad = -1;
    return;
  }
  char *cold = malloc(va_len + 64);
  for (int i = 0; i < n && cold; i++) {
    teeny_msg_request st = {.op = TEENY_OP_STATS};
    s->stats[i] = call_us(&c, &st, &s->bad);
    char file[64];
    snprintf(file, sizeof file, "fair-%d-%d.c", round_no, i);
    tc_compile t;
    tc_compile_init(&t, va_src, va_len, "vector_add",
                    (const char *const[]){"D=f32", "BLOCK_SIZE=1024", NULL});
    t.req.u.compile.req.filename = file;
    s->disk[i] = call_us(&c, &t.req, &s->bad);
    size_t m = va_len + (size_t)snprintf(cold + va_len, 64,
                                          "/* fair %d %d %d */\n", (int)getpid(),
                                          round_no, i);
    memcpy(cold, va_src, va_len);
    tc_compile_init(&t, cold, m, "vector_add",
                    (const char *const[]){"D=f32", "BLOCK_SIZE=1024", NULL});
    s->cold[i] = call_us(&c, &t.req, &s->bad);
    s->n++;
    usleep(20000);
  }
  free(cold);
  tc_close(&c);
}

/* Run measure as nobody in a child; its samples through a pipe. */
static int measure_as_nobody(sample_set *s, int n) {
  int fds[2];
  if (pipe(fds))
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
      _exit(1);
    sample_set mine;
    measure(&mine, n);
    ssize_t w = write(fds[1], &mine, sizeof mine);
    _exit(w == (ssize_t)sizeof mine ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while (got < sizeof *s && (r = read(fds[0], (char *)s + got, sizeof *s - got)) > 0)
    got += (size_t)r;
  close(fds[0]);
  waitpid(pid, NULL, 0);
  return got == sizeof *s && s->bad == 0 ? 0 : -1;
}

/* ---- the load ----------------------------------------------------------------------- */

typedef struct verifier {
  volatile int stop;
  int passes;
  double max_s;
} verifier;

static void *verify_loop(void *p) {
  verifier *v = p;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, sock_path))
    return NULL;
  while (!v->stop) {
    uint64_t t0 = tc_now_us();
    teeny_msg_request req = {.op = TEENY_OP_VERIFY};
    teeny_msg_reply rep;
    if (tc_call_timeout(&c, &req, &rep, 600000))
      break;
    teeny_msg_reply_free(&rep);
    double s = (double)(tc_now_us() - t0) / 1e6;
    v->passes++;
    if (s > v->max_s)
      v->max_s = s;
  }
  tc_close(&c);
  return NULL;
}

static int pipeline_slow(tclient *a, int n) {
  for (int i = 0; i < n; i++)
    if (it_send_slow(a, 400, 1000 + i, 8192, 0))
      return -1;
  return 0;
}

/* ---- the table ------------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, int n, int p) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  int i = n * p / 100;
  return (double)v[i < n ? i : n - 1] / 1e3;
}

static void line(const char *what, uint64_t *idle, uint64_t *load, int n) {
  double i50 = pct(idle, n, 50), i90 = pct(idle, n, 90);
  double l50 = pct(load, n, 50), l90 = pct(load, n, 90);
  printf("| %s | p50 %.2f ms, p90 %.2f ms | p50 %.2f ms, p90 %.2f ms | %.2fx | %s |\n",
         what, i50, i90, l50, l90, l50 / i50, l50 <= 2 * i50 ? "met" : "NOT met");
}

static int setup_store(tdaemon *d, const char *const *args, long entries) {
  tclient c;
  tc_init(&c);
  teeny_msg_reply rep;
  tc_compile t;
  tc_compile_init(&t, va_src, va_len, "vector_add",
                  (const char *const[]){"D=f32", "BLOCK_SIZE=1024", NULL});
  int rc = td_start(d, args, NULL) || tc_open(&c, d->sock) ||
           tc_call(&c, &t.req, &rep) || tc_reply_status(&rep, NULL, 0);
  tc_close(&c);
  if (rc || td_stop(d) != 0)
    return -1;
  uint64_t t0 = tc_now_us();
  if (synth_rows_files(d->cache, "synth", entries))
    return -1;
  fprintf(stderr, "%ld entries with files written in %.1f s\n", entries,
          (double)(tc_now_us() - t0) / 1e6);
  return td_start(d, args, NULL);
}

int main(int argc, char **argv) {
  long entries = 100000;
  int slow = 64, samples = 30;
  const char *srcdir = ".";
  const char *args[48] = {"--socket-mode", "0666", "--shutdown-timeout", "1s"};
  int na = 4;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--teenycd") && i + 1 < argc)
      setenv("TEENYCD_BIN", argv[++i], 1);
    else if (!strcmp(argv[i], "--source-dir") && i + 1 < argc)
      srcdir = argv[++i];
    else if (!strcmp(argv[i], "--entries") && i + 1 < argc)
      entries = atol(argv[++i]);
    else if (!strcmp(argv[i], "--slow") && i + 1 < argc)
      slow = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
      samples = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--"))
      for (i++; i < argc && na < 46; i++)
        args[na++] = argv[i];
    else {
      fprintf(stderr, "usage: teeny_bench_fair --teenycd BIN --source-dir DIR "
                      "[--entries N] [--slow N] [--samples N] [-- teenycd args]\n");
      return 2;
    }
  }
  if (samples < 3 || samples > MAX_SAMPLES)
    samples = 30;
  setenv("TEENY_SOURCE_DIR", srcdir, 1);
  signal(SIGPIPE, SIG_IGN);
  va_src = tc_kernel_source("vector_add", &va_len);
  tdaemon d;
  tclient a;
  tc_init(&a);
  static sample_set idle, load;
  verifier v = {0, 0, 0};
  pthread_t vt;
  bool verifying = false;
  int rc = 1;
  if (!va_src || td_init(&d) || setup_store(&d, args, entries))
    goto done;
  sock_path = d.sock;
  round_no = 1;
  if (measure_as_nobody(&idle, samples))
    goto done;
  if (tc_open(&a, d.sock) || pipeline_slow(&a, slow) ||
      pthread_create(&vt, NULL, verify_loop, &v))
    goto done;
  verifying = true;
  sleep(2); /* the compiles and the first verify run */
  round_no = 2;
  uint64_t t0 = tc_now_us();
  if (measure_as_nobody(&load, samples))
    goto done;
  double window = (double)(tc_now_us() - t0) / 1e6;
  double done_compiles = rel_counter(d.sock, "compiles");
  printf("| request (uid nobody) | idle | while one connection pipelines %d "
         "slow kernels and another runs verify over %ld entries | ratio | "
         "bar (<= 2x) |\n| --- | --- | --- | ---: | --- |\n",
         slow, entries);
  line("stats", idle.stats, load.stats, samples);
  line("disk hit (vector_add)", idle.disk, load.disk, samples);
  line("cold compile (vector_add, new comment)", idle.cold, load.cold, samples);
  printf("\nloaded window %.1f s; compiles done by then %.0f (of %d slow + "
         "%d small); verify passes finished %d (longest %.1f s); load "
         "average at the end: ",
         window, done_compiles, slow, 2 * samples, v.passes, v.max_s);
  fflush(stdout);
  if (system("cut -d' ' -f1-3 /proc/loadavg") != 0)
    printf("?\n");
  rc = 0;
done:
  v.stop = 1;
  tc_close(&a);
  if (verifying) {
    td_stop(&d); /* ends the verify in flight too */
    pthread_join(vt, NULL);
  }
  td_fini(&d, rc != 0);
  free((char *)va_src);
  return rc;
}
