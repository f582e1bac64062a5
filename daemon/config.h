/*
 * daemon/config.h — teenycd's settings: defaults, a `key = value` config
 * file, command-line flags, and the environment fallbacks for the socket
 * and cache paths.
 *
 * Every setting is one row of a table (config.c): its key (`max_size`), its
 * flag (`--max-size`, the key with '-' for '_'), its type, its default and
 * an example; `teenycd --help` is generated from the same table, so the
 * help cannot drift from what is parsed.  Precedence: flag > file > env >
 * default.  Errors name the file and line, or the flag.  Nothing here keeps
 * global state; the one teeny_config lives in main().
 */
#ifndef TEENY_DAEMON_CONFIG_H
#define TEENY_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TEENY_CONFIG_ERR_LEN 512          /* size of every err sink */
#define TEENY_DEFAULT_SOCKET "/run/teenycd/teenycd.sock"
/* Modes of what teenycd creates in its store: the artifacts hold users'
 * kernel sources, so the teenyc group may read them and others may not
 * (the systemd units give the root 0750 as well). */
#define TEENY_DAEMON_DIR_MODE 0750
#define TEENY_DAEMON_FILE_MODE 0640

typedef struct teeny_config {
  char *socket;              /* socket path; NULL until resolved */
  unsigned socket_mode;      /* mode of the socket file we bind */
  char *cache_dir;           /* store root; NULL until resolved */
  uint64_t max_size;         /* store size cap in bytes (0: no cap) */
  uint64_t memcache_size;    /* byte cap of the in-memory map */
  unsigned workers;          /* compiles one client may run at once; 0 until
                                resolved */
  unsigned store_workers;    /* threads for spec steps, disk hits, puts */
  unsigned admin_workers;    /* threads for stats, list, show, purge, verify */
  uint64_t memory_budget;    /* frames, replies and requests held, in total */
  uint64_t max_frame;        /* largest request frame payload */
  uint64_t max_source;       /* largest compile source */
  uint64_t max_inflight;     /* unanswered requests per connection */
  uint64_t max_connections;  /* open client connections */
  uint64_t max_connections_per_uid; /* ... of one uid */
  uint64_t max_inflight_per_uid;    /* unanswered requests of one uid */
  uint64_t idle_timeout_ms;  /* close a connection idle this long (0: never) */
  uint64_t read_timeout_ms;  /* close one stalled mid-frame, or not reading
                                its replies, this long */
  uint64_t shutdown_timeout_ms; /* wait for running compiles at exit */
  uint64_t compile_timeout_ms;  /* cancel a compile running this long (0: never) */
  uint64_t compile_memory;      /* address-space cap of a compile process (0: none) */
  uint64_t flush_interval_ms;   /* batched last-used writes */
  uint64_t busy_poll_us;     /* keep polling this long after I/O (0: off) */
  int sass;                  /* teeny_sass_mode: how cubins are made */
  char *ptxas;               /* ptxas to use; NULL: $PATH, then the toolkit's */
  uint64_t sass_timeout_ms;  /* give up on one cubin after this long */
  uint64_t tune_timeout_ms;  /* waiters give up on a tuner after this long */
  char *admin_group;         /* group whose members are admins; NULL: none */
  char *remote;              /* remote tier URL (redis://, unix://); NULL: off */
  uint64_t remote_timeout_ms; /* a lookup's whole budget on the remote */
  uint64_t remote_lease_ms;  /* lease time while compiling (renewed at 1/3) */
  uint64_t remote_wait_ms;   /* longest wait on another node's compile */
  uint64_t remote_ttl_ms;    /* TTL of uploaded entries (0: none) */
  uint64_t remote_max_entry; /* largest entry uploaded or accepted */
  char *remote_prefix;       /* key namespace; "teenyc:" once resolved */
  char *remote_secret_file;  /* HMAC key for signed entries; NULL: plain */
  int log_level;             /* TEENY_LOG_* (syslog priority) */
  char *log_file;            /* log here instead of stderr; NULL: stderr */
  char *config_file;         /* --config FILE, for messages; NULL: none */
} teeny_config;

/* Fill c with the defaults (paths and workers stay unresolved). */
void teeny__config_init(teeny_config *c);
/* Free the strings c owns; c may be re-initialised.  NULL is a no-op. */
void teeny__config_close(teeny_config *c);

/* Set one setting by its key ("max_size"; '-' and '_' are the same) from
 * text.  Returns 0, or TEENY_E_INVAL with "unknown key 'k'" or "bad value
 * ..." in err (the caller adds where it came from). */
int teeny__config_set(teeny_config *c, const char *key, const char *value,
                      char *err);

/* Read path: `key = value` lines, '#' starts a comment, blank lines are
 * skipped, values may be "quoted".  The first error stops the read and is
 * reported as "path:line: message" in err; returns TEENY_E_INVAL or
 * TEENY_E_IO (cannot open). */
int teeny__config_load(teeny_config *c, const char *path, char *err);

/* Fill what is still unset: socket from $TEENYCD_SOCKET, else
 * $XDG_RUNTIME_DIR/teenycd.sock, else TEENY_DEFAULT_SOCKET; cache_dir via
 * teeny_store_root_from_env; workers from the online CPU count.  Checks
 * limits that depend on each other.  Returns 0 or TEENY_E_INVAL/LIMIT. */
int teeny__config_resolve(teeny_config *c, char *err);

/* For getopt_long: the number of settings, and setting i's flag name
 * ("max-size", in a static table) and whether it takes an argument. */
size_t teeny__config_count(void);
const char *teeny__config_flag(size_t i);
const char *teeny__config_key(size_t i);

/* Setting i's value in c as the config file would spell it ("2G", "60s",
 * "0660", "info"; "" for an unset string), into out[size].  A password in
 * the remote URL is shown as "***". */
#define TEENY_CONFIG_VALUE_LEN 4096
void teeny__config_value(const teeny_config *c, size_t i, char *out, size_t size);

/* The options part of --help: every setting with its argument, meaning,
 * default and an example. */
void teeny__config_help(FILE *out);

/* Sizes and durations are parsed by teeny_size_parse and
 * teeny_duration_parse (teeny/units.h), the parser teenyctl uses too. */

#endif /* TEENY_DAEMON_CONFIG_H */
