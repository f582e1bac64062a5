"""teenyc._client — a libteenyc-client handle: compile through teenycd (or
in process when the daemon cannot be reached: embedded against its store,
else offline), with the client's memo in front.

One default client per process (default_client()) serves every kernel
that is not given its own; it opens at the first compile, in auto mode
unless $TEENYC_MODE says otherwise, and says once (a warning) when auto
mode fell back.
"""
import ctypes
import threading
import warnings

from . import _lib
from ._errors import CompileError, TeenycError


class Compiled:
    """One compiled specialisation: read-only fields of the result (id, key,
    entry, ptx, params, threads_per_block, shared_bytes, cache, mode,
    compile_ms).  Holds the C result until garbage collected."""

    def __init__(self, lib, result_ptr):
        self._lib = lib
        self._ptr = result_ptr
        r = ctypes.cast(result_ptr, ctypes.POINTER(_lib.Result)).contents
        a = r.art
        self._art = a
        self.id = _lib.text(a.id)
        self.key = a.key.decode()
        self.entry = _lib.text(a.entry)
        self.target = _lib.text(a.target)
        self.num_warps = a.num_warps
        self.threads_per_block = a.threads_per_block
        self.shared_bytes = a.shared_bytes
        self.ptx = ctypes.string_at(a.ptx, a.ptx_len).decode() if a.ptx else None
        self.params = [(_lib.text(a.params[i].name), a.params[i].kind == _lib.PARAM_POINTER,
                        _lib.text(lib.teeny_dtype_name(a.params[i].dtype)))
                       for i in range(a.nparams)]
        self.cache = _lib.text(lib.teeny_client_cache_name(r.cache))
        self.mode = _lib.text(lib.teeny_client_mode_name(r.mode))
        self.compile_ms = r.compile_ms
        self.warnings = [format_diag(lib, r.diags[i]) for i in range(r.ndiags)]
        self.cubin = ctypes.string_at(r.cubin, r.cubin_len) if r.cubin else None
        self.cubin_arch = _lib.text(r.cubin_arch) or None
        self.cubin_toolchain = _lib.text(r.cubin_toolchain) or None

    def artifact(self):
        """The C teeny_artifact (for teeny_module_load)."""
        return self._art

    def result_ptr(self):
        """The C teeny_client_result (for teeny_module_load_result)."""
        return self._ptr

    def __del__(self):
        if getattr(self, "_ptr", None):
            self._lib.teeny_client_result_free(self._ptr)
            self._ptr = None

    def __repr__(self):
        return f"<teenyc.Compiled {self.id} key={self.key[:12]} {self.cache}/{self.mode}>"


def format_diag(lib, d):
    buf = ctypes.create_string_buffer(4096)
    lib.teeny_diag_format(ctypes.byref(d), buf, len(buf))
    return buf.value.decode("utf-8", "replace")


def request(source, kernel, dtypes=None, consts=None, num_warps=0, target=None,
            filename=None, debug=False, num_stages=0):
    """(a CompileReq, what it points at): keep the second while the first
    is in use (the library copies what it keeps)."""
    src = source.encode() if isinstance(source, str) else bytes(source)
    dts = [(n.encode(), v.encode()) for n, v in (dtypes or {}).items()]
    cts = []
    for n, v in (consts or {}).items():
        if isinstance(v, bool):  # bools and floats are bound as text
            dts.append((n.encode(), b"true" if v else b"false"))
        elif isinstance(v, float):
            dts.append((n.encode(), repr(v).encode()))
        else:
            cts.append((n.encode(), int(v)))
    if debug:
        cts.append((_lib.OPT_DEBUG, 1))
    if num_stages:
        cts.append((_lib.OPT_NUM_STAGES, int(num_stages)))
    name, fname = kernel.encode(), (filename or "<source>").encode()
    tgt = target.encode() if target else None
    dt_arr = (_lib.DtypeBinding * max(len(dts), 1))(*[_lib.DtypeBinding(*b) for b in dts])
    ct_arr = (_lib.ConstBinding * max(len(cts), 1))(*[_lib.ConstBinding(*b) for b in cts])
    req = _lib.CompileReq(source=src, source_len=len(src), filename=fname, kernel=name,
                          dtypes=dt_arr, ndtypes=len(dts), consts=ct_arr,
                          nconsts=len(cts), target=tgt, num_warps=int(num_warps))
    return req, (src, dts, cts, name, fname, tgt, dt_arr, ct_arr)


