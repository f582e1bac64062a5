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
 * memory_refused, index_rebuilds, store_errors).  "errors" counts failed
 * replies and store write failures (a compile answered but not cached)
 * together; store_errors counts the latter alone.
 */
#ifndef TEENY_DAEMON_STATS_H
#define TEENY_DAEMON_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

typedef struct teeny_stats {
  uint64_t requests;       /* requests answered (every op) */
  uint64_t memory_hits;    /* compile answers from the in-memory map */
  uint64_t disk_hits;      /* ... from the store */
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
} teeny_stats;

/* Extra counters beyond the required ones. */
#define TEENY_STATS_NEXTRA 13

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
} teeny_stats_snap;

void teeny__stats_init(teeny_stats *s);

/* Fill out (and extra[TEENY_STATS_NEXTRA], which out points at) from snap
 * and the store's entries and bytes. */
void teeny__stats_reply(const teeny_stats_snap *snap, uint64_t entries,
                        uint64_t bytes, teeny_msg_stats_reply *out,
                        teeny_msg_counter extra[TEENY_STATS_NEXTRA]);

#endif /* TEENY_DAEMON_STATS_H */
