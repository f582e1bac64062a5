/*
 * tests/diff/gen_expr.c — random typed expressions of the kernel language.
 *
 * gx(g, want, depth) returns an expression of exactly want.dt whose shape
 * broadcasts to want.sh and whose value facts (facts.h) meet want's
 * demands (exact, integer-valued, bounded).  Types follow docs/dsl.md §4
 * (promotion, weak literals, the result dtypes of sum and dot); every
 * node's facts come from facts.c, and a production the facts refuse is
 * retried as another, down to a literal that always fits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/diff/gen_int.h"

gwant g_want(teeny_dtype dt, dfz_shape sh) {
  gwant w;
  memset(&w, 0, sizeof w);
  w.dt = dt;
  w.sh = sh;
  w.exact = dfz_is_int(dt);
  return w;
}

/* ---- dtypes and shapes ------------------------------------------------------------ */

teeny_dtype g_promote(teeny_dtype a, teeny_dtype b) {
  if (a == b)
    return a;
  if (a == TEENY_DT_F64 || b == TEENY_DT_F64)
    return TEENY_DT_F64;
  if (dfz_is_float(a) && dfz_is_float(b))
    return TEENY_DT_F32;
  if (dfz_is_float(a))
    return a;
  if (dfz_is_float(b))
    return b;
  if (a == TEENY_DT_BOOL)
    return b;
  if (b == TEENY_DT_BOOL)
    return a;
  if (dfz_bits(a) != dfz_bits(b))
    return dfz_bits(a) > dfz_bits(b) ? a : b;
  return dfz_is_signed(a) ? b : a;
}

teeny_dtype g_sum_dtype(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL: case TEENY_DT_I8: case TEENY_DT_I16: return TEENY_DT_I32;
  case TEENY_DT_U8: case TEENY_DT_U16: return TEENY_DT_U32;
  case TEENY_DT_F16: case TEENY_DT_BF16: return TEENY_DT_F32;
  default: return dt;
  }
}

static const teeny_dtype all_dtypes[] = {
    TEENY_DT_BOOL, TEENY_DT_I8, TEENY_DT_I16, TEENY_DT_I32, TEENY_DT_I64, TEENY_DT_U8,
    TEENY_DT_U16, TEENY_DT_U32, TEENY_DT_U64, TEENY_DT_F16, TEENY_DT_BF16, TEENY_DT_F32,
    TEENY_DT_F64};

teeny_dtype g_rand_dtype(gen *g) {
  static const teeny_dtype common[] = {TEENY_DT_I32, TEENY_DT_F32, TEENY_DT_F32, TEENY_DT_F16,
                                       TEENY_DT_BF16, TEENY_DT_I64, TEENY_DT_U32, TEENY_DT_I8};
  if (dfz_chance(&g->r, 55))
    return common[dfz_below(&g->r, (int)(sizeof common / sizeof common[0]))];
  return all_dtypes[dfz_below(&g->r, (int)(sizeof all_dtypes / sizeof all_dtypes[0]))];
}

static bool numeric(teeny_dtype dt) { return dt != TEENY_DT_BOOL && dt != TEENY_DT_PTR; }
static bool int_nb(teeny_dtype dt) { return dfz_is_int(dt) && dt != TEENY_DT_BOOL; }

bool g_broadcast(dfz_shape a, dfz_shape b, dfz_shape *out) { return dfz_shape_broadcast(a, b, out); }

bool g_fits(dfz_shape a, dfz_shape into) { return dfz_shape_fits(a, into); }

/* ---- nodes --------------------------------------------------------------------------- */

static dfz_expr *node(gen *g, dfz_ekind k, dfz_op op, teeny_dtype dt, dfz_shape sh) {
  return dfz_expr_new(g->p, k, op, dt, sh);
}

dfz_expr *gx_var(gen *g, const gvar *v) {
  dfz_expr *e = node(g, EK_VAR, OP_CALL, v->dt, v->sh);
  e->text = v->name;
  e->f = v->f;
  return e;
}

/* A weak literal (iarg 1): its dtype is decided by the other operand. */
dfz_expr *gx_weak_lit(gen *g, teeny_dtype ctx, long v) {
  dfz_expr *e = node(g, EK_LIT, OP_CALL, dfz_is_float(ctx) ? ctx : TEENY_DT_I32,
                     dfz_scalar_shape());
  e->text = dfz_printf(&g->p->arena, "%ld", v);
  e->iarg = 1;
  e->f = dfz_fact_const((double)v);
  return e;
}

static dfz_expr *weak_float_lit(gen *g, double v) {
  dfz_expr *e = node(g, EK_LIT, OP_CALL, TEENY_DT_F32, dfz_scalar_shape());
  e->text = dfz_printf(&g->p->arena, "%.17g", v);
  if (!strpbrk(e->text, ".e"))
    e->text = dfz_printf(&g->p->arena, "%s.0", e->text);
  e->iarg = 2; /* weak float */
  e->f = dfz_fact_const(v);
  return e;
}

static dfz_expr *cast_node(gen *g, dfz_expr *e, teeny_dtype to, dfz_fact f) {
  dfz_expr *c = node(g, EK_CAST, OP_CALL, to, e->sh);
  c->a[0] = e;
  c->n = 1;
  c->f = f;
  c->iarg = e->sh.rank > 0 && dfz_chance(&g->r, 30) ? 1 : 0; /* (tile(T)) spelling */
  return c;
}

dfz_expr *gx_int_lit(gen *g, teeny_dtype dt, long v) {
  if (dt == TEENY_DT_BOOL) {
    dfz_expr *e = node(g, EK_LIT, OP_CALL, dt, dfz_scalar_shape());
    e->text = v ? "true" : "false";
    e->f = dfz_fact_const(v != 0);
    return e;
  }
  dfz_expr *w = gx_weak_lit(g, dt, v);
  if (dt == TEENY_DT_F32 && dfz_chance(&g->r, 50)) {
    w->text = dfz_printf(&g->p->arena, "%ld.0f", v);
    w->iarg = 0;
    w->dt = TEENY_DT_F32;
    return w;
  }
  dfz_fact f;
  dfz_fact_cast(TEENY_DT_I32, dt, w->f, &f);
  return cast_node(g, w, dt, f);
}

static dfz_expr *float_lit(gen *g, teeny_dtype dt, double v) {
  dfz_expr *w = weak_float_lit(g, v);
  dfz_fact f;
  if (dt == TEENY_DT_F32) {
    w->text = dfz_printf(&g->p->arena, "%sf", w->text);
    w->iarg = 0;
    dfz_fact_cast(TEENY_DT_F64, TEENY_DT_F32, w->f, &w->f);
    return w;
  }
  dfz_fact_cast(TEENY_DT_F64, dt, w->f, &f);
  return cast_node(g, w, dt, f);
}

dfz_expr *gx_dim_lit(gen *g, int dim) {
  dfz_expr *e = node(g, EK_LIT, OP_CALL, TEENY_DT_I32, dfz_scalar_shape());
  const char *t = g->p->dims[dim].text;
  e->text = strchr(t, ' ') ? dfz_printf(&g->p->arena, "(%s)", t) : dfz_strdup(&g->p->arena, t);
  e->f = dfz_fact_const(g->p->dims[dim].value);
  e->iarg = 1; /* a const generic is weak */
  return e;
}

static bool is_weak(const dfz_expr *e) { return e->kind == EK_LIT && e->iarg >= 1; }

dfz_expr *gx_cast(gen *g, dfz_expr *e, teeny_dtype to) {
  if (e->dt == to && !is_weak(e))
    return e;
  dfz_fact f;
  teeny_dtype from = is_weak(e) ? (e->iarg == 2 ? TEENY_DT_F64 : TEENY_DT_I64) : e->dt;
  if (!dfz_fact_cast(from, to, e->f, &f))
    return NULL;
  return cast_node(g, e, to, f);
}

/* The implicit conversion of an operand's facts into dtype to. */
static bool conv_facts(const dfz_expr *e, teeny_dtype to, dfz_fact *f) {
  if (is_weak(e) || e->dt == to) {
    *f = e->f;
    if (is_weak(e) && dfz_is_float(to))
      return dfz_fact_cast(TEENY_DT_F64, to, e->f, f);
    return true;
  }
  return dfz_fact_cast(e->dt, to, e->f, f);
}

static bool is_cmp(dfz_op op) { return op >= OP_EQ && op <= OP_GE; }

/* Does a weak literal's value fit dtype dt (docs/dsl.md: else an error)? */
static bool weak_fits(const dfz_expr *lit, teeny_dtype dt) {
  if (!is_weak(lit))
    return true;
  double v = lit->f.lo;
  if (dfz_is_float(dt))
    return fabs(v) <= dfz_max_finite(dt);
  if (lit->iarg == 2 || dt == TEENY_DT_BOOL)
    return false;
  return v >= dfz_min_value(dt) && v <= dfz_max_finite(dt);
}

