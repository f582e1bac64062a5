/*
 * dsl/nvptx/order.c — program order between the threads of one block.
 *
 * The language runs a program's memory operations in program order
 * (docs/dsl.md §9): a lane that loads what another lane stored before it
 * sees the store, a scalar load sees every earlier tile store, and so on.
 * A block's threads run at their own pace, so where two operations may
 * touch one address from different threads, with a write among them, a
 * bar.sync must separate them.  This file decides where, as the code
 * generator walks the program in order:
 *
 *   g->ord.v   the accesses since the last barrier (on some path to here),
 *              only those through parameters the kernel writes: nothing
 *              can race with an address no one writes.
 *   access     before each load, store or atomic: if it conflicts with a
 *              pending access, emit a barrier first; then record it.
 *   barrier    every bar.sync the code generator emits (its own exchanges
 *              through shared memory too) empties the pending set, but
 *              for the access of the op being lowered when the barrier
 *              comes before its instruction (an exchange of its operands
 *              into the layout it stores from: order_done ends that).
 *   regions    an if joins the sets of its branches; a loop checks, at its
 *              latch, the pending set against the accesses its next trip
 *              may make before a barrier (a frame collects them), and puts
 *              a barrier there if they conflict; after a loop the set is
 *              the union of the paths that leave it.
 *   atomics    a release (or acq_rel) waits for every pending access of
 *              other threads; an acquire makes the next access of other
 *              threads wait for it.
 *
 * Two accesses conflict unless both read, their parameters differ, both
 * are scalar (thread 0 does every scalar access of a written parameter),
 * both are atomics whose order cannot show (integer add/max/min with unused
 * results), or they run in the same threads: the same layout with no
 * element held by two threads, the same address tile (one value, or the
 * same pure expression), whose addresses are provably distinct (contiguous
 * over the whole tile).  Across a loop's back edge the same expression
 * names other addresses: the pair is safe only when the pointer moves by a
 * known constant per trip (delta()), by at least the tile's span, or not
 * at all.
 */
#include <string.h>

#include "dsl/nvptx/codegen.h"

/* ---- the pending set ---------------------------------------------------------------- */

static void push(cg *g, cg_order *o, const cg_access *a) {
  for (int i = 0; i < o->n; i++)
    if (memcmp(&o->v[i], a, sizeof *a) == 0)
      return; /* already pending */
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 8;
    cg_access *v = teeny__cg_alloc(g, sizeof *v * (size_t)cap);
    if (o->n)
      memcpy(v, o->v, sizeof *v * (size_t)o->n);
    o->v = v;
    o->cap = cap;
  }
  o->v[o->n++] = *a;
}

cg_order teeny__cg_order_save(cg *g) {
  cg_order s = g->ord;
  s.cap = s.n;
  s.v = s.n ? teeny__cg_alloc(g, sizeof *s.v * (size_t)s.n) : NULL;
  if (s.n)
    memcpy(s.v, g->ord.v, sizeof *s.v * (size_t)s.n);
  return s;
}

void teeny__cg_order_restore(cg *g, const cg_order *s) {
  g->ord.n = 0;
  g->ord.acquire = s->acquire;
  g->ord.acquire_t0 = s->acquire_t0;
  for (int i = 0; i < s->n; i++)
    push(g, &g->ord, &s->v[i]);
}

void teeny__cg_order_join(cg *g, const cg_order *s) {
  for (int i = 0; i < s->n; i++)
    push(g, &g->ord, &s->v[i]);
  if (s->acquire) {
    g->ord.acquire_t0 = g->ord.acquire ? g->ord.acquire_t0 && s->acquire_t0 : s->acquire_t0;
    g->ord.acquire = true;
  }
}

/* ---- when two accesses need a barrier -------------------------------------------- */

/* Every element of L is held by one thread only. */
static bool single_holder(const cg_layout *L) {
  for (int k = 0; k < CG_LANE_BITS; k++)
    if (L->lane[k] < 0)
      return false;
  for (int k = 0; k < L->nwarp; k++)
    if (L->warp[k] < 0)
      return false;
  return true;
}

static bool pure_address_op(teeny_opcode c) {
  switch (c) {
  case IR_CONST: case IR_MAKE_RANGE: case IR_SPLAT: case IR_BROADCAST:
  case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_TRANS: case IR_PROGRAM_ID:
  case IR_NUM_PROGRAMS: case IR_ADDPTR: case IR_ADD: case IR_SUB: case IR_MUL:
  case IR_SHL: case IR_CAST:
    return true;
  default:
    return false;
  }
}

/* a and b compute the same values: one value, or the same pure op of the
 * same operands (a few levels deep: `x + o` written twice). */
