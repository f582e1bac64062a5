/* difffuzz seed 9495: 1d exact w4 cast shape reduce loop helper gather */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(i32 n, ptr(f32) out10)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    store((out10 + offs), ((1 / (((u16) arange(0, B)) / ((u16) mask))) % 7), mask);
}

