/* tests/gpu/kernels/fp8_dot.c — dot on fp8 operands, and fp8 with f16
 * (docs/dsl.md §5): C[M, N] = A B, f32 accumulation.  Grid:
 * (cdiv(M, BM), cdiv(N, BN)). */
#include <teeny/dsl.h>

TEENY_DTYPE(TA);
TEENY_DTYPE(TB);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(BK);

TEENY_KERNEL(TA, TB, BM, BN, BK)
void fp8_dot(ptr(TA) a, ptr(TB) b, ptr(f32) c, i32 M, i32 N, i32 K)
{
    tile(i32) rm = program_id(0) * BM + arange(0, BM);
    tile(i32) rn = program_id(1) * BN + arange(0, BN);
    tile(i32) rk = arange(0, BK);
    tile(f32) acc = zeros(f32, BM, BN);
    for (i32 k = 0; k < K; k += BK) {
        tile(TA) x = load(a + col(rm) * K + row(k + rk), (col(rm) < M) & (row(k + rk) < K), 0);
        tile(TB) y = load(b + col(k + rk) * N + row(rn), (col(k + rk) < K) & (row(rn) < N), 0);
        acc = dot(x, y, acc);
    }
    store(c + col(rm) * N + row(rn), acc, (col(rm) < M) & (row(rn) < N));
}
