/* tests/gpu/math_accuracy.py's kernels: y = f(x) element-wise, one kernel
 * per math builtin (the accurate forms and the fast_* ones), f32. */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

TEENY_KERNEL(BLOCK)
void k_exp(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, exp(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_exp2(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, exp2(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_log(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, log(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_log2(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, log2(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_sin(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, sin(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_cos(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, cos(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_tanh(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, tanh(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_sigmoid(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, sigmoid(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_erf(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, erf(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_sqrt(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, sqrt(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_rsqrt(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, rsqrt(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_exp(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_exp(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_exp2(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_exp2(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_log(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_log(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_log2(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_log2(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_sin(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_sin(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_cos(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_cos(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_fast_tanh(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, fast_tanh(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_asin(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, asin(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_acos(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, acos(load(x + o, m, 0.0f)), m);
}

TEENY_KERNEL(BLOCK)
void k_atan(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    store(y + o, atan(load(x + o, m, 0.0f)), m);
}
