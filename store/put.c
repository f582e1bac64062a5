/*
 * store/put.c — the commit protocol (teeny_store_put).
 *
 *   1. check the name and key (before any path exists), hash the contents
 *   2. write each file to tmp/{key}.{ext}.{pid}-{random}.tmp
 *      (O_EXCL|O_NOFOLLOW; the pid tells a later start whose it was),
 *      fsync it
 *   3. BEGIN IMMEDIATE; if a row for the key appeared meanwhile, drop the
 *      temps and return that row
 *   4. renameat() each temp into objects/ab/ (the shard opened O_NOFOLLOW),
 *      fsync objects/ab/
 *   5. INSERT the row; COMMIT — the commit point
 *
 * Renames happen only while this connection holds SQLite's write lock and
 * sees no row for the key, so a rename never replaces a file that a
 * committed row names, and removers (evict.c, verify.c), which
 * unlink files only under the same lock after checking that no row exists,
 * never delete the files of a put between its rename and its commit.  A
 * crash anywhere before the COMMIT leaves at most temp files or orphans in
 * objects/, which verify removes; the index never names a partial file.
 * Load: one put per cold compile (milliseconds of compile precede it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

/* One file of a put on its way from tmp/ to objects/ab/. */
typedef struct put_file {
  const char *data;                   /* contents */
  size_t len;                         /* their length */
  char tmp[TEENY__STORE_TMP_MAX];     /* name in tmp/ ("" until created) */
  char final[TEENY__STORE_FNAME_MAX]; /* name in objects/ab/ */
  bool renamed;                       /* now lives at final */
} put_file;

/* write() all of data, honouring the test hook that fails after N bytes. */
static int write_all(teeny_store *s, int fd, const char *data, size_t len) {
  while (len > 0) {
    size_t chunk = len;
    bool inject = false;
    if (s->test.fail_write) {
      uint64_t left = s->test.fail_write_after > s->put_written
                          ? s->test.fail_write_after - s->put_written
                          : 0;
      if (left < chunk) {
        chunk = (size_t)left;
        inject = true;
      }
    }
    if (chunk == 0 && inject) {
      errno = s->test.fail_write_errno ? s->test.fail_write_errno : ENOSPC;
      return -1;
    }
    ssize_t n = write(fd, data, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    data += n;
    len -= (size_t)n;
    s->put_written += (uint64_t)n;
  }
  return 0;
}

static void random_hex(char out[17]) {
  unsigned char r[8];
  if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    /* No entropy yet (early boot): pid and address still differ between
     * writers, and O_EXCL catches the rest. */
    uint64_t v =
        ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out ^ teeny__now_ns();
    memcpy(r, &v, sizeof r);
  }
  for (int i = 0; i < 8; i++)
    snprintf(out + 2 * i, 3, "%02x", r[i]);
}

int teeny__store_write_temp(teeny_store *s, const char *data, size_t len,
                            const char *key, const char *ext,
                            char tmp[TEENY__STORE_TMP_MAX], char *err) {
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
    char rnd[17];
    random_hex(rnd);
    snprintf(tmp, TEENY__STORE_TMP_MAX, "%s.%s.%ld-%s.tmp", key, ext, (long)getpid(),
             rnd);
    fd = openat(s->tmpfd, tmp,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                s->file_mode);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    int e = errno;
    tmp[0] = '\0';
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot create a temp file in %s/tmp: %s", s->root,
                             strerror(e));
  }
  (void)fchmod(fd, s->file_mode); /* exact mode, whatever the umask */
  teeny__store_share_adopt(s, fd); /* renamed into objects/: the owner's */
  int rc = TEENY_OK;
  if (write_all(s, fd, data, len) != 0 || fsync(fd) != 0) {
    int e = errno;
    rc = teeny__store_fail(err, teeny__store_errno_code(e),
                           "cannot write %s/tmp/%s: %s", s->root, tmp,
                           strerror(e));
  }
  if (close(fd) != 0 && !rc) {
    int e = errno;
    rc = teeny__store_fail(err, teeny__store_errno_code(e),
                           "cannot write %s/tmp/%s: %s", s->root, tmp,
                           strerror(e));
  }
  return rc;
}

/* Create, fill and fsync f's temp file.  On failure f->tmp names whatever
 * was created (so the caller can unlink it). */
static int write_temp(teeny_store *s, put_file *f, const char *key,
                      const char *ext, char *err) {
  return teeny__store_write_temp(s, f->data, f->len, key, ext, f->tmp, err);
}

/* Remove what a failed put left: temps, and (only while we hold the write
 * lock and no row exists) files already renamed into the shard. */
