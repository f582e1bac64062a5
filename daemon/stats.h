/*
 * daemon/stats.h — the daemon's counters and the stats reply built from
 * them (PROTOCOL.md §4.4).
 *
 * Every counter is touched only on the loop thread, so plain integers
 * suffice.  entries and bytes are not counted here: they come from the
 * store (kept by its triggers) when a stats request is answered.  The wire
 * names are exactly: requests, hits, memory_hits, disk_hits, misses,
 * compiles, joins, errors, entries, bytes, evictions, compile_ms_total,
 * saved_ms_total, uptime_s; a few extras follow (compile_ms_avg,
 * memcache_entries, memcache_bytes, connections, uids, compile_timeouts,
 * compiler_deaths, memory_budget, memory_used, memory_peak,
 * memory_refused, index_rebuilds, store_errors, and the remote tier's:
 * remote_hits, remote_misses, remote_errors, remote_bytes_in,
 * remote_bytes_out, remote_leases_won, remote_leases_waited,
 * remote_lease_takeovers, remote_wait_timeouts, remote_rejected,
 * remote_uploads, remote_uploads_dropped, remote_unavailable, remote_up;
 * cubins, cubin_bytes, sass_made, sass_failed, sass_queued,
 * sass_ms_total; tuned, tunings, tune_hits, tune_joins; max_bytes).
 * Two histograms go with them (`stats --prometheus`): compile_seconds, the
 * wall time of each compile, and hit_seconds, each cache hit's latency
 * from the decoded request to its reply queued (memory, disk and remote
 * hits); fixed buckets (stats.c), observed on the loop thread like the
 * counters and zeroed with them.
 * "errors" counts failed replies and store write failures (a compile
 * answered but not cached) together; store_errors counts the latter alone.
 * "hits" is memory + disk + remote hits; remote_hits counts replies, the
 * other remote_* count the tier's lookups and traffic (remote.h).
 */
#ifndef TEENY_DAEMON_STATS_H
#define TEENY_DAEMON_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/remote.h"
#include "daemon/sass.h"
#include "proto/msg.h"
#include "store/store.h"

/* Buckets of a histogram: counts[i] holds values <= the i-th bound (and
 * above the one before), counts[TEENY_HIST_MAX_BOUNDS] those above every
 * bound of that histogram (its own count may be lower: stats.c). */
#define TEENY_HIST_MAX_BOUNDS 16
typedef struct teeny_hist {
  uint64_t counts[TEENY_HIST_MAX_BOUNDS + 1]; /* per bucket, not cumulative */
  double sum;                                 /* of the values, seconds */
  uint64_t count;                             /* observations */
} teeny_hist;

/* The histograms a stats reply carries, in this order. */
typedef enum teeny_hist_id {
  TEENY_HIST_COMPILE = 0, /* "compile_seconds" */
  TEENY_HIST_HIT,         /* "hit_seconds" */
  TEENY_HIST__COUNT
} teeny_hist_id;

typedef struct teeny_stats {
  uint64_t requests;       /* requests answered (every op) */
  uint64_t memory_hits;    /* compile answers from the in-memory map */
  uint64_t disk_hits;      /* ... from the store */
  uint64_t remote_hits;    /* ... from the remote tier (via the store) */
  uint64_t misses;         /* compile requests that needed a compile */
  uint64_t compiles;       /* compiles run */
  uint64_t joins;          /* requests that waited on another's work */
  uint64_t errors;         /* replies with status < 0 */
  uint64_t evictions;      /* entries removed by the size cap */
  uint64_t compile_timeouts; /* compiles cancelled at --compile-timeout */
  uint64_t compiler_deaths;  /* compile processes that died mid-compile */
  uint64_t index_rebuilds;   /* damaged index.db moved aside and rebuilt */
  uint64_t store_errors;     /* compiles whose artifacts the store refused */
  double compile_ms_total; /* wall time of all compiles */
  double saved_ms_total;   /* stored compile_ms of every hit */
  uint64_t start_ns;       /* teeny__now_ns() at startup */
  teeny_hist hists[TEENY_HIST__COUNT]; /* compile time, hit latency */
} teeny_stats;

/* Extra counters beyond the required ones. */
#define TEENY_STATS_NEXTRA 38

/* A snapshot for one stats reply: the counters plus what the loop knows
 * about memory and connections; the store fills entries/bytes later. */
typedef struct teeny_stats_snap {
  teeny_stats s;           /* the counters */
  uint64_t memcache_entries; /* entries in the in-memory map */
  uint64_t memcache_bytes;   /* bytes they hold */
  uint64_t connections;      /* open client connections */
  uint64_t uids;             /* uids with connections */
  uint64_t memory_budget;    /* --memory-budget */
  uint64_t memory_used;      /* charged to it now */
  uint64_t memory_peak;      /* the most ever charged */
  uint64_t memory_refused;   /* frames, replies, requests it refused */
  teeny_remote_counters remote; /* the remote tier's (zero when off) */
  teeny_sass_counts sass;    /* the SASS lane's */
  uint64_t tunings;          /* tune requests answered "tune" */
  uint64_t tune_hits;        /* ... answered with a record */
  uint64_t tune_joins;       /* ... that waited on another's tuning */
  uint64_t max_bytes;        /* --max-size (0: no cap) */
  const char *store;         /* the store's root (the config's string,
                                alive while the daemon runs) */
} teeny_stats_snap;

/* Storage for one stats reply's histograms (the reply points into it). */
typedef struct teeny_stats_hists {
  teeny_msg_hist v[TEENY_HIST__COUNT]; /* what the reply carries */
  uint64_t counts[TEENY_HIST__COUNT][TEENY_HIST_MAX_BOUNDS + 1]; /* trimmed */
} teeny_stats_hists;

void teeny__stats_init(teeny_stats *s);

/* Count one observation of seconds in histogram id of s. */
void teeny__stats_observe(teeny_stats *s, teeny_hist_id id, double seconds);

/* Fill out (and extra[TEENY_STATS_NEXTRA] and hists, which out points at)
 * from snap and the store's entries, bytes, cubins and tuning records. */
void teeny__stats_reply(const teeny_stats_snap *snap, const teeny_store_stats *ss,
                        teeny_msg_stats_reply *out,
                        teeny_msg_counter extra[TEENY_STATS_NEXTRA],
                        teeny_stats_hists *hists);

#endif /* TEENY_DAEMON_STATS_H */
