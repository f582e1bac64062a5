/*
 * bench/remote.c — teeny_bench_remote: the remote tier on one machine.
 *
 *   teeny_bench_remote --teenycd BIN --source-dir DIR [--kernel softmax|matmul]
 *                      [--daemons 1,8,32] [--per-daemon N] [--clients C]
 *
 * One redis-server on a Unix socket (persistence off).  A first teenycd
 * compiles the kernel once; its artifact is then written into Redis under
 * N distinct keys (the kernel source with a "// variant i" line: each
 * variant's generated source and key come from teeny_spec_create, the PTX
 * is the real one), so that every request below is a local miss that the
 * remote answers.  Measured:
 *   1. a remote hit's latency, client call to reply, on a daemon with an
 *      empty store (spec step, local miss, GETRANGE, verify, local put,
 *      reply), beside a memory hit and the bare fetch + verify;
 *   2. remote hits per second with 1, 8 and 32 daemons (each its own
 *      store and C clients, every request another key), and Redis's own
 *      CPU per hit (INFO cpu), which is what bounds one Redis.
 * Prints Markdown rows.  Loopback only: network RTT is not in these.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "daemon/remote.h"
#include "tests/integration/tclient.h"
#include "tests/integration/tredis.h"

#define MAX_DAEMONS 64

typedef struct kernel {
  const char *name;          /* kernel name and file */
  const char *bindings[8];   /* its bindings */
} kernel;

static const kernel kernels[] = {
    {"softmax", {"D=f32", "BLOCK_SIZE=1024", NULL}},
    {"matmul", {"D=f16", "BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64", "GROUP_M=8", NULL}},
};

typedef struct bench {
  const kernel *k;
  char *src;            /* the kernel file */
  size_t len;
  tredis redis;
  teeny_artifact base;  /* the real artifact (views into reply) */
  teeny_msg_reply rep;  /* owns base's texts */
  int per_daemon;       /* requests (keys) per daemon */
  int clients;          /* client threads per daemon */
  size_t entry_bytes;   /* size of one value */
} bench;

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[(int)(p * (n - 1))];
}

/* The source of variant i (malloc). */
static char *variant(const bench *b, int i, size_t *len) {
  char *s = malloc(b->len + 32);
  *len = (size_t)snprintf(s, b->len + 32, "%.*s\n// variant %d\n", (int)b->len, b->src, i);
  return s;
}

static void fill_req(const bench *b, tc_compile *t, const char *src, size_t len) {
  tc_compile_init(t, src, len, b->k->name, b->k->bindings);
}

static int compile(const char *sock, const bench *b, const char *src, size_t len,
                   unsigned emit, teeny_msg_reply *rep, double *ms) {
  tclient c;
  tc_init(&c);
  int rc = tc_open(&c, sock);
  tc_compile t;
  fill_req(b, &t, src, len);
  if (emit)
    t.req.u.compile.emit = emit;
  uint64_t t0 = tc_now_us();
  if (!rc)
    rc = tc_call(&c, &t.req, rep);
  if (ms)
    *ms = (double)(tc_now_us() - t0) / 1000.0;
  tc_close(&c);
  return rc ? rc : rep->status;
}

