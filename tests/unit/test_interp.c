/*
 * tests/unit/test_interp.c — the CPU interpreter (dsl/ir/interp.c).
 *
 * The samples of tests/ir_samples.c run against plain C references on
 * random data; small hand-built kernels pin down each defined edge of the
 * language (docs/dsl.md §4, §5): integer wrapping, division by zero, shifts,
 * saturating casts, f16/bf16 rounding, unsigned compares, reductions with
 * ties, scans, atomics, control flow, bounds checks and budgets.  f16
 * references use the compiler's _Float16, an implementation independent of
 * the interpreter's software rounding (or, where the compiler has none, a
 * bit-level reference).
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_samples.h"

static teeny_arena arena;
static teeny_diags diags;
static teeny_ctx cx;

static void setup(void) {
  teeny__arena_init(&arena);
  teeny_diags_init(&diags);
  memset(&cx, 0, sizeof cx);
  cx.arena = &arena;
  cx.file = "<ir>";
  cx.diags = &diags;
}

static void teardown(void) {
  teeny_diags_close(&diags);
  teeny__arena_free(&arena);
}

/* ---- running ------------------------------------------------------------------- */

static teeny_interp_arg abuf(void *p, size_t bytes) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.data = p;
  a.bytes = bytes;
  return a;
}

static teeny_interp_arg aint(int64_t v) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.v.i = v;
  return a;
}

static teeny_interp_arg aflt(double v) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.v.f = v;
  return a;
}

static const char *msg0(void);

static int run_opts(teeny_ir_func *f, unsigned gx, unsigned gy,
                    const teeny_interp_arg *args, int nargs,
                    const teeny_interp_opts *o) {
  ck_assert_msg(teeny__ir_verify(&cx, f) == 0, "IR does not verify: %s", msg0());
  unsigned grid[3] = {gx, gy, 1};
  return teeny__interp_run_opts(&cx, f, grid, args, nargs, o);
}

static int run(teeny_ir_func *f, unsigned gx, unsigned gy,
               const teeny_interp_arg *args, int nargs) {
  return run_opts(f, gx, gy, args, nargs, NULL);
}

/* The first diagnostic's message ("" if none). */
static const char *msg0(void) { return diags.n ? diags.v[0].message : ""; }

/* ---- random data and f16 references ----------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() % 1000000) / 1e6f; }

static uint32_t f_bits(float f);

#ifdef __FLT16_MAX__
/* The compiler's own binary16 conversions: an oracle independent of the
 * interpreter's software rounding. */
static uint16_t ref_f16(float f) {
  _Float16 h = (_Float16)f;
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return u;
}

static float ref_f16_value(uint16_t u) {
  _Float16 h;
  memcpy(&h, &u, sizeof h);
  return (float)h;
}
#else
/* No _Float16 (e.g. clang < 15 on x86): the classic bit-level conversion,
 * still independent of the interpreter's frexp-based rounding. */
static uint16_t round_shift(uint32_t m, int shift) {
  uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return (uint16_t)(q + (rest > half || (rest == half && (q & 1))));
}

static uint16_t ref_f16(float f) {
  uint32_t x = f_bits(f), m = x & 0x7fffff;
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int e = (int)((x >> 23) & 0xff), ne = e - 127 + 15;
  if (e == 0xff)
    return sign | 0x7c00 | (m ? 0x200 : 0);
  if (ne >= 31)
    return sign | 0x7c00;
  if (ne <= 0) /* subnormal: units of 2^-24 */
    return 14 - ne > 24 ? sign : sign | round_shift(m | 0x800000, 14 - ne);
  return (uint16_t)(sign | ((ne << 10) + round_shift(m, 13))); /* carries into e */
}

static float ref_f16_value(uint16_t u) {
  int e = (u >> 10) & 31, m = u & 1023;
  float r = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                    : ldexpf((float)(m + 1024), e - 25);
  return u & 0x8000 ? -r : r;
}
#endif

static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* ---- IR building ---------------------------------------------------------------------- */

static const teeny_loc L = {1, 1};

static teeny_type sc(teeny_dtype dt) { return teeny__type_scalar(dt); }
static teeny_type t1(teeny_dtype dt, int n) { return teeny__type_tile(dt, 1, &n); }
static teeny_type t2(teeny_dtype dt, int m, int n) {
  int s[2] = {m, n};
  return teeny__type_tile(dt, 2, s);
}
static teeny_type pt1(teeny_dtype dt, int n) {
  return teeny__type_with_shape(teeny__type_ptr(dt), 1, &n);
}

static int konst(teeny_ir_func *f, teeny_region *r, teeny_type t, int64_t v) {
  teeny_scalar s = {.i = v};
  return teeny__ir_const(f, r, L, t, s);
}

static int fkonst(teeny_ir_func *f, teeny_region *r, teeny_type t, double v) {
  teeny_scalar s = {.f = v};
  return teeny__ir_const(f, r, L, t, s);
}

static int range_(teeny_ir_func *f, teeny_region *r, int n) {
  teeny_type t = t1(TEENY_DT_I32, n);
  teeny_op *op = teeny__ir_op_add(f, r, IR_MAKE_RANGE, L, NULL, 0, &t, 1);
  op->start = 0;
  op->end = n;
  return op->res[0];
}

static int un(teeny_ir_func *f, teeny_region *r, teeny_opcode code, int a, teeny_type rt) {
  return teeny__ir_unary(f, r, code, L, a, rt);
}

static int bin(teeny_ir_func *f, teeny_region *r, teeny_opcode code, int a, int b) {
  return teeny__ir_binary(f, r, code, L, a, b, teeny__ir_type(f, a));
}

static int cmp_(teeny_ir_func *f, teeny_region *r, teeny_cmp_pred p, int a, int b) {
  teeny_type t = teeny__type_with_dtype(teeny__ir_type(f, a), TEENY_DT_BOOL);
  teeny_op *op = teeny__ir_op_add(f, r, IR_CMP, L, (int[]){a, b}, 2, &t, 1);
  op->pred = p;
  return op->res[0];
}

static int select_(teeny_ir_func *f, teeny_region *r, int c, int a, int b) {
  teeny_type t = teeny__ir_type(f, a);
  return teeny__ir_op_add(f, r, IR_SELECT, L, (int[]){c, a, b}, 3, &t, 1)->res[0];
}

/* param + [0, n): a 1-D tile of element pointers */
static int elems(teeny_ir_func *f, teeny_region *r, int param, int n) {
  teeny_type pt = pt1(teeny__ir_type(f, param).pointee, n);
  int base = un(f, r, IR_SPLAT, param, pt);
  return teeny__ir_binary(f, r, IR_ADDPTR, L, base, range_(f, r, n), pt);
}

static int load_at(teeny_ir_func *f, teeny_region *r, teeny_loc loc, int p,
                   int mask, int other) {
  teeny_type pt = teeny__ir_type(f, p);
  teeny_type t = teeny__type_with_dtype(pt, pt.pointee);
  int args[3] = {p, mask, other};
  int n = other >= 0 ? 3 : mask >= 0 ? 2 : 1;
  return teeny__ir_op_add(f, r, IR_LOAD, loc, args, n, &t, 1)->res[0];
}

static int load_(teeny_ir_func *f, teeny_region *r, int p) {
  return load_at(f, r, L, p, -1, -1);
}

static void store_(teeny_ir_func *f, teeny_region *r, int p, int v, int mask) {
  int args[3] = {p, v, mask};
  teeny__ir_op_add(f, r, IR_STORE, L, args, mask >= 0 ? 3 : 2, NULL, 0);
}

static void ret_(teeny_ir_func *f) {
  teeny__ir_op_add(f, f->body, IR_RETURN, L, NULL, 0, NULL, 0);
}

static void yield_(teeny_ir_func *f, teeny_region *r, const int *v, int n) {
  teeny__ir_op_add(f, r, IR_YIELD, L, v, n, NULL, 0);
}

static teeny_ir_func *kernel(const char *name) { return teeny__ir_func_new(&arena, name); }

static int pparam(teeny_ir_func *f, const char *name, teeny_dtype dt) {
  return teeny__ir_param_add(f, name, teeny__type_ptr(dt));
}

/* out[i] = code(in[i]) for i < n; code is a unary opcode or IR_CAST. */
static teeny_ir_func *k_unary(teeny_opcode code, teeny_dtype din, teeny_dtype dout, int n) {
  teeny_ir_func *f = kernel("unary");
  int pin = pparam(f, "in_ptr", din), pout = pparam(f, "out_ptr", dout);
  teeny_region *r = f->body;
  int y = un(f, r, code, load_(f, r, elems(f, r, pin, n)), t1(dout, n));
  store_(f, r, elems(f, r, pout, n), y, -1);
  ret_(f);
  return f;
}

/* out[i] = a[i] code b[i]; IR_CMP (with pred) stores bools. */
static teeny_ir_func *k_binary(teeny_opcode code, teeny_cmp_pred pred,
                               teeny_dtype dt, int n) {
  teeny_ir_func *f = kernel("binary");
  int pa = pparam(f, "a_ptr", dt), pb = pparam(f, "b_ptr", dt);
  int po = pparam(f, "out_ptr", code == IR_CMP ? TEENY_DT_BOOL : dt);
  teeny_region *r = f->body;
  int a = load_(f, r, elems(f, r, pa, n)), b = load_(f, r, elems(f, r, pb, n));
  int y = code == IR_CMP ? cmp_(f, r, pred, a, b) : bin(f, r, code, a, b);
  store_(f, r, elems(f, r, po, n), y, -1);
  ret_(f);
  return f;
}

