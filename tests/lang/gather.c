/*
 * tests/lang/gather.c — gather(src, index, axis) and flip(x [, axis])
 * (docs/dsl.md §5): 1-D and 2-D along either axis, an index tile longer or
 * shorter than the source along the axis, out-of-range and 64-bit
 * indices (0 there).  Each program writes 8 * BLOCK elements of out.
 */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BLOCK);

TEENY_KERNEL(D, BLOCK)
void gathers(ptr(D) x, ptr(i32) ix, ptr(i64) lx, ptr(D) out)
{
    i32 pid = program_id(0);
    tile(i32) r = arange(0, BLOCK);
    tile(D) a = load(x + pid * BLOCK + r);
    ptr(D) o = out + pid * 8 * BLOCK;
    store(o + r, gather(a, load(ix + r), 0));              /* any i32: out of range gives 0 */
    store(o + BLOCK + r, flip(a));
    tile(i32) q = arange(0, BLOCK / 4), c = arange(0, 4);
    tile(D) m = reshape(a, BLOCK / 4, 4);
    tile(i32) mo = col(q) * 4 + row(c);
    store(o + 2 * BLOCK + mo, flip(m, 0));
    store(o + 3 * BLOCK + mo, flip(m, -1));
    store(o + 4 * BLOCK + mo, gather(m, load(lx + mo), 1));  /* i64 indices */
    tile(i32) p = arange(0, BLOCK / 2);
    store(o + 5 * BLOCK + col(p) * 4 + row(c), gather(m, col(p) + row(c) - 2, 0));
    store(o + 7 * BLOCK + arange(0, BLOCK / 2), gather(a, BLOCK - 1 - 2 * arange(0, BLOCK / 2), 0));
}
