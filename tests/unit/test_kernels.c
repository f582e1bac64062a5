/*
 * tests/unit/test_kernels.c — every example kernel, through the public API
 * (spec -> tile IR -> CPU interpreter), against a plain-C reference on
 * fresh random inputs, at sizes that are not multiples of the block, for
 * several dtype and const bindings.  Buffers are exactly as large as the
 * data, so any over-read or over-write is an interpreter error; outputs are
 * poisoned first, so every element must be written.
 *
 * The seed is printed; TEENY_TEST_SEED=N repeats a run.
 */
#include <check.h>
#include <time.h>
#include <unistd.h>

#include "kernel_util.h"

static ku_rng rng;

static teeny_spec *spec_for(const char *example, const char *kernel, const char *bindings) {
  size_t len;
  char *src = ku_read_example(example, &len);
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = ku_spec_src(src, len, example, kernel, bindings, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "spec %s [%s]: %s", example, bindings, teeny_strerror(rc));
  teeny_diags_close(&d);
  free(src);
  return s;
}

static void run(teeny_spec *s, unsigned gx, unsigned gy, teeny_interp_arg *args, size_t n) {
  unsigned grid[3] = {gx, gy, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_interpret(s, grid, args, n, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "interpret %s: %s", teeny_spec_id(s), teeny_strerror(rc));
  teeny_diags_close(&d);
}

static teeny_interp_arg buf_arg(void *p, size_t bytes) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.data = p;
  a.bytes = bytes;
  return a;
}

static teeny_interp_arg int_arg(int64_t v) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.v.i = v;
  return a;
}

static teeny_interp_arg float_arg(double v) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.v.f = v;
  return a;
}

static void *poisoned(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  memset(p, 0xff, bytes); /* NaN for floats, -1 for ints */
  return p;
}

static double round_to(teeny_dtype dt, double v) {
  unsigned char tmp[8];
  ku_put(tmp, dt, 0, v);
  return ku_get(tmp, dt, 0);
}

/* Fill n elements of dt with uniform values in [-scale, scale), rounded. */
static void *random_buf(teeny_dtype dt, size_t n, double scale) {
  void *p = malloc((n ? n : 1) * (size_t)teeny_dtype_size(dt));
  for (size_t i = 0; i < n; i++)
    ku_put(p, dt, i, scale * ku_uniform(&rng));
  return p;
}

/* ---- vector_add ------------------------------------------------------------------- */

static void check_vector_add(const char *dtname, int block, int n) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[64];
  snprintf(b, sizeof b, "D=%s,BLOCK_SIZE=%d", dtname, block);
  teeny_spec *s = spec_for("vector_add", "vector_add", b);
  size_t bytes = (size_t)n * (size_t)teeny_dtype_size(dt);
  void *x = random_buf(dt, (size_t)n, 10), *y = random_buf(dt, (size_t)n, 10);
  void *out = poisoned(bytes);
  teeny_interp_arg args[4] = {buf_arg(x, bytes), buf_arg(y, bytes), buf_arg(out, bytes),
                              int_arg(n)};
  run(s, (unsigned)((n + block - 1) / block), 1, args, 4);
  for (int i = 0; i < n; i++) {
    double want = round_to(dt, ku_get(x, dt, (size_t)i) + ku_get(y, dt, (size_t)i));
    ck_assert_msg(ku_get(out, dt, (size_t)i) == want, "%s n=%d: out[%d] = %g, want %g", b, n,
                  i, ku_get(out, dt, (size_t)i), want);
  }
  free(x);
  free(y);
  free(out);
  teeny_spec_destroy(s);
}

START_TEST(vector_add_matches) {
  static const int sizes[] = {1, 127, 1000, 4097};
  const char *dts[] = {"f32", "f16", "bf16"};
  for (int d = 0; d < 3; d++)
    for (size_t i = 0; i < 4; i++) {
      check_vector_add(dts[d], 128, sizes[i]);
      check_vector_add(dts[d], 1024, sizes[i]);
    }
  check_vector_add("f32", 1024, 1000003);
}
END_TEST

