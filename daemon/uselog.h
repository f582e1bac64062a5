/*
 * daemon/uselog.h — the loop thread's log of cache uses, waiting to be
 * written to the store.
 *
 * Hits are answered on the loop thread, but a store handle belongs to one
 * thread at a time and the loop must never wait for SQLite.  So the loop
 * only counts uses per key here (O(1), no I/O); every flush interval — and
 * before an eviction decides what is least recently used — the log is
 * moved whole to a worker (teeny__uselog_take leaves an empty one
 * behind), which replays it into its store handle with teeny_store_touch
 * and writes it with teeny_store_flush.  A use is thus stamped with the
 * time of the replay, at most one flush interval late.
 */
#ifndef TEENY_DAEMON_USELOG_H
#define TEENY_DAEMON_USELOG_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef struct teeny_uselog_slot {
  char key[TEENY_STORE_KEY_LEN + 1]; /* "" marks an empty slot */
  uint32_t uses;                     /* uses since the log was taken */
} teeny_uselog_slot;

typedef struct teeny_uselog {
  teeny_uselog_slot *v; /* open addressing, cap slots */
  size_t cap;          /* a power of two, or 0 */
  size_t n;            /* used slots */
} teeny_uselog;

void teeny__uselog_init(teeny_uselog *t);
void teeny__uselog_free(teeny_uselog *t); /* t is reusable */
/* Count one use of key (64 hex digits).  0 or TEENY_E_NOMEM (the use is
 * lost: last-used times are advisory). */
int teeny__uselog_add(teeny_uselog *t, const char *key);
/* Move everything to *out (which is overwritten) and empty t. */
void teeny__uselog_take(teeny_uselog *t, teeny_uselog *out);
/* Replay into s (worker thread): one teeny_store_touch per use. */
void teeny__uselog_apply(const teeny_uselog *t, teeny_store *s);

#endif /* TEENY_DAEMON_USELOG_H */
