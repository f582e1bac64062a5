/*
 * store/cubin.c — the fourth artifact: a cubin (SASS) per entry and GPU
 * architecture, objects/ab/{name}_{key}.{arch}.cubin.
 *
 * Same commit protocol as the entry's files (put.c): the bytes go to a
 * fsynced temp file; under BEGIN IMMEDIATE, with the entry's row still
 * there, the temp is renamed into the shard, the shard fsynced, and the
 * cubin row written; the COMMIT is the commit point.  One cubin per (key,
 * arch): a put of other bytes (a newer toolchain) renames over the old file
 * in the same transaction that replaces the row, so a reader that read the
 * old row and opens the new file sees a hash mismatch, reads the row again
 * and retries, as get.c does for entries.  Removal is two-phase like
 * evict.c: the row (synchronous=FULL), then the file.  An entry's removal
 * takes its cubins' rows by a trigger (index.c) and their files in
 * evict.c's phase 2.
 * Load: one put per entry and architecture (in the background, after the
 * compile); one get per disk hit of a request that names an architecture.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

#define CUBIN_COLS "key, arch, toolchain, size, sha256, created, sass_ms"

/* ---- names ------------------------------------------------------------------ */

int teeny_store_arch_check(const char *arch) {
  if (!arch || strncmp(arch, "sm_", 3) != 0)
    return TEENY_E_INVAL;
  const char *p = arch + 3;
  size_t digits = strspn(p, "0123456789");
  if (digits < 2 || digits > 3)
    return TEENY_E_INVAL;
  p += digits;
  if (*p == 'a' || *p == 'f')
    p++;
  return *p == '\0' ? TEENY_OK : TEENY_E_INVAL;
}

int teeny_store_toolchain_check(const char *tc) {
  size_t n = tc ? strlen(tc) : 0;
  if (n == 0 || n > TEENY_STORE_TOOLCHAIN_MAX)
    return TEENY_E_INVAL;
  for (size_t i = 0; i < n; i++)
    if (tc[i] < 0x20 || tc[i] > 0x7e)
      return TEENY_E_INVAL;
  return TEENY_OK;
}

static int check_ids(const char *key, const char *arch, char *err) {
  if (teeny_store_key_check(key))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "invalid key (want 64 lowercase hex digits)");
  if (teeny_store_arch_check(arch))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "invalid architecture (want sm_ and 2 or 3 digits, "
                             "then optionally a or f)");
  return TEENY_OK;
}

/* ---- records ------------------------------------------------------------------ */

void teeny_store_cubin_close(teeny_store_cubin *c) {
  if (!c)
    return;
  teeny__free(c->toolchain);
  teeny__free(c->data);
  memset(c, 0, sizeof *c);
}

void teeny_store_cubins_free(teeny_store_cubin *v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    teeny_store_cubin_close(&v[i]);
  teeny__free(v);
}

static int cubin_from_stmt(sqlite3_stmt *st, teeny_store_cubin *c, char *err) {
  memset(c, 0, sizeof *c);
  const unsigned char *k = sqlite3_column_text(st, 0);
  const unsigned char *a = sqlite3_column_text(st, 1);
  const unsigned char *t = sqlite3_column_text(st, 2);
  const unsigned char *h = sqlite3_column_text(st, 4);
  snprintf(c->key, sizeof c->key, "%s", k ? (const char *)k : "");
  snprintf(c->arch, sizeof c->arch, "%s", a ? (const char *)a : "");
  snprintf(c->sha256, sizeof c->sha256, "%s", h ? (const char *)h : "");
  sqlite3_int64 size = sqlite3_column_int64(st, 3);
  c->size = size > 0 ? (uint64_t)size : 0;
  c->created = sqlite3_column_int64(st, 5);
  c->sass_ms = sqlite3_column_double(st, 6);
  if (!(c->toolchain = teeny__strdup(t ? (const char *)t : "")))
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  return TEENY_OK;
}

/* The row of (key, arch) into *c (no data): 0, NOTFOUND or an error. */
static int row_get(teeny_store *s, const char *key, const char *arch,
                   teeny_store_cubin *c, char *err) {
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(
      s, "SELECT " CUBIN_COLS " FROM cubins WHERE key = ?1 AND arch = ?2", &st,
      err);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, arch, -1, SQLITE_STATIC);
  int sr = sqlite3_step(st);
  if (sr == SQLITE_ROW)
    rc = cubin_from_stmt(st, c, err);
  else if (sr == SQLITE_DONE)
    rc = teeny__store_fail(err, TEENY_E_NOTFOUND, "no %s cubin for %.16s...",
                           arch, key);
  else
    rc = teeny__store_sqlerr(s, sr, "select", err);
  sqlite3_finalize(st);
  return rc;
}

