"""tests/gpu/python_gpu.py — the teenyc Python package on the GPU, as a
user runs it: kernels compiled through a teenycd started here, launched
with kernel[grid](...) on torch tensors on torch's current stream, checked
against torch; then the warm per-call overhead of a launch beside Triton's
in the same process.

    python3 tests/gpu/python_gpu.py [--quick]

Uses the bundle's teenycd and libteenyc-client.so (TEENY_BUNDLE, default
.bundle/unpacked, as scripts/gpu-check unpacks it) or a build tree
($TEENYCD_BIN, $TEENYC_CLIENT_LIBRARY).  Prints one line per case and a
table; writes python_gpu.json to $OUT; exits 1 if any case failed.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BUNDLE = os.environ.get("TEENY_BUNDLE", os.path.join(SRC, ".bundle", "unpacked"))
if os.path.isdir(os.path.join(BUNDLE, "python")):
    sys.path.insert(0, os.path.join(BUNDLE, "python"))
    os.environ.setdefault("TEENYC_CLIENT_LIBRARY", os.path.join(BUNDLE, "lib", "libteenyc-client.so.0"))
    os.environ.setdefault("TEENYCD_BIN", os.path.join(BUNDLE, "bin", "teenycd"))
else:
    sys.path.insert(0, os.path.join(SRC, "python"))

import torch  # noqa: E402

import teenyc  # noqa: E402

K = os.path.join(SRC, "examples", "kernels")
results, failures = [], []


def record(name, err, tol):
    ok = err <= tol
    (results if ok else failures).append(name)
    print(f"{'PASS' if ok else 'FAIL'}  {name:50s} err {err:.2e} (tol {tol:.0e})", flush=True)


def rel_err(out, ref):
    out, ref = out.double(), ref.double()
    if torch.isnan(out).any():
        return float("inf")
    den = torch.linalg.vector_norm(ref)
    return float(torch.linalg.vector_norm(out - ref) / den) if den > 0 else 0.0


def start_daemon():
    d = tempfile.mkdtemp(prefix="teenyc-pygpu-")
    sock = os.path.join(d, "s.sock")
    proc = subprocess.Popen([os.environ.get("TEENYCD_BIN", "teenycd"), "--socket", sock,
                             "--cache-dir", os.path.join(d, "cache"), "--log-level", "warn"])
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    os.environ["TEENYCD_SOCKET"] = sock
    return proc


DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
TOL = {"f32": 1e-5, "f16": 5e-3, "bf16": 2e-2}


def check_vector_add(quick):
    add = teenyc.kernel(os.path.join(K, "vector_add.c"))
    for dt in DT:
        for n in (1, 1000003) + (() if quick else (1 << 24,)):
            a = torch.randn(n, device="cuda", dtype=DT[dt])
            b = torch.randn(n, device="cuda", dtype=DT[dt])
            out = torch.full_like(a, float("nan"))
            add[lambda m: (teenyc.cdiv(n, m["BLOCK_SIZE"]),)](a, b, out, n, BLOCK_SIZE=1024)
            torch.cuda.synchronize()
            record(f"vector_add {dt} n={n}", 0.0 if torch.equal(out, a + b) else rel_err(out, a + b),
                   0.0)


def check_softmax(quick):
    softmax = teenyc.kernel(os.path.join(K, "softmax.c"))
    for dt in DT:
        for rows, cols in [(7, 1), (300, 1000), (64, 4097)] + ([] if quick else [(4096, 4096)]):
            block = 1 << max(0, (cols - 1).bit_length())
            x = (torch.randn(rows, cols + 3, device="cuda") * 3).to(DT[dt])[:, :cols]
            out = torch.full((rows, cols + 1), float("nan"), device="cuda", dtype=DT[dt])[:, :cols]
            softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block,
                             num_warps=4 if block <= 2048 else 8)
            torch.cuda.synchronize()
            record(f"softmax {dt} {rows}x{cols}", rel_err(out, torch.softmax(x.double(), 1)), TOL[dt])


MATMUL_TOL = {"f16": 5e-3, "bf16": 2e-2, "f32": 2e-3}


def run_matmul(matmul, a, b, c, dt):
    """c = a @ b through examples/kernels/matmul.c at the usual tile."""
    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk = (128, 128, 64) if dt != "f32" else (64, 64, 32)
    matmul[(teenyc.cdiv(m, bm) * teenyc.cdiv(n, bn),)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
        num_warps=8 if dt != "f32" else 4)
    torch.cuda.synchronize()


def check_matmul(quick):
    matmul = teenyc.kernel(os.path.join(K, "matmul.c"))
    sizes = [(127, 255, 129), (512, 512, 512)] + ([] if quick else [(4096, 4096, 4096)])
    for dt in ("f16", "bf16", "f32"):
        for m, n, k in sizes:
            a = torch.randn(m, k, device="cuda", dtype=DT[dt])
            b = torch.randn(k, n, device="cuda", dtype=DT[dt])
            c = torch.full((m, n), float("nan"), device="cuda", dtype=DT[dt])
            run_matmul(matmul, a, b, c, dt)
            record(f"matmul {dt} {m}x{n}x{k}", rel_err(c, a.double() @ b.double()),
                   MATMUL_TOL[dt])


def check_tensor_desc(quick):
    """tensor_desc parameters from Python: a torch tensor per descriptor,
    its block from the kernel's bindings.  copy_tma over every dtype class,
    odd and aligned shapes, a strided view (TMA) and rows the TMA cannot
    take (plain loads), writing inside a sentinel-filled buffer so a write
    past the tensor shows; tests/lang/descs.c's desc_param, whose two
    descriptors have different blocks ([BM, BN] and [BN, BM]) and whose
    windows hang over the tensor's edges."""
    copy = teenyc.kernel(os.path.join(K, "copy_tma.c"))
    dts = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i8": torch.int8}
    shapes = [(1000, 777), (512, 1024), (33, 64)] + ([] if quick else [(4099, 4100)])
    for dt, tdt in dts.items():
        for m, n in shapes:
            for bm, bn in ((16, 64), (32, 128)):
                for strided in (False, True):
                    width = n + 64 if strided else n
                    big = (torch.randn(m, width, device="cuda") * 50).to(tdt)
                    src = big[:, :n] if strided else big
                    outer = torch.full((m + 3, width + 32), 7, device="cuda", dtype=tdt)
                    dst = outer[:m, 16:16 + n]  # its base on 16 bytes, as every pointer's
                    copy[(teenyc.cdiv(n, bn), teenyc.cdiv(m, bm))](src, dst, BLOCK_M=bm,
                                                                   BLOCK_N=bn)
                    torch.cuda.synchronize()
                    ref = torch.full_like(outer, 7)
                    ref[:m, 16:16 + n] = src
                    ok = torch.equal(outer, ref)
                    record(f"tensor_desc copy {dt} {m}x{n}{' view' if strided else ''} "
                           f"{bm}x{bn}", 0.0 if ok else 1.0, 0.0)
    try:  # a base off 16 bytes is refused (kernels assume it of every pointer)
        x = torch.zeros(64, 72, device="cuda", dtype=torch.int8)
        copy[(1, 1)](x[:, 8:], x[:, 8:], BLOCK_M=16, BLOCK_N=64)
        got = "no error"
    except teenyc.ArgumentError as e:
        got = str(e)
    record("tensor_desc: a base off 16 bytes is refused", 0.0 if "16-byte" in got else 1.0, 0.0)
    dp = teenyc.kernel(os.path.join(SRC, "tests", "lang", "descs.c"), name="desc_param")
    for dt in ("f32", "f16"):
        for m, n, bm, bn in ((64, 128, 16, 32), (45, 77, 16, 32), (100, 200, 32, 64)):
            src = torch.randn(m, n, device="cuda").to(DT[dt])
            gm, gn = teenyc.cdiv(m, bm), teenyc.cdiv(n, bn)
            dst = torch.zeros(n, m, device="cuda", dtype=DT[dt])
            sums = torch.zeros(gm * gn, device="cuda")
            shifted = torch.zeros(gm * gn * bm * bn, device="cuda", dtype=DT[dt])
            dp[(gm * gn,)](src, dst, sums, shifted, gn, BM=bm, BN=bn)
            torch.cuda.synchronize()
            pad = torch.zeros(gm * bm + 8, gn * bn + 8, device="cuda", dtype=DT[dt])
            pad[3:3 + m, :n] = src  # row r of pad is row r - 3 of src
            blocks = pad[3:3 + gm * bm, :gn * bn].reshape(gm, bm, gn, bn).permute(0, 2, 1, 3)
            want_sums = blocks.float().sum((2, 3)).reshape(-1)
            win = torch.stack([pad[pm * bm:pm * bm + bm, pn * bn + 5:pn * bn + 5 + bn]
                               for pm in range(gm) for pn in range(gn)]).reshape(-1)
            ok = torch.equal(dst, src.t() * 2 + 1) and torch.equal(shifted, win)
            err = 0.0 if ok else 1.0
            err = max(err, rel_err(sums, want_sums))
            record(f"tensor_desc desc_param {dt} {m}x{n} {bm}x{bn}", err,
                   1e-5 if dt == "f32" else 5e-3)


