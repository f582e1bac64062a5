/*
 * store/store.h — the artifact store: content-addressed files indexed by
 * SQLite.  Linked (as the static library teeny_store) by teenycd and by the
 * client's embedded mode, which may use one store from several processes at
 * once.
 *
 * On disk, under a root directory:
 *
 *   objects/ab/{name}_{key}.o     PTX text          (ab = key[0..1])
 *   objects/ab/{name}_{key}.mlir  tile IR as MLIR   (may be empty)
 *   objects/ab/{name}_{key}.c     generated source
 *   objects/ab/{name}_{key}.{arch}.cubin  SASS of the PTX for one GPU
 *                                 architecture (cubin.c), made in the
 *                                 background after the entry
 *   index.db                      SQLite, WAL; one row per stored key
 *                                 (entries), per cubin (cubins) and per
 *                                 tuned problem (tuned)
 *   tmp/                          temp files of puts in progress
 *                                 ({key}.{ext}.{pid}-{random}.tmp)
 *   daemon.lock                   flock()ed by the one teenycd using the root
 *
 * Invariant: the index never names a missing or partial file.  Files reach
 * objects/ only by rename from a fsynced temp file; the row is inserted after
 * the rename and the fsync of the shard directory, so the row is the commit
 * point.  A crash before the row leaves orphan files that
 * teeny_store_verify(repair) removes.  Removal is the mirror image: the row
 * is deleted (durably, synchronous=FULL) before the files are unlinked.
 *
 * Nothing inside the root follows a symlink: every file and directory is
 * opened with openat(..., O_NOFOLLOW) relative to directory descriptors taken
 * at open time, and names are validated before any path is built.  The one
 * path-based open is SQLite's, of root/index.db, with SQLITE_OPEN_NOFOLLOW
 * after checking that it and its -wal/-shm files are regular files.  The
 * root path itself (and its parents) is trusted; the root must not be a
 * symlink.
 *
 * Threads: a teeny_store handle (one SQLite connection, one touch batch) is
 * used by one thread at a time.  The daemon either serialises its calls (one
 * handle behind its own lock, or only on one thread) or opens one handle per
 * worker thread; handles on one root, in one process or many, coordinate
 * through SQLite's locks and atomic renames.  There is no global state.
 *
 * Errors: every function that can fail returns 0 or a negative teeny_err and
 * writes one line of detail into err (a caller buffer of
 * TEENY_STORE_ERR_LEN bytes, or NULL).
 */
#ifndef TEENY_STORE_STORE_H
#define TEENY_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "teeny/compile.h"
#include "teeny/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TEENY_STORE_ERR_LEN 256      /* size of every err sink */
#define TEENY_STORE_SCHEMA_VERSION 3 /* PRAGMA user_version we write */
#define TEENY_STORE_KEY_LEN 64       /* hex digits in a key */
#define TEENY_STORE_DEFAULT_ROOT TEENY_SYSTEM_STORE

typedef struct teeny_store teeny_store;

/* ---- root resolution and names (pure functions) -------------------------- */

/* The store root: explicit_root if non-empty, else cache_dir_env
 * ($TEENYC_CACHE_DIR) if non-empty, else xdg_cache_env ($XDG_CACHE_HOME)
 * + "/teenyc" if it is an absolute path (the XDG spec says to ignore
 * relative ones), else TEENY_STORE_DEFAULT_ROOT.  Trailing slashes are
 * removed ("/" stays "/").  Writes a NUL-terminated path into out.  Returns
 * 0, or TEENY_E_LIMIT if it does not fit in outsz bytes. */
int teeny_store_root_resolve(const char *explicit_root,
                             const char *cache_dir_env,
                             const char *xdg_cache_env, char *out,
                             size_t outsz);
/* The same with the two variables read from the environment (getenv). */
int teeny_store_root_from_env(const char *explicit_root, char *out,
                              size_t outsz);

