/*
 * daemon/config.c — the settings table, value parsers, the config file
 * reader and the environment fallbacks (see config.h).
 *
 * One table row per setting drives everything: the file's keys, the flags
 * (teenycd.c builds its getopt table from it) and the help text.  Values are
 * parsed by type: strings, sizes with binary suffixes, durations, octal
 * modes, counts, log levels.  Load: once at startup.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "daemon/sass.h"
#include "store/store.h"
#include "teeny/units.h"

#define LINE_MAX_LEN 4096
#define SUN_PATH_MAX 107 /* sizeof(sockaddr_un.sun_path) - 1 */

typedef enum opt_type {
  T_STR,   /* a string (paths, names) */
  T_SIZE,  /* bytes, "2G" */
  T_COUNT, /* a plain count */
  T_MS,    /* a duration, "10s" */
  T_MODE,  /* an octal mode, "0660" */
  T_LEVEL, /* a log level */
  T_SASS   /* auto, driver, ptxas, off */
} opt_type;

typedef struct opt {
  const char *key;     /* file key */
  const char *flag;    /* the flag: the key with '-' for '_' */
  opt_type type;       /* how the value is parsed */
  size_t off;          /* offset of the field in teeny_config */
  uint64_t min, max;   /* range for numbers */
  const char *arg;     /* argument name in --help */
  const char *help;    /* one line of meaning */
  const char *def;     /* the default, as shown */
  const char *example; /* an example value */
} opt;

/* A unit for showing values: its suffix and what one is worth. */
typedef struct unit_name {
  const char *name; /* "G", "min" */
  uint64_t mul;     /* bytes or milliseconds */
} unit_name;

