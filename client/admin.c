/*
 * client/admin.c — teeny_client_admin: ping, stats, list, show (with its
 * cubins), purge, verify, shutdown, and the tuning records' tuned and
 * tuned_purge, and config, through teenycd (PROTOCOL.md §4.2, §4.4-§4.9,
 * §4.12-§4.14).
 *
 * The reply handed out keeps the decoded protocol reply alive and points
 * into it; only the arrays whose public element type differs from the
 * protocol's (counters, entries, problems) are built here.  Admin calls
 * are rare and small: clarity over speed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client/client_int.h"

typedef struct admin_reply {
  teeny_admin_reply pub;   /* must stay first */
  teeny_msg_reply reply;   /* owns the strings pub points at */
} admin_reply;

void teeny_admin_reply_free(teeny_admin_reply *r) {
  if (!r)
    return;
  admin_reply *a = (admin_reply *)r;
  teeny__free(r->counters);
  teeny__free(r->entries);
  teeny__free(r->problems);
  teeny__free(r->cubins);
  teeny__free(r->tuned);
  teeny__free(r->histograms);
  teeny__free(r->settings);
  teeny_msg_reply_free(&a->reply);
  teeny__free(a);
}

double teeny_admin_counter(const teeny_admin_reply *r, const char *name) {
  for (size_t i = 0; r && i < r->ncounters; i++)
    if (strcmp(r->counters[i].name, name) == 0)
      return r->counters[i].value;
  return NAN;
}

/* ---- requests --------------------------------------------------------------- */

static const teeny_proto_op op_of[] = {
    [TEENY_ADMIN_PING] = TEENY_OP_PING,     [TEENY_ADMIN_STATS] = TEENY_OP_STATS,
    [TEENY_ADMIN_LIST] = TEENY_OP_LIST,     [TEENY_ADMIN_SHOW] = TEENY_OP_SHOW,
    [TEENY_ADMIN_PURGE] = TEENY_OP_PURGE,   [TEENY_ADMIN_VERIFY] = TEENY_OP_VERIFY,
    [TEENY_ADMIN_SHUTDOWN] = TEENY_OP_SHUTDOWN, [TEENY_ADMIN_TUNED] = TEENY_OP_TUNED,
    [TEENY_ADMIN_TUNED_PURGE] = TEENY_OP_TUNED_PURGE, [TEENY_ADMIN_CONFIG] = TEENY_OP_CONFIG};

static void to_msg(const teeny_admin_req *a, teeny_msg_request *m) {
  memset(m, 0, sizeof *m);
  m->op = op_of[a->op];
  switch (a->op) {
  case TEENY_ADMIN_STATS:
    m->u.stats.zero = a->zero;
    break;
  case TEENY_ADMIN_LIST:
    m->u.list.name = a->name;
    m->u.list.limit = a->limit;
    m->u.list.sort = (teeny_msg_sort)a->sort;
    m->u.list.after = a->after;
    break;
  case TEENY_ADMIN_SHOW:
    m->u.show.key = a->key;
    m->u.show.emit = a->emit & (TEENY_EMIT_PTX | TEENY_EMIT_MLIR | TEENY_EMIT_SOURCE);
    break;
  case TEENY_ADMIN_PURGE:
    m->u.purge.all = a->all;
    m->u.purge.name = a->name;
    m->u.purge.has_older_than = a->older_than_s > 0;
    m->u.purge.older_than_s = a->older_than_s > 0 ? (uint64_t)a->older_than_s : 0;
    m->u.purge.has_to_size = a->has_to_size;
    m->u.purge.to_size = a->to_size > 0 ? (uint64_t)a->to_size : 0;
    break;
  case TEENY_ADMIN_VERIFY:
    m->u.verify.repair = a->repair;
    break;
  case TEENY_ADMIN_TUNED:
    m->u.tuned.name = a->name;
    break;
  case TEENY_ADMIN_TUNED_PURGE:
    m->u.tuned_purge.all = a->all;
    m->u.tuned_purge.name = a->all ? NULL : a->name;
    break;
  default:
    break;
  }
}

/* ---- replies ------------------------------------------------------------------- */

