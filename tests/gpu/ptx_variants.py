#!/usr/bin/env python3
"""tests/gpu/ptx_variants.py — runs ON THE GPU MACHINE: which PTX forms the
driver's JIT (ptxas) gets wrong, for the GPU-only difffuzz reproducers that
are right at JIT -O0 and wrong at the default level.

For each reproducer it compiles the kernel's PTX with the bundle's teenyc
(as tests/gpu/sass_probe.py does), rewrites it into each variant below — the
same computation in other instructions — and replays the reproducer with
the variant launched in place of the generated PTX ($DFZ_GPU_PTX, read by
difffuzz's GPU engine).  A variant that turns a mismatch into "ok" names
the form to step around in the code generator.  One line per reproducer
and variant; the PTX files go to $OUT/ptx_variants.tgz.

  python3 tests/gpu/ptx_variants.py [REPRO.txt...]
Environment: TEENYC, DIFFFUZZ (the bundle's binaries), OUT.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_probe import args_from_case, compile_args, replay  # noqa: E402


def declare(ptx, kind, prefix, n):
    """Add `.reg .KIND %PREFIX<n>;` after the entry's first .reg line."""
    return re.sub(r"(\n\t\.reg [^\n]*\n)", r"\1\t.reg ." + kind + " %" + prefix + f"<{n}>;\n",
                  ptx, count=1)


def neg_as_sub(ptx):
    return re.sub(r"neg\.s(16|32|64)\s+(%\w+), (%\w+);", r"sub.s\1 \2, 0, \3;", ptx)


def neg_as_not_add(ptx):
    return re.sub(r"neg\.s(16|32|64)\s+(%\w+), (%\w+);",
                  r"not.b\1 \2, \3; add.s\1 \2, \2, 1;", ptx)


# The code generator's own negation (repair.c): inline `not` + `add 1`.
NOT_ADD = r"not\.b(16|32|64) (%\w+), (%\w+);\s*add\.s\1 \2, \2, 1;"


def not_add_as_neg(ptx):
    return re.sub(NOT_ADD, r"neg.s\1 \2, \3;", ptx)


def not_add_as_sub(ptx):
    return re.sub(NOT_ADD, r"sub.s\1 \2, 0, \3;", ptx)


def not_add_as_mul(ptx):
    return re.sub(NOT_ADD, r"mul.lo.s\1 \2, \3, -1;", ptx)


def not_add_via_64(ptx):
    """32-bit negations through a zero-extended 64-bit value."""
    def one(m):
        if m.group(1) != "32":
            return m.group(0)
        d, x = m.group(2), m.group(3)
        return (f"{{ .reg .b64 %nvt; cvt.u64.u32 %nvt, {x}; neg.s64 %nvt, %nvt; "
                f"cvt.u32.u64 {d}, %nvt; }}")
    return re.sub(NOT_ADD, one, ptx)


def not_add_opaque_zero(ptx):
    """0 - x with the 0 from %laneid masked by a value ptxas must load."""
    def one(m):
        d, x, b = m.group(2), m.group(3), m.group(1)
        return (f"{{ .reg .b{b} %nvz; mov.u32 %nvz, %laneid; shr.u32 %nvz, %nvz, 5; "
                f"sub.s{b} {d}, %nvz, {x}; }}")
    return re.sub(NOT_ADD, lambda m: one(m) if m.group(1) == "32" else m.group(0), ptx)


def sub_as_not_add(ptx):
    """a - b as a + ~b + 1 (32-bit, b a register): ptxas fused a
    subtraction feeding max.u32 into VIADDMNMX and dropped the sign of b
    (seed 84003053)."""
    return re.sub(r"sub\.s32\s+(%\w+), (%?\w+), (%r\d+);",
                  r"not.b32 \1, \3; add.s32 \1, \2, \1; add.s32 \1, \1, 1;", ptx)


def sub_as_neg_add(ptx):
    """a - b as a + (~b + 1): the negation first, then the add."""
    return re.sub(r"sub\.s32\s+(%\w+), (%?\w+), (%r\d+);",
                  r"not.b32 \1, \3; add.s32 \1, \1, 1; add.s32 \1, \2, \1;", ptx)


def sub_as_mad(ptx):
    return re.sub(r"sub\.s32\s+(%\w+), (%?\w+), (%r\d+);", r"mad.lo.s32 \1, \3, -1, \2;", ptx)


def minmax_as_selp(ptx):
    n = [0]

    def one(m):
        op, t, d, a, b = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        n[0] += 1
        cmp = "gt" if op == "max" else "lt"
        bits = t[1:]
        return (f"setp.{cmp}.{t} %pvx{n[0]}, {a}, {b}; "
                f"selp.b{bits} {d}, {a}, {b}, %pvx{n[0]};")
    out = re.sub(r"\b(max|min)\.([su](?:16|32|64))\s+(%\w+), (%\w+), (%?\w+);", one, ptx)
    return declare(out, "pred", "pvx", n[0] + 1) if n[0] else out


