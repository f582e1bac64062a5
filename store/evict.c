/*
 * store/evict.c — removing entries: LRU eviction to a size cap,
 * purge by filter, one entry by key, and the drop used by verify --repair.
 *
 * Removal mirrors the commit protocol, in two phases:
 *   1. under BEGIN IMMEDIATE with synchronous=FULL, choose the rows and
 *      DELETE them; COMMIT (durable: a power cut cannot bring the row back
 *      after its files are gone);
 *   2. under BEGIN IMMEDIATE again, unlink the files of each removed key
 *      for which no row exists now (a put may have stored the key again
 *      between the phases; puts rename only under the write lock, so while
 *      we hold it no put is between its rename and its commit).
 * A crash between the phases leaves orphans, never a row without files.
 * An entry's cubins go with it (a trigger deletes their rows; their archs
 * are read with the victims, so phase 2 unlinks their files too) and
 * count in its bytes.
 *
 * LRU order is last_used (kept in SQLite, updated by batched touches), then
 * key; the stored total comes from the meta counters (O(1)).  Eviction runs
 * after puts and from purge; each call is one pass over the oldest rows.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"

typedef struct victims {
  teeny__store_victim *v; /* chosen rows */
  size_t n;               /* how many */
  size_t cap;             /* allocated */
} victims;

void teeny__store_victims_free(teeny__store_victim *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) {
    teeny__free(v[i].name);
    teeny__free(v[i].archs);
  }
  teeny__free(v);
}

static int victims_add(victims *vs, const char *key, const char *name,
                       const char *archs, uint64_t bytes) {
  if (vs->n == vs->cap) {
    size_t ncap = vs->cap ? 2 * vs->cap : 32;
    teeny__store_victim *nv = teeny__realloc(vs->v, ncap * sizeof *nv);
    if (!nv)
      return TEENY_E_NOMEM;
    vs->v = nv;
    vs->cap = ncap;
  }
  teeny__store_victim *v = &vs->v[vs->n];
  snprintf(v->key, sizeof v->key, "%s", key ? key : "");
  v->name = v->archs = NULL;
  v->bytes = bytes;
  v->deleted = false;
  vs->n++; /* counted now, so victims_free sees what is allocated */
  if (name && teeny_store_name_check(name, strlen(name)) == TEENY_OK &&
      !(v->name = teeny__strdup(name)))
    return TEENY_E_NOMEM;
  if (archs && *archs && !(v->archs = teeny__strdup(archs)))
    return TEENY_E_NOMEM;
  return TEENY_OK;
}

