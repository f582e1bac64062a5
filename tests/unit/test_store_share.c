/*
 * tests/unit/test_store_share.c — a store shared with its owner
 * (store/share.c): what an embedded handle (opts.shared) creates in a
 * store that belongs to someone else must stay manageable by that owner.
 *
 *   root        gives everything it creates to the owner, with the store's
 *               modes, and gives back a shard an older run took;
 *   a member    of a group-shared (g+rwxs) store writes group-writable
 *               setgid shards; of an unshared store, writes nothing;
 *   a stranger  gets a read-only handle that says why.
 *
 * Each case then acts as the owner (a forked child with its uid, the way
 * teenycd runs) and checks it can still put, purge and verify clean.
 * Needs root (to be several users); exits 77 (skipped, said) otherwise.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store.h"

#define OWNER 65534  /* nobody:nogroup owns the store (teenycd's stand-in) */
#define MEMBER 4242  /* a user in the owner's group */
#define STRANGER 4343

static char tdir[200]; /* the test's directory (0755, root) */
static char root[240]; /* tdir/store */

static void setup(void) {
  snprintf(tdir, sizeof tdir, "/tmp/teeny_share_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tdir));
  ck_assert_int_eq(chmod(tdir, 0755), 0);
  snprintf(root, sizeof root, "%s/store", tdir);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}

static void teardown(void) { nftw(tdir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

/* ---- artifacts ------------------------------------------------------------- */

typedef struct kart {
  teeny_artifact a;
  char src[128], ptx[128], name[16];
} kart;

/* Artifact number i of kernel "k" (key = sha256 of its source). */
static void kart_make(kart *k, int i) {
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "k");
  snprintf(k->src, sizeof k->src, "// variant %d\nvoid k_entry_point(void) {}\n", i);
  snprintf(k->ptx, sizeof k->ptx, ".version 8.0\n// %d\n", i);
  k->a = (teeny_artifact){.name = k->name, .id = "k__", .entry = "k_entry_point",
                          .target = "sm_90a", .num_warps = 4, .source = k->src,
                          .source_len = strlen(k->src), .ptx = k->ptx,
                          .ptx_len = strlen(k->ptx), .threads_per_block = 128};
  ck_assert_int_eq(teeny__sha256_hex(k->src, strlen(k->src), k->a.key), 0);
}

/* The first variant >= from whose shard is (or is not) shard. */
static int variant_in_shard(const char *shard, bool in, int from) {
  for (int i = from;; i++) {
    kart k;
    kart_make(&k, i);
    if ((memcmp(k.a.key, shard, 2) == 0) == in)
      return i;
  }
}

static teeny_store *open_as(bool shared, char *err) {
  teeny_store_opts o = {.root = root, .shared = shared};
  teeny_store *s = NULL;
  err[0] = '\0';
  teeny_store_create(&o, &s, err);
  return s;
}

static int put(teeny_store *s, int variant, char *err) {
  kart k;
  kart_make(&k, variant);
  return teeny_store_put(s, &k.a, NULL, NULL, NULL, err);
}

/* ---- the tree -------------------------------------------------------------- */

static uid_t want_uid;
static gid_t want_gid;
static int foreign; /* entries under root not owned want_uid:want_gid */

static int count_foreign(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)flag, (void)f;
  if (st->st_uid != want_uid || st->st_gid != want_gid) {
    fprintf(stderr, "foreign: %s %u:%u\n", p, (unsigned)st->st_uid, (unsigned)st->st_gid);
    foreign++;
  }
  return 0;
}

static int foreign_entries(uid_t u, gid_t g) {
  want_uid = u, want_gid = g, foreign = 0;
  nftw(root, count_foreign, 16, FTW_PHYS);
  return foreign;
}

static int nfiles;
static int count_files(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)p, (void)st, (void)f;
  nfiles += flag == FTW_F;
  return 0;
}

/* Regular files under root/objects. */
static int object_files(void) {
  char p[300];
  snprintf(p, sizeof p, "%s/objects", root);
  nfiles = 0;
  nftw(p, count_files, 16, FTW_PHYS);
  return nfiles;
}

/* ---- being someone else ---------------------------------------------------- */

/* Run fn(arg) in a child as uid:gid with the one supplementary group sup
 * (0: none); its exit status, 0 meaning every check in it held. */
static int as_user(uid_t uid, gid_t gid, gid_t sup, int (*fn)(int), int arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    gid_t groups[1] = {sup};
    if (setgroups(sup ? 1 : 0, groups) || setgid(gid) || setuid(uid))
      _exit(100);
    _exit(fn(arg));
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 101;
}

/* As the owner (teenycd): put variant v, purge everything (nothing left,
 * no file behind), verify clean.  0 or the number of the failed step. */
