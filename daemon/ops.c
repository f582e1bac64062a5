/*
 * daemon/ops.c — stats (store lane), list, show, purge and verify (admin
 * lane) (see ops.h).  One job per request: the worker queries the store, builds
 * the reply and encodes it; the loop sends the frame.  Keys an admin
 * removed (purge, repair) are collected on the worker and forgotten by the
 * in-memory map on the loop (all of it past FORGET_MAX keys).  Load:
 * administrative (teenyctl), a few requests a minute.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/ops.h"
#include "daemon/server.h"

#define FORGET_MAX 65536 /* more removed keys: empty the map instead */
#define LIST_PAGE 10000  /* entries per list reply at most (~3 MB) */

typedef struct op_job {
  teeny_job job;          /* must be first */
  teeny_sched *s;         /* owner */
  teeny_conn *c;          /* held until the reply is queued */
  teeny_msg_request req;  /* the request (moved in; stats: only id) */
  teeny_stats_snap snap;  /* stats: the loop's counters */
  teeny_buf frame;        /* the encoded reply */
  int status;             /* its status */
  bool clear_memcache;    /* too many entries went away to name them */
  char (*gone)[TEENY_STORE_KEY_LEN + 1]; /* keys removed */
  size_t ngone, capgone;  /* how many, allocated */
} op_job;

/* A key the store no longer has (worker side). */
static void note_gone(void *ctx, const char *key) {
  op_job *o = ctx;
  if (o->clear_memcache)
    return;
  if (o->ngone == o->capgone) {
    size_t cap = o->capgone ? 2 * o->capgone : 64;
    void *nv = cap <= FORGET_MAX ? teeny__realloc(o->gone, cap * sizeof *o->gone)
                                 : NULL;
    if (!nv) {
      o->clear_memcache = true;
      return;
    }
    o->gone = nv;
    o->capgone = cap;
  }
  snprintf(o->gone[o->ngone++], sizeof o->gone[0], "%s", key);
}

/* ---- encoding -------------------------------------------------------------- */

static void encode_error(op_job *o, int status, const char *msg) {
  o->frame.len = 0;
  o->frame.oom = false;
  size_t b = teeny_frame_begin(&o->frame);
  teeny_msg_error_encode(&o->frame, o->req.id, status, msg);
  teeny_frame_end(&o->frame, b, 0);
  o->status = status;
}

static void encode(op_job *o, teeny_msg_reply *rep) {
  rep->op = o->req.op;
  rep->id = o->req.id;
  o->frame.len = 0;
  size_t b = teeny_frame_begin(&o->frame);
  int rc = teeny_msg_reply_encode(rep, &o->frame);
  if (!rc)
    rc = teeny_frame_end(&o->frame, b, 0);
  if (rc)
    encode_error(o, rc == TEENY_E_TOOBIG ? TEENY_E_TOOBIG : TEENY_E_INTERNAL,
                 rc == TEENY_E_TOOBIG ? "reply over the frame limit"
                                      : "reply could not be encoded");
  else
    o->status = rep->status;
}

static void encode_store_error(op_job *o, int rc, const char *err) {
  encode_error(o, rc, err && *err ? err : NULL);
}

static void entry_from_rec(teeny_msg_entry *e, const teeny_store_rec *r) {
  memset(e, 0, sizeof *e);
  memcpy(e->key, r->key, sizeof e->key);
  e->name = r->name;
  e->id = r->id;
  e->target = r->target;
  e->num_warps = r->num_warps;
  e->size = r->ptx_size + r->mlir_size + r->src_size;
  e->created = r->created;
  e->last_used = r->last_used;
  e->hits = r->hits > 0 ? (uint64_t)r->hits : 0;
  e->compile_ms = r->compile_ms;
  e->cubins = r->ncubins;
  e->cubin_bytes = r->cubin_bytes;
}

/* ---- the ops (worker thread) ---------------------------------------------------- */

