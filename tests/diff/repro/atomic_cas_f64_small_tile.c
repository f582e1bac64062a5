/* difffuzz seed 60013205: 2d exact w8 cast 2d shape reduce scan loop atomic helper gather special sem */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(ptr(f64) at3, ptr(f64) in4)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    tile(f64) old5 = atomic_cas((at3 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), minimum(floor(maximum(reshape(load((in4 + ((pid * BM) + arange(0, BM)))), BM, 1), full(f64, 0, 1, BN))), 2), minimum(((f64) 9), 2));
    i32 it24 = 0;
}

