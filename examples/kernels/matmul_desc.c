/* matmul_desc: C = A B as examples/kernels/matmul.c computes it, written
 * with tensor descriptors (Triton's make_tensor_descriptor and
 * load/store_tensor_descriptor): A [M, K], B [K, N] and C [M, N]
 * row-major; the descriptors' blocks read zeros outside the matrices and
 * write nothing there, so M, N, K need not be multiples of the blocks.
 * Programs are ordered in groups of GROUP_M block-rows, as in matmul.c.
 * Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs on axis 0. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f16, bf16, f32);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(BLOCK_K);
TEENY_CONST(GROUP_M);

TEENY_KERNEL(D, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
void matmul_desc(ptr(D) a_ptr, ptr(D) b_ptr, ptr(D) c_ptr, i32 M, i32 N, i32 K)
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

    tensor_desc(D) a = make_tensor_descriptor(a_ptr, M, K, K, 1, BLOCK_M, BLOCK_K);
    tensor_desc(D) b = make_tensor_descriptor(b_ptr, K, N, N, 1, BLOCK_K, BLOCK_N);
    tensor_desc(D) c = make_tensor_descriptor(c_ptr, M, N, N, 1, BLOCK_M, BLOCK_N);

    tile(f32) acc = zeros(f32, BLOCK_M, BLOCK_N);
    for (i32 k = 0; k < K; k += BLOCK_K)
        acc = dot(load_tensor_descriptor(a, pid_m * BLOCK_M, k),
                  load_tensor_descriptor(b, k, pid_n * BLOCK_N), acc);
    store_tensor_descriptor(c, pid_m * BLOCK_M, pid_n * BLOCK_N, acc);
}