#define F(field) offsetof(teeny_config, field)
static const opt opts[] = {
    {"socket", "socket", T_STR, F(socket), 0, 0, "PATH", "Unix socket to listen on",
     "$TEENYCD_SOCKET, else $XDG_RUNTIME_DIR/teenycd.sock, else "
     TEENY_DEFAULT_SOCKET,
     "/run/teenycd/teenycd.sock"},
    {"socket_mode", "socket-mode", T_MODE, F(socket_mode), 0, 0777, "MODE",
     "permissions of the socket file (octal)", "0660", "0666"},
    {"cache_dir", "cache-dir", T_STR, F(cache_dir), 0, 0, "DIR", "artifact store root",
     "$TEENYC_CACHE_DIR, else $XDG_CACHE_HOME/teenyc, else "
     TEENY_STORE_DEFAULT_ROOT,
     "/var/cache/teenyc"},
    {"max_size", "max-size", T_SIZE, F(max_size), 0, UINT64_MAX, "BYTES",
     "store size cap; least recently used entries go (0: no cap)", "2G",
     "500M"},
    {"memcache_size", "memcache-size", T_SIZE, F(memcache_size), 0, UINT64_MAX, "BYTES",
     "byte cap of the in-memory request map (0: off)", "256M", "1G"},
    {"workers", "workers", T_COUNT, F(workers), 1, 1024, "N",
     "compiles one client may run at once (the compile lane has N + 2 "
     "threads, so others always find one)", "number of cores", "4"},
    {"store_workers", "store-workers", T_COUNT, F(store_workers), 1, 1024, "N",
     "threads for spec steps, disk hits, puts and stats", "3", "4"},
    {"admin_workers", "admin-workers", T_COUNT, F(admin_workers), 1, 1024, "N",
     "threads for list, show, purge and verify (at nice +5)", "2", "3"},
    {"memory_budget", "memory-budget", T_SIZE, F(memory_budget), 1u << 20, UINT64_MAX, "BYTES",
     "request frames, unread replies and waiting requests held in total; "
     "over it, frames wait and replies are refused with BUSY "
     "(at least 2 x --max-frame)", "1G", "512M"},
    {"max_frame", "max-frame", T_SIZE, F(max_frame), 64, UINT32_MAX, "BYTES",
     "largest request frame accepted", "16M", "4M"},
    {"max_source", "max-source", T_SIZE, F(max_source), 1, TEENY_MAX_SOURCE_BYTES, "BYTES",
     "largest kernel source accepted (at most 1M)", "1M", "256K"},
    {"max_inflight", "max-inflight", T_COUNT, F(max_inflight), 1, 1u << 20, "N",
     "unanswered requests allowed per connection", "64", "256"},
    {"max_connections", "max-connections", T_COUNT, F(max_connections), 1, 1u << 20, "N",
     "open client connections", "1024", "4096"},
    {"max_connections_per_uid", "max-connections-per-uid", T_COUNT, F(max_connections_per_uid), 1, 1u << 20, "N",
     "open connections of one uid", "256", "64"},
    {"max_inflight_per_uid", "max-inflight-per-uid", T_COUNT, F(max_inflight_per_uid), 1, 1u << 24, "N",
     "unanswered requests of one uid, over all its connections", "1024",
     "4096"},
    {"idle_timeout", "idle-timeout", T_MS, F(idle_timeout_ms), 0, UINT64_MAX, "TIME",
     "close a connection idle this long (0: never)", "300s", "10m"},
    {"read_timeout", "read-timeout", T_MS, F(read_timeout_ms), 1, UINT64_MAX, "TIME",
     "close a connection stalled mid-frame, or not reading its replies, "
     "this long", "10s", "2s"},
    {"shutdown_timeout", "shutdown-timeout", T_MS, F(shutdown_timeout_ms), 0, UINT64_MAX, "TIME",
     "on SIGTERM, wait this long for running compiles", "10s", "30s"},
    {"compile_timeout", "compile-timeout", T_MS, F(compile_timeout_ms), 0, UINT64_MAX, "TIME",
     "cancel a compile that runs this long; its waiters get TIMEOUT (0: never)",
     "60s", "5m"},
    {"compile_memory", "compile-memory", T_SIZE, F(compile_memory), 0, UINT64_MAX, "BYTES",
     "address-space limit of each compile process (0: none)", "4G", "8G"},
    {"flush_interval", "flush-interval", T_MS, F(flush_interval_ms), 10, UINT64_MAX, "TIME",
     "write batched last-used times this often", "2s", "500ms"},
    {"busy_poll_us", "busy-poll-us", T_COUNT, F(busy_poll_us), 0, 10000, "N",
     "after I/O, poll this many microseconds before sleeping (0: off)", "50",
     "0"},
    {"sass", "sass", T_SASS, F(sass), 0, 0, "HOW",
     "make cubins with: auto (the driver's JIT for its GPU, else ptxas), "
     "driver, ptxas or off (stored ones are still served)",
     "auto", "ptxas"},
    {"ptxas", "ptxas", T_STR, F(ptxas), 0, 0, "PATH",
     "the CUDA toolkit's ptxas for --sass auto or ptxas",
     "ptxas on $PATH, else /usr/local/cuda/bin/ptxas", "/usr/local/cuda-13.0/bin/ptxas"},
    {"sass_timeout", "sass-timeout", T_MS, F(sass_timeout_ms), 1, UINT64_MAX, "TIME",
     "give up on one cubin after this long", "120s", "10m"},
    {"tune_timeout", "tune-timeout", T_MS, F(tune_timeout_ms), 1, UINT64_MAX, "TIME",
     "processes waiting on another's autotuning run stop waiting after this "
     "long (it may be stuck) and one of them tunes instead",
     "10m", "30m"},
    {"admin_group", "admin-group", T_STR, F(admin_group), 0, 0, "GROUP",
     "members may purge, repair and shut down (root and the daemon's "
     "user always may)",
     "none", "teenyc-admin"},
    {"remote", "remote", T_STR, F(remote), 0, 0, "URL",
     "shared remote tier: redis://[user:pass@]host:port/db or "
     "unix:///path[?db=N] (rediss:// is not available: no TLS in hiredis "
     "0.14)", "none (off)", "redis://10.0.0.5:6379/0"},
    {"remote_timeout", "remote-timeout", T_MS, F(remote_timeout_ms), 1, 600000, "TIME",
     "a lookup's whole budget on the remote; past it (or while it is down) "
     "the daemon compiles locally", "500ms", "200ms"},
    {"remote_lease", "remote-lease", T_MS, F(remote_lease_ms), 30, 3600000, "TIME",
     "cluster-wide compile lease, renewed every third of it while compiling",
     "10s", "5s"},
    {"remote_wait", "remote-wait", T_MS, F(remote_wait_ms), 0, UINT64_MAX - 1, "TIME",
     "longest wait for another node's compile before compiling here",
     "--compile-timeout + 10s", "30s"},
    {"remote_ttl", "remote-ttl", T_MS, F(remote_ttl_ms), 0, UINT64_MAX, "TIME",
     "expiry of uploaded entries (0: none; Redis evicts by its maxmemory-policy)",
     "0", "168h"},
    {"remote_max_entry", "remote-max-entry", T_SIZE, F(remote_max_entry), 4096, 512u << 20, "BYTES",
     "largest entry uploaded or accepted from the remote", "16M", "4M"},
    {"remote_prefix", "remote-prefix", T_STR, F(remote_prefix), 0, 0, "TEXT",
     "namespace of the remote's keys (one per cluster or compiler fleet)",
     "teenyc:", "gpu-a:teenyc:"},
    {"remote_secret_file", "remote-secret-file", T_STR, F(remote_secret_file), 0, 0, "PATH",
     "sign uploads and require signed entries: HMAC-SHA256 with this "
     "file's contents (16+ bytes, the same on every node)", "none (unsigned)",
     "/etc/teenyc/remote.key"},
    {"log_level", "log-level", T_LEVEL, F(log_level), 0, 0, "LEVEL",
     "error, warn, info or debug", "info", "debug"},
    {"log_file", "log-file", T_STR, F(log_file), 0, 0, "PATH",
     "log to PATH (reopened on SIGHUP) instead of stderr", "stderr",
     "/var/log/teenycd.log"},
};
#undef F

