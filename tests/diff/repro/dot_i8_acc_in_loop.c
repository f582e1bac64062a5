/* difffuzz (reduced from generated seed 108): an i8 dot with an i32
 * accumulator, inside a loop.  Each element should be acc + 32 * 1 * 2;
 * in the generated code about half of rows 16..31 of the 32x32 result are
 * 16843072 = 0x01010140 instead: the accumulator's registers hold packed
 * i8 operand bytes (with zero operands they read 0).  sm_80 and sm_90a,
 * 1 and 4 warps; the same dot outside the loop and 16x16 i8 tiles are
 * right.  The same bug with f16 (campaign seed 4002123): in a loop,
 * dot(full(f16, -4, 16, 16), zeros(f16, 16, 16), load(x + o)) gives
 * -515.0625 = 0xC400C400 as f32, the packed f16 -4.0 of the A operand, in
 * 48 of 256 accumulator elements (even with one trip). */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(ptr(f32) x, ptr(f32) out)
{
    tile(i32) o = col(arange(0, B)) * B + row(arange(0, B));
    tile(i32) acc = (i32) load(x + o);
    for (i32 k = 0; k < 2; k += 1) {
        store(out + o, (f32) dot(full(i8, 1, B, B), full(i8, 2, B, B), acc));
    }
}
