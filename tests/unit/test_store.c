/*
 * tests/unit/test_store.c — the artifact store (store/): commit
 * protocol, crash leftovers, hostile names and planted symlinks, corruption,
 * LRU eviction, batched touches, schema, two handles at once, the daemon
 * lock, injected ENOSPC, list/show/purge/stats and verify.
 *
 * Every test works in its own mkdtemp() directory: T/store is the root and
 * T/outside stands for everything outside it, which must never change.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store.h"
#include "unit/store_fixture.h"

/* ---- root and names ------------------------------------------------------ */

START_TEST(root_resolution_order) {
  char out[64];
  ck_assert_int_eq(
      teeny_store_root_resolve("/x/y/", "/env", "/xdg", out, sizeof out), 0);
  ck_assert_str_eq(out, "/x/y");
  teeny_store_root_resolve(NULL, "/env//", "/xdg", out, sizeof out);
  ck_assert_str_eq(out, "/env");
  teeny_store_root_resolve("", "", "/home/u/.cache/", out, sizeof out);
  ck_assert_str_eq(out, "/home/u/.cache/teenyc");
  teeny_store_root_resolve(NULL, NULL, "relative/xdg", out, sizeof out);
  ck_assert_str_eq(out, TEENY_STORE_DEFAULT_ROOT);
  teeny_store_root_resolve(NULL, NULL, NULL, out, sizeof out);
  ck_assert_str_eq(out, "/var/cache/teenyc");
  teeny_store_root_resolve(NULL, NULL, "/", out, sizeof out);
  ck_assert_str_eq(out, "/teenyc");
  ck_assert_int_eq(
      teeny_store_root_resolve("/a/very/long/path/indeed", NULL, NULL, out, 8),
      TEENY_E_LIMIT);
  /* NULL options: the root comes from the environment. */
  setenv("TEENYC_CACHE_DIR", root, 1);
  teeny_store *s = NULL;
  ck_assert_int_eq(teeny_store_create(NULL, &s, NULL), 0);
  ck_assert_str_eq(teeny_store_root(s), root);
  teeny_store_destroy(s);
  unsetenv("TEENYC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x", 1);
  ck_assert_int_eq(teeny_store_root_from_env(NULL, out, sizeof out), 0);
  ck_assert_str_eq(out, "/x/teenyc");
  unsetenv("XDG_CACHE_HOME");
}
END_TEST

START_TEST(name_and_key_checks) {
  ck_assert_int_eq(teeny_store_name_check("vector_add", 10), 0);
  ck_assert_int_eq(teeny_store_name_check("_x9", 3), 0);
  char n64[65], n65[66];
  memset(n64, 'a', 64);
  n64[64] = '\0';
  memset(n65, 'a', 65);
  n65[65] = '\0';
  ck_assert_int_eq(teeny_store_name_check(n64, 64), 0);
  const char *bad[] = {"../../etc/passwd", "/abs", "a/b", "",    n65,
                       "9lives",           "a.b",  "a-b", "a b", "é"};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(bad); i++)
    ck_assert_int_eq(teeny_store_name_check(bad[i], strlen(bad[i])),
                     TEENY_E_NAME);
  ck_assert_int_eq(teeny_store_name_check("na\0me", 5), TEENY_E_NAME);
  ck_assert_int_eq(teeny_store_name_check(NULL, 0), TEENY_E_NAME);
  char p[256];
  char key[65];
  memset(key, 'a', 64);
  key[64] = '\0';
  ck_assert_int_eq(teeny_store_object_path("na\0me", 5, key, "o", p, sizeof p),
                   TEENY_E_NAME);
  ck_assert_int_eq(teeny_store_object_path("k", 1, key, "o", p, sizeof p), 0);
  ck_assert_str_eq(p, "aa/k_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                      "aaaaaaaaaaaaa.o");
  ck_assert_int_eq(teeny_store_object_path("k", 1, key, "so", p, sizeof p),
                   TEENY_E_INVAL);
  ck_assert_int_eq(teeny_store_object_path("k", 1, key, "o", p, 10),
                   TEENY_E_LIMIT);
  ck_assert_int_eq(teeny_store_key_check(key), 0);
  key[3] = 'A';
  ck_assert_int_eq(teeny_store_key_check(key), TEENY_E_INVAL);
  key[3] = 'a';
  key[63] = '\0';
  ck_assert_int_eq(teeny_store_key_check(key), TEENY_E_INVAL);
}
END_TEST

START_TEST(hostile_names_touch_nothing) {
  teeny_store *s = open_store(NULL);
  char n65[66];
  memset(n65, 'x', 65);
  n65[65] = '\0';
  const char *bad[] = {"../../etc/passwd", "/abs", "a/b", "", n65, ".", ".."};
  char *before = snapshot(root);
  for (size_t i = 0; i < TEENY_ARRAY_LEN(bad); i++) {
    art t;
    make_art(&t, "ok", "x");
    t.a.name = (char *)bad[i];
    char err[TEENY_STORE_ERR_LEN] = "";
    ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, NULL, NULL, err),
                     TEENY_E_NAME);
    ck_assert(strstr(err, "name") != NULL);
  }
  char *after = snapshot(root);
  ck_assert_str_eq(before, after);
  ck_assert_uint_eq(count_entries(outside), 0);
  /* A bad key and a bad parameter name are refused before the disk too. */
  art t;
  make_art(&t, "ok", "x");
  t.a.key[0] = 'G';
  ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, NULL, NULL, NULL),
                   TEENY_E_INVAL);
  make_art(&t, "ok", "x");
  t.params[0].name = "../p";
  ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, NULL, NULL, NULL),
                   TEENY_E_INVAL);
  char *after2 = snapshot(root);
  ck_assert_str_eq(before, after2);
  teeny__free(before);
  teeny__free(after);
  teeny__free(after2);
  teeny_store_destroy(s);
}
END_TEST

/* ---- put / get ----------------------------------------------------------- */

