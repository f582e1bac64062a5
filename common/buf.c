/*
 * common/buf.c — growable, NUL-terminated byte buffers.
 *
 * Appends never fail loudly: the first failed allocation sets b->oom and
 * later appends do nothing, so a printer can write a whole document and
 * check once at the end (teeny__buf_take returns NULL then).
 */
#include <stdio.h>
#include <string.h>

#include "common/common.h"

void teeny__buf_init(teeny_buf *b) { memset(b, 0, sizeof *b); }

void teeny__buf_free(teeny_buf *b) {
  teeny__free(b->p);
  memset(b, 0, sizeof *b);
}

/* Capacities double from 256 until the bytes and a NUL fit. */
static size_t grown_cap(size_t cap, size_t need) {
  if (need <= cap)
    return cap;
  cap = cap ? cap : 256;
  while (cap < need)
    cap *= 2;
  return cap;
}

bool teeny__buf_reserve(teeny_buf *b, size_t cap) {
  if (b->oom)
    return false;
  if (cap <= b->cap)
    return true;
  char *p = teeny__realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

static bool buf_reserve(teeny_buf *b, size_t extra) {
  if (b->oom)
    return false;
  if (extra > SIZE_MAX / 2 - b->len) {
    b->oom = true;
    return false;
  }
  return teeny__buf_reserve(b, grown_cap(b->cap, b->len + extra + 1));
}

void teeny__buf_append(teeny_buf *b, const void *data, size_t n) {
  if (!buf_reserve(b, n))
    return;
  if (n)
    memcpy(b->p + b->len, data, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void teeny__buf_puts(teeny_buf *b, const char *s) {
  teeny__buf_append(b, s, strlen(s));
}

void teeny__buf_putc(teeny_buf *b, char c) { teeny__buf_append(b, &c, 1); }

void teeny__buf_vprintf(teeny_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->oom = true;
    return;
  }
  if (!buf_reserve(b, (size_t)n))
    return;
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void teeny__buf_printf(teeny_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  teeny__buf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *teeny__buf_take(teeny_buf *b, size_t *len) {
  if (b->oom) {
    teeny__buf_free(b);
    return NULL;
  }
  if (!b->p) { /* nothing was written: an empty string, terminated */
    if (!buf_reserve(b, 0))
      return NULL;
    b->p[0] = '\0';
  }
  char *p = b->p;
  if (len)
    *len = b->len;
  memset(b, 0, sizeof *b);
  return p;
}
