"""teenyc._kernel — a kernel of a teenyc kernel file, launched Triton-style:

    vector_add = teenyc.kernel("kernels/vector_add.c")
    vector_add[(triton_cdiv(n, 1024),)](a, b, out, n, BLOCK_SIZE=1024)

The file's declarations (teeny_source_inspect: generics, parameters, their
dtypes) decide everything a call checks before it compiles: the argument
count; a tensor for each pointer parameter and a number for each scalar;
dtype generics bound from the tensors' dtypes (all tensors of one generic
must agree, and the dtype must be in the generic's list) or by keyword
(D="f16"); each TEENY_CONST by keyword; tensors on the GPU in use; and
row-major dense tensors unless the kernel takes strides (a scalar
parameter whose name contains "stride") or says otherwise (contiguous=).

Each specialisation (dtypes, consts, num_warps, target, debug) is compiled
once through the client (teenycd, else in process) and its module loaded
once per device.  A warm call builds no compile request: the launch's key
— the tensors' dtypes and devices, the current device and the keywords
with their types — finds, in a per-thread table, a prepared launch (the
module, a struct that packs the grid and every argument into one buffer,
the argument pointer array into it, built once); what is left per call is
reading the tensors (address, contiguity), the scalars' type and range
(struct's own), the grid, one pack_into and teeny_launch.  Anything the
prepared launch cannot take as it is (a miss, a bool where an int goes, a
non-contiguous tensor, a grid out of range…) goes the slow way, which
checks everything as the first call did and raises the same errors.
"""
import ctypes
import os
import struct
import sys
import threading

from . import _arrays, _lib, _stream
from ._client import default_client
from ._errors import ArgumentError, CompileError, CudaError

_INT_RANGE = {"i8": (-2**7, 2**7), "i16": (-2**15, 2**15), "i32": (-2**31, 2**31),
              "i64": (-2**63, 2**63), "u8": (0, 2**8), "u16": (0, 2**16), "u32": (0, 2**32),
              "u64": (0, 2**64)}
_CTYPE = {"bool": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
          "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
          "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
          "f32": ctypes.c_float, "f64": ctypes.c_double, "f16": ctypes.c_uint16,
          "bf16": ctypes.c_uint16, "f8e4m3": ctypes.c_uint8, "f8e5m2": ctypes.c_uint8}
_ERR_LEN = 2048


def dtype_name(d):
    """A teenyc dtype name from "f16", a torch dtype or a numpy dtype."""
    if isinstance(d, str):
        return d
    s = str(d).replace("torch.", "")
    names = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
             "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
             "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
          "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}
    return names.get(s, s)


def _half_bits(v, dt):
    if dt == "f16":
        return struct.unpack("<H", struct.pack("<e", v))[0]
    bits = struct.unpack("<I", struct.pack("<f", v))[0]  # bf16: round to nearest even
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


class _Param:
    """One parameter as the kernel's source declares it; a tensor_desc
    (rank > 0) stands for the 1 + 2 x rank launch arguments of its slots,
    from the entry point's parameter slot (teeny_tensor_desc_args)."""

    def __init__(self, name, pointer, dtype, generic, rank=0, slot=0):
        self.name, self.pointer, self.dtype, self.generic = name, pointer, dtype, generic
        self.rank, self.slot = rank, slot

    def describe(self):
        t = self.generic or self.dtype
        if self.rank:
            return f"tensor_desc({t}, rank {self.rank}) {self.name}"
        return f"{'ptr(' + t + ')' if self.pointer else t} {self.name}"


# struct codes of one 8-byte argument slot, by dtype (little-endian, no
# alignment: every slot starts 8 bytes after the last)
_SLOT = {"i8": "b7x", "i16": "h6x", "i32": "i4x", "i64": "q", "u8": "B7x", "u16": "H6x",
         "u32": "I4x", "u64": "Q", "f32": "f4x", "f64": "d", "bool": "?7x", "f16": "H6x",
         "bf16": "H6x", "f8e4m3": "B7x", "f8e5m2": "B7x"}
_GRID_BYTES = 16  # unsigned grid[3] and 4 bytes of padding, before the slots


