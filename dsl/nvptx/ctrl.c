/*
 * dsl/nvptx/ctrl.c — walking regions: one op at a time in IR order, and
 * structured control flow as LLVM basic blocks.
 *
 *   if     cond ? then : else, joined by one phi per result register;
 *   for    preheader -> header (phis: induction variable and one per
 *          register of each carried tile; iv < ub) -> body -> latch;
 *   while  header = the before-region (phis for the carried values), its
 *          condition leaves or enters the after-region, which loops back.
 * Every condition is a scalar, and scalars are uniform (a scalar load of
 * memory the kernel writes is thread 0's, broadcast: mem.c), so all
 * threads of a block take the same path (barriers inside branches and
 * loops are safe).  Program order between threads (order.c) follows the
 * same structure: an if joins its branches' pending accesses, a loop
 * checks its latch.
 * Each nested region gets its own scope (value.c), so values made
 * inside it are never used after it.
 */
#include <string.h>

#include "dsl/nvptx/codegen.h"

static teeny_type vtype(cg *g, int id) { return teeny__ir_type(g->f, id); }

static LLVMBasicBlockRef new_block(cg *g, const char *name) {
  return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

/* ---- carried values: registers in a fixed layout, joined by phis -------------------- */

typedef struct carried {
  int n;                 /* values */
  const cg_layout **L;   /* [n] layout (NULL: scalar) */
  LLVMValueRef **phi;    /* [n] phis, one per group of pack[i] registers */
  int *pack;             /* [n] registers per phi (2 or 4 packs 16/8-bit values) */
  teeny_dtype *dt;       /* [n] */
} carried;

static long nregs(const cg_layout *L) { return L ? 1L << L->nreg : 1; }

/* 16- and 8-bit tiles travel as 32-bit vectors of consecutive registers
 * (one hardware register each instead of one per element). */
static int pack_of(const cg_layout *L, teeny_dtype dt) {
  int size = teeny_dtype_size(dt);
  if (!L || dt == TEENY_DT_BOOL || size > 2)
    return 1;
  int k = size == 2 ? 1 : 2;
  for (int j = 0; j < k; j++)
    if (j >= L->nreg || L->reg[j] < 0)
      return 1;
  return 1 << k;
}

/* Layouts of the values that flow into region args `ids` (or results). */
static carried carried_new(cg *g, const int *ids, int n) {
  carried c;
  c.n = n;
  c.L = teeny__cg_alloc(g, sizeof *c.L * (size_t)(n + 1));
  c.phi = teeny__cg_alloc(g, sizeof *c.phi * (size_t)(n + 1));
  c.pack = teeny__cg_alloc(g, sizeof *c.pack * (size_t)(n + 1));
  c.dt = teeny__cg_alloc(g, sizeof *c.dt * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    c.L[i] = vtype(g, ids[i]).rank ? g->vi[ids[i]].nat : NULL;
    c.dt[i] = vtype(g, ids[i]).dt;
    c.pack[i] = pack_of(c.L[i], c.dt[i]);
  }
  return c;
}

/* Registers of value id in the i-th carried layout. */
static LLVMValueRef *regs_of(cg *g, const carried *c, int i, int id) {
  if (!c->L[i]) {
    LLVMValueRef *one = teeny__cg_alloc(g, sizeof *one);
    one[0] = teeny__cg_scalar(g, id);
    return one;
  }
  return teeny__cg_get(g, id, c->L[i]);
}

/* Phis at the top of the current block (duplicate registers share one). */
static void make_phis(cg *g, carried *c) {
  for (int i = 0; i < c->n; i++) {
    long n = nregs(c->L[i]) / c->pack[i];
    c->phi[i] = teeny__cg_alloc(g, sizeof(LLVMValueRef) * (size_t)n);
    LLVMTypeRef t = teeny__cg_type(g, c->dt[i]);
    if (c->pack[i] > 1)
      t = LLVMVectorType(t, (unsigned)c->pack[i]);
    for (long k = 0; k < n; k++) {
      long r = k * c->pack[i];
      long s = c->L[i] ? teeny__cg_dup_src(c->L[i], r) : r;
      c->phi[i][k] = s != r ? c->phi[i][s / c->pack[i]] : LLVMBuildPhi(g->b, t, "");
    }
  }
}

/* Add one incoming edge: vals[i] are register arrays in the layouts;
 * packing happens at the end of `from`. */
static void add_incoming(cg *g, const carried *c, LLVMValueRef **vals,
                         LLVMBasicBlockRef from) {
  LLVMBuilderRef keep = g->b;
  g->b = LLVMCreateBuilderInContext(g->ctx);
  LLVMPositionBuilderBefore(g->b, LLVMGetBasicBlockTerminator(from));
  for (int i = 0; i < c->n; i++) {
    int pk = c->pack[i];
    long n = nregs(c->L[i]);
    for (long r = 0; r < n; r += pk) {
      long s = c->L[i] ? teeny__cg_dup_src(c->L[i], r) : r;
      if (s != r)
        continue;
      LLVMValueRef v = vals[i][r];
      if (pk > 1) {
        v = LLVMGetUndef(LLVMVectorType(teeny__cg_type(g, c->dt[i]), (unsigned)pk));
        for (int j = 0; j < pk; j++)
          v = LLVMBuildInsertElement(g->b, v, vals[i][r + j], teeny__cg_i32(g, j), "");
      }
      LLVMAddIncoming(c->phi[i][r / pk], &v, &from, 1);
    }
  }
  LLVMDisposeBuilder(g->b);
  g->b = keep;
}

/* The phis as register arrays (unpacked at the current insertion point). */
static LLVMValueRef **phis(cg *g, const carried *c) {
  LLVMValueRef **v = teeny__cg_alloc(g, sizeof *v * (size_t)(c->n + 1));
  for (int i = 0; i < c->n; i++) {
    long n = nregs(c->L[i]);
    int pk = c->pack[i];
    v[i] = teeny__cg_alloc(g, sizeof(LLVMValueRef) * (size_t)n);
    for (long r = 0; r < n; r++)
      v[i][r] = pk == 1 ? c->phi[i][r]
                        : LLVMBuildExtractElement(g->b, c->phi[i][r / pk],
                                                  teeny__cg_i32(g, r % pk), "");
  }
  return v;
}

static void bind(cg *g, const carried *c, const int *ids, LLVMValueRef **vals) {
  for (int i = 0; i < c->n; i++) {
    if (c->L[i])
      teeny__cg_set(g, ids[i], c->L[i], vals[i]);
    else
      teeny__cg_set_scalar(g, ids[i], vals[i][0]);
  }
}

/* Registers of the operands of r's terminator (skipping `skip` leading
 * ones), in the layouts of c. */
static LLVMValueRef **terminator_vals(cg *g, const teeny_region *r, int skip,
                                      const carried *c) {
  const teeny_op *t = r->ops[r->nops - 1];
  LLVMValueRef **v = teeny__cg_alloc(g, sizeof *v * (size_t)(c->n + 1));
  for (int i = 0; i < c->n; i++)
    v[i] = regs_of(g, c, i, t->args[skip + i]);
  return v;
}

/* ---- if ------------------------------------------------------------------------------------ */

static void emit_if(cg *g, const teeny_op *op) {
  LLVMValueRef cond = teeny__cg_scalar(g, op->args[0]);
  LLVMBasicBlockRef bb[2] = {new_block(g, "then"), new_block(g, "else")};
  LLVMBasicBlockRef join = new_block(g, "endif");
  LLVMBuildCondBr(g->b, cond, bb[0], bb[1]);
  carried c = carried_new(g, op->res, op->nres);
  LLVMValueRef **vals[2];
  LLVMBasicBlockRef ends[2];
  cg_order before = teeny__cg_order_save(g), after[2];
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->b, bb[k]);
    teeny__cg_order_restore(g, &before);
    int saved = teeny__cg_scope_push(g);
    g->rdepth++;
    teeny__cg_emit_region(g, op->regions[k]);
    g->rdepth--;
    vals[k] = terminator_vals(g, op->regions[k], 0, &c);
    ends[k] = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, join);
    teeny__cg_scope_pop(g, saved);
    after[k] = teeny__cg_order_save(g);
  }
  teeny__cg_order_restore(g, &after[0]); /* either branch's accesses may be pending */
  teeny__cg_order_join(g, &after[1]);
  LLVMPositionBuilderAtEnd(g->b, join);
  make_phis(g, &c);
  for (int k = 0; k < 2; k++)
    add_incoming(g, &c, vals[k], ends[k]);
  bind(g, &c, op->res, phis(g, &c));
}

/* ---- for, with loads issued one iteration ahead ------------------------------------- */

