/* scale: y = alpha * x, and its backward kernel dx = alpha * dy, paired
 * with TEENY_BACKWARD so that teenyc-gen writes a dispatcher returning
 * both; alpha has the element dtype D.  Grid: cdiv(n, BLOCK_SIZE). */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void scale(ptr(D) x_ptr, ptr(D) y_ptr, D alpha, i32 n)
{
    tile(i32) offs = program_id(0) * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    tile(bool) mask = offs < n;
    store(y_ptr + offs, load(x_ptr + offs, mask, 0) * alpha, mask);
}

TEENY_KERNEL(D, BLOCK_SIZE)
void scale_backward(ptr(D) dy_ptr, ptr(D) dx_ptr, D alpha, i32 n)
{
    tile(i32) offs = program_id(0) * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    tile(bool) mask = offs < n;
    store(dx_ptr + offs, load(dy_ptr + offs, mask, 0) * alpha, mask);
}

TEENY_BACKWARD(scale, scale_backward);
