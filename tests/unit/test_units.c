/*
 * tests/unit/test_units.c — the one size and duration parser
 * (common/units.c, teeny/units.h) that teenycd's flags and config file and
 * teenyctl's purge options share: every spelling the docs promise, the
 * rounding, and clear errors for the rest (never a silent 0).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "teeny/error.h"
#include "teeny/units.h"

static uint64_t size_of(const char *s) {
  uint64_t v = 12345;
  char err[256] = "";
  ck_assert_msg(teeny_size_parse(s, &v, err, sizeof err) == 0, "'%s': %s", s, err);
  return v;
}

static uint64_t ms_of(const char *s) {
  uint64_t v = 12345;
  char err[256] = "";
  ck_assert_msg(teeny_duration_parse(s, &v, err, sizeof err) == 0, "'%s': %s", s, err);
  return v;
}

START_TEST(sizes_every_spelling) {
  const uint64_t G = 1ull << 30, M = 1ull << 20, K = 1ull << 10;
  ck_assert_uint_eq(size_of("5GB"), 5 * G);
  ck_assert_uint_eq(size_of("5G"), 5 * G);
  ck_assert_uint_eq(size_of("5GiB"), 5 * G);
  ck_assert_uint_eq(size_of("5 gib"), 5 * G);
  ck_assert_uint_eq(size_of("1.5G"), 3 * G / 2);
  ck_assert_uint_eq(size_of("512MiB"), 512 * M);
  ck_assert_uint_eq(size_of("512mb"), 512 * M);
  ck_assert_uint_eq(size_of("256K"), 256 * K);
  ck_assert_uint_eq(size_of("2T"), 2ull << 40);
  ck_assert_uint_eq(size_of("1P"), 1ull << 50);
  ck_assert_uint_eq(size_of("4096"), 4096);
  ck_assert_uint_eq(size_of("4096B"), 4096);
  ck_assert_uint_eq(size_of("0"), 0);
  ck_assert_uint_eq(size_of(".5K"), 512);
  ck_assert_uint_eq(size_of("1.0009765625K"), 1025); /* exact fractions */
  ck_assert_uint_eq(size_of("0.3B"), 0);            /* rounded to the byte */
}
END_TEST

START_TEST(durations_every_spelling) {
  ck_assert_uint_eq(ms_of("90min"), 90 * 60000);
  ck_assert_uint_eq(ms_of("90m"), 90 * 60000);
  ck_assert_uint_eq(ms_of("1d"), 86400000);
  ck_assert_uint_eq(ms_of("2days"), 2 * 86400000ull);
  ck_assert_uint_eq(ms_of("30s"), 30000);
  ck_assert_uint_eq(ms_of("30"), 30000); /* plain: seconds */
  ck_assert_uint_eq(ms_of("250ms"), 250);
  ck_assert_uint_eq(ms_of("1.5h"), 5400000);
  ck_assert_uint_eq(ms_of("1w"), 604800000);
  ck_assert_uint_eq(ms_of("12 hours"), 12 * 3600000ull);
  ck_assert_uint_eq(ms_of("0.25s"), 250);
  ck_assert_uint_eq(ms_of("0"), 0);
}
END_TEST

START_TEST(errors_are_clear) {
  static const char *const bad_sizes[] = {"", "G", "-1G", "+1G", "1e3", "5XB", "1.5.5G",
                                          "5 G B", "0x10", "nan", "inf", "1G ",
                                          "99999999999999999999", "20000000P"};
  char err[256];
  uint64_t v = 7;
  for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++) {
    err[0] = '\0';
    ck_assert_msg(teeny_size_parse(bad_sizes[i], &v, err, sizeof err) == TEENY_E_INVAL,
                  "'%s' accepted", bad_sizes[i]);
    ck_assert_uint_eq(v, 7); /* untouched */
    ck_assert_msg(strstr(err, "bad size '") != NULL, "'%s': %s", bad_sizes[i], err);
  }
  ck_assert_int_eq(teeny_size_parse("5XB", &v, err, sizeof err), TEENY_E_INVAL);
  ck_assert_str_eq(err, "bad size '5XB': want a number and B, K, M, G, T or P (powers of "
                        "1024; KB, KiB alike), e.g. 512MiB, 1.5G, 5GB");
  ck_assert_int_eq(teeny_size_parse("20000000P", &v, err, sizeof err), TEENY_E_INVAL);
  ck_assert(strstr(err, "too large"));
  ck_assert_int_eq(teeny_size_parse(NULL, &v, err, sizeof err), TEENY_E_INVAL);
  ck_assert(strstr(err, "empty"));
  static const char *const bad_times[] = {"", "ms", "-5s", "5 parsecs", "1y", "5sec s",
                                          "1e3ms", "300000000000000000w"};
  for (size_t i = 0; i < sizeof bad_times / sizeof *bad_times; i++) {
    ck_assert_msg(teeny_duration_parse(bad_times[i], &v, err, sizeof err) == TEENY_E_INVAL,
                  "'%s' accepted", bad_times[i]);
    ck_assert_msg(strstr(err, "bad duration '") != NULL, "'%s': %s", bad_times[i], err);
  }
  ck_assert_int_eq(teeny_duration_parse("1y", &v, NULL, 0), TEENY_E_INVAL); /* no sink */
  ck_assert_uint_eq(v, 7);
}
END_TEST

int main(void) {
  Suite *s = suite_create("units");
  TCase *tc = tcase_create("units");
  tcase_add_test(tc, sizes_every_spelling);
  tcase_add_test(tc, durations_every_spelling);
  tcase_add_test(tc, errors_are_clear);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
