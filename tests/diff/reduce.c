/*
 * tests/diff/reduce.c — the reducer of reduce.h: greedy delta debugging
 * over the program tree.  Every step edits the tree in place, reprints
 * the case, runs it in the executor and keeps the edit only if the case
 * still fails with the same status and category; passes repeat until
 * none makes progress or the budget is spent.
 *
 * Edits are chosen so that the generator's guarantees survive them:
 * pinned nodes (addresses, masks of the layout, loop bounds and
 * counters) are never touched, and an expression is replaced only by an
 * operand or a constant whose value facts lie within its own, so every
 * tolerance and exactness the generator derived still holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/diff/reduce.h"

typedef struct rctx {
  dfz_prog *p;
  const dfz_outcome *want;
  const dfz_reduce_opts *o;
  dfz_outcome last;
  dfz_reduce_stats *st;
  double t0;
  int max_runs;
  double max_s;
} rctx;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static bool out_of_budget(rctx *r) {
  return r->st->runs >= r->max_runs || now_s() - r->t0 > r->max_s;
}

/* Does the current tree still fail like want? */
static bool still_fails(rctx *r, const char *what) {
  if (out_of_budget(r))
    return false;
  dfz_case c;
  memset(&c, 0, sizeof c);
  dfz_prog_case(r->p, &c);
  dfz_outcome o;
  dfz_exec_run(r->o->exec, &c, r->o->timeout_s, &o);
  dfz_case_free(&c);
  r->st->runs++;
  bool same = o.status == r->want->status && strcmp(o.cat, r->want->cat) == 0;
  if (getenv("DFZ_TRACE"))
    fprintf(stderr, "  try %s: %s %s\n", what, dfz_status_name(o.status), o.cat);
  if (same) {
    r->last = o;
    r->st->accepted++;
    if (r->o->verbose)
      fprintf(stderr, "  reduce: %s (run %d)\n", what, r->st->runs);
  }
  return same;
}

/* ---- statements --------------------------------------------------------------------------- */

typedef struct sref {
  dfz_block *b;
  int i;
} sref;

typedef struct slist {
  sref *v;
  int n, cap;
} slist;

static void sl_add(slist *l, dfz_block *b, int i) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
    if (!l->v)
      abort();
  }
  l->v[l->n].b = b;
  l->v[l->n].i = i;
  l->n++;
}

static void collect_stmts(dfz_block *b, slist *l) {
  for (int i = 0; i < b->n; i++) {
    dfz_stmt *s = b->v[i];
    if (s->dead)
      continue;
    sl_add(l, b, i);
    collect_stmts(&s->body, l);
    collect_stmts(&s->els, l);
  }
}

static void all_stmts(rctx *r, slist *l) {
  l->n = 0;
  for (int f = 0; f < r->p->nfuncs; f++)
    if (!r->p->funcs[f]->dead)
      collect_stmts(&r->p->funcs[f]->body, l);
}

static dfz_stmt *at(sref s) { return s.b->v[s.i]; }

/* Mark s dead, with the rest of its group; remember what was marked. */
static void kill_stmt(const slist *l, dfz_stmt *s, dfz_stmt **marked, int *n, int cap) {
  if (s->dead || s->pinned || *n == cap)
    return;
  s->dead = true;
  marked[(*n)++] = s;
  if (s->group)
    for (int i = 0; i < l->n; i++) {
      dfz_stmt *o = at(l->v[i]);
      if (o->group == s->group && !o->dead && *n < cap) {
        o->dead = true;
        marked[(*n)++] = o;
      }
    }
}

/* Delete chunks of statements, large chunks first, from the end. */
static bool pass_delete(rctx *r) {
  bool progress = false;
  slist l = {0};
  dfz_stmt *marked[64];
  for (int size = 16; size >= 1; size /= 2) {
    all_stmts(r, &l);
    for (int end = l.n; end > 0 && !out_of_budget(r); end -= size) {
      int start = end - size < 0 ? 0 : end - size;
      int n = 0;
      for (int i = start; i < end; i++)
        kill_stmt(&l, at(l.v[i]), marked, &n, 64);
      if (!n)
        continue;
      if (still_fails(r, "statements deleted"))
        progress = true;
      else
        for (int i = 0; i < n; i++)
          marked[i]->dead = false;
    }
  }
  free(l.v);
  return progress;
}

