/*
 * tests/integration/it_proto.c — the protocol seen from a client: hello and
 * version negotiation, every class of malformed frame, the configurable
 * limits, and pipelining with out-of-order replies.  Each malformed input
 * must get the reply PROTOCOL.md §6.2 documents, close the connection
 * exactly when it says so, and leave the daemon serving everyone else.
 */
#include <msgpack.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/itest.h"

/* ---- raw frames ----------------------------------------------------------- */

typedef struct raw {
  msgpack_sbuffer sb; /* payload being packed */
  msgpack_packer pk;  /* packer into sb */
} raw;

static void raw_init(raw *r) {
  msgpack_sbuffer_init(&r->sb);
  msgpack_packer_init(&r->pk, &r->sb, msgpack_sbuffer_write);
}

static void raw_str(raw *r, const char *s) {
  msgpack_pack_str(&r->pk, strlen(s));
  msgpack_pack_str_body(&r->pk, s, strlen(s));
}

/* Send r's payload as one frame (plus extra bytes inside the frame). */
static int raw_send(tclient *c, raw *r, const void *extra, size_t nextra) {
  size_t n = r->sb.size + nextra;
  unsigned char hdr[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8), (unsigned char)n};
  int rc = tc_send_raw(c, hdr, 4) || tc_send_raw(c, r->sb.data, r->sb.size) ||
           (nextra && tc_send_raw(c, extra, nextra));
  msgpack_sbuffer_destroy(&r->sb);
  return rc ? -1 : 0;
}

/* A payload given as bytes, framed. */
static int bytes_send(tclient *c, const void *p, size_t n) {
  raw r;
  raw_init(&r);
  msgpack_sbuffer_write(&r.sb, p, n);
  return raw_send(c, &r, NULL, 0);
}

/* The next reply's envelope: id, status, error text (copied). */
static int recv_env(tclient *c, uint64_t *id, int *status, char *err,
                    size_t errsz) {
  teeny_msg_reply rep;
  int rc = tc_recv(c, TEENY_OP_NONE, &rep, 10000);
  if (rc)
    return rc;
  *id = rep.id;
  *status = rep.status;
  snprintf(err, errsz, "%s", rep.error ? rep.error : "");
  teeny_msg_reply_free(&rep);
  return 0;
}

static int send_hello(tclient *c, uint32_t version) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_HELLO;
  req.u.hello.version = version;
  req.u.hello.client = "it/1";
  return tc_send(c, &req);
}

/* ---- hello ---------------------------------------------------------------- */

static int check_hello_reply(tclient *c) {
  teeny_msg_reply rep;
  int ok = 0;
  if (send_hello(c, 1) || tc_recv(c, TEENY_OP_HELLO, &rep, 10000))
    return 0;
  ok = rep.status == 0 && rep.u.hello.version == 1 &&
       strcmp(rep.u.hello.server, "teenycd/" TEENY_VERSION_STRING) == 0 &&
       rep.u.hello.max_frame == (16u << 20) &&
       rep.u.hello.max_source == (1u << 20) && rep.u.hello.max_inflight == 64;
  teeny_msg_reply_free(&rep);
  return ok;
}

