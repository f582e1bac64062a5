/*
 * proto/msg.h — typed protocol messages and their msgpack encoding
 * (proto/PROTOCOL.md §3-§7 is the wire format; this is its C face).
 *
 * Every request is a teeny_msg_request and every reply a teeny_msg_reply: a
 * small envelope (op, id; status, error) around a union with one member per
 * op.  Decoders validate strictly — types, ranges, required fields, string
 * lengths, no NUL inside names — and never trust a length or a count from
 * the wire: a message is checked byte by byte before msgpack-c builds its
 * tree, so hostile input costs time and memory in proportion to its size.
 * Failures name the offending field in a caller's err[TEENY_PROTO_ERR_LEN].
 *
 * Ownership.  A decoded message owns every string and array it points to;
 * one free function releases them all (the struct itself is the caller's).
 * A message the caller fills for encoding only borrows: encoders read the
 * pointers and keep nothing.  Strings are NUL-terminated; byte blobs
 * (source, ptx, mlir) carry a length and a NUL after it for convenience.
 *
 * Encoders append one msgpack map to a teeny_buf; wrap them in
 * teeny_frame_begin/teeny_frame_end (proto/frame.h) to send.  Nothing here
 * keeps global state; the daemon and every client link the same code.
 */
#ifndef TEENY_PROTO_MSG_H
#define TEENY_PROTO_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "teeny/compile.h"

/* ---- limits (PROTOCOL.md §5) ------------------------------------------------ */

#define TEENY_PROTO_VERSION TEENY_PROTOCOL_VERSION /* the one version spoken (teeny/version.h) */
#define TEENY_PROTO_MAX_SOURCE TEENY_MAX_SOURCE_BYTES /* compile source, 1 MiB */
#define TEENY_PROTO_MAX_INFLIGHT 64   /* default unanswered requests/connection */
#define TEENY_PROTO_MAX_NAME 255      /* kernel/binding/target/op names, globs */
#define TEENY_PROTO_MAX_TEXT 65536    /* messages, file names, ids, lines */
#define TEENY_PROTO_MAX_BINDINGS 64   /* dtype or const bindings per request */
#define TEENY_PROTO_MAX_EMIT 8        /* entries of an emit array */
#define TEENY_PROTO_MAX_DEPTH 16      /* nesting of maps and arrays */
#define TEENY_PROTO_MAX_VALUES (1u << 20) /* msgpack values in one message */
#define TEENY_PROTO_ERR_LEN 256       /* size of the err buffers below */
#define TEENY_PROTO_MAX_HISTS 8       /* histograms in a stats reply */
#define TEENY_PROTO_MAX_BOUNDS 64     /* bucket bounds of one histogram */
#define TEENY_PROTO_MAX_SETTINGS 256  /* settings in a config reply */

/* ---- ops ----------------------------------------------------------------------- */

typedef enum teeny_proto_op {
  TEENY_OP_NONE = 0,  /* no op / envelope only (see teeny_msg_reply_decode) */
  TEENY_OP_HELLO,     /* "hello": version negotiation, first on every link */
  TEENY_OP_PING,      /* "ping" */
  TEENY_OP_COMPILE,   /* "compile" */
  TEENY_OP_STATS,     /* "stats" */
  TEENY_OP_LIST,      /* "list" */
  TEENY_OP_SHOW,      /* "show" */
  TEENY_OP_PURGE,     /* "purge" (admin) */
  TEENY_OP_VERIFY,    /* "verify" (repair: admin) */
  TEENY_OP_SHUTDOWN,  /* "shutdown" (admin) */
  TEENY_OP_TUNE,      /* "tune": a tuned configuration, or the right to tune */
  TEENY_OP_TUNE_DONE, /* "tune_done": record (or abandon) a tuning */
  TEENY_OP_TUNED,     /* "tuned": list tuning records */
  TEENY_OP_TUNED_PURGE, /* "tuned_purge" (admin) */
  TEENY_OP_CONFIG,    /* "config": the server's resolved settings */
  TEENY_OP__COUNT
} teeny_proto_op;

/* The wire name of op ("compile"); NULL for TEENY_OP_NONE and out of range. */
const char *teeny_proto_op_name(teeny_proto_op op);
/* The op a wire name names; TEENY_OP_NONE if none (name may be NULL). */
teeny_proto_op teeny_proto_op_parse(const char *name);

/* compile flags (bit values) */
#define TEENY_MSG_FORCE 1u /* compile even if the key is cached */
#define TEENY_MSG_FLAGS_KNOWN TEENY_MSG_FORCE

