/*
 * dsl/ir/verify.c — the verifier: the tile IR's contract in code.  irgen
 * must only produce IR it accepts, and the MLIR printer, the interpreter
 * and the code generator may assume what it checks (operand types,
 * visibility of values, region terminators, power-of-two shapes).
 * Problems it finds are compiler bugs, reported as errors naming the op.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/ir/ir.h"

typedef struct verifier {
  teeny_ctx *cx;
  const teeny_ir_func *f;
  bool *visible; /* [nvalues]: defined and in scope at this point */
  int errors;
  bool oom;            /* scratch ran out: TEENY_E_NOMEM, not invalid IR */
  teeny_arena scratch; /* the verifier's own: f is read, never written, so
                        * threads may verify functions that share an arena */
} verifier;

static void vfail(verifier *v, const teeny_op *op, const char *what) {
  v->errors++;
  if (v->errors <= 5)
    teeny__error_at(v->cx, op ? op->loc : (teeny_loc){0, 0},
                    "internal error: invalid IR at '%s': %s",
                    op ? teeny__opcode_name(op->code) : "func", what);
}

static teeny_type vt(verifier *v, int id) { return v->f->values[id].type; }

static bool pow2(long x) { return x > 0 && (x & (x - 1)) == 0; }

static bool type_ok(teeny_type t) {
  if (t.dt <= TEENY_DT_VOID || t.dt >= TEENY_DT__COUNT)
    return false;
  if (t.dt == TEENY_DT_PTR &&
      (t.pointee <= TEENY_DT_VOID || t.pointee >= TEENY_DT__COUNT ||
       t.pointee == TEENY_DT_PTR))
    return false;
  if (t.rank < 0 || t.rank > TEENY_MAX_RANK)
    return false;
  for (int i = 0; i < t.rank; i++)
    if (!pow2(t.shape[i]))
      return false;
  return teeny__type_numel(t) <= TEENY_MAX_TILE_NUMEL;
}

static bool same_shape(teeny_type a, teeny_type b) {
  if (a.rank != b.rank)
    return false;
  for (int i = 0; i < a.rank; i++)
    if (a.shape[i] != b.shape[i])
      return false;
  return true;
}

static bool is_num(teeny_dtype dt) {
  return teeny__dt_is_int(dt) || teeny__dt_is_float(dt);
}

static bool is_bool_like(teeny_type t) { return t.dt == TEENY_DT_BOOL; }

static void verify_region(verifier *v, const teeny_region *r,
                          const teeny_op *owner);

/* The last op of r must be `term` with operand types `types` (n of them);
 * for CONDITION the first operand is the bool and types follow it. */
static void verify_terminator(verifier *v, const teeny_op *owner,
                              const teeny_region *r, teeny_opcode term,
                              const teeny_type *types, int n) {
  if (r->nops == 0 || r->ops[r->nops - 1]->code != term) {
    vfail(v, owner, term == IR_YIELD ? "region does not end in yield"
                                     : "region does not end in condition");
    return;
  }
  const teeny_op *t = r->ops[r->nops - 1];
  int skip = term == IR_CONDITION ? 1 : 0;
  if (t->nargs != n + skip) {
    vfail(v, t, "wrong number of operands for the enclosing op");
    return;
  }
  if (skip && !(vt(v, t->args[0]).rank == 0 &&
                is_bool_like(vt(v, t->args[0]))))
    vfail(v, t, "condition is not a scalar bool");
  for (int i = 0; i < n; i++)
    if (!teeny__type_eq(vt(v, t->args[i + skip]), types[i]))
      vfail(v, t, "operand type differs from the enclosing op's");
}

static void verify_region_args(verifier *v, const teeny_op *op,
                               const teeny_region *r, const teeny_type *types,
                               int n) {
  if (r->nargs != n) {
    vfail(v, op, "region has the wrong number of arguments");
    return;
  }
  for (int i = 0; i < n; i++)
    if (!teeny__type_eq(vt(v, r->args[i]), types[i]))
      vfail(v, op, "region argument type mismatch");
}

