/*
 * daemon/remote.h — the remote tier: a Redis shared by the teenycd of many
 * nodes, read through after a local miss, written behind after a compile,
 * and a lease per key being compiled so that one node in the cluster
 * compiles it (docs/remote.md has the keys and the value format).
 *
 * The loop thread never talks to Redis.  One remote thread owns the
 * connection (hiredis, blocking calls bounded by poll() deadlines) and
 * works through three queues in priority order: lookups, lease renewals
 * and waits, then releases and uploads.  Outcomes come back to the loop
 * through one uv_async_t.  Every lookup has a deadline (--remote-timeout
 * from when it was queued): past it, or while the remote is down, it is
 * answered "unavailable" and the daemon compiles locally.  A remote that
 * fails (refused, reset, timed out, an error reply to a write) is marked
 * down with one warning, and retried with backoff (100 ms doubling to 5 s);
 * a reply is never delayed by more than one --remote-timeout.
 *
 * One header for the tier, a section per file:
 *   remote_url.c    the URL: redis://, unix://; rediss:// refused (no TLS
 *                   in this hiredis)
 *   remote_entry.c  the value of an entry: encode, and verify against its
 *                   key and digests (nothing unverified is ever loaded)
 *   remote_conn.c   one connection with deadlines: connect, AUTH, SELECT,
 *                   pipelined commands
 *   remote.c        the thread, the queues, leases, waits, counters
 */
#ifndef TEENY_DAEMON_REMOTE_H
#define TEENY_DAEMON_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/common.h"
#include "daemon/log.h"
#include "teeny/compile.h"

#define TEENY_REMOTE_ERR_LEN 256

/* ---- remote_url.c ---------------------------------------------------------- */

typedef struct teeny_remote_addr {
  char host[256];  /* TCP host ("" for a Unix socket) */
  int port;        /* TCP port (6379 by default) */
  char path[108];  /* Unix socket path ("" for TCP) */
  char user[128];  /* ACL user ("" : none, or AUTH with a password only) */
  char pass[256];  /* password ("" : no AUTH) */
  int db;          /* SELECT db (0: the default, no SELECT) */
  char shown[400]; /* the URL without its password, for logs */
} teeny_remote_addr;

/* Parse redis://[user[:pass]@]host[:port][/db] (host may be [v6]) or
 * unix://[user[:pass]@]/path[?db=N].  0, or TEENY_E_INVAL with the reason
 * in err (TEENY_REMOTE_ERR_LEN); rediss:// is TEENY_E_UNSUPPORTED with
 * why (Debian 12's hiredis 0.14 has no TLS). */
int teeny__remote_url_parse(const char *url, teeny_remote_addr *out, char *err);

/* ---- remote_entry.c ---------------------------------------------------------- */

#define TEENY_REMOTE_FORMAT 1   /* the value format's version (docs/remote.md) */
#define TEENY_REMOTE_HEAD 108   /* bytes before the body */
#define TEENY_REMOTE_TRAILER 32 /* the SHA-256 (or HMAC) after it */

/* Why a fetched value was refused (counted as rejected; logged). */
typedef enum teeny_remote_reject {
  TEENY_REMOTE_OK = 0,
  TEENY_REMOTE_BAD_SIZE,    /* shorter than a head, longer than the limit,
                               or its lengths do not add up */
  TEENY_REMOTE_BAD_MAGIC,   /* not ours, or another format version */
  TEENY_REMOTE_BAD_DIGEST,  /* the trailer does not match (bit rot, a
                               truncated write, or another secret) */
  TEENY_REMOTE_BAD_SIGNING, /* signed but we have no secret, or the other
                               way round */
  TEENY_REMOTE_BAD_BODY,    /* the artifact does not decode */
  TEENY_REMOTE_BAD_KEY,     /* the entry is another key's, or sha256 of its
                               source is not the key */
  TEENY_REMOTE_BAD_ARTIFACT /* PTX or MLIR does not match its digest, or a
                               required part is missing */
} teeny_remote_reject;

/* A few words for each reason. */
const char *teeny__remote_reject_name(teeny_remote_reject r);

/* The value for artifact a (ptx and source required) into out (reset
 * first): head, body, trailer; signed with HMAC-SHA256 when secret_len >
 * 0.  0, TEENY_E_INVAL (a part missing), TEENY_E_NOMEM. */
int teeny__remote_entry_encode(const teeny_artifact *a, const void *secret,
                               size_t secret_len, teeny_buf *out);

/* Check value (len bytes, as fetched for key) and decode it: *out gets an
 * owned artifact (teeny_artifact_destroy) only when every check passed.
 * Returns TEENY_REMOTE_OK or the first check that failed (*out NULL); an
 * allocation failure is TEENY_REMOTE_BAD_BODY too (nothing is loaded). */
teeny_remote_reject teeny__remote_entry_verify(const void *value, size_t len,
                                               const char *key,
                                               const void *secret,
                                               size_t secret_len,
                                               size_t max_len,
                                               teeny_artifact **out);

/* ---- remote_conn.c ------------------------------------------------------------ */

typedef struct teeny_remote_conn teeny_remote_conn;
typedef struct redisReply teeny_remote_reply; /* hiredis's */

/* Open a connection to addr and authenticate/select, all before deadline
 * (monotonic ns).  NULL with why in err. */
teeny_remote_conn *teeny__remote_conn_open(const teeny_remote_addr *addr,
                                           uint64_t deadline, char *err);
void teeny__remote_conn_close(teeny_remote_conn *c); /* NULL is a no-op */