/* A load at the top level of a for body whose pointer, mask and other are
 * pure functions of the induction variable, the carried values and values
 * from outside (and whose carried values' next values are too), through a
 * pointer nothing in the kernel writes, is issued for iteration i+1 at the
 * top of iteration i (and for the first iteration before the loop), so its
 * latency overlaps a whole iteration of work, e.g. the mma of a matmul. */
typedef struct pipe {
  const teeny_region *body;
  bool *inside;            /* [nvalues] defined in the body's region tree */
  bool *need;              /* [body->nargs] carried args a prefetch rebinds */
  signed char *memo;       /* [nvalues] pure(): 0 unknown, 1 yes, -1 no */
  bool *done;              /* [nvalues] eval_pure() emitted it */
  const teeny_op **loads;  /* the prefetched loads */
  int nloads;
} pipe;

static void mark_inside(const teeny_region *r, bool *inside) {
  for (int i = 0; i < r->nargs; i++)
    inside[r->args[i]] = true;
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    for (int j = 0; j < op->nres; j++)
      inside[op->res[j]] = true;
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k])
        mark_inside(op->regions[k], inside);
  }
}

static bool pure_op(teeny_opcode c) {
  switch (c) {
  case IR_CONST: case IR_MAKE_RANGE: case IR_SPLAT: case IR_BROADCAST:
  case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_TRANS: case IR_PROGRAM_ID:
  case IR_NUM_PROGRAMS:
    return true;
  default:
    return teeny__cg_is_elementwise(c);
  }
}

/* Is id computable from the iv, carried args and outside values alone? */
static bool pure(cg *g, pipe *P, int id, int depth) {
  if (!P->inside[id])
    return true;
  if (P->memo[id])
    return P->memo[id] > 0;
  const teeny_op *d = g->f->values[id].def;
  if (!d) {
    for (int i = 0; i < P->body->nargs; i++)
      if (P->body->args[i] == id) {
        P->need[i] = true;
        return true;
      }
    return false; /* an argument of a nested region */
  }
  bool ok = depth <= CG_MAX_LAZY_DEPTH && pure_op(d->code);
  for (int i = 0; ok && i < d->nargs; i++)
    ok = pure(g, P, d->args[i], depth + 1);
  P->memo[id] = ok ? 1 : -1;
  return ok;
}

static bool prefetchable(cg *g, pipe *P, const teeny_op *op) {
  if (op->code != IR_LOAD || vtype(g, op->res[0]).rank == 0 ||
      !teeny__cg_readonly(g, op->args[0]))
    return false;
  for (int i = 0; i < op->nargs; i++)
    if (!pure(g, P, op->args[i], 0))
      return false;
  return true;
}

static void plan_pipe(cg *g, const teeny_op *loop, pipe *P) {
  const teeny_region *body = loop->regions[0];
  P->body = body;
  P->nloads = 0;
  P->inside = teeny__cg_alloc(g, sizeof *P->inside * (size_t)(g->f->nvalues + 1));
  P->need = teeny__cg_alloc(g, sizeof *P->need * (size_t)(body->nargs + 1));
  P->loads = teeny__cg_alloc(g, sizeof *P->loads * (size_t)(body->nops + 1));
  P->memo = teeny__cg_alloc(g, (size_t)(g->f->nvalues + 1));
  P->done = teeny__cg_alloc(g, sizeof *P->done * (size_t)(g->f->nvalues + 1));
  mark_inside(body, P->inside);
  for (int i = 0; i < body->nops; i++)
    if (prefetchable(g, P, body->ops[i]))
      P->loads[P->nloads++] = body->ops[i];
  /* the next value of every rebound carried arg must be pure too */
  const teeny_op *y = body->ops[body->nops - 1];
  for (bool grew = true; grew && P->nloads;) {
    grew = false;
    for (int i = 1; i < body->nargs; i++) {
      if (!P->need[i])
        continue;
      bool before[64];
      int n = body->nargs < 64 ? body->nargs : 64;
      for (int k = 0; k < n; k++)
        before[k] = P->need[k];
      if (!pure(g, P, y->args[i - 1], 0)) {
        P->nloads = 0; /* give up on this loop */
        break;
      }
      for (int k = 0; k < n; k++)
        grew |= P->need[k] != before[k];
    }
  }
}

/* Emit the pure value id now (its eager ops too, ahead of their place). */
static void eval_pure(cg *g, const pipe *P, int id) {
  if (!P->inside[id] || P->done[id])
    return;
  P->done[id] = true;
  const teeny_op *d = g->f->values[id].def;
  if (!d)
    return; /* a carried arg: bound */
  for (int i = 0; i < d->nargs; i++)
    eval_pure(g, P, d->args[i]);
  if (g->vi[id].lazy)
    return; /* made on demand; its eager operands are now ready */
  g->loc = d->loc;
  if (d->code == IR_PROGRAM_ID || d->code == IR_NUM_PROGRAMS || d->code == IR_CONST ||
      d->code == IR_BROADCAST || d->code == IR_EXPAND_DIMS || d->code == IR_RESHAPE ||
      d->code == IR_TRANS) {
    const teeny_region one = {NULL, 0, (teeny_op **)&d, 1, 1};
    teeny__cg_emit_region(g, &one);
  } else if (teeny__cg_is_elementwise(d->code)) {
    teeny__cg_emit_elementwise(g, d);
  }
}

/* Bind iv and the needed carried args (to values of another iteration) in
 * a new scope; scopes from `hide` up to here are hidden, so nothing made
 * for the current iteration is reused. */
typedef struct binding {
  int saved, lo, hi;
} binding;

static binding bind_push(cg *g, const pipe *P, const carried *c, LLVMValueRef iv,
                         LLVMValueRef **vals, int hide) {
  binding b = {teeny__cg_scope_push(g), g->hide_lo, g->hide_hi};
  if (hide >= 0) {
    g->hide_lo = hide;
    g->hide_hi = g->scope;
  }
  teeny__cg_set_scalar(g, P->body->args[0], iv);
  for (int i = 0; i < c->n; i++)
    if (P->need[i + 1]) {
      if (c->L[i])
        teeny__cg_set(g, P->body->args[i + 1], c->L[i], vals[i]);
      else
        teeny__cg_set_scalar(g, P->body->args[i + 1], vals[i][0]);
    }
  memset(P->done, 0, sizeof *P->done * (size_t)(g->f->nvalues + 1));
  return b;
}

static void bind_pop(cg *g, binding b) {
  teeny__cg_scope_pop(g, b.saved);
  g->hide_lo = b.lo;
  g->hide_hi = b.hi;
}

/* Eager values of the body that the loads' operands need (scalar index
 * math), made again under the current bindings. */
static void eval_operands(cg *g, const pipe *P, const teeny_op **loads, int n) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < loads[j]->nargs; i++)
      eval_pure(g, P, loads[j]->args[i]);
}

/* The registers of every prefetched load for iteration (iv, vals), under
 * the uniform condition `go` (that iteration exists). */
static LLVMValueRef **prefetch(cg *g, const pipe *P, const carried *c, LLVMValueRef iv,
                               LLVMValueRef **vals, LLVMValueRef go, int hide) {
  binding b = bind_push(g, P, c, iv, vals, hide);
  eval_operands(g, P, P->loads, P->nloads);
  LLVMValueRef **out = teeny__cg_alloc(g, sizeof *out * (size_t)(P->nloads + 1));
  for (int j = 0; j < P->nloads; j++) {
    g->loc = P->loads[j]->loc;
    out[j] = teeny__cg_load_regs(g, P->loads[j], go);
  }
  bind_pop(g, b);
  return out;
}

/* The needed carried args of the iteration after (iv, vals). */
static LLVMValueRef **advance(cg *g, const pipe *P, const carried *c, LLVMValueRef iv,
                              LLVMValueRef **vals, int hide) {
  binding b = bind_push(g, P, c, iv, vals, hide);
  const teeny_op *y = P->body->ops[P->body->nops - 1];
  LLVMValueRef **next = teeny__cg_alloc(g, sizeof *next * (size_t)(c->n + 1));
  for (int i = 0; i < c->n; i++) {
    next[i] = vals[i]; /* args no load depends on just ride along */
    if (P->need[i + 1]) {
      eval_pure(g, P, y->args[i]);
      next[i] = regs_of(g, c, i, y->args[i]);
    }
  }
  bind_pop(g, b);
  return next;
}

/* ---- cp.async stages for loads that feed a dot ------------------------------------------ */

/* A prefetchable load whose only use is an operand of a top-level mma dot
 * of the body is copied with cp.async straight into shared memory, into
 * one of S stages, S-1 iterations ahead; the dot reads its stage with
 * ldmatrix.  No registers hold the tile in flight, and the copies of S-1
 * iterations overlap the mma work (Triton's num_stages = 3 pipeline). */
#define CG_STAGES 3

