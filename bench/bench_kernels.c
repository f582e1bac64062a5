/*
 * bench/bench_kernels.c — vector_add and matmul for the GPU benchmarks
 * (see bench_kernels.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_kernels.h"

static char *read_source(const char *name, size_t *len) {
  const char *root = getenv("TEENY_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/%s.c", root ? root : ".", name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s (run from the source tree or set TEENY_SOURCE_DIR)\n",
            path);
    return NULL;
  }
  static char buf[1 << 16];
  *len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  char *s = malloc(*len + 1);
  if (s) {
    memcpy(s, buf, *len);
    s[*len] = '\0';
  }
  return s;
}

int bk_init(bk_case *k, const char *name, long n) {
  memset(k, 0, sizeof *k);
  k->name = name;
  size_t len;
  bool mm = strcmp(name, "matmul") == 0;
  if (!mm && strcmp(name, "vector_add") != 0) {
    fprintf(stderr, "unknown kernel %s (vector_add, matmul)\n", name);
    return -1;
  }
  if (!(k->source = read_source(name, &len)))
    return -1;
  k->n = n ? n : mm ? 4096 : 1 << 20;
  k->req = (teeny_compile_req){.source = k->source, .source_len = len, .filename = name,
                               .kernel = name, .dtypes = k->dt, .ndtypes = 1,
                               .consts = k->ct};
  if (mm) {
    k->dt[0] = (teeny_dtype_binding){"D", "f16"};
    k->ct[0] = (teeny_const_binding){"BLOCK_M", 128};
    k->ct[1] = (teeny_const_binding){"BLOCK_N", 256};
    k->ct[2] = (teeny_const_binding){"BLOCK_K", 64};
    k->ct[3] = (teeny_const_binding){"GROUP_M", 8};
    k->req.nconsts = 4;
    k->req.num_warps = 8;
  } else {
    k->dt[0] = (teeny_dtype_binding){"D", "f32"};
    k->ct[0] = (teeny_const_binding){"BLOCK_SIZE", 1024};
    k->req.nconsts = 1;
  }
  return 0;
}

static long cdiv(long a, long b) { return (a + b - 1) / b; }

teeny_grid bk_grid(const bk_case *k, long bm, long bn) {
  if (strcmp(k->name, "matmul") == 0)
    return (teeny_grid){(unsigned)(cdiv(k->n, bm) * cdiv(k->n, bn)), 1, 1};
  return (teeny_grid){(unsigned)cdiv(k->n, bm), 1, 1};
}

int bk_alloc(bk_case *k, char *err, size_t errsz) {
  bool mm = strcmp(k->name, "matmul") == 0;
  size_t bytes = mm ? (size_t)(k->n * k->n) * 2 : (size_t)k->n * 4;
  for (int i = 0; i < 3; i++) {
    int rc = teeny_cuda_alloc(&k->buf[i], bytes, err, errsz);
    if (!rc)
      rc = teeny_cuda_memset(k->buf[i], 0, bytes, err, errsz);
    if (rc)
      return rc;
    k->args[i] = &k->buf[i].addr;
  }
  int32_t n = (int32_t)k->n;
  if (mm) { /* M, N, K, then row-major strides of A, B, C */
    int32_t v[9] = {n, n, n, n, 1, n, 1, n, 1};
    memcpy(k->ints, v, sizeof v);
    for (int i = 0; i < 9; i++)
      k->args[3 + i] = &k->ints[i];
    k->nargs = 12;
  } else {
    k->ints[0] = n;
    k->args[3] = &k->ints[0];
    k->nargs = 4;
  }
  return 0;
}

void bk_close(bk_case *k) {
  for (int i = 0; i < 3; i++)
    teeny_cuda_free(k->buf[i]);
  free(k->source);
  memset(k, 0, sizeof *k);
}
