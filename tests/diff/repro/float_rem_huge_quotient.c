/* difffuzz (reduced from a generated kernel): x % y for floats is exact
 * (fmod) in the interpreter.  The code generator computes it in f64 as
 * x - trunc(x / y) * y with one correction step, which is wrong once
 * |x / y| is past 2^53: trunc(x / y) is not the integer quotient.  Here
 * x holds special values (FLT_MAX, 1e6-ish reals, 2^24 + 1, ...), y = 75. */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(i32 n, ptr(f32) x, ptr(f32) out)
{
    tile(i32) o = program_id(0) * B + arange(0, B);
    store(out + o, load(x + o) % ((f32) n));
}
