/*
 * tests/unit/test_ir.c — the tile IR builder and verifier: the hand-built
 * samples verify; each class of broken IR is caught.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir_samples.h"

static teeny_arena arena;
static teeny_diags diags;
static teeny_ctx cx;

static void setup(void) {
  teeny__arena_init(&arena);
  teeny_diags_init(&diags);
  memset(&cx, 0, sizeof cx);
  cx.arena = &arena;
  cx.file = "<ir>";
  cx.diags = &diags;
}

static void teardown(void) {
  teeny_diags_close(&diags);
  teeny__arena_free(&arena);
}

static int verify(teeny_ir_func *f) { return teeny__ir_verify(&cx, f); }

START_TEST(samples_verify) {
  ck_assert_int_eq(verify(teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024)), 0);
  ck_assert_int_eq(verify(teeny_sample_vector_add(&arena, TEENY_DT_F16, 256)), 0);
  ck_assert_int_eq(verify(teeny_sample_softmax(&arena, 128)), 0);
  ck_assert_int_eq(verify(teeny_sample_row_sum_loop(&arena, 64)), 0);
  ck_assert_int_eq(verify(teeny_sample_matmul(&arena, TEENY_DT_F16, 32, 32, 16)), 0);
  ck_assert_uint_eq(diags.n, 0);
}
END_TEST

START_TEST(type_strings) {
  int s[2] = {64, 32};
  teeny_type t = teeny__type_with_shape(teeny__type_ptr(TEENY_DT_F16), 2, s);
  ck_assert_str_eq(teeny__type_str(&arena, t), "tile(ptr(f16))[64, 32]");
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__type_print_mlir(&b, t);
  teeny__buf_putc(&b, ' ');
  teeny__type_print_mlir(&b, teeny__type_scalar(TEENY_DT_U32));
  teeny__buf_putc(&b, ' ');
  teeny__type_print_mlir(&b, teeny__type_tile(TEENY_DT_BOOL, 1, s));
  ck_assert_str_eq(b.p, "tensor<64x32x!tt.ptr<f16>> i32 tensor<64xi1>");
  teeny__buf_free(&b);
  ck_assert_int_eq(teeny__type_numel(t), 2048);
}
END_TEST

START_TEST(mismatched_operands_rejected) {
  teeny_ir_func *f = teeny__ir_func_new(&arena, "k");
  int n = 8;
  teeny_type ti = teeny__type_tile(TEENY_DT_I32, 1, &n);
  teeny_type tf = teeny__type_tile(TEENY_DT_F32, 1, &n);
  teeny_scalar z = {0};
  int a = teeny__ir_const(f, f->body, (teeny_loc){3, 4}, ti, z);
  int b = teeny__ir_const(f, f->body, (teeny_loc){3, 4}, tf, z);
  teeny__ir_binary(f, f->body, IR_ADD, (teeny_loc){3, 7}, a, b, ti);
  teeny__ir_op_add(f, f->body, IR_RETURN, (teeny_loc){0, 0}, NULL, 0, NULL, 0);
  ck_assert_int_eq(verify(f), TEENY_E_INTERNAL);
  ck_assert_uint_ge(diags.n, 1);
  ck_assert_int_eq(diags.v[0].line, 3);
  ck_assert_int_eq(diags.v[0].col, 7);
  ck_assert(strstr(diags.v[0].message, "'add'") != NULL);
}
END_TEST

START_TEST(non_power_of_two_rejected) {
  teeny_ir_func *f = teeny__ir_func_new(&arena, "k");
  int n = 12;
  teeny_scalar z = {0};
  teeny__ir_const(f, f->body, (teeny_loc){1, 1}, teeny__type_tile(TEENY_DT_I32, 1, &n), z);
  teeny__ir_op_add(f, f->body, IR_RETURN, (teeny_loc){0, 0}, NULL, 0, NULL, 0);
  ck_assert_int_eq(verify(f), TEENY_E_INTERNAL);
}
END_TEST

START_TEST(value_out_of_scope_rejected) {
  /* a value defined inside a for body used after the loop */
  teeny_ir_func *f = teeny__ir_func_new(&arena, "k");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  teeny_scalar one = {.i = 1};
  int c = teeny__ir_const(f, f->body, (teeny_loc){1, 1}, i32, one);
  teeny_op *loop = teeny__ir_op_add(f, f->body, IR_FOR, (teeny_loc){2, 1},
                                    (int[]){c, c, c}, 3, NULL, 0);
  teeny_region *body = teeny__ir_region_new(f);
  teeny__ir_region_arg_add(f, body, i32);
  int inner = teeny__ir_binary(f, body, IR_ADD, (teeny_loc){3, 1}, c, c, i32);
  teeny__ir_op_add(f, body, IR_YIELD, (teeny_loc){3, 1}, NULL, 0, NULL, 0);
  loop->regions[0] = body;
  loop->nregions = 1;
  ck_assert_int_eq(verify(f), TEENY_E_INTERNAL); /* no return yet */
  teeny_diags_close(&diags);
  teeny__ir_binary(f, f->body, IR_ADD, (teeny_loc){4, 1}, inner, c, i32);
  teeny__ir_op_add(f, f->body, IR_RETURN, (teeny_loc){0, 0}, NULL, 0, NULL, 0);
  ck_assert_int_eq(verify(f), TEENY_E_INTERNAL);
  ck_assert(strstr(diags.v[0].message, "not visible") != NULL);
  ck_assert_int_eq(diags.v[0].line, 4);
}
END_TEST

