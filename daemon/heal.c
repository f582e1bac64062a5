/*
 * daemon/heal.c — the index rebuild while serving (see heal.h).  One
 * rebuild at a time; requests that found the damage were already answered
 * (a disk miss compiles, a put that fails warns "not cached").
 */
#include <stdio.h>

#include "daemon/heal.h"

typedef struct heal_job {
  teeny_job job;                  /* must be first */
  teeny_sched *s;                 /* owner */
  int rc;                         /* the rebuild's result */
  teeny_store_rebuild_report rep; /* what it did */
  char err[TEENY_STORE_ERR_LEN];  /* why it failed */
  uint64_t t0;                    /* when it was asked for */
} heal_job;

/* Admin lane, alone there, the store lane held. */
static void heal_work(teeny_job *j, teeny_store *st) {
  heal_job *h = (heal_job *)j;
  teeny__lanes_wait_idle(h->s->lanes, TEENY_LANE_STORE);
  teeny__lanes_release_indexes(h->s->lanes);
  h->rc = teeny_store_rebuild_index(st, true, &h->rep, h->err);
}

static void heal_done(teeny_job *j, int status) {
  heal_job *h = (heal_job *)j;
  teeny_sched *s = h->s;
  teeny__lanes_hold(s->lanes, TEENY_LANE_STORE, false);
  teeny__lanes_hold(s->lanes, TEENY_LANE_ADMIN, false);
  s->healing = false;
  double ms = (double)(teeny__now_ns() - h->t0) / 1e6;
  if (status == UV_ECANCELED) {
    TEENY_LOGW(s->log, "index rebuild cancelled (the daemon is stopping)");
  } else if (h->rc) {
    TEENY_LOGE(s->log, "cannot rebuild the damaged index: %s", h->err);
  } else {
    s->stats->index_rebuilds++;
    TEENY_LOGW(s->log,
               "index.db was damaged: moved it aside as %s and rebuilt %llu "
               "entries from objects/ in %.0f ms (%llu object sets left for "
               "verify --repair)%s%s",
               h->rep.moved, (unsigned long long)h->rep.rows, ms,
               (unsigned long long)h->rep.skipped,
               h->rep.error[0] ? "; the walk stopped early: " : "",
               h->rep.error);
  }
  teeny__free(h);
}

void teeny__heal_start(void *ctx) {
  teeny_sched *s = ctx;
  if (s->healing || s->closed)
    return;
  heal_job *h = teeny__calloc(1, sizeof *h);
  if (!h)
    return; /* the next damaged job asks again */
  h->s = s;
  h->t0 = teeny__now_ns();
  s->healing = true;
  TEENY_LOGW(s->log, "index.db is damaged; rebuilding it (store requests "
                     "wait meanwhile)");
  teeny__lanes_hold(s->lanes, TEENY_LANE_STORE, true);
  teeny__lanes_hold(s->lanes, TEENY_LANE_ADMIN, true);
  teeny__lanes_submit_exclusive(s->lanes, &h->job, TEENY_LANE_ADMIN, heal_work,
                                heal_done);
}
