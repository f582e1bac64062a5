/*
 * tests/unit/test_client_jit.c — the JIT options libteenyc-client gives the
 * driver when it loads PTX: both logs always, and the optimisation level
 * only when $TEENY_CUDA_JIT_OPT names one (0 to 4).  The driver is the
 * stand-in bench/fake_libcuda.c ($TEENY_FAKE_CUDA, set by CMake), which
 * records the options and loads nothing; no kernel runs here.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "teeny/client.h"

enum { OPT_INFO_LOG = 3, OPT_OPT_LEVEL = 7 };

static const char ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n";

/* Load a module with $TEENY_CUDA_JIT_OPT set to level (NULL: unset); the
 * options the driver saw go to opts/vals, their count is returned. */
static unsigned load_with(const char *level, int opts[8], unsigned long long vals[8]) {
  if (level)
    setenv("TEENY_CUDA_JIT_OPT", level, 1);
  else
    unsetenv("TEENY_CUDA_JIT_OPT");
  teeny_artifact a = {.ptx = (char *)ptx, .ptx_len = sizeof ptx - 1, .entry = "k",
                      .threads_per_block = 32};
  teeny_module *m = NULL;
  char err[512] = "";
  ck_assert_msg(teeny_module_load(&a, &m, err, sizeof err) == 0, "%s", err);
  teeny_module_unload(m);
  void *fake = dlopen(getenv("TEENY_FAKE_CUDA"), RTLD_NOW | RTLD_NOLOAD);
  ck_assert_ptr_nonnull(fake); /* the client loaded this very library */
  unsigned (*last)(int *, unsigned long long *) =
      (unsigned (*)(int *, unsigned long long *))dlsym(fake, "fake_last_jit");
  ck_assert_ptr_nonnull(last);
  unsigned n = last(opts, vals);
  dlclose(fake);
  return n;
}

START_TEST(jit_options) {
  int opts[8];
  unsigned long long vals[8];
  ck_assert_uint_eq(load_with(NULL, opts, vals), 4); /* the two logs, no level */
  ck_assert_int_eq(opts[0], OPT_INFO_LOG);
  for (unsigned i = 0; i < 4; i++)
    ck_assert_int_ne(opts[i], OPT_OPT_LEVEL);
  ck_assert_uint_eq(load_with("0", opts, vals), 5);
  ck_assert_int_eq(opts[4], OPT_OPT_LEVEL);
  ck_assert_uint_eq(vals[4], 0);
  ck_assert_uint_eq(load_with("3", opts, vals), 5);
  ck_assert_uint_eq(vals[4], 3);
  ck_assert_uint_eq(load_with("9", opts, vals), 4); /* not a level: ignored */
  ck_assert_uint_eq(load_with("", opts, vals), 4);
  ck_assert_uint_eq(load_with("01", opts, vals), 4);
}
END_TEST

int main(void) {
  setenv("TEENY_CUDA_LIBRARY", getenv("TEENY_FAKE_CUDA") ? getenv("TEENY_FAKE_CUDA") : "", 1);
  Suite *s = suite_create("client_jit");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, jit_options);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK); /* the loader is process-wide */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