/* Artifacts a compile or show reply carries (emit); the first two are the
 * compiler's own TEENY_EMIT_* bits, so emit & (PTX|MLIR) can be passed on. */
#define TEENY_MSG_EMIT_PTX TEENY_EMIT_PTX
#define TEENY_MSG_EMIT_MLIR TEENY_EMIT_MLIR
#define TEENY_MSG_EMIT_SOURCE (1u << 8)

/* Where a compile reply's artifact came from. */
typedef enum teeny_msg_cache {
  TEENY_CACHE_MISS = 0, /* "miss": compiled for this request */
  TEENY_CACHE_MEMORY,   /* "memory": in-memory map hit */
  TEENY_CACHE_DISK,     /* "disk": found in the store */
  TEENY_CACHE_JOINED    /* "joined": waited on another request's compile */
} teeny_msg_cache;

/* Order of a list reply. */
typedef enum teeny_msg_sort {
  TEENY_SORT_USED = 0, /* "used": most recently used first (default) */
  TEENY_SORT_SIZE,     /* "size": largest first */
  TEENY_SORT_HITS      /* "hits": most hits first */
} teeny_msg_sort;

typedef struct teeny_msg_mem teeny_msg_mem; /* what a decoded message owns */

/* ---- requests ---------------------------------------------------------------- */

typedef struct teeny_msg_hello {
  uint32_t version;   /* protocol version the client speaks */
  const char *client; /* "name/version" of the client program */
  uint32_t pid;       /* the client's process id; 0 if not sent */
} teeny_msg_hello;

typedef struct teeny_msg_compile {
  teeny_compile_req req; /* source, kernel, bindings, target, num_warps;
                            req.compiler_version is not on the wire */
  unsigned flags;        /* TEENY_MSG_FORCE */
  unsigned emit;         /* TEENY_MSG_EMIT_*; decode: PTX when not sent */
  const char *arch;      /* the client's GPU ("sm_90"): a cubin for it is
                            wanted; NULL: none */
} teeny_msg_compile;

typedef struct teeny_msg_list {
  const char *name;   /* glob on kernel names; NULL: all */
  uint32_t limit;     /* at most this many entries; 0: the server's page */
  teeny_msg_sort sort;/* order */
  const char *after;  /* a previous reply's `next`: the page after it;
                         NULL: the first page */
} teeny_msg_list;

#define TEENY_PROTO_MAX_CURSOR 96 /* bytes of a list cursor */

typedef struct teeny_msg_show {
  const char *key; /* 1..64 hex digits, a key or its prefix (lower case) */
  unsigned emit;   /* artifacts to include (TEENY_MSG_EMIT_*); default none */
  const char *cubin_arch; /* also the cubin for this architecture; NULL: no */
} teeny_msg_show;

/* Selectors: exactly one of all / to_size, or name and/or older_than_s. */
typedef struct teeny_msg_purge {
  bool all;               /* remove every entry */
  bool has_older_than;    /* older_than_s was given */
  uint64_t older_than_s;  /* entries not used for this many seconds */
  const char *name;       /* glob on kernel names; NULL: any */
  bool has_to_size;       /* to_size was given */
  uint64_t to_size;       /* evict least recently used until <= bytes */
} teeny_msg_purge;

typedef struct teeny_msg_stats {
  bool zero; /* reset the counters after reading them (admin) */
} teeny_msg_stats;

typedef struct teeny_msg_verify {
  bool repair; /* remove broken entries and orphan files (admin) */
} teeny_msg_verify;

/* A configuration of an autotuning run: const bindings and num_warps. */
typedef struct teeny_msg_tune_config {
  const teeny_const_binding *consts; /* the tuned consts */
  size_t nconsts;                    /* how many (<= TEENY_PROTO_MAX_BINDINGS) */
  int num_warps;                     /* 0: the request's default */
} teeny_msg_tune_config;

/* What a tuning record is keyed by (PROTOCOL.md §4.10). */
typedef struct teeny_msg_tune_key {
  const char *kernel;  /* kernel name (display, purge globs) */
  char digest[65];     /* sha256 of source, name and dtype bindings */
  const char *problem; /* the problem key, text ("M=4096 N=4096 K=4096") */
  const char *gpu;     /* the GPU's name ("NVIDIA H200") */
  const char *driver;  /* its driver's version ("580.65.06") */
} teeny_msg_tune_key;

typedef struct teeny_msg_tune {
  teeny_msg_tune_key key; /* which record */
  bool claim;             /* no record: become the tuner (default true) */
  uint64_t wait_ms;       /* wait this long for another tuner; 0: the
                             server's --tune-timeout */
} teeny_msg_tune;

