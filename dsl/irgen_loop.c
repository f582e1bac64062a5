/*
 * dsl/irgen_loop.c — loops: `for`, `while` and `do` as scf.for or
 * scf.while with their loop-carried slots, and the early exits of a loop
 * (break, continue, and return inside a loop), lowered to flag slots so
 * that everything after irgen (verifier, interpreter, code generator, MLIR
 * printer) sees only structured loops.
 *
 * Carried slots: those the body assigns that were defined before the loop
 * become iteration arguments; the rest are undefined after it.
 *
 * Exits.  `break` and `continue` set their loop's flag slot (resolve.c
 * made at most one of each per loop) to true, `return` sets RET_FLAG;
 * irgen.c then runs the rest of the iteration under `if (!flags)`.  At the
 * start of an iteration every flag is known false (the loop would have
 * ended otherwise), and the continue flag never leaves its iteration.  A
 * loop that a break or a return may end is an scf.while whose condition
 * is `cond && !(broke || returned)`, cond computed only when the flags are
 * clear if it calls anything (so a load in it never runs once the loop is
 * done); the flags are carried, and a `for`'s step runs only when they
 * are clear.  A value returned inside the loop is carried out of it: it
 * joins the carried values once the body has given it a type.  A for loop
 * whose only exit is `continue` stays an scf.for.  Loops without exits are
 * built exactly as before.
 *
 * Every flag comes from a scalar condition, so an exit is taken by the
 * whole program at once (scalars are uniform, docs/dsl.md §9).
 */
#include <string.h>

#include "dsl/irgen.h"

/* ---- carried slots ------------------------------------------------------------ */

typedef struct carried {
  int *slots;        /* carried slots */
  teeny_type *types; /* their types */
  int n;             /* how many */
  int *inits;        /* their value ids before the loop */
} carried;

/* Room for every slot of the frame, and then some (late returns). */
static carried carried_slots(gen *g, const bool *asg, teeny_loc loc) {
  gframe *fr = g->fr;
  size_t cap = (size_t)fr->nslots + 3;
  carried c;
  c.slots = teeny__arena_alloc(g->cx->arena, sizeof(int) * cap);
  c.types = teeny__arena_alloc(g->cx->arena, sizeof(teeny_type) * cap);
  c.inits = teeny__arena_alloc(g->cx->arena, sizeof(int) * cap);
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
  for (int i = 0; i < c->n; i++)
    teeny__gen_slot_set(g, c->slots[i], teeny__gv_value(g, r->args[first + i]));
}

/* After a loop: carried slots take its results; other assigned slots,
 * undefined before the loop, stay undefined. */
static void after_loop(gen *g, const gvar *saved, const bool *asg, const carried *c,
                       const teeny_op *op) {
  teeny__gen_vars_restore(g, saved);
  for (int s = 0; s < g->fr->nslots; s++)
    if (asg[s])
      g->fr->vars[s].defined = false;
  for (int i = 0; i < c->n; i++)
    teeny__gen_slot_set(g, c->slots[i], teeny__gv_value(g, op->res[i]));
}

static teeny_region *loop_region(gen *g, const carried *c, const teeny_type *iv) {
  teeny_region *r = teeny__ir_region_new(g->f);
  if (iv)
    teeny__ir_region_arg_add(g->f, r, *iv);
  for (int i = 0; i < c->n; i++)
    teeny__ir_region_arg_add(g->f, r, c->types[i]);
  return r;
}

/* ---- exits ------------------------------------------------------------------------ */

/* The flags that end loop s early: its break flag and, when its body may
 * return, RET_FLAG.  Returns how many (0: the loop runs to its condition). */
static int end_flags(const gen *g, const teeny_stmt *s, bool returns, int *flags) {
  int n = 0;
  if (s->brk_slot >= 0)
    flags[n++] = s->brk_slot;
  if (returns)
    flags[n++] = RET_FLAG(g->fr);
  return n;
}

