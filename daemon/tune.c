/*
 * daemon/tune.c — shared autotuning on the loop thread (see tune.h).
 *
 * Two chained tables, keyed by the request key "digest\0problem\0gpu\0
 * driver" (compared in full; the hash picks the chain):
 *   records   winners known in memory (filled from the store and by
 *             tune_done; capped, cleared when full: the store keeps them)
 *   tunings   keys being resolved: LOOKING (a worker reads the store) or
 *             TUNING (a connection is timing the candidates), each with
 *             the requests waiting on it in arrival order
 * A tuning referenced by a store job is freed by that job's done callback
 * (after a stop too); otherwise when it has no leader and no waiter.
 * Configurations are kept in the store as text, "BLOCK_M=128 BLOCK_N=256
 * num_warps=8".  Load: one request per problem key per process; a hit is a
 * hash, a compare and one reply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/memcache.h"
#include "daemon/server.h"
#include "daemon/tune.h"

#define BUCKETS 256             /* both tables */
#define RECORDS_MAX 65536       /* records kept in memory */
#define SWEEP_MS 100            /* deadline checks */
#define CONFIG_TEXT_MAX 4096    /* a configuration as text */

typedef struct record {
  struct record *next;          /* chain */
  uint64_t hash;                /* of rkey */
  char *rkey;                   /* the request key (owned) */
  size_t rlen;                  /* its bytes */
  teeny_const_binding *consts;  /* the winner's consts (names owned) */
  size_t nconsts;
  int num_warps;
  double best_ms;
  uint32_t candidates;
} record;

typedef struct waiter {
  teeny_conn *conn;             /* held until answered */
  uint64_t id;                  /* its request id */
  uint64_t deadline;            /* loop ms: answer "timeout" then */
  struct waiter *next;
} waiter;

typedef enum { LOOKING, TUNING } tstate;

typedef struct tuning {
  struct tuning *next;          /* chain */
  uint64_t hash;                /* of rkey */
  char *rkey;                   /* owned */
  size_t rlen;
  tstate state;                 /* see the top of the file */
  teeny_conn *leader;           /* TUNING: who tunes (not held); NULL: none */
  uint64_t lease;               /* TUNING: loop ms it may take until */
  bool busy;                    /* a store job points at it */
  bool dead;                    /* unlinked (stop): free when the job ends */
  waiter *waiters, **wtail;     /* who waits, first first */
} tuning;

struct teeny_tuner {
  uv_loop_t *loop;
  teeny_log *log;
  teeny_lanes *lanes;           /* store handles: the store and admin lanes */
  uint64_t timeout_ms;          /* --tune-timeout */
  record *records[BUCKETS];
  size_t nrecords;
  tuning *tunings[BUCKETS];
  uv_timer_t timer;             /* deadlines */
  bool stopped;
  teeny_tune_counts counts;
  teeny_buf scratch;            /* request keys */
};

/* ---- keys and configurations -------------------------------------------------------- */

static void build_rkey(teeny_buf *b, const teeny_msg_tune_key *k) {
  b->len = 0;
  b->oom = false;
  teeny__buf_append(b, k->digest, strlen(k->digest) + 1);
  teeny__buf_append(b, k->problem, strlen(k->problem) + 1);
  teeny__buf_append(b, k->gpu, strlen(k->gpu) + 1);
  teeny__buf_append(b, k->driver, strlen(k->driver));
}

/* "BLOCK_M=128 BLOCK_N=256 num_warps=8"; NULL when out of memory. */
static char *config_text(const teeny_msg_tune_config *c) {
  teeny_buf b;
  teeny__buf_init(&b);
  for (size_t i = 0; i < c->nconsts; i++)
    teeny__buf_printf(&b, "%s=%lld ", c->consts[i].name, (long long)c->consts[i].value);
  teeny__buf_printf(&b, "num_warps=%d", c->num_warps);
  return teeny__buf_take(&b, NULL);
}

