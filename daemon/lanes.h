/*
 * daemon/lanes.h — the daemon's worker threads, in lanes, with a fair share
 * per client: one client's slow kernels or store scans never hold up
 * another client's hit, stats or small compile.
 *
 * Three lanes, each its own threads and queues, so work of one kind never
 * waits behind work of another:
 *   compile  teeny_spec_compile in a helper process (seconds to minutes);
 *            no store handle
 *   store    the spec step (helper) and the disk lookup of a request, the
 *            put and eviction after a compile, last-used flushes, stats
 *            (milliseconds); one store handle per thread
 *   admin    list, show, purge, verify (milliseconds to a whole scan of
 *            the store); one store handle per thread; the threads run at
 *            nice +TEENY_ADMIN_NICE, so a scan that keeps a CPU busy
 *            yields it to requests
 *
 * Inside a lane, jobs queue per owner: per connection, grouped per uid.  A
 * free thread takes the oldest job of the connection that has the fewest
 * jobs running, among the uids with the fewest jobs running (ties: the one
 * served longest ago), and caps hold whatever is queued: with T threads in
 * a lane, one connection runs at most max(1, T-2) jobs and one uid at most
 * max(1, T-1).  So another connection of the same uid, and another uid,
 * always find a thread, without preempting anyone (a running compile is
 * never stopped for fairness).  The compile lane has --workers + 2 threads
 * (one connection may use --workers compile processes at once); the store
 * and admin lanes have --store-workers and --admin-workers.
 *
 * Jobs are submitted and their done callbacks run on the loop thread; the
 * work part runs on a lane thread.  Completion is handed back through one
 * uv_async_t.  A job that has not started can be moved to another owner
 * (a request that joined it may be served sooner that way) or cancelled
 * (the stop: done runs with UV_ECANCELED).
 *
 * For the index rebuild (heal.h) a lane can be held (its threads start
 * nothing new) and an exclusive job queued: it runs once nothing else runs
 * in its lane, held or not.  A store handle that reports its index damaged
 * after a job is signalled to the loop (opts.on_damage).
 */
#ifndef TEENY_DAEMON_LANES_H
#define TEENY_DAEMON_LANES_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "store/store.h"

#define TEENY_ADMIN_NICE 5 /* the admin lane's threads' nice value */

typedef enum teeny_lane {
  TEENY_LANE_COMPILE, /* compiles in helper processes */
  TEENY_LANE_STORE,   /* spec steps, disk lookups, puts, flushes */
  TEENY_LANE_ADMIN,   /* stats, list, show, purge, verify */
  TEENY_LANES         /* how many */
} teeny_lane;

typedef struct teeny_lanes teeny_lanes;
typedef struct teeny_job teeny_job;
typedef struct teeny__lane_queue teeny__lane_queue;

/* Runs on a lane thread; st is the thread's store handle (NULL in the
 * compile lane). */
typedef void (*teeny_job_work_fn)(teeny_job *j, teeny_store *st);
/* Runs on the loop thread after work (status 0), or instead of it when the
 * job was cancelled before it started (status UV_ECANCELED). */
typedef void (*teeny_job_done_fn)(teeny_job *j, int status);

/* Whose work a job is: its share is counted per connection and per uid. */
typedef struct teeny_job_owner {
  uint32_t uid;  /* the peer's uid (TEENY_OWNER_DAEMON for our own) */
  uint64_t conn; /* the connection's serial number (0: none) */
} teeny_job_owner;

#define TEENY_OWNER_DAEMON UINT32_MAX /* flushes and other housekeeping */

/* Embedded in a bigger job struct; filled by teeny__lanes_submit. */
struct teeny_job {
  teeny_lanes *lanes;      /* where it runs */
  bool exclusive;          /* runs alone in its lane (the lane's excl) */
  teeny_job_work_fn work;  /* worker part */
  teeny_job_done_fn done;  /* loop part */
  teeny_lane lane;         /* its lane */
  int status;              /* 0, or UV_ECANCELED */
  unsigned peers;          /* when it started: other jobs of its
                              connection running or queued in its lane (a
                              bulk client's work may yield the CPU to
                              others: helper.h's background helpers) */
  teeny__lane_queue *q;    /* its owner's queue while queued (lane lock) */
  teeny_job *qnext;        /* next in that queue (lane lock) */
  teeny_job *dnext;        /* next on the done list (done lock) */
};

typedef struct teeny_lanes_opts {
  uv_loop_t *loop;               /* the daemon's loop */
  const teeny_store_opts *store; /* root and modes of the store handles */
  unsigned threads[TEENY_LANES]; /* threads per lane (each >= 1) */
  void (*on_damage)(void *ctx);  /* loop thread: a handle found its index
                                    damaged (may be NULL) */
  void *ctx;                     /* its argument */
} teeny_lanes_opts;

/* Open the store handles and start the threads.  0, or a store error with
 * err (TEENY_STORE_ERR_LEN bytes) filled, or TEENY_E_NOMEM / TEENY_E_IO
 * (a thread could not start); *out is NULL then. */
int teeny__lanes_create(const teeny_lanes_opts *o, teeny_lanes **out,
                        char *err);
/* Stop and join the threads, close the handles.  Only when no job is
 * outstanding.  NULL is a no-op. */
void teeny__lanes_destroy(teeny_lanes *l);
/* Close the completion handle (with the loop's other handles at the
 * stop); jobs must not be submitted afterwards. */
void teeny__lanes_close(teeny_lanes *l);

/* Queue j for owner in lane.  Never fails: the job will run or be
 * cancelled, and done is called exactly once. */
void teeny__lanes_submit(teeny_lanes *l, teeny_job *j, teeny_lane lane,
                         teeny_job_owner owner, teeny_job_work_fn work,
                         teeny_job_done_fn done);
/* Another owner waits on j too: if j has not started and that owner's
 * queue in j's lane is shorter than the part of j's queue ahead of j,
 * move j to the end of the new owner's queue.  True if it moved. */
bool teeny__lanes_offer(teeny_lanes *l, teeny_job *j, teeny_job_owner owner);
/* Jobs submitted whose done has not run yet. */
unsigned teeny__lanes_outstanding(const teeny_lanes *l);
/* Cancel every job that has not started (their done gets UV_ECANCELED). */
void teeny__lanes_cancel(teeny_lanes *l);
/* The threads of a lane (for the caps and for messages). */
unsigned teeny__lanes_threads(const teeny_lanes *l, teeny_lane lane);
/* A store handle for the loop thread, only while no job runs (after the
 * loop ended: the last flush). */
teeny_store *teeny__lanes_idle_store(teeny_lanes *l);

/* ---- for the index rebuild ------------------------------------------------ */

/* Hold a lane (its threads start no new job but an exclusive one) or let
 * it go. */
void teeny__lanes_hold(teeny_lanes *l, teeny_lane lane, bool on);
/* Queue j to run alone in lane: once no other job of the lane runs (none
 * starts while it waits).  As teeny__lanes_submit otherwise. */
void teeny__lanes_submit_exclusive(teeny_lanes *l, teeny_job *j,
                                   teeny_lane lane, teeny_job_work_fn work,
                                   teeny_job_done_fn done);
/* From a lane thread: wait until no job runs in lane (hold it first). */
void teeny__lanes_wait_idle(teeny_lanes *l, teeny_lane lane);
/* Release every store handle's index connection (teeny_store_index_release);
 * only while the store and admin lanes run nothing but the caller. */
void teeny__lanes_release_indexes(teeny_lanes *l);

#endif /* TEENY_DAEMON_LANES_H */