static void run_unary(teeny_opcode code, teeny_dtype din, teeny_dtype dout,
                      const void *in, void *out, int n) {
  teeny_interp_arg args[2] = {
      abuf((void *)in, (size_t)n * (size_t)teeny_dtype_size(din)),
      abuf(out, (size_t)n * (size_t)teeny_dtype_size(dout))};
  ck_assert_int_eq(run(k_unary(code, din, dout, n), 1, 1, args, 2), 0);
}

static void run_binary(teeny_opcode code, teeny_cmp_pred pred, teeny_dtype dt,
                       const void *a, const void *b, void *out, int n) {
  size_t sz = (size_t)n * (size_t)teeny_dtype_size(dt);
  teeny_interp_arg args[3] = {
      abuf((void *)a, sz), abuf((void *)b, sz),
      abuf(out, code == IR_CMP ? (size_t)n : sz)};
  ck_assert_int_eq(run(k_binary(code, pred, dt, n), 1, 1, args, 3), 0);
}

/* ---- the samples against plain C ----------------------------------------------------------- */

static void check_vector_add_f32(int n) {
  int pad = 64;
  float *a = malloc(sizeof(float) * (size_t)(n + pad));
  float *b = malloc(sizeof(float) * (size_t)(n + pad));
  float *o = malloc(sizeof(float) * (size_t)(n + pad));
  for (int i = 0; i < n + pad; i++) {
    a[i] = rndf(-100, 100);
    b[i] = rndf(-1, 1);
    o[i] = -12345.0f; /* poison */
  }
  size_t bytes = sizeof(float) * (size_t)(n + pad);
  teeny_interp_arg args[4] = {abuf(a, bytes), abuf(b, bytes), abuf(o, bytes), aint(n)};
  teeny_ir_func *f = teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024);
  ck_assert_int_eq(run(f, (unsigned)(n + 1023) / 1024, 1, args, 4), 0);
  for (int i = 0; i < n; i++)
    ck_assert_msg(o[i] == a[i] + b[i], "n=%d i=%d: %.9g != %.9g", n, i, o[i], a[i] + b[i]);
  for (int i = n; i < n + pad; i++)
    ck_assert_msg(o[i] == -12345.0f, "poison overwritten at %d", i);
  free(a);
  free(b);
  free(o);
}

START_TEST(vector_add_f32) {
  int sizes[] = {1, 127, 1000, 1000003};
  for (size_t k = 0; k < TEENY_ARRAY_LEN(sizes); k++)
    check_vector_add_f32(sizes[k]);
  ck_assert_uint_eq(diags.n, 0);
}
END_TEST

static void check_vector_add_f16(int n) {
  int pad = 64;
  uint16_t *a = malloc(2 * (size_t)(n + pad)), *b = malloc(2 * (size_t)(n + pad));
  uint16_t *o = malloc(2 * (size_t)(n + pad));
  for (int i = 0; i < n + pad; i++) {
    a[i] = ref_f16(rndf(-1000, 1000)); /* pre-rounded inputs */
    b[i] = ref_f16(rndf(-2, 2));
    o[i] = 0xdead;
  }
  size_t bytes = 2 * (size_t)(n + pad);
  teeny_interp_arg args[4] = {abuf(a, bytes), abuf(b, bytes), abuf(o, bytes), aint(n)};
  teeny_ir_func *f = teeny_sample_vector_add(&arena, TEENY_DT_F16, 1024);
  ck_assert_int_eq(run(f, (unsigned)(n + 1023) / 1024, 1, args, 4), 0);
  for (int i = 0; i < n; i++) {
    uint16_t want = ref_f16(ref_f16_value(a[i]) + ref_f16_value(b[i]));
    ck_assert_msg(o[i] == want, "n=%d i=%d: %04x != %04x", n, i, o[i], want);
  }
  for (int i = n; i < n + pad; i++)
    ck_assert_uint_eq(o[i], 0xdead);
  free(a);
  free(b);
  free(o);
}

START_TEST(vector_add_f16) {
  int sizes[] = {1, 127, 1000, 1000003};
  for (size_t k = 0; k < TEENY_ARRAY_LEN(sizes); k++)
    check_vector_add_f16(sizes[k]);
}
END_TEST

START_TEST(softmax_rows) {
  enum { ROWS = 7, COLS = 100, BLOCK = 128 };
  static float x[ROWS * COLS], y[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) {
    x[i] = rndf(-20, 20);
    y[i] = NAN;
  }
  /* the last row ends at the end of the buffer: its masked lanes would be
   * out of bounds if they touched memory */
  teeny_interp_arg args[4] = {abuf(x, sizeof x), abuf(y, sizeof y), aint(COLS), aint(COLS)};
  ck_assert_int_eq(run(teeny_sample_softmax(&arena, BLOCK), ROWS, 1, args, 4), 0);
  for (int r = 0; r < ROWS; r++) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < COLS; c++)
      m = fmax(m, x[r * COLS + c]);
    for (int c = 0; c < COLS; c++)
      s += exp((double)x[r * COLS + c] - m);
    for (int c = 0; c < COLS; c++) {
      double want = exp((double)x[r * COLS + c] - m) / s;
      double got = y[r * COLS + c];
      ck_assert_msg(fabs(got - want) <= 1e-5 * want, "row %d col %d: %g vs %g", r, c, got, want);
    }
  }
}
END_TEST

START_TEST(row_sum_loop) {
  enum { ROWS = 3, COLS = 1000, BLOCK = 64 }; /* 1000 = 15 blocks + 40 */
  static float x[ROWS * COLS];
  float out[ROWS + 1];
  for (int i = 0; i < ROWS * COLS; i++)
    x[i] = rndf(-1, 1);
  out[ROWS] = 777.0f;
  teeny_interp_arg args[3] = {abuf(x, sizeof x), abuf(out, sizeof out), aint(COLS)};
  ck_assert_int_eq(run(teeny_sample_row_sum_loop(&arena, BLOCK), ROWS, 1, args, 3), 0);
  for (int r = 0; r < ROWS; r++) {
    double s = 0, mag = 0;
    for (int c = 0; c < COLS; c++) {
      s += x[r * COLS + c];
      mag += fabs(x[r * COLS + c]);
    }
    ck_assert_msg(fabs(out[r] - s) <= 1e-5 * mag, "row %d: %g vs %g", r, out[r], s);
  }
  ck_assert_float_eq(out[ROWS], 777.0f);
}
END_TEST

static void check_matmul(teeny_dtype dt, int M, int N, int K, int bm, int bn, int bk) {
  size_t esz = (size_t)teeny_dtype_size(dt);
  unsigned char *a = malloc(esz * (size_t)(M * K)), *b = malloc(esz * (size_t)(K * N));
  double *ad = malloc(sizeof(double) * (size_t)(M * K)), *bd = malloc(sizeof(double) * (size_t)(K * N));
  float *c = malloc(sizeof(float) * (size_t)(M * N));
  for (int i = 0; i < M * K + K * N; i++) {
    float v = rndf(-2, 2);
    bool isa = i < M * K;
    unsigned char *dst = isa ? a + esz * (size_t)i : b + esz * (size_t)(i - M * K);
    double *vd = isa ? &ad[i] : &bd[i - M * K];
    if (dt == TEENY_DT_F16) {
      uint16_t h = ref_f16((float)v);
      memcpy(dst, &h, 2);
      *vd = (double)ref_f16_value(h);
    } else { /* f32 operands are TF32 in the default precision */
      memcpy(dst, &v, 4);
      float t = v;
      uint32_t u;
      memcpy(&u, &t, 4);
      u = (u + 0x1000u) & 0xffffe000u;
      memcpy(&t, &u, 4);
      *vd = t;
    }
  }
  for (int i = 0; i < M * N; i++)
    c[i] = NAN;
  teeny_interp_arg args[6] = {abuf(a, esz * (size_t)(M * K)), abuf(b, esz * (size_t)(K * N)),
                              abuf(c, sizeof(float) * (size_t)(M * N)), aint(M), aint(N), aint(K)};
  teeny_ir_func *f = teeny_sample_matmul(&arena, dt, bm, bn, bk);
  ck_assert_int_eq(run(f, (unsigned)(M + bm - 1) / (unsigned)bm,
                       (unsigned)(N + bn - 1) / (unsigned)bn, args, 6), 0);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0, mag = 0;
      for (int k = 0; k < K; k++) {
        s += ad[i * K + k] * bd[k * N + j];
        mag += fabs(ad[i * K + k] * bd[k * N + j]);
      }
      ck_assert_msg(fabs(c[i * N + j] - s) <= 1e-5 * mag + 1e-30,
                    "%s %dx%dx%d block %d: c[%d,%d] = %g, want %g",
                    teeny_dtype_name(dt), M, N, K, bm, i, j, c[i * N + j], s);
    }
  free(a);
  free(b);
  free(ad);
  free(bd);
  free(c);
}

START_TEST(matmul_f32_f16) {
  check_matmul(TEENY_DT_F32, 33, 47, 29, 16, 16, 16);
  check_matmul(TEENY_DT_F32, 33, 47, 29, 32, 32, 32);
  check_matmul(TEENY_DT_F16, 33, 47, 29, 16, 16, 16);
  check_matmul(TEENY_DT_F16, 33, 47, 29, 32, 32, 32);
  check_matmul(TEENY_DT_F32, 16, 16, 16, 16, 32, 16);
}
END_TEST

/* ---- bounds ---------------------------------------------------------------------------------- */

/* out[i] = a[pid*128 + i] with no mask: reads past the end of a. */
static teeny_ir_func *k_unmasked_copy(void) {
  teeny_ir_func *f = kernel("copy_entry_point");
  int pa = pparam(f, "a_ptr", TEENY_DT_F32), po = pparam(f, "out_ptr", TEENY_DT_F32);
  teeny_region *r = f->body;
  int x = load_at(f, r, (teeny_loc){7, 13}, elems(f, r, pa, 128), -1, -1);
  store_(f, r, elems(f, r, po, 128), x, -1);
  ret_(f);
  return f;
}

