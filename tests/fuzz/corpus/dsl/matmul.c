TEENY_DTYPE(T, f16, bf16, f32);
TEENY_CONST(BM); TEENY_CONST(BN); TEENY_CONST(BK);
TEENY_KERNEL(T, BM, BN, BK)
void matmul(T *a, T *b, f32 *c, i32 M, i32 N, i32 K)
{
    i32 pm = program_id(0), pn = program_id(1);
    tile(i32) rm = pm * BM + arange(0, BM);
    tile(i32) rn = pn * BN + arange(0, BN);
    tile(i32) rk = arange(0, BK);
    tile(f32) acc = zeros(f32, BM, BN);
    for (i32 k = 0; k < K; k += BK) {
        tile(T) ta = load(a + col(rm) * K + row(rk + k), col(rm < M) & row(rk + k < K), 0);
        tile(T) tb = load(b + col(rk + k) * N + row(rn), col(rk + k < K) & row(rn < N), 0);
        acc = dot(ta, tb, acc);
    }
    store(c + col(rm) * N + row(rn), acc, col(rm < M) & row(rn < N));
}