/* Replace statement i of b by the statements of inner (a branch or a loop body). */
static bool splice(rctx *r, dfz_block *b, int i, const dfz_block *inner) {
  dfz_block old = *b;
  int n = b->n - 1 + inner->n;
  dfz_stmt **v = dfz_alloc(&r->p->arena, sizeof *v * (size_t)(n > 0 ? n : 1));
  int k = 0;
  for (int j = 0; j < b->n; j++) {
    if (j == i) {
      for (int t = 0; t < inner->n; t++)
        v[k++] = inner->v[t];
    } else {
      v[k++] = b->v[j];
    }
  }
  b->v = v;
  b->n = n;
  b->cap = n;
  if (still_fails(r, "branch or loop flattened"))
    return true;
  *b = old;
  return false;
}

static bool pass_flatten(rctx *r) {
  bool progress = false;
  slist l = {0};
  all_stmts(r, &l);
  for (int i = l.n - 1; i >= 0 && !out_of_budget(r); i--) {
    dfz_stmt *s = at(l.v[i]);
    if (s->dead || s->pinned || s->group)
      continue;
    if (s->kind == SK_IF && s->els.n > 0) {
      dfz_block els = s->els;
      s->els.n = 0;
      if (still_fails(r, "else dropped")) {
        progress = true;
      } else {
        s->els = els;
        if (splice(r, l.v[i].b, l.v[i].i, &s->els)) {
          progress = true;
          break; /* indexes moved: collect again next round */
        }
      }
    }
    if (s->kind == SK_IF || s->kind == SK_FOR || s->kind == SK_WHILE || s->kind == SK_DO) {
      if (splice(r, l.v[i].b, l.v[i].i, &s->body)) {
        progress = true;
        break;
      }
    }
  }
  free(l.v);
  return progress;
}

/* ---- expressions ---------------------------------------------------------------------------- */

static dfz_expr *const_like(rctx *r, const dfz_expr *e, long v) {
  if (e->dt == TEENY_DT_PTR || e->dt == TEENY_DT_VOID)
    return NULL;
  double dv = e->dt == TEENY_DT_BOOL ? (v != 0) : (double)v;
  if (dv < e->f.lo || dv > e->f.hi)
    return NULL;
  dfz_expr *c;
  dfz_expr *lit = dfz_expr_new(r->p, EK_LIT, OP_CALL, e->dt, dfz_scalar_shape());
  lit->f = dfz_fact_const(dv);
  if (e->dt == TEENY_DT_BOOL)
    lit->text = v ? "true" : "false";
  else
    lit->text = dfz_printf(&r->p->arena, "%ld", v);
  if (e->sh.rank == 0) {
    if (e->dt == TEENY_DT_I32 || e->dt == TEENY_DT_BOOL)
      return lit;
    c = dfz_expr_new(r->p, EK_CAST, OP_CALL, e->dt, e->sh);
    c->a[0] = lit;
    c->n = 1;
  } else {
    c = dfz_expr_new(r->p, EK_CALL, OP_FULL, e->dt, e->sh);
    c->a[0] = lit;
    c->n = 1;
  }
  c->f = lit->f;
  return c;
}

static bool replaceable_by(const dfz_expr *e, const dfz_expr *by) {
  return by && by->dt == e->dt && !by->pinned && dfz_shape_fits(by->sh, e->sh) &&
         dfz_fact_within(by->f, e->f) && !(by->kind == EK_LIT && by->iarg >= 1);
}

/* A literal, a cast of one, or a full/zeros tile of one: nothing left to simplify. */
static bool is_constant(const dfz_expr *e) {
  if (e->kind == EK_LIT)
    return true;
  if (e->kind == EK_CALL && e->op == OP_ZEROS)
    return true;
  if ((e->kind == EK_CAST || (e->kind == EK_CALL && e->op == OP_FULL)) && e->n == 1)
    return e->a[0]->kind == EK_LIT;
  return false;
}

static bool try_slot(rctx *r, dfz_expr **slot, dfz_expr *by, const char *what) {
  dfz_expr *old = *slot;
  *slot = by;
  if (still_fails(r, what))
    return true;
  *slot = old;
  return false;
}