START_TEST(put_get_round_trip) {
  test_clock clk = {1000};
  teeny_store *s = open_store(&clk);
  art t;
  make_art(&t, "vector_add", "v1");
  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_rec r;
  bool created = false;
  ck_assert_int_eq(teeny_store_put(s, &t.a, "9.9.9", &r, &created, err), 0);
  ck_assert(created);
  ck_assert_str_eq(r.key, t.a.key);
  ck_assert_uint_eq(r.ptx_size, t.a.ptx_len);
  ck_assert_int_eq(r.created, 1000);
  teeny_store_rec_close(&r);

  ck_assert_int_eq(teeny_store_get(s, t.a.key,
                                   TEENY_STORE_GET_ALL | TEENY_STORE_GET_VERIFY,
                                   &r, err),
                   0);
  ck_assert_str_eq(r.ptx, t.ptx);
  ck_assert_str_eq(r.mlir, t.mlir);
  ck_assert_str_eq(r.src, t.src);
  ck_assert_str_eq(r.name, "vector_add");
  ck_assert_str_eq(r.id, "kernel__f32__128");
  ck_assert_str_eq(r.entry, "kernel_entry_point");
  ck_assert_str_eq(r.target, "sm_90a");
  ck_assert_str_eq(r.compiler_version, "9.9.9");
  ck_assert_int_eq(r.num_warps, 4);
  ck_assert_int_eq(r.threads_per_block, 128);
  ck_assert_int_eq(r.shared_bytes, 256);
  ck_assert(r.compile_ms > 4.49 && r.compile_ms < 4.51);
  ck_assert_uint_eq(r.nparams, 2);
  ck_assert_str_eq(r.params[0].name, "a_ptr");
  ck_assert_int_eq(r.params[0].kind, TEENY_PARAM_POINTER);
  ck_assert_int_eq(r.params[0].dtype, TEENY_DT_F32);
  ck_assert_str_eq(r.params[1].name, "n");
  ck_assert_int_eq(r.params[1].kind, TEENY_PARAM_SCALAR);
  ck_assert_int_eq(r.params[1].dtype, TEENY_DT_I32);
  ck_assert_str_eq(r.src_sha256, t.a.key);
  ck_assert_int_eq(r.hits, 0);
  teeny_store_rec_close(&r);

  /* PTX only: the others stay NULL. */
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_PTX, &r, err),
                   0);
  ck_assert_ptr_nonnull(r.ptx);
  ck_assert_ptr_null(r.mlir);
  ck_assert_ptr_null(r.src);
  teeny_store_rec_close(&r);

  /* Layout and modes. */
  char p[600];
  struct stat st;
  obj_path(&t, "o", p, sizeof p);
  ck_assert_int_eq(lstat(p, &st), 0);
  ck_assert(S_ISREG(st.st_mode));
  ck_assert_int_eq(st.st_mode & 0777, 0644);
  ck_assert_ptr_nonnull(strstr(p, "/objects/"));
  char shard[600];
  snprintf(shard, sizeof shard, "%s/objects/%.2s", root, t.a.key);
  ck_assert_int_eq(lstat(shard, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0755);
  obj_path(&t, "mlir", p, sizeof p);
  ck_assert(exists(p));
  obj_path(&t, "c", p, sizeof p);
  ck_assert(exists(p));
  ck_assert_uint_eq(count_entries(shard), 3);

  /* Idempotent: the same key again is success with the existing row. */
  clk.now = 2000;
  ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, &r, &created, err), 0);
  ck_assert(!created);
  ck_assert_int_eq(r.created, 1000);
  teeny_store_rec_close(&r);

  teeny_store_stats stats;
  ck_assert_int_eq(teeny_store_stats_get(s, &stats, err), 0);
  ck_assert_uint_eq(stats.entries, 1);
  ck_assert_uint_eq(stats.bytes, art_bytes(&t));

  /* Unknown and malformed keys. */
  char other[65];
  memset(other, '0', 64);
  other[64] = '\0';
  ck_assert_int_eq(teeny_store_get(s, other, TEENY_STORE_GET_ALL, &r, err),
                   TEENY_E_NOTFOUND);
  ck_assert_int_eq(teeny_store_get(s, "abc", 0, &r, err), TEENY_E_INVAL);

  /* No mlir: stored as an empty file. */
  art u;
  make_art(&u, "no_mlir", "x");
  u.a.mlir = NULL;
  u.a.mlir_len = 0;
  put_ok(s, &u);
  ck_assert_int_eq(teeny_store_get(s, u.a.key, TEENY_STORE_GET_ALL, &r, err),
                   0);
  ck_assert_str_eq(r.mlir, "");
  teeny_store_rec_close(&r);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(stricter_modes) {
  teeny_store_opts o = {.root = root, .dir_mode = 0700, .file_mode = 0600};
  teeny_store *s;
  char err[TEENY_STORE_ERR_LEN];
  ck_assert_int_eq(teeny_store_create(&o, &s, err), 0);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  struct stat st;
  char p[600];
  obj_path(&t, "o", p, sizeof p);
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0600);
  snprintf(p, sizeof p, "%s/objects", root);
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0700);
  snprintf(p, sizeof p, "%s/index.db", root);
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0600);
  teeny_store_destroy(s);
  o.file_mode = 0755; /* executable files: refused */
  ck_assert_int_eq(teeny_store_create(&o, &s, err), TEENY_E_INVAL);
  ck_assert_ptr_null(s);
  o.file_mode = 0;
  o.dir_mode = 04755;
  ck_assert_int_eq(teeny_store_create(&o, &s, err), TEENY_E_INVAL);
}
END_TEST

/* ---- crash consistency --------------------------------------------------- */

START_TEST(crash_before_row_leaves_only_orphans) {
  teeny_store_opts o = {.root = root};
  o.test.crash_before_row = true;
  teeny_store *crashy;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_create(&o, &crashy, err), 0);
  art t;
  make_art(&t, "vector_add", "crash");
  ck_assert_int_eq(teeny_store_put(crashy, &t.a, NULL, NULL, NULL, err),
                   TEENY_E_IO);
  teeny_store_destroy(crashy);

  /* The files are complete and in place, but no row names them. */
  char p[600];
  obj_path(&t, "o", p, sizeof p);
  ck_assert_str_eq(read_file(p), t.ptx);
  teeny_store *s = open_store(NULL);
  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_ALL, &r, err),
                   TEENY_E_NOTFOUND);

  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 3);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_ORPHAN), 3);
  ck_assert_str_eq(probs.v[0].key, t.a.key);
  ck_assert(!probs.v[0].repaired);
  ck_assert(exists(p));
  teeny_store_problems_close(&probs);

  vo.repair = true;
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_ORPHAN), 3);
  for (size_t i = 0; i < probs.n; i++)
    ck_assert(probs.v[i].repaired);
  teeny_store_problems_close(&probs);
  ck_assert(!exists(p));

  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 0);
  teeny_store_problems_close(&probs);

  /* And the key can be stored properly afterwards. */
  put_ok(s, &t);
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_ALL, &r, err),
                   0);
  teeny_store_rec_close(&r);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(injected_enospc_leaves_nothing) {
  char tmpdir[600], objdir[600];
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", root);
  snprintf(objdir, sizeof objdir, "%s/objects", root);
  art t;
  make_art(&t, "vector_add", "full");
  /* Fail in the first file, in the middle of the third, and on EDQUOT. */
  const uint64_t after[] = {10, t.a.ptx_len + t.a.mlir_len + 5, 0};
  const int errs[] = {0, ENOSPC, EDQUOT};
  for (int i = 0; i < 3; i++) {
    teeny_store_opts o = {.root = root};
    o.test.fail_write = true;
    o.test.fail_write_after = after[i];
    o.test.fail_write_errno = errs[i];
    teeny_store *s;
    char err[TEENY_STORE_ERR_LEN] = "";
    ck_assert_int_eq(teeny_store_create(&o, &s, err), 0);
    char *before = snapshot(objdir);
    ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, NULL, NULL, err),
                     TEENY_E_NOSPC);
    ck_assert_msg(strstr(err, "tmp") != NULL, "err: %s", err);
    ck_assert_uint_eq(count_entries(tmpdir), 0);
    char *after_snap = snapshot(objdir);
    ck_assert_str_eq(before, after_snap);
    teeny__free(before);
    teeny__free(after_snap);
    teeny_store_rec r;
    ck_assert_int_eq(teeny_store_get(s, t.a.key, 0, &r, err), TEENY_E_NOTFOUND);
    teeny_store_destroy(s);
  }
  /* Another errno is an I/O error, with the same cleanup. */
  teeny_store_opts o = {.root = root};
  o.test.fail_write = true;
  o.test.fail_write_after = 3;
  o.test.fail_write_errno = EIO;
  teeny_store *s;
  ck_assert_int_eq(teeny_store_create(&o, &s, NULL), 0);
  ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, NULL, NULL, NULL),
                   TEENY_E_IO);
  ck_assert_uint_eq(count_entries(tmpdir), 0);
  teeny_store_destroy(s);
  /* Without the hook it works. */
  s = open_store(NULL);
  put_ok(s, &t);
  teeny_store_destroy(s);
}
END_TEST

