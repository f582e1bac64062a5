"""teenyc._tune — autotuning shared by every process of the node, the way
triton.autotune is written but tuned once per node rather than once per
process:

    matmul = teenyc.kernel("kernels/matmul.c")
    tuned = teenyc.autotune(matmul, key=["M", "N", "K"], configs=[
        teenyc.Config(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8),
        teenyc.Config(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4),
    ])
    tuned[grid](a, b, c, M, N, K, ..., GROUP_M=8)

The first call for a problem key (the values of the key parameters) asks
teenycd through teeny_client_tune: a record answers at once; else this
process (or the one already tuning that key) compiles every configuration,
times each on the GPU (triton.testing.do_bench's method, CUDA events, L2
flushed, median) and records the winner for every later process, keyed by
kernel, problem key, GPU and driver.  The winner is then launched, and
remembered in this Autotuner.  timer= replaces the GPU timing (tests).
"""
import ctypes
import threading

from . import _lib, _stream
from ._errors import ArgumentError, TeenycError


class Config:
    """One candidate: TEENY_CONST values and num_warps (0: the kernel's)."""

    def __init__(self, consts=None, num_warps=0, **kwargs):
        self.consts = dict(consts or {}, **kwargs)
        self.num_warps = num_warps
        for n, v in self.consts.items():  # they travel as integers (teeny_tune_config)
            if not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
                raise ArgumentError(f"Config: {n}={v!r}: a tuned const is an integer (or a "
                                    "bool); pass a float const at the call, not per config")

    def __eq__(self, other):
        return (isinstance(other, Config) and self.consts == other.consts
                and self.num_warps == other.num_warps)

    def __hash__(self):
        return hash((tuple(sorted(self.consts.items())), self.num_warps))

    def __repr__(self):
        kv = ", ".join(f"{k}={v}" for k, v in self.consts.items())
        return f"Config({kv}, num_warps={self.num_warps})"


class Tuned:
    """What a tuning found: the winner, how (tuned, recorded, joined, local),
    its median time, how many candidates were timed, their times when timed
    here, and the time spent asking teenycd."""

    def __init__(self, config, source, best_ms, candidates, times_ms, lookup_ms):
        self.config, self.source, self.best_ms = config, source, best_ms
        self.candidates, self.times_ms, self.lookup_ms = candidates, times_ms, lookup_ms

    def __repr__(self):
        return f"<teenyc.Tuned {self.config} {self.source} {self.best_ms:.4f} ms>"


