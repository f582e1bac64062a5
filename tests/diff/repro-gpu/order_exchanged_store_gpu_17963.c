/* difffuzz seed 17963: 2d exact w4 cast 2d shape reduce scan atomic atomic_shared order gather sem */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static i32 cmb_add_i32(i32 a, i32 b)
{
    return a + b;
}

TEENY_KERNEL(BM, BN, E)
void kern(i32 R, i32 S, ptr(f16) hist3, ptr(i64) in4, ptr(i32) in5, ptr(i32) at6, ptr(u64) in7, ptr(i32) in8, ptr(i32) in9, ptr(i32) out11, ptr(i32) out13, ptr(i32) out15, ptr(bool) out17, ptr(f32) io18, ptr(f32) in19, ptr(bf16) in20)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    i32 pm = program_id(0);
    atomic_add((hist3 + (((((i32) load((in4 + ((((pid << where(((bool) S), ((i32) 0), load((in5 + 0)))) % 145) + 145) % 145)))) % 23) + 23) % 23)), ((f16) 0), sem_relaxed);
    i32 old10 = atomic_xchg((at6 + (pid * 1)), minimum(maximum(reduce(cumsum(broadcast_to(((i8) R), E), 0), -1, cmb_add_i32), (((i32) load((in7 + 0))) * load((in8 + (((load((in9 + 0)) % 19) + 19) % 19))))), 2), sem_acq_rel);
    i32 old12 = (maximum(min(broadcast_to(pm, E)), ((i32) 4)) + 1);
    store((out13 + (pid * 1)), old12);
    i32 old14 = minimum(S, 2);
    store((out15 + (pid * 1)), old14);
    store((io18 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), load((in19 + (((((i32) load((in20 + (((broadcast_to(R, BM, BN) % 104) + 104) % 104)))) % 230) + 230) % 230))));
    f32 e21 = load((io18 + ((pid * (BM * BN)) + ((((sum(load((in8 + ((pid * E) + arange(0, E))))) & ((i32) ((bf16) old10))) % (BM * BN)) + (BM * BN)) % (BM * BN)))));
    store((io18 + ((pid * (BM * BN)) + ((((minimum(num_programs(1), ((i32) 4)) * (pm * 3)) % (BM * BN)) + (BM * BN)) % (BM * BN)))), minimum(maximum((e21 * 6), -1048576), 1048576));
}

