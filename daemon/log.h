/*
 * daemon/log.h — teenycd's log: one line per event, four levels.
 *
 * Where lines go: to stderr by default.  Under systemd ($JOURNAL_STREAM
 * names the device:inode of our stderr) each line starts with the kernel-style
 * syslog priority prefix "<3>" .. "<7>" so journald keeps the level and adds
 * its own timestamp; otherwise each line starts with an ISO-8601 UTC
 * timestamp and the level.  With --log-file the lines go to that file
 * (always timestamped), which teeny__log_reopen reopens on SIGHUP so
 * logrotate can move it.
 *
 * Thread-safe: workers log too.  One write(2) per line under a mutex, so
 * lines never interleave.  The one teeny_log lives in main().
 */
#ifndef TEENY_DAEMON_LOG_H
#define TEENY_DAEMON_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"

/* Levels are syslog priorities, so they double as journal prefixes. */
typedef enum teeny_log_level {
  TEENY_LOG_ERROR = 3, /* the daemon cannot do what it was asked */
  TEENY_LOG_WARN = 4,  /* something is wrong but service goes on */
  TEENY_LOG_INFO = 6,  /* start, stop, connections refused, repairs */
  TEENY_LOG_DEBUG = 7  /* per-request detail */
} teeny_log_level;

typedef struct teeny_log {
  int level;          /* lines above this priority are dropped */
  bool journal;       /* stderr goes to journald: "<N>" prefixes */
  char *path;         /* --log-file, or NULL for stderr */
  int fd;             /* where lines are written */
  pthread_mutex_t mu; /* serialises writes and reopen */
} teeny_log;

/* "error", "warn", "info", "debug" -> level; -1 if none. */
int teeny__log_level_parse(const char *name);
const char *teeny__log_level_name(int level);

/* Open the log: path NULL means stderr.  Returns 0, or TEENY_E_IO with
 * "cannot open PATH: reason" in err (TEENY_STORE_ERR_LEN-sized is enough). */
int teeny__log_open(teeny_log *l, int level, const char *path, char *err,
                    size_t errsz);
/* Reopen the log file (SIGHUP).  On failure the old file stays in use and
 * TEENY_E_IO is returned.  No-op for stderr. */
int teeny__log_reopen(teeny_log *l);
void teeny__log_close(teeny_log *l); /* NULL is a no-op */

/* Write one line at level (newlines in the message become spaces). */
void teeny__log(teeny_log *l, int level, const char *fmt, ...)
    TEENY_PRINTF(3, 4);
bool teeny__log_enabled(const teeny_log *l, int level);

/* ---- rate-limited lines ---------------------------------------------------
 * For events anyone can cause at will (refused connections): at most one
 * line per interval.  The events not written are counted; the next line
 * written says how many, or teeny__ratelog_due hands the count to a timer
 * once the interval has passed.  Loop thread only. */
typedef struct teeny_ratelog {
  uint64_t interval_ms; /* at most one line per this */
  uint64_t last_ms;     /* loop time of the last line written; 0: none */
  uint64_t suppressed;  /* events since then that were not written */
} teeny_ratelog;

/* An event at now_ms: true when its line may be written; then *missed
 * gets the events not written since the last line (and the count is
 * reset).  False: counted, write nothing. */
bool teeny__ratelog_allow(teeny_ratelog *r, uint64_t now_ms, uint64_t *missed);
/* The interval since the last line has passed and events were not
 * written: their count (reset to 0); else 0. */
uint64_t teeny__ratelog_due(teeny_ratelog *r, uint64_t now_ms);

#define TEENY_LOGE(l, ...) teeny__log((l), TEENY_LOG_ERROR, __VA_ARGS__)
#define TEENY_LOGW(l, ...) teeny__log((l), TEENY_LOG_WARN, __VA_ARGS__)
#define TEENY_LOGI(l, ...) teeny__log((l), TEENY_LOG_INFO, __VA_ARGS__)
#define TEENY_LOGD(l, ...)                                                     \
  do {                                                                         \
    if (teeny__log_enabled((l), TEENY_LOG_DEBUG))                              \
      teeny__log((l), TEENY_LOG_DEBUG, __VA_ARGS__);                           \
  } while (0)

#endif /* TEENY_DAEMON_LOG_H */
