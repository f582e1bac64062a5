/*
 * tests/diff/gen.c — the kernel generator's skeleton: from a seed, the
 * launch (target, num_warps, grid, odd problem sizes), the tile consts,
 * the index preamble (pid, offsets, edge masks), scalar parameters, the
 * sequence of statement patterns (gen_seg.c), and at the end the buffer
 * sizes and fills (the printer writes the signature from the parameters).  Also the generator's scope and
 * parameter bookkeeping and the feature names of --skip.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/diff/gen_int.h"

static const char *const feature_names[DFZ_F__COUNT] = {
    [DFZ_F_CAST] = "cast", [DFZ_F_2D] = "2d", [DFZ_F_SHAPE] = "shape",
    [DFZ_F_REDUCE] = "reduce", [DFZ_F_SCAN] = "scan", [DFZ_F_DOT] = "dot",
    [DFZ_F_DOT_F32] = "dot_f32", [DFZ_F_CTRL] = "ctrl", [DFZ_F_LOOP] = "loop",
    [DFZ_F_ATOMIC] = "atomic", [DFZ_F_ATOMIC_SHARED] = "atomic_shared",
    [DFZ_F_HELPER] = "helper", [DFZ_F_ORDER] = "order", [DFZ_F_UNIFORM] = "uniform",
    [DFZ_F_GATHER] = "gather", [DFZ_F_MATH] = "math", [DFZ_F_TANH] = "tanh",
    [DFZ_F_SPECIAL] = "special", [DFZ_F_LOCK] = "lock", [DFZ_F_FREM] = "frem",
    [DFZ_F_BARRIER] = "barrier", [DFZ_F_SEM] = "sem", [DFZ_F_FAST] = "fast", [DFZ_F_PREC] = "prec",
    [DFZ_F_HINT] = "hint", [DFZ_F_RANK3] = "rank3",
    [DFZ_F_DESC] = "desc"};

const char *dfz_feature_name(dfz_feature f) {
  return f >= 0 && f < DFZ_F__COUNT ? feature_names[f] : "?";
}

bool dfz_feature_parse(const char *list, unsigned *mask, const char **bad) {
  static char tok[64];
  *mask = 0;
  while (list && *list) {
    size_t n = strcspn(list, ",");
    snprintf(tok, sizeof tok, "%.*s", (int)n, list);
    int f;
    for (f = 0; f < DFZ_F__COUNT; f++)
      if (strcmp(tok, feature_names[f]) == 0)
        break;
    if (f == DFZ_F__COUNT) {
      if (bad)
        *bad = tok;
      return false;
    }
    *mask |= 1u << f;
    list += n;
    if (*list == ',')
      list++;
  }
  return true;
}

/* ---- scope and bookkeeping ----------------------------------------------------------------- */

char *g_name(gen *g, const char *prefix) {
  return dfz_printf(&g->p->arena, "%s%d", prefix, g->uniq++);
}

gvar *g_var_add(gen *g, const char *name, teeny_dtype dt, dfz_shape sh, dfz_fact f, bool fixed) {
  if (g->nvars == G_MAX_VARS)
    g->nvars--; /* drop the newest: the generator only loses a choice */
  gvar *v = &g->vars[g->nvars++];
  v->name = (char *)name;
  v->dt = dt;
  v->sh = sh;
  v->f = f;
  v->fixed = fixed;
  return v;
}

gvar *g_var_find(gen *g, const char *name) {
  for (int i = g->nvars - 1; i >= 0; i--)
    if (strcmp(g->vars[i].name, name) == 0)
      return &g->vars[i];
  return NULL;
}

void g_scope_push(gen *g) {
  if (g->nmarks < G_MAX_SCOPES)
    g->marks[g->nmarks++] = g->nvars;
}

void g_scope_pop(gen *g) {
  if (g->nmarks > 0)
    g->nvars = g->marks[--g->nmarks];
}

void g_emit(gen *g, dfz_stmt *s) { dfz_block_add(g->p, g->cur, s); }

