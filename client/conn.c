/*
 * client/conn.c — one Unix-socket connection to teenycd (PROTOCOL.md §1-§3).
 *
 * Requests go out as frames built with proto/ (teeny_frame_begin/end around
 * teeny_msg_request_encode); replies are read with the incremental frame
 * reader and matched to their requests by id, so one exchange can pipeline
 * a whole batch and take the replies in whatever order the daemon finishes
 * them.  A single poll() loop writes and reads at once, which keeps a large
 * batch from deadlocking against a daemon that is writing replies, and
 * enforces the optional timeout.  Every failure closes the connection: a
 * stream with an unanswered request on it cannot be trusted afterwards.
 *
 * Load: one exchange per compile call that misses the memo; a warm hit is
 * one write and one read of a few hundred bytes.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/client_int.h"

#define SPIN_NS 30000 /* look for a reply this long before sleeping */

int teeny__seterr(char *err, size_t size, int rc, const char *fmt, ...) {
  if (!err || size == 0)
    return rc;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
  return rc;
}

void teeny__conn_init(teeny__conn *k) {
  memset(k, 0, sizeof *k);
  k->fd = -1;
}

void teeny__conn_close(teeny__conn *k) {
  if (k->fd >= 0)
    close(k->fd);
  k->fd = -1;
  teeny_frame_reader_free(&k->rd);
  teeny__free(k->rbuf);
  k->rbuf = NULL;
}

/* ---- connecting ------------------------------------------------------------- */

static int connect_errno(int e) {
  if (e == EACCES || e == EPERM)
    return TEENY_E_PERM; /* a daemon may be there, but not for us */
  return e == ENOMEM || e == ENOBUFS ? TEENY_E_NOMEM : TEENY_E_CONNECT;
}

static int dial(const char *path, int *fd, char *err, size_t errsz) {
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof sa.sun_path)
    return teeny__seterr(err, errsz, TEENY_E_CONNECT,
                         "socket path '%.64s' is empty or too long", path);
  memcpy(sa.sun_path, path, n);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return teeny__seterr(err, errsz, connect_errno(errno), "socket: %s",
                         strerror(errno));
  if (connect(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
    int e = errno;
    close(s);
    return teeny__seterr(err, errsz, connect_errno(e),
                         "cannot reach teenycd at %s: %s", path, strerror(e));
  }
  *fd = s;
  return 0;
}

static int hello(teeny__conn *k, const char *client_name, int timeout_ms,
                 char *err, size_t errsz) {
  teeny_msg_request req = {.op = TEENY_OP_HELLO};
  req.u.hello.version = TEENY_PROTO_VERSION;
  req.u.hello.client = client_name;
  req.u.hello.pid = (uint32_t)getpid();
  teeny_msg_reply reply;
  teeny_msg_reply *rp = &reply;
  bool done = false;
  memset(&reply, 0, sizeof reply);
  int rc = teeny__conn_exchange(k, &req, &rp, &done, 1, timeout_ms, err, errsz);
  if (rc)
    return rc;
  if (reply.status) {
    rc = teeny__seterr(err, errsz, reply.status, "teenycd refused hello: %s",
                       reply.error ? reply.error : teeny_strerror(reply.status));
  } else {
    const teeny_msg_hello_reply *h = &reply.u.hello;
    k->max_frame = h->max_frame;
    k->max_source = h->max_source;
    k->max_inflight = h->max_inflight ? h->max_inflight : 1;
    snprintf(k->server, sizeof k->server, "%s", h->server ? h->server : "");
  }
  teeny_msg_reply_free(&reply);
  return rc;
}

int teeny__conn_open(teeny__conn *k, const char *path, const char *client_name,
                     int timeout_ms, char *err, size_t errsz) {
  teeny__conn_close(k);
  int rc = dial(path, &k->fd, err, errsz);
  if (rc)
    return rc;
  k->rbuf = teeny__malloc(TEENY__READ_CHUNK);
  if (!k->rbuf) {
    teeny__conn_close(k);
    return teeny__seterr(err, errsz, TEENY_E_NOMEM, "out of memory");
  }
  teeny_frame_reader_init(&k->rd, TEENY_FRAME_MAX_DEFAULT);
  k->max_frame = TEENY_FRAME_MAX_DEFAULT; /* until the hello reply says */
  k->max_inflight = 1;
  rc = hello(k, client_name, timeout_ms, err, errsz);
  if (rc)
    teeny__conn_close(k);
  return rc;
}

