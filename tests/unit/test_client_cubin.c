/*
 * tests/unit/test_client_cubin.c — the client's rule for cubins, without a
 * GPU: teeny_cubin_usable (a cubin for the wrong architecture is never
 * loaded: the reply's name and the ELF header must both say the device's
 * architecture), on synthetic ELF headers of both CUDA ELF layouts and, where
 * ptxas is installed, on real cubins it makes; teeny_target_for_arch; and
 * teeny_module_load_result refusing to go near the driver without one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_util.h"
#include "teeny/client.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

/* A minimal CUDA ELF64 header for sm (abi 8: the SM in e_flags bits 8-15,
 * as CUDA 12.8+ writes; older: bits 0-7). */
static void fake_cubin(unsigned char *b, int sm, int abi) {
  memset(b, 0, 128);
  memcpy(b, "\x7f" "ELF", 4);
  b[4] = 2; /* 64-bit */
  b[5] = 1; /* little-endian */
  b[7] = 0x41;
  b[8] = (unsigned char)abi;
  b[18] = 190; /* EM_CUDA */
  unsigned flags = abi >= 8 ? (unsigned)sm << 8 | 0x06000004u : (unsigned)sm | 0x500000u;
  memcpy(b + 48, &flags, 4);
}

START_TEST(usable_needs_name_and_header_to_agree) {
  unsigned char c90[128], c80[128], old90[128];
  fake_cubin(c90, 90, 8);
  fake_cubin(c80, 80, 8);
  fake_cubin(old90, 90, 7);
  const char *cb90 = (const char *)c90, *cb80 = (const char *)c80;
  char why[160];
  ck_assert(teeny_cubin_usable(cb90, 128, "sm_90", "sm_90", why, sizeof why));
  ck_assert_str_eq(why, "");
  ck_assert(teeny_cubin_usable((const char *)old90, 128, "sm_90", "sm_90", NULL, 0));
  /* the wrong GPU, by name */
  ck_assert(!teeny_cubin_usable(cb90, 128, "sm_90", "sm_80", why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "for sm_90, the device is sm_80"));
  /* the name says sm_90, the header says sm_80: the header wins, no load */
  ck_assert(!teeny_cubin_usable(cb80, 128, "sm_90", "sm_90", why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "ELF header says sm_80"));
  /* not a cubin at all, a truncated one, none, unnamed, unknown device */
  ck_assert(!teeny_cubin_usable("not an ELF file at all, just some bytes of text......."
                                "..........", 64, "sm_90", "sm_90", why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "not a CUDA ELF"));
  ck_assert(!teeny_cubin_usable(cb90, 40, "sm_90", "sm_90", NULL, 0));
  ck_assert(!teeny_cubin_usable(NULL, 0, "sm_90", "sm_90", why, sizeof why));
  ck_assert_str_eq(why, "no cubin");
  ck_assert(!teeny_cubin_usable(cb90, 128, NULL, "sm_90", NULL, 0));
  ck_assert(!teeny_cubin_usable(cb90, 128, "sm_90", "", NULL, 0));
  ck_assert(!teeny_cubin_usable(cb90, 128, "sm_90", NULL, NULL, 0));
  unsigned char x86[128];
  fake_cubin(x86, 90, 8);
  x86[18] = 62; /* EM_X86_64 */
  ck_assert(!teeny_cubin_usable((const char *)x86, 128, "sm_90", "sm_90", NULL, 0));
}
END_TEST

/* The whole of a binary file (malloc'd), or NULL. */
static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n > 0 ? malloc((size_t)n) : NULL;
  *len = b ? fread(b, 1, (size_t)n, f) : 0;
  fclose(f);
  return b;
}

/* ptxas -arch=arch on ptx into a malloc'd cubin; NULL if it fails. */
static char *ptxas(const char *ptx, size_t len, const char *arch, size_t *out_len) {
  char dir[] = "/tmp/teeny_cubin_XXXXXX";
  if (!mkdtemp(dir))
    return NULL;
  char in[64], out[64], cmd[512];
  snprintf(in, sizeof in, "%s/in.ptx", dir);
  snprintf(out, sizeof out, "%s/out.cubin", dir);
  FILE *f = fopen(in, "w");
  fwrite(ptx, 1, len, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, PTXAS " -arch=%s -o %s %s", arch, out, in);
  char *bytes = system(cmd) == 0 ? read_all(out, out_len) : NULL;
  unlink(in);
  unlink(out);
  rmdir(dir);
  return bytes;
}

