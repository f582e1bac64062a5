/* difffuzz seed 82000054 (GPU campaign 13), reduced: a TMA store whose box
 * starts 2 elements before the tensor: an illegal instruction on the H200. */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(tensor_desc(f64, BM, BN) td8)
{
    i32 pm = program_id(0);
    i32 pn = program_id(1);
    store_tensor_descriptor(td8, (pm * BM), ((pn * BN) + -2), full(f64, 0, BM, BN));
}

