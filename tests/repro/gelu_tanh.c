/* Issue 11, defect 4: gelu with tanh was 5.7e-6 off on the GPU
 * (tanh.approx); tanh is accurate by default now, fast_tanh is the
 * approximation.
 *   teenyc run gelu_tanh.c -k gelu -c BLOCK=1024 --grid 4 --fill x=4000:random:1 \
 *       --fill y=4000 --arg n=4000 --engine both --tol 1e-5 --atol 1e-6 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

TEENY_KERNEL(BLOCK)
void gelu(ptr(f32) x, ptr(f32) y, i32 n)
{
    tile(i32) o = program_id(0) * BLOCK + arange(0, BLOCK);
    tile(bool) m = o < n;
    tile(f32) v = load(x + o, m, 0.0f) * 3.0f;
    tile(f32) u = 0.7978845608f * (v + 0.044715f * v * v * v);
    store(y + o, 0.5f * v * (1.0f + tanh(u)), m);
}
