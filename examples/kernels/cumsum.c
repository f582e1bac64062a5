/* cumsum_rows: inclusive prefix sum of each row (n <= BLOCK_SIZE columns).
 * Grid: one program per row. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, i32);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void cumsum_rows(ptr(D) x_ptr, ptr(D) out_ptr, i32 n, i32 stride)
{
    i32 row = program_id(0);
    tile(i32) cols = arange(0, BLOCK_SIZE);
    tile(bool) mask = cols < n;
    tile(D) x = load(x_ptr + row * stride + cols, mask, 0);
    store(out_ptr + row * stride + cols, cumsum(x, 0), mask);
}
