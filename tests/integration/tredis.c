/*
 * tests/integration/tredis.c — redis-server and a silent listener for the
 * remote tier's tests (see tredis.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "tests/integration/tredis.h"

bool tr_available(void) {
  if (system("command -v redis-server >/dev/null 2>&1") == 0)
    return true;
  fprintf(stderr, "redis-server is not installed (apt-get install redis-server, "
                  "or scripts/setup): skipping the remote tier's test\n");
  return false;
}

static bool pings(const tredis *r) {
  struct timeval tv = {0, 200000};
  redisContext *c = redisConnectUnixWithTimeout(r->sock, tv);
  bool ok = false;
  if (c && !c->err) {
    redisReply *x = redisCommand(c, "PING");
    ok = x && x->type == REDIS_REPLY_STATUS;
    if (x)
      freeReplyObject(x);
  }
  if (c)
    redisFree(c);
  return ok;
}

int tr_start(tredis *r) {
  memset(r, 0, sizeof *r);
  const char *tmp = getenv("TMPDIR");
  snprintf(r->dir, sizeof r->dir, "%s/teeny-redis-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(r->dir))
    return -1;
  snprintf(r->sock, sizeof r->sock, "%s/redis.sock", r->dir);
  snprintf(r->url, sizeof r->url, "unix://%s", r->sock);
  char logf[200];
  snprintf(logf, sizeof logf, "%s/redis.log", r->dir);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
      dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
    }
    execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", r->sock,
           "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
           "--dir", r->dir, "--logfile", logf, "--daemonize", "no",
           (char *)NULL);
    _exit(127);
  }
  if (pid < 0)
    return -1;
  r->pid = pid;
  for (int i = 0; i < 1000; i++) { /* 10 s */
    if (pings(r))
      return 0;
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      r->pid = 0;
      break;
    }
    usleep(10000);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "cat '%s' >&2", logf);
  fprintf(stderr, "redis-server did not answer on %s\n", r->sock);
  if (system(cmd) != 0)
    fprintf(stderr, "(no log)\n");
  return -1;
}

void tr_kill(tredis *r) {
  if (r->pid > 0) {
    kill(r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
  }
  r->pid = 0;
}

void tr_fini(tredis *r) {
  if (r->pid > 0) {
    kill(r->pid, SIGTERM);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
  }
  if (r->dir[0]) {
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    if (system(cmd) != 0)
      fprintf(stderr, "cannot remove %s\n", r->dir);
    r->dir[0] = '\0';
  }
}

long long tr_cmd(const tredis *r, char **str, size_t *len, const char *fmt, ...) {
  struct timeval tv = {2, 0};
  redisContext *c = redisConnectUnixWithTimeout(r->sock, tv);
  long long out = -1;
  if (str)
    *str = NULL;
  if (c && !c->err) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *x = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (x && x->type == REDIS_REPLY_INTEGER)
      out = x->integer;
    else if (x && (x->type == REDIS_REPLY_STRING || x->type == REDIS_REPLY_STATUS)) {
      out = (long long)x->len;
      if (str && (*str = malloc(x->len + 1))) {
        memcpy(*str, x->str, x->len);
        (*str)[x->len] = '\0';
      }
      if (len)
        *len = x->len;
    } else if (x && x->type == REDIS_REPLY_NIL) {
      out = 0;
    }
    if (x)
      freeReplyObject(x);
  }
  if (c)
    redisFree(c);
  return out;
}

char *tr_keys(const tredis *r, const char *pattern, int *n) {
  struct timeval tv = {2, 0};
  redisContext *c = redisConnectUnixWithTimeout(r->sock, tv);
  char *out = NULL;
  *n = 0;
  if (c && !c->err) {
    redisReply *x = redisCommand(c, "KEYS %s", pattern);
    if (x && x->type == REDIS_REPLY_ARRAY) {
      size_t total = 1;
      for (size_t i = 0; i < x->elements; i++)
        total += x->element[i]->len + 1;
      if ((out = malloc(total))) {
        out[0] = '\0';
        for (size_t i = 0; i < x->elements; i++) {
          strcat(out, x->element[i]->str);
          strcat(out, "\n");
        }
        *n = (int)x->elements;
      }
    }
    if (x)
      freeReplyObject(x);
  }
  if (c)
    redisFree(c);
  return out;
}

/* ---- the silent listener ------------------------------------------------------ */

static void *silent_loop(void *arg) {
  tsilent *s = arg;
  while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    if (poll(&p, 1, 50) <= 0)
      continue;
    int c = accept(s->fd, NULL, NULL);
    if (c >= 0 && s->nconns < 64)
      s->conns[s->nconns++] = c; /* read nothing, answer nothing */
    else if (c >= 0)
      close(c);
  }
  return NULL;
}

int ts_start(tsilent *s, const char *dir) {
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s/silent.sock", dir);
  snprintf(s->url, sizeof s->url, "unix://%s", s->path);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(s->path) >= sizeof a.sun_path)
    return -1;
  memcpy(a.sun_path, s->path, strlen(s->path) + 1);
  s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof a) ||
      listen(s->fd, 64) || pthread_create(&s->thread, NULL, silent_loop, s)) {
    if (s->fd >= 0)
      close(s->fd);
    s->fd = -1;
    return -1;
  }
  return 0;
}

void ts_stop(tsilent *s) {
  if (s->fd < 0)
    return;
  __atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
  pthread_join(s->thread, NULL);
  for (int i = 0; i < s->nconns; i++)
    close(s->conns[i]);
  close(s->fd);
  unlink(s->path);
  s->fd = -1;
}
