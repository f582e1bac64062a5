/*
 * tools/teenyctl.c — administer teenycd's cache: stats, list, show, purge,
 * verify, ping, shutdown, config, and its autotuning records (tuned).  A
 * thin tool over libteenyc-client's public API (teeny_client_admin); every
 * command prints an aligned table with units for people, with --json one
 * JSON value for programs (teenyctl_json.c), and stats also Prometheus
 * text (teenyctl_prom.c).
 *
 * Exit status: 0 ok; 1 the daemon answered with an error (or verify found
 * problems, with --repair: problems it did not repair; or show found no
 * entry); 2 usage; 3 cannot reach the daemon (no socket answers); 4
 * permission denied by the daemon (purge, verify --repair, stats --zero
 * and shutdown are for root, the daemon's user and its admin group); 5 not
 * allowed to connect (the socket's permissions: join its group); 6 show's
 * key prefix, id or name matches more than one entry (the candidates are
 * listed).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "teeny/client.h"
#include "teeny/units.h"
#include "tools/teenyctl.h"

enum {
  EXIT_OK = 0, EXIT_REPLY = 1, EXIT_USAGE = 2, EXIT_CONNECT = 3, EXIT_PERM = 4,
  EXIT_SOCKET_PERM = 5, EXIT_AMBIGUOUS = 6
};

static const char usage_text[] =
    "usage: teenyctl [--socket PATH] [--json] COMMAND [OPTIONS]\n"
    "\n"
    "Administer the teenycd kernel cache.\n"
    "\n"
    "commands:\n"
    "  stats [--zero] [--prometheus]  counters: requests, hits, compiles, errors\n"
    "                                 (store write failures), store path and size\n"
    "                                 cap; --prometheus: text exposition with the\n"
    "                                 compile-time and hit-latency histograms;\n"
    "                                 --zero: then reset them (admin)\n"
    "  list [--name GLOB] [--limit N] [--sort COLUMN] [--reverse] [--wide]\n"
    "                                 cached kernels, most recently used first;\n"
    "                                 COLUMN: key, name, id, target, warps, size,\n"
    "                                 cubins, hits, used, created, compile (text\n"
    "                                 A-Z, numbers largest first, times newest\n"
    "                                 first; --reverse flips); long names end in\n"
    "                                 '…', --wide shows every value whole\n"
    "  show KEY-PREFIX|ID|NAME [--source|--mlir|--ptx|--cubin ARCH]\n"
    "                                 one entry by 4 to 64 hex digits of its key,\n"
    "                                 by its id (vector_add__f32__1024) or by its\n"
    "                                 kernel name; more than one match lists the\n"
    "                                 candidates (exit 6); with an option, one of\n"
    "                                 its artifacts (the cubin for ARCH, e.g.\n"
    "                                 sm_90, as binary)\n"
    "  purge --all | --older-than DUR | --name GLOB | --to-size SIZE\n"
    "                                 remove entries and print them (admin);\n"
    "                                 --name and --older-than combine\n"
    "  verify [--repair]              re-hash every artifact; --repair drops\n"
    "                                 broken entries and orphan files (admin)\n"
    "  config                         the daemon's resolved settings, as lines of\n"
    "                                 its config file (teenycd --config)\n"
    "  tuned [--name GLOB] [--wide]   autotuning records: the winner per kernel,\n"
    "                                 problem key, GPU and driver\n"
    "  tuned --purge --all | --purge --name GLOB\n"
    "                                 remove tuning records (admin): the next\n"
    "                                 process to ask tunes again\n"
    "  ping                           is teenycd alive?\n"
    "  shutdown                       stop teenycd (admin)\n"
    "\n"
    "options:\n"
    "  -s, --socket PATH   teenycd's socket (default: the first that answers\n"
    "                      of $TEENYCD_SOCKET, $XDG_RUNTIME_DIR/teenycd.sock\n"
    "                      and /run/teenycd/teenycd.sock)\n"
    "  -j, --json          print JSON (one value, UTF-8; errors too, as\n"
    "                      {\"status\", \"error\", \"message\"})\n"
    "  -h, --help          show this help\n"
    "  -V, --version       show the version and the protocol version\n"
    "\n"
    "DUR is a number and ms, s, min (or m), h, d or w: 90min, 1.5h, 7d (plain:\n"
    "seconds).  SIZE is a number and B, K, M, G or T, powers of 1024 (KB, KiB\n"
    "alike): 512MiB, 1.5G, 5GB (plain: bytes).  teenycd reads them alike.\n"
    "\n"
    "exit status: 0 ok, 1 error reply (or verify found problems; with --repair,\n"
    "problems left unrepaired; or show found nothing), 2 usage, 3 cannot reach\n"
    "the daemon, 4 permission denied by the daemon, 5 not allowed to connect to\n"
    "its socket, 6 show matched more than one entry.\n"
    "\n"
    "examples:\n"
    "  teenyctl stats\n"
    "  teenyctl --json stats | python3 -m json.tool\n"
    "  teenyctl stats --prometheus > /var/lib/node_exporter/teenycd.prom.$$ &&\n"
    "    mv /var/lib/node_exporter/teenycd.prom.$$ /var/lib/node_exporter/teenycd.prom\n"
    "  teenyctl list --name 'matmul*' --sort size --limit 10\n"
    "  teenyctl list --sort name --reverse --wide\n"
    "  teenyctl show vector_add__f32__1024\n"
    "  teenyctl show 3fa9 --ptx > kernel.ptx\n"
    "  teenyctl show 3fa9 --cubin sm_90 > kernel.cubin\n"
    "  teenyctl config\n"
    "  teenyctl tuned --name 'matmul*'\n"
    "  teenyctl purge --older-than 7d\n"
    "  teenyctl purge --to-size 1.5G\n"
    "  teenyctl verify --repair\n";

/* The columns list sorts by: the name, and the order without --reverse. */
typedef enum sort_col {
  COL_USED, COL_SIZE, COL_HITS, /* the daemon's own orders (teeny_admin_sort) */
  COL_KEY, COL_NAME, COL_ID, COL_TARGET, COL_WARPS, COL_CUBINS, COL_CREATED, COL_COMPILE
} sort_col;

