/*
 * tests/fuzz/fuzz_proto.c — libFuzzer target for the wire protocol (proto/).
 *
 * Input byte 0 picks a chunking seed and a frame limit; the rest is a byte
 * stream.  Each input goes through:
 *   1. every decoder (the request decoder and the reply decoder for every
 *      op) on the whole stream taken as one message;
 *   2. the incremental frame reader, fed in pseudo-random chunks from 1 byte
 *      up, compared frame by frame with a one-shot reference parse of the
 *      same bytes, and every decoder on every frame it yields.
 * Oracles, beyond the sanitizers: decoders return only documented codes,
 * own nothing after failing and always write a message; a decoded message
 * re-encodes, and encode(decode(encode(decode(x)))) == encode(decode(x))
 * byte for byte; the reader's buffer never exceeds its limit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "proto/frame.h"
#include "proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);   \
      abort();                                                                \
    }                                                                         \
  } while (0)

/* A failed decode must leave a message and an empty error sink otherwise. */
static void check_failure(int rc, const char *err, const void *mem) {
  CHECK(rc == TEENY_E_PROTO || rc == TEENY_E_UNSUPPORTED || rc == TEENY_E_LIMIT);
  CHECK(memchr(err, '\0', TEENY_PROTO_ERR_LEN) != NULL);
  CHECK(err[0] != '\0');
  CHECK(mem == NULL);
}

