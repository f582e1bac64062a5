/* difffuzz seed 84003053: 2d approx w4 cast 2d shape reduce scan ctrl loop atomic_shared helper gather frem barrier sem rank3 desc */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(E);

static f16 helper0(tile(f16) a, f64 b)
{
    return ((f16) 2);
}

static i32 cmb_or_i32(i32 a, i32 b)
{
    return a | b;
}

TEENY_KERNEL(BM, BN, E)
void kern(i32 R, i32 C, i32 S, ptr(f16) hist3, ptr(i32) in4, ptr(i64) in5, ptr(f16) in6, ptr(f16) in7, ptr(i16) in8, ptr(f16) in9, ptr(u32) in10, ptr(u32) out11, ptr(bool) in12, ptr(i64) in13, ptr(i64) out18, ptr(bf16) out19, ptr(bf16) in20, tensor_desc(i32, BM, BN) td22, ptr(bf16) out31, ptr(f32) out32, ptr(u64) in33, ptr(u64) out35)
{
    i32 pid = (program_id(0) + (program_id(1) * num_programs(0)));
    i32 pm = program_id(0);
    i32 pn = program_id(1);
    tile(i32) rm = ((pm * BM) + arange(0, BM));
    tile(i32) rn = ((pn * BN) + arange(0, BN));
    tile(bool) mask = ((col(rm) < R) & (row(rn) < C));
    atomic_add((hist3 + (((broadcast_to((((i32) ((f64) pm)) * where(((bool) C), C, S)), BM, BN) % 9) + 9) % 9)), ((f16) 0), sem_acquire, scope_gpu);
    atomic_add((hist3 + broadcast_to((((((~ num_programs(0)) % reduce(broadcast_to(R, BN), -1, cmb_or_i32)) % 9) + 9) % 9), BM, BN)), ((f16) 0));
    barrier();
    if ((where(false, maximum(((i64) 5), ((i64) R)), ((i64) load((in10 + (pid * 1))))) == ((((bool) pid) ^ ((bool) R)) ? ((u8) pid) : (((u8) pm) * ((i8) 8))))) {
        store((out11 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), ((u32) (((u32) (4 + C)) * ((tile(bf16)) rn))));
    } else {
        store((out11 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), (- sum(maximum(sort(maximum(broadcast_to(expand_dims(((sum(broadcast_to(((u32) 2), BM), 0) ^ 5) - (reshape(broadcast_to(((i16) R), BM * BN), BM, BN) + 1)), 1), BM, E, BN), broadcast_to(expand_dims(broadcast_to(((u32) S), BM, BN), 1), BM, E, BN))), broadcast_to(expand_dims(sort(flip(broadcast_to(((u32) ((f32) pm)), E, BN), -2), true), 0), BM, E, BN)), -2)));
    }
    tile(i64) acc14 = (max(min(join(minimum(join(broadcast_to(((i64) rn), BM, BN), broadcast_to(((i64) 1), BM, BN)), broadcast_to(expand_dims(broadcast_to(((i64) S), BN, 2), 0), BM, BN, 2)), flip(minimum(join(broadcast_to(((i64) rn), BM, BN), broadcast_to(((i64) 1), BM, BN)), broadcast_to(expand_dims(broadcast_to(((i64) S), BN, 2), 0), BM, BN, 2)), 0)), -1), 2) & load((in13 + 0)));
    bf16 acc15 = minimum(maximum(((bf16) S), -8), 8);
    for (i32 k16 = ((i32) 0); k16 < ((i32) 2); k16 += 1) {
        tile(i64) x17 = (((i64) row(arange(0, BN))) / 1);
        if (((k16 % 2) == 0)) {
            acc14 = (acc14 ^ x17);
        }
        acc15 = (acc15 + minimum(maximum(where(((bool) pn), floor(((bf16) pm)), ((bf16) R)), -4), 4));
    }
    store((out18 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + reshape(arange(0, BN), 1, BN)))), acc14);
    store((out19 + (pid * 1)), acc15);
    tile(bf16) v21 = load((in20 + ((col(rm) * S) + row(rn))), mask, -3);
    barrier();
    tile(bf16) acc27 = minimum(maximum(floor(load((in20 + ((pid * (BM * BN)) + ((reshape(arange(0, BM), BM, 1) * BN) + row(arange(0, BN))))), ((bool) min(flip(flip(join(((i16) load((in5 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))))), ((i16) load_tensor_descriptor(td22, (pm * BM), ((pn * BN) + 4))))), 2), 2)))), -8), 8);
    tile(f32) acc28 = broadcast_to(((f32) 6), BM, BN);
    i32 it29 = 0;
    do {
        bf16 x30 = minimum(maximum((abs(((bf16) S)) + ((bf16) R)), -4), 4);
        acc27 = (acc27 + x30);
        acc28 = (acc28 + ((f32) x30));
        it29 += ((i32) 1);
    } while ((it29 < ((i32) 4)));
    store((out31 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), acc27);
    store((out32 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN))))), acc28, ((load((in12 + ((pid * (BM * BN)) + ((col(arange(0, BM)) * BN) + row(arange(0, BN)))))) && ((bool) pid)) ^ ((tile(bool)) row((arange(0, BN) - 7)))));
    barrier();
    tile(u64) v34 = sum(reshape(join((load((in33 + arange(0, 64))) * ((u64) S)), broadcast_to(((u64) it29), 64)), BM, E), 1);
    store((out35 + ((pid * BM) + arange(0, BM))), v34);
}

