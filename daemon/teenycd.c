/*
 * daemon/teenycd.c — main() of teenycd, the compile-and-cache daemon:
 * flags and config, the log, systemd hand-over (activated socket,
 * readiness), the store lock, signals, and the start and stop sequence.
 *
 * Startup: parse (flags override --config FILE, which overrides the
 * environment and defaults) -> open the log -> lock the store (one daemon
 * per store) -> remove the temp files of dead puts -> if the last daemon on
 * this store died without a clean stop, verify and repair the store before
 * serving -> create the server and listen (one daemon per socket) ->
 * READY=1.  SIGTERM/SIGINT: the server's orderly stop; the loop ends when
 * it is done; then the last touches are flushed, the store closed, exit 0.
 * SIGHUP reopens --log-file.  Exit status: 0 after a clean stop, 1 when
 * the daemon cannot start (store or socket busy, I/O), 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "daemon/config.h"
#include "daemon/helper.h"
#include "daemon/log.h"
#include "daemon/sass.h"
#include "daemon/sd.h"
#include "daemon/server.h"
#include "store/store.h"

enum { EXIT_START = 1, EXIT_USAGE = 2 };
enum { OPT_CONFIG = 1000, OPT_HELP, OPT_VERSION, OPT_SETTING };

#define MARKER "teenycd.running" /* in the store root while we serve */

/* What main() owns; signal callbacks reach it through handle data. */
typedef struct daemon_ctx {
  teeny_config cfg;       /* settings */
  teeny_log log;          /* the log */
  bool log_open;          /* log is initialised */
  teeny_sd_notify notify; /* systemd notifications */
  teeny_store *store;     /* holds the daemon lock */
  uint64_t index_rebuilds;/* a damaged index was rebuilt at startup */
  uv_loop_t loop;         /* the event loop */
  teeny_server *server;   /* everything on the loop */
  uv_signal_t sig[3];     /* SIGTERM, SIGINT, SIGHUP */
  char marker[4200];      /* path of the clean-stop marker */
} daemon_ctx;

static void print_help(void) {
  printf(
      "usage: teenycd [--config FILE] [OPTION]...\n"
      "\n"
      "teenycd compiles teenyc GPU kernels to PTX for the processes of this\n"
      "machine and caches the results: in memory, and on disk in a\n"
      "content-addressed store indexed by SQLite.  Clients (libteenyc-client,\n"
      "teenyctl) talk to it over a Unix socket (proto/PROTOCOL.md).  It runs in\n"
      "the foreground; under systemd use teenycd.service / teenycd.socket.\n"
      "\n"
      "options (each also a `key = value` line of --config FILE, with '_' for\n"
      "'-'; flags override the file):\n"
      "  %-24s read settings from FILE first (unknown keys are errors)\n"
      "  %-24s default: none; e.g. --config /etc/teenyc/teenycd.conf\n",
      "--config FILE", "");
  teeny__config_help(stdout);
  printf(
      "  %-24s show this help\n"
      "  %-24s show the version\n"
      "\n"
      "sizes: a number and B, K, M, G, T (powers of 1024; KB, KiB alike):\n"
      "512MiB, 1.5G, 5GB.  times: a number and ms, s, min (or m), h, d, w\n"
      "(plain: seconds): 250ms, 30s, 90min, 1d.  teenyctl reads them alike.\n"
      "\n"
      "signals: SIGTERM/SIGINT stop (running compiles finish, up to\n"
      "--shutdown-timeout); SIGHUP reopens --log-file.\n"
      "\n"
      "example:\n"
      "  teenycd --socket /tmp/teenycd.sock --cache-dir /tmp/teenyc \\\n"
      "          --max-size 500M --workers 2 --log-level debug\n",
      "-h, --help", "-V, --version");
}

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "teenycd: %s%s\nTry 'teenycd --help'.\n", msg, arg);
  return EXIT_USAGE;
}

/* The long options: --config, --help, --version, then one per setting. */
static struct option *long_options(void) {
  size_t n = teeny__config_count();
  struct option *o = teeny__calloc(n + 4, sizeof *o);
  if (!o)
    return NULL;
  o[0] = (struct option){"config", required_argument, NULL, OPT_CONFIG};
  o[1] = (struct option){"help", no_argument, NULL, OPT_HELP};
  o[2] = (struct option){"version", no_argument, NULL, OPT_VERSION};
  for (size_t i = 0; i < n; i++)
    o[i + 3] = (struct option){teeny__config_flag(i), required_argument,
                               NULL, OPT_SETTING + (int)i};
  return o;
}