/* synchronous=FULL for this transaction (unless it always is). */
static int sync_full(teeny_store *s, bool on, char *err) {
  if (s->sync_full)
    return TEENY_OK;
  return teeny__store_exec(
      s, on ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", err);
}

/* Phase 1 body: DELETE each victim's row (inside the caller's
 * transaction), counting the rows that were still there. */
static int delete_rows(teeny_store *s, teeny__store_victim *v, size_t n,
                       teeny_store_counts *removed, char *err) {
  sqlite3_stmt *st;
  int rc =
      teeny__store_prepare(s, "DELETE FROM entries WHERE key = ?1", &st, err);
  if (rc)
    return rc;
  for (size_t i = 0; i < n && !rc; i++) {
    sqlite3_bind_text(st, 1, v[i].key, -1, SQLITE_STATIC);
    int sr = sqlite3_step(st);
    if (sr != SQLITE_DONE)
      rc = teeny__store_sqlerr(s, sr, "delete", err);
    else if (sqlite3_changes(s->db) > 0) {
      v[i].deleted = true;
      if (removed) {
        removed->entries++;
        removed->bytes += v[i].bytes;
      }
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc;
}

/* Phase 2: unlink the files of victims whose key has no row now.  The
 * write lock is taken per batch, so a large purge does not keep puts of
 * other processes waiting past their busy timeout. */
#define UNLINK_BATCH 256

static void unlink_unclaimed(teeny_store *s, const teeny__store_victim *v,
                             size_t n, teeny_store_counts *removed) {
  if (s->test.between_phases)
    s->test.between_phases(s->test.ctx);
  sqlite3_stmt *st;
  if (n == 0 || teeny__store_prepare(s, "SELECT 1 FROM entries WHERE key = ?1",
                                     &st, NULL) != TEENY_OK)
    return;
  for (size_t lo = 0; lo < n; lo += UNLINK_BATCH) {
    if (teeny__store_begin(s, NULL) != TEENY_OK)
      break; /* the files stay as orphans; verify removes them */
    for (size_t i = lo; i < n && i < lo + UNLINK_BATCH; i++) {
      if (!v[i].name)
        continue; /* an invalid name builds no path */
      sqlite3_bind_text(st, 1, v[i].key, -1, SQLITE_STATIC);
      int sr = sqlite3_step(st);
      sqlite3_reset(st);
      if (sr == SQLITE_DONE &&
          !teeny__store_unlink_files(s, v[i].name, v[i].key, v[i].archs) &&
          v[i].deleted && removed) { /* gone from the index, not from disk */
        removed->entries--;
        removed->bytes -= v[i].bytes;
        removed->left++;
      }
    }
    teeny__store_rollback(s); /* nothing written; releases the lock */
  }
  sqlite3_finalize(st);
}

/* Run phase 1 for the rows select_sql yields (bound by bind), stopping, if
 * cap is non-NULL, once the stored total would be <= *cap; then phase 2. */
typedef void (*binder)(sqlite3_stmt *st, const void *ctx);

/* Who hears of each row removed (purge's on_removed), or NULL. */
typedef struct removal_sink {
  void (*fn)(void *ctx, const char *key);
  void *ctx;
} removal_sink;

static void tell_removed(const removal_sink *sink,
                         const teeny__store_victim *v, size_t n) {
  for (size_t i = 0; sink && sink->fn && i < n; i++)
    if (v[i].deleted)
      sink->fn(sink->ctx, v[i].key);
}

static int remove_selected(teeny_store *s, const char *select_sql, binder bind,
                           const void *ctx, const uint64_t *cap,
                           const removal_sink *sink,
                           teeny_store_counts *out, char *err) {
  victims vs = {0};
  teeny_store_counts got = {0, 0, 0}, *removed = &got;
  int rc = sync_full(s, true, err);
  if (rc)
    return rc;
  if ((rc = teeny__store_begin(s, err)))
    goto out;
  sqlite3_stmt *st;
  if ((rc = teeny__store_prepare(s, select_sql, &st, err)))
    goto out;
  if (bind)
    bind(st, ctx);
  uint64_t total = 0;
  if (cap) {
    teeny_store_stats stats;
    if ((rc = teeny_store_stats_get(s, &stats, err))) {
      sqlite3_finalize(st);
      goto out;
    }
    total = stats.bytes;
  }
  int sr = SQLITE_DONE;
  while ((!cap || total > *cap) && (sr = sqlite3_step(st)) == SQLITE_ROW) {
    uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 2);
    const char *key = (const char *)sqlite3_column_text(st, 0);
    if (key && !teeny__store_shard_removable(s, key, removed->left ? NULL : err)) {
      removed->left++; /* its files would stay: keep its row, say why */
      continue;
    }
    if ((rc = victims_add(&vs, key, (const char *)sqlite3_column_text(st, 1),
                          (const char *)sqlite3_column_text(st, 3), bytes))) {
      teeny__store_fail(err, rc, "out of memory");
      break;
    }
    total = bytes < total ? total - bytes : 0;
  }
  if (!rc && sr != SQLITE_DONE && sr != SQLITE_ROW)
    rc = teeny__store_sqlerr(s, sr, "select", err);
  sqlite3_finalize(st);
  if (!rc && !(rc = delete_rows(s, vs.v, vs.n, removed, err)) &&
      !(rc = teeny__store_commit(s, err))) {
    (void)sync_full(s, false, NULL);
    unlink_unclaimed(s, vs.v, vs.n, removed); /* phase 2 */
    tell_removed(sink, vs.v, vs.n);
  }
out:
  teeny__store_rollback(s); /* no-op after a commit */
  (void)sync_full(s, false, NULL);
  teeny__store_victims_free(vs.v, vs.n);
  if (out) {
    out->entries += got.entries;
    out->bytes += got.bytes;
    out->left += got.left;
  }
  return rc;
}

/* key, name, bytes (its files and cubins), cubin archs */
#define VICTIM_COLS                                                            \
  "key, name, ptx_size + mlir_size + src_size + (SELECT CAST(total(c.size) "  \
  "AS INTEGER) FROM cubins c WHERE c.key = entries.key), (SELECT "            \
  "group_concat(c.arch, ' ') FROM cubins c WHERE c.key = entries.key)"

static int evict_to(teeny_store *s, uint64_t max_bytes,
                    const removal_sink *sink, teeny_store_counts *removed,
                    char *err) {
  if (removed)
    memset(removed, 0, sizeof *removed);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  int rc = teeny_store_flush(s, err); /* our own recent uses count */
  if (rc)
    return rc;
  teeny_store_stats st;
  if ((rc = teeny_store_stats_get(s, &st, err)) || st.bytes <= max_bytes)
    return rc; /* the common case after a put: no write lock taken */
  return remove_selected(
      s, "SELECT " VICTIM_COLS " FROM entries ORDER BY last_used, key", NULL,
      NULL, &max_bytes, sink, removed, err);
}

int teeny_store_evict_to(teeny_store *s, uint64_t max_bytes,
                         teeny_store_counts *removed, char *err) {
  return evict_to(s, max_bytes, NULL, removed, err);
}

/* ---- purge --------------------------------------------------------------- */

typedef struct purge_bind {
  const char *glob; /* NULL: any name */
  bool by_age;      /* filter on last_used < before */
  int64_t before;   /* unix seconds */
} purge_bind;

static void bind_purge(sqlite3_stmt *st, const void *ctx) {
  const purge_bind *b = ctx;
  if (b->glob)
    sqlite3_bind_text(st, 1, b->glob, -1, SQLITE_STATIC);
  if (b->by_age)
    sqlite3_bind_int64(st, 2, b->before);
}

int teeny_store_purge(teeny_store *s, const teeny_store_purge_req *req,
                      teeny_store_counts *removed, char *err) {
  if (removed)
    memset(removed, 0, sizeof *removed);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  if (!req ||
      (!req->all && !req->name_glob && req->older_than_s <= 0 && !req->to_size))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "purge needs all, a name, an age or a size");
  int rc = teeny_store_flush(s, err); /* ages must see our recent uses */
  if (rc)
    return rc;
  removal_sink sink = {req->on_removed, req->removed_ctx};
  if (req->all || req->name_glob || req->older_than_s > 0) {
    purge_bind b = {req->all ? NULL : req->name_glob,
                    !req->all && req->older_than_s > 0,
                    teeny__store_now(s) - req->older_than_s};
    rc = remove_selected(
        s,
        "SELECT " VICTIM_COLS " FROM entries WHERE (?1 IS "
        "NULL OR name GLOB ?1) AND (?2 IS NULL OR last_used < ?2)",
        bind_purge, &b, NULL, &sink, removed, err);
    if (rc)
      return rc;
  }
  if (req->to_size) {
    teeny_store_counts more;
    if ((rc = evict_to(s, req->max_bytes, &sink, &more, err)))
      return rc;
    if (removed) {
      removed->entries += more.entries;
      removed->bytes += more.bytes;
      removed->left += more.left;
    }
  }
  return TEENY_OK;
}

/* ---- remove one entry ------------------------------------------------------ */

static void bind_key(sqlite3_stmt *st, const void *ctx) {
  sqlite3_bind_text(st, 1, (const char *)ctx, -1, SQLITE_STATIC);
}

int teeny_store_remove(teeny_store *s, const char *key,
                       teeny_store_counts *removed, char *err) {
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  teeny_store_counts got = {0, 0, 0};
  if (teeny_store_key_check(key))
    return teeny__store_fail(err, TEENY_E_INVAL, "invalid key");
  int rc = remove_selected(s, "SELECT " VICTIM_COLS " FROM entries WHERE key = ?1",
                           bind_key, key, NULL, NULL, &got, err);
  if (removed)
    *removed = got;
  if (!rc && got.left)
    return TEENY_E_PERM; /* err says which directory */
  if (!rc && got.entries == 0)
    return teeny__store_fail(err, TEENY_E_NOTFOUND, "no entry %.16s...", key);
  return rc;
}

/* ---- drop by key (verify --repair) --------------------------------------- */

int teeny__store_drop(teeny_store *s, teeny__store_victim *v, size_t n,
                      teeny_store_counts *removed, char *err) {
  if (n == 0)
    return TEENY_OK;
  int rc = sync_full(s, true, err);
  if (rc)
    return rc;
  if (!(rc = teeny__store_begin(s, err)) &&
      !(rc = delete_rows(s, v, n, removed, err)) &&
      !(rc = teeny__store_commit(s, err))) {
    (void)sync_full(s, false, NULL);
    unlink_unclaimed(s, v, n, removed);
  }
  teeny__store_rollback(s);
  (void)sync_full(s, false, NULL);
  return rc;
}
