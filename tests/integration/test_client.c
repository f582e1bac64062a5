/*
 * tests/integration/test_client.c — libteenyc-client against the real
 * teenycd (started by tclient.h's harness on a temporary socket and store):
 * miss/hit/diagnostics, the memo (no socket traffic: the daemon's request
 * counter does not move), batches, reconnect after the daemon is stopped
 * or killed and restarted between two calls, auto mode falling back to the
 * store, and a daemon plus two embedded processes filling one store at
 * once (afterwards it verifies clean and every entry is right).
 *
 * `client_itest NAME` runs one test (77: skipped), like teenycd_itest.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"
#include "tests/integration/test_client.h"

/* ---- helpers --------------------------------------------------------------------- */

/* A client of d in mode: memo entries memo (< 0: none), waiting up to
 * wait_ms for a restarting daemon (< 0: not at all). */
static teeny_client *mclient(const tdaemon *d, teeny_client_mode mode, long memo,
                             int wait_ms) {
  teeny_client_opts o = {.mode = mode, .socket_path = d->sock, .cache_dir = d->cache,
                         .memo_entries = memo, .timeout_ms = 120000,
                         .client_name = "client_itest/1", .restart_wait_ms = wait_ms};
  teeny_client *c = NULL;
  if (teeny_client_open(&c, &o)) {
    fprintf(stderr, "open: %s\n", teeny_client_errmsg(c));
    teeny_client_close(c);
    return NULL;
  }
  return c;
}

static teeny_client *dclient(const tdaemon *d, teeny_client_mode mode, long memo) {
  return mclient(d, mode, memo, -1);
}

/* A request over one example kernel with one dtype and one const. */
typedef struct req1 {
  teeny_compile_req req;
  teeny_dtype_binding dt[1];
  teeny_const_binding ct[1];
  char *src; /* owned */
} req1;

static int req1_init(req1 *r, const char *kernel, const char *dtype, int64_t block) {
  memset(r, 0, sizeof *r);
  size_t len;
  if (!(r->src = tc_kernel_source(kernel, &len)))
    return -1;
  r->dt[0] = (teeny_dtype_binding){"D", dtype};
  r->ct[0] = (teeny_const_binding){"BLOCK_SIZE", block};
  r->req = (teeny_compile_req){.source = r->src, .source_len = len, .filename = kernel,
                               .kernel = kernel, .dtypes = r->dt, .ndtypes = 1,
                               .consts = r->ct, .nconsts = 1};
  return 0;
}

/* The daemon's counter name, read over a client of its own. */
static double counter(const tdaemon *d, const char *name) {
  teeny_client *c = dclient(d, TEENY_MODE_DAEMON, -1);
  teeny_admin_req q = {.op = TEENY_ADMIN_STATS};
  teeny_admin_reply *r = NULL;
  double v = -1;
  if (c && teeny_client_admin(c, &q, &r) == 0)
    v = teeny_admin_counter(r, name);
  teeny_admin_reply_free(r);
  teeny_client_close(c);
  return v;
}

/* An offline compile of req (the reference every cached artifact must
 * equal).  NULL on failure. */
static teeny_client_result *offline(const teeny_compile_req *req) {
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE, .memo_entries = -1};
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  if (teeny_client_open(&c, &o) == 0)
    teeny_client_compile(c, req, TEENY_EMIT_PTX, &r);
  teeny_client_close(c);
  return r;
}

static bool same_ptx(const teeny_client_result *a, const teeny_client_result *b) {
  return a && b && a->art.ptx && b->art.ptx && a->art.ptx_len == b->art.ptx_len &&
         memcmp(a->art.ptx, b->art.ptx, a->art.ptx_len) == 0;
}

/* ---- miss, hit, diagnostics ------------------------------------------------------------ */

