/*
 * daemon/remote_conn.c — one connection to Redis with a deadline on
 * everything: connect, AUTH, SELECT and each pipelined exchange.
 *
 * hiredis 0.14 does the protocol (command encoding, the reply parser);
 * the I/O is ours: after the connect the socket is non-blocking, we write
 * hiredis's output buffer and feed its reader from read(), and poll()
 * with what is left of the deadline in between, so a server that accepts
 * and then stays silent, or trickles, costs at most the deadline.  (A
 * host name is resolved by getaddrinfo before the deadline applies; use
 * an address or a unix:// socket where that matters.)  Only the remote
 * thread uses a connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "daemon/remote.h"

struct teeny_remote_conn {
  redisContext *ctx; /* hiredis's context: fd, output buffer, reader */
};

static int64_t left_ms(uint64_t deadline) {
  uint64_t now = teeny__now_ns();
  return now >= deadline ? 0 : (int64_t)((deadline - now + 999999) / 1000000);
}

static int fail(char *err, int rc, const char *fmt, const char *detail) {
  snprintf(err, TEENY_REMOTE_ERR_LEN, fmt, detail);
  return rc;
}

/* Wait for events on the socket until the deadline.  0, or TIMEOUT/IO. */
static int wait_fd(redisContext *ctx, short events, uint64_t deadline,
                   char *err) {
  for (;;) {
    int64_t ms = left_ms(deadline);
    if (ms <= 0)
      return fail(err, TEENY_E_TIMEOUT, "%s", "no answer within --remote-timeout");
    struct pollfd p = {.fd = ctx->fd, .events = events};
    int n = poll(&p, 1, (int)(ms > 60000 ? 60000 : ms));
    if (n > 0)
      return 0;
    if (n < 0 && errno != EINTR)
      return fail(err, TEENY_E_IO, "poll: %s", strerror(errno));
  }
}

/* Write hiredis's whole output buffer. */
static int flush_out(redisContext *ctx, uint64_t deadline, uint64_t *bytes_out,
                     char *err) {
  int done = 0;
  while (!done) {
    size_t before = sdslen(ctx->obuf);
    if (redisBufferWrite(ctx, &done) != REDIS_OK)
      return fail(err, TEENY_E_IO, "write: %s", ctx->errstr);
    *bytes_out += before - sdslen(ctx->obuf);
    if (!done) {
      int rc = wait_fd(ctx, POLLOUT, deadline, err);
      if (rc)
        return rc;
    }
  }
  return 0;
}

/* Read once (the socket is readable or we have waited for it). */
static int read_some(redisContext *ctx, uint64_t *bytes_in, char *err) {
  char buf[16384];
  ssize_t n = read(ctx->fd, buf, sizeof buf);
  if (n > 0) {
    *bytes_in += (uint64_t)n;
    if (redisReaderFeed(ctx->reader, buf, (size_t)n) != REDIS_OK)
      return fail(err, TEENY_E_IO, "reply: %s", ctx->reader->errstr);
    return 0;
  }
  if (n == 0)
    return fail(err, TEENY_E_CLOSED, "%s", "the server closed the connection");
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    return 0;
  return fail(err, TEENY_E_IO, "read: %s", strerror(errno));
}

static int read_reply(redisContext *ctx, redisReply **out, uint64_t deadline,
                      uint64_t *bytes_in, char *err) {
  for (;;) {
    void *r = NULL;
    if (redisReaderGetReply(ctx->reader, &r) != REDIS_OK)
      return fail(err, TEENY_E_IO, "reply: %s", ctx->reader->errstr);
    if (r) {
      *out = r;
      return 0;
    }
    int rc = wait_fd(ctx, POLLIN, deadline, err);
    if (!rc)
      rc = read_some(ctx, bytes_in, err);
    if (rc)
      return rc;
  }
}

