"""tests/gpu/crosscheck_ttir.py — our .mlir artifact, compiled by Triton.

For the vector_add and softmax examples: teenyc writes the kernel's
Triton-dialect MLIR (the cached .mlir artifact); Triton 3.6 parses,
verifies and compiles that text itself (triton.compile of a .ttir file);
the result runs on the same random inputs as teenyc's own PTX and torch.
All three must agree (f32: max abs difference <= 1e-6 between Triton's
build of our MLIR and ours; both against torch within 1e-5 relative).

Then the language of issue 13 (tests/lang/): every specialisation of
tests/lang/lang.list (loops left by break/continue/return as scf.while
with carried flags, reduce and scan over structs as multi-operand
tt.reduce/tt.scan, typed constants, tt.print, tt.assert) must parse,
verify and compile in Triton, and two of them run on Triton's build and
ours: row_stats (a reduce of three operands) and scalar_exits (search
loops).  Runs on the GPU machine (scripts/gpu-check); exits 1 on any
mismatch.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402

from teeny_gpu import Driver, Kernel, rel_err, teenyc_path  # noqa: E402

K = "examples/kernels/"


def ttir(tc, file, kernel, bindings):
    args = [tc, file, "--kernel", kernel, "--emit", "mlir"]
    for k, v in bindings.items():
        if k == "teeny.debug":
            args += ["--debug"]
            continue
        args += ["--const" if isinstance(v, int) else "--dtype", f"{k}={v}"]
    text = subprocess.run(args, check=True, capture_output=True).stdout
    fd, path = tempfile.mkstemp(suffix=".ttir")
    os.write(fd, text)
    os.close(fd)
    return path


def main():
    tc = teenyc_path()
    drv = Driver()
    ok = True
    print(f"triton {triton.__version__}; teenyc {tc}")

    n, block = 1000003, 1024
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    path = ttir(tc, K + "vector_add.c", "vector_add", {"D": "f32", "BLOCK_SIZE": block})
    tr = triton.compile(path)
    out_tr = torch.full_like(a, float("nan"))
    tr[((n + block - 1) // block, 1, 1)](a, b, out_tr, n)
    ours = Kernel(drv, tc, K + "vector_add.c", "vector_add", {"D": "f32", "BLOCK_SIZE": block})
    out = torch.full_like(a, float("nan"))
    ours(((n + block - 1) // block,), a, b, out, n)
    torch.cuda.synchronize()
    d = (out_tr - out).abs().max().item()
    e = rel_err(out_tr, a + b)
    good = d <= 1e-6 and e <= 1e-5
    ok &= good
    print(f"{'PASS' if good else 'FAIL'}  vector_add f32 n={n}: Triton(our MLIR) vs teenyc max diff {d:.1e}, vs torch rel {e:.1e}")
    os.unlink(path)

    rows, cols, block = 300, 1000, 1024
    x = torch.randn(rows, cols, device="cuda")
    path = ttir(tc, K + "softmax.c", "softmax", {"D": "f32", "BLOCK_SIZE": block})
    tr = triton.compile(path)
    y_tr = torch.full_like(x, float("nan"))
    tr[(rows, 1, 1)](y_tr, x, cols, cols, cols)
    ours = Kernel(drv, tc, K + "softmax.c", "softmax", {"D": "f32", "BLOCK_SIZE": block})
    y = torch.full_like(x, float("nan"))
    ours((rows,), y, x, cols, cols, cols)
    torch.cuda.synchronize()
    d = (y_tr - y).abs().max().item()
    e = rel_err(y_tr, torch.softmax(x.double(), 1))
    good = d <= 1e-6 and e <= 1e-5
    ok &= good
    print(f"{'PASS' if good else 'FAIL'}  softmax f32 {rows}x{cols}: Triton(our MLIR) vs teenyc max diff {d:.1e}, vs torch rel {e:.1e}")
    os.unlink(path)
    ok &= lang_parses(tc)
    ok &= lang_runs(drv, tc)
    return 0 if ok else 1


def lang_list():
    """(file, kernel, bindings) of tests/lang/lang.list."""
    out = []
    with open("tests/lang/lang.list") as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            b = {}
            for kv in w[2:]:
                k, v = kv.split("=", 1)
                b[k] = int(v) if v.lstrip("-").isdigit() else v
            out.append((f"tests/lang/{w[0]}.c", w[1], b))
    return out


def triton_compiles(path):
    """(ok, why): triton.compile(path) in a child process, so that an
    assertion inside Triton's C++ (an abort) fails one case, not the run."""
    code = ("import sys, triton\n"
            "try:\n"
            "    triton.compile(sys.argv[1])\n"
            "except Exception as e:\n"
            "    print((str(e).splitlines() or [type(e).__name__])[0]); sys.exit(1)\n")
    r = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True)
    if r.returncode == 0:
        return True, ""
    if r.returncode < 0:  # killed by a signal: an assertion in Triton or LLVM
        asserts = [l for l in r.stderr.splitlines() if "Assertion" in l]
        return False, f"Triton aborted (signal {-r.returncode}): " + (
            asserts[0][-200:] if asserts else r.stderr.strip()[-200:])
    return False, r.stdout.strip()[-300:]


