/*
 * dsl/bindval.c — the values of TEENY_CONST bindings (dsl/front.h, spec.c
 * section): a binding given as an integer (teeny_const_binding) or as text
 * (teeny_dtype_binding) read as the constant's dtype, and the one
 * canonical text of a value, which the id and the generated source's
 * TEENY_BIND line show (so two spellings of one value share a cache key).
 *
 * A TEENY_CONST without a dtype is an i32 whose value is kept as a weak
 * integer; one with a dtype holds that dtype's canonical value
 * (dsl/ir/scalar.h: ints wrapped to their width, bools 0/1, floats
 * rounded to their format).  Nothing here is approximate: an integer bound
 * to a float constant must be one the dtype holds exactly, and a float's
 * text is rounded once, from its decimal value, to the dtype.
 */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/front.h"
#include "dsl/ir/scalar.h"

/* The dtype a const generic's values have: i32 when it declares none. */
static teeny_dtype value_dtype(const teeny_generic *g) {
  return g->cdt == TEENY_DT_VOID ? TEENY_DT_I32 : g->cdt;
}

/* Is v (a signed value) in the range of integer dtype dt? */
static bool int_in_range(teeny_dtype dt, int64_t v) {
  int w = teeny__dt_bits(dt);
  if (dt == TEENY_DT_BOOL)
    return v == 0 || v == 1;
  if (teeny__dt_is_signed(dt))
    return w >= 64 || (v >= -(INT64_C(1) << (w - 1)) && v < (INT64_C(1) << (w - 1)));
  return v >= 0 && (w >= 64 || (uint64_t)v < (UINT64_C(1) << w));
}

/* ---- integers ------------------------------------------------------------------ */

int teeny__const_from_int(const teeny_generic *g, int64_t v, teeny_scalar *out,
                          const char **why) {
  teeny_dtype dt = value_dtype(g);
  if (teeny__dt_is_float(dt)) {
    double d = (double)v; /* exact iff it converts back (clamped: no UB) */
    if ((int64_t)fmin(fmax(d, -0x1p63), 0x1p63 - 1024) != v ||
        teeny__scalar_round(dt, d) != d) {
      *why = "is not exactly representable in";
      return -1;
    }
    out->f = d;
    return 0;
  }
  if (!int_in_range(dt, v)) {
    *why = "does not fit in";
    return -1;
  }
  *out = teeny__scalar_int(dt, (uint64_t)v);
  return 0;
}

/* ---- text ----------------------------------------------------------------------------- */

/* strtod in the "C" locale (the decimal point is always '.'); NULL end if
 * the locale cannot be made. */
static double strtod_c(const char *s, char **end) {
  locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  if (c == (locale_t)0) {
    *end = (char *)s;
    return 0;
  }
  double v = strtod_l(s, end, c);
  freelocale(c);
  return v;
}

static int text_bool(const char *s, teeny_scalar *out) {
  if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
    out->i = 1;
  else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
    out->i = 0;
  else
    return -1;
  return 0;
}

/* An integer literal: optional sign, then decimal, 0x hex or 0 octal
 * digits, nothing else.  Unsigned dtypes take values up to UINT64_MAX. */
static int text_int(teeny_dtype dt, const char *s, teeny_scalar *out, const char **why) {
  char *end;
  errno = 0;
  bool neg = s[0] == '-';
  if (!teeny__dt_is_signed(dt) && !neg) {
    unsigned long long u = strtoull(s, &end, 0);
    if (end == s || *end || errno || s[0] == '+')
      return *why = "is not an integer of", -1;
    if (teeny__dt_bits(dt) < 64 && u >> teeny__dt_bits(dt))
      return *why = "does not fit in", -1;
    out->u = u;
    return 0;
  }
  long long v = strtoll(s, &end, 0);
  if (end == s || *end)
    return *why = "is not an integer of", -1;
  if (errno || !int_in_range(dt, v))
    return *why = "does not fit in", -1;
  *out = teeny__scalar_int(dt, (uint64_t)v);
  return 0;
}

static int text_float(teeny_dtype dt, const char *s, teeny_scalar *out, const char **why) {
  char *end;
  double v = strtod_c(s, &end);
  if (end == s || *end)
    return *why = "is not a number of", -1;
  double r = teeny__scalar_round(dt, v);
  if (isinf(r) && !isinf(v))
    return *why = "is out of the range of", -1;
  out->f = r;
  return 0;
}

int teeny__const_from_text(const teeny_generic *g, const char *s, teeny_scalar *out,
                           const char **why) {
  teeny_dtype dt = value_dtype(g);
  if (!s || !*s)
    return *why = "is empty; it must be a value of", -1;
  if (isspace((unsigned char)s[0]))
    return *why = "starts with a blank; it must be a value of", -1;
  if (dt == TEENY_DT_BOOL) {
    *why = "is not true, false, 1 or 0, as a value of";
    return text_bool(s, out);
  }
  if (teeny__dt_is_float(dt))
    return text_float(dt, s, out, why);
  return text_int(dt, s, out, why);
}

/* ---- canonical text ----------------------------------------------------------------- */

/* The shortest %.Ng of x that reads back, rounded to dt, as x. */
static const char *float_text(teeny_arena *a, teeny_dtype dt, double x) {
  if (isnan(x))
    return "nan";
  if (isinf(x))
    return x < 0 ? "-inf" : "inf";
  char buf[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, x);
    char *end;
    if (teeny__scalar_round(dt, strtod_c(buf, &end)) == x)
      break;
  }
  return teeny__arena_strdup(a, buf);
}

const char *teeny__const_text(teeny_arena *a, const teeny_generic *g, teeny_scalar v) {
  teeny_dtype dt = value_dtype(g);
  if (dt == TEENY_DT_BOOL)
    return v.i ? "true" : "false";
  if (teeny__dt_is_float(dt))
    return float_text(a, dt, v.f);
  if (teeny__dt_is_signed(dt))
    return teeny__arena_printf(a, "%lld", (long long)v.i);
  return teeny__arena_printf(a, "%llu", (unsigned long long)v.u);
}