/* ---- softmax ------------------------------------------------------------------------- */

static void check_softmax(const char *dtname, int block, int rows, int ncols) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[64];
  snprintf(b, sizeof b, "D=%s,BLOCK_SIZE=%d", dtname, block);
  teeny_spec *s = spec_for("softmax", "softmax", b);
  int in_stride = ncols + 3, out_stride = ncols + 1;
  size_t es = (size_t)teeny_dtype_size(dt);
  size_t in_n = (size_t)(rows - 1) * (size_t)in_stride + (size_t)ncols;
  size_t out_n = (size_t)(rows - 1) * (size_t)out_stride + (size_t)ncols;
  void *in = random_buf(dt, in_n, 5);
  void *out = poisoned(out_n * es);
  teeny_interp_arg args[5] = {buf_arg(out, out_n * es), buf_arg(in, in_n * es),
                              int_arg(in_stride), int_arg(out_stride), int_arg(ncols)};
  run(s, (unsigned)rows, 1, args, 5);
  double *got = malloc(sizeof(double) * (size_t)ncols), *want = malloc(sizeof(double) * (size_t)ncols);
  for (int r = 0; r < rows; r++) {
    double mx = -INFINITY, den = 0;
    for (int c = 0; c < ncols; c++)
      mx = fmax(mx, ku_get(in, dt, (size_t)(r * in_stride + c)));
    for (int c = 0; c < ncols; c++)
      den += exp(ku_get(in, dt, (size_t)(r * in_stride + c)) - mx);
    for (int c = 0; c < ncols; c++) {
      want[c] = exp(ku_get(in, dt, (size_t)(r * in_stride + c)) - mx) / den;
      got[c] = ku_get(out, dt, (size_t)(r * out_stride + c));
    }
    double err = ku_rel_err(got, want, (size_t)ncols);
    double tol = dt == TEENY_DT_F32 ? 1e-5 : 1e-2;
    ck_assert_msg(err <= tol, "%s rows=%d ncols=%d row %d: rel err %g > %g", b, rows, ncols, r,
                  err, tol);
  }
  free(got);
  free(want);
  free(in);
  free(out);
  teeny_spec_destroy(s);
}

START_TEST(softmax_matches) {
  check_softmax("f32", 128, 7, 1);
  check_softmax("f32", 128, 7, 100);
  check_softmax("f32", 128, 3, 128);
  check_softmax("f32", 1024, 2, 1000);
  check_softmax("f16", 128, 5, 77);
  check_softmax("bf16", 256, 4, 255);
}
END_TEST

/* ---- layernorm -------------------------------------------------------------------------- */

