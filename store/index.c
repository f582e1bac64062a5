/*
 * store/index.c — index.db: connection setup, the schema and its
 * migrations, transactions with busy handling, and rows <-> records.
 *
 * Journal: WAL, so readers (gets on hits) never wait for a writer and
 * writers append instead of rewriting pages.  synchronous=NORMAL: a commit
 * may be lost at power failure (never torn).  That is safe for inserts and
 * touches because every file a row names was fsynced (and its directory)
 * before the row was written: a lost insert leaves orphans, a lost touch an
 * older last_used.  It is not safe for deletes, whose files are unlinked
 * afterwards, so evict.c switches to synchronous=FULL around them.
 * Writes are rare (one per cold compile, one per touch flush); reads are
 * one indexed lookup by key.
 *
 * Every connection keeps its WAL file at close (SQLITE_FCNTL_PERSIST_WAL):
 * SQLite otherwise deletes "index.db-wal" by path when its last
 * connection closes, and after a rebuild moved a damaged index aside
 * (heal.c) that path names the new index's WAL.  Each operation first
 * checks that index.db is still the file the handle opened and reopens it
 * if not, so handles in any process follow a rebuild.
 *
 * Schema versions live in PRAGMA user_version.  migrations[v] turns a v-1
 * index into a v one; add v2 by appending a step and bumping
 * TEENY_STORE_SCHEMA_VERSION.  Every step runs in one BEGIN IMMEDIATE
 * transaction that re-reads the version, so two processes opening a fresh
 * store at once migrate it once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_int.h"

/* ---- schema -------------------------------------------------------------- */

/* v1: entries (one row per key), two indexes, and O(1) totals in meta kept
 * by triggers so eviction and stats need no SUM over every row. */
static const char schema_v1[] =
    "CREATE TABLE entries ("
    " key TEXT PRIMARY KEY NOT NULL,"
    " name TEXT NOT NULL,"
    " id TEXT NOT NULL,"
    " target TEXT NOT NULL,"
    " num_warps INTEGER NOT NULL,"
    " entry TEXT NOT NULL,"
    " params TEXT NOT NULL," /* "f32* a_ptr, i32 n" */
    " threads_per_block INTEGER NOT NULL,"
    " shared_bytes INTEGER NOT NULL,"
    " ptx_size INTEGER NOT NULL,"
    " mlir_size INTEGER NOT NULL,"
    " src_size INTEGER NOT NULL,"
    " ptx_sha256 TEXT NOT NULL,"
    " mlir_sha256 TEXT NOT NULL,"
    " src_sha256 TEXT NOT NULL,"
    " created INTEGER NOT NULL,"   /* unix seconds */
    " last_used INTEGER NOT NULL," /* unix seconds */
    " hits INTEGER NOT NULL DEFAULT 0,"
    " compile_ms REAL NOT NULL,"
    " compiler_version TEXT NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE INDEX entries_last_used ON entries(last_used);"
    "CREATE INDEX entries_name ON entries(name);"
    "CREATE TABLE meta (k TEXT PRIMARY KEY NOT NULL, v INTEGER NOT NULL);"
    "INSERT INTO meta VALUES ('entries', 0), ('bytes', 0);"
    "CREATE TRIGGER entries_ins AFTER INSERT ON entries BEGIN"
    " UPDATE meta SET v = v + 1 WHERE k = 'entries';"
    " UPDATE meta SET v = v + NEW.ptx_size + NEW.mlir_size + NEW.src_size"
    "  WHERE k = 'bytes';"
    " END;"
    "CREATE TRIGGER entries_del AFTER DELETE ON entries BEGIN"
    " UPDATE meta SET v = v - 1 WHERE k = 'entries';"
    " UPDATE meta SET v = v - OLD.ptx_size - OLD.mlir_size - OLD.src_size"
    "  WHERE k = 'bytes';"
    " END;"
    "CREATE TRIGGER entries_size AFTER UPDATE OF ptx_size, mlir_size,"
    " src_size ON entries BEGIN"
    " UPDATE meta SET v = v - OLD.ptx_size - OLD.mlir_size - OLD.src_size"
    "  + NEW.ptx_size + NEW.mlir_size + NEW.src_size WHERE k = 'bytes';"
    " END;";