/* Write variants [lo, hi) into Redis, each under its own key. */
static int seed(bench *b, int lo, int hi) {
  struct timeval tv = {5, 0};
  redisContext *rc = redisConnectUnixWithTimeout(b->redis.sock, tv);
  if (!rc || rc->err)
    return -1;
  teeny_buf v;
  teeny__buf_init(&v);
  for (int i = lo; i < hi; i++) {
    size_t n;
    char *src = variant(b, i, &n);
    tc_compile t;
    fill_req(b, &t, src, n);
    teeny_spec *spec = NULL;
    teeny_diags d;
    teeny_diags_init(&d);
    int e = teeny_spec_create(&t.req.u.compile.req, &spec, &d);
    teeny_diags_close(&d);
    if (e) {
      fprintf(stderr, "spec of variant %d: %s\n", i, teeny_strerror(e));
      free(src);
      return -1;
    }
    teeny_artifact a = b->base;
    size_t slen;
    a.source = (char *)teeny_spec_source(spec, &slen);
    a.source_len = slen;
    snprintf(a.key, sizeof a.key, "%s", teeny_spec_key(spec));
    e = teeny__remote_entry_encode(&a, NULL, 0, &v);
    if (!e) {
      b->entry_bytes = v.len;
      redisReply *x = redisCommand(rc, "SET teenyc:v1:e:{%s} %b", a.key, v.p, v.len);
      e = !x || x->type == REDIS_REPLY_ERROR;
      if (x)
        freeReplyObject(x);
    }
    teeny_spec_destroy(spec);
    free(src);
    if (e)
      return -1;
  }
  teeny__buf_free(&v);
  redisFree(rc);
  return 0;
}

static double redis_cpu_s(const bench *b) {
  char *info = NULL;
  tr_cmd(&b->redis, &info, NULL, "INFO cpu");
  double u = 0, s = 0;
  const char *p;
  if (info && (p = strstr(info, "used_cpu_user:")))
    u = atof(p + 14);
  if (info && (p = strstr(info, "used_cpu_sys:")))
    s = atof(p + 13);
  free(info);
  return u + s;
}

/* ---- 1. latency ---------------------------------------------------------------- */

static void bench_latency(bench *b, int first_variant, int n) {
  tdaemon d;
  const char *args[] = {"--remote", b->redis.url, "--remote-timeout", "5s", NULL};
  if (td_init(&d) || td_start(&d, args, NULL))
    return;
  double *hit = calloc((size_t)n, sizeof *hit), *mem = calloc((size_t)n, sizeof *mem);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    size_t len;
    char *src = variant(b, first_variant + i, &len);
    teeny_msg_reply r1, r2;
    if (compile(d.sock, b, src, len, 0, &r1, &hit[ok]) == 0 &&
        r1.u.compile.cache == TEENY_CACHE_DISK &&
        compile(d.sock, b, src, len, 0, &r2, &mem[ok]) == 0) {
      ok++;
      teeny_msg_reply_free(&r2);
    }
    teeny_msg_reply_free(&r1);
    free(src);
  }
  /* the bare fetch and verify, as the remote thread does it */
  double *raw = calloc((size_t)n, sizeof *raw);
  struct timeval tv = {5, 0};
  redisContext *rc = redisConnectUnixWithTimeout(b->redis.sock, tv);
  int nraw = 0;
  for (int i = 0; rc && !rc->err && i < n; i++) {
    size_t len;
    char *src = variant(b, first_variant + i, &len);
    tc_compile t;
    fill_req(b, &t, src, len);
    teeny_spec *spec = NULL;
    teeny_diags dg;
    teeny_diags_init(&dg);
    if (!teeny_spec_create(&t.req.u.compile.req, &spec, &dg)) {
      uint64_t t0 = tc_now_us();
      redisReply *x = redisCommand(rc, "GETRANGE teenyc:v1:e:{%s} 0 16777216",
                                   teeny_spec_key(spec));
      teeny_artifact *a = NULL;
      if (x && x->type == REDIS_REPLY_STRING &&
          teeny__remote_entry_verify(x->str, x->len, teeny_spec_key(spec), NULL, 0,
                                     16u << 20, &a) == TEENY_REMOTE_OK)
        raw[nraw++] = (double)(tc_now_us() - t0) / 1000.0;
      teeny_artifact_destroy(a);
      if (x)
        freeReplyObject(x);
    }
    teeny_spec_destroy(spec);
    teeny_diags_close(&dg);
    free(src);
  }
  if (rc)
    redisFree(rc);
  if (ok)
    printf("| remote hit, client call to reply (%s, entry %zu B, empty local store) "
           "| p50 %.2f ms, p99 %.2f ms (%d calls) |\n",
           b->k->name, b->entry_bytes, pct(hit, ok, 0.5), pct(hit, ok, 0.99), ok);
  if (ok)
    printf("| the same request again (memory hit) | p50 %.3f ms, p99 %.3f ms |\n",
           pct(mem, ok, 0.5), pct(mem, ok, 0.99));
  if (nraw)
    printf("| bare GETRANGE + verify of one entry (unix socket) | p50 %.3f ms, "
           "p99 %.3f ms |\n",
           pct(raw, nraw, 0.5), pct(raw, nraw, 0.99));
  free(hit), free(mem), free(raw);
  td_fini(&d, false);
}