static void do_stats(op_job *o, teeny_store *st) {
  teeny_store_stats ss;
  char err[TEENY_STORE_ERR_LEN];
  int rc = teeny_store_stats_get(st, &ss, err);
  if (rc) {
    encode_store_error(o, rc, err);
    return;
  }
  teeny_msg_reply rep;
  teeny_msg_counter extra[TEENY_STATS_NEXTRA];
  teeny_stats_hists hists;
  memset(&rep, 0, sizeof rep);
  teeny__stats_reply(&o->snap, &ss, &rep.u.stats, extra, &hists);
  encode(o, &rep);
}

static teeny_store_sort store_sort(teeny_msg_sort s) {
  switch (s) {
  case TEENY_SORT_SIZE: return TEENY_STORE_SORT_SIZE;
  case TEENY_SORT_HITS: return TEENY_STORE_SORT_HITS;
  default: return TEENY_STORE_SORT_USED;
  }
}

static void do_list(op_job *o, teeny_store *st) {
  const teeny_msg_list *l = &o->req.u.list;
  size_t page = l->limit && l->limit < LIST_PAGE ? l->limit : LIST_PAGE;
  teeny_store_query q = {l->name, page, store_sort(l->sort), l->after};
  teeny_store_rec *recs = NULL;
  size_t n = 0;
  char err[TEENY_STORE_ERR_LEN], next[TEENY_STORE_CURSOR_LEN];
  int rc = teeny_store_list_page(st, &q, &recs, &n, next, err);
  if (rc) {
    encode_store_error(o, rc == TEENY_E_INVAL ? TEENY_E_PROTO : rc, err);
    return;
  }
  teeny_msg_entry *es = n ? teeny__calloc(n, sizeof *es) : NULL;
  if (n && !es) {
    encode_error(o, TEENY_E_NOMEM, NULL);
    goto done;
  }
  for (size_t i = 0; i < n; i++)
    entry_from_rec(&es[i], &recs[i]);
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.u.list.entries = es;
  rep.u.list.nentries = n;
  rep.u.list.next = next[0] ? next : NULL;
  encode(o, &rep);
done:
  teeny__free(es);
  teeny_store_recs_free(recs, n);
}

static void ambiguous(op_job *o, const teeny_store_keys *k, const char *err) {
  const char *cands[TEENY_STORE_MAX_CANDIDATES];
  size_t n = k->n < TEENY_STORE_MAX_CANDIDATES ? k->n
                                               : TEENY_STORE_MAX_CANDIDATES;
  for (size_t i = 0; i < n; i++)
    cands[i] = k->v[i];
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.status = TEENY_E_AMBIGUOUS;
  rep.error = err;
  rep.candidates = cands;
  rep.ncandidates = n;
  encode(o, &rep);
}

/* The entry's cubins for show (and the one asked for, read and checked);
 * *v and *one are the caller's to free. */
static int show_cubins(op_job *o, teeny_store *st, const char *key,
                       teeny_msg_reply *rep, teeny_store_cubin **v, size_t *n,
                       teeny_store_cubin *one, char *err) {
  memset(one, 0, sizeof *one);
  int rc = teeny_store_cubin_list(st, key, v, n, err);
  if (rc)
    return rc;
  teeny_msg_cubin *mc = *n ? teeny__calloc(*n, sizeof *mc) : NULL;
  if (*n && !mc)
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < *n; i++)
    mc[i] = (teeny_msg_cubin){(*v)[i].arch, (*v)[i].toolchain, (*v)[i].size,
                              (*v)[i].created, (*v)[i].sass_ms};
  rep->u.show.cubins = mc;
  rep->u.show.ncubins = *n;
  const char *arch = o->req.u.show.cubin_arch;
  if (arch && (rc = teeny_store_cubin_get(st, key, arch, true, one, err)))
    return rc;
  rep->u.show.cubin = one->data;
  rep->u.show.cubin_len = one->data ? one->size : 0;
  return 0;
}

static void show_reply(op_job *o, teeny_store *st, const teeny_store_rec *rec) {
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  teeny_store_cubin *cv = NULL, one;
  size_t ncv = 0;
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = show_cubins(o, st, rec->key, &rep, &cv, &ncv, &one, err);
  if (rc) {
    encode_store_error(o, rc, err);
    goto done;
  }
  entry_from_rec(&rep.u.show.entry, rec);
  if (rec->ptx)
    rep.u.show.ptx = rec->ptx, rep.u.show.ptx_len = rec->ptx_size;
  if (rec->mlir)
    rep.u.show.mlir = rec->mlir, rep.u.show.mlir_len = rec->mlir_size;
  if (rec->src)
    rep.u.show.source = rec->src, rep.u.show.source_len = rec->src_size;
  encode(o, &rep);
done:
  teeny__free(rep.u.show.cubins);
  teeny_store_cubins_free(cv, ncv);
  teeny_store_cubin_close(&one);
}

