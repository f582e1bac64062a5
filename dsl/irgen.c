/*
 * dsl/irgen.c — tile IR generation: statements, variables, structured
 * control flow, early returns and helper inlining (see dsl/irgen.h for the
 * model).
 *
 * Control flow merges work on variable slots.  Before an `if`, the slots a
 * branch may assign are found by walking the AST; after generating both
 * branches into detached regions, the slots defined on both sides (or
 * before) become the if's results and are yielded from each region.  Loops
 * do the same with the slots assigned in the body that were defined before
 * the loop: they become scf.for/scf.while iteration arguments.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/irgen.h"

_Noreturn void teeny__gen_fail(gen *g, teeny_loc loc, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  teeny__error_at(g->cx, loc, "%s", msg);
  longjmp(g->fail, 1);
}

const char *teeny__gen_tstr(gen *g, teeny_type t) {
  return teeny__type_str(g->cx->arena, t);
}

/* ---- which slots a piece of code assigns ------------------------------------ */

typedef struct slotinfo {
  bool *assigned; /* [nslots] assigned somewhere inside */
  bool *declared; /* [nslots] declared inside (so local to it) */
  bool returns;   /* contains a return */
  bool calls;     /* contains a call whose value may change between two
                     evaluations with the same arguments: a helper, a load,
                     an atomic (for loop-invariance checks) */
} slotinfo;

/* A builtin whose value depends on its arguments alone (cdiv, minimum,
 * ...): a loop bound made of them is still the same every trip
 * (tutorial 03's `k < tl.cdiv(K, BLOCK_SIZE_K)`). */
static bool pure_call(const teeny_expr *e) {
  if (e->sym != SYM_BUILTIN)
    return false;
  switch ((teeny_builtin)e->sym_index) {
  case BI_LOAD: case BI_STORE: case BI_ATOMIC_ADD: case BI_ATOMIC_MAX: case BI_ATOMIC_MIN:
  case BI_ATOMIC_XCHG: case BI_ATOMIC_CAS: case BI_ATOMIC_AND: case BI_ATOMIC_OR:
  case BI_ATOMIC_XOR: case BI_BARRIER: case BI_REDUCE: case BI_SCAN:
    return false;
  default:
    return true;
  }
}

static void scan_expr(const teeny_expr *e, slotinfo *si) {
  if (!e)
    return;
  if ((e->kind == EX_ASSIGN || e->kind == EX_INCDEC) && e->lhs &&
      e->lhs->sym == SYM_VAR)
    si->assigned[e->lhs->sym_index] = true;
  if (e->kind == EX_CALL && !pure_call(e))
    si->calls = true;
  scan_expr(e->lhs, si);
  scan_expr(e->rhs, si);
  scan_expr(e->cond, si);
  for (int i = 0; i < e->nargs; i++)
    scan_expr(e->args[i], si);
}

static void scan_stmt(const teeny_stmt *s, slotinfo *si) {
  if (!s)
    return;
  switch (s->kind) {
  case ST_DECL:
    si->declared[s->var] = true;
    break;
  case ST_RETURN:
    si->returns = true;
    break;
  default:
    break;
  }
  scan_expr(s->expr, si);
  scan_expr(s->cond, si);
  scan_expr(s->step, si);
  for (int i = 0; i < s->nbody; i++)
    scan_stmt(s->body[i], si);
  scan_stmt(s->then, si);
  scan_stmt(s->els, si);
  scan_stmt(s->init, si);
  scan_stmt(s->loop, si);
}

static slotinfo slotinfo_new(gen *g) {
  slotinfo si;
  int n = g->fr->nslots;
  si.assigned = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)n);
  si.declared = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)n);
  si.returns = si.calls = false;
  return si;
}

/* Slots assigned by code in [stmts] and the given expressions, excluding
 * slots declared inside; a return adds RET_FLAG and RET_VAL. */
static bool *merged_slots(gen *g, slotinfo *si) {
  gframe *fr = g->fr;
  for (int s = 0; s < fr->nslots; s++)
    if (si->declared[s])
      si->assigned[s] = false;
  if (si->returns)
    si->assigned[RET_FLAG(fr)] = si->assigned[RET_VAL(fr)] = true;
  return si->assigned;
}

