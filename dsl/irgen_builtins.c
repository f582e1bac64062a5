/*
 * dsl/irgen_builtins.c — the builtin functions of the kernel language
 * (dsl/builtins.def, docs/dsl.md §5) lowered to tile IR.
 *
 * Shape-determining arguments (axes, sizes, arange bounds) must be
 * compile-time constants; tile sizes must be powers of two and tiles at
 * most TEENY_MAX_TILE_NUMEL elements.  Reductions, scans and argmax build
 * their combine regions here; reduce/scan with a helper inline the helper
 * into the region.
 */
#include <math.h>
#include <string.h>

#include "dsl/irgen.h"

static gval arg(gen *g, const teeny_expr *e, int i) {
  return teeny__gen_expr(g, e->args[i]);
}

static bool pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static void check_shape(gen *g, teeny_loc loc, int rank, const int *shape,
                        const char *what) {
  long numel = 1;
  for (int i = 0; i < rank; i++)
    numel *= shape[i];
  if (numel > TEENY_MAX_TILE_NUMEL)
    teeny__gen_fail(g, loc, "%s: a tile of %ld elements exceeds the limit of %d", what,
                    numel, TEENY_MAX_TILE_NUMEL);
}

/* Read constant dims args[first..first+n) into shape. */
static void const_dims(gen *g, const teeny_expr *e, int first, int n, int *shape,
                       const char *name) {
  for (int i = 0; i < n; i++) {
    const teeny_expr *a = e->args[first + i];
    int64_t d = teeny__gen_const_int(g, a, "a tile size");
    if (!pow2(d) || d > TEENY_MAX_TILE_NUMEL)
      teeny__gen_fail(g, a->loc, "tile size %lld is not a power of two (in %s)",
                      (long long)d, name);
    shape[i] = (int)d;
  }
  check_shape(g, e->loc, n, shape, name);
}

static int const_axis(gen *g, const teeny_expr *e, int i, int rank, const char *name) {
  int64_t a = teeny__gen_const_int(g, e->args[i], "an axis");
  if (a < -rank || a >= rank)
    teeny__gen_fail(g, e->args[i]->loc, "axis %lld is out of range for %s of rank %d",
                    (long long)a, name, rank);
  return (int)(a < 0 ? a + rank : a);
}

static teeny_dtype dtype_arg(gen *g, const teeny_expr *e, int i) {
  const teeny_expr *a = e->args[i];
  if (a->kind != EX_NAME || a->sym != SYM_DTYPE || !a->type)
    teeny__gen_fail(g, a->loc, "'%s' needs a dtype as argument %d (e.g. f32 or D)",
                    e->name, i + 1);
  if (a->type->is_ptr || a->type->is_tile)
    teeny__gen_fail(g, a->loc, "'%s' needs an element dtype here", e->name);
  return teeny__tyspec_dtype(a->type, g->b);
}

static gval need_tile(gen *g, const teeny_expr *e, int i, const char *name) {
  gval x = arg(g, e, i);
  if (x.type.rank == 0 || x.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->args[i]->loc, "%s needs a tile, not %s", name,
                    teeny__gen_tstr(g, x.type));
  return x;
}

static gval shape_op(gen *g, teeny_opcode code, gval x, teeny_type rt, int axis,
                     teeny_loc loc) {
  if (x.is_const) {
    x.type = rt;
    return x;
  }
  gval r = teeny__gen_op(g, code, &x, 1, rt, loc);
  g->f->values[r.id].def->axis = axis;
  return r;
}

static gval expand(gen *g, gval x, int axis, teeny_loc loc, const char *name) {
  if (x.type.rank + 1 > TEENY_MAX_RANK)
    teeny__gen_fail(g, loc, "%s would make a tile of rank %d (at most %d)", name,
                    x.type.rank + 1, TEENY_MAX_RANK);
  int s[TEENY_MAX_RANK], k = 0;
  for (int i = 0; i <= x.type.rank; i++)
    s[i] = i == axis ? 1 : x.type.shape[k++];
  return shape_op(g, IR_EXPAND_DIMS, x, teeny__type_with_shape(x.type, x.type.rank + 1, s),
                  axis, loc);
}

/* ---- programs, ranges, constructors --------------------------------------- */

static gval gen_program(gen *g, const teeny_expr *e, teeny_opcode code) {
  int64_t axis = teeny__gen_const_int(g, e->args[0], "the grid axis");
  if (axis < 0 || axis > 2)
    teeny__gen_fail(g, e->args[0]->loc, "grid axis must be 0, 1 or 2, not %lld",
                    (long long)axis);
  teeny_type t = teeny__type_scalar(TEENY_DT_I32);
  gval r = teeny__gen_op(g, code, NULL, 0, t, e->loc);
  g->f->values[r.id].def->axis = (int)axis;
  return r;
}

static gval gen_arange(gen *g, const teeny_expr *e) {
  int64_t s = teeny__gen_const_int(g, e->args[0], "arange's start");
  int64_t t = teeny__gen_const_int(g, e->args[1], "arange's end");
  int64_t n = t - s;
  if (s < INT32_MIN || t > INT32_MAX || n <= 0)
    teeny__gen_fail(g, e->loc, "arange(%lld, %lld) is empty or out of i32 range",
                    (long long)s, (long long)t);
  if (!pow2(n))
    teeny__gen_fail(g, e->loc, "tile size %lld is not a power of two (arange(%lld, %lld))",
                    (long long)n, (long long)s, (long long)t);
  if (n > TEENY_MAX_TILE_NUMEL)
    teeny__gen_fail(g, e->loc, "arange: a tile of %lld elements exceeds the limit of %d",
                    (long long)n, TEENY_MAX_TILE_NUMEL);
  int shape = (int)n;
  teeny_type rt = teeny__type_tile(TEENY_DT_I32, 1, &shape);
  gval r = teeny__gen_op(g, IR_MAKE_RANGE, NULL, 0, rt, e->loc);
  teeny_op *op = g->f->values[r.id].def;
  op->start = (int)s;
  op->end = (int)t;
  return r;
}

static gval gen_full(gen *g, const teeny_expr *e, bool zeros) {
  teeny_dtype dt = dtype_arg(g, e, 0);
  int first = zeros ? 1 : 2;
  int shape[TEENY_MAX_RANK];
  const_dims(g, e, first, e->nargs - first, shape, e->name);
  teeny_type t = teeny__type_tile(dt, e->nargs - first, shape);
  gval v = zeros ? teeny__gv_weak_int(0) : arg(g, e, 1);
  if (v.type.rank != 0 || v.type.dt == TEENY_DT_PTR || v.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->args[1]->loc, "full's value must be a number, not %s",
                    teeny__gen_tstr(g, v.type));
  v = teeny__gen_convert(g, v, dt, e->loc);
  return teeny__gen_broadcast(g, v, t.rank, t.shape, e->loc);
}

/* ---- shape ------------------------------------------------------------------------ */

static gval gen_colrow(gen *g, const teeny_expr *e, int axis) {
  gval x = need_tile(g, e, 0, e->name);
  if (x.type.rank != 1)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs a 1-D tile, not %s", e->name,
                    teeny__gen_tstr(g, x.type));
  return expand(g, x, axis, e->loc, e->name);
}

static gval gen_expand_dims(gen *g, const teeny_expr *e) {
  gval x = arg(g, e, 0);
  int axis = const_axis(g, e, 1, x.type.rank + 1, "expand_dims");
  if (x.type.rank == 0)
    teeny__gen_fail(g, e->args[0]->loc, "expand_dims needs a tile; use full() for scalars");
  return expand(g, x, axis, e->loc, "expand_dims");
}

static gval gen_broadcast_to(gen *g, const teeny_expr *e) {
  gval x = arg(g, e, 0);
  int shape[TEENY_MAX_RANK];
  const_dims(g, e, 1, e->nargs - 1, shape, "broadcast_to");
  if (x.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->loc, "cannot broadcast a void value");
  return teeny__gen_broadcast(g, x, e->nargs - 1, shape, e->loc);
}

static gval gen_reshape(gen *g, const teeny_expr *e) {
  gval x = need_tile(g, e, 0, e->name);
  int shape[TEENY_MAX_RANK];
  const_dims(g, e, 1, e->nargs - 1, shape, e->name);
  teeny_type rt = teeny__type_with_shape(x.type, e->nargs - 1, shape);
  if (teeny__type_numel(rt) != teeny__type_numel(x.type))
    teeny__gen_fail(g, e->loc, "%s of %s to %s changes the element count", e->name,
                    teeny__gen_tstr(g, x.type), teeny__gen_tstr(g, rt));
  if (teeny__type_eq(rt, x.type))
    return x;
  return shape_op(g, IR_RESHAPE, x, rt, 0, e->loc);
}

/* x with its dims permuted: result dim i is x's dim perm[i] (Triton's
 * tt.trans order); the identity is x itself. */
