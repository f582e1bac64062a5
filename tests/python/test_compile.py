"""tests/python/test_compile.py — compiling from Python through the real
teenycd, the daemon's cache and the client's, the fallback to in-process
compiles when no daemon answers, diagnostics, and reading a kernel's
signature."""
import os
import warnings

import pytest

import teenyc


def test_signature_from_the_kernel_file(kernels):
    k = teenyc.kernel(os.path.join(kernels, "vector_add.c"))
    assert k.name == "vector_add"
    assert k.dtype_generics == {"D": ["f32", "f16", "bf16"]}
    assert k.const_generics == ["BLOCK_SIZE"]
    assert k.signature() == "vector_add(ptr(D) a_ptr, ptr(D) b_ptr, ptr(D) out_ptr, i32 n_elements)"
    assert k.contiguous  # no stride parameters: tensors must be dense
    m = teenyc.kernel(os.path.join(kernels, "matmul.c"))
    assert not m.contiguous  # it takes strides
    assert m.const_generics == ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"]


def test_typed_consts_and_debug(kernels, tmp_path, monkeypatch):
    """TEENY_CONST(N, T): floats and bools are bound as text, ints by value;
    the id shows the value read; debug=True and num_stages change the key
    only."""
    monkeypatch.setenv("TEENYC_CACHE_DIR", str(tmp_path / "store"))
    src = os.path.join(os.path.dirname(kernels), "..", "tests", "lang", "consts.c")
    k = teenyc.kernel(src, client=teenyc.Client(mode="embedded"))
    assert k.const_generics == ["BLOCK", "EPS", "SCALE", "IS_CAUSAL", "BIG", "HALF", "MASK"]
    assert k.const_dtypes == {"BLOCK": "i32", "EPS": "f32", "SCALE": "f64", "IS_CAUSAL": "bool",
                              "BIG": "i64", "HALF": "f16", "MASK": "u32"}
    b = dict(BLOCK=16, EPS=1e-5, SCALE=0.1, IS_CAUSAL=True, BIG=5000000000, HALF=0.375,
             MASK=0xf0f0f0f0)
    r = k.compile(**b)
    assert r.id == "typed_consts__16__1e-05__0.1__true__5000000000__0.375__4042322160"
    assert k.compile(**dict(b, HALF=3)).id.endswith("__3__4042322160")  # an int for a float
    assert k.compile(debug=True, **b).key != r.key
    staged = k.compile(num_stages=3, **b)  # an option: the key, not the id
    assert staged.key != r.key and staged.id == r.id
    with pytest.raises(teenyc.CompileError, match="num_stages is 2 to 8"):
        k.compile(num_stages=9, **b)
    with pytest.raises(teenyc.ArgumentError, match="IS_CAUSAL is a TEENY_CONST of bool"):
        k.compile(**dict(b, IS_CAUSAL=0.5))
    with pytest.raises(teenyc.ArgumentError, match="BLOCK is a TEENY_CONST of i32 and wants an int"):
        k.compile(**dict(b, BLOCK=16.0))


def test_compile_through_teenycd(daemon, kernels):
    c = teenyc.Client(mode="daemon", socket=daemon.socket)
    assert c.mode == "daemon" and c.socket == daemon.socket
    k = teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=c)
    r = k.compile(D="f16", BLOCK_SIZE=256)
    assert (r.id, r.cache, r.mode) == ("vector_add__f16__256", "miss", "daemon")
    assert r.entry == "vector_add_entry_point" and ".entry vector_add_entry_point" in r.ptx
    assert r.params[0] == ("a_ptr", True, "f16") and r.params[3] == ("n_elements", False, "i32")
    assert r.threads_per_block == 128 and len(r.key) == 64
    again = k.compile(D="f16", BLOCK_SIZE=256)
    assert again.cache == "memo" and again.key == r.key  # no round trip
    other = teenyc.Client(mode="daemon", socket=daemon.socket)
    hit = teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=other).compile(
        D="f16", BLOCK_SIZE=256)
    assert hit.cache in ("memory", "disk") and hit.ptx == r.ptx
    import torch_free_check  # noqa: F401  (the package imports neither torch nor cupy)


def test_discovery_finds_the_system_daemon(daemon, kernels, monkeypatch):
    monkeypatch.setenv("TEENYC_SYSTEM_SOCKET", daemon.socket)
    r = teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=teenyc.Client()).compile(
        D="f32", BLOCK_SIZE=128)
    assert r.mode == "daemon"


def test_no_daemon_falls_back_to_the_store(kernels, tmp_path, monkeypatch):
    monkeypatch.setenv("TEENYC_CACHE_DIR", str(tmp_path / "store"))
    c = teenyc.Client()
    assert c.mode == "embedded" and "cannot reach teenycd" in c.notice
    k = teenyc.kernel(os.path.join(kernels, "softmax.c"), client=c)
    assert k.compile(D="f32", BLOCK_SIZE=512).cache == "miss"
    second = teenyc.kernel(os.path.join(kernels, "softmax.c"), client=teenyc.Client())
    assert second.compile(D="f32", BLOCK_SIZE=512).cache == "disk"


def test_default_client_warns_once_when_it_falls_back(kernels, monkeypatch):
    monkeypatch.setattr(teenyc._client, "_default", None)
    k = teenyc.kernel(os.path.join(kernels, "vector_add.c"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k.compile(D="f32", BLOCK_SIZE=64)
        k.compile(D="f32", BLOCK_SIZE=128)
    notes = [str(x.message) for x in w if "teenyc" in str(x.message)]
    assert len(notes) == 1 and "offline" in notes[0]
    monkeypatch.setattr(teenyc._client, "_default", None)


def test_compile_errors_carry_diagnostics(daemon, kernels):
    src = "#include <teeny/dsl.h>\nTEENY_KERNEL()\nvoid k(ptr(f32) x) {\n  store(x, nope);\n}\n"
    with pytest.raises(teenyc.CompileError) as e:  # found reading the signature
        teenyc.kernel(src)
    assert e.value.name == "COMPILE"
    assert any("<source>:4:12: error: unknown name 'nope'" in d for d in e.value.diagnostics)
    k = teenyc.kernel(os.path.join(kernels, "vector_add.c"),
                      client=teenyc.Client(mode="daemon", socket=daemon.socket))
    with pytest.raises(teenyc.CompileError) as e:  # found by teenycd's compiler
        k.compile(D="f32", BLOCK_SIZE=100)
    assert "tile size 100 is not a power of two" in str(e.value)
    assert any("vector_add.c:12:" in d for d in e.value.diagnostics)


def test_bindings_are_checked_before_compiling(kernels):
    k = teenyc.kernel(os.path.join(kernels, "vector_add.c"), client=teenyc.Client(mode="offline"))
    with pytest.raises(teenyc.ArgumentError, match="not supported for D"):
        k.compile(D="i32", BLOCK_SIZE=256)
    with pytest.raises(teenyc.ArgumentError, match="BLOCK_SIZE not given"):
        k.compile(D="f32")
    with pytest.raises(teenyc.ArgumentError, match="unknown keyword BLOCK="):
        k.compile(D="f32", BLOCK=256)
    with pytest.raises(ValueError, match="no kernel 'nope'"):
        teenyc.kernel(os.path.join(kernels, "vector_add.c"), "nope")


def test_mode_names_are_checked():
    with pytest.raises(ValueError, match="not one of"):
        teenyc.Client(mode="remote")
    with pytest.raises(teenyc.TeenycError, match="cannot reach teenycd"):
        teenyc.Client(mode="daemon")
