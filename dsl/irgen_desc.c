/*
 * dsl/irgen_desc.c — tensor descriptors and block pointers (docs/dsl.md §5,
 * Triton's make_tensor_descriptor, load_tensor_descriptor and
 * store_tensor_descriptor, and its older make_block_ptr, advance, and load
 * and store of a block pointer).
 *
 * A descriptor is a struct value: the parser's tensor_desc(T) or
 * block_ptr(T) (parse.c: base, shape, strides and a block pointer's
 * offsets as leaves, TEENY_MAX_RANK of each), specialised here to a struct
 * that also carries the compile-time rank and block shape.  A variable of
 * one takes the specialisation of its initialiser, and every later value
 * must have the same block shape; loops and branches carry the leaves as
 * they carry any struct's.
 *
 * Every access is lowered here to a tile of pointers and a bounds mask,
 * so the interpreter, the code generator and the .mlir see plain loads
 * and stores: element (i0, i1, ..) of the block at offsets (o0, o1, ..) is
 * base + sum_k (o_k + i_k) * stride_k, inside the tensor where 0 <= o_k +
 * i_k < shape_k for every k.  Outside, a load reads 0 and a store writes
 * nothing, as the Tensor Memory Accelerator does.
 */
#include <string.h>

#include "dsl/irgen.h"

/* Leaves of a descriptor struct (parse.c's desc_struct). */
enum { L_BASE = 0, L_SHAPE = 1, L_STRIDE = 1 + TEENY_MAX_RANK, L_OFF = 1 + 2 * TEENY_MAX_RANK };

#define MAX_SPECIALISATIONS ((int)(sizeof ((gen *)0)->descs / sizeof ((gen *)0)->descs[0]))

static const char *kind_name(teeny_desc_kind k) {
  return k == TEENY_DESC_BLOCK ? "block_ptr" : "tensor_desc";
}

static int leaves_of(teeny_desc_kind k) {
  return k == TEENY_DESC_BLOCK ? 1 + 3 * TEENY_MAX_RANK : 1 + 2 * TEENY_MAX_RANK;
}

static teeny_tyspec *scalar_spec(gen *g, teeny_dtype dt, bool ptr) {
  teeny_tyspec *ts = teeny__arena_alloc(g->cx->arena, sizeof *ts);
  memset(ts, 0, sizeof *ts);
  ts->dt = dt;
  ts->is_ptr = ptr;
  ts->generic = -1;
  ts->strct = -1;
  ts->base = teeny_dtype_name(dt);
  return ts;
}

/* The struct of a descriptor of kind k over elem with this rank and
 * block shape: one per distinct kind, dtype and shape in a compile
 * (interned, so that equal ones are the same pointer). */
