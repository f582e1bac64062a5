/* difffuzz (reduced from campaign seed 1000027): issue 11, defect 1 (the
 * deadlock).  A branch on a scalar loaded from a flag, an atomic inside.
 * Threads load the flag on their own, disagree on the branch once the
 * first has done the atomic, and wait at different barriers: "block
 * deadlocked" in the emulator (Triton's layer-norm backward lock, the
 * `if count == 0: atomic_xchg(Count, 1)` pattern). */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(i64) flag)
{
    i32 pid = program_id(0);
    i64 c = load(flag + pid);
    if (c == 0) {
        atomic_xchg(flag + pid, (i64) 1);
    }
}
