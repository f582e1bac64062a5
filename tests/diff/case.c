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

size_t dfz_case_shift_bytes(const dfz_case *c, int i) {
  const dfz_param *p = &c->params[i];
  if (!c->shift || !p->is_ptr || p->desc_part)
    return 0; /* a descriptor's base stays 16-byte aligned, as the TMA needs */
  return (size_t)c->shift * (size_t)dfz_esize(p->dt);
}

uint64_t dfz_case_unaligned(const dfz_case *c) {
  uint64_t bits = 0;
  for (int i = 0; i < c->nparams && i < 64; i++)
    if (dfz_case_shift_bytes(c, i) % 16)
      bits |= UINT64_C(1) << i;
  return bits;
}

static const char *const status_names[DFZ_STATUS__COUNT] = {
    "ok", "mismatch", "invalid", "codegen-error", "engine-error", "crash", "timeout",
    "unsupported"};

const char *dfz_status_name(dfz_status s) {
  return s >= 0 && s < DFZ_STATUS__COUNT ? status_names[s] : "?";
}
