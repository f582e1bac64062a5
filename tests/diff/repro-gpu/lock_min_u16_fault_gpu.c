/* difffuzz seed 120003960: 1d exact w4 cast shape reduce scan dot atomic atomic_shared helper gather lock barrier sem hint */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(B);
TEENY_CONST(E);

static i32 helper0(i32 a, i32 b)
{
    return b;
}

static u16 cmb_min_u16(u16 a, u16 b)
{
    return minimum(a, b);
}

TEENY_KERNEL(D, B, E)
void kern(i32 n, ptr(u32) hist1, ptr(i32) in2, ptr(i32) lock3, ptr(i32) shared4, ptr(u16) in6, ptr(D) in11, ptr(i8) in12, ptr(bool) out14)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    atomic_max((hist1 + (((helper0(load((in2 + 0)), (- n)) % 45) + 45) % 45)), ((u32) n), scope_gpu);
    while ((atomic_cas(lock3, 0, 1, sem_acquire) == 1)) {
    }
    store((shared4 + ((pid % 8) * 1)), (load((shared4 + ((pid % 8) * 1))) + minimum(maximum((load((in2 + (pid * 1))) * ((i8) reduce(load((in6 + offs), mask, 3, cache_cs, evict_last), 0, cmb_min_u16))), -100), 100)));
    atomic_xchg(lock3, 0, sem_release);
    store((out14 + offs), ((tile(bool)) histogram(((i64) load((in11 + (((((i32) load((in12 + arange(0, B)))) % 228) + 228) % 228)), evict_normal, cache_ca)), B)), mask);
}

