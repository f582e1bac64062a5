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
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "kernel_util.h"

#define MAXP 16
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
  double tol;              /* float buffers: emulator vs interpreter, relative
                              and absolute (reductions in another order);
                              0: bit for bit */
};

/* ---- running ------------------------------------------------------------------ */

typedef struct launch {
  teeny_spec *spec;
  size_t np;                 /* parameters */
  teeny_interp_arg args[MAXP];
  void *bufs[MAXP];          /* by pointer argument */
  size_t bytes[MAXP];
  teeny_dtype dts[MAXP];     /* their dtypes */
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
  char rel[256]; /* tests/lang/FILE.c, or a path from the source tree's root */
  snprintf(rel, sizeof rel, strchr(c->file, '/') ? "%s.c" : "tests/lang/%s.c", c->file);
  size_t len;
  char *src = ku_read_source(rel, &len);
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = ku_spec_for(src, len, rel, c->kernel, c->bindings, target, warps, &s, &d);
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
    if (p->kind == TEENY_PARAM_TENSORMAP) { /* host engines read the parameters after it */
      static unsigned char zeros[128];
      l->args[i].data = zeros;
      l->args[i].bytes = sizeof zeros;
    } else if (p->kind == TEENY_PARAM_POINTER) {
      int b = l->nbufs++;
      l->dts[b] = p->dtype;
      l->bytes[b] = (size_t)c->n[b] * (size_t)teeny_dtype_size(p->dtype);
      l->bufs[b] = calloc(1, l->bytes[b] + 8);
      for (long e = 0; e < c->n[b]; e++) {
        double v = initial(c->fill[b], e, &rng);
        if (teeny__dt_is_fp8(p->dtype)) /* rounded to nearest, as a cast does */
          ((uint8_t *)l->bufs[b])[e] = teeny__fp8_bits(p->dtype, v);
        else
          ku_put(l->bufs[b], p->dtype, (size_t)e, v);
      }
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

/* Buffer b of two runs: bit for bit, or f32 within tol. */
static bool same_buffer(const launch *a, const launch *b, int k, double tol) {
  teeny_dtype dt = a->dts[k];
  if (tol == 0 || (dt != TEENY_DT_F32 && dt != TEENY_DT_F64 && dt != TEENY_DT_F16 &&
                    dt != TEENY_DT_BF16))
    return memcmp(a->bufs[k], b->bufs[k], a->bytes[k]) == 0;
  size_t es = dt == TEENY_DT_F64 ? 8 : dt == TEENY_DT_F32 ? 4 : 2;
  for (size_t i = 0; i < a->bytes[k] / es; i++) {
    double x = ku_get(a->bufs[k], dt, i), y = ku_get(b->bufs[k], dt, i);
    if (fabs(x - y) > tol * (1 + fabs(x))) {
      fprintf(stderr, "element %zu: %.9g vs %.9g\n", i, x, y);
      return false;
    }
  }
  return true;
}

/* run(), with what the kernel writes to stderr (device_print's lines)
 * returned in *text (caller frees). */
static int run_captured(launch *l, const lang_case *c, runner fn, char **text) {
  fflush(stderr);
  int saved = dup(2);
  FILE *tmp = tmpfile();
  ck_assert(saved >= 0 && tmp);
  dup2(fileno(tmp), 2);
  int rc = run(l, c, fn);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  long n = ftell(tmp);
  *text = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
  rewind(tmp);
  if (n > 0)
    ck_assert_int_eq(fread(*text, 1, (size_t)n, tmp), (size_t)n);
  fclose(tmp);
  return rc;
}

static int cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* text's device_print lines (those starting "pid ("; a sanitizer may add
 * its own), sorted, joined again: the GPU's threads print in an order of
 * their own, but every line must still be there once. */
static char *sorted_lines(const char *text) {
  char *copy = strdup(text);
  size_t n = 0, cap = 16;
  char **v = malloc(sizeof *v * cap);
  for (char *t = strtok(copy, "\n"); t; t = strtok(NULL, "\n")) {
    if (strncmp(t, "pid (", 5) != 0)
      continue;
    if (n == cap)
      v = realloc(v, sizeof *v * (cap *= 2));
    v[n++] = t;
  }
  qsort(v, n, sizeof *v, cmp_lines);
  char *out = calloc(1, strlen(text) + 2);
  for (size_t i = 0; i < n; i++) {
    strcat(out, v[i]);
    strcat(out, "\n");
  }
  free(v);
  free(copy);
  return out;
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
      ck_assert_msg(same_buffer(&ref, &emu, b, c->tol),
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
     check_scalar_exits, 0},
    {"jumps", "tile_exits", "BLOCK=16", 4, {6 * BLK, 8 * BLK}, {F_IOTA, F_ZERO}, {6},
     check_tile_exits, 0},
    {"jumps", "early_kernel_return", "BLOCK=16", 4, {5, 64}, {F_IOTA, F_ZERO}, {5},
     check_early_kernel_return, 0},
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
                                      {F_RANDOM, F_ZERO}, {0}, check_shadow, 0};

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
    {0}, check_typed_consts, 0};

START_TEST(typed_consts) { run_case(&const_case); }
END_TEST

/* ---- debug.c: introspection, static_assert, device_print, device_assert ----------- */

static void check_introspect(const lang_case *c, void *const *bufs) {
  const float *out = bufs[1];
  bool f16 = strstr(c->bindings, "D=f16") != NULL;
  ck_assert_float_eq(out[0], f16 ? 5000 + 100 + 20 : 200 + 40 + 1);
  for (int e = 0; e < BLK; e++) /* x is iota */
    ck_assert_float_eq(out[1 + e], f16 ? ku_f16_to_f32(ku_f32_to_f16(sqrtf((float)e)))
                                       : 2.0f * (float)e);
}

static const lang_case introspect_cases[] = {
    {"debug", "introspect", "D=f16,BLOCK=16", 1, {BLK, BLK + 1}, {F_IOTA, F_ZERO}, {0},
     check_introspect, 0},
    {"debug", "introspect", "D=i32,BLOCK=16", 1, {BLK, BLK + 1}, {F_IOTA, F_ZERO}, {0},
     check_introspect, 0},
};

START_TEST(introspect) { run_case(&introspect_cases[_i]); }
END_TEST

/* got == want, or a failure naming the first line that differs. */
static void same_text(const char *got, const char *want, const char *who) {
  size_t i = 0, line = 1;
  while (got[i] && got[i] == want[i])
    line += got[i++] == '\n';
  if (!got[i] && !want[i])
    return;
  size_t from = i;
  while (from > 0 && want[from - 1] != '\n')
    from--;
  ck_abort_msg("%s: line %zu differs: got \"%.80s\", want \"%.80s\"", who, line, got + from,
               want + from);
}