/* v2: list, eviction and stats that stay fast at 10^6 entries.  One
 * index per order that lists and eviction use, with the key as the tie
 * breaker, so a page is an index range read (list scans them backwards:
 * newest, largest, most hit first, ties by key descending; eviction
 * forwards); and the total of hits kept in meta like entries and bytes. */
static const char schema_v2[] =
    "DROP INDEX entries_last_used;"
    "CREATE INDEX entries_lru ON entries(last_used, key);"
    "CREATE INDEX entries_size ON entries(ptx_size + mlir_size + src_size, key);"
    "CREATE INDEX entries_hits ON entries(hits, key);"
    "INSERT INTO meta VALUES ('hits', (SELECT total(hits) FROM entries));"
    "DROP TRIGGER entries_ins;"
    "DROP TRIGGER entries_del;"
    "CREATE TRIGGER entries_ins AFTER INSERT ON entries BEGIN"
    " UPDATE meta SET v = v + 1 WHERE k = 'entries';"
    " UPDATE meta SET v = v + NEW.ptx_size + NEW.mlir_size + NEW.src_size"
    "  WHERE k = 'bytes';"
    " UPDATE meta SET v = v + NEW.hits WHERE k = 'hits';"
    " END;"
    "CREATE TRIGGER entries_del AFTER DELETE ON entries BEGIN"
    " UPDATE meta SET v = v - 1 WHERE k = 'entries';"
    " UPDATE meta SET v = v - OLD.ptx_size - OLD.mlir_size - OLD.src_size"
    "  WHERE k = 'bytes';"
    " UPDATE meta SET v = v - OLD.hits WHERE k = 'hits';"
    " END;"
    "CREATE TRIGGER entries_hits_sum AFTER UPDATE OF hits ON entries BEGIN"
    " UPDATE meta SET v = v - OLD.hits + NEW.hits WHERE k = 'hits';"
    " END;";

/* v3: cubins (one per entry and GPU architecture, cubin.c), removed with
 * their entry by a trigger and counted in meta's bytes (so the size cap
 * sees them) and in cubins/cubin_bytes; tuned (autotuning winners,
 * tuned.c), not part of the cache's size. */
static const char schema_v3[] =
    "CREATE TABLE cubins ("
    " key TEXT NOT NULL,"
    " arch TEXT NOT NULL,"      /* "sm_90" */
    " toolchain TEXT NOT NULL," /* "ptxas 13.0.88", "driver 580.65.06" */
    " size INTEGER NOT NULL,"
    " sha256 TEXT NOT NULL,"
    " created INTEGER NOT NULL,"
    " sass_ms REAL NOT NULL,"
    " PRIMARY KEY (key, arch)"
    ") WITHOUT ROWID;"
    "INSERT INTO meta VALUES ('cubins', 0), ('cubin_bytes', 0);"
    "CREATE TRIGGER cubins_ins AFTER INSERT ON cubins BEGIN"
    " UPDATE meta SET v = v + 1 WHERE k = 'cubins';"
    " UPDATE meta SET v = v + NEW.size WHERE k IN ('cubin_bytes', 'bytes');"
    " END;"
    "CREATE TRIGGER cubins_del AFTER DELETE ON cubins BEGIN"
    " UPDATE meta SET v = v - 1 WHERE k = 'cubins';"
    " UPDATE meta SET v = v - OLD.size WHERE k IN ('cubin_bytes', 'bytes');"
    " END;"
    "CREATE TRIGGER entries_del_cubins AFTER DELETE ON entries BEGIN"
    " DELETE FROM cubins WHERE key = OLD.key;"
    " END;"
    "CREATE TABLE tuned ("
    " digest TEXT NOT NULL,"
    " problem TEXT NOT NULL,"
    " gpu TEXT NOT NULL,"
    " driver TEXT NOT NULL,"
    " kernel TEXT NOT NULL,"
    " config TEXT NOT NULL,"
    " best_ms REAL NOT NULL,"
    " candidates INTEGER NOT NULL,"
    " created INTEGER NOT NULL,"
    " PRIMARY KEY (digest, problem, gpu, driver)"
    ") WITHOUT ROWID;"
    "CREATE INDEX tuned_kernel ON tuned(kernel);";

