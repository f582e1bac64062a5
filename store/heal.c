/*
 * store/heal.c — a damaged index.db is moved aside and rebuilt from
 * objects/ (teeny_store_rebuild_index), so a cache never stays down: it
 * can always be rebuilt, or at worst started empty.
 *
 * The damaged file (and its -wal and -shm) is renamed, not deleted, to
 * index.db.damaged-{unix time}-{pid}[-wal|-shm] for inspection; a fresh
 * index is created and every object triple is checked and indexed:
 *   .c     the generated source: its SHA-256 must be the key in its name,
 *          and its header (dsl/spec.c writes it) names the kernel, id,
 *          target, num_warps and compiler, its entry point the parameters
 *   .o     PTX: a regular file that declares ".entry {name}_entry_point";
 *          one that needs dynamic shared memory is skipped (the size is a
 *          launch parameter the PTX does not record: a request compiles it
 *          again)
 *   .mlir  a regular file (may be empty)
 * Cubins (.{arch}.cubin) are not indexed again (their toolchain and
 * checks lived only in the lost rows): they stay as orphans, and the SASS
 * lane makes them afresh at the next request that names the GPU.
 * Whatever fails a check is left where it is, an orphan for verify
 * --repair.  Rows get created = last_used = the .c file's mtime, no hits
 * and no compile time.  Inserts go in batches of REBUILD_BATCH per
 * transaction.  An administrative operation: one read of every file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_int.h"

#define REBUILD_BATCH 512
#define SRC_MAX ((size_t)TEENY_MAX_SOURCE_BYTES + (1u << 20)) /* .c bound */
#define PTX_MAX ((size_t)256 << 20)                           /* .o bound */

bool teeny__store_is_damage(int sqlite_rc) {
  int prim = sqlite_rc & 0xff;
  return prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB;
}

/* A cubin's "{stem}.{arch}.cubin" (ext points at "cubin"): its arch and
 * where the stem ends. */
static bool cubin_arch(const char *fname, const char *ext, size_t *stem,
                       char *arch) {
  const char *end = ext - 1; /* the dot before "cubin" */
  const char *dot = end;
  while (dot > fname && dot[-1] != '.')
    dot--;
  if (dot == fname || (size_t)(end - dot) > TEENY_STORE_ARCH_MAX)
    return false;
  memcpy(arch, dot, (size_t)(end - dot));
  arch[end - dot] = '\0';
  *stem = (size_t)(dot - 1 - fname);
  return teeny_store_arch_check(arch) == TEENY_OK;
}

bool teeny__store_parse_object(const char *shard, const char *fname,
                               char *name, char *key, int *ext, char *arch) {
  const char *dot = strrchr(fname, '.');
  if (arch)
    arch[0] = '\0';
  if (!dot)
    return false;
  int e = -1;
  for (int i = 0; i < 3; i++)
    if (strcmp(dot + 1, teeny__store_exts[i]) == 0)
      e = i;
  size_t stem = (size_t)(dot - fname);
  if (e < 0 && arch && strcmp(dot + 1, "cubin") == 0) {
    if (!cubin_arch(fname, dot + 1, &stem, arch))
      return false;
    e = 3;
  }
  if (e < 0 || stem < TEENY_STORE_KEY_LEN + 2 ||
      fname[stem - TEENY_STORE_KEY_LEN - 1] != '_')
    return false;
  size_t nlen = stem - TEENY_STORE_KEY_LEN - 1;
  memcpy(key, fname + nlen + 1, TEENY_STORE_KEY_LEN);
  key[TEENY_STORE_KEY_LEN] = '\0';
  if (teeny_store_name_check(fname, nlen) || teeny_store_key_check(key) ||
      key[0] != shard[0] || key[1] != shard[1])
    return false;
  memcpy(name, fname, nlen);
  name[nlen] = '\0';
  if (ext)
    *ext = e;
  return true;
}

/* ---- reading one object triple ---------------------------------------------- */

/* A whole regular file of at most max bytes (NUL-terminated), or NULL. */
static char *read_file(int dirfd, const char *name, size_t max, size_t *len,
                       struct stat *st) {
  int fd = teeny__store_open_file(dirfd, name, O_RDONLY, 0, st);
  if (fd < 0)
    return NULL;
  char *buf = NULL;
  size_t size = (size_t)st->st_size, got = 0;
  if (size <= max && (buf = teeny__malloc(size + 1))) {
    ssize_t n;
    while (got < size && ((n = read(fd, buf + got, size - got)) > 0 ||
                          (n < 0 && errno == EINTR)))
      got += n > 0 ? (size_t)n : 0;
    buf[got] = '\0';
  }
  close(fd);
  if (buf && got != size) {
    teeny__free(buf);
    buf = NULL;
  }
  *len = got;
  return buf;
}

/* The text after "label" on the header line that has it, up to a space or
 * the end of the line, into out. */
static bool header_word(const char *src, const char *end, const char *label,
                        char *out, size_t n) {
  const char *p = strstr(src, label);
  if (!p || p >= end)
    return false;
  p += strlen(label);
  size_t k = strcspn(p, " \n");
  if (k == 0 || k >= n)
    return false;
  memcpy(out, p, k);
  out[k] = '\0';
  return true;
}

