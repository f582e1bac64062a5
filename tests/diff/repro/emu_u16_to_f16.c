/* difffuzz (reduced from campaign seed 10005808, compiler 219610a): an i8
 * tile (a sum with a scan's result) converted to u16 and then, by
 * promotion, to f16.  -128 as u16 is 65408, so 0 - x is -65408; the host
 * emulator gives -128 (the conversion taken as signed).  The PTX is right
 * (cvt.s16.s8, then cvt.rn.f16.u16): the emulator's host lowering of the
 * same unsigned -> half conversion is not, as for emu_u64_to_bf16 (here
 * only when the values come through the scan's layout, probably vector
 * code).  An emulator bug, not one of the generated code.  Fixed on
 * branch fix11: LLVM 19's SLP vectoriser on x86 turned `uitofp (sext i8
 * to i16) to half` into `uitofp <4 x i8>`; the emulator now optimises
 * with default<O1>, no vectorisers (tests/unit/test_emulator.c). */
#include <teeny/dsl.h>

TEENY_CONST(B);

static u32 cmb(u32 a, u32 b) { return maximum(a, b); }

TEENY_KERNEL(B)
void kern(ptr(i8) x, ptr(i32) out)
{
    tile(i8) v = load(x + arange(0, B)) + (i8) scan((tile(u32)) arange(0, B), 0, cmb);
    store(out + arange(0, B), (i32) (((f16) 0) - ((u16) v)));
}
