/*
 * proto/msg_reply.c — replies: encode/decode of the envelope {id, status,
 * error, diagnostics, candidates} and of each op's body (PROTOCOL.md §4, §6).
 *
 * A reply does not name its op; the client knows it from the id, so the
 * decoder is told which body to expect (TEENY_OP_NONE: envelope only).
 * Bodies are read only when status is 0; error replies carry just the
 * envelope.  Encoders compute each map's size up front from the same
 * conditions the writers test, validate what the decoder would refuse, and
 * roll the buffer back on any failure.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "proto/mp.h"

#define MAX_PARAMS 1024 /* entry point parameters in a compile reply */

static const char *const cache_names[] = {"miss", "memory", "disk", "joined"};
static const char *const level_names[] = {"error", "warning", "note"};
static const char *const kind_names[] = {"scalar", "pointer", "tensormap"};

/* Element i of array a as a field named "name[i]" (written into buf). */
static teeny__field element(const msgpack_object *a, uint32_t i,
                            const char *name, char *buf, size_t size) {
  snprintf(buf, size, "%s[%u]", name, (unsigned)i);
  teeny__field f = {buf, &a->via.array.ptr[i]};
  return f;
}

/* A string copied into memory the reply owns, as a mutable pointer. */
static int get_owned(teeny__dec *d, const char *where, const teeny__field *f,
                     size_t maxlen, char **out) {
  const char *s = NULL;
  int rc = teeny__get_str(d, where, f, true, maxlen, &s);
  if (rc == 0)
    *out = (char *)s;
  return rc;
}

/* ---- decoding: shared pieces --------------------------------------------------- */

enum { G_LEVEL, G_FILE, G_LINE, G_COL, G_MESSAGE, G_SOURCE_LINE, G__N };

static int decode_diag(teeny__dec *d, const char *where,
                       const msgpack_object *m, teeny_diag *g) {
  teeny__field f[G__N] = {{"level", NULL}, {"file", NULL},    {"line", NULL},
                          {"col", NULL},   {"message", NULL}, {"source_line", NULL}};
  int level = 0;
  const char *line = NULL;
  int rc = teeny__dec_fields(d, m, where, f, G__N);
  if (!rc)
    rc = teeny__get_enum(d, where, &f[G_LEVEL], true, level_names, 3, &level);
  if (!rc)
    rc = get_owned(d, where, &f[G_FILE], TEENY_PROTO_MAX_TEXT, &g->file);
  if (!rc)
    rc = teeny__get_int(d, where, &f[G_LINE], true, 0, INT32_MAX, &g->line);
  if (!rc)
    rc = teeny__get_int(d, where, &f[G_COL], true, 0, INT32_MAX, &g->col);
  if (!rc)
    rc = get_owned(d, where, &f[G_MESSAGE], TEENY_PROTO_MAX_TEXT, &g->message);
  if (!rc)
    rc = teeny__get_str(d, where, &f[G_SOURCE_LINE], false, TEENY_PROTO_MAX_TEXT,
                        &line);
  g->level = (teeny_diag_level)level;
  g->source_line = (char *)line;
  return rc;
}

/* Every element of array a must be a map; decode(i) reads element i. */
static int decode_maps(teeny__dec *d, const msgpack_object *a, const char *name,
                       void *items, size_t size,
                       int (*decode)(teeny__dec *, const char *,
                                     const msgpack_object *, void *)) {
  for (uint32_t i = 0; i < a->via.array.size; i++) {
    char where[64];
    teeny__field e = element(a, i, name, where, sizeof where);
    const msgpack_object *m = NULL;
    int rc = teeny__get_map(d, NULL, &e, true, SIZE_MAX, &m);
    if (!rc)
      rc = decode(d, where, m, (char *)items + i * size);
    if (rc)
      return rc;
  }
  return 0;
}

/* Decode a required-or-optional array of maps into a new array. */
static int decode_list_of(teeny__dec *d, const teeny__field *f, bool required,
                          size_t max, size_t size,
                          int (*decode)(teeny__dec *, const char *,
                                        const msgpack_object *, void *),
                          void **out, size_t *n) {
  const msgpack_object *a = NULL;
  int rc = teeny__get_array(d, NULL, f, required, max, &a);
  if (rc || !a || a->via.array.size == 0)
    return rc;
  void *items = teeny__mem_array(d->mem, a->via.array.size, size);
  if (!items)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  rc = decode_maps(d, a, f->name, items, size, decode);
  if (rc)
    return rc;
  *out = items;
  *n = a->via.array.size;
  return 0;
}

static int diag_item(teeny__dec *d, const char *where, const msgpack_object *m,
                     void *item) {
  return decode_diag(d, where, m, item);
}

static int decode_candidates(teeny__dec *d, const teeny__field *f,
                             teeny_msg_reply *r) {
  const msgpack_object *a = NULL;
  int rc = teeny__get_array(d, NULL, f, false, SIZE_MAX, &a);
  if (rc || !a || a->via.array.size == 0)
    return rc;
  const char **v = teeny__mem_array(d->mem, a->via.array.size, sizeof *v);
  if (!v)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < a->via.array.size; i++) {
    char name[48];
    teeny__field e = element(a, i, "candidates", name, sizeof name);
    rc = teeny__get_str(d, NULL, &e, true, TEENY_PROTO_MAX_NAME, &v[i]);
    if (rc)
      return rc;
  }
  r->candidates = v;
  r->ncandidates = a->via.array.size;
  return 0;
}

enum { E_KEY, E_NAME, E_ID, E_TARGET, E_WARPS, E_SIZE, E_CREATED, E_USED,
       E_HITS, E_MS, E_CUBINS, E_CUBIN_BYTES, E__N };

