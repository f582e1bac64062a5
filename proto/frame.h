/*
 * proto/frame.h — length-prefixed frames on a byte stream (PROTOCOL.md §1).
 *
 * A frame is a u32 big-endian payload length followed by that many bytes.
 * The reader takes bytes in arbitrary chunks (whatever a libuv read callback
 * got) and hands out complete payloads.  It never holds more than one partial
 * frame, checks a length prefix before buffering any of its body, and grows
 * its buffer only as body bytes actually arrive, so a connection costs at
 * most max + a few bytes however the peer behaves.  A frame that lies wholly
 * inside one fed chunk is handed out in place, without a copy.
 *
 * Typical use in a read callback:
 *
 *   if ((rc = teeny_frame_reader_feed(&r, buf, n)) < 0) goto close;
 *   while ((rc = teeny_frame_reader_next(&r, &p, &len)) == 1) handle(p, len);
 *   if (rc < 0) goto close;           // reply TEENY_E_TOOBIG/PROTO, close
 *
 * and at end of stream teeny_frame_reader_eof() says whether a frame was
 * cut short.  Writers build frames in a teeny_buf (teeny_frame_write, or
 * teeny_frame_begin/end around an encoder to avoid copying the payload).
 */
#ifndef TEENY_PROTO_FRAME_H
#define TEENY_PROTO_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define TEENY_FRAME_PREFIX 4                 /* bytes of the length prefix */
#define TEENY_FRAME_MAX_DEFAULT (16u << 20)  /* default payload limit, 16 MiB */

typedef struct teeny_frame_reader {
  uint32_t max;             /* largest payload accepted */
  int err;                  /* 0, or the sticky error that killed the stream */
  unsigned char hdr[TEENY_FRAME_PREFIX]; /* prefix of the frame being read
                                           (or of the last one refused) */
  unsigned hdr_len;         /* prefix bytes received (0..4) */
  uint32_t need;            /* payload length, valid once hdr_len == 4 */
  char *body;               /* payload bytes received so far (owned) */
  size_t body_len;          /* how many */
  size_t body_cap;          /* bytes allocated at body */
  bool handed;              /* body was handed out by the last next() */
  const unsigned char *in;  /* fed bytes not yet consumed (borrowed) */
  size_t in_len;            /* how many */
} teeny_frame_reader;

/* Prepare r for a new stream.  max is the largest payload accepted; 0 means
 * TEENY_FRAME_MAX_DEFAULT.  Allocates nothing. */
void teeny_frame_reader_init(teeny_frame_reader *r, uint32_t max);

/* Release r's buffer.  r may be re-initialised; NULL is a no-op. */
void teeny_frame_reader_free(teeny_frame_reader *r);

/* Give r the next chunk of the stream.  The bytes are borrowed, not copied:
 * they must stay valid until teeny_frame_reader_next() has returned 0 or an
 * error.  Returns 0; the sticky stream error if there is one; TEENY_E_INVAL
 * if the previous chunk was not drained yet (a caller bug). */
int teeny_frame_reader_feed(teeny_frame_reader *r, const void *data, size_t len);

/* Take the next complete frame.  Returns 1 and sets *payload and *len (the
 * payload stays valid until the next call on r); 0 when the fed bytes are
 * used up and more are needed; or a negative error, after which the stream
 * is dead and every later call returns it again:
 *   TEENY_E_PROTO   a zero length prefix
 *   TEENY_E_TOOBIG  a length prefix over the limit (found before any of the
 *                   body is buffered)
 *   TEENY_E_NOMEM   the body buffer could not grow */
int teeny_frame_reader_next(teeny_frame_reader *r, const char **payload,
                            size_t *len);

/* At end of stream, after next() returned 0: 0 if the stream ended on a
 * frame boundary, TEENY_E_PROTO if it cut a frame short, or the sticky
 * error. */
int teeny_frame_reader_eof(const teeny_frame_reader *r);

/* Append one frame (prefix + payload) to out.  Returns 0, TEENY_E_PROTO for
 * an empty payload, TEENY_E_TOOBIG if len > max (0 means the default), or
 * TEENY_E_NOMEM.  On failure out is as it was (unless out->oom was set). */
int teeny_frame_write(teeny_buf *out, const void *payload, size_t len,
                      uint32_t max);

/* Frame a payload encoded in place: begin appends a placeholder prefix and
 * returns its offset; write the payload after it (e.g. with an encoder from
 * proto/msg.h); end fills in the length.  end returns 0, or TEENY_E_PROTO
 * (nothing written), TEENY_E_TOOBIG (over max; 0 means the default),
 * TEENY_E_NOMEM, or TEENY_E_INVAL (begin is not an offset begin returned),
 * and on failure cuts out back to that offset. */
size_t teeny_frame_begin(teeny_buf *out);
int teeny_frame_end(teeny_buf *out, size_t begin, uint32_t max);

#endif /* TEENY_PROTO_FRAME_H */