static int it_client_hit_miss(void) {
  tdaemon d;
  teeny_client *c = NULL, *c2 = NULL;
  teeny_client_result *r = NULL, *r2 = NULL, *ref = NULL;
  req1 v = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(req1_init(&v, "vector_add", "f32", 1024) == 0);
  CHECK((c = dclient(&d, TEENY_MODE_DAEMON, 0)) != NULL);
  CHECK_INT(teeny_client_active_mode(c), ==, TEENY_MODE_DAEMON);
  CHECK_INT(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_EMIT_SOURCE, &r), ==, 0);
  CHECK_INT(r->cache, ==, TEENY_CLIENT_MISS);
  CHECK_INT(r->mode, ==, TEENY_MODE_DAEMON);
  CHECK(strcmp(r->art.id, "vector_add__f32__1024") == 0);
  CHECK(r->art.source && strstr(r->art.source, "TEENY_BIND(D, f32);"));
  CHECK(r->art.mlir == NULL); /* not asked for */
  CHECK(r->compile_ms > 0);
  /* the same bytes as an offline compile */
  CHECK((ref = offline(&v.req)) != NULL && same_ptx(r, ref));
  CHECK(strcmp(r->art.key, ref->art.key) == 0);
  /* another client: a hit in the daemon (its memory map keys on emit too,
   * so with MLIR added this one may come from the store) */
  CHECK((c2 = dclient(&d, TEENY_MODE_DAEMON, -1)) != NULL);
  CHECK_INT(teeny_client_compile(c2, &v.req, TEENY_EMIT_PTX | TEENY_EMIT_MLIR, &r2), ==, 0);
  CHECK(r2->cache == TEENY_CLIENT_MEMORY || r2->cache == TEENY_CLIENT_DISK);
  CHECK(same_ptx(r2, ref) && r2->art.mlir && strstr(r2->art.mlir, "tt.func"));
  teeny_client_result_free(r2);
  r2 = NULL;
  /* diagnostics pass through with file:line:col */
  static const char bad[] = "#include <teeny/dsl.h>\nTEENY_KERNEL()\n"
                            "void k(ptr(f32) x) {\n  store(x, nope);\n}\n";
  teeny_compile_req breq = {.source = bad, .source_len = sizeof bad - 1,
                            .filename = "bad.c", .kernel = "k"};
  CHECK_INT(teeny_client_compile(c2, &breq, TEENY_EMIT_PTX, &r2), ==, TEENY_E_COMPILE);
  CHECK(r2 && r2->status == TEENY_E_COMPILE && r2->ndiags >= 1);
  CHECK(strcmp(r2->diags[0].file, "bad.c") == 0);
  CHECK_INT(r2->diags[0].line, ==, 4);
  CHECK_INT(r2->diags[0].col, >, 0);
  CHECK(r2->diags[0].source_line && strstr(r2->diags[0].source_line, "nope"));
  CHECK(strstr(teeny_client_errmsg(c2), "nope") != NULL);
  teeny_client_result_free(r2);
  r2 = NULL;
  /* a bad kernel name is refused by the daemon, as a result */
  teeny_compile_req nreq = v.req;
  nreq.kernel = "no/such";
  CHECK_INT(teeny_client_compile(c2, &nreq, TEENY_EMIT_PTX, &r2), <, 0);
  CHECK(r2 && r2->status < 0 && r2->error);
  failed = false;