static void verify_combine(verifier *v, const teeny_op *op) {
  /* reduce/scan: n operands of one shape; region(2n scalars) yields n */
  int n = op->nargs;
  if (n < 1 || op->nres != n || op->nregions != 1 || !op->regions[0]) {
    vfail(v, op, "needs n operands, n results and one region");
    return;
  }
  teeny_type in = vt(v, op->args[0]);
  if (in.rank < 1 || op->axis < 0 || op->axis >= in.rank) {
    vfail(v, op, "axis out of range");
    return;
  }
  teeny_type sc[2 * TEENY_MAX_PARAMS];
  if (n > TEENY_MAX_PARAMS) {
    vfail(v, op, "too many operands");
    return;
  }
  for (int i = 0; i < n; i++) {
    teeny_type t = vt(v, op->args[i]);
    if (!same_shape(t, in))
      vfail(v, op, "operands differ in shape");
    sc[i] = sc[n + i] = teeny__type_scalar(t.dt);
    sc[i].pointee = sc[n + i].pointee = t.pointee;
    teeny_type want;
    if (op->code == IR_SCAN) {
      want = t;
    } else {
      int shape[TEENY_MAX_RANK], k = 0;
      for (int d = 0; d < in.rank; d++)
        if (d != op->axis)
          shape[k++] = in.shape[d];
      want = teeny__type_with_shape(t, k, shape);
    }
    if (!teeny__type_eq(vt(v, op->res[i]), want))
      vfail(v, op, "result type does not match the reduced operand");
  }
  verify_region_args(v, op, op->regions[0], sc, 2 * n);
  verify_region(v, op->regions[0], op);
  verify_terminator(v, op, op->regions[0], IR_YIELD, sc, n);
}

static void verify_control(verifier *v, const teeny_op *op) {
  /* scratch for the types the regions must agree with */
  teeny_type *big = teeny__arena_alloc(
      &v->scratch, sizeof(teeny_type) * (size_t)(op->nargs + op->nres + 1));
  if (!big) {
    v->oom = true;
    return;
  }
  switch (op->code) {
  case IR_IF: {
    if (op->nargs != 1 || op->nregions != 2 || !op->regions[0] || !op->regions[1]) {
      vfail(v, op, "needs one condition and two regions");
      return;
    }
    teeny_type c = vt(v, op->args[0]);
    if (c.rank != 0 || !is_bool_like(c))
      vfail(v, op, "condition is not a scalar bool");
    for (int i = 0; i < op->nres; i++)
      big[i] = vt(v, op->res[i]);
    for (int k = 0; k < 2; k++) {
      verify_region_args(v, op, op->regions[k], NULL, 0);
      verify_region(v, op->regions[k], op);
      verify_terminator(v, op, op->regions[k], IR_YIELD, big, op->nres);
    }
    return;
  }
  case IR_FOR: {
    int n = op->nargs - 3;
    if (n < 0 || op->nres != n || op->nregions != 1 || !op->regions[0]) {
      vfail(v, op, "needs lb, ub, step, inits and one region");
      return;
    }
    teeny_type lb = vt(v, op->args[0]);
    if (lb.rank != 0 || !teeny__dt_is_int(lb.dt) ||
        !teeny__type_eq(lb, vt(v, op->args[1])) ||
        !teeny__type_eq(lb, vt(v, op->args[2])))
      vfail(v, op, "bounds and step must be scalar ints of one type");
    big[0] = lb;
    for (int i = 0; i < n; i++) {
      big[i + 1] = vt(v, op->args[i + 3]);
      if (!teeny__type_eq(big[i + 1], vt(v, op->res[i])))
        vfail(v, op, "result type differs from its init");
    }
    verify_region_args(v, op, op->regions[0], big, n + 1);
    verify_region(v, op->regions[0], op);
    verify_terminator(v, op, op->regions[0], IR_YIELD, big + 1, n);
    return;
  }
  case IR_WHILE: {
    int n = op->nargs;
    if (op->nregions != 2 || !op->regions[0] || !op->regions[1]) {
      vfail(v, op, "needs two regions");
      return;
    }
    for (int i = 0; i < n; i++)
      big[i] = vt(v, op->args[i]);
    teeny_type *res = big + n;
    for (int i = 0; i < op->nres; i++)
      res[i] = vt(v, op->res[i]);
    verify_region_args(v, op, op->regions[0], big, n);
    verify_region(v, op->regions[0], op);
    verify_terminator(v, op, op->regions[0], IR_CONDITION, res, op->nres);
    verify_region_args(v, op, op->regions[1], res, op->nres);
    verify_region(v, op->regions[1], op);
    verify_terminator(v, op, op->regions[1], IR_YIELD, big, n);
    return;
  }
  default:
    return;
  }
}

