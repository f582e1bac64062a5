#!/usr/bin/env python3
"""tests/host/teenyc_run_test.py — `teenyc run` end to end (standard library only).

Every reproducer in tests/repro/ is replayed with the command in its first
comment (`--engine both`: interpreter and host emulator must agree) and,
where the file states it, the model's answer is checked from the .npy files
written back.  Then .npy round trips and the errors users meet, each with
its exit status.

    python3 tests/host/teenyc_run_test.py BUILD/bin/teenyc SOURCE_DIR
"""
import ast
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import unittest

TEENYC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/bin/teenyc")
ROOT = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else ".")
REPRO = os.path.join(ROOT, "tests", "repro")

FMT = {"<f4": "f", "<f8": "d", "<i4": "i", "<u4": "I", "<i8": "q", "<u8": "Q",
       "<i2": "h", "<u2": "H", "|i1": "b", "|u1": "B", "|b1": "?"}


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    hlen = struct.unpack("<H", data[8:10])[0]
    hdr = ast.literal_eval(data[10:10 + hlen].decode())
    n = 1
    for d in hdr["shape"]:
        n *= d
    vals = struct.unpack("<%d%s" % (n, FMT[hdr["descr"]]), data[10 + hlen:])
    return hdr, list(vals)


def write_npy(path, descr, vals, shape=None):
    shape = shape or (len(vals),)
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = (64 - (10 + len(hdr) + 1) % 64) % 64
    hdr = hdr + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), FMT[descr]), *vals))


