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


def test_tensor_desc_parameters_take_tensors(kernels):
    k = teenyc.kernel(os.path.join(kernels, "copy_tma.c"), client=teenyc.Client(mode="offline"))
    # one argument per source parameter; each stands for its 5 launch slots
    assert [(p.name, p.rank, p.slot) for p in k.params] == [("src", 2, 0), ("dst", 2, 5)]
    assert k.signature() == "copy_tma(tensor_desc(D, rank 2) src, tensor_desc(D, rank 2) dst)"
    assert k.compile(D="f32", BLOCK_M=16, BLOCK_N=256).id == "copy_tma__f32__16__256"
    # good tensors get as far as the driver, strided rows included
    a = CudaArray((8, 300), "<f4")
    rows = CudaArray((8, 300), "<f4", strides=(4 * 1024, 4))
    reaches_the_driver(lambda: k[(1,)](a, rows, BLOCK_M=16, BLOCK_N=256))
    with pytest.raises(teenyc.ArgumentError, match="takes 2 arguments, got 10"):
        k[(1,)](a, a, 8, 8, 8, a, a, 8, 8, 8, BLOCK_M=16, BLOCK_N=256)
    with pytest.raises(teenyc.ArgumentError, match="wants a tensor of 2 dims, got shape"):
        k[(1,)](CudaArray((8,), "<f4"), a, BLOCK_M=16, BLOCK_N=256)
    with pytest.raises(teenyc.ArgumentError, match="last dim must be contiguous"):
        k[(1,)](a, CudaArray((8, 300), "<f4", strides=(4, 32)), BLOCK_M=16, BLOCK_N=256)
    with pytest.raises(teenyc.ArgumentError, match="dst is f16 but src is f32"):
        k[(1,)](a, CudaArray((8, 300), "<f2"), BLOCK_M=16, BLOCK_N=256)
    with pytest.raises(teenyc.ArgumentError, match="wants a CUDA tensor"):
        k[(1,)](a, 3, BLOCK_M=16, BLOCK_N=256)


def test_tensor_desc_blocks_come_from_the_bindings(kernels):
    k = teenyc.kernel(os.path.join(kernels, "copy_tma.c"), client=teenyc.Client(mode="offline"))
    assert k._desc_blocks({"D": "f16"}, {"BLOCK_M": 32, "BLOCK_N": 128}, 4, "sm_90a",
                          False) == {0: (32, 128), 5: (32, 128)}
    # expressions of the consts, and a block that is no power of two
    src = """#include <teeny/dsl.h>
TEENY_CONST(B);
TEENY_KERNEL(B)
void twice(tensor_desc(f32, B, 2 * B) x, f32 *out) {
    store(out + program_id(0), sum(sum(load_tensor_descriptor(x, 0, 0), 1), 0));
}
"""
    t = teenyc.Kernel(src, client=teenyc.Client(mode="offline"))
    assert [p.describe() for p in t.params] == ["tensor_desc(f32, rank 2) x", "ptr(f32) out"]
    assert t._desc_blocks({}, {"B": 8}, 4, None, False) == {0: (8, 16)}
    with pytest.raises(teenyc.CompileError) as e:
        t._desc_blocks({}, {"B": 3}, 4, None, False)
    assert any("not a power of two" in d for d in e.value.diagnostics), e.value.diagnostics


def test_tensor_desc_arguments(kernels):
    """The launch slots of a descriptor: the tensormap, the base, shapes and
    the strides but the last.  Rows the TMA cannot take (not a multiple of
    16 bytes) leave the tensormap zero without asking the driver; a base
    not 16-byte aligned is refused, as for any pointer argument."""
    k = teenyc.kernel(os.path.join(kernels, "copy_tma.c"), client=teenyc.Client(mode="offline"))
    import ctypes
    from teenyc import _arrays
    src = k.params[0]
    odd = CudaArray((40, 300), "<f4", strides=(4 * 301, 4), ptr=0x7F0000001040)
    keep = []
    addrs = k._desc_args(src, _arrays.view(odd), {"D": "f32"}, (16, 256), keep)
    assert len(addrs) == 5
    assert addrs[0] % 64 == 0  # the CUtensorMap's alignment
    assert not any(ctypes.string_at(addrs[0], 128))
    assert ctypes.c_uint64.from_address(addrs[1]).value == 0x7F0000001040
    assert [ctypes.c_int32.from_address(a).value for a in addrs[2:4]] == [40, 300]
    assert ctypes.c_int64.from_address(addrs[4]).value == 301
    # an aligned base is one the TMA takes: encoding it needs the driver
    good = CudaArray((40, 300), "<f4", strides=(4 * 304, 4), ptr=0x7F0000001000)
    with pytest.raises(teenyc.CudaError, match="CUDA driver not available"):
        k._desc_args(src, _arrays.view(good), {"D": "f32"}, (16, 256), [])
    with pytest.raises(teenyc.ArgumentError, match="block dims powers of two"):
        k._desc_args(src, _arrays.view(odd), {"D": "f32"}, (16, 100), [])
    shifted = CudaArray((40, 300), "<f4", strides=(4 * 304, 4), ptr=0x7F0000001004)
    with pytest.raises(teenyc.ArgumentError, match="base must be 16-byte aligned"):
        k._desc_args(src, _arrays.view(shifted), {"D": "f32"}, (16, 256), [])
    with pytest.raises(teenyc.ArgumentError, match="src is not 16-byte aligned"):
        k[(1,)](shifted, good, BLOCK_M=16, BLOCK_N=256)


def test_unaligned_pointers_get_a_specialisation_of_their_own(add):
    """Kernels assume 16-byte aligned pointers; a tensor off 16 bytes (a
    view such as x[1:]) is compiled for with TEENY_OPT_UNALIGNED naming its
    slot, so its accesses test their alignment at run time."""
    a = CudaArray((8,), "<f4")
    off = CudaArray((8,), "<f4", ptr=0x7F0000001004)
    reaches_the_driver(lambda: add[(1,)](a, a, a, 8, BLOCK_SIZE=64, target="sm_90a"))
    for _ in range(2):  # the second call after a warm one takes the fast path first
        reaches_the_driver(lambda: add[(1,)](a, off, off, 8, BLOCK_SIZE=64, target="sm_90a"))
    keys = [dict(k[1]) for k in add._compiled]
    assert {"BLOCK_SIZE": 64} in keys and {"BLOCK_SIZE": 64, "teeny.unaligned": 0b110} in keys
    c = add.compile(D="f32", BLOCK_SIZE=1024)
    c_off = add.client().compile(add.source, "vector_add", {"D": "f32"},
                                 {"BLOCK_SIZE": 1024, "teeny.unaligned": 0b10})
    with pytest.raises(teenyc.CompileError, match="not a pointer parameter") as e:
        add.client().compile(add.source, "vector_add", {"D": "f32"},
                             {"BLOCK_SIZE": 64, "teeny.unaligned": 8})
    assert any("bit 3 is n_elements, not a pointer parameter" in d for d in e.value.diagnostics)
    # b_ptr's vector loads now test its alignment first (and.b64 on its low bits)
    assert "and.b64" in c_off.ptx and "and.b64" not in c.ptx