/* `flags[0] || flags[1]` from the slots' values (non-constant: region
 * arguments or merged results); NULL-like false when all are false. */
static gval any_flag(gen *g, const int *flags, int n, teeny_loc loc, bool *known_false) {
  gval any = teeny__gv_bool(false);
  *known_false = true;
  for (int i = 0; i < n; i++) {
    const gvar *v = &g->fr->vars[flags[i]];
    if (!v->defined || (v->v.is_const && !v->v.c.i))
      continue;
    any = *known_false ? v->v : teeny__gen_binop(g, OP_BITOR, any, v->v, loc);
    *known_false = false;
  }
  return any;
}

/* Run stmts as one iteration's code of loop s, its exits live: a block
 * of them generated with s's flags as the innermost loop's (cont: whether
 * `continue` counts, which it does not for a for's step). */
static void gen_in_loop(gen *g, const teeny_stmt *s, teeny_stmt *body, bool cont) {
  gloop lp = {s->brk_slot, cont ? s->cont_slot : -1, g->fr->loop};
  g->fr->loop = &lp;
  teeny__gen_stmt(g, body);
  g->fr->loop = lp.up;
}

/* The body of loop s for one iteration.  Every exit flag is false as an
 * iteration starts; saying so lets the body fold its guards. */
static void gen_body(gen *g, const teeny_stmt *s, const int *flags, int nflags) {
  for (int i = 0; i < nflags; i++)
    teeny__gen_slot_set(g, flags[i], teeny__gv_bool(false));
  if (s->cont_slot >= 0)
    teeny__gen_slot_set(g, s->cont_slot, teeny__gv_bool(false));
  gen_in_loop(g, s, s->loop, true);
}

/* A for loop's step after an iteration: skipped once the loop is left. */
static void gen_step(gen *g, const teeny_stmt *s, const teeny_expr *step) {
  teeny_stmt *st = teeny__arena_alloc(g->cx->arena, sizeof *st);
  teeny_stmt **list = teeny__arena_alloc(g->cx->arena, sizeof *list);
  teeny_stmt *blk = teeny__arena_alloc(g->cx->arena, sizeof *blk);
  st->kind = ST_EXPR;
  st->loc = step->loc;
  st->expr = (teeny_expr *)step;
  st->var = st->brk_slot = st->cont_slot = -1;
  *blk = *st;
  blk->kind = ST_BLOCK;
  blk->expr = NULL;
  blk->body = list;
  blk->nbody = 1;
  list[0] = st;
  gen_in_loop(g, s, blk, false);
}

/* if (ok) { cond } else { false }: a condition that calls something is
 * not computed once the loop is done. */
static gval guarded_cond(gen *g, gval ok, const teeny_expr *cond, teeny_loc loc) {
  int okid = teeny__gen_id(g, ok, loc);
  teeny_region *outer = g->cur;
  teeny_region *rt = teeny__ir_region_new(g->f), *re = teeny__ir_region_new(g->f);
  g->cur = rt;
  int cv = teeny__gen_id(g, teeny__gen_cond(g, cond), cond->loc);
  teeny__gen_add_op(g, rt, IR_YIELD, loc, &cv, 1, NULL, 0);
  g->cur = re;
  int no = teeny__gen_id(g, teeny__gv_bool(false), loc);
  teeny__gen_add_op(g, re, IR_YIELD, loc, &no, 1, NULL, 0);
  g->cur = outer;
  teeny_type bt = teeny__type_scalar(TEENY_DT_BOOL);
  teeny_op *op = teeny__gen_add_op(g, outer, IR_IF, loc, &okid, 1, &bt, 1);
  op->regions[0] = rt;
  op->regions[1] = re;
  op->nregions = 2;
  return teeny__gv_value(g, op->res[0]);
}

