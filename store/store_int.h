/*
 * store/store_int.h — what the store's files share and nothing outside
 * the .c files of store/ may use: the handle, and one section per file.
 *
 * Names: teeny__store_* for functions shared between the store's files;
 * statics are unprefixed.
 */
#ifndef TEENY_STORE_STORE_INT_H
#define TEENY_STORE_STORE_INT_H

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/common.h"
#include "store/store.h"

/* One pending use of a key (touch.c). */
typedef struct touch_slot {
  char key[TEENY_STORE_KEY_LEN + 1]; /* "" marks an empty slot */
  int64_t last_used;                 /* latest use, unix seconds */
  uint64_t hits;                     /* uses since the last flush */
} touch_slot;

struct teeny_store {
  char *root;                  /* resolved root path */
  int rootfd;                  /* O_DIRECTORY of the root */
  int objfd;                   /* O_DIRECTORY of root/objects */
  int tmpfd;                   /* O_DIRECTORY of root/tmp */
  int lockfd;                  /* root/daemon.lock while held, else -1 */
  sqlite3 *db;                 /* this handle's connection to index.db, or
                                  NULL (released: reopened at next use) */
  dev_t index_dev;             /* the index.db it opened: st_dev */
  ino_t index_ino;             /* ... st_ino (another file there: reopen) */
  bool index_damaged;          /* SQLite said corrupt / not a database */
  teeny_store_rebuild_report *heal; /* opts.heal: rebuild a damaged index */
  mode_t dir_mode;             /* mode of directories we create */
  mode_t file_mode;            /* mode of files we create */
  mode_t shard_mode;           /* mode of shard directories we create:
                                  objects/'s own unless dir_mode was given */
  bool shared;                 /* opts.shared (share.c) */
  bool chown_new;              /* shared, as root: what we create goes to
                                  owner_uid:owner_gid */
  uid_t owner_uid;             /* the root directory's owner */
  gid_t owner_gid;             /* ... and group */
  char *readonly;              /* why this handle may not write, or NULL */
  int busy_ms;                 /* busy timeout; <=0: none */
  bool sync_full;              /* synchronous=FULL always */
  int64_t (*clock)(void *ctx); /* unix seconds */
  void *clock_ctx;             /* its argument */
  teeny_store_test_hooks test; /* fault injection */
  uint64_t put_written;        /* bytes written by the current put (hooks) */
  sqlite3_stmt *get_stmt;      /* cached: SELECT row by key */
  touch_slot *touch;           /* open-addressing table of pending uses */
  size_t touch_cap;            /* slots (a power of two, or 0) */
  size_t touch_n;              /* used slots */
};

/* ---- store.c: errors, time, files ---------------------------------------- */

/* Write "fmt..." into err (if non-NULL, TEENY_STORE_ERR_LEN bytes); returns
 * code, so callers can `return teeny__store_fail(err, TEENY_E_IO, ...)`. */
int teeny__store_fail(char *err, int code, const char *fmt, ...)
    TEENY_PRINTF(3, 4);
/* TEENY_E_NOSPC for ENOSPC/EDQUOT, TEENY_E_NOMEM for ENOMEM, else IO. */
int teeny__store_errno_code(int e);
int64_t teeny__store_now(const teeny_store *s);
/* Open objects/{ab} (O_DIRECTORY|O_NOFOLLOW); with create, mkdir it first
 * if missing (and fsync objects/).  Returns the fd or a negative teeny_err
 * (TEENY_E_NOTFOUND when missing and !create, TEENY_E_STORE for a symlink
 * or non-directory). */
int teeny__store_open_shard(teeny_store *s, const char *key, bool create,
                            char *err);
/* Open dirfd/name (flags: O_RDONLY, or O_RDWR|O_CREAT with mode) without
 * following a link and without blocking: O_NONBLOCK makes the open of a
 * FIFO or device planted there return at once, and anything but a regular
 * file is then refused before any read.  Returns the fd (st filled), -1
 * with errno from openat (ELOOP: a symlink), or -2 when it is not a
 * regular file (st filled). */
int teeny__store_open_file(int dirfd, const char *name, int flags, mode_t mode,
                           struct stat *st);
