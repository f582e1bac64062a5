/*
 * store/tuned.c — autotuning records: the fastest configuration of a
 * kernel for one problem key on one GPU and driver, so that no later
 * process, on any day, times the candidates again.
 *
 * One row per (digest, problem, gpu, driver) in the tuned table (schema
 * v2, index.c); no files.  The daemon reads a record once and then answers
 * from memory (daemon/tune.c); puts replace.  Records are not part of the
 * cache's size and are not evicted: they are a few hundred bytes each and
 * cost seconds of GPU time to make.  Load: a put per tuning run, a get per
 * first lookup of a key after a daemon start.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"

#define TUNED_COLS                                                             \
  "digest, kernel, problem, gpu, driver, config, best_ms, candidates, created"

void teeny_store_tuned_close(teeny_store_tuned *t) {
  if (!t)
    return;
  teeny__free(t->kernel);
  teeny__free(t->problem);
  teeny__free(t->gpu);
  teeny__free(t->driver);
  teeny__free(t->config);
  memset(t, 0, sizeof *t);
}

void teeny_store_tuneds_free(teeny_store_tuned *v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    teeny_store_tuned_close(&v[i]);
  teeny__free(v);
}

/* A text of 1..TEENY_STORE_TUNED_TEXT_MAX bytes (empty allowed for
 * problem: a kernel tuned once for every size). */
static bool text_ok(const char *t, bool empty_ok) {
  size_t n = t ? strlen(t) : 0;
  return t && (n || empty_ok) && n <= TEENY_STORE_TUNED_TEXT_MAX;
}

static int check_key(const char *digest, const char *problem, const char *gpu,
                     const char *driver, char *err) {
  if (teeny_store_key_check(digest))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "invalid kernel digest (want 64 lowercase hex digits)");
  if (!text_ok(problem, true) || !text_ok(gpu, false) || !text_ok(driver, false))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "a tuning record needs a problem key, a GPU name and "
                             "a driver of at most %d bytes",
                             TEENY_STORE_TUNED_TEXT_MAX);
  return TEENY_OK;
}

static char *col(sqlite3_stmt *st, int i, bool *oom) {
  const unsigned char *t = sqlite3_column_text(st, i);
  char *d = teeny__strdup(t ? (const char *)t : "");
  *oom = *oom || !d;
  return d;
}

static int from_stmt(sqlite3_stmt *st, teeny_store_tuned *t, char *err) {
  memset(t, 0, sizeof *t);
  bool oom = false;
  const unsigned char *d = sqlite3_column_text(st, 0);
  snprintf(t->digest, sizeof t->digest, "%s", d ? (const char *)d : "");
  t->kernel = col(st, 1, &oom);
  t->problem = col(st, 2, &oom);
  t->gpu = col(st, 3, &oom);
  t->driver = col(st, 4, &oom);
  t->config = col(st, 5, &oom);
  t->best_ms = sqlite3_column_double(st, 6);
  sqlite3_int64 c = sqlite3_column_int64(st, 7);
  t->candidates = c > 0 && c <= UINT32_MAX ? (uint32_t)c : 0;
  t->created = sqlite3_column_int64(st, 8);
  if (oom) {
    teeny_store_tuned_close(t);
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  }
  return TEENY_OK;
}

int teeny_store_tuned_get(teeny_store *s, const char *digest,
                          const char *problem, const char *gpu,
                          const char *driver, teeny_store_tuned *out, char *err) {
  memset(out, 0, sizeof *out);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  int rc = check_key(digest, problem, gpu, driver, err);
  sqlite3_stmt *st;
  if (rc || (rc = teeny__store_prepare(s,
                                       "SELECT " TUNED_COLS " FROM tuned WHERE digest "
                                       "= ?1 AND problem = ?2 AND gpu = ?3 AND "
                                       "driver = ?4",
                                       &st, err)))
    return rc;
  sqlite3_bind_text(st, 1, digest, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, problem, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, gpu, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, driver, -1, SQLITE_STATIC);
  int sr = sqlite3_step(st);
  if (sr == SQLITE_ROW)
    rc = from_stmt(st, out, err);
  else if (sr == SQLITE_DONE)
    rc = teeny__store_fail(err, TEENY_E_NOTFOUND, "no tuning record");
  else
    rc = teeny__store_sqlerr(s, sr, "select tuned", err);
  sqlite3_finalize(st);
  return rc;
}