/* The loop's condition (NULL: always true), and not after an exit. */
static int loop_cond(gen *g, const teeny_expr *cond, const int *flags, int nflags,
                     teeny_loc loc) {
  bool clear;
  gval any = any_flag(g, flags, nflags, loc, &clear);
  if (clear)
    return teeny__gen_id(g, cond ? teeny__gen_cond(g, cond) : teeny__gv_bool(true), loc);
  gval ok = teeny__gen_op(g, IR_NOT, &any, 1, any.type, loc);
  if (!cond)
    return teeny__gen_id(g, ok, loc);
  gscan si = teeny__gen_scan_new(g);
  teeny__gen_scan_expr(cond, &si);
  if (si.calls)
    return teeny__gen_id(g, guarded_cond(g, ok, cond, loc), loc);
  gval c = teeny__gen_cond(g, cond);
  return teeny__gen_id(g, teeny__gen_binop(g, OP_BITAND, c, ok, loc), loc);
}

/* ---- while loops --------------------------------------------------------------------- */

/* Slot r of the returned value, when the body returns into it and it was
 * undefined before the loop (`late`): carried too, from a placeholder, once the body's values give
 * their types.  The values at the ends of both regions (bend, aend) are
 * updated so that yields pass them on; the region that does not run the
 * body passes its argument through. */
static void carry_late(gen *g, carried *c, int r, const gvar *saved, bool is_do, gvar *bend,
                       gvar *aend, teeny_region *before, teeny_region *after,
                       teeny_region *outer, teeny_loc loc) {
  const gvar *body_end = is_do ? bend : aend;
  if (saved[r].defined || !body_end[r].defined)
    return;
  teeny_type t = body_end[r].v.type;
  if (t.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "a helper returning a pointer cannot return from inside a loop");
  int ab = teeny__ir_region_arg_add(g->f, before, t);
  int aa = teeny__ir_region_arg_add(g->f, after, t);
  gval zero;
  memset(&zero, 0, sizeof zero);
  zero.id = -1;
  zero.is_const = true;
  zero.type = t;
  teeny_region *cur = g->cur;
  g->cur = outer; /* the placeholder is made before the loop */
  c->slots[c->n] = r;
  c->types[c->n] = t;
  c->inits[c->n++] = teeny__gen_id(g, zero, loc);
  g->cur = cur;
  gvar *pass = is_do ? aend : bend;
  pass[r].defined = true;
  pass[r].v = teeny__gv_value(g, is_do ? aa : ab);
}

/* while (cond) { body; step }  or  do { body } while (cond) */
static void gen_while_loop(gen *g, const teeny_stmt *s, const teeny_expr *step, bool is_do) {
  teeny_loc loc = s->loc;
  const teeny_expr *cond = s->cond;
  gscan si = teeny__gen_scan_new(g);
  teeny__gen_scan_expr(cond, &si);
  teeny__gen_scan_stmt(s->loop, &si);
  teeny__gen_scan_expr(step, &si);
  bool *asg = teeny__gen_scan_merged(g, &si);
  int flags[2];
  int nflags = end_flags(g, s, si.returns, flags);
  if (s->brk_slot >= 0)
    teeny__gen_slot_set(g, s->brk_slot, teeny__gv_bool(false));
  carried c = carried_slots(g, asg, loc);
  gvar *saved = teeny__gen_vars_save(g);
  teeny_region *outer = g->cur;

  teeny_region *before = loop_region(g, &c, NULL);
  g->cur = before;
  bind_carried(g, &c, before, 0);
  if (is_do)
    gen_body(g, s, flags, nflags);
  int cid = loop_cond(g, cond, flags, nflags, cond ? cond->loc : loc);
  gvar *bend = teeny__gen_vars_save(g);

  teeny__gen_vars_restore(g, saved);
  teeny_region *after = loop_region(g, &c, NULL);
  g->cur = after;
  bind_carried(g, &c, after, 0);
  if (!is_do) {
    gen_body(g, s, flags, nflags);
    if (step && nflags)
      gen_step(g, s, step);
    else if (step)
      teeny__gen_expr(g, step);
  }
  gvar *aend = teeny__gen_vars_save(g);
  for (int i = 0; si.returns && i < g->fr->nret; i++) /* each slot of the value */
    carry_late(g, &c, RET_VAL(g->fr) + i, saved, is_do, bend, aend, before, after, outer,
               loc);

  teeny__gen_vars_restore(g, bend);
  teeny__gen_yield_slots(g, before, c.slots, c.types, c.n, IR_CONDITION, cid, loc);
  teeny__gen_vars_restore(g, aend);
  teeny__gen_yield_slots(g, after, c.slots, c.types, c.n, IR_YIELD, -1, loc);
  g->cur = outer;
  teeny_op *op = teeny__gen_add_op(g, outer, IR_WHILE, loc, c.inits, c.n, c.types, c.n);
  op->regions[0] = before;
  op->regions[1] = after;
  op->nregions = 2;
  after_loop(g, saved, asg, &c, op);
}

