/*
 * daemon/sched.c — the single-flight scheduler (see sched.h for the four
 * stages).
 *
 * Two in-flight tables, both chained hash tables touched only on the loop
 * thread:
 *   resolving  request key -> resolution: one per distinct request being
 *              answered (stage 3 or waiting on stage 4); its waiters are
 *              the connections and ids to answer
 *   compiling  cache key -> compile job: one per key being compiled; its
 *              resolutions are every request waiting on that compile, the
 *              one that started it first
 * A resolution owns the first request (its source and bindings) and the
 * key the spec step (in a helper process, helper.h) found for it; the
 * compile job borrows its leader's request, which lives until the compile
 * is done because the leader waits on it.  A compile job is two jobs in
 * turn: the compile itself (compile lane), then its put and eviction
 * (store lane); it stays in the compiling table through both, so requests
 * for its key keep joining it.
 * Load: a cold request costs three lane hops; hits never get here.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "daemon/heal.h"
#include "daemon/sched.h"
#include "daemon/server.h"

/* One connection and request id to answer. */
typedef struct waiter {
  teeny_conn *conn;    /* held (teeny__conn_hold) until answered */
  uint64_t id;         /* the request's id */
  uint64_t t0_ns;      /* when it was added (hit latency, stats.h) */
  struct waiter *next; /* next waiter, in arrival order */
} waiter;

struct teeny_resolution {
  teeny_job job;              /* stage 3 (must be first) */
  teeny_sched *s;             /* owner */
  teeny_resolution *hnext;    /* resolving chain */
  teeny_resolution *cnext;    /* next resolution on the same compile */
  bool in_table;              /* in s->resolving (force requests are not) */
  teeny_job_owner owner;      /* whose job it is (the first requester) */
  uint64_t cost;              /* bytes charged to the memory budget */
  uint64_t hash;              /* of the request key */
  char *rkey;                 /* the request key (owned) */
  size_t rkey_len;            /* its length */
  teeny_msg_request req;      /* the first request (owns its strings) */
  unsigned emit;              /* artifacts its replies carry */
  bool force;                 /* TEENY_MSG_FORCE */
  waiter *waiters;            /* who to answer, first = who asked first */
  waiter **wtail;             /* where the next waiter goes */
  /* filled by the worker */
  int rc;                     /* the spec step's result */
  char key[65];               /* on success: the cache key */
  teeny_helper_outcome what;  /* of the spec step */
  teeny_diags diags;          /* its diagnostics (+ the compile's) */
  teeny_store_rec rec;        /* a disk hit */
  teeny_store_cubin cubin;    /* ... and its cubin for the request's arch */
  bool want_cubin;            /* ask the SASS lane for one after replying */
  bool disk;                  /* rec is the answer */
  bool corrupt;               /* the stored entry failed its checks */
};

struct teeny_compile_job {
  teeny_job job;              /* stage 4, compile lane (must be first) */
  teeny_job put;              /* then the put, store lane */
  teeny_sched *s;             /* owner */
  teeny_compile_job *hnext;   /* compiling chain */
  char key[65];               /* the cache key */
  teeny_resolution *rs;       /* waiting resolutions, the leader first */
  teeny_resolution **rtail;   /* where the next one goes */
  bool check;                 /* verify the stored entry (force, corrupt) */
  bool remote_hit;            /* art came from the remote tier */
  teeny_remote_lease *lease;  /* the cluster-wide lease we compile under */
  teeny_uselog touches;       /* replayed before the eviction */
  /* filled by the worker */
  int rc;                     /* teeny_spec_compile's result */
  teeny_artifact *art;        /* on success */
  teeny_diags diags;          /* compile diagnostics */
  double ms;                  /* wall time of the compile */
  teeny_helper_outcome what;  /* timed out, helper died, ... */
  bool not_stored;            /* the put failed (disk full, I/O) */
  teeny_store_counts evicted; /* what the size cap removed */
};

typedef struct flush_job {
  teeny_job job;          /* must be first */
  teeny_sched *s;         /* owner */
  teeny_uselog touches; /* the uses to write */
} flush_job;

static size_t bucket_of(uint64_t hash) {
  return (size_t)(hash & (TEENY_SCHED_BUCKETS - 1));
}

static uint64_t key_hash(const char *key) {
  return teeny__hash64(key, TEENY_STORE_KEY_LEN);
}

/* ---- replies --------------------------------------------------------------- */

