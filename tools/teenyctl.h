/*
 * tools/teenyctl.h — the parts of teenyctl shared by its files:
 * teenyctl.c (commands and arguments), teenyctl_json.c (every --json
 * output, through jansson), teenyctl_table.c (aligned tables and units for
 * people) and teenyctl_prom.c (stats --prometheus).
 *
 * Everything here works on libteenyc-client's public types only; output
 * goes to stdout, diagnostics to stderr.
 */
#ifndef TEENY_TOOLS_TEENYCTL_H
#define TEENY_TOOLS_TEENYCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "teeny/client.h"

/* ---- units (teenyctl_table.c) --------------------------------------------------- */

void ctl_fmt_bytes(char *out, size_t size, double b);    /* "1.5 MiB" */
void ctl_fmt_ms(char *out, size_t size, double ms);      /* "3.125 ms", "2.00 s" */
void ctl_fmt_duration(char *out, size_t size, double s); /* "3h 05m" */
void ctl_fmt_ago(char *out, size_t size, int64_t t);     /* "3h 05m ago" */

/* ---- tables (teenyctl_table.c) --------------------------------------------------- */

/* A table printed with columns as wide as their widest cell.  A column with
 * a cap (max > 0) longer cells end in "…" (never silently cut); wide:
 * no caps. */
typedef struct ctl_column {
  const char *head; /* the header */
  int max;          /* cap in characters; 0: none */
  bool right;       /* right-aligned (numbers) */
} ctl_column;

typedef struct ctl_table {
  const ctl_column *cols; /* the columns */
  size_t ncols;
  char **cells;           /* nrows * ncols strings, owned */
  size_t nrows, cap;      /* rows used and allocated */
  bool wide;              /* ignore the caps */
} ctl_table;

void ctl_table_init(ctl_table *t, const ctl_column *cols, size_t ncols, bool wide);
/* Append one row of ncols cells (copied).  0, or -1 out of memory. */
int ctl_table_row(ctl_table *t, const char *const *cells);
void ctl_table_print(const ctl_table *t, FILE *out);
void ctl_table_close(ctl_table *t); /* frees the cells */

/* The list/purge table of entries (wide: full keys, no caps). */
void ctl_entries_table(const teeny_cache_entry *v, size_t n, bool wide);
/* The tuned table. */
void ctl_tuned_table(const teeny_tuned_record *v, size_t n, bool wide);
/* "BLOCK_M=128 BLOCK_N=256 num_warps=8" */
void ctl_fmt_config(char *out, size_t size, const teeny_tuned_record *t);

/* ---- JSON (teenyctl_json.c): each prints one value and a newline ------------------ */

void ctl_json_stats(const teeny_admin_reply *r);
void ctl_json_entries(const char *field, const teeny_cache_entry *v, size_t n,
                      uint64_t removed, uint64_t bytes, bool purge);
void ctl_json_show(const teeny_admin_reply *r);
void ctl_json_tuned(const teeny_admin_reply *r, bool purge);
void ctl_json_verify(const teeny_admin_reply *r);
void ctl_json_config(const teeny_admin_reply *r);
void ctl_json_ping(const char *socket, double ms);
void ctl_json_ok(void);
/* {"status", "error", "message"[, "candidates"]}: candidates from the
 * daemon's reply (r may be NULL) or from teenyctl's own search (cands). */
void ctl_json_error(int rc, const char *msg, const teeny_admin_reply *r,
                    const char *const *cands, size_t ncands);

/* ---- Prometheus (teenyctl_prom.c) --------------------------------------------------- */

/* The stats reply as Prometheus text exposition (version 0.0.4). */
void ctl_prom_stats(const teeny_admin_reply *r, FILE *out);

#endif /* TEENY_TOOLS_TEENYCTL_H */
