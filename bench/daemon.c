/*
 * bench/daemon.c — teenycd over its socket: warm-hit latency, hit
 * throughput with 1, 8 and 32 clients, cold compile latency per example
 * kernel, and a 32-client stampede on one cold key.  Prints a Markdown
 * table (bench/run-daemon puts it into docs/benchmarks.md).
 *
 * A "call" is what an application pays: encode the compile request, write
 * it, read the reply, decode it with its PTX — one round trip on one
 * connection, no pipelining.  Cold keys are made by appending a comment
 * with a fresh nonce to the kernel source (the generated source, hence the
 * key, changes; the compile work does not).  The daemon is started by the
 * caller; this program only connects to --socket.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/tclient.h"

#define MAX_THREADS 32

typedef struct bench {
  const char *sock;     /* the daemon's socket */
  const char *srcdir;   /* the source tree (examples/kernels) */
  int hits;             /* sequential hits for the latency figure */
  double seconds;       /* duration of each throughput run */
  int cold_reps;        /* cold compiles per example kernel */
  unsigned nonce;       /* makes cold keys */
  char *va_src;         /* vector_add source */
  size_t va_len;        /* its length */
} bench;

static const char *const va_b[] = {"D=f32", "BLOCK_SIZE=1024", NULL};

/* ---- one call ---------------------------------------------------------------- */

/* Compile over c and wait for the reply; its status, or a transport
 * error.  cache/compile_ms (may be NULL) get the reply's fields. */