def check_unaligned(quick):
    """Views that start off 16 bytes (x[1:], x[:, 3:]): the package compiles
    them a specialisation of their own (TEENY_OPT_UNALIGNED), whose vector
    accesses test alignment at run time; the same kernels on aligned
    tensors keep theirs."""
    add = teenyc.kernel(os.path.join(K, "vector_add.c"))
    for dt in DT:
        for n in (1, 1000003) + (() if quick else (1 << 24,)):
            for sa, sb, so in ((1, 0, 0), (0, 3, 2), (5, 7, 1)):
                a = torch.randn(n + 8, device="cuda", dtype=DT[dt])[sa:sa + n]
                b = torch.randn(n + 8, device="cuda", dtype=DT[dt])[sb:sb + n]
                big = torch.full((n + 8,), 7, device="cuda", dtype=DT[dt])
                out = big[so:so + n]
                add[lambda m: (teenyc.cdiv(n, m["BLOCK_SIZE"]),)](a, b, out, n, BLOCK_SIZE=1024)
                torch.cuda.synchronize()
                ok = torch.equal(out, a + b) and torch.all(big[:so] == 7) and \
                    torch.all(big[so + n:] == 7)
                record(f"unaligned vector_add {dt} n={n} +{sa},{sb},{so}", 0.0 if ok else 1.0, 0.0)
    softmax = teenyc.kernel(os.path.join(K, "softmax.c"))
    for dt in DT:
        for rows, cols, off in ((300, 1000, 1), (64, 4097, 3)):
            block = 1 << max(0, (cols - 1).bit_length())
            x = (torch.randn(rows, cols + 8, device="cuda") * 3).to(DT[dt])[:, off:off + cols]
            out = torch.full((rows, cols + 8), float("nan"), device="cuda",
                             dtype=DT[dt])[:, off + 1:off + 1 + cols]
            softmax[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block,
                             num_warps=4 if block <= 2048 else 8)
            torch.cuda.synchronize()
            record(f"unaligned softmax {dt} {rows}x{cols} +{off}",
                   rel_err(out, torch.softmax(x.double(), 1)), TOL[dt])
    matmul = teenyc.kernel(os.path.join(K, "matmul.c"))
    for dt in ("f16", "f32"):
        m, n, k = 127, 255, 129
        a = torch.randn(m * k + 8, device="cuda", dtype=DT[dt])[1:1 + m * k].view(m, k)
        b = torch.randn(k * n + 8, device="cuda", dtype=DT[dt])[3:3 + k * n].view(k, n)
        c = torch.full((m * n + 8,), float("nan"), device="cuda", dtype=DT[dt])[2:2 + m * n]
        c = c.view(m, n)
        run_matmul(matmul, a, b, c, dt)
        record(f"unaligned matmul {dt} {m}x{n}x{k}", rel_err(c, a.double() @ b.double()),
               MATMUL_TOL[dt])


