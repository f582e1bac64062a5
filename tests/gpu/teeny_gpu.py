"""tests/gpu/teeny_gpu.py — run teenyc-compiled kernels on a GPU from Python.

Shared by tests/gpu/check.py (correctness) and bench/gpu.py (speed), which
run on the GPU machine (torch and triton there; none of teenyc's build
dependencies).  Kernels are compiled by the `teenyc` binary of the static
bundle (or a build tree) and loaded with the CUDA Driver API through ctypes,
in torch's context and on torch's current stream, so torch tensors are the
buffers and torch/triton/teenyc kernels time the same way.
"""
import ctypes
import os
import subprocess

import torch

_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_JIT_ERROR_LOG_BUFFER = 5
_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_CU_JIT_OPTIMIZATION_LEVEL = 7


class CudaError(RuntimeError):
    pass


class Driver:
    """The few CUDA Driver API calls we need, checked."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        torch.cuda.init()
        torch.empty(1, device="cuda")  # make torch's primary context current

    def check(self, rc, what):
        if rc != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            raise CudaError(f"{what} failed: {name.value.decode() if name.value else rc}")

    def load(self, ptx: bytes, entry: str):
        module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(8192)
        keys = [_CU_JIT_ERROR_LOG_BUFFER, _CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        values = [ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192)]
        level = os.environ.get("TEENY_CUDA_JIT_OPT")  # as libteenyc-client (docs/client.md)
        if level:
            keys.append(_CU_JIT_OPTIMIZATION_LEVEL)
            values.append(ctypes.c_void_p(int(level)))
        opts = (ctypes.c_int * len(keys))(*keys)
        vals = (ctypes.c_void_p * len(values))(*values)
        rc = self.lib.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(ptx + b"\0"),
                                         len(keys), opts, vals)
        if rc != 0:
            raise CudaError(f"cuModuleLoadDataEx failed ({rc}): {log.value.decode(errors='replace')}")
        func = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(func), module, entry.encode()),
                   f"cuModuleGetFunction({entry})")
        return module, func


class TensorDesc:
    """A tensor_desc(T, B0, ..) kernel argument (docs/dsl.md): the
    CUtensorMap of a row-major 1- or 2-D tensor with the kernel's block as
    its box, then base, shapes and every stride but the last (1 + 2 x rank
    launch parameters).  The tensormap is encoded (cuTensorMapEncodeTiled)
    only where the kernel's own test (dsl/nvptx/tma.c `encoded`) says the
    TMA takes the tensor; elsewhere it stays zero and the kernel uses plain
    loads, as client/tensormap.c does."""

    _DTYPES = {1: 0, 2: 1, 4: 2, 8: 4}  # CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32/64 by size

    def __init__(self, driver, t, block):
        assert t.dim() == len(block) and t.dim() in (1, 2) and t.stride(-1) == 1
        self.t = t
        es = t.element_size()
        shape, strides = list(t.shape), list(t.stride())
        self.tma = (t.data_ptr() % 16 == 0 and all(0 < n < 2**31 for n in shape) and
                    all((s * es) % 16 == 0 and s * es < 2**40 and s >= shape[k + 1]
                        for k, s in enumerate(strides[:-1])))
        self.map = (ctypes.c_uint64 * 16)()
        if self.tma:
            r = t.dim()
            dims = (ctypes.c_uint64 * r)(*reversed(shape))
            gstrides = (ctypes.c_uint64 * max(r - 1, 1))(*[s * es for s in reversed(strides[:-1])])
            box = (ctypes.c_uint32 * r)(*reversed(block))
            estr = (ctypes.c_uint32 * r)(*([1] * r))
            driver.check(driver.lib.cuTensorMapEncodeTiled(
                ctypes.byref(self.map), self._DTYPES[es], r, ctypes.c_void_p(t.data_ptr()),
                dims, gstrides, box, estr, 0, 0, 2, 0), "cuTensorMapEncodeTiled")
        self.holders = [self.map, ctypes.c_uint64(t.data_ptr())]
        self.holders += [ctypes.c_int32(n) for n in shape]
        self.holders += [ctypes.c_int64(s) for s in strides[:-1]]


class Kernel:
    """One compiled specialisation: PTX from teenyc, loaded once."""

    def __init__(self, driver, teenyc, file, kernel, bindings, num_warps=4, target="sm_90a",
                 num_stages=0):
        self.driver = driver
        self.name = kernel
        args = [teenyc, file, "--kernel", kernel, "--num-warps", str(num_warps),
                "--target", target]
        if num_stages:
            args += ["--num-stages", str(num_stages)]
        for k, v in bindings.items():
            args += ["--const" if isinstance(v, int) else "--dtype", f"{k}={v}"]
        info = subprocess.run(args + ["--emit", "info"], check=True, capture_output=True,
                              text=True).stdout
        fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
        self.id = fields["id"].strip()
        self.entry = fields["entry"].strip()
        self.threads = int(fields["num_warps"].split("(")[1].split()[0])
        self.shared = int(fields["shared"].split()[0])
        self.compile_ms = float(fields["compile"].split()[0])
        self.ptx = subprocess.run(args + ["--emit", "ptx"], check=True,
                                  capture_output=True).stdout
        self.module, self.func = driver.load(self.ptx, self.entry)
        if self.shared > 48 * 1024:
            driver.check(driver.lib.cuFuncSetAttribute(
                self.func, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self.shared),
                "cuFuncSetAttribute(max dynamic shared)")

    def __call__(self, grid, *args):
        """Launch on torch's current stream.  args: tensors (pointers) or
        (value, ctype) pairs / python ints (i32) / floats (f32)."""
        holders = []
        for a in args:
            if isinstance(a, TensorDesc):
                holders += a.holders
            elif isinstance(a, torch.Tensor):
                holders.append(ctypes.c_uint64(a.data_ptr()))
            elif isinstance(a, tuple):
                holders.append(a[1](a[0]))
            elif isinstance(a, float):
                holders.append(ctypes.c_float(a))
            else:
                holders.append(ctypes.c_int32(a))
        params = (ctypes.c_void_p * len(holders))(
            *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
        g = list(grid) + [1] * (3 - len(grid))
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.driver.check(self.driver.lib.cuLaunchKernel(
            self.func, g[0], g[1], g[2], self.threads, 1, 1, self.shared, stream, params, None),
            f"cuLaunchKernel({self.id})")


def teenyc_path():
    """The teenyc binary: $TEENYC, the carried bundle, or a build tree."""
    for p in (os.environ.get("TEENYC"), ".bundle/bin/teenyc", "build/bin/teenyc"):
        if p and os.path.exists(p):
            return os.path.abspath(p)
    raise SystemExit("teenyc not found: set TEENYC or carry .bundle/bin/teenyc")


def rel_err(out, ref):
    """||out - ref|| / ||ref|| in float64; inf if out has NaN."""
    out = out.double()
    ref = ref.double()
    if torch.isnan(out).any():
        return float("inf")
    den = torch.linalg.vector_norm(ref)
    num = torch.linalg.vector_norm(out - ref)
    return float(num / den) if den > 0 else float(num)


def poison(t):
    """Fill with NaN (floats) or -1 (ints) so unwritten elements show."""
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    else:
        t.fill_(-1)
    return t
