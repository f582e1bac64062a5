/*
 * tests/diff/gen_seg.c — the statement patterns a generated kernel is made
 * of, one function each: element-wise chains stored to the program's tile,
 * values declared for later use, reductions, scans, dots and shape
 * changes stored to per-program slots, if/else on uniform scalars, loops
 * with loop-carried values, atomics on owned and on shared addresses,
 * the memory-ordering patterns of issue 11 (a tile store then a load or
 * store of one element by another lane; a scalar load then a store of the
 * same flag; in-place updates through tiles of other shapes), a spin lock,
 * and void helpers that store.  Facts of variables assigned in branches
 * and loops are joined (hull) over every path and iteration.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/diff/gen_int.h"

/* ---- small builders ------------------------------------------------------------------------- */

static dfz_shape tile_shape(gen *g) {
  return g->lay == LAY_1D ? dfz_shape1(g->dB) : dfz_shape2(g->dBM, g->dBN);
}

/* A random shape for a value: the layout's tile, vectors, small 2-D, scalar. */
static dfz_shape rand_shape(gen *g) {
  int k = dfz_below(&g->r, 10);
  if (g->lay == LAY_1D) {
    if (k < 5) return dfz_shape1(g->dB);
    if (k < 6) return dfz_shape1(g->dE);
    if (k < 7 && g_on(g, DFZ_F_2D)) return dfz_shape2(g->dB, g->dE);
    if (k < 8 && g_on(g, DFZ_F_2D)) return dfz_shape2(g->dE, g->dB);
    return k < 9 ? dfz_shape1(g->dB) : dfz_scalar_shape();
  }
  if (k < 5) return dfz_shape2(g->dBM, g->dBN);
  if (k < 6) return dfz_shape1(g->dBM);
  if (k < 7) return dfz_shape1(g->dBN);
  if (k < 8) return dfz_shape2(g->dBN, g->dBM);
  if (k < 9) return dfz_shape2(g->dBM, g->dE);
  return dfz_scalar_shape();
}

static int depth_for(gen *g) { return dfz_range(&g->r, 2, 5); }

static dfz_stmt *decl_stmt(gen *g, const char *name, dfz_expr *e) {
  dfz_stmt *s = dfz_stmt_new(g->p, SK_DECL);
  s->name = (char *)name;
  s->dt = e->dt;
  s->pointee = e->pointee;
  s->tile = e->sh.rank > 0;
  s->e = e;
  return s;
}

/* Declare name = e in the current block and scope. */
static gvar *declare(gen *g, const char *prefix, dfz_expr *e, bool fixed) {
  char *name = g_name(g, prefix);
  g_emit(g, decl_stmt(g, name, e));
  gvar *v = g_var_add(g, name, e->dt, e->sh, e->f, fixed);
  v->taint = g_taint(g, e) | g->ctl_taint;
  return v;
}

static dfz_stmt *expr_stmt(gen *g, dfz_expr *e) {
  dfz_stmt *s = dfz_stmt_new(g->p, SK_EXPR);
  s->e = e;
  return s;
}

static dfz_expr *var_expr(gen *g, const char *name) {
  gvar *v = g_var_find(g, name);
  return v ? gx_var(g, v) : NULL;
}

static void set_cat(gen *g, gbuf *b, const char *cat) {
  snprintf(g->p->meta.params[b->pi].cat, DFZ_NAME_LEN, "%s", cat);
}

/* A uniform index into a slot of `dim` elements: its range follows the dim
 * when the reducer halves the consts. */
static dfz_expr *uniform_index(gen *g, int dim) { return g_index_dim(g, dfz_scalar_shape(), dim); }

/* The want for a value stored into a buffer whose every value has facts
 * cls (io buffers: exact integers in range, or any integer). */
static gwant class_want(teeny_dtype dt, dfz_shape sh, dfz_fact cls) {
  gwant w = g_want(dt, sh);
  w.exact = true;
  if (dfz_is_float(dt)) {
    w.intval = true;
    w.bound = fmin(-cls.lo, cls.hi);
  } else if (dfz_fact_finite(cls) && (cls.lo > dfz_min_value(dt) || cls.hi < dfz_max_finite(dt))) {
    w.bound = fmin(-cls.lo, cls.hi);
  }
  return w;
}

/* pid * elems + extra (a scalar offset into the program's slot). */
static dfz_expr *slot_elem(gen *g, gbuf *b, int elems_dim, dfz_expr *extra) {
  dfz_expr *base = gx_bin(g, OP_MUL, var_expr(g, "pid"), gx_dim_lit(g, elems_dim));
  g_buf_need(b, g->nprog * g_dim_value(g, elems_dim));
  return g_ptr(g, b, extra ? gx_bin(g, OP_ADD, base, extra) : base);
}

static dfz_expr *load_of(gen *g, gbuf *b, dfz_expr *ptr) { return g_load_node(g, b, ptr, NULL, false); }

static dfz_expr *store_of(gen *g, dfz_expr *ptr, dfz_expr *v, dfz_expr *mask) {
  return g_store_node(g, ptr, v, mask);
}

/* Facts snapshot of every variable in scope (for joining branches). */
typedef struct facts_snap {
  dfz_fact f[G_MAX_VARS];
  int n;
} facts_snap;

static void snap_take(gen *g, facts_snap *s) {
  s->n = g->nvars;
  for (int i = 0; i < g->nvars; i++)
    s->f[i] = g->vars[i].f;
}

static void snap_restore(gen *g, const facts_snap *s) {
  for (int i = 0; i < s->n && i < g->nvars; i++)
    g->vars[i].f = s->f[i];
}

static void snap_join(gen *g, const facts_snap *s) {
  for (int i = 0; i < s->n && i < g->nvars; i++)
    g->vars[i].f = dfz_fact_hull(g->vars[i].f, s->f[i]);
}

/* An assignment to a variable already in scope (not fixed, not hidden). */
static bool assign_some(gen *g) {
  int cand[G_MAX_VARS], n = 0;
  for (int i = g->assign_floor; i < g->nvars; i++)
    if (!g->vars[i].fixed && !g->vars[i].hidden && g->vars[i].dt != TEENY_DT_PTR)
      cand[n++] = i;
  if (n == 0)
    return false;
  gvar *v = &g->vars[cand[dfz_below(&g->r, n)]];
  gwant w = g_want(v->dt, v->sh);
  w.exact = v->f.err == 0 && dfz_chance(&g->r, 50) ? true : w.exact;
  dfz_expr *e = gx(g, w, depth_for(g));
  if (!e)
    return false;
  dfz_stmt *s = dfz_stmt_new(g->p, SK_ASSIGN);
  s->name = v->name;
  s->e = e;
  g_emit(g, s);
  v->f = e->f;
  v->taint |= g_taint(g, e) | g->ctl_taint;
  return true;
}

/* Trailing options of an atomic: a sem, a scope, both or none.  Atomics
 * that programs share take scope_gpu or scope_sys only: scope_cta atomics
 * of different programs are not atomic with each other. */
static const char *atomic_options(gen *g, bool shared) {
  static const char *const sems[] = {"sem_relaxed", "sem_acquire", "sem_release", "sem_acq_rel"};
  static const char *const scopes[] = {"scope_cta", "scope_gpu", "scope_sys"};
  if (!g_on(g, DFZ_F_SEM) || dfz_chance(&g->r, 40))
    return NULL;
  g_use(g, DFZ_F_SEM);
  const char *sem = dfz_chance(&g->r, 70) ? sems[dfz_below(&g->r, 4)] : NULL;
  const char *scope = dfz_chance(&g->r, 50) ? scopes[shared ? 1 + dfz_below(&g->r, 2) : dfz_below(&g->r, 3)]
                                            : NULL;
  if (sem && scope)
    return dfz_chance(&g->r, 50) ? dfz_printf(&g->p->arena, "%s, %s", sem, scope)
                                 : dfz_printf(&g->p->arena, "%s, %s", scope, sem);
  return sem ? sem : scope ? scope : "sem_acq_rel";
}

