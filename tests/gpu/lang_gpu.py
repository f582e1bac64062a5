"""tests/gpu/lang_gpu.py — the language of issue 13 on the GPU (tests/lang/).

Each kernel of tests/lang/ that tests/unit/test_lang.c runs in the
interpreter and the emulator runs here on the H200 through teenyc's PTX,
against a Python/torch reference: break/continue/return in loops, typed
constants, dtype tests, structs (reduce and scan over them), builtin
names as user names; device_print's lines (the CUDA printf buffer, read
from this process's standard output) against the interpreter's; and
device_assert, which must stop the kernel with its message when compiled
with --debug and do nothing without it (in a child process: a failed
assert leaves the CUDA context unusable).  Prints one line per case and
exits 1 if any failed.

    python3 tests/gpu/lang_gpu.py
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from teeny_gpu import Driver, Kernel, teenyc_path  # noqa: E402

L = "tests/lang/"
results = []


def record(name, good, extra=""):
    results.append(good)
    print(f"{'PASS' if good else 'FAIL'}  {name:50s} {extra}", flush=True)


def scalar_exits_ref(pid, n):
    first = next((i for i in range(n) if i > pid * 2.5), -1)
    count = k = 0
    while k < n:
        k += 1
        if k % 3 == 0:
            continue
        if k > 10 + pid:
            break
        count += k
    d = steps = 0
    while True:
        d += 2
        if d % 4 != 0:
            steps += 1
            if steps == pid + 2:
                break
        if not d < 40:
            break
    pairs = sum(a * 10 + b for a in range(6) for b in range(a + 1) if (a + b + pid) % 2)
    m, trips = pid + 1, 0
    while True:
        trips += 1
        if m == 1:
            break
        m = m // 2 if m % 2 == 0 else 3 * m + 1
    return [first, count, d * 100 + steps, pairs, trips]


def check_jumps(drv, tc):
    k = Kernel(drv, tc, L + "jumps.c", "scalar_exits", {"BLOCK": 16})
    n = 20
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    out = torch.full((40,), -9, device="cuda", dtype=torch.int32)
    k((4,), x, out, n)
    torch.cuda.synchronize()
    got = out.view(5, 8)[:, :4].t().tolist()
    want = [scalar_exits_ref(p, n) for p in range(4)]
    record("jumps: scalar_exits (break, continue, return)", got == want)
    k = Kernel(drv, tc, L + "jumps.c", "early_kernel_return", {"BLOCK": 16})
    x = torch.arange(5, device="cuda", dtype=torch.int32)
    out = torch.zeros(64, device="cuda", dtype=torch.int32)
    k((4,), x, out, 5)
    torch.cuda.synchronize()
    want = []
    for p in range(4):
        stop = min(p + 3, 5)
        want += [i + 1 if i < stop else 0 for i in range(15)] + [0 if p + 3 < 5 else -7]
    record("jumps: early_kernel_return (return in a loop)", out.tolist() == want)


def check_tuples(drv, tc):
    rows, n = 37, 12
    x = torch.randn(rows * n, device="cuda")
    k = Kernel(drv, tc, L + "tuples.c", "row_stats", {"BLOCK": 16})
    out = torch.full((rows * 4,), float("nan"), device="cuda")
    k((rows,), x, out, n)
    torch.cuda.synchronize()
    v = x.view(rows, n).double()
    o = out.view(rows, 4).double()
    good = (torch.allclose(o[:, 0], v.mean(1), atol=1e-5)
            and torch.allclose(o[:, 1], v.var(1, unbiased=False), atol=1e-5)
            and torch.equal(o[:, 3], v.argmax(1).double())
            and torch.allclose(o[:, 2], v.max(1).values * 10, atol=1e-5))
    record("tuples: row_stats (Welford, argmax with payload)", good)
    n = 50
    x = torch.randn(2 * n, device="cuda")
    k = Kernel(drv, tc, L + "tuples.c", "online_softmax", {"BLOCK": 16})
    out = torch.full((6,), float("nan"), device="cuda")
    k((2,), x, out, n)
    torch.cuda.synchronize()
    v = x.view(2, n).double()
    m = v.max(1).values
    ref = torch.stack([m, torch.exp(v - m[:, None]).sum(1), torch.full_like(m, n)], 1)
    record("tuples: online_softmax (struct in a loop)",
           torch.allclose(out.view(2, 3).double(), ref, rtol=1e-5))
    x = torch.randint(-100, 100, (16,), device="cuda", dtype=torch.int32)
    k = Kernel(drv, tc, L + "tuples.c", "running_argmax", {"BLOCK": 16})
    out = torch.zeros(35, device="cuda", dtype=torch.int32)
    k((1,), x, out)
    torch.cuda.synchronize()
    xs, best, want_v, want_i = x.tolist(), 0, [], []
    for i, a in enumerate(xs):
        if a >= xs[best]:
            best = i
        want_v.append(xs[best])
        want_i.append(best)
    first = next((i for i, a in enumerate(xs) if a > 2), -1)
    tail = [xs[first] if first >= 0 else -1, first, -1]
    record("tuples: running_argmax (scan over a struct, struct returned in a loop)",
           out.tolist() == want_v + want_i + tail)


def check_consts(drv, tc):
    b = {"BLOCK": 16, "EPS": "1e-5", "SCALE": "0.1", "IS_CAUSAL": "true", "BIG": 5000000000,
         "HALF": "0.375", "MASK": "0xf0f0f0f0"}
    k = Kernel(drv, tc, L + "consts.c", "typed_consts", b)
    n = 64
    x = torch.randn(n, device="cuda")
    y = torch.zeros(n, device="cuda")
    z = torch.zeros(n, device="cuda", dtype=torch.int64)
    w = torch.zeros(n, device="cuda", dtype=torch.float64)
    q = torch.zeros(n, device="cuda", dtype=torch.int8)
    k((4,), x, y, z, w, q)
    torch.cuda.synchronize()
    i = torch.arange(n, device="cuda")
    ry = x / torch.sqrt(x * x + 1e-5) + 1.0 + 0.375
    good = (torch.allclose(y, ry, atol=1e-6) and torch.equal(z, i * 5000000000 + 0xf0)
            and torch.equal(w, x.double() * 0.1) and torch.equal(q, (i + 16).to(torch.int8)))
    record(f"consts: {k.id}", good)


def check_introspect_and_shadow(drv, tc):
    for dt, code in (("f16", 5120), ("i32", 241)):
        k = Kernel(drv, tc, L + "debug.c", "introspect", {"D": dt, "BLOCK": 16})
        x = torch.arange(16, device="cuda").to(torch.float16 if dt == "f16" else torch.int32)
        out = torch.zeros(17, device="cuda")
        k((1,), x, out)
        torch.cuda.synchronize()
        ys = torch.sqrt(x.float()).half().float() if dt == "f16" else x.float() * 2
        record(f"introspect D={dt}", out[0].item() == code and torch.equal(out[1:], ys))
    k = Kernel(drv, tc, L + "shadow.c", "shadow", {"sum": 16})
    x = torch.randn(48, device="cuda")
    out = torch.zeros(48, device="cuda")
    k((3,), x, out)
    torch.cuda.synchronize()
    t = x.view(3, 16) * 2 + 1
    record("shadow: builtin names as user names",
           torch.allclose(out.view(3, 16), t + t.max(1, keepdim=True).values))


def expected_prints(grid, n):
    lines = []
    for pid in range(grid):
        for e in range(4):
            o = pid * 4 + e
            v = float(o) if o < n else -1.0
            lines.append(f"pid ({pid}, 0, 0) idx ({e}) x[{o}] = {v:8.3f} as f16 {v:g}")
        lines.append(f"pid ({pid}, 0, 0) pid {pid} of {grid}: n={n}, big={n << 33:x}, 100%")
        for i in range(2):
            for j in range(4):
                m = i * 10 + j
                lines.append(f"pid ({pid}, 0, 0) idx ({i}, {j}) m={m:3d} neg={-m} "
                             f"small={m - 20} flag={int(m > 12)}")
        lines.append(f"pid ({pid}, 0, 0) third {pid / 3:.10f}")
    return sorted(lines)


def check_prints(drv, tc):
    k = Kernel(drv, tc, L + "debug.c", "prints", {"BLOCK": 4})
    x = torch.arange(10, device="cuda", dtype=torch.float32)
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            k((3,), x, 10)
            torch.cuda.synchronize()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        got = sorted(tmp.read().decode().splitlines())
    want = expected_prints(3, 10)
    record("device_print: the CUDA printf buffer", got == want,
           "" if got == want else f"{len(got)} lines, first {got[:2]}")


CHILD = """
import sys, torch
sys.path.insert(0, "tests/gpu")
from teeny_gpu import Driver, Kernel
drv = Driver()
b = {"BLOCK": 16}
if sys.argv[1] == "1":
    b["teeny.debug"] = 1
k = Kernel(drv, sys.argv[2], "tests/lang/debug.c", "checks", b)
x = (torch.arange(40, device="cuda", dtype=torch.int32) % 7) - 3
k((2,), x, 20)
torch.cuda.synchronize()
print("finished", x[:20].tolist())
"""


def check_asserts(tc):
    for debug in (0, 1):
        r = subprocess.run([sys.executable, "-c", CHILD, str(debug), tc], capture_output=True,
                           text=True)
        text = r.stdout + r.stderr
        if debug:
            good = (r.returncode != 0 and "device_assert failed: x[" in text
                    and "is negative" in text and "debug.c:61" in text)
        else:
            good = r.returncode == 0 and "finished" in text
        record(f"device_assert with debug={debug}", good,
               "" if good else text.strip().splitlines()[-1:])


def main():
    tc = teenyc_path()
    drv = Driver()
    check_jumps(drv, tc)
    check_tuples(drv, tc)
    check_consts(drv, tc)
    check_introspect_and_shadow(drv, tc)
    check_prints(drv, tc)
    check_asserts(tc)
    print(f"{sum(results)}/{len(results)} passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
