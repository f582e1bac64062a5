/*
 * dsl/irgen_random.c — rand, randn and randint: counter-based random
 * numbers from Philox (4 words of state, 2 of key, 10 rounds), lowered to
 * tile IR as ordinary integer ops, the same function of (seed, offset) as
 * Triton's triton.language.random, so a kernel ported from Triton draws
 * the same numbers for the same seed and offsets (rand and randint bit for
 * bit; randn through log, sqrt and cos, within their accuracy).
 *
 * Offsets of 32 bits run Philox-4x32 with the seed's low and high words as
 * the key; 64-bit offsets run Philox-4x64 with the whole seed as the first
 * key word.  The counter is (offset, 0, 0, 0); randint is the first output
 * word (randint4x all four, in a struct of the caller's type), rand maps
 * it to [0, 1) (as a signed int folded onto [0, 2^31) and
 * scaled just below 2^-31), randn feeds the first two words through the
 * Box-Muller transform.
 */
#include "dsl/irgen.h"

typedef struct philox {
  teeny_dtype dt;            /* u32 or u64 */
  uint64_t key_a, key_b;     /* added to the key each round */
  uint64_t round_a, round_b; /* the multipliers */
} philox;

static const philox philox32 = {TEENY_DT_U32, 0x9E3779B9u, 0xBB67AE85u, 0xD2511F53u,
                                0xCD9E8D57u};
static const philox philox64 = {TEENY_DT_U64, 0x9E3779B97F4A7C15ull, 0xBB67AE8584CAA73Bull,
                                0xD2E7470EE14C6C93ull, 0xCA5A826395121157ull};

static gval konst(const philox *p, uint64_t v) { return teeny__gv_int(p->dt, (int64_t)v); }

static gval bxor(gen *g, gval a, gval b, teeny_loc loc) {
  return teeny__gen_binop(g, OP_BITXOR, a, b, loc);
}

static gval umulhi(gen *g, gval a, gval b, teeny_loc loc) {
  gval v[2] = {a, b};
  return teeny__gen_elementwise(g, IR_UMULHI, v, 2, loc, "umulhi");
}

/* Philox's four output words for counter (c[0], 0, 0, 0) and key (k0, k1). */
static void philox_run(gen *g, const philox *p, gval *c, gval k0, gval k1, teeny_loc loc) {
  for (int round = 0; round < 10; round++) {
    gval c0 = c[0], c2 = c[2];
    gval a = konst(p, p->round_a), b = konst(p, p->round_b);
    c[0] = bxor(g, bxor(g, umulhi(g, b, c2, loc), c[1], loc), k0, loc);
    c[2] = bxor(g, bxor(g, umulhi(g, a, c0, loc), c[3], loc), k1, loc);
    c[1] = teeny__gen_binop(g, OP_MUL, b, c2, loc);
    c[3] = teeny__gen_binop(g, OP_MUL, a, c0, loc);
    k0 = teeny__gen_binop(g, OP_ADD, k0, konst(p, p->key_a), loc);
    k1 = teeny__gen_binop(g, OP_ADD, k1, konst(p, p->key_b), loc);
  }
}