class _Prepared:
    """A warm launch of one specialisation in one thread: the module, the
    buffer that holds the grid and every argument's slot, the pointer array
    into it, and how each scalar is checked (kind int or float: the type
    here, the range by struct; None: teenyc's own packing)."""

    __slots__ = ("module", "pack", "buf", "grid_addr", "argv", "argv_addr", "err", "err_addr",
                 "launch", "scalars", "gmeta", "dtypes")

    def __init__(self, kernel, module, dtypes, gmeta):
        self.module, self.dtypes, self.gmeta = module, dtypes, gmeta
        codes, scalars = [], []
        for i, p in enumerate(kernel.params):
            if p.pointer:
                codes.append("Q")
                continue
            dt = dtypes.get(p.generic) if p.generic else p.dtype
            codes.append(_SLOT[dt])
            kind = int if dt in _INT_RANGE else float if dt in ("f32", "f64") else None
            scalars.append((i, kind, p))
        self.scalars = tuple(scalars)
        st = struct.Struct("<3I4x" + "".join(codes))
        self.pack = st.pack_into
        self.buf = (ctypes.c_char * st.size)()
        self.grid_addr = ctypes.addressof(self.buf)
        base = self.grid_addr + _GRID_BYTES
        n = len(kernel.params)
        self.argv = (ctypes.c_void_p * max(n, 1))(*[base + 8 * i for i in range(n)])
        self.argv_addr = ctypes.addressof(self.argv)
        self.err = ctypes.create_string_buffer(_ERR_LEN)
        self.err_addr = ctypes.addressof(self.err)
        self.launch = _launch_function(kernel._lib)


def _inspect(lib, source, filename):
    out = ctypes.c_void_p()
    d = _lib.Diags()
    lib.teeny_diags_init(ctypes.byref(d))
    rc = lib.teeny_source_inspect(source, len(source), filename.encode(), ctypes.byref(out),
                                  ctypes.byref(d))
    if rc:
        from ._client import format_diag
        diags = [format_diag(lib, d.v[i]) for i in range(d.n)]
        lib.teeny_diags_close(ctypes.byref(d))
        raise CompileError(f"teenyc: {filename} has errors", rc,
                           _lib.text(lib.teeny_err_name(rc)), diags)
    lib.teeny_diags_close(ctypes.byref(d))
    return out.value


