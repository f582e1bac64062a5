"""teenyc._lib — libteenyc-client through ctypes: finding the library, the
structures of include/teeny/client.h and compile.h, and the prototypes.

The structures below mirror the C headers field by field; tests/python
checks their sizes and offsets against the C compiler's (abi_layout.c), so a
change to a header that is not made here fails CI rather than a launch.

The library is looked for, in order: $TEENYC_CLIENT_LIBRARY; the libdir
cmake --install wrote into _installed.py; the build tree this package sits
in (python/ beside build*/lib/); the prefix this package was installed
under (<prefix>/lib*/); then the dynamic linker's search path
("libteenyc-client.so.0").  Loaded once per process.
"""
import ctypes
import glob
import os
import threading

SONAME = "libteenyc-client.so.0"

c_char_p = ctypes.c_char_p
c_size_t = ctypes.c_size_t


class DtypeBinding(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_char_p)]


class ConstBinding(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("value", ctypes.c_int64)]


class CompileReq(ctypes.Structure):
    _fields_ = [("source", c_char_p), ("source_len", c_size_t), ("filename", c_char_p),
                ("kernel", c_char_p), ("dtypes", ctypes.POINTER(DtypeBinding)),
                ("ndtypes", c_size_t), ("consts", ctypes.POINTER(ConstBinding)),
                ("nconsts", c_size_t), ("target", c_char_p), ("num_warps", ctypes.c_int),
                ("compiler_version", c_char_p)]


class Param(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("kind", ctypes.c_int), ("dtype", ctypes.c_int)]


class Artifact(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("id", c_char_p), ("key", ctypes.c_char * 65),
                ("entry", c_char_p), ("target", c_char_p), ("num_warps", ctypes.c_int),
                ("source", ctypes.c_void_p), ("source_len", c_size_t),
                ("mlir", ctypes.c_void_p), ("mlir_len", c_size_t),
                ("ptx", ctypes.c_void_p), ("ptx_len", c_size_t),
                ("params", ctypes.POINTER(Param)), ("nparams", c_size_t),
                ("threads_per_block", ctypes.c_int), ("shared_bytes", ctypes.c_int),
                ("compile_ns", ctypes.c_uint64)]


class TensorDesc(ctypes.Structure):
    """teeny_tensor_desc (teeny/client.h).  C aligns it on 64 bytes (its
    CUtensorMap); ctypes cannot, so tensor_desc() below places one at an
    aligned address inside a larger buffer."""
    _fields_ = [("map", ctypes.c_uint64 * 16), ("base", ctypes.c_uint64),
                ("shape", ctypes.c_int32 * 4), ("stride", ctypes.c_int64 * 4),
                ("rank", ctypes.c_int), ("tma", ctypes.c_bool)]


TENSOR_DESC_ALIGN = 64


def tensor_desc():
    """A zeroed TensorDesc at a 64-byte aligned address, and the buffer
    that holds it (keep both while the descriptor is in use)."""
    buf = (ctypes.c_char * (ctypes.sizeof(TensorDesc) + TENSOR_DESC_ALIGN))()
    at = -ctypes.addressof(buf) % TENSOR_DESC_ALIGN
    return TensorDesc.from_buffer(buf, at), buf


class Diag(ctypes.Structure):
    _fields_ = [("level", ctypes.c_int), ("file", c_char_p), ("line", ctypes.c_int),
                ("col", ctypes.c_int), ("message", c_char_p), ("source_line", c_char_p)]


class Diags(ctypes.Structure):
    _fields_ = [("v", ctypes.POINTER(Diag)), ("n", c_size_t), ("cap", c_size_t),
                ("nerrors", c_size_t)]


class Result(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("error", c_char_p), ("art", Artifact),
                ("cache", ctypes.c_int), ("mode", ctypes.c_int), ("compile_ms", ctypes.c_double),
                ("diags", ctypes.POINTER(Diag)), ("ndiags", c_size_t),
                ("cubin", ctypes.c_void_p), ("cubin_len", c_size_t),
                ("cubin_arch", c_char_p), ("cubin_toolchain", c_char_p)]


class Grid(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class TuneConfig(ctypes.Structure):
    _fields_ = [("consts", ctypes.POINTER(ConstBinding)), ("nconsts", c_size_t),
                ("num_warps", ctypes.c_int)]


class TuneBench(ctypes.Structure):
    _fields_ = [("result", ctypes.c_void_p), ("config", ctypes.POINTER(TuneConfig)),
                ("index", c_size_t), ("grid", Grid), ("stream", ctypes.c_void_p),
                ("args", ctypes.POINTER(ctypes.c_void_p)), ("nargs", c_size_t),
                ("warmup_ms", ctypes.c_int), ("rep_ms", ctypes.c_int)]


# teeny_tune_grid_fn and teeny_tune_timer
GRID_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(TuneConfig),
                           ctypes.POINTER(Grid))