dfz_expr *gx_bin(gen *g, dfz_op op, dfz_expr *a, dfz_expr *b) {
  if (!a || !b || a->dt == TEENY_DT_PTR || b->dt == TEENY_DT_PTR)
    return NULL;
  teeny_dtype P;
  if (is_weak(a) && is_weak(b))
    return NULL;
  if (is_weak(a))
    P = a->iarg == 2 && !dfz_is_float(b->dt) ? TEENY_DT_F32 : b->dt;
  else if (is_weak(b))
    P = b->iarg == 2 && !dfz_is_float(a->dt) ? TEENY_DT_F32 : a->dt;
  else
    P = g_promote(a->dt, b->dt);
  if (!weak_fits(a, P) || !weak_fits(b, P))
    return NULL;
  bool ba = a->dt == TEENY_DT_BOOL, bb = b->dt == TEENY_DT_BOOL;
  switch (op) {
  case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM:
    if (ba || bb)
      return NULL;
    break;
  case OP_SHL: case OP_SHR:
    if (!int_nb(P) || ba || bb || dfz_is_float(a->dt) || dfz_is_float(b->dt))
      return NULL;
    break;
  case OP_AND: case OP_OR: case OP_XOR:
    if (dfz_is_float(P) || ba != bb)
      return NULL;
    break;
  case OP_LAND: case OP_LOR:
    if (dfz_is_float(a->dt) || dfz_is_float(b->dt))
      return NULL;
    break;
  case OP_EQ: case OP_NE:
    if (ba != bb)
      return NULL;
    break;
  case OP_LT: case OP_LE: case OP_GT: case OP_GE:
    if (ba || bb)
      return NULL;
    break;
  default:
    return NULL;
  }
  if (op == OP_REM && dfz_is_float(P)) {
    if (!g_on(g, DFZ_F_FREM))
      return NULL;
    g_use(g, DFZ_F_FREM);
  }
  dfz_shape sh;
  if (!g_broadcast(a->sh, b->sh, &sh))
    return NULL;
  dfz_fact fa[2];
  if (!conv_facts(a, P, &fa[0]) || !conv_facts(b, P, &fa[1]))
    return NULL;
  teeny_dtype rdt = is_cmp(op) || op == OP_LAND || op == OP_LOR ? TEENY_DT_BOOL : P;
  dfz_fact f;
  if (!dfz_fact_op(op, rdt, P, fa, 2, 1, &f))
    return NULL;
  dfz_expr *e = node(g, EK_BIN, op, rdt, sh);
  e->a[0] = a;
  e->a[1] = b;
  e->n = 2;
  e->f = f;
  return e;
}

static dfz_expr *un(gen *g, dfz_op op, dfz_expr *a) {
  if (!a || is_weak(a))
    return NULL;
  teeny_dtype dt = a->dt;
  if (op == OP_NEG && !numeric(dt))
    return NULL;
  if (op == OP_BNOT && !int_nb(dt))
    return NULL;
  if (op == OP_LNOT && dfz_is_float(dt))
    return NULL;
  teeny_dtype rdt = op == OP_LNOT ? TEENY_DT_BOOL : dt;
  dfz_fact f;
  if (!dfz_fact_op(op, rdt, dt, &a->f, 1, 1, &f))
    return NULL;
  dfz_expr *e = node(g, EK_UN, op, rdt, a->sh);
  e->a[0] = a;
  e->n = 1;
  e->f = f;
  return e;
}

/* Element-wise builtins (and where). */
dfz_expr *gx_call(gen *g, dfz_op op, int n, dfz_expr **args) {
  dfz_shape sh = dfz_scalar_shape();
  teeny_dtype P = TEENY_DT_VOID;
  int first = op == OP_WHERE ? 1 : 0;
  for (int i = 0; i < n; i++) {
    if (!args[i] || args[i]->dt == TEENY_DT_PTR)
      return NULL;
    if (!g_broadcast(sh, args[i]->sh, &sh))
      return NULL;
  }
  for (int i = first; i < n; i++)
    if (!is_weak(args[i]))
      P = P == TEENY_DT_VOID ? args[i]->dt : g_promote(P, args[i]->dt);
  if (P == TEENY_DT_VOID)
    return NULL;
  for (int i = first; i < n; i++)
    if (!weak_fits(args[i], P))
      return NULL;
  switch (op) {
  case OP_WHERE:
    if (args[0]->dt != TEENY_DT_BOOL)
      return NULL;
    break;
  case OP_MINIMUM: case OP_MAXIMUM: case OP_ABS:
    if (!numeric(P))
      return NULL;
    break;
  case OP_CDIV:
    if (!int_nb(P))
      return NULL;
    break;
  case OP_FMA:
    for (int i = 0; i < n; i++)
      if (args[i]->dt != P)
        return NULL;
    if (!dfz_is_float(P))
      return NULL;
    break;
  default: /* math */
    if (!dfz_is_float(P))
      return NULL;
    break;
  }
  dfz_fact fa[3];
  for (int i = 0; i < n; i++)
    if (!conv_facts(args[i], i < first ? TEENY_DT_BOOL : P, &fa[i]))
      return NULL;
  dfz_fact f;
  if (!dfz_fact_op(op, P, P, fa, n, 1, &f))
    return NULL;
  dfz_expr *e = node(g, EK_CALL, op, P, sh);
  for (int i = 0; i < n; i++)
    e->a[i] = args[i];
  e->n = n;
  e->f = f;
  return e;
}

static dfz_expr *call1(gen *g, dfz_op op, dfz_expr *a) { return gx_call(g, op, 1, &a); }

static dfz_expr *call2(gen *g, dfz_op op, dfz_expr *a, dfz_expr *b) {
  dfz_expr *v[2] = {a, b};
  return gx_call(g, op, 2, v);
}

dfz_expr *gx_arange(gen *g, int dim) {
  dfz_expr *e = node(g, EK_CALL, OP_ARANGE, TEENY_DT_I32, dfz_shape1(dim));
  e->f = dfz_fact_range(0, g->p->dims[dim].value - 1, true);
  return e;
}

static dfz_expr *view(gen *g, dfz_op op, dfz_expr *a, dfz_shape sh) {
  if (!a)
    return NULL;
  dfz_expr *e = node(g, EK_CALL, op, a->dt, sh);
  e->pointee = a->pointee;
  e->a[0] = a;
  e->n = 1;
  e->f = a->f;
  return e;
}

/* col(e) and row(e); with rank3 on, sometimes spelt reshape(e, D, 1) and
 * reshape(e, 1, D): the same values, through the code generator's facts
 * for reshapes that only add 1s (on masks and pointer offsets too). */
static dfz_op unit_view(gen *g, dfz_op op) {
  return g_on(g, DFZ_F_RANK3) && dfz_chance(&g->r, 15) ? OP_RESHAPE : op;
}

dfz_expr *gx_col(gen *g, dfz_expr *e) {
  if (!e || e->sh.rank != 1)
    return NULL;
  return view(g, unit_view(g, OP_COL), e, dfz_shape2(e->sh.d[0], DFZ_DIM_ONE));
}

dfz_expr *gx_row(gen *g, dfz_expr *e) {
  if (!e || e->sh.rank != 1)
    return NULL;
  return view(g, unit_view(g, OP_ROW), e, dfz_shape2(DFZ_DIM_ONE, e->sh.d[0]));
}

dfz_expr *gx_zeros(gen *g, teeny_dtype dt, dfz_shape sh) {
  dfz_expr *e = node(g, EK_CALL, OP_ZEROS, dt, sh);
  e->f = dfz_fact_const(0);
  return e;
}

dfz_expr *gx_full(gen *g, teeny_dtype dt, long v, dfz_shape sh) {
  if (sh.rank == 0)
    return gx_int_lit(g, dt, v);
  dfz_expr *e = node(g, EK_CALL, OP_FULL, dt, sh);
  e->a[0] = dt == TEENY_DT_BOOL ? gx_int_lit(g, dt, v) : gx_weak_lit(g, dt, v);
  e->n = 1;
  e->f = dfz_fact_const(dt == TEENY_DT_BOOL ? (v != 0) : (double)v);
  return e;
}

dfz_expr *gx_broadcast(gen *g, dfz_expr *e, dfz_shape sh) {
  if (!e || !g_fits(e->sh, sh))
    return NULL;
  if (dfz_shape_eq(e->sh, sh))
    return e;
  if (e->sh.rank == 0) {
    /* a scalar: full() of the value spreads it, broadcast_to needs a tile */
    dfz_expr *t = view(g, OP_BROADCAST_TO, e, sh);
    return t;
  }
  return view(g, OP_BROADCAST_TO, e, sh);
}

/* ---- fixing an expression to a want ----------------------------------------------------- */

static dfz_expr *clamp(gen *g, dfz_expr *e, double bound) {
  if (e->dt == TEENY_DT_BOOL)
    return e;
  double b = fmin(bound, dfz_max_finite(e->dt));
  if (dfz_is_float(e->dt)) {
    b = floor(b);
    if (b < 1)
      b = 1;
    dfz_expr *lo = dfz_is_signed(e->dt) || dfz_is_float(e->dt) ? gx_weak_lit(g, e->dt, -(long)b) : NULL;
    dfz_expr *m = lo ? call2(g, OP_MAXIMUM, e, lo) : e;
    return m ? call2(g, OP_MINIMUM, m, gx_weak_lit(g, e->dt, (long)b)) : NULL;
  }
  b = floor(b);
  if (dfz_is_signed(e->dt)) {
    dfz_expr *m = call2(g, OP_MAXIMUM, e, gx_weak_lit(g, e->dt, -(long)b));
    return m ? call2(g, OP_MINIMUM, m, gx_weak_lit(g, e->dt, (long)b)) : NULL;
  }
  /* unsigned: values above b wrap into [0, b] with % (b + 1) half of the time */
  if (dfz_chance(&g->r, 50))
    return gx_bin(g, OP_REM, e, gx_weak_lit(g, e->dt, (long)b + 1));
  return call2(g, OP_MINIMUM, e, gx_weak_lit(g, e->dt, (long)b));
}

