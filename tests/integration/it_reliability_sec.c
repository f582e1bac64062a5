/*
 * tests/integration/it_reliability_sec.c — security at the daemon's
 * boundaries, end to end (issue 6): hostile names in every field that
 * could reach a path are refused and nothing in the store changes;
 * symlinks planted in the store are never followed; what teenycd creates
 * has the documented modes; slow, stalled and non-reading clients do not
 * hold up anyone else; a non-admin cannot purge, repair, zero or shut down
 * and leaves the store exactly as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <msgpack.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/integration/reliability.h"
#include "common/common.h"

#define NOBODY 65534


static const char *const va_f32[] = {"D=f32", "BLOCK_SIZE=1024", NULL};

/* ---- raw requests ------------------------------------------------------------ */

typedef struct raw {
  msgpack_sbuffer sb;
  msgpack_packer pk;
} raw;

static void raw_init(raw *r) {
  msgpack_sbuffer_init(&r->sb);
  msgpack_packer_init(&r->pk, &r->sb, msgpack_sbuffer_write);
}

static void raw_strn(raw *r, const char *s, size_t n) {
  msgpack_pack_str(&r->pk, n);
  msgpack_pack_str_body(&r->pk, s, n);
}

static void raw_str(raw *r, const char *s) { raw_strn(r, s, strlen(s)); }

static int raw_send(tclient *c, raw *r) {
  size_t n = r->sb.size;
  unsigned char hdr[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8), (unsigned char)n};
  int rc = tc_send_raw(c, hdr, 4) || tc_send_raw(c, r->sb.data, r->sb.size);
  msgpack_sbuffer_destroy(&r->sb);
  return rc ? -1 : 0;
}

/* A compile request with every field given as raw bytes (so NULs and
 * over-long strings reach the daemon): kernel, one dtype binding
 * dname=dval, target, filename (NULL: absent). */
static int send_compile_raw(tclient *c, uint64_t id, const char *src,
                            size_t srclen, const char *kernel, size_t klen,
                            const char *dname, const char *dval,
                            const char *target, const char *filename) {
  raw r;
  raw_init(&r);
  msgpack_pack_map(&r.pk, 5 + (target != NULL) + (filename != NULL));
  raw_str(&r, "op");
  raw_str(&r, "compile");
  raw_str(&r, "id");
  msgpack_pack_uint64(&r.pk, id);
  raw_str(&r, "source");
  msgpack_pack_bin(&r.pk, srclen);
  msgpack_pack_bin_body(&r.pk, src, srclen);
  raw_str(&r, "kernel");
  raw_strn(&r, kernel, klen);
  raw_str(&r, "dtypes");
  msgpack_pack_map(&r.pk, 1);
  raw_str(&r, dname);
  raw_str(&r, dval);
  if (target) {
    raw_str(&r, "target");
    raw_str(&r, target);
  }
  if (filename) {
    raw_str(&r, "filename");
    raw_str(&r, filename);
  }
  return raw_send(c, &r);
}

/* The next reply's status and error text. */
static int next_status(tclient *c, teeny_proto_op op, uint64_t *id,
                       char *err, size_t n) {
  teeny_msg_reply rep;
  int rc = tc_recv(c, op, &rep, 60000);
  if (rc)
    return rc;
  *id = rep.id;
  return tc_reply_status(&rep, err, n);
}

/* ---- hostile names ------------------------------------------------------------- */

typedef struct name_case {
  const char *what;     /* for messages */
  const char *kernel;   /* kernel name bytes */
  size_t klen;          /* their count (NULs allowed) */
  const char *dname, *dval; /* the one dtype binding */
  const char *target;   /* or NULL */
  const char *filename; /* or NULL */
  bool syntax_error;    /* send a broken source */
  int want;             /* status */
} name_case;