/* The reverse, into r's consts and num_warps.  0 or TEENY_E_CORRUPT. */
static int config_parse(const char *text, record *r) {
  size_t n = 0;
  for (const char *p = text; *p; p++)
    n += *p == '=';
  r->consts = teeny__calloc(n ? n : 1, sizeof *r->consts);
  if (!r->consts)
    return TEENY_E_NOMEM;
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, " ");
    const char *eq = memchr(p, '=', len);
    if (!eq || eq == p)
      return TEENY_E_CORRUPT;
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    if (end != p + len)
      return TEENY_E_CORRUPT;
    if ((size_t)(eq - p) == 9 && memcmp(p, "num_warps", 9) == 0)
      r->num_warps = (int)v;
    else {
      char *name = teeny__strndup(p, (size_t)(eq - p));
      if (!name)
        return TEENY_E_NOMEM;
      r->consts[r->nconsts++] = (teeny_const_binding){name, v};
    }
    p += len;
    p += *p == ' ';
  }
  return 0;
}

/* ---- records --------------------------------------------------------------------------- */

/* Free r's consts (names too); r stays. */
static void consts_free(record *r) {
  for (size_t i = 0; i < r->nconsts; i++)
    teeny__free((char *)r->consts[i].name);
  teeny__free(r->consts);
  r->consts = NULL;
  r->nconsts = 0;
}

static void record_free(record *r) {
  if (!r)
    return;
  consts_free(r);
  teeny__free(r->rkey);
  teeny__free(r);
}

static void records_clear(teeny_tuner *t) {
  for (size_t b = 0; b < BUCKETS; b++)
    for (record *r = t->records[b], *nx; r; r = nx) {
      nx = r->next;
      record_free(r);
    }
  memset(t->records, 0, sizeof t->records);
  t->nrecords = 0;
}

static record *record_find(teeny_tuner *t, const char *k, size_t n, uint64_t h) {
  for (record *r = t->records[h % BUCKETS]; r; r = r->next)
    if (r->hash == h && r->rlen == n && memcmp(r->rkey, k, n) == 0)
      return r;
  return NULL;
}

/* Remember (rkey -> config text, best_ms, candidates); replaces. */
static void record_put(teeny_tuner *t, const char *k, size_t n, const char *config,
                       double best_ms, uint32_t candidates) {
  uint64_t h = teeny__hash64(k, n);
  record **pp = &t->records[h % BUCKETS];
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->hash == h && (*pp)->rlen == n && memcmp((*pp)->rkey, k, n) == 0) {
      record *old = *pp;
      *pp = old->next;
      record_free(old);
      t->nrecords--;
      break;
    }
  if (t->nrecords >= RECORDS_MAX)
    records_clear(t); /* the store keeps them all */
  record *r = teeny__calloc(1, sizeof *r);
  if (!r || !(r->rkey = teeny__malloc(n)) || config_parse(config, r)) {
    if (r && r->rkey)
      TEENY_LOGW(t->log, "tuning record with a malformed config '%.64s'", config);
    record_free(r);
    return;
  }
  memcpy(r->rkey, k, n);
  r->rlen = n;
  r->hash = h;
  r->best_ms = best_ms;
  r->candidates = candidates;
  r->next = t->records[h % BUCKETS];
  t->records[h % BUCKETS] = r;
  t->nrecords++;
}

/* ---- replies ------------------------------------------------------------------------- */

static void reply_state(teeny_conn *c, uint64_t id, teeny_msg_tune_state st,
                        const record *r, bool joined) {
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = TEENY_OP_TUNE;
  rep.id = id;
  rep.u.tune.state = st;
  rep.u.tune.joined = joined;
  if (r) {
    rep.u.tune.config = (teeny_msg_tune_config){r->consts, r->nconsts, r->num_warps};
    rep.u.tune.best_ms = r->best_ms;
    rep.u.tune.candidates = r->candidates;
  }
  teeny__conn_reply(c, &rep);
}

static void reply_status(teeny_conn *c, teeny_proto_op op, uint64_t id, int status,
                         const char *msg) {
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = op;
  rep.id = id;
  rep.status = status;
  rep.error = msg;
  teeny__conn_reply(c, &rep);
}