/* migrations[v]: SQL from version v-1 to v.  [0] is unused. */
static const char *const migrations[] = {
    NULL, schema_v1, schema_v2, schema_v3,
    /* v4 goes here, e.g. "ALTER TABLE entries ADD COLUMN ...;" */
};

_Static_assert(sizeof migrations / sizeof migrations[0] ==
                   TEENY_STORE_SCHEMA_VERSION + 1,
               "one migration step per schema version");

/* ---- errors and statements ----------------------------------------------- */

int teeny__store_sqlerr(teeny_store *s, int rc, const char *what, char *err) {
  int code;
  switch (rc & 0xff) {
  case SQLITE_FULL:
    code = TEENY_E_NOSPC;
    break;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    code = TEENY_E_BUSY;
    break;
  case SQLITE_NOMEM:
    code = TEENY_E_NOMEM;
    break;
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
    code = TEENY_E_CORRUPT;
    break;
  case SQLITE_IOERR:
    code = TEENY_E_IO;
    break;
  case SQLITE_PERM:
  case SQLITE_READONLY:
  case SQLITE_AUTH:
    code = TEENY_E_PERM;
    break;
  default:
    code = TEENY_E_STORE;
  }
  if (s && teeny__store_is_damage(rc))
    s->index_damaged = true;
  const char *msg = s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
  return teeny__store_fail(err, code, "%s/index.db: %s: %s",
                           s && s->root ? s->root : "?", what, msg);
}

int teeny__store_exec(teeny_store *s, const char *sql, char *err) {
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TEENY_OK : teeny__store_sqlerr(s, rc, sql, err);
}

