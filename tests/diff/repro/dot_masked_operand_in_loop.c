/* difffuzz (reduced from campaign seed 1000522): a dot operand loaded with
 * a mask that is an argmax result (all false: argmax of zeros is 0) and
 * other = 1, inside a loop.  Every operand element is 1, so every result
 * is 16; in the generated code 128 of the 512 results are 4: a quarter of
 * the operand was read as 0, not as `other` (sm_80, 1 warp, 16x16).  The
 * same without the loop, or with the mask `arange(...) < 0`, is right. */
#include <teeny/dsl.h>

TEENY_CONST(BM);
TEENY_CONST(BN);

TEENY_KERNEL(BM, BN)
void kern(ptr(u64) x, ptr(i64) out)
{
    for (i32 k = 0; k < 2; k += 1) {
        tile(bool) m = (bool) argmax(zeros(i32, 1, BM * BN), 0);
        tile(f32) b = reshape((f32) load(x + arange(0, BM * BN), m, 1), BM, BN);
        store(out + k * (BM * BN) + col(arange(0, BM)) * BN + row(arange(0, BN)),
              (i64) dot(full(f32, 1, BM, BM), b));
    }
}
