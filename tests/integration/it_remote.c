/*
 * tests/integration/it_remote.c — the remote tier against a real
 * redis-server (tredis.h) and several teenycd, each with its own store,
 * like separate nodes:
 *
 *   remote_single_flight  4 daemons x 16 clients, one cold key at once:
 *                         exactly 1 compile in the cluster, 48 remote hits
 *   remote_fifth_node     a daemon with an empty store gets a remote hit
 *                         (no compile; the entry lands in its store)
 *   remote_redis_killed   redis-server SIGKILLed in the middle of a mixed
 *                         storm on two daemons: 0 failed, 0 wrong replies
 *                         (checked against a daemon without a remote), one
 *                         warning per daemon
 *   remote_corrupt_entry  an entry corrupted (one byte) or replaced (by
 *                         another key's) in Redis is refused, counted,
 *                         logged and recompiled; the upload repairs it
 *   remote_silent         a remote that accepts and never answers: replies
 *                         come within compile time + --remote-timeout
 *
 * Each skips with a message where redis-server is not installed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/integration/tredis.h"

/* The counters a remote test looks at: the required ones and extras. */
typedef struct rstat {
  uint64_t compiles, entries, misses, joins, disk_hits;
  double remote_hits, remote_misses, remote_errors, leases_won, leases_waited,
      rejected, uploads, unavailable, up, bytes_in;
} rstat;

static int rstats(const char *sock, rstat *o) {
  static const struct {
    const char *name;
    size_t off;
  } names[] = {
      {"remote_hits", offsetof(rstat, remote_hits)},
      {"remote_misses", offsetof(rstat, remote_misses)},
      {"remote_errors", offsetof(rstat, remote_errors)},
      {"remote_leases_won", offsetof(rstat, leases_won)},
      {"remote_leases_waited", offsetof(rstat, leases_waited)},
      {"remote_rejected", offsetof(rstat, rejected)},
      {"remote_uploads", offsetof(rstat, uploads)},
      {"remote_unavailable", offsetof(rstat, unavailable)},
      {"remote_up", offsetof(rstat, up)},
      {"remote_bytes_in", offsetof(rstat, bytes_in)},
  };
  memset(o, 0, sizeof *o);
  tclient c;
  tc_init(&c);
  int rc = tc_open(&c, sock);
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_STATS;
  teeny_msg_reply rep;
  if (!rc)
    rc = tc_call(&c, &req, &rep);
  tc_close(&c);
  if (rc)
    return rc;
  rc = rep.status;
  const teeny_msg_stats_reply *s = &rep.u.stats;
  o->compiles = s->compiles, o->entries = s->entries, o->misses = s->misses;
  o->joins = s->joins, o->disk_hits = s->disk_hits;
  for (size_t i = 0; !rc && i < s->nextra; i++)
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
      if (strcmp(s->extra[i].name, names[k].name) == 0)
        *(double *)(void *)((char *)o + names[k].off) = s->extra[i].value;
  teeny_msg_reply_free(&rep);
  return rc;
}

/* One compile of kernel "slow" (source src) with D=f32, BLOCK_SIZE=bs. */
typedef struct answer {
  int status;       /* reply status or transport error */
  int cache;        /* reply cache field */
  char key[65];     /* reply key */
  char *ptx;        /* reply PTX (malloc) */
  double ms;        /* client-side latency */
} answer;

static void ask(const char *sock, tclient *c, const char *src, size_t n,
                answer *out) {
  tclient own;
  bool mine = c == NULL;
  if (mine) {
    tc_init(&own);
    c = &own;
    if ((out->status = tc_open(c, sock)))
      return;
  }
  const char *b[] = {"D=f32", "BLOCK_SIZE=256", NULL};
  teeny_msg_reply rep;
  uint64_t t0 = tc_now_us();
  out->status = it_compile(c, src, n, "slow", b, 0, 0, &rep);
  out->ms = (double)(tc_now_us() - t0) / 1000.0;
  if (!out->status) {
    out->status = rep.status;
    out->cache = (int)rep.u.compile.cache;
    if (!rep.status) {
      memcpy(out->key, rep.u.compile.art.key, 65);
      out->ptx = strndup(rep.u.compile.art.ptx, rep.u.compile.art.ptx_len);
    }
    teeny_msg_reply_free(&rep);
  }
  if (mine)
    tc_close(c);
}