static int decode_entry(teeny__dec *d, const char *where,
                        const msgpack_object *m, void *item) {
  teeny_msg_entry *en = item;
  teeny__field f[E__N] = {
      {"key", NULL},     {"name", NULL},    {"id", NULL},
      {"target", NULL},  {"num_warps", NULL}, {"size", NULL},
      {"created", NULL}, {"last_used", NULL}, {"hits", NULL},
      {"compile_ms", NULL}, {"cubins", NULL}, {"cubin_bytes", NULL}};
  int rc = teeny__dec_fields(d, m, where, f, E__N);
  if (!rc)
    rc = teeny__get_key(d, where, &f[E_KEY], true, en->key);
  if (!rc)
    rc = teeny__get_str(d, where, &f[E_NAME], true, TEENY_PROTO_MAX_NAME, &en->name);
  if (!rc)
    rc = teeny__get_str(d, where, &f[E_ID], true, TEENY_PROTO_MAX_TEXT, &en->id);
  if (!rc)
    rc = teeny__get_str(d, where, &f[E_TARGET], true, TEENY_PROTO_MAX_NAME,
                        &en->target);
  if (!rc)
    rc = teeny__get_int(d, where, &f[E_WARPS], true, 0, 1024, &en->num_warps);
  if (!rc)
    rc = teeny__get_u64(d, where, &f[E_SIZE], true, 0, UINT64_MAX, &en->size);
  if (!rc)
    rc = teeny__get_i64(d, where, &f[E_CREATED], true, INT64_MIN, INT64_MAX,
                        &en->created);
  if (!rc)
    rc = teeny__get_i64(d, where, &f[E_USED], true, INT64_MIN, INT64_MAX,
                        &en->last_used);
  if (!rc)
    rc = teeny__get_u64(d, where, &f[E_HITS], true, 0, UINT64_MAX, &en->hits);
  if (!rc)
    rc = teeny__get_ms(d, where, &f[E_MS], true, DBL_MAX, &en->compile_ms);
  if (!rc)
    rc = teeny__get_u32(d, where, &f[E_CUBINS], false, 0, UINT32_MAX, &en->cubins);
  if (!rc)
    rc = teeny__get_u64(d, where, &f[E_CUBIN_BYTES], false, 0, UINT64_MAX,
                        &en->cubin_bytes);
  return rc;
}

/* ---- decoding: bodies -------------------------------------------------------------- */

static int decode_hello(teeny__dec *d, const msgpack_object *root,
                        teeny_msg_hello_reply *h) {
  teeny__field f[] = {{"version", NULL}, {"server", NULL}, {"limits", NULL}};
  teeny__field l[] = {{"max_frame", NULL}, {"max_source", NULL},
                      {"max_inflight", NULL}};
  const msgpack_object *m = NULL;
  int rc = teeny__dec_fields(d, root, NULL, f, 3);
  if (!rc)
    rc = teeny__get_u32(d, NULL, &f[0], true, 0, UINT32_MAX, &h->version);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[1], true, TEENY_PROTO_MAX_NAME, &h->server);
  if (!rc)
    rc = teeny__get_map(d, NULL, &f[2], true, SIZE_MAX, &m);
  if (!rc)
    rc = teeny__dec_fields(d, m, "limits", l, 3);
  if (!rc)
    rc = teeny__get_u32(d, "limits", &l[0], true, 1, UINT32_MAX, &h->max_frame);
  if (!rc)
    rc = teeny__get_u32(d, "limits", &l[1], true, 0, UINT32_MAX, &h->max_source);
  if (!rc)
    rc = teeny__get_u32(d, "limits", &l[2], true, 1, UINT32_MAX,
                        &h->max_inflight);
  return rc;
}

static int decode_dtype(teeny__dec *d, const char *where, const teeny__field *f,
                        teeny_dtype *out) {
  const char *s = NULL;
  int rc = teeny__get_str(d, where, f, true, 16, &s);
  if (rc)
    return rc;
  teeny_dtype dt = teeny_dtype_parse(s);
  if (dt == TEENY_DT_VOID || dt == TEENY_DT_PTR)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s.dtype': unknown dtype",
                           where);
  *out = dt;
  return 0;
}

static int param_item(teeny__dec *d, const char *where, const msgpack_object *m,
                      void *item) {
  teeny_param *p = item;
  teeny__field f[] = {{"name", NULL}, {"kind", NULL}, {"dtype", NULL}};
  int kind = 0;
  int rc = teeny__dec_fields(d, m, where, f, 3);
  if (!rc)
    rc = get_owned(d, where, &f[0], TEENY_PROTO_MAX_NAME, &p->name);
  if (!rc)
    rc = teeny__get_enum(d, where, &f[1], true, kind_names, 3, &kind);
  if (!rc)
    rc = decode_dtype(d, where, &f[2], &p->dtype);
  p->kind = (teeny_param_kind)kind;
  return rc;
}

/* Optional artifact text: *p stays NULL when absent. */
static int get_text(teeny__dec *d, const teeny__field *f, char **p, size_t *n) {
  const char *s = NULL;
  int rc = teeny__get_blob(d, NULL, f, false, SIZE_MAX, false, &s, n);
  if (rc == 0)
    *p = (char *)s;
  return rc;
}

/* cubin, cubin_arch, cubin_toolchain: all three or none (f points at the
 * first of them). */
