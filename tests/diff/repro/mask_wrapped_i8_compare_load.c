/* difffuzz seed 16106: 1d exact w8 cast shape reduce scan loop atomic helper uniform gather special barrier sem */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(i64) out8, ptr(i16) in9)
{
    i32 pid = program_id(0);
    tile(i64) old7 = full(i64, 0, B);
    store((out8 + ((pid * B) + arange(0, B))), old7, ((bool) load((in9 + ((pid * B) + arange(0, B))), (reshape(broadcast_to(((i8) -8), 1, B), B) > ((tile(i8)) (arange(0, B) - 2))), -1)));
    i32 it13 = 0;
    i32 it26 = 0;
}

