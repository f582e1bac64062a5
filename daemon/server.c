/*
 * daemon/server.c — listening, connections, frames, the hello gate,
 * dispatch, limits, timeouts and the orderly stop (see server.h).
 *
 * A connection's life: accepted (SO_PEERCRED read, or refused with BUSY
 * when --max-connections are open, or its uid's
 * --max-connections-per-uid) -> reading frames -> hello -> requests
 * -> closed by the peer, by a framing error (after the error reply is
 * written), by the idle or read timeout, or by the stop.  Every reply goes
 * through queue_frame(); the uv_check handle writes what queued during the
 * loop iteration.  Counters "requests" and "errors" are counted there, once
 * per reply.  Reading stops for three reasons, each tracked apart: the
 * peer lags on its replies (paused), a big frame waits for the memory
 * budget (budget_wait), or the connection is finishing.  The budget
 * (budget.h) is charged here for reader buffers and reply buffers, by
 * their allocated capacity.  Load: tens of thousands of small requests a
 * second on one thread; nothing here blocks.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/budget.h"
#include "daemon/ops.h"
#include "daemon/peer.h"
#include "daemon/quota.h"
#include "daemon/sched.h"
#include "daemon/server.h"
#include "daemon/stats.h"
#include "daemon/tune.h"

#define READ_BUF_SIZE (256u * 1024) /* shared by all connections */
#define OUT_PAUSE (16u << 20)       /* stop reading a peer that lags this much */
#define OUT_KEEP (1u << 20)         /* larger idle output buffers are freed */
#define OUT_HOG (256u * 1024)       /* unread replies that make a reader a hog */
#define OUT_STEP (1u << 20)         /* output buffers past this grow by this */
#define OUT_ERR_STEP (64u * 1024)   /* ... by this for refusals past the budget */
#define DRAIN_MS 20                 /* stop: how often to check for the end */
#define GIVE_UP_MS 1000             /* stop: grace after cancelling */
#define BACKLOG 1024
#define REFUSED_LOG_MS 1000         /* at most one "refusing" line per this */

struct teeny_conn {
  uv_pipe_t pipe;           /* the connection (pipe.data = this) */
  teeny_server *srv;        /* owner */
  teeny_frame_reader rd;    /* frames in */
  teeny_peer peer;          /* SO_PEERCRED at accept */
  uint64_t serial;          /* connection number, for logs */
  unsigned refs;            /* 1 while the handle is open + holds + dirty */
  unsigned inflight;        /* replies owed (jobs running for it) */
  bool hello;               /* hello completed */
  bool closing;             /* uv_close called */
  bool finish;              /* close once everything owed is written */
  bool reading;             /* uv_read_start is in effect */
  bool paused;              /* reading stopped: the peer lags on replies */
  uint64_t paused_ms;       /* loop time it was paused (partial frames do
                               not age meanwhile: the pause is ours) */
  bool dirty;               /* on the server's write list */
  bool writing;             /* a uv_write is in flight */
  teeny_buf out;            /* reply bytes not handed to libuv yet */
  teeny_buf wbuf;           /* bytes of the uv_write in flight */
  uv_write_t wreq;          /* that write */
  uint64_t last_ms;         /* loop time of the last traffic */
  uint64_t partial_ms;      /* loop time a partial frame started; 0: none */
  uint64_t wq_ms;           /* loop time output was last seen to move; 0:
                               nothing pending */
  size_t wq_size;           /* libuv's write queue size then */
  teeny_uid_use *use;       /* its uid's counts (NULL: refused at accept) */
  uint64_t in_charge;       /* budget bytes its frame reader holds */
  bool big;                 /* in_charge is an admitted big frame's length */
  bool budget_wait;         /* a big frame waits for the budget */
  uint64_t wait_ms;         /* loop time it began to wait */
  teeny_conn *wnext;        /* next waiting for the budget */
  uint64_t out_charge;      /* budget bytes its reply buffers hold */
  teeny_conn *prev, *next;  /* all open connections */
  teeny_conn *dnext;        /* write list */
};

struct teeny_server {
  uv_loop_t *loop;              /* the loop */
  const teeny_config *cfg;      /* settings (main's) */
  teeny_log *log;               /* main's log */
  const teeny_sd_notify *notify;/* main's notifier */
  teeny_admin_policy admin;     /* who may purge, repair, shut down */
  teeny_stats stats;            /* counters */
  teeny_sched *sched;           /* compiles, workers, memory map */
  teeny_sass *sass;             /* cubins in the background */
  teeny_tuner *tuner;           /* shared autotuning */
  uv_pipe_t listener;           /* the listening socket */
  bool listener_open;           /* listener initialised and not closed */
  int listen_fd;                /* activated fd, or -1 */
  bool bound;                   /* we created cfg->socket (unlink at exit) */
  dev_t sock_dev;               /* ... and it was this file: st_dev */
  ino_t sock_ino;               /* ... st_ino (a successor's is not ours) */
  teeny_ratelog refused_log;    /* "refusing" lines, rate-limited */
  uv_timer_t sweep;             /* idle and read timeouts */
  uv_timer_t drain;             /* during the stop */
  uv_check_t writer;            /* writes queued replies */
  uv_idle_t spin;               /* busy polling after I/O */
  bool spinning;                /* spin is active */
  uint64_t io_ns;               /* uv_hrtime() of the last read */
  teeny_conn *conns;            /* open connections */
  uint64_t nconns;              /* how many */
  uint64_t serial;              /* last connection number */
  teeny_conn *dirty;            /* connections with output to write */
  teeny_budget budget;          /* --memory-budget */
  teeny_quota quota;            /* per-uid connections and requests */
  teeny_conn *waiting;          /* big frames waiting for the budget, FIFO */
  teeny_buf scratch;            /* replies are encoded here first */
  bool stopping;                /* the stop began */
  bool drained;                 /* connections and timers are closing */
  bool cancelled;               /* the deadline passed: jobs cancelled */
  bool abandoned;               /* gave up waiting for workers */
  uint64_t stop_ms;             /* loop time the stop began */
  char rbuf[READ_BUF_SIZE];     /* read buffer, shared */
};

static void conn_close(teeny_conn *c);
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

/* ---- small helpers ----------------------------------------------------------- */

/* User text quoted in a message: 32 bytes, '?' for control/non-ASCII. */
static void quote(const char *s, char out[40]) {
  size_t i = 0;
  for (; s && s[i] && i < 32; i++)
    out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
  out[i] = '\0';
  if (s && s[i])
    memcpy(out + i, "...", 4);
}

static uint64_t now_ms(const teeny_server *s) { return uv_now(s->loop); }