/* The header comment dsl/spec.c writes (teeny__spec_source):
 *   / * teenyc generated source: do not edit.
 *    * compiler: teenyc VERSION (build ...), LLVM ...
 *    * kernel: NAME  id: ID
 *    * target: TARGET  num_warps: N
 *    * /                                                                   */
typedef struct header {
  char version[64];   /* compiler version */
  char kernel[TEENY_MAX_NAME_LEN + 1];
  char id[512];
  char target[64];
  int num_warps;
} header;

static bool parse_header(const char *src, header *h) {
  static const char first[] = "/* teenyc generated source: do not edit.\n";
  if (strncmp(src, first, sizeof first - 1) != 0)
    return false;
  const char *end = strstr(src, " */\n");
  char warps[16];
  if (!end || !header_word(src, end, " * compiler: teenyc ", h->version,
                           sizeof h->version) ||
      !header_word(src, end, " * kernel: ", h->kernel, sizeof h->kernel) ||
      !header_word(src, end, "  id: ", h->id, sizeof h->id) ||
      !header_word(src, end, " * target: ", h->target, sizeof h->target) ||
      !header_word(src, end, "  num_warps: ", warps, sizeof warps))
    return false;
  char *e;
  long w = strtol(warps, &e, 10);
  h->num_warps = (int)w;
  return *e == '\0' && w > 0 && w <= 1024;
}

/* The entry point's parameters, "void NAME_entry_point(f32 *a, i32 n)":
 * into the store's own text form "f32* a, i32 n", then decoded. */
static int parse_params(const char *src, const char *name, teeny_param **out,
                        size_t *n) {
  char sig[TEENY_MAX_NAME_LEN + 64];
  snprintf(sig, sizeof sig,
           "/* ---- generated entry point ---- */\nvoid %s_entry_point(", name);
  const char *p = strstr(src, sig);
  if (!p)
    return TEENY_E_CORRUPT;
  p += strlen(sig);
  const char *close = strchr(p, ')');
  if (!close)
    return TEENY_E_CORRUPT;
  teeny_buf b;
  teeny__buf_init(&b);
  bool none = strncmp(p, "void)", 5) == 0;
  for (const char *q = p; !none && q < close; q++) {
    if (*q == ' ' && q + 1 < close && q[1] == '*')
      continue; /* "f32 *a" -> "f32* a": the star moves left of the space */
    if (*q == '*')
      teeny__buf_puts(&b, "* ");
    else
      teeny__buf_putc(&b, *q);
  }
  char *text = none ? NULL : teeny__buf_take(&b, NULL);
  int rc = none ? TEENY_OK
           : text ? teeny__store_params_decode(text, out, n)
                  : TEENY_E_NOMEM;
  teeny__buf_free(&b);
  teeny__free(text);
  return rc;
}

/* Read and check one triple; on success r (zeroed first) is its row. */
static int read_triple(teeny_store *s, int shardfd, const char *name,
                       const char *key, teeny_store_rec *r) {
  memset(r, 0, sizeof *r);
  char fname[TEENY__STORE_FNAME_MAX];
  char *data[3] = {NULL, NULL, NULL};
  size_t len[3] = {0, 0, 0};
  struct stat st[3];
  const size_t max[3] = {PTX_MAX, PTX_MAX, SRC_MAX};
  int rc = TEENY_E_CORRUPT;
  for (int i = 0; i < 3; i++) {
    teeny__store_file_name(name, key, teeny__store_exts[i], fname, sizeof fname);
    if (!(data[i] = read_file(shardfd, fname, max[i], &len[i], &st[i])))
      goto done;
  }
  char entry[TEENY_MAX_NAME_LEN + 32];
  snprintf(entry, sizeof entry, ".entry %s_entry_point", name);
  header h;
  if (teeny__sha256_hex(data[2], len[2], r->src_sha256) ||
      strcmp(r->src_sha256, key) != 0 || !parse_header(data[2], &h) ||
      strcmp(h.kernel, name) != 0 || !strstr(data[0], entry) ||
      strstr(data[0], "teeny_dyn_smem") ||
      parse_params(data[2], name, &r->params, &r->nparams))
    goto done;
  memcpy(r->key, key, sizeof r->key);
  snprintf(entry, sizeof entry, "%s_entry_point", name);
  r->name = teeny__strdup(name);
  r->id = teeny__strdup(h.id);
  r->target = teeny__strdup(h.target);
  r->entry = teeny__strdup(entry);
  r->compiler_version = teeny__strdup(h.version);
  r->num_warps = h.num_warps;
  r->threads_per_block = 32 * h.num_warps;
  r->shared_bytes = 0;
  r->ptx_size = len[0];
  r->mlir_size = len[1];
  r->src_size = len[2];
  r->created = r->last_used = (int64_t)st[2].st_mtime;
  if (!r->name || !r->id || !r->target || !r->entry || !r->compiler_version ||
      teeny__sha256_hex(data[0], len[0], r->ptx_sha256) ||
      teeny__sha256_hex(data[1], len[1], r->mlir_sha256)) {
    rc = TEENY_E_NOMEM;
    goto done;
  }
  rc = TEENY_OK;
done:
  for (int i = 0; i < 3; i++)
    teeny__free(data[i]);
  if (rc)
    teeny_store_rec_close(r);
  (void)s;
  return rc;
}

