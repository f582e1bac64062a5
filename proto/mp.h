/*
 * proto/mp.h — internal to teeny_proto: the msgpack reading and writing
 * helpers msg.c and msg_reply.c are built from.
 *
 * Reading is three layers: teeny__mp_scan() walks the raw bytes and refuses
 * anything malformed or hostile (counts the bytes cannot hold, depth over
 * TEENY_PROTO_MAX_DEPTH, too many values, trailing bytes, a non-map top
 * level) before msgpack-c sees it; msgpack-c then builds the object tree in
 * its zone; typed getters copy what a message keeps into the message's
 * teeny_msg_mem, checking type, range, length and NULs, and name the field
 * in the error.  Writing wraps a msgpack_packer whose sink is a teeny_buf.
 */
#ifndef TEENY_PROTO_MP_H
#define TEENY_PROTO_MP_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

/* ---- owned memory of a decoded message --------------------------------------- */

/* Zeroed, max-aligned memory owned by *m; NULL when allocation fails. */
void *teeny__mem_alloc(teeny_msg_mem **m, size_t n);
/* An array of count elements of size bytes; NULL on overflow or failure. */
void *teeny__mem_array(teeny_msg_mem **m, size_t count, size_t size);
/* A NUL-terminated copy of s[0..n). */
char *teeny__mem_strndup(teeny_msg_mem **m, const char *s, size_t n);
/* Free everything *m owns; *m becomes NULL. */
void teeny__mem_free(teeny_msg_mem **m);

/* ---- decoding ------------------------------------------------------------------ */

typedef struct teeny__dec {
  teeny_msg_mem **mem;  /* where copies go */
  char *err;            /* TEENY_PROTO_ERR_LEN bytes, or NULL */
  msgpack_unpacked up;  /* the object tree (msgpack-c's zone) */
} teeny__dec;

/* A named field of a map: filled by teeny__dec_fields. */
typedef struct teeny__field {
  const char *name;          /* field name */
  const msgpack_object *v;   /* its value; NULL when absent */
} teeny__field;

/* Check bytes p[0..n) are exactly one well-formed msgpack map within the
 * limits.  Returns 0 or TEENY_E_PROTO with a message in err. */
int teeny__mp_scan(const void *p, size_t n, char *err);

/* Scan, then unpack p[0..n) into d->up; *root is the top-level map.  The
 * tree references p, which must outlive d.  Returns 0, TEENY_E_PROTO or
 * TEENY_E_NOMEM.  teeny__dec_close must follow in every case. */
int teeny__dec_open(teeny__dec *d, teeny_msg_mem **mem, char *err,
                    const void *p, size_t n, const msgpack_object **root);
void teeny__dec_close(teeny__dec *d);

/* Write a message to d->err and return code. */
int teeny__dec_fail(teeny__dec *d, int code, const char *fmt, ...)
    TEENY_PRINTF(3, 4);

/* Point each f[i].v at the value of the map entry named f[i].name.  Keys
 * must be strings; a known name twice is an error; unknown names are
 * ignored.  where prefixes field names in messages (NULL at top level). */
int teeny__dec_fields(teeny__dec *d, const msgpack_object *map,
                      const char *where, teeny__field *f, size_t n);

/* True when f was sent with a non-nil value (nil counts as absent). */
bool teeny__present(const teeny__field *f);

/* Typed getters.  Each checks f's value and stores it in *out; an absent
 * optional field leaves *out alone; an absent required one is an error.
 * They return 0, TEENY_E_PROTO or TEENY_E_NOMEM, naming where.f->name. */
int teeny__get_u64(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, uint64_t min, uint64_t max, uint64_t *out);
int teeny__get_i64(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, int64_t min, int64_t max, int64_t *out);
int teeny__get_int(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, int min, int max, int *out);
int teeny__get_u32(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, uint32_t min, uint32_t max, uint32_t *out);
int teeny__get_bool(teeny__dec *d, const char *where, const teeny__field *f,
                    bool required, bool *out);
/* A finite number in 0..max, integer or float. */
int teeny__get_ms(teeny__dec *d, const char *where, const teeny__field *f,
                  bool required, double max, double *out);
/* Largest compile_ms of one artifact: 1e9 ms (11.5 days) keeps its
 * nanoseconds below 2^53, so ms -> ns -> ms round trips exactly. */
#define TEENY__ARTIFACT_MS_MAX 1e9
/* A string of at most maxlen bytes with no NUL, copied. */
int teeny__get_str(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, size_t maxlen, const char **out);
/* A string or binary of at most maxlen bytes (NULs allowed), copied with a
 * NUL after it.  Over maxlen is TEENY_E_LIMIT when limit_err, else PROTO. */
int teeny__get_blob(teeny__dec *d, const char *where, const teeny__field *f,
                    bool required, size_t maxlen, bool limit_err,
                    const char **out, size_t *len);