static const teeny_struct *specialise(gen *g, teeny_desc_kind k, teeny_dtype elem, int rank,
                                      const int *block, teeny_loc loc) {
  static const char *const part[] = {"shape", "stride", "off"};
  static const teeny_dtype pdt[] = {TEENY_DT_I32, TEENY_DT_I64, TEENY_DT_I32};
  for (int i = 0; i < g->ndescs; i++) {
    const teeny_struct *s = g->descs[i];
    if (s->desc == k && s->info->rank == rank && teeny__tyspec_dtype(s->leaf_type[0], g->b) == elem &&
        memcmp(s->info->block, block, sizeof(int) * (size_t)rank) == 0)
      return s;
  }
  if (g->ndescs == MAX_SPECIALISATIONS)
    teeny__gen_fail(g, loc, "more than %d descriptor shapes in one kernel", MAX_SPECIALISATIONS);
  teeny_arena *a = g->cx->arena;
  teeny_desc_info *in = teeny__arena_alloc(a, sizeof *in);
  memset(in, 0, sizeof *in);
  in->rank = rank;
  memcpy(in->block, block, sizeof(int) * (size_t)rank);
  teeny_struct *st = teeny__arena_alloc(a, sizeof *st);
  memset(st, 0, sizeof *st);
  char dims[64];
  int n = 0;
  for (int i = 0; i < rank; i++)
    n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%d", i ? ", " : "", block[i]);
  st->name = teeny__arena_printf(a, "%s(%s)[%s]", kind_name(k), teeny_dtype_name(elem), dims);
  st->loc = loc;
  st->desc = k;
  st->info = in;
  st->nleaves = st->nfields = leaves_of(k);
  st->fields = teeny__arena_alloc(a, sizeof *st->fields * (size_t)st->nfields);
  st->leaf_type = teeny__arena_alloc(a, sizeof *st->leaf_type * (size_t)st->nleaves);
  st->leaf_name = teeny__arena_alloc(a, sizeof *st->leaf_name * (size_t)st->nleaves);
  for (int i = 0; i < st->nleaves; i++) {
    int p = (i - 1) / TEENY_MAX_RANK;
    teeny_field *f = &st->fields[i];
    memset(f, 0, sizeof *f);
    f->name = i == 0 ? "base" : teeny__arena_printf(a, "%s%d", part[p], (i - 1) % TEENY_MAX_RANK);
    f->loc = loc;
    f->type = i == 0 ? scalar_spec(g, elem, true) : scalar_spec(g, pdt[p], false);
    f->leaf = i;
    f->nleaves = 1;
    st->leaf_type[i] = f->type;
    st->leaf_name[i] = f->name;
  }
  g->descs[g->ndescs++] = st;
  return st;
}

bool teeny__gen_desc_fits(gen *g, const teeny_struct *want, const teeny_struct *have) {
  if (!want || !have || !want->desc || want->desc != have->desc || !have->info)
    return false;
  if (want->info)
    return want == have;
  return teeny__tyspec_dtype(want->leaf_type[0], g->b) ==
         teeny__tyspec_dtype(have->leaf_type[0], g->b);
}

/* ---- making ------------------------------------------------------------------------------ */

/* Argument i of e: an integer scalar, converted to dt. */
static gval int_scalar(gen *g, const teeny_expr *e, int i, teeny_dtype dt, const char *what) {
  gval v = teeny__gen_expr(g, e->args[i]);
  if (v.type.rank != 0 || !teeny__dt_is_int(v.type.dt))
    teeny__gen_fail(g, e->args[i]->loc, "%s's %s must be an integer scalar, not %s", e->name, what,
                    teeny__gen_tstr(g, v.type));
  return teeny__gen_convert(g, v, dt, e->args[i]->loc);
}

