/*
 * daemon/remote.c — the remote tier's thread: lookups with a cluster-wide
 * lease, waits on other nodes' leases, renewals, uploads and releases
 * (see remote.h; keys and values in docs/remote.md).
 *
 * A lookup:  GETRANGE e 0 max            hit: verify -> HIT (or rejected)
 *            SET l token NX PX lease;    won and no entry: LEASED
 *            GET l; EXISTS e             lost: wait on the holder
 * The holder uploads the entry *before* it deletes its lease, so a lease
 * seen gone (GET l, then EXISTS e, in that order) with no entry means the
 * holder died or gave up: the waiter tries to take the lease over.  A
 * holder whose compile failed marks the lease "failed" for a moment: its
 * waiters compile at once.  Waits poll every 5 ms, growing to 50 ms, for at
 * most --remote-wait.
 *
 * Threads: the loop thread queues (lookup, upload, release) under mu and
 * takes outcomes from the done list in its async callback; everything
 * else here — the connection, waits, held leases, backoff — belongs to
 * the remote thread alone.  Counters are atomics.  Load: a few commands
 * per cold key per node; hits never come here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "daemon/remote.h"

#define POLL_FIRST_MS 5      /* first poll of a wait */
#define POLL_MAX_MS 50       /* polls grow to this */
#define BACKOFF_FIRST_MS 100 /* first reconnect delay after a failure */
#define BACKOFF_MAX_MS 5000  /* delays double up to this */
#define FAILED_MARK_MS 2000  /* how long a "failed" lease marker stays */
#define MAX_UPLOADS 64       /* queued uploads; more are dropped */
#define POLL_BATCH 64        /* waits polled in one pipeline */
#define MS 1000000ull        /* ns per ms */

#define COUNT(r, f, n) __atomic_add_fetch(&(r)->cnt.f, (n), __ATOMIC_RELAXED)

typedef enum op_kind { OP_LOOKUP, OP_UPLOAD, OP_RELEASE } op_kind;

typedef struct op {
  op_kind kind;                /* what to do */
  struct op *next;             /* queue, wait list or done list */
  char key[TEENY_SHA256_HEX_LEN + 1]; /* the cache key */
  uint64_t deadline;           /* lookup: the remote's budget ends (ns) */
  teeny_remote_done_fn done;   /* lookup: the loop's callback */
  void *ctx;                   /* its argument */
  teeny_artifact *art;         /* upload: to write; lookup: a hit */
  teeny_remote_lease *lease;   /* upload, release: to give up; lookup: won */
  teeny_remote_outcome what;   /* lookup: the outcome */
  uint64_t wait_until;         /* waiting: give up then (ns) */
  uint64_t next_poll;          /* waiting: next look (ns) */
  uint64_t interval_ms;        /* waiting: current poll interval */
} op;

struct teeny_remote_lease {
  char key[TEENY_SHA256_HEX_LEN + 1]; /* what it is for */
  char token[96];              /* our value in Redis: node, pid, serial */
  uint64_t next_renew;         /* ns */
  teeny_remote_lease *next;    /* the thread's list of held leases */
};

typedef struct fifo {
  op *head, *tail; /* oldest first */
  unsigned n;      /* how many */
} fifo;

struct teeny_remote {
  /* settings (read-only after create) */
  teeny_log *log;
  teeny_remote_addr addr;
  uint64_t timeout_ms, lease_ms, wait_ms, ttl_ms, max_entry;
  char prefix[128];
  char *secret;
  size_t secret_len;
  char node[128];              /* host:pid, the start of our tokens */
  /* loop side */
  uv_async_t async;            /* outcomes are ready */
  bool async_open;
  unsigned pending;            /* lookups not yet answered (loop thread) */
  /* shared, under mu */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  fifo lookups, uploads, releases, done;
  bool cancel;                 /* answer every lookup CANCELLED */
  bool quit;                   /* destroy: finish releases, then stop */
  bool started;                /* the thread runs */
  pthread_t thread;
  /* the remote thread's own */
  teeny_remote_conn *conn;     /* NULL while down or not yet connected */
  bool down;                   /* the last attempt failed (atomic: the loop
                                  reads it to answer lookups at once) */
  uint64_t retry_at;           /* no connect before this (ns) */
  uint64_t backoff_ms;         /* the current delay */
  uint64_t reply_warned_ns;    /* last warning about an error reply */
  op *waits;                   /* lookups waiting on another node */
  teeny_remote_lease *leases;  /* leases we hold */
  uint64_t serial;             /* for tokens */
  /* counters (atomics) */
  teeny_remote_counters cnt;
};

