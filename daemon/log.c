/*
 * daemon/log.c — the daemon's line log (see log.h).
 *
 * A line is formatted into a stack buffer (long messages are cut at
 * LINE_MAX_LEN bytes) and written with one write(2) under the mutex, so
 * lines from the loop and the workers never interleave.  Load: a few lines
 * per connection at debug level, a handful per hour at info.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"

#define LINE_MAX_LEN 2048

static const struct {
  const char *name; /* as in --log-level */
  int level;        /* syslog priority */
} levels[] = {{"error", TEENY_LOG_ERROR},
              {"warn", TEENY_LOG_WARN},
              {"info", TEENY_LOG_INFO},
              {"debug", TEENY_LOG_DEBUG}};

int teeny__log_level_parse(const char *name) {
  for (size_t i = 0; i < TEENY_ARRAY_LEN(levels); i++)
    if (strcmp(name, levels[i].name) == 0)
      return levels[i].level;
  if (strcmp(name, "warning") == 0)
    return TEENY_LOG_WARN;
  return -1;
}

const char *teeny__log_level_name(int level) {
  for (size_t i = 0; i < TEENY_ARRAY_LEN(levels); i++)
    if (levels[i].level == level)
      return levels[i].name;
  return "?";
}

static int open_file(const char *path) {
  return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
              0640);
}

/* $JOURNAL_STREAM is "dev:inode" of the stream systemd connected to our
 * stderr; it counts only if stderr is still that stream (a child whose
 * stderr was redirected inherits the variable too). */
static bool stderr_is_journal(void) {
  const char *js = getenv("JOURNAL_STREAM");
  unsigned long long dev, ino;
  struct stat st;
  if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
      fstat(STDERR_FILENO, &st))
    return false;
  return (unsigned long long)st.st_dev == dev &&
         (unsigned long long)st.st_ino == ino;
}

int teeny__log_open(teeny_log *l, int level, const char *path, char *err,
                    size_t errsz) {
  memset(l, 0, sizeof *l);
  l->level = level;
  l->fd = STDERR_FILENO;
  pthread_mutex_init(&l->mu, NULL);
  if (!path) {
    l->journal = stderr_is_journal();
    return 0;
  }
  l->path = teeny__strdup(path);
  int fd = l->path ? open_file(path) : -1;
  if (fd < 0) {
    snprintf(err, errsz, "cannot open log file %s: %s", path,
             l->path ? strerror(errno) : "out of memory");
    return TEENY_E_IO;
  }
  l->fd = fd;
  return 0;
}

int teeny__log_reopen(teeny_log *l) {
  if (!l->path)
    return 0;
  int fd = open_file(l->path);
  if (fd < 0)
    return TEENY_E_IO;
  pthread_mutex_lock(&l->mu);
  int old = l->fd;
  l->fd = fd;
  pthread_mutex_unlock(&l->mu);
  if (old > STDERR_FILENO)
    close(old);
  return 0;
}

void teeny__log_close(teeny_log *l) {
  if (!l)
    return;
  if (l->fd > STDERR_FILENO)
    close(l->fd);
  l->fd = STDERR_FILENO;
  teeny__free(l->path);
  l->path = NULL;
  pthread_mutex_destroy(&l->mu);
}

bool teeny__log_enabled(const teeny_log *l, int level) {
  return l && level <= l->level;
}

/* "2025-11-30T19:53:00.123Z teenycd[42]: warn: " into buf. */
static size_t stamp(const teeny_log *l, int level, char *buf, size_t n) {
  if (l->journal && !l->path)
    return (size_t)snprintf(buf, n, "<%d>", level);
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
  k += (size_t)snprintf(buf + k, n - k, ".%03dZ teenycd[%d]: %s: ",
                        (int)(tv.tv_usec / 1000), (int)getpid(),
                        teeny__log_level_name(level));
  return k;
}

void teeny__log(teeny_log *l, int level, const char *fmt, ...) {
  if (!teeny__log_enabled(l, level))
    return;
  char line[LINE_MAX_LEN];
  size_t k = stamp(l, level, line, sizeof line - 1);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + k, sizeof line - 1 - k, fmt, ap);
  va_end(ap);
  size_t end = m < 0 ? k : k + (size_t)m;
  if (end > sizeof line - 2)
    end = sizeof line - 2;
  for (size_t i = k; i < end; i++)
    if (line[i] == '\n' || line[i] == '\r')
      line[i] = ' ';
  line[end++] = '\n';
  pthread_mutex_lock(&l->mu);
  ssize_t w = write(l->fd, line, end);
  pthread_mutex_unlock(&l->mu);
  (void)w; /* nowhere to report a failing log */
}

/* ---- rate-limited lines ------------------------------------------------------ */

bool teeny__ratelog_allow(teeny_ratelog *r, uint64_t now_ms, uint64_t *missed) {
  if (r->last_ms && now_ms - r->last_ms < r->interval_ms) {
    r->suppressed++;
    return false;
  }
  *missed = r->suppressed;
  r->suppressed = 0;
  r->last_ms = now_ms ? now_ms : 1;
  return true;
}

uint64_t teeny__ratelog_due(teeny_ratelog *r, uint64_t now_ms) {
  if (!r->suppressed || now_ms - r->last_ms < r->interval_ms)
    return 0;
  uint64_t n = r->suppressed;
  r->suppressed = 0;
  r->last_ms = now_ms ? now_ms : 1;
  return n;
}