/* Loop-invariant wgmma operands staged once per loop (teeny__cg_wg_hoist). */
#define CG_MAX_HOIST 8

typedef struct astages {
  const teeny_op **loads;  /* the cp.async'd loads */
  int n;
  cg_stile *tiles;         /* their tiles within a stage (base: offset) */
  int S;                   /* stages */
  int AD;                  /* iterations the copies run ahead: S - 1, or
                              S - 2 when a wgmma stays in flight */
  const teeny_op *inflight; /* that wgmma dot (see deferrable_dot), or NULL */
  int stage_bytes;         /* bytes of one stage */
  int region;              /* start in the dot buffers */
  bool wg;                 /* a wgmma dot reads them: aligned tiles, and
                              fence.proxy.async once they have landed */
  bool fast;               /* the fast copy of a versioned loop (cg.cp_fast) */
} astages;

static int count_uses(const teeny_region *r, int v, const teeny_op **user) {
  int n = 0;
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    for (int j = 0; j < op->nargs; j++)
      if (op->args[j] == v) {
        n++;
        *user = op;
      }
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k])
        n += count_uses(op->regions[k], v, user);
  }
  return n;
}

static bool top_level(const teeny_region *r, const teeny_op *op) {
  for (int i = 0; i < r->nops; i++)
    if (r->ops[i] == op)
      return true;
  return false;
}

/* The top-level mma dot of the body that is v's only use, or NULL.  The
 * use may also be a cast whose only use is the dot, when the dot reads v
 * itself (an fp8 tile on Hopper's fp8 wgmma: teeny__cg_dot_operand). */
static const teeny_op *feeds_one_dot(cg *g, const teeny_region *body, int v) {
  const teeny_op *user = NULL;
  if (count_uses(body, v, &user) != 1)
    return NULL;
  int x = v; /* the dot's argument */
  if (user->code == IR_CAST && top_level(body, user)) {
    x = user->res[0];
    if (count_uses(body, x, &user) != 1)
      return NULL;
  }
  bool ok = user->code == IR_DOT && (user->args[0] == x || user->args[1] == x) &&
            top_level(body, user) && teeny__cg_dot_uses_mma(g, user) &&
            teeny__cg_dot_operand(g, user, user->args[1] == x) == v;
  return ok ? user : NULL;
}

/* The top-level wgmma dot of the body whose result only the yield uses
 * (acc = dot(a, b, acc)): its wait can move after the next stage's copies
 * are issued, so they overlap the tensor cores' work. */
static const teeny_op *deferrable_dot(cg *g, const teeny_region *body) {
  const teeny_op *y = body->ops[body->nops - 1];
  for (int i = 0; i < body->nops; i++) {
    const teeny_op *op = body->ops[i];
    const teeny_op *user = NULL;
    if (op->code == IR_DOT && teeny__cg_dot_uses_wgmma(g, op) &&
        count_uses(body, op->res[0], &user) == 1 && user == y)
      return op;
  }
  return NULL;
}

/* Can the deferred wgmma dot stay in flight across the back edge (wait
 * for all but the newest group, Triton's `wgmma.wait_group 1`)?  Only if
 * nothing but the next iteration's dot touches its accumulator: the body
 * arg it is yielded into is used only as that dot's C operand.  Then the
 * tensor cores never drain between k steps. */
static bool inflight_ok(cg *g, const teeny_region *body, const teeny_op *dot) {
  const teeny_op *y = body->ops[body->nops - 1], *user = NULL;
  if (teeny__cg_wg_a_regs(g, dot)) /* its A words change every iteration */
    return false;
  for (int i = 0; i < y->nargs; i++)
    if (y->args[i] == dot->res[0])
      return i + 1 < body->nargs && dot->args[2] == body->args[i + 1] &&
             count_uses(body, body->args[i + 1], &user) == 1 && user == dot;
  return false;
}

/* The dim along which a cp.async'd load's stage tile stores its rows: 1,
 * or 0 for the B operand of a wgmma dot that is staged K-major (a load
 * contiguous along K, such as K^T in attention). */
static int async_axis(cg *g, const teeny_op *dot, const teeny_op *ld) {
  return teeny__cg_dot_operand(g, dot, 1) == ld->res[0] &&
                 teeny__cg_dot_b_kmajor(g, dot, g->vi[ld->res[0]].nat)
             ? 0
             : 1;
}

/* Shared memory per block on the target (KiB, opt-in maximum). */
static int smem_budget(cg *g) {
  return g->sm >= 90 ? 227 * 1024 : g->sm == 80 ? 163 * 1024 : 99 * 1024;
}

static void plan_async(cg *g, pipe *P, astages *A) {
  A->loads = teeny__cg_alloc(g, sizeof *A->loads * (size_t)(P->nloads + 1));
  A->tiles = teeny__cg_alloc(g, sizeof *A->tiles * (size_t)(P->nloads + 1));
  A->n = 0;
  int bytes = 0;
  A->wg = false;
  A->AD = 0;
  A->inflight = NULL;
  for (int j = 0; j < P->nloads; j++) {
    const teeny_op *ld = P->loads[j];
    const teeny_op *dot = feeds_one_dot(g, P->body, ld->res[0]);
    if (dot && teeny__cg_async_ok(g, ld, async_axis(g, dot, ld)) &&
        teeny__cg_dot_uses_wgmma(g, dot))
      A->wg = true;
  }
  int align = A->wg ? CG_WG_ALIGN : 16; /* wgmma tiles: every tile aligned */
  for (int j = 0; j < P->nloads; j++) {
    const teeny_op *ld = P->loads[j];
    const teeny_op *dot = feeds_one_dot(g, P->body, ld->res[0]);
    int axis = dot ? async_axis(g, dot, ld) : 1;
    if (!dot || !teeny__cg_async_ok(g, ld, axis))
      continue;
    teeny_type t = vtype(g, ld->res[0]);
    A->tiles[A->n] = axis ? teeny__cg_stile(g, t.shape[0], t.shape[1], t.dt, false, bytes, 16)
                          : teeny__cg_stile_tr(g, t.shape[0], t.shape[1], t.dt, false, bytes, 16);
    bytes += (t.shape[0] * t.shape[1] * teeny_dtype_size(t.dt) + align - 1) & ~(align - 1);
    A->loads[A->n++] = ld;
  }
  A->stage_bytes = bytes;
  A->S = g->num_stages ? g->num_stages : CG_STAGES;
  /* the stages share shared memory only with the exchanges inside the loop
   * (those after it reuse theirs): leave those 32 KiB */
  int budget = smem_budget(g) - 32 * 1024;
  while (!g->num_stages && A->S > 2 && A->S * bytes > budget)
    A->S--;
  if (A->n && g->num_stages && A->S * bytes > smem_budget(g))
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "num_stages=%d needs %d bytes of shared memory for this loop's stages "
                   "(the limit is %d); use fewer stages or smaller tiles",
                   A->S, A->S * bytes, smem_budget(g));
  if (!A->n || (!g->num_stages && A->S * bytes > budget)) {
    A->n = 0; /* too big: stay with register prefetching */
    return;
  }
  /* A wgmma kept in flight across the back edge still reads the stage of
   * the previous iteration while this one's copies are issued, so the
   * stage they refill must be two back: one stage more for the same
   * distance (Triton keeps 3 and adds a second barrier per iteration). */
  A->AD = A->S - 1;
  A->inflight = NULL;
  const teeny_op *dot = A->wg ? deferrable_dot(g, P->body) : NULL;
  if (dot && inflight_ok(g, P->body, dot) && !g->num_stages && A->S == CG_STAGES &&
      (CG_STAGES + 1) * bytes <= budget) {
    A->S = CG_STAGES + 1;
    A->AD = A->S - 2;
    A->inflight = dot;
  } else if (dot && inflight_ok(g, P->body, dot) && g->num_stages >= 3) {
    A->AD = A->S - 2; /* the author's depth: one stage for the group in flight */
    A->inflight = dot;
  }
  /* the rest keep register prefetching */
  int k = 0;
  for (int j = 0; j < P->nloads; j++) {
    bool async = false;
    for (int i = 0; i < A->n; i++)
      async |= A->loads[i] == P->loads[j];
    if (!async)
      P->loads[k++] = P->loads[j];
  }
  P->nloads = k;
  A->region = teeny__cg_db_take(g, A->S * bytes, A->wg ? CG_WG_ALIGN : 16);
}

/* The stage tiles at byte offset `base` (i32) of the dot buffers. */
static cg_stile *stage_tiles(cg *g, const astages *A, LLVMValueRef base) {
  cg_stile *t = teeny__cg_alloc(g, sizeof *t * (size_t)(A->n + 1));
  for (int j = 0; j < A->n; j++) {
    t[j] = A->tiles[j];
    t[j].rbase = LLVMBuildAdd(g->b, base, teeny__cg_i32(g, A->tiles[j].base), "");
  }
  return t;
}