size_t teeny__config_count(void) { return TEENY_ARRAY_LEN(opts); }
const char *teeny__config_flag(size_t i) { return opts[i].flag; }
const char *teeny__config_key(size_t i) { return opts[i].key; }

void teeny__config_init(teeny_config *c) {
  memset(c, 0, sizeof *c);
  c->socket_mode = 0660;
  c->max_size = 2ull << 30;
  c->memcache_size = 256ull << 20;
  c->max_frame = 16u << 20;
  c->max_source = TEENY_MAX_SOURCE_BYTES;
  c->max_inflight = 64;
  c->max_connections = 1024;
  c->max_connections_per_uid = 256;
  c->max_inflight_per_uid = 1024;
  c->store_workers = 3;
  c->admin_workers = 2;
  c->memory_budget = 1ull << 30;
  c->idle_timeout_ms = 300000;
  c->read_timeout_ms = 10000;
  c->shutdown_timeout_ms = 10000;
  c->compile_timeout_ms = 60000;
  c->compile_memory = 4ull << 30;
  c->flush_interval_ms = 2000;
  c->busy_poll_us = 50;
  c->sass = 0; /* TEENY_SASS_AUTO */
  c->sass_timeout_ms = 120000;
  c->tune_timeout_ms = 600000;
  c->log_level = TEENY_LOG_INFO;
  c->remote_timeout_ms = 500;
  c->remote_lease_ms = 10000;
  c->remote_wait_ms = UINT64_MAX; /* resolved: compile_timeout + 10 s */
  c->remote_max_entry = 16u << 20;
}

void teeny__config_close(teeny_config *c) {
  if (!c)
    return;
  teeny__free(c->socket);
  teeny__free(c->cache_dir);
  teeny__free(c->admin_group);
  teeny__free(c->ptxas);
  teeny__free(c->remote);
  teeny__free(c->remote_prefix);
  teeny__free(c->remote_secret_file);
  teeny__free(c->log_file);
  teeny__free(c->config_file);
  memset(c, 0, sizeof *c);
}

/* ---- value parsers ------------------------------------------------------- */

/* A plain decimal count. */
static int parse_count(const char *s, uint64_t *out) {
  if (!isdigit((unsigned char)*s))
    return TEENY_E_INVAL;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(s, &end, 10);
  while (*end == ' ')
    end++;
  if (errno || *end)
    return TEENY_E_INVAL;
  *out = x;
  return 0;
}

