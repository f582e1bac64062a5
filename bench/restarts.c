/*
 * bench/restarts.c — teeny_bench_restarts: long-lived clients across many
 * daemon restarts (issue 18).  16 client threads (half in auto mode, half
 * in daemon mode, libteenyc-client, memo off so every call reaches the
 * daemon or the store) call compile in a loop while teenycd is restarted
 * N times, in turn by SIGTERM, kill -9 and `teenyctl shutdown`, every
 * other time with the new daemon started while the old one still drains a
 * slow compile (on a second store: the first is locked until the old one
 * exits).  Reports every failed call, how long each client took to be
 * served by the daemon again after it answered, the restart gaps, and
 * whether the socket was ever lost.
 *
 *   teeny_bench_restarts --teenycd BIN --teenyctl BIN --source-dir DIR
 *                        [--restarts 50] [--clients 16]
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"

#define MAX_CLIENTS 64

typedef struct client_run {
  int idx;                    /* which */
  teeny_client_mode mode;     /* auto or daemon */
  const char *sock, *cache;   /* where */
  atomic_int stop;            /* set by the controller */
  atomic_ullong since;        /* the daemon answered again at (µs) */
  atomic_ullong back;         /* end of its first daemon-served call after
                                 since (µs); 0: none yet */
  uint64_t calls, failed, embedded;
  char first_error[256];
} client_run;

static char *va_src;
static size_t va_len;

static void *client_main(void *p) {
  client_run *r = p;
  teeny_client_opts o = {.mode = r->mode, .socket_path = r->sock,
                         .cache_dir = r->cache, .memo_entries = -1,
                         .client_name = "bench-restarts/1"};
  teeny_client *c = NULL;
  if (teeny_client_open(&c, &o)) {
    snprintf(r->first_error, sizeof r->first_error, "open: %s",
             teeny_client_errmsg(c));
    r->failed++;
    teeny_client_close(c);
    return NULL;
  }
  teeny_dtype_binding dt = {"D", "f32"};
  teeny_const_binding ct = {"BLOCK_SIZE", 128};
  teeny_compile_req req = {.source = va_src, .source_len = va_len,
                           .filename = "vector_add.c", .kernel = "vector_add",
                           .dtypes = &dt, .ndtypes = 1, .consts = &ct,
                           .nconsts = 1};
  for (uint64_t i = 0; !atomic_load(&r->stop); i++) {
    ct.value = 128 << (i % 4);
    teeny_client_result *res = NULL;
    int rc = teeny_client_compile(c, &req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO,
                                  &res);
    r->calls++;
    if (rc) {
      if (!r->failed++)
        snprintf(r->first_error, sizeof r->first_error, "%s",
                 teeny_client_errmsg(c));
    } else if (res->mode == TEENY_MODE_DAEMON) {
      uint64_t now = tc_now_us(), zero = 0;
      if (now > atomic_load(&r->since))
        atomic_compare_exchange_strong(&r->back, &zero, now);
    } else {
      r->embedded++;
    }
    teeny_client_result_free(res);
    usleep(20000);
  }
  teeny_client_close(c);
  return NULL;
}

/* ---- the controller --------------------------------------------------------------- */

static const char *ctl_bin;

static bool answers(const char *sock) {
  tclient c;
  tc_init(&c);
  bool ok = tc_open(&c, sock) == 0 && tc_ping(&c) == 0;
  tc_close(&c);
  return ok;
}

/* A slow compile (a few tenths of a second) for the old daemon to drain. */
static int send_slow(tclient *c, const char *sock, int n) {
  return tc_open(c, sock) || it_send_slow(c, 400, 5000 + n, 2048, 0);
}

static void stop_by(tdaemon *d, int how) {
  if (how == 0) {
    kill(d->pid, SIGTERM);
  } else if (how == 1) {
    kill(d->pid, SIGKILL);
  } else {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' --socket '%s' shutdown >/dev/null 2>&1",
             ctl_bin, d->sock);
    if (system(cmd) != 0)
      kill(d->pid, SIGTERM);
  }
}