/* The same daemon path without a remote, for comparison: n cold compiles
 * (variants never seeded), each compiled and stored. */
static void bench_cold(bench *b, int first_variant, int n) {
  tdaemon d;
  if (td_init(&d) || td_start(&d, NULL, NULL))
    return;
  double *ms = calloc((size_t)n, sizeof *ms);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    size_t len;
    char *src = variant(b, first_variant + i, &len);
    teeny_msg_reply r;
    if (compile(d.sock, b, src, len, 0, &r, &ms[ok]) == 0 &&
        r.u.compile.cache == TEENY_CACHE_MISS)
      ok++;
    teeny_msg_reply_free(&r);
    free(src);
  }
  if (ok)
    printf("| cold compile on a daemon without a remote (%s, the same path with a "
           "compile instead of a fetch) | p50 %.2f ms, p99 %.2f ms (%d calls) |\n",
           b->k->name, pct(ms, ok, 0.5), pct(ms, ok, 0.99), ok);
  free(ms);
  td_fini(&d, false);
}

/* ---- 2. throughput ------------------------------------------------------------- */

typedef struct tput_arg {
  const bench *b;
  const char *sock;
  int first, n;      /* variants first, first + n */
  int ok, remote;    /* replies ok, of which from the remote ("disk") */
} tput_arg;

static void *tput_thread(void *arg) {
  tput_arg *a = arg;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, a->sock))
    return NULL;
  for (int i = 0; i < a->n; i++) {
    size_t len;
    char *src = variant(a->b, a->first + i, &len);
    tc_compile t;
    fill_req(a->b, &t, src, len);
    teeny_msg_reply rep;
    if (tc_call(&c, &t.req, &rep) == 0) {
      a->ok += rep.status == 0;
      a->remote += rep.status == 0 && rep.u.compile.cache == TEENY_CACHE_DISK;
      teeny_msg_reply_free(&rep);
    }
    free(src);
  }
  tc_close(&c);
  return NULL;
}

static void bench_tput(bench *b, int ndaemons, int first_variant) {
  tdaemon *d = calloc((size_t)ndaemons, sizeof *d);
  const char *args[] = {"--remote", b->redis.url, "--remote-timeout", "5s",
                        "--workers", "1", "--store-workers", "2", "--admin-workers", "1",
                        NULL};
  int started = 0;
  for (; started < ndaemons; started++)
    if (td_init(&d[started]) || td_start(&d[started], args, NULL))
      break;
  int nthreads = started * b->clients;
  tput_arg *a = calloc((size_t)nthreads, sizeof *a);
  pthread_t *th = calloc((size_t)nthreads, sizeof *th);
  int each = b->per_daemon / b->clients;
  double cpu0 = redis_cpu_s(b);
  uint64_t t0 = tc_now_us();
  for (int i = 0; i < nthreads; i++) {
    a[i] = (tput_arg){b, d[i / b->clients].sock, first_variant + i * each, each, 0, 0};
    pthread_create(&th[i], NULL, tput_thread, &a[i]);
  }
  int ok = 0, remote = 0;
  for (int i = 0; i < nthreads; i++) {
    pthread_join(th[i], NULL);
    ok += a[i].ok;
    remote += a[i].remote;
  }
  double s = (double)(tc_now_us() - t0) / 1e6;
  double cpu = redis_cpu_s(b) - cpu0;
  printf("| %d daemon%s x %d clients, every request a remote hit (%s) | %d/%d remote "
         "hits in %.2f s: %.0f hits/s, %.1f MB/s from Redis; Redis CPU %.0f us/hit "
         "(%.0f hits/s per Redis core) |\n",
         started, started == 1 ? "" : "s", b->clients, b->k->name, remote, nthreads * each,
         s, remote / s, remote * (double)b->entry_bytes / s / 1e6,
         remote ? cpu / remote * 1e6 : 0.0, cpu > 0 ? remote / cpu : 0.0);
  fflush(stdout);
  for (int i = 0; i < started; i++)
    td_fini(&d[i], false);
  free(a), free(th), free(d);
}

