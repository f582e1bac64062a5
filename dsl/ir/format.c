/*
 * dsl/ir/format.c — the format strings of device_print and device_assert
 * (dsl/ir/ir.h, format.c section): one definition of what a format may
 * hold, how each argument is passed to printf, and how one element's line
 * is formatted, shared by irgen (checking formats against dtypes), the
 * interpreter (printing on the host) and the code generator (building the
 * vprintf format and argument buffer; the emulator reads it back).
 *
 * A format is printf's: text, "%%", and conversions
 * %[flags][width][.precision]C with C one of d i u x X o c (integers and
 * bool), f F e E g G a A (floats), p (pointers).  There are no length
 * modifiers: the argument's dtype gives them (64-bit integers get "ll";
 * every float is passed as a double, as C's varargs do), and no '*'.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/ir/ir.h"

static bool is_flag(char c) {
  return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_int_conv(char c) { return c && strchr("diuxXoc", c); }

static bool is_float_conv(char c) { return c && strchr("fFeEgGaA", c); }

/* One conversion starting at fmt[i] == '%'; returns its end or -1. */
static int parse_conv(const char *fmt, int i, char *conv, char *err, size_t errsz) {
  int j = i + 1;
  while (is_flag(fmt[j]))
    j++;
  for (int n = 0; is_digit(fmt[j]); n++, j++)
    if (n == 3) {
      snprintf(err, errsz, "a width of more than three digits");
      return -1;
    }
  if (fmt[j] == '.') {
    j++;
    for (int n = 0; is_digit(fmt[j]); n++, j++)
      if (n == 2) {
        snprintf(err, errsz, "a precision of more than two digits");
        return -1;
      }
  }
  char c = fmt[j];
  if (c && strchr("hlLqjzt", c)) {
    snprintf(err, errsz, "'%c' length modifiers are not needed: the value's dtype gives them "
                         "(write %%d for any integer, %%f for any float)", c);
    return -1;
  }
  if (c == '*') {
    snprintf(err, errsz, "'*' widths are not supported; write the width in the format");
    return -1;
  }
  if (c == 's') {
    snprintf(err, errsz, "%%s: kernels have no strings to print; put the text in the format");
    return -1;
  }
  if (!is_int_conv(c) && !is_float_conv(c) && c != 'p') {
    if (c)
      snprintf(err, errsz, "unknown conversion '%%%c' (d i u x X o c for integers, f e g a "
                           "for floats, p for pointers, %%%% for a percent sign)", c);
    else
      snprintf(err, errsz, "the format ends inside a conversion ('%%%%' prints a percent sign)");
    return -1;
  }
  *conv = c;
  return j + 1;
}

int teeny__fmt_parse(const char *fmt, teeny_fmt_conv *out, int max, char *err, size_t errsz) {
  int n = 0;
  for (int i = 0; fmt[i];) {
    if (fmt[i] != '%') {
      i++;
      continue;
    }
    if (fmt[i + 1] == '%') {
      i += 2;
      continue;
    }
    char c;
    int end = parse_conv(fmt, i, &c, err, errsz);
    if (end < 0)
      return -1;
    if (n == max) {
      snprintf(err, errsz, "more than %d conversions in one format", max);
      return -1;
    }
    out[n++] = (teeny_fmt_conv){i, end, c};
    i = end;
  }
  return n;
}

bool teeny__fmt_accepts(char conv, teeny_dtype dt) {
  if (conv == 'p')
    return dt == TEENY_DT_PTR;
  if (is_float_conv(conv))
    return teeny__dt_is_float(dt);
  return dt == TEENY_DT_BOOL || teeny__dt_is_int(dt);
}

teeny_fmt_arg teeny__fmt_arg(teeny_dtype dt) {
  if (dt == TEENY_DT_PTR)
    return TEENY_FMT_PTR;
  if (teeny__dt_is_float(dt))
    return TEENY_FMT_F64;
  return teeny__dt_bits(dt) > 32 ? TEENY_FMT_W64 : TEENY_FMT_W32;
}

