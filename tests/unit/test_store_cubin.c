/*
 * tests/unit/test_store_cubin.c — the store's fourth artifact (cubins per
 * GPU architecture) and its tuning records: the commit protocol, checks
 * (a corrupt cubin is found by get and verify, and repair drops only it),
 * replacement by a newer toolchain, removal with the entry (purge,
 * eviction, remove) leaving no orphans, counters, hostile architectures,
 * the v1 -> v2 migration, and tuned put/get/list/purge across a reopen.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store.h"
#include "unit/store_fixture.h"

static const char cubin_a[] = "\x7f" "ELF cubin for sm_90, toolchain A";
static const char cubin_b[] = "\x7f" "ELF another cubin for sm_90, toolchain B";

static void cubin_put_ok(teeny_store *s, const art *t, const char *arch,
                         const char *tc, const char *data, bool *replaced) {
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_cubin_put(s, t->a.key, arch, tc, data, strlen(data), 12.5,
                                 replaced, err);
  ck_assert_msg(rc == 0, "cubin put: %s (%s)", err, teeny_err_name(rc));
}

static void cubin_path(const art *t, const char *arch, char *out, size_t n) {
  snprintf(out, n, "%s/objects/%.2s/%s_%s.%s.cubin", root, t->a.key, t->name,
           t->a.key, arch);
}

/* verify with or without repair: the number of problems found. */
static size_t verify_n(teeny_store *s, bool repair, teeny_store_problems *p) {
  teeny_store_problems_init(p);
  teeny_store_verify_opts o = {.repair = repair, .tmp_grace_s = -1};
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_msg(teeny_store_verify(s, &o, p, err) == 0, "verify: %s", err);
  for (size_t i = 0; i < p->n; i++)
    fprintf(stderr, "  problem: %s %s: %s\n", teeny_store_problem_name(p->v[i].kind),
            p->v[i].path, p->v[i].detail);
  return p->n;
}

static void verify_clean(teeny_store *s) {
  teeny_store_problems p;
  ck_assert_int_eq(verify_n(s, false, &p), 0);
  teeny_store_problems_close(&p);
}

/* ---- put, get, list, counters ----------------------------------------------- */

START_TEST(cubin_round_trip) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "vadd", "x");
  put_ok(s, &t);
  bool replaced = true;
  cubin_put_ok(s, &t, "sm_90", "ptxas 13.0.88", cubin_a, &replaced);
  ck_assert(!replaced);
  char p[600];
  cubin_path(&t, "sm_90", p, sizeof p);
  ck_assert(exists(p));

  teeny_store_cubin c;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_cubin_get(s, t.a.key, "sm_90", true, &c, err), 0);
  ck_assert_uint_eq(c.size, strlen(cubin_a));
  ck_assert_mem_eq(c.data, cubin_a, c.size);
  ck_assert_str_eq(c.toolchain, "ptxas 13.0.88");
  ck_assert_str_eq(c.arch, "sm_90");
  teeny_store_cubin_close(&c);
  /* another architecture has none */
  ck_assert_int_eq(teeny_store_cubin_get(s, t.a.key, "sm_80", true, &c, err),
                   TEENY_E_NOTFOUND);

  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.cubins, 1);
  ck_assert_uint_eq(st.cubin_bytes, strlen(cubin_a));
  ck_assert_uint_eq(st.bytes, art_bytes(&t) + strlen(cubin_a));

  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_show(s, t.a.key, &r, NULL, err), 0);
  ck_assert_uint_eq(r.ncubins, 1);
  ck_assert_uint_eq(r.cubin_bytes, strlen(cubin_a));
  teeny_store_rec_close(&r);
  teeny_store_cubin *v;
  size_t n;
  ck_assert_int_eq(teeny_store_cubin_list(s, t.a.key, &v, &n, err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(v[0].arch, "sm_90");
  teeny_store_cubins_free(v, n);
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(cubin_needs_its_entry) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "gone", "x");
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_cubin_put(s, t.a.key, "sm_90", "ptxas 13.0", "x", 1,
                                         1, NULL, err),
                   TEENY_E_NOTFOUND);
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s/tmp", root);
  ck_assert_uint_eq(count_entries(tmp), 0);
  char objs[600];
  snprintf(objs, sizeof objs, "%s/objects", root);
  ck_assert_uint_eq(count_entries(objs), 0);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(hostile_architectures_refused) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  static const char *const bad[] = {"../x", "sm_9", "sm_9000", "sm_90/", "sm_90ab",
                                    "compute_90", "", "sm_90\n", "sm_"};
  char err[TEENY_STORE_ERR_LEN];
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(teeny_store_arch_check(bad[i]), TEENY_E_INVAL);
    ck_assert_int_eq(teeny_store_cubin_put(s, t.a.key, bad[i], "ptxas", "x", 1, 1,
                                           NULL, err),
                     TEENY_E_INVAL);
  }
  static const char *const good[] = {"sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120f"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    ck_assert_int_eq(teeny_store_arch_check(good[i]), 0);
  ck_assert_int_eq(teeny_store_cubin_put(s, t.a.key, "sm_90", "bad\ttoolchain", "x",
                                         1, 1, NULL, err),
                   TEENY_E_INVAL);
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(newer_toolchain_replaces) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  bool replaced;
  cubin_put_ok(s, &t, "sm_90", "ptxas 12.8", cubin_a, &replaced);
  cubin_put_ok(s, &t, "sm_90", "ptxas 12.8", cubin_a, &replaced); /* same: no-op */
  ck_assert(!replaced);
  cubin_put_ok(s, &t, "sm_90", "driver 580.65.06", cubin_b, &replaced);
  ck_assert(replaced);
  teeny_store_cubin c;
  ck_assert_int_eq(teeny_store_cubin_get(s, t.a.key, "sm_90", true, &c, NULL), 0);
  ck_assert_str_eq(c.toolchain, "driver 580.65.06");
  ck_assert_mem_eq(c.data, cubin_b, strlen(cubin_b));
  teeny_store_cubin_close(&c);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, NULL), 0);
  ck_assert_uint_eq(st.cubins, 1);
  ck_assert_uint_eq(st.cubin_bytes, strlen(cubin_b));
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

