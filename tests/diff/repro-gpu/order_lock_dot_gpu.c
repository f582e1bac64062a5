/* difffuzz seed 100643: 2d approx w2 cast 2d reduce dot atomic lock sem */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

TEENY_KERNEL(BM, BN, E)
void kern(i32 C, ptr(f32) at4, ptr(i32) lock9, ptr(f32) shared10, ptr(f64) in19, ptr(bool) in20, ptr(u32) out22)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    i32 pn = program_id(1);
    tile(i32) rn = ((pn * BN) + arange(0, BN));
    f32 old6 = atomic_xchg((at4 + (pid * 1)), ((f32) 0));
    while ((atomic_cas(lock9, 0, 1, scope_sys, sem_acquire) == 1)) {
    }
    store((shared10 + ((pid % 8) * 1)), (load((shared10 + ((pid % 8) * 1))) + ceil(abs(-0.75f))));
    atomic_xchg(lock9, 0, sem_acq_rel);
    store((out22 + ((pid * (BN * BN)) + ((col(arange(0, BN)) * BN) + row(arange(0, BN))))), floor(((tile(f32)) load((in19 + ((col(arange(0, BN)) * BN) + row(arange(0, BN)))), load((in20 + rn), (rn < C)), 0))));
}

