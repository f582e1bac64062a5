/*
 * store/get.c — the read side: get by key (row + files, checked),
 * show by key prefix, list with filters, stats.
 *
 * Rows read for show and list carry the entry's cubin count and bytes
 * (TEENY__STORE_CUBIN_COLS).  get is the daemon's disk-hit path: one indexed SELECT on a cached
 * statement, then one openat() of the shard and of each file asked for.
 * Files are never modified in place (only renamed in while no row names
 * them, or unlinked after their row is gone), so a file whose size or hash
 * differs from its row is corruption — unless the row itself changed under
 * us (evicted, re-put), which get rechecks before it says CORRUPT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

/* ---- get ----------------------------------------------------------------- */

/* Read fname from the shard into *out, checking it against size (and sha
 * if verify).  Returns 0, TEENY_E_CORRUPT, TEENY_E_IO or TEENY_E_NOMEM. */
static int read_checked(teeny_store *s, int shardfd, const char *key,
                        const char *fname, uint64_t size, const char *sha,
                        bool verify, char **out, char *err) {
  *out = NULL;
  struct stat st;
  int fd = teeny__store_open_file(shardfd, fname, O_RDONLY, 0, &st);
  if (fd == -2)
    return teeny__store_fail(err, TEENY_E_CORRUPT,
                             "objects/%.2s/%s is not a regular file", key,
                             fname);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ELOOP)
      return teeny__store_fail(err, TEENY_E_CORRUPT, "objects/%.2s/%s %s", key,
                               fname,
                               e == ENOENT ? "is missing" : "is a symlink");
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot open objects/%.2s/%s: %s", key, fname,
                             strerror(e));
  }
  int rc = TEENY_OK;
  char *buf = NULL;
  if ((uint64_t)st.st_size != size) {
    rc = teeny__store_fail(
        err, TEENY_E_CORRUPT, "objects/%.2s/%s: size %lld, index says %llu",
        key, fname, (long long)st.st_size, (unsigned long long)size);
    goto done;
  }
  if (!(buf = teeny__malloc((size_t)size + 1))) {
    rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
    goto done;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, (size_t)size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      rc = teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot read objects/%.2s/%s: %s", key, fname,
                             strerror(e));
      goto done;
    }
    if (n == 0)
      break;
    got += (size_t)n;
  }
  buf[got] = '\0';
  if (got != size) {
    rc = teeny__store_fail(err, TEENY_E_CORRUPT,
                           "objects/%.2s/%s is short (%zu of %llu bytes)", key,
                           fname, got, (unsigned long long)size);
    goto done;
  }
  if (verify) {
    char hex[65];
    if (teeny__sha256_hex(buf, got, hex) || strcmp(hex, sha) != 0) {
      rc = teeny__store_fail(err, TEENY_E_CORRUPT,
                             "objects/%.2s/%s: sha256 differs from the index",
                             key, fname);
      goto done;
    }
  }
done:
  close(fd);
  if (rc)
    teeny__free(buf);
  else
    *out = buf;
  return rc;
}

static int read_files(teeny_store *s, teeny_store_rec *r, unsigned what,
                      char *err) {
  int shardfd = teeny__store_open_shard(s, r->key, false, err);
  if (shardfd < 0)
    return shardfd == TEENY_E_NOTFOUND || shardfd == TEENY_E_STORE
               ? teeny__store_fail(err, TEENY_E_CORRUPT,
                                   "objects/%.2s is missing or not a "
                                   "directory",
                                   r->key)
               : shardfd;
  const uint64_t sizes[3] = {r->ptx_size, r->mlir_size, r->src_size};
  const char *shas[3] = {r->ptx_sha256, r->mlir_sha256, r->src_sha256};
  char **outs[3] = {&r->ptx, &r->mlir, &r->src};
  int rc = TEENY_OK;
  for (int i = 0; i < 3 && !rc; i++) {
    if (!(what & (1u << i)))
      continue;
    char fname[TEENY__STORE_FNAME_MAX];
    teeny__store_file_name(r->name, r->key, teeny__store_exts[i], fname,
                           sizeof fname);
    rc = read_checked(s, shardfd, r->key, fname, sizes[i], shas[i],
                      what & TEENY_STORE_GET_VERIFY, outs[i], err);
  }
  close(shardfd);
  return rc;
}

