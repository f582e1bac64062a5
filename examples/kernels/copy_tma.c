/* copy_tma: dst = src for row-major [M, N] tensors, block by block, with
 * both tensors given as tensor descriptors by the client (tensor_desc
 * kernel parameters: the client encodes each one's CUtensorMap with
 * teeny_tensormap_encode or tests/gpu/teeny_gpu.py's TensorDesc).  On
 * sm_90 and later each block is read by the Tensor Memory Accelerator
 * (one cp.async.bulk.tensor per program) where the tensormap could be
 * encoded (16-byte aligned base and rows), else by plain loads; blocks
 * hanging over the edges read zeros there and write nothing.
 * Grid: (cdiv(N, BLOCK_N), cdiv(M, BLOCK_M)): consecutive programs take
 * neighbouring blocks of the same rows (whole DRAM pages). */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16, i8, u8, i16, i32, f8e4m3, f8e5m2);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);

TEENY_KERNEL(D, BLOCK_M, BLOCK_N)
void copy_tma(tensor_desc(D, BLOCK_M, BLOCK_N) src, tensor_desc(D, BLOCK_M, BLOCK_N) dst)
{
    i32 n = program_id(0) * BLOCK_N, m = program_id(1) * BLOCK_M;
    store_tensor_descriptor(dst, m, n, load_tensor_descriptor(src, m, n));
}
