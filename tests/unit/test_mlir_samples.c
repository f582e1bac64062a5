/*
 * tests/unit/test_mlir_samples.c — the IR the MLIR printer's tests print:
 * the shared samples of tests/ir_samples.c plus hand-built kernels that
 * reach every opcode and every signed/unsigned, cast and constant case.
 * test_mlir.c checks the text; test_mlir_opt.c feeds it to mlir-opt-19 (and
 * can write it out for Triton).  Every sample passes teeny__ir_verify.
 */
#include <math.h>
#include <string.h>

#include "ir_samples.h"

teeny_ir_func *teeny_test_mlir_sample(teeny_arena *a, int i, const char **name);
teeny_ir_func *teeny_test_mlir_arith(teeny_arena *a, teeny_dtype dt);

/* ---- builder helpers ------------------------------------------------------- */

static const teeny_loc L = {7, 3};

static teeny_type sc(teeny_dtype dt) { return teeny__type_scalar(dt); }

static teeny_type t1(teeny_dtype dt, int n) { return teeny__type_tile(dt, 1, &n); }

static teeny_type t2(teeny_dtype dt, int m, int n) {
  int s[2] = {m, n};
  return teeny__type_tile(dt, 2, s);
}

static int cint(teeny_ir_func *f, teeny_region *r, teeny_type t, int64_t v) {
  teeny_scalar s = {.i = v};
  return teeny__ir_const(f, r, L, t, s);
}

static int cflt(teeny_ir_func *f, teeny_region *r, teeny_type t, double v) {
  teeny_scalar s = {.f = v};
  return teeny__ir_const(f, r, L, t, s);
}

static int un(teeny_ir_func *f, teeny_region *r, teeny_opcode c, int a) {
  return teeny__ir_unary(f, r, c, L, a, teeny__ir_type(f, a));
}

static int bin(teeny_ir_func *f, teeny_region *r, teeny_opcode c, int a, int b) {
  return teeny__ir_binary(f, r, c, L, a, b, teeny__ir_type(f, a));
}

static int to(teeny_ir_func *f, teeny_region *r, teeny_opcode c, int a, teeny_type t) {
  return teeny__ir_unary(f, r, c, L, a, t);
}

static int cast(teeny_ir_func *f, teeny_region *r, int a, teeny_dtype dt) {
  return to(f, r, IR_CAST, a, teeny__type_with_dtype(teeny__ir_type(f, a), dt));
}

static int cmp(teeny_ir_func *f, teeny_region *r, teeny_cmp_pred p, int a, int b) {
  teeny_type t = teeny__type_with_dtype(teeny__ir_type(f, a), TEENY_DT_BOOL);
  teeny_op *op = teeny__ir_op_add(f, r, IR_CMP, L, (int[]){a, b}, 2, &t, 1);
  op->pred = p;
  return op->res[0];
}

static int sel(teeny_ir_func *f, teeny_region *r, int c, int a, int b) {
  teeny_type t = teeny__ir_type(f, a);
  return teeny__ir_op_add(f, r, IR_SELECT, L, (int[]){c, a, b}, 3, &t, 1)->res[0];
}

static int range(teeny_ir_func *f, teeny_region *r, int n) {
  teeny_type t = t1(TEENY_DT_I32, n);
  teeny_op *op = teeny__ir_op_add(f, r, IR_MAKE_RANGE, L, NULL, 0, &t, 1);
  op->start = 0;
  op->end = n;
  return op->res[0];
}

static int axis_op(teeny_ir_func *f, teeny_region *r, teeny_opcode c, int axis) {
  teeny_type t = sc(TEENY_DT_I32);
  teeny_op *op = teeny__ir_op_add(f, r, c, L, NULL, 0, &t, 1);
  op->axis = axis;
  return op->res[0];
}

/* p + offs as a tile of pointers (p a scalar pointer, offs a 1-D i32 tile) */
static int ptrs(teeny_ir_func *f, teeny_region *r, int p, int offs) {
  teeny_type ot = teeny__ir_type(f, offs);
  teeny_type t = teeny__type_with_shape(teeny__ir_type(f, p), ot.rank, ot.shape);
  return bin(f, r, IR_ADDPTR, to(f, r, IR_SPLAT, p, t), offs);
}

