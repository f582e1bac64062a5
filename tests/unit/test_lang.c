/*
 * tests/unit/test_lang.c — the language of issue 13 (tuples, early exits,
 * typed constants, dtype introspection, device_print/device_assert,
 * builtin names as user names) through the real compiler: each kernel of
 * tests/lang/ runs in the interpreter, whose buffers are checked against
 * plain C, and then on the host emulator of the generated code (sm_90a
 * and sm_80, 1 and 4 warps), whose buffers must equal the interpreter's
 * bit for bit.  The kernel files are also host-checked as C11
 * (tests/host) and their MLIR parsed by mlir-opt-19.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_util.h"

#define MAXP 8
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static bool is_float_dt(teeny_dtype dt) {
  return dt == TEENY_DT_F16 || dt == TEENY_DT_BF16 || dt == TEENY_DT_F32 || dt == TEENY_DT_F64;
}

/* Initial contents of a pointer argument. */
enum { F_ZERO, F_IOTA, F_SMALL, F_RANDOM };

typedef struct lang_case lang_case;
struct lang_case {
  const char *file;        /* tests/lang/FILE.c */
  const char *kernel;
  const char *bindings;    /* "BLOCK=16,D=f32" (ku_spec_src) */
  unsigned grid;           /* programs along axis 0 */
  long n[MAXP];            /* elements of each pointer argument, in order */
  int fill[MAXP];          /* F_* of each pointer argument */
  double scalars[MAXP];    /* each scalar argument, in order */
  /* The interpreter's buffers (by pointer argument) against plain C. */
  void (*check)(const lang_case *c, void *const *bufs);
};

/* ---- running ------------------------------------------------------------------ */

typedef struct launch {
  teeny_spec *spec;
  size_t np;                 /* parameters */
  teeny_interp_arg args[MAXP];
  void *bufs[MAXP];          /* by pointer argument */
  size_t bytes[MAXP];
  int nbufs;
} launch;

static double initial(int fill, long i, uint64_t *rng) {
  switch (fill) {
  case F_IOTA: return (double)i;
  case F_SMALL: return (double)(i % 7 - 3);
  case F_RANDOM: {
    ku_rng r = {*rng};
    double v = ku_uniform(&r);
    *rng = r.s;
    return v;
  }
  default: return 0;
  }
}

static teeny_spec *spec_for(const lang_case *c, const char *target, int warps) {
  char rel[256], bind[512];
  snprintf(rel, sizeof rel, "tests/lang/%s.c", c->file);
  size_t len;
  char *src = ku_read_source(rel, &len);
  snprintf(bind, sizeof bind, "%s", c->bindings ? c->bindings : "");
  teeny_dtype_binding dts[16];
  teeny_const_binding cts[16];
  size_t nd = 0, nc = 0;
  static char names[16][64], values[16][64];
  int k = 0;
  for (char *t = strtok(bind, ","); t && k < 16; t = strtok(NULL, ","), k++) {
    char *eq = strchr(t, '=');
    *eq = '\0';
    snprintf(names[k], 64, "%s", t);
    snprintf(values[k], 64, "%s", eq + 1);
    char *end;
    long long v = strtoll(values[k], &end, 10);
    if (*end == '\0')
      cts[nc++] = (teeny_const_binding){names[k], v};
    else
      dts[nd++] = (teeny_dtype_binding){names[k], values[k]};
  }
  teeny_compile_req req = {.source = src, .source_len = len, .filename = rel,
                           .kernel = c->kernel, .dtypes = dts, .ndtypes = nd,
                           .consts = cts, .nconsts = nc, .target = target,
                           .num_warps = warps};
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = teeny_spec_create(&req, &s, &d);
  if (rc)
    ku_print_diags(&d);
  teeny_diags_close(&d);
  free(src);
  ck_assert_msg(rc == 0, "%s/%s: spec: %s", c->file, c->kernel, teeny_strerror(rc));
  return s;
}