/* Simplify the expression at slot and, recursively, what it keeps. */
static bool reduce_expr(rctx *r, dfz_expr **slot, bool is_decl_init) {
  dfz_expr *e = *slot;
  bool progress = false;
  if (!e || e->pinned || out_of_budget(r))
    return false;
  if (e->kind != EK_VAR && !is_constant(e)) {
    bool done = false;
    for (int i = 0; i < e->n && !done; i++) {
      dfz_expr *c = e->a[i];
      /* a declaration keeps its shape: its operand must have the same one */
      if (replaceable_by(e, c) && (!is_decl_init || dfz_shape_eq(c->sh, e->sh)) &&
          try_slot(r, slot, c, "expression replaced by an operand"))
        done = true;
    }
    for (long v = 0; v <= 1 && !done; v++) {
      dfz_expr *k = const_like(r, e, v);
      if (k && try_slot(r, slot, k, "expression replaced by a constant"))
        done = true;
    }
    if (done) {
      reduce_expr(r, slot, is_decl_init);
      return true;
    }
  }
  e = *slot;
  for (int i = 0; i < e->n; i++)
    progress |= reduce_expr(r, &e->a[i], false);
  /* a store's or an atomic's mask may go */
  if (e->kind == EK_CALL && (e->op == OP_STORE || e->op == OP_ATOMIC_ADD ||
                                           e->op == OP_ATOMIC_MAX || e->op == OP_ATOMIC_MIN ||
                                           e->op == OP_ATOMIC_XCHG)) {
    if (e->n == 3 && !e->a[2]->pinned) {
      e->n--;
      if (still_fails(r, "mask dropped"))
        progress = true;
      else
        e->n++;
    }
  }
  return progress;
}

static bool pass_exprs(rctx *r) {
  bool progress = false;
  slist l = {0};
  all_stmts(r, &l);
  for (int i = l.n - 1; i >= 0 && !out_of_budget(r); i--) {
    dfz_stmt *s = at(l.v[i]);
    if (s->dead)
      continue;
    if (s->kind == SK_WHILE || s->kind == SK_DO || s->kind == SK_FOR)
      continue; /* bounds and conditions are pinned */
    if (s->e && !s->pinned)
      progress |= reduce_expr(r, &s->e, s->kind == SK_DECL);
  }
  free(l.v);
  return progress;
}

/* ---- launch, bindings, fills, helpers ------------------------------------------------------------ */

static bool pass_consts(rctx *r) {
  bool progress = false;
  dfz_case *m = &r->p->meta;
  for (int i = 0; i < m->nconsts && !out_of_budget(r); i++) {
    while (m->consts[i].value > 1 && !out_of_budget(r)) {
      int64_t old = m->consts[i].value;
      m->consts[i].value = old / 2;
      dfz_dims_update(r->p);
      if (still_fails(r, "tile size halved")) {
        progress = true;
        continue;
      }
      m->consts[i].value = old;
      dfz_dims_update(r->p);
      break;
    }
  }
  return progress;
}

static bool pass_launch(rctx *r) {
  bool progress = false;
  dfz_case *m = &r->p->meta;
  for (int d = 0; d < 3; d++)
    while (m->grid[d] > 1 && !out_of_budget(r)) {
      unsigned old = m->grid[d];
      m->grid[d] = old / 2;
      if (still_fails(r, "grid reduced")) {
        progress = true;
        continue;
      }
      m->grid[d] = old;
      break;
    }
  static const int warps[] = {1, 2, 4};
  for (int i = 0; i < 3 && !out_of_budget(r); i++) {
    if (warps[i] >= m->num_warps)
      break;
    int old = m->num_warps;
    m->num_warps = warps[i];
    if (still_fails(r, "fewer warps")) {
      progress = true;
      break;
    }
    m->num_warps = old;
  }
  if (strcmp(m->target, "sm_80") != 0 && !out_of_budget(r)) {
    char old[16];
    snprintf(old, sizeof old, "%s", m->target);
    snprintf(m->target, sizeof m->target, "sm_80");
    if (still_fails(r, "target sm_80"))
      progress = true;
    else
      snprintf(m->target, sizeof m->target, "%s", old);
  }
  return progress;
}

