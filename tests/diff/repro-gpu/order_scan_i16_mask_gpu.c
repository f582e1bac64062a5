/* difffuzz seed 70002117: 1d approx w2 cast reduce scan atomic order gather math barrier sem hint */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

static i16 cmb_add_i16(i16 a, i16 b)
{
    return a + b;
}

TEENY_KERNEL(B, E)
void kern(ptr(u32) out8, ptr(i32) in9)
{
    i32 pid = program_id(0);
    tile(u32) old7 = full(u32, 0, B);
    store((out8 + ((pid * B) + arange(0, B))), old7, ((tile(bool)) scan(((i16) sum(broadcast_to(load((in9 + (((pid % 269) + 269) % 269))), E, B), 0)), 0, cmb_add_i16)));
}