/* ---- patterns ------------------------------------------------------------------------------------ */

/* An element-wise value stored to the program's tile of a fresh output. */
static void seg_store(gen *g) {
  gwant w = g_want(g_rand_dtype(g), tile_shape(g));
  dfz_expr *v = gx(g, w, depth_for(g));
  if (dfz_chance(&g->r, 30)) {
    gvar *x = declare(g, "v", gx_broadcast(g, v, w.sh), false);
    v = gx_var(g, x);
  }
  g_store_global(g, v, "store");
}

/* A value of a random shape, declared for later patterns (and often stored). */
static void seg_decl(gen *g) {
  gwant w = g_want(g_rand_dtype(g), rand_shape(g));
  w.exact_shape = true;
  dfz_expr *v = gx(g, w, depth_for(g));
  gvar *x = declare(g, "v", v, false);
  if (dfz_chance(&g->r, 60))
    g_store_slot(g, gx_var(g, x), "store");
}

static void seg_forced(gen *g, gprod which, dfz_shape sh, const char *cat) {
  gwant w = g_want(g_rand_dtype(g), sh);
  if (which == GP_DOT)
    w.dt = dfz_chance(&g->r, 80) ? TEENY_DT_F32 : TEENY_DT_I32;
  dfz_expr *v = gx_forced(g, which, w, depth_for(g) + 1);
  if (dfz_chance(&g->r, 40)) {
    gvar *x = declare(g, "v", v, false);
    v = gx_var(g, x);
  }
  g_store_slot(g, v, cat);
}

static void seg_reduce(gen *g) {
  dfz_shape sh = dfz_scalar_shape();
  if (dfz_chance(&g->r, 50))
    sh = g->lay == LAY_1D ? dfz_shape1(dfz_chance(&g->r, 50) ? g->dB : g->dE)
                          : dfz_shape1(dfz_chance(&g->r, 50) ? g->dBM : g->dBN);
  seg_forced(g, GP_REDUCE, sh, "reduce");
}

static void seg_dot(gen *g) {
  /* 2-D shapes whose dims are at least 16 */
  int cand[4], n = 0;
  int ds[4] = {g->dB, g->dBM, g->dBN, g->dE};
  for (int i = 0; i < 4; i++)
    if (ds[i] > 0 && g_dim_value(g, ds[i]) >= 16)
      cand[n++] = ds[i];
  if (n == 0) {
    seg_reduce(g);
    return;
  }
  int a = cand[dfz_below(&g->r, n)], b = cand[dfz_below(&g->r, n)];
  if ((long)g_dim_value(g, a) * g_dim_value(g, b) > 4096) {
    seg_reduce(g);
    return;
  }
  seg_forced(g, GP_DOT, dfz_shape2(a, b), "dot");
}

/* if (uniform scalar) { ... } else { ... } with stores and assignments. */
static void seg_ctrl(gen *g) {
  gwant cw = g_want(TEENY_DT_BOOL, dfz_scalar_shape());
  cw.exact = true;
  dfz_expr *c = gx(g, cw, dfz_range(&g->r, 1, 3));
  dfz_stmt *s = dfz_stmt_new(g->p, SK_IF);
  s->e = c;
  /* one output both branches store to, at the same slot */
  dfz_shape sh = rand_shape(g);
  int ed = g_shape_dim(g, sh);
  teeny_dtype dt = g_rand_dtype(g);
  gbuf *b = ed >= 0 ? g_buf_new(g, "out", dt, BR_OUT) : NULL;
  if (b)
    set_cat(g, b, "ctrl");
  bool has_else = dfz_chance(&g->r, 60);
  facts_snap before, after_then;
  snap_take(g, &before);
  dfz_block *saved = g->cur;
  unsigned saved_taint = g->ctl_taint;
  g->ctl_taint |= g_taint(g, c);
  g->nest++;
  for (int branch = 0; branch < (has_else ? 2 : 1); branch++) {
    g->cur = branch == 0 ? &s->body : &s->els;
    g_scope_push(g);
    if (branch == 1) {
      snap_take(g, &after_then);
      snap_restore(g, &before);
    }
    int k = dfz_range(&g->r, 0, 2);
    for (int i = 0; i < k; i++) {
      if (dfz_chance(&g->r, 50) && assign_some(g))
        continue;
      if (g->nest < 3 && dfz_chance(&g->r, 30))
        g_segment(g);
      else
        seg_decl(g);
    }
    /* in a loop, the two branches' stores may meet at one address in
     * different iterations, from lanes of different layouts: "order" */
    bool may_store = branch == 0 || g->loop_depth == 0 || g_on(g, DFZ_F_ORDER);
    if (b && may_store && dfz_chance(&g->r, 85)) {
      gwant w = g_want(dt, sh);
      dfz_expr *v = gx(g, w, depth_for(g));
      if (v)
        g_store(g, b, g_slot_ptr(g, b, sh, ed), v, NULL);
    }
    if (branch == 0 && g->loop_depth == 0 && !has_else && dfz_chance(&g->r, 8)) {
      dfz_stmt *r = dfz_stmt_new(g->p, SK_RETURN); /* an early exit */
      g_emit(g, r);
      g->exited = true;
    }
    g_scope_pop(g);
  }
  if (has_else)
    snap_join(g, &after_then);
  else
    snap_join(g, &before);
  g->nest--;
  g->ctl_taint = saved_taint;
  g->cur = saved;
  g_emit(g, s);
  if (b)
    g_buf_need(b, 1);
  g_use(g, DFZ_F_CTRL);
}

/* The facts of a carried value after `trips` updates acc = op(acc, x). */
static bool carried_facts(gen *g, dfz_op op, teeny_dtype dt, dfz_fact f0, dfz_fact fx, int trips,
                          dfz_fact *out) {
  dfz_fact f = f0;
  for (int i = 0; i < trips; i++) {
    dfz_fact a[2] = {f, fx}, r;
    bool ok;
    ok = dfz_fact_op(op, dt, dt, a, 2, 1, &r);
    if (!ok)
      return false;
    f = dfz_fact_hull(f, r);
  }
  (void)g;
  *out = f;
  return true;
}

/* A loop's bound: trips itself, or min(a uniform value, trips) where the
 * value is a parameter or a scalar load (still uniform, never above trips). */
static dfz_expr *loop_bound(gen *g, int trips) {
  dfz_expr *lit = gx_int_lit(g, TEENY_DT_I32, trips);
  int k = dfz_below(&g->r, 10);
  dfz_expr *t = NULL;
  if (k < 3) {
    t = var_expr(g, g_var_find(g, "n") ? "n" : "R");
  } else if (k < 5) {
    gwant w = g_want(TEENY_DT_I32, dfz_scalar_shape());
    w.exact = true;
    t = g_load_input(g, TEENY_DT_I32, dfz_scalar_shape());
    t = t ? gx_fix(g, t, w) : NULL;
  }
  dfz_expr *mn = t ? gx_call(g, OP_MINIMUM, 2, (dfz_expr *[]){t, lit}) : NULL;
  return mn ? mn : lit;
}

/* A loop being generated: its kind, trip count, statement and counter. */
typedef struct gloop {
  int kind;           /* 0 for, 1 chunked for (off += B over n), 2 while, 3 do */
  int trips;          /* iterations at most */
  dfz_stmt *s;
  const char *kv;     /* the counter (k, off or it) */
  dfz_fact kf;        /* its facts inside the body */
  gvar *cols, *cmask; /* chunked loops: off + arange(0, B) and cols < n */
  int saved_floor;
  dfz_block *saved_cur;
} gloop;

