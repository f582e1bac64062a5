/* difffuzz (reduced from generated seed 8): a store whose mask combines the
 * edge mask with a value computed from a broadcast column load.  The
 * generated code takes a vectorised fast path (st.global.v2) when a
 * thread's mask and alignment allow it and then branches past the
 * layout-conversion fallback, whose bar.sync the other threads wait at:
 *     @%p2 st.global.v2.f32 [...]; @%p2 bra $L__BB0_2; bar.sync 0; ...
 * A barrier under a thread-dependent branch: the emulator reports a
 * deadlock; on a GPU it is undefined behaviour. */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);

TEENY_KERNEL(BM, BN)
void kern(i32 R, i32 C, i32 S, ptr(f32) x, ptr(f32) out)
{
    tile(i32) rm = program_id(0) * BM + arange(0, BM);
    tile(i32) rn = program_id(1) * BN + arange(0, BN);
    tile(bool) mask = (col(rm) < R) & (row(rn) < C);
    tile(f32) v = broadcast_to(ceil(load(x + col(rm), col(rm < R))), BM, BN);
    store(out + col(rm) * S + row(rn), 0.0f, mask & (v != 0));
}