/* ---- 3. Redis alone: N remote threads' worth of fetches -------------------------- */

typedef struct raw_arg {
  const bench *b;
  char (*keys)[65];  /* the seeded keys */
  int nkeys;
  int start;         /* this connection's first key */
  uint64_t until;    /* stop then (tc_now_us) */
  long fetched;      /* verified fetches */
} raw_arg;

static void *raw_thread(void *arg) {
  raw_arg *a = arg;
  struct timeval tv = {5, 0};
  redisContext *rc = redisConnectUnixWithTimeout(a->b->redis.sock, tv);
  for (int i = a->start; rc && !rc->err && tc_now_us() < a->until; i++) {
    const char *key = a->keys[i % a->nkeys];
    redisReply *x = redisCommand(rc, "GETRANGE teenyc:v1:e:{%s} 0 16777216", key);
    teeny_artifact *art = NULL;
    if (x && x->type == REDIS_REPLY_STRING &&
        teeny__remote_entry_verify(x->str, x->len, key, NULL, 0, 16u << 20, &art) ==
            TEENY_REMOTE_OK)
      a->fetched++;
    teeny_artifact_destroy(art);
    if (x)
      freeReplyObject(x);
  }
  if (rc)
    redisFree(rc);
  return NULL;
}

static void bench_raw(bench *b, int nconn, char (*keys)[65], int nkeys) {
  raw_arg *a = calloc((size_t)nconn, sizeof *a);
  pthread_t *th = calloc((size_t)nconn, sizeof *th);
  double cpu0 = redis_cpu_s(b);
  uint64_t t0 = tc_now_us(), until = t0 + 2000000;
  for (int i = 0; i < nconn; i++) {
    a[i] = (raw_arg){b, keys, nkeys, i * 37, until, 0};
    pthread_create(&th[i], NULL, raw_thread, &a[i]);
  }
  long total = 0;
  for (int i = 0; i < nconn; i++) {
    pthread_join(th[i], NULL);
    total += a[i].fetched;
  }
  double s = (double)(tc_now_us() - t0) / 1e6, cpu = redis_cpu_s(b) - cpu0;
  printf("| Redis alone: %d connection%s fetching + verifying (%s) | %.0f fetches/s, "
         "%.0f MB/s; Redis CPU %.0f us/fetch |\n",
         nconn, nconn == 1 ? "" : "s", b->k->name, total / s,
         total * (double)b->entry_bytes / s / 1e6, total ? cpu / total * 1e6 : 0.0);
  fflush(stdout);
  free(a), free(th);
}

