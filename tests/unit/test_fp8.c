/*
 * tests/unit/test_fp8.c — f8e4m3 and f8e5m2: the formats' values and
 * rounding (common/fp8.c) against values worked out by hand, every code
 * and a sweep of f32 inputs through the interpreter and through the code
 * generator on the emulator, bit for bit, arithmetic through f32, and the
 * dtype rules of the front end.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernel_util.h"

#define E4 TEENY_DT_F8E4M3
#define E5 TEENY_DT_F8E5M2

/* ---- the formats ------------------------------------------------------------- */

START_TEST(known_values) {
  static const struct {
    teeny_dtype dt;
    uint8_t bits;
    double v;
  } k[] = {
      {E4, 0x00, 0.0},         {E4, 0x01, 0x1p-9},     {E4, 0x07, 7 * 0x1p-9},
      {E4, 0x08, 0x1p-6},      {E4, 0x38, 1.0},        {E4, 0x39, 1.125},
      {E4, 0x40, 2.0},         {E4, 0x7e, 448.0},      {E4, 0xb8, -1.0},
      {E4, 0xfe, -448.0},      {E4, 0x77, 240.0},      {E5, 0x00, 0.0},
      {E5, 0x01, 0x1p-16},     {E5, 0x03, 3 * 0x1p-16}, {E5, 0x04, 0x1p-14},
      {E5, 0x3c, 1.0},         {E5, 0x3d, 1.25},       {E5, 0x7b, 57344.0},
      {E5, 0x7c, INFINITY},    {E5, 0xfc, -INFINITY},  {E5, 0xbc, -1.0},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    ck_assert_msg(teeny__fp8_value(k[i].dt, k[i].bits) == k[i].v, "%s 0x%02x: %g, want %g",
                  teeny_dtype_name(k[i].dt), k[i].bits, teeny__fp8_value(k[i].dt, k[i].bits),
                  k[i].v);
    if (!isinf(k[i].v)) /* infinities saturate (rounding_and_saturation) */
      ck_assert_int_eq(teeny__fp8_bits(k[i].dt, k[i].v), k[i].bits);
  }
  ck_assert(isnan(teeny__fp8_value(E4, 0x7f)) && isnan(teeny__fp8_value(E4, 0xff)));
  for (int m = 1; m < 4; m++)
    ck_assert(isnan(teeny__fp8_value(E5, (uint8_t)(0x7c | m))));
  ck_assert(signbit(teeny__fp8_value(E4, 0x80)) && teeny__fp8_value(E4, 0x80) == 0);
  ck_assert_int_eq(teeny__fp8_bits(E4, -0.0), 0x80);
}
END_TEST

/* Every finite code round-trips, and the values grow with the codes. */
START_TEST(codes_round_trip) {
  teeny_dtype dt = _i ? E5 : E4;
  unsigned top = _i ? 0x7b : 0x7e;
  double prev = -1;
  for (unsigned c = 0; c <= top; c++) {
    double v = teeny__fp8_value(dt, (uint8_t)c);
    ck_assert_msg(v > prev || c == 0, "0x%02x not above 0x%02x", c, c - 1);
    prev = v;
    ck_assert_int_eq(teeny__fp8_bits(dt, v), c);
    ck_assert_int_eq(teeny__fp8_bits(dt, -v), c | 0x80);
  }
}
END_TEST

/* Between two neighbours: below the midpoint rounds down, above up, on it
 * to the even code; past the largest finite value saturates. */
START_TEST(rounding_and_saturation) {
  teeny_dtype dt = _i ? E5 : E4;
  unsigned top = _i ? 0x7b : 0x7e;
  for (unsigned c = 0; c < top; c++) {
    double lo = teeny__fp8_value(dt, (uint8_t)c), hi = teeny__fp8_value(dt, (uint8_t)(c + 1));
    double mid = (lo + hi) / 2, eps = (hi - lo) / 64;
    ck_assert_int_eq(teeny__fp8_bits(dt, mid - eps), c);
    ck_assert_int_eq(teeny__fp8_bits(dt, mid + eps), c + 1);
    ck_assert_int_eq(teeny__fp8_bits(dt, mid), c % 2 ? c + 1 : c);
  }
  double max = teeny__fp8_max(dt);
  ck_assert_int_eq(teeny__fp8_bits(dt, max * 1.0625), top);
  ck_assert_int_eq(teeny__fp8_bits(dt, 1e30), top);
  ck_assert_int_eq(teeny__fp8_bits(dt, INFINITY), top);
  ck_assert_int_eq(teeny__fp8_bits(dt, -INFINITY), top | 0x80);
  ck_assert_int_eq(teeny__fp8_bits(dt, NAN) & 0x7f, 0x7f);
  ck_assert(isnan(teeny__fp8_round(dt, NAN)));
  /* rounding goes through f32: a value a hair above a midpoint that f32
   * rounds onto it ties to even */
  double mid = (teeny__fp8_value(dt, 0x39) + teeny__fp8_value(dt, 0x3a)) / 2;
  ck_assert_int_eq(teeny__fp8_bits(dt, mid + 0x1p-40), 0x3a);
  double mid2 = (teeny__fp8_value(dt, 0x38) + teeny__fp8_value(dt, 0x39)) / 2;
  ck_assert_int_eq(teeny__fp8_bits(dt, mid2 + 0x1p-40), 0x38);
}
END_TEST

