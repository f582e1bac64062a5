/*
 * daemon/sd.c — socket activation and sd_notify over their plain
 * protocols (see sd.h).  Both are read once at startup; notifications are a
 * handful per daemon lifetime, so nothing here is hot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/sd.h"

static int parse_pos(const char *s, long *out) {
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v <= 0)
    return -1;
  *out = v;
  return 0;
}

int teeny__sd_listen_fd(int *fd, char *err, size_t errsz) {
  *fd = -1;
  const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
  if (!pid_s || !fds_s)
    return 0;
  long pid, nfds;
  int rc = 0;
  if (parse_pos(pid_s, &pid) || parse_pos(fds_s, &nfds)) {
    snprintf(err, errsz, "malformed LISTEN_PID=%.32s / LISTEN_FDS=%.32s",
             pid_s, fds_s);
    rc = TEENY_E_INVAL;
    goto done;
  }
  if (pid != (long)getpid())
    goto done; /* meant for another process */
  struct stat st;
  if (fstat(TEENY_SD_LISTEN_FDS_START, &st) || !S_ISSOCK(st.st_mode)) {
    snprintf(err, errsz, "LISTEN_FDS=%ld but fd 3 is not a socket", nfds);
    rc = TEENY_E_INVAL;
    goto done;
  }
  fcntl(TEENY_SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
  *fd = TEENY_SD_LISTEN_FDS_START;
done:
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  return rc;
}

int teeny__sd_notify_open(teeny_sd_notify *n, char *err, size_t errsz) {
  memset(n, 0, sizeof *n);
  n->fd = -1;
  const char *path = getenv("NOTIFY_SOCKET");
  if (!path || !*path)
    return 0;
  size_t len = strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof n->addr.sun_path) {
    snprintf(err, errsz, "unusable NOTIFY_SOCKET=%.64s", path);
    unsetenv("NOTIFY_SOCKET");
    return TEENY_E_INVAL;
  }
  n->addr.sun_family = AF_UNIX;
  memcpy(n->addr.sun_path, path, len);
  if (path[0] == '@')
    n->addr.sun_path[0] = '\0'; /* abstract namespace */
  n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
                            (path[0] == '/'));
  unsetenv("NOTIFY_SOCKET");
  n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (n->fd < 0) {
    snprintf(err, errsz, "notify socket: %s", strerror(errno));
    return TEENY_E_IO;
  }
  return 0;
}

int teeny__sd_notify(const teeny_sd_notify *n, const char *state) {
  if (!n || n->fd < 0)
    return 0;
  ssize_t w = sendto(n->fd, state, strlen(state), MSG_NOSIGNAL,
                     (const struct sockaddr *)&n->addr, n->addr_len);
  return w < 0 ? TEENY_E_IO : 0;
}

int teeny__sd_notifyf(const teeny_sd_notify *n, const char *fmt, ...) {
  if (!n || n->fd < 0)
    return 0;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return teeny__sd_notify(n, buf);
}

void teeny__sd_notify_close(teeny_sd_notify *n) {
  if (!n)
    return;
  if (n->fd >= 0)
    close(n->fd);
  n->fd = -1;
}