static bool nargs_in(const teeny_op *op, int lo, int hi) {
  return op->nargs >= lo && op->nargs <= hi;
}

static void verify_memory(verifier *v, const teeny_op *op) {
  if (op->nargs < 1) {
    vfail(v, op, "missing pointer operand");
    return;
  }
  teeny_type p = vt(v, op->args[0]);
  if (p.dt != TEENY_DT_PTR) {
    vfail(v, op, "first operand is not a pointer");
    return;
  }
  teeny_type elem = teeny__type_with_dtype(p, p.pointee);
  teeny_type mask = teeny__type_with_dtype(p, TEENY_DT_BOOL);
  switch (op->code) {
  case IR_LOAD:
    if (!nargs_in(op, 1, 3) || op->nres != 1)
      vfail(v, op, "load takes ptr [, mask [, other]] and has one result");
    else if (!teeny__type_eq(vt(v, op->res[0]), elem))
      vfail(v, op, "result is not the pointee type");
    else if (op->nargs >= 2 && !teeny__type_eq(vt(v, op->args[1]), mask))
      vfail(v, op, "mask is not bool of the pointer's shape");
    else if (op->nargs == 3 && !teeny__type_eq(vt(v, op->args[2]), elem))
      vfail(v, op, "other is not the pointee type");
    return;
  case IR_STORE:
    if (!nargs_in(op, 2, 3) || op->nres != 0)
      vfail(v, op, "store takes ptr, value [, mask] and has no result");
    else if (!teeny__type_eq(vt(v, op->args[1]), elem))
      vfail(v, op, "value is not the pointee type");
    else if (op->nargs == 3 && !teeny__type_eq(vt(v, op->args[2]), mask))
      vfail(v, op, "mask is not bool of the pointer's shape");
    return;
  case IR_ATOMIC_RMW:
    if (!nargs_in(op, 2, 3) || op->nres != 1)
      vfail(v, op, "atomic takes ptr, value [, mask] and has one result");
    else if (!teeny__type_eq(vt(v, op->args[1]), elem) ||
             !teeny__type_eq(vt(v, op->res[0]), elem))
      vfail(v, op, "value or result is not the pointee type");
    else if (op->nargs == 3 && !teeny__type_eq(vt(v, op->args[2]), mask))
      vfail(v, op, "mask is not bool of the pointer's shape");
    return;
  case IR_ATOMIC_CAS:
    if (!nargs_in(op, 3, 4) || op->nres != 1)
      vfail(v, op, "atomic_cas takes ptr, cmp, value [, mask] and has one result");
    else if (!teeny__type_eq(vt(v, op->args[1]), elem) ||
             !teeny__type_eq(vt(v, op->args[2]), elem) ||
             !teeny__type_eq(vt(v, op->res[0]), elem))
      vfail(v, op, "cmp, value or result is not the pointee type");
    else if (op->nargs == 4 && !teeny__type_eq(vt(v, op->args[3]), mask))
      vfail(v, op, "mask is not bool of the pointer's shape");
    return;
  default:
    return;
  }
}

/* Element-wise ops: every operand has the result's type (except CMP, SELECT,
 * CAST, ADDPTR, handled before this). */
static void verify_elementwise(verifier *v, const teeny_op *op, int arity) {
  if (op->nargs != arity || op->nres != 1) {
    vfail(v, op, "wrong operand or result count");
    return;
  }
  teeny_type r = vt(v, op->res[0]);
  for (int i = 0; i < arity; i++)
    if (!teeny__type_eq(vt(v, op->args[i]), r)) {
      vfail(v, op, "operand type differs from the result type");
      return;
    }
  bool ok;
  switch (op->code) {
  case IR_AND:
  case IR_OR:
  case IR_XOR:
  case IR_NOT:
    ok = teeny__dt_is_int(r.dt) || r.dt == TEENY_DT_BOOL;
    break;
  case IR_SHL:
  case IR_SHR:
    ok = teeny__dt_is_int(r.dt);
    break;
  case IR_EXP: case IR_EXP2: case IR_LOG: case IR_LOG2: case IR_SQRT:
  case IR_RSQRT: case IR_SIN: case IR_COS: case IR_TANH: case IR_ERF:
  case IR_ERFC: case IR_LOG1P: case IR_EXPM1: case IR_POW:
  case IR_ASIN: case IR_ACOS: case IR_ATAN: case IR_ATAN2:
  case IR_FLOOR: case IR_CEIL: case IR_FMA:
    ok = teeny__dt_is_float(r.dt);
    break;
  default:
    ok = is_num(r.dt);
    break;
  }
  if (!ok)
    vfail(v, op, "operand dtype not allowed for this op");
}

