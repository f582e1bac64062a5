/*
 * tests/lang/consts.c — compile-time constants of every scalar dtype
 * (docs/dsl.md §1): TEENY_CONST(N) is a weak i32, TEENY_CONST(N, T) a
 * constant of dtype T, bound by value or as text.
 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);          /* a weak i32: adopts the other operand's dtype */
TEENY_CONST(EPS, f32);       /* bound as text: --const EPS=1e-5 */
TEENY_CONST(SCALE, f64);
TEENY_CONST(IS_CAUSAL, bool);
TEENY_CONST(BIG, i64);       /* beyond i32 */
TEENY_CONST(HALF, f16);
TEENY_CONST(MASK, u32);

TEENY_KERNEL(BLOCK, EPS, SCALE, IS_CAUSAL, BIG, HALF, MASK)
void typed_consts(ptr(f32) x, ptr(f32) y, ptr(i64) z, ptr(f64) w, ptr(i8) q)
{
    tile(i32) offs = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(f32) v = load(x + offs);
    tile(f32) r = v / sqrt(v * v + EPS);
    if (IS_CAUSAL)              /* a constant condition: one branch is built */
        r = r + 1.0f;
    else
        r = r - 1.0f;
    store(y + offs, r + HALF);  /* f32 + f16 is f32 */
    store(z + offs, (tile(i64))offs * BIG + (i64)(MASK & 0xffu));
    store(w + offs, (tile(f64))v * SCALE);
    tile(i8) small = (tile(i8))offs;
    store(q + offs, small + BLOCK); /* weak: stays i8 */
}