int teeny_store_tuned_put(teeny_store *s, const teeny_store_tuned *t, char *err) {
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  int rc = check_key(t->digest, t->problem, t->gpu, t->driver, err);
  if (rc)
    return rc;
  if (!t->kernel || teeny_store_name_check(t->kernel, strlen(t->kernel)) ||
      !text_ok(t->config, false))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "a tuning record needs a kernel name and a configuration");
  if (s->readonly)
    return teeny__store_fail(err, TEENY_E_PERM, "%s is read-only for this process: %s",
                             s->root, s->readonly);
  sqlite3_stmt *st;
  if ((rc = teeny__store_prepare(s,
                                 "INSERT OR REPLACE INTO tuned (" TUNED_COLS
                                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                                 &st, err)))
    return rc;
  sqlite3_bind_text(st, 1, t->digest, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->kernel, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, t->problem, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, t->gpu, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 5, t->driver, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 6, t->config, -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 7, t->best_ms);
  sqlite3_bind_int64(st, 8, t->candidates);
  sqlite3_bind_int64(st, 9, teeny__store_now(s));
  /* one statement: its own transaction, retried by the busy timeout */
  int sr = sqlite3_step(st);
  sqlite3_finalize(st);
  return sr == SQLITE_DONE ? TEENY_OK : teeny__store_sqlerr(s, sr, "insert tuned", err);
}

int teeny_store_tuned_list(teeny_store *s, const char *kernel_glob,
                           teeny_store_tuned **out, size_t *n, char *err) {
  *out = NULL;
  *n = 0;
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(s,
                                "SELECT " TUNED_COLS " FROM tuned WHERE ?1 IS NULL "
                                "OR kernel GLOB ?1 ORDER BY created DESC, kernel, "
                                "problem",
                                &st, err);
  if (rc)
    return rc;
  if (kernel_glob)
    sqlite3_bind_text(st, 1, kernel_glob, -1, SQLITE_STATIC);
  teeny_store_tuned *v = NULL;
  size_t len = 0, cap = 0;
  int sr;
  while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
    if (len == cap) {
      size_t ncap = cap ? 2 * cap : 16;
      teeny_store_tuned *nv = teeny__realloc(v, ncap * sizeof *nv);
      if (!nv) {
        rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
        break;
      }
      v = nv;
      cap = ncap;
    }
    if ((rc = from_stmt(st, &v[len], err)))
      break;
    len++;
  }
  if (!rc && sr != SQLITE_DONE)
    rc = teeny__store_sqlerr(s, sr, "list tuned", err);
  sqlite3_finalize(st);
  if (rc) {
    teeny_store_tuneds_free(v, len);
    return rc;
  }
  *out = v;
  *n = len;
  return TEENY_OK;
}

int teeny_store_tuned_purge(teeny_store *s, bool all, const char *kernel_glob,
                            uint64_t *removed, char *err) {
  if (removed)
    *removed = 0;
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  if (!all && !kernel_glob)
    return teeny__store_fail(err, TEENY_E_INVAL, "purge of tuning records needs all "
                             "or a kernel name");
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(s, "DELETE FROM tuned WHERE ?1 IS NULL OR kernel GLOB ?1",
                                &st, err);
  if (rc)
    return rc;
  if (!all)
    sqlite3_bind_text(st, 1, kernel_glob, -1, SQLITE_STATIC);
  int sr = sqlite3_step(st);
  if (sr == SQLITE_DONE && removed)
    *removed = (uint64_t)sqlite3_changes(s->db);
  sqlite3_finalize(st);
  return sr == SQLITE_DONE ? TEENY_OK : teeny__store_sqlerr(s, sr, "purge tuned", err);
}