/* The entry's name (the file name needs it): 0, NOTFOUND or an error. */
static int entry_name(teeny_store *s, const char *key, char *name, size_t n,
                      char *err) {
  teeny_store_rec r;
  int rc = teeny__store_row_get(s, key, &r, err);
  if (rc)
    return rc;
  snprintf(name, n, "%s", r.name);
  rc = teeny_store_name_check(r.name, strlen(r.name))
           ? teeny__store_fail(err, TEENY_E_CORRUPT,
                               "index row %s has an invalid name", key)
           : TEENY_OK;
  teeny_store_rec_close(&r);
  return rc;
}

/* ---- put ------------------------------------------------------------------------ */

/* Under the write lock: rename tmp into the shard as fname, fsync the
 * shard, replace the row, commit.  The caller cleans up on failure. */
static int commit_cubin(teeny_store *s, int shardfd, const char *tmp,
                        const char *fname, const teeny_store_cubin *c,
                        bool *renamed, char *err) {
  if (renameat(s->tmpfd, tmp, shardfd, fname) != 0) {
    int e = errno;
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot rename into %s/objects/%.2s/%s: %s", s->root,
                             c->key, fname, strerror(e));
  }
  *renamed = true;
  if (fsync(shardfd) != 0) {
    int e = errno;
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot fsync %s/objects/%.2s: %s", s->root, c->key,
                             strerror(e));
  }
  /* DELETE, then INSERT: REPLACE would not fire the counters' trigger */
  sqlite3_stmt *del, *st;
  int rc = teeny__store_prepare(
      s, "DELETE FROM cubins WHERE key = ?1 AND arch = ?2", &del, err);
  if (rc)
    return rc;
  sqlite3_bind_text(del, 1, c->key, -1, SQLITE_STATIC);
  sqlite3_bind_text(del, 2, c->arch, -1, SQLITE_STATIC);
  int sr = sqlite3_step(del);
  sqlite3_finalize(del);
  if (sr != SQLITE_DONE)
    return teeny__store_sqlerr(s, sr, "delete cubin", err);
  if ((rc = teeny__store_prepare(s,
                                 "INSERT INTO cubins (" CUBIN_COLS
                                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                 &st, err)))
    return rc;
  sqlite3_bind_text(st, 1, c->key, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, c->arch, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, c->toolchain, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 4, (sqlite3_int64)c->size);
  sqlite3_bind_text(st, 5, c->sha256, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 6, c->created);
  sqlite3_bind_double(st, 7, c->sass_ms);
  sr = sqlite3_step(st);
  sqlite3_finalize(st);
  if (sr != SQLITE_DONE)
    return teeny__store_sqlerr(s, sr, "insert cubin", err);
  return teeny__store_commit(s, err);
}

/* Is the stored cubin of (key, arch) exactly these bytes? */
static bool already_stored(teeny_store *s, const teeny_store_cubin *c) {
  teeny_store_cubin old;
  if (row_get(s, c->key, c->arch, &old, NULL) != TEENY_OK)
    return false;
  bool same = strcmp(old.sha256, c->sha256) == 0 && old.size == c->size &&
              strcmp(old.toolchain, c->toolchain) == 0;
  teeny_store_cubin_close(&old);
  return same;
}

/* Steps 3-5 for a cubin already in tmp/: lock, check the entry (and that
 * these bytes are not there already), rename, row, commit. */
static int put_locked(teeny_store *s, const char *tmp, teeny_store_cubin *c,
                      bool *replaced, char *err) {
  char name[TEENY_MAX_NAME_LEN + 1], fname[TEENY__STORE_FNAME_MAX];
  int shardfd = teeny__store_open_shard(s, c->key, true, err);
  if (shardfd < 0)
    return shardfd;
  int rc = teeny__store_share_shard(s, shardfd, c->key, err);
  bool renamed = false;
  if (!rc)
    rc = teeny__store_begin(s, err);
  if (rc)
    goto out;
  if ((rc = entry_name(s, c->key, name, sizeof name, err)))
    goto out;
  if (already_stored(s, c))
    goto out; /* another writer stored the same bytes: success */
  teeny_store_cubin old;
  *replaced = row_get(s, c->key, c->arch, &old, NULL) == TEENY_OK;
  if (*replaced)
    teeny_store_cubin_close(&old);
  teeny__store_cubin_name(name, c->key, c->arch, fname, sizeof fname);
  rc = commit_cubin(s, shardfd, tmp, fname, c, &renamed, err);
  if (rc && renamed && !*replaced) /* no row names it: ours to remove */
    (void)unlinkat(shardfd, fname, 0);
out:
  teeny__store_rollback(s);
  if (!renamed)
    (void)unlinkat(s->tmpfd, tmp, 0);
  close(shardfd);
  return rc;
}