/* Pass 1: --help, --version, --config.  Returns -1 to go on, else an exit
 * status. */
static int first_pass(daemon_ctx *d, int argc, char **argv,
                      const struct option *lo) {
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
    if (c == 'h' || c == OPT_HELP) {
      print_help();
      return 0;
    }
    if (c == 'V' || c == OPT_VERSION) {
      printf("teenycd %s (teenyc %s, LLVM %s, protocol %d)\n",
             TEENY_VERSION_STRING, teeny_version(), teeny_llvm_version(),
             TEENY_PROTO_VERSION);
      return 0;
    }
    if (c == OPT_CONFIG) {
      teeny__free(d->cfg.config_file);
      d->cfg.config_file = teeny__strdup(optarg);
    }
  }
  return -1;
}

/* Pass 2: every setting flag, over what the file set. */
static int second_pass(daemon_ctx *d, int argc, char **argv,
                       const struct option *lo) {
  int c, idx = 0;
  char err[TEENY_CONFIG_ERR_LEN];
  optind = 0; /* GNU getopt: a full re-scan */
  opterr = 1;
  while ((c = getopt_long(argc, argv, "hV", lo, &idx)) != -1) {
    if (c == '?' || c == ':')
      return EXIT_USAGE; /* getopt printed why */
    if (c < OPT_SETTING)
      continue;
    size_t i = (size_t)(c - OPT_SETTING);
    if (teeny__config_set(&d->cfg, teeny__config_key(i), optarg, err)) {
      fprintf(stderr, "teenycd: --%s: %s\nTry 'teenycd --help'.\n",
              teeny__config_flag(i), err);
      return EXIT_USAGE;
    }
  }
  if (optind < argc)
    return usage("unexpected argument: ", argv[optind]);
  return -1;
}

static int parse_args(daemon_ctx *d, int argc, char **argv) {
  char err[TEENY_CONFIG_ERR_LEN];
  struct option *lo = long_options();
  int rc = EXIT_USAGE;
  if (!lo)
    return rc;
  if ((rc = first_pass(d, argc, argv, lo)) >= 0)
    goto done;
  if (d->cfg.config_file && teeny__config_load(&d->cfg, d->cfg.config_file, err)) {
    fprintf(stderr, "teenycd: %s\n", err);
    rc = EXIT_USAGE;
    goto done;
  }
  if ((rc = second_pass(d, argc, argv, lo)) >= 0)
    goto done;
  if (teeny__config_resolve(&d->cfg, err)) {
    fprintf(stderr, "teenycd: %s\n", err);
    rc = EXIT_USAGE;
  }
done:
  teeny__free(lo);
  return rc;
}

/* ---- startup pieces -------------------------------------------------------- */

static void raise_fd_limit(daemon_ctx *d) {
  struct rlimit rl;
  rlim_t want = (rlim_t)d->cfg.max_connections + 64;
  if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
    return;
  rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want)
    TEENY_LOGW(&d->log, "open-file limit %llu is below --max-connections %llu",
               (unsigned long long)rl.rlim_cur,
               (unsigned long long)d->cfg.max_connections);
}

/* The previous daemon died without a clean stop: puts may have left
 * orphan files.  Verify (and repair) before serving. */
static void recover_store(daemon_ctx *d) {
  TEENY_LOGW(&d->log, "the last teenycd on %s did not stop cleanly; "
                      "verifying the store",
             d->cfg.cache_dir);
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = true};
  char err[TEENY_STORE_ERR_LEN];
  uint64_t t0 = teeny__now_ns();
  if (teeny_store_verify(d->store, &vo, &probs, err))
    TEENY_LOGE(&d->log, "store verify failed: %s", err);
  for (size_t i = 0; i < probs.n; i++)
    TEENY_LOGW(&d->log, "store: %s %s: %s%s",
               teeny_store_problem_name(probs.v[i].kind),
               probs.v[i].key[0] ? probs.v[i].key : probs.v[i].path,
               probs.v[i].detail, probs.v[i].repaired ? " (repaired)" : "");
  TEENY_LOGI(&d->log, "store verified in %.0f ms: %zu problem(s)",
             (double)(teeny__now_ns() - t0) / 1e6, probs.n);
  teeny_store_problems_close(&probs);
}

