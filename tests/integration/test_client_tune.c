/*
 * tests/integration/test_client_tune.c — issue 16 through libteenyc-client
 * against the real teenycd: shared autotuning (six processes started
 * together on one problem key run one tuning, the rest join it; a later
 * process gets the winner without timing anything; the record survives a
 * restart; teenyctl tuned lists and purges it; a tuner that dies mid-run
 * is replaced by a waiting process) and cubins as the client sees them
 * (the architecture it names, the target it then defaults to, the cubin of
 * its GPU and never another's).
 *
 * Timing needs a GPU, so these tests inject a deterministic timer (the
 * request's timer hook); it appends one byte to a file per call, so the
 * number of tuning runs across processes can be counted.  Everything else
 * — the daemon, its sockets, its SQLite store, the compiles — is real.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"
#include "tests/integration/test_client.h"

#define NPROC 6
#define PTXAS "/usr/local/cuda/bin/ptxas"

/* ---- the kernel and its configurations -------------------------------------------- */

typedef struct tune_setup {
  char *src;                     /* vector_add's source (owned) */
  teeny_compile_req base;        /* D=f32; BLOCK_SIZE is tuned */
  teeny_dtype_binding dt[1];
  teeny_const_binding blocks[4]; /* one const per configuration */
  teeny_tune_config configs[4];
} tune_setup;

static const int64_t block_sizes[4] = {256, 512, 1024, 1024};
static const int warps[4] = {4, 4, 4, 8};
#define WINNER 2 /* the fake timer's fastest */

static int setup_init(tune_setup *s) {
  memset(s, 0, sizeof *s);
  size_t len;
  if (!(s->src = tc_kernel_source("vector_add", &len)))
    return -1;
  s->dt[0] = (teeny_dtype_binding){"D", "f32"};
  s->base = (teeny_compile_req){.source = s->src, .source_len = len,
                                .filename = "vector_add.c", .kernel = "vector_add",
                                .dtypes = s->dt, .ndtypes = 1};
  for (int i = 0; i < 4; i++) {
    s->blocks[i] = (teeny_const_binding){"BLOCK_SIZE", block_sizes[i]};
    s->configs[i] = (teeny_tune_config){&s->blocks[i], 1, warps[i]};
  }
  return 0;
}

/* What the injected timer does: count its calls in a file, take a while
 * (so that processes started together overlap), answer by index. */
typedef struct fake_timer {
  const char *count_path; /* one byte appended per call */
  int delay_ms;           /* per call */
  int ready_fd;           /* >= 0: write a byte here at the first call */
  bool hang;              /* never return (a tuner that gets stuck) */
} fake_timer;

static int fake_time(void *ctx, const teeny_tune_bench *b, double *ms, char *err,
                     size_t errsz) {
  (void)err, (void)errsz;
  fake_timer *f = ctx;
  int fd = open(f->count_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd >= 0) {
    (void)!write(fd, "x", 1);
    close(fd);
  }
  if (f->ready_fd >= 0) {
    (void)!write(f->ready_fd, "r", 1);
    f->ready_fd = -1;
  }
  while (f->hang)
    pause();
  usleep((useconds_t)f->delay_ms * 1000);
  if (!b->result || !b->result->art.ptx)
    return TEENY_E_INVAL; /* it was compiled, through the daemon */
  *ms = 1.0 + fabs((double)b->index - WINNER); /* WINNER is fastest */
  return 0;
}

static void one_grid(void *ctx, const teeny_tune_config *c, teeny_grid *out) {
  (void)ctx, (void)c;
  *out = (teeny_grid){1, 1, 1};
}