/* Does e read any slot marked in set? */
static bool expr_reads(const teeny_expr *e, const bool *set) {
  if (!e)
    return false;
  if (e->kind == EX_NAME && e->sym == SYM_VAR && set[e->sym_index])
    return true;
  if (expr_reads(e->lhs, set) || expr_reads(e->rhs, set) || expr_reads(e->cond, set))
    return true;
  for (int i = 0; i < e->nargs; i++)
    if (expr_reads(e->args[i], set))
      return true;
  return false;
}

/* ---- variables ------------------------------------------------------------------ */

static gvar *vars_save(gen *g) {
  size_t n = sizeof(gvar) * (size_t)g->fr->nslots;
  gvar *copy = teeny__arena_alloc(g->cx->arena, n);
  memcpy(copy, g->fr->vars, n);
  return copy;
}

static void vars_restore(gen *g, const gvar *saved) {
  memcpy(g->fr->vars, saved, sizeof(gvar) * (size_t)g->fr->nslots);
}

static void var_declare(gvar *v, const teeny_tyspec *ts, const teeny_bindings *b) {
  memset(v, 0, sizeof *v);
  v->dt = teeny__tyspec_dtype(ts, b);
  v->is_ptr = ts->is_ptr;
  v->is_tile = ts->is_tile;
}

static const char *var_kind(gen *g, const gvar *v) {
  const char *dt = teeny_dtype_name(v->dt);
  if (v->is_ptr)
    return teeny__arena_printf(g->cx->arena, v->is_tile ? "tile(ptr(%s))" : "ptr(%s)", dt);
  return v->is_tile ? teeny__arena_printf(g->cx->arena, "tile(%s)", dt) : dt;
}

/* Give slot a new value x: implicit conversion to the declared dtype (or
 * explicit when `cast` is set: compound assignment), tile/scalar agreement,
 * and broadcasting to the slot's shape once it has one.  `what` says what
 * is happening for messages ("initialise 'x'"). */
static void var_set(gen *g, int slot, gval x, teeny_loc loc, const char *what,
                    bool cast) {
  gvar *v = &g->fr->vars[slot];
  if (x.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, loc, "cannot %s with a void value", what);
  if (v->is_ptr) {
    if (x.type.dt != TEENY_DT_PTR || x.type.pointee != v->dt)
      teeny__gen_fail(g, loc, "cannot %s (%s) with a value of type %s", what,
                      var_kind(g, v), teeny__gen_tstr(g, x.type));
  } else if (x.type.dt == TEENY_DT_PTR) {
    teeny__gen_fail(g, loc, "cannot %s (%s) with a pointer", what, var_kind(g, v));
  } else {
    x = cast ? teeny__gen_convert(g, x, v->dt, loc) : teeny__gen_implicit(g, x, v->dt, loc, what);
  }
  if (!v->is_tile && x.type.rank > 0)
    teeny__gen_fail(g, loc, "cannot %s: it is a scalar (%s) but the value is %s; declare it tile(...)",
                    what, var_kind(g, v), teeny__gen_tstr(g, x.type));
  if (v->is_tile && v->defined) {
    teeny_type t = v->v.type;
    int rank, shape[TEENY_MAX_RANK];
    bool ok = teeny__broadcast_shape(t, x.type, &rank, shape) && rank == t.rank;
    for (int i = 0; ok && i < rank; i++)
      ok = shape[i] == t.shape[i];
    if (!ok)
      teeny__gen_fail(g, loc, "shape mismatch: cannot %s, of type %s, with %s", what,
                      teeny__gen_tstr(g, t), teeny__gen_tstr(g, x.type));
    x = teeny__gen_broadcast(g, x, t.rank, t.shape, loc);
  } else if (v->is_tile && x.type.rank == 0) {
    teeny__gen_fail(g, loc, "cannot %s from a scalar: the tile's shape would be unknown; "
                            "use full(T, value, shape...)", what);
  }
  x.weak = false;
  v->v = x;
  v->defined = true;
}

static const char *slot_name(gen *g, int slot) {
  const teeny_func *fn = g->fr->fn;
  if (slot == RET_FLAG(g->fr) || slot == RET_VAL(g->fr))
    return "the return value";
  return fn->var_names && fn->var_names[slot] ? fn->var_names[slot] : "?";
}