START_TEST(missing_yield_rejected) {
  teeny_ir_func *f = teeny__ir_func_new(&arena, "k");
  teeny_type b1 = teeny__type_scalar(TEENY_DT_BOOL);
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  teeny_scalar t = {.i = 1};
  int c = teeny__ir_const(f, f->body, (teeny_loc){1, 1}, b1, t);
  teeny_op *iff = teeny__ir_op_add(f, f->body, IR_IF, (teeny_loc){2, 1}, &c, 1, &i32, 1);
  iff->regions[0] = teeny__ir_region_new(f);
  iff->regions[1] = teeny__ir_region_new(f);
  iff->nregions = 2;
  int v = teeny__ir_const(f, iff->regions[0], (teeny_loc){3, 1}, i32, t);
  teeny__ir_op_add(f, iff->regions[0], IR_YIELD, (teeny_loc){3, 1}, &v, 1, NULL, 0);
  teeny__ir_op_add(f, f->body, IR_RETURN, (teeny_loc){0, 0}, NULL, 0, NULL, 0);
  ck_assert_int_eq(verify(f), TEENY_E_INTERNAL); /* else has no yield */
  ck_assert(strstr(diags.v[0].message, "yield") != NULL);
}
END_TEST

START_TEST(op_limit_enforced) {
  teeny_ir_func *f = teeny__ir_func_new(&arena, "k");
  f->nops = TEENY_MAX_IR_OPS;
  teeny_scalar z = {0};
  ck_assert_int_eq(teeny__ir_const(f, f->body, (teeny_loc){1, 1},
                                   teeny__type_scalar(TEENY_DT_I32), z), -1);
}
END_TEST

START_TEST(dump_is_readable) {
  teeny_ir_func *f = teeny_sample_row_sum_loop(&arena, 64);
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__ir_dump(&b, f);
  ck_assert(strstr(b.p, "func row_sum_entry_point(") != NULL);
  ck_assert(strstr(b.p, "= for ") != NULL);
  ck_assert(strstr(b.p, "reduce") != NULL);
  ck_assert(strstr(b.p, "make_range [0, 64)") != NULL);
  teeny__buf_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("all");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, samples_verify);
  tcase_add_test(tc, type_strings);
  tcase_add_test(tc, mismatched_operands_rejected);
  tcase_add_test(tc, non_power_of_two_rejected);
  tcase_add_test(tc, value_out_of_scope_rejected);
  tcase_add_test(tc, missing_yield_rejected);
  tcase_add_test(tc, op_limit_enforced);
  tcase_add_test(tc, dump_is_readable);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
