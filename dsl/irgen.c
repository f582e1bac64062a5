/*
 * dsl/irgen.c — tile IR generation: statements, variables, `if`, early
 * returns and helper inlining (see dsl/irgen.h for the model; loops are
 * irgen_loop.c).
 *
 * Control flow merges work on variable slots.  Before an `if`, the slots a
 * branch may assign are found by walking the AST; after generating both
 * branches into detached regions, the slots defined on both sides (or
 * before) become the if's results and are yielded from each region.  Loops
 * do the same with the slots assigned in the body that were defined before
 * the loop: they become scf.for/scf.while iteration arguments.
 *
 * An exit (return, break, continue) sets its flag slot to a constant true;
 * a statement list stops there when a flag is known true and puts the rest
 * under `if (!flags)` when one may be.
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
  case BI_DEVICE_PRINT: case BI_DEVICE_ASSERT:
    return false;
  default:
    return true;
  }
}

void teeny__gen_scan_expr(const teeny_expr *e, gscan *si) {
  if (!e)
    return;
  if ((e->kind == EX_ASSIGN || e->kind == EX_INCDEC) && e->lhs &&
      e->lhs->sym == SYM_VAR) /* a variable's slots, or a field's */
    for (int i = 0; i < (e->lhs->nslots > 1 ? e->lhs->nslots : 1); i++)
      si->assigned[e->lhs->sym_index + i] = true;
  if (e->kind == EX_CALL && !pure_call(e))
    si->calls = true;
  teeny__gen_scan_expr(e->lhs, si);
  teeny__gen_scan_expr(e->rhs, si);
  teeny__gen_scan_expr(e->cond, si);
  for (int i = 0; i < e->nargs; i++)
    teeny__gen_scan_expr(e->args[i], si);
}

void teeny__gen_scan_stmt(const teeny_stmt *s, gscan *si) {
  if (!s)
    return;
  switch (s->kind) {
  case ST_DECL: /* every slot of a struct variable */
    for (int i = 0; i < teeny__tyspec_slots(si->prog, s->type); i++)
      si->declared[s->var + i] = true;
    break;
  case ST_RETURN:
    si->returns = true;
    break;
  case ST_BREAK:
  case ST_CONTINUE:
    si->assigned[s->var] = true;
    break;
  case ST_FOR:
  case ST_WHILE:
  case ST_DO: /* a loop sets its own flags before it starts */
    if (s->brk_slot >= 0)
      si->assigned[s->brk_slot] = true;
    break;
  default:
    break;
  }
  teeny__gen_scan_expr(s->expr, si);
  teeny__gen_scan_expr(s->cond, si);
  teeny__gen_scan_expr(s->step, si);
  for (int i = 0; i < s->nbody; i++)
    teeny__gen_scan_stmt(s->body[i], si);
  teeny__gen_scan_stmt(s->then, si);
  teeny__gen_scan_stmt(s->els, si);
  teeny__gen_scan_stmt(s->init, si);
  teeny__gen_scan_stmt(s->loop, si);
}

gscan teeny__gen_scan_new(gen *g) {
  gscan si;
  int n = g->fr->nslots;
  si.assigned = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)n);
  si.declared = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)n);
  si.returns = si.calls = false;
  si.prog = g->prog;
  return si;
}

bool *teeny__gen_scan_merged(gen *g, gscan *si) {
  gframe *fr = g->fr;
  for (int s = 0; s < fr->nslots; s++)
    if (si->declared[s])
      si->assigned[s] = false;
  if (si->returns)
    for (int i = -1; i < fr->nret; i++) /* RET_FLAG and RET_VAL's slots */
      si->assigned[RET_VAL(fr) + i] = true;
  return si->assigned;
}

