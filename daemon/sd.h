/*
 * daemon/sd.h — the two systemd protocols teenycd speaks, without
 * libsystemd: socket activation and readiness notification.
 *
 * Socket activation (sd_listen_fds(3)): when $LISTEN_PID is our pid and
 * $LISTEN_FDS >= 1, the first passed descriptor (fd 3) is our listening
 * socket.  The variables are removed from the environment once read.
 *
 * Notification (sd_notify(3)): one datagram per state change ("READY=1",
 * "STATUS=...", "STOPPING=1") to the AF_UNIX socket named by
 * $NOTIFY_SOCKET — a path, or an abstract name written with a leading '@'.
 * Without $NOTIFY_SOCKET every call is a no-op.
 */
#ifndef TEENY_DAEMON_SD_H
#define TEENY_DAEMON_SD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#define TEENY_SD_LISTEN_FDS_START 3

/* The activated listening socket: 0 and *fd = 3 when activated, 0 and
 * *fd = -1 when not, TEENY_E_INVAL with err filled when the variables are
 * malformed or fd 3 is not a socket.  Sets FD_CLOEXEC on it. */
int teeny__sd_listen_fd(int *fd, char *err, size_t errsz);

typedef struct teeny_sd_notify {
  int fd;                  /* datagram socket, -1 when disabled */
  struct sockaddr_un addr; /* the manager's socket */
  socklen_t addr_len;      /* its length (abstract names are counted) */
} teeny_sd_notify;

/* Read $NOTIFY_SOCKET (and unset it, so children do not inherit it).
 * Returns 0 (disabled when the variable is absent) or TEENY_E_INVAL /
 * TEENY_E_IO with err filled. */
int teeny__sd_notify_open(teeny_sd_notify *n, char *err, size_t errsz);
/* Send state, e.g. "READY=1\nSTATUS=serving".  0, or TEENY_E_IO. */
int teeny__sd_notify(const teeny_sd_notify *n, const char *state);
/* printf-style "STATUS=..." */
int teeny__sd_notifyf(const teeny_sd_notify *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void teeny__sd_notify_close(teeny_sd_notify *n); /* NULL is a no-op */

#endif /* TEENY_DAEMON_SD_H */
