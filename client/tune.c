/*
 * client/tune.c — teeny_client_tune: autotuning shared by every process of
 * the node through teenycd (PROTOCOL.md §4.10-§4.11).
 *
 *   1. the key: the kernel's digest (name, source, dtype bindings, target),
 *      the caller's problem key, the GPU's name and the driver's version;
 *   2. "tune" to teenycd: a record comes back (done: nothing timed), or
 *      the right to tune (this process is the one tuner of the key), or,
 *      when another process is tuning it, its winner once it records it;
 *   3. as the tuner: compile every configuration through the client
 *      (cached like any compile), time each with the request's timer (by
 *      default teeny_tune_time_cuda, cuda_bench.c), and tell teenycd the
 *      winner with "tune_done" (or that there is none: "abandon", and the
 *      next waiting process tunes).
 * Without a daemon (or with one that predates tuning) the same timing runs
 * here and nothing is recorded.  The client's lock is held for each round
 * trip, the wait on another process's tuning included, and not while
 * timing.  The result owns copies of everything it points to.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"

#define TUNE_TEXT 256 /* gpu and driver names */

typedef struct tune_result {
  teeny_tune_result pub;         /* must stay first */
  teeny_const_binding *consts;   /* the winner's consts (names owned) */
  double *times;                 /* per configuration, when timed here */
  char error[TEENY__ERR_LEN];    /* pub.error */
} tune_result;

/* One tuning run's key and what teenycd said. */
typedef struct tune_ctx {
  teeny_client *c;
  const teeny_tune_req *req;
  teeny_compile_req base;        /* the base request as compiled (target) */
  teeny_msg_tune_key key;        /* for tune and tune_done */
  char gpu[TUNE_TEXT], driver[TUNE_TEXT];
  tune_result *out;
} tune_ctx;

const char *teeny_tune_source_name(teeny_tune_source s) {
  static const char *const names[] = {"tuned", "recorded", "joined", "local"};
  return (unsigned)s < TEENY_ARRAY_LEN(names) ? names[s] : "unknown";
}

void teeny_tune_result_free(teeny_tune_result *r) {
  if (!r)
    return;
  tune_result *t = (tune_result *)r;
  for (size_t i = 0; t->consts && i < r->config.nconsts; i++)
    teeny__free((char *)t->consts[i].name);
  teeny__free(t->consts);
  teeny__free(t->times);
  teeny__free(t);
}

static int result_fail(tune_result *t, int rc, const char *fmt, const char *arg) {
  snprintf(t->error, sizeof t->error, fmt, arg);
  t->pub.status = rc;
  t->pub.error = t->error;
  return rc;
}

/* ---- the digest -------------------------------------------------------------------- */

static int by_name(const void *a, const void *b) {
  return strcmp(((const teeny_dtype_binding *)a)->name,
                ((const teeny_dtype_binding *)b)->name);
}

int teeny_tune_digest(const teeny_compile_req *base, char out[65]) {
  if (!base || !base->kernel || (!base->source && base->source_len) ||
      base->ndtypes > 64 || (base->ndtypes && !base->dtypes))
    return TEENY_E_INVAL;
  teeny_dtype_binding dt[64];
  memcpy(dt, base->dtypes, base->ndtypes * sizeof *dt);
  qsort(dt, base->ndtypes, sizeof *dt, by_name);
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__buf_printf(&b, "teenyc-tune-1%c%s%c%s%c", 0, base->kernel, 0,
                    base->target ? base->target : "", 0);
  teeny__buf_append(&b, base->source, base->source_len);
  for (size_t i = 0; i < base->ndtypes; i++)
    teeny__buf_printf(&b, "%c%s=%s", 0, dt[i].name ? dt[i].name : "",
                      dt[i].dtype ? dt[i].dtype : "");
  int rc = b.oom ? TEENY_E_NOMEM : teeny__sha256_hex(b.p, b.len, out);
  teeny__buf_free(&b);
  return rc;
}

/* ---- configurations ------------------------------------------------------------------ */

/* The num_warps a configuration compiles with. */
static int warps_of(const tune_ctx *t, const teeny_tune_config *cfg) {
  return cfg->num_warps ? cfg->num_warps : t->base.num_warps ? t->base.num_warps : 4;
}

