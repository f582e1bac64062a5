/*
 * tests/integration/test_client_modes.c — how libteenyc-client finds its
 * way: the thin library maps no compiler until one is needed (daemon mode
 * never loads libteenyc-embedded or LLVM, /proc/self/maps says), socket
 * discovery ($TEENYCD_SOCKET, the per-user socket, the system socket; the
 * first that answers; what was tried and why each failed), and auto
 * mode's fallback and its one notice.
 *
 * Run by client_itest (test_client.c's table), against the real teenycd.
 */
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"
#include "tests/integration/test_client.h"

#define TEENY_SYSTEM_STORE_PATH "/var/cache/teenyc" /* common/common.h */

/* An example kernel's request (D and BLOCK_SIZE bound); src is owned. */
typedef struct kreq {
  teeny_compile_req req;
  teeny_dtype_binding dt;
  teeny_const_binding ct;
  char *src;
} kreq;

static int kreq_init(kreq *k, const char *kernel, const char *dtype, int64_t block) {
  size_t len;
  memset(k, 0, sizeof *k);
  if (!(k->src = tc_kernel_source(kernel, &len)))
    return -1;
  k->dt = (teeny_dtype_binding){"D", dtype};
  k->ct = (teeny_const_binding){"BLOCK_SIZE", block};
  k->req = (teeny_compile_req){.source = k->src, .source_len = len, .filename = kernel,
                               .kernel = kernel, .dtypes = &k->dt, .ndtypes = 1,
                               .consts = &k->ct, .nconsts = 1};
  return 0;
}

teeny_client *it_client_open(teeny_client_mode mode, const char *socket,
                             const char *cache_dir) {
  teeny_client_opts o = {.mode = mode, .socket_path = socket, .cache_dir = cache_dir,
                         .memo_entries = -1, .timeout_ms = 120000,
                         .client_name = "client_itest/modes"};
  teeny_client *c = NULL;
  if (teeny_client_open(&c, &o) == 0)
    return c;
  fprintf(stderr, "open: %s\n", teeny_client_errmsg(c));
  teeny_client_close(c);
  return NULL;
}

/* Is a file whose path contains needle mapped into this process? */
static bool mapped(const char *needle) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f))
    found = strstr(line, needle) != NULL;
  if (f)
    fclose(f);
  return found;
}