#define K(s) s, sizeof s - 1
static const name_case name_cases[] = {
    {"traversal", K("../../etc/passwd"), "D", "f32", NULL, NULL, false,
     TEENY_E_NAME},
    {"absolute path", K("/etc/passwd"), "D", "f32", NULL, NULL, false,
     TEENY_E_NAME},
    {"dot-dot", K(".."), "D", "f32", NULL, NULL, false, TEENY_E_NAME},
    {"dot", K("."), "D", "f32", NULL, NULL, false, TEENY_E_NAME},
    {"empty", K(""), "D", "f32", NULL, NULL, false, TEENY_E_NAME},
    {"slash inside", K("vector_add/../../x"), "D", "f32", NULL, NULL, false,
     TEENY_E_NAME},
    {"extension", K("vector_add.o"), "D", "f32", NULL, NULL, false,
     TEENY_E_NAME},
    {"newline", K("vector_add\n"), "D", "f32", NULL, NULL, false,
     TEENY_E_NAME},
    {"non-ASCII", K("v\xc3\xa9" "ctor"), "D", "f32", NULL, NULL, false,
     TEENY_E_NAME},
    {"NUL inside", K("vector_add\0/../../etc/passwd"), "D", "f32", NULL, NULL,
     false, TEENY_E_PROTO},
    {"65 characters",
     K("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"),
     "D", "f32", NULL, NULL, false, TEENY_E_NAME},
    {"dtype value traversal", K("vector_add"), "D", "../../etc/passwd", NULL,
     NULL, false, TEENY_E_BINDING},
    {"dtype name traversal", K("vector_add"), "../../etc/passwd", "f32", NULL,
     NULL, false, TEENY_E_BINDING},
    {"target traversal", K("vector_add"), "D", "f32", "../../etc/passwd",
     NULL, false, TEENY_E_INVAL},
    {"filename traversal (diagnostics only)", K("vector_add"), "D", "f32",
     NULL, "/etc/passwd", true, TEENY_E_COMPILE},
};
#undef K

/* A 300-byte name: over the protocol's 255. */
static int send_huge_name(tclient *c, uint64_t id, const char *src, size_t n) {
  char name[300];
  memset(name, 'k', sizeof name);
  return send_compile_raw(c, id, src, n, name, sizeof name, "D", "f32", NULL,
                          NULL);
}

/* show / list / purge with path-like arguments. */
static int other_ops(tclient *c) {
  char err[256];
  uint64_t id;
  int bad = 0;
  raw r;
  raw_init(&r);
  msgpack_pack_map(&r.pk, 3);
  raw_str(&r, "op");
  raw_str(&r, "show");
  raw_str(&r, "id");
  msgpack_pack_uint64(&r.pk, 500);
  raw_str(&r, "key");
  raw_str(&r, "../../etc/passwd");
  int st = raw_send(c, &r) ? -1 : next_status(c, TEENY_OP_SHOW, &id, err,
                                                sizeof err);
  if (st != TEENY_E_PROTO)
    bad++, fprintf(stderr, "show ../../etc/passwd: %d %s\n", st, err);
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  req.u.list.name = "../../*";
  teeny_msg_reply rep;
  if (tc_call(c, &req, &rep) || rep.status || rep.u.list.nentries != 0)
    bad++, fprintf(stderr, "list ../../*: not an empty list\n");
  teeny_msg_reply_free(&rep);
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_PURGE;
  req.u.purge.name = "/etc/*";
  if (tc_call(c, &req, &rep) || rep.status || rep.u.purge.removed != 0)
    bad++, fprintf(stderr, "purge /etc/*: removed something\n");
  teeny_msg_reply_free(&rep);
  return bad;
}

