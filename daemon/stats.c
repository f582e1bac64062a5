/*
 * daemon/stats.c — counters to the stats reply (see stats.h).
 */
#include <string.h>

#include "daemon/stats.h"

void teeny__stats_init(teeny_stats *s) {
  memset(s, 0, sizeof *s);
  s->start_ns = teeny__now_ns();
}

void teeny__stats_reply(const teeny_stats_snap *snap, uint64_t entries,
                        uint64_t bytes, teeny_msg_stats_reply *out,
                        teeny_msg_counter extra[TEENY_STATS_NEXTRA]) {
  const teeny_stats *s = &snap->s;
  memset(out, 0, sizeof *out);
  out->requests = s->requests;
  out->memory_hits = s->memory_hits;
  out->disk_hits = s->disk_hits;
  out->hits = s->memory_hits + s->disk_hits;
  out->misses = s->misses;
  out->compiles = s->compiles;
  out->joins = s->joins;
  out->errors = s->errors + s->store_errors;
  out->entries = entries;
  out->bytes = bytes;
  out->evictions = s->evictions;
  out->compile_ms_total = s->compile_ms_total;
  out->saved_ms_total = s->saved_ms_total;
  out->uptime_s = (teeny__now_ns() - s->start_ns) / 1000000000u;
  extra[0] = (teeny_msg_counter){
      "compile_ms_avg",
      s->compiles ? s->compile_ms_total / (double)s->compiles : 0.0};
  extra[1] = (teeny_msg_counter){"memcache_entries",
                                 (double)snap->memcache_entries};
  extra[2] = (teeny_msg_counter){"memcache_bytes", (double)snap->memcache_bytes};
  extra[3] = (teeny_msg_counter){"connections", (double)snap->connections};
  extra[4] = (teeny_msg_counter){"uids", (double)snap->uids};
  extra[5] = (teeny_msg_counter){"compile_timeouts",
                                 (double)s->compile_timeouts};
  extra[6] = (teeny_msg_counter){"compiler_deaths", (double)s->compiler_deaths};
  extra[7] = (teeny_msg_counter){"memory_budget", (double)snap->memory_budget};
  extra[8] = (teeny_msg_counter){"memory_used", (double)snap->memory_used};
  extra[9] = (teeny_msg_counter){"memory_peak", (double)snap->memory_peak};
  extra[10] = (teeny_msg_counter){"memory_refused",
                                  (double)snap->memory_refused};
  extra[11] = (teeny_msg_counter){"index_rebuilds", (double)s->index_rebuilds};
  extra[12] = (teeny_msg_counter){"store_errors", (double)s->store_errors};
  out->extra = extra;
  out->nextra = TEENY_STATS_NEXTRA;
}