def u32_to_float_via_u64(ptx):
    """Unsigned 16/32-bit to float through a zero-extended 64-bit value."""
    n = [0]

    def one(m):
        n[0] += 1
        return (f"cvt.u64.u{m.group(2)} %rdx{n[0]}, {m.group(4)}; "
                f"cvt.rn.{m.group(1)}.u64 {m.group(3)}, %rdx{n[0]};")
    out = re.sub(r"cvt\.rn\.(f32|f64)\.u(32|16)\s+(%\w+), (%\w+);", one, ptx)
    return declare(out, "b64", "rdx", n[0] + 1) if n[0] else out


def narrow_ints_as_32(ptx):
    """16-bit integer min/max/add/sub/mul/neg done as 32-bit (sign- or
    zero-extended in, low half out) — ptxas's 8/16-bit paths."""
    n = [0]

    def one(m):
        op, s, d, a, b = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        n[0] += 1
        k = n[0]
        ext = "s32" if s == "s" else "u32"
        src = f"{s}16"
        ops = {"max": f"max.{s}32", "min": f"min.{s}32", "add": "add.s32", "sub": "sub.s32",
               "mul.lo": "mul.lo.s32"}[op]
        bload = (f"cvt.{ext}.{src} %rnx{2 * k + 1}, {b}; " if b.startswith("%")
                 else f"mov.b32 %rnx{2 * k + 1}, {b}; ")
        return (f"cvt.{ext}.{src} %rnx{2 * k}, {a}; " + bload +
                f"{ops} %rnx{2 * k}, %rnx{2 * k}, %rnx{2 * k + 1}; cvt.u16.u32 {d}, %rnx{2 * k};")
    out = re.sub(r"\b(max|min|add|sub|mul\.lo)\.([su])16\s+(%\w+), (%\w+), (%?-?\w+);", one, ptx)
    return declare(out, "b32", "rnx", 2 * n[0] + 2) if n[0] else out


def abs16_as_32(ptx):
    """16-bit abs as 32-bit: sign-extended in, low half out."""
    n = [0]

    def one(m):
        n[0] += 1
        k = n[0]
        return (f"cvt.s32.s16 %rax{k}, {m.group(2)}; abs.s32 %rax{k}, %rax{k}; "
                f"cvt.u16.u32 {m.group(1)}, %rax{k};")
    out = re.sub(r"\babs\.s16\s+(%\w+), (%\w+);", one, ptx)
    return declare(out, "b32", "rax", n[0] + 1) if n[0] else out


def shifts16_as_32(ptx):
    """16-bit shr/shl/and/or/xor as 32-bit (sign-extended for shr.s16)."""
    n = [0]

    def one(m):
        op, t, d, a, b = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        n[0] += 1
        k = n[0]
        ext = "cvt.s32.s16" if t == "s16" else "cvt.u32.u16"
        wide = {"s16": "s32", "u16": "u32", "b16": "b32"}[t]
        bload = (f"{ext} %rbx{2 * k + 1}, {b}; " if op not in ("shr", "shl") and
                 b.startswith("%") else "")
        bo = f"%rbx{2 * k + 1}" if bload else (f"{b}" if not b.startswith("%") else None)
        if bo is None:  # a register shift amount
            bload = f"cvt.u32.u16 %rbx{2 * k + 1}, {b}; "
            bo = f"%rbx{2 * k + 1}"
        return (f"{ext} %rbx{2 * k}, {a}; " + bload +
                f"{op}.{wide} %rbx{2 * k}, %rbx{2 * k}, {bo}; cvt.u16.u32 {d}, %rbx{2 * k};")
    out = re.sub(r"\b(shr|shl|and|or|xor)\.([sub]16)\s+(%\w+), (%\w+), (%?-?\w+);", one, ptx)
    return declare(out, "b32", "rbx", 2 * n[0] + 2) if n[0] else out


def f16_minmax_as_f32(ptx):
    """min.f16/max.f16 through f32: each operand widened, min.f32/max.f32,
    rounded back (exact: both are f16 values)."""
    n = [0]

    def one(m):
        n[0] += 1
        k = n[0]
        return (f"cvt.f32.f16 %fhx{3 * k}, {m.group(3)}; cvt.f32.f16 %fhx{3 * k + 1}, {m.group(4)}; "
                f"{m.group(1)}.f32 %fhx{3 * k + 2}, %fhx{3 * k}, %fhx{3 * k + 1}; "
                f"cvt.rn.f16.f32 {m.group(2)}, %fhx{3 * k + 2};")
    out = re.sub(r"\b(min|max)\.f16\s+(%\w+), (%\w+), (%\w+);", one, ptx)
    return declare(out, "f32", "fhx", 3 * n[0] + 3) if n[0] else out


