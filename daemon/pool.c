/*
 * daemon/pool.c — jobs on libuv's thread pool with borrowed store handles
 * (see pool.h).  The outstanding list is touched only on the loop thread
 * (submit and after-work); the free list of handles is shared by the pool
 * threads under a mutex.
 */
#include <string.h>

#include "common/common.h"
#include "daemon/pool.h"

struct teeny_pool {
  uv_loop_t *loop;      /* the loop jobs report to */
  pthread_mutex_t mu;   /* guards free_ and nfree */
  pthread_cond_t cv;    /* signalled when a handle is returned */
  teeny_store **all;    /* every handle, n of them */
  teeny_store **free_;  /* handles not lent out, nfree of them */
  unsigned n;           /* handles */
  unsigned nfree;       /* of which free */
  unsigned outstanding; /* jobs queued or running */
  teeny_job *jobs;      /* outstanding jobs (loop thread only) */
};

int teeny__pool_create(uv_loop_t *loop, unsigned n,
                       const teeny_store_opts *opts, teeny_pool **out,
                       char *err) {
  *out = NULL;
  teeny_pool *p = teeny__calloc(1, sizeof *p);
  int rc = TEENY_E_NOMEM;
  if (!p)
    return rc;
  p->loop = loop;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->all = teeny__calloc(n, sizeof *p->all);
  p->free_ = teeny__calloc(n, sizeof *p->free_);
  if (!p->all || !p->free_)
    goto fail;
  for (; p->n < n; p->n++) {
    if ((rc = teeny_store_create(opts, &p->all[p->n], err)))
      goto fail;
    p->free_[p->nfree++] = p->all[p->n];
  }
  *out = p;
  return 0;
fail:
  teeny__pool_destroy(p);
  return rc;
}

void teeny__pool_destroy(teeny_pool *p) {
  if (!p)
    return;
  for (unsigned i = 0; i < p->n; i++)
    teeny_store_destroy(p->all[i]);
  teeny__free(p->all);
  teeny__free(p->free_);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  teeny__free(p);
}

teeny_store *teeny__pool_borrow(teeny_pool *p) {
  pthread_mutex_lock(&p->mu);
  while (!p->nfree)
    pthread_cond_wait(&p->cv, &p->mu);
  teeny_store *st = p->free_[--p->nfree];
  pthread_mutex_unlock(&p->mu);
  return st;
}

void teeny__pool_return(teeny_pool *p, teeny_store *st) {
  pthread_mutex_lock(&p->mu);
  p->free_[p->nfree++] = st;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

static void run_work(uv_work_t *req) {
  teeny_job *j = (teeny_job *)req;
  teeny_store *st = teeny__pool_borrow(j->pool);
  j->work(j, st);
  teeny__pool_return(j->pool, st);
}

static void unlink_job(teeny_pool *p, teeny_job *j) {
  if (j->prev)
    j->prev->next = j->next;
  else
    p->jobs = j->next;
  if (j->next)
    j->next->prev = j->prev;
  j->prev = j->next = NULL;
  p->outstanding--;
}

static void after_work(uv_work_t *req, int status) {
  teeny_job *j = (teeny_job *)req;
  unlink_job(j->pool, j);
  j->done(j, status);
}

int teeny__pool_submit(teeny_pool *p, teeny_job *j, teeny_job_work_fn work,
                       teeny_job_done_fn done) {
  j->pool = p;
  j->work = work;
  j->done = done;
  j->prev = NULL;
  j->next = p->jobs;
  int rc = uv_queue_work(p->loop, &j->req, run_work, after_work);
  if (rc)
    return rc;
  if (p->jobs)
    p->jobs->prev = j;
  p->jobs = j;
  p->outstanding++;
  return 0;
}

unsigned teeny__pool_outstanding(const teeny_pool *p) { return p->outstanding; }

void teeny__pool_cancel(teeny_pool *p) {
  for (teeny_job *j = p->jobs; j; j = j->next)
    uv_cancel((uv_req_t *)&j->req);
}