/* ---- connection lifetime ----------------------------------------------------- */

static void conn_unref(teeny_conn *c) {
  if (--c->refs)
    return;
  teeny_budget *b = &c->srv->budget;
  if (c->big)
    teeny__budget_give_big(b, c->in_charge);
  else
    teeny__budget_give(b, c->in_charge);
  teeny__budget_give(b, c->out_charge);
  teeny_frame_reader_free(&c->rd);
  teeny__buf_free(&c->out);
  teeny__buf_free(&c->wbuf);
  teeny__free(c);
}

static void on_conn_closed(uv_handle_t *h) { conn_unref(h->data); }

static void list_remove(teeny_server *s, teeny_conn *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    s->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
  s->nconns--;
}

bool teeny__conn_closing(const teeny_conn *c) { return c->closing; }

static void wait_remove(teeny_server *s, teeny_conn *c) {
  teeny_conn **pp = &s->waiting;
  while (*pp && *pp != c)
    pp = &(*pp)->wnext;
  if (*pp)
    *pp = c->wnext;
  c->wnext = NULL;
  c->budget_wait = false;
}

static void conn_close(teeny_conn *c) {
  if (c->closing)
    return;
  c->closing = true;
  teeny__tuner_conn_closed(c->srv->tuner, c); /* a tuner may have died */
  list_remove(c->srv, c);
  if (c->budget_wait)
    wait_remove(c->srv, c);
  if (c->use) { /* its in-flight count goes down as its replies are done */
    c->use->conns--;
    teeny__quota_put(&c->srv->quota, c->use);
    if (!c->inflight)
      c->use = NULL;
  }
  TEENY_LOGD(c->srv->log, "connection %llu closed",
             (unsigned long long)c->serial);
  uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
}

/* Close c if it is finishing and nothing more is owed or unwritten. */
static void maybe_finish(teeny_conn *c) {
  if (c->finish && !c->closing && !c->inflight && !c->writing &&
      !c->out.len)
    conn_close(c);
}

void teeny__conn_hold(teeny_conn *c) {
  c->refs++;
  c->inflight++;
  if (c->use)
    c->use->inflight++;
}

void teeny__conn_release(teeny_conn *c) {
  c->inflight--;
  if (c->use) {
    c->use->inflight--;
    if (c->closing) {
      teeny__quota_put(&c->srv->quota, c->use);
      if (!c->inflight)
        c->use = NULL;
    }
  }
  maybe_finish(c);
  conn_unref(c);
}

teeny_job_owner teeny__conn_owner(const teeny_conn *c) {
  return (teeny_job_owner){(uint32_t)c->peer.uid, c->serial};
}

/* ---- output ------------------------------------------------------------------ */

static void mark_dirty(teeny_conn *c) {
  if (c->dirty)
    return;
  c->dirty = true;
  c->refs++;
  c->dnext = c->srv->dirty;
  c->srv->dirty = c;
}

/* Read or not, as the three reasons to stop say.  While we do not read,
 * by our own choice, a partial frame does not age: the time is added back
 * when reading starts again. */
static void update_reading(teeny_conn *c) {
  bool want = !c->paused && !c->budget_wait && !c->finish && !c->closing;
  if (want == c->reading)
    return;
  c->reading = want;
  if (want) {
    if (c->partial_ms)
      c->partial_ms += now_ms(c->srv) - c->paused_ms;
    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
  } else {
    c->paused_ms = now_ms(c->srv);
    if (!c->closing)
      uv_read_stop((uv_stream_t *)&c->pipe);
  }
}

static void pause_if_lagging(teeny_conn *c) {
  if (!c->paused && !c->closing && c->out.len + c->wbuf.len > OUT_PAUSE) {
    c->paused = true;
    update_reading(c);
  }
}

/* Charge c's reply buffers to the budget as they are now. */
static void account_output(teeny_conn *c) {
  uint64_t now = c->out.cap + c->wbuf.cap;
  teeny__budget_move(&c->srv->budget, c->out_charge, now);
  c->out_charge = now;
}

static void admit_waiting(teeny_server *s);

static void count_reply(teeny_conn *c, int status) {
  c->srv->stats.requests++;
  c->srv->stats.errors += status < 0;
  c->last_ms = now_ms(c->srv);
}

static void queued(teeny_conn *c) {
  if (c->out.oom) { /* cannot buffer replies: give the connection up */
    TEENY_LOGW(c->srv->log, "connection %llu: out of memory for replies",
               (unsigned long long)c->serial);
    conn_close(c);
    return;
  }
  account_output(c);
  mark_dirty(c);
  pause_if_lagging(c);
}

/* The capacity c's output buffer needs for len more bytes: doubling while
 * small, then in OUT_STEP steps, so that one append never takes a large
 * jump of memory past the budget. */
static size_t out_cap_for(const teeny_conn *c, size_t len, size_t step) {
  size_t need = c->out.len + len + 1, cap = c->out.cap;
  if (need <= cap)
    return cap;
  size_t next = cap < step ? (cap ? 2 * cap : 256) : cap + step;
  return next > need ? next : need;
}

/* Grow c's output buffer for len more bytes if the budget allows it with
 * reserve bytes of it kept free (force, for the small error replies:
 * regardless, and in small steps).  True if there is room. */
static bool out_room(teeny_conn *c, size_t len, uint64_t reserve, bool force) {
  teeny_budget *b = &c->srv->budget;
  size_t cap = out_cap_for(c, len, force ? OUT_ERR_STEP : OUT_STEP);
  uint64_t grow = cap - c->out.cap;
  if (grow && !force && b->used + grow + reserve > b->limit)
    return false;
  if (teeny__buf_reserve(&c->out, cap)) /* else queued() sees out.oom */
    account_output(c);
  return true;
}

/* May len more reply bytes be buffered on c?  A connection with replies
 * piled up unread (over OUT_HOG) gets its reply only within the budget
 * less a reserve, which stays for everyone else's replies (a hello, a
 * ping, a stats); no reply goes past the whole budget.  A reply that does
 * not fit is replaced by a BUSY error naming the budget (same id; errors
 * are small and always queued), and reading c pauses until its replies
 * drain and the budget has room (back-pressure: it sends no more
 * requests meanwhile). */