/* ---- symlinks ------------------------------------------------------------ */

START_TEST(symlinked_root_and_subdirs_refused) {
  char link[300], p[600];
  snprintf(link, sizeof link, "%s/link", tdir);
  ck_assert_int_eq(symlink(outside, link), 0);
  teeny_store_opts o = {.root = link};
  teeny_store *s;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_create(&o, &s, err), TEENY_E_STORE);
  ck_assert(strstr(err, "symlink") != NULL);
  snprintf(p, sizeof p, "%s/", link); /* a trailing slash must not help */
  o.root = p;
  ck_assert_int_eq(teeny_store_create(&o, &s, err), TEENY_E_STORE);
  ck_assert_uint_eq(count_entries(outside), 0);

  /* objects/, tmp/, the index and its WAL planted as symlinks. */
  const char *sub[] = {"objects", "tmp", "index.db", "index.db-wal"};
  for (int i = 0; i < 4; i++) {
    teardown();
    setup();
    ck_assert_int_eq(mkdir(root, 0755), 0);
    snprintf(p, sizeof p, "%s/%s", root, sub[i]);
    ck_assert_int_eq(symlink(outside, p), 0);
    o.root = root;
    ck_assert_int_eq(teeny_store_create(&o, &s, err), TEENY_E_STORE);
    ck_assert_msg(strstr(err, sub[i]) != NULL, "err: %s", err);
    ck_assert_uint_eq(count_entries(outside), 0);
  }
}
END_TEST

START_TEST(symlinked_shard_is_not_followed) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "vector_add", "shard");
  char shard[600];
  snprintf(shard, sizeof shard, "%s/objects/%.2s", root, t.a.key);
  ck_assert_int_eq(symlink(outside, shard), 0);
  char err[TEENY_STORE_ERR_LEN] = "";
  /* Decision: refuse (TEENY_E_STORE); the link target stays untouched. */
  ck_assert_int_eq(teeny_store_put(s, &t.a, NULL, NULL, NULL, err),
                   TEENY_E_STORE);
  ck_assert(strstr(err, "symlink") != NULL);
  ck_assert_uint_eq(count_entries(outside), 0);
  char tmpdir[600];
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", root);
  ck_assert_uint_eq(count_entries(tmpdir), 0);

  /* verify reports it; repair removes the link (not its target). */
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = true, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_NOTREG), 1);
  ck_assert(probs.v[0].repaired);
  teeny_store_problems_close(&probs);
  ck_assert(!exists(shard));
  ck_assert(exists(outside));
  put_ok(s, &t);
  ck_assert_uint_eq(count_entries(outside), 0);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(symlinked_target_file_is_replaced_not_followed) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "vector_add", "file");
  char shard[600], victim[600], p[512];
  snprintf(shard, sizeof shard, "%s/objects/%.2s", root, t.a.key);
  ck_assert_int_eq(mkdir(shard, 0755), 0);
  snprintf(victim, sizeof victim, "%s/precious", outside);
  /* As long as the PTX, so only O_NOFOLLOW (not a size check) saves us. */
  char precious[256];
  memset(precious, 'P', t.a.ptx_len);
  precious[t.a.ptx_len] = '\0';
  write_file(victim, precious);
  obj_path(&t, "o", p, sizeof p);
  ck_assert_int_eq(symlink(victim, p), 0);

  /* A get through the planted link is refused (O_NOFOLLOW)... */
  /* ...and put replaces the link itself atomically (rename never follows
   * its destination): the target outside keeps its contents. */
  put_ok(s, &t);
  ck_assert_str_eq(read_file(victim), precious);
  struct stat st;
  ck_assert_int_eq(lstat(p, &st), 0);
  ck_assert(S_ISREG(st.st_mode));
  teeny_store_rec r;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_get(s, t.a.key,
                                   TEENY_STORE_GET_ALL | TEENY_STORE_GET_VERIFY,
                                   &r, err),
                   0);
  ck_assert_str_eq(r.ptx, t.ptx);
  teeny_store_rec_close(&r);

  /* A link planted after the row exists: get refuses to follow it. */
  ck_assert_int_eq(unlink(p), 0);
  ck_assert_int_eq(symlink(victim, p), 0);
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_PTX, &r, err),
                   TEENY_E_CORRUPT);
  ck_assert_ptr_null(r.ptx);
  ck_assert_str_eq(read_file(victim), precious);
  /* verify --repair drops the row and unlinks the link, not the target. */
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = true, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_NOTREG), 1);
  teeny_store_problems_close(&probs);
  ck_assert(!exists(p));
  ck_assert_str_eq(read_file(victim), precious);
  teeny_store_destroy(s);
}
END_TEST

/* ---- corruption ---------------------------------------------------------- */

