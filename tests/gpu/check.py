"""tests/gpu/check.py — every example kernel on the GPU against torch.

For each kernel, several bindings and sizes that are not multiples of the
block: compile with teenyc, load with the CUDA Driver API, launch on fresh
random inputs with a poisoned output, compare with a float64 torch
reference.  Tolerances (METHOD.md): f32 1e-5 (exact for element-wise), tf32
matmul 2e-3, f16 5e-3, bf16 2e-2 (output rounding dominates).  Prints one
line per case and exits 1 if any failed.

    python3 tests/gpu/check.py [--quick] [--only NAME]   (NAME: attention = check_attention)
"""
import ctypes
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from teeny_gpu import Driver, Kernel, TensorDesc, poison, rel_err, teenyc_path  # noqa: E402

K = "examples/kernels/"
DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32}
TOL = {"f32": 1e-5, "f16": 5e-3, "bf16": 2e-2}
results = []


def cdiv(a, b):
    return (a + b - 1) // b


def next_pow2(n):
    return 1 << max(0, (n - 1).bit_length())


def record(name, err, tol, extra=""):
    ok = err <= tol
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {name:58s} err {err:.2e} (tol {tol:.0e}) {extra}",
          flush=True)


def check_vector_add(drv, tc, quick):
    for dt in ("f32", "f16", "bf16"):
        for block in (1024, 256):
            k = Kernel(drv, tc, K + "vector_add.c", "vector_add", {"D": dt, "BLOCK_SIZE": block})
            for n in (1, 127, 1000003) + (() if quick else ((1 << 22) + 5,)):
                a = torch.randn(n, device="cuda").to(DT[dt])
                b = torch.randn(n, device="cuda").to(DT[dt])
                out = poison(torch.empty(n, device="cuda", dtype=DT[dt]))
                k((cdiv(n, block),), a, b, out, n)
                torch.cuda.synchronize()
                exact = torch.equal(out, a + b)
                record(f"{k.id} n={n}", 0.0 if exact else rel_err(out, a + b), 0.0)


def check_copy_tma(drv, tc, quick):
    """copy_tma: tensor_desc parameters, the TMA where the rows allow it
    (16-byte aligned), plain loads where not; blocks over every edge; a
    strided view (stride above the row length)."""
    for dt, tdt in (("f32", torch.float32), ("f16", torch.float16), ("i8", torch.int8)):
        for bm, bn in ((64, 64), (16, 256)):
            k = Kernel(drv, tc, K + "copy_tma.c", "copy_tma", {"D": dt, "BLOCK_M": bm,
                                                              "BLOCK_N": bn})
            for m, n, pad in ((1000, 1024, 0), (77, 528, 0), (130, 1001, 0), (300, 512, 16)):
                big = torch.randn(m, n + pad, device="cuda")
                big = (big * 50).to(tdt) if dt == "i8" else big.to(tdt)
                x = big[:, :n]
                y = torch.empty(m, n + pad, device="cuda", dtype=tdt)
                poison(y)
                y = y[:, :n]
                sd, dd = TensorDesc(drv, x, (bm, bn)), TensorDesc(drv, y, (bm, bn))
                k((cdiv(n, bn), cdiv(m, bm)), sd, dd)
                torch.cuda.synchronize()
                exact = torch.equal(x, y)
                record(f"{k.id} {m}x{n} stride {n + pad} {'tma' if sd.tma else 'loads'}",
                       0.0 if exact else 1.0, 0.0)


def check_softmax(drv, tc, quick):
    shapes = [(7, 1), (300, 1000), (64, 4097)] + ([] if quick else [(1000, 2048)])
    for dt in ("f32", "f16", "bf16"):
        for rows, cols in shapes:
            block = next_pow2(cols)
            warps = 4 if block <= 2048 else 8
            k = Kernel(drv, tc, K + "softmax.c", "softmax", {"D": dt, "BLOCK_SIZE": block},
                       num_warps=warps)
            x = (torch.randn(rows, cols + 3, device="cuda") * 3).to(DT[dt])[:, :cols]
            out = poison(torch.empty(rows, cols + 1, device="cuda", dtype=DT[dt]))[:, :cols]
            k((rows,), out, x, x.stride(0), out.stride(0), cols)
            torch.cuda.synchronize()
            ref = torch.softmax(x.double(), dim=1)
            record(f"{k.id} {rows}x{cols}", rel_err(out, ref), TOL[dt])


def check_layernorm(drv, tc, quick):
    shapes = [(5, 1), (100, 3000), (32, 8192)]
    for dt in ("f32", "f16", "bf16"):
        for rows, cols in shapes:
            k = Kernel(drv, tc, K + "layernorm.c", "layernorm", {"D": dt, "BLOCK_SIZE": 1024},
                       num_warps=8)
            x = (torch.randn(rows, cols, device="cuda") * 2 + 1).to(DT[dt])
            w = torch.randn(cols, device="cuda").to(DT[dt])
            b = torch.randn(cols, device="cuda").to(DT[dt])
            y = poison(torch.empty_like(x))
            mean = poison(torch.empty(rows, device="cuda"))
            rstd = poison(torch.empty(rows, device="cuda"))
            k((rows,), x, y, w, b, mean, rstd, cols, cols, 1e-5)
            torch.cuda.synchronize()
            ref = torch.nn.functional.layer_norm(x.double(), (cols,), w.double(), b.double(), 1e-5)
            err = max(rel_err(y, ref), rel_err(mean, x.double().mean(1)))
            record(f"{k.id} {rows}x{cols}", err, TOL[dt])