/* ---- tunings ------------------------------------------------------------------------- */

static tuning *tuning_find(teeny_tuner *t, const char *k, size_t n, uint64_t h) {
  for (tuning *g = t->tunings[h % BUCKETS]; g; g = g->next)
    if (g->hash == h && g->rlen == n && memcmp(g->rkey, k, n) == 0)
      return g;
  return NULL;
}

static tuning *tuning_new(teeny_tuner *t, const char *k, size_t n, uint64_t h) {
  tuning *g = teeny__calloc(1, sizeof *g);
  if (!g || !(g->rkey = teeny__malloc(n))) {
    teeny__free(g);
    return NULL;
  }
  memcpy(g->rkey, k, n);
  g->rlen = n;
  g->hash = h;
  g->wtail = &g->waiters;
  g->next = t->tunings[h % BUCKETS];
  t->tunings[h % BUCKETS] = g;
  return g;
}

static void tuning_unlink(teeny_tuner *t, tuning *g) {
  tuning **pp = &t->tunings[g->hash % BUCKETS];
  while (*pp && *pp != g)
    pp = &(*pp)->next;
  if (*pp)
    *pp = g->next;
  g->dead = true;
}

static void tuning_free(tuning *g) {
  teeny__free(g->rkey);
  teeny__free(g);
}

/* Unlink and free g unless a job still points at it (then the job does). */
static void tuning_end(teeny_tuner *t, tuning *g) {
  if (!g->dead)
    tuning_unlink(t, g);
  if (!g->busy)
    tuning_free(g);
}

static int add_waiter(teeny_tuner *t, tuning *g, teeny_conn *c, uint64_t id,
                      uint64_t wait_ms) {
  waiter *w = teeny__calloc(1, sizeof *w);
  if (!w)
    return TEENY_E_NOMEM;
  w->conn = c;
  w->id = id;
  w->deadline = uv_now(t->loop) + (wait_ms ? wait_ms : t->timeout_ms);
  teeny__conn_hold(c);
  *g->wtail = w;
  g->wtail = &w->next;
  return 0;
}

/* Take w off g (the caller answers and frees it). */
static void waiter_unlink(tuning *g, waiter *w) {
  waiter **pp = &g->waiters;
  while (*pp != w)
    pp = &(*pp)->next;
  *pp = w->next;
  if (g->wtail == &w->next)
    g->wtail = pp;
}

static void waiter_done(waiter *w) {
  teeny__conn_release(w->conn);
  teeny__free(w);
}

/* Answer every waiter of g with r ("found"), then end g. */
static void resolve_found(teeny_tuner *t, tuning *g, const record *r, bool joined) {
  for (waiter *w = g->waiters, *nx; w; w = nx) {
    nx = w->next;
    reply_state(w->conn, w->id, TEENY_TUNE_FOUND, r, joined);
    t->counts.hits++;
    t->counts.joins += joined;
    waiter_done(w);
  }
  g->waiters = NULL;
  g->wtail = &g->waiters;
  tuning_end(t, g);
}

/* No record: the first live waiter becomes the tuner; no waiter, no
 * tuning. */
static void promote(teeny_tuner *t, tuning *g) {
  g->leader = NULL;
  while (g->waiters) {
    waiter *w = g->waiters;
    waiter_unlink(g, w);
    if (teeny__conn_closing(w->conn)) {
      waiter_done(w); /* it went away while waiting */
      continue;
    }
    reply_state(w->conn, w->id, TEENY_TUNE_TUNE, NULL, false);
    t->counts.tunings++;
    g->state = TUNING;
    g->leader = w->conn;
    g->lease = uv_now(t->loop) + t->timeout_ms;
    waiter_done(w);
    return;
  }
  tuning_end(t, g);
}

/* ---- store jobs ------------------------------------------------------------------------ */

