/* matmul_persistent: C = A B as matmul.c computes it, but with a fixed
 * grid of NUM_SMS programs (Triton's tutorial 09, without TMA): each
 * program walks the output tiles tile_id = pid, pid + NUM_SMS, ...,
 * grouped by GROUP_M block-rows as in matmul.c, with a k loop per tile.
 * Grid: min(NUM_SMS, cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)) programs. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f16, bf16, f32);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(BLOCK_K);
TEENY_CONST(GROUP_M);
TEENY_CONST(NUM_SMS);

TEENY_KERNEL(D, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)
void matmul_persistent(ptr(D) a_ptr, ptr(D) b_ptr, ptr(D) c_ptr, i32 M, i32 N, i32 K,
                       i32 stride_am, i32 stride_ak, i32 stride_bk, i32 stride_bn,
                       i32 stride_cm, i32 stride_cn)
{
    i32 num_pid_m = cdiv(M, BLOCK_M);
    i32 num_pid_n = cdiv(N, BLOCK_N);
    i32 k_tiles = cdiv(K, BLOCK_K);
    i32 num_tiles = num_pid_m * num_pid_n;
    i32 num_pid_in_group = GROUP_M * num_pid_n;
    tile(i32) rk = arange(0, BLOCK_K);
    for (i32 tile_id = program_id(0); tile_id < num_tiles; tile_id += NUM_SMS) {
        i32 group_id = tile_id / num_pid_in_group;
        i32 first_pid_m = group_id * GROUP_M;
        i32 group_size_m = minimum(num_pid_m - first_pid_m, GROUP_M);
        i32 pid_m = first_pid_m + (tile_id % group_size_m);
        i32 pid_n = (tile_id % num_pid_in_group) / group_size_m;
        tile(i32) rm = pid_m * BLOCK_M + arange(0, BLOCK_M);
        tile(i32) rn = pid_n * BLOCK_N + arange(0, BLOCK_N);
        tile(f32) acc = zeros(f32, BLOCK_M, BLOCK_N);
        for (i32 ki = 0; ki < k_tiles; ki++) {
            tile(i32) k = ki * BLOCK_K + rk;
            tile(D) av = load(a_ptr + col(rm) * stride_am + row(k) * stride_ak,
                              (col(rm) < M) & (row(k) < K), 0);
            tile(D) bv = load(b_ptr + col(k) * stride_bk + row(rn) * stride_bn,
                              (col(k) < K) & (row(rn) < N), 0);
            acc = dot(av, bv, acc);
        }
        store(c_ptr + col(rm) * stride_cm + row(rn) * stride_cn, acc,
              (col(rm) < M) & (row(rn) < N));
    }
}