static void do_show(op_job *o, teeny_store *st) {
  teeny_store_rec rec, full;
  teeny_store_keys cands;
  memset(&rec, 0, sizeof rec);
  memset(&full, 0, sizeof full);
  memset(&cands, 0, sizeof cands);
  char err[TEENY_STORE_ERR_LEN];
  int rc = teeny_store_show(st, o->req.u.show.key, &rec, &cands, err);
  unsigned what =
      teeny_store_get_for_emit(o->req.u.show.emit, TEENY_MSG_EMIT_SOURCE);
  if (rc == TEENY_E_AMBIGUOUS)
    ambiguous(o, &cands, err);
  else if (rc)
    encode_store_error(o, rc, err);
  else if (what &&
           (rc = teeny_store_get(st, rec.key, what | TEENY_STORE_GET_VERIFY,
                                 &full, err)))
    encode_store_error(o, rc, err);
  else
    show_reply(o, st, what ? &full : &rec);
  teeny_store_rec_close(&rec);
  teeny_store_rec_close(&full);
  teeny_store_keys_close(&cands);
}

static void do_purge(op_job *o, teeny_store *st) {
  const teeny_msg_purge *p = &o->req.u.purge;
  teeny_store_purge_req pr = {0};
  pr.all = p->all;
  pr.name_glob = p->name;
  if (p->has_older_than) /* "unused for more than 0 s" still filters */
    pr.older_than_s = p->older_than_s > INT64_MAX ? INT64_MAX
                      : p->older_than_s ? (int64_t)p->older_than_s
                                        : 1;
  pr.to_size = p->has_to_size;
  pr.max_bytes = p->to_size;
  pr.on_removed = note_gone;
  pr.removed_ctx = o;
  teeny_store_counts removed = {0, 0, 0};
  char err[TEENY_STORE_ERR_LEN];
  int rc = teeny_store_purge(st, &pr, &removed, err);
  o->clear_memcache |= p->all && removed.entries > 0;
  if (!rc && removed.left) { /* never report files as freed that are not */
    char msg[TEENY_STORE_ERR_LEN + 160];
    snprintf(msg, sizeof msg,
             "removed %llu entries (%llu bytes), but %llu could not be removed: %s",
             (unsigned long long)removed.entries, (unsigned long long)removed.bytes,
             (unsigned long long)removed.left, err);
    encode_store_error(o, TEENY_E_STORE, msg);
    return;
  }
  if (rc) {
    encode_store_error(o, rc, err);
    return;
  }
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.u.purge.removed = removed.entries;
  rep.u.purge.bytes = removed.bytes;
  encode(o, &rep);
}

static void verify_reply(op_job *o, uint64_t checked,
                         const teeny_store_problems *probs) {
  teeny_msg_problem *mp =
      probs->n ? teeny__calloc(probs->n, sizeof *mp) : NULL;
  char **texts = probs->n ? teeny__calloc(probs->n, sizeof *texts) : NULL;
  uint64_t repaired = 0;
  if (probs->n && (!mp || !texts)) {
    encode_error(o, TEENY_E_NOMEM, NULL);
    goto done;
  }
  for (size_t i = 0; i < probs->n; i++) {
    const teeny_store_problem *p = &probs->v[i];
    teeny_buf b;
    teeny__buf_init(&b);
    teeny__buf_printf(&b, "%s: %s", teeny_store_problem_name(p->kind),
                      p->detail ? p->detail : "");
    texts[i] = teeny__buf_take(&b, NULL);
    mp[i].key = p->key[0] ? p->key : (p->path ? p->path : "?");
    mp[i].problem = texts[i] ? texts[i] : "?";
    repaired += p->repaired;
    if (p->repaired && p->key[0])
      note_gone(o, p->key);
  }
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.u.verify.checked = checked;
  rep.u.verify.problems = mp;
  rep.u.verify.nproblems = probs->n;
  rep.u.verify.repaired = repaired;
  encode(o, &rep);
done:
  for (size_t i = 0; texts && i < probs->n; i++)
    teeny__free(texts[i]);
  teeny__free(texts);
  teeny__free(mp);
}

