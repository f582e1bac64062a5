/*
 * tests/unit/test_codegen.c — the NVPTX code generator: every case of
 * test_codegen_cases.c compiles for sm_90a and sm_80 with 1, 4 and 8
 * warps, and the PTX has the shape the design promises (kernel entry,
 * .reqntid, 128-bit vector accesses, shuffles in reductions, mma for dot).
 * ptxas itself runs in test_codegen_ptxas.c.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_codegen.h"

static teeny_arena arena;

static void setup(void) { teeny__arena_init(&arena); }
static void teardown(void) { teeny__arena_free(&arena); }

static char *compile(teeny_ir_func *f, const char *target, int nw) {
  teeny_buf err;
  teeny__buf_init(&err);
  char *ptx = teeny_cg_compile(f, target, nw, &err);
  if (!ptx)
    ck_abort_msg("%s", err.p ? err.p : "compile failed");
  teeny__buf_free(&err);
  return ptx;
}

static void expect(const char *ptx, const char *what, const char *name) {
  ck_assert_msg(strstr(ptx, what) != NULL, "%s: PTX has no '%s'", name, what);
}

START_TEST(all_cases_compile) {
  static const char *targets[] = {"sm_90a", "sm_80"};
  static const int warps[] = {1, 4, 8};
  teeny_cg_case cases[256];
  int n = teeny_cg_cases(&arena, cases, 256);
  ck_assert_int_gt(n, 0);
  for (int i = 0; i < n; i++)
    for (int t = 0; t < 2; t++)
      for (int w = 0; w < 3; w++) {
        if (warps[w] < cases[i].min_warps)
          continue;
        char *ptx = compile(cases[i].f, targets[t], warps[w]);
        char want[256];
        snprintf(want, sizeof want, ".entry %s", cases[i].f->name);
        expect(ptx, want, cases[i].name);
        snprintf(want, sizeof want, ".reqntid %d", 32 * warps[w]);
        expect(ptx, want, cases[i].name);
        snprintf(want, sizeof want, ".target %s", targets[t]);
        expect(ptx, want, cases[i].name);
        teeny__free(ptx);
      }
}
END_TEST

START_TEST(vector_add_is_vectorised) {
  char *ptx = compile(teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024), "sm_90a", 4);
  expect(ptx, "ld.global.nc.v4.f32", "vector_add f32");
  expect(ptx, "st.global.v4.f32", "vector_add f32");
  teeny__free(ptx);
  ptx = compile(teeny_sample_vector_add(&arena, TEENY_DT_F16, 1024), "sm_90a", 4);
  expect(ptx, "ld.global.nc.v4.b32", "vector_add f16");
  expect(ptx, "st.global.v4.b32", "vector_add f16");
  teeny__free(ptx);
}
END_TEST

START_TEST(softmax_uses_shuffles) {
  char *ptx = compile(teeny_sample_softmax(&arena, 1024), "sm_90a", 4);
  expect(ptx, "shfl.sync.bfly", "softmax");
  expect(ptx, "ex2.approx", "softmax");
  expect(ptx, "bar.sync", "softmax");
  teeny__free(ptx);
}
END_TEST

START_TEST(matmul_uses_mma) {
  /* sm_90a: wgmma from swizzled shared-memory descriptors, published to the
   * async proxy; sm_90 and sm_80: mma.sync with ldmatrix */
  char *ptx = compile(teeny_sample_matmul(&arena, TEENY_DT_F16, 64, 64, 64), "sm_90a", 4);
  expect(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "matmul f16 sm_90a");
  expect(ptx, "wgmma.fence.sync.aligned", "matmul f16 sm_90a");
  expect(ptx, "wgmma.wait_group.sync.aligned 0", "matmul f16 sm_90a");
  expect(ptx, "fence.proxy.async.shared::cta", "matmul f16 sm_90a");
  teeny__free(ptx);
  ptx = compile(teeny_sample_matmul(&arena, TEENY_DT_BF16, 128, 256, 64), "sm_90a", 8);
  expect(ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "matmul bf16 sm_90a");
  teeny__free(ptx);
  ptx = compile(teeny_sample_matmul(&arena, TEENY_DT_F16, 64, 64, 64), "sm_90", 4);
  expect(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "matmul f16 sm_90");
  ck_assert_msg(strstr(ptx, "wgmma") == NULL, "sm_90 PTX has wgmma");
  teeny__free(ptx);
  /* BLOCK_K 32 (64-byte rows of A): mma.sync on sm_90a too, for now */
  ptx = compile(teeny_sample_matmul(&arena, TEENY_DT_F16, 64, 64, 32), "sm_90a", 4);
  expect(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "matmul f16 k32 sm_90a");
  ck_assert_msg(strstr(ptx, "wgmma") == NULL, "BLOCK_K 32 PTX has wgmma");
  teeny__free(ptx);
  ptx = compile(teeny_sample_matmul(&arena, TEENY_DT_F16, 64, 64, 32), "sm_80", 4);
  expect(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "matmul f16 sm_80");
  teeny__free(ptx);
  ptx = compile(teeny_sample_matmul(&arena, TEENY_DT_F32, 32, 32, 16), "sm_80", 4);
  expect(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "matmul f32");
  teeny__free(ptx);
}
END_TEST