gval teeny__gen_make_desc(gen *g, const teeny_expr *e, teeny_desc_kind k) {
  int parts = k == TEENY_DESC_BLOCK ? 5 : 3, n = e->nargs - 1, rank = n / parts;
  if (n % parts || rank < 1 || rank > TEENY_MAX_RANK)
    teeny__gen_fail(g, e->loc, "%s takes the base pointer, then %s, one value per dim (1 to %d "
                    "dims), so 1 + %d x rank arguments, not %d", e->name,
                    k == TEENY_DESC_BLOCK ? "the shape, strides, offsets, block shape and order"
                                          : "the shape, strides and block shape",
                    TEENY_MAX_RANK, parts, e->nargs);
  gval base = teeny__gen_expr(g, e->args[0]);
  if (base.type.dt != TEENY_DT_PTR || base.type.rank != 0)
    teeny__gen_fail(g, e->args[0]->loc, "%s's base must be a pointer, not %s", e->name,
                    teeny__gen_tstr(g, base.type));
  int block[TEENY_MAX_RANK];
  long numel = 1;
  int bfirst = 1 + (parts - (k == TEENY_DESC_BLOCK ? 2 : 1)) * rank;
  for (int d = 0; d < rank; d++) {
    const teeny_expr *a = e->args[bfirst + d];
    int64_t v = teeny__gen_const_int(g, a, "a block dim");
    if (v <= 0 || (v & (v - 1)) || v > TEENY_MAX_TILE_NUMEL)
      teeny__gen_fail(g, a->loc, "block dim %lld is not a power of two (in %s)", (long long)v,
                      e->name);
    block[d] = (int)v;
    numel *= v;
  }
  if (numel > TEENY_MAX_TILE_NUMEL)
    teeny__gen_fail(g, e->loc, "%s: a block of %ld elements exceeds the limit of %d", e->name,
                    numel, TEENY_MAX_TILE_NUMEL);
  if (k == TEENY_DESC_BLOCK) { /* order: a permutation (a layout hint only) */
    bool seen[TEENY_MAX_RANK] = {false};
    for (int d = 0; d < rank; d++) {
      const teeny_expr *a = e->args[1 + 4 * rank + d];
      int64_t v = teeny__gen_const_int(g, a, "an order entry");
      if (v < 0 || v >= rank || seen[v])
        teeny__gen_fail(g, a->loc, "make_block_ptr's order must be a permutation of 0 .. %d",
                        rank - 1);
      seen[v] = true;
    }
  }
  const teeny_struct *st = specialise(g, k, base.type.pointee, rank, block, e->loc);
  gval *lv = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)st->nleaves);
  lv[L_BASE] = base;
  for (int d = 0; d < TEENY_MAX_RANK; d++) {
    bool used = d < rank;
    lv[L_SHAPE + d] = used ? int_scalar(g, e, 1 + d, TEENY_DT_I32, "shape")
                           : teeny__gv_int(TEENY_DT_I32, 1);
    lv[L_STRIDE + d] = used ? int_scalar(g, e, 1 + rank + d, TEENY_DT_I64, "stride")
                            : teeny__gv_int(TEENY_DT_I64, 0);
    if (k == TEENY_DESC_BLOCK)
      lv[L_OFF + d] = used ? int_scalar(g, e, 1 + 2 * rank + d, TEENY_DT_I32, "offset")
                           : teeny__gv_int(TEENY_DT_I32, 0);
  }
  return teeny__gv_struct(st, lv);
}

/* ---- kernel parameters -------------------------------------------------------------------- */

/* The next parameter of f is a tensormap for blocks of this shape (its
 * bit in f->tensormaps; its block for teeny_spec_param_block). */
static void record_tensormap(teeny_ir_func *f, int rank, const int *block) {
  f->tensormaps |= 1ull << f->nparams;
  if (!f->tmaps)
    f->tmaps = teeny__arena_alloc(f->arena, sizeof *f->tmaps * 64);
  struct teeny_ir_tmap *t = &f->tmaps[f->nparams];
  t->rank = rank;
  for (int d = 0; d < rank; d++)
    t->block[d] = block[d];
}

gval teeny__gen_desc_param(gen *g, const teeny_param_decl *p) {
  const teeny_tyspec *ts = p->type;
  const teeny_struct *fam = teeny__tyspec_struct(g->prog, ts);
  teeny_dtype elem = teeny__tyspec_dtype(fam->leaf_type[0], g->b);
  int rank = ts->ndblock, block[TEENY_MAX_RANK];
  long numel = 1;
  for (int d = 0; d < rank; d++) {
    int64_t v = teeny__gen_const_int(g, ts->dblock[d], "a block dim");
    if (v <= 0 || (v & (v - 1)) || v > TEENY_MAX_TILE_NUMEL)
      teeny__gen_fail(g, ts->dblock[d]->loc, "block dim %lld of '%s' is not a power of two",
                      (long long)v, p->name);
    block[d] = (int)v;
    numel *= v;
  }
  if (numel > TEENY_MAX_TILE_NUMEL)
    teeny__gen_fail(g, p->loc, "'%s': a block of %ld elements exceeds the limit of %d", p->name,
                    numel, TEENY_MAX_TILE_NUMEL);
  if (g->f->nparams >= 64)
    teeny__gen_fail(g, p->loc, "tensor_desc parameter '%s' comes after 64 other launch "
                    "parameters (each descriptor takes 1 + 2 x rank)", p->name);
  const teeny_struct *st = specialise(g, TEENY_DESC_TENSOR, elem, rank, block, p->loc);
  gval *lv = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)st->nleaves);
  for (int d = 0; d < TEENY_MAX_RANK; d++) {
    lv[L_SHAPE + d] = teeny__gv_int(TEENY_DT_I32, 1);
    lv[L_STRIDE + d] = teeny__gv_int(TEENY_DT_I64, d == rank - 1); /* the last is 1 */
  }
  for (int j = 0; j < teeny__param_nslots(p); j++) {
    const char *name;
    teeny_param_kind kind;
    teeny_dtype dt;
    teeny__param_slot(g->cx->arena, p, j, elem, &name, &kind, &dt);
    teeny_type t = kind == TEENY_PARAM_SCALAR    ? teeny__type_scalar(dt)
                   : kind == TEENY_PARAM_POINTER ? teeny__type_ptr(dt)
                                                 : teeny__type_ptr(TEENY_DT_U8);
    if (kind == TEENY_PARAM_TENSORMAP)
      record_tensormap(g->f, rank, block);
    gval v = teeny__gv_value(g, teeny__ir_param_add(g->f, name, t));
    if (j >= 1)
      lv[j == 1 ? L_BASE : j < 2 + rank ? L_SHAPE + j - 2 : L_STRIDE + j - 2 - rank] = v;
  }
  return teeny__gv_struct(st, lv);
}