static bool same_value(cg *g, int a, int b, int depth) {
  if (a == b)
    return true;
  const teeny_op *x = g->f->values[a].def, *y = g->f->values[b].def;
  if (!x || !y || depth > 8 || x->code != y->code || !pure_address_op(x->code) ||
      x->nargs != y->nargs || x->nres != 1 || y->nres != 1 ||
      !teeny__type_eq(teeny__ir_type(g->f, a), teeny__ir_type(g->f, b)))
    return false;
  if (x->code == IR_CONST)
    return memcmp(&x->cval, &y->cval, sizeof x->cval) == 0;
  if (x->code == IR_MAKE_RANGE)
    return x->start == y->start && x->end == y->end;
  if (x->axis != y->axis)
    return false;
  for (int i = 0; i < x->nargs; i++)
    if (!same_value(g, x->args[i], y->args[i], depth + 1))
      return false;
  return true;
}

/* No two elements of the pointer tile p share an address: consecutive
 * addresses over the whole last dim, and one row only (a second row may
 * overlap the first when its stride is short). */
static bool distinct_addresses(cg *g, int p) {
  teeny_type t = teeny__ir_type(g->f, p);
  for (int d = 0; d + 1 < t.rank; d++)
    if (t.shape[d] > 1)
      return false;
  return t.rank && g->vi[p].ax.contig[t.rank - 1] >= t.shape[t.rank - 1];
}

/* ---- how far a value moves from one trip of a loop to the next ---------------- */

#define NO_DELTA INT64_MIN

static bool const_int(cg *g, int v, int64_t *c) {
  const teeny_op *d = g->f->values[v].def;
  teeny_type t = teeny__ir_type(g->f, v);
  if (!d || d->code != IR_CONST || !teeny__dt_is_int(t.dt))
    return false;
  *c = d->cval.i;
  return true;
}

/* Is v defined inside region r (or one nested in it)? */
static bool defined_in(const teeny_region *r, int v, const cg *g) {
  const teeny_op *d = g->f->values[v].def;
  for (int i = 0; i < r->nargs; i++)
    if (r->args[i] == v)
      return true;
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    if (op == d)
      return true;
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k] && defined_in(op->regions[k], v, g))
        return true;
  }
  return false;
}

/* The amount every element of v grows by from one trip of for-loop `loop`
 * to the next (bytes for pointers), or NO_DELTA when that is not one known
 * constant: the induction variable moves by the step, a carried value by
 * the constant its yield adds, values from outside by 0, and sums,
 * products by constants, splats and views follow. */
static int64_t delta(cg *g, const teeny_op *loop, int v, int depth) {
  const teeny_region *body = loop->regions[0];
  if (depth > 16)
    return NO_DELTA;
  if (!defined_in(body, v, g))
    return 0;
  int64_t c, a, b;
  if (v == body->args[0])
    return const_int(g, loop->args[2], &c) ? c : NO_DELTA;
  for (int i = 1; i < body->nargs; i++)
    if (v == body->args[i]) { /* carried: the yield must be v + constant */
      const teeny_op *y = body->ops[body->nops - 1];
      const teeny_op *d = g->f->values[y->args[i - 1]].def;
      if (!d || (d->code != IR_ADD && d->code != IR_ADDPTR) || d->args[0] != v)
        return NO_DELTA;
      int off = d->args[1];
      const teeny_op *sp = g->f->values[off].def;
      if (sp && sp->code == IR_SPLAT)
        off = sp->args[0];
      if (!const_int(g, off, &c))
        return NO_DELTA;
      if (d->code == IR_ADDPTR)
        c *= teeny_dtype_size(teeny__ir_type(g->f, v).pointee);
      return c;
    }
  const teeny_op *d = g->f->values[v].def;
  if (!d)
    return NO_DELTA;
  switch (d->code) {
  case IR_CONST: case IR_MAKE_RANGE: case IR_PROGRAM_ID: case IR_NUM_PROGRAMS:
    return 0;
  case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE:
  case IR_TRANS: case IR_CAST:
    return delta(g, loop, d->args[0], depth + 1);
  case IR_ADD: case IR_SUB:
    a = delta(g, loop, d->args[0], depth + 1);
    b = delta(g, loop, d->args[1], depth + 1);
    if (a == NO_DELTA || b == NO_DELTA)
      return NO_DELTA;
    return d->code == IR_ADD ? a + b : a - b;
  case IR_MUL:
    if (const_int(g, d->args[1], &c) || (const_int(g, d->args[0], &c)))
      a = delta(g, loop, const_int(g, d->args[1], &c) ? d->args[0] : d->args[1], depth + 1);
    else
      return NO_DELTA;
    return a == NO_DELTA ? NO_DELTA : a * c;
  case IR_ADDPTR:
    a = delta(g, loop, d->args[0], depth + 1);
    b = delta(g, loop, d->args[1], depth + 1);
    if (a == NO_DELTA || b == NO_DELTA)
      return NO_DELTA;
    return a + b * teeny_dtype_size(teeny__ir_type(g->f, v).pointee);
  default:
    return NO_DELTA;
  }
}

