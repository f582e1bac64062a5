"""tests/gpu/math_accuracy.py — the accuracy of every f32 math builtin on the GPU.

Runs each kernel of tests/gpu/kernels/math_fns.c over every f32 value of
the function's documented range (all 2^32 bit patterns, filtered; with
--quick a strided subset), compares with torch's float64 result, and prints
the largest error in ulps (of the f32 binade of the reference) inside the
documented range and over all finite inputs.  Exits 1 when an accurate
function exceeds docs/dsl.md §5's bound.  The fast_* forms are reported
(absolute error too), not checked.

    python3 tests/gpu/math_accuracy.py [--quick]
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from teeny_gpu import Driver, Kernel, teenyc_path  # noqa: E402

FILE = "tests/gpu/kernels/math_fns.c"


def sigmoid(x):
    return torch.sigmoid(x)


# name, float64 reference, documented range, bound (ulp; None: report only)
CASES = [
    ("exp", torch.exp, (-87.0, 88.0), 3),
    ("exp2", torch.exp2, (-126.0, 127.0), 3),  # ex2.approx: 2.05 ulp measured (H200)
    ("log", torch.log, (0.0, math.inf), 3),
    ("log2", torch.log2, (0.0, math.inf), 3),
    ("sin", torch.sin, (-105615.0, 105615.0), 3),
    ("cos", torch.cos, (-105615.0, 105615.0), 3),
    ("tanh", torch.tanh, (-math.inf, math.inf), 4),
    ("sigmoid", sigmoid, (-80.0, 80.0), 5),
    ("erf", torch.erf, (-math.inf, math.inf), 4),
    ("sqrt", torch.sqrt, (0.0, math.inf), 0.5),
    ("rsqrt", torch.rsqrt, (0.0, math.inf), 2),
    ("asin", torch.asin, (-1.0, 1.0), 1),  # in f64, rounded once
    ("acos", torch.acos, (-1.0, 1.0), 1),
    ("atan", torch.atan, (-math.inf, math.inf), 1),
    ("fast_exp", torch.exp, (-87.0, 88.0), None),
    ("fast_exp2", torch.exp2, (-126.0, 127.0), None),
    ("fast_log", torch.log, (0.0, math.inf), None),
    ("fast_log2", torch.log2, (0.0, math.inf), None),
    ("fast_sin", torch.sin, (-math.pi, math.pi), None),
    ("fast_cos", torch.cos, (-math.pi, math.pi), None),
    ("fast_tanh", torch.tanh, (-math.inf, math.inf), None),
]

CHUNK = 1 << 26


def ulp_error(got, ref):
    """|got - ref| in ulps of ref's f32 binade; NaN/inf must match exactly."""
    a = ref.abs().clamp(min=2.0 ** -126)
    _, e = torch.frexp(a)
    ulp = torch.ldexp(torch.ones_like(a), (e - 24).to(torch.int32))
    err = (got.double() - ref).abs() / ulp
    bad = torch.isnan(ref) != torch.isnan(got)
    bad |= torch.isinf(ref) & (got.double() != ref)
    bad |= torch.isinf(got) & ~torch.isinf(ref) & (ref.abs() < 3.4028234663852886e38)
    err = torch.where(torch.isnan(ref) & torch.isnan(got), torch.zeros_like(err), err)
    return torch.where(bad, torch.full_like(err, math.inf), err)


def main():
    quick = "--quick" in sys.argv
    drv = Driver()
    tc = teenyc_path()
    stride = 61 if quick else 1
    status = 0
    print(f"math accuracy on {torch.cuda.get_device_name()}, f32, "
          f"{'every' if stride == 1 else '1/%d of the' % stride} bit patterns")
    print(f"{'function':10s} {'range':>22s} {'max ulp in range':>17s} {'at x':>16s} "
          f"{'max ulp, all finite':>20s} {'max abs err':>12s}  bound")
    for name, ref_fn, (lo, hi), bound in CASES:
        k = Kernel(drv, tc, FILE, "k_" + name, {"BLOCK": 1024})
        worst_in, at, worst_all, worst_abs = 0.0, 0.0, 0.0, 0.0
        for start in range(0, 1 << 32, CHUNK * stride):
            bits = torch.arange(start, start + CHUNK * stride, stride, device="cuda",
                                dtype=torch.int64)
            bits = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32)
            x = bits.view(torch.float32)
            y = torch.empty_like(x)
            k(((x.numel() + 1023) // 1024,), x, y, x.numel())
            ref = ref_fn(x.double())
            err = ulp_error(y, ref)
            finite = torch.isfinite(x)
            inside = finite & (x.double() >= lo) & (x.double() <= hi)
            if inside.any():
                e_in = torch.where(inside, err, torch.zeros_like(err))
                i = int(torch.argmax(e_in))
                if float(e_in[i]) > worst_in:
                    worst_in, at = float(e_in[i]), float(x[i])
                ab = torch.where(inside, (y.double() - ref).abs(), torch.zeros_like(ref))
                ab = torch.nan_to_num(ab, nan=0.0, posinf=0.0)
                worst_abs = max(worst_abs, float(ab.max()))
            worst_all = max(worst_all, float(torch.where(finite, err, torch.zeros_like(err)).max()))
        ok = bound is None or worst_in <= bound
        status |= not ok
        rng = f"[{lo:g}, {hi:g}]"
        print(f"{name:10s} {rng:>22s} {worst_in:17.2f} {at:16.9g} {worst_all:20.3g} "
              f"{worst_abs:12.3g}  {bound if bound is not None else 'report'}"
              f"{'' if ok else '  FAIL'}", flush=True)
    print("math_accuracy: " + ("every accurate function within its bound" if not status
                               else "FAILED: a function is outside its documented bound"))
    return status


if __name__ == "__main__":
    sys.exit(main())
