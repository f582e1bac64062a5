/*
 * tests/ir_samples.c — tile IR built by hand, for the tests of stages that
 * consume IR (verifier, MLIR printer, interpreter, code generator) so that
 * they do not depend on the front end.  Each builder mirrors a kernel in
 * examples/kernels/ and documents its parameters.
 */
#include <math.h>
#include <string.h>

#include "ir_samples.h"

/* ---- tiny builder helpers ---------------------------------------------------- */

static const teeny_loc L0 = {1, 1};

static teeny_type tile1(teeny_dtype dt, int n) {
  return teeny__type_tile(dt, 1, &n);
}

static teeny_type tile2(teeny_dtype dt, int m, int n) {
  int s[2] = {m, n};
  return teeny__type_tile(dt, 2, s);
}

static teeny_type ptile1(teeny_dtype pointee, int n) {
  teeny_type t = teeny__type_ptr(pointee);
  return teeny__type_with_shape(t, 1, &n);
}

static teeny_type ptile2(teeny_dtype pointee, int m, int n) {
  int s[2] = {m, n};
  return teeny__type_with_shape(teeny__type_ptr(pointee), 2, s);
}

static int ci32(teeny_ir_func *f, teeny_region *r, int64_t v) {
  teeny_scalar s = {.i = v};
  return teeny__ir_const(f, r, L0, teeny__type_scalar(TEENY_DT_I32), s);
}

static int cf32_tile(teeny_ir_func *f, teeny_region *r, teeny_type t, double v) {
  teeny_scalar s = {.f = v};
  return teeny__ir_const(f, r, L0, t, s);
}

static int splat(teeny_ir_func *f, teeny_region *r, int v, teeny_type t) {
  return teeny__ir_unary(f, r, IR_SPLAT, L0, v, t);
}

static int range(teeny_ir_func *f, teeny_region *r, int n) {
  teeny_type t = tile1(TEENY_DT_I32, n);
  teeny_op *op = teeny__ir_op_add(f, r, IR_MAKE_RANGE, L0, NULL, 0, &t, 1);
  op->start = 0;
  op->end = n;
  return op->res[0];
}

static int program_id(teeny_ir_func *f, teeny_region *r, int axis) {
  teeny_type t = teeny__type_scalar(TEENY_DT_I32);
  teeny_op *op = teeny__ir_op_add(f, r, IR_PROGRAM_ID, L0, NULL, 0, &t, 1);
  op->axis = axis;
  return op->res[0];
}

static int cmp(teeny_ir_func *f, teeny_region *r, teeny_cmp_pred p, int a, int b) {
  teeny_type t = teeny__type_with_dtype(teeny__ir_type(f, a), TEENY_DT_BOOL);
  teeny_op *op = teeny__ir_op_add(f, r, IR_CMP, L0, (int[]){a, b}, 2, &t, 1);
  op->pred = p;
  return op->res[0];
}

static int load(teeny_ir_func *f, teeny_region *r, int p, int mask, int other) {
  teeny_type pt = teeny__ir_type(f, p);
  teeny_type t = teeny__type_with_dtype(pt, pt.pointee);
  int args[3] = {p, mask, other};
  int n = other >= 0 ? 3 : mask >= 0 ? 2 : 1;
  return teeny__ir_op_add(f, r, IR_LOAD, L0, args, n, &t, 1)->res[0];
}

static void store(teeny_ir_func *f, teeny_region *r, int p, int v, int mask) {
  int args[3] = {p, v, mask};
  teeny__ir_op_add(f, r, IR_STORE, L0, args, mask >= 0 ? 3 : 2, NULL, 0);
}

static void ret(teeny_ir_func *f) {
  teeny__ir_op_add(f, f->body, IR_RETURN, L0, NULL, 0, NULL, 0);
}