static int call(tclient *c, const char *src, size_t n, const char *kernel,
                const char *const *b, int *cache, double *compile_ms) {
  tc_compile t;
  tc_compile_init(&t, src, n, kernel, b);
  int rc = tc_send(c, &t.req);
  const char *p;
  size_t len;
  if (!rc)
    rc = tc_recv_frame(c, 120000, &p, &len);
  if (rc)
    return rc;
  teeny_msg_reply rep;
  char err[TEENY_PROTO_ERR_LEN];
  if ((rc = teeny_msg_reply_decode(p, len, TEENY_OP_COMPILE, &rep, err)))
    return rc;
  rc = rep.status;
  if (!rc && (!rep.u.compile.art.ptx || rep.id != t.req.id))
    rc = TEENY_E_PROTO;
  if (rc && rep.error)
    fprintf(stderr, "%s: %s\n", kernel, rep.error);
  if (cache)
    *cache = rc ? -1 : (int)rep.u.compile.cache;
  if (compile_ms)
    *compile_ms = rc ? 0 : (double)rep.u.compile.art.compile_ns / 1e6;
  teeny_msg_reply_free(&rep);
  return rc;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* ---- warm-hit latency ------------------------------------------------------------ */

static int bench_latency(bench *B) {
  tclient c;
  tc_init(&c);
  uint64_t *lat = calloc((size_t)B->hits, sizeof *lat);
  int rc = lat ? tc_open(&c, B->sock) : TEENY_E_NOMEM;
  if (!rc)
    rc = call(&c, B->va_src, B->va_len, "vector_add", va_b, NULL, NULL);
  for (int i = 0; !rc && i < 1000; i++) /* warm both sides */
    rc = call(&c, B->va_src, B->va_len, "vector_add", va_b, NULL, NULL);
  for (int i = 0; !rc && i < B->hits; i++) {
    uint64_t t0 = tc_now_us();
    int cache = -1;
    rc = call(&c, B->va_src, B->va_len, "vector_add", va_b, &cache, NULL);
    lat[i] = tc_now_us() - t0;
    if (!rc && cache != TEENY_CACHE_MEMORY)
      rc = TEENY_E_INTERNAL;
  }
  if (!rc) {
    qsort(lat, (size_t)B->hits, sizeof *lat, cmp_u64);
    uint64_t p50 = lat[B->hits / 2], p99 = lat[(size_t)B->hits * 99 / 100];
    printf("| warm hit latency, 1 client (vector_add f32, %d calls) | p50 %llu us, "
           "p90 %llu us, p99 %llu us, max %llu us | p50 <= 25 us, p99 <= 250 us "
           "| %s |\n",
           B->hits, (unsigned long long)p50,
           (unsigned long long)lat[(size_t)B->hits * 90 / 100],
           (unsigned long long)p99, (unsigned long long)lat[B->hits - 1],
           p50 <= 25 && p99 <= 250 ? "met" : "**missed**");
  }
  tc_close(&c);
  free(lat);
  return rc;
}

/* ---- hit throughput ----------------------------------------------------------------- */

typedef struct tp_arg {
  bench *B;                 /* settings */
  pthread_barrier_t *start; /* all begin together */
  volatile int *stop;       /* set when time is up */
  uint64_t calls;           /* completed calls */
  int rc;                   /* first error */
} tp_arg;

static void *tp_thread(void *arg) {
  tp_arg *a = arg;
  tclient c;
  tc_init(&c);
  a->rc = tc_open(&c, a->B->sock);
  if (!a->rc) /* warm this connection */
    a->rc = call(&c, a->B->va_src, a->B->va_len, "vector_add", va_b, NULL,
                 NULL);
  pthread_barrier_wait(a->start);
  while (!a->rc && !*a->stop) {
    a->rc = call(&c, a->B->va_src, a->B->va_len, "vector_add", va_b, NULL,
                 NULL);
    a->calls += !a->rc;
  }
  tc_close(&c);
  return NULL;
}

static int bench_throughput(bench *B, int nclients) {
  pthread_t th[MAX_THREADS];
  tp_arg args[MAX_THREADS];
  pthread_barrier_t start;
  volatile int stop = 0;
  pthread_barrier_init(&start, NULL, (unsigned)nclients + 1);
  for (int i = 0; i < nclients; i++) {
    args[i] = (tp_arg){B, &start, &stop, 0, 0};
    pthread_create(&th[i], NULL, tp_thread, &args[i]);
  }
  pthread_barrier_wait(&start);
  uint64_t t0 = tc_now_us();
  usleep((useconds_t)(B->seconds * 1e6));
  stop = 1;
  uint64_t calls = 0;
  int rc = 0;
  for (int i = 0; i < nclients; i++) {
    pthread_join(th[i], NULL);
    calls += args[i].calls;
    if (args[i].rc && !rc)
      rc = args[i].rc;
  }
  double s = (double)(tc_now_us() - t0) / 1e6;
  pthread_barrier_destroy(&start);
  if (rc)
    return rc;
  double rate = (double)calls / s;
  printf("| hit throughput, %d client%s | %.0f calls/s | %s | %s |\n", nclients,
         nclients > 1 ? "s" : "", rate,
         nclients == 32 ? ">= 50,000/s" : "—",
         nclients != 32 ? "—" : rate >= 50000 ? "met" : "**missed**");
  return 0;
}

/* ---- cold compiles -------------------------------------------------------------- */

/* src with a nonce comment appended (a new key, the same work). */
static char *with_nonce(const char *src, size_t n, unsigned nonce,
                        size_t *len) {
  char *s = malloc(n + 64);
  if (!s)
    return NULL;
  memcpy(s, src, n);
  *len = n + (size_t)snprintf(s + n, 64, "\n/* bench nonce %u */\n", nonce);
  return s;
}

/* One examples.list line: file kernel bindings... */
typedef struct example {
  char file[64];     /* examples/kernels/FILE.c */
  char kernel[64];   /* kernel name */
  char bind[8][48];  /* bindings */
  const char *b[9];  /* pointers to them, NULL-terminated */
} example;

static int parse_example(char *line, example *e) {
  memset(e, 0, sizeof *e);
  char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
  if (!tok || tok[0] == '#')
    return -1;
  snprintf(e->file, sizeof e->file, "%s", tok);
  if (!(tok = strtok_r(NULL, " \t\n", &save)))
    return -1;
  snprintf(e->kernel, sizeof e->kernel, "%s", tok);
  int n = 0;
  while (n < 8 && (tok = strtok_r(NULL, " \t\n", &save))) {
    snprintf(e->bind[n], sizeof e->bind[n], "%s", tok);
    e->b[n] = e->bind[n];
    n++;
  }
  return 0;
}

static void cold_one(bench *B, tclient *c, const example *e) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/%s.c", B->srcdir, e->file);
  size_t n;
  char *src = tc_read_file(path, &n);
  double ms[32], cms[32];
  int k = 0, rc = src ? 0 : TEENY_E_IO;
  for (int r = 0; !rc && r < B->cold_reps && r < 32; r++) {
    size_t len;
    char *s = with_nonce(src, n, B->nonce++, &len);
    int cache = -1;
    uint64_t t0 = tc_now_us();
    rc = s ? call(c, s, len, e->kernel, e->b, &cache, &cms[k]) : TEENY_E_NOMEM;
    ms[k] = (double)(tc_now_us() - t0) / 1e3;
    if (!rc && cache == TEENY_CACHE_MISS)
      k++;
    free(s);
  }
  char binds[256] = "";
  for (int i = 0; e->b[i]; i++)
    snprintf(binds + strlen(binds), sizeof binds - strlen(binds), "%s%s",
             i ? " " : "", e->b[i]);
  if (rc || !k) {
    printf("| cold compile, %s %s | failed: %s | %s | — |\n", e->kernel, binds,
           teeny_strerror(rc), strcmp(e->kernel, "vector_add") ? "—" : "<= 15 ms");
  } else {
    qsort(ms, (size_t)k, sizeof *ms, cmp_double);
    qsort(cms, (size_t)k, sizeof *cms, cmp_double);
    bool bar = strcmp(e->kernel, "vector_add") == 0;
    printf("| cold compile, %s %s | median %.2f ms (min %.2f; compiler %.2f ms) "
           "| %s | %s |\n",
           e->kernel, binds, ms[k / 2], ms[0], cms[k / 2],
           bar ? "<= 15 ms" : "—",
           !bar ? "—" : ms[k / 2] <= 15.0 ? "met" : "**missed**");
  }
  free(src);
}

