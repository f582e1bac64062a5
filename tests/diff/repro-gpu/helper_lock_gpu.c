/* difffuzz seed 13267: 1d exact w2 cast shape reduce scan atomic atomic_shared helper gather special lock sem */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

static f16 cmb_max_f16(f16 a, f16 b)
{
    return maximum(a, b);
}

static void helper1(ptr(i32) p, tile(i32) o, tile(i32) v)
{
    store(p + o, v);
}

TEENY_KERNEL(B, E)
void kern(i32 n, i64 s2, ptr(f32) hist15, ptr(i32) lock16, ptr(i32) shared17, ptr(i64) in19, ptr(i8) in22, ptr(bf16) in24, ptr(i32) out25)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    atomic_min(hist15, ((f32) n), sem_release);
    while ((atomic_cas(lock16, 0, 1) == 1)) {
    }
    store((shared17 + (((pid % 5) * 16) + arange(0, E))), (load((shared17 + (((pid % 5) * 16) + arange(0, E)))) + minimum(maximum((minimum(arange(0, E), ((i32) s2)) * ((i32) load((in19 + 0)))), -100), 100)));
    atomic_xchg(lock16, 0);
    helper1(out25, ((pid * B) + arange(0, B)), ((tile(i32)) minimum(maximum(((f16) load((in22 + ((pid * B) + arange(0, B))), ((bool) load((in24 + (((offs % 155) + 155) % 155)))), 1)), -8), 8)));
}

