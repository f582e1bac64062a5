/*
 * tests/unit/test_mlir.c — the MLIR printer (dsl/ir/mlir.c): each sample of
 * tests/ir_samples.c and test_mlir_samples.c prints the Triton-dialect ops,
 * generic-form properties, constants and signed/unsigned variants that
 * Triton's parser and mlir-opt expect.  test_mlir_opt.c runs the same text
 * through mlir-opt-19.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_samples.h"

teeny_ir_func *teeny_test_mlir_sample(teeny_arena *a, int i, const char **name);
teeny_ir_func *teeny_test_mlir_arith(teeny_arena *a, teeny_dtype dt);

static teeny_arena arena;
static teeny_diags diags;
static teeny_ctx cx;
static teeny_buf text;

static void setup(void) {
  teeny__arena_init(&arena);
  teeny_diags_init(&diags);
  memset(&cx, 0, sizeof cx);
  cx.arena = &arena;
  cx.file = "<ir>";
  cx.diags = &diags;
  teeny__buf_init(&text);
}

static void teardown(void) {
  teeny__buf_free(&text);
  teeny_diags_close(&diags);
  teeny__arena_free(&arena);
}

/* Verify f (a broken sample would make every check below meaningless) and
 * print it into `text`. */
static const char *print(teeny_ir_func *f) {
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(teeny__ir_verify(&cx, f), 0);
  teeny__buf_free(&text);
  teeny__mlir_print(&text, f);
  ck_assert(!text.oom);
  ck_assert_ptr_nonnull(text.p);
  return text.p;
}

/* Each of the NULL-terminated strings occurs in text. */
static void has(const char *first, ...) {
  va_list ap;
  va_start(ap, first);
  for (const char *s = first; s; s = va_arg(ap, const char *)) {
    if (!strstr(text.p, s))
      fprintf(stderr, "%s", text.p); /* check's messages are too short for it */
    ck_assert_msg(strstr(text.p, s) != NULL, "missing \"%s\" (text above)", s);
  }
  va_end(ap);
}

static void lacks(const char *s) {
  if (strstr(text.p, s))
    fprintf(stderr, "%s", text.p);
  ck_assert_msg(strstr(text.p, s) == NULL, "unexpected \"%s\" (text above)", s);
}

static int count(const char *s) {
  int n = 0;
  for (const char *p = strstr(text.p, s); p; p = strstr(p + 1, s))
    n++;
  return n;
}

START_TEST(vector_add_module) {
  print(teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024));
  has("module {\n  \"tt.func\"() <{arg_attrs = [{tt.divisibility = 16 : i32}, "
      "{tt.divisibility = 16 : i32}, {tt.divisibility = 16 : i32}, {}], "
      "function_type = (!tt.ptr<f32>, !tt.ptr<f32>, !tt.ptr<f32>, i32) -> (), "
      "sym_name = \"vector_add_entry_point\", sym_visibility = \"public\"}> ({\n",
      "  ^bb0(%arg0: !tt.ptr<f32>, %arg1: !tt.ptr<f32>, %arg2: !tt.ptr<f32>, %arg3: i32):\n",
      "\"tt.get_program_id\"() <{axis = 0 : i32}> : () -> i32",
      "arith.constant 1024 : i32",
      "arith.muli %4, %5 : i32",
      "\"tt.make_range\"() <{end = 1024 : i32, start = 0 : i32}> : () -> tensor<1024xi32>",
      "\"tt.splat\"(%arg3) : (i32) -> tensor<1024xi32>",
      "arith.cmpi slt, ",
      "\"tt.addptr\"(", ": (tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tt.ptr<f32>>",
      "arith.constant dense<0.0e+00> : tensor<1024xf32>",
      "<{boundaryCheck = array<i32>, cache = 1 : i32, evict = 1 : i32, isVolatile = false, "
      "operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1024x!tt.ptr<f32>>, "
      "tensor<1024xi1>, tensor<1024xf32>) -> tensor<1024xf32>",
      "arith.addf ",
      "\"tt.store\"(", "<{boundaryCheck = array<i32>, cache = 1 : i32, evict = 1 : i32}> : "
      "(tensor<1024x!tt.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()",
      "    \"tt.return\"() : () -> ()\n  }) : () -> ()\n}\n", NULL);
  lacks("loc(");
  ck_assert_int_eq(count("\"tt.load\""), 2);
}
END_TEST