/* 0 if name[0..len) is a C identifier of 1..TEENY_MAX_NAME_LEN characters
 * ([A-Za-z_][A-Za-z0-9_]*, so no NUL, '/', '.'); else TEENY_E_NAME. */
int teeny_store_name_check(const char *name, size_t len);
/* 0 if key is exactly 64 lowercase hex digits; else TEENY_E_INVAL. */
int teeny_store_key_check(const char *key);
/* "ab/{name}_{key}.{ext}" relative to objects/, for ext "o", "mlir" or "c".
 * Checks name (length-aware) and key first; returns TEENY_E_NAME,
 * TEENY_E_INVAL or TEENY_E_LIMIT (out too small) without writing a path. */
int teeny_store_object_path(const char *name, size_t name_len, const char *key,
                            const char *ext, char *out, size_t outsz);

/* ---- opening ------------------------------------------------------------- */

/* Test-only hooks; all zero in production. */
typedef struct teeny_store_test_hooks {
  bool fail_write;           /* inject a write failure into every put */
  uint64_t fail_write_after; /* ... once this many bytes of the put's files
                                are written (counted over all three) */
  int fail_write_errno;      /* errno of the injected failure; 0: ENOSPC */
  bool crash_before_row;     /* put stops after renaming the files into
                                objects/, as if the process died there:
                                no row, files left as orphans; returns
                                TEENY_E_IO */
  void (*between_phases)(void *ctx); /* called by removals after the rows
                                        are deleted, before any unlink */
  void *ctx;                         /* argument of between_phases */
} teeny_store_test_hooks;

/* What teeny_store_rebuild_index did. */
typedef struct teeny_store_rebuild_report {
  uint64_t rows;    /* entries rebuilt from objects/ */
  uint64_t skipped; /* object triples that failed their checks (left as
                       orphans for verify --repair) */
  char moved[128];  /* the damaged index's new name in the root */
  char error[TEENY_STORE_ERR_LEN]; /* why the walk stopped early ("" if it
                                      did not: the index has what it got) */
} teeny_store_rebuild_report;

typedef struct teeny_store_opts {
  const char *root;    /* NULL or "": teeny_store_root_from_env(NULL) */
  unsigned dir_mode;   /* mode of directories we create; 0: 0755 */
  unsigned file_mode;  /* mode of files we create; 0: 0644 */
  int busy_timeout_ms; /* wait for other writers; 0: 5000, <0: no wait */
  bool sync_full;      /* synchronous=FULL for every commit (default:
                          NORMAL, and FULL only for deletions) */
  int64_t (*clock)(void *ctx); /* unix seconds; NULL: time(NULL) */
  void *clock_ctx;             /* passed to clock */
  bool shared;         /* embedded use of a store that may belong to
                          someone else (store/share.c): create only what
                          the store's owner can still manage, else write
                          nothing (teeny_store_readonly says why) */
  teeny_store_test_hooks test; /* fault injection for tests */
  teeny_store_rebuild_report *heal; /* non-NULL (teenycd): an index.db
                                       that SQLite finds damaged at open is
                                       rebuilt (teeny_store_rebuild_index)
                                       and this says how; rows == 0 and
                                       moved "" when it was not */
} teeny_store_opts;

/* Open the store at opts->root (opts may be NULL: all defaults), creating
 * the root (and missing parents), objects/, tmp/ and index.db as needed,
 * and migrating the index to TEENY_STORE_SCHEMA_VERSION.  Refuses a root,
 * objects/ or tmp/ that is a symlink or not a directory (TEENY_E_STORE), and
 * an index written by a newer schema (TEENY_E_STORE).  Modes with bits
 * outside 0777 (directories) or 0666 (files) are TEENY_E_INVAL.  On success
 * *out owns a new handle; on failure *out is NULL. */
int teeny_store_create(const teeny_store_opts *opts, teeny_store **out,
                       char *err);