/* Up to two carried values, declared before the loop, with their updates. */
static int loop_carried(gen *g, gvar **car, dfz_op *cop) {
  static const dfz_op ops[] = {OP_ADD, OP_ADD, OP_MAXIMUM, OP_MINIMUM, OP_XOR};
  int n = dfz_range(&g->r, 1, 2);
  for (int i = 0; i < n; i++) {
    dfz_shape sh = dfz_chance(&g->r, 30) ? dfz_scalar_shape() : tile_shape(g);
    teeny_dtype dt = g_rand_dtype(g);
    if (dt == TEENY_DT_BOOL)
      dt = TEENY_DT_I32;
    gwant w = g_want(dt, sh);
    w.exact_shape = true;
    w.exact = true;
    w.intval = dfz_is_float(dt);
    w.bound = dfz_is_float(dt) ? 8 : 0;
    car[i] = declare(g, "acc", gx(g, w, 2), false);
    cop[i] = ops[dfz_below(&g->r, dfz_is_float(dt) ? 4 : 5)];
  }
  return n;
}

/* The loop statement and its counter (a while/do counter is declared
 * before the loop and stepped last in the body). */
static void loop_statement(gen *g, gloop *L) {
  dfz_stmt *s;
  if (L->kind >= 2) {
    dfz_expr *z = gx_weak_lit(g, TEENY_DT_I32, 0);
    z->iarg = 0;
    char *it = g_name(g, "it");
    dfz_stmt *d = decl_stmt(g, it, z);
    d->pinned = true;
    g_emit(g, d);
    gvar *iv = g_var_add(g, it, TEENY_DT_I32, dfz_scalar_shape(), dfz_fact_range(0, L->trips, true), true);
    L->kv = iv->name;
    L->kf = dfz_fact_range(0, L->trips - 1, true);
    s = dfz_stmt_new(g->p, L->kind == 2 ? SK_WHILE : SK_DO);
    s->e = gx_bin(g, OP_LT, gx_var(g, iv), loop_bound(g, L->trips));
    s->e->pinned = true;
  } else {
    s = dfz_stmt_new(g->p, SK_FOR);
    s->name = g_name(g, L->kind == 1 ? "off" : "k");
    s->e = gx_int_lit(g, TEENY_DT_I32, 0);
    s->e->pinned = true;
    if (L->kind == 1) {
      s->e2 = var_expr(g, "n");
      s->step = g_dim_value(g, g->dB);
      s->step_text = g->p->dims[g->dB].text;
      L->kf = dfz_fact_range(0, (double)(L->trips - 1) * s->step, true);
    } else {
      s->e2 = loop_bound(g, L->trips);
      L->kf = dfz_fact_range(0, L->trips - 1, true);
    }
    s->e2->pinned = true;
    L->kv = s->name;
  }
  L->s = s;
}

/* Into the body: a scope, no assignments to outer variables, the counter. */
static void loop_enter(gen *g, gloop *L) {
  L->saved_cur = g->cur;
  g->cur = &L->s->body;
  g_scope_push(g);
  L->saved_floor = g->assign_floor;
  g->assign_floor = g->nvars;
  g->loop_depth++;
  g->nest++;
  if (L->kind < 2)
    g_var_add(g, L->kv, TEENY_DT_I32, dfz_scalar_shape(), L->kf, true);
  else
    g_var_find(g, L->kv)->f = L->kf;
  if (L->kind == 1) {
    L->cols = declare(g, "cols", gx_bin(g, OP_ADD, var_expr(g, L->kv), gx_arange(g, g->dB)), true);
    L->cmask = declare(g, "cmask", gx_bin(g, OP_LT, gx_var(g, L->cols), var_expr(g, "n")), true);
  }
}

static void loop_leave(gen *g, gloop *L) {
  if (L->kind >= 2) {
    dfz_stmt *inc = dfz_stmt_new(g->p, SK_ASSIGN);
    inc->name = (char *)L->kv;
    inc->aop = dfz_chance(&g->r, 50) ? "+=" : "=";
    inc->e = inc->aop[0] == '+' ? gx_int_lit(g, TEENY_DT_I32, 1)
                                : gx_bin(g, OP_ADD, var_expr(g, L->kv), gx_weak_lit(g, TEENY_DT_I32, 1));
    inc->e->pinned = true;
    inc->pinned = true;
    g_emit(g, inc);
  }
  g->nest--;
  g->loop_depth--;
  g->assign_floor = L->saved_floor;
  g_scope_pop(g);
  g->cur = L->saved_cur;
  g_emit(g, L->s);
  if (L->kind >= 2)
    g_var_find(g, L->kv)->f = dfz_fact_range(0, L->trips, true);
}

/* a = a op x for every trip (some trips only, a quarter of the time), with
 * the facts of the last trip; false if neither op nor max keeps them. */
static bool loop_update(gen *g, gloop *L, gvar *a, dfz_op op, dfz_expr *xi) {
  dfz_fact fin;
  if (!carried_facts(g, op, a->dt, a->f, xi->f, L->trips, &fin)) {
    op = OP_MAXIMUM;
    if (!carried_facts(g, op, a->dt, a->f, xi->f, L->trips, &fin))
      return false;
  }
  a->hidden = false;
  dfz_expr *rhs = op == OP_MAXIMUM || op == OP_MINIMUM ? gx_call(g, op, 2, (dfz_expr *[]){gx_var(g, a), xi})
                                                       : gx_bin(g, op, gx_var(g, a), xi);
  if (!rhs || !g_fits(rhs->sh, a->sh)) {
    a->hidden = true;
    return false;
  }
  dfz_stmt *as = dfz_stmt_new(g->p, SK_ASSIGN);
  as->name = a->name;
  as->e = rhs;
  a->f = fin;
  a->taint |= g_taint(g, rhs) | g->ctl_taint;
  if (dfz_chance(&g->r, 25)) {
    dfz_stmt *cond = dfz_stmt_new(g->p, SK_IF);
    cond->e = gx_bin(g, OP_EQ, gx_bin(g, OP_REM, var_expr(g, L->kv), gx_weak_lit(g, TEENY_DT_I32, 2)),
                     gx_weak_lit(g, TEENY_DT_I32, dfz_below(&g->r, 2)));
    dfz_block_add(g->p, &cond->body, as);
    g_emit(g, cond);
  } else {
    g_emit(g, as);
  }
  return true;
}

/* The trip's value stored to its own slot (chunked: the program's row). */
static void loop_store(gen *g, gloop *L, gvar *xv) {
  if (L->kind == 1) {
    gbuf *b = g_buf_new(g, "out", xv->dt, BR_OUT);
    set_cat(g, b, "loop");
    dfz_expr *row = gx_bin(g, OP_MUL, var_expr(g, "pid"), var_expr(g, "n"));
    g_buf_need(b, g->nprog * g->n);
    g_store(g, b, g_ptr(g, b, gx_bin(g, OP_ADD, row, gx_var(g, L->cols))), gx_var(g, xv),
            gx_var(g, L->cmask));
  } else if (L->kind == 0) {
    int ed = g_shape_dim(g, xv->sh);
    if (ed < 0)
      return;
    gbuf *b = g_buf_new(g, "out", xv->dt, BR_OUT);
    set_cat(g, b, "loop");
    /* (pid * trips + k) * elems + local */
    dfz_expr *it = gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, var_expr(g, "pid"), gx_weak_lit(g, TEENY_DT_I32, L->trips)),
                          var_expr(g, L->kv));
    dfz_expr *off = gx_bin(g, OP_MUL, it, gx_dim_lit(g, ed));
    if (xv->sh.rank > 0)
      off = gx_bin(g, OP_ADD, off, g_local_offs(g, xv->sh));
    g_buf_need(b, g->nprog * L->trips * g_dim_value(g, ed));
    g_store(g, b, g_ptr(g, b, off), gx_var(g, xv), NULL);
  }
}

/* A loop: for / chunked for / while / do, with carried accumulators.
 * The carried values are hidden inside the body but for their updates, so
 * every other value there has facts that hold on every trip. */