static int parse_mode(const char *s, uint64_t *out) {
  if (!*s || strspn(s, "01234567") != strlen(s) || strlen(s) > 4)
    return TEENY_E_INVAL;
  *out = strtoull(s, NULL, 8);
  return 0;
}

/* ---- setting one value --------------------------------------------------- */

static const opt *find_opt(const char *key) {
  char k[64];
  size_t n = strlen(key);
  if (n >= sizeof k)
    return NULL;
  for (size_t i = 0; i <= n; i++)
    k[i] = key[i] == '-' ? '_' : key[i];
  for (size_t i = 0; i < TEENY_ARRAY_LEN(opts); i++)
    if (strcmp(opts[i].key, k) == 0)
      return &opts[i];
  return NULL;
}

static int set_string(char **field, const char *value) {
  char *copy = teeny__strdup(value);
  if (!copy)
    return TEENY_E_NOMEM;
  teeny__free(*field);
  *field = *value ? copy : NULL;
  if (!*value)
    teeny__free(copy);
  return 0;
}

/* Sizes and durations through the parser teenyctl shares (teeny/units.h):
 * its message, naming what is accepted, goes to err. */
static int parse_typed(const opt *o, const char *value, uint64_t *v, char *err) {
  switch (o->type) {
  case T_SIZE: return teeny_size_parse(value, v, err, TEENY_CONFIG_ERR_LEN);
  case T_COUNT: return parse_count(value, v);
  case T_MS: return teeny_duration_parse(value, v, err, TEENY_CONFIG_ERR_LEN);
  case T_MODE: return parse_mode(value, v);
  default: return TEENY_E_INVAL;
  }
}

static void store_number(teeny_config *c, const opt *o, uint64_t v) {
  char *field = (char *)c + o->off;
  switch (o->type) {
  case T_COUNT:
    if (o->off == offsetof(teeny_config, workers) ||
        o->off == offsetof(teeny_config, store_workers) ||
        o->off == offsetof(teeny_config, admin_workers)) {
      *(unsigned *)(void *)field = (unsigned)v;
      return;
    }
    *(uint64_t *)(void *)field = v;
    return;
  case T_MODE: *(unsigned *)(void *)field = (unsigned)v; return;
  default: *(uint64_t *)(void *)field = v; return;
  }
}

int teeny__config_set(teeny_config *c, const char *key, const char *value,
                      char *err) {
  const opt *o = find_opt(key);
  if (!o) {
    snprintf(err, TEENY_CONFIG_ERR_LEN, "unknown key '%.64s'", key);
    return TEENY_E_INVAL;
  }
  if (o->type == T_STR)
    return set_string((char **)(void *)((char *)c + o->off), value);
  if (o->type == T_LEVEL) {
    int lv = teeny__log_level_parse(value);
    if (lv < 0) {
      snprintf(err, TEENY_CONFIG_ERR_LEN,
               "%s: bad log level '%.64s' (error, warn, info, debug)", o->key,
               value);
      return TEENY_E_INVAL;
    }
    c->log_level = lv;
    return 0;
  }
  if (o->type == T_SASS) {
    int m = teeny__sass_mode_parse(value);
    if (m < 0) {
      snprintf(err, TEENY_CONFIG_ERR_LEN,
               "%s: bad value '%.64s' (auto, driver, ptxas, off)", o->key, value);
      return TEENY_E_INVAL;
    }
    c->sass = m;
    return 0;
  }
  uint64_t v;
  char why[TEENY_CONFIG_ERR_LEN] = "";
  if (parse_typed(o, value, &v, why) || v < o->min || v > o->max) {
    if (*why)
      snprintf(err, TEENY_CONFIG_ERR_LEN, "%s: %.400s", o->key, why);
    else
      snprintf(err, TEENY_CONFIG_ERR_LEN, "%s: bad value '%.64s' (e.g. %s)",
               o->key, value, o->example);
    return TEENY_E_INVAL;
  }
  store_number(c, o, v);
  return 0;
}

/* ---- showing a value (teenyctl config) ----------------------------------- */

