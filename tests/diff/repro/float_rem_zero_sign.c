/* difffuzz (reduced from a generated kernel): a float remainder that is
 * zero keeps the dividend's sign (docs/dsl.md §4: "the result has the sign
 * of the dividend"): -3.0 % 1.0 is -0, so 1 / (x % 1.0) is -inf for a
 * negative integer x.  The code generator's float_rem (fma(-trunc(x/y), y,
 * x)) gives +0 there: +inf. */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(f64) x, ptr(f64) out)
{
    tile(i32) o = arange(0, B);
    store(out + o, 1.0 / (load(x + o) % 1.0));
}