static void seg_loop(gen *g) {
  gloop L;
  memset(&L, 0, sizeof L);
  L.kind = dfz_below(&g->r, 4);
  if (L.kind == 1 && g->lay != LAY_1D)
    L.kind = 0;
  L.trips = L.kind == 1 ? (int)((g->n + g_dim_value(g, g->dB) - 1) / g_dim_value(g, g->dB))
                        : dfz_range(&g->r, 1, 5);
  gvar *car[2];
  dfz_op cop[2];
  int ncar = loop_carried(g, car, cop);
  loop_statement(g, &L);
  loop_enter(g, &L);
  for (int i = 0; i < ncar; i++)
    car[i]->hidden = true;
  /* the body: a local value, maybe nested patterns, the updates, a store */
  gwant xw = g_want(car[0]->dt, car[0]->sh);
  xw.exact = true;
  if (dfz_is_float(xw.dt)) {
    xw.intval = true;
    xw.bound = 4;
    if (g->approx && dfz_chance(&g->r, 40))
      xw.exact = xw.intval = false;
  }
  gvar *xv = declare(g, "x", gx(g, xw, depth_for(g)), false);
  if (g->nest < 3 && dfz_chance(&g->r, 25))
    g_segment(g);
  for (int i = 0; i < ncar; i++) {
    dfz_expr *xi = gx_var(g, xv);
    if (i > 0 || xv->dt != car[i]->dt) {
      gwant w = g_want(car[i]->dt, car[i]->sh);
      w.exact = true;
      w.intval = dfz_is_float(car[i]->dt);
      w.bound = dfz_is_float(car[i]->dt) ? 4 : 0;
      xi = gx_fix(g, xi, w);
      if (!xi)
        xi = gx(g, w, 2);
    }
    loop_update(g, &L, car[i], cop[i], xi);
  }
  if (dfz_chance(&g->r, 50) && g->loop_depth == 1)
    loop_store(g, &L, xv);
  loop_leave(g, &L);
  for (int i = 0; i < ncar; i++)
    car[i]->hidden = false;
  for (int i = 0; i < ncar; i++)
    if (g->loop_depth == 0 || dfz_chance(&g->r, 50))
      g_store_slot(g, gx_var(g, car[i]), "loop");
  g_use(g, DFZ_F_LOOP);
}

/* The dims of a matmul k loop: M, N, BK >= 16 (and <= 64), tiles <= 4096. */
static bool matmul_dims(gen *g, int *dm, int *dn, int *dk) {
  int ds[4] = {g->dB, g->dBM, g->dBN, g->dE}, cand[4], n = 0;
  for (int i = 0; i < 4; i++)
    if (ds[i] > 0 && g_dim_value(g, ds[i]) >= 16 && g_dim_value(g, ds[i]) <= 64)
      cand[n++] = ds[i];
  if (n == 0)
    return false;
  *dm = cand[dfz_below(&g->r, n)];
  *dn = cand[dfz_below(&g->r, n)];
  *dk = cand[dfz_below(&g->r, n)];
  long M = g_dim_value(g, *dm), N = g_dim_value(g, *dn), BK = g_dim_value(g, *dk);
  return M * BK <= 4096 && BK * N <= 4096 && M * N <= 4096;
}

/* An input operand of a matmul: small integers, or reals in [-1, 1]. */
static gbuf *matmul_operand(gen *g, const char *prefix, teeny_dtype dt, bool exact, long elems) {
  gbuf *x = g_buf_new(g, prefix, dt, BR_IN);
  dfz_param *px = &g->p->meta.params[x->pi];
  px->fill.kind = exact ? DFZ_FILL_INTS : DFZ_FILL_REALS;
  px->fill.lo = exact ? -4 : -1;
  px->fill.hi = exact ? 4 : 1;
  x->cls = dfz_fact_range(px->fill.lo, px->fill.hi, exact);
  g_buf_need(x, elems);
  return x;
}

/* A scalar i32 parameter (and variable) of value v. */
static gvar *scalar_arg(gen *g, const char *prefix, long v) {
  if (g->p->meta.nparams >= DFZ_MAX_PARAMS - 4)
    return NULL;
  char *name = g_name(g, prefix);
  dfz_param *pk = &g->p->meta.params[g->p->meta.nparams++];
  memset(pk, 0, sizeof *pk);
  snprintf(pk->name, sizeof pk->name, "%s", name);
  pk->dt = TEENY_DT_I32;
  pk->ival = v;
  return g_var_add(g, name, TEENY_DT_I32, dfz_scalar_shape(), dfz_fact_const((double)v), true);
}

/* A k loop as matmul writes it: tiles of pointers moved by BK (and BK * N)
 * every trip, the K edge masked, an accumulator carried through dot. */
static void seg_matmul(gen *g) {
  int dm, dn, dk;
  if (!matmul_dims(g, &dm, &dn, &dk)) {
    seg_dot(g);
    return;
  }
  long M = g_dim_value(g, dm), N = g_dim_value(g, dn), BK = g_dim_value(g, dk);
  static const teeny_dtype ops[] = {TEENY_DT_F16, TEENY_DT_BF16, TEENY_DT_I8, TEENY_DT_F32};
  teeny_dtype adt = ops[dfz_below(&g->r, 4)];
  if (adt == TEENY_DT_F32 && !g_on(g, DFZ_F_DOT_F32))
    adt = TEENY_DT_F16;
  teeny_dtype rdt = adt == TEENY_DT_I8 ? TEENY_DT_I32 : TEENY_DT_F32;
  long K = dfz_range(&g->r, 1, (int)(3 * BK));
  gvar *kv = scalar_arg(g, "K", K);
  if (!kv)
    return;
  bool exact = !g->approx || adt == TEENY_DT_I8 || dfz_chance(&g->r, 50);
  gbuf *a = matmul_operand(g, "a", adt, exact, M * K), *b = matmul_operand(g, "b", adt, exact, K * N);
  /* pa = a + col(rm) * K + row(rk); pb = b + col(rk) * N + row(rn) */
  dfz_expr *pa = g_ptr(g, a, gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, gx_col(g, gx_arange(g, dm)), gx_var(g, kv)),
                                    gx_row(g, gx_arange(g, dk))));
  dfz_expr *pb = g_ptr(g, b, gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, gx_col(g, gx_arange(g, dk)), gx_dim_lit(g, dn)),
                                    gx_row(g, gx_arange(g, dn))));
  gvar *va = declare(g, "pa", pa, false), *vb = declare(g, "pb", pb, false);
  gvar *acc = declare(g, "acc", gx_zeros(g, rdt, dfz_shape2(dm, dn)), false);
  gloop L;
  memset(&L, 0, sizeof L);
  L.trips = (int)((K + BK - 1) / BK);
  L.s = dfz_stmt_new(g->p, SK_FOR);
  L.s->name = g_name(g, "k");
  L.s->e = gx_int_lit(g, TEENY_DT_I32, 0);
  L.s->e2 = gx_var(g, kv);
  L.s->e->pinned = L.s->e2->pinned = true;
  L.s->step = (int)BK;
  L.s->step_text = g->p->dims[dk].text;
  L.kv = L.s->name;
  L.kf = dfz_fact_range(0, (double)((L.trips - 1) * BK), true);
  L.kind = 0;
  loop_enter(g, &L);
  /* the K edge: row(rk) < K - k for A, col(rk) < K - k for B */
  dfz_expr *left = gx_bin(g, OP_SUB, gx_var(g, kv), var_expr(g, L.kv));
  dfz_expr *ma = gx_bin(g, OP_LT, gx_row(g, gx_arange(g, dk)), left);
  dfz_expr *mb = gx_bin(g, OP_LT, gx_col(g, gx_arange(g, dk)), left);
  ma->pinned = mb->pinned = true;
  dfz_expr *la = g_load_node(g, a, gx_var(g, va), ma, false);
  dfz_expr *lb = g_load_node(g, b, gx_var(g, vb), mb, false);
  la->pinned = lb->pinned = true;
  dfz_fact fa[3] = {la->f, lb->f, acc->f}, fin = acc->f;
  bool ok = true;
  for (int t = 0; t < L.trips && ok; t++) {
    fa[2] = fin;
    ok = dfz_fact_dot(rdt, adt, fa, 3, BK, DFZ_PREC_TF32, &fin);
  }
  if (ok) {
    dfz_expr *d = dfz_expr_new(g->p, EK_CALL, OP_DOT, rdt, dfz_shape2(dm, dn));
    d->a[0] = la;
    d->a[1] = lb;
    d->a[2] = gx_var(g, acc);
    d->n = 3;
    d->f = fin;
    dfz_stmt *as = dfz_stmt_new(g->p, SK_ASSIGN);
    as->name = acc->name;
    as->e = d;
    g_emit(g, as);
    acc->f = fin;
  }
  /* pa += BK; pb += BK * N (pinned: the addresses) */
  dfz_stmt *ia = dfz_stmt_new(g->p, SK_ASSIGN), *ib = dfz_stmt_new(g->p, SK_ASSIGN);
  ia->name = va->name;
  ib->name = vb->name;
  ia->aop = ib->aop = "+=";
  ia->e = gx_dim_lit(g, dk);
  int kn_dim = g_dim_mul(g, dk, dn);
  ib->e = kn_dim >= 0 ? gx_dim_lit(g, kn_dim) : gx_bin(g, OP_MUL, gx_dim_lit(g, dk), gx_dim_lit(g, dn));
  ia->e->pinned = ib->e->pinned = ia->pinned = ib->pinned = true;
  g_emit(g, ia);
  g_emit(g, ib);
  loop_leave(g, &L);
  if (ok)
    g_store_slot(g, gx_var(g, acc), "dot");
  g_use(g, DFZ_F_DOT);
  g_use(g, DFZ_F_LOOP);
}

