/*
 * tests/lang/shapes.c — joining tiles (docs/dsl.md §5, Shape): join,
 * interleave, cat and ravel, on 1-D and 2-D tiles of any dtype; each
 * program writes 11 * BLOCK elements of out.  split(x, S) gives the two
 * columns back as a struct.
 */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BLOCK);

typedef struct { tile(D) a, b; } halves;

TEENY_KERNEL(D, BLOCK)
void joins(ptr(D) x, ptr(D) y, ptr(D) out)
{
    i32 pid = program_id(0);
    tile(i32) r = arange(0, BLOCK);
    tile(D) a = load(x + pid * BLOCK + r);
    tile(D) b = load(y + pid * BLOCK + r);
    ptr(D) o = out + pid * 11 * BLOCK;
    store(o + col(r) * 2 + row(arange(0, 2)), join(a, b));      /* [BLOCK, 2] */
    store(o + 2 * BLOCK + arange(0, 2 * BLOCK), interleave(b, a));
    store(o + 4 * BLOCK + arange(0, 2 * BLOCK), cat(a, b));
    tile(D) m = reshape(b, BLOCK / 4, 4);
    tile(D) c = cat(m, reshape(a, BLOCK / 4, 4));               /* [BLOCK / 2, 4] */
    store(o + 6 * BLOCK + col(arange(0, BLOCK / 2)) * 4 + row(arange(0, 4)), c);
    store(o + 8 * BLOCK + r, ravel(permute(m, 1, 0)));          /* trans(m) */
    halves h = split(join(b, a), halves);
    store(o + 9 * BLOCK + arange(0, 2 * BLOCK), interleave(h.b, h.a)); /* = interleave(a, b) */
}
