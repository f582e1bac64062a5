/* difffuzz seed 303848: 1d approx w4 cast shape reduce scan dot dot_f32 ctrl loop uniform gather special hint */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

static i64 cmb_add_i64(i64 a, i64 b)
{
    return a + b;
}

TEENY_KERNEL(B, E)
void kern(i32 n, i8 s0, bf16 s1, u8 s2, i32 K4, ptr(f32) a5, ptr(f32) b6, ptr(f32) out11, ptr(i8) out12, ptr(i32) out13, ptr(i8) in14, ptr(i16) in15, ptr(i16) in16, ptr(i8) in17, ptr(f16) out19, ptr(i32) flag20, ptr(i32) out22, ptr(i64) out23, ptr(u8) out24, ptr(i64) in25, ptr(f16) in26, ptr(i32) out28, ptr(u64) in29, ptr(f32) out31, ptr(f32) in32, ptr(u8) in33, ptr(bf16) in34, ptr(f32) in36, ptr(u32) out37)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    tile(ptr(f32)) pa7 = (a5 + ((col(arange(0, B)) * K4) + row(arange(0, B))));
    tile(ptr(f32)) pb8 = (b6 + ((col(arange(0, B)) * B) + row(arange(0, B))));
    tile(f32) acc9 = zeros(f32, B, B);
    for (i32 k10 = ((i32) 0); k10 < K4; k10 += B) {
        acc9 = dot(load(pa7, (row(arange(0, B)) < (K4 - k10)), cache_cv), load(pb8, (col(arange(0, B)) < (K4 - k10))), acc9);
        pa7 += B;
        pb8 += (B * B);
    }
    store((out11 + ((pid * (B * B)) + ((col(arange(0, B)) * B) + row(arange(0, B))))), acc9);
    if ((! (((bool) n) ? true : ((bool) K4)))) {
        store((out13 + ((pid * (B * E)) + ((col(arange(0, E)) * B) + row(arange(0, B))))), ((tile(i32)) dot(broadcast_to(ceil(((((f32) s1) + ((tile(f32)) mask)) - 2.0)), E, B), broadcast_to(minimum(maximum(abs(floor(((f32) K4))), -16), 16), B, B))));
        store((out12 + ((pid * (B * E)) + ((col(arange(0, E)) * B) + row(arange(0, B))))), load((in14 + offs), mask, 2, evict_last));
    } else {
        acc9 = ((((tile(f32)) offs) - load((b6 + ((pid * B) + row(arange(0, B)))))) / ((((f32) s2) + (- load((a5 + offs), mask, 0))) - ((7 % load((in15 + ((pid * B) + row(arange(0, B)))))) * load((in16 + offs), mask, 2))));
        tile(i32) v18 = cumsum((minimum(((i32) load((in17 + (((((3 + program_id(0)) ^ cat(broadcast_to(n, 8), broadcast_to(((i32) 3), 8))) % 61) + 61) % 61)), cache_cg, evict_first)), minimum((- num_programs(0)), histogram(broadcast_to(minimum(maximum(K4, -19), 19), B), E, ((bool) pid)))) - 4), 0);
        store((out19 + ((pid * E) + arange(0, E))), v18);
        store((out12 + ((pid * (B * E)) + ((col(arange(0, E)) * B) + row(arange(0, B))))), gather(broadcast_to(cdiv(((i8) ((bf16) n)), (s0 + ((tile(i8)) col((arange(0, 1) - 15))))), E, 2), broadcast_to(((broadcast_to(broadcast_to(((u8) K4), 1, 1), E, 1) + (- ((u8) s0))) % 5), E, B), 1));
    }
    i32 c21 = load((flag20 + pid));
    store((flag20 + pid), (c21 + 1));
    store((out22 + ((pid * B) + arange(0, B))), c21);
    if ((((bool) s1) || (((i16) pid) < ((i16) c21)))) {
        if (where(((bool) c21), (((u64) s0) < ((u64) pid)), true)) {
            tile(i64) v27 = gather(broadcast_to((((i64) (load((in26 + (pid * 1))) / ((f16) 0))) | load((in25 + ((pid * E) + col(arange(0, E)))))), E, B), reshape(join(broadcast_to(((i16) s0), 512), broadcast_to(((i16) (((i16) s0) + -2.0f)), 512)), E, B), 1);
            store((out28 + ((pid * (B * E)) + ((col(arange(0, E)) * B) + row(arange(0, B))))), v27, evict_last, cache_cg);
            store((out24 + ((pid * B) + arange(0, B))), ((((u8) K4) - ((u8) mask)) * ((u8) load((in29 + arange(0, B))))));
        } else {
            tile(f32) v30 = dot(broadcast_to(minimum(maximum(maximum(((bf16) c21), ((bf16) s0)), -4), 4), E, E), broadcast_to(minimum(maximum(((bf16) 6), -4), 4), E, E), ceil(ceil(sort(broadcast_to(((f32) s0), E, E)))));
            store((out31 + ((pid * (E * E)) + ((col(arange(0, E)) * E) + row(arange(0, E))))), v30);
            acc9 = load((in32 + ((pid * (B * B)) + ((col(arange(0, B)) * B) + row(arange(0, B))))));
            store((out24 + ((pid * B) + arange(0, B))), ((u8) cumsum(broadcast_to(floor(((f32) 2)), B), -1)));
        }
        tile(i8) v35 = (((false ? false : true) ? ((i8) s1) : s0) | (6 / ((i8) histogram(minimum(load((in33 + (((where(((bool) pid), ((i32) ((f32) K4)), (((i32) load((in34 + (((where((((f32) K4) != ((f32) K4)), (2 / ((i32) s0)), argmin(broadcast_to(((i32) s1), B), -1)) % 39) + 39) % 39)))) - ((tile(i8)) (arange(0, B) - 17)))) % 153) + 153) % 153))), 67), B))));
        store((out23 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E))))), ((tile(i64)) (((f32) pid) / load((in36 + (((((i32) scan(load((in25 + arange(0, E))), -1, cmb_add_i64)) % 153) + 153) % 153))))));
    } else {
        c21 = ((i32) s0);
        store((out23 + ((pid * (B * E)) + ((col(arange(0, B)) * E) + row(arange(0, E))))), ((i64) row((arange(0, E) - 14))));
    }
    store((out37 + offs), ((u32) arange(0, B)), mask);
}
