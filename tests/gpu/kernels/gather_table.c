/* tests/gpu/check.py's pointer table: program i copies n elements from the
 * buffer whose address is table[i] (grouped-GEMM style indirection). */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

TEENY_KERNEL(BLOCK)
void gather(ptr(i64) table, ptr(f32) out, i32 n)
{
    i32 pid = program_id(0);
    ptr(f32) src = (ptr(f32))load(table + pid);
    for (i32 off = 0; off < n; off += BLOCK) {
        tile(i32) o = off + arange(0, BLOCK);
        store(out + pid * n + o, load(src + o, o < n, 0.0f) * 2.0f, o < n);
    }
}
