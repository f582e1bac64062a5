/*
 * store/verify.c — teeny_store_verify: the store checked against its
 * index, and optionally repaired.
 *
 *   rows:     each row's three files exist, are regular, have the row's
 *             sizes and sha256 (the whole store is re-read and re-hashed);
 *   objects/: every file is named by a row (else an orphan: a put that
 *             died before its row, or a removal that died before unlink);
 *   tmp/:     temp files of dead puts: their writer (the pid in the
 *             name) is gone, or they are older than a grace period;
 *   cubins:   each cubin row's file the same way (cubin.c); a bad one is
 *             dropped alone, its entry stays;
 *   counters: meta's entries/bytes/cubins/cubin_bytes equal COUNT and SUM
 *             over the rows.
 *
 * Repair drops bad rows through the two-phase removal (evict.c) and
 * unlinks orphans and stale temps.  The objects/ walk holds SQLite's write
 * lock per shard, so a put of another process (which renames only under
 * that lock) is never caught between its rename and its row and mistaken
 * for an orphan.  An administrative operation: its cost is one read of
 * every stored byte.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_int.h"

/* ---- the problems list --------------------------------------------------- */

void teeny_store_problems_init(teeny_store_problems *p) {
  memset(p, 0, sizeof *p);
}

void teeny_store_problems_close(teeny_store_problems *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->n; i++) {
    teeny__free(p->v[i].path);
    teeny__free(p->v[i].detail);
  }
  teeny__free(p->v);
  memset(p, 0, sizeof *p);
}

const char *teeny_store_problem_name(teeny_store_problem_kind k) {
  static const char *const names[] = {
      [TEENY_STORE_PROB_MISSING] = "missing",
      [TEENY_STORE_PROB_NOTREG] = "not-regular",
      [TEENY_STORE_PROB_SIZE] = "size",
      [TEENY_STORE_PROB_HASH] = "hash",
      [TEENY_STORE_PROB_BADROW] = "bad-row",
      [TEENY_STORE_PROB_ORPHAN] = "orphan",
      [TEENY_STORE_PROB_TMP] = "stale-tmp",
      [TEENY_STORE_PROB_COUNTERS] = "counters",
      [TEENY_STORE_PROB_INDEX] = "index",
  };
  return (unsigned)k < TEENY_ARRAY_LEN(names) ? names[k] : "unknown";
}

static teeny_store_problem *
problem_add(teeny_store_problems *p, teeny_store_problem_kind kind,
            const char *key, const char *path, const char *fmt, ...)
    TEENY_PRINTF(5, 6);

/* Append a problem; NULL on NOMEM. */
static teeny_store_problem *problem_add(teeny_store_problems *p,
                                        teeny_store_problem_kind kind,
                                        const char *key, const char *path,
                                        const char *fmt, ...) {
  if (p->n == p->cap) {
    size_t ncap = p->cap ? 2 * p->cap : 16;
    teeny_store_problem *nv = teeny__realloc(p->v, ncap * sizeof *nv);
    if (!nv)
      return NULL;
    p->v = nv;
    p->cap = ncap;
  }
  teeny_store_problem *pr = &p->v[p->n];
  memset(pr, 0, sizeof *pr);
  pr->kind = kind;
  snprintf(pr->key, sizeof pr->key, "%s", key ? key : "");
  teeny_buf b;
  teeny__buf_init(&b);
  va_list ap;
  va_start(ap, fmt);
  teeny__buf_vprintf(&b, fmt, ap);
  va_end(ap);
  pr->detail = teeny__buf_take(&b, NULL);
  pr->path = teeny__strdup(path ? path : "");
  if (!pr->detail || !pr->path) {
    teeny__free(pr->detail);
    teeny__free(pr->path);
    return NULL;
  }
  p->n++;
  return pr;
}

#define OOM(err) teeny__store_fail(err, TEENY_E_NOMEM, "out of memory")
#define TMP_GRACE_S 3600 /* a temp file this old is stale whoever wrote it */

/* ---- the index itself ------------------------------------------------------ */

/* SQLite's own check of index.db's pages.  A damaged index is one problem
 * (the rows cannot be trusted, or read): the handle is marked damaged, so
 * teenycd rebuilds it (daemon/heal.h). */
