/*
 * tests/lang/descs.c — tensor descriptors and block pointers (docs/dsl.md
 * §5), on a grid of one axis: a transposing copy through descriptors whose blocks overhang the
 * tensor (zeros read outside it, nothing written there), a block at a
 * negative offset, 1-D and 3-D descriptors, and matmuls written with block
 * pointers advanced along K and with tensor descriptors, on sizes that are
 * not multiples of the blocks.
 */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BM);
TEENY_CONST(BN);
TEENY_CONST(BK);

/* out = 2 * x^T + 1 for x [M, N]; sums: each block's sum; shifted: the
 * block at (pm * BM - 3, pn * BN + 5) of x, per program. */
TEENY_KERNEL(D, BM, BN)
void desc_copy(ptr(D) x, ptr(D) out, ptr(f32) sums, ptr(D) shifted, i32 M, i32 N)
{
    i32 p = program_id(0), pm = p / cdiv(N, BN), pn = p % cdiv(N, BN);
    tensor_desc(D) src = make_tensor_descriptor(x, M, N, N, 1, BM, BN);
    tensor_desc(D) dst = make_tensor_descriptor(out, N, M, M, 1, BN, BM);
    tile(D) t = load_tensor_descriptor(src, pm * BM, pn * BN);
    store_tensor_descriptor(dst, pn * BN, pm * BM, trans(t) * 2 + 1);
    store(sums + p, sum(t));
    ptr(D) o = shifted + p * BM * BN;
    store(o + col(arange(0, BM)) * BN + row(arange(0, BN)),
          load_tensor_descriptor(src, pm * BM - 3, pn * BN + 5, cache_cg));
}

/* desc_copy's work on descriptors the client passes (tensor_desc kernel
 * parameters): src [M, N], dst [N, M], gn = cdiv(N, BN).  On sm_90 and later the loads of
 * src go through the TMA where the client could encode its tensormap
 * (16-byte aligned rows), else through the pointer lowering. */
TEENY_KERNEL(D, BM, BN)
void desc_param(tensor_desc(D, BM, BN) src, tensor_desc(D, BN, BM) dst, ptr(f32) sums,
                ptr(D) shifted, i32 gn)
{
    i32 p = program_id(0), pm = p / gn, pn = p % gn;
    tile(D) t = load_tensor_descriptor(src, pm * BM, pn * BN);
    store_tensor_descriptor(dst, pn * BN, pm * BM, trans(t) * 2 + 1);
    store(sums + p, sum(t));
    ptr(D) o = shifted + p * BM * BN;
    store(o + col(arange(0, BM)) * BN + row(arange(0, BN)),
          load_tensor_descriptor(src, pm * BM - 3, pn * BN + 5));
}

/* out[i] = x[i] + 1 through 1-D descriptors; cube: the [2, 4, 8] block at
 * (2, 3, 16) of x seen as [A, B, C] (3-D, overhanging it in every dim),
 * stored whole per program. */
TEENY_KERNEL(D, BM)
void desc_ranks(ptr(D) x, ptr(D) out, ptr(D) cube, i32 n, i32 A, i32 B, i32 C)
{
    i32 pid = program_id(0);
    tensor_desc(D) v = make_tensor_descriptor(x, n, 1, BM);
    tensor_desc(D) w = make_tensor_descriptor(out, n, 1, BM);
    store_tensor_descriptor(w, pid * BM, load_tensor_descriptor(v, pid * BM) + 1);
    tensor_desc(D) c3 = make_tensor_descriptor(x, A, B, C, B * C, C, 1, 2, 4, 8);
    store(cube + pid * 64 + reshape(arange(0, 64), 2, 4, 8), load_tensor_descriptor(c3, 2, 3, 16));
}

/* Descriptors through helpers: taken, returned, advanced in a loop. */
static tile(D) load_at(tensor_desc(D) d, i32 o) { return load_tensor_descriptor(d, o); }
static block_ptr(D) step(block_ptr(D) p) { return advance(p, BM); }
static tensor_desc(D) describe(ptr(D) x, i32 n) { return make_tensor_descriptor(x, n, 1, BM); }