static int bench_cold(bench *B) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/examples.list", B->srcdir);
  FILE *f = fopen(path, "r");
  tclient c;
  tc_init(&c);
  if (!f || tc_open(&c, B->sock)) {
    if (f)
      fclose(f);
    return TEENY_E_IO;
  }
  char line[512];
  while (fgets(line, sizeof line, f)) {
    example e;
    if (parse_example(line, &e) == 0)
      cold_one(B, &c, &e);
  }
  fclose(f);
  tc_close(&c);
  return 0;
}

/* ---- stampede --------------------------------------------------------------------- */

typedef struct st_arg {
  const char *sock;         /* where */
  const char *src;          /* the cold source */
  size_t n;                 /* its length */
  const char *kernel;       /* kernel */
  const char *const *b;     /* bindings */
  pthread_barrier_t *start; /* all send at once */
  uint64_t done_us;         /* when its reply came */
  int rc;                   /* status */
} st_arg;

static void *st_thread(void *arg) {
  st_arg *a = arg;
  tclient c;
  tc_init(&c);
  a->rc = tc_open(&c, a->sock);
  pthread_barrier_wait(a->start);
  if (!a->rc)
    a->rc = call(&c, a->src, a->n, a->kernel, a->b, NULL, NULL);
  a->done_us = tc_now_us();
  tc_close(&c);
  return NULL;
}

static int stats_compiles(bench *B, uint64_t *compiles, uint64_t *joins) {
  tclient c;
  teeny_msg_stats_reply st;
  tc_init(&c);
  int rc = tc_open(&c, B->sock);
  if (!rc)
    rc = tc_stats(&c, &st);
  tc_close(&c);
  if (!rc) {
    *compiles = st.compiles;
    *joins = st.joins;
  }
  return rc;
}

