/*
 * dsl/irgen_expr.c — expressions: dtype promotion, implicit and explicit
 * conversion, broadcasting, pointer arithmetic and constant folding.
 *
 * The rules are docs/dsl.md §4.  Folding must agree bit for bit with the
 * interpreter and the GPU, so it computes with the interpreter's own element
 * semantics (dsl/ir/scalar.c): integer ops wrap at the dtype's width, division
 * by zero gives -1 (remainder: the dividend), over-wide shifts give 0 (or -1
 * for >> of a negative), float->int casts saturate and map NaN to 0, and
 * results are rounded to their dtype (f16 and bf16 included).  Two weak
 * constants fold at 64 bits (ints) or in double (floats) and stay weak.
 */
#include <math.h>
#include <string.h>

#include "dsl/irgen.h"
#include "dsl/ir/scalar.h"

/* ---- constructors -------------------------------------------------------- */

gval teeny__gv_value(gen *g, int id) {
  gval v;
  memset(&v, 0, sizeof v);
  v.id = id;
  v.type = g->f->values[id].type;
  return v;
}

static gval gv_const(teeny_type t, teeny_scalar c) {
  gval v;
  memset(&v, 0, sizeof v);
  v.id = -1;
  v.type = t;
  v.is_const = true;
  v.c = c;
  return v;
}

gval teeny__gv_int(teeny_dtype dt, int64_t v) {
  return gv_const(teeny__type_scalar(dt), teeny__scalar_int(dt, (uint64_t)v));
}

gval teeny__gv_void(void) {
  gval v;
  memset(&v, 0, sizeof v);
  v.id = -1;
  v.type = teeny__type_scalar(TEENY_DT_VOID);
  return v;
}

gval teeny__gv_bool(bool b) {
  teeny_scalar s = {.i = b ? 1 : 0};
  return gv_const(teeny__type_scalar(TEENY_DT_BOOL), s);
}

gval teeny__gv_weak_int(int64_t v) {
  bool fits32 = v >= INT32_MIN && v <= INT32_MAX;
  teeny_scalar s = {.i = v};
  gval r = gv_const(teeny__type_scalar(fits32 ? TEENY_DT_I32 : TEENY_DT_I64), s);
  r.weak = true;
  return r;
}

gval teeny__gv_weak_float(double v) {
  teeny_scalar s = {.f = v};
  gval r = gv_const(teeny__type_scalar(TEENY_DT_F32), s);
  r.weak = true;
  return r;
}

static bool is_float(teeny_dtype dt) { return teeny__dt_is_float(dt); }
static bool is_int(teeny_dtype dt) { return teeny__dt_is_int(dt); }

int teeny__gen_id(gen *g, gval v, teeny_loc loc) {
  if (v.id >= 0)
    return v.id;
  if (!v.is_const)
    teeny__gen_fail(g, loc, "internal error: value has neither an id nor a constant");
  int id = teeny__ir_const(g->f, g->cur, loc, v.type, v.c);
  if (id < 0)
    teeny__gen_fail(g, loc, "kernel too large: more than %d IR operations after inlining",
                    TEENY_MAX_IR_OPS);
  return id;
}

/* Ops that compute on fp8 operands in f32: their IR converts the operands
 * up and a float result back down (docs/dsl.md §3), so the interpreter,
 * the code generator and the .mlir all say the same. */
static bool computes_in_f32(teeny_opcode code, const gval *args, int nargs) {
  switch (code) {
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM: case IR_MIN:
  case IR_MAX: case IR_NEG: case IR_ABS: case IR_CMP: case IR_FMA: case IR_EXP:
  case IR_EXP2: case IR_LOG: case IR_LOG2: case IR_SQRT: case IR_RSQRT: case IR_SIN:
  case IR_COS: case IR_TANH: case IR_ERF: case IR_ERFC: case IR_LOG1P: case IR_EXPM1:
  case IR_ASIN: case IR_ACOS: case IR_ATAN: case IR_ATAN2:
  case IR_FLOOR: case IR_CEIL: case IR_POW:
    break;
  default:
    return false;
  }
  for (int i = 0; i < nargs; i++)
    if (teeny__dt_is_fp8(args[i].type.dt))
      return true;
  return false;
}

static gval gen_op_f32(gen *g, teeny_opcode code, const gval *args, int nargs,
                       teeny_type rt, teeny_loc loc) {
  gval w[4];
  for (int i = 0; i < nargs; i++)
    w[i] = teeny__dt_is_fp8(args[i].type.dt) ? teeny__gen_convert(g, args[i], TEENY_DT_F32, loc)
                                               : args[i];
  if (!teeny__dt_is_fp8(rt.dt))
    return teeny__gen_op(g, code, w, nargs, rt, loc);
  gval r = teeny__gen_op(g, code, w, nargs, teeny__type_with_dtype(rt, TEENY_DT_F32), loc);
  return teeny__gen_convert(g, r, rt.dt, loc);
}

