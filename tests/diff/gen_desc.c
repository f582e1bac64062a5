/*
 * tests/diff/gen_desc.c — block loads and stores through tensor
 * descriptors (docs/dsl.md, "Tensor descriptors and block pointers"): the
 * program's tile read with load_tensor_descriptor or written with
 * store_tensor_descriptor, through a descriptor the kernel makes
 * (make_tensor_descriptor) or one the client passes (a tensor_desc(T,
 * block...) parameter: NAME_tensormap, NAME_base, NAME_shape<k>,
 * NAME_stride<k>; the GPU engine encodes its tensormap, so that on sm_90+
 * its blocks move by the TMA where the code generator allows it).
 *
 * A quarter of them are block pointers instead (make_block_ptr, sometimes
 * moved by advance, then load(p) and store(p, v)).
 *
 * The descriptor views a buffer as a [rows, cols] tensor with a row
 * stride (1-D: [len]) a few elements off the kernel's problem size, so
 * that blocks overhang its edges; the block is the program's tile shifted
 * by a few elements (sometimes by 16 bytes, which keeps the TMA's
 * alignment), the same shift for every program, so stores stay disjoint.
 * What a load reads outside the tensor is zero; what a store would write
 * there is dropped.
 */
#include <stdio.h>
#include <string.h>

#include "tests/diff/gen_int.h"

typedef struct gview {
  int rank;
  long ext[2];     /* rows, cols (1-D: len) */
  long stride;     /* 2-D: the row stride, >= cols */
  dfz_shape tile;  /* the block: the program's tile */
} gview;

/* The program-id variable that places the tile along dim d of a view. */
static const char *program_var(const gview *v, int d) {
  return v->rank == 1 ? "pid" : d == 0 ? "pm" : "pn";
}

static long at_least_1(long v) { return v < 1 ? 1 : v; }

/* Extents near the kernel's problem size; rows of a multiple of 16 bytes
 * half of the time (what the TMA needs). */
static void view_pick(gen *g, teeny_dtype dt, gview *v) {
  if (g->lay == LAY_1D) {
    v->rank = 1;
    v->ext[0] = at_least_1(g->n + dfz_range(&g->r, -3, 3));
    v->stride = 1;
    v->tile = dfz_shape1(g->dB);
    return;
  }
  v->rank = 2;
  v->ext[0] = at_least_1(g->R + dfz_range(&g->r, -2, 2));
  v->ext[1] = at_least_1(g->C + dfz_range(&g->r, -2, 2));
  long per16 = 16 / dfz_esize(dt);
  if (dfz_chance(&g->r, 50))
    v->stride = (v->ext[1] + per16 - 1) / per16 * per16;
  else
    v->stride = v->ext[1] + dfz_range(&g->r, 0, 3);
  v->tile = dfz_shape2(g->dBM, g->dBN);
}

static long view_elems(const gview *v) {
  return v->rank == 1 ? v->ext[0] : (v->ext[0] - 1) * v->stride + v->ext[1];
}

/* "37", or a kernel scalar plus a few ("(R + 1)") when it is that. */
static const char *extent_text(gen *g, long value, const char *scalar, long scalar_value) {
  long d = value - scalar_value;
  if (dfz_chance(&g->r, 40) || d < -3 || d > 3)
    return dfz_printf(&g->p->arena, "%ld", value);
  if (d == 0)
    return scalar;
  return dfz_printf(&g->p->arena, "(%s %c %ld)", scalar, d < 0 ? '-' : '+', d < 0 ? -d : d);
}

/* The const naming dim d of the tile (the block shape of the type). */
static const char *block_name(gen *g, int d) {
  return g->p->meta.consts[g->p->dims[d].ca].name;
}

static dfz_expr *desc_expr(gen *g, const char *text, teeny_dtype dt) {
  dfz_expr *e = dfz_expr_new(g->p, EK_VAR, OP_CALL, TEENY_DT_PTR, dfz_scalar_shape());
  e->pointee = dt;
  e->text = (char *)text;
  return g_pin(e);
}

/* make_tensor_descriptor(b, extents..., strides..., block...) as text. */
static dfz_expr *made_desc(gen *g, gbuf *b, const gview *v) {
  const char *name = g_buf_name(g, b);
  char *t;
  if (v->rank == 1) {
    t = dfz_printf(&g->p->arena, "make_tensor_descriptor(%s, %s, 1, %s)", name,
                   extent_text(g, v->ext[0], "n", g->n), block_name(g, v->tile.d[0]));
  } else {
    t = dfz_printf(&g->p->arena, "make_tensor_descriptor(%s, %s, %s, %s, 1, %s, %s)", name,
                   extent_text(g, v->ext[0], "R", g->R), extent_text(g, v->ext[1], "C", g->C),
                   extent_text(g, v->stride, "S", g->S), block_name(g, v->tile.d[0]),
                   block_name(g, v->tile.d[1]));
  }
  return desc_expr(g, t, b->dt);
}