/* ---- the walk ------------------------------------------------------------------ */

typedef struct walk {
  teeny_store *s;
  teeny_store_rebuild_report *r;
  size_t batch; /* rows in the open transaction */
} walk;

static int add_row(walk *w, const teeny_store_rec *rec, char *err) {
  int rc = TEENY_OK;
  if (w->batch == 0 && (rc = teeny__store_begin(w->s, err)))
    return rc;
  if ((rc = teeny__store_row_insert(w->s, rec, err)))
    return rc;
  w->r->rows++;
  if (++w->batch == REBUILD_BATCH) {
    w->batch = 0;
    rc = teeny__store_commit(w->s, err);
  }
  return rc;
}

static int rebuild_shard(walk *w, const char *shard, char *err) {
  int sfd = openat(w->s->objfd, shard,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sfd < 0)
    return TEENY_OK; /* not a directory: verify's business */
  char **names;
  size_t n;
  int rc = teeny__store_list_dir(sfd, &names, &n, err);
  for (size_t i = 0; i < n && !rc; i++) {
    char name[TEENY_MAX_NAME_LEN + 1], key[TEENY_STORE_KEY_LEN + 1];
    int ext;
    if (!teeny__store_parse_object(shard, names[i], name, key, &ext, NULL) ||
        ext != 2)
      continue; /* each triple once, by its generated source */
    teeny_store_rec rec;
    if (read_triple(w->s, sfd, name, key, &rec)) {
      w->r->skipped++;
      continue;
    }
    rc = add_row(w, &rec, err);
    teeny_store_rec_close(&rec);
  }
  teeny__store_names_free(names, n);
  close(sfd);
  return rc;
}

static int rebuild_rows(teeny_store *s, teeny_store_rebuild_report *r,
                        char *err) {
  walk w = {s, r, 0};
  char **shards;
  size_t n;
  int rc = teeny__store_list_dir(s->objfd, &shards, &n, err);
  for (size_t i = 0; i < n && !rc; i++)
    if (strlen(shards[i]) == 2)
      rc = rebuild_shard(&w, shards[i], err);
  teeny__store_names_free(shards, n);
  if (!rc && w.batch)
    rc = teeny__store_commit(s, err);
  teeny__store_rollback(s);
  return rc;
}

/* ---- moving the damaged index aside ----------------------------------------- */

static int move_aside(teeny_store *s, teeny_store_rebuild_report *r,
                      char *err) {
  static const char *const sfx[] = {"", "-wal", "-shm"};
  char base[96];
  snprintf(base, sizeof base, "index.db.damaged-%lld-%ld",
           (long long)time(NULL), (long)getpid());
  for (size_t i = 0; i < TEENY_ARRAY_LEN(sfx); i++) {
    char from[32], to[128];
    snprintf(from, sizeof from, "index.db%s", sfx[i]);
    snprintf(to, sizeof to, "%s%s", base, sfx[i]);
    if (renameat(s->rootfd, from, s->rootfd, to) != 0 && errno != ENOENT) {
      int e = errno;
      return teeny__store_fail(err, teeny__store_errno_code(e),
                               "cannot move %s/%s aside: %s", s->root, from,
                               strerror(e));
    }
  }
  snprintf(r->moved, sizeof r->moved, "%s", base);
  return TEENY_OK;
}

/* The daemon lock, for the rebuild only, when the caller does not hold it:
 * the fd to close afterwards, or -1 with err set. */
static int lock_for_rebuild(teeny_store *s, char *err) {
  struct stat st;
  int fd = teeny__store_open_file(s->rootfd, "daemon.lock", O_RDWR | O_CREAT,
                                  s->file_mode, &st);
  if (fd < 0) {
    teeny__store_fail(err, TEENY_E_STORE, "cannot open %s/daemon.lock",
                      s->root);
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    teeny__store_fail(err, TEENY_E_BUSY,
                      "store %s is in use by a teenycd: it rebuilds its "
                      "index itself",
                      s->root);
    return -1;
  }
  return fd;
}

int teeny_store_rebuild_index(teeny_store *s, bool lock_held,
                              teeny_store_rebuild_report *r, char *err) {
  memset(r, 0, sizeof *r);
  int lockfd = -1;
  if (!lock_held && s->lockfd < 0 && (lockfd = lock_for_rebuild(s, err)) < 0)
    return TEENY_E_BUSY;
  teeny__store_index_close(s);
  int rc = move_aside(s, r, err);
  if (!rc)
    rc = teeny__store_index_open(s, err);
  if (!rc) {
    char werr[TEENY_STORE_ERR_LEN] = "";
    if (rebuild_rows(s, r, werr)) /* keep what went in: a partial index */
      snprintf(r->error, sizeof r->error, "%s", werr);
  }
  if (lockfd >= 0)
    close(lockfd);
  return rc;
}