/* Atomics on addresses this program owns: old values are used. */
static void seg_atomic(gen *g) {
  static const dfz_op ops[] = {OP_ATOMIC_ADD, OP_ATOMIC_ADD, OP_ATOMIC_MAX, OP_ATOMIC_MIN,
                               OP_ATOMIC_XCHG, OP_ATOMIC_CAS};
  dfz_op op = ops[dfz_below(&g->r, 6)];
  static const teeny_dtype add_dt[] = {TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I64, TEENY_DT_U64,
                                       TEENY_DT_F32, TEENY_DT_F64, TEENY_DT_F16};
  static const teeny_dtype mm_dt[] = {TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I64, TEENY_DT_U64,
                                      TEENY_DT_F32};
  static const teeny_dtype x_dt[] = {TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I64, TEENY_DT_U64,
                                     TEENY_DT_F32, TEENY_DT_F64};
  teeny_dtype dt = op == OP_ATOMIC_ADD ? add_dt[dfz_below(&g->r, 7)]
                 : op == OP_ATOMIC_MAX || op == OP_ATOMIC_MIN ? mm_dt[dfz_below(&g->r, 5)]
                 : x_dt[dfz_below(&g->r, 6)];
  /* several atomics on one address from lanes of different layouts need
   * the ordering of issue 11's defect 2: only when "order" is on */
  int nops = g_on(g, DFZ_F_ORDER) ? dfz_range(&g->r, 1, 3) : 1;
  gbuf *at = g_buf_new(g, "at", dt, BR_ATOM);
  if (nops > 1)
    at->taint = G_T_ORDER;
  dfz_param *pa = &g->p->meta.params[at->pi];
  pa->fill.kind = DFZ_FILL_INTS;
  pa->fill.lo = dfz_is_signed(dt) || dfz_is_float(dt) ? -2 : 0;
  pa->fill.hi = 2;
  double lim = 2 + 4.0 * nops;
  at->cls = dfz_is_float(dt) ? dfz_fact_range(-lim, lim, true) : dfz_fact_any(dt);
  dfz_shape sh = dfz_chance(&g->r, 25) ? dfz_scalar_shape() : rand_shape(g);
  int ed = g_shape_dim(g, sh);
  if (ed < 0)
    sh = dfz_scalar_shape(), ed = DFZ_DIM_ONE;
  for (int i = 0; i < nops; i++) {
    gwant vw = g_want(dt, sh);
    vw.exact = true;
    vw.intval = dfz_is_float(dt);
    vw.bound = op == OP_ATOMIC_CAS || op == OP_ATOMIC_XCHG ? 2 : 4;
    if (!dfz_is_float(dt) && op != OP_ATOMIC_CAS && dfz_chance(&g->r, 50))
      vw.bound = 0;
    dfz_expr *v = gx(g, vw, 3);
    dfz_expr *e = dfz_expr_new(g->p, EK_CALL, op, dt, sh);
    e->a[e->n++] = g_slot_ptr(g, at, sh, ed);
    if (op == OP_ATOMIC_CAS) {
      gwant cw = vw;
      cw.bound = 2;
      e->a[e->n++] = gx(g, cw, 2);
    }
    e->a[e->n++] = v;
    e->text = (char *)atomic_options(g, false);
    if (sh.rank > 0 && dfz_chance(&g->r, 30)) { /* atomic_cas takes a mask too */
      gwant mw = g_want(TEENY_DT_BOOL, sh);
      mw.exact = true;
      dfz_expr *m = gx(g, mw, 2);
      if (m && g_fits(m->sh, sh))
        e->a[e->n++] = m;
    }
    e->f = at->cls;
    if (dfz_chance(&g->r, 80)) {
      gvar *old = declare(g, "old", e, false);
      g_store_slot(g, gx_var(g, old), nops > 1 ? "order" : "atomic");
    } else {
      g_emit(g, expr_stmt(g, e));
    }
  }
  set_cat(g, at, nops > 1 ? "order" : "atomic");
  g_use(g, DFZ_F_ATOMIC);
}

/* Commutative atomics on addresses many lanes and programs share. */
static void seg_atomic_shared(gen *g) {
  bool add = dfz_chance(&g->r, 65);
  static const teeny_dtype add_dt[] = {TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I64, TEENY_DT_F32,
                                       TEENY_DT_F64, TEENY_DT_F16, TEENY_DT_U64};
  static const teeny_dtype mm_dt[] = {TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I64, TEENY_DT_F32};
  teeny_dtype dt = add ? add_dt[dfz_below(&g->r, 7)] : mm_dt[dfz_below(&g->r, 4)];
  dfz_op op = add ? OP_ATOMIC_ADD : dfz_chance(&g->r, 50) ? OP_ATOMIC_MAX : OP_ATOMIC_MIN;
  gbuf *h = g_buf_new(g, "hist", dt, BR_SHARED);
  set_cat(g, h, "atomic_shared");
  long len = dfz_chance(&g->r, 30) ? 1 : dfz_range(&g->r, 2, 64);
  g_buf_need(h, len);
  int nops = dfz_range(&g->r, 1, 2);
  for (int i = 0; i < nops; i++) {
    dfz_shape sh = dfz_chance(&g->r, 25) ? dfz_scalar_shape() : tile_shape(g);
    long lanes = dfz_shape_elems(g->p, sh);
    gwant vw = g_want(dt, sh);
    vw.exact = true;
    if (dfz_is_float(dt)) {
      double room = ldexp(1.0, dfz_precision(dt) - 1) / (double)(g->nprog * lanes * nops);
      vw.intval = add;
      vw.bound = add ? floor(room) : 1000;
      if (vw.bound < 1) {
        vw.bound = 0.5; /* all zeros: still exercises the atomic */
      }
    }
    dfz_expr *v = gx(g, vw, 3);
    dfz_expr *idx;
    if (len == 1)
      idx = sh.rank ? gx_full(g, TEENY_DT_I32, 0, sh) : NULL;
    else
      idx = g_index(g, dfz_chance(&g->r, 70) ? sh : dfz_scalar_shape(), len);
    if (idx && !dfz_shape_eq(idx->sh, sh))
      idx = gx_broadcast(g, idx, sh);
    if (idx)
      idx->pinned = true;
    dfz_expr *p = g_ptr(g, h, idx);
    dfz_expr *e = dfz_expr_new(g->p, EK_CALL, op, dt, sh);
    e->a[e->n++] = p;
    e->a[e->n++] = v;
    if (sh.rank > 0 && dfz_chance(&g->r, 40))
      e->a[e->n++] = var_expr(g, "mask");
    e->text = (char *)atomic_options(g, true);
    e->f = dfz_fact_any(dt);
    g_emit(g, expr_stmt(g, e));
  }
  g_use(g, DFZ_F_ATOMIC_SHARED);
}