class Kernel:
    """A TEENY_KERNEL of a kernel file; index it with a grid to launch."""

    def __init__(self, source, name=None, filename="<source>", client=None, num_warps=4,
                 target=None, contiguous=None):
        self._lib = _lib.lib()
        self._fast = threading.local()  # per thread: launch key -> _Prepared
        self._compiled = {}  # (dtypes, consts, num_warps, target, debug) -> Compiled
        self._modules = {}   # (that key, device) -> the module loaded in its context
        self._lock = threading.Lock()
        self.source = source.encode() if isinstance(source, str) else bytes(source)
        self.filename = filename
        self._client = client
        self.num_warps = num_warps
        self.target = target
        self._read_signature(name)
        self._blocks = {}  # compile key -> {slot: block shape} (tensor_desc kernels)
        # a tensor_desc kernel never has a prepared launch: -1 sends every call
        # to _launch_slow, which builds its descriptors
        self._nparams = -1 if self.tensormaps else len(self.params)
        self._ptr_pos = tuple(i for i, p in enumerate(self.params) if p.pointer)
        takes_strides = any("stride" in p.name for p in self.params if not p.pointer)
        self.contiguous = (not takes_strides) if contiguous is None else contiguous

    # the options a prepared launch has taken in: changing one drops them all
    def _option(name):
        attr = "_" + name

        def get(self):
            return getattr(self, attr)

        def put(self, value):
            setattr(self, attr, value)
            self._fast = threading.local()
        return property(get, put)

    num_warps = _option("num_warps")
    target = _option("target")
    contiguous = _option("contiguous")
    del _option

    @classmethod
    def from_file(cls, path, name=None, **options):
        with open(path, "rb") as f:
            return cls(f.read(), name, filename=os.fspath(path), **options)

    def _read_signature(self, name):
        lib = self._lib
        info_p = _inspect(lib, self.source, self.filename)
        try:
            info = ctypes.cast(info_p, ctypes.POINTER(_lib.SourceInfo)).contents
            kernels = [info.kernels[i] for i in range(info.nkernels)]
            names = [_lib.text(k.name) for k in kernels]
            if name is None and len(kernels) != 1:
                raise ValueError(f"{self.filename} has kernels {', '.join(names) or 'none'}: "
                                 "say which (name=...)")
            if name is not None and name not in names:
                raise ValueError(f"{self.filename} has no kernel {name!r} "
                                 f"(kernels: {', '.join(names) or 'none'})")
            k = kernels[names.index(name) if name else 0]
            self.name = _lib.text(k.name)
            generics = [info.generics[k.generics[i]] for i in range(k.ngenerics)]
            gnames = [_lib.text(g.name) for g in generics]
            self.dtype_generics = {
                _lib.text(g.name): [_lib.text(lib.teeny_dtype_name(g.allowed[j]))
                                    for j in range(g.nallowed)] or None
                for g in generics if g.is_dtype}
            self.const_generics = [n for n, g in zip(gnames, generics) if not g.is_dtype]
            # each TEENY_CONST's dtype ("i32" when it declares none)
            self.const_dtypes = {
                n: _lib.text(lib.teeny_dtype_name(g.const_dtype)) if g.const_dtype else "i32"
                for n, g in zip(gnames, generics) if not g.is_dtype}
            self.params = []
            self.tensormaps = False  # a tensor_desc parameter: every launch the slow way
            i = 0
            while i < k.nparams:
                p = k.params[i]
                gen = _lib.text(info.generics[p.generic].name) if p.generic >= 0 else None
                dt = None if gen else _lib.text(lib.teeny_dtype_name(p.dtype))
                name = _lib.text(p.name)
                if p.kind != _lib.PARAM_TENSORMAP:
                    self.params.append(_Param(name, p.kind == _lib.PARAM_POINTER, dt, gen,
                                              slot=i))
                    i += 1
                    continue
                # NAME_tensormap, NAME_base, NAME_shape<k> (rank of them), NAME_stride<k>
                self.tensormaps = True
                base = name[:-len("_tensormap")]
                rank = 0
                while (i + 2 + rank < k.nparams and
                       _lib.text(k.params[i + 2 + rank].name) == f"{base}_shape{rank}"):
                    rank += 1
                self.params.append(_Param(base, False, dt, gen, rank=rank, slot=i))
                i += 1 + 2 * rank
        finally:
            lib.teeny_source_info_destroy(info_p)

    def __repr__(self):
        sig = ", ".join(p.describe() for p in self.params)
        return f"<teenyc.Kernel {self.name}({sig})>"

    def signature(self):
        return f"{self.name}({', '.join(p.describe() for p in self.params)})"

    # ---- compiling ------------------------------------------------------------------

    def client(self):
        return self._client or default_client()

    def compile(self, num_warps=None, target=None, force=False, debug=False, num_stages=0,
                **bindings):
        """Compile one specialisation (no GPU needed): bindings name every
        generic, D="f16" (or a torch dtype), BLOCK_SIZE=1024, EPS=1e-5;
        debug=True compiles device_assert checks in; num_stages (2 to 8)
        sets the cp.async pipeline depth of dot loops (0: the compiler's)."""
        dtypes, consts = self._bindings(bindings, {})
        return self.client().compile(self.source, self.name, dtypes, consts,
                                     num_warps or self.num_warps, target or self.target,
                                     self.filename, force, debug, num_stages)

    def _bindings(self, meta, bound):
        """(dtypes, consts) from keywords, with dtypes already bound from
        tensors; ArgumentError for anything missing, extra or wrong."""
        dtypes = dict(bound)
        consts = {}
        for k, v in meta.items():
            if k in self.dtype_generics:
                name = dtype_name(v)
                if k in dtypes and dtypes[k] != name:
                    raise ArgumentError(f"{self.name}: {k}={name} given, but the tensors "
                                        f"bind {k} to {dtypes[k]}")
                dtypes[k] = name
            elif k in self.const_generics:
                consts[k] = self._const_value(k, v)
            else:
                known = list(self.dtype_generics) + self.const_generics
                raise ArgumentError(f"{self.name}: unknown keyword {k}= (its generics: "
                                    f"{', '.join(known) or 'none'}; options: num_warps, "
                                    "target, stream, debug)")
        for g, allowed in self.dtype_generics.items():
            if g not in dtypes:
                raise ArgumentError(f"{self.name}: dtype {g} is not bound: pass a tensor for "
                                    f"one of its parameters or {g}=...")
            if allowed and dtypes[g] not in allowed:
                raise ArgumentError(f"{self.name}: dtype {dtypes[g]} is not supported for {g} "
                                    f"(supported: {', '.join(allowed)})")
        missing = [c for c in self.const_generics if c not in consts]
        if missing:
            raise ArgumentError(f"{self.name}: {', '.join(missing)} not given (TEENY_CONST: "
                                f"pass {missing[0]}=...)")
        return dtypes, consts

    def _const_value(self, k, v):
        """v as the value of TEENY_CONST k: an int for integer consts, a bool
        for bool ones, a float (or an int) for float ones."""
        dt = self.const_dtypes[k]
        if dt == "bool":
            ok = isinstance(v, bool) or (isinstance(v, int) and v in (0, 1))
            want = "a bool"
        elif dt.startswith("f") or dt == "bf16":
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            want = "a number"
        else:
            ok = isinstance(v, int) and not isinstance(v, bool)
            want = "an int"
        if not ok:
            raise ArgumentError(f"{self.name}: {k} is a TEENY_CONST of {dt} and wants {want}, "
                                f"got {type(v).__name__}")
        return bool(v) if dt == "bool" else float(v) if want == "a number" else v

    # ---- launching ------------------------------------------------------------------

    def __getitem__(self, grid):
        return _Launcher(self, grid)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name}: launch with a grid: {self.name}[grid](...)")

    def _compile(self, dtypes, consts, num_warps, target, debug):
        """The compile result of a specialisation (compiled once)."""
        key = _compile_key(dtypes, consts, num_warps, target, debug)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key)
                if compiled is None:
                    compiled = self.client().compile(self.source, self.name, dtypes, consts,
                                                     num_warps, target, self.filename,
                                                     debug=debug)
                    self._compiled[key] = compiled
        return key, compiled

    def _desc_blocks(self, dtypes, consts, num_warps, target, debug):
        """{slot: block shape} of the specialisation's tensor_desc parameters
        (the front end evaluates B0 .. once per specialisation)."""
        key = _compile_key(dtypes, consts, num_warps, target, debug)
        blocks = self._blocks.get(key)
        if blocks is None:
            from ._client import desc_blocks, request
            req, _keep = request(self.source, self.name, dtypes, consts, num_warps, target,
                                 self.filename, debug)
            blocks = self._blocks[key] = desc_blocks(self._lib, req)
        return blocks

    def _desc_args(self, p, v, dtypes, block, keep):
        """The launch arguments' addresses of tensor_desc parameter p over
        the tensor view v (its descriptor is kept alive in keep)."""
        lib = self._lib
        dt = dtypes.get(p.generic) if p.generic else p.dtype
        d, buf = _lib.tensor_desc()
        keep += (d, buf)
        strides = list(v.strides)
        if v.shape[-1] <= 1:  # one element per row: its stride is never used
            strides[-1] = 1
        shape_c = (ctypes.c_int64 * p.rank)(*v.shape)
        stride_c = (ctypes.c_int64 * p.rank)(*strides)
        block_c = (ctypes.c_int * p.rank)(*block)
        keep += (shape_c, stride_c, block_c)
        err = ctypes.create_string_buffer(_ERR_LEN)
        rc = lib.teeny_tensor_desc_make(ctypes.byref(d), lib.teeny_dtype_parse(dt.encode()),
                                        v.ptr, p.rank, shape_c, stride_c, block_c, err,
                                        _ERR_LEN)
        if rc:
            name = _lib.text(lib.teeny_err_name(rc))
            msg = f"{self.name}: {p.name}: {err.value.decode('utf-8', 'replace')}"
            if name == "INVAL":
                raise ArgumentError(msg)
            raise CudaError(f"teenyc: {msg}", rc, name)
        out = (ctypes.c_void_p * (1 + 2 * p.rank))()
        n = lib.teeny_tensor_desc_args(ctypes.byref(d), out)
        return list(out[:n])

    def _module(self, dtypes, consts, num_warps, target, debug, device):
        """The module of a specialisation loaded for device (a module
        belongs to the context it was loaded in: another device loads its
        own)."""
        key, compiled = self._compile(dtypes, consts, num_warps, target, debug)
        mkey = (key, device)
        module = self._modules.get(mkey)
        if module is None:
            with self._lock:
                module = self._modules.get(mkey)
                if module is None:
                    module = _load_module(self._lib, compiled)
                    self._modules[mkey] = module
        return module

    def _launch(self, grid, args, meta):
        """kernel[grid](*args, **meta): the prepared launch when this call's
        key has one in this thread, else _launch_slow."""
        stream = meta.pop("stream", None)
        rt = _torch_rt or _torch_runtime()
        if rt is not None:
            tensor, device_of, raw_stream = rt
            dev = device_of()
            s = raw_stream(dev) if stream is None else _stream.of(stream)
        else:
            tensor, dev, s = None, _current_device(), _stream.of(stream)
        if len(args) != self._nparams:
            return self._launch_slow(grid, args, meta, s, dev, None)
        vals = list(args)
        sig = []
        contiguous = self._contiguous
        for i in self._ptr_pos:
            a = vals[i]
            if type(a) is tensor:
                if not a.is_cuda or (contiguous and not a.is_contiguous()):
                    return self._launch_slow(grid, args, meta, s, dev, None)
                sig.append(a.dtype)
                sig.append(a.get_device())
                vals[i] = a.data_ptr()
                if vals[i] & 15:  # not 16-byte aligned: a specialisation the slow way
                    return self._launch_slow(grid, args, meta, s, dev, None)
                continue
            try:
                cai = (getattr(a, "__cuda_array_interface__", None)
                       if type(a).__module__ != "torch" else None)
                if cai is not None and cai.get("strides") is None:
                    # row-major by the protocol's own definition: its typestr,
                    # shape and address are all a call reads (the device is
                    # never told: the slow path checked what it could)
                    cai["shape"]
                    sig.append(cai["typestr"])
                    sig.append(None)
                    vals[i] = cai["data"][0] or 0
                    if vals[i] & 15:
                        return self._launch_slow(grid, args, meta, s, dev, None)
                    continue
                v = _arrays.view(a, s) if _arrays.is_array(a) else None
            except Exception:
                v = None
            if v is None or (contiguous and not _arrays.is_contiguous(v)) or v.ptr & 15:
                return self._launch_slow(grid, args, meta, s, dev, None)
            sig.append(v.dtype)
            sig.append(v.device)
            vals[i] = v.ptr
        try:
            key = ((tuple(sig), dev, tuple(meta.items()), tuple(map(type, meta.values())))
                   if meta else (tuple(sig), dev))
            cache = self._fast.__dict__
            e = cache.get(key)
        except TypeError:  # an unhashable keyword: never prepared
            return self._launch_slow(grid, args, meta, s, dev, None)
        if e is None:
            return self._launch_slow(grid, args, meta, s, dev, key)
        for i, kind, p in e.scalars:
            v = vals[i]
            t = type(v)
            if kind is int:
                if t is not int:
                    return self._launch_slow(grid, args, meta, s, dev, key)
            elif kind is float:
                if t is not float and t is not int:
                    return self._launch_slow(grid, args, meta, s, dev, key)
            elif t is int or t is float or t is bool:
                vals[i] = self._pack(p, v, e.dtypes).value
            else:
                return self._launch_slow(grid, args, meta, s, dev, key)
        g = grid(dict(e.gmeta)) if callable(grid) else grid
        t = type(g)
        if t is tuple or t is list:
            n = len(g)
            if n == 1:
                gx, gy, gz = g[0], 1, 1
            elif n == 3:
                gx, gy, gz = g
            elif n == 2:
                (gx, gy), gz = g, 1
            else:
                return self._launch_slow(grid, args, meta, s, dev, key, g)
        elif t is int:
            gx, gy, gz = g, 1, 1
        else:
            return self._launch_slow(grid, args, meta, s, dev, key, g)
        try:
            e.pack(e.buf, 0, gx, gy, gz, *vals)
        except (struct.error, OverflowError, TypeError):  # out of range: say so the slow way
            return self._launch_slow(grid, args, meta, s, dev, key, g)
        rc = e.launch(e.module, e.grid_addr, s, e.argv_addr, e.err_addr, _ERR_LEN)
        if rc:
            raise CudaError(f"teenyc: {self.name}: {e.err.value.decode('utf-8', 'replace')}",
                            rc, _lib.text(self._lib.teeny_err_name(rc)))

    def _launch_slow(self, grid, args, meta, stream, dev, key, g=None):
        """Every check, in the order the package has always made them; the
        compile and module load when they are new; then, when key is given,
        the prepared launch for the next call with that key.  g: the grid
        already computed from a grid function (it is called once a call)."""
        num_warps = meta.pop("num_warps", None) or self.num_warps
        target = meta.pop("target", None) or self.target
        debug = bool(meta.pop("debug", False))
        if len(args) != len(self.params):
            raise ArgumentError(f"{self.signature()} takes {len(self.params)} arguments, "
                                f"got {len(args)}")
        bound, values = self._read_args(args, stream)
        dtypes, consts = self._bindings(meta, bound)
        slots = [None if p.rank else self._pack(p, v, dtypes)
                 for p, v in zip(self.params, values)]
        gmeta = dict(consts, num_warps=num_warps)
        grid_arr = _grid(grid if g is None else g, dict(gmeta))
        target = target or _device_target(self._lib)
        off16 = self._unaligned(values)
        if off16:  # a specialisation of its own, as Triton's divisibility one
            consts = dict(consts, **{_lib.OPT_UNALIGNED.decode(): off16})
            key = None  # and no prepared launch: the warm path sends such calls here
        module = self._module(dtypes, consts, num_warps, target, debug, dev)
        if key is not None:
            table = self._fast.__dict__
            if key not in table:  # (a call that only this once went the slow way keeps it)
                table[key] = _Prepared(self, module, dtypes, gmeta)
        addrs, keep = [], []
        blocks = self._desc_blocks(dtypes, consts, num_warps, target, debug) \
            if self.tensormaps else None
        for p, v, s in zip(self.params, values, slots):
            if p.rank:
                addrs += self._desc_args(p, v, dtypes, blocks[p.slot], keep)
            else:
                addrs.append(ctypes.addressof(s))
        argv = (ctypes.c_void_p * max(len(addrs), 1))(*addrs)
        err = ctypes.create_string_buffer(_ERR_LEN)
        rc = _launch_function(self._lib)(module, ctypes.addressof(grid_arr), stream,
                                         ctypes.addressof(argv), ctypes.addressof(err), _ERR_LEN)
        if rc:
            raise CudaError(f"teenyc: {self.name}: {err.value.decode('utf-8', 'replace')}", rc,
                            _lib.text(self._lib.teeny_err_name(rc)))

    def _read_args(self, args, stream):
        """(dtypes bound by tensors, the argument values: views or numbers)."""
        bound, values = {}, []
        device = None
        for p, a in zip(self.params, args):
            if not p.pointer and not p.rank:
                if _arrays.is_array(a):
                    raise ArgumentError(f"{self.name}: {p.describe()} is a scalar, got a tensor")
                values.append(a)
                continue
            if not _arrays.is_array(a):
                raise ArgumentError(f"{self.name}: {p.describe()} wants a CUDA tensor (an object "
                                    f"with __cuda_array_interface__ or __dlpack__), got "
                                    f"{type(a).__name__}")
            try:
                v = _arrays.view(a, stream)
            except (ValueError, KeyError, TypeError) as e:
                raise ArgumentError(f"{self.name}: {p.name}: {e}") from None
            device = self._check_tensor(p, v, device)
            if p.rank and len(v.shape) != p.rank:
                raise ArgumentError(f"{self.name}: {p.describe()} wants a tensor of {p.rank} "
                                    f"dims, got shape {tuple(v.shape)}")
            if p.rank and v.shape[-1] > 1 and v.strides[-1] != 1:
                raise ArgumentError(f"{self.name}: {p.name}: a tensor_desc's last dim must be "
                                    f"contiguous (strides {tuple(v.strides)}): pass "
                                    ".contiguous() or a view along the other dims")
            if p.generic:
                prev = bound.get(p.generic)
                if prev is not None and prev[0] != v.dtype:
                    raise ArgumentError(f"{self.name}: {p.name} is {v.dtype} but {prev[1]} is "
                                        f"{prev[0]}: both are {p.generic}")
                bound.setdefault(p.generic, (v.dtype, p.name))
            elif v.dtype != p.dtype:
                raise ArgumentError(f"{self.name}: {p.describe()} wants {p.dtype} elements, "
                                    f"got a {v.dtype} tensor")
            if p.rank and v.ptr % 16:
                raise ArgumentError(f"{self.name}: {p.name} is not 16-byte aligned (address "
                                    f"{v.ptr:#x}): a tensor_desc's base must be, as the "
                                    "TMA's is; pass a copy (.clone()) or a view that starts "
                                    "on 16 bytes")
            values.append(v)
        return {g: d for g, (d, _) in bound.items()}, values

    def _unaligned(self, values):
        """TEENY_OPT_UNALIGNED's bits: the pointer arguments not on 16
        bytes (kernels otherwise assume every one is)."""
        bits = 0
        for p, v in zip(self.params, values):
            if p.pointer and v.ptr % 16:
                bits |= 1 << p.slot
        return bits

    def _check_tensor(self, p, v, device):
        kind, index = v.device
        if kind != "cuda":
            raise ArgumentError(f"{self.name}: {p.name} is on {kind}; kernels run on the GPU "
                                "(move it with .cuda() or .to('cuda'))")
        if index >= 0:
            cur = _current_device()
            if index != cur:
                raise ArgumentError(f"{self.name}: {p.name} is on cuda:{index}, but the current "
                                    f"device is cuda:{cur}")
            if device is not None and index != device[0]:
                raise ArgumentError(f"{self.name}: {p.name} is on cuda:{index}, {device[1]} on "
                                    f"cuda:{device[0]}")
            device = device or (index, p.name)
        if self.contiguous and not p.rank and not _arrays.is_contiguous(v):
            raise ArgumentError(f"{self.name}: {p.name} is not contiguous (shape {v.shape}, "
                                f"strides {v.strides}) and {self.name} takes no strides: pass "
                                ".contiguous(), or kernel(..., contiguous=False)")
        return device

    def _pack(self, p, v, dtypes):
        if p.pointer:
            return ctypes.c_uint64(v.ptr)
        dt = dtypes.get(p.generic) if p.generic else p.dtype
        if isinstance(v, bool):
            v = int(v)
        if dt in _INT_RANGE:
            if not isinstance(v, int):
                raise ArgumentError(f"{self.name}: {p.describe()} wants an integer, got "
                                    f"{type(v).__name__}")
            lo, hi = _INT_RANGE[dt]
            if not lo <= v < hi:
                raise ArgumentError(f"{self.name}: {p.name}={v} does not fit {dt}")
            return _CTYPE[dt](v)
        if not isinstance(v, (int, float)):
            raise ArgumentError(f"{self.name}: {p.describe()} wants a number, got "
                                f"{type(v).__name__}")
        if dt in ("f16", "bf16"):
            return _CTYPE[dt](_half_bits(float(v), dt))
        if dt in ("f8e4m3", "f8e5m2"):  # the library rounds as kernels do
            slot = ctypes.c_uint64(0)
            lib = _lib.lib()
            lib.teeny_scalar_pack(ctypes.byref(slot), lib.teeny_dtype_parse(dt.encode()),
                                  float(v))
            return _CTYPE[dt](slot.value & 0xFF)
        return _CTYPE[dt](v)


