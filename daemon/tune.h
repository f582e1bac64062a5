/*
 * daemon/tune.h — shared autotuning: one tuning run per (kernel digest,
 * problem key, GPU, driver) on the node, its winner served to every later
 * process (PROTOCOL.md §4.10-§4.13).
 *
 * A tune request is answered by the first of: the record in memory (a
 * map filled from the store, on the loop thread: microseconds); a tuning
 * of the same key in flight (wait for it: single-flight, as compiles); the
 * store (a worker reads the tuned table); else the request's connection
 * becomes the tuner — its reply says "tune" — and every later request for
 * the key waits until the tuner's tune_done records the winner (then they
 * all get it, "joined"), or abandons, or its connection closes (it died),
 * or it runs past --tune-timeout (stuck): then the next waiting request
 * becomes the tuner.  A waiter's own wait_ms (default --tune-timeout) ends
 * its wait with "timeout".  Records go to the store before anyone is
 * answered, so they survive restarts.  Loop thread only, except the
 * worker parts of store jobs.
 */
#ifndef TEENY_DAEMON_TUNE_H
#define TEENY_DAEMON_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "daemon/log.h"
#include "daemon/lanes.h"
#include "proto/msg.h"

typedef struct teeny_conn teeny_conn; /* server.h */
typedef struct teeny_tuner teeny_tuner;

typedef struct teeny_tune_counts {
  uint64_t tunings; /* requests answered "tune" */
  uint64_t hits;    /* requests answered with a record */
  uint64_t joins;   /* ... after waiting on another's tuning */
} teeny_tune_counts;

/* A tuner whose store work runs in lanes (lookups and records in the store
 * lane, list and purge in the admin lane, each as its connection's work);
 * timeout_ms is --tune-timeout.  0 or TEENY_E_NOMEM. */
int teeny__tuner_create(uv_loop_t *loop, teeny_log *log, teeny_lanes *lanes,
                        uint64_t timeout_ms, teeny_tuner **out);
/* Answer tune or tune_done (req is moved: *req is zeroed). */
void teeny__tuner_request(teeny_tuner *t, teeny_conn *c, teeny_msg_request *req);
/* Answer tuned (list) or tuned_purge; the server checked admin rights. */
void teeny__tuner_admin(teeny_tuner *t, teeny_conn *c, teeny_msg_request *req);
/* c is closing: tunings it leads go to their next waiter. */
void teeny__tuner_conn_closed(teeny_tuner *t, teeny_conn *c);
void teeny__tuner_counts(const teeny_tuner *t, teeny_tune_counts *out);
/* The daemon stops: every waiter gets TEENY_E_SHUTDOWN, the timer closes. */
void teeny__tuner_stop(teeny_tuner *t);
/* After the loop ended.  NULL is a no-op. */
void teeny__tuner_destroy(teeny_tuner *t);

#endif /* TEENY_DAEMON_TUNE_H */
