/*
 * daemon/server.h — the libuv side of teenycd: the listening socket,
 * connections, frames in and out, the hello gate, dispatch by op, limits
 * and timeouts, and the orderly stop.
 *
 * Per connection: an incremental frame reader (proto/frame.h) over one
 * read buffer shared by all connections (a read callback consumes
 * everything it is given); requests are decoded on the loop thread and
 * answered in the order their work finishes, each under its own id; reply
 * bytes gather in the connection's output buffer and are written once per
 * loop iteration (a uv_check handle), with uv_try_write first and one
 * uv_write at a time for the rest.  A connection whose peer stops reading
 * is paused when 16 MiB of replies are pending.  Every connection and
 * every reply counts against its uid's limits (quota.h) and the memory
 * budget (budget.h).
 *
 * Lifetimes: a connection is freed when its handle is closed and no reply
 * is owed (refs); work that finishes for a closed connection drops its
 * reply.  The server object owns everything the loop uses (with main's
 * config, log and notifier); it is the only mutable state besides main's.
 */
#ifndef TEENY_DAEMON_SERVER_H
#define TEENY_DAEMON_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "daemon/config.h"
#include "daemon/lanes.h"
#include "daemon/log.h"
#include "daemon/memcache.h"
#include "daemon/sd.h"
#include "proto/frame.h"
#include "proto/msg.h"

typedef struct teeny_server teeny_server;
typedef struct teeny_conn teeny_conn;

typedef struct teeny_server_opts {
  const teeny_config *cfg;      /* resolved settings */
  teeny_log *log;               /* the log */
  const teeny_sd_notify *notify;/* systemd notifications (may be disabled) */
  int listen_fd;                /* socket-activated listener, or -1 */
  uint64_t index_rebuilds;      /* rebuilt at startup already (stats) */
} teeny_server_opts;

/* Create the server: the admin policy, the scheduler (worker store
 * handles, in-memory map), timers.  Does not listen yet.  0, or an error
 * with err filled. */
int teeny__server_create(uv_loop_t *loop, const teeny_server_opts *o,
                         teeny_server **out, char *err, size_t errsz);
/* Bind (replacing a stale socket file, refusing a live one) or adopt the
 * activated listener, and start accepting.  0, TEENY_E_BUSY (another
 * daemon answers on the socket) or TEENY_E_IO, with err filled. */
int teeny__server_listen(teeny_server *s, char *err, size_t errsz);
/* Begin the orderly stop (signal or shutdown op): stop accepting, refuse
 * new requests, let running work finish (up to --shutdown-timeout, then
 * cancel), close connections; the loop then runs out of handles.  Sends
 * STOPPING=1.  Idempotent. */
void teeny__server_stop(teeny_server *s, const char *why);
/* True when the stop gave up on work still running on workers: the
 * caller must not destroy the server (threads may still use it). */
bool teeny__server_abandoned(const teeny_server *s);
/* After the loop ended: final flush, close the store handles, remove the
 * socket file we created, free.  NULL is a no-op. */
void teeny__server_destroy(teeny_server *s);

/* ---- for the scheduler and the store ops (loop thread) ------------------- */

/* Is c closed or closing (its replies are dropped)? */
bool teeny__conn_closing(const teeny_conn *c);
/* A reply is owed on c: counts against --max-inflight until released. */
void teeny__conn_hold(teeny_conn *c);
/* The owed reply was given (or will never be). */
void teeny__conn_release(teeny_conn *c);
/* Encode r and queue it on c (dropped if c is closed).  Counts it. */
void teeny__conn_reply(teeny_conn *c, const teeny_msg_reply *r);
/* Queue an already framed reply (to request id) with the given status.
 * Counts it.  A reply the memory budget cannot hold is replaced by a BUSY
 * error naming it (as for every reply queued). */
void teeny__conn_send(teeny_conn *c, uint64_t id, const char *frame,
                      size_t len, int status);
/* Whose requests c carries (uid and serial number), for the lanes. */
teeny_job_owner teeny__conn_owner(const teeny_conn *c);
/* Queue a memory hit: hit's frame with id patched in. */
void teeny__conn_send_hit(teeny_conn *c, const teeny_mc_hit *hit,
                          uint64_t id);

#endif /* TEENY_DAEMON_SERVER_H */