/* One of names[0..n) as a string; *out gets its index. */
int teeny__get_enum(teeny__dec *d, const char *where, const teeny__field *f,
                    bool required, const char *const *names, int n, int *out);
/* A 64-hex-digit key, lower-cased into out[65]. */
int teeny__get_key(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, char out[65]);
/* A map or an array of at most max elements; *out stays NULL if absent. */
int teeny__get_map(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, size_t max, const msgpack_object **out);
int teeny__get_array(teeny__dec *d, const char *where, const teeny__field *f,
                     bool required, size_t max, const msgpack_object **out);

/* A printable excerpt of untrusted text for error messages: at most 32
 * bytes, control and non-ASCII bytes shown as '?', "..." if cut. */
#define TEENY__EXCERPT_LEN 40
void teeny__excerpt(const char *p, size_t n, char out[TEENY__EXCERPT_LEN]);

/* The wire names of the emit bits; decode and encode an emit array. */
int teeny__get_emit(teeny__dec *d, const teeny__field *f, unsigned *out);

/* A "consts" map (name -> int64, at most TEENY_PROTO_MAX_BINDINGS, each
 * name once) into an array the message owns; absent: *out stays. */
int teeny__decode_consts(teeny__dec *d, const teeny__field *f,
                         const teeny_const_binding **out, size_t *n);

/* ---- encoding ------------------------------------------------------------------ */

typedef struct teeny__enc {
  msgpack_packer pk; /* writes into out */
  teeny_buf *out;    /* the buffer appended to */
  size_t start;      /* out->len before encoding, for rollback */
} teeny__enc;

void teeny__enc_init(teeny__enc *e, teeny_buf *out);
/* Finish: when rc != 0 or an append failed, cut out back to where encoding
 * started and return rc (or TEENY_E_NOMEM); else return 0. */
int teeny__enc_end(teeny__enc *e, int rc);

void teeny__put_map(teeny__enc *e, size_t n);
void teeny__put_array(teeny__enc *e, size_t n);
void teeny__put_str(teeny__enc *e, const char *s); /* NULL: nil */
void teeny__put_strn(teeny__enc *e, const char *s, size_t n);
void teeny__put_bin(teeny__enc *e, const void *p, size_t n);
void teeny__put_u64(teeny__enc *e, uint64_t v);
void teeny__put_i64(teeny__enc *e, int64_t v);
void teeny__put_f64(teeny__enc *e, double v);
void teeny__put_bool(teeny__enc *e, bool v);
/* key + value in one call */
void teeny__kv_str(teeny__enc *e, const char *k, const char *v);
void teeny__kv_bin(teeny__enc *e, const char *k, const void *p, size_t n);
void teeny__kv_u64(teeny__enc *e, const char *k, uint64_t v);
void teeny__kv_i64(teeny__enc *e, const char *k, int64_t v);
void teeny__kv_f64(teeny__enc *e, const char *k, double v);
void teeny__kv_bool(teeny__enc *e, const char *k, bool v);
/* "emit": [names...] for the bits set in emit */
void teeny__kv_emit(teeny__enc *e, unsigned emit);
/* Number of names an emit set writes. */
size_t teeny__emit_count(unsigned emit);

/* Check an encoder input string: non-NULL, no longer than maxlen. */
bool teeny__str_ok(const char *s, size_t maxlen);

/* ---- msg_tune.c: the autotuning ops ------------------------------------------- */

/* The body of a tune, tune_done, tuned or tuned_purge request. */
int teeny__decode_tune_request(teeny__dec *d, const msgpack_object *root,
                               teeny_msg_request *req);
/* Check such a request and write its map header (n envelope fields). */
int teeny__encode_tune_head(teeny__enc *e, const teeny_msg_request *req, size_t n);
void teeny__put_tune_body(teeny__enc *e, const teeny_msg_request *req);
/* The body of their replies. */
int teeny__decode_tune_reply(teeny__dec *d, const msgpack_object *root,
                             teeny_msg_reply *r);
/* Validate an ok reply's body and count its fields; -1: invalid. */
int teeny__tune_reply_fields(const teeny_msg_reply *r);
/* msg_admin.c: the stats reply's optional store and histograms, and the
 * config reply.  *_fields: how many map fields the body adds, -1 if
 * invalid. */
int teeny__decode_stats_more(teeny__dec *d, const msgpack_object *root,
                             teeny_msg_stats_reply *s);
int teeny__stats_more_fields(const teeny_msg_stats_reply *s);
void teeny__put_stats_more(teeny__enc *e, const teeny_msg_stats_reply *s);
int teeny__decode_config_reply(teeny__dec *d, const msgpack_object *root,
                               teeny_msg_config_reply *c);
int teeny__config_reply_fields(const teeny_msg_config_reply *c);
void teeny__put_config_reply(teeny__enc *e, const teeny_msg_config_reply *c);
void teeny__put_tune_reply(teeny__enc *e, const teeny_msg_reply *r);

#endif /* TEENY_PROTO_MP_H */