gval teeny__gen_op(gen *g, teeny_opcode code, const gval *args, int nargs,
                   teeny_type rt, teeny_loc loc) {
  if (computes_in_f32(code, args, nargs))
    return gen_op_f32(g, code, args, nargs, rt, loc);
  int ids[4];
  for (int i = 0; i < nargs; i++)
    ids[i] = teeny__gen_id(g, args[i], loc);
  teeny_op *op = teeny__ir_op_add(g->f, g->cur, code, loc, ids, nargs, &rt, 1);
  if (!op)
    teeny__gen_fail(g, loc, "kernel too large: more than %d IR operations after inlining",
                    TEENY_MAX_IR_OPS);
  return teeny__gv_value(g, op->res[0]);
}

/* ---- conversions ------------------------------------------------------------- */

static bool int_fits(teeny_dtype dt, int64_t v) {
  int w = teeny__dt_bits(dt);
  if (dt == TEENY_DT_BOOL)
    return v == 0 || v == 1;
  if (teeny__dt_is_signed(dt)) {
    if (w >= 64)
      return true;
    int64_t lim = INT64_C(1) << (w - 1);
    return v >= -lim && v < lim;
  }
  if (v < 0)
    return false;
  return w >= 64 || (uint64_t)v < (UINT64_C(1) << w);
}

gval teeny__gen_convert(gen *g, gval v, teeny_dtype dt, teeny_loc loc) {
  if (v.type.dt == TEENY_DT_PTR || dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "a pointer does not convert implicitly; write (i64)p or (ptr(T))address");
  if (v.type.dt == dt && !v.weak)
    return v;
  bool f8_other = (teeny__dt_is_fp8(dt) && !is_float(v.type.dt)) ||
                  (teeny__dt_is_fp8(v.type.dt) && !is_float(dt));
  if (f8_other && !v.is_const) /* fp8 <-> int or bool: through f32 */
    return teeny__gen_convert(g, teeny__gen_convert(g, v, TEENY_DT_F32, loc), dt, loc);
  if (v.is_const) /* a weak int is an i32 or i64 value, a weak float a double */
    return gv_const(teeny__type_with_dtype(v.type, dt),
                    teeny__scalar_cast(v.weak && is_float(v.type.dt) ? TEENY_DT_F64
                                                                     : v.type.dt,
                                       dt, v.c));
  return teeny__gen_op(g, IR_CAST, &v, 1, teeny__type_with_dtype(v.type, dt), loc);
}

/* True if every value of `from` is exactly representable in `to`. */
static bool widening_ok(teeny_dtype from, teeny_dtype to) {
  if (from == to)
    return true;
  if (from == TEENY_DT_BOOL)
    return is_int(to) || is_float(to);
  if (is_int(from) && is_int(to))
    return teeny__dt_bits(to) > teeny__dt_bits(from) &&
           (teeny__dt_is_signed(to) || !teeny__dt_is_signed(from));
  if (teeny__dt_is_fp8(from)) /* both fit f16 and bf16 exactly */
    return to == TEENY_DT_F16 || to == TEENY_DT_BF16 || to == TEENY_DT_F32 ||
           to == TEENY_DT_F64;
  if (from == TEENY_DT_F16 || from == TEENY_DT_BF16)
    return to == TEENY_DT_F32 || to == TEENY_DT_F64;
  return from == TEENY_DT_F32 && to == TEENY_DT_F64;
}

gval teeny__gen_operand(gen *g, gval v, teeny_dtype dt, teeny_loc loc) {
  if (!v.weak)
    return teeny__gen_convert(g, v, dt, loc);
  if (is_float(v.type.dt)) { /* weak float */
    if (!is_float(dt))
      teeny__gen_fail(g, loc, "cannot use a floating-point literal as %s",
                      teeny_dtype_name(dt));
    teeny_scalar c = {.f = teeny__scalar_round(dt, v.c.f)};
    return gv_const(teeny__type_with_dtype(v.type, dt), c);
  }
  if (is_float(dt)) /* the exact int rounded once, as a cast would */
    return gv_const(teeny__type_with_dtype(v.type, dt),
                    teeny__scalar_cast(TEENY_DT_I64, dt, v.c));
  if (!int_fits(dt, v.c.i))
    teeny__gen_fail(g, loc, "constant %lld does not fit in %s", (long long)v.c.i,
                    teeny_dtype_name(dt));
  return gv_const(teeny__type_with_dtype(v.type, dt), teeny__scalar_int(dt, v.c.u));
}

gval teeny__gen_implicit(gen *g, gval v, teeny_dtype dt, teeny_loc loc,
                         const char *what) {
  if (v.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "cannot %s with a pointer", what);
  if (v.weak)
    return teeny__gen_operand(g, v, dt, loc);
  if (!widening_ok(v.type.dt, dt))
    teeny__gen_fail(g, loc,
                    "dtype mismatch: cannot %s of dtype %s with a value of dtype %s "
                    "(implicit conversions never lose values); cast it: (%s)(...)",
                    what, teeny_dtype_name(dt), teeny_dtype_name(v.type.dt),
                    teeny_dtype_name(dt));
  return teeny__gen_convert(g, v, dt, loc);
}

/* ---- shapes ---------------------------------------------------------------------- */

bool teeny__broadcast_shape(teeny_type a, teeny_type b, int *rank, int *shape) {
  int r = a.rank > b.rank ? a.rank : b.rank;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a.rank), ib = i - (r - b.rank);
    int da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
    if (da == db || db == 1)
      shape[i] = da;
    else if (da == 1)
      shape[i] = db;
    else
      return false;
  }
  *rank = r;
  return true;
}