/* ---- corruption ------------------------------------------------------------------ */

START_TEST(corrupt_cubin_found_and_dropped_alone) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  cubin_put_ok(s, &t, "sm_90", "ptxas 13.0", cubin_a, NULL);
  cubin_put_ok(s, &t, "sm_80", "ptxas 13.0", cubin_b, NULL);
  char p[600];
  cubin_path(&t, "sm_90", p, sizeof p);
  /* same size, one byte flipped: only the hash can tell */
  char bad[sizeof cubin_a];
  memcpy(bad, cubin_a, sizeof bad);
  bad[5] ^= 1;
  write_file(p, bad);
  teeny_store_cubin c;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_cubin_get(s, t.a.key, "sm_90", true, &c, err),
                   TEENY_E_CORRUPT);
  ck_assert_ptr_null(c.data);
  teeny_store_problems pr;
  ck_assert_int_eq(verify_n(s, false, &pr), 1);
  ck_assert_int_eq(pr.v[0].kind, TEENY_STORE_PROB_HASH);
  ck_assert_ptr_nonnull(strstr(pr.v[0].path, ".sm_90.cubin"));
  teeny_store_problems_close(&pr);
  ck_assert_int_eq(verify_n(s, true, &pr), 1);
  ck_assert(pr.v[0].repaired);
  teeny_store_problems_close(&pr);
  verify_clean(s);
  ck_assert(!exists(p));
  /* the entry and the other cubin are untouched */
  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_ALL | TEENY_STORE_GET_VERIFY,
                                   &r, err),
                   0);
  teeny_store_rec_close(&r);
  ck_assert_int_eq(teeny_store_cubin_get(s, t.a.key, "sm_80", true, &c, err), 0);
  teeny_store_cubin_close(&c);
  /* and it can be made again */
  cubin_put_ok(s, &t, "sm_90", "ptxas 13.0", cubin_a, NULL);
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(missing_and_orphan_cubins) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  cubin_put_ok(s, &t, "sm_90", "ptxas 13.0", cubin_a, NULL);
  char p[600], orphan[600];
  cubin_path(&t, "sm_90", p, sizeof p);
  ck_assert_int_eq(unlink(p), 0);
  cubin_path(&t, "sm_86", orphan, sizeof orphan); /* no row names it */
  write_file(orphan, "stray");
  teeny_store_cubin c;
  ck_assert_int_eq(teeny_store_cubin_get(s, t.a.key, "sm_90", true, &c, NULL),
                   TEENY_E_CORRUPT);
  teeny_store_problems pr;
  ck_assert_int_eq(verify_n(s, true, &pr), 2);
  ck_assert_uint_eq(count_kind(&pr, TEENY_STORE_PROB_MISSING), 1);
  ck_assert_uint_eq(count_kind(&pr, TEENY_STORE_PROB_ORPHAN), 1);
  teeny_store_problems_close(&pr);
  ck_assert(!exists(orphan));
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