fail:
  teeny_client_result_free(r);
  teeny_client_result_free(r2);
  teeny_client_result_free(ref);
  teeny_client_close(c);
  teeny_client_close(c2);
  free(v.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the memo ------------------------------------------------------------------------- */

static int it_client_memo(void) {
  tdaemon d;
  teeny_client *c = NULL;
  teeny_client_result *r1 = NULL, *r2 = NULL, *r3 = NULL;
  req1 v = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(req1_init(&v, "softmax", "f32", 1024) == 0);
  CHECK((c = dclient(&d, TEENY_MODE_DAEMON, 0)) != NULL);
  CHECK_INT(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r1), ==, 0);
  CHECK_INT(r1->cache, ==, TEENY_CLIENT_MISS);
  /* What reading the counter costs by itself... */
  double s1 = counter(&d, "requests"), s2 = counter(&d, "requests");
  double base = s2 - s1;
  CHECK(s1 >= 0 && base >= 1);
  /* ...is all the counter moves across a memo hit: no request was sent. */
  double h3 = counter(&d, "hits"), s3 = counter(&d, "requests");
  CHECK_INT(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r2), ==, 0);
  double s4 = counter(&d, "requests"), h4 = counter(&d, "hits");
  CHECK_INT(r2->cache, ==, TEENY_CLIENT_MEMO);
  CHECK(r2->art.ptx == r1->art.ptx);
  CHECK_INT(s4 - s3, ==, base);
  CHECK_INT(h4, ==, h3);
  /* The daemon sent PTX only, so asking for MLIR too must go to it. */
  CHECK_INT(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_EMIT_MLIR, &r3), ==, 0);
  CHECK(r3->cache == TEENY_CLIENT_MEMORY || r3->cache == TEENY_CLIENT_DISK);
  CHECK(r3->art.mlir != NULL);
  CHECK_INT(counter(&d, "hits"), ==, h4 + 1);
  failed = false;
fail:
  teeny_client_result_free(r1);
  teeny_client_result_free(r2);
  teeny_client_result_free(r3);
  teeny_client_close(c);
  free(v.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- batches ------------------------------------------------------------------------------ */

static int it_client_batch(void) {
  enum { N = 10 };
  tdaemon d;
  teeny_client *c = NULL;
  teeny_client_result *out[N] = {0};
  req1 v[N];
  memset(v, 0, sizeof v);
  teeny_compile_req reqs[N];
  bool failed = true;
  static const int64_t blocks[N] = {128, 256, 512, 1024, 128, 256, 2048, 4096, 128, 64};
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  for (int i = 0; i < N; i++) {
    CHECK(req1_init(&v[i], i == 7 ? "softmax" : "vector_add", i % 2 ? "f16" : "f32",
                    blocks[i]) == 0);
    reqs[i] = v[i].req;
  }
  v[9].dt[0].dtype = "i8"; /* refused, with diagnostics */
  reqs[9] = v[9].req;
  CHECK((c = dclient(&d, TEENY_MODE_DAEMON, 0)) != NULL);
  CHECK_INT(teeny_client_compile_batch(c, reqs, N, TEENY_EMIT_PTX, out), ==, 0);
  for (int i = 0; i < 9; i++) {
    char id[64];
    snprintf(id, sizeof id, "%s__%s__%lld", reqs[i].kernel, reqs[i].dtypes[0].dtype,
             (long long)blocks[i]);
    CHECK(out[i] && out[i]->status == 0 && strcmp(out[i]->art.id, id) == 0);
    CHECK(out[i]->art.ptx != NULL);
  }
  CHECK(strcmp(out[0]->art.key, out[8]->art.key) == 0); /* same request twice */
  CHECK(out[9] && out[9]->status == TEENY_E_BINDING && out[9]->ndiags >= 1);
  /* 8 distinct keys among the 9 good requests: at most 8 compiles */
  CHECK_INT(counter(&d, "compiles"), <=, 8);
  for (int i = 0; i < N; i++) {
    teeny_client_result_free(out[i]);
    out[i] = NULL;
  }
  CHECK_INT(teeny_client_compile_batch(c, reqs, N, TEENY_EMIT_PTX, out), ==, 0);
  for (int i = 0; i < 9; i++)
    CHECK_INT(out[i]->cache, ==, TEENY_CLIENT_MEMO);
  failed = false;
fail:
  for (int i = 0; i < N; i++) {
    teeny_client_result_free(out[i]);
    free(v[i].src);
  }
  teeny_client_close(c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- reconnect --------------------------------------------------------------------------- */

static int it_client_reconnect(void) {
  tdaemon d;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  req1 a = {0}, b = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(req1_init(&a, "vector_add", "f32", 512) == 0);
  CHECK(req1_init(&b, "vector_add", "f16", 512) == 0);
  CHECK((c = dclient(&d, TEENY_MODE_DAEMON, 0)) != NULL);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->cache, ==, TEENY_CLIENT_MISS);
  teeny_client_result_free(r);
  r = NULL;
  /* a clean restart between two calls */
  CHECK_INT(td_stop(&d), !=, -1);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r), ==, 0);
  CHECK_INT(r->cache, ==, TEENY_CLIENT_DISK); /* the store kept it */
  teeny_client_result_free(r);
  r = NULL;
  /* kill -9 and restart between two calls */
  td_kill(&d);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(teeny_client_compile(c, &b.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->cache, ==, TEENY_CLIENT_MISS);
  CHECK_INT(teeny_client_active_mode(c), ==, TEENY_MODE_DAEMON);
  teeny_client_result_free(r);
  r = NULL;
  /* no daemon at all: daemon mode says so, and comes back with it */
  CHECK_INT(td_stop(&d), !=, -1);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r), ==,
            TEENY_E_CONNECT);
  CHECK(r == NULL && strstr(teeny_client_errmsg(c), d.sock));
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r), ==, 0);
  failed = false;
