/*
 * tests/unit/test_remote.c — the remote tier's pure parts: the --remote
 * URL (daemon/remote_url.c) and the entry value format and its checks
 * (daemon/remote_entry.c).  Every corrupted byte, a wrong key, a forged
 * source, a truncation, an oversize value and each signing mismatch must
 * be refused; only the exact value for the exact key loads.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "daemon/remote.h"

/* ---- URLs ----------------------------------------------------------------------- */

START_TEST(url_forms) {
  teeny_remote_addr a;
  char err[TEENY_REMOTE_ERR_LEN];
  ck_assert_int_eq(teeny__remote_url_parse("redis://10.0.0.5:6380/3", &a, err), 0);
  ck_assert_str_eq(a.host, "10.0.0.5");
  ck_assert_int_eq(a.port, 6380);
  ck_assert_int_eq(a.db, 3);
  ck_assert_str_eq(a.pass, "");
  ck_assert_int_eq(teeny__remote_url_parse("redis://cache.rack1", &a, err), 0);
  ck_assert_int_eq(a.port, 6379);
  ck_assert_int_eq(a.db, 0);
  ck_assert_int_eq(teeny__remote_url_parse("redis://bob:s%40cret@[::1]:7000/1", &a, err), 0);
  ck_assert_str_eq(a.user, "bob");
  ck_assert_str_eq(a.pass, "s@cret");
  ck_assert_str_eq(a.host, "::1");
  ck_assert_int_eq(a.port, 7000);
  ck_assert_ptr_null(strstr(a.shown, "s@cret")); /* never logged */
  ck_assert_int_eq(teeny__remote_url_parse("redis://onlypass@h", &a, err), 0);
  ck_assert_str_eq(a.user, "");
  ck_assert_str_eq(a.pass, "onlypass");
  ck_assert_int_eq(teeny__remote_url_parse("unix:///run/redis/r.sock?db=2", &a, err), 0);
  ck_assert_str_eq(a.path, "/run/redis/r.sock");
  ck_assert_int_eq(a.db, 2);
  ck_assert_str_eq(a.host, "");
}
END_TEST

START_TEST(url_refused) {
  teeny_remote_addr a;
  char err[TEENY_REMOTE_ERR_LEN];
  ck_assert_int_eq(teeny__remote_url_parse("rediss://h:6379", &a, err), TEENY_E_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err, "TLS"));
  static const char *bad[] = {"", "http://h", "redis://", "redis://h:0", "redis://h:99999",
                              "redis://h:12x", "redis://h/x", "redis://[::1", "unix://rel/path",
                              "unix:///p?x=1", "redis://a%zz@h"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg(teeny__remote_url_parse(bad[i], &a, err) == TEENY_E_INVAL, "%s", bad[i]);
}
END_TEST

/* ---- entries ------------------------------------------------------------------------ */

static char src_text[] = "// generated source\nvoid k_entry_point(float *x) {}\n";
static char ptx_text[] = ".version 8.0\n.target sm_90a\n.visible .entry k_entry_point() { ret; }\n";
static char mlir_text[] = "tt.func @k() { tt.return }\n";
static teeny_param params[] = {{"x", TEENY_PARAM_POINTER, TEENY_DT_F32}};

static void make(teeny_artifact *a) {
  memset(a, 0, sizeof *a);
  a->name = "k";
  a->id = "k__f32";
  a->entry = "k_entry_point";
  a->target = "sm_90a";
  a->num_warps = 4;
  a->source = src_text, a->source_len = strlen(src_text);
  a->ptx = ptx_text, a->ptx_len = strlen(ptx_text);
  a->mlir = mlir_text, a->mlir_len = strlen(mlir_text);
  a->params = params, a->nparams = 1;
  a->threads_per_block = 128;
  a->compile_ns = 12000000;
  teeny__sha256_hex(a->source, a->source_len, a->key);
}

static teeny_remote_reject check(const teeny_buf *v, const char *key,
                                 const char *secret) {
  teeny_artifact *out = NULL;
  teeny_remote_reject r = teeny__remote_entry_verify(
      v->p, v->len, key, secret, secret ? strlen(secret) : 0, 1u << 20, &out);
  ck_assert(r == TEENY_REMOTE_OK ? out != NULL : out == NULL);
  teeny_artifact_destroy(out);
  return r;
}

START_TEST(entry_roundtrip) {
  teeny_artifact a, *out = NULL;
  make(&a);
  teeny_buf v;
  teeny__buf_init(&v);
  ck_assert_int_eq(teeny__remote_entry_encode(&a, NULL, 0, &v), 0);
  ck_assert_int_eq(teeny__remote_entry_verify(v.p, v.len, a.key, NULL, 0, 1u << 20, &out),
                   TEENY_REMOTE_OK);
  ck_assert_str_eq(out->key, a.key);
  ck_assert_str_eq(out->entry, "k_entry_point");
  ck_assert_str_eq(out->id, "k__f32");
  ck_assert_int_eq(out->ptx_len, a.ptx_len);
  ck_assert(memcmp(out->ptx, a.ptx, a.ptx_len) == 0);
  ck_assert(memcmp(out->mlir, a.mlir, a.mlir_len) == 0);
  ck_assert(memcmp(out->source, a.source, a.source_len) == 0);
  ck_assert_int_eq(out->nparams, 1);
  ck_assert_str_eq(out->params[0].name, "x");
  ck_assert_int_eq(out->threads_per_block, 128);
  teeny_artifact_destroy(out);
  teeny__buf_free(&v);
}
END_TEST