static void check_layernorm(const char *dtname, int block, int rows, int ncols) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[64];
  snprintf(b, sizeof b, "D=%s,BLOCK_SIZE=%d", dtname, block);
  teeny_spec *s = spec_for("layernorm", "layernorm", b);
  size_t es = (size_t)teeny_dtype_size(dt), n = (size_t)rows * (size_t)ncols;
  void *x = random_buf(dt, n, 3), *w = random_buf(dt, (size_t)ncols, 1),
       *bias = random_buf(dt, (size_t)ncols, 1);
  void *y = poisoned(n * es);
  float *mean = poisoned(sizeof(float) * (size_t)rows), *rstd = poisoned(sizeof(float) * (size_t)rows);
  double eps = 1e-5;
  teeny_interp_arg args[9] = {buf_arg(x, n * es), buf_arg(y, n * es), buf_arg(w, (size_t)ncols * es),
                              buf_arg(bias, (size_t)ncols * es),
                              buf_arg(mean, sizeof(float) * (size_t)rows),
                              buf_arg(rstd, sizeof(float) * (size_t)rows), int_arg(ncols),
                              int_arg(ncols), float_arg(eps)};
  run(s, (unsigned)rows, 1, args, 9);
  double *got = malloc(sizeof(double) * n), *want = malloc(sizeof(double) * n);
  for (int r = 0; r < rows; r++) {
    double m = 0, v = 0;
    for (int c = 0; c < ncols; c++)
      m += ku_get(x, dt, (size_t)(r * ncols + c));
    m /= ncols;
    for (int c = 0; c < ncols; c++) {
      double d = ku_get(x, dt, (size_t)(r * ncols + c)) - m;
      v += d * d;
    }
    double rs = 1 / sqrt(v / ncols + eps);
    ck_assert_msg(fabs(mean[r] - m) <= 1e-5 * (1 + fabs(m)), "%s mean[%d] %g vs %g", b, r, mean[r], m);
    ck_assert_msg(fabs(rstd[r] - rs) <= 1e-4 * rs, "%s rstd[%d] %g vs %g", b, r, rstd[r], rs);
    for (int c = 0; c < ncols; c++) {
      size_t i = (size_t)(r * ncols + c);
      want[i] = (ku_get(x, dt, i) - m) * rs * ku_get(w, dt, (size_t)c) + ku_get(bias, dt, (size_t)c);
      got[i] = ku_get(y, dt, i);
    }
  }
  double err = ku_rel_err(got, want, n);
  double tol = dt == TEENY_DT_F32 ? 1e-5 : 1e-2;
  ck_assert_msg(err <= tol, "%s rows=%d ncols=%d: rel err %g > %g", b, rows, ncols, err, tol);
  free(got);
  free(want);
  free(x);
  free(w);
  free(bias);
  free(y);
  free(mean);
  free(rstd);
  teeny_spec_destroy(s);
}

START_TEST(layernorm_matches) {
  check_layernorm("f32", 128, 3, 1);
  check_layernorm("f32", 128, 5, 300); /* three chunks per row, last partial */
  check_layernorm("f32", 1024, 2, 1000);
  check_layernorm("bf16", 64, 4, 130);
  check_layernorm("f16", 128, 2, 129);
}
END_TEST

/* ---- matmul ------------------------------------------------------------------------------- */

static void check_matmul(const char *dtname, int bm, int bn, int bk, int gm, int M, int N, int K) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[128];
  snprintf(b, sizeof b, "D=%s,BLOCK_M=%d,BLOCK_N=%d,BLOCK_K=%d,GROUP_M=%d", dtname, bm, bn, bk, gm);
  teeny_spec *s = spec_for("matmul", "matmul", b);
  size_t es = (size_t)teeny_dtype_size(dt);
  /* A row-major; B column-major (exercises strides); C row-major with padding */
  int ldc = N + 2;
  void *a = random_buf(dt, (size_t)M * (size_t)K, 1), *bb = random_buf(dt, (size_t)K * (size_t)N, 1);
  size_t cn = (size_t)(M - 1) * (size_t)ldc + (size_t)N;
  void *c = poisoned(cn * es);
  teeny_interp_arg args[12] = {buf_arg(a, (size_t)M * K * es), buf_arg(bb, (size_t)K * N * es),
                               buf_arg(c, cn * es), int_arg(M), int_arg(N), int_arg(K),
                               int_arg(K), int_arg(1), int_arg(1), int_arg(K),
                               int_arg(ldc), int_arg(1)};
  unsigned grid = (unsigned)(((M + bm - 1) / bm) * ((N + bn - 1) / bn));
  run(s, grid, 1, args, 12);
  size_t n = (size_t)M * (size_t)N;
  double *got = malloc(sizeof(double) * n), *want = malloc(sizeof(double) * n);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0;
      for (int k = 0; k < K; k++)
      { /* f32 operands are TF32 in the default precision (docs/dsl.md §5) */
        double x = ku_get(a, dt, (size_t)(i * K + k)), y = ku_get(bb, dt, (size_t)(j * K + k));
        if (dt == TEENY_DT_F32)
          x = ku_tf32(x), y = ku_tf32(y);
        acc += x * y;
      }
      want[i * N + j] = acc;
      got[i * N + j] = ku_get(c, dt, (size_t)(i * ldc + j));
    }
  double err = ku_rel_err(got, want, n);
  double tol = dt == TEENY_DT_F32 ? 1e-5 : 2e-3;
  ck_assert_msg(err <= tol, "%s M=%d N=%d K=%d: rel err %g > %g", b, M, N, K, err, tol);
  free(got);
  free(want);
  free(a);
  free(bb);
  free(c);
  teeny_spec_destroy(s);
}

