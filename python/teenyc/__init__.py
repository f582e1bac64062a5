"""teenyc — compile teenyc kernels through teenycd and launch them from
Python on any CUDA tensor (torch, cupy: __cuda_array_interface__ or DLPack),
on the caller's current stream, Triton-style:

    import teenyc
    add = teenyc.kernel("examples/kernels/vector_add.c")
    add[(n + 1023) // 1024,](a, b, out, n, BLOCK_SIZE=1024)

Compiles go to teenycd (socket discovery as for the teenyc tools); with no
daemon reachable they run in process (embedded against the store, else
offline), which one a RuntimeWarning says once.  teenyc.autotune tunes a
kernel once per node, shared through teenycd.  docs/python.md is the
guide.  Only the standard library: libteenyc-client through ctypes.
"""
from ._client import Client, Compiled, default_client
from ._errors import ArgumentError, CompileError, CudaError, TeenycError
from ._kernel import Kernel, kernel
from ._tune import Autotuner, Config, Tuned, autotune

__all__ = ["kernel", "Kernel", "Client", "Compiled", "default_client", "TeenycError",
           "CompileError", "ArgumentError", "CudaError", "version", "cdiv", "autotune",
           "Autotuner", "Config", "Tuned"]


def version():
    """The libteenyc-client version string ("0.1.0")."""
    from . import _lib
    return _lib.text(_lib.lib().teeny_version())


def cdiv(a, b):
    """Ceiling division, for grids: cdiv(n, BLOCK)."""
    return -(-a // b)