static gval permute_of(gen *g, gval x, const int *perm, teeny_loc loc) {
  int s[TEENY_MAX_RANK];
  bool ident = true;
  for (int i = 0; i < x.type.rank; i++) {
    s[i] = x.type.shape[perm[i]];
    ident &= perm[i] == i;
  }
  if (ident)
    return x;
  gval r = shape_op(g, IR_TRANS, x, teeny__type_with_shape(x.type, x.type.rank, s), 0, loc);
  if (!x.is_const)
    for (int i = 0; i < x.type.rank; i++)
      g->f->values[r.id].def->perm[i] = (signed char)perm[i];
  return r;
}

/* Constant dims args[first..] of e as a permutation of x's axes. */
static void perm_args(gen *g, const teeny_expr *e, int first, gval x, int *d, const char *name) {
  if (e->nargs - first != x.type.rank)
    teeny__gen_fail(g, e->loc, "%s of %s needs %d dims, got %d", name, teeny__gen_tstr(g, x.type),
                    x.type.rank, e->nargs - first);
  bool seen[TEENY_MAX_RANK] = {false};
  for (int i = 0; i < x.type.rank; i++) {
    d[i] = const_axis(g, e, i + first, x.type.rank, name);
    if (seen[d[i]])
      teeny__gen_fail(g, e->args[i + first]->loc, "%s's dims must be a permutation: %d twice",
                      name, d[i]);
    seen[d[i]] = true;
  }
}

/* permute(x, dims...): dims a permutation of 0 .. rank-1 (Triton's
 * tl.permute): result dim i is x's dim dims[i]. */
static gval gen_permute(gen *g, const teeny_expr *e) {
  gval x = need_tile(g, e, 0, "permute");
  int d[TEENY_MAX_RANK];
  perm_args(g, e, 1, x, d, "permute");
  return permute_of(g, x, d, e->loc);
}

/* trans(x): a 2-D transpose; trans(x, dims...) is permute (Triton's
 * tl.trans takes both forms). */
static gval gen_trans(gen *g, const teeny_expr *e) {
  gval x = need_tile(g, e, 0, "trans");
  int d[TEENY_MAX_RANK] = {1, 0};
  if (e->nargs > 1)
    perm_args(g, e, 1, x, d, "trans");
  else if (x.type.rank != 2)
    teeny__gen_fail(g, e->args[0]->loc, "trans(x) needs a 2-D tile, not %s; give the order of "
                    "the dims for other ranks (trans(x, 0, 2, 1))",
                    teeny__gen_tstr(g, x.type));
  return permute_of(g, x, d, e->loc);
}

/* ---- joining -------------------------------------------------------------------------
 * join, interleave, cat and ravel are built from the shape ops above and
 * a select, so the interpreter, the code generator and the .mlir need
 * nothing new: join(a, b) selects along a new minor axis of 2 between a
 * and b broadcast to it; interleave reshapes that to one axis; cat
 * flattens both, joins, transposes (a's elements first) and reshapes. */

static void unify(gen *g, gval *vals, int n, teeny_loc loc, const char *name);

/* c ? a : b element-wise, the three broadcast to one shape (a and b of one
 * dtype already). */
static gval select_of(gen *g, gval c, gval a, gval b, teeny_loc loc, const char *name) {
  gval v[3] = {c, a, b};
  unify(g, v, 3, loc, name);
  return teeny__gen_op(g, IR_SELECT, v, 3, v[1].type, loc);
}

/* Argument i of e, a tile of numbers (not pointers). */
static gval need_numbers(gen *g, const teeny_expr *e, int i, const char *name) {
  gval x = need_tile(g, e, i, name);
  if (x.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, e->args[i]->loc, "%s takes numbers, not %s", name,
                    teeny__gen_tstr(g, x.type));
  return x;
}

/* A non-constant [n] tile: 0, 1, ..., n-1. */
static gval range_of(gen *g, int n, teeny_loc loc) {
  teeny_type rt = teeny__type_tile(TEENY_DT_I32, 1, &n);
  gval r = teeny__gen_op(g, IR_MAKE_RANGE, NULL, 0, rt, loc);
  teeny_op *op = g->f->values[r.id].def;
  op->start = 0;
  op->end = n;
  return r;
}

/* e's two operands as numbers of one dtype, broadcast to one shape. */
static void two_numbers(gen *g, const teeny_expr *e, gval *ab) {
  for (int i = 0; i < 2; i++) {
    ab[i] = arg(g, e, i);
    if (ab[i].type.dt == TEENY_DT_PTR || ab[i].type.dt == TEENY_DT_VOID)
      teeny__gen_fail(g, e->args[i]->loc, "%s joins numbers, not %s", e->name,
                      teeny__gen_tstr(g, ab[i].type));
  }
  teeny_dtype dt = teeny__gen_promote(g, ab[0], ab[1], e->loc, e->name);
  for (int i = 0; i < 2; i++)
    ab[i] = teeny__gen_operand(g, ab[i], dt, e->loc);
  unify(g, ab, 2, e->loc, e->name);
}

static void check_numel(gen *g, teeny_type t, long factor, teeny_loc loc, const char *name) {
  if ((long)teeny__type_numel(t) * factor > TEENY_MAX_TILE_NUMEL)
    teeny__gen_fail(g, loc, "%s: a tile of %ld elements exceeds the limit of %d", name,
                    (long)teeny__type_numel(t) * factor, TEENY_MAX_TILE_NUMEL);
}

/* [S...] and [S...] -> [S..., 2]. */
static gval join_values(gen *g, gval a, gval b, teeny_loc loc, const char *name) {
  if (a.type.rank >= TEENY_MAX_RANK)
    teeny__gen_fail(g, loc, "%s of %s tiles would make a tile of rank %d (at most %d)", name,
                    teeny__gen_tstr(g, a.type), a.type.rank + 1, TEENY_MAX_RANK);
  check_numel(g, a.type, 2, loc, name);
  gval first = teeny__gen_binop(g, OP_EQ, range_of(g, 2, loc), teeny__gv_weak_int(0), loc);
  if (a.type.rank >= 1) {
    a = expand(g, a, a.type.rank, loc, name);
    b = expand(g, b, b.type.rank, loc, name);
    int s[TEENY_MAX_RANK];
    for (int i = 0; i < a.type.rank; i++)
      s[i] = i == a.type.rank - 1 ? 2 : 1;
    first = shape_op(g, IR_RESHAPE, first, teeny__type_with_shape(first.type, a.type.rank, s), 0,
                     loc);
  }
  return select_of(g, first, a, b, loc, name);
}

/* i along axis of a tile of this rank and shape (0 .. shape[axis]-1,
 * broadcast over the other dims), not a constant. */
static gval range_along(gen *g, int rank, const int *shape, int axis, teeny_loc loc) {
  gval i = range_of(g, shape[axis], loc);
  if (rank > 1) {
    int s[TEENY_MAX_RANK];
    for (int d = 0; d < rank; d++)
      s[d] = d == axis ? shape[axis] : 1;
    i = shape_op(g, IR_RESHAPE, i, teeny__type_with_shape(i.type, rank, s), 0, loc);
  }
  return teeny__gen_broadcast(g, i, rank, shape, loc);
}

static gval flatten(gen *g, gval x, teeny_loc loc) {
  if (x.type.rank <= 1)
    return x;
  int n = (int)teeny__type_numel(x.type);
  return shape_op(g, IR_RESHAPE, x, teeny__type_with_shape(x.type, 1, &n), 0, loc);
}

static gval gen_join(gen *g, const teeny_expr *e) {
  gval ab[2];
  two_numbers(g, e, ab);
  return join_values(g, ab[0], ab[1], e->loc, "join");
}

static gval gen_interleave(gen *g, const teeny_expr *e) {
  gval ab[2];
  two_numbers(g, e, ab);
  if (ab[0].type.rank == 0)
    teeny__gen_fail(g, e->loc, "interleave needs tiles, not two scalars (join makes a [2])");
  teeny_type t = ab[0].type;
  gval j = join_values(g, ab[0], ab[1], e->loc, "interleave");
  t.shape[t.rank - 1] *= 2; /* along the last axis: [.., N] to [.., 2N] */
  return shape_op(g, IR_RESHAPE, j, t, 0, e->loc);
}

static gval gen_cat(gen *g, const teeny_expr *e) {
  gval ab[2];
  for (int i = 0; i < 2; i++)
    ab[i] = need_tile(g, e, i, "cat");
  if (!teeny__type_eq(teeny__type_with_dtype(ab[0].type, TEENY_DT_I32),
                      teeny__type_with_dtype(ab[1].type, TEENY_DT_I32)))
    teeny__gen_fail(g, e->loc, "cat needs two tiles of one shape, not %s and %s",
                    teeny__gen_tstr(g, ab[0].type), teeny__gen_tstr(g, ab[1].type));
  two_numbers(g, e, ab);
  teeny_type t = ab[0].type;
  gval j = join_values(g, flatten(g, ab[0], e->loc), flatten(g, ab[1], e->loc), e->loc, "cat");
  int s[2] = {2, j.type.shape[0]};
  gval r = shape_op(g, IR_TRANS, j, teeny__type_with_shape(j.type, 2, s), 0, e->loc);
  int out[TEENY_MAX_RANK];
  for (int i = 0; i < t.rank; i++)
    out[i] = i == 0 ? 2 * t.shape[0] : t.shape[i];
  return shape_op(g, IR_RESHAPE, r, teeny__type_with_shape(r.type, t.rank, out), 0, e->loc);
}