START_TEST(out_of_bounds_load_reported) {
  /* a is 100 floats, out 128 floats further on: a gap, never adjacent */
  static float mem[100 + 28 + 128];
  float *a = mem, *out = mem + 128;
  teeny_interp_arg args[2] = {abuf(a, 400), abuf(out, 512)};
  ck_assert_int_eq(run(k_unmasked_copy(), 1, 1, args, 2), TEENY_E_RUNTIME);
  ck_assert_uint_ge(diags.n, 1);
  ck_assert_int_eq(diags.v[0].line, 7);
  ck_assert_int_eq(diags.v[0].col, 13);
  ck_assert_msg(strstr(msg0(), "out-of-bounds load: 4 bytes at offset 400 of 'a_ptr' (400 bytes)"),
                "%s", msg0());
  ck_assert(strstr(msg0(), "lane 100") != NULL);
  char text[512];
  teeny_diag_format(&diags.v[0], text, sizeof text);
  ck_assert_msg(strstr(text, "<ir>:7:13: error: out-of-bounds load") == text, "%s", text);
}
END_TEST

START_TEST(out_of_bounds_into_an_adjacent_buffer) {
  /* a is 100 floats and out starts right after it in host memory: reading
   * a[100..127] would land in out; it must still be caught as a's */
  static float mem[100 + 128];
  float *a = mem, *out = mem + 100;
  teeny_interp_arg args[2] = {abuf(a, 400), abuf(out, 512)};
  ck_assert_int_eq(run(k_unmasked_copy(), 1, 1, args, 2), TEENY_E_RUNTIME);
  ck_assert_msg(strstr(msg0(), "out-of-bounds load: 4 bytes at offset 400 of 'a_ptr' (400 bytes)"),
                "%s", msg0());
  /* and the same pointer twice (out == a) is fine where it is in bounds */
  teeny_diags_close(&diags);
  teeny_interp_arg same[2] = {abuf(mem, sizeof mem), abuf(mem, sizeof mem)};
  for (int i = 0; i < 228; i++)
    mem[i] = (float)i;
  ck_assert_int_eq(run(k_unmasked_copy(), 1, 1, same, 2), 0);
  for (int i = 0; i < 228; i++)
    ck_assert(mem[i] == (float)i);
}
END_TEST

START_TEST(out_of_bounds_store_below_buffer) {
  /* store to out_ptr - 1 */
  teeny_ir_func *f = kernel("k");
  int po = pparam(f, "out_ptr", TEENY_DT_I32);
  teeny_region *r = f->body;
  int p = teeny__ir_binary(f, r, IR_ADDPTR, L, po, konst(f, r, sc(TEENY_DT_I64), -1),
                           teeny__type_ptr(TEENY_DT_I32));
  store_(f, r, p, konst(f, r, sc(TEENY_DT_I32), 5), -1);
  ret_(f);
  int32_t out[4];
  teeny_interp_arg args[1] = {abuf(out, sizeof out)};
  ck_assert_int_eq(run(f, 1, 1, args, 1), TEENY_E_RUNTIME);
  ck_assert_msg(strstr(msg0(), "out-of-bounds store: 4 bytes at offset -4 of 'out_ptr' (16 bytes)"),
                "%s", msg0());
  /* a NULL buffer: no memory at all */
  teeny_diags_close(&diags);
  args[0] = abuf(NULL, 0);
  ck_assert_int_eq(run(f, 1, 1, args, 1), TEENY_E_RUNTIME);
  ck_assert(strstr(msg0(), "in no buffer") != NULL);
}
END_TEST

START_TEST(masked_lanes_touch_nothing) {
  /* load(a + i, i < 3, other = 9) over a 3-element buffer */
  teeny_ir_func *f = kernel("k");
  int pa = pparam(f, "a_ptr", TEENY_DT_I16), po = pparam(f, "out_ptr", TEENY_DT_I16);
  teeny_region *r = f->body;
  int mask = cmp_(f, r, CMP_LT, range_(f, r, 8), konst(f, r, t1(TEENY_DT_I32, 8), 3));
  int x = load_at(f, r, L, elems(f, r, pa, 8), mask, konst(f, r, t1(TEENY_DT_I16, 8), 9));
  store_(f, r, elems(f, r, po, 8), x, -1);
  int y = load_at(f, r, L, elems(f, r, pa, 8), mask, -1);
  store_(f, r, elems(f, r, pa, 8), bin(f, r, IR_ADD, y, y), mask);
  ret_(f);
  int16_t a[3] = {1, -2, 3}, out[8];
  teeny_interp_arg args[2] = {abuf(a, sizeof a), abuf(out, sizeof out)};
  ck_assert_int_eq(run(f, 1, 1, args, 2), 0);
  int16_t want[8] = {1, -2, 3, 9, 9, 9, 9, 9};
  ck_assert_mem_eq(out, want, sizeof want);
  ck_assert_int_eq(a[0], 2);
  ck_assert_int_eq(a[1], -4);
  ck_assert_int_eq(a[2], 6);
}
END_TEST

/* ---- integer edges -------------------------------------------------------------------------- */

START_TEST(int_division_edges) {
  int32_t a[8] = {7, -7, INT32_MIN, 7, -7, 7, INT32_MIN, 0};
  int32_t b[8] = {0, 0, -1, 2, 2, -2, 1, 0};
  int32_t q[8], m[8];
  run_binary(IR_DIV, 0, TEENY_DT_I32, a, b, q, 8);
  run_binary(IR_REM, 0, TEENY_DT_I32, a, b, m, 8);
  int32_t wq[8] = {-1, -1, INT32_MIN, 3, -3, -3, INT32_MIN, -1};
  int32_t wm[8] = {7, -7, 0, 1, -1, 1, 0, 0};
  ck_assert_mem_eq(q, wq, sizeof wq);
  ck_assert_mem_eq(m, wm, sizeof wm);

  int64_t a64[2] = {INT64_MIN, 5}, b64[2] = {-1, 0}, q64[2], m64[2];
  run_binary(IR_DIV, 0, TEENY_DT_I64, a64, b64, q64, 2);
  run_binary(IR_REM, 0, TEENY_DT_I64, a64, b64, m64, 2);
  ck_assert(q64[0] == INT64_MIN && q64[1] == -1);
  ck_assert(m64[0] == 0 && m64[1] == 5);

  int8_t a8[2] = {-128, 100}, b8[2] = {-1, 0}, q8[2];
  run_binary(IR_DIV, 0, TEENY_DT_I8, a8, b8, q8, 2);
  ck_assert(q8[0] == -128 && q8[1] == -1);

  uint32_t ua[4] = {7, 0xffffffffu, 0xfffffffeu, 5}, ub[4] = {0, 1, 2, 0}, uq[4], um[4];
  run_binary(IR_DIV, 0, TEENY_DT_U32, ua, ub, uq, 4);
  run_binary(IR_REM, 0, TEENY_DT_U32, ua, ub, um, 4);
  uint32_t wuq[4] = {0xffffffffu, 0xffffffffu, 0x7fffffffu, 0xffffffffu};
  uint32_t wum[4] = {7, 0, 0, 5};
  ck_assert_mem_eq(uq, wuq, sizeof wuq);
  ck_assert_mem_eq(um, wum, sizeof wum);
}
END_TEST

START_TEST(int_shift_edges) {
  int32_t a[8] = {1, 1, 1, 1, -1, 3, 5, 1};
  int32_t b[8] = {0, 31, 32, -1, 4, 100, 2, INT32_MIN};
  int32_t s[8];
  run_binary(IR_SHL, 0, TEENY_DT_I32, a, b, s, 8);
  int32_t ws[8] = {1, INT32_MIN, 0, 0, -16, 0, 20, 0};
  ck_assert_mem_eq(s, ws, sizeof ws);

  int32_t c[8] = {-8, -8, -8, 8, 8, -1, INT32_MIN, 5};
  int32_t d[8] = {1, 31, 32, 33, -1, 100, 31, 0};
  run_binary(IR_SHR, 0, TEENY_DT_I32, c, d, s, 8);
  int32_t wr[8] = {-4, -1, -1, 0, 0, -1, -1, 5};
  ck_assert_mem_eq(s, wr, sizeof wr);

  uint32_t ua[4] = {0x80000000u, 0x80000000u, 0xffffffffu, 1}, ub[4] = {31, 32, 4, 33}, us[4];
  run_binary(IR_SHR, 0, TEENY_DT_U32, ua, ub, us, 4);
  uint32_t wu[4] = {1, 0, 0x0fffffffu, 0};
  ck_assert_mem_eq(us, wu, sizeof wu);

  uint8_t a8[2] = {0x81, 1}, b8[2] = {1, 8}, s8[2];
  run_binary(IR_SHL, 0, TEENY_DT_U8, a8, b8, s8, 2);
  ck_assert(s8[0] == 0x02 && s8[1] == 0);

  int64_t a64[2] = {1, 1}, b64[2] = {63, 64}, s64[2];
  run_binary(IR_SHL, 0, TEENY_DT_I64, a64, b64, s64, 2);
  ck_assert(s64[0] == INT64_MIN && s64[1] == 0);
}
END_TEST

