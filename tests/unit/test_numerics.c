/*
 * tests/unit/test_numerics.c — the accuracy docs/dsl.md §5 promises, on the
 * host: every f32 math builtin over a sweep of its whole range (and its
 * special values) in the interpreter and through the real code generator
 * on the emulator, against a float64 reference, in ulp; and dot's input
 * precisions (tf32, tf32x3, ieee), where the interpreter rounds as the GPU
 * does.  The emulator computes the PTX approximation instructions
 * (ex2.approx, ...) with the host's math library, so it checks our
 * algorithms (range reduction, polynomials, special cases), not the
 * hardware's approximations: tests/gpu/math_accuracy.py measures those on
 * the GPU.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_util.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static teeny_spec *spec_of(const char *src, const char *kernel, const char *bindings) {
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = ku_spec_src(src, strlen(src), "numerics.c", kernel, bindings, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "spec: %s", teeny_strerror(rc));
  teeny_diags_close(&d);
  return s;
}

static void run(teeny_spec *s, bool emulate, unsigned grid, teeny_interp_arg *a, size_t n) {
  unsigned g[3] = {grid, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = emulate ? teeny_spec_emulate(s, g, a, n, &d) : teeny_spec_interpret(s, g, a, n, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "%s: %s", emulate ? "emulate" : "interpret", teeny_strerror(rc));
  teeny_diags_close(&d);
}

/* Distance in ulps of dtype dt (f32: 24 bits, f64: 53) between got and
 * the reference (both NaN: 0; one NaN, or an infinity against a finite
 * value: huge). */
static double ulps(double got, double ref, bool f64) {
  if (isnan(ref) || isnan(got))
    return isnan(ref) && isnan(got) ? 0 : 1e30;
  if (isinf(ref) || isinf(got))
    return got == ref ? 0 : 1e30;
  double a = fabs(ref), tiny = f64 ? 2.2250738585072014e-308 : 1.1754943508222875e-38;
  int e;
  frexp(a < tiny ? tiny : a, &e);
  double ulp = ldexp(1.0, e - (f64 ? 53 : 24)); /* an ulp at ref's binade */
  return fabs(got - ref) / ulp;
}

typedef struct fn_case {
  const char *name;       /* the builtin, applied as name(x) or name(x, ARG) */
  const char *dt;         /* "f32" or "f64" */
  long double (*ref)(long double);  /* reference (long double: 64-bit mantissa) */
  double lo, hi;          /* sweep range (geometric when both > 0) */
  double max_ulp;         /* the documented bound on [lo, hi] */
  double interp_ulp;      /* the interpreter's (composites round each step) */
  const char *arg2;       /* a second argument (pow), or NULL */
} fn_case;

static long double sigmoid_ref(long double x) { return 1.0L / (1.0L + expl(-x)); }
static long double pow25_ref(long double x) { return powl(x, 2.5L); }
static long double powm3_ref(long double x) { return powl(x, -3.0L); }
static long double atan2m_ref(long double y) { return atan2l(y, -0.75L); }
static long double atan2p_ref(long double y) { return atan2l(y, 3.0L); }

static const fn_case cases[] = {
    {"exp", "f32", expl, -87.0, 88.0, 3, 1, NULL},
    {"exp2", "f32", exp2l, -126.0, 127.0, 3, 1, NULL}, /* ex2.approx: 2.05 on the H200 */
    {"log", "f32", logl, 1e-38, 3e38, 3, 1, NULL},
    {"log2", "f32", log2l, 1e-38, 3e38, 3, 1, NULL},
    {"sin", "f32", sinl, -105615.0, 105615.0, 3, 1, NULL},
    {"cos", "f32", cosl, -105615.0, 105615.0, 3, 1, NULL},
    {"tanh", "f32", tanhl, -12.0, 12.0, 4, 1, NULL},
    {"sigmoid", "f32", sigmoid_ref, -80.0, 80.0, 5, 2.5, NULL},
    {"erf", "f32", erfl, -6.0, 6.0, 4, 1, NULL},
    {"erfc", "f32", erfcl, -9.0, 9.0, 1, 1, NULL},
    {"log1p", "f32", log1pl, -0.9999, 1e30, 1, 1, NULL},
    {"expm1", "f32", expm1l, -20.0, 88.0, 1, 1, NULL},
    {"pow", "f32", pow25_ref, 1e-15, 1e15, 1, 1, "2.5f"},
    {"pow", "f32", powm3_ref, -1e12, 1e12, 1, 1, "-3.0f"},
    {"sqrt", "f32", sqrtl, 0.0, 3e38, 0.5, 0.5, NULL},
    {"asin", "f32", asinl, -1.0, 1.0, 1, 1, NULL},
    {"acos", "f32", acosl, -1.0, 1.0, 1, 1, NULL},
    {"atan", "f32", atanl, -1e30, 1e30, 1, 1, NULL},
    {"atan2", "f32", atan2m_ref, -1e30, 1e30, 1, 1, "-0.75f"},
    {"exp", "f64", expl, -700.0, 700.0, 2, 1, NULL},
    {"log", "f64", logl, 1e-300, 1e300, 2, 1, NULL},
    {"sin", "f64", sinl, -1e9, 1e9, 2, 1, NULL},
    {"cos", "f64", cosl, -1e9, 1e9, 2, 1, NULL},
    {"tanh", "f64", tanhl, -25.0, 25.0, 4, 2, NULL},
    {"erf", "f64", erfl, -7.0, 7.0, 4, 1, NULL},
    {"erfc", "f64", erfcl, 1.5, 26.0, 4, 2, NULL},
    {"erfc", "f64", erfcl, -7.0, 1.5, 64, 2, NULL},
    {"log1p", "f64", log1pl, -0.9999, 1e300, 4, 1, NULL},
    {"expm1", "f64", expm1l, -40.0, 700.0, 4, 1, NULL},
    {"asin", "f64", asinl, -1.0, 1.0, 4, 1, NULL},
    {"acos", "f64", acosl, -1.0, 1.0, 4, 1, NULL},
    {"atan", "f64", atanl, -1e300, 1e300, 4, 1, NULL},
    {"atan2", "f64", atan2p_ref, -1e300, 1e300, 4, 1, "3.0"},
};