TIMER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(TuneBench),
                            ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, c_size_t)


class TuneReq(ctypes.Structure):
    _fields_ = [("base", ctypes.POINTER(CompileReq)), ("configs", ctypes.POINTER(TuneConfig)),
                ("nconfigs", c_size_t), ("problem", c_char_p), ("grid", GRID_FN),
                ("grid_ctx", ctypes.c_void_p), ("args", ctypes.POINTER(ctypes.c_void_p)),
                ("nargs", c_size_t), ("stream", ctypes.c_void_p), ("warmup_ms", ctypes.c_int),
                ("rep_ms", ctypes.c_int), ("wait_ms", ctypes.c_int), ("timer", ctypes.c_void_p),
                ("timer_ctx", ctypes.c_void_p), ("gpu", c_char_p), ("driver", c_char_p)]


class TuneResult(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("error", c_char_p), ("index", c_size_t),
                ("config", TuneConfig), ("best_ms", ctypes.c_double),
                ("candidates", ctypes.c_uint32), ("source", ctypes.c_int),
                ("times_ms", ctypes.POINTER(ctypes.c_double)), ("lookup_ms", ctypes.c_double)]


class ClientOpts(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("socket_path", c_char_p), ("cache_dir", c_char_p),
                ("client_name", c_char_p), ("timeout_ms", ctypes.c_int),
                ("memo_entries", ctypes.c_long), ("restart_wait_ms", ctypes.c_int)]


class GenericInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("is_dtype", ctypes.c_bool), ("const_dtype", ctypes.c_int),
                ("allowed", ctypes.POINTER(ctypes.c_int)), ("nallowed", c_size_t)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("kind", ctypes.c_int), ("dtype", ctypes.c_int),
                ("generic", ctypes.c_int)]


class KernelInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("line", ctypes.c_int),
                ("generics", ctypes.POINTER(ctypes.c_int)), ("ngenerics", c_size_t),
                ("params", ctypes.POINTER(ParamInfo)), ("nparams", c_size_t),
                ("backward", ctypes.c_int), ("forward", ctypes.c_int)]


class SourceInfo(ctypes.Structure):
    _fields_ = [("generics", ctypes.POINTER(GenericInfo)), ("ngenerics", c_size_t),
                ("kernels", ctypes.POINTER(KernelInfo)), ("nkernels", c_size_t)]