static void verify_shape_op(verifier *v, const teeny_op *op) {
  if (op->nargs != 1 || op->nres != 1) {
    vfail(v, op, "takes one operand and has one result");
    return;
  }
  teeny_type a = vt(v, op->args[0]), r = vt(v, op->res[0]);
  if (a.dt != r.dt || a.pointee != r.pointee) {
    vfail(v, op, "changes the dtype");
    return;
  }
  switch (op->code) {
  case IR_SPLAT:
    if (a.rank != 0 || r.rank == 0)
      vfail(v, op, "splat must take a scalar to a tile");
    return;
  case IR_BROADCAST:
    if (a.rank != r.rank || a.rank == 0)
      vfail(v, op, "broadcast keeps the rank");
    else
      for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != r.shape[i] && a.shape[i] != 1)
          vfail(v, op, "broadcast may only stretch dims of size 1");
    return;
  case IR_EXPAND_DIMS:
    if (r.rank != a.rank + 1 || op->axis < 0 || op->axis > a.rank ||
        r.shape[op->axis] != 1)
      vfail(v, op, "expand_dims must insert a 1 at axis");
    else
      for (int i = 0, j = 0; i < r.rank; i++)
        if (i != op->axis && r.shape[i] != a.shape[j++])
          vfail(v, op, "expand_dims changed another dim");
    return;
  case IR_RESHAPE:
    if (teeny__type_numel(a) != teeny__type_numel(r) || a.rank == 0)
      vfail(v, op, "reshape must keep the element count");
    return;
  case IR_TRANS: {
    int perm[TEENY_MAX_RANK];
    bool ok = a.rank >= 2 && r.rank == a.rank, seen[TEENY_MAX_RANK] = {false};
    if (ok)
      teeny__ir_trans_perm(op, a.rank, perm);
    for (int i = 0; ok && i < a.rank; i++) {
      ok = perm[i] >= 0 && perm[i] < a.rank && !seen[perm[i]] && r.shape[i] == a.shape[perm[i]];
      if (ok)
        seen[perm[i]] = true;
    }
    for (int i = a.rank; ok && i < TEENY_MAX_RANK; i++)
      ok = op->perm[i] == 0;
    if (!ok)
      vfail(v, op, "trans must permute the dims (result dim i is source dim order[i])");
    return;
  }
  default:
    return;
  }
}

/* print and assert: a valid format with one value per conversion that it
 * accepts, tile operands of one shape, an assert's condition bool. */
static void verify_debug(verifier *v, const teeny_op *op) {
  bool as = op->code == IR_ASSERT;
  teeny_fmt_conv conv[TEENY_FMT_MAX_ARGS];
  char err[160];
  int first = as ? 1 : 0;
  int n = op->str ? teeny__fmt_parse(op->str, conv, TEENY_FMT_MAX_ARGS, err, sizeof err) : -1;
  if (op->nres || n < 0 || n != op->nargs - first ||
      (as && (op->nargs < 1 || vt(v, op->args[0]).dt != TEENY_DT_BOOL))) {
    vfail(v, op, "needs a valid format, a value per conversion (and a bool condition)");
    return;
  }
  teeny_type shape = {0};
  for (int i = 0; i < op->nargs; i++) {
    teeny_type t = vt(v, op->args[i]);
    if (i >= first && !teeny__fmt_accepts(conv[i - first].conv, t.dt))
      vfail(v, op, "a conversion does not take its value's dtype");
    if (t.rank && shape.rank && !same_shape(t, shape))
      vfail(v, op, "tile operands must share one shape");
    if (t.rank)
      shape = t;
  }
}