/* The lines `prints` must give, in the interpreter's order. */
static char *expected_prints(int grid, int n) {
  char *out = calloc(1, 1 << 16), *p = out;
  for (int pid = 0; pid < grid; pid++) {
    for (int e = 0; e < 4; e++) {
      int o = pid * 4 + e;
      float v = o < n ? (float)o : -1.0f;
      p += sprintf(p, "pid (%d, 0, 0) idx (%d) x[%d] = %8.3f as f16 %g\n", pid, e, o, v,
                   (double)v);
    }
    p += sprintf(p, "pid (%d, 0, 0) pid %d of %d: n=%u, big=%llx, 100%%\n", pid, pid, grid,
                 (unsigned)n, (unsigned long long)n << 33);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 4; j++) {
        int m = i * 10 + j;
        p += sprintf(p, "pid (%d, 0, 0) idx (%d, %d) m=%3d neg=%i small=%d flag=%d\n", pid, i,
                     j, m, -m, m - 20, m > 12);
      }
    p += sprintf(p, "pid (%d, 0, 0) third %.10f\n", pid, (double)pid / 3.0);
  }
  return out;
}

static const lang_case prints_case = {"debug", "prints", "BLOCK=4", 3, {10}, {F_IOTA}, {10},
                                      NULL, 0};

START_TEST(prints) {
  const lang_case *c = &prints_case;
  launch ref;
  launch_init(&ref, c, spec_for(c, NULL, 4));
  char *got;
  ck_assert_int_eq(run_captured(&ref, c, teeny_spec_interpret, &got), 0);
  char *want = expected_prints(3, 10);
  same_text(got, want, "interpreter");
  char *sorted = sorted_lines(got);
  static const struct {
    const char *target;
    int warps;
  } cfg[] = {{"sm_90a", 4}, {"sm_80", 1}};
  for (size_t k = 0; k < NELEM(cfg); k++) {
    launch emu;
    launch_init(&emu, c, spec_for(c, cfg[k].target, cfg[k].warps));
    char *e;
    ck_assert_int_eq(run_captured(&emu, c, teeny_spec_emulate, &e), 0);
    char *es = sorted_lines(e);
    same_text(es, sorted, cfg[k].target);
    free(es);
    free(e);
    launch_close(&emu);
  }
  free(sorted);
  free(want);
  free(got);
  launch_close(&ref);
}
END_TEST

/* device_assert: without the debug option nothing is checked (x holds
 * negative values, and the kernel runs to the end); with it, both the
 * interpreter and the emulator stop with the failing values. */
START_TEST(asserts) {
  lang_case c = {"debug", "checks", "BLOCK=16", 2, {20}, {F_SMALL}, {20}, NULL, 0};
  run_case(&c); /* off: interpreter and emulator agree, buffers updated */
  c.bindings = "BLOCK=16,teeny.debug=1";
  c.fill[0] = F_IOTA;
  run_case(&c); /* on, and true everywhere */
  c.fill[0] = F_SMALL;
  const char *want = "device_assert failed: x[0] = -3 is negative (pid (0, 0, 0) idx (0))";
  runner fns[2] = {teeny_spec_interpret, teeny_spec_emulate};
  for (int k = 0; k < 2; k++) {
    launch l;
    launch_init(&l, &c, spec_for(&c, NULL, 4));
    unsigned grid[3] = {2, 1, 1};
    teeny_diags d;
    teeny_diags_init(&d);
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2); /* the GPU-style line the emulator prints */
    int rc = fns[k](l.spec, grid, l.args, l.np, &d);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
    ck_assert_int_eq(rc, TEENY_E_RUNTIME);
    ck_assert_uint_ge(d.nerrors, 1);
    ck_assert_msg(strstr(d.v[0].message, want), "%s: %s", k ? "emulator" : "interpreter",
                  d.v[0].message);
    ck_assert_int_eq(d.v[0].line, 61);
    teeny_diags_close(&d);
    launch_close(&l);
  }
}
END_TEST

/* ---- tuples.c: structs as tuples ------------------------------------------------------ */

static void check_row_stats(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1];
  int n = (int)c->scalars[0];
  for (unsigned r = 0; r < c->grid; r++) {
    const float *v = x + r * (unsigned)n;
    double mean = 0, var = 0;
    int arg = 0;
    for (int i = 0; i < n; i++) {
      mean += v[i] / (double)n;
      if (v[i] > v[arg])
        arg = i;
    }
    for (int i = 0; i < n; i++)
      var += (v[i] - mean) * (v[i] - mean) / n;
    ck_assert_double_eq_tol(out[r * 4], mean, 1e-6);
    ck_assert_double_eq_tol(out[r * 4 + 1], var, 1e-6);
    ck_assert_float_eq(out[r * 4 + 2], v[arg] * 10.0f);
    ck_assert_float_eq(out[r * 4 + 3], (float)arg);
  }
}

static void check_online_softmax(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1];
  int n = (int)c->scalars[0];
  for (unsigned r = 0; r < c->grid; r++) {
    const float *v = x + r * (unsigned)n;
    double m = -INFINITY, l = 0;
    for (int i = 0; i < n; i++)
      m = fmax(m, v[i]);
    for (int i = 0; i < n; i++)
      l += exp(v[i] - m);
    ck_assert_float_eq(out[r * 3], (float)m);
    ck_assert_double_eq_tol(out[r * 3 + 1], l, 1e-5 * l);
    ck_assert_float_eq(out[r * 3 + 2], (float)n);
  }
}

static void check_running_argmax(const lang_case *c, void *const *bufs) {
  const int32_t *x = bufs[0], *out = bufs[1];
  int best = 0, first = -1;
  for (int i = 0; i < (int)c->n[0]; i++) {
    if (x[i] >= x[best])
      best = i;
    if (first < 0 && x[i] > 2)
      first = i;
    ck_assert_int_eq(out[i], x[best]);
    ck_assert_int_eq(out[c->n[0] + i], best);
  }
  ck_assert_int_ge(first, 0); /* x is i % 7 - 3: 3 at i = 6 */
  ck_assert_int_eq(out[2 * c->n[0]], x[first]);
  ck_assert_int_eq(out[2 * c->n[0] + 1], first);
  ck_assert_int_eq(out[2 * c->n[0] + 2], -1);
}

static const lang_case tuple_cases[] = {
    {"tuples", "row_stats", "BLOCK=16", 3, {36, 12}, {F_RANDOM, F_ZERO}, {12},
     check_row_stats, 1e-5},
    {"tuples", "online_softmax", "BLOCK=16", 2, {100, 6}, {F_RANDOM, F_ZERO}, {50},
     check_online_softmax, 1e-5},
    {"tuples", "running_argmax", "BLOCK=16", 1, {16, 35}, {F_SMALL, F_ZERO}, {0},
     check_running_argmax, 0},
};

START_TEST(tuples) { run_case(&tuple_cases[_i]); }
END_TEST

/* join, interleave, cat, ravel: every output element is one input element,
 * bit for bit (so one check serves every dtype). */
static size_t binding_size(const lang_case *c) {
  return strstr(c->bindings, "D=f32") || strstr(c->bindings, "D=i32") ? 4
         : strstr(c->bindings, "D=i16") || strstr(c->bindings, "D=f16") ? 2
         : strstr(c->bindings, "D=i8")                                ? 1
         : strstr(c->bindings, "D=f64") || strstr(c->bindings, "D=i64") ? 8
                                                                       : 2;
}