/* The largest unit that divides v exactly: 2G, 1536K, 100. */
static void format_unit(uint64_t v, const unit_name *units, size_t n, char *out,
                        size_t size) {
  size_t i = 0;
  while (i + 1 < n && v && v % units[i].mul != 0)
    i++;
  snprintf(out, size, "%" PRIu64 "%s", v ? v / units[i].mul : 0, v ? units[i].name : "");
}

/* redis://user:secret@host -> redis://user:***@host */
static void format_url(const char *url, char *out, size_t size) {
  const char *at = strchr(url, '@'), *scheme = strstr(url, "://");
  const char *colon = scheme && at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
  if (!colon) {
    snprintf(out, size, "%s", url);
    return;
  }
  snprintf(out, size, "%.*s***%s", (int)(colon + 1 - url), url, at);
}

void teeny__config_value(const teeny_config *c, size_t i, char *out, size_t size) {
  static const unit_name sizes[] = {{"T", 1ull << 40}, {"G", 1ull << 30}, {"M", 1ull << 20},
                                    {"K", 1ull << 10}, {"", 1}};
  static const unit_name times[] = {{"d", 86400000}, {"h", 3600000}, {"min", 60000},
                                    {"s", 1000},     {"ms", 1}};
  const opt *o = &opts[i];
  const char *field = (const char *)c + o->off;
  uint64_t v = 0;
  if (o->type == T_COUNT || o->type == T_MODE)
    v = o->type == T_MODE || o->off == offsetof(teeny_config, workers) ||
                o->off == offsetof(teeny_config, store_workers) ||
                o->off == offsetof(teeny_config, admin_workers)
            ? *(const unsigned *)(const void *)field
            : *(const uint64_t *)(const void *)field;
  else if (o->type == T_SIZE || o->type == T_MS)
    v = *(const uint64_t *)(const void *)field;
  switch (o->type) {
  case T_STR: {
    const char *str = *(char *const *)(const void *)field;
    if (str && o->off == offsetof(teeny_config, remote))
      format_url(str, out, size);
    else
      snprintf(out, size, "%s", str ? str : "");
    return;
  }
  case T_SIZE: format_unit(v, sizes, TEENY_ARRAY_LEN(sizes), out, size); return;
  case T_MS: format_unit(v, times, TEENY_ARRAY_LEN(times), out, size); return;
  case T_MODE: snprintf(out, size, "%04" PRIo64, v); return;
  case T_LEVEL: snprintf(out, size, "%s", teeny__log_level_name(c->log_level)); return;
  case T_SASS:
    snprintf(out, size, "%s", teeny__sass_mode_name((teeny_sass_mode)c->sass));
    return;
  default: snprintf(out, size, "%" PRIu64, v); return;
  }
}

/* ---- the file ------------------------------------------------------------ */

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
               s[n - 1] == '\r'))
    s[--n] = '\0';
  return s;
}

/* Cut a '#' comment (outside quotes) and unquote "value". */
static int clean_value(char *v, char **out) {
  bool quoted = *v == '"';
  if (quoted) {
    char *end = strchr(v + 1, '"');
    if (!end)
      return TEENY_E_INVAL;
    *end = '\0';
    char *rest = trim(end + 1);
    if (*rest && *rest != '#')
      return TEENY_E_INVAL;
    *out = v + 1;
    return 0;
  }
  char *hash = strchr(v, '#');
  if (hash)
    *hash = '\0';
  *out = trim(v);
  return 0;
}

/* One line: blank, comment, or key = value. */
static int load_line(teeny_config *c, char *line, char *err) {
  char *s = trim(line);
  if (!*s || *s == '#')
    return 0;
  char *eq = strchr(s, '=');
  if (!eq) {
    snprintf(err, TEENY_CONFIG_ERR_LEN, "expected 'key = value'");
    return TEENY_E_INVAL;
  }
  *eq = '\0';
  char *key = trim(s), *value;
  if (clean_value(trim(eq + 1), &value)) {
    snprintf(err, TEENY_CONFIG_ERR_LEN, "bad quoting in the value of '%.64s'",
             key);
    return TEENY_E_INVAL;
  }
  return teeny__config_set(c, key, value, err);
}

