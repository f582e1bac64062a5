/*
 * client/memo.c — the per-client memo: an exact compile request -> its
 * result, so a repeated identical compile costs no socket round trip.
 *
 * Exact means every field of the request is kept (one allocation holding
 * copies of the source, names and bindings) and compared byte for byte on
 * a hit; the hash only picks the chain.  Binding order is part of the
 * request, so {D, N} and {N, D} are two entries (a miss, never a wrong
 * hit).  Only successful results are kept.  Capacity is bounded; the
 * least recently used entry goes first.  A hit costs one hash over the
 * source (8 bytes per step), one memcmp of it, and two list pointer moves
 * under the memo's mutex: about a microsecond for a few KiB of source.
 */
#include <string.h>

#include "client/client_int.h"

struct teeny__memo_ent {
  teeny__memo_ent *chain;     /* next in the bucket */
  teeny__memo_ent *prev, *next; /* LRU list, head = most recent */
  uint64_t hash;              /* teeny__memo_hash of req */
  teeny_compile_req req;      /* deep copy; strings live after the struct */
  teeny__core *core;          /* the result (one reference) */
};

/* ---- hashing ------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  h = mix(h, n);
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  memcpy(&tail, s, n);
  return mix(h, tail);
}

static uint64_t hash_str(uint64_t h, const char *s) {
  return s ? hash_bytes(h, s, strlen(s)) : mix(h, 0x5bd1e995u);
}

uint64_t teeny__memo_hash(const teeny_compile_req *r) {
  uint64_t h = hash_bytes(0x243F6A8885A308D3ull, r->source, r->source_len);
  h = hash_str(h, r->filename);
  h = hash_str(h, r->kernel);
  h = hash_str(h, r->target);
  h = hash_str(h, r->compiler_version);
  h = mix(h, (uint64_t)r->num_warps);
  for (size_t i = 0; i < r->ndtypes; i++)
    h = hash_str(hash_str(h, r->dtypes[i].name), r->dtypes[i].dtype);
  for (size_t i = 0; i < r->nconsts; i++)
    h = mix(hash_str(h, r->consts[i].name), (uint64_t)r->consts[i].value);
  return mix(h, r->ndtypes * 131 + r->nconsts);
}

/* ---- comparing ------------------------------------------------------------ */

