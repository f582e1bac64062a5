/*
 * dsl/nvptx/reduce.c — reduce and scan over one axis, with any combine
 * region (sum, max, argmax's (value, index) pairs, user functions).
 *
 * Reduce works in three levels, following where the axis's bits live in
 * the input layout: registers of one thread (a tree, in index order), lanes
 * of a warp (butterfly shuffles: every lane ends with the result), warps
 * (partials through shared memory; every thread then combines them in warp
 * order).  So every thread that held part of a row ends with the whole
 * result: a scalar result is uniform, a 2-D input gives the slice layout.
 *
 * Scan walks the axis's bits from least to most significant, keeping for
 * each element the scan so far (S) and the total of its aligned block (T);
 * a register bit pairs registers, a lane bit pairs lanes through shuffles,
 * a warp bit pairs threads through shared memory.
 *
 * Combines always take (earlier, later) operands, so a non-commutative
 * region still sees elements in order; regions that are one commutative op
 * skip the ordering selects.
 */
#include <string.h>

#include "dsl/nvptx/codegen.h"

#define CG_MAX_OPERANDS 8

/* ---- combine regions ----------------------------------------------------------------- */

void teeny__cg_combine(cg *g, const teeny_region *r, int n, LLVMValueRef *acc,
                       LLVMValueRef *x, LLVMValueRef *out) {
  int saved = teeny__cg_scope_push(g);
  for (int i = 0; i < n; i++) {
    teeny__cg_set_scalar(g, r->args[i], acc[i]);
    teeny__cg_set_scalar(g, r->args[n + i], x[i]);
  }
  teeny__cg_emit_region(g, r);
  const teeny_op *y = r->ops[r->nops - 1];
  for (int i = 0; i < n; i++)
    out[i] = teeny__cg_scalar(g, y->args[i]);
  teeny__cg_scope_pop(g, saved);
}

static bool commutative(const teeny_region *r, int n) {
  if (n != 1 || r->nops != 2 || r->ops[1]->code != IR_YIELD)
    return false;
  const teeny_op *o = r->ops[0];
  switch (o->code) {
  case IR_ADD: case IR_MUL: case IR_MIN: case IR_MAX: case IR_AND:
  case IR_OR: case IR_XOR:
    break;
  default:
    return false;
  }
  return o->nargs == 2 && r->ops[1]->nargs == 1 && r->ops[1]->args[0] == o->res[0] &&
         ((o->args[0] == r->args[0] && o->args[1] == r->args[1]) ||
          (o->args[0] == r->args[1] && o->args[1] == r->args[0]));
}

/* ---- shuffles ---------------------------------------------------------------------------- */

static LLVMValueRef shfl32(cg *g, LLVMValueRef v, int mask) {
  LLVMValueRef args[4] = {teeny__cg_i32(g, -1), v, teeny__cg_i32(g, mask),
                          teeny__cg_i32(g, 31)};
  bool f = LLVMTypeOf(v) == g->t_f32;
  return teeny__cg_intrin(g, f ? "llvm.nvvm.shfl.sync.bfly.f32"
                               : "llvm.nvvm.shfl.sync.bfly.i32",
                          NULL, 0, args, 4);
}

/* The value of lane ^ mask, any dtype. */
static LLVMValueRef shfl_xor(cg *g, LLVMValueRef v, teeny_dtype dt, int mask) {
  LLVMTypeRef t = LLVMTypeOf(v);
  int bits = dt == TEENY_DT_PTR ? 64 : teeny__dt_bits(dt);
  if (bits == 32)
    return t == g->t_f32 ? shfl32(g, v, mask)
                         : LLVMBuildBitCast(g->b, shfl32(g, LLVMBuildBitCast(g->b, v, g->t_i32, ""), mask), t, "");
  if (bits == 64) {
    LLVMValueRef i = dt == TEENY_DT_PTR ? LLVMBuildPtrToInt(g->b, v, g->t_i64, "")
                                         : LLVMBuildBitCast(g->b, v, g->t_i64, "");
    LLVMValueRef lo = shfl32(g, LLVMBuildTrunc(g->b, i, g->t_i32, ""), mask);
    LLVMValueRef hi = shfl32(g, LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, i, teeny__cg_i64(g, 32), ""),
                                               g->t_i32, ""), mask);
    LLVMValueRef r = LLVMBuildOr(g->b, LLVMBuildZExt(g->b, lo, g->t_i64, ""),
                                 LLVMBuildShl(g->b, LLVMBuildZExt(g->b, hi, g->t_i64, ""),
                                              teeny__cg_i64(g, 32), ""), "");
    return dt == TEENY_DT_PTR ? LLVMBuildIntToPtr(g->b, r, t, "") : LLVMBuildBitCast(g->b, r, t, "");
  }
  LLVMTypeRef it = LLVMIntTypeInContext(g->ctx, (unsigned)bits);
  LLVMValueRef i = LLVMBuildBitCast(g->b, v, it, "");
  LLVMValueRef s = shfl32(g, LLVMBuildZExt(g->b, i, g->t_i32, ""), mask);
  return LLVMBuildBitCast(g->b, LLVMBuildTrunc(g->b, s, it, ""), t, "");
}