gval teeny__gen_assign(gen *g, const teeny_expr *e) {
  const teeny_expr *lhs = e->lhs;
  if (!lhs || lhs->kind != EX_NAME || lhs->sym != SYM_VAR)
    teeny__gen_fail(g, e->loc, "only variables can be assigned");
  int slot = lhs->sym_index;
  const char *what = teeny__arena_printf(g->cx->arena, "assign to '%s'", lhs->name);
  if (e->kind == EX_ASSIGN && e->op == OP_NONE) {
    var_set(g, slot, teeny__gen_expr(g, e->rhs), e->loc, what, false);
  } else {
    gvar *v = &g->fr->vars[slot];
    if (!v->defined)
      teeny__gen_fail(g, lhs->loc, "'%s' is used before it is assigned on every path",
                      lhs->name);
    gval rhs = e->kind == EX_INCDEC ? teeny__gv_weak_int(1) : teeny__gen_expr(g, e->rhs);
    gval r = teeny__gen_binop(g, e->op, v->v, rhs, e->loc);
    var_set(g, slot, r, e->loc, what, true);
  }
  gval none;
  memset(&none, 0, sizeof none);
  none.id = -1;
  none.type = teeny__type_scalar(TEENY_DT_VOID);
  return none;
}

/* ---- statements ------------------------------------------------------------------- */

static void gen_stmt(gen *g, const teeny_stmt *s);
static void gen_stmts(gen *g, teeny_stmt *const *list, int n);

static teeny_op *add_op(gen *g, teeny_region *r, teeny_opcode code, teeny_loc loc,
                        const int *args, int nargs, const teeny_type *rt, int nres) {
  teeny_op *op = teeny__ir_op_add(g->f, r, code, loc, args, nargs, rt, nres);
  if (!op)
    teeny__gen_fail(g, loc, "kernel too large: more than %d IR operations after inlining",
                    TEENY_MAX_IR_OPS);
  return op;
}

/* Append yield(values of slots[]) to r; placeholders stand in for
 * RET_VAL where a branch never returned. */
static void yield_slots(gen *g, teeny_region *r, const int *slots, const teeny_type *types,
                        int n, teeny_opcode term, int cond_id, teeny_loc loc) {
  teeny_region *saved = g->cur;
  g->cur = r;
  int *ids = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)(n + 1));
  int k = 0;
  if (term == IR_CONDITION)
    ids[k++] = cond_id;
  for (int i = 0; i < n; i++) {
    gvar *v = &g->fr->vars[slots[i]];
    gval x = v->v;
    if (!v->defined) {
      if (types[i].dt == TEENY_DT_PTR)
        teeny__gen_fail(g, loc, "a helper returning a pointer cannot return early");
      memset(&x, 0, sizeof x);
      x.id = -1;
      x.is_const = true;
      x.type = types[i];
    }
    ids[k++] = teeny__gen_id(g, x, loc);
  }
  add_op(g, r, term, loc, ids, k, NULL, 0);
  g->cur = saved;
}

/* Generate `if (cond) then-list else else-list` with merged slots.  In a
 * return guard the then-branch starts with RET_FLAG known false. */
static void gen_branches(gen *g, gval cond, teeny_stmt *const *ts, int tn,
                         teeny_stmt *const *es, int en, const bool *asg,
                         teeny_loc loc, bool guard) {
  gframe *fr = g->fr;
  int n = fr->nslots;
  int cid = teeny__gen_id(g, cond, loc);
  gvar *before = vars_save(g);
  teeny_region *outer = g->cur;
  teeny_region *rt = teeny__ir_region_new(g->f), *re = teeny__ir_region_new(g->f);
  g->cur = rt;
  if (guard)
    fr->vars[RET_FLAG(fr)].v = teeny__gv_bool(false);
  gen_stmts(g, ts, tn);
  gvar *after_t = vars_save(g);
  vars_restore(g, before);
  g->cur = re;
  gen_stmts(g, es, en);
  gvar *after_e = vars_save(g);
  g->cur = outer;

  int *slots = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)n);
  teeny_type *types = teeny__arena_alloc(g->cx->arena, sizeof(teeny_type) * (size_t)n);
  int nres = 0;
  for (int s = 0; s < n; s++) {
    if (!asg[s])
      continue;
    bool dt = after_t[s].defined, de = after_e[s].defined;
    bool result = s == RET_VAL(fr) ? (dt || de) : (before[s].defined || (dt && de));
    if (!result)
      continue;
    teeny_type tt = after_t[s].v.type, te = after_e[s].v.type;
    if (dt && de && !teeny__type_eq(tt, te))
      teeny__gen_fail(g, loc, "'%s' is %s on one branch and %s on the other",
                      slot_name(g, s), teeny__gen_tstr(g, tt), teeny__gen_tstr(g, te));
    slots[nres] = s;
    types[nres++] = dt ? tt : te;
  }
  vars_restore(g, after_t);
  yield_slots(g, rt, slots, types, nres, IR_YIELD, -1, loc);
  vars_restore(g, after_e);
  yield_slots(g, re, slots, types, nres, IR_YIELD, -1, loc);

  teeny_op *op = add_op(g, outer, IR_IF, loc, &cid, 1, types, nres);
  op->regions[0] = rt;
  op->regions[1] = re;
  op->nregions = 2;
  vars_restore(g, before);
  for (int s = 0; s < n; s++)
    if (asg[s])
      fr->vars[s].defined = false;
  for (int i = 0; i < nres; i++) {
    gvar *v = &fr->vars[slots[i]];
    v->defined = true;
    v->v = teeny__gv_value(g, op->res[i]);
  }
}

