/*
 * proto/msg.c — requests: op names, and encode/decode of every request
 * (PROTOCOL.md §4).  Replies are in msg_reply.c.
 *
 * Decoding reads the envelope (id, then op) first so that even a request
 * that fails later can be answered under its own id, then the op's fields.
 * Each op's decoder is a field table plus one typed getter per field; each
 * encoder checks its input the way the decoder will before writing, so a
 * request this library encodes always decodes.  Load: one decode per
 * request on the daemon's loop thread; a hit request is a few microseconds.
 * The autotuning ops (tune, tune_done, tuned, tuned_purge) are msg_tune.c.
 */
#include <string.h>

#include "proto/mp.h"

static const char *const op_names[TEENY_OP__COUNT] = {
    [TEENY_OP_NONE] = NULL,          [TEENY_OP_HELLO] = "hello",
    [TEENY_OP_PING] = "ping",        [TEENY_OP_COMPILE] = "compile",
    [TEENY_OP_STATS] = "stats",      [TEENY_OP_LIST] = "list",
    [TEENY_OP_SHOW] = "show",        [TEENY_OP_PURGE] = "purge",
    [TEENY_OP_VERIFY] = "verify",    [TEENY_OP_SHUTDOWN] = "shutdown",
    [TEENY_OP_TUNE] = "tune",        [TEENY_OP_TUNE_DONE] = "tune_done",
    [TEENY_OP_TUNED] = "tuned",      [TEENY_OP_TUNED_PURGE] = "tuned_purge",
    [TEENY_OP_CONFIG] = "config",
};

static const char *const sort_names[] = {"used", "size", "hits"};

const char *teeny_proto_op_name(teeny_proto_op op) {
  if ((int)op <= TEENY_OP_NONE || op >= TEENY_OP__COUNT)
    return NULL;
  return op_names[op];
}

static teeny_proto_op op_lookup(const char *p, size_t n) {
  for (int op = TEENY_OP_NONE + 1; op < TEENY_OP__COUNT; op++)
    if (strlen(op_names[op]) == n && memcmp(op_names[op], p, n) == 0)
      return (teeny_proto_op)op;
  return TEENY_OP_NONE;
}

teeny_proto_op teeny_proto_op_parse(const char *name) {
  return name ? op_lookup(name, strlen(name)) : TEENY_OP_NONE;
}

/* ---- decoding: envelope ----------------------------------------------------------- */

static int decode_envelope(teeny__dec *d, const msgpack_object *root,
                           teeny_msg_request *req) {
  teeny__field f[] = {{"id", NULL}, {"op", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 2);
  if (rc)
    return rc;
  rc = teeny__get_u64(d, NULL, &f[0], true, 1, UINT64_MAX, &req->id);
  if (rc)
    return rc;
  const msgpack_object *op = f[1].v;
  if (!teeny__present(&f[1]))
    return teeny__dec_fail(d, TEENY_E_PROTO, "missing field 'op'");
  if (op->type != MSGPACK_OBJECT_STR)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field 'op': expected string");
  req->op = op_lookup(op->via.str.ptr, op->via.str.size);
  if (req->op == TEENY_OP_NONE) {
    char ex[TEENY__EXCERPT_LEN];
    teeny__excerpt(op->via.str.ptr, op->via.str.size, ex);
    return teeny__dec_fail(d, TEENY_E_UNSUPPORTED, "unknown op '%s'", ex);
  }
  return 0;
}

/* ---- decoding: ops ------------------------------------------------------------------- */

static int decode_hello(teeny__dec *d, const msgpack_object *root,
                        teeny_msg_hello *h) {
  teeny__field f[] = {{"version", NULL}, {"client", NULL}, {"pid", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 3);
  if (!rc)
    rc = teeny__get_u32(d, NULL, &f[0], true, 0, UINT32_MAX, &h->version);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[1], true, TEENY_PROTO_MAX_NAME, &h->client);
  if (!rc)
    rc = teeny__get_u32(d, NULL, &f[2], false, 0, INT32_MAX, &h->pid);
  return rc;
}

/* A binding name: a map key that must be a short string without NUL. */
static int binding_name(teeny__dec *d, const char *field,
                        const msgpack_object *key, const char **out) {
  teeny__field k = {field, key};
  return teeny__get_str(d, NULL, &k, true, TEENY_PROTO_MAX_NAME, out);
}

/* "dtypes.D" for messages about the value bound to D. */
static const char *value_path(char *out, size_t size, const char *field,
                              const char *name) {
  char ex[TEENY__EXCERPT_LEN];
  teeny__excerpt(name, strlen(name), ex);
  snprintf(out, size, "%s.%s", field, ex);
  return out;
}

static bool bound_before(const char *name, const char *const *names,
                         size_t stride, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *other = *(const char *const *)((const char *)names + i * stride);
    if (strcmp(other, name) == 0)
      return true;
  }
  return false;
}

