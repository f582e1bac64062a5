"""Imported by test_compile: importing teenyc (and compiling) must not
have imported torch, cupy or numpy (the package uses the standard library
only, and asks an array library only when one is already loaded)."""
import sys

assert not {"torch", "cupy", "numpy"} & set(sys.modules), sorted(
    {"torch", "cupy", "numpy"} & set(sys.modules))