def check_errors():
    add = teenyc.kernel(os.path.join(K, "vector_add.c"))
    a = torch.zeros(8, device="cuda")
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64)  # warm: the checks below are made on the warm path
    cases = [((a, a.half(), a, 8), "both are D"), ((a, a.cpu(), a, 8), "is on cpu"),
             ((torch.zeros(4, 4, device="cuda").t(), a, a, 8), "not contiguous"),
             ((a, a, a, 2**31), "does not fit i32"), ((a, a, a, 8.0), "wants an integer")]
    for args, want in cases:
        try:
            add[(1,)](*args, BLOCK_SIZE=64)
            got = "no error"
        except teenyc.ArgumentError as e:
            got = str(e)
        record(f"argument check: {want}", 0.0 if want in got else 1.0, 0.0)


def per_call_us(fn, n):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def overhead(quick):
    """Warm per-call host time of a tiny launch (the GPU work is ~2 µs and
    runs behind): teenyc's kernel[grid] (its specialisation cache hit +
    packing + cuLaunchKernel), a client memo hit alone, Triton's
    kernel[grid] (its cache hit + launch), and torch's add."""
    n, reps = 1024, 2000 if quick else 20000
    a, b, out = (torch.randn(n, device="cuda") for _ in range(3))
    add = teenyc.kernel(os.path.join(K, "vector_add.c"))
    client = add.client()
    src = open(os.path.join(K, "vector_add.c")).read()
    rows = {"teenyc kernel[grid](...)": per_call_us(
                lambda: add[(1,)](a, b, out, n, BLOCK_SIZE=1024), reps),
            "teenyc memo hit (Client.compile)": per_call_us(
                lambda: client.compile(src, "vector_add", {"D": "f32"}, {"BLOCK_SIZE": 1024},
                                       4, add.target or teenyc._kernel._device_target(add._lib)),
                reps),
            "torch.add(out=)": per_call_us(lambda: torch.add(a, b, out=out), reps)}
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def tr_add(x, y, o, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

        rows[f"triton {triton.__version__} kernel[grid](...)"] = per_call_us(
            lambda: tr_add[(1,)](a, b, out, n, BLOCK=1024), reps)
    except ImportError as e:
        print(f"note: no triton ({e}): its overhead not measured")
    torch.cuda.synchronize()  # the warm path launched what it was given
    out.zero_()
    add[(1,)](a, b, out, n, BLOCK_SIZE=1024)
    record("vector_add after the warm loop", 0.0 if torch.equal(out, a + b) else 1.0, 0.0)
    print(f"\nwarm per-call host time, {reps} calls each ({torch.cuda.get_device_name()}):")
    for k, v in rows.items():
        print(f"  {k:40s} {v:8.2f} us")
    return rows


def main():
    quick = "--quick" in sys.argv
    proc = start_daemon()
    try:
        torch.empty(1, device="cuda")  # torch's context first: teenyc launches in it
        check_vector_add(quick)
        check_softmax(quick)
        check_matmul(quick)
        check_tensor_desc(quick)
        check_unaligned(quick)
        check_errors()
        c = teenyc.default_client()
        print(f"compiled through: {c.mode} at {c.socket}")
        if c.mode != "daemon":
            failures.append("not through teenycd")
        rows = overhead(quick)
    finally:
        proc.terminate()
        proc.wait(30)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "python_gpu.json"), "w") as f:
            json.dump({"passed": len(results), "failed": failures, "overhead_us": rows,
                       "device": torch.cuda.get_device_name(), "date": time.strftime("%F %T %Z")},
                      f, indent=1)
    print(f"\n{len(results)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