static const char *shape_str(gen *g, teeny_type t) {
  if (t.rank == 0)
    return "a scalar";
  char dims[64];
  int n = 0;
  for (int i = 0; i < t.rank; i++)
    n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%d", i ? ", " : "", t.shape[i]);
  return teeny__arena_printf(g->cx->arena, "[%s]", dims);
}

gval teeny__gen_broadcast(gen *g, gval v, int rank, const int *shape, teeny_loc loc) {
  teeny_type want = teeny__type_with_shape(v.type, rank, shape);
  if (teeny__type_eq(v.type, want))
    return v;
  if (v.type.rank > rank)
    teeny__gen_fail(g, loc, "shape mismatch: cannot broadcast %s to %s",
                    shape_str(g, v.type), shape_str(g, want));
  for (int i = 0; i < v.type.rank; i++) {
    int d = v.type.shape[i], t = shape[i + rank - v.type.rank];
    if (d != t && d != 1)
      teeny__gen_fail(g, loc, "shape mismatch: cannot broadcast %s to %s",
                      shape_str(g, v.type), shape_str(g, want));
  }
  if (v.is_const) {
    v.type = want;
    v.id = -1;
    return v;
  }
  if (v.type.rank == 0)
    return teeny__gen_op(g, IR_SPLAT, &v, 1, want, loc);
  while (v.type.rank < rank) { /* leading 1s */
    int s[TEENY_MAX_RANK] = {1};
    for (int i = 0; i < v.type.rank; i++)
      s[i + 1] = v.type.shape[i];
    teeny_type t = teeny__type_with_shape(v.type, v.type.rank + 1, s);
    v = teeny__gen_op(g, IR_EXPAND_DIMS, &v, 1, t, loc);
    g->f->values[v.id].def->axis = 0;
  }
  if (!teeny__type_eq(v.type, want))
    v = teeny__gen_op(g, IR_BROADCAST, &v, 1, want, loc);
  return v;
}

/* ---- promotion ---------------------------------------------------------------------- */

static teeny_dtype promote_typed(teeny_dtype x, teeny_dtype y) {
  if (x == y)
    return x;
  if (x == TEENY_DT_F64 || y == TEENY_DT_F64)
    return TEENY_DT_F64;
  if (is_float(x) && is_float(y))
    return TEENY_DT_F32;
  if (is_float(x))
    return x;
  if (is_float(y))
    return y;
  if (x == TEENY_DT_BOOL)
    return y;
  if (y == TEENY_DT_BOOL)
    return x;
  int wx = teeny__dt_bits(x), wy = teeny__dt_bits(y);
  if (wx != wy)
    return wx > wy ? x : y;
  return teeny__dt_is_signed(x) ? y : x; /* same width: the unsigned one */
}

/* The dtype a weak value w becomes next to a typed dtype `other`. */
static teeny_dtype adopt(gval w, teeny_dtype other) {
  if (is_float(w.type.dt))
    return is_float(other) ? other : TEENY_DT_F32;
  if (other == TEENY_DT_BOOL)
    return TEENY_DT_I32;
  return other;
}

teeny_dtype teeny__gen_promote(gen *g, gval a, gval b, teeny_loc loc,
                               const char *opname) {
  if (a.type.dt == TEENY_DT_PTR || b.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "'%s' is not defined on pointers", opname);
  if (a.weak && b.weak) {
    if (is_float(a.type.dt) || is_float(b.type.dt))
      return TEENY_DT_F32;
    return a.type.dt == TEENY_DT_I64 || b.type.dt == TEENY_DT_I64 ? TEENY_DT_I64
                                                                  : TEENY_DT_I32;
  }
  if (a.weak)
    return adopt(a, b.type.dt);
  if (b.weak)
    return adopt(b, a.type.dt);
  return promote_typed(a.type.dt, b.type.dt);
}

/* ---- folding -------------------------------------------------------------------------- */

static bool op_is_cmp(teeny_op_kind op) { return op >= OP_EQ && op <= OP_GE; }

static teeny_opcode binop_code(teeny_op_kind op) {
  switch (op) {
  case OP_ADD: return IR_ADD;
  case OP_SUB: return IR_SUB;
  case OP_MUL: return IR_MUL;
  case OP_DIV: return IR_DIV;
  case OP_REM: return IR_REM;
  case OP_SHL: return IR_SHL;
  case OP_SHR: return IR_SHR;
  case OP_BITAND: case OP_LOGAND: return IR_AND;
  case OP_BITOR: case OP_LOGOR: return IR_OR;
  case OP_BITXOR: return IR_XOR;
  default: return IR_CMP;
  }
}

static teeny_cmp_pred cmp_pred(teeny_op_kind op) {
  switch (op) {
  case OP_EQ: return CMP_EQ;
  case OP_NE: return CMP_NE;
  case OP_LT: return CMP_LT;
  case OP_LE: return CMP_LE;
  case OP_GT: return CMP_GT;
  default: return CMP_GE;
  }
}