/* reduce(x, axis) with a region applying `code` (IR_ADD, IR_MAX, ...) */
static int reduce(teeny_ir_func *f, teeny_region *r, int x, int axis,
                  teeny_opcode code) {
  teeny_type xt = teeny__ir_type(f, x);
  int shape[TEENY_MAX_RANK], k = 0;
  for (int d = 0; d < xt.rank; d++)
    if (d != axis)
      shape[k++] = xt.shape[d];
  teeny_type rt = teeny__type_with_shape(xt, k, shape);
  teeny_op *op = teeny__ir_op_add(f, r, IR_REDUCE, L0, &x, 1, &rt, 1);
  op->axis = axis;
  teeny_region *body = teeny__ir_region_new(f);
  teeny_type st = teeny__type_scalar(xt.dt);
  int a = teeny__ir_region_arg_add(f, body, st);
  int b = teeny__ir_region_arg_add(f, body, st);
  int c = teeny__ir_binary(f, body, code, L0, a, b, st);
  teeny__ir_op_add(f, body, IR_YIELD, L0, &c, 1, NULL, 0);
  op->regions[0] = body;
  op->nregions = 1;
  return op->res[0];
}

/* ---- samples ------------------------------------------------------------------------- */

teeny_ir_func *teeny_sample_vector_add(teeny_arena *a, teeny_dtype dt, int block) {
  teeny_ir_func *f = teeny__ir_func_new(a, "vector_add_entry_point");
  int pa = teeny__ir_param_add(f, "a_ptr", teeny__type_ptr(dt));
  int pb = teeny__ir_param_add(f, "b_ptr", teeny__type_ptr(dt));
  int po = teeny__ir_param_add(f, "out_ptr", teeny__type_ptr(dt));
  int n = teeny__ir_param_add(f, "n_elements", teeny__type_scalar(TEENY_DT_I32));
  teeny_region *r = f->body;
  teeny_type ti = tile1(TEENY_DT_I32, block);
  int pid = program_id(f, r, 0);
  int base = teeny__ir_binary(f, r, IR_MUL, L0, pid, ci32(f, r, block),
                              teeny__type_scalar(TEENY_DT_I32));
  int offs = teeny__ir_binary(f, r, IR_ADD, L0, splat(f, r, base, ti),
                              range(f, r, block), ti);
  int mask = cmp(f, r, CMP_LT, offs, splat(f, r, n, ti));
  teeny_type pt = ptile1(dt, block);
  int ap = teeny__ir_binary(f, r, IR_ADDPTR, L0, splat(f, r, pa, pt), offs, pt);
  int bp = teeny__ir_binary(f, r, IR_ADDPTR, L0, splat(f, r, pb, pt), offs, pt);
  int op = teeny__ir_binary(f, r, IR_ADDPTR, L0, splat(f, r, po, pt), offs, pt);
  teeny_type vt = tile1(dt, block);
  int zero = cf32_tile(f, r, vt, 0.0);
  int av = load(f, r, ap, mask, zero);
  int bv = load(f, r, bp, mask, zero);
  int sum = teeny__ir_binary(f, r, IR_ADD, L0, av, bv, vt);
  store(f, r, op, sum, mask);
  ret(f);
  return f;
}

