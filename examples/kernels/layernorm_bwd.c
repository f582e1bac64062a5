/* layernorm backward, as Triton's tutorial 05 ("Layer Normalization")
 * computes it, ported as close to its source as the language allows.
 *
 * layernorm_bwd_dx: one program per row computes dx, and adds the row's
 * contributions to dw and db into one of GROUP_SIZE_M partial rows,
 * serialised by a lock per partial row (spin on atomic_cas, the first
 * program stores, the others accumulate, barrier(), release with
 * atomic_xchg: acq_rel by default, so the lock is correct on the GPU).
 * Lock holds GROUP_SIZE_M locks, then GROUP_SIZE_M counts, all zero at
 * the start.  layernorm_bwd_dwdb: sums the partial rows into the final dw
 * and db, one program per BLOCK_SIZE_N columns. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f32, f16, bf16);
TEENY_CONST(GROUP_SIZE_M);
TEENY_CONST(BLOCK_SIZE_N);
TEENY_CONST(BLOCK_SIZE_M);

TEENY_KERNEL(D, GROUP_SIZE_M, BLOCK_SIZE_N)
void layernorm_bwd_dx(ptr(D) DX, ptr(D) DY, ptr(f32) DW, ptr(f32) DB, ptr(D) X,
                      ptr(D) W, ptr(f32) Mean, ptr(f32) Rstd, ptr(i32) Lock,
                      i32 stride, i32 N)
{
    i32 row = program_id(0);
    tile(i32) cols = arange(0, BLOCK_SIZE_N);
    tile(bool) mask = cols < N;
    X += row * stride;
    DY += row * stride;
    DX += row * stride;
    /* offset the lock and the partial dw/db rows for the parallel reduction */
    i32 lock_id = row % GROUP_SIZE_M;
    Lock += lock_id;
    ptr(i32) Count = Lock + GROUP_SIZE_M;
    tile(ptr(f32)) dw_ptrs = DW + lock_id * N + cols;
    tile(ptr(f32)) db_ptrs = DB + lock_id * N + cols;
    tile(f32) x = (f32)load(X + cols, mask, 0);
    tile(f32) dy = (f32)load(DY + cols, mask, 0);
    tile(f32) w = (f32)load(W + cols, mask, 0);
    f32 mean = load(Mean + row);
    f32 rstd = load(Rstd + row);
    /* dx */
    tile(f32) xhat = (x - mean) * rstd;
    tile(f32) wdy = w * dy;
    xhat = where(mask, xhat, 0.0f);
    wdy = where(mask, wdy, 0.0f);
    f32 c1 = sum(xhat * wdy, 0) / N;
    f32 c2 = sum(wdy, 0) / N;
    tile(f32) dx = (wdy - (xhat * c1 + c2)) * rstd;
    store(DX + cols, dx, mask);
    /* accumulate the partial sums of dw and db under the lock */
    tile(f32) partial_dw = dy * xhat;
    tile(f32) partial_db = dy;
    while (atomic_cas(Lock, 0, 1) == 1) {
    }
    i32 count = load(Count);
    if (count == 0) { /* the first store does not accumulate */
        atomic_xchg(Count, 1);
    } else {
        partial_dw += load(dw_ptrs, mask, 0.0f);
        partial_db += load(db_ptrs, mask, 0.0f);
    }
    store(dw_ptrs, partial_dw, mask);
    store(db_ptrs, partial_db, mask);
    barrier(); /* Triton's debug_barrier: every thread's stores before the release */
    atomic_xchg(Lock, 0);
}

TEENY_KERNEL(D, BLOCK_SIZE_M, BLOCK_SIZE_N)
void layernorm_bwd_dwdb(ptr(f32) DW, ptr(f32) DB, ptr(D) FINAL_DW, ptr(D) FINAL_DB,
                        i32 M, i32 N)
{
    i32 pid = program_id(0);
    tile(i32) cols = pid * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
    tile(f32) dw = zeros(f32, BLOCK_SIZE_M, BLOCK_SIZE_N);
    tile(f32) db = zeros(f32, BLOCK_SIZE_M, BLOCK_SIZE_N);
    for (i32 i = 0; i < M; i += BLOCK_SIZE_M) {
        tile(i32) rows = i + arange(0, BLOCK_SIZE_M);
        tile(bool) mask = (col(rows) < M) & (row(cols) < N);
        tile(i32) offs = col(rows) * N + row(cols);
        dw += load(DW + offs, mask, 0.0f);
        db += load(DB + offs, mask, 0.0f);
    }
    tile(f32) sum_dw = sum(dw, 0);
    tile(f32) sum_db = sum(db, 0);
    store(FINAL_DW + cols, sum_dw, cols < N);
    store(FINAL_DB + cols, sum_db, cols < N);
}