static const struct {
  const char *name;  /* --sort NAME */
  sort_col col;      /* the column */
} sort_names[] = {{"used", COL_USED},       {"last_used", COL_USED}, {"size", COL_SIZE},
                  {"hits", COL_HITS},       {"key", COL_KEY},        {"name", COL_NAME},
                  {"id", COL_ID},           {"target", COL_TARGET},  {"warps", COL_WARPS},
                  {"num_warps", COL_WARPS}, {"cubins", COL_CUBINS},  {"created", COL_CREATED},
                  {"compile", COL_COMPILE}, {"compile_ms", COL_COMPILE}};

typedef struct cli {
  const char *socket;   /* --socket */
  bool json;            /* --json */
  bool prometheus;      /* stats --prometheus */
  bool wide;            /* list, purge, tuned --wide */
  bool reverse;         /* list --reverse */
  sort_col sort;        /* list --sort */
  const char *command;  /* the command word */
  teeny_admin_req req;  /* what to send */
  const char *cubin;    /* show --cubin ARCH */
  const char *what;     /* show: the key prefix, id or name as given */
} cli;

static int usage(const char *fmt, const char *arg) {
  fprintf(stderr, "teenyctl: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'teenyctl --help'.\n");
  return EXIT_USAGE;
}

/* ---- stats ---------------------------------------------------------------------- */

static void stats_store(const teeny_admin_reply *r) {
  char a[32], b[32];
  double bytes = teeny_admin_counter(r, "bytes"), cap = teeny_admin_counter(r, "max_bytes");
  printf("%-18s %14.0f\n", "entries", teeny_admin_counter(r, "entries"));
  ctl_fmt_bytes(a, sizeof a, bytes);
  if (!isnan(cap) && cap > 0) {
    ctl_fmt_bytes(b, sizeof b, cap);
    printf("%-18s %14s   of max size %s (%.1f%%)\n", "stored", a, b, 100.0 * bytes / cap);
  } else {
    printf("%-18s %14s   %s\n", "stored", a, isnan(cap) ? "" : "(max size: no cap)");
  }
  if (r->store)
    printf("%-18s %14s   %s\n", "store", "", r->store);
}

static void stats_human(const teeny_admin_reply *r) {
  double req = teeny_admin_counter(r, "requests"), hits = teeny_admin_counter(r, "hits");
  double mem = teeny_admin_counter(r, "memory_hits"), disk = teeny_admin_counter(r, "disk_hits");
  double miss = teeny_admin_counter(r, "misses"), comp = teeny_admin_counter(r, "compiles");
  double cms = teeny_admin_counter(r, "compile_ms_total");
  double werr = teeny_admin_counter(r, "store_errors");
  double lookups = hits + miss;
  char a[32], b[32], c[32];
  printf("%-18s %14.0f\n", "requests", req);
  printf("%-18s %14.0f   %.1f%% of compile requests (memory %.0f, disk %.0f)\n", "hits", hits,
         lookups > 0 ? 100.0 * hits / lookups : 0.0, mem, disk);
  printf("%-18s %14.0f\n", "misses", miss);
  printf("%-18s %14.0f   single-flight joins %.0f\n", "compiles", comp,
         teeny_admin_counter(r, "joins"));
  printf("%-18s %14.0f", "errors", teeny_admin_counter(r, "errors"));
  if (!isnan(werr))
    printf("   of which store write errors %.0f (answered, not cached)", werr);
  putchar('\n');
  ctl_fmt_ms(a, sizeof a, cms);
  ctl_fmt_ms(b, sizeof b, comp > 0 ? cms / comp : 0);
  printf("%-18s %14s   %s per compile\n", "compile time", a, b);
  ctl_fmt_ms(c, sizeof c, teeny_admin_counter(r, "saved_ms_total"));
  printf("%-18s %14s   compile time hits did not spend\n", "time saved", c);
  stats_store(r);
  double cubins = teeny_admin_counter(r, "cubins");
  if (!isnan(cubins)) { /* a daemon that makes cubins */
    ctl_fmt_bytes(b, sizeof b, teeny_admin_counter(r, "cubin_bytes"));
    printf("%-18s %14.0f   %s (in stored), %.0f made, %.0f failed, %.0f queued\n",
           "cubins", cubins, b, teeny_admin_counter(r, "sass_made"),
           teeny_admin_counter(r, "sass_failed"), teeny_admin_counter(r, "sass_queued"));
    printf("%-18s %14.0f   %.0f tunings, %.0f answered from a record (%.0f after waiting)\n",
           "tuning records", teeny_admin_counter(r, "tuned"),
           teeny_admin_counter(r, "tunings"), teeny_admin_counter(r, "tune_hits"),
           teeny_admin_counter(r, "tune_joins"));
  }
  printf("%-18s %14.0f\n", "evictions", teeny_admin_counter(r, "evictions"));
  ctl_fmt_duration(a, sizeof a, teeny_admin_counter(r, "uptime_s"));
  printf("%-18s %14s\n", "uptime", a);
  for (size_t i = 14; i < r->ncounters; i++) { /* the daemon's extra counters */
    double v = r->counters[i].value;
    printf(v == floor(v) && fabs(v) < 9e15 ? "%-22s %10.0f\n" : "%-22s %10.6g\n",
           r->counters[i].name, v);
  }
}