int teeny__store_prepare(teeny_store *s, const char *sql, sqlite3_stmt **st,
                         char *err) {
  int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
  if (rc != SQLITE_OK) {
    *st = NULL;
    return teeny__store_sqlerr(s, rc, "prepare", err);
  }
  return TEENY_OK;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* True until busy_ms have passed since start_ns. */
static bool before_deadline(const teeny_store *s, uint64_t start_ns) {
  return s->busy_ms > 0 &&
         teeny__now_ns() - start_ns < (uint64_t)s->busy_ms * 1000000u;
}

/* Run sql, retrying SQLITE_BUSY (which SQLite returns without calling the
 * busy handler in some WAL cases, e.g. while another connection recovers
 * the WAL) with backoff until the busy timeout has passed. */
static int exec_retry(teeny_store *s, const char *sql, char *err) {
  uint64_t start = teeny__now_ns();
  int delay = 1;
  for (;;) {
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
      return TEENY_OK;
    int prim = rc & 0xff;
    if ((prim != SQLITE_BUSY && prim != SQLITE_LOCKED) ||
        !before_deadline(s, start))
      return teeny__store_sqlerr(s, rc, sql, err);
    sleep_ms(delay);
    delay = delay < 32 ? delay * 2 : 50;
  }
}

int teeny__store_begin(teeny_store *s, char *err) {
  return exec_retry(s, "BEGIN IMMEDIATE", err);
}

int teeny__store_commit(teeny_store *s, char *err) {
  int rc = exec_retry(s, "COMMIT", err);
  if (rc)
    teeny__store_rollback(s);
  return rc;
}

void teeny__store_rollback(teeny_store *s) {
  if (!sqlite3_get_autocommit(s->db))
    (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- open and migrate ---------------------------------------------------- */

static int user_version(teeny_store *s, int *v, char *err) {
  sqlite3_stmt *st;
  int rc = teeny__store_prepare(s, "PRAGMA user_version", &st, err);
  if (rc)
    return rc;
  int sr = sqlite3_step(st);
  if (sr == SQLITE_ROW)
    *v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return sr == SQLITE_ROW ? TEENY_OK
                          : teeny__store_sqlerr(s, sr, "user_version", err);
}

static int migrate(teeny_store *s, char *err) {
  int v = 0;
  int rc = user_version(s, &v, err);
  if (rc)
    return rc;
  if (v == TEENY_STORE_SCHEMA_VERSION)
    return TEENY_OK; /* the common case: no write lock taken */
  if (s->readonly)
    return teeny__store_fail(err, TEENY_E_STORE,
                             "%s/index.db has schema version %d, not %d, and this "
                             "process may not upgrade it (%s)",
                             s->root, v, TEENY_STORE_SCHEMA_VERSION, s->readonly);
  if ((rc = teeny__store_begin(s, err)))
    return rc;
  if ((rc = user_version(s, &v, err)))
    goto fail;
  if (v > TEENY_STORE_SCHEMA_VERSION || v < 0) {
    rc = teeny__store_fail(err, TEENY_E_STORE,
                           "%s/index.db has schema version %d; this build "
                           "knows up to %d",
                           s->root, v, TEENY_STORE_SCHEMA_VERSION);
    goto fail;
  }
  for (int to = v + 1; to <= TEENY_STORE_SCHEMA_VERSION; to++)
    if ((rc = teeny__store_exec(s, migrations[to], err)))
      goto fail;
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d",
           TEENY_STORE_SCHEMA_VERSION);
  if ((rc = teeny__store_exec(s, sql, err)))
    goto fail;
  return teeny__store_commit(s, err);
fail:
  teeny__store_rollback(s);
  return rc;
}

/* SQLite opens index.db and its -wal/-shm/-journal companions by path.
 * SQLITE_OPEN_NOFOLLOW guards the main file; refuse planted links at the
 * others up front (they are created next to the database, never through a
 * link we made, so anything but a regular file there is hostile). */
static int check_companions(teeny_store *s, char *err) {
  static const char *const names[] = {"index.db-wal", "index.db-shm",
                                      "index.db-journal"};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(names); i++) {
    struct stat st;
    if (fstatat(s->rootfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISREG(st.st_mode))
      return teeny__store_fail(err, TEENY_E_STORE,
                               "%s/%s is not a regular file (symlink?); "
                               "refusing to use it",
                               s->root, names[i]);
  }
  return TEENY_OK;
}

/* Create index.db ourselves (mode, O_NOFOLLOW) so SQLite only ever opens an
 * existing regular file. */
static int precreate_db(teeny_store *s, char *err) {
  /* (a read-only handle creates nothing: it needs an index.db already) */
  int fd = s->readonly ? -1
                       : openat(s->rootfd, "index.db",
                                O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                s->file_mode);
  if (fd >= 0) {
    (void)fchmod(fd, s->file_mode);
    teeny__store_share_adopt(s, fd);
    close(fd);
  } else if (!s->readonly && errno != EEXIST) {
    int e = errno;
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot create %s/index.db: %s", s->root,
                             strerror(e));
  }
  struct stat st;
  if (fstatat(s->rootfd, "index.db", &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode))
    return teeny__store_fail(err, TEENY_E_STORE,
                             "%s/index.db is not a regular file (symlink?); "
                             "refusing to use it",
                             s->root);
  s->index_dev = st.st_dev;
  s->index_ino = st.st_ino;
  return check_companions(s, err);
}

/* Keep the WAL at close (see the top) and bound what it keeps. */
static int keep_wal(teeny_store *s, char *err) {
  int on = 1;
  int sr = sqlite3_file_control(s->db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
  if (sr != SQLITE_OK)
    return teeny__store_sqlerr(s, sr, "persist_wal", err);
  return teeny__store_exec(s, "PRAGMA journal_size_limit = 4194304", err);
}

/* A read-only handle could not read the index: WAL needs index.db-shm,
 * which only a writer creates (teenycd while it runs). */
static int readonly_failed(teeny_store *s, int rc, char *err) {
  struct stat st;
  if (fstatat(s->rootfd, "index.db-shm", &st, AT_SYMLINK_NOFOLLOW) == 0)
    return rc;
  return teeny__store_fail(err, TEENY_E_STORE,
                           "cannot read %s/index.db read-only while no writer has it "
                           "open (%s)", s->root, s->readonly);
}

/* The cached lookup every get uses. */
static int prepare_get(teeny_store *s, char *err) {
  return teeny__store_prepare(s,
                              "SELECT " TEENY__STORE_ROW_COLS
                              ", " TEENY__STORE_CUBIN_COLS
                              " FROM entries WHERE key = ?1",
                              &s->get_stmt, err);
}

int teeny__store_index_open(teeny_store *s, char *err) {
  int rc = precreate_db(s, err);
  if (rc)
    return rc;
  size_t n = strlen(s->root) + sizeof "/index.db";
  char *path = teeny__malloc(n);
  if (!path)
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  snprintf(path, n, "%s/index.db", s->root);
  /* NOMUTEX: a handle is used by one thread at a time (store.h).  A
   * read-only handle reads a WAL database without writing anything, even
   * where it cannot create the -shm file. */
  int sr = sqlite3_open_v2(
      path, &s->db,
      (s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
          SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
      NULL);
  teeny__free(path);
  if (sr != SQLITE_OK)
    return teeny__store_sqlerr(s, sr, "open", err);
  sqlite3_extended_result_codes(s->db, 1);
  if (s->busy_ms > 0)
    sqlite3_busy_timeout(s->db, s->busy_ms);

  if (s->readonly) /* the owner chose the journal mode; nothing to set */
    return (rc = migrate(s, err)) ? readonly_failed(s, rc, err) : prepare_get(s, err);
  sqlite3_stmt *st;
  if ((rc = teeny__store_prepare(s, "PRAGMA journal_mode = WAL", &st, err)))
    return rc;
  uint64_t start = teeny__now_ns();
  while (((sr = sqlite3_step(st)) & 0xff) == SQLITE_BUSY &&
         before_deadline(s, start)) {
    sqlite3_reset(st);
    sleep_ms(10);
  }
  bool wal = sr == SQLITE_ROW &&
             strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
  sqlite3_finalize(st);
  if (!wal)
    return sr == SQLITE_ROW
               ? teeny__store_fail(err, TEENY_E_STORE,
                                   "%s/index.db: cannot switch to WAL", s->root)
               : teeny__store_sqlerr(s, sr, "journal_mode", err);
  if ((rc = teeny__store_exec(s,
                              s->sync_full ? "PRAGMA synchronous = FULL"
                                           : "PRAGMA synchronous = NORMAL",
                              err)) ||
      (rc = keep_wal(s, err)))
    return rc;
  if ((rc = migrate(s, err)))
    return rc;
  return prepare_get(s, err);
}

void teeny__store_index_close(teeny_store *s) {
  sqlite3_finalize(s->get_stmt);
  s->get_stmt = NULL;
  if (s->db)
    sqlite3_close(s->db); /* all statements are finalized by now */
  s->db = NULL;
  s->index_damaged = false;
}

int teeny__store_index_fresh(teeny_store *s, char *err) {
  struct stat st;
  if (s->db && fstatat(s->rootfd, "index.db", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      st.st_dev == s->index_dev && st.st_ino == s->index_ino)
    return TEENY_OK; /* the common case: one fstatat */
  teeny__store_index_close(s); /* pending touches wait for the next flush */
  int rc = teeny__store_index_open(s, err);
  if (rc)
    teeny__store_index_close(s);
  return rc;
}

void teeny_store_index_release(teeny_store *s) {
  teeny__store_index_close(s); /* pending touches wait for the next flush */
}

bool teeny_store_index_damaged(const teeny_store *s) {
  return s->index_damaged;
}

int teeny_store_schema_version(teeny_store *s) {
  int v = 0;
  int rc = teeny__store_index_fresh(s, NULL);
  if (!rc)
    rc = user_version(s, &v, NULL);
  return rc ? rc : v;
}

/* ---- params text --------------------------------------------------------- */

int teeny__store_params_encode(const teeny_param *p, size_t n, char **out,
                               char *err) {
  *out = NULL;
  teeny_buf b;
  teeny__buf_init(&b);
  for (size_t i = 0; i < n; i++) {
    const char *dt = teeny_dtype_name(p[i].dtype);
    /* Only what decode can read back: element dtypes, identifier names. */
    if (!dt || teeny_dtype_parse(dt) != p[i].dtype || !p[i].name ||
        teeny_store_name_check(p[i].name, strlen(p[i].name))) {
      teeny__buf_free(&b);
      return teeny__store_fail(err, TEENY_E_INVAL,
                               "parameter %zu: want an identifier name and "
                               "an element dtype",
                               i);
    }
    teeny__buf_printf(&b, "%s%s%s %s", i ? ", " : "", dt,
                      p[i].kind == TEENY_PARAM_POINTER     ? "*"
                      : p[i].kind == TEENY_PARAM_TENSORMAP ? "@"
                                                           : "",
                      p[i].name);
  }
  if (!(*out = teeny__buf_take(&b, NULL)))
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  return TEENY_OK;
}

/* One "dtype[*|@] name" item of len bytes (@: a tensormap). */
static int param_decode(const char *item, size_t len, teeny_param *out) {
  const char *sp = memchr(item, ' ', len);
  if (!sp)
    return TEENY_E_CORRUPT;
  size_t tlen = (size_t)(sp - item);
  bool ptr = tlen > 0 && item[tlen - 1] == '*';
  bool tmap = tlen > 0 && item[tlen - 1] == '@';
  char dt[16];
  size_t dlen = tlen - (ptr || tmap ? 1 : 0);
  if (dlen == 0 || dlen >= sizeof dt)
    return TEENY_E_CORRUPT;
  memcpy(dt, item, dlen);
  dt[dlen] = '\0';
  const char *name = sp + 1;
  size_t nlen = len - tlen - 1;
  out->dtype = teeny_dtype_parse(dt);
  out->kind = ptr ? TEENY_PARAM_POINTER : tmap ? TEENY_PARAM_TENSORMAP : TEENY_PARAM_SCALAR;
  if (out->dtype == TEENY_DT_VOID || teeny_store_name_check(name, nlen))
    return TEENY_E_CORRUPT;
  out->name = teeny__strndup(name, nlen);
  return out->name ? TEENY_OK : TEENY_E_NOMEM;
}

int teeny__store_params_decode(const char *text, teeny_param **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!text || !*text)
    return TEENY_OK;
  size_t count = 1;
  for (const char *c = text; (c = strstr(c, ", ")); c += 2)
    count++;
  teeny_param *p = teeny__calloc(count, sizeof *p);
  if (!p)
    return TEENY_E_NOMEM;
  const char *item = text;
  for (size_t i = 0; i < count; i++) {
    const char *end = strstr(item, ", ");
    size_t len = end ? (size_t)(end - item) : strlen(item);
    int rc = param_decode(item, len, &p[i]);
    if (rc) {
      teeny__params_free(p, count);
      return rc;
    }
    item = end ? end + 2 : item + len;
  }
  *out = p;
  *n = count;
  return TEENY_OK;
}

/* ---- rows ---------------------------------------------------------------- */

static char *col_dup(sqlite3_stmt *st, int i, bool *oom) {
  const unsigned char *t = sqlite3_column_text(st, i);
  char *d = teeny__strdup(t ? (const char *)t : "");
  if (!d)
    *oom = true;
  return d;
}

static void col_hex(sqlite3_stmt *st, int i, char out[65]) {
  const unsigned char *t = sqlite3_column_text(st, i);
  snprintf(out, 65, "%s", t ? (const char *)t : "");
}

static uint64_t col_u64(sqlite3_stmt *st, int i) {
  sqlite3_int64 v = sqlite3_column_int64(st, i);
  return v < 0 ? 0 : (uint64_t)v;
}

int teeny__store_row_from_stmt(sqlite3_stmt *st, teeny_store_rec *r,
                               bool *params_ok, char *err) {
  memset(r, 0, sizeof *r);
  bool oom = false;
  col_hex(st, 0, r->key);
  r->name = col_dup(st, 1, &oom);
  r->id = col_dup(st, 2, &oom);
  r->target = col_dup(st, 3, &oom);
  r->num_warps = sqlite3_column_int(st, 4);
  r->entry = col_dup(st, 5, &oom);
  int prc = teeny__store_params_decode((const char *)sqlite3_column_text(st, 6),
                                       &r->params, &r->nparams);
  r->threads_per_block = sqlite3_column_int(st, 7);
  r->shared_bytes = sqlite3_column_int(st, 8);
  r->ptx_size = col_u64(st, 9);
  r->mlir_size = col_u64(st, 10);
  r->src_size = col_u64(st, 11);
  col_hex(st, 12, r->ptx_sha256);
  col_hex(st, 13, r->mlir_sha256);
  col_hex(st, 14, r->src_sha256);
  r->created = sqlite3_column_int64(st, 15);
  r->last_used = sqlite3_column_int64(st, 16);
  r->hits = sqlite3_column_int64(st, 17);
  r->compile_ms = sqlite3_column_double(st, 18);
  r->compiler_version = col_dup(st, 19, &oom);
  if (sqlite3_column_count(st) > 21) { /* TEENY__STORE_CUBIN_COLS */
    r->ncubins = (uint32_t)col_u64(st, 20);
    r->cubin_bytes = col_u64(st, 21);
  }
  if (oom || prc == TEENY_E_NOMEM) {
    teeny_store_rec_close(r);
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  }
  /* A malformed params text leaves the row usable for list, show and
   * verify (params empty); the caller decides whether that is fatal. */
  if (params_ok)
    *params_ok = prc == TEENY_OK;
  return TEENY_OK;
}

int teeny__store_row_get(teeny_store *s, const char *key, teeny_store_rec *r,
                         char *err) {
  sqlite3_stmt *st = s->get_stmt;
  sqlite3_reset(st);
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  int sr = sqlite3_step(st);
  int rc;
  bool params_ok = true;
  if (sr == SQLITE_ROW) {
    rc = teeny__store_row_from_stmt(st, r, &params_ok, err);
    if (!rc && !params_ok) {
      teeny_store_rec_close(r);
      rc = teeny__store_fail(err, TEENY_E_CORRUPT,
                             "index row %s has malformed params", key);
    }
  } else if (sr == SQLITE_DONE)
    rc = teeny__store_fail(err, TEENY_E_NOTFOUND, "no entry with key %s", key);
  else
    rc = teeny__store_sqlerr(s, sr, "select", err);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc;
}

int teeny__store_row_insert(teeny_store *s, const teeny_store_rec *r,
                            char *err) {
  char *params;
  int rc = teeny__store_params_encode(r->params, r->nparams, &params, err);
  if (rc)
    return rc;
  sqlite3_stmt *st;
  rc = teeny__store_prepare(
      s,
      "INSERT INTO entries (" TEENY__STORE_ROW_COLS ") VALUES (?1, ?2, ?3, "
      "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20)",
      &st, err);
  if (rc) {
    teeny__free(params);
    return rc;
  }
  sqlite3_bind_text(st, 1, r->key, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, r->name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, r->id, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, r->target, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 5, r->num_warps);
  sqlite3_bind_text(st, 6, r->entry, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 7, params, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 8, r->threads_per_block);
  sqlite3_bind_int(st, 9, r->shared_bytes);
  sqlite3_bind_int64(st, 10, (sqlite3_int64)r->ptx_size);
  sqlite3_bind_int64(st, 11, (sqlite3_int64)r->mlir_size);
  sqlite3_bind_int64(st, 12, (sqlite3_int64)r->src_size);
  sqlite3_bind_text(st, 13, r->ptx_sha256, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 14, r->mlir_sha256, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 15, r->src_sha256, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 16, r->created);
  sqlite3_bind_int64(st, 17, r->last_used);
  sqlite3_bind_int64(st, 18, r->hits);
  sqlite3_bind_double(st, 19, r->compile_ms);
  sqlite3_bind_text(st, 20, r->compiler_version, -1, SQLITE_STATIC);
  int sr = sqlite3_step(st);
  rc = sr == SQLITE_DONE ? TEENY_OK : teeny__store_sqlerr(s, sr, "insert", err);
  sqlite3_finalize(st);
  teeny__free(params);
  return rc;
}

/* ---- records ------------------------------------------------------------- */

void teeny_store_rec_close(teeny_store_rec *r) {
  if (!r)
    return;
  teeny__free(r->name);
  teeny__free(r->id);
  teeny__free(r->target);
  teeny__free(r->entry);
  teeny__params_free(r->params, r->nparams);
  teeny__free(r->compiler_version);
  teeny__free(r->ptx);
  teeny__free(r->mlir);
  teeny__free(r->src);
  memset(r, 0, sizeof *r);
}

void teeny_store_recs_free(teeny_store_rec *v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    teeny_store_rec_close(&v[i]);
  teeny__free(v);
}
