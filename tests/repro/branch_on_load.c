/* Issue 11, defect 1: a branch on a scalar load, an atomic inside it (used
 * to deadlock: threads disagreed on the branch, the atomic's barriers
 * waited forever).
 *   teenyc run branch_on_load.c -k k -c B=128 --fill flag=1 --fill out=128 --engine both
 * expect: out all 0, flag 1 */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void k(ptr(i32) flag, ptr(i32) out)
{
    i32 c = load(flag);
    if (c == 0) {
        atomic_xchg(flag, 1);
    }
    store(out + arange(0, B), c);
}
