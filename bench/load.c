/*
 * bench/load.c — many client processes against one teenycd: mixed hits,
 * cold compiles and bad requests, every reply checked against an answer
 * computed in this process beforehand (keys with teeny_spec_create, PTX
 * with teeny_spec_compile); the daemon's VmRSS sampled throughout.
 * Prints wrong answers, lost replies, latency percentiles and RSS; exits 1
 * if any reply was wrong or lost or the daemon did not stop cleanly.
 *
 *   teeny_bench_load [--teenycd PATH] [--procs 64] [--requests 10000]
 *                    [--window 4] [--miss 5] [--bad 50] [--seed N]
 *                    [--source-dir DIR] [-- teenycd flags...]
 *
 * --miss and --bad are per 1000 requests.  The daemon runs on a temporary
 * socket and store with its default settings plus the flags after "--".
 * `scripts/soak load` runs the full size (64 x 10 000).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "teeny/compile.h"
#include "tests/integration/reliability.h"

int main(int argc, char **argv) {
  rel_load_opts o = {NULL, NULL, 64, 10000, 4, 5, 50, 0, 50, 1, false};
  static const struct option lo[] = {
      {"teenycd", required_argument, NULL, 'd'},
      {"procs", required_argument, NULL, 'p'},
      {"requests", required_argument, NULL, 'n'},
      {"window", required_argument, NULL, 'w'},
      {"miss", required_argument, NULL, 'm'},
      {"bad", required_argument, NULL, 'b'},
      {"seed", required_argument, NULL, 's'},
      {"source-dir", required_argument, NULL, 'S'},
      {NULL, 0, NULL, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (ch) {
    case 'd': setenv("TEENYCD_BIN", optarg, 1); break;
    case 'p': o.procs = atoi(optarg); break;
    case 'n': o.requests = atoi(optarg); break;
    case 'w': o.window = atoi(optarg); break;
    case 'm': o.miss_permille = atoi(optarg); break;
    case 'b': o.bad_permille = atoi(optarg); break;
    case 's': o.seed = (unsigned)atoi(optarg); break;
    case 'S': o.srcdir = optarg; break;
    default:
      fprintf(stderr,
              "usage: teeny_bench_load [--teenycd PATH] [--procs N] "
              "[--requests N] [--window N] [--miss PERMILLE] [--bad "
              "PERMILLE] [--seed N] [--source-dir DIR] [-- teenycd "
              "flags]\n");
      return 2;
    }
  }
  if (o.procs < 1 || o.requests < 1 || o.window < 1) {
    fprintf(stderr, "teeny_bench_load: --procs, --requests and --window "
                    "must be positive\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  const char *args[48];
  int na = 0;
  for (int i = optind; i < argc && na < 46; i++)
    args[na++] = argv[i];
  args[na] = NULL;
  tdaemon d;
  if (td_init(&d) || td_start(&d, args, NULL)) {
    fprintf(stderr, "cannot start teenycd (set --teenycd or TEENYCD_BIN)\n");
    return 1;
  }
  o.sock = d.sock;
  o.daemon_pid = d.pid;
  struct utsname u;
  uname(&u);
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("teeny_bench_load, %s, %s %s, %ld CPUs, teenyc %s\n", date,
         u.nodename, u.machine, sysconf(_SC_NPROCESSORS_ONLN),
         teeny_version());
  rel_load_result r;
  int rc = rel_load_run(&o, &r);
  if (rc) {
    fprintf(stderr, "load: setup failed\n");
    td_fini(&d, true);
    return 1;
  }
  rel_load_print(&o, &r);
  printf("  daemon: compiles %.0f, joins %.0f, errors %.0f, memory hits %.0f, "
         "disk hits %.0f, memcache %.0f KiB, VmHWM %ld KiB\n",
         rel_counter(d.sock, "compiles"), rel_counter(d.sock, "joins"),
         rel_counter(d.sock, "errors"), rel_counter(d.sock, "memory_hits"),
         rel_counter(d.sock, "disk_hits"),
         rel_counter(d.sock, "memcache_bytes") / 1024,
         rel_status_kb(d.pid, "VmHWM"));
  int st = td_stop(&d);
  bool clean = st == 0;
  if (!clean)
    fprintf(stderr, "teenycd did not stop cleanly (status 0x%x)\n", st);
  bool bad = r.wrong || r.lost || r.failed_procs || !clean;
  td_fini(&d, bad);
  printf("load: %s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