static const char fn_src_fmt[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(%s) x, ptr(%s) y, i32 n)\n"
    "{ tile(i32) o = program_id(0) * B + arange(0, B); tile(bool) m = o < n;\n"
    "  store(y + o, %s(load(x + o, m)%s%s), m); }\n";

#define NPTS 6000

static void sweep(double *x, int n, double lo, double hi) {
  int k = 0;
  static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, -1e-30, 1e-45,
                                   INFINITY, -INFINITY, NAN, 0.55, -0.55, 0.54999995,
                                   3.14159274, 1.57079637, 2.0, -2.0, 1e-10, -1e-10};
  for (size_t i = 0; i < LEN(special); i++)
    x[k++] = special[i];
  ku_rng r = {0x9e3779b97f4a7c15ull};
  while (k < n) {
    double u = (double)(ku_next(&r) >> 11) / 9007199254740992.0;
    x[k++] = lo > 0 ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
  }
}

START_TEST(math_within_documented_ulp) {
  const fn_case *c = &cases[_i];
  bool f64 = strcmp(c->dt, "f64") == 0;
  size_t es = f64 ? 8 : 4;
  char src[640];
  snprintf(src, sizeof src, fn_src_fmt, c->dt, c->dt, c->name, c->arg2 ? ", " : "",
           c->arg2 ? c->arg2 : "");
  teeny_spec *s = spec_of(src, "k", "B=256");
  double *xd = malloc(NPTS * sizeof(double));
  void *x = malloc(NPTS * es), *yi = malloc(NPTS * es), *ye = malloc(NPTS * es);
  sweep(xd, NPTS, c->lo, c->hi);
  for (int i = 0; i < NPTS; i++) {
    if (f64)
      ((double *)x)[i] = xd[i];
    else
      ((float *)x)[i] = (float)xd[i];
  }
  teeny_interp_arg a[3];
  memset(a, 0, sizeof a);
  a[0].data = x, a[0].bytes = NPTS * es;
  a[1].data = yi, a[1].bytes = NPTS * es;
  a[2].v.i = NPTS;
  run(s, false, (NPTS + 255) / 256, a, 3);
  a[1].data = ye;
  run(s, true, (NPTS + 255) / 256, a, 3);
  double worst_i = 0, worst_e = 0, at = 0;
  for (int i = 0; i < NPTS; i++) {
    double xi = f64 ? ((double *)x)[i] : ((float *)x)[i];
    double gi = f64 ? ((double *)yi)[i] : ((float *)yi)[i];
    double ge = f64 ? ((double *)ye)[i] : ((float *)ye)[i];
    double ref = (double)c->ref((long double)xi);
    if (isnan(xi))
      ref = NAN;
    if (!f64 && fabs(ref) >= 3.4028235677973366e38) /* past FLT_MAX + half an ulp */
      ref = copysign(INFINITY, ref);
    double ui = ulps(gi, ref, f64), ue = ulps(ge, ref, f64);
    if (ui > worst_i)
      worst_i = ui;
    if (ue > worst_e)
      worst_e = ue, at = xi;
  }
  printf("%-8s %s%s interpreter %.2f ulp, emulator %.2f ulp (worst at x = %.17g)\n",
         c->name, c->dt, c->arg2 ? c->arg2 : "", worst_i, worst_e, at);
  ck_assert_msg(worst_i <= c->interp_ulp, "%s %s: the interpreter is %.2f ulp off", c->name,
                c->dt, worst_i);
  ck_assert_msg(worst_e <= c->max_ulp, "%s %s: the code generator is %.2f ulp off at x = "
                "%.17g; docs/dsl.md promises %.1f", c->name, c->dt, worst_e, at, c->max_ulp);
  free(xd);
  free(x);
  free(yi);
  free(ye);
  teeny_spec_destroy(s);
}
END_TEST

/* ---- dot precision ------------------------------------------------------------------- */

