/*
 * client/client.c — the client handle: opening in one of the modes,
 * compile and batch compile, the memo in front of both, and riding out
 * daemon restarts: a lost connection or a SHUTDOWN reply is followed by a
 * reconnect and a resend (daemon mode: waiting with backoff up to
 * restart_wait_ms), and an auto client that went in process returns to
 * the daemon when it answers again.
 *
 * Invariants: c->active is the mode every call uses now (DAEMON with an
 * open or reopenable connection, EMBEDDED with c->store open, OFFLINE), or
 * TEENY_MODE_DEFAULT for a handle whose open failed.  c->lock is held for
 * every use of the connection, the store and c->err; the memo is consulted
 * before taking it, so hits never wait behind another thread's round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "client/client_int.h"
#include "client/cuda_api.h"

_Static_assert(TEENY_EMIT_SOURCE == TEENY_MSG_EMIT_SOURCE, "emit bits differ");
_Static_assert(TEENY_EMIT_PTX == TEENY_MSG_EMIT_PTX, "emit bits differ");
_Static_assert(TEENY_EMIT_MLIR == TEENY_MSG_EMIT_MLIR, "emit bits differ");

#define EMIT_MASK (TEENY_EMIT_PTX | TEENY_EMIT_MLIR | TEENY_EMIT_SOURCE)
#define DEFAULT_MEMO_ENTRIES 4096
#define BACKOFF_FIRST_MS 5  /* first wait for a restarting daemon */
#define BACKOFF_MAX_MS 200  /* waits double up to this */
#define PROBE_MS 100        /* auto in process: look for the daemon this often */

/* ---- names and paths ------------------------------------------------------------ */

static const char *const mode_names[] = {"default", "auto", "daemon", "embedded",
                                         "offline"};

const char *teeny_client_mode_name(teeny_client_mode m) {
  return (unsigned)m < TEENY_ARRAY_LEN(mode_names) ? mode_names[m] : "unknown";
}

int teeny_client_mode_parse(const char *name) {
  for (size_t i = 1; name && i < TEENY_ARRAY_LEN(mode_names); i++)
    if (strcmp(name, mode_names[i]) == 0)
      return (int)i;
  return -1;
}

/* ---- messages --------------------------------------------------------------------- */

const char *teeny_client_errmsg(const teeny_client *c) {
  return c ? c->err : "out of memory";
}

teeny_client_mode teeny_client_active_mode(const teeny_client *c) {
  return c ? c->active : TEENY_MODE_DEFAULT;
}

const char *teeny_client_socket(const teeny_client *c) { return c ? c->socket : ""; }

const char *teeny_client_notice(const teeny_client *c) { return c ? c->notice : ""; }

const char *teeny_client_store_root(const teeny_client *c) {
  return c && c->store ? c->emb->estore_root(c->store) : "";
}

/* Set c's message; returns rc. */
#define fail(c, rc, ...) teeny__seterr((c)->err, sizeof (c)->err, (rc), __VA_ARGS__)

/* ---- opening ------------------------------------------------------------------------ */

static int requested_mode(teeny_client *c, const teeny_client_opts *o) {
  if (o->mode != TEENY_MODE_DEFAULT) {
    if ((unsigned)o->mode > TEENY_MODE_OFFLINE)
      return fail(c, TEENY_E_INVAL, "invalid client mode %d (opts.mode)", (int)o->mode);
    c->requested = o->mode;
    return 0;
  }
  const char *env = getenv("TEENYC_MODE");
  if (!env || !*env) {
    c->requested = TEENY_MODE_AUTO;
    return 0;
  }
  int m = teeny_client_mode_parse(env);
  if (m < 0)
    return fail(c, TEENY_E_INVAL,
                "TEENYC_MODE='%.32s' is not auto, daemon, embedded or offline", env);
  c->requested = (teeny_client_mode)m;
  return 0;
}

