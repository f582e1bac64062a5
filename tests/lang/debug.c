/*
 * tests/lang/debug.c — dtype introspection, static_assert, device_print and
 * device_assert (docs/dsl.md §5), for tests/unit/test_lang.c.
 */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BLOCK);

/* out[0] encodes what the dtype tests said; out[1 ..] a float-only branch
 * (sqrt is an error on integers, so for an integer D it must not be
 * built at all). */
TEENY_KERNEL(D, BLOCK)
void introspect(ptr(D) x, ptr(f32) out)
{
    static_assert(BLOCK >= 4 && BLOCK % 4 == 0, "BLOCK must be a multiple of 4");
    static_assert(sizeof(D) == sizeof(tile(D)), "a tile's size is its element's");
    tile(i32) offs = arange(0, BLOCK);
    tile(D) v = load(x + offs);
    i32 kind = 0;
    if (is_float(D))
        kind = 1;
    else if (is_signed(D))
        kind = 2;
    else if (is_unsigned(D))
        kind = 3;
    i32 code = kind * 100 + (i32)sizeof(v) * 10 + (is_int(v) ? 1 : 0);
    if (same_dtype(D, f16))
        code += 5000;
    store(out, (f32)code);
    tile(f32) y;
    if (is_float(D))
        y = (tile(f32))sqrt(v);
    else
        y = (tile(f32))v * 2.0f;
    store(out + 1 + offs, y);
}

/* Lines of every kind: tiles (one line per element), 2-D tiles, scalars
 * (one line per program), dtypes from bool to f64, widths and %%. */
TEENY_KERNEL(BLOCK)
void prints(ptr(f32) x, i32 n)
{
    i32 pid = program_id(0);
    tile(i32) offs = pid * BLOCK + arange(0, BLOCK);
    tile(f32) v = load(x + offs, offs < n, -1.0f);
    device_print("x[%d] = %8.3f as f16 %g", offs, v, (tile(f16))v);
    device_print("pid %d of %d: n=%u, big=%x, 100%%", pid, num_programs(0), (u32)n,
                 (i64)n << 33);
    tile(i32) m = col(arange(0, 2)) * 10 + row(arange(0, 4));
    device_print("m=%3d neg=%i small=%d flag=%d", m, -m, (tile(i8))(m - 20), m > 12);
    device_print("third %.10f", (f64)pid / 3.0);
}

/* device_assert: off unless the request asks for it (--debug). */
TEENY_KERNEL(BLOCK)
void checks(ptr(i32) x, i32 n)
{
    tile(i32) offs = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(i32) v = load(x + offs, offs < n, 0);
    device_assert(v >= 0, "x[%d] = %d is negative", offs, v);
    device_assert(n > 0, "n = %d", n);
    store(x + offs, v + 1, offs < n);
}