/* Lua: renew, release or mark our own lease only (compare the token). */
static const char RENEW_LUA[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
static const char RELEASE_LUA[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) else return 0 end";
static const char MARK_LUA[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return 0 end";

/* ---- small things ------------------------------------------------------------ */

static void fifo_push(fifo *q, op *o) {
  o->next = NULL;
  if (q->tail)
    q->tail->next = o;
  else
    q->head = o;
  q->tail = o;
  q->n++;
}

static op *fifo_pop(fifo *q) {
  op *o = q->head;
  if (o) {
    q->head = o->next;
    if (!q->head)
      q->tail = NULL;
    q->n--;
    o->next = NULL;
  }
  return o;
}

/* "{prefix}v1:e:{key}" or ":l:": the braces keep an entry and its lease in
 * one Redis Cluster slot. */
static void key_name(const teeny_remote *r, char kind, const char *key,
                     char *out, size_t size) {
  snprintf(out, size, "%sv%d:%c:{%s}", r->prefix, TEENY_REMOTE_FORMAT, kind, key);
}

static void free_replies(redisReply **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (v[i])
      freeReplyObject(v[i]);
}

/* ---- the connection and its failures ------------------------------------------ */

static void mark_down(teeny_remote *r, const char *why) {
  teeny__remote_conn_close(r->conn);
  r->conn = NULL;
  COUNT(r, errors, 1);
  r->backoff_ms = r->down ? r->backoff_ms * 2 : BACKOFF_FIRST_MS;
  if (r->backoff_ms > BACKOFF_MAX_MS)
    r->backoff_ms = BACKOFF_MAX_MS;
  r->retry_at = teeny__now_ns() + r->backoff_ms * MS;
  if (!r->down)
    TEENY_LOGW(r->log, "remote %s unavailable (%s): serving from the local "
                       "store and compiling here; retrying with backoff",
               r->addr.shown, why);
  else
    TEENY_LOGD(r->log, "remote %s still unavailable (%s); next try in %llu ms",
               r->addr.shown, why, (unsigned long long)r->backoff_ms);
  __atomic_store_n(&r->down, true, __ATOMIC_RELEASE);
  __atomic_store_n(&r->cnt.up, 0, __ATOMIC_RELAXED);
}

/* A usable connection before deadline, or false (down: answer locally). */
static bool ensure_conn(teeny_remote *r, uint64_t deadline) {
  if (r->conn)
    return true;
  uint64_t now = teeny__now_ns();
  if ((r->down && now < r->retry_at) || now >= deadline)
    return false;
  uint64_t limit = now + r->timeout_ms * MS;
  char err[TEENY_REMOTE_ERR_LEN];
  r->conn = teeny__remote_conn_open(&r->addr, deadline < limit ? deadline : limit, err);
  if (!r->conn) {
    mark_down(r, err);
    return false;
  }
  if (r->down)
    TEENY_LOGI(r->log, "remote %s reachable again", r->addr.shown);
  __atomic_store_n(&r->down, false, __ATOMIC_RELEASE);
  r->backoff_ms = 0;
  __atomic_store_n(&r->cnt.up, 1, __ATOMIC_RELAXED);
  return true;
}

/* An error reply (READONLY, OOM, NOPERM, WRONGTYPE...): counted, and a
 * warning at most every 10 s. */
static void reply_error(teeny_remote *r, const char *cmd, const redisReply *x) {
  COUNT(r, errors, 1);
  uint64_t now = teeny__now_ns();
  if (r->reply_warned_ns && now - r->reply_warned_ns < 10000 * MS)
    return;
  r->reply_warned_ns = now;
  TEENY_LOGW(r->log, "remote %s refused %s: %.200s (compiling here)",
             r->addr.shown, cmd, x->str);
}

/* Send what was appended; false (and down) on failure. */
static bool run(teeny_remote *r, redisReply **replies, size_t n, uint64_t deadline) {
  char err[TEENY_REMOTE_ERR_LEN];
  uint64_t in = 0, out = 0;
  int rc = teeny__remote_conn_run(r->conn, replies, n, deadline, &in, &out, err);
  COUNT(r, bytes_in, in);
  COUNT(r, bytes_out, out);
  if (rc)
    mark_down(r, err);
  return rc == 0;
}

static bool append(teeny_remote *r, int argc, const char **argv, const size_t *lens) {
  size_t l[8];
  if (!r->conn)
    return false; /* went down earlier in this round */
  for (int i = 0; i < argc; i++)
    l[i] = lens && lens[i] != (size_t)-1 ? lens[i] : strlen(argv[i]);
  if (teeny__remote_conn_append(r->conn, argc, argv, l)) {
    mark_down(r, "out of memory");
    return false;
  }
  return true;
}

/* ---- outcomes ----------------------------------------------------------------- */

/* Hand a lookup back to the loop (any thread but the loop's). */
static void finish(teeny_remote *r, op *o, teeny_remote_outcome what) {
  o->what = what;
  COUNT(r, hits, what == TEENY_REMOTE_HIT);
  pthread_mutex_lock(&r->mu);
  fifo_push(&r->done, o);
  pthread_mutex_unlock(&r->mu);
  uv_async_send(&r->async);
}

static void unavailable(teeny_remote *r, op *o) {
  COUNT(r, unavailable, 1);
  finish(r, o, TEENY_REMOTE_COMPILE);
}

/* ---- fetching ------------------------------------------------------------------ */

enum { FETCH_FAILED = -1, FETCH_ABSENT, FETCH_HIT, FETCH_REFUSED };

/* GETRANGE the entry of o->key: FETCH_HIT (o->art verified), FETCH_ABSENT,
 * FETCH_REFUSED (counted, logged: compile), FETCH_FAILED (down). */
static int fetch(teeny_remote *r, op *o, uint64_t deadline) {
  char ek[200], hi[32];
  key_name(r, 'e', o->key, ek, sizeof ek);
  snprintf(hi, sizeof hi, "%llu", (unsigned long long)r->max_entry); /* max+1 bytes */
  const char *argv[] = {"GETRANGE", ek, "0", hi};
  redisReply *x = NULL;
  if (!append(r, 4, argv, NULL) || !run(r, &x, 1, deadline))
    return FETCH_FAILED;
  int got = FETCH_ABSENT;
  if (x->type == REDIS_REPLY_ERROR) { /* WRONGTYPE: someone else's key */
    reply_error(r, "GETRANGE", x);
    COUNT(r, rejected, 1);
    got = FETCH_REFUSED;
  } else if (x->type == REDIS_REPLY_STRING && x->len > 0) {
    teeny_remote_reject why = teeny__remote_entry_verify(
        x->str, x->len, o->key, r->secret, r->secret_len, r->max_entry, &o->art);
    got = why ? FETCH_REFUSED : FETCH_HIT;
    if (why) {
      COUNT(r, rejected, 1);
      TEENY_LOGW(r->log, "remote entry %.16s... refused (%s, %zu bytes): "
                         "compiling it here",
                 o->key, teeny__remote_reject_name(why), (size_t)x->len);
    }
  }
  freeReplyObject(x);
  return got;
}

/* ---- leases -------------------------------------------------------------------- */

static teeny_remote_lease *lease_new(teeny_remote *r, const char *key) {
  teeny_remote_lease *l = teeny__calloc(1, sizeof *l);
  if (!l)
    return NULL;
  memcpy(l->key, key, sizeof l->key);
  uint64_t rnd = 0;
  if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
    rnd = teeny__now_ns();
  snprintf(l->token, sizeof l->token, "%.60s:%llu:%016llx", r->node,
           (unsigned long long)++r->serial, (unsigned long long)rnd);
  return l;
}

static void lease_hold(teeny_remote *r, teeny_remote_lease *l) {
  l->next_renew = teeny__now_ns() + r->lease_ms * MS / 3;
  l->next = r->leases;
  r->leases = l;
}

static void lease_forget(teeny_remote *r, teeny_remote_lease *l) {
  for (teeny_remote_lease **pp = &r->leases; *pp; pp = &(*pp)->next)
    if (*pp == l) {
      *pp = l->next;
      break;
    }
  teeny__free(l);
}

/* Release (failed: mark failed instead) lease l in the same pipeline as
 * what was appended before; l is freed.  Appends one command. */
static bool append_release(teeny_remote *r, teeny_remote_lease *l, bool failed) {
  char lk[200], px[24], mark[128];
  key_name(r, 'l', l->key, lk, sizeof lk);
  snprintf(px, sizeof px, "%d", FAILED_MARK_MS);
  snprintf(mark, sizeof mark, "failed:%.100s", r->node);
  const char *rel[] = {"EVAL", RELEASE_LUA, "1", lk, l->token};
  const char *mk[] = {"EVAL", MARK_LUA, "1", lk, l->token, mark, px};
  return failed ? append(r, 7, mk, NULL) : append(r, 5, rel, NULL);
}

/* The key is not in Redis: take its lease, or learn who has it.  Finishes
 * o (LEASED, HIT, COMPILE) or queues it as a wait; takeover counts a wait
 * whose holder went away. */
static void try_lease(teeny_remote *r, op *o, uint64_t deadline, bool takeover) {
  teeny_remote_lease *l = lease_new(r, o->key);
  char lk[200], ek[200], px[24];
  key_name(r, 'l', o->key, lk, sizeof lk);
  key_name(r, 'e', o->key, ek, sizeof ek);
  snprintf(px, sizeof px, "%llu", (unsigned long long)r->lease_ms);
  const char *set[] = {"SET", lk, l ? l->token : "", "NX", "PX", px};
  const char *get[] = {"GET", lk};
  const char *ex[] = {"EXISTS", ek};
  redisReply *x[3];
  if (!l || !append(r, 6, set, NULL) || !append(r, 2, get, NULL) ||
      !append(r, 2, ex, NULL) || !run(r, x, 3, deadline)) {
    teeny__free(l);
    unavailable(r, o);
    return;
  }
  bool won = x[0]->type == REDIS_REPLY_STATUS;
  bool entry = x[2]->type == REDIS_REPLY_INTEGER && x[2]->integer > 0;
  bool failed = x[1]->type == REDIS_REPLY_STRING && strncmp(x[1]->str, "failed:", 7) == 0;
  if (x[0]->type == REDIS_REPLY_ERROR)
    reply_error(r, "SET (lease)", x[0]);
  bool refused = x[0]->type == REDIS_REPLY_ERROR;
  free_replies(x, 3);
  if (won && !entry) {
    COUNT(r, leases_won, 1);
    COUNT(r, lease_takeovers, takeover);
    lease_hold(r, l);
    o->lease = l;
    finish(r, o, TEENY_REMOTE_LEASED);
    return;
  }
  if (won) { /* the entry came just before us: give the lease back */
    lease_hold(r, l);
    if (append_release(r, l, false) && run(r, x, 1, deadline))
      free_replies(x, 1);
    lease_forget(r, l);
  } else {
    teeny__free(l);
  }
  if (entry) {
    int got = fetch(r, o, deadline);
    if (got == FETCH_FAILED)
      unavailable(r, o);
    else
      finish(r, o, got == FETCH_HIT ? TEENY_REMOTE_HIT : TEENY_REMOTE_COMPILE);
  } else if (refused || failed) {
    finish(r, o, TEENY_REMOTE_COMPILE);
  } else if (!takeover) { /* another node compiles it: wait */
    COUNT(r, leases_waited, 1);
    uint64_t now = teeny__now_ns();
    o->wait_until = now + r->wait_ms * MS;
    o->interval_ms = POLL_FIRST_MS;
    o->next_poll = now + POLL_FIRST_MS * MS;
    o->next = r->waits;
    r->waits = o;
  } else { /* someone else took it over first: keep waiting */
    o->next = r->waits;
    r->waits = o;
  }
}

static void do_lookup(teeny_remote *r, op *o) {
  /* down: answered at once; the thread itself probes (probe_due) */
  if (r->down || teeny__now_ns() >= o->deadline || !ensure_conn(r, o->deadline)) {
    unavailable(r, o);
    return;
  }
  int got = fetch(r, o, o->deadline);
  if (got == FETCH_FAILED) {
    unavailable(r, o);
  } else if (got == FETCH_HIT) {
    finish(r, o, TEENY_REMOTE_HIT);
  } else if (got == FETCH_REFUSED) { /* compile; the upload replaces it */
    finish(r, o, TEENY_REMOTE_COMPILE);
  } else {
    COUNT(r, misses, 1);
    try_lease(r, o, o->deadline, false);
  }
}

/* ---- waits and renewals ---------------------------------------------------------- */

/* One poll of the waits that are due: GET l, EXISTS e for each. */
static void poll_due(teeny_remote *r, uint64_t now) {
  op *due[POLL_BATCH];
  size_t n = 0;
  for (op **pp = &r->waits; *pp && n < POLL_BATCH;) {
    op *o = *pp;
    if (o->next_poll <= now) {
      *pp = o->next;
      due[n++] = o;
    } else {
      pp = &o->next;
    }
  }
  if (!n)
    return;
  uint64_t deadline = now + r->timeout_ms * MS;
  redisReply *x[2 * POLL_BATCH];
  bool ok = ensure_conn(r, deadline);
  for (size_t i = 0; ok && i < n; i++) {
    char lk[200], ek[200];
    key_name(r, 'l', due[i]->key, lk, sizeof lk);
    key_name(r, 'e', due[i]->key, ek, sizeof ek);
    const char *get[] = {"GET", lk};
    const char *ex[] = {"EXISTS", ek};
    ok = append(r, 2, get, NULL) && append(r, 2, ex, NULL);
  }
  if (!ok || !run(r, x, 2 * n, deadline)) {
    for (size_t i = 0; i < n; i++)
      unavailable(r, due[i]);
    return;
  }
  bool gone[POLL_BATCH], entry[POLL_BATCH], failed[POLL_BATCH];
  for (size_t i = 0; i < n; i++) {
    redisReply *l = x[2 * i], *e = x[2 * i + 1];
    gone[i] = l->type == REDIS_REPLY_NIL;
    failed[i] = l->type == REDIS_REPLY_STRING && strncmp(l->str, "failed:", 7) == 0;
    entry[i] = e->type == REDIS_REPLY_INTEGER && e->integer > 0;
  }
  free_replies(x, 2 * n);
  for (size_t i = 0; i < n; i++) {
    op *o = due[i];
    if (!r->conn) { /* failed during this round */
      unavailable(r, o);
    } else if (entry[i]) {
      int got = fetch(r, o, deadline);
      if (got == FETCH_FAILED)
        unavailable(r, o);
      else
        finish(r, o, got == FETCH_HIT ? TEENY_REMOTE_HIT : TEENY_REMOTE_COMPILE);
    } else if (failed[i]) {
      finish(r, o, TEENY_REMOTE_COMPILE);
    } else if (gone[i]) { /* holder died or gave up without an entry */
      try_lease(r, o, deadline, true);
    } else if (now >= o->wait_until) {
      COUNT(r, wait_timeouts, 1);
      TEENY_LOGW(r->log, "waited %llu ms on another node's compile of %.16s...; "
                         "compiling it here",
                 (unsigned long long)r->wait_ms, o->key);
      finish(r, o, TEENY_REMOTE_COMPILE);
    } else {
      o->interval_ms = o->interval_ms * 3 / 2 + 1;
      if (o->interval_ms > POLL_MAX_MS)
        o->interval_ms = POLL_MAX_MS;
      o->next_poll = now + o->interval_ms * MS;
      o->next = r->waits;
      r->waits = o;
    }
  }
}

static void renew_due(teeny_remote *r, uint64_t now) {
  teeny_remote_lease *due[POLL_BATCH];
  size_t n = 0;
  for (teeny_remote_lease *l = r->leases; l && n < POLL_BATCH; l = l->next)
    if (l->next_renew <= now)
      due[n++] = l;
  if (!n)
    return;
  for (size_t i = 0; i < n; i++) /* whatever happens, not again at once */
    due[i]->next_renew = now + r->lease_ms * MS / 3;
  uint64_t deadline = now + r->timeout_ms * MS;
  if (!ensure_conn(r, deadline))
    return;
  char px[24];
  snprintf(px, sizeof px, "%llu", (unsigned long long)r->lease_ms);
  redisReply *x[POLL_BATCH];
  for (size_t i = 0; i < n; i++) {
    char lk[200];
    key_name(r, 'l', due[i]->key, lk, sizeof lk);
    const char *argv[] = {"EVAL", RENEW_LUA, "1", lk, due[i]->token, px};
    if (!append(r, 6, argv, NULL))
      return;
  }
  if (!run(r, x, n, deadline))
    return;
  for (size_t i = 0; i < n; i++)
    if (x[i]->type == REDIS_REPLY_ERROR)
      reply_error(r, "EVAL (renew)", x[i]);
  free_replies(x, n);
}

/* Down, and the backoff has passed: try to reconnect, in the background
 * (lookups meanwhile are answered "unavailable" at once). */
static void probe_due(teeny_remote *r, uint64_t now) {
  if (r->down && !r->conn && now >= r->retry_at)
    (void)ensure_conn(r, now + r->timeout_ms * MS);
}

static uint64_t next_due(const teeny_remote *r) {
  uint64_t t = r->down && !r->conn ? r->retry_at : UINT64_MAX;
  for (const op *o = r->waits; o; o = o->next)
    t = o->next_poll < t ? o->next_poll : t;
  for (const teeny_remote_lease *l = r->leases; l; l = l->next)
    t = l->next_renew < t ? l->next_renew : t;
  return t;
}

/* ---- uploads and releases ----------------------------------------------------- */

static void do_release(teeny_remote *r, op *o) {
  uint64_t deadline = teeny__now_ns() + r->timeout_ms * MS;
  redisReply *x = NULL;
  if (ensure_conn(r, deadline) && append_release(r, o->lease, true) &&
      run(r, &x, 1, deadline))
    free_replies(&x, 1);
  lease_forget(r, o->lease);
  teeny__free(o);
}

static void do_upload(teeny_remote *r, op *o) {
  uint64_t deadline = teeny__now_ns() + r->timeout_ms * MS;
  teeny_buf v;
  teeny__buf_init(&v);
  int rc = teeny__remote_entry_encode(o->art, r->secret, r->secret_len, &v);
  bool sent = false;
  if (rc || v.len > r->max_entry) {
    COUNT(r, uploads_dropped, 1);
    TEENY_LOGD(r->log, "not uploading %.16s...: %s", o->key,
               rc ? teeny_strerror(rc) : "over --remote-max-entry");
  } else if (ensure_conn(r, deadline)) {
    char ek[200], ttl[24];
    key_name(r, 'e', o->key, ek, sizeof ek);
    snprintf(ttl, sizeof ttl, "%llu", (unsigned long long)r->ttl_ms);
    const char *argv[] = {"SET", ek, v.p, "PX", ttl};
    size_t lens[] = {(size_t)-1, (size_t)-1, v.len, (size_t)-1, (size_t)-1};
    redisReply *x[2] = {NULL, NULL};
    size_t n = 1;
    bool ok = append(r, r->ttl_ms ? 5 : 3, argv, lens);
    if (ok && o->lease) {
      ok = append_release(r, o->lease, false);
      n = 2;
    }
    if (ok && run(r, x, n, deadline)) {
      sent = x[0]->type != REDIS_REPLY_ERROR;
      if (!sent)
        reply_error(r, "SET (upload)", x[0]);
      free_replies(x, n);
    }
    COUNT(r, uploads, sent);
    COUNT(r, uploads_dropped, !sent);
  } else {
    COUNT(r, uploads_dropped, 1);
  }
  if (o->lease && !sent && r->conn) { /* let the waiters compile */
    redisReply *x = NULL;
    if (append_release(r, o->lease, true) && run(r, &x, 1, deadline))
      free_replies(&x, 1);
  }
  if (o->lease)
    lease_forget(r, o->lease);
  teeny__buf_free(&v);
  teeny_artifact_destroy(o->art);
  teeny__free(o);
}

/* ---- the thread ------------------------------------------------------------------ */

static void cancel_all(teeny_remote *r) {
  op *o;
  while ((o = fifo_pop(&r->lookups))) {
    o->what = TEENY_REMOTE_CANCELLED;
    fifo_push(&r->done, o);
  }
  while ((o = r->waits)) {
    r->waits = o->next;
    o->what = TEENY_REMOTE_CANCELLED;
    fifo_push(&r->done, o);
  }
  uv_async_send(&r->async);
}

static void timed_wait(teeny_remote *r, uint64_t until) {
  if (until == UINT64_MAX) {
    pthread_cond_wait(&r->cv, &r->mu);
    return;
  }
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t mono = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
  uint64_t delta = until > teeny__now_ns() ? until - teeny__now_ns() : 0;
  uint64_t at = mono + delta;
  struct timespec ts = {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
  pthread_cond_timedwait(&r->cv, &r->mu, &ts);
}

static void *thread_main(void *arg) {
  teeny_remote *r = arg;
  pthread_mutex_lock(&r->mu);
  for (;;) {
    if (r->cancel) {
      r->cancel = false;
      cancel_all(r);
    }
    op *o = fifo_pop(&r->lookups);
    if (o) {
      pthread_mutex_unlock(&r->mu);
      do_lookup(r, o);
      pthread_mutex_lock(&r->mu);
      continue;
    }
    uint64_t now = teeny__now_ns();
    if (next_due(r) <= now) {
      pthread_mutex_unlock(&r->mu);
      probe_due(r, now);
      renew_due(r, now);
      poll_due(r, now);
      pthread_mutex_lock(&r->mu);
      continue;
    }
    if ((o = fifo_pop(&r->releases)) || (o = fifo_pop(&r->uploads))) {
      pthread_mutex_unlock(&r->mu);
      o->kind == OP_RELEASE ? do_release(r, o) : do_upload(r, o);
      pthread_mutex_lock(&r->mu);
      continue;
    }
    if (r->quit)
      break;
    timed_wait(r, next_due(r));
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

/* ---- the loop side ----------------------------------------------------------------- */

static void on_async(uv_async_t *h) {
  teeny_remote *r = h->data;
  pthread_mutex_lock(&r->mu);
  fifo done = r->done;
  r->done = (fifo){NULL, NULL, 0};
  pthread_mutex_unlock(&r->mu);
  for (op *o = done.head, *nx; o; o = nx) {
    nx = o->next;
    r->pending--;
    o->done(o->ctx, o->what, o->art, o->lease);
    teeny__free(o);
  }
}

static void submit(teeny_remote *r, fifo *q, op *o) {
  pthread_mutex_lock(&r->mu);
  fifo_push(q, o);
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

void teeny__remote_lookup(teeny_remote *r, const char *key,
                          teeny_remote_done_fn done, void *ctx) {
  if (__atomic_load_n(&r->down, __ATOMIC_ACQUIRE)) { /* no thread hop */
    COUNT(r, unavailable, 1);
    done(ctx, TEENY_REMOTE_COMPILE, NULL, NULL);
    return;
  }
  op *o = teeny__calloc(1, sizeof *o);
  if (!o) {
    done(ctx, TEENY_REMOTE_COMPILE, NULL, NULL);
    return;
  }
  o->kind = OP_LOOKUP;
  memcpy(o->key, key, TEENY_SHA256_HEX_LEN);
  o->deadline = teeny__now_ns() + r->timeout_ms * MS;
  o->done = done;
  o->ctx = ctx;
  r->pending++;
  submit(r, &r->lookups, o);
}

void teeny__remote_upload(teeny_remote *r, teeny_artifact *art,
                          teeny_remote_lease *lease) {
  op *o = teeny__calloc(1, sizeof *o);
  pthread_mutex_lock(&r->mu);
  bool full = r->uploads.n >= MAX_UPLOADS;
  pthread_mutex_unlock(&r->mu);
  if (!o || full) { /* the lease expires by itself; waiters then compile */
    COUNT(r, uploads_dropped, 1);
    teeny__free(o);
    teeny_artifact_destroy(art);
    if (lease)
      teeny__remote_release(r, lease);
    return;
  }
  o->kind = OP_UPLOAD;
  memcpy(o->key, art->key, TEENY_SHA256_HEX_LEN);
  o->art = art;
  o->lease = lease;
  submit(r, &r->uploads, o);
}

void teeny__remote_release(teeny_remote *r, teeny_remote_lease *lease) {
  if (!lease)
    return;
  op *o = teeny__calloc(1, sizeof *o);
  if (!o)
    return; /* it expires by itself (the thread still renews it: rare) */
  o->kind = OP_RELEASE;
  o->lease = lease;
  submit(r, &r->releases, o);
}

unsigned teeny__remote_pending(const teeny_remote *r) { return r->pending; }

void teeny__remote_cancel(teeny_remote *r) {
  pthread_mutex_lock(&r->mu);
  r->cancel = true;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

void teeny__remote_counters(teeny_remote *r, teeny_remote_counters *out) {
  uint64_t *src = (uint64_t *)(void *)&r->cnt, *dst = (uint64_t *)(void *)out;
  for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
    dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void teeny__remote_close(teeny_remote *r) {
  if (r && r->async_open) {
    r->async_open = false;
    uv_close((uv_handle_t *)&r->async, NULL);
  }
}

/* ---- lifetime ---------------------------------------------------------------------- */

static int read_secret(teeny_remote *r, const char *path, char *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  char buf[4097];
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
  int e = errno;
  if (fd >= 0)
    close(fd);
  if (n < 0) {
    snprintf(err, TEENY_REMOTE_ERR_LEN, "remote secret %.160s: %.60s", path, strerror(e));
    return TEENY_E_IO;
  }
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
    n--;
  if (n < 16 || n >= (ssize_t)sizeof buf - 1) {
    snprintf(err, TEENY_REMOTE_ERR_LEN,
             "remote secret %.160s: want 16 to 4096 bytes, found %d", path, (int)n);
    return TEENY_E_INVAL;
  }
  if (!(r->secret = teeny__malloc((size_t)n)))
    return TEENY_E_NOMEM;
  memcpy(r->secret, buf, (size_t)n);
  r->secret_len = (size_t)n;
  return 0;
}

int teeny__remote_create(const teeny_remote_opts *o, teeny_remote **out,
                         char *err) {
  *out = NULL;
  teeny_remote *r = teeny__calloc(1, sizeof *r);
  if (!r)
    return TEENY_E_NOMEM;
  int rc = teeny__remote_url_parse(o->url, &r->addr, err);
  if (!rc && strlen(o->prefix ? o->prefix : "") >= sizeof r->prefix) {
    snprintf(err, TEENY_REMOTE_ERR_LEN, "remote prefix longer than %zu bytes",
             sizeof r->prefix - 1);
    rc = TEENY_E_INVAL;
  }
  if (!rc && o->secret_file && *o->secret_file)
    rc = read_secret(r, o->secret_file, err);
  if (rc) {
    teeny__free(r->secret);
    teeny__free(r);
    return rc;
  }
  r->log = o->log;
  r->timeout_ms = o->timeout_ms ? o->timeout_ms : 1;
  r->lease_ms = o->lease_ms >= 30 ? o->lease_ms : 30;
  r->wait_ms = o->wait_ms;
  r->ttl_ms = o->ttl_ms;
  r->max_entry = o->max_entry;
  snprintf(r->prefix, sizeof r->prefix, "%s", o->prefix ? o->prefix : "");
  char host[64] = "node";
  gethostname(host, sizeof host - 1);
  snprintf(r->node, sizeof r->node, "%.63s:%ld", host, (long)getpid());
  r->cnt.up = 1;
  pthread_mutex_init(&r->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&r->cv, &ca);
  pthread_condattr_destroy(&ca);
  uv_async_init(o->loop, &r->async, on_async);
  r->async.data = r;
  r->async_open = true;
  if (pthread_create(&r->thread, NULL, thread_main, r)) {
    snprintf(err, TEENY_REMOTE_ERR_LEN, "cannot start the remote thread");
    teeny__remote_close(r);
    uv_run(o->loop, UV_RUN_NOWAIT);
    teeny__remote_destroy(r);
    return TEENY_E_IO;
  }
  r->started = true;
  *out = r;
  return 0;
}

void teeny__remote_destroy(teeny_remote *r) {
  if (!r)
    return;
  if (r->started) {
    pthread_mutex_lock(&r->mu);
    r->quit = true;
    r->cancel = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
  }
  /* leases still held (a compile cut short): give them back, briefly */
  uint64_t deadline = teeny__now_ns() + r->timeout_ms * MS;
  size_t n = 0;
  for (teeny_remote_lease *l = r->leases; l && r->conn; l = l->next, n++)
    if (!append_release(r, l, true))
      break;
  redisReply *x[POLL_BATCH];
  if (n && r->conn && n <= POLL_BATCH && run(r, x, n, deadline))
    free_replies(x, n);
  while (r->leases)
    lease_forget(r, r->leases);
  op *o;
  while ((o = fifo_pop(&r->done))) { /* the loop is gone: nobody to answer */
    teeny_artifact_destroy(o->art);
    teeny__free(o);
  }
  teeny__remote_conn_close(r->conn);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  teeny__free(r->secret);
  teeny__free(r);
}
