/*
 * examples/layernorm.c — layer normalisation with the typed API generated
 * from examples/kernels/layernorm.c: y = (x - mean) * rstd * w + b per
 * row, mean and rstd kept for a backward pass.  On a GPU: launch, compare
 * y, mean and rstd with the CPU, print the bandwidth; else compile only.
 *   layernorm [--rows R] [--cols C] [--iters N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example.h"
#include "layernorm.teeny.h"

#define APP "layernorm"
#define EPS 1e-5f

/* Host and device buffers of one run. */
typedef struct bufs {
  float *x, *y, *w, *b, *mean, *rstd, *ref_y, *ref_mean, *ref_rstd;
  teeny_dptr dx, dy, dw, db, dmean, drstd;
} bufs;

static void cpu_layernorm(bufs *h, long rows, long cols) {
  for (long r = 0; r < rows; r++) {
    const float *x = h->x + r * cols;
    double s = 0, sq = 0;
    for (long j = 0; j < cols; j++)
      s += x[j];
    double mean = s / (double)cols;
    for (long j = 0; j < cols; j++)
      sq += (x[j] - mean) * (x[j] - mean);
    double rstd = 1.0 / sqrt(sq / (double)cols + EPS);
    h->ref_mean[r] = (float)mean;
    h->ref_rstd[r] = (float)rstd;
    for (long j = 0; j < cols; j++)
      h->ref_y[r * cols + j] = (float)((x[j] - mean) * rstd * h->w[j] + h->b[j]);
  }
}

static int alloc_all(bufs *h, long rows, long cols, char *err, size_t errsz) {
  size_t n = (size_t)(rows * cols);
  float **host[] = {&h->x, &h->y, &h->ref_y};
  for (int i = 0; i < 3; i++)
    if (!(*host[i] = malloc(n * sizeof(float))))
      return -1;
  float **rowv[] = {&h->w, &h->b};
  for (int i = 0; i < 2; i++)
    if (!(*rowv[i] = malloc((size_t)cols * sizeof(float))))
      return -1;
  float **stat[] = {&h->mean, &h->rstd, &h->ref_mean, &h->ref_rstd};
  for (int i = 0; i < 4; i++)
    if (!(*stat[i] = malloc((size_t)rows * sizeof(float))))
      return -1;
  int rc = teeny_cuda_alloc(&h->dx, n * 4, err, errsz);
  rc = rc ? rc : teeny_cuda_alloc(&h->dy, n * 4, err, errsz);
  rc = rc ? rc : teeny_cuda_alloc(&h->dw, (size_t)cols * 4, err, errsz);
  rc = rc ? rc : teeny_cuda_alloc(&h->db, (size_t)cols * 4, err, errsz);
  rc = rc ? rc : teeny_cuda_alloc(&h->dmean, (size_t)rows * 4, err, errsz);
  return rc ? rc : teeny_cuda_alloc(&h->drstd, (size_t)rows * 4, err, errsz);
}

static void free_all(bufs *h) {
  float *host[] = {h->x, h->y, h->w, h->b, h->mean, h->rstd, h->ref_y, h->ref_mean, h->ref_rstd};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++)
    free(host[i]);
  teeny_dptr dev[] = {h->dx, h->dy, h->dw, h->db, h->dmean, h->drstd};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
    teeny_cuda_free(dev[i]);
}

static int run_gpu(layernorm_kernel *k, long rows, long cols, int iters) {
  char err[1024] = "";
  int status = EX_FAIL;
  bufs h = {0};
  size_t n = (size_t)(rows * cols);
  EX_TRY(APP, err, alloc_all(&h, rows, cols, err, sizeof err));
  ex_random(h.x, n, 4);
  ex_random(h.w, (size_t)cols, 5);
  ex_random(h.b, (size_t)cols, 6);
  EX_TRY(APP, err, teeny_cuda_to_device(h.dx, h.x, n * 4, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(h.dw, h.w, (size_t)cols * 4, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(h.db, h.b, (size_t)cols * 4, err, sizeof err));
  layernorm_args args = {.x_ptr = h.dx, .y_ptr = h.dy, .w_ptr = h.dw, .b_ptr = h.db,
                         .mean_ptr = TEENY_DPTR_AS(f32, h.dmean),
                         .rstd_ptr = TEENY_DPTR_AS(f32, h.drstd),
                         .stride = (int32_t)cols, .n_cols = (int32_t)cols, .eps = EPS};
  teeny_grid grid = {.x = (unsigned)rows};
  if (layernorm_launch(k, grid, NULL, &args)) {
    fprintf(stderr, "%s: %s\n", APP, k->base.err);
    goto out;
  }
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_host(h.y, h.dy, n * 4, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_host(h.mean, h.dmean, (size_t)rows * 4, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_host(h.rstd, h.drstd, (size_t)rows * 4, err, sizeof err));
  cpu_layernorm(&h, rows, cols);
  double e = ex_max_rel_err(h.y, h.ref_y, n, 1e-2);
  double em = ex_max_rel_err(h.mean, h.ref_mean, (size_t)rows, 1e-3);
  double er = ex_max_rel_err(h.rstd, h.ref_rstd, (size_t)rows, 1e-3);
  if (e > 1e-3 || em > 1e-3 || er > 1e-3) {
    fprintf(stderr, "%s: relative error against the CPU: y %.3g, mean %.3g, rstd %.3g\n", APP,
            e, em, er);
    goto out;
  }
  double t0 = ex_now_ms();
  for (int i = 0; i < iters; i++)
    layernorm_launch(k, grid, NULL, &args);
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  double ms = (ex_now_ms() - t0) / iters;
  printf("%-11s %-34s %ldx%ld matches the CPU (max rel err %.2g)\n", APP, k->id, rows, cols, e);
  ex_report_rate(APP, "bandwidth (read x, write y)", 2.0 * (double)n * 4, ms, "GB/s");
  status = EX_OK;
out:
  free_all(&h);
  return status;
}

int main(int argc, char **argv) {
  long rows = ex_arg(argc, argv, "--rows", 4096);
  long cols = ex_arg(argc, argv, "--cols", 4096);
  int iters = (int)ex_arg(argc, argv, "--iters", 20);
  int gpu;
  char why[1024];
  const char *target = ex_target(&gpu, why, sizeof why);
  teeny_client *c = ex_open(APP);
  if (!c)
    return EX_FAIL;
  int status = EX_FAIL;
  layernorm_dispatched d;
  if (layernorm_dispatch(&d, TEENY_DT_F32, (layernorm_consts){.block_size = 1024}) ||
      layernorm_set_options(&d.forward, target, 8)) {
    fprintf(stderr, "%s: %s\n", APP, d.error[0] ? d.error : d.forward.base.err);
    goto done;
  }
  int go = ex_compile(APP, c, &d.forward.base, gpu, why);
  status = go < 0 ? EX_FAIL : go == 0 ? EX_OK : run_gpu(&d.forward, rows, cols, iters);
done:
  layernorm_dispatched_close(&d);
  teeny_client_close(c);
  return status;
}