static void cleanup(teeny_store *s, put_file *f, int shardfd) {
  for (int i = 0; i < 3; i++) {
    if (f[i].renamed) {
      if (shardfd >= 0)
        (void)unlinkat(shardfd, f[i].final, 0);
    } else if (f[i].tmp[0])
      (void)unlinkat(s->tmpfd, f[i].tmp, 0);
    f[i].tmp[0] = '\0';
    f[i].renamed = false;
  }
}

/* Undo a put that failed after BEGIN.  Renamed files may be unlinked only
 * under the write lock with no row for the key; a failed COMMIT may have
 * dropped the lock, so take it again (or, failing that, leave orphans for
 * verify rather than risk deleting another put's committed files). */
static void abandon(teeny_store *s, put_file *f, int shardfd, const char *key) {
  bool locked =
      !sqlite3_get_autocommit(s->db) || teeny__store_begin(s, NULL) == TEENY_OK;
  bool no_row = false;
  if (locked) {
    teeny_store_rec r;
    int rc = teeny__store_row_get(s, key, &r, NULL);
    if (rc == TEENY_OK)
      teeny_store_rec_close(&r);
    no_row = rc == TEENY_E_NOTFOUND;
  }
  cleanup(s, f, no_row ? shardfd : -1);
  if (locked)
    teeny__store_rollback(s);
}

/* Deep copy of src into dst (no file contents). */
static int rec_copy(teeny_store_rec *dst, const teeny_store_rec *src,
                    char *err) {
  *dst = *src;
  dst->name = teeny__strdup(src->name);
  dst->id = teeny__strdup(src->id);
  dst->target = teeny__strdup(src->target);
  dst->entry = teeny__strdup(src->entry);
  dst->compiler_version = teeny__strdup(src->compiler_version);
  dst->params = NULL;
  dst->nparams = 0;
  dst->ptx = dst->mlir = dst->src = NULL;
  bool oom = !dst->name || !dst->id || !dst->target || !dst->entry ||
             !dst->compiler_version;
  if (!oom && src->nparams) {
    dst->params = teeny__params_dup(src->params, src->nparams);
    oom = !dst->params;
    dst->nparams = oom ? 0 : src->nparams;
  }
  if (oom) {
    teeny_store_rec_close(dst);
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  }
  return TEENY_OK;
}

/* The row we will insert, borrowing a's strings (never closed). */
static int rec_from_artifact(teeny_store *s, const teeny_artifact *a,
                             const char *compiler_version, put_file *f,
                             teeny_store_rec *r, char *err) {
  memset(r, 0, sizeof *r);
  memcpy(r->key, a->key, sizeof r->key);
  r->name = a->name;
  r->id = a->id;
  r->target = a->target;
  r->num_warps = a->num_warps;
  r->entry = a->entry;
  r->params = a->params;
  r->nparams = a->nparams;
  r->threads_per_block = a->threads_per_block;
  r->shared_bytes = a->shared_bytes;
  r->ptx_size = f[0].len;
  r->mlir_size = f[1].len;
  r->src_size = f[2].len;
  if (teeny__sha256_hex(f[0].data, f[0].len, r->ptx_sha256) ||
      teeny__sha256_hex(f[1].data, f[1].len, r->mlir_sha256) ||
      teeny__sha256_hex(f[2].data, f[2].len, r->src_sha256))
    return teeny__store_fail(err, TEENY_E_INTERNAL, "sha256 failed");
  r->created = r->last_used = teeny__store_now(s);
  r->hits = 0;
  r->compile_ms = (double)a->compile_ns / 1e6;
  r->compiler_version =
      (char *)(compiler_version ? compiler_version : TEENY_VERSION_STRING);
  return TEENY_OK;
}

static int check_artifact(const teeny_artifact *a, char *err) {
  if (!a || !a->name)
    return teeny__store_fail(err, TEENY_E_INVAL, "no artifact or name");
  if (teeny_store_name_check(a->name, strlen(a->name)))
    return teeny__store_fail(err, TEENY_E_NAME,
                             "invalid kernel name (want a C identifier of "
                             "1..%d characters)",
                             TEENY_MAX_NAME_LEN);
  if (teeny_store_key_check(a->key))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "invalid key (want 64 lowercase hex digits)");
  if (!a->ptx || !a->source || !a->id || !a->entry || !a->target)
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "artifact lacks ptx, source, id, entry or "
                             "target");
  if (a->nparams && !a->params)
    return teeny__store_fail(err, TEENY_E_INVAL, "artifact lacks params");
  char *p;
  int rc = teeny__store_params_encode(a->params, a->nparams, &p, err);
  teeny__free(p);
  return rc;
}