/* The base's consts with cfg's on top (same names replaced) into v. */
static size_t merged_consts(const teeny_compile_req *base, const teeny_tune_config *cfg,
                            teeny_const_binding *v) {
  size_t n = 0;
  for (size_t i = 0; i < base->nconsts; i++) {
    bool tuned = false;
    for (size_t j = 0; j < cfg->nconsts && !tuned; j++)
      tuned = strcmp(base->consts[i].name, cfg->consts[j].name) == 0;
    if (!tuned)
      v[n++] = base->consts[i];
  }
  for (size_t j = 0; j < cfg->nconsts; j++)
    v[n++] = cfg->consts[j];
  return n;
}

/* Is (consts, num_warps) configuration j of the request? */
static bool same_config(const tune_ctx *t, size_t j, const teeny_const_binding *consts,
                        size_t n, int num_warps) {
  const teeny_tune_config *c = &t->req->configs[j];
  if (c->nconsts != n || warps_of(t, c) != num_warps)
    return false;
  for (size_t a = 0; a < n; a++) {
    bool found = false;
    for (size_t b = 0; b < n && !found; b++)
      found = strcmp(c->consts[a].name, consts[b].name) == 0 &&
              c->consts[a].value == consts[b].value;
    if (!found)
      return false;
  }
  return true;
}

/* The winner into the result (copied), its index found in the request. */
static int set_winner(tune_ctx *t, const teeny_const_binding *consts, size_t n,
                      int num_warps, double best_ms, uint32_t candidates) {
  tune_result *o = t->out;
  o->consts = teeny__calloc(n ? n : 1, sizeof *o->consts);
  if (!o->consts)
    return TEENY_E_NOMEM;
  for (size_t i = 0; i < n; i++) {
    o->consts[i].value = consts[i].value;
    if (!(o->consts[i].name = teeny__strdup(consts[i].name)))
      return TEENY_E_NOMEM;
    o->pub.config.nconsts = i + 1;
  }
  o->pub.config.consts = o->consts;
  o->pub.config.num_warps = num_warps;
  o->pub.best_ms = best_ms;
  o->pub.candidates = candidates;
  o->pub.index = SIZE_MAX;
  for (size_t j = 0; j < t->req->nconfigs && o->pub.index == SIZE_MAX; j++)
    if (same_config(t, j, consts, n, num_warps))
      o->pub.index = j;
  return 0;
}

/* ---- timing every candidate ------------------------------------------------------------ */

/* Compile and time configuration i: 0 with *ms, or the first failure. */
static int time_one(tune_ctx *t, size_t i, double *ms, char *err, size_t errsz) {
  const teeny_tune_req *q = t->req;
  const teeny_tune_config *cfg = &q->configs[i];
  teeny_const_binding consts[2 * TEENY_KERNEL_MAX_GENERICS + 64];
  if (t->base.nconsts + cfg->nconsts > TEENY_ARRAY_LEN(consts))
    return teeny__seterr(err, errsz, TEENY_E_INVAL, "too many consts");
  teeny_compile_req creq = t->base;
  creq.consts = consts;
  creq.nconsts = merged_consts(&t->base, cfg, consts);
  creq.num_warps = warps_of(t, cfg);
  teeny_client_result *r = NULL;
  int rc = teeny_client_compile(t->c, &creq, TEENY_EMIT_PTX, &r);
  if (rc) {
    teeny__seterr(err, errsz, rc, "%s", teeny_client_errmsg(t->c));
  } else {
    teeny_tune_bench b = {r, cfg, i, {1, 1, 1}, q->stream, q->args, q->nargs,
                          q->warmup_ms, q->rep_ms};
    q->grid(q->grid_ctx, cfg, &b.grid);
    teeny_tune_timer timer = q->timer ? q->timer : teeny_tune_time_cuda;
    rc = timer(q->timer_ctx, &b, ms, err, errsz);
    if (!rc && !(isfinite(*ms) && *ms >= 0))
      rc = teeny__seterr(err, errsz, TEENY_E_CUDA, "the timer gave %g ms", *ms);
  }
  teeny_client_result_free(r);
  return rc;
}