def desc_blocks(lib, req):
    """{entry-point parameter index: block shape} of every tensormap
    parameter of req's specialisation (the bound B0 .. of each
    tensor_desc(T, B0, ..) parameter), made by the library's front end in
    this process; CompileError when the specialisation does not build."""
    spec = ctypes.c_void_p()
    d = _lib.Diags()
    lib.teeny_diags_init(ctypes.byref(d))
    try:
        rc = lib.teeny_spec_create(ctypes.byref(req), ctypes.byref(spec), ctypes.byref(d))
        out = {}
        if rc == 0:
            rank = ctypes.c_int()
            block = (ctypes.c_int * 4)()
            for i in range(lib.teeny_spec_nparams(spec)):
                rc = lib.teeny_spec_param_block(spec, i, ctypes.byref(rank), block,
                                                ctypes.byref(d))
                if rc:
                    break
                if rank.value:
                    out[i] = tuple(block[:rank.value])
        if rc:
            diags = [format_diag(lib, d.v[i]) for i in range(d.n)]
            raise CompileError(f"teenyc: {_lib.text(req.kernel)}: "
                               f"{_lib.text(lib.teeny_strerror(rc))}", rc,
                               _lib.text(lib.teeny_err_name(rc)), diags)
        return out
    finally:
        lib.teeny_spec_destroy(spec)
        lib.teeny_diags_close(ctypes.byref(d))


class Client:
    """A libteenyc-client handle.  mode: "auto" (teenycd, else in process),
    "daemon", "embedded" or "offline" (None: $TEENYC_MODE, else auto);
    socket and cache_dir as for teenyc's --socket and --cache-dir."""

    def __init__(self, mode=None, socket=None, cache_dir=None, timeout_ms=0):
        self._lib = _lib.lib()
        if mode is not None and mode not in _lib.MODES:
            raise ValueError(f"mode {mode!r} is not one of auto, daemon, embedded, offline")
        self._keep = [s.encode() if s else None for s in (socket, cache_dir)]
        opts = _lib.ClientOpts(mode=_lib.MODES[mode] if mode else 0,
                               socket_path=self._keep[0], cache_dir=self._keep[1],
                               client_name=b"teenyc-python/" + self._lib.teeny_version(),
                               timeout_ms=timeout_ms, memo_entries=0)
        h = ctypes.c_void_p()
        rc = self._lib.teeny_client_open(ctypes.byref(h), ctypes.byref(opts))
        self._h = h.value
        if rc:
            msg = _lib.text(self._lib.teeny_client_errmsg(self._h))
            self.close()
            raise TeenycError(f"teenyc: cannot open a client: {msg}", rc, self._err_name(rc))

    def _err_name(self, rc):
        return _lib.text(self._lib.teeny_err_name(rc))

    @property
    def mode(self):
        """The mode in use now: "daemon", "embedded" or "offline"."""
        return _lib.text(self._lib.teeny_client_mode_name(
            self._lib.teeny_client_active_mode(self._h)))

    @property
    def notice(self):
        """Why this client is not in its first-choice mode ("" if it is)."""
        return _lib.text(self._lib.teeny_client_notice(self._h))

    @property
    def socket(self):
        return _lib.text(self._lib.teeny_client_socket(self._h))

    @property
    def arch(self):
        """The GPU architecture compiles name ("sm_90"; "" before CUDA is up):
        teenycd answers with that GPU's cubin beside the PTX."""
        return _lib.text(self._lib.teeny_client_arch(self._h))

    @arch.setter
    def arch(self, value):
        rc = self._lib.teeny_client_set_arch(self._h, value.encode() if value else None)
        if rc:
            raise ValueError(_lib.text(self._lib.teeny_client_errmsg(self._h)))

    def handle(self):
        """The C teeny_client (for teenyc._tune)."""
        return self._h

    def compile(self, source, kernel, dtypes=None, consts=None, num_warps=0, target=None,
                filename=None, force=False, debug=False, num_stages=0):
        """Compile one specialisation; a Compiled, or CompileError with the
        diagnostics.  dtypes: {"D": "f16"}; consts: {"BLOCK_SIZE": 1024,
        "EPS": 1e-5, "CAUSAL": True}; debug: device_assert checks on;
        num_stages: the cp.async pipeline depth of dot loops (2 to 8; 0:
        the code generator's choice)."""
        req, _keep = request(source, kernel, dtypes, consts, num_warps, target, filename,
                             debug, num_stages)
        out = ctypes.c_void_p()
        emit = _lib.EMIT_PTX | (_lib.CLIENT_FORCE if force else 0)
        rc = self._lib.teeny_client_compile(self._h, ctypes.byref(req), emit, ctypes.byref(out))
        if rc == 0:
            return Compiled(self._lib, out.value)
        msg = _lib.text(self._lib.teeny_client_errmsg(self._h))
        diags = []
        if out.value:
            r = ctypes.cast(out.value, ctypes.POINTER(_lib.Result)).contents
            diags = [format_diag(self._lib, r.diags[i]) for i in range(r.ndiags)]
            self._lib.teeny_client_result_free(out.value)
        raise CompileError(f"teenyc: {msg}", rc, self._err_name(rc), diags)

    def close(self):
        if getattr(self, "_h", None):
            self._lib.teeny_client_close(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_default = None
_default_lock = threading.Lock()


def default_client():
    """The process's shared client (opened at first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Client()
            if _default.notice:
                warnings.warn(f"teenyc: {_default.notice}", RuntimeWarning, stacklevel=3)
        return _default