START_TEST(int_wrapping) {
  int8_t a8[2] = {127, -128}, b8[2] = {1, -1}, r8[2];
  run_binary(IR_ADD, 0, TEENY_DT_I8, a8, b8, r8, 2);
  ck_assert(r8[0] == -128 && r8[1] == 127);
  uint8_t ua[2] = {255, 0}, ub[2] = {1, 1}, ur[2];
  run_binary(IR_ADD, 0, TEENY_DT_U8, ua, ub, ur, 2);
  ck_assert(ur[0] == 0 && ur[1] == 1);
  run_binary(IR_SUB, 0, TEENY_DT_U8, ub, ua, ur, 2);
  ck_assert(ur[0] == 2 && ur[1] == 1);
  int16_t a16[2] = {300, -300}, r16[2];
  run_binary(IR_MUL, 0, TEENY_DT_I16, a16, a16, r16, 2);
  ck_assert(r16[0] == 24464 && r16[1] == 24464); /* 90000 mod 2^16 */
  int32_t a32[4] = {65536, INT32_MIN, INT32_MAX, -5}, r32[4];
  run_binary(IR_MUL, 0, TEENY_DT_I32, a32, a32, r32, 4);
  ck_assert(r32[0] == 0 && r32[1] == 0 && r32[2] == 1 && r32[3] == 25);
  run_unary(IR_NEG, TEENY_DT_I32, TEENY_DT_I32, a32, r32, 4);
  ck_assert(r32[0] == -65536 && r32[1] == INT32_MIN && r32[2] == -INT32_MAX && r32[3] == 5);
  run_unary(IR_ABS, TEENY_DT_I32, TEENY_DT_I32, a32, r32, 4);
  ck_assert(r32[0] == 65536 && r32[1] == INT32_MIN && r32[2] == INT32_MAX && r32[3] == 5);
  run_unary(IR_NOT, TEENY_DT_I32, TEENY_DT_I32, a32, r32, 4);
  ck_assert(r32[0] == ~65536 && r32[3] == 4);
  bool bb[2] = {true, false}, br[2];
  run_unary(IR_NOT, TEENY_DT_BOOL, TEENY_DT_BOOL, bb, br, 2);
  ck_assert(!br[0] && br[1]);
}
END_TEST

START_TEST(unsigned_compare_and_minmax) {
  uint32_t ua[4] = {0xffffffffu, 1, 5, 0x80000000u}, ub[4] = {1, 0xffffffffu, 5, 1};
  bool lt[4];
  run_binary(IR_CMP, CMP_LT, TEENY_DT_U32, ua, ub, lt, 4);
  ck_assert(!lt[0] && lt[1] && !lt[2] && !lt[3]);
  run_binary(IR_CMP, CMP_LT, TEENY_DT_I32, ua, ub, lt, 4); /* same bits, signed */
  ck_assert(lt[0] && !lt[1] && !lt[2] && lt[3]);
  run_binary(IR_CMP, CMP_GE, TEENY_DT_U32, ua, ub, lt, 4);
  ck_assert(lt[0] && !lt[1] && lt[2] && lt[3]);
  uint32_t mx[4];
  run_binary(IR_MAX, 0, TEENY_DT_U32, ua, ub, mx, 4);
  ck_assert(mx[0] == 0xffffffffu && mx[1] == 0xffffffffu && mx[3] == 0x80000000u);
  int32_t smn[4];
  run_binary(IR_MIN, 0, TEENY_DT_I32, ua, ub, smn, 4);
  ck_assert(smn[0] == -1 && smn[1] == -1 && smn[3] == INT32_MIN);
  uint64_t a64[2] = {UINT64_MAX, 2}, b64[2] = {3, 0}, q64[2];
  run_binary(IR_DIV, 0, TEENY_DT_U64, a64, b64, q64, 2);
  ck_assert(q64[0] == UINT64_MAX / 3 && q64[1] == UINT64_MAX);
}
END_TEST

/* ---- conversions --------------------------------------------------------------------------- */

START_TEST(float_to_int_saturates) {
  float in[8] = {NAN, 1e10f, -1e10f, -2.7f, 2.7f, INFINITY, -INFINITY, -0.5f};
  int32_t i32[8];
  run_unary(IR_CAST, TEENY_DT_F32, TEENY_DT_I32, in, i32, 8);
  int32_t w32[8] = {0, INT32_MAX, INT32_MIN, -2, 2, INT32_MAX, INT32_MIN, 0};
  ck_assert_mem_eq(i32, w32, sizeof w32);
  uint8_t u8[8];
  run_unary(IR_CAST, TEENY_DT_F32, TEENY_DT_U8, in, u8, 8);
  uint8_t wu8[8] = {0, 255, 0, 0, 2, 255, 0, 0};
  ck_assert_mem_eq(u8, wu8, sizeof wu8);
  double d[4] = {1e19, -1e19, -9223372036854775808.0, 9223372036854774784.0};
  int64_t i64[4];
  run_unary(IR_CAST, TEENY_DT_F64, TEENY_DT_I64, d, i64, 4);
  ck_assert(i64[0] == INT64_MAX && i64[1] == INT64_MIN && i64[2] == INT64_MIN &&
            i64[3] == 9223372036854774784LL);
  double du[4] = {1.8e19, 2e19, -1, NAN};
  uint64_t u64[4];
  run_unary(IR_CAST, TEENY_DT_F64, TEENY_DT_U64, du, u64, 4);
  ck_assert(u64[0] == 18000000000000000000ull && u64[1] == UINT64_MAX && u64[2] == 0 &&
            u64[3] == 0);
  bool b[8];
  run_unary(IR_CAST, TEENY_DT_F32, TEENY_DT_BOOL, in, b, 8);
  ck_assert(b[0] && b[1] && b[7]); /* NaN and -0.5 are non-zero */
  float z[2] = {0.0f, -0.0f};
  run_unary(IR_CAST, TEENY_DT_F32, TEENY_DT_BOOL, z, b, 2);
  ck_assert(!b[0] && !b[1]);
}
END_TEST

START_TEST(int_to_int_and_float) {
  int32_t a[4] = {-1, 300, 65519, 65520};
  uint8_t u8[4];
  run_unary(IR_CAST, TEENY_DT_I32, TEENY_DT_U8, a, u8, 4);
  ck_assert(u8[0] == 255 && u8[1] == 44);
  int8_t i8v[2] = {-1, -128};
  uint64_t u64[2];
  run_unary(IR_CAST, TEENY_DT_I8, TEENY_DT_U64, i8v, u64, 2); /* sign-extends */
  ck_assert(u64[0] == UINT64_MAX && u64[1] == (uint64_t)-128);
  uint8_t u8v[2] = {255, 128};
  int64_t i64[2];
  run_unary(IR_CAST, TEENY_DT_U8, TEENY_DT_I64, u8v, i64, 2); /* zero-extends */
  ck_assert(i64[0] == 255 && i64[1] == 128);
  uint16_t h[4];
  run_unary(IR_CAST, TEENY_DT_I32, TEENY_DT_F16, a, h, 4);
  ck_assert_uint_eq(h[0], 0xbc00);
  ck_assert_uint_eq(h[1], ref_f16((float)300));
  ck_assert_uint_eq(h[2], 0x7bff); /* 65519 -> 65504 */
  ck_assert_uint_eq(h[3], 0x7c00); /* 65520 -> inf */
  int32_t c[4] = {2049, 2051, 257, 259};
  run_unary(IR_CAST, TEENY_DT_I32, TEENY_DT_F16, c, h, 2);
  ck_assert_uint_eq(h[0], ref_f16((float)2048)); /* tie -> even */
  ck_assert_uint_eq(h[1], ref_f16((float)2052));
  uint16_t bf[4];
  run_unary(IR_CAST, TEENY_DT_I32, TEENY_DT_BF16, c, bf, 4);
  ck_assert_uint_eq(bf[2], 0x4380); /* 257 -> 256 */
  ck_assert_uint_eq(bf[3], 0x4382); /* 259 -> 260 */
  int64_t big[2] = {(1LL << 53) + 1, (1LL << 53) + 3};
  double dd[2];
  run_unary(IR_CAST, TEENY_DT_I64, TEENY_DT_F64, big, dd, 2);
  ck_assert(dd[0] == 9007199254740992.0 && dd[1] == 9007199254740996.0);
  uint64_t umax[1] = {UINT64_MAX};
  float ff[1];
  run_unary(IR_CAST, TEENY_DT_U64, TEENY_DT_F32, umax, ff, 1);
  ck_assert(ff[0] == 18446744073709551616.0f);
}
END_TEST

START_TEST(f16_rounding_known_values) {
  double in[16] = {1.0, 65504, 65519.99, 65520, -1e6, ldexp(1, -24), ldexp(1, -25),
                   1.5 * ldexp(1, -25), 3 * ldexp(1, -25), ldexp(1, -14) - ldexp(1, -25),
                   1 + ldexp(1, -11), 1 + 3 * ldexp(1, -11), -0.0, NAN, 0.1, 1e-10};
  uint16_t want[16] = {0x3c00, 0x7bff, 0x7bff, 0x7c00, 0xfc00, 0x0001, 0x0000, 0x0001,
                       0x0002, 0x0400, 0x3c00, 0x3c02, 0x8000, 0, 0x2e66, 0x0000};
  uint16_t h[16];
  run_unary(IR_CAST, TEENY_DT_F64, TEENY_DT_F16, in, h, 16);
  for (int i = 0; i < 16; i++)
    if (i == 13)
      ck_assert_msg((h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff), "NaN: %04x", h[i]);
    else
      ck_assert_msg(h[i] == want[i], "%d: %.17g -> %04x, want %04x", i, in[i], h[i], want[i]);
  /* decode: subnormals, the largest normal, infinities, NaN */
  uint16_t bits[8] = {0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x8000};
  float back[8];
  run_unary(IR_CAST, TEENY_DT_F16, TEENY_DT_F32, bits, back, 8);
  ck_assert(back[0] == ldexpf(1, -24) && back[1] == ldexpf(1023, -24));
  ck_assert(back[2] == ldexpf(1, -14) && back[3] == 65504.0f);
  ck_assert(isinf(back[4]) && back[4] > 0 && isinf(back[5]) && back[5] < 0);
  ck_assert(isnan(back[6]) && back[7] == 0 && signbit(back[7]));
}
END_TEST

