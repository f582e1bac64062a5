/*
 * tests/unit/kernel_run.c — the interpreter-against-emulator runner of
 * kernel_run.h.
 */
#include <check.h>

#include "kernel_run.h"

teeny_spec *kr_spec(const kcase *c, const char *target, int warps) {
  teeny_dtype_binding dts[8];
  teeny_const_binding cts[8];
  size_t nd = 0, nc = 0;
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s", c->bindings ? c->bindings : "");
  static char names[8][32], vals[8][32];
  int k = 0;
  for (char *t = strtok(tmp, ","); t && k < 8; t = strtok(NULL, ","), k++) {
    char *eq = strchr(t, '=');
    *eq = '\0';
    snprintf(names[k], 32, "%s", t);
    snprintf(vals[k], 32, "%s", eq + 1);
    char *end;
    long long v = strtoll(vals[k], &end, 10);
    if (*end == '\0')
      cts[nc++] = (teeny_const_binding){names[k], v};
    else
      dts[nd++] = (teeny_dtype_binding){names[k], vals[k]};
  }
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  req.source = c->src;
  req.source_len = strlen(c->src);
  req.filename = c->name;
  req.kernel = c->kernel;
  req.dtypes = dts;
  req.ndtypes = nd;
  req.consts = cts;
  req.nconsts = nc;
  req.target = target;
  req.num_warps = warps;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = teeny_spec_create(&req, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "%s: spec: %s", c->name, teeny_strerror(rc));
  teeny_diags_close(&d);
  return s;
}

size_t kr_esize(teeny_dtype dt) { return (size_t)teeny_dtype_size(dt); }

void kr_fill(void *p, teeny_dtype dt, long n, int fill) {
  if (fill == 3) { /* poison: a missed or an extra write shows */
    memset(p, 0xff, (size_t)n * kr_esize(dt));
    return;
  }
  for (long i = 0; i < n; i++) {
    double v = fill == 0 ? 0 : fill == 1 ? (double)i : (double)(i % 7 - 3);
    ku_put(p, dt, i, v);
  }
}

/* Run c in the interpreter and the emulator; out[i] gets the interpreter's
 * buffer of pointer parameter i (caller frees).  Fails on any difference. */
void kr_run_both(const kcase *c, const char *target, int warps, void **out) {
  kr_run_shifted(c, target, warps, 0, out);
}

void kr_run_shifted(const kcase *c, const char *target, int warps, int shift, void **out) {
  teeny_spec *s = kr_spec(c, target, warps);
  size_t np = teeny_spec_nparams(s);
  teeny_interp_arg ia[MAXP], ea[MAXP];
  void *ib[MAXP] = {0}, *eb[MAXP] = {0};
  size_t bytes[MAXP] = {0};
  int pi = 0, si = 0;
  for (size_t i = 0; i < np; i++) {
    const teeny_param *p = teeny_spec_param(s, i);
    memset(&ia[i], 0, sizeof ia[i]);
    if (p->kind == TEENY_PARAM_POINTER) {
      const buf_spec *b = &c->bufs[pi++];
      bytes[i] = (size_t)b->n * kr_esize(p->dtype);
      ib[i] = calloc(1, bytes[i] + 16);
      eb[i] = aligned_alloc(16, (bytes[i] + 16 + 64) & ~(size_t)15); /* + shift room */
      kr_fill(ib[i], p->dtype, b->n, b->fill);
      ia[i].data = ib[i];
      ia[i].bytes = bytes[i];
    } else if (p->dtype == TEENY_DT_F32 || p->dtype == TEENY_DT_F64) {
      ia[i].v.f = (double)c->scalars[si++];
    } else {
      ia[i].v.i = c->scalars[si++];
    }
    ea[i] = ia[i];
    if (eb[i]) {
      memset(eb[i], 0, (bytes[i] + 16 + 64) & ~(size_t)15);
      ea[i].data = (char *)eb[i] + (size_t)shift * kr_esize(p->dtype);
      memcpy(ea[i].data, ib[i], bytes[i]);
    }
  }
  unsigned grid[3] = {c->grid ? c->grid : 1, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_interpret(s, grid, ia, np, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "%s: interpreter: %s", c->name, teeny_strerror(rc));
  rc = teeny_spec_emulate(s, grid, ea, np, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "%s %s w%d: emulator: %s", c->name, target, warps, teeny_strerror(rc));
  teeny_diags_close(&d);
  int k = 0;
  for (size_t i = 0; i < np; i++) {
    if (!ib[i])
      continue;
    const teeny_param *p = teeny_spec_param(s, i);
    const char *ed = ea[i].data;
    for (long e = 0; e < (long)(bytes[i] / kr_esize(p->dtype)); e++) {
      double want = ku_get(ib[i], p->dtype, e), got = ku_get(ed, p->dtype, e);
      ck_assert_msg(memcmp((char *)ib[i] + e * kr_esize(p->dtype), ed + e * kr_esize(p->dtype),
                           kr_esize(p->dtype)) == 0,
                    "%s %s w%d: %s[%ld] = %g on the emulator, %g in the interpreter", c->name,
                    target, warps, p->name, e, got, want);
    }
    free(eb[i]);
    out[k++] = ib[i];
  }
  teeny_spec_destroy(s);
}

void kr_free_all(void **b) {
  for (int i = 0; i < MAXP; i++)
    free(b[i]);
}

/* Every target and warp count; check(out) on the interpreter's buffers. */
void kr_run_everywhere(const kcase *c, void (*check)(void **out)) {
  kr_run_everywhere_shifted(c, 0, check);
}

void kr_run_everywhere_shifted(const kcase *c, int shift, void (*check)(void **out)) {
  static const char *const targets[] = {"sm_90a", "sm_80"};
  static const int warps[] = {1, 4, 8};
  for (int t = 0; t < 2; t++)
    for (int w = 0; w < 3; w++) {
      void *out[MAXP] = {0};
      kr_run_shifted(c, targets[t], warps[w], shift, out);
      if (check)
        check(out);
      kr_free_all(out);
    }
}


/* c's artifact for target and warps with the emit flags (check-fails if
 * it does not compile). */
static teeny_artifact *kr_artifact(const kcase *c, const char *target, int warps,
                                   unsigned emit) {
  teeny_spec *s = kr_spec(c, target, warps);
  teeny_artifact *a = NULL;
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_compile(s, emit, &a, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "compile: %s", teeny_strerror(rc));
  teeny_diags_close(&d);
  teeny_spec_destroy(s);
  return a;
}

char *kr_text(const char *src, const char *kernel, const char *bindings, const char *target) {
  kcase c = {"ptx.c", src, kernel, bindings, 1, {{0, 0}}, {0}};
  teeny_artifact *a = kr_artifact(&c, target, 4, TEENY_EMIT_PTX | TEENY_EMIT_MLIR);
  size_t n = a->ptx_len + a->mlir_len + 2;
  char *text = malloc(n);
  snprintf(text, n, "%.*s\n%.*s", (int)a->ptx_len, a->ptx, (int)a->mlir_len, a->mlir);
  teeny_artifact_destroy(a);
  return text;
}

char *kr_ptx(const kcase *c, const char *target, int warps) {
  teeny_artifact *a = kr_artifact(c, target, warps, TEENY_EMIT_PTX);
  char *text = malloc(a->ptx_len + 1);
  memcpy(text, a->ptx, a->ptx_len);
  text[a->ptx_len] = '\0';
  teeny_artifact_destroy(a);
  return text;
}

int kr_count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
    n++;
  return n;
}