START_TEST(matmul_matches) {
  check_matmul("f32", 32, 32, 16, 2, 33, 47, 29);
  check_matmul("f16", 32, 32, 16, 8, 33, 47, 29);
  check_matmul("bf16", 16, 32, 16, 1, 50, 20, 70);
  check_matmul("f16", 16, 16, 16, 4, 1, 1, 1);
  check_matmul("f32", 64, 32, 32, 3, 100, 65, 64);
}
END_TEST

/* ---- matmul_bias_relu (an element-wise epilogue after the k loop) ------------------------------ */

static void check_matmul_bias_relu(const char *dtname, int bm, int bn, int bk, int M, int N, int K) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[128];
  snprintf(b, sizeof b, "D=%s,BLOCK_M=%d,BLOCK_N=%d,BLOCK_K=%d,GROUP_M=4", dtname, bm, bn, bk);
  teeny_spec *s = spec_for("matmul_bias_relu", "matmul_bias_relu", b);
  size_t es = (size_t)teeny_dtype_size(dt);
  void *a = random_buf(dt, (size_t)M * (size_t)K, 1), *bb = random_buf(dt, (size_t)K * (size_t)N, 1);
  void *bias = random_buf(dt, (size_t)N, 1);
  void *c = poisoned((size_t)M * N * es);
  teeny_interp_arg args[13] = {buf_arg(a, (size_t)M * K * es), buf_arg(bb, (size_t)K * N * es),
                               buf_arg(bias, (size_t)N * es), buf_arg(c, (size_t)M * N * es),
                               int_arg(M), int_arg(N), int_arg(K), int_arg(K), int_arg(1),
                               int_arg(N), int_arg(1), int_arg(N), int_arg(1)};
  unsigned grid = (unsigned)(((M + bm - 1) / bm) * ((N + bn - 1) / bn));
  run(s, grid, 1, args, 13);
  size_t n = (size_t)M * (size_t)N;
  double *got = malloc(sizeof(double) * n), *want = malloc(sizeof(double) * n);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = ku_get(bias, dt, (size_t)j);
      for (int k = 0; k < K; k++)
        acc += ku_get(a, dt, (size_t)(i * K + k)) * ku_get(bb, dt, (size_t)(k * N + j));
      want[i * N + j] = acc > 0 ? acc : 0;
      got[i * N + j] = ku_get(c, dt, (size_t)(i * N + j));
    }
  double err = ku_rel_err(got, want, n);
  ck_assert_msg(err <= 4e-3, "%s M=%d N=%d K=%d: rel err %g", b, M, N, K, err);
  free(got), free(want), free(a), free(bb), free(bias), free(c);
  teeny_spec_destroy(s);
}

START_TEST(matmul_bias_relu_matches) {
  check_matmul_bias_relu("f16", 32, 32, 16, 33, 47, 29);
  check_matmul_bias_relu("bf16", 16, 32, 16, 50, 20, 70);
}
END_TEST

/* ---- transpose (exact) ---------------------------------------------------------------------- */

static void check_transpose(const char *dtname, int bm, int bn, int M, int N) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[96];
  snprintf(b, sizeof b, "D=%s,BLOCK_M=%d,BLOCK_N=%d", dtname, bm, bn);
  teeny_spec *s = spec_for("transpose", "transpose", b);
  size_t es = (size_t)teeny_dtype_size(dt);
  int ldx = N + 3, ldy = M + 1; /* padded rows */
  size_t nx = (size_t)(M - 1) * ldx + N, ny = (size_t)(N - 1) * ldy + M;
  void *x = random_buf(dt, nx, 100), *y = poisoned(ny * es);
  teeny_interp_arg args[6] = {buf_arg(x, nx * es), buf_arg(y, ny * es), int_arg(M), int_arg(N),
                              int_arg(ldx), int_arg(ldy)};
  run(s, (unsigned)(((M + bm - 1) / bm) * ((N + bn - 1) / bn)), 1, args, 6);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      ck_assert_msg(ku_get(y, dt, (size_t)j * ldy + i) == ku_get(x, dt, (size_t)i * ldx + j),
                    "%s %dx%d: y[%d][%d] wrong", b, M, N, j, i);
  free(x), free(y);
  teeny_spec_destroy(s);
}

