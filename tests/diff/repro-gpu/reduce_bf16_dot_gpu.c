/* difffuzz seed 102591: 2d approx w1 cast 2d shape reduce dot dot_f32 loop helper barrier */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static i8 cmb_max_i8(i8 a, i8 b)
{
    return maximum(a, b);
}

TEENY_KERNEL(D, BM, BN, E)
void kern(i8 s1, ptr(bf16) out26)
{
    i32 pid = program_id(0);
    store((out26 + ((pid * BM) + arange(0, BM))), ((u32) reduce(((i8) broadcast_to(((f32) s1), BN, BM)), 0, cmb_max_i8)));
}

