/*
 * daemon/sched.h — the single-flight scheduler: how a compile request
 * becomes a reply, and the shared state of the daemon's workers.
 *
 * A compile request goes through at most four stages; the first that can
 * answer it does:
 *
 *   1. memory   the in-memory map (memcache.h) on the loop thread
 *   2. join     an identical request (same request key) is already being
 *               resolved: wait for its answer
 *   3. disk     store lane (lanes.h): teeny_spec_create (parse, bind,
 *               key) in a helper process (helper.h), then teeny_store_get
 *               by key (files re-hashed, so corruption is never served)
 *   4. compile  back on the loop: join a running compile of the same key,
 *               or start one — compile lane: teeny_spec_compile(MLIR|PTX)
 *               in a helper process under --compile-timeout (helper.h);
 *               then store lane: teeny_store_put, then evict to
 *               --max-size
 *
 * and every waiter gets the answer: "memory", "disk", "miss" (the request
 * that started the compile) or "joined".  So N identical cold requests cost
 * one compile, and N different requests that resolve to one key (another
 * file name, a default spelled out) still share it.  Compile errors are
 * answered to every waiter with their diagnostics and counted, never stored.
 *
 * flags & TEENY_MSG_FORCE skips stages 1-3 and compiles afresh.  The store
 * keeps an intact entry as it is (the compiler is deterministic, so a
 * recompile is identical); an entry that fails its hashes is removed
 * (teeny_store_remove: that key only) and replaced.  The same happens when
 * stage 3 finds corruption.
 *
 * Every job is its first requester's (connection and uid, for the lanes'
 * fair share); a request that joins a job still queued may take it over
 * when its own queue is shorter (teeny__lanes_offer), so joining another
 * client's long queue never makes a request wait longer.  The in-memory
 * map is not touched by store eviction (its entries are still right
 * answers, and it has its own LRU); removals an admin asked for (purge,
 * repair) and entries found corrupt forget their keys
 * (teeny__sched_forget).  A compile request is charged to the memory
 * budget (budget.h) by its source size until it is answered.
 *
 * All state here is touched only on the loop thread, except what a job's
 * worker part fills in before its done callback runs.
 */
#ifndef TEENY_DAEMON_SCHED_H
#define TEENY_DAEMON_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/common.h"
#include "daemon/budget.h"
#include "daemon/helper.h"
#include "daemon/lanes.h"
#include "daemon/log.h"
#include "daemon/memcache.h"
#include "daemon/stats.h"
#include "daemon/uselog.h"
#include "proto/frame.h"
#include "proto/msg.h"

typedef struct teeny_conn teeny_conn; /* server.h */
typedef struct teeny_resolution teeny_resolution;
typedef struct teeny_compile_job teeny_compile_job;

#define TEENY_SCHED_BUCKETS 1024 /* in-flight tables (chained) */

typedef struct teeny_sched_opts {
  uv_loop_t *loop;           /* the daemon's loop */
  teeny_log *log;            /* for warnings from any thread */
  teeny_stats *stats;        /* the server's counters */
  const teeny_store_opts *store; /* root and modes for the worker handles */
  unsigned workers;          /* compiles one connection may run at once */
  unsigned store_workers;    /* threads of the store lane */
  unsigned admin_workers;    /* threads of the admin lane */
  teeny_budget *budget;      /* the server's memory budget */
  uint64_t max_size;         /* store cap (0: none) */
  uint64_t memcache_size;    /* byte cap of the in-memory map */
  uint64_t flush_ms;         /* last-used flush interval */
  teeny_helper_opts helper;  /* compile processes: binary, time, memory */
} teeny_sched_opts;

typedef struct teeny_sched {
  uv_loop_t *loop;           /* the daemon's loop */
  teeny_log *log;            /* shared, thread-safe */
  teeny_stats *stats;        /* the server's counters */
  teeny_lanes *lanes;        /* worker threads and their store handles */
  teeny_budget *budget;      /* the server's memory budget */
  teeny_memcache *mc;        /* request -> reply frame */
  teeny_helpers *helpers;    /* compile processes, one per worker */
  teeny_uselog touches;    /* hits not yet written to the store */
  uv_timer_t flush_timer;    /* every flush_ms: write touches */
  bool flushing;             /* a flush job is outstanding */
  bool healing;              /* an index rebuild is under way (heal.h) */
  bool closed;               /* teeny__sched_close was called */
  uint64_t max_size;         /* store cap (0: none) */
  teeny_buf scratch;         /* request keys are built here */
  teeny_buf frame;           /* reply frames for the map are built here */
  teeny_resolution *resolving[TEENY_SCHED_BUCKETS]; /* by request key */
  teeny_compile_job *compiling[TEENY_SCHED_BUCKETS]; /* by cache key */
} teeny_sched;

/* Open the worker store handles and the map, start the flush timer.  0 or
 * an error with err (TEENY_STORE_ERR_LEN bytes) filled. */
int teeny__sched_create(const teeny_sched_opts *o, teeny_sched **out,
                        char *err);
/* Answer req (a decoded compile request, moved: *req is zeroed) on c.  The
 * server has checked the limits and the kernel name. */
void teeny__sched_compile(teeny_sched *s, teeny_conn *c,
                          teeny_msg_request *req);
/* Count a use of key for the batched last-used update. */
void teeny__sched_touch(teeny_sched *s, const char *key);
/* The store lost key (an admin's purge or repair): drop it from the
 * in-memory map. */
void teeny__sched_forget(teeny_sched *s, const char *key);
/* Jobs queued or running (shutdown waits for 0). */
unsigned teeny__sched_busy(const teeny_sched *s);
/* Cancel jobs that have not started and kill the compiles that are
 * running; their waiters get TEENY_E_SHUTDOWN. */
void teeny__sched_cancel(teeny_sched *s);
/* Stop the flush timer and close the lanes' completion handle (both close
 * with the loop). */
void teeny__sched_close(teeny_sched *s);
/* After the loop ended: write the pending uses, close the store handles,
 * free everything.  NULL is a no-op. */
void teeny__sched_destroy(teeny_sched *s);

#endif /* TEENY_DAEMON_SCHED_H */
