/*
 * tests/unit/test_attention.c — examples/kernels/attention.c (flash
 * attention forward) on the CPU: the interpreter and the code generator on
 * the host emulator, each against a plain-C reference computed in double
 * (softmax(sm_scale Q K^T) V with the causal mask, and the row's
 * log2-sum-exp), and against each other.  Sequence lengths are odd, so
 * both stages of the kernel run with partial blocks; the four tensors have
 * different memory layouts ([Z, H, N, D], [Z, N, H, D], padded rows; D
 * contiguous, as the kernel requires), so the strides really are
 * parameters.  Configurations cover wgmma (sm_90a,
 * 64-wide operands), mma.sync (sm_80, and small tiles on sm_90a), head_dim
 * 64 and 128, f16 and bf16, causal and not.
 *
 * The seed is printed; TEENY_TEST_SEED=N repeats a run.
 */
#include <check.h>
#include <time.h>
#include <unistd.h>

#include "kernel_util.h"

static ku_rng rng;

/* One configuration of the kernel and of the problem. */
typedef struct att_case {
  const char *dt;      /* "f16" or "bf16" */
  int head_dim, bm, bn, causal;
  const char *target;  /* "sm_90a", "sm_80" */
  int warps;
  int Z, H, N;         /* batch, heads, sequence length */
  int stages;          /* num_stages (0: the code generator's) */
} att_case;

/* A [Z, H, N, D] tensor in memory: element (z, h, n, d) at
 * z*sz + h*sh + n*sn + d*sd, `elems` elements in all. */
typedef struct tensor {
  long sz, sh, sn, sd, elems;
} tensor;

/* Layout k of four: [Z,H,N,D] packed, [Z,N,H,D] packed, [Z,H,N,D] with
 * rows padded by 8 elements, [Z,N,H,D] with rows padded by 3 (misaligned
 * rows: the vector accesses fall back to element accesses). */
static tensor layout_of(int k, int Z, int H, int N, int D) {
  tensor t;
  switch (k % 4) {
  case 0:
    t.sd = 1, t.sn = D, t.sh = (long)N * D, t.sz = (long)H * N * D;
    break;
  case 1:
    t.sd = 1, t.sh = D, t.sn = (long)H * D, t.sz = (long)N * H * D;
    break;
  case 2:
    t.sd = 1, t.sn = D + 8, t.sh = (long)N * (D + 8), t.sz = (long)H * N * (D + 8);
    break;
  default:
    t.sd = 1, t.sh = D + 3, t.sn = (long)H * (D + 3), t.sz = (long)N * H * (D + 3);
    break;
  }
  t.elems = t.sz * Z;
  return t;
}

static long at(const tensor *t, int z, int h, int n, int d) {
  return z * t->sz + h * t->sh + n * t->sn + d * t->sd;
}

static teeny_spec *spec_of(const att_case *c) {
  size_t len;
  char *src = ku_read_example("attention", &len);
  char bind[160];
  snprintf(bind, sizeof bind, "D=%s,HEAD_DIM=%d,BLOCK_M=%d,BLOCK_N=%d,CAUSAL=%d", c->dt,
           c->head_dim, c->bm, c->bn, c->causal);
  teeny_dtype_binding dts[1] = {{"D", c->dt}};
  teeny_const_binding cts[5] = {{"HEAD_DIM", c->head_dim}, {"BLOCK_M", c->bm},
                                {"BLOCK_N", c->bn}, {"CAUSAL", c->causal},
                                {TEENY_OPT_NUM_STAGES, c->stages}};
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.source_len = len;
  req.filename = "attention.c";
  req.kernel = "attention";
  req.dtypes = dts;
  req.ndtypes = 1;
  req.consts = cts;
  req.nconsts = c->stages ? 5 : 4;
  req.target = c->target;
  req.num_warps = c->warps;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = teeny_spec_create(&req, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "spec [%s]: %s", bind, teeny_strerror(rc));
  teeny_diags_close(&d);
  free(src);
  return s;
}

/* The reference: o[z,h,m,:] and lse[z*H+h, m] in double from the
 * (already rounded) inputs. */
