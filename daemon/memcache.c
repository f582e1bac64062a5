/*
 * daemon/memcache.c — request keys and the in-memory reply map (see
 * memcache.h).
 *
 * Layout: a chained hash table (power-of-two buckets, doubled when the
 * load passes 1) over entries that each hold, in one allocation, the
 * request key bytes and the reply frame; an intrusive doubly-linked list
 * orders them by use for LRU eviction, and a second chain per bucket
 * indexes them by artifact key (several requests may name one artifact),
 * so that one key is forgotten without a scan.  Expected load: tens of
 * thousands of lookups a second, inserts only after compiles and disk
 * hits.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/memcache.h"

/* ---- hashing ------------------------------------------------------------- */

#define K1 0x9e3779b97f4a7c15ull
#define K2 0xc2b2ae3d27d4eb4full
#define K3 0xff51afd7ed558ccdull

static uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

static uint64_t mix(uint64_t h, uint64_t w) {
  return rotl(h ^ (w * K2), 29) * K1;
}

uint64_t teeny__hash64(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = K3 ^ ((uint64_t)n * K1);
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = mix(h, w);
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h = mix(h, w ^ ((uint64_t)n << 56));
  h ^= h >> 33;
  h *= K3;
  h ^= h >> 29;
  h *= K2;
  return h ^ (h >> 32);
}

/* ---- request keys -------------------------------------------------------- */

static void put_u32(teeny_buf *b, uint32_t v) {
  unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 8), (unsigned char)v};
  teeny__buf_append(b, x, 4);
}

/* A string with its length; NULL is 0xffffffff, distinct from "". */
static void put_str(teeny_buf *b, const char *s, size_t n) {
  if (!s) {
    put_u32(b, UINT32_MAX);
    return;
  }
  put_u32(b, (uint32_t)n);
  teeny__buf_append(b, s, n);
}

static void put_cstr(teeny_buf *b, const char *s) {
  put_str(b, s, s ? strlen(s) : 0);
}

/* Insertion sort of binding indices by name (at most 64 of them). */
static void sort_idx(size_t *idx, size_t n, const char *(*name)(const void *,
                                                                 size_t),
                     const void *v) {
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(name(v, idx[j - 1]), name(v, idx[j])) > 0;
         j--) {
      size_t t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
}

static const char *dtype_name_at(const void *v, size_t i) {
  return ((const teeny_dtype_binding *)v)[i].name;
}

static const char *const_name_at(const void *v, size_t i) {
  return ((const teeny_const_binding *)v)[i].name;
}

static void put_bindings(teeny_buf *b, const teeny_compile_req *r) {
  size_t idx[TEENY_PROTO_MAX_BINDINGS];
  size_t nd = r->ndtypes < TEENY_PROTO_MAX_BINDINGS ? r->ndtypes
                                                    : TEENY_PROTO_MAX_BINDINGS;
  size_t nc = r->nconsts < TEENY_PROTO_MAX_BINDINGS ? r->nconsts
                                                    : TEENY_PROTO_MAX_BINDINGS;
  sort_idx(idx, nd, dtype_name_at, r->dtypes);
  put_u32(b, (uint32_t)nd);
  for (size_t i = 0; i < nd; i++) {
    put_cstr(b, r->dtypes[idx[i]].name);
    put_cstr(b, r->dtypes[idx[i]].dtype);
  }
  sort_idx(idx, nc, const_name_at, r->consts);
  put_u32(b, (uint32_t)nc);
  for (size_t i = 0; i < nc; i++) {
    put_cstr(b, r->consts[idx[i]].name);
    uint64_t v = (uint64_t)r->consts[idx[i]].value;
    put_u32(b, (uint32_t)(v >> 32));
    put_u32(b, (uint32_t)v);
  }
}

int teeny__reqkey_build(const teeny_msg_compile *c, teeny_buf *buf,
                        teeny_reqkey *k) {
  const teeny_compile_req *r = &c->req;
  buf->len = 0;
  buf->oom = false; /* a scratch buffer: an old failure is forgotten */
  put_str(buf, r->source, r->source_len);
  put_cstr(buf, r->filename);
  put_cstr(buf, r->kernel);
  put_bindings(buf, r);
  put_cstr(buf, r->target);
  put_u32(buf, (uint32_t)r->num_warps);
  put_u32(buf, c->emit);
  put_cstr(buf, c->arch); /* replies carry that GPU's cubin */
  if (buf->oom)
    return TEENY_E_NOMEM;
  k->p = buf->p;
  k->len = buf->len;
  k->hash = teeny__hash64(buf->p, buf->len);
  return 0;
}

