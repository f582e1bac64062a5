/*
 * daemon/lanes.c — lanes of worker threads with per-connection and per-uid
 * queues (see lanes.h for the policy).
 *
 * Each lane has one mutex over its queues: a list of uid shares, each with
 * a list of owner queues (one per connection that has jobs queued or
 * running in this lane).  Both lists are short (the clients active right
 * now), so picking scans them.  A queue or share is freed as soon as it
 * has nothing queued and nothing running.  Finished jobs go on one done
 * list (its own mutex) and a uv_async_t wakes the loop to run their done
 * callbacks.  Load: one pick per job; jobs take from microseconds (disk
 * hits) to minutes (compiles).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/lanes.h"

typedef struct uid_share uid_share;

struct teeny__lane_queue {
  teeny_job_owner owner;       /* whose jobs */
  teeny_job *head, *tail;      /* queued, oldest first */
  size_t n;                    /* how many queued */
  unsigned running;            /* taken by threads, not finished */
  uint64_t served;             /* lane's serve number when it last ran one */
  uid_share *share;            /* its uid */
  teeny__lane_queue *next;     /* next queue of the same uid */
};

struct uid_share {
  uint32_t uid;                /* whose */
  size_t queued;               /* jobs queued over all its queues */
  unsigned running;            /* jobs running */
  uint64_t served;             /* lane's serve number when it last ran one */
  teeny__lane_queue *queues;   /* its connections' queues */
  uid_share *next;             /* next uid in the lane */
};

typedef struct lane lane;

typedef struct worker {
  lane *ln;           /* its lane */
  teeny_store *store; /* its handle (NULL in the compile lane) */
  pthread_t tid;      /* the thread */
  bool started;       /* tid is valid */
} worker;

struct lane {
  teeny_lanes *all;      /* owner */
  pthread_mutex_t mu;    /* guards everything below but workers' fields */
  pthread_cond_t cv;     /* a job was queued, finished, or stop was set */
  unsigned nthreads;     /* threads */
  unsigned conn_cap;     /* jobs one connection may run at once */
  unsigned uid_cap;      /* jobs one uid may run at once */
  int nice;              /* its threads' nice value (admin: scans) */
  uid_share *shares;     /* uids with jobs queued or running */
  uint64_t serve_seq;    /* counts picks (round-robin order) */
  unsigned running;      /* jobs running now */
  bool held;             /* start nothing but the exclusive job */
  teeny_job *excl;       /* an exclusive job waiting, or NULL */
  bool stop;             /* threads exit when nothing is left */
  worker *workers;       /* nthreads of them */
};

struct teeny_lanes {
  uv_loop_t *loop;          /* done callbacks run here */
  uv_async_t async;         /* wakes the loop for finished jobs */
  bool async_open;          /* async not closed yet */
  pthread_mutex_t done_mu;  /* guards the done list */
  teeny_job *done_head;     /* finished jobs, oldest first */
  teeny_job *done_tail;     /* ... newest */
  unsigned outstanding;     /* submitted, done not run (loop thread) */
  atomic_bool damaged;      /* a handle reported its index damaged */
  void (*on_damage)(void *ctx); /* told on the loop thread */
  void *ctx;                /* its argument */
  lane lanes[TEENY_LANES];  /* the lanes */
};

/* ---- queues (lane lock held) ------------------------------------------------- */

static unsigned cap_of(unsigned threads, unsigned spare) {
  return threads > spare ? threads - spare : 1;
}

static uid_share *share_get(lane *ln, uint32_t uid) {
  for (uid_share *u = ln->shares; u; u = u->next)
    if (u->uid == uid)
      return u;
  uid_share *u = teeny__calloc(1, sizeof *u);
  if (!u)
    return NULL;
  u->uid = uid;
  u->next = ln->shares;
  ln->shares = u;
  return u;
}

static teeny__lane_queue *queue_get(lane *ln, teeny_job_owner o) {
  uid_share *u = share_get(ln, o.uid);
  if (!u)
    return NULL;
  for (teeny__lane_queue *q = u->queues; q; q = q->next)
    if (q->owner.conn == o.conn)
      return q;
  teeny__lane_queue *q = teeny__calloc(1, sizeof *q);
  if (!q)
    return NULL;
  q->owner = o;
  q->share = u;
  q->next = u->queues;
  u->queues = q;
  return q;
}

/* Free q (and its share) if nothing is queued or running there. */
static void queue_tidy(lane *ln, teeny__lane_queue *q) {
  if (q->n || q->running)
    return;
  uid_share *u = q->share;
  teeny__lane_queue **pq = &u->queues;
  while (*pq != q)
    pq = &(*pq)->next;
  *pq = q->next;
  teeny__free(q);
  if (u->queues)
    return;
  uid_share **pu = &ln->shares;
  while (*pu != u)
    pu = &(*pu)->next;
  *pu = u->next;
  teeny__free(u);
}

