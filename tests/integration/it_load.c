/*
 * tests/integration/it_load.c — the daemon under concurrent load: 32
 * clients asking for one cold kernel at once (exactly one compile), pings
 * answered promptly during a compile storm (the loop never blocks), and a
 * kill -9 in the middle of a storm (after a restart the store verifies
 * clean and every entry's PTX is what a fresh compile gives).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/integration/itest.h"

/* ---- the storm: distinct cold requests -------------------------------------- */

typedef struct storm_req {
  const char *file;   /* examples/kernels/FILE.c */
  const char *kernel; /* kernel name */
  const char *b[6];   /* bindings, NULL-terminated */
} storm_req;

#define SL(d, bs) {"slow", "slow", {d, bs, NULL}}
#define VA(d, bs) {"vector_add", "vector_add", {d, bs, NULL}}
#define SM(bs) {"softmax", "softmax", {"D=f32", bs, NULL}}
static const storm_req storm[] = {
    VA("D=f32", "BLOCK_SIZE=64"),    VA("D=f32", "BLOCK_SIZE=128"),
    VA("D=f32", "BLOCK_SIZE=256"),   VA("D=f32", "BLOCK_SIZE=512"),
    SL("D=f32", "BLOCK_SIZE=1024"),
    VA("D=f16", "BLOCK_SIZE=64"),    VA("D=f16", "BLOCK_SIZE=128"),
    VA("D=f16", "BLOCK_SIZE=256"),   VA("D=f16", "BLOCK_SIZE=512"),
    SL("D=f32", "BLOCK_SIZE=512"),
    VA("D=bf16", "BLOCK_SIZE=64"),   VA("D=bf16", "BLOCK_SIZE=128"),
    VA("D=bf16", "BLOCK_SIZE=256"),  VA("D=bf16", "BLOCK_SIZE=512"),
    SL("D=f16", "BLOCK_SIZE=1024"),
    SM("BLOCK_SIZE=256"),            SM("BLOCK_SIZE=512"),
    SM("BLOCK_SIZE=1024"),           SM("BLOCK_SIZE=2048"),
    SL("D=f32", "BLOCK_SIZE=2048"),
    VA("D=f32", "BLOCK_SIZE=2048"),  VA("D=f16", "BLOCK_SIZE=2048"),
    VA("D=bf16", "BLOCK_SIZE=2048"), VA("D=f32", "BLOCK_SIZE=4096"),
    SL("D=f16", "BLOCK_SIZE=512"),
    SL("D=f16", "BLOCK_SIZE=2048"),
};
#define NSTORM (sizeof storm / sizeof *storm)

typedef struct sources {
  char *text[NSTORM]; /* source of storm[i] (shared by file) */
  size_t len[NSTORM];
  char *files[4];     /* distinct loaded files */
} sources;

/* The example files, and "slow" (it_slow_kernel, 300 statements). */
static int sources_load(sources *s) {
  memset(s, 0, sizeof *s);
  const char *names[4] = {"vector_add", "softmax", "slow", NULL};
  size_t lens[4];
  for (int f = 0; names[f]; f++) {
    s->files[f] = strcmp(names[f], "slow") == 0
                      ? it_slow_kernel(300, &lens[f])
                      : tc_kernel_source(names[f], &lens[f]);
    if (!s->files[f])
      return -1;
  }
  for (size_t i = 0; i < NSTORM; i++)
    for (int f = 0; names[f]; f++)
      if (strcmp(storm[i].file, names[f]) == 0) {
        s->text[i] = s->files[f];
        s->len[i] = lens[f];
      }
  return 0;
}

static void sources_free(sources *s) {
  for (int f = 0; f < 4; f++)
    free(s->files[f]);
}

static int send_storm(tclient *c, const sources *s, size_t i) {
  tc_compile t;
  tc_compile_init(&t, s->text[i], s->len[i], storm[i].kernel, storm[i].b);
  t.req.id = 1000 + i;
  return tc_send(c, &t.req);
}