/* The artifact as a reply carries it: only the texts emit asks for. */
static void view_trim(teeny_artifact *v, unsigned emit) {
  if (!(emit & TEENY_MSG_EMIT_PTX))
    v->ptx = NULL, v->ptx_len = 0;
  if (!(emit & TEENY_MSG_EMIT_MLIR))
    v->mlir = NULL, v->mlir_len = 0;
  if (!(emit & TEENY_MSG_EMIT_SOURCE))
    v->source = NULL, v->source_len = 0;
}

static void view_from_rec(teeny_artifact *v, teeny_store_rec *r,
                          unsigned emit) {
  memset(v, 0, sizeof *v);
  v->name = r->name;
  v->id = r->id;
  memcpy(v->key, r->key, sizeof v->key);
  v->entry = r->entry;
  v->target = r->target;
  v->num_warps = r->num_warps;
  v->ptx = r->ptx, v->ptx_len = r->ptx ? r->ptx_size : 0;
  v->mlir = r->mlir, v->mlir_len = r->mlir ? r->mlir_size : 0;
  v->source = r->src, v->source_len = r->src ? r->src_size : 0;
  v->params = r->params;
  v->nparams = r->nparams;
  v->threads_per_block = r->threads_per_block;
  v->shared_bytes = r->shared_bytes;
  v->compile_ns = (uint64_t)(r->compile_ms * 1e6);
  view_trim(v, emit);
}

static void compile_reply(teeny_msg_reply *rep, uint64_t id,
                          const teeny_artifact *v, teeny_msg_cache cache,
                          const teeny_diags *d, const teeny_store_cubin *cb) {
  memset(rep, 0, sizeof *rep);
  rep->op = TEENY_OP_COMPILE;
  rep->id = id;
  rep->u.compile.art = *v;
  rep->u.compile.cache = cache;
  rep->diags = d->v;
  rep->ndiags = d->n;
  if (cb && cb->data) {
    rep->u.compile.cubin = cb->data;
    rep->u.compile.cubin_len = cb->size;
    rep->u.compile.cubin_arch = cb->arch;
    rep->u.compile.cubin_toolchain = cb->toolchain;
  }
}

/* Put r's answer into the in-memory map, as a frame with the id slot. */
static void remember(teeny_sched *s, teeny_resolution *r,
                     const teeny_artifact *v) {
  teeny_msg_reply rep;
  compile_reply(&rep, UINT64_MAX, v, TEENY_CACHE_MEMORY, &r->diags, &r->cubin);
  s->frame.len = 0;
  s->frame.oom = false;
  size_t b = teeny_frame_begin(&s->frame);
  if (teeny_msg_reply_encode(&rep, &s->frame) ||
      teeny_frame_end(&s->frame, b, 0))
    return;
  teeny_reqkey k = {r->rkey, r->rkey_len, r->hash};
  teeny__memcache_put(s->mc, &k, s->frame.p, s->frame.len, v->key,
                      (double)v->compile_ns / 1e6);
  if (s->frame.cap > (8u << 20))
    teeny__buf_free(&s->frame);
}

/* "file:line:col: message" of the first error, or teeny_strerror(rc). */
static void error_text(const teeny_diags *d, int rc, char *buf, size_t n) {
  for (size_t i = 0; i < d->n; i++) {
    const teeny_diag *g = &d->v[i];
    if (g->level != TEENY_DIAG_ERROR)
      continue;
    if (g->line)
      snprintf(buf, n, "%s:%d:%d: %s", g->file ? g->file : "<source>",
               g->line, g->col, g->message);
    else
      snprintf(buf, n, "%s", g->message);
    return;
  }
  snprintf(buf, n, "%s", teeny_strerror(rc));
}

/* ---- resolutions ------------------------------------------------------------ */

static int add_waiter(teeny_resolution *r, teeny_conn *c, uint64_t id) {
  waiter *w = teeny__calloc(1, sizeof *w);
  if (!w)
    return TEENY_E_NOMEM;
  w->conn = c;
  w->id = id;
  w->t0_ns = teeny__now_ns();
  teeny__conn_hold(c);
  *r->wtail = w;
  r->wtail = &w->next;
  return 0;
}

