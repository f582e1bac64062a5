/*
 * tests/diff/check.c — comparing one buffer of the interpreter's run with
 * the engine's: integers and bools bit for bit, floats by value with
 * NaN equal to NaN and -0 equal to +0, within the buffer's tolerance
 * (the bound facts.c derived for the values stored into it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/diff/run.h"

static bool same(const dfz_param *p, const void *ref, const void *got, size_t i) {
  if (!dfz_is_float(p->dt))
    return dfz_get_bits(p->dt, ref, i) == dfz_get_bits(p->dt, got, i);
  double a = dfz_get(p->dt, ref, i), b = dfz_get(p->dt, got, i);
  if (isnan(a) && isnan(b))
    return true;
  if (a == b)
    return true;
  return p->tol > 0 && isfinite(a) && isfinite(b) && fabs(a - b) <= p->tol;
}

bool dfz_check_buffer(const dfz_param *p, const void *ref, const void *got, const char *engine,
                      char *msg, size_t msgsz) {
  size_t ndiff = 0, first[4];
  for (size_t i = 0; i < p->count; i++)
    if (!same(p, ref, got, i)) {
      if (ndiff < 4)
        first[ndiff] = i;
      ndiff++;
    }
  if (ndiff == 0)
    return true;
  size_t off = (size_t)snprintf(msg, msgsz, "%s (%s, %s, tol %g): %zu of %zu differ:", p->name,
                                teeny_dtype_name(p->dt), p->cat, p->tol, ndiff, p->count);
  for (size_t k = 0; k < ndiff && k < 4 && off < msgsz; k++) {
    char a[40], b[40];
    dfz_format(p->dt, ref, first[k], a, sizeof a);
    dfz_format(p->dt, got, first[k], b, sizeof b);
    off += (size_t)snprintf(msg + off, msgsz - off, " [%zu] interp %s, %s %s;", first[k], a,
                            engine, b);
  }
  if (off < msgsz)
    snprintf(msg + off, msgsz - off, "\n");
  return false;
}