int teeny_store_cubin_put(teeny_store *s, const char *key, const char *arch,
                          const char *toolchain, const void *data, size_t len,
                          double sass_ms, bool *replaced, char *err) {
  bool repl = false;
  if (replaced)
    *replaced = false;
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  int rc = check_ids(key, arch, err);
  if (rc)
    return rc;
  if (teeny_store_toolchain_check(toolchain) || (!data && len))
    return teeny__store_fail(err, TEENY_E_INVAL, "invalid toolchain or data");
  if (s->readonly)
    return teeny__store_fail(err, TEENY_E_PERM,
                             "%s is read-only for this process: %s", s->root,
                             s->readonly);
  teeny_store_cubin c = {.size = len, .created = teeny__store_now(s),
                         .sass_ms = sass_ms, .toolchain = (char *)toolchain};
  snprintf(c.key, sizeof c.key, "%s", key);
  snprintf(c.arch, sizeof c.arch, "%s", arch);
  if (teeny__sha256_hex(data ? data : "", len, c.sha256))
    return teeny__store_fail(err, TEENY_E_INTERNAL, "sha256 failed");
  char name[TEENY_MAX_NAME_LEN + 1];
  if ((rc = entry_name(s, key, name, sizeof name, err))) /* before writing */
    return rc;
  if (already_stored(s, &c))
    return TEENY_OK;
  char tmp[TEENY__STORE_TMP_MAX] = "";
  s->put_written = 0;
  char ext[TEENY_STORE_ARCH_MAX + 8];
  snprintf(ext, sizeof ext, "%s.cubin", arch);
  if ((rc = teeny__store_write_temp(s, data ? data : "", len, key, ext, tmp, err))) {
    if (tmp[0])
      (void)unlinkat(s->tmpfd, tmp, 0);
    return rc;
  }
  rc = put_locked(s, tmp, &c, &repl, err);
  if (replaced)
    *replaced = repl && !rc;
  return rc;
}

/* ---- get -------------------------------------------------------------------------- */