static int load(teeny_ir_func *f, teeny_region *r, int p, int mask, int other) {
  teeny_type pt = teeny__ir_type(f, p);
  teeny_type t = teeny__type_with_dtype(pt, pt.pointee);
  int n = other >= 0 ? 3 : mask >= 0 ? 2 : 1;
  return teeny__ir_op_add(f, r, IR_LOAD, L, (int[]){p, mask, other}, n, &t, 1)->res[0];
}

static void store(teeny_ir_func *f, teeny_region *r, int p, int v, int mask) {
  teeny__ir_op_add(f, r, IR_STORE, L, (int[]){p, v, mask}, mask >= 0 ? 3 : 2, NULL, 0);
}

static int atomic(teeny_ir_func *f, teeny_region *r, teeny_rmw_kind k, int p, int v,
                  int mask) {
  teeny_type t = teeny__ir_type(f, v);
  teeny_op *op = teeny__ir_op_add(f, r, IR_ATOMIC_RMW, L, (int[]){p, v, mask},
                                  mask >= 0 ? 3 : 2, &t, 1);
  op->rmw = k;
  return op->res[0];
}

static void ret(teeny_ir_func *f) {
  teeny__ir_op_add(f, f->body, IR_RETURN, L, NULL, 0, NULL, 0);
}

/* ---- signed and unsigned integer arithmetic --------------------------------------- */

/* out[i] = mix of x[i] op s for every integer op, on tiles and on scalars;
 * dt is i32 or u32 (or any int) so the tests can compare the op variants. */
teeny_ir_func *teeny_test_mlir_arith(teeny_arena *a, teeny_dtype dt) {
  teeny_ir_func *f = teeny__ir_func_new(a, dt == TEENY_DT_U32 ? "arith_u32" : "arith_int");
  int x = teeny__ir_param_add(f, "x", teeny__type_ptr(dt));
  int out = teeny__ir_param_add(f, "out", teeny__type_ptr(dt));
  int s = teeny__ir_param_add(f, "s", sc(dt));
  teeny_region *r = f->body;
  int offs = range(f, r, 64);
  int v = load(f, r, ptrs(f, r, x, offs), -1, -1);
  int sv = to(f, r, IR_SPLAT, s, t1(dt, 64));
  int d = bin(f, r, IR_DIV, v, sv), m = bin(f, r, IR_REM, v, sv);
  int sh = bin(f, r, IR_SHR, v, sv), sl = bin(f, r, IR_SHL, v, sv);
  int mn = bin(f, r, IR_MIN, v, sv), mx = bin(f, r, IR_MAX, v, sv);
  int acc = sel(f, r, cmp(f, r, CMP_LT, v, sv), d, m);
  acc = bin(f, r, IR_ADD, acc, bin(f, r, IR_SUB, sh, sl));
  acc = bin(f, r, IR_MUL, acc, bin(f, r, IR_XOR, mn, mx));
  acc = bin(f, r, IR_OR, acc, bin(f, r, IR_AND, mn, mx));
  /* scalar forms */
  int q = bin(f, r, IR_DIV, s, s);
  int big = cmp(f, r, CMP_GE, q, s);
  q = sel(f, r, big, q, bin(f, r, IR_SHR, s, q));
  acc = bin(f, r, IR_ADD, acc, to(f, r, IR_SPLAT, q, t1(dt, 64)));
  /* conversions by the source's or target's signedness */
  int wide = cast(f, r, acc, TEENY_DT_I64);
  int fl = cast(f, r, acc, TEENY_DT_F32);
  int back = cast(f, r, fl, dt);
  acc = bin(f, r, IR_ADD, cast(f, r, wide, dt), back);
  store(f, r, ptrs(f, r, out, offs), acc, -1);
  ret(f);
  return f;
}

/* ---- conversions between every class of dtype ---------------------------------------- */

