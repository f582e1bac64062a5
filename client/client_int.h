/*
 * client/client_int.h — the internal interface of libteenyc-client, one
 * section per file:
 *
 *   conn.c      one Unix-socket connection to teenycd: connect, HELLO,
 *               framed requests, pipelined replies matched by id
 *   result.c    compile results: a shared, reference-counted core (a
 *               decoded reply, a compiled artifact or a store record) and
 *               the per-call wrapper handed to the caller
 *   memo.c      the per-client memo: exact request -> result core
 *   admin.c     teeny_client_admin: the non-compile ops
 *   client.c    open/close, modes, compile and batch, reconnect
 *   discover.c  which socket: the candidates, the first that answers
 *   cuda.c      the dlopen()ed CUDA driver (cuda_api.h is its table)
 *   cuda_bench.c  timing launches with CUDA events (teeny_tune_time_cuda)
 *   cubin.c     which cubin may be loaded (teeny_cubin_usable)
 *   tune.c      teeny_client_tune: shared autotuning through teenycd
 *   kernel.c    teeny_kernel, the runtime of teenyc-gen's code
 *   embedded_load.c    finding libteenyc-embedded on first need
 *                      (embedded_api.h is its interface)
 *   codegen_embedded.c the thin client's NVPTX back end: libteenyc-embedded's
 *
 * Not part of the thin library: embedded.c, the body of libteenyc-embedded
 * (the compiler's back end and the store, for embedded and offline modes).
 *
 * Locking: teeny_client.lock guards the connection, the store and err;
 * the memo has its own lock, always taken after (never while waiting for)
 * the client lock, so memo hits never wait behind a round trip.
 */
#ifndef TEENY_CLIENT_INT_H
#define TEENY_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/embedded_api.h"
#include "common/common.h"
#include "proto/frame.h"
#include "proto/msg.h"
#include "teeny/client.h"

#define TEENY__ERR_LEN 1024     /* size of every internal message buffer */
#define TEENY__SOCKET_MAX 108   /* sizeof(sockaddr_un.sun_path) */
#define TEENY__READ_CHUNK 65536 /* bytes per read() */

/* Write a one-line message into err[0..size) (NULL: nothing); returns rc. */
int teeny__seterr(char *err, size_t size, int rc, const char *fmt, ...)
    TEENY_PRINTF(4, 5);

/* ============================================================================
 * conn.c — one connection to teenycd
 * ========================================================================== */

typedef struct teeny__conn {
  int fd;                  /* -1 when closed */
  uint64_t last_id;        /* the last request id used */
  uint32_t max_frame;      /* server's limits from the hello reply */
  uint32_t max_source;
  uint32_t max_inflight;
  char server[64];         /* "teenycd/0.1.0" */
  teeny_frame_reader rd;   /* incoming frames */
  char *rbuf;              /* read buffer, TEENY__READ_CHUNK bytes */
  uint64_t frames_sent;    /* requests written on this client, ever */
} teeny__conn;

void teeny__conn_init(teeny__conn *k);
/* Connect to path and do HELLO as client_name.  Returns 0, TEENY_E_CONNECT
 * (no listener: ENOENT, ECONNREFUSED, ...), TEENY_E_PERM (EACCES: the
 * socket is not ours to use), TEENY_E_VERSION, TEENY_E_PROTO,
 * TEENY_E_TIMEOUT, TEENY_E_CLOSED, TEENY_E_NOMEM; k is closed on failure. */
int teeny__conn_open(teeny__conn *k, const char *path, const char *client_name,
                     int timeout_ms, char *err, size_t errsz);
void teeny__conn_close(teeny__conn *k); /* idempotent */
static inline bool teeny__conn_is_open(const teeny__conn *k) { return k->fd >= 0; }

/* Send reqs[i] for every i with !replies[i] still unanswered (done[i]
 * false), at most max_inflight at a time, and decode each reply, read as
 * the answer to reqs[i].op, into replies[i] (done[i] = true).  Ids are
 * assigned here.  Returns 0 when all are answered, else the transport
 * error (TEENY_E_CLOSED for EPIPE/ECONNRESET/end of stream, TEENY_E_TIMEOUT,
 * TEENY_E_PROTO for an undecodable reply, TEENY_E_NOMEM) with the
 * connection closed; answered entries stay answered. */
int teeny__conn_exchange(teeny__conn *k, teeny_msg_request *reqs,
                         teeny_msg_reply **replies, bool *done, size_t n,
                         int timeout_ms, char *err, size_t errsz);

/* ============================================================================
 * result.c — results
 * ========================================================================== */

/* What a result's memory belongs to; shared by the memo and every wrapper
 * handed out for it, freed when the last reference goes. */
typedef struct teeny__core {
  atomic_long refs;          /* references (memo + wrappers) */
  teeny_client_result pub;   /* the fields every wrapper copies */
  unsigned emit;             /* artifacts present (TEENY_EMIT_*) */
  teeny_msg_reply reply;     /* daemon: the decoded reply (owns it all) */
  teeny_artifact *art;       /* embedded/offline: compiled or from the store */
  teeny_diags diags;         /* embedded/offline: diagnostics */
  char *error;               /* owned copy of pub.error */
} teeny__core;