/* Queue one command (argv of argc binary-safe arguments) to send with the
 * next teeny__remote_conn_run.  0 or TEENY_E_NOMEM. */
int teeny__remote_conn_append(teeny_remote_conn *c, int argc,
                              const char **argv, const size_t *lens);
/* Send what was appended and read one reply per command into replies[]
 * (freeReplyObject each; NULL where none came), before deadline.  0, or
 * TEENY_E_TIMEOUT / TEENY_E_IO / TEENY_E_CLOSED with err: the connection
 * is then unusable (close it).  An error *reply* is a reply (type
 * REDIS_REPLY_ERROR), not a failure.  bytes_in/out add what crossed. */
int teeny__remote_conn_run(teeny_remote_conn *c, teeny_remote_reply **replies,
                           size_t n, uint64_t deadline, uint64_t *bytes_in,
                           uint64_t *bytes_out, char *err);

/* ---- remote.c ------------------------------------------------------------------ */

typedef struct teeny_remote teeny_remote;
typedef struct teeny_remote_lease teeny_remote_lease; /* the thread's */

typedef struct teeny_remote_opts {
  uv_loop_t *loop;          /* outcomes are delivered on it */
  teeny_log *log;           /* thread-safe */
  const char *url;          /* --remote */
  uint64_t timeout_ms;      /* --remote-timeout: a lookup's whole budget */
  uint64_t lease_ms;        /* --remote-lease: lease time (renewed at 1/3) */
  uint64_t wait_ms;         /* --remote-wait: longest wait on another node */
  uint64_t ttl_ms;          /* --remote-ttl: entry TTL (0: none) */
  uint64_t max_entry;       /* --remote-max-entry: largest value */
  const char *prefix;       /* --remote-prefix: key namespace */
  const char *secret_file;  /* --remote-secret-file: HMAC key, or NULL */
} teeny_remote_opts;

/* What a lookup came to. */
typedef enum teeny_remote_outcome {
  TEENY_REMOTE_HIT,         /* art: verified, the caller owns it */
  TEENY_REMOTE_LEASED,      /* compile it: we hold the lease (lease) */
  TEENY_REMOTE_COMPILE,     /* compile it without a lease: unavailable,
                               rejected, the lease holder gave up, or the
                               wait ran out */
  TEENY_REMOTE_CANCELLED    /* teeny__remote_cancel: answer SHUTDOWN */
} teeny_remote_outcome;

/* Runs on the loop thread, exactly once per lookup. */
typedef void (*teeny_remote_done_fn)(void *ctx, teeny_remote_outcome what,
                                     teeny_artifact *art,
                                     teeny_remote_lease *lease);

/* The tier's counters (read with teeny__remote_counters). */
typedef struct teeny_remote_counters {
  uint64_t hits;           /* lookups answered with a verified entry */
  uint64_t misses;         /* lookups that found no entry */
  uint64_t errors;         /* failed exchanges, timeouts, error replies */
  uint64_t bytes_in;       /* bytes read from Redis */
  uint64_t bytes_out;      /* bytes written to it */
  uint64_t leases_won;     /* leases taken: this node compiles */
  uint64_t leases_waited;  /* lookups that waited on another node's lease */
  uint64_t lease_takeovers;/* ... whose holder went away: we compiled */
  uint64_t wait_timeouts;  /* waits that ran past --remote-wait */
  uint64_t rejected;       /* fetched entries that failed verification */
  uint64_t uploads;        /* entries written */
  uint64_t uploads_dropped;/* not written: remote down, queue full, too big */
  uint64_t unavailable;    /* lookups answered "unavailable" (down, late) */
  uint64_t up;             /* 1 while connected (or not yet tried) */
} teeny_remote_counters;

/* Parse the URL and start the thread (it connects on first use: a remote
 * down at startup only costs a warning).  NULL with why in err for a bad
 * URL or options (rediss://: TEENY_E_UNSUPPORTED), or NOMEM/IO. */
int teeny__remote_create(const teeny_remote_opts *o, teeny_remote **out,
                         char *err);
/* Look key up; done(ctx, ...) runs later on the loop thread — or at once,
 * inside this call, with TEENY_REMOTE_COMPILE while the remote is down. */
void teeny__remote_lookup(teeny_remote *r, const char *key,
                          teeny_remote_done_fn done, void *ctx);
/* After a successful compile: upload art (taken: the tier frees it) in the
 * background, then release lease (may be NULL).  Never blocks. */
void teeny__remote_upload(teeny_remote *r, teeny_artifact *art,
                          teeny_remote_lease *lease);
/* The compile behind lease failed or was cancelled: let the waiters
 * compile (the lease is marked failed for a few seconds).  NULL: no-op. */
void teeny__remote_release(teeny_remote *r, teeny_remote_lease *lease);
/* Lookups not yet answered. */
unsigned teeny__remote_pending(const teeny_remote *r);
/* Answer every pending lookup TEENY_REMOTE_CANCELLED (soon, on the loop). */
void teeny__remote_cancel(teeny_remote *r);
/* A copy of the counters (any thread). */
void teeny__remote_counters(teeny_remote *r, teeny_remote_counters *out);
/* Close the async handle (with the loop's others at the stop). */
void teeny__remote_close(teeny_remote *r);
/* After the loop ended: release held leases (bounded by the timeout), stop
 * and join the thread, free.  NULL is a no-op. */
void teeny__remote_destroy(teeny_remote *r);

#endif /* TEENY_DAEMON_REMOTE_H */
