/*
 * client/discover.c — finding teenycd: the sockets a client tries, in
 * order, and why each one failed.
 *
 *   1. the explicit socket (teeny_client_opts.socket_path, --socket): only
 *      that one;
 *   2. otherwise $TEENYCD_SOCKET, then the per-user socket
 *      $XDG_RUNTIME_DIR/teenycd.sock, then the system socket
 *      /run/teenycd/teenycd.sock ($TEENYC_SYSTEM_SOCKET replaces it, for
 *      tests and unusual installs) — the first that answers wins.
 *
 * Only "nobody reachable there" moves on to the next candidate (no such
 * file, refused, permission denied); a daemon that answers and then fails
 * (another protocol version, a refused hello) ends the search with its own
 * error.  When none answers, the message names every path tried and why,
 * and a permission problem names the group that would let the user in.
 * Runs once per client open (and never on the hot path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client_int.h"

#define MAX_CANDIDATES 3

typedef struct candidate {
  char path[TEENY__SOCKET_MAX]; /* the socket */
  const char *source;           /* where it came from, for messages */
} candidate;

static const char *system_socket(void) {
  const char *env = getenv("TEENYC_SYSTEM_SOCKET");
  return env && env[0] == '/' ? env : TEENY_SYSTEM_SOCKET;
}

static int put_path(char *out, size_t size, const char *a, const char *b) {
  int n = snprintf(out, size, "%s%s", a, b);
  if (n < 0 || (size_t)n >= size || (size_t)n >= TEENY__SOCKET_MAX)
    return TEENY_E_LIMIT;
  return 0;
}

/* Append a candidate unless it is already there; TEENY_E_LIMIT if long. */
static int add(candidate *v, size_t *n, const char *a, const char *b,
               const char *source) {
  char p[TEENY__SOCKET_MAX];
  if (put_path(p, sizeof p, a, b))
    return TEENY_E_LIMIT;
  for (size_t i = 0; i < *n; i++)
    if (strcmp(v[i].path, p) == 0)
      return 0;
  snprintf(v[*n].path, sizeof v[*n].path, "%s", p);
  v[(*n)++].source = source;
  return 0;
}

/* The candidates, in order; returns how many (0: a path was too long). */
static size_t candidates(const char *explicit_path, candidate *v) {
  size_t n = 0;
  const char *env = getenv("TEENYCD_SOCKET");
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  int rc = 0;
  if (explicit_path && *explicit_path)
    return add(v, &n, explicit_path, "", "the given socket") ? 0 : n;
  if (env && *env)
    rc |= add(v, &n, env, "", "$TEENYCD_SOCKET");
  if (xdg && xdg[0] == '/')
    rc |= add(v, &n, xdg, "/teenycd.sock", "the per-user socket");
  rc |= add(v, &n, system_socket(), "", "the system socket");
  return rc ? 0 : n;
}

int teeny_client_socket_path(const char *explicit_path, char *out, size_t size) {
  candidate v[MAX_CANDIDATES];
  if (candidates(explicit_path, v) == 0)
    return TEENY_E_LIMIT;
  return put_path(out, size, v[0].path, "");
}

/* Why nobody could be reached at path (rc from teeny__conn_open, its
 * message in msg), as a few words for the summary. */
static void explain(const char *path, int rc, const char *msg, char *out, size_t size) {
  struct stat st;
  if (rc == TEENY_E_PERM && stat(path, &st) == 0) {
    char g[64];
    teeny__group_name(st.st_gid, g, sizeof g);
    snprintf(out, size, "permission denied (add yourself to group %s, then log in again)", g);
  } else if (rc == TEENY_E_PERM) {
    snprintf(out, size, "permission denied (on a directory above it)");
  } else if (stat(path, &st) != 0) {
    snprintf(out, size, "%s", errno == ENOENT ? "no such file" : strerror(errno));
  } else if (!S_ISSOCK(st.st_mode)) {
    snprintf(out, size, "not a socket");
  } else {
    const char *colon = strrchr(msg, ':'); /* "...: Connection refused" */
    snprintf(out, size, "%.160s", colon ? colon + 2 : msg);
  }
}

int teeny__client_discover(teeny_client *c) {
  candidate v[MAX_CANDIDATES];
  size_t n = candidates(c->socket_given ? c->socket : NULL, v);
  if (n == 0)
    return teeny__seterr(c->err, sizeof c->err, TEENY_E_LIMIT, "socket path too long");
  char tried[TEENY__ERR_LEN] = "";
  size_t len = 0;
  int worst = TEENY_E_CONNECT;
  for (size_t i = 0; i < n; i++) {
    memcpy(c->socket, v[i].path, sizeof c->socket);
    int rc = teeny__client_connect(c);
    if (rc != TEENY_E_CONNECT && rc != TEENY_E_PERM)
      return rc; /* it answered (0), or answered and failed */
    char why[192];
    explain(v[i].path, rc, c->err, why, sizeof why);
    if (rc == TEENY_E_PERM)
      worst = TEENY_E_PERM;
    int w = snprintf(tried + len, sizeof tried - len, "%s%s %s: %s", len ? "; " : "",
                     v[i].source, v[i].path, why);
    len = w > 0 && (size_t)w < sizeof tried - len ? len + (size_t)w : len;
  }
  memcpy(c->socket, v[0].path, sizeof c->socket);
  return teeny__seterr(c->err, sizeof c->err, worst, "cannot reach teenycd: tried %s", tried);
}
