/* matmul_bias_relu: C = relu(A B + bias) with A [M, K], B [K, N], bias
 * [N] broadcast over the rows, C [M, N] (any strides): examples/kernels/
 * matmul.c's k loop with an element-wise epilogue fused into the store,
 * the usual linear-layer pattern.  Edges are masked, so M, N, K need not
 * be multiples of the blocks.
 * Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs on axis 0. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f16, bf16, f32);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(BLOCK_K);
TEENY_CONST(GROUP_M);

TEENY_KERNEL(D, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
void matmul_bias_relu(ptr(D) a_ptr, ptr(D) b_ptr, ptr(D) bias_ptr, ptr(D) c_ptr, i32 M, i32 N,
                      i32 K, i32 stride_am, i32 stride_ak, i32 stride_bk, i32 stride_bn,
                      i32 stride_cm, i32 stride_cn)
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
    tile(ptr(D)) a = a_ptr + col(rm) * stride_am + row(rk) * stride_ak;
    tile(ptr(D)) b = b_ptr + col(rk) * stride_bk + row(rn) * stride_bn;

    tile(f32) acc = zeros(f32, BLOCK_M, BLOCK_N);
    for (i32 k = 0; k < K; k += BLOCK_K) {
        tile(D) av = load(a, (col(rm) < M) & (row(rk) < K - k), 0);
        tile(D) bv = load(b, (col(rk) < K - k) & (row(rn) < N), 0);
        acc = dot(av, bv, acc);
        a += BLOCK_K * stride_ak;
        b += BLOCK_K * stride_bk;
    }

    tile(f32) bias = (tile(f32))load(bias_ptr + rn, rn < N, 0);
    tile(f32) y = maximum(acc + row(bias), 0.0f);
    tile(ptr(D)) c = c_ptr + col(rm) * stride_cm + row(rn) * stride_cn;
    store(c, y, (col(rm) < M) & (row(rn) < N));
}