static void queue_push(teeny__lane_queue *q, teeny_job *j) {
  j->qnext = NULL;
  j->q = q;
  if (q->tail)
    q->tail->qnext = j;
  else
    q->head = j;
  q->tail = j;
  q->n++;
  q->share->queued++;
}

/* Unlink j from its queue (it must be queued there). */
static void queue_unlink(teeny_job *j) {
  teeny__lane_queue *q = j->q;
  teeny_job *prev = NULL;
  for (teeny_job *k = q->head; k != j; k = k->qnext)
    prev = k;
  if (prev)
    prev->qnext = j->qnext;
  else
    q->head = j->qnext;
  if (q->tail == j)
    q->tail = prev;
  q->n--;
  q->share->queued--;
  j->q = NULL;
  j->qnext = NULL;
}

/* Is a better than b: fewer running, then served longer ago? */
static bool fairer(unsigned ra, uint64_t sa, unsigned rb, uint64_t sb) {
  return ra < rb || (ra == rb && sa < sb);
}

/* The queue of u whose head may run now, or NULL. */
static teeny__lane_queue *pick_queue(const lane *ln, uid_share *u) {
  teeny__lane_queue *best = NULL;
  for (teeny__lane_queue *q = u->queues; q; q = q->next)
    if (q->n && q->running < ln->conn_cap &&
        (!best || fairer(q->running, q->served, best->running, best->served)))
      best = q;
  return best;
}

/* Take the next job to run, or NULL when every queued job is held by a
 * cap (or nothing is queued).  *qout: its queue (counts it as running). */
static teeny_job *pick(lane *ln, teeny__lane_queue **qout) {
  if (ln->excl) { /* nothing new starts; it runs once the lane is empty */
    teeny_job *j = ln->running ? NULL : ln->excl;
    if (j) {
      ln->excl = NULL;
      ln->running++;
      *qout = NULL;
    }
    return j;
  }
  if (ln->held)
    return NULL;
  uid_share *bu = NULL;
  teeny__lane_queue *bq = NULL;
  for (uid_share *u = ln->shares; u; u = u->next) {
    if (!u->queued || u->running >= ln->uid_cap ||
        (bu && !fairer(u->running, u->served, bu->running, bu->served)))
      continue;
    teeny__lane_queue *q = pick_queue(ln, u);
    if (q)
      bu = u, bq = q;
  }
  if (!bq)
    return NULL;
  teeny_job *j = bq->head;
  queue_unlink(j);
  j->peers = bq->running + (unsigned)bq->n; /* others running or waiting */
  bq->running++;
  bu->running++;
  ln->running++;
  bq->served = bu->served = ++ln->serve_seq;
  *qout = bq;
  return j;
}

static void finished(lane *ln, teeny__lane_queue *q) {
  ln->running--;
  if (!q)
    return; /* the exclusive job */
  q->running--;
  q->share->running--;
  queue_tidy(ln, q);
}

/* ---- completion ----------------------------------------------------------------- */

static void push_done(teeny_lanes *l, teeny_job *j, int status) {
  j->status = status;
  j->dnext = NULL;
  pthread_mutex_lock(&l->done_mu);
  if (l->done_tail)
    l->done_tail->dnext = j;
  else
    l->done_head = j;
  l->done_tail = j;
  pthread_mutex_unlock(&l->done_mu);
  uv_async_send(&l->async);
}

static void on_done(uv_async_t *h) {
  teeny_lanes *l = h->data;
  pthread_mutex_lock(&l->done_mu);
  teeny_job *j = l->done_head;
  l->done_head = l->done_tail = NULL;
  pthread_mutex_unlock(&l->done_mu);
  while (j) {
    teeny_job *nx = j->dnext;
    l->outstanding--;
    j->done(j, j->status); /* may free j */
    j = nx;
  }
  if (atomic_exchange(&l->damaged, false) && l->on_damage)
    l->on_damage(l->ctx);
}

/* ---- threads ---------------------------------------------------------------------- */

static void *worker_main(void *p) {
  worker *w = p;
  lane *ln = w->ln;
  if (ln->nice) /* the thread only: Linux nice values are per thread */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ln->nice);
  pthread_mutex_lock(&ln->mu);
  for (;;) {
    teeny__lane_queue *q = NULL;
    teeny_job *j;
    while (!(j = pick(ln, &q)) && !ln->stop)
      pthread_cond_wait(&ln->cv, &ln->mu);
    if (!j)
      break;
    pthread_mutex_unlock(&ln->mu);
    j->work(j, w->store);
    if (w->store && teeny_store_index_damaged(w->store))
      atomic_store(&ln->all->damaged, true);
    pthread_mutex_lock(&ln->mu);
    finished(ln, q);
    /* a cap may have let go of a queued job */
    pthread_cond_broadcast(&ln->cv);
    pthread_mutex_unlock(&ln->mu);
    push_done(ln->all, j, 0);
    pthread_mutex_lock(&ln->mu);
  }
  pthread_mutex_unlock(&ln->mu);
  return NULL;
}