static void reference(const att_case *c, teeny_dtype dt, const void *q, const void *k,
                      const void *v, const tensor *tq, const tensor *tk, const tensor *tv,
                      double scale, double *o, double *lse) {
  int N = c->N, D = c->head_dim;
  double *s = malloc(sizeof *s * (size_t)N);
  for (int z = 0; z < c->Z; z++)
    for (int h = 0; h < c->H; h++)
      for (int m = 0; m < N; m++) {
        int last = c->causal ? m : N - 1;
        double mx = -INFINITY;
        for (int n = 0; n <= last; n++) {
          double acc = 0;
          for (int d = 0; d < D; d++)
            acc += ku_get(q, dt, (size_t)at(tq, z, h, m, d)) * ku_get(k, dt, (size_t)at(tk, z, h, n, d));
          s[n] = acc * scale;
          mx = s[n] > mx ? s[n] : mx;
        }
        double den = 0;
        for (int n = 0; n <= last; n++)
          den += (s[n] = exp(s[n] - mx));
        long row = ((long)(z * c->H + h) * N + m) * D;
        for (int d = 0; d < D; d++) {
          double acc = 0;
          for (int n = 0; n <= last; n++)
            acc += s[n] * ku_get(v, dt, (size_t)at(tv, z, h, n, d));
          o[row + d] = acc / den;
        }
        lse[(long)(z * c->H + h) * N + m] = (mx + log(den)) / log(2.0);
      }
  free(s);
}

static void *random_tensor(teeny_dtype dt, const tensor *t) {
  void *p = malloc((size_t)t->elems * 2);
  for (long i = 0; i < t->elems; i++)
    ku_put(p, dt, (size_t)i, ku_uniform(&rng));
  return p;
}

static teeny_interp_arg ptr_arg(void *p, size_t bytes) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.data = p;
  a.bytes = bytes;
  return a;
}

static teeny_interp_arg int_arg(long v) {
  teeny_interp_arg a;
  memset(&a, 0, sizeof a);
  a.v.i = v;
  return a;
}

/* Run one engine on the inputs; *o_out and *lse_out get its results
 * (caller frees), for the reference and the cross-engine comparison. */