static int stats_counters(teeny_admin_reply *p, const teeny_msg_stats_reply *s) {
  const teeny_counter fixed[] = {
      {"requests", (double)s->requests},       {"hits", (double)s->hits},
      {"memory_hits", (double)s->memory_hits}, {"disk_hits", (double)s->disk_hits},
      {"misses", (double)s->misses},           {"compiles", (double)s->compiles},
      {"joins", (double)s->joins},             {"errors", (double)s->errors},
      {"entries", (double)s->entries},         {"bytes", (double)s->bytes},
      {"evictions", (double)s->evictions},     {"compile_ms_total", s->compile_ms_total},
      {"saved_ms_total", s->saved_ms_total},   {"uptime_s", (double)s->uptime_s}};
  size_t nf = TEENY_ARRAY_LEN(fixed);
  p->counters = teeny__calloc(nf + s->nextra, sizeof *p->counters);
  if (!p->counters)
    return TEENY_E_NOMEM;
  memcpy(p->counters, fixed, sizeof fixed);
  for (size_t i = 0; i < s->nextra; i++)
    p->counters[nf + i] = (teeny_counter){s->extra[i].name, s->extra[i].value};
  p->ncounters = nf + s->nextra;
  p->store = s->store;
  if (s->nhists && !(p->histograms = teeny__calloc(s->nhists, sizeof *p->histograms)))
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < s->nhists; i++) {
    const teeny_msg_hist *h = &s->hists[i];
    p->histograms[i] = (teeny_histogram){h->name, h->le, h->counts, h->nle, h->sum, h->count};
  }
  p->nhistograms = s->nhists;
  return 0;
}

static int settings_of(teeny_admin_reply *p, const teeny_msg_config_reply *c) {
  if (c->nsettings && !(p->settings = teeny__calloc(c->nsettings, sizeof *p->settings)))
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < c->nsettings; i++)
    p->settings[i] = (teeny_setting){c->settings[i].key, c->settings[i].value};
  p->nsettings = c->nsettings;
  return 0;
}

static void entry_of(teeny_cache_entry *d, const teeny_msg_entry *e) {
  memcpy(d->key, e->key, sizeof d->key);
  d->name = e->name;
  d->id = e->id;
  d->target = e->target;
  d->num_warps = e->num_warps;
  d->size = e->size;
  d->created = e->created;
  d->last_used = e->last_used;
  d->hits = e->hits;
  d->compile_ms = e->compile_ms;
  d->cubins = e->cubins;
  d->cubin_bytes = e->cubin_bytes;
}

static int entries_of(teeny_admin_reply *p, const teeny_msg_entry *v, size_t n) {
  if (n == 0)
    return 0;
  p->entries = teeny__calloc(n, sizeof *p->entries);
  if (!p->entries)
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < n; i++)
    entry_of(&p->entries[i], &v[i]);
  p->nentries = n;
  return 0;
}

static int show_of(teeny_admin_reply *p, const teeny_msg_show_reply *s) {
  p->source = s->source;
  p->source_len = s->source_len;
  p->mlir = s->mlir;
  p->mlir_len = s->mlir_len;
  p->ptx = s->ptx;
  p->ptx_len = s->ptx_len;
  p->cubin = s->cubin;
  p->cubin_len = s->cubin_len;
  if (s->ncubins && !(p->cubins = teeny__calloc(s->ncubins, sizeof *p->cubins)))
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < s->ncubins; i++)
    p->cubins[i] = (teeny_cache_cubin){s->cubins[i].arch, s->cubins[i].toolchain,
                                       s->cubins[i].size, s->cubins[i].created,
                                       s->cubins[i].sass_ms};
  p->ncubins = s->ncubins;
  return entries_of(p, &s->entry, 1);
}

static int tuned_of(teeny_admin_reply *p, const teeny_msg_tuned_reply *t) {
  if (t->nrecords && !(p->tuned = teeny__calloc(t->nrecords, sizeof *p->tuned)))
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < t->nrecords; i++) {
    const teeny_msg_tuned_rec *r = &t->records[i];
    teeny_tuned_record *d = &p->tuned[i];
    d->kernel = r->key.kernel;
    memcpy(d->digest, r->key.digest, sizeof d->digest);
    d->problem = r->key.problem;
    d->gpu = r->key.gpu;
    d->driver = r->key.driver;
    d->consts = r->config.consts;
    d->nconsts = r->config.nconsts;
    d->num_warps = r->config.num_warps;
    d->best_ms = r->best_ms;
    d->candidates = r->candidates;
    d->created = r->created;
  }
  p->ntuned = t->nrecords;
  return 0;
}