def run(args, cwd=None):
    p = subprocess.run([TEENYC, "run"] + args, cwd=cwd, capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def replay_command(path):
    """The teenyc run command in a reproducer's first comment."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"teenyc run (.*?)(?:\n \* expect|\*/)", text, re.S)
    assert m, "%s has no replay command" % path
    return shlex.split(re.sub(r"\\?\n\s*\*", " ", m.group(1)))


class Reproducers(unittest.TestCase):
    def replay(self, name):
        args = replay_command(os.path.join(REPRO, name))
        out = tempfile.mkdtemp()
        rc, so, se = run(args + ["--out", out, "--quiet"], cwd=REPRO)
        self.assertEqual(rc, 0, "%s: %s" % (name, se))
        return out

    def test_every_reproducer_agrees(self):
        names = sorted(f for f in os.listdir(REPRO) if f.endswith(".c"))
        self.assertGreaterEqual(len(names), 6)
        for n in names:
            with self.subTest(n):
                self.replay(n)

    def test_scalar_load_uniform(self):
        for n in ("scalar_load_uniform.c", "branch_on_load.c"):
            out = self.replay(n)
            self.assertEqual(read_npy(os.path.join(out, "out.npy"))[1], [0] * 128, n)
            self.assertEqual(read_npy(os.path.join(out, "flag.npy"))[1], [1], n)

    def test_store_then_load(self):
        x = read_npy(os.path.join(self.replay("store_then_load.c"), "x.npy"))[1]
        self.assertEqual(x[77], 780.0)
        self.assertEqual([x[i] for i in (0, 1, 127)], [1.0, 2.0, 128.0])

    def test_lock(self):
        out = self.replay("lock_accumulate.c")
        dw = read_npy(os.path.join(out, "dw.npy"))[1]
        self.assertEqual(dw[:100], [6.0 * i + 15 for i in range(100)])
        self.assertEqual(read_npy(os.path.join(out, "lock.npy"))[1], [0])

    def test_cross_entropy_fixup(self):
        out = self.replay("cross_entropy_fixup.c")
        grad = read_npy(os.path.join(out, "grad.npy"))[1]
        for row in range(7):  # a softmax row sums to 1; the fix-up takes 1 away
            self.assertAlmostEqual(sum(grad[row * 401:(row + 1) * 401]), 0.0, places=4)


VECTOR_ADD = ["examples/kernels/vector_add.c", "-k", "vector_add", "-d", "D=f32",
              "-c", "BLOCK_SIZE=1024", "--grid", "3"]


class Usage(unittest.TestCase):
    def test_npy_round_trip(self):
        d = tempfile.mkdtemp()
        write_npy(os.path.join(d, "a.npy"), "<f4", [float(i) for i in range(3000)], (30, 100))
        write_npy(os.path.join(d, "b.npy"), "<f4", [0.5] * 3000)
        rc, so, se = run(VECTOR_ADD + ["--arg", "a_ptr=%s/a.npy" % d, "--arg",
                                        "b_ptr=%s/b.npy" % d, "--fill", "out_ptr=3000",
                                        "--arg", "n_elements=2999", "--out", d], cwd=ROOT)
        self.assertEqual(rc, 0, se)
        hdr, out = read_npy(os.path.join(d, "out_ptr.npy"))
        self.assertEqual(out[:3], [0.5, 1.5, 2.5])
        self.assertEqual(out[2999], 0.0)  # past n_elements: untouched
        self.assertEqual(read_npy(os.path.join(d, "a_ptr.npy"))[0]["shape"], (30, 100))

    def test_engines_agree_on_an_example(self):
        rc, so, se = run(VECTOR_ADD + ["--fill", "a_ptr=3000:iota", "--fill",
                                        "b_ptr=3000:random:7", "--fill", "out_ptr=3000",
                                        "--arg", "n_elements=3000", "--engine", "both"], cwd=ROOT)
        self.assertEqual(rc, 0, se)
        self.assertIn("out_ptr: f32[3000]", so)

    def test_random_fill_of_every_float_dtype(self):
        """--fill NAME=N:random gives nonzero values in fp8 buffers too (they
        were left zero), and a dot on them agrees between the engines."""
        k = os.path.join(ROOT, "tests/gpu/kernels/fp8_dot.c")
        for ta in ("f8e4m3", "f8e5m2"):
            with tempfile.TemporaryDirectory() as d:
                rc, so, se = run([k, "-k", "fp8_dot", "-d", "TA=" + ta, "-d", "TB=f8e4m3",
                                  "-c", "BM=64", "-c", "BN=64", "-c", "BK=32", "--grid", "2,2",
                                  "--engine", "both", "--tol", "1e-4", "--atol", "1e-5",
                                  "--fill", "a=6000:random", "--fill", "b=6000:random:2",
                                  "--fill", "c=10000", "--arg", "M=100", "--arg", "N=100",
                                  "--arg", "K=60", "--out", d])
                self.assertEqual(rc, 0, se)
                a = read_npy(os.path.join(d, "a.npy"))[1]
                self.assertGreater(sum(1 for v in a if v), 5000, ta)  # fp8 bits, mostly nonzero
                c = read_npy(os.path.join(d, "c.npy"))[1]
                self.assertGreater(sum(1 for v in c if v), 9000, ta)

    def test_errors(self):
        d = tempfile.mkdtemp()
        write_npy(os.path.join(d, "i.npy"), "<i4", [1, 2, 3])
        with open(os.path.join(d, "bad.npy"), "wb") as f:
            f.write(b"not an array")
        full = ["--fill", "b_ptr=3000", "--fill", "out_ptr=3000", "--arg", "n_elements=3000"]
        cases = [
            (VECTOR_ADD + full, 1, "no --arg or --fill for parameter 'a_ptr'"),
            (VECTOR_ADD + full + ["--arg", "a_ptr=%s/i.npy" % d], 1, "holds dtype '<i4'"),
            (VECTOR_ADD + full + ["--arg", "a_ptr=%s/bad.npy" % d], 1, "is not a .npy file"),
            (VECTOR_ADD + full + ["--fill", "a_ptr=100"], 1, "out-of-bounds load"),
            (VECTOR_ADD + full + ["--fill", "a_ptr=3000", "--fill", "zz=3"], 1,
             "'zz' is not a parameter"),
            (VECTOR_ADD + full + ["--fill", "a_ptr=3000:ones"], 1, "not zeros, iota or random"),
            (VECTOR_ADD + full + ["--fill", "a_ptr=3000", "--grid", "0"], 2, "--grid wants"),
            (VECTOR_ADD + full + ["--fill", "a_ptr=3000", "--engine", "gpu"], 2,
             "--engine is interp, emu or both"),
            (["examples/kernels/vector_add.c", "-k", "nope"], 1, "nope"),
        ]
        for args, status, message in cases:
            with self.subTest(message):
                rc, so, se = run(args, cwd=ROOT)
                self.assertEqual(rc, status, se)
                self.assertIn(message, se)

    def test_race_is_an_error(self):
        rc, so, se = run(["scalar_load_uniform.c", "-k", "k", "-c", "B=128", "--grid", "2",
                          "--fill", "flag=1", "--fill", "out=128"], cwd=REPRO)
        self.assertEqual(rc, 1)
        self.assertIn("data race: program (1, 0, 0) reads 'flag'[0]", se)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=1)