static void same_bytes(const teeny_buf *a, const teeny_buf *b) {
  CHECK(a->len == b->len);
  CHECK(a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

/* encode(req) decodes, and its decoding encodes to the same bytes. */
static void request_fixed_point(const teeny_msg_request *req) {
  teeny_buf e1, e2;
  teeny__buf_init(&e1);
  teeny__buf_init(&e2);
  CHECK(teeny_msg_request_encode(req, &e1) == 0);
  teeny_msg_request again;
  char err[TEENY_PROTO_ERR_LEN];
  int rc = teeny_msg_request_decode(e1.p, e1.len, &again, err);
  if (rc != 0)
    fprintf(stderr, "re-decode: %s\n", err);
  CHECK(rc == 0);
  CHECK(again.op == req->op && again.id == req->id);
  CHECK(teeny_msg_request_encode(&again, &e2) == 0);
  same_bytes(&e1, &e2);
  teeny_msg_request_free(&again);
  teeny__buf_free(&e1);
  teeny__buf_free(&e2);
}

static void reply_fixed_point(const teeny_msg_reply *rep) {
  teeny_buf e1, e2;
  teeny__buf_init(&e1);
  teeny__buf_init(&e2);
  CHECK(teeny_msg_reply_encode(rep, &e1) == 0);
  teeny_msg_reply again;
  char err[TEENY_PROTO_ERR_LEN];
  int rc = teeny_msg_reply_decode(e1.p, e1.len, rep->op, &again, err);
  if (rc != 0)
    fprintf(stderr, "re-decode: %s\n", err);
  CHECK(rc == 0);
  CHECK(again.id == rep->id && again.status == rep->status);
  CHECK(teeny_msg_reply_encode(&again, &e2) == 0);
  same_bytes(&e1, &e2);
  teeny_msg_reply_free(&again);
  teeny__buf_free(&e1);
  teeny__buf_free(&e2);
}

static void decode_request(const char *p, size_t n) {
  teeny_msg_request req;
  char err[TEENY_PROTO_ERR_LEN];
  memset(err, 'z', sizeof err);
  int rc = teeny_msg_request_decode(p, n, &req, err);
  if (rc == 0)
    request_fixed_point(&req);
  else
    check_failure(rc, err, req.mem);
  teeny_msg_request_free(&req);
}

static void decode_reply(const char *p, size_t n, teeny_proto_op op) {
  teeny_msg_reply rep;
  char err[TEENY_PROTO_ERR_LEN];
  memset(err, 'z', sizeof err);
  int rc = teeny_msg_reply_decode(p, n, op, &rep, err);
  if (rc == 0) {
    CHECK(rep.status <= 0);
    CHECK((rep.status < 0) == (rep.error != NULL));
    reply_fixed_point(&rep);
  } else {
    check_failure(rc, err, rep.mem);
    CHECK(rc == TEENY_E_PROTO);
  }
  teeny_msg_reply_free(&rep);
}

static void decode_all(const char *p, size_t n) {
  decode_request(p, n);
  for (int op = TEENY_OP_NONE; op < TEENY_OP__COUNT; op++)
    decode_reply(p, n, (teeny_proto_op)op);
}

/* ---- frames --------------------------------------------------------------------- */

/* One frame, or the end of the stream, as the reference parse sees it. */
typedef struct ref {
  size_t off; /* offset of the payload */
  size_t len; /* its length */
  int end;    /* 0: a frame; 1: clean end; 2: truncated; <0: the error */
} ref;

/* The next frame of p[0..n) from *at, parsed in one go. */
static ref ref_next(const uint8_t *p, size_t n, size_t *at, uint32_t max) {
  ref r = {0, 0, 0};
  if (*at == n) {
    r.end = 1;
    return r;
  }
  if (n - *at < 4) {
    r.end = 2;
    return r;
  }
  const uint8_t *h = p + *at;
  uint32_t len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
                 (uint32_t)h[2] << 8 | h[3];
  if (len == 0 || len > max) {
    r.end = len == 0 ? TEENY_E_PROTO : TEENY_E_TOOBIG;
    return r;
  }
  if (n - *at - 4 < len) {
    r.end = 2;
    return r;
  }
  r.off = *at + 4;
  r.len = len;
  *at += 4 + (size_t)len;
  return r;
}

static uint32_t rng(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

/* Chunk sizes: mostly small, sometimes large, sometimes everything. */
static size_t chunk_size(uint32_t *s, size_t left) {
  uint32_t r = rng(s);
  size_t n;
  switch (r & 3) {
  case 0: n = 1; break;
  case 1: n = 1 + (r >> 8) % 8; break;
  case 2: n = 1 + (r >> 8) % 512; break;
  default: n = left; break;
  }
  return n < left ? n : left;
}

/* Drain the reader, checking each frame against the reference. */
static int drain(teeny_frame_reader *r, const uint8_t *p, size_t n,
                 size_t *ref_at, uint32_t max) {
  const char *payload;
  size_t len;
  int rc;
  while ((rc = teeny_frame_reader_next(r, &payload, &len)) == 1) {
    ref want = ref_next(p, n, ref_at, max);
    CHECK(want.end == 0);
    CHECK(len == want.len && memcmp(payload, p + want.off, len) == 0);
    CHECK(r->body_cap <= max);
    decode_all(payload, len);
  }
  CHECK(r->body_cap <= max);
  return rc;
}

static void frames(const uint8_t *p, size_t n, uint32_t seed, uint32_t max) {
  teeny_frame_reader r;
  teeny_frame_reader_init(&r, max);
  size_t off = 0, ref_at = 0;
  int rc = 0;
  while (off < n && rc == 0) {
    size_t k = chunk_size(&seed, n - off);
    CHECK(teeny_frame_reader_feed(&r, p + off, k) == 0);
    off += k;
    rc = drain(&r, p, n, &ref_at, max);
  }
  ref want = ref_next(p, n, &ref_at, max);
  if (rc < 0) {
    CHECK(want.end == rc);
  } else {
    CHECK(want.end == 1 || want.end == 2);
    CHECK(teeny_frame_reader_eof(&r) == (want.end == 1 ? 0 : TEENY_E_PROTO));
  }
  teeny_frame_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) {
    decode_all("", 0);
    return 0;
  }
  uint8_t mode = data[0];
  const uint8_t *p = data + 1;
  size_t n = size - 1;
  uint32_t seed = 0x9e3779b9u ^ (uint32_t)mode * 0x01000193u;
  uint32_t max = (mode & 0xc0) == 0xc0 ? 256 : 0;
  decode_all((const char *)p, n);
  frames(p, n, seed, max ? max : TEENY_FRAME_MAX_DEFAULT);
  return 0;
}