static const char *op_text(teeny_op_kind op) {
  static const char *t[] = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^",
                            "&&", "||", "==", "!=", "<", "<=", ">", ">=",
                            "-", "+", "~", "!", "="};
  return (unsigned)op < TEENY_ARRAY_LEN(t) ? t[op] : "?";
}

/* Both operands constant and of dtype dt (and one shape): fold. */
static gval fold_binary(teeny_op_kind op, teeny_dtype dt, gval a, gval b,
                        teeny_type shape_of) {
  if (op_is_cmp(op)) {
    teeny_scalar c = {.u = teeny__scalar_compare(cmp_pred(op), dt, a.c, b.c)};
    return gv_const(teeny__type_with_dtype(shape_of, TEENY_DT_BOOL), c);
  }
  return gv_const(teeny__type_with_dtype(shape_of, dt),
                  teeny__scalar_binop(binop_code(op), dt, a.c, b.c));
}

/* A weak constant as a value of dtype dt (i64 or f64): weak ints are
 * exact in i64, weak floats keep a double. */
static teeny_scalar weak_as(gval w, teeny_dtype dt) {
  return is_float(w.type.dt) ? w.c : teeny__scalar_cast(TEENY_DT_I64, dt, w.c);
}

/* Two weak constants: fold at full width (i64, or f64 if either is a
 * float) and stay weak. */
static gval fold_weak(gen *g, teeny_op_kind op, gval a, gval b, teeny_loc loc) {
  bool fl = is_float(a.type.dt) || is_float(b.type.dt);
  teeny_dtype dt = fl ? TEENY_DT_F64 : TEENY_DT_I64;
  teeny_scalar x = weak_as(a, dt), y = weak_as(b, dt);
  if (op_is_cmp(op))
    return teeny__gv_bool(teeny__scalar_compare(cmp_pred(op), dt, x, y));
  teeny_opcode code = binop_code(op);
  if (fl && (code == IR_SHL || code == IR_SHR || code == IR_AND || code == IR_OR ||
             code == IR_XOR))
    teeny__gen_fail(g, loc, "'%s' needs integer operands", op_text(op));
  if (!fl && (code == IR_DIV || code == IR_REM) && y.i == 0)
    teeny__gen_fail(g, loc, "division by zero in a constant expression");
  teeny_scalar r = teeny__scalar_binop(code, dt, x, y);
  return fl ? teeny__gv_weak_float(r.f) : teeny__gv_weak_int(r.i);
}

/* ---- operators --------------------------------------------------------------------------- */

static gval to_bool(gen *g, gval v, teeny_loc loc) {
  if (v.type.dt == TEENY_DT_BOOL && !v.weak)
    return v;
  if (v.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "a pointer cannot be used as a condition");
  return teeny__gen_binop(g, OP_NE, v, teeny__gv_weak_int(0), loc);
}

/* p + i, i + p, p - i */
static gval pointer_arith(gen *g, teeny_op_kind op, gval a, gval b, teeny_loc loc) {
  bool ap = a.type.dt == TEENY_DT_PTR, bp = b.type.dt == TEENY_DT_PTR;
  if ((op != OP_ADD && op != OP_SUB) || (ap && bp) || (op == OP_SUB && bp))
    teeny__gen_fail(g, loc, "'%s' is not defined on pointers (only pointer + integer "
                            "and pointer - integer)", op_text(op));
  gval p = ap ? a : b, off = ap ? b : a;
  if (off.weak) {
    if (is_float(off.type.dt))
      teeny__gen_fail(g, loc, "pointer offsets must be integers");
    off = teeny__gen_operand(g, off, off.type.dt, loc);
  }
  if (!is_int(off.type.dt))
    teeny__gen_fail(g, loc, "pointer offsets must be integers, not %s",
                    teeny_dtype_name(off.type.dt));
  if (op == OP_SUB)
    off = teeny__gen_binop(g, OP_SUB, teeny__gv_int(off.type.dt, 0), off, loc);
  int rank, shape[TEENY_MAX_RANK];
  if (!teeny__broadcast_shape(p.type, off.type, &rank, shape))
    teeny__gen_fail(g, loc, "shape mismatch: %s and %s do not broadcast (in '%s')",
                    shape_str(g, p.type), shape_str(g, off.type), op_text(op));
  p = teeny__gen_broadcast(g, p, rank, shape, loc);
  off = teeny__gen_broadcast(g, off, rank, shape, loc);
  gval args[2] = {p, off};
  return teeny__gen_op(g, IR_ADDPTR, args, 2, p.type, loc);
}

static void check_operand_classes(gen *g, teeny_op_kind op, gval a, gval b,
                                  teeny_loc loc) {
  bool bitwise = op == OP_BITAND || op == OP_BITOR || op == OP_BITXOR;
  bool shift = op == OP_SHL || op == OP_SHR;
  if (!bitwise && !shift)
    return;
  gval v[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    teeny_dtype dt = v[i].type.dt;
    if (is_float(dt) || (shift && dt == TEENY_DT_BOOL && !v[i].weak))
      teeny__gen_fail(g, loc, "'%s' needs %s operands, not %s", op_text(op),
                      shift ? "integer" : "integer or bool", teeny_dtype_name(dt));
  }
}