typedef struct tjob {
  teeny_job job;               /* must be first */
  teeny_tuner *t;
  tuning *g;                   /* the tuning it resolves, or NULL */
  teeny_conn *c;               /* tune_done / admin: held, answered at the end */
  teeny_msg_request req;       /* the request (moved in) */
  teeny_store_tuned rec;       /* lookup: what was found; put: what to store */
  char *config;                /* put: the winner as text */
  int rc;                      /* the store's answer */
  char err[TEENY_STORE_ERR_LEN];
  teeny_buf frame;             /* admin: the encoded reply */
  int status;                  /* ... its status */
} tjob;

static void tjob_free(tjob *j) {
  teeny_msg_request_free(&j->req);
  teeny_store_tuned_close(&j->rec);
  teeny__free(j->config);
  teeny__buf_free(&j->frame);
  teeny__free(j);
}

/* Queue j in lane as the work of who (a connection); done runs once. */
static void submit(teeny_tuner *t, tjob *j, teeny_lane lane, const teeny_conn *who,
                   teeny_job_work_fn work, teeny_job_done_fn done) {
  j->t = t;
  if (j->g)
    j->g->busy = true;
  if (j->c)
    teeny__conn_hold(j->c);
  teeny__lanes_submit(t->lanes, &j->job, lane, teeny__conn_owner(who), work, done);
}

/* A job's tuning, or NULL when the stop ended it meanwhile (then freed). */
static tuning *job_tuning(tjob *j) {
  tuning *g = j->g;
  if (!g)
    return NULL;
  g->busy = false;
  if (g->dead) {
    tuning_free(g);
    return NULL;
  }
  return g;
}

static void lookup_work(teeny_job *jb, teeny_store *st) {
  tjob *j = (tjob *)jb;
  const teeny_msg_tune_key *k = &j->req.u.tune.key;
  j->rc = teeny_store_tuned_get(st, k->digest, k->problem, k->gpu, k->driver, &j->rec,
                                j->err);
}

static void lookup_done(teeny_job *jb, int status) {
  tjob *j = (tjob *)jb;
  teeny_tuner *t = j->t;
  tuning *g = job_tuning(j);
  if (g && status == 0 && j->rc == 0) {
    record_put(t, g->rkey, g->rlen, j->rec.config, j->rec.best_ms, j->rec.candidates);
    const record *r = record_find(t, g->rkey, g->rlen, g->hash);
    if (r)
      resolve_found(t, g, r, false);
    else
      promote(t, g); /* an unreadable record: tune again */
  } else if (g) {
    if (status == 0 && j->rc != TEENY_E_NOTFOUND)
      TEENY_LOGW(t->log, "reading a tuning record: %s; tuning again", j->err);
    promote(t, g);
  }
  tjob_free(j);
}

static void put_work(teeny_job *jb, teeny_store *st) {
  tjob *j = (tjob *)jb;
  const teeny_msg_tune_done *d = &j->req.u.tune_done;
  teeny_store_tuned r = {.kernel = (char *)d->key.kernel,
                         .problem = (char *)d->key.problem,
                         .gpu = (char *)d->key.gpu,
                         .driver = (char *)d->key.driver,
                         .config = j->config,
                         .best_ms = d->best_ms,
                         .candidates = d->candidates};
  memcpy(r.digest, d->key.digest, sizeof r.digest);
  j->rc = teeny_store_tuned_put(st, &r, j->err);
}

static void put_done(teeny_job *jb, int status) {
  tjob *j = (tjob *)jb;
  teeny_tuner *t = j->t;
  const teeny_msg_tune_done *d = &j->req.u.tune_done;
  build_rkey(&t->scratch, &d->key);
  int rc = status ? TEENY_E_SHUTDOWN : j->rc;
  if (!rc)
    record_put(t, t->scratch.p, t->scratch.len, j->config, d->best_ms, d->candidates);
  reply_status(j->c, TEENY_OP_TUNE_DONE, j->req.id, rc, rc ? j->err : NULL);
  teeny__conn_release(j->c);
  tuning *g = job_tuning(j);
  const record *r = rc ? NULL : record_find(t, t->scratch.p, t->scratch.len,
                                            teeny__hash64(t->scratch.p, t->scratch.len));
  if (g && r)
    resolve_found(t, g, r, true);
  else if (g && !g->leader)
    promote(t, g); /* not stored: the next waiter tunes */
  tjob_free(j);
}

