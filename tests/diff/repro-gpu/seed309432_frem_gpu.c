/* difffuzz seed 309432: 1d approx w8 cast shape reduce scan dot loop helper gather frem barrier hint */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

static f32 helper0(i32 a, f32 b)
{
    return ((f32) a);
}

static f32 cmb_max_f32(f32 a, f32 b)
{
    return maximum(a, b);
}

TEENY_KERNEL(B, E)
void kern(i32 n, ptr(u32) out1, ptr(f32) in3, ptr(i64) out7, ptr(f32) out8, ptr(bf16) out10, ptr(u32) in11, ptr(i32) in12, ptr(i32) in13, ptr(u32) in14, ptr(u8) out16, ptr(bf16) in17, ptr(f16) in18, ptr(f32) in19, ptr(f32) out20)
{
    i32 pid = program_id(0);
    tile(i32) offs = ((pid * B) + arange(0, B));
    tile(bool) mask = (offs < n);
    store((out1 + (pid * 1)), ((u32) argmax(broadcast_to(((i8) floor((((bf16) -10.0) * ((bf16) n)))), E), 0)));
    i64 acc2 = sum(broadcast_to((((i64) -4611686018427387905) % ((i64) pid)), E, B));
    tile(f32) acc4 = floor((floor(load((in3 + 0))) - abs(load((in3 + ((pid * B) + arange(0, B)))))));
    i32 it5 = 0;
    while ((it5 < minimum(n, ((i32) 2)))) {
        i64 x6 = (abs(((i64) 3)) + max(broadcast_to(((i64) pid), B), -1));
        acc2 = (acc2 + x6);
        acc4 = minimum(acc4, minimum(maximum(((f32) x6), -4), 4));
        it5 += ((i32) 1);
    }
    store((out7 + (pid * 1)), acc2);
    store((out8 + ((pid * B) + arange(0, B))), acc4);
    tile(bf16) v9 = ((bf16) acc4);
    store((out10 + offs), v9, mask);
    barrier();
    u8 v15 = ((u8) max(fma(reshape(join(where(((bool) ((f64) 1)), ((tile(f32)) load((in12 + ((pid * 16) + arange(0, 16))))), load((in3 + ((pid * 16) + arange(0, 16))))), (((tile(f32)) argmax(broadcast_to(((f32) load((in13 + ((pid * E) + arange(0, E))))), 16, E), 1)) * ((tile(f32)) argmin(broadcast_to(-0.10000000000000001f, 16, E), 1)))), E, B), ((tile(f32)) load((in14 + offs), mask, 1)), ((((f32) ((f16) n)) - ((f32) it5)) % helper0((pid ^ n), ((f32) ((bf16) 4)))))));
    store((out16 + (pid * 1)), v15);
    store((out20 + ((pid * (B * B)) + ((col(arange(0, B)) * B) + row(arange(0, B))))), dot(broadcast_to(minimum(((tile(f16)) mask), ((f16) n)), B, B), minimum(maximum(abs(((f16) dot(broadcast_to(minimum(maximum(ceil((((f16) load((in17 + offs), mask)) / load((in18 + offs), mask))), -16), 16), B, B), ((f16) scan(floor(load((in19 + (((broadcast_to(((i32) v15), B, B) % 5) + 5) % 5)), evict_last)), -2, cmb_max_f32)), broadcast_to((7 * 2.0f), B, B)))), -16), 16), broadcast_to(ceil(((f32) ((u8) mask))), B, B)));
}