/* ---- the interpreter and the code generator -------------------------------------- */

static const char *conv_src =
    "#include <teeny/dsl.h>\n"
    "TEENY_DTYPE(F);\n"
    "TEENY_CONST(BLOCK);\n"
    "TEENY_KERNEL(F, BLOCK)\n"
    "void up(ptr(F) codes, ptr(f32) out, i32 n) {\n"
    "    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(out + o, (tile(f32))load(codes + o, o < n), o < n);\n"
    "}\n"
    "TEENY_KERNEL(F, BLOCK)\n"
    "void down(ptr(f32) x, ptr(F) out, ptr(F) out16, ptr(F) outb, i32 n) {\n"
    "    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    tile(f32) v = load(x + o, o < n, 0);\n"
    "    store(out + o, (tile(F))v, o < n);\n"
    "    store(out16 + o, (tile(F))(tile(f16))v, o < n);\n"
    "    store(outb + o, (tile(F))(tile(bf16))v, o < n);\n"
    "}\n"
    "TEENY_KERNEL(F, BLOCK)\n"
    "void arith(ptr(F) a, ptr(F) b, ptr(F) out, ptr(i8) cmp, i32 n) {\n"
    "    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    tile(F) x = load(a + o, o < n);\n"
    "    tile(F) y = load(b + o, o < n);\n"
    "    tile(F) r = x * y + x / y - maximum(x, y) + 1.5;\n"
    "    store(out + o, r, o < n);\n"
    "    store(cmp + o, (tile(i8))(x < y) + (tile(i8))(x == y) * 2, o < n);\n"
    "}\n";

static teeny_spec *spec_of(const char *kernel, teeny_dtype dt) {
  char bind[64];
  snprintf(bind, sizeof bind, "F=%s,BLOCK=128", teeny_dtype_name(dt));
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = ku_spec_src(conv_src, strlen(conv_src), "fp8.c", kernel, bind, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "spec %s: %s", kernel, teeny_strerror(rc));
  teeny_diags_close(&d);
  return s;
}

/* NaN codes of dt (any sign, any payload). */
static bool fp8_nan(teeny_dtype dt, uint8_t b) {
  return dt == E4 ? (b & 0x7f) == 0x7f : (b & 0x7c) == 0x7c && (b & 3);
}

/* Run on the interpreter and on the emulator; every output byte must
 * agree, except that NaNs of an fp8 output (fp8[k] set) may differ in
 * sign (conversions through bf16 do not keep a NaN's sign everywhere). */
static void run_both(teeny_spec *s, teeny_dtype dt, unsigned n, teeny_interp_arg *a, size_t na,
                     void **outs, const size_t *out_bytes, const bool *fp8, int nout) {
  unsigned grid[3] = {(n + 127) / 128, 1, 1};
  void *saved[4];
  for (int k = 0; k < nout; k++) {
    saved[k] = malloc(out_bytes[k]);
    ck_assert_ptr_nonnull(saved[k]);
  }
  for (int pass = 0; pass < 2; pass++) {
    for (int k = 0; k < nout; k++)
      memset(outs[k], 0xa5, out_bytes[k]);
    teeny_diags d;
    teeny_diags_init(&d);
    int rc = pass ? teeny_spec_emulate(s, grid, a, na, &d) : teeny_spec_interpret(s, grid, a, na, &d);
    if (rc)
      ku_print_diags(&d);
    ck_assert_msg(rc == 0, "%s: %s", pass ? "emulate" : "interpret", teeny_strerror(rc));
    teeny_diags_close(&d);
    for (int k = 0; k < nout; k++) {
      if (!pass) {
        memcpy(saved[k], outs[k], out_bytes[k]);
        continue;
      }
      const unsigned char *x = saved[k], *y = outs[k];
      for (size_t j = 0; j < out_bytes[k]; j++)
        ck_assert_msg(x[j] == y[j] || (fp8[k] && fp8_nan(dt, x[j]) && fp8_nan(dt, y[j])),
                      "output %d byte %zu: interpreter 0x%02x, emulator 0x%02x", k, j, x[j],
                      y[j]);
    }
  }
  for (int k = 0; k < nout; k++)
    free(saved[k]);
}

