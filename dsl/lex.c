/*
 * dsl/lex.c — the tokenizer of the kernel language (dsl/front.h, lex.c
 * section).  One pass over the source turns it into an array of tokens in
 * the job's arena, ending in TK_EOF.
 *
 * It owns everything byte-level: comments, the three preprocessor lines
 * the language keeps (#include, #pragma and #undef, skipped), literal syntax and values,
 * string literals (for the messages of device_print, device_assert and
 * static_assert), punctuators, and the rejection of bytes and C features
 * that have no place in a kernel (character literals, other directives,
 * non-ASCII outside comments and strings).  It stops at the first error.  Locations are 1-based lines and
 * byte columns.  Work is linear in the source length; at most
 * TEENY_MAX_TOKENS tokens are produced.
 */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/front.h"

typedef struct lexer {
  teeny_ctx *cx;       /* where errors go and tokens are allocated */
  const char *s;       /* the source text */
  size_t len;          /* its length */
  size_t i;            /* offset of the next byte to read */
  int line;            /* line of s[i], 1-based */
  size_t line_start;   /* offset of that line's first byte */
  bool bol;            /* only blanks and comments since the line began */
  teeny_token *toks;   /* tokens so far (arena) */
  int n;               /* how many */
  int cap;             /* allocated slots */
  locale_t c_locale;   /* "C" locale for strtod_l, made on first float */
} lexer;

/* Punctuators the lexer knows, longest first so that the first match is
 * the longest one.  '[', ']', '.', '->' and '...' are not in the language;
 * they are lexed so that the parser can say why. */
static const char *const puncts[] = {
    "<<=", ">>=", "...", "->", "++", "--", "+=", "-=", "*=", "/=", "%=",
    "&=",  "|=",  "^=",  "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "+",   "-",   "*",   "/",  "%",  "&",  "|",  "^",  "~",  "!",  "<",
    ">",   "=",   "?",   ":",  ";",  ",",  "(",  ")",  "{",  "}",  "[",
    "]",   ".",
};

bool teeny__tok_is(const teeny_token *tok, const char *s) {
  size_t n = strlen(s);
  return tok->kind != TK_EOF && (size_t)tok->len == n &&
         memcmp(tok->p, s, n) == 0;
}

/* ---- small helpers ----------------------------------------------------------- */

static bool is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static bool is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }

