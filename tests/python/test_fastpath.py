"""tests/python/test_fastpath.py — the warm path of kernel[grid](...): what
is compiled when (compiles counted through the client), and that a call
taking the prepared launch still makes every argument check and packs the
right values.

Part of this file has no stand-in at all: the compile cache is seen
through a counting client while the launches fail at the (absent) CUDA
driver.  The rest needs a launch to have succeeded once — a warm path only
exists after a module was loaded — so there the module load and
teeny_launch are replaced by a recorder (`recorder` below): those tests
check what reaches teeny_launch (grid, stream, argument slots) and which
calls are refused before it; they launch nothing and do not claim to.
Launching for real is tests/gpu/python_gpu.py's.
"""
import ctypes
import os
import sys
import threading
import types

import pytest

import teenyc
from teenyc import _kernel
from fakes import DL_CPU, DL_CUDA, DL_FLOAT, CudaArray, DLArray


class Counting:
    """A client that counts the compiles asked of it."""

    def __init__(self):
        self.inner = teenyc.Client(mode="offline")
        self.calls = []

    def compile(self, source, kernel, dtypes=None, consts=None, num_warps=0, target=None,
                filename=None, force=False, debug=False):
        self.calls.append((dict(dtypes or {}), dict(consts or {}), num_warps, target, debug))
        return self.inner.compile(source, kernel, dtypes, consts, num_warps, target, filename,
                                  force, debug)


@pytest.fixture
def counting():
    return Counting()


@pytest.fixture
def add(kernels, counting):
    return teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=counting)


# ---- the compile cache, no stand-in ----------------------------------------------------------

