/*
 * tools/teenyctl_prom.c — `teenyctl stats --prometheus`: the stats reply
 * in Prometheus' text exposition format (0.0.4), for node_exporter's
 * textfile collector (write to a temporary file, then rename it into the
 * collector's directory) or any scraper.
 *
 * Every metric is named teenycd_*, in base units: counters that only grow
 * end in _total, times are seconds (the daemon's *_ms counters are
 * divided by 1000), sizes bytes.  Counters teenyctl does not know become
 * gauges under their own name.  The two histograms (compile time, hit
 * latency) are written with cumulative buckets, _sum and _count.
 */
#include <math.h>
#include <string.h>

#include "tools/teenyctl.h"

typedef enum kind { GAUGE, COUNTER } kind;

typedef struct metric {
  const char *counter; /* the daemon's name */
  const char *name;    /* the metric's, after teenycd_ */
  kind kind;           /* counter or gauge */
  double scale;        /* value multiplier (ms -> s: 0.001) */
  const char *help;    /* # HELP */
} metric;

static const metric metrics[] = {
    {"requests", "requests_total", COUNTER, 1, "Requests answered (every op)."},
    {"hits", "hits_total", COUNTER, 1, "Compile requests answered from the cache."},
    {"memory_hits", "memory_hits_total", COUNTER, 1, "Hits from the in-memory map."},
    {"disk_hits", "disk_hits_total", COUNTER, 1, "Hits from the store."},
    {"remote_hits", "remote_hits_total", COUNTER, 1, "Hits from the remote tier."},
    {"misses", "misses_total", COUNTER, 1, "Compile requests that needed a compile."},
    {"compiles", "compiles_total", COUNTER, 1, "Compiles run."},
    {"joins", "joins_total", COUNTER, 1, "Requests that waited on another's compile."},
    {"errors", "errors_total", COUNTER, 1, "Error replies plus store write failures."},
    {"store_errors", "store_write_errors_total", COUNTER, 1,
     "Compiles answered but not cached: the store refused the artifacts."},
    {"evictions", "evictions_total", COUNTER, 1, "Entries removed by the size cap."},
    {"compile_ms_total", "compile_seconds_total", COUNTER, 0.001, "Time spent compiling."},
    {"saved_ms_total", "saved_seconds_total", COUNTER, 0.001,
     "Compile time that hits did not spend."},
    {"sass_ms_total", "sass_seconds_total", COUNTER, 0.001, "Time spent making cubins."},
    {"compile_timeouts", "compile_timeouts_total", COUNTER, 1, "Compiles cancelled."},
    {"compiler_deaths", "compiler_deaths_total", COUNTER, 1,
     "Compile processes that died mid-compile."},
    {"memory_refused", "memory_refused_total", COUNTER, 1,
     "Frames, replies and requests refused by the memory budget."},
    {"index_rebuilds", "index_rebuilds_total", COUNTER, 1, "Damaged indexes rebuilt."},
    {"sass_made", "sass_made_total", COUNTER, 1, "Cubins made."},
    {"sass_failed", "sass_failed_total", COUNTER, 1, "Cubins that failed."},
    {"tunings", "tunings_total", COUNTER, 1, "Tune requests answered \"tune\"."},
    {"tune_hits", "tune_hits_total", COUNTER, 1, "Tune requests answered with a record."},
    {"tune_joins", "tune_joins_total", COUNTER, 1, "... after waiting on another tuner."},
    {"entries", "entries", GAUGE, 1, "Entries in the store."},
    {"bytes", "bytes", GAUGE, 1, "Bytes of artifacts in the store."},
    {"max_bytes", "max_bytes", GAUGE, 1, "The store's size cap (0: none)."},
    {"uptime_s", "uptime_seconds", GAUGE, 1, "Seconds since the daemon started."},
    {"compile_ms_avg", "compile_seconds_avg", GAUGE, 0.001, "Mean compile time."},
    {"memory_budget", "memory_budget_bytes", GAUGE, 1, "The daemon's memory budget."},
    {"memory_used", "memory_used_bytes", GAUGE, 1, "Memory charged to the budget now."},
    {"memory_peak", "memory_peak_bytes", GAUGE, 1, "The most ever charged."},
};

static const metric *metric_for(const char *counter) {
  for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++)
    if (strcmp(metrics[i].counter, counter) == 0)
      return &metrics[i];
  return NULL;
}

/* A metric name from a counter name: [a-zA-Z0-9_:], others '_'. */
static void sanitize(const char *s, char *out, size_t size) {
  size_t k = 0;
  for (; *s && k + 1 < size; s++, k++) {
    char c = *s;
    out[k] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == ':'
                 ? c
                 : '_';
  }
  out[k] = '\0';
}

static void put_value(FILE *out, double v) {
  if (isnan(v))
    fputs("NaN", out);
  else if (v == floor(v) && fabs(v) < 9e15)
    fprintf(out, "%.0f", v);
  else
    fprintf(out, "%.9g", v);
}

static void put_counter(FILE *out, const teeny_counter *c) {
  const metric *m = metric_for(c->name);
  char name[160];
  if (m)
    snprintf(name, sizeof name, "teenycd_%s", m->name);
  else {
    char s[128];
    sanitize(c->name, s, sizeof s);
    snprintf(name, sizeof name, "teenycd_%s", s);
  }
  fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s ", name,
          m ? m->help : "A counter of teenycd's (see teenyctl stats).", name,
          m && m->kind == COUNTER ? "counter" : "gauge", name);
  put_value(out, c->value * (m ? m->scale : 1));
  fputc('\n', out);
}

/* A label value: backslash, double quote and newline escaped (the text
 * format's rules). */
static void put_label(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '\\' || *s == '"')
      fprintf(out, "\\%c", *s);
    else if (*s == '\n')
      fputs("\\n", out);
    else
      fputc(*s, out);
  }
}

static void put_histogram(FILE *out, const teeny_histogram *h) {
  char name[160], s[128];
  sanitize(h->name, s, sizeof s);
  snprintf(name, sizeof name, "teenycd_%s", s);
  fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", name,
          strcmp(h->name, "compile_seconds") == 0 ? "Wall time of each compile."
          : strcmp(h->name, "hit_seconds") == 0
              ? "Latency of each cache hit, request decoded to reply queued."
              : "A histogram of teenycd's.",
          name);
  uint64_t cum = 0;
  for (size_t i = 0; i < h->nle; i++) {
    cum += h->counts[i];
    fprintf(out, "%s_bucket{le=\"%.9g\"} %llu\n", name, h->le[i], (unsigned long long)cum);
  }
  cum += h->counts[h->nle];
  fprintf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum ", name, (unsigned long long)cum, name);
  put_value(out, h->sum);
  fprintf(out, "\n%s_count %llu\n", name, (unsigned long long)h->count);
}

void ctl_prom_stats(const teeny_admin_reply *r, FILE *out) {
  fprintf(out, "# HELP teenycd_info The daemon's store and teenyctl's version.\n"
               "# TYPE teenycd_info gauge\nteenycd_info{teenyctl_version=\"%s\",store=\"",
          TEENY_VERSION_STRING);
  put_label(out, r->store ? r->store : "");
  fputs("\"} 1\n", out);
  for (size_t i = 0; i < r->ncounters; i++)
    put_counter(out, &r->counters[i]);
  for (size_t i = 0; i < r->nhistograms; i++)
    put_histogram(out, &r->histograms[i]);
}
