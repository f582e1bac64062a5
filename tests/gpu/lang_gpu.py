"""tests/gpu/lang_gpu.py — the language of issue 13 on the GPU (tests/lang/).

Each kernel of tests/lang/ that tests/unit/test_lang.c runs in the
interpreter and the emulator runs here on the H200 through teenyc's PTX,
against a Python/torch reference: break/continue/return in loops, typed
constants, dtype tests, structs (reduce and scan over them), builtin
names as user names; device_print's lines (the CUDA printf buffer, read
from this process's standard output) against the interpreter's; and
device_assert, which must stop the kernel with its message when compiled
with --debug and do nothing without it (in a child process: a failed
assert leaves the CUDA context unusable); the shape builtins, gather,
sort and histogram; the ports of tutorials 08 and 09; tiles of rank 3
and 4 (permute, join/split, reductions along every axis, batched dots).  Prints one line per
case and exits 1 if any failed.

    python3 tests/gpu/lang_gpu.py
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from teeny_gpu import Driver, Kernel, TensorDesc, rel_err, teenyc_path  # noqa: E402


def cdiv(a, b):
    return (a + b - 1) // b

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


def check_shape_builtins(drv, tc):
    """join/interleave/cat/ravel/permute/split (shapes.c), gather/flip
    (gather.c), sort (sorts.c), histogram (hist.c), against torch."""
    B, P = 16, 3
    k = Kernel(drv, tc, L + "shapes.c", "joins", {"D": "f32", "BLOCK": B})
    x = torch.randn(P * B, device="cuda")
    y = torch.randn(P * B, device="cuda")
    out = torch.full((P * 11 * B,), float("nan"), device="cuda")
    k((P,), x, y, out)
    torch.cuda.synchronize()
    good = True
    for p in range(P):
        a, b, o = x[p * B:(p + 1) * B], y[p * B:(p + 1) * B], out[p * 11 * B:(p + 1) * 11 * B]
        m = b.view(B // 4, 4)
        want = torch.cat([torch.stack([a, b], 1).reshape(-1), torch.stack([b, a], 1).reshape(-1),
                          a, b, b, a, m.t().reshape(-1), torch.stack([a, b], 1).reshape(-1)])
        good = good and torch.equal(o, want)
    record("shapes: join, interleave, cat, ravel, permute, split", good)

    B = 64
    k = Kernel(drv, tc, L + "gather.c", "gathers", {"D": "f32", "BLOCK": B})
    x = torch.randn(2 * B, device="cuda")
    ix = torch.randint(-8, B + 8, (B,), device="cuda", dtype=torch.int32)
    lx = torch.randint(-3, 6, (B,), device="cuda", dtype=torch.int64)
    out = torch.full((2 * 8 * B,), float("nan"), device="cuda")
    k((2,), x, ix, lx, out)
    torch.cuda.synchronize()
    good = True
    zero = torch.zeros((), device="cuda")
    for p in range(2):
        a, o = x[p * B:(p + 1) * B], out[p * 8 * B:(p + 1) * 8 * B]
        m = a.view(B // 4, 4)
        ok = (ix >= 0) & (ix < B)
        s0 = torch.where(ok, a[ix.clamp(0, B - 1).long()], zero)
        lk = lx.view(B // 4, 4)
        s4 = torch.where((lk >= 0) & (lk < 4), m.gather(1, lk.clamp(0, 3)), zero).reshape(-1)
        kk = (torch.arange(B // 2, device="cuda")[:, None] + torch.arange(4, device="cuda")[None, :]
              - 2)
        s5 = torch.where((kk >= 0) & (kk < B // 4),
                         m[kk.clamp(0, B // 4 - 1), torch.arange(4, device="cuda")[None, :]],
                         zero).reshape(-1)
        s7 = a[B - 1 - 2 * torch.arange(B // 2, device="cuda")]
        good = good and torch.equal(o[:B], s0) and torch.equal(o[B:2 * B], a.flip(0))
        good = good and torch.equal(o[2 * B:3 * B], m.flip(0).reshape(-1))
        good = good and torch.equal(o[3 * B:4 * B], m.flip(1).reshape(-1))
        good = good and torch.equal(o[4 * B:5 * B], s4) and torch.equal(o[5 * B:7 * B], s5)
        good = good and torch.equal(o[7 * B:7 * B + B // 2], s7)
    record("gather: 1-D, 2-D on both axes, out-of-range and i64 indices; flip", good)

    B = 256
    k = Kernel(drv, tc, L + "sorts.c", "sorts", {"BLOCK": B})
    x = torch.rand(B, device="cuda")
    y = torch.randint(-1000, 1000, (B,), device="cuda", dtype=torch.int16)
    o1 = torch.full((B,), 7.0, device="cuda")
    o2 = torch.zeros(B, device="cuda", dtype=torch.int16)
    o3 = torch.zeros(B, device="cuda", dtype=torch.bool)
    k((1,), x, y, o1, o2, o3)
    torch.cuda.synchronize()
    i = torch.arange(B, device="cuda")
    v = torch.where(i % 7 == 3, torch.full_like(x, float("nan")), x)
    v = torch.where(i % 5 == 1, torch.full_like(x, -0.0), torch.where(i % 5 == 2, torch.zeros_like(x), v))
    ref = torch.sort(v).values  # NaNs last, as ours
    good = torch.equal(torch.isnan(o1), torch.isnan(ref)) and bool(torch.all((o1 == ref) | torch.isnan(ref)))
    good = good and torch.equal(o2.view(-1, 8), torch.sort(y.view(-1, 8), 1, descending=True).values)
    good = good and torch.equal(o3, torch.sort((x > 0.5).to(torch.uint8)).values.bool())
    record("sort: floats with NaN and signed zeros, rows descending, bools", good)

    B, BINS, n = 128, 16, 300
    k = Kernel(drv, tc, L + "hist.c", "counts", {"BLOCK": B, "BINS": BINS})
    grid = (n + B - 1) // B
    xs = torch.randint(-4, 20, (n,), device="cuda", dtype=torch.int32)
    ys = torch.randint(0, 255, (n,), device="cuda", dtype=torch.uint8)
    zs = torch.randint(-2, 2, (n,), device="cuda", dtype=torch.int64)
    out = torch.zeros(3 * BINS, device="cuda", dtype=torch.int32)
    k((grid,), xs, ys, zs, out, n)
    torch.cuda.synchronize()

    def counts(v):
        v = v[(v >= 0) & (v < BINS)].long()
        return torch.bincount(v, minlength=BINS).int()

    z = torch.zeros(grid * B, device="cuda", dtype=torch.int64)
    z[:n] = zs
    w = z * 4294967296 + torch.arange(grid * B, device="cuda") % 5
    want = torch.cat([counts(xs.long()), counts(ys.long()), counts(w)])
    record("histogram: i32 with a mask, u8 past the bins, i64 out of range", torch.equal(out, want))


def cube_ref(v, A, B, C):
    """The 15 segments of tests/lang/ranks.c's cube for one [A, B, C] v."""
    p = v.reshape(A * B, C)
    q = p.flip(0)
    idx = (torch.arange(C, device=v.device)[None, None, :] * 3
           + torch.arange(B, device=v.device)[None, :, None]) % C
    segs = [v.permute(2, 0, 1), v.permute(1, 0, 2), v.flip(1),
            v.gather(2, idx.expand(A, B, C)), torch.sort(v, 2).values,
            torch.stack([p, q], 2), torch.stack([p, q], 2).reshape(A * B, 2 * C), q,
            torch.cat([v, v.flip(0)], 0), v.reshape(A, B, C // 2, 2).permute(3, 0, 1, 2),
            v + v.max(1, keepdim=True).values, v.float().cumsum(1).to(v.dtype)]
    return torch.cat([t.reshape(-1) for t in segs])


def check_ranks(drv, tc):
    """Tiles of rank 3 and 4 (ranks.c): permute/trans, flip, gather, sort,
    join/interleave/split, cat, a 4-D permute, reductions and scans along
    every axis, argmax/argmin; batched dots against torch.bmm."""
    for dt, tdt, (A, B, C), P in (("f32", torch.float32, (2, 4, 8), 3),
                                  ("bf16", torch.bfloat16, (8, 16, 4), 2)):
        n = A * B * C
        k = Kernel(drv, tc, L + "ranks.c", "cube", {"D": dt, "A": A, "B": B, "C": C})
        x = torch.randn(P * n, device="cuda").to(tdt)
        out = torch.full((P * 15 * n,), float("nan"), device="cuda").to(tdt)
        ns, ni = B * C + A * C + 3 * A * B + 1, A * C + B * C
        sums = torch.full((P * ns,), float("nan"), device="cuda")
        idx = torch.full((P * ni,), -5, device="cuda", dtype=torch.int32)
        k((P,), x, out, sums, idx)
        torch.cuda.synchronize()
        good = True
        for pid in range(P):
            v = x[pid * n:(pid + 1) * n].view(A, B, C)
            o = out[pid * 15 * n:(pid + 1) * 15 * n]
            want = cube_ref(v, A, B, C)
            # segments 0-12 only move elements: bit for bit
            good = good and torch.equal(o[:13 * n], want[:13 * n])
            tol = 1e-5 if dt == "f32" else 2e-2
            good = good and torch.allclose(o[13 * n:].float(), want[13 * n:].float(), rtol=tol, atol=tol)
            f = v.float()
            w = f.reshape(A, B, C // 2, 2)
            swant = torch.cat([f.sum(0).reshape(-1), f.sum(1).reshape(-1), f.sum(2).reshape(-1),
                               f.sum().reshape(1), w.sum(2).reshape(-1)])
            good = good and torch.allclose(sums[pid * ns:(pid + 1) * ns], swant, rtol=1e-4, atol=1e-4)
            iwant = torch.cat([f.argmax(1).reshape(-1), f.argmin(0).reshape(-1)]).int()
            good = good and torch.equal(idx[pid * ni:(pid + 1) * ni], iwant)
        record(f"ranks: cube {dt} [{A}, {B}, {C}]", good)
    for dt, tdt, (BT, M, K, N), tol in (("f16", torch.float16, (2, 16, 16, 32), 2e-3),
                                        ("f32", torch.float32, (4, 16, 32, 16), 1e-2)):
        k = Kernel(drv, tc, L + "ranks.c", "batched_dot", {"D": dt, "BT": BT, "M": M, "K": K, "N": N})
        a = torch.randn(BT, M, K, device="cuda").to(tdt)
        b = torch.randn(BT, K, N, device="cuda").to(tdt)
        bt = torch.randn(BT, N, K, device="cuda").to(tdt)
        c = torch.full((2 * BT * M * N,), float("nan"), device="cuda")
        k((1,), a, b, bt, c)
        torch.cuda.synchronize()
        r0 = torch.bmm(a.double(), b.double())
        r1 = r0 + torch.bmm(a.double(), bt.double().transpose(1, 2))
        want = torch.cat([r0.reshape(-1), r1.reshape(-1)]).float()
        err = (c - want).abs().max().item()
        record(f"ranks: batched dot {dt} [{BT}, {M}, {K}] x [{BT}, {K}, {N}]",
               torch.allclose(c, want, rtol=tol, atol=tol * 4), f"max error {err:.2e}")


def check_descs(drv, tc):
    """Tensor descriptors and block pointers (descs.c; examples/kernels/
    matmul_desc.c) against torch: overhanging and negative-offset blocks,
    1-D and 3-D descriptors, matmuls on sizes that are not multiples of
    the blocks (b column-major for the block-pointer one)."""
    M, N, BM, BN = 1000, 777, 64, 32
    k = Kernel(drv, tc, L + "descs.c", "desc_copy", {"D": "f16", "BM": BM, "BN": BN})
    gm, gn = cdiv(M, BM), cdiv(N, BN)
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    out = torch.full((N, M), float("nan"), device="cuda", dtype=torch.float16)
    sums = torch.full((gm * gn,), float("nan"), device="cuda")
    sh = torch.full((gm * gn, BM, BN), float("nan"), device="cuda", dtype=torch.float16)
    k((gm * gn,), x, out, sums, sh, M, N)
    torch.cuda.synchronize()
    good = torch.equal(out, x.t() * 2 + 1)
    xp = torch.zeros(gm * BM + 8, gn * BN + 40, device="cuda", dtype=torch.float16)
    xp[3:3 + M, :N] = x  # x shifted down 3 rows, zeros around it
    for p in range(gm * gn):
        pm, pn = divmod(p, gn)
        blk = x[pm * BM:(pm + 1) * BM, pn * BN:(pn + 1) * BN].float()
        good = good and abs(sums[p].item() - blk.sum().item()) <= 1e-2 * (1 + blk.abs().sum().item())
        want = xp[pm * BM:pm * BM + BM, pn * BN + 5:pn * BN + 5 + BN]
        good = good and torch.equal(sh[p], want)
    record("descs: transposing copy, overhanging and negative-offset blocks", good)

    # the same through tensor_desc parameters: N = 777 f32 rows are not
    # 16-byte aligned (plain loads), N = 776 are (the TMA, its zero fill over
    # the top edge and past the right one)
    for N in (777, 776):
        k = Kernel(drv, tc, L + "descs.c", "desc_param", {"D": "f32", "BM": 16, "BN": 32})
        gm, gn = cdiv(M, 16), cdiv(N, 32)
        x = torch.randn(M, N, device="cuda")
        out = torch.full((N, M), float("nan"), device="cuda")
        sums = torch.full((gm * gn,), float("nan"), device="cuda")
        sh = torch.full((gm * gn, 16, 32), float("nan"), device="cuda")
        src, dst = TensorDesc(drv, x, (16, 32)), TensorDesc(drv, out, (32, 16))
        k((gm * gn,), src, dst, sums, sh, gn)
        torch.cuda.synchronize()
        good = torch.equal(out, x.t() * 2 + 1)
        xp = torch.zeros(gm * 16 + 8, gn * 32 + 40, device="cuda")
        xp[3:3 + M, :N] = x
        blocks = x.new_zeros(gm * 16, gn * 32)
        blocks[:M, :N] = x
        want_sums = blocks.view(gm, 16, gn, 32).sum((1, 3)).flatten()
        good = good and torch.allclose(sums, want_sums, rtol=1e-4, atol=1e-3)
        want = torch.stack([xp[pm * 16:pm * 16 + 16, pn * 32 + 5:pn * 32 + 37]
                            for pm in range(gm) for pn in range(gn)])
        good = good and torch.equal(sh, want)
        record(f"descs: tensor_desc parameters, N={N} ({'TMA' if src.tma else 'plain loads'})",
               good)

    n, A, B, C = 300, 3, 5, 20
    k = Kernel(drv, tc, L + "descs.c", "desc_ranks", {"D": "f32", "BM": 128})
    x = torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    cube = torch.full((3, 2, 4, 8), float("nan"), device="cuda")
    k((3,), x, out, cube, n, A, B, C)
    torch.cuda.synchronize()
    x3 = torch.zeros(A + 4, B + 8, C + 16, device="cuda")
    x3[:A, :B, :C] = x.view(A, B, C)
    want = x3[2:4, 3:7, 16:24]
    record("descs: 1-D and 3-D descriptors", torch.equal(out, x + 1) and
           all(torch.equal(cube[p], want) for p in range(3)))

    M, N, K = 333, 517, 250
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    for file, name, extra, bind in (
            (L + "descs.c", "bp_matmul", "bcol", {"D": "f16", "BM": 64, "BN": 64, "BK": 32}),
            (L + "descs.c", "td_matmul", "", {"D": "f16", "BM": 64, "BN": 64, "BK": 32}),
            ("examples/kernels/matmul_desc.c", "matmul_desc", "",
             {"D": "f16", "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8})):
        bm = bind.get("BM", bind.get("BLOCK_M"))
        bn = bind.get("BN", bind.get("BLOCK_N"))
        k = Kernel(drv, tc, file, name, bind, num_warps=8 if bm == 128 else 4)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        grid = (cdiv(M, bm) * cdiv(N, bn),)
        if extra == "bcol":
            bc = b.t().contiguous()  # b(k, n) at n * K + k
            k(grid, a, bc, c, M, N, K, K, 1, 1, K)
        else:
            k(grid, a, b, c, M, N, K)
        torch.cuda.synchronize()
        err = rel_err(c, ref)
        record(f"descs: {name} f16 {M}x{N}x{K}", err < 5e-3, f"rel err {err:.1e}")


def check_tutorial_matmuls(drv, tc):
    """Tutorials 08 (grouped, pointer tables) and 09 (persistent)."""
    M, N, K = 1000, 520, 300
    k = Kernel(drv, tc, "examples/kernels/matmul_persistent.c", "matmul_persistent",
               {"D": "f16", "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                "NUM_SMS": 132})
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    tiles = ((M + 127) // 128) * ((N + 127) // 128)
    k((min(132, tiles),), a, b, c, M, N, K, K, 1, N, 1, N, 1)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    record("tutorial 09: persistent matmul 1000x520x300", err <= 5e-3, f"err {err:.2e}")

    sizes = [(70, 40, 50), (1024, 512, 256), (33, 100, 700), (256, 256, 64)]
    mats = [(torch.randn(m, kk, device="cuda", dtype=torch.float16),
             torch.randn(kk, n2, device="cuda", dtype=torch.float16),
             torch.full((m, n2), float("nan"), device="cuda", dtype=torch.float16))
            for m, n2, kk in sizes]
    ptrs = [torch.tensor([t[i].data_ptr() for t in mats], device="cuda", dtype=torch.int64)
            for i in range(3)]
    sz = torch.tensor([v for m, n2, kk in sizes for v in (m, n2, kk)], device="cuda",
                      dtype=torch.int32)
    lds = torch.tensor([v for m, n2, kk in sizes for v in (kk, n2, n2)], device="cuda",
                       dtype=torch.int32)
    pool = torch.zeros(1, device="cuda", dtype=torch.float16)  # unused on the GPU
    k = Kernel(drv, tc, "examples/kernels/grouped_matmul.c", "grouped_matmul",
               {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "NUM_SMS": 132})
    k((132,), pool, ptrs[0], ptrs[1], ptrs[2], sz, lds, len(sizes))
    torch.cuda.synchronize()
    err = max(((c.double() - a.double() @ b.double()).abs().max()
               / (a.double() @ b.double()).abs().max()).item() for a, b, c in mats)
    record("tutorial 08: grouped matmul, 4 groups through pointer tables", err <= 5e-3,
           f"err {err:.2e}")


def check_hints_and_fp8_dot(drv, tc):
    """Cache/eviction options leave values alone; fp8 dots (converted to
    f16 for the tensor cores) against float64."""
    G = "tests/gpu/kernels/"
    n = 100003
    k = Kernel(drv, tc, G + "hints.c", "hinted", {"B": 1024})
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    k(((n + 1023) // 1024,), x, y, out, n)
    torch.cuda.synchronize()
    record("cache_cg/cv/ca/cs, evict_first/last: values unchanged",
           torch.equal(out, x * 2 + y + x[0]))
    M, N, K = 300, 200, 160
    f8 = {"f8e4m3": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2, "f16": torch.float16}
    for ta, tb in (("f8e4m3", "f8e4m3"), ("f8e5m2", "f8e4m3"), ("f16", "f8e5m2")):
        k = Kernel(drv, tc, G + "fp8_dot.c", "fp8_dot",
                   {"TA": ta, "TB": tb, "BM": 128, "BN": 128, "BK": 64})
        a = torch.randn(M, K, device="cuda").to(f8[ta])
        b = torch.randn(K, N, device="cuda").to(f8[tb])
        c = torch.full((M, N), float("nan"), device="cuda")
        k(((M + 127) // 128, (N + 127) // 128), a, b, c, M, N, K)
        torch.cuda.synchronize()
        ref = a.double() @ b.double()
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        record(f"dot {ta} x {tb} {M}x{N}x{K}", err <= 1e-5, f"err {err:.2e}")


def main():
    tc = teenyc_path()
    drv = Driver()
    check_jumps(drv, tc)
    check_tuples(drv, tc)
    check_consts(drv, tc)
    check_introspect_and_shadow(drv, tc)
    check_prints(drv, tc)
    check_asserts(tc)
    check_shape_builtins(drv, tc)
    check_tutorial_matmuls(drv, tc)
    check_hints_and_fp8_dot(drv, tc)
    check_ranks(drv, tc)
    check_descs(drv, tc)
    print(f"{sum(results)}/{len(results)} passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