static int stampede(bench *B, const char *file, const char *kernel,
                    const char *const *b) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/%s.c", B->srcdir, file);
  size_t n, len;
  char *src0 = tc_read_file(path, &n);
  char *src = src0 ? with_nonce(src0, n, B->nonce++, &len) : NULL;
  free(src0);
  if (!src)
    return TEENY_E_IO;
  uint64_t c0 = 0, j0 = 0, c1 = 0, j1 = 0;
  int rc = stats_compiles(B, &c0, &j0);
  pthread_t th[MAX_THREADS];
  st_arg a[MAX_THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, MAX_THREADS + 1);
  for (int i = 0; i < MAX_THREADS; i++) {
    a[i] = (st_arg){B->sock, src, len, kernel, b, &start, 0, 0};
    pthread_create(&th[i], NULL, st_thread, &a[i]);
  }
  pthread_barrier_wait(&start);
  uint64_t t0 = tc_now_us(), last = t0;
  for (int i = 0; i < MAX_THREADS; i++) {
    pthread_join(th[i], NULL);
    if (a[i].rc && !rc)
      rc = a[i].rc;
    if (a[i].done_us > last)
      last = a[i].done_us;
  }
  pthread_barrier_destroy(&start);
  free(src);
  if (!rc)
    rc = stats_compiles(B, &c1, &j1);
  if (rc)
    return rc;
  printf("| stampede, 32 clients, one cold key (%s) | %llu compile, %llu joins, "
         "%.1f ms wall | exactly 1 compile | %s |\n",
         kernel, (unsigned long long)(c1 - c0), (unsigned long long)(j1 - j0),
         (double)(last - t0) / 1e3, c1 - c0 == 1 ? "met" : "**missed**");
  return 0;
}

/* ---- main ----------------------------------------------------------------------- */

static int usage(void) {
  fprintf(stderr,
          "usage: teeny_bench_daemon --socket PATH [--source-dir DIR] "
          "[--hits N] [--seconds S] [--cold-reps N]\n"
          "Measures a running teenycd; bench/run-daemon starts one and "
          "records the table in docs/benchmarks.md.\n");
  return 2;
}

static int parse(bench *B, int argc, char **argv) {
  static const struct option lo[] = {
      {"socket", required_argument, NULL, 's'},
      {"source-dir", required_argument, NULL, 'd'},
      {"hits", required_argument, NULL, 'n'},
      {"seconds", required_argument, NULL, 't'},
      {"cold-reps", required_argument, NULL, 'r'},
      {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "s:d:n:t:r:", lo, NULL)) != -1) {
    switch (c) {
    case 's': B->sock = optarg; break;
    case 'd': B->srcdir = optarg; break;
    case 'n': B->hits = atoi(optarg); break;
    case 't': B->seconds = atof(optarg); break;
    case 'r': B->cold_reps = atoi(optarg); break;
    default: return -1;
    }
  }
  return B->sock && B->hits > 0 && B->seconds > 0 && B->cold_reps > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  bench B = {NULL, ".", 20000, 2.0, 7, 0, NULL, 0};
  if (parse(&B, argc, argv))
    return usage();
  B.nonce = (unsigned)time(NULL);
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/vector_add.c", B.srcdir);
  if (!(B.va_src = tc_read_file(path, &B.va_len))) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  printf("| measurement | result | bar | |\n| --- | --- | --- | --- |\n");
  int rc = bench_latency(&B);
  for (int i = 0; !rc && i < 3; i++)
    rc = bench_throughput(&B, (int[]){1, 8, 32}[i]);
  if (!rc)
    rc = bench_cold(&B);
  const char *vb[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  const char *sb[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  if (!rc)
    rc = stampede(&B, "vector_add", "vector_add", vb);
  if (!rc)
    rc = stampede(&B, "softmax", "softmax", sb);
  free(B.va_src);
  if (rc)
    fprintf(stderr, "bench failed: %s\n", teeny_strerror(rc));
  return rc ? 1 : 0;
}