/* Buffers and scalars of c for spec s (the same contents every time). */
static void launch_init(launch *l, const lang_case *c, teeny_spec *s) {
  memset(l, 0, sizeof *l);
  l->spec = s;
  l->np = teeny_spec_nparams(s);
  ck_assert_uint_le(l->np, MAXP);
  uint64_t rng = 0x5eed;
  int si = 0;
  for (size_t i = 0; i < l->np; i++) {
    const teeny_param *p = teeny_spec_param(s, i);
    if (p->kind == TEENY_PARAM_POINTER) {
      int b = l->nbufs++;
      l->bytes[b] = (size_t)c->n[b] * (size_t)teeny_dtype_size(p->dtype);
      l->bufs[b] = calloc(1, l->bytes[b] + 8);
      for (long e = 0; e < c->n[b]; e++)
        ku_put(l->bufs[b], p->dtype, (size_t)e, initial(c->fill[b], e, &rng));
      l->args[i].data = l->bufs[b];
      l->args[i].bytes = l->bytes[b];
    } else if (is_float_dt(p->dtype)) {
      l->args[i].v.f = c->scalars[si++];
    } else {
      l->args[i].v.i = (int64_t)c->scalars[si++];
    }
  }
}

static void launch_close(launch *l) {
  for (int b = 0; b < l->nbufs; b++)
    free(l->bufs[b]);
  teeny_spec_destroy(l->spec);
}

typedef int (*runner)(const teeny_spec *, const unsigned[3], const teeny_interp_arg *,
                      size_t, teeny_diags *);

static int run(launch *l, const lang_case *c, runner fn) {
  unsigned grid[3] = {c->grid ? c->grid : 1, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = fn(l->spec, grid, l->args, l->np, &d);
  if (rc)
    ku_print_diags(&d);
  teeny_diags_close(&d);
  return rc;
}

/* Interpreter, check, then every emulated configuration against it. */
static void run_case(const lang_case *c) {
  launch ref;
  launch_init(&ref, c, spec_for(c, NULL, 4));
  ck_assert_msg(run(&ref, c, teeny_spec_interpret) == 0, "%s: interpreter failed", c->kernel);
  if (c->check)
    c->check(c, ref.bufs);
  static const struct {
    const char *target;
    int warps;
  } cfg[] = {{"sm_90a", 4}, {"sm_80", 1}, {"sm_90a", 1}, {"sm_80", 4}};
  for (size_t k = 0; k < NELEM(cfg); k++) {
    launch emu;
    launch_init(&emu, c, spec_for(c, cfg[k].target, cfg[k].warps));
    ck_assert_msg(run(&emu, c, teeny_spec_emulate) == 0, "%s %s w%d: emulator failed",
                  c->kernel, cfg[k].target, cfg[k].warps);
    for (int b = 0; b < ref.nbufs; b++)
      ck_assert_msg(memcmp(emu.bufs[b], ref.bufs[b], ref.bytes[b]) == 0,
                    "%s %s w%d: buffer %d differs from the interpreter's", c->kernel,
                    cfg[k].target, cfg[k].warps, b);
    launch_close(&emu);
  }
  launch_close(&ref);
}

/* ---- jumps.c: break, continue, return in loops ---------------------------------- */

static void check_scalar_exits(const lang_case *c, void *const *bufs) {
  const int32_t *out = bufs[1];
  int n = (int)c->scalars[0];
  for (int pid = 0; pid < (int)c->grid; pid++) {
    int first = -1;
    for (int i = 0; i < n; i++)
      if ((float)i > (float)pid * 2.5f) {
        first = i;
        break;
      }
    ck_assert_int_eq(out[pid], first);
    int count = 0, k = 0;
    while (k < n) {
      k++;
      if (k % 3 == 0)
        continue;
      if (k > 10 + pid)
        break;
      count += k;
    }
    ck_assert_int_eq(out[8 + pid], count);
    int d = 0, steps = 0;
    do {
      d += 2;
      if (d % 4 == 0)
        continue;
      steps++;
      if (steps == pid + 2)
        break;
    } while (d < 40);
    ck_assert_int_eq(out[16 + pid], d * 100 + steps);
    int pairs = 0;
    for (int a = 0; a < 6; a++)
      for (int b = 0; b < 6; b++) {
        if (b > a)
          break;
        if ((a + b + pid) % 2 == 0)
          continue;
        pairs += a * 10 + b;
      }
    ck_assert_int_eq(out[24 + pid], pairs);
    int m = pid + 1, trips = 0;
    for (;;) {
      trips++;
      if (m == 1)
        break;
      m = m % 2 == 0 ? m / 2 : 3 * m + 1;
    }
    ck_assert_int_eq(out[32 + pid], trips);
  }
}

#define BLK 16

static void check_tile_exits(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1];
  int rows = (int)c->scalars[0];
  for (int pid = 0; pid < (int)c->grid; pid++) {
    float acc[BLK] = {0};
    for (int r = 0; r < rows; r++) {
      if (r % 2 == 1)
        continue;
      float s = 0;
      for (int e = 0; e < BLK; e++) {
        acc[e] += x[r * BLK + e];
        s += acc[e];
      }
      if (s > (float)(pid * 40))
        break;
    }
    for (int e = 0; e < BLK; e++)
      ck_assert_float_eq(out[pid * 2 * BLK + e], acc[e]);
    int hit = -1;
    for (int r = 0; r < rows && hit < 0; r++) {
      float s = 0;
      for (int e = 0; e < BLK; e++)
        s += x[r * BLK + e];
      if (s > (float)pid * 30.0f)
        hit = r;
    }
    for (int e = 0; e < BLK; e++)
      ck_assert_float_eq(out[(pid * 2 + 1) * BLK + e],
                         hit < 0 ? -1.0f : x[hit * BLK + e] * (float)hit);
  }
}