/* Is a store root configured, rather than the built-in default? */
static bool store_configured(const teeny_client *c) {
  const char *env = getenv("TEENYC_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  return c->cache_dir || (env && *env) || (xdg && xdg[0] == '/');
}

/* Does the default store (the one a system teenycd uses) exist? */
static bool default_store_exists(void) {
  struct stat st;
  return stat(TEENY_SYSTEM_STORE, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The in-process compiler (libteenyc-embedded), loaded on first need. */
static int need_compiler(teeny_client *c) {
  if (!c->emb && !(c->emb = teeny__embedded_get(c->err, sizeof c->err)))
    return TEENY_E_UNSUPPORTED;
  return 0;
}

static int open_offline(teeny_client *c) {
  int rc = need_compiler(c);
  if (!rc)
    c->active = TEENY_MODE_OFFLINE;
  return rc;
}

/* A read-only store (its owner could not manage what we would write) is
 * worth one notice: every miss compiles and nothing is cached. */
static void note_readonly(teeny_client *c, const char *before) {
  const char *ro = c->emb->estore_readonly(c->store);
  if (ro)
    snprintf(c->notice, sizeof c->notice, "%.300s%sthe store %.200s is read-only for this "
             "process (%.400s): nothing compiled here is cached", before,
             *before ? "; " : "", c->emb->estore_root(c->store), ro);
}

static int open_embedded(teeny_client *c) {
  int rc = need_compiler(c);
  if (!rc)
    rc = c->emb->estore_open(&c->store, c->cache_dir, c->err, sizeof c->err);
  if (rc)
    return rc;
  c->active = TEENY_MODE_EMBEDDED;
  note_readonly(c, "");
  return 0;
}

/* auto with no daemon: the daemon's store if one is configured (an error if
 * it cannot be opened) or if the default one exists and opens; else
 * offline.  auto never creates the system-wide default store.  The notice
 * says which, and why the daemon was not used. */
static int fall_back(teeny_client *c) {
  char why[TEENY__ERR_LEN];
  snprintf(why, sizeof why, "%s", c->err);
  bool configured = store_configured(c);
  bool have_default = default_store_exists();
  int rc = configured || have_default ? open_embedded(c) : 1;
  if (rc && !configured)
    rc = open_offline(c);
  if (rc) {
    char serr[TEENY__ERR_LEN];
    snprintf(serr, sizeof serr, "%s", c->err);
    snprintf(c->err, sizeof c->err, "%.600s; and %.400s", why, serr);
    return rc;
  }
  c->err[0] = '\0';
  char head[TEENY__ERR_LEN];
  if (c->active == TEENY_MODE_EMBEDDED) {
    snprintf(head, sizeof head, "%.700s; compiling in this process with the store %.200s "
             "(embedded mode)", why, c->emb->estore_root(c->store));
    snprintf(c->notice, sizeof c->notice, "%s", head);
    note_readonly(c, head);
  } else {
    snprintf(c->notice, sizeof c->notice, "%.700s; compiling in this process without a "
             "cache (offline mode: %s)", why, have_default ? "the store could not be opened"
             : "no store configured and " TEENY_SYSTEM_STORE " does not exist");
  }
  return 0;
}

static int open_mode(teeny_client *c) {
  switch (c->requested) {
  case TEENY_MODE_DAEMON:
    c->active = TEENY_MODE_DAEMON;
    return teeny__client_discover(c);
  case TEENY_MODE_EMBEDDED:
    return open_embedded(c);
  case TEENY_MODE_OFFLINE:
    return open_offline(c);
  default: {
    c->active = TEENY_MODE_DAEMON;
    int rc = teeny__client_discover(c);
    if (rc != TEENY_E_CONNECT && rc != TEENY_E_PERM)
      return rc;
    return fall_back(c);
  }
  }
}

static int init_fields(teeny_client *c, const teeny_client_opts *o) {
  if (o->client_name && !*o->client_name)
    return fail(c, TEENY_E_INVAL, "empty client name");
  snprintf(c->name, sizeof c->name, "%s", o->client_name ? o->client_name : "");
  if (!o->client_name)
    snprintf(c->name, sizeof c->name, "%.64s/libteenyc-client-%s",
             program_invocation_short_name, TEENY_CLIENT_VERSION_STRING);
  if (o->cache_dir && *o->cache_dir && !(c->cache_dir = teeny__strdup(o->cache_dir)))
    return fail(c, TEENY_E_NOMEM, "out of memory");
  if (o->timeout_ms < 0)
    return fail(c, TEENY_E_INVAL, "negative timeout");
  c->timeout_ms = o->timeout_ms;
  c->restart_wait_ms = o->restart_wait_ms < 0   ? 0
                       : o->restart_wait_ms == 0 ? TEENY_CLIENT_RESTART_WAIT_MS
                                                 : o->restart_wait_ms;
  c->socket_given = o->socket_path && *o->socket_path;
  if (teeny_client_socket_path(o->socket_path, c->socket, sizeof c->socket))
    return fail(c, TEENY_E_LIMIT, "socket path too long (%.64s...)",
                o->socket_path ? o->socket_path : "$TEENYCD_SOCKET or $XDG_RUNTIME_DIR");
  return 0;
}

int teeny_client_open(teeny_client **out, const teeny_client_opts *opts) {
  static const teeny_client_opts defaults = {0};
  const teeny_client_opts *o = opts ? opts : &defaults;
  teeny_client *c = teeny__calloc(1, sizeof *c);
  *out = c;
  if (!c)
    return TEENY_E_NOMEM;
  pthread_mutex_init(&c->lock, NULL);
  atomic_init(&c->arch, -1); /* the device's, once CUDA is loaded */
  teeny__conn_init(&c->conn);
  size_t cap = o->memo_entries < 0 ? 0
               : o->memo_entries == 0 ? DEFAULT_MEMO_ENTRIES
                                      : (size_t)o->memo_entries;
  int rc = teeny__memo_init(&c->memo, cap);
  if (rc)
    rc = fail(c, rc, "out of memory");
  if (!rc)
    rc = init_fields(c, o);
  if (!rc)
    rc = requested_mode(c, o);
  if (!rc)
    rc = open_mode(c);
  if (rc)
    c->active = TEENY_MODE_DEFAULT;
  return rc;
}

void teeny_client_close(teeny_client *c) {
  if (!c)
    return;
  teeny__conn_close(&c->conn);
  if (c->store)
    c->emb->estore_close(c->store);
  teeny__memo_close(&c->memo);
  teeny__free(c->cache_dir);
  pthread_mutex_destroy(&c->lock);
  teeny__free(c);
}

/* ---- the connection ------------------------------------------------------------------- */

int teeny__client_connect(teeny_client *c) {
  if (teeny__conn_is_open(&c->conn))
    return 0;
  return teeny__conn_open(&c->conn, c->socket, c->name, c->timeout_ms, c->err,
                          sizeof c->err);
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Replies that say the daemon is stopping: their requests go again, to
 * the daemon that comes next.  How many. */
static size_t unanswer_shutdown(teeny_msg_reply **replies, bool *done,
                                size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (done[i] && replies[i]->status == TEENY_E_SHUTDOWN) {
      teeny_msg_reply_free(replies[i]);
      memset(replies[i], 0, sizeof *replies[i]);
      done[i] = false;
      k++;
    }
  return k;
}

/* One attempt: connect if needed, exchange, and treat SHUTDOWN replies as
 * a lost connection (when the caller may retry). */
static int attempt(teeny_client *c, teeny_msg_request *reqs,
                   teeny_msg_reply **replies, bool *done, size_t n,
                   bool may_retry) {
  int rc = teeny__client_connect(c);
  if (!rc)
    rc = teeny__conn_exchange(&c->conn, reqs, replies, done, n, c->timeout_ms,
                              c->err, sizeof c->err);
  if (!rc && may_retry && unanswer_shutdown(replies, done, n)) {
    teeny__conn_close(&c->conn);
    rc = fail(c, TEENY_E_SHUTDOWN, "teenycd at %s is shutting down", c->socket);
  }
  return rc;
}

static bool restart_like(int rc) {
  return rc == TEENY_E_CLOSED || rc == TEENY_E_CONNECT || rc == TEENY_E_SHUTDOWN;
}

int teeny__client_exchange(teeny_client *c, teeny_msg_request *reqs,
                           teeny_msg_reply **replies, bool *done, size_t n,
                           bool may_retry) {
  int rc = attempt(c, reqs, replies, done, n, may_retry);
  if (!may_retry || !restart_like(rc))
    return rc;
  /* The daemon went away or is stopping (a restart?): reconnect and send
   * what is unanswered again, at once; compiles are idempotent, so a resend
   * is always safe.  Daemon mode then waits for the next daemon. */
  rc = attempt(c, reqs, replies, done, n, may_retry);
  bool wait = c->requested == TEENY_MODE_DAEMON && c->restart_wait_ms > 0;
  /* + 1: mono_ms() counts whole milliseconds, so the wait is never shorter */
  int64_t deadline = mono_ms() + c->restart_wait_ms + 1;
  for (int pause = BACKOFF_FIRST_MS; wait && restart_like(rc); ) {
    int64_t left = deadline - mono_ms();
    if (left <= 0) {
      char why[TEENY__ERR_LEN];
      snprintf(why, sizeof why, "%s", c->err);
      return fail(c, TEENY_E_CONNECT, "teenycd did not answer again within %d ms: %.400s",
                  c->restart_wait_ms, why);
    }
    sleep_ms(pause < left ? pause : (int)left);
    pause = pause * 2 < BACKOFF_MAX_MS ? pause * 2 : BACKOFF_MAX_MS;
    rc = attempt(c, reqs, replies, done, n, may_retry);
  }
  return rc;
}

void teeny__client_maybe_return(teeny_client *c) {
  if (c->requested != TEENY_MODE_AUTO || c->active == TEENY_MODE_DAEMON ||
      c->active == TEENY_MODE_DEFAULT)
    return;
  int64_t now = mono_ms();
  if (now < c->next_probe_ms)
    return;
  c->next_probe_ms = now + PROBE_MS;
  char keep[TEENY__ERR_LEN];
  snprintf(keep, sizeof keep, "%s", c->err); /* a failed look says nothing */
  if (teeny__client_discover(c) == 0)
    c->active = TEENY_MODE_DAEMON; /* the store stays open for next time */
  else
    snprintf(c->err, sizeof c->err, "%s", keep);
}

/* ---- compiling ---------------------------------------------------------------------- */

static int check_req(teeny_client *c, const teeny_compile_req *req) {
  if (c->active == TEENY_MODE_DEFAULT)
    return TEENY_E_INVAL; /* keep the message of the failed open */
  if (!req || !req->kernel || (!req->source && req->source_len) ||
      (req->ndtypes && !req->dtypes) || (req->nconsts && !req->consts))
    return fail(c, TEENY_E_INVAL,
                "invalid compile request (kernel, source and bindings are required)");
  for (size_t i = 0; i < req->ndtypes; i++)
    if (!req->dtypes[i].name || !req->dtypes[i].dtype)
      return fail(c, TEENY_E_INVAL, "invalid compile request (NULL dtype binding)");
  for (size_t i = 0; i < req->nconsts; i++)
    if (!req->consts[i].name)
      return fail(c, TEENY_E_INVAL, "invalid compile request (NULL const binding)");
  return 0;
}

static void compile_msg(teeny_msg_request *m, const teeny_compile_req *req,
                        unsigned emit, const char *arch) {
  memset(m, 0, sizeof *m);
  m->op = TEENY_OP_COMPILE;
  m->u.compile.req = *req;
  m->u.compile.req.compiler_version = NULL;
  m->u.compile.flags = (emit & TEENY_CLIENT_FORCE) ? TEENY_MSG_FORCE : 0;
  m->u.compile.emit = emit & EMIT_MASK;
  m->u.compile.arch = arch; /* that GPU's cubin, when teenycd has one */
}

/* ---- the GPU architecture ------------------------------------------------------------ */

int teeny_client_set_arch(teeny_client *c, const char *arch) {
  if (!c)
    return TEENY_E_NOMEM;
  char suffix;
  int n = arch && *arch ? teeny__arch_parse(arch, &suffix) : 0;
  if (n < 0 || (n && suffix))
    return fail(c, TEENY_E_INVAL, "'%.32s' is not a GPU architecture (sm_90, sm_80, ...)",
                arch);
  atomic_store(&c->arch, n);
  return 0;
}

const char *teeny__client_arch(const teeny_client *c, char buf[16]) {
  int n = atomic_load(&c->arch);
  if (n < 0) {
    const teeny__cuda *cu = teeny__cuda_if_loaded(); /* never loads CUDA */
    return cu ? snprintf(buf, 16, "%s", cu->arch), buf : NULL;
  }
  return n ? snprintf(buf, 16, "sm_%d", n), buf : NULL;
}

const char *teeny_client_arch(teeny_client *c) {
  if (!c || !teeny__client_arch(c, c->arch_text))
    return "";
  return c->arch_text;
}

/* req as sent: with no target, the target of the client's GPU. */
static void effective_req(const teeny_client *c, const teeny_compile_req *in,
                          teeny_compile_req *out) {
  char buf[16];
  *out = *in;
  const char *arch = in->target ? NULL : teeny__client_arch(c, buf);
  const char *t = arch ? teeny_target_for_arch(arch) : NULL;
  if (t)
    out->target = t; /* a string constant: outlives the request */
}

/* The message of a failed in-process compile: its first error, if any. */
static const char *first_error(const teeny_diags *d) {
  for (size_t i = 0; i < d->n; i++)
    if (d->v[i].level == TEENY_DIAG_ERROR)
      return d->v[i].message;
  return NULL;
}

/* auto mode lost its daemon (for now): continue in process. */
static bool give_up_daemon(teeny_client *c, int rc) {
  if (c->requested != TEENY_MODE_AUTO ||
      (rc != TEENY_E_CONNECT && rc != TEENY_E_CLOSED && rc != TEENY_E_SHUTDOWN))
    return false;
  c->next_probe_ms = mono_ms() + PROBE_MS;
  if (c->store) { /* open already, from an earlier fall back */
    c->active = TEENY_MODE_EMBEDDED;
    return true;
  }
  return fall_back(c) == 0;
}

/* Lock held.  Compile through the daemon; *core on success (status may be
 * the request's error). */
static int compile_daemon(teeny_client *c, const teeny_compile_req *req,
                          unsigned emit, teeny__core **core) {
  teeny__core *k = teeny__core_new();
  if (!k)
    return fail(c, TEENY_E_NOMEM, "out of memory");
  teeny_msg_request m;
  char arch[16];
  compile_msg(&m, req, emit, teeny__client_arch(c, arch));
  teeny_msg_reply *rp = &k->reply;
  bool done = false;
  int rc = teeny__client_exchange(c, &m, &rp, &done, 1, true);
  if (rc) {
    teeny__core_unref(k);
    return rc;
  }
  teeny__core_from_reply(k, emit);
  *core = k;
  return 0;
}

/* Lock held.  Compile in process (embedded or offline); *core on success
 * (status may be the request's error). */
static int compile_local(teeny_client *c, const teeny_compile_req *req,
                         unsigned emit, teeny__core **core) {
  teeny__core *k = teeny__core_new();
  if (!k)
    return fail(c, TEENY_E_NOMEM, "out of memory");
  teeny__eresult e;
  c->emb->compile(c->store, req, emit, &e);
  teeny_client_mode mode = c->store ? TEENY_MODE_EMBEDDED : TEENY_MODE_OFFLINE;
  teeny__core_from_eresult(k, &e, mode);
  if (e.status)
    teeny__core_set_error(k, e.status, first_error(&k->diags), mode);
  *core = k;
  return 0;
}

static int compile_locked(teeny_client *c, const teeny_compile_req *req,
                          unsigned emit, teeny__core **core) {
  teeny__client_maybe_return(c);
  if (c->active == TEENY_MODE_DAEMON) {
    int rc = compile_daemon(c, req, emit, core);
    if (!give_up_daemon(c, rc))
      return rc;
  }
  return compile_local(c, req, emit, core);
}

/* The outcome of one request as the call's return value and message. */
static int outcome(teeny_client *c, const teeny_compile_req *req,
                   const teeny__core *k) {
  int st = k->pub.status;
  if (st)
    snprintf(c->err, sizeof c->err, "%s: %s", req->kernel,
             k->pub.error ? k->pub.error : teeny_strerror(st));
  return st;
}

static teeny__core *memo_lookup(teeny_client *c, const teeny_compile_req *req,
                                unsigned emit, uint64_t *hash) {
  if (emit & (TEENY_CLIENT_FORCE | TEENY_CLIENT_NO_MEMO) || c->memo.cap == 0)
    return NULL;
  *hash = teeny__memo_hash(req);
  return teeny__memo_get(&c->memo, req, *hash, emit);
}

static void memo_store(teeny_client *c, const teeny_compile_req *req,
                       unsigned emit, uint64_t hash, teeny__core *k) {
  if ((emit & TEENY_CLIENT_NO_MEMO) || c->memo.cap == 0)
    return;
  if (emit & TEENY_CLIENT_FORCE)
    hash = teeny__memo_hash(req);
  teeny__memo_put(&c->memo, req, hash, k);
}

/* Hand core k to the caller as a new result (dropping our reference). */
static int hand_out(teeny_client *c, teeny__core *k, int cache,
                    teeny_client_result **out) {
  *out = teeny__result_wrap(k, cache);
  teeny__core_unref(k);
  return *out ? 0 : fail(c, TEENY_E_NOMEM, "out of memory");
}

int teeny_client_compile(teeny_client *c, const teeny_compile_req *given,
                         unsigned emit, teeny_client_result **out) {
  *out = NULL;
  if (!c)
    return TEENY_E_NOMEM;
  teeny_compile_req eff;
  const teeny_compile_req *req = given;
  if (given) {
    effective_req(c, given, &eff);
    req = &eff;
  }
  uint64_t hash = 0;
  if (req && req->kernel && (req->source || !req->source_len)) {
    teeny__core *hit = memo_lookup(c, req, emit, &hash);
    if (hit)
      return hand_out(c, hit, TEENY_CLIENT_MEMO, out);
  }
  pthread_mutex_lock(&c->lock);
  teeny__core *k = NULL;
  int rc = check_req(c, req);
  if (!rc)
    rc = compile_locked(c, req, emit, &k);
  if (!rc) {
    memo_store(c, req, emit, hash, k);
    rc = outcome(c, req, k);
    int hrc = hand_out(c, k, -1, out);
    rc = rc ? rc : hrc;
  }
  pthread_mutex_unlock(&c->lock);
  return rc;
}

/* ---- batches ------------------------------------------------------------------------ */

/* Per-batch scratch: the requests still to send and their cores. */
typedef struct batch {
  size_t *idx;              /* request index of each miss */
  teeny_msg_request *msgs;  /* their messages */
  teeny__core **cores;      /* their result cores */
  teeny_msg_reply **replies;/* &cores[j]->reply */
  bool *done;               /* answered */
  uint64_t *hash;           /* memo hash of every request */
  size_t n;                 /* misses */
  teeny_compile_req *effs;  /* the requests as sent (effective_req) */
  char arch[16];            /* the architecture they name */
} batch;

static void batch_free(batch *b) {
  for (size_t j = 0; j < b->n; j++)
    teeny__core_unref(b->cores[j]);
  teeny__free(b->idx);
  teeny__free(b->msgs);
  teeny__free(b->cores);
  teeny__free(b->replies);
  teeny__free(b->done);
  teeny__free(b->hash);
  teeny__free(b->effs);
}

static int batch_alloc(batch *b, size_t n) {
  memset(b, 0, sizeof *b);
  b->idx = teeny__calloc(n + 1, sizeof *b->idx);
  b->msgs = teeny__calloc(n + 1, sizeof *b->msgs);
  b->cores = teeny__calloc(n + 1, sizeof *b->cores);
  b->replies = teeny__calloc(n + 1, sizeof *b->replies);
  b->done = teeny__calloc(n + 1, sizeof *b->done);
  b->hash = teeny__calloc(n + 1, sizeof *b->hash);
  b->effs = teeny__calloc(n + 1, sizeof *b->effs);
  bool ok = b->idx && b->msgs && b->cores && b->replies && b->done && b->hash && b->effs;
  return ok ? 0 : TEENY_E_NOMEM;
}

/* Answer memo hits; queue the rest in b. */
static int batch_plan(teeny_client *c, batch *b, const teeny_compile_req *reqs,
                      size_t n, unsigned emit, teeny_client_result **out) {
  for (size_t i = 0; i < n; i++) {
    teeny__core *hit = memo_lookup(c, &reqs[i], emit, &b->hash[i]);
    if (hit) {
      if (hand_out(c, hit, TEENY_CLIENT_MEMO, &out[i]))
        return TEENY_E_NOMEM;
      continue;
    }
    size_t j = b->n;
    if (!(b->cores[j] = teeny__core_new()))
      return TEENY_E_NOMEM;
    b->n++;
    b->idx[j] = i;
    compile_msg(&b->msgs[j], &reqs[i], emit, teeny__client_arch(c, b->arch));
    b->replies[j] = &b->cores[j]->reply;
  }
  return 0;
}

/* Lock held: send every queued request through the daemon. */
static int batch_daemon(teeny_client *c, batch *b, const teeny_compile_req *reqs,
                        unsigned emit, teeny_client_result **out) {
  int rc = teeny__client_exchange(c, b->msgs, b->replies, b->done, b->n, true);
  for (size_t j = 0; j < b->n; j++) {
    if (!b->done[j] || out[b->idx[j]])
      continue;
    teeny__core_from_reply(b->cores[j], emit);
    memo_store(c, &reqs[b->idx[j]], emit, b->hash[b->idx[j]], b->cores[j]);
    out[b->idx[j]] = teeny__result_wrap(b->cores[j], -1);
    if (!out[b->idx[j]])
      rc = rc ? rc : TEENY_E_NOMEM;
  }
  return rc;
}

/* Lock held: compile every unanswered request in process. */
static int batch_local(teeny_client *c, batch *b, const teeny_compile_req *reqs,
                       unsigned emit, teeny_client_result **out) {
  for (size_t j = 0; j < b->n; j++) {
    size_t i = b->idx[j];
    if (out[i])
      continue;
    teeny__core *k = NULL;
    if (compile_local(c, &reqs[i], emit, &k))
      return TEENY_E_NOMEM;
    memo_store(c, &reqs[i], emit, b->hash[i], k);
    if (hand_out(c, k, -1, &out[i]))
      return TEENY_E_NOMEM;
  }
  return 0;
}

int teeny_client_compile_batch(teeny_client *c, const teeny_compile_req *reqs,
                               size_t n, unsigned emit, teeny_client_result **out) {
  for (size_t i = 0; i < n; i++)
    out[i] = NULL;
  if (!c)
    return TEENY_E_NOMEM;
  pthread_mutex_lock(&c->lock);
  batch b;
  int rc = batch_alloc(&b, n);
  for (size_t i = 0; !rc && i < n; i++)
    rc = check_req(c, &reqs[i]);
  for (size_t i = 0; !rc && i < n; i++)
    effective_req(c, &reqs[i], &b.effs[i]);
  if (!rc)
    reqs = b.effs; /* from here on, the requests as sent */
  if (!rc)
    rc = batch_plan(c, &b, reqs, n, emit, out);
  if (!rc)
    teeny__client_maybe_return(c);
  if (!rc && c->active == TEENY_MODE_DAEMON) {
    rc = batch_daemon(c, &b, reqs, emit, out);
    if (give_up_daemon(c, rc))
      rc = 0;
  }
  if (!rc && c->active != TEENY_MODE_DAEMON)
    rc = batch_local(c, &b, reqs, emit, out);
  if (rc == TEENY_E_NOMEM)
    fail(c, rc, "out of memory");
  batch_free(&b);
  pthread_mutex_unlock(&c->lock);
  return rc;
}
