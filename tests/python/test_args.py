"""tests/python/test_args.py — what a launch checks before it touches the
GPU, with arrays that speak __cuda_array_interface__ or DLPack but have no
GPU behind them.  Good arguments get as far as the CUDA driver (absent
here: CudaError); bad ones are an ArgumentError naming the parameter."""
import os

import pytest

import teenyc
from fakes import DL_BFLOAT, DL_CPU, DL_CUDA, DL_FLOAT, CudaArray, DLArray


@pytest.fixture
def add(kernels):
    return teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=teenyc.Client(mode="offline"))


@pytest.fixture
def matmul(kernels):
    return teenyc.kernel(os.path.join(kernels, "matmul.c"), client=teenyc.Client(mode="offline"))


def reaches_the_driver(launch):
    """The launch passed every check: it failed only for want of a GPU."""
    with pytest.raises(teenyc.CudaError, match="CUDA driver not available"):
        launch()


def test_dtype_dispatch_from_the_tensors(add):
    for typestr, dt in (("<f4", "f32"), ("<f2", "f16")):
        a = CudaArray((1000,), typestr)
        reaches_the_driver(lambda: add[(1,)](a, a, a, 1000, BLOCK_SIZE=1024, target="sm_90a"))
    b = DLArray((1000,), (DL_BFLOAT, 16))  # bf16 comes by DLPack (torch has no typestr for it)
    reaches_the_driver(lambda: add[(1,)](b, b, b, 1000, BLOCK_SIZE=1024, target="sm_90a"))
    assert b.streams and b.streams[0] == 1  # asked for the legacy default stream
    assert add.compile(D="bf16", BLOCK_SIZE=1024).id == "vector_add__bf16__1024"


def test_wrong_dtype(add, kernels):
    a, h = CudaArray((8,), "<f4"), CudaArray((8,), "<f2")
    with pytest.raises(teenyc.ArgumentError, match="b_ptr is f16 but a_ptr is f32: both are D"):
        add[(1,)](a, h, a, 8, BLOCK_SIZE=64)
    i = CudaArray((8,), "<i4")
    with pytest.raises(teenyc.ArgumentError, match="dtype i32 is not supported for D"):
        add[(1,)](i, i, i, 8, BLOCK_SIZE=64)
    with pytest.raises(teenyc.ArgumentError, match="D=f16 given, but the tensors bind D to f32"):
        add[(1,)](a, a, a, 8, BLOCK_SIZE=64, D="f16")
    absmax = teenyc.kernel(os.path.join(kernels, "absmax.c"), client=teenyc.Client(mode="offline"))
    with pytest.raises(teenyc.ArgumentError, match="out_ptr wants f32 elements, got a f16"):
        absmax[(1,)](a, h, 8, BLOCK_SIZE=1024)  # out_ptr is a concrete ptr(f32)


def test_wrong_device(add):
    cpu = DLArray((8,), (DL_FLOAT, 32), device=(DL_CPU, 0))
    with pytest.raises(teenyc.ArgumentError, match="a_ptr is on cpu"):
        add[(1,)](cpu, cpu, cpu, 8, BLOCK_SIZE=64)
    far = DLArray((8,), device=(DL_CUDA, 3))
    with pytest.raises(teenyc.ArgumentError, match="a_ptr is on cuda:3, but the current device"):
        add[(1,)](far, far, far, 8, BLOCK_SIZE=64)


def test_non_contiguous(add, matmul):
    t = CudaArray((64, 64), "<f4", strides=(4, 256))  # a transposed view
    with pytest.raises(teenyc.ArgumentError, match="a_ptr is not contiguous"):
        add[(1,)](t, t, t, 8, BLOCK_SIZE=64)
    d = DLArray((64, 32), strides=(64, 1))  # every other row
    with pytest.raises(teenyc.ArgumentError, match="not contiguous"):
        add[(1,)](d, d, d, 8, BLOCK_SIZE=64)
    h = CudaArray((64, 64), "<f2", strides=(2, 128))
    # matmul takes strides: any layout goes
    reaches_the_driver(lambda: matmul[(4,)](h, h, h, 64, 64, 64, 1, 64, 1, 64, 1, 64,
                                            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8,
                                            num_warps=4, target="sm_90a"))