static gval gen_ravel(gen *g, const teeny_expr *e) {
  return flatten(g, need_tile(g, e, 0, "ravel"), e->loc);
}

/* gather(src, index, axis): index's shape, out[.., i, ..] = src[.., index[..,
 * i, ..], ..] along axis (Triton's tl.gather); index has src's rank and
 * src's dims off the axis; an index out of [0, src's dim) gives 0.  A
 * 64-bit index is range-checked before it narrows to the op's i32. */
/* Integer indices as the i32 the IR ops take, -1 where a 64-bit one is
 * outside [0, n) (narrower ones convert as they are: a u32 past 2^31 turns
 * negative, which is out of range too). */
static gval narrow_index(gen *g, gval idx, int n, teeny_loc loc, const char *name) {
  gval i32 = teeny__gen_convert(g, idx, TEENY_DT_I32, loc);
  if (teeny__dt_bits(idx.type.dt) != 64)
    return i32;
  gval ok = teeny__gen_binop(g, OP_LOGAND,
                             teeny__gen_binop(g, OP_GE, idx, teeny__gv_weak_int(0), loc),
                             teeny__gen_binop(g, OP_LT, idx, teeny__gv_int(idx.type.dt, n), loc),
                             loc);
  return select_of(g, ok, i32, teeny__gv_int(TEENY_DT_I32, -1), loc, name);
}

static gval gather_values(gen *g, gval src, gval idx, int axis, teeny_loc loc) {
  idx = narrow_index(g, idx, src.type.shape[axis], loc, "gather");
  gval a[2] = {src, idx};
  gval r = teeny__gen_op(g, IR_GATHER, a, 2, teeny__type_with_dtype(idx.type, src.type.dt), loc);
  g->f->values[r.id].def->axis = axis;
  return r;
}

static gval gen_gather(gen *g, const teeny_expr *e) {
  gval src = need_numbers(g, e, 0, "gather"), idx = need_tile(g, e, 1, "gather");
  if (!teeny__dt_is_int(idx.type.dt))
    teeny__gen_fail(g, e->args[1]->loc, "gather's index must be integers, not %s",
                    teeny__gen_tstr(g, idx.type));
  int axis = const_axis(g, e, 2, src.type.rank, "gather");
  if (idx.type.rank != src.type.rank)
    teeny__gen_fail(g, e->loc, "gather's index %s must have the rank of %s",
                    teeny__gen_tstr(g, idx.type), teeny__gen_tstr(g, src.type));
  for (int d = 0; d < src.type.rank; d++)
    if (d != axis && idx.type.shape[d] != src.type.shape[d])
      teeny__gen_fail(g, e->loc, "gather's index %s must match %s off axis %d",
                      teeny__gen_tstr(g, idx.type), teeny__gen_tstr(g, src.type), axis);
  if (src.is_const) /* every element alike: gather picks the same value */
    src = teeny__gen_broadcast(g, teeny__gen_operand(g, src, src.type.dt, e->loc), src.type.rank,
                               src.type.shape, e->loc);
  return gather_values(g, src, idx, axis, e->loc);
}

/* flip(x [, axis]): x reversed along axis (default the last; Triton's
 * tl.flip), a gather with index n-1-i. */
static gval gen_flip(gen *g, const teeny_expr *e) {
  gval x = need_numbers(g, e, 0, "flip");
  int axis = e->nargs == 2 ? const_axis(g, e, 1, x.type.rank, "flip") : x.type.rank - 1;
  int n = x.type.shape[axis];
  gval rev = teeny__gen_binop(g, OP_SUB, teeny__gv_int(TEENY_DT_I32, n - 1),
                              range_along(g, x.type.rank, x.type.shape, axis, e->loc), e->loc);
  return gather_values(g, x, rev, axis, e->loc);
}

/* A struct value of the type named by e's argument i from n leaf values,
 * each implicitly converted to its field's dtype (split, randint4x). */
gval teeny__gen_struct_of(gen *g, const teeny_expr *e, int i, gval *vals, int n) {
  const teeny_struct *st = teeny__tyspec_struct(g->prog, e->args[i]->type);
  if (!st || st->nleaves != n)
    teeny__gen_fail(g, e->args[i]->loc, "internal error: %s's result type", e->name);
  gval *leaves = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)n);
  for (int k = 0; k < n; k++) {
    const char *what = teeny__arena_printf(g->cx->arena, "use as field %s of %s", st->leaf_name[k],
                                           st->name);
    leaves[k] = teeny__gen_implicit(g, vals[k], teeny__tyspec_dtype(st->leaf_type[k], g->b),
                                    e->loc, what);
  }
  return teeny__gv_struct(st, leaves);
}

/* split(x, S): x [..., 2] as two [...] tiles, x[..., 0] and x[..., 1]
 * (Triton's tl.split), in a struct of type S. */
static gval gen_split(gen *g, const teeny_expr *e) {
  gval x = need_numbers(g, e, 0, "split");
  int last = x.type.rank - 1;
  if (x.type.rank < 2 || x.type.shape[last] != 2)
    teeny__gen_fail(g, e->args[0]->loc, "split needs a tile whose last dim is 2 ([N, 2], "
                    "[M, N, 2], ...), not %s", teeny__gen_tstr(g, x.type));
  gval half[2];
  for (int k = 0; k < 2; k++) {
    int s[TEENY_MAX_RANK];
    for (int d = 0; d < x.type.rank; d++)
      s[d] = d == last ? 1 : x.type.shape[d];
    gval idx = teeny__gen_broadcast(g, teeny__gv_int(TEENY_DT_I32, k), x.type.rank, s, e->loc);
    gval col = gather_values(g, x, idx, last, e->loc);
    half[k] = shape_op(g, IR_RESHAPE, col, teeny__type_with_shape(col.type, last, s), 0, e->loc);
  }
  return teeny__gen_struct_of(g, e, 1, half, 2);
}

/* sort(x [, descending]): x's last axis sorted (each row of a 2-D tile;
 * Triton's tl.sort), ascending unless `descending` (a constant bool) is
 * true.  A bitonic network of gathers and selects, so the interpreter and
 * the GPU run the same comparisons: log2(n) (log2(n) + 1) / 2 steps, each
 * comparing every element with its partner i ^ stride and taking the
 * partner's value where the pair is out of order.  Both ends of a pair make
 * the same decision, so the result is always a permutation of x; floats
 * order NaN after everything, and -0 and +0 as equals. */
static gval sort_greater(gen *g, gval a, gval b, teeny_loc loc) {
  gval gt = teeny__gen_binop(g, OP_GT, a, b, loc);
  if (!teeny__dt_is_float(a.type.dt))
    return gt;
  gval an = teeny__gen_binop(g, OP_NE, a, a, loc), bn = teeny__gen_binop(g, OP_NE, b, b, loc);
  gval nan_last = teeny__gen_binop(g, OP_LOGAND, an, teeny__gen_binop(g, OP_EQ, bn, teeny__gv_bool(false), loc),
                                   loc);
  return teeny__gen_binop(g, OP_LOGOR, gt, nan_last, loc);
}

static gval gen_sort(gen *g, const teeny_expr *e) {
  gval x = need_numbers(g, e, 0, "sort");
  bool descending = false;
  if (e->nargs == 2) {
    gval d = arg(g, e, 1);
    if (!d.is_const || d.type.rank != 0)
      teeny__gen_fail(g, e->args[1]->loc, "sort's 'descending' must be a constant bool");
    descending = d.c.i != 0;
  }
  if (x.is_const)
    return x;
  teeny_dtype dt = x.type.dt;
  if (dt == TEENY_DT_BOOL) /* compare as integers; the values stay bools */
    x = teeny__gen_convert(g, x, TEENY_DT_U8, e->loc);
  int axis = x.type.rank - 1, n = x.type.shape[axis];
  gval i = range_along(g, x.type.rank, x.type.shape, axis, e->loc);
  for (int size = 2; size <= n; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      gval p = gather_values(g, x, teeny__gen_binop(g, OP_BITXOR, i, teeny__gv_weak_int(stride), e->loc),
                             axis, e->loc);
      gval lower = teeny__gen_binop(g, OP_EQ, teeny__gen_binop(g, OP_BITAND, i, teeny__gv_weak_int(stride), e->loc),
                                    teeny__gv_weak_int(0), e->loc);
      /* blocks of `size` alternate in direction, up to the last merge */
      gval up = teeny__gen_binop(g, OP_EQ, teeny__gen_binop(g, OP_BITAND, i, teeny__gv_weak_int(size), e->loc),
                                 teeny__gv_weak_int(0), e->loc);
      if (descending)
        up = teeny__gen_binop(g, OP_EQ, up, teeny__gv_bool(false), e->loc);
      gval a = select_of(g, lower, x, p, e->loc, "sort");
      gval b = select_of(g, lower, p, x, e->loc, "sort");
      gval swap = select_of(g, up, sort_greater(g, a, b, e->loc), sort_greater(g, b, a, e->loc),
                            e->loc, "sort");
      x = select_of(g, swap, p, x, e->loc, "sort");
    }
  return dt == TEENY_DT_BOOL ? teeny__gen_convert(g, x, TEENY_DT_BOOL, e->loc) : x;
}