/* out = 2 * x over n elements, one program walking blocks of BM. */
TEENY_KERNEL(D, BM)
void desc_helpers(ptr(D) x, ptr(D) out, i32 n)
{
    tensor_desc(D) d = describe(x, n);
    block_ptr(D) p = make_block_ptr(out, n, 1, 0, BM, 0);
    for (i32 i = 0; i < n; i += BM) {
        store(p, load_at(d, i) * 2);
        p = step(p);
    }
}

/* c = a . b with block pointers (Triton's older API), advanced along K. */
TEENY_KERNEL(D, BM, BN, BK)
void bp_matmul(ptr(D) a, ptr(D) b, ptr(D) c, i32 M, i32 N, i32 K, i32 sam, i32 sak, i32 sbk,
               i32 sbn)
{
    i32 pm = program_id(0) / cdiv(N, BN), pn = program_id(0) % cdiv(N, BN);
    block_ptr(D) pa = make_block_ptr(a, M, K, sam, sak, pm * BM, 0, BM, BK, 1, 0);
    block_ptr(D) pb = make_block_ptr(b, K, N, sbk, sbn, 0, pn * BN, BK, BN, 1, 0);
    tile(f32) acc = zeros(f32, BM, BN);
    for (i32 k = 0; k < K; k += BK) {
        acc = dot(load(pa), load(pb), acc);
        pa = advance(pa, 0, BK);
        pb = advance(pb, BK, 0);
    }
    block_ptr(D) pc = make_block_ptr(c, M, N, N, 1, pm * BM, pn * BN, BM, BN, 1, 0);
    store(pc, acc);
}

/* c = a . b with tensor descriptors (row-major a [M, K], b [K, N]). */
TEENY_KERNEL(D, BM, BN, BK)
void td_matmul(ptr(D) a, ptr(D) b, ptr(D) c, i32 M, i32 N, i32 K)
{
    i32 pm = program_id(0) / cdiv(N, BN), pn = program_id(0) % cdiv(N, BN);
    tensor_desc(D) da = make_tensor_descriptor(a, M, K, K, 1, BM, BK);
    tensor_desc(D) db = make_tensor_descriptor(b, K, N, N, 1, BK, BN);
    tensor_desc(D) dc = make_tensor_descriptor(c, M, N, N, 1, BM, BN);
    tile(f32) acc = zeros(f32, BM, BN);
    for (i32 k = 0; k < K; k += BK)
        acc = dot(load_tensor_descriptor(da, pm * BM, k), load_tensor_descriptor(db, k, pn * BN),
                  acc);
    store_tensor_descriptor(dc, pm * BM, pn * BN, acc);
}

/* td_matmul with the k windows shifted to start at k0 (negative: the
 * first window hangs over the tensor's start and reads zeros there), so
 * its sum is the same product: windows wholly inside, partly before the
 * start and partly past the end, in one loop (the fast copy's unsigned
 * bounds test, mem.c split_full). */
TEENY_KERNEL(D, BM, BN, BK)
void td_window(ptr(D) a, ptr(D) b, ptr(D) c, i32 M, i32 N, i32 K, i32 k0)
{
    i32 pm = program_id(0) / cdiv(N, BN), pn = program_id(0) % cdiv(N, BN);
    tensor_desc(D) da = make_tensor_descriptor(a, M, K, K, 1, BM, BK);
    tensor_desc(D) db = make_tensor_descriptor(b, K, N, N, 1, BK, BN);
    tile(f32) acc = zeros(f32, BM, BN);
    for (i32 k = k0; k < K; k += BK)
        acc = dot(load_tensor_descriptor(da, pm * BM, k), load_tensor_descriptor(db, k, pn * BN),
                  acc);
    tensor_desc(D) dc = make_tensor_descriptor(c, M, N, N, 1, BM, BN);
    store_tensor_descriptor(dc, pm * BM, pn * BN, acc);
}