def test_argument_count_kinds_and_ranges(add):
    a = CudaArray((8,))
    with pytest.raises(teenyc.ArgumentError, match="takes 4 arguments, got 3"):
        add[(1,)](a, a, a, BLOCK_SIZE=64)
    with pytest.raises(teenyc.ArgumentError, match="i32 n_elements is a scalar, got a tensor"):
        add[(1,)](a, a, a, a, BLOCK_SIZE=64)
    with pytest.raises(teenyc.ArgumentError, match="b_ptr wants a CUDA tensor"):
        add[(1,)](a, 3, a, 8, BLOCK_SIZE=64)
    with pytest.raises(teenyc.ArgumentError, match="n_elements=4294967296 does not fit i32"):
        add[(1,)](a, a, a, 2**32, BLOCK_SIZE=64)
    with pytest.raises(teenyc.ArgumentError, match="wants an integer, got float"):
        add[(1,)](a, a, a, 8.0, BLOCK_SIZE=64)
    with pytest.raises(teenyc.ArgumentError, match="BLOCK_SIZE is a TEENY_CONST of i32 and wants an int"):
        add[(1,)](a, a, a, 8, BLOCK_SIZE="64")
    with pytest.raises(teenyc.ArgumentError, match="dtype D is not bound"):
        teenyc.kernel("#include <teeny/dsl.h>\nTEENY_DTYPE(D);\nTEENY_KERNEL(D)\n"
                      "void k(D x) {}\n", client=teenyc.Client(mode="offline"))[(1,)](1.0)
    with pytest.raises(TypeError, match="launch with a grid"):
        add(a, a, a, 8, BLOCK_SIZE=64)


def test_grids(add):
    a = CudaArray((8,))
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (teenyc.cdiv(8, meta["BLOCK_SIZE"]),)

    reaches_the_driver(lambda: add[grid](a, a, a, 8, BLOCK_SIZE=64, num_warps=2, target="sm_90a"))
    assert seen == [{"BLOCK_SIZE": 64, "num_warps": 2}]
    with pytest.raises(teenyc.ArgumentError, match="want 1 to 3 counts"):
        add[(1, 1, 1, 1)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a")


def test_protocol_errors_name_the_parameter(add):
    bad = CudaArray((8,), "<f4", strides=(3,))  # not whole elements
    with pytest.raises(teenyc.ArgumentError, match="a_ptr: strides"):
        add[(1,)](bad, bad, bad, 8, BLOCK_SIZE=64)


def test_fp8_scalars_round_as_kernels_do():
    """An fp8 scalar is packed by the library's rounding: nearest even,
    saturating at the largest finite value (docs/dsl.md)."""
    k = teenyc.kernel("#include <teeny/dsl.h>\nTEENY_KERNEL()\n"
                      "void k(f8e4m3 a, f8e5m2 b) {}\n", client=teenyc.Client(mode="offline"))
    a, b = k.params
    assert k._pack(a, 1.1, {}).value == 0x39      # 1.125
    assert k._pack(a, 500.0, {}).value == 0x7E    # saturates at 448
    assert k._pack(a, -1e30, {}).value == 0xFE
    assert k._pack(b, 1.1, {}).value == 0x3C      # 1.0
    assert k._pack(b, float("inf"), {}).value == 0x7B
    assert k.params[0].describe().startswith("f8e4m3")


def test_tensor_desc_parameters_compile_but_do_not_launch(kernels):
    k = teenyc.kernel(os.path.join(kernels, "copy_tma.c"), client=teenyc.Client(mode="offline"))
    names = [p.name for p in k.params]
    assert names[:5] == ["src_tensormap", "src_base", "src_shape0", "src_shape1", "src_stride0"]
    assert len(names) == 10
    assert k.compile(D="f32", BLOCK_M=16, BLOCK_N=256).id == "copy_tma__f32__16__256"
    a = CudaArray((8,), "<f4")
    with pytest.raises(teenyc.ArgumentError, match="tensor_desc parameters cannot be launched"):
        k[(1,)](a, a, 8, 8, 8, a, a, 8, 8, 8, D="f32", BLOCK_M=16, BLOCK_N=256)