static teeny_resolution *find_resolution(teeny_sched *s,
                                         const teeny_reqkey *k) {
  teeny_resolution *r = s->resolving[bucket_of(k->hash)];
  for (; r; r = r->hnext)
    if (r->hash == k->hash && r->rkey_len == k->len &&
        memcmp(r->rkey, k->p, k->len) == 0)
      return r;
  return NULL;
}

static void table_insert(teeny_sched *s, teeny_resolution *r) {
  teeny_resolution **b = &s->resolving[bucket_of(r->hash)];
  r->hnext = *b;
  *b = r;
  r->in_table = true;
}

static void table_remove(teeny_sched *s, teeny_resolution *r) {
  teeny_resolution **pp = &s->resolving[bucket_of(r->hash)];
  while (*pp && *pp != r)
    pp = &(*pp)->hnext;
  if (*pp)
    *pp = r->hnext;
  r->in_table = false;
}

static teeny_resolution *resolution_new(teeny_sched *s, const teeny_reqkey *k,
                                        teeny_msg_request *req,
                                        teeny_job_owner owner) {
  teeny_resolution *r = teeny__calloc(1, sizeof *r);
  char *rkey = teeny__malloc(k->len ? k->len : 1);
  if (!r || !rkey) {
    teeny__free(r);
    teeny__free(rkey);
    return NULL;
  }
  memcpy(rkey, k->p, k->len);
  r->s = s;
  r->owner = owner;
  r->rkey = rkey;
  r->rkey_len = k->len;
  r->hash = k->hash;
  r->req = *req;
  memset(req, 0, sizeof *req); /* moved */
  r->emit = r->req.u.compile.emit;
  r->force = (r->req.u.compile.flags & TEENY_MSG_FORCE) != 0;
  r->wtail = &r->waiters;
  teeny_diags_init(&r->diags);
  return r;
}

/* Release every waiter and free r. */
static void resolution_free(teeny_resolution *r) {
  if (r->in_table)
    table_remove(r->s, r);
  for (waiter *w = r->waiters, *nx; w; w = nx) {
    nx = w->next;
    teeny__conn_release(w->conn);
    teeny__free(w);
  }
  teeny_diags_close(&r->diags);
  teeny_store_rec_close(&r->rec);
  teeny_store_cubin_close(&r->cubin);
  teeny_msg_request_free(&r->req);
  teeny__free(r->rkey);
  teeny__budget_give(r->s->budget, r->cost);
  teeny__free(r);
}

/* Answer every waiter of r with status rc, then free r. */
static void finish_error(teeny_resolution *r, int rc, const char *msg) {
  char text[512];
  if (!msg) {
    error_text(&r->diags, rc, text, sizeof text);
    msg = text;
  }
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = TEENY_OP_COMPILE;
  rep.status = rc;
  rep.error = msg;
  rep.diags = r->diags.v;
  rep.ndiags = r->diags.n;
  for (waiter *w = r->waiters; w; w = w->next) {
    rep.id = w->id;
    teeny__conn_reply(w->conn, &rep);
  }
  resolution_free(r);
}

/* A hit answered now that was asked at t0_ns (teeny__now_ns). */
static void observe_hit(teeny_sched *s, uint64_t t0_ns) {
  teeny__stats_observe(s->stats, TEENY_HIST_HIT, (double)(teeny__now_ns() - t0_ns) / 1e9);
}

static void finish_disk(teeny_resolution *r) {
  teeny_sched *s = r->s;
  teeny_artifact v;
  view_from_rec(&v, &r->rec, r->emit);
  teeny_msg_reply rep;
  compile_reply(&rep, 0, &v, TEENY_CACHE_DISK, &r->diags, &r->cubin);
  for (waiter *w = r->waiters; w; w = w->next) {
    rep.id = w->id;
    teeny__conn_reply(w->conn, &rep);
    observe_hit(s, w->t0_ns);
    s->stats->disk_hits++;
    s->stats->saved_ms_total += r->rec.compile_ms;
    teeny__sched_touch(s, r->rec.key);
  }
  remember(s, r, &v);
  if (r->want_cubin) /* after the replies: nobody waits for it */
    teeny__sass_want(s->sass, r->rec.key, r->rec.target, r->req.u.compile.arch, NULL, 0);
  resolution_free(r);
}

/* art (compiled or fetched for r) was stored (keep): the SASS lane may make
 * its cubin for r's GPU from its PTX, after the replies went out. */
static void want_cubin(teeny_resolution *r, const teeny_artifact *art, bool keep) {
  if (keep && r->req.u.compile.arch)
    teeny__sass_want(r->s->sass, art->key, art->target, r->req.u.compile.arch,
                     art->ptx, art->ptx_len);
}