/* Read fname from the shard of c, checked against c's size and sha. */
static int read_cubin(teeny_store *s, const char *name, teeny_store_cubin *c,
                      char *err) {
  char fname[TEENY__STORE_FNAME_MAX];
  teeny__store_cubin_name(name, c->key, c->arch, fname, sizeof fname);
  int shardfd = teeny__store_open_shard(s, c->key, false, NULL);
  int fd = shardfd < 0 ? -1
                       : openat(shardfd, fname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  int e = errno;
  if (shardfd >= 0)
    close(shardfd);
  if (fd < 0)
    return teeny__store_fail(err, e == ENOENT || e == ELOOP || shardfd < 0
                                      ? TEENY_E_CORRUPT
                                      : teeny__store_errno_code(e),
                             "objects/%.2s/%s: %s", c->key, fname,
                             shardfd < 0 ? "no shard" : strerror(e));
  struct stat st;
  char *buf = NULL;
  int rc = TEENY_OK;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size != c->size)
    rc = teeny__store_fail(err, TEENY_E_CORRUPT,
                           "objects/%.2s/%s: size differs from the index",
                           c->key, fname);
  else if (!(buf = teeny__malloc((size_t)c->size + 1)))
    rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  size_t got = 0;
  while (!rc && got < c->size) {
    ssize_t n = read(fd, buf + got, (size_t)c->size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fd);
  char hex[TEENY_STORE_KEY_LEN + 1];
  if (!rc && (got != c->size || teeny__sha256_hex(buf, got, hex) ||
              strcmp(hex, c->sha256) != 0))
    rc = teeny__store_fail(err, TEENY_E_CORRUPT,
                           "objects/%.2s/%s: sha256 differs from the index",
                           c->key, fname);
  if (rc) {
    teeny__free(buf);
    return rc;
  }
  c->data = buf;
  return TEENY_OK;
}

int teeny_store_cubin_get(teeny_store *s, const char *key, const char *arch,
                          bool read, teeny_store_cubin *out, char *err) {
  memset(out, 0, sizeof *out);
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  int rc = check_ids(key, arch, err);
  for (int attempt = 0; !rc; attempt++) {
    char name[TEENY_MAX_NAME_LEN + 1];
    teeny_store_cubin c;
    if ((rc = row_get(s, key, arch, &c, err)))
      return rc;
    if (!read || ((rc = entry_name(s, key, name, sizeof name, err)) == TEENY_OK &&
                  (rc = read_cubin(s, name, &c, err)) == TEENY_OK)) {
      *out = c;
      return TEENY_OK;
    }
    /* replaced or removed while we read it?  Then read the new one. */
    teeny_store_cubin now;
    int rc2 = row_get(s, key, arch, &now, NULL);
    bool changed = rc2 == TEENY_OK && strcmp(now.sha256, c.sha256) != 0;
    teeny_store_cubin_close(&c);
    teeny_store_cubin_close(&now);
    if (rc2 == TEENY_E_NOTFOUND)
      return teeny__store_fail(err, TEENY_E_NOTFOUND,
                               "no %s cubin for %.16s... (removed while read)",
                               arch, key);
    if (rc != TEENY_E_CORRUPT || !changed || attempt >= 2)
      return rc;
    rc = TEENY_OK;
  }
  return rc;
}

/* ---- remove and list ---------------------------------------------------------------- */

int teeny_store_cubin_remove(teeny_store *s, const char *key, const char *arch,
                             char *err) {
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  int rc = check_ids(key, arch, err);
  if (rc)
    return rc;
  char name[TEENY_MAX_NAME_LEN + 1];
  bool have_name = entry_name(s, key, name, sizeof name, NULL) == TEENY_OK;
  if (!s->sync_full && (rc = teeny__store_exec(s, "PRAGMA synchronous = FULL", err)))
    return rc;
  sqlite3_stmt *st = NULL;
  if (!(rc = teeny__store_begin(s, err)) &&
      !(rc = teeny__store_prepare(s, "DELETE FROM cubins WHERE key = ?1 AND arch = ?2",
                                  &st, err))) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, arch, -1, SQLITE_STATIC);
    int sr = sqlite3_step(st);
    rc = sr != SQLITE_DONE ? teeny__store_sqlerr(s, sr, "delete cubin", err)
         : sqlite3_changes(s->db) == 0
             ? teeny__store_fail(err, TEENY_E_NOTFOUND, "no %s cubin for %.16s...",
                                 arch, key)
             : teeny__store_commit(s, err);
    sqlite3_finalize(st);
  }
  teeny__store_rollback(s);
  if (!s->sync_full)
    (void)teeny__store_exec(s, "PRAGMA synchronous = NORMAL", NULL);
  if (rc || !have_name)
    return rc; /* no name: the file is an orphan for verify */
  /* phase 2: the file, unless a put stored the cubin again meanwhile (puts
   * rename only under the write lock, which we hold) */
  teeny_store_cubin again;
  if (teeny__store_begin(s, NULL) != TEENY_OK)
    return TEENY_OK; /* the file stays as an orphan for verify */
  if (row_get(s, key, arch, &again, NULL) == TEENY_E_NOTFOUND) {
    char fname[TEENY__STORE_FNAME_MAX];
    teeny__store_cubin_name(name, key, arch, fname, sizeof fname);
    int shardfd = teeny__store_open_shard(s, key, false, NULL);
    if (shardfd >= 0) {
      (void)unlinkat(shardfd, fname, 0);
      close(shardfd);
    }
  } else {
    teeny_store_cubin_close(&again);
  }
  teeny__store_rollback(s);
  return TEENY_OK;
}

int teeny_store_cubin_list(teeny_store *s, const char *key,
                           teeny_store_cubin **out, size_t *n, char *err) {
  *out = NULL;
  *n = 0;
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  if (teeny_store_key_check(key))
    return teeny__store_fail(err, TEENY_E_INVAL, "invalid key");
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(
      s, "SELECT " CUBIN_COLS " FROM cubins WHERE key = ?1 ORDER BY arch", &st, err);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  teeny_store_cubin *v = NULL;
  size_t len = 0, cap = 0;
  int sr;
  while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
    if (len == cap) {
      size_t ncap = cap ? 2 * cap : 4;
      teeny_store_cubin *nv = teeny__realloc(v, ncap * sizeof *nv);
      if (!nv) {
        rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
        break;
      }
      v = nv;
      cap = ncap;
    }
    if ((rc = cubin_from_stmt(st, &v[len], err)))
      break;
    len++;
  }
  if (!rc && sr != SQLITE_DONE)
    rc = teeny__store_sqlerr(s, sr, "list cubins", err);
  sqlite3_finalize(st);
  if (rc) {
    teeny_store_cubins_free(v, len);
    return rc;
  }
  *out = v;
  *n = len;
  return TEENY_OK;
}

int teeny__store_cubin_archs(teeny_store *s, const char *key, char **out,
                             char *err) {
  *out = NULL;
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(
      s, "SELECT group_concat(arch, ' ') FROM cubins WHERE key = ?1", &st, err);
  if (rc)
    return rc;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  int sr = sqlite3_step(st);
  const unsigned char *t = sr == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
  if (sr != SQLITE_ROW)
    rc = teeny__store_sqlerr(s, sr, "select", err);
  else if (t && !(*out = teeny__strdup((const char *)t)))
    rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  sqlite3_finalize(st);
  return rc;
}