static bool reply_fits(teeny_conn *c, uint64_t id, size_t len) {
  teeny_budget *b = &c->srv->budget;
  bool hog = c->out.len + c->wbuf.len > OUT_HOG;
  if (out_room(c, len, hog ? b->limit / 8 : 0, false))
    return true;
  b->refused++;
  char msg[200];
  teeny__budget_message(b, "reply", len, msg, sizeof msg);
  out_room(c, strlen(msg) + 64, 0, true);
  size_t begin = teeny_frame_begin(&c->out);
  teeny_msg_error_encode(&c->out, id, TEENY_E_BUSY, msg);
  teeny_frame_end(&c->out, begin, 0);
  count_reply(c, TEENY_E_BUSY);
  queued(c);
  if (!c->paused && !c->closing) {
    c->paused = true;
    update_reading(c);
  }
  return false;
}

/* A connection paused for its replies may read again once they drained
 * and the budget has room. */
static void maybe_resume(teeny_conn *c) {
  const teeny_budget *b = &c->srv->budget;
  if (c->paused && c->out.len + c->wbuf.len < OUT_PAUSE / 2 &&
      b->used <= b->limit - b->limit / 8) {
    c->paused = false;
    update_reading(c);
  }
}

void teeny__conn_send(teeny_conn *c, uint64_t id, const char *frame,
                      size_t len, int status) {
  if (c->closing || !reply_fits(c, id, len))
    return;
  teeny__buf_append(&c->out, frame, len);
  count_reply(c, status);
  queued(c);
}

void teeny__conn_send_hit(teeny_conn *c, const teeny_mc_hit *hit,
                          uint64_t id) {
  if (c->closing || !reply_fits(c, id, hit->len))
    return;
  size_t at = c->out.len;
  teeny__buf_append(&c->out, hit->frame, hit->len);
  if (!c->out.oom)
    for (int i = 0; i < 8; i++)
      c->out.p[at + hit->id_off + (size_t)i] = (char)(id >> (56 - 8 * i));
  count_reply(c, 0);
  queued(c);
}

/* Encode r into out; a reply that cannot be encoded becomes an error. */
static int encode_into(teeny_buf *out, const teeny_msg_reply *r) {
  size_t begin = teeny_frame_begin(out);
  int rc = teeny_msg_reply_encode(r, out);
  if (!rc && !(rc = teeny_frame_end(out, begin, 0)))
    return r->status;
  out->len = begin;
  begin = teeny_frame_begin(out);
  int status = rc == TEENY_E_TOOBIG ? TEENY_E_TOOBIG : TEENY_E_INTERNAL;
  teeny_msg_error_encode(out, r->id, status,
                         rc == TEENY_E_TOOBIG ? "reply over the frame limit"
                                              : "reply could not be encoded");
  teeny_frame_end(out, begin, 0);
  return status;
}

void teeny__conn_reply(teeny_conn *c, const teeny_msg_reply *r) {
  if (c->closing)
    return;
  teeny_buf *sb = &c->srv->scratch;
  sb->len = 0;
  sb->oom = false;
  int status = encode_into(sb, r);
  if (sb->oom) {
    sb->len = 0;
    sb->oom = false;
    status = encode_into(sb, &(teeny_msg_reply){.id = r->id,
                                                .status = TEENY_E_NOMEM,
                                                .error = "out of memory"});
  }
  teeny__conn_send(c, r->id, sb->p, sb->len, status);
  if (sb->cap > OUT_KEEP)
    teeny__buf_free(sb);
}

static void reply_error(teeny_conn *c, uint64_t id, int status,
                        const char *msg) {
  teeny_msg_reply r;
  memset(&r, 0, sizeof r);
  r.id = id;
  r.status = status;
  r.error = msg;
  teeny__conn_reply(c, &r);
}

/* A framing or hello error: answer, then close once it is written. */
static void reply_fatal(teeny_conn *c, uint64_t id, int status,
                        const char *msg) {
  reply_error(c, id, status, msg);
  c->finish = true;
  update_reading(c);
}

static void on_written(uv_write_t *req, int status) {
  teeny_conn *c = req->data;
  c->writing = false;
  c->wq_ms = 0; /* the peer read: progress */
  c->wbuf.len = 0;
  if (c->wbuf.cap > OUT_KEEP)
    teeny__buf_free(&c->wbuf);
  account_output(c);
  if (status < 0 || c->closing) {
    conn_close(c);
  } else {
    if (c->out.len)
      mark_dirty(c);
    maybe_resume(c);
    maybe_finish(c);
  }
  admit_waiting(c->srv);
  conn_unref(c); /* the write's reference */
}

/* Write c->out: as much as the socket takes now, the rest with uv_write. */
static void flush_conn(teeny_conn *c) {
  if (c->closing || c->writing || !c->out.len)
    return;
  uv_buf_t b = uv_buf_init(c->out.p, (unsigned)c->out.len);
  int n = uv_try_write((uv_stream_t *)&c->pipe, &b, 1);
  if (n == UV_EAGAIN)
    n = 0;
  if (n < 0) {
    conn_close(c);
    return;
  }
  if ((size_t)n == c->out.len) {
    c->out.len = 0;
    if (c->out.cap > OUT_KEEP)
      teeny__buf_free(&c->out);
    account_output(c);
    maybe_finish(c);
    return;
  }
  teeny_buf t = c->wbuf; /* empty: no write in flight */
  c->wbuf = c->out;
  c->out = t;
  c->out.len = 0;
  b = uv_buf_init(c->wbuf.p + n, (unsigned)(c->wbuf.len - (size_t)n));
  c->wreq.data = c;
  if (uv_write(&c->wreq, (uv_stream_t *)&c->pipe, &b, 1, on_written)) {
    conn_close(c);
    return;
  }
  c->writing = true;
  c->refs++;
  account_output(c);
}

static void on_check(uv_check_t *h) {
  teeny_server *s = h->data;
  while (s->dirty) {
    teeny_conn *c = s->dirty;
    s->dirty = c->dnext;
    c->dirty = false;
    flush_conn(c);
    conn_unref(c);
  }
}

/* ---- requests ---------------------------------------------------------------- */

static void reply_ok(teeny_conn *c, teeny_proto_op op, uint64_t id) {
  teeny_msg_reply r;
  memset(&r, 0, sizeof r);
  r.op = op;
  r.id = id;
  teeny__conn_reply(c, &r);
}

