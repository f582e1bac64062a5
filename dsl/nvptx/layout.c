/*
 * dsl/nvptx/layout.c — linear layouts (see codegen.h): building
 * them, the algebra of shape ops on them, and the per-thread coordinates
 * they imply.
 *
 * Invariants: a layout's non-negative bits are distinct and cover every
 * flat-index bit of its shape (every element has a holder); -1 bits mark
 * duplicates.  Layouts are interned per compile, so two equal layouts are
 * the same pointer and the thread coordinates of each are computed once, in
 * the entry block.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/nvptx/codegen.h"

int teeny__cg_log2(long x) {
  int n = 0;
  while (x > 1) {
    x >>= 1;
    n++;
  }
  return n;
}

static int threads_log2(cg *g) { return CG_LANE_BITS + g->warp_bits; }

/* ---- flat index bits ---------------------------------------------------------- */

/* A tile's flat index is row-major: the last dim's bits lowest. */
static int dim_offset(int rank, const int *shape, int d) {
  int off = 0;
  for (int j = d + 1; j < rank; j++)
    off += teeny__cg_log2(shape[j]);
  return off;
}

int teeny__cg_flatbit(int rank, const int *shape, int d, int k) {
  return dim_offset(rank, shape, d) + k;
}

void teeny__cg_dimbit(int rank, const int *shape, int b, int *d, int *k) {
  int off = 0;
  for (int j = rank - 1; j > 0; j--) {
    int lg = teeny__cg_log2(shape[j]);
    if (b < off + lg) {
      *d = j;
      *k = b - off;
      return;
    }
    off += lg;
  }
  *d = 0;
  *k = b - off;
}

static const char *shape_text(char *buf, size_t n, int rank, const int *shape) {
  size_t m = 0;
  for (int i = 0; i < rank && m < n; i++)
    m += (size_t)snprintf(buf + m, n - m, "%s%d", i ? ", " : "", shape[i]);
  return buf;
}

/* ---- interning --------------------------------------------------------------------- */

static bool layout_eq(const cg_layout *a, const cg_layout *b) {
  if (a->rank != b->rank || a->nreg != b->nreg || a->nwarp != b->nwarp)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i])
      return false;
  return memcmp(a->reg, b->reg, (size_t)a->nreg) == 0 &&
         memcmp(a->lane, b->lane, CG_LANE_BITS) == 0 &&
         memcmp(a->warp, b->warp, (size_t)a->nwarp) == 0;
}

const cg_layout *teeny__cg_intern(cg *g, const cg_layout *L) {
  for (int i = 0; i < g->nlayouts; i++)
    if (layout_eq(g->layouts[i], L))
      return g->layouts[i];
  if (L->nreg > CG_MAX_REGS_LOG2) {
    char dims[64];
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "a tile of shape [%s] would need %ld values per thread with "
                   "num_warps=%d (the limit is %d); use more warps or smaller tiles",
                   shape_text(dims, sizeof dims, L->rank, L->shape), 1L << L->nreg,
                   g->num_warps, 1 << CG_MAX_REGS_LOG2);
  }
  if (g->nlayouts == g->caplayouts) {
    int cap = g->caplayouts ? 2 * g->caplayouts : 32;
    cg_layout **v = teeny__cg_alloc(g, sizeof *v * (size_t)cap);
    if (g->nlayouts)
      memcpy(v, g->layouts, sizeof *v * (size_t)g->nlayouts);
    g->layouts = v;
    g->caplayouts = cap;
  }
  cg_layout *c = teeny__cg_alloc(g, sizeof *c);
  *c = *L;
  c->tpart = NULL;
  c->owner = NULL;
  g->layouts[g->nlayouts++] = c;
  return c;
}

static void layout_init(cg *g, cg_layout *L, int rank, const int *shape) {
  memset(L, 0, sizeof *L);
  L->rank = rank;
  for (int i = 0; i < rank; i++)
    L->shape[i] = shape[i];
  L->nwarp = g->warp_bits;
  memset(L->lane, -1, sizeof L->lane);
  memset(L->warp, -1, sizeof L->warp);
}

