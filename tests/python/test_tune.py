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