teeny_ir_func *teeny_sample_softmax(teeny_arena *a, int block) {
  teeny_ir_func *f = teeny__ir_func_new(a, "softmax_entry_point");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  int px = teeny__ir_param_add(f, "x_ptr", teeny__type_ptr(TEENY_DT_F32));
  int py = teeny__ir_param_add(f, "y_ptr", teeny__type_ptr(TEENY_DT_F32));
  int ncols = teeny__ir_param_add(f, "n_cols", i32);
  int stride = teeny__ir_param_add(f, "stride", i32);
  teeny_region *r = f->body;
  teeny_type ti = tile1(TEENY_DT_I32, block), tf = tile1(TEENY_DT_F32, block);
  teeny_type pt = ptile1(TEENY_DT_F32, block);
  int row = program_id(f, r, 0);
  int rowoff = teeny__ir_binary(f, r, IR_MUL, L0, row, stride, i32);
  int xrow = teeny__ir_binary(f, r, IR_ADDPTR, L0, px, rowoff, teeny__type_ptr(TEENY_DT_F32));
  int yrow = teeny__ir_binary(f, r, IR_ADDPTR, L0, py, rowoff, teeny__type_ptr(TEENY_DT_F32));
  int offs = range(f, r, block);
  int mask = cmp(f, r, CMP_LT, offs, splat(f, r, ncols, ti));
  int xp = teeny__ir_binary(f, r, IR_ADDPTR, L0, splat(f, r, xrow, pt), offs, pt);
  int x = load(f, r, xp, mask, cf32_tile(f, r, tf, -INFINITY));
  int m = reduce(f, r, x, 0, IR_MAX);
  int d = teeny__ir_binary(f, r, IR_SUB, L0, x, splat(f, r, m, tf), tf);
  int e = teeny__ir_unary(f, r, IR_EXP, L0, d, tf);
  int s = reduce(f, r, e, 0, IR_ADD);
  int y = teeny__ir_binary(f, r, IR_DIV, L0, e, splat(f, r, s, tf), tf);
  int yp = teeny__ir_binary(f, r, IR_ADDPTR, L0, splat(f, r, yrow, pt), offs, pt);
  store(f, r, yp, y, mask);
  ret(f);
  return f;
}

teeny_ir_func *teeny_sample_row_sum_loop(teeny_arena *a, int block) {
  teeny_ir_func *f = teeny__ir_func_new(a, "row_sum_entry_point");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  teeny_type fptr = teeny__type_ptr(TEENY_DT_F32);
  int px = teeny__ir_param_add(f, "x_ptr", fptr);
  int po = teeny__ir_param_add(f, "out_ptr", fptr);
  int ncols = teeny__ir_param_add(f, "n_cols", i32);
  teeny_region *r = f->body;
  teeny_type ti = tile1(TEENY_DT_I32, block), tf = tile1(TEENY_DT_F32, block);
  teeny_type pt = ptile1(TEENY_DT_F32, block);
  int row = program_id(f, r, 0);
  int xrow = teeny__ir_binary(f, r, IR_ADDPTR, L0, px,
                              teeny__ir_binary(f, r, IR_MUL, L0, row, ncols, i32), fptr);
  int acc0 = cf32_tile(f, r, tf, 0.0);
  int lb = ci32(f, r, 0), step = ci32(f, r, block);
  teeny_op *loop = teeny__ir_op_add(f, r, IR_FOR, L0, (int[]){lb, ncols, step, acc0}, 4, &tf, 1);
  teeny_region *body = teeny__ir_region_new(f);
  int k = teeny__ir_region_arg_add(f, body, i32);
  int acc = teeny__ir_region_arg_add(f, body, tf);
  int offs = teeny__ir_binary(f, body, IR_ADD, L0, splat(f, body, k, ti), range(f, body, block), ti);
  int mask = cmp(f, body, CMP_LT, offs, splat(f, body, ncols, ti));
  int xp = teeny__ir_binary(f, body, IR_ADDPTR, L0, splat(f, body, xrow, pt), offs, pt);
  int x = load(f, body, xp, mask, -1);
  int acc2 = teeny__ir_binary(f, body, IR_ADD, L0, acc, x, tf);
  teeny__ir_op_add(f, body, IR_YIELD, L0, &acc2, 1, NULL, 0);
  loop->regions[0] = body;
  loop->nregions = 1;
  int total = reduce(f, r, loop->res[0], 0, IR_ADD);
  int op = teeny__ir_binary(f, r, IR_ADDPTR, L0, po, row, fptr);
  store(f, r, op, total, -1);
  ret(f);
  return f;
}