bool g_on(gen *g, dfz_feature f) { return !(g->skip & (1u << f)); }

void g_use(gen *g, dfz_feature f) { g->used |= 1u << f; }

dfz_param *g_param_new(gen *g, const char *prefix, bool is_ptr, teeny_dtype dt) {
  dfz_case *m = &g->p->meta;
  if (m->nparams == DFZ_MAX_PARAMS)
    return NULL;
  dfz_param *pa = &m->params[m->nparams++];
  memset(pa, 0, sizeof *pa);
  snprintf(pa->name, sizeof pa->name, "%s%d", prefix, g->uniq++);
  pa->is_ptr = is_ptr;
  pa->dt = dt;
  return pa;
}

dfz_func *g_helper_new(gen *g, const char *name, const char *sig) {
  dfz_func *f = dfz_func_new(g->p, name, sig, false);
  int n = g->p->nfuncs;
  if (n >= 2 && g->p->funcs[n - 2]->is_kernel) { /* helpers come first */
    dfz_func *k = g->p->funcs[n - 2];
    g->p->funcs[n - 2] = f;
    g->p->funcs[n - 1] = k;
  }
  return f;
}

gbuf *g_buf_new(gen *g, const char *prefix, teeny_dtype dt, gbuf_role role) {
  if (g->nbufs == DFZ_MAX_PARAMS - 8 || g->p->meta.nparams >= DFZ_MAX_PARAMS - 1) {
    /* out of parameters: reuse the last buffer of this role and dtype if any */
    for (int i = g->nbufs - 1; i >= 0; i--)
      if (g->bufs[i].role == role && g->bufs[i].dt == dt && role == BR_IN &&
          !g->bufs[i].desc_base)
        return &g->bufs[i];
    g->nbufs--; /* the kernel would not compile; the generator test catches it */
  }
  dfz_param *pa = g_param_new(g, prefix, true, dt);
  gbuf *b = &g->bufs[g->nbufs++];
  memset(b, 0, sizeof *b);
  b->pi = (int)(pa - g->p->meta.params);
  b->dt = dt;
  b->role = role;
  b->cls = dfz_fact_any(dt);
  b->need = 1;
  pa->fill.kind = role == BR_OUT ? DFZ_FILL_POISON : DFZ_FILL_ZEROS;
  pa->fill.seed = dfz_next(&g->r) % 1000000;
  return b;
}

/* A random fill for an input of dtype dt, and the facts of its values. */
static void input_fill(gen *g, teeny_dtype dt, dfz_fill *f, dfz_fact *cls) {
  int k = dfz_below(&g->r, 100);
  if (dt == TEENY_DT_BOOL) {
    f->kind = DFZ_FILL_INTS;
    f->lo = 0;
    f->hi = 1;
  } else if (!dfz_is_float(dt)) {
    f->kind = k < 25 ? DFZ_FILL_BITS : DFZ_FILL_INTS;
    f->lo = dfz_is_signed(dt) ? (k < 70 ? -8 : -100) : 0;
    f->hi = k < 70 ? 15 : 100;
    if (f->hi > dfz_max_finite(dt))
      f->hi = dfz_max_finite(dt);
    if (f->lo < dfz_min_value(dt))
      f->lo = dfz_min_value(dt);
  } else if (g_on(g, DFZ_F_SPECIAL) && k < 7) {
    f->kind = DFZ_FILL_SPECIAL;
    g_use(g, DFZ_F_SPECIAL);
  } else if (g->approx && k < 60) {
    f->kind = DFZ_FILL_REALS;
    f->hi = k < 35 ? 2 : 10;
    f->lo = -f->hi;
  } else {
    f->kind = DFZ_FILL_INTS;
    f->lo = k < 80 ? -8 : -100;
    f->hi = -f->lo;
    if (dt == TEENY_DT_BF16 && f->hi > 100)
      f->hi = 100;
  }
  switch (f->kind) {
  case DFZ_FILL_INTS: *cls = dfz_fact_range(f->lo, f->hi, true); break;
  case DFZ_FILL_REALS: *cls = dfz_fact_range(f->lo, f->hi, false); break;
  case DFZ_FILL_BITS:
    *cls = dfz_is_float(dt) ? dfz_fact_range(-1e4, 1e4, false) : dfz_fact_any(dt);
    break;
  default: *cls = dfz_fact_any(dt); break;
  }
}