/* ---- requests ------------------------------------------------------------------------- */

static void do_tune(teeny_tuner *t, teeny_conn *c, teeny_msg_request *req) {
  const teeny_msg_tune *q = &req->u.tune;
  build_rkey(&t->scratch, &q->key);
  if (t->scratch.oom) {
    reply_status(c, TEENY_OP_TUNE, req->id, TEENY_E_NOMEM, NULL);
    return;
  }
  uint64_t h = teeny__hash64(t->scratch.p, t->scratch.len);
  const record *r = record_find(t, t->scratch.p, t->scratch.len, h);
  if (r) {
    t->counts.hits++;
    reply_state(c, req->id, TEENY_TUNE_FOUND, r, false);
    return;
  }
  tuning *g = tuning_find(t, t->scratch.p, t->scratch.len, h);
  if (!q->claim && (!g || g->state == TUNING)) {
    reply_state(c, req->id, TEENY_TUNE_NONE, NULL, false); /* never waits */
    return;
  }
  bool fresh = !g;
  if (fresh && !(g = tuning_new(t, t->scratch.p, t->scratch.len, h))) {
    reply_status(c, TEENY_OP_TUNE, req->id, TEENY_E_NOMEM, NULL);
    return;
  }
  if (add_waiter(t, g, c, req->id, q->wait_ms)) {
    reply_status(c, TEENY_OP_TUNE, req->id, TEENY_E_NOMEM, NULL);
    if (fresh)
      tuning_end(t, g);
    return;
  }
  if (!fresh)
    return; /* it waits on the lookup or the tuner */
  tjob *j = teeny__calloc(1, sizeof *j);
  if (!j) {
    promote(t, g); /* no store: the asker tunes */
    return;
  }
  j->g = g;
  j->req = *req;
  memset(req, 0, sizeof *req);
  submit(t, j, TEENY_LANE_STORE, c, lookup_work, lookup_done);
}

static void do_tune_done(teeny_tuner *t, teeny_conn *c, teeny_msg_request *req) {
  const teeny_msg_tune_done *d = &req->u.tune_done;
  build_rkey(&t->scratch, &d->key);
  uint64_t h = teeny__hash64(t->scratch.p, t->scratch.len);
  tuning *g = tuning_find(t, t->scratch.p, t->scratch.len, h);
  if (d->abandon) {
    reply_status(c, TEENY_OP_TUNE_DONE, req->id, 0, NULL);
    if (g && g->state == TUNING && g->leader == c && !g->busy)
      promote(t, g);
    return;
  }
  char *config = config_text(&d->config);
  if (!config || strlen(config) > CONFIG_TEXT_MAX) {
    reply_status(c, TEENY_OP_TUNE_DONE, req->id, config ? TEENY_E_LIMIT : TEENY_E_NOMEM,
                 config ? "configuration too long" : NULL);
    teeny__free(config);
    return;
  }
  tjob *j = teeny__calloc(1, sizeof *j);
  if (!j) {
    teeny__free(config);
    reply_status(c, TEENY_OP_TUNE_DONE, req->id, TEENY_E_NOMEM, NULL);
    return;
  }
  j->config = config;
  j->c = c;
  j->g = g && !g->busy ? g : NULL; /* a lookup in flight resolves it itself */
  if (j->g)
    j->g->leader = c; /* whoever records it is the tuner now */
  j->req = *req;
  memset(req, 0, sizeof *req);
  submit(t, j, TEENY_LANE_STORE, c, put_work, put_done);
}

void teeny__tuner_request(teeny_tuner *t, teeny_conn *c, teeny_msg_request *req) {
  if (t->stopped)
    reply_status(c, req->op, req->id, TEENY_E_SHUTDOWN, NULL);
  else if (req->op == TEENY_OP_TUNE)
    do_tune(t, c, req);
  else
    do_tune_done(t, c, req);
  teeny_msg_request_free(req); /* a no-op when a job took it */
}