static int cmd_stats(const cli *o, const teeny_admin_reply *r) {
  if (o->prometheus)
    ctl_prom_stats(r, stdout);
  else if (o->json)
    ctl_json_stats(r);
  else {
    stats_human(r);
    if (o->req.zero)
      printf("(counters reset to zero)\n");
  }
  return EXIT_OK;
}

/* ---- config -------------------------------------------------------------------- */

/* key = value, quoted where the file would need it. */
static int cmd_config(const cli *o, const teeny_admin_reply *r) {
  if (o->json) {
    ctl_json_config(r);
    return EXIT_OK;
  }
  printf("# teenycd's resolved settings (teenycd --config FILE reads these lines)\n");
  for (size_t i = 0; i < r->nsettings; i++) {
    const char *v = r->settings[i].value;
    bool quote = !*v || strpbrk(v, " \t#\"") != NULL;
    if (strcmp(r->settings[i].key, "config") == 0) /* where they came from */
      printf("# read from: %s\n", *v ? v : "(no config file)");
    else
      printf(quote ? "%-24s = \"%s\"\n" : "%-24s = %s\n", r->settings[i].key, v);
  }
  return EXIT_OK;
}

/* ---- list: page after page ------------------------------------------------------ */

/* Entries gathered over several list replies (the daemon sends at most its
 * page, 10 000, per reply, with a cursor for the next); v points into the
 * replies kept in pages. */
typedef struct listing {
  teeny_admin_reply **pages; /* every reply, kept for v's strings */
  size_t npages;             /* how many */
  teeny_cache_entry *v;      /* the entries, in order */
  size_t n;                  /* how many */
} listing;

