/* Issue 11, defect 3: Triton's tutorial 05 lock (spin on a CAS, read the
 * count, the first program stores, the others accumulate, barrier,
 * release), which needs acquire/release atomics on a GPU.
 *   teenyc run lock_accumulate.c -k k -c B=128 --grid 6 --fill lock=1 --fill count=1 \
 *       --fill dw=128 --arg n=100 --engine both
 * expect: dw[i] = 6 i + 15 for i < 100, lock 0, count 1 */
#include <teeny/dsl.h>

TEENY_CONST(B);

TEENY_KERNEL(B)
void k(ptr(i32) lock, ptr(i32) count, ptr(f32) dw, i32 n)
{
    i32 pid = program_id(0);
    tile(i32) o = arange(0, B);
    tile(bool) m = o < n;
    tile(f32) part = (f32)(o + pid);
    while (atomic_cas(lock, 0, 1) == 1) {
    }
    i32 cnt = load(count);
    if (cnt == 0) {
        atomic_xchg(count, 1);
    } else {
        part = part + load(dw + o, m, 0.0f);
    }
    store(dw + o, part, m);
    barrier();
    atomic_xchg(lock, 0);
}