START_TEST(vector_add_f16_types) {
  print(teeny_sample_vector_add(&arena, TEENY_DT_F16, 256));
  has("(!tt.ptr<f16>, !tt.ptr<f16>, !tt.ptr<f16>, i32) -> ()",
      "arith.constant dense<0.0e+00> : tensor<256xf16>", "arith.addf", NULL);
}
END_TEST

START_TEST(softmax_reduce_and_neg_inf) {
  print(teeny_sample_softmax(&arena, 128));
  has("arith.constant dense<0xFF800000> : tensor<128xf32>",
      "\"tt.reduce\"(", ") <{axis = 0 : i32}> ({\n",
      "arith.maxnumf ", "\"tt.reduce.return\"(", ") : (f32) -> ()\n",
      "}) : (tensor<128xf32>) -> f32",
      "\"tt.addptr\"(%arg0, %", ": (!tt.ptr<f32>, i32) -> !tt.ptr<f32>",
      "symbol = \"__nv_expf\"", "\"tt.precise_divf\"(", "arith.subf ", NULL);
  ck_assert_int_eq(count("\"tt.reduce\""), 2);
  /* block arguments of the combine region, one level deeper than the op */
  ck_assert_ptr_nonnull(strstr(text.p, "    ^bb0(%"));
}
END_TEST

START_TEST(row_sum_for_loop) {
  print(teeny_sample_row_sum_loop(&arena, 64));
  has("= scf.for %", " iter_args(%", ") -> (tensor<64xf32>) : i32 {\n",
      "      scf.yield %", " : tensor<64xf32>\n    }\n",
      "<{boundaryCheck = array<i32>, cache = 1 : i32, evict = 1 : i32, isVolatile = false, "
      "operandSegmentSizes = array<i32: 1, 1, 0>}>",
      "\"tt.store\"(", ": (!tt.ptr<f32>, f32) -> ()", NULL);
}
END_TEST

START_TEST(matmul_dot) {
  print(teeny_sample_matmul(&arena, TEENY_DT_F16, 32, 32, 16));
  has("\"tt.dot\"(", "<{inputPrecision = 0 : i32, maxNumImpreciseAcc = 0 : i32}> : "
      "(tensor<32x16xf16>, tensor<16x32xf16>, tensor<32x32xf32>) -> tensor<32x32xf32>",
      "\"tt.expand_dims\"(", "<{axis = 1 : i32}> : (tensor<32xi32>) -> tensor<32x1xi32>",
      "<{axis = 0 : i32}> : (tensor<16xi32>) -> tensor<1x16xi32>",
      "\"tt.broadcast\"(", ": (tensor<32x1xi32>) -> tensor<32x16xi32>",
      "arith.andi ", "tensor<32x16xi1>", "arith.constant dense<0.0e+00> : tensor<32x32xf32>",
      "\"tt.get_program_id\"() <{axis = 1 : i32}>", NULL);
}
END_TEST

/* The same kernel over i32 and u32: every op with a signedness picks it. */
START_TEST(signed_vs_unsigned_ops) {
  static const char *const sg[] = {"arith.divsi ", "arith.remsi ", "arith.shrsi ",
                                   "arith.minsi ", "arith.maxsi ", "arith.cmpi slt",
                                   "arith.cmpi sge", "arith.extsi ", "arith.sitofp ",
                                   "arith.fptosi "};
  static const char *const us[] = {"arith.divui ", "arith.remui ", "arith.shrui ",
                                   "arith.minui ", "arith.maxui ", "arith.cmpi ult",
                                   "arith.cmpi uge", "arith.extui ", "arith.uitofp ",
                                   "arith.fptoui "};
  print(teeny_test_mlir_arith(&arena, TEENY_DT_I32));
  for (size_t i = 0; i < TEENY_ARRAY_LEN(sg); i++) {
    has(sg[i], NULL);
    lacks(us[i]);
  }
  has("arith.shli ", "arith.trunci ", "tensor<64xi32> to tensor<64xi64>", NULL);
  print(teeny_test_mlir_arith(&arena, TEENY_DT_U32));
  for (size_t i = 0; i < TEENY_ARRAY_LEN(us); i++) {
    has(us[i], NULL);
    lacks(sg[i]);
  }
  /* u32 is i32 in MLIR: the types do not change, only the ops */
  has("function_type = (!tt.ptr<i32>, !tt.ptr<i32>, i32) -> ()", NULL);
  lacks("u32>");
}
END_TEST