/* ---- removal with the entry --------------------------------------------------------- */

static size_t files_in_objects(void) {
  char objs[600];
  snprintf(objs, sizeof objs, "%s/objects", root);
  char *snap = snapshot(objs);
  size_t n = 0;
  for (char *c = snap; (c = strstr(c, ".cubin")); c++)
    n++;
  teeny__free(snap);
  return n;
}

START_TEST(cubins_go_with_their_entry) {
  teeny_store *s = open_store(NULL);
  art a, b, c;
  make_art(&a, "alpha", "1");
  make_art(&b, "beta", "2");
  make_art(&c, "gamma", "3");
  put_ok(s, &a);
  put_ok(s, &b);
  put_ok(s, &c);
  cubin_put_ok(s, &a, "sm_90", "ptxas 13.0", cubin_a, NULL);
  cubin_put_ok(s, &a, "sm_80", "ptxas 13.0", cubin_b, NULL);
  cubin_put_ok(s, &b, "sm_90", "ptxas 13.0", cubin_a, NULL);
  cubin_put_ok(s, &c, "sm_90", "ptxas 13.0", cubin_a, NULL);
  ck_assert_uint_eq(files_in_objects(), 4);
  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_counts removed;
  ck_assert_int_eq(teeny_store_remove(s, a.a.key, &removed, err), 0);
  ck_assert_uint_eq(removed.bytes, art_bytes(&a) + strlen(cubin_a) + strlen(cubin_b));
  ck_assert_uint_eq(files_in_objects(), 2);
  teeny_store_purge_req pq = {.name_glob = "beta"};
  ck_assert_int_eq(teeny_store_purge(s, &pq, &removed, err), 0);
  ck_assert_uint_eq(files_in_objects(), 1);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.cubins, 1);
  ck_assert_uint_eq(st.bytes, art_bytes(&c) + strlen(cubin_a));
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(eviction_counts_cubin_bytes) {
  test_clock clk = {1000};
  teeny_store *s = open_store(&clk);
  art old, young;
  make_art(&old, "old", "1");
  make_art(&young, "young", "2");
  put_ok(s, &old);
  clk.now = 2000;
  put_ok(s, &young);
  /* old's cubin makes it the big one: the cap is met by evicting it */
  static char big[4096];
  memset(big, 'c', sizeof big - 1);
  cubin_put_ok(s, &old, "sm_90", "ptxas 13.0", big, NULL);
  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_counts removed;
  ck_assert_int_eq(teeny_store_evict_to(s, art_bytes(&young) + 100, &removed, err), 0);
  ck_assert_uint_eq(removed.entries, 1);
  ck_assert_uint_eq(removed.bytes, art_bytes(&old) + sizeof big - 1);
  ck_assert_uint_eq(files_in_objects(), 0);
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

/* ---- schema ------------------------------------------------------------------------- */

START_TEST(migrates_a_v2_store) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  teeny_store_destroy(s);
  /* back to what a v2 build (no cubins, no tuning records) wrote */
  sql_exec("DROP TABLE cubins; DROP TABLE tuned; DROP TRIGGER entries_del_cubins;"
           "DELETE FROM meta WHERE k IN ('cubins', 'cubin_bytes');"
           "PRAGMA user_version = 2");
  s = open_store(NULL);
  ck_assert_int_eq(teeny_store_schema_version(s), 3);
  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_ALL, &r, NULL), 0);
  teeny_store_rec_close(&r);
  cubin_put_ok(s, &t, "sm_90", "ptxas 13.0", cubin_a, NULL);
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

/* ---- tuning records ----------------------------------------------------------------- */