static int decode_cubin(teeny__dec *d, const teeny__field *f,
                        teeny_msg_compile_reply *c) {
  int rc = teeny__get_blob(d, NULL, &f[0], false, SIZE_MAX, false, &c->cubin,
                           &c->cubin_len);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[1], c->cubin != NULL, TEENY_PROTO_MAX_NAME,
                        &c->cubin_arch);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[2], c->cubin != NULL, TEENY_PROTO_MAX_NAME,
                        &c->cubin_toolchain);
  if (!rc && !c->cubin)
    c->cubin_arch = c->cubin_toolchain = NULL;
  return rc;
}

enum { K_KEY, K_ENTRY, K_ID, K_NAME, K_TARGET, K_WARPS, K_PTX, K_MLIR, K_SOURCE,
       K_PARAMS, K_THREADS, K_SHARED, K_CACHE, K_MS, K_CUBIN, K_CUBIN_ARCH,
       K_CUBIN_TC, K__N };

static int decode_compile(teeny__dec *d, const msgpack_object *root,
                          teeny_msg_compile_reply *c) {
  teeny__field f[K__N] = {
      {"key", NULL},   {"entry", NULL}, {"artifact_id", NULL}, {"name", NULL},
      {"target", NULL}, {"num_warps", NULL}, {"ptx", NULL}, {"mlir", NULL},
      {"source", NULL}, {"params", NULL}, {"threads_per_block", NULL},
      {"shared_bytes", NULL}, {"cache", NULL}, {"compile_ms", NULL},
      {"cubin", NULL}, {"cubin_arch", NULL}, {"cubin_toolchain", NULL}};
  teeny_artifact *a = &c->art;
  int cache = 0;
  double ms = 0;
  int rc = teeny__dec_fields(d, root, NULL, f, K__N);
  if (!rc)
    rc = teeny__get_key(d, NULL, &f[K_KEY], true, a->key);
  if (!rc)
    rc = get_owned(d, NULL, &f[K_ENTRY], TEENY_PROTO_MAX_NAME, &a->entry);
  if (!rc)
    rc = get_owned(d, NULL, &f[K_ID], TEENY_PROTO_MAX_TEXT, &a->id);
  if (!rc)
    rc = get_owned(d, NULL, &f[K_NAME], TEENY_PROTO_MAX_NAME, &a->name);
  if (!rc)
    rc = get_owned(d, NULL, &f[K_TARGET], TEENY_PROTO_MAX_NAME, &a->target);
  if (!rc)
    rc = teeny__get_int(d, NULL, &f[K_WARPS], true, 0, 1024, &a->num_warps);
  if (!rc)
    rc = get_text(d, &f[K_PTX], &a->ptx, &a->ptx_len);
  if (!rc)
    rc = get_text(d, &f[K_MLIR], &a->mlir, &a->mlir_len);
  if (!rc)
    rc = get_text(d, &f[K_SOURCE], &a->source, &a->source_len);
  if (!rc)
    rc = decode_list_of(d, &f[K_PARAMS], true, MAX_PARAMS, sizeof *a->params,
                        param_item, (void **)&a->params, &a->nparams);
  if (!rc)
    rc = teeny__get_int(d, NULL, &f[K_THREADS], true, 0, 1 << 20,
                        &a->threads_per_block);
  if (!rc)
    rc = teeny__get_int(d, NULL, &f[K_SHARED], true, 0, INT32_MAX,
                        &a->shared_bytes);
  if (!rc)
    rc = teeny__get_enum(d, NULL, &f[K_CACHE], true, cache_names, 4, &cache);
  if (!rc)
    rc = teeny__get_ms(d, NULL, &f[K_MS], true, TEENY__ARTIFACT_MS_MAX, &ms);
  c->cache = (teeny_msg_cache)cache;
  a->compile_ns = (uint64_t)(ms * 1e6 + 0.5);
  if (!rc)
    rc = decode_cubin(d, &f[K_CUBIN], c);
  return rc;
}

static const struct {
  const char *name; /* wire name */
  size_t off;       /* offset in teeny_msg_stats_reply */
  bool ms;          /* a double (milliseconds), else a uint64_t */
} counters[] = {
    {"requests", offsetof(teeny_msg_stats_reply, requests), false},
    {"hits", offsetof(teeny_msg_stats_reply, hits), false},
    {"memory_hits", offsetof(teeny_msg_stats_reply, memory_hits), false},
    {"disk_hits", offsetof(teeny_msg_stats_reply, disk_hits), false},
    {"misses", offsetof(teeny_msg_stats_reply, misses), false},
    {"compiles", offsetof(teeny_msg_stats_reply, compiles), false},
    {"joins", offsetof(teeny_msg_stats_reply, joins), false},
    {"errors", offsetof(teeny_msg_stats_reply, errors), false},
    {"entries", offsetof(teeny_msg_stats_reply, entries), false},
    {"bytes", offsetof(teeny_msg_stats_reply, bytes), false},
    {"evictions", offsetof(teeny_msg_stats_reply, evictions), false},
    {"compile_ms_total", offsetof(teeny_msg_stats_reply, compile_ms_total), true},
    {"saved_ms_total", offsetof(teeny_msg_stats_reply, saved_ms_total), true},
    {"uptime_s", offsetof(teeny_msg_stats_reply, uptime_s), false},
};
#define NCOUNTERS TEENY_ARRAY_LEN(counters)

/* A known counter into its slot of s. */
static int known_counter(teeny__dec *d, size_t k, const teeny__field *f,
                         teeny_msg_stats_reply *s) {
  char *slot = (char *)s + counters[k].off;
  if (counters[k].ms)
    return teeny__get_ms(d, "counters", f, true, DBL_MAX, (double *)(void *)slot);
  return teeny__get_u64(d, "counters", f, true, 0, UINT64_MAX,
                        (uint64_t *)(void *)slot);
}