/* ---- reduce ---------------------------------------------------------------------------------- */

typedef struct red {
  const teeny_op *op;
  const teeny_region *region;
  int n;                          /* operands */
  teeny_dtype dt[CG_MAX_OPERANDS];
  bool comm;                      /* one commutative op: no ordering needed */
} red;

static void combine(cg *g, const red *R, LLVMValueRef *a, LLVMValueRef *b,
                    LLVMValueRef *out) {
  teeny__cg_combine(g, R->region, R->n, a, b, out);
}

static bool on_axis(const cg_layout *L, int axis, int bit) {
  if (bit < 0)
    return false;
  int d, k;
  teeny__cg_dimbit(L->rank, L->shape, bit, &d, &k);
  return d == axis;
}

/* Tree over the axis registers of one output register. vals[i][r]. */
static void reduce_in_thread(cg *g, const red *R, const cg_layout *L, int axis,
                             LLVMValueRef **in, long base, LLVMValueRef *out) {
  int ax[CG_MAX_REG_BITS], nax = 0;
  for (int j = 0; j < L->nreg; j++)
    if (on_axis(L, axis, L->reg[j]))
      ax[nax++] = j;
  long m = 1L << nax;
  LLVMValueRef *t = teeny__cg_alloc(g, sizeof *t * (size_t)(m * R->n));
  for (long k = 0; k < m; k++) {
    long r = base;
    for (int i = 0; i < nax; i++)
      if (k >> i & 1)
        r |= 1L << ax[i];
    for (int o = 0; o < R->n; o++)
      t[k * R->n + o] = in[o][r];
  }
  for (long step = 1; step < m; step *= 2)
    for (long k = 0; k < m; k += 2 * step)
      combine(g, R, t + k * R->n, t + (k + step) * R->n, t + k * R->n);
  for (int o = 0; o < R->n; o++)
    out[o] = t[o];
}

/* Butterfly over the axis's lane bits; every lane ends with the result. */
static void reduce_lanes(cg *g, const red *R, const cg_layout *L, int axis,
                         LLVMValueRef *acc) {
  for (int k = 0; k < CG_LANE_BITS; k++) {
    if (!on_axis(L, axis, L->lane[k]))
      continue;
    LLVMValueRef other[CG_MAX_OPERANDS], lo[CG_MAX_OPERANDS], hi[CG_MAX_OPERANDS];
    for (int o = 0; o < R->n; o++)
      other[o] = shfl_xor(g, acc[o], R->dt[o], 1 << k);
    if (R->comm) {
      combine(g, R, acc, other, acc);
      continue;
    }
    LLVMValueRef upper = LLVMBuildICmp(
        g->b, LLVMIntNE, LLVMBuildAnd(g->b, g->lane, teeny__cg_i32(g, 1 << k), ""),
        teeny__cg_i32(g, 0), "");
    for (int o = 0; o < R->n; o++) {
      lo[o] = LLVMBuildSelect(g->b, upper, other[o], acc[o], "");
      hi[o] = LLVMBuildSelect(g->b, upper, acc[o], other[o], "");
    }
    combine(g, R, lo, hi, acc);
  }
}

/* Index of this warp along the axis's warp bits, and how many there are. */
static LLVMValueRef warp_axis_index(cg *g, const cg_layout *L, int axis, int *count) {
  LLVMValueRef idx = teeny__cg_i32(g, 0);
  int n = 0;
  for (int k = 0; k < L->nwarp; k++) {
    if (!on_axis(L, axis, L->warp[k]))
      continue;
    LLVMValueRef b = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, g->warp, teeny__cg_i32(g, k), ""),
                                  teeny__cg_i32(g, 1), "");
    idx = LLVMBuildOr(g->b, idx, LLVMBuildShl(g->b, b, teeny__cg_i32(g, n), ""), "");
    n++;
  }
  *count = 1 << n;
  return idx;
}

