/* difffuzz seed 70001297: 1d exact w2 shape reduce scan helper gather barrier */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(D, B, E)
void kern(i32 n, ptr(i8) in7, ptr(u32) out11)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    u32 v10 = sum(((tile(u32)) (((tile(u32)) load((in7 + offs), mask, 2)) + full(D, 0, B))));
    store((out11 + (pid * 1)), v10);
}