/* The names in dirfd but "." and "..", copied (callers change the
 * directory meanwhile).  Free with teeny__store_names_free. */
int teeny__store_list_dir(int dirfd, char ***names, size_t *n, char *err);
void teeny__store_names_free(char **names, size_t n);
/* "{name}_{key}.{ext}" into out (>= 64 + TEENY_MAX_NAME_LEN + 8 bytes). */
void teeny__store_file_name(const char *name, const char *key, const char *ext,
                            char *out, size_t outsz);
#define TEENY__STORE_FNAME_MAX                                                 \
  (TEENY_MAX_NAME_LEN + TEENY_STORE_KEY_LEN + TEENY_STORE_ARCH_MAX + 16)
/* The three extensions, in the order ptx, mlir, src. */
extern const char *const teeny__store_exts[3];
/* unlinkat the three files of (name, key) and its cubins of archs (a
 * space-separated list, or NULL); true when none is left. */
bool teeny__store_unlink_files(teeny_store *s, const char *name,
                               const char *key, const char *archs);
/* "{name}_{key}.{arch}.cubin" into out (TEENY__STORE_FNAME_MAX bytes). */
void teeny__store_cubin_name(const char *name, const char *key,
                             const char *arch, char *out, size_t outsz);
/* Can this process unlink files in objects/{key[0..1]}?  True, or false
 * with why (TEENY_STORE_ERR_LEN bytes, may be NULL) filled. */
bool teeny__store_shard_removable(teeny_store *s, const char *key, char *why);

/* ---- put.c: temp files ---------------------------------------------- */

#define TEENY__STORE_TMP_MAX 128 /* "{key}.{ext}.{pid}-{16 hex}.tmp" */
/* Create tmp/{key}.{ext}.{pid}-{random}.tmp (O_EXCL, O_NOFOLLOW, the store's
 * mode and owner), write data and fsync it; its name goes into tmp.  On
 * failure tmp names what was created, if anything ("" else), for the
 * caller to unlink.  The put test hooks apply. */
int teeny__store_write_temp(teeny_store *s, const char *data, size_t len,
                            const char *key, const char *ext,
                            char tmp[TEENY__STORE_TMP_MAX], char *err);

/* ---- index.c: schema, transactions, rows --------------------------- */

/* Open index.db, set pragmas, migrate.  s->root and s->rootfd are set. */
int teeny__store_index_open(teeny_store *s, char *err);
void teeny__store_index_close(teeny_store *s);
/* Before every operation: (re)open the index if this handle released it
 * or if index.db is no longer the file it opened (a rebuild moved that
 * one aside).  0 or an open error. */
int teeny__store_index_fresh(teeny_store *s, char *err);
/* Map a SQLite result code to a teeny_err and describe it in err. */
int teeny__store_sqlerr(teeny_store *s, int rc, const char *what, char *err);
/* BEGIN IMMEDIATE, retrying SQLITE_BUSY until the busy timeout passes. */
int teeny__store_begin(teeny_store *s, char *err);
int teeny__store_commit(teeny_store *s, char *err);
void teeny__store_rollback(teeny_store *s);
/* Run sql (no results). */
int teeny__store_exec(teeny_store *s, const char *sql, char *err);
/* Prepare sql (single statement). */
int teeny__store_prepare(teeny_store *s, const char *sql, sqlite3_stmt **st,
                         char *err);
/* The columns every row query selects, in the order row_from_stmt reads. */
#define TEENY__STORE_ROW_COLS                                                  \
  "key, name, id, target, num_warps, entry, params, threads_per_block, "       \
  "shared_bytes, ptx_size, mlir_size, src_size, ptx_sha256, mlir_sha256, "     \
  "src_sha256, created, last_used, hits, compile_ms, compiler_version"
/* Appended to TEENY__STORE_ROW_COLS in selects from entries (never in the
 * insert): the entry's cubin count and bytes. */
#define TEENY__STORE_CUBIN_COLS                                                \
  "(SELECT count(*) FROM cubins c WHERE c.key = entries.key), "                \
  "(SELECT CAST(total(c.size) AS INTEGER) FROM cubins c "                     \
  "WHERE c.key = entries.key)"
/* Fill r (zeroed first) from the current row of st.  *params_ok (if
 * non-NULL) says whether the params text decoded; if not, r has none. */