bool teeny__gen_expr_reads(const teeny_expr *e, const bool *set) {
  if (!e)
    return false;
  if ((e->kind == EX_NAME || e->kind == EX_MEMBER) && e->sym == SYM_VAR)
    for (int i = 0; i < (e->nslots > 1 ? e->nslots : 1); i++)
      if (set[e->sym_index + i])
        return true;
  if (teeny__gen_expr_reads(e->lhs, set) || teeny__gen_expr_reads(e->rhs, set) ||
      teeny__gen_expr_reads(e->cond, set))
    return true;
  for (int i = 0; i < e->nargs; i++)
    if (teeny__gen_expr_reads(e->args[i], set))
      return true;
  return false;
}

/* ---- variables ------------------------------------------------------------------ */

gvar *teeny__gen_vars_save(gen *g) {
  size_t n = sizeof(gvar) * (size_t)g->fr->nslots;
  gvar *copy = teeny__arena_alloc(g->cx->arena, n);
  memcpy(copy, g->fr->vars, n);
  return copy;
}

void teeny__gen_vars_restore(gen *g, const gvar *saved) {
  memcpy(g->fr->vars, saved, sizeof(gvar) * (size_t)g->fr->nslots);
}

void teeny__gen_slot_set(gen *g, int slot, gval v) {
  gvar *var = &g->fr->vars[slot];
  var->v = v;
  var->defined = true;
}