static void check_joins(const lang_case *c, void *const *bufs) {
  size_t es = binding_size(c);
  long B = c->n[0] / c->grid;
  const char *x = bufs[0], *y = bufs[1], *out = bufs[2];
  for (unsigned p = 0; p < c->grid; p++) {
    const char *a = x + es * (size_t)(p * B), *b = y + es * (size_t)(p * B);
    const char *o = out + es * (size_t)(p * 11 * B);
#define SAME(at, src, j) \
  ck_assert_msg(memcmp(o + es * (size_t)(at), (src) + es * (size_t)(j), es) == 0, \
                "program %u: out[%ld] is not %s[%ld]", p, (long)(at), #src, (long)(j))
    for (long i = 0; i < B; i++) {
      SAME(2 * i, a, i);                /* join(a, b) */
      SAME(2 * i + 1, b, i);
      SAME(2 * B + 2 * i, b, i);        /* interleave(b, a) */
      SAME(2 * B + 2 * i + 1, a, i);
      SAME(4 * B + i, a, i);            /* cat(a, b) */
      SAME(5 * B + i, b, i);
      SAME(6 * B + i, b, i);            /* cat of [B/4, 4] tiles: b's rows, then a's */
      SAME(7 * B + i, a, i);
      SAME(8 * B + (i % 4) * (B / 4) + i / 4, b, i); /* ravel(trans(b as [B/4, 4])) */
      SAME(9 * B + 2 * i, a, i);        /* split(join(b, a)), interleaved back */
      SAME(9 * B + 2 * i + 1, b, i);
    }
#undef SAME
  }
}

static const lang_case join_cases[] = {
    {"shapes", "joins", "D=f32,BLOCK=16", 3, {48, 48, 11 * 48}, {F_RANDOM, F_RANDOM, F_ZERO}, {0},
     check_joins, 0},
    {"shapes", "joins", "D=bf16,BLOCK=32", 2, {64, 64, 11 * 64}, {F_RANDOM, F_SMALL, F_ZERO}, {0},
     check_joins, 0},
    {"shapes", "joins", "D=i8,BLOCK=64", 1, {64, 64, 11 * 64}, {F_SMALL, F_IOTA, F_ZERO}, {0},
     check_joins, 0},
};

START_TEST(joins) { run_case(&join_cases[_i]); }
END_TEST

/* gather and flip: every output element is one source element (bit for
 * bit) or 0.  ix is F_RANDOM, lx F_SMALL (i % 7 - 3: some negative). */
static void check_gathers(const lang_case *c, void *const *bufs) {
  size_t es = binding_size(c);
  long B = c->n[0] / c->grid;
  const char *x = bufs[0], *out = bufs[3];
  const int32_t *ix = bufs[1];
  const int64_t *lx = bufs[2];
  static const char zero[8];
  for (unsigned pg = 0; pg < c->grid; pg++) {
    const char *a = x + es * (size_t)(pg * B), *o = out + es * (size_t)(pg * 8 * B);
#define IS(at, ptr) \
  ck_assert_msg(memcmp(o + es * (size_t)(at), (ptr), es) == 0, "program %u: out[%ld] is wrong", pg, \
                (long)(at))
#define EL(i) (a + es * (size_t)(i))
    for (long i = 0; i < B; i++) {
      IS(i, ix[i] >= 0 && ix[i] < B ? EL(ix[i]) : zero);
      IS(B + i, EL(B - 1 - i));
      long row = i / 4, col = i % 4;
      IS(2 * B + i, EL((B / 4 - 1 - row) * 4 + col));
      IS(3 * B + i, EL(row * 4 + 3 - col));
      IS(4 * B + i, lx[i] >= 0 && lx[i] < 4 ? EL(row * 4 + lx[i]) : zero);
    }
    for (long p = 0; p < B / 2; p++)
      for (long col = 0; col < 4; col++) {
        long k = p + col - 2;
        IS(5 * B + p * 4 + col, k >= 0 && k < B / 4 ? EL(k * 4 + col) : zero);
      }
    for (long i = 0; i < B / 2; i++)
      IS(7 * B + i, EL(B - 1 - 2 * i));
#undef IS
#undef EL
  }
}

static const lang_case gather_cases[] = {
    {"gather", "gathers", "D=f32,BLOCK=64", 2, {128, 64, 64, 8 * 128}, {F_RANDOM, F_RANDOM, F_SMALL, F_ZERO},
     {0}, check_gathers, 0},
    {"gather", "gathers", "D=i16,BLOCK=16", 3, {48, 16, 16, 8 * 48}, {F_IOTA, F_SMALL, F_SMALL, F_ZERO},
     {0}, check_gathers, 0},
};

START_TEST(gathers) { run_case(&gather_cases[_i]); }
END_TEST

/* sort: o1 is a permutation of the NaN/zero-laced input, ascending with
 * NaNs last; o2's rows of y descending; o3 the bools false first. */
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void check_sorts(const lang_case *c, void *const *bufs) {
  long B = c->n[0];
  const float *x = bufs[0], *o1 = bufs[2];
  const int16_t *y = bufs[1], *o2 = bufs[3];
  const uint8_t *o3 = bufs[4];
  uint32_t *want = malloc(sizeof *want * (size_t)B), *got = malloc(sizeof *got * (size_t)B);
  long falses = 0;
  for (long i = 0; i < B; i++) {
    float v = i % 7 == 3 ? NAN : x[i];
    v = i % 5 == 1 ? -0.0f : i % 5 == 2 ? 0.0f : v;
    float o = o1[i];
    if (isnan(v)) /* any NaN: the kernel's 0/0 has its own sign */
      v = NAN;
    if (isnan(o))
      o = NAN;
    memcpy(&want[i], &v, 4);
    memcpy(&got[i], &o, 4);
    falses += !(x[i] > 0.5f);
  }
  qsort(want, (size_t)B, 4, cmp_u32);
  qsort(got, (size_t)B, 4, cmp_u32);
  ck_assert_msg(memcmp(want, got, 4 * (size_t)B) == 0, "sort(v) is not a permutation of v");
  long nan_from = B;
  for (long i = 0; i < B; i++)
    if (isnan(o1[i]) && nan_from == B)
      nan_from = i;
  for (long i = 0; i < B; i++) {
    if (i >= nan_from)
      ck_assert_msg(isnan(o1[i]), "a number after a NaN at %ld", i);
    else if (i > 0)
      ck_assert_msg(o1[i - 1] <= o1[i], "o1[%ld] = %g > o1[%ld] = %g", i - 1, o1[i - 1], i, o1[i]);
    ck_assert_int_eq(o3[i], i >= falses);
  }
  for (long r = 0; r < B / 8; r++)
    for (long j = 1; j < 8; j++)
      ck_assert_msg(o2[r * 8 + j - 1] >= o2[r * 8 + j], "row %ld not descending", r);
  int16_t rows[8];
  for (long r = 0; r < B / 8; r++) { /* each row keeps its values */
    long sum_in = 0, sum_out = 0;
    memcpy(rows, y + r * 8, sizeof rows);
    for (int j = 0; j < 8; j++)
      sum_in += rows[j], sum_out += o2[r * 8 + j];
    ck_assert_int_eq(sum_in, sum_out);
  }
  free(want);
  free(got);
}

static const lang_case sort_cases[] = {
    {"sorts", "sorts", "BLOCK=64", 1, {64, 64, 64, 64, 64}, {F_RANDOM, F_SMALL, F_ZERO, F_ZERO, F_ZERO},
     {0}, check_sorts, 0},
    {"sorts", "sorts", "BLOCK=256", 1, {256, 256, 256, 256, 256},
     {F_RANDOM, F_IOTA, F_ZERO, F_ZERO, F_ZERO}, {0}, check_sorts, 0},
};

START_TEST(sorts) { run_case(&sort_cases[_i]); }
END_TEST

/* histogram: x is i % 7 - 3 (F_SMALL), y (u8) iota, z (i64) i % 7 - 3. */
static void check_counts(const lang_case *c, void *const *bufs) {
  const int32_t *x = bufs[0], *out = bufs[3];
  const uint8_t *y = bufs[1];
  const int64_t *z = bufs[2];
  int bins = strstr(c->bindings, "BINS=16") ? 16 : 64;
  long n = (long)c->scalars[0], total = (long)c->grid * (c->n[0] / c->grid);
  long want[3][64] = {{0}};
  for (long i = 0; i < total; i++) {
    if (i < n && x[i] >= 0 && x[i] < bins)
      want[0][x[i]]++;
    if (i < n && y[i] < bins)
      want[1][y[i]]++;
    int64_t w = (i < n ? z[i] : 0) * 4294967296LL + i % 5;
    if (w >= 0 && w < bins)
      want[2][w]++;
  }
  for (int k = 0; k < 3; k++)
    for (int b = 0; b < bins; b++)
      ck_assert_msg(out[k * bins + b] == want[k][b], "histogram %d bin %d: %d, not %ld", k, b,
                    out[k * bins + b], want[k][b]);
}

static const lang_case hist_cases[] = {
    {"hist", "counts", "BLOCK=128,BINS=16", 3, {384, 384, 384, 48}, {F_SMALL, F_IOTA, F_SMALL, F_ZERO},
     {300}, check_counts, 0},
    {"hist", "counts", "BLOCK=16,BINS=64", 5, {80, 80, 80, 192}, {F_SMALL, F_IOTA, F_SMALL, F_ZERO},
     {77}, check_counts, 0},
};

START_TEST(histograms) { run_case(&hist_cases[_i]); }
END_TEST

/* Tutorial 09's persistent matmul (examples/kernels/matmul_persistent.c):
 * three programs walk 12 output tiles, a k loop (cp.async into wgmma on
 * sm_90a) nested in the tile loop; M, N, K not multiples of the blocks.
 * Against float64 sums, and the emulator against the interpreter. */
static void check_persistent(const lang_case *c, void *const *bufs) {
  (void)c;
  const uint16_t *a = bufs[0], *b = bufs[1], *out = bufs[2];
  enum { M = 200, N = 136, K = 100 };
  double err = 0, norm = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++)
        s += (double)ku_f16_to_f32(a[i * K + k]) * ku_f16_to_f32(b[k * N + j]);
      double got = ku_f16_to_f32(out[i * N + j]);
      err = fmax(err, fabs(got - s));
      norm = fmax(norm, fabs(s));
    }
  ck_assert_msg(err <= 2e-3 * norm, "persistent matmul: max error %g (max %g)", err, norm);
}