gval teeny__gen_binop(gen *g, teeny_op_kind op, gval a, gval b, teeny_loc loc) {
  if (a.type.dt == TEENY_DT_VOID || b.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, loc, "a void value cannot be an operand of '%s'", op_text(op));
  if (a.type.dt == TEENY_DT_PTR || b.type.dt == TEENY_DT_PTR)
    return pointer_arith(g, op, a, b, loc);
  if (op == OP_LOGAND || op == OP_LOGOR) {
    a = to_bool(g, a, loc);
    b = to_bool(g, b, loc);
    op = op == OP_LOGAND ? OP_BITAND : OP_BITOR;
  }
  check_operand_classes(g, op, a, b, loc);
  if (a.weak && b.weak && a.type.rank == 0 && b.type.rank == 0)
    return fold_weak(g, op, a, b, loc);
  teeny_dtype dt = teeny__gen_promote(g, a, b, loc, op_text(op));
  bool arith = op <= OP_SHR;
  if (dt == TEENY_DT_BOOL && arith)
    dt = TEENY_DT_I32;
  if ((op == OP_SHL || op == OP_SHR) && !is_int(dt))
    teeny__gen_fail(g, loc, "'%s' needs integer operands", op_text(op));
  a = teeny__gen_operand(g, a, dt, loc);
  b = teeny__gen_operand(g, b, dt, loc);
  int rank, shape[TEENY_MAX_RANK];
  if (!teeny__broadcast_shape(a.type, b.type, &rank, shape))
    teeny__gen_fail(g, loc, "shape mismatch: %s and %s do not broadcast (in '%s')",
                    shape_str(g, a.type), shape_str(g, b.type), op_text(op));
  teeny_type shaped = teeny__type_tile(dt, rank, shape);
  if (a.is_const && b.is_const)
    return fold_binary(op, dt, a, b, shaped);
  a = teeny__gen_broadcast(g, a, rank, shape, loc);
  b = teeny__gen_broadcast(g, b, rank, shape, loc);
  gval args[2] = {a, b};
  if (op_is_cmp(op)) {
    gval r = teeny__gen_op(g, IR_CMP, args, 2,
                           teeny__type_with_dtype(shaped, TEENY_DT_BOOL), loc);
    g->f->values[r.id].def->pred = cmp_pred(op);
    return r;
  }
  return teeny__gen_op(g, binop_code(op), args, 2, shaped, loc);
}

static gval gen_unary(gen *g, teeny_op_kind op, gval v, teeny_loc loc) {
  if (v.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, loc, "a void value cannot be an operand of '%s'", op_text(op));
  if (v.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "'%s' is not defined on pointers", op_text(op));
  switch (op) {
  case OP_PLUS:
    return v;
  case OP_NEG:
    if (v.weak && is_float(v.type.dt)) /* -x, not 0 - x: -0.0 keeps its sign */
      return teeny__gv_weak_float(-v.c.f);
    if (v.weak)
      return fold_weak(g, OP_SUB, teeny__gv_weak_int(0), v, loc);
    if (v.type.dt == TEENY_DT_BOOL)
      v = teeny__gen_convert(g, v, TEENY_DT_I32, loc);
    if (is_int(v.type.dt))
      return teeny__gen_binop(g, OP_SUB, teeny__gv_int(v.type.dt, 0), v, loc);
    if (v.is_const) {
      v.c = teeny__scalar_unop(IR_NEG, v.type.dt, v.c);
      return v;
    }
    return teeny__gen_op(g, IR_NEG, &v, 1, v.type, loc);
  case OP_BITNOT:
    if (is_float(v.type.dt))
      teeny__gen_fail(g, loc, "'~' needs an integer or bool operand, not %s",
                      teeny_dtype_name(v.type.dt));
    if (v.weak)
      return teeny__gv_weak_int(teeny__scalar_unop(IR_NOT, TEENY_DT_I64, v.c).i);
    if (v.is_const) {
      v.c = teeny__scalar_unop(IR_NOT, v.type.dt, v.c);
      return v;
    }
    return teeny__gen_op(g, IR_NOT, &v, 1, v.type, loc);
  case OP_LOGNOT: {
    v = to_bool(g, v, loc);
    if (v.is_const) {
      v.c = teeny__scalar_unop(IR_NOT, TEENY_DT_BOOL, v.c);
      return v;
    }
    return teeny__gen_op(g, IR_NOT, &v, 1, v.type, loc);
  }
  default:
    teeny__gen_fail(g, loc, "internal error: unknown unary operator");
  }
}

gval teeny__gen_cond(gen *g, const teeny_expr *e) {
  gval v = teeny__gen_expr(g, e);
  if (v.type.rank > 0)
    teeny__gen_fail(g, e->loc,
                    "condition must be a scalar, not a tile of shape %s "
                    "(use where() to choose element by element)",
                    shape_str(g, v.type));
  return to_bool(g, v, e->loc);
}