START_TEST(every_cast) {
  print(teeny_test_mlir_sample(&arena, 8, &(const char *){NULL}));
  has("arith.fptosi %", " : tensor<32xf32> to tensor<32xi32>",
      "arith.fptoui %", " : tensor<32xf32> to tensor<32xi8>",
      "arith.cmpf une, %", "arith.cmpi ne, %",
      "arith.extui %", " : tensor<32xi1> to tensor<32xi32>",
      "arith.uitofp %", " : tensor<32xi1> to tensor<32xf32>",
      "arith.trunci %", " : tensor<32xi32> to tensor<32xi8>",
      "arith.extsi %", " : tensor<32xi8> to tensor<32xi64>",
      " : tensor<32xi8> to tensor<32xi64>", /* u8 -> u64 is extui */
      "arith.bitcast %", " : tensor<32xi32> to tensor<32xi32>",
      "arith.truncf %", " : tensor<32xf32> to tensor<32xf16>",
      " : tensor<32xf16> to tensor<32xf32>", " : tensor<32xf32> to tensor<32xbf16>",
      "arith.extf %", " : tensor<32xbf16> to tensor<32xf64>",
      "arith.sitofp %", " : tensor<32xi64> to tensor<32xf32>",
      "arith.uitofp %", " : tensor<32xi64> to tensor<32xf32>", NULL);
  ck_assert_ptr_nonnull(strstr(text.p, "arith.extui %"));
}
END_TEST

START_TEST(math_neg_not_constants) {
  print(teeny_test_mlir_sample(&arena, 9, &(const char *){NULL}));
  /* the accurate exp, log, log2, sin, cos and tanh are libdevice's: Triton
   * lowers math.exp and math.log to hardware approximations */
  static const char *const math[] = {"symbol = \"__nv_expf\"", "math.exp2 ",
                                     "symbol = \"__nv_logf\"", "symbol = \"__nv_log2f\"",
                                     "math.sqrt ", "math.rsqrt ", "symbol = \"__nv_sinf\"",
                                     "symbol = \"__nv_cosf\"",
                                     "math.erf ", "math.floor ", "math.ceil ",
                                     "math.absf ", "math.fma ",
                                     "arith.minnumf ", "arith.maxnumf ", "arith.remf ",
                                     "math.absi "};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(math); i++)
    has(math[i], NULL);
  /* Triton 3.6 lowers neither math.tanh nor arith.negf */
  lacks("math.tanh");
  lacks("math.exp ");
  lacks("math.log ");
  lacks("arith.negf");
  has("\"tt.extern_elementwise\"(%", "<{libname = \"\", libpath = \"\", pure = true, "
      "symbol = \"__nv_tanhf\"}> : (tensor<128xf32>) -> tensor<128xf32>",
      "= arith.constant dense<-0.0e+00> : tensor<128xf32>\n", "arith.subf %t", NULL);
  /* int negation is 0 - x, NOT is xor with all ones (true for bool) */
  has("= arith.constant dense<0> : tensor<128xi32>\n",
      "= arith.constant dense<-1> : tensor<128xi32>\n",
      "= arith.constant dense<true> : tensor<128xi1>\n", "arith.subi %t", NULL);
  /* constants are exact: hex for inf/nan, signed bits for ints */
  has("arith.constant dense<0xFC00> : tensor<128xf16>",
      "arith.constant 0x7FC00000 : f32", "arith.constant dense<1.0e-01> : tensor<128xf32>",
      "arith.constant 1.0e+300 : f64", "arith.constant -1 : i8",
      "arith.constant -9223372036854775808 : i64", "arith.constant 1.5e+00 : bf16",
      "arith.constant dense<-7> : tensor<128xi32>",
      "arith.constant dense<false> : tensor<128xi1>", NULL);
}
END_TEST