static const char dot_src_fmt[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(M); TEENY_CONST(N); TEENY_CONST(K);\n"
    "TEENY_KERNEL(M, N, K)\n"
    "void k(ptr(f32) a, ptr(f32) b, ptr(f32) c)\n"
    "{ tile(i32) m = arange(0, M), n = arange(0, N), k = arange(0, K);\n"
    "  tile(f32) x = load(a + col(m) * K + row(k)), y = load(b + col(k) * N + row(n));\n"
    "  store(c + col(m) * N + row(n), dot(x, y%s)); }\n";

/* c = a.b for 32x32x64 random f32 operands at precision opt, by the
 * interpreter (ci) and the emulator (ce); ref in float64, and norm[i] the
 * sum of |products| (errors are measured against it: it is what the
 * rounding errors scale with, whatever the cancellation). */
static double norm[1024];

static void dot_run(const char *opt, float *ci, float *ce, double *ref, const char *target) {
  enum { M = 32, N = 32, K = 64 };
  char src[1024];
  snprintf(src, sizeof src, dot_src_fmt, opt);
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  teeny_const_binding cb[3] = {{"M", M}, {"N", N}, {"K", K}};
  req.source = src, req.source_len = strlen(src), req.kernel = "k";
  req.consts = cb, req.nconsts = 3, req.target = target, req.num_warps = 4;
  teeny_spec *s;
  ck_assert_int_eq(teeny_spec_create(&req, &s, &d), 0);
  teeny_diags_close(&d);
  static float a[M * K], b[K * N];
  ku_rng r = {12345};
  for (int i = 0; i < M * K; i++)
    a[i] = ku_uniform(&r);
  for (int i = 0; i < K * N; i++)
    b[i] = ku_uniform(&r);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double t = 0, u = 0;
      for (int k = 0; k < K; k++) {
        t += (double)a[i * K + k] * b[k * N + j];
        u += fabs((double)a[i * K + k] * b[k * N + j]);
      }
      ref[i * N + j] = t;
      norm[i * N + j] = u;
    }
  teeny_interp_arg args[3];
  memset(args, 0, sizeof args);
  args[0].data = a, args[0].bytes = sizeof a;
  args[1].data = b, args[1].bytes = sizeof b;
  args[2].data = ci, args[2].bytes = M * N * 4;
  run(s, false, 1, args, 3);
  args[2].data = ce;
  run(s, true, 1, args, 3);
  teeny_spec_destroy(s);
}

static double max_rel(const float *x, const double *ref, int n) {
  double w = 0;
  for (int i = 0; i < n; i++) {
    double e = fabs(x[i] - ref[i]) / norm[i];
    if (e > w)
      w = e;
  }
  return w;
}

START_TEST(dot_input_precision) {
  static const char *const targets[] = {"sm_90a", "sm_80"};
  for (int t = 0; t < 2; t++) {
    float ci[1024], ce[1024];
    double ref[1024];
    /* ieee: the FMA path in k order, as the interpreter's fmaf: bit for bit */
    dot_run(", prec_ieee", ci, ce, ref, targets[t]);
    ck_assert_msg(memcmp(ci, ce, sizeof ci) == 0, "%s: prec_ieee differs", targets[t]);
    double ieee = max_rel(ci, ref, 1024);
    /* tf32 (the default): the interpreter rounds the operands as the GPU */
    dot_run("", ci, ce, ref, targets[t]);
    double tf32_i = max_rel(ci, ref, 1024), apart = 0;
    for (int i = 0; i < 1024; i++) {
      double e = fabs((double)ci[i] - ce[i]) / norm[i];
      if (e > apart)
        apart = e;
    }
    /* tf32x3 recovers f32 accuracy */
    float xi[1024], xe[1024];
    dot_run(", prec_tf32x3", xi, xe, ref, targets[t]);
    double x3_i = max_rel(xi, ref, 1024), x3_e = max_rel(xe, ref, 1024);
    printf("dot %s: ieee %.2e, tf32 %.2e (interpreter vs emulator %.2e), tf32x3 %.2e / %.2e\n",
           targets[t], ieee, tf32_i, apart, x3_i, x3_e);
    /* relative to sum |a b|: f32 accumulation ~ K eps = 4e-6; TF32
     * operands ~ 2^-11; the interpreter models the TF32 rounding, so it
     * and the emulator differ only by the order of f32 sums */
    ck_assert_msg(ieee < 4e-6, "ieee dot error %.2e", ieee);
    ck_assert_msg(tf32_i > 1e-4, "tf32 should show TF32 rounding (%.2e)", tf32_i);
    ck_assert_msg(apart < 4e-6, "interpreter and emulator differ by %.2e under tf32", apart);
    ck_assert_msg(x3_i < 4e-6 && x3_e < 4e-6, "tf32x3 error %.2e / %.2e", x3_i, x3_e);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("numerics");
  TCase *tc = tcase_create("all");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, math_within_documented_ulp, 0, (int)LEN(cases));
  tcase_add_test(tc, dot_input_precision);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
