/* attention: flash attention forward (Triton's tutorial 06): for each
 * batch z, head h and query row m,
 *   O[z, h, m, :] = softmax(sm_scale * Q[z, h, m, :] K[z, h, :, :]^T) V[z, h, :, :]
 * with an online softmax in base 2 (scores scaled by sm_scale * log2(e),
 * exp2 of their difference to the running row max), an f32 accumulator,
 * and the row's log2-sum-exp2 in LSE[z * H + h, m] (what a backward pass
 * needs).  Q, K, V, O are [Z, H, N_CTX, HEAD_DIM], contiguous along
 * HEAD_DIM (as FlashAttention requires; the code generator then knows
 * which axis of each tile is contiguous), with any other strides; N_CTX
 * need not be a multiple of the blocks (rows and columns past it are
 * masked).  CAUSAL = 1 lets row m see columns n <= m only.
 *
 * The key blocks are visited in two stages, as in the tutorial: first the
 * blocks that need no mask (CAUSAL: those left of the diagonal; else every
 * full block), then the rest with masks (CAUSAL: the diagonal blocks; else
 * the one partial block at the end, if N_CTX % BLOCK_N != 0), so the hot
 * loop carries no mask arithmetic.  BLOCK_M must be a multiple of BLOCK_N
 * when CAUSAL.  The scaled score minus the row max is one fma (what
 * Triton's default fp fusion makes of the tutorial's qk * scale - m).
 * Grid: (cdiv(N_CTX, BLOCK_M), Z * H) programs. */
#include <teeny/dsl.h>

TEENY_DTYPE(D, f16, bf16);
TEENY_CONST(HEAD_DIM);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);
TEENY_CONST(CAUSAL);

TEENY_KERNEL(D, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL)
void attention(ptr(D) q_ptr, ptr(D) k_ptr, ptr(D) v_ptr, ptr(D) o_ptr, ptr(f32) lse_ptr,
               f32 sm_scale, i32 H, i32 N_CTX,
               i32 stride_qz, i32 stride_qh, i32 stride_qm,
               i32 stride_kz, i32 stride_kh, i32 stride_kn,
               i32 stride_vz, i32 stride_vh, i32 stride_vn,
               i32 stride_oz, i32 stride_oh, i32 stride_om)
{
    i32 start_m = program_id(0);
    i32 off_hz = program_id(1);
    i64 off_z = off_hz / H;
    i64 off_h = off_hz % H;
    ptr(D) q_head = q_ptr + off_z * stride_qz + off_h * stride_qh;
    ptr(D) k_head = k_ptr + off_z * stride_kz + off_h * stride_kh;
    ptr(D) v_head = v_ptr + off_z * stride_vz + off_h * stride_vh;
    ptr(D) o_head = o_ptr + off_z * stride_oz + off_h * stride_oh;

    tile(i32) offs_m = start_m * BLOCK_M + arange(0, BLOCK_M);
    tile(i32) offs_n = arange(0, BLOCK_N);
    tile(i32) offs_d = arange(0, HEAD_DIM);
    tile(bool) row_ok = col(offs_m) < N_CTX;

    tile(D) q = load(q_head + col(offs_m) * stride_qm + row(offs_d), row_ok, 0);
    /* K^T [HEAD_DIM, BLOCK_N] and V [BLOCK_N, HEAD_DIM] of the first key block */
    tile(ptr(D)) kt_ptrs = k_head + col(offs_d) + row(offs_n) * stride_kn;
    tile(ptr(D)) v_ptrs = v_head + col(offs_n) * stride_vn + row(offs_d);

    f32 qk_scale = sm_scale * 1.44269504f;
    tile(f32) m_i = full(f32, -INFINITY, BLOCK_M);
    tile(f32) l_i = full(f32, 1.0f, BLOCK_M);
    tile(f32) acc = zeros(f32, BLOCK_M, HEAD_DIM);

    /* stage 1: key blocks without masks */
    i32 split = CAUSAL ? start_m * BLOCK_M : N_CTX / BLOCK_N * BLOCK_N;
    for (i32 start_n = 0; start_n < split; start_n += BLOCK_N) {
        tile(D) kt = load(kt_ptrs);
        tile(f32) qk = dot(q, kt);
        tile(f32) m_ij = maximum(m_i, max(qk, 1) * qk_scale);
        tile(f32) p = fast_exp2(fma(qk, qk_scale, -col(m_ij)));
        tile(f32) alpha = fast_exp2(m_i - m_ij);
        l_i = l_i * alpha + sum(p, 1);
        acc = acc * col(alpha);
        tile(D) v = load(v_ptrs);
        acc = dot((tile(D))p, v, acc);
        m_i = m_ij;
        kt_ptrs += BLOCK_N * stride_kn;
        v_ptrs += BLOCK_N * stride_vn;
    }

    /* stage 2: the diagonal blocks (CAUSAL) or the partial last block */
    i32 end = CAUSAL ? minimum((start_m + 1) * BLOCK_M, N_CTX) : N_CTX;
    for (i32 start_n = split; start_n < end; start_n += BLOCK_N) {
        tile(i32) cols = start_n + offs_n;
        tile(bool) col_ok = row(cols) < N_CTX;
        tile(bool) keep = CAUSAL ? col_ok & (col(offs_m) >= row(cols)) : col_ok;
        tile(D) kt = load(kt_ptrs, col_ok, 0);
        tile(f32) qk = where(keep, dot(q, kt) * qk_scale, -INFINITY);
        tile(f32) m_ij = maximum(m_i, max(qk, 1));
        tile(f32) p = fast_exp2(qk - col(m_ij));
        tile(f32) alpha = fast_exp2(m_i - m_ij);
        l_i = l_i * alpha + sum(p, 1);
        acc = acc * col(alpha);
        tile(D) v = load(v_ptrs, col(cols) < N_CTX, 0);
        acc = dot((tile(D))p, v, acc);
        m_i = m_ij;
        kt_ptrs += BLOCK_N * stride_kn;
        v_ptrs += BLOCK_N * stride_vn;
    }

    store(lse_ptr + off_hz * N_CTX + offs_m, m_i + log2(l_i), offs_m < N_CTX);
    store(o_head + col(offs_m) * stride_om + row(offs_d), acc / col(l_i), row_ok);
}