static bool same_answer(const answer *a, const answer *b) {
  return a->status == 0 && b->status == 0 && strcmp(a->key, b->key) == 0 &&
         a->ptx && b->ptx && strcmp(a->ptx, b->ptx) == 0;
}

/* Start n daemons on remote url (NULL: none) with extra args. */
static int start_nodes(tdaemon *d, int n, const char *url, const char *timeout,
                       int *started) {
  const char *args[] = {"--remote", url, "--remote-timeout", timeout, NULL};
  for (*started = 0; *started < n; (*started)++) {
    if (td_init(&d[*started]))
      return -1;
    if (td_start(&d[*started], url ? args : NULL, NULL)) {
      (*started)++; /* its directory is there: fini removes it */
      return -1;
    }
  }
  return 0;
}

static bool fini_nodes(tdaemon *d, int n, bool failed) {
  for (int i = 0; i < n; i++)
    failed = td_fini(&d[i], failed) || failed;
  return failed;
}

/* ---- 4 daemons x 16 clients, one cold key ------------------------------------ */

#define NODES 4
#define PER_NODE 16

typedef struct sf_arg {
  const char *sock;          /* its daemon */
  const char *src;           /* the kernel */
  size_t n;                  /* its length */
  pthread_barrier_t *start;  /* everyone at once */
  answer a;                  /* what came back */
} sf_arg;

static void *sf_thread(void *arg) {
  sf_arg *s = arg;
  tclient c;
  tc_init(&c);
  s->a.status = tc_open(&c, s->sock);
  pthread_barrier_wait(s->start);
  if (!s->a.status)
    ask(NULL, &c, s->src, s->n, &s->a);
  tc_close(&c);
  return NULL;
}

int it_remote_single_flight(void) {
  if (!tr_available())
    return IT_SKIP;
  tredis r;
  tdaemon d[NODES];
  memset(d, 0, sizeof d);
  sf_arg a[NODES * PER_NODE];
  pthread_t th[NODES * PER_NODE];
  pthread_barrier_t start;
  int nodes = 0, threads = 0;
  bool failed = true;
  size_t n;
  char *src = it_slow_kernel(300, &n);
  memset(a, 0, sizeof a);
  pthread_barrier_init(&start, NULL, NODES * PER_NODE);
  CHECK(src && tr_start(&r) == 0);
  CHECK(start_nodes(d, NODES, r.url, "5s", &nodes) == 0);
  for (; threads < NODES * PER_NODE; threads++) {
    a[threads] = (sf_arg){d[threads / PER_NODE].sock, src, n, &start, {0}};
    CHECK(pthread_create(&th[threads], NULL, sf_thread, &a[threads]) == 0);
  }
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  int t = threads;
  threads = 0;
  for (int i = 0; i < t; i++) {
    CHECK_INT(a[i].a.status, ==, 0);
    CHECK(same_answer(&a[i].a, &a[0].a));
  }
  double compiles = 0, won = 0, waited = 0, rhits = 0, uploads = 0;
  for (int i = 0; i < NODES; i++) {
    rstat s;
    CHECK(rstats(d[i].sock, &s) == 0);
    fprintf(stderr, "node %d: compiles %llu, remote hits %.0f, leases won %.0f, "
                    "waited %.0f, uploads %.0f, entries %llu\n",
            i, (unsigned long long)s.compiles, s.remote_hits, s.leases_won,
            s.leases_waited, s.uploads, (unsigned long long)s.entries);
    compiles += (double)s.compiles;
    won += s.leases_won;
    waited += s.leases_waited;
    rhits += s.remote_hits;
    uploads += s.uploads;
    CHECK_INT(s.entries, ==, 1); /* every node has it in its own store */
    CHECK_INT(s.rejected, ==, 0);
  }
  CHECK_INT(compiles, ==, 1);                  /* one in the cluster */
  CHECK_INT(won, ==, 1);                       /* under one lease */
  CHECK_INT(rhits, ==, (NODES - 1) * PER_NODE); /* the others: remote */
  CHECK_INT(waited, <=, NODES - 1);
  failed = false;
fail:
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < NODES * PER_NODE; i++)
    free(a[i].a.ptx);
  pthread_barrier_destroy(&start);
  free(src);
  failed = fini_nodes(d, nodes, failed);
  tr_fini(&r);
  return failed ? IT_FAIL : IT_PASS;
}

