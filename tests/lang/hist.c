/*
 * tests/lang/hist.c — histogram(x, bins [, mask]) (docs/dsl.md §5): counts
 * of 0 .. bins-1 in a 1-D integer tile; values out of range and masked-off
 * lanes are not counted, whatever the dtype (u8 values past the bins, i64
 * values below 0 or past 2^32).  Each program adds its counts to out.
 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);
TEENY_CONST(BINS);

TEENY_KERNEL(BLOCK, BINS)
void counts(ptr(i32) x, ptr(u8) y, ptr(i64) z, ptr(i32) out, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) in = o < n;
    tile(i32) bins = arange(0, BINS);
    tile(i32) h = histogram(load(x + o, in, -1), BINS, in);
    atomic_add(out + bins, h, sem_relaxed);
    atomic_add(out + BINS + bins, histogram(load(y + o, in), BINS, in), sem_relaxed);
    tile(i64) w = load(z + o, in) * 4294967296 + (tile(i64))o % 5;  /* >= 2^32 unless z is 0 */
    atomic_add(out + 2 * BINS + bins, histogram(w, BINS), sem_relaxed);
}