int teeny__config_load(teeny_config *c, const char *path, char *err) {
  FILE *f = fopen(path, "re");
  if (!f) {
    snprintf(err, TEENY_CONFIG_ERR_LEN, "%s: %s", path, strerror(errno));
    return TEENY_E_IO;
  }
  char line[LINE_MAX_LEN], msg[TEENY_CONFIG_ERR_LEN];
  int rc = 0, lineno = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      snprintf(msg, sizeof msg, "line longer than %d bytes", LINE_MAX_LEN - 2);
      rc = TEENY_E_INVAL;
    } else {
      rc = load_line(c, line, msg);
    }
  }
  if (rc)
    snprintf(err, TEENY_CONFIG_ERR_LEN, "%.100s:%d: %.380s", path, lineno,
             msg);
  fclose(f);
  return rc;
}

/* ---- resolution ---------------------------------------------------------- */

static int resolve_socket(teeny_config *c, char *err) {
  char buf[4096];
  const char *env = getenv("TEENYCD_SOCKET");
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (c->socket)
    snprintf(buf, sizeof buf, "%s", c->socket);
  else if (env && *env)
    snprintf(buf, sizeof buf, "%s", env);
  else if (xdg && xdg[0] == '/')
    snprintf(buf, sizeof buf, "%s/teenycd.sock", xdg);
  else
    snprintf(buf, sizeof buf, "%s", TEENY_DEFAULT_SOCKET);
  if (strlen(buf) > SUN_PATH_MAX) {
    snprintf(err, TEENY_CONFIG_ERR_LEN,
             "socket path is %zu bytes, a Unix socket allows %d: %.80s...",
             strlen(buf), SUN_PATH_MAX, buf);
    return TEENY_E_LIMIT;
  }
  return set_string(&c->socket, buf);
}

static int resolve_cache_dir(teeny_config *c, char *err) {
  char buf[4096];
  if (teeny_store_root_from_env(c->cache_dir, buf, sizeof buf)) {
    snprintf(err, TEENY_CONFIG_ERR_LEN, "cache directory path too long");
    return TEENY_E_LIMIT;
  }
  return set_string(&c->cache_dir, buf);
}

int teeny__config_resolve(teeny_config *c, char *err) {
  int rc = resolve_socket(c, err);
  if (!rc)
    rc = resolve_cache_dir(c, err);
  if (rc)
    return rc;
  if (!c->workers) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->workers = n > 0 ? (unsigned)(n > 1024 ? 1024 : n) : 1;
  }
  if (c->remote_wait_ms == UINT64_MAX)
    c->remote_wait_ms = c->compile_timeout_ms ? c->compile_timeout_ms + 10000 : 70000;
  if (!c->remote_prefix && set_string(&c->remote_prefix, "teenyc:"))
    return TEENY_E_NOMEM;
  if (strlen(c->remote_prefix) > 64 || strpbrk(c->remote_prefix, "{} \t\r\n")) {
    snprintf(err, TEENY_CONFIG_ERR_LEN,
             "remote_prefix: at most 64 bytes, without braces or spaces");
    return TEENY_E_INVAL;
  }
  if (c->max_source + 4096 > c->max_frame) {
    snprintf(err, TEENY_CONFIG_ERR_LEN,
             "max_frame (%" PRIu64 ") must exceed max_source (%" PRIu64
             ") by at least 4K",
             c->max_frame, c->max_source);
    return TEENY_E_INVAL;
  }
  if (c->memory_budget < 2 * c->max_frame) {
    snprintf(err, TEENY_CONFIG_ERR_LEN,
             "memory_budget (%" PRIu64 ") must be at least twice max_frame "
             "(%" PRIu64 "): frames being read may hold half of it",
             c->memory_budget, c->max_frame);
    return TEENY_E_INVAL;
  }
  return 0;
}

/* ---- help ---------------------------------------------------------------- */

void teeny__config_help(FILE *out) {
  for (size_t i = 0; i < TEENY_ARRAY_LEN(opts); i++) {
    const opt *o = &opts[i];
    char left[64];
    snprintf(left, sizeof left, "--%s %s", o->flag, o->arg);
    fprintf(out, "  %-24s %s\n", left, o->help);
    fprintf(out, "  %-24s default: %s; e.g. --%s %s\n", "", o->def, o->flag,
            o->example);
  }
}