/* ---- a fifth node ---------------------------------------------------------------- */

/* Wait until sock's daemon has uploaded at least n entries. */
static bool uploaded(const char *sock, double n) {
  for (int i = 0; i < 500; i++) {
    rstat s;
    if (rstats(sock, &s) == 0 && s.uploads >= n)
      return true;
    usleep(10000);
  }
  return false;
}

int it_remote_fifth_node(void) {
  if (!tr_available())
    return IT_SKIP;
  tredis r;
  tdaemon d[2];
  memset(d, 0, sizeof d);
  answer first = {0}, fifth = {0}, again = {0};
  int nodes = 0;
  bool failed = true;
  size_t n;
  char *src = it_slow_variant(40, 5, &n);
  rstat s;
  CHECK(src && tr_start(&r) == 0);
  CHECK(start_nodes(d, 2, r.url, "5s", &nodes) == 0);
  ask(d[0].sock, NULL, src, n, &first);
  CHECK_INT(first.status, ==, 0);
  CHECK_INT(first.cache, ==, TEENY_CACHE_MISS);
  CHECK(uploaded(d[0].sock, 1));
  ask(d[1].sock, NULL, src, n, &fifth);
  CHECK(same_answer(&first, &fifth));
  CHECK_INT(fifth.cache, ==, TEENY_CACHE_DISK); /* via its own store */
  CHECK(rstats(d[1].sock, &s) == 0);
  CHECK_INT(s.compiles, ==, 0);
  CHECK_INT(s.remote_hits, ==, 1);
  CHECK_INT(s.remote_misses, ==, 0);
  CHECK_INT(s.entries, ==, 1);
  CHECK(s.bytes_in > (double)strlen(fifth.ptx));
  ask(d[1].sock, NULL, src, n, &again); /* now local: memory */
  CHECK(same_answer(&first, &again));
  CHECK_INT(again.cache, ==, TEENY_CACHE_MEMORY);
  CHECK(rstats(d[1].sock, &s) == 0);
  CHECK_INT(s.remote_hits, ==, 1);
  failed = false;
fail:
  free(first.ptx), free(fifth.ptx), free(again.ptx);
  free(src);
  failed = fini_nodes(d, nodes, failed);
  tr_fini(&r);
  return failed ? IT_FAIL : IT_PASS;
}

/* ---- redis-server killed mid-storm ------------------------------------------------ */

#define STORM_KEYS 16    /* distinct kernels */
#define STORM_THREADS 6  /* clients, split over two daemons */
#define STORM_EACH 24    /* requests per client */

typedef struct storm {
  const char *sock;           /* its daemon */
  char **src;                 /* the kernels */
  size_t *len;                /* their lengths */
  int which;                  /* this client's number */
  int *done;                  /* replies so far, all clients (atomic) */
  answer a[STORM_EACH];       /* its replies */
  int key[STORM_EACH];        /* which kernel each asked */
  bool after_kill[STORM_EACH];/* sent after redis-server was killed */
  bool *killed;               /* set by the main thread (atomic) */
} storm;