static teeny_ir_func *sample_casts(teeny_arena *a) {
  teeny_ir_func *f = teeny__ir_func_new(a, "casts");
  int out = teeny__ir_param_add(f, "out", teeny__type_ptr(TEENY_DT_F32));
  teeny_region *r = f->body;
  teeny_type tf = t1(TEENY_DT_F32, 32);
  int xf = un(f, r, IR_SQRT, cflt(f, r, tf, 2.0));
  int xi = cast(f, r, xf, TEENY_DT_I32);                  /* fptosi */
  int xu8 = cast(f, r, xf, TEENY_DT_U8);                  /* fptoui */
  int b1 = cast(f, r, xf, TEENY_DT_BOOL);                 /* cmpf une */
  int b2 = cast(f, r, xi, TEENY_DT_BOOL);                 /* cmpi ne */
  int b = bin(f, r, IR_AND, b1, b2);
  int bi = cast(f, r, b, TEENY_DT_I32);                   /* extui i1 */
  int bf = cast(f, r, b, TEENY_DT_F32);                   /* uitofp i1 */
  int i8 = cast(f, r, xi, TEENY_DT_I8);                   /* trunci */
  int i64 = cast(f, r, i8, TEENY_DT_I64);                 /* extsi */
  int u64 = cast(f, r, xu8, TEENY_DT_U64);                /* extui */
  int u32 = cast(f, r, xi, TEENY_DT_U32);                 /* bitcast */
  int h = cast(f, r, xf, TEENY_DT_F16);                   /* truncf */
  int bh = cast(f, r, h, TEENY_DT_BF16);                  /* via f32 */
  int d = cast(f, r, bh, TEENY_DT_F64);                   /* extf */
  int acc = bin(f, r, IR_ADD, cast(f, r, d, TEENY_DT_F32), bf);
  acc = bin(f, r, IR_ADD, acc, cast(f, r, i64, TEENY_DT_F32));   /* sitofp */
  acc = bin(f, r, IR_ADD, acc, cast(f, r, u64, TEENY_DT_F32));   /* uitofp */
  acc = bin(f, r, IR_ADD, acc, cast(f, r, u32, TEENY_DT_F32));
  acc = bin(f, r, IR_ADD, acc, cast(f, r, bi, TEENY_DT_F32));
  store(f, r, ptrs(f, r, out, range(f, r, 32)), acc, -1);
  ret(f);
  return f;
}

/* ---- element-wise math, negation, constants ------------------------------------------- */

static teeny_ir_func *sample_math(teeny_arena *a) {
  teeny_ir_func *f = teeny__ir_func_new(a, "math");
  int x = teeny__ir_param_add(f, "x", teeny__type_ptr(TEENY_DT_F32));
  int y = teeny__ir_param_add(f, "y", teeny__type_ptr(TEENY_DT_I32));
  int h = teeny__ir_param_add(f, "h", teeny__type_ptr(TEENY_DT_F16));
  teeny_region *r = f->body;
  int offs = range(f, r, 128);
  int xp = ptrs(f, r, x, offs), yp = ptrs(f, r, y, offs);
  int v = load(f, r, xp, -1, -1);
  static const teeny_opcode ops[] = {IR_EXP, IR_EXP2, IR_LOG, IR_LOG2, IR_SQRT,
                                     IR_RSQRT, IR_SIN, IR_COS, IR_TANH, IR_ERF,
                                     IR_FLOOR, IR_CEIL, IR_ABS, IR_NEG};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(ops); i++)
    v = un(f, r, ops[i], v);
  int fm = teeny__ir_op_add(f, r, IR_FMA, L, (int[]){v, v, v}, 3,
                            (teeny_type[]){t1(TEENY_DT_F32, 128)}, 1)->res[0];
  v = bin(f, r, IR_MAX, bin(f, r, IR_MIN, fm, v), cflt(f, r, t1(TEENY_DT_F32, 128), 0.1));
  v = bin(f, r, IR_REM, bin(f, r, IR_DIV, v, cflt(f, r, t1(TEENY_DT_F32, 128), 3.0)), v);
  int nan = cflt(f, r, sc(TEENY_DT_F32), NAN);
  v = bin(f, r, IR_ADD, v, to(f, r, IR_SPLAT, nan, t1(TEENY_DT_F32, 128)));
  int mask = un(f, r, IR_NOT, cmp(f, r, CMP_NE, v, v)); /* xori true */
  store(f, r, xp, v, mask);
  int iv = load(f, r, yp, mask, cint(f, r, t1(TEENY_DT_I32, 128), -7));
  iv = un(f, r, IR_ABS, un(f, r, IR_NOT, un(f, r, IR_NEG, iv)));
  store(f, r, yp, iv, -1);
  /* constants of every dtype; -inf f16 and a huge f64 must stay exact */
  int ninf = cflt(f, r, t1(TEENY_DT_F16, 128), -INFINITY);
  store(f, r, ptrs(f, r, h, offs), ninf, cint(f, r, t1(TEENY_DT_BOOL, 128), 0));
  int d = cflt(f, r, sc(TEENY_DT_F64), 1e300);
  int u8 = cint(f, r, sc(TEENY_DT_U8), 255);
  int i64 = cint(f, r, sc(TEENY_DT_I64), INT64_MIN);
  int bf = cflt(f, r, sc(TEENY_DT_BF16), 1.5);
  int sum = bin(f, r, IR_ADD, cast(f, r, d, TEENY_DT_F32), cast(f, r, bf, TEENY_DT_F32));
  sum = bin(f, r, IR_ADD, sum, cast(f, r, u8, TEENY_DT_F32));
  sum = bin(f, r, IR_ADD, sum, cast(f, r, i64, TEENY_DT_F32));
  store(f, r, x, sum, -1);
  ret(f);
  return f;
}