static const lang_case persistent_case = {
    "examples/kernels/matmul_persistent", "matmul_persistent",
    "D=f16,BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,GROUP_M=2,NUM_SMS=3", 3, {200 * 100, 100 * 136, 200 * 136},
    {F_RANDOM, F_RANDOM, F_ZERO}, {200, 136, 100, 100, 1, 136, 1, 136, 1}, check_persistent, 2e-3};

START_TEST(persistent_matmul) { run_case(&persistent_case); }
END_TEST

/* Tutorial 07 (examples/kernels/libdevice_asin.c): asin of 1000 values in
 * [-1, 1) on 4 programs of 256 (the last one masked), against C's asin:
 * f32 and f16 within half an ulp and a little (rounded once from f64), f64
 * within 4 ulp (docs/dsl.md §5). */
static void check_asin(const lang_case *c, void *const *bufs) {
  bool f64 = strstr(c->bindings, "D=f64") != NULL, f16 = strstr(c->bindings, "D=f16") != NULL;
  for (int i = 0; i < 1024; i++) {
    double x = f64 ? ((const double *)bufs[0])[i] : f16 ? ku_f16_to_f32(((const uint16_t *)bufs[0])[i])
                                                     : ((const float *)bufs[0])[i];
    double y = f64 ? ((const double *)bufs[1])[i] : f16 ? ku_f16_to_f32(((const uint16_t *)bufs[1])[i])
                                                     : ((const float *)bufs[1])[i];
    if (i >= 1000) { /* masked off: untouched */
      ck_assert_msg(y == 0, "%s: y[%d] = %g past n", c->bindings, i, y);
      continue;
    }
    double want = asin(x), ulp = ldexp(1.0, (int)floor(log2(fmax(fabs(want), 1e-30))) -
                                           (f64 ? 52 : f16 ? 10 : 23));
    ck_assert_msg(fabs(y - want) <= (f64 ? 4.0 : 0.5001) * ulp, "%s: asin(%.17g) = %.17g, want %.17g",
                  c->bindings, x, y, want);
  }
}

static const lang_case asin_cases[] = {
    {"examples/kernels/libdevice_asin", "asin_kernel", "D=f32,BLOCK_SIZE=256", 4, {1024, 1024},
     {F_RANDOM, F_ZERO}, {1000}, check_asin, 1e-7},
    {"examples/kernels/libdevice_asin", "asin_kernel", "D=f64,BLOCK_SIZE=256", 4, {1024, 1024},
     {F_RANDOM, F_ZERO}, {1000}, check_asin, 1e-15},
    {"examples/kernels/libdevice_asin", "asin_kernel", "D=f16,BLOCK_SIZE=128", 8, {1024, 1024},
     {F_RANDOM, F_ZERO}, {1000}, check_asin, 0},
};

START_TEST(libdevice_asin) { run_case(&asin_cases[_i]); }
END_TEST


/* Tutorial 08's grouped matmul through pointer tables
 * (examples/kernels/grouped_matmul.c): grouped_tables fills the tables on
 * the same engine from offsets into one pool (an interpreter address is
 * its parameter's window, the emulator's a host pointer, so each engine
 * makes its own), then grouped_matmul runs three groups of odd sizes on 4
 * programs.  The interpreter against float64, the emulator within 2e-3. */
enum { GM_GROUPS = 3 };
static const int gm_size[GM_GROUPS][3] = {{70, 40, 50}, {128, 64, 32}, {33, 100, 70}};

static long gm_layout(int32_t *offs, int32_t *sizes, int32_t *lds) {
  long at = 0;
  for (int g = 0; g < GM_GROUPS; g++) {
    int M = gm_size[g][0], N = gm_size[g][1], K = gm_size[g][2];
    offs[3 * g] = (int32_t)at, at += (long)M * K;
    offs[3 * g + 1] = (int32_t)at, at += (long)K * N;
    offs[3 * g + 2] = (int32_t)at, at += (long)M * N;
    sizes[3 * g] = M, sizes[3 * g + 1] = N, sizes[3 * g + 2] = K;
    lds[3 * g] = K, lds[3 * g + 1] = N, lds[3 * g + 2] = N;
  }
  return at;
}

