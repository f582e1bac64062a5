/* difffuzz seed 1543: 2d approx w2 2d shape reduce ctrl gather */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(D, BM, BN, E)
void kern(D R, D C, ptr(bf16) out9)
{
    D pid = program_id(0);
    D gn = cdiv(C, BN);
    D pm = (pid / gn);
    D pn = (pid % gn);
    tile(D) rm = ((pm * BM) + arange(0, BM));
    tile(D) rn = ((pn * BN) + arange(0, BN));
    tile(bool) mask = ((col(rm) < R) & (row(rn) < C));
    store((out9 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), (((bf16) 7) + (- ((D) mask))));
}

