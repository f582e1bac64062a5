#!/usr/bin/env python3
"""tests/gpu/sass_probe.py — runs ON THE GPU MACHINE: tells a driver-JIT
problem from a PTX one for the GPU-only difffuzz reproducers.

For each reproducer (tests/diff/repro-gpu/*.txt by default) it replays the
kernel on the GPU twice, with the driver JIT at its default level and at -O0
($TEENY_CUDA_JIT_OPT=0), and writes the kernel's PTX (sm_90a, from the
bundle's teenyc) and its SASS (Triton's ptxas and nvdisasm, which ship with
its wheel: the build machine has no disassembler) to $OUT/sass.tgz, so the
instructions that differ from the PTX can be read there.  One line per
reproducer: the two replay verdicts.

  python3 tests/gpu/sass_probe.py [REPRO.txt...]
Environment: TEENYC, DIFFFUZZ (the bundle's binaries), OUT.
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tarfile

# options of `teenyc run` that the compiler does not take (each with a value)
RUN_ONLY = {"--grid", "-g", "--arg", "-a", "--fill", "-f", "--engine", "-e", "--out", "-o",
            "--tol", "--atol", "--no-compare"}


def compile_args(repro):
    """The teenyc compile arguments of the reproducer's `teenyc run` line."""
    with open(repro) as f:
        for line in f:
            if line.startswith("# teenyc run "):
                words = shlex.split(line[2:])[2:]  # drop "teenyc run"
                break
        else:
            return None
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w in RUN_ONLY:
            i += 2
            continue
        if w == "--target":  # the GPU's own target, as the GPU engine compiles
            i += 2
            continue
        if w in ("--quiet", "-q", "--debug"):
            i += 1
            continue
        out.append(w)
        i += 1
    src = os.path.join(os.path.dirname(repro), out[0])
    return [src] + out[1:] + ["--target", "sm_90a", "--mode", "offline"]


def args_from_case(repro):
    """teenyc's arguments from a reproducer's own lines (older ones have no
    `# teenyc run` line): kernel, num_warps, dtype and const bindings."""
    args, src = [], None
    for line in open(repro):
        w = line.split()
        if len(w) >= 2 and w[0] == "kernel":
            args += ["--kernel", w[1]]
        elif len(w) >= 2 and w[0] == "num_warps":
            args += ["--num-warps", w[1]]
        elif len(w) >= 3 and w[0] == "dtype":
            args += ["--dtype", f"{w[1]}={w[2]}"]
        elif len(w) >= 3 and w[0] == "const":
            args += ["--const", f"{w[1]}={w[2]}"]
        elif len(w) >= 2 and w[0] == "source":
            src = os.path.join(os.path.dirname(repro), w[1])
    if not src:
        return None
    return [src] + args + ["--target", "sm_90a", "--mode", "offline"]


def tool(name):
    try:
        import triton
    except ImportError:
        return None
    for d in ("backends/nvidia/bin", "third_party/cuda/bin"):
        p = os.path.join(os.path.dirname(triton.__file__), d, name)
        if os.path.exists(p):
            return p
    return None


def replay(fuzz, repro, jit_opt, ptx=None):
    """The replay's verdict and its first lines; ptx: a PTX file launched in
    place of the generated one (difffuzz's $DFZ_GPU_PTX)."""
    env = dict(os.environ)
    env.pop("DFZ_GPU_PTX", None)
    if ptx:
        env["DFZ_GPU_PTX"] = ptx
    if jit_opt is not None:
        env["TEENY_CUDA_JIT_OPT"] = str(jit_opt)
    try:
        r = subprocess.run([fuzz, "--engine", "gpu", "--replay", repro, "--timeout", "60"],
                           capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", "timeout"
    lines = (r.stdout + r.stderr).strip().splitlines()
    first = lines[0] if lines else f"(rc {r.returncode}, no output)"
    return first.split(": ", 1)[-1], "\n".join(lines[:3])


def main():
    out = os.path.join(os.environ.get("OUT", "."), "sass")
    os.makedirs(out, exist_ok=True)
    teenyc = os.environ["TEENYC"]
    fuzz = os.environ["DIFFFUZZ"]
    ptxas, nvdisasm = tool("ptxas"), tool("nvdisasm")
    print(f"ptxas {ptxas}, nvdisasm {nvdisasm}")
    repros = sys.argv[1:] or sorted(glob.glob("tests/diff/repro-gpu/*.txt"))
    for r in repros:
        name = os.path.splitext(os.path.basename(r))[0]
        verdict, detail = replay(fuzz, r, None)
        verdict0, _ = replay(fuzz, r, 0)
        print(f"{name}: jit default: {verdict} | jit -O0: {verdict0}")
        if "mismatch" in verdict or "error" in verdict:
            print("   " + detail.replace("\n", "\n   "))
        args = compile_args(r) or args_from_case(r)
        if not args:
            continue
        ptx = os.path.join(out, name + ".ptx")
        c = subprocess.run([teenyc] + args + ["--emit", "ptx", "-o", ptx], capture_output=True,
                           text=True)
        if c.returncode:
            print(f"   teenyc failed: {c.stderr.strip()[:300]}")
            continue
        if ptxas and nvdisasm:
            cubin = os.path.join(out, name + ".cubin")
            p = subprocess.run([ptxas, "-arch=sm_90a", "-O3", ptx, "-o", cubin],
                               capture_output=True, text=True)
            if p.returncode:
                print(f"   ptxas failed: {p.stderr.strip()[:300]}")
                continue
            with open(os.path.join(out, name + ".sass"), "w") as f:
                subprocess.run([nvdisasm, "-c", "-hex", cubin], stdout=f, stderr=subprocess.STDOUT)
            os.remove(cubin)
    # one archive: the device tool brings back only a few files per call
    with tarfile.open(out + ".tgz", "w:gz") as t:
        t.add(out, arcname="sass")
    shutil.rmtree(out)
    print(f"PTX and SASS in {out}.tgz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
