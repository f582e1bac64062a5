/* difffuzz seed 50000631: 1d exact w2 cast reduce dot */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(D, B, E)
void kern(i64 s0, ptr(i32) in2, ptr(i64) out5)
{
    i32 pid = program_id(0);
    tile(i64) v4 = ((tile(i64)) min(fma(((bf16) s0), ((bf16) load((in2 + ((col(arange(0, B)) * E) + row(arange(0, E)))), full(bool, true, 1, E), -3)), ((bf16) s0)), 1));
    store((out5 + ((pid * B) + arange(0, B))), v4);
}