static teeny_store_tuned rec_of(const char *kernel, const char *digest_seed,
                                const char *problem, const char *config) {
  teeny_store_tuned t = {0};
  ck_assert_int_eq(teeny__sha256_hex(digest_seed, strlen(digest_seed), t.digest), 0);
  t.kernel = (char *)kernel;
  t.problem = (char *)problem;
  t.gpu = "NVIDIA H200";
  t.driver = "580.65.06";
  t.config = (char *)config;
  t.best_ms = 0.75;
  t.candidates = 12;
  return t;
}

START_TEST(tuned_records) {
  teeny_store *s = open_store(NULL);
  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_tuned a = rec_of("matmul", "mm", "M=4096 N=4096 K=4096",
                               "BLOCK_M=128 BLOCK_N=256 num_warps=8");
  teeny_store_tuned b = rec_of("softmax", "sm", "N=4096", "BLOCK_SIZE=4096 num_warps=8");
  ck_assert_int_eq(teeny_store_tuned_put(s, &a, err), 0);
  ck_assert_int_eq(teeny_store_tuned_put(s, &b, err), 0);
  teeny_store_tuned got;
  ck_assert_int_eq(teeny_store_tuned_get(s, a.digest, a.problem, a.gpu, a.driver, &got,
                                         err),
                   0);
  ck_assert_str_eq(got.config, a.config);
  ck_assert_uint_eq(got.candidates, 12);
  teeny_store_tuned_close(&got);
  /* another driver, another GPU or another problem is another record */
  ck_assert_int_eq(teeny_store_tuned_get(s, a.digest, a.problem, a.gpu, "575.1", &got,
                                         err),
                   TEENY_E_NOTFOUND);
  ck_assert_int_eq(teeny_store_tuned_get(s, a.digest, "M=1", a.gpu, a.driver, &got, err),
                   TEENY_E_NOTFOUND);
  /* a put replaces */
  a.config = "BLOCK_M=64 BLOCK_N=64 num_warps=4";
  ck_assert_int_eq(teeny_store_tuned_put(s, &a, err), 0);
  teeny_store_destroy(s);
  s = open_store(NULL); /* and it survives a reopen */
  ck_assert_int_eq(teeny_store_tuned_get(s, a.digest, a.problem, a.gpu, a.driver, &got,
                                         err),
                   0);
  ck_assert_str_eq(got.config, "BLOCK_M=64 BLOCK_N=64 num_warps=4");
  teeny_store_tuned_close(&got);
  teeny_store_tuned *v;
  size_t n;
  ck_assert_int_eq(teeny_store_tuned_list(s, "mat*", &v, &n, err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(v[0].kernel, "matmul");
  teeny_store_tuneds_free(v, n);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.tuned, 2);
  uint64_t removed;
  ck_assert_int_eq(teeny_store_tuned_purge(s, false, NULL, &removed, err), TEENY_E_INVAL);
  ck_assert_int_eq(teeny_store_tuned_purge(s, false, "soft*", &removed, err), 0);
  ck_assert_uint_eq(removed, 1);
  ck_assert_int_eq(teeny_store_tuned_purge(s, true, NULL, &removed, err), 0);
  ck_assert_uint_eq(removed, 1);
  /* bad records are refused */
  teeny_store_tuned bad = rec_of("x", "x", "p", "c");
  bad.digest[3] = 'Z';
  ck_assert_int_eq(teeny_store_tuned_put(s, &bad, err), TEENY_E_INVAL);
  bad = rec_of("not a name", "x", "p", "c");
  ck_assert_int_eq(teeny_store_tuned_put(s, &bad, err), TEENY_E_INVAL);
  verify_clean(s);
  teeny_store_destroy(s);
}
END_TEST

int main(void) {
  Suite *su = suite_create("store_cubin");
  TCase *tc = tcase_create("cubin");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, cubin_round_trip);
  tcase_add_test(tc, cubin_needs_its_entry);
  tcase_add_test(tc, hostile_architectures_refused);
  tcase_add_test(tc, newer_toolchain_replaces);
  tcase_add_test(tc, corrupt_cubin_found_and_dropped_alone);
  tcase_add_test(tc, missing_and_orphan_cubins);
  tcase_add_test(tc, cubins_go_with_their_entry);
  tcase_add_test(tc, eviction_counts_cubin_bytes);
  tcase_add_test(tc, migrates_a_v2_store);
  tcase_add_test(tc, tuned_records);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
