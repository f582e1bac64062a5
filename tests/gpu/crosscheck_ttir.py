"""tests/gpu/crosscheck_ttir.py — our .mlir artifact, compiled by Triton.

For the vector_add and softmax examples: teenyc writes the kernel's
Triton-dialect MLIR (the cached .mlir artifact); Triton 3.6 parses,
verifies and compiles that text itself (triton.compile of a .ttir file);
the result runs on the same random inputs as teenyc's own PTX and torch.
All three must agree (f32: max abs difference <= 1e-6 between Triton's
build of our MLIR and ours; both against torch within 1e-5 relative).
Runs on the GPU machine (scripts/gpu-check); exits 1 on any mismatch.
"""
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