static void gen_if(gen *g, const teeny_stmt *s) {
  gval c = teeny__gen_cond(g, s->cond);
  if (c.is_const) { /* like Triton's constexpr if: only the taken branch */
    if (c.c.i)
      gen_stmt(g, s->then);
    else if (s->els)
      gen_stmt(g, s->els);
    return;
  }
  slotinfo si = slotinfo_new(g);
  scan_stmt(s->then, &si);
  scan_stmt(s->els, &si);
  teeny_stmt *t = s->then, *e = s->els;
  gen_branches(g, c, &t, 1, &e, e ? 1 : 0, merged_slots(g, &si), s->loc, false);
}

/* The rest of a statement list after a possible return runs under
 * `if (!returned)`. */
static void gen_guarded_rest(gen *g, teeny_stmt *const *list, int n) {
  gframe *fr = g->fr;
  slotinfo si = slotinfo_new(g);
  for (int i = 0; i < n; i++)
    scan_stmt(list[i], &si);
  bool *asg = merged_slots(g, &si);
  asg[RET_FLAG(fr)] = asg[RET_VAL(fr)] = true;
  gval rf = fr->vars[RET_FLAG(fr)].v;
  gval notret = teeny__gen_op(g, IR_NOT, &rf, 1, rf.type, list[0]->loc);
  gen_branches(g, notret, list, n, NULL, 0, asg, list[0]->loc, true);
}

static void gen_stmts(gen *g, teeny_stmt *const *list, int n) {
  for (int i = 0; i < n; i++) {
    gval rf = g->fr->vars[RET_FLAG(g->fr)].v;
    if (rf.is_const && rf.c.i)
      return; /* returned on every path: the rest is unreachable */
    if (!rf.is_const) {
      gen_guarded_rest(g, list + i, n - i);
      return;
    }
    gen_stmt(g, list[i]);
  }
}

static void gen_decl(gen *g, const teeny_stmt *s) {
  gvar *v = &g->fr->vars[s->var];
  if (s->type->is_void)
    teeny__gen_fail(g, s->loc, "variable '%s' cannot be void", s->name);
  var_declare(v, s->type, g->b);
  if (s->expr) {
    const char *what = teeny__arena_printf(g->cx->arena, "initialise '%s'", s->name);
    var_set(g, s->var, teeny__gen_expr(g, s->expr), s->expr->loc, what, false);
  }
}

static void gen_return(gen *g, const teeny_stmt *s) {
  gframe *fr = g->fr;
  if (s->expr) {
    const char *what = teeny__arena_printf(g->cx->arena, "return from '%s'", fr->fn->name);
    var_set(g, RET_VAL(fr), teeny__gen_expr(g, s->expr), s->expr->loc, what, false);
  }
  fr->vars[RET_FLAG(fr)].v = teeny__gv_bool(true);
  fr->vars[RET_FLAG(fr)].defined = true;
}

/* ---- loops ---------------------------------------------------------------------------- */

typedef struct carried {
  int *slots;        /* carried slots */
  teeny_type *types; /* their types */
  int n;
  int *inits;        /* their value ids before the loop */
} carried;

