/* difffuzz seed 80001460: 2d exact w8 cast 2d shape reduce scan ctrl helper gather special hint rank3 */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static bool helper0(i8 a, bool b)
{
    bool t = ((bool) a);
    return (((bool) a) ? t : t);
}

TEENY_KERNEL(BM, BN, E)
void kern(i32 R, i32 C, i32 S, f64 s0, i32 s1, i32 s2, ptr(i32) out6, ptr(bool) in7, ptr(f16) out8, ptr(f16) in9, ptr(i32) in10, ptr(bf16) in11, ptr(bool) in12)
{
    i32 pid = program_id(0);
    i32 gn = cdiv(C, BN);
    i32 pm = (pid / gn);
    i32 pn = (pid % gn);
    tile(i32) rm = ((pm * BM) + arange(0, BM));
    tile(i32) rn = ((pn * BN) + arange(0, BN));
    tile(bool) mask = ((col(rm) < R) & (row(rn) < C));
    store((out6 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), min(flip(join(broadcast_to((where(((bool) row(arange(0, BN))), program_id(1), R) + 4), BM, BN), broadcast_to(row((arange(0, BN) - 12)), BM, BN)), 2), -1));
    if (where(false, load((in7 + (pid * 1))), true)) {
        store((out8 + ((pid * (BM * E)) + ((col(arange(0, BM)) * E) + row(arange(0, E))))), minimum(reshape(join(load((in9 + (((maximum(((i32) sum(broadcast_to(((f32) s2), BM))), reshape(load((in10 + (((broadcast_to(minimum(((i32) ((u32) 3)), pn), 16, 1) % 219) + 219) % 219))), 16)) % 141) + 141) % 141)), evict_last), broadcast_to(abs(((f16) ((((bool) pid) ? ((bf16) pn) : load((in11 + (pid * 1)))) * sqrt(((f16) pn))))), 16)), BM, 1), where(((bool) row(arange(0, E))), maximum((((bool) S) ? maximum(((f16) pm), ((f16) pn)) : (load((in12 + (((R % 152) + 152) % 152))) ? ((f16) 1) : ((f16) -5))), load((in9 + col(rm)), col((rm < R)), 0)), ((f16) s0))));
    } else {
        store((out8 + ((pid * (BM * E)) + ((col(arange(0, BM)) * E) + row(arange(0, E))))), (- (((f16) s1) * ((f16) S))));
    }
}

