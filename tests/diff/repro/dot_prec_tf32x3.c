/* difffuzz (reduced from campaign seed 6001211, compiler of 46a2b1c): an
 * f32 dot with prec_tf32x3 on real-valued data.  The generated code
 * rounded the operands to TF32 once (errors ~4e-3 of 26, past the
 * tolerance of 1.3e-3 that tf32x3 allows: 2^-20 per product plus the
 * accumulation); 219610a computes tf32x3 (and models the precisions in
 * the interpreter). */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(i32 n, ptr(f32) x, ptr(f32) out)
{
    tile(f32) v = dot(broadcast_to(minimum((f32) n, 4), B, E),
                      load(x + col(arange(0, E)) * E + row(arange(0, E))), prec_tf32x3);
    store(out + col(arange(0, B)) * E + row(arange(0, E)), v);
}