gbuf *g_buf_input(gen *g, teeny_dtype dt) {
  int cand[DFZ_MAX_PARAMS], n = 0;
  for (int i = 0; i < g->nbufs; i++)
    if (g->bufs[i].role == BR_IN && g->bufs[i].dt == dt && !g->bufs[i].desc_base)
      cand[n++] = i;
  if (n > 0 && (dfz_chance(&g->r, 60) || g->p->meta.nparams > DFZ_MAX_PARAMS - 10))
    return &g->bufs[cand[dfz_below(&g->r, n)]];
  return g_buf_input_new(g, dt);
}

gbuf *g_buf_input_new(gen *g, teeny_dtype dt) {
  gbuf *b = g_buf_new(g, "in", dt, BR_IN);
  dfz_param *pa = &g->p->meta.params[b->pi];
  input_fill(g, dt, &pa->fill, &b->cls);
  return b;
}

void g_buf_need(gbuf *b, long elems) {
  if (elems > b->need)
    b->need = elems;
}

const char *g_buf_name(gen *g, const gbuf *b) { return g->p->meta.params[b->pi].name; }

int g_dim_value(gen *g, int d) { return g->p->dims[d].value; }

int g_dim_mul(gen *g, int d0, int d1) {
  if (d0 == DFZ_DIM_ONE)
    return d1;
  if (d1 == DFZ_DIM_ONE)
    return d0;
  const dfz_dim *a = &g->p->dims[d0], *b = &g->p->dims[d1];
  if (a->cb >= 0 || b->cb >= 0 || a->ca < 0 || b->ca < 0)
    return -1;
  int before = g->p->ndims;
  int d = dfz_dim_get(g->p, a->ca, b->ca, a->mul * b->mul);
  if (d == DFZ_DIM_ONE && before == DFZ_MAX_DIMS)
    return -1;
  return d;
}

/* ---- the skeleton ---------------------------------------------------------------------------- */

static int add_const(gen *g, const char *name, int value) {
  dfz_case *m = &g->p->meta;
  dfz_const *c = &m->consts[m->nconsts];
  snprintf(c->name, sizeof c->name, "%s", name);
  c->value = value;
  return m->nconsts++;
}

static int pow2_between(gen *g, int lo_log, int hi_log) { return 1 << dfz_range(&g->r, lo_log, hi_log); }

/* A scalar kernel parameter, also a (fixed) variable in scope. */
static void scalar_param(gen *g, const char *name, teeny_dtype dt, double v) {
  dfz_param *pa = g_param_new(g, name, false, dt);
  if (!pa)
    return;
  snprintf(pa->name, sizeof pa->name, "%s", name);
  if (dfz_is_float(dt))
    pa->fval = v;
  else
    pa->ival = (int64_t)v;
  g_var_add(g, dfz_strdup(&g->p->arena, pa->name), dt, dfz_scalar_shape(), dfz_fact_const(dfz_is_float(dt) ? dfz_round(dt, v) : v),
            true);
}

static void decl(gen *g, const char *name, teeny_dtype dt, dfz_expr *e) {
  dfz_stmt *s = dfz_stmt_new(g->p, SK_DECL);
  s->name = (char *)name;
  s->dt = dt;
  s->tile = e->sh.rank > 0;
  s->e = e;
  e->pinned = true; /* the statement may go (if unused), its value stays */
  g_emit(g, s);
  g_var_add(g, name, dt, e->sh, e->f, true);
}

