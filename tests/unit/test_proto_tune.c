/*
 * tests/unit/test_proto_tune.c — what issue 16 added to the protocol: the
 * compile request's arch and the reply's cubin, cubin counts in list and
 * show entries and show's cubins, and the autotuning ops (tune, tune_done,
 * tuned, tuned_purge) — round trips, defaults, what encoders refuse, and
 * that a reply without the new fields (an old server's) still decodes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "proto/msg.h"

#define KEY_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void req_round_trip(const teeny_msg_request *q, teeny_msg_request *out) {
  teeny_buf b;
  teeny__buf_init(&b);
  ck_assert_int_eq(teeny_msg_request_encode(q, &b), 0);
  char err[TEENY_PROTO_ERR_LEN] = "";
  int rc = teeny_msg_request_decode(b.p, b.len, out, err);
  ck_assert_msg(rc == 0, "decode: %s", err);
  ck_assert_int_eq(out->op, q->op);
  teeny__buf_free(&b);
}

static void rep_round_trip(const teeny_msg_reply *r, teeny_msg_reply *out) {
  teeny_buf b;
  teeny__buf_init(&b);
  ck_assert_int_eq(teeny_msg_reply_encode(r, &b), 0);
  char err[TEENY_PROTO_ERR_LEN] = "";
  int rc = teeny_msg_reply_decode(b.p, b.len, r->op, out, err);
  ck_assert_msg(rc == 0, "decode: %s", err);
  teeny__buf_free(&b);
}

static teeny_msg_tune_key sample_key(void) {
  teeny_msg_tune_key k = {.kernel = "matmul", .problem = "M=4096 N=4096 K=4096",
                          .gpu = "NVIDIA H200", .driver = "580.65.06"};
  memcpy(k.digest, KEY_A, 65);
  return k;
}

static const teeny_const_binding winner[] = {{"BLOCK_M", 128}, {"BLOCK_N", 256}};

/* ---- compile and show --------------------------------------------------------- */

START_TEST(compile_arch_and_cubin) {
  teeny_msg_request q = {.op = TEENY_OP_COMPILE, .id = 3}, d;
  q.u.compile.req.source = "x";
  q.u.compile.req.source_len = 1;
  q.u.compile.req.kernel = "k";
  q.u.compile.emit = TEENY_MSG_EMIT_PTX;
  q.u.compile.arch = "sm_90";
  req_round_trip(&q, &d);
  ck_assert_str_eq(d.u.compile.arch, "sm_90");
  teeny_msg_request_free(&d);
  q.u.compile.arch = NULL; /* an old client's request: no arch */
  req_round_trip(&q, &d);
  ck_assert_ptr_null(d.u.compile.arch);
  teeny_msg_request_free(&d);

  teeny_msg_reply r, o;
  memset(&r, 0, sizeof r);
  r.op = TEENY_OP_COMPILE;
  r.id = 3;
  teeny_artifact *a = &r.u.compile.art;
  memcpy(a->key, KEY_A, 65);
  a->name = "k";
  a->id = "k";
  a->entry = "k_entry_point";
  a->target = "sm_90a";
  a->num_warps = 4;
  a->threads_per_block = 128;
  a->ptx = ".version 8.0";
  a->ptx_len = 12;
  r.u.compile.cubin = "\x7f" "ELF\0\1\2";
  r.u.compile.cubin_len = 7;
  r.u.compile.cubin_arch = "sm_90";
  r.u.compile.cubin_toolchain = "ptxas 13.0.88";
  rep_round_trip(&r, &o);
  ck_assert_uint_eq(o.u.compile.cubin_len, 7);
  ck_assert_mem_eq(o.u.compile.cubin, "\x7f" "ELF\0\1\2", 7);
  ck_assert_str_eq(o.u.compile.cubin_arch, "sm_90");
  ck_assert_str_eq(o.u.compile.cubin_toolchain, "ptxas 13.0.88");
  ck_assert_uint_eq(o.u.compile.art.ptx_len, 12); /* the PTX always */
  teeny_msg_reply_free(&o);
  /* no cubin: the fields are absent, as from an old server */
  r.u.compile.cubin = NULL;
  rep_round_trip(&r, &o);
  ck_assert_ptr_null(o.u.compile.cubin);
  ck_assert_ptr_null(o.u.compile.cubin_arch);
  teeny_msg_reply_free(&o);
  /* a cubin without its arch cannot be encoded */
  r.u.compile.cubin = "x";
  r.u.compile.cubin_len = 1;
  r.u.compile.cubin_arch = NULL;
  teeny_buf b;
  teeny__buf_init(&b);
  ck_assert_int_eq(teeny_msg_reply_encode(&r, &b), TEENY_E_INVAL);
  teeny__buf_free(&b);
}
END_TEST

