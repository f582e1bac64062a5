/* difffuzz seed 7855: 2d approx w1 cast 2d shape reduce loop order gather */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(ptr(u64) out22)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    i32 pm = program_id(0);
    i32 it5 = 0;
    i32 it10 = 0;
    store((out22 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), pm, (((u32) (arange(0, BN) - 17)) > ((u16) 0)));
}

