/*
 * bench/tune.c — shared autotuning on the GPU (issue 16): matmul f16 on
 * one problem key over eight configurations, timed by libteenyc-client's
 * real timer (CUDA events, L2 flushed, median: teeny_tune_time_cuda).
 *
 *   teeny_bench_tune [--size N] [--processes P] [--check-by-hand]
 *
 * With --processes P (default 16) it starts P processes together (they
 * wait on a pipe that the parent then closes), each calling
 * teeny_client_tune through teenycd ($TEENYCD_SOCKET) on the same key;
 * then one more process, which must get the recorded winner.  It prints
 * each process's source (tuned / joined / recorded) and the last one's
 * round trip, and checks: exactly one tuned, the rest joined or recorded,
 * the last recorded in under 1 ms.  --check-by-hand then times every
 * candidate itself, twice, and checks that the recorded winner is within
 * 2% of the best it found.  Exit status: 0 when every check holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_kernels.h"

#define NCONFIGS 8
#define MAX_PROCS 64

/* BLOCK_M, BLOCK_N, BLOCK_K, num_warps (GROUP_M stays 8). */
static const int shapes[NCONFIGS][4] = {
    {128, 256, 64, 8}, {128, 128, 64, 8}, {128, 128, 64, 4}, {64, 128, 64, 4},
    {128, 256, 32, 8}, {256, 128, 64, 8}, {64, 256, 64, 8},  {128, 64, 64, 4}};

typedef struct setup {
  bk_case k;                                     /* the kernel and its buffers */
  teeny_const_binding consts[NCONFIGS][3];       /* BLOCK_M, BLOCK_N, BLOCK_K */
  teeny_tune_config configs[NCONFIGS];
  char problem[64];
} setup;

static void grid_of(void *ctx, const teeny_tune_config *c, teeny_grid *out) {
  const setup *s = ctx;
  *out = bk_grid(&s->k, c->consts[0].value, c->consts[1].value);
}

static int setup_init(setup *s, long n, char *err, size_t errsz) {
  memset(s, 0, sizeof *s);
  if (bk_init(&s->k, "matmul", n))
    return -1;
  s->k.req.nconsts = 1; /* GROUP_M only: the rest is tuned */
  s->k.ct[0] = (teeny_const_binding){"GROUP_M", 8};
  for (int i = 0; i < NCONFIGS; i++) {
    s->consts[i][0] = (teeny_const_binding){"BLOCK_M", shapes[i][0]};
    s->consts[i][1] = (teeny_const_binding){"BLOCK_N", shapes[i][1]};
    s->consts[i][2] = (teeny_const_binding){"BLOCK_K", shapes[i][2]};
    s->configs[i] = (teeny_tune_config){s->consts[i], 3, shapes[i][3]};
  }
  snprintf(s->problem, sizeof s->problem, "M=%ld N=%ld K=%ld", s->k.n, s->k.n, s->k.n);
  return bk_alloc(&s->k, err, errsz);
}

static teeny_tune_req request(setup *s) {
  return (teeny_tune_req){.base = &s->k.req, .configs = s->configs, .nconfigs = NCONFIGS,
                          .problem = s->problem, .grid = grid_of, .grid_ctx = s,
                          .args = s->k.args, .nargs = s->k.nargs};
}

/* ---- one process's tune ------------------------------------------------------------ */

typedef struct outcome {
  int rc;
  int source;
  long index;
  double best_ms, lookup_ms;
} outcome;

static outcome tune_here(long n) {
  outcome o = {.rc = -1, .index = -1};
  char err[1024] = "";
  setup s;
  teeny_client *c = NULL;
  teeny_tune_result *r = NULL;
  teeny_client_opts co = {.mode = TEENY_MODE_DAEMON, .client_name = "teeny_bench_tune"};
  if (setup_init(&s, n, err, sizeof err) || teeny_client_open(&c, &co)) {
    fprintf(stderr, "teeny_bench_tune: %s\n", err[0] ? err : c ? teeny_client_errmsg(c) : "cannot start");
    goto done;
  }
  teeny_tune_req q = request(&s);
  o.rc = teeny_client_tune(c, &q, &r);
  if (o.rc) {
    fprintf(stderr, "teeny_bench_tune: %s\n", r ? r->error : teeny_client_errmsg(c));
    goto done;
  }
  o.source = (int)r->source;
  o.index = r->index == SIZE_MAX ? -1 : (long)r->index;
  o.best_ms = r->best_ms;
  o.lookup_ms = r->lookup_ms;
done:
  teeny_tune_result_free(r);
  teeny_client_close(c);
  bk_close(&s.k);
  return o;
}

/* ---- P processes at once, then one more ------------------------------------------- */