def selp16_as_32(ptx):
    """selp.b16 as a 32-bit select of the zero-extended halves."""
    n = [0]

    def one(m):
        n[0] += 1
        k = n[0]
        return (f"cvt.u32.u16 %rsx{3 * k}, {m.group(2)}; cvt.u32.u16 %rsx{3 * k + 1}, {m.group(3)}; "
                f"selp.b32 %rsx{3 * k + 2}, %rsx{3 * k}, %rsx{3 * k + 1}, {m.group(4)}; "
                f"cvt.u16.u32 {m.group(1)}, %rsx{3 * k + 2};")
    out = re.sub(r"\bselp\.b16\s+(%\w+), (%\w+), (%\w+), (%\w+);", one, ptx)
    return declare(out, "b32", "rsx", 3 * n[0] + 3) if n[0] else out


def fence_after_barriers(ptx):
    """A gpu-scope fence after every barrier: a lock's acquire (one thread's
    atomic, then bar.sync) ordered for every thread by its own fence."""
    return re.sub(r"(\n\s*bar\.sync\s+0;)", r"\1\n\tfence.acq_rel.gpu;", ptx)


def global_loads_relaxed(ptx):
    """Plain (weak) global loads as ld.relaxed.gpu: not moved or merged."""
    return re.sub(r"\bld\.global\.(?!nc)", "ld.relaxed.gpu.global.", ptx)


def sys_atomics_as_gpu(ptx):
    """System-scope atomics at gpu scope (only to tell whether the scope
    is what the JIT gets wrong: the semantics are weaker)."""
    return re.sub(r"\b(atom|red)\.([a-z_]+\.)?sys\.", r"\1.\2gpu.", ptx)


def sys_atomics_fenced(ptx):
    """Each system-scope atomic relaxed, between two fence.sc.sys."""
    return re.sub(r"(atom|red)\.(?:acquire|release|acq_rel|relaxed)\.sys\.([^\n]*;)",
                  r"fence.sc.sys; \1.relaxed.sys.\2 fence.sc.sys;", ptx)


VARIANTS = [("sys_atomics_as_gpu", sys_atomics_as_gpu), ("sys_atomics_fenced", sys_atomics_fenced),
            ("fence_after_barriers", fence_after_barriers),
            ("global_loads_relaxed", global_loads_relaxed),
            ("neg_as_sub", neg_as_sub), ("neg_as_not_add", neg_as_not_add),
            ("minmax_as_selp", minmax_as_selp), ("u32_to_float_via_u64", u32_to_float_via_u64),
            ("narrow_ints_as_32", narrow_ints_as_32), ("abs16_as_32", abs16_as_32),
            ("shifts16_as_32", shifts16_as_32),
            ("abs_and_shifts16_as_32", lambda p: shifts16_as_32(abs16_as_32(p))),
            ("f16_minmax_as_f32", f16_minmax_as_f32), ("selp16_as_32", selp16_as_32),
            ("not_add_as_neg", not_add_as_neg), ("not_add_as_sub", not_add_as_sub),
            ("not_add_as_mul", not_add_as_mul), ("not_add_via_64", not_add_via_64),
            ("not_add_opaque_zero", not_add_opaque_zero), ("sub_as_not_add", sub_as_not_add),
            ("sub_as_neg_add", sub_as_neg_add), ("sub_as_mad", sub_as_mad),
            ("all", lambda p: shifts16_as_32(abs16_as_32(narrow_ints_as_32(u32_to_float_via_u64(
                minmax_as_selp(neg_as_not_add(p)))))))]


def verdict(fuzz, repro, ptx=None, jit_opt=None):
    return replay(fuzz, repro, jit_opt, ptx)[0][:100]


def main():
    out = os.path.join(os.environ.get("OUT", "."), "ptx_variants")
    os.makedirs(out, exist_ok=True)
    teenyc, fuzz = os.environ["TEENYC"], os.environ["DIFFFUZZ"]
    repros = sys.argv[1:] or sorted(glob.glob("tests/diff/repro-gpu/*.txt"))
    for r in repros:
        name = os.path.splitext(os.path.basename(r))[0]
        args = compile_args(r) or args_from_case(r)
        base = os.path.join(out, name + ".ptx")
        if not args or subprocess.run([teenyc] + args + ["--emit", "ptx", "-o", base],
                                      capture_output=True).returncode:
            print(f"{name}: teenyc failed")
            continue
        print(f"{name}: default {verdict(fuzz, r)} | as compiled here {verdict(fuzz, r, base)} "
              f"| -O0 {verdict(fuzz, r, base, 0)}", flush=True)
        text = open(base).read()
        for vname, fn in VARIANTS:
            v = fn(text)
            if v == text:
                continue
            path = os.path.join(out, f"{name}.{vname}.ptx")
            with open(path, "w") as f:
                f.write(v)
            print(f"   {vname}: {verdict(fuzz, r, path)}", flush=True)
    with tarfile.open(out + ".tgz", "w:gz") as t:
        t.add(out, arcname="ptx_variants")
    shutil.rmtree(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
