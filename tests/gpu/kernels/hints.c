/* tests/gpu/kernels/hints.c — loads and stores with cache and eviction
 * options (docs/dsl.md §5): the values must not change.  Grid: cdiv(n, B). */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void hinted(ptr(f32) x, ptr(f32) y, ptr(f32) out, i32 n)
{
    tile(i32) o = program_id(0) * B + arange(0, B);
    tile(bool) m = o < n;
    tile(f32) a = load(x + o, m, 0.0f, cache_cg, evict_last);
    tile(f32) b = load(y + o, m, 0.0f, cache_cv);
    f32 s = load(x, cache_ca);
    store(out + o, a * 2.0f + b + s, m, cache_cs, evict_first);
}
