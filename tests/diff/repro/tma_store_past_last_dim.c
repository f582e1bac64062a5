/* difffuzz seed 82001056 (GPU campaign 13), reduced: a TMA store of an i8
 * [16, 32] block to a tensor whose last dim (62) is not a multiple of 16
 * bytes: the H200 writes rows in whole 16-byte pieces, past the last dim. */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(tensor_desc(i8, BM, BN) td3)
{
    i32 pm = program_id(0);
    i32 pn = program_id(1);
    store_tensor_descriptor(td3, ((pm * BM) + 1), (pn * BN), full(u32, 0, BM, BN));
}

