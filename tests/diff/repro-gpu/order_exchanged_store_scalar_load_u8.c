/* difffuzz seed 1381: 2d exact w8 cast 2d scan order */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(f32 s2, ptr(u8) io6, ptr(u8) out10)
{
    i32 pid = program_id(0);
    store((io6 + ((pid * (BM * E)) + ((col(arange(0, BM)) * E) + row(arange(0, E))))), (((u8) ((f32) ((i16) s2))) << minimum((6 * ((u8) cumsum(full(u16, 1, E), 0))), 7)));
    u8 e9 = load((io6 + ((pid * (BM * E)) + (((((i32) -1073741825) % (BM * E)) + (BM * E)) % (BM * E)))));
    store((out10 + (pid * 1)), e9);
}