static void listing_free(listing *l) {
  for (size_t i = 0; i < l->npages; i++)
    teeny_admin_reply_free(l->pages[i]);
  free(l->pages);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int listing_add(listing *l, teeny_admin_reply *r) {
  teeny_admin_reply **np = realloc(l->pages, (l->npages + 1) * sizeof *np);
  teeny_cache_entry *nv = np ? realloc(l->v, (l->n + r->nentries + 1) * sizeof *nv) : NULL;
  if (np)
    l->pages = np;
  if (!nv) {
    teeny_admin_reply_free(r);
    return TEENY_E_NOMEM;
  }
  l->v = nv;
  l->pages[l->npages++] = r;
  if (r->nentries) /* an empty page has no entries array */
    memcpy(l->v + l->n, r->entries, r->nentries * sizeof *nv);
  l->n += r->nentries;
  return 0;
}

/* Every entry q names (q->limit: at most that many; 0: all), following the
 * daemon's cursors.  0, or the failed request's status with *bad its reply
 * (or NULL: a transport error; teeny_client_errmsg says why). */
static int list_all(teeny_client *c, const teeny_admin_req *q, listing *out,
                    teeny_admin_reply **bad) {
  teeny_admin_req page = *q;
  memset(out, 0, sizeof *out);
  *bad = NULL;
  for (;;) {
    if (q->limit)
      page.limit = q->limit - (unsigned)out->n;
    teeny_admin_reply *r = NULL;
    int rc = teeny_client_admin(c, &page, &r);
    if (rc) {
      *bad = r;
      return rc;
    }
    const char *next = r->next;
    if ((rc = listing_add(out, r)))
      return rc;
    if (!next || (q->limit && out->n >= q->limit))
      return 0;
    page.after = next; /* lives in the kept reply */
  }
}

static int cmp_text(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }
static int cmp_num(double a, double b) { return a < b ? -1 : a > b; }

/* Ascending order of column col (the default order is its reverse for
 * numbers and times: largest, newest first). */
static int cmp_col(const teeny_cache_entry *x, const teeny_cache_entry *y, sort_col col) {
  switch (col) {
  case COL_KEY: return cmp_text(x->key, y->key);
  case COL_NAME: return cmp_text(x->name, y->name);
  case COL_ID: return cmp_text(x->id, y->id);
  case COL_TARGET: return cmp_text(x->target, y->target);
  case COL_WARPS: return cmp_num(x->num_warps, y->num_warps);
  case COL_SIZE: return cmp_num((double)x->size, (double)y->size);
  case COL_CUBINS: return cmp_num(x->cubins, y->cubins);
  case COL_HITS: return cmp_num((double)x->hits, (double)y->hits);
  case COL_CREATED: return cmp_num((double)x->created, (double)y->created);
  case COL_COMPILE: return cmp_num(x->compile_ms, y->compile_ms);
  default: return cmp_num((double)x->last_used, (double)y->last_used);
  }
}

static bool col_is_text(sort_col col) {
  return col == COL_KEY || col == COL_NAME || col == COL_ID || col == COL_TARGET;
}

static sort_col sort_by;   /* qsort's context: the column ... */
static bool sort_reversed; /* ... and --reverse */

static int by_column(const void *a, const void *b) {
  const teeny_cache_entry *x = a, *y = b;
  int c = cmp_col(x, y, sort_by);
  if (!col_is_text(sort_by))
    c = -c; /* largest, newest first */
  if (sort_reversed)
    c = -c;
  return c ? c : strcmp(x->key, y->key); /* one order for equal values */
}

/* Whether the daemon can sort this way itself (and so apply --limit). */
static bool daemon_sorts(const cli *o) {
  return !o->reverse && (o->sort == COL_USED || o->sort == COL_SIZE || o->sort == COL_HITS);
}

/* The entries list shows: sorted by the daemon, or fetched whole and
 * sorted here, then cut to --limit. */
static int list_sorted(const cli *o, teeny_client *c, listing *l, teeny_admin_reply **bad) {
  teeny_admin_req q = o->req;
  if (daemon_sorts(o))
    return list_all(c, &q, l, bad);
  q.limit = 0;
  q.sort = TEENY_ADMIN_SORT_USED;
  int rc = list_all(c, &q, l, bad);
  if (rc)
    return rc;
  sort_by = o->sort;
  sort_reversed = o->reverse;
  if (l->n > 1)
    qsort(l->v, l->n, sizeof *l->v, by_column);
  if (o->req.limit && l->n > o->req.limit)
    l->n = o->req.limit;
  return 0;
}

static int cmd_list(const cli *o, const listing *l) {
  if (o->json) {
    ctl_json_entries("entries", l->v, l->n, 0, 0, false);
    return EXIT_OK;
  }
  ctl_entries_table(l->v, l->n, o->wide);
  uint64_t total = 0;
  for (size_t i = 0; i < l->n; i++)
    total += l->v[i].size;
  char b[32];
  ctl_fmt_bytes(b, sizeof b, (double)total);
  printf("%zu entr%s, %s\n", l->n, l->n == 1 ? "y" : "ies", b);
  return EXIT_OK;
}

/* ---- show ------------------------------------------------------------------------ */

static void show_human(const teeny_cache_entry *e) {
  char size[32], ms[32], created[48], used[48];
  ctl_fmt_bytes(size, sizeof size, (double)e->size);
  ctl_fmt_ms(ms, sizeof ms, e->compile_ms);
  ctl_fmt_ago(created, sizeof created, e->created);
  ctl_fmt_ago(used, sizeof used, e->last_used);
  printf("key:        %s\nname:       %s\nid:         %s\ntarget:     %s\n", e->key, e->name,
         e->id, e->target);
  printf("num_warps:  %d\nsize:       %s\nhits:       %" PRIu64 "\ncompile:    %s\n",
         e->num_warps, size, e->hits, ms);
  printf("created:    %s\nlast used:  %s\n", created, used);
}

static void cubins_human(const teeny_admin_reply *r) {
  printf("cubins:     %zu\n", r->ncubins);
  for (size_t i = 0; i < r->ncubins; i++) {
    const teeny_cache_cubin *c = &r->cubins[i];
    char size[32], ms[32], ago[48];
    ctl_fmt_bytes(size, sizeof size, (double)c->size);
    ctl_fmt_ms(ms, sizeof ms, c->sass_ms);
    ctl_fmt_ago(ago, sizeof ago, c->created);
    printf("  %-8s %10s  %-24s made in %s, %s\n", c->arch, size, c->toolchain, ms, ago);
  }
}

static int cmd_show(const cli *o, const teeny_admin_reply *r) {
  const char *art = r->ptx ? r->ptx : r->mlir ? r->mlir : r->source;
  size_t len = r->ptx ? r->ptx_len : r->mlir ? r->mlir_len : r->source_len;
  if (o->cubin && !o->json) {
    fwrite(r->cubin, 1, r->cubin_len, stdout); /* binary, for a file */
    return EXIT_OK;
  }
  if (o->json)
    ctl_json_show(r);
  else if (art)
    fwrite(art, 1, len, stdout);
  else {
    show_human(&r->entries[0]);
    cubins_human(r);
  }
  return EXIT_OK;
}

static bool is_key_prefix(const char *s) {
  size_t n = strlen(s);
  return n >= 4 && n <= 64 && strspn(s, "0123456789abcdefABCDEF") == n;
}

/* The entries of l whose id is what, else those whose name is. */
static size_t match_entries(const listing *l, const char *what, const teeny_cache_entry **m,
                            size_t max) {
  size_t k = 0;
  for (int pass = 0; pass < 2 && k == 0; pass++)
    for (size_t i = 0; i < l->n && k < max; i++)
      if (strcmp(pass ? l->v[i].name : l->v[i].id, what) == 0)
        m[k++] = &l->v[i];
  return k;
}

#define MAX_CANDIDATES 64

/* A search found several entries: name them (key, id, target), exit 6. */
static int report_candidates(const cli *o, const teeny_cache_entry **m, size_t k) {
  char lines[MAX_CANDIDATES][200];
  const char *cands[MAX_CANDIDATES];
  char msg[300];
  snprintf(msg, sizeof msg, "show: '%.200s' names %zu%s entries; give a key prefix", o->what,
           k, k == MAX_CANDIDATES ? " or more" : "");
  for (size_t i = 0; i < k; i++) {
    snprintf(lines[i], sizeof lines[i], "%s  %s  %s num_warps=%d", m[i]->key, m[i]->id,
             m[i]->target, m[i]->num_warps);
    cands[i] = lines[i];
  }
  if (o->json)
    ctl_json_error(TEENY_E_AMBIGUOUS, msg, NULL, cands, k);
  fprintf(stderr, "teenyctl: %s\ncandidates:\n", msg);
  for (size_t i = 0; i < k; i++)
    fprintf(stderr, "  %s\n", cands[i]);
  return EXIT_AMBIGUOUS;
}

/* ---- tuned, verify --------------------------------------------------------------- */

static int cmd_tuned(const cli *o, const teeny_admin_reply *r) {
  bool purge = o->req.op == TEENY_ADMIN_TUNED_PURGE;
  if (o->json) {
    ctl_json_tuned(r, purge);
    return EXIT_OK;
  }
  if (purge) {
    printf("removed %" PRIu64 " tuning record%s\n", r->removed, r->removed == 1 ? "" : "s");
    return EXIT_OK;
  }
  ctl_tuned_table(r->tuned, r->ntuned, o->wide);
  printf("%zu tuning record%s\n", r->ntuned, r->ntuned == 1 ? "" : "s");
  return EXIT_OK;
}

static int cmd_verify(const cli *o, const teeny_admin_reply *r) {
  size_t left = r->nproblems > r->repaired ? r->nproblems - (size_t)r->repaired : 0;
  if (o->json) {
    ctl_json_verify(r);
  } else {
    printf("checked %" PRIu64 " entries: %zu problem%s", r->checked, r->nproblems,
           r->nproblems == 1 ? "" : "s");
    if (o->req.repair)
      printf(", %" PRIu64 " repaired", r->repaired);
    putchar('\n');
    if (r->nproblems)
      printf("%-66s %s\n", "KEY OR FILE", "PROBLEM");
    for (size_t i = 0; i < r->nproblems; i++)
      printf("%-66s %s\n", r->problems[i].key, r->problems[i].problem);
  }
  if (left && o->req.repair && !o->json)
    fprintf(stderr, "teenyctl: %zu problem%s could not be repaired\n", left,
            left == 1 ? "" : "s");
  return left ? EXIT_REPLY : EXIT_OK;
}

/* ---- purge: show what goes ---------------------------------------------------------- */

static int by_last_used(const void *a, const void *b) {
  const teeny_cache_entry *x = a, *y = b;
  if (x->last_used != y->last_used)
    return x->last_used < y->last_used ? -1 : 1;
  return strcmp(x->key, y->key);
}

/* Mark in gone[] the entries the purge selects (the daemon's rules,
 * PROTOCOL.md §4.7) so they can be printed before they go. */
static size_t select_purged(const teeny_admin_req *q, teeny_cache_entry *v, size_t n,
                            bool *gone) {
  size_t k = 0;
  int64_t now = (int64_t)time(NULL);
  if (q->has_to_size) {
    qsort(v, n, sizeof *v, by_last_used);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
      total += v[i].size;
    for (size_t i = 0; i < n && total > (uint64_t)q->to_size; i++, k++) {
      gone[i] = true;
      total -= v[i].size;
    }
    return k;
  }
  for (size_t i = 0; i < n; i++) {
    bool sel = q->all || ((!q->name || fnmatch(q->name, v[i].name, 0) == 0) &&
                          (q->older_than_s <= 0 || now - v[i].last_used > q->older_than_s));
    gone[i] = sel;
    k += sel;
  }
  return k;
}

/* The entries the purge will remove, listed before it runs (NULL, 0 if the
 * list cannot be had: the purge reply's counts still tell). */
static teeny_cache_entry *preview(teeny_client *c, const teeny_admin_req *q, size_t *n,
                                  listing *keep) {
  teeny_admin_req l = {.op = TEENY_ADMIN_LIST, .sort = TEENY_ADMIN_SORT_USED};
  teeny_admin_reply *bad = NULL;
  *n = 0;
  if (list_all(c, &l, keep, &bad)) {
    teeny_admin_reply_free(bad);
    return NULL;
  }
  bool *gone = calloc(keep->n + 1, sizeof *gone);
  teeny_cache_entry *out = calloc(keep->n + 1, sizeof *out);
  if (!gone || !out) {
    free(gone);
    free(out);
    return NULL;
  }
  select_purged(q, keep->v, keep->n, gone);
  for (size_t i = 0; i < keep->n; i++)
    if (gone[i])
      out[(*n)++] = keep->v[i];
  free(gone);
  return out;
}

static int purge_report(const cli *o, const teeny_admin_reply *r, const teeny_cache_entry *v,
                        size_t n) {
  if (o->json) {
    ctl_json_entries("entries", v, n, r->removed, r->bytes, true);
    return EXIT_OK;
  }
  if (n)
    ctl_entries_table(v, n, o->wide);
  char b[32];
  ctl_fmt_bytes(b, sizeof b, (double)r->bytes);
  printf("removed %" PRIu64 " entr%s, %s freed\n", r->removed, r->removed == 1 ? "y" : "ies", b);
  return EXIT_OK;
}

/* ---- errors and the run ----------------------------------------------------------------- */

/* at_open: the failure is the connection's (no request was answered). */
static int exit_for(int rc, bool at_open) {
  if (rc == TEENY_E_CONNECT || rc == TEENY_E_CLOSED || rc == TEENY_E_TIMEOUT ||
      rc == TEENY_E_VERSION)
    return EXIT_CONNECT;
  if (rc == TEENY_E_PERM)
    return at_open ? EXIT_SOCKET_PERM : EXIT_PERM;
  if (rc == TEENY_E_AMBIGUOUS)
    return EXIT_AMBIGUOUS;
  return EXIT_REPLY;
}

static int report_error(const cli *o, int rc, const char *msg, const teeny_admin_reply *r,
                        bool at_open) {
  if (o->json)
    ctl_json_error(rc, msg, r, NULL, 0);
  fprintf(stderr, "teenyctl: %s\n", msg);
  if (rc == TEENY_E_CONNECT)
    fprintf(stderr, "teenyctl: is teenycd running? Start it, or point --socket / "
                    "$TEENYCD_SOCKET at it.\n");
  if (rc == TEENY_E_PERM && !at_open)
    fprintf(stderr, "teenyctl: this needs root, the daemon's user or its admin group.\n");
  if (rc == TEENY_E_UNSUPPORTED && o->req.op == TEENY_ADMIN_CONFIG)
    fprintf(stderr, "teenyctl: this teenycd is older than the config request.\n");
  if (!o->json && r && r->ncandidates) {
    fprintf(stderr, "candidates:\n");
    for (size_t i = 0; i < r->ncandidates; i++)
      fprintf(stderr, "  %s\n", r->candidates[i]);
  }
  return exit_for(rc, at_open);
}

static int dispatch(const cli *o, teeny_client *c, const teeny_admin_reply *r,
                    const teeny_cache_entry *purged, size_t npurged, double ms) {
  switch (o->req.op) {
  case TEENY_ADMIN_STATS: return cmd_stats(o, r);
  case TEENY_ADMIN_SHOW: return cmd_show(o, r);
  case TEENY_ADMIN_VERIFY: return cmd_verify(o, r);
  case TEENY_ADMIN_PURGE: return purge_report(o, r, purged, npurged);
  case TEENY_ADMIN_CONFIG: return cmd_config(o, r);
  case TEENY_ADMIN_TUNED:
  case TEENY_ADMIN_TUNED_PURGE: return cmd_tuned(o, r);
  case TEENY_ADMIN_PING:
    if (o->json)
      ctl_json_ping(teeny_client_socket(c), ms);
    else
      printf("teenycd at %s is alive (%.3f ms)\n", teeny_client_socket(c), ms);
    return EXIT_OK;
  default:
    if (o->json)
      ctl_json_ok();
    else
      printf("teenycd at %s is shutting down\n", teeny_client_socket(c));
    return EXIT_OK;
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* show by key prefix, id or name: the full key of the one entry what names
 * into key[65] (0), or an exit status (the error reported). */
static int show_key(const cli *o, teeny_client *c, char key[65]) {
  teeny_admin_req q = {.op = TEENY_ADMIN_LIST};
  bool glob = strpbrk(o->what, "*?[\\") != NULL;
  q.name = glob ? NULL : o->what; /* names first: a short listing */
  const teeny_cache_entry *m[MAX_CANDIDATES];
  listing l = {0};
  teeny_admin_reply *bad = NULL;
  size_t k = 0;
  for (int pass = 0; pass < 2 && k == 0; pass++) {
    listing_free(&l);
    if (pass)
      q.name = NULL; /* then everything: ids */
    int rc = list_all(c, &q, &l, &bad);
    if (rc) {
      int st = report_error(o, rc, teeny_client_errmsg(c), bad, false);
      teeny_admin_reply_free(bad);
      listing_free(&l);
      return st;
    }
    k = match_entries(&l, o->what, m, MAX_CANDIDATES);
  }
  int status = 0;
  if (k == 1)
    snprintf(key, 65, "%s", m[0]->key);
  else if (k > 1)
    status = report_candidates(o, m, k);
  else {
    char msg[300];
    snprintf(msg, sizeof msg, "show: no entry has the key prefix, id or kernel name '%.200s'",
             o->what);
    status = report_error(o, TEENY_E_NOTFOUND, msg, NULL, false);
  }
  listing_free(&l);
  return status;
}

/* The show request: first as a key prefix when it looks like one, then by
 * id or name.  0 with *r the reply, or an exit status. */
static int run_show(const cli *o, teeny_client *c, teeny_admin_reply **r) {
  teeny_admin_req q = o->req;
  char key[65];
  int rc = TEENY_E_NOTFOUND;
  if (is_key_prefix(o->what)) {
    q.key = o->what;
    rc = o->cubin ? teeny_client_show_cubin(c, q.key, o->cubin, r)
                  : teeny_client_admin(c, &q, r);
    if (rc != TEENY_E_NOTFOUND)
      return rc ? report_error(o, rc, teeny_client_errmsg(c), *r, false) : 0;
    teeny_admin_reply_free(*r);
    *r = NULL;
  }
  int st = show_key(o, c, key);
  if (st)
    return st;
  q.key = key;
  rc = o->cubin ? teeny_client_show_cubin(c, key, o->cubin, r) : teeny_client_admin(c, &q, r);
  return rc ? report_error(o, rc, teeny_client_errmsg(c), *r, false) : 0;
}

static int run(const cli *o) {
  teeny_client_opts co = {.mode = TEENY_MODE_DAEMON, .socket_path = o->socket,
                          .client_name = "teenyctl/" TEENY_VERSION_STRING, .memo_entries = -1};
  teeny_client *c = NULL;
  teeny_admin_reply *r = NULL;
  listing all = {0};
  teeny_cache_entry *purged = NULL;
  size_t npurged = 0;
  int status;
  int rc = teeny_client_open(&c, &co);
  if (rc) {
    status = report_error(o, rc, teeny_client_errmsg(c), NULL, true);
    goto done;
  }
  if (o->req.op == TEENY_ADMIN_LIST) {
    rc = list_sorted(o, c, &all, &r);
    status = rc ? report_error(o, rc, teeny_client_errmsg(c), r, false) : cmd_list(o, &all);
    goto done;
  }
  if (o->req.op == TEENY_ADMIN_SHOW) {
    status = run_show(o, c, &r);
    if (!status)
      status = cmd_show(o, r);
    goto done;
  }
  if (o->req.op == TEENY_ADMIN_PURGE)
    purged = preview(c, &o->req, &npurged, &all);
  double t0 = now_ms();
  rc = teeny_client_admin(c, &o->req, &r);
  double ms = now_ms() - t0;
  if (rc)
    status = report_error(o, rc, teeny_client_errmsg(c), r, false);
  else
    status = dispatch(o, c, r, purged, npurged, ms);
done:
  free(purged);
  listing_free(&all);
  teeny_admin_reply_free(r);
  teeny_client_close(c);
  return status;
}

/* ---- arguments ----------------------------------------------------------------------- */

static const struct { const char *name; teeny_admin_op op; } commands[] = {
    {"stats", TEENY_ADMIN_STATS}, {"list", TEENY_ADMIN_LIST},     {"show", TEENY_ADMIN_SHOW},
    {"purge", TEENY_ADMIN_PURGE}, {"verify", TEENY_ADMIN_VERIFY}, {"ping", TEENY_ADMIN_PING},
    {"shutdown", TEENY_ADMIN_SHUTDOWN}, {"tuned", TEENY_ADMIN_TUNED},
    {"config", TEENY_ADMIN_CONFIG}};

/* The value of an option at argv[*i] ("--opt VALUE" or "--opt=VALUE"). */
static const char *value(int argc, char **argv, int *i, const char *opt) {
  size_t n = strlen(opt);
  if (argv[*i][n] == '=')
    return argv[*i] + n + 1;
  return *i + 1 < argc ? argv[++*i] : NULL;
}

static bool is_opt(const char *arg, const char *opt) {
  size_t n = strlen(opt);
  return strncmp(arg, opt, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int sort_opt(cli *o, const char *v) {
  for (size_t k = 0; k < sizeof sort_names / sizeof *sort_names; k++)
    if (strcmp(v, sort_names[k].name) == 0) {
      o->sort = sort_names[k].col;
      if (o->sort <= COL_HITS) /* the daemon's own: teeny_admin_sort */
        o->req.sort = (teeny_admin_sort)o->sort;
      return 0;
    }
  return usage("--sort wants key, name, id, target, warps, size, cubins, hits, used, "
               "created or compile, got '%s'", v);
}

static int list_opt(cli *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v;
  if (is_opt(a, "--name") && (v = value(argc, argv, i, "--name"))) {
    o->req.name = v;
  } else if (is_opt(a, "--limit") && (v = value(argc, argv, i, "--limit"))) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0 || n > 0x7fffffffL)
      return usage("--limit wants a count, got '%s'", v);
    o->req.limit = (unsigned)n;
  } else if (is_opt(a, "--sort") && (v = value(argc, argv, i, "--sort"))) {
    return sort_opt(o, v);
  } else if (strcmp(a, "--reverse") == 0 || strcmp(a, "-r") == 0) {
    o->reverse = true;
  } else if (strcmp(a, "--wide") == 0 || strcmp(a, "-w") == 0) {
    o->wide = true;
  } else {
    return usage("list: unknown option '%s'", a);
  }
  return 0;
}

static int purge_opt(cli *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v;
  char err[256];
  uint64_t x;
  if (strcmp(a, "--all") == 0) {
    o->req.all = true;
  } else if (is_opt(a, "--older-than") && (v = value(argc, argv, i, "--older-than"))) {
    if (teeny_duration_parse(v, &x, err, sizeof err))
      return usage("--older-than: %s", err);
    if (x < 1000 || x / 1000 > INT64_MAX)
      return usage("--older-than wants at least 1s, got '%s'", v);
    o->req.older_than_s = (int64_t)(x / 1000);
  } else if (is_opt(a, "--name") && (v = value(argc, argv, i, "--name"))) {
    o->req.name = v;
  } else if (is_opt(a, "--to-size") && (v = value(argc, argv, i, "--to-size"))) {
    if (teeny_size_parse(v, &x, err, sizeof err))
      return usage("--to-size: %s", err);
    if (x > INT64_MAX)
      return usage("--to-size: '%s' is too large", v);
    o->req.to_size = (int64_t)x;
    o->req.has_to_size = true;
  } else if (strcmp(a, "--wide") == 0 || strcmp(a, "-w") == 0) {
    o->wide = true;
  } else {
    return usage("purge: unknown option '%s'", a);
  }
  return 0;
}

static int tuned_opt(cli *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v;
  if (strcmp(a, "--purge") == 0)
    o->req.op = TEENY_ADMIN_TUNED_PURGE;
  else if (strcmp(a, "--all") == 0)
    o->req.all = true;
  else if (is_opt(a, "--name") && (v = value(argc, argv, i, "--name")))
    o->req.name = v;
  else if (strcmp(a, "--wide") == 0 || strcmp(a, "-w") == 0)
    o->wide = true;
  else
    return usage("tuned: unknown option '%s'", a);
  return 0;
}

static int show_opt(cli *o, int argc, char **argv, int *i) {
  static const struct { const char *opt; unsigned emit; } arts[] = {
      {"--source", TEENY_EMIT_SOURCE}, {"--mlir", TEENY_EMIT_MLIR}, {"--ptx", TEENY_EMIT_PTX}};
  const char *a = argv[*i], *v;
  for (int k = 0; k < 3; k++)
    if (strcmp(a, arts[k].opt) == 0 && !o->req.emit && !o->cubin) {
      o->req.emit = arts[k].emit;
      return 0;
    }
  if (is_opt(a, "--cubin") && !o->req.emit && !o->cubin && (v = value(argc, argv, i, "--cubin"))) {
    o->cubin = v;
    return 0;
  }
  if (a[0] != '-' && !o->what) {
    o->what = a;
    return 0;
  }
  return usage("show: unexpected '%s' (one KEY-PREFIX, ID or NAME, one of --source/--mlir/"
               "--ptx/--cubin ARCH)", a);
}

static int stats_opt(cli *o, const char *a) {
  if (strcmp(a, "--zero") == 0)
    o->req.zero = true;
  else if (strcmp(a, "--prometheus") == 0 || strcmp(a, "-p") == 0)
    o->prometheus = true;
  else
    return usage("stats: unknown option '%s'", a);
  return 0;
}

static int command_opt(cli *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  switch (o->req.op) {
  case TEENY_ADMIN_STATS: return stats_opt(o, a);
  case TEENY_ADMIN_LIST: return list_opt(o, argc, argv, i);
  case TEENY_ADMIN_SHOW: return show_opt(o, argc, argv, i);
  case TEENY_ADMIN_TUNED:
  case TEENY_ADMIN_TUNED_PURGE: return tuned_opt(o, argc, argv, i);
  case TEENY_ADMIN_PURGE: return purge_opt(o, argc, argv, i);
  case TEENY_ADMIN_VERIFY:
    if (strcmp(a, "--repair") != 0)
      return usage("verify: unknown option '%s'", a);
    o->req.repair = true;
    return 0;
  default:
    return usage("%s takes no options", o->command);
  }
}

static int set_command(cli *o, const char *word) {
  for (size_t k = 0; k < sizeof commands / sizeof *commands; k++)
    if (strcmp(word, commands[k].name) == 0) {
      o->command = word;
      o->req.op = commands[k].op;
      return 0;
    }
  return usage("unknown command '%s'", word);
}

static int check_command(const cli *o) {
  if (!o->command)
    return usage("%s", "no command given");
  if (o->req.op == TEENY_ADMIN_SHOW && (!o->what || !*o->what))
    return usage("%s", "show wants a KEY-PREFIX (4 to 64 hex digits), an ID or a NAME");
  if (o->prometheus && (o->json || o->req.zero))
    return usage("%s", "stats --prometheus goes with neither --json nor --zero");
  if (o->req.op == TEENY_ADMIN_TUNED && o->req.all)
    return usage("%s", "tuned: --all goes with --purge");
  if (o->req.op == TEENY_ADMIN_TUNED_PURGE && o->req.all == (o->req.name != NULL))
    return usage("%s", "tuned --purge wants exactly one of --all and --name GLOB");
  if (o->req.op == TEENY_ADMIN_PURGE) {
    const teeny_admin_req *q = &o->req;
    bool filter = q->name || q->older_than_s > 0;
    if (q->all + q->has_to_size + filter != 1)
      return usage("%s", "purge wants exactly one of --all, --to-size, or --name and/or "
                         "--older-than");
  }
  return 0;
}

static int parse(cli *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->sort = COL_USED;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc = 0;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage_text, stdout);
      return -1;
    } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
      printf("teenyctl %s (protocol %d)\n", TEENY_VERSION_STRING, TEENY_PROTOCOL_VERSION);
      return -1;
    } else if (strcmp(a, "-j") == 0 || strcmp(a, "--json") == 0) {
      o->json = true;
    } else if (strcmp(a, "-s") == 0 || is_opt(a, "--socket")) {
      if (!(o->socket = value(argc, argv, &i, a[1] == 's' ? "-s" : "--socket")))
        return usage("%s", "--socket wants a PATH");
    } else if (!o->command) {
      rc = a[0] == '-' ? usage("unknown option '%s'", a) : set_command(o, a);
    } else {
      rc = command_opt(o, argc, argv, &i);
    }
    if (rc)
      return rc;
  }
  return check_command(o);
}

int main(int argc, char **argv) {
  cli o;
  int rc = parse(&o, argc, argv);
  if (rc)
    return rc < 0 ? EXIT_OK : rc;
  return run(&o);
}