int it_client_thin_maps(void) {
  tdaemon d;
  teeny_client *c = NULL, *off = NULL;
  teeny_client_result *r = NULL;
  teeny_admin_reply *ar = NULL;
  kreq v = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(kreq_init(&v, "vector_add", "f32", 256) == 0);
  CHECK(!mapped("libteenyc-embedded") && !mapped("libLLVM"));
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, d.sock, NULL)) != NULL);
  CHECK_INT(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK(r->art.ptx_len > 0);
  teeny_admin_req q = {.op = TEENY_ADMIN_STATS};
  CHECK_INT(teeny_client_admin(c, &q, &ar), ==, 0);
  /* the front end runs in process without the back end: keys, typed kernels */
  teeny_spec *spec = NULL;
  CHECK_INT(teeny_spec_create(&v.req, &spec, NULL), ==, 0);
  CHECK(strcmp(teeny_spec_key(spec), r->art.key) == 0);
  teeny_spec_destroy(spec);
  CHECK(!mapped("libteenyc-embedded") && !mapped("libLLVM") && !mapped("libsqlite3"));
  /* an in-process compile loads the compiler, and only then */
  CHECK((off = it_client_open(TEENY_MODE_OFFLINE, NULL, NULL)) != NULL);
  CHECK(mapped("libteenyc-embedded") && mapped("libLLVM"));
  teeny_client_result_free(r);
  r = NULL;
  CHECK_INT(teeny_client_compile(off, &v.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->mode, ==, TEENY_MODE_OFFLINE);
  failed = false;
fail:
  teeny_admin_reply_free(ar);
  teeny_client_result_free(r);
  teeny_client_close(c);
  teeny_client_close(off);
  free(v.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- socket discovery ------------------------------------------------------------ */

/* The discovery environment: $TEENYCD_SOCKET, $XDG_RUNTIME_DIR and the
 * system socket ($TEENYC_SYSTEM_SOCKET); NULL unsets. */
static void discovery_env(const char *env_sock, const char *xdg, const char *system) {
  const char *names[] = {"TEENYCD_SOCKET", "XDG_RUNTIME_DIR", "TEENYC_SYSTEM_SOCKET"};
  const char *values[] = {env_sock, xdg, system};
  for (int i = 0; i < 3; i++)
    if (values[i])
      setenv(names[i], values[i], 1);
    else
      unsetenv(names[i]);
}

/* A socket file nobody listens on (a daemon that died without cleaning). */
static int stale_socket(const char *path) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.100s", path);
  int rc = s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : -1;
  if (s >= 0)
    close(s);
  return rc;
}

int it_client_discovery(void) {
  tdaemon d;
  teeny_client *c = NULL;
  char env_sock[200], xdg[200], gone[200], stale[200];
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  snprintf(env_sock, sizeof env_sock, "%s/env.sock", d.dir);
  snprintf(xdg, sizeof xdg, "%s/xdg", d.dir);
  snprintf(gone, sizeof gone, "%s/gone.sock", d.dir);
  snprintf(stale, sizeof stale, "%s/xdg/teenycd.sock", d.dir);
  CHECK(mkdir(xdg, 0700) == 0);
  /* a login user: $XDG_RUNTIME_DIR set, only the system daemon runs */
  discovery_env(NULL, xdg, d.sock);
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, NULL, NULL)) != NULL);
  CHECK(strcmp(teeny_client_socket(c), d.sock) == 0);
  CHECK(strcmp(teeny_client_notice(c), "") == 0);
  teeny_client_close(c);
  c = NULL;
  /* $TEENYCD_SOCKET first, then the per-user socket (stale), then system */
  CHECK(stale_socket(stale) == 0);
  discovery_env(env_sock, xdg, d.sock);
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, NULL, NULL)) != NULL);
  CHECK(strcmp(teeny_client_socket(c), d.sock) == 0);
  teeny_client_close(c);
  c = NULL;
  /* an explicit socket is the only one tried */
  teeny_client_opts o = {.mode = TEENY_MODE_DAEMON, .socket_path = env_sock};
  CHECK_INT(teeny_client_open(&c, &o), ==, TEENY_E_CONNECT);
  CHECK(strstr(teeny_client_errmsg(c), env_sock) && !strstr(teeny_client_errmsg(c), d.sock));
  teeny_client_close(c);
  c = NULL;
  /* none answers: every path, and why each failed */
  discovery_env(env_sock, xdg, gone);
  o.socket_path = NULL;
  CHECK_INT(teeny_client_open(&c, &o), ==, TEENY_E_CONNECT);
  const char *m = teeny_client_errmsg(c);
  fprintf(stderr, "message: %s\n", m);
  CHECK(strstr(m, "$TEENYCD_SOCKET") && strstr(m, env_sock));
  CHECK(strstr(m, stale) && strstr(m, "refused"));
  CHECK(strstr(m, gone) && strstr(m, "no such file"));
  failed = false;