static int verify_index(teeny_store *s, teeny_store_problems *out,
                        bool *damaged, char *err) {
  *damaged = false;
  sqlite3_stmt *st = NULL;
  int rc = teeny__store_prepare(s, "PRAGMA quick_check(1)", &st, err);
  if (rc && rc != TEENY_E_CORRUPT)
    return rc;
  int sr = rc ? SQLITE_CORRUPT : sqlite3_step(st);
  char what[160] = "not a database, or its pages are damaged";
  if (sr == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(st, 0);
    if (t && strcmp((const char *)t, "ok") == 0) {
      sqlite3_finalize(st);
      return TEENY_OK;
    }
    snprintf(what, sizeof what, "%s", t ? (const char *)t : "?");
  } else if (!teeny__store_is_damage(sr)) {
    rc = teeny__store_sqlerr(s, sr, "quick_check", err); /* busy, I/O */
    sqlite3_finalize(st);
    return rc;
  }
  sqlite3_finalize(st);
  *damaged = true;
  s->index_damaged = true;
  return problem_add(out, TEENY_STORE_PROB_INDEX, "", "index.db", "%s", what)
             ? TEENY_OK
             : OOM(err);
}

/* ---- rows ---------------------------------------------------------------- */

/* Check one file of a row; returns the problem kind or -1 if fine. */
static int check_file(int shardfd, const char *fname, uint64_t size,
                      const char *sha, char *detail, size_t dsize) {
  struct stat st;
  int fd = teeny__store_open_file(shardfd, fname, O_RDONLY, 0, &st);
  if (fd == -2) {
    snprintf(detail, dsize, "not a regular file");
    return TEENY_STORE_PROB_NOTREG;
  }
  if (fd < 0) {
    int e = errno;
    snprintf(detail, dsize, "%s", strerror(e));
    return e == ENOENT ? TEENY_STORE_PROB_MISSING : TEENY_STORE_PROB_NOTREG;
  }
  int kind = -1;
  char *buf = NULL;
  if ((uint64_t)st.st_size != size) {
    snprintf(detail, dsize, "size %lld, index says %llu", (long long)st.st_size,
             (unsigned long long)size);
    kind = TEENY_STORE_PROB_SIZE;
  } else if (!(buf = teeny__malloc((size_t)size + 1))) {
    snprintf(detail, dsize, "out of memory reading it");
    kind = TEENY_STORE_PROB_HASH;
  } else {
    size_t got = 0;
    ssize_t n;
    while (got < size && ((n = read(fd, buf + got, (size_t)size - got)) > 0 ||
                          (n < 0 && errno == EINTR)))
      got += n > 0 ? (size_t)n : 0;
    char hex[65];
    if (got != size) {
      snprintf(detail, dsize, "short read (%zu of %llu bytes)", got,
               (unsigned long long)size);
      kind = TEENY_STORE_PROB_SIZE;
    } else if (teeny__sha256_hex(buf, got, hex) || strcmp(hex, sha) != 0) {
      snprintf(detail, dsize, "sha256 %.16s..., index says %.16s...", hex, sha);
      kind = TEENY_STORE_PROB_HASH;
    }
  }
  teeny__free(buf);
  close(fd);
  return kind;
}

/* Still the same row (not evicted or re-put while we hashed)? */
static bool row_unchanged(teeny_store *s, const teeny_store_rec *r) {
  teeny_store_rec now;
  if (teeny__store_row_get(s, r->key, &now, NULL) != TEENY_OK)
    return false;
  bool same = now.created == r->created && now.ptx_size == r->ptx_size &&
              strcmp(now.ptx_sha256, r->ptx_sha256) == 0;
  teeny_store_rec_close(&now);
  return same;
}

