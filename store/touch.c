/*
 * store/touch.c — last-used and hit counts, batched.
 *
 * A hit must not cost a disk write, so teeny_store_touch only records the
 * use in an open-addressing hash table (keyed by the hex key, linear
 * probing, at most half full).  teeny_store_flush writes the whole table in
 * one BEGIN IMMEDIATE transaction with one prepared UPDATE, then empties
 * it.  The table holds one slot per distinct key touched since the last
 * flush, so its size is bounded by the keys in use, not by the hit rate.
 */
#include <string.h>

#include "store/store_int.h"

/* FNV-1a over the first 16 hex digits: keys are sha256, already uniform. */
static size_t key_hash(const char *key) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 16; i++)
    h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
  return (size_t)h;
}

static touch_slot *slot_find(touch_slot *t, size_t cap, const char *key) {
  size_t i = key_hash(key) & (cap - 1);
  while (t[i].key[0] && memcmp(t[i].key, key, TEENY_STORE_KEY_LEN) != 0)
    i = (i + 1) & (cap - 1);
  return &t[i];
}

static int grow(teeny_store *s) {
  size_t ncap = s->touch_cap ? 2 * s->touch_cap : 64;
  touch_slot *nt = teeny__calloc(ncap, sizeof *nt);
  if (!nt)
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < s->touch_cap; i++)
    if (s->touch[i].key[0])
      *slot_find(nt, ncap, s->touch[i].key) = s->touch[i];
  teeny__free(s->touch);
  s->touch = nt;
  s->touch_cap = ncap;
  return TEENY_OK;
}

int teeny_store_touch(teeny_store *s, const char *key) {
  if (teeny_store_key_check(key))
    return TEENY_E_INVAL;
  if (s->readonly)
    return TEENY_OK; /* a read-only handle writes no last-used times */
  if (2 * (s->touch_n + 1) > s->touch_cap && grow(s))
    return TEENY_E_NOMEM;
  int64_t now = teeny__store_now(s);
  touch_slot *t = slot_find(s->touch, s->touch_cap, key);
  if (!t->key[0]) {
    memcpy(t->key, key, TEENY_STORE_KEY_LEN + 1);
    t->last_used = now;
    t->hits = 0;
    s->touch_n++;
  }
  if (now > t->last_used)
    t->last_used = now;
  t->hits++;
  return TEENY_OK;
}

size_t teeny_store_pending(const teeny_store *s) { return s->touch_n; }

void teeny__store_touch_free(teeny_store *s) {
  teeny__free(s->touch);
  s->touch = NULL;
  s->touch_cap = s->touch_n = 0;
}

int teeny_store_flush(teeny_store *s, char *err) {
  if (s->touch_n == 0)
    return TEENY_OK;
  sqlite3_stmt *st;
  int rc = teeny__store_index_fresh(s, err);
  if (rc)
    return rc;
  rc =
      teeny__store_prepare(s,
                           "UPDATE entries SET hits = hits + ?2,"
                           " last_used = max(last_used, ?3) WHERE key = ?1",
                           &st, err);
  if (rc)
    return rc;
  if ((rc = teeny__store_begin(s, err))) {
    sqlite3_finalize(st);
    return rc;
  }
  for (size_t i = 0; i < s->touch_cap && !rc; i++) {
    touch_slot *t = &s->touch[i];
    if (!t->key[0])
      continue;
    sqlite3_bind_text(st, 1, t->key, TEENY_STORE_KEY_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)t->hits);
    sqlite3_bind_int64(st, 3, t->last_used);
    int sr = sqlite3_step(st);
    if (sr != SQLITE_DONE)
      rc = teeny__store_sqlerr(s, sr, "flush", err);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  if (rc || (rc = teeny__store_commit(s, err))) {
    teeny__store_rollback(s); /* keep the table for the next flush */
    return rc;
  }
  memset(s->touch, 0, s->touch_cap * sizeof *s->touch);
  s->touch_n = 0;
  return TEENY_OK;
}