static void do_hello(teeny_conn *c, int rc, const teeny_msg_request *req,
                     const char *err) {
  const teeny_config *cfg = c->srv->cfg;
  char msg[TEENY_PROTO_ERR_LEN + 64];
  if (rc || req->op != TEENY_OP_HELLO) {
    snprintf(msg, sizeof msg, "expected hello%s%s", rc ? ": " : "",
             rc ? err : "");
    reply_fatal(c, req->id, TEENY_E_PROTO, msg);
    return;
  }
  if (req->u.hello.version != TEENY_PROTO_VERSION) {
    snprintf(msg, sizeof msg,
             "protocol version %u is not supported; this server speaks %d",
             req->u.hello.version, TEENY_PROTO_VERSION);
    reply_fatal(c, req->id, TEENY_E_VERSION, msg);
    return;
  }
  teeny_msg_reply r;
  memset(&r, 0, sizeof r);
  r.op = TEENY_OP_HELLO;
  r.id = req->id;
  r.u.hello = (teeny_msg_hello_reply){
      TEENY_PROTO_VERSION, "teenycd/" TEENY_VERSION_STRING,
      (uint32_t)cfg->max_frame, (uint32_t)cfg->max_source,
      (uint32_t)cfg->max_inflight};
  c->hello = true;
  teeny__conn_reply(c, &r);
  TEENY_LOGD(c->srv->log, "connection %llu: hello from %s (pid %u, uid %u)",
             (unsigned long long)c->serial, req->u.hello.client,
             (unsigned)c->peer.pid, (unsigned)c->peer.uid);
}

/* Refuse an admin op to a non-admin; true when refused. */
static bool refuse_non_admin(teeny_conn *c, const teeny_msg_request *req) {
  teeny_server *s = c->srv;
  if (teeny__peer_is_admin(&s->admin, &c->peer))
    return false;
  char msg[160];
  const char *op = req->op == TEENY_OP_VERIFY  ? "verify --repair"
                   : req->op == TEENY_OP_STATS ? "stats --zero"
                                               : teeny_proto_op_name(req->op);
  teeny__perm_message(&s->admin, op, msg, sizeof msg);
  TEENY_LOGI(s->log, "uid %u (pid %u) refused: %s", (unsigned)c->peer.uid,
             (unsigned)c->peer.pid, msg);
  reply_error(c, req->id, TEENY_E_PERM, msg);
  return true;
}

/* Checks the loop does before a compile reaches the scheduler. */
static bool compile_refused(teeny_conn *c, const teeny_msg_request *req) {
  const teeny_compile_req *r = &req->u.compile.req;
  char msg[160], q[40];
  if (r->source_len > c->srv->cfg->max_source) {
    snprintf(msg, sizeof msg, "field 'source': %zu bytes, over the limit of %llu",
             r->source_len, (unsigned long long)c->srv->cfg->max_source);
    reply_error(c, req->id, TEENY_E_LIMIT, msg);
    return true;
  }
  if (req->u.compile.arch && teeny_store_arch_check(req->u.compile.arch)) {
    quote(req->u.compile.arch, q);
    snprintf(msg, sizeof msg,
             "field 'arch': '%s' is not a GPU architecture (sm_ and 2 or 3 digits)", q);
    reply_error(c, req->id, TEENY_E_INVAL, msg);
    return true;
  }
  if (teeny_store_name_check(r->kernel, strlen(r->kernel))) {
    quote(r->kernel, q);
    snprintf(msg, sizeof msg,
             "invalid kernel name '%s': want a C identifier of at most %d "
             "characters",
             q, TEENY_MAX_NAME_LEN);
    reply_error(c, req->id, TEENY_E_NAME, msg);
    return true;
  }
  return false;
}

static void snapshot(const teeny_server *s, teeny_stats_snap *snap) {
  snap->s = s->stats;
  snap->memcache_entries = teeny__memcache_entries(s->sched->mc);
  snap->memcache_bytes = teeny__memcache_bytes(s->sched->mc);
  snap->connections = s->nconns;
  snap->uids = s->quota.uids;
  snap->memory_budget = s->budget.limit;
  snap->memory_used = s->budget.used;
  snap->memory_peak = s->budget.peak;
  snap->memory_refused = s->budget.refused;
  memset(&snap->remote, 0, sizeof snap->remote);
  if (s->sched->remote)
    teeny__remote_counters(s->sched->remote, &snap->remote);
  teeny__sass_counts(s->sass, &snap->sass);
  teeny_tune_counts tc;
  teeny__tuner_counts(s->tuner, &tc);
  snap->tunings = tc.tunings;
  snap->tune_hits = tc.hits;
  snap->tune_joins = tc.joins;
  snap->max_bytes = s->cfg->max_size;
  snap->store = s->cfg->cache_dir;
}

/* stats with zero: counters restart from 0 (uptime does not). */
static void zero_counters(teeny_server *s) {
  uint64_t start = s->stats.start_ns;
  teeny__stats_init(&s->stats);
  s->stats.start_ns = start;
  TEENY_LOGI(s->log, "counters reset");
}

static void do_shutdown_op(teeny_conn *c, const teeny_msg_request *req) {
  if (refuse_non_admin(c, req))
    return;
  reply_ok(c, TEENY_OP_SHUTDOWN, req->id);
  char why[64];
  snprintf(why, sizeof why, "shutdown requested by uid %u",
           (unsigned)c->peer.uid);
  teeny__server_stop(c->srv, why);
}

/* config: every setting as resolved, answered on the loop (no I/O). */
static void do_config_op(teeny_conn *c, const teeny_msg_request *req) {
  size_t n = teeny__config_count() + 1;
  teeny_msg_setting *v = teeny__calloc(n, sizeof *v);
  char (*text)[TEENY_CONFIG_VALUE_LEN] = teeny__calloc(n, sizeof *text);
  if (!v || !text) {
    reply_error(c, req->id, TEENY_E_NOMEM, NULL);
    goto done;
  }
  for (size_t i = 0; i + 1 < n; i++) {
    teeny__config_value(c->srv->cfg, i, text[i], sizeof text[i]);
    v[i] = (teeny_msg_setting){teeny__config_key(i), text[i]};
  }
  snprintf(text[n - 1], sizeof text[n - 1], "%s",
           c->srv->cfg->config_file ? c->srv->cfg->config_file : "");
  v[n - 1] = (teeny_msg_setting){"config", text[n - 1]};
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.op = TEENY_OP_CONFIG;
  rep.id = req->id;
  rep.u.config = (teeny_msg_config_reply){v, n};
  teeny__conn_reply(c, &rep);
done:
  teeny__free(v);
  teeny__free(text);
}

static void reply_busy_uid(teeny_conn *c, uint64_t id) {
  char msg[128];
  snprintf(msg, sizeof msg,
           "too many requests in flight for uid %u (--max-inflight-per-uid "
           "%llu)",
           (unsigned)c->peer.uid,
           (unsigned long long)c->srv->cfg->max_inflight_per_uid);
  reply_error(c, id, TEENY_E_BUSY, msg);
}

