/*
 * daemon/remote_url.c — the --remote URL (see remote.h):
 *
 *   redis://[user[:password]@]host[:port][/db]     host may be [v6addr]
 *   unix://[user[:password]@]/path/to/redis.sock[?db=N]
 *
 * rediss:// (TLS) is refused: Debian 12's libhiredis-dev is 0.14.1, which
 * has no TLS (hiredis_ssl arrived in hiredis 1.0).  Percent-escapes are
 * decoded in the user and password.  Parsed once at startup.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "daemon/remote.h"

static int bad(char *err, const char *what) {
  snprintf(err, TEENY_REMOTE_ERR_LEN, "bad remote URL: %s", what);
  return TEENY_E_INVAL;
}

static int hexval(char c) {
  return isdigit((unsigned char)c) ? c - '0'
         : isxdigit((unsigned char)c) ? (tolower((unsigned char)c) - 'a' + 10)
                                      : -1;
}

/* Copy [s, s+n) into out (size), decoding %XX.  0 or -1 (too long, bad). */
static int unescape(const char *s, size_t n, char *out, size_t size) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= n)
        return -1;
      int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
      if (hi < 0 || lo < 0)
        return -1;
      c = (char)(hi * 16 + lo);
      i += 2;
    }
    if (c == '\0' || k + 1 >= size)
      return -1;
    out[k++] = c;
  }
  out[k] = '\0';
  return 0;
}

/* "user:pass@" or "pass@"-less: fills user/pass, returns past the '@'. */
static const char *userinfo(const char *s, const char *end,
                            teeny_remote_addr *a, int *rc, char *err) {
  const char *at = memchr(s, '@', (size_t)(end - s));
  *rc = 0;
  if (!at)
    return s;
  const char *colon = memchr(s, ':', (size_t)(at - s));
  const char *uend = colon ? colon : at;
  if (unescape(s, (size_t)(uend - s), a->user, sizeof a->user) ||
      (colon && unescape(colon + 1, (size_t)(at - colon - 1), a->pass,
                         sizeof a->pass)))
    *rc = bad(err, "user or password too long or badly escaped");
  if (!colon && a->user[0]) { /* redis://secret@host: a password alone */
    memcpy(a->pass, a->user, sizeof a->pass < sizeof a->user ? sizeof a->pass
                                                              : sizeof a->user);
    a->user[0] = '\0';
  }
  return at + 1;
}

static int parse_db(const char *s, int *db, char *err) {
  char *e;
  long v = strtol(s, &e, 10);
  if (!*s || *e || v < 0 || v > 1000000)
    return bad(err, "the database must be a number");
  *db = (int)v;
  return 0;
}

static int parse_tcp(const char *s, teeny_remote_addr *a, char *err) {
  const char *end = s + strlen(s);
  const char *slash = strchr(s, '/');
  const char *hp_end = slash ? slash : end;
  int rc;
  s = userinfo(s, hp_end, a, &rc, err);
  if (rc)
    return rc;
  const char *host = s, *host_end, *port = NULL;
  if (*s == '[') { /* [v6]:port */
    const char *rb = memchr(s, ']', (size_t)(hp_end - s));
    if (!rb)
      return bad(err, "unclosed [ in the host");
    host = s + 1;
    host_end = rb;
    if (rb + 1 < hp_end && rb[1] == ':')
      port = rb + 2;
    else if (rb + 1 != hp_end)
      return bad(err, "junk after ]");
  } else {
    const char *colon = memchr(s, ':', (size_t)(hp_end - s));
    host_end = colon ? colon : hp_end;
    port = colon ? colon + 1 : NULL;
  }
  size_t hn = (size_t)(host_end - host);
  if (hn == 0 || hn >= sizeof a->host)
    return bad(err, "no host, or a host name too long");
  memcpy(a->host, host, hn);
  a->host[hn] = '\0';
  a->port = 6379;
  if (port) {
    char pbuf[8];
    size_t pn = (size_t)(hp_end - port);
    if (pn == 0 || pn >= sizeof pbuf)
      return bad(err, "bad port");
    memcpy(pbuf, port, pn);
    pbuf[pn] = '\0';
    char *e;
    long p = strtol(pbuf, &e, 10);
    if (*e || p < 1 || p > 65535)
      return bad(err, "bad port");
    a->port = (int)p;
  }
  if (slash && slash[1])
    return parse_db(slash + 1, &a->db, err);
  return 0;
}

static int parse_unix(const char *s, teeny_remote_addr *a, char *err) {
  const char *q = strchr(s, '?');
  const char *end = q ? q : s + strlen(s);
  const char *slash = memchr(s, '/', (size_t)(end - s));
  int rc;
  if (!slash)
    return bad(err, "unix:// wants an absolute path");
  s = userinfo(s, slash, a, &rc, err);
  if (rc)
    return rc;
  if (s != slash)
    return bad(err, "unix:// wants an absolute path");
  size_t n = (size_t)(end - slash);
  if (n >= sizeof a->path)
    return bad(err, "socket path too long");
  memcpy(a->path, slash, n);
  a->path[n] = '\0';
  if (q) {
    if (strncmp(q + 1, "db=", 3) != 0)
      return bad(err, "the only query is ?db=N");
    return parse_db(q + 4, &a->db, err);
  }
  return 0;
}

int teeny__remote_url_parse(const char *url, teeny_remote_addr *out, char *err) {
  memset(out, 0, sizeof *out);
  int rc;
  if (!url || !*url)
    return bad(err, "empty");
  if (strncmp(url, "rediss://", 9) == 0) {
    snprintf(err, TEENY_REMOTE_ERR_LEN,
             "rediss:// (TLS) is not supported: this teenycd is built on "
             "hiredis %d.%d.%d, which has no TLS (hiredis_ssl came with 1.0); "
             "reach Redis over a unix:// socket or a TLS tunnel instead "
             "(docs/operations.md)",
             HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
    return TEENY_E_UNSUPPORTED;
  }
  if (strncmp(url, "redis://", 8) == 0)
    rc = parse_tcp(url + 8, out, err);
  else if (strncmp(url, "unix://", 7) == 0)
    rc = parse_unix(url + 7, out, err);
  else
    return bad(err, "want redis://host:port/db or unix:///path (rediss:// is "
                    "not available in this build)");
  if (rc)
    return rc;
  if (out->path[0])
    snprintf(out->shown, sizeof out->shown, "unix://%s%s%s", out->user,
             out->user[0] || out->pass[0] ? ":***@" : "", out->path);
  else
    snprintf(out->shown, sizeof out->shown, "redis://%s%s%s:%d/%d", out->user,
             out->user[0] || out->pass[0] ? ":***@" : "", out->host, out->port,
             out->db);
  return 0;
}