typedef struct teeny_msg_tune_done {
  teeny_msg_tune_key key;       /* which record */
  bool abandon;                 /* no result: let the next waiter tune */
  teeny_msg_tune_config config; /* the winner (unless abandon) */
  double best_ms;               /* its median time */
  uint32_t candidates;          /* configurations timed */
} teeny_msg_tune_done;

typedef struct teeny_msg_tuned {
  const char *name; /* glob on kernel names; NULL: all */
} teeny_msg_tuned;

typedef struct teeny_msg_tuned_purge {
  bool all;         /* every record */
  const char *name; /* or those whose kernel matches this glob */
} teeny_msg_tuned_purge;

typedef struct teeny_msg_request {
  teeny_proto_op op; /* which member of u is valid */
  uint64_t id;       /* chosen by the client, 1..2^64-1, echoed in the reply */
  union {
    teeny_msg_hello hello;
    teeny_msg_compile compile;
    teeny_msg_list list;
    teeny_msg_show show;
    teeny_msg_purge purge;
    teeny_msg_verify verify;
    teeny_msg_stats stats;
    teeny_msg_tune tune;
    teeny_msg_tune_done tune_done;
    teeny_msg_tuned tuned;
    teeny_msg_tuned_purge tuned_purge;
  } u;                /* ping and shutdown have no fields */
  teeny_msg_mem *mem; /* decoded: owned memory; encoding: ignored */
} teeny_msg_request;

/* Decode one request payload (a frame's body) into *req, which is
 * overwritten.  Returns:
 *   0                     req is valid; free it with teeny_msg_request_free
 *   TEENY_E_PROTO         malformed msgpack, not a map, a missing field or a
 *                         field of the wrong type or range (err names it)
 *   TEENY_E_UNSUPPORTED   an op this protocol version does not know
 *   TEENY_E_LIMIT         source over TEENY_PROTO_MAX_SOURCE
 *   TEENY_E_NOMEM
 * Even on failure req->id is the request's id when it could be read (else 0)
 * and req->op its op when known, so the error reply can go to the right
 * request; nothing else is owned then (freeing is still allowed).
 * err (may be NULL) gets a one-line message on failure. */
int teeny_msg_request_decode(const void *payload, size_t len,
                             teeny_msg_request *req, char *err);

/* Release what a decoded request owns; req is zeroed.  NULL is a no-op. */
void teeny_msg_request_free(teeny_msg_request *req);

/* Append req as a msgpack map to out.  Returns 0; TEENY_E_INVAL for an
 * unknown op, id 0, a NULL required string, bad bindings or a source over
 * TEENY_PROTO_MAX_SOURCE; TEENY_E_NOMEM.  On failure out is as it was
 * (unless out->oom was set). */
int teeny_msg_request_encode(const teeny_msg_request *req, teeny_buf *out);

/* ---- replies ------------------------------------------------------------------ */

typedef struct teeny_msg_hello_reply {
  uint32_t version;      /* protocol version the server speaks */
  const char *server;    /* "teenycd/0.1.0" */
  uint32_t max_frame;    /* largest frame payload the server reads */
  uint32_t max_source;   /* largest compile source it accepts */
  uint32_t max_inflight; /* unanswered requests allowed per connection */
} teeny_msg_hello_reply;

typedef struct teeny_msg_compile_reply {
  teeny_artifact art;    /* key, entry, id, name, target, num_warps, params,
                            threads_per_block, shared_bytes; source, mlir and
                            ptx only as asked (else NULL, 0).  compile_ns is
                            carried as compile_ms.  Decoded: owned by the
                            reply, never pass to teeny_artifact_destroy */
  teeny_msg_cache cache; /* where it came from */
  const char *cubin;     /* SASS for cubin_arch, or NULL (none yet, none
                            asked, or an old server) */
  size_t cubin_len;      /* its bytes */
  const char *cubin_arch;      /* the request's arch when cubin is set */
  const char *cubin_toolchain; /* what made it ("ptxas 13.0.88") */
} teeny_msg_compile_reply;

typedef struct teeny_msg_counter {
  const char *name; /* a counter not in teeny_msg_stats_reply */
  double value;     /* its value */
} teeny_msg_counter;

/* A histogram of a stats reply (PROTOCOL.md §4.4): counts per bucket, not
 * cumulative; bucket i holds values <= le[i] (and > le[i-1]), the last one
 * (counts[nle]) those above every bound. */
