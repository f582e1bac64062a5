/*
 * tests/unit/test_emulator.c — the host emulator's own arithmetic, where it
 * stands in for the GPU's (dsl/nvptx/emu.c): the s8 mma's integer sums,
 * which wrap as PTX's do, and integer -> float conversions of wrapped
 * (sign-extended, then unsigned) values, which LLVM's host vectoriser used
 * to narrow wrongly.  Each kernel runs in the interpreter and on the
 * emulator (kernel_run.h); the buffers must agree bit for bit, and the
 * interpreter's hold the values the language defines (difffuzz's
 * emu_mma_s8_wrap, emu_u64_to_bf16 and emu_u16_to_f16).
 */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_run.h"

/* s + B products of 1 * d, wrapping past INT_MAX and below INT_MIN. */
static const char s8_wrap[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(i32 s, i32 t, ptr(i32) out)\n"
    "{ tile(i32) o = col(arange(0, B)) * B + row(arange(0, B));\n"
    "  store(out + o, dot(full(i8, 1, B, B), full(i8, -1, B, B), broadcast_to(s, B, B)));\n"
    "  store(out + B * B + o, dot(full(i8, 1, B, B), full(i8, 1, B, B), broadcast_to(t, B, B))); }\n";

static void check_s8_wrap(void **out) {
  const int32_t *o = out[0];
  int32_t lo = (int32_t)((uint32_t)(INT_MIN + 4) - 32u), hi = (int32_t)((uint32_t)(INT_MAX - 4) + 32u);
  for (int i = 0; i < 32 * 32; i++) {
    ck_assert_msg(o[i] == lo, "out[%d] = %d, the model says %d", i, o[i], lo);
    ck_assert_msg(o[1024 + i] == hi, "out[%d] = %d, the model says %d", 1024 + i, o[1024 + i], hi);
  }
}

START_TEST(s8_mma_sums_wrap) {
  kcase c = {"s8_wrap.c", s8_wrap, "k", "B=32", 1, {{2048, 3}}, {INT_MIN + 4, INT_MAX - 4}};
  kr_run_everywhere(&c, check_s8_wrap);
}
END_TEST

/* Negative i32 and i8 values made unsigned (sign-extended first), then
 * converted to every float dtype. */
static const char wrapped_to_float[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i8) x, ptr(bf16) b, ptr(f16) h, ptr(f32) f, ptr(f64) d)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(i32) n = 0 - o;\n"
    "  tile(i8) v = load(x + o) + (i8) (0 - o);\n"
    "  store(b + o, (bf16) ((u64) n)); store(b + B + o, (bf16) ((u32) n));\n"
    "  store(b + 2 * B + o, (bf16) ((u16) v));\n"
    "  store(h + o, (f16) ((u16) v)); store(h + B + o, ((f16) 0) - ((u16) v));\n"
    "  store(h + 2 * B + o, (f16) ((u8) v)); store(h + 3 * B + o, (f16) ((u64) n));\n"
    "  store(f + o, (f32) ((u64) n)); store(f + B + o, (f32) ((u16) v));\n"
    "  store(d + o, (f64) ((u64) n)); store(d + B + o, (f64) ((u32) v)); }\n";

START_TEST(wrapped_unsigned_to_float) {
  kcase c = {"wrapped_to_float.c", wrapped_to_float, "k", "B=256", 1,
             {{256, 0}, {3 * 256, 3}, {4 * 256, 3}, {2 * 256, 3}, {2 * 256, 3}}, {0}};
  kr_run_everywhere(&c, NULL);
}
END_TEST

/* minimum/maximum of zeros of opposite signs, both orders, in every float
 * dtype, element-wise and as reductions: -0 orders below +0 (docs/dsl.md;
 * the host's minsd/maxsd return their second operand, the GPU's min/max
 * do not depend on the order).  difffuzz's atomic_cas_f64_small_tile, where
 * a bitwise compare saw the difference. */