static void do_verify(op_job *o, teeny_store *st) {
  teeny_store_stats ss = {0};
  teeny_store_problems probs;
  teeny_store_problems_init(&probs);
  teeny_store_verify_opts vo = {.repair = o->req.u.verify.repair};
  char err[TEENY_STORE_ERR_LEN];
  int rc = teeny_store_stats_get(st, &ss, err);
  if (!rc)
    rc = teeny_store_verify(st, &vo, &probs, err);
  if (rc)
    encode_store_error(o, rc, err);
  else
    verify_reply(o, ss.entries, &probs);
  teeny_store_problems_close(&probs);
}

static void op_work(teeny_job *j, teeny_store *st) {
  op_job *o = (op_job *)j;
  switch (o->req.op) {
  case TEENY_OP_STATS: do_stats(o, st); break;
  case TEENY_OP_LIST: do_list(o, st); break;
  case TEENY_OP_SHOW: do_show(o, st); break;
  case TEENY_OP_PURGE: do_purge(o, st); break;
  case TEENY_OP_VERIFY: do_verify(o, st); break;
  default: encode_error(o, TEENY_E_INTERNAL, "not a store op"); break;
  }
}

/* ---- the loop side ------------------------------------------------------------- */

static void op_free(op_job *o) {
  teeny_msg_request_free(&o->req);
  teeny__buf_free(&o->frame);
  teeny__free(o->gone);
  teeny__free(o);
}

static void op_done(teeny_job *j, int status) {
  op_job *o = (op_job *)j;
  if (o->clear_memcache)
    teeny__memcache_clear(o->s->mc);
  else
    for (size_t i = 0; i < o->ngone; i++)
      teeny__sched_forget(o->s, o->gone[i]);
  if (status == UV_ECANCELED)
    encode_error(o, TEENY_E_SHUTDOWN, "daemon is shutting down");
  if (o->frame.oom || !o->frame.len)
    encode_error(o, TEENY_E_NOMEM, NULL);
  teeny__conn_send(o->c, o->req.id, o->frame.p, o->frame.len, o->status);
  teeny__conn_release(o->c);
  op_free(o);
}

/* stats is one indexed read of three counters: the store lane's, like a
 * disk hit; the scans (list, show, purge, verify) go to the admin lane. */
static void submit(teeny_sched *s, teeny_conn *c, op_job *o) {
  o->s = s;
  o->c = c;
  teeny__conn_hold(c);
  teeny_lane lane =
      o->req.op == TEENY_OP_STATS ? TEENY_LANE_STORE : TEENY_LANE_ADMIN;
  teeny__lanes_submit(s->lanes, &o->job, lane, teeny__conn_owner(c), op_work,
                      op_done);
}

static void reply_nomem(teeny_conn *c, teeny_proto_op op, uint64_t id) {
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = op;
  rep.id = id;
  rep.status = TEENY_E_NOMEM;
  teeny__conn_reply(c, &rep);
}

void teeny__ops_stats(teeny_sched *s, teeny_conn *c, uint64_t id,
                      const teeny_stats_snap *snap) {
  op_job *o = teeny__calloc(1, sizeof *o);
  if (!o) {
    reply_nomem(c, TEENY_OP_STATS, id);
    return;
  }
  o->req.op = TEENY_OP_STATS;
  o->req.id = id;
  o->snap = *snap;
  submit(s, c, o);
}

void teeny__ops_store(teeny_sched *s, teeny_conn *c, teeny_msg_request *req) {
  op_job *o = teeny__calloc(1, sizeof *o);
  if (!o) {
    reply_nomem(c, req->op, req->id);
    teeny_msg_request_free(req);
    return;
  }
  o->req = *req;
  memset(req, 0, sizeof *req);
  submit(s, c, o);
}
