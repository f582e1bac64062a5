/*
 * tests/diff/gen_mem.c — where generated kernels read and write: pointer
 * expressions (a program's tile of a global array, its own slot of a
 * per-program region, a region every program reads, data-dependent
 * gathers), loads with masks and `other`, and stores that record their
 * tolerance in the buffer they write.  Every address is in bounds by
 * construction: a buffer's size is the largest extent any access needs,
 * and accesses past a logical size are masked.  Address expressions are
 * pinned, so the reducer never changes which elements a program touches.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/diff/gen_int.h"

dfz_expr *g_pin(dfz_expr *e) {
  if (e)
    e->pinned = true;
  return e;
}

static dfz_expr *var_named(gen *g, const char *name) {
  gvar *v = g_var_find(g, name);
  return v ? gx_var(g, v) : NULL;
}

dfz_expr *g_var_expr(gen *g, const char *name) { return var_named(g, name); }

int g_shape_dim(gen *g, dfz_shape sh) {
  if (sh.rank == 0)
    return DFZ_DIM_ONE;
  if (sh.rank == 1)
    return sh.d[0];
  if (sh.d[0] == DFZ_DIM_ONE)
    return sh.d[1];
  if (sh.d[1] == DFZ_DIM_ONE)
    return sh.d[0];
  return g_dim_mul(g, sh.d[0], sh.d[1]);
}

dfz_expr *g_ptr(gen *g, gbuf *b, dfz_expr *off) {
  dfz_expr *base = dfz_expr_new(g->p, EK_VAR, OP_CALL, TEENY_DT_PTR, dfz_scalar_shape());
  base->pointee = b->dt;
  base->text = dfz_strdup(&g->p->arena, g_buf_name(g, b)); /* params move when reduced */
  if (!off)
    return g_pin(base);
  dfz_expr *e = dfz_expr_new(g->p, EK_BIN, OP_ADD, TEENY_DT_PTR, off->sh);
  e->pointee = b->dt;
  e->a[0] = base;
  e->a[1] = off;
  e->n = 2;
  return g_pin(e);
}

dfz_expr *g_local_offs(gen *g, dfz_shape sh) {
  if (sh.rank == 0)
    return gx_weak_lit(g, TEENY_DT_I32, 0);
  if (sh.rank == 1)
    return gx_arange(g, sh.d[0]);
  if (sh.d[0] == DFZ_DIM_ONE)
    return gx_row(g, gx_arange(g, sh.d[1]));
  if (sh.d[1] == DFZ_DIM_ONE)
    return gx_col(g, gx_arange(g, sh.d[0]));
  dfz_expr *r = gx_bin(g, OP_MUL, gx_col(g, gx_arange(g, sh.d[0])), gx_dim_lit(g, sh.d[1]));
  return gx_bin(g, OP_ADD, r, gx_row(g, gx_arange(g, sh.d[1])));
}

dfz_expr *g_slot_ptr(gen *g, gbuf *b, dfz_shape sh, int elems_dim) {
  dfz_expr *base = gx_bin(g, OP_MUL, var_named(g, "pid"), gx_dim_lit(g, elems_dim));
  dfz_expr *off = sh.rank == 0 ? base : gx_bin(g, OP_ADD, base, g_local_offs(g, sh));
  g_buf_need(b, g->nprog * g_dim_value(g, elems_dim));
  return g_ptr(g, b, off);
}

/* The program's tile of a global array: [B] in 1-D, [BM, BN] in 2-D. */
static dfz_expr *global_ptr(gen *g, gbuf *b, dfz_expr **mask) {
  if (g->lay == LAY_1D) {
    g_buf_need(b, g->n);
    *mask = g_pin(var_named(g, "mask"));
    return g_ptr(g, b, var_named(g, "offs"));
  }
  g_buf_need(b, (g->R - 1) * g->S + g->C);
  *mask = g_pin(var_named(g, "mask"));
  dfz_expr *r = gx_bin(g, OP_MUL, gx_col(g, var_named(g, "rm")), var_named(g, "S"));
  return g_ptr(g, b, gx_bin(g, OP_ADD, r, gx_row(g, var_named(g, "rn"))));
}