/* The four words for random(seed, offset), e being the call. */
static const philox *draw(gen *g, const teeny_expr *e, gval *out) {
  gval seed = teeny__gen_expr(g, e->args[0]), off = teeny__gen_expr(g, e->args[1]);
  if (seed.type.rank || !teeny__dt_is_int(seed.type.dt))
    teeny__gen_fail(g, e->args[0]->loc, "the seed of %s must be an integer scalar, not %s",
                    e->name, teeny__gen_tstr(g, seed.type));
  if (!teeny__dt_is_int(off.type.dt) || teeny__dt_bits(off.type.dt) < 32)
    teeny__gen_fail(g, e->args[1]->loc, "the offsets of %s must be i32, u32, i64 or u64, "
                    "not %s", e->name, teeny__gen_tstr(g, off.type));
  bool wide = teeny__dt_bits(off.type.dt) == 64;
  const philox *p = wide ? &philox64 : &philox32;
  teeny_loc loc = e->loc;
  gval s = teeny__gen_convert(g, seed, TEENY_DT_U64, loc);
  gval k0, k1;
  if (wide) {
    k0 = s;
    k1 = konst(p, 0);
  } else { /* the seed's low and high words */
    k0 = teeny__gen_convert(g, s, TEENY_DT_U32, loc);
    k1 = teeny__gen_convert(g, teeny__gen_binop(g, OP_SHR, s, teeny__gv_int(TEENY_DT_U64, 32), loc),
                            TEENY_DT_U32, loc);
  }
  out[0] = teeny__gen_convert(g, off, p->dt, loc); /* the same bits */
  gval zero = teeny__gen_broadcast(g, konst(p, 0), off.type.rank, off.type.shape, loc);
  out[1] = out[2] = out[3] = zero;
  philox_run(g, p, out, k0, k1, loc);
  return p;
}

/* A random word as an f32 in [0, 1): the word as a signed int, negative
 * ones folded onto the non-negative (-x - 1), times the largest scale
 * that keeps the maximum below 1 after f32 rounding. */
static gval uniform(gen *g, const philox *p, gval w, teeny_loc loc) {
  teeny_dtype sdt = p->dt == TEENY_DT_U64 ? TEENY_DT_I64 : TEENY_DT_I32;
  gval x = teeny__gen_convert(g, w, sdt, loc);
  gval neg = teeny__gen_binop(g, OP_LT, x, teeny__gv_int(sdt, 0), loc);
  gval folded = teeny__gen_binop(g, OP_SUB, teeny__gen_binop(g, OP_SUB, teeny__gv_int(sdt, 0), x, loc),
                                 teeny__gv_int(sdt, 1), loc);
  gval sel[3] = {neg, folded, x}; /* one shape and dtype already */
  x = teeny__gen_op(g, IR_SELECT, sel, 3, x.type, loc);
  double scale = p->dt == TEENY_DT_U64 ? 1.0842020432385337e-19 : 4.6566127342e-10;
  return teeny__gen_binop(g, OP_MUL, teeny__gen_convert(g, x, TEENY_DT_F32, loc),
                          teeny__gv_weak_float(scale), loc);
}

static gval math1(gen *g, teeny_opcode code, gval x, teeny_loc loc) {
  return teeny__gen_op(g, code, &x, 1, x.type, loc);
}

/* Box-Muller: sqrt(-2 log(max(1e-7, u1))) cos(2 pi u2). */
static gval normal(gen *g, gval u1, gval u2, teeny_loc loc) {
  gval m[2] = {teeny__gv_weak_float(1.0e-7), u1};
  u1 = teeny__gen_elementwise(g, IR_MAX, m, 2, loc, "randn");
  gval th = teeny__gen_binop(g, OP_MUL, teeny__gv_weak_float(6.283185307179586), u2, loc);
  gval r = math1(g, IR_SQRT, teeny__gen_binop(g, OP_MUL, teeny__gv_weak_float(-2.0),
                                              math1(g, IR_LOG, u1, loc), loc), loc);
  return teeny__gen_binop(g, OP_MUL, r, math1(g, IR_COS, th, loc), loc);
}

gval teeny__gen_random(gen *g, const teeny_expr *e, teeny_builtin which) {
  gval w[4];
  const philox *p = draw(g, e, w);
  switch (which) {
  case BI_RANDINT:
    return w[0];
  case BI_RANDINT4X: /* the four words, in a struct of the type named last */
    return teeny__gen_struct_of(g, e, 2, w, 4);
  case BI_RAND:
    return uniform(g, p, w[0], e->loc);
  default:
    return normal(g, uniform(g, p, w[0], e->loc), uniform(g, p, w[1], e->loc), e->loc);
  }
}
