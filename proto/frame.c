/*
 * proto/frame.c — incremental frame reader and frame writer (see frame.h).
 *
 * State machine per frame: collect the 4 prefix bytes, validate the length,
 * then collect the body.  Fast path: when no partial frame is pending and a
 * whole frame sits in the fed chunk, it is handed out in place.  Otherwise
 * the body is copied into a buffer that grows geometrically with the bytes
 * received (never past the declared length), so a prefix that promises
 * 16 MiB and then stalls costs nothing until the bytes really come.
 * Expected load: one reader per connection, tens of thousands of small
 * frames a second.
 */
#include <string.h>

#include "proto/frame.h"

#define BODY_KEEP (64u * 1024) /* a bigger buffer is freed between frames */
#define BODY_MIN 4096u         /* first allocation for a copied body */

void teeny_frame_reader_init(teeny_frame_reader *r, uint32_t max) {
  memset(r, 0, sizeof *r);
  r->max = max ? max : TEENY_FRAME_MAX_DEFAULT;
}

void teeny_frame_reader_free(teeny_frame_reader *r) {
  if (!r)
    return;
  teeny__free(r->body);
  r->body = NULL;
  r->body_len = r->body_cap = 0;
  r->in = NULL;
  r->in_len = 0;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

static void put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* Make err the stream's sticky error and drop the borrowed input. */
static int die(teeny_frame_reader *r, int err) {
  r->err = err;
  r->in = NULL;
  r->in_len = 0;
  return err;
}

/* Check a length prefix before any of its body is buffered. */
static int check_len(teeny_frame_reader *r, uint32_t len) {
  if (len == 0)
    return die(r, TEENY_E_PROTO);
  if (len > r->max)
    return die(r, TEENY_E_TOOBIG);
  return 0;
}

/* Forget the frame handed out last; shrink a big buffer. */
static void reset_frame(teeny_frame_reader *r) {
  r->handed = false;
  r->hdr_len = 0;
  r->need = 0;
  r->body_len = 0;
  if (r->body_cap > BODY_KEEP) {
    teeny__free(r->body);
    r->body = NULL;
    r->body_cap = 0;
  }
}

static void consume(teeny_frame_reader *r, size_t n) {
  r->in += n;
  r->in_len -= n;
}

int teeny_frame_reader_feed(teeny_frame_reader *r, const void *data, size_t len) {
  if (r->err)
    return r->err;
  if (r->in_len)
    return TEENY_E_INVAL;
  r->in = data;
  r->in_len = len;
  return 0;
}

/* Whole frame inside the fed chunk and nothing pending: hand it out in
 * place.  Returns 1 if it did, 0 if the slow path must run, or an error. */
static int try_in_place(teeny_frame_reader *r, const char **payload,
                        size_t *len) {
  if (r->hdr_len != 0 || r->in_len < TEENY_FRAME_PREFIX)
    return 0;
  memcpy(r->hdr, r->in, TEENY_FRAME_PREFIX); /* for a refusal's message */
  uint32_t n = be32(r->in);
  int rc = check_len(r, n);
  if (rc)
    return rc;
  if (r->in_len - TEENY_FRAME_PREFIX < n)
    return 0;
  *payload = (const char *)r->in + TEENY_FRAME_PREFIX;
  *len = n;
  consume(r, TEENY_FRAME_PREFIX + (size_t)n);
  return 1;
}

/* Copy prefix bytes; returns 1 once the prefix is complete and valid. */
static int take_prefix(teeny_frame_reader *r) {
  size_t want = TEENY_FRAME_PREFIX - r->hdr_len;
  size_t n = r->in_len < want ? r->in_len : want;
  memcpy(r->hdr + r->hdr_len, r->in, n);
  r->hdr_len += (unsigned)n;
  consume(r, n);
  if (r->hdr_len < TEENY_FRAME_PREFIX)
    return 0;
  int rc = check_len(r, be32(r->hdr));
  if (rc)
    return rc;
  r->need = be32(r->hdr);
  return 1;
}

/* Room for at least `want` body bytes, growing geometrically up to need. */
static int reserve_body(teeny_frame_reader *r, size_t want) {
  if (want <= r->body_cap)
    return 0;
  size_t cap = r->body_cap ? r->body_cap * 2 : BODY_MIN;
  if (cap < want)
    cap = want;
  if (cap > r->need)
    cap = r->need;
  char *p = teeny__realloc(r->body, cap);
  if (!p)
    return die(r, TEENY_E_NOMEM);
  r->body = p;
  r->body_cap = cap;
  return 0;
}

/* Copy body bytes; returns 1 once the body is complete. */
static int take_body(teeny_frame_reader *r) {
  size_t want = r->need - r->body_len;
  size_t n = r->in_len < want ? r->in_len : want;
  int rc = reserve_body(r, r->body_len + n);
  if (rc)
    return rc;
  if (n)
    memcpy(r->body + r->body_len, r->in, n);
  r->body_len += n;
  consume(r, n);
  return r->body_len == r->need;
}

int teeny_frame_reader_next(teeny_frame_reader *r, const char **payload,
                            size_t *len) {
  if (r->err)
    return r->err;
  if (r->handed)
    reset_frame(r);
  int rc = try_in_place(r, payload, len);
  if (rc != 0)
    return rc;
  if (r->in_len == 0)
    return 0;
  if (r->hdr_len < TEENY_FRAME_PREFIX) {
    rc = take_prefix(r);
    if (rc <= 0)
      return rc;
  }
  rc = take_body(r);
  if (rc <= 0)
    return rc;
  r->handed = true;
  *payload = r->body;
  *len = r->body_len;
  return 1;
}

int teeny_frame_reader_eof(const teeny_frame_reader *r) {
  if (r->err)
    return r->err;
  if (r->in_len != 0 || (r->hdr_len != 0 && !r->handed))
    return TEENY_E_PROTO;
  return 0;
}

/* ---- writing ---------------------------------------------------------------- */

static uint32_t limit_of(uint32_t max) {
  return max ? max : TEENY_FRAME_MAX_DEFAULT;
}

int teeny_frame_write(teeny_buf *out, const void *payload, size_t len,
                      uint32_t max) {
  if (len == 0)
    return TEENY_E_PROTO;
  if (len > limit_of(max))
    return TEENY_E_TOOBIG;
  size_t begin = teeny_frame_begin(out);
  teeny__buf_append(out, payload, len);
  return teeny_frame_end(out, begin, max);
}

size_t teeny_frame_begin(teeny_buf *out) {
  static const unsigned char zero[TEENY_FRAME_PREFIX];
  size_t begin = out->len;
  teeny__buf_append(out, zero, sizeof zero);
  return begin;
}

/* Cut out back to len (which must not exceed its current length). */
static void truncate_buf(teeny_buf *out, size_t len) {
  if (out->p && len <= out->len) {
    out->len = len;
    out->p[len] = '\0';
  }
}

int teeny_frame_end(teeny_buf *out, size_t begin, uint32_t max) {
  int rc = 0;
  if (out->oom) {
    rc = TEENY_E_NOMEM;
    goto fail;
  }
  if (out->len < begin + TEENY_FRAME_PREFIX) {
    rc = TEENY_E_INVAL;
    goto fail;
  }
  size_t n = out->len - begin - TEENY_FRAME_PREFIX;
  if (n == 0) {
    rc = TEENY_E_PROTO;
    goto fail;
  }
  if (n > limit_of(max)) {
    rc = TEENY_E_TOOBIG;
    goto fail;
  }
  put_be32((unsigned char *)out->p + begin, (uint32_t)n);
  return 0;
fail:
  truncate_buf(out, begin);
  return rc;
}