static int duplicate(teeny__dec *d, const char *field, const char *name) {
  char ex[TEENY__EXCERPT_LEN];
  teeny__excerpt(name, strlen(name), ex);
  return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': '%s' bound twice",
                         field, ex);
}

static int decode_dtypes(teeny__dec *d, const teeny__field *f,
                         teeny_compile_req *req) {
  const msgpack_object *m = NULL;
  int rc = teeny__get_map(d, NULL, f, false, TEENY_PROTO_MAX_BINDINGS, &m);
  if (rc || !m || m->via.map.size == 0)
    return rc;
  teeny_dtype_binding *b =
      teeny__mem_array(d->mem, m->via.map.size, sizeof *b);
  if (!b)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < m->via.map.size; i++) {
    rc = binding_name(d, "dtypes", &m->via.map.ptr[i].key, &b[i].name);
    if (rc)
      return rc;
    if (bound_before(b[i].name, &b[0].name, sizeof *b, i))
      return duplicate(d, "dtypes", b[i].name);
    char p[96];
    teeny__field v = {value_path(p, sizeof p, "dtypes", b[i].name),
                      &m->via.map.ptr[i].val};
    rc = teeny__get_str(d, NULL, &v, true, TEENY_PROTO_MAX_NAME, &b[i].dtype);
    if (rc)
      return rc;
  }
  req->dtypes = b;
  req->ndtypes = m->via.map.size;
  return 0;
}

int teeny__decode_consts(teeny__dec *d, const teeny__field *f,
                         const teeny_const_binding **out, size_t *n) {
  const msgpack_object *m = NULL;
  int rc = teeny__get_map(d, NULL, f, false, TEENY_PROTO_MAX_BINDINGS, &m);
  if (rc || !m || m->via.map.size == 0)
    return rc;
  teeny_const_binding *b = teeny__mem_array(d->mem, m->via.map.size, sizeof *b);
  if (!b)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < m->via.map.size; i++) {
    rc = binding_name(d, "consts", &m->via.map.ptr[i].key, &b[i].name);
    if (rc)
      return rc;
    if (bound_before(b[i].name, &b[0].name, sizeof *b, i))
      return duplicate(d, "consts", b[i].name);
    char p[96];
    teeny__field v = {value_path(p, sizeof p, "consts", b[i].name),
                      &m->via.map.ptr[i].val};
    rc = teeny__get_i64(d, NULL, &v, true, INT64_MIN, INT64_MAX, &b[i].value);
    if (rc)
      return rc;
  }
  *out = b;
  *n = m->via.map.size;
  return 0;
}

static int decode_flags(teeny__dec *d, const teeny__field *f, unsigned *out) {
  uint64_t flags = 0;
  int rc = teeny__get_u64(d, NULL, f, false, 0, UINT32_MAX, &flags);
  if (rc)
    return rc;
  if (flags & ~(uint64_t)TEENY_MSG_FLAGS_KNOWN)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field 'flags': unknown bits 0x%llx",
                           (unsigned long long)(flags & ~(uint64_t)TEENY_MSG_FLAGS_KNOWN));
  *out = (unsigned)flags;
  return 0;
}

enum { C_SOURCE, C_FILENAME, C_KERNEL, C_DTYPES, C_CONSTS, C_TARGET, C_WARPS,
       C_FLAGS, C_EMIT, C_ARCH, C__N };