/* ---- 32 clients, one cold key -------------------------------------------------- */

#define NCLIENTS 32

typedef struct sf_client {
  const char *sock;           /* where */
  const char *src;            /* slow kernel source */
  size_t n;                   /* its length */
  pthread_barrier_t *start;   /* all send at once */
  int status;                 /* reply status (or transport error) */
  int cache;                  /* reply cache field */
  char key[65];               /* reply key */
  char *ptx;                  /* reply PTX (owned) */
} sf_client;

static void *sf_thread(void *arg) {
  sf_client *a = arg;
  tclient c;
  teeny_msg_reply rep;
  tc_init(&c);
  a->status = tc_open(&c, a->sock);
  pthread_barrier_wait(a->start);
  if (a->status)
    return NULL;
  const char *b[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  a->status = it_compile(&c, a->src, a->n, "slow", b, 0, 0, &rep);
  if (!a->status) {
    a->status = rep.status;
    a->cache = (int)rep.u.compile.cache;
    if (!rep.status) {
      memcpy(a->key, rep.u.compile.art.key, 65);
      a->ptx = strndup(rep.u.compile.art.ptx, rep.u.compile.art.ptx_len);
    }
    teeny_msg_reply_free(&rep);
  }
  tc_close(&c);
  return NULL;
}

int it_single_flight(void) {
  tdaemon d;
  bool failed = true;
  size_t n;
  char *src = it_slow_kernel(400, &n);
  sf_client cl[NCLIENTS];
  pthread_t th[NCLIENTS];
  pthread_barrier_t start;
  teeny_msg_stats_reply st;
  int started = 0, miss = 0, joined = 0;
  memset(cl, 0, sizeof cl);
  pthread_barrier_init(&start, NULL, NCLIENTS);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(td_start(&d, NULL, NULL) == 0);
  for (; started < NCLIENTS; started++) {
    cl[started] = (sf_client){d.sock, src, n, &start, 0, 0, "", NULL};
    CHECK(pthread_create(&th[started], NULL, sf_thread, &cl[started]) == 0);
  }
  for (int i = 0; i < NCLIENTS; i++)
    pthread_join(th[i], NULL);
  started = 0;
  for (int i = 0; i < NCLIENTS; i++) {
    CHECK_INT(cl[i].status, ==, 0);
    CHECK(strcmp(cl[i].key, cl[0].key) == 0);
    CHECK(strcmp(cl[i].ptx, cl[0].ptx) == 0);
    miss += cl[i].cache == TEENY_CACHE_MISS;
    joined += cl[i].cache == TEENY_CACHE_JOINED;
  }
  CHECK(it_stats(d.sock, &st) == 0);
  fprintf(stderr, "32 clients: %d miss, %d joined; compiles %llu, joins %llu\n",
          miss, joined, (unsigned long long)st.compiles,
          (unsigned long long)st.joins);
  CHECK_INT(miss, ==, 1);
  CHECK_INT(joined, ==, NCLIENTS - 1);
  CHECK_INT(st.compiles, ==, 1);
  CHECK_INT(st.joins, ==, NCLIENTS - 1);
  CHECK_INT(st.misses, ==, NCLIENTS);
  CHECK_INT(st.entries, ==, 1);
  failed = false;
fail:
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < NCLIENTS; i++)
    free(cl[i].ptx);
  pthread_barrier_destroy(&start);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- pings during a compile storm --------------------------------------------- */

#define STORM_CLIENTS 3
#define MAX_PINGS 20000

typedef struct storm_arg {
  const char *sock;        /* where */
  const sources *src;      /* storm sources */
  int which;               /* this client's share: i % STORM_CLIENTS */
  int ok;                  /* successful replies */
  int sent;                /* requests sent */
} storm_arg;

static void *storm_thread(void *arg) {
  storm_arg *a = arg;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, a->sock))
    return NULL;
  for (size_t i = (size_t)a->which; i < NSTORM; i += STORM_CLIENTS)
    a->sent += send_storm(&c, a->src, i) == 0;
  for (int i = 0; i < a->sent; i++) {
    teeny_msg_reply rep;
    if (tc_recv(&c, TEENY_OP_COMPILE, &rep, 60000))
      break;
    if (rep.status)
      fprintf(stderr, "storm reply %llu: %d %s\n",
              (unsigned long long)rep.id, rep.status, rep.error);
    a->ok += rep.status == 0;
    teeny_msg_reply_free(&rep);
  }
  tc_close(&c);
  return NULL;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

