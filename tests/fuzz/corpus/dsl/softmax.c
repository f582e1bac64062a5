TEENY_DTYPE(D);
TEENY_CONST(BLOCK);
TEENY_KERNEL(D, BLOCK)
void softmax(ptr(D) out, const ptr(D) in, i32 stride, i32 n_cols)
{
    i32 r = program_id(0);
    tile(i32) cols = arange(0, BLOCK);
    tile(bool) mask = cols < n_cols;
    tile(f32) x = (tile(f32)) load(in + r * stride + cols, mask, -INFINITY);
    tile(f32) e = exp(x - max(x, 0));
    store(out + r * stride + cols, e / sum(e), mask);
}