static void push_reg(cg *g, cg_layout *L, int bit) {
  if (L->nreg >= CG_MAX_REG_BITS)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "tile too large for one thread block");
  L->reg[L->nreg++] = (signed char)bit;
}

/* ---- constructors ------------------------------------------------------------------ */

const cg_layout *teeny__cg_blocked(cg *g, int rank, const int *shape, int fast,
                                   int vec) {
  cg_layout L;
  layout_init(g, &L, rank, shape);
  int order[TEENY_MAX_RANK * 32], n = 0;
  for (int pass = 0; pass < rank; pass++) { /* fast first, then minor to major */
    int d = pass == 0 ? fast : rank - pass - (rank - pass <= fast);
    for (int k = 0; k < teeny__cg_log2(shape[d]); k++)
      order[n++] = teeny__cg_flatbit(rank, shape, d, k);
  }
  int i = 0, v = teeny__cg_log2(vec);
  for (; i < v && i < n; i++)
    push_reg(g, &L, order[i]);
  for (int k = 0; k < CG_LANE_BITS; k++)
    L.lane[k] = (signed char)(i < n ? order[i++] : -1);
  for (int k = 0; k < L.nwarp && k < CG_LANE_BITS; k++)
    L.warp[k] = (signed char)(i < n ? order[i++] : -1);
  for (; i < n; i++)
    push_reg(g, &L, order[i]);
  return teeny__cg_intern(g, &L);
}

static int elem_size(teeny_type t) {
  if (t.dt == TEENY_DT_PTR)
    return teeny_dtype_size(t.pointee);
  return t.dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(t.dt);
}

const cg_layout *teeny__cg_default(cg *g, teeny_type t) {
  int last = t.rank - 1;
  long numel = teeny__type_numel(t);
  long per_thread = numel >> threads_log2(g);
  int vec = 16 / elem_size(t);
  if (vec > t.shape[last])
    vec = t.shape[last];
  if (per_thread < 1)
    per_thread = 1;
  if (vec > per_thread)
    vec = (int)per_thread;
  return teeny__cg_blocked(g, t.rank, t.shape, last, vec);
}

/* Map every bit of L through fn (flat bit -> new flat bit or -1); register
 * bits that become -1 are dropped when compact. */
typedef int (*bitmap_fn)(const void *ctx, int bit);

static const cg_layout *remap(cg *g, const cg_layout *L, int rank,
                              const int *shape, bitmap_fn fn, const void *ctx,
                              bool compact) {
  cg_layout R;
  layout_init(g, &R, rank, shape);
  R.nwarp = L->nwarp;
  for (int i = 0; i < L->nreg; i++) {
    int b = L->reg[i] < 0 ? -1 : fn(ctx, L->reg[i]);
    if (b >= 0 || !compact)
      push_reg(g, &R, b);
  }
  for (int k = 0; k < CG_LANE_BITS; k++)
    R.lane[k] = (signed char)(L->lane[k] < 0 ? -1 : fn(ctx, L->lane[k]));
  for (int k = 0; k < L->nwarp; k++)
    R.warp[k] = (signed char)(L->warp[k] < 0 ? -1 : fn(ctx, L->warp[k]));
  return teeny__cg_intern(g, &R);
}

typedef struct bitctx {
  int srank, drank;
  const int *sshape, *dshape;
  int axis;
  int perm[TEENY_MAX_RANK]; /* map_trans: source dim d goes to dim perm[d] */
} bitctx;

static int map_identity(const void *c, int b) {
  (void)c;
  return b;
}

static int map_slice(const void *c, int b) {
  const bitctx *x = c;
  int d, k;
  teeny__cg_dimbit(x->srank, x->sshape, b, &d, &k);
  if (d == x->axis)
    return -1;
  return teeny__cg_flatbit(x->drank, x->dshape, d > x->axis ? d - 1 : d, k);
}

/* trans: source dim d becomes destination dim perm[d] */
static int map_trans(const void *c, int b) {
  const bitctx *x = c;
  int d, k;
  teeny__cg_dimbit(x->srank, x->sshape, b, &d, &k);
  return teeny__cg_flatbit(x->drank, x->dshape, x->perm[d], k);
}

