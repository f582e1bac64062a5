/*
 * proto/msg_tune.c — the autotuning ops (PROTOCOL.md §4.10-§4.13): tune,
 * tune_done, tuned and tuned_purge, requests and replies.
 *
 * A tuning record is keyed by (digest, problem, gpu, driver) and names its
 * kernel; its winner is a configuration {consts, num_warps}.  msg.c and
 * msg_reply.c dispatch here by op; the decoders and encoders follow their
 * conventions (field tables, strict getters, map sizes counted up front).
 * Load: one tune request per problem key per process.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto/mp.h"

static const char *const state_names[] = {"found", "tune", "none", "timeout"};

/* ---- decoding: shared pieces ----------------------------------------------------- */

enum { T_KERNEL, T_DIGEST, T_PROBLEM, T_GPU, T_DRIVER, T__N };

/* The five key fields, at f[0..T__N). */
static int decode_key(teeny__dec *d, const char *where, const teeny__field *f,
                      teeny_msg_tune_key *k) {
  int rc = teeny__get_str(d, where, &f[T_KERNEL], true, TEENY_PROTO_MAX_NAME, &k->kernel);
  if (!rc)
    rc = teeny__get_key(d, where, &f[T_DIGEST], true, k->digest);
  if (!rc)
    rc = teeny__get_str(d, where, &f[T_PROBLEM], true, TEENY_PROTO_MAX_TEXT,
                        &k->problem);
  if (!rc)
    rc = teeny__get_str(d, where, &f[T_GPU], true, TEENY_PROTO_MAX_NAME, &k->gpu);
  if (!rc)
    rc = teeny__get_str(d, where, &f[T_DRIVER], true, TEENY_PROTO_MAX_NAME, &k->driver);
  return rc;
}

#define KEY_FIELDS                                                             \
  {"kernel", NULL}, {"digest", NULL}, {"problem", NULL}, {"gpu", NULL},       \
      {"driver", NULL}

/* A config map {consts, num_warps} at field f (required). */
static int decode_config(teeny__dec *d, const teeny__field *f,
                         teeny_msg_tune_config *c) {
  const msgpack_object *m = NULL;
  int rc = teeny__get_map(d, NULL, f, true, SIZE_MAX, &m);
  teeny__field g[] = {{"consts", NULL}, {"num_warps", NULL}};
  if (!rc)
    rc = teeny__dec_fields(d, m, "config", g, 2);
  if (!rc)
    rc = teeny__decode_consts(d, &g[0], &c->consts, &c->nconsts);
  if (!rc)
    rc = teeny__get_int(d, "config", &g[1], false, 0, 1024, &c->num_warps);
  return rc;
}

/* ---- decoding: requests ---------------------------------------------------------- */

static int decode_tune(teeny__dec *d, const msgpack_object *root, teeny_msg_tune *t) {
  teeny__field f[T__N + 2] = {KEY_FIELDS, {"claim", NULL}, {"wait_ms", NULL}};
  t->claim = true;
  int rc = teeny__dec_fields(d, root, NULL, f, T__N + 2);
  if (!rc)
    rc = decode_key(d, NULL, f, &t->key);
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[T__N], false, &t->claim);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[T__N + 1], false, 0, UINT32_MAX, &t->wait_ms);
  return rc;
}

static int decode_tune_done(teeny__dec *d, const msgpack_object *root,
                            teeny_msg_tune_done *t) {
  teeny__field f[T__N + 4] = {KEY_FIELDS, {"abandon", NULL}, {"config", NULL},
                              {"best_ms", NULL}, {"timed", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, T__N + 4);
  if (!rc)
    rc = decode_key(d, NULL, f, &t->key);
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[T__N], false, &t->abandon);
  if (rc || t->abandon)
    return rc;
  rc = decode_config(d, &f[T__N + 1], &t->config);
  if (!rc)
    rc = teeny__get_ms(d, NULL, &f[T__N + 2], true, 1e9, &t->best_ms);
  if (!rc)
    rc = teeny__get_u32(d, NULL, &f[T__N + 3], true, 1, UINT32_MAX, &t->candidates);
  return rc;
}

