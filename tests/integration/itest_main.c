/*
 * tests/integration/itest_main.c — runs one integration test by name
 * (`teenycd_itest NAME`), or lists them (`teenycd_itest --list`).  Also the
 * helpers every test file shares.
 */
#include <signal.h>
#include <stdlib.h>

#include "tests/integration/itest.h"

static const it_test tests[] = {
    {"hello_version", it_hello_version},
    {"malformed_frames", it_malformed_frames},
    {"limits", it_limits},
    {"pipelined", it_pipelined},
    {"hit_miss_force_restart", it_hit_miss_force_restart},
    {"ptx_matches_teenyc", it_ptx_matches_teenyc},
    {"diagnostics", it_diagnostics},
    {"eviction_lru", it_eviction_lru},
    {"corrupt_entry", it_corrupt_entry},
    {"single_flight", it_single_flight},
    {"responsive_storm", it_responsive_storm},
    {"kill9_recover", it_kill9_recover},
    {"permission", it_permission},
    {"second_daemon", it_second_daemon},
    {"sigterm_notify", it_sigterm_notify},
    {"sigterm_inflight", it_sigterm_inflight},
    {"listen_fds", it_listen_fds},
    {"config_help", it_config_help},
    {"compile_timeout", it_compile_timeout},
    {"compiler_crash", it_compiler_crash},
    {"binary_replaced", it_binary_replaced},
    {"compile_memory", it_compile_memory},
    {"hostile_kernels", it_hostile_kernels},
    {"disk_full", it_disk_full},
    {"crash_storm", it_crash_storm},
    {"load_mixed", it_load_mixed},
    {"hostile_names", it_hostile_names},
    {"store_symlinks", it_store_symlinks},
    {"modes", it_modes},
    {"slow_clients", it_slow_clients},
    {"nonadmin", it_nonadmin},
    {"sass_background", it_sass_background},
    {"sass_arch", it_sass_arch},
    {"sass_corrupt", it_sass_corrupt},
};

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
    teeny__buf_puts(&b, "    acc = acc * x + sin(acc);\n");
  teeny__buf_puts(&b, "    store(out_ptr + offs, acc, mask);\n}\n");
  char *s = teeny__buf_take(&b, len); /* teeny__malloc memory: malloc */
  char *copy = s ? strdup(s) : NULL;
  teeny__free(s);
  return copy;
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

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
      printf("%s\n", tests[i].name);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: teenycd_itest NAME | --list\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
    if (strcmp(argv[1], tests[i].name) != 0)
      continue;
    uint64_t t0 = tc_now_us();
    int rc = tests[i].fn();
    fprintf(stderr, "%s: %s (%.2f s)\n", tests[i].name,
            rc == IT_PASS ? "ok" : rc == IT_SKIP ? "SKIPPED" : "FAILED",
            (double)(tc_now_us() - t0) / 1e6);
    return rc;
  }
  fprintf(stderr, "no test named %s\n", argv[1]);
  return 2;
}
