/*
 * tests/integration/itest_main.c — runs one integration test by name
 * (`teenycd_itest NAME`), or lists them (`teenycd_itest --list`).  The
 * helpers the test files share are in itest_util.c.
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
    {"store_fifo", it_store_fifo},
    {"socket_successor", it_socket_successor},
    {"tmp_cleanup", it_tmp_cleanup},
    {"shutdown_reply", it_shutdown_reply},
    {"paused_reader", it_paused_reader},
    {"toobig_size", it_toobig_size},
    {"socket_parent", it_socket_parent},
    {"unknown_kernel", it_unknown_kernel},
    {"refused_log", it_refused_log},
    {"index_heal", it_index_heal},
    {"list_paged", it_list_paged},
    {"fair_lanes", it_fair_lanes},
    {"memory_budget", it_memory_budget},
    {"memcache_lru", it_memcache_lru},
    {"uid_limits", it_uid_limits},
    {"remote_single_flight", it_remote_single_flight},
    {"remote_fifth_node", it_remote_fifth_node},
    {"remote_redis_killed", it_remote_redis_killed},
    {"remote_corrupt_entry", it_remote_corrupt_entry},
    {"remote_silent", it_remote_silent},
    {"sass_background", it_sass_background},
    {"sass_arch", it_sass_arch},
    {"sass_corrupt", it_sass_corrupt},
};

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