static int esize(teeny_dtype dt) {
  return dt == TEENY_DT_BOOL ? 1 : dt == TEENY_DT_PTR ? 8 : teeny_dtype_size(dt);
}

/* acc[o][i] for output register i: combine the partials of every warp. */
static void reduce_warps(cg *g, const red *R, const cg_layout *L, int axis,
                         const cg_layout *Lout, long nout, LLVMValueRef **acc) {
  int W;
  LLVMValueRef widx = warp_axis_index(g, L, axis, &W);
  if (W == 1)
    return;
  long numel_out = 1;
  if (Lout)
    for (int d = 0; d < Lout->rank; d++)
      numel_out *= Lout->shape[d];
  teeny__cg_smem_begin(g);
  int base[CG_MAX_OPERANDS];
  for (int o = 0; o < R->n; o++)
    base[o] = teeny__cg_smem_take(g, (int)(numel_out * W * esize(R->dt[o])), 16);
  LLVMValueRef *slot = teeny__cg_alloc(g, sizeof *slot * (size_t)nout);
  for (long i = 0; i < nout; i++) {
    LLVMValueRef flat = Lout ? teeny__cg_flat(g, Lout, i) : teeny__cg_i32(g, 0);
    slot[i] = LLVMBuildMul(g->b, flat, teeny__cg_i32(g, W), "");
    LLVMValueRef s = LLVMBuildAdd(g->b, slot[i], widx, "");
    for (int o = 0; o < R->n; o++) {
      LLVMValueRef off = LLVMBuildAdd(
          g->b, LLVMBuildMul(g->b, s, teeny__cg_i32(g, esize(R->dt[o])), ""),
          teeny__cg_i32(g, base[o]), "");
      teeny__cg_smem_store(g, teeny__cg_smem_ptr(g, off), R->dt[o], &acc[o][i], 1);
    }
  }
  teeny__cg_barrier(g);
  LLVMValueRef *t = teeny__cg_alloc(g, sizeof *t * (size_t)(W * R->n));
  for (long i = 0; i < nout; i++) {
    for (int w = 0; w < W; w++)
      for (int o = 0; o < R->n; o++) {
        LLVMValueRef s = LLVMBuildAdd(g->b, slot[i], teeny__cg_i32(g, w), "");
        LLVMValueRef off = LLVMBuildAdd(
            g->b, LLVMBuildMul(g->b, s, teeny__cg_i32(g, esize(R->dt[o])), ""),
            teeny__cg_i32(g, base[o]), "");
        teeny__cg_smem_load(g, teeny__cg_smem_ptr(g, off), R->dt[o], &t[w * R->n + o], 1);
      }
    for (int step = 1; step < W; step *= 2)
      for (int k = 0; k < W; k += 2 * step)
        combine(g, R, t + k * R->n, t + (k + step) * R->n, t + k * R->n);
    for (int o = 0; o < R->n; o++)
      acc[o][i] = t[o];
  }
}

static void red_init(cg *g, const teeny_op *op, red *R) {
  if (op->nargs > CG_MAX_OPERANDS)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED, "%s over more than %d tiles at once",
                   teeny__opcode_name(op->code), CG_MAX_OPERANDS);
  R->op = op;
  R->region = op->regions[0];
  R->n = op->nargs;
  for (int o = 0; o < R->n; o++)
    R->dt[o] = teeny__ir_type(g->f, op->args[o]).dt;
  R->comm = commutative(R->region, R->n);
}