teeny_ir_func *teeny_sample_matmul(teeny_arena *a, teeny_dtype dt, int bm, int bn,
                                   int bk) {
  teeny_ir_func *f = teeny__ir_func_new(a, "matmul_entry_point");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  int pa = teeny__ir_param_add(f, "a_ptr", teeny__type_ptr(dt));
  int pb = teeny__ir_param_add(f, "b_ptr", teeny__type_ptr(dt));
  int pc = teeny__ir_param_add(f, "c_ptr", teeny__type_ptr(TEENY_DT_F32));
  int M = teeny__ir_param_add(f, "M", i32);
  int N = teeny__ir_param_add(f, "N", i32);
  int K = teeny__ir_param_add(f, "K", i32);
  teeny_region *r = f->body;
  /* one program per (bm x bn) tile of C, row-major A [M,K], B [K,N], C [M,N] */
  int pid_m = program_id(f, r, 0), pid_n = program_id(f, r, 1);
  teeny_type tm = tile1(TEENY_DT_I32, bm), tn = tile1(TEENY_DT_I32, bn);
  int rm = teeny__ir_binary(f, r, IR_ADD, L0,
                            splat(f, r, teeny__ir_binary(f, r, IR_MUL, L0, pid_m, ci32(f, r, bm), i32), tm),
                            range(f, r, bm), tm);
  int rn = teeny__ir_binary(f, r, IR_ADD, L0,
                            splat(f, r, teeny__ir_binary(f, r, IR_MUL, L0, pid_n, ci32(f, r, bn), i32), tn),
                            range(f, r, bn), tn);
  teeny_type acct = tile2(TEENY_DT_F32, bm, bn);
  int acc0 = cf32_tile(f, r, acct, 0.0);
  int lb = ci32(f, r, 0), step = ci32(f, r, bk);
  teeny_op *loop = teeny__ir_op_add(f, r, IR_FOR, L0, (int[]){lb, K, step, acc0}, 4, &acct, 1);
  teeny_region *b = teeny__ir_region_new(f);
  int k = teeny__ir_region_arg_add(f, b, i32);
  int acc = teeny__ir_region_arg_add(f, b, acct);
  teeny_type tk = tile1(TEENY_DT_I32, bk);
  int rk = teeny__ir_binary(f, b, IR_ADD, L0, splat(f, b, k, tk), range(f, b, bk), tk);
  /* a tile: rows rm, cols rk; offsets rm*K + rk */
  teeny_type mk = tile2(TEENY_DT_I32, bm, bk), kn = tile2(TEENY_DT_I32, bk, bn);
  teeny_type m1 = tile2(TEENY_DT_I32, bm, 1), k1n = tile2(TEENY_DT_I32, 1, bk);
  teeny_op *e;
  e = teeny__ir_op_add(f, b, IR_EXPAND_DIMS, L0, &rm, 1, &m1, 1); e->axis = 1;
  int rm2 = e->res[0];
  e = teeny__ir_op_add(f, b, IR_EXPAND_DIMS, L0, &rk, 1, &k1n, 1); e->axis = 0;
  int rk2 = e->res[0];
  int rowoff = teeny__ir_binary(f, b, IR_MUL, L0, rm2, splat(f, b, K, m1), m1);
  int aoff = teeny__ir_binary(f, b, IR_ADD, L0,
                              teeny__ir_unary(f, b, IR_BROADCAST, L0, rowoff, mk),
                              teeny__ir_unary(f, b, IR_BROADCAST, L0, rk2, mk), mk);
  int amask = teeny__ir_binary(f, b, IR_AND, L0,
                               teeny__ir_unary(f, b, IR_BROADCAST, L0,
                                               cmp(f, b, CMP_LT, rm2, splat(f, b, M, m1)),
                                               teeny__type_with_dtype(mk, TEENY_DT_BOOL)),
                               teeny__ir_unary(f, b, IR_BROADCAST, L0,
                                               cmp(f, b, CMP_LT, rk2, splat(f, b, K, k1n)),
                                               teeny__type_with_dtype(mk, TEENY_DT_BOOL)),
                               teeny__type_with_dtype(mk, TEENY_DT_BOOL));
  teeny_type apt = ptile2(dt, bm, bk);
  int ap = teeny__ir_binary(f, b, IR_ADDPTR, L0, splat(f, b, pa, apt), aoff, apt);
  int av = load(f, b, ap, amask, cf32_tile(f, b, tile2(dt, bm, bk), 0.0));
  /* b tile: rows rk, cols rn; offsets rk*N + rn */
  teeny_type k1 = tile2(TEENY_DT_I32, bk, 1), n1 = tile2(TEENY_DT_I32, 1, bn);
  e = teeny__ir_op_add(f, b, IR_EXPAND_DIMS, L0, &rk, 1, &k1, 1); e->axis = 1;
  int rkc = e->res[0];
  e = teeny__ir_op_add(f, b, IR_EXPAND_DIMS, L0, &rn, 1, &n1, 1); e->axis = 0;
  int rnr = e->res[0];
  int boff = teeny__ir_binary(f, b, IR_ADD, L0,
                              teeny__ir_unary(f, b, IR_BROADCAST, L0,
                                              teeny__ir_binary(f, b, IR_MUL, L0, rkc, splat(f, b, N, k1), k1), kn),
                              teeny__ir_unary(f, b, IR_BROADCAST, L0, rnr, kn), kn);
  teeny_type knb = teeny__type_with_dtype(kn, TEENY_DT_BOOL);
  int bmask = teeny__ir_binary(f, b, IR_AND, L0,
                               teeny__ir_unary(f, b, IR_BROADCAST, L0, cmp(f, b, CMP_LT, rkc, splat(f, b, K, k1)), knb),
                               teeny__ir_unary(f, b, IR_BROADCAST, L0, cmp(f, b, CMP_LT, rnr, splat(f, b, N, n1)), knb),
                               knb);
  teeny_type bpt = ptile2(dt, bk, bn);
  int bp = teeny__ir_binary(f, b, IR_ADDPTR, L0, splat(f, b, pb, bpt), boff, bpt);
  int bv = load(f, b, bp, bmask, cf32_tile(f, b, tile2(dt, bk, bn), 0.0));
  int acc2 = teeny__ir_op_add(f, b, IR_DOT, L0, (int[]){av, bv, acc}, 3, &acct, 1)->res[0];
  teeny__ir_op_add(f, b, IR_YIELD, L0, &acc2, 1, NULL, 0);
  loop->regions[0] = b;
  loop->nregions = 1;
  /* store C */
  teeny_type mn = tile2(TEENY_DT_I32, bm, bn);
  e = teeny__ir_op_add(f, r, IR_EXPAND_DIMS, L0, &rm, 1, &m1, 1); e->axis = 1;
  int cm = e->res[0];
  e = teeny__ir_op_add(f, r, IR_EXPAND_DIMS, L0, &rn, 1, &n1, 1); e->axis = 0;
  int cn = e->res[0];
  int coff = teeny__ir_binary(f, r, IR_ADD, L0,
                              teeny__ir_unary(f, r, IR_BROADCAST, L0,
                                              teeny__ir_binary(f, r, IR_MUL, L0, cm, splat(f, r, N, m1), m1), mn),
                              teeny__ir_unary(f, r, IR_BROADCAST, L0, cn, mn), mn);
  teeny_type mnb = teeny__type_with_dtype(mn, TEENY_DT_BOOL);
  int cmask = teeny__ir_binary(f, r, IR_AND, L0,
                               teeny__ir_unary(f, r, IR_BROADCAST, L0, cmp(f, r, CMP_LT, cm, splat(f, r, M, m1)), mnb),
                               teeny__ir_unary(f, r, IR_BROADCAST, L0, cmp(f, r, CMP_LT, cn, splat(f, r, N, n1)), mnb),
                               mnb);
  teeny_type cpt = ptile2(TEENY_DT_F32, bm, bn);
  int cp = teeny__ir_binary(f, r, IR_ADDPTR, L0, splat(f, r, pc, cpt), coff, cpt);
  store(f, r, cp, loop->res[0], cmask);
  ret(f);
  return f;
}
