/* difffuzz (reduced from campaign seed 3000052, after the memory-model
 * merge): a dot in a loop whose A operand is a gather (addresses from
 * another load, all in bounds: ((x % 285) + 285) % 285 into 285
 * elements).  The generated code reads outside the buffers: the emulator
 * (guarded buffers) dies on SIGSEGV inside the kernel; on a GPU it would
 * read whatever lies there.  The dot's result is not even used. */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(f32) x, ptr(i32) idx)
{
    i32 pid = program_id(0);
    for (i32 k = 0; k < 3; k += 1) {
        tile(i32) i = load(idx + pid * (B * E) + col(arange(0, E)) * B + row(arange(0, B)));
        tile(f32) a = minimum(maximum(load(x + ((i % 285) + 285) % 285), -4), 4);
        tile(bf16) v = (tile(bf16)) dot(a, full(f32, 1, B, B));
    }
}