/* r's request was compiled by c; lead says r started the compile; keep:
 * remember the answer in the memory map. */
static void finish_compiled(teeny_resolution *r, const teeny_artifact *art,
                            bool lead, bool keep) {
  teeny_sched *s = r->s;
  teeny_artifact v = *art;
  view_trim(&v, r->emit);
  teeny_msg_reply rep;
  compile_reply(&rep, 0, &v, TEENY_CACHE_MISS, &r->diags, NULL);
  for (waiter *w = r->waiters; w; w = w->next) {
    bool first = lead && w == r->waiters;
    rep.id = w->id;
    rep.u.compile.cache = first ? TEENY_CACHE_MISS : TEENY_CACHE_JOINED;
    teeny__conn_reply(w->conn, &rep);
    s->stats->misses++;
    s->stats->joins += !first;
  }
  if (keep)
    remember(s, r, &v);
  want_cubin(r, art, keep);
  resolution_free(r);
}

/* r's request was answered by a remote entry (now in the local store):
 * like a disk hit for every waiter. */
static void finish_remote(teeny_resolution *r, const teeny_artifact *art,
                          bool keep) {
  teeny_sched *s = r->s;
  teeny_artifact v = *art;
  view_trim(&v, r->emit);
  teeny_msg_reply rep;
  compile_reply(&rep, 0, &v, TEENY_CACHE_DISK, &r->diags, NULL);
  for (waiter *w = r->waiters; w; w = w->next) {
    rep.id = w->id;
    teeny__conn_reply(w->conn, &rep);
    observe_hit(s, w->t0_ns);
    s->stats->remote_hits++;
    s->stats->saved_ms_total += (double)art->compile_ns / 1e6;
  }
  if (keep)
    remember(s, r, &v);
  want_cubin(r, art, keep);
  resolution_free(r);
}

/* ---- stage 4: compile -------------------------------------------------------- */

static teeny_compile_job *find_compile(teeny_sched *s, const char *key) {
  teeny_compile_job *c = s->compiling[bucket_of(key_hash(key))];
  for (; c; c = c->hnext)
    if (memcmp(c->key, key, TEENY_STORE_KEY_LEN) == 0)
      return c;
  return NULL;
}

static void compile_unlink(teeny_sched *s, teeny_compile_job *c) {
  teeny_compile_job **pp = &s->compiling[bucket_of(key_hash(c->key))];
  while (*pp && *pp != c)
    pp = &(*pp)->hnext;
  if (*pp)
    *pp = c->hnext;
}

static void compile_free(teeny_compile_job *c) {
  teeny_artifact_destroy(c->art);
  teeny_diags_close(&c->diags);
  teeny__uselog_free(&c->touches);
  teeny__free(c);
}

/* Drop the entry of key, which failed its checks (its files no longer
 * match the index); the compile that follows stores it afresh.  Other
 * damage is for `teenyctl verify --repair`. */
static void drop_entry(teeny_sched *s, teeny_store *st, const char *key) {
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_remove(st, key, NULL, err);
  TEENY_LOGW(s->log, "entry %.16s... failed its checks; removed: %s", key,
             rc ? err : "yes");
}

/* Is the stored entry for key intact?  (Force and corruption paths.) */
static bool stored_intact(teeny_compile_job *c, teeny_store *st) {
  teeny_store_rec rec;
  memset(&rec, 0, sizeof rec);
  char err[TEENY_STORE_ERR_LEN];
  int rc = teeny_store_get(st, c->key,
                           TEENY_STORE_GET_ALL | TEENY_STORE_GET_VERIFY, &rec,
                           err);
  teeny_store_rec_close(&rec);
  if (rc == TEENY_E_CORRUPT)
    drop_entry(c->s, st, c->key);
  return rc == 0;
}

/* The artifact is still right when it cannot be stored: it is answered
 * with a warning, and kept out of the memory map so that the next request
 * tries to store it again. */
static void not_cached(teeny_compile_job *c, const char *why) {
  char msg[TEENY_STORE_ERR_LEN + 64];
  snprintf(msg, sizeof msg, "compiled but not cached: %s", why);
  const char *file = c->rs->req.u.compile.req.filename;
  teeny_diags_add(&c->diags, TEENY_DIAG_WARNING, file ? file : "<source>", 0,
                  0, NULL, msg);
  c->not_stored = true;
}