static carried carried_slots(gen *g, const bool *asg, teeny_loc loc) {
  gframe *fr = g->fr;
  carried c;
  c.slots = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)fr->nslots);
  c.types = teeny__arena_alloc(g->cx->arena, sizeof(teeny_type) * (size_t)fr->nslots);
  c.inits = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)(fr->nslots + 3));
  c.n = 0;
  for (int s = 0; s < fr->nslots; s++)
    if (asg[s] && fr->vars[s].defined) {
      c.slots[c.n] = s;
      c.types[c.n] = fr->vars[s].v.type;
      c.inits[c.n++] = teeny__gen_id(g, fr->vars[s].v, loc);
    }
  return c;
}

/* Point carried slots at region arguments starting at args[first]. */
static void bind_carried(gen *g, const carried *c, const teeny_region *r, int first) {
  for (int i = 0; i < c->n; i++) {
    gvar *v = &g->fr->vars[c->slots[i]];
    v->v = teeny__gv_value(g, r->args[first + i]);
    v->defined = true;
  }
}

/* After a loop: carried slots take its results; other assigned slots,
 * undefined before the loop, stay undefined. */
static void after_loop(gen *g, const gvar *saved, const bool *asg, const carried *c,
                       const teeny_op *op) {
  vars_restore(g, saved);
  for (int s = 0; s < g->fr->nslots; s++)
    if (asg[s])
      g->fr->vars[s].defined = false;
  for (int i = 0; i < c->n; i++) {
    gvar *v = &g->fr->vars[c->slots[i]];
    v->defined = true;
    v->v = teeny__gv_value(g, op->res[i]);
  }
}

static teeny_region *loop_region(gen *g, const carried *c, const teeny_type *iv) {
  teeny_region *r = teeny__ir_region_new(g->f);
  if (iv)
    teeny__ir_region_arg_add(g->f, r, *iv);
  for (int i = 0; i < c->n; i++)
    teeny__ir_region_arg_add(g->f, r, c->types[i]);
  return r;
}

/* while (cond) { body; step }  or  do { body } while (cond) */
static void gen_while_loop(gen *g, const teeny_expr *cond, const teeny_stmt *body,
                           const teeny_expr *step, bool is_do, teeny_loc loc) {
  slotinfo si = slotinfo_new(g);
  scan_expr(cond, &si);
  scan_stmt(body, &si);
  scan_expr(step, &si);
  bool *asg = merged_slots(g, &si);
  carried c = carried_slots(g, asg, loc);
  gvar *saved = vars_save(g);
  teeny_region *outer = g->cur;

  teeny_region *before = loop_region(g, &c, NULL);
  g->cur = before;
  bind_carried(g, &c, before, 0);
  if (is_do)
    gen_stmt(g, body);
  gval cv = teeny__gen_cond(g, cond);
  int cid = teeny__gen_id(g, cv, cond->loc);
  yield_slots(g, before, c.slots, c.types, c.n, IR_CONDITION, cid, loc);

  vars_restore(g, saved);
  teeny_region *after = loop_region(g, &c, NULL);
  g->cur = after;
  bind_carried(g, &c, after, 0);
  if (!is_do) {
    gen_stmt(g, body);
    if (step)
      teeny__gen_expr(g, step);
  }
  yield_slots(g, after, c.slots, c.types, c.n, IR_YIELD, -1, loc);

  g->cur = outer;
  teeny_op *op = add_op(g, outer, IR_WHILE, loc, c.inits, c.n, c.types, c.n);
  op->regions[0] = before;
  op->regions[1] = after;
  op->nregions = 2;
  after_loop(g, saved, asg, &c, op);
}

/* The constant S of a canonical step on slot v ("v++", "v += S",
 * "v = v + S"), or NULL. */
static const teeny_expr *step_amount(const teeny_expr *step, int v, bool *is_one) {
  *is_one = false;
  if (!step || !step->lhs || step->lhs->sym != SYM_VAR || step->lhs->sym_index != v)
    return NULL;
  if (step->kind == EX_INCDEC && step->op == OP_ADD) {
    *is_one = true;
    return NULL;
  }
  if (step->kind != EX_ASSIGN)
    return NULL;
  if (step->op == OP_ADD)
    return step->rhs;
  const teeny_expr *r = step->rhs;
  if (step->op == OP_NONE && r && r->kind == EX_BINARY && r->op == OP_ADD &&
      r->lhs->kind == EX_NAME && r->lhs->sym == SYM_VAR && r->lhs->sym_index == v)
    return r->rhs;
  return NULL;
}

