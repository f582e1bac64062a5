"""bench/dump_ours.py — teenyc's compiled forms of the benchmark kernels (PTX,
`ptxas -v` report, SASS) for study next to Triton's (bench/dump_triton.py):
the build machine has ptxas but no disassembler.  Runs on the GPU machine,
using the ptxas/cuobjdump found in PATH, /usr/local/cuda/bin or Triton's
package; writes $OUT/ours-asm.tar.gz (and the files under $OUT/ours-asm/).

    python3 bench/dump_ours.py
"""
import glob
import io
import os
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from teeny_gpu import teenyc_path  # noqa: E402

K = "examples/kernels/"
KERNELS = [  # (tag, file, kernel, bindings, num_warps, target)
    *[(f"layernorm_{dt}_w{w}", "layernorm.c", "layernorm", {"D": dt, "BLOCK_SIZE": 1024}, w,
       "sm_90a") for dt in ("f32", "f16") for w in (4, 8, 16)],
    *[(f"matmul_f16_{bm}x{bn}x{bk}_w{w}_{t}", "matmul.c", "matmul",
       {"D": "f16", "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, w, t)
      for bm, bn, bk, w in ((128, 256, 64, 8), (128, 128, 64, 8), (128, 128, 32, 4))
      for t in ("sm_90a", "sm_90")],
]


def tool(name):
    """A CUDA tool from PATH, /usr/local/cuda/bin or Triton's package."""
    found = shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")
    if found:
        return found
    try:
        import triton
        for p in glob.glob(os.path.join(os.path.dirname(triton.__file__), "**", name),
                           recursive=True):
            if os.access(p, os.X_OK):
                return p
    except Exception:
        pass
    return None


def main():
    out = os.path.join(os.environ.get("OUT", "."), "ours-asm")
    os.makedirs(out, exist_ok=True)
    tc = teenyc_path()
    ptxas, cuobjdump = tool("ptxas"), tool("cuobjdump")
    print(f"teenyc {tc}; ptxas {ptxas}; cuobjdump {cuobjdump}")
    for tag, f, kernel, bind, w, target in KERNELS:
        args = [tc, K + f, "--kernel", kernel, "--num-warps", str(w), "--target", target]
        for k, v in bind.items():
            args += ["--const" if isinstance(v, int) else "--dtype", f"{k}={v}"]
        ptx = os.path.join(out, tag + ".ptx")
        r = subprocess.run(args + ["--emit", "ptx", "-o", ptx], capture_output=True, text=True)
        if r.returncode:
            print(f"{tag}: teenyc failed: {r.stderr.strip()}")
            continue
        if not ptxas:
            continue
        cubin = os.path.join(out, tag + ".cubin")
        r = subprocess.run([ptxas, f"-arch={target}", "-v", ptx, "-o", cubin],
                           capture_output=True, text=True)
        with open(os.path.join(out, tag + ".ptxas.txt"), "w") as fh:
            fh.write(r.stdout + r.stderr)
        used = [ln.strip() for ln in (r.stdout + r.stderr).splitlines() if "Used" in ln or "spill" in ln]
        print(f"{tag}: {' | '.join(used)}")
        if cuobjdump and r.returncode == 0:
            d = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True)
            with open(os.path.join(out, tag + ".sass"), "w") as fh:
                fh.write(d.stdout or d.stderr)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(out, arcname="ours-asm")
    with open(os.path.join(os.environ.get("OUT", "."), "ours-asm.tar.gz"), "wb") as fh:
        fh.write(buf.getvalue())
    print("wrote ours-asm.tar.gz", len(buf.getvalue()), "bytes")


if __name__ == "__main__":
    main()