int teeny__remote_conn_append(teeny_remote_conn *c, int argc,
                              const char **argv, const size_t *lens) {
  return redisAppendCommandArgv(c->ctx, argc, argv, lens) == REDIS_OK
             ? 0
             : TEENY_E_NOMEM;
}

int teeny__remote_conn_run(teeny_remote_conn *c, teeny_remote_reply **replies,
                           size_t n, uint64_t deadline, uint64_t *bytes_in,
                           uint64_t *bytes_out, char *err) {
  for (size_t i = 0; i < n; i++)
    replies[i] = NULL;
  int rc = flush_out(c->ctx, deadline, bytes_out, err);
  for (size_t i = 0; !rc && i < n; i++)
    rc = read_reply(c->ctx, &replies[i], deadline, bytes_in, err);
  if (rc)
    for (size_t i = 0; i < n; i++) {
      if (replies[i])
        freeReplyObject(replies[i]);
      replies[i] = NULL;
    }
  return rc;
}

/* One command, its reply checked: OK-ish (not an error reply). */
static int command(teeny_remote_conn *c, uint64_t deadline, char *err,
                   int argc, const char **argv) {
  size_t lens[4];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  uint64_t in = 0, out = 0;
  redisReply *r = NULL;
  int rc = teeny__remote_conn_append(c, argc, argv, lens);
  if (!rc)
    rc = teeny__remote_conn_run(c, &r, 1, deadline, &in, &out, err);
  if (!rc && r->type == REDIS_REPLY_ERROR) {
    snprintf(err, TEENY_REMOTE_ERR_LEN, "%s refused: %.200s", argv[0], r->str);
    rc = TEENY_E_PERM;
  }
  if (r)
    freeReplyObject(r);
  return rc;
}

void teeny__remote_conn_close(teeny_remote_conn *c) {
  if (!c)
    return;
  if (c->ctx)
    redisFree(c->ctx);
  teeny__free(c);
}

teeny_remote_conn *teeny__remote_conn_open(const teeny_remote_addr *addr,
                                           uint64_t deadline, char *err) {
  int64_t ms = left_ms(deadline);
  if (ms <= 0) {
    fail(err, TEENY_E_TIMEOUT, "%s", "no time left to connect");
    return NULL;
  }
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
  teeny_remote_conn *c = teeny__calloc(1, sizeof *c);
  if (!c) {
    fail(err, TEENY_E_NOMEM, "%s", "out of memory");
    return NULL;
  }
  c->ctx = addr->path[0] ? redisConnectUnixWithTimeout(addr->path, tv)
                         : redisConnectWithTimeout(addr->host, addr->port, tv);
  if (!c->ctx || c->ctx->err) {
    fail(err, TEENY_E_CONNECT, "connect: %s",
         c->ctx ? c->ctx->errstr : "out of memory");
    goto fail;
  }
  int fl = fcntl(c->ctx->fd, F_GETFL);
  if (fl < 0 || fcntl(c->ctx->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    fail(err, TEENY_E_IO, "fcntl: %s", strerror(errno));
    goto fail;
  }
  c->ctx->flags &= ~REDIS_BLOCK; /* our deadlines from here on */
  if (addr->pass[0]) {
    const char *auth_user[] = {"AUTH", addr->user, addr->pass};
    const char *auth[] = {"AUTH", addr->pass};
    if (addr->user[0] ? command(c, deadline, err, 3, auth_user)
                      : command(c, deadline, err, 2, auth))
      goto fail;
  }
  if (addr->db) {
    char db[16];
    snprintf(db, sizeof db, "%d", addr->db);
    const char *sel[] = {"SELECT", db};
    if (command(c, deadline, err, 2, sel))
      goto fail;
  }
  const char *ping[] = {"PING"}; /* it answers: the connection is usable */
  if (command(c, deadline, err, 1, ping))
    goto fail;
  return c;
fail:
  teeny__remote_conn_close(c);
  return NULL;
}
