/*
 * client/cuda_bench.c — teeny_tune_time_cuda: one candidate of an
 * autotuning run timed on the caller's stream the way
 * triton.testing.do_bench times a kernel.
 *
 *   1. load the module (cubin or PTX: teeny_module_load_result), launch
 *      once and wait (first-launch costs are not the kernel's);
 *   2. estimate one launch from five between two events;
 *   3. warm up for warmup_ms worth of launches;
 *   4. rep_ms worth of launches (at least one, at most REP_MAX), each
 *      after a 256 MiB memset that flushes the L2 cache, each between its
 *      own pair of events;
 *   5. the median of those times.
 * The flush buffer and events live for one call; the module is unloaded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/cuda_api.h"
#include "common/common.h"
#include "teeny/client.h"

#define FLUSH_BYTES (256u << 20) /* larger than any L2 */
#define ESTIMATE_RUNS 5
#define REP_MAX 2000

typedef struct bench {
  const teeny__cuda *cu;   /* the driver */
  teeny_module *m;         /* the candidate */
  unsigned grid[3];        /* its grid */
  CUstream stream;         /* the caller's */
  void **args;             /* its arguments */
  CUdeviceptr flush;       /* the L2 flush buffer */
  CUevent *ev;             /* 2 per timed launch */
  int nev;                 /* events created */
  char *err;               /* the caller's message buffer */
  size_t errsz;
} bench;

static int launch(bench *b) {
  return teeny_launch(b->m, b->grid, b->stream, b->args, b->err, b->errsz);
}

static int cu_call(bench *b, const char *what, CUresult r) {
  return r ? teeny__cuda_fail(b->err, b->errsz, what, r) : 0;
}

/* The time of n back-to-back launches between two events, in ms. */
static int timed(bench *b, int n, float *ms) {
  int rc = cu_call(b, "cuEventRecord", b->cu->cuEventRecord(b->ev[0], b->stream));
  for (int i = 0; !rc && i < n; i++)
    rc = launch(b);
  if (!rc)
    rc = cu_call(b, "cuEventRecord", b->cu->cuEventRecord(b->ev[1], b->stream));
  if (!rc)
    rc = cu_call(b, "cuEventSynchronize", b->cu->cuEventSynchronize(b->ev[1]));
  if (!rc)
    rc = cu_call(b, "cuEventElapsedTime", b->cu->cuEventElapsedTime(ms, b->ev[0], b->ev[1]));
  return rc;
}

static int make_events(bench *b, int n) {
  if (!(b->ev = teeny__calloc((size_t)n, sizeof *b->ev)))
    return TEENY_E_NOMEM;
  for (; b->nev < n; b->nev++) {
    CUresult r = b->cu->cuEventCreate(&b->ev[b->nev], CU_EVENT_DEFAULT);
    if (r)
      return teeny__cuda_fail(b->err, b->errsz, "cuEventCreate", r);
  }
  return 0;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Steps 4 and 5: n launches, each after a flush, each timed. */
static int measure(bench *b, int n, double *median) {
  float *t = teeny__calloc((size_t)n, sizeof *t);
  int rc = t ? 0 : TEENY_E_NOMEM;
  for (int i = 0; !rc && i < n; i++) {
    rc = cu_call(b, "cuMemsetD8Async",
                 b->cu->cuMemsetD8Async(b->flush, 0, FLUSH_BYTES, b->stream));
    if (!rc)
      rc = cu_call(b, "cuEventRecord", b->cu->cuEventRecord(b->ev[2 * i], b->stream));
    if (!rc)
      rc = launch(b);
    if (!rc)
      rc = cu_call(b, "cuEventRecord", b->cu->cuEventRecord(b->ev[2 * i + 1], b->stream));
  }
  if (!rc)
    rc = cu_call(b, "cuStreamSynchronize", b->cu->cuStreamSynchronize(b->stream));
  for (int i = 0; !rc && i < n; i++)
    rc = cu_call(b, "cuEventElapsedTime",
                 b->cu->cuEventElapsedTime(&t[i], b->ev[2 * i], b->ev[2 * i + 1]));
  if (!rc) {
    qsort(t, (size_t)n, sizeof *t, cmp_float);
    *median = n % 2 ? t[n / 2] : 0.5 * ((double)t[n / 2 - 1] + t[n / 2]);
  }
  teeny__free(t);
  return rc;
}

static int run(bench *b, const teeny_tune_bench *tb, double *ms) {
  int rc = teeny_module_load_result(tb->result, &b->m, b->err, b->errsz);
  if (!rc)
    rc = cu_call(b, "cuMemAlloc", b->cu->cuMemAlloc(&b->flush, FLUSH_BYTES));
  if (!rc)
    rc = make_events(b, 2);
  if (!rc && !(rc = launch(b))) /* step 1 */
    rc = cu_call(b, "cuStreamSynchronize", b->cu->cuStreamSynchronize(b->stream));
  float est = 0;
  if (!rc)
    rc = timed(b, ESTIMATE_RUNS, &est); /* step 2 */
  if (rc)
    return rc;
  double one = est / ESTIMATE_RUNS > 1e-6 ? est / ESTIMATE_RUNS : 1e-6;
  int warm = (int)((tb->warmup_ms > 0 ? tb->warmup_ms : 25) / one);
  int rep = (int)((tb->rep_ms > 0 ? tb->rep_ms : 100) / one);
  warm = warm < 1 ? 1 : warm;
  rep = rep < 1 ? 1 : rep > REP_MAX ? REP_MAX : rep;
  for (int i = 0; !rc && i < warm; i++) /* step 3 */
    rc = launch(b);
  if (!rc) {
    for (int i = 0; i < b->nev; i++)
      b->cu->cuEventDestroy(b->ev[i]);
    teeny__free(b->ev);
    b->ev = NULL;
    b->nev = 0;
    rc = make_events(b, 2 * rep);
  }
  return rc ? rc : measure(b, rep, ms);
}

int teeny_tune_time_cuda(void *ctx, const teeny_tune_bench *tb, double *ms, char *err,
                         size_t errsz) {
  (void)ctx;
  *ms = 0;
  int rc;
  bench b = {.cu = teeny__cuda_get(&rc, err, errsz), .stream = tb->stream,
             .args = tb->args, .err = err, .errsz = errsz};
  if (!b.cu)
    return rc;
  b.grid[0] = tb->grid.x ? tb->grid.x : 1;
  b.grid[1] = tb->grid.y ? tb->grid.y : 1;
  b.grid[2] = tb->grid.z ? tb->grid.z : 1;
  rc = run(&b, tb, ms);
  for (int i = 0; i < b.nev; i++)
    b.cu->cuEventDestroy(b.ev[i]);
  teeny__free(b.ev);
  if (b.flush)
    b.cu->cuMemFree(b.flush);
  teeny_module_unload(b.m);
  return rc;
}
