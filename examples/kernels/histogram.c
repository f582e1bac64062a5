/* histogram: counts[v] += 1 for every value v of data that lies in
 * [0, NUM_BINS), with atomic adds (programs race on the bins).
 * Grid: cdiv(n, BLOCK_SIZE); counts must start at zero. */
#include <teeny/dsl.h>

/* The kernel's name is also the builtin histogram()'s, which it shadows
 * (docs/dsl.md §1); on the host the builtin is a macro. */
#undef histogram

TEENY_CONST(BLOCK_SIZE);
TEENY_CONST(NUM_BINS);

TEENY_KERNEL(BLOCK_SIZE, NUM_BINS)
void histogram(ptr(i32) data_ptr, ptr(i32) counts_ptr, i32 n)
{
    i32 pid = program_id(0);
    tile(i32) offs = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    tile(bool) mask = offs < n;
    tile(i32) v = load(data_ptr + offs, mask, 0);
    tile(bool) in_range = mask & (v >= 0) & (v < NUM_BINS);
    atomic_add(counts_ptr + v, 1, in_range);
}
