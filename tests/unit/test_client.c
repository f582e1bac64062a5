/*
 * tests/unit/test_client.c — libteenyc-client without a daemon: socket and
 * mode resolution, daemon mode refusing to start with nothing listening,
 * offline and embedded compiles (miss, then a disk hit from another
 * client), the memo (exact, and skipped by NO_MEMO and FORCE), diagnostics
 * carried in results, batches, threads sharing one client, and the
 * teeny_kernel runtime under generated code.
 *
 * Each test runs in its own mkdtemp() directory (check forks per test, so
 * environment changes stay inside the test).
 */
#include <check.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_util.h"
#include "teeny/client.h"

static char tdir[128];  /* the test's temp directory */
static char store[192]; /* tdir/store */

static void setup(void) {
  snprintf(tdir, sizeof tdir, "/tmp/teeny_client_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tdir));
  snprintf(store, sizeof store, "%s/store", tdir);
  unsetenv("TEENYC_MODE");
  unsetenv("TEENYCD_SOCKET");
  unsetenv("TEENYC_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  setenv("XDG_RUNTIME_DIR", tdir, 1); /* no daemon listens here */
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}

static void teardown(void) { nftw(tdir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

/* vector_add, f32, with the given BLOCK_SIZE. */
typedef struct vreq {
  teeny_compile_req req;
  teeny_dtype_binding dt[1];
  teeny_const_binding ct[1];
} vreq;

static char *vsrc;
static size_t vlen;

static void vreq_init(vreq *v, int64_t block) {
  if (!vsrc)
    vsrc = ku_read_example("vector_add", &vlen);
  memset(v, 0, sizeof *v);
  v->dt[0] = (teeny_dtype_binding){"D", "f32"};
  v->ct[0] = (teeny_const_binding){"BLOCK_SIZE", block};
  v->req = (teeny_compile_req){.source = vsrc, .source_len = vlen, .filename = "vector_add.c",
                               .kernel = "vector_add", .dtypes = v->dt, .ndtypes = 1,
                               .consts = v->ct, .nconsts = 1};
}

static teeny_client *open_mode(teeny_client_mode m) {
  teeny_client_opts o = {.mode = m, .cache_dir = store};
  teeny_client *c = NULL;
  int rc = teeny_client_open(&c, &o);
  ck_assert_msg(rc == 0, "open %s: %s", teeny_client_mode_name(m), teeny_client_errmsg(c));
  return c;
}

/* ---- resolution ------------------------------------------------------------------ */

START_TEST(socket_path_order) {
  char p[128];
  ck_assert_int_eq(teeny_client_socket_path("/x/explicit.sock", p, sizeof p), 0);
  ck_assert_str_eq(p, "/x/explicit.sock");
  setenv("TEENYCD_SOCKET", "/x/env.sock", 1);
  ck_assert_int_eq(teeny_client_socket_path(NULL, p, sizeof p), 0);
  ck_assert_str_eq(p, "/x/env.sock");
  ck_assert_int_eq(teeny_client_socket_path("", p, sizeof p), 0);
  ck_assert_str_eq(p, "/x/env.sock");
  unsetenv("TEENYCD_SOCKET");
  setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
  ck_assert_int_eq(teeny_client_socket_path(NULL, p, sizeof p), 0);
  ck_assert_str_eq(p, "/run/user/7/teenycd.sock");
  setenv("XDG_RUNTIME_DIR", "relative", 1); /* ignored, as XDG says */
  ck_assert_int_eq(teeny_client_socket_path(NULL, p, sizeof p), 0);
  ck_assert_str_eq(p, "/run/teenycd/teenycd.sock");
  char longp[300];
  memset(longp, 'a', sizeof longp - 1);
  longp[0] = '/';
  longp[sizeof longp - 1] = '\0';
  ck_assert_int_eq(teeny_client_socket_path(longp, p, sizeof p), TEENY_E_LIMIT);
}
END_TEST

START_TEST(mode_names) {
  ck_assert_int_eq(teeny_client_mode_parse("daemon"), TEENY_MODE_DAEMON);
  ck_assert_int_eq(teeny_client_mode_parse("offline"), TEENY_MODE_OFFLINE);
  ck_assert_int_eq(teeny_client_mode_parse("default"), -1);
  ck_assert_int_eq(teeny_client_mode_parse("nonsense"), -1);
  ck_assert_str_eq(teeny_client_cache_name(TEENY_CLIENT_MEMO), "memo");
  setenv("TEENYC_MODE", "sideways", 1);
  teeny_client *c = NULL;
  ck_assert_int_eq(teeny_client_open(&c, NULL), TEENY_E_INVAL);
  ck_assert_ptr_nonnull(strstr(teeny_client_errmsg(c), "sideways"));
  teeny_client_close(c);
}
END_TEST

START_TEST(daemon_mode_without_daemon) {
  teeny_client_opts o = {.mode = TEENY_MODE_DAEMON};
  teeny_client *c = NULL;
  ck_assert_int_eq(teeny_client_open(&c, &o), TEENY_E_CONNECT);
  ck_assert_ptr_nonnull(strstr(teeny_client_errmsg(c), tdir)); /* names the socket */
  vreq v;
  vreq_init(&v, 1024);
  teeny_client_result *r = (teeny_client_result *)1;
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r), TEENY_E_INVAL);
  ck_assert_ptr_null(r);
  teeny_client_close(c);
}
END_TEST

START_TEST(auto_falls_back) {
  setenv("TEENYC_CACHE_DIR", store, 1); /* a configured store: embedded */
  teeny_client *c = NULL;
  ck_assert_int_eq(teeny_client_open(&c, NULL), 0);
  ck_assert_int_eq(teeny_client_active_mode(c), TEENY_MODE_EMBEDDED);
  ck_assert_str_eq(teeny_client_store_root(c), store);
  teeny_client_close(c);
  unsetenv("TEENYC_CACHE_DIR");
  struct stat st;
  if (stat("/var/cache/teenyc", &st) == 0)
    return; /* this machine has the system store: auto would use it */
  ck_assert_int_eq(teeny_client_open(&c, NULL), 0);
  ck_assert_int_eq(teeny_client_active_mode(c), TEENY_MODE_OFFLINE);
  ck_assert_int_ne(stat("/var/cache/teenyc", &st), 0); /* auto created nothing */
  teeny_client_close(c);
}
END_TEST

/* ---- compiling in process ---------------------------------------------------------- */

START_TEST(offline_compile) {
  teeny_client *c = open_mode(TEENY_MODE_OFFLINE);
  vreq v;
  vreq_init(&v, 1024);
  teeny_client_result *r = NULL;
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_EMIT_SOURCE, &r), 0);
  ck_assert_int_eq(r->status, 0);
  ck_assert_ptr_null(r->error);
  ck_assert_str_eq(r->art.id, "vector_add__f32__1024");
  ck_assert_str_eq(r->art.entry, "vector_add_entry_point");
  ck_assert_int_eq(strlen(r->art.key), 64);
  ck_assert_ptr_nonnull(r->art.ptx);
  ck_assert_ptr_nonnull(strstr(r->art.ptx, ".entry vector_add_entry_point"));
  ck_assert_ptr_nonnull(r->art.source);
  ck_assert_int_eq(r->art.nparams, 4);
  ck_assert_int_eq(r->art.threads_per_block, 128);
  ck_assert_int_eq(r->cache, TEENY_CLIENT_MISS);
  ck_assert_int_eq(r->mode, TEENY_MODE_OFFLINE);
  ck_assert_int_eq(teeny_client_active_mode(c), TEENY_MODE_OFFLINE);
  ck_assert_str_eq(teeny_client_store_root(c), "");
  teeny_client_result_free(r);
  teeny_client_close(c);
}
END_TEST

