/* tests/gpu/check.py's random numbers: randint and rand of (seed, offset)
 * for offsets base + i, to compare with Triton's tl.randint / tl.rand. */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

TEENY_KERNEL(BLOCK)
void rng(ptr(u32) ri, ptr(f32) r, ptr(f32) rn, i32 seed, i32 base, i32 n)
{
    tile(i32) i = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = i < n;
    tile(i32) o = base + i;
    store(ri + i, randint(seed, o), m);
    store(r + i, rand(seed, o), m);
    store(rn + i, randn(seed, o), m);
}