/* One engine: tables, then the products; returns the pool (caller frees). */
static uint16_t *gm_run(const char *target, int warps) {
  int32_t offs[3 * GM_GROUPS], sizes[3 * GM_GROUPS], lds[3 * GM_GROUPS];
  long n = gm_layout(offs, sizes, lds);
  lang_case tc = {"examples/kernels/grouped_matmul", "grouped_tables", "", 1,
                  {n, 3 * GM_GROUPS, 64, 64, 64}, {F_RANDOM, F_ZERO, F_ZERO, F_ZERO, F_ZERO},
                  {GM_GROUPS}, NULL, 0};
  lang_case mc = {"examples/kernels/grouped_matmul", "grouped_matmul",
                  "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,NUM_SMS=4", 4,
                  {n, 64, 64, 64, 3 * GM_GROUPS, 3 * GM_GROUPS},
                  {F_RANDOM, F_ZERO, F_ZERO, F_ZERO, F_ZERO, F_ZERO}, {GM_GROUPS}, NULL, 0};
  runner fn = target ? teeny_spec_emulate : teeny_spec_interpret;
  launch t, m;
  launch_init(&t, &tc, spec_for(&tc, target, warps));
  memcpy(t.bufs[1], offs, sizeof offs);
  ck_assert_msg(run(&t, &tc, fn) == 0, "grouped_tables on %s", target ? target : "the interpreter");
  launch_init(&m, &mc, spec_for(&mc, target, warps));
  m.args[0].data = t.bufs[0]; /* one pool: the tables point into t's */
  for (int b = 1; b <= 3; b++)
    memcpy(m.bufs[b], t.bufs[b + 1], 64 * sizeof(int64_t));
  memcpy(m.bufs[4], sizes, sizeof sizes);
  memcpy(m.bufs[5], lds, sizeof lds);
  ck_assert_msg(run(&m, &mc, fn) == 0, "grouped_matmul on %s", target ? target : "the interpreter");
  uint16_t *pool = malloc(sizeof *pool * (size_t)n);
  memcpy(pool, t.bufs[0], sizeof *pool * (size_t)n);
  launch_close(&m);
  launch_close(&t);
  return pool;
}

START_TEST(grouped_matmul) {
  int32_t offs[3 * GM_GROUPS], sizes[3 * GM_GROUPS], lds[3 * GM_GROUPS];
  long n = gm_layout(offs, sizes, lds);
  uint16_t *ref = gm_run(NULL, 4);
  for (int g = 0; g < GM_GROUPS; g++) {
    int M = sizes[3 * g], N = sizes[3 * g + 1], K = sizes[3 * g + 2];
    const uint16_t *A = ref + offs[3 * g], *B = ref + offs[3 * g + 1], *C = ref + offs[3 * g + 2];
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double s = 0;
        for (int k = 0; k < K; k++)
          s += (double)ku_f16_to_f32(A[i * K + k]) * ku_f16_to_f32(B[k * N + j]);
        double got = ku_f16_to_f32(C[i * N + j]);
        ck_assert_msg(fabs(got - s) <= 2e-3 * (1 + fabs(s)), "group %d C[%d][%d] = %g, not %g", g,
                      i, j, got, s);
      }
  }
  static const struct {
    const char *target;
    int warps;
  } cfg[] = {{"sm_90a", 4}, {"sm_80", 4}, {"sm_90a", 8}};
  for (size_t k = 0; k < NELEM(cfg); k++) {
    uint16_t *emu = gm_run(cfg[k].target, cfg[k].warps);
    for (long i = 0; i < n; i++) {
      double x = ku_f16_to_f32(ref[i]), y = ku_f16_to_f32(emu[i]);
      ck_assert_msg(fabs(x - y) <= 2e-3 * (1 + fabs(x)), "%s w%d: pool[%ld] %g, interpreter %g",
                    cfg[k].target, cfg[k].warps, i, y, x);
    }
    free(emu);
  }
  free(ref);
}
END_TEST

/* Tutorial 06's fused attention (examples/kernels/attention_tuple.c: a struct
 * returned by its inner loop, typed-constant stages), emulator against
 * interpreter; test_kernels checks the interpreter against float64. */
static const lang_case attention_case = {
    "examples/kernels/attention_tuple", "attn_fwd", "D=f16,HEAD_DIM=16,BLOCK_M=32,BLOCK_N=16,STAGE=3",
    2, {37 * 16, 37 * 16, 37 * 16, 37 * 16, 37}, {F_RANDOM, F_RANDOM, F_RANDOM, F_ZERO, F_ZERO},
    {0.25, 37}, NULL, 2e-3};

START_TEST(attention) { run_case(&attention_case); }
END_TEST

/* ---- ranks.c: tiles of rank 3 and 4 -------------------------------------------------- */

/* The dtype bound to D, and the value of a const generic, in c's bindings. */
static teeny_dtype bound_dtype(const lang_case *c) {
  char name[16] = {0};
  const char *d = strstr(c->bindings, "D=");
  ck_assert(d);
  sscanf(d + 2, "%15[a-z0-9]", name);
  return teeny_dtype_parse(name);
}

static long bound_const(const lang_case *c, const char *g) {
  char key[16];
  snprintf(key, sizeof key, "%s=", g);
  for (const char *p = c->bindings; (p = strstr(p, key)); p++)
    if (p == c->bindings || p[-1] == ',')
      return atol(p + strlen(key));
  ck_abort_msg("%s: no binding of %s", c->bindings, g);
  return 0;
}

typedef struct cube_dims {
  long A, B, C, n;
} cube_dims;