/* Flush pending touches (best effort), release the daemon lock if held,
 * close everything.  NULL is a no-op. */
void teeny_store_destroy(teeny_store *s);

const char *teeny_store_root(const teeny_store *s); /* the resolved root */
/* NULL when this handle may write; else one line saying why it may not (a
 * shared handle on a store whose owner could not manage what it would
 * create).  A read-only handle's puts fail with TEENY_E_PERM and that
 * line, touches are dropped; gets, lists and verify work. */
const char *teeny_store_readonly(const teeny_store *s);
/* The index's PRAGMA user_version, or a negative teeny_err. */
int teeny_store_schema_version(teeny_store *s);

/* ---- the index itself ---------------------------------------------------- */

/* Close this handle's connection to index.db; the next operation opens it
 * again (pending touches are kept for it).  Every operation also reopens
 * the index when index.db is no longer the file it opened, so handles here
 * and in other processes follow a rebuild. */
void teeny_store_index_release(teeny_store *s);
/* Has SQLite reported index.db corrupt (or not a database) to this handle
 * since it opened it? */
bool teeny_store_index_damaged(const teeny_store *s);
/* Move a damaged index.db (and its -wal and -shm) aside, as
 * index.db.damaged-{time}-{pid}, and rebuild it from objects/: every
 * object triple whose generated source hashes to its key and whose other
 * files check out becomes a row again (store/heal.c); the rest stay as
 * orphans.  No other handle of this process may use the index meanwhile
 * (release them first).  Without lock_held (the caller's process holds the
 * daemon lock) it takes the daemon lock for the rebuild: TEENY_E_BUSY if a
 * daemon holds it.  0 once the fresh index is in place (r says what went
 * in); an error if the damaged one could not be moved or the new one not
 * made. */
int teeny_store_rebuild_index(teeny_store *s, bool lock_held,
                              teeny_store_rebuild_report *r, char *err);

/* ---- the daemon lock ----------------------------------------------------- */

/* Take root/daemon.lock (flock, exclusive, non-blocking) and write our pid
 * into it.  Returns 0 (also if this handle already holds it), or
 * TEENY_E_BUSY with "... in use by another teenycd (pid N)" in err if
 * another handle, in this process or another, holds it.  Embedded clients
 * never call this.  Held until teeny_store_unlock_daemon or destroy. */
int teeny_store_lock_daemon(teeny_store *s, char *err);
void teeny_store_unlock_daemon(teeny_store *s); /* no-op if not held */

/* ---- records ------------------------------------------------------------- */

/* One index row, optionally with file contents.  Owns every pointer;
 * zero-initialise (or let a store call fill it), then teeny_store_rec_close. */
typedef struct teeny_store_rec {
  char key[TEENY_STORE_KEY_LEN + 1]; /* sha256 of the generated source */
  char *name;                        /* kernel name (a C identifier) */
  char *id;                          /* artifact id, name__dtypes__consts */
  char *target;                      /* e.g. "sm_90a" */
  int num_warps;                     /* warps per block */
  char *entry;                       /* entry symbol in the PTX */
  teeny_param *params;               /* entry point parameters, decoded */
  size_t nparams;                    /* how many */
  int threads_per_block;             /* 32 * num_warps */
  int shared_bytes;                  /* dynamic shared memory of a launch */
  uint64_t ptx_size;                 /* bytes of the .o file */
  uint64_t mlir_size;                /* bytes of the .mlir file */
  uint64_t src_size;                 /* bytes of the .c file */
  char ptx_sha256[TEENY_STORE_KEY_LEN + 1];  /* hex of the .o file */
  char mlir_sha256[TEENY_STORE_KEY_LEN + 1]; /* hex of the .mlir file */
  char src_sha256[TEENY_STORE_KEY_LEN + 1];  /* hex of the .c file */
  int64_t created;                           /* unix seconds of the put */
  int64_t last_used;      /* unix seconds of the last flushed touch */
  int64_t hits;           /* flushed touches */
  uint32_t ncubins;       /* cubins stored for this key (list, show) */
  uint64_t cubin_bytes;   /* their bytes */
  double compile_ms;      /* compile wall time */
  char *compiler_version; /* teenyc version that compiled it */
  char *ptx;              /* .o contents (NUL-terminated) or NULL */
  char *mlir;             /* .mlir contents (NUL-terminated) or NULL */
  char *src;              /* .c contents (NUL-terminated) or NULL */
} teeny_store_rec;