/* The bit map of a trans from the layout of `from` (its result when
 * `back`, else its source). */
static void trans_ctx(bitctx *x, const teeny_op *op, bool back) {
  int perm[TEENY_MAX_RANK];
  teeny__ir_trans_perm(op, x->srank, perm);
  for (int i = 0; i < x->srank; i++) {
    if (back)
      x->perm[i] = perm[i]; /* result dim i is source dim perm[i] */
    else
      x->perm[perm[i]] = i;
  }
}

/* broadcast, destination -> source: stretched dims have no source bit */
static int map_bcast_back(const void *c, int b) {
  const bitctx *x = c;
  int d, k;
  teeny__cg_dimbit(x->srank, x->sshape, b, &d, &k);
  if (x->dshape[d] == 1)
    return -1;
  return teeny__cg_flatbit(x->drank, x->dshape, d, k);
}

/* broadcast, source -> destination */
static int map_bcast_fwd(const void *c, int b) {
  const bitctx *x = c;
  int d, k;
  teeny__cg_dimbit(x->srank, x->sshape, b, &d, &k);
  return teeny__cg_flatbit(x->drank, x->dshape, d, k);
}

const cg_layout *teeny__cg_slice(cg *g, const cg_layout *L, int axis) {
  int shape[TEENY_MAX_RANK] = {0}, n = 0;
  for (int d = 0; d < L->rank; d++)
    if (d != axis)
      shape[n++] = L->shape[d];
  bitctx x = {L->rank, n, L->shape, shape, axis, {0}};
  return remap(g, L, n, shape, map_slice, &x, true);
}

const cg_layout *teeny__cg_pullback(cg *g, const cg_layout *L,
                                    const teeny_op *op, teeny_type src) {
  bitctx x = {L->rank, src.rank, L->shape, src.shape, 0, {0}};
  switch (op->code) {
  case IR_EXPAND_DIMS:
  case IR_RESHAPE:
    return remap(g, L, src.rank, src.shape, map_identity, NULL, false);
  case IR_TRANS:
    trans_ctx(&x, op, true);
    return remap(g, L, src.rank, src.shape, map_trans, &x, false);
  case IR_BROADCAST:
    return remap(g, L, src.rank, src.shape, map_bcast_back, &x, false);
  default:
    teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: pullback through '%s'",
                   teeny__opcode_name(op->code));
  }
}

const cg_layout *teeny__cg_pushforward(cg *g, const cg_layout *L,
                                       const teeny_op *op, teeny_type dst) {
  bitctx x = {L->rank, dst.rank, L->shape, dst.shape, 0, {0}};
  switch (op->code) {
  case IR_EXPAND_DIMS:
  case IR_RESHAPE:
    return remap(g, L, dst.rank, dst.shape, map_identity, NULL, false);
  case IR_TRANS:
    trans_ctx(&x, op, false);
    return remap(g, L, dst.rank, dst.shape, map_trans, &x, false);
  case IR_BROADCAST: {
    /* the new bits go to lanes and warps that only held copies, then to
     * registers, so a broadcast of a reduction's result tends to get the
     * layout the reduction started from */
    cg_layout E;
    layout_init(g, &E, dst.rank, dst.shape);
    for (int i = 0; i < L->nreg; i++)
      if (L->reg[i] >= 0)
        push_reg(g, &E, map_bcast_fwd(&x, L->reg[i]));
    for (int k = 0; k < CG_LANE_BITS; k++)
      E.lane[k] = (signed char)(L->lane[k] < 0 ? -1 : map_bcast_fwd(&x, L->lane[k]));
    for (int k = 0; k < L->nwarp; k++)
      E.warp[k] = (signed char)(L->warp[k] < 0 ? -1 : map_bcast_fwd(&x, L->warp[k]));
    for (int d = 0; d < dst.rank; d++)
      if (L->shape[d] == 1)
        for (int k = 0; k < teeny__cg_log2(dst.shape[d]); k++) {
          signed char bit = (signed char)teeny__cg_flatbit(dst.rank, dst.shape, d, k);
          bool placed = false;
          for (int j = 0; j < CG_LANE_BITS && !placed; j++)
            if (E.lane[j] < 0)
              E.lane[j] = bit, placed = true;
          for (int j = 0; j < E.nwarp && !placed; j++)
            if (E.warp[j] < 0)
              E.warp[j] = bit, placed = true;
          if (!placed)
            push_reg(g, &E, bit);
        }
    return teeny__cg_intern(g, &E);
  }
  default:
    teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: pushforward through '%s'",
                   teeny__opcode_name(op->code));
  }
}

