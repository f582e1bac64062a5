// helpers, reduce with a combine function, loops, literals
f32 add2(f32 a, f32 b) { return a + b; }
static inline tile(f32) leaky(tile(f32) x, f32 slope, i32 on)
{
    if (!on)
        return x;
    else if (on > 1) { return x * 2.0f; }
    return where(x > 0, x, x * slope);
}
TEENY_CONST(N);
TEENY_KERNEL(N)
void k(ptr(f32) x, ptr(i32) bins, i32 n)
{
    tile(f32) v = leaky(load(x + arange(0, N)), .5, 1);
    f32 s = reduce(v, 0, add2);
    i32 i = 0x10 + 017 + 3u + 4l + 5ul;
    while (i < n) { i += 2; }
    do i--; while (i > 0);
    i64 w = i > 0 ? (i64)1 : i < 0 ? -1 : 0;
    atomic_add(bins + (i32)s, 1);
    store(x, s + cumsum(v, 0) + 1e-5f + 0x1p3);
}
TEENY_BACKWARD(k, k2);
TEENY_KERNEL(N) void k2(ptr(f32) x) { store(x + arange(0, N), full(f32, 1.0, N)); }
