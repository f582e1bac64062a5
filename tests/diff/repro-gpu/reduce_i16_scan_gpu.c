/* difffuzz seed 50102967: 1d exact w2 cast shape reduce scan ctrl loop helper gather special frem */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(D, B, E)
void kern(ptr(i32) in5, ptr(bool) in27, ptr(i16) in28, ptr(i16) out29)
{
    i32 pid = program_id(0);
    i32 it19 = 0;
    store((out29 + ((pid * B) + arange(0, B))), ((tile(i16)) argmax((- where(load((in27 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E)))))), (((i16) 5) << minimum(maximum(load((in28 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E)))))), -15), 15)), ((i16) load((in5 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E))))), false, 1)))), -1)));
}

