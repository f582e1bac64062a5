/*
 * dsl/nvptx/analysis.c — what the code generator knows about each value
 * before it emits anything, in one forward walk over the IR (loops are
 * walked until their carried facts stop changing):
 *
 *   axis facts   contiguity, divisibility and constancy per dim (as in
 *                Triton's AxisInfo), to vectorise loads and stores and to
 *                know when a mask is the same for a whole vector;
 *   roots        which pointer parameters a pointer may point into, so
 *                parameters never written become noalias/readonly (ld.nc);
 *   layouts      each value's natural layout and its strength; index math
 *                (ranges, splats, views and element-wise ops on them) is
 *                "lazy": recomputed in whatever layout a consumer needs.
 *
 * Every fact is sound for any input: the defaults are "know nothing".
 */
#include <string.h>

#include "dsl/nvptx/codegen.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

static long long lowbit(long long v) {
  if (v == 0)
    return CG_MAXDIV;
  unsigned long long u = (unsigned long long)v;
  u &= -u;
  return u > CG_MAXDIV ? CG_MAXDIV : (long long)u;
}

static int cap_mul(long long a, long long b) {
  long long p = a * b;
  return p > CG_MAXDIV ? CG_MAXDIV : (int)p;
}

static teeny_type vtype(cg *g, int id) { return teeny__ir_type(g->f, id); }
static cg_vinfo *VI(cg *g, int id) { return &g->vi[id]; }

/* ---- axis facts -------------------------------------------------------------------- */

static cg_axis ax_top(void) {
  cg_axis a;
  for (int d = 0; d < TEENY_MAX_RANK; d++)
    a.contig[d] = a.div[d] = a.cnst[d] = a.affine[d] = 1;
  for (int d = 0; d < TEENY_MAX_RANK; d++)
    a.mono[d] = a.ustep[d] = 0;
  return a;
}

static cg_axis ax_meet(cg_axis a, cg_axis b) {
  for (int d = 0; d < TEENY_MAX_RANK; d++) {
    a.contig[d] = imin(a.contig[d], b.contig[d]);
    a.div[d] = imin(a.div[d], b.div[d]);
    a.cnst[d] = imin(a.cnst[d], b.cnst[d]);
    a.affine[d] = imin(a.affine[d], b.affine[d]);
    a.ustep[d] = a.ustep[d] && b.ustep[d];
    bool same = (a.mono[d] > 0) == (b.mono[d] > 0);
    a.mono[d] = !a.mono[d] || !b.mono[d] || !same ? 0
                : a.mono[d] > 0 ? imin(a.mono[d], b.mono[d])
                                : -imin(-a.mono[d], -b.mono[d]);
  }
  return a;
}