/* ---- tuned (list) and tuned_purge ----------------------------------------------------- */

static void encode_reply(tjob *j, teeny_msg_reply *rep) {
  rep->op = j->req.op;
  rep->id = j->req.id;
  j->frame.len = 0;
  size_t b = teeny_frame_begin(&j->frame);
  int rc = teeny_msg_reply_encode(rep, &j->frame);
  if (!rc)
    rc = teeny_frame_end(&j->frame, b, 0);
  j->status = rc ? TEENY_E_INTERNAL : rep->status;
  if (rc) {
    j->frame.len = 0;
    b = teeny_frame_begin(&j->frame);
    teeny_msg_error_encode(&j->frame, j->req.id, TEENY_E_INTERNAL,
                           "reply could not be encoded");
    teeny_frame_end(&j->frame, b, 0);
  }
}

/* One listed record as the protocol says it. */
static int list_item(const teeny_store_tuned *s, teeny_msg_tuned_rec *m, record *scratch) {
  memset(scratch, 0, sizeof *scratch);
  int rc = config_parse(s->config, scratch);
  m->key = (teeny_msg_tune_key){.kernel = s->kernel, .problem = s->problem,
                                .gpu = s->gpu, .driver = s->driver};
  memcpy(m->key.digest, s->digest, sizeof m->key.digest);
  m->config = (teeny_msg_tune_config){scratch->consts, scratch->nconsts,
                                      scratch->num_warps};
  m->best_ms = s->best_ms;
  m->candidates = s->candidates;
  m->created = s->created;
  return rc;
}

static void list_work(teeny_job *jb, teeny_store *st) {
  tjob *j = (tjob *)jb;
  teeny_store_tuned *v = NULL;
  size_t n = 0;
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  int rc = teeny_store_tuned_list(st, j->req.u.tuned.name, &v, &n, j->err);
  teeny_msg_tuned_rec *m = n ? teeny__calloc(n, sizeof *m) : NULL;
  record *cfg = n ? teeny__calloc(n, sizeof *cfg) : NULL;
  if (!rc && n && (!m || !cfg))
    rc = TEENY_E_NOMEM;
  size_t k = 0; /* records whose config parses */
  for (size_t i = 0; !rc && i < n; i++)
    if (list_item(&v[i], &m[k], &cfg[k]) == 0)
      k++;
    else
      consts_free(&cfg[k]); /* a malformed record is left out */
  if (rc) {
    rep.status = rc;
    rep.error = j->err[0] ? j->err : NULL;
  }
  rep.u.tuned.records = m;
  rep.u.tuned.nrecords = k;
  encode_reply(j, &rep);
  for (size_t i = 0; cfg && i < n; i++)
    consts_free(&cfg[i]);
  teeny__free(cfg);
  teeny__free(m);
  teeny_store_tuneds_free(v, n);
}

static void purge_work(teeny_job *jb, teeny_store *st) {
  tjob *j = (tjob *)jb;
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  const teeny_msg_tuned_purge *p = &j->req.u.tuned_purge;
  uint64_t removed = 0;
  int rc = teeny_store_tuned_purge(st, p->all, p->name, &removed, j->err);
  rep.status = rc;
  rep.error = rc ? j->err : NULL;
  rep.u.tuned_purge.removed = removed;
  encode_reply(j, &rep);
}

static void admin_done(teeny_job *jb, int status) {
  tjob *j = (tjob *)jb;
  if (j->req.op == TEENY_OP_TUNED_PURGE)
    records_clear(j->t); /* they may name purged records */
  if (status)
    reply_status(j->c, j->req.op, j->req.id, TEENY_E_SHUTDOWN, NULL);
  else
    teeny__conn_send(j->c, j->req.id, j->frame.p, j->frame.len, j->status);
  teeny__conn_release(j->c);
  tjob_free(j);
}

