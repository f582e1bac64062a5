/* difffuzz (reduced from generated seed 122): an i8 dot whose i32 result
 * wraps (acc = -2147483636, plus 32 products of -1).  Integer arithmetic
 * wraps (docs/dsl.md §4) and so does PTX's mma.sync ... .s32.s8.s8.s32
 * without .satfinite (the code generator emits none); the host emulator's
 * s8 mma (dsl/nvptx/emu.c, mma_compute) sums in double and converts with
 * (int32_t), which is undefined past the i32 range and gives INT_MIN on
 * x86: -2147483648 instead of 2147483628.  An emulator bug, not one of the
 * generated code.  Fixed on branch fix11 (mma_s8: int64 sums wrapped to
 * 32 bits; tests/unit/test_emulator.c). */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(i32 s, ptr(i32) out)
{
    tile(i32) o = col(arange(0, B)) * B + row(arange(0, B));
    store(out + o, dot(full(i8, 1, B, B), full(i8, -1, B, B), broadcast_to(s, B, B)));
}