/* fmt[c->start, c->end) with the length modifier of kind before its letter. */
static void put_conv(teeny_buf *b, const char *fmt, const teeny_fmt_conv *c, teeny_fmt_arg kind) {
  teeny__buf_append(b, fmt + c->start, (size_t)(c->end - c->start - 1));
  if (kind == TEENY_FMT_W64)
    teeny__buf_puts(b, "ll");
  teeny__buf_putc(b, c->conv);
}

void teeny__fmt_rewrite(teeny_buf *b, const char *fmt, const teeny_fmt_arg *kinds, int n) {
  teeny_fmt_conv conv[TEENY_FMT_MAX_ARGS];
  char err[160];
  int nc = teeny__fmt_parse(fmt, conv, TEENY_FMT_MAX_ARGS, err, sizeof err);
  int at = 0;
  for (int i = 0; i < nc && i < n; i++) {
    teeny__buf_append(b, fmt + at, (size_t)(conv[i].start - at));
    put_conv(b, fmt, &conv[i], kinds[i]);
    at = conv[i].end;
  }
  teeny__buf_puts(b, fmt + at);
}

/* s[from, to) of a format's text, where "%%" prints one '%'. */
static void put_text(teeny_buf *b, const char *s, int from, int to) {
  for (int k = from; k < to; k++) {
    teeny__buf_putc(b, s[k]);
    if (s[k] == '%')
      k++;
  }
}

/* The low w (32 or 64) bits of u as a signed value, without
 * implementation-defined conversions. */
static long long signed_bits(uint64_t u, int w) {
  if (w == 32) /* sign-extend bit 31, in unsigned arithmetic */
    u = ((u & 0xffffffffu) ^ 0x80000000u) - 0x80000000u;
  return u <= (uint64_t)INT64_MAX ? (long long)u : -(long long)(~u) - 1;
}

/* One value by conversion c, as C's printf takes it. */
static void put_value(teeny_buf *b, const char *fmt, const teeny_fmt_conv *c, teeny_dtype dt,
                      teeny_scalar v) {
  teeny_fmt_arg kind = teeny__fmt_arg(dt);
  teeny_buf spec;
  teeny__buf_init(&spec);
  put_conv(&spec, fmt, c, kind);
  const char *s = spec.p ? spec.p : "";
  bool sig = c->conv == 'd' || c->conv == 'i' || c->conv == 'c';
  uint64_t bits = teeny__dt_is_signed(dt) || dt == TEENY_DT_BOOL ? (uint64_t)v.i : v.u;
  switch (kind) {
  case TEENY_FMT_F64: teeny__buf_printf(b, s, v.f); break;
  case TEENY_FMT_PTR: teeny__buf_printf(b, s, (void *)(uintptr_t)v.u); break;
  case TEENY_FMT_W64:
    if (sig)
      teeny__buf_printf(b, s, signed_bits(bits, 64));
    else
      teeny__buf_printf(b, s, (unsigned long long)bits);
    break;
  default:
    if (sig)
      teeny__buf_printf(b, s, (int)signed_bits(bits, 32));
    else
      teeny__buf_printf(b, s, (unsigned)(uint32_t)bits);
    break;
  }
  teeny__buf_free(&spec);
}

void teeny__fmt_values(teeny_buf *b, const char *fmt, const teeny_dtype *dts,
                       const teeny_scalar *vals, int n) {
  teeny_fmt_conv conv[TEENY_FMT_MAX_ARGS];
  char err[160];
  int nc = teeny__fmt_parse(fmt, conv, TEENY_FMT_MAX_ARGS, err, sizeof err);
  int at = 0;
  for (int i = 0; i < nc && i < n; i++) {
    put_text(b, fmt, at, conv[i].start);
    put_value(b, fmt, &conv[i], dts[i], vals[i]);
    at = conv[i].end;
  }
  put_text(b, fmt, at, (int)strlen(fmt));
}
