"""tests/python/test_tune.py — teenyc.autotune against the real teenycd,
with a timer injected in place of the GPU's (the only part that needs
one): the fastest configuration wins, the winner is recorded so that a
second process's Autotuner (another Client) gets it without timing
anything, and the problem key comes from the key parameters' values."""
import os

import pytest

import teenyc
from fakes import CudaArray

CONFIGS = [teenyc.Config(BLOCK_SIZE=256), teenyc.Config(BLOCK_SIZE=512),
           teenyc.Config(BLOCK_SIZE=1024, num_warps=8), teenyc.Config(BLOCK_SIZE=1024)]


def tuner(kernels, daemon, calls):
    client = teenyc.Client(mode="daemon", socket=daemon.socket)
    add = teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=client, target="sm_90a")

    def timer(index, config):
        calls.append(index)
        return {0: 3.0, 1: 2.0, 2: 1.5, 3: 1.0}[index]

    return teenyc.autotune(add, CONFIGS, key=["n_elements"], timer=timer, gpu="Fake GPU",
                           driver="1.0")


def test_autotune_tunes_once_and_shares(daemon, kernels):
    calls = []
    a = CudaArray((4096,))
    grid = lambda meta: (teenyc.cdiv(4096, meta["BLOCK_SIZE"]),)
    t = tuner(kernels, daemon, calls).tune(grid, a, a, a, 4096)
    assert t.config == CONFIGS[3] and t.source == "tuned"
    assert sorted(calls) == [0, 1, 2, 3] and t.times_ms == [3.0, 2.0, 1.5, 1.0]
    assert t.candidates == 4 and t.best_ms == 1.0
    # another process (another client, another Autotuner): the record
    other_calls = []
    again = tuner(kernels, daemon, other_calls).tune(grid, a, a, a, 4096)
    assert again.config == CONFIGS[3] and again.source == "recorded" and not other_calls
    assert again.times_ms is None
    # another problem key tunes again
    t2 = tuner(kernels, daemon, calls).tune(grid, a, a, a, 1024)
    assert t2.source == "tuned" and len(calls) == 8


def test_autotune_checks_its_key(daemon, kernels):
    add = teenyc.kernel(os.path.join(kernels, "vector_add.c"),
                        client=teenyc.Client(mode="daemon", socket=daemon.socket))
    with pytest.raises(ValueError, match="not a parameter"):
        teenyc.autotune(add, CONFIGS, key=["N"])
    with pytest.raises(ValueError, match="no configurations"):
        teenyc.autotune(add, [], key=["n_elements"])


def test_base_request_binds_float_consts_as_text(kernels):
    """The tuning request's fixed consts go through the package's one
    request builder: a float const is bound by its text (an int() of it
    once made EPS=1e-5 a 0), a bool by true/false."""
    from teenyc import _tune
    k = teenyc.kernel(os.path.join(kernels, "layernorm.c"),
                      client=teenyc.Client(mode="offline"))
    keep = _tune._Keep()
    req = _tune._base_request(k, {"D": "f16"}, {"BLOCK_SIZE": 1024, "teeny.unaligned": 2},
                              {"num_warps": 8}, keep)
    dtypes = {req.dtypes[i].name.decode(): req.dtypes[i].dtype.decode()
              for i in range(req.ndtypes)}
    consts = {req.consts[i].name.decode(): req.consts[i].value for i in range(req.nconsts)}
    assert dtypes == {"D": "f16"} and consts == {"BLOCK_SIZE": 1024, "teeny.unaligned": 2}
    assert req.num_warps == 8
    src = """#include <teeny/dsl.h>
TEENY_CONST(EPS, f32);
TEENY_KERNEL(EPS)
void k(ptr(f32) out) { store(out, EPS); }
"""
    t = teenyc.Kernel(src, client=teenyc.Client(mode="offline"))
    req = _tune._base_request(t, {}, {"EPS": 1e-5}, {}, keep)
    assert req.nconsts == 0 and req.ndtypes == 1
    assert (req.dtypes[0].name, req.dtypes[0].dtype) == (b"EPS", b"1e-05")


def test_configs_refuse_fractional_consts():
    """A tuned const travels as an integer: 1e-5 was once tuned as 0."""
    assert teenyc.Config(BLOCK=128, ON=True, W=2.0).consts == {"BLOCK": 128, "ON": True, "W": 2.0}
    with pytest.raises(teenyc.ArgumentError, match="EPS=1e-05: a tuned const is an integer"):
        teenyc.Config(EPS=1e-5)
    with pytest.raises(teenyc.ArgumentError, match="a tuned const is an integer"):
        teenyc.Config({"D": "f16"})