/* ---- one exchange ------------------------------------------------------------------ */

/* State of one exchange: which requests are out, the bytes to write. */
typedef struct xchg {
  teeny__conn *k;
  teeny_msg_request *reqs;
  teeny_msg_reply **replies;
  bool *done;
  size_t n;
  teeny_proto_op op;   /* every request's op */
  size_t next;         /* first index not yet encoded */
  size_t inflight;     /* sent and unanswered */
  size_t left;         /* unanswered, sent or not */
  uint64_t first_id;   /* id of the first request encoded here */
  size_t *order;       /* order[id - first_id] = request index */
  size_t nsent;        /* requests encoded so far */
  teeny_buf out;       /* frames to write */
  size_t outpos;       /* bytes of out already written */
  char *err;
  size_t errsz;
} xchg;

static int fail_closed(xchg *x, int e, const char *what) {
  teeny__conn_close(x->k);
  if (e == EPIPE || e == ECONNRESET || e == 0)
    return teeny__seterr(x->err, x->errsz, TEENY_E_CLOSED,
                         "teenycd closed the connection (%s)",
                         e ? strerror(e) : "end of stream");
  return teeny__seterr(x->err, x->errsz, TEENY_E_IO, "%s: %s", what, strerror(e));
}

/* A request that cannot be put on the wire (over the daemon's frame limit,
 * a field the encoder refuses) is answered here, without the daemon, and
 * the connection stays usable. */
static void answer_locally(xchg *x, size_t i, int rc) {
  teeny_msg_reply *r = x->replies[i];
  memset(r, 0, sizeof *r); /* mem stays NULL: error points at static text */
  r->op = x->op;
  r->status = rc == TEENY_E_NOMEM ? rc : TEENY_E_LIMIT;
  r->error = rc == TEENY_E_TOOBIG
                 ? "request is larger than the daemon's frame limit"
                 : rc == TEENY_E_NOMEM ? "out of memory"
                                       : "request has a field the protocol cannot carry";
  x->done[i] = true;
  x->left--;
}

/* Encode requests into x->out while the window allows. */
static int fill(xchg *x) {
  while (x->next < x->n && x->inflight < x->k->max_inflight) {
    size_t i = x->next++;
    if (x->done[i])
      continue;
    x->reqs[i].id = x->k->last_id + 1;
    size_t begin = teeny_frame_begin(&x->out);
    int rc = teeny_msg_request_encode(&x->reqs[i], &x->out);
    if (!rc)
      rc = teeny_frame_end(&x->out, begin, x->k->max_frame);
    if (rc) {
      x->out.len = begin; /* drop the placeholder prefix */
      answer_locally(x, i, rc);
      continue;
    }
    x->k->last_id++;
    if (x->nsent == 0)
      x->first_id = x->reqs[i].id;
    x->order[x->nsent++] = i;
    x->inflight++;
    x->k->frames_sent++;
  }
  return 0;
}