/* c ? a : b of two values (not structs), c bool. */
static gval select_values(gen *g, gval c, gval a, gval b, teeny_loc aloc, teeny_loc bloc,
                          teeny_loc loc) {
  if (a.type.dt == TEENY_DT_PTR || b.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, loc, "'?:' between pointers is not supported");
  teeny_dtype dt = teeny__gen_promote(g, a, b, loc, "?:");
  a = teeny__gen_operand(g, a, dt, aloc);
  b = teeny__gen_operand(g, b, dt, bloc);
  int rank, shape[TEENY_MAX_RANK];
  if (!teeny__broadcast_shape(a.type, b.type, &rank, shape) ||
      !teeny__broadcast_shape(teeny__type_tile(dt, rank, shape), c.type, &rank, shape))
    teeny__gen_fail(g, loc, "shape mismatch: %s, %s and %s do not broadcast (in '?:')",
                    shape_str(g, c.type), shape_str(g, a.type), shape_str(g, b.type));
  gval args[3] = {teeny__gen_broadcast(g, c, rank, shape, loc),
                  teeny__gen_broadcast(g, a, rank, shape, loc),
                  teeny__gen_broadcast(g, b, rank, shape, loc)};
  return teeny__gen_op(g, IR_SELECT, args, 3, args[1].type, loc);
}

/* c ? a : b of two values of one struct, field by field (c a scalar: a
 * tile condition would mix fields of both). */
static gval select_structs(gen *g, gval c, gval a, gval b, teeny_loc loc) {
  if (a.st != b.st)
    teeny__gen_fail(g, loc, "'?:' between %s and %s: both sides must be one struct",
                    a.st ? a.st->name : teeny__gen_tstr(g, a.type),
                    b.st ? b.st->name : teeny__gen_tstr(g, b.type));
  if (c.type.rank)
    teeny__gen_fail(g, loc, "'?:' between structs needs a scalar condition, not %s",
                    shape_str(g, c.type));
  gval *leaves = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)a.st->nleaves);
  for (int i = 0; i < a.st->nleaves; i++) {
    if (!teeny__type_eq(a.leaves[i].type, b.leaves[i].type))
      teeny__gen_fail(g, loc, "'?:': field '%s' is %s on one side and %s on the other",
                      a.st->leaf_name[i], teeny__gen_tstr(g, a.leaves[i].type),
                      teeny__gen_tstr(g, b.leaves[i].type));
    leaves[i] = select_values(g, c, a.leaves[i], b.leaves[i], loc, loc, loc);
  }
  return teeny__gv_struct(a.st, leaves);
}

/* c ? a : b */
static gval gen_select(gen *g, const teeny_expr *e) {
  gval c = teeny__gen_expr(g, e->cond);
  if (c.type.rank == 0) {
    c = to_bool(g, c, e->cond->loc);
    if (c.is_const) /* like a constexpr if: only the chosen side is built */
      return teeny__gen_expr_any(g, c.c.i ? e->lhs : e->rhs);
  } else {
    c = to_bool(g, c, e->cond->loc);
  }
  gval a = teeny__gen_expr_any(g, e->lhs), b = teeny__gen_expr_any(g, e->rhs);
  if (a.st || b.st)
    return select_structs(g, c, a, b, e->loc);
  return select_values(g, c, a, b, e->lhs->loc, e->rhs->loc, e->loc);
}

static gval gen_literal(gen *g, const teeny_expr *e) {
  if (e->kind == EX_BOOL)
    return teeny__gv_bool(e->ival != 0);
  if (e->kind == EX_FLOAT) {
    if (e->lit_dt == TEENY_DT_VOID)
      return teeny__gv_weak_float(e->fval);
    teeny_scalar c = {.f = teeny__scalar_round(e->lit_dt, e->fval)};
    return gv_const(teeny__type_scalar(e->lit_dt), c);
  }
  if (e->lit_dt == TEENY_DT_VOID) {
    if (e->ival > (uint64_t)INT64_MAX)
      teeny__gen_fail(g, e->loc, "integer literal too large");
    return teeny__gv_weak_int((int64_t)e->ival);
  }
  if (!is_float(e->lit_dt) && teeny__dt_bits(e->lit_dt) < 64 &&
      e->ival >> teeny__dt_bits(e->lit_dt))
    teeny__gen_fail(g, e->loc, "integer literal does not fit in %s",
                    teeny_dtype_name(e->lit_dt));
  return gv_const(teeny__type_scalar(e->lit_dt), teeny__scalar_int(e->lit_dt, e->ival));
}

static gval gen_name(gen *g, const teeny_expr *e) {
  switch (e->sym) {
  case SYM_VAR: {
    gvar *v = &g->fr->vars[e->sym_index];
    if (v->st)
      return teeny__gen_slots_value(g, e->sym_index, v->st, e->loc, e->name);
    if (!v->defined)
      teeny__gen_fail(g, e->loc, "'%s' is used before it is assigned on every path",
                      e->name);
    return v->v;
  }
  case SYM_GENERIC: {
    const teeny_generic *gen_ = &g->prog->generics[e->sym_index];
    if (gen_->is_dtype)
      teeny__gen_fail(g, e->loc, "'%s' is a dtype, not a value", e->name);
    if (gen_->cdt == TEENY_DT_VOID) /* an untyped const is a weak i32 */
      return teeny__gv_weak_int(g->b->val[e->sym_index].i);
    return gv_const(teeny__type_scalar(gen_->cdt), g->b->val[e->sym_index]);
  }
  default:
    break;
  }
  if (strcmp(e->name, "INFINITY") == 0)
    return teeny__gv_weak_float(INFINITY);
  if (strcmp(e->name, "NAN") == 0)
    return teeny__gv_weak_float(NAN);
  teeny__gen_fail(g, e->loc, "'%s' is not a value", e->name);
}

