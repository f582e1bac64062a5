/* Issue 11, defect 1: a scalar load is one value in every lane, whatever
 * the program stores afterwards.  Every element of out must be 0.
 *   teenyc run scalar_load_uniform.c -k k -c B=128 --fill flag=1 --fill out=128 --engine both
 * expect: out all 0, flag 1 */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void k(ptr(i32) flag, ptr(i32) out)
{
    i32 c = load(flag);
    store(flag, c + 1);
    store(out + arange(0, B), c);
}
