/*
 * tests/lang/ranks.c — tiles of rank 3 and 4 (docs/dsl.md §2, Shapes):
 * 3-D pointer tiles, permute and trans with an order, flip, gather and
 * sort along inner axes, join/interleave/split of 2-D tiles, cat, a 4-D
 * reshape and permute, broadcasting a reduction back, reductions and scans
 * along every axis, argmax/argmin, and batched dots ([B, M, K] x [B, K, N]).
 * cube writes 15 segments of A * B * C elements of out per program.
 */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(A);
TEENY_CONST(B);
TEENY_CONST(C);

typedef struct { tile(D) a, b; } halves;

TEENY_KERNEL(D, A, B, C)
void cube(ptr(D) x, ptr(D) out, ptr(f32) sums, ptr(i32) idx)
{
    i32 pid = program_id(0);
    tile(i32) ia = reshape(arange(0, A), A, 1, 1);
    tile(i32) ib = reshape(arange(0, B), 1, B, 1);
    tile(i32) ic = expand_dims(expand_dims(arange(0, C), 0), 0);
    tile(D) v = load(x + pid * A * B * C + ia * (B * C) + ib * C + ic); /* [A, B, C] */
    tile(i32) flat = reshape(arange(0, A * B * C), A, B, C); /* row-major index */
    ptr(D) o = out + pid * 15 * A * B * C;
    i32 n = A * B * C;
    store(o + reshape(arange(0, n), C, A, B), permute(v, 2, 0, 1));
    store(o + n + reshape(arange(0, n), B, A, C), trans(v, 1, 0, 2));
    store(o + 2 * n + flat, flip(v, 1));
    tile(i32) at = broadcast_to((ic * 3 + ib) % C, A, B, C);
    store(o + 3 * n + flat, gather(v, at, 2));
    store(o + 4 * n + flat, sort(v));
    tile(D) p = reshape(v, A * B, C);
    tile(D) q = flip(p, 0);
    store(o + 5 * n + reshape(arange(0, 2 * n), A * B, C, 2), join(p, q));
    store(o + 7 * n + reshape(arange(0, 2 * n), A * B, 2 * C), interleave(p, q));
    halves h = split(join(p, q), halves);
    store(o + 9 * n + reshape(arange(0, n), A * B, C), h.b);
    store(o + 10 * n + reshape(arange(0, 2 * n), 2 * A, B, C), cat(v, flip(v, 0)));
    tile(D) w = view(v, A, B, C / 2, 2); /* reshape by its older name */
    store(o + 12 * n + reshape(arange(0, n), 2, A, B, C / 2), permute(w, 3, 0, 1, 2));
    store(o + 13 * n + flat, v + expand_dims(max(v, 1), 1));
    store(o + 14 * n + flat, cumsum(v, 1));
    ptr(f32) s = sums + pid * (B * C + A * C + 3 * A * B + 1);
    store(s + reshape(arange(0, B * C), B, C), sum(v, 0));
    store(s + B * C + reshape(arange(0, A * C), A, C), sum(v, 1));
    store(s + B * C + A * C + reshape(arange(0, A * B), A, B), sum(v, 2));
    store(s + B * C + A * C + A * B, sum(v));
    store(s + B * C + A * C + A * B + 1 + reshape(arange(0, 2 * A * B), A, B, 2), sum(w, 2));
    ptr(i32) k = idx + pid * (A * C + B * C);
    store(k + reshape(arange(0, A * C), A, C), argmax(v, 1));
    store(k + A * C + reshape(arange(0, B * C), B, C), argmin(v, 0));
}

TEENY_CONST(BT);
TEENY_CONST(M);
TEENY_CONST(K);
TEENY_CONST(N);

/* c[0] = a . b, c[1] = a . trans(bt) + c[0] (bt [BT, N, K]), batched. */
TEENY_KERNEL(D, BT, M, K, N)
void batched_dot(ptr(D) a, ptr(D) b, ptr(D) bt, ptr(f32) c)
{
    tile(D) x = load(a + reshape(arange(0, BT * M * K), BT, M, K));
    tile(D) y = load(b + reshape(arange(0, BT * K * N), BT, K, N));
    tile(D) z = load(bt + reshape(arange(0, BT * N * K), BT, N, K));
    tile(i32) oc = reshape(arange(0, BT * M * N), BT, M, N);
    tile(f32) r = dot(x, y);
    store(c + oc, r);
    store(c + BT * M * N + oc, dot(x, trans(z, 0, 2, 1), r));
}
