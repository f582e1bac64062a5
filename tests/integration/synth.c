/*
 * tests/integration/synth.c — synthetic index rows (see synth.h).  Test
 * code: one prepared INSERT in one transaction; the index's triggers keep
 * entries, bytes and hits right.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "tests/integration/synth.h"

/* 64 hex digits from (name, i): distinct per row, spread over shards. */
void synth_key(const char *name, long i, char out[65]) {
  unsigned long long h = 1469598103934665603ull;
  for (const char *p = name; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  unsigned long long a = (h ^ (unsigned long long)i) * 0x9e3779b97f4a7c15ull;
  unsigned long long b = a * 0xc2b2ae3d27d4eb4full + (unsigned long long)i;
  snprintf(out, 65, "%016llx%016llx%016llx%016llx", a, b, a ^ b,
           (unsigned long long)i);
}

static const char insert_sql[] =
    "INSERT INTO entries (key, name, id, target, num_warps, entry, params,"
    " threads_per_block, shared_bytes, ptx_size, mlir_size, src_size,"
    " ptx_sha256, mlir_sha256, src_sha256, created, last_used, hits,"
    " compile_ms, compiler_version) VALUES (?1, ?2, ?3, 'sm_90a', 4, ?4,"
    " 'f32* x_ptr, i32 n', 128, 0, ?5, ?6, ?7, ?8, ?13, ?14, ?9, ?10, ?11,"
    " ?12, '0.1.0')";

/* The three files of a row, when wanted: sizes and hashes. */
typedef struct files {
  bool write;            /* write them (synth_rows_files) */
  const char *cache;     /* where */
  size_t size[3];        /* .o .mlir .c */
  char sha[3][65];       /* their SHA-256 */
} files;

static const char *const exts[3] = {"o", "mlir", "c"};

static int write_files(files *f, const char *name, const char *key) {
  static char fill[2048];
  static const size_t sizes[3] = {2048, 512, 1024};
  char dir[600], path[800];
  snprintf(dir, sizeof dir, "%s/objects/%.2s", f->cache, key);
  if (mkdir(dir, 0750) && errno != EEXIST)
    return -1;
  for (int e = 0; e < 3; e++) {
    int n = snprintf(fill, sizeof fill, "// %s %s.%s\n", name, key, exts[e]);
    memset(fill + n, 'x', sizeof fill - (size_t)n);
    snprintf(path, sizeof path, "%s/%s_%s.%s", dir, name, key, exts[e]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    if (fd < 0 || write(fd, fill, sizes[e]) != (ssize_t)sizes[e]) {
      if (fd >= 0)
        close(fd);
      return -1;
    }
    close(fd);
    f->size[e] = sizes[e];
    if (teeny__sha256_hex(fill, sizes[e], f->sha[e]))
      return -1;
  }
  return 0;
}

static int bind_row(sqlite3_stmt *st, const char *name, long i, int id_len,
                    time_t now, files *f) {
  char key[65], id[512], entry[160];
  synth_key(name, i, key);
  if (f->write && write_files(f, name, key))
    return -1;
  int n = snprintf(id, sizeof id, "%s__%ld", name, i);
  while (n > 0 && n + 6 <= id_len && n + 6 < (int)sizeof id)
    n += snprintf(id + n, sizeof id - (size_t)n, "__1024");
  snprintf(entry, sizeof entry, "%s_entry_point", name);
  sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, entry, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 5, f->write ? (long)f->size[0] : 4000 + (i * 7919) % 60000);
  sqlite3_bind_int64(st, 6, f->write ? (long)f->size[1] : 1000 + (i * 104729) % 9000);
  sqlite3_bind_int64(st, 7, f->write ? (long)f->size[2] : 1500 + (i * 1299709) % 7000);
  sqlite3_bind_text(st, 8, f->write ? f->sha[0] : key, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 13, f->write ? f->sha[1] : key, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 14, f->write ? f->sha[2] : key, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 9, (sqlite3_int64)now - 86400 + (i * 31) % 86400);
  sqlite3_bind_int64(st, 10, (sqlite3_int64)now - (i * 17) % 86400);
  sqlite3_bind_int64(st, 11, (i * 13) % 1000);
  sqlite3_bind_double(st, 12, (double)(i % 500) / 7.0);
  int sr = sqlite3_step(st);
  sqlite3_reset(st);
  return sr == SQLITE_DONE ? 0 : -1;
}

static int synth(const char *cache, const char *name, long n, int id_len,
                 bool with_files) {
  char path[512];
  snprintf(path, sizeof path, "%s/index.db", cache);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int rc = -1;
  time_t now = time(NULL);
  files f = {.write = with_files, .cache = cache};
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      sqlite3_exec(db,
                   "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                   " PRAGMA cache_size = -262144; BEGIN",
                   NULL, NULL, NULL) ||
      sqlite3_prepare_v2(db, insert_sql, -1, &st, NULL) != SQLITE_OK)
    goto done;
  for (long i = 0; i < n; i++)
    if (bind_row(st, name, i, id_len, now, &f))
      goto done;
  rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) ? -1 : 0;
done:
  if (rc)
    fprintf(stderr, "synth_rows %s: %s\n", path, db ? sqlite3_errmsg(db) : "?");
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rc;
}

int synth_rows(const char *cache, const char *name, long n, int id_len) {
  return synth(cache, name, n, id_len, false);
}

int synth_rows_files(const char *cache, const char *name, long n) {
  return synth(cache, name, n, 0, true);
}
