/* issue 11, defect 2, as the issue states it (difffuzz finds it in every
 * campaign, category "order"): an in-place tile update, then a scalar
 * load of x[j] and a store of it times 10.  Program order makes x[j]
 * (x[j] + 1) * 10; the generated code gives x[j] + 1 or x[j] * 10. */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(f32) x, i32 j)
{
    tile(i32) o = arange(0, B);
    store(x + o, load(x + o) + 1.0f);
    f32 v = load(x + j);
    store(x + j, v * 10.0f);
}