/* A further counter: any finite number. */
static int extra_counter(teeny__dec *d, const teeny__field *f,
                         teeny_msg_counter *c) {
  const msgpack_object *v = f->v;
  switch (v->type) {
  case MSGPACK_OBJECT_POSITIVE_INTEGER:
    c->value = (double)v->via.u64;
    return 0;
  case MSGPACK_OBJECT_NEGATIVE_INTEGER:
    c->value = (double)v->via.i64;
    return 0;
  case MSGPACK_OBJECT_FLOAT32:
  case MSGPACK_OBJECT_FLOAT64:
    if (isfinite(v->via.f64)) {
      c->value = v->via.f64;
      return 0;
    }
    break;
  default:
    break;
  }
  char ex[TEENY__EXCERPT_LEN];
  teeny__excerpt(c->name, strlen(c->name), ex);
  return teeny__dec_fail(d, TEENY_E_PROTO, "field 'counters.%s': expected a "
                         "finite number", ex);
}

static int counter_index(const msgpack_object *key) {
  for (size_t k = 0; k < NCOUNTERS; k++)
    if (strlen(counters[k].name) == key->via.str.size &&
        memcmp(counters[k].name, key->via.str.ptr, key->via.str.size) == 0)
      return (int)k;
  return -1;
}

static int decode_counter(teeny__dec *d, const msgpack_object_kv *kv,
                          teeny_msg_stats_reply *s, uint32_t *seen) {
  teeny__field key = {"counters", &kv->key};
  const char *name = NULL;
  int rc = teeny__get_str(d, NULL, &key, true, TEENY_PROTO_MAX_NAME, &name);
  if (rc)
    return rc;
  int k = counter_index(&kv->key);
  if (k < 0) {
    teeny_msg_counter *c = &s->extra[s->nextra++];
    c->name = name;
    teeny__field v = {name, &kv->val};
    return extra_counter(d, &v, c);
  }
  if (*seen & (1u << k))
    return teeny__dec_fail(d, TEENY_E_PROTO, "duplicate field 'counters.%s'",
                           name);
  *seen |= 1u << k;
  teeny__field v = {counters[k].name, &kv->val};
  return known_counter(d, (size_t)k, &v, s);
}

static int decode_stats(teeny__dec *d, const msgpack_object *root,
                        teeny_msg_stats_reply *s) {
  teeny__field f[] = {{"counters", NULL}};
  const msgpack_object *m = NULL;
  int rc = teeny__dec_fields(d, root, NULL, f, 1);
  if (!rc)
    rc = teeny__get_map(d, NULL, &f[0], true, SIZE_MAX, &m);
  if (rc)
    return rc;
  s->extra = teeny__mem_array(d->mem, m->via.map.size, sizeof *s->extra);
  if (!s->extra)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  uint32_t seen = 0;
  for (uint32_t i = 0; i < m->via.map.size; i++) {
    rc = decode_counter(d, &m->via.map.ptr[i], s, &seen);
    if (rc)
      return rc;
  }
  for (size_t k = 0; k < NCOUNTERS; k++)
    if (!(seen & (1u << k)))
      return teeny__dec_fail(d, TEENY_E_PROTO, "missing field 'counters.%s'",
                             counters[k].name);
  return teeny__decode_stats_more(d, root, s);
}

static int decode_list(teeny__dec *d, const msgpack_object *root,
                       teeny_msg_list_reply *l) {
  teeny__field f[] = {{"entries", NULL}, {"next", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 2);
  if (!rc)
    rc = decode_list_of(d, &f[0], true, SIZE_MAX, sizeof *l->entries,
                        decode_entry, (void **)&l->entries, &l->nentries);
  if (!rc)
    rc = teeny__get_str(d, NULL, &f[1], false, TEENY_PROTO_MAX_CURSOR,
                        &l->next);
  return rc;
}

static int get_const_text(teeny__dec *d, const teeny__field *f, const char **p,
                          size_t *n) {
  return teeny__get_blob(d, NULL, f, false, SIZE_MAX, false, p, n);
}

static int cubin_item(teeny__dec *d, const char *where, const msgpack_object *m,
                      void *item) {
  teeny_msg_cubin *c = item;
  teeny__field f[] = {{"arch", NULL}, {"toolchain", NULL}, {"size", NULL},
                      {"created", NULL}, {"sass_ms", NULL}};
  int rc = teeny__dec_fields(d, m, where, f, 5);
  if (!rc)
    rc = teeny__get_str(d, where, &f[0], true, TEENY_PROTO_MAX_NAME, &c->arch);
  if (!rc)
    rc = teeny__get_str(d, where, &f[1], true, TEENY_PROTO_MAX_NAME, &c->toolchain);
  if (!rc)
    rc = teeny__get_u64(d, where, &f[2], true, 0, UINT64_MAX, &c->size);
  if (!rc)
    rc = teeny__get_i64(d, where, &f[3], true, INT64_MIN, INT64_MAX, &c->created);
  if (!rc)
    rc = teeny__get_ms(d, where, &f[4], true, DBL_MAX, &c->sass_ms);
  return rc;
}

static int decode_show(teeny__dec *d, const msgpack_object *root,
                       teeny_msg_show_reply *s) {
  teeny__field f[] = {{"entry", NULL}, {"source", NULL}, {"mlir", NULL},
                      {"ptx", NULL}, {"cubins", NULL}, {"cubin", NULL}};
  const msgpack_object *m = NULL;
  int rc = teeny__dec_fields(d, root, NULL, f, 6);
  if (!rc)
    rc = teeny__get_map(d, NULL, &f[0], true, SIZE_MAX, &m);
  if (!rc)
    rc = decode_entry(d, "entry", m, &s->entry);
  if (!rc)
    rc = get_const_text(d, &f[1], &s->source, &s->source_len);
  if (!rc)
    rc = get_const_text(d, &f[2], &s->mlir, &s->mlir_len);
  if (!rc)
    rc = get_const_text(d, &f[3], &s->ptx, &s->ptx_len);
  if (!rc)
    rc = decode_list_of(d, &f[4], false, SIZE_MAX, sizeof *s->cubins, cubin_item,
                        (void **)&s->cubins, &s->ncubins);
  if (!rc)
    rc = get_const_text(d, &f[5], &s->cubin, &s->cubin_len);
  return rc;
}

static int decode_purge(teeny__dec *d, const msgpack_object *root,
                        teeny_msg_purge_reply *p) {
  teeny__field f[] = {{"removed", NULL}, {"bytes", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 2);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[0], true, 0, UINT64_MAX, &p->removed);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[1], true, 0, UINT64_MAX, &p->bytes);
  return rc;
}

