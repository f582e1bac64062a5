/* difffuzz (reduced from generated seed 2): an atomic on the program's
 * own elements, then a store to the same elements of a value in another
 * layout (a reduction along axis 1).  In program order the store comes
 * last, so every element ends as 1.  In the generated code the store's
 * lanes are other threads than the atomic's and nothing orders them:
 * elements 32..62 keep the atomic's 0 (issue 11, defect 2: a write and a
 * later access of the same address by another thread, here write after
 * write). */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(f64) x)
{
    tile(i32) o = program_id(0) * B + arange(0, B);
    atomic_xchg(x + o, zeros(f64, B));
    store(x + o, sum(full(f64, 1, B, E), 1));
}