void teeny__cg_emit_reduce(cg *g, const teeny_op *op) {
  red R;
  red_init(g, op, &R);
  const cg_layout *L = teeny__cg_use_layout(g, op->args[0]);
  LLVMValueRef *in[CG_MAX_OPERANDS], *acc[CG_MAX_OPERANDS];
  for (int o = 0; o < R.n; o++)
    in[o] = teeny__cg_get(g, op->args[o], L);
  const cg_layout *Lout = L->rank > 1 ? teeny__cg_slice(g, L, op->axis) : NULL;
  /* output registers: the input's register bits off the axis, in order */
  int oth[CG_MAX_REG_BITS], noth = 0;
  for (int j = 0; j < L->nreg; j++)
    if (L->reg[j] >= 0 && !on_axis(L, op->axis, L->reg[j]))
      oth[noth++] = j;
  long nout = 1L << noth;
  for (int o = 0; o < R.n; o++)
    acc[o] = teeny__cg_alloc(g, sizeof(LLVMValueRef) * (size_t)nout);
  for (long i = 0; i < nout; i++) {
    long base = 0;
    for (int k = 0; k < noth; k++)
      if (i >> k & 1)
        base |= 1L << oth[k];
    LLVMValueRef v[CG_MAX_OPERANDS];
    reduce_in_thread(g, &R, L, op->axis, in, base, v);
    reduce_lanes(g, &R, L, op->axis, v);
    for (int o = 0; o < R.n; o++)
      acc[o][i] = v[o];
  }
  reduce_warps(g, &R, L, op->axis, Lout, nout, acc);
  for (int o = 0; o < R.n; o++) {
    if (!Lout)
      teeny__cg_set_scalar(g, op->res[o], acc[o][0]);
    else
      teeny__cg_set(g, op->res[o], Lout, acc[o]);
  }
}

/* ---- scan ---------------------------------------------------------------------------------------- */

typedef struct scan_state {
  LLVMValueRef *S[CG_MAX_OPERANDS]; /* scan within the current block */
  LLVMValueRef *T[CG_MAX_OPERANDS]; /* total of the current block */
} scan_state;

/* Merge with the partner block whose totals are pt; `second` says whether
 * this element's block comes after the partner's (i1 value or constant). */
static void scan_merge(cg *g, const red *R, LLVMValueRef second, LLVMValueRef *pt,
                       LLVMValueRef *S, LLVMValueRef *T) {
  LLVMValueRef first_t[CG_MAX_OPERANDS], second_t[CG_MAX_OPERANDS];
  LLVMValueRef nt[CG_MAX_OPERANDS], ns[CG_MAX_OPERANDS];
  for (int o = 0; o < R->n; o++) {
    first_t[o] = LLVMBuildSelect(g->b, second, pt[o], T[o], "");
    second_t[o] = LLVMBuildSelect(g->b, second, T[o], pt[o], "");
  }
  combine(g, R, first_t, second_t, nt);
  combine(g, R, pt, S, ns);
  for (int o = 0; o < R->n; o++) {
    T[o] = nt[o];
    S[o] = LLVMBuildSelect(g->b, second, ns[o], S[o], "");
  }
}

static void scan_reg_bit(cg *g, const red *R, const cg_layout *L, int j, bool rev,
                         scan_state *st) {
  for (long r = 0; r < (1L << L->nreg); r++) {
    if ((r >> j & 1) || !teeny__cg_reg_owner(L, r))
      continue;
    long lo = r, hi = r | (1L << j);
    long first = rev ? hi : lo, second = rev ? lo : hi;
    LLVMValueRef ft[CG_MAX_OPERANDS], st2[CG_MAX_OPERANDS], ss[CG_MAX_OPERANDS];
    LLVMValueRef nt[CG_MAX_OPERANDS], ns[CG_MAX_OPERANDS];
    for (int o = 0; o < R->n; o++) {
      ft[o] = st->T[o][first];
      st2[o] = st->T[o][second];
      ss[o] = st->S[o][second];
    }
    combine(g, R, ft, st2, nt);
    combine(g, R, ft, ss, ns);
    for (int o = 0; o < R->n; o++) {
      st->T[o][lo] = st->T[o][hi] = nt[o];
      st->S[o][second] = ns[o];
    }
  }
}