static void *storm_thread(void *arg) {
  storm *s = arg;
  tclient c;
  tc_init(&c);
  if (tc_open(&c, s->sock)) {
    for (int i = 0; i < STORM_EACH; i++)
      s->a[i].status = -1;
    return NULL;
  }
  for (int i = 0; i < STORM_EACH; i++) {
    int k = (s->which * 5 + i * 3) % STORM_KEYS;
    s->key[i] = k;
    s->after_kill[i] = __atomic_load_n(s->killed, __ATOMIC_SEQ_CST);
    ask(NULL, &c, s->src[k], s->len[k], &s->a[i]);
    __atomic_add_fetch(s->done, 1, __ATOMIC_SEQ_CST);
  }
  tc_close(&c);
  return NULL;
}

int it_remote_redis_killed(void) {
  if (!tr_available())
    return IT_SKIP;
  tredis r;
  tdaemon d[3]; /* two on the remote, one without (the reference) */
  memset(d, 0, sizeof d);
  storm *st = calloc(STORM_THREADS, sizeof *st);
  pthread_t th[STORM_THREADS];
  char *src[STORM_KEYS] = {0};
  size_t len[STORM_KEYS];
  answer ref[STORM_KEYS];
  int nodes = 0, threads = 0, done = 0, after = 0;
  bool killed = false, failed = true;
  memset(ref, 0, sizeof ref);
  CHECK(st != NULL);
  for (int k = 0; k < STORM_KEYS; k++)
    CHECK((src[k] = it_slow_variant(20 + 10 * (k % 4), k, &len[k])) != NULL);
  CHECK(tr_start(&r) == 0);
  CHECK(start_nodes(d, 2, r.url, "300ms", &nodes) == 0);
  for (; threads < STORM_THREADS; threads++) {
    st[threads] = (storm){.sock = d[threads % 2].sock, .src = src, .len = len,
                          .which = threads, .done = &done, .killed = &killed};
    CHECK(pthread_create(&th[threads], NULL, storm_thread, &st[threads]) == 0);
  }
  int total = STORM_THREADS * STORM_EACH;
  while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < total / 3)
    usleep(2000);
  tr_kill(&r); /* mid-storm */
  __atomic_store_n(&killed, true, __ATOMIC_SEQ_CST);
  fprintf(stderr, "redis-server killed after %d of %d replies\n",
          __atomic_load_n(&done, __ATOMIC_SEQ_CST), total);
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  threads = 0;
  /* the reference: the same kernels on a daemon without a remote */
  CHECK(td_init(&d[2]) == 0);
  nodes = 3;
  CHECK(td_start(&d[2], NULL, NULL) == 0);
  for (int k = 0; k < STORM_KEYS; k++) {
    ask(d[2].sock, NULL, src[k], len[k], &ref[k]);
    CHECK_INT(ref[k].status, ==, 0);
  }
  int bad = 0, wrong = 0;
  for (int t = 0; t < STORM_THREADS; t++)
    for (int i = 0; i < STORM_EACH; i++) {
      bad += st[t].a[i].status != 0;
      wrong += st[t].a[i].status == 0 && !same_answer(&st[t].a[i], &ref[st[t].key[i]]);
      after += st[t].after_kill[i];
    }
  fprintf(stderr, "%d replies, %d sent after the kill: %d failed, %d wrong\n",
          total, after, bad, wrong);
  CHECK_INT(bad, ==, 0);
  CHECK_INT(wrong, ==, 0);
  CHECK_INT(after, >, 0); /* the kill really was mid-storm */
  for (int i = 0; i < 2; i++) {
    rstat s;
    CHECK(rstats(d[i].sock, &s) == 0);
    fprintf(stderr, "node %d: compiles %llu, remote hits %.0f, errors %.0f, "
                    "unavailable %.0f, up %.0f\n",
            i, (unsigned long long)s.compiles, s.remote_hits, s.remote_errors,
            s.unavailable, s.up);
    CHECK_INT(s.up, ==, 0);
    CHECK(s.remote_errors >= 1);
    /* one warning per daemon, however many requests it then served */
    CHECK_INT(it_count_in_file(d[i].log, "serving from the local store"), ==, 1);
  }
  failed = false;