START_TEST(transpose_matches) {
  check_transpose("f32", 32, 32, 77, 45);
  check_transpose("f16", 16, 64, 1, 1);
  check_transpose("i32", 64, 16, 100, 129);
}
END_TEST

/* ---- absmax (reduce with a combine function) ------------------------------------------------- */

static void check_absmax(const char *dtname, int block, int n) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[64];
  snprintf(b, sizeof b, "D=%s,BLOCK_SIZE=%d", dtname, block);
  teeny_spec *s = spec_for("absmax", "absmax", b);
  int progs = (n + block - 1) / block;
  size_t es = (size_t)teeny_dtype_size(dt);
  void *x = random_buf(dt, (size_t)n, 100);
  float *out = poisoned(sizeof(float) * (size_t)progs);
  teeny_interp_arg args[3] = {buf_arg(x, (size_t)n * es), buf_arg(out, sizeof(float) * (size_t)progs),
                              int_arg(n)};
  run(s, (unsigned)progs, 1, args, 3);
  for (int p = 0; p < progs; p++) {
    double m = 0;
    for (int i = p * block; i < n && i < (p + 1) * block; i++)
      m = fmax(m, fabs(ku_get(x, dt, (size_t)i)));
    ck_assert_msg(out[p] == (float)m, "%s n=%d: out[%d] = %g, want %g", b, n, p, out[p], m);
  }
  free(x);
  free(out);
  teeny_spec_destroy(s);
}

START_TEST(absmax_matches) {
  check_absmax("f32", 256, 1);
  check_absmax("f32", 256, 1000);
  check_absmax("f16", 128, 4099);
  check_absmax("bf16", 1024, 3000);
}
END_TEST

/* ---- cumsum ----------------------------------------------------------------------------------- */

static void check_cumsum(const char *dtname, int block, int rows, int n) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[64];
  snprintf(b, sizeof b, "D=%s,BLOCK_SIZE=%d", dtname, block);
  teeny_spec *s = spec_for("cumsum", "cumsum_rows", b);
  int stride = n + 5;
  size_t total = (size_t)(rows - 1) * (size_t)stride + (size_t)n;
  size_t es = (size_t)teeny_dtype_size(dt);
  void *x = malloc(total * es);
  for (size_t i = 0; i < total; i++)
    ku_put(x, dt, i, dt == TEENY_DT_I32 ? (double)ku_range(&rng, -1000, 1000) : 10 * ku_uniform(&rng));
  void *out = poisoned(total * es);
  teeny_interp_arg args[4] = {buf_arg(x, total * es), buf_arg(out, total * es), int_arg(n),
                              int_arg(stride)};
  run(s, (unsigned)rows, 1, args, 4);
  for (int r = 0; r < rows; r++) {
    double acc = 0;
    float facc = 0;
    for (int c = 0; c < n; c++) {
      size_t i = (size_t)(r * stride + c);
      acc += ku_get(x, dt, i);
      facc += (float)ku_get(x, dt, i);
      double want = dt == TEENY_DT_I32 ? acc : facc;
      double tol = dt == TEENY_DT_I32 ? 0 : 1e-4 * (1 + fabs(acc));
      ck_assert_msg(fabs(ku_get(out, dt, i) - want) <= tol, "%s n=%d: out[%d][%d] = %g, want %g",
                    b, n, r, c, ku_get(out, dt, i), want);
    }
  }
  free(x);
  free(out);
  teeny_spec_destroy(s);
}

