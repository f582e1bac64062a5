/*
 * store/root.c — the store handle: root resolution, name checks, opening
 * the root and its directories without following symlinks, object paths,
 * and the daemon lock file.
 *
 * Invariant kept here: every descriptor in the handle was opened with
 * O_NOFOLLOW relative to the one before it (root -> objects/, tmp/), so
 * later openat()/mkdirat()/renameat() calls never leave the tree even if
 * someone plants a symlink inside it.  Only the root path itself (and its
 * parents) is trusted as a path.  Opened once per process or worker; no
 * work here is on a hot path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_int.h"

const char *const teeny__store_exts[3] = {"o", "mlir", "c"};

/* ---- errors and time ----------------------------------------------------- */

int teeny__store_fail(char *err, int code, const char *fmt, ...) {
  if (!err)
    return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, TEENY_STORE_ERR_LEN, fmt, ap);
  va_end(ap);
  return code;
}

int teeny__store_errno_code(int e) {
  if (e == ENOSPC || e == EDQUOT)
    return TEENY_E_NOSPC;
  if (e == ENOMEM)
    return TEENY_E_NOMEM;
  if (e == EACCES || e == EPERM)
    return TEENY_E_PERM;
  return TEENY_E_IO;
}

static int64_t system_clock(void *ctx) {
  (void)ctx;
  return (int64_t)time(NULL);
}

int64_t teeny__store_now(const teeny_store *s) {
  return s->clock(s->clock_ctx);
}

/* ---- root resolution and names ------------------------------------------- */

static int copy_root(const char *a, const char *b, char *out, size_t outsz) {
  int n = snprintf(out, outsz, "%s%s", a, b);
  if (n < 0 || (size_t)n >= outsz) {
    if (outsz)
      out[0] = '\0';
    return TEENY_E_LIMIT;
  }
  while (n > 1 && out[n - 1] == '/') /* "link/" would follow "link" */
    out[--n] = '\0';
  return TEENY_OK;
}

int teeny_store_root_resolve(const char *explicit_root,
                             const char *cache_dir_env,
                             const char *xdg_cache_env, char *out,
                             size_t outsz) {
  if (explicit_root && *explicit_root)
    return copy_root(explicit_root, "", out, outsz);
  if (cache_dir_env && *cache_dir_env)
    return copy_root(cache_dir_env, "", out, outsz);
  if (xdg_cache_env && xdg_cache_env[0] == '/') {
    /* "/home/u/.cache/" + "teenyc": drop the slash(es) before joining. */
    size_t n = strlen(xdg_cache_env);
    while (n > 1 && xdg_cache_env[n - 1] == '/')
      n--;
    int w = snprintf(out, outsz, "%.*s%steenyc", (int)n, xdg_cache_env,
                     n == 1 ? "" : "/");
    if (w < 0 || (size_t)w >= outsz) {
      if (outsz)
        out[0] = '\0';
      return TEENY_E_LIMIT;
    }
    return TEENY_OK;
  }
  return copy_root(TEENY_STORE_DEFAULT_ROOT, "", out, outsz);
}

int teeny_store_root_from_env(const char *explicit_root, char *out,
                              size_t outsz) {
  return teeny_store_root_resolve(explicit_root, getenv("TEENYC_CACHE_DIR"),
                                  getenv("XDG_CACHE_HOME"), out, outsz);
}

static bool ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}

int teeny_store_name_check(const char *name, size_t len) {
  if (!name || len == 0 || len > TEENY_MAX_NAME_LEN || !ident_start(name[0]))
    return TEENY_E_NAME;
  for (size_t i = 1; i < len; i++)
    if (!ident_char(name[i])) /* also refuses NUL, '/', '.' */
      return TEENY_E_NAME;
  return TEENY_OK;
}

