/*
 * tools/teenyctl_table.c — teenyctl's output for people: units, and tables
 * whose columns are as wide as their widest cell.  A capped column cuts a
 * longer cell to its cap and ends it in "…", so nothing is cut silently;
 * --wide lifts every cap (and shows keys whole).  Widths count characters
 * (UTF-8 code points), not bytes.  Tables hold at most what one listing
 * returned (10^5 rows at the most).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/teenyctl.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* ---- units ------------------------------------------------------------------------ */

void ctl_fmt_bytes(char *out, size_t size, double b) {
  static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (b >= 1024 && i < 5) {
    b /= 1024;
    i++;
  }
  snprintf(out, size, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

void ctl_fmt_ms(char *out, size_t size, double ms) {
  if (ms < 1000)
    snprintf(out, size, "%.3f ms", ms);
  else if (ms < 120000)
    snprintf(out, size, "%.2f s", ms / 1000);
  else
    snprintf(out, size, "%.1f min", ms / 60000);
}

void ctl_fmt_duration(char *out, size_t size, double s) {
  if (s < 60)
    snprintf(out, size, "%.0fs", s);
  else if (s < 3600)
    snprintf(out, size, "%.0fm %02.0fs", floor(s / 60), fmod(s, 60));
  else if (s < 86400)
    snprintf(out, size, "%.0fh %02.0fm", floor(s / 3600), floor(fmod(s, 3600) / 60));
  else
    snprintf(out, size, "%.0fd %02.0fh", floor(s / 86400), floor(fmod(s, 86400) / 3600));
}

void ctl_fmt_ago(char *out, size_t size, int64_t t) {
  char d[32];
  int64_t now = (int64_t)time(NULL);
  ctl_fmt_duration(d, sizeof d, (double)(now > t ? now - t : 0));
  snprintf(out, size, "%s ago", d);
}

/* ---- tables ------------------------------------------------------------------------- */

/* Characters of s: UTF-8 lead bytes (a stray continuation byte is not one). */
static size_t text_width(const char *s) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    n += (*p & 0xc0) != 0x80;
  return n;
}

/* The byte length of s's first k characters. */
static size_t text_prefix(const char *s, size_t k) {
  size_t i = 0, chars = 0;
  for (; s[i]; i++) {
    if (((unsigned char)s[i] & 0xc0) != 0x80 && chars++ == k)
      break;
  }
  return i;
}

void ctl_table_init(ctl_table *t, const ctl_column *cols, size_t ncols, bool wide) {
  memset(t, 0, sizeof *t);
  t->cols = cols;
  t->ncols = ncols;
  t->wide = wide;
}

int ctl_table_row(ctl_table *t, const char *const *cells) {
  if (t->nrows == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    char **nc = realloc(t->cells, cap * t->ncols * sizeof *nc);
    if (!nc)
      return -1;
    t->cells = nc;
    t->cap = cap;
  }
  char **row = t->cells + t->nrows * t->ncols;
  for (size_t c = 0; c < t->ncols; c++) {
    row[c] = strdup(cells[c] ? cells[c] : "");
    if (!row[c]) {
      while (c--)
        free(row[c]);
      return -1;
    }
  }
  t->nrows++;
  return 0;
}

void ctl_table_close(ctl_table *t) {
  for (size_t i = 0; i < t->nrows * t->ncols; i++)
    free(t->cells[i]);
  free(t->cells);
  memset(t, 0, sizeof *t);
}

static size_t column_width(const ctl_table *t, size_t c) {
  size_t w = text_width(t->cols[c].head);
  for (size_t r = 0; r < t->nrows; r++) {
    size_t n = text_width(t->cells[r * t->ncols + c]);
    w = n > w ? n : w;
  }
  if (!t->wide && t->cols[c].max > 0 && w > (size_t)t->cols[c].max)
    w = (size_t)t->cols[c].max;
  return w;
}

/* One cell in w columns: cut to w - 1 characters and "…" when longer. */
static void print_cell(FILE *out, const char *s, size_t w, bool right, bool last) {
  size_t n = text_width(s);
  if (n > w) {
    fprintf(out, "%.*s" ELLIPSIS, (int)text_prefix(s, w - 1), s);
    n = w;
  } else if (right) {
    fprintf(out, "%*s%s", (int)(w - n), "", s);
    n = w;
  } else {
    fputs(s, out);
  }
  if (!last)
    fprintf(out, "%*s ", (int)(w - n), "");
}

void ctl_table_print(const ctl_table *t, FILE *out) {
  size_t w[32];
  size_t nc = t->ncols < 32 ? t->ncols : 32;
  for (size_t c = 0; c < nc; c++)
    w[c] = column_width(t, c);
  for (size_t c = 0; c < nc; c++)
    print_cell(out, t->cols[c].head, w[c], t->cols[c].right, c + 1 == nc);
  fputc('\n', out);
  for (size_t r = 0; r < t->nrows; r++) {
    for (size_t c = 0; c < nc; c++)
      print_cell(out, t->cells[r * t->ncols + c], w[c], t->cols[c].right, c + 1 == nc);
    fputc('\n', out);
  }
}

/* ---- the tables of entries and tuning records ------------------------------------------ */

void ctl_entries_table(const teeny_cache_entry *v, size_t n, bool wide) {
  static const ctl_column cols[] = {
      {"KEY", 12, false},    {"NAME", 24, false},  {"ID", 40, false},
      {"TARGET", 0, false},  {"WARPS", 0, true},   {"SIZE", 0, true},
      {"CUBINS", 0, true},   {"HITS", 0, true},    {"LAST USED", 0, true},
      {"COMPILE", 0, true}};
  ctl_table t;
  ctl_table_init(&t, cols, sizeof cols / sizeof *cols, wide);
  for (size_t i = 0; i < n; i++) {
    const teeny_cache_entry *e = &v[i];
    char key[65], warps[16], size[32], cubins[16], hits[32], ago[48], ms[32];
    /* a key prefix is a name of its own (show takes it), not a cut value */
    snprintf(key, sizeof key, wide ? "%s" : "%.12s", e->key);
    snprintf(warps, sizeof warps, "%d", e->num_warps);
    ctl_fmt_bytes(size, sizeof size, (double)e->size);
    snprintf(cubins, sizeof cubins, "%" PRIu32, e->cubins);
    snprintf(hits, sizeof hits, "%" PRIu64, e->hits);
    ctl_fmt_ago(ago, sizeof ago, e->last_used);
    ctl_fmt_ms(ms, sizeof ms, e->compile_ms);
    const char *row[] = {key, e->name, e->id, e->target, warps, size, cubins, hits, ago, ms};
    if (ctl_table_row(&t, row))
      break;
  }
  ctl_table_print(&t, stdout);
  ctl_table_close(&t);
}

void ctl_fmt_config(char *out, size_t size, const teeny_tuned_record *t) {
  size_t k = 0;
  out[0] = '\0';
  for (size_t i = 0; i < t->nconsts && k < size; i++)
    k += (size_t)snprintf(out + k, size - k, "%s=%" PRId64 " ", t->consts[i].name,
                          t->consts[i].value);
  if (k < size)
    snprintf(out + k, size - k, "num_warps=%d", t->num_warps);
}

void ctl_tuned_table(const teeny_tuned_record *v, size_t n, bool wide) {
  static const ctl_column cols[] = {
      {"KERNEL", 24, false}, {"PROBLEM", 32, false}, {"GPU", 20, false},
      {"DRIVER", 12, false}, {"WINNER", 48, false},  {"BEST", 0, true},
      {"TIMED", 0, true},    {"CREATED", 0, true}};
  ctl_table t;
  ctl_table_init(&t, cols, sizeof cols / sizeof *cols, wide);
  for (size_t i = 0; i < n; i++) {
    const teeny_tuned_record *r = &v[i];
    char cfg[512], ms[32], timed[16], ago[48];
    ctl_fmt_config(cfg, sizeof cfg, r);
    ctl_fmt_ms(ms, sizeof ms, r->best_ms);
    snprintf(timed, sizeof timed, "%" PRIu32, r->candidates);
    ctl_fmt_ago(ago, sizeof ago, r->created);
    const char *row[] = {r->kernel, r->problem, r->gpu, r->driver, cfg, ms, timed, ago};
    if (ctl_table_row(&t, row))
      break;
  }
  ctl_table_print(&t, stdout);
  ctl_table_close(&t);
}