/* Free everything r owns and zero it; r may be reused.  NULL is a no-op. */
void teeny_store_rec_close(teeny_store_rec *r);
/* Close n records and free the array (as returned by teeny_store_list). */
void teeny_store_recs_free(teeny_store_rec *v, size_t n);

/* ---- put and get --------------------------------------------------------- */

/* Store a's three artifacts (a->ptx and a->source required; a->mlir may be
 * NULL and is stored as an empty file) under a->key, following the commit
 * protocol above.  compiler_version NULL means TEENY_VERSION_STRING.
 * If the key is already stored (perhaps by another process, perhaps while
 * we wrote our files) that is success: nothing is changed and out gets the
 * existing row.  *created (if non-NULL) says whether this call added the
 * row.  out (may be NULL) gets the row without file contents.
 * Errors: TEENY_E_NAME (bad a->name, checked before anything touches the
 * disk), TEENY_E_INVAL (bad key, missing field), TEENY_E_NOSPC (ENOSPC or
 * EDQUOT while writing, or SQLITE_FULL; temp files are removed),
 * TEENY_E_PERM (EACCES/EPERM), TEENY_E_IO (any other errno), TEENY_E_BUSY
 * (index locked past the busy timeout), TEENY_E_STORE (e.g. objects/ab is a
 * symlink: refused, never followed), TEENY_E_NOMEM.  No row is added on any
 * error. */
int teeny_store_put(teeny_store *s, const teeny_artifact *a,
                    const char *compiler_version, teeny_store_rec *out,
                    bool *created, char *err);

enum {
  TEENY_STORE_GET_PTX = 1u << 0,   /* read the .o file into rec->ptx */
  TEENY_STORE_GET_MLIR = 1u << 1,  /* read the .mlir file */
  TEENY_STORE_GET_SRC = 1u << 2,   /* read the .c file */
  TEENY_STORE_GET_ALL = 7u,        /* all three */
  TEENY_STORE_GET_VERIFY = 1u << 3 /* also re-hash what was read */
};

/* The GET flags that read the artifacts an emit mask names: TEENY_EMIT_PTX,
 * TEENY_EMIT_MLIR (compile.h) and src_bit, the caller's bit for the
 * generated source (the protocol's and the client's emit bit 8). */
unsigned teeny_store_get_for_emit(unsigned emit, unsigned src_bit);

/* Look key up and read the files named by what (TEENY_STORE_GET_*; 0 reads
 * the row only).  Every file read is checked against the row's size (and
 * sha256 with GET_VERIFY); a missing, non-regular, short or mismatching
 * file is TEENY_E_CORRUPT and out is left empty, never half-filled.  A row
 * removed concurrently (evicted between the row read and the file open) is
 * TEENY_E_NOTFOUND.  Does not count as a use: call teeny_store_touch.
 * Errors: TEENY_E_INVAL (bad key), TEENY_E_NOTFOUND, TEENY_E_CORRUPT,
 * TEENY_E_IO, TEENY_E_BUSY, TEENY_E_NOMEM. */
int teeny_store_get(teeny_store *s, const char *key, unsigned what,
                    teeny_store_rec *out, char *err);

/* ---- last-used batching -------------------------------------------------- */

