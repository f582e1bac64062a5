/* difffuzz seed 307133: 2d exact w8 cast 2d shape reduce dot loop atomic_shared helper special lock sem hint */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static i32 helper0(i32 a)
{
    return (a % a);
}

static i32 helper1(tile(i32) a)
{
    return (((i32) 4) + ((i32) 0));
}

static bool helper2(tile(bool) a)
{
    return (true & false);
}

TEENY_KERNEL(BM, BN, E)
void kern(i32 R, i32 C, i32 S, f32 s0, f64 s1, ptr(i32) hist5, ptr(i32) in6, ptr(u32) in7, ptr(i32) lock8, ptr(i32) shared9, ptr(i32) in11, ptr(i32) in12, ptr(bf16) out13, i32 K14, ptr(f32) a15, ptr(f32) b16, ptr(f32) out21, i32 K22, ptr(i8) a23, ptr(i8) b24, ptr(i32) out29, ptr(bf16) in30, ptr(f16) in31, ptr(i64) in32, ptr(f16) in33, ptr(bf16) out35)
{
    i32 pid = program_id(0);
    i32 gn = cdiv(C, BN);
    i32 pm = (pid / gn);
    i32 pn = (pid % gn);
    tile(i32) rm = ((pm * BM) + arange(0, BM));
    tile(i32) rn = ((pn * BN) + arange(0, BN));
    tile(bool) mask = ((col(rm) < R) & (row(rn) < C));
    atomic_add((hist5 + (((load((in6 + (pid * 1))) % 56) + 56) % 56)), maximum(S, pm), scope_gpu);
    atomic_add((hist5 + (((helper0(pn) % 56) + 56) % 56)), ((i32) load((in7 + 0))), scope_sys);
    while ((atomic_cas(lock8, 0, 1, sem_acq_rel, scope_gpu) == 1)) {
    }
    store((shared9 + (((pid % 3) * 2) + arange(0, E))), (load((shared9 + (((pid % 3) * 2) + arange(0, E)))) + minimum(maximum((- load((in11 + ((pid * E) + arange(0, E))))), -100), 100)));
    atomic_xchg(lock8, 0, scope_gpu, sem_release);
    store((out13 + ((col(rm) * S) + row(rn))), helper1(gather(broadcast_to((load((in12 + rn), (rn < C)) << ((i32) 7)), 4, BN), broadcast_to(broadcast_to(((i32) s0), BM, 1), BM, BN), 0)), mask);
    tile(ptr(f32)) pa17 = (a15 + ((col(arange(0, BN)) * K14) + row(arange(0, BN))));
    tile(ptr(f32)) pb18 = (b16 + ((col(arange(0, BN)) * BN) + row(arange(0, BN))));
    tile(f32) acc19 = zeros(f32, BN, BN);
    for (i32 k20 = ((i32) 0); k20 < K14; k20 += BN) {
        acc19 = dot(load(pa17, (row(arange(0, BN)) < (K14 - k20))), load(pb18, (col(arange(0, BN)) < (K14 - k20))), acc19);
        pa17 += BN;
        pb18 += (BN * BN);
    }
    store((out21 + ((pid * (BN * BN)) + ((col(arange(0, BN)) * BN) + row(arange(0, BN))))), acc19);
    tile(ptr(i8)) pa25 = (a23 + ((col(arange(0, BN)) * K22) + row(arange(0, BN))));
    tile(ptr(i8)) pb26 = (b24 + ((col(arange(0, BN)) * BN) + row(arange(0, BN))));
    tile(i32) acc27 = zeros(i32, BN, BN);
    for (i32 k28 = ((i32) 0); k28 < K22; k28 += BN) {
        acc27 = dot(load(pa25, (row(arange(0, BN)) < (K22 - k28))), load(pb26, (col(arange(0, BN)) < (K22 - k28))), acc27);
        pa25 += BN;
        pb26 += (BN * BN);
    }
    store((out29 + ((pid * (BN * BN)) + ((col(arange(0, BN)) * BN) + row(arange(0, BN))))), acc27);
    bf16 v34 = ((bf16) sum(reshape(reshape(join(broadcast_to(helper2((load((in30 + 0)) < load((in31 + ((pid * 1) + arange(0, 1)))))), 1), ((((i64) K14) | 4) <= load((in32 + ((pid * 1) + arange(0, 1))), (((f32) pm) < ((f32) load((in33 + 0)))), 0))), 1, E), E), -1));
    store((out35 + (pid * 1)), v34, evict_last);
}