static void store_artifact(teeny_compile_job *c, teeny_store *st) {
  char err[TEENY_STORE_ERR_LEN];
  bool created = false;
  if (!c->check || !stored_intact(c, st)) {
    int rc = teeny_store_put(st, c->art, NULL, NULL, &created, err);
    if (rc) {
      TEENY_LOGW(c->s->log, "cannot store %s (%.16s...): %s", c->art->id,
                 c->key, err);
      char why[TEENY_STORE_ERR_LEN + 32];
      snprintf(why, sizeof why, "%s (%s)", teeny_strerror(rc), err);
      not_cached(c, why);
    }
  }
  teeny__uselog_apply(&c->touches, st);
  int rc = created && c->s->max_size
               ? teeny_store_evict_to(st, c->s->max_size, &c->evicted, err)
               : teeny_store_flush(st, err);
  if (rc)
    TEENY_LOGW(c->s->log, "store %s: %s", created ? "eviction" : "flush", err);
}

/* Compile lane: the compile, in a helper process. */
static void compile_work(teeny_job *j, teeny_store *st) {
  (void)st;
  teeny_compile_job *c = (teeny_compile_job *)j;
  uint64_t t0 = teeny__now_ns();
  c->rc = teeny__helpers_run(c->s->helpers, &c->rs->req.u.compile,
                             TEENY_EMIT_MLIR | TEENY_EMIT_PTX, c->key,
                             j->peers > 0, &c->art, &c->diags, &c->what);
  c->ms = (double)(teeny__now_ns() - t0) / 1e6;
}

/* Store lane: stored before anyone is answered (DESIGN.md §2). */
static void put_work(teeny_job *j, teeny_store *st) {
  teeny_compile_job *c =
      (teeny_compile_job *)((char *)j - offsetof(teeny_compile_job, put));
  store_artifact(c, st);
}

static void append_diags(teeny_diags *to, const teeny_diags *from) {
  for (size_t i = 0; i < from->n; i++) {
    const teeny_diag *g = &from->v[i];
    teeny_diags_add(to, g->level, g->file, g->line, g->col, g->source_line,
                    g->message);
  }
}

/* Answer every resolution waiting on c (rc: the outcome) and free c. */
static void compile_finish(teeny_compile_job *c, int rc, const char *msg) {
  teeny_sched *s = c->s;
  compile_unlink(s, c);
  s->stats->evictions += c->evicted.entries;
  if (c->evicted.entries)
    TEENY_LOGD(s->log, "size cap: evicted %llu entries (%llu bytes)",
               (unsigned long long)c->evicted.entries,
               (unsigned long long)c->evicted.bytes);
  bool lead = true; /* the first resolution started the compile */
  for (teeny_resolution *r = c->rs, *nx; r; r = nx, lead = false) {
    nx = r->cnext;
    append_diags(&r->diags, &c->diags);
    if (rc)
      finish_error(r, rc, msg);
    else if (c->remote_hit)
      finish_remote(r, c->art, !c->not_stored);
    else
      finish_compiled(r, c->art, lead, !c->not_stored);
  }
  if (s->remote && !rc && c->art && !c->remote_hit) { /* write-behind */
    teeny__remote_upload(s->remote, c->art, c->lease);
    c->art = NULL;
  } else if (s->remote) {
    teeny__remote_release(s->remote, c->lease);
  }
  c->lease = NULL;
  compile_free(c);
}

static void put_done(teeny_job *j, int status) {
  teeny_compile_job *c =
      (teeny_compile_job *)((char *)j - offsetof(teeny_compile_job, put));
  if (status == UV_ECANCELED) /* the stop: answer what was compiled */
    not_cached(c, "the daemon is stopping");
  else /* the store refused the put: also an error (stats.h) */
    c->s->stats->store_errors += c->not_stored;
  compile_finish(c, 0, NULL);
}

