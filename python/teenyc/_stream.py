"""teenyc._stream — the caller's current CUDA stream, so a launch is
ordered with the caller's own work as a Triton launch is: torch's current
stream when torch is in use, else cupy's, else the legacy default stream
(0).  Neither library is imported here: only one already imported is
asked.
"""
import sys


def current(device=None):
    """The current stream as an int (a CUstream; 0: the default stream)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_stream(device).cuda_stream
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        return cupy.cuda.get_current_stream().ptr
    return 0


def of(stream):
    """A stream given by the caller (None, an int, or an object with
    cuda_stream or ptr, as torch and cupy streams have) as an int."""
    if stream is None:
        return current()
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)