typedef struct teeny_msg_hist {
  const char *name;       /* "compile_seconds", "hit_seconds" */
  const double *le;       /* nle upper bounds, finite, strictly ascending */
  const uint64_t *counts; /* nle + 1 counts */
  size_t nle;             /* 1..TEENY_PROTO_MAX_BOUNDS */
  double sum;             /* of every observed value (>= 0) */
  uint64_t count;         /* observations: the sum of counts */
} teeny_msg_hist;

typedef struct teeny_msg_stats_reply {
  uint64_t requests;      /* requests answered */
  uint64_t hits;          /* compile requests answered from the cache */
  uint64_t memory_hits;   /* ... of which from the in-memory map */
  uint64_t disk_hits;     /* ... of which from the store */
  uint64_t misses;        /* compile requests not in the cache */
  uint64_t compiles;      /* compiles run */
  uint64_t joins;         /* requests that waited on another's compile */
  uint64_t errors;        /* requests answered with an error */
  uint64_t entries;       /* entries in the store */
  uint64_t bytes;         /* bytes of artifacts in the store */
  uint64_t evictions;     /* entries evicted by the size cap */
  double compile_ms_total;/* time spent compiling */
  double saved_ms_total;  /* compile time hits did not spend */
  uint64_t uptime_s;      /* seconds since the daemon started */
  teeny_msg_counter *extra; /* further counters, in wire order */
  size_t nextra;            /* how many */
  const char *store;        /* the store's root directory; NULL: not sent
                               (older servers) */
  teeny_msg_hist *hists;    /* histograms; NULL, 0: not sent */
  size_t nhists;            /* how many (<= TEENY_PROTO_MAX_HISTS) */
} teeny_msg_stats_reply;

/* One resolved setting of a config reply: its config-file key and its
 * value as that file would spell it ("2G", "60s", "0660"). */
typedef struct teeny_msg_setting {
  const char *key;   /* "max_size" (a name) */
  const char *value; /* "2G"; "" for an unset string (a text) */
} teeny_msg_setting;

typedef struct teeny_msg_config_reply {
  teeny_msg_setting *settings; /* in the server's order */
  size_t nsettings;            /* <= TEENY_PROTO_MAX_SETTINGS */
} teeny_msg_config_reply;

/* One cache entry as list and show describe it. */
typedef struct teeny_msg_entry {
  char key[65];       /* 64 lower-case hex digits */
  const char *name;   /* kernel name */
  const char *id;     /* name__dtypes__consts */
  const char *target; /* "sm_90a" */
  int num_warps;      /* as compiled */
  uint64_t size;      /* bytes of its artifacts */
  int64_t created;    /* Unix time, seconds */
  int64_t last_used;  /* Unix time, seconds */
  uint64_t hits;      /* times served from the cache */
  double compile_ms;  /* time its compile took */
  uint32_t cubins;    /* cubins stored for it (0 from older servers) */
  uint64_t cubin_bytes; /* their bytes (not in size) */
} teeny_msg_entry;

/* One cubin of an entry, as show lists them. */
typedef struct teeny_msg_cubin {
  const char *arch;      /* "sm_90" */
  const char *toolchain; /* "ptxas 13.0.88" */
  uint64_t size;         /* bytes */
  int64_t created;       /* Unix seconds */
  double sass_ms;        /* time making it took */
} teeny_msg_cubin;

typedef struct teeny_msg_list_reply {
  teeny_msg_entry *entries; /* in the order asked for */
  size_t nentries;          /* how many */
  const char *next;         /* more follow: pass as `after`; NULL: the end */
} teeny_msg_list_reply;

typedef struct teeny_msg_show_reply {
  teeny_msg_entry entry; /* the entry the key prefix named */
  const char *source;    /* generated source, when asked; else NULL */
  size_t source_len;
  const char *mlir;      /* .mlir text, when asked; else NULL */
  size_t mlir_len;
  const char *ptx;       /* PTX text, when asked; else NULL */
  size_t ptx_len;
  teeny_msg_cubin *cubins; /* the entry's cubins, by arch */
  size_t ncubins;
  const char *cubin;     /* the cubin of the request's cubin_arch, or NULL */
  size_t cubin_len;
} teeny_msg_show_reply;

typedef struct teeny_msg_purge_reply {
  uint64_t removed; /* entries removed */
  uint64_t bytes;   /* bytes freed */
} teeny_msg_purge_reply;

typedef struct teeny_msg_problem {
  const char *key;     /* entry key or object file name */
  const char *problem; /* what is wrong, one line */
} teeny_msg_problem;