/* Dispatch one decoded request; takes req. */
static void dispatch(teeny_conn *c, teeny_msg_request *req) {
  teeny_server *s = c->srv;
  teeny_stats_snap snap;
  if (req->op == TEENY_OP_PING)
    reply_ok(c, TEENY_OP_PING, req->id);
  else if (req->op == TEENY_OP_CONFIG)
    do_config_op(c, req);
  else if (req->op == TEENY_OP_HELLO)
    reply_error(c, req->id, TEENY_E_PROTO, "hello was already done");
  else if (req->op == TEENY_OP_SHUTDOWN)
    do_shutdown_op(c, req);
  else if (s->stopping)
    reply_error(c, req->id, TEENY_E_SHUTDOWN, NULL);
  else if (c->inflight >= s->cfg->max_inflight)
    reply_error(c, req->id, TEENY_E_BUSY,
                "too many requests in flight on this connection");
  else if (c->use && c->use->inflight >= s->cfg->max_inflight_per_uid)
    reply_busy_uid(c, req->id);
  else if (req->op == TEENY_OP_COMPILE) {
    if (!compile_refused(c, req))
      teeny__sched_compile(s->sched, c, req);
  } else if (req->op == TEENY_OP_STATS) {
    if (req->u.stats.zero && refuse_non_admin(c, req))
      goto done;
    snapshot(s, &snap);
    if (req->u.stats.zero)
      zero_counters(s);
    teeny__ops_stats(s->sched, c, req->id, &snap);
  } else if (req->op == TEENY_OP_TUNE || req->op == TEENY_OP_TUNE_DONE) {
    teeny__tuner_request(s->tuner, c, req);
  } else if (req->op == TEENY_OP_TUNED ||
             (req->op == TEENY_OP_TUNED_PURGE && !refuse_non_admin(c, req))) {
    teeny__tuner_admin(s->tuner, c, req);
  } else if (req->op == TEENY_OP_TUNED_PURGE ||
             ((req->op == TEENY_OP_PURGE ||
               (req->op == TEENY_OP_VERIFY && req->u.verify.repair)) &&
              refuse_non_admin(c, req))) {
    /* refused */
  } else {
    teeny__ops_store(s->sched, c, req);
  }
done:
  teeny_msg_request_free(req); /* a no-op when it was taken */
}

static void on_frame(teeny_conn *c, const char *p, size_t n) {
  teeny_msg_request req;
  char err[TEENY_PROTO_ERR_LEN] = "";
  int rc = teeny_msg_request_decode(p, n, &req, err);
  if (!c->hello)
    do_hello(c, rc, &req, err);
  else if (rc)
    reply_error(c, req.id, rc, err[0] ? err : NULL);
  else {
    dispatch(c, &req);
    return;
  }
  teeny_msg_request_free(&req);
}

static void frame_error(teeny_conn *c, int rc) {
  char msg[96];
  const unsigned char *h = c->rd.hdr;
  uint32_t len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
                 (uint32_t)h[2] << 8 | h[3];
  if (rc == TEENY_E_TOOBIG)
    snprintf(msg, sizeof msg, "frame of %u bytes is over the limit of %llu",
             len, (unsigned long long)c->srv->cfg->max_frame);
  else if (rc == TEENY_E_PROTO)
    snprintf(msg, sizeof msg, "frame length 0");
  else
    snprintf(msg, sizeof msg, "%s", teeny_strerror(rc));
  TEENY_LOGD(c->srv->log, "connection %llu: %s", (unsigned long long)c->serial,
             msg);
  reply_fatal(c, 0, rc, msg);
}

/* ---- reading ----------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  teeny_conn *c = h->data;
  *buf = uv_buf_init(c->srv->rbuf, READ_BUF_SIZE);
}

static void on_eof(teeny_conn *c, ssize_t nread) {
  if (nread != UV_EOF) {
    conn_close(c);
    return;
  }
  c->finish = true; /* answer what was asked, then close */
  update_reading(c);
  maybe_finish(c);
}

/* ---- busy polling --------------------------------------------------------------
 * Waking a sleeping thread costs tens of microseconds on a VM (the idle
 * vCPU halts); a client that sends its next request right after a reply
 * would pay that on every call.  So after a read the loop keeps polling
 * (an active idle handle makes uv_run poll with timeout 0) for
 * --busy-poll-us before it blocks again.  Costs CPU only while traffic
 * flows. */

static void on_spin(uv_idle_t *h) {
  teeny_server *s = h->data;
  if (uv_hrtime() - s->io_ns > s->cfg->busy_poll_us * 1000) {
    uv_idle_stop(&s->spin);
    s->spinning = false;
    return;
  }
  sched_yield(); /* a peer runnable on this CPU goes first */
}

static void keep_polling(teeny_server *s) {
  if (!s->cfg->busy_poll_us)
    return;
  s->io_ns = uv_hrtime();
  if (!s->spinning && !s->drained) {
    uv_idle_start(&s->spin, on_spin);
    s->spinning = true;
  }
}

/* ---- the memory budget for frames ---------------------------------------------
 * After every read: a frame too big for one read must be admitted when its
 * prefix has come (its whole length reserved), or wait with reading
 * paused; anything else is charged as the reader buffers it. */

static void budget_wait(teeny_conn *c) {
  teeny_server *s = c->srv;
  c->budget_wait = true;
  c->wait_ms = now_ms(s);
  teeny_conn **pp = &s->waiting;
  while (*pp)
    pp = &(*pp)->wnext;
  *pp = c;
  c->wnext = NULL;
  update_reading(c);
}

/* Reserve c's big frame; true if it may be read on. */
static bool admit_big(teeny_conn *c, uint32_t need) {
  teeny_budget *b = &c->srv->budget;
  teeny__budget_give(b, c->in_charge); /* the small charge it held */
  c->in_charge = 0;
  if (!teeny__budget_take_big(b, need)) {
    c->in_charge = c->rd.body_cap;
    teeny__budget_move(b, 0, c->in_charge);
    return false;
  }
  c->big = true;
  c->in_charge = need;
  return true;
}

static void account_input(teeny_conn *c) {
  teeny_budget *b = &c->srv->budget;
  const teeny_frame_reader *rd = &c->rd;
  bool partial = rd->hdr_len == TEENY_FRAME_PREFIX && !rd->handed;
  bool big = partial && rd->need > TEENY_BUDGET_SMALL_FRAME;
  if (c->big && !big) { /* its big frame is done */
    teeny__budget_give_big(b, c->in_charge);
    c->big = false;
    c->in_charge = 0;
  }
  if (big && !c->big && !c->budget_wait) {
    char msg[200];
    if (teeny__budget_never(b, rd->need)) {
      teeny__budget_message(b, "frame", rd->need, msg, sizeof msg);
      reply_fatal(c, 0, TEENY_E_TOOBIG, msg);
    } else if (!admit_big(c, rd->need)) {
      budget_wait(c);
    }
    return;
  }
  if (!c->big) {
    teeny__budget_move(b, c->in_charge, rd->body_cap);
    c->in_charge = rd->body_cap;
  }
}