/* Every start: the temp files of puts whose process is gone (a daemon or
 * an embedded client killed mid-put) would otherwise pile up. */
static void clean_tmp(daemon_ctx *d) {
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  char err[TEENY_STORE_ERR_LEN];
  if (teeny_store_clean_tmp(d->store, &probs, err))
    TEENY_LOGW(&d->log, "cleaning %s/tmp: %s", d->cfg.cache_dir, err);
  for (size_t i = 0; i < probs.n; i++)
    TEENY_LOGI(&d->log, "%s stale temp file %s (%s)",
               probs.v[i].repaired ? "removed" : "cannot remove",
               probs.v[i].path, probs.v[i].detail);
  teeny_store_problems_close(&probs);
}

/* The store's index was damaged at open and has been rebuilt. */
static void log_rebuild(daemon_ctx *d, const teeny_store_rebuild_report *r,
                        const char *why) {
  d->index_rebuilds++;
  TEENY_LOGW(&d->log,
             "index.db was damaged (%s): moved it aside as %s and rebuilt "
             "%llu entries from objects/ (%llu object sets left for verify "
             "--repair)%s%s",
             why, r->moved, (unsigned long long)r->rows,
             (unsigned long long)r->skipped,
             r->error[0] ? "; the walk stopped early: " : "", r->error);
}

/* Open the store and take its daemon lock; 0 or an exit status. */
static int lock_store(daemon_ctx *d) {
  char err[TEENY_STORE_ERR_LEN];
  teeny_store_rebuild_report heal;
  teeny_store_opts so = {.root = d->cfg.cache_dir,
                         .dir_mode = TEENY_DAEMON_DIR_MODE,
                         .file_mode = TEENY_DAEMON_FILE_MODE,
                         .heal = &heal};
  if (teeny_store_create(&so, &d->store, err) ||
      teeny_store_lock_daemon(d->store, err)) {
    TEENY_LOGE(&d->log, "cannot use the store: %s", err);
    return EXIT_START;
  }
  if (heal.moved[0])
    log_rebuild(d, &heal, err);
  clean_tmp(d);
  snprintf(d->marker, sizeof d->marker, "%s/" MARKER,
           teeny_store_root(d->store));
  int fd = open(d->marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                TEENY_DAEMON_FILE_MODE);
  if (fd < 0 && errno == EEXIST)
    recover_store(d);
  else if (fd < 0)
    TEENY_LOGW(&d->log, "cannot create %s: %s", d->marker, strerror(errno));
  else
    close(fd);
  /* this handle keeps only the lock: the lanes' handles use the index, and
   * a rebuild while serving must find no connection open here */
  teeny_store_index_release(d->store);
  return 0;
}

/* fds 0-2 must be open: libuv asserts its own fds are above 2, and a
 * stray write to stderr must not land in a socket or the store. */
static void ensure_std_fds(void) {
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
      return;
}

/* ---- signals ----------------------------------------------------------------- */

