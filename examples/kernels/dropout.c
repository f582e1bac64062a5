/* dropout with a seed instead of a mask tensor, as Triton's tutorial 04
 * ("Low-Memory Dropout") writes it: each element is kept with probability
 * 1 - p, decided by rand(seed, offset), so the same (seed, offsets) give
 * the same mask (the same one as Triton's tl.rand) and no mask needs to be
 * stored for the backward pass.  Grid: cdiv(n, BLOCK_SIZE). */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void seeded_dropout(ptr(D) x_ptr, ptr(D) output_ptr, i32 n_elements, f32 p, i32 seed)
{
    i32 pid = program_id(0);
    i32 block_start = pid * BLOCK_SIZE;
    tile(i32) offsets = block_start + arange(0, BLOCK_SIZE);
    tile(bool) mask = offsets < n_elements;
    tile(f32) x = (f32)load(x_ptr + offsets, mask, 0);
    tile(f32) random = rand(seed, offsets);
    tile(bool) x_keep = random > p;
    tile(f32) output = where(x_keep, x / (1 - p), 0.0f);
    store(output_ptr + offsets, output, mask);
}
