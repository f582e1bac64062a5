/* matmul_fp8: C = A B on 8-bit floats, as fp8 GEMMs in LLM inference and
 * training take them: A [M, K] row-major, B given as its transpose Bt
 * [N, K] (K contiguous, the layout torch._scaled_mm and Triton's fp8
 * matmuls use), an f32 accumulator, C [M, N] in f16 (or any float dtype
 * O).  On Hopper (sm_90a) the dot runs on fp8 wgmma (k32, twice the f16
 * rate), which reads both operands K-major from shared memory; elsewhere
 * the tensor cores multiply the fp8 values converted to f16 (exact).
 * Edges are masked, so M, N and K need not be multiples of the blocks.
 * Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs on axis 0, ordered in
 * groups of GROUP_M block-rows (neighbours share tiles of B in L2). */
#include <teeny/dsl.h>

TEENY_DTYPE(A, f8e4m3, f8e5m2);
TEENY_DTYPE(B, f8e4m3, f8e5m2);
TEENY_DTYPE(O, f16, bf16, f32);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(BLOCK_K);
TEENY_CONST(GROUP_M);

TEENY_KERNEL(A, B, O, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
void matmul_fp8(ptr(A) a_ptr, ptr(B) bt_ptr, ptr(O) c_ptr, i32 M, i32 N, i32 K,
                i32 stride_am, i32 stride_btn, i32 stride_cm)
{
    i32 pid = program_id(0);
    i32 num_pid_m = cdiv(M, BLOCK_M);
    i32 num_pid_n = cdiv(N, BLOCK_N);
    i32 num_pid_in_group = GROUP_M * num_pid_n;
    i32 group_id = pid / num_pid_in_group;
    i32 first_pid_m = group_id * GROUP_M;
    i32 group_size_m = minimum(num_pid_m - first_pid_m, GROUP_M);
    i32 pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m;
    i32 pid_n = (pid % num_pid_in_group) / group_size_m;

    tile(i32) rm = pid_m * BLOCK_M + arange(0, BLOCK_M);
    tile(i32) rn = pid_n * BLOCK_N + arange(0, BLOCK_N);
    tile(i32) rk = arange(0, BLOCK_K);
    tile(ptr(A)) a = a_ptr + col(rm) * stride_am + row(rk);
    tile(ptr(B)) b = bt_ptr + row(rn) * stride_btn + col(rk); /* [BLOCK_K, BLOCK_N] */

    tile(f32) acc = zeros(f32, BLOCK_M, BLOCK_N);
    for (i32 k = 0; k < K; k += BLOCK_K) {
        tile(A) av = load(a, (col(rm) < M) & (row(rk) < K - k), 0);
        tile(B) bv = load(b, (col(rk) < K - k) & (row(rn) < N), 0);
        acc = dot(av, bv, acc);
        a += BLOCK_K;
        b += BLOCK_K;
    }

    tile(ptr(O)) c = c_ptr + col(rm) * stride_cm + row(rn);
    store(c, (O) acc, (col(rm) < M) & (row(rn) < N));
}
