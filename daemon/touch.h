/*
 * daemon/touch.h — the loop thread's log of cache uses, waiting to be
 * written to the store.
 *
 * Hits are answered on the loop thread, but a store handle belongs to one
 * thread at a time and the loop must never wait for SQLite.  So the loop
 * only counts uses per key here (O(1), no I/O); every flush interval — and
 * before an eviction decides what is least recently used — the log is
 * moved whole to a worker (teeny__touchlog_take leaves an empty one
 * behind), which replays it into its store handle with teeny_store_touch
 * and writes it with teeny_store_flush.  A use is thus stamped with the
 * time of the replay, at most one flush interval late.
 */
#ifndef TEENY_DAEMON_TOUCH_H
#define TEENY_DAEMON_TOUCH_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/store.h"

typedef struct teeny_touch_slot {
  char key[TEENY_STORE_KEY_LEN + 1]; /* "" marks an empty slot */
  uint32_t uses;                     /* uses since the log was taken */
} teeny_touch_slot;

typedef struct teeny_touchlog {
  teeny_touch_slot *v; /* open addressing, cap slots */
  size_t cap;          /* a power of two, or 0 */
  size_t n;            /* used slots */
} teeny_touchlog;

void teeny__touchlog_init(teeny_touchlog *t);
void teeny__touchlog_free(teeny_touchlog *t); /* t is reusable */
/* Count one use of key (64 hex digits).  0 or TEENY_E_NOMEM (the use is
 * lost: last-used times are advisory). */
int teeny__touchlog_add(teeny_touchlog *t, const char *key);
/* Move everything to *out (which is overwritten) and empty t. */
void teeny__touchlog_take(teeny_touchlog *t, teeny_touchlog *out);
/* Replay into s (worker thread): one teeny_store_touch per use. */
void teeny__touchlog_apply(const teeny_touchlog *t, teeny_store *s);

#endif /* TEENY_DAEMON_TOUCH_H */
