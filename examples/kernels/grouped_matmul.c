/* grouped_matmul: G independent products C_g = A_g B_g of different sizes
 * in one launch (Triton's tutorial 08).  The operands are pointer tables:
 * a_ptrs[g], b_ptrs[g], c_ptrs[g] hold the addresses of group g's
 * row-major matrices (f16), sizes[3g..3g+2] its M, N, K, lds[3g..3g+2]
 * their leading dims.  A fixed grid of NUM_SMS programs walks the tiles of
 * every group in turn; edges are masked, so sizes need not be multiples of
 * the blocks.  Grid: NUM_SMS programs.
 *
 * `pool` is the memory the tables point into.  The kernel reads it only
 * through the tables; passing it lets the interpreter (`teenyc run`)
 * check every access against it, and grouped_tables below fills the
 * tables on the device from offsets into it. */
#include <teeny/dsl.h>

TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(BLOCK_K);
TEENY_CONST(NUM_SMS);

/* a_ptrs[g] = address of pool[offs[3g]], b_ptrs[g] of pool[offs[3g+1]],
 * c_ptrs[g] of pool[offs[3g+2]], for g < groups <= 64.  Grid: 1. */
TEENY_KERNEL()
void grouped_tables(ptr(f16) pool, ptr(i32) offs, ptr(i64) a_ptrs, ptr(i64) b_ptrs,
                    ptr(i64) c_ptrs, i32 groups)
{
    tile(i32) g = arange(0, 64);
    tile(bool) in = g < groups;
    store(a_ptrs + g, (tile(i64))(pool + load(offs + 3 * g, in)), in);
    store(b_ptrs + g, (tile(i64))(pool + load(offs + 3 * g + 1, in)), in);
    store(c_ptrs + g, (tile(i64))(pool + load(offs + 3 * g + 2, in)), in);
}

TEENY_KERNEL(BLOCK_M, BLOCK_N, BLOCK_K, NUM_SMS)
void grouped_matmul(ptr(f16) pool, ptr(i64) a_ptrs, ptr(i64) b_ptrs, ptr(i64) c_ptrs, ptr(i32) sizes,
                    ptr(i32) lds, i32 groups)
{
    (void)pool; /* reached through the tables only */
    i32 tile_idx = program_id(0);
    i32 last_problem_end = 0;
    for (i32 g = 0; g < groups; g++) {
        i32 gm = load(sizes + 3 * g), gn = load(sizes + 3 * g + 1), gk = load(sizes + 3 * g + 2);
        i32 num_n_tiles = cdiv(gn, BLOCK_N);
        i32 num_tiles = cdiv(gm, BLOCK_M) * num_n_tiles;
        while (tile_idx >= last_problem_end && tile_idx < last_problem_end + num_tiles) {
            i32 lda = load(lds + 3 * g), ldb = load(lds + 3 * g + 1), ldc = load(lds + 3 * g + 2);
            ptr(f16) a_ptr = (ptr(f16))load(a_ptrs + g);
            ptr(f16) b_ptr = (ptr(f16))load(b_ptrs + g);
            ptr(f16) c_ptr = (ptr(f16))load(c_ptrs + g);
            i32 t = tile_idx - last_problem_end;
            tile(i32) rm = (t / num_n_tiles) * BLOCK_M + arange(0, BLOCK_M);
            tile(i32) rn = (t % num_n_tiles) * BLOCK_N + arange(0, BLOCK_N);
            tile(i32) rk = arange(0, BLOCK_K);
            tile(f32) acc = zeros(f32, BLOCK_M, BLOCK_N);
            for (i32 k = 0; k < gk; k += BLOCK_K) {
                tile(f16) a = load(a_ptr + col(rm) * lda + row(k + rk),
                                   (col(rm) < gm) & (row(k + rk) < gk), 0);
                tile(f16) b = load(b_ptr + col(k + rk) * ldb + row(rn),
                                   (col(k + rk) < gk) & (row(rn) < gn), 0);
                acc = dot(a, b, acc);
            }
            store(c_ptr + col(rm) * ldc + row(rn), acc, (col(rm) < gm) & (row(rn) < gn));
            tile_idx += NUM_SMS;
        }
        last_problem_end = last_problem_end + num_tiles;
    }
}