/* Try `for (T v = a; v < E; v += S)` as scf.for: S a positive constant,
 * v not assigned in the body, E not depending on the body.  Returns false
 * (having emitted at most dead ops) when the loop is not of that form. */
static bool gen_scf_for(gen *g, const teeny_stmt *s) {
  const teeny_stmt *init = s->init;
  if (!init || init->kind != ST_DECL || !init->expr || s->cond->kind != EX_BINARY ||
      s->cond->op != OP_LT || s->cond->lhs->kind != EX_NAME ||
      s->cond->lhs->sym != SYM_VAR || s->cond->lhs->sym_index != init->var)
    return false;
  int v = init->var;
  gvar *var = &g->fr->vars[v];
  /* scf.for compares its bounds as signed: unsigned counters use while */
  if (var->is_ptr || var->is_tile || !teeny__dt_is_signed(var->dt) || !var->defined)
    return false;
  bool is_one;
  const teeny_expr *sx = step_amount(s->step, v, &is_one);
  if (!sx && !is_one)
    return false;
  slotinfo si = slotinfo_new(g);
  scan_stmt(s->loop, &si);
  bool *asg = merged_slots(g, &si);
  bool *self = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)g->fr->nslots);
  self[v] = true;
  const teeny_expr *bound = s->cond->rhs;
  slotinfo bi = slotinfo_new(g);
  scan_expr(bound, &bi);
  if (asg[v] || bi.calls || expr_reads(bound, asg) || expr_reads(bound, self))
    return false;
  int64_t step = 1;
  if (sx) {
    if (expr_reads(sx, asg) || expr_reads(sx, self))
      return false;
    gval sv = teeny__gen_expr(g, sx);
    if (!sv.is_const || sv.type.rank || !teeny__dt_is_int(sv.type.dt) || sv.c.i <= 0)
      return false;
    step = sv.c.i;
  }
  gval ub = teeny__gen_expr(g, bound);
  if (ub.type.rank || !teeny__dt_is_int(ub.type.dt))
    return false;
  if (ub.weak)
    ub = teeny__gen_operand(g, ub, var->dt, bound->loc);
  if (ub.type.dt != var->dt)
    return false;

  teeny_loc loc = s->loc;
  carried c = carried_slots(g, asg, loc);
  int *args = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)(c.n + 3));
  args[0] = teeny__gen_id(g, var->v, loc);
  args[1] = teeny__gen_id(g, ub, loc);
  args[2] = teeny__gen_id(g, teeny__gv_int(var->dt, step), loc);
  memcpy(args + 3, c.inits, sizeof(int) * (size_t)c.n);
  gvar *saved = vars_save(g);
  teeny_region *outer = g->cur;
  teeny_type ivt = teeny__type_scalar(var->dt);
  teeny_region *body = loop_region(g, &c, &ivt);
  g->cur = body;
  var->v = teeny__gv_value(g, body->args[0]);
  bind_carried(g, &c, body, 1);
  gen_stmt(g, s->loop);
  yield_slots(g, body, c.slots, c.types, c.n, IR_YIELD, -1, loc);
  g->cur = outer;
  teeny_op *op = add_op(g, outer, IR_FOR, loc, args, c.n + 3, c.types, c.n);
  op->regions[0] = body;
  op->nregions = 1;
  after_loop(g, saved, asg, &c, op);
  return true;
}

static void gen_for(gen *g, const teeny_stmt *s) {
  if (s->init)
    gen_stmt(g, s->init);
  if (!s->cond)
    teeny__gen_fail(g, s->loc, "a for loop needs a condition (the language has no "
                               "break, so it would never end)");
  if (!gen_scf_for(g, s))
    gen_while_loop(g, s->cond, s->loop, s->step, false, s->loc);
}

static void gen_stmt(gen *g, const teeny_stmt *s) {
  if (!s)
    return;
  switch (s->kind) {
  case ST_BLOCK:
    gen_stmts(g, s->body, s->nbody);
    return;
  case ST_DECL:
    gen_decl(g, s);
    return;
  case ST_EXPR:
    teeny__gen_expr(g, s->expr);
    return;
  case ST_IF:
    gen_if(g, s);
    return;
  case ST_FOR:
    gen_for(g, s);
    return;
  case ST_WHILE:
    gen_while_loop(g, s->cond, s->loop, NULL, false, s->loc);
    return;
  case ST_DO:
    gen_while_loop(g, s->cond, s->loop, NULL, true, s->loc);
    return;
  case ST_RETURN:
    gen_return(g, s);
    return;
  case ST_EMPTY:
    return;
  case ST_BREAK:
  case ST_CONTINUE:
    teeny__gen_fail(g, s->loc, "'%s' is not supported", s->kind == ST_BREAK ? "break"
                                                                              : "continue");
  }
}