static void verify_op(verifier *v, const teeny_op *op) {
  bool approx_ok = op->code == IR_EXP || op->code == IR_EXP2 || op->code == IR_LOG ||
                   op->code == IR_LOG2 || op->code == IR_SIN || op->code == IR_COS ||
                   op->code == IR_TANH || op->code == IR_DIV;
  if (op->fast && !approx_ok)
    vfail(v, op, "only exp, exp2, log, log2, sin, cos, tanh and float division have a fast form");
  if ((op->sem || op->scope) && op->code != IR_ATOMIC_RMW && op->code != IR_ATOMIC_CAS)
    vfail(v, op, "memory semantics and scope belong to atomics");
  if (op->prec && op->code != IR_DOT)
    vfail(v, op, "an input precision belongs to dot");
  if ((op->cache || op->evict) && op->code != IR_LOAD && op->code != IR_STORE)
    vfail(v, op, "cache and eviction hints belong to loads and stores");
  for (int i = 0; i < op->nargs; i++) {
    int a = op->args[i];
    if (a < 0 || a >= v->f->nvalues || !v->visible[a]) {
      vfail(v, op, "operand is not visible here");
      return;
    }
  }
  for (int i = 0; i < op->nres; i++)
    if (!type_ok(vt(v, op->res[i])))
      vfail(v, op, "result has an invalid type or shape");
  switch (op->code) {
  case IR_CONST:
    if (op->nargs != 0 || op->nres != 1)
      vfail(v, op, "const has no operands and one result");
    break;
  case IR_PROGRAM_ID:
  case IR_NUM_PROGRAMS:
    if (op->nres != 1 || !teeny__type_eq(vt(v, op->res[0]),
                                         teeny__type_scalar(TEENY_DT_I32)) ||
        op->axis < 0 || op->axis > 2)
      vfail(v, op, "must give a scalar i32 for axis 0, 1 or 2");
    break;
  case IR_MAKE_RANGE: {
    teeny_type r = vt(v, op->res[0]);
    if (r.rank != 1 || r.dt != TEENY_DT_I32 || r.shape[0] != op->end - op->start)
      vfail(v, op, "result must be tile(i32)[end - start]");
    break;
  }
  case IR_SPLAT:
  case IR_BROADCAST:
  case IR_EXPAND_DIMS:
  case IR_RESHAPE:
  case IR_TRANS:
    verify_shape_op(v, op);
    break;
  case IR_NEG: case IR_NOT: case IR_EXP: case IR_EXP2: case IR_LOG:
  case IR_LOG2: case IR_SQRT: case IR_RSQRT: case IR_SIN: case IR_COS:
  case IR_TANH: case IR_ERF: case IR_ABS: case IR_FLOOR: case IR_CEIL:
  case IR_ERFC: case IR_LOG1P: case IR_EXPM1: case IR_ASIN: case IR_ACOS: case IR_ATAN:
    verify_elementwise(v, op, 1);
    break;
  case IR_POW: case IR_ATAN2:
    verify_elementwise(v, op, 2);
    break;
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM:
  case IR_AND: case IR_OR: case IR_XOR: case IR_SHL: case IR_SHR:
  case IR_MIN: case IR_MAX:
    verify_elementwise(v, op, 2);
    break;
  case IR_FMA:
    verify_elementwise(v, op, 3);
    break;
  case IR_UMULHI:
    verify_elementwise(v, op, 2);
    if (op->nargs == 2 && !teeny__dt_is_int(vt(v, op->args[0]).dt))
      vfail(v, op, "umulhi multiplies integers");
    break;
  case IR_BITCAST: {
    teeny_dtype a = op->nargs == 1 ? vt(v, op->args[0]).dt : TEENY_DT_VOID;
    teeny_dtype r = op->nres == 1 ? vt(v, op->res[0]).dt : TEENY_DT_VOID;
    if (op->nargs != 1 || op->nres != 1 || !same_shape(vt(v, op->args[0]), vt(v, op->res[0])) ||
        a == TEENY_DT_PTR || r == TEENY_DT_PTR || a == TEENY_DT_BOOL || r == TEENY_DT_BOOL ||
        teeny__dt_bits(a) != teeny__dt_bits(r))
      vfail(v, op, "bitcast reinterprets a number as another dtype of its width");
    break;
  }
  case IR_CMP:
    if (op->nargs != 2 || op->nres != 1 ||
        !teeny__type_eq(vt(v, op->args[0]), vt(v, op->args[1])) ||
        !teeny__type_eq(vt(v, op->res[0]),
                        teeny__type_with_dtype(vt(v, op->args[0]), TEENY_DT_BOOL)))
      vfail(v, op, "compares two equal types into bool");
    break;
  case IR_SELECT:
    if (op->nargs != 3 || op->nres != 1 ||
        !teeny__type_eq(vt(v, op->args[1]), vt(v, op->res[0])) ||
        !teeny__type_eq(vt(v, op->args[2]), vt(v, op->res[0])) ||
        !teeny__type_eq(vt(v, op->args[0]),
                        teeny__type_with_dtype(vt(v, op->res[0]), TEENY_DT_BOOL)))
      vfail(v, op, "selects between two equal types with a bool of their shape");
    break;
  case IR_CAST:
    if (op->nargs != 1 || op->nres != 1 ||
        !same_shape(vt(v, op->args[0]), vt(v, op->res[0])) ||
        vt(v, op->args[0]).dt == TEENY_DT_PTR || vt(v, op->res[0]).dt == TEENY_DT_PTR)
      vfail(v, op, "casts between non-pointer dtypes of one shape");
    break;
  case IR_INTTOPTR:
  case IR_PTRTOINT:
  case IR_PTRCAST: {
    teeny_type a = op->nargs == 1 ? vt(v, op->args[0]) : teeny__type_scalar(TEENY_DT_VOID);
    teeny_type r = op->nres == 1 ? vt(v, op->res[0]) : teeny__type_scalar(TEENY_DT_VOID);
    bool a_ptr = a.dt == TEENY_DT_PTR, r_ptr = r.dt == TEENY_DT_PTR;
    bool a64 = a.dt == TEENY_DT_I64 || a.dt == TEENY_DT_U64;
    bool r64 = r.dt == TEENY_DT_I64 || r.dt == TEENY_DT_U64;
    bool ok = op->nargs == 1 && op->nres == 1 && same_shape(a, r) &&
              (op->code == IR_INTTOPTR ? a64 && r_ptr
               : op->code == IR_PTRTOINT ? a_ptr && r64 : a_ptr && r_ptr);
    if (!ok)
      vfail(v, op, "pointer casts go between i64/u64 and pointers of one shape");
    break;
  }
  case IR_ADDPTR:
    if (op->nargs != 2 || op->nres != 1 ||
        vt(v, op->args[0]).dt != TEENY_DT_PTR ||
        !teeny__dt_is_int(vt(v, op->args[1]).dt) ||
        !same_shape(vt(v, op->args[0]), vt(v, op->args[1])) ||
        !teeny__type_eq(vt(v, op->args[0]), vt(v, op->res[0])))
      vfail(v, op, "adds an int offset of the same shape to a pointer");
    break;
  case IR_LOAD:
  case IR_STORE:
  case IR_ATOMIC_RMW:
  case IR_ATOMIC_CAS:
    verify_memory(v, op);
    break;
  case IR_BARRIER:
    if (op->nargs || op->nres)
      vfail(v, op, "barrier has no operands and no results");
    break;
  case IR_PRINT:
  case IR_ASSERT:
    verify_debug(v, op);
    break;
  case IR_REDUCE:
  case IR_SCAN:
    verify_combine(v, op);
    break;
  case IR_GATHER: {
    bool ok = op->nargs == 2 && op->nres == 1;
    teeny_type s = ok ? vt(v, op->args[0]) : teeny__type_scalar(TEENY_DT_VOID);
    teeny_type i = ok ? vt(v, op->args[1]) : s, r = ok ? vt(v, op->res[0]) : s;
    ok = ok && s.rank >= 1 && s.rank == i.rank && i.dt == TEENY_DT_I32 && r.dt == s.dt &&
         r.rank == i.rank && op->axis >= 0 && op->axis < s.rank;
    for (int d = 0; ok && d < s.rank; d++)
      ok = r.shape[d] == i.shape[d] && (d == op->axis || i.shape[d] == s.shape[d]);
    if (!ok)
      vfail(v, op, "gather takes src and an i32 index of src's rank, equal off the axis");
    break;
  }
  case IR_HISTOGRAM: {
    teeny_type x = op->nargs == 1 ? vt(v, op->args[0]) : teeny__type_scalar(TEENY_DT_VOID);
    teeny_type r = op->nres == 1 ? vt(v, op->res[0]) : teeny__type_scalar(TEENY_DT_VOID);
    if (op->nargs != 1 || op->nres != 1 || x.rank != 1 || x.dt != TEENY_DT_I32 || r.rank != 1 ||
        r.dt != TEENY_DT_I32 || !pow2(r.shape[0]))
      vfail(v, op, "histogram takes an i32 [N] and gives an i32 [bins]");
    break;
  }
  case IR_DOT: {
    if (op->nargs != 3 || op->nres != 1) {
      vfail(v, op, "dot takes a, b, acc");
      break;
    }
    teeny_type a = vt(v, op->args[0]), b = vt(v, op->args[1]),
               c = vt(v, op->args[2]);
    /* [M,K] x [K,N] + [M,N], or batched: [B,M,K] x [B,K,N] + [B,M,N] */
    int n = a.rank, lo = n - 2;
    bool ok = (n == 2 || n == 3) && b.rank == n && c.rank == n && a.dt == b.dt &&
              a.shape[lo + 1] == b.shape[lo] && c.shape[lo] == a.shape[lo] &&
              c.shape[lo + 1] == b.shape[lo + 1] && teeny__type_eq(c, vt(v, op->res[0]));
    if (ok && n == 3)
      ok = a.shape[0] == b.shape[0] && a.shape[0] == c.shape[0];
    if (!ok)
      vfail(v, op, "dot shapes must be [M,K] x [K,N] + [M,N] (or [B,M,K] x [B,K,N] + [B,M,N])");
    break;
  }
  case IR_IF:
  case IR_FOR:
  case IR_WHILE:
    verify_control(v, op);
    break;
  case IR_YIELD:
  case IR_CONDITION:
  case IR_RETURN:
    break; /* placement is checked by the owner */
  default:
    vfail(v, op, "unknown opcode");
  }
}