static int verify_of(teeny_admin_reply *p, const teeny_msg_verify_reply *v) {
  p->checked = v->checked;
  p->repaired = v->repaired;
  if (v->nproblems == 0)
    return 0;
  p->problems = teeny__calloc(v->nproblems, sizeof *p->problems);
  if (!p->problems)
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < v->nproblems; i++)
    p->problems[i] = (teeny_cache_problem){v->problems[i].key, v->problems[i].problem};
  p->nproblems = v->nproblems;
  return 0;
}

static int body_of(admin_reply *a) {
  teeny_admin_reply *p = &a->pub;
  const teeny_msg_reply *r = &a->reply;
  p->status = r->status;
  p->error = r->status ? (r->error ? r->error : teeny_strerror(r->status)) : NULL;
  p->candidates = r->candidates;
  p->ncandidates = r->ncandidates;
  if (r->status)
    return 0;
  switch (r->op) {
  case TEENY_OP_STATS:
    return stats_counters(p, &r->u.stats);
  case TEENY_OP_LIST:
    p->next = r->u.list.next;
    return entries_of(p, r->u.list.entries, r->u.list.nentries);
  case TEENY_OP_SHOW:
    return show_of(p, &r->u.show);
  case TEENY_OP_PURGE:
    p->removed = r->u.purge.removed;
    p->bytes = r->u.purge.bytes;
    return 0;
  case TEENY_OP_VERIFY:
    return verify_of(p, &r->u.verify);
  case TEENY_OP_TUNED:
    return tuned_of(p, &r->u.tuned);
  case TEENY_OP_TUNED_PURGE:
    p->removed = r->u.tuned_purge.removed;
    return 0;
  case TEENY_OP_CONFIG:
    return settings_of(p, &r->u.config);
  default:
    return 0;
  }
}

static int check_admin(teeny_client *c, const teeny_admin_req *req) {
  if (c->active == TEENY_MODE_DEFAULT)
    return TEENY_E_INVAL;
  teeny__client_maybe_return(c);
  if (!req || (unsigned)req->op > TEENY_ADMIN_CONFIG ||
      (req->op == TEENY_ADMIN_TUNED_PURGE && !req->all && !req->name))
    return teeny__seterr(c->err, sizeof c->err, TEENY_E_INVAL, "invalid admin request");
  if (c->active != TEENY_MODE_DAEMON)
    return teeny__seterr(c->err, sizeof c->err, TEENY_E_UNSUPPORTED,
                         "'%s' needs teenycd; this client is in %s mode",
                         teeny_proto_op_name(op_of[req->op]),
                         teeny_client_mode_name(c->active));
  return 0;
}

/* One admin request; show's cubin_arch when given. */
static int admin_call(teeny_client *c, const teeny_admin_req *req, const char *cubin_arch,
                      teeny_admin_reply **out) {
  *out = NULL;
  if (!c)
    return TEENY_E_NOMEM;
  pthread_mutex_lock(&c->lock);
  admin_reply *a = NULL;
  int rc = check_admin(c, req);
  if (!rc && !(a = teeny__calloc(1, sizeof *a)))
    rc = teeny__seterr(c->err, sizeof c->err, TEENY_E_NOMEM, "out of memory");
  if (rc)
    goto done;
  teeny_msg_request m;
  to_msg(req, &m);
  if (req->op == TEENY_ADMIN_SHOW)
    m.u.show.cubin_arch = cubin_arch;
  teeny_msg_reply *rp = &a->reply;
  bool answered = false;
  rc = teeny__client_exchange(c, &m, &rp, &answered, 1,
                              req->op != TEENY_ADMIN_SHUTDOWN);
  if (!rc)
    rc = body_of(a);
  if (rc) {
    teeny_admin_reply_free(&a->pub);
    goto done;
  }
  *out = &a->pub;
  rc = a->pub.status;
  if (rc)
    snprintf(c->err, sizeof c->err, "%s: %s", teeny_proto_op_name(m.op), a->pub.error);
done:
  pthread_mutex_unlock(&c->lock);
  return rc;
}

int teeny_client_admin(teeny_client *c, const teeny_admin_req *req,
                       teeny_admin_reply **out) {
  return admin_call(c, req, NULL, out);
}

int teeny_client_show_cubin(teeny_client *c, const char *key, const char *arch,
                            teeny_admin_reply **out) {
  teeny_admin_req req = {.op = TEENY_ADMIN_SHOW, .key = key};
  return admin_call(c, &req, arch, out);
}