/* 1 + the tensormap parameter of d when d is still a tensor_desc kernel
 * parameter, unchanged (its base, shapes and strides the parameters that
 * follow the tensormap, its last stride 1); else 0. */
static int tensormap_of(gen *g, gval d) {
  const teeny_ir_func *f = g->f;
  const teeny_region *body = f->body;
  if (d.st->desc != TEENY_DESC_TENSOR || d.leaves[L_BASE].is_const)
    return 0;
  int r = d.st->info->rank, at = -1;
  for (int i = 1; i < f->nparams; i++)
    if (body->args[i] == d.leaves[L_BASE].id && i < 64 && (f->tensormaps >> (i - 1) & 1))
      at = i;
  if (at < 0 || at + 2 * r - 1 >= f->nparams)
    return 0;
  for (int k = 0; k < r; k++) {
    const gval *sh = &d.leaves[L_SHAPE + k], *sd = &d.leaves[L_STRIDE + k];
    if (sh->is_const || sh->id != body->args[at + 1 + k])
      return 0;
    if (k < r - 1 ? sd->is_const || sd->id != body->args[at + 1 + r + k]
                  : !sd->is_const || sd->c.i != 1)
      return 0;
  }
  return at; /* 1 + (at - 1) */
}

/* When d is a kernel parameter: 1 + its tensormap parameter, with the
 * offsets' value ids in ids (made before the access that names them). */
static int tma_offsets(gen *g, gval d, const gval *off, teeny_loc loc, int *ids) {
  int tm = tensormap_of(g, d);
  for (int k = 0; tm && k < d.st->info->rank; k++)
    ids[k] = teeny__gen_id(g, off[k], loc);
  return tm;
}

static void mark_tma(teeny_op *op, int tm, const int *ids, int rank) {
  op->tma = tm;
  for (int k = 0; tm && k < rank; k++)
    op->tma_off[k] = ids[k];
}

/* ---- accessing ------------------------------------------------------------------------------ */

/* Argument i of e as a descriptor of kind k. */
static gval need_desc(gen *g, const teeny_expr *e, int i, teeny_desc_kind k) {
  gval d = teeny__gen_expr_any(g, e->args[i]);
  if (!d.st || d.st->desc != k || !d.st->info)
    teeny__gen_fail(g, e->args[i]->loc, "%s needs a %s (from %s), not %s", e->name,
                    kind_name(k),
                    k == TEENY_DESC_BLOCK ? "make_block_ptr" : "make_tensor_descriptor",
                    d.st ? d.st->name : teeny__gen_tstr(g, d.type));
  return d;
}

/* The `given` offsets of e from argument 1 on (one i32 per dim of st). */
static void offsets_of(gen *g, const teeny_expr *e, int given, const teeny_struct *st, gval *off) {
  if (given != st->info->rank)
    teeny__gen_fail(g, e->loc, "%s of a %s takes %d offset%s (one per dim), not %d", e->name,
                    st->name, st->info->rank, st->info->rank == 1 ? "" : "s", given);
  for (int k = 0; k < given; k++)
    off[k] = int_scalar(g, e, 1 + k, TEENY_DT_I32, "offset");
}