/* histogram(x, bins [, mask]): i32 [bins], the count of x's elements equal
 * to each of 0 .. bins-1.  Elements out of that range, or masked off, are
 * not counted: they reach the IR op as -1 (narrow_index: no dtype wraps
 * into range). */
static gval need_mask(gen *g, const teeny_expr *e, int i, const char *name);

static gval gen_histogram(gen *g, const teeny_expr *e) {
  gval x = need_tile(g, e, 0, "histogram");
  if (x.type.rank != 1 || !teeny__dt_is_int(x.type.dt))
    teeny__gen_fail(g, e->args[0]->loc, "histogram needs a 1-D tile of integers, not %s",
                    teeny__gen_tstr(g, x.type));
  int64_t nb = teeny__gen_const_int(g, e->args[1], "histogram's bin count");
  if (nb <= 0 || nb > TEENY_MAX_TILE_NUMEL || !pow2(nb))
    teeny__gen_fail(g, e->args[1]->loc, "histogram's bin count %lld is not a power of two "
                    "from 1 to %d", (long long)nb, TEENY_MAX_TILE_NUMEL);
  gval sel = narrow_index(g, x, (int)nb, e->loc, "histogram");
  if (e->nargs == 3) {
    gval m = need_mask(g, e, 2, "histogram");
    if (m.type.rank > 1)
      teeny__gen_fail(g, e->args[2]->loc, "histogram's mask %s does not fit %s",
                      teeny__gen_tstr(g, m.type), teeny__gen_tstr(g, x.type));
    sel = select_of(g, m, sel, teeny__gv_int(TEENY_DT_I32, -1), e->loc, "histogram");
  }
  int bins = (int)nb;
  return teeny__gen_op(g, IR_HISTOGRAM, &sel, 1, teeny__type_tile(TEENY_DT_I32, 1, &bins), e->loc);
}

/* ---- memory ------------------------------------------------------------------------- */

/* p: argument 0 of e, evaluated */
static gval need_ptr(gen *g, const teeny_expr *e, gval p, const char *name) {
  if (p.st)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs a pointer (or a tile of pointers), not %s",
                    name, p.st->name);
  if (p.type.dt != TEENY_DT_PTR)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs a pointer (or a tile of pointers), not %s",
                    name, teeny__gen_tstr(g, p.type));
  return p;
}

static gval need_mask(gen *g, const teeny_expr *e, int i, const char *name) {
  gval m = arg(g, e, i);
  if (m.type.dt != TEENY_DT_BOOL)
    teeny__gen_fail(g, e->args[i]->loc, "%s's mask must be bool (a comparison), not %s",
                    name, teeny__gen_tstr(g, m.type));
  return m;
}

/* Broadcast vals[0..n) to one shape, in place. */
static void unify(gen *g, gval *vals, int n, teeny_loc loc, const char *name) {
  int rank = 0, shape[TEENY_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    teeny_type cur = teeny__type_tile(TEENY_DT_I32, rank, shape);
    if (!teeny__broadcast_shape(cur, vals[i].type, &rank, shape))
      teeny__gen_fail(g, loc, "shape mismatch: the operands of %s do not broadcast (%s)",
                      name, teeny__gen_tstr(g, vals[i].type));
  }
  for (int i = 0; i < n; i++)
    vals[i] = teeny__gen_broadcast(g, vals[i], rank, shape, loc);
}

static gval gen_load(gen *g, const teeny_expr *e) {
  gval v[3];
  int n = e->nargs;
  v[0] = teeny__gen_expr_any(g, e->args[0]);
  if (v[0].st && v[0].st->desc)
    return teeny__gen_block_load(g, e, v[0]);
  v[0] = need_ptr(g, e, v[0], "load");
  teeny_dtype elem = v[0].type.pointee;
  if (n >= 2)
    v[1] = need_mask(g, e, 1, "load");
  if (n == 3) {
    v[2] = arg(g, e, 2);
    if (v[2].type.dt == TEENY_DT_PTR || v[2].type.dt == TEENY_DT_VOID)
      teeny__gen_fail(g, e->args[2]->loc, "load's 'other' must be a number");
    v[2] = teeny__gen_implicit(g, v[2], elem, e->args[2]->loc, "use as load's 'other'");
  }
  unify(g, v, n, e->loc, "load");
  return teeny__gen_op(g, IR_LOAD, v, n, teeny__type_with_dtype(v[0].type, elem), e->loc);
}

static gval value_for(gen *g, const teeny_expr *e, int i, teeny_dtype elem,
                      const char *name) {
  gval x = arg(g, e, i);
  if (x.type.dt == TEENY_DT_PTR || x.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->args[i]->loc, "%s stores numbers, not %s", name,
                    teeny__gen_tstr(g, x.type));
  return teeny__gen_convert(g, x, elem, e->args[i]->loc);
}

static gval gen_store(gen *g, const teeny_expr *e) {
  gval v[3];
  int n = e->nargs;
  v[0] = teeny__gen_expr_any(g, e->args[0]);
  if (v[0].st && v[0].st->desc)
    return teeny__gen_block_store(g, e, v[0]);
  v[0] = need_ptr(g, e, v[0], "store");
  v[1] = value_for(g, e, 1, v[0].type.pointee, "store");
  if (n == 3)
    v[2] = need_mask(g, e, 2, "store");
  unify(g, v, n, e->loc, "store");
  int ids[3];
  for (int i = 0; i < n; i++)
    ids[i] = teeny__gen_id(g, v[i], e->loc);
  if (!teeny__ir_op_add(g->f, g->cur, IR_STORE, e->loc, ids, n, NULL, 0))
    teeny__gen_fail(g, e->loc, "kernel too large");
  return teeny__gv_void();
}

static bool atomic_dtype_ok(teeny_rmw_kind k, teeny_dtype dt) {
  bool int3264 = dt == TEENY_DT_I32 || dt == TEENY_DT_U32 || dt == TEENY_DT_I64 ||
                 dt == TEENY_DT_U64;
  switch (k) {
  case RMW_ADD:
    return int3264 || dt == TEENY_DT_F16 || dt == TEENY_DT_BF16 || dt == TEENY_DT_F32 ||
           dt == TEENY_DT_F64;
  case RMW_AND:
  case RMW_OR:
  case RMW_XOR:
    return int3264;
  case RMW_MAX:
  case RMW_MIN:
    return int3264 || dt == TEENY_DT_F32;
  default:
    return int3264 || dt == TEENY_DT_F32 || dt == TEENY_DT_F64;
  }
}

static gval gen_atomic(gen *g, const teeny_expr *e, teeny_rmw_kind k) {
  gval v[3];
  int n = e->nargs;
  v[0] = need_ptr(g, e, teeny__gen_expr_any(g, e->args[0]), e->name);
  teeny_dtype elem = v[0].type.pointee;
  if (!atomic_dtype_ok(k, elem))
    teeny__gen_fail(g, e->loc, "%s is not available for %s", e->name, teeny_dtype_name(elem));
  v[1] = value_for(g, e, 1, elem, e->name);
  if (n == 3)
    v[2] = need_mask(g, e, 2, e->name);
  unify(g, v, n, e->loc, e->name);
  gval r = teeny__gen_op(g, IR_ATOMIC_RMW, v, n, teeny__type_with_dtype(v[0].type, elem),
                         e->loc);
  g->f->values[r.id].def->rmw = k;
  return r;
}

static gval gen_atomic_cas(gen *g, const teeny_expr *e) {
  gval v[4];
  int n = e->nargs;
  v[0] = need_ptr(g, e, teeny__gen_expr_any(g, e->args[0]), "atomic_cas");
  teeny_dtype elem = v[0].type.pointee;
  if (!atomic_dtype_ok(RMW_XCHG, elem))
    teeny__gen_fail(g, e->loc, "atomic_cas is not available for %s", teeny_dtype_name(elem));
  v[1] = value_for(g, e, 1, elem, "atomic_cas");
  v[2] = value_for(g, e, 2, elem, "atomic_cas");
  if (n == 4)
    v[3] = need_mask(g, e, 3, "atomic_cas");
  unify(g, v, n, e->loc, "atomic_cas");
  return teeny__gen_op(g, IR_ATOMIC_CAS, v, n, teeny__type_with_dtype(v[0].type, elem),
                       e->loc);
}

static gval gen_barrier(gen *g, const teeny_expr *e) {
  if (!teeny__ir_op_add(g->f, g->cur, IR_BARRIER, e->loc, NULL, 0, NULL, 0))
    teeny__gen_fail(g, e->loc, "kernel too large");
  return teeny__gv_void();
}

/* ---- element-wise ----------------------------------------------------------------------- */