START_TEST(embedded_miss_then_disk) {
  vreq v;
  vreq_init(&v, 512);
  teeny_client *c = open_mode(TEENY_MODE_EMBEDDED);
  teeny_client_result *r = NULL;
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r), 0);
  ck_assert_int_eq(r->cache, TEENY_CLIENT_MISS);
  ck_assert_int_eq(r->mode, TEENY_MODE_EMBEDDED);
  char key[65];
  snprintf(key, sizeof key, "%s", r->art.key);
  char *ptx = strndup(r->art.ptx, r->art.ptx_len);
  teeny_client_result_free(r);
  teeny_client_close(c);

  c = open_mode(TEENY_MODE_EMBEDDED); /* a new client: no memo */
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_EMIT_MLIR, &r), 0);
  ck_assert_int_eq(r->cache, TEENY_CLIENT_DISK);
  ck_assert_str_eq(r->art.key, key);
  ck_assert_str_eq(r->art.ptx, ptx);
  ck_assert_ptr_nonnull(r->art.mlir);
  ck_assert_str_eq(r->art.id, "vector_add__f32__512");
  ck_assert_int_eq(r->art.nparams, 4);
  ck_assert_str_eq(r->art.params[3].name, "n_elements");
  ck_assert(r->compile_ms > 0);
  teeny_client_result_free(r);
  /* FORCE compiles again even though the store has it. */
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_CLIENT_FORCE, &r), 0);
  ck_assert_int_eq(r->cache, TEENY_CLIENT_MISS);
  teeny_client_result_free(r);
  free(ptx);
  teeny_client_close(c);
}
END_TEST