void teeny__gen_declare_var(gvar *v, const teeny_tyspec *ts, const teeny_bindings *b) {
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
void teeny__gen_assign_var(gen *g, gvar *v, gval x, teeny_loc loc, const char *what,
                           bool cast) {
  if (x.st)
    teeny__gen_fail(g, loc, "cannot %s (%s) with a value of %s", what, var_kind(g, v),
                    x.st->name);
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
  if (slot == RET_FLAG(g->fr) || IS_RET_VAL(g->fr, slot))
    return "the return value";
  return fn->var_names && fn->var_names[slot] ? fn->var_names[slot] : "?";
}

/* "w", "w.pos": a target as written. */
static const char *target_name(gen *g, const teeny_expr *e) {
  if (e->kind != EX_MEMBER)
    return e->name;
  return teeny__arena_printf(g->cx->arena, "%s.%s", target_name(g, e->lhs), e->name);
}

/* The struct a target (a variable, or a field of one) holds, or NULL. */
static const teeny_struct *target_struct(gen *g, const teeny_expr *lhs) {
  if (lhs->kind == EX_MEMBER)
    return teeny__tyspec_struct(g->prog, lhs->type);
  return g->fr->vars[lhs->sym_index].st;
}

gval teeny__gen_assign(gen *g, const teeny_expr *e) {
  const teeny_expr *lhs = e->lhs;
  if (!lhs || (lhs->kind != EX_NAME && lhs->kind != EX_MEMBER) || lhs->sym != SYM_VAR)
    teeny__gen_fail(g, e->loc, "only variables can be assigned");
  int slot = lhs->sym_index;
  const char *name = target_name(g, lhs);
  const teeny_struct *st = target_struct(g, lhs);
  const char *what = teeny__arena_printf(g->cx->arena, "assign to '%s'", name);
  if (e->kind == EX_ASSIGN && e->op == OP_NONE) {
    teeny__gen_store(g, slot, st, teeny__gen_expr_any(g, e->rhs), e->loc, what, false);
  } else {
    gvar *v = &g->fr->vars[slot];
    if (st)
      teeny__gen_fail(g, e->loc, "'%s' is a struct (%s): only '=' assigns one", name,
                      st->name);
    if (!v->defined)
      teeny__gen_fail(g, lhs->loc, "'%s' is used before it is assigned on every path",
                      name);
    gval rhs = e->kind == EX_INCDEC ? teeny__gv_weak_int(1) : teeny__gen_expr(g, e->rhs);
    gval r = teeny__gen_binop(g, e->op, v->v, rhs, e->loc);
    teeny__gen_assign_var(g, v, r, e->loc, what, true);
  }
  gval none;
  memset(&none, 0, sizeof none);
  none.id = -1;
  none.type = teeny__type_scalar(TEENY_DT_VOID);
  return none;
}

/* ---- statements ------------------------------------------------------------------- */

static void gen_stmts(gen *g, teeny_stmt *const *list, int n);

teeny_op *teeny__gen_add_op(gen *g, teeny_region *r, teeny_opcode code, teeny_loc loc,
                            const int *args, int nargs, const teeny_type *rt, int nres) {
  teeny_op *op = teeny__ir_op_add(g->f, r, code, loc, args, nargs, rt, nres);
  if (!op)
    teeny__gen_fail(g, loc, "kernel too large: more than %d IR operations after inlining",
                    TEENY_MAX_IR_OPS);
  return op;
}

void teeny__gen_yield_slots(gen *g, teeny_region *r, const int *slots,
                            const teeny_type *types, int n, teeny_opcode term,
                            int cond_id, teeny_loc loc) {
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
  teeny__gen_add_op(g, r, term, loc, ids, k, NULL, 0);
  g->cur = saved;
}

void teeny__gen_branches(gen *g, gval cond, teeny_stmt *const *ts, int tn,
                         teeny_stmt *const *es, int en, const bool *asg,
                         teeny_loc loc, const int *clear, int nclear) {
  gframe *fr = g->fr;
  int n = fr->nslots;
  int cid = teeny__gen_id(g, cond, loc);
  gvar *before = teeny__gen_vars_save(g);
  teeny_region *outer = g->cur;
  teeny_region *rt = teeny__ir_region_new(g->f), *re = teeny__ir_region_new(g->f);
  g->cur = rt;
  for (int i = 0; i < nclear; i++)
    fr->vars[clear[i]].v = teeny__gv_bool(false);
  gen_stmts(g, ts, tn);
  gvar *after_t = teeny__gen_vars_save(g);
  teeny__gen_vars_restore(g, before);
  g->cur = re;
  gen_stmts(g, es, en);
  gvar *after_e = teeny__gen_vars_save(g);
  g->cur = outer;

  int *slots = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)n);
  teeny_type *types = teeny__arena_alloc(g->cx->arena, sizeof(teeny_type) * (size_t)n);
  int nres = 0;
  for (int s = 0; s < n; s++) {
    if (!asg[s])
      continue;
    bool dt = after_t[s].defined, de = after_e[s].defined;
    bool result = IS_RET_VAL(fr, s) ? (dt || de) : (before[s].defined || (dt && de));
    if (!result)
      continue;
    teeny_type tt = after_t[s].v.type, te = after_e[s].v.type;
    if (dt && de && !teeny__type_eq(tt, te))
      teeny__gen_fail(g, loc, "'%s' is %s on one branch and %s on the other",
                      slot_name(g, s), teeny__gen_tstr(g, tt), teeny__gen_tstr(g, te));
    slots[nres] = s;
    types[nres++] = dt ? tt : te;
  }
  teeny__gen_vars_restore(g, after_t);
  teeny__gen_yield_slots(g, rt, slots, types, nres, IR_YIELD, -1, loc);
  teeny__gen_vars_restore(g, after_e);
  teeny__gen_yield_slots(g, re, slots, types, nres, IR_YIELD, -1, loc);

  teeny_op *op = teeny__gen_add_op(g, outer, IR_IF, loc, &cid, 1, types, nres);
  op->regions[0] = rt;
  op->regions[1] = re;
  op->nregions = 2;
  teeny__gen_vars_restore(g, before);
  for (int s = 0; s < n; s++)
    if (asg[s])
      fr->vars[s].defined = false;
  for (int i = 0; i < nres; i++)
    teeny__gen_slot_set(g, slots[i], teeny__gv_value(g, op->res[i]));
}

static void gen_if(gen *g, const teeny_stmt *s) {
  gval c = teeny__gen_cond(g, s->cond);
  if (c.is_const) { /* like Triton's constexpr if: only the taken branch */
    if (c.c.i)
      teeny__gen_stmt(g, s->then);
    else if (s->els)
      teeny__gen_stmt(g, s->els);
    return;
  }
  gscan si = teeny__gen_scan_new(g);
  teeny__gen_scan_stmt(s->then, &si);
  teeny__gen_scan_stmt(s->els, &si);
  teeny_stmt *t = s->then, *e = s->els;
  teeny__gen_branches(g, c, &t, 1, &e, e ? 1 : 0, teeny__gen_scan_merged(g, &si), s->loc,
                      NULL, 0);
}

