/* Fused attention, forward, as Triton's tutorial 06 ("Fused Attention")
 * writes it: each program takes BLOCK_M query rows of one (batch, head),
 * walks the keys BLOCK_N at a time keeping a running max m_i, a running
 * sum l_i and an unnormalised output acc (online softmax, in base 2), and
 * writes softmax(q k^T * sm_scale) v and the row's log-sum-exp M.
 *
 * The tutorial's _attn_fwd_inner returns (acc, l_i, m_i); here that tuple
 * is a struct.  STAGE 3 is causal (the blocks left of the diagonal, then
 * the diagonal block with its mask), STAGE 1 not.  Tensor descriptors
 * become pointer arithmetic on [Z*H, N_CTX, HEAD_DIM] row-major tensors,
 * and every load is masked, so N_CTX need not be a multiple of the blocks.
 * Grid: (cdiv(N_CTX, BLOCK_M), Z*H).
 *
 * The language's tour of structs as tuples; examples/kernels/attention.c is
 * the same algorithm written for speed (no masks in the hot loop, strided
 * [Z, H, N_CTX, HEAD_DIM] tensors) and is the one bench/gpu.py times. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f16, bf16, f32);
TEENY_CONST(HEAD_DIM);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(STAGE);

/* The online-softmax state of BLOCK_M rows (Triton: acc, l_i, m_i). */
typedef struct {
    tile(f32) acc; /* [BLOCK_M, HEAD_DIM]: sum of p v, not yet divided by l_i */
    tile(f32) l_i; /* [BLOCK_M]: sum of p */
    tile(f32) m_i; /* [BLOCK_M]: the largest scaled score so far (base 2) */
} attn_state;

attn_state attn_fwd_inner(attn_state s, tile(D) q, ptr(D) k_base, ptr(D) v_base, i32 start_m,
                          f32 qk_scale, i32 stage, tile(i32) offs_m, tile(i32) offs_n,
                          i32 n_ctx)
{
    /* range of values handled by this stage */
    i32 lo = 0;
    i32 hi = n_ctx;
    if (stage == 1) {
        hi = start_m * BLOCK_M;
    } else if (stage == 2) {
        lo = start_m * BLOCK_M;
        hi = minimum((start_m + 1) * BLOCK_M, n_ctx);
    }
    tile(i32) offs_d = arange(0, HEAD_DIM);
    /* loop over k, v and update the accumulator */
    for (i32 start_n = lo; start_n < hi; start_n += BLOCK_N) {
        tile(i32) cols = start_n + offs_n;
        tile(bool) in_n = cols < n_ctx;
        /* -- compute qk ---- */
        tile(D) k = load(k_base + row(cols) * HEAD_DIM + col(offs_d), row(in_n), 0); /* k^T */
        tile(f32) qk = dot(q, k);
        tile(f32) m_ij;
        if (stage == 2) {
            tile(bool) mask = col(offs_m) >= row(cols) && row(in_n);
            qk = qk * qk_scale + where(mask, 0.0f, -1.0e6f);
            m_ij = maximum(s.m_i, max(qk, 1));
            qk = qk - col(m_ij);
        } else {
            qk = where(row(in_n), qk, -1.0e6f); /* beyond N_CTX (the tutorial needs none) */
            m_ij = maximum(s.m_i, max(qk, 1) * qk_scale);
            qk = qk * qk_scale - col(m_ij);
        }
        tile(f32) p = exp2(qk);
        /* -- compute correction factor */
        tile(f32) alpha = exp2(s.m_i - m_ij);
        tile(f32) l_ij = sum(p, 1);
        /* -- update output accumulator -- */
        s.acc = s.acc * col(alpha);
        tile(D) v = load(v_base + col(cols) * HEAD_DIM + row(offs_d), col(in_n), 0);
        s.acc = dot((tile(D))p, v, s.acc);
        /* update m_i and l_i */
        s.l_i = s.l_i * alpha + l_ij;
        s.m_i = m_ij;
    }
    return s;
}

TEENY_KERNEL(D, HEAD_DIM, BLOCK_M, BLOCK_N, STAGE)
void attn_fwd(ptr(D) q_ptr, ptr(D) k_ptr, ptr(D) v_ptr, ptr(D) o_ptr, ptr(f32) m_ptr,
              f32 sm_scale, i32 n_ctx)
{
    static_assert(BLOCK_N <= HEAD_DIM, "BLOCK_N must be <= HEAD_DIM");
    static_assert(BLOCK_M % BLOCK_N == 0, "BLOCK_M must be a multiple of BLOCK_N");
    i32 start_m = program_id(0);
    i32 off_hz = program_id(1);
    i64 qvk_offset = (i64)off_hz * n_ctx * HEAD_DIM;
    ptr(D) q_base = q_ptr + qvk_offset;
    ptr(D) k_base = k_ptr + qvk_offset;
    ptr(D) v_base = v_ptr + qvk_offset;
    /* initialize offsets */
    tile(i32) offs_m = start_m * BLOCK_M + arange(0, BLOCK_M);
    tile(i32) offs_n = arange(0, BLOCK_N);
    tile(i32) offs_d = arange(0, HEAD_DIM);
    tile(bool) in_m = offs_m < n_ctx;
    /* initialize pointer to m and l */
    attn_state s = {zeros(f32, BLOCK_M, HEAD_DIM), zeros(f32, BLOCK_M) + 1.0f,
                    zeros(f32, BLOCK_M) - INFINITY};
    /* load scales */
    f32 qk_scale = sm_scale * 1.44269504f; /* 1/log(2) */
    /* load q: it will stay in SRAM throughout */
    tile(D) q = load(q_base + col(offs_m) * HEAD_DIM + row(offs_d), col(in_m), 0);
    /* stage 1: off-band; stage 2: on-band (for STAGE 3, causal) */
    if (STAGE & 1)
        s = attn_fwd_inner(s, q, k_base, v_base, start_m, qk_scale, 4 - STAGE, offs_m, offs_n,
                           n_ctx);
    if (STAGE & 2)
        s = attn_fwd_inner(s, q, k_base, v_base, start_m, qk_scale, 2, offs_m, offs_n, n_ctx);
    /* epilogue */
    s.m_i = s.m_i + log2(s.l_i);
    tile(f32) acc = s.acc / col(s.l_i);
    store(m_ptr + off_hz * n_ctx + offs_m, s.m_i, in_m);
    store(o_ptr + qvk_offset + col(offs_m) * HEAD_DIM + row(offs_d), acc, col(in_m));
}
