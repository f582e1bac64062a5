"""bench/gpu.py — teenyc kernels against Triton and torch, one run, one GPU.

Every problem runs the three implementations on the same inputs; times are
medians of CUDA-event timings (triton.testing.do_bench, return_mode
"median").  The Triton kernels below implement the same algorithms as
examples/kernels/ (written for this benchmark), so the comparison is of
compilers, not of algorithms.  Also measured: the device-to-device copy
ceiling.  Prints a table and writes JSON and a markdown table to $OUT (or
the current directory).

    python3 bench/gpu.py [--quick] [--only NAME]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from teeny_gpu import Driver, Kernel, TensorDesc, rel_err, teenyc_path  # noqa: E402

KDIR = "examples/kernels/"


def cdiv(a, b):
    return (a + b - 1) // b


def next_pow2(n):
    return 1 << max(0, (n - 1).bit_length())


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


# ---- Triton versions of the example kernels --------------------------------------

@triton.jit
def tr_vector_add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.jit
def tr_softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def tr_layernorm(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps,
                 BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.where(mask, tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
        sq += d * d
    rstd = 1 / tl.sqrt(tl.sum(sq, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        xv = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + cols, (xv - mean) * rstd * w + b, mask=mask)


@triton.jit
def tr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    in_group = GM * num_n
    first_m = (pid // in_group) * GM
    size_m = tl.minimum(num_m - first_m, GM)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        bv = tl.load(b, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(av, bv, acc)
        a += BK * sak
        b += BK * sbk
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def tr_matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    in_group = GM * num_n
    first_m = (pid // in_group) * GM
    size_m = tl.minimum(num_m - first_m, GM)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        bv = tl.load(b, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(av, bv, acc)
        a += BK * sak
        b += BK * sbk
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    y = tl.maximum(acc + bias[None, :], 0.0)
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, y.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def tr_transpose(x_ptr, y_ptr, M, N, sxm, syn, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    rm = (pid // num_n) * BM + tl.arange(0, BM)
    rn = (pid % num_n) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + rm[None, :] + rn[:, None] * syn, tl.trans(x), mask=tl.trans(mask))


@triton.jit
def tr_attention(Q, K, V, O, LSE, sm_scale, H, N_CTX,
                 sqz, sqh, sqm, skz, skh, skn, svz, svh, svn, soz, soh, som,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 CAUSAL: tl.constexpr):
    """examples/kernels/attention.c in Triton (tutorial 06's algorithm with
    pointer loads and the same masks and two stages)."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = (off_hz // H).to(tl.int64)
    off_h = (off_hz % H).to(tl.int64)
    q_head = Q + off_z * sqz + off_h * sqh
    k_head = K + off_z * skz + off_h * skh
    v_head = V + off_z * svz + off_h * svh
    o_head = O + off_z * soz + off_h * soh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m[:, None] < N_CTX
    q = tl.load(q_head + offs_m[:, None] * sqm + offs_d[None, :], mask=row_ok, other=0.0)
    kt_ptrs = k_head + offs_d[:, None] + offs_n[None, :] * skn
    v_ptrs = v_head + offs_n[:, None] * svn + offs_d[None, :]
    qk_scale = sm_scale * 1.44269504
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.full([BLOCK_M], 1.0, tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:
        split = start_m * BLOCK_M
    else:
        split = N_CTX // BLOCK_N * BLOCK_N
    for start_n in range(0, split, BLOCK_N):
        kt = tl.load(kt_ptrs)
        qk = tl.dot(q, kt)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        kt_ptrs += BLOCK_N * skn
        v_ptrs += BLOCK_N * svn
    if CAUSAL:
        end = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    else:
        end = N_CTX
    for start_n in range(split, end, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols[None, :] < N_CTX
        if CAUSAL:
            keep = col_ok & (offs_m[:, None] >= cols[None, :])
        else:
            keep = col_ok
        kt = tl.load(kt_ptrs, mask=col_ok, other=0.0)
        qk = tl.where(keep, tl.dot(q, kt) * qk_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs, mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        kt_ptrs += BLOCK_N * skn
        v_ptrs += BLOCK_N * svn
    tl.store(LSE + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < N_CTX)
    tl.store(o_head + offs_m[:, None] * som + offs_d[None, :],
             (acc / l_i[:, None]).to(O.dtype.element_ty), mask=row_ok)


@triton.jit
def tr_chain_dot(Q, K, V, O, N_CTX, stride_h, stride_m, HEAD_DIM: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off + offs_m[:, None] * stride_m + offs_d[None, :])
    kt_ptrs = K + off + offs_d[:, None] + offs_n[None, :] * stride_m
    v_ptrs = V + off + offs_n[:, None] * stride_m + offs_d[None, :]
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        s = tl.dot(q, tl.load(kt_ptrs))
        acc = tl.dot(s.to(Q.dtype.element_ty), tl.load(v_ptrs), acc)
        kt_ptrs += BLOCK_N * stride_m
        v_ptrs += BLOCK_N * stride_m
    tl.store(O + off + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(O.dtype.element_ty))


# ---- problems -------------------------------------------------------------------------

rows = []


def report(problem, unit, work, t_ours, t_triton, t_torch, err, extra=""):
    def rate(t):
        return work / (t * 1e-3) / (1e9 if unit == "GB/s" else 1e12) if t else None
    r = {"problem": problem, "unit": unit, "ours_ms": t_ours, "triton_ms": t_triton,
         "torch_ms": t_torch, "ours": rate(t_ours), "triton": rate(t_triton),
         "torch": rate(t_torch), "rel_err": err, "note": extra}
    r["vs_triton"] = r["ours"] / r["triton"] if r["ours"] and r["triton"] else None
    rows.append(r)
    fmt = lambda v: f"{v:9.1f}" if v else "       --"  # noqa: E731
    vs = f"{100 * r['vs_triton']:6.1f}%" if r["vs_triton"] else "     --"
    print(f"{problem:34s} {unit:7s} ours {fmt(r['ours'])} triton {fmt(r['triton'])} "
          f"torch {fmt(r['torch'])}  {vs}  err {err:.1e} {extra}", flush=True)


def safe(fn):
    try:
        return fn()
    except Exception as e:  # keep going: one failure must not hide the rest
        print(f"  ! {type(e).__name__}: {e}", flush=True)
        return None


def bench_copy():
    n = 1 << 30  # 4 GiB of f32 read + written
    x = torch.randn(n // 4, device="cuda")
    y = torch.empty_like(x)
    t = bench(lambda: y.copy_(x))
    report("copy f32 1 GiB (ceiling)", "GB/s", 2 * x.numel() * 4, None, None, t, 0.0)


def bench_copy_tma(drv, tc):
    """examples/kernels/copy_tma.c (TMA loads of tensor_desc parameters)
    against the copy ceiling (torch's copy_ of the same bytes), 2-D f32."""
    for m, n in ((16384, 16384), (16000, 16000)):
        x = torch.randn(m, n, device="cuda")
        y = torch.empty_like(x)
        ceil = bench(lambda: y.copy_(x))
        report(f"copy f32 {m}x{n} torch copy_ (ceiling)", "GB/s", 2 * x.numel() * 4, None, None,
               ceil, 0.0)
        best = None
        for bm, bn, warps in ((32, 128, 4), (64, 128, 4), (16, 256, 4), (32, 256, 4),
                              (32, 256, 8), (64, 256, 8), (8, 256, 2)):
            k = safe(lambda: Kernel(drv, tc, KDIR + "copy_tma.c", "copy_tma",
                                    {"D": "f32", "BLOCK_M": bm, "BLOCK_N": bn}, num_warps=warps))
            if not k:
                continue
            sd, dd = TensorDesc(drv, x, (bm, bn)), TensorDesc(drv, y, (bm, bn))
            t = bench(lambda: k((cdiv(n, bn), cdiv(m, bm)), sd, dd))
            print(f"  copy_tma {bm}x{bn} w{warps}: {2 * x.numel() * 4 / t / 1e6:.1f} GB/s",
                  flush=True)
            if best is None or t < best[0]:
                best = (t, bm, bn, warps)
        y.zero_()
        k = Kernel(drv, tc, KDIR + "copy_tma.c", "copy_tma",
                   {"D": "f32", "BLOCK_M": best[1], "BLOCK_N": best[2]}, num_warps=best[3])
        k((cdiv(n, best[2]), cdiv(m, best[1])), TensorDesc(drv, x, best[1:3]),
          TensorDesc(drv, y, best[1:3]))
        torch.cuda.synchronize()
        assert torch.equal(x, y), "copy_tma copied wrong"
        print(f"  best {best[1]}x{best[2]} w{best[3]}: {ceil / best[0] * 100:.1f}% of the ceiling",
              flush=True)
        report(f"copy_tma f32 {m}x{n} (vs torch copy_)", "GB/s", 2 * x.numel() * 4, best[0], None,
               ceil, 0.0, f"{best[1]}x{best[2]} w{best[3]}")


def bench_vector_add(drv, tc):
    n = 1 << 28
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    out = torch.empty_like(a)
    best = None
    for block, warps in ((1024, 4), (2048, 4), (4096, 8)):
        k = safe(lambda: Kernel(drv, tc, KDIR + "vector_add.c", "vector_add",
                                {"D": "f32", "BLOCK_SIZE": block}, num_warps=warps))
        if not k:
            continue
        t = bench(lambda: k((cdiv(n, block),), a, b, out, n))
        if best is None or t < best[0]:
            best = (t, block, warps)
    k = Kernel(drv, tc, KDIR + "vector_add.c", "vector_add", {"D": "f32", "BLOCK_SIZE": best[1]},
               num_warps=best[2])
    k((cdiv(n, best[1]),), a, b, out, n)
    err = rel_err(out, a + b)
    t_tr = bench(lambda: tr_vector_add[(cdiv(n, 1024),)](a, b, out, n, BLOCK=1024))
    t_torch = bench(lambda: torch.add(a, b, out=out))
    report("vector_add f32 2^28", "GB/s", 3 * n * 4, best[0], t_tr, t_torch, err,
           f"ours BLOCK={best[1]} warps={best[2]}")


def best_of(label, candidates, work=None, unit=None):
    """candidates: (note, fn) pairs; the fastest median and its note (each
    candidate's rate is printed when work and unit are given)."""
    best = None
    for note, fn in candidates:
        t = safe(lambda: bench(fn))
        if t is not None and work:
            scale = 1e9 if unit == "GB/s" else 1e12
            print(f"  {label} {note}: {work / (t * 1e-3) / scale:.1f} {unit}", flush=True)
        if t is not None and (best is None or t < best[0]):
            best = (t, note)
    if best is None:
        raise RuntimeError(f"{label}: every configuration failed")
    return best


WARPS = (4, 8, 16)


def bench_softmax(drv, tc, m, n):
    x = torch.randn(m, n, device="cuda")
    out = torch.empty_like(x)
    block = next_pow2(n)
    kernels = {w: safe(lambda: Kernel(drv, tc, KDIR + "softmax.c", "softmax",
                                      {"D": "f32", "BLOCK_SIZE": block}, num_warps=w))
               for w in WARPS}
    kernels = {w: k for w, k in kernels.items() if k}
    t, note = best_of("ours", [(f"w{w}", (lambda k=k: k((m,), out, x, n, n, n)))
                               for w, k in kernels.items()])
    kernels[int(note[1:])]((m,), out, x, n, n, n)
    err = rel_err(out, torch.softmax(x.double(), 1))
    t_tr, note_tr = best_of("triton", [(f"w{w}", (lambda w=w: tr_softmax[(m,)](
        out, x, n, n, n, BLOCK=block, num_warps=w))) for w in WARPS])
    t_torch = bench(lambda: torch.softmax(x, 1))
    report(f"softmax f32 {m}x{n}", "GB/s", 2 * m * n * 4, t, t_tr, t_torch, err,
           f"best warps: ours {note}, triton {note_tr}")


# Row chunk sizes both layernorm sides are timed with (each with every warp
# count of WARPS): TEENY_BENCH_LN_BLOCKS=1024 for the one of runs 1-10; and
# num_stages (0: each compiler's own choice; for teenyc the depth of the
# row loops' register prefetch, num_stages - 1 iterations ahead), the same
# values for both sides: TEENY_BENCH_LN_STAGES=0,2,3,5.
LN_BLOCKS = tuple(int(v) for v in os.environ.get("TEENY_BENCH_LN_BLOCKS", "512,1024,2048").split(","))
LN_STAGES = tuple(int(v) for v in os.environ.get("TEENY_BENCH_LN_STAGES", "0").split(","))


def bench_layernorm(drv, tc, m, n, dt):
    tdt = {"f32": torch.float32, "f16": torch.float16}[dt]
    x = torch.randn(m, n, device="cuda").to(tdt)
    w = torch.randn(n, device="cuda").to(tdt)
    b = torch.randn(n, device="cuda").to(tdt)
    y = torch.empty_like(x)
    mean = torch.empty(m, device="cuda")
    rstd = torch.empty(m, device="cuda")
    configs = [(blk, nw, st) for blk in LN_BLOCKS for nw in WARPS for st in LN_STAGES]
    kernels = {(blk, nw, st): safe(lambda: Kernel(drv, tc, KDIR + "layernorm.c", "layernorm",
                                                  {"D": dt, "BLOCK_SIZE": blk}, num_warps=nw,
                                                  num_stages=st))
               for blk, nw, st in configs}
    kernels = {c: k for c, k in kernels.items() if k}
    es = x.element_size()

    def name(blk, nw, st):
        return f"{blk} w{nw}" + (f" s{st}" if st else "")

    t, note = best_of("ours", [(name(*c), (lambda k=k: k((m,), x, y, w, b, mean, rstd, n, n, 1e-5)))
                               for c, k in kernels.items()], 2 * m * n * es, "GB/s")
    best = next(c for c in kernels if name(*c) == note)
    kernels[best]((m,), x, y, w, b, mean, rstd, n, n, 1e-5)
    err = rel_err(y, torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5))

    def triton_run(blk, nw, st):
        kw = {"num_stages": st} if st else {}
        return lambda: tr_layernorm[(m,)](x, y, w, b, mean, rstd, n, n, 1e-5, BLOCK=blk,
                                         num_warps=nw, **kw)

    t_tr, note_tr = best_of("triton", [(name(*c), triton_run(*c)) for c in configs],
                            2 * m * n * es, "GB/s")
    t_torch = bench(lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5))
    report(f"layernorm {dt} {m}x{n}", "GB/s", 2 * m * n * es, t, t_tr, t_torch, err,
           f"best BLOCK_SIZE, warps (and stages): ours {note}, triton {note_tr}; bytes: x once, y once")


# Tiles both sides are timed with (BLOCK_M, BLOCK_N, BLOCK_K, num_warps), GROUP_M 8;
# each side reports its best.  teenyc also runs each tile for sm_90 (mma.sync +
# ldmatrix) next to sm_90a (wgmma), so the two lowerings can be compared
# (TEENY_BENCH_MATMUL_TARGETS=sm_90 leaves wgmma out).
MATMUL_TILES = ((128, 256, 64, 8), (128, 128, 64, 8), (256, 128, 64, 8), (128, 128, 32, 4),
                (64, 128, 64, 4))
# TEENY_BENCH_MATMUL_TILES=128x256x64x8,128x128x64x8 times only those tiles
# (both sides), for quick A/B runs of the code generator.
if os.environ.get("TEENY_BENCH_MATMUL_TILES"):
    MATMUL_TILES = tuple(tuple(int(v) for v in t.split("x"))
                         for t in os.environ["TEENY_BENCH_MATMUL_TILES"].split(","))
MATMUL_TARGETS = tuple(os.environ.get("TEENY_BENCH_MATMUL_TARGETS", "sm_90a,sm_90").split(","))
# Triton's pipeline depths tried for each tile (ours uses 4 stages where
# wgmma stays in flight): TEENY_BENCH_TRITON_STAGES=3,4 by default.
TRITON_STAGES = tuple(int(v) for v in os.environ.get("TEENY_BENCH_TRITON_STAGES", "3,4").split(","))


def matmul_edges_ok(k, bm, bn):
    """The tile on sizes that are not multiples of it, B row-major and
    transposed (tests/gpu/check.py's matmul tiles have BLOCK_K 32, which
    stays on mma.sync; the wgmma tiles are checked here), and 333x520x264
    row-major, whose rows are all 16-byte aligned (the fast copy of the
    versioned k loop, masked edges included): max rel. error."""
    worst = 0.0
    for m, n, kk, transposed in ((333, 517, 250, False), (333, 517, 250, True),
                                 (333, 520, 264, False)):
        a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
        b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
        if transposed:
            b = b.t().contiguous().t()
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        k((cdiv(m, bm) * cdiv(n, bn),), a, b, c, m, n, kk, a.stride(0), a.stride(1),
          b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        torch.cuda.synchronize()
        worst = max(worst, rel_err(c, a.double() @ b.double()))
    return worst


def bench_matmul(drv, tc, m, n, kk, epilogue=False):
    """matmul f16 [m, kk] x [kk, n]; epilogue: relu(A B + bias) fused
    (examples/kernels/matmul_bias_relu.c, Triton's the same)."""
    a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
    b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
    bias = torch.randn(n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    ref = (a.float() @ b.float())
    if epilogue:
        ref = torch.relu(ref + bias.float())
    flops = 2 * m * n * kk
    file, name = ("matmul_bias_relu.c", "matmul_bias_relu") if epilogue else ("matmul.c", "matmul")
    extra = (bias,) if epilogue else ()
    best = None
    for target in MATMUL_TARGETS:
        for bm, bn, bk, warps in MATMUL_TILES:
            k = safe(lambda: Kernel(drv, tc, KDIR + file, name,
                                    {"D": "f16", "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                                     "GROUP_M": 8}, num_warps=warps, target=target))
            if not k:
                continue
            grid = (cdiv(m, bm) * cdiv(n, bn),)

            def run():
                k(grid, a, b, *extra, c, m, n, kk, kk, 1, n, 1, n, 1)
            c.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            edges = 0.0 if epilogue else safe(lambda: matmul_edges_ok(k, bm, bn))
            e = max(rel_err(c, ref), float("inf") if edges is None else edges)
            t = safe(lambda: bench(run))
            if t is None:
                continue
            ok = e <= 5e-3
            print(f"  ours {target:6s} {bm}x{bn}x{bk} w{warps}: {flops / t / 1e9:.1f} TFLOP/s "
                  f"err {e:.1e} smem {k.shared}{'' if ok else '  WRONG'}", flush=True)
            if ok and (best is None or t < best[0]):
                best = (t, e, f"ours {target} {bm}x{bn}x{bk} w{warps}")
    best_tr = None
    tr = tr_matmul_bias_relu if epilogue else tr_matmul
    for bm, bn, bk, warps in MATMUL_TILES:
        for stages in TRITON_STAGES:
            grid = (cdiv(m, bm) * cdiv(n, bn),)
            t = safe(lambda: bench(lambda: tr[grid](
                a, b, *extra, c, m, n, kk, kk, 1, n, 1, n, 1, BM=bm, BN=bn, BK=bk, GM=8,
                num_warps=warps, num_stages=stages)))
            if t is None:
                continue
            print(f"  triton {bm}x{bn}x{bk} w{warps} s{stages}: {flops / t / 1e9:.1f} TFLOP/s",
                  flush=True)
            if best_tr is None or t < best_tr[0]:
                best_tr = (t, f"triton {bm}x{bn}x{bk} w{warps} s{stages}")
    if epilogue:
        t_torch = bench(lambda: torch.relu_(torch.addmm(bias, a, b)))
    else:
        t_torch = bench(lambda: torch.matmul(a, b))
    shape = f"{m}^3" if m == n == kk else f"{m}x{n}x{kk}"
    report(f"matmul{' +bias+relu' if epilogue else ''} f16 {shape}", "TFLOP/s", flops,
           best[0] if best else None, best_tr[0] if best_tr else None, t_torch,
           best[1] if best else float("nan"),
           (best[2] if best else "ours failed") + "; " + (best_tr[1] if best_tr else "triton failed"))


def bench_matmul_desc(drv, tc, m, n, kk):
    """matmul f16 written with tensor descriptors (examples/kernels/
    matmul_desc.c) against the pointer version (matmul.c) at the same
    tiles, both ours, same process: issue 14's "at least as fast as the
    pointer version".  Triton's column is its pointer matmul's best."""
    a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
    b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    flops = 2 * m * n * kk
    best = {"desc": None, "ptr": None}
    for bm, bn, bk, warps in MATMUL_TILES[:3]:
        bind = {"D": "f16", "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}
        grid = (cdiv(m, bm) * cdiv(n, bn),)
        for kind, file, name, args in (("desc", "matmul_desc.c", "matmul_desc", (m, n, kk)),
                                       ("ptr", "matmul.c", "matmul", (m, n, kk, kk, 1, n, 1, n, 1))):
            k = safe(lambda: Kernel(drv, tc, KDIR + file, name, bind, num_warps=warps,
                                    target="sm_90a"))
            if not k:
                continue

            def run():
                k(grid, a, b, c, *args)
            c.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            e = rel_err(c, ref)
            t = safe(lambda: bench(run))
            if t is None:
                continue
            print(f"  ours {kind:4s} {bm}x{bn}x{bk} w{warps}: {flops / t / 1e9:.1f} TFLOP/s "
                  f"err {e:.1e} smem {k.shared}{'' if e <= 5e-3 else '  WRONG'}", flush=True)
            if e <= 5e-3 and (best[kind] is None or t < best[kind][0]):
                best[kind] = (t, e, f"{bm}x{bn}x{bk} w{warps}")
    d, p = best["desc"], best["ptr"]
    note = (f"descriptors {d[2] if d else 'failed'}; pointer version "
            f"{flops / p[0] / 1e9:.1f} TFLOP/s at {p[2]}" if p else "pointer version failed")
    if d and p:
        note += f" (descriptors / pointers {100 * p[0] / d[0]:.1f}%)"
    t_torch = bench(lambda: torch.matmul(a, b))
    report(f"matmul descriptors f16 {m}^3" if m == n == kk else f"matmul descriptors f16 {m}x{n}x{kk}",
           "TFLOP/s", flops, d[0] if d else None, None, t_torch, d[1] if d else float("nan"), note)


FP8_TILES = ((128, 256, 128, 8), (128, 128, 128, 8), (128, 128, 128, 4), (256, 128, 128, 8))


def fp8_inputs(m, n, kk):
    """A [m, kk] and Bt [n, kk] in f8e4m3 (B = Bt^T, K-major as fp8 GEMMs
    take it), values of a unit normal scaled into the format's range."""
    a = (torch.randn(m, kk, device="cuda") * 4).to(torch.float8_e4m3fn)
    bt = (torch.randn(n, kk, device="cuda") * 4).to(torch.float8_e4m3fn)
    return a, bt


def matmul_fp8_edges_ok(k, bm, bn):
    """Sizes that are not multiples of the tile (333x517x250: rows not
    16-byte aligned, every copy masked) and 333x520x256 (aligned rows, the
    fast copy): max rel. error against f32 on the same fp8 values."""
    worst = 0.0
    for m, n, kk in ((333, 517, 250), (333, 520, 256)):
        a, bt = fp8_inputs(m, n, kk)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        k((cdiv(m, bm) * cdiv(n, bn),), a, bt, c, m, n, kk, kk, kk, n)
        torch.cuda.synchronize()
        worst = max(worst, rel_err(c, a.float() @ bt.float().t()))
    return worst


def bench_matmul_fp8(drv, tc, m, n, kk):
    """fp8 e4m3 matmul, f32 accumulation, f16 out (examples/kernels/
    matmul_fp8.c; B given K-major), against Triton's tr_matmul on the same
    fp8 tensors (its fp8 wgmma) and torch._scaled_mm (unit scales)."""
    a, bt = fp8_inputs(m, n, kk)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ bt.float().t()
    flops = 2 * m * n * kk
    best = None
    for bm, bn, bk, warps in FP8_TILES:
        k = safe(lambda: Kernel(drv, tc, KDIR + "matmul_fp8.c", "matmul_fp8",
                                {"A": "f8e4m3", "B": "f8e4m3", "O": "f16", "BLOCK_M": bm,
                                 "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                num_warps=warps, target="sm_90a"))
        if not k:
            continue
        grid = (cdiv(m, bm) * cdiv(n, bn),)

        def run():
            k(grid, a, bt, c, m, n, kk, kk, kk, n)
        c.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        edges = safe(lambda: matmul_fp8_edges_ok(k, bm, bn))
        e = max(rel_err(c, ref), float("inf") if edges is None else edges)
        t = safe(lambda: bench(run))
        if t is None:
            continue
        ok = e <= 5e-3
        print(f"  ours {bm}x{bn}x{bk} w{warps}: {flops / t / 1e9:.1f} TFLOP/s err {e:.1e} "
              f"smem {k.shared}{'' if ok else '  WRONG'}", flush=True)
        if ok and (best is None or t < best[0]):
            best = (t, e, f"ours {bm}x{bn}x{bk} w{warps}")
    best_tr = None
    b = bt.t()  # [kk, n], stride (1, kk): K-major
    for bm, bn, bk, warps in FP8_TILES:
        for stages in TRITON_STAGES:
            grid = (cdiv(m, bm) * cdiv(n, bn),)

            def run_tr():
                tr_matmul[grid](a, b, c, m, n, kk, kk, 1, 1, kk, n, 1, BM=bm, BN=bn, BK=bk, GM=8,
                                num_warps=warps, num_stages=stages)
            t = safe(lambda: bench(run_tr))
            if t is None:
                continue
            run_tr()
            e_tr = rel_err(c, ref)
            print(f"  triton {bm}x{bn}x{bk} w{warps} s{stages}: {flops / t / 1e9:.1f} TFLOP/s "
                  f"err {e_tr:.1e}", flush=True)
            if best_tr is None or t < best_tr[0]:
                best_tr = (t, f"triton {bm}x{bn}x{bk} w{warps} s{stages}")
    one = torch.ones((), device="cuda")
    t_torch = safe(lambda: bench(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                           out_dtype=torch.float16)))
    shape = f"{m}^3" if m == n == kk else f"{m}x{n}x{kk}"
    report(f"matmul fp8 e4m3 {shape}", "TFLOP/s", flops, best[0] if best else None,
           best_tr[0] if best_tr else None, t_torch, best[1] if best else float("nan"),
           (best[2] if best else "ours failed") + "; " + (best_tr[1] if best_tr else "triton failed")
           + "; torch is _scaled_mm")


FP8_MMA_TILES = ((128, 128, 64, 4), (128, 128, 128, 8), (64, 128, 64, 4), (128, 256, 64, 8),
                 (64, 64, 64, 4))


def bench_matmul_fp8_mma(drv, tc, m, n, kk):
    """matmul_fp8.c compiled for the targets without fp8 wgmma, run on this
    card: sm_89 and sm_90 (fp8 mma.sync m16n8k32, PTX ISA 8.4) against
    sm_86 (no fp8 instruction: mma.sync m16n8k16 on the f16 casts), each
    at its best tile; TFLOP/s, printed only (no Triton row: Triton
    compiles for the card it runs on)."""
    a, bt = fp8_inputs(m, n, kk)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ bt.float().t()
    flops = 2 * m * n * kk
    for target in ("sm_89", "sm_90", "sm_86"):
        best = None
        for bm, bn, bk, warps in FP8_MMA_TILES:
            k = safe(lambda: Kernel(drv, tc, KDIR + "matmul_fp8.c", "matmul_fp8",
                                    {"A": "f8e4m3", "B": "f8e4m3", "O": "f16", "BLOCK_M": bm,
                                     "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                    num_warps=warps, target=target))
            if not k:
                continue
            grid = (cdiv(m, bm) * cdiv(n, bn),)

            def run():
                k(grid, a, bt, c, m, n, kk, kk, kk, n)
            c.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            e = rel_err(c, ref)
            t = safe(lambda: bench(run))
            if t is None:
                continue
            print(f"  {target} {bm}x{bn}x{bk} w{warps}: {flops / t / 1e9:.1f} TFLOP/s err {e:.1e}"
                  f"{'' if e <= 5e-3 else '  WRONG'}", flush=True)
            if e <= 5e-3 and (best is None or t < best[0]):
                best = (t, f"{bm}x{bn}x{bk} w{warps}")
        if best:
            print(f"matmul fp8 e4m3 {m}x{n}x{kk} on {target} PTX: {flops / best[0] / 1e9:.1f} "
                  f"TFLOP/s ({best[1]})", flush=True)


def bench_transpose(drv, tc, m, n):
    """Y = X^T, f32, 32x32 tiles (the issue's shape) and 64x64, each side's
    best warps; GB/s of X read once and Y written once."""
    x = torch.randn(m, n, device="cuda")
    y = torch.empty(n, m, device="cuda")
    work = 2 * m * n * 4
    ours, theirs = [], []
    for bm, bn in ((32, 32), (64, 64)):
        grid = (cdiv(m, bm) * cdiv(n, bn),)
        for w in (1, 2, 4, 8):
            k = safe(lambda: Kernel(drv, tc, KDIR + "transpose.c", "transpose",
                                    {"D": "f32", "BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w))
            if k:
                ours.append((f"{bm}x{bn} w{w}", (lambda k=k, grid=grid: k(grid, x, y, m, n, n, m))))
            theirs.append((f"{bm}x{bn} w{w}", (lambda grid=grid, bm=bm, bn=bn, w=w: tr_transpose[grid](
                x, y, m, n, n, m, BM=bm, BN=bn, num_warps=w))))
    t, note = best_of("ours", ours, work, "GB/s")
    dict(ours)[note]()
    torch.cuda.synchronize()
    err = 0.0 if torch.equal(y, x.t()) else float("inf")
    t_tr, note_tr = best_of("triton", theirs, work, "GB/s")
    y.fill_(float("nan"))
    dict(theirs)[note_tr]()
    torch.cuda.synchronize()
    if not torch.equal(y, x.t()):
        note_tr += " (WRONG)"
    t_torch = bench(lambda: y.copy_(x.t()))
    report(f"transpose f32 {m}x{n}", "GB/s", work, t, t_tr, t_torch, err,
           f"best: ours {note}, triton {note_tr}")


# Attention tiles both sides are timed with: (BLOCK_M, BLOCK_N, num_warps);
# Triton also tries each with num_stages 2, 3 and 4 (TEENY_BENCH_ATTN_STAGES).
ATTN_TILES = ((128, 64, 8), (128, 128, 8), (128, 64, 4), (128, 128, 4))
ATTN_STAGES = tuple(int(v) for v in os.environ.get("TEENY_BENCH_ATTN_STAGES", "2,3,4").split(","))
# ours: the code generator's depth (0) and 2 stages (TEENY_BENCH_OUR_ATTN_STAGES=0,2,3)
OUR_ATTN_STAGES = tuple(int(v) for v in os.environ.get("TEENY_BENCH_OUR_ATTN_STAGES", "0,2").split(","))


def bench_attention(drv, tc, z, h, n, d, causal):
    """Flash attention forward f16 [z, h, n, d] (examples/kernels/attention.c),
    against the same algorithm in Triton and torch's SDPA (flash/cuDNN)."""
    q, k_, v = (torch.randn(z, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(z * h, n, device="cuda")
    scale = 1.0 / d ** 0.5
    flops = 4 * z * h * n * n * d * (0.5 if causal else 1.0)
    strides = (*q.stride()[:3], *k_.stride()[:3], *v.stride()[:3], *o.stride()[:3])
    ref = torch.nn.functional.scaled_dot_product_attention(q, k_, v, is_causal=bool(causal),
                                                           scale=scale)
    best = None
    for (bm, bn, warps), stages in ((t, s) for t in ATTN_TILES for s in OUR_ATTN_STAGES):
        kern = safe(lambda: Kernel(drv, tc, KDIR + "attention.c", "attention",
                                   {"D": "f16", "HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn,
                                    "CAUSAL": causal}, num_warps=warps, num_stages=stages))
        if not kern:
            continue
        grid = (cdiv(n, bm), z * h)

        def run():
            kern(grid, q, k_, v, o, lse, scale, h, n, *strides)
        o.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        e = rel_err(o, ref)
        t = safe(lambda: bench(run))
        if t is None:
            continue
        ok = e <= 5e-3
        print(f"  ours {bm}x{bn} w{warps} s{stages or 'auto'}: {flops / t / 1e9:.1f} TFLOP/s "
              f"err {e:.1e} smem {kern.shared}{'' if ok else '  WRONG'}", flush=True)
        if ok and (best is None or t < best[0]):
            best = (t, e, f"ours {bm}x{bn} w{warps} s{stages or 'auto'}")
    best_tr = None
    for bm, bn, warps in ATTN_TILES:
        for stages in ATTN_STAGES:
            grid = (cdiv(n, bm), z * h)
            t = safe(lambda: bench(lambda: tr_attention[grid](
                q, k_, v, o, lse, scale, h, n, *strides, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn,
                CAUSAL=causal, num_warps=warps, num_stages=stages)))
            if t is None:
                continue
            o.fill_(float("nan"))
            tr_attention[grid](q, k_, v, o, lse, scale, h, n, *strides, HEAD_DIM=d, BLOCK_M=bm,
                               BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)
            torch.cuda.synchronize()
            e = rel_err(o, ref)
            ok = e <= 5e-3
            print(f"  triton {bm}x{bn} w{warps} s{stages}: {flops / t / 1e9:.1f} TFLOP/s "
                  f"err {e:.1e}{'' if ok else '  WRONG'}", flush=True)
            if ok and (best_tr is None or t < best_tr[0]):
                best_tr = (t, f"triton {bm}x{bn} w{warps} s{stages}")
    t_torch = bench(lambda: torch.nn.functional.scaled_dot_product_attention(
        q, k_, v, is_causal=bool(causal), scale=scale))
    report(f"attention fwd f16 {z}x{h}x{n}x{d}{' causal' if causal else ''}", "TFLOP/s", flops,
           best[0] if best else None, best_tr[0] if best_tr else None, t_torch,
           best[1] if best else float("nan"),
           (best[2] if best else "ours failed") + "; " + (best_tr[1] if best_tr else "triton failed")
           + "; torch = SDPA")


def bench_chain_dot(drv, tc, z, h, n, d):
    """Two chained dots, O = (Q K^T) V without the softmax, f16 [z, h, n, d]."""
    q, k_, v = (torch.randn(z, h, n, d, device="cuda", dtype=torch.float16) * 0.1 for _ in range(3))
    o = torch.empty_like(q)
    flops = 4 * z * h * n * n * d
    ref = ((q.float() @ k_.float().transpose(-1, -2)).half().float() @ v.float())
    best = None
    for bm, bn, warps in ATTN_TILES:
        kern = safe(lambda: Kernel(drv, tc, "tests/gpu/kernels/chain_dot.c", "chain_dot",
                                   {"D": "f16", "HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn},
                                   num_warps=warps))
        if not kern:
            continue
        grid = (cdiv(n, bm), z * h)

        def run():
            kern(grid, q, k_, v, o, n, n * d, d)
        o.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        e = rel_err(o, ref)
        t = safe(lambda: bench(run))
        if t is None:
            continue
        ok = e <= 5e-3
        print(f"  ours {bm}x{bn} w{warps}: {flops / t / 1e9:.1f} TFLOP/s err {e:.1e} "
              f"smem {kern.shared}{'' if ok else '  WRONG'}", flush=True)
        if ok and (best is None or t < best[0]):
            best = (t, e, f"ours {bm}x{bn} w{warps}")
    best_tr = None
    for bm, bn, warps in ATTN_TILES:
        for stages in ATTN_STAGES:
            grid = (cdiv(n, bm), z * h)
            t = safe(lambda: bench(lambda: tr_chain_dot[grid](
                q, k_, v, o, n, n * d, d, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn,
                num_warps=warps, num_stages=stages)))
            if t is None:
                continue
            o.fill_(float("nan"))
            tr_chain_dot[grid](q, k_, v, o, n, n * d, d, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn,
                               num_warps=warps, num_stages=stages)
            torch.cuda.synchronize()
            e = rel_err(o, ref)
            print(f"  triton {bm}x{bn} w{warps} s{stages}: {flops / t / 1e9:.1f} TFLOP/s "
                  f"err {e:.1e}{'' if e <= 5e-3 else '  WRONG'}", flush=True)
            if e <= 5e-3 and (best_tr is None or t < best_tr[0]):
                best_tr = (t, f"triton {bm}x{bn} w{warps} s{stages}")
    report(f"two chained dots f16 {z}x{h}x{n}x{d}", "TFLOP/s", flops,
           best[0] if best else None, best_tr[0] if best_tr else None, None,
           best[1] if best else float("nan"),
           (best[2] if best else "ours failed") + "; " + (best_tr[1] if best_tr else "triton failed"))


def gpu_facts():
    q = "name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw"
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except Exception as e:
        return f"nvidia-smi: {e}"


def main():
    quick = "--quick" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    tc = teenyc_path()
    drv = Driver()
    torch.manual_seed(0)
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    facts = gpu_facts()
    print(f"{when}; {facts}; torch {torch.__version__}; triton {triton.__version__}")
    plan = [("copy", lambda: bench_copy()),
            ("vector_add", lambda: bench_vector_add(drv, tc)),
            ("softmax", lambda: bench_softmax(drv, tc, 4096, 4096)),
            ("softmax", lambda: bench_softmax(drv, tc, 32768, 1024)),
            ("softmax", lambda: bench_softmax(drv, tc, 8192, 16384)),
            ("layernorm", lambda: bench_layernorm(drv, tc, 4096, 8192, "f32")),
            ("layernorm", lambda: bench_layernorm(drv, tc, 4096, 8192, "f16")),
            ("matmul", lambda: bench_matmul(drv, tc, 4096, 4096, 4096)),
            ("matmul", lambda: bench_matmul(drv, tc, 4000, 4000, 4000)),
            ("matmul", lambda: bench_matmul(drv, tc, 4000, 4000, 4096)),
            ("epilogue", lambda: bench_matmul(drv, tc, 4000, 4000, 4000, epilogue=True)),
            ("descriptors", lambda: bench_matmul_desc(drv, tc, 4096, 4096, 4096)),
            ("descriptors", lambda: bench_matmul_desc(drv, tc, 4000, 4000, 4000)),
            ("fp8", lambda: bench_matmul_fp8(drv, tc, 4096, 4096, 4096)),
            ("fp8", lambda: bench_matmul_fp8(drv, tc, 8192, 8192, 8192)),
            ("fp8_mma", lambda: bench_matmul_fp8_mma(drv, tc, 4096, 4096, 4096)),
            ("transpose", lambda: bench_transpose(drv, tc, 7777, 5003)),
            ("copy_tma", lambda: bench_copy_tma(drv, tc)),
            ("chain_dot", lambda: bench_chain_dot(drv, tc, 4, 32, 4096, 64))]
    for d in (64, 128):
        for causal in (0, 1):
            plan.append(("attention", lambda d=d, causal=causal:
                         bench_attention(drv, tc, 4, 32, 4096, d, causal)))
    if not quick:
        plan.append(("matmul", lambda: bench_matmul(drv, tc, 8000, 8000, 8000)))
        plan.append(("matmul", lambda: bench_matmul(drv, tc, 8192, 8192, 8192)))
    for name, fn in plan:
        if only and name != only:
            continue
        safe(fn)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "gpu-bench.json"), "w") as f:
        json.dump({"when": when, "gpu": facts, "torch": torch.__version__,
                   "triton": triton.__version__, "rows": rows}, f, indent=1)
    with open(os.path.join(out, "gpu-bench.md"), "w") as f:
        f.write(f"Run {when} on {facts}; torch {torch.__version__}, triton {triton.__version__}.\n\n")
        f.write("| problem | unit | teenyc | Triton | torch | teenyc / Triton | rel. error | note |\n")
        f.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
        for r in rows:
            def v(x):
                return f"{x:.1f}" if x else "--"
            vs = f"{100 * r['vs_triton']:.1f}%" if r["vs_triton"] else "--"
            f.write(f"| {r['problem']} | {r['unit']} | {v(r['ours'])} | {v(r['triton'])} | "
                    f"{v(r['torch'])} | {vs} | {r['rel_err']:.1e} | {r['note']} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