typedef struct teeny_msg_verify_reply {
  uint64_t checked;             /* entries checked */
  teeny_msg_problem *problems;  /* what was found */
  size_t nproblems;             /* how many */
  uint64_t repaired;            /* problems repaired (repair only) */
} teeny_msg_verify_reply;

/* How a tune request was answered. */
typedef enum teeny_msg_tune_state {
  TEENY_TUNE_FOUND = 0, /* "found": a record; config and best_ms say it */
  TEENY_TUNE_TUNE,      /* "tune": no record, and the caller is the tuner:
                           it sends tune_done when finished */
  TEENY_TUNE_NONE,      /* "none": no record (claim was false) */
  TEENY_TUNE_TIMEOUT    /* "timeout": another tuner did not finish within
                           wait_ms */
} teeny_msg_tune_state;

typedef struct teeny_msg_tune_reply {
  teeny_msg_tune_state state;   /* see above */
  bool joined;                  /* found after waiting on another tuner */
  teeny_msg_tune_config config; /* found: the winner */
  double best_ms;               /* found: its median time */
  uint32_t candidates;          /* found: configurations timed */
} teeny_msg_tune_reply;

/* One tuning record, as tuned lists them. */
typedef struct teeny_msg_tuned_rec {
  teeny_msg_tune_key key;       /* kernel, digest, problem, gpu, driver */
  teeny_msg_tune_config config; /* the winner */
  double best_ms;               /* its median time */
  uint32_t candidates;          /* configurations timed */
  int64_t created;              /* Unix seconds */
} teeny_msg_tuned_rec;

typedef struct teeny_msg_tuned_reply {
  teeny_msg_tuned_rec *records; /* newest first */
  size_t nrecords;
} teeny_msg_tuned_reply;

typedef struct teeny_msg_reply {
  teeny_proto_op op;  /* the op answered; not on the wire (the client knows it
                         from the id): set it before encode and decode */
  uint64_t id;        /* the request's id; 0 when it could not be read */
  int status;         /* 0, or a negative teeny_err */
  const char *error;  /* status < 0: one-line message; else NULL */
  teeny_diag *diags;  /* compiler diagnostics (failed compiles, warnings) */
  size_t ndiags;      /* how many */
  const char **candidates; /* TEENY_E_AMBIGUOUS from show: matching keys */
  size_t ncandidates;      /* how many */
  union {
    teeny_msg_hello_reply hello;
    teeny_msg_compile_reply compile;
    teeny_msg_stats_reply stats;
    teeny_msg_list_reply list;
    teeny_msg_show_reply show;
    teeny_msg_purge_reply purge;
    teeny_msg_verify_reply verify;
    teeny_msg_tune_reply tune;
    teeny_msg_tuned_reply tuned;
    teeny_msg_purge_reply tuned_purge; /* removed (bytes unused) */
    teeny_msg_config_reply config;
  } u;                /* by op, only when status == 0 */
  teeny_msg_mem *mem; /* decoded: owned memory; encoding: ignored */
} teeny_msg_reply;

/* Decode one reply payload into *reply, which is overwritten, reading the
 * body as the answer to op.  With op TEENY_OP_NONE only the envelope (id,
 * status, error, diagnostics, candidates) is read: a pipelining client does
 * that first to find the request, then decodes again with its op.  Returns
 * 0 (free with teeny_msg_reply_free), TEENY_E_PROTO (err names the field),
 * TEENY_E_INVAL (op out of range) or TEENY_E_NOMEM.  A reply whose status is
 * an error decodes successfully: check reply->status.  On failure reply->id
 * is set when it could be read. */
int teeny_msg_reply_decode(const void *payload, size_t len, teeny_proto_op op,
                           teeny_msg_reply *reply, char *err);

/* Release what a decoded reply owns; reply is zeroed.  NULL is a no-op. */
void teeny_msg_reply_free(teeny_msg_reply *reply);

/* Append reply as a msgpack map to out.  status < 0 writes the error shape
 * (error defaults to teeny_strerror(status)); status 0 writes the body for
 * reply->op.  Returns 0, TEENY_E_INVAL (status > 0, op out of range, a NULL
 * required string, a malformed key), TEENY_E_NOMEM; on failure out is as it
 * was (unless out->oom was set). */
int teeny_msg_reply_encode(const teeny_msg_reply *reply, teeny_buf *out);

/* Shorthand for the error shape {id, status, error}: what the daemon sends
 * for a request it refuses.  message NULL means teeny_strerror(status). */
int teeny_msg_error_encode(teeny_buf *out, uint64_t id, int status,
                           const char *message);

#endif /* TEENY_PROTO_MSG_H */