/* cp.async every staged load of iteration (iv, vals) into the stage at
 * `base`, under `go`; then commit the group. */
static void issue(cg *g, const pipe *P, const astages *A, const carried *c, LLVMValueRef iv,
                  LLVMValueRef **vals, LLVMValueRef go, LLVMValueRef base, int hide) {
  binding b = bind_push(g, P, c, iv, vals, hide);
  eval_operands(g, P, A->loads, A->n);
  cg_stile *t = stage_tiles(g, A, base);
  bool fast = g->cp_fast;
  g->cp_fast = A->fast;
  /* `go` is uniform: one branch around the copies of an iteration that
   * does not exist (its stage is never read) instead of ANDing it into
   * every group's predicate and the fallbacks' test */
  LLVMBasicBlockRef skip = NULL;
  if (go && !LLVMIsAConstantInt(go)) {
    LLVMBasicBlockRef doit = new_block(g, "cpa.go");
    skip = new_block(g, "cpa.skip");
    LLVMBuildCondBr(g->b, go, doit, skip);
    LLVMPositionBuilderAtEnd(g->b, doit);
    go = NULL;
  }
  for (int j = 0; j < A->n; j++) {
    g->loc = A->loads[j]->loc;
    teeny__cg_load_async(g, A->loads[j], go, &t[j]);
  }
  if (skip) {
    LLVMBuildBr(g->b, skip);
    LLVMPositionBuilderAtEnd(g->b, skip);
  }
  g->cp_fast = fast;
  bind_pop(g, b);
  teeny__cg_cp_async_commit(g);
}

static LLVMValueRef stage_base(cg *g, const astages *A, LLVMValueRef stage) {
  return LLVMBuildAdd(g->b, teeny__cg_i32(g, A->region),
                      LLVMBuildMul(g->b, stage, teeny__cg_i32(g, A->stage_bytes), ""), "");
}

/* ---- for --------------------------------------------------------------------------------- */

/* Register prefetching keeps the loads of several iterations in flight: as
 * many as make about CG_PREFETCH_BYTES per thread, or CG_PREFETCH_ELEMS
 * elements if that is more (at most CG_MAX_AHEAD iterations), since one
 * iteration's worth (e.g. 8 bytes per thread in a 16-warp row loop) is too
 * little to cover the latency of device memory.  Measured on the H200
 * (layernorm 4096x8192, docs/perf-notes.md): f32 and f16 both peak near 32
 * elements per thread (f32 w4: 2542 GB/s at 8 elements, 3122 at 32; f16
 * w4: 2501 at 24, 2583 at 32, 2310 at 64): each unrolled copy costs issue
 * slots per element (f16 also converts), its latency cover is per byte. */
#define CG_PREFETCH_BYTES 48
#define CG_PREFETCH_ELEMS 32
#define CG_MAX_AHEAD 8

static int elem_bytes(teeny_dtype dt) {
  return dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(dt);
}

/* Iterations the register-prefetched loads run ahead (0: none); a
 * request's num_stages sets it (num_stages - 1, as for the cp.async
 * stages of a loop that feeds a dot). */
static int prefetch_depth(cg *g, const pipe *P, bool async) {
  if (!P->nloads)
    return 0;
  if (async) /* the loop's big tiles already travel through cp.async stages */
    return 1;
  for (int i = 1; i < P->body->nargs; i++) /* each stage would carry its own */
    if (P->need[i] && vtype(g, P->body->args[i]).rank) /* copy of the tile */
      return 1;
  long bytes = 0, elems = 0;
  for (int j = 0; j < P->nloads; j++) {
    const cg_layout *L = g->vi[P->loads[j]->res[0]].nat;
    long owned = 0;
    for (long r = 0; r < (1L << L->nreg); r++)
      owned += teeny__cg_reg_owner(L, r);
    bytes += owned * elem_bytes(vtype(g, P->loads[j]->res[0]).dt);
    elems += owned;
  }
  long d = bytes ? CG_PREFETCH_BYTES / bytes : CG_MAX_AHEAD;
  if (elems && CG_PREFETCH_ELEMS / elems > d)
    d = CG_PREFETCH_ELEMS / elems;
  if (g->num_stages) /* the request's pipeline depth: num_stages - 1 iterations ahead */
    d = g->num_stages - 1;
  return d < 1 ? 1 : d > CG_MAX_AHEAD ? CG_MAX_AHEAD : (int)d;
}

/* iv + k * step in the iv's type (wraps only when that iteration does not
 * exist, and then nothing uses it). */
static LLVMValueRef iv_plus(cg *g, LLVMValueRef iv, LLVMValueRef step, int k) {
  if (k == 0)
    return iv;
  if (k == 1)
    return LLVMBuildAdd(g->b, iv, step, "");
  LLVMTypeRef t = LLVMTypeOf(iv);
  return LLVMBuildAdd(g->b, iv, LLVMBuildMul(g->b, step, LLVMConstInt(t, (unsigned long long)k, 0), ""), "");
}

/* Does iteration iv + k * step exist (for an iv that is lb or an existing
 * iteration)?  Up to 32-bit induction variables this is computed in 64 bits,
 * so an upper bound near the type's maximum cannot wrap it into a bogus
 * "yes" (and so an out-of-bounds prefetch). */
static LLVMValueRef iter_exists(cg *g, teeny_dtype ivt, LLVMValueRef iv, LLVMValueRef ub,
                                LLVMValueRef step, int k) {
  bool s = teeny__dt_is_signed(ivt);
  if (teeny__dt_bits(ivt) < 64) {
    LLVMValueRef i = s ? LLVMBuildSExt(g->b, iv, g->t_i64, "") : LLVMBuildZExt(g->b, iv, g->t_i64, "");
    LLVMValueRef u = s ? LLVMBuildSExt(g->b, ub, g->t_i64, "") : LLVMBuildZExt(g->b, ub, g->t_i64, "");
    LLVMValueRef st = s ? LLVMBuildSExt(g->b, step, g->t_i64, "") : LLVMBuildZExt(g->b, step, g->t_i64, "");
    return LLVMBuildICmp(g->b, LLVMIntSLT, iv_plus(g, i, st, k), u, "");
  }
  return LLVMBuildICmp(g->b, s ? LLVMIntSLT : LLVMIntULT, iv_plus(g, iv, step, k), ub, "");
}

/* The same for an iv known to be an existing iteration (iv < ub: inside the
 * body) and a constant step C > 0 with k * C representable: iteration
 * iv + k * C exists iff the distance ub - iv, which is then exact as an
 * unsigned number of the iv's width, exceeds k * C.  Two instructions in
 * the iv's width instead of a widened add and compare (the prefetches of
 * every unrolled copy of a layernorm row loop make this per 8 bytes). */
static LLVMValueRef iter_exists_in(cg *g, teeny_dtype ivt, LLVMValueRef iv, LLVMValueRef ub,
                                   LLVMValueRef step, int k) {
  int bits = teeny__dt_bits(ivt);
  if (LLVMIsAConstantInt(step) && bits >= 8 && bits <= 64) {
    long long c = LLVMConstIntGetSExtValue(step);
    long long lim = bits == 64 ? (1LL << 62) : (1LL << (bits - 2));
    if (c > 0 && c <= lim / (k > 0 ? k : 1)) {
      LLVMValueRef dist = LLVMBuildSub(g->b, ub, iv, "");
      LLVMValueRef kc = LLVMConstInt(LLVMTypeOf(iv), (unsigned long long)(c * k), 0);
      return LLVMBuildICmp(g->b, LLVMIntUGT, dist, kc, "");
    }
  }
  return iter_exists(g, ivt, iv, ub, step, k);
}

/* One copy of a for loop (version 0: the only one; 1: the fast copy of a
 * versioned loop, whose cp.async groups are known aligned and contiguous;
 * 2: its general copy).  Returns the results' registers, made in *end. */