/* Values a masked-off lane of a load may read instead (implicitly converted). */
static dfz_expr *other_value(gen *g, gbuf *b, dfz_fact *f) {
  long v = dfz_chance(&g->r, 50) ? 0 : dfz_range(&g->r, 1, 3);
  if (b->dt == TEENY_DT_BOOL) {
    *f = dfz_fact_const(v & 1);
    return gx_int_lit(g, TEENY_DT_BOOL, v & 1);
  }
  if ((dfz_is_signed(b->dt) || dfz_is_float(b->dt)) && dfz_chance(&g->r, 30))
    v = -v;
  *f = dfz_fact_const((double)v);
  return gx_weak_lit(g, b->dt, v);
}

/* Cache and eviction options for a load or a store (hints: the values are
 * the same), or NULL. */
static const char *hint_options(gen *g, bool load) {
  static const char *const lc[] = {"cache_ca", "cache_cg", "cache_cs", "cache_cv"};
  static const char *const sc[] = {"cache_wb", "cache_cg", "cache_cs", "cache_wt"};
  static const char *const ev[] = {"evict_normal", "evict_first", "evict_last"};
  if (!g_on(g, DFZ_F_HINT) || !dfz_chance(&g->r, 12))
    return NULL;
  g_use(g, DFZ_F_HINT);
  const char *c = dfz_chance(&g->r, 70) ? (load ? lc : sc)[dfz_below(&g->r, 4)] : NULL;
  const char *e = dfz_chance(&g->r, 50) ? ev[dfz_below(&g->r, 3)] : NULL;
  if (c && e)
    return dfz_chance(&g->r, 50) ? dfz_printf(&g->p->arena, "%s, %s", c, e)
                                 : dfz_printf(&g->p->arena, "%s, %s", e, c);
  return c ? c : e ? e : "evict_last";
}

dfz_expr *g_load_node(gen *g, gbuf *b, dfz_expr *ptr, dfz_expr *mask, bool other) {
  dfz_expr *e = dfz_expr_new(g->p, EK_CALL, OP_LOAD, b->dt, ptr->sh);
  e->a[0] = ptr;
  e->n = 1;
  e->f = b->cls;
  if (mask) {
    if (!dfz_shape_eq(mask->sh, ptr->sh) && !g_fits(mask->sh, ptr->sh))
      return NULL;
    e->a[e->n++] = mask;
    if (other) {
      dfz_fact of;
      e->a[e->n++] = other_value(g, b, &of);
      e->f = dfz_fact_hull(e->f, of);
    } else {
      e->f = dfz_fact_hull(e->f, dfz_fact_const(0));
    }
  }
  e->text = (char *)hint_options(g, true);
  return e;
}

dfz_expr *g_index(gen *g, dfz_shape sh, long len) {
  gwant w = g_want(TEENY_DT_I32, sh);
  w.exact = true;
  w.exact_shape = true;
  dfz_expr *x = gx(g, w, 2);
  dfz_expr *l = gx_weak_lit(g, TEENY_DT_I32, len);
  dfz_expr *m = gx_bin(g, OP_REM, x, l);
  m = gx_bin(g, OP_ADD, m, gx_weak_lit(g, TEENY_DT_I32, len));
  return g_pin(gx_bin(g, OP_REM, m, gx_weak_lit(g, TEENY_DT_I32, len)));
}

dfz_expr *g_index_dim(gen *g, dfz_shape sh, int dim) {
  gwant w = g_want(TEENY_DT_I32, sh);
  w.exact = true;
  w.exact_shape = true;
  dfz_expr *x = gx(g, w, 2);
  dfz_expr *m = gx_bin(g, OP_REM, x, gx_dim_lit(g, dim));
  m = gx_bin(g, OP_ADD, m, gx_dim_lit(g, dim));
  return g_pin(gx_bin(g, OP_REM, m, gx_dim_lit(g, dim)));
}

/* A data-dependent mask of shape sh (exact). */
static dfz_expr *data_mask(gen *g, dfz_shape sh) {
  gwant w = g_want(TEENY_DT_BOOL, sh);
  w.exact = true;
  return gx(g, w, 2);
}

/* Shapes a slot load can have so that it broadcasts to sh. */
static dfz_shape slot_shape(gen *g, dfz_shape sh) {
  if (sh.rank == 2 && g_dim_mul(g, sh.d[0], sh.d[1]) < 0)
    return dfz_shape1(sh.d[1]);
  return sh;
}

