/* difffuzz (reduced from campaign seed 1000003): issue 11, defect 2.  A
 * tile store to the program's slot, then a scalar store of one element
 * of it (an index computed from data).  In program order the scalar store
 * is last: that element must end as 0.  In the generated code the thread
 * of the scalar store does not wait for the thread that owns the element
 * in the tile store, which overwrites it with 1. */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(i32) x, ptr(u8) io)
{
    i32 pid = program_id(0);
    store(io + pid * B + arange(0, B), (u8) 1);
    i32 j = ((load(x + pid) * 3) % B + B) % B;
    store(io + pid * B + j, (u8) 0);
}