static void run_engine(const att_case *c, teeny_spec *s, bool emu, void *q, void *k, void *v,
                       const tensor *t4, double scale, float **lse_out, void **o_out) {
  const tensor *tq = &t4[0], *tk = &t4[1], *tv = &t4[2], *to = &t4[3];
  void *o = malloc((size_t)to->elems * 2);
  memset(o, 0xff, (size_t)to->elems * 2); /* NaN: every element must be written */
  long nl = (long)c->Z * c->H * c->N;
  float *lse = malloc(sizeof *lse * (size_t)nl);
  for (long i = 0; i < nl; i++)
    lse[i] = NAN;
  teeny_interp_arg a[20];
  int n = 0;
  a[n++] = ptr_arg(q, (size_t)tq->elems * 2);
  a[n++] = ptr_arg(k, (size_t)tk->elems * 2);
  a[n++] = ptr_arg(v, (size_t)tv->elems * 2);
  a[n++] = ptr_arg(o, (size_t)to->elems * 2);
  a[n++] = ptr_arg(lse, sizeof *lse * (size_t)nl);
  memset(&a[n], 0, sizeof a[n]);
  a[n++].v.f = scale;
  a[n++] = int_arg(c->H);
  a[n++] = int_arg(c->N);
  for (int i = 0; i < 4; i++) {
    a[n++] = int_arg(t4[i].sz);
    a[n++] = int_arg(t4[i].sh);
    a[n++] = int_arg(t4[i].sn);
  }
  unsigned grid[3] = {(unsigned)((c->N + c->bm - 1) / c->bm), (unsigned)(c->Z * c->H), 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = emu ? teeny_spec_emulate(s, grid, a, (size_t)n, &d)
               : teeny_spec_interpret(s, grid, a, (size_t)n, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "%s: %s", emu ? "emulator" : "interpreter", teeny_strerror(rc));
  teeny_diags_close(&d);
  *lse_out = lse;
  *o_out = o;
}

/* Worst errors of an engine's results against the reference. */
static void worst(const att_case *c, teeny_dtype dt, const tensor *to, const void *o,
                  const float *lse, const double *ro, const double *rl, double *eo, double *el) {
  *eo = *el = 0;
  for (int z = 0; z < c->Z; z++)
    for (int h = 0; h < c->H; h++)
      for (int m = 0; m < c->N; m++) {
        long row = (long)(z * c->H + h) * c->N + m;
        for (int d = 0; d < c->head_dim; d++) {
          double e = fabs(ku_get(o, dt, (size_t)at(to, z, h, m, d)) - ro[row * c->head_dim + d]);
          *eo = isnan(e) ? INFINITY : e > *eo ? e : *eo;
        }
        double e = fabs(lse[row] - rl[row]);
        *el = isnan(e) ? INFINITY : e > *el ? e : *el;
      }
}

static void check_case(const att_case *c, int layouts) {
  teeny_dtype dt = strcmp(c->dt, "f16") ? TEENY_DT_BF16 : TEENY_DT_F16;
  tensor t4[4];
  for (int i = 0; i < 4; i++)
    t4[i] = layout_of(layouts + i, c->Z, c->H, c->N, c->head_dim);
  void *q = random_tensor(dt, &t4[0]), *k = random_tensor(dt, &t4[1]);
  void *v = random_tensor(dt, &t4[2]);
  double scale = 1.5 / sqrt((double)c->head_dim); /* sharper than 1/sqrt(d): peaked rows */
  long nrow = (long)c->Z * c->H * c->N;
  double *ro = malloc(sizeof *ro * (size_t)(nrow * c->head_dim)), *rl = malloc(sizeof *rl * (size_t)nrow);
  reference(c, dt, q, k, v, &t4[0], &t4[1], &t4[2], scale, ro, rl);
  teeny_spec *s = spec_of(c);
  float *li, *le;
  void *oi, *oe;
  run_engine(c, s, false, q, k, v, t4, scale, &li, &oi);
  run_engine(c, s, true, q, k, v, t4, scale, &le, &oe);
  /* P is rounded to D before P V: about 2^-11 (f16) or 2^-8 (bf16)
   * relative per term, and the output is rounded to D */
  double tol = dt == TEENY_DT_F16 ? 4e-3 : 3e-2;
  double eoi, eli, eoe, ele;
  worst(c, dt, &t4[3], oi, li, ro, rl, &eoi, &eli);
  worst(c, dt, &t4[3], oe, le, ro, rl, &eoe, &ele);
  ck_assert_msg(eoi < tol && eli < 1e-3, "%s: interpreter: |o - ref| %g, |lse - ref| %g",
                teeny_spec_id(s), eoi, eli);
  ck_assert_msg(eoe < tol && ele < 1e-3, "%s %s w%d: emulator: |o - ref| %g, |lse - ref| %g",
                teeny_spec_id(s), c->target, c->warps, eoe, ele);
  /* the two engines differ only by summation order and exp2's last bits */
  for (long i = 0; i < t4[3].elems; i++) {
    double x = ku_get(oi, dt, (size_t)i), y = ku_get(oe, dt, (size_t)i);
    ck_assert_msg((isnan(x) && isnan(y)) || fabs(x - y) <= tol / 2,
                  "%s %s w%d: o[%ld] %g (interpreter) vs %g (emulator)", teeny_spec_id(s),
                  c->target, c->warps, i, x, y);
  }
  teeny_spec_destroy(s);
  free(q), free(k), free(v), free(ro), free(rl), free(li), free(le), free(oi), free(oe);
}

static const att_case cases[] = {
    /* wgmma in both dots: 64-wide tiles, one warpgroup */
    {"f16", 64, 64, 64, 0, "sm_90a", 4, 1, 2, 77, 0},
    {"bf16", 64, 64, 64, 1, "sm_90a", 4, 2, 1, 77, 0},
    /* the benchmark's tiles: 128 x 64, two warpgroups, head_dim 64 and 128 */
    {"f16", 64, 128, 64, 1, "sm_90a", 8, 1, 2, 150, 0},
    {"bf16", 128, 128, 64, 0, "sm_90a", 8, 1, 1, 201, 0},
    {"f16", 128, 128, 64, 1, "sm_90a", 8, 2, 1, 133, 0},
    /* mma.sync: sm_80, and tiles too small for wgmma */
    {"f16", 64, 64, 64, 1, "sm_80", 4, 1, 2, 77, 0},
    {"bf16", 128, 128, 64, 0, "sm_80", 8, 1, 1, 70, 0},
    {"f16", 32, 32, 32, 1, "sm_90a", 4, 1, 2, 45, 0},
    {"f16", 64, 64, 32, 0, "sm_90a", 4, 1, 1, 5, 0},
    /* a multiple of the blocks: stage 2 has nothing to do (non-causal) */
    {"f16", 64, 64, 64, 0, "sm_90a", 4, 1, 1, 128, 0},
    /* the author's pipeline depth; head_dim 128 with BLOCK_N 128 */
    {"f16", 64, 64, 64, 1, "sm_90a", 4, 1, 2, 77, 2},
    {"bf16", 64, 128, 64, 0, "sm_90a", 8, 1, 1, 300, 5},
    {"f16", 128, 128, 128, 1, "sm_90a", 8, 1, 1, 200, 0},
};

START_TEST(attention_matches) {
  check_case(&cases[_i], _i);
}
END_TEST

/* PTX of case c (its stages field: num_stages); rc, and *shared, *ptx set
 * on success (ptx malloc'd), else the first diagnostic in msg. */
static int ptx_of(const att_case *c, int *shared, char **ptx, char *msg, size_t msgsz) {
  teeny_spec *s = spec_of(c);
  teeny_artifact *a = NULL;
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_compile(s, TEENY_EMIT_PTX, &a, &d);
  msg[0] = '\0';
  if (d.n)
    snprintf(msg, msgsz, "%s", d.v[0].message);
  if (!rc) {
    *shared = a->shared_bytes;
    *ptx = malloc(a->ptx_len + 1);
    memcpy(*ptx, a->ptx, a->ptx_len);
    (*ptx)[a->ptx_len] = '\0';
  }
  teeny_artifact_destroy(a);
  teeny_diags_close(&d);
  teeny_spec_destroy(s);
  return rc;
}

/* num_stages: 3 is the code generator's own depth for this loop (no wgmma
 * in flight: P V reads A from registers), so the PTX is the same; each
 * stage more costs one K and one V tile; a depth that does not fit is an
 * error naming the bytes. */
START_TEST(num_stages_depth) {
  char msg[512], *p0, *p3, *p4;
  int sh0, sh3, sh4;
  att_case c = {"f16", 64, 128, 64, 0, "sm_90a", 8, 1, 1, 1, 0};
  ck_assert_int_eq(ptx_of(&c, &sh0, &p0, msg, sizeof msg), 0);
  c.stages = 3;
  ck_assert_int_eq(ptx_of(&c, &sh3, &p3, msg, sizeof msg), 0);
  c.stages = 4;
  ck_assert_int_eq(ptx_of(&c, &sh4, &p4, msg, sizeof msg), 0);
  ck_assert_int_eq(sh0, sh3);
  ck_assert_str_eq(p0, p3);
  ck_assert_int_eq(sh4 - sh3, 2 * 64 * 64 * 2); /* K^T [64, 64] and V [64, 64], f16 */
  ck_assert_ptr_nonnull(strstr(p4, "cp.async.wait_group 2;"));
  free(p0);
  free(p3);
  free(p4);
  att_case big = {"f16", 128, 128, 128, 0, "sm_90a", 8, 1, 1, 1, 6};
  char *pb = NULL;
  int shb;
  ck_assert_int_ne(ptx_of(&big, &shb, &pb, msg, sizeof msg), 0);
  ck_assert_msg(strstr(msg, "num_stages=6 needs 393216 bytes of shared memory") != NULL,
                "diagnostic: %s", msg);
  free(pb);
}
END_TEST

int main(void) {
  const char *seed_env = getenv("TEENY_TEST_SEED");
  uint64_t seed = seed_env ? strtoull(seed_env, NULL, 10)
                           : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
  if (!seed)
    seed = 1;
  rng.s = seed;
  printf("test_attention: seed %llu (TEENY_TEST_SEED to repeat)\n", (unsigned long long)seed);
  Suite *s = suite_create("attention");
  TCase *tc = tcase_create("engines-vs-reference");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, attention_matches, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_test(tc, num_stages_depth);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