static int problem_item(teeny__dec *d, const char *where,
                        const msgpack_object *m, void *item) {
  teeny_msg_problem *p = item;
  teeny__field f[] = {{"key", NULL}, {"problem", NULL}};
  int rc = teeny__dec_fields(d, m, where, f, 2);
  if (!rc)
    rc = teeny__get_str(d, where, &f[0], true, TEENY_PROTO_MAX_TEXT, &p->key);
  if (!rc)
    rc = teeny__get_str(d, where, &f[1], true, TEENY_PROTO_MAX_TEXT, &p->problem);
  return rc;
}

static int decode_verify(teeny__dec *d, const msgpack_object *root,
                         teeny_msg_verify_reply *v) {
  teeny__field f[] = {{"checked", NULL}, {"problems", NULL}, {"repaired", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, 3);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[0], true, 0, UINT64_MAX, &v->checked);
  if (!rc)
    rc = decode_list_of(d, &f[1], true, SIZE_MAX, sizeof *v->problems,
                        problem_item, (void **)&v->problems, &v->nproblems);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[2], true, 0, UINT64_MAX, &v->repaired);
  return rc;
}

static int decode_body(teeny__dec *d, const msgpack_object *root,
                       teeny_msg_reply *r) {
  switch (r->op) {
  case TEENY_OP_HELLO:
    return decode_hello(d, root, &r->u.hello);
  case TEENY_OP_COMPILE:
    return decode_compile(d, root, &r->u.compile);
  case TEENY_OP_STATS:
    return decode_stats(d, root, &r->u.stats);
  case TEENY_OP_CONFIG:
    return teeny__decode_config_reply(d, root, &r->u.config);
  case TEENY_OP_LIST:
    return decode_list(d, root, &r->u.list);
  case TEENY_OP_SHOW:
    return decode_show(d, root, &r->u.show);
  case TEENY_OP_PURGE:
    return decode_purge(d, root, &r->u.purge);
  case TEENY_OP_VERIFY:
    return decode_verify(d, root, &r->u.verify);
  case TEENY_OP_TUNE:
  case TEENY_OP_TUNED:
  case TEENY_OP_TUNED_PURGE:
    return teeny__decode_tune_reply(d, root, r);
  default:
    return 0; /* none, ping, shutdown, tune_done: no body */
  }
}

enum { V_ID, V_STATUS, V_ERROR, V_DIAGS, V_CANDIDATES, V__N };

static int decode_envelope(teeny__dec *d, const msgpack_object *root,
                           teeny_msg_reply *r) {
  teeny__field f[V__N] = {{"id", NULL}, {"status", NULL}, {"error", NULL},
                          {"diagnostics", NULL}, {"candidates", NULL}};
  int rc = teeny__dec_fields(d, root, NULL, f, V__N);
  if (!rc)
    rc = teeny__get_u64(d, NULL, &f[V_ID], true, 0, UINT64_MAX, &r->id);
  if (!rc)
    rc = teeny__get_int(d, NULL, &f[V_STATUS], true, INT32_MIN, 0, &r->status);
  if (!rc && r->status < 0)
    rc = teeny__get_str(d, NULL, &f[V_ERROR], true, TEENY_PROTO_MAX_TEXT,
                        &r->error);
  if (!rc)
    rc = decode_list_of(d, &f[V_DIAGS], false, SIZE_MAX, sizeof *r->diags,
                        diag_item, (void **)&r->diags, &r->ndiags);
  if (!rc)
    rc = decode_candidates(d, &f[V_CANDIDATES], r);
  return rc;
}

int teeny_msg_reply_decode(const void *payload, size_t len, teeny_proto_op op,
                           teeny_msg_reply *reply, char *err) {
  memset(reply, 0, sizeof *reply);
  if ((int)op < 0 || op >= TEENY_OP__COUNT) {
    if (err)
      snprintf(err, TEENY_PROTO_ERR_LEN, "no such op %d", (int)op);
    return TEENY_E_INVAL;
  }
  reply->op = op;
  teeny__dec d;
  const msgpack_object *root = NULL;
  int rc = teeny__dec_open(&d, &reply->mem, err, payload, len, &root);
  if (rc)
    goto fail;
  rc = decode_envelope(&d, root, reply);
  if (rc)
    goto fail;
  if (reply->status == 0 && (rc = decode_body(&d, root, reply)) != 0)
    goto fail;
  teeny__dec_close(&d);
  return 0;
fail:
  teeny__dec_close(&d);
  teeny__mem_free(&reply->mem);
  uint64_t id = reply->id;
  memset(reply, 0, sizeof *reply);
  reply->op = op;
  reply->id = id;
  return rc;
}