def check_matmul(drv, tc, quick):
    sizes = [(1, 1, 1), (127, 255, 129), (512, 512, 512), (1000, 300, 70)]
    # BLOCK_K 64 with 8 warps takes the wgmma path on sm_90a; 32 stays on mma.sync
    configs = [(64, 64, 32, 8, 4), (128, 128, 32, 8, 8), (128, 128, 64, 8, 8),
               (128, 256, 64, 8, 8)]
    for dt in ("f16", "bf16", "f32"):
        for bm, bn, bk, gm, warps in configs:
            k = Kernel(drv, tc, K + "matmul.c", "matmul",
                       {"D": dt, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": gm},
                       num_warps=warps)
            # B transposed (not contiguous along N: the general copy of the
            # versioned k loop), then row-major B with every row 16-byte
            # aligned (the fast copy; masked M, N and K edges at 333x520x264)
            for m, n, kk, bt in [s + (True,) for s in sizes] + [(512, 512, 512, False),
                                                                (333, 520, 264, False)]:
                a = torch.randn(m, kk, device="cuda").to(DT[dt])
                b = torch.randn(kk, n, device="cuda").to(DT[dt])
                if bt:
                    b = b.t().contiguous().t()
                c = poison(torch.empty(m, n, device="cuda", dtype=DT[dt]))
                k((cdiv(m, bm) * cdiv(n, bn),), a, b, c, m, n, kk, a.stride(0), a.stride(1),
                  b.stride(0), b.stride(1), c.stride(0), c.stride(1))
                torch.cuda.synchronize()
                ref = a.double() @ b.double()
                tol = {"f16": 5e-3, "bf16": 2e-2, "f32": 2e-3}[dt]
                record(f"{k.id} {m}x{n}x{kk}{' bT' if bt else ''}", rel_err(c, ref), tol)


def check_absmax(drv, tc, quick):
    for dt in ("f32", "f16"):
        k = Kernel(drv, tc, K + "absmax.c", "absmax", {"D": dt, "BLOCK_SIZE": 1024})
        for n in (1, 1000, 1000003):
            x = (torch.randn(n, device="cuda") * 100).to(DT[dt])
            progs = cdiv(n, 1024)
            out = poison(torch.empty(progs, device="cuda"))
            k((progs,), x, out, n)
            torch.cuda.synchronize()
            pad = torch.zeros(progs * 1024, device="cuda")
            pad[:n] = x.float().abs()
            ref = pad.view(progs, 1024).max(1).values
            record(f"{k.id} n={n}", 0.0 if torch.equal(out, ref) else rel_err(out, ref), 0.0)


def check_libdevice_asin(drv, tc, quick):
    """Tutorial 07 (examples/kernels/libdevice_asin.c) against torch.asin in
    float64, odd sizes; atan2 beside it against torch.atan2."""
    for dt in ("f32", "f16", "f64"):
        k = Kernel(drv, tc, K + "libdevice_asin.c", "asin_kernel", {"D": dt, "BLOCK_SIZE": 1024})
        tdt = torch.float64 if dt == "f64" else DT[dt]
        for n in (1, 1000, 1000003):
            x = (torch.rand(n, device="cuda", dtype=torch.float64) * 2 - 1).to(tdt)
            y = poison(torch.empty(n, device="cuda", dtype=tdt))
            k((cdiv(n, 1024),), x, y, n)
            torch.cuda.synchronize()
            ref = torch.asin(x.double())
            tol = {"f32": 1e-7, "f16": 1e-3, "f64": 1e-15}[dt]
            record(f"{k.id} n={n}", rel_err(y, ref), tol)


def check_cumsum(drv, tc, quick):
    for dt in ("f32", "i32"):
        for cols in (1, 100, 1000):
            block = next_pow2(cols)
            k = Kernel(drv, tc, K + "cumsum.c", "cumsum_rows", {"D": dt, "BLOCK_SIZE": block})
            rows = 7
            if dt == "i32":
                x = torch.randint(-1000, 1000, (rows, cols + 5), device="cuda", dtype=torch.int32)
            else:
                x = torch.randn(rows, cols + 5, device="cuda")
            out = poison(torch.empty_like(x))
            k((rows,), x, out, cols, x.stride(0))
            torch.cuda.synchronize()
            ref = torch.cumsum(x[:, :cols].double(), 1)
            if dt == "i32":
                err = 0.0 if torch.equal(out[:, :cols].long(), ref.long()) else 1.0
                record(f"{k.id} {rows}x{cols}", err, 0.0)
            else:
                record(f"{k.id} {rows}x{cols}", rel_err(out[:, :cols], ref), 1e-5)


def check_histogram(drv, tc, quick):
    k = Kernel(drv, tc, K + "histogram.c", "histogram", {"BLOCK_SIZE": 1024, "NUM_BINS": 256})
    for n in (1, 1000, 10000003):
        data = torch.randint(-5, 262, (n,), device="cuda", dtype=torch.int32)
        counts = torch.zeros(256, device="cuda", dtype=torch.int32)
        k((cdiv(n, 1024),), data, counts, n)
        torch.cuda.synchronize()
        valid = data[(data >= 0) & (data < 256)].long()
        ref = torch.bincount(valid, minlength=256).int()
        record(f"{k.id} n={n}", 0.0 if torch.equal(counts, ref) else 1.0, 0.0)


def check_layernorm_bwd(drv, tc, quick):
    """Triton's tutorial 05 backward (dx, and dw/db through the lock), odd sizes."""
    lb = K + "layernorm_bwd.c"
    for dt in ("f32", "f16"):
        for rows, cols in [(7, 1), (1151, 1000), (300, 4095)]:
            block = next_pow2(cols)
            group = 64 if cols <= 8192 else 32
            dxk = Kernel(drv, tc, lb, "layernorm_bwd_dx",
                         {"D": dt, "GROUP_SIZE_M": group, "BLOCK_SIZE_N": block},
                         num_warps=min(max(block // 256, 1), 8))
            dwk = Kernel(drv, tc, lb, "layernorm_bwd_dwdb",
                         {"D": dt, "BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128})
            x = (torch.randn(rows, cols, device="cuda") * 2 + 0.5).to(DT[dt])
            w = torch.randn(cols, device="cuda").to(DT[dt])
            b = torch.randn(cols, device="cuda").to(DT[dt])
            dy = torch.randn(rows, cols, device="cuda").to(DT[dt])
            xd = x.double().requires_grad_(True)
            wd = w.double().requires_grad_(True)
            bd = b.double().requires_grad_(True)
            y = torch.nn.functional.layer_norm(xd, (cols,), wd, bd, 1e-5)
            y.backward(dy.double())
            mean = x.float().mean(1)
            rstd = 1.0 / torch.sqrt(x.float().var(1, unbiased=False) + 1e-5)
            dx = poison(torch.empty_like(x))
            dw_part = torch.zeros(group, cols, device="cuda")
            db_part = torch.zeros(group, cols, device="cuda")
            locks = torch.zeros(2 * group, device="cuda", dtype=torch.int32)
            dxk((rows,), dx, dy, dw_part, db_part, x, w, mean, rstd, locks, cols, cols)
            dw = poison(torch.empty(cols, device="cuda", dtype=DT[dt]))
            db = poison(torch.empty(cols, device="cuda", dtype=DT[dt]))
            dwk((cdiv(cols, 128),), dw_part, db_part, dw, db, group, cols)
            torch.cuda.synchronize()
            err = max(rel_err(dx, xd.grad), rel_err(dw, wd.grad), rel_err(db, bd.grad))
            record(f"{dxk.id}+dwdb {rows}x{cols}", err, TOL[dt] * 2)


def check_cross_entropy(drv, tc, quick):
    """Loss and in-place gradient (with the fix-up at the target) against torch."""
    for dt in ("f32", "bf16"):
        for rows, cols in [(3, 7), (129, 32000), (64, 50257)]:
            k = Kernel(drv, tc, K + "cross_entropy.c", "cross_entropy",
                       {"D": dt, "BLOCK_SIZE": 4096}, num_warps=8)
            x = (torch.randn(rows, cols, device="cuda") * 2).to(DT[dt])
            y = torch.randint(0, cols, (rows,), device="cuda", dtype=torch.int32)
            xd = x.double().requires_grad_(True)
            ref = torch.nn.functional.cross_entropy(xd, y.long(), reduction="none") / rows
            ref.sum().backward()
            g = x.clone()
            loss = poison(torch.empty(rows, device="cuda"))
            k((rows,), g, y, loss, cols, cols, rows)
            torch.cuda.synchronize()
            err = max(rel_err(loss, ref.detach()), rel_err(g, xd.grad))
            record(f"{k.id} {rows}x{cols}", err, TOL[dt] * 2)


def check_memory_model(drv, tc, quick):
    """tests/repro/: the reproducers of issue 11 on the GPU, many times over."""
    R = "tests/repro/"
    k = Kernel(drv, tc, R + "scalar_load_uniform.c", "k", {"B": 128})
    bad = 0
    for _ in range(200):
        flag = torch.zeros(1, device="cuda", dtype=torch.int32)
        out = torch.full((128,), -1, device="cuda", dtype=torch.int32)
        k((1,), flag, out)
        torch.cuda.synchronize()
        bad += int((out != 0).sum()) + int(flag.item() != 1)
    record(f"{k.id} x200 (scalar load uniform)", float(bad), 0.0)
    k = Kernel(drv, tc, R + "branch_on_load.c", "k", {"B": 128})
    bad = 0
    for _ in range(200):
        flag = torch.zeros(1, device="cuda", dtype=torch.int32)
        out = torch.full((128,), -1, device="cuda", dtype=torch.int32)
        k((1,), flag, out)
        torch.cuda.synchronize()
        bad += int((out != 0).sum()) + int(flag.item() != 1)
    record(f"{k.id} x200 (branch on a scalar load)", float(bad), 0.0)
    k = Kernel(drv, tc, R + "store_then_load.c", "k", {"B": 128})
    bad = 0
    for j in range(128):
        x = torch.arange(128, device="cuda", dtype=torch.float32)
        k((1,), x, j)
        torch.cuda.synchronize()
        want = torch.arange(128, device="cuda", dtype=torch.float32) + 1
        want[j] = (j + 1) * 10.0
        bad += int((x != want).sum())
    record(f"{k.id} every j (tile store, then scalar load)", float(bad), 0.0)
    k = Kernel(drv, tc, R + "lock_accumulate.c", "k", {"B": 128})
    bad = 0
    for grid in (1, 6, 1000):
        lock = torch.zeros(1, device="cuda", dtype=torch.int32)
        count = torch.zeros(1, device="cuda", dtype=torch.int32)
        dw = torch.zeros(128, device="cuda")
        k((grid,), lock, count, dw, 100)
        torch.cuda.synchronize()
        want = grid * torch.arange(100, device="cuda", dtype=torch.float32) + grid * (grid - 1) / 2
        bad += int((dw[:100] != want).sum()) + int(lock.item() != 0)
    record(f"{k.id} grids 1, 6, 1000 (lock)", float(bad), 0.0)
    k = Kernel(drv, tc, R + "gelu_tanh.c", "gelu", {"BLOCK": 1024})
    x = torch.randn(1 << 22, device="cuda")
    y = poison(torch.empty_like(x))
    k((cdiv(x.numel(), 1024),), x, y, x.numel())
    torch.cuda.synchronize()
    v = x.double() * 3
    ref = 0.5 * v * (1 + torch.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
    bad = int(((y.double() - ref).abs() > 1e-6 + 1e-5 * ref.abs()).sum())
    record(f"{k.id} gelu: elements outside 1e-6 + 1e-5 |ref|", float(bad), 0.0)


def check_random(drv, tc, quick):
    """rand/randint bit for bit with Triton's tl.rand/tl.randint; randn close;
    the tutorial 04 dropout against a torch reference of the same mask."""
    import triton
    import triton.language as tl

    @triton.jit
    def triton_rng(ri, r, rn, seed, base, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        o = base + i
        tl.store(ri + i, tl.randint(seed, o), mask=m)
        tl.store(r + i, tl.rand(seed, o), mask=m)
        tl.store(rn + i, tl.randn(seed, o), mask=m)

    k = Kernel(drv, tc, "tests/gpu/kernels/random.c", "rng", {"BLOCK": 1024})
    n = 1 << 20
    for seed, base in [(0, 0), (123, -5000), (2**31 - 1, 2**30)]:
        mine = [torch.empty(n, device="cuda", dtype=t) for t in (torch.int32, torch.float32,
                                                                  torch.float32)]
        theirs = [torch.empty_like(t) for t in mine]
        k((cdiv(n, 1024),), mine[0], mine[1], mine[2], seed, base, n)
        triton_rng[(cdiv(n, 1024),)](theirs[0], theirs[1], theirs[2], seed, base, n, BLOCK=1024)
        torch.cuda.synchronize()
        same_int = torch.equal(mine[0], theirs[0])
        same_rand = torch.equal(mine[1].view(torch.int32), theirs[1].view(torch.int32))
        record(f"randint/rand seed={seed} base={base} bit for bit with Triton",
               0.0 if same_int and same_rand else 1.0, 0.0)
        record(f"randn seed={seed} base={base} against Triton", rel_err(mine[2], theirs[2]), 1e-5)
    d = Kernel(drv, tc, K + "dropout.c", "seeded_dropout", {"D": "f32", "BLOCK_SIZE": 1024})
    x = torch.randn(1000003, device="cuda")
    out = poison(torch.empty_like(x))
    d((cdiv(x.numel(), 1024),), x, out, x.numel(), 0.3, 42)
    r = torch.empty(x.numel(), device="cuda")
    scratch = [torch.empty(x.numel(), device="cuda", dtype=torch.int32), r,
               torch.empty(x.numel(), device="cuda")]
    triton_rng[(cdiv(x.numel(), 1024),)](scratch[0], r, scratch[2], 42, 0, x.numel(), BLOCK=1024)
    torch.cuda.synchronize()
    ref = torch.where(r > 0.3, x / (1 - 0.3), torch.zeros_like(x))
    record(f"{d.id} (tutorial 04) against tl.rand's mask", rel_err(out, ref), 1e-6)


def check_pointer_table(drv, tc, quick):
    """A table of device addresses (torch data_ptr) loaded and used as pointers."""
    k = Kernel(drv, tc, "tests/gpu/kernels/gather_table.c", "gather", {"BLOCK": 1024})
    n = 3001
    srcs = [torch.randn(n, device="cuda") for _ in range(5)]
    table = torch.tensor([t.data_ptr() for t in srcs], device="cuda", dtype=torch.int64)
    out = poison(torch.empty(5 * n, device="cuda"))
    k((5,), table, out, n)
    torch.cuda.synchronize()
    ref = torch.cat([t * 2 for t in srcs])
    record(f"{k.id} 5 buffers through a pointer table", 0.0 if torch.equal(out, ref) else 1.0, 0.0)


def check_dot_precision(drv, tc, quick):
    """f32 dot at tf32 / tf32x3 / ieee against float64, error over sum |a b|."""
    M = N = 64
    Kd = 128
    a = torch.randn(M, Kd, device="cuda")
    b = torch.randn(Kd, N, device="cuda")
    ref = a.double() @ b.double()
    norm = a.double().abs() @ b.double().abs()
    bounds = {"dot_tf32": 2e-3, "dot_tf32x3": 4e-6, "dot_ieee": 4e-6}
    for name, bound in bounds.items():
        for target in ("sm_90a", "sm_80"):
            k = Kernel(drv, tc, "tests/gpu/kernels/dot_prec.c", name, {"M": M, "N": N, "K": Kd},
                       target=target)
            c = poison(torch.empty(M, N, device="cuda"))
            k((1,), a, b, c)
            torch.cuda.synchronize()
            err = float(((c.double() - ref).abs() / norm).max())
            record(f"{k.id} {target} error / sum|ab|", err, bound)


def check_fp8(drv, tc, quick):
    """f8e4m3/f8e5m2: all 256 codes up to f32 bit for bit with torch; f32 down
    (directly and through f16) bit for bit with Triton's .to(tl.float8e4nv /
    tl.float8e5) (saturating), and with torch where torch does not overflow;
    the quantize/dequantize example; an fp8 dot against f32 on the upcast
    values."""
    import triton
    import triton.language as tl

    @triton.jit
    def triton_down(x, out, n, E5: tl.constexpr, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        v = tl.load(x + i, mask=m)
        if E5:
            tl.store(out + i, v.to(tl.float8e5), mask=m)
        else:
            tl.store(out + i, v.to(tl.float8e4nv), mask=m)

    formats = {"f8e4m3": (torch.float8_e4m3fn, 448.0), "f8e5m2": (torch.float8_e5m2, 57344.0)}
    for name, (tdt, fmax) in formats.items():
        up = Kernel(drv, tc, "tests/gpu/kernels/fp8_conv.c", "up", {"F": name, "BLOCK": 256})
        codes = torch.arange(256, device="cuda", dtype=torch.int32).to(torch.uint8)
        out = poison(torch.empty(256, device="cuda"))
        up((1,), codes, out, 256)
        ref = codes.view(tdt).float()
        torch.cuda.synchronize()
        same = torch.equal(torch.isnan(out), torch.isnan(ref)) and torch.equal(
            torch.nan_to_num(out), torch.nan_to_num(ref))
        record(f"{up.id} all 256 codes up to f32 against torch", 0.0 if same else 1.0, 0.0)
        down = Kernel(drv, tc, "tests/gpu/kernels/fp8_conv.c", "down", {"F": name, "BLOCK": 1024})
        n = 1 << 20
        bits = torch.randint(-2**31, 2**31 - 1, (n,), device="cuda", dtype=torch.int32)
        x = bits.view(torch.float32).clone()
        vals = codes.view(tdt).float()
        vals = vals[torch.isfinite(vals)].sort().values
        mids = (vals[1:] + vals[:-1]) / 2  # ties, and a hair either side
        near = torch.cat([mids, torch.nextafter(mids, torch.zeros_like(mids)),
                          torch.nextafter(mids, torch.full_like(mids, float("inf"))), vals,
                          torch.tensor([float("inf"), -float("inf"), float("nan"), fmax * 1.03,
                                        fmax * 1.2, 1e-45, -0.0], device="cuda")])
        x[:near.numel()] = near
        x[near.numel():near.numel() + 65536] = torch.randn(65536, device="cuda") * fmax / 4
        mine = torch.empty(n, device="cuda", dtype=torch.uint8)
        mine16 = torch.empty_like(mine)
        down((cdiv(n, 1024),), x, mine, mine16, n)
        theirs = torch.empty_like(mine)
        triton_down[(cdiv(n, 1024),)](x, theirs.view(tdt), n, E5=name == "f8e5m2", BLOCK=1024)
        torch.cuda.synchronize()
        nan_mine = torch.isnan(mine.view(tdt).float())
        nan_theirs = torch.isnan(theirs.view(tdt).float())
        diff = (mine != theirs) & ~(nan_mine & nan_theirs)
        record(f"{down.id} f32 -> {name} bit for bit with Triton ({int(diff.sum())} of {n} differ)",
               float(diff.sum()), 0.0)
        x16 = x.half().float()  # what the f16 path rounds first
        theirs16 = torch.empty_like(mine)
        triton_down[(cdiv(n, 1024),)](x16, theirs16.view(tdt), n, E5=name == "f8e5m2",
                                      BLOCK=1024)
        torch.cuda.synchronize()
        nan16 = torch.isnan(mine16.view(tdt).float()) & torch.isnan(theirs16.view(tdt).float())
        diff16 = (mine16 != theirs16) & ~nan16
        record(f"{down.id} f32 -> f16 -> {name} with Triton ({int(diff16.sum())} differ)",
               float(diff16.sum()), 0.0)
        inr = torch.isfinite(x) & (x.abs() <= fmax)
        tref = x.to(tdt).view(torch.uint8)
        dt_ = (mine != tref) & inr
        record(f"{down.id} f32 -> {name} with torch in range ({int(inr.sum())} values)",
               float(dt_.sum()), 0.0)
        q = Kernel(drv, tc, K + "fp8_quant.c", "quantize_rows",
                   {"D": "f16", "Q": name, "BLOCK_SIZE": 1024})
        dq = Kernel(drv, tc, K + "fp8_quant.c", "dequantize_rows",
                    {"D": "f16", "Q": name, "BLOCK_SIZE": 1024})
        rows, cols = 333, 1000
        xs = (torch.randn(rows, cols, device="cuda") * 3).half()
        qs = torch.empty(rows, cols, device="cuda", dtype=torch.uint8)
        sc = poison(torch.empty(rows, device="cuda"))
        ys = poison(torch.empty(rows, cols, device="cuda", dtype=torch.float16))
        q((rows,), xs, qs, sc, cols, cols, fmax)
        dq((rows,), qs, sc, ys, cols, cols)
        torch.cuda.synchronize()
        amax = xs.float().abs().amax(dim=1, keepdim=True)
        # torch.full_like(..) / amax: one correctly rounded division, as the
        # kernel's q_max / amax (a float / tensor is reciprocal() * float in
        # torch: two roundings, a different scale in about half the rows)
        qref = (xs.float() * (torch.full_like(amax, fmax) / amax)).to(tdt)
        nq = int((qs != qref.view(torch.uint8)).sum())
        record(f"{q.id} {rows}x{cols} codes against torch ({nq} differ)", float(nq), 0.0)
        yref = qref.float() * (amax / fmax)
        record(f"{dq.id} round trip against torch", rel_err(ys, yref.half()), 2e-3)
        for t, target in ((32, "sm_90a"), (64, "sm_90a"), (32, "sm_89"), (64, "sm_90")):
            dk = Kernel(drv, tc, "tests/gpu/kernels/fp8_conv.c", "dot8", {"F": name, "BLOCK": t},
                        target=target)
            a = torch.randn(t, t, device="cuda").to(tdt)
            b = torch.randn(t, t, device="cuda").to(tdt)
            c = poison(torch.empty(t, t, device="cuda"))
            dk((1,), a.view(torch.uint8), b.view(torch.uint8), c)
            torch.cuda.synchronize()
            # sm_89/sm_90: fp8 mma.sync, whose in-instruction sums may be
            # narrower than f32 (as fp8 wgmma's are)
            record(f"{dk.id} {target} fp8 dot against f32", rel_err(c, a.float() @ b.float()),
                   1e-6 if target == "sm_90a" else 1e-3)
    # examples/kernels/matmul_fp8.c: fp8 wgmma (k32) on sm_90a at 4 and 8
    # warps, every pairing of the formats, odd sizes (masked copies) and
    # aligned ones (the fast copy), f16 and f32 out, against f32 on the
    # same fp8 values.  The tensor cores' fp8 accumulation inside an
    # instruction is narrower than f32 (as for Triton's fp8 dots, whose
    # error bench/gpu.py prints beside ours: the same): f32 out measured
    # 1.7e-4 to 3.4e-4 on the H200 (2026-12-02), hence 1e-3, where an f16
    # dot's f32 accumulation stays under 1e-6.
    # The same on sm_89 and plain sm_90 (their PTX runs on the H200): fp8
    # mma.sync m16n8k32, B K-major read by ldmatrix.
    tiles = [("sm_90a", 128, 128, 128, 4)]
    if not quick:
        tiles.append(("sm_90a", 128, 256, 128, 8))
    tiles += [("sm_89", 128, 128, 64, 4), ("sm_90", 64, 64, 32, 4)]
    if not quick:
        tiles += [("sm_89", 64, 128, 128, 8), ("sm_89", 32, 32, 32, 1)]
    for (fa, ta), (fb, tb) in ((("f8e4m3", torch.float8_e4m3fn),) * 2,
                               (("f8e5m2", torch.float8_e5m2), ("f8e4m3", torch.float8_e4m3fn))):
        for target, bm, bn, bk, w in tiles:
            for od, otd in (("f16", torch.float16), ("f32", torch.float32)):
                mk = Kernel(drv, tc, K + "matmul_fp8.c", "matmul_fp8",
                            {"A": fa, "B": fb, "O": od, "BLOCK_M": bm, "BLOCK_N": bn,
                             "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, target=target)
                for m, n, kk in ((333, 517, 250), (256, 384, 512)):
                    a = (torch.randn(m, kk, device="cuda") * 3).to(ta)
                    bt = (torch.randn(n, kk, device="cuda") * 3).to(tb)
                    c = poison(torch.empty(m, n, device="cuda", dtype=otd))
                    mk((cdiv(m, bm) * cdiv(n, bn),), a, bt, c, m, n, kk, kk, kk, n)
                    torch.cuda.synchronize()
                    record(f"{mk.id} {target} w{w} {m}x{n}x{kk} against f32",
                           rel_err(c, a.float() @ bt.float().t()), 2e-3 if od == "f16" else 1e-3)


def check_matmul_bias_relu(drv, tc, quick):
    """matmul with a fused bias + relu epilogue (wgmma and mma.sync tiles), odd sizes."""
    for dt in ("f16", "bf16"):
        for bm, bn, bk, warps in ((128, 128, 32, 4), (128, 256, 64, 8)):
            k = Kernel(drv, tc, K + "matmul_bias_relu.c", "matmul_bias_relu",
                       {"D": dt, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                       num_warps=warps)
            for m, n, kk in ((1, 1, 1), (333, 520, 264), (1000, 300, 70)):
                a = torch.randn(m, kk, device="cuda").to(DT[dt])
                b = torch.randn(kk, n, device="cuda").to(DT[dt])
                bias = torch.randn(n, device="cuda").to(DT[dt])
                c = poison(torch.empty(m, n, device="cuda", dtype=DT[dt]))
                k((cdiv(m, bm) * cdiv(n, bn),), a, b, bias, c, m, n, kk, a.stride(0),
                  a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
                torch.cuda.synchronize()
                ref = torch.relu(a.double() @ b.double() + bias.double())
                record(f"{k.id} {m}x{n}x{kk}", rel_err(c, ref), TOL[dt])


def check_transpose(drv, tc, quick):
    """Y = X^T, bit for bit, odd shapes and padded rows."""
    for dt, bm, bn, warps in (("f32", 32, 32, 4), ("f32", 64, 64, 8), ("f16", 64, 32, 4)):
        k = Kernel(drv, tc, K + "transpose.c", "transpose", {"D": dt, "BLOCK_M": bm, "BLOCK_N": bn},
                   num_warps=warps)
        for m, n in ((1, 1), (77, 45), (7777, 5003)):
            x = torch.randn(m, n + 3, device="cuda").to(DT[dt])[:, :n]
            y = poison(torch.empty(n, m + 1, device="cuda", dtype=DT[dt]))[:, :m]
            k((cdiv(m, bm) * cdiv(n, bn),), x, y, m, n, x.stride(0), y.stride(0))
            torch.cuda.synchronize()
            exact = torch.equal(y, x.t())
            record(f"{k.id} {m}x{n}", 0.0 if exact else 1.0, 0.0)


def kernel_or_skip(drv, tc, *args, **kw):
    """Kernel(...), or None (printed as SKIP) when teenyc refuses the tile
    for its shared memory: a correct refusal, not a failure."""
    try:
        return Kernel(drv, tc, *args, **kw)
    except subprocess.CalledProcessError as e:
        msg = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        if "shared memory" not in msg:
            raise
        print(f"SKIP  {args[1]} {args[2]} w{kw.get('num_warps')}: {msg.strip().splitlines()[0]}",
              flush=True)
        return None


def attention_ref(q, k, v, causal, scale):
    """SDPA in float64 (the math backend), and the row's log2-sum-exp."""
    qd, kd, vd = q.double(), k.double(), v.double()
    o = torch.nn.functional.scaled_dot_product_attention(qd, kd, vd, is_causal=causal, scale=scale)
    s = (qd @ kd.transpose(-1, -2)) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, device=s.device, dtype=torch.bool).triu(1), float("-inf"))
    return o, torch.logsumexp(s, -1) / math.log(2.0)


def attention_ours(drv, tc, quick):
    """examples/kernels/attention.c (the benchmarked kernel) against SDPA
    (float64): odd sequence lengths, causal and not, head_dim 64 and 128,
    f16 and bf16, the code generator's pipeline depth and num_stages 2 and
    3; Q, K, V, O in different memory layouts ([Z, H, N, D], [Z, N, H, D],
    padded rows)."""
    lengths = (1, 77, 1000) + (() if quick else (4096, 4099))
    # (BLOCK_M, BLOCK_N, warps, num_stages; 0: the code generator's)
    configs = ((128, 64, 8, 0), (64, 64, 4, 0), (128, 128, 8, 0), (128, 64, 8, 2),
               (128, 64, 4, 3))
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (0, 1):
                for bm, bn, warps, stages in configs:
                    k = kernel_or_skip(drv, tc, K + "attention.c", "attention",
                                       {"D": dt, "HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn,
                                        "CAUSAL": causal}, num_warps=warps, num_stages=stages)
                    if k is None:
                        continue
                    for n in lengths:
                        z, h = (2, 3) if n < 4096 else (1, 2)
                        q = torch.randn(z, h, n, d, device="cuda").to(DT[dt])
                        kk = torch.randn(z, n, h, d, device="cuda").to(DT[dt]).transpose(1, 2)
                        v = torch.randn(z, h, n, d + 8, device="cuda").to(DT[dt])[..., :d]
                        o = poison(torch.empty(z, n, h, d, device="cuda", dtype=DT[dt])).transpose(1, 2)
                        lse = poison(torch.empty(z * h, n, device="cuda"))
                        scale = 1.0 / math.sqrt(d)
                        k((cdiv(n, bm), z * h), q, kk, v, o, lse, scale, h, n,
                          *q.stride()[:3], *kk.stride()[:3], *v.stride()[:3], *o.stride()[:3])
                        torch.cuda.synchronize()
                        ref, ref_lse = attention_ref(q, kk, v, bool(causal), scale)
                        err = max(rel_err(o, ref), rel_err(lse.view(z, h, n), ref_lse))
                        record(f"{k.id} w{warps} s{stages or 'auto'} {z}x{h}x{n}", err,
                               TOL[dt])


def attention_tuple(drv, tc, quick):
    """examples/kernels/attention_tuple.c, tutorial 06 as written (its inner
    loop returns a struct), against torch's SDPA, causal and not, N_CTX not
    a multiple of the blocks."""
    shapes = [(2, 3, 1000, 64)] + ([] if quick else [(1, 4, 4096, 64), (2, 2, 777, 128)])
    for dt in ("f16", "bf16"):
        for causal in (True, False):
            for z, h, n, d in shapes:
                b = {"D": dt, "HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": 64,
                     "STAGE": 3 if causal else 1}
                k = Kernel(drv, tc, K + "attention_tuple.c", "attn_fwd", b, num_warps=8)
                q, kk, v = (torch.randn(z, h, n, d, device="cuda").to(DT[dt]) for _ in range(3))
                o = poison(torch.empty_like(q))
                m = poison(torch.empty(z, h, n, device="cuda"))
                scale = 1 / math.sqrt(d)
                k((cdiv(n, 128), z * h), q, kk, v, o, m, (scale, ctypes.c_float), n)
                torch.cuda.synchronize()
                ref = torch.nn.functional.scaled_dot_product_attention(
                    q.double(), kk.double(), v.double(), is_causal=causal, scale=scale)
                s = (q.double() @ kk.double().transpose(-1, -2)) * scale
                if causal:
                    s = s.masked_fill(torch.ones(n, n, device="cuda").triu(1).bool(), -math.inf)
                lse = torch.logsumexp(s, -1) / math.log(2)
                err = max(rel_err(o, ref), rel_err(m, lse))
                record(f"{k.id} {z}x{h}x{n}x{d}", err, TOL[dt])


def check_attention(drv, tc, quick):
    """Both attention kernels: examples/kernels/attention.c (ours, the one
    bench/gpu.py times) and attention_tuple.c (tutorial 06 as written); a
    failure of one does not hide the other (unless the context is gone)."""
    for part in (attention_ours, attention_tuple):
        try:
            part(drv, tc, quick)
        except Exception as e:
            if "illegal" in str(e).lower():
                raise
            results.append(False)
            print(f"FAIL  {part.__name__}: {type(e).__name__}: {e}", flush=True)


def main():
    quick = "--quick" in sys.argv
    # --only NAME: just check_NAME (tests/gpu/check.py --only attention)
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    tc = teenyc_path()
    torch.manual_seed(int(time.time()))
    drv = Driver()
    print(f"teenyc {tc}; GPU {torch.cuda.get_device_name()}; torch {torch.__version__}")
    # the tensor-core kernels last: a bad instruction can take the context down
    for check in (check_vector_add, check_softmax, check_layernorm, check_absmax,
                  check_libdevice_asin,
                  check_cumsum, check_histogram, check_memory_model, check_layernorm_bwd,
                  check_cross_entropy, check_random, check_pointer_table, check_dot_precision,
                  check_fp8, check_copy_tma, check_transpose, check_matmul, check_matmul_bias_relu,
                  check_attention):
        if only and check.__name__ not in (only, "check_" + only):
            continue
        try:
            check(drv, tc, quick)
        except Exception as e:  # a failed compile or launch fails the check, not the run
            results.append(False)
            print(f"FAIL  {check.__name__}: {type(e).__name__}: {e}", flush=True)
            if "illegal" in str(e).lower() or "ILLEGAL" in str(e):
                break  # the context is gone; nothing after this can run
    passed = sum(results)
    print(f"gpu-check: {passed}/{len(results)} passed")
    return 0 if passed == len(results) and results else 1


if __name__ == "__main__":
    sys.exit(main())