static int lane_start(lane *ln, teeny_lanes *all, teeny_lane id,
                      unsigned threads, const teeny_store_opts *so,
                      char *err) {
  ln->all = all;
  ln->nice = id == TEENY_LANE_ADMIN ? TEENY_ADMIN_NICE : 0;
  ln->nthreads = threads ? threads : 1;
  ln->conn_cap = cap_of(ln->nthreads, 2);
  ln->uid_cap = cap_of(ln->nthreads, 1);
  pthread_mutex_init(&ln->mu, NULL);
  pthread_cond_init(&ln->cv, NULL);
  ln->workers = teeny__calloc(ln->nthreads, sizeof *ln->workers);
  if (!ln->workers)
    return TEENY_E_NOMEM;
  for (unsigned i = 0; i < ln->nthreads; i++) {
    worker *w = &ln->workers[i];
    w->ln = ln;
    int rc;
    if (id != TEENY_LANE_COMPILE && (rc = teeny_store_create(so, &w->store, err)))
      return rc;
    if (pthread_create(&w->tid, NULL, worker_main, w)) {
      snprintf(err, TEENY_STORE_ERR_LEN, "cannot start a worker thread: %s",
               strerror(errno));
      return TEENY_E_IO;
    }
    w->started = true;
  }
  return 0;
}

static void lane_stop(lane *ln) {
  if (!ln->workers)
    return;
  pthread_mutex_lock(&ln->mu);
  ln->stop = true;
  pthread_cond_broadcast(&ln->cv);
  pthread_mutex_unlock(&ln->mu);
  for (unsigned i = 0; i < ln->nthreads; i++) {
    if (ln->workers[i].started)
      pthread_join(ln->workers[i].tid, NULL);
    teeny_store_destroy(ln->workers[i].store);
  }
  teeny__free(ln->workers);
  ln->workers = NULL;
  pthread_mutex_destroy(&ln->mu);
  pthread_cond_destroy(&ln->cv);
}

/* ---- the interface ------------------------------------------------------------------ */

int teeny__lanes_create(const teeny_lanes_opts *o, teeny_lanes **out,
                        char *err) {
  *out = NULL;
  teeny_lanes *l = teeny__calloc(1, sizeof *l);
  if (!l)
    return TEENY_E_NOMEM;
  l->loop = o->loop;
  l->on_damage = o->on_damage;
  l->ctx = o->ctx;
  atomic_init(&l->damaged, false);
  pthread_mutex_init(&l->done_mu, NULL);
  uv_async_init(o->loop, &l->async, on_done);
  l->async.data = l;
  l->async_open = true;
  int rc = 0;
  for (int i = 0; i < TEENY_LANES && !rc; i++)
    rc = lane_start(&l->lanes[i], l, (teeny_lane)i, o->threads[i], o->store,
                    err);
  if (rc) {
    teeny__lanes_close(l);
    uv_run(o->loop, UV_RUN_NOWAIT); /* let the async handle close */
    teeny__lanes_destroy(l);
    return rc;
  }
  *out = l;
  return 0;
}

void teeny__lanes_close(teeny_lanes *l) {
  if (!l || !l->async_open)
    return;
  l->async_open = false;
  uv_close((uv_handle_t *)&l->async, NULL);
}

void teeny__lanes_destroy(teeny_lanes *l) {
  if (!l)
    return;
  for (int i = 0; i < TEENY_LANES; i++)
    lane_stop(&l->lanes[i]);
  pthread_mutex_destroy(&l->done_mu);
  teeny__free(l);
}

/* Fill in j for lane and count it outstanding. */
static void job_init(teeny_lanes *l, teeny_job *j, teeny_lane lane_id,
                     teeny_job_work_fn work, teeny_job_done_fn done,
                     bool exclusive) {
  j->lanes = l;
  j->work = work;
  j->done = done;
  j->lane = lane_id;
  j->status = 0;
  j->q = NULL;
  j->exclusive = exclusive;
  l->outstanding++;
}