/* make_block_ptr(b, extents..., strides..., offsets..., block..., order...)
 * as text (the older API: the offsets are the pointer's), sometimes made
 * at other offsets and moved there by advance. */
static char *block_ptr_text(gen *g, gbuf *b, const gview *v, const long *sft) {
  const dfz_prog *p = g->p;
  const char *name = g_buf_name(g, b);
  long back[2] = {0, 0};
  bool adv = dfz_chance(&g->r, 40);
  for (int k = 0; adv && k < v->rank; k++)
    back[k] = dfz_range(&g->r, -2, 2);
  char o[2][160];
  for (int k = 0; k < v->rank; k++) { /* the offset as written, less what advance adds */
    snprintf(o[k], sizeof o[k], "%s * %s + %ld", program_var(v, k), p->dims[v->tile.d[k]].text,
             sft[k] - back[k]);
  }
  char *t;
  if (v->rank == 1)
    t = dfz_printf(&g->p->arena, "make_block_ptr(%s, %ld, 1, %s, %s, 0)", name, v->ext[0], o[0],
                   block_name(g, v->tile.d[0]));
  else
    t = dfz_printf(&g->p->arena, "make_block_ptr(%s, %ld, %ld, %ld, 1, %s, %s, %s, %s, 1, 0)",
                   name, v->ext[0], v->ext[1], v->stride, o[0], o[1], block_name(g, v->tile.d[0]),
                   block_name(g, v->tile.d[1]));
  if (!adv)
    return t;
  return v->rank == 1 ? dfz_printf(&g->p->arena, "advance(%s, %ld)", t, back[0])
                      : dfz_printf(&g->p->arena, "advance(%s, %ld, %ld)", t, back[0], back[1]);
}

/* A tensor_desc parameter over a new buffer (an input of dt, or an output
 * of dt): its 1 + 2 x rank launch parameters, in the entry point's order.
 * NULL (nothing added) when the kernel has no room for them. */
static dfz_expr *param_desc(gen *g, teeny_dtype dt, bool output, const gview *v, gbuf **bp) {
  int need = 1 + 2 * v->rank;
  if (g->p->meta.nparams + need > DFZ_MAX_PARAMS - 10 || g->nbufs >= DFZ_MAX_PARAMS - 10)
    return NULL;
  dfz_param *tm = g_param_new(g, "td", false, dt);
  char base[12]; /* "td" and a number: room for the suffixes in DFZ_NAME_LEN */
  snprintf(base, sizeof base, "%.11s", tm->name);
  snprintf(tm->name, sizeof tm->name, "%s_tensormap", base);
  tm->desc_rank = v->rank;
  for (int d = 0; d < v->rank; d++)
    snprintf(tm->desc_block[d], DFZ_NAME_LEN, "%s", block_name(g, v->tile.d[d]));
  gbuf *b = output ? g_buf_new(g, "out", dt, BR_OUT) : g_buf_input_new(g, dt);
  b->desc_base = true;
  dfz_param *pa = &g->p->meta.params[b->pi];
  snprintf(pa->name, sizeof pa->name, "%s_base", base);
  pa->desc_part = true;
  for (int d = 0; d < v->rank; d++) {
    dfz_param *s = g_param_new(g, "sh", false, TEENY_DT_I32);
    snprintf(s->name, sizeof s->name, "%s_shape%c", base, (char)('0' + d)); /* d < 4 */
    s->ival = v->ext[d];
    s->desc_part = true;
  }
  for (int d = 0; d < 1 && d + 1 < v->rank; d++) { /* rank <= 2 */
    dfz_param *s = g_param_new(g, "st", false, TEENY_DT_I64);
    snprintf(s->name, sizeof s->name, "%s_stride%c", base, (char)('0' + d));
    s->ival = v->stride;
    s->desc_part = true;
  }
  *bp = b;
  return desc_expr(g, dfz_strdup(&g->p->arena, base), dt);
}

/* The block's offset along dim d: the program's tile origin, shifted. */
static dfz_expr *offset(gen *g, const gview *v, int d, long shift) {
  dfz_expr *o = gx_bin(g, OP_MUL, g_var_expr(g, program_var(v, d)), gx_dim_lit(g, v->tile.d[d]));
  if (o && shift)
    o = gx_bin(g, OP_ADD, o, gx_weak_lit(g, TEENY_DT_I32, shift));
  return g_pin(o);
}

/* Shifts of the block: mostly none, sometimes a few elements, sometimes
 * 16 bytes along the last dim. */