/* i times the stride (i64; i as it is for the constant stride 1). */
static gval times_stride(gen *g, gval i, gval stride, teeny_loc loc) {
  if (stride.is_const && stride.c.i == 1)
    return i;
  return teeny__gen_binop(g, OP_MUL, teeny__gen_convert(g, i, TEENY_DT_I64, loc), stride, loc);
}

/* The pointers and the in-bounds mask of d's block at offsets off[0..rank)
 * (i32 scalars).  The pointers are built as Q + S: Q = base + sum_k i_k *
 * stride_k, the same wherever the block is, and S = sum_k o_k * stride_k,
 * one scalar (so a loop over the offsets recomputes a tile that moves by
 * an affine step: the code generator's versioned copies, ctrl.c). */
static void block_at(gen *g, gval d, const gval *off, teeny_loc loc, gval *ptr, gval *mask) {
  const teeny_desc_info *in = d.st->info;
  int r = in->rank;
  gval p = d.leaves[L_BASE], m = teeny__gv_void(), sum = teeny__gv_int(TEENY_DT_I64, 0);
  for (int k = 0; k < r; k++) {
    int n = in->block[k], s[TEENY_MAX_RANK];
    teeny_type rt = teeny__type_tile(TEENY_DT_I32, 1, &n);
    gval i = teeny__gen_op(g, IR_MAKE_RANGE, NULL, 0, rt, loc);
    g->f->values[i.id].def->start = 0;
    g->f->values[i.id].def->end = n;
    if (r > 1) { /* [1, .., n, .., 1] */
      for (int j = 0; j < r; j++)
        s[j] = j == k ? n : 1;
      i = teeny__gen_op(g, IR_RESHAPE, &i, 1, teeny__type_tile(TEENY_DT_I32, r, s), loc);
    }
    gval stride = d.leaves[L_STRIDE + k];
    p = teeny__gen_binop(g, OP_ADD, p, times_stride(g, i, stride, loc), loc);
    sum = teeny__gen_binop(g, OP_ADD, sum,
                           teeny__gen_convert(g, times_stride(g, off[k], stride, loc),
                                              TEENY_DT_I64, loc),
                           loc);
    /* 0 <= o + i < shape in one unsigned comparison */
    i = teeny__gen_binop(g, OP_ADD, i, off[k], loc);
    gval ok = teeny__gen_binop(g, OP_LT, teeny__gen_convert(g, i, TEENY_DT_U32, loc),
                               teeny__gen_convert(g, d.leaves[L_SHAPE + k], TEENY_DT_U32, loc),
                               loc);
    m = m.type.dt == TEENY_DT_VOID ? ok : teeny__gen_binop(g, OP_BITAND, m, ok, loc);
  }
  p = teeny__gen_binop(g, OP_ADD, p, sum, loc);
  *ptr = teeny__gen_broadcast(g, p, r, in->block, loc);
  *mask = teeny__gen_broadcast(g, m, r, in->block, loc);
}

static gval load_block(gen *g, gval d, const gval *off, teeny_loc loc) {
  gval a[2];
  int ids[TEENY_MAX_RANK], tm = tma_offsets(g, d, off, loc, ids);
  block_at(g, d, off, loc, &a[0], &a[1]);
  gval v = teeny__gen_op(g, IR_LOAD, a, 2, teeny__type_with_dtype(a[0].type, a[0].type.pointee),
                         loc);
  mark_tma(g->f->values[v.id].def, tm, ids, d.st->info->rank);
  return v;
}