/* v[a][b][c] of program pid, as a double (exact for every D used). */
static double cube_v(const lang_case *c, const cube_dims *q, const void *x, unsigned pid, long a,
                     long b, long cc) {
  return ku_get(x, bound_dtype(c), (size_t)(pid * q->n + (a * q->B + b) * q->C + cc));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void check_cube(const lang_case *c, void *const *bufs) {
  cube_dims q = {bound_const(c, "A"), bound_const(c, "B"), bound_const(c, "C"), 0};
  q.n = q.A * q.B * q.C;
  teeny_dtype dt = bound_dtype(c);
  const float *sums = bufs[2];
  const int32_t *idx = bufs[3];
  double *row = malloc(sizeof *row * (size_t)q.C);
  for (unsigned pid = 0; pid < c->grid; pid++) {
    size_t o = (size_t)pid * 15 * (size_t)q.n;
#define OUT(seg, i) ku_get(bufs[1], dt, o + (size_t)((seg) * q.n + (i)))
#define V(a, b, cc) cube_v(c, &q, bufs[0], pid, a, b, cc)
#define EQ(got, want, what)                                                                   \
  ck_assert_msg((got) == (want), "program %u %s at [%ld, %ld, %ld]: %g, not %g", pid, what, a, b, \
                cc, (double)(got), (double)(want))
    for (long a = 0; a < q.A; a++)
      for (long b = 0; b < q.B; b++) {
        for (long cc = 0; cc < q.C; cc++) {
          double v = V(a, b, cc);
          long r = a * q.B + b; /* row of p = reshape(v, A * B, C) */
          long rq = q.A * q.B - 1 - r; /* q = flip(p, 0) */
          double qv = V(rq / q.B, rq % q.B, cc);
          EQ(OUT(0, (cc * q.A + a) * q.B + b), v, "permute(v, 2, 0, 1)");
          EQ(OUT(1, (b * q.A + a) * q.C + cc), v, "trans(v, 1, 0, 2)");
          EQ(OUT(2, (a * q.B + b) * q.C + cc), V(a, q.B - 1 - b, cc), "flip(v, 1)");
          EQ(OUT(3, (a * q.B + b) * q.C + cc), V(a, b, (cc * 3 + b) % q.C), "gather");
          EQ(OUT(5, 2 * (r * q.C + cc)), v, "join(p, q)[.., 0]");
          EQ(OUT(5, 2 * (r * q.C + cc) + 1), qv, "join(p, q)[.., 1]");
          EQ(OUT(7, r * 2 * q.C + 2 * cc), v, "interleave(p, q) even");
          EQ(OUT(7, r * 2 * q.C + 2 * cc + 1), qv, "interleave(p, q) odd");
          EQ(OUT(9, r * q.C + cc), qv, "split(join(p, q)).b");
          EQ(OUT(10, (a * q.B + b) * q.C + cc), v, "cat, first half");
          EQ(OUT(10, ((q.A + a) * q.B + b) * q.C + cc), V(q.A - 1 - a, b, cc), "cat, second half");
          long k = cc % 2, c2 = cc / 2; /* permute(reshape(v, A, B, C/2, 2), 3, 0, 1, 2) */
          EQ(OUT(12, ((k * q.A + a) * q.B + b) * (q.C / 2) + c2), v, "4-D permute");
          double m = V(a, 0, cc), s = 0;
          for (long j = 0; j < q.B; j++)
            m = fmax(m, V(a, j, cc));
          for (long j = 0; j <= b; j++)
            s += V(a, j, cc);
          double want13 = v + m, got13 = OUT(13, (a * q.B + b) * q.C + cc);
          ck_assert_msg(fabs(got13 - want13) <= 1e-2 * (1 + fabs(want13)),
                        "program %u v + max(v, 1) at [%ld, %ld, %ld]: %g, not %g", pid, a, b, cc,
                        got13, want13);
          double got14 = OUT(14, (a * q.B + b) * q.C + cc);
          ck_assert_msg(fabs(got14 - s) <= 1e-2 * (1 + fabs(s)),
                        "program %u cumsum(v, 1) at [%ld, %ld, %ld]: %g, not %g", pid, a, b, cc,
                        got14, s);
          row[cc] = v;
        }
        qsort(row, (size_t)q.C, sizeof *row, cmp_double);
        for (long cc = 0; cc < q.C; cc++)
          EQ(OUT(4, (a * q.B + b) * q.C + cc), row[cc], "sort(v)");
      }
    /* sums: sum(v, 0) [B, C], sum(v, 1) [A, C], sum(v, 2) [A, B], sum(v),
     * sum(reshape(v, A, B, C/2, 2), 2) [A, B, 2] */
    const float *sv = sums + (size_t)pid * (size_t)(q.B * q.C + q.A * q.C + 3 * q.A * q.B + 1);
    double total = 0;
    for (long a = 0; a < q.A; a++)
      for (long b = 0; b < q.B; b++)
        for (long cc = 0; cc < q.C; cc++)
          total += V(a, b, cc);
#define NEAR(got, want, what)                                                             \
  ck_assert_msg(fabs((got) - (want)) <= 1e-4 * (1 + fabs(want)), "program %u %s: %g, not %g", \
                pid, what, (double)(got), (double)(want))
    for (long b = 0; b < q.B; b++)
      for (long cc = 0; cc < q.C; cc++) {
        double t = 0;
        for (long a = 0; a < q.A; a++)
          t += V(a, b, cc);
        NEAR(sv[b * q.C + cc], t, "sum(v, 0)");
      }
    for (long a = 0; a < q.A; a++)
      for (long cc = 0; cc < q.C; cc++) {
        double t = 0;
        for (long b = 0; b < q.B; b++)
          t += V(a, b, cc);
        NEAR(sv[q.B * q.C + a * q.C + cc], t, "sum(v, 1)");
      }
    for (long a = 0; a < q.A; a++)
      for (long b = 0; b < q.B; b++) {
        double t = 0, even = 0, odd = 0;
        for (long cc = 0; cc < q.C; cc++) {
          t += V(a, b, cc);
          *(cc % 2 ? &odd : &even) += V(a, b, cc);
        }
        long base = q.B * q.C + q.A * q.C;
        NEAR(sv[base + a * q.B + b], t, "sum(v, 2)");
        NEAR(sv[base + q.A * q.B + 1 + 2 * (a * q.B + b)], even, "4-D sum, axis 2, even");
        NEAR(sv[base + q.A * q.B + 1 + 2 * (a * q.B + b) + 1], odd, "4-D sum, axis 2, odd");
      }
    NEAR(sv[q.B * q.C + q.A * q.C + q.A * q.B], total, "sum(v)");
    /* argmax(v, 1) [A, C], argmin(v, 0) [B, C]: the first index of the best */
    const int32_t *iv = idx + (size_t)pid * (size_t)(q.A * q.C + q.B * q.C);
    for (long a = 0; a < q.A; a++)
      for (long cc = 0; cc < q.C; cc++) {
        long best = 0;
        for (long b = 1; b < q.B; b++)
          if (V(a, b, cc) > V(a, best, cc))
            best = b;
        ck_assert_int_eq(iv[a * q.C + cc], best);
      }
    for (long b = 0; b < q.B; b++)
      for (long cc = 0; cc < q.C; cc++) {
        long best = 0;
        for (long a = 1; a < q.A; a++)
          if (V(a, b, cc) < V(best, b, cc))
            best = a;
        ck_assert_int_eq(iv[q.A * q.C + b * q.C + cc], best);
      }
#undef OUT
#undef V
#undef EQ
#undef NEAR
  }
  free(row);
}

/* c[0] = a . b and c[1] = a . trans(bt) + c[0], per batch, against float64. */
static void check_batched_dot(const lang_case *c, void *const *bufs) {
  long BT = bound_const(c, "BT"), M = bound_const(c, "M"), K = bound_const(c, "K"),
       N = bound_const(c, "N");
  teeny_dtype dt = bound_dtype(c);
  const float *out = bufs[3];
  for (long t = 0; t < BT; t++)
    for (long i = 0; i < M; i++)
      for (long j = 0; j < N; j++) {
        double s = 0, u = 0;
        for (long k = 0; k < K; k++) {
          double x = ku_get(bufs[0], dt, (size_t)((t * M + i) * K + k));
          s += x * ku_get(bufs[1], dt, (size_t)((t * K + k) * N + j));
          u += x * ku_get(bufs[2], dt, (size_t)((t * N + j) * K + k));
        }
        double got0 = out[(t * M + i) * N + j], got1 = out[BT * M * N + (t * M + i) * N + j];
        ck_assert_msg(fabs(got0 - s) <= 2e-3 * (1 + fabs(s)), "batch %ld [%ld, %ld]: %g, not %g", t,
                      i, j, got0, s);
        ck_assert_msg(fabs(got1 - (s + u)) <= 4e-3 * (1 + fabs(s + u)),
                      "batch %ld [%ld, %ld] of the second dot: %g, not %g", t, i, j, got1, s + u);
      }
}

static const lang_case rank_cases[] = {
    {"ranks", "cube", "D=f32,A=2,B=4,C=8", 2, {128, 15 * 128, 2 * (32 + 16 + 24 + 1), 2 * (16 + 32)},
     {F_RANDOM, F_ZERO, F_ZERO, F_ZERO}, {0}, check_cube, 1e-5},
    {"ranks", "cube", "D=i16,A=4,B=2,C=32", 1, {256, 15 * 256, 64 + 128 + 24 + 1, 128 + 64},
     {F_SMALL, F_ZERO, F_ZERO, F_ZERO}, {0}, check_cube, 0},
    {"ranks", "cube", "D=bf16,A=8,B=16,C=4", 1, {512, 15 * 512, 64 + 32 + 384 + 1, 32 + 64},
     {F_RANDOM, F_ZERO, F_ZERO, F_ZERO}, {0}, check_cube, 1e-2},
    {"ranks", "batched_dot", "D=f16,BT=2,M=16,K=16,N=32", 1, {512, 1024, 1024, 2048},
     {F_RANDOM, F_RANDOM, F_RANDOM, F_ZERO}, {0}, check_batched_dot, 0},
    {"ranks", "batched_dot", "D=f32,BT=4,M=16,K=32,N=16", 1, {2048, 2048, 2048, 2048},
     {F_RANDOM, F_RANDOM, F_RANDOM, F_ZERO}, {0}, check_batched_dot, 0},
};

START_TEST(ranks) { run_case(&rank_cases[_i]); }
END_TEST

/* ---- descs.c: tensor descriptors and block pointers ------------------------------------ */

enum { DM = 50, DN = 70 }; /* desc_copy's x [DM, DN], blocks [16, 32] */

/* desc_copy and desc_param: x [M, N] (the first two scalars). */
static void check_desc_copy(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1], *sums = bufs[2], *sh = bufs[3];
  const int M = (int)c->scalars[0], N = (int)c->scalars[1];
  enum { BM = 16, BN = 32 };
  const int GN = (N + BN - 1) / BN;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      ck_assert_msg(out[j * M + i] == 2 * x[i * N + j] + 1, "out[%d][%d]", j, i);
  for (unsigned p = 0; p < c->grid; p++) {
    int pm = (int)p / GN, pn = (int)p % GN;
    double s = 0;
    for (int i = pm * BM; i < pm * BM + BM && i < M; i++)
      for (int j = pn * BN; j < pn * BN + BN && j < N; j++)
        s += x[i * N + j];
    ck_assert_msg(fabs(sums[p] - s) <= 1e-4 * (1 + fabs(s)), "block %u: sum %g, not %g", p, sums[p], s);
    for (int r = 0; r < BM; r++)
      for (int q = 0; q < BN; q++) {
        int i = pm * BM - 3 + r, j = pn * BN + 5 + q;
        float want = i >= 0 && i < M && j < N ? x[i * N + j] : 0.0f;
        ck_assert_msg(sh[p * BM * BN + r * BN + q] == want, "block %u at (%d, %d): %g, not %g", p,
                      i, j, sh[p * BM * BN + r * BN + q], want);
      }
  }
}