static LLVMValueRef **emit_for_one(cg *g, const teeny_op *op, int version,
                                   LLVMBasicBlockRef *end) {
  const teeny_region *body = op->regions[0];
  int n = op->nres;
  teeny_dtype ivt = vtype(g, op->args[0]).dt;
  LLVMTypeRef ivty = teeny__cg_type(g, ivt);
  LLVMIntPredicate lt = teeny__dt_is_signed(ivt) ? LLVMIntSLT : LLVMIntULT;
  LLVMValueRef lb = teeny__cg_scalar(g, op->args[0]);
  LLVMValueRef ub = teeny__cg_scalar(g, op->args[1]);
  LLVMValueRef step = teeny__cg_scalar(g, op->args[2]);
  carried c = carried_new(g, body->args + 1, n);
  LLVMValueRef **init = teeny__cg_alloc(g, sizeof *init * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    init[i] = regs_of(g, &c, i, op->args[3 + i]);
  int db_saved = g->db_bytes; /* this loop's dot/stage buffers: freed at its end */
  pipe P;
  plan_pipe(g, op, &P);
  astages A;
  plan_async(g, &P, &A);
  A.fast = version == 1;
  bool dbuf = A.n > 0;
  for (int i = 0; i < body->nops; i++)
    if (body->ops[i]->code == IR_DOT && teeny__cg_dot_uses_mma(g, body->ops[i]))
      dbuf = true;
  int *lid = teeny__cg_alloc(g, sizeof *lid * (size_t)(P.nloads + 1));
  for (int j = 0; j < P.nloads; j++)
    lid[j] = P.loads[j]->res[0];
  /* Register-prefetched loads run D iterations ahead: stage s holds the
   * registers of iteration i+s.  With D > 1 the body is emitted D times per
   * trip (copy j consumes stage j and refills it with iteration i+j+D), so
   * the stages never move between registers, and the carried args the
   * loads need ride D iterations ahead (rc).  Loops with cp.async stages or
   * double-buffered dot operands (a per-iteration phase) keep D <= 1. */
  int D = prefetch_depth(g, &P, dbuf);
  int U = D > 1 ? D : 1; /* body copies per trip */
  carried *lc = teeny__cg_alloc(g, sizeof *lc * (size_t)(D + 1));
  for (int s = 0; s < D; s++)
    lc[s] = carried_new(g, lid, P.nloads);
  int *rid = teeny__cg_alloc(g, sizeof *rid * (size_t)(n + 1));
  int *rmap = teeny__cg_alloc(g, sizeof *rmap * (size_t)(n + 1)), nr = 0;
  for (int i = 0; i < n && D > 1; i++)
    if (P.need[i + 1]) {
      rmap[nr] = i;
      rid[nr++] = body->args[i + 1];
    }
  carried rc = carried_new(g, rid, nr);
  /* carried args the stages need S-1 iterations ahead */
  int *aid = teeny__cg_alloc(g, sizeof *aid * (size_t)(n + 1)), na = 0;
  for (int i = 0; i < n && A.n; i++)
    aid[na++] = body->args[i + 1];
  carried ac = carried_new(g, aid, na);
  if (dbuf) /* earlier users of the dot buffers are done */
    teeny__cg_barrier(g);
  int hid[CG_MAX_HOIST];
  int nh = dbuf ? teeny__cg_wg_hoist(g, body, hid, CG_MAX_HOIST) : 0;
  LLVMValueRef ***first = teeny__cg_alloc(g, sizeof *first * (size_t)(D + 1));
  LLVMValueRef **ahead0 = NULL, **rahead0 = NULL;
  if (D) { /* iterations 0 .. D-1 (each only if it exists) */
    LLVMValueRef **vals = init;
    LLVMValueRef nonempty = LLVMBuildICmp(g->b, lt, lb, ub, "");
    for (int s = 0; s < D; s++) {
      LLVMValueRef go = s ? LLVMBuildAnd(g->b, nonempty, iter_exists(g, ivt, lb, ub, step, s), "")
                          : nonempty;
      first[s] = prefetch(g, &P, &c, iv_plus(g, lb, step, s), vals, go, -1);
      if (D > 1)
        vals = advance(g, &P, &c, iv_plus(g, lb, step, s), vals, -1);
    }
    if (D > 1) {
      rahead0 = teeny__cg_alloc(g, sizeof *rahead0 * (size_t)(nr + 1));
      for (int k = 0; k < nr; k++)
        rahead0[k] = vals[rmap[k]];
    }
  }
  if (A.n) { /* stages 0 .. AD-1 for iterations 0 .. AD-1 */
    LLVMValueRef **vals = init;
    LLVMValueRef nonempty = LLVMBuildICmp(g->b, lt, lb, ub, "");
    for (int s = 0; s < A.AD; s++) {
      LLVMValueRef ivs = iv_plus(g, lb, step, s);
      LLVMValueRef go = s ? LLVMBuildAnd(g->b, nonempty, iter_exists(g, ivt, lb, ub, step, s), "")
                          : nonempty;
      issue(g, &P, &A, &c, ivs, vals, go, teeny__cg_i32(g, A.region + s * A.stage_bytes), -1);
      vals = advance(g, &P, &c, ivs, vals, -1);
    }
    ahead0 = vals;
  }

  /* program order (order.c): the body starts from what is pending here;
   * what leaves the loop is that, or what a trip leaves pending */
  cg_order entry = teeny__cg_order_save(g), leaving = entry;
  g->rdepth++;
  cg_order_frame *frame = teeny__cg_order_frame_push(g, op);

  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = new_block(g, "for.head"), bbody = new_block(g, "for.body");
  LLVMBasicBlockRef exit = new_block(g, "for.end");
  /* A loop whose wgmma stays in flight is a guarded do-while: the header
   * has no exit, so no path leads from a wgmma to the code after the loop
   * without the wait in its last iteration (for.last below).  ptxas checks
   * this over the control-flow graph and, where it finds such a path
   * (e.g. back through a header test that cannot fail), serialises every
   * wgmma of the kernel (C7514/C7515). */
  if (A.inflight)
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, lt, lb, ub, ""), head, exit);
  else
    LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef iv = LLVMBuildPhi(g->b, ivty, "iv");
  LLVMValueRef phase = dbuf ? LLVMBuildPhi(g->b, g->t_i32, "phase") : NULL;
  LLVMValueRef cur = A.n ? LLVMBuildPhi(g->b, g->t_i32, "stage") : NULL;
  make_phis(g, &c);
  for (int s = 0; s < D; s++)
    make_phis(g, &lc[s]);
  make_phis(g, &rc);
  make_phis(g, &ac);
  /* the phis as registers, unpacked here so they dominate every copy and
   * the exit */
  LLVMValueRef **hv = phis(g, &c);
  LLVMValueRef ***stage = teeny__cg_alloc(g, sizeof *stage * (size_t)(D + 1));
  LLVMValueRef **rj = phis(g, &rc);
  LLVMValueRef **av = phis(g, &ac);
  if (A.inflight)
    LLVMBuildBr(g->b, bbody);
  else
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, lt, iv, ub, ""), bbody, exit);

  for (int j = 0; j < P.nloads; j++)
    g->vi[lid[j]].prefetched = true;
  LLVMValueRef **ahead = NULL, **anext = NULL, **vals = hv, ivj = iv;
  LLVMValueRef ***refill = teeny__cg_alloc(g, sizeof *refill * (size_t)(D + 1));
  LLVMValueRef ***xvals = teeny__cg_alloc(g, sizeof *xvals * (size_t)(U + 1));
  LLVMBasicBlockRef *xfrom = teeny__cg_alloc(g, sizeof *xfrom * (size_t)(U + 1));
  int nx = 0;
  LLVMValueRef phase2 = NULL, cur2 = NULL, aiv = NULL, awst = NULL, **afull = NULL;
  LLVMBasicBlockRef latch = NULL;
  const teeny_op *defer = A.n && A.wg ? deferrable_dot(g, body) : NULL;
  LLVMPositionBuilderAtEnd(g->b, bbody);
  for (int cp = 0; cp < U; cp++) { /* copy cp runs iteration iv + cp*step */
    int saved = teeny__cg_scope_push(g);
    int body_scope = g->scope;
    teeny__cg_set_scalar(g, body->args[0], ivj);
    bind(g, &c, body->args + 1, vals);
    LLVMValueRef ivn = LLVMBuildAdd(g->b, ivj, step, "");
    if (A.n) {
      /* this iteration's stage has landed and everyone is past the previous
       * iteration's reads of the stage we refill now */
      teeny__cg_cp_async_wait(g, A.AD - 1);
      if (A.wg) /* the copies landed through the generic proxy */
        teeny__cg_fence_proxy_async(g);
      teeny__cg_barrier(g);
      LLVMValueRef iva = iv_plus(g, iv, step, A.AD);
      /* the stage of iteration i + AD: (cur + AD) % S */
      LLVMValueRef wsum = LLVMBuildAdd(g->b, cur, teeny__cg_i32(g, A.AD), "");
      LLVMValueRef wst = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSGE, wsum, teeny__cg_i32(g, A.S), ""),
                                         LLVMBuildSub(g->b, wsum, teeny__cg_i32(g, A.S), ""),
                                         wsum, "");
      afull = teeny__cg_alloc(g, sizeof *afull * (size_t)(n + 1));
      for (int i = 0; i < n; i++)
        afull[i] = av[i];
      aiv = iva;
      awst = wst;
      if (!defer) {
        issue(g, &P, &A, &c, iva, afull, iter_exists_in(g, ivt, iv, ub, step, A.AD),
              stage_base(g, &A, wst), body_scope);
        anext = advance(g, &P, &c, iva, afull, body_scope);
      }
      cg_stile *now = stage_tiles(g, &A, stage_base(g, &A, cur));
      for (int j = 0; j < A.n; j++) {
        g->vi[A.loads[j]->res[0]].astage = &now[j];
        g->vi[A.loads[j]->res[0]].prefetched = true;
      }
    }
    if (D) /* unpacked where this copy uses them */
      stage[cp] = phis(g, &lc[cp]);
    if (D == 1) { /* the next iteration's carried args from this one's */
      bind(g, &lc[0], lid, stage[0]);
      const teeny_op *y = body->ops[body->nops - 1];
      memset(P.done, 0, sizeof *P.done * (size_t)(g->f->nvalues + 1));
      LLVMValueRef **next = teeny__cg_alloc(g, sizeof *next * (size_t)(n + 1));
      for (int i = 0; i < n; i++)
        if (P.need[i + 1]) {
          eval_pure(g, &P, y->args[i]);
          next[i] = regs_of(g, &c, i, y->args[i]);
        }
      ahead = prefetch(g, &P, &c, ivn, next, iter_exists_in(g, ivt, ivj, ub, step, 1), body_scope);
    } else if (D > 1) {
      bind(g, &lc[cp], lid, stage[cp]);
    }
    const teeny_region *db_body = g->db_body;
    LLVMValueRef db_phase = g->db_phase;
    const teeny_op *wg_defer = g->wg_defer;
    if (dbuf) {
      g->db_body = body;
      g->db_phase = phase;
    }
    g->wg_defer = defer;
    teeny__cg_emit_region(g, body);
    g->db_body = db_body;
    g->db_phase = db_phase;
    if (defer) { /* the copies go out while the wgmma runs; then wait */
      issue(g, &P, &A, &c, aiv, afull, iter_exists_in(g, ivt, iv, ub, step, A.AD),
            stage_base(g, &A, awst), body_scope);
      anext = advance(g, &P, &c, aiv, afull, body_scope);
      if (A.inflight) /* for the previous iteration's group only: this one
                         runs on into the next iteration (waited after the
                         loop); its registers reach the next dot untouched */
        teeny__cg_wgmma_wait_prev(g);
      else
        teeny__cg_wgmma_finish(g);
    }
    g->wg_defer = wg_defer;
    LLVMValueRef **vnext = terminator_vals(g, body, 0, &c);
    if (D > 1) {
      /* refill this copy's stage with iteration i+cp+D, after the body has
       * used the stage: the new registers can then be the old ones (no
       * moves between stages at the back edge) */
      LLVMValueRef **full = teeny__cg_alloc(g, sizeof *full * (size_t)(n + 1));
      for (int k = 0; k < nr; k++)
        full[rmap[k]] = rj[k];
      LLVMValueRef ivd = iv_plus(g, ivj, step, D);
      /* the body's results first, the refill's loads after them (LLVM
       * would otherwise sink the body's arithmetic below the refill, and
       * both stages' registers would be live at once) */
      for (int i = 0; i < n; i++)
        teeny__cg_pin(g, vnext[i], nregs(c.L[i]));
      g->ordered_loads = true;
      refill[cp] = prefetch(g, &P, &c, ivd, full, iter_exists_in(g, ivt, ivj, ub, step, D),
                            body_scope);
      g->ordered_loads = false;
      LLVMValueRef **nx2 = advance(g, &P, &c, ivd, full, body_scope);
      LLVMValueRef **rn = teeny__cg_alloc(g, sizeof *rn * (size_t)(nr + 1));
      for (int k = 0; k < nr; k++)
        rn[k] = nx2[rmap[k]];
      rj = rn;
    }
    if (dbuf)
      phase2 = LLVMBuildXor(g->b, phase, teeny__cg_i32(g, 1), "");
    if (A.n) {
      LLVMValueRef c1 = LLVMBuildAdd(g->b, cur, teeny__cg_i32(g, 1), "");
      cur2 = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, c1, teeny__cg_i32(g, A.S), ""),
                             teeny__cg_i32(g, 0), c1, "");
    }
    teeny__cg_scope_pop(g, saved);
    vals = vnext;
    ivj = ivn;
    if (cp + 1 == U) /* the back edge: the next trip starts here */
      teeny__cg_order_latch(g, frame);
    {
      cg_order here = teeny__cg_order_save(g);
      teeny__cg_order_join(g, &leaving);
      leaving = teeny__cg_order_save(g);
      teeny__cg_order_restore(g, &here);
    }
    if (cp + 1 < U) { /* the next copy's iteration may not exist */
      LLVMBasicBlockRef next = new_block(g, "for.copy");
      xvals[nx] = vals;
      xfrom[nx++] = LLVMGetInsertBlock(g->b);
      LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, lt, ivj, ub, ""), next, exit);
      LLVMPositionBuilderAtEnd(g->b, next);
    } else if (A.inflight) {
      /* the last iteration's wgmma group is waited for on the way out,
       * before the exit joins the path that skipped the loop (waiting at
       * the join, after the skip path set the same registers to the
       * initial accumulator, makes ptxas serialise: C7515) */
      latch = LLVMGetInsertBlock(g->b);
      LLVMBasicBlockRef last = new_block(g, "for.last");
      LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, lt, ivj, ub, ""), head, last);
      LLVMPositionBuilderAtEnd(g->b, last);
      LLVMValueRef **w = teeny__cg_alloc(g, sizeof *w * (size_t)(n + 1));
      for (int i = 0; i < n; i++) {
        w[i] = vals[i];
        if (body->args[i + 1] == A.inflight->args[2]) {
          long k = nregs(c.L[i]);
          w[i] = teeny__cg_alloc(g, sizeof *w[i] * (size_t)k);
          memcpy(w[i], vals[i], sizeof *w[i] * (size_t)k);
          teeny__cg_wgmma_wait_all(g, w[i], k);
        }
      }
      xvals[nx] = w;
      xfrom[nx++] = LLVMGetInsertBlock(g->b);
      LLVMBuildBr(g->b, exit);
    } else {
      latch = LLVMGetInsertBlock(g->b);
      LLVMBuildBr(g->b, head);
    }
  }
  for (int j = 0; j < P.nloads; j++)
    g->vi[lid[j]].prefetched = false;
  for (int j = 0; j < A.n; j++) {
    g->vi[A.loads[j]->res[0]].astage = NULL;
    g->vi[A.loads[j]->res[0]].prefetched = false;
  }
  for (int j = 0; j < nh; j++)
    g->vi[hid[j]].astage = NULL;
  teeny__cg_order_frame_pop(g, frame);
  g->rdepth--;
  teeny__cg_order_restore(g, &leaving);

  LLVMAddIncoming(iv, &lb, &pre, 1);
  LLVMAddIncoming(iv, &ivj, &latch, 1);
  LLVMValueRef zero = teeny__cg_i32(g, 0);
  if (dbuf) {
    LLVMAddIncoming(phase, &zero, &pre, 1);
    LLVMAddIncoming(phase, &phase2, &latch, 1);
  }
  if (A.n) {
    LLVMAddIncoming(cur, &zero, &pre, 1);
    LLVMAddIncoming(cur, &cur2, &latch, 1);
    add_incoming(g, &ac, ahead0, pre);
    add_incoming(g, &ac, anext, latch);
  }
  add_incoming(g, &c, init, pre);
  add_incoming(g, &c, vals, latch);
  for (int s = 0; s < D; s++) {
    add_incoming(g, &lc[s], first[s], pre);
    add_incoming(g, &lc[s], D == 1 ? ahead : refill[s], latch);
  }
  if (D > 1) {
    add_incoming(g, &rc, rahead0, pre);
    add_incoming(g, &rc, rj, latch);
  }
  LLVMPositionBuilderAtEnd(g->b, exit);
  carried ce = carried_new(g, body->args + 1, n); /* the results, from every exit */
  make_phis(g, &ce);
  if (A.inflight) /* skipped: the initial values, from the guard */
    add_incoming(g, &ce, init, pre);
  else
    add_incoming(g, &ce, hv, head);
  for (int k = 0; k < nx; k++)
    add_incoming(g, &ce, xvals[k], xfrom[k]);
  if (A.n) /* no copy may land after the loop */
    teeny__cg_cp_async_wait(g, 0);
  g->db_bytes = db_saved;
  *end = LLVMGetInsertBlock(g->b);
  return phis(g, &ce);
}

