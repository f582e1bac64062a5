/* difffuzz (reduced from campaign seed 10004376, compiler 219610a): a
 * load masked by (u64) 0 < (u64) (arange(0, BN) - 10), a row mask
 * broadcast over a 2-D tile.  The mask is false only where arange == 10
 * (elements 10 and 74 keep `other`, 7); the generated code loads there.
 * u32 and u64 fail, i64 passes; 2-D tiles (BM >= 2 with 1 warp) fail, 1-D
 * ones pass, and so does the same mask written (u64) (...) != 0.  The
 * PTX's vector fast path tests only the first of each thread's four
 * columns (setp.ne.s32 %p1, c0, 10; @%p1 ld.global.nc.v4.b32): the mask's
 * constancy analysis takes the unsigned comparison as constant over
 * aligned groups of 4, which it is not at x == 10 (the slow path's
 * per-lane predicates are right).  Fixed on branch fix11: it was the
 * monotonicity fact (a run against a constant, taken as false-then-true
 * over 64 elements) of a run that wraps at x == 10 in u64; an ordered
 * comparison now takes only aligned runs as monotone (analysis.c
 * ordered_run), tests/unit/test_masks.c has the class. */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);

TEENY_KERNEL(BM, BN)
void kern(ptr(u32) x, ptr(u32) out)
{
    tile(i32) o = col(arange(0, BM)) * BN + row(arange(0, BN));
    store(out + o, load(x + o, ((u64) 0) < ((u64) (arange(0, BN) - 10)), 7));
}