static const char signed_zeros[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_DTYPE(T);\n"
    "TEENY_KERNEL(T, B)\n"
    "void k(ptr(T) out, ptr(u8) sign)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(T) p = full(T, 0, B), n = p * ((T) -1);\n"
    "  tile(bool) odd = (o % 2) == 1;\n"
    "  tile(T) a = where(odd, p, n), b = where(odd, n, p);\n"
    "  tile(T) hi = maximum(a, b), lo = minimum(a, b);\n"
    "  store(out + o, hi); store(out + B + o, lo);\n"
    "  store(out + 2 * B, max(a)); store(out + 2 * B + 1, min(b));\n"
    "  store(sign + o, (u8) (hi < (T) 0) + (u8) (((T) 1 / hi) < (T) 0));\n"
    "  store(sign + B + o, (u8) (((T) 1 / lo) < (T) 0)); }\n";

static void check_signed_zeros(void **out) {
  const uint8_t *sg = out[1];
  for (int i = 0; i < 64; i++) {
    ck_assert_msg(sg[i] == 0, "maximum(-0, +0) gave -0 in lane %d", i);
    ck_assert_msg(sg[64 + i] == 1, "minimum(-0, +0) gave +0 in lane %d", i);
  }
}

START_TEST(min_max_order_signed_zeros) {
  static const char *const dts[] = {"T=f32", "T=f64", "T=f16", "T=bf16"};
  for (int d = 0; d < 4; d++) {
    char bind[32];
    snprintf(bind, sizeof bind, "B=64,%s", dts[d]);
    kcase c = {"signed_zeros.c", signed_zeros, "k", bind, 1, {{2 * 64 + 2, 3}, {128, 3}}, {0}};
    kr_run_everywhere(&c, check_signed_zeros);
  }
}
END_TEST

/* maximum(abs(x), y) for a never-NaN negative y, then abs or a sign test:
 * when x is NaN the maximum is y, so the outer abs matters and the
 * compare is true.  LLVM 19 believes the maximum's sign bit is clear
 * (from llvm.fabs) and drops both; abs is now hidden from it (float_abs
 * in dsl/nvptx/ops.c).  difffuzz's scan_amax_f16_clamped. */
static const char abs_of_max[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_DTYPE(T);\n"
    "TEENY_KERNEL(T, B)\n"
    "void k(ptr(T) x, ptr(T) out, ptr(u8) neg)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(T) v = load(x + o) / (T) 0;\n" /* 0/0 is NaN, i/0 is inf */
    "  tile(T) m = maximum(abs(v), (T) (o - B));\n"
    "  store(out + o, abs(m)); store(neg + o, (u8) (m < (T) 0)); }\n";

static void check_abs_of_max(void **out) {
  const uint8_t *neg = out[2];
  ck_assert_msg(neg[0] == 1, "maximum(abs(NaN), -64) < 0 is false");
  for (int i = 1; i < 64; i++)
    ck_assert_msg(neg[i] == 0, "maximum(abs(inf), %d) < 0 is true", i - 64);
}

START_TEST(abs_of_a_maximum_with_nan) {
  static const char *const dts[] = {"T=f32", "T=f64", "T=f16", "T=bf16"};
  for (int d = 0; d < 4; d++) {
    char bind[32];
    snprintf(bind, sizeof bind, "B=64,%s", dts[d]);
    kcase c = {"abs_of_max.c", abs_of_max, "k", bind, 1, {{64, 1}, {64, 3}, {64, 3}}, {0}};
    kr_run_everywhere(&c, check_abs_of_max);
    /* the GPU's PTX keeps both abs (inline asm); f16 and bf16 as PTX's
     * abs, not an and.b16 of the sign bit, which ptxas drops on the low
     * half of a packed pair (repro-gpu/abs_f16_pair_gpu) */
    static const char *const want[] = {"abs.f32", "abs.f64", "abs.f16", "abs.bf16"};
    char *t = kr_text(abs_of_max, "k", bind, "sm_90a");
    int n = kr_count(t, want[d]), ands = kr_count(t, "0x7FFF;");
    free(t);
    ck_assert_msg(n >= 2 && ands == 0, "%s: %d %s and %d and.b16 masks in the PTX", bind, n,
                  want[d], ands);
  }
}
END_TEST

/* 7 + -(i32) mask in a float type is 6 where the mask holds.  LLVM 19's
 * NVPTX back end lowers a `sitofp i1` (InstCombine's form of `sitofp (sub
 * 0, zext m)` when m is not a single compare) that feeds arithmetic as +1; dsl/nvptx/repair.c rewrites it
 * as a select of -1 and 0.  The emulator's x86 back end is right either
 * way, so the PTX is checked: it has the constant -1 or 6 (the select,
 * maybe folded with the add), where the bug has neither (selp 1, 0 and an
 * integer conversion).  difffuzz seed 1543 (GPU). */
static const char neg_mask[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_DTYPE(T);\n"
    "TEENY_KERNEL(T, B)\n"
    "void k(i32 n, ptr(T) out)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  store(out + o, ((T) 7) + (- (tile(i32)) ((o < n) & (o != 3)))); }\n";

static const struct {
  const char *bind;
  size_t size;
  uint64_t six, seven;
  const char *ptx_minus_one, *ptx_six;
} neg_mask_dts[] = {
    {"B=64,T=f32", 4, 0x40C00000u, 0x40E00000u, "0fBF800000", "0f40C00000"},
    {"B=64,T=f64", 8, 0x4018000000000000u, 0x401C000000000000u, "0dBFF0000000000000",
     "0d4018000000000000"},
    {"B=64,T=f16", 2, 0x4600, 0x4700, "0xBC00", "0x4600"},
    {"B=64,T=bf16", 2, 0x40C0, 0x40E0, "0xBF80", "0x40C0"},
};
static int neg_mask_dt;

static void check_neg_mask(void **out) {
  size_t sz = neg_mask_dts[neg_mask_dt].size;
  for (int i = 0; i < 64; i++) {
    uint64_t v = 0;
    memcpy(&v, (const char *)out[0] + (size_t)i * sz, sz); /* little-endian */
    ck_assert_msg(v == (i < 5 && i != 3 ? neg_mask_dts[neg_mask_dt].six : neg_mask_dts[neg_mask_dt].seven),
                  "%s: 7 - (i32)(%d < 5 & %d != 3) = %#llx", neg_mask_dts[neg_mask_dt].bind, i, i,
                  (unsigned long long)v);
  }
}

START_TEST(negated_mask_to_float) {
  static const char *const targets[] = {"sm_80", "sm_90a"};
  for (neg_mask_dt = 0; neg_mask_dt < 4; neg_mask_dt++) {
    const char *bind = neg_mask_dts[neg_mask_dt].bind;
    kcase c = {"neg_mask.c", neg_mask, "k", bind, 1, {{64, 3}}, {5}};
    kr_run_everywhere(&c, check_neg_mask);
    for (int t = 0; t < 2; t++) {
      char *text = kr_text(neg_mask, "k", bind, targets[t]);
      int n = kr_count(text, neg_mask_dts[neg_mask_dt].ptx_minus_one) +
              kr_count(text, neg_mask_dts[neg_mask_dt].ptx_six);
      free(text); /* not in the message: check exits on one that long */
      ck_assert_msg(n >= 1, "%s %s: the PTX has neither -1 nor 6 (sitofp i1 lowered as +1?)",
                    bind, targets[t]);
    }
  }
}
END_TEST

/* A negative i8 made u32 is 2^32 - |x|, also as a float.  LLVM 19's SLP
 * vectorizer, packing two such conversions, narrowed `uitofp (sext i8)` to
 * `uitofp i8` (246 for -10); it is off (dsl/nvptx/codegen.c).  ptxas then
 * made the same mistake of `cvt.rn.f32.u32` of a `bfe.s32` (a signed
 * I2F.S8 in the SASS: reduce_u32_of_i8_gpu), so the PTX converts no
 * sign-extended value as unsigned at all (dsl/nvptx/repair.c: signed
 * conversions and 2^32 added to the negative ones).  difffuzz seed 102591
 * (GPU, reduce_bf16_dot_gpu). */
static const char i8_as_u32[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i8) x, ptr(bf16) out)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(i8) m = maximum(load(x + o), load(x + B + o));\n"
    "  store(out + o, (tile(bf16)) (tile(u32)) m); }\n";

static void check_i8_as_u32(void **out) {
  const uint16_t *b = out[1];
  for (int i = 0; i < 512; i++) /* x is i % 7 - 3: max(-3 + i % 7, -3 + (i + 512) % 7) */
    ck_assert_msg(b[i] == 0x4F80 || b[i] < 0x4100,
                  "(bf16)(u32) of an i8 in [-3, 3] is %#x (want 2^32 = 0x4f80 or 0..3)", b[i]);
}

START_TEST(negative_i8_as_u32_to_float) {
  kcase c = {"i8_as_u32.c", i8_as_u32, "k", "B=512", 1, {{1024, 2}, {512, 3}}, {0}};
  kr_run_everywhere(&c, check_i8_as_u32);
  char *text = kr_text(i8_as_u32, "k", "B=512", "sm_90a");
  int uns = kr_count(text, "cvt.rn.bf16.u") + kr_count(text, "cvt.rn.f32.u");
  int sig = kr_count(text, "cvt.rn.f32.s32");
  free(text);
  ck_assert_msg(uns == 0 && sig >= 1,
                "the PTX converts the sign-extended i8 as unsigned (%d unsigned conversions, "
                "%d signed from 32 bits)", uns, sig);
}
END_TEST

/* max of negated values: ptxas (the H200's JIT at -O1 and above) dropped
 * or mistook a `neg.s32` feeding max.s32 (reduce_max_neg_i8_gpu: 23 of 128
 * rows wrong; loop_max_neg_to_f32_gpu), so integer negation is emitted as
 * not + add (dsl/nvptx/repair.c).  The values in both engines, and no
 * `neg.s` left in the PTX. */
static const char max_neg[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B); TEENY_CONST(E);\n"
    "TEENY_KERNEL(B, E)\n"
    "void k(ptr(i8) x, ptr(i16) out, i32 n)\n"
    "{ tile(i32) o = col(arange(0, B)) * E + row(arange(0, E));\n"
    "  store(out + arange(0, B), (i16) max(-((i32) ((f32) load(x + o))), 1));\n"
    "  i32 acc = 0;\n"
    "  for (i32 i = 0; i < n; i += 1) acc = maximum(acc, -n);\n"
    "  store(out + B, (i16) acc); }\n";

static void check_max_neg(void **out) {
  const int16_t *r = out[1];
  for (int b = 0; b < 32; b++) { /* x is i % 7 - 3: the max of -x over 4 of them */
    int want = -100;
    for (int e = 0; e < 4; e++)
      want = -((b * 4 + e) % 7 - 3) > want ? -((b * 4 + e) % 7 - 3) : want;
    ck_assert_msg(r[b] == want, "max of -x over row %d is %d, want %d", b, r[b], want);
  }
  ck_assert_msg(r[32] == 0, "max(0, -n) over a loop is %d, want 0", r[32]);
}

/* u16 division by a mask (1 / (o / mask) % 7): ptxas ran the `max.u16`
 * that keeps the divisor at least 1 wrong on the H200
 * (store_u16_division_gpu), so narrow min/max is done in 32 bits
 * (dsl/nvptx/repair.c).  The values in both engines, and no 16-bit min or
 * max in the PTX. */
static const char u16_division[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(i32 n, ptr(f32) out)\n"
    "{ tile(i32) offs = arange(0, B);\n"
    "  tile(bool) mask = offs < n;\n"
    "  store(out + offs, (1 / (((u16) offs) / ((u16) mask))) % 7, mask);\n"
    "  store(out + B + offs, (f32) maximum((i16) offs - (i16) 20, (i16) minimum(offs, 9))); }\n";

static void check_u16_division(void **out) {
  const float *o = out[0];
  for (int i = 0; i < 64; i++) {
    float want = i == 0 ? 0 : (float)((1 / i) % 7); /* 0 / 1 = 0; 1 / 0 is 0 in the language */
    if (i < 50)
      ck_assert_msg(o[i] == want || i == 0, "out[%d] = %g, want %g", i, o[i], want);
    int m = i - 20 > (i < 9 ? i : 9) ? i - 20 : (i < 9 ? i : 9);
    ck_assert_msg(o[64 + i] == (float)m, "max/min row [%d] = %g, want %d", i, o[64 + i], m);
  }
}

START_TEST(narrow_min_max_in_32_bits) {
  kcase c = {"u16_division.c", u16_division, "k", "B=64", 1, {{128, 0}}, {50}};
  kr_run_everywhere(&c, check_u16_division);
  for (int t = 0; t < 2; t++) {
    char *text = kr_text(u16_division, "k", "B=64", t ? "sm_80" : "sm_90a");
    int narrow = kr_count(text, "max.u16") + kr_count(text, "max.s16") +
                 kr_count(text, "min.u16") + kr_count(text, "min.s16");
    free(text);
    ck_assert_msg(narrow == 0, "%d 16-bit min/max in the PTX", narrow);
  }
}
END_TEST

/* abs of i16 and i8 values in a scan of maximum(abs(a), abs(b)): ptxas
 * ran `abs.s16` wrong on the H200 (scan_amax_i16_gpu: 0 for -55), so
 * narrow abs is done in 32 bits (dsl/nvptx/repair.c).  The values in both
 * engines, and no 16-bit abs in the PTX. */
static const char narrow_abs[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "static i16 amax16(i16 a, i16 b) { return maximum(abs(a), abs(b)); }\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) x, ptr(i32) out)\n"
    "{ tile(i32) offs = arange(0, B);\n"
    "  tile(i32) v = load(x + offs) * 9000;\n"
    "  store(out + offs, (i32) scan(minimum((i16) v, (i16) 0), 0, amax16));\n"
    "  store(out + B + offs, (i32) abs((i8) (v / 300)));\n"
    "  store(out + 2 * B + offs, (i32) abs((i16) v)); }\n";

static int16_t abs16(int16_t v) { return (int16_t)(v < 0 ? -(int32_t)v : v); }

static void check_narrow_abs(void **out) {
  const int32_t *o = out[1];
  int16_t run = 0;
  for (int i = 0; i < 64; i++) { /* x[i] = i % 7 - 3 (kr_fill 2) */
    int32_t v = (i % 7 - 3) * 9000;
    int16_t m = (int16_t)v < 0 ? (int16_t)v : 0;
    run = i == 0 ? m : (abs16(run) > abs16(m) ? abs16(run) : abs16(m));
    ck_assert_msg(o[i] == run, "scan [%d] = %d, want %d", i, o[i], run);
    int8_t b = (int8_t)(v / 300);
    ck_assert_msg(o[64 + i] == (int8_t)(b < 0 ? -b : b), "abs i8 [%d] = %d", i, o[64 + i]);
    ck_assert_msg(o[128 + i] == abs16((int16_t)v), "abs i16 [%d] = %d", i, o[128 + i]);
  }
}

START_TEST(narrow_abs_in_32_bits) {
  kcase c = {"narrow_abs.c", narrow_abs, "k", "B=64", 1, {{64, 2}, {192, 0}}, {0}};
  kr_run_everywhere(&c, check_narrow_abs);
  for (int t = 0; t < 2; t++) {
    char *text = kr_text(narrow_abs, "k", "B=64", t ? "sm_80" : "sm_90a");
    int narrow = kr_count(text, "abs.s16");
    free(text);
    ck_assert_msg(narrow == 0, "%d 16-bit abs in the PTX", narrow);
  }
}
END_TEST

/* bf16 times f16 is computed in f32 (docs/dsl.md's promotion table), and
 * rounded to f16 once.  LLVM's InstCombine turned fptrunc(fmul(fpext bf16,
 * fpext f16)) into an f16 multiply, the bf16 first converted to f16: the
 * largest bf16 became inf and inf * 0 NaN where the f32 product is 0
 * (bf16_times_f16_gpu, found on the H200; the emulator's bf16 path never
 * had the form).  The values in both engines, and in the PTX no f16
 * multiply and no bf16-to-f16 conversion. */
static const char bf16_times_f16[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) x, ptr(bf16) tmp, ptr(f16) out)\n"
    "{ tile(i32) offs = arange(0, B);\n"
    "  tile(i32) v = load(x + offs);\n"
    "  store(tmp + offs, (bf16) ((f32) v * 1.0e38f));\n"
    "  barrier();\n"
    "  tile(bf16) big = load(tmp + offs);\n"
    "  tile(f16) h = sqrt((f16) (v + 3));\n"
    "  store(out + offs, (f16) (big * h)); }\n";

static void check_bf16_times_f16(void **out) {
  const uint16_t *o = out[2];
  for (int i = 0; i < 64; i++) { /* x[i] = i % 7 - 3 (kr_fill 2) */
    int v = i % 7 - 3;
    float big = ku_bf16_to_f32(ku_f32_to_bf16((float)v * 1.0e38f));
    float h = ku_f16_to_f32(ku_f32_to_f16(sqrtf((float)(v + 3))));
    float want = big * h; /* v = -3: -3e38 * 0 = -0, not NaN */
    ck_assert_msg(ku_f16_to_f32(o[i]) == ku_f16_to_f32(ku_f32_to_f16(want)),
                  "out[%d] = %g, want %g", i, ku_f16_to_f32(o[i]), want);
  }
}

START_TEST(bf16_times_f16_in_f32) {
  kcase c = {"bf16_times_f16.c", bf16_times_f16, "k", "B=64", 1, {{64, 2}, {64, 0}, {64, 0}},
             {0}};
  kr_run_everywhere(&c, check_bf16_times_f16);
  for (int t = 0; t < 2; t++) {
    char *text = kr_text(bf16_times_f16, "k", "B=64", t ? "sm_80" : "sm_90a");
    int narrow = kr_count(text, "mul.rn.f16") + kr_count(text, "fma.rn.f16") +
                 kr_count(text, "cvt.rn.f16.bf16");
    free(text);
    ck_assert_msg(narrow == 0, "%d f16 multiplies of a bf16 in the PTX", narrow);
  }
}
END_TEST

START_TEST(negation_feeding_max) {
  kcase c = {"max_neg.c", max_neg, "k", "B=32,E=4", 1, {{128, 2}, {33, 0}}, {460}};
  kr_run_everywhere(&c, check_max_neg);
  for (int t = 0; t < 2; t++) {
    char *text = kr_text(max_neg, "k", "B=32,E=4", t ? "sm_80" : "sm_90a");
    int neg = kr_count(text, "neg.s"), alt = kr_count(text, "not.b32");
    free(text);
    ck_assert_msg(neg == 0 && alt >= 1, "%d integer neg in the PTX (%d not.b32)", neg, alt);
  }
}
END_TEST

/* A subtraction of a register feeding a min/max: ptxas fused
 * `sub.s32 a, x` + `max.u32` into one VIADDMNMX and dropped the sign of x
 * (difffuzz seed 84003053, GPU: max(1 - x, s) came out as max(x - 1, s)),
 * so repair.c emits such a sub as inline a + ~x + 1.  The values wrap
 * (1 - 40 as u32 against 13), and the emulator must agree with the
 * interpreter: 2^32 - 39 + i, not 39 + i. */
static const char sub_max[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(i32 r, u32 s, ptr(u32) out)\n"
    "{ tile(i32) i = arange(0, B);\n"
    "  tile(u32) one = (tile(u32)) (i - i + 1);\n"
    "  store(out + i, maximum(one - (tile(u32)) (r + 1 - i), s)); }\n";

static void check_sub_max(void **out) {
  const uint32_t *o = out[0];
  for (int i = 0; i < 64; i++) {
    uint32_t want = 1u - (uint32_t)(40 - i);
    want = want > 13u ? want : 13u;
    ck_assert_msg(o[i] == want, "out[%d] = %u, want %u", i, o[i], want);
  }
}

START_TEST(subtraction_feeding_max) {
  kcase c = {"sub_max.c", sub_max, "k", "B=64", 1, {{64, 0}}, {39, 13}};
  kr_run_everywhere(&c, check_sub_max);
  for (int t = 0; t < 2; t++) {
    char *text = kr_text(sub_max, "k", "B=64", t ? "sm_80" : "sm_90a");
    int sub = kr_count(text, "sub.s32"), alt = kr_count(text, "not.b32 t,");
    free(text);
    ck_assert_msg(sub == 0 && alt >= 1, "%d sub.s32 in the PTX (%d inline a + ~x + 1)", sub, alt);
  }
}
END_TEST

/* fma on f16 and bf16 rounds once, as the GPU's fma.rn.f16/.bf16: a * b
 * is a midpoint of the format and c a little more, so the single rounding
 * goes up where rounding to f32 first makes a tie that goes to even.
 * difffuzz seed 50000631 (GPU, fma_bf16_i64_min_gpu). */
static const char fma_once[] = /* a format: the constants */
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_DTYPE(T);\n"
    "TEENY_KERNEL(T, B)\n"
    "void k(i32 one, ptr(T) out)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(T) a = (tile(T)) (o * 0 + one);\n"
    "  store(out + o, fma(a * (T) %s, (T) %s, (T) %s)); }\n";

static uint16_t fma_want;

static void check_fma_once(void **out) {
  const uint16_t *r = out[0];
  for (int j = 0; j < 64; j++)
    ck_assert_msg(r[j] == fma_want, "fma = %#x, want %#x (rounded once)", r[j], fma_want);
}

START_TEST(fma_rounds_once) {
  /* bf16: 1.015625 * 1.25 = 1.26953125 (between 0x3fa2 and 0x3fa3), + 2^-30;
   * f16: 1.013671875 * 1.75 = 1.77392578125 (0x3f18 / 0x3f19), + 2^-24 */
  static const struct {
    const char *bind, *a, *m, *c;
    uint16_t want;
  } cases[] = {{"B=64,T=bf16", "1.015625f", "1.25f", "9.313225746154785e-10f", 0x3FA3},
               {"B=64,T=f16", "1.013671875f", "1.75f", "5.960464477539063e-08f", 0x3F19}};
  for (int i = 0; i < 2; i++) {
    char src[1024];
    snprintf(src, sizeof src, fma_once, cases[i].a, cases[i].m, cases[i].c);
    kcase c = {"fma_once.c", src, "k", cases[i].bind, 1, {{64, 3}}, {1}};
    fma_want = cases[i].want;
    kr_run_everywhere(&c, check_fma_once);
  }
}
END_TEST

/* atan2's special cases as C's (signed zeros, infinities: 64 pairs of y
 * and x from {0, -0, inf, -inf, 1, -1, 0.5, 3}), atan of those, asin and
 * acos at their edges, against the host's libm, in f32.  NaN
 * results (outside [-1, 1], NaN operands) are only checked to be NaN: the
 * engines' NaNs differ in sign and payload. */
static const char atan2_cases[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_DTYPE(T);\n"
    "TEENY_KERNEL(T, B)\n"
    "void k(ptr(T) nans, ptr(T) out)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(i32) i = o % 8, j = o / 8;\n"
    "  tile(T) z = (tile(T)) (o * 0), nan = load(nans + o);\n"
    "  tile(T) y = where(i == 0, z, where(i == 1, -z, where(i == 2, 1 / z, where(i == 3, -1 / z,\n"
    "              where(i == 4, z + 1, where(i == 5, z - 1, where(i == 6, z + 0.5, z + 3)))))));\n"
    "  tile(T) x = where(j == 0, z, where(j == 1, -z, where(j == 2, 1 / z, where(j == 3, -1 / z,\n"
    "              where(j == 4, z + 1, where(j == 5, z - 1, where(j == 6, z + 0.5, z + 3)))))));\n"
    "  store(out + o, atan2(y, x));\n"
    "  tile(T) e = where(i == 0, z, where(i == 1, -z, where(i == 2, z + 1, where(i == 3, z - 1,\n"
    "              where(i == 4, z + 0.5, where(i == 5, z + 0.25, where(i == 6, z - 0.5, z - 0.75)))))));\n"
    "  store(out + B + o, asin(e)); store(out + 2 * B + o, acos(e)); store(out + 3 * B + o, atan(y));\n"
    "  store(out + 4 * B + o, (tile(T)) (isnan(asin(z + 2)) & isnan(acos(z - 1.5)) & isnan(atan(nan))\n"
    "                                      & isnan(atan2(nan, z + 1)) & isnan(atan2(z - 1, nan)))); }\n";

static const double special_vals[8] = {0.0, -0.0, INFINITY, -INFINITY, 1.0, -1.0, 0.5, 3.0};
static const double edge_vals[8] = {0.0, -0.0, 1.0, -1.0, 0.5, 0.25, -0.5, -0.75};
static bool atan2_f64_case;

static bool near_libm(double got, double want, bool f64) {
  if (isnan(want))
    return isnan(got);
  if (got == want)
    return signbit(got) == signbit(want);
  return f64 ? nextafter(want, got) == got : nextafterf((float)want, (float)got) == (float)got;
}

static void check_atan2(void **out) {
  bool f64 = atan2_f64_case;
  for (int o = 0; o < 5 * 64; o++) {
    double got = f64 ? ((const double *)out[1])[o] : ((const float *)out[1])[o];
    if (o >= 4 * 64) { /* outside [-1, 1] */
      ck_assert_msg(got == 1.0, "asin(2), acos(-1.5) or a NaN operand's result is not NaN");
      continue;
    }
    int k = o % 64;
    double y = special_vals[k % 8], x = special_vals[k / 8], e = edge_vals[k % 8];
    double want = o < 64 ? atan2(y, x) : o < 128 ? asin(e) : o < 192 ? acos(e) : atan(y);
    if (!f64)
      want = o < 64 ? atan2f((float)y, (float)x) : o < 128 ? asinf((float)e)
             : o < 192 ? acosf((float)e) : atanf((float)y);
    ck_assert_msg(near_libm(got, want, f64), "%s %s(%g%s%g) = %.17g, libm %.17g",
                  f64 ? "f64" : "f32", o < 64 ? "atan2" : o < 128 ? "asin" : o < 192 ? "acos" : "atan",
                  o < 64 || o >= 192 ? y : e, o < 64 ? ", " : "", o < 64 ? x : 0.0, got, want);
  }
}

START_TEST(inverse_trig_special_cases) {
  for (int d = 0; d < 1; d++) { /* f32 (from the f64 routines, rounded); f64's own are not
                                  * correctly rounded, so they differ from libm by an ulp */
    atan2_f64_case = d == 1;
    kcase c = {"atan2_cases.c", atan2_cases, "k", d ? "B=64,T=f64" : "B=64,T=f32", 1,
               {{64, 3}, {5 * 64, 3}}, {0}};
    kr_run_everywhere(&c, check_atan2);
  }
}
END_TEST

/* A tile stored transposed: in the layout of its load a warp's lanes
 * would write 4-16 bytes into each of many rows per instruction, so the
 * store converts through shared memory first (teeny__cg_mem_layout's
 * warp_run_bytes) and writes whole rows; the values are those of a
 * transpose in every engine, edges masked. */
static const char transposed_store[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(f32) x, ptr(f32) y, i32 m)\n"
    "{ tile(i32) r = arange(0, B);\n"
    "  tile(bool) in = (col(r) < m) & (row(r) < m);\n"
    "  tile(f32) v = load(x + col(r) * m + row(r), in, 0);\n"
    "  store(y + col(r) * m + row(r), trans(v), trans(in)); }\n";

static void check_transposed(void **out) {
  const float *x = out[0], *y = out[1];
  for (int i = 0; i < 60; i++)
    for (int j = 0; j < 60; j++)
      ck_assert_msg(y[j * 60 + i] == x[i * 60 + j], "y[%d][%d] = %g, x[%d][%d] = %g", j, i,
                    y[j * 60 + i], i, j, x[i * 60 + j]);
}

START_TEST(transposed_store_goes_through_shared_memory) {
  kcase c = {"transposed_store.c", transposed_store, "k", "B=64", 1, {{3600, 1}, {3600, 0}}, {60}};
  kr_run_everywhere(&c, check_transposed);
  char *text = kr_text(transposed_store, "k", "B=64", "sm_90a");
  int st = kr_count(text, "st.shared"), ld = kr_count(text, "ld.shared");
  free(text);
  ck_assert_msg(st >= 1 && ld >= 1,
                "a transposed store without a conversion through shared memory "
                "(%d st.shared, %d ld.shared in the PTX)", st, ld);
}
END_TEST

/* Bool memory in the .mlir artifact as Triton's front end makes it: the
 * pointer bit-cast to i8, stores widened, loads compared with 0 (Triton's
 * compiler aborted on a tt.store through !tt.ptr<i1>: crosscheck_ttir on
 * the H200, 2026-12-02); the values in both engines. */
static const char bool_memory[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) x, ptr(bool) o)\n"
    "{ tile(i32) r = arange(0, B);\n"
    "  store(o + r, load(x + r) > 3);\n"
    "  store(o + B + r, !load(o + r, r < B, false)); }\n";

static void check_bool_memory(void **out) {
  const uint8_t *o = out[1];
  for (int i = 0; i < 64; i++)
    ck_assert_msg(o[i] == (i % 7 - 3 > 3) && o[64 + i] == !(i % 7 - 3 > 3), "o[%d] = %d, %d", i,
                  o[i], o[64 + i]);
}

START_TEST(bool_memory_in_mlir_is_i8) {
  kcase c = {"bool_memory.c", bool_memory, "k", "B=64", 1, {{64, 2}, {128, 3}}, {0}};
  kr_run_everywhere(&c, check_bool_memory);
  char *text = kr_text(bool_memory, "k", "B=64", "sm_90a");
  int casts = kr_count(text, "-> tensor<64x!tt.ptr<i8>>");
  int widen = kr_count(text, "i1> to tensor<64xi8>");
  int i1_store = kr_count(text, "(tensor<64x!tt.ptr<i1>>, tensor<64xi1>");
  free(text);
  ck_assert_msg(casts >= 2 && widen >= 1 && i1_store == 0,
                "bool memory in the .mlir: %d casts to i8 pointers, %d widenings, %d i1 stores",
                casts, widen, i1_store);
}
END_TEST

/* Conversions to bf16 and f16 from sources with more than 24 significant
 * bits, at the values where rounding through f32 first goes wrong (the
 * f32 step makes a tie that the second rounding breaks to even): the
 * language rounds once.  Below sm_90 (and in the emulator) the f32 step
 * rounds to odd (to_f32_odd in dsl/nvptx/ops.c).  difffuzz's
 * i32_times_bf16_rounding. */
static const char round_once[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(bf16) b, ptr(f16) h)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(i32) i = (1 << 24) + (1 << 16) + o;\n"
    "  tile(u32) u = (u32) (1 << 31) + (u32) (1 << 23) + (u32) o;\n"
    "  tile(i64) l = ((i64) 1 << 54) + ((i64) 1 << 46) + (i64) o;\n"
    "  tile(f64) d = (f64) ((1 << 24) + (1 << 16)) + (f64) o * 0.0009765625;\n"
    "  store(b + o, (tile(bf16)) i); store(b + B + o, (tile(bf16)) (0 - i));\n"
    "  store(b + 2 * B + o, (tile(bf16)) u); store(b + 3 * B + o, (tile(bf16)) (0 - l));\n"
    "  store(b + 4 * B + o, (tile(bf16)) ((u64) l)); store(b + 5 * B + o, (tile(bf16)) d);\n"
    "  store(b + 6 * B + o, (tile(bf16)) (d * 1e-45));\n"
    "  tile(f64) e = 1.0 + 0.00048828125 + (f64) o * 9.094947017729282e-13;\n" /* 1 + 2^-11 + o 2^-40 */
    "  store(h + o, (tile(f16)) e); store(h + B + o, (tile(f16)) (0.0 - e));\n"
    "  store(h + 2 * B + o, (tile(f16)) (l >> 40)); }\n";

static void check_round_once(void **out) {
  const uint16_t *b = out[0], *h = out[1];
  /* 2^24 + 2^16 is a tie (down to even), anything above it rounds up */
  ck_assert_msg(b[0] == 0x4B80, "bf16(2^24 + 2^16) = %#x", b[0]);
  for (int i = 1; i < 64; i++) {
    ck_assert_msg(b[i] == 0x4B81, "bf16(2^24 + 2^16 + %d) = %#x, not 0x4b81", i, b[i]);
    ck_assert_msg(b[64 + i] == 0xCB81, "bf16(-(2^24 + 2^16 + %d)) = %#x", i, b[64 + i]);
    ck_assert_msg(b[5 * 64 + i] == 0x4B81, "bf16(f64 2^24 + 2^16 + %d/1024) = %#x", i,
                  b[5 * 64 + i]);
    ck_assert_msg(h[i] == 0x3C01, "f16(1 + 2^-11 + %d 2^-40) = %#x, not 0x3c01", i, h[i]);
  }
  ck_assert_msg(h[0] == 0x3C00, "f16(1 + 2^-11) = %#x", h[0]);
}

START_TEST(wide_to_bf16_rounds_once) {
  kcase c = {"round_once.c", round_once, "k", "B=64", 1, {{7 * 64, 3}, {3 * 64, 3}}, {0}};
  kr_run_everywhere(&c, check_round_once);
}
END_TEST

/* dot on fp8 operands, and fp8 with f16 or bf16: the fp8 side converts
 * exactly to the other's dtype (f16 for two fp8s) and the tensor cores
 * multiply (mma.sync or wgmma), not the FMA fallback.  Small
 * integers keep every sum exact, so the emulator must equal the
 * interpreter bit for bit and both the plain-C sums. */
static const char fp8_dot[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_DTYPE(A);\n"
    "TEENY_DTYPE(B);\n"
    "TEENY_KERNEL(A, B)\n"
    "void k(ptr(i32) x, ptr(i32) y, ptr(f32) out)\n"
    "{ tile(i32) m = arange(0, 64), n = arange(0, 32), kk = arange(0, 32);\n"
    "  tile(A) a = (tile(A)) load(x + col(m) * 32 + row(kk));\n"
    "  tile(B) b = (tile(B)) load(y + col(kk) * 32 + row(n));\n"
    "  store(out + col(m) * 32 + row(n), dot(a, b)); }\n";

static const kcase *fp8_case;

static void check_fp8_dot(void **out) {
  /* x and y hold i % 7 - 3 (kr_fill 2) */
  const float *o = out[2];
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < 32; n++) {
      double s = 0;
      for (int k = 0; k < 32; k++)
        s += (double)((m * 32 + k) % 7 - 3) * (double)((k * 32 + n) % 7 - 3);
      ck_assert_msg(o[m * 32 + n] == (float)s, "%s: out[%d][%d] = %g, not %g", fp8_case->bindings,
                    m, n, o[m * 32 + n], s);
    }
}

START_TEST(fp8_dot_on_tensor_cores) {
  static const char *const binds[] = {"A=f8e4m3,B=f8e4m3", "A=f8e5m2,B=f8e4m3", "A=f16,B=f8e5m2",
                                      "A=f8e4m3,B=bf16"};
  for (int i = 0; i < 4; i++) {
    kcase c = {"fp8_dot.c", fp8_dot, "k", binds[i], 1, {{64 * 32, 2}, {32 * 32, 2}, {64 * 32, 3}},
               {0}};
    fp8_case = &c;
    kr_run_everywhere(&c, check_fp8_dot);
    for (int tg = 0; tg < 2; tg++) {
      char *t = kr_text(fp8_dot, "k", binds[i], tg ? "sm_80" : "sm_90a");
      ck_assert_msg(kr_count(t, "mma.sync.aligned.m16n8k16") + kr_count(t, "wgmma.mma_async") > 0,
                    "%s: no tensor-core instruction on %s", binds[i], tg ? "sm_80" : "sm_90a");
      free(t);
    }
  }
}
END_TEST

/* Two fp8 tiles with B K-major (loaded from its transpose, K
 * contiguous), as fp8 GEMMs pass it: on sm_90a the dot runs on fp8 wgmma
 * (k32, both operands K-major in shared memory, no f16 conversion), at
 * every fp8 pairing; B N-major stays on the f16 path (fp8 wgmma has no
 * transposed form).  Small integers keep every sum exact: the emulator
 * equals the interpreter and both the plain-C sums. */
static const char fp8_wgmma[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_DTYPE(A);\n"
    "TEENY_DTYPE(B);\n"
    "TEENY_CONST(KMAJOR);\n"
    "TEENY_KERNEL(A, B, KMAJOR)\n"
    "void k(ptr(i32) x, ptr(i32) y, ptr(f32) out)\n"
    "{ tile(i32) m = arange(0, 64), n = arange(0, 128), kk = arange(0, 128);\n"
    "  tile(A) a = (tile(A)) load(x + col(m) * 128 + row(kk));\n"
    "  tile(i32) bo = KMAJOR ? row(n) * 128 + col(kk) : col(kk) * 128 + row(n);\n"
    "  tile(B) b = (tile(B)) load(y + bo);\n"
    "  store(out + col(m) * 128 + row(n), dot(a, b)); }\n";

static const char *fp8_wgmma_binds;
static bool fp8_wgmma_kmajor;

static void check_fp8_wgmma(void **out) {
  /* x and y hold i % 7 - 3 (kr_fill 2); b(k, n) is y[n * 128 + k] K-major */
  const float *o = out[2];
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < 128; n++) {
      double s = 0;
      for (int k = 0; k < 128; k++) {
        int bi = fp8_wgmma_kmajor ? n * 128 + k : k * 128 + n;
        s += (double)((m * 128 + k) % 7 - 3) * (double)(bi % 7 - 3);
      }
      ck_assert_msg(o[m * 128 + n] == (float)s, "%s: out[%d][%d] = %g, not %g", fp8_wgmma_binds,
                    m, n, o[m * 128 + n], s);
    }
}

START_TEST(fp8_dot_on_fp8_wgmma) {
  static const char *const binds[] = {"A=f8e4m3,B=f8e4m3,KMAJOR=1", "A=f8e5m2,B=f8e4m3,KMAJOR=1",
                                      "A=f8e4m3,B=f8e5m2,KMAJOR=1", "A=f8e5m2,B=f8e5m2,KMAJOR=0"};
  static const char *const instr[] = {"m64n128k32.f32.e4m3.e4m3", "m64n128k32.f32.e5m2.e4m3",
                                      "m64n128k32.f32.e4m3.e5m2", "m64n128k16.f32.f16.f16"};
  for (int i = 0; i < 4; i++) {
    kcase c = {"fp8_wgmma.c", fp8_wgmma, "k", binds[i], 1,
               {{64 * 128, 2}, {128 * 128, 2}, {64 * 128, 0}}, {0}};
    fp8_wgmma_binds = binds[i];
    fp8_wgmma_kmajor = strstr(binds[i], "KMAJOR=1") != NULL;
    kr_run_everywhere(&c, check_fp8_wgmma);
    char *t = kr_text(fp8_wgmma, "k", binds[i], "sm_90a");
    int want = strstr(instr[i], "k32") ? 128 / 32 : 128 / 16; /* one per k step */
    ck_assert_msg(kr_count(t, instr[i]) == want, "%s: %d of wgmma %s on sm_90a, not %d",
                  binds[i], kr_count(t, instr[i]), instr[i], want);
    free(t);
  }
}
END_TEST

/* The same kernel on sm_89 (Ada has fp8 mma.sync, not wgmma): the dot
 * runs on mma.sync m16n8k32 reading the fp8 tiles themselves (PTX ISA
 * 8.4), B N-major gathered from shared memory or K-major read by
 * ldmatrix; the sums stay exact, so the emulator equals the interpreter
 * and both the plain-C sums at every pairing and warp count. */
START_TEST(fp8_dot_on_fp8_mma_sync) {
  static const char *const binds[] = {"A=f8e4m3,B=f8e4m3,KMAJOR=1", "A=f8e5m2,B=f8e4m3,KMAJOR=0",
                                      "A=f8e4m3,B=f8e5m2,KMAJOR=1", "A=f8e5m2,B=f8e5m2,KMAJOR=0"};
  static const char *const instr[] = {"m16n8k32.row.col.f32.e4m3.e4m3.f32",
                                      "m16n8k32.row.col.f32.e5m2.e4m3.f32",
                                      "m16n8k32.row.col.f32.e4m3.e5m2.f32",
                                      "m16n8k32.row.col.f32.e5m2.e5m2.f32"};
  static const int warps[] = {1, 4, 8};
  for (int i = 0; i < 4; i++) {
    kcase c = {"fp8_wgmma.c", fp8_wgmma, "k", binds[i], 1,
               {{64 * 128, 2}, {128 * 128, 2}, {64 * 128, 0}}, {0}};
    fp8_wgmma_binds = binds[i];
    fp8_wgmma_kmajor = strstr(binds[i], "KMAJOR=1") != NULL;
    for (int w = 0; w < 3; w++) {
      void *out[MAXP] = {0};
      kr_run_both(&c, "sm_89", warps[w], out);
      check_fp8_wgmma(out);
      kr_free_all(out);
    }
    char *t = kr_text(fp8_wgmma, "k", binds[i], "sm_89");
    /* 64 x 128 x 128 in m16n8k32 steps over 4 warps */
    ck_assert_msg(kr_count(t, instr[i]) == 4 * 16 * 4 / 4, "%s: %d of mma %s on sm_89",
                  binds[i], kr_count(t, instr[i]), instr[i]);
    ck_assert_msg(kr_count(t, "m16n8k16") == 0 && kr_count(t, ".version 8.4") == 1,
                  "%s: an f16 mma or no PTX 8.4 on sm_89", binds[i]);
    ck_assert_msg((kr_count(t, "ldmatrix") > 4 * 4) == fp8_wgmma_kmajor,
                  "%s: %d ldmatrix (B by ldmatrix only when K-major)", binds[i],
                  kr_count(t, "ldmatrix"));
    free(t);
  }
}
END_TEST

/* Where tensor_desc parameters' blocks go through the TMA (PTX counts):
 * the copy's load and store on sm_90a, none of it on sm_80; in a for loop
 * the load is the loop's register prefetch (ctrl.c: plain loads a trip
 * ahead) and the store stays plain (its runs would be unordered bulk
 * stores); a store to a tensor the kernel also reads, and a load of a
 * tensor it writes, keep plain accesses (the async proxy is not ordered
 * with them); a box of 512 columns is over the TMA's 256. */
static const char tma_kernels[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(BN);\n"
    "TEENY_KERNEL(BN)\n"
    "void copy(tensor_desc(f32, 16, BN) s, tensor_desc(f32, 16, BN) d)\n"
    "{ store_tensor_descriptor(d, 16 * program_id(0), 0, load_tensor_descriptor(s, 16 * program_id(0), 0)); }\n"
    "TEENY_KERNEL(BN)\n"
    "void looped(tensor_desc(f32, 16, BN) s, tensor_desc(f32, 16, BN) d, i32 n)\n"
    "{ for (i32 i = 0; i < n; i++)\n"
    "    store_tensor_descriptor(d, 16 * i, 0, load_tensor_descriptor(s, 16 * i, 0)); }\n"
    "TEENY_KERNEL(BN)\n"
    "void inplace(tensor_desc(f32, 16, BN) s)\n"
    "{ store_tensor_descriptor(s, 0, 0, load_tensor_descriptor(s, 0, 0) + 1); }\n";

START_TEST(tma_where_it_may) {
  static const struct {
    const char *kernel, *binds, *target;
    int loads, stores;
  } cases[] = {
      {"copy", "BN=64", "sm_90a", 1, 1},    {"copy", "BN=64", "sm_80", 0, 0},
      {"copy", "BN=512", "sm_90a", 0, 0},   {"looped", "BN=64", "sm_90a", 0, 0},
      {"inplace", "BN=64", "sm_90a", 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *t = kr_text(tma_kernels, cases[i].kernel, cases[i].binds, cases[i].target);
    int loads = kr_count(t, "cp.async.bulk.tensor.2d.shared::cluster.global");
    int stores = kr_count(t, "cp.async.bulk.tensor.2d.global.shared::cta");
    ck_assert_msg(loads == cases[i].loads && stores == cases[i].stores,
                  "%s %s %s: %d TMA loads and %d stores, not %d and %d", cases[i].kernel,
                  cases[i].binds, cases[i].target, loads, stores, cases[i].loads,
                  cases[i].stores);
    free(t);
  }
}
END_TEST

/* num_stages sets how many iterations ahead a loop's register loads run
 * (num_stages - 1; ctrl.c prefetch_depth), in loops that feed no dot as in
 * those that do: more stages, more loads issued before the loop and in
 * its unrolled body; each depth computes the same sums, over row lengths
 * that end inside, at and past the prefetched iterations. */
static const char row_sums[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(f32) x, ptr(f32) out, i32 n)\n"
    "{ i32 r = program_id(0);\n"
    "  tile(f32) acc = zeros(f32, B);\n"
    "  for (i32 off = 0; off < n; off += B) {\n"
    "    tile(i32) c = off + arange(0, B);\n"
    "    acc += load(x + r * n + c, c < n, 0); }\n"
    "  store(out + r, sum(acc, 0)); }\n";

START_TEST(num_stages_sets_prefetch_depth) {
  char *t2 = kr_text(row_sums, "k", "B=128,teeny.num_stages=2", "sm_90a");
  char *t4 = kr_text(row_sums, "k", "B=128,teeny.num_stages=4", "sm_90a");
  char *t7 = kr_text(row_sums, "k", "B=128,teeny.num_stages=7", "sm_90a");
  int n2 = kr_count(t2, "ld.global"), n4 = kr_count(t4, "ld.global"), n7 = kr_count(t7, "ld.global");
  ck_assert_msg(n2 < n4 && n4 < n7, "ld.global at 2, 4, 7 stages: %d, %d, %d", n2, n4, n7);
  free(t2);
  free(t4);
  free(t7);
  static const char *const binds[] = {"B=128,teeny.num_stages=2", "B=128,teeny.num_stages=5",
                                      "B=128,teeny.num_stages=8"};
  static const long long lens[] = {1, 128, 129, 700, 1409};
  for (int b = 0; b < 3; b++)
    for (int l = 0; l < 5; l++) {
      kcase c = {"row_sums.c", row_sums, "k", binds[b], 3, {{3 * lens[l], 2}, {3, 3}}, {lens[l]}};
      kr_run_everywhere(&c, NULL);
    }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("emulator");
  TCase *tc = tcase_create("arith");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, s8_mma_sums_wrap);
  tcase_add_test(tc, wrapped_unsigned_to_float);
  tcase_add_test(tc, min_max_order_signed_zeros);
  tcase_add_test(tc, abs_of_a_maximum_with_nan);
  tcase_add_test(tc, wide_to_bf16_rounds_once);
  tcase_add_test(tc, fp8_dot_on_tensor_cores);
  tcase_add_test(tc, fp8_dot_on_fp8_wgmma);
  tcase_add_test(tc, fp8_dot_on_fp8_mma_sync);
  tcase_add_test(tc, tma_where_it_may);
  tcase_add_test(tc, num_stages_sets_prefetch_depth);
  tcase_add_test(tc, narrow_abs_in_32_bits);
  tcase_add_test(tc, bf16_times_f16_in_f32);
  tcase_add_test(tc, negated_mask_to_float);
  tcase_add_test(tc, negative_i8_as_u32_to_float);
  tcase_add_test(tc, negation_feeding_max);
  tcase_add_test(tc, subtraction_feeding_max);
  tcase_add_test(tc, narrow_min_max_in_32_bits);
  tcase_add_test(tc, fma_rounds_once);
  tcase_add_test(tc, inverse_trig_special_cases);
  tcase_add_test(tc, transposed_store_goes_through_shared_memory);
  tcase_add_test(tc, bool_memory_in_mlir_is_i8);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