/* ---- loop versioning ---------------------------------------------------------------------- */

/* The value the loop's yield gives carried arg id for the next trip, or
 * -1 when id is not a carried arg (the iv, an outside value, ...). */
static int next_value(const pipe *P, int id) {
  const teeny_op *y = P->body->ops[P->body->nops - 1];
  for (int i = 1; i < P->body->nargs; i++)
    if (P->body->args[i] == id)
      return y->args[i - 1];
  return -1;
}

/* Is id the same in every iteration: computable from values defined
 * outside the loop alone, or from carried args that every trip yields
 * unchanged (a struct's leaf that an assignment of the whole struct
 * rewrites with the same value)? */
static bool invariant(cg *g, const pipe *P, int id, int depth) {
  if (!P->inside[id])
    return true;
  const teeny_op *d = g->f->values[id].def;
  if (!d)
    return next_value(P, id) == id;
  if (depth > CG_MAX_LAZY_DEPTH || !pure_op(d->code))
    return false;
  for (int i = 0; i < d->nargs; i++)
    if (!invariant(g, P, d->args[i], depth + 1))
      return false;
  return true;
}

/* The step of a carried pointer tile that every iteration moves by the
 * same uniform, loop-invariant number of elements: the yield's value for
 * it is addptr(ptr, X), X constant over the tile and invariant.  X, or -1. */
