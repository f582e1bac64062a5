/* fp8_quant: row-wise quantisation to fp8 and back, as inference kernels
 * do before an fp8 matmul.  quantize_rows scales each row of x so that its
 * largest magnitude becomes the fp8 format's largest finite value, stores
 * the fp8 row and the scale that undoes it; dequantize_rows multiplies
 * back.  Rows are n_cols <= BLOCK_SIZE long.  Grid: one program per row. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_DTYPE(Q, f8e4m3, f8e5m2);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, Q, BLOCK_SIZE)
void quantize_rows(ptr(D) x_ptr, ptr(Q) q_ptr, ptr(f32) scale_ptr, i32 stride,
                   i32 n_cols, f32 q_max)
{
    i32 row = program_id(0);
    tile(i32) cols = arange(0, BLOCK_SIZE);
    tile(bool) mask = cols < n_cols;
    tile(f32) x = (tile(f32))load(x_ptr + row * stride + cols, mask, 0);
    f32 amax = max(abs(x), 0);
    f32 scale = amax > 0 ? q_max / amax : 1.0;
    store(q_ptr + row * stride + cols, (tile(Q))(x * scale), mask);
    store(scale_ptr + row, 1.0 / scale);
}

TEENY_KERNEL(D, Q, BLOCK_SIZE)
void dequantize_rows(ptr(Q) q_ptr, ptr(f32) scale_ptr, ptr(D) y_ptr, i32 stride,
                     i32 n_cols)
{
    i32 row = program_id(0);
    tile(i32) cols = arange(0, BLOCK_SIZE);
    tile(bool) mask = cols < n_cols;
    tile(f32) q = (tile(f32))load(q_ptr + row * stride + cols, mask, 0);
    store(y_ptr + row * stride + cols, (tile(D))(q * load(scale_ptr + row)), mask);
}