/* Record a use of key now (the store's clock): in memory only, O(1), no
 * I/O (a read-only handle records nothing).  Pending uses of one key merge (hits add up, last_used is the
 * latest).  Returns TEENY_E_INVAL for a bad key, TEENY_E_NOMEM. */
int teeny_store_touch(teeny_store *s, const char *key);
/* Write every pending use in one transaction (hits += n, last_used =
 * max(old, new)); rows since deleted are skipped.  On failure the pending
 * uses are kept for the next flush.  The daemon calls this every few
 * seconds and at shutdown; destroy does it too. */
int teeny_store_flush(teeny_store *s, char *err);
size_t teeny_store_pending(const teeny_store *s); /* distinct keys pending */

/* ---- eviction, purge, stats ---------------------------------------------- */

typedef struct teeny_store_counts {
  uint64_t entries; /* entries removed, row and files */
  uint64_t bytes;   /* file bytes of those entries */
  uint64_t left;    /* entries chosen but not removed: their shard
                       directory is not writable here (the row is kept), or
                       a file would not unlink (the row went: verify sees
                       orphans); err says why for the first */
} teeny_store_counts;

/* Flush this handle's touches, then delete least recently used rows
 * (last_used, then key) until the stored total is <= max_bytes, then their
 * files.  removed (may be NULL) gets what went. */
int teeny_store_evict_to(teeny_store *s, uint64_t max_bytes,
                         teeny_store_counts *removed, char *err);

typedef struct teeny_store_purge_req {
  bool all;              /* every entry (the other filters are ignored) */
  const char *name_glob; /* entries whose name matches (SQLite GLOB) */
  int64_t older_than_s;  /* > 0: entries unused for more than this */
  bool to_size;          /* afterwards evict down to max_bytes */
  uint64_t max_bytes;    /* the cap for to_size */
  void (*on_removed)(void *ctx, const char *key); /* each key removed, after
                                                      its row is gone; or NULL */
  void *removed_ctx;     /* its argument */
} teeny_store_purge_req;

/* Delete the entries chosen by req: all; or those matching every filter
 * given (name_glob, older_than_s); then, with to_size, LRU entries down to
 * max_bytes.  Counts say what went; an entry whose files cannot be
 * removed is not counted as removed (removed->left).  A request with no filter at all is TEENY_E_INVAL (so an empty
 * request never empties the store). */
int teeny_store_purge(teeny_store *s, const teeny_store_purge_req *req,
                      teeny_store_counts *removed, char *err);

/* Delete the entry of key (its row, then its files: the same two phases).
 * TEENY_E_NOTFOUND if there is none, TEENY_E_PERM if its files cannot be
 * removed here (the row is kept, or the files stay as orphans).  The daemon uses it to drop an entry
 * that failed its checks on a lookup, without a whole-store verify. */
int teeny_store_remove(teeny_store *s, const char *key,
                       teeny_store_counts *removed, char *err);

typedef struct teeny_store_stats {
  uint64_t entries; /* rows in the index */
  uint64_t bytes;   /* sum of their three file sizes and of every cubin */
  uint64_t cubins;  /* cubin rows */
  uint64_t cubin_bytes; /* their sizes (also counted in bytes) */
  uint64_t tuned;   /* tuning records */
  uint64_t hits;    /* sum of flushed hits */
  size_t pending;   /* touches of this handle not yet flushed */
} teeny_store_stats;

/* entries, bytes, cubins and cubin_bytes come from counters kept by
 * triggers (O(1)); tuned is a count over its small table. */
int teeny_store_stats_get(teeny_store *s, teeny_store_stats *out, char *err);

/* ---- list and show ------------------------------------------------------- */

typedef enum teeny_store_sort {
  TEENY_STORE_SORT_USED, /* last_used, newest first */
  TEENY_STORE_SORT_SIZE, /* total file bytes, largest first */
  TEENY_STORE_SORT_HITS  /* hits, most first */
} teeny_store_sort;