/* The memory-ordering patterns (issue 11, defect 2) on a buffer the program
 * reads and writes. */
static void seg_order(gen *g) {
  static const teeny_dtype dts[] = {TEENY_DT_F32, TEENY_DT_I32, TEENY_DT_F16, TEENY_DT_I64,
                                    TEENY_DT_U8, TEENY_DT_F64, TEENY_DT_BF16, TEENY_DT_I16};
  teeny_dtype dt = dts[dfz_below(&g->r, 8)];
  gbuf *io = g_buf_new(g, "io", dt, BR_IO);
  io->taint = G_T_ORDER;
  dfz_param *pa = &g->p->meta.params[io->pi];
  pa->fill.kind = DFZ_FILL_INTS;
  pa->fill.lo = dfz_is_signed(dt) || dfz_is_float(dt) ? -8 : 0;
  pa->fill.hi = 8;
  double lim = dt == TEENY_DT_BF16 ? 64 : dt == TEENY_DT_F16 ? 1024 : 1 << 20;
  io->cls = dfz_is_float(dt) ? dfz_fact_range(-lim, lim, true) : dfz_fact_any(dt);
  dfz_shape sh = rand_shape(g);
  if (sh.rank == 0)
    sh = tile_shape(g);
  int ed = g_shape_dim(g, sh);
  if (ed < 0) {
    sh = tile_shape(g);
    ed = g_shape_dim(g, sh);
    if (ed < 0)
      return;
  }
  /* the tile store */
  dfz_expr *v = gx(g, class_want(dt, sh, io->cls), depth_for(g));
  g_emit(g, expr_stmt(g, store_of(g, g_slot_ptr(g, io, sh, ed), v, NULL)));
  int k = dfz_below(&g->r, 4);
  if (k <= 1) {
    /* one element by another lane: a scalar load, then a scalar store */
    dfz_expr *j = uniform_index(g, ed);
    gvar *s = declare(g, "e", load_of(g, io, slot_elem(g, io, ed, j)), false);
    if (k == 0) {
      gwant w = class_want(dt, dfz_scalar_shape(), io->cls);
      dfz_expr *nv = gx_fix(g, gx_bin(g, OP_MUL, gx_var(g, s), gx_weak_lit(g, dt, dfz_range(&g->r, 2, 10))), w);
      if (!nv)
        nv = gx(g, w, 2);
      g_emit(g, expr_stmt(g, store_of(g, slot_elem(g, io, ed, uniform_index(g, ed)), nv, NULL)));
    } else {
      g_store_slot(g, gx_var(g, s), "order");
    }
  } else if (k == 2 && sh.rank == 2) {
    /* the same elements as a 1-D tile (other lanes own them), updated in place */
    dfz_shape flat = dfz_shape1(ed);
    dfz_expr *y = load_of(g, io, g_slot_ptr(g, io, flat, ed));
    gvar *yv = declare(g, "y", y, false);
    gwant w = class_want(dt, flat, io->cls);
    dfz_expr *nv = gx_fix(g, gx_bin(g, OP_ADD, gx_var(g, yv), gx_weak_lit(g, dt, 1)), w);
    if (!nv)
      nv = gx(g, w, 2);
    g_emit(g, expr_stmt(g, store_of(g, g_slot_ptr(g, io, flat, ed), nv, NULL)));
    /* and back through the transposed view */
    dfz_shape tr = dfz_shape2(sh.d[1], sh.d[0]);
    dfz_expr *off = gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, var_expr(g, "pid"), gx_dim_lit(g, ed)),
                           gx_bin(g, OP_ADD, gx_col(g, gx_arange(g, sh.d[1])),
                                  gx_bin(g, OP_MUL, gx_row(g, gx_arange(g, sh.d[0])), gx_dim_lit(g, sh.d[1]))));
    dfz_expr *z = load_of(g, io, g_ptr(g, io, off));
    z->sh = tr;
    gvar *zv = declare(g, "z", z, false);
    g_store_slot(g, gx_var(g, zv), "order");
  } else {
    /* a second store over part of the first by other lanes (write after write) */
    dfz_expr *j = uniform_index(g, ed);
    gwant w = class_want(dt, dfz_scalar_shape(), io->cls);
    g_emit(g, expr_stmt(g, store_of(g, slot_elem(g, io, ed, j), gx(g, w, 2), NULL)));
    if (dfz_chance(&g->r, 50)) {
      dfz_expr *back = load_of(g, io, g_slot_ptr(g, io, sh, ed));
      gvar *bv = declare(g, "back", back, false);
      g_store_slot(g, gx_var(g, bv), "order");
    }
  }
  set_cat(g, io, "order");
  g_use(g, DFZ_F_ORDER);
}

/* A scalar load of a per-program flag, then a store to it; a branch on it
 * (issue 11, defect 1). */
static void seg_uniform(gen *g) {
  static const teeny_dtype dts[] = {TEENY_DT_I32, TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I64,
                                    TEENY_DT_F32};
  teeny_dtype dt = dts[dfz_below(&g->r, 5)];
  gbuf *fl = g_buf_new(g, "flag", dt, BR_IO);
  fl->taint = G_T_UNIFORM;
  set_cat(g, fl, "uniform");
  dfz_param *pa = &g->p->meta.params[fl->pi];
  pa->fill.kind = dfz_chance(&g->r, 50) ? DFZ_FILL_ZEROS : DFZ_FILL_INTS;
  pa->fill.lo = 0;
  pa->fill.hi = 2;
  fl->cls = dfz_is_float(dt) ? dfz_fact_range(0, 64, true) : dfz_fact_any(dt);
  if (dfz_is_float(dt))
    fl->cls = dfz_fact_range(-64, 64, true);
  dfz_expr *fp = g_ptr(g, fl, var_expr(g, "pid"));
  g_buf_need(fl, g->nprog);
  gvar *c = declare(g, "c", load_of(g, fl, fp), false);
  int k = dfz_below(&g->r, 3);
  if (k == 0 || k == 2) {
    gwant w = class_want(dt, dfz_scalar_shape(), fl->cls);
    dfz_expr *nv = gx_fix(g, gx_bin(g, OP_ADD, gx_var(g, c), gx_weak_lit(g, dt, 1)), w);
    if (!nv)
      nv = gx(g, w, 1);
    g_emit(g, expr_stmt(g, store_of(g, g_ptr(g, fl, var_expr(g, "pid")), nv, NULL)));
  }
  if (k >= 1) {
    dfz_stmt *s = dfz_stmt_new(g->p, SK_IF);
    s->e = gx_bin(g, OP_EQ, gx_var(g, c), gx_weak_lit(g, dt, 0));
    dfz_block *saved = g->cur;
    g->cur = &s->body;
    if (dt != TEENY_DT_F32 || dfz_chance(&g->r, 50)) {
      dfz_expr *e = dfz_expr_new(g->p, EK_CALL, dt == TEENY_DT_F32 ? OP_ATOMIC_ADD : OP_ATOMIC_XCHG,
                                 dt, dfz_scalar_shape());
      e->a[e->n++] = g_ptr(g, fl, var_expr(g, "pid"));
      e->a[e->n++] = gx_int_lit(g, dt, dfz_range(&g->r, 1, 5));
      e->text = (char *)atomic_options(g, false);
      e->f = fl->cls;
      g_emit(g, expr_stmt(g, e));
    }
    g->cur = saved;
    g_emit(g, s);
  }
  /* every lane must see the value loaded before the store */
  dfz_shape sh = tile_shape(g);
  int ed = g_shape_dim(g, sh);
  gbuf *b = g_buf_new(g, "out", dt, BR_OUT);
  set_cat(g, b, "uniform");
  if (ed >= 0)
    g_store(g, b, g_slot_ptr(g, b, sh, ed), gx_var(g, c), NULL);
  g_use(g, DFZ_F_UNIFORM);
}