fail:
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(a.src);
  free(b.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

static int it_client_auto_fallback(void) {
  tdaemon d;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  req1 a = {0}, b = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(req1_init(&a, "layernorm", "f32", 256) == 0);
  CHECK(req1_init(&b, "layernorm", "f16", 256) == 0);
  CHECK((c = dclient(&d, TEENY_MODE_AUTO, 0)) != NULL);
  CHECK_INT(teeny_client_active_mode(c), ==, TEENY_MODE_DAEMON);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->mode, ==, TEENY_MODE_DAEMON);
  teeny_client_result_free(r);
  r = NULL;
  CHECK_INT(td_stop(&d), !=, -1); /* gone for good */
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r), ==, 0);
  CHECK_INT(r->mode, ==, TEENY_MODE_EMBEDDED);
  CHECK_INT(r->cache, ==, TEENY_CLIENT_DISK); /* what the daemon stored */
  CHECK_INT(teeny_client_active_mode(c), ==, TEENY_MODE_EMBEDDED);
  teeny_client_result_free(r);
  r = NULL;
  CHECK_INT(teeny_client_compile(c, &b.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->cache, ==, TEENY_CLIENT_MISS);
  failed = false;
fail:
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(a.src);
  free(b.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- riding out restarts (issue 18) ------------------------------------------------ */

/* Start d after ms milliseconds (a thread: the daemon is restarting). */
typedef struct later {
  tdaemon *d;
  int ms;
  int rc;
} later;

static void *start_later(void *p) {
  later *l = p;
  usleep((useconds_t)l->ms * 1000);
  l->rc = td_start(l->d, NULL, NULL);
  return NULL;
}

static teeny_client *wclient(const tdaemon *d, teeny_client_mode mode, int wait_ms) {
  return mclient(d, mode, -1, wait_ms);
}

/* daemon mode: a call made while teenycd restarts waits for it (within
 * restart_wait_ms) instead of failing; one made during a longer outage
 * fails once the wait is over. */
static int it_client_restart_wait(void) {
  tdaemon d;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  req1 a = {0};
  bool failed = true, started = false;
  pthread_t th;
  later l = {&d, 700, -1};
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(req1_init(&a, "vector_add", "f32", 256) == 0);
  CHECK((c = wclient(&d, TEENY_MODE_DAEMON, 20000)) != NULL);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r), ==, 0);
  teeny_client_result_free(r);
  r = NULL;
  for (int round = 0; round < 2; round++) { /* SIGTERM, then kill -9 */
    if (round == 0)
      CHECK_INT(td_stop(&d), ==, 0);
    else
      td_kill(&d);
    CHECK(pthread_create(&th, NULL, start_later, &l) == 0);
    started = true;
    int rc = teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r);
    if (rc)
      fprintf(stderr, "during restart %d: %s\n", round, teeny_client_errmsg(c));
    CHECK_INT(rc, ==, 0);
    CHECK_INT(r->mode, ==, TEENY_MODE_DAEMON);
    teeny_client_result_free(r);
    r = NULL;
    pthread_join(th, NULL);
    started = false;
    CHECK_INT(l.rc, ==, 0);
  }
  teeny_client_close(c);
  /* longer than the wait: fails, after waiting */
  CHECK((c = wclient(&d, TEENY_MODE_DAEMON, 300)) != NULL);
  CHECK_INT(td_stop(&d), ==, 0);
  uint64_t t0 = tc_now_us();
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r), ==, TEENY_E_CONNECT);
  CHECK(tc_now_us() - t0 >= 300000);
  CHECK(strstr(teeny_client_errmsg(c), "within 300 ms"));
  failed = false;