START_TEST(corruption_detected_and_repaired) {
  teeny_store *s = open_store(NULL);
  art a, b, c;
  make_art(&a, "flip", "x");
  make_art(&b, "trunc", "x");
  make_art(&c, "gone", "x");
  put_ok(s, &a);
  put_ok(s, &b);
  put_ok(s, &c);
  char pa[600], pb[600], pc[600];
  obj_path(&a, "o", pa, sizeof pa);
  obj_path(&b, "mlir", pb, sizeof pb);
  obj_path(&c, "c", pc, sizeof pc);
  /* a: same size, one byte flipped; b: truncated; c: deleted. */
  char *data = read_file(pa);
  data[0] ^= 1;
  write_file(pa, data);
  ck_assert_int_eq(truncate(pb, 3), 0);
  ck_assert_int_eq(unlink(pc), 0);

  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_rec r;
  /* Without VERIFY a same-size flip passes the size check... */
  ck_assert_int_eq(teeny_store_get(s, a.a.key, TEENY_STORE_GET_PTX, &r, err),
                   0);
  teeny_store_rec_close(&r);
  /* ...with it, it is caught; never any data handed out. */
  ck_assert_int_eq(teeny_store_get(s, a.a.key,
                                   TEENY_STORE_GET_PTX | TEENY_STORE_GET_VERIFY,
                                   &r, err),
                   TEENY_E_CORRUPT);
  ck_assert_ptr_null(r.ptx);
  ck_assert_ptr_null(r.name);
  ck_assert_int_eq(teeny_store_get(s, b.a.key, TEENY_STORE_GET_ALL, &r, err),
                   TEENY_E_CORRUPT);
  ck_assert_msg(strstr(err, "size") != NULL, "err: %s", err);
  ck_assert_ptr_null(r.ptx);
  ck_assert_int_eq(teeny_store_get(s, c.a.key, TEENY_STORE_GET_ALL, &r, err),
                   TEENY_E_CORRUPT);
  ck_assert_msg(strstr(err, "missing") != NULL, "err: %s", err);

  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_HASH), 1);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_SIZE), 1);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_MISSING), 1);
  ck_assert_uint_eq(probs.n, 3);
  teeny_store_problems_close(&probs);

  vo.repair = true;
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 3);
  for (size_t i = 0; i < probs.n; i++)
    ck_assert(probs.v[i].repaired);
  teeny_store_problems_close(&probs);
  ck_assert_int_eq(teeny_store_get(s, a.a.key, 0, &r, err), TEENY_E_NOTFOUND);
  ck_assert_int_eq(teeny_store_get(s, b.a.key, 0, &r, err), TEENY_E_NOTFOUND);
  ck_assert(!exists(pa));
  obj_path(&a, "c", pa, sizeof pa);
  ck_assert(!exists(pa));
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.entries, 0);
  ck_assert_uint_eq(st.bytes, 0);
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 0);
  teeny_store_problems_close(&probs);
  teeny_store_destroy(s);
}
END_TEST

/* teeny_store_remove drops one entry, its row and its three files, and
 * nothing else; a second removal is NOTFOUND, a bad key INVAL. */
START_TEST(remove_one_entry) {
  teeny_store *s = open_store(NULL);
  art a, b;
  make_art(&a, "victim", "x");
  make_art(&b, "bystander", "x");
  put_ok(s, &a);
  put_ok(s, &b);
  char pa[3][600];
  const char *ext[3] = {"o", "mlir", "c"};
  for (int i = 0; i < 3; i++) {
    obj_path(&a, ext[i], pa[i], sizeof pa[i]);
    ck_assert(exists(pa[i]));
  }
  /* corrupt it first, as the daemon finds it */
  ck_assert_int_eq(truncate(pa[0], 2), 0);
  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_counts removed;
  ck_assert_int_eq(teeny_store_remove(s, a.a.key, &removed, err), 0);
  ck_assert_uint_eq(removed.entries, 1);
  ck_assert_uint_eq(removed.bytes, art_bytes(&a));
  for (int i = 0; i < 3; i++)
    ck_assert(!exists(pa[i]));
  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_get(s, a.a.key, 0, &r, err), TEENY_E_NOTFOUND);
  ck_assert_int_eq(teeny_store_get(s, b.a.key, TEENY_STORE_GET_ALL | TEENY_STORE_GET_VERIFY,
                                   &r, err),
                   0);
  teeny_store_rec_close(&r);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.entries, 1);
  ck_assert_uint_eq(st.bytes, art_bytes(&b));
  ck_assert_int_eq(teeny_store_remove(s, a.a.key, &removed, err), TEENY_E_NOTFOUND);
  ck_assert_uint_eq(removed.entries, 0);
  ck_assert_int_eq(teeny_store_remove(s, "../../etc/passwd", NULL, err), TEENY_E_INVAL);
  /* nothing left behind: verify finds no orphan */
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 0);
  teeny_store_problems_close(&probs);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(verify_counters_and_stale_tmp) {
  teeny_store *s = open_store(NULL);
  art a;
  make_art(&a, "k", "x");
  put_ok(s, &a);
  teeny_store_destroy(s);
  sql_exec("UPDATE meta SET v = 999 WHERE k = 'bytes'");
  char p[600];
  snprintf(p, sizeof p, "%s/tmp/dead.tmp", root);
  write_file(p, "partial");
  s = open_store(NULL);
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  char err[TEENY_STORE_ERR_LEN] = "";
  /* A fresh temp file is a put in progress, not stale. */
  teeny_store_verify_opts vo = {.repair = true, .tmp_grace_s = 3600};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_TMP), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_COUNTERS), 1);
  ck_assert(probs.v[0].repaired);
  teeny_store_problems_close(&probs);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.bytes, art_bytes(&a));
  ck_assert(exists(p));
  vo.tmp_grace_s = -1;
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 1);
  ck_assert_int_eq(probs.v[0].kind, TEENY_STORE_PROB_TMP);
  ck_assert_str_eq(probs.v[0].path, "tmp/dead.tmp");
  ck_assert(probs.v[0].repaired);
  teeny_store_problems_close(&probs);
  ck_assert(!exists(p));
  /* Stray files in objects/ and rows with hostile names. */
  snprintf(p, sizeof p, "%s/objects/README", root);
  write_file(p, "x");
  teeny_store_destroy(s);
  sql_exec("INSERT INTO entries SELECT '"
           "0000000000000000000000000000000000000000000000000000000000000000"
           "', '../../evil', id, target, num_warps, entry, params, "
           "threads_per_block, shared_bytes, ptx_size, mlir_size, src_size, "
           "ptx_sha256, mlir_sha256, src_sha256, created, last_used, hits, "
           "compile_ms, compiler_version FROM entries");
  s = open_store(NULL);
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_BADROW), 1);
  ck_assert_uint_eq(count_kind(&probs, TEENY_STORE_PROB_ORPHAN), 1);
  ck_assert_uint_eq(probs.n, 2);
  teeny_store_problems_close(&probs);
  ck_assert(!exists(p));
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.entries, 1);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(malformed_params_row) {
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  teeny_store_destroy(s);
  sql_exec("UPDATE entries SET params = 'f32** ../x, nonsense'");
  s = open_store(NULL);
  /* get must not hand out a row whose signature it cannot decode. */
  teeny_store_rec r;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_PTX, &r, err),
                   TEENY_E_CORRUPT);
  ck_assert_ptr_null(r.ptx);
  /* list still shows it (without params) so an admin can see it. */
  teeny_store_rec *v;
  size_t n;
  ck_assert_int_eq(teeny_store_list(s, NULL, &v, &n, err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(v[0].nparams, 0);
  teeny_store_recs_free(v, n);
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = true, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, err), 0);
  ck_assert_uint_eq(probs.n, 1);
  ck_assert_int_eq(probs.v[0].kind, TEENY_STORE_PROB_BADROW);
  ck_assert(probs.v[0].repaired);
  teeny_store_problems_close(&probs);
  char p[600];
  obj_path(&t, "o", p, sizeof p);
  ck_assert(!exists(p));
  put_ok(s, &t); /* and it can be stored again */
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_PTX, &r, err),
                   0);
  ck_assert_uint_eq(r.nparams, 2);
  teeny_store_rec_close(&r);
  teeny_store_destroy(s);
}
END_TEST