/* f16/bf16 transcendentals and division go through f32; the rest stays. */
START_TEST(half_math_in_f32) {
  print(teeny_test_mlir_sample(&arena, 12, &(const char *){NULL}));
  has("arith.extf %", " : tensor<256xf16> to tensor<256xf32>\n",
      "symbol = \"__nv_expf\"}> : (tensor<256xf32>)", " : tensor<256xf32>\n",
      "symbol = \"__nv_tanhf\"}> : (tensor<256xf32>)",
      "math.sqrt %t", "\"tt.precise_divf\"(%t", "arith.truncf %t", " : tensor<256xf32> to tensor<256xf16>\n",
      "arith.constant dense<-0.0e+00> : tensor<256xf16>", "arith.subf %t",
      "math.floor %", "math.absf %", "arith.remf %", " : tensor<256xf16>\n", NULL);
  ck_assert_int_eq(count("arith.truncf"), 4); /* exp, tanh, sqrt, div */
  print(teeny_test_mlir_sample(&arena, 13, &(const char *){NULL}));
  has(" : tensor<256xbf16> to tensor<256xf32>\n", " : tensor<256xf32> to tensor<256xbf16>\n",
      NULL);
}
END_TEST

START_TEST(control_flow) {
  print(teeny_test_mlir_sample(&arena, 10, &(const char *){NULL}));
  has(" = scf.if %", " -> (f32) {\n", "} else {\n", "scf.yield %", " : f32\n",
      " = scf.while (%", ") : (i32, tensor<512xf32>) -> (i32, tensor<512xf32>) {\n",
      "scf.condition(%", ") %", " : i32, tensor<512xf32>\n", "} do {\n",
      "\"tt.scan\"(", "<{axis = 0 : i32, reverse = false}> ({\n", "\"tt.scan.return\"(",
      "}) : (tensor<512xf32>) -> tensor<512xf32>",
      "}) : (tensor<512xf32>, tensor<512xi32>) -> (f32, i32)",
      "\"tt.reduce.return\"(", ") : (f32, i32) -> ()",
      "arith.select %", " : f32\n",
      "\"tt.reshape\"(", ": (tensor<512xf32>) -> tensor<16x32xf32>",
      "\"tt.trans\"(", "<{order = array<i32: 1, 0>}> : (tensor<16x32xf32>) -> tensor<32x16xf32>",
      "\"tt.get_num_programs\"() <{axis = 1 : i32}> : () -> i32", NULL);
  /* both results of the while are named, and the after-block has its header */
  ck_assert_ptr_nonnull(strstr(text.p, "} do {\n    ^bb0(%"));
}
END_TEST

START_TEST(atomics) {
  print(teeny_test_mlir_sample(&arena, 11, &(const char *){NULL}));
  has("\"tt.atomic_rmw\"(", "<{atomic_rmw_op = 5 : i32, scope = 1 : i32, sem = 4 : i32}> : "
      "(tensor<128x!tt.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>",
      "<{atomic_rmw_op = 4 : i32, scope = 1 : i32, sem = 4 : i32}> : (!tt.ptr<i32>, i32) -> i32",
      "<{atomic_rmw_op = 7 : i32,", "<{atomic_rmw_op = 10 : i32,",
      "<{atomic_rmw_op = 8 : i32, scope = 1 : i32, sem = 4 : i32}> : (!tt.ptr<i32>, i32) -> i32",
      /* float max: signed max where >= 0, unsigned min where < 0 */
      "\"tt.bitcast\"(%", ": (tensor<128x!tt.ptr<f32>>) -> tensor<128x!tt.ptr<i32>>",
      ": (tensor<128xf32>) -> tensor<128xi32>", "arith.cmpi sge, %t", "arith.cmpi slt, %t",
      "<{atomic_rmw_op = 6 : i32,", "<{atomic_rmw_op = 9 : i32,",
      ": (tensor<128xi32>) -> tensor<128xf32>",
      "\"tt.atomic_cas\"(%arg1, %", "<{scope = 1 : i32, sem = 4 : i32}> : "
      "(!tt.ptr<i32>, i32, i32) -> i32",
      "\"tt.ptr_to_int\"(%arg0) : (!tt.ptr<f32>) -> i64", "arith.cmpi eq, %t",
      "arith.constant 0 : i64", "\"tt.int_to_ptr\"(%t", ": (i64) -> !tt.ptr<f32>",
      "arith.select %", " : !tt.ptr<f32>", NULL);
}
END_TEST