static int decode_compile(teeny__dec *d, const msgpack_object *root,
                          teeny_msg_compile *c) {
  teeny__field f[C__N] = {
      {"source", NULL}, {"filename", NULL}, {"kernel", NULL},
      {"dtypes", NULL}, {"consts", NULL},   {"target", NULL},
      {"num_warps", NULL}, {"flags", NULL}, {"emit", NULL}, {"arch", NULL}};
  teeny_compile_req *req = &c->req;
  c->emit = TEENY_MSG_EMIT_PTX;
  int rc = teeny__dec_fields(d, root, NULL, f, C__N);
  if (!rc)
    rc = teeny__get_blob(d, NULL, &f[C_SOURCE], true, TEENY_PROTO_MAX_SOURCE,
                         true, &req->source, &req->source_len);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[C_FILENAME], false, TEENY_PROTO_MAX_TEXT,
                        &req->filename);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[C_KERNEL], true, TEENY_PROTO_MAX_NAME,
                        &req->kernel);
  if (!rc)
    rc = decode_dtypes(d, &f[C_DTYPES], req);
  if (!rc)
    rc = teeny__decode_consts(d, &f[C_CONSTS], &req->consts, &req->nconsts);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[C_TARGET], false, TEENY_PROTO_MAX_NAME,
                        &req->target);
  if (!rc)
    rc = teeny__get_int(d, NULL, &f[C_WARPS], false, 0, 1024, &req->num_warps);
  if (!rc)
    rc = decode_flags(d, &f[C_FLAGS], &c->flags);
  if (!rc)
    rc = teeny__get_emit(d, &f[C_EMIT], &c->emit);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[C_ARCH], false, TEENY_PROTO_MAX_NAME, &c->arch);
  return rc;
}

static int decode_list(teeny__dec *d, const msgpack_object *root,
                       teeny_msg_list *l) {
  teeny__field f[] = {{"name", NULL}, {"limit", NULL}, {"sort", NULL},
                      {"after", NULL}};
  int sort = TEENY_SORT_USED;
  int rc = teeny__dec_fields(d, root, NULL, f, 4);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[0], false, TEENY_PROTO_MAX_NAME, &l->name);
  if (!rc)
    rc = teeny__get_u32(d, NULL, &f[1], false, 0, UINT32_MAX, &l->limit);
  if (!rc)
    rc = teeny__get_enum(d, NULL, &f[2], false, sort_names, 3, &sort);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[3], false, TEENY_PROTO_MAX_CURSOR,
                        &l->after);
  l->sort = (teeny_msg_sort)sort;
  return rc;
}

static bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

/* A key prefix: 4..64 hex digits (shorter ones would match most of a
 * store), stored lower-case. */
static int decode_prefix(teeny__dec *d, const teeny__field *f,
                         const char **out) {
  const char *s = NULL;
  int rc = teeny__get_str(d, NULL, f, true, 64, &s);
  if (rc)
    return rc;
  size_t n = strlen(s);
  for (size_t i = 0; i < n; i++)
    if (!is_hex(s[i]))
      n = 0;
  if (n < 4)
    return teeny__dec_fail(d, TEENY_E_PROTO,
                           "field 'key': expected 4 to 64 hex digits");
  char *w = (char *)s; /* our own copy */
  for (size_t i = 0; i < n; i++)
    if (w[i] >= 'A' && w[i] <= 'F')
      w[i] = (char)(w[i] - 'A' + 'a');
  *out = s;
  return 0;
}

static int decode_show(teeny__dec *d, const msgpack_object *root,
                       teeny_msg_show *s) {
  teeny__field f[] = {{"key", NULL}, {"emit", NULL}, {"cubin_arch", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 3);
  if (!rc)
    rc = decode_prefix(d, &f[0], &s->key);
  if (!rc)
    rc = teeny__get_emit(d, &f[1], &s->emit);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[2], false, TEENY_PROTO_MAX_NAME, &s->cubin_arch);
  return rc;
}

/* Why a purge's selectors are unusable, or NULL if they are fine. */
static const char *purge_problem(const teeny_msg_purge *p) {
  bool filter = p->has_older_than || p->name;
  if (!p->all && !filter && !p->has_to_size)
    return "purge needs one of all, older_than_s, name, to_size";
  if (p->all && (filter || p->has_to_size))
    return "field 'all': cannot be combined with other selectors";
  if (p->has_to_size && filter)
    return "field 'to_size': cannot be combined with name or older_than_s";
  return NULL;
}