/* Check r's files; append its problems; *bad says whether it has any. */
static int verify_row(teeny_store *s, const teeny_store_rec *r, bool params_ok,
                      teeny_store_problems *out, bool *bad, char *err) {
  *bad = false;
  if (teeny_store_key_check(r->key) ||
      teeny_store_name_check(r->name, strlen(r->name)) || !params_ok) {
    *bad = true;
    return problem_add(out, TEENY_STORE_PROB_BADROW, "", "index.db",
                       "row with invalid key, name or params (%.64s / "
                       "%.64s)",
                       r->key, r->name)
               ? TEENY_OK
               : OOM(err);
  }
  const uint64_t sizes[3] = {r->ptx_size, r->mlir_size, r->src_size};
  const char *shas[3] = {r->ptx_sha256, r->mlir_sha256, r->src_sha256};
  int kinds[3] = {-1, -1, -1};
  char details[3][128];
  int shardfd = teeny__store_open_shard(s, r->key, false, NULL);
  for (int i = 0; i < 3; i++) {
    char fname[TEENY__STORE_FNAME_MAX];
    teeny__store_file_name(r->name, r->key, teeny__store_exts[i], fname,
                           sizeof fname);
    if (shardfd < 0) {
      kinds[i] = shardfd == TEENY_E_NOTFOUND ? TEENY_STORE_PROB_MISSING
                                             : TEENY_STORE_PROB_NOTREG;
      snprintf(details[i], sizeof details[i], "shard directory %s",
               shardfd == TEENY_E_NOTFOUND ? "missing" : "unusable");
    } else {
      kinds[i] = check_file(shardfd, fname, sizes[i], shas[i], details[i],
                            sizeof details[i]);
    }
    *bad = *bad || kinds[i] >= 0;
  }
  if (shardfd >= 0)
    close(shardfd);
  if (!*bad || !row_unchanged(s, r)) {
    *bad = false; /* fine, or changed under us: not a problem of this row */
    return TEENY_OK;
  }
  for (int i = 0; i < 3; i++) {
    if (kinds[i] < 0)
      continue;
    char path[TEENY__STORE_FNAME_MAX + 16];
    snprintf(path, sizeof path, "objects/%.2s/%s_%s.%s", r->key, r->name,
             r->key, teeny__store_exts[i]);
    if (!problem_add(out, (teeny_store_problem_kind)kinds[i], r->key, path,
                     "%s", details[i]))
      return OOM(err);
  }
  return TEENY_OK;
}

/* Every row, and whether its params decode. */
static int load_rows(teeny_store *s, teeny_store_rec **rows, bool **ok,
                     size_t *n, char *err) {
  *rows = NULL;
  *ok = NULL;
  *n = 0;
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(
      s, "SELECT " TEENY__STORE_ROW_COLS " FROM entries ORDER BY key", &st,
      err);
  if (rc)
    return rc;
  size_t cap = 0;
  int sr;
  while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      size_t ncap = cap ? 2 * cap : 64;
      teeny_store_rec *nr = teeny__realloc(*rows, ncap * sizeof *nr);
      if (nr)
        *rows = nr;
      bool *nok = nr ? teeny__realloc(*ok, ncap * sizeof *nok) : NULL;
      if (!nok) {
        rc = OOM(err);
        break;
      }
      *ok = nok;
      cap = ncap;
    }
    if ((rc = teeny__store_row_from_stmt(st, &(*rows)[*n], &(*ok)[*n], err)))
      break;
    (*n)++;
  }
  if (!rc && sr != SQLITE_DONE && sr != SQLITE_ROW)
    rc = teeny__store_sqlerr(s, sr, "select", err);
  sqlite3_finalize(st);
  return rc;
}

static int verify_rows(teeny_store *s, bool repair, teeny_store_problems *out,
                       char *err) {
  teeny_store_rec *rows;
  bool *params_ok;
  size_t nrows;
  int rc = load_rows(s, &rows, &params_ok, &nrows, err);
  if (rc) {
    teeny_store_recs_free(rows, nrows);
    teeny__free(params_ok);
    return rc;
  }
  teeny__store_victim *v = NULL;
  size_t nv = 0;
  size_t first = out->n;
  if (nrows && !(v = teeny__calloc(nrows, sizeof *v)))
    rc = OOM(err);
  for (size_t i = 0; i < nrows && !rc; i++) {
    bool bad;
    if ((rc = verify_row(s, &rows[i], params_ok[i], out, &bad, err)) || !bad)
      continue;
    snprintf(v[nv].key, sizeof v[nv].key, "%s", rows[i].key);
    v[nv].bytes = rows[i].ptx_size + rows[i].mlir_size + rows[i].src_size;
    /* A bad name builds no path: the row goes, its files become orphans
     * that the objects/ walk judges by their own names. */
    if (!teeny_store_name_check(rows[i].name, strlen(rows[i].name))) {
      v[nv].name = rows[i].name; /* moved */
      rows[i].name = NULL;
    }
    nv++;
    if ((rc = teeny__store_cubin_archs(s, rows[i].key, &v[nv - 1].archs, err)))
      break;
  }
  if (!rc && repair && nv &&
      (rc = teeny__store_drop(s, v, nv, NULL, err)) == TEENY_OK)
    for (size_t i = first; i < out->n; i++)
      out->v[i].repaired = true;
  teeny__store_victims_free(v, nv);
  teeny_store_recs_free(rows, nrows);
  teeny__free(params_ok);
  return rc;
}