static void compile_done(teeny_job *j, int status) {
  teeny_compile_job *c = (teeny_compile_job *)j;
  teeny_sched *s = c->s;
  int rc = status == UV_ECANCELED ? TEENY_E_SHUTDOWN : c->rc;
  if (status != UV_ECANCELED) {
    s->stats->compiles++;
    s->stats->compile_ms_total += c->ms;
    teeny__stats_observe(s->stats, TEENY_HIST_COMPILE, c->ms / 1000);
    s->stats->compile_timeouts += c->what.timed_out;
    s->stats->compiler_deaths += c->what.died;
  }
  TEENY_LOGD(s->log, "compile of %.16s... %s in %.1f ms", c->key,
             rc ? teeny_err_name(rc) : "done", c->ms);
  if (rc) {
    compile_finish(c, rc,
                   status == UV_ECANCELED ? "daemon is shutting down" : NULL);
    return;
  }
  /* the uses so far go first, so that the eviction sees them */
  teeny__uselog_take(&s->touches, &c->touches);
  teeny__lanes_submit(s->lanes, &c->put, TEENY_LANE_STORE, c->rs->owner,
                      put_work, put_done);
}

static void submit_compile(teeny_compile_job *c) {
  teeny__lanes_submit(c->s->lanes, &c->job, TEENY_LANE_COMPILE, c->rs->owner,
                      compile_work, compile_done);
}

/* The remote tier's answer for c's key (loop thread). */
static void remote_done(void *ctx, teeny_remote_outcome what,
                        teeny_artifact *art, teeny_remote_lease *lease) {
  teeny_compile_job *c = ctx;
  teeny_sched *s = c->s;
  switch (what) {
  case TEENY_REMOTE_CANCELLED:
    compile_finish(c, TEENY_E_SHUTDOWN, "daemon is shutting down");
    return;
  case TEENY_REMOTE_HIT: /* into the local store, then answered */
    c->art = art;
    c->remote_hit = true;
    teeny__uselog_take(&s->touches, &c->touches);
    teeny__lanes_submit(s->lanes, &c->put, TEENY_LANE_STORE, c->rs->owner,
                        put_work, put_done);
    return;
  case TEENY_REMOTE_LEASED:
    c->lease = lease;
    submit_compile(c);
    return;
  case TEENY_REMOTE_COMPILE:
    submit_compile(c);
    return;
  }
}

/* Start a compile of r's key, or join the one running. */
static void compile_or_join(teeny_resolution *r) {
  teeny_sched *s = r->s;
  const char *key = r->key;
  teeny_compile_job *c = find_compile(s, key);
  if (c) {
    *c->rtail = r;
    c->rtail = &r->cnext;
    teeny__lanes_offer(s->lanes, &c->job, r->owner);
    return;
  }
  c = teeny__calloc(1, sizeof *c);
  if (!c) {
    finish_error(r, TEENY_E_NOMEM, NULL);
    return;
  }
  c->s = s;
  memcpy(c->key, key, TEENY_STORE_KEY_LEN);
  c->rs = r;
  c->rtail = &r->cnext;
  c->check = r->force || r->corrupt;
  teeny_diags_init(&c->diags);
  teeny__uselog_init(&c->touches);
  teeny_compile_job **b = &s->compiling[bucket_of(key_hash(c->key))];
  c->hnext = *b;
  *b = c;
  if (s->remote && !r->force)
    teeny__remote_lookup(s->remote, c->key, remote_done, c);
  else
    submit_compile(c);
}

/* ---- stage 3: spec and store ------------------------------------------------- */

static void resolve_work(teeny_job *j, teeny_store *st) {
  teeny_resolution *r = (teeny_resolution *)j;
  teeny_artifact *a = NULL;
  r->rc = teeny__helpers_run(r->s->helpers, &r->req.u.compile, 0, NULL,
                             false, &a, &r->diags, &r->what);
  if (!r->rc)
    memcpy(r->key, a->key, sizeof r->key);
  teeny_artifact_destroy(a);
  if (r->rc || r->force)
    return;
  char err[TEENY_STORE_ERR_LEN];
  const char *key = r->key;
  unsigned what = TEENY_STORE_GET_VERIFY |
                  teeny_store_get_for_emit(r->emit, TEENY_MSG_EMIT_SOURCE);
  int rc = teeny_store_get(st, key, what, &r->rec, err);
  if (!rc && r->req.u.compile.arch)
    teeny__sass_lookup(r->s->sass, st, key, r->rec.target, r->req.u.compile.arch,
                       &r->cubin, &r->want_cubin);
  if (!rc)
    r->disk = true;
  else if (rc == TEENY_E_CORRUPT)
    r->corrupt = true;
  if (rc && rc != TEENY_E_NOTFOUND)
    TEENY_LOGW(r->s->log, "store lookup of %.16s...: %s; compiling", key, err);
}