/* ---- touches and eviction ------------------------------------------------ */

START_TEST(touches_batch_and_survive_reopen) {
  test_clock clk = {100};
  teeny_store *s = open_store(&clk);
  teeny_store *other = open_store(NULL);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  clk.now = 500;
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(teeny_store_touch(s, t.a.key), 0);
  clk.now = 400; /* a clock step back never lowers last_used */
  ck_assert_int_eq(teeny_store_touch(s, t.a.key), 0);
  ck_assert_uint_eq(teeny_store_pending(s), 1);
  ck_assert_int_eq(teeny_store_touch(s, "nothex"), TEENY_E_INVAL);

  /* Not written yet: another connection sees the old row. */
  teeny_store_rec r;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_get(other, t.a.key, 0, &r, err), 0);
  ck_assert_int_eq(r.hits, 0);
  ck_assert_int_eq(r.last_used, 100);
  teeny_store_rec_close(&r);

  ck_assert_int_eq(teeny_store_flush(s, err), 0);
  ck_assert_uint_eq(teeny_store_pending(s), 0);
  ck_assert_int_eq(teeny_store_get(other, t.a.key, 0, &r, err), 0);
  ck_assert_int_eq(r.hits, 4);
  ck_assert_int_eq(r.last_used, 500);
  teeny_store_rec_close(&r);

  /* Touches of a key that is not stored are dropped quietly. */
  char ghost[65];
  memset(ghost, 'e', 64);
  ghost[64] = '\0';
  ck_assert_int_eq(teeny_store_touch(s, ghost), 0);
  /* Many distinct keys grow the table. */
  for (int i = 0; i < 300; i++) {
    char k[65];
    snprintf(k, sizeof k, "%064x", i);
    ck_assert_int_eq(teeny_store_touch(s, k), 0);
  }
  clk.now = 700;
  ck_assert_int_eq(teeny_store_touch(s, t.a.key), 0);
  ck_assert_uint_eq(teeny_store_pending(s), 302);
  teeny_store_destroy(s); /* flushes */
  teeny_store_destroy(other);

  s = open_store(NULL);
  ck_assert_int_eq(teeny_store_get(s, t.a.key, 0, &r, err), 0);
  ck_assert_int_eq(r.hits, 5);
  ck_assert_int_eq(r.last_used, 700);
  teeny_store_rec_close(&r);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.hits, 5);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(eviction_keeps_most_recently_used) {
  test_clock clk = {100};
  teeny_store *s = open_store(&clk);
  art t[4];
  char variant[16];
  for (int i = 0; i < 4; i++) {
    snprintf(variant, sizeof variant, "v%d", i);
    make_art(&t[i], "k", variant);
    clk.now = 100 + i; /* put order: 0 oldest */
    put_ok(s, &t[i]);
  }
  /* Use 0 and 2 later: LRU order becomes 1, 3, 0, 2. */
  clk.now = 200;
  teeny_store_touch(s, t[0].a.key);
  clk.now = 201;
  teeny_store_touch(s, t[2].a.key);
  ck_assert_int_eq(teeny_store_flush(s, NULL), 0);
  /* A pending (unflushed) touch counts too: evict_to flushes first. */
  clk.now = 202;
  teeny_store_touch(s, t[0].a.key);

  uint64_t cap = art_bytes(&t[0]) + art_bytes(&t[2]);
  teeny_store_counts removed;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_evict_to(s, cap, &removed, err), 0);
  ck_assert_uint_eq(removed.entries, 2);
  ck_assert_uint_eq(removed.bytes, art_bytes(&t[1]) + art_bytes(&t[3]));
  teeny_store_rec r;
  for (int i = 0; i < 4; i++) {
    int want = (i == 0 || i == 2) ? 0 : TEENY_E_NOTFOUND;
    ck_assert_int_eq(
        teeny_store_get(s, t[i].a.key, TEENY_STORE_GET_ALL, &r, err), want);
    teeny_store_rec_close(&r);
    char p[600];
    obj_path(&t[i], "o", p, sizeof p);
    ck_assert(exists(p) == (want == 0));
  }
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.entries, 2);
  ck_assert_uint_eq(st.bytes, cap);
  /* Already under the cap: nothing happens. */
  ck_assert_int_eq(teeny_store_evict_to(s, cap, &removed, err), 0);
  ck_assert_uint_eq(removed.entries, 0);
  /* One byte under: the older of the two goes (2 at 201, 0 at 202). */
  ck_assert_int_eq(teeny_store_evict_to(s, cap - 1, &removed, err), 0);
  ck_assert_uint_eq(removed.entries, 1);
  ck_assert_int_eq(teeny_store_get(s, t[2].a.key, 0, &r, err),
                   TEENY_E_NOTFOUND);
  ck_assert_int_eq(teeny_store_get(s, t[0].a.key, 0, &r, err), 0);
  teeny_store_rec_close(&r);
  ck_assert_int_eq(teeny_store_evict_to(s, 0, &removed, err), 0);
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.entries, 0);
  ck_assert_uint_eq(st.bytes, 0);
  teeny_store_destroy(s);
}
END_TEST

/* Between the row delete and the unlinks of an eviction, another
 * process stores the same key again: its fresh files must survive. */
typedef struct reput {
  teeny_store *other; /* the other process's handle */
  art *t;             /* what it stores */
  int rc;             /* its put's result */
} reput;

static void reput_now(void *ctx) {
  reput *r = ctx;
  r->rc = teeny_store_put(r->other, &r->t->a, NULL, NULL, NULL, NULL);
}

START_TEST(removal_spares_a_key_stored_again) {
  art t;
  make_art(&t, "k", "again");
  teeny_store *other = open_store(NULL);
  reput rp = {other, &t, -1};
  teeny_store_opts o = {.root = root};
  o.test.between_phases = reput_now;
  o.test.ctx = &rp;
  teeny_store *s;
  ck_assert_int_eq(teeny_store_create(&o, &s, NULL), 0);
  put_ok(s, &t);
  teeny_store_counts c;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_evict_to(s, 0, &c, err), 0);
  ck_assert_uint_eq(c.entries, 1);
  ck_assert_int_eq(rp.rc, 0);
  /* The row is back and every file it names is there. */
  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_get(s, t.a.key,
                                   TEENY_STORE_GET_ALL | TEENY_STORE_GET_VERIFY,
                                   &r, err),
                   0);
  teeny_store_rec_close(&r);
  teeny_store_destroy(s);
  teeny_store_destroy(other);
}
END_TEST