static void store_block(gen *g, gval d, const gval *off, gval v, teeny_loc loc) {
  gval a[3];
  int tids[TEENY_MAX_RANK], tm = tma_offsets(g, d, off, loc, tids);
  block_at(g, d, off, loc, &a[0], &a[2]);
  if (v.type.dt == TEENY_DT_PTR || v.type.dt == TEENY_DT_VOID || v.st)
    teeny__gen_fail(g, loc, "a descriptor stores numbers, not %s",
                    v.st ? v.st->name : teeny__gen_tstr(g, v.type));
  v = teeny__gen_convert(g, v, a[0].type.pointee, loc);
  a[1] = teeny__gen_broadcast(g, v, a[0].type.rank, a[0].type.shape, loc);
  int ids[3];
  for (int i = 0; i < 3; i++)
    ids[i] = teeny__gen_id(g, a[i], loc);
  teeny_op *op = teeny__ir_op_add(g->f, g->cur, IR_STORE, loc, ids, 3, NULL, 0);
  if (!op)
    teeny__gen_fail(g, loc, "kernel too large");
  mark_tma(op, tm, tids, d.st->info->rank);
}

/* load_tensor_descriptor(d, offsets...) */
gval teeny__gen_desc_load(gen *g, const teeny_expr *e) {
  gval d = need_desc(g, e, 0, TEENY_DESC_TENSOR), off[TEENY_MAX_RANK];
  offsets_of(g, e, e->nargs - 1, d.st, off);
  return load_block(g, d, off, e->loc);
}

/* store_tensor_descriptor(d, offsets..., value) */
gval teeny__gen_desc_store(gen *g, const teeny_expr *e) {
  gval d = need_desc(g, e, 0, TEENY_DESC_TENSOR), off[TEENY_MAX_RANK];
  offsets_of(g, e, e->nargs - 2, d.st, off);
  gval v = teeny__gen_expr_any(g, e->args[e->nargs - 1]);
  store_block(g, d, off, v, e->args[e->nargs - 1]->loc);
  return teeny__gv_void();
}

/* advance(p, offsets...): p with each offset added */
gval teeny__gen_advance(gen *g, const teeny_expr *e) {
  gval d = need_desc(g, e, 0, TEENY_DESC_BLOCK), off[TEENY_MAX_RANK];
  offsets_of(g, e, e->nargs - 1, d.st, off);
  gval *lv = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)d.st->nleaves);
  memcpy(lv, d.leaves, sizeof(gval) * (size_t)d.st->nleaves);
  for (int k = 0; k < d.st->info->rank; k++)
    lv[L_OFF + k] = teeny__gen_binop(g, OP_ADD, lv[L_OFF + k], off[k], e->loc);
  return teeny__gv_struct(d.st, lv);
}

/* load(p) and store(p, value) of a block pointer p (the first argument,
 * already evaluated: d): the block at p's offsets.  d is a descriptor
 * struct; a tensor descriptor is refused with where to go instead. */
static void need_block(gen *g, const teeny_expr *e, gval d, int nargs, const char *rest) {
  if (d.st->desc != TEENY_DESC_BLOCK || !d.st->info)
    teeny__gen_fail(g, e->args[0]->loc, "%s needs a pointer or a block pointer, not %s%s%s%s",
                    e->name, d.st->name,
                    d.st->desc == TEENY_DESC_TENSOR ? " (a tensor descriptor uses " : "",
                    d.st->desc == TEENY_DESC_TENSOR ? e->name : "",
                    d.st->desc == TEENY_DESC_TENSOR ? "_tensor_descriptor)" : "");
  if (e->nargs != nargs)
    teeny__gen_fail(g, e->args[nargs]->loc, "%s of a block pointer takes no mask%s", e->name,
                    rest);
}

gval teeny__gen_block_load(gen *g, const teeny_expr *e, gval d) {
  need_block(g, e, d, 1, " or other: it reads the whole block, zeros outside the tensor");
  return load_block(g, d, d.leaves + L_OFF, e->loc);
}

gval teeny__gen_block_store(gen *g, const teeny_expr *e, gval d) {
  need_block(g, e, d, 2, ": it writes the part of the block inside the tensor");
  store_block(g, d, d.leaves + L_OFF, teeny__gen_expr_any(g, e->args[1]), e->args[1]->loc);
  return teeny__gv_void();
}