static gval gen_where(gen *g, const teeny_expr *e) {
  gval c = arg(g, e, 0);
  if (c.type.dt != TEENY_DT_BOOL)
    teeny__gen_fail(g, e->args[0]->loc, "where's condition must be bool, not %s",
                    teeny__gen_tstr(g, c.type));
  gval ab[2] = {arg(g, e, 1), arg(g, e, 2)};
  for (int i = 0; i < 2; i++)
    if (ab[i].type.dt == TEENY_DT_PTR || ab[i].type.dt == TEENY_DT_VOID)
      teeny__gen_fail(g, e->args[i + 1]->loc, "where chooses between numbers, not %s",
                      teeny__gen_tstr(g, ab[i].type));
  teeny_dtype dt = teeny__gen_promote(g, ab[0], ab[1], e->loc, "where");
  gval v[3] = {c, teeny__gen_operand(g, ab[0], dt, e->loc),
               teeny__gen_operand(g, ab[1], dt, e->loc)};
  unify(g, v, 3, e->loc, "where");
  if (v[0].is_const)
    return v[0].c.i ? v[1] : v[2];
  return teeny__gen_op(g, IR_SELECT, v, 3, v[1].type, e->loc);
}

static gval float_operand(gen *g, gval x, teeny_loc loc, const char *name) {
  if (x.type.dt == TEENY_DT_PTR || x.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, loc, "%s needs a floating-point operand, not %s", name,
                    teeny__gen_tstr(g, x.type));
  if (x.weak)
    return teeny__gen_operand(g, x, TEENY_DT_F32, loc);
  if (!teeny__dt_is_float(x.type.dt))
    teeny__gen_fail(g, loc, "%s needs a floating-point operand, not %s; cast it first",
                    name, teeny_dtype_name(x.type.dt));
  return x;
}

static gval gen_math(gen *g, const teeny_expr *e, teeny_opcode code) {
  gval x = float_operand(g, arg(g, e, 0), e->args[0]->loc, e->name);
  return teeny__gen_op(g, code, &x, 1, x.type, e->loc);
}

/* fast_exp ...: the op of the accurate function, marked for the hardware
 * approximation (f32 and narrower; f64 has none and stays accurate). */
static gval gen_fast_math(gen *g, const teeny_expr *e, teeny_opcode code) {
  gval r = gen_math(g, e, code);
  if (r.id >= 0 && g->f->values[r.id].def && g->f->values[r.id].def->code == code)
    g->f->values[r.id].def->fast = r.type.dt != TEENY_DT_F64;
  return r;
}

static gval gen_sigmoid(gen *g, const teeny_expr *e) {
  gval x = float_operand(g, arg(g, e, 0), e->args[0]->loc, "sigmoid");
  gval nx = teeny__gen_op(g, IR_NEG, &x, 1, x.type, e->loc);
  gval ex = teeny__gen_op(g, IR_EXP, &nx, 1, x.type, e->loc);
  gval den = teeny__gen_binop(g, OP_ADD, teeny__gv_weak_float(1.0), ex, e->loc);
  return teeny__gen_binop(g, OP_DIV, teeny__gv_weak_float(1.0), den, e->loc);
}

static gval gen_abs(gen *g, const teeny_expr *e) {
  gval x = arg(g, e, 0);
  if (x.type.dt == TEENY_DT_PTR || x.type.dt == TEENY_DT_VOID || x.type.dt == TEENY_DT_BOOL)
    teeny__gen_fail(g, e->args[0]->loc, "abs needs a number, not %s", teeny__gen_tstr(g, x.type));
  if (x.weak)
    x = teeny__gen_operand(g, x, x.type.dt, e->loc);
  if (teeny__dt_is_int(x.type.dt) && !teeny__dt_is_signed(x.type.dt))
    return x;
  return teeny__gen_op(g, IR_ABS, &x, 1, x.type, e->loc);
}

static gval gen_minmax(gen *g, const teeny_expr *e, teeny_opcode code) {
  gval v[2] = {arg(g, e, 0), arg(g, e, 1)};
  return teeny__gen_elementwise(g, code, v, 2, e->loc, e->name);
}

static gval gen_fma(gen *g, const teeny_expr *e) {
  gval v[3] = {arg(g, e, 0), arg(g, e, 1), arg(g, e, 2)};
  for (int i = 0; i < 3; i++)
    v[i] = float_operand(g, v[i], e->args[i]->loc, "fma");
  return teeny__gen_elementwise(g, IR_FMA, v, 3, e->loc, "fma");
}

/* pow(x, y), atan2(y, x): floats (weak literals adopt the other's dtype),
 * as C's. */
static gval gen_pow(gen *g, const teeny_expr *e, teeny_opcode code, const char *name) {
  gval v[2] = {arg(g, e, 0), arg(g, e, 1)};
  for (int i = 0; i < 2; i++)
    if (!v[i].weak && !teeny__dt_is_float(v[i].type.dt))
      teeny__gen_fail(g, e->args[i]->loc, "%s needs floating-point operands, not %s; "
                      "cast it first", name, teeny__gen_tstr(g, v[i].type));
  if (v[0].weak && v[1].weak)
    for (int i = 0; i < 2; i++)
      v[i] = teeny__gen_operand(g, v[i], TEENY_DT_F32, e->args[i]->loc);
  return teeny__gen_elementwise(g, code, v, 2, e->loc, name);
}

/* isnan(x), isinf(x): bool of x's shape; false for integers. */
static gval gen_isnan_isinf(gen *g, const teeny_expr *e, bool inf) {
  gval x = arg(g, e, 0);
  if (x.type.dt == TEENY_DT_PTR || x.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs a number, not %s", e->name,
                    teeny__gen_tstr(g, x.type));
  if (x.weak)
    x = teeny__gen_operand(g, x, teeny__dt_is_float(x.type.dt) ? TEENY_DT_F32 : TEENY_DT_I32,
                           e->loc);
  if (!teeny__dt_is_float(x.type.dt))
    return teeny__gen_broadcast(g, teeny__gv_bool(false), x.type.rank, x.type.shape, e->loc);
  if (!inf) /* NaN is the one value unequal to itself */
    return teeny__gen_binop(g, OP_NE, x, x, e->loc);
  gval a = teeny__gen_op(g, IR_ABS, &x, 1, x.type, e->loc);
  return teeny__gen_binop(g, OP_EQ, a, teeny__gv_weak_float(INFINITY), e->loc);
}

/* clamp(x, lo, hi) = minimum(maximum(x, lo), hi), as Triton's clamp: a NaN
 * x gives lo (maximum ignores a NaN operand). */
static gval gen_clamp(gen *g, const teeny_expr *e) {
  gval v[2] = {arg(g, e, 0), arg(g, e, 1)};
  gval m = teeny__gen_elementwise(g, IR_MAX, v, 2, e->loc, "clamp");
  gval w[2] = {m, arg(g, e, 2)};
  return teeny__gen_elementwise(g, IR_MIN, w, 2, e->loc, "clamp");
}

/* div_rn(a, b): the correctly rounded quotient, which `/` already is;
 * fdiv(a, b): the GPU's faster division (div.full.f32, about 2 ulp). */
static gval gen_division(gen *g, const teeny_expr *e, bool fast) {
  gval v[2] = {arg(g, e, 0), arg(g, e, 1)};
  for (int i = 0; i < 2; i++)
    v[i] = float_operand(g, v[i], e->args[i]->loc, e->name);
  gval r = teeny__gen_elementwise(g, IR_DIV, v, 2, e->loc, e->name);
  if (fast && r.id >= 0 && g->f->values[r.id].def && g->f->values[r.id].def->code == IR_DIV)
    g->f->values[r.id].def->fast = r.type.dt == TEENY_DT_F32;
  return r;
}

/* umulhi(a, b): the high half of the unsigned product of two ints of 32
 * or 64 bits (Triton's math.umulhi), in their promoted dtype. */
static gval gen_umulhi(gen *g, const teeny_expr *e) {
  gval v[2] = {arg(g, e, 0), arg(g, e, 1)};
  for (int i = 0; i < 2; i++)
    if (!teeny__dt_is_int(v[i].type.dt) && !v[i].weak)
      teeny__gen_fail(g, e->args[i]->loc, "umulhi multiplies integers, not %s",
                      teeny__gen_tstr(g, v[i].type));
  gval r = teeny__gen_elementwise(g, IR_UMULHI, v, 2, e->loc, "umulhi");
  if (teeny__dt_bits(r.type.dt) < 32)
    teeny__gen_fail(g, e->loc, "umulhi needs 32- or 64-bit integers, not %s",
                    teeny_dtype_name(r.type.dt));
  return r;
}

/* bitcast(x, T): x's bits as dtype T of the same width (Triton's
 * x.to(T, bitcast=True); a cast (T)x converts the value instead). */
