/* difffuzz seed 13886: 1d approx w8 cast reduce loop helper order gather */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(bf16) io6, ptr(u64) in7)
{
    i32 pid = program_id(0);
    store((io6 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E))))), minimum(((tile(bf16)) load((in7 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E))))))), 64));
    store((io6 + ((pid * (B * E)) + arange(0, B * E))), full(bf16, 0, B * E));
}