/* Did the row change between two reads (deleted and put again)? */
static bool same_row(const teeny_store_rec *a, const teeny_store_rec *b) {
  return a->created == b->created && a->ptx_size == b->ptx_size &&
         a->mlir_size == b->mlir_size && a->src_size == b->src_size &&
         strcmp(a->ptx_sha256, b->ptx_sha256) == 0 &&
         strcmp(a->name, b->name) == 0;
}

unsigned teeny_store_get_for_emit(unsigned emit, unsigned src_bit) {
  return ((emit & TEENY_EMIT_PTX) ? TEENY_STORE_GET_PTX : 0) |
         ((emit & TEENY_EMIT_MLIR) ? TEENY_STORE_GET_MLIR : 0) |
         ((emit & src_bit) ? TEENY_STORE_GET_SRC : 0);
}

int teeny_store_get(teeny_store *s, const char *key, unsigned what,
                    teeny_store_rec *out, char *err) {
  memset(out, 0, sizeof *out);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  if (teeny_store_key_check(key))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "invalid key (want 64 lowercase hex digits)");
  for (int attempt = 0;; attempt++) {
    teeny_store_rec r;
    int rc = teeny__store_row_get(s, key, &r, err);
    if (rc)
      return rc;
    if (teeny_store_name_check(r.name, strlen(r.name))) {
      teeny_store_rec_close(&r);
      return teeny__store_fail(err, TEENY_E_CORRUPT,
                               "index row %s has an invalid name", key);
    }
    if (!(what & TEENY_STORE_GET_ALL) ||
        (rc = read_files(s, &r, what, err)) == TEENY_OK) {
      *out = r;
      return TEENY_OK;
    }
    /* Never hand out half-read data.  But a concurrent evict or re-put
     * looks like corruption too: read the row again before saying so. */
    teeny_store_rec now;
    int rc2 = teeny__store_row_get(s, key, &now, NULL);
    bool changed = rc2 == TEENY_OK && !same_row(&r, &now);
    teeny_store_rec_close(&r);
    if (rc2 == TEENY_OK)
      teeny_store_rec_close(&now);
    if (rc != TEENY_E_CORRUPT)
      return rc;
    if (rc2 == TEENY_E_NOTFOUND)
      return teeny__store_fail(err, TEENY_E_NOTFOUND,
                               "no entry with key %s (removed while being "
                               "read)",
                               key);
    if (!changed || attempt >= 2)
      return rc;
  }
}

/* ---- show by prefix ------------------------------------------------------ */

void teeny_store_keys_close(teeny_store_keys *k) {
  if (!k)
    return;
  teeny__free(k->v);
  memset(k, 0, sizeof *k);
}

int teeny_store_show(teeny_store *s, const char *prefix, teeny_store_rec *out,
                     teeny_store_keys *candidates, char *err) {
  memset(out, 0, sizeof *out);
  if (candidates)
    memset(candidates, 0, sizeof *candidates);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  char lo[TEENY_STORE_KEY_LEN + 1], hi[TEENY_STORE_KEY_LEN + 2];
  size_t n = prefix ? strlen(prefix) : 0;
  if (n < 4 || n > TEENY_STORE_KEY_LEN)
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "a key prefix has 4 to 64 hex digits");
  for (size_t i = 0; i < n; i++) {
    char c = prefix[i];
    if (c >= 'A' && c <= 'F')
      c = (char)(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return teeny__store_fail(err, TEENY_E_INVAL,
                               "a key prefix has 4 to 64 hex digits");
    lo[i] = hi[i] = c;
  }
  lo[n] = '\0';
  hi[n] = 'g'; /* above every hex digit: keys with the prefix are < hi */
  hi[n + 1] = '\0';

  sqlite3_stmt *st;
  int rc = teeny__store_prepare(s,
                                "SELECT " TEENY__STORE_ROW_COLS
                                ", " TEENY__STORE_CUBIN_COLS
                                " FROM entries WHERE key >= ?1 AND key < ?2"
                                " ORDER BY key LIMIT ?3",
                                &st, err);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, lo, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, hi, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 3, TEENY_STORE_MAX_CANDIDATES + 1);
  char keys[TEENY_STORE_MAX_CANDIDATES + 1][TEENY_STORE_KEY_LEN + 1];
  size_t found = 0;
  int sr;
  while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
    if (found == 0 && (rc = teeny__store_row_from_stmt(st, out, NULL, err)))
      break;
    const unsigned char *k = sqlite3_column_text(st, 0);
    snprintf(keys[found++], sizeof keys[0], "%s", k ? (const char *)k : "");
  }
  if (!rc && sr != SQLITE_DONE)
    rc = teeny__store_sqlerr(s, sr, "select", err);
  sqlite3_finalize(st);
  if (rc) {
    teeny_store_rec_close(out);
    return rc;
  }
  if (found == 0)
    return teeny__store_fail(err, TEENY_E_NOTFOUND,
                             "no entry with key prefix %s", lo);
  if (found == 1)
    return TEENY_OK;

  teeny_store_rec_close(out);
  size_t listed =
      found > TEENY_STORE_MAX_CANDIDATES ? TEENY_STORE_MAX_CANDIDATES : found;
  if (candidates) {
    candidates->v = teeny__calloc(listed, sizeof *candidates->v);
    if (!candidates->v)
      return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
    memcpy(candidates->v, keys, listed * sizeof keys[0]);
    candidates->n = listed;
    candidates->more = found > listed;
  }
  if (err) {
    int w = snprintf(err, TEENY_STORE_ERR_LEN, "prefix %s is ambiguous:", lo);
    for (size_t i = 0; i < listed && w > 0 && w < TEENY_STORE_ERR_LEN; i++)
      w += snprintf(err + w, TEENY_STORE_ERR_LEN - (size_t)w, " %.12s...",
                    keys[i]);
  }
  return TEENY_E_AMBIGUOUS;
}

