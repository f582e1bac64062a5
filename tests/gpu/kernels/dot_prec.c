/* tests/gpu/check.py's f32 dot at each input precision (docs/dsl.md §5):
 * one [M, K] x [K, N] tile product per program, M, N, K powers of two. */
#include <teeny/dsl.h>

TEENY_CONST(M);
TEENY_CONST(N);
TEENY_CONST(K);

TEENY_KERNEL(M, N, K)
void dot_tf32(ptr(f32) a, ptr(f32) b, ptr(f32) c)
{
    tile(i32) m = arange(0, M), n = arange(0, N), k = arange(0, K);
    store(c + col(m) * N + row(n), dot(load(a + col(m) * K + row(k)), load(b + col(k) * N + row(n))));
}

TEENY_KERNEL(M, N, K)
void dot_tf32x3(ptr(f32) a, ptr(f32) b, ptr(f32) c)
{
    tile(i32) m = arange(0, M), n = arange(0, N), k = arange(0, K);
    store(c + col(m) * N + row(n),
          dot(load(a + col(m) * K + row(k)), load(b + col(k) * N + row(n)), prec_tf32x3));
}

TEENY_KERNEL(M, N, K)
void dot_ieee(ptr(f32) a, ptr(f32) b, ptr(f32) c)
{
    tile(i32) m = arange(0, M), n = arange(0, N), k = arange(0, K);
    store(c + col(m) * N + row(n),
          dot(load(a + col(m) * K + row(k)), load(b + col(k) * N + row(n)), prec_ieee));
}