#define TEENY_STORE_CURSOR_LEN 96 /* bytes of a list cursor, NUL included */

typedef struct teeny_store_query {
  const char *name_glob; /* NULL: every name; else SQLite GLOB on name */
  size_t limit;          /* 0: no limit */
  teeny_store_sort sort; /* order of the result (ties: key, descending) */
  const char *after;     /* NULL, or a cursor a previous page returned in
                            next: the rows after that page's last */
} teeny_store_query;

/* Rows (no file contents) matching q (NULL: all, by last use).  On success
 * *out is a new array of *n records (free with teeny_store_recs_free; NULL
 * when *n is 0).  Every order is an index range read, so a page of 20 costs
 * the same at 10^6 entries as at 10; paging by cursor (not offset) keeps
 * each page that cheap however deep.  next (may be NULL) gets the cursor
 * of the page's last row when more rows follow it, else "".  A cursor of
 * another sort, or not a cursor, is TEENY_E_INVAL. */
int teeny_store_list_page(teeny_store *s, const teeny_store_query *q,
                          teeny_store_rec **out, size_t *n,
                          char next[TEENY_STORE_CURSOR_LEN], char *err);
/* The same without the next cursor. */
int teeny_store_list(teeny_store *s, const teeny_store_query *q,
                     teeny_store_rec **out, size_t *n, char *err);

#define TEENY_STORE_MAX_CANDIDATES 16

typedef struct teeny_store_keys {
  char (*v)[TEENY_STORE_KEY_LEN + 1]; /* matching keys, sorted */
  size_t n;                           /* how many in v */
  bool more;                          /* more matched than are listed */
} teeny_store_keys;

void teeny_store_keys_close(teeny_store_keys *k); /* NULL is a no-op */

/* The row whose key starts with prefix (4..64 hex digits, either case).
 * TEENY_E_INVAL for a bad prefix; TEENY_E_NOTFOUND if none; if several
 * match, TEENY_E_AMBIGUOUS with up to TEENY_STORE_MAX_CANDIDATES of them in
 * candidates (if non-NULL; close it) and in err.  out gets the row without
 * contents. */
int teeny_store_show(teeny_store *s, const char *prefix, teeny_store_rec *out,
                     teeny_store_keys *candidates, char *err);

/* ---- verify -------------------------------------------------------------- */

typedef enum teeny_store_problem_kind {
  TEENY_STORE_PROB_MISSING, /* a row's file does not exist */
  TEENY_STORE_PROB_NOTREG,  /* a symlink or other non-regular file (or a
                               non-directory shard) where we expect one */
  TEENY_STORE_PROB_SIZE,    /* file size differs from the row */
  TEENY_STORE_PROB_HASH,    /* file sha256 differs from the row */
  TEENY_STORE_PROB_BADROW,  /* a row with a bad name, key or params */
  TEENY_STORE_PROB_ORPHAN,  /* a file in objects/ named by no row */
  TEENY_STORE_PROB_TMP,     /* a stale file in tmp/ */
  TEENY_STORE_PROB_COUNTERS, /* entries/bytes counters differ from the rows */
  TEENY_STORE_PROB_INDEX    /* index.db itself is damaged (quick_check): the
                               rows were not checked; teenycd rebuilds it */
} teeny_store_problem_kind;

typedef struct teeny_store_problem {
  teeny_store_problem_kind kind;     /* what is wrong */
  char key[TEENY_STORE_KEY_LEN + 1]; /* the row's key ("" if none) */
  char *path;    /* relative to the root, e.g. "objects/ab/x_ab...o" */
  char *detail;  /* one line for humans */
  bool repaired; /* repair fixed it (row dropped / file removed) */
} teeny_store_problem;

typedef struct teeny_store_problems {
  teeny_store_problem *v; /* in the order found */
  size_t n;               /* how many */
  size_t cap;             /* allocated slots */
} teeny_store_problems;

