/* softmax: row-wise, numerically stable (subtract the row max), masked so
 * any n_cols <= BLOCK_SIZE works; computed in f32 whatever D is.
 * Grid: one program per row. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void softmax(ptr(D) out_ptr, ptr(D) in_ptr, i32 in_row_stride,
             i32 out_row_stride, i32 n_cols)
{
    i32 row = program_id(0);
    tile(i32) cols = arange(0, BLOCK_SIZE);
    tile(bool) mask = cols < n_cols;
    ptr(D) in_row = in_ptr + row * in_row_stride;
    tile(f32) x = (f32)load(in_row + cols, mask, -INFINITY);
    tile(f32) num = exp(x - max(x, 0));
    f32 den = sum(num, 0);
    ptr(D) out_row = out_ptr + row * out_row_stride;
    store(out_row + cols, num / den, mask);
}