static int decode_purge(teeny__dec *d, const msgpack_object *root,
                        teeny_msg_purge *p) {
  teeny__field f[] = {{"all", NULL}, {"older_than_s", NULL}, {"name", NULL},
                      {"to_size", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 4);
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[0], false, &p->all);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[1], false, 0, UINT64_MAX, &p->older_than_s);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[2], false, TEENY_PROTO_MAX_NAME, &p->name);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[3], false, 0, UINT64_MAX, &p->to_size);
  if (rc)
    return rc;
  p->has_older_than = teeny__present(&f[1]);
  p->has_to_size = teeny__present(&f[3]);
  const char *why = purge_problem(p);
  if (why)
    return teeny__dec_fail(d, TEENY_E_PROTO, "%s", why);
  return 0;
}

static int decode_verify(teeny__dec *d, const msgpack_object *root,
                         teeny_msg_verify *v) {
  teeny__field f[] = {{"repair", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 1);
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[0], false, &v->repair);
  return rc;
}

static int decode_stats(teeny__dec *d, const msgpack_object *root,
                        teeny_msg_stats *st) {
  teeny__field f[] = {{"zero", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 1);
  if (!rc)
    rc = teeny__get_bool(d, NULL, &f[0], false, &st->zero);
  return rc;
}

static int decode_body(teeny__dec *d, const msgpack_object *root,
                       teeny_msg_request *req) {
  switch (req->op) {
  case TEENY_OP_HELLO:
    return decode_hello(d, root, &req->u.hello);
  case TEENY_OP_COMPILE:
    return decode_compile(d, root, &req->u.compile);
  case TEENY_OP_LIST:
    return decode_list(d, root, &req->u.list);
  case TEENY_OP_SHOW:
    return decode_show(d, root, &req->u.show);
  case TEENY_OP_PURGE:
    return decode_purge(d, root, &req->u.purge);
  case TEENY_OP_VERIFY:
    return decode_verify(d, root, &req->u.verify);
  case TEENY_OP_STATS:
    return decode_stats(d, root, &req->u.stats);
  case TEENY_OP_TUNE:
  case TEENY_OP_TUNE_DONE:
  case TEENY_OP_TUNED:
  case TEENY_OP_TUNED_PURGE:
    return teeny__decode_tune_request(d, root, req);
  default:
    return 0; /* ping, shutdown, config: no fields */
  }
}

int teeny_msg_request_decode(const void *payload, size_t len,
                             teeny_msg_request *req, char *err) {
  memset(req, 0, sizeof *req);
  teeny__dec d;
  const msgpack_object *root = NULL;
  int rc = teeny__dec_open(&d, &req->mem, err, payload, len, &root);
  if (rc)
    goto fail;
  rc = decode_envelope(&d, root, req);
  if (rc)
    goto fail;
  rc = decode_body(&d, root, req);
  if (rc)
    goto fail;
  teeny__dec_close(&d);
  return 0;
fail:
  /* keep id and op so the error reply reaches the right request */
  teeny__dec_close(&d);
  teeny__mem_free(&req->mem);
  memset(&req->u, 0, sizeof req->u);
  return rc;
}

void teeny_msg_request_free(teeny_msg_request *req) {
  if (!req)
    return;
  teeny__mem_free(&req->mem);
  memset(req, 0, sizeof *req);
}

/* ---- encoding -------------------------------------------------------------------- */

static int encode_hello(teeny__enc *e, const teeny_msg_hello *h, size_t n) {
  if (!teeny__str_ok(h->client, TEENY_PROTO_MAX_NAME))
    return TEENY_E_INVAL;
  teeny__put_map(e, n + 2 + (h->pid != 0));
  return 0;
}

static void put_hello(teeny__enc *e, const teeny_msg_hello *h) {
  teeny__kv_u64(e, "version", h->version);
  teeny__kv_str(e, "client", h->client);
  if (h->pid)
    teeny__kv_u64(e, "pid", h->pid);
}

static bool bindings_ok(const teeny_compile_req *r) {
  if (r->ndtypes > TEENY_PROTO_MAX_BINDINGS ||
      r->nconsts > TEENY_PROTO_MAX_BINDINGS ||
      (r->ndtypes && !r->dtypes) || (r->nconsts && !r->consts))
    return false;
  for (size_t i = 0; i < r->ndtypes; i++)
    if (!teeny__str_ok(r->dtypes[i].name, TEENY_PROTO_MAX_NAME) ||
        !teeny__str_ok(r->dtypes[i].dtype, TEENY_PROTO_MAX_NAME))
      return false;
  for (size_t i = 0; i < r->nconsts; i++)
    if (!teeny__str_ok(r->consts[i].name, TEENY_PROTO_MAX_NAME))
      return false;
  return true;
}

static bool compile_ok(const teeny_msg_compile *c) {
  const teeny_compile_req *r = &c->req;
  return (r->source || r->source_len == 0) &&
         r->source_len <= TEENY_PROTO_MAX_SOURCE &&
         teeny__str_ok(r->kernel, TEENY_PROTO_MAX_NAME) &&
         (!r->filename || teeny__str_ok(r->filename, TEENY_PROTO_MAX_TEXT)) &&
         (!r->target || teeny__str_ok(r->target, TEENY_PROTO_MAX_NAME)) &&
         r->num_warps >= 0 && r->num_warps <= 1024 &&
         (!c->arch || teeny__str_ok(c->arch, TEENY_PROTO_MAX_NAME)) &&
         (c->flags & ~TEENY_MSG_FLAGS_KNOWN) == 0 && bindings_ok(r);
}

static int encode_compile(teeny__enc *e, const teeny_msg_compile *c, size_t n) {
  if (!compile_ok(c))
    return TEENY_E_INVAL;
  const teeny_compile_req *r = &c->req;
  n += 3 + (r->filename != NULL) + (r->ndtypes > 0) + (r->nconsts > 0) +
       (r->target != NULL) + (r->num_warps != 0) + (c->flags != 0) +
       (c->arch != NULL);
  teeny__put_map(e, n);
  return 0;
}

static void put_compile(teeny__enc *e, const teeny_msg_compile *c) {
  const teeny_compile_req *r = &c->req;
  teeny__kv_bin(e, "source", r->source, r->source_len);
  if (r->filename)
    teeny__kv_str(e, "filename", r->filename);
  teeny__kv_str(e, "kernel", r->kernel);
  if (r->ndtypes) {
    teeny__put_str(e, "dtypes");
    teeny__put_map(e, r->ndtypes);
    for (size_t i = 0; i < r->ndtypes; i++)
      teeny__kv_str(e, r->dtypes[i].name, r->dtypes[i].dtype);
  }
  if (r->nconsts) {
    teeny__put_str(e, "consts");
    teeny__put_map(e, r->nconsts);
    for (size_t i = 0; i < r->nconsts; i++)
      teeny__kv_i64(e, r->consts[i].name, r->consts[i].value);
  }
  if (r->target)
    teeny__kv_str(e, "target", r->target);
  if (r->num_warps)
    teeny__kv_i64(e, "num_warps", r->num_warps);
  if (c->flags)
    teeny__kv_u64(e, "flags", c->flags);
  teeny__kv_emit(e, c->emit);
  if (c->arch)
    teeny__kv_str(e, "arch", c->arch);
}

static int encode_list(teeny__enc *e, const teeny_msg_list *l, size_t n) {
  if ((l->name && !teeny__str_ok(l->name, TEENY_PROTO_MAX_NAME)) ||
      (l->after && !teeny__str_ok(l->after, TEENY_PROTO_MAX_CURSOR)) ||
      (unsigned)l->sort >= TEENY_ARRAY_LEN(sort_names))
    return TEENY_E_INVAL;
  teeny__put_map(e, n + 1 + (l->name != NULL) + (l->limit != 0) +
                        (l->after != NULL));
  return 0;
}

static void put_list(teeny__enc *e, const teeny_msg_list *l) {
  if (l->name)
    teeny__kv_str(e, "name", l->name);
  if (l->limit)
    teeny__kv_u64(e, "limit", l->limit);
  teeny__kv_str(e, "sort", sort_names[l->sort]);
  if (l->after)
    teeny__kv_str(e, "after", l->after);
}

static int encode_show(teeny__enc *e, const teeny_msg_show *s, size_t n) {
  if (!teeny__str_ok(s->key, 64) || !s->key[0] ||
      (s->cubin_arch && !teeny__str_ok(s->cubin_arch, TEENY_PROTO_MAX_NAME)))
    return TEENY_E_INVAL;
  for (const char *p = s->key; *p; p++)
    if (!is_hex(*p))
      return TEENY_E_INVAL;
  teeny__put_map(e, n + 2 + (s->cubin_arch != NULL));
  return 0;
}

static void put_show(teeny__enc *e, const teeny_msg_show *s) {
  teeny__kv_str(e, "key", s->key);
  teeny__kv_emit(e, s->emit);
  if (s->cubin_arch)
    teeny__kv_str(e, "cubin_arch", s->cubin_arch);
}

static int encode_purge(teeny__enc *e, const teeny_msg_purge *p, size_t n) {
  if (purge_problem(p) || (p->name && !teeny__str_ok(p->name, TEENY_PROTO_MAX_NAME)))
    return TEENY_E_INVAL;
  teeny__put_map(e, n + p->all + p->has_older_than + (p->name != NULL) +
                        p->has_to_size);
  return 0;
}

static void put_purge(teeny__enc *e, const teeny_msg_purge *p) {
  if (p->all)
    teeny__kv_bool(e, "all", true);
  if (p->has_older_than)
    teeny__kv_u64(e, "older_than_s", p->older_than_s);
  if (p->name)
    teeny__kv_str(e, "name", p->name);
  if (p->has_to_size)
    teeny__kv_u64(e, "to_size", p->to_size);
}

/* Check req and write the map header: n envelope fields plus the op's. */
static int encode_head(teeny__enc *e, const teeny_msg_request *req, size_t n) {
  switch (req->op) {
  case TEENY_OP_HELLO:
    return encode_hello(e, &req->u.hello, n);
  case TEENY_OP_COMPILE:
    return encode_compile(e, &req->u.compile, n);
  case TEENY_OP_LIST:
    return encode_list(e, &req->u.list, n);
  case TEENY_OP_SHOW:
    return encode_show(e, &req->u.show, n);
  case TEENY_OP_PURGE:
    return encode_purge(e, &req->u.purge, n);
  case TEENY_OP_VERIFY:
    teeny__put_map(e, n + 1);
    return 0;
  case TEENY_OP_STATS:
    teeny__put_map(e, n + req->u.stats.zero);
    return 0;
  case TEENY_OP_TUNE:
  case TEENY_OP_TUNE_DONE:
  case TEENY_OP_TUNED:
  case TEENY_OP_TUNED_PURGE:
    return teeny__encode_tune_head(e, req, n);
  default:
    teeny__put_map(e, n);
    return 0;
  }
}

static void put_body(teeny__enc *e, const teeny_msg_request *req) {
  switch (req->op) {
  case TEENY_OP_HELLO:
    put_hello(e, &req->u.hello);
    break;
  case TEENY_OP_COMPILE:
    put_compile(e, &req->u.compile);
    break;
  case TEENY_OP_LIST:
    put_list(e, &req->u.list);
    break;
  case TEENY_OP_SHOW:
    put_show(e, &req->u.show);
    break;
  case TEENY_OP_PURGE:
    put_purge(e, &req->u.purge);
    break;
  case TEENY_OP_VERIFY:
    teeny__kv_bool(e, "repair", req->u.verify.repair);
    break;
  case TEENY_OP_STATS:
    if (req->u.stats.zero)
      teeny__kv_bool(e, "zero", true);
    break;
  case TEENY_OP_TUNE:
  case TEENY_OP_TUNE_DONE:
  case TEENY_OP_TUNED:
  case TEENY_OP_TUNED_PURGE:
    teeny__put_tune_body(e, req);
    break;
  default:
    break;
  }
}

int teeny_msg_request_encode(const teeny_msg_request *req, teeny_buf *out) {
  const char *op = teeny_proto_op_name(req->op);
  if (!op || req->id == 0)
    return TEENY_E_INVAL;
  teeny__enc e;
  teeny__enc_init(&e, out);
  int rc = encode_head(&e, req, 2);
  if (rc)
    return teeny__enc_end(&e, rc);
  teeny__kv_str(&e, "op", op);
  teeny__kv_u64(&e, "id", req->id);
  put_body(&e, req);
  return teeny__enc_end(&e, 0);
}
