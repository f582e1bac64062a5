"""teenyc._arrays — what a kernel needs to know of a tensor argument: its
device address, element dtype (teenyc's names), shape, strides (elements)
and device, read through the array protocols:

  __cuda_array_interface__   (Numba's; cupy, torch, numba): versions 0-3
  __dlpack__/__dlpack_device__   (DLPack; torch, cupy, jax): the capsule's
                             DLTensor is read and handed back untouched

torch tensors take a shorter road (data_ptr(), dtype, stride()) for speed:
the same facts, without building the interface's dictionary per call.
A CPU tensor, or one on another device, is reported as such; the caller
decides (teenyc._kernel turns it into an ArgumentError naming the
parameter).
"""
import ctypes
from collections import namedtuple

View = namedtuple("View", "ptr dtype shape strides device")  # device: ("cuda", i) | (kind, i)

# __cuda_array_interface__ typestr (without byte order) -> teenyc dtype
_TYPESTR = {"b1": "bool", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64",
            "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64",
            "f2": "f16", "f4": "f32", "f8": "f64"}
# DLPack (code, bits) -> teenyc dtype
_DLPACK = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64",
           (1, 8): "u8", (1, 16): "u16", (1, 32): "u32", (1, 64): "u64",
           (2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16",
           (6, 8): "bool", (1, 1): "bool"}
_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cuda_host", 13: "cuda_managed", 10: "rocm"}
_TORCH = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
          "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
          "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
          "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_array(x):
    """Does x speak one of the protocols (or is it a torch tensor)?"""
    t = type(x)
    return (hasattr(t, "__cuda_array_interface__") or hasattr(t, "__dlpack__")
            or hasattr(x, "__cuda_array_interface__"))


def view(x, stream=0):
    """x's View; ValueError when x describes itself in a way we cannot read.
    stream (a CUstream as int) is where x will be used: a DLPack producer
    orders its own work before it."""
    if type(x).__module__ == "torch" and hasattr(x, "data_ptr"):
        return _torch(x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(cai)
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, stream)
    raise ValueError("not an array (no __cuda_array_interface__ or __dlpack__)")


def _torch(x):
    dt = _TORCH.get(str(x.dtype).replace("torch.", ""))
    dev = x.device
    return View(x.data_ptr(), dt or str(x.dtype), tuple(x.shape), tuple(x.stride()),
                ("cuda" if dev.type == "cuda" else dev.type, dev.index or 0))


def _from_cai(cai):
    shape = tuple(int(n) for n in cai["shape"])
    typestr = cai["typestr"]
    dt = _TYPESTR.get(typestr[1:]) if typestr[:1] in "<|=" else None
    ptr = int(cai["data"][0] or 0)
    size = int(typestr[2:]) if typestr[2:].isdigit() else 1
    strides = cai.get("strides")
    if strides is None:
        elem = contiguous_strides(shape)
    else:
        if any(int(s) % size for s in strides):
            raise ValueError(f"strides {tuple(strides)} are not whole elements of {size} bytes")
        elem = tuple(int(s) // size for s in strides)
    return View(ptr, dt or f"typestr {typestr!r}", shape, elem, ("cuda", -1))


def _from_dlpack(x, stream):
    kind, index = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (2, 0)
    kind = _DLPACK_DEVICES.get(int(kind), f"device type {int(kind)}")
    if kind != "cuda":
        return View(0, "", (), (), (kind, int(index)))
    capsule = x.__dlpack__(stream=stream or 1)  # DLPack: 1 is the legacy default stream
    p = _capsule_pointer(capsule, b"dltensor")
    t = _DLTensor.from_address(p)  # DLManagedTensor begins with its DLTensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (tuple(t.strides[i] for i in range(t.ndim)) if t.strides
               else contiguous_strides(shape))
    code = (t.dtype.code, t.dtype.bits) if t.dtype.lanes == 1 else None
    dt = _DLPACK.get(code, f"DLPack dtype {t.dtype.code}/{t.dtype.bits}/{t.dtype.lanes}")
    ptr = (t.data or 0) + t.byte_offset
    return View(ptr, dt, shape, strides, (kind, int(t.device.device_id)))
    # the capsule (and with it the producer's deleter) goes when it is dropped


def contiguous_strides(shape):
    """Row-major strides, in elements, of shape."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def is_contiguous(v):
    """Row-major dense (size-1 dimensions may have any stride; a tensor of
    no elements is dense whatever its strides, as torch.is_contiguous says:
    there is no address to get wrong)."""
    if 0 in v.shape:
        return True
    want = contiguous_strides(v.shape)
    return all(n == 1 or s == w for n, s, w in zip(v.shape, v.strides, want))
