/* difffuzz (reduced from campaign seeds 3000089, 3000168, 3000211, after
 * the memory-model merge): a tile store whose value is a broadcast column
 * (its elements held by several threads each), then a scalar store to one
 * of the same elements.  In program order the element ends as 0; in the
 * generated code a thread holding a copy of the column stores 1 over it
 * afterwards.  Fails whenever threads outnumber the column's elements per
 * row (2x2 with 1 or 4 warps, 16x16 and 4x64 with 4 warps); 16x16 with 1
 * warp and 64x32 pass.  Fixed on branch fix11: such a value is converted
 * into the store's layout through shared memory, and the store was made
 * pending (order.c) before that conversion, whose barriers then emptied
 * the pending set: nothing ordered the store before the scalar access.
 * Accesses are now recorded once their operands are made (dsl/nvptx/mem.c;
 * tests/unit/test_memmodel.c replicated_store_then_scalar has the class,
 * tile loads with a converted mask too). */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);

TEENY_KERNEL(BM, BN)
void kern(i32 j, ptr(i32) io, ptr(f32) x)
{
    tile(i32) rm = arange(0, BM);
    store(io + col(rm) * BN + row(arange(0, BN)), broadcast_to((i32) load(x + col(rm)), BM, BN));
    store(io + j, 0);
}