static bool str_eq(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static bool req_eq(const teeny_compile_req *a, const teeny_compile_req *b) {
  if (a->source_len != b->source_len || a->num_warps != b->num_warps ||
      a->ndtypes != b->ndtypes || a->nconsts != b->nconsts ||
      !str_eq(a->kernel, b->kernel) || !str_eq(a->filename, b->filename) ||
      !str_eq(a->target, b->target) ||
      !str_eq(a->compiler_version, b->compiler_version))
    return false;
  for (size_t i = 0; i < a->ndtypes; i++)
    if (!str_eq(a->dtypes[i].name, b->dtypes[i].name) ||
        !str_eq(a->dtypes[i].dtype, b->dtypes[i].dtype))
      return false;
  for (size_t i = 0; i < a->nconsts; i++)
    if (a->consts[i].value != b->consts[i].value ||
        !str_eq(a->consts[i].name, b->consts[i].name))
      return false;
  return a->source_len == 0 || memcmp(a->source, b->source, a->source_len) == 0;
}

/* ---- copying a request into one allocation -------------------------------------- */

typedef struct packer {
  char *p;    /* next free byte; NULL while only measuring */
  size_t n;   /* bytes needed so far */
} packer;

static const char *pack(packer *k, const void *s, size_t len, bool nul) {
  const char *at = k->p;
  if (k->p) {
    memcpy(k->p, s, len);
    if (nul)
      k->p[len] = '\0';
    k->p += len + nul;
  }
  k->n += len + nul;
  return at;
}

static const char *pack_str(packer *k, const char *s) {
  return s ? pack(k, s, strlen(s), true) : NULL;
}

/* Copy src's fields into dst (dtypes/consts arrays and strings from k). */
static void pack_req(packer *k, teeny_compile_req *dst, const teeny_compile_req *src,
                     teeny_dtype_binding *dt, teeny_const_binding *ct) {
  dst->source = pack(k, src->source ? src->source : "", src->source_len, false);
  dst->source_len = src->source_len;
  dst->filename = pack_str(k, src->filename);
  dst->kernel = pack_str(k, src->kernel);
  dst->target = pack_str(k, src->target);
  dst->compiler_version = pack_str(k, src->compiler_version);
  dst->num_warps = src->num_warps;
  dst->ndtypes = src->ndtypes;
  dst->nconsts = src->nconsts;
  dst->dtypes = dt;
  dst->consts = ct;
  for (size_t i = 0; i < src->ndtypes; i++) {
    const char *name = pack_str(k, src->dtypes[i].name);
    const char *v = pack_str(k, src->dtypes[i].dtype);
    if (dt)
      dt[i] = (teeny_dtype_binding){name, v};
  }
  for (size_t i = 0; i < src->nconsts; i++) {
    const char *name = pack_str(k, src->consts[i].name);
    if (ct)
      ct[i] = (teeny_const_binding){name, src->consts[i].value};
  }
}

static teeny__memo_ent *ent_new(const teeny_compile_req *req) {
  packer k = {NULL, 0};
  teeny_compile_req scratch;
  pack_req(&k, &scratch, req, NULL, NULL);
  size_t head = sizeof(teeny__memo_ent) + req->ndtypes * sizeof(teeny_dtype_binding) +
                req->nconsts * sizeof(teeny_const_binding);
  teeny__memo_ent *e = teeny__calloc(1, head + k.n);
  if (!e)
    return NULL;
  teeny_dtype_binding *dt = (teeny_dtype_binding *)(e + 1);
  teeny_const_binding *ct = (teeny_const_binding *)(dt + req->ndtypes);
  k.p = (char *)e + head;
  k.n = 0;
  pack_req(&k, &e->req, req, dt, ct);
  return e;
}

/* ---- the table and the LRU list ---------------------------------------------- */

static void lru_unlink(teeny__memo *m, teeny__memo_ent *e) {
  if (e->prev)
    e->prev->next = e->next;
  else
    m->lru_head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    m->lru_tail = e->prev;
  e->prev = e->next = NULL;
}

static void lru_push(teeny__memo *m, teeny__memo_ent *e) {
  e->next = m->lru_head;
  e->prev = NULL;
  if (m->lru_head)
    m->lru_head->prev = e;
  m->lru_head = e;
  if (!m->lru_tail)
    m->lru_tail = e;
}

static teeny__memo_ent **slot_of(teeny__memo *m, uint64_t hash) {
  return &m->buckets[hash & (m->nbuckets - 1)];
}

static void remove_ent(teeny__memo *m, teeny__memo_ent *e) {
  teeny__memo_ent **pp = slot_of(m, e->hash);
  while (*pp != e)
    pp = &(*pp)->chain;
  *pp = e->chain;
  lru_unlink(m, e);
  m->n--;
  teeny__core_unref(e->core);
  teeny__free(e);
}

int teeny__memo_init(teeny__memo *m, size_t cap) {
  memset(m, 0, sizeof *m);
  pthread_mutex_init(&m->lock, NULL);
  m->cap = cap;
  if (cap == 0)
    return 0;
  m->nbuckets = 16;
  while (m->nbuckets < cap && m->nbuckets < ((size_t)1 << 20))
    m->nbuckets <<= 1;
  m->buckets = teeny__calloc(m->nbuckets, sizeof *m->buckets);
  return m->buckets ? 0 : TEENY_E_NOMEM;
}

void teeny__memo_clear(teeny__memo *m) {
  pthread_mutex_lock(&m->lock);
  while (m->lru_head)
    remove_ent(m, m->lru_head);
  pthread_mutex_unlock(&m->lock);
}

void teeny__memo_close(teeny__memo *m) {
  teeny__memo_clear(m);
  teeny__free(m->buckets);
  pthread_mutex_destroy(&m->lock);
}

static teeny__memo_ent *find(teeny__memo *m, const teeny_compile_req *req,
                             uint64_t hash) {
  for (teeny__memo_ent *e = *slot_of(m, hash); e; e = e->chain)
    if (e->hash == hash && req_eq(&e->req, req))
      return e;
  return NULL;
}

teeny__core *teeny__memo_get(teeny__memo *m, const teeny_compile_req *req,
                             uint64_t hash, unsigned emit) {
  if (m->cap == 0)
    return NULL;
  emit &= TEENY_EMIT_PTX | TEENY_EMIT_MLIR | TEENY_EMIT_SOURCE;
  teeny__core *core = NULL;
  pthread_mutex_lock(&m->lock);
  teeny__memo_ent *e = find(m, req, hash);
  if (e && (e->core->emit & emit) == emit) {
    core = e->core;
    teeny__core_ref(core);
    lru_unlink(m, e);
    lru_push(m, e);
    m->hits++;
  } else {
    m->misses++;
  }
  pthread_mutex_unlock(&m->lock);
  return core;
}

void teeny__memo_put(teeny__memo *m, const teeny_compile_req *req,
                     uint64_t hash, teeny__core *core) {
  if (m->cap == 0 || core->pub.status != 0)
    return;
  teeny__memo_ent *e = ent_new(req);
  if (!e)
    return;
  e->hash = hash;
  e->core = core;
  teeny__core_ref(core);
  pthread_mutex_lock(&m->lock);
  teeny__memo_ent *old = find(m, req, hash);
  if (old)
    remove_ent(m, old);
  while (m->n >= m->cap && m->lru_tail)
    remove_ent(m, m->lru_tail);
  teeny__memo_ent **slot = slot_of(m, hash);
  e->chain = *slot;
  *slot = e;
  lru_push(m, e);
  m->n++;
  pthread_mutex_unlock(&m->lock);
}

void teeny_client_memo_stats_get(teeny_client *c, teeny_client_memo_stats *out) {
  pthread_mutex_lock(&c->memo.lock);
  out->hits = c->memo.hits;
  out->misses = c->memo.misses;
  out->entries = c->memo.n;
  pthread_mutex_unlock(&c->memo.lock);
}

void teeny_client_memo_clear(teeny_client *c) { teeny__memo_clear(&c->memo); }