static dfz_expr *pid_expr(gen *g, bool grid2) {
  dfz_expr *p0 = dfz_expr_new(g->p, EK_CALL, OP_PROGRAM_ID, TEENY_DT_I32, dfz_scalar_shape());
  p0->iarg = 0;
  p0->f = dfz_fact_range(0, g->p->meta.grid[0] - 1, true);
  if (!grid2)
    return p0;
  dfz_expr *p1 = dfz_expr_new(g->p, EK_CALL, OP_PROGRAM_ID, TEENY_DT_I32, dfz_scalar_shape());
  p1->iarg = 1;
  p1->f = dfz_fact_range(0, g->p->meta.grid[1] - 1, true);
  dfz_expr *np = dfz_expr_new(g->p, EK_CALL, OP_NUM_PROGRAMS, TEENY_DT_I32, dfz_scalar_shape());
  np->iarg = 0;
  np->f = dfz_fact_const(g->p->meta.grid[0]);
  return gx_bin(g, OP_ADD, p0, gx_bin(g, OP_MUL, p1, np));
}

static void setup_1d(gen *g) {
  int b = pow2_between(g, 4, dfz_chance(&g->r, 80) ? 8 : 10);
  g->cB = add_const(g, "B", b);
  int e = pow2_between(g, 1, 5);
  while ((long)e * b > 4096)
    e /= 2;
  int cE = add_const(g, "E", e);
  g->dB = dfz_dim_get(g->p, g->cB, -1, 1);
  g->dE = dfz_dim_get(g->p, cE, -1, 1);
  g->dBM = g->dBN = -1;
  int progs = dfz_range(&g->r, 1, 5);
  bool grid2 = progs >= 2 && dfz_chance(&g->r, 25);
  unsigned *grid = g->p->meta.grid;
  grid[0] = (unsigned)progs;
  grid[1] = grid[2] = 1;
  if (grid2 && progs % 2 == 0) {
    grid[0] = (unsigned)progs / 2;
    grid[1] = 2;
  } else {
    grid2 = false;
  }
  g->nprog = progs;
  g->n = (long)(progs - 1) * b + dfz_range(&g->r, 1, b);
  if (dfz_chance(&g->r, 20))
    g->n = (long)progs * b;
  scalar_param(g, "n", TEENY_DT_I32, (double)g->n);
  decl(g, "pid", TEENY_DT_I32, pid_expr(g, grid2));
  dfz_expr *offs = gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, gx_var(g, g_var_find(g, "pid")),
                                             gx_dim_lit(g, g->dB)),
                          gx_arange(g, g->dB));
  decl(g, "offs", TEENY_DT_I32, offs);
  decl(g, "mask", TEENY_DT_BOOL, gx_bin(g, OP_LT, gx_var(g, g_var_find(g, "offs")),
                                        gx_var(g, g_var_find(g, "n"))));
}

