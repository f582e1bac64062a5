/* difffuzz seed 50000242: 2d exact w4 cast 2d shape reduce atomic_shared gather lock sem hint */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static f16 cmb_add_f16(f16 a, f16 b)
{
    return a + b;
}

TEENY_KERNEL(D, BM, BN, E)
void kern(i32 R, i8 s0, f16 s1, ptr(i64) hist8, ptr(i32) in10, ptr(i32) lock11, ptr(f32) shared12, ptr(u32) hist14, ptr(u32) in15, ptr(i32) in16, ptr(i8) out17)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    i32 pm = program_id(0);
    atomic_max((hist8 + (((pm % 18) + 18) % 18)), (((i64) s1) + 7), sem_acquire, scope_gpu);
    while ((atomic_cas(lock11, 0, 1, scope_sys, sem_acquire) == 1)) {
    }
    store((shared12 + (((pid % 5) * 16) + arange(0, E))), (load((shared12 + (((pid % 5) * 16) + arange(0, E)))) + floor(reshape(broadcast_to(sqrt(2.0f), 1, E), E))), cache_cg);
    atomic_xchg(lock11, 0, sem_acq_rel);
    atomic_max((hist14 + broadcast_to((((load((in16 + 0)) % 11) + 11) % 11), BM, BN)), reshape(join(load((in15 + (((broadcast_to((load((in10 + (pid * 1))) * (((i32) -1073741825) ^ 4)), 2048) % 149) + 149) % 149))), ((u32) R)), BM, BN), sem_acquire, scope_sys);
    store((out17 + ((pid * BN) + arange(0, BN))), ((i8) reduce(broadcast_to(((f16) s0), BM, BN), 0, cmb_add_f16)));
}