static void verify_region(verifier *v, const teeny_region *r,
                          const teeny_op *owner) {
  /* values defined in r go out of scope when r ends */
  for (int i = 0; i < r->nargs; i++)
    v->visible[r->args[i]] = true;
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    bool last = i == r->nops - 1;
    if ((op->code == IR_YIELD || op->code == IR_CONDITION) && (!last || !owner))
      vfail(v, op, "terminator in the middle of a region");
    if (op->code == IR_RETURN && (owner || !last))
      vfail(v, op, "return must end the function body");
    verify_op(v, op);
    for (int j = 0; j < op->nres; j++)
      v->visible[op->res[j]] = true;
  }
  if (owner) {
    for (int i = 0; i < r->nargs; i++)
      v->visible[r->args[i]] = false;
    /* hide what r defined; values of nested regions were hidden when
     * those regions ended */
    for (int i = 0; i < r->nops; i++)
      for (int j = 0; j < r->ops[i]->nres; j++)
        v->visible[r->ops[i]->res[j]] = false;
  }
}

int teeny__ir_verify(teeny_ctx *cx, const teeny_ir_func *f) {
  verifier v = {cx, f, NULL, 0, false, {0}};
  teeny__arena_init(&v.scratch);
  v.visible = teeny__arena_alloc(&v.scratch, sizeof(bool) * (size_t)(f->nvalues + 1));
  if (!v.visible) {
    teeny__arena_free(&v.scratch);
    return TEENY_E_NOMEM;
  }
  if (f->nparams != f->body->nargs)
    vfail(&v, NULL, "parameter count differs from the body's arguments");
  verify_region(&v, f->body, NULL);
  if (f->body->nops == 0 || f->body->ops[f->body->nops - 1]->code != IR_RETURN)
    vfail(&v, NULL, "function body does not end in return");
  teeny__arena_free(&v.scratch);
  return v.oom ? TEENY_E_NOMEM : v.errors ? TEENY_E_INTERNAL : TEENY_OK;
}
