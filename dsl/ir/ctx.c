/*
 * dsl/ir/ctx.c — error reporting for compile jobs.  Every stage reports
 * through teeny__error_at(); the count is kept even when the sink is full
 * or absent, so stages can stop after the first error they care about.
 */
#include <stdio.h>

#include "dsl/ir/ir.h"

static void report(teeny_ctx *cx, teeny_diag_level level, teeny_loc loc,
                   const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (cx->diags && cx->nerrors < TEENY_MAX_ERRORS)
    teeny__diags_addf_at(cx->diags, level, cx->file, cx->text, cx->len,
                         loc.line, loc.col, "%s", msg);
}

void teeny__error_at(teeny_ctx *cx, teeny_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(cx, TEENY_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  cx->nerrors++;
}

void teeny__note_at(teeny_ctx *cx, teeny_loc loc, const char *fmt, ...) {
  if (cx->nerrors > TEENY_MAX_ERRORS)
    return;
  va_list ap;
  va_start(ap, fmt);
  report(cx, TEENY_DIAG_NOTE, loc, fmt, ap);
  va_end(ap);
}