static gval gen_bitcast(gen *g, const teeny_expr *e) {
  gval x = arg(g, e, 0);
  teeny_dtype to = dtype_arg(g, e, 1);
  if (x.weak)
    teeny__gen_fail(g, e->args[0]->loc, "bitcast needs a value of a definite dtype; "
                    "cast the literal first, e.g. bitcast((f32)1.0, u32)");
  if (x.type.dt == TEENY_DT_PTR || x.type.dt == TEENY_DT_VOID || x.type.dt == TEENY_DT_BOOL ||
      to == TEENY_DT_BOOL)
    teeny__gen_fail(g, e->loc, "bitcast reinterprets numbers (not bool or pointers)");
  if (teeny__dt_bits(x.type.dt) != teeny__dt_bits(to))
    teeny__gen_fail(g, e->loc, "bitcast from %s to %s: the widths differ (%d and %d bits)",
                    teeny_dtype_name(x.type.dt), teeny_dtype_name(to),
                    teeny__dt_bits(x.type.dt), teeny__dt_bits(to));
  if (x.type.dt == to)
    return x;
  return teeny__gen_op(g, IR_BITCAST, &x, 1, teeny__type_with_dtype(x.type, to), e->loc);
}

static gval gen_cdiv(gen *g, const teeny_expr *e) {
  gval a = arg(g, e, 0), b = arg(g, e, 1);
  if (!(teeny__dt_is_int(a.type.dt) && teeny__dt_is_int(b.type.dt)))
    teeny__gen_fail(g, e->loc, "cdiv needs integer operands");
  gval t = teeny__gen_binop(g, OP_SUB, teeny__gen_binop(g, OP_ADD, a, b, e->loc),
                            teeny__gv_weak_int(1), e->loc);
  return teeny__gen_binop(g, OP_DIV, t, b, e->loc);
}

/* ---- reductions and scans ---------------------------------------------------------------- */

/* A reduce or scan op over xs[0..n) along axis; its region gets 2n scalar
 * arguments and is returned for the caller to fill. */
static teeny_op *combine_op(gen *g, teeny_opcode code, gval *xs, int n, int axis,
                            teeny_loc loc, teeny_region **region) {
  int *ids = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)n);
  teeny_type *rts = teeny__arena_alloc(g->cx->arena, sizeof(teeny_type) * (size_t)n);
  for (int i = 0; i < n; i++) {
    ids[i] = teeny__gen_id(g, xs[i], loc);
    teeny_type t = xs[i].type;
    if (code == IR_REDUCE) {
      int s[TEENY_MAX_RANK], k = 0;
      for (int d = 0; d < t.rank; d++)
        if (d != axis)
          s[k++] = t.shape[d];
      t = teeny__type_with_shape(t, k, s);
    }
    rts[i] = t;
  }
  teeny_op *op = teeny__ir_op_add(g->f, g->cur, code, loc, ids, n, rts, n);
  if (!op)
    teeny__gen_fail(g, loc, "kernel too large");
  op->axis = axis;
  teeny_region *r = teeny__ir_region_new(g->f);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < n; i++) {
      teeny_type st = teeny__type_scalar(xs[i].type.dt);
      teeny__ir_region_arg_add(g->f, r, st);
    }
  op->regions[0] = r;
  op->nregions = 1;
  *region = r;
  return op;
}

static void region_yield(gen *g, teeny_region *r, const gval *vals, int n, teeny_loc loc) {
  teeny_region *saved = g->cur;
  g->cur = r;
  int *ids = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++)
    ids[i] = teeny__gen_id(g, vals[i], loc);
  if (!teeny__ir_op_add(g->f, r, IR_YIELD, loc, ids, n, NULL, 0))
    teeny__gen_fail(g, loc, "kernel too large");
  g->cur = saved;
}

/* The accumulation dtype of sum/cumsum. */
static teeny_dtype sum_dtype(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL:
  case TEENY_DT_I8:
  case TEENY_DT_I16:
    return TEENY_DT_I32;
  case TEENY_DT_U8:
  case TEENY_DT_U16:
    return TEENY_DT_U32;
  case TEENY_DT_F16:
  case TEENY_DT_BF16:
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2:
    return TEENY_DT_F32;
  default:
    return dt;
  }
}

/* sum/max/min/cumsum: the combine region is one binary op. */
static gval gen_simple_combine(gen *g, const teeny_expr *e, teeny_opcode combine,
                               teeny_opcode kind, bool sum_like) {
  gval x = need_tile(g, e, 0, e->name);
  if (x.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs numbers, not pointers", e->name);
  teeny_dtype dt = sum_like ? sum_dtype(x.type.dt)
                            : (x.type.dt == TEENY_DT_BOOL ? TEENY_DT_I32 : x.type.dt);
  x = teeny__gen_convert(g, x, dt, e->loc);
  int axis = 0;
  if (e->nargs >= 2) {
    axis = const_axis(g, e, 1, x.type.rank, e->name);
  } else if (x.type.rank > 1 && kind == IR_REDUCE) {
    int n = (int)teeny__type_numel(x.type);
    x = shape_op(g, IR_RESHAPE, x, teeny__type_with_shape(x.type, 1, &n), 0, e->loc);
  }
  teeny_region *r;
  teeny_op *op = combine_op(g, kind, &x, 1, axis, e->loc, &r);
  teeny_region *saved = g->cur;
  g->cur = r;
  gval a = teeny__gv_value(g, r->args[0]), b = teeny__gv_value(g, r->args[1]);
  gval ab[2] = {a, b};
  gval c = teeny__gen_op(g, combine, ab, 2, a.type, e->loc);
  g->cur = saved;
  region_yield(g, r, &c, 1, e->loc);
  return teeny__gv_value(g, op->res[0]);
}

static gval gen_arg_reduce(gen *g, const teeny_expr *e, teeny_cmp_pred better) {
  gval x = need_tile(g, e, 0, e->name);
  if (x.type.dt == TEENY_DT_PTR)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs numbers, not pointers", e->name);
  if (x.type.dt == TEENY_DT_BOOL)
    x = teeny__gen_convert(g, x, TEENY_DT_I32, e->loc);
  int axis = const_axis(g, e, 1, x.type.rank, e->name);
  /* indices along axis, broadcast to x's shape */
  gval idx = range_along(g, x.type.rank, x.type.shape, axis, e->loc);
  gval xs[2] = {x, idx};
  teeny_region *r;
  teeny_op *op = combine_op(g, IR_REDUCE, xs, 2, axis, e->loc, &r);
  teeny_region *saved = g->cur;
  g->cur = r;
  gval av = teeny__gv_value(g, r->args[0]), ai = teeny__gv_value(g, r->args[1]);
  gval bv = teeny__gv_value(g, r->args[2]), bi = teeny__gv_value(g, r->args[3]);
  teeny_type bt = teeny__type_scalar(TEENY_DT_BOOL);
  gval p1[2] = {bv, av}, p2[2] = {bv, av}, p3[2] = {bi, ai};
  gval better_v = teeny__gen_op(g, IR_CMP, p1, 2, bt, e->loc);
  g->f->values[better_v.id].def->pred = better;
  gval eq = teeny__gen_op(g, IR_CMP, p2, 2, bt, e->loc);
  g->f->values[eq.id].def->pred = CMP_EQ;
  gval first = teeny__gen_op(g, IR_CMP, p3, 2, bt, e->loc);
  g->f->values[first.id].def->pred = CMP_LT;
  gval tie[2] = {eq, first};
  gval tie_b = teeny__gen_op(g, IR_AND, tie, 2, bt, e->loc);
  gval take[2] = {better_v, tie_b};
  gval take_b = teeny__gen_op(g, IR_OR, take, 2, bt, e->loc);
  gval sv[3] = {take_b, bv, av}, si[3] = {take_b, bi, ai};
  gval out[2] = {teeny__gen_op(g, IR_SELECT, sv, 3, av.type, e->loc),
                 teeny__gen_op(g, IR_SELECT, si, 3, ai.type, e->loc)};
  g->cur = saved;
  region_yield(g, r, out, 2, e->loc);
  return teeny__gv_value(g, op->res[1]);
}

/* The operands of reduce/scan(x, ...): x's leaves when x is a struct
 * value (a tuple), else x; tiles of numbers, broadcast to one shape. */
static gval *combine_inputs(gen *g, const teeny_expr *e, gval x, int *n) {
  *n = x.st ? x.st->nleaves : 1;
  if (*n > TEENY_MAX_COMBINE)
    teeny__gen_fail(g, e->args[0]->loc, "%s over %s: at most %d values at once (it has %d)",
                    e->name, x.st->name, TEENY_MAX_COMBINE, *n);
  gval *xs = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)*n);
  for (int i = 0; i < *n; i++) {
    xs[i] = x.st ? x.leaves[i] : x;
    const char *what = x.st ? teeny__arena_printf(g->cx->arena, "field '%s' of %s",
                                                  x.st->leaf_name[i], x.st->name)
                            : "its operand";
    if (xs[i].type.rank == 0 || xs[i].type.dt == TEENY_DT_VOID)
      teeny__gen_fail(g, e->args[0]->loc, "%s needs tiles, but %s is %s", e->name, what,
                      teeny__gen_tstr(g, xs[i].type));
    if (xs[i].type.dt == TEENY_DT_PTR)
      teeny__gen_fail(g, e->args[0]->loc, "%s needs numbers, not pointers (%s)", e->name,
                      what);
  }
  unify(g, xs, *n, e->loc, e->name);
  return xs;
}

/* What the combine helper returned must be the inputs' dtypes, as
 * scalars (a struct of them for a tuple). */