/* The keys of variants [lo, hi) (malloc'ed array). */
static char (*variant_keys(const bench *b, int lo, int hi))[65] {
  char (*keys)[65] = calloc((size_t)(hi - lo), 65);
  for (int i = lo; keys && i < hi; i++) {
    size_t n;
    char *src = variant(b, i, &n);
    tc_compile t;
    fill_req(b, &t, src, n);
    teeny_spec *spec = NULL;
    teeny_diags d;
    teeny_diags_init(&d);
    if (!teeny_spec_create(&t.req.u.compile.req, &spec, &d))
      snprintf(keys[i - lo], 65, "%s", teeny_spec_key(spec));
    teeny_spec_destroy(spec);
    teeny_diags_close(&d);
    free(src);
  }
  return keys;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  const char *daemons = "1,8,32", *kname = "softmax";
  bench b;
  memset(&b, 0, sizeof b);
  b.per_daemon = 64;
  b.clients = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--teenycd"))
      setenv("TEENYCD_BIN", argv[i + 1], 1);
    else if (!strcmp(argv[i], "--source-dir"))
      setenv("TEENY_SOURCE_DIR", argv[i + 1], 1);
    else if (!strcmp(argv[i], "--daemons"))
      daemons = argv[i + 1];
    else if (!strcmp(argv[i], "--kernel"))
      kname = argv[i + 1];
    else if (!strcmp(argv[i], "--per-daemon"))
      b.per_daemon = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--clients"))
      b.clients = atoi(argv[i + 1]);
  }
  for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
    if (!strcmp(kernels[i].name, kname))
      b.k = &kernels[i];
  if (!b.k || b.per_daemon < b.clients || b.clients < 1) {
    fprintf(stderr, "usage: teeny_bench_remote --teenycd BIN --source-dir DIR "
                    "[--kernel softmax|matmul] [--daemons 1,8,32] [--per-daemon N] "
                    "[--clients C]\n");
    return 2;
  }
  if (!tr_available() || !(b.src = tc_kernel_source(b.k->name, &b.len)) ||
      tr_start(&b.redis))
    return 1;
  /* the real artifact, compiled once */
  tdaemon d0;
  const char *args[] = {"--remote", b.redis.url, NULL};
  if (td_init(&d0) || td_start(&d0, args, NULL) ||
      compile(d0.sock, &b, b.src, b.len,
              TEENY_MSG_EMIT_PTX | TEENY_MSG_EMIT_MLIR | TEENY_MSG_EMIT_SOURCE, &b.rep,
              NULL)) {
    fprintf(stderr, "the first compile failed\n");
    return 1;
  }
  b.base = b.rep.u.compile.art;
  td_fini(&d0, false);
  int sumd = 0;
  for (const char *p = daemons; *p;) {
    int n = atoi(p);
    sumd += n > 0 && n <= MAX_DAEMONS ? n : 0;
    p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
  }
  int lat_n = 200;
  int total = lat_n + sumd * b.per_daemon;
  uint64_t t0 = tc_now_us();
  if (seed(&b, 1, 1 + total)) {
    fprintf(stderr, "seeding Redis failed\n");
    return 1;
  }
  fprintf(stderr, "seeded %d entries of %zu bytes in %.1f s\n", total, b.entry_bytes,
          (double)(tc_now_us() - t0) / 1e6);
  printf("| measurement | result |\n| --- | --- |\n");
  bench_latency(&b, 1, lat_n);
  bench_cold(&b, 1 + total, 30);
  int next = 1 + lat_n;
  for (const char *p = daemons; *p;) {
    int n = atoi(p);
    if (n > 0 && n <= MAX_DAEMONS) {
      bench_tput(&b, n, next);
      next += n * b.per_daemon;
    }
    p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
  }
  char(*keys)[65] = variant_keys(&b, 1, 1 + lat_n);
  for (const char *p = daemons; keys && *p;) {
    int n = atoi(p);
    if (n > 0 && n <= MAX_DAEMONS)
      bench_raw(&b, n, keys, lat_n);
    p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
  }
  free(keys);
  char *mem = NULL;
  tr_cmd(&b.redis, &mem, NULL, "INFO memory");
  const char *um = mem ? strstr(mem, "used_memory_human:") : NULL;
  if (um)
    printf("| Redis memory after seeding %d entries | %.*s |\n", total,
           (int)strcspn(um + 18, "\r\n"), um + 18);
  free(mem);
  teeny_msg_reply_free(&b.rep);
  free(b.src);
  tr_fini(&b.redis);
  return 0;
}