static void check_early_kernel_return(const lang_case *c, void *const *bufs) {
  const int32_t *out = bufs[1];
  int n = (int)c->scalars[0];
  for (int pid = 0; pid < (int)c->grid; pid++) {
    int stop = pid + 3 < n ? pid + 3 : n;
    for (int i = 0; i < 15; i++)
      ck_assert_int_eq(out[pid * 16 + i], i < stop ? i + 1 : 0);
    ck_assert_int_eq(out[pid * 16 + 15], pid + 3 < n ? 0 : -7);
  }
}

static const lang_case jump_cases[] = {
    {"jumps", "scalar_exits", "BLOCK=16", 4, {20, 40}, {F_IOTA, F_ZERO}, {20},
     check_scalar_exits},
    {"jumps", "tile_exits", "BLOCK=16", 4, {6 * BLK, 8 * BLK}, {F_IOTA, F_ZERO}, {6},
     check_tile_exits},
    {"jumps", "early_kernel_return", "BLOCK=16", 4, {5, 64}, {F_IOTA, F_ZERO}, {5},
     check_early_kernel_return},
};

START_TEST(jumps) { run_case(&jump_cases[_i]); }
END_TEST

/* ---- shadow.c: user names shadow builtins ------------------------------------------ */

static void check_shadow(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1];
  for (unsigned pid = 0; pid < c->grid; pid++) {
    float m = -INFINITY;
    for (int e = 0; e < BLK; e++)
      m = fmaxf(m, x[pid * BLK + e] * 2.0f + 1.0f);
    for (int e = 0; e < BLK; e++)
      ck_assert_float_eq(out[pid * BLK + e], x[pid * BLK + e] * 2.0f + 1.0f + m);
  }
}

static const lang_case shadow_case = {"shadow", "shadow", "sum=16", 3, {3 * BLK, 3 * BLK},
                                      {F_RANDOM, F_ZERO}, {0}, check_shadow};

START_TEST(shadow) { run_case(&shadow_case); }
END_TEST

/* ---- consts.c: typed compile-time constants --------------------------------------- */

static void check_typed_consts(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *y = bufs[1];
  const int64_t *z = bufs[2];
  const double *w = bufs[3];
  const int8_t *q = bufs[4];
  const float eps = 1e-5f;
  for (long i = 0; i < c->n[0]; i++) {
    float r = x[i] / sqrtf(x[i] * x[i] + eps) + 1.0f; /* IS_CAUSAL=true */
    ck_assert_msg(y[i] == r + 0.375f, "y[%ld] = %.9g, want %.9g", i, y[i], r + 0.375f);
    ck_assert_int_eq(z[i], (int64_t)i * INT64_C(5000000000) + 0xf0);
    ck_assert_double_eq(w[i], (double)x[i] * 0.1);
    ck_assert_int_eq(q[i], (int8_t)(i + 16));
  }
}

static const lang_case const_case = {
    "consts", "typed_consts",
    "BLOCK=16,EPS=1e-5,SCALE=0.1,IS_CAUSAL=true,BIG=5000000000,HALF=0.375,MASK=0xf0f0f0f0", 4,
    {4 * BLK, 4 * BLK, 4 * BLK, 4 * BLK, 4 * BLK}, {F_RANDOM, F_ZERO, F_ZERO, F_ZERO, F_ZERO},
    {0}, check_typed_consts};

START_TEST(typed_consts) { run_case(&const_case); }
END_TEST

/* ---- the suite ------------------------------------------------------------------------ */

static Suite *lang_suite(void) {
  Suite *s = suite_create("lang");
  TCase *tc = tcase_create("jumps");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, jumps, 0, (int)NELEM(jump_cases));
  tcase_add_test(tc, shadow);
  tcase_add_test(tc, typed_consts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(lang_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