/* The exit flags live here: RET_FLAG, then the innermost loop's. */
static int exit_flags(const gframe *fr, int *flags) {
  int n = 0;
  flags[n++] = RET_FLAG(fr);
  if (fr->loop && fr->loop->brk >= 0)
    flags[n++] = fr->loop->brk;
  if (fr->loop && fr->loop->cont >= 0)
    flags[n++] = fr->loop->cont;
  return n;
}

/* The rest of a statement list, after an exit that may have been taken,
 * runs under `if (!(flag || ...))` for the flags flags[0..nf) that are not
 * known false. */
static void gen_guarded_rest(gen *g, teeny_stmt *const *list, int n, const int *flags,
                             int nf) {
  gframe *fr = g->fr;
  gscan si = teeny__gen_scan_new(g);
  for (int i = 0; i < n; i++)
    teeny__gen_scan_stmt(list[i], &si);
  bool *asg = teeny__gen_scan_merged(g, &si);
  for (int i = -1; i < fr->nret; i++) /* RET_FLAG and RET_VAL's slots */
    asg[RET_VAL(fr) + i] = true;
  gval any;
  int live[3], nl = 0;
  for (int i = 0; i < nf; i++) {
    const gvar *f = &fr->vars[flags[i]];
    asg[flags[i]] = true;
    if (!f->defined || f->v.is_const)
      continue;
    any = nl ? teeny__gen_binop(g, OP_BITOR, any, f->v, list[0]->loc) : f->v;
    live[nl++] = flags[i];
  }
  gval go = teeny__gen_op(g, IR_NOT, &any, 1, any.type, list[0]->loc);
  teeny__gen_branches(g, go, list, n, NULL, 0, asg, list[0]->loc, live, nl);
}

static void gen_stmts(gen *g, teeny_stmt *const *list, int n) {
  int flags[3];
  int nf = exit_flags(g->fr, flags);
  for (int i = 0; i < n; i++) {
    bool maybe = false;
    for (int k = 0; k < nf; k++) {
      const gvar *f = &g->fr->vars[flags[k]];
      if (!f->defined)
        continue;
      if (f->v.is_const && f->v.c.i)
        return; /* exited on every path: the rest is unreachable */
      maybe = maybe || !f->v.is_const;
    }
    if (maybe) {
      gen_guarded_rest(g, list + i, n - i, flags, nf);
      return;
    }
    teeny__gen_stmt(g, list[i]);
  }
}

static void gen_decl(gen *g, const teeny_stmt *s) {
  gvar *v = &g->fr->vars[s->var];
  if (s->type->is_void)
    teeny__gen_fail(g, s->loc, "variable '%s' cannot be void", s->name);
  (void)v;
  teeny__gen_declare(g, g->fr, s->var, s->type);
  const teeny_struct *st = g->fr->vars[s->var].st;
  if (st && st->desc && !s->expr)
    teeny__gen_fail(g, s->loc, "descriptor '%s' (%s) must be initialised where it is declared "
                    "(its block shape is fixed there)", s->name, st->name);
  if (s->expr) {
    const char *what = teeny__arena_printf(g->cx->arena, "initialise '%s'", s->name);
    teeny__gen_store(g, s->var, g->fr->vars[s->var].st, teeny__gen_expr_any(g, s->expr),
                     s->expr->loc, what, false);
  }
}

static void gen_return(gen *g, const teeny_stmt *s) {
  gframe *fr = g->fr;
  if (s->expr) {
    const char *what = teeny__arena_printf(g->cx->arena, "return from '%s'", fr->fn->name);
    teeny__gen_store(g, RET_VAL(fr), fr->vars[RET_VAL(fr)].st,
                     teeny__gen_expr_any(g, s->expr), s->expr->loc, what, false);
  }
  teeny__gen_slot_set(g, RET_FLAG(fr), teeny__gv_bool(true));
}

