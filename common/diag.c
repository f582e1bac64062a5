/*
 * common/diag.c — the diagnostics list (include/teeny/compile.h) and its
 * "file:line:col: error: message" rendering with the source line and a caret.
 *
 * Every string in a teeny_diag is owned by the list.  Source lines are cut
 * out of the text here, capped in length and with control bytes replaced,
 * so a hostile source cannot put escape sequences on a terminal.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/common.h"

#define DIAG_LINE_MAX 400 /* bytes of a source line kept for display */

void teeny_diags_init(teeny_diags *d) { memset(d, 0, sizeof *d); }

void teeny_diags_close(teeny_diags *d) {
  if (!d)
    return;
  for (size_t i = 0; i < d->n; i++) {
    teeny__free(d->v[i].file);
    teeny__free(d->v[i].message);
    teeny__free(d->v[i].source_line);
  }
  teeny__free(d->v);
  memset(d, 0, sizeof *d);
}

int teeny_diags_add(teeny_diags *d, teeny_diag_level level, const char *file,
                    int line, int col, const char *source_line,
                    const char *message) {
  if (!d)
    return TEENY_OK;
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 8;
    teeny_diag *v = teeny__realloc(d->v, cap * sizeof *v);
    if (!v)
      return TEENY_E_NOMEM;
    d->v = v;
    d->cap = cap;
  }
  teeny_diag *g = &d->v[d->n];
  memset(g, 0, sizeof *g);
  g->level = level;
  g->line = line;
  g->col = col;
  g->file = teeny__strdup(file ? file : "<source>");
  g->message = teeny__strdup(message ? message : "");
  g->source_line = source_line ? teeny__strdup(source_line) : NULL;
  if (!g->file || !g->message || (source_line && !g->source_line)) {
    teeny__free(g->file);
    teeny__free(g->message);
    teeny__free(g->source_line);
    return TEENY_E_NOMEM;
  }
  d->n++;
  if (level == TEENY_DIAG_ERROR)
    d->nerrors++;
  return TEENY_OK;
}

/* Copy line number `line` of text into out (at most DIAG_LINE_MAX bytes),
 * replacing control bytes other than tab.  Returns false if there is no
 * such line. */
static bool cut_line(const char *text, size_t len, int line, char *out) {
  if (!text || line < 1)
    return false;
  size_t i = 0;
  for (int l = 1; l < line; l++) {
    const char *nl = memchr(text + i, '\n', len - i);
    if (!nl)
      return false;
    i = (size_t)(nl - text) + 1;
  }
  size_t n = 0;
  while (i < len && text[i] != '\n' && text[i] != '\r' && n < DIAG_LINE_MAX) {
    unsigned char c = (unsigned char)text[i++];
    out[n++] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
  }
  out[n] = '\0';
  return true;
}

int teeny__diags_addf_at(teeny_diags *diags, teeny_diag_level level,
                         const char *file, const char *text, size_t text_len,
                         int line, int col, const char *fmt, ...) {
  if (!diags)
    return TEENY_OK;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *p = msg; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  char src[DIAG_LINE_MAX + 1];
  bool have = line > 0 && cut_line(text, text_len, line, src);
  return teeny_diags_add(diags, level, file, line, col, have ? src : NULL, msg);
}

static const char *level_name(teeny_diag_level l) {
  switch (l) {
  case TEENY_DIAG_ERROR:
    return "error";
  case TEENY_DIAG_WARNING:
    return "warning";
  case TEENY_DIAG_NOTE:
    return "note";
  }
  return "error";
}

size_t teeny_diag_format(const teeny_diag *dg, char *buf, size_t size) {
  teeny_buf b;
  teeny__buf_init(&b);
  if (dg->line > 0)
    teeny__buf_printf(&b, "%s:%d:%d: %s: %s\n", dg->file, dg->line, dg->col,
                      level_name(dg->level), dg->message);
  else
    teeny__buf_printf(&b, "%s: %s: %s\n", dg->file, level_name(dg->level),
                      dg->message);
  if (dg->source_line) {
    teeny__buf_printf(&b, "  %s\n  ", dg->source_line);
    /* keep tabs so the caret lines up under tab-indented code */
    size_t sl = strlen(dg->source_line);
    for (int i = 0; i + 1 < dg->col; i++)
      teeny__buf_putc(&b, (size_t)i < sl && dg->source_line[i] == '\t' ? '\t' : ' ');
    teeny__buf_puts(&b, "^\n");
  }
  size_t want = b.len;
  if (size > 0) {
    size_t n = b.oom ? 0 : (want < size - 1 ? want : size - 1);
    if (n)
      memcpy(buf, b.p, n);
    buf[n] = '\0';
  }
  teeny__buf_free(&b);
  return want;
}

uint64_t teeny__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
