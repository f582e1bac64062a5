/* difffuzz seed 50110062: 1d approx w4 shape scan ctrl loop helper gather */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(i32 n, ptr(f32) out10)
{
    i32 pid = program_id(0);
    i32 acc4 = 0;
    for (i32 off5 = ((i32) 0); off5 < n; off5 += B) {
        i32 x9 = (- n);
        acc4 = maximum(acc4, x9);
    }
    store((out10 + (pid * 1)), acc4);
}