START_TEST(f16_rounding_matches_compiler) {
  /* 4096 random f32 bit patterns over the f16 range, incl. subnormals */
  enum { N = 4096 };
  static float in[N];
  static uint16_t h[N];
  for (int i = 0; i < N; i++) {
    float v = ldexpf(1.0f + (float)(rnd() % (1u << 23)) / (float)(1u << 23), (int)(rnd() % 44) - 28);
    in[i] = rnd() & 1 ? -v : v;
  }
  run_unary(IR_CAST, TEENY_DT_F32, TEENY_DT_F16, in, h, N);
  for (int i = 0; i < N; i++)
    ck_assert_msg(h[i] == ref_f16((float)in[i]), "%.9g -> %04x, want %04x", in[i], h[i],
                  ref_f16((float)in[i]));
}
END_TEST

START_TEST(bf16_rounding_known_values) {
  float in[16] = {1.0f, 1 + ldexpf(1, -8), 1 + 3 * ldexpf(1, -8), 1 + ldexpf(1, -8) + ldexpf(1, -20),
                  FLT_MAX, 3.3895313892515355e38f, ldexpf(1, -133), ldexpf(1, -134),
                  3 * ldexpf(1, -134), -2.0f, NAN, -INFINITY, ldexpf(1, -126), -0.0f,
                  0.1f, 3.0e38f};
  uint16_t want[16] = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x7f80, 0x7f7f, 0x0001, 0x0000,
                       0x0002, 0xc000, 0x7fc0, 0xff80, 0x0080, 0x8000, 0x3dcd, 0x7f62};
  uint16_t b[16];
  run_unary(IR_CAST, TEENY_DT_F32, TEENY_DT_BF16, in, b, 16);
  for (int i = 0; i < 16; i++)
    ck_assert_msg(b[i] == want[i], "%d: %.9g -> %04x, want %04x", i, in[i], b[i], want[i]);
  double big[2] = {1e39, -1e-50};
  run_unary(IR_CAST, TEENY_DT_F64, TEENY_DT_BF16, big, b, 2);
  ck_assert_uint_eq(b[0], 0x7f80);
  ck_assert_uint_eq(b[1], 0x8000);
  uint16_t bits[4] = {0x0001, 0x3f81, 0x7f80, 0xc000};
  float back[4];
  run_unary(IR_CAST, TEENY_DT_BF16, TEENY_DT_F32, bits, back, 4);
  ck_assert(back[0] == ldexpf(1, -133) && back[1] == 1 + ldexpf(1, -7));
  ck_assert(isinf(back[2]) && back[3] == -2.0f);
  /* bf16 arithmetic rounds: 1 + 2^-8 -> 1 (tie to even), 1.5 * 1.5 = 2.25 */
  uint16_t a2[2] = {0x3f80, 0x3fc0}, b2[2] = {0x3b80, 0x3fc0}, s2[2];
  run_binary(IR_ADD, 0, TEENY_DT_BF16, a2, b2, s2, 2);
  ck_assert_uint_eq(s2[0], 0x3f80);
  run_binary(IR_MUL, 0, TEENY_DT_BF16, a2, b2, s2, 2);
  ck_assert_uint_eq(s2[1], 0x4010);
}
END_TEST

START_TEST(f32_rounding_past_flt_max) {
  double half_ulp = ldexp(1, 103); /* FLT_MAX's ulp is 2^104 */
  double in[8] = {FLT_MAX, FLT_MAX + half_ulp / 2, FLT_MAX + half_ulp, -1e39,
                  1e39, ldexp(1, -150), ldexp(3, -151), 0.1};
  float out[8];
  run_unary(IR_CAST, TEENY_DT_F64, TEENY_DT_F32, in, out, 8);
  ck_assert(out[0] == FLT_MAX && out[1] == FLT_MAX);
  ck_assert(isinf(out[2]) && out[2] > 0); /* a tie: FLT_MAX is odd */
  ck_assert(isinf(out[3]) && out[3] < 0 && isinf(out[4]));
  ck_assert(out[5] == 0 && out[6] == ldexpf(1, -149) && out[7] == 0.1f);
}
END_TEST

/* ---- float math -------------------------------------------------------------------------------- */

START_TEST(float_math_ops) {
  static const teeny_opcode ops[] = {IR_EXP, IR_EXP2, IR_LOG, IR_LOG2, IR_SQRT, IR_RSQRT,
                                     IR_SIN, IR_COS, IR_TANH, IR_ERF, IR_FLOOR, IR_CEIL,
                                     IR_ABS, IR_NEG};
  static double (*const ref[])(double) = {exp, exp2, log, log2, sqrt, NULL, sin, cos,
                                          tanh, erf, floor, ceil, fabs, NULL};
  float in[8] = {0.5f, 1.0f, 2.0f, 3.7f, 0.01f, 10.0f, 0.25f, 7.5f}, out[8];
  uint16_t hin[8], hout[8];
  for (int i = 0; i < 8; i++)
    hin[i] = ref_f16((float)in[i]);
  for (size_t k = 0; k < TEENY_ARRAY_LEN(ops); k++) {
    run_unary(ops[k], TEENY_DT_F32, TEENY_DT_F32, in, out, 8);
    run_unary(ops[k], TEENY_DT_F16, TEENY_DT_F16, hin, hout, 8);
    for (int i = 0; i < 8; i++) {
      double x = in[i], hx = (double)ref_f16_value(hin[i]);
      double w = ref[k] ? ref[k](x) : ops[k] == IR_RSQRT ? 1 / sqrt(x) : -x;
      double hw = ref[k] ? ref[k](hx) : ops[k] == IR_RSQRT ? 1 / sqrt(hx) : -hx;
      ck_assert_msg(out[i] == (float)w, "%s(%g) = %.9g, want %.9g",
                    teeny__opcode_name(ops[k]), x, out[i], (float)w);
      ck_assert_msg(hout[i] == ref_f16((float)hw), "f16 %s(%g): %04x",
                    teeny__opcode_name(ops[k]), hx, hout[i]);
    }
  }
  /* fmin/fmax ignore NaN; rem has the dividend's sign */
  float a[4] = {NAN, 1.0f, -7.5f, 2.0f}, b[4] = {2.0f, NAN, 2.0f, -0.5f}, r[4];
  run_binary(IR_MIN, 0, TEENY_DT_F32, a, b, r, 4);
  ck_assert(r[0] == 2.0f && r[1] == 1.0f && r[2] == -7.5f && r[3] == -0.5f);
  run_binary(IR_MAX, 0, TEENY_DT_F32, a, b, r, 4);
  ck_assert(r[0] == 2.0f && r[1] == 1.0f && r[2] == 2.0f && r[3] == 2.0f);
  run_binary(IR_REM, 0, TEENY_DT_F32, a, b, r, 4);
  ck_assert(isnan(r[0]) && r[2] == -1.5f && r[3] == 0.0f);
  bool ne[4];
  run_binary(IR_CMP, CMP_NE, TEENY_DT_F32, a, a, ne, 4);
  ck_assert(ne[0] && !ne[1]); /* NaN != NaN */
}
END_TEST

START_TEST(fma_rounds_once) {
  teeny_ir_func *f = kernel("k");
  int pa = pparam(f, "a", TEENY_DT_F32), pb = pparam(f, "b", TEENY_DT_F32);
  int pc = pparam(f, "c", TEENY_DT_F32), po = pparam(f, "o", TEENY_DT_F32);
  teeny_region *r = f->body;
  int a = load_(f, r, elems(f, r, pa, 2)), b = load_(f, r, elems(f, r, pb, 2));
  int c = load_(f, r, elems(f, r, pc, 2));
  teeny_type t = t1(TEENY_DT_F32, 2);
  int y = teeny__ir_op_add(f, r, IR_FMA, L, (int[]){a, b, c}, 3, &t, 1)->res[0];
  store_(f, r, elems(f, r, po, 2), y, -1);
  ret_(f);
  float x = 1 + ldexpf(1, -12);
  float av[2] = {x, 2}, bv[2] = {x, 3}, cv[2] = {-1, 1}, o[2];
  teeny_interp_arg args[4] = {abuf(av, 8), abuf(bv, 8), abuf(cv, 8), abuf(o, 8)};
  ck_assert_int_eq(run(f, 1, 1, args, 4), 0);
  ck_assert(o[0] == ldexpf(1, -11) + ldexpf(1, -24)); /* a*b+c would give 2^-11 */
  ck_assert(o[1] == 7.0f);
}
END_TEST

/* ---- reductions and scans ------------------------------------------------------------------ */

/* (vals[4,8] f32) -> out_v[4] = max along axis 1, out_i[4] = first index of
 * it, via a 2-operand reduce; colsum[8] = sum along axis 0. */
