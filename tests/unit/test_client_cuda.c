/*
 * tests/unit/test_client_cuda.c — the CUDA loader where CUDA is absent:
 * with $TEENY_CUDA_LIBRARY naming a library that does not exist, every
 * entry point returns TEENY_E_NOCUDA with a message naming the library,
 * argument errors are still TEENY_E_INVAL, and compiling keeps working;
 * tensor descriptors that the TMA cannot take need no driver.
 * (The loader state is process-wide and set once, so the whole file runs
 * in one process with the variable set before the first call.)
 *
 * With TEENY_TEST_REAL_CUDA=1 (on a GPU machine) it instead checks the real
 * driver: the device target, a JIT failure reported with its log, a
 * missing entry symbol, and vector_add launched and checked.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_util.h"
#include "teeny/client.h"

#define BOGUS "libteeny-test-no-such-cuda.so.1"

START_TEST(no_cuda_everywhere) {
  char err[1024] = "";
  ck_assert_int_eq(teeny_cuda_available(err, sizeof err), TEENY_E_NOCUDA);
  ck_assert_ptr_nonnull(strstr(err, BOGUS));
  ck_assert_ptr_nonnull(strstr(err, "CUDA driver not available"));
  char target[16];
  ck_assert_int_eq(teeny_cuda_target(target, sizeof target, err, sizeof err), TEENY_E_NOCUDA);
  teeny_dptr p = {0};
  err[0] = '\0';
  ck_assert_int_eq(teeny_cuda_alloc(&p, 64, err, sizeof err), TEENY_E_NOCUDA);
  ck_assert_uint_eq(p.addr, 0);
  ck_assert_ptr_nonnull(strstr(err, BOGUS));
  ck_assert_int_eq(teeny_cuda_to_device(p, "x", 1, NULL, 0), TEENY_E_NOCUDA); /* NULL err ok */
  ck_assert_int_eq(teeny_cuda_to_host(err, p, 1, err, sizeof err), TEENY_E_NOCUDA);
  ck_assert_int_eq(teeny_cuda_memset(p, 0, 1, err, sizeof err), TEENY_E_NOCUDA);
  ck_assert_int_eq(teeny_cuda_sync(err, sizeof err), TEENY_E_NOCUDA);
  teeny_cuda_free(p);            /* no-ops */
  teeny_module_unload(NULL);
}
END_TEST

START_TEST(module_and_launch) {
  char err[1024] = "";
  teeny_module *m = (teeny_module *)1;
  teeny_artifact empty = {0};
  ck_assert_int_eq(teeny_module_load(&empty, &m, err, sizeof err), TEENY_E_INVAL);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(err, "no PTX"));
  unsigned grid[3] = {1, 1, 1};
  ck_assert_int_eq(teeny_launch(NULL, grid, NULL, NULL, err, sizeof err), TEENY_E_INVAL);

  /* A real artifact, compiled offline: loading it needs the driver. */
  size_t len;
  char *src = ku_read_example("vector_add", &len);
  teeny_dtype_binding dt = {"D", "f32"};
  teeny_const_binding ct = {"BLOCK_SIZE", 1024};
  teeny_compile_req req = {.source = src, .source_len = len, .kernel = "vector_add",
                           .dtypes = &dt, .ndtypes = 1, .consts = &ct, .nconsts = 1};
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE};
  teeny_client *c = NULL;
  ck_assert_int_eq(teeny_client_open(&c, &o), 0);
  teeny_client_result *r = NULL;
  ck_assert_int_eq(teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r), 0);
  ck_assert_int_eq(teeny_module_load(&r->art, &m, err, sizeof err), TEENY_E_NOCUDA);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(err, BOGUS));

  /* The generated-code runtime reports the same. */
  teeny_kernel k;
  memset(&k, 0, sizeof k);
  k.req = req;
  k.req.dtypes = NULL;
  k.req.consts = NULL;
  k.dtypes[0] = dt;
  k.consts[0] = ct;
  ck_assert_int_eq(teeny_kernel_prepare(&k), 0);
  ck_assert_int_eq(teeny_kernel_compile(&k, c), 0);
  teeny_dptr a = {0};
  int32_t n = 0;
  void *args[4] = {&a.addr, &a.addr, &a.addr, &n};
  teeny_grid g = {.x = 1};
  ck_assert_int_eq(teeny_kernel_launch(&k, g, NULL, args, 4), TEENY_E_NOCUDA);
  ck_assert_ptr_nonnull(strstr(k.err, BOGUS));
  teeny_dptr off = {0x10004}; /* kernels assume 16-byte aligned pointers: refused first */
  args[1] = &off.addr;
  ck_assert_int_eq(teeny_kernel_launch(&k, g, NULL, args, 4), TEENY_E_INVAL);
  ck_assert_ptr_nonnull(strstr(k.err, "b_ptr = 0x10004 is not 16-byte aligned"));
  teeny_kernel_close(&k);
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(src);
}
END_TEST