int teeny__store_row_from_stmt(sqlite3_stmt *st, teeny_store_rec *r,
                               bool *params_ok, char *err);
/* Look key up: 0 and *r filled, TEENY_E_NOTFOUND, TEENY_E_CORRUPT (params
 * do not decode: a caller would launch with a wrong signature), or an
 * error. */
int teeny__store_row_get(teeny_store *s, const char *key, teeny_store_rec *r,
                         char *err);
/* Insert r as a new row (inside the caller's transaction). */
int teeny__store_row_insert(teeny_store *s, const teeny_store_rec *r,
                            char *err);
/* Encode params as "f32* a_ptr, i32 n" into *out (teeny__free it).
 * TEENY_E_INVAL for a name or dtype decode could not read back. */
int teeny__store_params_encode(const teeny_param *p, size_t n, char **out,
                               char *err);
/* Decode that text; TEENY_E_CORRUPT if malformed. */
int teeny__store_params_decode(const char *text, teeny_param **out, size_t *n);

/* ---- evict.c: removing rows, then files ---------------------------- */

/* One row chosen for removal. */
typedef struct teeny__store_victim {
  char key[TEENY_STORE_KEY_LEN + 1]; /* its key */
  char *name;                        /* its name (NULL if invalid) */
  char *archs;                       /* its cubins' archs, space-separated,
                                        or NULL */
  uint64_t bytes;                    /* its file bytes */
  bool deleted;                      /* its row was deleted (phase 1) */
} teeny__store_victim;

/* Delete the rows of keys[0..n) (those still present) durably, then unlink
 * their files unless a row for the key reappeared.  Adds what went to
 * removed (an entry whose files stay counts in removed->left). */
int teeny__store_drop(teeny_store *s, teeny__store_victim *v, size_t n,
                      teeny_store_counts *removed, char *err);
void teeny__store_victims_free(teeny__store_victim *v, size_t n);

/* ---- cubin.c --------------------------------------------------------- */

/* The archs of key's cubins, space-separated, in *out (teeny__free; NULL
 * when there are none).  0 or an error. */
int teeny__store_cubin_archs(teeny_store *s, const char *key, char **out,
                             char *err);
/* ---- heal.c: rebuilding a damaged index ---------------------------- */

/* Is this SQLite result a damaged index (corrupt, not a database)? */
bool teeny__store_is_damage(int sqlite_rc);

/* Is fname (in shard, two hex digits) "{name}_{key}.{ext}" for a key in
 * that shard?  Fills name (TEENY_MAX_NAME_LEN + 1), key (65) and *ext
 * (0 o, 1 mlir, 2 c, 3 cubin; may be NULL).  With arch
 * (TEENY_STORE_ARCH_MAX + 1) a cubin "{name}_{key}.{arch}.cubin" is one
 * too and arch is filled ("" for the others); without, cubins are not
 * objects.  verify.c and heal.c read the objects/ names with it. */
bool teeny__store_parse_object(const char *shard, const char *fname,
                               char *name, char *key, int *ext, char *arch);

/* ---- share.c: a store that belongs to someone else ------------------ */

/* After the root is open, before anything is created in it: record its
 * owner and decide what this handle may create (modes, chown, or
 * read-only).  0 or TEENY_E_NOMEM / an I/O error. */
int teeny__store_share_begin(teeny_store *s, char *err);
/* After objects/, tmp/ and index.db are open: a group member's handle
 * turns read-only unless they are all shared with the group. */
int teeny__store_share_finish(teeny_store *s, char *err);
/* Give what fd names (just created by us) to the store's owner, if this
 * handle does that (root, shared). */
void teeny__store_share_adopt(const teeny_store *s, int fd);
/* May a put go into shard directory shardfd (objects/{key[0..1]})?  0, or
 * TEENY_E_PERM when the owner could not manage it afterwards (root gives
 * the directory back to the owner instead). */
int teeny__store_share_shard(const teeny_store *s, int shardfd, const char *key,
                             char *err);

/* ---- touch.c ------------------------------------------------------- */

void teeny__store_touch_free(teeny_store *s);

#endif /* TEENY_STORE_STORE_INT_H */
