/* difffuzz (reduced from generated seed 227, after the memory-model
 * merge): a dot result converted to u8 and stored as a tile, then a
 * scalar load of one of its elements.  In program order the load sees 4;
 * in the generated code it reads the old 0 (issue 11's defect 2 is fixed
 * for 32- and 64-bit elements; this is 8- and 16-bit ones: u8, i8, i16,
 * u16, f16, bf16 fail, i32, i64, f64 pass; 1 warp, sm_80 and sm_90a).
 * Fixed on branch fix11: narrow mma results are stored through a
 * conversion in shared memory (16-byte rows), whose barriers emptied the
 * pending set after the store was recorded; the same bug as
 * order_replicated_store_scalar_store (dsl/nvptx/mem.c). */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void kern(i32 j, ptr(u8) io, ptr(u8) out)
{
    tile(i32) o = col(arange(0, B)) * B + row(arange(0, B));
    store(io + o, (tile(u8)) dot(zeros(f32, B, B), zeros(f32, B, B), full(f32, 4, B, B)));
    u8 e = load(io + j);
    store(out, e);
}