/* Memory was freed: admit waiting frames, oldest first, while they fit. */
static void admit_waiting(teeny_server *s) {
  while (s->waiting) {
    teeny_conn *c = s->waiting;
    if (!admit_big(c, c->rd.need))
      return;
    s->waiting = c->wnext;
    c->wnext = NULL;
    c->budget_wait = false;
    update_reading(c);
  }
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  teeny_conn *c = st->data;
  keep_polling(c->srv);
  if (nread < 0) {
    on_eof(c, nread);
    return;
  }
  if (nread == 0 || c->finish || c->closing)
    return;
  c->last_ms = now_ms(c->srv);
  const char *p;
  size_t n;
  int rc = teeny_frame_reader_feed(&c->rd, buf->base, (size_t)nread);
  while (!rc && !c->finish && !c->closing &&
         (rc = teeny_frame_reader_next(&c->rd, &p, &n)) == 1) {
    on_frame(c, p, n);
    rc = 0;
  }
  if (rc < 0 && !c->finish && !c->closing)
    frame_error(c, rc);
  if (c->rd.hdr_len == 0)
    c->partial_ms = 0;
  else if (!c->partial_ms)
    c->partial_ms = c->last_ms ? c->last_ms : 1;
  if (!c->closing)
    account_input(c);
  admit_waiting(c->srv);
}

/* ---- accepting --------------------------------------------------------------- */

/* Refuse c at accept: one rate-limited log line, a BUSY reply, close. */
static void refuse_conn(teeny_server *s, teeny_conn *c, const char *why) {
  uint64_t missed;
  if (teeny__ratelog_allow(&s->refused_log, now_ms(s), &missed))
    TEENY_LOGW(s->log,
               "refusing uid %u (pid %u): %s (%llu more refused since the "
               "last such line)",
               (unsigned)c->peer.uid, (unsigned)c->peer.pid, why,
               (unsigned long long)missed);
  reply_fatal(c, 0, TEENY_E_BUSY, why);
}

static void start_conn(teeny_server *s, teeny_conn *c) {
  int fd = -1;
  uv_fileno((uv_handle_t *)&c->pipe, &fd);
  if (teeny__peer_get(fd, &c->peer)) {
    conn_close(c);
    return;
  }
  TEENY_LOGD(s->log, "connection %llu from pid %u uid %u",
             (unsigned long long)c->serial, (unsigned)c->peer.pid,
             (unsigned)c->peer.uid);
  char why[128];
  if (s->nconns > s->cfg->max_connections) {
    snprintf(why, sizeof why, "too many connections (%llu open)",
             (unsigned long long)(s->nconns - 1));
    refuse_conn(s, c, why);
    return;
  }
  teeny_uid_use *use = teeny__quota_get(&s->quota, (uint32_t)c->peer.uid);
  if (!use || use->conns >= s->cfg->max_connections_per_uid) {
    snprintf(why, sizeof why,
             "too many connections from uid %u (--max-connections-per-uid "
             "%llu)",
             (unsigned)c->peer.uid,
             (unsigned long long)s->cfg->max_connections_per_uid);
    if (use)
      teeny__quota_put(&s->quota, use);
    refuse_conn(s, c, use ? why : "out of memory");
    return;
  }
  use->conns++;
  c->use = use;
  update_reading(c);
}

static void on_connection(uv_stream_t *server, int status) {
  teeny_server *s = server->data;
  if (status < 0 || s->stopping)
    return;
  teeny_conn *c = teeny__calloc(1, sizeof *c);
  if (!c)
    return;
  uv_pipe_init(s->loop, &c->pipe, 0);
  c->pipe.data = c;
  c->srv = s;
  c->refs = 1;
  c->serial = ++s->serial;
  c->last_ms = now_ms(s);
  teeny_frame_reader_init(&c->rd, (uint32_t)s->cfg->max_frame);
  c->next = s->conns;
  if (s->conns)
    s->conns->prev = c;
  s->conns = c;
  s->nconns++;
  if (uv_accept(server, (uv_stream_t *)&c->pipe)) {
    conn_close(c);
    return;
  }
  start_conn(s, c);
}

/* ---- timeouts ---------------------------------------------------------------- */

/* Output pending and not moving for the read timeout: the peer does not
 * read its replies (they may hold up to OUT_PAUSE of our memory).  True
 * when c was closed. */
static bool write_stalled(teeny_server *s, teeny_conn *c, uint64_t now) {
  if (!c->writing && !c->out.len) {
    c->wq_ms = 0;
    return false;
  }
  size_t q = c->writing
                 ? uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe)
                 : c->out.len;
  if (!c->wq_ms || q < c->wq_size) {
    c->wq_ms = now;
    c->wq_size = q;
    return false;
  }
  if (now - c->wq_ms < s->cfg->read_timeout_ms)
    return false;
  TEENY_LOGI(s->log, "connection %llu (uid %u): %zu reply bytes unread for "
                     "%llu ms; closing",
             (unsigned long long)c->serial, (unsigned)c->peer.uid,
             q + c->out.len, (unsigned long long)(now - c->wq_ms));
  conn_close(c);
  return true;
}

static void sweep_one(teeny_server *s, teeny_conn *c, uint64_t now) {
  const teeny_config *cfg = s->cfg;
  if (write_stalled(s, c, now))
    return;
  maybe_resume(c);
  if (c->budget_wait && now - c->wait_ms >= cfg->read_timeout_ms) {
    char msg[200];
    teeny__budget_message(&s->budget, "frame", c->rd.need, msg, sizeof msg);
    TEENY_LOGI(s->log, "connection %llu (uid %u): %s; closing",
               (unsigned long long)c->serial, (unsigned)c->peer.uid, msg);
    wait_remove(s, c);
    reply_fatal(c, 0, TEENY_E_BUSY, msg);
  } else if (c->partial_ms && c->reading &&
             now - c->partial_ms >= cfg->read_timeout_ms) {
    TEENY_LOGI(s->log, "connection %llu (uid %u): frame incomplete after "
                       "%llu ms; closing",
               (unsigned long long)c->serial, (unsigned)c->peer.uid,
               (unsigned long long)(now - c->partial_ms));
    reply_error(c, 0, TEENY_E_TIMEOUT, "frame incomplete: read timeout");
    flush_conn(c);
    conn_close(c);
  } else if (c->finish && now - c->last_ms >= cfg->read_timeout_ms &&
             !c->inflight) {
    conn_close(c); /* its peer does not read its last reply */
  } else if (cfg->idle_timeout_ms && !c->inflight && !c->partial_ms &&
             !c->writing && !c->out.len &&
             now - c->last_ms >= cfg->idle_timeout_ms) {
    TEENY_LOGD(s->log, "connection %llu idle; closing",
               (unsigned long long)c->serial);
    conn_close(c);
  }
}