static teeny_tune_req tune_req(tune_setup *s, fake_timer *f, const char *problem) {
  return (teeny_tune_req){.base = &s->base, .configs = s->configs, .nconfigs = 4,
                          .problem = problem, .grid = one_grid, .timer = fake_time,
                          .timer_ctx = f, .gpu = "Test GPU 80GB", .driver = "999.1"};
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* One tune in this process: the source and index as "source index". */
static int tune_once(const char *sock, tune_setup *s, fake_timer *f, const char *problem,
                     teeny_tune_source *src, size_t *index, double *lookup_ms) {
  teeny_client *c = it_client_open(TEENY_MODE_DAEMON, sock, NULL);
  if (!c)
    return -1;
  teeny_tune_req q = tune_req(s, f, problem);
  teeny_tune_result *r = NULL;
  int rc = teeny_client_tune(c, &q, &r);
  if (rc)
    fprintf(stderr, "tune: %s\n", r && r->error ? r->error : teeny_client_errmsg(c));
  else {
    *src = r->source;
    *index = r->index;
    if (lookup_ms)
      *lookup_ms = r->lookup_ms;
  }
  teeny_tune_result_free(r);
  teeny_client_close(c);
  return rc;
}

/* ---- N processes, one tuning ---------------------------------------------------------- */

typedef struct outcome {
  int rc;
  int source;
  long index;
} outcome;

/* A child: wait for the start, tune, report on out_fd, exit. */
static void child(const char *sock, tune_setup *s, fake_timer *f, int go_fd, int out_fd) {
  char b;
  (void)!read(go_fd, &b, 1); /* all start when the parent closes the pipe */
  outcome o = {.rc = -1};
  teeny_tune_source src = TEENY_TUNE_LOCAL;
  size_t index = SIZE_MAX;
  o.rc = tune_once(sock, s, f, "n=1048576", &src, &index, NULL);
  o.source = (int)src;
  o.index = index == SIZE_MAX ? -1 : (long)index;
  (void)!write(out_fd, &o, sizeof o);
  _exit(0);
}

int it_client_tune_single_flight(void) {
  tdaemon d;
  tune_setup s;
  bool failed = true;
  int go[2] = {-1, -1}, res[2] = {-1, -1}, nkids = 0;
  pid_t kids[NPROC];
  char count[256];
  CHECK(td_init(&d) == 0);
  CHECK(setup_init(&s) == 0);
  snprintf(count, sizeof count, "%s/timer-calls", d.dir);
  fake_timer f = {count, 40, -1, false};
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(pipe(go) == 0 && pipe(res) == 0);
  for (; nkids < NPROC; nkids++) {
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
      close(go[1]);
      close(res[0]);
      child(d.sock, &s, &f, go[0], res[1]);
    }
    kids[nkids] = p;
  }
  close(go[1]); /* go */
  go[1] = -1;
  close(res[1]);
  res[1] = -1;
  int tuned = 0, joined = 0, recorded = 0;
  for (int i = 0; i < NPROC; i++) {
    outcome o;
    CHECK(read(res[0], &o, sizeof o) == (ssize_t)sizeof o);
    fprintf(stderr, "process %d: rc %d, %s, configuration %ld\n", i, o.rc,
            teeny_tune_source_name((teeny_tune_source)o.source), o.index);
    CHECK_INT(o.rc, ==, 0);
    CHECK_INT(o.index, ==, WINNER);
    tuned += o.source == TEENY_TUNE_TUNED;
    joined += o.source == TEENY_TUNE_JOINED;
    recorded += o.source == TEENY_TUNE_RECORDED;
  }
  CHECK_INT(tuned, ==, 1);                     /* one tuning run ... */
  CHECK_INT(joined + recorded, ==, NPROC - 1); /* ... the rest got its winner */
  CHECK_INT(file_size(count), ==, 4);          /* the candidates timed once */
  /* a later process: the record, one round trip, nothing timed */
  teeny_tune_source src;
  size_t index;
  double lookup = 0;
  CHECK_INT(tune_once(d.sock, &s, &f, "n=1048576", &src, &index, &lookup), ==, 0);
  CHECK_INT(src, ==, TEENY_TUNE_RECORDED);
  CHECK_INT(index, ==, WINNER);
  CHECK_INT(file_size(count), ==, 4);
  fprintf(stderr, "later process: the winner in %.3f ms\n", lookup);
  /* another problem key is another tuning */
  CHECK_INT(tune_once(d.sock, &s, &f, "n=4096", &src, &index, NULL), ==, 0);
  CHECK_INT(src, ==, TEENY_TUNE_TUNED);
  CHECK_INT(file_size(count), ==, 8);
  failed = false;
fail:
  for (int i = 0; i < nkids; i++)
    waitpid(kids[i], NULL, 0);
  for (int i = 0; i < 2; i++) {
    if (go[i] >= 0)
      close(go[i]);
    if (res[i] >= 0)
      close(res[i]);
  }
  free(s.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- restarts and teenyctl tuned ---------------------------------------------------------- */

/* Run teenyctl with args; its stdout into out (n bytes).  Its exit status. */
static int teenyctl(const tdaemon *d, const char *args, char *out, size_t n) {
  const char *bin = getenv("TEENYCTL_BIN");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --socket '%s' %s", bin ? bin : "teenyctl", d->sock, args);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  size_t got = fread(out, 1, n - 1, p);
  out[got] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int it_client_tune_restart(void) {
  tdaemon d;
  tune_setup s;
  bool failed = true;
  char count[256], out[8192];
  CHECK(td_init(&d) == 0);
  CHECK(setup_init(&s) == 0);
  snprintf(count, sizeof count, "%s/timer-calls", d.dir);
  fake_timer f = {count, 0, -1, false};
  CHECK(td_start(&d, NULL, NULL) == 0);
  teeny_tune_source src;
  size_t index;
  CHECK_INT(tune_once(d.sock, &s, &f, "n=77", &src, &index, NULL), ==, 0);
  CHECK_INT(src, ==, TEENY_TUNE_TUNED);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  /* the record survived the restart: nothing timed */
  CHECK_INT(tune_once(d.sock, &s, &f, "n=77", &src, &index, NULL), ==, 0);
  CHECK_INT(src, ==, TEENY_TUNE_RECORDED);
  CHECK_INT(index, ==, WINNER);
  CHECK_INT(file_size(count), ==, 4);
  /* teenyctl lists it, then purges it */
  CHECK_INT(teenyctl(&d, "tuned", out, sizeof out), ==, 0);
  fputs(out, stderr);
  CHECK(strstr(out, "vector_add") && strstr(out, "n=77") && strstr(out, "Test GPU") &&
        strstr(out, "BLOCK_SIZE=1024 num_warps=4") && strstr(out, "1 tuning record"));
  CHECK_INT(teenyctl(&d, "--json tuned --name 'vector*'", out, sizeof out), ==, 0);
  CHECK(strstr(out, "\"problem\": \"n=77\"") && strstr(out, "\"BLOCK_SIZE\": 1024"));
  CHECK_INT(teenyctl(&d, "tuned --name nomatch", out, sizeof out), ==, 0);
  CHECK(strstr(out, "0 tuning records") != NULL);
  CHECK_INT(teenyctl(&d, "tuned --purge", out, sizeof out), ==, 2); /* usage */
  CHECK_INT(teenyctl(&d, "tuned --purge --all", out, sizeof out), ==, 0);
  CHECK(strstr(out, "removed 1 tuning record") != NULL);
  /* purged: the next process tunes again */
  CHECK_INT(tune_once(d.sock, &s, &f, "n=77", &src, &index, NULL), ==, 0);
  CHECK_INT(src, ==, TEENY_TUNE_TUNED);
  CHECK_INT(file_size(count), ==, 8);
  failed = false;
fail:
  free(s.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the tuner dies ---------------------------------------------------------------------- */

int it_client_tune_tuner_dies(void) {
  tdaemon d;
  tune_setup s;
  bool failed = true;
  char count[256];
  int ready[2] = {-1, -1}, res[2] = {-1, -1};
  pid_t tuner = -1, waiter = -1;
  CHECK(td_init(&d) == 0);
  CHECK(setup_init(&s) == 0);
  snprintf(count, sizeof count, "%s/timer-calls", d.dir);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(pipe(ready) == 0 && pipe(res) == 0);
  if ((tuner = fork()) == 0) { /* gets the tuning, then hangs in its timer */
    fake_timer f = {count, 0, ready[1], true};
    teeny_tune_source src;
    size_t index;
    tune_once(d.sock, &s, &f, "n=5", &src, &index, NULL);
    _exit(1);
  }
  CHECK(tuner > 0);
  char b;
  CHECK(read(ready[0], &b, 1) == 1); /* it is tuning */
  if ((waiter = fork()) == 0) {      /* waits on it, then takes over */
    fake_timer f = {count, 0, -1, false};
    outcome o = {.rc = -1};
    teeny_tune_source src = TEENY_TUNE_LOCAL;
    size_t index = SIZE_MAX;
    o.rc = tune_once(d.sock, &s, &f, "n=5", &src, &index, NULL);
    o.source = (int)src;
    o.index = index == SIZE_MAX ? -1 : (long)index;
    (void)!write(res[1], &o, sizeof o);
    _exit(0);
  }
  CHECK(waiter > 0);
  usleep(300000); /* the waiter is waiting on the daemon */
  CHECK(kill(tuner, SIGKILL) == 0);
  outcome o;
  CHECK(read(res[0], &o, sizeof o) == (ssize_t)sizeof o);
  CHECK_INT(o.rc, ==, 0);
  CHECK_INT(o.source, ==, TEENY_TUNE_TUNED); /* it took over */
  CHECK_INT(o.index, ==, WINNER);
  failed = false;
fail:
  if (tuner > 0) {
    kill(tuner, SIGKILL);
    waitpid(tuner, NULL, 0);
  }
  if (waiter > 0)
    waitpid(waiter, NULL, 0);
  for (int i = 0; i < 2; i++) {
    if (ready[i] >= 0)
      close(ready[i]);
    if (res[i] >= 0)
      close(res[i]);
  }
  free(s.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- cubins through the client ----------------------------------------------------------- */

/* Compile r's request (no memo) until its result has a cubin (30 s). */
static teeny_client_result *wait_cubin(teeny_client *c, const teeny_compile_req *req) {
  for (int i = 0; i < 300; i++) {
    teeny_client_result *r = NULL;
    if (teeny_client_compile(c, req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r) == 0 &&
        r->cubin)
      return r;
    teeny_client_result_free(r);
    usleep(100000);
  }
  fprintf(stderr, "no cubin came\n");
  return NULL;
}

int it_client_cubin_arch(void) {
  if (access(PTXAS, X_OK) != 0) {
    fprintf(stderr, "SKIP: no ptxas at " PTXAS "\n");
    return IT_SKIP;
  }
  tdaemon d;
  tune_setup s;
  bool failed = true;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  teeny_module *m = NULL;
  char err[512];
  CHECK(td_init(&d) == 0);
  CHECK(setup_init(&s) == 0);
  const char *args[] = {"--sass", "ptxas", "--ptxas", PTXAS, NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK((c = it_client_open(TEENY_MODE_DAEMON, d.sock, NULL)) != NULL);
  teeny_const_binding block = {"BLOCK_SIZE", 1024};
  teeny_compile_req req = s.base;
  req.consts = &block;
  req.nconsts = 1;
  /* without CUDA the client names no GPU, and gets no cubin */
  CHECK(strcmp(teeny_client_arch(c), "") == 0);
  CHECK_INT(teeny_client_set_arch(c, "sm_9x"), ==, TEENY_E_INVAL);
  CHECK_INT(teeny_client_set_arch(c, "sm_90a"), ==, TEENY_E_INVAL); /* a GPU, not a target */
  CHECK_INT(teeny_client_set_arch(c, "sm_90"), ==, 0);
  CHECK(strcmp(teeny_client_arch(c), "sm_90") == 0);
  CHECK((r = wait_cubin(c, &req)) != NULL);
  CHECK(strcmp(r->art.target, "sm_90a") == 0); /* the target for sm_90 */
  CHECK(strcmp(r->cubin_arch, "sm_90") == 0);
  CHECK(strncmp(r->cubin_toolchain, "ptxas ", 6) == 0);
  CHECK(teeny_cubin_usable(r->cubin, r->cubin_len, r->cubin_arch, "sm_90", err, sizeof err));
  CHECK(!teeny_cubin_usable(r->cubin, r->cubin_len, r->cubin_arch, "sm_80", err, sizeof err));
  /* loading it needs the driver: never attempted without one */
  CHECK_INT(teeny_module_load_result(r, &m, err, sizeof err), ==, TEENY_E_NOCUDA);
  CHECK(m == NULL);
  teeny_client_result_free(r);
  r = NULL;
  /* an sm_80 GPU: its own target and its own cubin, never the sm_90 one */
  CHECK_INT(teeny_client_set_arch(c, "sm_80"), ==, 0);
  CHECK_INT(teeny_client_compile(c, &req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r), ==, 0);
  CHECK(strcmp(r->art.target, "sm_80") == 0);
  CHECK(r->cubin == NULL || strcmp(r->cubin_arch, "sm_80") == 0);
  teeny_client_result_free(r);
  CHECK((r = wait_cubin(c, &req)) != NULL);
  CHECK(strcmp(r->cubin_arch, "sm_80") == 0);
  CHECK(teeny_cubin_usable(r->cubin, r->cubin_len, r->cubin_arch, "sm_80", err, sizeof err));
  teeny_client_result_free(r);
  r = NULL;
  /* naming no GPU again: PTX only */
  CHECK_INT(teeny_client_set_arch(c, NULL), ==, 0);
  CHECK_INT(teeny_client_compile(c, &req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, &r), ==, 0);
  CHECK(r->cubin == NULL);
  CHECK(strcmp(r->art.target, "sm_90a") == 0); /* the compiler's default */
  failed = false;
fail:
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(s.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