/* (ptr(T))x of an i64/u64 address or of another pointer, and (i64)p or
 * (u64)p of a pointer: pointer tables and byte arithmetic (Triton's
 * x.to(tl.pointer_type(T)) and friends).  The same shape either way. */
static gval gen_pointer_cast(gen *g, const teeny_expr *e, gval v) {
  teeny_dtype dt = teeny__tyspec_dtype(e->type, g->b);
  if (e->type->is_tile && v.type.rank == 0)
    teeny__gen_fail(g, e->loc, "cannot cast a scalar to a tile; use full(T, value, shape...)");
  if (e->type->is_ptr) {
    if (dt == TEENY_DT_VOID)
      teeny__gen_fail(g, e->loc, "a pointer cast needs a pointee dtype, not void");
    teeny_type rt = teeny__type_with_shape(teeny__type_ptr(dt), v.type.rank, v.type.shape);
    if (v.type.dt == TEENY_DT_PTR)
      return v.type.pointee == dt ? v : teeny__gen_op(g, IR_PTRCAST, &v, 1, rt, e->loc);
    if (v.weak)
      v = teeny__gen_operand(g, v, TEENY_DT_I64, e->loc);
    if (v.type.dt != TEENY_DT_I64 && v.type.dt != TEENY_DT_U64)
      teeny__gen_fail(g, e->loc, "only an i64 or u64 address can become a pointer, not %s; "
                      "cast it to i64 first", teeny__gen_tstr(g, v.type));
    return teeny__gen_op(g, IR_INTTOPTR, &v, 1, rt, e->loc);
  }
  if (dt != TEENY_DT_I64 && dt != TEENY_DT_U64)
    teeny__gen_fail(g, e->loc, "a pointer converts to i64 or u64 only, not %s",
                    teeny_dtype_name(dt));
  return teeny__gen_op(g, IR_PTRTOINT, &v, 1, teeny__type_with_dtype(v.type, dt), e->loc);
}

static gval gen_cast(gen *g, const teeny_expr *e) {
  if (e->type->is_void) { /* (void)x: x is evaluated and discarded, as in C */
    teeny__gen_expr_any(g, e->lhs);
    return teeny__gv_void();
  }
  gval v = teeny__gen_expr(g, e->lhs);
  if (e->type->is_ptr || v.type.dt == TEENY_DT_PTR)
    return gen_pointer_cast(g, e, v);
  if (v.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->loc, "cannot cast a void value");
  if (e->type->is_tile && v.type.rank == 0)
    teeny__gen_fail(g, e->loc, "cannot cast a scalar to a tile; use full(T, value, shape...)");
  teeny_dtype dt = teeny__tyspec_dtype(e->type, g->b);
  if (dt == TEENY_DT_VOID) { /* (void)e discards the value */
    v.type = teeny__type_scalar(TEENY_DT_VOID);
    v.id = -1;
    v.is_const = v.weak = false;
    return v;
  }
  return teeny__gen_convert(g, v, dt, e->loc); /* folds weak constants too */
}

int64_t teeny__gen_const_int(gen *g, const teeny_expr *e, const char *what) {
  gval v = teeny__gen_expr(g, e);
  if (!v.is_const || v.type.rank != 0 || !(is_int(v.type.dt) || v.type.dt == TEENY_DT_BOOL)) {
    if (e->kind == EX_NAME && e->sym == SYM_VAR && !v.is_const)
      teeny__gen_fail(g, e->loc, "%s must be a compile-time constant, but '%s' is a "
                                 "runtime value (non-constant tile size)", what, e->name);
    teeny__gen_fail(g, e->loc, "%s must be a compile-time constant integer", what);
  }
  return teeny__dt_is_signed(v.type.dt) || v.weak || v.type.dt == TEENY_DT_BOOL
             ? v.c.i
             : (int64_t)v.c.u;
}

teeny_type teeny__gen_type_of(gen *g, const teeny_expr *e) {
  if (e->kind == EX_NAME && e->sym == SYM_DTYPE && e->type) {
    teeny_dtype dt = teeny__tyspec_dtype(e->type, g->b);
    return e->type->is_ptr ? teeny__type_ptr(dt) : teeny__type_scalar(dt);
  }
  teeny_region *cur = g->cur;
  g->cur = teeny__ir_region_new(g->f); /* never attached: nothing runs it */
  gval v = teeny__gen_expr(g, e);
  g->cur = cur;
  if (v.weak) /* a literal is what C would make it: int (i64), float */
    v.type.dt = v.type.dt == TEENY_DT_I64 ? TEENY_DT_I64 : v.type.dt;
  return v.type;
}

/* sizeof(T), sizeof x: the bytes of one element (a tile's element, as on
 * the host where tile(T) is T), a weak integer. */
