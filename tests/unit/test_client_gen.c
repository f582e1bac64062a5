/*
 * tests/unit/test_client_gen.c — the typed API teenyc-gen writes, used the
 * way an app uses it (this file is built with teeny_add_kernels, so the
 * generated code also compiled here under the project's -Werror flags):
 * named const fields, ids and sources, the dispatcher's dtype check and
 * its backward kernel, compiling through a client, and launching where
 * there is no CUDA driver.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "consts.teeny.h"
#include "matmul.teeny.h"
#include "scale.teeny.h"
#include "vector_add.teeny.h"

START_TEST(dispatch_checks_dtypes) {
  scale_dispatched d;
  ck_assert_int_eq(scale_dispatch(&d, TEENY_DT_I32, (scale_consts){.block_size = 256}),
                   TEENY_E_BINDING);
  ck_assert_ptr_nonnull(strstr(d.error, "dtype i32 is not supported for D"));
  ck_assert_ptr_nonnull(strstr(d.error, "supported: f32, f16, bf16"));
  scale_dispatched_close(&d);
  ck_assert_int_eq(scale_dispatch(&d, TEENY_DT_F16, (scale_consts){.block_size = 256}), 0);
  ck_assert_str_eq(d.forward.id, "scale__f16__256");
  ck_assert_str_eq(d.backward.id, "scale_backward__f16__256");
  ck_assert_int_eq(d.forward.d, TEENY_DT_F16);
  ck_assert_int_eq(d.backward.block_size, 256);
  ck_assert_str_eq(d.forward.name, "scale");
  ck_assert_ptr_eq(d.forward.kernel_source, scale_file_source);
  ck_assert_ptr_nonnull(strstr(d.forward.entry_point_source,
                               "void scale_entry_point(f16 *x_ptr, f16 *y_ptr, f16 alpha, i32 n)"));
  ck_assert_ptr_nonnull(strstr(d.backward.source, "TEENY_BIND(D, f16);"));
  scale_dispatched_close(&d);
  ck_assert_ptr_null(d.forward.id);
}
END_TEST

START_TEST(named_consts) {
  matmul_kernel m;
  matmul_consts c = {.block_k = 32, .group_m = 8, .block_n = 64, .block_m = 128};
  ck_assert_int_eq(matmul_init(&m, TEENY_DT_BF16, c), 0);
  ck_assert_str_eq(m.id, "matmul__bf16__128__64__32__8"); /* TEENY_KERNEL order */
  ck_assert_int_eq(m.block_m, 128);
  ck_assert_int_eq(m.group_m, 8);
  ck_assert_ptr_nonnull(strstr(m.source, "TEENY_BIND(BLOCK_N, 64);"));
  ck_assert_int_eq(matmul_set_options(&m, "sm_80", 8), 0);
  ck_assert_ptr_nonnull(strstr(m.source, "target: sm_80  num_warps: 8"));
  matmul_close(&m);
  vector_add_kernel v;
  ck_assert_int_ne(vector_add_init(&v, TEENY_DT_U8, (vector_add_consts){.block_size = 64}), 0);
  ck_assert_ptr_nonnull(strstr(v.base.err, "f32, f16, bf16"));
  vector_add_close(&v);
}
END_TEST

START_TEST(typed_const_fields) {
  /* a const's field has its dtype; float ones are bound as text */
  typed_consts_kernel k;
  typed_consts_consts c = {.block = 16, .eps = 1e-5f, .scale = 0.1, .is_causal = true,
                           .big = INT64_C(5000000000), .half = 0.375f, .mask = 0xf0f0f0f0u};
  ck_assert_int_eq(typed_consts_init(&k, c), 0);
  ck_assert_str_eq(k.id, "typed_consts__16__1e-05__0.1__true__5000000000__0.375__4042322160");
  ck_assert_ptr_nonnull(strstr(k.source, "TEENY_BIND(EPS, 1e-05);"));
  ck_assert(k.is_causal);
  typed_consts_close(&k);
}
END_TEST