teeny__core *teeny__core_new(void);               /* refs 1, or NULL */
void teeny__core_ref(teeny__core *c);
void teeny__core_unref(teeny__core *c);           /* NULL is a no-op */
/* Fill pub from c->reply (a decoded compile reply). */
void teeny__core_from_reply(teeny__core *c, unsigned emit);
/* Fill c from an in-process compile's result, taking over its artifact
 * and diagnostics (e is left empty). */
void teeny__core_from_eresult(teeny__core *c, teeny__eresult *e,
                              teeny_client_mode mode);
/* A failed request: status, message, diagnostics in c->diags. */
int teeny__core_set_error(teeny__core *c, int status, const char *msg,
                          teeny_client_mode mode);
/* A new wrapper for c (takes a reference); cache overrides pub.cache
 * unless negative.  NULL when memory runs out. */
teeny_client_result *teeny__result_wrap(teeny__core *c, int cache);

/* ============================================================================
 * memo.c — exact request -> result
 * ========================================================================== */

typedef struct teeny__memo_ent teeny__memo_ent;

typedef struct teeny__memo {
  pthread_mutex_t lock;      /* guards everything below */
  teeny__memo_ent **buckets; /* chains by hash */
  size_t nbuckets;           /* a power of two */
  size_t n;                  /* entries */
  size_t cap;                /* at most this many (0: memo off) */
  teeny__memo_ent *lru_head; /* most recently used */
  teeny__memo_ent *lru_tail; /* least recently used, evicted first */
  uint64_t hits, misses;     /* lookups */
} teeny__memo;

int teeny__memo_init(teeny__memo *m, size_t cap); /* 0 or TEENY_E_NOMEM */
void teeny__memo_close(teeny__memo *m);
void teeny__memo_clear(teeny__memo *m);
/* Hash of every field of req (what the lookup compares). */
uint64_t teeny__memo_hash(const teeny_compile_req *req);
/* A referenced core for req whose artifacts include emit, or NULL. */
teeny__core *teeny__memo_get(teeny__memo *m, const teeny_compile_req *req,
                             uint64_t hash, unsigned emit);
/* Remember core (takes a reference) for req; replaces an older entry for
 * the same request.  Failure to allocate just skips it. */
void teeny__memo_put(teeny__memo *m, const teeny_compile_req *req,
                     uint64_t hash, teeny__core *core);

/* ============================================================================
 * client.c — the handle
 * ========================================================================== */

struct teeny_client {
  pthread_mutex_t lock;          /* guards conn, store, err, active */
  teeny_client_mode requested;   /* AUTO, DAEMON, EMBEDDED or OFFLINE */
  teeny_client_mode active;      /* DAEMON, EMBEDDED, OFFLINE; DEFAULT: failed */
  char socket[TEENY__SOCKET_MAX];/* the daemon's socket (discover.c) */
  bool socket_given;             /* opts.socket_path: no discovery */
  char name[TEENY_PROTO_MAX_NAME + 1]; /* HELLO client name */
  char *cache_dir;               /* explicit store root, or NULL */
  int timeout_ms;                /* 0: none */
  int restart_wait_ms;           /* daemon mode: wait for a restart; 0: none */
  int64_t next_probe_ms;         /* auto mode in process: when to look for
                                    the daemon again (monotonic ms) */
  teeny__conn conn;              /* daemon mode */
  const teeny__embedded_api *emb;/* embedded/offline: libteenyc-embedded */
  teeny__estore *store;          /* embedded mode */
  teeny__memo memo;              /* exact request -> result */
  char err[TEENY__ERR_LEN];      /* the last failure */
  char notice[TEENY__ERR_LEN];   /* how the mode came about ("": plainly) */
  atomic_int arch;               /* teeny_client_set_arch's sm number; 0:
                                    none; -1 (unset): the device's */
  char arch_text[16];            /* teeny_client_arch's answer */
};

/* client.c.  The GPU architecture compiles name now (set, else the CUDA
 * device's once loaded) in buf, or NULL.  Any thread, no lock. */
const char *teeny__client_arch(const teeny_client *c, char buf[16]);

/* Lock held: the connection, reopened if closed.  0 or a transport error. */
int teeny__client_connect(teeny_client *c);
/* discover.c.  Lock held (or opening): connect to the first socket that
 * answers (c->socket then names it).  Returns 0; TEENY_E_CONNECT or
 * TEENY_E_PERM (the worst reason) with every path tried and why in c->err;
 * or the error of a daemon that answered and failed (TEENY_E_VERSION...). */
int teeny__client_discover(teeny_client *c);

/* Lock held: exchange, riding out a daemon restart when may_retry (not
 * for shutdown): after a lost connection, and for requests answered
 * SHUTDOWN, reconnect and send what is unanswered again — once at once,
 * then (daemon mode) with backoff until restart_wait_ms have passed.  As
 * teeny__conn_exchange otherwise. */
int teeny__client_exchange(teeny_client *c, teeny_msg_request *reqs,
                           teeny_msg_reply **replies, bool *done, size_t n,
                           bool may_retry);
/* Lock held: an auto client working in process goes back to the daemon
 * when it answers (looked for at most every PROBE_MS). */
void teeny__client_maybe_return(teeny_client *c);

#endif /* TEENY_CLIENT_INT_H */