/* ---- cubins -------------------------------------------------------------- */

/* One cubin row with its entry's name (the file name needs it). */
typedef struct cubin_row {
  char key[TEENY_STORE_KEY_LEN + 1];
  char arch[TEENY_STORE_ARCH_MAX + 1];
  char name[TEENY_MAX_NAME_LEN + 1];
  char sha[TEENY_STORE_KEY_LEN + 1];
  uint64_t size;
} cubin_row;

/* Every cubin row whose entry name is valid (an invalid one is the entry's
 * problem, and its cubins go with it). */
static int load_cubins(teeny_store *s, cubin_row **out, size_t *n, char *err) {
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(s,
                                "SELECT c.key, c.arch, e.name, c.sha256, c.size "
                                "FROM cubins c JOIN entries e ON e.key = c.key "
                                "ORDER BY c.key, c.arch",
                                &st, err);
  if (rc)
    return rc;
  size_t cap = 0;
  int sr;
  while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
    const char *cols[4];
    for (int i = 0; i < 4; i++)
      cols[i] = (const char *)sqlite3_column_text(st, i);
    if (!cols[0] || !cols[1] || !cols[2] || !cols[3] ||
        teeny_store_name_check(cols[2], strlen(cols[2])) ||
        teeny_store_arch_check(cols[1]) || teeny_store_key_check(cols[0]))
      continue;
    if (*n == cap) {
      size_t ncap = cap ? 2 * cap : 64;
      cubin_row *nv = teeny__realloc(*out, ncap * sizeof *nv);
      if (!nv) {
        rc = OOM(err);
        break;
      }
      *out = nv;
      cap = ncap;
    }
    cubin_row *c = &(*out)[(*n)++];
    snprintf(c->key, sizeof c->key, "%s", cols[0]);
    snprintf(c->arch, sizeof c->arch, "%s", cols[1]);
    snprintf(c->name, sizeof c->name, "%s", cols[2]);
    snprintf(c->sha, sizeof c->sha, "%s", cols[3]);
    c->size = (uint64_t)sqlite3_column_int64(st, 4);
  }
  if (!rc && sr != SQLITE_DONE)
    rc = teeny__store_sqlerr(s, sr, "select", err);
  sqlite3_finalize(st);
  return rc;
}

/* Is the cubin row of c still the one we hashed? */
static bool cubin_unchanged(teeny_store *s, const cubin_row *c) {
  teeny_store_cubin now;
  if (teeny_store_cubin_get(s, c->key, c->arch, false, &now, NULL) != TEENY_OK)
    return false;
  bool same = strcmp(now.sha256, c->sha) == 0 && now.size == c->size;
  teeny_store_cubin_close(&now);
  return same;
}

static int verify_cubin(teeny_store *s, const cubin_row *c, bool repair,
                        teeny_store_problems *out, char *err) {
  char fname[TEENY__STORE_FNAME_MAX], detail[128];
  teeny__store_cubin_name(c->name, c->key, c->arch, fname, sizeof fname);
  int shardfd = teeny__store_open_shard(s, c->key, false, NULL);
  int kind = shardfd < 0 ? TEENY_STORE_PROB_MISSING
                         : check_file(shardfd, fname, c->size, c->sha, detail,
                                      sizeof detail);
  if (shardfd < 0)
    snprintf(detail, sizeof detail, "shard directory missing or unusable");
  else
    close(shardfd);
  if (kind < 0 || !cubin_unchanged(s, c))
    return TEENY_OK;
  char path[TEENY__STORE_FNAME_MAX + 16];
  snprintf(path, sizeof path, "objects/%.2s/%s", c->key, fname);
  teeny_store_problem *pr = problem_add(out, (teeny_store_problem_kind)kind, "",
                                        path, "cubin %s: %s", c->arch, detail);
  if (!pr)
    return OOM(err);
  if (repair) /* just the cubin: the entry's own files are fine */
    pr->repaired = teeny_store_cubin_remove(s, c->key, c->arch, NULL) == TEENY_OK;
  return TEENY_OK;
}