START_TEST(memo_is_exact) {
  teeny_client *c = open_mode(TEENY_MODE_EMBEDDED);
  vreq v;
  vreq_init(&v, 256);
  teeny_client_result *r1 = NULL, *r2 = NULL, *r3 = NULL;
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r1), 0);
  ck_assert_int_eq(r1->cache, TEENY_CLIENT_MISS);
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r2), 0);
  ck_assert_int_eq(r2->cache, TEENY_CLIENT_MEMO);
  ck_assert_ptr_eq(r2->art.ptx, r1->art.ptx); /* shared, not copied */
  teeny_client_result_free(r1);               /* r2 stays valid */
  ck_assert_ptr_nonnull(strstr(r2->art.ptx, "vector_add_entry_point"));
  /* A copy of the source at another address: still a hit (bytes compare). */
  vreq w;
  vreq_init(&w, 256);
  char *copy = strndup(vsrc, vlen);
  w.req.source = copy;
  ck_assert_int_eq(teeny_client_compile(c, &w.req, TEENY_EMIT_PTX, &r3), 0);
  ck_assert_int_eq(r3->cache, TEENY_CLIENT_MEMO);
  teeny_client_result_free(r3);
  /* One byte changed (in the leading comment): a miss, never a stale hit. */
  ck_assert(copy[0] == '/' && copy[1] == '*');
  copy[3] ^= 0x20;
  ck_assert_int_eq(teeny_client_compile(c, &w.req, TEENY_EMIT_PTX, &r3), 0);
  ck_assert_int_ne(r3->cache, TEENY_CLIENT_MEMO);
  teeny_client_result_free(r3);
  /* More artifacts than were asked the first time: embedded compiles make
   * the MLIR anyway (the store keeps it), so the memo has it too. */
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_EMIT_MLIR, &r3), 0);
  ck_assert_int_eq(r3->cache, TEENY_CLIENT_MEMO);
  ck_assert_ptr_nonnull(r3->art.mlir);
  teeny_client_result_free(r3);
  /* NO_MEMO goes to the store. */
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r3), 0);
  ck_assert_int_eq(r3->cache, TEENY_CLIENT_DISK);
  teeny_client_result_free(r3);
  teeny_client_memo_stats st;
  teeny_client_memo_stats_get(c, &st);
  ck_assert_uint_eq(st.hits, 3);
  ck_assert_uint_ge(st.entries, 2);
  teeny_client_memo_clear(c);
  teeny_client_memo_stats_get(c, &st);
  ck_assert_uint_eq(st.entries, 0);
  ck_assert_ptr_nonnull(r2->art.ptx); /* handed-out results outlive the memo */
  teeny_client_result_free(r2);
  free(copy);
  teeny_client_close(c);
}
END_TEST

START_TEST(memo_capacity) {
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE, .memo_entries = 2};
  teeny_client *c = NULL;
  ck_assert_int_eq(teeny_client_open(&c, &o), 0);
  for (int i = 0; i < 5; i++) {
    vreq v;
    vreq_init(&v, 64 << i);
    teeny_client_result *r = NULL;
    ck_assert_int_eq(teeny_client_compile(c, &v.req, 0, &r), 0);
    teeny_client_result_free(r);
  }
  teeny_client_memo_stats st;
  teeny_client_memo_stats_get(c, &st);
  ck_assert_uint_eq(st.entries, 2);
  teeny_client_close(c);
}
END_TEST

