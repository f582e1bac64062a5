/* difffuzz seed 11154: 2d approx w8 cast 2d shape reduce scan dot loop helper order gather math */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static i8 helper0(tile(f16) a, tile(i8) b)
{
    return (((i8) -8) * 7);
}

TEENY_KERNEL(D, BM, BN, E)
void kern(i32 R, i32 C, i32 S, i32 s0, i32 K6, ptr(u8) io14, ptr(f32) in16, ptr(i32) in17, ptr(i8) out20)
{
    i32 pid = program_id(0);
    i32 gn = cdiv(C, BN);
    i32 pm = (pid / gn);
    i32 pn = (pid % gn);
    tile(i32) rm = ((pm * BM) + arange(0, BM));
    tile(i32) rn = ((pn * BN) + arange(0, BN));
    tile(bool) mask = ((col(rm) < R) & (row(rn) < C));
    store((io14 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), (((u8) C) >> (((tile(u8)) load((in16 + ((col(rm) * S) + row(rn))), mask, 0)) % 8)));
    store((io14 + ((pid * (BM * BN)) + ((((load((in17 + (pid * 1))) >> argmax(load((in17 + rn), (rn < C)), 0)) % (BM * BN)) + (BM * BN)) % (BM * BN)))), ((u8) 0));
    tile(i8) v19 = broadcast_to(helper0(full(f16, 0, BM, 1), ((tile(i8)) broadcast_to(minimum(((f32) K6), 64), BM, E))), BM, E);
    store((out20 + ((pid * (BM * E)) + ((col(arange(0, BM)) * E) + row(arange(0, E))))), v19);
}