static int verify_cubins(teeny_store *s, bool repair, teeny_store_problems *out,
                         char *err) {
  cubin_row *v;
  size_t n;
  int rc = load_cubins(s, &v, &n, err);
  for (size_t i = 0; i < n && !rc; i++)
    rc = verify_cubin(s, &v[i], repair, out, err);
  teeny__free(v);
  return rc;
}

/* ---- objects/ ------------------------------------------------------------ */

/* Is (key, name) a row, and (key, arch) a cubin row when arch is set? */
#define ROW_NAMES_SQL                                                          \
  "SELECT 1 FROM entries WHERE key = ?1 AND name = ?2 AND (?3 IS NULL OR "     \
  "EXISTS (SELECT 1 FROM cubins WHERE key = ?1 AND arch = ?3))"
static int row_names(teeny_store *s, sqlite3_stmt *st, const char *key,
                     const char *name, const char *arch, bool *yes, char *err) {
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
  if (arch[0])
    sqlite3_bind_text(st, 3, arch, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 3);
  int sr = sqlite3_step(st);
  *yes = sr == SQLITE_ROW;
  sqlite3_reset(st);
  return sr == SQLITE_ROW || sr == SQLITE_DONE
             ? TEENY_OK
             : teeny__store_sqlerr(s, sr, "select", err);
}

/* Remove dirfd/name, whatever it is (directories only when empty). */
static bool remove_entry(int dirfd, const char *name, bool is_dir) {
  return unlinkat(dirfd, name, is_dir ? AT_REMOVEDIR : 0) == 0;
}

