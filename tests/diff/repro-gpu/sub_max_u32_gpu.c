/* difffuzz seed 84003053: 2d approx w4 cast 2d shape reduce scan ctrl loop atomic_shared helper gather frem barrier sem rank3 desc */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(i32 R, i32 S, ptr(u32) in10, ptr(u32) out11)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    if ((((i64) load((in10 + (pid * 1)))) == ((u8) 0))) {
    } else {
        store((out11 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), sum(maximum(expand_dims(((sum(broadcast_to(((u32) 2), BM), 0) ^ 5) - (reshape(broadcast_to(((i16) R), BM * BN), BM, BN) + 1)), 1), expand_dims(broadcast_to(((u32) S), BM, BN), 1)), -2));
    }
    i32 it29 = 0;
}