static int owner_manages(int v) {
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(false, err);
  if (!s)
    return fprintf(stderr, "owner open: %s\n", err), 1;
  if (put(s, v, err))
    return fprintf(stderr, "owner put: %s\n", err), 2;
  teeny_store_purge_req all = {.all = true};
  teeny_store_counts c = {0, 0, 0};
  if (teeny_store_purge(s, &all, &c, err) || c.left)
    return fprintf(stderr, "owner purge: %s (left %llu)\n", err,
                   (unsigned long long)c.left), 3;
  if (object_files() != 0)
    return 4;
  teeny_store_problems p;
  teeny_store_problems_init(&p);
  teeny_store_verify_opts vo = {.repair = false};
  int rc = teeny_store_verify(s, &vo, &p, err);
  size_t n = p.n;
  teeny_store_problems_close(&p);
  teeny_store_destroy(s);
  return rc || n ? 5 : 0;
}

/* A store made by the owner itself (as teenycd makes it). */
static void owner_creates_store(mode_t root_mode) {
  ck_assert_int_eq(mkdir(root, 0700), 0);
  ck_assert_int_eq(chown(root, OWNER, OWNER), 0);
  ck_assert_int_eq(chmod(root, root_mode), 0);
  ck_assert_int_eq(as_user(OWNER, OWNER, 0, owner_manages, 0), 0);
}

/* ---- root ------------------------------------------------------------------------ */

START_TEST(root_gives_what_it_creates_to_the_owner) {
  owner_creates_store(0750);
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(true, err);
  ck_assert_msg(s != NULL, "%s", err);
  ck_assert_ptr_null(teeny_store_readonly(s));
  for (int i = 1; i <= 12; i++) /* a dozen keys: new shards among them */
    ck_assert_msg(put(s, i, err) == 0, "put: %s", err);
  teeny_store_destroy(s);
  ck_assert_int_eq(foreign_entries(OWNER, OWNER), 0);
  /* the owner stores into a shard root made, and removes root's files */
  kart k1;
  kart_make(&k1, 1);
  char shard[3] = {k1.a.key[0], k1.a.key[1], '\0'};
  ck_assert_int_eq(as_user(OWNER, OWNER, 0, owner_manages, variant_in_shard(shard, true, 13)),
                   0);
}
END_TEST

START_TEST(root_gives_back_a_shard_an_older_run_took) {
  owner_creates_store(0750);
  kart k;
  kart_make(&k, 1);
  char p[300];
  snprintf(p, sizeof p, "%s/objects/%.2s", root, k.a.key);
  ck_assert_int_eq(mkdir(p, 0755), 0); /* root:root, as main's embedded mode left it */
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(true, err);
  ck_assert_msg(s != NULL, "%s", err);
  ck_assert_msg(put(s, 1, err) == 0, "put: %s", err);
  teeny_store_destroy(s);
  ck_assert_int_eq(foreign_entries(OWNER, OWNER), 0);
  ck_assert_int_eq(as_user(OWNER, OWNER, 0, owner_manages, 2), 0);
}
END_TEST

/* ---- a stranger ------------------------------------------------------------------ */

/* As a stranger: read-only, says why, a hit works, a put is refused and
 * leaves nothing behind.  0 or the failed step. */
static int stranger_reads_only(int v) {
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(true, err);
  if (!s)
    return fprintf(stderr, "stranger open: %s\n", err), 1;
  const char *why = teeny_store_readonly(s);
  if (!why || !strstr(why, "belongs to nobody:nogroup"))
    return fprintf(stderr, "readonly: %s\n", why ? why : "(null)"), 2;
  kart k;
  kart_make(&k, v);
  teeny_store_rec r;
  memset(&r, 0, sizeof r);
  if (teeny_store_get(s, k.a.key, TEENY_STORE_GET_PTX, &r, err))
    return fprintf(stderr, "get: %s\n", err), 3;
  teeny_store_rec_close(&r);
  int before = object_files();
  if (put(s, v + 1, err) != TEENY_E_PERM || !strstr(err, "read-only"))
    return fprintf(stderr, "put: %s\n", err), 4;
  teeny_store_destroy(s);
  return object_files() == before ? 0 : 5;
}

/* As the owner: store variant v (and keep it). */
static int owner_puts(int v) {
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(false, err);
  int rc = s ? put(s, v, err) : -1;
  teeny_store_destroy(s);
  return rc ? 1 : 0;
}

/* As the owner, keep the store open (as a running teenycd does, which
 * keeps index.db-shm) until killed; the pid, once it is open. */
static pid_t owner_holds_open(void) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char err[TEENY_STORE_ERR_LEN];
    close(p[0]);
    if (setgroups(0, NULL) || setgid(OWNER) || setuid(OWNER))
      _exit(100);
    teeny_store *s = open_as(false, err);
    teeny_store_stats st;
    if (!s || teeny_store_stats_get(s, &st, err))
      _exit(101);
    (void)!write(p[1], "k", 1);
    pause();
    _exit(0);
  }
  close(p[1]);
  char c;
  ck_assert_int_eq(read(p[0], &c, 1), 1);
  close(p[0]);
  return pid;
}