/* A spin lock around a non-atomic read-modify-write of shared data (the
 * lock pattern of Triton's layer-norm backward). */
static void seg_lock(gen *g) {
  gbuf *lock = g_buf_new(g, "lock", TEENY_DT_I32, BR_SHARED);
  set_cat(g, lock, "lock");
  g_buf_need(lock, 1);
  teeny_dtype dt = dfz_chance(&g->r, 50) ? TEENY_DT_F32 : TEENY_DT_I32;
  gbuf *acc = g_buf_new(g, "shared", dt, BR_SHARED);
  set_cat(g, acc, "lock");
  long len = dfz_range(&g->r, 1, 8);
  dfz_shape sh = dfz_chance(&g->r, 50) ? dfz_scalar_shape() : dfz_shape1(g->dE);
  g_buf_need(acc, len * (sh.rank ? g_dim_value(g, g->dE) : 1));
  /* while (atomic_cas(lock, 0, 1) == 1) { } */
  dfz_expr *cas = dfz_expr_new(g->p, EK_CALL, OP_ATOMIC_CAS, TEENY_DT_I32, dfz_scalar_shape());
  cas->a[cas->n++] = g_ptr(g, lock, NULL);
  cas->a[cas->n++] = gx_weak_lit(g, TEENY_DT_I32, 0);
  cas->a[cas->n++] = gx_weak_lit(g, TEENY_DT_I32, 1);
  cas->f = dfz_fact_range(0, 1, true);
  cas->pinned = true;
  /* acquire the lock (or acq_rel, the default), release it: both gpu-wide */
  static const char *const acq[] = {NULL, "sem_acquire", "sem_acq_rel, scope_gpu", "scope_sys, sem_acquire"};
  static const char *const rel_opts[] = {NULL, "sem_release", "scope_gpu, sem_release", "sem_acq_rel"};
  int lk = g_on(g, DFZ_F_SEM) ? dfz_below(&g->r, 4) : 0;
  cas->text = (char *)acq[lk];
  dfz_stmt *w = dfz_stmt_new(g->p, SK_WHILE);
  w->e = gx_bin(g, OP_EQ, cas, gx_weak_lit(g, TEENY_DT_I32, 1));
  w->e->pinned = true;
  int group = ++g->uniq; /* acquire, update, release: deleted together or not at all */
  w->group = group;
  g_emit(g, w);
  dfz_expr *slot = gx_bin(g, OP_MUL, gx_bin(g, OP_REM, var_expr(g, "pid"), gx_weak_lit(g, TEENY_DT_I32, len)),
                          gx_weak_lit(g, TEENY_DT_I32, sh.rank ? g_dim_value(g, g->dE) : 1));
  if (sh.rank)
    slot = gx_bin(g, OP_ADD, slot, gx_arange(g, g->dE));
  slot->pinned = true;
  dfz_fact any = dfz_fact_range(-1e6, 1e6, true);
  acc->cls = any;
  dfz_expr *old = load_of(g, acc, g_ptr(g, acc, slot));
  old->pinned = true;
  gwant xw = g_want(dt, sh);
  xw.exact = true;
  xw.intval = true;
  xw.bound = 100;
  dfz_expr *sum = gx_bin(g, OP_ADD, old, gx(g, xw, 2));
  if (sum) {
    sum->pinned = true;
    dfz_stmt *st = expr_stmt(g, store_of(g, g_ptr(g, acc, slot), sum, NULL));
    st->group = group;
    g_emit(g, st);
  }
  dfz_expr *rel = dfz_expr_new(g->p, EK_CALL, OP_ATOMIC_XCHG, TEENY_DT_I32, dfz_scalar_shape());
  rel->a[rel->n++] = g_ptr(g, lock, NULL);
  rel->a[rel->n++] = gx_weak_lit(g, TEENY_DT_I32, 0);
  rel->pinned = true;
  rel->text = (char *)rel_opts[lk];
  dfz_stmt *rs = expr_stmt(g, rel);
  rs->group = group;
  g_emit(g, rs);
  g_use(g, DFZ_F_LOCK);
}

/* A chain through the programs, as a decoupled look-back scan hands its
 * carry on: program p waits (acquire) until program p - 1 has published
 * its tile (release), reads it, adds its own and publishes the sum.
 * Programs run in pid order in the interpreter and the emulator, and all
 * are resident at once on a GPU (a handful of programs).  Every program
 * must get here (else the next one waits for ever): never inside a branch
 * or a loop, nor after an early return (g_segment, handoff_reachable). */
static void seg_handoff(gen *g) {
  teeny_dtype dt = dfz_chance(&g->r, 50) ? TEENY_DT_I32 : TEENY_DT_F32;
  gbuf *flag = g_buf_new(g, "ready", TEENY_DT_I32, BR_SHARED);
  gbuf *data = g_buf_new(g, "chain", dt, BR_SHARED);
  set_cat(g, flag, "handoff");
  set_cat(g, data, "handoff");
  g_buf_need(flag, g->nprog);
  dfz_shape sh = dfz_shape1(g->lay == LAY_1D ? g->dB : g->dBN);
  int ed = sh.d[0];
  data->cls = dfz_fact_range(-1e6, 1e6, true);
  /* prev = 0; if (pid > 0) { while (atomic_add(ready + pid - 1, 0, sem_acquire) == 0) { }
   *                          prev = load(chain + (pid - 1) * D + arange(0, D)); } */
  gvar *prev = declare(g, "prev", gx_zeros(g, dt, sh), false);
  prev->fixed = true; /* assigned here only */
  dfz_stmt *s = dfz_stmt_new(g->p, SK_IF);
  s->e = gx_bin(g, OP_GT, var_expr(g, "pid"), gx_weak_lit(g, TEENY_DT_I32, 0));
  s->e->pinned = true;
  s->group = ++g->uniq;
  dfz_expr *before = gx_bin(g, OP_SUB, var_expr(g, "pid"), gx_weak_lit(g, TEENY_DT_I32, 1));
  dfz_expr *poll = dfz_expr_new(g->p, EK_CALL, OP_ATOMIC_ADD, TEENY_DT_I32, dfz_scalar_shape());
  poll->a[poll->n++] = g_ptr(g, flag, before);
  poll->a[poll->n++] = gx_weak_lit(g, TEENY_DT_I32, 0);
  poll->text = dfz_chance(&g->r, 50) ? "sem_acquire" : "sem_acq_rel, scope_gpu";
  poll->f = dfz_fact_range(0, 1, true);
  dfz_stmt *w = dfz_stmt_new(g->p, SK_WHILE);
  w->e = gx_bin(g, OP_EQ, poll, gx_weak_lit(g, TEENY_DT_I32, 0));
  w->e->pinned = true;
  w->pinned = true;
  dfz_block_add(g->p, &s->body, w);
  dfz_expr *off = gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, gx_bin(g, OP_SUB, var_expr(g, "pid"),
                                                              gx_weak_lit(g, TEENY_DT_I32, 1)),
                                           gx_dim_lit(g, ed)),
                         gx_arange(g, ed));
  dfz_stmt *rd = dfz_stmt_new(g->p, SK_ASSIGN);
  rd->name = prev->name;
  rd->e = g_load_node(g, data, g_ptr(g, data, off), NULL, false);
  rd->e->pinned = true;
  rd->pinned = true;
  dfz_block_add(g->p, &s->body, rd);
  g_emit(g, s);
  prev->f = dfz_fact_hull(prev->f, data->cls); /* later patterns may read prev */
  /* store(chain + pid * D + arange(0, D), prev + mine); atomic_xchg(ready + pid, 1, sem_release) */
  gwant mw = g_want(dt, sh);
  mw.exact = true;
  mw.intval = dfz_is_float(dt);
  mw.bound = 100;
  dfz_expr *mine = gx(g, mw, 2);
  dfz_expr *sum = gx_bin(g, OP_ADD, gx_var(g, prev), mine);
  if (!sum)
    sum = gx_var(g, prev);
  sum->pinned = true;
  dfz_expr *mo = gx_bin(g, OP_ADD, gx_bin(g, OP_MUL, var_expr(g, "pid"), gx_dim_lit(g, ed)), gx_arange(g, ed));
  g_buf_need(data, g->nprog * g_dim_value(g, ed));
  dfz_stmt *st = expr_stmt(g, store_of(g, g_ptr(g, data, mo), sum, NULL));
  st->group = s->group;
  g_emit(g, st);
  dfz_expr *pub = dfz_expr_new(g->p, EK_CALL, OP_ATOMIC_XCHG, TEENY_DT_I32, dfz_scalar_shape());
  pub->a[pub->n++] = g_ptr(g, flag, var_expr(g, "pid"));
  pub->a[pub->n++] = gx_weak_lit(g, TEENY_DT_I32, 1);
  pub->text = dfz_chance(&g->r, 50) ? "sem_release" : NULL;
  pub->pinned = true;
  dfz_stmt *ps = expr_stmt(g, pub);
  ps->group = s->group;
  g_emit(g, ps);
  g_use(g, DFZ_F_LOCK);
}