void teeny__lanes_submit(teeny_lanes *l, teeny_job *j, teeny_lane lane_id,
                         teeny_job_owner owner, teeny_job_work_fn work,
                         teeny_job_done_fn done) {
  lane *ln = &l->lanes[lane_id];
  job_init(l, j, lane_id, work, done, false);
  pthread_mutex_lock(&ln->mu);
  teeny__lane_queue *q = queue_get(ln, owner);
  if (!q) { /* no memory for a queue: the daemon's own one never fails */
    owner = (teeny_job_owner){TEENY_OWNER_DAEMON, 0};
    q = queue_get(ln, owner);
  }
  if (q) {
    queue_push(q, j);
    pthread_cond_signal(&ln->cv);
  }
  pthread_mutex_unlock(&ln->mu);
  if (!q)
    push_done(l, j, UV_ECANCELED);
}

bool teeny__lanes_offer(teeny_lanes *l, teeny_job *j, teeny_job_owner owner) {
  lane *ln = &l->lanes[j->lane];
  bool moved = false;
  pthread_mutex_lock(&ln->mu);
  teeny__lane_queue *q = j->q;
  if (q && (q->owner.uid != owner.uid || q->owner.conn != owner.conn)) {
    size_t ahead = 0;
    for (teeny_job *k = q->head; k != j; k = k->qnext)
      ahead++;
    teeny__lane_queue *nq = ahead ? queue_get(ln, owner) : NULL;
    if (nq && nq->n < ahead) {
      queue_unlink(j);
      queue_push(nq, j);
      queue_tidy(ln, q);
      moved = true;
      pthread_cond_signal(&ln->cv);
    } else if (nq) {
      queue_tidy(ln, nq);
    }
  }
  pthread_mutex_unlock(&ln->mu);
  return moved;
}

unsigned teeny__lanes_outstanding(const teeny_lanes *l) {
  return l->outstanding;
}

void teeny__lanes_cancel(teeny_lanes *l) {
  for (int i = 0; i < TEENY_LANES; i++) {
    lane *ln = &l->lanes[i];
    teeny_job *list = NULL, **tail = &list;
    pthread_mutex_lock(&ln->mu);
    for (uid_share *u = ln->shares, *un; u; u = un) {
      un = u->next;
      for (teeny__lane_queue *q = u->queues, *qn; q; q = qn) {
        qn = q->next;
        while (q->head) {
          teeny_job *j = q->head;
          queue_unlink(j);
          *tail = j;
          tail = &j->dnext;
        }
        queue_tidy(ln, q); /* may free u */
      }
    }
    if (ln->excl) {
      *tail = ln->excl;
      tail = &ln->excl->dnext;
      ln->excl = NULL;
    }
    pthread_mutex_unlock(&ln->mu);
    *tail = NULL;
    for (teeny_job *j = list, *nx; j; j = nx) {
      nx = j->dnext;
      push_done(l, j, UV_ECANCELED);
    }
  }
}

unsigned teeny__lanes_threads(const teeny_lanes *l, teeny_lane lane_id) {
  return l->lanes[lane_id].nthreads;
}

teeny_store *teeny__lanes_idle_store(teeny_lanes *l) {
  return l->lanes[TEENY_LANE_STORE].workers[0].store;
}

/* ---- for the index rebuild ----------------------------------------------------- */

void teeny__lanes_hold(teeny_lanes *l, teeny_lane lane_id, bool on) {
  lane *ln = &l->lanes[lane_id];
  pthread_mutex_lock(&ln->mu);
  ln->held = on;
  pthread_cond_broadcast(&ln->cv);
  pthread_mutex_unlock(&ln->mu);
}

void teeny__lanes_submit_exclusive(teeny_lanes *l, teeny_job *j,
                                   teeny_lane lane_id, teeny_job_work_fn work,
                                   teeny_job_done_fn done) {
  lane *ln = &l->lanes[lane_id];
  job_init(l, j, lane_id, work, done, true);
  pthread_mutex_lock(&ln->mu);
  bool taken = ln->excl != NULL;
  if (!taken) {
    ln->excl = j;
    pthread_cond_broadcast(&ln->cv);
  }
  pthread_mutex_unlock(&ln->mu);
  if (taken) /* one at a time: the caller keeps to that */
    push_done(l, j, UV_ECANCELED);
}

void teeny__lanes_wait_idle(teeny_lanes *l, teeny_lane lane_id) {
  lane *ln = &l->lanes[lane_id];
  pthread_mutex_lock(&ln->mu);
  while (ln->running)
    pthread_cond_wait(&ln->cv, &ln->mu);
  pthread_mutex_unlock(&ln->mu);
}

void teeny__lanes_release_indexes(teeny_lanes *l) {
  for (int i = TEENY_LANE_STORE; i <= TEENY_LANE_ADMIN; i++)
    for (unsigned k = 0; k < l->lanes[i].nthreads; k++)
      if (l->lanes[i].workers[k].store)
        teeny_store_index_release(l->lanes[i].workers[k].store);
}
