/*
 * tests/diff/case.c — the case and outcome records of dfz.h: copying and
 * freeing a case, finding a parameter, naming statuses.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/diff/dfz.h"

void dfz_case_free(dfz_case *c) {
  free(c->source);
  c->source = NULL;
}

void dfz_case_copy(dfz_case *dst, const dfz_case *src) {
  if (dst == src)
    return;
  *dst = *src;
  dst->source = NULL;
  if (src->source) {
    size_t n = strlen(src->source) + 1;
    dst->source = malloc(n);
    if (dst->source)
      memcpy(dst->source, src->source, n);
  }
}

dfz_param *dfz_case_param(dfz_case *c, const char *name) {
  for (int i = 0; i < c->nparams; i++)
    if (strcmp(c->params[i].name, name) == 0)
      return &c->params[i];
  return NULL;
}

static const char *const status_names[DFZ_STATUS__COUNT] = {
    "ok", "mismatch", "invalid", "codegen-error", "engine-error", "crash", "timeout",
    "unsupported"};

const char *dfz_status_name(dfz_status s) {
  return s >= 0 && s < DFZ_STATUS__COUNT ? status_names[s] : "?";
}