/* ---- on a GPU -------------------------------------------------------------------- */

static const char bad_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry broken()\n{\n  this is not ptx;\n}\n";

START_TEST(real_driver) {
  char err[4096] = "";
  ck_assert_msg(teeny_cuda_available(err, sizeof err) == 0, "%s", err);
  char target[16];
  ck_assert_int_eq(teeny_cuda_target(target, sizeof target, err, sizeof err), 0);
  teeny_module *m = NULL;
  teeny_artifact bad = {.ptx = (char *)bad_ptx, .ptx_len = sizeof bad_ptx - 1,
                        .entry = "broken", .threads_per_block = 32};
  ck_assert_int_eq(teeny_module_load(&bad, &m, err, sizeof err), TEENY_E_CUDA);
  ck_assert_msg(strstr(err, "cuModuleLoadDataEx: CUDA_ERROR_") && strstr(err, "JIT log: ") &&
                    strstr(err, "not"), "%s", err); /* the log quotes the bad token */

  size_t len;
  char *src = ku_read_example("vector_add", &len);
  teeny_dtype_binding dt = {"D", "f32"};
  teeny_const_binding ct = {"BLOCK_SIZE", 256};
  teeny_compile_req req = {.source = src, .source_len = len, .kernel = "vector_add",
                           .dtypes = &dt, .ndtypes = 1, .consts = &ct, .nconsts = 1,
                           .target = target};
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE};
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  ck_assert_int_eq(teeny_client_open(&c, &o), 0);
  ck_assert_int_eq(teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r), 0);
  teeny_artifact wrong = r->art;
  wrong.entry = "no_such_entry";
  ck_assert_int_eq(teeny_module_load(&wrong, &m, err, sizeof err), TEENY_E_CUDA);
  ck_assert_msg(strstr(err, "cuModuleGetFunction") && strstr(err, "no_such_entry"), "%s", err);
  ck_assert_msg(teeny_module_load(&r->art, &m, err, sizeof err) == 0, "%s", err);

  enum { N = 1000 }; /* not a multiple of the block: the mask matters */
  float a[N], b[N], out[N];
  for (int i = 0; i < N; i++)
    a[i] = (float)i, b[i] = 0.5f * (float)i, out[i] = -1;
  teeny_dptr da, db, dout;
  ck_assert_int_eq(teeny_cuda_alloc(&da, sizeof a, err, sizeof err), 0);
  ck_assert_int_eq(teeny_cuda_alloc(&db, sizeof b, err, sizeof err), 0);
  ck_assert_int_eq(teeny_cuda_alloc(&dout, sizeof out + 64, err, sizeof err), 0);
  ck_assert_int_eq(teeny_cuda_to_device(da, a, sizeof a, err, sizeof err), 0);
  ck_assert_int_eq(teeny_cuda_to_device(db, b, sizeof b, err, sizeof err), 0);
  ck_assert_int_eq(teeny_cuda_memset(dout, 0xff, sizeof out + 64, err, sizeof err), 0);
  int32_t n = N;
  void *args[] = {&da.addr, &db.addr, &dout.addr, &n};
  unsigned grid[3] = {(N + 255) / 256, 0, 0};
  ck_assert_msg(teeny_launch(m, grid, NULL, args, err, sizeof err) == 0, "%s", err);
  ck_assert_msg(teeny_cuda_sync(err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(teeny_cuda_to_host(out, dout, sizeof out, err, sizeof err), 0);
  for (int i = 0; i < N; i++)
    ck_assert_msg(out[i] == a[i] + b[i], "out[%d] = %g", i, out[i]);
  uint32_t tail = 0;
  ck_assert_int_eq(teeny_cuda_to_host(&tail, (teeny_dptr){dout.addr + sizeof out}, 4, err,
                                      sizeof err), 0);
  ck_assert_uint_eq(tail, 0xffffffffu); /* nothing written past n */
  teeny_cuda_free(da);
  teeny_cuda_free(db);
  teeny_cuda_free(dout);
  teeny_module_unload(m);
  teeny_client_result_free(r);
  teeny_client_close(c);
  free(src);
}
END_TEST

/* teeny_tensor_desc_make without a driver: bad arguments are
 * TEENY_E_INVAL; a tensor the TMA cannot take gets a zero tensormap and
 * no driver call (the kernel tests the same rules and uses plain loads);
 * one it can take needs the driver. */
START_TEST(tensor_descs) {
  char err[512] = "";
  teeny_tensor_desc d;
  teeny_dptr base = {0x10000};
  int64_t shape[2] = {1000, 777}, strides[2] = {777, 1};
  int block[2] = {64, 32};
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 2, shape, strides, block, err,
                                          sizeof err), 0); /* rows of 3108 bytes */
  ck_assert(!d.tma);
  for (int i = 0; i < 16; i++)
    ck_assert_uint_eq(d.map.opaque[i], 0);
  ck_assert_int_eq(d.shape[0], 1000);
  ck_assert_int_eq(d.shape[1], 777);
  ck_assert_int_eq(d.stride[0], 777);
  void *args[9];
  ck_assert_uint_eq(teeny_tensor_desc_args(&d, args), 5);
  ck_assert_ptr_eq(args[0], &d.map);
  ck_assert_ptr_eq(args[1], &d.base.addr);
  ck_assert_ptr_eq(args[4], &d.stride[0]);
  /* a base not 16-byte aligned is refused: kernels assume every pointer
   * argument is, and fold their own test of it (an i8 copy through the
   * TMA with a zero tensormap was an illegal instruction on the H200) */
  teeny_dptr odd = {0x10008};
  int64_t aligned[2] = {776, 1};
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, odd, 2, shape, aligned, block, err,
                                          sizeof err), TEENY_E_INVAL);
  ck_assert_ptr_nonnull(strstr(err, "16-byte aligned"));
  int64_t overlap[2] = {512, 1}; /* rows shorter than the shape: plain loads */
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 2, shape, overlap, block, err,
                                          sizeof err), 0);
  ck_assert(!d.tma);
  int wide[2] = {64, 512}; /* a box dim over 256 */
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 2, shape, aligned, wide, err,
                                          sizeof err), 0);
  ck_assert(!d.tma);
  int64_t strided[2] = {776, 2};
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 2, shape, strided, block, err,
                                          sizeof err), TEENY_E_INVAL);
  ck_assert_ptr_nonnull(strstr(err, "contiguous"));
  int npot[2] = {64, 48};
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 2, shape, aligned, npot, err,
                                          sizeof err), TEENY_E_INVAL);
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_BOOL, base, 2, shape, aligned, block, err,
                                          sizeof err), TEENY_E_INVAL);
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 5, shape, aligned, block, err,
                                          sizeof err), TEENY_E_INVAL);
  /* 16-byte aligned everything: the TMA takes it, so the driver is needed */
  shape[1] = 776;
  err[0] = '\0';
  ck_assert_int_eq(teeny_tensor_desc_make(&d, TEENY_DT_F32, base, 2, shape, aligned, block, err,
                                          sizeof err), TEENY_E_NOCUDA);
  ck_assert_ptr_nonnull(strstr(err, BOGUS));
}
END_TEST

int main(void) {
  bool real = getenv("TEENY_TEST_REAL_CUDA") && strcmp(getenv("TEENY_TEST_REAL_CUDA"), "1") == 0;
  if (!real)
    setenv("TEENY_CUDA_LIBRARY", BOGUS, 1);
  Suite *s = suite_create("client_cuda");
  TCase *t = tcase_create(real ? "real_cuda" : "no_cuda");
  tcase_set_timeout(t, 60);
  if (real) {
    tcase_add_test(t, real_driver);
  } else {
    tcase_add_test(t, no_cuda_everywhere);
    tcase_add_test(t, module_and_launch);
    tcase_add_test(t, tensor_descs);
  }
  suite_add_tcase(s, t);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