static teeny_ir_func *k_argmax(void) {
  teeny_ir_func *f = kernel("argmax");
  int px = pparam(f, "x", TEENY_DT_F32), pv = pparam(f, "out_v", TEENY_DT_F32);
  int pi = pparam(f, "out_i", TEENY_DT_I32), ps = pparam(f, "colsum", TEENY_DT_F32);
  teeny_region *r = f->body;
  teeny_type tf = t2(TEENY_DT_F32, 4, 8), ti = t2(TEENY_DT_I32, 4, 8);
  int flat = load_(f, r, elems(f, r, px, 32));
  int x = un(f, r, IR_RESHAPE, flat, tf);
  teeny_type rowt = t2(TEENY_DT_I32, 1, 8);
  teeny_op *e = teeny__ir_op_add(f, r, IR_EXPAND_DIMS, L, (int[]){range_(f, r, 8)}, 1, &rowt, 1);
  e->axis = 0;
  int idx = un(f, r, IR_BROADCAST, e->res[0], ti);
  teeny_type res[2] = {t1(TEENY_DT_F32, 4), t1(TEENY_DT_I32, 4)};
  teeny_op *red = teeny__ir_op_add(f, r, IR_REDUCE, L, (int[]){x, idx}, 2, res, 2);
  red->axis = 1;
  teeny_region *c = teeny__ir_region_new(f);
  int av = teeny__ir_region_arg_add(f, c, sc(TEENY_DT_F32));
  int ai = teeny__ir_region_arg_add(f, c, sc(TEENY_DT_I32));
  int bv = teeny__ir_region_arg_add(f, c, sc(TEENY_DT_F32));
  int bi = teeny__ir_region_arg_add(f, c, sc(TEENY_DT_I32));
  int take = bin(f, c, IR_OR, cmp_(f, c, CMP_GT, bv, av),
                 bin(f, c, IR_AND, cmp_(f, c, CMP_EQ, bv, av), cmp_(f, c, CMP_LT, bi, ai)));
  int v = select_(f, c, take, bv, av), i = select_(f, c, take, bi, ai);
  yield_(f, c, (int[]){v, i}, 2);
  red->regions[0] = c;
  red->nregions = 1;
  store_(f, r, elems(f, r, pv, 4), red->res[0], -1);
  store_(f, r, elems(f, r, pi, 4), red->res[1], -1);
  teeny_type st = t1(TEENY_DT_F32, 8);
  teeny_op *cs = teeny__ir_op_add(f, r, IR_REDUCE, L, &x, 1, &st, 1);
  cs->axis = 0;
  teeny_region *c2 = teeny__ir_region_new(f);
  int p = teeny__ir_region_arg_add(f, c2, sc(TEENY_DT_F32));
  int q = teeny__ir_region_arg_add(f, c2, sc(TEENY_DT_F32));
  yield_(f, c2, (int[]){bin(f, c2, IR_ADD, p, q)}, 1);
  cs->regions[0] = c2;
  cs->nregions = 1;
  store_(f, r, elems(f, r, ps, 8), cs->res[0], -1);
  ret_(f);
  return f;
}

START_TEST(argmax_first_index_ties) {
  float x[32] = {1, 7, 3, 7, 7, 0, 2, 7,
                 5, 5, 5, 5, 5, 5, 5, 5,
                 -1, -2, -3, -4, -5, -6, -7, -8,
                 0, 0, 0, 0, 0, 0, 0, 9};
  float v[4], s[8];
  int32_t i[4];
  teeny_interp_arg args[4] = {abuf(x, sizeof x), abuf(v, sizeof v), abuf(i, sizeof i),
                              abuf(s, sizeof s)};
  ck_assert_int_eq(run(k_argmax(), 1, 1, args, 4), 0);
  ck_assert(v[0] == 7 && v[1] == 5 && v[2] == -1 && v[3] == 9);
  ck_assert(i[0] == 1 && i[1] == 0 && i[2] == 0 && i[3] == 7);
  for (int c = 0; c < 8; c++)
    ck_assert(s[c] == x[c] + x[8 + c] + x[16 + c] + x[24 + c]);
}
END_TEST

/* out = scan(+) of x[rows, cols] along axis, forward or reverse. */
static teeny_ir_func *k_scan(int rows, int cols, int axis, bool reverse) {
  teeny_ir_func *f = kernel("scan");
  int px = pparam(f, "x", TEENY_DT_I32), po = pparam(f, "out", TEENY_DT_I32);
  teeny_region *r = f->body;
  int n = rows * cols;
  int x = load_(f, r, elems(f, r, px, n));
  teeny_type t = rows > 1 ? t2(TEENY_DT_I32, rows, cols) : t1(TEENY_DT_I32, cols);
  if (rows > 1)
    x = un(f, r, IR_RESHAPE, x, t);
  teeny_op *op = teeny__ir_op_add(f, r, IR_SCAN, L, &x, 1, &t, 1);
  op->axis = axis;
  op->reverse = reverse;
  teeny_region *c = teeny__ir_region_new(f);
  int a = teeny__ir_region_arg_add(f, c, sc(TEENY_DT_I32));
  int b = teeny__ir_region_arg_add(f, c, sc(TEENY_DT_I32));
  yield_(f, c, (int[]){bin(f, c, IR_ADD, a, b)}, 1);
  op->regions[0] = c;
  op->nregions = 1;
  int y = op->res[0];
  if (rows > 1)
    y = un(f, r, IR_RESHAPE, y, t1(TEENY_DT_I32, n));
  store_(f, r, elems(f, r, po, n), y, -1);
  ret_(f);
  return f;
}

START_TEST(scan_inclusive_and_reverse) {
  int32_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, o[8];
  teeny_interp_arg args[2] = {abuf(x, sizeof x), abuf(o, sizeof o)};
  ck_assert_int_eq(run(k_scan(1, 8, 0, false), 1, 1, args, 2), 0);
  int32_t fw[8] = {1, 3, 6, 10, 15, 21, 28, 36};
  ck_assert_mem_eq(o, fw, sizeof fw);
  ck_assert_int_eq(run(k_scan(1, 8, 0, true), 1, 1, args, 2), 0);
  int32_t bw[8] = {36, 35, 33, 30, 26, 21, 15, 8};
  ck_assert_mem_eq(o, bw, sizeof bw);
  /* [2, 4] along axis 0 and axis 1 */
  ck_assert_int_eq(run(k_scan(2, 4, 0, false), 1, 1, args, 2), 0);
  int32_t a0[8] = {1, 2, 3, 4, 6, 8, 10, 12};
  ck_assert_mem_eq(o, a0, sizeof a0);
  ck_assert_int_eq(run(k_scan(2, 4, 1, true), 1, 1, args, 2), 0);
  int32_t a1[8] = {10, 9, 7, 4, 26, 21, 15, 8};
  ck_assert_mem_eq(o, a1, sizeof a1);
}
END_TEST

START_TEST(dot_i8_and_trans) {
  /* c = a . trans(b^T) with i8 operands into i32 */
  teeny_ir_func *f = kernel("dot");
  int pa = pparam(f, "a", TEENY_DT_I8), pb = pparam(f, "bt", TEENY_DT_I8);
  int pc = pparam(f, "c", TEENY_DT_I32);
  teeny_region *r = f->body;
  int a = un(f, r, IR_RESHAPE, load_(f, r, elems(f, r, pa, 256)), t2(TEENY_DT_I8, 16, 16));
  int bt = un(f, r, IR_RESHAPE, load_(f, r, elems(f, r, pb, 256)), t2(TEENY_DT_I8, 16, 16));
  int b = un(f, r, IR_TRANS, bt, t2(TEENY_DT_I8, 16, 16));
  teeny_type ct = t2(TEENY_DT_I32, 16, 16);
  int acc = konst(f, r, ct, 1000);
  int d = teeny__ir_op_add(f, r, IR_DOT, L, (int[]){a, b, acc}, 3, &ct, 1)->res[0];
  store_(f, r, elems(f, r, pc, 256), un(f, r, IR_RESHAPE, d, t1(TEENY_DT_I32, 256)), -1);
  ret_(f);
  int8_t av[256], btv[256];
  int32_t c[256];
  for (int i = 0; i < 256; i++) {
    av[i] = (int8_t)((int)(rnd() % 256) - 128);
    btv[i] = (int8_t)((int)(rnd() % 256) - 128);
  }
  av[0] = -128;
  btv[0] = -128;
  teeny_interp_arg args[3] = {abuf(av, 256), abuf(btv, 256), abuf(c, sizeof c)};
  ck_assert_int_eq(run(f, 1, 1, args, 3), 0);
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int32_t s = 1000;
      for (int k = 0; k < 16; k++)
        s += av[i * 16 + k] * btv[j * 16 + k];
      ck_assert_int_eq(c[i * 16 + j], s);
    }
}
END_TEST

/* ---- atomics ---------------------------------------------------------------------------------- */

START_TEST(atomics_return_old_values) {
  /* every lane of every program adds 1 to one counter */
  teeny_ir_func *f = kernel("count");
  int pc = pparam(f, "counter", TEENY_DT_I32), po = pparam(f, "old", TEENY_DT_I32);
  teeny_region *r = f->body;
  teeny_type pt = pt1(TEENY_DT_I32, 8), ti = t1(TEENY_DT_I32, 8);
  teeny_op *rmw = teeny__ir_op_add(f, r, IR_ATOMIC_RMW, L,
                                   (int[]){un(f, r, IR_SPLAT, pc, pt), konst(f, r, ti, 1)}, 2, &ti, 1);
  rmw->rmw = RMW_ADD;
  teeny_type i32 = sc(TEENY_DT_I32);
  teeny_op *pid = teeny__ir_op_add(f, r, IR_PROGRAM_ID, L, NULL, 0, &i32, 1);
  int base = bin(f, r, IR_MUL, pid->res[0], konst(f, r, i32, 8));
  int off = bin(f, r, IR_ADD, un(f, r, IR_SPLAT, base, ti), range_(f, r, 8));
  int op = teeny__ir_binary(f, r, IR_ADDPTR, L, un(f, r, IR_SPLAT, po, pt), off, pt);
  store_(f, r, op, rmw->res[0], -1);
  ret_(f);
  int32_t counter = 100, old[32];
  teeny_interp_arg args[2] = {abuf(&counter, 4), abuf(old, sizeof old)};
  ck_assert_int_eq(run(f, 4, 1, args, 2), 0);
  ck_assert_int_eq(counter, 132);
  for (int i = 0; i < 32; i++)
    ck_assert_int_eq(old[i], 100 + i);
}
END_TEST