# name: (restype, argtypes)
_PROTOTYPES = {
    "teeny_client_open": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(ClientOpts)]),
    "teeny_client_close": (None, [ctypes.c_void_p]),
    "teeny_client_errmsg": (c_char_p, [ctypes.c_void_p]),
    "teeny_client_notice": (c_char_p, [ctypes.c_void_p]),
    "teeny_client_active_mode": (ctypes.c_int, [ctypes.c_void_p]),
    "teeny_client_mode_name": (c_char_p, [ctypes.c_int]),
    "teeny_client_mode_parse": (ctypes.c_int, [c_char_p]),
    "teeny_client_socket": (c_char_p, [ctypes.c_void_p]),
    "teeny_client_store_root": (c_char_p, [ctypes.c_void_p]),
    "teeny_client_compile": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(CompileReq),
                                            ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]),
    "teeny_client_result_free": (None, [ctypes.c_void_p]),
    "teeny_client_cache_name": (c_char_p, [ctypes.c_int]),
    "teeny_source_inspect": (ctypes.c_int, [c_char_p, c_size_t, c_char_p,
                                            ctypes.POINTER(ctypes.c_void_p),
                                            ctypes.POINTER(Diags)]),
    "teeny_source_info_destroy": (None, [ctypes.c_void_p]),
    "teeny_diags_init": (None, [ctypes.POINTER(Diags)]),
    "teeny_diags_close": (None, [ctypes.POINTER(Diags)]),
    "teeny_diag_format": (c_size_t, [ctypes.POINTER(Diag), ctypes.c_char_p, c_size_t]),
    "teeny_dtype_name": (c_char_p, [ctypes.c_int]),
    "teeny_dtype_parse": (ctypes.c_int, [c_char_p]),
    "teeny_dtype_size": (ctypes.c_int, [ctypes.c_int]),
    "teeny_scalar_pack": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int, ctypes.c_double]),
    "teeny_strerror": (c_char_p, [ctypes.c_int]),
    "teeny_err_name": (c_char_p, [ctypes.c_int]),
    "teeny_version": (c_char_p, []),
    "teeny_cuda_available": (ctypes.c_int, [ctypes.c_char_p, c_size_t]),
    "teeny_cuda_target": (ctypes.c_int, [ctypes.c_char_p, c_size_t, ctypes.c_char_p, c_size_t]),
    "teeny_module_load": (ctypes.c_int, [ctypes.POINTER(Artifact),
                                         ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.c_char_p, c_size_t]),
    "teeny_module_unload": (None, [ctypes.c_void_p]),
    "teeny_module_load_result": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                                ctypes.c_char_p, c_size_t]),
    "teeny_module_origin": (c_char_p, [ctypes.c_void_p]),
    "teeny_client_set_arch": (ctypes.c_int, [ctypes.c_void_p, c_char_p]),
    "teeny_client_arch": (c_char_p, [ctypes.c_void_p]),
    "teeny_client_tune": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(TuneReq),
                                         ctypes.POINTER(ctypes.c_void_p)]),
    "teeny_tune_result_free": (None, [ctypes.c_void_p]),
    "teeny_tune_source_name": (c_char_p, [ctypes.c_int]),
    "teeny_spec_create": (ctypes.c_int, [ctypes.POINTER(CompileReq),
                                         ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(Diags)]),
    "teeny_spec_destroy": (None, [ctypes.c_void_p]),
    "teeny_spec_nparams": (c_size_t, [ctypes.c_void_p]),
    "teeny_spec_param_block": (ctypes.c_int, [ctypes.c_void_p, c_size_t,
                                              ctypes.POINTER(ctypes.c_int),
                                              ctypes.POINTER(ctypes.c_int),
                                              ctypes.POINTER(Diags)]),
    "teeny_tensor_desc_make": (ctypes.c_int, [ctypes.POINTER(TensorDesc), ctypes.c_int,
                                              ctypes.c_uint64, ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_int64),
                                              ctypes.POINTER(ctypes.c_int64),
                                              ctypes.POINTER(ctypes.c_int),
                                              ctypes.c_char_p, c_size_t]),
    "teeny_tensor_desc_args": (c_size_t, [ctypes.POINTER(TensorDesc),
                                          ctypes.POINTER(ctypes.c_void_p)]),
    "teeny_launch": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint),
                                    ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                    ctypes.c_char_p, c_size_t]),
}

# emit bits (teeny/compile.h, teeny/client.h)
EMIT_MLIR = 1 << 0
EMIT_PTX = 1 << 1
EMIT_SOURCE = 1 << 8
CLIENT_FORCE = 1 << 16
OPT_DEBUG = b"teeny.debug"  # TEENY_OPT_DEBUG: device_assert checks compiled in
OPT_NUM_STAGES = b"teeny.num_stages"  # TEENY_OPT_NUM_STAGES: cp.async pipeline depth
OPT_UNALIGNED = b"teeny.unaligned"  # TEENY_OPT_UNALIGNED: pointer slots not on 16 bytes
PARAM_POINTER = 1
PARAM_TENSORMAP = 2  # a tensor_desc parameter's CUtensorMap (teeny/compile.h)
SIZE_MAX = ctypes.c_size_t(-1).value
MODES = {"default": 0, "auto": 1, "daemon": 2, "embedded": 3, "offline": 4}


def _candidates():
    env = os.environ.get("TEENYC_CLIENT_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    try:  # an installed package knows its library
        from . import _installed
        out.append(os.path.join(_installed.LIBDIR, SONAME))
    except ImportError:
        pass
    # a build tree: <src>/python/teenyc -> <src>/build*/lib/
    src = os.path.dirname(os.path.dirname(here))
    out += sorted(glob.glob(os.path.join(src, "build*", "lib", SONAME)))
    # an install: <prefix>/lib*/python3*/.../teenyc -> <prefix>/lib*/
    parts = here.split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        if parts[i].startswith("lib"):
            out.append(os.sep.join(parts[:i + 1] + [SONAME]))
            out.append(os.sep.join(parts[:i] + ["lib", SONAME]))
    out.append(SONAME)
    return out


_lock = threading.Lock()
_lib = None


def lib():
    """The loaded library with every prototype set (loads it once)."""
    global _lib
    with _lock:
        if _lib is None:
            _lib = _load()
        return _lib


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
            continue
        for name, (res, args) in _PROTOTYPES.items():
            fn = getattr(handle, name)
            fn.restype = res
            fn.argtypes = args
        handle.path = path
        return handle
    raise ImportError("teenyc: cannot load libteenyc-client (" + "; ".join(tried or [SONAME])
                      + "); set TEENYC_CLIENT_LIBRARY to its path")


def text(p):
    """A C string as str ("" for NULL)."""
    return p.decode("utf-8", "replace") if p else ""
