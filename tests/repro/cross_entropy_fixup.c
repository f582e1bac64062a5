/* Issue 11, defect 2 in a real kernel: a Liger-style cross-entropy gradient
 * writes the softmax row, then subtracts 1 at the target index.
 *   teenyc run cross_entropy_fixup.c -k ce_grad -c BLOCK=512 --grid 7 \
 *       --fill logits=2807:random:3 --fill grad=2807 --fill target=7:iota --arg n=401 --engine both --tol 1e-6
 * expect: agreement; grad[row * n + target[row]] = softmax - 1 */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK);

TEENY_KERNEL(BLOCK)
void ce_grad(ptr(f32) logits, ptr(f32) grad, ptr(i32) target, i32 n)
{
    i32 row = program_id(0);
    tile(i32) o = arange(0, BLOCK);
    tile(bool) m = o < n;
    tile(f32) x = load(logits + row * n + o, m, -INFINITY);
    tile(f32) e = exp(x - max(x, 0));
    tile(f32) p = e / sum(e, 0);
    store(grad + row * n + o, p, m);
    i32 t = load(target + row);
    f32 g = load(grad + row * n + t);
    store(grad + row * n + t, g - 1.0f);
}