static void resolve_done(teeny_job *j, int status) {
  teeny_resolution *r = (teeny_resolution *)j;
  r->s->stats->compile_timeouts += r->what.timed_out;
  r->s->stats->compiler_deaths += r->what.died;
  if (status == UV_ECANCELED)
    finish_error(r, TEENY_E_SHUTDOWN, "daemon is shutting down");
  else if (r->rc)
    finish_error(r, r->rc, NULL);
  else if (r->disk)
    finish_disk(r);
  else
    compile_or_join(r);
}

/* ---- the entry point --------------------------------------------------------- */

static void reply_now(teeny_conn *c, uint64_t id, int rc, const char *msg) {
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = TEENY_OP_COMPILE;
  rep.id = id;
  rep.status = rc;
  rep.error = msg;
  teeny__conn_reply(c, &rep);
}

static bool memory_hit(teeny_sched *s, teeny_conn *c, uint64_t id,
                       const teeny_reqkey *k, uint64_t t0_ns) {
  teeny_mc_hit hit;
  if (!teeny__memcache_get(s->mc, k, &hit))
    return false;
  s->stats->memory_hits++;
  s->stats->saved_ms_total += hit.compile_ms;
  teeny__sched_touch(s, hit.key);
  teeny__conn_send_hit(c, &hit, id);
  observe_hit(s, t0_ns);
  return true;
}

/* What a waiting request holds of the memory budget: its decoded fields,
 * dominated by the source. */
static uint64_t request_cost(const teeny_msg_request *req, size_t rkey_len) {
  return (uint64_t)req->u.compile.req.source_len + rkey_len + 1024;
}

/* A new resolution for req, queued for stage 3. */
static void resolve(teeny_sched *s, teeny_conn *c, teeny_msg_request *req,
                    const teeny_reqkey *k) {
  uint64_t id = req->id;
  uint64_t cost = request_cost(req, k->len);
  if (!teeny__budget_take(s->budget, cost)) {
    char msg[160];
    teeny__budget_message(s->budget, "compile request", cost, msg, sizeof msg);
    reply_now(c, id, TEENY_E_BUSY, msg);
    return;
  }
  teeny_resolution *r = resolution_new(s, k, req, teeny__conn_owner(c));
  if (!r || add_waiter(r, c, id)) {
    teeny__budget_give(s->budget, cost);
    if (r)
      resolution_free(r);
    reply_now(c, id, TEENY_E_NOMEM, NULL);
    return;
  }
  r->cost = cost;
  if (!r->force)
    table_insert(s, r);
  teeny__lanes_submit(s->lanes, &r->job, TEENY_LANE_STORE, r->owner,
                      resolve_work, resolve_done);
}

void teeny__sched_compile(teeny_sched *s, teeny_conn *c,
                          teeny_msg_request *req) {
  teeny_reqkey k;
  uint64_t t0_ns = teeny__now_ns();
  bool force = (req->u.compile.flags & TEENY_MSG_FORCE) != 0;
  if (teeny__reqkey_build(&req->u.compile, &s->scratch, &k)) {
    reply_now(c, req->id, TEENY_E_NOMEM, NULL);
    goto done;
  }
  if (!force && memory_hit(s, c, req->id, &k, t0_ns))
    goto done;
  teeny_resolution *r = force ? NULL : find_resolution(s, &k);
  if (r) {
    if (add_waiter(r, c, req->id))
      reply_now(c, req->id, TEENY_E_NOMEM, NULL);
    else
      teeny__lanes_offer(s->lanes, &r->job, teeny__conn_owner(c));
    goto done;
  }
  resolve(s, c, req, &k);
done:
  teeny_msg_request_free(req); /* a no-op when resolve took it */
}

/* ---- touches and flushing ------------------------------------------------------ */

void teeny__sched_forget(teeny_sched *s, const char *key) {
  teeny__memcache_forget(s->mc, key);
}

void teeny__sched_touch(teeny_sched *s, const char *key) {
  teeny__uselog_add(&s->touches, key);
}

static void flush_work(teeny_job *j, teeny_store *st) {
  flush_job *f = (flush_job *)j;
  char err[TEENY_STORE_ERR_LEN];
  teeny__uselog_apply(&f->touches, st);
  if (teeny_store_flush(st, err))
    TEENY_LOGW(f->s->log, "writing last-used times: %s", err);
}

