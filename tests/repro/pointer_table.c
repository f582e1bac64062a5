/* Pointer tables (issue 13): addresses stored as i64, loaded back and cast
 * to pointers; pointer to integer and pointer to pointer casts.  The table
 * holds addresses, which differ between the engines, so it is not compared.
 *   teenyc run pointer_table.c -k k -c B=128 --grid 4 --fill table=8 --fill a=128:iota \
 *       --fill b=128:random:3 --fill out=640 --fill addr=4 --engine both --no-compare table */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void k(ptr(i64) table, ptr(f32) a, ptr(f32) b, ptr(f32) out, ptr(u64) addr)
{
    i32 pid = program_id(0);
    tile(i32) o = arange(0, B);
    store(table + 2 * pid, (i64)a);
    store(table + 2 * pid + 1, (i64)b);
    ptr(f32) src = (ptr(f32))load(table + 2 * pid + pid % 2);
    store(out + pid * B + o, load(src + o) + (f32)pid);
    store(addr + pid, (u64)(b + pid) - (u64)b);
    tile(ptr(u8)) bytes = (tile(ptr(u8)))(a + o);
    store(out + 4 * B + o, (f32)load(bytes + 1), pid == 0);
}