/* ---- list ---------------------------------------------------------------- */

/* Each order is an index read backwards (index.c, schema v2): ties by key,
 * descending.  The cursor of a row is "{letter}:{value}:{key}". */
static const struct {
  const char *expr; /* the sort value */
  char letter;      /* its cursor prefix */
} orders[] = {
    [TEENY_STORE_SORT_USED] = {"last_used", 'u'},
    [TEENY_STORE_SORT_SIZE] = {"ptx_size + mlir_size + src_size", 's'},
    [TEENY_STORE_SORT_HITS] = {"hits", 'h'},
};

static int64_t sort_value(const teeny_store_rec *r, teeny_store_sort sort) {
  switch (sort) {
  case TEENY_STORE_SORT_SIZE:
    return (int64_t)(r->ptx_size + r->mlir_size + r->src_size);
  case TEENY_STORE_SORT_HITS: return r->hits;
  default: return r->last_used;
  }
}

/* Parse a cursor for sort: its value and key.  TEENY_E_INVAL if it is not
 * one (or is another sort's). */
static int cursor_parse(const char *c, teeny_store_sort sort, int64_t *v,
                        char key[TEENY_STORE_KEY_LEN + 1]) {
  long long x;
  int used = 0;
  if (!c || c[0] != orders[sort].letter || c[1] != ':' ||
      sscanf(c + 2, "%lld:%n", &x, &used) != 1 || used == 0)
    return TEENY_E_INVAL;
  snprintf(key, TEENY_STORE_KEY_LEN + 1, "%s", c + 2 + used);
  if (teeny_store_key_check(key) || strlen(c + 2 + used) != TEENY_STORE_KEY_LEN)
    return TEENY_E_INVAL;
  *v = (int64_t)x;
  return TEENY_OK;
}

static int prepare_list(teeny_store *s, const teeny_store_query *q,
                        bool paged, sqlite3_stmt **st, char *err) {
  char sql[1024];
  const char *e = orders[q->sort].expr;
  char after[192] = "";
  if (paged) /* (e, key) < (?3, ?4), spelt so that an index on an
               * expression serves it as a range too */
    snprintf(after, sizeof after, " AND %s <= ?3 AND (%s < ?3 OR key < ?4)",
             e, e);
  int len = snprintf(sql, sizeof sql,
                     "SELECT " TEENY__STORE_ROW_COLS ", " TEENY__STORE_CUBIN_COLS
                     " FROM entries WHERE 1%s%s ORDER BY %s DESC, key DESC LIMIT ?2",
                     q->name_glob ? " AND name GLOB ?1" : "", after, e);
  if (len < 0 || (size_t)len >= sizeof sql)
    return teeny__store_fail(err, TEENY_E_INTERNAL, "the list query is too long");
  return teeny__store_prepare(s, sql, st, err);
}

