"""bench/dump_triton.py — write Triton's compiled forms (TTGIR, LLVM IR,
PTX, SASS) of the benchmark kernels we compare against, for offline
study on the build machine (ptxas/cuobjdump there).  Runs on the GPU
machine; writes $OUT/triton-asm.tar.gz.

    python3 bench/dump_triton.py
"""
import io
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import gpu  # noqa: E402  (the Triton kernels of bench/gpu.py)


def add(tar, name, data):
    if isinstance(data, str):
        data = data.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def dump(tar, tag, ck):
    for key in ("ttir", "ttgir", "llir", "ptx"):
        if key in ck.asm:
            add(tar, f"{tag}.{key}", ck.asm[key])
    if "cubin" in ck.asm:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(ck.asm["cubin"])
            f.flush()
            sass = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True, text=True)
            add(tar, f"{tag}.sass", sass.stdout or sass.stderr)


def main():
    out = os.environ.get("OUT", ".")
    m, n = 4096, 8192
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for dt, w in (("f32", 16), ("f16", 8)):
            tdt = {"f32": torch.float32, "f16": torch.float16}[dt]
            x = torch.randn(m, n, device="cuda").to(tdt)
            wt = torch.randn(n, device="cuda").to(tdt)
            b = torch.randn(n, device="cuda").to(tdt)
            y = torch.empty_like(x)
            mean = torch.empty(m, device="cuda")
            rstd = torch.empty(m, device="cuda")
            ck = gpu.tr_layernorm[(m,)](x, y, wt, b, mean, rstd, n, n, 1e-5, BLOCK=1024, num_warps=w)
            dump(tar, f"layernorm_{dt}_w{w}", ck)
        s = 4096
        a = torch.randn(s, s, device="cuda", dtype=torch.float16)
        bb = torch.randn(s, s, device="cuda", dtype=torch.float16)
        c = torch.empty(s, s, device="cuda", dtype=torch.float16)
        ck = gpu.tr_matmul[(gpu.cdiv(s, 128) * gpu.cdiv(s, 256),)](
            a, bb, c, s, s, s, s, 1, s, 1, s, 1, BM=128, BN=256, BK=64, GM=8, num_warps=8,
            num_stages=3)
        dump(tar, "matmul_f16_128x256x64_w8_s3", ck)
    with open(os.path.join(out, "triton-asm.tar.gz"), "wb") as f:
        f.write(buf.getvalue())
    print("wrote triton-asm.tar.gz", len(buf.getvalue()), "bytes")


if __name__ == "__main__":
    main()