int main(int argc, char **argv) {
  int restarts = 50, nclients = 16;
  const char *srcdir = ".";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--teenycd") && i + 1 < argc)
      setenv("TEENYCD_BIN", argv[++i], 1);
    else if (!strcmp(argv[i], "--teenyctl") && i + 1 < argc)
      ctl_bin = argv[++i];
    else if (!strcmp(argv[i], "--source-dir") && i + 1 < argc)
      srcdir = argv[++i];
    else if (!strcmp(argv[i], "--restarts") && i + 1 < argc)
      restarts = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--clients") && i + 1 < argc)
      nclients = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: teeny_bench_restarts --teenycd BIN --teenyctl BIN "
                      "--source-dir DIR [--restarts N] [--clients N]\n");
      return 2;
    }
  }
  if (nclients < 2 || nclients > MAX_CLIENTS || !ctl_bin)
    return 2;
  signal(SIGPIPE, SIG_IGN);
  setenv("TEENY_SOURCE_DIR", srcdir, 1);
  va_src = tc_kernel_source("vector_add", &va_len);
  tdaemon st[2]; /* two stores, one socket */
  if (!va_src || td_init(&st[0]) || td_init(&st[1]))
    return 1;
  snprintf(st[1].sock, sizeof st[1].sock, "%s", st[0].sock);
  const char *dargs[] = {"--log-level", getenv("BENCH_LOG") ? getenv("BENCH_LOG") : "warn", "--shutdown-timeout", "20s", NULL};
  if (td_start(&st[0], dargs, NULL))
    return 1;
  static client_run runs[MAX_CLIENTS];
  pthread_t th[MAX_CLIENTS];
  for (int i = 0; i < nclients; i++) {
    runs[i] = (client_run){.idx = i,
                           .mode = i % 2 ? TEENY_MODE_DAEMON : TEENY_MODE_AUTO,
                           .sock = st[0].sock, .cache = st[0].cache};
    pthread_create(&th[i], NULL, client_main, &runs[i]);
  }
  sleep(1);
  int cur = 0, lost = 0, slow_back = 0;
  double worst_back = 0, worst_gap = 0, gaps = 0;
  const char *const hows[] = {"SIGTERM", "kill -9", "teenyctl shutdown"};
  int by_how[3][2] = {{0}};
  for (int k = 0; k < restarts; k++) {
    int how = k % 3;
    bool overlap = how != 1 && (k / 3) % 2 == 1;
    tdaemon *old = &st[cur];
    tclient drain;
    tc_init(&drain);
    if (how != 1)
      send_slow(&drain, old->sock, k); /* something to drain */
    usleep(100000);
    uint64_t t_stop = tc_now_us();
    stop_by(old, how);
    tc_close(&drain); /* its compile still runs to the end; no one reads it */
    pid_t old_pid = old->pid;
    int next = overlap ? 1 - cur : cur;
    if (!overlap) { /* the same store: the old daemon must be gone */
      waitpid(old_pid, NULL, 0);
      old->pid = 0;
    } else {
      while (answers(old->sock))
        usleep(2000);
    }
    if (td_start(&st[next], dargs, NULL)) {
      fprintf(stderr, "restart %d: the new daemon did not start\n", k);
      lost++;
      break;
    }
    uint64_t t_up = tc_now_us();
    for (int i = 0; i < nclients; i++) {
      atomic_store(&runs[i].back, 0);
      atomic_store(&runs[i].since, t_up);
    }
    double gap = (double)(t_up - t_stop) / 1e6;
    gaps += gap;
    worst_gap = gap > worst_gap ? gap : worst_gap;
    by_how[how][overlap]++;
    fprintf(stderr, "restart %d: %s%s, answered again after %.2f s\n", k,
            hows[how], overlap ? " (overlapping)" : "", gap);
    usleep(1500000);
    for (int i = 0; i < nclients; i++) {
      uint64_t b = atomic_load(&runs[i].back);
      double back = b ? (double)(b - t_up) / 1e6 : 1.5;
      worst_back = back > worst_back ? back : worst_back;
      if (back > 1.0) {
        slow_back++;
        fprintf(stderr, "restart %d: client %d (%s) back on the daemon only "
                        "after %.2f s\n",
                k, i, teeny_client_mode_name(runs[i].mode), back);
      }
    }
    if (overlap) {
      waitpid(old_pid, NULL, 0); /* the old one drained and exited */
      old->pid = 0;
    }
    tc_close(&drain);
    if (!answers(st[next].sock)) {
      fprintf(stderr, "restart %d: socket lost\n", k);
      lost++;
    }
    if (getenv("BENCH_LOG") && k == 0)
      td_dump_log(old);
    cur = next;
  }
  for (int i = 0; i < nclients; i++)
    atomic_store(&runs[i].stop, 1);
  uint64_t calls[2] = {0}, failed[2] = {0}, embedded = 0;
  for (int i = 0; i < nclients; i++) {
    pthread_join(th[i], NULL);
    int m = runs[i].mode == TEENY_MODE_DAEMON;
    calls[m] += runs[i].calls;
    failed[m] += runs[i].failed;
    embedded += runs[i].embedded;
    if (runs[i].failed)
      fprintf(stderr, "client %d (%s): %llu failed, first: %s\n", i,
              teeny_client_mode_name(runs[i].mode),
              (unsigned long long)runs[i].failed, runs[i].first_error);
  }
  printf("| what | result |\n| --- | --- |\n");
  printf("| restarts | %d: ", restarts);
  for (int h = 0; h < 3; h++)
    printf("%s %d (%d overlapping)%s", hows[h], by_how[h][0] + by_how[h][1],
           by_how[h][1], h < 2 ? ", " : "");
  printf(" |\n| restart gap (stop to new daemon answering) | mean %.2f s, "
         "max %.2f s |\n", gaps / restarts, worst_gap);
  printf("| auto-mode clients (%d) | %llu calls, %llu failed, %llu answered "
         "in process during restarts |\n", (nclients + 1) / 2,
         (unsigned long long)calls[0], (unsigned long long)failed[0],
         (unsigned long long)embedded);
  printf("| daemon-mode clients (%d, restart_wait_ms default %d) | %llu calls, "
         "%llu failed |\n", nclients / 2, TEENY_CLIENT_RESTART_WAIT_MS,
         (unsigned long long)calls[1], (unsigned long long)failed[1]);
  printf("| back on the daemon after it answered | slowest client %.3f s; "
         "%d of %d x %d later than 1 s |\n| socket lost | %d times |\n",
         worst_back, slow_back, restarts, nclients, lost);
  td_fini(&st[0], false);
  td_fini(&st[1], false);
  free(va_src);
  return failed[0] || failed[1] || lost || slow_back ? 1 : 0;
}