static int together(int procs, long n, outcome *last) {
  int go[2], res[2];
  pid_t kids[MAX_PROCS];
  if (pipe(go) || pipe(res))
    return 1;
  for (int i = 0; i < procs; i++) {
    if ((kids[i] = fork()) == 0) {
      close(go[1]);
      char b;
      (void)!read(go[0], &b, 1);
      outcome o = tune_here(n);
      (void)!write(res[1], &o, sizeof o);
      _exit(0);
    }
  }
  close(go[1]); /* all start now */
  close(res[1]);
  int tuned = 0, others = 0, bad = 0;
  for (int i = 0; i < procs; i++) {
    outcome o;
    if (read(res[0], &o, sizeof o) != (ssize_t)sizeof o) {
      bad++;
      continue;
    }
    printf("  process %2d: %-8s configuration %ld (%.4f ms)\n", i,
           o.rc ? "FAILED" : teeny_tune_source_name((teeny_tune_source)o.source), o.index,
           o.best_ms);
    bad += o.rc != 0;
    tuned += !o.rc && o.source == TEENY_TUNE_TUNED;
    others += !o.rc && (o.source == TEENY_TUNE_JOINED || o.source == TEENY_TUNE_RECORDED);
  }
  for (int i = 0; i < procs; i++)
    waitpid(kids[i], NULL, 0);
  close(go[0]);
  close(res[0]);
  *last = tune_here(n); /* the 17th */
  bool ok = !bad && tuned == 1 && others == procs - 1 && !last->rc &&
            last->source == TEENY_TUNE_RECORDED && last->lookup_ms < 1.0;
  printf("%d processes together: %d tuned, %d got its winner; one more: %s in %.3f ms "
         "(bar: recorded in < 1 ms): %s\n",
         procs, tuned, others, last->rc ? "FAILED" :
         teeny_tune_source_name((teeny_tune_source)last->source), last->lookup_ms,
         ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

/* ---- every candidate by hand ------------------------------------------------------- */

/* The best median of two fresh timings of configuration i (or NAN). */
static double time_by_hand(teeny_client *c, setup *s, int i) {
  teeny_const_binding consts[4] = {s->k.ct[0], s->consts[i][0], s->consts[i][1],
                                   s->consts[i][2]};
  teeny_compile_req req = s->k.req;
  req.consts = consts;
  req.nconsts = 4;
  req.num_warps = shapes[i][3];
  teeny_client_result *r = NULL;
  double best = NAN;
  if (teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r) == 0) {
    teeny_tune_bench b = {r, &s->configs[i], (size_t)i, {0, 0, 0}, NULL, s->k.args,
                          s->k.nargs, 25, 100};
    grid_of(s, &s->configs[i], &b.grid);
    char err[512];
    for (int rep = 0; rep < 2; rep++) {
      double ms;
      if (teeny_tune_time_cuda(NULL, &b, &ms, err, sizeof err) == 0 &&
          (isnan(best) || ms < best))
        best = ms;
    }
  }
  teeny_client_result_free(r);
  return best;
}

static int by_hand(long n, long winner) {
  char err[1024] = "";
  setup s;
  teeny_client *c = NULL;
  teeny_client_opts co = {.mode = TEENY_MODE_DAEMON, .client_name = "teeny_bench_tune"};
  int status = 1;
  if (setup_init(&s, n, err, sizeof err) || teeny_client_open(&c, &co)) {
    fprintf(stderr, "teeny_bench_tune: %s\n", err[0] ? err : c ? teeny_client_errmsg(c) : "cannot start");
    goto done;
  }
  double t[NCONFIGS], best = NAN;
  int bi = -1;
  for (int i = 0; i < NCONFIGS; i++) {
    t[i] = time_by_hand(c, &s, i);
    printf("  by hand: BLOCK %dx%dx%d, %d warps: %.4f ms (%.1f TFLOP/s)\n", shapes[i][0],
           shapes[i][1], shapes[i][2], shapes[i][3], t[i],
           2.0 * (double)n * (double)n * (double)n / (t[i] * 1e9));
    if (!isnan(t[i]) && (bi < 0 || t[i] < best))
      best = t[i], bi = i;
  }
  double w = winner >= 0 ? t[winner] : NAN;
  bool ok = bi >= 0 && !isnan(w) && w <= best * 1.02;
  printf("autotune picked configuration %ld: %.4f ms; best by hand %d: %.4f ms; within 2%%: "
         "%s\n", winner, w, bi, best, ok ? "ok" : "FAILED");
  status = ok ? 0 : 1;
done:
  teeny_client_close(c);
  bk_close(&s.k);
  return status;
}

int main(int argc, char **argv) {
  long n = 4096;
  int procs = 16;
  bool hand = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc)
      n = atol(argv[++i]);
    else if (!strcmp(argv[i], "--processes") && i + 1 < argc)
      procs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check-by-hand"))
      hand = true;
    else {
      fprintf(stderr, "usage: teeny_bench_tune [--size N] [--processes P] "
                      "[--check-by-hand]\n");
      return 2;
    }
  }
  if (procs < 1 || procs > MAX_PROCS || n < 256)
    return 2;
  printf("matmul f16 %ld^3, %d configurations, problem key \"M=%ld N=%ld K=%ld\"\n", n,
         NCONFIGS, n, n, n);
  outcome last;
  int status = together(procs, n, &last);
  if (hand && !last.rc)
    status |= by_hand(n, last.index);
  return status;
}