dfz_expr *gx_fix(gen *g, dfz_expr *e, gwant w) {
  if (!e)
    return NULL;
  if (e->dt != w.dt || is_weak(e))
    e = gx_cast(g, e, w.dt);
  if (!e || (w.exact && e->f.err > 0))
    return NULL;
  if (w.intval && !e->f.intval) {
    if (!dfz_is_float(e->dt) || e->f.err > 0)
      return NULL;
    e = call1(g, dfz_chance(&g->r, 50) ? OP_FLOOR : OP_CEIL, e);
    if (!e)
      return NULL;
  }
  if (w.bound > 0 && (!dfz_fact_finite(e->f) || dfz_fact_mag(e->f) > w.bound)) {
    e = clamp(g, e, w.bound);
    if (!e || !dfz_fact_finite(e->f) || dfz_fact_mag(e->f) > w.bound + e->f.err + 1e-9)
      return NULL;
  }
  if (!g_fits(e->sh, w.sh))
    return NULL;
  if (w.exact_shape && !dfz_shape_eq(e->sh, w.sh))
    e = gx_broadcast(g, e, w.sh);
  return e;
}

/* A literal (or full) that meets any want. */
static dfz_expr *fallback(gen *g, gwant w) {
  long v = w.bound > 0 && w.bound < 1 ? 0 : dfz_below(&g->r, 3);
  if (w.exact_shape && w.sh.rank > 0)
    return gx_full(g, w.dt, v, w.sh);
  return gx_int_lit(g, w.dt, v);
}

/* ---- productions ------------------------------------------------------------------------- */

static gwant child(gwant w, teeny_dtype dt, dfz_shape sh) {
  gwant c = w;
  c.dt = dt;
  c.sh = sh;
  c.exact_shape = false;
  c.exact = w.exact || dfz_is_int(dt);
  c.intval = false;
  c.bound = 0;
  return c;
}

/* A sub-shape of sh for an operand: sh itself mostly, else one it broadcasts from. */
static dfz_shape sub_shape(gen *g, dfz_shape sh) {
  int k = dfz_below(&g->r, 10);
  if (sh.rank == 0 || k < 6)
    return sh;
  if (k < 8 || sh.rank == 1)
    return dfz_scalar_shape();
  if (k == 8)
    return dfz_shape2(sh.d[0], DFZ_DIM_ONE);
  return dfz_chance(&g->r, 50) ? dfz_shape2(DFZ_DIM_ONE, sh.d[1]) : dfz_shape1(sh.d[1]);
}

static dfz_expr *p_var(gen *g, gwant w) {
  int cand[G_MAX_VARS], nc = 0;
  for (int i = 0; i < g->nvars; i++) {
    const gvar *v = &g->vars[i];
    if (v->dt == TEENY_DT_PTR || v->hidden || !g_fits(v->sh, w.sh))
      continue;
    if (w.exact && v->f.err > 0)
      continue;
    cand[nc++] = i;
  }
  if (nc == 0)
    return NULL;
  return gx_var(g, &g->vars[cand[dfz_below(&g->r, nc)]]);
}

static dfz_expr *p_lit(gen *g, gwant w) {
  if (dfz_is_float(w.dt) && dfz_chance(&g->r, 40)) {
    static const double vals[] = {0.5, 0.25, 1.5, 2.0, 3.0, 0.75, 0.1, 10.0};
    if (w.intval)
      return gx_int_lit(g, w.dt, dfz_range(&g->r, -4, 4));
    return float_lit(g, w.dt, vals[dfz_below(&g->r, 8)] * (dfz_chance(&g->r, 30) ? -1 : 1));
  }
  long v = dfz_range(&g->r, 0, 9);
  if ((dfz_is_signed(w.dt) || dfz_is_float(w.dt)) && dfz_chance(&g->r, 30))
    v = -v;
  if (dfz_is_int(w.dt) && w.dt != TEENY_DT_BOOL && !dfz_is_float(w.dt) && dfz_chance(&g->r, 10))
    v = dfz_is_signed(w.dt) ? (long)dfz_min_value(w.dt) / 2 - 1
        : dfz_bits(w.dt) >= 64 ? (1L << 62) : (1L << (dfz_bits(w.dt) - 1)) - 1;
  if (w.dt == TEENY_DT_BOOL)
    v &= 1;
  return gx_int_lit(g, w.dt, v);
}

static dfz_expr *p_arange(gen *g, gwant w) {
  if (w.sh.rank == 0 || !dfz_is_int(w.dt) || g->in_helper)
    return NULL;
  int which = w.sh.rank == 1 ? 0 : dfz_below(&g->r, 2);
  dfz_expr *a = gx_arange(g, w.sh.d[which]);
  if (dfz_chance(&g->r, 30))
    a = gx_bin(g, OP_SUB, a, gx_weak_lit(g, TEENY_DT_I32, dfz_range(&g->r, 1, 20)));
  if (w.sh.rank == 2)
    a = which == 0 ? gx_col(g, a) : gx_row(g, a);
  return a;
}