START_TEST(compile_and_launch_without_cuda) {
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE};
  teeny_client *c = NULL;
  ck_assert_int_eq(teeny_client_open(&c, &o), 0);
  scale_dispatched d;
  ck_assert_int_eq(scale_dispatch(&d, TEENY_DT_F32, (scale_consts){.block_size = 128}), 0);
  teeny_grid g = {.x = 4};
  scale_args a = {.alpha = 2.0, .n = 512};
  ck_assert_int_eq(scale_launch(&d.forward, g, NULL, &a), TEENY_E_INVAL); /* not compiled */
  ck_assert_int_eq(scale_compile(&d.forward, c), 0);
  ck_assert_int_eq(scale_backward_compile(&d.backward, c), 0);
  ck_assert_str_eq(d.forward.base.result->art.key, d.forward.base.key);
  ck_assert_str_eq(d.backward.base.result->art.entry, "scale_backward_entry_point");
  ck_assert_int_eq(d.forward.base.result->art.nparams, 4);
  ck_assert_int_eq(scale_launch(&d.forward, g, NULL, &a), TEENY_E_NOCUDA);
  ck_assert_ptr_nonnull(strstr(d.forward.base.err, "CUDA driver not available"));
  scale_dispatched_close(&d);
  teeny_client_close(c);
}
END_TEST

/* teeny_source_inspect, which teenyc-gen is built on. */
START_TEST(inspect_a_kernel_file) {
  teeny_source_info *info = NULL;
  teeny_diags d;
  teeny_diags_init(&d);
  ck_assert_int_eq(teeny_source_inspect(scale_file_source, scale_file_source_len, "scale.c",
                                        &info, &d), 0);
  ck_assert_uint_eq(info->ngenerics, 2);
  ck_assert_str_eq(info->generics[0].name, "D");
  ck_assert(info->generics[0].is_dtype);
  ck_assert_uint_eq(info->generics[0].nallowed, 3);
  ck_assert_int_eq(info->generics[0].allowed[2], TEENY_DT_BF16);
  ck_assert(!info->generics[1].is_dtype);
  ck_assert_uint_eq(info->nkernels, 2);
  const teeny_kernel_info *f = &info->kernels[0], *b = &info->kernels[1];
  ck_assert_str_eq(f->name, "scale");
  ck_assert_int_eq(f->backward, 1);
  ck_assert_int_eq(f->forward, -1);
  ck_assert_int_eq(b->forward, 0);
  ck_assert_uint_eq(f->ngenerics, 2);
  ck_assert_int_eq(f->generics[1], 1);
  ck_assert_uint_eq(f->nparams, 4);
  ck_assert_int_eq(f->params[0].kind, TEENY_PARAM_POINTER);
  ck_assert_int_eq(f->params[0].generic, 0);
  ck_assert_int_eq(f->params[2].kind, TEENY_PARAM_SCALAR); /* D alpha */
  ck_assert_int_eq(f->params[2].generic, 0);
  ck_assert_int_eq(f->params[3].generic, -1);
  ck_assert_int_eq(f->params[3].dtype, TEENY_DT_I32);
  ck_assert_int_gt(f->line, 0);
  teeny_source_info_destroy(info);

  static const char bad[] = "TEENY_KERNEL(X)\nvoid k(ptr(f32) p) { }\n";
  ck_assert_int_eq(teeny_source_inspect(bad, sizeof bad - 1, "bad.c", &info, &d),
                   TEENY_E_COMPILE);
  ck_assert_ptr_null(info);
  ck_assert_uint_ge(d.nerrors, 1);
  ck_assert_str_eq(d.v[0].file, "bad.c");
  ck_assert_int_eq(teeny_source_inspect(NULL, 3, NULL, &info, NULL), TEENY_E_INVAL);
  teeny_source_info_destroy(NULL);
  teeny_diags_close(&d);
}
END_TEST

int main(void) {
  setenv("TEENY_CUDA_LIBRARY", "libteeny-test-no-such-cuda.so.1", 1);
  Suite *s = suite_create("client_gen");
  TCase *t = tcase_create("generated");
  tcase_add_test(t, dispatch_checks_dtypes);
  tcase_add_test(t, named_consts);
  tcase_add_test(t, typed_const_fields);
  tcase_add_test(t, compile_and_launch_without_cuda);
  tcase_add_test(t, inspect_a_kernel_file);
  suite_add_tcase(s, t);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