/* Time every configuration; the fastest becomes the winner. */
static int tune_here(tune_ctx *t) {
  tune_result *o = t->out;
  size_t n = t->req->nconfigs, best = SIZE_MAX;
  if (!(o->times = teeny__calloc(n, sizeof *o->times)))
    return TEENY_E_NOMEM;
  o->pub.times_ms = o->times;
  int first_rc = 0;
  char first_err[TEENY__ERR_LEN] = "", err[TEENY__ERR_LEN];
  uint32_t timed = 0;
  for (size_t i = 0; i < n; i++) {
    err[0] = '\0';
    int rc = time_one(t, i, &o->times[i], err, sizeof err);
    if (rc) {
      o->times[i] = NAN;
      if (!first_rc) {
        first_rc = rc;
        snprintf(first_err, sizeof first_err, "configuration %zu: %.900s", i, err);
      }
      continue;
    }
    timed++;
    if (best == SIZE_MAX || o->times[i] < o->times[best])
      best = i;
  }
  if (best == SIZE_MAX)
    return result_fail(o, first_rc ? first_rc : TEENY_E_INVAL,
                       "no configuration could be timed: %s", first_err);
  const teeny_tune_config *w = &t->req->configs[best];
  int rc = set_winner(t, w->consts, w->nconsts, warps_of(t, w), o->times[best], timed);
  o->pub.index = best;
  return rc;
}

/* ---- talking to teenycd --------------------------------------------------------------- */

/* Lock held: one tune or tune_done exchange into *rep (free it). */
static int exchange(tune_ctx *t, teeny_msg_request *m, teeny_msg_reply *rep) {
  bool done = false;
  teeny_msg_reply *rp = rep;
  memset(rep, 0, sizeof *rep);
  uint64_t t0 = teeny__now_ns();
  int rc = teeny__client_exchange(t->c, m, &rp, &done, 1, true);
  t->out->pub.lookup_ms += (double)(teeny__now_ns() - t0) / 1e6;
  return rc ? rc : rep->status;
}

/* Ask for the record, or the right to tune.  0 with *rep, or an error
 * (TEENY_E_UNSUPPORTED from an old daemon, a transport error). */
static int ask(tune_ctx *t, teeny_msg_reply *rep) {
  teeny_msg_request m = {.op = TEENY_OP_TUNE};
  m.u.tune.key = t->key;
  m.u.tune.claim = true;
  uint64_t wait = t->req->wait_ms > 0 ? (uint64_t)t->req->wait_ms : 0;
  if (t->c->timeout_ms && (!wait || wait + 500 > (uint64_t)t->c->timeout_ms))
    wait = t->c->timeout_ms > 1000 ? (uint64_t)t->c->timeout_ms - 500 : 1;
  m.u.tune.wait_ms = wait;
  pthread_mutex_lock(&t->c->lock);
  int rc = exchange(t, &m, rep);
  pthread_mutex_unlock(&t->c->lock);
  return rc;
}

/* Record the winner (or abandon); true when teenycd stored it. */
static bool record(tune_ctx *t, bool abandon) {
  const teeny_tune_result *o = &t->out->pub;
  teeny_msg_request m = {.op = TEENY_OP_TUNE_DONE};
  m.u.tune_done.key = t->key;
  m.u.tune_done.abandon = abandon;
  if (!abandon) {
    m.u.tune_done.config = (teeny_msg_tune_config){o->config.consts, o->config.nconsts,
                                                   o->config.num_warps};
    m.u.tune_done.best_ms = o->best_ms;
    m.u.tune_done.candidates = o->candidates;
  }
  teeny_msg_reply rep;
  pthread_mutex_lock(&t->c->lock);
  int rc = exchange(t, &m, &rep);
  pthread_mutex_unlock(&t->c->lock);
  teeny_msg_reply_free(&rep);
  return rc == 0;
}