int teeny_store_key_check(const char *key) {
  if (!key)
    return TEENY_E_INVAL;
  for (int i = 0; i < TEENY_STORE_KEY_LEN; i++) {
    char c = key[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return TEENY_E_INVAL; /* also stops at a short key's NUL */
  }
  return key[TEENY_STORE_KEY_LEN] == '\0' ? TEENY_OK : TEENY_E_INVAL;
}

static bool ext_known(const char *ext) {
  for (int i = 0; i < 3; i++)
    if (ext && strcmp(ext, teeny__store_exts[i]) == 0)
      return true;
  return false;
}

void teeny__store_file_name(const char *name, const char *key, const char *ext,
                            char *out, size_t outsz) {
  snprintf(out, outsz, "%s_%s.%s", name, key, ext);
}

int teeny_store_object_path(const char *name, size_t name_len, const char *key,
                            const char *ext, char *out, size_t outsz) {
  int rc = teeny_store_name_check(name, name_len);
  if (rc)
    return rc;
  if (teeny_store_key_check(key) || !ext_known(ext))
    return TEENY_E_INVAL;
  int n = snprintf(out, outsz, "%.2s/%.*s_%s.%s", key, (int)name_len, name, key,
                   ext);
  if (n < 0 || (size_t)n >= outsz) {
    if (outsz)
      out[0] = '\0';
    return TEENY_E_LIMIT;
  }
  return TEENY_OK;
}

/* ---- directories --------------------------------------------------------- */

/* mkdir -p for the root's parents and the root itself (paths, trusted). */
static int mkdir_parents(const char *root, mode_t mode, char *err) {
  char path[PATH_MAX];
  size_t len = strlen(root);
  if (len >= sizeof path)
    return teeny__store_fail(err, TEENY_E_LIMIT, "store root too long");
  memcpy(path, root, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0')
      continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, mode) != 0 && errno != EEXIST) {
      int e = errno;
      return teeny__store_fail(err, teeny__store_errno_code(e),
                               "cannot create %s: %s", path, strerror(e));
    }
    path[i] = saved;
  }
  return TEENY_OK;
}

/* Open (creating if missing) the directory name under dirfd, refusing a
 * symlink or non-directory.  *created says whether we made it. */
static int open_subdir(int dirfd, const char *name, mode_t mode, bool create,
                       bool *created, const char *what, char *err) {
  if (created)
    *created = false;
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd =
        openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
      return fd;
    int e = errno;
    if (e == ELOOP || e == ENOTDIR)
      return teeny__store_fail(err, TEENY_E_STORE,
                               "%s is a symlink or not a directory; refusing "
                               "to use it",
                               what);
    if (e != ENOENT || !create || attempt == 1)
      return teeny__store_fail(
          err, e == ENOENT ? TEENY_E_NOTFOUND : teeny__store_errno_code(e),
          "cannot open %s: %s", what, strerror(e));
    if (mkdirat(dirfd, name, mode) == 0) {
      if (created)
        *created = true;
      /* umask may have narrowed mode; set exactly what was asked for. */
      int dfd =
          openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd >= 0) {
        (void)fchmod(dfd, mode);
        (void)fsync(dirfd); /* make the new entry durable */
        return dfd;
      }
    } else if (errno != EEXIST) {
      e = errno;
      return teeny__store_fail(err, teeny__store_errno_code(e),
                               "cannot create %s: %s", what, strerror(e));
    }
  }
  return teeny__store_fail(err, TEENY_E_IO, "cannot open %s", what);
}

int teeny__store_open_shard(teeny_store *s, const char *key, bool create,
                            char *err) {
  char shard[3] = {key[0], key[1], '\0'};
  char what[32];
  bool created;
  snprintf(what, sizeof what, "objects/%s", shard);
  int fd = open_subdir(s->objfd, shard, s->shard_mode, create, &created, what, err);
  if (fd >= 0 && created)
    teeny__store_share_adopt(s, fd);
  return fd;
}

int teeny__store_open_file(int dirfd, const char *name, int flags, mode_t mode,
                           struct stat *st) {
  int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                  mode);
  if (fd < 0)
    return -1;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    return -2;
  }
  return fd;
}

