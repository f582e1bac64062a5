/* difffuzz seed 60003109: 2d exact w4 cast 2d ctrl atomic_shared order gather frem barrier sem */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(D, BM, BN, E)
void kern(ptr(i32) out20, ptr(i32) in21)
{
    i32 pid = program_id(0);
    store((out20 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), ((i32) (full(bf16, 1, BN) * load((in21 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN)))))))));
}