static void check_desc_ranks(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1], *cube = bufs[2];
  long n = c->n[0];
  int A = (int)c->scalars[1], B = (int)c->scalars[2], C = (int)c->scalars[3];
  for (long i = 0; i < n; i++)
    ck_assert_msg(out[i] == x[i] + 1, "out[%ld]", i);
  for (unsigned p = 0; p < c->grid; p++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 8; k++) {
          int a = 2 + i, b = 3 + j, cc = 16 + k;
          float want = a < A && b < B && cc < C ? x[(a * B + b) * C + cc] : 0.0f;
          ck_assert_msg(cube[p * 64 + (i * 4 + j) * 8 + k] == want, "cube [%d, %d, %d]", i, j, k);
        }
}

static void check_desc_helpers(const lang_case *c, void *const *bufs) {
  const float *x = bufs[0], *out = bufs[1];
  for (long i = 0; i < c->n[0]; i++)
    ck_assert_msg(out[i] == 2 * x[i], "out[%ld]: %g, not %g", i, out[i], 2 * x[i]);
}

/* bp_matmul (b column-major: b(k, n) at n * K + k) and td_matmul (b
 * row-major), c [M, N] f16, against float64. */
static void check_desc_matmul(const lang_case *c, void *const *bufs) {
  const uint16_t *a = bufs[0], *b = bufs[1], *out = bufs[2];
  int M = (int)c->scalars[0], N = (int)c->scalars[1], K = (int)c->scalars[2];
  bool colmajor = strcmp(c->kernel, "bp_matmul") == 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++)
        s += (double)ku_f16_to_f32(a[i * K + k]) *
             ku_f16_to_f32(b[colmajor ? j * K + k : k * N + j]);
      double got = ku_f16_to_f32(out[i * N + j]);
      ck_assert_msg(fabs(got - s) <= 4e-3 * (1 + fabs(s)), "%s c[%d][%d]: %g, not %g", c->kernel,
                    i, j, got, s);
    }
}