void teeny_msg_reply_free(teeny_msg_reply *reply) {
  if (!reply)
    return;
  teeny__mem_free(&reply->mem);
  memset(reply, 0, sizeof *reply);
}

/* ---- encoding ------------------------------------------------------------------ */

static bool key_ok(const char *key) {
  for (int i = 0; i < 64; i++) {
    char c = key[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  }
  return key[64] == '\0';
}

static bool name_ok(const char *s) { return teeny__str_ok(s, TEENY_PROTO_MAX_NAME); }
static bool text_ok(const char *s) { return teeny__str_ok(s, TEENY_PROTO_MAX_TEXT); }

static bool entry_ok(const teeny_msg_entry *en) {
  return key_ok(en->key) && name_ok(en->name) && text_ok(en->id) &&
         name_ok(en->target) && en->num_warps >= 0 && en->num_warps <= 1024 &&
         isfinite(en->compile_ms) && en->compile_ms >= 0;
}

static void put_entry(teeny__enc *e, const teeny_msg_entry *en) {
  teeny__put_map(e, E__N); /* cubins and cubin_bytes always: 0 is news too */
  teeny__kv_str(e, "key", en->key);
  teeny__kv_str(e, "name", en->name);
  teeny__kv_str(e, "id", en->id);
  teeny__kv_str(e, "target", en->target);
  teeny__kv_i64(e, "num_warps", en->num_warps);
  teeny__kv_u64(e, "size", en->size);
  teeny__kv_i64(e, "created", en->created);
  teeny__kv_i64(e, "last_used", en->last_used);
  teeny__kv_u64(e, "hits", en->hits);
  teeny__kv_f64(e, "compile_ms", en->compile_ms);
  teeny__kv_u64(e, "cubins", en->cubins);
  teeny__kv_u64(e, "cubin_bytes", en->cubin_bytes);
}

static bool params_ok(const teeny_artifact *a) {
  if (a->nparams > MAX_PARAMS || (a->nparams && !a->params))
    return false;
  for (size_t i = 0; i < a->nparams; i++) {
    const teeny_param *p = &a->params[i];
    teeny_dtype dt = p->dtype;
    if (!name_ok(p->name) || (unsigned)p->kind > TEENY_PARAM_TENSORMAP ||
        !teeny_dtype_name(dt) || dt == TEENY_DT_VOID || dt == TEENY_DT_PTR)
      return false;
  }
  return true;
}

static bool compile_ok(const teeny_msg_compile_reply *c) {
  const teeny_artifact *a = &c->art;
  return key_ok(a->key) && name_ok(a->entry) && text_ok(a->id) &&
         name_ok(a->name) && name_ok(a->target) && a->num_warps >= 0 &&
         a->num_warps <= 1024 && a->threads_per_block >= 0 &&
         a->threads_per_block <= (1 << 20) && a->shared_bytes >= 0 &&
         (unsigned)c->cache < TEENY_ARRAY_LEN(cache_names) && params_ok(a) &&
         a->compile_ns <= (uint64_t)(TEENY__ARTIFACT_MS_MAX * 1e6) &&
         (!c->cubin || (name_ok(c->cubin_arch) && name_ok(c->cubin_toolchain)));
}

static void put_params(teeny__enc *e, const teeny_artifact *a) {
  teeny__put_str(e, "params");
  teeny__put_array(e, a->nparams);
  for (size_t i = 0; i < a->nparams; i++) {
    teeny__put_map(e, 3);
    teeny__kv_str(e, "name", a->params[i].name);
    teeny__kv_str(e, "kind", kind_names[a->params[i].kind]);
    teeny__kv_str(e, "dtype", teeny_dtype_name(a->params[i].dtype));
  }
}

static void put_compile(teeny__enc *e, const teeny_msg_compile_reply *c) {
  const teeny_artifact *a = &c->art;
  teeny__kv_str(e, "key", a->key);
  teeny__kv_str(e, "entry", a->entry);
  teeny__kv_str(e, "artifact_id", a->id);
  teeny__kv_str(e, "name", a->name);
  teeny__kv_str(e, "target", a->target);
  teeny__kv_i64(e, "num_warps", a->num_warps);
  if (a->ptx)
    teeny__kv_bin(e, "ptx", a->ptx, a->ptx_len);
  if (a->mlir)
    teeny__kv_bin(e, "mlir", a->mlir, a->mlir_len);
  if (a->source)
    teeny__kv_bin(e, "source", a->source, a->source_len);
  put_params(e, a);
  teeny__kv_i64(e, "threads_per_block", a->threads_per_block);
  teeny__kv_i64(e, "shared_bytes", a->shared_bytes);
  teeny__kv_str(e, "cache", cache_names[c->cache]);
  teeny__kv_f64(e, "compile_ms", (double)a->compile_ns / 1e6);
  if (c->cubin) {
    teeny__kv_bin(e, "cubin", c->cubin, c->cubin_len);
    teeny__kv_str(e, "cubin_arch", c->cubin_arch);
    teeny__kv_str(e, "cubin_toolchain", c->cubin_toolchain);
  }
}

static bool stats_ok(const teeny_msg_stats_reply *s) {
  if (!isfinite(s->compile_ms_total) || s->compile_ms_total < 0 ||
      !isfinite(s->saved_ms_total) || s->saved_ms_total < 0 ||
      (s->nextra && !s->extra))
    return false;
  for (size_t i = 0; i < s->nextra; i++)
    if (!name_ok(s->extra[i].name) || !isfinite(s->extra[i].value))
      return false;
  return true;
}

/* Integral values that a double holds exactly go out as integers. */
static void put_number(teeny__enc *e, double v) {
  if (v == floor(v) && fabs(v) < 9007199254740992.0)
    teeny__put_i64(e, (int64_t)v);
  else
    teeny__put_f64(e, v);
}

static void put_stats(teeny__enc *e, const teeny_msg_stats_reply *s) {
  teeny__put_str(e, "counters");
  teeny__put_map(e, NCOUNTERS + s->nextra);
  for (size_t k = 0; k < NCOUNTERS; k++) {
    const char *slot = (const char *)s + counters[k].off;
    teeny__put_str(e, counters[k].name);
    if (counters[k].ms)
      teeny__put_f64(e, *(const double *)(const void *)slot);
    else
      teeny__put_u64(e, *(const uint64_t *)(const void *)slot);
  }
  for (size_t i = 0; i < s->nextra; i++) {
    teeny__put_str(e, s->extra[i].name);
    put_number(e, s->extra[i].value);
  }
  teeny__put_stats_more(e, s);
}

static bool list_ok(const teeny_msg_list_reply *l) {
  if ((l->nentries && !l->entries) ||
      (l->next && !teeny__str_ok(l->next, TEENY_PROTO_MAX_CURSOR)))
    return false;
  for (size_t i = 0; i < l->nentries; i++)
    if (!entry_ok(&l->entries[i]))
      return false;
  return true;
}

static void put_list(teeny__enc *e, const teeny_msg_list_reply *l) {
  teeny__put_str(e, "entries");
  teeny__put_array(e, l->nentries);
  for (size_t i = 0; i < l->nentries; i++)
    put_entry(e, &l->entries[i]);
  if (l->next)
    teeny__kv_str(e, "next", l->next);
}

static bool cubins_ok(const teeny_msg_show_reply *s) {
  if (s->ncubins && !s->cubins)
    return false;
  for (size_t i = 0; i < s->ncubins; i++)
    if (!name_ok(s->cubins[i].arch) || !name_ok(s->cubins[i].toolchain) ||
        !isfinite(s->cubins[i].sass_ms) || s->cubins[i].sass_ms < 0)
      return false;
  return true;
}

static void put_cubins(teeny__enc *e, const teeny_msg_show_reply *s) {
  teeny__put_str(e, "cubins");
  teeny__put_array(e, s->ncubins);
  for (size_t i = 0; i < s->ncubins; i++) {
    const teeny_msg_cubin *c = &s->cubins[i];
    teeny__put_map(e, 5);
    teeny__kv_str(e, "arch", c->arch);
    teeny__kv_str(e, "toolchain", c->toolchain);
    teeny__kv_u64(e, "size", c->size);
    teeny__kv_i64(e, "created", c->created);
    teeny__kv_f64(e, "sass_ms", c->sass_ms);
  }
}

static void put_show(teeny__enc *e, const teeny_msg_show_reply *s) {
  teeny__put_str(e, "entry");
  put_entry(e, &s->entry);
  put_cubins(e, s);
  if (s->cubin)
    teeny__kv_bin(e, "cubin", s->cubin, s->cubin_len);
  if (s->source)
    teeny__kv_bin(e, "source", s->source, s->source_len);
  if (s->mlir)
    teeny__kv_bin(e, "mlir", s->mlir, s->mlir_len);
  if (s->ptx)
    teeny__kv_bin(e, "ptx", s->ptx, s->ptx_len);
}

static bool verify_ok(const teeny_msg_verify_reply *v) {
  if (v->nproblems && !v->problems)
    return false;
  for (size_t i = 0; i < v->nproblems; i++)
    if (!text_ok(v->problems[i].key) || !text_ok(v->problems[i].problem))
      return false;
  return true;
}

static void put_verify(teeny__enc *e, const teeny_msg_verify_reply *v) {
  teeny__kv_u64(e, "checked", v->checked);
  teeny__put_str(e, "problems");
  teeny__put_array(e, v->nproblems);
  for (size_t i = 0; i < v->nproblems; i++) {
    teeny__put_map(e, 2);
    teeny__kv_str(e, "key", v->problems[i].key);
    teeny__kv_str(e, "problem", v->problems[i].problem);
  }
  teeny__kv_u64(e, "repaired", v->repaired);
}

static void put_hello(teeny__enc *e, const teeny_msg_hello_reply *h) {
  teeny__kv_u64(e, "version", h->version);
  teeny__kv_str(e, "server", h->server);
  teeny__put_str(e, "limits");
  teeny__put_map(e, 3);
  teeny__kv_u64(e, "max_frame", h->max_frame);
  teeny__kv_u64(e, "max_source", h->max_source);
  teeny__kv_u64(e, "max_inflight", h->max_inflight);
}

/* Validate the body of an ok reply and count its fields.  -1: invalid. */
static int body_fields(const teeny_msg_reply *r) {
  const teeny_msg_show_reply *s = &r->u.show;
  const teeny_artifact *a = &r->u.compile.art;
  switch (r->op) {
  case TEENY_OP_HELLO:
    return name_ok(r->u.hello.server) && r->u.hello.max_frame &&
           r->u.hello.max_inflight ? 3 : -1;
  case TEENY_OP_COMPILE:
    return compile_ok(&r->u.compile)
               ? 11 + (a->ptx != NULL) + (a->mlir != NULL) + (a->source != NULL) +
                     3 * (r->u.compile.cubin != NULL)
               : -1;
  case TEENY_OP_STATS: {
    int more = teeny__stats_more_fields(&r->u.stats);
    return stats_ok(&r->u.stats) && more >= 0 ? 1 + more : -1;
  }
  case TEENY_OP_CONFIG:
    return teeny__config_reply_fields(&r->u.config);
  case TEENY_OP_LIST:
    return list_ok(&r->u.list) ? 1 + (r->u.list.next != NULL) : -1;
  case TEENY_OP_SHOW:
    return entry_ok(&s->entry) && cubins_ok(s)
               ? 2 + (s->source != NULL) + (s->mlir != NULL) + (s->ptx != NULL) +
                     (s->cubin != NULL)
               : -1;
  case TEENY_OP_PURGE:
    return 2;
  case TEENY_OP_VERIFY:
    return verify_ok(&r->u.verify) ? 3 : -1;
  case TEENY_OP_TUNE:
  case TEENY_OP_TUNED:
  case TEENY_OP_TUNED_PURGE:
    return teeny__tune_reply_fields(r);
  default:
    return 0;
  }
}

static void put_body(teeny__enc *e, const teeny_msg_reply *r) {
  switch (r->op) {
  case TEENY_OP_HELLO:
    put_hello(e, &r->u.hello);
    break;
  case TEENY_OP_COMPILE:
    put_compile(e, &r->u.compile);
    break;
  case TEENY_OP_STATS:
    put_stats(e, &r->u.stats);
    break;
  case TEENY_OP_CONFIG:
    teeny__put_config_reply(e, &r->u.config);
    break;
  case TEENY_OP_LIST:
    put_list(e, &r->u.list);
    break;
  case TEENY_OP_SHOW:
    put_show(e, &r->u.show);
    break;
  case TEENY_OP_PURGE:
    teeny__kv_u64(e, "removed", r->u.purge.removed);
    teeny__kv_u64(e, "bytes", r->u.purge.bytes);
    break;
  case TEENY_OP_VERIFY:
    put_verify(e, &r->u.verify);
    break;
  case TEENY_OP_TUNE:
  case TEENY_OP_TUNED:
  case TEENY_OP_TUNED_PURGE:
    teeny__put_tune_reply(e, r);
    break;
  default:
    break;
  }
}

static bool diags_ok(const teeny_msg_reply *r) {
  if (r->ndiags && !r->diags)
    return false;
  for (size_t i = 0; i < r->ndiags; i++) {
    const teeny_diag *g = &r->diags[i];
    if ((unsigned)g->level > TEENY_DIAG_NOTE || g->line < 0 || g->col < 0 ||
        (g->file && !text_ok(g->file)) || (g->message && !text_ok(g->message)) ||
        (g->source_line && !text_ok(g->source_line)))
      return false;
  }
  return true;
}

static void put_diags(teeny__enc *e, const teeny_msg_reply *r) {
  teeny__put_str(e, "diagnostics");
  teeny__put_array(e, r->ndiags);
  for (size_t i = 0; i < r->ndiags; i++) {
    const teeny_diag *g = &r->diags[i];
    teeny__put_map(e, 5 + (g->source_line != NULL));
    teeny__kv_str(e, "level", level_names[g->level]);
    teeny__kv_str(e, "file", g->file ? g->file : "<source>");
    teeny__kv_i64(e, "line", g->line);
    teeny__kv_i64(e, "col", g->col);
    teeny__kv_str(e, "message", g->message ? g->message : "");
    if (g->source_line)
      teeny__kv_str(e, "source_line", g->source_line);
  }
}

static bool candidates_ok(const teeny_msg_reply *r) {
  if (r->ncandidates && !r->candidates)
    return false;
  for (size_t i = 0; i < r->ncandidates; i++)
    if (!name_ok(r->candidates[i]))
      return false;
  return true;
}

static void put_candidates(teeny__enc *e, const teeny_msg_reply *r) {
  teeny__put_str(e, "candidates");
  teeny__put_array(e, r->ncandidates);
  for (size_t i = 0; i < r->ncandidates; i++)
    teeny__put_str(e, r->candidates[i]);
}

/* The error message an error reply carries. */
static const char *error_text(const teeny_msg_reply *r) {
  return r->error ? r->error : teeny_strerror(r->status);
}

static int reply_fields(const teeny_msg_reply *r) {
  if (r->status > 0 || (int)r->op < 0 || r->op >= TEENY_OP__COUNT ||
      !diags_ok(r) || !candidates_ok(r))
    return -1;
  if (r->status < 0)
    return text_ok(error_text(r)) ? 1 : -1;
  return body_fields(r);
}

int teeny_msg_reply_encode(const teeny_msg_reply *reply, teeny_buf *out) {
  int body = reply_fields(reply);
  if (body < 0)
    return TEENY_E_INVAL;
  teeny__enc e;
  teeny__enc_init(&e, out);
  teeny__put_map(&e, 2 + (size_t)body + (reply->ndiags > 0) +
                         (reply->ncandidates > 0));
  teeny__kv_u64(&e, "id", reply->id);
  teeny__kv_i64(&e, "status", reply->status);
  if (reply->status < 0)
    teeny__kv_str(&e, "error", error_text(reply));
  else
    put_body(&e, reply);
  if (reply->ndiags)
    put_diags(&e, reply);
  if (reply->ncandidates)
    put_candidates(&e, reply);
  return teeny__enc_end(&e, 0);
}

int teeny_msg_error_encode(teeny_buf *out, uint64_t id, int status,
                           const char *message) {
  if (status >= 0)
    return TEENY_E_INVAL;
  teeny_msg_reply r;
  memset(&r, 0, sizeof r);
  r.id = id;
  r.status = status;
  r.error = message;
  return teeny_msg_reply_encode(&r, out);
}