static gval gen_sizeof(gen *g, const teeny_expr *e) {
  teeny_type t;
  if (e->type) {
    teeny_dtype dt = teeny__tyspec_dtype(e->type, g->b);
    t = e->type->is_ptr ? teeny__type_ptr(dt) : teeny__type_scalar(dt);
  } else {
    t = teeny__gen_type_of(g, e->lhs);
  }
  if (t.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->loc, "sizeof of a void value");
  return teeny__gv_weak_int(teeny_dtype_size(t.dt));
}

gval teeny__gen_expr(gen *g, const teeny_expr *e) {
  gval v = teeny__gen_expr_any(g, e);
  if (v.st && v.st->desc)
    teeny__gen_fail(g, e->loc, "a %s (%s) cannot be used here: it is read and written with %s",
                    v.st->desc == TEENY_DESC_BLOCK ? "block pointer" : "tensor descriptor",
                    v.st->name,
                    v.st->desc == TEENY_DESC_BLOCK ? "load, store and advance"
                                                   : "load_tensor_descriptor and "
                                                     "store_tensor_descriptor");
  if (v.st)
    teeny__gen_fail(g, e->loc, "a struct value (%s) cannot be used here; use its fields",
                    v.st->name);
  return v;
}

gval teeny__gen_expr_any(gen *g, const teeny_expr *e) {
  switch (e->kind) {
  case EX_MEMBER:
    return teeny__gen_member(g, e);
  case EX_INIT:
    return teeny__gen_init(g, e);
  case EX_SIZEOF:
    return gen_sizeof(g, e);
  case EX_STRING:
    teeny__gen_fail(g, e->loc, "a string literal is not a value");
  case EX_INT:
  case EX_FLOAT:
  case EX_BOOL:
    return gen_literal(g, e);
  case EX_NAME:
    return gen_name(g, e);
  case EX_UNARY:
    return gen_unary(g, e->op, teeny__gen_expr(g, e->lhs), e->loc);
  case EX_BINARY: {
    gval a = teeny__gen_expr(g, e->lhs);
    gval b = teeny__gen_expr(g, e->rhs);
    return teeny__gen_binop(g, e->op, a, b, e->loc);
  }
  case EX_COND:
    return gen_select(g, e);
  case EX_CALL:
    if (e->sym == SYM_BUILTIN)
      return teeny__gen_builtin(g, e);
    if (e->sym == SYM_FUNC) {
      const teeny_func *fn = g->prog->funcs[e->sym_index];
      gval *args = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)(e->nargs + 1));
      teeny_loc *locs = teeny__arena_alloc(g->cx->arena, sizeof(teeny_loc) * (size_t)(e->nargs + 1));
      for (int i = 0; i < e->nargs; i++) {
        args[i] = teeny__gen_expr_any(g, e->args[i]);
        locs[i] = e->args[i]->loc;
      }
      return teeny__gen_inline(g, fn, args, locs, e->nargs, e->loc);
    }
    teeny__gen_fail(g, e->loc, "'%s' is not a function", e->name ? e->name : "?");
  case EX_CAST:
    return gen_cast(g, e);
  case EX_ASSIGN:
  case EX_INCDEC:
    return teeny__gen_assign(g, e);
  }
  teeny__gen_fail(g, e->loc, "internal error: unknown expression kind");
}

/* Element-wise op over n operands: promote to one dtype, broadcast to one
 * shape, fold binary ops of constants, else emit `code`. */
gval teeny__gen_elementwise(gen *g, teeny_opcode code, gval *args, int n,
                            teeny_loc loc, const char *name) {
  for (int i = 0; i < n; i++)
    if (args[i].type.dt == TEENY_DT_PTR || args[i].type.dt == TEENY_DT_VOID)
      teeny__gen_fail(g, loc, "%s needs numeric operands, not %s", name,
                      teeny__gen_tstr(g, args[i].type));
  /* rep stands for the operands promoted so far: only dt and weakness
   * matter to promotion */
  gval rep = args[0];
  teeny_dtype dt = rep.type.dt;
  for (int i = 1; i < n; i++) {
    dt = teeny__gen_promote(g, rep, args[i], loc, name);
    bool weak = rep.weak && args[i].weak;
    memset(&rep, 0, sizeof rep);
    rep.type = teeny__type_scalar(dt);
    rep.weak = weak;
  }
  if (dt == TEENY_DT_BOOL)
    dt = TEENY_DT_I32;
  int rank = 0, shape[TEENY_MAX_RANK] = {0};
  bool all_const = true;
  for (int i = 0; i < n; i++) {
    args[i] = teeny__gen_operand(g, args[i], dt, loc);
    teeny_type cur = teeny__type_tile(dt, rank, shape);
    if (!teeny__broadcast_shape(cur, args[i].type, &rank, shape))
      teeny__gen_fail(g, loc, "shape mismatch: operands of %s do not broadcast (%s)", name,
                      teeny__gen_tstr(g, args[i].type));
    all_const = all_const && args[i].is_const;
  }
  teeny_type rt = teeny__type_tile(dt, rank, shape);
  if (all_const && n == 2 && code >= IR_ADD && code <= IR_MAX)
    return gv_const(rt, teeny__scalar_binop(code, dt, args[0].c, args[1].c));
  for (int i = 0; i < n; i++)
    args[i] = teeny__gen_broadcast(g, args[i], rank, shape, loc);
  return teeny__gen_op(g, code, args, n, rt, loc);
}
