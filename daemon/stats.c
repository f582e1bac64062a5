/*
 * daemon/stats.c — counters and histograms to the stats reply (see
 * stats.h).  The bucket bounds are fixed here, in seconds, so every
 * scrape of every daemon has the same buckets (Prometheus sums them).
 */
#include <string.h>

#include "daemon/stats.h"

/* Compiles take milliseconds to a minute; hits microseconds (memory) to
 * milliseconds (disk, a busy loop). */
static const double compile_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                        0.25,  0.5,    1,     2.5,  5,     10,   30, 60};
static const double hit_bounds[] = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
                                    0.001,   0.0025,   0.005,   0.01,   0.025,   0.1, 1};

static const struct {
  const char *name;     /* on the wire */
  const double *bounds; /* ascending */
  size_t n;             /* <= TEENY_HIST_MAX_BOUNDS */
} hist_defs[TEENY_HIST__COUNT] = {
    [TEENY_HIST_COMPILE] = {"compile_seconds", compile_bounds, TEENY_ARRAY_LEN(compile_bounds)},
    [TEENY_HIST_HIT] = {"hit_seconds", hit_bounds, TEENY_ARRAY_LEN(hit_bounds)}};

void teeny__stats_observe(teeny_stats *s, teeny_hist_id id, double seconds) {
  teeny_hist *h = &s->hists[id];
  size_t i = 0, n = hist_defs[id].n;
  while (i < n && seconds > hist_defs[id].bounds[i])
    i++;
  h->counts[i == n ? TEENY_HIST_MAX_BOUNDS : i]++;
  h->sum += seconds > 0 ? seconds : 0;
  h->count++;
}

/* The reply's view of s's histograms: n + 1 counts each. */
static void hists_reply(const teeny_stats *s, teeny_stats_hists *out) {
  for (int id = 0; id < TEENY_HIST__COUNT; id++) {
    size_t n = hist_defs[id].n;
    memcpy(out->counts[id], s->hists[id].counts, n * sizeof(uint64_t));
    out->counts[id][n] = s->hists[id].counts[TEENY_HIST_MAX_BOUNDS];
    out->v[id] = (teeny_msg_hist){hist_defs[id].name, hist_defs[id].bounds, out->counts[id],
                                  n, s->hists[id].sum, s->hists[id].count};
  }
}

void teeny__stats_init(teeny_stats *s) {
  memset(s, 0, sizeof *s);
  s->start_ns = teeny__now_ns();
}

void teeny__stats_reply(const teeny_stats_snap *snap, const teeny_store_stats *ss,
                        teeny_msg_stats_reply *out,
                        teeny_msg_counter extra[TEENY_STATS_NEXTRA],
                        teeny_stats_hists *hists) {
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
  extra[37] = (teeny_msg_counter){"max_bytes", (double)snap->max_bytes};
  out->extra = extra;
  out->nextra = TEENY_STATS_NEXTRA;
  out->store = snap->store;
  hists_reply(s, hists);
  out->hists = hists->v;
  out->nhists = TEENY_HIST__COUNT;
}
