/*
 * tools/teenyctl.c — administer teenycd's cache: stats, list, show, purge,
 * verify, ping, shutdown, and its autotuning records (tuned).  A thin tool over libteenyc-client's public API
 * (teeny_client_admin); every command prints an aligned table with units
 * for people, or with --json one JSON value for programs.
 *
 * Exit status: 0 ok; 1 the daemon answered with an error (or verify found
 * problems, with --repair: problems it did not repair); 2 usage; 3 cannot
 * reach the daemon (no socket answers); 4 permission denied by the daemon
 * (purge, verify --repair, stats --zero and shutdown are for root, the
 * daemon's user and its admin group); 5 not allowed to connect (the
 * socket's permissions: join its group).
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

enum {
  EXIT_OK = 0, EXIT_REPLY = 1, EXIT_USAGE = 2, EXIT_CONNECT = 3, EXIT_PERM = 4,
  EXIT_SOCKET_PERM = 5
};

static const char usage_text[] =
    "usage: teenyctl [--socket PATH] [--json] COMMAND [OPTIONS]\n"
    "\n"
    "Administer the teenycd kernel cache.\n"
    "\n"
    "commands:\n"
    "  stats [--zero]                 counters: requests, hits, compiles, ...\n"
    "                                 (--zero: then reset them; admin)\n"
    "  list [--name GLOB] [--limit N] [--sort used|size|hits]\n"
    "                                 cached kernels, most recently used first\n"
    "  show HASH-PREFIX [--source|--mlir|--ptx|--cubin ARCH]\n"
    "                                 one entry by 4 to 64 hex digits of its key\n"
    "                                 (an ambiguous prefix lists the candidates),\n"
    "                                 its cubins, or one of its artifacts (the\n"
    "                                 cubin for ARCH, e.g. sm_90, as binary)\n"
    "  purge --all | --older-than DUR | --name GLOB | --to-size SIZE\n"
    "                                 remove entries and print them (admin);\n"
    "                                 --name and --older-than combine\n"
    "  verify [--repair]              re-hash every artifact; --repair drops\n"
    "                                 broken entries and orphan files (admin)\n"
    "  tuned [--name GLOB]            autotuning records: the winner per kernel,\n"
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
    "  -j, --json          print JSON (one value; errors too, as\n"
    "                      {\"status\", \"error\", \"message\"})\n"
    "  -h, --help          show this help\n"
    "\n"
    "DUR is a number with s, m, h, d or w (7d, 12h; plain: seconds).  SIZE is\n"
    "a number with K, M, G or T (powers of 1024: 1G, 500M; plain: bytes).\n"
    "\n"
    "exit status: 0 ok, 1 error reply (or verify found problems; with --repair,\n"
    "problems left unrepaired), 2 usage, 3 cannot reach the daemon, 4 permission\n"
    "denied by the daemon, 5 not allowed to connect to its socket.\n"
    "\n"
    "examples:\n"
    "  teenyctl stats\n"
    "  teenyctl --json stats | python3 -m json.tool\n"
    "  teenyctl list --name 'matmul*' --sort size --limit 10\n"
    "  teenyctl show 3fa9 --ptx > kernel.ptx\n"
    "  teenyctl show 3fa9 --cubin sm_90 > kernel.cubin\n"
    "  teenyctl tuned --name 'matmul*'\n"
    "  teenyctl purge --older-than 7d\n"
    "  teenyctl purge --to-size 1G\n"
    "  teenyctl verify --repair\n";

typedef struct cli {
  const char *socket;   /* --socket */
  bool json;            /* --json */
  const char *command;  /* the command word */
  teeny_admin_req req;  /* what to send */
  const char *dur;      /* purge --older-than as given */
  const char *size;     /* purge --to-size as given */
  const char *cubin;    /* show --cubin ARCH */
} cli;

static int usage(const char *fmt, const char *arg) {
  fprintf(stderr, "teenyctl: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'teenyctl --help'.\n");
  return EXIT_USAGE;
}

/* ---- units --------------------------------------------------------------------- */