/* All 256 codes up to f32: the interpreter and the emulator agree with
 * common/fp8.c (NaN codes give a NaN). */
START_TEST(every_code_up) {
  teeny_dtype dt = _i ? E5 : E4;
  uint8_t codes[256];
  float out[256];
  for (int c = 0; c < 256; c++)
    codes[c] = (uint8_t)c;
  teeny_spec *s = spec_of("up", dt);
  teeny_interp_arg a[3] = {{.data = codes, .bytes = sizeof codes},
                           {.data = out, .bytes = sizeof out},
                           {.v.i = 256}};
  void *outs[1] = {out};
  size_t ob[1] = {sizeof out};
  bool f8[1] = {false};
  run_both(s, dt, 256, a, 3, outs, ob, f8, 1);
  for (int c = 0; c < 256; c++) {
    double want = teeny__fp8_value(dt, (uint8_t)c);
    ck_assert_msg(isnan(want) ? isnan(out[c]) : out[c] == want, "code 0x%02x: %g, want %g", c,
                  out[c], want);
  }
  teeny_spec_destroy(s);
}
END_TEST

/* f32 down to fp8 (directly, and through f16 and bf16), over every
 * midpoint and its neighbours, specials, subnormals of both, and a random
 * sweep: bit for bit. */
START_TEST(sweep_down) {
  teeny_dtype dt = _i ? E5 : E4;
  enum { N = 4096 };
  float *x = calloc(N, sizeof *x);
  uint8_t o1[N], o2[N], o3[N];
  unsigned n = 0;
  for (unsigned c = 0; c < 0x7f && n + 6 < N; c++) {
    double lo = teeny__fp8_value(dt, (uint8_t)c), hi = teeny__fp8_value(dt, (uint8_t)(c + 1));
    if (isnan(hi) || isinf(hi))
      break;
    float mid = (float)((lo + hi) / 2);
    x[n++] = mid;
    x[n++] = nextafterf(mid, 0);
    x[n++] = nextafterf(mid, INFINITY);
    x[n++] = -mid;
    x[n++] = (float)lo;
  }
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, 1e-30f, 3e38f,
                           448.0f, 464.0f, 465.0f, 57344.0f, 61440.0f, 61441.0f, 1e5f,
                           (float)0x1p-10, (float)0x1p-17, (float)0x1.8p-17};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
    x[n++] = special[k];
  ku_rng r = {0x5eed};
  while (n < N) {
    uint32_t u = (uint32_t)ku_next(&r);
    float f;
    memcpy(&f, &u, 4);
    x[n++] = f;
  }
  teeny_spec *s = spec_of("down", dt);
  teeny_interp_arg a[5] = {{.data = x, .bytes = N * sizeof *x}, {.data = o1, .bytes = N},
                           {.data = o2, .bytes = N}, {.data = o3, .bytes = N}, {.v.i = N}};
  void *outs[3] = {o1, o2, o3};
  size_t ob[3] = {N, N, N};
  bool f8[3] = {true, true, true};
  run_both(s, dt, N, a, 5, outs, ob, f8, 3);
  for (unsigned k = 0; k < N; k++) {
    uint8_t want = teeny__fp8_bits(dt, x[k]);
    ck_assert_msg(o1[k] == want || (isnan(x[k]) && (o1[k] & 0x7f) == 0x7f),
                  "%a: 0x%02x, want 0x%02x", (double)x[k], o1[k], want);
  }
  free(x);
  teeny_spec_destroy(s);
}
END_TEST

/* Element-wise arithmetic and comparisons over all pairs of a spread of
 * codes: the interpreter and the emulator agree bit for bit. */