/* ---- list / show / purge ------------------------------------------------- */

START_TEST(list_show_purge) {
  test_clock clk = {1000};
  teeny_store *s = open_store(&clk);
  art t[4];
  const char *names[] = {"vector_add", "vector_mul", "softmax", "matmul"};
  for (int i = 0; i < 4; i++) {
    make_art(&t[i], names[i], "x");
    if (i == 2) /* a bigger one */
      t[i].a.ptx_len = snprintf(t[i].ptx, sizeof t[i].ptx, "%0200d", 7);
    clk.now = 1000 + 10 * i;
    put_ok(s, &t[i]);
  }
  for (int h = 0; h < 5; h++)
    teeny_store_touch(s, t[3].a.key);
  clk.now = 5000;
  teeny_store_touch(s, t[1].a.key);
  ck_assert_int_eq(teeny_store_flush(s, NULL), 0);

  char err[TEENY_STORE_ERR_LEN] = "";
  teeny_store_rec *v;
  size_t n;
  teeny_store_query q = {.name_glob = "vector_*"};
  ck_assert_int_eq(teeny_store_list(s, &q, &v, &n, err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(v[0].name, "vector_mul"); /* most recently used first */
  ck_assert_str_eq(v[1].name, "vector_add");
  teeny_store_recs_free(v, n);
  q = (teeny_store_query){.sort = TEENY_STORE_SORT_SIZE, .limit = 1};
  ck_assert_int_eq(teeny_store_list(s, &q, &v, &n, err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(v[0].name, "softmax");
  teeny_store_recs_free(v, n);
  q = (teeny_store_query){.sort = TEENY_STORE_SORT_HITS};
  ck_assert_int_eq(teeny_store_list(s, &q, &v, &n, err), 0);
  ck_assert_uint_eq(n, 4);
  ck_assert_str_eq(v[0].name, "matmul");
  ck_assert_int_eq(v[0].hits, 5);
  teeny_store_recs_free(v, n);
  q = (teeny_store_query){.name_glob = "nothing*"};
  ck_assert_int_eq(teeny_store_list(s, &q, &v, &n, err), 0);
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_null(v);

  /* show: unique prefix (any case), too short, none. */
  teeny_store_rec r;
  char prefix[16];
  snprintf(prefix, sizeof prefix, "%.10s", t[2].a.key);
  for (char *c = prefix; *c; c++)
    if (*c >= 'a' && *c <= 'f')
      *c = (char)(*c - 'a' + 'A');
  ck_assert_int_eq(teeny_store_show(s, prefix, &r, NULL, err), 0);
  ck_assert_str_eq(r.name, "softmax");
  ck_assert_str_eq(r.key, t[2].a.key);
  teeny_store_rec_close(&r);
  ck_assert_int_eq(teeny_store_show(s, "abc", &r, NULL, err), TEENY_E_INVAL);
  ck_assert_int_eq(teeny_store_show(s, "zzzz", &r, NULL, err), TEENY_E_INVAL);

  /* Ambiguity needs keys that share a prefix: store two by hand. */
  art x, y;
  make_art(&x, "amb", "1");
  make_art(&y, "amb", "2");
  memcpy(x.a.key, "abcd0000", 8);
  memcpy(y.a.key, "abcd0001", 8);
  put_ok(s, &x);
  put_ok(s, &y);
  teeny_store_keys cands;
  ck_assert_int_eq(teeny_store_show(s, "abcd", &r, &cands, err),
                   TEENY_E_AMBIGUOUS);
  ck_assert_uint_eq(cands.n, 2);
  ck_assert(!cands.more);
  ck_assert_str_eq(cands.v[0], x.a.key);
  ck_assert_str_eq(cands.v[1], y.a.key);
  ck_assert_msg(strstr(err, "abcd0000") && strstr(err, "abcd0001"), "err: %s",
                err);
  ck_assert_ptr_null(r.name);
  teeny_store_keys_close(&cands);
  ck_assert_int_eq(teeny_store_show(s, "abcd0001", &r, &cands, err), 0);
  ck_assert_str_eq(r.key, y.a.key);
  teeny_store_rec_close(&r);
  ck_assert_int_eq(teeny_store_show(s, "abce", &r, &cands, err),
                   TEENY_E_NOTFOUND);

  /* purge: empty request refused; by name; by age; to size; all. */
  teeny_store_purge_req pr = {0};
  teeny_store_counts c;
  ck_assert_int_eq(teeny_store_purge(s, &pr, &c, err), TEENY_E_INVAL);
  pr = (teeny_store_purge_req){.name_glob = "amb"};
  ck_assert_int_eq(teeny_store_purge(s, &pr, &c, err), 0);
  ck_assert_uint_eq(c.entries, 2);
  ck_assert_uint_eq(c.bytes, art_bytes(&x) + art_bytes(&y));
  /* last_used: vector_add 1000, vector_mul 5000, softmax 1020, matmul 1030 */
  clk.now = 5100;
  pr = (teeny_store_purge_req){.older_than_s = 4085}; /* before 1015 */
  ck_assert_int_eq(teeny_store_purge(s, &pr, &c, err), 0);
  ck_assert_uint_eq(c.entries, 1);
  ck_assert_int_eq(teeny_store_get(s, t[0].a.key, 0, &r, err),
                   TEENY_E_NOTFOUND);
  pr = (teeny_store_purge_req){.to_size = true, .max_bytes = art_bytes(&t[1])};
  ck_assert_int_eq(teeny_store_purge(s, &pr, &c, err), 0);
  ck_assert_uint_eq(c.entries, 2);
  ck_assert_int_eq(teeny_store_get(s, t[1].a.key, 0, &r, err), 0);
  teeny_store_rec_close(&r);
  pr = (teeny_store_purge_req){.all = true};
  ck_assert_int_eq(teeny_store_purge(s, &pr, &c, err), 0);
  ck_assert_uint_eq(c.entries, 1);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, err), 0);
  ck_assert_uint_eq(st.entries, 0);
  char objdir[600];
  snprintf(objdir, sizeof objdir, "%s/objects", root);
  char *tree = snapshot(objdir);
  ck_assert_ptr_null(strstr(tree, ".o\n"));
  teeny__free(tree);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(purge_many_in_batches) {
  /* More entries than one unlink batch (256) of the removal's phase 2.
   * One real put, then 299 clones (rows by SQL, files by hard link), since
   * 300 real puts cost 1200 fsyncs. */
  enum { N = 300 };
  teeny_store *s = open_store(NULL);
  art t;
  make_art(&t, "many", "0");
  put_ok(s, &t);
  teeny_store_destroy(s);
  sql_exec("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
           "WHERE x < 299) INSERT INTO entries SELECT printf('%064x', x), "
           "name, id, target, num_warps, entry, params, threads_per_block, "
           "shared_bytes, ptx_size, mlir_size, src_size, ptx_sha256, "
           "mlir_sha256, src_sha256, created, last_used, hits, compile_ms, "
           "compiler_version FROM entries, n");
  char objdir[600], shard[700];
  snprintf(objdir, sizeof objdir, "%s/objects", root);
  snprintf(shard, sizeof shard, "%s/00", objdir);
  mkdir(shard, 0755);
  for (int i = 1; i < N; i++) {
    art c = t;
    snprintf(c.a.key, sizeof c.a.key, "%064x", i);
    for (int e = 0; e < 3; e++) {
      const char *ext[] = {"o", "mlir", "c"};
      char from[600], to[600];
      obj_path(&t, ext[e], from, sizeof from);
      obj_path(&c, ext[e], to, sizeof to);
      ck_assert_int_eq(link(from, to), 0);
    }
  }
  s = open_store(NULL);
  teeny_store_purge_req pr = {.name_glob = "many"};
  teeny_store_counts c;
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_purge(s, &pr, &c, err), 0);
  ck_assert_uint_eq(c.entries, N);
  ck_assert_uint_eq(c.bytes, N * art_bytes(&t));
  char *tree = snapshot(objdir);
  ck_assert_ptr_null(strstr(tree, "many_"));
  teeny__free(tree);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(allocation_failures_are_clean) {
  /* Fail the n-th allocation of our code (SQLite's own are not hooked) in
   * every operation in turn: each must return 0 or NOMEM, never crash or
   * leak (ASan), and the store must verify clean afterwards. */
  teeny_store *s = open_store(NULL);
  art base;
  make_art(&base, "k", "base");
  put_ok(s, &base);
  bool saw_nomem = false;
  for (long n = 0; n < 40; n++) {
    art t;
    char variant[16];
    snprintf(variant, sizeof variant, "n%ld", n);
    make_art(&t, "k", variant);
    teeny_store_rec r, *v = NULL;
    size_t nv = 0;
    teeny_store_problems probs;
    teeny_store_problems_init(&probs);
    teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
    teeny_store_keys cands = {0};
    int rcs[8];
    teeny__alloc_fail_after(n);
    rcs[0] = teeny_store_put(s, &t.a, NULL, &r, NULL, NULL);
    teeny_store_rec_close(&r);
    rcs[1] = teeny_store_get(s, base.a.key, TEENY_STORE_GET_ALL, &r, NULL);
    teeny_store_rec_close(&r);
    rcs[2] = teeny_store_list(s, NULL, &v, &nv, NULL);
    teeny_store_recs_free(v, nv);
    rcs[3] = teeny_store_show(s, base.a.key, &r, &cands, NULL);
    teeny_store_rec_close(&r);
    teeny_store_keys_close(&cands);
    rcs[4] = teeny_store_touch(s, base.a.key);
    rcs[5] = teeny_store_flush(s, NULL);
    rcs[6] = teeny_store_verify(s, &vo, &probs, NULL);
    teeny_store_problems_close(&probs);
    rcs[7] = teeny_store_evict_to(s, UINT64_MAX, NULL, NULL);
    teeny__alloc_fail_after(-1);
    for (int i = 0; i < 8; i++) {
      ck_assert_msg(rcs[i] == 0 || rcs[i] == TEENY_E_NOMEM, "n=%ld op %d: %s",
                    n, i, teeny_err_name(rcs[i]));
      saw_nomem = saw_nomem || rcs[i] == TEENY_E_NOMEM;
    }
  }
  ck_assert(saw_nomem);
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, NULL), 0);
  ck_assert_uint_eq(probs.n, 0);
  teeny_store_problems_close(&probs);
  teeny_store_destroy(s);
}
END_TEST

/* ---- schema -------------------------------------------------------------- */

START_TEST(schema_version_and_reopen) {
  teeny_store *s = open_store(NULL);
  ck_assert_int_eq(teeny_store_schema_version(s), TEENY_STORE_SCHEMA_VERSION);
  art t;
  make_art(&t, "k", "x");
  put_ok(s, &t);
  teeny_store_destroy(s);
  s = open_store(NULL);
  ck_assert_int_eq(teeny_store_schema_version(s), TEENY_STORE_SCHEMA_VERSION);
  teeny_store_rec r;
  ck_assert_int_eq(teeny_store_get(s, t.a.key, TEENY_STORE_GET_ALL, &r, NULL),
                   0);
  teeny_store_rec_close(&r);
  teeny_store_destroy(s);

  /* A newer schema than we know is refused, not clobbered. */
  sql_exec("PRAGMA user_version = 99");
  teeny_store_opts o = {.root = root};
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_create(&o, &s, err), TEENY_E_STORE);
  ck_assert_msg(strstr(err, "99") != NULL, "err: %s", err);
  /* A db that is not SQLite at all. */
  teardown();
  setup();
  ck_assert_int_eq(mkdir(root, 0755), 0);
  char p[600];
  snprintf(p, sizeof p, "%s/index.db", root);
  write_file(p, "this is not a database, not at all, no no no no no no no no "
                "no no no no no no no no no no no no no no no no no no no no");
  ck_assert_int_ne(teeny_store_create(&o, &s, err), 0);
  ck_assert_ptr_null(s);
}
END_TEST