fail:
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  for (int t = 0; st && t < STORM_THREADS; t++)
    for (int i = 0; i < STORM_EACH; i++)
      free(st[t].a[i].ptx);
  for (int k = 0; k < STORM_KEYS; k++)
    free(src[k]), free(ref[k].ptx);
  free(st);
  failed = fini_nodes(d, nodes, failed);
  tr_fini(&r);
  return failed ? IT_FAIL : IT_PASS;
}

/* ---- corrupted and replaced entries ------------------------------------------------- */

int it_remote_corrupt_entry(void) {
  if (!tr_available())
    return IT_SKIP;
  tredis r;
  tdaemon d[4];
  memset(d, 0, sizeof d);
  answer a1 = {0}, a2 = {0}, b = {0}, c = {0}, e = {0};
  int nodes = 0;
  bool failed = true;
  size_t n1, n2;
  char *k1 = it_slow_variant(30, 1, &n1), *k2 = it_slow_variant(30, 2, &n2);
  char *v2 = NULL;
  size_t v2len = 0;
  char ek1[160], ek2[160];
  rstat s;
  CHECK(k1 && k2 && tr_start(&r) == 0);
  CHECK(start_nodes(d, 4, r.url, "5s", &nodes) == 0);
  ask(d[0].sock, NULL, k1, n1, &a1);
  ask(d[0].sock, NULL, k2, n2, &a2);
  CHECK(a1.status == 0 && a2.status == 0);
  CHECK(uploaded(d[0].sock, 2));
  snprintf(ek1, sizeof ek1, "teenyc:v1:e:{%s}", a1.key);
  snprintf(ek2, sizeof ek2, "teenyc:v1:e:{%s}", a2.key);
  CHECK(tr_cmd(&r, NULL, NULL, "EXISTS %s", ek1) == 1);

  /* one byte of the artifact flipped: node B refuses it and compiles */
  CHECK(tr_cmd(&r, NULL, NULL, "SETRANGE %s 300 %b", ek1, "\x5a", (size_t)1) > 0);
  ask(d[1].sock, NULL, k1, n1, &b);
  CHECK(same_answer(&a1, &b));
  CHECK(rstats(d[1].sock, &s) == 0);
  CHECK_INT(s.compiles, ==, 1);
  CHECK_INT(s.rejected, ==, 1);
  CHECK_INT(s.remote_hits, ==, 0);
  CHECK_INT(it_count_in_file(d[1].log, "refused (digest mismatch"), ==, 1);
  CHECK(uploaded(d[1].sock, 1)); /* its upload put a good one back */

  /* replaced by another key's (valid) entry: node C refuses it too */
  CHECK(tr_cmd(&r, &v2, &v2len, "GET %s", ek2) > 0);
  CHECK(tr_cmd(&r, NULL, NULL, "SET %s %b", ek1, v2, v2len) > 0);
  ask(d[2].sock, NULL, k1, n1, &c);
  CHECK(same_answer(&a1, &c));
  CHECK(rstats(d[2].sock, &s) == 0);
  CHECK_INT(s.compiles, ==, 1);
  CHECK_INT(s.rejected, ==, 1);
  CHECK_INT(it_count_in_file(d[2].log, "refused (another key's entry"), ==, 1);
  CHECK(uploaded(d[2].sock, 1));

  /* and the entry C uploaded serves node E as a verified remote hit */
  ask(d[3].sock, NULL, k1, n1, &e);
  CHECK(same_answer(&a1, &e));
  CHECK(rstats(d[3].sock, &s) == 0);
  CHECK_INT(s.compiles, ==, 0);
  CHECK_INT(s.remote_hits, ==, 1);
  CHECK_INT(s.rejected, ==, 0);
  failed = false;
fail:
  free(a1.ptx), free(a2.ptx), free(b.ptx), free(c.ptx), free(e.ptx);
  free(k1), free(k2), free(v2);
  failed = fini_nodes(d, nodes, failed);
  tr_fini(&r);
  return failed ? IT_FAIL : IT_PASS;
}