/* f16/bf16 transcendentals and division (printed through f32) next to the
 * ops that stay in the narrow type. */
static teeny_ir_func *sample_math_half(teeny_arena *a, teeny_dtype dt) {
  teeny_ir_func *f = teeny__ir_func_new(a, dt == TEENY_DT_F16 ? "math_f16" : "math_bf16");
  int x = teeny__ir_param_add(f, "x", teeny__type_ptr(dt));
  teeny_region *r = f->body;
  int xp = ptrs(f, r, x, range(f, r, 256));
  int v = load(f, r, xp, -1, -1);
  static const teeny_opcode ops[] = {IR_EXP, IR_TANH, IR_SQRT, IR_NEG, IR_FLOOR, IR_ABS};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(ops); i++)
    v = un(f, r, ops[i], v);
  v = bin(f, r, IR_DIV, v, bin(f, r, IR_REM, v, cflt(f, r, t1(dt, 256), 0.5)));
  store(f, r, xp, v, -1);
  ret(f);
  return f;
}

/* ---- control flow, scans, multi-operand reductions, shapes ------------------------------ */

/* if (n > 0) 1.0 else 2.0 */
static int build_if(teeny_ir_func *f, teeny_region *r, int n) {
  teeny_type fs = sc(TEENY_DT_F32);
  int c = cmp(f, r, CMP_GT, n, cint(f, r, sc(TEENY_DT_I32), 0));
  teeny_op *op = teeny__ir_op_add(f, r, IR_IF, L, &c, 1, &fs, 1);
  for (int k = 0; k < 2; k++) {
    op->regions[k] = teeny__ir_region_new(f);
    int v = cflt(f, op->regions[k], fs, k ? 2.0 : 1.0);
    teeny__ir_op_add(f, op->regions[k], IR_YIELD, L, &v, 1, NULL, 0);
  }
  op->nregions = 2;
  return op->res[0];
}

/* (i, acc) = (0, init); while (i < n) { i += 1; acc += acc; }  returns acc */
static int build_while(teeny_ir_func *f, teeny_region *r, int n, int init) {
  teeny_type i32 = sc(TEENY_DT_I32), at = teeny__ir_type(f, init);
  int zero = cint(f, r, i32, 0);
  teeny_op *op = teeny__ir_op_add(f, r, IR_WHILE, L, (int[]){zero, init}, 2,
                                  (teeny_type[]){i32, at}, 2);
  teeny_region *before = teeny__ir_region_new(f), *after = teeny__ir_region_new(f);
  int i = teeny__ir_region_arg_add(f, before, i32);
  int acc = teeny__ir_region_arg_add(f, before, at);
  int c = cmp(f, before, CMP_LT, i, n);
  teeny__ir_op_add(f, before, IR_CONDITION, L, (int[]){c, i, acc}, 3, NULL, 0);
  int j = teeny__ir_region_arg_add(f, after, i32);
  int acc2 = teeny__ir_region_arg_add(f, after, at);
  int j1 = bin(f, after, IR_ADD, j, cint(f, after, i32, 1));
  int acc3 = bin(f, after, IR_ADD, acc2, acc2);
  teeny__ir_op_add(f, after, IR_YIELD, L, (int[]){j1, acc3}, 2, NULL, 0);
  op->regions[0] = before;
  op->regions[1] = after;
  op->nregions = 2;
  return op->res[1];
}