START_TEST(locations_when_asked) {
  teeny_ir_func *f = teeny_sample_vector_add(&arena, TEENY_DT_F32, 64);
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__mlir_print_loc(&b, f, "k\"\\.c");
  ck_assert_ptr_nonnull(strstr(b.p, "\"tt.get_program_id\"() <{axis = 0 : i32}> : () -> i32 "
                                    "loc(\"k\\\"\\\\.c\":1:1)\n"));
  ck_assert_ptr_nonnull(strstr(b.p, "\"tt.return\"() : () -> () loc("));
  teeny__buf_free(&b);
  /* sample ops sit at 7:3 */
  teeny__buf_init(&b);
  teeny__mlir_print_loc(&b, teeny_test_mlir_sample(&arena, 10, &(const char *){NULL}), "c.c");
  ck_assert_ptr_nonnull(strstr(b.p, "} loc(\"c.c\":7:3)\n"));  /* after scf.if */
  ck_assert_ptr_nonnull(strstr(b.p, "}) : (tensor<512xf32>) -> tensor<512xf32> loc(\"c.c\":7:3)\n"));
  teeny__buf_free(&b);
}
END_TEST

START_TEST(all_samples_print) {
  const char *name = NULL;
  for (int i = 0; teeny_test_mlir_sample(&arena, i, &name); i++) {
    print(teeny_test_mlir_sample(&arena, i, &name));
    lacks("\"teeny.");
    lacks("(null)");
    ck_assert_int_eq(count("{"), count("}"));
    ck_assert_int_eq(count("("), count(")"));
  }
  ck_assert_uint_eq(diags.n, 0);
}
END_TEST

/* Loops may carry more values than any fixed array would hold. */
START_TEST(many_carried_values) {
  enum { N = 100 };
  teeny_ir_func *f = teeny__ir_func_new(&arena, "carry");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  teeny_loc l = {2, 5};
  int args[N + 3];
  teeny_type rt[N];
  for (int i = 0; i < N + 3; i++)
    args[i] = teeny__ir_const(f, f->body, l, i32, (teeny_scalar){.i = i});
  for (int i = 0; i < N; i++)
    rt[i] = i32;
  teeny_op *loop = teeny__ir_op_add(f, f->body, IR_FOR, l, args, N + 3, rt, N);
  teeny_region *body = teeny__ir_region_new(f);
  int carried[N];
  teeny__ir_region_arg_add(f, body, i32);
  for (int i = 0; i < N; i++)
    carried[i] = teeny__ir_region_arg_add(f, body, i32);
  teeny__ir_op_add(f, body, IR_YIELD, l, carried, N, NULL, 0);
  loop->regions[0] = body;
  loop->nregions = 1;
  teeny__ir_op_add(f, f->body, IR_RETURN, l, NULL, 0, NULL, 0);
  print(f);
  has("%103, %104, ", ", %202 = scf.for %203 = %0 to %1 step %2 iter_args(%204 = %3, ",
      ", %303 = %102) -> (i32, ", "scf.yield %204, ", ", %303 : i32, ", NULL);
  /* (i32, ... results, the iv, the yield, the consts */
  ck_assert_int_eq(count(" i32"), (N - 1) + 1 + N + (N + 3));
}
END_TEST

START_TEST(empty_kernel) {
  teeny_ir_func *f = teeny__ir_func_new(&arena, "nothing");
  teeny__ir_op_add(f, f->body, IR_RETURN, (teeny_loc){0, 0}, NULL, 0, NULL, 0);
  print(f);
  ck_assert_str_eq(text.p, "module {\n  \"tt.func\"() <{function_type = () -> (), "
                           "sym_name = \"nothing\", sym_visibility = \"public\"}> ({\n"
                           "    \"tt.return\"() : () -> ()\n  }) : () -> ()\n}\n");
}
END_TEST

int main(void) {
  Suite *s = suite_create("mlir");
  TCase *tc = tcase_create("all");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, vector_add_module);
  tcase_add_test(tc, vector_add_f16_types);
  tcase_add_test(tc, softmax_reduce_and_neg_inf);
  tcase_add_test(tc, row_sum_for_loop);
  tcase_add_test(tc, matmul_dot);
  tcase_add_test(tc, signed_vs_unsigned_ops);
  tcase_add_test(tc, every_cast);
  tcase_add_test(tc, math_neg_not_constants);
  tcase_add_test(tc, half_math_in_f32);
  tcase_add_test(tc, control_flow);
  tcase_add_test(tc, atomics);
  tcase_add_test(tc, locations_when_asked);
  tcase_add_test(tc, all_samples_print);
  tcase_add_test(tc, many_carried_values);
  tcase_add_test(tc, empty_kernel);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