static int uniform_step(cg *g, const pipe *P, int ptr) {
  int next = next_value(P, ptr);
  const teeny_op *d = next >= 0 ? g->f->values[next].def : NULL;
  if (!d || d->code != IR_ADDPTR || d->args[0] != ptr)
    return -1;
  int x = d->args[1];
  teeny_type t = vtype(g, x);
  for (int k = 0; k < t.rank; k++)
    if (g->vi[x].ax.cnst[k] < t.shape[k])
      return -1;
  return invariant(g, P, x, 0) ? x : -1;
}

/* S(iv + step) - S(iv) for a scalar integer S built from the induction
 * variable, carried scalars that each trip moves by an invariant, and
 * loop-invariant values by +, -, * by an invariant and integer widening
 * (affine in the trip count), as an LLVM value of S's width; NULL if
 * S is not of that form.  Invariant parts give 0.  Call with the iteration
 * bound (bind_push): invariant factors are evaluated then. */
static LLVMValueRef affine_inc(cg *g, const pipe *P, int id, LLVMValueRef step, int depth) {
  teeny_type t = vtype(g, id);
  if (t.rank || !teeny__dt_is_int(t.dt) || teeny__dt_bits(t.dt) < 32 || depth > 16)
    return NULL;
  LLVMTypeRef lt = teeny__dt_bits(t.dt) == 64 ? g->t_i64 : g->t_i32;
  if (id == P->body->args[0])
    return LLVMTypeOf(step) == lt ? step : NULL;
  if (invariant(g, P, id, 0))
    return LLVMConstInt(lt, 0, 0);
  const teeny_op *d = g->f->values[id].def;
  if (!d) { /* a carried scalar each trip moves by an invariant (a block pointer's offset) */
    int next = next_value(P, id);
    const teeny_op *u = next >= 0 ? g->f->values[next].def : NULL;
    for (int k = 0; u && u->code == IR_ADD && k < 2; k++)
      if (u->args[k] == id && invariant(g, P, u->args[1 - k], 0)) {
        eval_pure(g, P, u->args[1 - k]);
        LLVMValueRef x = teeny__cg_scalar(g, u->args[1 - k]);
        return LLVMTypeOf(x) == lt ? x : NULL;
      }
    return NULL;
  }
  switch (d->code) {
  case IR_ADD:
  case IR_SUB: {
    LLVMValueRef a = affine_inc(g, P, d->args[0], step, depth + 1);
    LLVMValueRef b = a ? affine_inc(g, P, d->args[1], step, depth + 1) : NULL;
    if (!b)
      return NULL;
    return d->code == IR_ADD ? LLVMBuildAdd(g->b, a, b, "") : LLVMBuildSub(g->b, a, b, "");
  }
  case IR_MUL:
    for (int i = 0; i < 2; i++)
      if (invariant(g, P, d->args[1 - i], 0)) {
        LLVMValueRef a = affine_inc(g, P, d->args[i], step, depth + 1);
        if (!a)
          return NULL;
        eval_pure(g, P, d->args[1 - i]);
        return LLVMBuildMul(g->b, a, teeny__cg_scalar(g, d->args[1 - i]), "");
      }
    return NULL;
  case IR_CAST: { /* widening: the step widens too (the iv does not wrap in the loop) */
    teeny_type f = vtype(g, d->args[0]);
    if (!teeny__dt_is_int(f.dt) || teeny__dt_bits(f.dt) > teeny__dt_bits(t.dt))
      return NULL;
    LLVMValueRef a = affine_inc(g, P, d->args[0], step, depth + 1);
    if (!a || LLVMTypeOf(a) == lt)
      return a;
    return teeny__dt_is_signed(f.dt) ? LLVMBuildSExt(g->b, a, lt, "") : LLVMBuildZExt(g->b, a, lt, "");
  }
  default:
    return NULL;
  }
}

/* The per-iteration step, in elements, of a pointer tile recomputed in
 * each iteration as addptr(Q, splat(S)): Q loop-invariant and S affine in
 * the induction variable (how tensor descriptors and block pointers are
 * lowered, dsl/irgen_desc.c).  Every element moves by the same amount, as
 * with a carried pointer's uniform step.  NULL if ptr is not of that form. */
static LLVMValueRef recomputed_step(cg *g, const pipe *P, const teeny_op *loop, int ptr) {
  const teeny_op *d = g->f->values[ptr].def;
  if (!P->inside[ptr] || !d || d->code != IR_ADDPTR || !invariant(g, P, d->args[0], 0))
    return NULL;
  const teeny_op *sp = g->f->values[d->args[1]].def;
  if (!sp || sp->code != IR_SPLAT)
    return NULL;
  return affine_inc(g, P, sp->args[0], teeny__cg_scalar(g, loop->args[2]), 0);
}

/* a && b, either NULL standing for true. */
static LLVMValueRef and_cond(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return !a ? b : !b ? a : LLVMBuildAnd(g->b, a, b, "");
}

/* Loop versioning for cp.async stages: when every staged load's pointer
 * is a carried tile moved by a uniform invariant step, or a tile
 * recomputed in each trip as an invariant tile plus an affine function of
 * the induction variable (recomputed_step), whether its vector
 * groups are aligned and contiguous is decided once, before the loop:
 * the first iteration's groups pass their checks and the step keeps the
 * alignment.  Returns that condition, the same in every thread of the
 * block (bar.red.and: a wgmma needs its warpgroup on one path), or NULL
 * when the loop is not versioned (nothing to gain, or no such pattern). */
