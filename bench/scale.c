/*
 * bench/scale.c — teeny_bench_scale: the store's administrative requests
 * at 10^4, 10^5 and 10^6 entries: stats, a 20-row list in every order,
 * the whole list page by page, show by key prefix, a purge of 1 000
 * entries, and a disk hit (a real entry, found through the store, not the
 * memory map).  The rows are synthetic (tests/integration/synth.c: written
 * into index.db of a stopped daemon), plus one real compiled entry.
 *
 *   teeny_bench_scale --teenycd BIN --source-dir DIR [--sizes 10000,100000]
 *                     [--calls N] [-- teenycd args...]
 *
 * Prints one Markdown table row per measurement and size; the bars of
 * issue 18 (stats <= 5 ms and a 20-row list <= 20 ms at 10^6) are marked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/reliability.h"
#include "tests/integration/synth.h"
#include "tests/integration/tclient.h"

#define MAX_CALLS 1000

typedef struct opts {
  const char *sizes;       /* comma-separated entry counts */
  int calls;               /* calls per measurement */
  const char *const *args; /* extra teenycd arguments */
} opts;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* p50 and p99 of n samples (µs), as "p50 X ms, p99 Y ms". */
static void summary(uint64_t *v, int n, char *out, size_t size) {
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  snprintf(out, size, "p50 %.2f ms, p99 %.2f ms", (double)v[n / 2] / 1e3,
           (double)v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1e3);
}

static uint64_t timed(tclient *c, teeny_msg_request *req, int *status) {
  teeny_msg_reply rep;
  uint64_t t0 = tc_now_us();
  int rc = tc_call(c, req, &rep);
  uint64_t us = tc_now_us() - t0;
  *status = rc ? rc : rep.status;
  if (!rc)
    teeny_msg_reply_free(&rep);
  return us;
}

static void row(long n, const char *what, const char *result, const char *bar) {
  printf("| %ld | %s | %s | %s |\n", n, what, result, bar);
  fflush(stdout);
}

static int bench_calls(tclient *c, long n, const char *what,
                       teeny_msg_request *req, int calls, const char *bar,
                       double bar_ms) {
  uint64_t v[MAX_CALLS];
  int bad = 0;
  for (int i = 0; i < calls; i++) {
    int st;
    v[i] = timed(c, req, &st);
    bad += st != 0;
  }
  char s[96], b[96];
  summary(v, calls, s, sizeof s);
  snprintf(b, sizeof b, "%s%s", bar,
           !bar[0] ? "" : (double)v[calls / 2] / 1e3 <= bar_ms ? " (met)" : " (NOT met)");
  row(n, what, bad ? "errors" : s, b);
  return bad;
}

static int bench_lists(tclient *c, long n, int calls) {
  static const char *const sorts[] = {"used", "size", "hits"};
  int bad = 0;
  for (int k = 0; k < 3; k++) {
    teeny_msg_request req = {.op = TEENY_OP_LIST};
    req.u.list.limit = 20;
    req.u.list.sort = (teeny_msg_sort)k;
    char what[64];
    snprintf(what, sizeof what, "list, 20 rows, sort %s", sorts[k]);
    bad += bench_calls(c, n, what, &req, calls, n >= 1000000 ? "<= 20 ms" : "",
                       20.0);
  }
  return bad;
}

/* The whole list, page after page: entries and wall time. */
static int bench_full_list(tclient *c, long n) {
  char after[TEENY_PROTO_MAX_CURSOR + 1] = "";
  long got = 0;
  int pages = 0;
  uint64_t t0 = tc_now_us();
  for (;;) {
    teeny_msg_request req = {.op = TEENY_OP_LIST};
    req.u.list.after = after[0] ? after : NULL;
    teeny_msg_reply rep;
    if (tc_call(c, &req, &rep) || rep.status)
      return 1;
    got += (long)rep.u.list.nentries;
    pages++;
    bool more = rep.u.list.next != NULL;
    if (more)
      snprintf(after, sizeof after, "%s", rep.u.list.next);
    teeny_msg_reply_free(&rep);
    if (!more)
      break;
  }
  double s = (double)(tc_now_us() - t0) / 1e6;
  char res[128];
  snprintf(res, sizeof res, "%ld entries in %d pages, %.2f s (%.0f entries/s)",
           got, pages, s, (double)got / s);
  row(n, "list, everything, paged", res, "");
  return got != n;
}

static int bench_show(tclient *c, long n, int calls) {
  uint64_t v[MAX_CALLS];
  int bad = 0;
  for (int i = 0; i < calls; i++) {
    char key[65], prefix[13];
    synth_key("synth", (i * 7919L) % (n - 1001), key);
    snprintf(prefix, sizeof prefix, "%.12s", key);
    teeny_msg_request req = {.op = TEENY_OP_SHOW};
    req.u.show.key = prefix;
    int st;
    v[i] = timed(c, &req, &st);
    bad += st != 0;
  }
  char s[96];
  summary(v, calls, s, sizeof s);
  row(n, "show, 12-digit key prefix", bad ? "errors" : s, "");
  return bad;
}

/* A disk hit: the real entry under a new file name each time (another
 * request key: the memory map cannot answer it). */