static int decode_tuned_purge(teeny__dec *d, const msgpack_object *root,
                              teeny_msg_tuned_purge *p) {
  teeny__field f[] = {{"all", NULL}, {"name", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 2);
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[0], false, &p->all);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[1], false, TEENY_PROTO_MAX_NAME, &p->name);
  if (!rc && p->all == (p->name != NULL))
    rc = teeny__dec_fail(d, TEENY_E_PROTO, "tuned_purge needs exactly one of all, name");
  return rc;
}

int teeny__decode_tune_request(teeny__dec *d, const msgpack_object *root,
                               teeny_msg_request *req) {
  teeny__field f[] = {{"name", NULL}};
  switch (req->op) {
  case TEENY_OP_TUNE:
    return decode_tune(d, root, &req->u.tune);
  case TEENY_OP_TUNE_DONE:
    return decode_tune_done(d, root, &req->u.tune_done);
  case TEENY_OP_TUNED_PURGE:
    return decode_tuned_purge(d, root, &req->u.tuned_purge);
  default: {
    int rc = teeny__dec_fields(d, root, NULL, f, 1);
    return rc ? rc
              : teeny__get_str(d, NULL, &f[0], false, TEENY_PROTO_MAX_NAME,
                               &req->u.tuned.name);
  }
  }
}

/* ---- encoding: requests ---------------------------------------------------------- */

static bool key_ok(const teeny_msg_tune_key *k) {
  size_t n = strlen(k->digest);
  for (size_t i = 0; i < n; i++)
    if (!((k->digest[i] >= '0' && k->digest[i] <= '9') ||
          (k->digest[i] >= 'a' && k->digest[i] <= 'f')))
      return false;
  return n == 64 && teeny__str_ok(k->kernel, TEENY_PROTO_MAX_NAME) &&
         teeny__str_ok(k->problem, TEENY_PROTO_MAX_TEXT) &&
         teeny__str_ok(k->gpu, TEENY_PROTO_MAX_NAME) &&
         teeny__str_ok(k->driver, TEENY_PROTO_MAX_NAME);
}

static bool config_ok(const teeny_msg_tune_config *c) {
  if (c->nconsts > TEENY_PROTO_MAX_BINDINGS || (c->nconsts && !c->consts) ||
      c->num_warps < 0 || c->num_warps > 1024)
    return false;
  for (size_t i = 0; i < c->nconsts; i++)
    if (!teeny__str_ok(c->consts[i].name, TEENY_PROTO_MAX_NAME))
      return false;
  return true;
}

static void put_key(teeny__enc *e, const teeny_msg_tune_key *k) {
  teeny__kv_str(e, "kernel", k->kernel);
  teeny__kv_str(e, "digest", k->digest);
  teeny__kv_str(e, "problem", k->problem);
  teeny__kv_str(e, "gpu", k->gpu);
  teeny__kv_str(e, "driver", k->driver);
}

static void put_config(teeny__enc *e, const teeny_msg_tune_config *c) {
  teeny__put_str(e, "config");
  teeny__put_map(e, 2);
  teeny__put_str(e, "consts");
  teeny__put_map(e, c->nconsts);
  for (size_t i = 0; i < c->nconsts; i++)
    teeny__kv_i64(e, c->consts[i].name, c->consts[i].value);
  teeny__kv_i64(e, "num_warps", c->num_warps);
}

int teeny__encode_tune_head(teeny__enc *e, const teeny_msg_request *req, size_t n) {
  const teeny_msg_tune_done *t = &req->u.tune_done;
  const teeny_msg_tuned_purge *p = &req->u.tuned_purge;
  switch (req->op) {
  case TEENY_OP_TUNE:
    if (!key_ok(&req->u.tune.key) || req->u.tune.wait_ms > UINT32_MAX)
      return TEENY_E_INVAL;
    teeny__put_map(e, n + T__N + 1 + (req->u.tune.wait_ms != 0));
    return 0;
  case TEENY_OP_TUNE_DONE:
    if (!key_ok(&t->key) ||
        (!t->abandon && (!config_ok(&t->config) || !isfinite(t->best_ms) ||
                         t->best_ms < 0 || t->best_ms > 1e9 || t->candidates == 0)))
      return TEENY_E_INVAL;
    teeny__put_map(e, n + T__N + (t->abandon ? 1 : 3));
    return 0;
  case TEENY_OP_TUNED_PURGE:
    if (p->all == (p->name != NULL) ||
        (p->name && !teeny__str_ok(p->name, TEENY_PROTO_MAX_NAME)))
      return TEENY_E_INVAL;
    teeny__put_map(e, n + 1);
    return 0;
  default:
    if (req->u.tuned.name && !teeny__str_ok(req->u.tuned.name, TEENY_PROTO_MAX_NAME))
      return TEENY_E_INVAL;
    teeny__put_map(e, n + (req->u.tuned.name != NULL));
    return 0;
  }
}