/* Compiles share nothing: four threads compiling at once get exactly the
 * PTX a lone compile gets. */
typedef struct job {
  teeny_ir_func *f;   /* kernel */
  const char *want;   /* PTX of a lone compile */
  int same;           /* runs that matched */
} job;

static void *compile_job(void *arg) {
  job *j = arg;
  for (int r = 0; r < 3; r++) {
    teeny_buf err;
    teeny__buf_init(&err);
    char *ptx = teeny_cg_compile(j->f, "sm_90a", 4, &err);
    j->same += ptx && strcmp(ptx, j->want) == 0;
    teeny__free(ptx);
    teeny__buf_free(&err);
  }
  return NULL;
}

START_TEST(concurrent_compiles_agree) {
  teeny_ir_func *fs[4] = {teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024),
                          teeny_sample_softmax(&arena, 1024),
                          teeny_sample_row_sum_loop(&arena, 256),
                          teeny_sample_matmul(&arena, TEENY_DT_F16, 64, 64, 32)};
  job jobs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i].f = fs[i];
    jobs[i].want = compile(fs[i], "sm_90a", 4);
    jobs[i].same = 0;
  }
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, compile_job, &jobs[i]), 0);
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(jobs[i].same, 3);
    teeny__free((char *)jobs[i].want);
  }
}
END_TEST

/* Unsupported requests are diagnosed, never crash. */
START_TEST(limits_are_diagnosed) {
  teeny_arena a;
  teeny_diags d;
  teeny__arena_init(&a);
  teeny_diags_init(&d);
  teeny_ctx cx = {.arena = &a, .file = "<ir>", .diags = &d};
  teeny_codegen_out out;
  teeny_codegen_opts bad_target = {"sm_70", 4, 0};
  teeny_ir_func *f = teeny_sample_vector_add(&arena, TEENY_DT_F32, 1024);
  ck_assert_int_eq(teeny__codegen_ptx(&cx, f, &bad_target, &out), TEENY_E_UNSUPPORTED);
  ck_assert_ptr_null(out.ptx);
  teeny_codegen_opts bad_warps = {"sm_90a", 3, 0};
  ck_assert_int_eq(teeny__codegen_ptx(&cx, f, &bad_warps, &out), TEENY_E_UNSUPPORTED);
  /* a [1024 x 1024] tile with one warp: 32768 values per thread */
  teeny_codegen_opts one = {"sm_90a", 1, 0};
  teeny_ir_func *big = teeny_sample_matmul(&arena, TEENY_DT_F16, 1024, 1024, 16);
  ck_assert_int_eq(teeny__codegen_ptx(&cx, big, &one, &out), TEENY_E_UNSUPPORTED);
  ck_assert_uint_ge(d.n, 3);
  ck_assert(strstr(d.v[d.n - 1].message, "values per thread") != NULL);
  ck_assert_int_eq(d.v[d.n - 1].line, 1); /* the op's location */
  teeny_diags_close(&d);
  teeny__arena_free(&a);
}
END_TEST

START_TEST(version_is_llvms) {
  const char *v = teeny__codegen_llvm_version();
  int maj = 0, min = 0, pat = 0;
  ck_assert_int_eq(sscanf(v, "%d.%d.%d", &maj, &min, &pat), 3);
  ck_assert_int_eq(maj, 19);
}
END_TEST

/* The emulation runs in EMU_SHARDS slices (case i in slice i % EMU_SHARDS),
 * so that each stays within the test timeout in a sanitizer build. */
#define EMU_SHARDS 6

START_TEST(emulation_matches_interpreter) {
  static const int warps[] = {1, 4, 8};
  teeny_cg_case cases[256];
  int n = teeny_cg_cases(&arena, cases, 256);
  teeny_buf err;
  teeny__buf_init(&err);
  int failed = 0;
  const char *only = getenv("TEENY_CG_ONLY"); /* a name part: run just those cases */
  for (int i = _i; i < n; i += EMU_SHARDS)
    for (int w = 0; w < 3; w++) {
      if ((only && !strstr(cases[i].name, only)) || warps[w] < cases[i].min_warps)
        continue;
      failed += teeny_cg_check(&cases[i], "sm_90a", warps[w], &err) != 0;
      /* dots also through mma.sync (sm_90a takes wgmma with 4+ warps) */
      if (strncmp(cases[i].name, "dot_", 4) == 0 || strncmp(cases[i].name, "matmul", 6) == 0)
        failed += teeny_cg_check(&cases[i], "sm_80", warps[w], &err) != 0;
    }
  if (failed)
    fputs(err.p ? err.p : "", stderr);
  ck_assert_msg(failed == 0, "%d emulated runs differ from the interpreter (details above)",
                failed);
  teeny__buf_free(&err);
}
END_TEST