static bool is_hex_digit(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_value(int c) {
  if (is_digit(c))
    return c - '0';
  return (c | 0x20) - 'a' + 10;
}

static bool is_blank(int c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Byte at offset i, or 0 past the end (the text is not NUL-terminated). */
static int peek_at(const lexer *lx, size_t i) {
  return i < lx->len ? (unsigned char)lx->s[i] : 0;
}

static int peek(const lexer *lx) { return peek_at(lx, lx->i); }

/* Location of offset off, which must lie on the current line. */
static teeny_loc loc_of(const lexer *lx, size_t off) {
  teeny_loc l = {lx->line, (int)(off - lx->line_start) + 1};
  return l;
}

static void newline(lexer *lx) {
  lx->line++;
  lx->line_start = lx->i;
  lx->bol = true;
}

/* ---- tokens ------------------------------------------------------------------ */

/* Append a token of kind covering s[start, lx->i).  Returns NULL (after
 * reporting) past TEENY_MAX_TOKENS or when memory runs out.  One slot is
 * always kept for the TK_EOF token. */
static teeny_token *push(lexer *lx, teeny_tok_kind kind, size_t start) {
  if (kind != TK_EOF && lx->n >= TEENY_MAX_TOKENS - 1) {
    teeny__error_at(lx->cx, loc_of(lx, start), "too many tokens (limit %d)",
                    TEENY_MAX_TOKENS);
    return NULL;
  }
  if (lx->n == lx->cap) {
    int cap = lx->cap ? lx->cap * 2 : 256;
    teeny_token *t = teeny__arena_realloc(lx->cx->arena, lx->toks,
                                          sizeof *t * (size_t)lx->cap,
                                          sizeof *t * (size_t)cap);
    if (!t) {
      teeny__error_at(lx->cx, loc_of(lx, start), "out of memory");
      return NULL;
    }
    lx->toks = t;
    lx->cap = cap;
  }
  teeny_token *t = &lx->toks[lx->n++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->p = lx->s + start;
  t->len = (int)(lx->i - start);
  t->loc = loc_of(lx, start);
  t->lit_dt = TEENY_DT_VOID;
  lx->bol = false;
  return t;
}

/* ---- blanks, comments, directives ------------------------------------------------ */

/* Skip a block comment starting at s[i] == '/' && s[i+1] == '*'. */
static bool block_comment(lexer *lx) {
  teeny_loc start = loc_of(lx, lx->i);
  lx->i += 2;
  for (;;) {
    if (lx->i >= lx->len) {
      teeny__error_at(lx->cx, start, "unterminated comment ('/*' without '*/')");
      return false;
    }
    if (lx->s[lx->i] == '*' && peek_at(lx, lx->i + 1) == '/') {
      lx->i += 2;
      return true;
    }
    bool nl = lx->s[lx->i] == '\n';
    lx->i++;
    if (nl) {
      bool bol = lx->bol;
      newline(lx);
      lx->bol = bol; /* a comment does not start a directive line */
    }
  }
}

/* Skip to the end of the line (not past its newline), honouring
 * backslash-newline continuations as C does for directives. */
static void skip_line(lexer *lx) {
  while (lx->i < lx->len && lx->s[lx->i] != '\n') {
    if (lx->s[lx->i] == '\\' && peek_at(lx, lx->i + 1) == '\n') {
      lx->i += 2;
      newline(lx);
      continue;
    }
    lx->i++;
  }
}

/* A line whose first non-blank byte is '#': #include, #pragma and #undef
 * lines are skipped (#undef lets a helper take the name of one of
 * teeny/dsl.h's builtin macros on the host; here user names shadow
 * builtins anyway); any other directive is an error (there is no
 * preprocessor). */
static bool directive(lexer *lx) {
  teeny_loc at = loc_of(lx, lx->i);
  lx->i++;
  while (lx->i < lx->len && is_blank(lx->s[lx->i]))
    lx->i++;
  size_t start = lx->i;
  while (lx->i < lx->len && is_ident_char(lx->s[lx->i]))
    lx->i++;
  size_t n = lx->i - start;
  if ((n == 7 && memcmp(lx->s + start, "include", 7) == 0) ||
      (n == 6 && memcmp(lx->s + start, "pragma", 6) == 0) ||
      (n == 5 && memcmp(lx->s + start, "undef", 5) == 0)) {
    skip_line(lx);
    return true;
  }
  teeny__error_at(lx->cx, at,
                  "preprocessor directive '#%.*s' is not supported: teenyc "
                  "has no preprocessor (only #include, #pragma and #undef "
                  "lines are allowed, and skipped)",
                  (int)(n > 32 ? 32 : n), lx->s + start);
  return false;
}

/* Skip blanks, newlines, comments and directive lines.  Returns false after
 * reporting an error. */
static bool skip_space(lexer *lx) {
  while (lx->i < lx->len) {
    int c = peek(lx);
    if (c == '\n') {
      lx->i++;
      newline(lx);
    } else if (is_blank(c)) {
      lx->i++;
    } else if (c == '/' && peek_at(lx, lx->i + 1) == '/') {
      skip_line(lx);
    } else if (c == '/' && peek_at(lx, lx->i + 1) == '*') {
      if (!block_comment(lx))
        return false;
    } else if (c == '#' && lx->bol) {
      if (!directive(lx))
        return false;
    } else {
      return true;
    }
  }
  return true;
}

/* ---- numbers ------------------------------------------------------------------------ */

/* The suffix after a literal's digits: letters, digits, '_' and '.'. */
static size_t suffix_len(const lexer *lx, size_t from) {
  size_t j = from;
  while (j < lx->len && (is_ident_char(lx->s[j]) || lx->s[j] == '.'))
    j++;
  return j - from;
}

/* Integer suffixes: u -> u32, l/ll -> i64, ul/ull/lu/llu -> u64.  Returns
 * false if text[0, n) is none of them. */
static bool int_suffix(const char *p, size_t n, teeny_dtype *dt) {
  bool u = false;
  int l = 0;
  for (size_t k = 0; k < n; k++) {
    char c = p[k];
    if ((c == 'u' || c == 'U') && !u) {
      u = true;
    } else if ((c == 'l' || c == 'L') && l == 0) {
      l = (k + 1 < n && p[k + 1] == c) ? 2 : 1;
      k += (size_t)(l - 1);
    } else {
      return false;
    }
  }
  *dt = u ? (l ? TEENY_DT_U64 : TEENY_DT_U32) : (l ? TEENY_DT_I64 : TEENY_DT_VOID);
  return true;
}

static bool bad_suffix(lexer *lx, size_t start, size_t at, const char *what) {
  size_t n = suffix_len(lx, at);
  teeny__error_at(lx->cx, loc_of(lx, start),
                  "invalid suffix '%.*s' on %s literal", (int)(n > 32 ? 32 : n),
                  lx->s + at, what);
  return false;
}

/* Check an integer literal's value against the dtype its suffix gives. */
static bool int_range(lexer *lx, size_t start, uint64_t v, bool overflow,
                      teeny_dtype dt) {
  teeny_loc at = loc_of(lx, start);
  if (overflow) {
    teeny__error_at(lx->cx, at, "integer literal too large (more than 64 bits)");
    return false;
  }
  if ((dt == TEENY_DT_VOID || dt == TEENY_DT_I64) && v > (uint64_t)INT64_MAX) {
    teeny__error_at(lx->cx, at,
                    "integer literal too large (above INT64_MAX%s); use a "
                    "'ul' suffix for a u64",
                    dt == TEENY_DT_I64 ? " for i64" : "");
    return false;
  }
  if (dt == TEENY_DT_U32 && v > UINT32_MAX) {
    teeny__error_at(lx->cx, at,
                    "integer literal too large for u32; use a 'ul' suffix");
    return false;
  }
  return true;
}

/* An integer literal: digits in base from s[from] up to lx->i (already
 * scanned), then its suffix. */
static bool int_literal(lexer *lx, size_t start, size_t from, int base) {
  uint64_t v = 0;
  bool overflow = false;
  for (size_t k = from; k < lx->i; k++) {
    int d = hex_value((unsigned char)lx->s[k]);
    if (d >= base) {
      teeny__error_at(lx->cx, loc_of(lx, k), "invalid digit '%c' in octal literal",
                      lx->s[k]);
      return false;
    }
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
      overflow = true;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  size_t sn = suffix_len(lx, lx->i);
  teeny_dtype dt;
  if (!int_suffix(lx->s + lx->i, sn, &dt))
    return bad_suffix(lx, start, lx->i, "integer");
  lx->i += sn;
  if (!int_range(lx, start, v, overflow, dt))
    return false;
  teeny_token *t = push(lx, TK_INT, start);
  if (!t)
    return false;
  t->ival = v;
  t->lit_dt = dt;
  return true;
}

/* Scan "[eEpP][+-]digits" at lx->i if present.  Returns false (after
 * reporting) when the exponent has no digits. */
static bool exponent(lexer *lx, size_t start, char e1, char e2) {
  int c = peek(lx);
  if (c != e1 && c != e2)
    return true;
  size_t j = lx->i + 1;
  if (peek_at(lx, j) == '+' || peek_at(lx, j) == '-')
    j++;
  if (!is_digit(peek_at(lx, j))) {
    teeny__error_at(lx->cx, loc_of(lx, start),
                    "exponent of floating literal has no digits");
    return false;
  }
  while (is_digit(peek_at(lx, j)))
    j++;
  lx->i = j;
  return true;
}

/* Convert s[start, lx->i) with strtod in the "C" locale, read the f/F
 * suffix and push the token. */
static bool float_literal(lexer *lx, size_t start) {
  size_t end = lx->i;
  size_t sn = suffix_len(lx, end);
  teeny_dtype dt = TEENY_DT_VOID;
  if (sn == 1 && (lx->s[end] == 'f' || lx->s[end] == 'F'))
    dt = TEENY_DT_F32;
  else if (sn != 0)
    return bad_suffix(lx, start, end, "floating");
  char *text = teeny__arena_strndup(lx->cx->arena, lx->s + start, end - start);
  if (!text) {
    teeny__error_at(lx->cx, loc_of(lx, start), "out of memory");
    return false;
  }
  if (lx->c_locale == (locale_t)0)
    lx->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  double v = lx->c_locale != (locale_t)0 ? strtod_l(text, NULL, lx->c_locale)
                                         : strtod(text, NULL);
  if (isinf(v)) {
    teeny__error_at(lx->cx, loc_of(lx, start),
                    "floating literal out of range (too large for f64)");
    return false;
  }
  lx->i = end + sn;
  teeny_token *t = push(lx, TK_FLOAT, start);
  if (!t)
    return false;
  t->fval = v;
  t->lit_dt = dt;
  return true;
}

/* 0x...: a hex integer, or a hex float (0x1.8p3) which needs its 'p'. */
static bool hex_number(lexer *lx, size_t start) {
  lx->i += 2;
  size_t digits = lx->i;
  while (is_hex_digit(peek(lx)))
    lx->i++;
  bool ndigits = lx->i > digits;
  if (peek(lx) != '.' && peek(lx) != 'p' && peek(lx) != 'P') {
    if (!ndigits) {
      teeny__error_at(lx->cx, loc_of(lx, start), "hex literal has no digits");
      return false;
    }
    return int_literal(lx, start, digits, 16);
  }
  if (peek(lx) == '.') {
    lx->i++;
    while (is_hex_digit(peek(lx))) {
      lx->i++;
      ndigits = true;
    }
  }
  if (!ndigits || (peek(lx) != 'p' && peek(lx) != 'P')) {
    teeny__error_at(lx->cx, loc_of(lx, start),
                    "hex floating literal needs digits and a 'p' exponent "
                    "(0x1.8p3)");
    return false;
  }
  return exponent(lx, start, 'p', 'P') && float_literal(lx, start);
}

/* A number starting at a digit or at '.' followed by a digit. */
static bool number(lexer *lx) {
  size_t start = lx->i;
  if (peek(lx) == '0' && (peek_at(lx, start + 1) | 0x20) == 'x')
    return hex_number(lx, start);
  while (is_digit(peek(lx)))
    lx->i++;
  int c = peek(lx);
  if (c == '.' || c == 'e' || c == 'E') {
    if (c == '.') {
      lx->i++;
      while (is_digit(peek(lx)))
        lx->i++;
    }
    return exponent(lx, start, 'e', 'E') && float_literal(lx, start);
  }
  bool octal = lx->s[start] == '0' && lx->i - start > 1;
  return int_literal(lx, start, octal ? start + 1 : start, octal ? 8 : 10);
}

/* ---- names, punctuators, everything else ------------------------------------------- */

static bool ident(lexer *lx) {
  size_t start = lx->i;
  while (lx->i < lx->len && is_ident_char(lx->s[lx->i]))
    lx->i++;
  if (lx->i - start > TEENY_MAX_NAME_LEN) {
    teeny__error_at(lx->cx, loc_of(lx, start),
                    "name '%.20s...' is too long (%zu bytes; limit %d)",
                    lx->s + start, lx->i - start, TEENY_MAX_NAME_LEN);
    return false;
  }
  return push(lx, TK_IDENT, start) != NULL;
}

/* The punctuator at lx->i: 1 if pushed, 0 if there is none here, -1 after
 * an error. */
static int punct(lexer *lx) {
  size_t start = lx->i;
  for (size_t k = 0; k < TEENY_ARRAY_LEN(puncts); k++) {
    size_t n = strlen(puncts[k]);
    if (lx->len - start >= n && memcmp(lx->s + start, puncts[k], n) == 0) {
      lx->i += n;
      return push(lx, TK_PUNCT, start) ? 1 : -1;
    }
  }
  return 0;
}

/* ---- strings ------------------------------------------------------------------------- */

/* The byte an escape after '\\' stands for (lx->i at the byte after the
 * backslash), advancing past it; -1 after reporting an unknown escape. */
static int escape(lexer *lx) {
  int c = peek(lx);
  lx->i++;
  switch (c) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case '0': return 0;
  case '\\': case '"': case '\'': return c;
  case 'x':
    if (is_hex_digit(peek(lx)) && is_hex_digit(peek_at(lx, lx->i + 1))) {
      int v = hex_value(peek(lx)) * 16 + hex_value(peek_at(lx, lx->i + 1));
      lx->i += 2;
      return v;
    }
    break;
  default:
    break;
  }
  teeny__error_at(lx->cx, loc_of(lx, lx->i - 2),
                  "unknown escape '\\%c' in a string literal (use \\n \\t \\r \\0 "
                  "\\\\ \\\" \\' or \\xHH)", c > 0x20 && c < 0x7f ? c : '?');
  return -1;
}

/* "..." on one line, escapes decoded; no NUL byte may end up inside (the
 * message would be cut short on the GPU). */
static bool string_literal(lexer *lx) {
  size_t start = lx->i;
  char *buf = teeny__arena_alloc(lx->cx->arena, TEENY_MAX_STRING + 1);
  int n = 0;
  if (!buf) {
    teeny__error_at(lx->cx, loc_of(lx, start), "out of memory");
    return false;
  }
  lx->i++;
  for (;;) {
    int c = peek(lx);
    if (lx->i >= lx->len || c == '\n') {
      teeny__error_at(lx->cx, loc_of(lx, start),
                      "unterminated string literal (a string ends on its line)");
      return false;
    }
    lx->i++;
    if (c == '"')
      break;
    if (c == '\\' && (c = escape(lx)) < 0)
      return false;
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f) {
      teeny__error_at(lx->cx, loc_of(lx, start), "string literals may not hold byte 0x%02x",
                      (unsigned)c);
      return false;
    }
    if (n == TEENY_MAX_STRING) {
      teeny__error_at(lx->cx, loc_of(lx, start), "string literal too long (limit %d bytes)",
                      TEENY_MAX_STRING);
      return false;
    }
    buf[n++] = (char)c;
  }
  buf[n] = '\0';
  teeny_token *t = push(lx, TK_STRING, start);
  if (!t)
    return false;
  t->sval = buf;
  t->slen = n;
  return true;
}

/* A byte that starts no token: say what it is and why it is not allowed. */
static bool bad_char(lexer *lx) {
  int c = peek(lx);
  teeny_loc at = loc_of(lx, lx->i);
  if (c == '\'')
    teeny__error_at(lx->cx, at,
                    "character literals are not part of the kernel language");
  else if (c == '#')
    teeny__error_at(lx->cx, at,
                    "unexpected '#': preprocessor lines must start a line, "
                    "and only #include, #pragma and #undef are allowed");
  else if (c > 0x20 && c < 0x7f)
    teeny__error_at(lx->cx, at, "unexpected character '%c' in kernel source", c);
  else
    teeny__error_at(lx->cx, at,
                    "invalid character (byte 0x%02x): kernel sources are "
                    "printable ASCII outside comments",
                    (unsigned)c);
  return false;
}

static bool next_token(lexer *lx) {
  int c = peek(lx);
  if (is_ident_start(c))
    return ident(lx);
  if (is_digit(c) || (c == '.' && is_digit(peek_at(lx, lx->i + 1))))
    return number(lx);
  if (c == '"')
    return string_literal(lx);
  int r = punct(lx);
  if (r != 0)
    return r > 0;
  return bad_char(lx);
}

teeny_token *teeny__lex(teeny_ctx *cx, int *n) {
  lexer lx;
  memset(&lx, 0, sizeof lx);
  lx.cx = cx;
  lx.s = cx->text ? cx->text : "";
  lx.len = cx->text ? cx->len : 0;
  lx.line = 1;
  lx.bol = true;
  teeny_token *out = NULL;
  if (lx.len > TEENY_MAX_SOURCE_BYTES) {
    teeny_loc none = {0, 0};
    teeny__error_at(cx, none, "kernel source too large (%zu bytes; limit %u)",
                    lx.len, TEENY_MAX_SOURCE_BYTES);
    goto done;
  }
  for (;;) {
    if (!skip_space(&lx))
      goto done;
    if (lx.i >= lx.len)
      break;
    if (!next_token(&lx))
      goto done;
  }
  if (!push(&lx, TK_EOF, lx.i))
    goto done;
  *n = lx.n;
  out = lx.toks;
done:
  if (lx.c_locale != (locale_t)0)
    freelocale(lx.c_locale);
  return out;
}
