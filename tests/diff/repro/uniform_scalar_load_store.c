/* difffuzz (reduced from campaign seed 1000019): issue 11, defect 1.  A
 * scalar load of a per-program flag, a store to the flag, then the loaded
 * value stored by every lane.  Scalars are uniform: every lane must see
 * the value loaded before the store (1, the fill's flag[1]).  In the
 * generated code every thread loads on its own, after thread 0's store,
 * so all lanes but one see 0. */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(i32) flag, ptr(i32) out)
{
    i32 pid = program_id(0);
    i32 c = load(flag + pid);
    store(flag + pid, 0);
    store(out + pid * B + arange(0, B), c);
}