void teeny__tuner_admin(teeny_tuner *t, teeny_conn *c, teeny_msg_request *req) {
  tjob *j = teeny__calloc(1, sizeof *j);
  if (!j) {
    reply_status(c, req->op, req->id, TEENY_E_NOMEM, NULL);
    teeny_msg_request_free(req);
    return;
  }
  j->c = c;
  j->req = *req;
  memset(req, 0, sizeof *req);
  bool purge = j->req.op == TEENY_OP_TUNED_PURGE;
  submit(t, j, TEENY_LANE_ADMIN, c, purge ? purge_work : list_work, admin_done);
}

/* ---- connections, deadlines, lifetime --------------------------------------------------- */

void teeny__tuner_conn_closed(teeny_tuner *t, teeny_conn *c) {
  for (size_t b = 0; t && b < BUCKETS; b++)
    for (tuning *g = t->tunings[b], *nx; g; g = nx) {
      nx = g->next;
      if (g->state == TUNING && g->leader == c && !g->busy) {
        TEENY_LOGI(t->log, "a tuner went away before it recorded a winner; the "
                           "next waiting process tunes");
        promote(t, g);
      }
    }
}

/* Waiters past their deadline get "timeout"; a tuner past its lease is
 * passed over. */
static void sweep_one(teeny_tuner *t, tuning *g, uint64_t now) {
  for (waiter *w = g->waiters, *nx; w; w = nx) {
    nx = w->next;
    if (now < w->deadline)
      continue;
    waiter_unlink(g, w);
    reply_state(w->conn, w->id, TEENY_TUNE_TIMEOUT, NULL, false);
    waiter_done(w);
  }
  if (g->state == TUNING && !g->busy && now >= g->lease) {
    TEENY_LOGW(t->log, "a tuning ran past --tune-timeout (%llu ms); the next waiting "
                       "process tunes",
               (unsigned long long)t->timeout_ms);
    promote(t, g);
  }
}

static void on_sweep(uv_timer_t *h) {
  teeny_tuner *t = h->data;
  uint64_t now = uv_now(t->loop);
  for (size_t b = 0; b < BUCKETS; b++)
    for (tuning *g = t->tunings[b], *nx; g; g = nx) {
      nx = g->next;
      sweep_one(t, g, now);
    }
}

int teeny__tuner_create(uv_loop_t *loop, teeny_log *log, teeny_lanes *lanes,
                        uint64_t timeout_ms, teeny_tuner **out) {
  teeny_tuner *t = teeny__calloc(1, sizeof *t);
  if (!t)
    return TEENY_E_NOMEM;
  t->loop = loop;
  t->log = log;
  t->lanes = lanes;
  t->timeout_ms = timeout_ms;
  teeny__buf_init(&t->scratch);
  uv_timer_init(loop, &t->timer);
  t->timer.data = t;
  uv_timer_start(&t->timer, on_sweep, SWEEP_MS, SWEEP_MS);
  uv_unref((uv_handle_t *)&t->timer); /* it never keeps the loop up */
  *out = t;
  return 0;
}

void teeny__tuner_counts(const teeny_tuner *t, teeny_tune_counts *out) {
  memset(out, 0, sizeof *out);
  if (t)
    *out = t->counts;
}

void teeny__tuner_stop(teeny_tuner *t) {
  if (!t || t->stopped)
    return;
  t->stopped = true;
  for (size_t b = 0; b < BUCKETS; b++)
    for (tuning *g = t->tunings[b], *nx; g; g = nx) {
      nx = g->next;
      for (waiter *w = g->waiters, *wn; w; w = wn) {
        wn = w->next;
        reply_status(w->conn, TEENY_OP_TUNE, w->id, TEENY_E_SHUTDOWN, NULL);
        waiter_done(w);
      }
      g->waiters = NULL;
      tuning_unlink(t, g);
      if (!g->busy)
        tuning_free(g);
    }
  uv_timer_stop(&t->timer);
  uv_close((uv_handle_t *)&t->timer, NULL);
}

void teeny__tuner_destroy(teeny_tuner *t) {
  if (!t)
    return;
  records_clear(t);
  teeny__buf_free(&t->scratch);
  teeny__free(t);
}