START_TEST(cumsum_matches) {
  check_cumsum("i32", 256, 3, 1);
  check_cumsum("i32", 256, 3, 200);
  check_cumsum("f32", 128, 4, 128);
  check_cumsum("f32", 1024, 2, 1000);
}
END_TEST

/* ---- histogram (atomics) ----------------------------------------------------------------------- */

static void check_histogram(int block, int bins, int n) {
  char b[64];
  snprintf(b, sizeof b, "BLOCK_SIZE=%d,NUM_BINS=%d", block, bins);
  teeny_spec *s = spec_for("histogram", "histogram", b);
  int32_t *data = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++)
    data[i] = ku_range(&rng, -5, bins + 6);
  int32_t *counts = calloc((size_t)bins, sizeof(int32_t));
  int32_t *want = calloc((size_t)bins, sizeof(int32_t));
  for (int i = 0; i < n; i++)
    if (data[i] >= 0 && data[i] < bins)
      want[data[i]]++;
  teeny_interp_arg args[3] = {buf_arg(data, sizeof(int32_t) * (size_t)n),
                              buf_arg(counts, sizeof(int32_t) * (size_t)bins), int_arg(n)};
  run(s, (unsigned)((n + block - 1) / block), 1, args, 3);
  for (int i = 0; i < bins; i++)
    ck_assert_msg(counts[i] == want[i], "%s n=%d: bin %d = %d, want %d", b, n, i, counts[i], want[i]);
  free(data);
  free(counts);
  free(want);
  teeny_spec_destroy(s);
}

START_TEST(histogram_matches) {
  check_histogram(256, 64, 1);
  check_histogram(256, 64, 1000);
  check_histogram(128, 16, 100003);
}
END_TEST

/* ---- the interpreter catches over-reads ------------------------------------------------------ */

/* ---- attention (tutorial 06) ------------------------------------------------------------ */

/* softmax(q k^T * scale, causal or not) v and the log2-sum-exp of each row,
 * in float64, for one (batch, head). */
static void attention_ref(const double *q, const double *k, const double *v, int n, int d,
                          double scale, bool causal, double *o, double *lse) {
  double *p = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    double mx = -INFINITY, den = 0;
    int last = causal ? i : n - 1;
    for (int j = 0; j <= last; j++) {
      p[j] = 0;
      for (int c = 0; c < d; c++)
        p[j] += q[i * d + c] * k[j * d + c] * scale;
      mx = fmax(mx, p[j]);
    }
    for (int j = 0; j <= last; j++)
      den += p[j] = exp(p[j] - mx);
    for (int c = 0; c < d; c++) {
      o[i * d + c] = 0;
      for (int j = 0; j <= last; j++)
        o[i * d + c] += p[j] / den * v[j * d + c];
    }
    lse[i] = (mx + log(den)) / log(2.0);
  }
  free(p);
}