fail:
  if (started)
    pthread_join(th, NULL);
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(a.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* A request that a stopping daemon refuses (SHUTDOWN) is sent again to the
 * daemon that takes over the socket (here on another store, while the old
 * one still drains a compile). */
static int it_client_shutdown_retry(void) {
  tdaemon a, b;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  tclient slow;
  req1 q = {0};
  bool failed = true;
  tc_init(&slow);
  CHECK(td_init(&a) == 0 && td_init(&b) == 0);
  snprintf(b.sock, sizeof b.sock, "%s", a.sock);
  const char *args[] = {"--shutdown-timeout", "60s", NULL};
  CHECK(td_start(&a, args, NULL) == 0);
  CHECK(req1_init(&q, "vector_add", "f32", 256) == 0);
  CHECK((c = wclient(&a, TEENY_MODE_DAEMON, 20000)) != NULL);
  CHECK_INT(teeny_client_compile(c, &q.req, TEENY_EMIT_PTX, &r), ==, 0);
  teeny_client_result_free(r);
  r = NULL;
  /* keep A draining: a slow compile in flight */
  CHECK(tc_open(&slow, a.sock) == 0 && it_send_slow(&slow, 400, 7, 8192, 0) == 0);
  usleep(200000);
  kill(a.pid, SIGTERM);
  for (int i = 0; i < 1000 && access(a.sock, F_OK) == 0; i++)
    usleep(10000); /* A stopped listening (its socket is gone) */
  CHECK(td_start(&b, NULL, NULL) == 0);
  /* c's connection is still A's: A answers SHUTDOWN, c retries on B */
  q.ct[0].value = 512;
  int rc = teeny_client_compile(c, &q.req, TEENY_EMIT_PTX, &r);
  if (rc)
    fprintf(stderr, "after A's SIGTERM: %s\n", teeny_client_errmsg(c));
  CHECK_INT(rc, ==, 0);
  CHECK_INT(r->mode, ==, TEENY_MODE_DAEMON);
  CHECK_INT(counter(&b, "compiles"), ==, 1); /* B compiled it */
  failed = false;
fail:
  teeny_client_result_free(r);
  teeny_client_close(c);
  tc_close(&slow);
  free(q.src);
  failed = td_fini(&b, failed);
  return td_fini(&a, failed) ? IT_FAIL : IT_PASS;
}

/* auto mode: in process while teenycd is down, back on it as soon as it
 * answers again. */
static int it_client_auto_return(void) {
  tdaemon d;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  req1 a = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(req1_init(&a, "vector_add", "f32", 256) == 0);
  CHECK((c = wclient(&d, TEENY_MODE_AUTO, 0)) != NULL);
  CHECK_INT(teeny_client_active_mode(c), ==, TEENY_MODE_DAEMON);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->mode, ==, TEENY_MODE_EMBEDDED);
  teeny_client_result_free(r);
  r = NULL;
  CHECK(td_start(&d, NULL, NULL) == 0);
  uint64_t t0 = tc_now_us();
  int calls = 0;
  teeny_client_mode m = TEENY_MODE_EMBEDDED;
  while (m != TEENY_MODE_DAEMON && tc_now_us() - t0 < 20000000) {
    CHECK_INT(teeny_client_compile(c, &a.req, TEENY_EMIT_PTX, &r), ==, 0);
    m = r->mode;
    calls++;
    teeny_client_result_free(r);
    r = NULL;
    usleep(20000);
  }
  fprintf(stderr, "back on the daemon after %d calls, %.2f s\n", calls,
          (double)(tc_now_us() - t0) / 1e6);
  CHECK_INT(m, ==, TEENY_MODE_DAEMON);
  CHECK_INT(teeny_client_active_mode(c), ==, TEENY_MODE_DAEMON);
  failed = false;
fail:
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(a.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- one store, a daemon and two embedded processes ------------------------------------- */

#define NSPEC 24

/* Request i of the shared workload (overlapping between the writers). */
static int spec_init(req1 *r, int i) {
  static const char *const kernels[] = {"vector_add", "softmax", "layernorm"};
  static const char *const dts[] = {"f32", "f16"};
  return req1_init(r, kernels[i % 3], dts[(i / 3) % 2], (int64_t)256 << (i / 6));
}

/* One embedded writer: compile every spec, in an order of its own. */
static int embedded_writer(const tdaemon *d, int seed) {
  teeny_client *c = dclient(d, TEENY_MODE_EMBEDDED, -1);
  if (!c)
    return 10;
  int bad = 0;
  for (int k = 0; k < NSPEC; k++) {
    int i = (k * 5 + seed) % NSPEC;
    req1 r;
    teeny_client_result *res = NULL;
    if (spec_init(&r, i) || teeny_client_compile(c, &r.req, TEENY_EMIT_PTX, &res) ||
        res->mode != TEENY_MODE_EMBEDDED || !res->art.ptx)
      bad++;
    for (size_t j = 0; res && j < res->ndiags; j++) /* e.g. a refused put */
      if (res->diags[j].level == TEENY_DIAG_WARNING)
        bad++;
    teeny_client_result_free(res);
    free(r.src);
  }
  teeny_client_close(c);
  return bad ? 1 : 0;
}

static pid_t spawn_writer(const tdaemon *d, int seed) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0)
    _exit(embedded_writer(d, seed));
  return pid;
}

