/* difffuzz seed 60003297: 1d exact w2 cast reduce scan special */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

static f16 cmb_amax_f16(f16 a, f16 b)
{
    return maximum(abs(a), abs(b));
}

TEENY_KERNEL(B, E)
void kern(i32 n, ptr(f16) in5, ptr(f16) out6)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    store((out6 + offs), scan(minimum(maximum(abs(ceil(load((in5 + offs), mask))), -8), 8), 0, cmb_amax_f16), mask);
}

