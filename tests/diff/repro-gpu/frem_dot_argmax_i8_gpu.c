/* difffuzz seed 1802: 2d approx w4 cast 2d reduce scan dot dot_f32 helper gather frem prec hint */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(i32 R, ptr(f32) in9, ptr(bf16) in11, ptr(i8) out12)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    i32 pm = program_id(0);
    tile(i32) rm = ((pm * BM) + arange(0, BM));
    store((out12 + ((pid * BN) + arange(0, BN))), ((i8) argmax(((tile(i8)) ((u32) dot(broadcast_to(minimum(maximum(load((in11 + col(rm)), col((rm < R))), -8), 8), BM, BM), minimum(abs(((bf16) dot(ceil(load((in9 + ((col(arange(0, BM)) * BM) + row(arange(0, BM)))))), broadcast_to(7.0f, BM, BN), prec_tf32x3))), 8), full(f32, 0, BM, BN)))), 0)));
}

