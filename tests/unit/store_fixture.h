/*
 * tests/unit/store_fixture.h — what the store's unit tests share: a temp
 * directory per test (T/store is the root, T/outside stands for everything
 * outside it), a store handle with a settable clock, artifacts whose key is
 * the sha256 of their source, and small file and SQL helpers.
 */
#ifndef TEENY_TESTS_STORE_FIXTURE_H
#define TEENY_TESTS_STORE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

extern char tdir[200];    /* the test's temp directory */
extern char root[240];    /* tdir/store */
extern char outside[240]; /* tdir/outside */

typedef struct test_clock {
  int64_t now; /* what the store's clock says */
} test_clock;
/* An artifact with key = sha256(source).  Strings live in the struct. */
typedef struct art {
  teeny_artifact a;      /* what put sees */
  char name[80];         /* a.name */
  char src[256];         /* a.source */
  char ptx[256];         /* a.ptx */
  char mlir[256];        /* a.mlir */
  teeny_param params[2]; /* a.params */
} art;

void setup(void);    /* check fixture: make tdir, outside */
void teardown(void); /* remove tdir */
int64_t clock_fn(void *ctx);
/* A store on root (clk may be NULL: the real clock); fails the test. */
teeny_store *open_store(test_clock *clk);
void make_art(art *t, const char *name, const char *variant);
uint64_t art_bytes(const art *t);
void put_ok(teeny_store *s, art *t);
/* The path of one object file of t (ext "o", "mlir", "c"). */
void obj_path(const art *t, const char *ext, char *out, size_t n);
bool exists(const char *p);
/* Every path under dir (relative, nftw order), one per line; teeny__free. */
char *snapshot(const char *dir);
size_t count_entries(const char *dir);
void write_file(const char *p, const char *data);
char *read_file(const char *p); /* a static buffer */
void sql_exec(const char *sql); /* on root/index.db */
size_t count_kind(const teeny_store_problems *p, teeny_store_problem_kind k);

#endif /* TEENY_TESTS_STORE_FIXTURE_H */