/* As a stranger with no writer around: a clear refusal when the index has
 * no -shm file (a writer creates it); the owner's handles keep their WAL
 * and -shm at close (store/index.c), so after owner_puts the stranger
 * reads as with a writer. */
static int stranger_refused(int v) {
  char err[TEENY_STORE_ERR_LEN];
  char shm[PATH_MAX];
  snprintf(shm, sizeof shm, "%s/index.db-shm", root);
  if (access(shm, F_OK) == 0)
    return stranger_reads_only(v);
  teeny_store *s = open_as(true, err);
  teeny_store_destroy(s);
  if (s || !strstr(err, "read-only while no writer has it open"))
    return fprintf(stderr, "stranger: %s\n", err), 1;
  return 0;
}

START_TEST(a_stranger_gets_a_read_only_store) {
  owner_creates_store(0755);
  ck_assert_int_eq(as_user(OWNER, OWNER, 0, owner_puts, 7), 0);
  ck_assert_int_eq(as_user(STRANGER, STRANGER, 0, stranger_refused, 7), 0);
  pid_t daemon = owner_holds_open();
  int rc = as_user(STRANGER, STRANGER, 0, stranger_reads_only, 7);
  kill(daemon, SIGTERM);
  waitpid(daemon, NULL, 0);
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(foreign_entries(OWNER, OWNER), 0);
}
END_TEST

/* ---- a member of the group ------------------------------------------------------- */

static int chmod_shared(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)f;
  return chmod(p, flag == FTW_D ? 02770 : 0660);
}

/* Make the owner's store group-shared as docs/client.md tells an admin:
 * every directory g+rwxs, every file g+rw. */
static void share_with_group(void) {
  ck_assert_int_eq(nftw(root, chmod_shared, 16, FTW_PHYS), 0);
}

/* As a member: writable; what it puts is group-writable and setgid.  0 or
 * the failed step. */
static int member_writes(int v) {
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(true, err);
  if (!s)
    return fprintf(stderr, "member open: %s\n", err), 1;
  if (teeny_store_readonly(s))
    return fprintf(stderr, "readonly: %s\n", teeny_store_readonly(s)), 2;
  for (int i = v; i < v + 8; i++)
    if (put(s, i, err))
      return fprintf(stderr, "member put: %s\n", err), 3;
  teeny_store_destroy(s);
  return 0;
}

static gid_t dir_gid_bad;
static int check_group_dirs(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)p, (void)f;
  if (flag == FTW_D && (st->st_gid != OWNER || (st->st_mode & 02070) != 02070))
    dir_gid_bad++;
  if (flag == FTW_F && (st->st_gid != OWNER || !(st->st_mode & S_IRGRP)))
    dir_gid_bad++;
  return 0;
}

START_TEST(a_group_member_writes_a_group_shared_store) {
  owner_creates_store(0750);
  share_with_group();
  ck_assert_int_eq(as_user(MEMBER, MEMBER, OWNER, member_writes, 20), 0);
  char p[300];
  snprintf(p, sizeof p, "%s/objects", root);
  dir_gid_bad = 0;
  nftw(p, check_group_dirs, 16, FTW_PHYS);
  ck_assert_int_eq(dir_gid_bad, 0);
  ck_assert_int_eq(as_user(OWNER, OWNER, 0, owner_manages, 40), 0);
}
END_TEST

/* As a member of an unshared store: read-only, saying so. */
static int member_refused(int v) {
  (void)v;
  char err[TEENY_STORE_ERR_LEN];
  teeny_store *s = open_as(true, err);
  if (!s)
    return fprintf(stderr, "member open: %s\n", err), 1;
  const char *why = teeny_store_readonly(s);
  int rc = why && strstr(why, "not shared with the group") ? 0 : 2;
  if (rc)
    fprintf(stderr, "readonly: %s\n", why ? why : "(null)");
  teeny_store_destroy(s);
  return rc;
}

START_TEST(a_group_member_of_an_unshared_store_writes_nothing) {
  owner_creates_store(0750); /* g+rx only: teenycd's default */
  pid_t daemon = owner_holds_open();
  int rc = as_user(MEMBER, MEMBER, OWNER, member_refused, 0);
  kill(daemon, SIGTERM);
  waitpid(daemon, NULL, 0);
  ck_assert_int_eq(rc, 0);
}
END_TEST

int main(void) {
  if (geteuid() != 0) {
    printf("SKIP: test_store_share needs root (to act as the store's owner and others)\n");
    return 77;
  }
  Suite *su = suite_create("store_share");
  TCase *tc = tcase_create("all");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, root_gives_what_it_creates_to_the_owner);
  tcase_add_test(tc, root_gives_back_a_shard_an_older_run_took);
  tcase_add_test(tc, a_stranger_gets_a_read_only_store);
  tcase_add_test(tc, a_group_member_writes_a_group_shared_store);
  tcase_add_test(tc, a_group_member_of_an_unshared_store_writes_nothing);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