/* Partner totals across a lane bit (shuffle) or a warp bit (shared memory). */
static void scan_thread_bit(cg *g, const red *R, const cg_layout *L, bool lane_bit,
                            int k, bool rev, scan_state *st) {
  long n = 1L << L->nreg;
  int nthreads = 32 * g->num_warps;
  LLVMValueRef **pt = teeny__cg_alloc(g, sizeof *pt * (size_t)R->n);
  for (int o = 0; o < R->n; o++)
    pt[o] = teeny__cg_alloc(g, sizeof(LLVMValueRef) * (size_t)n);
  LLVMValueRef id = lane_bit ? g->lane : g->warp;
  LLVMValueRef bit = LLVMBuildICmp(g->b, LLVMIntNE,
                                   LLVMBuildAnd(g->b, id, teeny__cg_i32(g, 1 << k), ""),
                                   teeny__cg_i32(g, 0), "");
  LLVMValueRef second = rev ? LLVMBuildNot(g->b, bit, "") : bit;
  if (lane_bit) {
    for (long r = 0; r < n; r++)
      if (teeny__cg_reg_owner(L, r))
        for (int o = 0; o < R->n; o++)
          pt[o][r] = shfl_xor(g, st->T[o][r], R->dt[o], 1 << k);
  } else {
    teeny__cg_smem_begin(g);
    LLVMValueRef partner = LLVMBuildXor(g->b, g->tid, teeny__cg_i32(g, 32 << k), "");
    for (int o = 0; o < R->n; o++) {
      int es = esize(R->dt[o]);
      int base = teeny__cg_smem_take(g, (int)(n * nthreads * es), 16);
      for (long r = 0; r < n; r++) {
        if (!teeny__cg_reg_owner(L, r))
          continue;
        LLVMValueRef slot = LLVMBuildAdd(g->b, g->tid, teeny__cg_i32(g, (int)(r * nthreads)), "");
        LLVMValueRef off = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, slot, teeny__cg_i32(g, es), ""),
                                        teeny__cg_i32(g, base), "");
        teeny__cg_smem_store(g, teeny__cg_smem_ptr(g, off), R->dt[o], &st->T[o][r], 1);
      }
      teeny__cg_barrier(g);
      for (long r = 0; r < n; r++) {
        if (!teeny__cg_reg_owner(L, r))
          continue;
        LLVMValueRef slot = LLVMBuildAdd(g->b, partner, teeny__cg_i32(g, (int)(r * nthreads)), "");
        LLVMValueRef off = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, slot, teeny__cg_i32(g, es), ""),
                                        teeny__cg_i32(g, base), "");
        teeny__cg_smem_load(g, teeny__cg_smem_ptr(g, off), R->dt[o], &pt[o][r], 1);
      }
      if (o + 1 < R->n)
        teeny__cg_barrier(g);
    }
  }
  for (long r = 0; r < n; r++) {
    if (!teeny__cg_reg_owner(L, r))
      continue;
    LLVMValueRef p[CG_MAX_OPERANDS], S[CG_MAX_OPERANDS], T[CG_MAX_OPERANDS];
    for (int o = 0; o < R->n; o++) {
      p[o] = pt[o][r];
      S[o] = st->S[o][r];
      T[o] = st->T[o][r];
    }
    scan_merge(g, R, second, p, S, T);
    for (int o = 0; o < R->n; o++) {
      st->S[o][r] = S[o];
      st->T[o][r] = T[o];
    }
  }
}

void teeny__cg_emit_scan(cg *g, const teeny_op *op) {
  red R;
  red_init(g, op, &R);
  const cg_layout *L = teeny__cg_use_layout(g, op->args[0]);
  long n = 1L << L->nreg;
  scan_state st;
  for (int o = 0; o < R.n; o++) {
    LLVMValueRef *in = teeny__cg_get(g, op->args[o], L);
    st.S[o] = teeny__cg_regs_new(g, L);
    st.T[o] = teeny__cg_regs_new(g, L);
    memcpy(st.S[o], in, sizeof *in * (size_t)n);
    memcpy(st.T[o], in, sizeof *in * (size_t)n);
  }
  int bits = teeny__cg_log2(L->shape[op->axis]);
  for (int k = 0; k < bits; k++) {
    int fb = teeny__cg_flatbit(L->rank, L->shape, op->axis, k);
    for (int j = 0; j < L->nreg; j++)
      if (L->reg[j] == fb)
        scan_reg_bit(g, &R, L, j, op->reverse, &st);
    for (int j = 0; j < CG_LANE_BITS; j++)
      if (L->lane[j] == fb)
        scan_thread_bit(g, &R, L, true, j, op->reverse, &st);
    for (int j = 0; j < L->nwarp; j++)
      if (L->warp[j] == fb)
        scan_thread_bit(g, &R, L, false, j, op->reverse, &st);
  }
  for (int o = 0; o < R.n; o++) {
    for (long r = 0; r < n; r++)
      st.S[o][r] = st.S[o][teeny__cg_dup_src(L, r)];
    teeny__cg_set(g, op->res[o], L, st.S[o]);
  }
}