static LLVMValueRef version_test(cg *g, const teeny_op *op) {
  if (g->cp_fast)
    return NULL;
  const teeny_region *body = op->regions[0];
  int db_saved = g->db_bytes;
  pipe P;
  plan_pipe(g, op, &P);
  astages A;
  plan_async(g, &P, &A);
  g->db_bytes = db_saved;
  if (!A.n)
    return NULL;
  /* each staged pointer: a carried tile moved by a uniform step (xs), or
   * recomputed from the iv by an affine step (found below, xs -1) */
  int *xs = teeny__cg_alloc(g, sizeof *xs * (size_t)(A.n + 1));
  for (int j = 0; j < A.n; j++) {
    xs[j] = uniform_step(g, &P, A.loads[j]->args[0]);
    const teeny_op *d = g->f->values[A.loads[j]->args[0]].def;
    if (xs[j] < 0 && (!d || d->code != IR_ADDPTR || !P.inside[A.loads[j]->args[0]]))
      return NULL;
  }
  int n = op->nres;
  carried c = carried_new(g, body->args + 1, n);
  LLVMValueRef **init = teeny__cg_alloc(g, sizeof *init * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    init[i] = regs_of(g, &c, i, op->args[3 + i]);
  binding b = bind_push(g, &P, &c, teeny__cg_scalar(g, op->args[0]), init, -1);
  eval_operands(g, &P, A.loads, A.n);
  LLVMValueRef ok = NULL;
  bool neither = false; /* a pointer of neither form: no versioning */
  for (int j = 0; j < A.n; j++) {
    const cg_layout *L = g->vi[A.loads[j]->res[0]].nat;
    LLVMValueRef inc;
    if (xs[j] >= 0) {
      eval_pure(g, &P, xs[j]);
      inc = vtype(g, xs[j]).rank ? teeny__cg_get(g, xs[j], L)[0] : teeny__cg_scalar(g, xs[j]);
    } else if (!(inc = recomputed_step(g, &P, op, A.loads[j]->args[0]))) {
      neither = true;
      break;
    }
    LLVMValueRef k = teeny__cg_async_layout_ok(g, A.loads[j], inc);
    teeny__cg_async_mask_split(g, A.loads[j], body);
    ok = and_cond(g, ok, k);
    ok = and_cond(g, ok, teeny__cg_async_whole_ok(g, A.loads[j], body));
  }
  bind_pop(g, b);
  if (!ok || neither) {
    for (int j = 0; j < A.n; j++) {
      g->vi[A.loads[j]->res[0]].cp_delta = NULL;
      g->vi[A.loads[j]->res[0]].cp_split = false;
      g->vi[A.loads[j]->res[0]].cp_whole = false;
    }
    return NULL;
  }
  LLVMValueRef arg = LLVMBuildZExt(g->b, ok, g->t_i32, "");
  LLVMValueRef all = teeny__cg_intrin(g, "llvm.nvvm.barrier0.and", NULL, 0, &arg, 1);
  return LLVMBuildICmp(g->b, LLVMIntNE, all, teeny__cg_i32(g, 0), "");
}

static void emit_for(cg *g, const teeny_op *op) {
  const teeny_region *body = op->regions[0];
  LLVMValueRef fast = version_test(g, op);
  LLVMBasicBlockRef end;
  if (!fast) {
    carried ce = carried_new(g, body->args + 1, op->nres);
    bind(g, &ce, op->res, emit_for_one(g, op, 0, &end));
    return;
  }
  LLVMBasicBlockRef bf = new_block(g, "for.fast"), bs = new_block(g, "for.general");
  LLVMBasicBlockRef join = new_block(g, "for.join");
  LLVMBuildCondBr(g->b, fast, bf, bs);
  LLVMValueRef **v[2];
  LLVMBasicBlockRef from[2];
  cg_order before = teeny__cg_order_save(g), after[2];
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->b, k ? bs : bf);
    teeny__cg_order_restore(g, &before);
    int saved = teeny__cg_scope_push(g); /* nothing made in one copy is reused in the other */
    v[k] = emit_for_one(g, op, k + 1, &end);
    teeny__cg_scope_pop(g, saved);
    from[k] = end;
    LLVMBuildBr(g->b, join);
    after[k] = teeny__cg_order_save(g);
  }
  teeny__cg_order_restore(g, &after[0]);
  teeny__cg_order_join(g, &after[1]);
  LLVMPositionBuilderAtEnd(g->b, join);
  carried ce = carried_new(g, body->args + 1, op->nres);
  make_phis(g, &ce);
  for (int k = 0; k < 2; k++)
    add_incoming(g, &ce, v[k], from[k]);
  bind(g, &ce, op->res, phis(g, &ce));
  for (int i = 0; i < body->nops; i++)
    if (body->ops[i]->code == IR_LOAD && body->ops[i]->nres) {
      g->vi[body->ops[i]->res[0]].cp_delta = NULL;
      g->vi[body->ops[i]->res[0]].cp_split = false;
      g->vi[body->ops[i]->res[0]].cp_whole = false;
    }
}

/* ---- while ---------------------------------------------------------------------------------- */

static void emit_while(cg *g, const teeny_op *op) {
  const teeny_region *before = op->regions[0], *after = op->regions[1];
  carried cb = carried_new(g, before->args, before->nargs);
  carried ca = carried_new(g, after->args, after->nargs);
  LLVMValueRef **init = teeny__cg_alloc(g, sizeof *init * (size_t)(cb.n + 1));
  for (int i = 0; i < cb.n; i++)
    init[i] = regs_of(g, &cb, i, op->args[i]);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = new_block(g, "while.head"), body = new_block(g, "while.body");
  LLVMBasicBlockRef exit = new_block(g, "while.end");
  LLVMBuildBr(g->b, head);

  LLVMPositionBuilderAtEnd(g->b, head);
  make_phis(g, &cb);
  int saved = teeny__cg_scope_push(g);
  g->rdepth++; /* program order: as for loops (emit_for_one) */
  cg_order_frame *frame = teeny__cg_order_frame_push(g, op);
  bind(g, &cb, before->args, phis(g, &cb));
  teeny__cg_emit_region(g, before);
  const teeny_op *cond = before->ops[before->nops - 1];
  LLVMValueRef go = teeny__cg_scalar(g, cond->args[0]);
  LLVMValueRef **fwd = terminator_vals(g, before, 1, &ca);
  LLVMBuildCondBr(g->b, go, body, exit);
  teeny__cg_scope_pop(g, saved);
  cg_order leaving = teeny__cg_order_save(g);

  LLVMPositionBuilderAtEnd(g->b, body);
  saved = teeny__cg_scope_push(g);
  bind(g, &ca, after->args, fwd);
  teeny__cg_emit_region(g, after);
  LLVMValueRef **next = terminator_vals(g, after, 0, &cb);
  teeny__cg_order_latch(g, frame);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  teeny__cg_scope_pop(g, saved);
  teeny__cg_order_frame_pop(g, frame);
  g->rdepth--;
  teeny__cg_order_join(g, &leaving);

  add_incoming(g, &cb, init, pre);
  add_incoming(g, &cb, next, latch);
  LLVMPositionBuilderAtEnd(g->b, exit);
  /* results are the forwarded values; their layouts match the after-args */
  carried cr = carried_new(g, op->res, op->nres);
  for (int i = 0; i < cr.n; i++)
    if (cr.L[i] != ca.L[i])
      fwd[i] = teeny__cg_convert(g, fwd[i], ca.L[i], cr.L[i], cr.dt[i]);
  bind(g, &cr, op->res, fwd);
}

/* ---- ops ------------------------------------------------------------------------------------------ */

static LLVMValueRef grid_sreg(cg *g, const char *what, int axis) {
  char name[16];
  static const char xyz[] = "xyz";
  name[0] = '\0';
  int n = 0;
  for (const char *p = what; *p && n < 10; p++)
    name[n++] = *p;
  name[n++] = '.';
  name[n++] = xyz[axis];
  name[n] = '\0';
  return teeny__cg_sreg(g, name);
}

static void emit_op(cg *g, const teeny_op *op) {
  g->loc = op->loc;
  teeny__cg_order_done(g); /* the previous op's instructions are out */
  switch (op->code) {
  case IR_CONST:
    if (vtype(g, op->res[0]).rank == 0)
      teeny__cg_set_scalar(g, op->res[0],
                           teeny__cg_const(g, vtype(g, op->res[0]).dt, op->cval));
    return; /* tiles are made where they are used */
  case IR_PROGRAM_ID:
    teeny__cg_set_scalar(g, op->res[0], grid_sreg(g, "ctaid", op->axis));
    return;
  case IR_NUM_PROGRAMS:
    teeny__cg_set_scalar(g, op->res[0], grid_sreg(g, "nctaid", op->axis));
    return;
  case IR_MAKE_RANGE:
  case IR_SPLAT:
    return; /* lazy */
  case IR_BROADCAST:
  case IR_EXPAND_DIMS:
  case IR_RESHAPE:
  case IR_TRANS:
    if (!g->vi[op->res[0]].lazy) { /* the end of a long lazy chain */
      const cg_layout *L = g->vi[op->res[0]].nat;
      teeny_type st = vtype(g, op->args[0]);
      teeny__cg_set(g, op->res[0], L,
                    teeny__cg_get(g, op->args[0], teeny__cg_pullback(g, L, op, st)));
    }
    return;
  case IR_LOAD:
    teeny__cg_emit_load(g, op);
    return;
  case IR_STORE:
    teeny__cg_emit_store(g, op);
    return;
  case IR_ATOMIC_RMW:
  case IR_ATOMIC_CAS:
    teeny__cg_emit_atomic(g, op);
    return;
  case IR_REDUCE:
    teeny__cg_emit_reduce(g, op);
    return;
  case IR_SCAN:
    teeny__cg_emit_scan(g, op);
    return;
  case IR_DOT:
    teeny__cg_emit_dot(g, op);
    return;
  case IR_HISTOGRAM:
    teeny__cg_emit_histogram(g, op);
    return;
  case IR_GATHER:
    teeny__cg_emit_gather(g, op);
    return;
  case IR_IF:
    emit_if(g, op);
    return;
  case IR_FOR:
    emit_for(g, op);
    return;
  case IR_WHILE:
    emit_while(g, op);
    return;
  case IR_BARRIER:
    teeny__cg_barrier(g);
    return;
  case IR_PRINT:
  case IR_ASSERT:
    teeny__cg_emit_debug(g, op);
    return;
  case IR_YIELD:
  case IR_CONDITION:
  case IR_RETURN:
    return; /* handled by the owner of the region */
  default:
    if (teeny__cg_is_elementwise(op->code)) {
      teeny__cg_emit_elementwise(g, op);
      return;
    }
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "the PTX code generator cannot lower '%s' yet",
                   teeny__opcode_name(op->code));
  }
}

void teeny__cg_emit_region(cg *g, const teeny_region *r) {
  teeny_loc keep = g->loc;
  for (int i = 0; i < r->nops; i++)
    emit_op(g, r->ops[i]);
  g->loc = keep;
}
