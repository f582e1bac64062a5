/* difffuzz seed 15507: 2d approx w4 cast 2d shape reduce scan dot ctrl helper gather math special frem barrier fast */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(ptr(i8) in14, ptr(i8) out19)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    store((out19 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), maximum(full(i8, 0, BM, BN), reshape(load((in14 + ((pid * (BM * BN)) + arange(0, BM * BN))), (reshape(broadcast_to(((i8) -8), BM, BN), BM * BN) > ((tile(i8)) (arange(0, BM * BN) - 2))), -1), BM, BN)));
}

