/*
 * examples/vector_add.c — out = a + b with the typed API generated from
 * examples/kernels/vector_add.c (teeny_add_kernels in CMakeLists.txt).
 *
 * Compiles vector_add for f32 through libteenyc-client (teenycd, or in
 * process: $TEENYC_MODE) and prints where the PTX came from.  On a GPU it
 * launches the kernel, checks every element against the CPU and prints
 * the bandwidth; without one it says so.
 *   vector_add [--n ELEMENTS] [--iters N]
 */
#include <stdio.h>
#include <stdlib.h>

#include "example.h"
#include "vector_add.teeny.h"

#define APP "vector_add"

static int run_gpu(vector_add_kernel *k, long n, int iters) {
  char err[1024] = "";
  int status = EX_FAIL;
  size_t bytes = (size_t)n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *out = malloc(bytes);
  teeny_dptr da = {0}, db = {0}, dout = {0};
  if (!a || !b || !out)
    goto out;
  ex_random(a, (size_t)n, 1);
  ex_random(b, (size_t)n, 2);
  EX_TRY(APP, err, teeny_cuda_alloc(&da, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_alloc(&db, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_alloc(&dout, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(da, a, bytes, err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_device(db, b, bytes, err, sizeof err));
  vector_add_args args = {.a_ptr = da, .b_ptr = db, .out_ptr = dout, .n_elements = (int32_t)n};
  teeny_grid grid = {.x = (unsigned)((n + k->block_size - 1) / k->block_size)};
  if (vector_add_launch(k, grid, NULL, &args)) {
    fprintf(stderr, "%s: %s\n", APP, k->base.err);
    goto out;
  }
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  EX_TRY(APP, err, teeny_cuda_to_host(out, dout, bytes, err, sizeof err));
  for (long i = 0; i < n; i++)
    if (out[i] != a[i] + b[i]) {
      fprintf(stderr, "%s: wrong result at %ld: %g, expected %g\n", APP, i, out[i], a[i] + b[i]);
      goto out;
    }
  double t0 = ex_now_ms();
  for (int i = 0; i < iters; i++)
    vector_add_launch(k, grid, NULL, &args);
  EX_TRY(APP, err, teeny_cuda_sync(err, sizeof err));
  double ms = (ex_now_ms() - t0) / iters;
  printf("%-11s %-34s all %ld elements match the CPU\n", APP, k->id, n);
  ex_report_rate(APP, "bandwidth (read a, b; write out)", 3.0 * (double)bytes, ms, "GB/s");
  status = EX_OK;
out:
  teeny_cuda_free(da);
  teeny_cuda_free(db);
  teeny_cuda_free(dout);
  free(a);
  free(b);
  free(out);
  return status;
}

int main(int argc, char **argv) {
  long n = ex_arg(argc, argv, "--n", 1L << 26);
  int iters = (int)ex_arg(argc, argv, "--iters", 20);
  int gpu;
  char why[1024];
  const char *target = ex_target(&gpu, why, sizeof why);
  teeny_client *c = ex_open(APP);
  if (!c)
    return EX_FAIL;
  int status = EX_FAIL;
  vector_add_dispatched d;
  if (vector_add_dispatch(&d, TEENY_DT_F32, (vector_add_consts){.block_size = 1024}) ||
      vector_add_set_options(&d.forward, target, 4)) {
    fprintf(stderr, "%s: %s\n", APP, d.error[0] ? d.error : d.forward.base.err);
    goto done;
  }
  int go = ex_compile(APP, c, &d.forward.base, gpu, why);
  status = go < 0 ? EX_FAIL : go == 0 ? EX_OK : run_gpu(&d.forward, n, iters);
done:
  vector_add_dispatched_close(&d);
  teeny_client_close(c);
  return status;
}