/* x[i] = rmw(x[i], v[i]) for lanes i < 6; old values to out. */
static teeny_ir_func *k_rmw(teeny_rmw_kind kind, teeny_dtype dt) {
  teeny_ir_func *f = kernel("rmw");
  int px = pparam(f, "x", dt), pv = pparam(f, "v", dt), po = pparam(f, "out", dt);
  teeny_region *r = f->body;
  int mask = cmp_(f, r, CMP_LT, range_(f, r, 8), konst(f, r, t1(TEENY_DT_I32, 8), 6));
  teeny_type t = t1(dt, 8);
  teeny_op *op = teeny__ir_op_add(f, r, IR_ATOMIC_RMW, L,
                                  (int[]){elems(f, r, px, 8), load_(f, r, elems(f, r, pv, 8)), mask},
                                  3, &t, 1);
  op->rmw = kind;
  store_(f, r, elems(f, r, po, 8), op->res[0], -1);
  ret_(f);
  return f;
}

START_TEST(atomic_max_xchg_cas) {
  float x[8] = {1, 5, -3, NAN, 0, 2, 7, 7}, v[8] = {2, 4, -4, 1, 0, 9, 100, 100}, o[8];
  teeny_interp_arg args[3] = {abuf(x, 32), abuf(v, 32), abuf(o, 32)};
  ck_assert_int_eq(run(k_rmw(RMW_MAX, TEENY_DT_F32), 1, 1, args, 3), 0);
  ck_assert(x[0] == 2 && x[1] == 5 && x[2] == -3 && x[3] == 1 && x[5] == 9);
  ck_assert(x[6] == 7 && x[7] == 7); /* masked off */
  ck_assert(o[0] == 1 && o[1] == 5 && isnan(o[3]) && o[6] == 0 && o[7] == 0);

  int64_t xi[8] = {1, 2, 3, 4, 5, 6, 7, 8}, vi[8] = {-1, -2, -3, -4, -5, -6, -7, -8}, oi[8];
  teeny_interp_arg a2[3] = {abuf(xi, 64), abuf(vi, 64), abuf(oi, 64)};
  ck_assert_int_eq(run(k_rmw(RMW_XCHG, TEENY_DT_I64), 1, 1, a2, 3), 0);
  ck_assert(xi[0] == -1 && xi[5] == -6 && xi[6] == 7 && oi[0] == 1 && oi[5] == 6);
  uint32_t xu[8] = {5, 5, 0xffffffffu, 0, 0, 0, 0, 0}, vu[8] = {0xfffffff0u, 1, 3, 0, 0, 0, 0, 0}, ou[8];
  teeny_interp_arg a3[3] = {abuf(xu, 32), abuf(vu, 32), abuf(ou, 32)};
  ck_assert_int_eq(run(k_rmw(RMW_MIN, TEENY_DT_U32), 1, 1, a3, 3), 0);
  ck_assert(xu[0] == 5 && xu[1] == 1 && xu[2] == 3 && ou[2] == 0xffffffffu);

  /* cas: x[i] = x[i] == cmp[i] ? v[i] : x[i] */
  teeny_ir_func *f = kernel("cas");
  int px = pparam(f, "x", TEENY_DT_I32), pc = pparam(f, "cmp", TEENY_DT_I32);
  int pv = pparam(f, "v", TEENY_DT_I32), po = pparam(f, "out", TEENY_DT_I32);
  teeny_region *r = f->body;
  teeny_type t = t1(TEENY_DT_I32, 4);
  int old = teeny__ir_op_add(f, r, IR_ATOMIC_CAS, L,
                             (int[]){elems(f, r, px, 4), load_(f, r, elems(f, r, pc, 4)),
                                     load_(f, r, elems(f, r, pv, 4))}, 3, &t, 1)->res[0];
  store_(f, r, elems(f, r, po, 4), old, -1);
  ret_(f);
  int32_t cx_[4] = {1, 2, 3, 4}, cc[4] = {1, 0, 3, 0}, cv[4] = {10, 20, 30, 40}, co[4];
  teeny_interp_arg a4[4] = {abuf(cx_, 16), abuf(cc, 16), abuf(cv, 16), abuf(co, 16)};
  ck_assert_int_eq(run(f, 1, 1, a4, 4), 0);
  int32_t wx[4] = {10, 2, 30, 4}, wo[4] = {1, 2, 3, 4};
  ck_assert_mem_eq(cx_, wx, sizeof wx);
  ck_assert_mem_eq(co, wo, sizeof wo);
}
END_TEST

/* ---- control flow ------------------------------------------------------------------------------ */

/* s = 0; i = 0; while (i < n) { s += i; i++; } *out = s */
static teeny_ir_func *k_while_sum(bool forever) {
  teeny_ir_func *f = kernel("while_sum");
  teeny_type i32 = sc(TEENY_DT_I32);
  int n = teeny__ir_param_add(f, "n", i32);
  int po = pparam(f, "out", TEENY_DT_I32);
  teeny_region *r = f->body;
  int zero = konst(f, r, i32, 0);
  teeny_type rt[2] = {i32, i32};
  teeny_op *w = teeny__ir_op_add(f, r, IR_WHILE, (teeny_loc){4, 5}, (int[]){zero, zero}, 2, rt, 2);
  teeny_region *before = teeny__ir_region_new(f), *after = teeny__ir_region_new(f);
  int bi = teeny__ir_region_arg_add(f, before, i32);
  int bs = teeny__ir_region_arg_add(f, before, i32);
  int c = forever ? konst(f, before, sc(TEENY_DT_BOOL), 1) : cmp_(f, before, CMP_LT, bi, n);
  teeny__ir_op_add(f, before, IR_CONDITION, L, (int[]){c, bi, bs}, 3, NULL, 0);
  int ai = teeny__ir_region_arg_add(f, after, i32);
  int as = teeny__ir_region_arg_add(f, after, i32);
  int ni = bin(f, after, IR_ADD, ai, konst(f, after, i32, 1));
  int ns = bin(f, after, IR_ADD, as, ai);
  yield_(f, after, (int[]){ni, ns}, 2);
  w->regions[0] = before;
  w->regions[1] = after;
  w->nregions = 2;
  store_(f, r, po, w->res[1], -1);
  ret_(f);
  return f;
}

START_TEST(while_loop) {
  int32_t out = -1;
  teeny_interp_arg args[2] = {aint(10), abuf(&out, 4)};
  ck_assert_int_eq(run(k_while_sum(false), 1, 1, args, 2), 0);
  ck_assert_int_eq(out, 45);
  args[0] = aint(0);
  ck_assert_int_eq(run(k_while_sum(false), 1, 1, args, 2), 0);
  ck_assert_int_eq(out, 0);
}
END_TEST

START_TEST(step_budget_stops_infinite_while) {
  int32_t out = -1;
  teeny_interp_arg args[2] = {aint(10), abuf(&out, 4)};
  teeny_interp_opts o = {.max_steps = 100000};
  ck_assert_int_eq(run_opts(k_while_sum(true), 1, 1, args, 2, &o), TEENY_E_RUNTIME);
  ck_assert_msg(strstr(msg0(), "interpreter step limit exceeded") != NULL, "%s", msg0());
  ck_assert_int_eq(diags.v[0].line, 1); /* at an op of the loop */
  ck_assert_int_eq(out, -1);
  /* an empty kernel over a huge grid is stopped too */
  teeny_ir_func *f = kernel("empty");
  ret_(f);
  o.max_steps = 1000;
  ck_assert_int_eq(run_opts(f, 2147483647u, 2147483647u, NULL, 0, &o), TEENY_E_RUNTIME);
}
END_TEST

START_TEST(value_budget_is_a_limit) {
  float a[4] = {0}, b[4] = {0}, c[4];
  teeny_interp_arg args[4] = {abuf(a, 16), abuf(b, 16), abuf(c, 16), aint(4)};
  teeny_interp_opts o = {.max_bytes = 4096};
  ck_assert_int_eq(run_opts(teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024), 1, 1, args, 4, &o),
                   TEENY_E_LIMIT);
  ck_assert(strstr(msg0(), "value storage") != NULL);
}
END_TEST

START_TEST(if_with_results) {
  /* program 1 yields 1.5, the others yield their loaded x */
  teeny_ir_func *f = kernel("if");
  int px = pparam(f, "x", TEENY_DT_F32), po = pparam(f, "out", TEENY_DT_F32);
  teeny_region *r = f->body;
  teeny_type i32 = sc(TEENY_DT_I32), tf = t1(TEENY_DT_F32, 4), pt = pt1(TEENY_DT_F32, 4);
  int pid = teeny__ir_op_add(f, r, IR_PROGRAM_ID, L, NULL, 0, &i32, 1)->res[0];
  int c = cmp_(f, r, CMP_EQ, pid, konst(f, r, i32, 1));
  teeny_op *iff = teeny__ir_op_add(f, r, IR_IF, L, &c, 1, &tf, 1);
  iff->regions[0] = teeny__ir_region_new(f);
  iff->regions[1] = teeny__ir_region_new(f);
  iff->nregions = 2;
  yield_(f, iff->regions[0], (int[]){fkonst(f, iff->regions[0], tf, 1.5)}, 1);
  yield_(f, iff->regions[1], (int[]){load_(f, iff->regions[1], elems(f, iff->regions[1], px, 4))}, 1);
  int off = bin(f, r, IR_ADD, un(f, r, IR_SPLAT, bin(f, r, IR_MUL, pid, konst(f, r, i32, 4)),
                                 t1(TEENY_DT_I32, 4)), range_(f, r, 4));
  store_(f, r, teeny__ir_binary(f, r, IR_ADDPTR, L, un(f, r, IR_SPLAT, po, pt), off, pt),
         iff->res[0], -1);
  ret_(f);
  float x[4] = {1, 2, 3, 4}, out[12];
  teeny_interp_arg args[2] = {abuf(x, 16), abuf(out, sizeof out)};
  ck_assert_int_eq(run(f, 3, 1, args, 2), 0);
  float want[12] = {1, 2, 3, 4, 1.5f, 1.5f, 1.5f, 1.5f, 1, 2, 3, 4};
  ck_assert_mem_eq(out, want, sizeof want);
}
END_TEST