/* Every entry in the store is the offline compile of its request. */
static int check_entries(teeny_client *c) {
  int bad = 0;
  for (int i = 0; i < NSPEC; i++) {
    req1 r;
    teeny_client_result *ref = NULL;
    teeny_admin_reply *show = NULL;
    if (spec_init(&r, i) || !(ref = offline(&r.req)))
      return -1;
    teeny_admin_req q = {.op = TEENY_ADMIN_SHOW, .key = ref->art.key, .emit = TEENY_EMIT_PTX};
    if (teeny_client_admin(c, &q, &show) || show->nentries != 1 || !show->ptx ||
        show->ptx_len != ref->art.ptx_len ||
        memcmp(show->ptx, ref->art.ptx, show->ptx_len) != 0 ||
        strcmp(show->entries[0].id, ref->art.id) != 0) {
      fprintf(stderr, "entry %s (%s) is wrong or missing\n", ref->art.key, ref->art.id);
      bad++;
    }
    teeny_admin_reply_free(show);
    teeny_client_result_free(ref);
    free(r.src);
  }
  return bad;
}

static int it_client_embedded_concurrent(void) {
  tdaemon d;
  teeny_client *c = NULL;
  teeny_admin_reply *rep = NULL;
  pid_t w1 = -1, w2 = -1;
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK((c = dclient(&d, TEENY_MODE_DAEMON, -1)) != NULL);
  CHECK((w1 = spawn_writer(&d, 0)) > 0);
  CHECK((w2 = spawn_writer(&d, 7)) > 0);
  for (int k = 0; k < NSPEC; k++) { /* the daemon's share, at the same time */
    req1 r;
    teeny_client_result *res = NULL;
    CHECK(spec_init(&r, (k * 7 + 3) % NSPEC) == 0);
    int rc = teeny_client_compile(c, &r.req, TEENY_EMIT_PTX, &res);
    teeny_client_result_free(res);
    free(r.src);
    CHECK_INT(rc, ==, 0);
  }
  int s1 = td_wait(w1, 120000), s2 = td_wait(w2, 120000);
  w1 = w2 = -1;
  CHECK(s1 != -1 && WIFEXITED(s1) && WEXITSTATUS(s1) == 0);
  CHECK(s2 != -1 && WIFEXITED(s2) && WEXITSTATUS(s2) == 0);
  /* the store verifies clean and holds exactly the NSPEC right entries */
  teeny_admin_req v = {.op = TEENY_ADMIN_VERIFY};
  CHECK_INT(teeny_client_admin(c, &v, &rep), ==, 0);
  for (size_t i = 0; i < rep->nproblems; i++)
    fprintf(stderr, "verify: %s: %s\n", rep->problems[i].key, rep->problems[i].problem);
  CHECK_INT(rep->nproblems, ==, 0);
  CHECK_INT(rep->checked, ==, NSPEC);
  CHECK_INT(check_entries(c), ==, 0);
  failed = false;
fail:
  if (w1 > 0)
    kill(w1, SIGKILL), waitpid(w1, NULL, 0);
  if (w2 > 0)
    kill(w2, SIGKILL), waitpid(w2, NULL, 0);
  teeny_admin_reply_free(rep);
  teeny_client_close(c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- main ------------------------------------------------------------------------------------ */

int it_client_teenyctl(void);     /* test_client_ctl.c */
int it_client_teenyctl_cli(void); /* test_client_cli.c */

static const it_test tests[] = {
    {"client_hit_miss", it_client_hit_miss},
    {"client_memo", it_client_memo},
    {"client_batch", it_client_batch},
    {"client_reconnect", it_client_reconnect},
    {"client_auto_fallback", it_client_auto_fallback},
    {"client_restart_wait", it_client_restart_wait},
    {"client_shutdown_retry", it_client_shutdown_retry},
    {"client_auto_return", it_client_auto_return},
    {"client_embedded_concurrent", it_client_embedded_concurrent},
    {"client_teenyctl", it_client_teenyctl},
    {"client_teenyctl_cli", it_client_teenyctl_cli},
    {"client_thin_maps", it_client_thin_maps},
    {"client_discovery", it_client_discovery},
    {"client_socket_group", it_client_socket_group},
    {"client_auto_notice", it_client_auto_notice},
    {"client_embedded_root", it_client_embedded_root},
    {"client_damaged_store", it_client_damaged_store},
    {"client_tune_single_flight", it_client_tune_single_flight},
    {"client_tune_restart", it_client_tune_restart},
    {"client_tune_tuner_dies", it_client_tune_tuner_dies},
    {"client_cubin_arch", it_client_cubin_arch},
};

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  unsetenv("TEENYC_MODE");
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
      printf("%s\n", tests[i].name);
    return 0;
  }
  for (size_t i = 0; argc == 2 && i < sizeof tests / sizeof *tests; i++) {
    if (strcmp(argv[1], tests[i].name) != 0)
      continue;
    uint64_t t0 = tc_now_us();
    int rc = tests[i].fn();
    fprintf(stderr, "%s: %s (%.2f s)\n", tests[i].name,
            rc == IT_PASS ? "ok" : rc == IT_SKIP ? "SKIPPED" : "FAILED",
            (double)(tc_now_us() - t0) / 1e6);
    return rc;
  }
  fprintf(stderr, "usage: client_itest NAME | --list\n");
  return 2;
}
