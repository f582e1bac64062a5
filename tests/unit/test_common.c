/*
 * tests/unit/test_common.c — arenas, buffers, SHA-256, diagnostics, error
 * names and dtype names.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

START_TEST(arena_zeroed_aligned_and_large) {
  teeny_arena a;
  teeny__arena_init(&a);
  char *p = teeny__arena_alloc(&a, 3);
  char *q = teeny__arena_alloc(&a, 5);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq((uintptr_t)p % 16, 0);
  ck_assert_int_eq((uintptr_t)q % 16, 0);
  ck_assert_ptr_ne(p, q);
  unsigned char *big = teeny__arena_alloc(&a, 1 << 20);
  ck_assert_ptr_nonnull(big);
  for (int i = 0; i < (1 << 20); i += 4096)
    ck_assert_int_eq(big[i], 0);
  ck_assert_str_eq(teeny__arena_printf(&a, "%s-%d", "x", 42), "x-42");
  teeny__arena_free(&a);
  ck_assert_ptr_null(a.head);
}
END_TEST

START_TEST(arena_limit_longjmps) {
  teeny_arena a;
  teeny__arena_init(&a);
  a.limit = 100000;
  jmp_buf jb;
  volatile int jumped = 0;
  a.oom = &jb;
  if (setjmp(jb) == 0) {
    teeny__arena_alloc(&a, 1000);      /* fits in the first chunk */
    teeny__arena_alloc(&a, 1 << 20);   /* over the limit */
  } else {
    jumped = 1;
  }
  ck_assert_int_eq(jumped, 1);
  a.oom = NULL;
  ck_assert_ptr_null(teeny__arena_alloc(&a, 1 << 20));
  teeny__arena_free(&a);
}
END_TEST

START_TEST(buf_grows_and_takes) {
  teeny_buf b;
  teeny__buf_init(&b);
  for (int i = 0; i < 1000; i++)
    teeny__buf_printf(&b, "%d,", i);
  size_t len;
  char *s = teeny__buf_take(&b, &len);
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_eq(len, strlen(s));
  ck_assert(strncmp(s, "0,1,2,", 6) == 0);
  ck_assert(strstr(s, "999,") != NULL);
  teeny__free(s);
  ck_assert_ptr_null(b.p);
}
END_TEST

/* An empty buffer takes as "" (a kernel without parameters is stored with
 * an empty parameter list: it once came out as heap garbage). */
START_TEST(buf_takes_empty_as_empty_string) {
  teeny_buf b;
  teeny__buf_init(&b);
  size_t len = 7;
  char *s = teeny__buf_take(&b, &len);
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_eq(len, 0);
  ck_assert_str_eq(s, "");
  teeny__free(s);
}
END_TEST

START_TEST(buf_failed_alloc_sticks) {
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__alloc_fail_after(0);
  teeny__buf_puts(&b, "hello");
  teeny__alloc_fail_after(-1);
  teeny__buf_puts(&b, "world");
  ck_assert(b.oom);
  ck_assert_ptr_null(teeny__buf_take(&b, NULL));
}
END_TEST

START_TEST(sha256_known_vectors) {
  char hex[65];
  ck_assert_int_eq(teeny__sha256_hex("", 0, hex), 0);
  ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  ck_assert_int_eq(teeny__sha256_hex("abc", 3, hex), 0);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(diag_format_caret_under_column) {
  teeny_diags d;
  teeny_diags_init(&d);
  const char *src = "line one\n\tx = y + 1;\nthird";
  teeny__diags_addf_at(&d, TEENY_DIAG_ERROR, "k.c", src, strlen(src), 2, 6,
                       "unknown name '%s'", "y");
  ck_assert_uint_eq(d.n, 1);
  ck_assert_uint_eq(d.nerrors, 1);
  char out[256];
  teeny_diag_format(&d.v[0], out, sizeof out);
  ck_assert_str_eq(out, "k.c:2:6: error: unknown name 'y'\n  \tx = y + 1;\n  \t    ^\n");
  teeny_diags_close(&d);
  ck_assert_uint_eq(d.n, 0);
}
END_TEST

START_TEST(diag_control_bytes_replaced) {
  teeny_diags d;
  teeny_diags_init(&d);
  const char src[] = "a\x1b[31m\0b";
  teeny__diags_addf_at(&d, TEENY_DIAG_ERROR, "k.c", src, sizeof src - 1, 1, 1,
                       "bad \x1b byte");
  ck_assert_str_eq(d.v[0].source_line, "a?[31m?b");
  ck_assert_str_eq(d.v[0].message, "bad ? byte");
  /* a line past the end gives no source line but keeps the message */
  teeny__diags_addf_at(&d, TEENY_DIAG_ERROR, "k.c", src, sizeof src - 1, 9, 1, "x");
  ck_assert_ptr_null(d.v[1].source_line);
  char small[8];
  size_t want = teeny_diag_format(&d.v[1], small, sizeof small);
  ck_assert_uint_gt(want, 7);
  ck_assert_uint_eq(strlen(small), 7);
  teeny_diags_close(&d);
}
END_TEST

START_TEST(error_names_and_dtypes) {
  ck_assert_str_eq(teeny_err_name(TEENY_E_NOMEM), "NOMEM");
  ck_assert_str_eq(teeny_strerror(TEENY_E_PERM), "permission denied");
  ck_assert_str_eq(teeny_strerror(12345), "unknown error");
  ck_assert_int_eq(teeny_dtype_parse("bf16"), TEENY_DT_BF16);
  ck_assert_int_eq(teeny_dtype_parse("ptr"), TEENY_DT_VOID);
  ck_assert_int_eq(teeny_dtype_parse("f33"), TEENY_DT_VOID);
  ck_assert_str_eq(teeny_dtype_name(TEENY_DT_U16), "u16");
  ck_assert_int_eq(teeny_dtype_size(TEENY_DT_F64), 8);
  ck_assert(teeny__dt_is_signed(TEENY_DT_I8));
  ck_assert(!teeny__dt_is_signed(TEENY_DT_U8));
  ck_assert(!teeny__dt_is_int(TEENY_DT_BOOL));
  ck_assert_int_eq(teeny__dt_bits(TEENY_DT_BOOL), 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("common");
  TCase *tc = tcase_create("all");
  tcase_add_test(tc, arena_zeroed_aligned_and_large);
  tcase_add_test(tc, arena_limit_longjmps);
  tcase_add_test(tc, buf_grows_and_takes);
  tcase_add_test(tc, buf_takes_empty_as_empty_string);
  tcase_add_test(tc, buf_failed_alloc_sticks);
  tcase_add_test(tc, sha256_known_vectors);
  tcase_add_test(tc, diag_format_caret_under_column);
  tcase_add_test(tc, diag_control_bytes_replaced);
  tcase_add_test(tc, error_names_and_dtypes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