def lang_parses(tc):
    """Every tests/lang specialisation's MLIR through Triton's compiler, and
    tutorial 06's attention (a struct carried through its loops); each
    compile in its own process, eight at a time."""
    attn = ("examples/kernels/attention_tuple.c", "attn_fwd",
            {"D": "f16", "HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "STAGE": 3})
    cases = lang_list() + [attn]
    paths = [ttir(tc, file, kernel, b) for file, kernel, b in cases]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(triton_compiles, paths))
    ok = True
    for (file, kernel, b), path, (good, why) in zip(cases, paths, results):
        os.unlink(path)
        ok &= good
        print(f"{'PASS' if good else 'FAIL'}  Triton compiles our MLIR of {kernel} {b} {why}")
    return ok


def lang_runs(drv, tc):
    ok = True
    f = "tests/lang/tuples.c"
    rows, n = 37, 12
    x = torch.randn(rows * n, device="cuda")
    path = ttir(tc, f, "row_stats", {"BLOCK": 16})
    tr = triton.compile(path)
    os.unlink(path)
    ours = Kernel(drv, tc, f, "row_stats", {"BLOCK": 16})
    a = torch.full((rows * 4,), float("nan"), device="cuda")
    b = torch.full_like(a, float("nan"))
    tr[(rows, 1, 1)](x, a, n)
    ours((rows,), x, b, n)
    torch.cuda.synchronize()
    v = x.view(rows, n).double()
    ref = torch.stack([v.mean(1), v.var(1, unbiased=False), v.max(1).values * 10,
                       v.argmax(1).double()], 1).flatten()
    good = (a - b).abs().max().item() <= 1e-5 and rel_err(b, ref) <= 1e-5
    ok &= good
    print(f"{'PASS' if good else 'FAIL'}  row_stats (reduce over a struct): Triton(our MLIR) "
          f"vs teenyc {(a - b).abs().max().item():.1e}, vs torch {rel_err(b, ref):.1e}")
    f = "tests/lang/jumps.c"
    n = 20
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    path = ttir(tc, f, "scalar_exits", {"BLOCK": 16})
    tr = triton.compile(path)
    os.unlink(path)
    ours = Kernel(drv, tc, f, "scalar_exits", {"BLOCK": 16})
    a = torch.full((40,), -9, device="cuda", dtype=torch.int32)
    b = torch.full_like(a, -9)
    tr[(4, 1, 1)](x, a, n)
    ours((4,), x, b, n)
    torch.cuda.synchronize()
    good = torch.equal(a, b)
    ok &= good
    print(f"{'PASS' if good else 'FAIL'}  scalar_exits (break/continue/return): Triton(our "
          f"MLIR) and teenyc agree: {a.tolist()[:8]} ...")
    return ok


if __name__ == "__main__":
    sys.exit(main())