int teeny_store_list_page(teeny_store *s, const teeny_store_query *q,
                          teeny_store_rec **out, size_t *n,
                          char next[TEENY_STORE_CURSOR_LEN], char *err) {
  static const teeny_store_query all = {NULL, 0, TEENY_STORE_SORT_USED, NULL};
  *out = NULL;
  *n = 0;
  if (next)
    next[0] = '\0';
  if (!q)
    q = &all;
  int64_t av = 0;
  char akey[TEENY_STORE_KEY_LEN + 1];
  if ((unsigned)q->sort >= TEENY_ARRAY_LEN(orders))
    return teeny__store_fail(err, TEENY_E_INVAL, "unknown sort order");
  if (q->after && cursor_parse(q->after, q->sort, &av, akey))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "not a list cursor of this sort order");
  sqlite3_stmt *st;
  int rc = teeny__store_index_fresh(s, err);
  if (!rc)
    rc = prepare_list(s, q, q->after != NULL, &st, err);
  if (rc)
    return rc;
  if (q->name_glob)
    sqlite3_bind_text(st, 1, q->name_glob, -1, SQLITE_STATIC);
  /* one row more than asked: whether a next page exists */
  sqlite3_bind_int64(st, 2, q->limit ? (sqlite3_int64)q->limit + 1 : -1);
  if (q->after) {
    sqlite3_bind_int64(st, 3, av);
    sqlite3_bind_text(st, 4, akey, -1, SQLITE_TRANSIENT);
  }
  teeny_store_rec *v = NULL;
  size_t len = 0, cap = 0;
  bool more = false;
  int sr;
  while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
    if (q->limit && len == q->limit) {
      more = true;
      break;
    }
    if (len == cap) {
      size_t ncap = cap ? 2 * cap : 16;
      teeny_store_rec *nv = teeny__realloc(v, ncap * sizeof *v);
      if (!nv) {
        rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
        break;
      }
      v = nv;
      cap = ncap;
    }
    if ((rc = teeny__store_row_from_stmt(st, &v[len], NULL, err)))
      break;
    len++;
  }
  if (!rc && !more && sr != SQLITE_DONE)
    rc = teeny__store_sqlerr(s, sr, "list", err);
  sqlite3_finalize(st);
  if (rc) {
    teeny_store_recs_free(v, len);
    return rc;
  }
  if (more && next)
    snprintf(next, TEENY_STORE_CURSOR_LEN, "%c:%lld:%s", orders[q->sort].letter,
             (long long)sort_value(&v[len - 1], q->sort), v[len - 1].key);
  *out = v;
  *n = len;
  return TEENY_OK;
}

int teeny_store_list(teeny_store *s, const teeny_store_query *q,
                     teeny_store_rec **out, size_t *n, char *err) {
  return teeny_store_list_page(s, q, out, n, NULL, err);
}

/* ---- stats --------------------------------------------------------------- */

int teeny_store_stats_get(teeny_store *s, teeny_store_stats *out, char *err) {
  memset(out, 0, sizeof *out);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  sqlite3_stmt *st;
  int rc =
      teeny__store_prepare(s,
                           "SELECT (SELECT v FROM meta WHERE k = 'entries'),"
                           " (SELECT v FROM meta WHERE k = 'bytes'),"
                           " (SELECT v FROM meta WHERE k = 'hits'),"
                           " (SELECT v FROM meta WHERE k = 'cubins'),"
                           " (SELECT v FROM meta WHERE k = 'cubin_bytes'),"
                           " (SELECT count(*) FROM tuned)",
                           &st, err);
  if (rc)
    return rc;
  int sr = sqlite3_step(st);
  if (sr == SQLITE_ROW) {
    sqlite3_int64 e = sqlite3_column_int64(st, 0);
    sqlite3_int64 b = sqlite3_column_int64(st, 1);
    double h = sqlite3_column_double(st, 2);
    out->entries = e > 0 ? (uint64_t)e : 0;
    out->bytes = b > 0 ? (uint64_t)b : 0;
    out->hits = h > 0 ? (uint64_t)h : 0;
    sqlite3_int64 c = sqlite3_column_int64(st, 3);
    sqlite3_int64 cb = sqlite3_column_int64(st, 4);
    sqlite3_int64 t = sqlite3_column_int64(st, 5);
    out->cubins = c > 0 ? (uint64_t)c : 0;
    out->cubin_bytes = cb > 0 ? (uint64_t)cb : 0;
    out->tuned = t > 0 ? (uint64_t)t : 0;
    out->pending = s->touch_n;
  } else {
    rc = teeny__store_sqlerr(s, sr, "stats", err);
  }
  sqlite3_finalize(st);
  return rc;
}