/* Every single byte changed, anywhere in the value: refused. */
START_TEST(entry_every_byte) {
  teeny_artifact a;
  make(&a);
  teeny_buf v;
  teeny__buf_init(&v);
  ck_assert_int_eq(teeny__remote_entry_encode(&a, NULL, 0, &v), 0);
  for (size_t i = 0; i < v.len; i++) {
    v.p[i] ^= 0x20;
    ck_assert_msg(check(&v, a.key, NULL) != TEENY_REMOTE_OK, "byte %zu", i);
    v.p[i] ^= 0x20;
  }
  ck_assert_int_eq(check(&v, a.key, NULL), TEENY_REMOTE_OK);
  teeny__buf_free(&v);
}
END_TEST

START_TEST(entry_refusals) {
  teeny_artifact a, b;
  make(&a);
  teeny_buf v, w;
  teeny__buf_init(&v);
  teeny__buf_init(&w);
  ck_assert_int_eq(teeny__remote_entry_encode(&a, NULL, 0, &v), 0);
  /* asked for another key: that key's name must be on the entry */
  char other[65];
  teeny__sha256_hex("other", 5, other);
  ck_assert_int_eq(check(&v, other, NULL), TEENY_REMOTE_BAD_KEY);
  /* a consistent value whose source does not hash to its key (a forged
   * or mixed-up entry, with every digest recomputed) */
  b = a;
  memcpy(b.key, other, sizeof b.key);
  ck_assert_int_eq(teeny__remote_entry_encode(&b, NULL, 0, &w), 0);
  ck_assert_int_eq(check(&w, other, NULL), TEENY_REMOTE_BAD_KEY);
  /* truncated, padded, oversize */
  size_t len = v.len;
  v.len = len - 1;
  ck_assert_int_eq(check(&v, a.key, NULL), TEENY_REMOTE_BAD_SIZE);
  v.len = 10;
  ck_assert_int_eq(check(&v, a.key, NULL), TEENY_REMOTE_BAD_SIZE);
  v.len = len;
  teeny_artifact *out = NULL;
  ck_assert_int_eq(teeny__remote_entry_verify(v.p, v.len, a.key, NULL, 0, len - 1, &out),
                   TEENY_REMOTE_BAD_SIZE);
  ck_assert_ptr_null(out);
  /* not ours */
  ck_assert_int_eq(teeny__remote_entry_verify("hello world, this is not an entry at all; "
                                              "padding padding padding padding padding "
                                              "padding padding padding padding padding "
                                              "padding padding padding",
                                              160, a.key, NULL, 0, 1u << 20, &out),
                   TEENY_REMOTE_BAD_MAGIC);
  teeny__buf_free(&v);
  teeny__buf_free(&w);
}
END_TEST

START_TEST(entry_signed) {
  teeny_artifact a;
  make(&a);
  teeny_buf v, u;
  teeny__buf_init(&v);
  teeny__buf_init(&u);
  const char *secret = "a cluster secret of some length";
  ck_assert_int_eq(teeny__remote_entry_encode(&a, secret, strlen(secret), &v), 0);
  ck_assert_int_eq(teeny__remote_entry_encode(&a, NULL, 0, &u), 0);
  ck_assert_int_eq(check(&v, a.key, secret), TEENY_REMOTE_OK);
  ck_assert_int_eq(check(&v, a.key, NULL), TEENY_REMOTE_BAD_SIGNING);
  ck_assert_int_eq(check(&u, a.key, secret), TEENY_REMOTE_BAD_SIGNING);
  ck_assert_int_eq(check(&v, a.key, "another secret of some length"),
                   TEENY_REMOTE_BAD_DIGEST);
  /* an unsigned value relabelled as signed does not pass either */
  u.p[5] = 1;
  ck_assert_int_eq(check(&u, a.key, secret), TEENY_REMOTE_BAD_DIGEST);
  teeny__buf_free(&v);
  teeny__buf_free(&u);
}
END_TEST

int main(void) {
  Suite *s = suite_create("remote");
  TCase *tc = tcase_create("all");
  tcase_add_test(tc, url_forms);
  tcase_add_test(tc, url_refused);
  tcase_add_test(tc, entry_roundtrip);
  tcase_add_test(tc, entry_every_byte);
  tcase_add_test(tc, entry_refusals);
  tcase_add_test(tc, entry_signed);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