/* ---- the map ------------------------------------------------------------- */

typedef struct mc_entry {
  struct mc_entry *hnext; /* next in the bucket chain */
  struct mc_entry *knext; /* next in the artifact-key chain */
  uint64_t khash;         /* hash of the artifact key */
  struct mc_entry *prev;  /* LRU list: towards the most recent */
  struct mc_entry *next;  /* LRU list: towards the least recent */
  uint64_t hash;          /* hash of the request key */
  size_t klen;            /* request key bytes at data */
  size_t flen;            /* frame bytes at data + klen */
  size_t id_off;          /* id slot inside the frame */
  size_t charge;          /* bytes counted against the cap */
  double compile_ms;      /* of the artifact */
  char key[65];           /* artifact cache key */
  char data[];            /* request key, then frame */
} mc_entry;

struct teeny_memcache {
  mc_entry **buckets; /* chains, nbuckets of them */
  mc_entry **kbuckets;/* artifact-key chains, nbuckets of them */
  size_t nbuckets;    /* a power of two */
  size_t n;           /* entries */
  size_t bytes;       /* sum of charges */
  size_t cap;         /* byte cap */
  size_t max_entry;   /* larger entries are not admitted */
  mc_entry *head;     /* most recently used */
  mc_entry *tail;     /* least recently used */
};

#define MIN_BUCKETS 256

teeny_memcache *teeny__memcache_create(size_t cap) {
  teeny_memcache *mc = teeny__calloc(1, sizeof *mc);
  if (!mc)
    return NULL;
  mc->buckets = teeny__calloc(MIN_BUCKETS, sizeof *mc->buckets);
  mc->kbuckets = teeny__calloc(MIN_BUCKETS, sizeof *mc->kbuckets);
  if (!mc->buckets || !mc->kbuckets) {
    teeny__free(mc->buckets);
    teeny__free(mc->kbuckets);
    teeny__free(mc);
    return NULL;
  }
  mc->nbuckets = MIN_BUCKETS;
  mc->cap = cap;
  mc->max_entry = cap / TEENY_MC_ENTRY_SHARE > TEENY_MC_ENTRY_MIN
                      ? cap / TEENY_MC_ENTRY_SHARE
                      : TEENY_MC_ENTRY_MIN;
  return mc;
}

void teeny__memcache_destroy(teeny_memcache *mc) {
  if (!mc)
    return;
  teeny__memcache_clear(mc);
  teeny__free(mc->buckets);
  teeny__free(mc->kbuckets);
  teeny__free(mc);
}

static void lru_unlink(teeny_memcache *mc, mc_entry *e) {
  if (e->prev)
    e->prev->next = e->next;
  else
    mc->head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    mc->tail = e->prev;
  e->prev = e->next = NULL;
}

static void lru_push_front(teeny_memcache *mc, mc_entry *e) {
  e->prev = NULL;
  e->next = mc->head;
  if (mc->head)
    mc->head->prev = e;
  mc->head = e;
  if (!mc->tail)
    mc->tail = e;
}

static mc_entry **bucket(teeny_memcache *mc, uint64_t hash) {
  return &mc->buckets[hash & (mc->nbuckets - 1)];
}

static mc_entry **kbucket(teeny_memcache *mc, uint64_t khash) {
  return &mc->kbuckets[khash & (mc->nbuckets - 1)];
}

/* The chain link that points at the entry for k, or at the chain's end. */
static mc_entry **find(teeny_memcache *mc, const teeny_reqkey *k) {
  mc_entry **pp = bucket(mc, k->hash);
  for (; *pp; pp = &(*pp)->hnext) {
    mc_entry *e = *pp;
    if (e->hash == k->hash && e->klen == k->len &&
        memcmp(e->data, k->p, k->len) == 0)
      return pp;
  }
  return pp;
}

bool teeny__memcache_get(teeny_memcache *mc, const teeny_reqkey *k,
                         teeny_mc_hit *hit) {
  mc_entry *e = *find(mc, k);
  if (!e)
    return false;
  if (mc->head != e) {
    lru_unlink(mc, e);
    lru_push_front(mc, e);
  }
  hit->frame = e->data + e->klen;
  hit->len = e->flen;
  hit->id_off = e->id_off;
  hit->key = e->key;
  hit->compile_ms = e->compile_ms;
  return true;
}