static void flush_done(teeny_job *j, int status) {
  (void)status; /* cancelled at the stop: destroy writes the rest */
  flush_job *f = (flush_job *)j;
  f->s->flushing = false;
  teeny__uselog_free(&f->touches);
  teeny__free(f);
}

static void on_flush_timer(uv_timer_t *t) {
  teeny_sched *s = t->data;
  if (s->flushing || !s->touches.n)
    return;
  flush_job *f = teeny__calloc(1, sizeof *f);
  if (!f)
    return;
  f->s = s;
  teeny__uselog_take(&s->touches, &f->touches);
  s->flushing = true;
  teeny__lanes_submit(s->lanes, &f->job, TEENY_LANE_STORE,
                      (teeny_job_owner){TEENY_OWNER_DAEMON, 0}, flush_work,
                      flush_done);
}

/* ---- lifetime ------------------------------------------------------------------ */

int teeny__sched_create(const teeny_sched_opts *o, teeny_sched **out,
                        char *err) {
  *out = NULL;
  teeny_sched *s = teeny__calloc(1, sizeof *s);
  if (!s)
    return TEENY_E_NOMEM;
  s->loop = o->loop;
  s->log = o->log;
  s->stats = o->stats;
  s->max_size = o->max_size;
  s->budget = o->budget;
  teeny__uselog_init(&s->touches);
  unsigned workers = o->workers ? o->workers : 1;
  teeny_lanes_opts lo = {o->loop, o->store,
                         {workers + 2, o->store_workers, o->admin_workers},
                         teeny__heal_start, s};
  int rc = teeny__lanes_create(&lo, &s->lanes, err);
  if (rc)
    goto fail;
  rc = TEENY_E_NOMEM;
  s->mc = teeny__memcache_create((size_t)o->memcache_size);
  /* a helper for every thread that runs one: compile and store lanes */
  unsigned nhelpers = lo.threads[TEENY_LANE_COMPILE] + lo.threads[TEENY_LANE_STORE];
  if (!s->mc || teeny__helpers_create(&o->helper, nhelpers, &s->helpers))
    goto fail;
  if (o->remote && (rc = teeny__remote_create(o->remote, &s->remote, err)))
    goto fail;
  uv_timer_init(o->loop, &s->flush_timer);
  s->flush_timer.data = s;
  uv_timer_start(&s->flush_timer, on_flush_timer, o->flush_ms, o->flush_ms);
  *out = s;
  return 0;
fail:
  teeny__memcache_destroy(s->mc);
  teeny__helpers_destroy(s->helpers);
  if (s->lanes) {
    teeny__lanes_close(s->lanes);
    uv_run(o->loop, UV_RUN_NOWAIT); /* let its handle close */
  }
  teeny__lanes_destroy(s->lanes);
  teeny__free(s);
  return rc;
}

unsigned teeny__sched_busy(const teeny_sched *s) {
  return teeny__lanes_outstanding(s->lanes) +
         (s->remote ? teeny__remote_pending(s->remote) : 0);
}

void teeny__sched_cancel(teeny_sched *s) {
  teeny__lanes_cancel(s->lanes);
  teeny__helpers_abort(s->helpers);
  if (s->remote)
    teeny__remote_cancel(s->remote);
}

void teeny__sched_close(teeny_sched *s) {
  if (s->closed)
    return;
  s->closed = true;
  uv_timer_stop(&s->flush_timer);
  uv_close((uv_handle_t *)&s->flush_timer, NULL);
  teeny__lanes_close(s->lanes);
  teeny__remote_close(s->remote);
}

void teeny__sched_destroy(teeny_sched *s) {
  if (!s)
    return;
  if (s->touches.n) { /* no job runs any more: the handle is free */
    teeny_store *st = teeny__lanes_idle_store(s->lanes);
    char err[TEENY_STORE_ERR_LEN];
    teeny__uselog_apply(&s->touches, st);
    if (teeny_store_flush(st, err))
      TEENY_LOGW(s->log, "writing last-used times: %s", err);
  }
  teeny__uselog_free(&s->touches);
  teeny__remote_destroy(s->remote); /* its uploads, then its thread */
  teeny__lanes_destroy(s->lanes);
  teeny__helpers_destroy(s->helpers);
  teeny__memcache_destroy(s->mc);
  teeny__buf_free(&s->scratch);
  teeny__buf_free(&s->frame);
  teeny__free(s);
}
