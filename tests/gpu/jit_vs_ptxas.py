#!/usr/bin/env python3
"""tests/gpu/jit_vs_ptxas.py — runs ON THE GPU MACHINE: two GPU-only difffuzz
reproducers (tests/diff/repro-gpu/) whose PTX reads right, run four ways:
the driver's JIT at its default level and at -O0, and cubins made by
Triton's ptxas at -O3 and -O0.  Tells whether a wrong answer comes from the
driver's JIT, from ptxas as well, or from the PTX.  Writes the ptxas -O3
SASS of each to $OUT/NAME.sass.

  python3 tests/gpu/jit_vs_ptxas.py          (TEENYC: the bundle's teenyc)
"""
import ctypes
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from teeny_gpu import Driver  # noqa: E402

CU_JIT_OPTIMIZATION_LEVEL = 7


def load(drv, image, entry, jit_opt=None):
    module = ctypes.c_void_p()
    if jit_opt is None:
        rc = drv.lib.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(image), 0, None, None)
    else:
        opts = (ctypes.c_int * 1)(CU_JIT_OPTIMIZATION_LEVEL)
        vals = (ctypes.c_void_p * 1)(ctypes.c_void_p(jit_opt))
        rc = drv.lib.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(image), 1, opts, vals)
    drv.check(rc, "cuModuleLoadDataEx")
    func = ctypes.c_void_p()
    drv.check(drv.lib.cuModuleGetFunction(ctypes.byref(func), module, entry.encode()), "get")
    return func


def launch(drv, func, threads, args):
    holders = [ctypes.c_uint64(a.data_ptr()) if isinstance(a, torch.Tensor) else ctypes.c_int32(a)
               for a in args]
    params = (ctypes.c_void_p * len(holders))(
        *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
    drv.check(drv.lib.cuLaunchKernel(func, 1, 1, 1, threads, 1, 1, 0, None, params, None), "launch")
    torch.cuda.synchronize()


def ptxas_tool(name):
    import triton
    return os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin", name)


def main():
    drv = Driver()
    tc = os.environ["TEENYC"]
    out = os.environ.get("OUT", ".")
    d = "tests/diff/repro-gpu"
    cases = [
        ("loop_max_neg_to_f32_gpu", ["-c", "B=64", "-c", "E=1", "-w", "1"], 32,
         lambda: [460, torch.full((2,), -7.0, device="cuda")], "0 in out[0]"),
        ("abs_f16_pair_gpu", ["-c", "B=64", "-c", "E=1", "-w", "1"], 32,
         lambda: [torch.tensor([(-1 if i % 3 else 5) for i in range(256)], dtype=torch.int32,
                               device="cuda"), torch.zeros(256, dtype=torch.float16, device="cuda")],
         "no negative"),
    ]
    print(subprocess.run([ptxas_tool("ptxas"), "--version"], capture_output=True,
                         text=True).stdout.strip().splitlines()[-1])
    v = ctypes.c_int()
    drv.lib.cuDriverGetVersion(ctypes.byref(v))
    print(f"driver CUDA version {v.value}")
    for name, opts, threads, mk, want in cases:
        ptx = subprocess.run([tc, f"{d}/{name}.c", "-k", "kern", "--mode", "offline",
                              "--emit", "ptx"] + opts, check=True, capture_output=True).stdout
        entry = "kern_entry_point"
        path = os.path.join(out, name + ".ptx")
        with open(path, "wb") as f:
            f.write(ptx)
        images = [("jit default", ptx + b"\0", None), ("jit -O0", ptx + b"\0", 0)]
        if b"and.b16" in ptx:  # the same with PTX's abs.f16 instead of masking the sign
            alt = ptx.replace(b"and.b16 %rs1, %rs7, 0x7FFF;", b"abs.f16 %rs1, %rs7;").replace(
                b"and.b16 %rs3, %rs8, 0x7FFF;", b"abs.f16 %rs3, %rs8;")
            images.append(("abs.f16, jit default", alt + b"\0", None))
        for lvl in ("3", "0"):
            cubin = os.path.join(out, f"{name}.O{lvl}.cubin")
            subprocess.run([ptxas_tool("ptxas"), "-arch=sm_90a", f"-O{lvl}", path, "-o", cubin],
                           check=True)
            with open(cubin, "rb") as f:
                images.append((f"ptxas -O{lvl}", f.read(), None))
            if lvl == "3":
                with open(os.path.join(out, name + ".sass"), "w") as f:
                    subprocess.run([ptxas_tool("nvdisasm"), "-c", cubin], stdout=f,
                                   stderr=subprocess.STDOUT)
            os.remove(cubin)
        for label, image, jit in images:
            args = mk()
            launch(drv, load(drv, image, entry, jit), threads, args)
            res = args[-1]
            if name.startswith("loop"):
                got = f"out[0] = {res[0].item()}"
            else:
                got = f"{int((res[:64] < 0).sum().item())} negative of 64"
            print(f"{name}: {label}: {got} (want {want})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