static void on_signal(uv_signal_t *h, int signum) {
  daemon_ctx *d = h->data;
  if (!d->server)
    return;
  if (signum == SIGHUP) {
    if (teeny__log_reopen(&d->log))
      TEENY_LOGE(&d->log, "SIGHUP: cannot reopen %s", d->log.path);
    else
      TEENY_LOGI(&d->log, "SIGHUP: log reopened");
    return;
  }
  teeny__server_stop(d->server, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

static void start_signals(daemon_ctx *d) {
  static const int nums[3] = {SIGTERM, SIGINT, SIGHUP};
  for (int i = 0; i < 3; i++) {
    uv_signal_init(&d->loop, &d->sig[i]);
    d->sig[i].data = d;
    uv_signal_start(&d->sig[i], on_signal, nums[i]);
    uv_unref((uv_handle_t *)&d->sig[i]); /* they do not keep the loop up */
  }
}

static void stop_signals(daemon_ctx *d) {
  for (int i = 0; i < 3; i++)
    uv_close((uv_handle_t *)&d->sig[i], NULL);
  uv_run(&d->loop, UV_RUN_DEFAULT);
}

/* ---- serving ------------------------------------------------------------------ */

/* Create the server and listen; 0 or an exit status. */
static int start_server(daemon_ctx *d) {
  char err[TEENY_CONFIG_ERR_LEN];
  int fd = -1;
  if (teeny__sd_listen_fd(&fd, err, sizeof err)) {
    TEENY_LOGE(&d->log, "socket activation: %s", err);
    return EXIT_START;
  }
  teeny_server_opts so = {&d->cfg, &d->log, &d->notify, fd, d->index_rebuilds};
  if (teeny__server_create(&d->loop, &so, &d->server, err, sizeof err)) {
    TEENY_LOGE(&d->log, "%s", err);
    return EXIT_START;
  }
  if (teeny__server_listen(d->server, err, sizeof err)) {
    TEENY_LOGE(&d->log, "%s", err);
    teeny__server_stop(d->server, "startup failed");
    uv_run(&d->loop, UV_RUN_DEFAULT);
    return EXIT_START;
  }
  TEENY_LOGI(&d->log,
             "teenycd %s listening on %s; store %s (max %llu bytes); %u "
             "worker(s)",
             TEENY_VERSION_STRING,
             fd >= 0 ? "fd 3 (socket-activated)" : d->cfg.socket,
             d->cfg.cache_dir,
             (unsigned long long)d->cfg.max_size, d->cfg.workers);
  return 0;
}

static int serve(daemon_ctx *d) {
  teeny__sd_notifyf(&d->notify, "READY=1\nSTATUS=serving on %s",
                    d->cfg.socket);
  uv_run(&d->loop, UV_RUN_DEFAULT);
  if (teeny__server_abandoned(d->server))
    return 0; /* workers still run: no cleanup under them */
  stop_signals(d);
  return 0;
}

/* ---- main ------------------------------------------------------------------------ */

static void cleanup(daemon_ctx *d, bool clean_stop) {
  if (d->server) {
    teeny__server_destroy(d->server); /* flushes last-used times */
    d->server = NULL;
  }
  uv_loop_close(&d->loop);
  if (d->store) {
    if (clean_stop && d->marker[0])
      unlink(d->marker);
    teeny_store_destroy(d->store); /* releases the daemon lock */
  }
  teeny__sd_notify_close(&d->notify);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], TEENY_HELPER_FLAG) == 0)
    return teeny__helper_main(argc, argv); /* a compile process (helper.h) */
  if (argc > 1 && strcmp(argv[1], TEENY_SASS_HELPER_FLAG) == 0)
    return teeny__jit_helper_main(argc, argv); /* the driver's JIT (sass.h) */
  daemon_ctx d;
  memset(&d, 0, sizeof d);
  ensure_std_fds();
  teeny__config_init(&d.cfg);
  char err[TEENY_CONFIG_ERR_LEN];
  int rc = parse_args(&d, argc, argv);
  if (rc >= 0)
    goto out;
  rc = EXIT_START;
  if (teeny__log_open(&d.log, d.cfg.log_level, d.cfg.log_file, err,
                      sizeof err)) {
    fprintf(stderr, "teenycd: %s\n", err);
    goto out;
  }
  d.log_open = true;
  if (teeny__sd_notify_open(&d.notify, err, sizeof err))
    TEENY_LOGW(&d.log, "%s", err);
  signal(SIGPIPE, SIG_IGN);
  raise_fd_limit(&d);
  uv_loop_init(&d.loop);
  if (!(rc = lock_store(&d))) {
    /* before the socket exists: a SIGTERM right after it appears is an
     * orderly stop, not the default action */
    start_signals(&d);
    if (!(rc = start_server(&d)))
      rc = serve(&d);
    else
      stop_signals(&d);
  }
  if (d.server && teeny__server_abandoned(d.server)) {
    /* Workers still compile and may be inside a put: no cleanup under
     * them.  The store is crash-safe and the marker stays, so the next
     * start verifies it.  _exit: no atexit handlers racing the workers. */
    TEENY_LOGE(&d.log, "exiting with compiles still running");
    teeny__sd_notify_close(&d.notify);
    _exit(0);
  }
  cleanup(&d, rc == 0);
  /* join libuv's worker threads: per-thread state of the libraries they
   * used (OpenSSL's error queue) is freed as each thread exits, not left
   * behind unreachable (memcheck's "definitely lost") */
  uv_library_shutdown();
  if (rc == 0)
    TEENY_LOGI(&d.log, "stopped");
out:
  if (d.log_open)
    teeny__log_close(&d.log);
  teeny__config_close(&d.cfg);
  return rc;
}