/* zeros or iota instead of random data, where every value stays in the fill's range */
static bool pass_fills(rctx *r) {
  bool progress = false;
  dfz_case *m = &r->p->meta;
  for (int i = 0; i < m->nparams && !out_of_budget(r); i++) {
    dfz_param *p = &m->params[i];
    if (!p->is_ptr || p->fill.kind == DFZ_FILL_ZEROS || p->fill.kind == DFZ_FILL_IOTA)
      continue;
    dfz_fill old = p->fill;
    bool zero_ok = p->fill.kind == DFZ_FILL_POISON || p->fill.kind == DFZ_FILL_BITS ||
                   p->fill.kind == DFZ_FILL_SPECIAL ||
                   (p->fill.lo <= 0 && p->fill.hi >= 0);
    bool iota_ok = p->fill.kind == DFZ_FILL_POISON ||
                   (p->fill.kind == DFZ_FILL_BITS && !dfz_is_float(p->dt)) ||
                   (p->fill.kind == DFZ_FILL_INTS && p->fill.lo <= 0 &&
                    p->fill.hi >= (double)p->count - 1 && p->dt != TEENY_DT_BOOL);
    if (zero_ok) {
      p->fill.kind = DFZ_FILL_ZEROS;
      if (still_fails(r, "zeros fill")) {
        progress = true;
        continue;
      }
      p->fill = old;
    }
    if (iota_ok) {
      p->fill.kind = DFZ_FILL_IOTA;
      if (still_fails(r, "iota fill")) {
        progress = true;
        continue;
      }
      p->fill = old;
    }
  }
  return progress;
}

/* Parameters nothing uses any more (the kernel would not compile otherwise). */
static bool pass_params(rctx *r) {
  bool progress = false;
  dfz_case *m = &r->p->meta;
  for (int i = m->nparams - 1; i >= 0 && !out_of_budget(r); i--) {
    if (m->params[i].desc_part)
      continue; /* goes with its tensormap, the group's first */
    dfz_param saved[DFZ_MAX_PARAMS];
    int n = m->nparams, k = 1 + 2 * m->params[i].desc_rank;
    memcpy(saved, m->params, sizeof saved);
    memmove(&m->params[i], &m->params[i + k], sizeof m->params[0] * (size_t)(n - i - k));
    m->nparams -= k;
    if (still_fails(r, "parameter removed")) {
      progress = true;
    } else {
      memcpy(m->params, saved, sizeof saved);
      m->nparams = n;
    }
  }
  return progress;
}

static bool pass_helpers(rctx *r) {
  bool progress = false;
  for (int i = 0; i < r->p->nfuncs && !out_of_budget(r); i++) {
    dfz_func *f = r->p->funcs[i];
    if (f->is_kernel || f->dead)
      continue;
    f->dead = true;
    if (still_fails(r, "helper removed"))
      progress = true;
    else
      f->dead = false;
  }
  return progress;
}

void dfz_reduce(dfz_prog *p, const dfz_outcome *want, const dfz_reduce_opts *o,
                dfz_outcome *last, dfz_reduce_stats *stats) {
  dfz_reduce_stats local;
  rctx r;
  memset(&r, 0, sizeof r);
  r.p = p;
  r.want = want;
  r.o = o;
  r.st = stats ? stats : &local;
  memset(r.st, 0, sizeof *r.st);
  r.last = *want;
  r.t0 = now_s();
  r.max_runs = o->max_runs > 0 ? o->max_runs : 2000;
  r.max_s = o->max_seconds > 0 ? o->max_seconds : 300;
  for (int round = 0; round < 8 && !out_of_budget(&r); round++) {
    bool progress = false;
    progress |= pass_delete(&r);
    while (pass_flatten(&r))
      progress = true;
    progress |= pass_helpers(&r);
    progress |= pass_exprs(&r);
    progress |= pass_consts(&r);
    progress |= pass_launch(&r);
    progress |= pass_fills(&r);
    progress |= pass_params(&r);
    if (!progress)
      break;
  }
  r.st->seconds = now_s() - r.t0;
  if (last)
    *last = r.last;
}