/* ---- functions ---------------------------------------------------------------------------- */

static gframe *frame_new(gen *g, const teeny_func *fn) {
  gframe *fr = teeny__arena_alloc(g->cx->arena, sizeof *fr);
  fr->fn = fn;
  fr->nslots = fn->nvars + 2;
  fr->vars = teeny__arena_alloc(g->cx->arena, sizeof(gvar) * (size_t)fr->nslots);
  gvar *rf = &fr->vars[fn->nvars];
  rf->dt = TEENY_DT_BOOL;
  rf->defined = true;
  rf->v = teeny__gv_bool(false);
  if (fn->ret && !fn->ret->is_void)
    var_declare(&fr->vars[fn->nvars + 1], fn->ret, g->b);
  return fr;
}

gval teeny__gen_inline(gen *g, const teeny_func *fn, const gval *args,
                       const teeny_loc *arglocs, int nargs, teeny_loc loc) {
  if (nargs != fn->nparams)
    teeny__gen_fail(g, loc, "'%s' takes %d arguments, not %d", fn->name, fn->nparams, nargs);
  if (g->depth >= TEENY_MAX_INLINE_DEPTH)
    teeny__gen_fail(g, loc, "helper calls nested too deeply (limit %d)", TEENY_MAX_INLINE_DEPTH);
  gframe *fr = frame_new(g, fn);
  fr->caller = g->fr;
  g->fr = fr;
  for (int i = 0; i < nargs; i++) {
    const teeny_param_decl *p = &fn->params[i];
    var_declare(&fr->vars[p->var], p->type, g->b);
    const char *what = teeny__arena_printf(g->cx->arena, "pass argument %d to parameter '%s' of '%s'",
                                           i + 1, p->name, fn->name);
    var_set(g, p->var, args[i], arglocs[i], what, false);
  }
  g->depth++;
  gen_stmts(g, fn->body->body, fn->body->nbody);
  g->depth--;
  gval r;
  memset(&r, 0, sizeof r);
  r.id = -1;
  r.type = teeny__type_scalar(TEENY_DT_VOID);
  if (fn->ret && !fn->ret->is_void) {
    gvar *rv = &fr->vars[RET_VAL(fr)];
    if (!rv->defined)
      teeny__gen_fail(g, loc, "'%s' did not return a value", fn->name);
    r = rv->v;
  }
  g->fr = fr->caller;
  return r;
}

teeny_ir_func *teeny__irgen(teeny_ctx *cx, const teeny_program *prog, int k,
                            const teeny_bindings *b, int num_warps) {
  gen g;
  memset(&g, 0, sizeof g);
  g.cx = cx;
  g.prog = prog;
  g.b = b;
  const teeny_func *fn = prog->funcs[k];
  g.f = teeny__ir_func_new(cx->arena, teeny__arena_printf(cx->arena, "%s_entry_point", fn->name));
  g.f->num_warps = num_warps;
  g.cur = g.f->body;
  if (setjmp(g.fail))
    return NULL;
  g.fr = frame_new(&g, fn);
  for (int i = 0; i < fn->nparams; i++) {
    const teeny_param_decl *p = &fn->params[i];
    gvar *v = &g.fr->vars[p->var];
    var_declare(v, p->type, b);
    if (p->type->is_tile || p->type->is_void)
      teeny__gen_fail(&g, p->loc, "kernel parameters must be scalars or pointers");
    teeny_type t = p->type->is_ptr ? teeny__type_ptr(v->dt) : teeny__type_scalar(v->dt);
    int id = teeny__ir_param_add(g.f, p->name, t);
    v->v = teeny__gv_value(&g, id);
    v->defined = true;
  }
  gen_stmts(&g, fn->body->body, fn->body->nbody);
  add_op(&g, g.f->body, IR_RETURN, fn->loc, NULL, 0, NULL, 0);
  if (teeny__ir_verify(cx, g.f) != TEENY_OK)
    return NULL;
  return g.f;
}