/* *out = number of iterations of for (iv = lb; iv < ub; iv += step), and
 * out[1] = the last iv (as i64 bits truncated to i32). */
static teeny_ir_func *k_for_count(teeny_dtype dt) {
  teeny_ir_func *f = kernel("for_count");
  int lb = teeny__ir_param_add(f, "lb", sc(dt));
  int ub = teeny__ir_param_add(f, "ub", sc(dt));
  int st = teeny__ir_param_add(f, "step", sc(dt));
  int po = pparam(f, "out", TEENY_DT_I32);
  teeny_region *r = f->body;
  teeny_type i32 = sc(TEENY_DT_I32);
  teeny_type rt[2] = {i32, i32};
  int zero = konst(f, r, i32, 0);
  teeny_op *loop = teeny__ir_op_add(f, r, IR_FOR, (teeny_loc){9, 3},
                                    (int[]){lb, ub, st, zero, zero}, 5, rt, 2);
  teeny_region *b = teeny__ir_region_new(f);
  int iv = teeny__ir_region_arg_add(f, b, sc(dt));
  int n = teeny__ir_region_arg_add(f, b, i32);
  teeny__ir_region_arg_add(f, b, i32);
  int n1 = bin(f, b, IR_ADD, n, konst(f, b, i32, 1));
  int last = teeny__ir_unary(f, b, IR_CAST, L, iv, i32);
  yield_(f, b, (int[]){n1, last}, 2);
  loop->regions[0] = b;
  loop->nregions = 1;
  store_(f, r, po, loop->res[0], -1);
  int p1 = teeny__ir_binary(f, r, IR_ADDPTR, L, po, konst(f, r, i32, 1), teeny__type_ptr(TEENY_DT_I32));
  store_(f, r, p1, loop->res[1], -1);
  ret_(f);
  return f;
}

START_TEST(for_loop_bounds_and_step) {
  int32_t out[2];
  teeny_interp_arg args[4] = {aint(0), aint(10), aint(3), abuf(out, sizeof out)};
  ck_assert_int_eq(run(k_for_count(TEENY_DT_I32), 1, 1, args, 4), 0);
  ck_assert(out[0] == 4 && out[1] == 9);
  /* unsigned compare: 0x7ffffff0 .. 0x80000010 by 8 */
  args[0].v.u = 0x7ffffff0u;
  args[1].v.u = 0x80000010u;
  args[2].v.u = 8;
  ck_assert_int_eq(run(k_for_count(TEENY_DT_U32), 1, 1, args, 4), 0);
  ck_assert_int_eq(out[0], 4);
  /* an iv whose next step would wrap ends the loop */
  args[0] = aint(INT32_MAX - 5);
  args[1] = aint(INT32_MAX);
  args[2] = aint(4);
  ck_assert_int_eq(run(k_for_count(TEENY_DT_I32), 1, 1, args, 4), 0);
  ck_assert_int_eq(out[0], 2);
  /* empty range with a zero step is fine; a running one is an error */
  args[0] = aint(5);
  args[1] = aint(5);
  args[2] = aint(0);
  ck_assert_int_eq(run(k_for_count(TEENY_DT_I32), 1, 1, args, 4), 0);
  ck_assert_int_eq(out[0], 0);
  args[0] = aint(0);
  args[2] = aint(-1);
  ck_assert_int_eq(run(k_for_count(TEENY_DT_I32), 1, 1, args, 4), TEENY_E_RUNTIME);
  ck_assert_msg(strstr(msg0(), "for-loop step must be positive") != NULL, "%s", msg0());
  ck_assert_int_eq(diags.v[0].line, 9);
}
END_TEST

/* ---- arguments ------------------------------------------------------------------------------- */

START_TEST(scalar_params_rounded) {
  teeny_ir_func *f = kernel("params");
  int h = teeny__ir_param_add(f, "h", sc(TEENY_DT_F16));
  int b = teeny__ir_param_add(f, "b", sc(TEENY_DT_I8));
  int g = teeny__ir_param_add(f, "g", sc(TEENY_DT_F32));
  int ph = pparam(f, "out_h", TEENY_DT_F16), pb = pparam(f, "out_b", TEENY_DT_I8);
  int pg = pparam(f, "out_g", TEENY_DT_F32);
  teeny_region *r = f->body;
  store_(f, r, ph, h, -1);
  store_(f, r, pb, b, -1);
  store_(f, r, pg, g, -1);
  ret_(f);
  uint16_t oh;
  int8_t ob;
  float og;
  teeny_interp_arg args[6] = {aflt(0.1), aint(300), aflt(0.1), abuf(&oh, 2), abuf(&ob, 1),
                              abuf(&og, 4)};
  ck_assert_int_eq(run(f, 1, 1, args, 6), 0);
  ck_assert_uint_eq(oh, 0x2e66);
  ck_assert_int_eq(ob, 44);
  ck_assert_uint_eq(f_bits(og), f_bits(0.1f));
}
END_TEST

START_TEST(bad_calls_rejected) {
  teeny_ir_func *f = teeny_sample_vector_add(&arena, TEENY_DT_F32, 16);
  float a[16];
  teeny_interp_arg args[4] = {abuf(a, 64), abuf(a, 64), abuf(a, 64), aint(16)};
  ck_assert_int_eq(run(f, 1, 1, args, 3), TEENY_E_INVAL);
  ck_assert(strstr(msg0(), "takes 4 arguments, got 3") != NULL);
  unsigned grid[3] = {1, 0, 1};
  ck_assert_int_eq(teeny__interp_run(&cx, f, grid, args, 4), TEENY_E_INVAL);
  ck_assert_int_eq(teeny__interp_run(&cx, f, NULL, args, 4), TEENY_E_INVAL);
  ck_assert_int_eq(teeny__interp_run(&cx, f, (unsigned[3]){1, 1, 1}, NULL, 4), TEENY_E_INVAL);
}
END_TEST

START_TEST(out_of_memory_is_reported) {
  teeny_ir_func *f = teeny_sample_vector_add(&arena, TEENY_DT_F32, 16);
  ck_assert_int_eq(teeny__ir_verify(&cx, f), 0);
  float a[16] = {0};
  teeny_interp_arg args[4] = {abuf(a, 64), abuf(a, 64), abuf(a, 64), aint(16)};
  for (long k = 0; k < 3; k++) {
    teeny__alloc_fail_after(k);
    int rc = teeny__interp_run(&cx, f, (unsigned[3]){1, 1, 1}, args, 4);
    teeny__alloc_fail_after(-1);
    ck_assert_int_eq(rc, TEENY_E_NOMEM);
  }
  ck_assert_int_eq(teeny__interp_run(&cx, f, (unsigned[3]){1, 1, 1}, args, 4), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("interp");
  TCase *tc = tcase_create("all");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, vector_add_f32);
  tcase_add_test(tc, vector_add_f16);
  tcase_add_test(tc, softmax_rows);
  tcase_add_test(tc, row_sum_loop);
  tcase_add_test(tc, matmul_f32_f16);
  tcase_add_test(tc, out_of_bounds_load_reported);
  tcase_add_test(tc, out_of_bounds_into_an_adjacent_buffer);
  tcase_add_test(tc, out_of_bounds_store_below_buffer);
  tcase_add_test(tc, masked_lanes_touch_nothing);
  tcase_add_test(tc, int_division_edges);
  tcase_add_test(tc, int_shift_edges);
  tcase_add_test(tc, int_wrapping);
  tcase_add_test(tc, unsigned_compare_and_minmax);
  tcase_add_test(tc, float_to_int_saturates);
  tcase_add_test(tc, int_to_int_and_float);
  tcase_add_test(tc, f16_rounding_known_values);
  tcase_add_test(tc, f16_rounding_matches_compiler);
  tcase_add_test(tc, bf16_rounding_known_values);
  tcase_add_test(tc, f32_rounding_past_flt_max);
  tcase_add_test(tc, float_math_ops);
  tcase_add_test(tc, fma_rounds_once);
  tcase_add_test(tc, argmax_first_index_ties);
  tcase_add_test(tc, scan_inclusive_and_reverse);
  tcase_add_test(tc, dot_i8_and_trans);
  tcase_add_test(tc, atomics_return_old_values);
  tcase_add_test(tc, atomic_max_xchg_cas);
  tcase_add_test(tc, while_loop);
  tcase_add_test(tc, step_budget_stops_infinite_while);
  tcase_add_test(tc, value_budget_is_a_limit);
  tcase_add_test(tc, if_with_results);
  tcase_add_test(tc, for_loop_bounds_and_step);
  tcase_add_test(tc, scalar_params_rounded);
  tcase_add_test(tc, bad_calls_rejected);
  tcase_add_test(tc, out_of_memory_is_reported);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