START_TEST(diagnostics_in_result) {
  teeny_client *c = open_mode(TEENY_MODE_EMBEDDED);
  static const char bad[] = "#include <teeny/dsl.h>\n"
                            "TEENY_KERNEL()\n"
                            "void k(ptr(f32) x) {\n"
                            "    store(x, undefined_name);\n"
                            "}\n";
  teeny_compile_req req = {.source = bad, .source_len = sizeof bad - 1, .filename = "bad.c",
                           .kernel = "k"};
  teeny_client_result *r = NULL;
  ck_assert_int_eq(teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r), TEENY_E_COMPILE);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(r->status, TEENY_E_COMPILE);
  ck_assert_uint_ge(r->ndiags, 1);
  ck_assert_str_eq(r->diags[0].file, "bad.c");
  ck_assert_int_eq(r->diags[0].line, 4);
  ck_assert_int_gt(r->diags[0].col, 0);
  ck_assert_ptr_nonnull(strstr(r->diags[0].message, "undefined_name"));
  ck_assert_ptr_nonnull(strstr(teeny_client_errmsg(c), "undefined_name"));
  teeny_client_result_free(r);
  /* A failure is not memoised: asking again compiles again. */
  ck_assert_int_eq(teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r), TEENY_E_COMPILE);
  ck_assert_int_ne(r->cache, TEENY_CLIENT_MEMO);
  teeny_client_result_free(r);
  /* A binding outside the dtype list names the list. */
  vreq v;
  vreq_init(&v, 1024);
  v.dt[0].dtype = "i64";
  ck_assert_int_eq(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r), TEENY_E_BINDING);
  ck_assert_ptr_nonnull(strstr(r->error, "f32, f16, bf16"));
  teeny_client_result_free(r);
  teeny_client_close(c);
}
END_TEST

START_TEST(batch_in_order) {
  teeny_client *c = open_mode(TEENY_MODE_EMBEDDED);
  vreq v[5];
  teeny_compile_req reqs[5];
  for (int i = 0; i < 5; i++) {
    vreq_init(&v[i], i == 3 ? 1024 : 128 << (i % 3)); /* 128, 256, 512, 1024, 256 */
    reqs[i] = v[i].req;
  }
  v[2].dt[0].dtype = "u8"; /* refused: outside D's list */
  reqs[2] = v[2].req;
  teeny_client_result *out[5];
  ck_assert_int_eq(teeny_client_compile_batch(c, reqs, 5, TEENY_EMIT_PTX, out), 0);
  ck_assert_str_eq(out[0]->art.id, "vector_add__f32__128");
  ck_assert_str_eq(out[1]->art.id, "vector_add__f32__256");
  ck_assert_int_eq(out[2]->status, TEENY_E_BINDING);
  ck_assert_str_eq(out[3]->art.id, "vector_add__f32__1024");
  ck_assert_str_eq(out[4]->art.id, "vector_add__f32__256");
  ck_assert_str_eq(out[4]->art.key, out[1]->art.key);
  for (int i = 0; i < 5; i++)
    teeny_client_result_free(out[i]);
  /* Again: every success now comes from the memo. */
  ck_assert_int_eq(teeny_client_compile_batch(c, reqs, 5, TEENY_EMIT_PTX, out), 0);
  ck_assert_int_eq(out[0]->cache, TEENY_CLIENT_MEMO);
  ck_assert_int_eq(out[3]->cache, TEENY_CLIENT_MEMO);
  ck_assert_int_eq(out[2]->status, TEENY_E_BINDING);
  for (int i = 0; i < 5; i++)
    teeny_client_result_free(out[i]);
  teeny_client_close(c);
}
END_TEST

/* ---- threads ----------------------------------------------------------------------- */

typedef struct worker {
  teeny_client *c;  /* shared */
  int64_t block;    /* what to compile */
  int ok;           /* successful compiles */
} worker;

static void *work(void *p) {
  worker *w = p;
  vreq v;
  vreq_init(&v, w->block);
  for (int i = 0; i < 20; i++) {
    teeny_client_result *r = NULL;
    if (teeny_client_compile(w->c, &v.req, TEENY_EMIT_PTX, &r) == 0 && r->art.ptx &&
        strstr(r->art.id, "vector_add__f32__"))
      w->ok++;
    teeny_client_result_free(r);
  }
  return NULL;
}

START_TEST(threads_share_a_client) {
  teeny_client *c = open_mode(TEENY_MODE_EMBEDDED);
  vreq_init(&(vreq){0}, 1); /* read the source before the threads start */
  pthread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){c, 128 << (i % 2), 0};
    ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].ok, 20);
  }
  teeny_client_close(c);
}
END_TEST

/* ---- the teeny_kernel runtime ---------------------------------------------------------- */

