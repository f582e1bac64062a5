/*
 * tests/integration/test_client_store.c — the daemon's store shared with
 * embedded clients, with teenycd running as the store's owner (nobody, as
 * the service runs as teenyc) and root compiling embedded beside it:
 *
 *   embedded_root   root's embedded compiles leave every file and shard
 *                   the owner's, so teenycd afterwards verifies clean,
 *                   purges every file it counts and stores into the shards
 *                   root made (on main: root-owned shards, files that
 *                   purge counted but could not remove);
 *   damaged_store   a shard teenycd may not write (as older versions left
 *                   them): purge keeps and reports what it cannot remove,
 *                   verify --repair exits 1 with a problem left, a compile
 *                   whose put fails counts as an error in stats.
 *
 * Run by client_itest (test_client.c's table); need root, skip otherwise.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"
#include "tests/integration/test_client.h"

#define NOBODY 65534

/* Start teenycd as nobody on d (made by td_init) over a store it owns. */
static int owner_daemon(tdaemon *d) {
  if (chown(d->dir, NOBODY, NOBODY) != 0)
    return -1;
  d->run_uid = NOBODY;
  d->run_gid = NOBODY;
  return td_start(d, NULL, NULL);
}

/* Compile spec i (distinct keys) through c; 0 or the error. */
static int compile_spec(teeny_client *c, int i, char key[65]) {
  static const char *const kernels[] = {"vector_add", "softmax"};
  static const char *const dts[] = {"f32", "f16", "bf16"};
  size_t len;
  char *src = tc_kernel_source(kernels[i % 2], &len);
  if (!src)
    return -1;
  teeny_dtype_binding dt = {"D", dts[(i / 2) % 3]};
  teeny_const_binding ct = {"BLOCK_SIZE", (int64_t)64 << (i / 6)};
  teeny_compile_req req = {.source = src, .source_len = len, .kernel = kernels[i % 2],
                           .dtypes = &dt, .ndtypes = 1, .consts = &ct, .nconsts = 1};
  teeny_client_result *r = NULL;
  int rc = teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r);
  if (!rc && key)
    snprintf(key, 65, "%s", r->art.key);
  teeny_client_result_free(r);
  free(src);
  return rc;
}

/* The key spec i would have (the front end, in process: no compile). */
static int spec_key(int i, char key[65]) {
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE, .memo_entries = -1};
  teeny_client *c = NULL;
  int rc = teeny_client_open(&c, &o);
  if (!rc)
    rc = compile_spec(c, i, key);
  teeny_client_close(c);
  return rc;
}

/* Run teenyctl --socket d->sock ARGS; its exit status, output in out. */
static int ctl(const tdaemon *d, const char *args, char *out, size_t n) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s --socket %s %s 2>&1", getenv("TEENYCTL_BIN"), d->sock, args);
  FILE *p = popen(cmd, "r");
  size_t got = p ? fread(out, 1, n - 1, p) : 0;
  out[got] = '\0';
  int st = p ? pclose(p) : -1;
  fprintf(stderr, "teenyctl %s -> %d\n%s", args, WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- walking the store ----------------------------------------------------- */

static int walk_count;
static int count_foreign(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)flag, (void)f;
  if (st->st_uid != NOBODY || st->st_gid != NOBODY) {
    fprintf(stderr, "not the owner's: %s (%u:%u)\n", p, (unsigned)st->st_uid,
            (unsigned)st->st_gid);
    walk_count++;
  }
  return 0;
}

static int count_files(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)p, (void)st, (void)f;
  walk_count += flag == FTW_F;
  return 0;
}

static int count_dirs(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)p, (void)st;
  walk_count += flag == FTW_D && f->level == 1;
  return 0;
}

/* fn over everything under d->cache/sub; what it counted. */
typedef int (*walker)(const char *, const struct stat *, int, struct FTW *);

static int walk(const tdaemon *d, const char *sub, walker fn) {
  char p[300];
  snprintf(p, sizeof p, "%s%s", d->cache, sub);
  walk_count = 0;
  nftw(p, fn, 16, FTW_PHYS);
  return walk_count;
}

/* ---- embedded as root beside the daemon -------------------------------------- */

