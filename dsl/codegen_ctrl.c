/*
 * dsl/codegen_ctrl.c — walking regions: one op at a time in IR order, and
 * structured control flow as LLVM basic blocks.
 *
 *   if     cond ? then : else, joined by one phi per result register;
 *   for    preheader -> header (phis: induction variable and one per
 *          register of each carried tile; iv < ub) -> body -> latch;
 *   while  header = the before-region (phis for the carried values), its
 *          condition leaves or enters the after-region, which loops back.
 * Every condition is a scalar, and scalars are uniform, so all threads of
 * a block take the same path (barriers inside branches and loops are safe).
 * Each nested region gets its own scope (codegen_value.c), so values made
 * inside it are never used after it.
 */
#include "dsl/codegen_llvm.h"

static teeny_type vtype(cg *g, int id) { return teeny__ir_type(g->f, id); }

static LLVMBasicBlockRef new_block(cg *g, const char *name) {
  return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

/* ---- carried values: registers in a fixed layout, joined by phis -------------------- */

typedef struct carried {
  int n;                 /* values */
  const cg_layout **L;   /* [n] layout (NULL: scalar) */
  LLVMValueRef **phi;    /* [n] registers (phis, duplicates aliased) */
  teeny_dtype *dt;       /* [n] */
} carried;

static long nregs(const cg_layout *L) { return L ? 1L << L->nreg : 1; }

/* Layouts of the values that flow into region args `ids` (or results). */
static carried carried_new(cg *g, const int *ids, int n) {
  carried c;
  c.n = n;
  c.L = teeny__cg_alloc(g, sizeof *c.L * (size_t)(n + 1));
  c.phi = teeny__cg_alloc(g, sizeof *c.phi * (size_t)(n + 1));
  c.dt = teeny__cg_alloc(g, sizeof *c.dt * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    c.L[i] = vtype(g, ids[i]).rank ? g->vi[ids[i]].nat : NULL;
    c.dt[i] = vtype(g, ids[i]).dt;
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

static void make_phis(cg *g, carried *c) {
  for (int i = 0; i < c->n; i++) {
    long n = nregs(c->L[i]);
    c->phi[i] = teeny__cg_alloc(g, sizeof(LLVMValueRef) * (size_t)n);
    LLVMTypeRef t = teeny__cg_type(g, c->dt[i]);
    for (long r = 0; r < n; r++) {
      long s = c->L[i] ? teeny__cg_dup_src(c->L[i], r) : r;
      c->phi[i][r] = s != r ? c->phi[i][s] : LLVMBuildPhi(g->b, t, "");
    }
  }
}

/* Add one incoming edge: vals[i] are register arrays in the layouts. */
static void add_incoming(cg *g, const carried *c, LLVMValueRef **vals,
                         LLVMBasicBlockRef from) {
  for (int i = 0; i < c->n; i++) {
    long n = nregs(c->L[i]);
    for (long r = 0; r < n; r++) {
      long s = c->L[i] ? teeny__cg_dup_src(c->L[i], r) : r;
      if (s != r)
        continue;
      LLVMAddIncoming(c->phi[i][r], &vals[i][r], &from, 1);
    }
  }
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

static LLVMValueRef **phis(const carried *c) { return c->phi; }

/* ---- if ------------------------------------------------------------------------------------ */

static void emit_if(cg *g, const teeny_op *op) {
  LLVMValueRef cond = teeny__cg_scalar(g, op->args[0]);
  LLVMBasicBlockRef bb[2] = {new_block(g, "then"), new_block(g, "else")};
  LLVMBasicBlockRef join = new_block(g, "endif");
  LLVMBuildCondBr(g->b, cond, bb[0], bb[1]);
  carried c = carried_new(g, op->res, op->nres);
  LLVMValueRef **vals[2];
  LLVMBasicBlockRef ends[2];
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->b, bb[k]);
    int saved = teeny__cg_scope_push(g);
    teeny__cg_emit_region(g, op->regions[k]);
    vals[k] = terminator_vals(g, op->regions[k], 0, &c);
    ends[k] = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, join);
    teeny__cg_scope_pop(g, saved);
  }
  LLVMPositionBuilderAtEnd(g->b, join);
  make_phis(g, &c);
  for (int k = 0; k < 2; k++)
    add_incoming(g, &c, vals[k], ends[k]);
  bind(g, &c, op->res, phis(&c));
}

/* ---- for ------------------------------------------------------------------------------------- */

static void emit_for(cg *g, const teeny_op *op) {
  const teeny_region *body = op->regions[0];
  int n = op->nres;
  teeny_dtype ivt = vtype(g, op->args[0]).dt;
  LLVMValueRef lb = teeny__cg_scalar(g, op->args[0]);
  LLVMValueRef ub = teeny__cg_scalar(g, op->args[1]);
  LLVMValueRef step = teeny__cg_scalar(g, op->args[2]);
  carried c = carried_new(g, body->args + 1, n);
  LLVMValueRef **init = teeny__cg_alloc(g, sizeof *init * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    init[i] = regs_of(g, &c, i, op->args[3 + i]);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = new_block(g, "for.head"), bbody = new_block(g, "for.body");
  LLVMBasicBlockRef exit = new_block(g, "for.end");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef iv = LLVMBuildPhi(g->b, teeny__cg_type(g, ivt), "iv");
  make_phis(g, &c);
  LLVMValueRef go = LLVMBuildICmp(g->b, teeny__dt_is_signed(ivt) ? LLVMIntSLT : LLVMIntULT,
                                  iv, ub, "");
  LLVMBuildCondBr(g->b, go, bbody, exit);

  LLVMPositionBuilderAtEnd(g->b, bbody);
  int saved = teeny__cg_scope_push(g);
  teeny__cg_set_scalar(g, body->args[0], iv);
  bind(g, &c, body->args + 1, phis(&c));
  teeny__cg_emit_region(g, body);
  LLVMValueRef **next = terminator_vals(g, body, 0, &c);
  LLVMValueRef iv2 = LLVMBuildAdd(g->b, iv, step, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  teeny__cg_scope_pop(g, saved);

  LLVMAddIncoming(iv, &lb, &pre, 1);
  LLVMAddIncoming(iv, &iv2, &latch, 1);
  add_incoming(g, &c, init, pre);
  add_incoming(g, &c, next, latch);
  LLVMPositionBuilderAtEnd(g->b, exit);
  bind(g, &c, op->res, phis(&c));
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
  bind(g, &cb, before->args, phis(&cb));
  teeny__cg_emit_region(g, before);
  const teeny_op *cond = before->ops[before->nops - 1];
  LLVMValueRef go = teeny__cg_scalar(g, cond->args[0]);
  LLVMValueRef **fwd = terminator_vals(g, before, 1, &ca);
  LLVMBuildCondBr(g->b, go, body, exit);
  teeny__cg_scope_pop(g, saved);

  LLVMPositionBuilderAtEnd(g->b, body);
  saved = teeny__cg_scope_push(g);
  bind(g, &ca, after->args, fwd);
  teeny__cg_emit_region(g, after);
  LLVMValueRef **next = terminator_vals(g, after, 0, &cb);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  teeny__cg_scope_pop(g, saved);

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
  case IR_IF:
    emit_if(g, op);
    return;
  case IR_FOR:
    emit_for(g, op);
    return;
  case IR_WHILE:
    emit_while(g, op);
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
