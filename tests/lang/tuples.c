/*
 * tests/lang/tuples.c — structs as Triton's tuples (docs/dsl.md §2):
 * helpers returning several values, structs carried through loops,
 * reduce and scan over a struct of tiles, nested and designated fields.
 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

/* Welford's running mean and M2, combined pairwise (Chan et al.). */
typedef struct {
    f32 mean;
    f32 m2;
    f32 count;
} welford;

welford welford_combine(welford a, welford b)
{
    f32 n = a.count + b.count;
    f32 d = b.mean - a.mean;
    f32 w = n == 0.0f ? 0.0f : b.count / n;
    return (welford){a.mean + d * w, a.m2 + b.m2 + d * d * a.count * w, n};
}

/* argmax with a payload: the largest value, its first index, and a value
 * carried along. */
typedef struct {
    f32 val;
    i32 idx;
    f32 payload;
} best;

best best_of(best a, best b)
{
    bool take = b.val > a.val || (b.val == a.val && b.idx < a.idx);
    return take ? b : a;
}

/* mean and variance of each row: one reduce over a struct of three tiles */
TEENY_KERNEL(BLOCK)
void row_stats(ptr(f32) x, ptr(f32) out, i32 n)
{
    i32 row = program_id(0);
    tile(i32) offs = arange(0, BLOCK);
    tile(bool) mask = offs < n;
    tile(f32) v = load(x + row * n + offs, mask, 0.0f);
    tile(welford) w = {v, zeros(f32, BLOCK), where(mask, 1.0f, 0.0f)};
    welford r = reduce(w, 0, welford_combine);
    store(out + row * 4, r.mean);
    store(out + row * 4 + 1, r.m2 / r.count);
    tile(best) b = {.payload = v * 10.0f, .idx = offs, .val = where(mask, v, -INFINITY)};
    best m = reduce(b, 0, best_of);
    store(out + row * 4 + 2, m.payload);
    store(out + row * 4 + 3, (f32)m.idx);
}

/* Online softmax statistics of a row in BLOCK-wide chunks: a struct
 * carried through the loop, updated by a helper returning a struct. */
typedef struct {
    f32 m; /* running max */
    f32 l; /* running sum of exp(x - m) */
} softmax_state;

softmax_state softmax_step(softmax_state s, tile(f32) x)
{
    f32 m = maximum(s.m, max(x));
    softmax_state r;
    r.m = m;
    r.l = s.l * exp(s.m - m) + sum(exp(x - m));
    return r;
}

/* A struct with a struct field, and a tile one. */
typedef struct {
    softmax_state st;
    tile(i32) seen;
} chunked;

TEENY_KERNEL(BLOCK)
void online_softmax(ptr(f32) x, ptr(f32) out, i32 n)
{
    i32 row = program_id(0);
    tile(i32) offs = arange(0, BLOCK);
    chunked c = {{-INFINITY, 0.0f}, zeros(i32, BLOCK)};
    for (i32 k = 0; k < n; k += BLOCK) {
        tile(bool) mask = k + offs < n;
        tile(f32) v = load(x + row * n + k + offs, mask, -INFINITY);
        c.st = softmax_step(c.st, v);
        c.seen = c.seen + (tile(i32))mask;
    }
    store(out + row * 3, c.st.m);
    store(out + row * 3 + 1, c.st.l);
    store(out + row * 3 + 2, (f32)sum(c.seen));
}

/* scan over a struct: the running max of each prefix and where it was. */
typedef struct {
    i32 val;
    i32 at;
} argrun;

argrun later_max(argrun a, argrun b)
{
    if (b.val >= a.val)
        return b;
    return a;
}

/* The first element above t, and where: a struct returned from inside a
 * loop. */
argrun first_above(ptr(i32) x, i32 n, i32 t)
{
    for (i32 i = 0; i < n; i++) {
        i32 v = load(x + i);
        if (v > t)
            return (argrun){v, i};
    }
    return (argrun){-1, -1};
}

TEENY_KERNEL(BLOCK)
void running_argmax(ptr(i32) x, ptr(i32) out)
{
    argrun f = first_above(x, BLOCK, 2);
    store(out + 2 * BLOCK, f.val);
    store(out + 2 * BLOCK + 1, f.at);
    argrun none = first_above(x, BLOCK, 1000);
    store(out + 2 * BLOCK + 2, none.at);
    tile(i32) offs = arange(0, BLOCK);
    /* a compound literal as a builtin's argument needs parentheses on the
     * host, where the builtins are macros (as for any C macro) */
    tile(argrun) r = scan(((tile(argrun)){load(x + offs), offs}), 0, later_max);
    store(out + offs, r.val);
    store(out + BLOCK + offs, r.at);
}