/* ---- concurrency --------------------------------------------------------- */

typedef struct racer {
  teeny_store *s;        /* this thread's handle */
  art *t;                /* what to put */
  pthread_barrier_t *go; /* start together */
  int rc;                /* put's result */
  bool created;          /* whether this put added the row */
  char err[TEENY_STORE_ERR_LEN];
} racer;

static void *race(void *arg) {
  racer *r = arg;
  pthread_barrier_wait(r->go);
  teeny_store_rec rec;
  r->rc = teeny_store_put(r->s, &r->t->a, NULL, &rec, &r->created, r->err);
  if (r->rc == 0 && strcmp(rec.key, r->t->a.key) != 0)
    r->rc = -1000;
  teeny_store_rec_close(&rec);
  return NULL;
}

START_TEST(two_handles_race_on_one_key) {
  /* The daemon's handle and an embedded client's, in two threads. */
  teeny_store *daemon_h = open_store(NULL);
  teeny_store *client_h = open_store(NULL);
  for (int round = 0; round < 20; round++) {
    art t;
    char variant[16];
    snprintf(variant, sizeof variant, "r%d", round);
    make_art(&t, "raced", variant);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    racer r[2] = {{.s = daemon_h, .t = &t, .go = &go},
                  {.s = client_h, .t = &t, .go = &go}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
      pthread_create(&th[i], NULL, race, &r[i]);
    for (int i = 0; i < 2; i++)
      pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    ck_assert_msg(r[0].rc == 0, "put 0: %s", r[0].err);
    ck_assert_msg(r[1].rc == 0, "put 1: %s", r[1].err);
    ck_assert_int_eq(r[0].created + r[1].created, 1);
  }
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(daemon_h, &st, NULL), 0);
  ck_assert_uint_eq(st.entries, 20);
  char tmpdir[600];
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", root);
  ck_assert_uint_eq(count_entries(tmpdir), 0);
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(client_h, &vo, &probs, NULL), 0);
  ck_assert_uint_eq(probs.n, 0);
  teeny_store_problems_close(&probs);
  teeny_store_destroy(daemon_h);
  teeny_store_destroy(client_h);
}
END_TEST