void teeny__gen_stmt(gen *g, const teeny_stmt *s) {
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
    teeny__gen_for(g, s);
    return;
  case ST_WHILE:
  case ST_DO:
    teeny__gen_while(g, s);
    return;
  case ST_RETURN:
    gen_return(g, s);
    return;
  case ST_BREAK:
  case ST_CONTINUE:
    teeny__gen_jump(g, s);
    return;
  case ST_EMPTY:
    return;
  }
}

/* ---- functions ---------------------------------------------------------------------------- */

static gframe *frame_new(gen *g, const teeny_func *fn) {
  gframe *fr = teeny__arena_alloc(g->cx->arena, sizeof *fr);
  fr->fn = fn;
  fr->nret = teeny__tyspec_slots(g->prog, fn->ret);
  fr->nslots = fn->nvars + 1 + fr->nret;
  fr->vars = teeny__arena_alloc(g->cx->arena, sizeof(gvar) * (size_t)fr->nslots);
  gvar *rf = &fr->vars[RET_FLAG(fr)];
  rf->dt = TEENY_DT_BOOL;
  rf->defined = true;
  rf->v = teeny__gv_bool(false);
  if (fn->ret && !fn->ret->is_void)
    teeny__gen_declare(g, fr, RET_VAL(fr), fn->ret);
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
    teeny__gen_declare(g, fr, p->var, p->type);
    const char *what = teeny__arena_printf(g->cx->arena, "pass argument %d to parameter '%s' of '%s'",
                                           i + 1, p->name, fn->name);
    teeny__gen_store(g, p->var, fr->vars[p->var].st, args[i], arglocs[i], what, false);
  }
  g->depth++;
  gen_stmts(g, fn->body->body, fn->body->nbody);
  g->depth--;
  gval r;
  memset(&r, 0, sizeof r);
  r.id = -1;
  r.type = teeny__type_scalar(TEENY_DT_VOID);
  if (fn->ret && !fn->ret->is_void) {
    for (int i = 0; i < fr->nret; i++)
      if (!fr->vars[RET_VAL(fr) + i].defined)
        teeny__gen_fail(g, loc, "'%s' did not return a value", fn->name);
    r = teeny__gen_slots_value(g, RET_VAL(fr), fr->vars[RET_VAL(fr)].st, loc,
                               "the return value");
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
  g.f->unaligned = b->unaligned;
  g.cur = g.f->body;
  if (setjmp(g.fail))
    return NULL;
  g.fr = frame_new(&g, fn);
  for (int i = 0; i < fn->nparams; i++) {
    const teeny_param_decl *p = &fn->params[i];
    gvar *v = &g.fr->vars[p->var];
    if (p->type->ndblock) { /* tensor_desc(T, B0, ..): several IR parameters */
      teeny__gen_declare(&g, g.fr, p->var, p->type);
      teeny__gen_store(&g, p->var, teeny__tyspec_struct(prog, p->type),
                       teeny__gen_desc_param(&g, p), p->loc, "bind the parameter", false);
      continue;
    }
    teeny__gen_declare_var(v, p->type, b);
    if (p->type->is_tile || p->type->is_void || p->type->strct >= 0)
      teeny__gen_fail(&g, p->loc, "kernel parameters must be scalars or pointers");
    teeny_type t = p->type->is_ptr ? teeny__type_ptr(v->dt) : teeny__type_scalar(v->dt);
    int id = teeny__ir_param_add(g.f, p->name, t);
    v->v = teeny__gv_value(&g, id);
    v->defined = true;
  }
  gen_stmts(&g, fn->body->body, fn->body->nbody);
  teeny__gen_add_op(&g, g.f->body, IR_RETURN, fn->loc, NULL, 0, NULL, 0);
  int vrc = teeny__ir_verify(cx, g.f);
  if (vrc == TEENY_E_NOMEM && cx->arena->oom) /* as an allocation of ours would */
    longjmp(*cx->arena->oom, 1);
  if (vrc != TEENY_OK)
    return NULL;
  return g.f;
}