fail:
  teeny_client_close(c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- as another user ------------------------------------------------------------- */

#define NOBODY 65534
#define USERS_GID 100 /* Debian's "users" group */

/* Run fn in a child as nobody (with group extra if non-zero); its exit
 * status (-1 if it did not exit). */
static int as_nobody(gid_t extra, int (*fn)(const void *), const void *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    gid_t groups[1] = {extra};
    if (setgroups(extra ? 1 : 0, groups) || setgid(NOBODY) || setuid(NOBODY))
      _exit(100);
    _exit(fn(arg));
  }
  int st = td_wait(pid, 60000);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* In the child: open a daemon-mode client; 0 connected, 1 refused with a
 * message naming the group, 2 anything else. */
static int child_open(const void *arg) {
  (void)arg;
  teeny_client_opts o = {.mode = TEENY_MODE_DAEMON};
  teeny_client *c = NULL;
  int rc = teeny_client_open(&c, &o);
  const char *m = teeny_client_errmsg(c);
  int out = rc == 0 ? 0
            : rc == TEENY_E_PERM && strstr(m, "add yourself to group users") ? 1
                                                                           : 2;
  if (out == 2)
    fprintf(stderr, "child: rc %d: %s\n", rc, m);
  teeny_client_close(c);
  return out;
}

/* In the child: exec the program in arg (argv, NULL-ended), output to
 * /dev/null; its exit status. */
static int child_exec_quiet(const void *arg) {
  char *const *argv = (char *const *)arg;
  int fd = open("/dev/null", O_WRONLY);
  dup2(fd, 1);
  dup2(fd, 2);
  execv(argv[0], argv);
  return 127;
}

int it_client_socket_group(void) {
  tdaemon d;
  char xdg[200];
  bool failed = true;
  if (geteuid() != 0) {
    fprintf(stderr, "SKIP: needs root (to connect as nobody, in and out of a group)\n");
    return IT_SKIP;
  }
  const char *ctl = getenv("TEENYCTL_BIN"), *tc = getenv("TEENYC_BIN");
  CHECK(ctl && tc);
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(chown(d.sock, 0, USERS_GID) == 0 && chmod(d.sock, 0660) == 0);
  snprintf(xdg, sizeof xdg, "%s/xdg", d.dir);
  CHECK(mkdir(xdg, 0777) == 0);
  discovery_env(NULL, xdg, d.sock); /* a login user of a systemd host */
  CHECK_INT(as_nobody(USERS_GID, child_open, NULL), ==, 0); /* in the group */
  CHECK_INT(as_nobody(0, child_open, NULL), ==, 1);         /* outside it */
  /* the tools: teenyctl 5 (not 3, "is teenycd running?"), teenyc too */
  char *stats[] = {(char *)ctl, "stats", NULL};
  CHECK_INT(as_nobody(USERS_GID, child_exec_quiet, stats), ==, 0);
  CHECK_INT(as_nobody(0, child_exec_quiet, stats), ==, 5);
  char kfile[300];
  snprintf(kfile, sizeof kfile, "%s/examples/kernels/vector_add.c", getenv("TEENY_SOURCE_DIR"));
  char *compile[] = {(char *)tc, "--mode", "daemon", kfile, "-k", "vector_add",
                     "-d", "D=f32", "-c", "BLOCK_SIZE=256", "--emit", "id", NULL};
  CHECK_INT(as_nobody(USERS_GID, child_exec_quiet, compile), ==, 0);
  CHECK_INT(as_nobody(0, child_exec_quiet, compile), ==, 5);
  failed = false;
fail:
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- auto mode says once what it does ------------------------------------------- */

int it_client_auto_notice(void) {
  tdaemon d;
  char cmd[1024], errf[200], outf[200], cache[200];
  char *err = NULL, *out = NULL;
  size_t len;
  bool failed = true;
  const char *tc = getenv("TEENYC_BIN");
  CHECK(tc != NULL);
  CHECK(td_init(&d) == 0);
  snprintf(errf, sizeof errf, "%s/err", d.dir);
  snprintf(outf, sizeof outf, "%s/out", d.dir);
  snprintf(cache, sizeof cache, "%s/store", d.dir);
  discovery_env(NULL, NULL, d.sock); /* nothing listens there */
  /* with a store configured: embedded, said once */
  snprintf(cmd, sizeof cmd,
           "TEENYC_CACHE_DIR=%s %s %s/examples/kernels/vector_add.c -k vector_add "
           "-d D=f32 -c BLOCK_SIZE=128 --emit info >%s 2>%s", cache, tc,
           getenv("TEENY_SOURCE_DIR"), outf, errf);
  CHECK(system(cmd) == 0);
  CHECK((err = tc_read_file(errf, &len)) && (out = tc_read_file(outf, &len)));
  fprintf(stderr, "teenyc said: %s", err);
  CHECK(strstr(out, "mode:       embedded"));
  CHECK(strstr(err, "teenyc: note: cannot reach teenycd") && strstr(err, d.sock) &&
        strstr(err, "embedded mode") && strstr(err, cache));
  CHECK(strstr(strstr(err, "note:") + 1, "note:") == NULL); /* once */
  free(err);
  free(out);
  err = out = NULL;
  /* no store configured, none at the system path: offline, said once */
  snprintf(cmd, sizeof cmd,
           "env -u TEENYC_CACHE_DIR -u XDG_CACHE_HOME %s --mode auto "
           "%s/examples/kernels/vector_add.c -k vector_add -d D=f32 -c BLOCK_SIZE=128 "
           "--emit info >%s 2>%s", tc, getenv("TEENY_SOURCE_DIR"), outf, errf);
  struct stat st;
  if (stat(TEENY_SYSTEM_STORE_PATH, &st) != 0) { /* else auto would use it */
    CHECK(system(cmd) == 0);
    CHECK((err = tc_read_file(errf, &len)) && (out = tc_read_file(outf, &len)));
    CHECK(strstr(out, "mode:       offline"));
    CHECK(strstr(err, "offline mode") && strstr(err, "does not exist"));
  }
  failed = false;
fail:
  free(err);
  free(out);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
