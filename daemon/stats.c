/*
 * daemon/stats.c — counters to the stats reply (see stats.h).
 */
#include <string.h>

#include "daemon/stats.h"

void teeny__stats_init(teeny_stats *s) {
  memset(s, 0, sizeof *s);
  s->start_ns = teeny__now_ns();
}

void teeny__stats_reply(const teeny_stats_snap *snap, const teeny_store_stats *ss,
                        teeny_msg_stats_reply *out,
                        teeny_msg_counter extra[TEENY_STATS_NEXTRA]) {
  const teeny_stats *s = &snap->s;
  memset(out, 0, sizeof *out);
  out->requests = s->requests;
  out->memory_hits = s->memory_hits;
  out->disk_hits = s->disk_hits;
  out->hits = s->memory_hits + s->disk_hits + s->remote_hits;
  out->misses = s->misses;
  out->compiles = s->compiles;
  out->joins = s->joins;
  out->errors = s->errors + s->store_errors;
  out->entries = ss->entries;
  out->bytes = ss->bytes;
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
  const teeny_remote_counters *r = &snap->remote;
  extra[13] = (teeny_msg_counter){"remote_hits", (double)s->remote_hits};
  extra[14] = (teeny_msg_counter){"remote_misses", (double)r->misses};
  extra[15] = (teeny_msg_counter){"remote_errors", (double)r->errors};
  extra[16] = (teeny_msg_counter){"remote_bytes_in", (double)r->bytes_in};
  extra[17] = (teeny_msg_counter){"remote_bytes_out", (double)r->bytes_out};
  extra[18] = (teeny_msg_counter){"remote_leases_won", (double)r->leases_won};
  extra[19] = (teeny_msg_counter){"remote_leases_waited", (double)r->leases_waited};
  extra[20] = (teeny_msg_counter){"remote_lease_takeovers",
                                  (double)r->lease_takeovers};
  extra[21] = (teeny_msg_counter){"remote_wait_timeouts", (double)r->wait_timeouts};
  extra[22] = (teeny_msg_counter){"remote_rejected", (double)r->rejected};
  extra[23] = (teeny_msg_counter){"remote_uploads", (double)r->uploads};
  extra[24] = (teeny_msg_counter){"remote_uploads_dropped",
                                  (double)r->uploads_dropped};
  extra[25] = (teeny_msg_counter){"remote_unavailable", (double)r->unavailable};
  extra[26] = (teeny_msg_counter){"remote_up", (double)r->up};
  extra[27] = (teeny_msg_counter){"cubins", (double)ss->cubins};
  extra[28] = (teeny_msg_counter){"cubin_bytes", (double)ss->cubin_bytes};
  extra[29] = (teeny_msg_counter){"sass_made", (double)snap->sass.made};
  extra[30] = (teeny_msg_counter){"sass_failed", (double)snap->sass.failed};
  extra[31] = (teeny_msg_counter){"sass_queued", (double)snap->sass.queued};
  extra[32] = (teeny_msg_counter){"sass_ms_total", snap->sass.ms_total};
  extra[33] = (teeny_msg_counter){"tuned", (double)ss->tuned};
  extra[34] = (teeny_msg_counter){"tunings", (double)snap->tunings};
  extra[35] = (teeny_msg_counter){"tune_hits", (double)snap->tune_hits};
  extra[36] = (teeny_msg_counter){"tune_joins", (double)snap->tune_joins};
  out->extra = extra;
  out->nextra = TEENY_STATS_NEXTRA;
}