bool teeny__store_shard_removable(teeny_store *s, const char *key, char *why) {
  char shard[3] = {key[0], key[1], '\0'};
  struct stat st;
  if (faccessat(s->objfd, shard, W_OK | X_OK, AT_EACCESS) == 0 || errno == ENOENT)
    return true;
  int e = errno;
  if (fstatat(s->objfd, shard, &st, AT_SYMLINK_NOFOLLOW) != 0)
    memset(&st, 0, sizeof st);
  teeny__store_fail(why, teeny__store_errno_code(e),
                    "%s/objects/%s is not writable by uid %u (it belongs to %u:%u, "
                    "mode %04o): give it back to the store's owner",
                    s->root, shard, (unsigned)geteuid(), (unsigned)st.st_uid,
                    (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
  return false;
}

void teeny__store_cubin_name(const char *name, const char *key,
                             const char *arch, char *out, size_t outsz) {
  snprintf(out, outsz, "%s_%s.%s.cubin", name, key, arch);
}

/* Unlink the cubin of each arch in the space-separated list (checked: a
 * malformed arch builds no path).  False if one would not go. */
static bool unlink_cubins(int dfd, const char *name, const char *key,
                          const char *archs) {
  bool gone = true;
  for (const char *a = archs; a && *a;) {
    size_t n = strcspn(a, " ");
    char arch[TEENY_STORE_ARCH_MAX + 1];
    if (n > 0 && n <= TEENY_STORE_ARCH_MAX) {
      memcpy(arch, a, n);
      arch[n] = '\0';
      char fname[TEENY__STORE_FNAME_MAX];
      teeny__store_cubin_name(name, key, arch, fname, sizeof fname);
      if (teeny_store_arch_check(arch) == TEENY_OK && unlinkat(dfd, fname, 0) != 0 &&
          errno != ENOENT)
        gone = false;
    }
    a += n;
    a += *a == ' ';
  }
  return gone;
}

bool teeny__store_unlink_files(teeny_store *s, const char *name,
                               const char *key, const char *archs) {
  int dfd = teeny__store_open_shard(s, key, false, NULL);
  if (dfd < 0) {
    /* a shard that is a symlink was planted, never made by us: remove the
     * link itself (what it points to is never touched); every entry of
     * that shard already fails its lookups */
    char shard[3] = {key[0], key[1], '\0'};
    struct stat st;
    if (fstatat(s->objfd, shard, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
      return unlinkat(s->objfd, shard, 0) == 0;
    return true; /* no shard, no files */
  }
  bool gone = true;
  for (int i = 0; i < 3; i++) {
    char fname[TEENY__STORE_FNAME_MAX];
    teeny__store_file_name(name, key, teeny__store_exts[i], fname,
                           sizeof fname);
    /* unlinkat never follows a link */
    if (unlinkat(dfd, fname, 0) != 0 && errno != ENOENT)
      gone = false;
  }
  gone = unlink_cubins(dfd, name, key, archs) && gone;
  close(dfd);
  return gone;
}

/* Read the names in dirfd (a copy of the list: we modify the directory). */
int teeny__store_list_dir(int dirfd, char ***names, size_t *n, char *err) {
  *names = NULL;
  *n = 0;
  int lfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
  if (!d) {
    int e = errno;
    if (lfd >= 0)
      close(lfd);
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot read a store directory: %s", strerror(e));
  }
  size_t cap = 0;
  int rc = TEENY_OK;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    if (*n == cap) {
      size_t ncap = cap ? 2 * cap : 64;
      char **nv = teeny__realloc(*names, ncap * sizeof *nv);
      if (!nv) {
        rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
        break;
      }
      *names = nv;
      cap = ncap;
    }
    if (!((*names)[*n] = teeny__strdup(de->d_name))) {
      rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
      break;
    }
    (*n)++;
  }
  closedir(d);
  return rc;
}

void teeny__store_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    teeny__free(names[i]);
  teeny__free(names);
}

/* ---- open / close -------------------------------------------------------- */

/* The mode shards get: dir_mode if the caller gave one, else objects/'s
 * own (so a store an admin made group-writable and setgid stays so). */
static void shard_mode_of(teeny_store *s, bool given) {
  struct stat st;
  s->shard_mode = s->dir_mode;
  if (!given && fstat(s->objfd, &st) == 0)
    s->shard_mode = st.st_mode & 07777;
}

static int open_root(teeny_store *s, bool dir_mode_given, char *err) {
  int rc = mkdir_parents(s->root, s->dir_mode, err);
  if (rc)
    return rc;
  s->rootfd = open(s->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (s->rootfd < 0) {
    int e = errno;
    if (e == ELOOP || e == ENOTDIR)
      return teeny__store_fail(err, TEENY_E_STORE,
                               "store root %s is a symlink or not a "
                               "directory; refusing to use it",
                               s->root);
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot open store root %s: %s", s->root,
                             strerror(e));
  }
  if ((rc = teeny__store_share_begin(s, err)))
    return rc;
  bool create = !s->readonly, created;
  s->objfd = open_subdir(s->rootfd, "objects", s->dir_mode, create, &created,
                         "objects/", err);
  if (s->objfd < 0)
    return s->objfd;
  if (created)
    teeny__store_share_adopt(s, s->objfd);
  shard_mode_of(s, dir_mode_given);
  s->tmpfd = open_subdir(s->rootfd, "tmp", s->dir_mode, create, &created, "tmp/", err);
  if (s->tmpfd < 0)
    return s->tmpfd;
  if (created)
    teeny__store_share_adopt(s, s->tmpfd);
  return TEENY_OK;
}

int teeny_store_create(const teeny_store_opts *opts, teeny_store **out,
                       char *err) {
  static const teeny_store_opts defaults;
  if (!opts)
    opts = &defaults;
  *out = NULL;
  if ((opts->dir_mode & ~0777u) || (opts->file_mode & ~0666u))
    return teeny__store_fail(err, TEENY_E_INVAL,
                             "store modes must be within 0777 (directories) "
                             "and 0666 (files)");
  teeny_store *s = teeny__calloc(1, sizeof *s);
  if (!s)
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  s->rootfd = s->objfd = s->tmpfd = s->lockfd = -1;
  s->dir_mode = opts->dir_mode ? opts->dir_mode : 0755;
  s->file_mode = opts->file_mode ? opts->file_mode : 0644;
  s->busy_ms = opts->busy_timeout_ms ? opts->busy_timeout_ms : 5000;
  s->sync_full = opts->sync_full;
  s->clock = opts->clock ? opts->clock : system_clock;
  s->clock_ctx = opts->clock_ctx;
  s->test = opts->test;
  if (opts->heal)
    memset(opts->heal, 0, sizeof *opts->heal);
  s->shared = opts->shared;

  char root[PATH_MAX];
  int rc = teeny_store_root_from_env(opts->root, root, sizeof root);
  if (rc) {
    teeny__store_fail(err, rc, "store root path too long");
    goto fail;
  }
  if (!(s->root = teeny__strdup(root))) {
    rc = teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
    goto fail;
  }
  if ((rc = open_root(s, opts->dir_mode != 0, err)))
    goto fail;
  if ((rc = teeny__store_index_open(s, err)) && opts->heal && s->index_damaged &&
      !s->readonly) {
    char why[TEENY_STORE_ERR_LEN];
    snprintf(why, sizeof why, "%s", err ? err : "damaged");
    rc = teeny_store_rebuild_index(s, false, opts->heal, err);
    if (!rc && err) /* what was wrong, for the caller's log */
      snprintf(err, TEENY_STORE_ERR_LEN, "%s", why);
  }
  if (!rc)
    rc = teeny__store_share_finish(s, err);
  if (rc)
    goto fail;
  *out = s;
  return TEENY_OK;
fail:
  teeny_store_destroy(s);
  return rc;
}

void teeny_store_destroy(teeny_store *s) {
  if (!s)
    return;
  if (s->touch_n && s->rootfd >= 0)
    (void)teeny_store_flush(s, NULL);
  teeny__store_touch_free(s);
  teeny_store_unlock_daemon(s);
  teeny__store_index_close(s);
  if (s->tmpfd >= 0)
    close(s->tmpfd);
  if (s->objfd >= 0)
    close(s->objfd);
  if (s->rootfd >= 0)
    close(s->rootfd);
  teeny__free(s->root);
  teeny__free(s->readonly);
  teeny__free(s);
}

const char *teeny_store_root(const teeny_store *s) { return s->root; }

/* ---- the daemon lock ----------------------------------------------------- */

/* The pid written by the holder, or 0 if it has not written it yet. */
static long read_holder_pid(int fd) {
  char buf[32];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  char *end;
  long pid = strtol(buf, &end, 10);
  return pid > 0 ? pid : 0;
}

int teeny_store_lock_daemon(teeny_store *s, char *err) {
  if (s->lockfd >= 0)
    return TEENY_OK;
  struct stat st;
  int fd = teeny__store_open_file(s->rootfd, "daemon.lock", O_RDWR | O_CREAT,
                                  s->file_mode, &st);
  if (fd == -2)
    return teeny__store_fail(err, TEENY_E_STORE,
                             "%s/daemon.lock is not a regular file; refusing "
                             "to use it",
                             s->root);
  if (fd < 0) {
    int e = errno;
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot open %s/daemon.lock: %s", s->root,
                             strerror(e));
  }
  /* flock locks belong to the open file description, so a second handle
   * in this same process is refused just like another process. */
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    long pid = e == EWOULDBLOCK ? read_holder_pid(fd) : 0;
    close(fd);
    if (e != EWOULDBLOCK)
      return teeny__store_fail(err, TEENY_E_IO,
                               "cannot lock %s/daemon.lock: %s", s->root,
                               strerror(e));
    if (pid)
      return teeny__store_fail(err, TEENY_E_BUSY,
                               "store %s is in use by another teenycd "
                               "(pid %ld)",
                               s->root, pid);
    return teeny__store_fail(err, TEENY_E_BUSY,
                             "store %s is in use by another teenycd (pid "
                             "not yet written)",
                             s->root);
  }
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
    int e = errno;
    close(fd);
    return teeny__store_fail(err, teeny__store_errno_code(e),
                             "cannot write %s/daemon.lock: %s", s->root,
                             strerror(e));
  }
  s->lockfd = fd;
  return TEENY_OK;
}

void teeny_store_unlock_daemon(teeny_store *s) {
  if (!s || s->lockfd < 0)
    return;
  if (ftruncate(s->lockfd, 0) != 0) {
    /* only cosmetic: the next holder overwrites the pid anyway */
  }
  close(s->lockfd); /* releases the flock */
  s->lockfd = -1;
}
