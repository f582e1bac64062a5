/* difffuzz (reduced from campaign seed 4000142): u64 values with the top
 * bit set converted to bf16.  2^64 - k rounds to 1.8446744e19; the host
 * emulator gives small garbage (255, 254, ...).  The PTX is right
 * (sm_80: cvt.rn.f32.u64 then cvt.rn.bf16.f32; sm_90a: cvt.rn.bf16.u64):
 * the host lowering of `uitofp i64 ... to bfloat` the emulator JIT-compiles
 * is not.  f16, f32 targets and i64/u32 sources are right.  An emulator
 * (host LLVM) bug, not one of the generated code.  Fixed on branch fix11:
 * the cause was LLVM 19's SLP vectoriser on x86, which turned
 * `uitofp (sext i32 x to i64)` (x in [-63, 0]) into `uitofp <2 x i8>`;
 * the emulator now optimises with default<O1>, no vectorisers (the NVPTX
 * pipeline leaves the same IR scalar; tests/unit/test_emulator.c). */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(bf16) out)
{
    store(out + arange(0, B), (bf16) ((u64) (0 - arange(0, B))));
}