/* inclusive prefix sum along axis 0 */
static int build_cumsum(teeny_ir_func *f, teeny_region *r, int x) {
  teeny_type t = teeny__ir_type(f, x), st = sc(t.dt);
  teeny_op *op = teeny__ir_op_add(f, r, IR_SCAN, L, &x, 1, &t, 1);
  teeny_region *body = teeny__ir_region_new(f);
  int a0 = teeny__ir_region_arg_add(f, body, st), b0 = teeny__ir_region_arg_add(f, body, st);
  int c = bin(f, body, IR_ADD, a0, b0);
  teeny__ir_op_add(f, body, IR_YIELD, L, &c, 1, NULL, 0);
  op->regions[0] = body;
  op->nregions = 1;
  return op->res[0];
}

/* argmax of x (1-D f32) with its index tile: a two-operand tt.reduce */
static int build_argmax(teeny_ir_func *f, teeny_region *r, int x, int idx) {
  teeny_type fs = sc(TEENY_DT_F32), is = sc(TEENY_DT_I32);
  teeny_op *op = teeny__ir_op_add(f, r, IR_REDUCE, L, (int[]){x, idx}, 2,
                                  (teeny_type[]){fs, is}, 2);
  teeny_region *b = teeny__ir_region_new(f);
  int av = teeny__ir_region_arg_add(f, b, fs), ai = teeny__ir_region_arg_add(f, b, is);
  int bv = teeny__ir_region_arg_add(f, b, fs), bi = teeny__ir_region_arg_add(f, b, is);
  int gt = cmp(f, b, CMP_GE, av, bv);
  int v = sel(f, b, gt, av, bv), i = sel(f, b, gt, ai, bi);
  teeny__ir_op_add(f, b, IR_YIELD, L, (int[]){v, i}, 2, NULL, 0);
  op->regions[0] = b;
  op->nregions = 1;
  return op->res[1];
}

static teeny_ir_func *sample_control(teeny_arena *a) {
  teeny_ir_func *f = teeny__ir_func_new(a, "control");
  int x = teeny__ir_param_add(f, "x", teeny__type_ptr(TEENY_DT_F32));
  int out = teeny__ir_param_add(f, "out", teeny__type_ptr(TEENY_DT_I32));
  int n = teeny__ir_param_add(f, "n", sc(TEENY_DT_I32));
  teeny_region *r = f->body;
  int offs = range(f, r, 512);
  int v = load(f, r, ptrs(f, r, x, offs), -1, -1);
  int k = build_if(f, r, n);
  v = bin(f, r, IR_MUL, v, to(f, r, IR_SPLAT, k, t1(TEENY_DT_F32, 512)));
  v = build_cumsum(f, r, build_while(f, r, n, v));
  int best = build_argmax(f, r, v, offs);
  /* shapes: [512] -> [16, 32] -> [32, 16] -> [32, 1, 16]-free round trip */
  int m = to(f, r, IR_RESHAPE, v, t2(TEENY_DT_F32, 16, 32));
  m = to(f, r, IR_TRANS, m, t2(TEENY_DT_F32, 32, 16));
  v = to(f, r, IR_RESHAPE, m, t1(TEENY_DT_F32, 512));
  store(f, r, ptrs(f, r, x, offs), v, -1);
  int np = axis_op(f, r, IR_NUM_PROGRAMS, 1);
  store(f, r, teeny__ir_binary(f, r, IR_ADDPTR, L, out, np, teeny__type_ptr(TEENY_DT_I32)),
        best, -1);
  ret(f);
  return f;
}

/* ---- atomics ----------------------------------------------------------------------------- */

