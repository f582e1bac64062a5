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
#include <stdint.h>

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

static Suite *suite(void) {
  Suite *s = suite_create("emulator");
  TCase *tc = tcase_create("arith");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, s8_mma_sums_wrap);
  tcase_add_test(tc, wrapped_unsigned_to_float);
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
