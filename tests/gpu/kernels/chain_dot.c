/* chain_dot: attention's two chained dots without the softmax,
 * O = (Q K^T) V per [Z, H] head (bench/gpu.py's "two chained dots"):
 * S = Q K^T of one key block is rounded to D and multiplied by that
 * block's V at once, so S never leaves the program.  Q, K, V, O are
 * [Z, H, N_CTX, HEAD_DIM], contiguous along HEAD_DIM, rows at any stride;
 * N_CTX a multiple of BLOCK_M and BLOCK_N (no masks: the bench's shapes).
 * Grid: (N_CTX / BLOCK_M, Z * H). */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f16, bf16);
TEENY_CONST(HEAD_DIM);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);

TEENY_KERNEL(D, HEAD_DIM, BLOCK_M, BLOCK_N)
void chain_dot(ptr(D) q_ptr, ptr(D) k_ptr, ptr(D) v_ptr, ptr(D) o_ptr, i32 N_CTX,
               i32 stride_h, i32 stride_m)
{
    i32 start_m = program_id(0);
    i64 off = (i64)program_id(1) * stride_h;
    tile(i32) offs_m = start_m * BLOCK_M + arange(0, BLOCK_M);
    tile(i32) offs_n = arange(0, BLOCK_N);
    tile(i32) offs_d = arange(0, HEAD_DIM);
    tile(D) q = load(q_ptr + off + col(offs_m) * stride_m + row(offs_d));
    tile(ptr(D)) kt_ptrs = k_ptr + off + col(offs_d) + row(offs_n) * stride_m;
    tile(ptr(D)) v_ptrs = v_ptr + off + col(offs_n) * stride_m + row(offs_d);
    tile(f32) acc = zeros(f32, BLOCK_M, HEAD_DIM);
    for (i32 start_n = 0; start_n < N_CTX; start_n += BLOCK_N) {
        tile(f32) s = dot(q, load(kt_ptrs));
        acc = dot((tile(D))s, load(v_ptrs), acc);
        kt_ptrs += BLOCK_N * stride_m;
        v_ptrs += BLOCK_N * stride_m;
    }
    store(o_ptr + off + col(offs_m) * stride_m + row(offs_d), acc);
}