START_TEST(second_daemon_lock_refused) {
  teeny_store *a = open_store(NULL);
  teeny_store *b = open_store(NULL);
  char err[TEENY_STORE_ERR_LEN] = "";
  ck_assert_int_eq(teeny_store_lock_daemon(a, err), 0);
  ck_assert_int_eq(teeny_store_lock_daemon(a, err), 0); /* already held */
  ck_assert_int_eq(teeny_store_lock_daemon(b, err), TEENY_E_BUSY);
  char want[32];
  snprintf(want, sizeof want, "pid %ld", (long)getpid());
  ck_assert_msg(strstr(err, want) != NULL, "err: %s", err);
  /* An embedded client (no lock) still works alongside. */
  art t;
  make_art(&t, "k", "x");
  put_ok(b, &t);
  teeny_store_unlock_daemon(a);
  ck_assert_int_eq(teeny_store_lock_daemon(b, err), 0);
  ck_assert_int_eq(teeny_store_lock_daemon(a, err), TEENY_E_BUSY);
  teeny_store_destroy(b); /* releases */
  ck_assert_int_eq(teeny_store_lock_daemon(a, err), 0);
  teeny_store_destroy(a);
}
END_TEST

START_TEST(processes_race_puts_and_evictions) {
  /* Three processes put the same ten keys (in different orders) while one
   * of them also evicts; afterwards the store must verify clean. */
  enum { NPROC = 3, NKEYS = 10 };
  pid_t kids[NPROC];
  for (int p = 0; p < NPROC; p++) {
    kids[p] = fork();
    ck_assert_int_ge(kids[p], 0);
    if (kids[p] > 0)
      continue;
    teeny_store *s = NULL;
    teeny_store_opts o = {.root = root};
    int bad = teeny_store_create(&o, &s, NULL) != 0;
    for (int round = 0; round < 3 && !bad; round++)
      for (int i = 0; i < NKEYS && !bad; i++) {
        art t;
        char variant[16];
        snprintf(variant, sizeof variant, "k%d", (i * (p + 1)) % NKEYS);
        make_art(&t, "multi", variant);
        bad = teeny_store_put(s, &t.a, NULL, NULL, NULL, NULL) != 0 ||
              teeny_store_touch(s, t.a.key) != 0;
        if (p == 0 && i % 4 == 3)
          bad = bad || teeny_store_evict_to(s, 500, NULL, NULL) != 0;
      }
    teeny_store_destroy(s);
    _exit(bad);
  }
  for (int p = 0; p < NPROC; p++) {
    int status;
    ck_assert_int_eq(waitpid(kids[p], &status, 0), kids[p]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child %d failed", p);
  }
  teeny_store *s = open_store(NULL);
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = false, .tmp_grace_s = -1};
  ck_assert_int_eq(teeny_store_verify(s, &vo, &probs, NULL), 0);
  for (size_t i = 0; i < probs.n; i++)
    fprintf(stderr, "problem: %s %s %s\n",
            teeny_store_problem_name(probs.v[i].kind), probs.v[i].path,
            probs.v[i].detail);
  ck_assert_uint_eq(probs.n, 0);
  teeny_store_problems_close(&probs);
  teeny_store_stats st;
  ck_assert_int_eq(teeny_store_stats_get(s, &st, NULL), 0);
  ck_assert_uint_ge(st.entries, 1);
  ck_assert_uint_le(st.entries, NKEYS);
  teeny_store_destroy(s);
}
END_TEST

START_TEST(daemon_lock_across_processes) {
  int ready[2], done[2];
  ck_assert_int_eq(pipe(ready), 0);
  ck_assert_int_eq(pipe(done), 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) { /* the "first daemon" */
    teeny_store *s = NULL;
    teeny_store_opts o = {.root = root};
    char c = teeny_store_create(&o, &s, NULL) == 0 &&
                     teeny_store_lock_daemon(s, NULL) == 0
                 ? 'y'
                 : 'n';
    (void)!write(ready[1], &c, 1);
    (void)!read(done[0], &c, 1); /* hold the lock until told */
    teeny_store_destroy(s);
    _exit(0);
  }
  char c = 0;
  ck_assert_int_eq(read(ready[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  teeny_store *s = open_store(NULL);
  char err[TEENY_STORE_ERR_LEN] = "", want[32];
  ck_assert_int_eq(teeny_store_lock_daemon(s, err), TEENY_E_BUSY);
  snprintf(want, sizeof want, "(pid %ld)", (long)child);
  ck_assert_msg(strstr(err, want) != NULL, "err: %s", err);
  ck_assert_int_eq(write(done[1], "x", 1), 1);
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert_int_eq(teeny_store_lock_daemon(s, err), 0);
  teeny_store_destroy(s);
}
END_TEST

int main(void) {
  Suite *su = suite_create("store");
  TCase *tc = tcase_create("all");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, root_resolution_order);
  tcase_add_test(tc, name_and_key_checks);
  tcase_add_test(tc, hostile_names_touch_nothing);
  tcase_add_test(tc, put_get_round_trip);
  tcase_add_test(tc, stricter_modes);
  tcase_add_test(tc, crash_before_row_leaves_only_orphans);
  tcase_add_test(tc, injected_enospc_leaves_nothing);
  tcase_add_test(tc, symlinked_root_and_subdirs_refused);
  tcase_add_test(tc, symlinked_shard_is_not_followed);
  tcase_add_test(tc, symlinked_target_file_is_replaced_not_followed);
  tcase_add_test(tc, corruption_detected_and_repaired);
  tcase_add_test(tc, remove_one_entry);
  tcase_add_test(tc, verify_counters_and_stale_tmp);
  tcase_add_test(tc, malformed_params_row);
  tcase_add_test(tc, touches_batch_and_survive_reopen);
  tcase_add_test(tc, eviction_keeps_most_recently_used);
  tcase_add_test(tc, removal_spares_a_key_stored_again);
  tcase_add_test(tc, list_show_purge);
  tcase_add_test(tc, purge_many_in_batches);
  tcase_add_test(tc, allocation_failures_are_clean);
  tcase_add_test(tc, schema_version_and_reopen);
  tcase_add_test(tc, two_handles_race_on_one_key);
  tcase_add_test(tc, second_daemon_lock_refused);
  tcase_add_test(tc, daemon_lock_across_processes);
  tcase_add_test(tc, processes_race_puts_and_evictions);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
