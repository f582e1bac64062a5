"""tests/python/fakes.py — device arrays without a GPU: objects that speak
__cuda_array_interface__ or DLPack the way torch and cupy do, over an
address nobody dereferences (the launch fails at the CUDA driver, which
these tests do not have, after every argument check has passed).
"""
import ctypes

class CudaArray:
    """__cuda_array_interface__ v3: shape, typestr, data, strides (bytes)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7F0000001000):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (ptr, False), "version": 3,
                                         "strides": strides, "stream": None}


# DLPack's structures (dlpack.h, v0.8), spelled again here rather than
# taken from teenyc._arrays: a producer of its own, so a mistake in the
# package's reading of the layout cannot hide behind the same mistake.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

DL_CPU, DL_CUDA = 1, 2
DL_FLOAT, DL_BFLOAT, DL_INT = 2, 4, 0


class DLArray:
    """A DLPack producer; device (type, id), dtype (code, bits), strides in
    elements (None: row-major)."""

    def __init__(self, shape, dtype=(DL_FLOAT, 32), device=(DL_CUDA, 0), strides=None,
                 ptr=0x7F0000002000):
        self.device = device
        self.streams = []
        n = len(shape)
        self._shape = (ctypes.c_int64 * max(n, 1))(*shape)
        self._strides = (ctypes.c_int64 * max(n, 1))(*strides) if strides else None
        self._m = _DLManagedTensor()
        t = self._m.dl_tensor
        t.data, t.ndim = ptr, n
        t.device = _DLDevice(*device)
        t.dtype = _DLDataType(dtype[0], dtype[1], 1)
        t.shape = self._shape
        t.strides = self._strides
        t.byte_offset = 0

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _new_capsule(ctypes.addressof(self._m), b"dltensor", None)