/* A void helper that stores, called with a pointer and offsets. */
static void seg_store_helper(gen *g) {
  dfz_shape sh = rand_shape(g);
  int ed = g_shape_dim(g, sh);
  if (ed < 0 || g->nhelpers >= 6) {
    seg_store(g);
    return;
  }
  teeny_dtype dt = g_rand_dtype(g);
  gwant w = g_want(dt, sh);
  dfz_expr *v = gx(g, w, depth_for(g));
  if (!v)
    return;
  gbuf *b = g_buf_new(g, "out", dt, BR_OUT);
  set_cat(g, b, "helper");
  dfz_expr *p = g_slot_ptr(g, b, sh, ed);
  dfz_expr *base = p->a[0], *off = p->a[1];
  char *name = dfz_printf(&g->p->arena, "helper%d", g->nhelpers++);
  char t_off[40], t_v[40], sig[256];
  dfz_type_text(g->p, TEENY_DT_I32, TEENY_DT_VOID, off->sh.rank > 0, t_off, sizeof t_off);
  dfz_type_text(g->p, v->dt, TEENY_DT_VOID, v->sh.rank > 0, t_v, sizeof t_v);
  snprintf(sig, sizeof sig, "static void %s(ptr(%s) p, %s o, %s v)", name, dfz_dtype_text(g->p, dt),
           t_off, t_v);
  dfz_func *f = g_helper_new(g, name, sig);
  dfz_stmt *body = dfz_stmt_new(g->p, SK_EXPR);
  body->pinned = true;
  dfz_expr *txt = dfz_expr_new(g->p, EK_LIT, OP_CALL, TEENY_DT_VOID, dfz_scalar_shape());
  txt->text = "store(p + o, v)";
  body->e = txt;
  dfz_block_add(g->p, &f->body, body);
  dfz_expr *call = dfz_expr_new(g->p, EK_CALL, OP_CALL, TEENY_DT_VOID, dfz_scalar_shape());
  call->text = name;
  call->a[0] = base;
  call->a[1] = off;
  call->a[2] = v;
  call->n = 3;
  base->pinned = off->pinned = true; /* the addresses: never reduced */
  g_taint_cat(g, b, g_taint(g, v) | g->ctl_taint);
  double tol = dfz_fact_store_tol(v->f, v->dt, dt);
  if (tol > b->tol)
    b->tol = tol;
  g_emit(g, expr_stmt(g, call));
  g_use(g, DFZ_F_HELPER);
}

typedef struct seg_kind {
  void (*fn)(gen *g);
  int weight;
  int feature;  /* -1: always on */
  bool in_loop; /* may be a loop body's: repeats per trip stay within its facts */
} seg_kind;

static void seg_scan(gen *g) { seg_forced(g, GP_SCAN, rand_shape(g), "scan"); }
static void seg_shape(gen *g) { seg_forced(g, GP_SHAPE, rand_shape(g), "shape"); }
static void seg_math(gen *g) { seg_forced(g, GP_MATH, rand_shape(g), "math"); }
/* a 2-D value by way of rank 3 and 4 (p_rank3) */
static void seg_rank3(gen *g) {
  if (!g_on(g, DFZ_F_2D) || !g_on(g, DFZ_F_SHAPE)) {
    seg_decl(g);
    return;
  }
  dfz_shape sh = g->lay == LAY_1D ? dfz_shape2(g->dB, g->dE) : dfz_shape2(g->dBM, g->dBN);
  seg_forced(g, GP_RANK3, sh, "rank3");
}

/* The handoff only where every program runs it (seg_handoff). */
static bool handoff_reachable(const gen *g) { return g->nest == 0 && g->loop_depth == 0 && !g->exited; }

/* The spin lock's scalar atomics and loads are only right once scalars are
 * uniform (issue 11, defect 1): it needs "uniform" on as well. */
static bool kind_on(gen *g, const seg_kind *k) {
  if (k->feature < 0)
    return true;
  if ((k->fn == seg_lock || k->fn == seg_handoff) && !g_on(g, DFZ_F_UNIFORM))
    return false;
  return g_on(g, (dfz_feature)k->feature);
}

static dfz_stmt *barrier_stmt(gen *g) {
  dfz_expr *b = dfz_expr_new(g->p, EK_CALL, OP_BARRIER, TEENY_DT_VOID, dfz_scalar_shape());
  return expr_stmt(g, b);
}

void g_segment(gen *g) {
  if (g_on(g, DFZ_F_BARRIER) && dfz_chance(&g->r, 8)) { /* control flow is uniform here */
    g_emit(g, barrier_stmt(g));
    g_use(g, DFZ_F_BARRIER);
  }
  static const seg_kind kinds[] = {
      /* atomics repeated per trip would leave their buffers' facts; the
       * lock needs "uniform" on as well */
      {seg_store, 16, -1, true},          {seg_decl, 12, -1, true},
      {seg_reduce, 10, DFZ_F_REDUCE, true}, {seg_scan, 5, DFZ_F_SCAN, true},
      {seg_dot, 6, DFZ_F_DOT, true},      {seg_shape, 6, DFZ_F_SHAPE, true},
      {seg_math, 5, DFZ_F_MATH, true},    {seg_ctrl, 9, DFZ_F_CTRL, true},
      {seg_loop, 9, DFZ_F_LOOP, false},   {seg_atomic, 6, DFZ_F_ATOMIC, false},
      {seg_atomic_shared, 5, DFZ_F_ATOMIC_SHARED, false}, {seg_order, 7, DFZ_F_ORDER, true},
      {seg_uniform, 4, DFZ_F_UNIFORM, true}, {seg_lock, 2, DFZ_F_LOCK, false},
      {seg_store_helper, 3, DFZ_F_HELPER, true}, {seg_matmul, 4, DFZ_F_DOT, false},
      {seg_handoff, 2, DFZ_F_LOCK, false}, {seg_rank3, 4, DFZ_F_RANK3, true}};
  int n = (int)(sizeof kinds / sizeof kinds[0]);
  int total = 0;
  for (int i = 0; i < n; i++)
    if (kind_on(g, &kinds[i]))
      total += kinds[i].weight;
  int pick = dfz_below(&g->r, total);
  for (int i = 0; i < n; i++) {
    if (!kind_on(g, &kinds[i]))
      continue;
    if (pick < kinds[i].weight) {
      if ((g->loop_depth > 0 && !kinds[i].in_loop) ||
          (kinds[i].fn == seg_handoff && !handoff_reachable(g)))
        seg_decl(g);
      else
        kinds[i].fn(g);
      return;
    }
    pick -= kinds[i].weight;
  }
}
