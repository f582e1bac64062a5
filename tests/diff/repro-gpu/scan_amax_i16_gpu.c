/* difffuzz seed 78004219: 2d exact w8 cast 2d shape reduce scan order gather hint */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static i16 cmb_amax_i16(i16 a, i16 b)
{
    return maximum(abs(a), abs(b));
}

TEENY_KERNEL(BM, BN, E)
void kern(i32 S, ptr(i16) in8, ptr(i8) out10)
{
    i32 pid = program_id(0);
    store((out10 + ((pid * (BM * BN)) + ((col(arange(0, BN)) * BM) + reshape(arange(0, BM), 1, BM)))), ((i8) scan(minimum(((i16) (load((in8 + ((pid * (BM * BN)) + ((col(arange(0, BN)) * BM) + reshape(arange(0, BM), 1, BM))))) * (((f32) S) / (0.5f * 10.0f)))), full(i16, 0, BN, BM)), 0, cmb_amax_i16)));
}