START_TEST(show_cubins) {
  teeny_msg_request q = {.op = TEENY_OP_SHOW, .id = 4}, d;
  q.u.show.key = "0123";
  q.u.show.cubin_arch = "sm_90";
  req_round_trip(&q, &d);
  ck_assert_str_eq(d.u.show.cubin_arch, "sm_90");
  teeny_msg_request_free(&d);

  teeny_msg_reply r, o;
  memset(&r, 0, sizeof r);
  r.op = TEENY_OP_SHOW;
  r.id = 4;
  teeny_msg_entry *e = &r.u.show.entry;
  memcpy(e->key, KEY_A, 65);
  e->name = e->id = "k";
  e->target = "sm_90a";
  e->cubins = 2;
  e->cubin_bytes = 9000;
  teeny_msg_cubin cs[2] = {{"sm_80", "ptxas 13.0.88", 4000, 17, 30.5},
                           {"sm_90", "driver 580.65.06", 5000, 18, 40}};
  r.u.show.cubins = cs;
  r.u.show.ncubins = 2;
  r.u.show.cubin = "abc";
  r.u.show.cubin_len = 3;
  rep_round_trip(&r, &o);
  ck_assert_uint_eq(o.u.show.entry.cubins, 2);
  ck_assert_uint_eq(o.u.show.entry.cubin_bytes, 9000);
  ck_assert_uint_eq(o.u.show.ncubins, 2);
  ck_assert_str_eq(o.u.show.cubins[1].toolchain, "driver 580.65.06");
  ck_assert_uint_eq(o.u.show.cubins[0].size, 4000);
  ck_assert_uint_eq(o.u.show.cubin_len, 3);
  teeny_msg_reply_free(&o);
}
END_TEST

/* ---- tuning ------------------------------------------------------------------------ */

START_TEST(tune_requests) {
  teeny_msg_request q = {.op = TEENY_OP_TUNE, .id = 5}, d;
  q.u.tune.key = sample_key();
  q.u.tune.claim = false;
  q.u.tune.wait_ms = 2500;
  req_round_trip(&q, &d);
  ck_assert_str_eq(d.u.tune.key.problem, "M=4096 N=4096 K=4096");
  ck_assert_str_eq(d.u.tune.key.digest, KEY_A);
  ck_assert(!d.u.tune.claim);
  ck_assert_uint_eq(d.u.tune.wait_ms, 2500);
  teeny_msg_request_free(&d);

  memset(&q, 0, sizeof q);
  q.op = TEENY_OP_TUNE_DONE;
  q.id = 6;
  q.u.tune_done.key = sample_key();
  q.u.tune_done.config = (teeny_msg_tune_config){winner, 2, 8};
  q.u.tune_done.best_ms = 0.625;
  q.u.tune_done.candidates = 12;
  req_round_trip(&q, &d);
  ck_assert_uint_eq(d.u.tune_done.config.nconsts, 2);
  ck_assert_str_eq(d.u.tune_done.config.consts[1].name, "BLOCK_N");
  ck_assert_int_eq(d.u.tune_done.config.consts[1].value, 256);
  ck_assert_int_eq(d.u.tune_done.config.num_warps, 8);
  ck_assert(d.u.tune_done.best_ms == 0.625);
  teeny_msg_request_free(&d);
  q.u.tune_done.abandon = true;
  req_round_trip(&q, &d);
  ck_assert(d.u.tune_done.abandon);
  teeny_msg_request_free(&d);

  memset(&q, 0, sizeof q);
  q.op = TEENY_OP_TUNED_PURGE;
  q.id = 7;
  q.u.tuned_purge.name = "mat*";
  req_round_trip(&q, &d);
  ck_assert_str_eq(d.u.tuned_purge.name, "mat*");
  teeny_msg_request_free(&d);
  teeny_buf b;
  teeny__buf_init(&b);
  q.u.tuned_purge.all = true; /* and a name: refused */
  ck_assert_int_eq(teeny_msg_request_encode(&q, &b), TEENY_E_INVAL);
  q.op = TEENY_OP_TUNE;
  q.u.tune.key = sample_key();
  q.u.tune.key.digest[10] = 'X';
  ck_assert_int_eq(teeny_msg_request_encode(&q, &b), TEENY_E_INVAL);
  ck_assert_uint_eq(b.len, 0);
  teeny__buf_free(&b);
}
END_TEST

