/*
 * tests/unit/store_fixture.c — the store tests' shared fixtures (see
 * store_fixture.h).
 */
#include <check.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "unit/store_fixture.h"

/* ---- fixtures ------------------------------------------------------------ */

char tdir[200];    /* the test's temp directory */
char root[240];    /* tdir/store */
char outside[240]; /* tdir/outside */

void setup(void) {
  snprintf(tdir, sizeof tdir, "/tmp/teeny_store_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tdir));
  snprintf(root, sizeof root, "%s/store", tdir);
  snprintf(outside, sizeof outside, "%s/outside", tdir);
  ck_assert_int_eq(mkdir(outside, 0755), 0);
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}

void teardown(void) { nftw(tdir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

int64_t clock_fn(void *ctx) { return ((test_clock *)ctx)->now; }

teeny_store *open_store(test_clock *clk) {
  teeny_store_opts o = {.root = root};
  if (clk) {
    o.clock = clock_fn;
    o.clock_ctx = clk;
  }
  teeny_store *s = NULL;
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_create(&o, &s, err);
  ck_assert_msg(rc == 0, "create: %s", err);
  return s;
}

void make_art(art *t, const char *name, const char *variant) {
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  snprintf(t->src, sizeof t->src, "// %s %s\nvoid %s_entry_point(f32 *a) {}\n",
           name, variant, name);
  snprintf(t->ptx, sizeof t->ptx, ".version 8.0\n// ptx of %s %s\n", name,
           variant);
  snprintf(t->mlir, sizeof t->mlir, "tt.func @%s() // %s\n", name, variant);
  t->params[0] = (teeny_param){"a_ptr", TEENY_PARAM_POINTER, TEENY_DT_F32};
  t->params[1] = (teeny_param){"n", TEENY_PARAM_SCALAR, TEENY_DT_I32};
  teeny_artifact *a = &t->a;
  a->name = t->name;
  a->id = "kernel__f32__128";
  a->entry = "kernel_entry_point";
  a->target = "sm_90a";
  a->num_warps = 4;
  a->source = t->src;
  a->source_len = strlen(t->src);
  a->ptx = t->ptx;
  a->ptx_len = strlen(t->ptx);
  a->mlir = t->mlir;
  a->mlir_len = strlen(t->mlir);
  a->params = t->params;
  a->nparams = 2;
  a->threads_per_block = 128;
  a->shared_bytes = 256;
  a->compile_ns = 4500000;
  ck_assert_int_eq(teeny__sha256_hex(a->source, a->source_len, a->key), 0);
}

uint64_t art_bytes(const art *t) {
  return t->a.ptx_len + t->a.mlir_len + t->a.source_len;
}

void put_ok(teeny_store *s, art *t) {
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_put(s, &t->a, NULL, NULL, NULL, err);
  ck_assert_msg(rc == 0, "put %s: %s (%s)", t->name, err, teeny_err_name(rc));
}

/* The path of one object file of t (ext "o", "mlir", "c"). */
void obj_path(const art *t, const char *ext, char *out, size_t n) {
  char rel[256];
  ck_assert_int_eq(teeny_store_object_path(t->name, strlen(t->name), t->a.key,
                                           ext, rel, sizeof rel),
                   0);
  snprintf(out, n, "%s/objects/%s", root, rel);
}

bool exists(const char *p) {
  struct stat st;
  return lstat(p, &st) == 0;
}

/* Every path under dir (relative, sorted by nftw order), one per line. */
static teeny_buf snap_buf;
static size_t snap_skip;
static int snap_one(const char *p, const struct stat *st, int flag,
                    struct FTW *f) {
  (void)st, (void)flag, (void)f;
  teeny__buf_printf(&snap_buf, "%s\n", p + snap_skip);
  return 0;
}

char *snapshot(const char *dir) {
  teeny__buf_init(&snap_buf);
  snap_skip = strlen(dir);
  nftw(dir, snap_one, 16, FTW_PHYS);
  char *s = teeny__buf_take(&snap_buf, NULL);
  ck_assert_ptr_nonnull(s);
  return s;
}

size_t count_entries(const char *dir) {
  char *s = snapshot(dir);
  size_t n = 0;
  for (char *c = s; *c; c++)
    n += *c == '\n';
  teeny__free(s);
  return n - 1; /* not dir itself */
}

void write_file(const char *p, const char *data) {
  FILE *f = fopen(p, "w");
  ck_assert_ptr_nonnull(f);
  fputs(data, f);
  fclose(f);
}

char *read_file(const char *p) {
  static char buf[4096];
  FILE *f = fopen(p, "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

void sql_exec(const char *sql) {
  char db[600];
  snprintf(db, sizeof db, "%s/index.db", root);
  sqlite3 *h;
  ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
  ck_assert_int_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
}

size_t count_kind(const teeny_store_problems *p,
                         teeny_store_problem_kind k) {
  size_t n = 0;
  for (size_t i = 0; i < p->n; i++)
    n += p->v[i].kind == k;
  return n;
}