/* The daemon's answer: use its record, or tune and record. */
static int tune_daemon(tune_ctx *t) {
  teeny_msg_reply rep;
  int rc = ask(t, &rep);
  if (rc) { /* no daemon that tunes: in process, nothing recorded */
    teeny_msg_reply_free(&rep);
    t->out->pub.source = TEENY_TUNE_LOCAL;
    return tune_here(t);
  }
  const teeny_msg_tune_reply *tr = &rep.u.tune;
  if (tr->state == TEENY_TUNE_FOUND) {
    t->out->pub.source = tr->joined ? TEENY_TUNE_JOINED : TEENY_TUNE_RECORDED;
    rc = set_winner(t, tr->config.consts, tr->config.nconsts, tr->config.num_warps,
                    tr->best_ms, tr->candidates);
    teeny_msg_reply_free(&rep);
    return rc;
  }
  teeny_msg_reply_free(&rep); /* "tune", or "timeout": tune here and record */
  rc = tune_here(t);
  bool stored = record(t, rc != 0);
  t->out->pub.source = stored ? TEENY_TUNE_TUNED : TEENY_TUNE_LOCAL;
  return rc;
}

/* ---- the entry point ----------------------------------------------------------------- */

static int check(teeny_client *c, const teeny_tune_req *q, tune_result *o) {
  if (c->active == TEENY_MODE_DEFAULT)
    return result_fail(o, TEENY_E_INVAL, "%s", teeny_client_errmsg(c));
  if (!q || !q->base || !q->base->kernel || !q->configs || !q->nconfigs || !q->problem ||
      !q->grid || (q->nargs && !q->args))
    return result_fail(o, TEENY_E_INVAL, "%s",
                       "teeny_client_tune needs a base request, configurations, a "
                       "problem key and a grid function");
  for (size_t i = 0; i < q->nconfigs; i++)
    if (q->configs[i].nconsts && !q->configs[i].consts)
      return result_fail(o, TEENY_E_INVAL, "%s", "a configuration has NULL consts");
  return 0;
}

/* The GPU's name and driver: the request's, else the device's. */
static int device_names(tune_ctx *t) {
  const teeny_tune_req *q = t->req;
  char err[TEENY__ERR_LEN] = "";
  int rc = 0;
  if (!q->gpu || !q->driver)
    rc = teeny_cuda_gpu(t->gpu, sizeof t->gpu, t->driver, sizeof t->driver, err,
                        sizeof err);
  if (rc)
    return result_fail(t->out, rc, "tuning needs the GPU's name and driver: %s", err);
  if (q->gpu)
    snprintf(t->gpu, sizeof t->gpu, "%s", q->gpu);
  if (q->driver)
    snprintf(t->driver, sizeof t->driver, "%s", q->driver);
  return 0;
}

/* The base request as every candidate compiles it: no target means the
 * client's GPU's (as teeny_client_compile would choose). */
static void compiled_base(tune_ctx *t) {
  char arch[16];
  t->base = *t->req->base;
  const char *a = t->base.target ? NULL : teeny__client_arch(t->c, arch);
  const char *target = a ? teeny_target_for_arch(a) : NULL;
  if (target)
    t->base.target = target;
}

int teeny_client_tune(teeny_client *c, const teeny_tune_req *req,
                      teeny_tune_result **out) {
  *out = NULL;
  if (!c)
    return TEENY_E_NOMEM;
  tune_result *o = teeny__calloc(1, sizeof *o);
  if (!o)
    return TEENY_E_NOMEM;
  o->pub.index = SIZE_MAX;
  tune_ctx t = {.c = c, .req = req, .out = o};
  int rc = check(c, req, o);
  if (!rc)
    rc = device_names(&t);
  if (!rc) {
    compiled_base(&t);
    t.key = (teeny_msg_tune_key){.kernel = t.base.kernel, .problem = req->problem,
                                 .gpu = t.gpu, .driver = t.driver};
    rc = teeny_tune_digest(&t.base, t.key.digest);
  }
  if (!rc && c->active == TEENY_MODE_DAEMON)
    rc = tune_daemon(&t);
  else if (!rc) {
    o->pub.source = TEENY_TUNE_LOCAL;
    rc = tune_here(&t);
  }
  if (rc && !o->pub.status)
    result_fail(o, rc, "%s", rc == TEENY_E_NOMEM ? "out of memory" : teeny_strerror(rc));
  if (rc) {
    pthread_mutex_lock(&c->lock);
    snprintf(c->err, sizeof c->err, "%s", o->error);
    pthread_mutex_unlock(&c->lock);
  }
  *out = &o->pub;
  return rc;
}
