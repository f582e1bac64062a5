/* difffuzz seed 70002903: 1d exact w4 cast shape reduce ctrl atomic atomic_shared helper gather frem sem hint */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(i8) in6, ptr(i16) out22)
{
    i32 pid = program_id(0);
    store((out22 + ((pid * B) + arange(0, B))), ((i16) max((- ((i32) ((f32) load((in6 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E))))))))), 1)));
}