/* ---- queries ------------------------------------------------------------------------ */

bool teeny__cg_free_conv(const cg_layout *A, const cg_layout *B, int *map) {
  if (A == B) {
    if (map)
      for (long r = 0; r < (1L << B->nreg); r++)
        map[r] = (int)r;
    return true;
  }
  if (A->rank != B->rank || A->nwarp != B->nwarp)
    return false;
  for (int d = 0; d < A->rank; d++)
    if (A->shape[d] != B->shape[d])
      return false;
  if (memcmp(A->lane, B->lane, CG_LANE_BITS) ||
      memcmp(A->warp, B->warp, (size_t)A->nwarp))
    return false;
  int where[CG_MAX_REG_BITS];
  for (int j = 0; j < B->nreg; j++) {
    where[j] = -1;
    if (B->reg[j] < 0)
      continue;
    for (int i = 0; i < A->nreg; i++)
      if (A->reg[i] == B->reg[j])
        where[j] = i;
    if (where[j] < 0)
      return false;
  }
  if (map)
    for (long r = 0; r < (1L << B->nreg); r++) {
      int a = 0;
      for (int j = 0; j < B->nreg; j++)
        if ((r >> j & 1) && where[j] >= 0)
          a |= 1 << where[j];
      map[r] = a;
    }
  return true;
}

long teeny__cg_reg_bits(const cg_layout *L, long r) {
  long bits = 0;
  for (int j = 0; j < L->nreg; j++)
    if ((r >> j & 1) && L->reg[j] >= 0)
      bits |= 1L << L->reg[j];
  return bits;
}

bool teeny__cg_reg_owner(const cg_layout *L, long r) {
  for (int j = 0; j < L->nreg; j++)
    if ((r >> j & 1) && L->reg[j] < 0)
      return false;
  return true;
}

long teeny__cg_dup_src(const cg_layout *L, long r) {
  for (int j = 0; j < L->nreg; j++)
    if (L->reg[j] < 0)
      r &= ~(1L << j);
  return r;
}

int teeny__cg_run_bits(const cg_layout *L, int d) {
  int n = 0;
  while (n < L->nreg && n < teeny__cg_log2(L->shape[d]) &&
         L->reg[n] == teeny__cg_flatbit(L->rank, L->shape, d, n))
    n++;
  return n;
}

/* ---- thread coordinates (emitted once per layout in the entry block) ------------- */

static LLVMValueRef or_disjoint(cg *g, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef v = LLVMBuildOr(g->b, a, b, "");
  if (LLVMIsAInstruction(v))
    LLVMSetIsDisjoint(v, 1);
  return v;
}

/* OR of ((id >> k) & 1) << bits[k], taking runs of consecutive bits at once */
static LLVMValueRef scatter_bits(cg *g, LLVMValueRef id, const signed char *bits,
                                 int n, LLVMValueRef acc) {
  for (int k = 0; k < n;) {
    if (bits[k] < 0) {
      k++;
      continue;
    }
    int m = 1;
    while (k + m < n && bits[k + m] == bits[k] + m)
      m++;
    LLVMValueRef f = LLVMBuildLShr(g->b, id, teeny__cg_i32(g, k), "");
    f = LLVMBuildAnd(g->b, f, teeny__cg_i32(g, (1 << m) - 1), "");
    f = LLVMBuildShl(g->b, f, teeny__cg_i32(g, bits[k]), "");
    acc = or_disjoint(g, acc, f);
    k += m;
  }
  return acc;
}