START_TEST(tune_replies) {
  teeny_msg_reply r, o;
  memset(&r, 0, sizeof r);
  r.op = TEENY_OP_TUNE;
  r.id = 8;
  r.u.tune.state = TEENY_TUNE_FOUND;
  r.u.tune.joined = true;
  r.u.tune.config = (teeny_msg_tune_config){winner, 2, 8};
  r.u.tune.best_ms = 1.5;
  r.u.tune.candidates = 16;
  rep_round_trip(&r, &o);
  ck_assert_int_eq(o.u.tune.state, TEENY_TUNE_FOUND);
  ck_assert(o.u.tune.joined);
  ck_assert_int_eq(o.u.tune.config.consts[0].value, 128);
  ck_assert_uint_eq(o.u.tune.candidates, 16);
  teeny_msg_reply_free(&o);
  r.u.tune.state = TEENY_TUNE_TUNE;
  r.u.tune.joined = false;
  rep_round_trip(&r, &o);
  ck_assert_int_eq(o.u.tune.state, TEENY_TUNE_TUNE);
  ck_assert_uint_eq(o.u.tune.config.nconsts, 0);
  teeny_msg_reply_free(&o);

  teeny_msg_tuned_rec recs[1] = {{sample_key(), {winner, 2, 8}, 0.5, 12, 1700000000}};
  memset(&r, 0, sizeof r);
  r.op = TEENY_OP_TUNED;
  r.u.tuned.records = recs;
  r.u.tuned.nrecords = 1;
  rep_round_trip(&r, &o);
  ck_assert_uint_eq(o.u.tuned.nrecords, 1);
  ck_assert_str_eq(o.u.tuned.records[0].key.gpu, "NVIDIA H200");
  ck_assert_int_eq(o.u.tuned.records[0].created, 1700000000);
  teeny_msg_reply_free(&o);
  memset(&r, 0, sizeof r);
  r.op = TEENY_OP_TUNED_PURGE;
  r.u.tuned_purge.removed = 3;
  rep_round_trip(&r, &o);
  ck_assert_uint_eq(o.u.tuned_purge.removed, 3);
  teeny_msg_reply_free(&o);
  ck_assert_str_eq(teeny_proto_op_name(TEENY_OP_TUNE_DONE), "tune_done");
  ck_assert_int_eq(teeny_proto_op_parse("tuned_purge"), TEENY_OP_TUNED_PURGE);
}
END_TEST

int main(void) {
  Suite *su = suite_create("proto_tune");
  TCase *tc = tcase_create("tune");
  tcase_add_test(tc, compile_arch_and_cubin);
  tcase_add_test(tc, show_cubins);
  tcase_add_test(tc, tune_requests);
  tcase_add_test(tc, tune_replies);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