static void check_combined(gen *g, const teeny_func *fn, gval c, gval x, const gval *xs,
                           int n, teeny_loc loc) {
  if (x.st && c.st != x.st)
    teeny__gen_fail(g, loc, "combine function '%s' must return %s, not %s", fn->name,
                    x.st->name, c.st ? c.st->name : teeny__gen_tstr(g, c.type));
  for (int i = 0; i < n; i++) {
    gval v = x.st ? c.leaves[i] : c;
    if ((v.st || v.type.rank != 0 || v.type.dt != xs[i].type.dt) && x.st)
      teeny__gen_fail(g, loc, "combine function '%s' must return field '%s' as a scalar "
                      "%s, not %s", fn->name, x.st->leaf_name[i],
                      teeny_dtype_name(xs[i].type.dt), teeny__gen_tstr(g, v.type));
    if (v.st || v.type.rank != 0 || v.type.dt != xs[i].type.dt)
      teeny__gen_fail(g, loc, "combine function '%s' must return a scalar %s, not %s",
                      fn->name, teeny_dtype_name(xs[i].type.dt),
                      v.st ? v.st->name : teeny__gen_tstr(g, v.type));
  }
}

/* reduce(x, axis, fn) / scan(x, axis, fn) with a helper as combine; x may
 * be a struct value of tiles (Triton's tuples of tensors), combined field
 * by field by fn on scalars of that struct. */
static gval gen_fn_combine(gen *g, const teeny_expr *e, teeny_opcode kind) {
  gval x = teeny__gen_expr_any(g, e->args[0]);
  int n;
  gval *xs = combine_inputs(g, e, x, &n);
  int axis = const_axis(g, e, 1, xs[0].type.rank, e->name);
  const teeny_expr *fe = e->args[2];
  if (fe->kind != EX_NAME || fe->sym != SYM_FUNC)
    teeny__gen_fail(g, fe->loc, "%s's third argument must name a helper function", e->name);
  const teeny_func *fn = g->prog->funcs[fe->sym_index];
  if (fn->nparams != 2)
    teeny__gen_fail(g, fe->loc, "combine function '%s' must take 2 parameters", fn->name);
  teeny_region *r;
  teeny_op *op = combine_op(g, kind, xs, n, axis, e->loc, &r);
  teeny_region *saved = g->cur;
  g->cur = r;
  gval *a = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)n * 2);
  for (int i = 0; i < 2 * n; i++)
    a[i] = teeny__gv_value(g, r->args[i]);
  gval ab[2] = {x.st ? teeny__gv_struct(x.st, a) : a[0],
                x.st ? teeny__gv_struct(x.st, a + n) : a[1]};
  teeny_loc locs[2] = {fe->loc, fe->loc};
  gval c = teeny__gen_inline(g, fn, ab, locs, 2, fe->loc);
  check_combined(g, fn, c, x, xs, n, fe->loc);
  g->cur = saved;
  region_yield(g, r, x.st ? c.leaves : &c, n, e->loc);
  if (!x.st)
    return teeny__gv_value(g, op->res[0]);
  gval *out = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)n);
  for (int i = 0; i < n; i++)
    out[i] = teeny__gv_value(g, op->res[i]);
  return teeny__gv_struct(x.st, out);
}

/* ---- dot ------------------------------------------------------------------------------------ */

static gval gen_dot(gen *g, const teeny_expr *e) {
  gval a = need_tile(g, e, 0, "dot"), b = need_tile(g, e, 1, "dot");
  int n = a.type.rank, lo = n - 2; /* 3-D: batched, [B, M, K] x [B, K, N] */
  if ((n != 2 && n != 3) || b.type.rank != n)
    teeny__gen_fail(g, e->loc, "dot needs two 2-D tiles ([M, K] x [K, N]) or two 3-D ones "
                    "([B, M, K] x [B, K, N]), not %s and %s",
                    teeny__gen_tstr(g, a.type), teeny__gen_tstr(g, b.type));
  int M = a.type.shape[lo], K = a.type.shape[lo + 1], N = b.type.shape[lo + 1];
  if (b.type.shape[lo] != K || (n == 3 && a.type.shape[0] != b.type.shape[0]))
    teeny__gen_fail(g, e->loc, "shape mismatch: dot of %s and %s: %s differ",
                    teeny__gen_tstr(g, a.type), teeny__gen_tstr(g, b.type),
                    b.type.shape[lo] != K ? "inner dims" : "batch dims");
  if (M < 16 || N < 16 || K < 16)
    teeny__gen_fail(g, e->loc, "dot needs M, N and K >= 16, got %s x %s",
                    teeny__gen_tstr(g, a.type), teeny__gen_tstr(g, b.type));
  teeny_dtype dt = a.type.dt;
  bool f8a = teeny__dt_is_fp8(dt), f8b = teeny__dt_is_fp8(b.type.dt);
  bool half = dt == TEENY_DT_F16 || dt == TEENY_DT_BF16;
  bool ok = (dt == b.type.dt && (half || dt == TEENY_DT_F32 || dt == TEENY_DT_I8)) ||
            (f8a && f8b) || /* e4m3 x e5m2 too */
            (f8a && (b.type.dt == TEENY_DT_F16 || b.type.dt == TEENY_DT_BF16)) || (f8b && half);
  if (!ok)
    teeny__gen_fail(g, e->loc, "dtype mismatch: dot operands must both be f16, bf16, f32 "
                               "or i8, or fp8 (f8e4m3, f8e5m2) with fp8, f16 or bf16, got %s "
                               "and %s",
                    teeny_dtype_name(dt), teeny_dtype_name(b.type.dt));
  if (f8a || f8b) {
    /* every fp8 value is exact in f16 and in bf16: the tensor cores
     * multiply them there (f32 accumulation, as for f16), the f8 operand
     * taking the other's dtype (f16 for two fp8s).  Native fp8 mma is
     * not used yet (docs/dsl.md). */
    teeny_dtype to = !f8a ? dt : !f8b ? b.type.dt : TEENY_DT_F16;
    a = teeny__gen_convert(g, a, to, e->args[0]->loc);
    b = teeny__gen_convert(g, b, to, e->args[1]->loc);
    dt = to;
  }
  teeny_dtype out = dt == TEENY_DT_I8 ? TEENY_DT_I32 : TEENY_DT_F32;
  int s[3] = {a.type.shape[0], M, N};
  teeny_type ct = teeny__type_tile(out, n, n == 3 ? s : s + 1);
  gval acc;
  if (e->nargs == 3) {
    acc = arg(g, e, 2);
    if (acc.type.dt == TEENY_DT_PTR || acc.type.dt == TEENY_DT_VOID)
      teeny__gen_fail(g, e->args[2]->loc, "dot's accumulator must be a tile");
    acc = teeny__gen_implicit(g, acc, out, e->args[2]->loc, "use as dot's accumulator");
    if (!teeny__type_eq(acc.type, ct))
      teeny__gen_fail(g, e->args[2]->loc, "shape mismatch: dot's accumulator is %s; it must be %s",
                      teeny__gen_tstr(g, acc.type), teeny__gen_tstr(g, ct));
  } else {
    teeny_scalar z = {.u = 0};
    memset(&acc, 0, sizeof acc);
    acc.id = -1;
    acc.is_const = true;
    acc.c = z;
    acc.type = ct;
  }
  gval v[3] = {a, b, acc};
  return teeny__gen_op(g, IR_DOT, v, 3, ct, e->loc);
}

/* ---- dtype introspection ------------------------------------------------------------------- */

/* is_float(T) ... same_dtype(A, B): constant bools, so an `if` on them
 * builds only the branch taken (each argument a dtype or a value). */
static gval gen_dtype_test(gen *g, const teeny_expr *e) {
  teeny_type t = teeny__gen_type_of(g, e->args[0]);
  teeny_dtype dt = t.dt;
  switch ((teeny_builtin)e->sym_index) {
  case BI_IS_FLOAT: return teeny__gv_bool(teeny__dt_is_float(dt));
  case BI_IS_INT: return teeny__gv_bool(teeny__dt_is_int(dt));
  case BI_IS_SIGNED: return teeny__gv_bool(teeny__dt_is_int(dt) && teeny__dt_is_signed(dt));
  case BI_IS_UNSIGNED: return teeny__gv_bool(teeny__dt_is_int(dt) && !teeny__dt_is_signed(dt));
  default: {
    teeny_type u = teeny__gen_type_of(g, e->args[1]);
    return teeny__gv_bool(dt == u.dt && (dt != TEENY_DT_PTR || t.pointee == u.pointee));
  }
  }
}

/* ---- dispatch -------------------------------------------------------------------------------- */

/* The builtin call e with its positional arguments only (options are
 * applied by teeny__gen_builtin). */