static dfz_expr *p_binary(gen *g, gwant w, int depth) {
  static const dfz_op arith[] = {OP_ADD, OP_ADD, OP_SUB, OP_MUL, OP_MUL, OP_DIV, OP_REM};
  static const dfz_op ints[] = {OP_SHL, OP_SHR, OP_AND, OP_OR, OP_XOR};
  static const dfz_op cmps[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
  dfz_op op;
  teeny_dtype adt = w.dt, bdt = w.dt;
  if (w.dt == TEENY_DT_BOOL) {
    int k = dfz_below(&g->r, 10);
    if (k < 6) {
      op = cmps[dfz_below(&g->r, 6)];
      adt = g_rand_dtype(g);
      if (adt == TEENY_DT_BOOL)
        adt = TEENY_DT_I32;
      bdt = dfz_chance(&g->r, 70) || !g_on(g, DFZ_F_CAST) ? adt : g_rand_dtype(g);
      if (bdt == TEENY_DT_BOOL)
        bdt = adt;
    } else {
      static const dfz_op bl[] = {OP_AND, OP_OR, OP_XOR, OP_LAND, OP_LOR};
      op = bl[dfz_below(&g->r, 5)];
    }
  } else if (int_nb(w.dt) && dfz_chance(&g->r, 35)) {
    op = ints[dfz_below(&g->r, 5)];
  } else {
    op = arith[dfz_below(&g->r, 7)];
    if (g_on(g, DFZ_F_CAST) && dfz_chance(&g->r, 25)) {
      bdt = g_rand_dtype(g);
      if (bdt == TEENY_DT_BOOL)
        bdt = w.dt;
    }
  }
  dfz_shape sa = sub_shape(g, w.sh), sb = sub_shape(g, w.sh);
  if (sa.rank < w.sh.rank && sb.rank < w.sh.rank)
    sa = w.sh;
  gwant ca = child(w, adt, sa), cb = child(w, bdt, sb);
  if (op == OP_SHL || op == OP_SHR) {
    cb.bound = dfz_chance(&g->r, 80) ? dfz_bits(bdt) - 1 : 0;
  }
  dfz_expr *a = gx(g, ca, depth - 1);
  dfz_expr *b;
  if (op != OP_LAND && op != OP_LOR && dfz_chance(&g->r, 20) && w.dt != TEENY_DT_BOOL) {
    long v = dfz_range(&g->r, 1, 7);
    b = dfz_is_float(adt) && dfz_chance(&g->r, 30) ? weak_float_lit(g, 0.5 * (double)v)
                                                   : gx_weak_lit(g, adt, v);
  } else {
    b = gx(g, cb, depth - 1);
  }
  if (dfz_chance(&g->r, 20) && op != OP_SHL && op != OP_SHR) {
    dfz_expr *t = a;
    a = b;
    b = t;
  }
  return gx_bin(g, op, a, b);
}

static dfz_expr *p_unary(gen *g, gwant w, int depth) {
  dfz_op op;
  if (w.dt == TEENY_DT_BOOL)
    op = OP_LNOT;
  else if (int_nb(w.dt))
    op = dfz_chance(&g->r, 50) ? OP_NEG : OP_BNOT;
  else
    op = OP_NEG;
  dfz_expr *a = gx(g, child(w, w.dt, w.sh), depth - 1);
  if (dfz_chance(&g->r, 30) && w.dt != TEENY_DT_BOOL)
    return call1(g, OP_ABS, a);
  return un(g, op, a);
}

static dfz_expr *p_minmax(gen *g, gwant w, int depth) {
  if (!numeric(w.dt))
    return NULL;
  dfz_expr *a = gx(g, child(w, w.dt, sub_shape(g, w.sh)), depth - 1);
  dfz_expr *b = gx(g, child(w, w.dt, w.sh), depth - 1);
  if (int_nb(w.dt) && dfz_chance(&g->r, 20))
    return call2(g, OP_CDIV, a, b);
  if (dfz_is_float(w.dt) && dfz_chance(&g->r, 20)) {
    dfz_expr *c = gx(g, child(w, w.dt, sub_shape(g, w.sh)), depth - 1);
    dfz_expr *v[3] = {a, b, c};
    if (v[0] && v[1] && v[2])
      return gx_call(g, OP_FMA, 3, v);
    return NULL;
  }
  return call2(g, dfz_chance(&g->r, 50) ? OP_MINIMUM : OP_MAXIMUM, a, b);
}

static dfz_expr *p_where(gen *g, gwant w, int depth) {
  gwant cw = child(w, TEENY_DT_BOOL, dfz_chance(&g->r, 30) ? dfz_scalar_shape() : sub_shape(g, w.sh));
  cw.exact = true;
  dfz_expr *c = gx(g, cw, depth - 1);
  dfz_expr *a = gx(g, child(w, w.dt, sub_shape(g, w.sh)), depth - 1);
  dfz_expr *b = gx(g, child(w, w.dt, w.sh), depth - 1);
  if (c && c->sh.rank == 0 && dfz_chance(&g->r, 50)) {
    /* c ? a : b picks one of two values: they need one dtype and one shape */
    dfz_shape sh;
    if (!a || !b || !dfz_shape_eq(a->sh, b->sh) || a->dt != b->dt || is_weak(a) || is_weak(b))
      return NULL;
    sh = a->sh;
    dfz_expr *e = node(g, EK_COND, OP_WHERE, a->dt, sh);
    e->a[0] = c;
    e->a[1] = a;
    e->a[2] = b;
    e->n = 3;
    e->f = dfz_fact_hull(a->f, b->f);
    if (!dfz_is_float(a->dt))
      e->f = dfz_fact_hull(a->f, b->f);
    return e;
  }
  dfz_expr *v[3] = {c, a, b};
  return gx_call(g, OP_WHERE, 3, v);
}

static dfz_expr *p_cast(gen *g, gwant w, int depth) {
  if (!g_on(g, DFZ_F_CAST))
    return NULL;
  teeny_dtype from = g_rand_dtype(g);
  gwant c = child(w, from, w.sh);
  c.exact = w.exact || dfz_is_int(w.dt) || w.dt == TEENY_DT_BOOL;
  g_use(g, DFZ_F_CAST);
  return gx_cast(g, gx(g, c, depth - 1), w.dt);
}

static dfz_expr *p_math(gen *g, gwant w, int depth) {
  if (!dfz_is_float(w.dt))
    return NULL;
  static const dfz_op exact_ops[] = {OP_SQRT, OP_FLOOR, OP_CEIL, OP_ABS};
  static const dfz_op approx_ops[] = {OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_RSQRT, OP_SIN,
                                      OP_COS, OP_SIGMOID, OP_ERF, OP_TANH, OP_TANH, OP_SQRT,
                                      OP_ATAN};
  bool approx = !w.exact && g->approx && g_on(g, DFZ_F_MATH) && dfz_chance(&g->r, 80);
  dfz_op op = approx ? approx_ops[dfz_below(&g->r, 13)] : exact_ops[dfz_below(&g->r, 4)];
  if (op == OP_TANH && !g_on(g, DFZ_F_TANH))
    op = OP_SIGMOID;
  gwant c = child(w, w.dt, w.sh);
  switch (op) {
  case OP_EXP: c.bound = 8; break;
  case OP_EXP2: c.bound = 10; break;
  case OP_SIN: case OP_COS: c.bound = 40; break;
  case OP_SIGMOID: case OP_ERF: case OP_TANH: c.bound = 12; break;
  case OP_LOG: case OP_LOG2: case OP_RSQRT: case OP_SQRT: c.bound = approx ? 1000 : 0; break;
  case OP_FLOOR: case OP_CEIL: c.exact = true; break;
  default: break;
  }
  dfz_expr *x = gx(g, c, depth - 1);
  if (!x)
    return NULL;
  if (op == OP_LOG || op == OP_LOG2 || op == OP_RSQRT || (op == OP_SQRT && approx)) {
    x = call1(g, OP_ABS, x);
    x = x ? gx_bin(g, OP_ADD, x, gx_weak_lit(g, w.dt, 1)) : NULL;
  }
  if (approx)
    g_use(g, op == OP_TANH ? DFZ_F_TANH : DFZ_F_MATH);
  static const dfz_op fast_of[][2] = {{OP_EXP, OP_FAST_EXP}, {OP_EXP2, OP_FAST_EXP2},
                                      {OP_LOG, OP_FAST_LOG}, {OP_LOG2, OP_FAST_LOG2},
                                      {OP_SIN, OP_FAST_SIN}, {OP_COS, OP_FAST_COS},
                                      {OP_TANH, OP_FAST_TANH}};
  if (approx && g_on(g, DFZ_F_FAST) && dfz_chance(&g->r, 30))
    for (int i = 0; i < 7; i++)
      if (fast_of[i][0] == op) {
        op = fast_of[i][1];
        g_use(g, DFZ_F_FAST);
        break;
      }
  return call1(g, op, x);
}

#define G_MAX_TILE 4096 /* elements of a 2-D tile the generator builds */

/* Dims usable as the other side of a reduction or as a dot's K: at least
 * min_value, and times `with` (a dim, or -1) at most G_MAX_TILE. */
static int other_dim(gen *g, int avoid, int min_value, int with) {
  int cand[8], n = 0;
  int ds[4] = {g->dB, g->dBM, g->dBN, g->dE};
  long wv = with >= 0 ? g->p->dims[with].value : 1;
  for (int i = 0; i < 4; i++)
    if (ds[i] > 0 && ds[i] != avoid && g->p->dims[ds[i]].value >= min_value &&
        wv * g->p->dims[ds[i]].value <= G_MAX_TILE)
      cand[n++] = ds[i];
  if (n == 0)
    return -1;
  return cand[dfz_below(&g->r, n)];
}

/* A combine function for reduce/scan on dtype dt: its name and what it does. */
static const char *combine_fn(gen *g, teeny_dtype dt, dfz_op *like) {
  static const char *const names[] = {"add", "max", "min", "xor", "or", "amax"};
  int k;
  for (;;) {
    k = dfz_below(&g->r, 6);
    if ((k == 3 || k == 4) && !int_nb(dt))
      continue;
    if (k == 5 && !dfz_is_signed(dt) && !dfz_is_float(dt))
      continue;
    break;
  }
  *like = k == 0 ? OP_SUM : k == 1 ? OP_MAX : k == 2 ? OP_MIN : k == 5 ? OP_MAX : OP_XOR;
  char nm[48];
  snprintf(nm, sizeof nm, "cmb_%s_%s", names[k], teeny_dtype_name(dt));
  for (int i = 0; i < g->p->nfuncs; i++)
    if (strcmp(g->p->funcs[i]->name, nm) == 0)
      return g->p->funcs[i]->name;
  const char *t = dfz_dtype_text(g->p, dt);
  char sig[160];
  snprintf(sig, sizeof sig, "static %s %s(%s a, %s b)", t, nm, t, t);
  dfz_func *f = g_helper_new(g, nm, sig);
  dfz_stmt *r = dfz_stmt_new(g->p, SK_RETURN);
  dfz_expr *e = dfz_expr_new(g->p, EK_LIT, OP_CALL, dt, dfz_scalar_shape());
  static const char *const bodies[] = {"a + b", "maximum(a, b)", "minimum(a, b)", "a ^ b",
                                       "a | b", "maximum(abs(a), abs(b))"};
  e->text = dfz_strdup(&g->p->arena, bodies[k]);
  r->e = e;
  r->pinned = true;
  dfz_block_add(g->p, &f->body, r);
  return f->name;
}

static dfz_expr *reduction(gen *g, dfz_op op, dfz_expr *x, int axis, long n) {
  if (!x || x->sh.rank == 0 || x->dt == TEENY_DT_PTR)
    return NULL;
  teeny_dtype dt = x->dt;
  if ((op == OP_MAX || op == OP_MIN || op == OP_ARGMAX || op == OP_ARGMIN) && !numeric(dt))
    return NULL;
  teeny_dtype rdt = op == OP_SUM || op == OP_CUMSUM ? g_sum_dtype(dt)
                  : op == OP_ARGMAX || op == OP_ARGMIN ? TEENY_DT_I32 : dt;
  dfz_op like = op;
  const char *fn = NULL;
  if (op == OP_REDUCE || op == OP_SCAN) {
    if (dt == TEENY_DT_BOOL)
      return NULL;
    fn = combine_fn(g, dt, &like);
    if (like == OP_MAX && strstr(fn, "amax")) {
      dfz_expr *ab = call1(g, OP_ABS, x);
      if (!ab)
        return NULL;
      like = OP_MAX;
      x = ab; /* only for the facts below */
    }
  }
  dfz_fact f;
  dfz_op fop = like == OP_SUM && op == OP_SCAN ? OP_CUMSUM : like;
  if (fop == OP_XOR) {
    f = dfz_fact_any(dt);
    if (x->f.err > 0)
      return NULL;
  } else if (!dfz_fact_op(fop, fop == OP_SUM || fop == OP_CUMSUM ? (fn ? dt : rdt) : rdt, dt,
                          &x->f, 1, n, &f)) {
    return NULL;
  }
  if (fn && (fop == OP_SUM || fop == OP_CUMSUM) && dfz_is_float(dt) && f.err > 0 &&
      dt != g_sum_dtype(dt))
    return NULL; /* a custom sum accumulates in dt itself: keep such sums exact */
  dfz_shape sh = x->sh;
  bool keep = op == OP_CUMSUM || op == OP_SCAN;
  if (!keep) {
    if (axis == -100) {
      sh = dfz_scalar_shape();
    } else { /* x's dims without the axis */
      int ax = axis < 0 ? axis + x->sh.rank : axis;
      sh.rank = 0;
      for (int d = 0; d < x->sh.rank; d++)
        if (d != ax)
          sh.d[sh.rank++] = x->sh.d[d];
    }
  }
  dfz_expr *e = node(g, EK_CALL, op, rdt, sh);
  e->a[0] = x;
  if (fn && strstr(fn, "amax"))
    e->a[0] = x->a[0]; /* undo the abs used for the facts */
  e->n = 1;
  e->iarg = axis;
  e->f = f;
  if (fn)
    e->text = (char *)fn;
  return e;
}

/* Source shape, axis (-100: all) and element count of a reduction to w.sh. */
static bool reduce_source(gen *g, gwant w, dfz_op op, dfz_shape *src, int *axis, long *n) {
  bool need_axis = op == OP_ARGMAX || op == OP_ARGMIN || op == OP_REDUCE;
  if (w.sh.rank == 0) {
    int d = other_dim(g, -1, 2, -1);
    if (d < 0)
      return false;
    *src = dfz_shape1(d);
    *axis = need_axis || dfz_chance(&g->r, 40) ? (dfz_chance(&g->r, 70) ? 0 : -1) : -100;
    if (!need_axis && dfz_chance(&g->r, 30)) {
      int d2 = other_dim(g, d, 2, d);
      if (d2 >= 0) {
        *src = dfz_shape2(d, d2);
        *axis = -100;
      }
    }
  } else {
    int d2 = other_dim(g, w.sh.d[0], 2, w.sh.d[0]);
    if (d2 < 0)
      return false;
    *axis = dfz_below(&g->r, 2);
    *src = *axis == 1 ? dfz_shape2(w.sh.d[0], d2) : dfz_shape2(d2, w.sh.d[0]);
    if (dfz_chance(&g->r, 25))
      *axis -= 2;
  }
  if (*axis == -100)
    *n = dfz_shape_elems(g->p, *src);
  else
    *n = g->p->dims[src->d[*axis < 0 ? *axis + src->rank : *axis]].value;
  return true;
}

/* Demands on a reduced or scanned operand of dtype dt over n elements
 * (acc_dt: the dtype the combination happens in). */
static void combine_want(gen *g, gwant *c, teeny_dtype acc_dt, long n, bool exact) {
  if (!dfz_is_float(c->dt))
    return;
  if (exact || !g->approx || dfz_chance(&g->r, 50)) {
    c->exact = true;
    c->intval = true;
    c->bound = floor(ldexp(1.0, dfz_precision(acc_dt)) / (double)n);
    if (c->bound > 64)
      c->bound = 64;
  } else {
    c->bound = 16;
  }
}

/* The operand (meeting c) of a reduction or scan op over n elements along
 * axis; acc_dt: the dtype sums accumulate in (VOID: not a sum). */
static dfz_expr *combined(gen *g, gwant c, dfz_op op, teeny_dtype acc_dt, int axis, long n,
                          int depth, dfz_feature f) {
  if (acc_dt != TEENY_DT_VOID) {
    combine_want(g, &c, acc_dt, n, c.exact);
    if (dfz_is_float(c.dt) && c.bound < 1)
      return NULL;
  }
  dfz_expr *x = gx(g, c, depth - 1);
  g_use(g, f);
  return reduction(g, op, x, axis, n);
}

static dfz_expr *p_reduce(gen *g, gwant w, int depth) {
  if (!g_on(g, DFZ_F_REDUCE) || g->in_helper || w.sh.rank > 1)
    return NULL;
  static const dfz_op ops[] = {OP_SUM, OP_SUM, OP_MAX, OP_MIN, OP_ARGMAX, OP_ARGMIN, OP_REDUCE};
  dfz_op op = ops[dfz_below(&g->r, 7)];
  dfz_shape src;
  int axis;
  long n;
  if (!reduce_source(g, w, op, &src, &axis, &n))
    return NULL;
  teeny_dtype dt = dfz_chance(&g->r, 60) ? w.dt : g_rand_dtype(g);
  if (dt == TEENY_DT_BOOL && op != OP_SUM)
    dt = TEENY_DT_I32;
  gwant c = g_want(dt, src);
  c.exact_shape = true;
  c.exact = w.exact || dfz_is_int(dt) || op == OP_ARGMAX || op == OP_ARGMIN;
  if ((op == OP_ARGMAX || op == OP_ARGMIN) && dfz_is_float(dt))
    c.bound = 1000;
  bool sums = op == OP_SUM || op == OP_REDUCE;
  return combined(g, c, op, sums ? (op == OP_REDUCE ? dt : g_sum_dtype(dt)) : TEENY_DT_VOID,
                  axis, n, depth, DFZ_F_REDUCE);
}

static dfz_expr *p_scan(gen *g, gwant w, int depth) {
  if (!g_on(g, DFZ_F_SCAN) || g->in_helper || w.sh.rank == 0)
    return NULL;
  dfz_shape src = w.sh;
  int axis = dfz_below(&g->r, src.rank);
  if (src.d[axis] == DFZ_DIM_ONE)
    return NULL;
  long n = g->p->dims[src.d[axis]].value;
  if (dfz_chance(&g->r, 20))
    axis -= src.rank;
  dfz_op op = dfz_chance(&g->r, 65) ? OP_CUMSUM : OP_SCAN;
  teeny_dtype dt = dfz_chance(&g->r, 60) ? w.dt : g_rand_dtype(g);
  if (op == OP_SCAN && dt == TEENY_DT_BOOL)
    dt = TEENY_DT_I16;
  gwant c = g_want(dt, src);
  c.exact_shape = true;
  c.exact = w.exact || dfz_is_int(dt);
  return combined(g, c, op, op == OP_SCAN ? dt : g_sum_dtype(dt), axis, n, depth, DFZ_F_SCAN);
}

/* Two operands of shape sh joined by op (join, interleave, cat) into r. */
static dfz_expr *joined(gen *g, dfz_op op, gwant c, dfz_shape sh, dfz_shape r, int depth) {
  c.sh = sh;
  dfz_expr *a = gx(g, c, depth - 1), *b = gx(g, c, depth - 1);
  if (!a || !b)
    return NULL;
  dfz_expr *e = node(g, EK_CALL, op, c.dt, r);
  e->a[0] = a;
  e->a[1] = b;
  e->n = 2;
  e->f = dfz_fact_hull(a->f, b->f);
  g_use(g, DFZ_F_SHAPE);
  return e;
}

/* A literal dim of value v (binding-independent: "8"), or -1. */
static int literal_dim(gen *g, int v) {
  if (v < 1 || g->p->ndims >= DFZ_MAX_DIMS - 1)
    return -1;
  return v == 1 ? DFZ_DIM_ONE : dfz_dim_get(g->p, -1, -1, v);
}

/* sh built from two halves: interleave or cat of [n/2] tiles, cat of
 * [v0/2, d1] tiles along axis 0, or a reshape of join(a[n/2], b[n/2]). */
static dfz_expr *p_join(gen *g, gwant c, dfz_shape sh, int depth) {
  long v0 = g_dim_value(g, sh.d[0]), n = sh.rank == 1 ? v0 : v0 * g_dim_value(g, sh.d[1]);
  if (n < 2)
    return NULL;
  int h = literal_dim(g, (int)(n / 2)), two = literal_dim(g, 2);
  if (h < 0 || two < 0)
    return NULL;
  switch (dfz_below(&g->r, 3)) {
  case 0:
    if (sh.rank == 1)
      return joined(g, dfz_chance(&g->r, 50) ? OP_INTERLEAVE : OP_CAT, c, dfz_shape1(h), sh, depth);
    if (v0 >= 2) {
      int h0 = literal_dim(g, (int)(v0 / 2));
      if (h0 >= 0)
        return joined(g, OP_CAT, c, dfz_shape2(h0, sh.d[1]), sh, depth);
    }
    return NULL;
  default: {
    dfz_expr *j = joined(g, OP_JOIN, c, dfz_shape1(h), dfz_shape2(h, two), depth);
    return view(g, OP_RESHAPE, j, sh);
  }
  }
}

/* histogram(x, bins [, mask]) for an i32 [bins]: x an integer tile of
 * small values around [0, bins). */
static dfz_expr *p_histogram(gen *g, gwant w, int depth) {
  int nb = g_dim_value(g, w.sh.d[0]);
  int dx = dfz_chance(&g->r, 50) ? (g->lay == LAY_1D ? g->dB : g->dBM) : w.sh.d[0];
  if (w.bound > 0 && g_dim_value(g, dx) > w.bound)
    return NULL;
  static const teeny_dtype dts[] = {TEENY_DT_I32, TEENY_DT_U8, TEENY_DT_I64, TEENY_DT_I16,
                                    TEENY_DT_U32};
  gwant c = g_want(dts[dfz_below(&g->r, 5)], dfz_shape1(dx));
  c.exact = true;
  c.exact_shape = true;
  c.bound = nb + 3;
  dfz_expr *x = gx(g, c, depth - 1);
  if (!x)
    return NULL;
  dfz_expr *e = node(g, EK_CALL, OP_HISTOGRAM, TEENY_DT_I32, w.sh);
  e->a[0] = x;
  e->n = 1;
  if (dfz_chance(&g->r, 30)) {
    gwant mw = g_want(TEENY_DT_BOOL, dfz_shape1(dx));
    mw.exact = true;
    dfz_expr *m = gx(g, mw, 2);
    if (m && m->sh.rank <= 1 && g_fits(m->sh, x->sh))
      e->a[e->n++] = m;
  }
  e->f = dfz_fact_range(0, g_dim_value(g, dx), true);
  g_use(g, DFZ_F_SHAPE);
  return e;
}

/* op(x) of a value x of shape sh that op only reorders (sort, flip). */
static dfz_expr *reordered(gen *g, dfz_op op, gwant c, dfz_shape sh, int depth) {
  c.sh = sh;
  dfz_expr *x = gx(g, c, depth - 1);
  if (!x)
    return NULL;
  dfz_expr *e = node(g, EK_CALL, op, c.dt, sh);
  e->a[0] = x;
  e->n = 1;
  e->f = x->f;
  g_use(g, DFZ_F_SHAPE);
  return e;
}

/* sort(x [, descending]) or flip(x [, axis]) of a value of sh, or
 * gather(src, index, axis) with src of sh or of another size along the
 * axis and small integer indices around [0, n) (some out of range: they
 * give 0). */
static dfz_expr *p_gather(gen *g, gwant c, dfz_shape sh, int depth) {
  int axis = sh.rank == 2 ? dfz_below(&g->r, 2) : 0;
  if (dfz_chance(&g->r, 30)) { /* sort(x [, true]) */
    dfz_expr *e = reordered(g, OP_SORT, c, sh, depth);
    if (e && dfz_chance(&g->r, 40))
      e->text = dfz_chance(&g->r, 70) ? "true" : "false";
    return e;
  }
  if (dfz_chance(&g->r, 40)) {
    dfz_expr *e = reordered(g, OP_FLIP, c, sh, depth);
    if (!e)
      return NULL;
    e->iarg = dfz_chance(&g->r, 50) ? -100 : sh.rank == 2 && dfz_chance(&g->r, 50) ? axis - 2 : axis;
    return e;
  }
  dfz_shape ss = sh;
  if (dfz_chance(&g->r, 40)) { /* a source of another length along the axis */
    int len = 1 << dfz_range(&g->r, 0, 6);
    int d = literal_dim(g, len);
    if (d < 0 || (long)len * (sh.rank == 2 ? g_dim_value(g, sh.d[1 - axis]) : 1) > G_MAX_TILE)
      return NULL;
    ss.d[axis] = d;
  }
  c.sh = ss;
  dfz_expr *src = gx(g, c, depth - 1);
  static const teeny_dtype its[] = {TEENY_DT_I32, TEENY_DT_I64, TEENY_DT_U8, TEENY_DT_I16};
  gwant iw = g_want(its[dfz_below(&g->r, 4)], sh);
  iw.exact = true;
  iw.exact_shape = true;
  iw.bound = g_dim_value(g, ss.d[axis]) + 2;
  dfz_expr *idx = gx(g, iw, 2);
  if (!src || !idx || !dfz_shape_eq(idx->sh, sh))
    return NULL;
  dfz_expr *e = node(g, EK_CALL, OP_GATHER, c.dt, sh);
  e->a[0] = src;
  e->a[1] = idx;
  e->n = 2;
  e->iarg = axis;
  e->f = dfz_fact_hull(src->f, dfz_fact_const(0));
  g_use(g, DFZ_F_SHAPE);
  return e;
}

/* ---- tiles of rank 3 and 4 --------------------------------------------------------------
 * A 2-D value [d0, d1] by way of a tile of rank 3: lifted (joined with a
 * second value, a dim split by a reshape, or a new axis broadcast), moved
 * about (flip, sort, a permute or trans and its inverse, a join into rank
 * 4 reduced back, a maximum with a broadcast of a 2-D value), and brought
 * back (a reduction along the new axis, or the reshape back).  Each step
 * reorders values or combines them exactly, so the facts follow. */

static dfz_expr *permuted(gen *g, dfz_op op, dfz_expr *x, const int *perm) {
  dfz_shape sh = x->sh;
  int code = 0;
  for (int i = 0; i < x->sh.rank; i++) {
    sh.d[i] = x->sh.d[perm[i]];
    code |= perm[i] << (2 * i);
  }
  dfz_expr *e = view(g, op, x, sh);
  e->iarg = code;
  return e;
}

/* x through permute (or trans, spelt with its dims) by a random order, a
 * flip along one of its axes there, and the inverse order. */
static dfz_expr *permute_round_trip(gen *g, dfz_expr *x) {
  int r = x->sh.rank, perm[4] = {0, 1, 2, 3}, inv[4];
  for (int i = r - 1; i > 0; i--) {
    int j = dfz_below(&g->r, i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < r; i++)
    inv[perm[i]] = i;
  dfz_expr *y = permuted(g, dfz_chance(&g->r, 50) ? OP_PERMUTE : OP_TRANS, x, perm);
  if (dfz_chance(&g->r, 50)) {
    y = view(g, OP_FLIP, y, y->sh);
    y->iarg = dfz_below(&g->r, r);
  }
  return permuted(g, dfz_chance(&g->r, 50) ? OP_PERMUTE : OP_TRANS, y, inv);
}

/* One shape-keeping step on the rank-3 tile x. */
static dfz_expr *rank3_step(gen *g, gwant c, dfz_expr *x, int depth) {
  int r = x->sh.rank;
  switch (dfz_below(&g->r, 5)) {
  case 0: {
    dfz_expr *e = view(g, OP_FLIP, x, x->sh);
    e->iarg = dfz_chance(&g->r, 25) ? -100 : dfz_below(&g->r, r);
    return e;
  }
  case 1: {
    dfz_expr *e = view(g, OP_SORT, x, x->sh);
    if (dfz_chance(&g->r, 40))
      e->text = "true";
    return e;
  }
  case 2:
    return permute_round_trip(g, x);
  case 3: { /* rank 4: join(x, flip(x)) [.., 2], then max or min over the pair */
    int two = literal_dim(g, 2);
    if (two < 0 || !numeric(x->dt))
      return x;
    dfz_expr *f = view(g, OP_FLIP, x, x->sh);
    f->iarg = dfz_below(&g->r, r);
    dfz_shape sh = x->sh;
    sh.d[sh.rank++] = two;
    dfz_expr *j = node(g, EK_CALL, OP_JOIN, x->dt, sh);
    j->a[0] = x;
    j->a[1] = f;
    j->n = 2;
    j->f = x->f;
    dfz_expr *e = reduction(g, dfz_chance(&g->r, 50) ? OP_MAX : OP_MIN, j, dfz_chance(&g->r, 50) ? 3 : -1, 2);
    return e ? e : x;
  }
  default: { /* maximum(x, a 2-D value broadcast along one axis) */
    int ax = dfz_below(&g->r, r);
    dfz_shape one = x->sh, flat = dfz_scalar_shape();
    one.d[ax] = DFZ_DIM_ONE;
    for (int d = 0; d < r; d++)
      if (d != ax)
        flat.d[flat.rank++] = x->sh.d[d];
    gwant cw = child(c, x->dt, flat);
    cw.exact_shape = true;
    dfz_expr *z = view(g, OP_EXPAND_DIMS, gx(g, cw, depth - 1), one);
    if (!z || !numeric(x->dt))
      return x;
    z->iarg = ax;
    dfz_expr *e = call2(g, dfz_chance(&g->r, 50) ? OP_MAXIMUM : OP_MINIMUM, x, gx_broadcast(g, z, x->sh));
    return e ? e : x;
  }
  }
}

static dfz_expr *p_rank3(gen *g, gwant w, int depth) {
  if (w.dt == TEENY_DT_PTR)
    return NULL;
  int d0 = w.sh.d[0], d1 = w.sh.d[1];
  gwant c = child(w, w.dt, w.sh);
  c.exact_shape = true;
  dfz_expr *x = NULL;
  int lift = dfz_below(&g->r, 3), axis = 2, a = -1, b = -1, e = -1;
  if (lift == 1) { /* reshape: d1 = a * b */
    for (int i = 1; i < g->p->ndims && a < 0; i++)
      for (int j = 1; j < g->p->ndims && a < 0; j++)
        if (g_dim_mul(g, i, j) == d1 && dfz_chance(&g->r, 60))
          a = i, b = j;
    if (a < 0)
      lift = 0;
  }
  if (lift == 2) { /* a new axis of e copies */
    e = dfz_chance(&g->r, 50) ? g->dE : literal_dim(g, 2);
    if (e < 0 || dfz_shape_elems(g->p, w.sh) * g->p->dims[e].value > G_MAX_TILE)
      lift = 0;
  }
  if (lift == 0) {
    int two = literal_dim(g, 2);
    if (two < 0 || dfz_shape_elems(g->p, w.sh) * 2 > G_MAX_TILE)
      return NULL;
    dfz_expr *p = gx(g, c, depth - 1), *q = gx(g, c, depth - 1);
    if (!p || !q)
      return NULL;
    x = node(g, EK_CALL, OP_JOIN, w.dt, dfz_shape3(d0, d1, two));
    x->a[0] = p;
    x->a[1] = q;
    x->n = 2;
    x->f = dfz_fact_hull(p->f, q->f);
  } else if (lift == 1) {
    x = view(g, OP_RESHAPE, gx(g, c, depth - 1), dfz_shape3(d0, a, b));
  } else {
    axis = dfz_below(&g->r, 3);
    dfz_shape one = dfz_shape3(d0, d1, DFZ_DIM_ONE), wide;
    if (axis < 2) {
      for (int d = 2; d > axis; d--)
        one.d[d] = one.d[d - 1];
      one.d[axis] = DFZ_DIM_ONE;
    }
    wide = one;
    wide.d[axis] = e;
    x = view(g, OP_EXPAND_DIMS, gx(g, c, depth - 1), one);
    if (x) {
      x->iarg = axis;
      x = gx_broadcast(g, x, wide);
    }
  }
  if (!x)
    return NULL;
  for (int steps = dfz_range(&g->r, 1, 3); steps > 0; steps--)
    x = rank3_step(g, c, x, depth);
  g_use(g, DFZ_F_RANK3);
  if (lift == 1)
    return view(g, OP_RESHAPE, x, w.sh);
  static const dfz_op back[] = {OP_MAX, OP_MIN, OP_SUM};
  dfz_op op = numeric(x->dt) ? back[dfz_below(&g->r, 3)] : OP_SUM;
  return reduction(g, op, x, dfz_chance(&g->r, 25) ? axis - 3 : axis,
                   g->p->dims[x->sh.d[axis]].value);
}

static dfz_expr *p_shape(gen *g, gwant w, int depth) {
  if (!g_on(g, DFZ_F_SHAPE) || g->in_helper || w.sh.rank == 0)
    return NULL;
  dfz_shape sh = w.sh;
  gwant c = child(w, w.dt, sh);
  c.exact_shape = true;
  if (sh.rank == 2 && g_on(g, DFZ_F_RANK3) && dfz_chance(&g->r, 40)) {
    dfz_expr *r3 = p_rank3(g, w, depth);
    if (r3)
      return r3;
  }
  if (sh.rank == 1 && dfz_is_int(w.dt) && dfz_chance(&g->r, 25)) {
    dfz_expr *h = p_histogram(g, w, depth);
    if (h && w.dt != TEENY_DT_I32)
      h = gx_cast(g, h, w.dt);
    if (h)
      return h;
  }
  if (dfz_chance(&g->r, 25)) {
    dfz_expr *j = p_join(g, c, sh, depth);
    if (j)
      return j;
  }
  if (dfz_chance(&g->r, 20) && w.dt != TEENY_DT_PTR) {
    dfz_expr *x = p_gather(g, c, sh, depth);
    if (x)
      return x;
  }
  if (sh.rank == 1) {
    /* [D] from a reshape of [Da, Db] with D = Da * Db, or of [1, D] */
    int d = sh.d[0];
    for (int a = 1; a < g->p->ndims; a++)
      for (int b = 1; b < g->p->ndims; b++)
        if (g_dim_mul(g, a, b) == d && dfz_chance(&g->r, 60)) {
          c.sh = dfz_shape2(a, b);
          g_use(g, DFZ_F_SHAPE);
          return view(g, dfz_chance(&g->r, 30) ? OP_RAVEL : OP_RESHAPE, gx(g, c, depth - 1), sh);
        }
    c.sh = dfz_chance(&g->r, 50) ? dfz_shape2(DFZ_DIM_ONE, d) : dfz_shape2(d, DFZ_DIM_ONE);
    g_use(g, DFZ_F_SHAPE);
    return view(g, OP_RESHAPE, gx(g, c, depth - 1), sh);
  }
  int d0 = sh.d[0], d1 = sh.d[1];
  g_use(g, DFZ_F_SHAPE);
  switch (dfz_below(&g->r, 6)) {
  case 0:
    if (d1 != DFZ_DIM_ONE)
      break;
    c.sh = dfz_shape1(d0);
    return gx_col(g, gx(g, c, depth - 1));
  case 1:
    if (d0 != DFZ_DIM_ONE)
      break;
    c.sh = dfz_shape1(d1);
    return gx_row(g, gx(g, c, depth - 1));
  case 2:
    c.sh = dfz_shape2(d1, d0);
    return view(g, OP_TRANS, gx(g, c, depth - 1), sh);
  case 3: {
    int m = g_dim_mul(g, d0, d1);
    if (m < 0)
      break;
    c.sh = dfz_shape1(m);
    return view(g, OP_RESHAPE, gx(g, c, depth - 1), sh);
  }
  case 4: {
    c.sh = dfz_chance(&g->r, 50) ? dfz_shape2(d0, DFZ_DIM_ONE) : dfz_shape2(DFZ_DIM_ONE, d1);
    c.exact_shape = true;
    dfz_expr *x = gx(g, c, depth - 1);
    return x ? view(g, OP_BROADCAST_TO, x, sh) : NULL;
  }
  default: {
    int ax = d0 == DFZ_DIM_ONE ? 0 : d1 == DFZ_DIM_ONE ? 1 : -1;
    if (ax < 0)
      break;
    c.sh = dfz_shape1(ax == 0 ? d1 : d0);
    dfz_expr *x = view(g, OP_EXPAND_DIMS, gx(g, c, depth - 1), sh);
    if (x)
      x->iarg = ax;
    return x;
  }
  }
  /* a 2-D tile as a broadcast of a column and a row */
  gwant ca = child(w, w.dt, dfz_shape2(d0, DFZ_DIM_ONE)), cb = child(w, w.dt, dfz_shape2(DFZ_DIM_ONE, d1));
  return gx_bin(g, OP_ADD, gx(g, ca, depth - 1), gx(g, cb, depth - 1));
}

static dfz_expr *p_dot(gen *g, gwant w, int depth) {
  if (g->in_helper || w.sh.rank != 2)
    return NULL;
  int d0 = w.sh.d[0], d1 = w.sh.d[1];
  if (g_dim_value(g, d0) < 16 || g_dim_value(g, d1) < 16)
    return NULL;
  if ((long)g_dim_value(g, d0) * g_dim_value(g, d1) > G_MAX_TILE)
    return NULL;
  int k = other_dim(g, -1, 16, g_dim_value(g, d0) > g_dim_value(g, d1) ? d0 : d1);
  if (k < 0)
    return NULL;
  static const teeny_dtype ops[] = {TEENY_DT_F16, TEENY_DT_BF16, TEENY_DT_I8, TEENY_DT_F32};
  teeny_dtype adt = ops[dfz_below(&g->r, 4)];
  if (adt == TEENY_DT_F32 && !g_on(g, DFZ_F_DOT_F32))
    adt = TEENY_DT_F16;
  if (adt != TEENY_DT_F32 && !g_on(g, DFZ_F_DOT))
    return NULL;
  teeny_dtype rdt = adt == TEENY_DT_I8 ? TEENY_DT_I32 : TEENY_DT_F32;
  long K = g_dim_value(g, k);
  gwant ca = g_want(adt, dfz_shape2(d0, k)), cb = g_want(adt, dfz_shape2(k, d1));
  ca.exact_shape = cb.exact_shape = true;
  bool exact = w.exact || !g->approx || adt == TEENY_DT_I8 || dfz_chance(&g->r, 50);
  ca.exact = cb.exact = exact;
  if (adt != TEENY_DT_I8) {
    ca.intval = cb.intval = exact;
    ca.bound = cb.bound = exact ? (adt == TEENY_DT_BF16 ? 8 : 16) : 4;
  }
  /* fp8 operands (bit 0: A, bit 1: B), each a cast of small exact f16
   * integers to f8e4m3 or f8e5m2: the fp8 tensor-core paths (mma.sync on
   * sm_89, the f16 casts elsewhere); the sums stay below 2^12, which the
   * fp8 instructions' narrower accumulation keeps exact */
  int f8 = 0;
  if (adt == TEENY_DT_F16 && exact && dfz_chance(&g->r, 40))
    f8 = dfz_chance(&g->r, 60) ? 3 : 1 + (int)dfz_below(&g->r, 2);
  if (f8 & 1)
    ca.bound = 4;
  if (f8 & 2)
    cb.bound = 4;
  dfz_expr *a = gx(g, ca, depth - 1), *b = gx(g, cb, depth - 1);
  for (int i = 0; i < 2 && a && b; i++) {
    dfz_expr **x = i ? &b : &a;
    teeny_dtype fmt = dfz_chance(&g->r, 50) ? TEENY_DT_F8E4M3 : TEENY_DT_F8E5M2;
    dfz_fact cf;
    if ((f8 >> i & 1) && dfz_fact_cast((*x)->dt, fmt, (*x)->f, &cf))
      *x = cast_node(g, *x, fmt, cf);
  }
  dfz_expr *acc = NULL;
  if (dfz_chance(&g->r, 50)) {
    gwant cc = g_want(rdt, w.sh);
    cc.exact_shape = true;
    cc.exact = exact;
    cc.intval = exact && rdt == TEENY_DT_F32;
    if (rdt == TEENY_DT_F32)
      cc.bound = 256;
    acc = gx(g, cc, depth - 1);
  }
  if (!a || !b)
    return NULL;
  dfz_fact fa[3] = {a->f, b->f, acc ? acc->f : dfz_fact_const(0)};
  dfz_fact f;
  static const char *const precs[] = {"prec_tf32", "prec_tf32x3", "prec_ieee"};
  int prec = DFZ_PREC_TF32;
  const char *opt = NULL;
  if (adt == TEENY_DT_F32 && g_on(g, DFZ_F_PREC) && dfz_chance(&g->r, 50)) {
    prec = dfz_below(&g->r, 3);
    /* prec_ieee takes the FMA path: each thread holds whole K rows of A
     * and columns of B, which large tiles on few warps cannot */
    long threads = 32L * g->p->meta.num_warps;
    long per_thread = ((long)g_dim_value(g, d0) + g_dim_value(g, d1)) * K * 4 / threads;
    if (prec == DFZ_PREC_IEEE && per_thread > 256)
      prec = DFZ_PREC_TF32X3;
    opt = precs[prec];
    g_use(g, DFZ_F_PREC);
  }
  if (!dfz_fact_dot(rdt, adt, fa, acc ? 3 : 2, K, prec, &f))
    return NULL;
  dfz_expr *e = node(g, EK_CALL, OP_DOT, rdt, w.sh);
  e->a[0] = a;
  e->a[1] = b;
  e->n = 2;
  if (acc)
    e->a[e->n++] = acc;
  e->f = f;
  e->text = (char *)opt;
  g_use(g, adt == TEENY_DT_F32 ? DFZ_F_DOT_F32 : DFZ_F_DOT);
  return e;
}

/* An element-wise helper function of 1-3 parameters, called here. */
static dfz_expr *p_helper(gen *g, gwant w, int depth) {
  if (!g_on(g, DFZ_F_HELPER) || g->in_helper || g->nhelpers >= 6 || depth < 2)
    return NULL;
  int na = dfz_range(&g->r, 1, 3);
  dfz_expr *args[3];
  for (int i = 0; i < na; i++) {
    teeny_dtype dt = dfz_chance(&g->r, 70) ? w.dt : g_rand_dtype(g);
    args[i] = gx(g, child(w, dt, i == 0 ? w.sh : sub_shape(g, w.sh)), depth - 1);
    if (!args[i])
      return NULL;
  }
  char *name = dfz_printf(&g->p->arena, "helper%d", g->nhelpers++);
  /* the body: element-wise over the parameters only */
  int saved_vars = g->nvars;
  bool saved_in = g->in_helper;
  dfz_block *saved_cur = g->cur;
  g->in_helper = true;
  char params[512];
  int off = 0;
  params[0] = '\0';
  gvar hidden[G_MAX_VARS];
  int nhidden = g->nvars;
  memcpy(hidden, g->vars, sizeof(gvar) * (size_t)nhidden);
  g->nvars = 0;
  for (int i = 0; i < na; i++) {
    char t[40];
    dfz_type_text(g->p, args[i]->dt, TEENY_DT_VOID, args[i]->sh.rank > 0, t, sizeof t);
    char *pn = dfz_printf(&g->p->arena, "%c", 'a' + i);
    off += snprintf(params + off, sizeof params - (size_t)off, "%s%s %s", i ? ", " : "", t, pn);
    g_var_add(g, pn, args[i]->dt, args[i]->sh, args[i]->f, false);
  }
  dfz_func *f = g_helper_new(g, name, "");
  g->cur = &f->body;
  gwant bw = w;
  bw.exact_shape = false;
  bw.sh = args[0]->sh;
  for (int i = 1; i < na; i++)
    g_broadcast(bw.sh, args[i]->sh, &bw.sh);
  if (dfz_chance(&g->r, 40)) {
    dfz_expr *t = gx(g, child(bw, w.dt, bw.sh), depth - 1);
    if (t) {
      dfz_stmt *d = dfz_stmt_new(g->p, SK_DECL);
      d->name = dfz_strdup(&g->p->arena, "t");
      d->dt = t->dt;
      d->tile = t->sh.rank > 0;
      d->e = t;
      g_emit(g, d);
      g_var_add(g, d->name, t->dt, t->sh, t->f, false);
    }
  }
  dfz_expr *body = gx(g, bw, depth - 1);
  dfz_stmt *r = dfz_stmt_new(g->p, SK_RETURN);
  r->e = body;
  g_emit(g, r);
  /* the result is a tile exactly when the body's value is one */
  char ret[40];
  dfz_type_text(g->p, w.dt, TEENY_DT_VOID, body->sh.rank > 0, ret, sizeof ret);
  f->sig = dfz_printf(&g->p->arena, "static %s %s(%s)", ret, name, params);
  /* restore the kernel's scope */
  memcpy(g->vars, hidden, sizeof(gvar) * (size_t)nhidden);
  g->nvars = saved_vars;
  g->in_helper = saved_in;
  g->cur = saved_cur;
  dfz_expr *e = node(g, EK_CALL, OP_CALL, w.dt, body->sh);
  e->text = name;
  for (int i = 0; i < na; i++)
    e->a[i] = args[i];
  e->n = na;
  e->f = body->f;
  g_use(g, DFZ_F_HELPER);
  return e;
}

static dfz_expr *p_load(gen *g, gwant w) {
  if (g->in_helper)
    return NULL;
  return g_load_input(g, w.dt, w.sh);
}

static dfz_expr *p_program(gen *g, gwant w) {
  if (g->in_helper || w.dt != TEENY_DT_I32)
    return NULL;
  dfz_expr *e = node(g, EK_CALL, dfz_chance(&g->r, 50) ? OP_PROGRAM_ID : OP_NUM_PROGRAMS,
                     TEENY_DT_I32, dfz_scalar_shape());
  e->iarg = dfz_below(&g->r, 2);
  unsigned lim = e->op == OP_PROGRAM_ID ? g->p->meta.grid[e->iarg] - 1 : g->p->meta.grid[e->iarg];
  e->f = dfz_fact_range(e->op == OP_PROGRAM_ID ? 0 : 1, lim, true);
  return e;
}

static dfz_expr *gx_try(gen *g, gwant w, int depth) {
  if (depth <= 0) {
    switch (dfz_below(&g->r, 10)) {
    case 0: case 1: case 2: case 3: return p_var(g, w);
    case 4: case 5: return p_load(g, w);
    case 6: return p_arange(g, w);
    case 7: return p_program(g, w);
    default: return p_lit(g, w);
    }
  }
  int k = dfz_below(&g->r, 100);
  if (k < 14) return p_var(g, w);
  if (k < 22) return p_load(g, w);
  if (k < 25) return p_lit(g, w);
  if (k < 45) return p_binary(g, w, depth);
  if (k < 50) return p_unary(g, w, depth);
  if (k < 56) return p_minmax(g, w, depth);
  if (k < 62) return p_where(g, w, depth);
  if (k < 68) return p_cast(g, w, depth);
  if (k < 76 || (g->approx && dfz_is_float(w.dt) && dfz_chance(&g->r, 15)))
    return p_math(g, w, depth);
  if (k < 82) return p_reduce(g, w, depth);
  if (k < 85) return p_scan(g, w, depth);
  if (k < 91) return p_shape(g, w, depth);
  if (k < 94) return p_dot(g, w, depth);
  if (k < 97) return p_helper(g, w, depth);
  return p_arange(g, w);
}

dfz_expr *gx(gen *g, gwant w, int depth) {
  for (int attempt = 0; attempt < 6; attempt++) {
    dfz_expr *e = gx_try(g, w, attempt < 3 ? depth : depth / 2);
    e = gx_fix(g, e, w);
    if (e)
      return e;
  }
  return gx_fix(g, fallback(g, w), w);
}

dfz_expr *gx_forced(gen *g, gprod which, gwant w, int depth) {
  for (int attempt = 0; attempt < 4; attempt++) {
    dfz_expr *e = NULL;
    switch (which) {
    case GP_REDUCE: e = p_reduce(g, w, depth); break;
    case GP_SCAN: e = p_scan(g, w, depth); break;
    case GP_DOT: e = p_dot(g, w, depth); break;
    case GP_SHAPE: e = p_shape(g, w, depth); break;
    case GP_MATH: e = p_math(g, w, depth); break;
    case GP_RANK3: e = w.sh.rank == 2 && !g->in_helper ? p_rank3(g, w, depth) : NULL; break;
    case GP_HELPER: e = p_helper(g, w, depth); break;
    }
    e = gx_fix(g, e, w);
    if (e)
      return e;
  }
  return gx(g, w, depth);
}