static void setup_2d(gen *g) {
  int bm, bn;
  do {
    bm = pow2_between(g, 1, 6);
    bn = pow2_between(g, 1, 6);
  } while ((long)bm * bn > 4096 || (long)bm * bn < 32);
  g->cBM = add_const(g, "BM", bm);
  g->cBN = add_const(g, "BN", bn);
  int e = pow2_between(g, 1, 4);
  int cE = add_const(g, "E", e);
  g->dBM = dfz_dim_get(g->p, g->cBM, -1, 1);
  g->dBN = dfz_dim_get(g->p, g->cBN, -1, 1);
  g->dE = dfz_dim_get(g->p, cE, -1, 1);
  g->dB = -1;
  int gm = dfz_range(&g->r, 1, 3), gn = dfz_range(&g->r, 1, 3);
  g->R = (long)(gm - 1) * bm + dfz_range(&g->r, 1, bm);
  g->C = (long)(gn - 1) * bn + dfz_range(&g->r, 1, bn);
  g->S = g->C + dfz_range(&g->r, 0, 3);
  g->nprog = (long)gm * gn;
  bool flat = dfz_chance(&g->r, 40);
  unsigned *grid = g->p->meta.grid;
  grid[0] = flat ? (unsigned)(gm * gn) : (unsigned)gm;
  grid[1] = flat ? 1 : (unsigned)gn;
  grid[2] = 1;
  scalar_param(g, "R", TEENY_DT_I32, (double)g->R);
  scalar_param(g, "C", TEENY_DT_I32, (double)g->C);
  scalar_param(g, "S", TEENY_DT_I32, (double)g->S);
  decl(g, "pid", TEENY_DT_I32, pid_expr(g, !flat));
  dfz_expr *pm, *pn;
  if (flat) {
    dfz_expr *ngn = dfz_expr_new(g->p, EK_CALL, OP_CDIV, TEENY_DT_I32, dfz_scalar_shape());
    ngn->a[0] = gx_var(g, g_var_find(g, "C"));
    ngn->a[1] = gx_dim_lit(g, g->dBN);
    ngn->n = 2;
    ngn->f = dfz_fact_range(1, gn, true);
    decl(g, "gn", TEENY_DT_I32, ngn);
    pm = gx_bin(g, OP_DIV, gx_var(g, g_var_find(g, "pid")), gx_var(g, g_var_find(g, "gn")));
    pn = gx_bin(g, OP_REM, gx_var(g, g_var_find(g, "pid")), gx_var(g, g_var_find(g, "gn")));
    pm->f = dfz_fact_range(0, gm - 1, true);
    pn->f = dfz_fact_range(0, gn - 1, true);
  } else {
    pm = dfz_expr_new(g->p, EK_CALL, OP_PROGRAM_ID, TEENY_DT_I32, dfz_scalar_shape());
    pm->iarg = 0;
    pm->f = dfz_fact_range(0, gm - 1, true);
    pn = dfz_expr_new(g->p, EK_CALL, OP_PROGRAM_ID, TEENY_DT_I32, dfz_scalar_shape());
    pn->iarg = 1;
    pn->f = dfz_fact_range(0, gn - 1, true);
  }
  decl(g, "pm", TEENY_DT_I32, pm);
  decl(g, "pn", TEENY_DT_I32, pn);
  decl(g, "rm", TEENY_DT_I32,
       gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, gx_var(g, g_var_find(g, "pm")), gx_dim_lit(g, g->dBM)),
              gx_arange(g, g->dBM)));
  decl(g, "rn", TEENY_DT_I32,
       gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, gx_var(g, g_var_find(g, "pn")), gx_dim_lit(g, g->dBN)),
              gx_arange(g, g->dBN)));
  dfz_expr *mr = gx_bin(g, OP_LT, gx_col(g, gx_var(g, g_var_find(g, "rm"))), gx_var(g, g_var_find(g, "R")));
  dfz_expr *mc = gx_bin(g, OP_LT, gx_row(g, gx_var(g, g_var_find(g, "rn"))), gx_var(g, g_var_find(g, "C")));
  decl(g, "mask", TEENY_DT_BOOL, gx_bin(g, OP_AND, mr, mc));
}

/* A few extra scalar parameters of assorted dtypes. */
static void extra_scalars(gen *g) {
  int k = dfz_below(&g->r, 4);
  for (int i = 0; i < k; i++) {
    teeny_dtype dt = g_rand_dtype(g);
    char nm[16];
    snprintf(nm, sizeof nm, "s%d", i);
    double v;
    if (dt == TEENY_DT_BOOL)
      v = dfz_below(&g->r, 2);
    else if (dfz_is_float(dt))
      v = g->approx && dfz_chance(&g->r, 50) ? dfz_round(dt, dfz_unit(&g->r) * 8 - 4)
                                             : dfz_range(&g->r, -6, 6);
    else
      v = dfz_is_signed(dt) ? dfz_range(&g->r, -20, 20) : dfz_range(&g->r, 0, 40);
    scalar_param(g, nm, dt, v);
  }
}