static void check_attention(const char *dtname, int stage, int zh, int n, int d, int bm,
                            int bn) {
  teeny_dtype dt = teeny_dtype_parse(dtname);
  char b[128];
  snprintf(b, sizeof b, "D=%s,HEAD_DIM=%d,BLOCK_M=%d,BLOCK_N=%d,STAGE=%d", dtname, d, bm, bn,
           stage);
  teeny_spec *s = spec_for("attention_tuple", "attn_fwd", b);
  size_t es = (size_t)teeny_dtype_size(dt), elems = (size_t)zh * (size_t)n * (size_t)d;
  void *q = random_buf(dt, elems, 1), *k = random_buf(dt, elems, 1), *v = random_buf(dt, elems, 1);
  void *o = poisoned(elems * es), *m = poisoned(sizeof(float) * (size_t)(zh * n));
  double scale = 1.0 / sqrt((double)d);
  teeny_interp_arg args[7] = {buf_arg(q, elems * es), buf_arg(k, elems * es),
                              buf_arg(v, elems * es), buf_arg(o, elems * es),
                              buf_arg(m, sizeof(float) * (size_t)(zh * n)), float_arg(scale),
                              int_arg(n)};
  run(s, (unsigned)((n + bm - 1) / bm), (unsigned)zh, args, 7);
  size_t per = (size_t)n * (size_t)d;
  double *dq = malloc(sizeof(double) * per * 4), *dk = dq + per, *dv = dk + per, *got = dv + per;
  double *want = malloc(sizeof(double) * (per + (size_t)n * 2)), *lse = want + per,
         *glse = lse + n;
  for (int h = 0; h < zh; h++) {
    for (size_t i = 0; i < per; i++) {
      dq[i] = ku_get(q, dt, h * per + i);
      dk[i] = ku_get(k, dt, h * per + i);
      dv[i] = ku_get(v, dt, h * per + i);
      got[i] = ku_get(o, dt, h * per + i);
    }
    for (int i = 0; i < n; i++)
      glse[i] = ((const float *)m)[h * n + i];
    attention_ref(dq, dk, dv, n, d, scale, stage == 3, want, lse);
    double err = ku_rel_err(got, want, per), lerr = ku_rel_err(glse, lse, (size_t)n);
    double tol = dt == TEENY_DT_F32 ? 2e-3 : 1e-2; /* tf32 / half operands of dot */
    ck_assert_msg(err <= tol && lerr <= tol, "%s n=%d head %d: rel err %g, lse %g (tol %g)", b,
                  n, h, err, lerr, tol);
  }
  free(dq);
  free(want);
  free(q);
  free(k);
  free(v);
  free(o);
  free(m);
  teeny_spec_destroy(s);
}

START_TEST(attention_matches) {
  check_attention("f16", 3, 2, 37, 16, 32, 16);  /* causal, N_CTX not a multiple */
  check_attention("f16", 1, 2, 37, 16, 32, 16);  /* not causal */
  check_attention("f32", 3, 1, 80, 32, 32, 16);
  check_attention("bf16", 3, 1, 64, 16, 16, 16); /* BLOCK_M == BLOCK_N */
}
END_TEST

START_TEST(short_buffer_is_a_runtime_error) {
  teeny_spec *s = spec_for("vector_add", "vector_add", "D=f32,BLOCK_SIZE=128");
  float x[100] = {0}, y[99] = {0}, out[100];
  /* claim n = 100 but give b only 99 elements: the unmasked lane reads past it */
  teeny_interp_arg args[4] = {buf_arg(x, sizeof x), buf_arg(y, sizeof y), buf_arg(out, sizeof out),
                              int_arg(100)};
  unsigned grid[3] = {1, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  ck_assert_int_eq(teeny_spec_interpret(s, grid, args, 4, &d), TEENY_E_RUNTIME);
  ck_assert_uint_ge(d.n, 1);
  ck_assert_msg(strstr(d.v[0].message, "b_ptr") != NULL, "message: %s", d.v[0].message);
  ck_assert_int_eq(d.v[0].line, 15); /* the load of b in vector_add.c */
  teeny_diags_close(&d);
  teeny_spec_destroy(s);
}
END_TEST

int main(void) {
  const char *seed_env = getenv("TEENY_TEST_SEED");
  uint64_t seed = seed_env ? strtoull(seed_env, NULL, 10)
                           : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
  if (!seed)
    seed = 1;
  rng.s = seed;
  printf("test_kernels: seed %llu (TEENY_TEST_SEED to repeat)\n", (unsigned long long)seed);
  Suite *s = suite_create("kernels");
  TCase *tc = tcase_create("interpreter-vs-reference");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, vector_add_matches);
  tcase_add_test(tc, softmax_matches);
  tcase_add_test(tc, layernorm_matches);
  tcase_add_test(tc, matmul_matches);
  tcase_add_test(tc, matmul_bias_relu_matches);
  tcase_add_test(tc, transpose_matches);
  tcase_add_test(tc, absmax_matches);
  tcase_add_test(tc, cumsum_matches);
  tcase_add_test(tc, histogram_matches);
  tcase_add_test(tc, attention_matches);
  tcase_add_test(tc, short_buffer_is_a_runtime_error);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
