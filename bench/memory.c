/*
 * bench/memory.c — teeny_bench_memory: the memory budget under the attack
 * of issue 18.  N connections (default 1 024) each announce a maximal
 * frame (16 MiB - 1) and push its body as fast as the daemon takes it,
 * for a while; meanwhile another client pings, reads stats and takes a
 * memory hit, and the daemon's VmRSS is sampled.  The daemon runs with its
 * default --memory-budget (1 GiB) unless told otherwise after "--".
 *
 *   teeny_bench_memory --teenycd BIN --source-dir DIR [--conns 1024]
 *                      [--seconds 10] [-- teenycd args...]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/reliability.h"
#include "tests/integration/tclient.h"

#define BODY 0x00ffffffu /* 16 MiB - 1 */

/* One round of the other client: ping, stats, a hit; the slowest in µs. */
static uint64_t others(tclient *c, const char *src, size_t n, int *bad) {
  uint64_t worst = 0;
  for (int k = 0; k < 3; k++) {
    uint64_t t0 = tc_now_us();
    int rc;
    if (k == 0) {
      rc = tc_ping(c);
    } else if (k == 1) {
      teeny_msg_stats_reply st;
      rc = tc_stats(c, &st);
    } else {
      tc_compile t;
      tc_compile_init(&t, src, n, "vector_add",
                      (const char *const[]){"D=f32", "BLOCK_SIZE=1024", NULL});
      teeny_msg_reply rep;
      rc = tc_call(c, &t.req, &rep);
      if (!rc)
        rc = tc_reply_status(&rep, NULL, 0);
    }
    uint64_t us = tc_now_us() - t0;
    *bad += rc != 0;
    if (us > worst)
      worst = us;
  }
  return worst;
}

int main(int argc, char **argv) {
  int conns = 1024, seconds = 10;
  const char *srcdir = ".";
  const char *args[48] = {"--max-connections", "4096", "--max-connections-per-uid",
                          "4096", "--read-timeout", "60s", "--log-level", "warn"};
  int na = 8;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--teenycd") && i + 1 < argc)
      setenv("TEENYCD_BIN", argv[++i], 1);
    else if (!strcmp(argv[i], "--source-dir") && i + 1 < argc)
      srcdir = argv[++i];
    else if (!strcmp(argv[i], "--conns") && i + 1 < argc)
      conns = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--"))
      for (i++; i < argc && na < 46; i++)
        args[na++] = argv[i];
    else {
      fprintf(stderr, "usage: teeny_bench_memory --teenycd BIN --source-dir DIR "
                      "[--conns N] [--seconds N] [-- teenycd args]\n");
      return 2;
    }
  }
  struct rlimit rl = {(rlim_t)conns + 256, (rlim_t)conns + 256};
  if (setrlimit(RLIMIT_NOFILE, &rl))
    fprintf(stderr, "setrlimit: %s\n", strerror(errno));
  setenv("TEENY_SOURCE_DIR", srcdir, 1);
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  tdaemon d;
  tclient c, *cs = calloc((size_t)conns, sizeof *cs);
  size_t *sent = calloc((size_t)conns, sizeof *sent);
  static char zeros[64 * 1024];
  int rc = 1, bad = 0, opened = 0;
  tc_init(&c);
  if (!src || !cs || !sent || td_init(&d) || td_start(&d, args, NULL) ||
      tc_open(&c, d.sock) || others(&c, src, n, &bad) == 0 || bad)
    goto done;
  long rss0 = rel_status_kb(d.pid, "VmRSS"), rss_max = rss0;
  for (int i = 0; i < conns; i++) {
    tc_init(&cs[i]);
    if (tc_open(&cs[i], d.sock) || tc_send_raw(&cs[i], "\x00\xff\xff\xff", 4))
      break;
    opened++;
  }
  uint64_t end = tc_now_us() + (uint64_t)seconds * 1000000, next = 0;
  uint64_t worst = 0;
  int rounds = 0;
  while (tc_now_us() < end) {
    for (int i = 0; i < opened; i++) {
      size_t left = BODY - 1 - sent[i];
      ssize_t w = left ? send(cs[i].fd, zeros, left < sizeof zeros ? left : sizeof zeros,
                              MSG_DONTWAIT | MSG_NOSIGNAL)
                       : 0;
      if (w > 0)
        sent[i] += (size_t)w;
    }
    if (tc_now_us() >= next) {
      uint64_t w = others(&c, src, n, &bad);
      worst = w > worst ? w : worst;
      rounds++;
      long r = rel_status_kb(d.pid, "VmRSS");
      rss_max = r > rss_max ? r : rss_max;
      next = tc_now_us() + 200000;
    }
  }
  double offered = 0;
  for (int i = 0; i < opened; i++)
    offered += (double)sent[i];
  double budget = rel_counter(d.sock, "memory_budget");
  double peak = rel_counter(d.sock, "memory_peak");
  printf("| what | result |\n| --- | --- |\n");
  printf("| attack | %d connections, each a 16 MiB frame begun; %.0f MiB of "
         "bodies taken in %d s (%.0f MiB announced) |\n",
         opened, offered / 1048576, seconds, (double)opened * 16);
  printf("| daemon VmRSS | %ld MiB at start, %ld MiB at most (sampled every "
         "0.2 s) |\n", rss0 / 1024, rss_max / 1024);
  printf("| memory budget | %.0f MiB; accounted peak %.1f MiB |\n",
         budget / 1048576, peak / 1048576);
  printf("| another client | %d rounds of ping + stats + memory hit, %d "
         "failed, slowest call %.1f ms |\n", rounds, bad, (double)worst / 1e3);
  rc = 0;
done:
  for (int i = 0; cs && i < opened; i++)
    tc_close(&cs[i]);
  free(cs);
  free(sent);
  free(src);
  tc_close(&c);
  td_fini(&d, rc != 0);
  return rc;
}