void teeny_store_problems_init(teeny_store_problems *p);
void teeny_store_problems_close(teeny_store_problems *p); /* reusable */
/* The kind as a lowercase word ("missing", "orphan", ...). */
const char *teeny_store_problem_name(teeny_store_problem_kind k);

typedef struct teeny_store_verify_opts {
  bool repair;         /* drop bad rows (and their files), remove orphans
                          and stale temp files, fix the counters */
  int64_t tmp_grace_s; /* temp files younger than this are a put in
                          progress, not stale; 0: 3600; <0: every temp
                          file is stale (only when no put can run) */
} teeny_store_verify_opts;

/* Check every row's three files (exist, regular, size, sha256), every
 * cubin row's file the same way, every file under objects/ (named by a
 * row?) and tmp/, and the counters.  A bad cubin is a problem of its own
 * (key "KEY/ARCH"); repair drops just that cubin, not its entry.  Problems
 * are appended to out (init it first).  Returns 0 when the walk completed,
 * whatever it found; an error only when it could not walk. */
int teeny_store_verify(teeny_store *s, const teeny_store_verify_opts *o,
                       teeny_store_problems *out, char *err);

/* ---- cubins (cubin.c) ---------------------------------------------------- */

/* A cubin is the SASS of one entry's PTX for one GPU architecture ("sm_90":
 * the compute capability of the GPU that runs it), made by one toolchain
 * ("driver 580.65.06", "ptxas 13.0.88").  One per (key, arch): a newer
 * toolchain's replaces it.  Its file is objects/ab/{name}_{key}.{arch}.cubin
 * under the same commit protocol as the entry's files; its row is removed
 * with the entry (a trigger), and its bytes count towards the size cap and
 * the entry's LRU weight. */

#define TEENY_STORE_ARCH_MAX 15      /* "sm_100a" and friends fit */
#define TEENY_STORE_TOOLCHAIN_MAX 64 /* bytes of a toolchain string */

typedef struct teeny_store_cubin {
  char key[TEENY_STORE_KEY_LEN + 1];   /* the entry's key */
  char arch[TEENY_STORE_ARCH_MAX + 1]; /* "sm_90" */
  char *toolchain;                     /* what made it */
  uint64_t size;                       /* bytes of the file */
  char sha256[TEENY_STORE_KEY_LEN + 1];/* hex of the file */
  int64_t created;                     /* unix seconds of the put */
  double sass_ms;                      /* how long making it took */
  char *data;                          /* the file (get with read), or NULL */
} teeny_store_cubin;

/* 0 if arch is "sm_" + 2 or 3 digits + an optional 'a' or 'f' (at most
 * TEENY_STORE_ARCH_MAX bytes); else TEENY_E_INVAL. */
int teeny_store_arch_check(const char *arch);
/* 0 if tc is 1..TEENY_STORE_TOOLCHAIN_MAX printable ASCII bytes. */
int teeny_store_toolchain_check(const char *tc);

/* Store data[0..len) as the cubin of key for arch, made by toolchain in
 * sass_ms.  The entry must exist (TEENY_E_NOTFOUND otherwise: it was
 * evicted meanwhile; nothing is written).  The same bytes already stored
 * are success with nothing changed; other bytes replace the stored cubin
 * (*replaced says so; the rename of the new file and the row are one
 * transaction, and a crash between them leaves a file whose hash differs
 * from the old row: found by get and verify, then made again).  Errors as
 * teeny_store_put, plus TEENY_E_INVAL for a bad arch or toolchain. */
int teeny_store_cubin_put(teeny_store *s, const char *key, const char *arch,
                          const char *toolchain, const void *data, size_t len,
                          double sass_ms, bool *replaced, char *err);
/* The cubin row of (key, arch); with read, also its file, checked against
 * the row's size and sha256 (TEENY_E_CORRUPT on any difference; out is
 * then empty).  TEENY_E_NOTFOUND if there is none.  Close out. */