START_TEST(kernel_runtime) {
  if (!vsrc)
    vsrc = ku_read_example("vector_add", &vlen);
  teeny_kernel k;
  memset(&k, 0, sizeof k);
  k.req = (teeny_compile_req){.source = vsrc, .source_len = vlen, .filename = "vector_add.c",
                              .kernel = "vector_add", .ndtypes = 1, .nconsts = 1};
  k.dtypes[0] = (teeny_dtype_binding){"D", "i32"};
  k.consts[0] = (teeny_const_binding){"BLOCK_SIZE", 1024};
  ck_assert_int_eq(teeny_kernel_prepare(&k), TEENY_E_BINDING);
  ck_assert_ptr_nonnull(strstr(k.err, "f32, f16, bf16"));
  k.dtypes[0].dtype = "f16";
  ck_assert_int_eq(teeny_kernel_prepare(&k), 0);
  ck_assert_str_eq(k.id, "vector_add__f16__1024");
  ck_assert_int_eq(strlen(k.key), 64);
  ck_assert_ptr_nonnull(strstr(k.entry_point_source, "void vector_add_entry_point(f16 *a_ptr"));
  ck_assert_ptr_nonnull(strstr(k.source, "TEENY_BIND(D, f16);"));
  teeny_grid g = {.x = 1};
  ck_assert_int_eq(teeny_kernel_launch(&k, g, NULL, NULL, 4), TEENY_E_INVAL); /* not compiled */
  teeny_client *c = open_mode(TEENY_MODE_OFFLINE);
  ck_assert_int_eq(teeny_kernel_compile(&k, c), 0);
  ck_assert_str_eq(k.result->art.key, k.key);
  ck_assert_int_eq(teeny_kernel_launch(&k, g, NULL, NULL, 3), TEENY_E_INVAL); /* arg count */
  ck_assert_ptr_nonnull(strstr(k.err, "3 arguments"));
  ck_assert_int_eq(teeny_kernel_set_options(&k, "sm_80", 8), 0);
  ck_assert_ptr_null(k.result); /* options changed: compile again */
  ck_assert_ptr_nonnull(strstr(k.source, "target: sm_80  num_warps: 8"));
  teeny_kernel_close(&k);
  teeny_client_close(c);
}
END_TEST

START_TEST(scalar_packing) {
  teeny_scalar_slot s;
  ck_assert_uint_eq(*(uint16_t *)teeny_scalar_pack(&s, TEENY_DT_F16, 1.0), 0x3c00);
  ck_assert_uint_eq(*(uint16_t *)teeny_scalar_pack(&s, TEENY_DT_F16, -2.5), 0xc100);
  ck_assert_uint_eq(*(uint16_t *)teeny_scalar_pack(&s, TEENY_DT_F16, 65520.0), 0x7c00);
  ck_assert_uint_eq(*(uint16_t *)teeny_scalar_pack(&s, TEENY_DT_F16, 5.96e-8), 0x0001);
  ck_assert_uint_eq(*(uint16_t *)teeny_scalar_pack(&s, TEENY_DT_BF16, 1.0), 0x3f80);
  ck_assert_uint_eq(*(uint16_t *)teeny_scalar_pack(&s, TEENY_DT_BF16, 3.0), 0x4040);
  ck_assert_int_eq(*(int32_t *)teeny_scalar_pack(&s, TEENY_DT_I32, -7), -7);
  ck_assert(*(float *)teeny_scalar_pack(&s, TEENY_DT_F32, 0.5) == 0.5f);
  ck_assert(*(double *)teeny_scalar_pack(&s, TEENY_DT_F64, 0.1) == 0.1);
  ck_assert_uint_eq(*(uint8_t *)teeny_scalar_pack(&s, TEENY_DT_U8, 200), 200);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("client");
  TCase *t = tcase_create("client");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, socket_path_order);
  tcase_add_test(t, mode_names);
  tcase_add_test(t, daemon_mode_without_daemon);
  tcase_add_test(t, auto_falls_back);
  tcase_add_test(t, offline_compile);
  tcase_add_test(t, embedded_miss_then_disk);
  tcase_add_test(t, memo_is_exact);
  tcase_add_test(t, memo_capacity);
  tcase_add_test(t, diagnostics_in_result);
  tcase_add_test(t, batch_in_order);
  tcase_add_test(t, threads_share_a_client);
  tcase_add_test(t, kernel_runtime);
  tcase_add_test(t, scalar_packing);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