/* "7d" -> 604800.  -1 if malformed. */
static int64_t parse_duration(const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || v < 0)
    return -1;
  static const struct { const char *u; double mul; } units[] = {
      {"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 604800}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (strcmp(end, units[i].u) == 0 && v * units[i].mul < 9e18)
      return (int64_t)(v * units[i].mul);
  return -1;
}

/* "1G", "500MiB", "123" -> bytes.  -1 if malformed. */
static int64_t parse_size(const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || v < 0)
    return -1;
  static const char *const units[] = {"", "K", "M", "G", "T"};
  double mul = 1;
  for (size_t i = 0; i < sizeof units / sizeof *units; i++, mul *= 1024) {
    size_t n = strlen(units[i]);
    if (strncasecmp(end, units[i], n) != 0)
      continue;
    const char *rest = end + n;
    if ((!*rest || strcasecmp(rest, "B") == 0 || (n && strcasecmp(rest, "iB") == 0)) &&
        v * mul < 9e18)
      return (int64_t)(v * mul);
  }
  return -1;
}

static void fmt_bytes(char *out, size_t size, double b) {
  static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (b >= 1024 && i < 4) {
    b /= 1024;
    i++;
  }
  snprintf(out, size, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

static void fmt_ms(char *out, size_t size, double ms) {
  if (ms < 1000)
    snprintf(out, size, "%.3f ms", ms);
  else if (ms < 120000)
    snprintf(out, size, "%.2f s", ms / 1000);
  else
    snprintf(out, size, "%.1f min", ms / 60000);
}

static void fmt_duration(char *out, size_t size, double s) {
  if (s < 60)
    snprintf(out, size, "%.0fs", s);
  else if (s < 3600)
    snprintf(out, size, "%.0fm %02.0fs", floor(s / 60), fmod(s, 60));
  else if (s < 86400)
    snprintf(out, size, "%.0fh %02.0fm", floor(s / 3600), floor(fmod(s, 3600) / 60));
  else
    snprintf(out, size, "%.0fd %02.0fh", floor(s / 86400), floor(fmod(s, 86400) / 3600));
}

static void fmt_ago(char *out, size_t size, int64_t t) {
  char d[32];
  int64_t now = (int64_t)time(NULL);
  fmt_duration(d, sizeof d, (double)(now > t ? now - t : 0));
  snprintf(out, size, "%s ago", d);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_str(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", stdout);
    else if (*p == '\t')
      fputs("\\t", stdout);
    else if (*p < 0x20 || *p == 0x7f)
      printf("\\u%04x", *p);
    else
      putchar(*p); /* bytes >= 0x80 pass through (UTF-8 stays UTF-8) */
  }
  putchar('"');
}

/* s[0..n) as a JSON string: also invalid UTF-8 and NULs escaped. */
static void json_blob(const char *s, size_t n) {
  putchar('"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c == '\n')
      fputs("\\n", stdout);
    else if (c < 0x20 || c >= 0x7f)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void json_num(double v) {
  if (!isfinite(v))
    fputs("null", stdout);
  else if (v == floor(v) && fabs(v) < 9e15)
    printf("%.0f", v);
  else
    printf("%.6g", v);
}

static void json_entry(const teeny_cache_entry *e) {
  printf("{\"key\": ");
  json_str(e->key);
  printf(", \"name\": ");
  json_str(e->name);
  printf(", \"id\": ");
  json_str(e->id);
  printf(", \"target\": ");
  json_str(e->target);
  printf(", \"num_warps\": %d, \"size\": %" PRIu64 ", \"created\": %" PRId64
         ", \"last_used\": %" PRId64 ", \"hits\": %" PRIu64 ", \"cubins\": %" PRIu32
         ", \"cubin_bytes\": %" PRIu64 ", \"compile_ms\": ",
         e->num_warps, e->size, e->created, e->last_used, e->hits, e->cubins,
         e->cubin_bytes);
  json_num(e->compile_ms);
  putchar('}');
}

static void json_entries(const teeny_cache_entry *v, size_t n) {
  putchar('[');
  for (size_t i = 0; i < n; i++) {
    printf(i ? ",\n  " : "\n  ");
    json_entry(&v[i]);
  }
  printf(n ? "\n]" : "]");
}

/* ---- tables ------------------------------------------------------------------------ */

static void entries_table(const teeny_cache_entry *v, size_t n) {
  printf("%-14s %-16s %-32s %-7s %5s %10s %6s %7s %14s %11s\n", "KEY", "NAME", "ID",
         "TARGET", "WARPS", "SIZE", "CUBINS", "HITS", "LAST USED", "COMPILE");
  for (size_t i = 0; i < n; i++) {
    const teeny_cache_entry *e = &v[i];
    char size[32], ago[48], ms[32];
    fmt_bytes(size, sizeof size, (double)e->size);
    fmt_ago(ago, sizeof ago, e->last_used);
    fmt_ms(ms, sizeof ms, e->compile_ms);
    printf("%-14.12s %-16.16s %-32.32s %-7s %5d %10s %6" PRIu32 " %7" PRIu64 " %14s %11s\n",
           e->key, e->name, e->id, e->target, e->num_warps, size, e->cubins, e->hits, ago,
           ms);
  }
}

/* ---- commands --------------------------------------------------------------------- */

static void stats_human(const teeny_admin_reply *r) {
  double req = teeny_admin_counter(r, "requests"), hits = teeny_admin_counter(r, "hits");
  double mem = teeny_admin_counter(r, "memory_hits"), disk = teeny_admin_counter(r, "disk_hits");
  double miss = teeny_admin_counter(r, "misses"), comp = teeny_admin_counter(r, "compiles");
  double cms = teeny_admin_counter(r, "compile_ms_total");
  double lookups = hits + miss;
  char a[32], b[32], c[32];
  printf("%-18s %14.0f\n", "requests", req);
  printf("%-18s %14.0f   %.1f%% of compile requests (memory %.0f, disk %.0f)\n", "hits", hits,
         lookups > 0 ? 100.0 * hits / lookups : 0.0, mem, disk);
  printf("%-18s %14.0f\n", "misses", miss);
  printf("%-18s %14.0f   single-flight joins %.0f\n", "compiles", comp,
         teeny_admin_counter(r, "joins"));
  printf("%-18s %14.0f\n", "errors", teeny_admin_counter(r, "errors"));
  fmt_ms(a, sizeof a, cms);
  fmt_ms(b, sizeof b, comp > 0 ? cms / comp : 0);
  printf("%-18s %14s   %s per compile\n", "compile time", a, b);
  fmt_ms(c, sizeof c, teeny_admin_counter(r, "saved_ms_total"));
  printf("%-18s %14s   compile time hits did not spend\n", "time saved", c);
  printf("%-18s %14.0f\n", "entries", teeny_admin_counter(r, "entries"));
  fmt_bytes(a, sizeof a, teeny_admin_counter(r, "bytes"));
  printf("%-18s %14s\n", "stored", a);
  double cubins = teeny_admin_counter(r, "cubins");
  if (!isnan(cubins)) { /* a daemon that makes cubins */
    fmt_bytes(b, sizeof b, teeny_admin_counter(r, "cubin_bytes"));
    printf("%-18s %14.0f   %s (in stored), %.0f made, %.0f failed, %.0f queued\n",
           "cubins", cubins, b, teeny_admin_counter(r, "sass_made"),
           teeny_admin_counter(r, "sass_failed"), teeny_admin_counter(r, "sass_queued"));
    printf("%-18s %14.0f   %.0f tunings, %.0f answered from a record (%.0f after waiting)\n",
           "tuning records", teeny_admin_counter(r, "tuned"),
           teeny_admin_counter(r, "tunings"), teeny_admin_counter(r, "tune_hits"),
           teeny_admin_counter(r, "tune_joins"));
  }
  printf("%-18s %14.0f\n", "evictions", teeny_admin_counter(r, "evictions"));
  fmt_duration(a, sizeof a, teeny_admin_counter(r, "uptime_s"));
  printf("%-18s %14s\n", "uptime", a);
  for (size_t i = 14; i < r->ncounters; i++) /* the daemon's extra counters */
    printf("%-18s %14.6g\n", r->counters[i].name, r->counters[i].value);
}

static int cmd_stats(const cli *o, const teeny_admin_reply *r) {
  if (o->json) {
    putchar('{');
    for (size_t i = 0; i < r->ncounters; i++) {
      printf(i ? ",\n " : "\n ");
      json_str(r->counters[i].name);
      printf(": ");
      json_num(r->counters[i].value);
    }
    printf("\n}\n");
  } else {
    stats_human(r);
    if (o->req.zero)
      printf("(counters reset to zero)\n");
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

static int cmd_list(const cli *o, const listing *l) {
  if (o->json) {
    printf("{\"entries\": ");
    json_entries(l->v, l->n);
    printf("}\n");
    return EXIT_OK;
  }
  entries_table(l->v, l->n);
  uint64_t total = 0;
  for (size_t i = 0; i < l->n; i++)
    total += l->v[i].size;
  char b[32];
  fmt_bytes(b, sizeof b, (double)total);
  printf("%zu entr%s, %s\n", l->n, l->n == 1 ? "y" : "ies", b);
  return EXIT_OK;
}

static void show_human(const teeny_cache_entry *e) {
  char size[32], ms[32], created[48], used[48];
  fmt_bytes(size, sizeof size, (double)e->size);
  fmt_ms(ms, sizeof ms, e->compile_ms);
  fmt_ago(created, sizeof created, e->created);
  fmt_ago(used, sizeof used, e->last_used);
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
    fmt_bytes(size, sizeof size, (double)c->size);
    fmt_ms(ms, sizeof ms, c->sass_ms);
    fmt_ago(ago, sizeof ago, c->created);
    printf("  %-8s %10s  %-24s made in %s, %s\n", c->arch, size, c->toolchain, ms, ago);
  }
}

static void json_cubins(const teeny_admin_reply *r) {
  printf(", \"cubins\": [");
  for (size_t i = 0; i < r->ncubins; i++) {
    const teeny_cache_cubin *c = &r->cubins[i];
    printf(i ? ", {\"arch\": " : "{\"arch\": ");
    json_str(c->arch);
    printf(", \"toolchain\": ");
    json_str(c->toolchain);
    printf(", \"size\": %" PRIu64 ", \"created\": %" PRId64 ", \"sass_ms\": ", c->size,
           c->created);
    json_num(c->sass_ms);
    putchar('}');
  }
  putchar(']');
}

static int cmd_show(const cli *o, const teeny_admin_reply *r) {
  const char *art = r->ptx ? r->ptx : r->mlir ? r->mlir : r->source;
  size_t len = r->ptx ? r->ptx_len : r->mlir ? r->mlir_len : r->source_len;
  if (o->cubin && !o->json) {
    fwrite(r->cubin, 1, r->cubin_len, stdout); /* binary, for a file */
    return EXIT_OK;
  }
  if (o->json) {
    printf("{\"entry\": ");
    json_entry(&r->entries[0]);
    json_cubins(r);
    const char *names[] = {"source", "mlir", "ptx"};
    const char *texts[] = {r->source, r->mlir, r->ptx};
    size_t lens[] = {r->source_len, r->mlir_len, r->ptx_len};
    for (int i = 0; i < 3; i++)
      if (texts[i]) {
        printf(", \"%s\": ", names[i]);
        json_blob(texts[i], lens[i]);
      }
    printf("}\n");
  } else if (art) {
    fwrite(art, 1, len, stdout);
  } else {
    show_human(&r->entries[0]);
    cubins_human(r);
  }
  return EXIT_OK;
}

/* ---- tuned ------------------------------------------------------------------------- */

/* "BLOCK_M=128 BLOCK_N=256 num_warps=8" into out. */
static void fmt_config(char *out, size_t size, const teeny_tuned_record *t) {
  size_t k = 0;
  out[0] = '\0';
  for (size_t i = 0; i < t->nconsts && k < size; i++)
    k += (size_t)snprintf(out + k, size - k, "%s=%" PRId64 " ", t->consts[i].name,
                          t->consts[i].value);
  if (k < size)
    snprintf(out + k, size - k, "num_warps=%d", t->num_warps);
}

static void json_tuned(const teeny_tuned_record *t) {
  printf("{\"kernel\": ");
  json_str(t->kernel);
  printf(", \"digest\": ");
  json_str(t->digest);
  printf(", \"problem\": ");
  json_str(t->problem);
  printf(", \"gpu\": ");
  json_str(t->gpu);
  printf(", \"driver\": ");
  json_str(t->driver);
  printf(", \"consts\": {");
  for (size_t i = 0; i < t->nconsts; i++) {
    printf(i ? ", " : "");
    json_str(t->consts[i].name);
    printf(": %" PRId64, t->consts[i].value);
  }
  printf("}, \"num_warps\": %d, \"best_ms\": ", t->num_warps);
  json_num(t->best_ms);
  printf(", \"candidates\": %" PRIu32 ", \"created\": %" PRId64 "}", t->candidates,
         t->created);
}

static int cmd_tuned(const cli *o, const teeny_admin_reply *r) {
  if (o->req.op == TEENY_ADMIN_TUNED_PURGE) {
    if (o->json)
      printf("{\"removed\": %" PRIu64 "}\n", r->removed);
    else
      printf("removed %" PRIu64 " tuning record%s\n", r->removed, r->removed == 1 ? "" : "s");
    return EXIT_OK;
  }
  if (o->json) {
    printf("{\"records\": [");
    for (size_t i = 0; i < r->ntuned; i++) {
      printf(i ? ",\n  " : "\n  ");
      json_tuned(&r->tuned[i]);
    }
    printf(r->ntuned ? "\n]}\n" : "]}\n");
    return EXIT_OK;
  }
  printf("%-16s %-24s %-14s %-10s %-36s %10s %5s %14s\n", "KERNEL", "PROBLEM", "GPU", "DRIVER",
         "WINNER", "BEST", "TIMED", "CREATED");
  for (size_t i = 0; i < r->ntuned; i++) {
    const teeny_tuned_record *t = &r->tuned[i];
    char cfg[256], ms[32], ago[48];
    fmt_config(cfg, sizeof cfg, t);
    fmt_ms(ms, sizeof ms, t->best_ms);
    fmt_ago(ago, sizeof ago, t->created);
    printf("%-16.16s %-24.24s %-14.14s %-10.10s %-36.36s %10s %5" PRIu32 " %14s\n", t->kernel,
           t->problem, t->gpu, t->driver, cfg, ms, t->candidates, ago);
  }
  printf("%zu tuning record%s\n", r->ntuned, r->ntuned == 1 ? "" : "s");
  return EXIT_OK;
}

static int cmd_verify(const cli *o, const teeny_admin_reply *r) {
  size_t left = r->nproblems > r->repaired ? r->nproblems - (size_t)r->repaired : 0;
  if (o->json) {
    printf("{\"checked\": %" PRIu64 ", \"repaired\": %" PRIu64 ", \"problems\": [", r->checked,
           r->repaired);
    for (size_t i = 0; i < r->nproblems; i++) {
      printf(i ? ",\n  {\"key\": " : "\n  {\"key\": ");
      json_str(r->problems[i].key);
      printf(", \"problem\": ");
      json_str(r->problems[i].problem);
      putchar('}');
    }
    printf(r->nproblems ? "\n]}\n" : "]}\n");
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

/* Mark in keep[] the entries the purge selects (the daemon's rules,
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
    printf("{\"removed\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"entries\": ", r->removed,
           r->bytes);
    json_entries(v, n);
    printf("}\n");
    return EXIT_OK;
  }
  if (n)
    entries_table(v, n);
  char b[32];
  fmt_bytes(b, sizeof b, (double)r->bytes);
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
  return EXIT_REPLY;
}

static int report_error(const cli *o, int rc, const char *msg, const teeny_admin_reply *r,
                        bool at_open) {
  if (o->json) {
    printf("{\"status\": %d, \"error\": ", rc);
    json_str(teeny_err_name(rc));
    printf(", \"message\": ");
    json_str(msg);
    if (r && r->ncandidates) {
      printf(", \"candidates\": [");
      for (size_t i = 0; i < r->ncandidates; i++) {
        printf(i ? ", " : "");
        json_str(r->candidates[i]);
      }
      putchar(']');
    }
    printf("}\n");
  }
  fprintf(stderr, "teenyctl: %s\n", msg);
  if (rc == TEENY_E_CONNECT)
    fprintf(stderr, "teenyctl: is teenycd running? Start it, or point --socket / "
                    "$TEENYCD_SOCKET at it.\n");
  if (rc == TEENY_E_PERM && !at_open)
    fprintf(stderr, "teenyctl: this needs root, the daemon's user or its admin group.\n");
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
  case TEENY_ADMIN_TUNED:
  case TEENY_ADMIN_TUNED_PURGE: return cmd_tuned(o, r);
  case TEENY_ADMIN_PING:
    if (o->json) {
      printf("{\"ok\": true, \"socket\": ");
      json_str(teeny_client_socket(c));
      printf(", \"ms\": %.3f}\n", ms);
    } else
      printf("teenycd at %s is alive (%.3f ms)\n", teeny_client_socket(c), ms);
    return EXIT_OK;
  default:
    if (o->json)
      printf("{\"ok\": true}\n");
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
    rc = list_all(c, &o->req, &all, &r);
    status = rc ? report_error(o, rc, teeny_client_errmsg(c), r, false) : cmd_list(o, &all);
    goto done;
  }
  if (o->req.op == TEENY_ADMIN_PURGE)
    purged = preview(c, &o->req, &npurged, &all);
  double t0 = now_ms();
  rc = o->cubin ? teeny_client_show_cubin(c, o->req.key, o->cubin, &r)
                : teeny_client_admin(c, &o->req, &r);
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
    {"shutdown", TEENY_ADMIN_SHUTDOWN}, {"tuned", TEENY_ADMIN_TUNED}};

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
    static const char *const sorts[] = {"used", "size", "hits"};
    int k = 0;
    while (k < 3 && strcmp(v, sorts[k]) != 0)
      k++;
    if (k == 3)
      return usage("--sort wants used, size or hits, got '%s'", v);
    o->req.sort = (teeny_admin_sort)k;
  } else {
    return usage("list: unknown option '%s'", a);
  }
  return 0;
}

static int purge_opt(cli *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v;
  if (strcmp(a, "--all") == 0) {
    o->req.all = true;
  } else if (is_opt(a, "--older-than") && (v = value(argc, argv, i, "--older-than"))) {
    if ((o->req.older_than_s = parse_duration(v)) <= 0)
      return usage("--older-than wants a duration like 7d or 12h, got '%s'", v);
  } else if (is_opt(a, "--name") && (v = value(argc, argv, i, "--name"))) {
    o->req.name = v;
  } else if (is_opt(a, "--to-size") && (v = value(argc, argv, i, "--to-size"))) {
    if ((o->req.to_size = parse_size(v)) < 0)
      return usage("--to-size wants a size like 1G or 500M, got '%s'", v);
    o->req.has_to_size = true;
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
  else
    return usage("tuned: unknown option '%s'", a);
  return 0;
}

static int command_opt(cli *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  switch (o->req.op) {
  case TEENY_ADMIN_STATS:
    if (strcmp(a, "--zero") != 0)
      return usage("stats: unknown option '%s'", a);
    o->req.zero = true;
    return 0;
  case TEENY_ADMIN_LIST:
    return list_opt(o, argc, argv, i);
  case TEENY_ADMIN_SHOW: {
    static const struct { const char *opt; unsigned emit; } arts[] = {
        {"--source", TEENY_EMIT_SOURCE}, {"--mlir", TEENY_EMIT_MLIR}, {"--ptx", TEENY_EMIT_PTX}};
    for (int k = 0; k < 3; k++)
      if (strcmp(a, arts[k].opt) == 0 && !o->req.emit && !o->cubin) {
        o->req.emit = arts[k].emit;
        return 0;
      }
    const char *v;
    if (is_opt(a, "--cubin") && !o->req.emit && !o->cubin &&
        (v = value(argc, argv, i, "--cubin"))) {
      o->cubin = v;
      return 0;
    }
    if (a[0] != '-' && !o->req.key) {
      o->req.key = a;
      return 0;
    }
    return usage("show: unexpected '%s' (one HASH-PREFIX, one of --source/--mlir/--ptx/"
                 "--cubin ARCH)", a);
  }
  case TEENY_ADMIN_TUNED:
  case TEENY_ADMIN_TUNED_PURGE:
    return tuned_opt(o, argc, argv, i);
  case TEENY_ADMIN_PURGE:
    return purge_opt(o, argc, argv, i);
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
  if (o->req.op == TEENY_ADMIN_SHOW) {
    size_t n = o->req.key ? strlen(o->req.key) : 0;
    if (n < 4 || n > 64 || strspn(o->req.key, "0123456789abcdefABCDEF") != n)
      return usage("show wants a HASH-PREFIX of 4 to 64 hex digits, got '%s'",
                   o->req.key ? o->req.key : "");
  }
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
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc = 0;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage_text, stdout);
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
