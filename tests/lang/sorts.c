/*
 * tests/lang/sorts.c — sort(x [, descending]) (docs/dsl.md §5): 1-D floats
 * with NaNs and signed zeros (a permutation, NaNs last), rows of a 2-D
 * integer tile descending, bools.
 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

TEENY_KERNEL(BLOCK)
void sorts(ptr(f32) x, ptr(i16) y, ptr(f32) o1, ptr(i16) o2, ptr(bool) o3)
{
    tile(i32) r = arange(0, BLOCK);
    tile(f32) a = load(x + r);
    tile(f32) v = where(r % 7 == 3, (a - a) / (a - a), a);   /* NaNs */
    v = where(r % 5 == 1, -0.0f, where(r % 5 == 2, 0.0f, v)); /* -0 and +0 */
    store(o1 + r, sort(v));
    tile(i32) q = arange(0, BLOCK / 8), c = arange(0, 8);
    tile(i32) mo = col(q) * 8 + row(c);
    store(o2 + mo, sort(load(y + mo), true));
    store(o3 + r, sort(load(x + r) > 0.5f));
}