static gval gen_positional(gen *g, const teeny_expr *e) {
  switch ((teeny_builtin)e->sym_index) {
  case BI_PROGRAM_ID: return gen_program(g, e, IR_PROGRAM_ID);
  case BI_NUM_PROGRAMS: return gen_program(g, e, IR_NUM_PROGRAMS);
  case BI_ARANGE: return gen_arange(g, e);
  case BI_ZEROS: return gen_full(g, e, true);
  case BI_FULL: return gen_full(g, e, false);
  case BI_COL: return gen_colrow(g, e, 1);
  case BI_ROW: return gen_colrow(g, e, 0);
  case BI_EXPAND_DIMS: return gen_expand_dims(g, e);
  case BI_BROADCAST_TO: return gen_broadcast_to(g, e);
  case BI_RESHAPE: /* view: Triton's older name (it may reorder; ours does not) */
  case BI_VIEW: return gen_reshape(g, e);
  case BI_MAKE_TENSOR_DESCRIPTOR: return teeny__gen_make_desc(g, e, TEENY_DESC_TENSOR);
  case BI_MAKE_BLOCK_PTR: return teeny__gen_make_desc(g, e, TEENY_DESC_BLOCK);
  case BI_LOAD_TENSOR_DESCRIPTOR: return teeny__gen_desc_load(g, e);
  case BI_STORE_TENSOR_DESCRIPTOR: return teeny__gen_desc_store(g, e);
  case BI_ADVANCE: return teeny__gen_advance(g, e);
  case BI_TRANS: return gen_trans(g, e);
  case BI_JOIN: return gen_join(g, e);
  case BI_INTERLEAVE: return gen_interleave(g, e);
  case BI_CAT: return gen_cat(g, e);
  case BI_RAVEL: return gen_ravel(g, e);
  case BI_HISTOGRAM: return gen_histogram(g, e);
  case BI_GATHER: return gen_gather(g, e);
  case BI_FLIP: return gen_flip(g, e);
  case BI_SORT: return gen_sort(g, e);
  case BI_PERMUTE: return gen_permute(g, e);
  case BI_SPLIT: return gen_split(g, e);
  case BI_RANDINT4X: return teeny__gen_random(g, e, BI_RANDINT4X);
  case BI_LOAD: return gen_load(g, e);
  case BI_STORE: return gen_store(g, e);
  case BI_ATOMIC_ADD: return gen_atomic(g, e, RMW_ADD);
  case BI_ATOMIC_MAX: return gen_atomic(g, e, RMW_MAX);
  case BI_ATOMIC_MIN: return gen_atomic(g, e, RMW_MIN);
  case BI_ATOMIC_XCHG: return gen_atomic(g, e, RMW_XCHG);
  case BI_ATOMIC_AND: return gen_atomic(g, e, RMW_AND);
  case BI_ATOMIC_OR: return gen_atomic(g, e, RMW_OR);
  case BI_ATOMIC_XOR: return gen_atomic(g, e, RMW_XOR);
  case BI_ATOMIC_CAS: return gen_atomic_cas(g, e);
  case BI_WHERE: return gen_where(g, e);
  case BI_MINIMUM: return gen_minmax(g, e, IR_MIN);
  case BI_MAXIMUM: return gen_minmax(g, e, IR_MAX);
  case BI_ABS: return gen_abs(g, e);
  case BI_EXP: return gen_math(g, e, IR_EXP);
  case BI_EXP2: return gen_math(g, e, IR_EXP2);
  case BI_LOG: return gen_math(g, e, IR_LOG);
  case BI_LOG2: return gen_math(g, e, IR_LOG2);
  case BI_SQRT: return gen_math(g, e, IR_SQRT);
  case BI_RSQRT: return gen_math(g, e, IR_RSQRT);
  case BI_SIN: return gen_math(g, e, IR_SIN);
  case BI_COS: return gen_math(g, e, IR_COS);
  case BI_TANH: return gen_math(g, e, IR_TANH);
  case BI_SIGMOID: return gen_sigmoid(g, e);
  case BI_ERF: return gen_math(g, e, IR_ERF);
  case BI_FLOOR: return gen_math(g, e, IR_FLOOR);
  case BI_CEIL: return gen_math(g, e, IR_CEIL);
  case BI_FAST_EXP: return gen_fast_math(g, e, IR_EXP);
  case BI_FAST_EXP2: return gen_fast_math(g, e, IR_EXP2);
  case BI_FAST_LOG: return gen_fast_math(g, e, IR_LOG);
  case BI_FAST_LOG2: return gen_fast_math(g, e, IR_LOG2);
  case BI_FAST_SIN: return gen_fast_math(g, e, IR_SIN);
  case BI_FAST_COS: return gen_fast_math(g, e, IR_COS);
  case BI_FAST_TANH: return gen_fast_math(g, e, IR_TANH);
  case BI_FMA: return gen_fma(g, e);
  case BI_CDIV: return gen_cdiv(g, e);
  case BI_SUM: return gen_simple_combine(g, e, IR_ADD, IR_REDUCE, true);
  case BI_MAX: return gen_simple_combine(g, e, IR_MAX, IR_REDUCE, false);
  case BI_MIN: return gen_simple_combine(g, e, IR_MIN, IR_REDUCE, false);
  case BI_ARGMAX: return gen_arg_reduce(g, e, CMP_GT);
  case BI_ARGMIN: return gen_arg_reduce(g, e, CMP_LT);
  case BI_REDUCE: return gen_fn_combine(g, e, IR_REDUCE);
  case BI_CUMSUM: return gen_simple_combine(g, e, IR_ADD, IR_SCAN, true);
  case BI_SCAN: return gen_fn_combine(g, e, IR_SCAN);
  case BI_DOT: return gen_dot(g, e);
  case BI_BARRIER: return gen_barrier(g, e);
  case BI_UMULHI: return gen_umulhi(g, e);
  case BI_BITCAST: return gen_bitcast(g, e);
  case BI_RAND:
  case BI_RANDN:
  case BI_RANDINT: return teeny__gen_random(g, e, (teeny_builtin)e->sym_index);
  case BI_LOG1P: return gen_math(g, e, IR_LOG1P);
  case BI_EXPM1: return gen_math(g, e, IR_EXPM1);
  case BI_ERFC: return gen_math(g, e, IR_ERFC);
  case BI_POW: return gen_pow(g, e, IR_POW, "pow");
  case BI_ATAN2: return gen_pow(g, e, IR_ATAN2, "atan2");
  case BI_ASIN: return gen_math(g, e, IR_ASIN);
  case BI_ACOS: return gen_math(g, e, IR_ACOS);
  case BI_ATAN: return gen_math(g, e, IR_ATAN);
  case BI_ISNAN: return gen_isnan_isinf(g, e, false);
  case BI_ISINF: return gen_isnan_isinf(g, e, true);
  case BI_CLAMP: return gen_clamp(g, e);
  case BI_DIV_RN: return gen_division(g, e, false);
  case BI_FDIV: return gen_division(g, e, true);
  case BI_IS_FLOAT: case BI_IS_INT: case BI_IS_SIGNED: case BI_IS_UNSIGNED:
  case BI_SAME_DTYPE: return gen_dtype_test(g, e);
  case BI_STATIC_ASSERT: return teeny__gen_static_assert(g, e);
  case BI_DEVICE_PRINT: return teeny__gen_device_print(g, e);
  case BI_DEVICE_ASSERT: return teeny__gen_device_assert(g, e);
  case BI__COUNT: break;
  }
  teeny__gen_fail(g, e->loc, "internal error: unknown builtin '%s'", e->name);
}

/* Set the attributes the trailing options of e name on the op that made r
 * (an atomic: sem, scope; a dot: prec; a load: cache, evict), or for a
 * store (no value), on the op just added. */
static void apply_options(gen *g, const teeny_expr *e, int npos, gval r) {
  teeny_op *op = r.id >= 0 ? g->f->values[r.id].def : NULL;
  if ((e->sym_index == BI_STORE || e->sym_index == BI_STORE_TENSOR_DESCRIPTOR) && g->cur->nops > 0 &&
      g->cur->ops[g->cur->nops - 1]->code == IR_STORE)
    op = g->cur->ops[g->cur->nops - 1];
  if (!op)
    teeny__gen_fail(g, e->loc, "internal error: options of '%s' have no op", e->name);
  for (int i = npos; i < e->nargs; i++) {
    const teeny_option_info *oi = teeny__option_info((teeny_option)e->args[i]->sym_index);
    if (oi->group == OPTG_SEM)
      op->sem = (teeny_sem)oi->value;
    else if (oi->group == OPTG_SCOPE)
      op->scope = (teeny_scope)oi->value;
    else if (oi->group == OPTG_CACHE)
      op->cache = (teeny_cache)oi->value;
    else if (oi->group == OPTG_EVICT)
      op->evict = (teeny_evict)oi->value;
    else
      op->prec = (teeny_prec)oi->value;
  }
}

gval teeny__gen_builtin(gen *g, const teeny_expr *e) {
  const teeny_builtin_info *bi = teeny__builtin_info((teeny_builtin)e->sym_index);
  int npos = teeny__call_positional(e);
  if (!bi || npos < bi->minargs || (bi->maxargs >= 0 && npos > bi->maxargs))
    teeny__gen_fail(g, e->loc, "wrong number of arguments to '%s'", e->name);
  if (npos == e->nargs)
    return gen_positional(g, e);
  teeny_expr pe = *e;
  pe.nargs = npos;
  gval r = gen_positional(g, &pe);
  apply_options(g, e, npos, r);
  return r;
}
