/* difffuzz seed 305197: 1d exact w2 cast shape reduce dot loop atomic helper order frem sem hint */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

static tile(bf16) helper0(tile(i8) a)
{
    tile(bf16) t = (((- ((i64) 0)) <= ((i64) 1)) ? (((bf16) a) * (((bf16) -3.0) % 2.0)) : ((((bf16) 0) - ((bf16) a)) * (((u8) 2) - ((u8) 5))));
    return minimum(maximum(abs(((bf16) a)), -64), 64);
}

static i32 helper1(i32 a, i32 b, i32 c)
{
    return (c ^ 3);
}

static f16 helper2(u32 a)
{
    return ((f16) 2);
}

TEENY_KERNEL(B, E)
void kern(i32 n, i32 K1, ptr(f16) a2, ptr(f16) b3, ptr(f32) out8, ptr(bf16) io9, ptr(i8) in10, ptr(bf16) in11, ptr(u32) in12, ptr(i8) out13, ptr(f16) at14, ptr(f16) out16, ptr(f16) out18, ptr(u32) out20)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    tile(ptr(f16)) pa4 = (a2 + ((col(arange(0, E)) * K1) + row(arange(0, E))));
    tile(ptr(f16)) pb5 = (b3 + ((col(arange(0, E)) * E) + row(arange(0, E))));
    tile(f32) acc6 = zeros(f32, E, E);
    for (i32 k7 = ((i32) 0); k7 < K1; k7 += E) {
        acc6 = dot(load(pa4, (row(arange(0, E)) < (K1 - k7)), cache_cv, evict_last), load(pb5, (col(arange(0, E)) < (K1 - k7))), acc6);
        pa4 += E;
        pb5 += (E * E);
    }
    store((out8 + ((pid * (E * E)) + ((col(arange(0, E)) * E) + row(arange(0, E))))), acc6, cache_cg);
    store((io9 + ((pid * B) + arange(0, B))), helper0(load((in10 + ((pid * B) + arange(0, B))))));
    store((io9 + ((pid * B) + (((helper1((K1 >> 4), ((i32) ((u32) K1)), (~ n)) % B) + B) % B))), ceil(load((in11 + (pid * 1)))));
    store((out13 + ((pid * E) + arange(0, E))), ((i8) argmax(where(((tile(bool)) load((in10 + offs), mask, -1)), ((i8) load((in12 + offs), mask)), ((i8) dot(broadcast_to(((f16) -4), E, E), broadcast_to(minimum(maximum((helper2((((u32) K1) ^ ((u32) n))) + ((f16) offs)), -16), 16), E, B), broadcast_to(minimum(maximum(ceil(sqrt(-1.5f)), -256), 256), E, B)))), -1)));
    tile(f16) old15 = atomic_add((at14 + ((pid * B) + arange(0, B))), minimum(maximum(((f16) n), -4), 4), ((bool) max(broadcast_to(((tile(i8)) row(arange(0, E))), B, E), 1)), scope_gpu);
    store((out16 + ((pid * B) + arange(0, B))), old15);
    tile(f16) old17 = atomic_add((at14 + ((pid * B) + arange(0, B))), minimum(maximum(reshape(broadcast_to(old15, 1, B), B), -4), 4));
    store((out18 + ((pid * B) + arange(0, B))), old17);
    tile(u32) v19 = ((tile(u32)) argmax(broadcast_to((abs(((u32) pid)) >> (((bool) sum(broadcast_to(minimum((((u8) n) | ((u8) n)), ((u8) 1)), E))) ? ((u32) K1) : ((u32) K1))), B, E), -1));
    store((out20 + ((pid * B) + arange(0, B))), v19);
}