void teeny__put_tune_body(teeny__enc *e, const teeny_msg_request *req) {
  const teeny_msg_tune_done *t = &req->u.tune_done;
  switch (req->op) {
  case TEENY_OP_TUNE:
    put_key(e, &req->u.tune.key);
    teeny__kv_bool(e, "claim", req->u.tune.claim);
    if (req->u.tune.wait_ms)
      teeny__kv_u64(e, "wait_ms", req->u.tune.wait_ms);
    break;
  case TEENY_OP_TUNE_DONE:
    put_key(e, &t->key);
    if (t->abandon) {
      teeny__kv_bool(e, "abandon", true);
      break;
    }
    put_config(e, &t->config);
    teeny__kv_f64(e, "best_ms", t->best_ms);
    teeny__kv_u64(e, "timed", t->candidates);
    break;
  case TEENY_OP_TUNED_PURGE:
    if (req->u.tuned_purge.all)
      teeny__kv_bool(e, "all", true);
    else
      teeny__kv_str(e, "name", req->u.tuned_purge.name);
    break;
  default:
    if (req->u.tuned.name)
      teeny__kv_str(e, "name", req->u.tuned.name);
    break;
  }
}

/* ---- replies ----------------------------------------------------------------------- */

static int decode_tune_reply(teeny__dec *d, const msgpack_object *root,
                             teeny_msg_tune_reply *t) {
  teeny__field f[] = {{"state", NULL}, {"joined", NULL}, {"config", NULL},
                      {"best_ms", NULL}, {"timed", NULL}};
  int state = 0;
  int rc = teeny__dec_fields(d, root, NULL, f, 5);
  if (!rc)
    rc = teeny__get_enum(d, NULL, &f[0], true, state_names, 4, &state);
  t->state = (teeny_msg_tune_state)state;
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[1], false, &t->joined);
  if (rc || t->state != TEENY_TUNE_FOUND)
    return rc;
  rc = decode_config(d, &f[2], &t->config);
  if (!rc)
    rc = teeny__get_ms(d, NULL, &f[3], true, 1e9, &t->best_ms);
  if (!rc)
    rc = teeny__get_u32(d, NULL, &f[4], true, 0, UINT32_MAX, &t->candidates);
  return rc;
}

static int record_item(teeny__dec *d, const char *where, const msgpack_object *m,
                       void *item) {
  teeny_msg_tuned_rec *r = item;
  teeny__field f[T__N + 4] = {KEY_FIELDS, {"config", NULL}, {"best_ms", NULL},
                              {"timed", NULL}, {"created", NULL}};
  int rc = teeny__dec_fields(d, m, where, f, T__N + 4);
  if (!rc)
    rc = decode_key(d, where, f, &r->key);
  if (!rc)
    rc = decode_config(d, &f[T__N], &r->config);
  if (!rc)
    rc = teeny__get_ms(d, where, &f[T__N + 1], true, 1e9, &r->best_ms);
  if (!rc)
    rc = teeny__get_u32(d, where, &f[T__N + 2], true, 0, UINT32_MAX, &r->candidates);
  if (!rc)
    rc = teeny__get_i64(d, where, &f[T__N + 3], true, INT64_MIN, INT64_MAX,
                        &r->created);
  return rc;
}