int it_client_embedded_root(void) {
  tdaemon d;
  teeny_client *c = NULL;
  char out[8192], key[65];
  bool failed = true;
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: needs root (teenycd as nobody, embedded as root)\n");
    return IT_SKIP;
  }
  CHECK(td_init(&d) == 0 && owner_daemon(&d) == 0);
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, d.sock, d.cache)) != NULL);
  CHECK_INT(compile_spec(c, 0, key), ==, 0);
  teeny_client_close(c);
  c = NULL;
  CHECK_INT(td_stop(&d), !=, -1); /* the daemon is down: root compiles embedded */
  int shards = walk(&d, "/objects", count_dirs);
  CHECK((c = it_client_open(TEENY_MODE_EMBEDDED, d.sock, d.cache)) != NULL);
  CHECK(strcmp(teeny_client_notice(c), "") == 0); /* root may write */
  for (int i = 1; i <= 12; i++)
    CHECK_INT(compile_spec(c, i, key), ==, 0);
  teeny_client_close(c);
  c = NULL;
  CHECK_INT(walk(&d, "/objects", count_dirs), >, shards); /* root made shards */
  CHECK_INT(walk(&d, "", count_foreign), ==, 0);          /* all the owner's */
  /* the owner's daemon again: clean, and it manages every file */
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(ctl(&d, "verify", out, sizeof out), ==, 0);
  CHECK(strstr(out, "0 problems"));
  CHECK_INT(ctl(&d, "purge --all", out, sizeof out), ==, 0);
  CHECK(strstr(out, "removed 13 entries"));
  CHECK_INT(walk(&d, "/objects", count_files), ==, 0); /* what it counted went */
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, d.sock, d.cache)) != NULL);
  for (int i = 1; i <= 12; i++) /* into the shards root made */
    CHECK_INT(compile_spec(c, i, key), ==, 0);
  CHECK_INT(walk(&d, "/objects", count_files), ==, 36);
  CHECK_INT(ctl(&d, "--json stats", out, sizeof out), ==, 0);
  CHECK(strstr(out, "\"errors\": 0") && strstr(out, "\"store_errors\": 0"));
  failed = false;
fail:
  teeny_client_close(c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a shard the daemon may not write ------------------------------------------ */

/* Make objects/{key[0..1]} root's, 0755, as older embedded runs left it. */
static int take_shard(const tdaemon *d, const char *key) {
  char p[300];
  snprintf(p, sizeof p, "%s/objects/%.2s", d->cache, key);
  if (mkdir(p, 0755) != 0 && errno != EEXIST)
    return -1;
  return chown(p, 0, 0) == 0 && chmod(p, 0755) == 0 ? 0 : -1;
}

int it_client_damaged_store(void) {
  tdaemon d;
  teeny_client *c = NULL;
  char out[8192], k1[65], k2[65], p[400];
  bool failed = true;
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: needs root (teenycd as nobody, a shard owned by root)\n");
    return IT_SKIP;
  }
  CHECK(td_init(&d) == 0 && owner_daemon(&d) == 0);
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, d.sock, d.cache)) != NULL);
  CHECK_INT(compile_spec(c, 0, k1), ==, 0);
  CHECK(take_shard(&d, k1) == 0);
  /* an orphan teenycd cannot remove: verify --repair must say 1 */
  snprintf(p, sizeof p, "%s/objects/%.2s/orphan_%.2s%062d.o", d.cache, k1, k1, 0);
  FILE *f = fopen(p, "w");
  CHECK(f && fclose(f) == 0);
  CHECK_INT(ctl(&d, "verify --repair", out, sizeof out), ==, 1);
  CHECK(strstr(out, "could not be repaired"));
  /* purge cannot remove k1's files: it keeps the entry and says so */
  CHECK_INT(ctl(&d, "purge --all", out, sizeof out), ==, 1);
  snprintf(p, sizeof p, "objects/%.2s", k1);
  CHECK(strstr(out, "could not be removed") && strstr(out, p));
  CHECK_INT(ctl(&d, "--json list", out, sizeof out), ==, 0);
  CHECK(strstr(out, k1)); /* the row it could not honour stays */
  /* a compile the store refuses is an error in stats */
  CHECK(spec_key(1, k2) == 0 && take_shard(&d, k2) == 0);
  CHECK_INT(compile_spec(c, 1, NULL), ==, 0); /* answered, with a warning */
  CHECK_INT(ctl(&d, "--json stats", out, sizeof out), ==, 0);
  CHECK(strstr(out, "\"store_errors\": 1") && !strstr(out, "\"errors\": 0"));
  failed = false;
fail:
  teeny_client_close(c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
