/* A kernel with an unknown name (n_element): the host check must reject it. */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BLOCK_SIZE);

TEENY_KERNEL(D, BLOCK_SIZE)
void vector_add(ptr(D) a_ptr, ptr(D) out_ptr, i32 n_elements)
{
    tile(i32) offs = program_id(0) * BLOCK_SIZE + arange(0, BLOCK_SIZE);
    store(out_ptr + offs, load(a_ptr + offs, offs < n_element, 0), offs < n_elements);
}
