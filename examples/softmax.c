/*
 * examples/softmax.c — row-wise softmax with the typed API generated from
 * examples/kernels/softmax.c: one program per row, BLOCK_SIZE the next
 * power of two >= the row length.  On a GPU: launch, compare with a CPU
 * softmax (double), print the bandwidth; without one, compile only.
 *   softmax [--rows R] [--cols C] [--iters N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example.h"
#include "softmax.teeny.h"

#define APP "softmax"

static void cpu_softmax(const float *x, float *y, long rows, long cols) {
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    double mx = -INFINITY, den = 0;
    for (long j = 0; j < cols; j++)
      mx = fmax(mx, xr[j]);
    for (long j = 0; j < cols; j++)
      den += exp(xr[j] - mx);
    for (long j = 0; j < cols; j++)
      y[r * cols + j] = (float)(exp(xr[j] - mx) / den);
  }
}

static int run_gpu(softmax_kernel *k, long rows, long cols, int iters) {
  char err[1024] = "";
  int status = EX_FAIL;
  size_t n = (size_t)(rows * cols), bytes = n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *ref = malloc(bytes);
  teeny_dptr dx = {0}, dy = {0};
  if (!x || !y || !ref)
    goto out;
  ex_random(x, n, 3);
  for (size_t i = 0; i < n; i++)
    x[i] *= 8.0f;
  EX_TRY(APP, err, teeny_cuda_alloc(&dx, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_alloc(&dy, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(dx, x, bytes, err, sizeof err));
  softmax_args args = {.out_ptr = dy, .in_ptr = dx, .in_row_stride = (int32_t)cols,
                       .out_row_stride = (int32_t)cols, .n_cols = (int32_t)cols};
  teeny_grid grid = {.x = (unsigned)rows};
  if (softmax_launch(k, grid, NULL, &args)) {
    fprintf(stderr, "%s: %s\n", APP, k->base.err);
    goto out;
  }
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_host(y, dy, bytes, err, sizeof err));
  cpu_softmax(x, ref, rows, cols);
  double e = ex_max_rel_err(y, ref, n, 1e-6);
  if (e > 1e-4) {
    fprintf(stderr, "%s: max relative error %.3g against the CPU (limit 1e-4)\n", APP, e);
    goto out;
  }
  double t0 = ex_now_ms();
  for (int i = 0; i < iters; i++)
    softmax_launch(k, grid, NULL, &args);
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  double ms = (ex_now_ms() - t0) / iters;
  printf("%-11s %-34s %ldx%ld matches the CPU (max rel err %.2g)\n", APP, k->id, rows, cols, e);
  ex_report_rate(APP, "bandwidth (read x, write y)", 2.0 * (double)bytes, ms, "GB/s");
  status = EX_OK;
out:
  teeny_cuda_free(dx);
  teeny_cuda_free(dy);
  free(x);
  free(y);
  free(ref);
  return status;
}

int main(int argc, char **argv) {
  long rows = ex_arg(argc, argv, "--rows", 4096);
  long cols = ex_arg(argc, argv, "--cols", 4096);
  int iters = (int)ex_arg(argc, argv, "--iters", 20);
  int32_t block = 1;
  while (block < cols)
    block *= 2;
  int warps = block < 2048 ? 4 : block < 4096 ? 8 : 16;
  int gpu;
  char why[1024];
  const char *target = ex_target(&gpu, why, sizeof why);
  teeny_client *c = ex_open(APP);
  if (!c)
    return EX_FAIL;
  int status = EX_FAIL;
  softmax_dispatched d;
  if (softmax_dispatch(&d, TEENY_DT_F32, (softmax_consts){.block_size = block}) ||
      softmax_set_options(&d.forward, target, warps)) {
    fprintf(stderr, "%s: %s\n", APP, d.error[0] ? d.error : d.forward.base.err);
    goto done;
  }
  int go = ex_compile(APP, c, &d.forward.base, gpu, why);
  status = go < 0 ? EX_FAIL : go == 0 ? EX_OK : run_gpu(&d.forward, rows, cols, iters);
done:
  softmax_dispatched_close(&d);
  teeny_client_close(c);
  return status;
}
