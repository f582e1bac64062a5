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
 *               or start one — with a remote tier (remote.h), first ask
 *               it: a verified entry there is put in the local store and
 *               answered ("disk", counted as a remote hit); else it gives
 *               a cluster-wide lease (we compile) or waits on the node that
 *               holds it, or says "compile here".  Then compile lane:
 *               teeny_spec_compile(MLIR|PTX) in a helper process under
 *               --compile-timeout (helper.h); then store lane:
 *               teeny_store_put, then evict to --max-size; after the
 *               replies, the artifact goes to the remote in the background
 *               and the lease is released
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
 * A request that names its client's GPU (arch) gets the stored cubin for
 * it along with the PTX: stage 3 reads it with the entry (checked; a
 * corrupt one is dropped), the memory map keeps it in the reply, and where
 * there is none (or an outdated one) the SASS lane (sass.h) is asked for
 * one after the reply is sent — compiles hand it their PTX — so no
 * request ever waits for a cubin.  When one is stored the map forgets
 * that key's replies (teeny__sched_forget).
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
#include "daemon/remote.h"
#include "daemon/sass.h"
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
  const teeny_remote_opts *remote; /* the remote tier, or NULL: off */
} teeny_sched_opts;

typedef struct teeny_sched {
  uv_loop_t *loop;           /* the daemon's loop */
  teeny_log *log;            /* shared, thread-safe */
  teeny_stats *stats;        /* the server's counters */
  teeny_lanes *lanes;        /* worker threads and their store handles */
  teeny_budget *budget;      /* the server's memory budget */
  teeny_memcache *mc;        /* request -> reply frame */
  teeny_helpers *helpers;    /* compile processes, one per worker */
  teeny_remote *remote;      /* the remote tier, or NULL */
  teeny_sass *sass;          /* the SASS lane (the server's; may be NULL) */
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
/* The store lost key (an admin's purge or repair) or its replies changed
 * (a cubin was stored): drop it from the in-memory map. */
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