def _compile_key(dtypes, consts, num_warps, target, debug):
    return (tuple(sorted(dtypes.items())), tuple(sorted(consts.items())), num_warps, target,
            debug)


class _Launcher:
    """kernel[grid]: call it with the kernel's arguments and keywords."""

    __slots__ = ("kernel", "grid")

    def __init__(self, kernel, grid):
        self.kernel, self.grid = kernel, grid

    def __call__(self, *args, **meta):
        return self.kernel._launch(self.grid, args, meta)


def _grid(grid, meta):
    g = grid(meta) if callable(grid) else grid
    if isinstance(g, int):
        g = (g,)
    g = tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3 or any(x < 0 or x >= 2**32 for x in g):
        raise ArgumentError(f"grid {g!r}: want 1 to 3 counts of programs, each below 2**32")
    return (ctypes.c_uint * 3)(*(g + (1,) * (3 - len(g))))


def _load_module(lib, compiled):
    """The module of a compile result: its cubin when teenycd sent one for
    this GPU (no JIT), else its PTX."""
    m = ctypes.c_void_p()
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = lib.teeny_module_load_result(compiled.result_ptr(), ctypes.byref(m), err, _ERR_LEN)
    if rc:
        raise CudaError(f"teenyc: {compiled.id}: {err.value.decode('utf-8', 'replace')}", rc,
                        _lib.text(lib.teeny_err_name(rc)))
    return m.value


