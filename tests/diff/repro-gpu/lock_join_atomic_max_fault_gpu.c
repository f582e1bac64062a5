/* difffuzz seed 50000250: 2d approx w4 cast 2d shape reduce atomic_shared gather lock sem hint */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(i32 S, ptr(i64) hist6, ptr(i32) lock9, ptr(f32) shared10, ptr(u32) hist12, ptr(u32) in13)
{
    i32 pid = program_id(0);
    f16 v4 = ((f16) 1);
    atomic_max((hist6 + (((((i32) v4) % 18) + 18) % 18)), (((i64) 1) + 7), sem_acquire, scope_gpu);
    while ((atomic_cas(lock9, 0, 1, scope_sys, sem_acquire) == 1)) {
    }
    store((shared10 + (((pid % 5) * 16) + arange(0, E))), (load((shared10 + (((pid % 5) * 16) + arange(0, E)))) + reshape(broadcast_to((- 2.0f), E, 1), E)), cache_cg);
    atomic_xchg(lock9, 0, sem_acq_rel);
    atomic_max((hist12 + (((broadcast_to((abs(row(arange(0, 1))) + S), BM, BN) % 11) + 11) % 11)), reshape(join(load((in13 + ((((((tile(i32)) sum(broadcast_to(((i64) -4611686018427387905), 32, E), 1)) * ((i32) 0)) % 149) + 149) % 149))), full(u32, 0, 32)), BM, BN));
}