START_TEST(arithmetic_through_f32) {
  teeny_dtype dt = _i ? E5 : E4;
  enum { N = 64 * 64 };
  uint8_t av[N], bv[N], out[N];
  int8_t cmp[N];
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      av[i * 64 + j] = (uint8_t)(i * 4 + (i & 3));
      bv[i * 64 + j] = (uint8_t)(j * 4 + 1);
    }
  teeny_spec *s = spec_of("arith", dt);
  teeny_interp_arg a[5] = {{.data = av, .bytes = N}, {.data = bv, .bytes = N},
                           {.data = out, .bytes = N}, {.data = cmp, .bytes = N}, {.v.i = N}};
  void *outs[2] = {out, cmp};
  size_t ob[2] = {N, N};
  bool f8[2] = {true, false};
  run_both(s, dt, N, a, 5, outs, ob, f8, 2);
  /* spot check against f32 arithmetic rounded once */
  for (int k = 0; k < N; k += 97) {
    double x = teeny__fp8_value(dt, av[k]), y = teeny__fp8_value(dt, bv[k]);
    if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
      continue;
    double t1 = teeny__fp8_round(dt, x * y), t2 = teeny__fp8_round(dt, x / y);
    double t3 = teeny__fp8_round(dt, t1 + t2), t4 = teeny__fp8_round(dt, t3 - fmax(x, y));
    uint8_t want = teeny__fp8_bits(dt, t4 + 1.5);
    ck_assert_msg(out[k] == want || isnan(teeny__fp8_value(dt, want)),
                  "0x%02x, 0x%02x: 0x%02x, want 0x%02x", av[k], bv[k], out[k], want);
    ck_assert_int_eq(cmp[k], (x < y) + (x == y) * 2);
  }
  teeny_spec_destroy(s);
}
END_TEST

/* ---- the front end's rules ------------------------------------------------------------ */

static int compile_body(const char *body, teeny_diags *d) {
  char src[1024];
  snprintf(src, sizeof src,
           "#include <teeny/dsl.h>\nTEENY_KERNEL()\n"
           "void k(ptr(f8e4m3) a, ptr(f8e5m2) b, ptr(f16) h, ptr(f32) f) {\n"
           "    tile(i32) o = arange(0, 16);\n%s}\n", body);
  teeny_spec *s = NULL;
  int rc = ku_spec_src(src, strlen(src), "rules.c", "k", "", &s, d);
  if (!rc) {
    teeny_artifact *art = NULL;
    rc = teeny_spec_compile(s, TEENY_EMIT_MLIR, &art, d);
    teeny_artifact_destroy(art);
  }
  teeny_spec_destroy(s);
  return rc;
}

START_TEST(dtype_rules) {
  static const char *good[] = {
      "    tile(f32) x = load(a + o) + load(b + o);\n store(f + o, x);\n", /* e4m3+e5m2: f32 */
      "    tile(f32) x = load(a + o) + load(h + o);\n store(f + o, x);\n", /* fp8+f16: f32 */
      "    tile(f8e4m3) x = load(a + o) * 2.0;\n store(a + o, x);\n",     /* literal adopts */
      "    tile(f16) x = load(a + o);\n store(h + o, x);\n",                /* exact widening */
      "    tile(bf16) x = load(b + o);\n store(f + o, (tile(f32))x);\n",
      "    store(b + o, (tile(f8e5m2))load(a + o));\n",                     /* explicit */
      "    f8e4m3 s = load(a);\n store(f, (f32)s + 1.0);\n",
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    teeny_diags d;
    teeny_diags_init(&d);
    int rc = compile_body(good[i], &d);
    if (rc)
      ku_print_diags(&d);
    ck_assert_msg(rc == 0, "good %zu: %s", i, teeny_strerror(rc));
    teeny_diags_close(&d);
  }
  static const struct {
    const char *body, *msg;
  } bad[] = {
      {"    tile(f8e4m3) x = load(h + o);\n store(a + o, x);\n", "dtype mismatch"},
      {"    tile(f8e4m3) x = load(b + o);\n store(a + o, x);\n", "dtype mismatch"},
      {"    atomic_add(f + 0, 1.0);\n atomic_add(a + o, load(a + o));\n", "atomic"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    teeny_diags d;
    teeny_diags_init(&d);
    int rc = compile_body(bad[i].body, &d);
    ck_assert_msg(rc == TEENY_E_COMPILE, "bad %zu compiled", i);
    ck_assert_msg(d.n >= 1 && strstr(d.v[0].message, bad[i].msg), "bad %zu: %s", i,
                  d.n ? d.v[0].message : "(none)");
    teeny_diags_close(&d);
  }
}
END_TEST

static Suite *fp8_suite(void) {
  Suite *s = suite_create("fp8");
  TCase *t = tcase_create("fp8");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, known_values);
  tcase_add_loop_test(t, codes_round_trip, 0, 2);
  tcase_add_loop_test(t, rounding_and_saturation, 0, 2);
  tcase_add_loop_test(t, every_code_up, 0, 2);
  tcase_add_loop_test(t, sweep_down, 0, 2);
  tcase_add_loop_test(t, arithmetic_through_f32, 0, 2);
  tcase_add_test(t, dtype_rules);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(fp8_suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