static bool ax_eq(cg_axis a, cg_axis b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Divisibility of the elements at positions that are multiples of c along
 * d (unit: the step between consecutive elements: 1, or the element size
 * for pointers). */
static int div_at(const cg_axis *a, int d, int c, int unit) {
  if (a->contig[d] <= 1 || c >= a->contig[d])
    return a->div[d];
  return imin(a->div[d], cap_mul(c, unit));
}

/* Divisibility of every element (for dims that lose contiguity). */
static int div_all(const cg_axis *a, int d, int unit) { return div_at(a, d, 1, unit); }

static int ptr_unit(teeny_type t) {
  if (t.dt != TEENY_DT_PTR)
    return 1;
  return t.pointee == TEENY_DT_BOOL ? 1 : teeny_dtype_size(t.pointee);
}

/* The value of a constant (scalar const, tile const, splat of a const). */
static bool const_of(cg *g, int id, teeny_scalar *out) {
  const teeny_op *d = g->f->values[id].def;
  if (d && d->code == IR_SPLAT)
    d = g->f->values[d->args[0]].def;
  if (!d || d->code != IR_CONST || !teeny__dt_is_int(vtype(g, d->res[0]).dt))
    return false;
  *out = d->cval;
  return true;
}

static cg_axis ax_const(cg *g, const teeny_op *op) {
  teeny_type t = vtype(g, op->res[0]);
  cg_axis a = ax_top();
  for (int d = 0; d < t.rank; d++)
    a.cnst[d] = t.shape[d];
  if (teeny__dt_is_int(t.dt))
    a.div[0] = a.div[1] = (int)lowbit(op->cval.i);
  return a;
}

static cg_axis ax_add(const cg_axis *a, const cg_axis *b, int rank, bool sub,
                      int ua, int ub, int scale_b) {
  cg_axis r = ax_top();
  for (int d = 0; d < rank; d++) {
    int c1 = imin(a->contig[d], b->cnst[d]);
    int c2 = sub ? 1 : imin(b->contig[d], a->cnst[d]);
    r.contig[d] = imax(c1, c2);
    r.cnst[d] = imin(a->cnst[d], b->cnst[d]);
    r.div[d] = imin(div_at(a, d, r.contig[d], ua),
                    cap_mul(div_at(b, d, r.contig[d], ub), scale_b));
  }
  if (rank == 0)
    r.div[0] = imin(a->div[0], cap_mul(b->div[0], scale_b));
  return r;
}

/* The longest runs of a along d that an ordered comparison may take as
 * increasing: aligned sub-runs of its runs (of min(contig, alignment)
 * elements, the first value a multiple of their length; unit: bytes per
 * step for pointers).  A run is consecutive only modulo 2^bits: unaligned,
 * `(u64) (arange(0, B) - 10)` steps from 2^64 - 1 to 0 inside it, and
 * `arange + (2^31 - 2)` from INT_MAX to INT_MIN.  An aligned run of 2^k
 * elements never crosses a multiple of 2^k, so neither the unsigned
 * wrap (0) nor, for k < bits, the signed one (2^(bits-1)); casts keep
 * the low bits, so this holds after them too.  1: no such run. */
static int ordered_run(const cg_axis *a, int d, int unit, int bits) {
  if (a->contig[d] <= 1)
    return 1;
  int run = imin(a->contig[d], a->div[d] / unit);
  if (bits - 1 < 30)
    run = imin(run, 1 << (bits - 1));
  return imax(run, 1);
}

/* a < b, a >= b (and the mirrored forms) are constant over aligned blocks
 * where one side is an ordered run and the other a constant, both
 * aligned; along an ordered run against a constant they are monotone.
 * (bits, unit: the operands' width and pointer step.) */
static cg_axis ax_cmp(const cg_axis *a, const cg_axis *b, int rank,
                      teeny_cmp_pred p, int bits, int unit) {
  cg_axis r = ax_top();
  for (int d = 0; d < rank; d++) {
    int ra = ordered_run(a, d, unit, bits), rb = ordered_run(b, d, unit, bits);
    int k = imin(a->cnst[d], b->cnst[d]);
    if ((p == CMP_LT || p == CMP_GE) && ra > 1)
      k = imax(k, imin(imin(ra, b->cnst[d]), div_all(b, d, 1) / unit));
    if ((p == CMP_GT || p == CMP_LE) && rb > 1)
      k = imax(k, imin(imin(rb, a->cnst[d]), div_all(a, d, 1) / unit));
    r.cnst[d] = k;
    /* an ordered run against a constant: true-then-false or false-then-true */
    int up = p == CMP_LT || p == CMP_LE ? 1 : p == CMP_GT || p == CMP_GE ? -1 : 0;
    if (up && ra > 1 && b->cnst[d] > 1)
      r.mono[d] = up * imin(ra, b->cnst[d]);
    else if (up && rb > 1 && a->cnst[d] > 1)
      r.mono[d] = -up * imin(rb, a->cnst[d]);
  }
  return r;
}

static cg_axis ax_keep_cnst(cg *g, const teeny_op *op) {
  cg_axis r = ax_top();
  int rank = vtype(g, op->res[0]).rank;
  for (int d = 0; d < rank; d++) {
    int k = CG_MAXDIV;
    for (int i = 0; i < op->nargs; i++)
      k = imin(k, VI(g, op->args[i])->ax.cnst[d]);
    r.cnst[d] = k;
  }
  return r;
}

static cg_axis ax_cast(cg *g, const teeny_op *op) {
  teeny_type from = vtype(g, op->args[0]), to = vtype(g, op->res[0]);
  cg_axis a = VI(g, op->args[0])->ax;
  if (!teeny__dt_is_int(from.dt) || !teeny__dt_is_int(to.dt))
    return ax_keep_cnst(g, op);
  int bits = teeny__dt_bits(to.dt);
  int lim = bits >= 31 ? CG_MAXDIV : 1 << bits;
  if (teeny__dt_bits(to.dt) < teeny__dt_bits(from.dt) ||
      (!teeny__dt_is_signed(from.dt) && teeny__dt_is_signed(to.dt) &&
       teeny__dt_bits(to.dt) == teeny__dt_bits(from.dt)))
    for (int d = 0; d < TEENY_MAX_RANK; d++) {
      a.contig[d] = imin(a.contig[d], lim);
      a.div[d] = imin(a.div[d], lim);
    }
  return a;
}

static cg_axis ax_binary(cg *g, const teeny_op *op) {
  const cg_axis *a = &VI(g, op->args[0])->ax, *b = &VI(g, op->args[1])->ax;
  int rank = vtype(g, op->res[0]).rank;
  switch (op->code) {
  case IR_ADD:
    return ax_add(a, b, rank, false, 1, 1, 1);
  case IR_SUB:
    return ax_add(a, b, rank, true, 1, 1, 1);
  case IR_ADDPTR: {
    int u = ptr_unit(vtype(g, op->args[0]));
    return ax_add(a, b, rank, false, u, 1, u);
  }
  case IR_MUL: {
    cg_axis r = ax_keep_cnst(g, op);
    for (int d = 0; d < imax(rank, 1); d++)
      r.div[d] = cap_mul(div_all(a, d, 1), div_all(b, d, 1));
    return r;
  }
  case IR_SHL: {
    cg_axis r = ax_keep_cnst(g, op);
    teeny_scalar s;
    if (const_of(g, op->args[1], &s) && s.i >= 0 && s.i < 31)
      for (int d = 0; d < imax(rank, 1); d++)
        r.div[d] = cap_mul(div_all(a, d, 1), 1LL << s.i);
    return r;
  }
  case IR_CMP: {
    teeny_type t = vtype(g, op->args[0]);
    return ax_cmp(a, b, rank, op->pred, teeny__dt_bits(t.dt), ptr_unit(t));
  }
  case IR_AND: {
    cg_axis r = ax_keep_cnst(g, op);
    if (vtype(g, op->res[0]).dt == TEENY_DT_BOOL)
      for (int d = 0; d < rank; d++) {
        int ma = a->mono[d], mb = b->mono[d];
        if (ma && b->cnst[d] > 1) /* monotone AND constant runs */
          r.mono[d] = ma > 0 ? imin(ma, b->cnst[d]) : -imin(-ma, b->cnst[d]);
        else if (mb && a->cnst[d] > 1)
          r.mono[d] = mb > 0 ? imin(mb, a->cnst[d]) : -imin(-mb, a->cnst[d]);
        else if (ma && mb && (ma > 0) == (mb > 0))
          r.mono[d] = ma > 0 ? imin(ma, mb) : -imin(-ma, -mb);
      }
    return r;
  }
  default:
    return ax_keep_cnst(g, op);
  }
}

/* Does the reshape of s to t only add or remove dims of size 1?  Then
 * map[d] is the dim of s that dim d of t is (-1 for t's 1s). */
static bool unit_reshape(teeny_type s, teeny_type t, int *map) {
  int j = 0;
  for (int d = 0; d < t.rank; d++) {
    if (t.shape[d] == 1) {
      map[d] = -1;
      continue;
    }
    while (j < s.rank && s.shape[j] == 1)
      j++;
    if (j == s.rank || s.shape[j] != t.shape[d])
      return false;
    map[d] = j++;
  }
  while (j < s.rank && s.shape[j] == 1)
    j++;
  return j == s.rank;
}

static cg_axis ax_view(cg *g, const teeny_op *op) {
  teeny_type s = vtype(g, op->args[0]), t = vtype(g, op->res[0]);
  const cg_axis *a = &VI(g, op->args[0])->ax;
  int u = ptr_unit(s);
  cg_axis r = ax_top();
  switch (op->code) {
  case IR_SPLAT:
    for (int d = 0; d < t.rank; d++) {
      r.cnst[d] = t.shape[d];
      r.div[d] = a->div[0];
    }
    return r;
  case IR_BROADCAST:
    r = *a;
    for (int d = 0; d < t.rank; d++)
      if (s.shape[d] == 1 && t.shape[d] > 1) {
        r.contig[d] = 1;
        r.cnst[d] = t.shape[d];
        r.mono[d] = 0;
      }
    return r;
  case IR_EXPAND_DIMS: {
    int all = CG_MAXDIV;
    for (int d = 0; d < s.rank; d++)
      all = imin(all, div_all(a, d, u));
    for (int d = 0, j = 0; d < t.rank; d++) {
      if (d == op->axis) {
        r.div[d] = all;
        continue;
      }
      r.contig[d] = a->contig[j];
      r.div[d] = a->div[j];
      r.cnst[d] = a->cnst[j];
      r.mono[d] = a->mono[j];
      j++;
    }
    return r;
  }
  case IR_TRANS: {
    int perm[TEENY_MAX_RANK]; /* result dim d is source dim perm[d] */
    teeny__ir_trans_perm(op, s.rank, perm);
    for (int d = 0; d < t.rank; d++) {
      r.contig[d] = a->contig[perm[d]];
      r.div[d] = a->div[perm[d]];
      r.cnst[d] = a->cnst[perm[d]];
      r.mono[d] = a->mono[perm[d]];
    }
    return r;
  }
  default: { /* reshape: keep only what survives any reshape */
    int map[TEENY_MAX_RANK];
    if (unit_reshape(s, t, map)) { /* only 1s added or removed: dim by dim */
      int all = CG_MAXDIV;
      for (int d = 0; d < s.rank; d++)
        all = imin(all, div_all(a, d, u));
      for (int d = 0; d < t.rank; d++) {
        if (map[d] < 0) {
          r.div[d] = all;
          continue;
        }
        r.contig[d] = a->contig[map[d]];
        r.div[d] = a->div[map[d]];
        r.cnst[d] = a->cnst[map[d]];
        r.mono[d] = a->mono[map[d]];
      }
      return r;
    }
    int all = CG_MAXDIV;
    bool uniform = true;
    for (int d = 0; d < s.rank; d++) {
      all = imin(all, div_all(a, d, u));
      uniform = uniform && a->cnst[d] >= s.shape[d];
    }
    for (int d = 0; d < t.rank; d++) {
      r.div[d] = all;
      r.cnst[d] = uniform ? t.shape[d] : 1;
    }
    return r;
  }
  }
}

/* One value over the whole tile (a splat, a scalar). */
static bool whole_const(cg *g, int id) {
  teeny_type t = vtype(g, id);
  for (int d = 0; d < t.rank; d++)
    if (VI(g, id)->ax.cnst[d] < t.shape[d])
      return false;
  return true;
}

/* Affine runs of op's result along each dim (see cg_axis); at least its
 * constant and contiguous runs (whose steps, 0 and 1, are uniform). */
static void ax_affine(cg *g, const teeny_op *op, cg_axis *r) {
  teeny_type t = vtype(g, op->res[0]);
  const cg_axis *a = op->nargs > 0 ? &VI(g, op->args[0])->ax : NULL;
  const cg_axis *b = op->nargs > 1 ? &VI(g, op->args[1])->ax : NULL;
  for (int d = 0; d < t.rank; d++) {
    int f = 1, u = 0;
    switch (op->code) {
    case IR_MAKE_RANGE:
      f = t.shape[d];
      u = 1;
      break;
    case IR_ADD:
    case IR_SUB:
    case IR_ADDPTR:
      f = imin(a->affine[d], b->affine[d]);
      u = a->ustep[d] && b->ustep[d];
      break;
    case IR_MUL: /* affine times a constant run stays affine */
      f = imax(imin(a->affine[d], b->cnst[d]), imin(b->affine[d], a->cnst[d]));
      u = (a->ustep[d] && whole_const(g, op->args[1])) ||
          (b->ustep[d] && whole_const(g, op->args[0]));
      break;
    case IR_SHL:
      f = imin(a->affine[d], b->cnst[d]);
      u = a->ustep[d] && whole_const(g, op->args[1]);
      break;
    case IR_NEG:
      f = a->affine[d];
      u = a->ustep[d];
      break;
    case IR_CAST:
      if (teeny__dt_is_int(vtype(g, op->args[0]).dt) && teeny__dt_is_int(t.dt) &&
          teeny__dt_bits(t.dt) >= teeny__dt_bits(vtype(g, op->args[0]).dt)) {
        f = a->affine[d];
        u = a->ustep[d];
      }
      break;
    case IR_BROADCAST:
      f = vtype(g, op->args[0]).shape[d] == 1 ? t.shape[d] : a->affine[d];
      u = vtype(g, op->args[0]).shape[d] == 1 ? 1 : a->ustep[d];
      break;
    case IR_EXPAND_DIMS:
      f = d == op->axis ? 1 : a->affine[d < op->axis ? d : d - 1];
      u = d == op->axis ? 1 : a->ustep[d < op->axis ? d : d - 1];
      break;
    case IR_TRANS: {
      int perm[TEENY_MAX_RANK];
      teeny__ir_trans_perm(op, t.rank, perm);
      f = a->affine[perm[d]];
      u = a->ustep[perm[d]];
      break;
    }
    case IR_RESHAPE: {
      int map[TEENY_MAX_RANK];
      if (unit_reshape(vtype(g, op->args[0]), t, map)) {
        f = map[d] < 0 ? 1 : a->affine[map[d]];
        u = map[d] < 0 ? 1 : a->ustep[map[d]];
      }
      break;
    }
    default:
      break;
    }
    int run = imax(r->cnst[d], r->contig[d]);
    r->affine[d] = imax(f, run);
    r->ustep[d] = f <= run ? 1 : u;
  }
}

/* ---- layouts ------------------------------------------------------------------------- */

/* The layout a consumer should ask for when it takes v as it is. */
const cg_layout *teeny__cg_use_layout(cg *g, int id) {
  cg_vinfo *v = VI(g, id);
  if (v->str == CG_STR_FREE || !v->nat)
    return teeny__cg_default(g, vtype(g, id));
  return v->nat;
}

/* Bytes per thread of the longest register run of L along its dims. */
static int run_bytes(const cg_layout *L, int es) {
  int best = 1;
  for (int d = 0; d < L->rank; d++) {
    int w = 1 << teeny__cg_run_bits(L, d);
    if (w > best)
      best = w;
  }
  return best * es;
}

static bool lane_has(const cg_layout *L, int flat) {
  for (int l = 0; l < CG_LANE_BITS; l++)
    if (L->lane[l] == flat)
      return true;
  return false;
}

/* Bytes one store instruction of a warp writes contiguously along dim d
 * in layout L: the register run along d (one vector), continued by lane
 * bits (whichever lanes hold the next elements).  A tile stored in the
 * layout of its transposed load has its lanes across rows: a few bytes
 * per 32-byte sector. */
static int warp_run_bytes(const cg_layout *L, int d, int es) {
  int k = teeny__cg_run_bits(L, d), bits = teeny__cg_log2(L->shape[d]);
  while (k < bits && lane_has(L, teeny__cg_flatbit(L->rank, L->shape, d, k)))
    k++;
  return es << k;
}

/* The axis of pointer tile pt (axis info a) that is contiguous in memory. */
static int fast_axis(teeny_type pt, const cg_axis *a) {
  int best = pt.rank - 1; /* the longest run; ties go to the minor dim */
  for (int d = pt.rank - 2; d >= 0; d--)
    if (a->contig[d] > a->contig[best])
      best = d;
  return best;
}

const cg_layout *teeny__cg_mem_layout(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  const cg_axis *a = &VI(g, op->args[0])->ax;
  int fast = fast_axis(pt, a), esize = ptr_unit(pt);
  if (op->code == IR_STORE || op->code == IR_ATOMIC_RMW) {
    /* store a computed tile in its own layout, unless that would cut
     * rows into pieces under 8 bytes (an f16 mma result: 4 bytes per
     * thread), or give a warp under a sector (32 bytes) of contiguous
     * memory per instruction where the pointer is known contiguous (a
     * transposed tile: lanes across rows) and the tile is at most 32 KiB
     * (so that no kernel that fitted before runs out of shared memory);
     * then one conversion through shared memory buys 16-byte stores that
     * fill whole lines */
    cg_vinfo *v = VI(g, op->args[1]);
    bool big2d = pt.rank >= 2 &&
                 teeny__type_numel(pt) >= (4L << (CG_LANE_BITS + g->warp_bits));
    bool scattered = big2d && v->nat && a->contig[fast] >= 32 / esize &&
                     teeny__type_numel(pt) * esize <= 32768 && /* shared memory it takes */
                     warp_run_bytes(v->nat, fast, esize) < 32;
    if (v->str >= CG_STR_DERIVED && v->nat &&
        (op->code == IR_ATOMIC_RMW || !big2d || (run_bytes(v->nat, esize) >= 8 && !scattered)))
      return v->nat;
  }
  long per_thread = teeny__type_numel(pt) >> (CG_LANE_BITS + g->warp_bits);
  /* an affine run may turn out contiguous (a stride argument equal to 1,
   * which Triton would specialise on): lay it out for vectors and let the
   * access check at run time */
  int run = a->contig[fast] > 1 ? a->contig[fast] : a->affine[fast];
  int vec = imin(16 / esize, imax(run, 1));
  vec = imin(vec, pt.shape[fast]);
  if (vec > per_thread)
    vec = per_thread < 1 ? 1 : (int)per_thread;
  return teeny__cg_blocked(g, pt.rank, pt.shape, fast, vec);
}

/* A memory op asks the loop-carried pointer it uses for its layout. */
static void note_want(cg *g, int ptr, const cg_layout *L) {
  int v = ptr;
  while (g->f->values[v].def && g->f->values[v].def->code == IR_ADDPTR)
    v = g->f->values[v].def->args[0];
  if (!g->f->values[v].def && !VI(g, v)->want)
    VI(g, v)->want = L;
}

static void set_free(cg *g, int id) {
  cg_vinfo *v = VI(g, id);
  v->lazy = true;
  v->depth = 1;
  v->str = CG_STR_FREE;
  v->nat = teeny__cg_default(g, vtype(g, id));
}

/* 1 + the longest lazy chain among the operands */
static int lazy_depth(cg *g, const teeny_op *op) {
  int d = 0;
  for (int i = 0; i < op->nargs; i++)
    if (VI(g, op->args[i])->lazy && VI(g, op->args[i])->depth > d)
      d = VI(g, op->args[i])->depth;
  return d + 1;
}

static void lay_elementwise(cg *g, const teeny_op *op) {
  int best = -1;
  bool all_free = true;
  for (int i = 0; i < op->nargs; i++) {
    cg_vinfo *a = VI(g, op->args[i]);
    if (!a->lazy || a->str != CG_STR_FREE)
      all_free = false;
    if (best < 0 || a->str > VI(g, best)->str)
      best = op->args[i];
  }
  int depth = lazy_depth(g, op);
  if (all_free && depth <= CG_MAX_LAZY_DEPTH) {
    set_free(g, op->res[0]);
    VI(g, op->res[0])->depth = depth;
    return;
  }
  cg_vinfo *r = VI(g, op->res[0]);
  r->lazy = false;
  r->depth = 0;
  r->nat = teeny__cg_use_layout(g, best);
  r->str = VI(g, best)->str;
}

static void lay_view(cg *g, const teeny_op *op) {
  cg_vinfo *s = VI(g, op->args[0]), *r = VI(g, op->res[0]);
  if (op->code == IR_SPLAT) {
    set_free(g, op->res[0]);
    return;
  }
  if (s->str == CG_STR_FREE) {
    set_free(g, op->res[0]);
    r->depth = lazy_depth(g, op);
    if (r->depth > CG_MAX_LAZY_DEPTH)
      r->lazy = false, r->depth = 0;
    return;
  }
  r->nat = teeny__cg_pushforward(g, s->nat, op, vtype(g, op->res[0]));
  r->str = s->str;
  if (op->code == IR_BROADCAST && r->str > CG_STR_WEAK)
    r->str = CG_STR_WEAK;
  r->depth = lazy_depth(g, op);
  r->lazy = r->depth <= CG_MAX_LAZY_DEPTH; /* else made where defined */
  if (!r->lazy)
    r->depth = 0;
}

/* ---- the walk -------------------------------------------------------------------------- */

static void walk_region(cg *g, const teeny_region *r);

static void set_top(cg *g, int id) {
  cg_vinfo *v = VI(g, id);
  v->ax = ax_top();
  v->lazy = false;
  teeny_type t = vtype(g, id);
  v->nat = t.rank ? teeny__cg_default(g, t) : NULL;
  v->str = CG_STR_WEAK;
}

/* Region arguments take the facts of the values flowing into them. */
static void flow_into(cg *g, int arg, int from, bool first) {
  cg_vinfo *a = VI(g, arg), *s = VI(g, from);
  if (first) {
    a->ax = s->ax;
    a->roots = s->roots;
    a->nat = vtype(g, arg).rank ? teeny__cg_use_layout(g, from) : NULL;
    a->str = s->str;
    a->lazy = false;
    return;
  }
  a->ax = ax_meet(a->ax, s->ax);
  a->roots |= s->roots;
}

/* Merge yielded facts into a carried argument; returns whether it changed. */
static bool carry(cg *g, int arg, int y) {
  cg_vinfo *a = VI(g, arg), *s = VI(g, y);
  bool changed = false;
  cg_axis m = ax_meet(a->ax, s->ax);
  if (!ax_eq(m, a->ax)) {
    a->ax = m;
    changed = true;
  }
  if ((a->roots | s->roots) != a->roots) {
    a->roots |= s->roots;
    changed = true;
  }
  if (vtype(g, arg).rank) {
    if (s->str > a->str && teeny__cg_use_layout(g, y) != a->nat) {
      a->nat = teeny__cg_use_layout(g, y);
      a->str = s->str;
      changed = true;
    } else if (a->str <= CG_STR_WEAK && a->want && a->want != a->nat) {
      a->nat = a->want;
      a->str = CG_STR_WEAK;
      changed = true;
    }
  }
  return changed;
}

static void give_up(cg *g, const int *args, int n) {
  for (int i = 0; i < n; i++) {
    VI(g, args[i])->ax = ax_top();
    VI(g, args[i])->roots = ~0ull;
  }
}

static const teeny_op *last_op(const teeny_region *r) { return r->ops[r->nops - 1]; }

#define CG_MAX_ITER 8

static void walk_for(cg *g, const teeny_op *op) {
  const teeny_region *body = op->regions[0];
  int n = op->nargs - 3;
  cg_vinfo *iv = VI(g, body->args[0]);
  iv->ax = ax_top();
  iv->ax.div[0] = imin(VI(g, op->args[0])->ax.div[0], VI(g, op->args[2])->ax.div[0]);
  iv->nat = NULL;
  for (int i = 0; i < n; i++)
    flow_into(g, body->args[i + 1], op->args[i + 3], true);
  bool changed = true;
  for (int it = 0; it < CG_MAX_ITER && changed; it++) {
    walk_region(g, body);
    changed = false;
    for (int i = 0; i < n; i++)
      changed |= carry(g, body->args[i + 1], last_op(body)->args[i]);
  }
  if (changed) {
    give_up(g, body->args + 1, n);
    walk_region(g, body);
  }
  for (int i = 0; i < n; i++)
    *VI(g, op->res[i]) = *VI(g, body->args[i + 1]);
}

static void walk_while(cg *g, const teeny_op *op) {
  const teeny_region *before = op->regions[0], *after = op->regions[1];
  for (int i = 0; i < op->nargs; i++)
    flow_into(g, before->args[i], op->args[i], true);
  bool changed = true;
  for (int it = 0; it < CG_MAX_ITER + 1 && changed; it++) {
    if (it == CG_MAX_ITER)
      give_up(g, before->args, before->nargs);
    walk_region(g, before);
    const teeny_op *c = last_op(before);
    for (int i = 0; i < after->nargs; i++)
      flow_into(g, after->args[i], c->args[i + 1], true);
    walk_region(g, after);
    changed = false;
    for (int i = 0; i < op->nargs && it < CG_MAX_ITER; i++)
      changed |= carry(g, before->args[i], last_op(after)->args[i]);
  }
  for (int i = 0; i < op->nres; i++)
    *VI(g, op->res[i]) = *VI(g, after->args[i]);
}

static void walk_if(cg *g, const teeny_op *op) {
  walk_region(g, op->regions[0]);
  walk_region(g, op->regions[1]);
  for (int i = 0; i < op->nres; i++) {
    int t = last_op(op->regions[0])->args[i], e = last_op(op->regions[1])->args[i];
    int best = VI(g, e)->str > VI(g, t)->str ? e : t;
    flow_into(g, op->res[i], best, true);
    flow_into(g, op->res[i], best == t ? e : t, false);
  }
}

static void walk_combine(cg *g, const teeny_op *op) {
  const teeny_region *r = op->regions[0];
  for (int i = 0; i < r->nargs; i++)
    set_top(g, r->args[i]);
  walk_region(g, r);
  int x = op->args[0];
  const cg_layout *in = teeny__cg_use_layout(g, x);
  for (int i = 0; i < op->nres; i++) {
    set_top(g, op->res[i]);
    cg_vinfo *v = VI(g, op->res[i]);
    v->str = CG_STR_DERIVED;
    if (op->code == IR_SCAN)
      v->nat = in;
    else
      v->nat = in->rank > 1 ? teeny__cg_slice(g, in, op->axis) : NULL;
  }
}

static void walk_mem(cg *g, const teeny_op *op) {
  teeny_type pt = vtype(g, op->args[0]);
  if (op->code == IR_STORE || op->code == IR_ATOMIC_RMW || op->code == IR_ATOMIC_CAS) {
    uint64_t roots = VI(g, op->args[0])->roots;
    g->written |= roots;
  }
  if (pt.rank)
    note_want(g, op->args[0], teeny__cg_mem_layout(g, op));
  if (op->nres == 0)
    return;
  set_top(g, op->res[0]);
  if (pt.rank) {
    VI(g, op->res[0])->nat = teeny__cg_mem_layout(g, op);
    VI(g, op->res[0])->str = CG_STR_ANCHOR;
  }
}

static void walk_op(cg *g, const teeny_op *op) {
  g->loc = op->loc; /* for diagnostics about the op's tiles */
  switch (op->code) {
  case IR_CONST: {
    cg_vinfo *v = VI(g, op->res[0]);
    v->ax = ax_const(g, op);
    for (int d = 0; d < TEENY_MAX_RANK; d++) {
      v->ax.affine[d] = v->ax.cnst[d];
      v->ax.ustep[d] = 1;
    }
    if (vtype(g, op->res[0]).rank)
      set_free(g, op->res[0]);
    return;
  }
  case IR_PROGRAM_ID:
  case IR_NUM_PROGRAMS:
    set_top(g, op->res[0]);
    return;
  case IR_MAKE_RANGE: {
    cg_vinfo *v = VI(g, op->res[0]);
    v->ax = ax_top();
    v->ax.contig[0] = op->end - op->start;
    v->ax.div[0] = (int)lowbit(op->start);
    v->ax.affine[0] = op->end - op->start;
    v->ax.ustep[0] = 1;
    set_free(g, op->res[0]);
    return;
  }
  case IR_SPLAT:
  case IR_BROADCAST:
  case IR_EXPAND_DIMS:
  case IR_RESHAPE:
  case IR_TRANS:
    VI(g, op->res[0])->ax = ax_view(g, op);
    ax_affine(g, op, &VI(g, op->res[0])->ax);
    VI(g, op->res[0])->roots = VI(g, op->args[0])->roots;
    lay_view(g, op);
    return;
  case IR_LOAD:
  case IR_STORE:
  case IR_ATOMIC_RMW:
  case IR_ATOMIC_CAS:
    walk_mem(g, op);
    return;
  case IR_REDUCE:
  case IR_SCAN:
    walk_combine(g, op);
    return;
  case IR_GATHER:
  case IR_HISTOGRAM:
    set_top(g, op->res[0]);
    VI(g, op->res[0])->nat = teeny__cg_default(g, vtype(g, op->res[0]));
    VI(g, op->res[0])->str = CG_STR_DERIVED;
    return;
  case IR_DOT:
    set_top(g, op->res[0]);
    VI(g, op->res[0])->nat = teeny__cg_dot_layout(g, op);
    VI(g, op->res[0])->str = CG_STR_ANCHOR;
    for (int i = 0; i < 2; i++) /* an f16 cast the fp8 wgmma reads through */
      if (teeny__cg_dot_operand(g, op, i) != op->args[i])
        VI(g, op->args[i])->lazy = true; /* made only where something else uses it */
    return;
  case IR_IF:
    walk_if(g, op);
    return;
  case IR_FOR:
    walk_for(g, op);
    return;
  case IR_WHILE:
    walk_while(g, op);
    return;
  case IR_YIELD:
  case IR_CONDITION:
  case IR_RETURN:
  case IR_BARRIER:
  case IR_PRINT:
  case IR_ASSERT:
    return;
  default:
    break;
  }
  /* element-wise */
  cg_vinfo *r = VI(g, op->res[0]);
  if (op->nargs == 2)
    r->ax = ax_binary(g, op);
  else if (op->code == IR_CAST)
    r->ax = ax_cast(g, op);
  else
    r->ax = ax_keep_cnst(g, op);
  if (op->code == IR_INTTOPTR || op->code == IR_PTRCAST || op->code == IR_PTRTOINT) {
    /* an address made from an integer may point into any parameter; a
     * pointer cast keeps its parameters but not its element facts */
    r->ax = ax_top();
    if (op->code != IR_PTRTOINT)
      r->roots = op->code == IR_INTTOPTR ? ~0ull : VI(g, op->args[0])->roots;
  } else if (op->code == IR_ADDPTR)
    r->roots = VI(g, op->args[0])->roots;
  else if (op->code == IR_SELECT)
    r->roots = VI(g, op->args[1])->roots | VI(g, op->args[2])->roots;
  if (vtype(g, op->res[0]).rank)
    ax_affine(g, op, &r->ax);
  if (vtype(g, op->res[0]).rank)
    lay_elementwise(g, op);
  else
    r->nat = NULL, r->lazy = false, r->str = CG_STR_WEAK;
}

static void walk_region(cg *g, const teeny_region *r) {
  for (int i = 0; i < r->nops; i++)
    walk_op(g, r->ops[i]);
}

/* g->uses[v]: how many operands (terminators included) name v. */
static void count_uses(cg *g, const teeny_region *r) {
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    for (int j = 0; j < op->nargs; j++)
      g->uses[op->args[j]]++;
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k])
        count_uses(g, op->regions[k]);
  }
}

void teeny__cg_analyze(cg *g) {
  const teeny_ir_func *f = g->f;
  g->vi = teeny__cg_alloc(g, sizeof *g->vi * (size_t)(f->nvalues + 1));
  g->vals = teeny__cg_alloc(g, sizeof *g->vals * (size_t)(f->nvalues + 1));
  g->uses = teeny__cg_alloc(g, sizeof *g->uses * (size_t)(f->nvalues + 1));
  count_uses(g, f->body);
  for (int i = 0; i < f->nparams; i++) {
    int id = f->body->args[i];
    set_top(g, id);
    if (vtype(g, id).dt == TEENY_DT_PTR) {
      /* docs/dsl.md: pointer params are 16-byte aligned, but for those the
       * request names (TEENY_OPT_UNALIGNED): their elements' alignment */
      bool off16 = i < 64 && (f->unaligned >> i & 1);
      VI(g, id)->ax.div[0] = off16 ? ptr_unit(vtype(g, id)) : 16;
      VI(g, id)->roots = i < 64 ? 1ull << i : ~0ull;
    }
  }
  walk_region(g, f->body);
}
