/*
 * daemon/pool.h — the worker pool: libuv's thread pool plus one store
 * handle (its own SQLite connection) per worker thread.
 *
 * A job is a uv_work_t with two callbacks: work() runs on a pool thread
 * with a store handle borrowed for the duration (the handle pool is a
 * mutex-protected free list; since the thread pool has exactly as many
 * threads as there are handles, a borrow never waits), done() runs on the
 * loop thread afterwards.  The pool counts outstanding jobs so shutdown can
 * wait for them, and can cancel the ones that have not started.
 *
 * The size of libuv's thread pool is fixed by $UV_THREADPOOL_SIZE when the
 * first job is queued; main() sets it to --workers before the loop starts.
 */
#ifndef TEENY_DAEMON_POOL_H
#define TEENY_DAEMON_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <uv.h>

#include "store/store.h"

typedef struct teeny_pool teeny_pool;
typedef struct teeny_job teeny_job;

/* Runs on a pool thread; st is this job's store handle. */
typedef void (*teeny_job_work_fn)(teeny_job *j, teeny_store *st);
/* Runs on the loop thread after work (status 0), or instead of it when the
 * job was cancelled before it started (status UV_ECANCELED). */
typedef void (*teeny_job_done_fn)(teeny_job *j, int status);

struct teeny_job {
  uv_work_t req;          /* libuv's request; req.data is unused */
  teeny_pool *pool;       /* the pool it runs on */
  teeny_job_work_fn work; /* worker part */
  teeny_job_done_fn done; /* loop part */
  teeny_job *prev, *next; /* outstanding list, for cancel */
};

/* Open n store handles on opts' root.  0, or a store error with err
 * (TEENY_STORE_ERR_LEN bytes) filled; *out is NULL then. */
int teeny__pool_create(uv_loop_t *loop, unsigned n,
                       const teeny_store_opts *opts, teeny_pool **out,
                       char *err);
/* Close every handle (each flushes its pending touches).  Only when no job
 * is outstanding.  NULL is a no-op. */
void teeny__pool_destroy(teeny_pool *p);

/* Queue j.  0, or a negative libuv error (j is not queued and done is
 * never called). */
int teeny__pool_submit(teeny_pool *p, teeny_job *j, teeny_job_work_fn work,
                       teeny_job_done_fn done);
unsigned teeny__pool_outstanding(const teeny_pool *p);
/* uv_cancel every outstanding job that has not started. */
void teeny__pool_cancel(teeny_pool *p);

/* Borrow a handle outside a job (the loop thread at shutdown, when no job
 * runs).  Blocks while none is free. */
teeny_store *teeny__pool_borrow(teeny_pool *p);
void teeny__pool_return(teeny_pool *p, teeny_store *st);

#endif /* TEENY_DAEMON_POOL_H */