/* Unlink e from its chains and the LRU list and free it. */
static void drop(teeny_memcache *mc, mc_entry *e) {
  mc_entry **pp = bucket(mc, e->hash);
  while (*pp != e)
    pp = &(*pp)->hnext;
  *pp = e->hnext;
  pp = kbucket(mc, e->khash);
  while (*pp != e)
    pp = &(*pp)->knext;
  *pp = e->knext;
  lru_unlink(mc, e);
  mc->bytes -= e->charge;
  mc->n--;
  teeny__free(e);
}

/* Double the buckets; on allocation failure keep the old ones. */
static void grow(teeny_memcache *mc) {
  size_t nb = mc->nbuckets * 2;
  mc_entry **b = teeny__calloc(nb, sizeof *b);
  mc_entry **kb = teeny__calloc(nb, sizeof *kb);
  if (!b || !kb) {
    teeny__free(b);
    teeny__free(kb);
    return;
  }
  for (mc_entry *e = mc->head; e; e = e->next) {
    e->hnext = b[e->hash & (nb - 1)];
    b[e->hash & (nb - 1)] = e;
    e->knext = kb[e->khash & (nb - 1)];
    kb[e->khash & (nb - 1)] = e;
  }
  teeny__free(mc->buckets);
  teeny__free(mc->kbuckets);
  mc->buckets = b;
  mc->kbuckets = kb;
  mc->nbuckets = nb;
}

size_t teeny__memcache_id_slot(const char *frame, size_t len) {
  const unsigned char *p = (const unsigned char *)frame;
  size_t off = 4;
  if (len < 4 + 3 + 3 + 9)
    return 0;
  if ((p[off] & 0xf0) == 0x80)
    off += 1; /* fixmap */
  else if (p[off] == 0xde)
    off += 3; /* map 16 */
  else
    return 0;
  if (memcmp(p + off, "\xa2id\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 12) != 0)
    return 0;
  return off + 4;
}

static mc_entry *entry_new(const teeny_reqkey *k, const char *frame,
                           size_t len, size_t id_off, const char *key,
                           double compile_ms) {
  mc_entry *e = teeny__malloc(sizeof *e + k->len + len);
  if (!e)
    return NULL;
  memset(e, 0, sizeof *e);
  e->hash = k->hash;
  e->klen = k->len;
  e->flen = len;
  e->id_off = id_off;
  e->charge = sizeof *e + k->len + len;
  e->compile_ms = compile_ms;
  memcpy(e->key, key, 64);
  e->key[64] = '\0';
  e->khash = teeny__hash64(key, 64);
  memcpy(e->data, k->p, k->len);
  memcpy(e->data + k->len, frame, len);
  return e;
}

int teeny__memcache_put(teeny_memcache *mc, const teeny_reqkey *k,
                        const char *frame, size_t len, const char *key,
                        double compile_ms) {
  size_t id_off = teeny__memcache_id_slot(frame, len);
  if (!id_off || strlen(key) != 64)
    return TEENY_E_INVAL;
  mc_entry *old = *find(mc, k);
  if (old)
    drop(mc, old);
  if (k->len > TEENY_MC_KEY_MAX || sizeof(mc_entry) + k->len + len > mc->max_entry)
    return 0; /* a huge request must not push the hot ones out */
  mc_entry *e = entry_new(k, frame, len, id_off, key, compile_ms);
  if (!e)
    return TEENY_E_NOMEM;
  while (mc->tail && mc->bytes + e->charge > mc->cap)
    drop(mc, mc->tail);
  mc_entry **b = bucket(mc, e->hash);
  e->hnext = *b;
  *b = e;
  b = kbucket(mc, e->khash);
  e->knext = *b;
  *b = e;
  lru_push_front(mc, e);
  mc->bytes += e->charge;
  if (++mc->n > mc->nbuckets)
    grow(mc);
  return 0;
}

void teeny__memcache_clear(teeny_memcache *mc) {
  while (mc->tail)
    drop(mc, mc->tail);
}

size_t teeny__memcache_forget(teeny_memcache *mc, const char *key) {
  if (strlen(key) != 64)
    return 0;
  uint64_t kh = teeny__hash64(key, 64);
  size_t n = 0;
  mc_entry *e = *kbucket(mc, kh);
  while (e) {
    mc_entry *nx = e->knext;
    if (e->khash == kh && memcmp(e->key, key, 64) == 0) {
      drop(mc, e);
      n++;
    }
    e = nx;
  }
  return n;
}

size_t teeny__memcache_max_entry(const teeny_memcache *mc) {
  return mc->max_entry;
}

size_t teeny__memcache_entries(const teeny_memcache *mc) { return mc->n; }
size_t teeny__memcache_bytes(const teeny_memcache *mc) { return mc->bytes; }
