/*
 * tests/diff/test_gen.c — unit tests of difffuzz's generator and its
 * helpers, through the front end and the interpreter only (no LLVM):
 * every kernel of seeds 1..200 is valid (spec, tile IR, and an
 * interpreter run without an error), generation is deterministic, --skip
 * is honoured, cases survive their text form, and the value facts and
 * element conversions behave at their edges.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/diff/gen.h"
#include "tests/diff/repro.h"
#include "tests/diff/run.h"

/* Spec, IR (MLIR emit) and an interpreter run; "" when all worked. */
static void validate(const dfz_case *c, char *why, size_t size) {
  why[0] = '\0';
  teeny_spec *s = dfz_case_spec(c, why, size);
  if (!s)
    return;
  teeny_artifact *a = NULL;
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_compile(s, TEENY_EMIT_MLIR, &a, &d);
  if (rc) {
    int off = snprintf(why, size, "IR: %s: ", teeny_strerror(rc));
    dfz_diags_text(&d, why + off, size - (size_t)off);
  } else {
    dfz_bufs b;
    teeny_interp_arg args[DFZ_MAX_PARAMS];
    teeny_diags_close(&d);
    teeny_diags_init(&d);
    ck_assert(dfz_bufs_make(c, false, &b));
    dfz_case_args(c, &b, args);
    rc = teeny_spec_interpret(s, c->grid, args, (size_t)c->nparams, &d);
    if (rc) {
      int off = snprintf(why, size, "interpreter: %s: ", teeny_strerror(rc));
      dfz_diags_text(&d, why + off, size - (size_t)off);
    }
    dfz_bufs_free(c, &b);
  }
  teeny_artifact_destroy(a);
  teeny_diags_close(&d);
  teeny_spec_destroy(s);
}

static int check_seeds(uint64_t first, uint64_t last, unsigned skip) {
  int bad = 0;
  dfz_gen_opts o = {skip, 0};
  for (uint64_t seed = first; seed <= last; seed++) {
    dfz_prog p;
    dfz_generate(seed, &o, &p);
    dfz_case c;
    memset(&c, 0, sizeof c);
    dfz_prog_case(&p, &c);
    char why[2048];
    validate(&c, why, sizeof why);
    if (why[0]) {
      if (bad < 5)
        fprintf(stderr, "seed %llu is not a valid kernel: %s\n%s\n", (unsigned long long)seed,
                why, c.source);
      bad++;
    }
    dfz_case_free(&c);
    dfz_prog_free(&p);
  }
  return bad;
}

START_TEST(seeds_are_valid_kernels) {
  int bad = check_seeds(1, 200, 0);
  ck_assert_msg(bad == 0, "%d of 200 generated kernels are invalid", bad);
}
END_TEST

START_TEST(seeds_are_valid_with_skips) {
  unsigned skip;
  ck_assert(dfz_feature_parse("order,uniform,math,2d", &skip, NULL));
  int bad = check_seeds(1000, 1060, skip);
  ck_assert_msg(bad == 0, "%d of 61 generated kernels are invalid", bad);
}
END_TEST

static char *case_text(uint64_t seed, unsigned skip) {
  dfz_gen_opts o = {skip, 0};
  dfz_prog p;
  dfz_generate(seed, &o, &p);
  dfz_case c;
  memset(&c, 0, sizeof c);
  dfz_prog_case(&p, &c);
  char *t = dfz_case_to_text(&c, NULL);
  dfz_case_free(&c);
  dfz_prog_free(&p);
  return t;
}

START_TEST(same_seed_same_kernel) {
  for (uint64_t seed = 1; seed <= 40; seed++) {
    char *a = case_text(seed, 0), *b = case_text(seed, 0);
    ck_assert_str_eq(a, b);
    char *c = case_text(seed + 1, 0);
    ck_assert_str_ne(a, c);
    free(a);
    free(b);
    free(c);
  }
}
END_TEST

START_TEST(skip_is_honoured) {
  unsigned skip;
  const char *bad = NULL;
  ck_assert(!dfz_feature_parse("order,nosuch", &skip, &bad));
  ck_assert_str_eq(bad, "nosuch");
  ck_assert(dfz_feature_parse("order,uniform,lock,atomic,atomic_shared,dot,dot_f32", &skip, NULL));
  for (uint64_t seed = 1; seed <= 150; seed++) {
    char *t = case_text(seed, skip);
    ck_assert_msg(!strstr(t, "atomic_"), "seed %llu has an atomic", (unsigned long long)seed);
    ck_assert_msg(!strstr(t, "dot("), "seed %llu has a dot", (unsigned long long)seed);
    ck_assert_msg(!strstr(t, " io"), "seed %llu has an ordering buffer", (unsigned long long)seed);
    free(t);
  }
}
END_TEST

/* The handoff chain (program p waits for p - 1) is run by every program:
 * its poll loop sits directly in the top-level `if (pid > 0)`, never in a
 * branch or a loop, and no early return comes before it (campaign seed
 * 42100464 put it in a branch on an atomic's old value: programs waited for
 * ever, a timeout). */