/* Walk one shard under the write lock. */
static int verify_shard(teeny_store *s, const char *shard, bool repair,
                        sqlite3_stmt *q, teeny_store_problems *out, char *err) {
  int rc = teeny__store_begin(s, err);
  if (rc)
    return rc;
  int sfd =
      openat(s->objfd, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int lfd =
      sfd >= 0 ? openat(sfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
  if (!d) {
    int e = errno;
    if (lfd >= 0)
      close(lfd);
    if (sfd >= 0)
      close(sfd);
    teeny__store_rollback(s);
    if (e == ENOENT)
      return TEENY_OK; /* removed meanwhile */
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot read objects/%s: %s", shard, strerror(e));
  }
  struct dirent *de;
  while (!rc && (de = readdir(d))) {
    const char *fn = de->d_name;
    if (!strcmp(fn, ".") || !strcmp(fn, ".."))
      continue;
    char name[TEENY_MAX_NAME_LEN + 1], key[TEENY_STORE_KEY_LEN + 1];
    char arch[TEENY_STORE_ARCH_MAX + 1];
    struct stat st;
    if (fstatat(sfd, fn, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue; /* vanished */
    bool named = false;
    bool ok_name = teeny__store_parse_object(shard, fn, name, key, NULL, arch);
    if (ok_name && (rc = row_names(s, q, key, name, arch, &named, err)))
      break;
    if (named)
      continue; /* a row's own files were judged by verify_rows */
    char path[NAME_MAX + 16];
    snprintf(path, sizeof path, "objects/%s/%s", shard, fn);
    teeny_store_problem *pr = problem_add(
        out,
        S_ISREG(st.st_mode) ? TEENY_STORE_PROB_ORPHAN : TEENY_STORE_PROB_NOTREG,
        ok_name ? key : "", path, "%s",
        !S_ISREG(st.st_mode) ? "not a regular file"
        : ok_name            ? "no index row names this file"
                             : "not an object file name");
    if (!pr) {
      rc = OOM(err);
      break;
    }
    if (repair)
      pr->repaired = remove_entry(sfd, fn, S_ISDIR(st.st_mode));
  }
  closedir(d);
  close(sfd);
  teeny__store_rollback(s); /* read-only transaction: release the lock */
  return rc;
}

static bool is_shard_name(const char *n) {
  return strlen(n) == 2 && n[0] && n[1] && strchr("0123456789abcdef", n[0]) &&
         strchr("0123456789abcdef", n[1]);
}

static int verify_objects(teeny_store *s, bool repair,
                          teeny_store_problems *out, char *err) {
  char **names;
  size_t n;
  int rc = teeny__store_list_dir(s->objfd, &names, &n, err);
  if (rc)
    return rc;
  sqlite3_stmt *q;
  if ((rc = teeny__store_prepare(s, ROW_NAMES_SQL, &q, err))) {
    teeny__store_names_free(names, n);
    return rc;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    struct stat st;
    if (fstatat(s->objfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (is_shard_name(names[i]) && S_ISDIR(st.st_mode)) {
      rc = verify_shard(s, names[i], repair, q, out, err);
      continue;
    }
    char path[NAME_MAX + 16];
    snprintf(path, sizeof path, "objects/%s", names[i]);
    teeny_store_problem *pr = problem_add(
        out,
        S_ISREG(st.st_mode) ? TEENY_STORE_PROB_ORPHAN : TEENY_STORE_PROB_NOTREG,
        "", path, "unexpected entry in objects/");
    if (!pr)
      rc = OOM(err);
    else if (repair)
      pr->repaired = remove_entry(s->objfd, names[i], S_ISDIR(st.st_mode));
  }
  sqlite3_finalize(q);
  teeny__store_names_free(names, n);
  return rc;
}

/* ---- tmp/ and counters --------------------------------------------------- */

/* The writer's pid in a temp file's name ("{key}.{ext}.{pid}-{rnd}.tmp"),
 * or 0 (an older name, or not ours). */
static long tmp_writer(const char *name) {
  const char *dash = strrchr(name, '-');
  const char *dot = dash ? dash : NULL;
  while (dot && dot > name && dot[-1] != '.')
    dot--;
  if (!dash || dot == name || dot == dash)
    return 0;
  long pid = 0;
  for (const char *p = dot; p < dash; p++) {
    if (*p < '0' || *p > '9' || pid > 100000000)
      return 0;
    pid = pid * 10 + (*p - '0');
  }
  return pid;
}

/* Why a temp file is stale, into why; false while a put may still use it:
 * its writer runs and it is younger than grace (grace < 0: every one is
 * stale). */
static bool tmp_stale(const char *name, const struct stat *st, time_t now,
                      int64_t grace, char *why, size_t n) {
  long pid = tmp_writer(name);
  long long age = (long long)(now - st->st_mtime);
  if (grace < 0)
    snprintf(why, n, "temp file %lld s old", age);
  else if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
    snprintf(why, n, "temp file of pid %ld, which is gone", pid);
  else if (age >= grace)
    snprintf(why, n, "temp file %lld s old", age);
  else
    return false;
  return true;
}

static int verify_tmp(teeny_store *s, bool repair, int64_t grace,
                      teeny_store_problems *out, char *err) {
  char **names;
  size_t n;
  int rc = teeny__store_list_dir(s->tmpfd, &names, &n, err);
  if (rc)
    return rc;
  time_t now = time(NULL); /* file times are real time, not the store clock */
  for (size_t i = 0; i < n && !rc; i++) {
    struct stat st;
    char why[96];
    if (fstatat(s->tmpfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !tmp_stale(names[i], &st, now, grace, why, sizeof why))
      continue;
    char path[NAME_MAX + 16];
    snprintf(path, sizeof path, "tmp/%s", names[i]);
    teeny_store_problem *pr =
        problem_add(out, TEENY_STORE_PROB_TMP, "", path, "%s", why);
    if (!pr)
      rc = OOM(err);
    else if (repair)
      pr->repaired = remove_entry(s->tmpfd, names[i], S_ISDIR(st.st_mode));
  }
  teeny__store_names_free(names, n);
  return rc;
}

int teeny_store_clean_tmp(teeny_store *s, teeny_store_problems *out,
                          char *err) {
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  return verify_tmp(s, true, TMP_GRACE_S, out, err);
}

/* meta's four counters and what the rows say they should be. */
typedef struct counters {
  sqlite3_int64 meta[4]; /* entries, bytes, cubins, cubin_bytes */
  sqlite3_int64 rows[4]; /* the same from COUNT and SUM */
} counters;

static int read_counters(teeny_store *s, counters *c, char *err) {
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(
      s,
      "SELECT (SELECT v FROM meta WHERE k = 'entries'),"
      " (SELECT v FROM meta WHERE k = 'bytes'),"
      " (SELECT v FROM meta WHERE k = 'cubins'),"
      " (SELECT v FROM meta WHERE k = 'cubin_bytes'),"
      " (SELECT count(*) FROM entries),"
      " (SELECT CAST(total(ptx_size + mlir_size + src_size) AS INTEGER)"
      "  FROM entries),"
      " (SELECT count(*) FROM cubins),"
      " (SELECT CAST(total(size) AS INTEGER) FROM cubins)",
      &st, err);
  if (rc)
    return rc;
  int sr = sqlite3_step(st);
  if (sr == SQLITE_ROW)
    for (int i = 0; i < 4; i++) {
      c->meta[i] = sqlite3_column_int64(st, i);
      c->rows[i] = sqlite3_column_int64(st, 4 + i);
    }
  else
    rc = teeny__store_sqlerr(s, sr, "counters", err);
  sqlite3_finalize(st);
  c->rows[1] += c->rows[3]; /* bytes counts the cubins too */
  return rc;
}

static int verify_counters(teeny_store *s, bool repair,
                           teeny_store_problems *out, char *err) {
  int rc = teeny__store_begin(s, err); /* a stable view, and fixable */
  if (rc)
    return rc;
  counters c = {{0}, {0}};
  if ((rc = read_counters(s, &c, err)) ||
      memcmp(c.meta, c.rows, sizeof c.meta) == 0)
    goto out;
  teeny_store_problem *pr = problem_add(
      out, TEENY_STORE_PROB_COUNTERS, "", "index.db",
      "counters say %lld entries / %lld bytes / %lld cubins / %lld cubin "
      "bytes, rows %lld / %lld / %lld / %lld",
      (long long)c.meta[0], (long long)c.meta[1], (long long)c.meta[2],
      (long long)c.meta[3], (long long)c.rows[0], (long long)c.rows[1],
      (long long)c.rows[2], (long long)c.rows[3]);
  if (!pr) {
    rc = OOM(err);
    goto out;
  }
  if (repair) {
    char sql[320];
    snprintf(sql, sizeof sql,
             "UPDATE meta SET v = %lld WHERE k = 'entries';"
             "UPDATE meta SET v = %lld WHERE k = 'bytes';"
             "UPDATE meta SET v = %lld WHERE k = 'cubins';"
             "UPDATE meta SET v = %lld WHERE k = 'cubin_bytes'",
             (long long)c.rows[0], (long long)c.rows[1], (long long)c.rows[2],
             (long long)c.rows[3]);
    if (!(rc = teeny__store_exec(s, sql, err)) &&
        !(rc = teeny__store_commit(s, err)))
      pr->repaired = true;
  }
out:
  teeny__store_rollback(s);
  return rc;
}

int teeny_store_verify(teeny_store *s, const teeny_store_verify_opts *o,
                       teeny_store_problems *out, char *err) {
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  static const teeny_store_verify_opts defaults = {false, 0};
  if (!o)
    o = &defaults;
  int64_t grace = o->tmp_grace_s == 0 ? TMP_GRACE_S : o->tmp_grace_s;
  bool damaged = false;
  int rc = verify_index(s, out, &damaged, err);
  if (rc || damaged)
    return rc; /* rows cannot be read: the index is to be rebuilt */
  if ((rc = teeny_store_flush(s, err)))
    return rc;
  /* Rows first: repairing them turns their files into orphans, which the
   * objects/ walk then removes. */
  if ((rc = verify_rows(s, o->repair, out, err)) ||
      (rc = verify_cubins(s, o->repair, out, err)) ||
      (rc = verify_objects(s, o->repair, out, err)) ||
      (rc = verify_tmp(s, o->repair, grace, out, err)))
    return rc;
  return verify_counters(s, o->repair, out, err);
}