int teeny_store_cubin_get(teeny_store *s, const char *key, const char *arch,
                          bool read, teeny_store_cubin *out, char *err);
/* Drop the cubin of (key, arch): the row, durably, then the file.
 * TEENY_E_NOTFOUND if there is none. */
int teeny_store_cubin_remove(teeny_store *s, const char *key, const char *arch,
                             char *err);
/* Every cubin row of key (no data), by arch.  *out is a new array of *n
 * (free with teeny_store_cubins_free; NULL when *n is 0). */
int teeny_store_cubin_list(teeny_store *s, const char *key,
                           teeny_store_cubin **out, size_t *n, char *err);
void teeny_store_cubin_close(teeny_store_cubin *c); /* NULL is a no-op */
void teeny_store_cubins_free(teeny_store_cubin *v, size_t n);

/* ---- tuning records (tuned.c) ---------------------------------------------- */

/* The winner of one autotuning run: for the kernel with digest (a sha256
 * the client computes over the kernel's source, name and dtype bindings),
 * the problem key (the sizes that decide the choice, as text), the GPU's
 * name and its driver, the configuration that was fastest (text, as the
 * protocol spells it: "BLOCK_M=128 BLOCK_N=256 num_warps=8"), its median
 * time and how many candidates were timed.  Small rows, kept until purged. */

#define TEENY_STORE_TUNED_TEXT_MAX 4096 /* problem, gpu, driver, config */

typedef struct teeny_store_tuned {
  char digest[TEENY_STORE_KEY_LEN + 1]; /* the kernel's digest */
  char *kernel;       /* its name (for people and purge globs) */
  char *problem;      /* "M=4096 N=4096 K=4096" */
  char *gpu;          /* "NVIDIA H200" */
  char *driver;       /* "580.65.06" */
  char *config;       /* the winner */
  double best_ms;     /* its median time */
  uint32_t candidates;/* configurations timed */
  int64_t created;    /* unix seconds of the put */
} teeny_store_tuned;

/* The record of (digest, problem, gpu, driver): 0, TEENY_E_NOTFOUND, or an
 * error.  Close out. */
int teeny_store_tuned_get(teeny_store *s, const char *digest,
                          const char *problem, const char *gpu,
                          const char *driver, teeny_store_tuned *out, char *err);
/* Insert or replace t (created is set to now).  TEENY_E_INVAL for a bad
 * digest or name, or a text over TEENY_STORE_TUNED_TEXT_MAX. */
int teeny_store_tuned_put(teeny_store *s, const teeny_store_tuned *t, char *err);
/* Records whose kernel name matches kernel_glob (NULL: all), newest
 * first.  Free with teeny_store_tuneds_free. */
int teeny_store_tuned_list(teeny_store *s, const char *kernel_glob,
                           teeny_store_tuned **out, size_t *n, char *err);
/* Delete every record (all) or those whose kernel matches kernel_glob;
 * *removed (may be NULL) counts them.  Neither given: TEENY_E_INVAL. */
int teeny_store_tuned_purge(teeny_store *s, bool all, const char *kernel_glob,
                            uint64_t *removed, char *err);
void teeny_store_tuned_close(teeny_store_tuned *t); /* NULL is a no-op */
void teeny_store_tuneds_free(teeny_store_tuned *v, size_t n);
/* Remove the temp files of puts that can no longer finish: their writer
 * (the pid in the name) is gone, or they are an hour old.  Each is appended
 * to out as a repaired TEENY_STORE_PROB_TMP problem.  teenycd calls this at
 * every start, so the temp files of killed processes do not pile up. */
int teeny_store_clean_tmp(teeny_store *s, teeny_store_problems *out,
                          char *err);

#ifdef __cplusplus
}
#endif
#endif /* TEENY_STORE_STORE_H */
