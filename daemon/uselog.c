/*
 * daemon/uselog.c — the use log (see uselog.h): an open-addressing table of
 * keys with linear probing, grown at half load.  Keys are hex SHA-256, so
 * their first 8 bytes are already a good hash.
 */
#include <string.h>

#include "common/common.h"
#include "daemon/uselog.h"

#define MIN_CAP 64

void teeny__uselog_init(teeny_uselog *t) { memset(t, 0, sizeof *t); }

void teeny__uselog_free(teeny_uselog *t) {
  teeny__free(t->v);
  memset(t, 0, sizeof *t);
}

static size_t slot_of(const char *key, size_t cap) {
  uint64_t h = 0;
  for (int i = 0; i < 16; i++)
    h = h << 4 | (uint64_t)(key[i] <= '9' ? key[i] - '0' : key[i] - 'a' + 10);
  return (size_t)(h & (cap - 1));
}

static teeny_uselog_slot *probe(teeny_uselog_slot *v, size_t cap,
                               const char *key) {
  size_t i = slot_of(key, cap);
  while (v[i].key[0] && memcmp(v[i].key, key, TEENY_STORE_KEY_LEN) != 0)
    i = (i + 1) & (cap - 1);
  return &v[i];
}

static int grow(teeny_uselog *t) {
  size_t cap = t->cap ? t->cap * 2 : MIN_CAP;
  teeny_uselog_slot *v = teeny__calloc(cap, sizeof *v);
  if (!v)
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < t->cap; i++)
    if (t->v[i].key[0])
      *probe(v, cap, t->v[i].key) = t->v[i];
  teeny__free(t->v);
  t->v = v;
  t->cap = cap;
  return 0;
}

int teeny__uselog_add(teeny_uselog *t, const char *key) {
  if ((t->n + 1) * 2 > t->cap && grow(t))
    return TEENY_E_NOMEM;
  teeny_uselog_slot *s = probe(t->v, t->cap, key);
  if (!s->key[0]) {
    memcpy(s->key, key, TEENY_STORE_KEY_LEN);
    s->key[TEENY_STORE_KEY_LEN] = '\0';
    t->n++;
  }
  s->uses++;
  return 0;
}

void teeny__uselog_take(teeny_uselog *t, teeny_uselog *out) {
  *out = *t;
  teeny__uselog_init(t);
}

void teeny__uselog_apply(const teeny_uselog *t, teeny_store *s) {
  for (size_t i = 0; i < t->cap; i++)
    for (uint32_t u = 0; u < t->v[i].uses && t->v[i].key[0]; u++)
      if (teeny_store_touch(s, t->v[i].key))
        break;
}
