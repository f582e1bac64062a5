/* libdevice_asin: y = asin(x), Triton's tutorial 07 ("Libdevice
 * (tl.extra.libdevice) Function"), which calls libdevice's asin on a
 * vector.  Here asin is a builtin (docs/dsl.md §5): computed in f64 and
 * rounded once for f32, f16 and bf16; its .mlir artifact calls
 * __nv_asinf as the tutorial does.  Grid: cdiv(n_elements, BLOCK_SIZE). */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f64, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void asin_kernel(ptr(D) x_ptr, ptr(D) y_ptr, i32 n_elements)
{
    i32 pid = program_id(0);
    i32 block_start = pid * BLOCK_SIZE;
    tile(i32) offsets = block_start + arange(0, BLOCK_SIZE);
    tile(bool) mask = offsets < n_elements;
    tile(D) x = load(x_ptr + offsets, mask);
    x = asin(x);
    store(y_ptr + offsets, x, mask);
}