static int bench_disk_hit(tclient *c, long n, int calls, const char *src,
                          size_t len) {
  uint64_t v[MAX_CALLS];
  int bad = 0;
  for (int i = 0; i < calls; i++) {
    char file[64];
    snprintf(file, sizeof file, "scale-%d.c", i);
    tc_compile t;
    tc_compile_init(&t, src, len, "vector_add",
                    (const char *const[]){"D=f32", "BLOCK_SIZE=1024", NULL});
    t.req.u.compile.req.filename = file;
    teeny_msg_reply rep;
    uint64_t t0 = tc_now_us();
    int rc = tc_call(c, &t.req, &rep);
    v[i] = tc_now_us() - t0;
    bad += rc || rep.status || rep.u.compile.cache != TEENY_CACHE_DISK;
    if (!rc)
      teeny_msg_reply_free(&rep);
  }
  char s[96];
  summary(v, calls, s, sizeof s);
  row(n, "disk hit (vector_add, store lookup + files re-hashed)",
      bad ? "errors" : s, "");
  return bad;
}

static int bench_purge(tclient *c, long n) {
  teeny_msg_request req = {.op = TEENY_OP_PURGE};
  req.u.purge.name = "purgeme";
  teeny_msg_reply rep;
  uint64_t t0 = tc_now_us();
  int rc = tc_call(c, &req, &rep);
  double ms = (double)(tc_now_us() - t0) / 1e3;
  char res[96];
  snprintf(res, sizeof res, "%llu entries in %.1f ms",
           rc || rep.status ? 0ull : (unsigned long long)rep.u.purge.removed, ms);
  if (!rc)
    teeny_msg_reply_free(&rep);
  row(n, "purge --name (1 000 of them)", res, "");
  return rc;
}

/* One store of n entries: build it, start teenycd, measure, stop. */
static int bench_size(const opts *o, long n, const char *src, size_t len) {
  tdaemon d;
  tclient c;
  tc_init(&c);
  int bad = 1;
  if (td_init(&d) || td_start(&d, o->args, NULL) || tc_open(&c, d.sock))
    goto done;
  teeny_msg_reply rep;
  tc_compile t;
  tc_compile_init(&t, src, len, "vector_add",
                  (const char *const[]){"D=f32", "BLOCK_SIZE=1024", NULL});
  if (tc_call(&c, &t.req, &rep) || tc_reply_status(&rep, NULL, 0))
    goto done;
  tc_close(&c);
  if (td_stop(&d) != 0)
    goto done;
  uint64_t t0 = tc_now_us();
  if (synth_rows(d.cache, "synth", n - 1001, 0) ||
      synth_rows(d.cache, "purgeme", 1000, 0))
    goto done;
  fprintf(stderr, "%ld entries written in %.1f s\n", n,
          (double)(tc_now_us() - t0) / 1e6);
  if (td_start(&d, o->args, NULL) || tc_open(&c, d.sock))
    goto done;
  teeny_msg_request st = {.op = TEENY_OP_STATS};
  bad = bench_calls(&c, n, "stats", &st, o->calls,
                    n >= 1000000 ? "<= 5 ms" : "", 5.0);
  bad += bench_lists(&c, n, o->calls);
  bad += bench_full_list(&c, n);
  bad += bench_show(&c, n, o->calls);
  bad += bench_disk_hit(&c, n, o->calls, src, len);
  bad += bench_purge(&c, n);
  char rss[64];
  snprintf(rss, sizeof rss, "%ld MiB", rel_status_kb(d.pid, "VmRSS") / 1024);
  row(n, "daemon VmRSS after", rss, "");
done:
  tc_close(&c);
  td_fini(&d, bad != 0);
  return bad;
}

int main(int argc, char **argv) {
  opts o = {"10000,100000,1000000", 200, NULL};
  const char *srcdir = ".";
  int i = 1;
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--teenycd") && i + 1 < argc)
      setenv("TEENYCD_BIN", argv[++i], 1);
    else if (!strcmp(argv[i], "--source-dir") && i + 1 < argc)
      srcdir = argv[++i];
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      o.sizes = argv[++i];
    else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
      o.calls = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--")) {
      o.args = (const char *const *)argv + i + 1;
      break;
    } else {
      fprintf(stderr, "usage: teeny_bench_scale --teenycd BIN --source-dir DIR "
                      "[--sizes N,N,...] [--calls N] [-- teenycd args]\n");
      return 2;
    }
  }
  if (o.calls < 1 || o.calls > MAX_CALLS)
    o.calls = 200;
  setenv("TEENY_SOURCE_DIR", srcdir, 1);
  size_t len;
  char *src = tc_kernel_source("vector_add", &len);
  if (!src)
    return 1;
  printf("| entries | measurement | result | bar |\n| ---: | --- | --- | --- |\n");
  int bad = 0;
  for (const char *p = o.sizes; *p;) {
    char *end;
    long n = strtol(p, &end, 10);
    if (end == p || n < 2000) {
      fprintf(stderr, "--sizes: want counts of at least 2000\n");
      bad++;
      break;
    }
    bad += bench_size(&o, n, src, len);
    p = *end == ',' ? end + 1 : end;
  }
  free(src);
  return bad ? 1 : 0;
}