static void check_handoff(uint64_t seed, const char *t) {
  const char *poll = strstr(t, "while ((atomic_add((ready");
  if (!poll)
    return;
  const char *line = poll;
  while (line > t && line[-1] == ' ')
    line--;
  ck_assert_msg(poll - line == 8, "seed %llu: the handoff is nested:\n%s",
                (unsigned long long)seed, t);
  const char *ret = strstr(t, "return;");
  ck_assert_msg(!ret || ret > poll, "seed %llu: an early return before the handoff:\n%s",
                (unsigned long long)seed, t);
}

START_TEST(handoff_reached_by_every_program) {
  int found = 0;
  for (uint64_t seed = 1; seed <= 600; seed++) {
    char *t = case_text(seed, 0);
    found += strstr(t, "(ready") != NULL;
    check_handoff(seed, t);
    free(t);
  }
  char *t = case_text(42100464, 0);
  check_handoff(42100464, t);
  free(t);
  ck_assert_msg(found > 5, "only %d of 600 seeds have a handoff", found);
}
END_TEST

START_TEST(case_text_round_trip) {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    char *t = case_text(seed, 0);
    dfz_case c;
    char err[256];
    ck_assert_msg(dfz_case_from_text(t, NULL, &c, NULL, 0, err, sizeof err), "%s", err);
    char *t2 = dfz_case_to_text(&c, NULL);
    ck_assert_str_eq(t, t2);
    free(t);
    free(t2);
    dfz_case_free(&c);
  }
  dfz_case c;
  char err[256];
  ck_assert(!dfz_case_from_text("kernel k\nbogus 1\nsource-inline\nx", NULL, &c, NULL, 0, err,
                                sizeof err));
  ck_assert(strstr(err, "bogus") != NULL);
  dfz_case_free(&c);
}
END_TEST

/* About a fifth of the cases shift their plain pointers' buffers off 16
 * bytes (1 to 3 elements) and name exactly those in teeny.unaligned; a
 * descriptor's base is never shifted.  The shift survives the text form
 * (case_text_round_trip compares the whole text). */
START_TEST(shifted_pointers) {
  int shifted = 0;
  for (uint64_t seed = 1; seed <= 300; seed++) {
    char *t = case_text(seed, 0);
    dfz_case c;
    char err[256];
    ck_assert_msg(dfz_case_from_text(t, NULL, &c, NULL, 0, err, sizeof err), "%s", err);
    free(t);
    shifted += c.shift > 0;
    ck_assert(c.shift >= 0 && c.shift <= 3);
    uint64_t bits = dfz_case_unaligned(&c);
    for (int i = 0; i < c.nparams; i++) {
      const dfz_param *p = &c.params[i];
      size_t sb = dfz_case_shift_bytes(&c, i);
      ck_assert(sb == (p->is_ptr && !p->desc_part ? (size_t)c.shift * dfz_esize(p->dt) : 0));
      ck_assert(!!(bits >> i & 1) == (sb % 16 != 0));
    }
    dfz_case_free(&c);
  }
  ck_assert_msg(shifted > 30 && shifted < 100, "%d of 300 cases shifted", shifted);
}
END_TEST

/* Descriptors come both ways (made in the kernel, passed as tensor_desc
 * parameters), a parameter's launch parameters stay together and in the
 * entry point's order through the text form, and --skip desc removes them. */
START_TEST(descriptors_both_ways) {
  int made = 0, params = 0;
  unsigned skip;
  ck_assert(dfz_feature_parse("desc", &skip, NULL));
  for (uint64_t seed = 1; seed <= 300; seed++) {
    char *t = case_text(seed, 0);
    made += strstr(t, "make_tensor_descriptor(") != NULL;
    const char *tm = strstr(t, " tensormap ");
    if (tm) {
      params++;
      dfz_case c;
      char err[256];
      ck_assert_msg(dfz_case_from_text(t, NULL, &c, NULL, 0, err, sizeof err), "%s", err);
      for (int i = 0; i < c.nparams; i++) {
        const dfz_param *p = &c.params[i];
        if (p->desc_rank == 0)
          continue;
        ck_assert(i + 2 * p->desc_rank < c.nparams);
        char want[DFZ_NAME_LEN + 8];
        snprintf(want, sizeof want, "%.*s_base", (int)(strlen(p->name) - 10), p->name);
        ck_assert_str_eq(c.params[i + 1].name, want);
        ck_assert(c.params[i + 1].is_ptr && c.params[i + 1].desc_part);
        ck_assert(c.params[i + 2].dt == TEENY_DT_I32 && c.params[i + 2].desc_part);
        ck_assert(i + 2 * p->desc_rank + 1 == c.nparams ||
                  !c.params[i + 2 * p->desc_rank + 1].desc_part);
      }
      ck_assert(strstr(c.source, "tensor_desc(") != NULL);
      dfz_case_free(&c);
    }
    free(t);
    t = case_text(seed, skip);
    ck_assert_msg(!strstr(t, "_tensor_descriptor"), "seed %llu has a descriptor with desc skipped",
                  (unsigned long long)seed);
    free(t);
  }
  ck_assert_msg(made > 10 && params > 10, "%d seeds make descriptors, %d pass them", made, params);
}
END_TEST