START_TEST(real_cubins_from_ptxas) {
  if (access(PTXAS, X_OK) != 0) {
    fprintf(stderr, "SKIP real_cubins_from_ptxas: no ptxas at " PTXAS "\n");
    return;
  }
  size_t len;
  char *src = ku_read_example("vector_add", &len);
  teeny_dtype_binding dt = {"D", "f32"};
  teeny_const_binding ct = {"BLOCK_SIZE", 1024};
  teeny_compile_req req = {.source = src, .source_len = len, .kernel = "vector_add",
                           .dtypes = &dt, .ndtypes = 1, .consts = &ct, .nconsts = 1,
                           .target = "sm_80"};
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE, .memo_entries = -1};
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  ck_assert_int_eq(teeny_client_open(&c, &o), 0);
  ck_assert_int_eq(teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r), 0);
  size_t n80, n90;
  char *c80 = ptxas(r->art.ptx, r->art.ptx_len, "sm_80", &n80);
  char *c90 = ptxas(r->art.ptx, r->art.ptx_len, "sm_90", &n90);
  ck_assert_ptr_nonnull(c80);
  ck_assert_ptr_nonnull(c90);
  ck_assert(teeny_cubin_usable(c80, n80, "sm_80", "sm_80", NULL, 0));
  ck_assert(teeny_cubin_usable(c90, n90, "sm_90", "sm_90", NULL, 0));
  ck_assert(!teeny_cubin_usable(c90, n90, "sm_90", "sm_80", NULL, 0));
  ck_assert(!teeny_cubin_usable(c80, n80, "sm_90", "sm_90", NULL, 0)); /* mislabelled */
  free(c80);
  free(c90);
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(src);
}
END_TEST

START_TEST(targets_for_gpus) {
  ck_assert_str_eq(teeny_target_for_arch("sm_90"), "sm_90a");
  ck_assert_str_eq(teeny_target_for_arch("sm_100"), "sm_90");
  ck_assert_str_eq(teeny_target_for_arch("sm_120"), "sm_90");
  ck_assert_str_eq(teeny_target_for_arch("sm_89"), "sm_89");
  ck_assert_str_eq(teeny_target_for_arch("sm_87"), "sm_86");
  ck_assert_str_eq(teeny_target_for_arch("sm_86"), "sm_86");
  ck_assert_str_eq(teeny_target_for_arch("sm_80"), "sm_80");
  ck_assert_ptr_null(teeny_target_for_arch("sm_75"));
  ck_assert_ptr_null(teeny_target_for_arch("sm_90a")); /* a target, not a GPU */
  ck_assert_ptr_null(teeny_target_for_arch("gfx90a"));
  ck_assert_ptr_null(teeny_target_for_arch(NULL));
}
END_TEST

START_TEST(no_driver_no_load) {
  unsigned char c90[128];
  fake_cubin(c90, 90, 8);
  teeny_client_result r;
  memset(&r, 0, sizeof r);
  r.art.ptx = ".version 8.0";
  r.art.ptx_len = 12;
  r.art.entry = "k_entry_point";
  r.art.threads_per_block = 128;
  r.cubin = (const char *)c90;
  r.cubin_len = sizeof c90;
  r.cubin_arch = "sm_90";
  teeny_module *m = (teeny_module *)1;
  char err[512] = "";
  ck_assert_int_eq(teeny_module_load_result(&r, &m, err, sizeof err), TEENY_E_NOCUDA);
  ck_assert_ptr_null(m);
  ck_assert_int_eq(teeny_module_load_result(NULL, &m, err, sizeof err), TEENY_E_INVAL);
  ck_assert_str_eq(teeny_module_origin(NULL), "");
}
END_TEST

int main(void) {
  setenv("TEENY_CUDA_LIBRARY", "libteeny-test-no-such-cuda.so.1", 1);
  Suite *su = suite_create("client_cubin");
  TCase *tc = tcase_create("cubin");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, usable_needs_name_and_header_to_agree);
  tcase_add_test(tc, real_cubins_from_ptxas);
  tcase_add_test(tc, targets_for_gpus);
  tcase_add_test(tc, no_driver_no_load);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
