/*
 * tests/lang/jumps.c — break, continue and return inside loops (docs/dsl.md
 * §3), for tests/unit/test_lang.c: each kernel writes what its loops
 * computed, which the test checks against plain C and across the
 * interpreter and the code generator.
 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

/* The first index i < n with x[i] > t, or -1: a search loop. */
i32 find_first(ptr(f32) x, i32 n, f32 t) {
    for (i32 i = 0; i < n; i++) {
        if (load(x + i) > t)
            return i;
    }
    return -1;
}

/* A tile returned from inside a loop: the first row block whose sum
 * passes t, scaled by its index (rows of BLOCK elements). */
tile(f32) first_heavy_row(ptr(f32) x, i32 rows, f32 t) {
    tile(i32) offs = arange(0, BLOCK);
    i32 r = 0;
    while (r < rows) {
        tile(f32) v = load(x + r * BLOCK + offs);
        if (sum(v) > t)
            return v * (f32)r;
        r++;
    }
    return zeros(f32, BLOCK) - 1.0f;
}

/* out[pid]: find_first; out[8 + pid]: a while loop with continue and
 * break; out[16 + pid]: a do-while with both; out[24 + pid]: nested loops,
 * break in the inner one; out[32 + pid]: for (;;) left by break. */
TEENY_KERNEL(BLOCK)
void scalar_exits(ptr(f32) x, ptr(i32) out, i32 n)
{
    i32 pid = program_id(0);
    store(out + pid, find_first(x, n, (f32)pid * 2.5f));

    i32 count = 0;
    i32 k = 0;
    while (k < n) {
        k++;
        if (k % 3 == 0)
            continue;
        if (k > 10 + pid)
            break;
        count += k;
    }
    store(out + 8 + pid, count);

    i32 d = 0;
    i32 steps = 0;
    do {
        d += 2;
        if (d % 4 == 0)
            continue;
        steps++;
        if (steps == pid + 2)
            break;
    } while (d < 40);
    store(out + 16 + pid, d * 100 + steps);

    i32 pairs = 0;
    for (i32 a = 0; a < 6; a++) {
        for (i32 b = 0; b < 6; b++) {
            if (b > a)
                break;
            if ((a + b + pid) % 2 == 0)
                continue;
            pairs += a * 10 + b;
        }
    }
    store(out + 24 + pid, pairs);

    i32 m = pid + 1;
    i32 trips = 0;
    for (;;) {
        trips++;
        if (m == 1)
            break;
        m = m % 2 == 0 ? m / 2 : 3 * m + 1;
    }
    store(out + 32 + pid, trips);
}

/* Tiles carried through loops with exits: a running sum that stops at a
 * threshold (break), skips odd trips (continue) in an scf.for; and a tile
 * returned from inside a while loop. */
TEENY_KERNEL(BLOCK)
void tile_exits(ptr(f32) x, ptr(f32) out, i32 rows)
{
    i32 pid = program_id(0);
    tile(i32) offs = arange(0, BLOCK);
    tile(f32) acc = zeros(f32, BLOCK);
    for (i32 r = 0; r < rows; r++) {
        if (r % 2 == 1)
            continue;
        acc = acc + load(x + r * BLOCK + offs);
        if (sum(acc) > (f32)(pid * 40))
            break;
    }
    store(out + pid * 2 * BLOCK + offs, acc);
    store(out + (pid * 2 + 1) * BLOCK + offs, first_heavy_row(x, rows, (f32)pid * 30.0f));
}

/* A kernel returns from inside a loop: programs store until their own
 * index, then leave.  The condition loads x[i], so it must not run once a
 * break has ended the loop at i == n (x has n elements). */
TEENY_KERNEL(BLOCK)
void early_kernel_return(ptr(i32) x, ptr(i32) out, i32 n)
{
    i32 pid = program_id(0);
    i32 i = 0;
    while (load(x + i) >= 0) {
        if (i == pid + 3)
            return;
        store(out + pid * 16 + i, load(x + i) + 1);
        i++;
        if (i == n)
            break;
    }
    store(out + pid * 16 + 15, -7);
}
