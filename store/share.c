/*
 * store/share.c — sharing a store with its owner: what a handle opened
 * with opts.shared (embedded mode) may create in a store that belongs to
 * someone else, so that the store's owner — teenycd's user — can still
 * write, evict, purge and repair everything in it afterwards.
 *
 * The owner is whoever owns the root directory.  A shared handle is, by
 * who runs it:
 *
 *   the owner      writes as the owner does (nothing to arrange);
 *   root           writes, and gives everything it creates (shard
 *                  directories, temp files that become objects, a missing
 *                  index.db) to the owner and group, with the store's modes;
 *                  a shard directory it finds owned by anyone else (left by
 *                  an older embedded run) is given back the same way;
 *   a member of    writes only if the store is set up for it: root,
 *   the group      objects/ and tmp/ group-writable and setgid, index.db
 *                  (and its -wal/-shm) group read-write, and the owner in
 *                  that group too; it then creates group-writable, setgid
 *                  directories (the group is inherited), group-readable
 *                  files, and puts nothing into a shard directory the
 *                  group cannot write;
 *   anyone else    writes nothing: the handle is read-only (hits work) and
 *                  teeny_store_readonly() says why, once, in words.
 *
 * SQLite's -wal and -shm files: as root SQLite itself gives them to the
 * database's owner; a group member creates them with index.db's mode in
 * the setgid root, so the group (and the owner) can write them.
 * Decided once at open; no work here is on a hot path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

#define GROUP_DIR_BITS (S_ISGID | S_IRWXG) /* a directory the group shares */

/* ---- who is who ------------------------------------------------------------ */

/* Is this process in group g (effective or supplementary)? */
static bool self_in_group(gid_t g) {
  if (getegid() == g)
    return true;
  gid_t v[256];
  int n = getgroups(TEENY_ARRAY_LEN(v), v);
  for (int i = 0; i < n; i++)
    if (v[i] == g)
      return true;
  return false;
}

/* Make the handle read-only, saying why ("the store belongs to ..."). */
static int refuse(teeny_store *s, const char *why, char *err) {
  char u[64], g[64], line[TEENY_STORE_ERR_LEN];
  teeny__user_name(s->owner_uid, u, sizeof u);
  teeny__group_name(s->owner_gid, g, sizeof g);
  snprintf(line, sizeof line, "it belongs to %.40s:%.40s and %s", u, g, why);
  if (!(s->readonly = teeny__strdup(line)))
    return teeny__store_fail(err, TEENY_E_NOMEM, "out of memory");
  return TEENY_OK;
}

/* Does st (a directory, or with file set a file) let owner_gid share it? */
static bool group_shared(const teeny_store *s, const struct stat *st, bool file) {
  mode_t want = file ? (S_IRGRP | S_IWGRP) : GROUP_DIR_BITS;
  return st->st_gid == s->owner_gid && (st->st_mode & want) == want;
}

/* ---- at open ------------------------------------------------------------------- */

int teeny__store_share_begin(teeny_store *s, char *err) {
  struct stat st;
  if (fstat(s->rootfd, &st) != 0)
    return teeny__store_fail(err, teeny__store_errno_code(errno), "cannot stat %s: %s",
                             s->root, strerror(errno));
  s->owner_uid = st.st_uid;
  s->owner_gid = st.st_gid;
  if (!s->shared || st.st_uid == geteuid())
    return TEENY_OK; /* our own store */
  mode_t reads = st.st_mode & (S_IRGRP | S_IROTH);
  if (geteuid() == 0) {
    s->chown_new = true;
    s->dir_mode = st.st_mode & 07777;
    s->file_mode = S_IRUSR | S_IWUSR | reads;
    return TEENY_OK;
  }
  if (!self_in_group(st.st_gid))
    return refuse(s, "this process is neither its owner, root, nor in its group", err);
  if (!teeny__user_in_group(st.st_uid, st.st_gid))
    return refuse(s, "its owner is not in its group, so could not manage files the "
                     "group writes", err);
  if (!group_shared(s, &st, false))
    return refuse(s, "it is not shared with the group (want the root, objects/ and tmp/ "
                     "g+rwxs, index.db g+rw)", err);
  s->dir_mode = st.st_mode & 07777;
  s->file_mode = S_IRUSR | S_IWUSR | S_IRGRP | S_IWGRP | (st.st_mode & S_IROTH);
  return TEENY_OK;
}

/* index.db and its companions, when they exist, must be group read-write. */
static bool index_shared(const teeny_store *s) {
  static const char *const names[] = {"index.db", "index.db-wal", "index.db-shm"};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(names); i++) {
    struct stat st;
    if (fstatat(s->rootfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !group_shared(s, &st, true))
      return false;
  }
  return true;
}

int teeny__store_share_finish(teeny_store *s, char *err) {
  if (!s->shared || s->readonly || s->chown_new || s->owner_uid == geteuid())
    return TEENY_OK;
  struct stat o, t;
  if (fstat(s->objfd, &o) != 0 || fstat(s->tmpfd, &t) != 0 ||
      !group_shared(s, &o, false) || !group_shared(s, &t, false) || !index_shared(s))
    return refuse(s, "it is not shared with the group (want the root, objects/ and tmp/ "
                     "g+rwxs, index.db g+rw)", err);
  return TEENY_OK;
}

/* ---- what we create ---------------------------------------------------------- */

void teeny__store_share_adopt(const teeny_store *s, int fd) {
  if (s->chown_new)
    (void)fchown(fd, s->owner_uid, s->owner_gid);
}

int teeny__store_share_shard(const teeny_store *s, int shardfd, const char *key,
                             char *err) {
  if (!s->shared || s->owner_uid == geteuid())
    return TEENY_OK;
  struct stat st;
  if (fstat(shardfd, &st) != 0)
    return teeny__store_fail(err, teeny__store_errno_code(errno),
                             "cannot stat objects/%.2s: %s", key, strerror(errno));
  if (s->chown_new) { /* give back what an older embedded run took */
    if (st.st_uid != s->owner_uid || st.st_gid != s->owner_gid)
      (void)fchown(shardfd, s->owner_uid, s->owner_gid);
    return TEENY_OK;
  }
  if (group_shared(s, &st, false)) /* the group, owner included, writes it */
    return TEENY_OK;
  return teeny__store_fail(err, TEENY_E_PERM,
                           "%s/objects/%.2s is not group-writable (mode %04o): the "
                           "store's owner could not manage what this process put there",
                           s->root, key, (unsigned)(st.st_mode & 07777));
}

const char *teeny_store_readonly(const teeny_store *s) { return s->readonly; }