/* cfg.c's check on PTX of known shapes: a loop entered past its header
 * (the shape LLVM's jump threading made of a spin lock after a thread-0
 * atomic) is found and named; natural loops, nested loops, diamonds,
 * guarded returns, inline asm braces and vector operands are not taken
 * for one; an indirect branch is "not known". */
static int reducible(const char *body, char *why) {
  char ptx[2048];
  snprintf(ptx, sizeof ptx,
           ".version 8.0\n.target sm_90a\n.address_size 64\n"
           ".extern .func (.param .b32 func_retval0) vprintf\n(\n.param .b64 p0\n)\n;\n"
           ".global .align 1 .b8 fmt[3] = {37, 100, 0};\n"
           ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n%s}\n", body);
  return teeny__ptx_check_reducible(ptx, why, 200);
}

START_TEST(ptx_loops_with_two_entries_are_found) {
  char why[200];
  /* entry -> L2 (header) or straight to L4 (inside the loop) */
  const char *two_entries =
      "\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L__BB0_4;\n"
      "$L__BB0_2:\n\t@%p9 bra $L__BB0_3;\n\tbra.uni $L__BB0_4;\n"
      "$L__BB0_3:\n\t// begin inline asm\n\t{ atom.acquire.sys.global.cas.b32 %r65, [%rd16], %r13, %r14; }\n"
      "\t// end inline asm\n"
      "$L__BB0_4:\n\tbar.sync 0;\n\tld.shared.v4.u32 {%r37, %r38, %r39, %r40}, [%r36];\n"
      "\t@%p4 bra $L__BB0_2;\n\tret;\n";
  ck_assert_int_eq(reducible(two_entries, why), 1);
  ck_assert_msg(strstr(why, "$L__BB0_4") != NULL, "why: %s", why);
  /* the same loop entered through its header only */
  const char *one_entry =
      "\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L__BB0_2;\n\tmov.u32 %r2, 1;\n"
      "$L__BB0_2:\n\t@%p9 bra $L__BB0_3;\n\tbra.uni $L__BB0_4;\n"
      "$L__BB0_3:\n\tatom.global.add.u32 %r6, [%rd1], 1;\n"
      "$L__BB0_4:\n\tbar.sync 0;\n\t@%p4 bra $L__BB0_2;\n\tret;\n";
  ck_assert_int_eq(reducible(one_entry, why), 0);
  /* nested loops, a diamond, a guarded return and a statement over lines */
  const char *nested =
      "$L__BB0_1:\n\tmov.u32 %r1, 0;\n"
      "$L__BB0_2:\n\tadd.s32 %r1, %r1, 1;\n\t@%p1 bra $L__BB0_2;\n"
      "\t@%p2 bra $L__BB0_4;\n\tmov.u32 %r3, 2;\n\tbra.uni $L__BB0_5;\n"
      "$L__BB0_4:\n\tmov.u32 %r3, 3;\n"
      "$L__BB0_5:\n\t@%p3 ret;\n\tcall.uni (retval0),\n\tvprintf,\n\t(\n\tparam0\n\t);\n"
      "\t@%p4 bra $L__BB0_1;\n\tret;\n";
  ck_assert_int_eq(reducible(nested, why), 0);
  /* the irreducible shape in a second function is found too */
  char two[1024];
  snprintf(two, sizeof two, "\tret;\n}\n.func f()\n{\n%s", two_entries);
  ck_assert_int_eq(reducible(two, why), 1);
  ck_assert_int_eq(reducible("\tbrx.idx %r1, $L_tab;\n\tret;\n", why), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("codegen");
  TCase *tc = tcase_create("all");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, all_cases_compile);
  tcase_add_test(tc, vector_add_is_vectorised);
  tcase_add_test(tc, softmax_uses_shuffles);
  tcase_add_test(tc, matmul_uses_mma);
  tcase_add_loop_test(tc, emulation_matches_interpreter, 0, EMU_SHARDS);
  tcase_add_test(tc, limits_are_diagnosed);
  tcase_add_test(tc, version_is_llvms);
  tcase_add_test(tc, concurrent_compiles_agree);
  tcase_add_test(tc, ptx_loops_with_two_entries_are_found);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