int it_hostile_names(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char *before = NULL, *after = NULL, *src = NULL;
  struct stat pw0, pw1;
  size_t n;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK((src = tc_kernel_source("vector_add", &n)) != NULL);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(rel_compile(&c, src, n, "vector_add", va_f32, NULL), ==, 0);
  usleep(100000);
  CHECK(stat("/etc/passwd", &pw0) == 0);
  CHECK((before = rel_tree(d.cache)) != NULL);
  uint64_t errors0 = (uint64_t)rel_counter(d.sock, "errors");
  for (size_t i = 0; i < sizeof name_cases / sizeof *name_cases; i++) {
    const name_case *k = &name_cases[i];
    char bad_src[4096], err[256] = "";
    int m = snprintf(bad_src, sizeof bad_src, "%s\nvoid broken( {\n", src);
    uint64_t id = 0;
    int st = send_compile_raw(&c, 100 + i, k->syntax_error ? bad_src : src,
                              k->syntax_error ? (size_t)m : n, k->kernel,
                              k->klen, k->dname, k->dval, k->target,
                              k->filename)
                 ? -1
                 : next_status(&c, TEENY_OP_COMPILE, &id, err, sizeof err);
    fprintf(stderr, "%-38s %-8s %.80s\n", k->what, teeny_err_name(st), err);
    CHECK_INT(st, ==, k->want);
    CHECK_INT(id, ==, 100 + i);
  }
  uint64_t id;
  char err[256];
  CHECK(send_huge_name(&c, 99, src, n) == 0);
  CHECK_INT(next_status(&c, TEENY_OP_COMPILE, &id, err, sizeof err), ==,
            TEENY_E_PROTO);
  fprintf(stderr, "%-38s PROTO    %.80s\n", "300-byte name", err);
  CHECK_INT(other_ops(&c), ==, 0);
  CHECK_INT(tc_ping(&c), ==, 0);
  usleep(200000);
  /* nothing in the store changed, nothing appeared next to it */
  CHECK((after = rel_tree(d.cache)) != NULL);
  if (strcmp(before, after) != 0)
    fprintf(stderr, "store before:\n%s\nafter:\n%s\n", before, after);
  CHECK(strcmp(before, after) == 0);
  CHECK(stat("/etc/passwd", &pw1) == 0);
  CHECK(pw0.st_mtim.tv_sec == pw1.st_mtim.tv_sec &&
        pw0.st_mtim.tv_nsec == pw1.st_mtim.tv_nsec);
  char path[300];
  snprintf(path, sizeof path, "%s/etc", d.dir);
  CHECK(access(path, F_OK) != 0);
  snprintf(path, sizeof path, "%s/etc", d.cache);
  CHECK(access(path, F_OK) != 0);
  CHECK_INT(rel_counter(d.sock, "entries"), ==, 1);
  CHECK_INT((uint64_t)rel_counter(d.sock, "errors") - errors0, >=, 17);
  failed = false;
fail:
  free(before);
  free(after);
  free(src);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- symlinks planted in the store ------------------------------------------------ */

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

/* A fresh compile of vector_add f32/1024 through the daemon: 0 when its
 * PTX is want (and *cache gets the cache field). */
static int va_matches(const char *sock, const char *src, size_t n,
                      const char *want, size_t wlen, int *cache) {
  tclient c;
  tc_init(&c);
  if (tc_open(&c, sock))
    return -1;
  tc_compile t;
  tc_compile_init(&t, src, n, "vector_add", va_f32);
  teeny_msg_reply rep;
  int rc = tc_call(&c, &t.req, &rep);
  if (!rc) {
    rc = rep.status;
    if (!rc && (rep.u.compile.art.ptx_len != wlen ||
                memcmp(rep.u.compile.art.ptx, want, wlen) != 0))
      rc = -2;
    if (!rc)
      *cache = (int)rep.u.compile.cache;
    teeny_msg_reply_free(&rep);
  }
  tc_close(&c);
  return rc;
}

/* Start must fail (exit 1) with want in the log; the outside is untouched. */
static int start_refused(tdaemon *d, const char *want) {
  unlink(d->log);
  pid_t pid = td_spawn(d, NULL, NULL, -1);
  int st = td_wait(pid, 20000);
  d->pid = 0;
  char *log = tc_read_file(d->log, NULL);
  int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && log &&
           strstr(log, want);
  if (!ok)
    fprintf(stderr, "start with a planted symlink: status 0x%x, log: %s\n", st,
            log ? log : "");
  free(log);
  return ok;
}

int it_store_symlinks(void) {
  tdaemon d;
  bool failed = true;
  char *src = NULL, *ptx = NULL, *outside0 = NULL, *outside1 = NULL;
  size_t n, plen = 0;
  char key[65], obj[512], outside[300], secret[400], path[600], path2[600];
  int cache = -1;
  CHECK(td_init(&d) == 0);
  CHECK((src = tc_kernel_source("vector_add", &n)) != NULL);
  {
    tc_compile t;
    tc_compile_init(&t, src, n, "vector_add", va_f32);
    teeny_artifact *a = NULL;
    CHECK(teeny_compile(&t.req.u.compile.req, TEENY_EMIT_PTX, &a, NULL) == 0);
    memcpy(key, a->key, 65);
    ptx = strndup(a->ptx, a->ptx_len);
    plen = a->ptx_len;
    teeny_artifact_destroy(a);
  }
  snprintf(outside, sizeof outside, "%s/outside", d.dir);
  CHECK(mkdir(outside, 0755) == 0);
  snprintf(secret, sizeof secret, "%s/secret.ptx", outside);
  CHECK(write_file(secret, "// SECRET: not a kernel of this store\n") == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(va_matches(d.sock, src, n, ptx, plen, &cache), ==, 0);
  CHECK_INT(td_stop(&d), ==, 0);
  /* 1: the .o file becomes a symlink to a file outside the store */
  CHECK(rel_object_path(d.cache, key, "o", obj, sizeof obj) == 0);
  CHECK(unlink(obj) == 0 && symlink(secret, obj) == 0);
  CHECK((outside0 = rel_tree(outside)) != NULL);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(va_matches(d.sock, src, n, ptx, plen, &cache), ==, 0);
  fprintf(stderr, "object file symlink: answered '%s' (not the link target)\n",
          it_cache_name((teeny_msg_cache)cache));
  CHECK(cache != TEENY_CACHE_DISK && cache != TEENY_CACHE_MEMORY);
  CHECK(tc_verify_at(d.sock, true) >= 0);
  CHECK_INT(tc_verify_at(d.sock, false), ==, 0);
  struct stat st;
  CHECK(lstat(obj, &st) == 0 && S_ISREG(st.st_mode)); /* replaced by a file */
  CHECK_INT(td_stop(&d), ==, 0);
  /* 2: a shard directory becomes a symlink to a copy outside */
  snprintf(path, sizeof path, "%s/objects/%.2s", d.cache, key);
  snprintf(path2, sizeof path2, "%s/shard", outside);
  CHECK(rename(path, path2) == 0 && symlink(path2, path) == 0);
  free(outside0);
  CHECK((outside0 = rel_tree(outside)) != NULL);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(va_matches(d.sock, src, n, ptx, plen, &cache), ==, 0);
  fprintf(stderr, "shard directory symlink: answered '%s'\n",
          it_cache_name((teeny_msg_cache)cache));
  CHECK(cache != TEENY_CACHE_DISK && cache != TEENY_CACHE_MEMORY);
  /* the lookup found the link unusable and repaired the entry away:
   * the link itself went, not what it pointed at */
  CHECK(lstat(path, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK_INT(tc_verify_at(d.sock, false), ==, 0);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK((outside1 = rel_tree(outside)) != NULL);
  CHECK(strcmp(outside0, outside1) == 0); /* nothing outside was touched */
  /* 3: objects/, tmp/ and index.db as symlinks: teenycd refuses to start */
  static const char *const parts[] = {"tmp", "objects", "index.db"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", d.cache, parts[i]);
    snprintf(path2, sizeof path2, "%s/moved-%s", outside, parts[i]);
    CHECK(rename(path, path2) == 0 && symlink(path2, path) == 0);
    free(outside0);
    CHECK((outside0 = rel_tree(outside)) != NULL);
    CHECK(start_refused(&d, "symlink") || start_refused(&d, parts[i]));
    free(outside1);
    CHECK((outside1 = rel_tree(outside)) != NULL);
    CHECK(strcmp(outside0, outside1) == 0);
    CHECK(unlink(path) == 0 && rename(path2, path) == 0);
    fprintf(stderr, "%s as a symlink: refused at startup\n", parts[i]);
  }
  /* 4: the store root itself */
  snprintf(path2, sizeof path2, "%s/real-cache", d.dir);
  CHECK(rename(d.cache, path2) == 0 && symlink(path2, d.cache) == 0);
  CHECK(start_refused(&d, "symlink") || start_refused(&d, "cache"));
  fprintf(stderr, "the root as a symlink: refused at startup\n");
  CHECK(unlink(d.cache) == 0 && rename(path2, d.cache) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK_INT(tc_verify_at(d.sock, false), ==, 0);
  failed = false;
fail:
  free(src);
  free(ptx);
  free(outside0);
  free(outside1);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- modes on disk ------------------------------------------------------------------ */

/* Every file and directory under dir: directories exactly dmode, files
 * exactly fmode.  Problems found. */
static int check_modes(const char *dir, unsigned dmode, unsigned fmode) {
  char *tree = rel_tree(dir);
  int bad = 0;
  for (char *line = tree, *nl; line && *line; line = nl + 1) {
    nl = strchr(line, '\n');
    *nl = '\0';
    char name[1024];
    unsigned mode;
    if (sscanf(line, "%1023s %o", name, &mode) != 2)
      continue;
    unsigned want = S_ISDIR(mode) ? dmode : fmode;
    if (S_ISLNK(mode) || (mode & 07777) != want) {
      fprintf(stderr, "%s/%s: mode %04o, want %04o\n", dir, name,
              mode & 07777, want);
      bad++;
    }
  }
  free(tree);
  return bad;
}

static int mode_of(const char *path) {
  struct stat st;
  return lstat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

int it_modes(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char *src = NULL;
  size_t n;
  mode_t old = umask(0); /* the daemon must not rely on the umask */
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK((src = tc_kernel_source("vector_add", &n)) != NULL);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(rel_compile(&c, src, n, "vector_add", va_f32, NULL), ==, 0);
  tc_close(&c);
  fprintf(stderr, "socket %04o, store root %04o (umask 0)\n",
          mode_of(d.sock), mode_of(d.cache));
  CHECK_INT(mode_of(d.sock), ==, 0660);
  CHECK_INT(mode_of(d.cache), ==, 0750);
  CHECK_INT(check_modes(d.cache, 0750, 0640), ==, 0);
  CHECK_INT(td_stop(&d), ==, 0);
  /* the configured socket mode, exactly; a stricter umask narrows files */
  umask(027);
  const char *args[] = {"--socket-mode", "0600", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK_INT(mode_of(d.sock), ==, 0600);
  CHECK_INT(check_modes(d.cache, 0750, 0640), ==, 0);
  failed = false;
fail:
  umask(old);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- slow and stalled clients ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* count calls alternating ping and a memory hit; p99 and max in us. */
static int measure(tclient *c, const char *src, size_t n, int count,
                   uint64_t *p99, uint64_t *mx) {
  uint64_t *lat = calloc((size_t)count, sizeof *lat);
  int rc = 0;
  for (int i = 0; i < count && !rc; i++) {
    uint64_t t0 = tc_now_us();
    rc = i % 2 ? tc_ping(c) : rel_compile(c, src, n, "vector_add", va_f32,
                                          NULL);
    lat[i] = tc_now_us() - t0;
    usleep(2000);
  }
  qsort(lat, (size_t)count, sizeof *lat, cmp_u64);
  *p99 = lat[count * 99 / 100];
  *mx = lat[count - 1];
  free(lat);
  return rc;
}

#define NSTALL 200
#define NTRICKLE 40
#define NSILENT 20

typedef struct trickler {
  const char *sock;
  volatile int *stop;
  int closed; /* connections the daemon closed */
} trickler;

/* NTRICKLE connections that send a frame one byte every 250 ms. */
static void *trickle(void *p) {
  trickler *t = p;
  tclient *cs = calloc(NTRICKLE, sizeof *cs); /* 256 KiB each */
  /* a 64-byte frame at 4 bytes a second: it would take 17 s */
  static const char frame[] = "\x00\x00\x00\x40"
                              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
  size_t at[NTRICKLE] = {0};
  if (!cs)
    return NULL;
  for (int i = 0; i < NTRICKLE; i++) {
    tc_init(&cs[i]);
    tc_open(&cs[i], t->sock);
  }
  while (!*t->stop) {
    for (int i = 0; i < NTRICKLE; i++)
      if (cs[i].fd >= 0 && at[i] < sizeof frame - 1) {
        if (send(cs[i].fd, frame + at[i], 1, MSG_NOSIGNAL) != 1) {
          tc_close(&cs[i]);
          t->closed++;
          continue;
        }
        at[i]++;
      }
    usleep(250000);
  }
  for (int i = 0; i < NTRICKLE; i++)
    tc_close(&cs[i]);
  free(cs);
  return NULL;
}

int it_slow_clients(void) {
  tdaemon d;
  tclient c, greedy;
  tclient *stall = calloc(NSTALL + NSILENT, sizeof *stall);
  bool failed = true;
  char *src = NULL;
  size_t n;
  pthread_t tt;
  int trickling = 0;
  volatile int stop = 0;
  trickler tr = {NULL, &stop, 0};
  tc_init(&c);
  tc_init(&greedy);
  for (int i = 0; stall && i < NSTALL + NSILENT; i++)
    tc_init(&stall[i]);
  CHECK(stall != NULL);
  CHECK(td_init(&d) == 0);
  CHECK((src = tc_kernel_source("vector_add", &n)) != NULL);
  /* all 262 connections are this process's uid: over the default
   * per-uid share (256), which integration_uid_limits tests */
  const char *args[] = {"--read-timeout", "3s", "--idle-timeout", "4s",
                        "--log-level", "info", "--max-connections-per-uid",
                        "1024", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  long rss0 = rel_status_kb(d.pid, "VmRSS");
  CHECK(tc_open(&c, d.sock) == 0);
  uint64_t p99_base, max_base, p99_att, max_att;
  CHECK_INT(measure(&c, src, n, 200, &p99_base, &max_base), ==, 0);
  /* the attack: half frames, silence, a trickle, a client that never
   * reads its replies */
  for (int i = 0; i < NSTALL; i++) {
    CHECK(tc_open(&stall[i], d.sock) == 0);
    CHECK(tc_send_raw(&stall[i], "\x00\x00\x10\x00\x83\xa2op\xa7", 9) == 0);
  }
  for (int i = NSTALL; i < NSTALL + NSILENT; i++)
    CHECK(tc_connect(&stall[i], d.sock) == 0);
  tr.sock = d.sock;
  CHECK(pthread_create(&tt, NULL, trickle, &tr) == 0);
  trickling = 1;
  CHECK(tc_open(&greedy, d.sock) == 0);
  int one = 4096;
  setsockopt(greedy.fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof one);
  struct timeval tv = {0, 300000}; /* it stops when the daemon does */
  setsockopt(greedy.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int greedy_sent = 0;
  for (int i = 0; i < 3000; i++, greedy_sent++) {
    tc_compile t;
    tc_compile_init(&t, src, n, "vector_add", va_f32);
    if (tc_send(&greedy, &t.req))
      break;
  }
  CHECK_INT(measure(&c, src, n, 400, &p99_att, &max_att), ==, 0);
  fprintf(stderr,
          "ping/hit latency: p99 %.2f ms, max %.2f ms before; p99 %.2f ms, "
          "max %.2f ms with %d stalled, %d silent, %d trickling and 1 "
          "non-reading connection (%d requests sent before the daemon "
          "stopped reading it)\n",
          p99_base / 1e3, max_base / 1e3, p99_att / 1e3, max_att / 1e3,
          NSTALL, NSILENT, NTRICKLE, greedy_sent);
  CHECK(p99_att < 50000 || p99_att < 10 * p99_base);
  /* the read timeout closes the half frames and the trickles, the idle
   * timeout the silent ones; each half frame gets TIMEOUT first */
  usleep(4800000);
  int closed = 0, timeouts = 0;
  for (int i = 0; i < NSTALL + NSILENT; i++) {
    teeny_msg_reply rep;
    int rc;
    while (!(rc = tc_recv(&stall[i], TEENY_OP_NONE, &rep, 100))) {
      if (i < NSTALL)
        timeouts += rep.status == TEENY_E_TIMEOUT;
      teeny_msg_reply_free(&rep);
    }
    closed += rc == TEENY_E_CLOSED || rc == TEENY_E_IO;
  }
  stop = 1;
  pthread_join(tt, NULL);
  trickling = 0;
  fprintf(stderr, "closed by the daemon: %d of %d stalled/silent (%d told "
                  "TIMEOUT), %d of %d trickling\n",
          closed, NSTALL + NSILENT, timeouts, tr.closed, NTRICKLE);
  /* and the client that never read its replies was dropped too */
  bool greedy_closed = tc_closed(&greedy, 5000);
  char *log = tc_read_file(d.log, NULL);
  bool logged = log && strstr(log, "reply bytes unread");
  free(log);
  fprintf(stderr, "non-reading client closed: %s\n",
          greedy_closed && logged ? "yes" : "NO");
  CHECK(greedy_closed && logged);
  CHECK_INT(closed, ==, NSTALL + NSILENT);
  CHECK_INT(timeouts, ==, NSTALL);
  CHECK_INT(tr.closed, ==, NTRICKLE);
  long rss = rel_status_kb(d.pid, "VmRSS");
  fprintf(stderr, "daemon VmRSS %ld KiB before, %ld KiB after\n", rss0, rss);
  if (!TEENY_ASAN)
    CHECK(rss < rss0 + 96 * 1024);
  tc_close(&c); /* idle for longer than --idle-timeout: closed */
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(tc_ping(&c), ==, 0);
  failed = false;
fail:
  stop = 1;
  if (trickling)
    pthread_join(tt, NULL);
  for (int i = 0; stall && i < NSTALL + NSILENT; i++)
    tc_close(&stall[i]);
  free(stall);
  tc_close(&greedy);
  tc_close(&c);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a non-admin changes nothing ---------------------------------------------------- */

/* Run teenyctl ARGS as nobody: its exit status. */
static int ctl_as_nobody(const char *sock, const char *const *args) {
  const char *bin = getenv("TEENYCTL_BIN");
  if (!bin)
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    const char *argv[16] = {bin, "--socket", sock};
    int k = 3;
    for (int i = 0; args[i] && k < 15; i++)
      argv[k++] = args[i];
    argv[k] = NULL;
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
      _exit(100);
    execv(bin, (char *const *)argv);
    _exit(127);
  }
  int st = td_wait(pid, 30000);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int it_nonadmin(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  char *src = NULL, *before = NULL, *after = NULL;
  size_t n;
  tc_init(&c);
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: needs root to run teenyctl as nobody\n");
    return IT_SKIP;
  }
  if (!getenv("TEENYCTL_BIN")) {
    fprintf(stderr, "SKIP: TEENYCTL_BIN is not set\n");
    return IT_SKIP;
  }
  CHECK(td_init(&d) == 0);
  CHECK((src = tc_kernel_source("vector_add", &n)) != NULL);
  const char *args[] = {"--socket-mode", "0666", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(rel_compile(&c, src, n, "vector_add", va_f32, NULL), ==, 0);
  /* an orphan a repairing verify would delete */
  char orphan[512];
  snprintf(orphan, sizeof orphan, "%s/objects/00/orphan_%064d.o", d.cache, 0);
  char shard[512];
  snprintf(shard, sizeof shard, "%s/objects/00", d.cache);
  mkdir(shard, 0750);
  CHECK(write_file(orphan, "orphan\n") == 0);
  usleep(100000);
  CHECK((before = rel_tree(d.cache)) != NULL);
  double requests0 = rel_counter(d.sock, "requests");
  static const char *const purge[] = {"purge", "--all", NULL};
  static const char *const purge_name[] = {"purge", "--name", "*", NULL};
  static const char *const repair[] = {"verify", "--repair", NULL};
  static const char *const zero[] = {"stats", "--zero", NULL};
  static const char *const shut[] = {"shutdown", NULL};
  static const char *const verify[] = {"verify", NULL};
  static const char *const list[] = {"list", NULL};
  struct {
    const char *const *args;
    int want;
  } runs[] = {{purge, 4}, {purge_name, 4}, {repair, 4}, {zero, 4},
              {shut, 4},  {verify, 1},     {list, 0}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    int st = ctl_as_nobody(d.sock, runs[i].args);
    fprintf(stderr, "teenyctl %s %s as nobody: exit %d\n", runs[i].args[0],
            runs[i].args[1] ? runs[i].args[1] : "", st);
    CHECK_INT(st, ==, runs[i].want);
  }
  /* the store, the counters and the daemon are as they were */
  CHECK((after = rel_tree(d.cache)) != NULL);
  CHECK(strcmp(before, after) == 0);
  CHECK(access(orphan, F_OK) == 0);
  CHECK_INT(rel_counter(d.sock, "entries"), ==, 1);
  CHECK(rel_counter(d.sock, "requests") > requests0);
  CHECK_INT(tc_ping(&c), ==, 0);
  failed = false;
fail:
  free(src);
  free(before);
  free(after);
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