static int flush_some(xchg *x) {
  while (x->outpos < x->out.len) {
    ssize_t w = send(x->k->fd, x->out.p + x->outpos, x->out.len - x->outpos,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (w < 0)
      return fail_closed(x, errno, "send");
    x->outpos += (size_t)w;
  }
  x->out.len = x->outpos = 0;
  return 0;
}

/* One reply payload: find its request and decode it there. */
static int take_reply(xchg *x, const char *p, size_t len) {
  teeny_msg_reply r;
  char perr[TEENY_PROTO_ERR_LEN] = "";
  int rc = teeny_msg_reply_decode(p, len, x->op, &r, perr);
  if (rc) {
    teeny_msg_reply_free(&r);
    teeny__conn_close(x->k);
    return teeny__seterr(x->err, x->errsz, rc, "bad reply from teenycd: %s", perr);
  }
  if (r.id == 0 && r.status) {
    rc = teeny__seterr(x->err, x->errsz, r.status, "teenycd: %s",
                       r.error ? r.error : teeny_strerror(r.status));
    teeny_msg_reply_free(&r);
    teeny__conn_close(x->k);
    return rc;
  }
  uint64_t slot = r.id - x->first_id;
  if (r.id < x->first_id || slot >= x->nsent || x->done[x->order[slot]]) {
    teeny_msg_reply_free(&r); /* not ours (a stale id): ignore it */
    return 0;
  }
  size_t i = x->order[slot];
  *x->replies[i] = r;
  x->done[i] = true;
  x->inflight--;
  x->left--;
  return 0;
}

static int read_some(xchg *x) {
  ssize_t got = read(x->k->fd, x->k->rbuf, TEENY__READ_CHUNK);
  if (got < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (got <= 0)
    return fail_closed(x, got == 0 ? 0 : errno, "read");
  int rc = teeny_frame_reader_feed(&x->k->rd, x->k->rbuf, (size_t)got);
  const char *p;
  size_t len;
  while (!rc && (rc = teeny_frame_reader_next(&x->k->rd, &p, &len)) == 1)
    rc = take_reply(x, p, len);
  if (rc < 0 && teeny__conn_is_open(x->k)) {
    teeny__conn_close(x->k);
    return teeny__seterr(x->err, x->errsz, rc, "bad frame from teenycd: %s",
                         teeny_strerror(rc));
  }
  return rc < 0 ? rc : 0;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A warm hit is back within ~10 µs, while blocking at once costs a thread
 * wake-up (20-25 µs when the daemon runs on the other CPU): look for the
 * reply without sleeping, yielding the CPU between looks, for a short
 * while before blocking in poll().  True if input arrived. */
static bool spin_for_input(int fd) {
  struct pollfd pfd = {fd, POLLIN, 0};
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    if (poll(&pfd, 1, 0) > 0)
      return true;
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < SPIN_NS);
  return false;
}

static int wait_io(xchg *x, int64_t deadline, short *revents) {
  struct pollfd pfd = {x->k->fd, POLLIN, 0};
  if (x->outpos < x->out.len)
    pfd.events |= POLLOUT;
  else if (spin_for_input(x->k->fd)) {
    *revents = POLLIN;
    return 0;
  }
  for (;;) {
    int wait = -1;
    if (deadline) {
      int64_t left = deadline - now_ms();
      if (left <= 0)
        break;
      wait = left > 1000000 ? 1000000 : (int)left;
    }
    int r = poll(&pfd, 1, wait);
    if (r > 0) {
      *revents = pfd.revents;
      return 0;
    }
    if (r < 0 && errno != EINTR)
      return fail_closed(x, errno, "poll");
  }
  teeny__conn_close(x->k);
  return teeny__seterr(x->err, x->errsz, TEENY_E_TIMEOUT,
                       "no reply from teenycd within the timeout");
}

static int run(xchg *x, int timeout_ms) {
  int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
  int rc = 0;
  while (!rc && x->left) {
    rc = fill(x);
    if (!rc)
      rc = flush_some(x);
    short ev = 0;
    if (!rc)
      rc = wait_io(x, deadline, &ev);
    if (!rc && (ev & POLLOUT))
      rc = flush_some(x);
    if (!rc && (ev & (POLLIN | POLLHUP | POLLERR)))
      rc = read_some(x);
  }
  return rc;
}

int teeny__conn_exchange(teeny__conn *k, teeny_msg_request *reqs,
                         teeny_msg_reply **replies, bool *done, size_t n,
                         int timeout_ms, char *err, size_t errsz) {
  if (k->fd < 0)
    return teeny__seterr(err, errsz, TEENY_E_CLOSED, "not connected to teenycd");
  xchg x = {.k = k, .reqs = reqs, .replies = replies, .done = done, .n = n,
            .op = n ? reqs[0].op : TEENY_OP_NONE, .err = err, .errsz = errsz};
  for (size_t i = 0; i < n; i++)
    x.left += !done[i];
  if (x.left == 0)
    return 0;
  x.order = teeny__calloc(x.left, sizeof *x.order);
  if (!x.order)
    return teeny__seterr(err, errsz, TEENY_E_NOMEM, "out of memory");
  teeny__buf_init(&x.out);
  int rc = run(&x, timeout_ms);
  if (!rc && x.out.oom)
    rc = teeny__seterr(err, errsz, TEENY_E_NOMEM, "out of memory");
  teeny__buf_free(&x.out);
  teeny__free(x.order);
  return rc;
}