_target = None


def _device_target(lib):
    """The compile target of the GPU in use ("sm_90a"), asked once."""
    global _target
    if _target is None:
        buf = ctypes.create_string_buffer(16)
        err = ctypes.create_string_buffer(_ERR_LEN)
        rc = lib.teeny_cuda_target(buf, len(buf), err, _ERR_LEN)
        if rc:
            raise CudaError(f"teenyc: {err.value.decode('utf-8', 'replace')}", rc,
                            _lib.text(lib.teeny_err_name(rc)))
        _target = buf.value.decode()
    return _target


_torch_rt = None  # (torch.Tensor, current device, raw current stream) once torch's CUDA is up
_fast_launch = None


def _torch_runtime():
    """torch's tensor type and its cheapest current-device and current-stream
    calls, once torch is imported and its CUDA initialised (from then on
    torch's device and stream are the ones used, as _stream.current says);
    None before."""
    global _torch_rt
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    c = getattr(torch, "_C", None)
    device_of = getattr(c, "_cuda_getDevice", None) or torch.cuda.current_device
    raw = getattr(c, "_cuda_getCurrentRawStream", None)
    if raw is None:
        def raw(device):
            return torch.cuda.current_stream(device).cuda_stream
    _torch_rt = (torch.Tensor, device_of, raw)
    return _torch_rt


def _forget_runtime():
    global _torch_rt
    _torch_rt = None  # a forked child asks torch again (its CUDA is not the parent's)


os.register_at_fork(after_in_child=_forget_runtime)


def _launch_function(lib):
    """teeny_launch with every pointer passed as an int (no ctypes objects
    to build per call)."""
    global _fast_launch
    if _fast_launch is None:
        fn = lib["teeny_launch"]
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_size_t]
        _fast_launch = fn
    return _fast_launch


def _current_device():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        return cupy.cuda.runtime.getDevice()
    return int(os.environ.get("TEENY_CUDA_DEVICE", "0") or 0)


def kernel(path_or_source, name=None, **options):
    """A Kernel from a kernel file's path (or its source text, which has a
    newline or "TEENY_KERNEL" in it).  options: client, num_warps (default
    4), target (default: the GPU's), contiguous."""
    s = path_or_source
    if isinstance(s, (bytes, str)) and ("\n" in str(s) or "TEENY_KERNEL" in str(s)):
        return Kernel(s, name, **options)
    return Kernel.from_file(s, name, **options)