def test_compiles_once_per_specialisation_without_a_driver(add, counting):
    a, h = CudaArray((8,), "<f4"), CudaArray((8,), "<f2")

    def launch(*args, **meta):
        with pytest.raises(teenyc.CudaError, match="CUDA driver not available"):
            add[(1,)](*args, **meta)

    launch(a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")
    launch(a, a, a, 9, BLOCK_SIZE=64, target="sm_90a")           # another n: same kernel
    assert len(counting.calls) == 1
    launch(h, h, h, 8, BLOCK_SIZE=64, target="sm_90a")           # dtype: a new compile
    launch(a, a, a, 8, BLOCK_SIZE=128, target="sm_90a")          # constant
    launch(a, a, a, 8, BLOCK_SIZE=64, num_warps=8, target="sm_90a")  # num_warps
    launch(a, a, a, 8, BLOCK_SIZE=64, target="sm_90a", debug=True)   # debug
    assert [c[0]["D"] for c in counting.calls] == ["f32", "f16", "f32", "f32", "f32"]
    assert [c[1]["BLOCK_SIZE"] for c in counting.calls] == [64, 64, 128, 64, 64]
    assert [c[2] for c in counting.calls] == [4, 4, 4, 8, 4]
    assert [c[4] for c in counting.calls] == [False] * 4 + [True]
    for args, meta in [((h, h, h, 3), dict(BLOCK_SIZE=64)), ((a, a, a, 3), dict(BLOCK_SIZE=128)),
                       ((a, a, a, 3), dict(BLOCK_SIZE=64, num_warps=8))]:
        launch(*args, target="sm_90a", **meta)
    assert len(counting.calls) == 5  # every one of them compiled once


# ---- the warm path, module load and teeny_launch recorded ------------------------------------

class Recorder:
    """Stands in for the module load and teeny_launch; keeps what each
    launch was given, its argument slots read through argv as the driver
    reads them."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.loads = []
        self.launches = []
        self.rc = 0

    def load(self, lib, compiled):
        self.loads.append(compiled.id)
        return 0x1000 + len(self.loads)

    def __call__(self, module, grid, stream, argv, err, errsz):
        g = tuple((ctypes.c_uint * 3).from_address(grid))
        ptrs = (ctypes.c_void_p * len(self.kernel.params)).from_address(argv)
        slots = []
        for p, addr in zip(self.kernel.params, ptrs):
            ct = ctypes.c_uint64 if p.pointer else {"i32": ctypes.c_int32}[p.dtype]
            slots.append(ct.from_address(addr).value)
        self.launches.append((module, g, stream, tuple(slots)))
        if self.rc:
            msg = b"cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (1): recorded\0"
            ctypes.memmove(err, msg, len(msg))
        return self.rc


@pytest.fixture
def recorder(add, monkeypatch):
    r = Recorder(add)
    monkeypatch.setattr(_kernel, "_load_module", r.load)
    monkeypatch.setattr(_kernel, "_launch_function", lambda lib: r)
    return r


T = "sm_90a"  # no GPU to ask


def prepared(k):
    return dict(k._fast.__dict__)


def test_warm_calls_take_the_prepared_launch(add, counting, recorder):
    a = CudaArray((8,), "<f4", ptr=0x7F0000001000)
    b = CudaArray((8,), "<f4", ptr=0x7F0000002000)
    o = DLArray((8,), (DL_FLOAT, 32), ptr=0x7F0000003000)  # DLPack beside the array interface
    add[(3,)](a, b, o, 8, BLOCK_SIZE=64, target="sm_90a")
    assert len(prepared(add)) == 1
    for n in (5, 6, 2**31 - 1, -2**31):
        add[(7, 2)](a, b, o, n, BLOCK_SIZE=64, target="sm_90a")
    add[lambda m: (teenyc.cdiv(100, m["BLOCK_SIZE"]), 1, 2)](a, b, o, 1, BLOCK_SIZE=64,
                                                            target="sm_90a")
    add[4](a, b, o, 1, BLOCK_SIZE=64, target="sm_90a", stream=0x77)
    assert len(counting.calls) == 1 and recorder.loads == ["vector_add__f32__64"]
    assert len(prepared(add)) == 1
    ptrs = (0x7F0000001000, 0x7F0000002000, 0x7F0000003000)
    assert [x[1:] for x in recorder.launches] == [
        ((3, 1, 1), 0, ptrs + (8,)), ((7, 2, 1), 0, ptrs + (5,)), ((7, 2, 1), 0, ptrs + (6,)),
        ((7, 2, 1), 0, ptrs + (2**31 - 1,)), ((7, 2, 1), 0, ptrs + (-2**31,)),
        ((2, 1, 2), 0, ptrs + (1,)), ((4, 1, 1), 0x77, ptrs + (1,))]
    assert o.streams == [1] * 7 + [0x77]  # the DLPack producer is told the stream each call
    # what decides the compile misses the table: a new specialisation
    h = CudaArray((8,), "<f2")
    add[(1,)](h, h, h, 8, BLOCK_SIZE=64, target="sm_90a")
    add[(1,)](a, a, a, 8, BLOCK_SIZE=128, target="sm_90a")
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, num_warps=8, target="sm_90a")
    assert [c[0]["D"] for c in counting.calls] == ["f32", "f16", "f32", "f32"]
    assert len(recorder.loads) == 4
    # the same specialisation spelt another way: a new entry, no new compile
    add[(1,)](a, a, a, 8, target="sm_90a", BLOCK_SIZE=64)
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, D="f32", target="sm_90a")
    assert len(counting.calls) == 4 and len(recorder.loads) == 4


def test_argument_checks_on_the_warm_path(add, recorder):
    a = CudaArray((8,), "<f4")
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target=T)
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target=T)
    assert len(prepared(add)) == 1 and len(recorder.launches) == 2
    h = CudaArray((8,), "<f2")
    t = CudaArray((64, 64), "<f4", strides=(4, 256))
    cpu = DLArray((8,), (DL_FLOAT, 32), device=(DL_CPU, 0))
    far = DLArray((8,), device=(DL_CUDA, 3))
    bad = [((a, h, a, 8), {}, "b_ptr is f16 but a_ptr is f32: both are D"),
           ((t, a, a, 8), {}, "a_ptr is not contiguous"),
           ((a, t, a, 8), {}, "b_ptr is not contiguous"),
           ((cpu, a, a, 8), {}, "a_ptr is on cpu"),
           ((a, far, a, 8), {}, "b_ptr is on cuda:3, but the current device is cuda:0"),
           ((a, a, a), {}, "takes 4 arguments, got 3"),
           ((a, a, a, a), {}, "i32 n_elements is a scalar, got a tensor"),
           ((a, 3, a, 8), {}, "b_ptr wants a CUDA tensor"),
           ((a, a, a, 2**31), {}, "n_elements=2147483648 does not fit i32"),
           ((a, a, a, -2**31 - 1), {}, "does not fit i32"),
           ((a, a, a, 8.0), {}, "wants an integer, got float"),
           ((a, a, a, 8), {"BLOCK_SIZE": 64.0}, "BLOCK_SIZE is a TEENY_CONST of i32 and wants an int"),
           ((a, a, a, 8), {"BLOCK_SIZE": True}, "BLOCK_SIZE is a TEENY_CONST of i32 and wants an int"),
           ((a, a, a, 8), {"BLOCK_SIZE": "64"}, "wants an int, got str"),
           ((a, a, a, 8), {"D": "f16", "BLOCK_SIZE": 64}, "D=f16 given, but the tensors bind D"),
           ((a, a, a, 8), {"BLOCK": 64, "BLOCK_SIZE": 64}, "unknown keyword BLOCK="),
           ((a, a, a, 8), {"BLOCK_SIZE": [64]}, "wants an int, got list")]
    for args, meta, want in bad:
        with pytest.raises(teenyc.ArgumentError, match=want):
            add[(1,)](*args, **dict({"BLOCK_SIZE": 64, "target": T}, **meta))
    for grid in [(1, 1, 1, 1), (-1,), (2**32,), (1, -2), (), lambda m: (2**32, 1)]:
        with pytest.raises(teenyc.ArgumentError, match="want 1 to 3 counts"):
            add[grid](a, a, a, 8, BLOCK_SIZE=64, target=T)
    with pytest.raises(teenyc.ArgumentError, match="BLOCK_SIZE not given"):
        add[(1,)](a, a, a, 8, target=T)
    assert len(recorder.launches) == 2  # not one of them reached teeny_launch
    # a bool for an int and a float grid are taken, as before (the slow way)
    add[(2.0,)](a, a, a, True, BLOCK_SIZE=64, target=T)
    assert recorder.launches[-1][1:] == ((2, 1, 1), 0, (a.__cuda_array_interface__["data"][0],) * 3
                                         + (1,))
    add[[2, 3]](a, a, a, 1, BLOCK_SIZE=64, target=T)  # a list is a grid too
    assert recorder.launches[-1][1] == (2, 3, 1)
    empty = CudaArray((0, 5), "<f4", strides=(4, 28))  # no elements: dense, as torch says
    add[(1,)](empty, empty, empty, 0, BLOCK_SIZE=64, target=T)
    recorder.rc = 1
    with pytest.raises(teenyc.CudaError, match="cuLaunchKernel: CUDA_ERROR_INVALID_VALUE"):
        add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target=T)


def test_another_device_loads_its_own_module(add, counting, recorder, monkeypatch):
    d0, d1 = DLArray((8,), device=(DL_CUDA, 0)), DLArray((8,), device=(DL_CUDA, 1))
    add[(1,)](d0, d0, d0, 8, BLOCK_SIZE=64, target="sm_90a")
    monkeypatch.setattr(_kernel, "_current_device", lambda: 1)
    with pytest.raises(teenyc.ArgumentError, match="a_ptr is on cuda:0, but the current device is cuda:1"):
        add[(1,)](d0, d0, d0, 8, BLOCK_SIZE=64, target="sm_90a")
    add[(1,)](d1, d1, d1, 8, BLOCK_SIZE=64, target="sm_90a")
    add[(1,)](d1, d1, d1, 8, BLOCK_SIZE=64, target="sm_90a")
    assert len(counting.calls) == 1  # one compile (one target) ...
    assert recorder.loads == ["vector_add__f32__64"] * 2  # ... loaded once per device
    assert [x[0] for x in recorder.launches] == [0x1001, 0x1002, 0x1002]
    # an array that cannot say its device is taken on the device current now
    a = CudaArray((8,))
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")
    monkeypatch.setattr(_kernel, "_current_device", lambda: 0)
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")
    assert [x[0] for x in recorder.launches][-2:] == [0x1002, 0x1001]


def test_changing_an_option_drops_the_prepared_launches(add, counting, recorder):
    a = CudaArray((8,))
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")
    assert len(prepared(add)) == 1
    add.num_warps = 8
    assert not prepared(add)
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")
    assert [c[2] for c in counting.calls] == [4, 8]
    add.contiguous = False
    t = CudaArray((64, 64), "<f4", strides=(4, 256))
    add[(1,)](t, t, t, 8, BLOCK_SIZE=64, target="sm_90a")
    add.contiguous = True
    with pytest.raises(teenyc.ArgumentError, match="not contiguous"):
        add[(1,)](t, t, t, 8, BLOCK_SIZE=64, target="sm_90a")


def test_each_thread_has_its_own_prepared_launch(add, counting, recorder):
    """Two threads never share the buffer a launch reads its arguments
    from (teeny_launch runs without the GIL)."""
    a = CudaArray((8,))
    add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")
    mine = prepared(add)
    seen = []

    def other():
        add[(1,)](a, a, a, 9, BLOCK_SIZE=64, target="sm_90a")
        add[(1,)](a, a, a, 9, BLOCK_SIZE=64, target="sm_90a")
        seen.append(prepared(add))

    th = threading.Thread(target=other)
    th.start()
    th.join()
    (k1, e1), = mine.items()
    (k2, e2), = seen[0].items()
    assert k1 == k2 and e1 is not e2 and e1.grid_addr != e2.grid_addr
    assert len(counting.calls) == 1 and len(recorder.loads) == 1


# ---- torch tensors (a stand-in module named torch, as torch answers) ------------------------

def fake_torch():
    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    class device:
        def __init__(self, kind, index):
            self.type, self.index = kind, index

    class Tensor:
        def __init__(self, shape, dt, ptr, dev=("cuda", 0), strides=None):
            self.shape, self.dtype, self._ptr, self._dev = tuple(shape), dt, ptr, dev
            self._strides = strides or tuple(teenyc._arrays.contiguous_strides(shape))

        def data_ptr(self):
            return self._ptr

        @property
        def device(self):
            return device(*self._dev)

        @property
        def is_cuda(self):
            return self._dev[0] == "cuda"

        def get_device(self):
            return self._dev[1] if self._dev[0] != "cpu" else -1

        def stride(self):
            return self._strides

        def is_contiguous(self):
            return self._strides == teenyc._arrays.contiguous_strides(self.shape)

        def __dlpack__(self, stream=None):
            raise AssertionError("teenyc reads torch tensors directly")

    Tensor.__module__ = "torch"
    torch.Tensor, torch.float32, torch.float16 = Tensor, dtype("float32"), dtype("float16")
    state = {"device": 0, "stream": {0: 0x500, 1: 0x501}}
    cuda = types.ModuleType("torch.cuda")
    cuda.is_initialized = lambda: True
    cuda.current_device = lambda: state["device"]
    cuda.current_stream = lambda d=None: types.SimpleNamespace(
        cuda_stream=state["stream"][state["device"] if d is None else d])
    torch.cuda = cuda
    torch._C = types.SimpleNamespace(_cuda_getDevice=lambda: state["device"],
                                     _cuda_getCurrentRawStream=lambda d: state["stream"][d])
    torch.state = state
    return torch


def test_torch_tensors_on_the_warm_path(add, counting, recorder, monkeypatch):
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(_kernel, "_torch_rt", None)
    x = torch.Tensor((8,), torch.float32, 0x7F0000010000)
    y = torch.Tensor((8,), torch.float32, 0x7F0000020000)
    add[(1,)](x, y, x, 8, BLOCK_SIZE=64, target="sm_90a")
    add[(2,)](x, y, x, 7, BLOCK_SIZE=64, target="sm_90a")
    assert recorder.launches[-1][1:] == ((2, 1, 1), 0x500, (x._ptr, y._ptr, x._ptr, 7))
    assert len(prepared(add)) == 1
    cases = [(torch.Tensor((4, 4), torch.float32, 1, strides=(1, 4)), "a_ptr is not contiguous"),
             (torch.Tensor((8,), torch.float32, 1, dev=("cpu", 0)), "a_ptr is on cpu"),
             (torch.Tensor((8,), torch.float32, 1, dev=("xpu", 0)), "a_ptr is on xpu"),
             (torch.Tensor((8,), torch.float32, 1, dev=("cuda", 1)), "a_ptr is on cuda:1"),
             (torch.Tensor((8,), torch.float16, 0x7F0000040000), "b_ptr is f32 but a_ptr is f16")]
    for bad, want in cases:
        with pytest.raises(teenyc.ArgumentError, match=want):
            add[(1,)](bad, y, x, 8, BLOCK_SIZE=64, target="sm_90a")
    assert len(recorder.launches) == 2
    torch.state["device"] = 1  # torch.cuda.set_device(1): its own module, its own stream
    z = torch.Tensor((8,), torch.float32, 0x7F0000030000, dev=("cuda", 1))
    add[(1,)](z, z, z, 8, BLOCK_SIZE=64, target="sm_90a")
    add[(1,)](z, z, z, 8, BLOCK_SIZE=64, target="sm_90a")
    assert [r[2] for r in recorder.launches] == [0x500, 0x500, 0x501, 0x501]
    assert len(recorder.loads) == 2 and len(counting.calls) == 1
    assert recorder.launches[-1][0] != recorder.launches[0][0]