void teeny__gen_while(gen *g, const teeny_stmt *s) {
  gen_while_loop(g, s, NULL, s->kind == ST_DO);
}

void teeny__gen_jump(gen *g, const teeny_stmt *s) {
  teeny__gen_slot_set(g, s->var, teeny__gv_bool(true));
}

/* ---- for loops --------------------------------------------------------------------------- */

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
 * v not assigned in the body, E not depending on the body, and no break
 * or return (which need an scf.while).  Returns false (having emitted at
 * most dead ops) when the loop is not of that form. */
static bool gen_scf_for(gen *g, const teeny_stmt *s) {
  const teeny_stmt *init = s->init;
  if (!init || init->kind != ST_DECL || !init->expr || !s->cond ||
      s->cond->kind != EX_BINARY || s->cond->op != OP_LT || s->cond->lhs->kind != EX_NAME ||
      s->cond->lhs->sym != SYM_VAR || s->cond->lhs->sym_index != init->var ||
      s->brk_slot >= 0)
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
  gscan si = teeny__gen_scan_new(g);
  teeny__gen_scan_stmt(s->loop, &si);
  if (si.returns)
    return false;
  bool *asg = teeny__gen_scan_merged(g, &si);
  bool *self = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)g->fr->nslots);
  self[v] = true;
  const teeny_expr *bound = s->cond->rhs;
  gscan bi = teeny__gen_scan_new(g);
  teeny__gen_scan_expr(bound, &bi);
  if (asg[v] || bi.calls || teeny__gen_expr_reads(bound, asg) ||
      teeny__gen_expr_reads(bound, self))
    return false;
  int64_t step = 1;
  if (sx) {
    if (teeny__gen_expr_reads(sx, asg) || teeny__gen_expr_reads(sx, self))
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
  gvar *saved = teeny__gen_vars_save(g);
  teeny_region *outer = g->cur;
  teeny_type ivt = teeny__type_scalar(var->dt);
  teeny_region *body = loop_region(g, &c, &ivt);
  g->cur = body;
  var->v = teeny__gv_value(g, body->args[0]);
  bind_carried(g, &c, body, 1);
  gen_body(g, s, NULL, 0);
  teeny__gen_yield_slots(g, body, c.slots, c.types, c.n, IR_YIELD, -1, loc);
  g->cur = outer;
  teeny_op *op = teeny__gen_add_op(g, outer, IR_FOR, loc, args, c.n + 3, c.types, c.n);
  op->regions[0] = body;
  op->nregions = 1;
  after_loop(g, saved, asg, &c, op);
  return true;
}

void teeny__gen_for(gen *g, const teeny_stmt *s) {
  if (s->init)
    teeny__gen_stmt(g, s->init);
  if (!gen_scf_for(g, s))
    gen_while_loop(g, s, s->step, false);
}