/* Bytes from the first to past the last address of pointer tile p, when
 * its addresses are distinct and consecutive (distinct_addresses), or -1. */
static int64_t span(cg *g, int p) {
  if (!distinct_addresses(g, p))
    return -1;
  teeny_type t = teeny__ir_type(g->f, p);
  return (int64_t)teeny__type_numel(t) * teeny_dtype_size(t.pointee);
}

/* Does b (now) need a barrier after a (pending)?  loop: a may come from an
 * earlier trip of this loop (the latch check), so equal values mean equal
 * only after the pointer's move per trip. */
static bool conflict(cg *g, const cg_access *a, const cg_access *b, const teeny_op *loop) {
  if (!(a->write || b->write) || !(a->roots & b->roots))
    return false;
  if (!a->L && !b->L)
    return false; /* both by thread 0 */
  if (a->comm >= 0 && a->comm == b->comm)
    return false;
  if (!a->L || !b->L || !same_value(g, a->ptr, b->ptr, 0))
    return true;
  int64_t move = 0;
  if (loop) {
    move = loop->code == IR_FOR ? delta(g, loop, a->ptr, 0) : NO_DELTA;
    if (move == NO_DELTA)
      return true;
    int64_t sp = span(g, a->ptr);
    if (move && sp > 0 && (move >= sp || -move >= sp))
      return false; /* this trip's addresses are past the last trip's */
  }
  /* the same addresses: the same thread does each, if the layouts agree */
  return !(move == 0 && a->L == b->L && single_holder(a->L) &&
           (a->owner_only || !b->write || b->owner_only) && distinct_addresses(g, a->ptr));
}

/* ---- the walk's events -------------------------------------------------------------- */

void teeny__cg_order_barrier(cg *g) {
  g->ord.n = 0;
  g->ord.acquire = false;
  for (cg_order_frame *f = g->frames; f; f = f->up)
    if (f->depth == g->rdepth)
      f->open = false;
  if (g->ord.has_cur) /* its instruction is still to come, after this barrier */
    push(g, &g->ord, &g->ord.cur);
}

void teeny__cg_order_done(cg *g) { g->ord.has_cur = false; }

static void need_barrier(cg *g) { teeny__cg_barrier(g); }

void teeny__cg_order_access(cg *g, const cg_access *a) {
  if (!a->roots)
    return; /* read-only parameters cannot race */
  if (g->ord.acquire && (a->L || !g->ord.acquire_t0)) {
    need_barrier(g);
  } else {
    for (int i = 0; i < g->ord.n; i++)
      if (conflict(g, &g->ord.v[i], a, NULL)) {
        need_barrier(g);
        break;
      }
  }
  push(g, &g->ord, a);
  for (cg_order_frame *f = g->frames; f; f = f->up)
    if (f->open)
      push(g, &f->head, a);
  g->ord.cur = *a;
  g->ord.has_cur = true;
}

void teeny__cg_order_release(cg *g, bool scalar) {
  for (int i = 0; i < g->ord.n; i++)
    if (g->ord.v[i].L || !scalar) { /* another thread's access */
      need_barrier(g);
      return;
    }
}

void teeny__cg_order_acquired(cg *g, bool scalar) {
  if (g->ord.acquire)
    scalar = scalar && g->ord.acquire_t0;
  g->ord.acquire = true;
  g->ord.acquire_t0 = scalar;
}

/* ---- loops ---------------------------------------------------------------------------- */

cg_order_frame *teeny__cg_order_frame_push(cg *g, const teeny_op *loop) {
  cg_order_frame *f = teeny__cg_alloc(g, sizeof *f);
  f->loop = loop;
  f->depth = g->rdepth;
  f->open = true;
  f->up = g->frames;
  g->frames = f;
  return f;
}

void teeny__cg_order_frame_pop(cg *g, cg_order_frame *f) { g->frames = f->up; }

void teeny__cg_order_latch(cg *g, const cg_order_frame *f) {
  if (g->ord.acquire && f->head.n) {
    need_barrier(g);
    return;
  }
  for (int i = 0; i < g->ord.n; i++)
    for (int j = 0; j < f->head.n; j++)
      if (conflict(g, &g->ord.v[i], &f->head.v[j], f->loop)) {
        need_barrier(g);
        return;
      }
}
