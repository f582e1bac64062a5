#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void vector_add(ptr(D) a_ptr, ptr(D) b_ptr, ptr(D) out_ptr, i32 n_elements)
{
    i32 pid = program_id(0);
    tile(i32) offs = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    tile(bool) mask = offs < n_elements;
    tile(D) a = load(a_ptr + offs, mask, 0);
    tile(D) b = load(b_ptr + offs, mask, 0);
    store(out_ptr + offs, a + b, mask);
}