dfz_expr *g_load_input(gen *g, teeny_dtype dt, dfz_shape sh) {
  if (dfz_chance(&g->r, 25))
    dt = g_rand_dtype(g); /* cast by the caller */
  if (g_on(g, DFZ_F_DESC) && dfz_chance(&g->r, 10)) {
    dfz_expr *e = g_desc_load(g, dt, sh);
    if (e)
      return e;
  }
  gbuf *b = g_buf_input(g, dt);
  int k = dfz_below(&g->r, 10);
  dfz_expr *mask = NULL, *p = NULL;
  bool other = dfz_chance(&g->r, 60);
  if (k < 4 && sh.rank > 0) {
    /* the program's tile of the global array, masked at the edges */
    dfz_shape gs = g->lay == LAY_1D ? dfz_shape1(g->dB) : dfz_shape2(g->dBM, g->dBN);
    if (g_fits(gs, sh)) {
      p = global_ptr(g, b, &mask);
    } else if (g->lay == LAY_2D && g_fits(dfz_shape1(g->dBN), sh)) {
      g_buf_need(b, g->C);
      p = g_ptr(g, b, var_named(g, "rn"));
      mask = g_pin(gx_bin(g, OP_LT, var_named(g, "rn"), var_named(g, "C")));
    } else if (g->lay == LAY_2D && g_fits(dfz_shape2(g->dBM, DFZ_DIM_ONE), sh)) {
      g_buf_need(b, g->R);
      p = g_ptr(g, b, gx_col(g, var_named(g, "rm")));
      mask = g_pin(gx_col(g, gx_bin(g, OP_LT, var_named(g, "rm"), var_named(g, "R"))));
    }
  }
  if (!p && k >= 8 && g_on(g, DFZ_F_GATHER)) {
    long len = 1 + dfz_below(&g->r, 300);
    g_buf_need(b, len);
    p = g_ptr(g, b, g_index(g, dfz_chance(&g->r, 30) ? dfz_scalar_shape() : sh, len));
    g_use(g, DFZ_F_GATHER);
  }
  if (!p) {
    dfz_shape ls = slot_shape(g, sh);
    int ed = g_shape_dim(g, ls);
    if (ed < 0)
      return NULL;
    if (dfz_chance(&g->r, 70)) {
      p = g_slot_ptr(g, b, ls, ed);
    } else { /* a region every program reads */
      g_buf_need(b, g_dim_value(g, ed));
      p = g_ptr(g, b, ls.rank ? g_local_offs(g, ls) : gx_weak_lit(g, TEENY_DT_I32, 0));
    }
    if (dfz_chance(&g->r, 25) && ls.rank > 0) {
      mask = data_mask(g, ls);
      if (mask && !g_fits(mask->sh, p->sh))
        mask = NULL;
    }
  }
  if (!p)
    return NULL;
  return g_load_node(g, b, p, mask, other);
}

static gbuf *buf_named(gen *g, const char *name) {
  for (int i = 0; i < g->nbufs; i++)
    if (strcmp(g_buf_name(g, &g->bufs[i]), name) == 0)
      return &g->bufs[i];
  return NULL;
}

unsigned g_taint(gen *g, const dfz_expr *e) {
  if (!e)
    return 0;
  unsigned t = 0;
  if (e->kind == EK_VAR) {
    gvar *v = g_var_find(g, e->text);
    return v ? v->taint : 0;
  }
  if (e->kind == EK_BIN && e->op == OP_REM && dfz_is_float(e->dt))
    t |= G_T_FREM;
  if (e->kind == EK_CALL && e->op == OP_TANH)
    t |= G_T_TANH;
  if (e->kind == EK_CALL && e->op >= OP_LOAD && e->op <= OP_ATOMIC_CAS && e->n > 0) {
    const dfz_expr *p = e->a[0];
    const dfz_expr *base = p->kind == EK_BIN ? p->a[0] : p;
    gbuf *b = base && base->kind == EK_VAR ? buf_named(g, base->text) : NULL;
    if (b)
      t |= b->taint;
    if (e->op != OP_LOAD)
      t |= G_T_ATOMIC;
  }
  for (int i = 0; i < e->n; i++)
    t |= g_taint(g, e->a[i]);
  return t;
}

