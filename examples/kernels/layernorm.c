/* layernorm (forward): y = (x - mean) * rstd * w + b per row, with mean and
 * rstd stored for a backward pass.  Rows of any length: the row is walked
 * in BLOCK_SIZE chunks.  Statistics in f32.  Grid: one program per row. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void layernorm(ptr(D) x_ptr, ptr(D) y_ptr, ptr(D) w_ptr, ptr(D) b_ptr,
               ptr(f32) mean_ptr, ptr(f32) rstd_ptr, i32 stride, i32 n_cols,
               f32 eps)
{
    i32 row = program_id(0);
    ptr(D) x = x_ptr + row * stride;
    ptr(D) y = y_ptr + row * stride;

    tile(f32) acc = zeros(f32, BLOCK_SIZE);
    for (i32 off = 0; off < n_cols; off += BLOCK_SIZE) {
        tile(i32) cols = off + arange(0, BLOCK_SIZE);
        acc += (f32)load(x + cols, cols < n_cols, 0);
    }
    f32 mean = sum(acc, 0) / n_cols;

    tile(f32) sq = zeros(f32, BLOCK_SIZE);
    for (i32 off = 0; off < n_cols; off += BLOCK_SIZE) {
        tile(i32) cols = off + arange(0, BLOCK_SIZE);
        tile(bool) mask = cols < n_cols;
        tile(f32) d = where(mask, (f32)load(x + cols, mask, 0) - mean, 0.0f);
        sq += d * d;
    }
    f32 rstd = rsqrt(sum(sq, 0) / n_cols + eps);
    store(mean_ptr + row, mean);
    store(rstd_ptr + row, rstd);

    for (i32 off = 0; off < n_cols; off += BLOCK_SIZE) {
        tile(i32) cols = off + arange(0, BLOCK_SIZE);
        tile(bool) mask = cols < n_cols;
        tile(f32) w = (f32)load(w_ptr + cols, mask, 0);
        tile(f32) b = (f32)load(b_ptr + cols, mask, 0);
        tile(f32) xv = (f32)load(x + cols, mask, 0);
        store(y + cols, (xv - mean) * rstd * w + b, mask);
    }
}