/* ---- a remote that never answers ------------------------------------------------------ */

#define SILENT_KERNELS 8
#define SILENT_TIMEOUT_MS 300

int it_remote_silent(void) {
  tdaemon d[2]; /* [0] without a remote (how long compiles take), [1] silent */
  memset(d, 0, sizeof d);
  tsilent sl;
  sl.fd = -1;
  answer base[SILENT_KERNELS], got[SILENT_KERNELS];
  char *src[SILENT_KERNELS] = {0};
  size_t len[SILENT_KERNELS];
  int nodes = 0;
  bool failed = true;
  memset(base, 0, sizeof base);
  memset(got, 0, sizeof got);
  char timeout[16];
  snprintf(timeout, sizeof timeout, "%dms", SILENT_TIMEOUT_MS);
  for (int k = 0; k < SILENT_KERNELS; k++)
    CHECK((src[k] = it_slow_variant(20, 100 + k, &len[k])) != NULL);
  CHECK(start_nodes(d, 1, NULL, NULL, &nodes) == 0);
  CHECK(ts_start(&sl, d[0].dir) == 0);
  CHECK(td_init(&d[1]) == 0);
  nodes = 2;
  {
    const char *args[] = {"--remote", sl.url, "--remote-timeout", timeout, NULL};
    CHECK(td_start(&d[1], args, NULL) == 0);
  }
  double base_max = 0, got_max = 0;
  int stalled = 0;
  for (int k = 0; k < SILENT_KERNELS; k++) {
    ask(d[0].sock, NULL, src[k], len[k], &base[k]);
    ask(d[1].sock, NULL, src[k], len[k], &got[k]);
    CHECK_INT(base[k].status, ==, 0);
    CHECK_INT(got[k].status, ==, 0);
    CHECK(same_answer(&base[k], &got[k]));
    base_max = base[k].ms > base_max ? base[k].ms : base_max;
    got_max = got[k].ms > got_max ? got[k].ms : got_max;
    stalled += got[k].ms >= SILENT_TIMEOUT_MS;
    fprintf(stderr, "kernel %d: %.1f ms without a remote, %.1f ms with the silent one\n",
            k, base[k].ms, got[k].ms);
  }
  /* bounded by the timeout (plus scheduling noise on a loaded machine), and
   * only while it first finds out or re-probes: not every request */
  CHECK(got_max <= base_max + SILENT_TIMEOUT_MS + 1000);
  CHECK_INT(stalled, <=, 2); /* the first finds out; later ones: at once */
  rstat s;
  CHECK(rstats(d[1].sock, &s) == 0);
  CHECK_INT(s.up, ==, 0);
  CHECK(s.unavailable >= SILENT_KERNELS / 2);
  CHECK_INT(it_count_in_file(d[1].log, "serving from the local store"), ==, 1);
  failed = false;
fail:
  for (int k = 0; k < SILENT_KERNELS; k++)
    free(src[k]), free(base[k].ptx), free(got[k].ptx);
  failed = td_fini(&d[1], failed) || failed; /* before the listener goes */
  ts_stop(&sl);
  failed = td_fini(&d[0], failed) || failed;
  (void)nodes;
  return failed ? IT_FAIL : IT_PASS;
}