START_TEST(facts_at_the_edges) {
  dfz_fact x = dfz_fact_range(-8, 8, true), out;
  /* 256 small integers sum exactly in f32, 2^22 of them do not */
  ck_assert(dfz_fact_op(OP_SUM, TEENY_DT_F32, TEENY_DT_F32, &x, 1, 256, &out));
  ck_assert(out.err == 0);
  ck_assert(dfz_fact_op(OP_SUM, TEENY_DT_F32, TEENY_DT_F32, &x, 1, 1 << 22, &out));
  ck_assert(out.err > 0);
  /* a bf16 sum: exact when it accumulates in f32 (the builtin), not in bf16
   * (a combine function's) past 256 (a campaign false positive, fixed) */
  dfz_fact b = dfz_fact_range(-8, 15, true);
  ck_assert(dfz_fact_op(OP_CUMSUM, TEENY_DT_F32, TEENY_DT_BF16, &b, 1, 128, &out) && out.err == 0);
  ck_assert(!dfz_fact_op(OP_CUMSUM, TEENY_DT_BF16, TEENY_DT_BF16, &b, 1, 128, &out) || out.err > 0);
  /* an approximate value never reaches a comparison or an int cast */
  dfz_fact e;
  ck_assert(dfz_fact_op(OP_EXP, TEENY_DT_F32, TEENY_DT_F32, &x, 1, 1, &e));
  ck_assert(e.err > 0 && e.lo > 0);
  dfz_fact two[2] = {e, x};
  ck_assert(!dfz_fact_op(OP_LT, TEENY_DT_BOOL, TEENY_DT_F32, two, 2, 1, &out));
  ck_assert(!dfz_fact_cast(TEENY_DT_F32, TEENY_DT_I32, e, &out));
  /* exp of a value that may overflow f16 is refused */
  dfz_fact big = dfz_fact_range(0, 20, true);
  ck_assert(!dfz_fact_op(OP_EXP, TEENY_DT_F16, TEENY_DT_F16, &big, 1, 1, &out));
  /* log needs a positive argument */
  ck_assert(!dfz_fact_op(OP_LOG, TEENY_DT_F32, TEENY_DT_F32, &x, 1, 1, &out));
  /* integer wrap-around is exact but widens to the dtype */
  dfz_fact i8[2] = {dfz_fact_range(100, 120, true), dfz_fact_range(100, 120, true)};
  ck_assert(dfz_fact_op(OP_ADD, TEENY_DT_I8, TEENY_DT_I8, i8, 2, 1, &out));
  ck_assert(out.err == 0 && out.lo == -128 && out.hi == 127);
  /* f32 dot of integers up to 2048 is exact (TF32 holds them), of 4096 not */
  dfz_fact d[2] = {dfz_fact_range(-16, 16, true), dfz_fact_range(-16, 16, true)};
  ck_assert(dfz_fact_op(OP_DOT, TEENY_DT_F32, TEENY_DT_F32, d, 2, 64, &out) && out.err == 0);
  d[0] = dfz_fact_range(-4096, 4096, true);
  ck_assert(dfz_fact_op(OP_DOT, TEENY_DT_F32, TEENY_DT_F32, d, 2, 16, &out) && out.err > 0);
}
END_TEST

START_TEST(element_values) {
  uint16_t buf[4];
  dfz_put(TEENY_DT_F16, buf, 0, 1.0 / 3.0);
  ck_assert(fabs(dfz_get(TEENY_DT_F16, buf, 0) - 1.0 / 3.0) < 1e-3);
  dfz_put(TEENY_DT_F16, buf, 1, 70000.0);
  ck_assert(isinf(dfz_get(TEENY_DT_F16, buf, 1)));
  dfz_put(TEENY_DT_F16, buf, 2, ldexp(3.0, -24)); /* subnormal */
  ck_assert(dfz_get(TEENY_DT_F16, buf, 2) == ldexp(3.0, -24));
  dfz_put(TEENY_DT_BF16, buf, 3, 1.00390625); /* 1 + 2^-8: a tie, to even */
  ck_assert(dfz_get(TEENY_DT_BF16, buf, 3) == 1.0);
  int8_t b8[1];
  dfz_put(TEENY_DT_I8, b8, 0, 200); /* wraps */
  ck_assert(b8[0] == -56);
  ck_assert(dfz_round(TEENY_DT_F32, 16777217.0) == 16777216.0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("difffuzz_gen");
  TCase *t = tcase_create("gen");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, seeds_are_valid_kernels);
  tcase_add_test(t, seeds_are_valid_with_skips);
  tcase_add_test(t, same_seed_same_kernel);
  tcase_add_test(t, skip_is_honoured);
  tcase_add_test(t, handoff_reached_by_every_program);
  tcase_add_test(t, case_text_round_trip);
  tcase_add_test(t, descriptors_both_ways);
  tcase_add_test(t, shifted_pointers);
  tcase_add_test(t, facts_at_the_edges);
  tcase_add_test(t, element_values);
  suite_add_tcase(s, t);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
