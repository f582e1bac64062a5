/*
 * daemon/memcache.h — the hot path: an in-memory map from a compile
 * request to its finished reply frame.
 *
 * A hit costs one hash of the request, one full comparison and one copy of
 * the reply: no disk, no SQLite, no spec parsing.  To be exact rather than
 * probable, the map is keyed on a canonical encoding of every request field
 * that decides the reply (the "request key", below) and a lookup compares
 * those bytes in full; the 64-bit hash only picks the bucket.
 *
 * The stored value is the whole reply frame (length prefix included) as
 * teeny_msg_reply_encode wrote it with cache "memory" and id 2^64-1, which
 * msgpack writes as 0xcf + 8 bytes; a hit copies the frame and patches the
 * 8 id bytes at id_off.  Bounded by a byte cap (request key + frame +
 * overhead), least recently used entry out first, one entry at a time.  An
 * entry bigger than a share of the cap (cap / TEENY_MC_ENTRY_SHARE, at
 * least TEENY_MC_ENTRY_MIN), or whose request key (mostly its source) is
 * over TEENY_MC_KEY_MAX, is not admitted: a request with a 1 MiB source
 * costs a disk lookup each time rather than pushing hundreds of small hot
 * entries out.  Store eviction does not touch the map (its entries are
 * still right answers, content-addressed); what an admin removed from the
 * store is forgotten by artifact key.  Loop thread only.
 */
#ifndef TEENY_DAEMON_MEMCACHE_H
#define TEENY_DAEMON_MEMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "proto/msg.h"

/* ---- request keys -------------------------------------------------------- */

typedef struct teeny_reqkey {
  const char *p;  /* canonical bytes (in the caller's buffer) */
  size_t len;     /* how many */
  uint64_t hash;  /* teeny__hash64 of them */
} teeny_reqkey;

/* The canonical encoding of c: source bytes, filename, kernel, dtype
 * bindings sorted by name, const bindings sorted by name, target,
 * num_warps, emit and arch (the GPU whose cubin the reply carries), each
 * length-prefixed (absent strings are distinct
 * from empty ones).  flags are not part of it (force never reads the map).
 * buf is reset and filled; k points into it.  Returns 0 or TEENY_E_NOMEM. */
int teeny__reqkey_build(const teeny_msg_compile *c, teeny_buf *buf,
                        teeny_reqkey *k);

/* A fast non-cryptographic 64-bit hash (8 bytes per step). */
uint64_t teeny__hash64(const void *p, size_t n);

/* ---- the map ------------------------------------------------------------- */

typedef struct teeny_memcache teeny_memcache;

#define TEENY_MC_ENTRY_SHARE 256        /* an entry holds at most cap/this */
#define TEENY_MC_ENTRY_MIN (64u << 10)  /* ... or this, if more */
#define TEENY_MC_KEY_MAX (64u << 10)    /* and a request key (source) this */

typedef struct teeny_mc_hit {
  const char *frame; /* the reply frame, prefix included (owned by the map) */
  size_t len;        /* its length */
  size_t id_off;     /* offset of the 8 big-endian id bytes in frame */
  const char *key;   /* the artifact's cache key, 64 hex digits */
  double compile_ms; /* how long its compile took */
} teeny_mc_hit;

/* cap: byte cap (0: the map stores nothing).  NULL on out of memory. */
teeny_memcache *teeny__memcache_create(size_t cap);
void teeny__memcache_destroy(teeny_memcache *mc); /* NULL is a no-op */

/* Look k up.  On a hit fill *hit (valid until the next put or clear) and
 * make the entry the most recently used. */
bool teeny__memcache_get(teeny_memcache *mc, const teeny_reqkey *k,
                         teeny_mc_hit *hit);

/* Insert (or replace) k -> frame.  frame must carry id 2^64-1 encoded as
 * 0xcf + 8 bytes right after the map header and the "id" key (what
 * teeny__memcache_id_slot checks).  Evicts LRU entries to stay under the
 * cap; an entry over the per-entry limit is not stored (and an older one
 * for k is dropped).  0, TEENY_E_INVAL (no id slot) or TEENY_E_NOMEM. */
int teeny__memcache_put(teeny_memcache *mc, const teeny_reqkey *k,
                        const char *frame, size_t len, const char *key,
                        double compile_ms);

/* The offset of the id slot in a framed reply encoded with id 2^64-1, or 0
 * if the frame does not have one where expected. */
size_t teeny__memcache_id_slot(const char *frame, size_t len);

/* Forget everything (purge --all). */
void teeny__memcache_clear(teeny_memcache *mc);
/* Forget every entry whose artifact has cache key key (the store no longer
 * has it: purge, repair; or its reply changed: a cubin arrived).  How many
 * went. */
size_t teeny__memcache_forget(teeny_memcache *mc, const char *key);
/* The largest entry admitted, in bytes. */
size_t teeny__memcache_max_entry(const teeny_memcache *mc);

size_t teeny__memcache_entries(const teeny_memcache *mc);
size_t teeny__memcache_bytes(const teeny_memcache *mc);

#endif /* TEENY_DAEMON_MEMCACHE_H */
