/* Issue 11, defect 2: a tile store, then a scalar load and store of one
 * element that another thread stored.
 *   teenyc run store_then_load.c -k k -c B=128 --fill x=128:iota --arg j=77 --engine both
 * expect: x[77] = 780, x[i] = i + 1 elsewhere */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void k(ptr(f32) x, i32 j)
{
    tile(i32) o = arange(0, B);
    store(x + o, load(x + o) + 1.0f);
    f32 v = load(x + j);
    store(x + j, v * 10.0f);
}