static void shifts(gen *g, teeny_dtype dt, const gview *v, long *sh) {
  for (int d = 0; d < v->rank; d++) {
    int k = dfz_below(&g->r, 100);
    long per16 = 16 / dfz_esize(dt);
    sh[d] = k < 55 ? 0 : k < 75 && d == v->rank - 1 ? (dfz_chance(&g->r, 50) ? per16 : -per16)
                                                    : dfz_range(&g->r, -3, 3);
  }
}

static bool desc_dtype_ok(teeny_dtype dt) { return dt != TEENY_DT_BOOL && dt != TEENY_DT_VOID; }

/* The descriptor for view v of a buffer of dt: a parameter (a new buffer)
 * or one made in the kernel over b_in (inputs) or a new output. */
static dfz_expr *pick_desc(gen *g, teeny_dtype dt, bool output, const gview *v, gbuf **bp) {
  dfz_expr *d = NULL;
  if (dfz_chance(&g->r, 50))
    d = param_desc(g, dt, output, v, bp);
  if (d)
    return d;
  if (g->p->meta.nparams > DFZ_MAX_PARAMS - 10)
    return NULL;
  *bp = output ? g_buf_new(g, "out", dt, BR_OUT) : g_buf_input(g, dt);
  return made_desc(g, *bp, v);
}

dfz_expr *g_desc_load(gen *g, teeny_dtype dt, dfz_shape sh) {
  gview v;
  if (g->in_helper || !desc_dtype_ok(dt) || sh.rank == 0)
    return NULL;
  view_pick(g, dt, &v);
  if (!g_fits(v.tile, sh))
    return NULL;
  long sft[2];
  if (dfz_chance(&g->r, 25)) { /* load(block pointer) */
    gbuf *b = g_buf_input(g, dt);
    shifts(g, dt, &v, sft);
    g_buf_need(b, view_elems(&v));
    dfz_expr *e = dfz_expr_new(g->p, EK_CALL, OP_LOAD, dt, v.tile);
    e->a[e->n++] = desc_expr(g, block_ptr_text(g, b, &v, sft), dt);
    e->f = dfz_fact_hull(b->cls, dfz_fact_const(0));
    g_use(g, DFZ_F_DESC);
    return e;
  }
  gbuf *b = NULL;
  dfz_expr *d = pick_desc(g, dt, false, &v, &b);
  if (!d)
    return NULL;
  g_buf_need(b, view_elems(&v));
  shifts(g, dt, &v, sft);
  dfz_expr *e = dfz_expr_new(g->p, EK_CALL, OP_LOAD_DESC, dt, v.tile);
  e->a[e->n++] = d;
  for (int k = 0; k < v.rank; k++)
    e->a[e->n++] = offset(g, &v, k, sft[k]);
  e->f = dfz_fact_hull(b->cls, dfz_fact_const(0)); /* zeros outside the tensor */
  g_use(g, DFZ_F_DESC);
  return e;
}

bool g_desc_store(gen *g, dfz_expr *value, const char *cat) {
  gview v;
  if (g->in_helper)
    return false;
  teeny_dtype dt = g_out_dtype(g, value);
  if (!desc_dtype_ok(dt))
    return false;
  view_pick(g, dt, &v);
  if (!g_fits(value->sh, v.tile))
    return false;
  gbuf *b = NULL;
  long sft[2];
  bool bp = dfz_chance(&g->r, 25) && g->p->meta.nparams <= DFZ_MAX_PARAMS - 10;
  dfz_expr *d = bp ? NULL : pick_desc(g, dt, true, &v, &b);
  if (!d && !bp)
    return false;
  if (bp)
    b = g_buf_new(g, "out", dt, BR_OUT);
  snprintf(g->p->meta.params[b->pi].cat, DFZ_NAME_LEN, "%s", cat);
  g_buf_need(b, view_elems(&v));
  shifts(g, dt, &v, sft);
  g_taint_cat(g, b, g_taint(g, value) | g->ctl_taint);
  dfz_expr *e;
  if (bp) { /* store(block pointer, value) */
    e = dfz_expr_new(g->p, EK_CALL, OP_STORE, TEENY_DT_VOID, v.tile);
    e->a[e->n++] = desc_expr(g, block_ptr_text(g, b, &v, sft), dt);
  } else {
    e = dfz_expr_new(g->p, EK_CALL, OP_STORE_DESC, TEENY_DT_VOID, v.tile);
    e->a[e->n++] = d;
    for (int k = 0; k < v.rank; k++)
      e->a[e->n++] = offset(g, &v, k, sft[k]);
  }
  e->a[e->n++] = value;
  g_store_emit(g, b, e, value);
  g_use(g, DFZ_F_DESC);
  return true;
}