typedef struct pinger {
  const char *sock;      /* where */
  volatile int *stop;    /* set when the storm is over */
  uint64_t *lat;         /* latencies, microseconds */
  int n;                 /* how many */
  int failed;            /* pings that failed */
} pinger;

static void *ping_thread(void *arg) {
  pinger *p = arg;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, p->sock)) {
    p->failed++;
    return NULL;
  }
  while (!*p->stop && p->n < MAX_PINGS) {
    uint64_t t0 = tc_now_us();
    if (tc_ping(&c)) {
      p->failed++;
      break;
    }
    p->lat[p->n++] = tc_now_us() - t0;
    usleep(1000);
  }
  tc_close(&c);
  return NULL;
}

int it_responsive_storm(void) {
  tdaemon d;
  bool failed = true;
  sources src;
  storm_arg sa[STORM_CLIENTS];
  pthread_t st[STORM_CLIENTS], pt;
  volatile int stop = 0;
  pinger p = {NULL, &stop, calloc(MAX_PINGS, sizeof(uint64_t)), 0, 0};
  int nstorm = 0, pinging = 0, ok = 0;
  CHECK(td_init(&d) == 0);
  CHECK(sources_load(&src) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  p.sock = d.sock;
  CHECK(pthread_create(&pt, NULL, ping_thread, &p) == 0);
  pinging = 1;
  usleep(20000);
  uint64_t t0 = tc_now_us();
  for (; nstorm < STORM_CLIENTS; nstorm++) {
    sa[nstorm] = (storm_arg){d.sock, &src, nstorm, 0, 0};
    CHECK(pthread_create(&st[nstorm], NULL, storm_thread, &sa[nstorm]) == 0);
  }
  for (int i = 0; i < STORM_CLIENTS; i++)
    pthread_join(st[i], NULL);
  nstorm = 0;
  double storm_s = (double)(tc_now_us() - t0) / 1e6;
  stop = 1;
  pthread_join(pt, NULL);
  pinging = 0;
  for (int i = 0; i < STORM_CLIENTS; i++)
    ok += sa[i].ok;
  CHECK_INT(ok, ==, NSTORM);
  CHECK_INT(p.failed, ==, 0);
  CHECK(p.n >= 20);
  qsort(p.lat, (size_t)p.n, sizeof *p.lat, cmp_u64);
  uint64_t p50 = p.lat[p.n / 2], p99 = p.lat[p.n * 99 / 100],
           mx = p.lat[p.n - 1];
  fprintf(stderr,
          "storm: %zu compiles in %.2f s; %d pings: p50 %llu us, p99 %llu us, "
          "max %llu us\n",
          NSTORM, storm_s, p.n, (unsigned long long)p50,
          (unsigned long long)p99, (unsigned long long)mx);
  CHECK(p50 < 10000);
  CHECK(mx < 250000);
  failed = false;
fail:
  stop = 1;
  for (int i = 0; i < nstorm; i++)
    pthread_join(st[i], NULL);
  if (pinging)
    pthread_join(pt, NULL);
  free(p.lat);
  sources_free(&src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- kill -9 during a storm ------------------------------------------------------ */

/* The index of the storm request whose key is key, or -1; its fresh PTX
 * into *ptx. */
static int fresh_compile(const sources *s, const char *key, char **ptx) {
  for (size_t i = 0; i < NSTORM; i++) {
    tc_compile t;
    tc_compile_init(&t, s->text[i], s->len[i], storm[i].kernel, storm[i].b);
    teeny_spec *spec = NULL;
    if (teeny_spec_create(&t.req.u.compile.req, &spec, NULL))
      continue;
    bool mine = strcmp(teeny_spec_key(spec), key) == 0;
    teeny_artifact *a = NULL;
    if (mine && !teeny_spec_compile(spec, TEENY_EMIT_PTX, &a, NULL))
      *ptx = strndup(a->ptx, a->ptx_len);
    teeny_artifact_destroy(a);
    teeny_spec_destroy(spec);
    if (mine)
      return (int)i;
  }
  return -1;
}

static int check_entry(tclient *c, const sources *s, const char *key) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_SHOW;
  req.u.show.key = key;
  req.u.show.emit = TEENY_MSG_EMIT_PTX;
  teeny_msg_reply rep;
  char *ptx = NULL;
  if (tc_call(c, &req, &rep))
    return 0;
  int i = fresh_compile(s, key, &ptx);
  int ok = rep.status == 0 && i >= 0 && ptx && rep.u.show.ptx &&
           rep.u.show.ptx_len == strlen(ptx) &&
           memcmp(rep.u.show.ptx, ptx, rep.u.show.ptx_len) == 0;
  if (!ok)
    fprintf(stderr, "entry %s: stored PTX differs from a fresh compile\n",
            key);
  teeny_msg_reply_free(&rep);
  free(ptx);
  return ok;
}

/* Send the whole storm on c, read `wait_for` good replies, then kill -9. */
static int storm_and_kill(tdaemon *d, const sources *s, int wait_for) {
  tclient c;
  int got = 0;
  tc_init(&c);
  if (tc_open(&c, d->sock))
    return -1;
  for (size_t i = 0; i < NSTORM; i++)
    if (send_storm(&c, s, i))
      break;
  while (got < wait_for) {
    teeny_msg_reply rep;
    if (tc_recv(&c, TEENY_OP_NONE, &rep, 30000))
      break;
    got += rep.status == 0;
    teeny_msg_reply_free(&rep);
  }
  usleep(30000); /* land inside the next compiles and puts */
  td_kill(d);
  tc_close(&c);
  return got;
}

int it_kill9_recover(void) {
  tdaemon d;
  tclient c;
  teeny_msg_request req;
  teeny_msg_reply rep;
  bool failed = true;
  sources src;
  tc_init(&c);
  memset(&rep, 0, sizeof rep);
  CHECK(td_init(&d) == 0);
  CHECK(sources_load(&src) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(storm_and_kill(&d, &src, 6), ==, 6);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_VERIFY;
  CHECK(tc_call(&c, &req, &rep) == 0);
  CHECK_INT(rep.status, ==, 0);
  for (size_t i = 0; i < rep.u.verify.nproblems; i++)
    fprintf(stderr, "problem: %s: %s\n", rep.u.verify.problems[i].key,
            rep.u.verify.problems[i].problem);
  CHECK_INT(rep.u.verify.nproblems, ==, 0);
  CHECK(rep.u.verify.checked >= 6);
  teeny_msg_reply_free(&rep);
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  CHECK(tc_call(&c, &req, &rep) == 0);
  CHECK_INT(rep.status, ==, 0);
  fprintf(stderr, "%zu entries survived the kill\n", rep.u.list.nentries);
  CHECK(rep.u.list.nentries >= 6);
  for (size_t i = 0; i < rep.u.list.nentries; i++)
    CHECK(check_entry(&c, &src, rep.u.list.entries[i].key));
  failed = false;
fail:
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  sources_free(&src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