class Autotuner:
    """kernel[grid] with its TEENY_CONSTs and num_warps chosen per problem
    key among configs (see the module's doc)."""

    def __init__(self, kernel, configs, key, warmup=25, rep=100, timer=None, gpu=None,
                 driver=None, wait_ms=0):
        if not configs:
            raise ValueError("autotune: no configurations")
        self.kernel, self.configs, self.key = kernel, list(configs), list(key)
        names = [p.name for p in kernel.params]
        for k in self.key:
            if k not in names:
                raise ValueError(f"autotune: key {k!r} is not a parameter of "
                                 f"{kernel.signature()}")
        self.warmup, self.rep, self.timer = warmup, rep, timer
        self.gpu, self.driver, self.wait_ms = gpu, driver, wait_ms
        self._best = {}
        self._lock = threading.Lock()

    def problem_key(self, args):
        """The problem key of a call: "M=4096 N=4096 K=4096"."""
        names = [p.name for p in self.kernel.params]
        return " ".join(f"{k}={args[names.index(k)]}" for k in self.key)

    def __getitem__(self, grid):
        return lambda *args, **meta: self._launch(grid, args, meta)

    def _launch(self, grid, args, meta):
        best = self.tune(grid, *args, **meta).config
        full = dict(meta, **best.consts)
        if best.num_warps:
            full["num_warps"] = best.num_warps
        return self.kernel._launch(grid, args, full)

    def tune(self, grid, *args, **meta):
        """The Tuned for these arguments' problem key (tuning it if no
        process has), without launching the winner."""
        problem = self.problem_key(args)
        with self._lock:
            if problem not in self._best:
                self._best[problem] = self._tune(grid, args, meta, problem)
            return self._best[problem]

    # ---- the C call ----------------------------------------------------------------

    def _tune(self, grid, args, meta, problem):
        k = self.kernel
        lib = k._lib
        if k.tensormaps:  # each config's block is another tensormap box
            raise ArgumentError(f"{k.name}: kernels with tensor_desc parameters cannot be "
                                "autotuned yet (every config would need descriptors of its "
                                "own block); launch each config with kernel[grid](...)")
        tuned_names = {n for c in self.configs for n in c.consts}
        fixed = {n: v for n, v in meta.items() if n not in ("stream", "num_warps", "target")}
        stream = _stream.of(meta.get("stream"))
        if len(args) != len(k.params):
            raise ArgumentError(f"{k.signature()} takes {len(k.params)} arguments, "
                                f"got {len(args)}")
        bound, values = k._read_args(args, stream)
        # every const must be bound by the fixed keywords or by every config
        dtypes, _ = k._bindings(dict(fixed, **self.configs[0].consts), bound)
        fixed_consts = {n: v for n, v in fixed.items() if n in k.const_generics
                        and n not in tuned_names}
        slots = [k._pack(p, v, dtypes) for p, v in zip(k.params, values)]
        off16 = k._unaligned(values)
        if off16:  # every candidate compiled for these pointers
            fixed_consts[_lib.OPT_UNALIGNED.decode()] = off16
        keep = _Keep()
        req = _base_request(k, dtypes, fixed_consts, meta, keep)
        c_configs = (_lib.TuneConfig * len(self.configs))()
        for i, cfg in enumerate(self.configs):
            c_configs[i] = keep.config(cfg)
        argv = (ctypes.c_void_p * max(len(slots), 1))(*[ctypes.addressof(s) for s in slots])

        def grid_cb(_ctx, cfg_p, out):
            index = _config_index(c_configs, cfg_p)
            from ._kernel import _grid
            g = _grid(grid, dict(fixed, **self.configs[index].consts,
                                 num_warps=self.configs[index].num_warps or k.num_warps))
            out[0].x, out[0].y, out[0].z = g[0], g[1], g[2]

        grid_fn = _lib.GRID_FN(grid_cb)
        timer_fn = None
        if self.timer is not None:
            def timer_cb(_ctx, bench, ms, err, errsz):
                try:
                    ms[0] = float(self.timer(bench[0].index, self.configs[bench[0].index]))
                    return 0
                except Exception as e:  # a failing candidate is left out
                    msg = str(e).encode()[:max(errsz - 1, 0)] + b"\0"
                    if err and errsz:
                        ctypes.memmove(err, msg, len(msg))
                    return -28  # TEENY_E_INTERNAL
            timer_fn = _lib.TIMER_FN(timer_cb)
        treq = _lib.TuneReq(base=ctypes.pointer(req), configs=c_configs,
                            nconfigs=len(self.configs), problem=problem.encode(), grid=grid_fn,
                            args=argv, nargs=len(slots), stream=stream,
                            warmup_ms=int(self.warmup), rep_ms=int(self.rep),
                            wait_ms=int(self.wait_ms),
                            timer=ctypes.cast(timer_fn, ctypes.c_void_p) if timer_fn else None,
                            gpu=self.gpu.encode() if self.gpu else None,
                            driver=self.driver.encode() if self.driver else None)
        out = ctypes.c_void_p()
        rc = lib.teeny_client_tune(k.client().handle(), ctypes.byref(treq), ctypes.byref(out))
        try:
            if not out.value:
                raise TeenycError(f"teenyc: autotune {k.name}: out of memory", rc,
                                  _lib.text(lib.teeny_err_name(rc)))
            r = ctypes.cast(out.value, ctypes.POINTER(_lib.TuneResult)).contents
            if rc:
                raise TeenycError(f"teenyc: autotune {k.name}: {_lib.text(r.error)}", rc,
                                  _lib.text(lib.teeny_err_name(rc)))
            return self._tuned_of(lib, r)
        finally:
            if out.value:
                lib.teeny_tune_result_free(out.value)
            del grid_fn, timer_fn, keep  # alive until here: C held them

    def _tuned_of(self, lib, r):
        if r.index != _lib.SIZE_MAX:
            config = self.configs[r.index]
        else:  # recorded from another list of configurations
            consts = {_lib.text(r.config.consts[i].name): r.config.consts[i].value
                      for i in range(r.config.nconsts)}
            config = Config(consts, num_warps=r.config.num_warps)
        times = [r.times_ms[i] for i in range(len(self.configs))] if r.times_ms else None
        return Tuned(config, _lib.text(lib.teeny_tune_source_name(r.source)), r.best_ms,
                     r.candidates, times, r.lookup_ms)


class _Keep:
    """Keeps every ctypes object a request points at alive."""

    def __init__(self):
        self.objs = []

    def __call__(self, obj):
        self.objs.append(obj)
        return obj

    def config(self, cfg):
        arr = self((_lib.ConstBinding * max(len(cfg.consts), 1))(
            *[_lib.ConstBinding(self(n.encode()), int(v)) for n, v in cfg.consts.items()]))
        return _lib.TuneConfig(consts=arr, nconsts=len(cfg.consts), num_warps=int(cfg.num_warps))


def _base_request(k, dtypes, consts, meta, keep):
    from ._client import request
    req, kept = request(k.source, k.name, dtypes, consts,
                        int(meta.get("num_warps") or k.num_warps),
                        meta.get("target") or k.target, k.filename)
    keep(kept)
    return keep(req)


def _config_index(c_configs, cfg_p):
    base = ctypes.addressof(c_configs)
    return (ctypes.cast(cfg_p, ctypes.c_void_p).value - base) // ctypes.sizeof(_lib.TuneConfig)


def autotune(kernel, configs, key, **options):
    """An Autotuner of kernel over configs (Config objects), per problem
    key (the names of the parameters whose values decide the choice).
    options: warmup (ms, 25), rep (ms, 100), timer (fn(index, config) ->
    ms, instead of timing on the GPU), gpu and driver (instead of the
    device's), wait_ms (on another process's tuning; 0: the daemon's)."""
    return Autotuner(kernel, configs, key, **options)
