"""bench/python_launch.py — host-only timing of the Python package's warm
launch, `kernel[grid](...)`, up to and including the call into the
driver's cuLaunchKernel, on a machine without a GPU.

    python3 bench/python_launch.py [--calls N] [--repeats R] [--json FILE]

HOST-ONLY: the CUDA driver is replaced, in this process only, by
bench/fake_libcuda.c (built here with cc; $TEENY_CUDA_LIBRARY points
libteenyc-client at it), whose cuLaunchKernel records its arguments and
returns.  What is timed is therefore everything teenyc does per call —
the Python side, the ctypes call, libteenyc-client's teeny_launch — but
not the driver's own launch work (a few µs on a real GPU), and not
torch's: the "torch-like" rows use a small stand-in for torch (a module
named torch, defined below, with the attributes the package reads) whose
methods are Python functions, so their costs are only indicative of real
torch.  The real figures are tests/gpu/python_gpu.py's, on the GPU.

Compiles run in process (offline client); after the first call of each
row nothing is compiled.  The last launch's grid and arguments are read
back from the stand-in driver and checked against the tensors' addresses,
so a fast path that packs the wrong values fails here.
"""
import argparse
import atexit
import ctypes
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def build_fake_driver():
    d = tempfile.mkdtemp(prefix="teenyc-fakecuda-")
    atexit.register(shutil.rmtree, d, True)  # once loaded, the file is not needed
    out = os.path.join(d, "libcuda.so.1")
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", out,
                    os.path.join(HERE, "fake_libcuda.c")], check=True)
    return out


# ---- a stand-in for torch (only the attributes teenyc reads) -----------------------------

def fake_torch():
    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return "torch." + self.name

        __str__ = __repr__

    class device:
        def __init__(self, type_, index):
            self.type, self.index = type_, index

    class Stream:
        def __init__(self, ptr):
            self.cuda_stream = ptr

    class Tensor:
        def __init__(self, n, dt, ptr):
            self._ptr, self.dtype, self.shape, self._stride = ptr, dt, (n,), (1,)

        def data_ptr(self):
            return self._ptr

        @property
        def device(self):
            return device("cuda", 0)

        def get_device(self):
            return 0

        @property
        def is_cuda(self):
            return True

        def stride(self):
            return self._stride

        def is_contiguous(self):
            return True

        def __dlpack__(self, stream=None):  # torch has it; teenyc reads torch directly
            raise NotImplementedError

    Tensor.__module__ = "torch"
    torch.Tensor, torch.float32 = Tensor, dtype("float32")
    stream = Stream(0x5000)
    cuda = types.ModuleType("torch.cuda")
    cuda.is_initialized = lambda: True
    cuda.current_device = lambda: 0
    cuda.current_stream = lambda device=None: stream
    torch.cuda = cuda
    c = types.ModuleType("torch._C")
    c._cuda_getDevice = lambda: 0
    c._cuda_getCurrentRawStream = lambda index: 0x5000
    torch._C = c
    return torch


class CudaArray:
    """__cuda_array_interface__ v3, as cupy and numba give it."""

    def __init__(self, n, ptr):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False),
                                         "version": 3, "strides": None, "stream": None}


def per_call_us(fn, calls, repeats):
    for _ in range(200):
        fn()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) / calls * 1e6)
    return min(runs), statistics.median(runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json")
    opts = ap.parse_args()

    os.environ["TEENY_CUDA_LIBRARY"] = build_fake_driver()
    os.environ.setdefault("TEENY_CUDA_DEVICE", "0")
    sys.path.insert(0, os.path.join(SRC, "python"))
    import teenyc

    fake = ctypes.CDLL(os.environ["TEENY_CUDA_LIBRARY"])
    fake.fake_launches.restype = ctypes.c_uint64
    fake.fake_set_nargs(4)

    path = os.path.join(SRC, "examples", "kernels", "vector_add.c")
    client = teenyc.Client(mode="offline")
    add = teenyc.kernel(path, client=client)
    n = 1024
    src = open(path).read()
    rows = {}

    def check(ptrs, stream):
        grid, s = (ctypes.c_uint * 3)(), ctypes.c_void_p()
        args = (ctypes.c_uint64 * 8)()
        fake.fake_last(grid, ctypes.byref(s), args)
        got = (tuple(grid), s.value or 0, tuple(args[:3]), args[3] & 0xFFFFFFFF)
        want = ((1, 1, 1), stream, ptrs, n)
        assert got == want, f"the driver got {got}, want {want}"

    def row(name, fn, ptrs, stream):
        before = fake.fake_launches()
        best, med = per_call_us(fn, opts.calls, opts.repeats)
        launched = fake.fake_launches() - before
        assert launched == 200 + opts.calls * opts.repeats, launched
        check(ptrs, stream)
        rows[name] = {"min_us": round(best, 3), "median_us": round(med, 3)}
        print(f"  {name:52s} {best:7.2f} us (median {med:.2f})", flush=True)

    print(f"host-only warm per-call time, {opts.calls} calls x {opts.repeats} "
          f"(driver stubbed: bench/fake_libcuda.c), {platform.node()}:")
    a, b, o = (CudaArray(n, 0x7F0000001000 + i * 0x10000) for i in range(3))
    ptrs = tuple(x.__cuda_array_interface__["data"][0] for x in (a, b, o))
    row("kernel[(1,)](...) __cuda_array_interface__",
        lambda: add[(1,)](a, b, o, n, BLOCK_SIZE=1024), ptrs, 0)
    row("kernel[grid fn](...) __cuda_array_interface__",
        lambda: add[lambda m: (teenyc.cdiv(n, m["BLOCK_SIZE"]),)](a, b, o, n, BLOCK_SIZE=1024),
        ptrs, 0)
    tgt = teenyc._kernel._device_target(add._lib)
    best, med = per_call_us(lambda: client.compile(src, "vector_add", {"D": "f32"},
                                                   {"BLOCK_SIZE": 1024}, 4, tgt),
                            opts.calls, opts.repeats)
    rows["Client.compile memo hit"] = {"min_us": round(best, 3), "median_us": round(med, 3)}
    print(f"  {'Client.compile memo hit':52s} {best:7.2f} us (median {med:.2f})", flush=True)

    sys.modules["torch"] = torch = fake_torch()  # from here on, the stand-in is "torch"
    ta, tb, to = (torch.Tensor(n, torch.float32, 0x7F0000100000 + i * 0x10000)
                  for i in range(3))
    tptrs = tuple(x.data_ptr() for x in (ta, tb, to))
    row("kernel[(1,)](...) torch-like stand-in",
        lambda: add[(1,)](ta, tb, to, n, BLOCK_SIZE=1024), tptrs, 0x5000)
    row("kernel[grid fn](...) torch-like stand-in",
        lambda: add[lambda m: (teenyc.cdiv(n, m["BLOCK_SIZE"]),)](ta, tb, to, n,
                                                                 BLOCK_SIZE=1024),
        tptrs, 0x5000)
    info = {"host_only": True, "driver": "bench/fake_libcuda.c", "machine": platform.node(),
            "cpu": platform.processor() or platform.machine(), "python": platform.python_version(),
            "date": time.strftime("%F %T %Z", time.gmtime()), "calls": opts.calls,
            "repeats": opts.repeats, "rows": rows}
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
