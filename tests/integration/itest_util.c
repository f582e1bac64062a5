/*
 * tests/integration/itest_util.c — the helpers of itest.h that the test
 * files share (teenycd_itest and client_itest): compiles over tclient,
 * generated slow kernels, running a check as another uid, log counts.
 */
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/itest.h"

int it_compile(tclient *c, const char *src, size_t len, const char *kernel,
               const char *const *bindings, unsigned flags, unsigned emit,
               teeny_msg_reply *rep) {
  tc_compile t;
  tc_compile_init(&t, src, len, kernel, bindings);
  t.req.u.compile.flags = flags;
  if (emit)
    t.req.u.compile.emit = emit;
  return tc_call(c, &t.req, rep);
}

char *it_slow_kernel(int lines, size_t *len) {
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__buf_puts(&b, "#include <teeny/dsl.h>\n"
                      "TEENY_DTYPE(D);\n"
                      "TEENY_CONST(BLOCK_SIZE);\n"
                      "TEENY_KERNEL(D, BLOCK_SIZE)\n"
                      "void slow(ptr(D) x_ptr, ptr(D) out_ptr, i32 n)\n"
                      "{\n"
                      "    i32 pid = program_id(0);\n"
                      "    tile(i32) offs = pid * BLOCK_SIZE + arange(0, "
                      "BLOCK_SIZE);\n"
                      "    tile(bool) mask = offs < n;\n"
                      "    tile(D) x = load(x_ptr + offs, mask, 0);\n"
                      "    tile(D) acc = x;\n");
  for (int i = 0; i < lines; i++)
    teeny__buf_puts(&b, "    acc = acc * x + fast_sin(acc);\n");
  teeny__buf_puts(&b, "    store(out_ptr + offs, acc, mask);\n}\n");
  char *s = teeny__buf_take(&b, len); /* teeny__malloc memory: malloc */
  char *copy = s ? strdup(s) : NULL;
  teeny__free(s);
  return copy;
}

char *it_slow_variant(int lines, int variant, size_t *len) {
  size_t n;
  char *s = it_slow_kernel(lines, &n);
  char *t = s ? malloc(n + 32) : NULL;
  if (t)
    *len = (size_t)snprintf(t, n + 32, "%s// variant %d\n", s, variant);
  free(s);
  return t;
}

int it_send_slow(tclient *c, int lines, int variant, int block_size,
                 uint64_t id) {
  size_t n = 0;
  char *src = it_slow_variant(lines, variant, &n);
  char bs[32];
  snprintf(bs, sizeof bs, "BLOCK_SIZE=%d", block_size);
  tc_compile t;
  tc_compile_init(&t, src, n, "slow", (const char *const[]){"D=f32", bs, NULL});
  t.req.id = id;
  int rc = src ? tc_send(c, &t.req) : -1;
  free(src);
  return rc;
}

bool it_stopped_listening(const char *sock, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    tclient probe;
    tc_init(&probe);
    int rc = tc_connect(&probe, sock);
    tc_close(&probe);
    if (rc)
      return true;
    usleep(10000);
  }
  return false;
}

int it_as_user(unsigned uid, int (*fn)(void *), void *arg, int timeout_ms) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return 200;
  if (pid == 0) {
    if (setgroups(0, NULL) || setgid((gid_t)uid) || setuid((uid_t)uid))
      _exit(201);
    _exit(fn(arg));
  }
  int st = td_wait(pid, timeout_ms);
  if (st == -1) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 200;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

int it_count_in_file(const char *path, const char *needle) {
  char *s = tc_read_file(path, NULL);
  if (!s)
    return -1;
  int n = 0;
  size_t nl = strlen(needle);
  const char *end = s + strlen(s);
  for (const char *p = s; (p = memmem(p, (size_t)(end - p), needle, nl));
       p += nl) /* memmem: under ASan strstr rescans the rest each time */
    n++;
  free(s);
  return n;
}

const char *it_cache_name(teeny_msg_cache c) {
  static const char *const names[] = {"miss", "memory", "disk", "joined"};
  return (unsigned)c < 4 ? names[c] : "?";
}

int it_stats(const char *sock, teeny_msg_stats_reply *out) {
  tclient c;
  tc_init(&c);
  int rc = tc_open(&c, sock);
  if (rc)
    return rc;
  rc = tc_stats(&c, out);
  tc_close(&c);
  return rc;
}

