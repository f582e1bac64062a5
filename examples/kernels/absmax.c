/* absmax: the largest magnitude in each BLOCK_SIZE chunk of x, through
 * reduce() with a combine function written in the kernel file.
 * Grid: cdiv(n, BLOCK_SIZE); out has one f32 per program. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

/* Combine two partial results: the larger magnitude (associative and
 * commutative, as reduce requires). */
static inline f32 larger_magnitude(f32 a, f32 b)
{
    return maximum(abs(a), abs(b));
}

TEENY_KERNEL(D, BLOCK_SIZE)
void absmax(ptr(D) x_ptr, ptr(f32) out_ptr, i32 n)
{
    i32 pid = program_id(0);
    tile(i32) offs = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    tile(f32) x = (f32)load(x_ptr + offs, offs < n, 0);
    store(out_ptr + pid, reduce(x, 0, larger_magnitude));
}