static void on_sweep(uv_timer_t *t) {
  teeny_server *s = t->data;
  uint64_t now = now_ms(s);
  uint64_t missed = teeny__ratelog_due(&s->refused_log, now);
  if (missed)
    TEENY_LOGW(s->log, "%llu more refused connection(s) not logged",
               (unsigned long long)missed);
  admit_waiting(s);
  for (teeny_conn *c = s->conns, *nx; c; c = nx) {
    nx = c->next;
    sweep_one(s, c, now);
  }
}

static uint64_t sweep_interval(const teeny_config *cfg) {
  uint64_t iv = 1000;
  if (cfg->read_timeout_ms / 4 < iv)
    iv = cfg->read_timeout_ms / 4;
  if (cfg->idle_timeout_ms && cfg->idle_timeout_ms / 4 < iv)
    iv = cfg->idle_timeout_ms / 4;
  return iv < 10 ? 10 : iv;
}

/* ---- listening --------------------------------------------------------------- */

/* A socket file at path: replace it when nobody answers, refuse otherwise. */
static int clear_stale(teeny_server *s, const char *path, char *err,
                       size_t errsz) {
  struct stat st;
  if (lstat(path, &st))
    return 0;
  if (!S_ISSOCK(st.st_mode)) {
    snprintf(err, errsz, "%s exists and is not a socket; not replacing it",
             path);
    return TEENY_E_IO;
  }
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof a);
  int e = errno;
  if (fd >= 0)
    close(fd);
  if (rc == 0) {
    snprintf(err, errsz,
             "another teenycd is already listening on %s; not starting a "
             "second one",
             path);
    return TEENY_E_BUSY;
  }
  if (e != ECONNREFUSED) {
    snprintf(err, errsz, "cannot check socket %s: %s", path, strerror(e));
    return TEENY_E_IO;
  }
  if (unlink(path) && errno != ENOENT) {
    snprintf(err, errsz, "cannot remove stale socket %s: %s", path,
             strerror(errno));
    return TEENY_E_IO;
  }
  TEENY_LOGI(s->log, "removed stale socket %s", path);
  return 0;
}

static int bind_socket(teeny_server *s, char *err, size_t errsz) {
  const char *path = s->cfg->socket;
  int rc = clear_stale(s, path, err, errsz);
  if (rc)
    return rc;
  char dir[sizeof ((struct sockaddr_un *)0)->sun_path];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    /* the last component only: a missing parent is the admin's to make */
    if (mkdir(dir, 0755) && errno == ENOENT) {
      char *up = strrchr(dir, '/');
      if (up && up != dir)
        *up = '\0';
      snprintf(err, errsz,
               "cannot bind %s: %s: no such directory (teenycd creates only "
               "the socket's own directory)",
               path, dir);
      return TEENY_E_IO;
    }
  }
  mode_t old = umask(0177); /* no window with a wider mode */
  int e = uv_pipe_bind(&s->listener, path);
  umask(old);
  if (e) {
    snprintf(err, errsz, "cannot bind %s: %s", path, uv_strerror(e));
    return TEENY_E_IO;
  }
  s->bound = true;
  struct stat st;
  if (lstat(path, &st) == 0) {
    s->sock_dev = st.st_dev;
    s->sock_ino = st.st_ino;
  }
  if (chmod(path, s->cfg->socket_mode)) {
    snprintf(err, errsz, "chmod %s: %s", path, strerror(errno));
    return TEENY_E_IO;
  }
  return 0;
}

int teeny__server_listen(teeny_server *s, char *err, size_t errsz) {
  uv_pipe_init(s->loop, &s->listener, 0);
  s->listener.data = s;
  s->listener_open = true;
  int rc = 0, e;
  if (s->listen_fd >= 0) {
    if ((e = uv_pipe_open(&s->listener, s->listen_fd))) {
      snprintf(err, errsz, "activated socket: %s", uv_strerror(e));
      return TEENY_E_IO;
    }
  } else if ((rc = bind_socket(s, err, errsz))) {
    return rc;
  }
  if ((e = uv_listen((uv_stream_t *)&s->listener, BACKLOG, on_connection))) {
    snprintf(err, errsz, "listen on %s: %s", s->cfg->socket, uv_strerror(e));
    return TEENY_E_IO;
  }
  return 0;
}

/* ---- the stop ---------------------------------------------------------------- */

static void close_handles(teeny_server *s) {
  if (s->drained)
    return;
  s->drained = true;
  uv_close((uv_handle_t *)&s->sweep, NULL);
  uv_close((uv_handle_t *)&s->drain, NULL);
  uv_close((uv_handle_t *)&s->writer, NULL);
  uv_close((uv_handle_t *)&s->spin, NULL);
  teeny__sched_close(s->sched);
  teeny__sass_stop(s->sass);
}

/* Past the deadline: cancel what has not started and drop the
 * connections, once; if running compiles still do not end within
 * GIVE_UP_MS more, stop the loop without them. */
static void give_up(teeny_server *s, uint64_t waited) {
  unsigned busy = teeny__sched_busy(s->sched);
  if (!s->cancelled) {
    s->cancelled = true;
    TEENY_LOGW(s->log, "%u job(s) still running after %llu ms; cancelling",
               busy, (unsigned long long)waited);
    teeny__sched_cancel(s->sched); /* their waiters get SHUTDOWN replies */
    return;
  }
  if (waited < s->cfg->shutdown_timeout_ms + GIVE_UP_MS)
    return;
  TEENY_LOGE(s->log, "%u compile(s) did not finish; exiting without them",
             busy);
  s->abandoned = true;
  uv_stop(s->loop);
}

/* Every DRAIN_MS during the stop: once no job runs, finish the
 * connections (each closes when its replies are written); past the
 * deadline, cancel and close. */
static void on_drain(uv_timer_t *t) {
  teeny_server *s = t->data;
  uint64_t waited = now_ms(s) - s->stop_ms;
  if (teeny__sched_busy(s->sched)) {
    if (waited >= s->cfg->shutdown_timeout_ms)
      give_up(s, waited);
    return;
  }
  for (teeny_conn *c = s->conns, *nx; c; c = nx) {
    nx = c->next;
    c->finish = true;
    if (waited >= s->cfg->shutdown_timeout_ms + GIVE_UP_MS)
      conn_close(c); /* its last replies are not being read */
    else
      maybe_finish(c);
  }
  if (!s->nconns)
    close_handles(s);
}

