/*
 * examples/matmul.c — C = A B in f16 (f32 accumulation) with the typed API
 * generated from examples/kernels/matmul.c, 128x256x64 blocks and 8 warps
 * (the fastest tile of bench/gpu.py on the H200).
 * On a GPU: launch, check 512 sampled entries of C against a CPU dot
 * product in double, print TFLOP/s; without one, compile only.
 *   matmul [--size N] [--iters N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example.h"
#include "matmul.teeny.h"

#define APP "matmul"
#define SAMPLES 512

/* Sampled check: worst |c - ref| / (|ref| + 1) over SAMPLES entries. */
static double check(const uint16_t *a, const uint16_t *b, const uint16_t *c, long n) {
  double worst = 0;
  uint32_t s = 7;
  for (int t = 0; t < SAMPLES; t++) {
    s = s * 1664525u + 1013904223u;
    long i = (long)(s % (uint32_t)n);
    s = s * 1664525u + 1013904223u;
    long j = (long)(s % (uint32_t)n);
    double ref = 0;
    for (long k = 0; k < n; k++)
      ref += (double)ex_f32(a[i * n + k]) * (double)ex_f32(b[k * n + j]);
    double e = fabs(ex_f32(c[i * n + j]) - ref) / (fabs(ref) + 1.0);
    worst = e > worst || isnan(e) ? e : worst;
  }
  return worst;
}

static int run_gpu(matmul_kernel *k, long n, int iters) {
  char err[1024] = "";
  int status = EX_FAIL;
  size_t elems = (size_t)(n * n), bytes = elems * 2;
  float *tmp = malloc(elems * sizeof(float));
  uint16_t *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  teeny_dptr da = {0}, db = {0}, dc = {0};
  if (!tmp || !a || !b || !c)
    goto out;
  ex_random(tmp, elems, 8);
  for (size_t i = 0; i < elems; i++)
    a[i] = ex_f16(tmp[i]);
  ex_random(tmp, elems, 9);
  for (size_t i = 0; i < elems; i++)
    b[i] = ex_f16(tmp[i]);
  EX_TRY(APP, err, teeny_cuda_alloc(&da, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_alloc(&db, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_alloc(&dc, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(da, a, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(db, b, bytes, err, sizeof err));
  int32_t m = (int32_t)n;
  matmul_args args = {.a_ptr = da, .b_ptr = db, .c_ptr = dc, .M = m, .N = m, .K = m,
                      .stride_am = m, .stride_ak = 1, .stride_bk = m, .stride_bn = 1,
                      .stride_cm = m, .stride_cn = 1};
  long bm = k->block_m, bn = k->block_n;
  teeny_grid grid = {.x = (unsigned)(((n + bm - 1) / bm) * ((n + bn - 1) / bn))};
  if (matmul_launch(k, grid, NULL, &args)) {
    fprintf(stderr, "%s: %s\n", APP, k->base.err);
    goto out;
  }
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_host(c, dc, bytes, err, sizeof err));
  double e = check(a, b, c, n);
  if (e > 2e-2) {
    fprintf(stderr, "%s: error %.3g against the CPU on sampled entries (limit 2e-2)\n", APP, e);
    goto out;
  }
  double t0 = ex_now_ms();
  for (int i = 0; i < iters; i++)
    matmul_launch(k, grid, NULL, &args);
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  double ms = (ex_now_ms() - t0) / iters;
  printf("%-11s %-34s %ld^3 matches the CPU on %d samples (err %.2g)\n", APP, k->id, n,
         SAMPLES, e);
  ex_report_rate(APP, "throughput (2 N^3 flop)", 2.0 * (double)n * (double)n * (double)n, ms,
                 "TFLOP/s");
  status = EX_OK;
out:
  teeny_cuda_free(da);
  teeny_cuda_free(db);
  teeny_cuda_free(dc);
  free(tmp);
  free(a);
  free(b);
  free(c);
  return status;
}

int main(int argc, char **argv) {
  long n = ex_arg(argc, argv, "--size", 4096);
  int iters = (int)ex_arg(argc, argv, "--iters", 10);
  int gpu;
  char why[1024];
  const char *target = ex_target(&gpu, why, sizeof why);
  teeny_client *c = ex_open(APP);
  if (!c)
    return EX_FAIL;
  int status = EX_FAIL;
  matmul_dispatched d;
  matmul_consts consts = {.block_m = 128, .block_n = 256, .block_k = 64, .group_m = 8};
  if (matmul_dispatch(&d, TEENY_DT_F16, consts) ||
      matmul_set_options(&d.forward, target, 8)) {
    fprintf(stderr, "%s: %s\n", APP, d.error[0] ? d.error : d.forward.base.err);
    goto done;
  }
  int go = ex_compile(APP, c, &d.forward.base, gpu, why);
  status = go < 0 ? EX_FAIL : go == 0 ? EX_OK : run_gpu(&d.forward, n, iters);
done:
  matmul_dispatched_close(&d);
  teeny_client_close(c);
  return status;
}
