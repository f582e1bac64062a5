/* Cross entropy with its gradient in one pass over the logits, in the
 * style of Liger-Kernel: per row, an online softmax over BLOCK_SIZE chunks
 * (running max and sum), the loss, then the gradient softmax(x) / n_rows
 * written over the logits in place, and fixed up at the target: - 1 /
 * n_rows there (a scalar load and store of an element another thread has
 * just stored).  Grid: one program per row. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void cross_entropy(ptr(D) X, ptr(i32) Y, ptr(f32) loss, i32 stride, i32 n_cols,
                   i32 n_rows)
{
    i32 row = program_id(0);
    ptr(D) x = X + row * stride;
    i32 y = load(Y + row);
    f32 x_y = (f32)load(x + y);
    f32 m = -INFINITY;
    f32 d = 0.0f;
    for (i32 off = 0; off < n_cols; off += BLOCK_SIZE) {
        tile(i32) cols = off + arange(0, BLOCK_SIZE);
        tile(f32) v = (f32)load(x + cols, cols < n_cols, -INFINITY);
        f32 m_new = maximum(m, max(v, 0));
        d = d * exp(m - m_new) + sum(exp(v - m_new), 0);
        m = m_new;
    }
    f32 lse = m + log(d);
    for (i32 off = 0; off < n_cols; off += BLOCK_SIZE) {
        tile(i32) cols = off + arange(0, BLOCK_SIZE);
        tile(bool) mask = cols < n_cols;
        tile(f32) v = (f32)load(x + cols, mask, -INFINITY);
        store(x + cols, exp(v - lse) / n_rows, mask);
    }
    f32 g = (f32)load(x + y);
    store(x + y, g - 1.0f / n_rows);
    store(loss + row, (lse - x_y) / n_rows);
}