int it_hello_version(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  uint64_t id;
  int st;
  char err[256];
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  /* a version the server does not speak: VERSION, closed */
  CHECK(tc_connect(&c, d.sock) == 0);
  CHECK(send_hello(&c, 2) == 0);
  CHECK(recv_env(&c, &id, &st, err, sizeof err) == 0);
  CHECK_INT(st, ==, TEENY_E_VERSION);
  CHECK(strstr(err, "speaks 1") != NULL);
  CHECK(tc_closed(&c, 5000));
  /* a request before hello: PROTO, closed */
  CHECK(tc_connect(&c, d.sock) == 0);
  CHECK(tc_ping(&c) == TEENY_E_PROTO);
  CHECK(tc_closed(&c, 5000));
  /* hello: version, server, limits; a second hello is refused, link stays */
  CHECK(tc_connect(&c, d.sock) == 0);
  CHECK(check_hello_reply(&c));
  CHECK(send_hello(&c, 1) == 0);
  CHECK(recv_env(&c, &id, &st, err, sizeof err) == 0);
  CHECK_INT(st, ==, TEENY_E_PROTO);
  CHECK(tc_ping(&c) == 0);
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- malformed frames ------------------------------------------------------- */

/* One bad input on a fresh connection: expect (id, status) back and the
 * connection closed or still serving, as documented. */
static int expect(tdaemon *d, const char *what, bool hello,
                  int (*send)(tclient *), uint64_t want_id, int want_status,
                  bool closes) {
  tclient c;
  uint64_t id = 99;
  int st = 1;
  char err[256] = "";
  tc_init(&c);
  int ok = (hello ? tc_open(&c, d->sock) : tc_connect(&c, d->sock)) == 0 &&
           send(&c) == 0 && recv_env(&c, &id, &st, err, sizeof err) == 0 &&
           id == want_id && st == want_status &&
           (closes ? tc_closed(&c, 5000) : tc_ping(&c) == 0);
  if (!ok)
    fprintf(stderr,
            "%s: got id %llu status %d (%s), want id %llu status %d, %s\n",
            what, (unsigned long long)id, st, err,
            (unsigned long long)want_id, want_status,
            closes ? "closed" : "open");
  tc_close(&c);
  return ok;
}

static int send_zero_len(tclient *c) { return tc_send_raw(c, "\0\0\0\0", 4); }
static int send_oversize(tclient *c) {
  return tc_send_raw(c, "\x01\x00\x00\x01", 4); /* 16 MiB + 1 */
}
static int send_garbage(tclient *c) { return bytes_send(c, "\xc1\xc1\xc1", 3); }
static int send_array(tclient *c) { return bytes_send(c, "\x93\x01\x02\x03", 4); }
static int send_huge_count(tclient *c) {
  return bytes_send(c, "\xdf\xff\xff\xff\xff", 5); /* map of 2^32-1 pairs */
}

/* Start a map of nfields with "op": op and "id": id (the first two). */
static void raw_head(raw *r, uint32_t nfields, const char *op, uint64_t id) {
  raw_init(r);
  msgpack_pack_map(&r->pk, nfields);
  raw_str(r, "op");
  raw_str(r, op);
  raw_str(r, "id");
  msgpack_pack_uint64(&r->pk, id);
}

static int send_trailing(tclient *c) {
  raw r;
  raw_head(&r, 2, "ping", 5);
  return raw_send(c, &r, "\xc0", 1);
}

static int send_deep(tclient *c) {
  raw r;
  raw_head(&r, 3, "ping", 6);
  raw_str(&r, "junk");
  for (int i = 0; i < 40; i++)
    msgpack_pack_array(&r.pk, 1);
  msgpack_pack_nil(&r.pk);
  return raw_send(c, &r, NULL, 0);
}

static int send_op(tclient *c, const char *op, bool with_id, int id_as_str) {
  raw r;
  raw_init(&r);
  msgpack_pack_map(&r.pk, with_id ? 2 : 1);
  raw_str(&r, "op");
  raw_str(&r, op);
  if (with_id) {
    raw_str(&r, "id");
    if (id_as_str)
      raw_str(&r, "seven");
    else
      msgpack_pack_uint64(&r.pk, 7);
  }
  return raw_send(c, &r, NULL, 0);
}

static int send_unknown_op(tclient *c) { return send_op(c, "frobnicate", true, 0); }
static int send_missing_id(tclient *c) { return send_op(c, "ping", false, 0); }
static int send_string_id(tclient *c) { return send_op(c, "ping", true, 1); }

/* compile with a kernel field of the wrong type (an integer) */
static int send_wrong_type(tclient *c) {
  raw r;
  raw_head(&r, 4, "compile", 8);
  raw_str(&r, "source");
  raw_str(&r, "void k(void) {}");
  raw_str(&r, "kernel");
  msgpack_pack_int(&r.pk, 5);
  return raw_send(c, &r, NULL, 0);
}

static int send_kernel_named(tclient *c, const char *kernel, uint64_t id,
                             unsigned flags) {
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  if (!src)
    return -1;
  tc_compile t;
  const char *b[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  tc_compile_init(&t, src, n, kernel, b);
  t.req.id = id;
  t.req.u.compile.flags = flags;
  int rc = tc_send(c, &t.req);
  free(src);
  return rc;
}

static int send_traversal(tclient *c) {
  return send_kernel_named(c, "../../etc/passwd", 9, 0);
}
static int send_long_name(tclient *c) {
  char name[101];
  memset(name, 'k', 100);
  name[100] = '\0';
  return send_kernel_named(c, name, 10, 0);
}
static int send_dotted_name(tclient *c) {
  return send_kernel_named(c, "vector_add.o", 11, 0);
}

/* A kernel name with a NUL inside: raw, since the encoder refuses it. */
static int send_nul_name(tclient *c) {
  raw r;
  raw_head(&r, 4, "compile", 12);
  raw_str(&r, "source");
  raw_str(&r, "x");
  raw_str(&r, "kernel");
  msgpack_pack_str(&r.pk, 5);
  msgpack_pack_str_body(&r.pk, "ab\0cd", 5);
  return raw_send(c, &r, NULL, 0);
}

static int send_bad_flags(tclient *c) {
  raw r;
  raw_head(&r, 5, "compile", 13);
  raw_str(&r, "source");
  raw_str(&r, "x");
  raw_str(&r, "kernel");
  raw_str(&r, "k");
  raw_str(&r, "flags");
  msgpack_pack_uint64(&r.pk, 6);
  return raw_send(c, &r, NULL, 0);
}

static int send_ping_first(tclient *c) { return send_op(c, "ping", true, 0); }

/* A frame that stops half-way: the read timeout (1 s here) closes it. */
static int stalled_frame(tdaemon *d) {
  tclient c;
  uint64_t id = 99;
  int st = 0;
  char err[256] = "";
  tc_init(&c);
  uint64_t t0 = tc_now_us();
  int ok = tc_open(&c, d->sock) == 0 &&
           tc_send_raw(&c, "\x00\x00\x00\x40\x82\xa2", 6) == 0 &&
           recv_env(&c, &id, &st, err, sizeof err) == 0 &&
           st == TEENY_E_TIMEOUT && tc_closed(&c, 5000);
  double s = (double)(tc_now_us() - t0) / 1e6;
  if (!ok || s > 4.0)
    fprintf(stderr, "stalled frame: status %d after %.1f s\n", st, s);
  tc_close(&c);
  return ok && s <= 4.0;
}

/* A frame cut short by the end of the stream: the daemon just closes. */
static int truncated_frame(tdaemon *d) {
  tclient c;
  tc_init(&c);
  int ok = tc_open(&c, d->sock) == 0 &&
           tc_send_raw(&c, "\x00\x00\x00\x40\x82", 5) == 0 &&
           shutdown(c.fd, SHUT_WR) == 0 && tc_closed(&c, 5000);
  tc_close(&c);
  return ok;
}

int it_malformed_frames(void) {
  tdaemon d;
  bool failed = true;
  teeny_msg_stats_reply st;
  CHECK(td_init(&d) == 0);
  const char *args[] = {"--read-timeout", "1", NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  /* framing errors: id 0, closed */
  CHECK(expect(&d, "zero length", true, send_zero_len, 0, TEENY_E_PROTO, true));
  CHECK(expect(&d, "oversize", true, send_oversize, 0, TEENY_E_TOOBIG, true));
  CHECK(expect(&d, "oversize before hello", false, send_oversize, 0,
               TEENY_E_TOOBIG, true));
  /* before hello: closed */
  CHECK(expect(&d, "request before hello", false, send_ping_first, 7,
               TEENY_E_PROTO, true));
  CHECK(expect(&d, "garbage before hello", false, send_garbage, 0,
               TEENY_E_PROTO, true));
  /* inside a well-framed message: answered, connection stays */
  CHECK(expect(&d, "garbage", true, send_garbage, 0, TEENY_E_PROTO, false));
  CHECK(expect(&d, "not a map", true, send_array, 0, TEENY_E_PROTO, false));
  CHECK(expect(&d, "huge count", true, send_huge_count, 0, TEENY_E_PROTO,
               false));
  CHECK(expect(&d, "trailing bytes", true, send_trailing, 0, TEENY_E_PROTO,
               false));
  CHECK(expect(&d, "too deep", true, send_deep, 0, TEENY_E_PROTO, false));
  CHECK(expect(&d, "missing id", true, send_missing_id, 0, TEENY_E_PROTO,
               false));
  CHECK(expect(&d, "string id", true, send_string_id, 0, TEENY_E_PROTO, false));
  CHECK(expect(&d, "unknown op", true, send_unknown_op, 7,
               TEENY_E_UNSUPPORTED, false));
  CHECK(expect(&d, "wrong field type", true, send_wrong_type, 8,
               TEENY_E_PROTO, false));
  CHECK(expect(&d, "unknown flag bit", true, send_bad_flags, 13,
               TEENY_E_PROTO, false));
  /* hostile kernel names never reach a path */
  CHECK(expect(&d, "path traversal", true, send_traversal, 9, TEENY_E_NAME,
               false));
  CHECK(expect(&d, "long name", true, send_long_name, 10, TEENY_E_NAME, false));
  CHECK(expect(&d, "dotted name", true, send_dotted_name, 11, TEENY_E_NAME,
               false));
  CHECK(expect(&d, "NUL in name", true, send_nul_name, 12, TEENY_E_PROTO,
               false));
  /* stalls and cut streams */
  CHECK(stalled_frame(&d));
  CHECK(truncated_frame(&d));
  /* still serving, nothing stored, every error counted */
  CHECK(it_stats(d.sock, &st) == 0);
  CHECK_INT(st.entries, ==, 0);
  CHECK_INT(st.compiles, ==, 0);
  CHECK_INT(st.errors, >=, 19);
  failed = false;
fail:
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- limits ------------------------------------------------------------------ */

static const char *const slow_variants[][3] = {
    {"D=f32", "BLOCK_SIZE=1024", NULL},
    {"D=f32", "BLOCK_SIZE=2048", NULL},
    {"D=f16", "BLOCK_SIZE=1024", NULL},
};

/* Send variant v of the slow kernel (cold) with id. */
static int send_slow(tclient *c, const char *src, size_t n, int v,
                     uint64_t id) {
  tc_compile t;
  tc_compile_init(&t, src, n, "slow", slow_variants[v]);
  t.req.id = id;
  return tc_send(c, &t.req);
}

static int inflight_limit(tdaemon *d, const char *src, size_t n) {
  tclient c;
  int busy = 0, ok = 0;
  tc_init(&c);
  if (tc_open(&c, d->sock) || send_slow(&c, src, n, 0, 1) ||
      send_slow(&c, src, n, 1, 2) || send_slow(&c, src, n, 2, 3))
    goto done;
  for (int i = 0; i < 3; i++) {
    uint64_t id;
    int st;
    char err[256];
    if (recv_env(&c, &id, &st, err, sizeof err))
      goto done;
    busy += st == TEENY_E_BUSY && id == 3;
    ok += st == 0 && id != 3;
  }
done:
  tc_close(&c);
  if (busy != 1 || ok != 2)
    fprintf(stderr, "in-flight limit: %d busy, %d ok\n", busy, ok);
  return busy == 1 && ok == 2;
}

static int source_limit(tdaemon *d) {
  tclient c;
  teeny_msg_reply rep;
  char big[20000];
  memset(big, ' ', sizeof big);
  tc_init(&c);
  memset(&rep, 0, sizeof rep);
  const char *b[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  int ok = tc_open(&c, d->sock) == 0 &&
           it_compile(&c, big, sizeof big, "vector_add", b, 0, 0, &rep) == 0 &&
           rep.status == TEENY_E_LIMIT && strstr(rep.error, "source");
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  return ok;
}

static int connection_limit(tdaemon *d) {
  tclient cs[3], extra;
  uint64_t id;
  int st = 0, ok = 1;
  char err[256];
  tc_init(&extra);
  for (int i = 0; i < 3; i++) {
    tc_init(&cs[i]);
    ok &= tc_open(&cs[i], d->sock) == 0;
  }
  ok = ok && tc_connect(&extra, d->sock) == 0 &&
       recv_env(&extra, &id, &st, err, sizeof err) == 0 &&
       st == TEENY_E_BUSY && tc_closed(&extra, 5000);
  tc_close(&cs[0]);
  usleep(100000);
  ok = ok && tc_open(&extra, d->sock) == 0 && tc_ping(&extra) == 0;
  for (int i = 0; i < 3; i++)
    tc_close(&cs[i]);
  tc_close(&extra);
  if (!ok)
    fprintf(stderr, "connection limit: status %d\n", st);
  return ok;
}

static int idle_limit(tdaemon *d) {
  tclient c;
  tc_init(&c);
  uint64_t t0 = tc_now_us();
  int ok = tc_open(&c, d->sock) == 0 && tc_closed(&c, 5000);
  double s = (double)(tc_now_us() - t0) / 1e6;
  tc_close(&c);
  if (!ok || s < 0.9 || s > 3.5)
    fprintf(stderr, "idle timeout: closed=%d after %.2f s\n", ok, s);
  return ok && s >= 0.9 && s <= 3.5;
}

int it_limits(void) {
  tdaemon d;
  bool failed = true;
  size_t n;
  char *src = it_slow_kernel(300, &n);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  const char *args[] = {"--max-inflight", "2",      "--max-source", "16K",
                        "--max-connections", "3",   "--idle-timeout", "1",
                        NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(inflight_limit(&d, src, n));
  CHECK(source_limit(&d));
  usleep(100000); /* the daemon sees the earlier connections close */
  CHECK(connection_limit(&d));
  CHECK(idle_limit(&d));
  failed = false;
fail:
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- pipelining ------------------------------------------------------------------ */

int it_pipelined(void) {
  tdaemon d;
  tclient c;
  teeny_msg_reply rep;
  bool failed = true;
  size_t n, vn;
  char *src = it_slow_kernel(300, &n);
  char *vsrc = tc_kernel_source("vector_add", &vn);
  const char *vb[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  tc_init(&c);
  memset(&rep, 0, sizeof rep);
  CHECK(td_init(&d) == 0);
  CHECK(src && vsrc);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  /* warm one kernel, so a later request for it is a memory hit */
  CHECK(it_compile(&c, vsrc, vn, "vector_add", vb, 0, 0, &rep) == 0);
  CHECK_INT(rep.status, ==, 0);
  teeny_msg_reply_free(&rep);
  /* cold compile, ping, warm hit — all written before reading */
  CHECK(send_slow(&c, src, n, 0, 100) == 0);
  teeny_msg_request ping;
  memset(&ping, 0, sizeof ping);
  ping.op = TEENY_OP_PING;
  ping.id = 101;
  CHECK(tc_send(&c, &ping) == 0);
  tc_compile t;
  tc_compile_init(&t, vsrc, vn, "vector_add", vb);
  t.req.id = 102;
  CHECK(tc_send(&c, &t.req) == 0);
  uint64_t order[3];
  for (int i = 0; i < 3; i++) {
    int st;
    char err[256];
    CHECK(recv_env(&c, &order[i], &st, err, sizeof err) == 0);
    CHECK_INT(st, ==, 0);
  }
  fprintf(stderr, "reply order: %llu %llu %llu\n",
          (unsigned long long)order[0], (unsigned long long)order[1],
          (unsigned long long)order[2]);
  CHECK_INT(order[0], ==, 101); /* the ping overtakes the compile */
  CHECK_INT(order[1], ==, 102); /* so does the memory hit */
  CHECK_INT(order[2], ==, 100);
  failed = false;
fail:
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  free(src);
  free(vsrc);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
