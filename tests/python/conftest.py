"""tests/python/conftest.py — fixtures of the Python package's tests: the
package and library from the build tree (ctest sets PYTHONPATH and
TEENYC_CLIENT_LIBRARY), a real teenycd on a temporary socket and store,
and an environment where nothing is found by accident (no daemon socket,
no store, no CUDA driver: $TEENY_CUDA_LIBRARY points nowhere).
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

SRC = os.environ.get("TEENY_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
KERNELS = os.path.join(SRC, "examples", "kernels")


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No socket, store or mode from the caller's environment."""
    for var in ("TEENYCD_SOCKET", "TEENYC_MODE", "TEENYC_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("TEENYC_SYSTEM_SOCKET", str(tmp_path / "no-system.sock"))
    yield


def _answers(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


class Daemon:
    """teenycd on a temporary socket and store."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="teenyc-py-")
        self.socket = os.path.join(self.dir, "s.sock")
        self.cache = os.path.join(self.dir, "cache")
        self.log = open(os.path.join(self.dir, "teenycd.log"), "w")
        binary = os.environ.get("TEENYCD_BIN", "teenycd")
        self.proc = subprocess.Popen([binary, "--socket", self.socket, "--cache-dir", self.cache],
                                     stdout=self.log, stderr=self.log)
        for _ in range(500):
            if _answers(self.socket):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError(f"teenycd did not start: {open(self.log.name).read()}")

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(30) == 0
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def daemon():
    d = Daemon()
    yield d
    d.stop()


@pytest.fixture
def kernels():
    return KERNELS