/* records: an array of maps, each decoded by record_item. */
static int decode_records(teeny__dec *d, const teeny__field *f, teeny_msg_tuned_reply *t) {
  const msgpack_object *a = NULL;
  int rc = teeny__get_array(d, NULL, f, true, SIZE_MAX, &a);
  if (rc || a->via.array.size == 0)
    return rc;
  t->records = teeny__mem_array(d->mem, a->via.array.size, sizeof *t->records);
  if (!t->records)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < a->via.array.size; i++) {
    char where[48];
    snprintf(where, sizeof where, "records[%u]", (unsigned)i);
    teeny__field e = {where, &a->via.array.ptr[i]};
    const msgpack_object *m = NULL;
    if ((rc = teeny__get_map(d, NULL, &e, true, SIZE_MAX, &m)) ||
        (rc = record_item(d, where, m, &t->records[i])))
      return rc;
  }
  t->nrecords = a->via.array.size;
  return 0;
}

int teeny__decode_tune_reply(teeny__dec *d, const msgpack_object *root,
                             teeny_msg_reply *r) {
  teeny__field f[] = {{"records", NULL}};
  teeny__field g[] = {{"removed", NULL}};
  int rc;
  switch (r->op) {
  case TEENY_OP_TUNE:
    return decode_tune_reply(d, root, &r->u.tune);
  case TEENY_OP_TUNED:
    rc = teeny__dec_fields(d, root, NULL, f, 1);
    return rc ? rc : decode_records(d, &f[0], &r->u.tuned);
  default:
    rc = teeny__dec_fields(d, root, NULL, g, 1);
    return rc ? rc
              : teeny__get_u64(d, NULL, &g[0], true, 0, UINT64_MAX,
                               &r->u.tuned_purge.removed);
  }
}

static bool tuned_ok(const teeny_msg_tuned_reply *t) {
  if (t->nrecords && !t->records)
    return false;
  for (size_t i = 0; i < t->nrecords; i++) {
    const teeny_msg_tuned_rec *r = &t->records[i];
    if (!key_ok(&r->key) || !config_ok(&r->config) || !isfinite(r->best_ms) ||
        r->best_ms < 0 || r->best_ms > 1e9)
      return false;
  }
  return true;
}

int teeny__tune_reply_fields(const teeny_msg_reply *r) {
  const teeny_msg_tune_reply *t = &r->u.tune;
  switch (r->op) {
  case TEENY_OP_TUNE:
    if ((unsigned)t->state >= TEENY_ARRAY_LEN(state_names))
      return -1;
    if (t->state != TEENY_TUNE_FOUND)
      return 1 + t->joined;
    return config_ok(&t->config) && isfinite(t->best_ms) && t->best_ms >= 0 &&
                   t->best_ms <= 1e9
               ? 4 + t->joined
               : -1;
  case TEENY_OP_TUNED:
    return tuned_ok(&r->u.tuned) ? 1 : -1;
  default:
    return 1;
  }
}

void teeny__put_tune_reply(teeny__enc *e, const teeny_msg_reply *r) {
  const teeny_msg_tune_reply *t = &r->u.tune;
  switch (r->op) {
  case TEENY_OP_TUNE:
    teeny__kv_str(e, "state", state_names[t->state]);
    if (t->joined)
      teeny__kv_bool(e, "joined", true);
    if (t->state != TEENY_TUNE_FOUND)
      break;
    put_config(e, &t->config);
    teeny__kv_f64(e, "best_ms", t->best_ms);
    teeny__kv_u64(e, "timed", t->candidates);
    break;
  case TEENY_OP_TUNED:
    teeny__put_str(e, "records");
    teeny__put_array(e, r->u.tuned.nrecords);
    for (size_t i = 0; i < r->u.tuned.nrecords; i++) {
      const teeny_msg_tuned_rec *rec = &r->u.tuned.records[i];
      teeny__put_map(e, T__N + 4);
      put_key(e, &rec->key);
      put_config(e, &rec->config);
      teeny__kv_f64(e, "best_ms", rec->best_ms);
      teeny__kv_u64(e, "timed", rec->candidates);
      teeny__kv_i64(e, "created", rec->created);
    }
    break;
  default:
    teeny__kv_u64(e, "removed", r->u.tuned_purge.removed);
    break;
  }
}
