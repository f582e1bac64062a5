/* difffuzz seed 50001544: 1d exact w4 cast shape reduce ctrl loop atomic helper uniform sem hint */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(i32) in13, ptr(f16) out16)
{
    i32 pid = program_id(0);
    i32 it8 = 0;
    tile(f16) v15 = abs(((f16) ((bf16) load((in13 + ((pid * B) + arange(0, B)))))));
    store((out16 + ((pid * B) + arange(0, B))), v15);
}