LLVMValueRef teeny__cg_tpart(cg *g, const cg_layout *L) {
  cg_layout *M = (cg_layout *)L; /* caches live in the interned copy */
  if (M->tpart)
    return M->tpart;
  LLVMBuilderRef keep = g->b;
  g->b = g->pb;
  LLVMValueRef t = scatter_bits(g, g->lane, L->lane, CG_LANE_BITS, teeny__cg_i32(g, 0));
  t = scatter_bits(g, g->warp, L->warp, L->nwarp, t);
  g->b = keep;
  M->tpart = t;
  return t;
}

LLVMValueRef teeny__cg_owner(cg *g, const cg_layout *L) {
  cg_layout *M = (cg_layout *)L;
  if (M->owner)
    return M->owner;
  int lm = 0, wm = 0;
  for (int k = 0; k < CG_LANE_BITS; k++)
    if (L->lane[k] < 0)
      lm |= 1 << k;
  for (int k = 0; k < L->nwarp; k++)
    if (L->warp[k] < 0)
      wm |= 1 << k;
  if (!lm && !wm)
    return M->owner = teeny__cg_bool(g, true);
  LLVMBuilderRef keep = g->b;
  g->b = g->pb;
  LLVMValueRef both = LLVMBuildOr(
      g->b, LLVMBuildAnd(g->b, g->lane, teeny__cg_i32(g, lm), ""),
      LLVMBuildShl(g->b, LLVMBuildAnd(g->b, g->warp, teeny__cg_i32(g, wm), ""),
                   teeny__cg_i32(g, 5), ""),
      "");
  M->owner = LLVMBuildICmp(g->b, LLVMIntEQ, both, teeny__cg_i32(g, 0), "owner");
  g->b = keep;
  return M->owner;
}

/* The thread part for a recomputation: an opaque copy (an asm with side
 * effects is never merged or hoisted), one per layout per recomputation. */
static LLVMValueRef fresh_tpart(cg *g, const cg_layout *L) {
  for (int i = 0; i < g->nfresh; i++)
    if (g->fresh_L[i] == L)
      return g->fresh_tp[i];
  LLVMValueRef t = teeny__cg_tpart(g, L);
  if (g->emu || g->nfresh == 8)
    return t;
  t = teeny__cg_asm(g, g->t_i32, "mov.b32 $0, $1;", "=r,r", &t, 1, true);
  g->fresh_L[g->nfresh] = L;
  g->fresh_tp[g->nfresh++] = t;
  return t;
}

LLVMValueRef teeny__cg_flat(cg *g, const cg_layout *L, long r) {
  LLVMValueRef t = g->fresh_from ? fresh_tpart(g, L) : teeny__cg_tpart(g, L);
  return or_disjoint(g, t, teeny__cg_i32(g, teeny__cg_reg_bits(L, r)));
}

LLVMValueRef teeny__cg_coord(cg *g, const cg_layout *L, LLVMValueRef flat, int d) {
  if (L->rank == 1)
    return flat;
  int off = dim_offset(L->rank, L->shape, d);
  if (off)
    flat = LLVMBuildLShr(g->b, flat, teeny__cg_i32(g, off), "");
  if (d == 0)
    return flat;
  return LLVMBuildAnd(g->b, flat, teeny__cg_i32(g, L->shape[d] - 1), "");
}

const char *teeny__cg_layout_str(cg *g, const cg_layout *L) {
  char buf[512];
  int n = 0;
  n += snprintf(buf + n, sizeof buf - (size_t)n, "[");
  for (int i = 0; i < L->rank; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", i ? "," : "", L->shape[i]);
  n += snprintf(buf + n, sizeof buf - (size_t)n, "] reg:");
  for (int i = 0; i < L->nreg && n < 400; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, " %d", L->reg[i]);
  n += snprintf(buf + n, sizeof buf - (size_t)n, " lane:");
  for (int i = 0; i < CG_LANE_BITS && n < 450; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, " %d", L->lane[i]);
  n += snprintf(buf + n, sizeof buf - (size_t)n, " warp:");
  for (int i = 0; i < L->nwarp && n < 500; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, " %d", L->warp[i]);
  return teeny__arena_strdup(&g->arena, buf);
}