void teeny__server_stop(teeny_server *s, const char *why) {
  if (s->stopping)
    return;
  s->stopping = true;
  s->stop_ms = now_ms(s);
  TEENY_LOGI(s->log, "stopping (%s); %u job(s) in flight", why,
             teeny__sched_busy(s->sched));
  teeny__sd_notify(s->notify, "STOPPING=1\nSTATUS=stopping");
  teeny__tuner_stop(s->tuner); /* its waiters would hold their connections */
  if (s->listener_open) {
    uv_close((uv_handle_t *)&s->listener, NULL);
    s->listener_open = false;
  }
  uv_timer_start(&s->drain, on_drain, 0, DRAIN_MS);
}

bool teeny__server_abandoned(const teeny_server *s) { return s->abandoned; }

/* ---- lifetime ---------------------------------------------------------------- */

/* A SASS job ended (loop thread): replies of its key now carry a cubin. */
static void on_sass_done(void *ctx, const teeny_sass_done *d) {
  teeny_server *s = ctx;
  if (d->stored && s->sched)
    teeny__sched_forget(s->sched, d->key);
}

int teeny__server_create(uv_loop_t *loop, const teeny_server_opts *o,
                         teeny_server **out, char *err, size_t errsz) {
  *out = NULL;
  teeny_server *s = teeny__calloc(1, sizeof *s);
  if (!s)
    return TEENY_E_NOMEM;
  s->loop = loop;
  s->cfg = o->cfg;
  s->log = o->log;
  s->notify = o->notify;
  s->listen_fd = o->listen_fd;
  teeny__stats_init(&s->stats);
  s->stats.index_rebuilds = o->index_rebuilds;
  s->refused_log.interval_ms = REFUSED_LOG_MS;
  teeny__budget_init(&s->budget, o->cfg->memory_budget);
  teeny__quota_init(&s->quota);
  int rc = teeny__admin_policy_init(&s->admin, o->cfg->admin_group, err, errsz);
  if (rc)
    goto fail;
  teeny_store_opts so = {.root = o->cfg->cache_dir,
                         .dir_mode = TEENY_DAEMON_DIR_MODE,
                         .file_mode = TEENY_DAEMON_FILE_MODE};
  char exe[4096];
  if (teeny__helper_self_exe(exe, sizeof exe)) {
    snprintf(err, errsz, "cannot find teenycd's own executable for the "
                         "compile processes (/proc/self/exe)");
    rc = TEENY_E_IO;
    goto fail;
  }
  teeny_sched_opts sopts = {loop,
                            o->log,
                            &s->stats,
                            &so,
                            o->cfg->workers,
                            o->cfg->store_workers,
                            o->cfg->admin_workers,
                            &s->budget,
                            o->cfg->max_size,
                            o->cfg->memcache_size,
                            o->cfg->flush_interval_ms,
                            {exe, o->cfg->compile_timeout_ms,
                             o->cfg->compile_memory, o->log},
                            NULL};
  const teeny_config *cf = o->cfg;
  teeny_remote_opts ropts = {loop, o->log, cf->remote, cf->remote_timeout_ms,
                             cf->remote_lease_ms, cf->remote_wait_ms, cf->remote_ttl_ms,
                             cf->remote_max_entry, cf->remote_prefix,
                             cf->remote_secret_file};
  if (cf->remote) {
    teeny_remote_addr addr;
    char rerr[TEENY_REMOTE_ERR_LEN];
    if ((rc = teeny__remote_url_parse(cf->remote, &addr, rerr))) {
      snprintf(err, errsz, "--remote: %s", rerr);
      goto fail;
    }
    sopts.remote = &ropts;
  }
  char serr[TEENY_STORE_ERR_LEN] = "";
  if ((rc = teeny__sched_create(&sopts, &s->sched, serr))) {
    if (strncmp(serr, "remote", 6) == 0) /* the remote tier's own message */
      snprintf(err, errsz, "%s", serr);
    else
      snprintf(err, errsz, "store %s: %s", o->cfg->cache_dir, serr);
    goto fail;
  }
  teeny_sass_opts ao = {loop, o->log, &so, o->cfg->sass, o->cfg->ptxas, exe,
                        o->cfg->sass_timeout_ms, on_sass_done, s};
  if ((rc = teeny__sass_create(&ao, &s->sass, serr))) { /* last: it starts a thread */
    snprintf(err, errsz, "SASS lane: %s", serr);
    goto fail;
  }
  s->sched->sass = s->sass;
  if ((rc = teeny__tuner_create(loop, o->log, s->sched->lanes, o->cfg->tune_timeout_ms,
                                &s->tuner))) {
    snprintf(err, errsz, "out of memory");
    goto fail;
  }
  uv_timer_init(loop, &s->sweep);
  uv_timer_init(loop, &s->drain);
  uv_check_init(loop, &s->writer);
  uv_idle_init(loop, &s->spin);
  s->sweep.data = s->drain.data = s->writer.data = s->spin.data = s;
  uint64_t iv = sweep_interval(o->cfg);
  uv_timer_start(&s->sweep, on_sweep, iv, iv);
  uv_check_start(&s->writer, on_check);
  *out = s;
  return 0;
fail:
  teeny__free(s);
  return rc;
}

/* Remove the socket file we bound, and only that one: libuv unlinks it
 * when the listener closes, and a successor (another daemon, maybe on
 * another store) may have bound the path since; its file is not ours. */
static void remove_own_socket(teeny_server *s) {
  struct stat st;
  const char *path = s->cfg->socket;
  if (!s->bound || lstat(path, &st))
    return;
  if (st.st_dev != s->sock_dev || st.st_ino != s->sock_ino) {
    TEENY_LOGI(s->log, "socket %s is not ours any more (a successor bound "
                       "it); leaving it",
               path);
    return;
  }
  if (unlink(path) && errno != ENOENT)
    TEENY_LOGW(s->log, "cannot remove %s: %s", path, strerror(errno));
}

void teeny__server_destroy(teeny_server *s) {
  if (!s)
    return;
  teeny__sass_destroy(s->sass);
  teeny__tuner_destroy(s->tuner);
  teeny__sched_destroy(s->sched);
  remove_own_socket(s);
  teeny__quota_close(&s->quota);
  teeny__buf_free(&s->scratch);
  teeny__free(s);
}