static void finish_buffers(gen *g) {
  for (int i = 0; i < g->nbufs; i++) {
    gbuf *b = &g->bufs[i];
    dfz_param *pa = &g->p->meta.params[b->pi];
    pa->count = (size_t)b->need;
    pa->tol = b->role == BR_OUT ? b->tol : 0;
    if (!pa->cat[0])
      snprintf(pa->cat, sizeof pa->cat, "%s",
               b->role == BR_IN ? "input" : b->role == BR_IO ? "order" : b->role == BR_ATOM ? "atomic"
             : b->role == BR_SHARED ? "atomic_shared" : "store");
  }
}

static void finish_features(gen *g) {
  char *f = g->p->features;
  size_t off = 0;
  f[0] = '\0';
  off += (size_t)snprintf(f + off, sizeof g->p->features - off, "%s %s w%d",
                          g->lay == LAY_2D ? "2d" : "1d", g->approx ? "approx" : "exact",
                          g->p->meta.num_warps);
  for (int i = 0; i < DFZ_F__COUNT && off < sizeof g->p->features; i++)
    if (g->used & (1u << i))
      off += (size_t)snprintf(f + off, sizeof g->p->features - off, " %s", feature_names[i]);
}

void dfz_generate(uint64_t seed, const dfz_gen_opts *opts, dfz_prog *out) {
  static const int warps[] = {1, 2, 4, 4, 4, 8};
  memset(out, 0, sizeof *out);
  gen *g = dfz_alloc(&out->arena, sizeof *g);
  g->p = out;
  g->r.s = seed * UINT64_C(0x9E3779B97F4A7C15) + 0x1234567;
  g->skip = opts ? opts->skip : 0;
  int max_seg = opts && opts->max_segments > 0 ? opts->max_segments : 6;
  dfz_case *m = &out->meta;
  m->seed = seed;
  snprintf(m->kernel, sizeof m->kernel, "kern");
  /* sm_89 for its own paths (fp8 mma.sync); sm_80 for everything without wgmma and TMA */
  snprintf(m->target, sizeof m->target, "%s",
           dfz_chance(&g->r, 65) ? "sm_90a" : dfz_chance(&g->r, 30) ? "sm_89" : "sm_80");
  m->num_warps = warps[dfz_below(&g->r, 6)];
  dfz_rng side = {seed ^ UINT64_C(0x5851F42D4C957F2D)}; /* a stream of its own */
  m->shift = dfz_chance(&side, 20) ? dfz_range(&side, 1, 3) : 0;
  dfz_dim_get(out, -1, -1, 1); /* dim 0: the literal 1 */
  g->approx = g_on(g, DFZ_F_MATH) && dfz_chance(&g->r, 45);
  g->lay = g_on(g, DFZ_F_2D) && dfz_chance(&g->r, 40) ? LAY_2D : LAY_1D;
  if (dfz_chance(&g->r, 30)) { /* a dtype generic: every use of one dtype spelt D */
    snprintf(m->gname, sizeof m->gname, "D");
    m->gdt = g_rand_dtype(g);
  }
  dfz_func *k = dfz_func_new(out, m->kernel, "", true);
  g->cur = &k->body;
  if (g->lay == LAY_1D)
    setup_1d(g);
  else
    setup_2d(g);
  if (g->lay == LAY_2D)
    g_use(g, DFZ_F_2D);
  extra_scalars(g);
  int nseg = dfz_range(&g->r, 1, max_seg);
  for (int i = 0; i < nseg; i++)
    g_segment(g);
  bool any_out = false;
  for (int i = 0; i < g->nbufs; i++)
    any_out |= g->bufs[i].role != BR_IN;
  if (!any_out) {
    dfz_shape sh = g->lay == LAY_1D ? dfz_shape1(g->dB) : dfz_shape2(g->dBM, g->dBN);
    gwant w = g_want(g_rand_dtype(g), sh);
    g_store_global(g, gx(g, w, 3), "store");
  }
  finish_buffers(g);
  finish_features(g);
}
