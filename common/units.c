/*
 * common/units.c — sizes and durations from text (see teeny/units.h).
 *
 * The number is read digit by digit (no strtod: no locale, no exponent,
 * no "inf"), the unit looked up in a small table, and the product checked
 * against 2^64.  Called a few times at start-up and once per CLI flag.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "teeny/error.h"
#include "teeny/units.h"

typedef struct unit {
  const char *name; /* a spelling, case-insensitive */
  uint64_t mul;     /* bytes or milliseconds per one */
} unit;

static const unit size_units[] = {
    {"", 1},           {"b", 1},           {"k", 1ull << 10},  {"kb", 1ull << 10},
    {"kib", 1ull << 10}, {"m", 1ull << 20},  {"mb", 1ull << 20}, {"mib", 1ull << 20},
    {"g", 1ull << 30}, {"gb", 1ull << 30}, {"gib", 1ull << 30}, {"t", 1ull << 40},
    {"tb", 1ull << 40}, {"tib", 1ull << 40}, {"p", 1ull << 50}, {"pb", 1ull << 50},
    {"pib", 1ull << 50}};

static const unit duration_units[] = {
    {"", 1000},         {"ms", 1},          {"s", 1000},        {"sec", 1000},
    {"secs", 1000},     {"second", 1000},   {"seconds", 1000},  {"m", 60000},
    {"min", 60000},     {"mins", 60000},    {"minute", 60000},  {"minutes", 60000},
    {"h", 3600000},     {"hr", 3600000},    {"hrs", 3600000},   {"hour", 3600000},
    {"hours", 3600000}, {"d", 86400000},    {"day", 86400000},  {"days", 86400000},
    {"w", 604800000},   {"week", 604800000}, {"weeks", 604800000}};

static void set_err(char *err, size_t errlen, const char *what, const char *text,
                    const char *why) {
  if (err && errlen)
    snprintf(err, errlen, "bad %s '%.64s': %s", what, text, why);
}

/* digits[.digits]: the whole part in *whole, the fraction in *frac (0 <=
 * frac < 1), *rest after it.  -1 if there is no digit or the whole part
 * overflows. */
static int read_number(const char *s, uint64_t *whole, double *frac, const char **rest) {
  uint64_t w = 0;
  const char *p = s;
  for (; isdigit((unsigned char)*p); p++) {
    unsigned d = (unsigned)(*p - '0');
    if (w > (UINT64_MAX - d) / 10)
      return -1;
    w = w * 10 + d;
  }
  double f = 0, scale = 0.1;
  bool digits = p > s;
  if (*p == '.') {
    for (p++; isdigit((unsigned char)*p); p++, scale /= 10, digits = true)
      f += (*p - '0') * scale;
  }
  if (!digits)
    return -1;
  *whole = w;
  *frac = f;
  *rest = p;
  return 0;
}

/* Shared by both parsers: number, blanks, a unit from table. */
static int parse_with(const char *text, const unit *table, size_t n, uint64_t *out,
                      char *err, size_t errlen, const char *what, const char *accepted) {
  uint64_t whole;
  double frac;
  const char *u;
  if (!text || !*text) {
    set_err(err, errlen, what, text ? text : "", "empty");
    return TEENY_E_INVAL;
  }
  if (read_number(text, &whole, &frac, &u)) {
    set_err(err, errlen, what, text, accepted);
    return TEENY_E_INVAL;
  }
  while (*u == ' ' || *u == '\t')
    u++;
  for (size_t i = 0; i < n; i++) {
    if (strcasecmp(u, table[i].name) != 0)
      continue;
    uint64_t mul = table[i].mul, part = (uint64_t)llround(frac * (double)mul);
    if (whole > UINT64_MAX / mul || whole * mul > UINT64_MAX - part) {
      set_err(err, errlen, what, text, "too large");
      return TEENY_E_INVAL;
    }
    *out = whole * mul + part;
    return 0;
  }
  set_err(err, errlen, what, text, accepted);
  return TEENY_E_INVAL;
}

int teeny_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen) {
  return parse_with(text, size_units, sizeof size_units / sizeof *size_units, bytes, err,
                    errlen, "size",
                    "want a number and B, K, M, G, T or P (powers of 1024; KB, KiB "
                    "alike), e.g. 512MiB, 1.5G, 5GB");
}

int teeny_duration_parse(const char *text, uint64_t *ms, char *err, size_t errlen) {
  return parse_with(text, duration_units, sizeof duration_units / sizeof *duration_units, ms,
                    err, errlen, "duration",
                    "want a number and ms, s, min (or m), h, d or w (plain: "
                    "seconds), e.g. 250ms, 30s, 90min, 1.5h, 1d");
}