static teeny_ir_func *sample_atomics(teeny_arena *a) {
  teeny_ir_func *f = teeny__ir_func_new(a, "atomics");
  int x = teeny__ir_param_add(f, "x", teeny__type_ptr(TEENY_DT_F32));
  int c = teeny__ir_param_add(f, "c", teeny__type_ptr(TEENY_DT_I32));
  int u = teeny__ir_param_add(f, "u", teeny__type_ptr(TEENY_DT_U32));
  int n = teeny__ir_param_add(f, "n", sc(TEENY_DT_I32));
  teeny_region *r = f->body;
  int offs = range(f, r, 128);
  int mask = cmp(f, r, CMP_LT, offs, to(f, r, IR_SPLAT, n, t1(TEENY_DT_I32, 128)));
  int xp = ptrs(f, r, x, offs);
  int v = cflt(f, r, t1(TEENY_DT_F32, 128), 1.0);
  int o1 = atomic(f, r, RMW_ADD, xp, v, mask);
  int o2 = atomic(f, r, RMW_MAX, xp, o1, mask);            /* float: split by sign */
  int o3 = atomic(f, r, RMW_MIN, x, cflt(f, r, sc(TEENY_DT_F32), -2.0), -1);
  int one = cint(f, r, sc(TEENY_DT_I32), 1);
  int i1 = atomic(f, r, RMW_ADD, c, one, -1);
  int i2 = atomic(f, r, RMW_MIN, c, i1, -1);
  int i3 = atomic(f, r, RMW_XCHG, c, i2, -1);
  int u1 = atomic(f, r, RMW_MAX, u, cint(f, r, sc(TEENY_DT_U32), 7), -1);
  teeny_type i32 = sc(TEENY_DT_I32);
  int cas = teeny__ir_op_add(f, r, IR_ATOMIC_CAS, L, (int[]){c, i3, one}, 3, &i32, 1)->res[0];
  int same = cmp(f, r, CMP_EQ, x, x);                      /* pointers compare as i64 */
  int null = teeny__ir_const(f, r, L, teeny__type_ptr(TEENY_DT_F32), (teeny_scalar){.u = 0});
  int np = sel(f, r, same, x, null);
  store(f, r, np, bin(f, r, IR_ADD, o3, cast(f, r, bin(f, r, IR_ADD, cas, cast(f, r, u1, TEENY_DT_I32)),
                                               TEENY_DT_F32)), -1);
  store(f, r, ptrs(f, r, x, offs), o2, mask);
  ret(f);
  return f;
}

/* ---- the list ------------------------------------------------------------------------------ */

/* Sample i (0, 1, ...) built in a, with a short name for messages and file
 * names; NULL past the last one. */
teeny_ir_func *teeny_test_mlir_sample(teeny_arena *a, int i, const char **name) {
  static const char *const names[] = {
      "vector_add_f32", "vector_add_f16", "softmax",  "row_sum_loop", "matmul_f16",
      "matmul_bf16",    "arith_i32",      "arith_u32", "casts",       "math",
      "control",        "atomics",        "math_f16", "math_bf16"};
  if (i < 0 || i >= (int)TEENY_ARRAY_LEN(names))
    return NULL;
  *name = names[i];
  switch (i) {
  case 0: return teeny_sample_vector_add(a, TEENY_DT_F32, 1024);
  case 1: return teeny_sample_vector_add(a, TEENY_DT_F16, 256);
  case 2: return teeny_sample_softmax(a, 128);
  case 3: return teeny_sample_row_sum_loop(a, 64);
  case 4: return teeny_sample_matmul(a, TEENY_DT_F16, 32, 32, 16);
  case 5: return teeny_sample_matmul(a, TEENY_DT_BF16, 64, 64, 32);
  case 6: return teeny_test_mlir_arith(a, TEENY_DT_I32);
  case 7: return teeny_test_mlir_arith(a, TEENY_DT_U32);
  case 8: return sample_casts(a);
  case 9: return sample_math(a);
  case 10: return sample_control(a);
  case 11: return sample_atomics(a);
  case 12: return sample_math_half(a, TEENY_DT_F16);
  default: return sample_math_half(a, TEENY_DT_BF16);
  }
}