/* What a buffer's mismatch would be about, from the taints of its stores. */
void g_taint_cat(gen *g, gbuf *b, unsigned t) {
  char *cat = g->p->meta.params[b->pi].cat;
  static const struct { unsigned bit; const char *name; } order[] = {
      {G_T_ORDER, "order"}, {G_T_UNIFORM, "uniform"}, {G_T_FREM, "frem"}, {G_T_TANH, "tanh"}};
  /* the first taint in this order wins, and an earlier one is never replaced */
  int have = 4;
  for (int i = 0; i < 4; i++)
    if (strcmp(cat, order[i].name) == 0)
      have = i;
  for (int i = 0; i < have; i++)
    if (t & order[i].bit) {
      snprintf(cat, DFZ_NAME_LEN, "%s", order[i].name);
      return;
    }
}

dfz_expr *g_store_node(gen *g, dfz_expr *ptr, dfz_expr *value, dfz_expr *mask) {
  dfz_expr *e = dfz_expr_new(g->p, EK_CALL, OP_STORE, TEENY_DT_VOID, ptr->sh);
  e->a[0] = ptr;
  e->a[1] = value;
  e->n = 2;
  if (mask)
    e->a[e->n++] = mask;
  e->text = (char *)hint_options(g, false);
  return e;
}

void g_store_emit(gen *g, gbuf *b, dfz_expr *store, const dfz_expr *value) {
  double tol = dfz_fact_store_tol(value->f, value->dt, b->dt);
  if (tol > b->tol)
    b->tol = tol;
  dfz_stmt *s = dfz_stmt_new(g->p, SK_EXPR);
  s->e = store;
  g_emit(g, s);
}

void g_store(gen *g, gbuf *b, dfz_expr *ptr, dfz_expr *value, dfz_expr *mask) {
  g_taint_cat(g, b, g_taint(g, value) | g_taint(g, mask) | g->ctl_taint);
  g_store_emit(g, b, g_store_node(g, ptr, value, mask), value);
}

/* A value for buffer dtype dt: exact when dt is an integer (the store converts). */
static dfz_expr *storable(gen *g, dfz_expr *v, teeny_dtype dt) {
  if (!v)
    return NULL;
  if (!dfz_is_float(dt) && v->f.err > 0)
    return NULL;
  if (dfz_is_float(dt) && v->f.err > 0 && !dfz_fact_finite(v->f))
    return NULL;
  return v;
}

teeny_dtype g_out_dtype(gen *g, const dfz_expr *value) {
  teeny_dtype dt = dfz_chance(&g->r, 80) ? value->dt : g_rand_dtype(g);
  if (!storable(g, (dfz_expr *)value, dt))
    dt = value->dt;
  return storable(g, (dfz_expr *)value, dt) ? dt : TEENY_DT_VOID;
}

/* A fresh output for value (its dtype, or another one the store converts
 * to), categorised as cat; NULL when value cannot be stored exactly. */
static gbuf *fresh_out(gen *g, dfz_expr *value, const char *cat) {
  teeny_dtype dt = g_out_dtype(g, value);
  if (dt == TEENY_DT_VOID)
    return NULL;
  gbuf *b = g_buf_new(g, "out", dt, BR_OUT);
  snprintf(g->p->meta.params[b->pi].cat, DFZ_NAME_LEN, "%s", cat);
  return b;
}

void g_store_slot(gen *g, dfz_expr *value, const char *cat) {
  if (!value)
    return;
  dfz_shape sh = value->sh;
  int ed = g_shape_dim(g, sh);
  gbuf *b = ed >= 0 ? fresh_out(g, value, cat) : NULL;
  if (!b)
    return;
  dfz_expr *p = g_slot_ptr(g, b, sh, ed);
  dfz_expr *mask = NULL;
  if (sh.rank > 0 && dfz_chance(&g->r, 20))
    mask = data_mask(g, sh);
  if (mask && !g_fits(mask->sh, sh))
    mask = NULL;
  g_store(g, b, p, value, mask);
}

void g_store_global(gen *g, dfz_expr *value, const char *cat) {
  if (value && g_on(g, DFZ_F_DESC) && dfz_chance(&g->r, 15) && g_desc_store(g, value, cat))
    return;
  gbuf *b = value ? fresh_out(g, value, cat) : NULL;
  if (!b)
    return;
  dfz_expr *mask = NULL;
  dfz_expr *p = global_ptr(g, b, &mask);
  if (dfz_chance(&g->r, 20)) {
    dfz_expr *m2 = data_mask(g, p->sh);
    dfz_expr *both = m2 && g_fits(m2->sh, p->sh) ? gx_bin(g, OP_AND, mask, m2) : NULL;
    if (both)
      mask = both;
  }
  g_store(g, b, p, value, mask);
}
