/*
 * common/alloc.c — the one allocation wrapper and the job arena.
 *
 * All heap allocation in teenyc goes through teeny__malloc & co.  Tests can
 * make the N-th allocation fail (teeny__alloc_fail_after, test builds only
 * use it), which is how out-of-memory paths are exercised.
 *
 * An arena hands out zeroed, 16-byte aligned blocks from chunks of at least
 * 64 KiB and frees them all at once; compile jobs allocate every node there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/* Test hook: allocations after this many succeed-calls fail (-1: never).
 * Thread-local so concurrent tests do not interfere; it is not state of the
 * library in any build that does not set it. */
static _Thread_local long alloc_fail_after = -1;

void teeny__alloc_fail_after(long n) { alloc_fail_after = n; }

static bool alloc_should_fail(void) {
  if (alloc_fail_after < 0)
    return false;
  if (alloc_fail_after == 0)
    return true;
  alloc_fail_after--;
  return false;
}

void *teeny__malloc(size_t n) {
  if (alloc_should_fail())
    return NULL;
  return malloc(n ? n : 1);
}

void *teeny__calloc(size_t n, size_t size) {
  if (alloc_should_fail())
    return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}

void *teeny__realloc(void *p, size_t n) {
  if (alloc_should_fail())
    return NULL;
  return realloc(p, n ? n : 1);
}

void teeny__free(void *p) { free(p); }

char *teeny__strndup(const char *s, size_t n) {
  char *d = teeny__malloc(n + 1);
  if (!d)
    return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *teeny__strdup(const char *s) { return teeny__strndup(s, strlen(s)); }

/* ---- arenas ---------------------------------------------------------------- */

#define ARENA_CHUNK_MIN (64 * 1024)

struct teeny_arena_chunk {
  teeny_arena_chunk *next; /* older chunk */
  size_t size;             /* usable bytes in data */
  size_t used;             /* bytes handed out */
  _Alignas(16) unsigned char data[];
};

void teeny__arena_init(teeny_arena *a) { memset(a, 0, sizeof *a); }

void teeny__arena_free(teeny_arena *a) {
  teeny_arena_chunk *c = a->head;
  while (c) {
    teeny_arena_chunk *next = c->next;
    teeny__free(c);
    c = next;
  }
  a->head = NULL;
  a->total = 0;
}

static void *arena_fail(teeny_arena *a) {
  if (a->oom)
    longjmp(*a->oom, 1);
  return NULL;
}

void *teeny__arena_alloc(teeny_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0)
    n = 16;
  teeny_arena_chunk *c = a->head;
  if (!c || c->size - c->used < n) {
    size_t size = n > ARENA_CHUNK_MIN ? n : ARENA_CHUNK_MIN;
    if (n > SIZE_MAX / 2 || (a->limit && a->total + size > a->limit))
      return arena_fail(a);
    c = teeny__malloc(sizeof *c + size);
    if (!c)
      return arena_fail(a);
    c->size = size;
    c->used = 0;
    c->next = a->head;
    a->head = c;
    a->total += size;
  }
  void *p = c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

void *teeny__arena_realloc(teeny_arena *a, void *old, size_t oldn, size_t n) {
  void *p = teeny__arena_alloc(a, n);
  if (p && old)
    memcpy(p, old, oldn < n ? oldn : n);
  return p;
}

char *teeny__arena_strndup(teeny_arena *a, const char *s, size_t n) {
  char *d = teeny__arena_alloc(a, n + 1);
  if (!d)
    return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *teeny__arena_strdup(teeny_arena *a, const char *s) {
  return teeny__arena_strndup(a, s, strlen(s));
}

char *teeny__arena_printf(teeny_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return NULL;
  char *s = teeny__arena_alloc(a, (size_t)n + 1);
  if (!s)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}