/* The key is stored: out gets its row. */
static int existing(teeny_store *s, const char *key, teeny_store_rec *out,
                    char *err) {
  teeny_store_rec r;
  int rc = teeny__store_row_get(s, key, &r, err);
  if (rc)
    return rc;
  if (out)
    *out = r;
  else
    teeny_store_rec_close(&r);
  return TEENY_OK;
}

/* Step 4: rename every temp into the shard and make that durable. */
static int rename_all(teeny_store *s, put_file *f, int shardfd, const char *key,
                      char *err) {
  for (int i = 0; i < 3; i++) {
    /* renameat replaces a planted symlink at final; it never follows it. */
    if (renameat(s->tmpfd, f[i].tmp, shardfd, f[i].final) != 0) {
      int e = errno;
      return teeny__store_fail(err, teeny__store_errno_code(e),
                               "cannot rename into %s/objects/%.2s/%s: %s",
                               s->root, key, f[i].final, strerror(e));
    }
    f[i].renamed = true;
  }
  if (fsync(shardfd) != 0) {
    int e = errno;
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot fsync %s/objects/%.2s: %s", s->root, key,
                             strerror(e));
  }
  return TEENY_OK;
}

/* Steps 3-5 for files already in tmp/: lock, re-check, rename, insert r,
 * commit.  *added says whether r went in (else out has the row another
 * writer stored meanwhile).  Undoes everything on failure. */
static int commit(teeny_store *s, put_file *f, int shardfd,
                  const teeny_store_rec *r, teeny_store_rec *out, bool *added,
                  char *err) {
  *added = false;
  int rc = teeny__store_begin(s, err);
  if (rc) {
    cleanup(s, f, -1);
    return rc;
  }
  rc = existing(s, r->key, out, err);
  if (rc != TEENY_E_NOTFOUND) { /* stored meanwhile: that is success */
    teeny__store_rollback(s);
    cleanup(s, f, -1);
    return rc;
  }
  if ((rc = rename_all(s, f, shardfd, r->key, err)))
    goto fail;
  if (s->test.crash_before_row) {
    teeny__store_rollback(s); /* the "process" dies here: files stay */
    return teeny__store_fail(err, TEENY_E_IO,
                             "injected crash before the index row");
  }
  if ((rc = teeny__store_row_insert(s, r, err)) ||
      (rc = teeny__store_commit(s, err)))
    goto fail;
  *added = true;
  return TEENY_OK;
fail:
  abandon(s, f, shardfd, r->key);
  return rc;
}

int teeny_store_put(teeny_store *s, const teeny_artifact *a,
                    const char *compiler_version, teeny_store_rec *out,
                    bool *created, char *err) {
  int frc = teeny__store_index_fresh(s, err);
  if (frc)
    return frc;
  if (created)
    *created = false;
  if (out)
    memset(out, 0, sizeof *out);
  int rc = check_artifact(a, err);
  if (rc)
    return rc;
  if (s->readonly)
    return teeny__store_fail(err, TEENY_E_PERM, "%s is read-only for this process: %s",
                             s->root, s->readonly);
  /* Fast path: already stored (by us earlier, or by another process). */
  rc = existing(s, a->key, out, err);
  if (rc != TEENY_E_NOTFOUND)
    return rc;

  put_file f[3] = {
      {.data = a->ptx, .len = a->ptx_len},
      {.data = a->mlir ? a->mlir : "", .len = a->mlir ? a->mlir_len : 0},
      {.data = a->source, .len = a->source_len}};
  teeny_store_rec r;
  if ((rc = rec_from_artifact(s, a, compiler_version, f, &r, err)))
    return rc;
  s->put_written = 0;
  for (int i = 0; i < 3; i++) {
    teeny__store_file_name(a->name, a->key, teeny__store_exts[i], f[i].final,
                           sizeof f[i].final);
    if ((rc = write_temp(s, &f[i], a->key, teeny__store_exts[i], err))) {
      cleanup(s, f, -1);
      return rc;
    }
  }
  /* objects/ab/ after the temps, so a full disk leaves objects/ as it was. */
  int shardfd = teeny__store_open_shard(s, a->key, true, err);
  if (shardfd < 0 || (rc = teeny__store_share_shard(s, shardfd, a->key, err))) {
    cleanup(s, f, -1);
    if (shardfd >= 0)
      close(shardfd);
    return shardfd < 0 ? shardfd : rc;
  }
  bool added;
  rc = commit(s, f, shardfd, &r, out, &added, err);
  close(shardfd);
  if (rc || !added)
    return rc;
  if (created)
    *created = true;
  return out ? rec_copy(out, &r, err) : TEENY_OK;
}