static const lang_case desc_cases[] = {
    {"descs", "desc_copy", "D=f32,BM=16,BN=32", 12, {DM * DN, DM * DN, 12, 12 * 16 * 32},
     {F_RANDOM, F_ZERO, F_ZERO, F_ZERO}, {DM, DN}, check_desc_copy, 1e-5},
    /* descriptors as parameters: rows of 280 bytes (no tensormap: the
     * pointer lowering) and of 288 (src's loads through the TMA on sm_90a;
     * the emulator's copy) */
    {"descs", "desc_param", "D=f32,BM=16,BN=32", 12, {DM * DN, DM * DN, 12, 12 * 16 * 32},
     {F_RANDOM, F_ZERO, F_ZERO, F_ZERO}, {DM, DN, DN, DN, DM, DM, 3}, check_desc_copy, 1e-5},
    {"descs", "desc_param", "D=f32,BM=16,BN=32", 12, {DM * 72, DM * 72, 12, 12 * 16 * 32},
     {F_RANDOM, F_ZERO, F_ZERO, F_ZERO}, {DM, 72, 72, 72, DM, DM, 3}, check_desc_copy, 1e-5},
    /* and dst's rows too (208 bytes): its store through the TMA as well */
    {"descs", "desc_param", "D=f32,BM=16,BN=32", 12, {52 * 72, 52 * 72, 12, 12 * 16 * 32},
     {F_RANDOM, F_ZERO, F_ZERO, F_ZERO}, {52, 72, 72, 72, 52, 52, 3}, check_desc_copy, 1e-5},
    {"descs", "desc_ranks", "D=f32,BM=128", 3, {300, 300, 3 * 64}, {F_RANDOM, F_ZERO, F_ZERO},
     {300, 3, 5, 20}, check_desc_ranks, 0},
    {"descs", "desc_helpers", "D=f32,BM=64", 1, {333, 333}, {F_RANDOM, F_ZERO}, {333},
     check_desc_helpers, 0},
    {"descs", "bp_matmul", "D=f16,BM=32,BN=32,BK=16", 6, {70 * 45, 50 * 45, 70 * 50},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 50, 45, 45, 1, 1, 45}, check_desc_matmul, 4e-3},
    {"descs", "td_matmul", "D=f16,BM=32,BN=32,BK=16", 6, {70 * 45, 45 * 50, 70 * 50},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 50, 45}, check_desc_matmul, 4e-3},
    /* rows 16-byte aligned: the loop's versioned fast copy (ctrl.c recomputed_step) */
    {"descs", "bp_matmul", "D=f16,BM=32,BN=32,BK=32", 6, {70 * 96, 64 * 96, 70 * 64},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 64, 96, 96, 1, 1, 96}, check_desc_matmul, 4e-3},
    {"descs", "td_matmul", "D=f16,BM=32,BN=32,BK=32", 6, {70 * 96, 96 * 64, 70 * 64},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 64, 96}, check_desc_matmul, 4e-3},
    /* aligned rows, K = 104 not a multiple of BK: the fast copy's full and
     * partial tiles; td_window from k0 = -16 (over the start, rows still
     * 16-byte aligned: the fast copy, whose bounds test must send the
     * first window to the masked copy), -13 (misaligned: the plain loop)
     * and 0 */
    {"descs", "td_matmul", "D=f16,BM=32,BN=32,BK=32", 6, {70 * 104, 104 * 64, 70 * 64},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 64, 104}, check_desc_matmul, 4e-3},
    {"descs", "td_window", "D=f16,BM=32,BN=32,BK=32", 6, {70 * 104, 104 * 64, 70 * 64},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 64, 104, -13}, check_desc_matmul, 4e-3},
    {"descs", "td_window", "D=f16,BM=32,BN=32,BK=32", 6, {70 * 104, 104 * 64, 70 * 64},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 64, 104, -16}, check_desc_matmul, 4e-3},
    {"descs", "td_window", "D=f16,BM=32,BN=32,BK=32", 6, {70 * 104, 104 * 64, 70 * 64},
     {F_RANDOM, F_RANDOM, F_ZERO}, {70, 64, 104, 0}, check_desc_matmul, 4e-3},
};

START_TEST(descs) { run_case(&desc_cases[_i]); }
END_TEST

/* ---- examples/kernels/matmul_fp8.c: fp8 GEMM, B given K-major -------------------------- */

/* c [M, N] (f32 or f16) against float64 sums of the fp8 values: on
 * sm_90a with 4 warps the k loop runs cp.async into fp8 wgmma (k32), on
 * the other configurations the f16 tensor-core path; odd sizes mask every
 * edge, the aligned case takes the loop's unmasked fast copy. */
static void check_matmul_fp8(const lang_case *c, void *const *bufs) {
  const uint8_t *a = bufs[0], *bt = bufs[1];
  int M = (int)c->scalars[0], N = (int)c->scalars[1], K = (int)c->scalars[2];
  teeny_dtype da = strstr(c->bindings, "A=f8e5m2") ? TEENY_DT_F8E5M2 : TEENY_DT_F8E4M3;
  teeny_dtype db = strstr(c->bindings, "B=f8e5m2") ? TEENY_DT_F8E5M2 : TEENY_DT_F8E4M3;
  bool f16 = strstr(c->bindings, "O=f16") != NULL;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++)
        s += teeny__fp8_value(da, a[i * K + k]) * teeny__fp8_value(db, bt[j * K + k]);
      double got = f16 ? ku_f16_to_f32(((const uint16_t *)bufs[2])[i * N + j])
                       : ((const float *)bufs[2])[i * N + j];
      ck_assert_msg(fabs(got - s) <= (f16 ? 1e-3 : 1e-5) * (1 + fabs(s)), "%s c[%d][%d]: %g, not %g",
                    c->bindings, i, j, got, s);
    }
}

static const lang_case fp8_cases[] = {
    {"examples/kernels/matmul_fp8", "matmul_fp8",
     "A=f8e4m3,B=f8e5m2,O=f32,BLOCK_M=64,BLOCK_N=128,BLOCK_K=128,GROUP_M=2", 4,
     {100 * 300, 200 * 300, 100 * 200}, {F_RANDOM, F_RANDOM, F_ZERO}, {100, 200, 300, 300, 300, 200},
     check_matmul_fp8, 1e-5},
    {"examples/kernels/matmul_fp8", "matmul_fp8",
     "A=f8e5m2,B=f8e4m3,O=f16,BLOCK_M=64,BLOCK_N=128,BLOCK_K=128,GROUP_M=2", 4,
     {128 * 256, 256 * 256, 128 * 256}, {F_RANDOM, F_RANDOM, F_ZERO}, {128, 256, 256, 256, 256, 256},
     check_matmul_fp8, 2e-3},
    /* BLOCK_M 128 on one warpgroup: two wgmma rows per k step (MR 2) */
    {"examples/kernels/matmul_fp8", "matmul_fp8",
     "A=f8e4m3,B=f8e4m3,O=f32,BLOCK_M=128,BLOCK_N=128,BLOCK_K=128,GROUP_M=1", 4,
     {130 * 264, 135 * 264, 130 * 135}, {F_RANDOM, F_RANDOM, F_ZERO}, {130, 135, 264, 264, 264, 135},
     check_matmul_fp8, 1e-5},
};

START_TEST(matmul_fp8) { run_case(&fp8_cases[_i]); }
END_TEST

/* ---- the suite ------------------------------------------------------------------------ */

static Suite *lang_suite(void) {
  Suite *s = suite_create("lang");
  TCase *tc = tcase_create("jumps");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, jumps, 0, (int)NELEM(jump_cases));
  tcase_add_test(tc, shadow);
  tcase_add_loop_test(tc, joins, 0, (int)NELEM(join_cases));
  tcase_add_loop_test(tc, histograms, 0, (int)NELEM(hist_cases));
  tcase_add_loop_test(tc, gathers, 0, (int)NELEM(gather_cases));
  tcase_add_loop_test(tc, sorts, 0, (int)NELEM(sort_cases));
  tcase_add_test(tc, persistent_matmul);
  tcase_add_loop_test(tc, libdevice_asin, 0, 3);
  tcase_add_test(tc, grouped_matmul);
  tcase_add_test(tc, typed_consts);
  tcase_add_loop_test(tc, introspect, 0, (int)NELEM(introspect_cases));
  tcase_add_test(tc, prints);
  tcase_add_test(tc, asserts);
  tcase_add_loop_test(tc, tuples, 0, (int)NELEM(tuple_cases));
  tcase_add_test(tc, attention);
  tcase_add_loop_test(tc, ranks, 0, (int)NELEM(rank_cases));
  tcase_add_loop_test(tc, descs, 0, (int)NELEM(desc_cases));
  tcase_add_loop_test(tc, matmul_fp8, 0, (int)NELEM(fp8_cases));
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
