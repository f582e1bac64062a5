/* fp8 conversions on the GPU (tests/gpu/check.py check_fp8): every code up
 * to f32, and f32 down to fp8 directly and through f16. */
#include <teeny/dsl.h>

TEENY_DTYPE(F);
TEENY_CONST(BLOCK);

TEENY_KERNEL(F, BLOCK)
void up(ptr(F) codes, ptr(f32) out, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + o, (tile(f32))load(codes + o, o < n), o < n);
}

TEENY_KERNEL(F, BLOCK)
void down(ptr(f32) x, ptr(F) out, ptr(F) out16, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(f32) v = load(x + o, o < n, 0);
    store(out + o, (tile(F))v, o < n);
    store(out16 + o, (tile(F))(tile(f16))v, o < n);
}

/* c = a . b with fp8 operands, f32 accumulation (M = N = K = T). */
TEENY_KERNEL(F, BLOCK)
void dot8(ptr(F) a, ptr(F) b, ptr(f32) c)
{
    tile(i32) r = arange(0, BLOCK);
    tile(F) A = load(a + col(r) * BLOCK + row(r));
    tile(F) B = load(b + col(r) * BLOCK + row(r));
    store(c + col(r) * BLOCK + row(r), dot(A, B));
}
