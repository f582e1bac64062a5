"""tests/python/test_abi.py — the ctypes structures of teenyc._lib have
the sizes and field offsets of the C headers (abi_layout.c prints them),
and the flag values agree."""
import ctypes
import os
import subprocess

import pytest

from teenyc import _lib


def c_layout():
    exe = os.environ.get("TEENY_ABI_LAYOUT")
    if not exe:
        pytest.skip("TEENY_ABI_LAYOUT is not set (ctest sets it)")
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict(line.rsplit(" ", 1) for line in out.splitlines())


def test_structures_match_the_headers():
    layout = c_layout()
    checked = 0
    for key, value in layout.items():
        if "." in key:
            struct, field = key.split(".")
            assert getattr(getattr(_lib, struct), field).offset == int(value), key
        elif hasattr(_lib, key) and isinstance(getattr(_lib, key), type):
            assert ctypes.sizeof(getattr(_lib, key)) == int(value), key
        else:
            assert getattr(_lib, key) == int(value), key
        checked += 1
    assert checked > 40
