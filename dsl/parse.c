/*
 * dsl/parse.c — recursive descent from tokens to the AST (dsl/front.h,
 * parse.c section).
 *
 * Each function reads the grammar rule written above it, starting at
 * ps->tok, and leaves ps->tok on the first token after what it read.  All
 * nodes live in the job's arena.  The first syntax error is reported and
 * unwinds to teeny__parse with longjmp (there is nothing to free: it is all
 * in the arena), which then returns NULL.
 *
 * Nesting of statements, expressions and types is counted against
 * TEENY_MAX_NEST, and every operator of a left-associative chain counts as
 * one level, so the depth of the tree is bounded: no input exhausts the
 * stack here or in the later passes, which recurse over this tree.
 *
 * Like C with typedefs, the parser knows which names are types: builtin
 * dtypes, their C spellings (int, float, double, _Bool) and dtype generics
 * declared by TEENY_DTYPE before the point of use.  That tells declarations
 * from expression statements and casts from parenthesised expressions.
 * Everything else about names belongs to resolve.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dsl/front.h"

typedef struct parser {
  teeny_ctx *cx;         /* errors, arena */
  teeny_token *tok;      /* the current token */
  teeny_token *toks;     /* all tokens (for look-ahead on error paths) */
  int ntoks;             /* how many, TK_EOF included */
  teeny_program *prog;   /* being built */
  int depth;             /* current nesting, limited to TEENY_MAX_NEST */
  int gcap, fcap, bcap;  /* allocated slots of prog's arrays */
  int scap;              /* ... and of prog->structs */
  jmp_buf fail;          /* the first error longjmps here */
} parser;

/* ---- name tables ------------------------------------------------------------ */

/* Every spelling of a builtin dtype. */
static const struct {
  const char *name; /* as written */
  teeny_dtype dt;   /* what it means */
} dtype_names[] = {
    {"bool", TEENY_DT_BOOL}, {"_Bool", TEENY_DT_BOOL}, {"i8", TEENY_DT_I8},
    {"i16", TEENY_DT_I16},   {"i32", TEENY_DT_I32},    {"i64", TEENY_DT_I64},
    {"u8", TEENY_DT_U8},     {"u16", TEENY_DT_U16},    {"u32", TEENY_DT_U32},
    {"u64", TEENY_DT_U64},   {"f16", TEENY_DT_F16},    {"bf16", TEENY_DT_BF16},
    {"f32", TEENY_DT_F32},   {"f64", TEENY_DT_F64},    {"int", TEENY_DT_I32},
    {"float", TEENY_DT_F32}, {"double", TEENY_DT_F64},
    {"f8e4m3", TEENY_DT_F8E4M3}, {"f8e5m2", TEENY_DT_F8E5M2},
};

/* Words of the language that cannot name anything. */
static const char *const keywords[] = {
    "void",        "const",        "static",         "inline",
    "tile",        "ptr",          "if",             "else",
    "tensor_desc", "block_ptr",
    "for",         "while",        "do",             "return",
    "break",       "continue",     "true",           "false",
    "sizeof",      "struct",       "typedef",
    "TEENY_DTYPE", "TEENY_CONST",  "TEENY_KERNEL",   "TEENY_BACKWARD",
    "TEENY_BIND",
};

/* C words that are not part of the language, with what to do instead. */
static const struct {
  const char *word; /* the C keyword */
  const char *hint; /* what to write instead */
} unsupported[] = {
    {"switch", "use if/else"},
    {"case", "there is no switch; use if/else"},
    {"default", "there is no switch; use if/else"},
    {"goto", "kernels use structured control flow"},
    {"union", "use a struct: its fields are separate values"},
    {"enum", "use TEENY_CONST or literals"},
    {"char", "use i8 or u8"},
    {"short", "use i16 or u16"},
    {"long", "use i64 or u64"},
    {"signed", "use i8, i16, i32 or i64"},
    {"unsigned", "use u8, u16, u32 or u64"},
    {"extern", "use TEENY_CONST for a value bound per request"},
    {"register", "remove it"},
    {"auto", "remove it"},
    {"volatile", "remove it"},
    {"restrict", "remove it"},
    {"_Atomic", "use the atomic_* builtins"},
    {"_Alignas", "remove it"},
    {"_Alignof", "remove it"},
    {"_Complex", "use real dtypes"},
    {"_Imaginary", "use real dtypes"},
    {"_Generic", "use TEENY_DTYPE generics"},
    {"_Noreturn", "remove it"},
    {"_Static_assert", "write static_assert(condition, \"message\")"},
    {"_Thread_local", "remove it"},
};

/* Binary operators, C's precedence levels (higher binds tighter). */
static const struct {
  const char *op;     /* spelling */
  int prec;           /* level */
  teeny_op_kind kind; /* AST operator */
} binops[] = {
    {"||", 1, OP_LOGOR},  {"&&", 2, OP_LOGAND}, {"|", 3, OP_BITOR},
    {"^", 4, OP_BITXOR},  {"&", 5, OP_BITAND},  {"==", 6, OP_EQ},
    {"!=", 6, OP_NE},     {"<", 7, OP_LT},      {"<=", 7, OP_LE},
    {">", 7, OP_GT},      {">=", 7, OP_GE},     {"<<", 8, OP_SHL},
    {">>", 8, OP_SHR},    {"+", 9, OP_ADD},     {"-", 9, OP_SUB},
    {"*", 10, OP_MUL},    {"/", 10, OP_DIV},    {"%", 10, OP_REM},
};

/* Assignment operators; OP_NONE is plain '='. */
static const struct {
  const char *op;     /* spelling */
  teeny_op_kind kind; /* combined operator */
} assignops[] = {
    {"=", OP_NONE},     {"+=", OP_ADD},     {"-=", OP_SUB},
    {"*=", OP_MUL},     {"/=", OP_DIV},     {"%=", OP_REM},
    {"<<=", OP_SHL},    {">>=", OP_SHR},    {"&=", OP_BITAND},
    {"|=", OP_BITOR},   {"^=", OP_BITXOR},
};

/* ---- errors, memory, tokens -------------------------------------------------- */

static _Noreturn void fail_at(parser *ps, teeny_loc loc, const char *fmt, ...)
    TEENY_PRINTF(3, 4);

static void fail_at(parser *ps, teeny_loc loc, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  teeny__error_at(ps->cx, loc, "%s", msg);
  longjmp(ps->fail, 1);
}

static void *alloc(parser *ps, size_t n) {
  void *p = teeny__arena_alloc(ps->cx->arena, n);
  if (!p)
    fail_at(ps, ps->tok->loc, "out of memory");
  return p;
}

/* v (n elements of size bytes, *cap allocated) with room for one more. */
static void *grow(parser *ps, void *v, int n, int *cap, size_t size) {
  if (n < *cap)
    return v;
  int ncap = *cap ? *cap * 2 : 8;
  void *nv = teeny__arena_realloc(ps->cx->arena, v, size * (size_t)*cap,
                                  size * (size_t)ncap);
  if (!nv)
    fail_at(ps, ps->tok->loc, "out of memory");
  *cap = ncap;
  return nv;
}

static char *tok_str(parser *ps, const teeny_token *t) {
  char *s = teeny__arena_strndup(ps->cx->arena, t->p, (size_t)t->len);
  if (!s)
    fail_at(ps, t->loc, "out of memory");
  return s;
}

/* "'x'" or "end of file", for "found ..." in messages. */
static const char *desc(parser *ps, const teeny_token *t) {
  const char *s;
  if (t->kind == TK_EOF)
    return "end of file";
  if (t->len > 40)
    s = teeny__arena_printf(ps->cx->arena, "'%.37s...'", t->p);
  else
    s = teeny__arena_printf(ps->cx->arena, "'%.*s'", t->len, t->p);
  return s ? s : "a token";
}

static bool is(const parser *ps, const char *s) { return teeny__tok_is(ps->tok, s); }

static bool next_is(const parser *ps, const char *s) {
  return ps->tok->kind != TK_EOF && teeny__tok_is(ps->tok + 1, s);
}

static teeny_token *advance(parser *ps) {
  teeny_token *t = ps->tok;
  if (t->kind != TK_EOF)
    ps->tok++;
  return t;
}

static bool consume(parser *ps, const char *s) {
  if (!is(ps, s))
    return false;
  advance(ps);
  return true;
}

/* The token s, or an error "expected 's' <where>, found ...". */
static teeny_token *expect(parser *ps, const char *s, const char *where) {
  if (!is(ps, s))
    fail_at(ps, ps->tok->loc, "expected '%s' %s, found %s", s, where,
            desc(ps, ps->tok));
  return advance(ps);
}

static teeny_token *expect_ident(parser *ps, const char *what) {
  if (ps->tok->kind != TK_IDENT)
    fail_at(ps, ps->tok->loc, "expected %s, found %s", what, desc(ps, ps->tok));
  return advance(ps);
}

static void enter(parser *ps) {
  if (++ps->depth > TEENY_MAX_NEST)
    fail_at(ps, ps->tok->loc, "nesting too deep (limit %d)", TEENY_MAX_NEST);
}

static void leave(parser *ps) { ps->depth--; }

/* ---- classifying names ------------------------------------------------------ */

static bool tok_eq(const teeny_token *t, const char *s) {
  return t->kind == TK_IDENT && teeny__tok_is(t, s);
}

/* The builtin dtype t spells, or VOID. */
static teeny_dtype builtin_dtype(const teeny_token *t) {
  for (size_t i = 0; i < TEENY_ARRAY_LEN(dtype_names); i++)
    if (tok_eq(t, dtype_names[i].name))
      return dtype_names[i].dt;
  return TEENY_DT_VOID;
}

static int unsupported_index(const teeny_token *t) {
  for (size_t i = 0; i < TEENY_ARRAY_LEN(unsupported); i++)
    if (tok_eq(t, unsupported[i].word))
      return (int)i;
  return -1;
}

static bool is_keyword(const teeny_token *t) {
  for (size_t i = 0; i < TEENY_ARRAY_LEN(keywords); i++)
    if (tok_eq(t, keywords[i]))
      return true;
  return unsupported_index(t) >= 0;
}

/* Index of the generic named by t, declared so far, or -1. */
static int generic_of(const parser *ps, const teeny_token *t) {
  if (t->kind != TK_IDENT)
    return -1;
  for (int i = 0; i < ps->prog->ngenerics; i++)
    if (teeny__tok_is(t, ps->prog->generics[i].name))
      return i;
  return -1;
}

static int dtype_generic_of(const parser *ps, const teeny_token *t) {
  int g = generic_of(ps, t);
  return g >= 0 && ps->prog->generics[g].is_dtype ? g : -1;
}

/* Index of the struct typedef'd as t's name, or -1. */
static int struct_of(const parser *ps, const teeny_token *t) {
  if (t->kind != TK_IDENT)
    return -1;
  for (int i = 0; i < ps->prog->nstructs; i++)
    if (teeny__tok_is(t, ps->prog->structs[i].name))
      return i;
  return -1;
}

/* Does t start a type? */
static bool is_type_start(const parser *ps, const teeny_token *t) {
  return tok_eq(t, "const") || tok_eq(t, "void") || tok_eq(t, "tile") ||
         tok_eq(t, "ptr") || tok_eq(t, "struct") || tok_eq(t, "tensor_desc") ||
         tok_eq(t, "block_ptr") || builtin_dtype(t) != TEENY_DT_VOID ||
         dtype_generic_of(ps, t) >= 0 || struct_of(ps, t) >= 0;
}

/* If t is a C keyword the language lacks, say so and what to use. */
static void reject_unsupported(parser *ps, const teeny_token *t) {
  int u = unsupported_index(t);
  if (u >= 0)
    fail_at(ps, t->loc, "'%s' is not supported in kernels; %s",
            unsupported[u].word, unsupported[u].hint);
}

/* A name being declared (generic, function, parameter, variable) must not
 * be a keyword, a dtype or one of the constants teeny/dsl.h defines
 * (INFINITY, NAN); variables and parameters must not be a dtype generic
 * either (it would be read as a type). */
static void check_new_name(parser *ps, const teeny_token *t, const char *what) {
  if (builtin_dtype(t) != TEENY_DT_VOID)
    fail_at(ps, t->loc, "'%.*s' is a dtype name and cannot name a %s", t->len,
            t->p, what);
  if (is_keyword(t) || tok_eq(t, "INFINITY") || tok_eq(t, "NAN"))
    fail_at(ps, t->loc, "'%.*s' is a reserved word and cannot name a %s",
            t->len, t->p, what);
  if (strcmp(what, "generic") != 0 && strcmp(what, "function") != 0 &&
      dtype_generic_of(ps, t) >= 0)
    fail_at(ps, t->loc, "'%.*s' is a dtype generic and cannot name a %s",
            t->len, t->p, what);
  if (struct_of(ps, t) >= 0)
    fail_at(ps, t->loc, "'%.*s' is a struct type and cannot name a %s", t->len, t->p, what);
}

/* Is t's name declared by a TEENY_DTYPE later in the file? */
static bool dtype_declared_later(const parser *ps, const teeny_token *t) {
  const teeny_token *end = ps->toks + ps->ntoks;
  for (const teeny_token *k = ps->tok; k + 2 < end; k++)
    if (tok_eq(k, "TEENY_DTYPE") && teeny__tok_is(k + 1, "(") &&
        k[2].len == t->len && memcmp(k[2].p, t->p, (size_t)t->len) == 0)
      return true;
  return false;
}

/* t was expected to start a type and does not: explain. */
static _Noreturn void not_a_type(parser *ps, const teeny_token *t) {
  if (t->kind != TK_IDENT)
    fail_at(ps, t->loc, "expected a type, found %s", desc(ps, t));
  reject_unsupported(ps, t);
  if (generic_of(ps, t) >= 0)
    fail_at(ps, t->loc, "'%.*s' is a constant (TEENY_CONST), not a type",
            t->len, t->p);
  if (dtype_declared_later(ps, t))
    fail_at(ps, t->loc,
            "'%.*s' is used before its TEENY_DTYPE(...) declaration; declare "
            "generics above their first use",
            t->len, t->p);
  if (is_keyword(t))
    fail_at(ps, t->loc, "expected a type, found %s", desc(ps, t));
  fail_at(ps, t->loc, "unknown type name '%.*s'", t->len, t->p);
}

/* ---- types ------------------------------------------------------------------ */

static teeny_tyspec *new_tyspec(parser *ps, teeny_loc loc) {
  teeny_tyspec *ts = alloc(ps, sizeof *ts);
  ts->loc = loc;
  ts->dt = TEENY_DT_VOID;
  ts->generic = -1;
  ts->strct = -1;
  return ts;
}

static teeny_tyspec *copy_tyspec(parser *ps, const teeny_tyspec *from, teeny_loc loc) {
  teeny_tyspec *ts = alloc(ps, sizeof *ts);
  *ts = *from;
  ts->loc = loc;
  return ts;
}

/* "f32", "ptr(D)", "tile(ptr(f16))", "void": a type as messages show it. */
static const char *tyspec_str(parser *ps, const teeny_tyspec *ts) {
  if (ts->is_void)
    return "void";
  const char *s = ts->base;
  if (ts->is_ptr)
    s = teeny__arena_printf(ps->cx->arena, "ptr(%s)", s);
  if (s && ts->is_tile)
    s = teeny__arena_printf(ps->cx->arena, "tile(%s)", s);
  if (!s)
    fail_at(ps, ts->loc, "out of memory");
  return s;
}

static teeny_tyspec *type(parser *ps);
static teeny_tyspec *struct_type(parser *ps);

/* ts made a pointer by a '*' or ptr(...) at loc. */
static teeny_tyspec *make_ptr(parser *ps, const teeny_tyspec *ts, teeny_loc loc) {
  if (ts->is_void)
    fail_at(ps, loc, "pointers to void are not supported: a pointer needs an "
                     "element dtype");
  if (ts->is_ptr)
    fail_at(ps, loc, "pointers to pointers are not supported");
  if (ts->is_tile)
    fail_at(ps, loc, "pointers to tiles are not supported; a tile of "
                     "pointers is tile(ptr(T))");
  if (ts->strct >= 0)
    fail_at(ps, loc, "pointers to structs are not supported: a struct is a value "
                     "(its fields may be pointers)");
  teeny_tyspec *p = copy_tyspec(ps, ts, ts->loc);
  p->is_ptr = true;
  return p;
}

/* tile-type = "tile" "(" type ")" */
static teeny_tyspec *tile_type(parser *ps) {
  teeny_token *kw = advance(ps);
  expect(ps, "(", "after 'tile'");
  enter(ps);
  teeny_tyspec *inner = type(ps);
  leave(ps);
  if (inner->is_tile)
    fail_at(ps, inner->loc, "tile(tile(...)) is not allowed: a tile's shape "
                            "is inferred, so a 2-D tile is still tile(T)");
  if (inner->is_void)
    fail_at(ps, inner->loc, "tile(void) is not a type: a tile needs an "
                            "element dtype");
  expect(ps, ")", "to close 'tile('");
  teeny_tyspec *ts = copy_tyspec(ps, inner, kw->loc);
  ts->is_tile = true;
  return ts;
}

/* ptr-type = "ptr" "(" type ")" */
static teeny_tyspec *ptr_type(parser *ps) {
  teeny_token *kw = advance(ps);
  expect(ps, "(", "after 'ptr'");
  enter(ps);
  teeny_tyspec *inner = type(ps);
  leave(ps);
  if (inner->is_tile)
    fail_at(ps, inner->loc, "ptr(tile(...)) is not allowed; a tile of "
                            "pointers is tile(ptr(T))");
  teeny_tyspec *ts = make_ptr(ps, inner, inner->loc);
  ts->loc = kw->loc;
  expect(ps, ")", "to close 'ptr('");
  return ts;
}

/* struct-type = struct-name | "struct" tag */
static teeny_tyspec *struct_type(parser *ps) {
  teeny_token *t = advance(ps);
  int k = struct_of(ps, t);
  if (k < 0) { /* "struct" tag */
    teeny_token *tag = expect_ident(ps, "a struct tag after 'struct'");
    char name[TEENY_MAX_NAME_LEN + 8];
    snprintf(name, sizeof name, "struct %.*s", tag->len, tag->p);
    for (int i = 0; i < ps->prog->nstructs && k < 0; i++)
      if (strcmp(ps->prog->structs[i].name, name) == 0)
        k = i;
    if (k < 0)
      fail_at(ps, tag->loc, "unknown struct '%.*s' (a struct must be defined before its "
                            "use, and cannot contain itself)", tag->len, tag->p);
  }
  teeny_tyspec *ts = new_tyspec(ps, t->loc);
  ts->strct = k;
  ts->base = ps->prog->structs[k].name;
  return ts;
}

/* ---- descriptors ---- */

static void struct_leaves(parser *ps, teeny_struct *st);

static teeny_tyspec *scalar_tyspec(parser *ps, teeny_dtype dt, teeny_loc loc) {
  teeny_tyspec *ts = new_tyspec(ps, loc);
  ts->dt = dt;
  ts->base = teeny_dtype_name(dt);
  return ts;
}

/* The struct of tensor_desc(elem) or block_ptr(elem), made on first use:
 * fields base; shape0..; stride0..; a block pointer's off0.. */
static int desc_struct(parser *ps, teeny_desc_kind kind, const teeny_tyspec *elem, teeny_loc loc) {
  const char *name = teeny__arena_printf(ps->cx->arena, "%s(%s)",
                                         kind == TEENY_DESC_BLOCK ? "block_ptr" : "tensor_desc",
                                         elem->base);
  for (int i = 0; i < ps->prog->nstructs; i++)
    if (strcmp(ps->prog->structs[i].name, name) == 0)
      return i;
  teeny_struct st;
  memset(&st, 0, sizeof st);
  st.name = name;
  st.loc = loc;
  st.desc = kind;
  int groups = kind == TEENY_DESC_BLOCK ? 3 : 2, cap = 0;
  static const char *const part[] = {"shape", "stride", "off"};
  static const teeny_dtype pdt[] = {TEENY_DT_I32, TEENY_DT_I64, TEENY_DT_I32};
  for (int f = -1; f < groups * TEENY_MAX_RANK; f++) {
    st.fields = grow(ps, st.fields, st.nfields, &cap, sizeof *st.fields);
    teeny_field *fd = &st.fields[st.nfields];
    fd->loc = loc;
    fd->nleaves = 1;
    fd->leaf = st.nfields++;
    if (f < 0) {
      fd->name = "base";
      fd->type = make_ptr(ps, elem, loc);
    } else {
      fd->name = teeny__arena_printf(ps->cx->arena, "%s%d", part[f / TEENY_MAX_RANK],
                                     f % TEENY_MAX_RANK);
      fd->type = scalar_tyspec(ps, pdt[f / TEENY_MAX_RANK], loc);
    }
  }
  struct_leaves(ps, &st);
  teeny_program *p = ps->prog;
  p->structs = grow(ps, p->structs, p->nstructs, &ps->scap, sizeof *p->structs);
  p->structs[p->nstructs++] = st;
  return p->nstructs - 1;
}

/* desc-type = ("tensor_desc" | "block_ptr") "(" type ")"
 *           | "tensor_desc" "(" type ("," assign)+ ")"   (a kernel parameter) */
static struct teeny_expr *assign(parser *ps);

static teeny_tyspec *desc_type(parser *ps) {
  teeny_token *kw = advance(ps);
  teeny_desc_kind kind = tok_eq(kw, "block_ptr") ? TEENY_DESC_BLOCK : TEENY_DESC_TENSOR;
  expect(ps, "(", kind == TEENY_DESC_BLOCK ? "after 'block_ptr'" : "after 'tensor_desc'");
  enter(ps);
  teeny_tyspec *inner = type(ps);
  leave(ps);
  if (inner->is_void || inner->is_tile || inner->is_ptr || inner->strct >= 0)
    fail_at(ps, inner->loc, "%s(...) takes the element dtype (%s(f16), %s(D))",
            kind == TEENY_DESC_BLOCK ? "block_ptr" : "tensor_desc",
            kind == TEENY_DESC_BLOCK ? "block_ptr" : "tensor_desc",
            kind == TEENY_DESC_BLOCK ? "block_ptr" : "tensor_desc");
  struct teeny_expr *dims[TEENY_MAX_RANK];
  int ndims = 0;
  while (kind == TEENY_DESC_TENSOR && consume(ps, ",")) { /* a kernel parameter's block */
    if (ndims == TEENY_MAX_RANK)
      fail_at(ps, ps->tok->loc, "tensor_desc(T, block dims...) takes at most %d dims",
              TEENY_MAX_RANK);
    dims[ndims++] = assign(ps);
  }
  expect(ps, ")", kind == TEENY_DESC_BLOCK ? "to close 'block_ptr('" : "to close 'tensor_desc('");
  teeny_tyspec *ts = new_tyspec(ps, kw->loc);
  if (ndims) {
    ts->dblock = teeny__arena_alloc(ps->cx->arena, sizeof *ts->dblock * (size_t)ndims);
    memcpy(ts->dblock, dims, sizeof *dims * (size_t)ndims);
    ts->ndblock = ndims;
  }
  ts->strct = desc_struct(ps, kind, inner, kw->loc);
  ts->base = ps->prog->structs[ts->strct].name;
  return ts;
}

/* type-base = "const"* core "const"*
 * core      = "void" | dtype | dtype-generic | struct-type | tile-type | ptr-type
 *           | desc-type */
static teeny_tyspec *type_base(parser *ps) {
  while (consume(ps, "const"))
    ;
  teeny_token *t = ps->tok;
  teeny_tyspec *ts;
  if (tok_eq(t, "tile")) {
    ts = tile_type(ps);
  } else if (tok_eq(t, "ptr")) {
    ts = ptr_type(ps);
  } else if (tok_eq(t, "tensor_desc") || tok_eq(t, "block_ptr")) {
    ts = desc_type(ps);
  } else if (tok_eq(t, "void")) {
    advance(ps);
    ts = new_tyspec(ps, t->loc);
    ts->is_void = true;
    ts->base = "void";
  } else if (builtin_dtype(t) != TEENY_DT_VOID) {
    advance(ps);
    ts = new_tyspec(ps, t->loc);
    ts->dt = builtin_dtype(t);
    ts->base = tok_str(ps, t);
  } else if (dtype_generic_of(ps, t) >= 0) {
    advance(ps);
    ts = new_tyspec(ps, t->loc);
    ts->generic = dtype_generic_of(ps, t);
    ts->base = ps->prog->generics[ts->generic].name;
  } else if (struct_of(ps, t) >= 0 || tok_eq(t, "struct")) {
    ts = struct_type(ps);
  } else {
    not_a_type(ps, t);
  }
  while (consume(ps, "const"))
    ;
  return ts;
}

/* pointers = ("*" "const"*)*   (applied to ts) */
static teeny_tyspec *pointers(parser *ps, teeny_tyspec *ts) {
  while (is(ps, "*")) {
    teeny_token *star = advance(ps);
    ts = make_ptr(ps, ts, star->loc);
    while (consume(ps, "const"))
      ;
  }
  return ts;
}

/* type = type-base pointers */
static teeny_tyspec *type(parser *ps) { return pointers(ps, type_base(ps)); }

/* ---- expressions ------------------------------------------------------------- */

static teeny_expr *new_expr(parser *ps, teeny_expr_kind kind, teeny_loc loc) {
  teeny_expr *e = alloc(ps, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  e->op = OP_NONE;
  e->lit_dt = TEENY_DT_VOID;
  e->sym = SYM_NONE;
  e->sym_index = -1;
  return e;
}

static teeny_expr *expr(parser *ps);
static teeny_expr *assign(parser *ps);
static teeny_expr *cast(parser *ps);
static teeny_expr *unary(parser *ps);
static teeny_expr *init_list(parser *ps, teeny_tyspec *ts);

/* A dtype written where a value goes, as the first argument of
 * zeros(f32, 64): an EX_NAME with ->type set and sym SYM_DTYPE.
 * type-arg = type-base */
static teeny_expr *type_arg(parser *ps) {
  teeny_tyspec *ts = type_base(ps);
  if (is(ps, "(") && !ts->is_tile && !ts->is_ptr)
    fail_at(ps, ts->loc,
            "'%s' is a type, not a function; to convert a value write a "
            "cast: (%s)x",
            ts->base, ts->base);
  teeny_expr *e = new_expr(ps, EX_NAME, ts->loc);
  e->name = tyspec_str(ps, ts);
  e->type = ts;
  e->sym = SYM_DTYPE;
  return e;
}

/* call = ident "(" (assign ("," assign)*)? ")" */
static teeny_expr *call(parser *ps, teeny_token *name) {
  advance(ps); /* "(" */
  enter(ps);
  teeny_expr *e = new_expr(ps, EX_CALL, name->loc);
  e->name = tok_str(ps, name);
  int cap = 0;
  if (!is(ps, ")")) {
    do {
      if (e->nargs == TEENY_MAX_PARAMS)
        fail_at(ps, ps->tok->loc, "too many arguments in a call to '%s' "
                                  "(limit %d)", e->name, TEENY_MAX_PARAMS);
      teeny_expr *arg = assign(ps);
      e->args = grow(ps, e->args, e->nargs, &cap, sizeof *e->args);
      e->args[e->nargs++] = arg;
    } while (consume(ps, ","));
  }
  if (!is(ps, ")"))
    fail_at(ps, ps->tok->loc, "expected ')' after the arguments of '%s', "
                              "found %s", e->name, desc(ps, ps->tok));
  advance(ps);
  leave(ps);
  return e;
}

/* string = string-literal+   (adjacent literals join, as in C) */
static teeny_expr *string_expr(parser *ps) {
  teeny_expr *e = new_expr(ps, EX_STRING, ps->tok->loc);
  int n = 0;
  for (const teeny_token *t = ps->tok; t->kind == TK_STRING; t++)
    n += t->slen;
  if (n > TEENY_MAX_STRING)
    fail_at(ps, e->loc, "string literal too long (limit %d bytes)", TEENY_MAX_STRING);
  char *s = alloc(ps, (size_t)n + 1);
  n = 0;
  while (ps->tok->kind == TK_STRING) {
    teeny_token *t = advance(ps);
    memcpy(s + n, t->sval, (size_t)t->slen);
    n += t->slen;
  }
  e->name = s;
  e->ival = (uint64_t)n;
  return e;
}

/* primary = "(" expr ")" | int | float | string | "true" | "false"
 *         | ident "(" args ")" | ident | type-arg */
static teeny_expr *primary(parser *ps) {
  teeny_token *t = ps->tok;
  if (is(ps, "(")) {
    advance(ps);
    enter(ps);
    teeny_expr *e = expr(ps);
    expect(ps, ")", "to close '('");
    leave(ps);
    return e;
  }
  if (t->kind == TK_INT || t->kind == TK_FLOAT) {
    advance(ps);
    teeny_expr *e = new_expr(ps, t->kind == TK_INT ? EX_INT : EX_FLOAT, t->loc);
    e->ival = t->ival;
    e->fval = t->fval;
    e->lit_dt = t->lit_dt;
    return e;
  }
  if (t->kind == TK_STRING)
    return string_expr(ps);
  if (tok_eq(t, "true") || tok_eq(t, "false")) {
    advance(ps);
    teeny_expr *e = new_expr(ps, EX_BOOL, t->loc);
    e->ival = tok_eq(t, "true");
    return e;
  }
  if (t->kind == TK_IDENT && is_type_start(ps, t))
    return type_arg(ps);
  if (t->kind != TK_IDENT || is_keyword(t)) {
    reject_unsupported(ps, t);
    fail_at(ps, t->loc, "expected an expression, found %s", desc(ps, t));
  }
  advance(ps);
  if (is(ps, "("))
    return call(ps, t);
  teeny_expr *e = new_expr(ps, EX_NAME, t->loc);
  e->name = tok_str(ps, t);
  return e;
}

/* postfix = primary ("." ident)* ("++" | "--")? */
static teeny_expr *postfix(parser *ps) {
  teeny_expr *e = primary(ps);
  int members = 0;
  while (is(ps, ".")) {
    teeny_token *dot = advance(ps);
    enter(ps);
    members++;
    teeny_token *name = expect_ident(ps, "a field name after '.'");
    teeny_expr *m = new_expr(ps, EX_MEMBER, dot->loc);
    m->lhs = e;
    m->name = tok_str(ps, name);
    e = m;
  }
  ps->depth -= members;
  if (is(ps, "["))
    fail_at(ps, ps->tok->loc, "indexing is not supported; use load() with a "
                              "pointer offset, as in load(p + i)");
  if (is(ps, "->"))
    fail_at(ps, ps->tok->loc, "'->' is not supported: there are no pointers to structs "
                              "(a struct is a value: use '.')");
  if (is(ps, "("))
    fail_at(ps, ps->tok->loc, "only functions named directly can be called");
  if (is(ps, "++") || is(ps, "--")) {
    teeny_token *t = advance(ps);
    teeny_expr *inc = new_expr(ps, EX_INCDEC, t->loc);
    inc->op = t->p[0] == '+' ? OP_ADD : OP_SUB;
    inc->lhs = e;
    return inc;
  }
  return e;
}

/* sizeof = "sizeof" "(" type ")" | "sizeof" unary */
static teeny_expr *sizeof_expr(parser *ps) {
  teeny_token *kw = advance(ps);
  enter(ps);
  teeny_expr *e = new_expr(ps, EX_SIZEOF, kw->loc);
  if (is(ps, "(") && is_type_start(ps, ps->tok + 1)) {
    advance(ps);
    e->type = type(ps);
    if (e->type->is_void)
      fail_at(ps, e->type->loc, "sizeof(void) has no size");
    expect(ps, ")", "after the type of sizeof");
  } else {
    e->lhs = unary(ps);
  }
  leave(ps);
  return e;
}

/* unary = ("+" | "-" | "!" | "~") cast | ("++" | "--") unary | sizeof | postfix */
static teeny_expr *unary(parser *ps) {
  static const struct {
    const char *op;
    teeny_op_kind kind;
  } ops[] = {{"+", OP_PLUS}, {"-", OP_NEG}, {"!", OP_LOGNOT}, {"~", OP_BITNOT}};
  teeny_token *t = ps->tok;
  if (tok_eq(t, "sizeof"))
    return sizeof_expr(ps);
  if (t->kind != TK_PUNCT)
    return postfix(ps);
  for (size_t i = 0; i < TEENY_ARRAY_LEN(ops); i++) {
    if (is(ps, ops[i].op)) {
      advance(ps);
      enter(ps);
      teeny_expr *e = new_expr(ps, EX_UNARY, t->loc);
      e->op = ops[i].kind;
      e->lhs = cast(ps);
      leave(ps);
      return e;
    }
  }
  if (is(ps, "++") || is(ps, "--")) {
    advance(ps);
    enter(ps);
    teeny_expr *e = new_expr(ps, EX_INCDEC, t->loc);
    e->op = t->p[0] == '+' ? OP_ADD : OP_SUB;
    e->prefix = true;
    e->lhs = unary(ps);
    leave(ps);
    return e;
  }
  if (is(ps, "&"))
    fail_at(ps, t->loc, "taking an address ('&') is not supported");
  if (is(ps, "*"))
    fail_at(ps, t->loc, "dereferencing ('*') is not supported; use load() "
                        "and store()");
  return postfix(ps);
}

/* "(name) operand" where name is not a type: no valid expression reads so,
 * so it is a cast to an unknown type (or to a constant) — say that rather
 * than "expected ';'". */
static void reject_bad_cast(parser *ps) {
  const teeny_token *t = ps->tok; /* "(" */
  if (t[1].kind != TK_IDENT || is_keyword(&t[1]) || !teeny__tok_is(&t[2], ")"))
    return;
  const teeny_token *next = &t[3];
  if (next->kind == TK_INT || next->kind == TK_FLOAT ||
      (next->kind == TK_IDENT && !is_keyword(next)))
    not_a_type(ps, &t[1]);
}

/* cast = "(" type ")" cast | unary */
static teeny_expr *cast(parser *ps) {
  if (is(ps, "(") && !is_type_start(ps, ps->tok + 1))
    reject_bad_cast(ps);
  if (!is(ps, "(") || !is_type_start(ps, ps->tok + 1))
    return unary(ps);
  teeny_token *lp = advance(ps);
  enter(ps);
  teeny_tyspec *ts = type(ps);
  expect(ps, ")", "after the type of a cast");
  if (ts->is_void && (ts->is_tile || ts->is_ptr))
    fail_at(ps, ts->loc, "%s is not a type a value converts to", tyspec_str(ps, ts));
  if (is(ps, "{")) { /* compound literal (S){...} */
    if (ts->strct < 0)
      fail_at(ps, ts->loc, "only structs have compound literals: (%s){...}; to make a "
                           "tile write full(T, value, shape...)", tyspec_str(ps, ts));
    teeny_expr *e = init_list(ps, ts);
    e->loc = lp->loc;
    leave(ps);
    return e;
  }
  if (ts->strct >= 0)
    fail_at(ps, lp->loc, "a struct cannot be converted from a value; build one with "
                         "(%s){...}", tyspec_str(ps, ts));
  teeny_expr *e = new_expr(ps, EX_CAST, lp->loc);
  e->type = ts;
  e->lhs = cast(ps);
  leave(ps);
  return e;
}

/* init-list = "{" (init-item ("," init-item)* ","?)? "}"
 * init-item = ("." ident "=")? (init-list | assign)
 * ts: the struct being built (NULL for a nested list: its field's). */
static teeny_expr *init_list(parser *ps, teeny_tyspec *ts) {
  teeny_token *lb = expect(ps, "{", "to begin an initializer");
  enter(ps);
  teeny_expr *e = new_expr(ps, EX_INIT, lb->loc);
  e->type = ts;
  int cap = 0, dcap = 0;
  while (!is(ps, "}")) {
    if (e->nargs == TEENY_MAX_LEAVES)
      fail_at(ps, ps->tok->loc, "too many initializers (limit %d)", TEENY_MAX_LEAVES);
    const char *field = NULL;
    if (consume(ps, ".")) {
      field = tok_str(ps, expect_ident(ps, "a field name after '.'"));
      expect(ps, "=", "after the field name of a designator");
    }
    teeny_expr *v = is(ps, "{") ? init_list(ps, NULL) : assign(ps);
    e->args = grow(ps, e->args, e->nargs, &cap, sizeof *e->args);
    e->desig = grow(ps, e->desig, e->nargs, &dcap, sizeof *e->desig);
    e->desig[e->nargs] = field;
    e->args[e->nargs++] = v;
    if (!consume(ps, ","))
      break;
  }
  expect(ps, "}", "to close the initializer");
  leave(ps);
  return e;
}

static int binop_index(const teeny_token *t) {
  if (t->kind != TK_PUNCT)
    return -1;
  for (size_t i = 0; i < TEENY_ARRAY_LEN(binops); i++)
    if (teeny__tok_is(t, binops[i].op))
      return (int)i;
  return -1;
}

/* binary = cast (binop cast)*, by precedence climbing over C's levels
 *   ||  <  &&  <  |  <  ^  <  &  <  == !=  <  < <= > >=  <  << >>  <  + -  <  * / %
 * all left-associative.  Each operator of a chain is one nesting level: it
 * puts the chain so far one level deeper in the tree. */
static teeny_expr *binary(parser *ps, int minprec) {
  teeny_expr *lhs = cast(ps);
  int chained = 0;
  for (;;) {
    int k = binop_index(ps->tok);
    if (k < 0 || binops[k].prec < minprec)
      break;
    teeny_token *t = advance(ps);
    enter(ps);
    chained++;
    teeny_expr *e = new_expr(ps, EX_BINARY, t->loc);
    e->op = binops[k].kind;
    e->lhs = lhs;
    e->rhs = binary(ps, binops[k].prec + 1);
    lhs = e;
  }
  ps->depth -= chained;
  return lhs;
}

/* conditional = binary ("?" expr ":" conditional)? */
static teeny_expr *conditional(parser *ps) {
  teeny_expr *c = binary(ps, 1);
  if (!is(ps, "?"))
    return c;
  teeny_token *q = advance(ps);
  enter(ps);
  teeny_expr *e = new_expr(ps, EX_COND, q->loc);
  e->cond = c;
  e->lhs = expr(ps);
  expect(ps, ":", "in a conditional expression");
  e->rhs = conditional(ps);
  leave(ps);
  return e;
}

/* assign    = conditional (assign-op assign)?
 * assign-op = "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>="
 *           | "&=" | "|=" | "^="
 * (resolve.c allows assignments only as statements) */
static teeny_expr *assign(parser *ps) {
  teeny_expr *lhs = conditional(ps);
  if (ps->tok->kind != TK_PUNCT)
    return lhs;
  for (size_t i = 0; i < TEENY_ARRAY_LEN(assignops); i++) {
    if (is(ps, assignops[i].op)) {
      teeny_token *t = advance(ps);
      enter(ps);
      teeny_expr *e = new_expr(ps, EX_ASSIGN, t->loc);
      e->op = assignops[i].kind;
      e->lhs = lhs;
      e->rhs = assign(ps);
      leave(ps);
      return e;
    }
  }
  return lhs;
}

/* expr = assign   (there is no comma operator) */
static teeny_expr *expr(parser *ps) { return assign(ps); }

static void no_comma(parser *ps) {
  if (is(ps, ","))
    fail_at(ps, ps->tok->loc, "the comma operator is not supported; write "
                              "separate statements");
}

/* ---- statements ------------------------------------------------------------- */

static teeny_stmt *new_stmt(parser *ps, teeny_stmt_kind kind, teeny_loc loc) {
  teeny_stmt *st = alloc(ps, sizeof *st);
  st->kind = kind;
  st->loc = loc;
  st->var = -1;
  st->brk_slot = st->cont_slot = -1;
  return st;
}

static teeny_stmt *stmt(parser *ps);

/* Does a declaration start here?  A type does; so does "name name", a
 * declaration whose type is unknown (type_base explains). */
static bool starts_declaration(const parser *ps) {
  const teeny_token *t = ps->tok;
  if (t->kind != TK_IDENT)
    return false;
  if (is_type_start(ps, t))
    return true;
  return !is_keyword(t) && t[1].kind == TK_IDENT;
}

/* declarator = pointers ident ("=" assign)? */
static teeny_stmt *declarator(parser *ps, teeny_tyspec *base, teeny_loc loc) {
  teeny_tyspec *ts = pointers(ps, base);
  if (ps->tok->kind != TK_IDENT)
    fail_at(ps, ps->tok->loc, "expected a variable name after '%s', found %s",
            tyspec_str(ps, ts), desc(ps, ps->tok));
  teeny_token *name = advance(ps);
  check_new_name(ps, name, "variable");
  if (ts->is_void)
    fail_at(ps, name->loc, "variable '%.*s' is declared void", name->len,
            name->p);
  if (is(ps, "["))
    fail_at(ps, ps->tok->loc, "arrays are not supported; use a tile "
                              "(tile(T)) or a pointer");
  if (is(ps, "("))
    fail_at(ps, ps->tok->loc, "functions cannot be declared inside a "
                              "function");
  teeny_stmt *st = new_stmt(ps, ST_DECL, loc);
  st->type = ts;
  st->name = tok_str(ps, name);
  st->name_loc = name->loc;
  if (consume(ps, "=")) {
    if (is(ps, "{") && ts->strct < 0)
      fail_at(ps, ps->tok->loc, "only structs take a braced initializer; '%s' is %s",
              st->name, tyspec_str(ps, ts));
    st->expr = is(ps, "{") ? init_list(ps, ts) : assign(ps);
  }
  return st;
}

/* declaration = type-base declarator ("," declarator)* ";"
 * One declarator gives an ST_DECL; several give an unscoped ST_BLOCK of
 * ST_DECLs. */
static teeny_stmt *declaration(parser *ps) {
  teeny_loc loc = ps->tok->loc;
  teeny_tyspec *base = type_base(ps);
  teeny_stmt *first = declarator(ps, base, loc);
  if (!is(ps, ",")) {
    expect(ps, ";", "after declaration");
    return first;
  }
  teeny_stmt *block = new_stmt(ps, ST_BLOCK, loc);
  int cap = 0;
  block->body = grow(ps, block->body, 0, &cap, sizeof *block->body);
  block->body[block->nbody++] = first;
  while (consume(ps, ",")) {
    block->body = grow(ps, block->body, block->nbody, &cap, sizeof *block->body);
    block->body[block->nbody++] = declarator(ps, base, loc);
  }
  expect(ps, ";", "after declaration");
  return block;
}

/* compound   = "{" block-item* "}"
 * block-item = declaration | stmt */
static teeny_stmt *compound(parser *ps) {
  teeny_token *lb = expect(ps, "{", "to begin a block");
  teeny_stmt *st = new_stmt(ps, ST_BLOCK, lb->loc);
  st->scoped = true;
  int cap = 0;
  while (!is(ps, "}")) {
    if (ps->tok->kind == TK_EOF)
      fail_at(ps, ps->tok->loc, "expected '}' to close the block opened at "
                                "line %d, found end of file", lb->loc.line);
    teeny_stmt *item = starts_declaration(ps) ? declaration(ps) : stmt(ps);
    st->body = grow(ps, st->body, st->nbody, &cap, sizeof *st->body);
    st->body[st->nbody++] = item;
  }
  advance(ps);
  return st;
}

/* The body of if/else/for/while/do: a statement, not a declaration. */
static teeny_stmt *substmt(parser *ps, const char *owner) {
  if (starts_declaration(ps))
    fail_at(ps, ps->tok->loc, "a declaration cannot be the body of '%s'; put "
                              "it in braces { }", owner);
  return stmt(ps);
}

/* "(" expr ")" after if/while */
static teeny_expr *paren_cond(parser *ps, const char *owner) {
  char where[48];
  snprintf(where, sizeof where, "after '%s'", owner);
  expect(ps, "(", where);
  teeny_expr *e = expr(ps);
  no_comma(ps);
  snprintf(where, sizeof where, "after the condition of '%s'", owner);
  expect(ps, ")", where);
  return e;
}

/* if = "if" "(" expr ")" stmt ("else" stmt)? */
static teeny_stmt *if_stmt(parser *ps) {
  teeny_token *kw = advance(ps);
  teeny_stmt *st = new_stmt(ps, ST_IF, kw->loc);
  st->cond = paren_cond(ps, "if");
  st->then = substmt(ps, "if");
  if (consume(ps, "else"))
    st->els = substmt(ps, "else");
  return st;
}

/* expr-stmt = expr ";" */
static teeny_stmt *expr_stmt(parser *ps) {
  teeny_stmt *st = new_stmt(ps, ST_EXPR, ps->tok->loc);
  st->expr = expr(ps);
  no_comma(ps);
  expect(ps, ";", "after expression");
  return st;
}

/* for      = "for" "(" for-init expr? ";" expr? ")" stmt
 * for-init = ";" | declaration | expr-stmt */
static teeny_stmt *for_stmt(parser *ps) {
  teeny_token *kw = advance(ps);
  teeny_stmt *st = new_stmt(ps, ST_FOR, kw->loc);
  expect(ps, "(", "after 'for'");
  if (!consume(ps, ";"))
    st->init = starts_declaration(ps) ? declaration(ps) : expr_stmt(ps);
  if (!is(ps, ";"))
    st->cond = expr(ps);
  no_comma(ps);
  expect(ps, ";", "after the condition of 'for'");
  if (!is(ps, ")"))
    st->step = expr(ps);
  no_comma(ps);
  expect(ps, ")", "after the step of 'for'");
  st->loop = substmt(ps, "for");
  return st;
}

/* while = "while" "(" expr ")" stmt */
static teeny_stmt *while_stmt(parser *ps) {
  teeny_token *kw = advance(ps);
  teeny_stmt *st = new_stmt(ps, ST_WHILE, kw->loc);
  st->cond = paren_cond(ps, "while");
  st->loop = substmt(ps, "while");
  return st;
}

/* do = "do" stmt "while" "(" expr ")" ";" */
static teeny_stmt *do_stmt(parser *ps) {
  teeny_token *kw = advance(ps);
  teeny_stmt *st = new_stmt(ps, ST_DO, kw->loc);
  st->loop = substmt(ps, "do");
  expect(ps, "while", "after the body of 'do'");
  st->cond = paren_cond(ps, "while");
  expect(ps, ";", "after 'do ... while (...)'");
  return st;
}

/* return = "return" expr? ";" */
static teeny_stmt *return_stmt(parser *ps) {
  teeny_token *kw = advance(ps);
  teeny_stmt *st = new_stmt(ps, ST_RETURN, kw->loc);
  if (!is(ps, ";"))
    st->expr = expr(ps);
  no_comma(ps);
  expect(ps, ";", "after 'return'");
  return st;
}

/* jump = ("break" | "continue") ";" */
static teeny_stmt *jump_stmt(parser *ps, teeny_stmt_kind kind) {
  teeny_token *kw = advance(ps);
  teeny_stmt *st = new_stmt(ps, kind, kw->loc);
  expect(ps, ";", kind == ST_BREAK ? "after 'break'" : "after 'continue'");
  return st;
}

/* Statement-start words that are errors here, with why. */
static void reject_stmt_start(parser *ps) {
  teeny_token *t = ps->tok;
  if (tok_eq(t, "else"))
    fail_at(ps, t->loc, "'else' without a matching 'if'");
  if (tok_eq(t, "static") || tok_eq(t, "inline"))
    fail_at(ps, t->loc, "'%.*s' is only allowed before a function at file "
                        "level", t->len, t->p);
  if (t->kind == TK_IDENT && t->len > 6 && memcmp(t->p, "TEENY_", 6) == 0 &&
      is_keyword(t))
    fail_at(ps, t->loc, "%.*s(...) belongs at file level, outside functions",
            t->len, t->p);
  reject_unsupported(ps, t);
  if (t->kind == TK_IDENT && teeny__tok_is(t + 1, ":"))
    fail_at(ps, t->loc, "labels are not supported: there is no goto");
}

/* stmt = compound | ";" | if | for | while | do | return | jump | expr-stmt */
static teeny_stmt *stmt(parser *ps) {
  enter(ps);
  teeny_stmt *st;
  teeny_token *t = ps->tok;
  if (is(ps, "{"))
    st = compound(ps);
  else if (is(ps, ";"))
    st = new_stmt(ps, ST_EMPTY, advance(ps)->loc);
  else if (tok_eq(t, "if"))
    st = if_stmt(ps);
  else if (tok_eq(t, "for"))
    st = for_stmt(ps);
  else if (tok_eq(t, "while"))
    st = while_stmt(ps);
  else if (tok_eq(t, "do"))
    st = do_stmt(ps);
  else if (tok_eq(t, "return"))
    st = return_stmt(ps);
  else if (tok_eq(t, "break"))
    st = jump_stmt(ps, ST_BREAK);
  else if (tok_eq(t, "continue"))
    st = jump_stmt(ps, ST_CONTINUE);
  else {
    reject_stmt_start(ps);
    st = expr_stmt(ps);
  }
  leave(ps);
  return st;
}

/* ---- file level ---------------------------------------------------------------- */

/* params = "void" | (param ("," param)*)?
 * param  = type ident */
static void params(parser *ps, teeny_func *f) {
  if (is(ps, "void") && next_is(ps, ")"))
    advance(ps);
  int cap = 0;
  if (!is(ps, ")")) {
    do {
      if (is(ps, "..."))
        fail_at(ps, ps->tok->loc, "variadic functions are not supported");
      if (f->nparams == TEENY_MAX_PARAMS)
        fail_at(ps, ps->tok->loc, "too many parameters in '%s' (limit %d)",
                f->name, TEENY_MAX_PARAMS);
      teeny_tyspec *ts = type(ps);
      if (ps->tok->kind != TK_IDENT)
        fail_at(ps, ps->tok->loc, "expected a parameter name after '%s', "
                                  "found %s", tyspec_str(ps, ts),
                desc(ps, ps->tok));
      teeny_token *name = advance(ps);
      check_new_name(ps, name, "parameter");
      if (ts->is_void)
        fail_at(ps, name->loc, "parameter '%.*s' is declared void",
                name->len, name->p);
      if (is(ps, "["))
        fail_at(ps, ps->tok->loc, "array parameters are not supported; use "
                                  "a pointer");
      f->params = grow(ps, f->params, f->nparams, &cap, sizeof *f->params);
      teeny_param_decl *p = &f->params[f->nparams++];
      p->type = ts;
      p->name = tok_str(ps, name);
      p->loc = name->loc;
      p->var = -1;
    } while (consume(ps, ","));
  }
  char where[TEENY_MAX_NAME_LEN + 40];
  snprintf(where, sizeof where, "after the parameters of '%s'", f->name);
  expect(ps, ")", where);
}

/* function = ("static" | "inline")* type ident "(" params ")" compound */
static teeny_func *function(parser *ps) {
  while (consume(ps, "static") || consume(ps, "inline"))
    ;
  if (ps->tok->kind != TK_IDENT)
    fail_at(ps, ps->tok->loc, "expected a function, TEENY_DTYPE, TEENY_CONST, "
                              "TEENY_KERNEL or TEENY_BACKWARD at file level, "
                              "found %s", desc(ps, ps->tok));
  teeny_func *f = alloc(ps, sizeof *f);
  f->ret = type(ps);
  f->backward = -1;
  teeny_token *name = expect_ident(ps, "a function name after its return type");
  check_new_name(ps, name, "function");
  f->name = tok_str(ps, name);
  f->loc = name->loc;
  if (is(ps, "=") || is(ps, ";") || is(ps, ",") || is(ps, "["))
    fail_at(ps, ps->tok->loc, "variables at file level are not supported; use "
                              "TEENY_CONST(...) for a constant");
  expect(ps, "(", "after the function name");
  params(ps, f);
  if (is(ps, ";"))
    fail_at(ps, ps->tok->loc, "function declarations without a body are not "
                              "supported; define '%s' here (functions may "
                              "appear in any order)", f->name);
  f->body = compound(ps);
  ps->prog->funcs = grow(ps, ps->prog->funcs, ps->prog->nfuncs, &ps->fcap,
                         sizeof *ps->prog->funcs);
  ps->prog->funcs[ps->prog->nfuncs++] = f;
  return f;
}

/* The name of a new generic: appended to prog->generics. */
static teeny_generic *new_generic(parser *ps) {
  teeny_token *name = expect_ident(ps, "a generic name");
  check_new_name(ps, name, "generic");
  if (ps->prog->ngenerics == TEENY_MAX_GENERICS)
    fail_at(ps, name->loc, "too many generics (limit %d)", TEENY_MAX_GENERICS);
  teeny_program *p = ps->prog;
  p->generics = grow(ps, p->generics, p->ngenerics, &ps->gcap, sizeof *p->generics);
  teeny_generic *g = &p->generics[p->ngenerics];
  memset(g, 0, sizeof *g);
  g->name = tok_str(ps, name);
  g->loc = name->loc;
  p->ngenerics++;
  return g;
}

/* dtype-decl = "TEENY_DTYPE" "(" ident ("," dtype)* ")" ";" */
static void dtype_decl(parser *ps) {
  advance(ps);
  expect(ps, "(", "after 'TEENY_DTYPE'");
  teeny_generic *g = new_generic(ps);
  g->is_dtype = true;
  teeny_dtype list[TEENY_DT__COUNT];
  while (consume(ps, ",")) {
    teeny_token *t = expect_ident(ps, "a dtype name (f32, f16, ...)");
    teeny_dtype dt = builtin_dtype(t);
    if (dt == TEENY_DT_VOID)
      fail_at(ps, t->loc, "'%.*s' is not a builtin dtype; TEENY_DTYPE's list "
                          "names the dtypes '%s' may be bound to", t->len,
              t->p, g->name);
    for (int i = 0; i < g->nallowed; i++)
      if (list[i] == dt)
        fail_at(ps, t->loc, "dtype '%s' is listed twice", teeny_dtype_name(dt));
    list[g->nallowed++] = dt;
  }
  expect(ps, ")", "to close TEENY_DTYPE(...)");
  expect(ps, ";", "after TEENY_DTYPE(...)");
  if (g->nallowed > 0) {
    g->allowed = alloc(ps, sizeof *g->allowed * (size_t)g->nallowed);
    memcpy(g->allowed, list, sizeof *g->allowed * (size_t)g->nallowed);
  }
}

/* const-decl = "TEENY_CONST" "(" ident ("," dtype)? ")" ";"
 * Without a dtype the constant is a weak i32 (like a literal); with one it
 * has that dtype (like a suffixed literal). */
static void const_decl(parser *ps) {
  advance(ps);
  expect(ps, "(", "after 'TEENY_CONST'");
  teeny_generic *g = new_generic(ps);
  g->cdt = TEENY_DT_VOID;
  if (consume(ps, ",")) {
    teeny_token *t = expect_ident(ps, "the constant's dtype (i64, f32, bool, ...)");
    g->cdt = builtin_dtype(t);
    if (g->cdt == TEENY_DT_VOID)
      fail_at(ps, t->loc, "'%.*s' is not a builtin dtype; a constant has a builtin dtype "
                          "(bool, i8..i64, u8..u64, f16, bf16, f32, f64)",
              t->len, t->p);
    if (is(ps, ","))
      fail_at(ps, ps->tok->loc, "TEENY_CONST takes a name and a dtype; write one "
                                "TEENY_CONST(...) per constant");
  }
  expect(ps, ")", "to close TEENY_CONST(...)");
  expect(ps, ";", "after TEENY_CONST(...)");
}

/* backward-decl = "TEENY_BACKWARD" "(" ident "," ident ")" ";" */
static void backward_decl(parser *ps) {
  advance(ps);
  expect(ps, "(", "after 'TEENY_BACKWARD'");
  teeny_token *fwd = expect_ident(ps, "the forward kernel's name");
  expect(ps, ",", "after the forward kernel's name");
  teeny_token *bwd = expect_ident(ps, "the backward kernel's name");
  expect(ps, ")", "to close TEENY_BACKWARD(...)");
  expect(ps, ";", "after TEENY_BACKWARD(...)");
  teeny_program *p = ps->prog;
  p->backwards = grow(ps, p->backwards, p->nbackwards, &ps->bcap,
                      sizeof *p->backwards);
  teeny_backward_decl *b = &p->backwards[p->nbackwards++];
  b->fwd = tok_str(ps, fwd);
  b->fwd_loc = fwd->loc;
  b->bwd = tok_str(ps, bwd);
  b->bwd_loc = bwd->loc;
}

/* kernel-decl = "TEENY_KERNEL" "(" (ident ("," ident)*)? ")" function */
static void kernel_decl(parser *ps) {
  teeny_token *kw = advance(ps);
  expect(ps, "(", "after 'TEENY_KERNEL'");
  int list[TEENY_MAX_GENERICS];
  int n = 0;
  if (!is(ps, ")")) {
    do {
      teeny_token *t = expect_ident(ps, "a generic name");
      int g = generic_of(ps, t);
      if (g < 0)
        fail_at(ps, t->loc, "TEENY_KERNEL names '%.*s', which is not a "
                            "generic declared above it (TEENY_DTYPE or "
                            "TEENY_CONST)", t->len, t->p);
      for (int i = 0; i < n; i++)
        if (list[i] == g)
          fail_at(ps, t->loc, "TEENY_KERNEL lists '%.*s' twice", t->len, t->p);
      list[n++] = g;
    } while (consume(ps, ","));
  }
  expect(ps, ")", "to close TEENY_KERNEL(...)");
  teeny_token *t = ps->tok;
  if (t->kind != TK_IDENT || (is_keyword(t) && !is_type_start(ps, t) &&
                              !tok_eq(t, "static") && !tok_eq(t, "inline")))
    fail_at(ps, t->loc, "expected a function after TEENY_KERNEL(...), found %s",
            desc(ps, t));
  teeny_func *f = function(ps);
  f->is_kernel = true;
  f->kernel_loc = kw->loc;
  f->nkgenerics = n;
  if (n > 0) {
    f->kgenerics = alloc(ps, sizeof *f->kgenerics * (size_t)n);
    memcpy(f->kgenerics, list, sizeof *f->kgenerics * (size_t)n);
  }
}

/* ---- structs ---------------------------------------------------------------------- */

/* The leaves of st, from its fields: a struct field's leaves under its
 * name ("pos.x"), made tiles when the field is tile(S). */
static void struct_leaves(parser *ps, teeny_struct *st) {
  int n = 0;
  for (int i = 0; i < st->nfields; i++)
    n += st->fields[i].nleaves;
  if (n > TEENY_MAX_LEAVES)
    fail_at(ps, st->loc, "struct %s has %d leaves (fields, counting those of its struct "
                         "fields); the limit is %d", st->name, n, TEENY_MAX_LEAVES);
  st->nleaves = n;
  st->leaf_type = alloc(ps, sizeof *st->leaf_type * (size_t)(n + 1));
  st->leaf_name = alloc(ps, sizeof *st->leaf_name * (size_t)(n + 1));
  for (int i = 0, k = 0; i < st->nfields; i++) {
    const teeny_field *f = &st->fields[i];
    if (f->type->strct < 0) {
      st->leaf_type[k] = f->type;
      st->leaf_name[k++] = f->name;
      continue;
    }
    const teeny_struct *sub = &ps->prog->structs[f->type->strct];
    for (int j = 0; j < sub->nleaves; j++) {
      teeny_tyspec *t = copy_tyspec(ps, sub->leaf_type[j], sub->leaf_type[j]->loc);
      t->is_tile = t->is_tile || f->type->is_tile;
      st->leaf_type[k] = t;
      st->leaf_name[k++] = teeny__arena_printf(ps->cx->arena, "%s.%s", f->name,
                                               sub->leaf_name[j]);
    }
  }
}

/* field-decl = type-base pointers ident ("," pointers ident)* ";" */
static void field_decl(parser *ps, teeny_struct *st, int *cap) {
  teeny_tyspec *base = type_base(ps);
  do {
    teeny_tyspec *ts = pointers(ps, base);
    teeny_token *name = expect_ident(ps, "a field name");
    check_new_name(ps, name, "field");
    if (ts->is_void)
      fail_at(ps, name->loc, "field '%.*s' is declared void", name->len, name->p);
    if (is(ps, "[") || is(ps, ":"))
      fail_at(ps, ps->tok->loc, "arrays and bit-fields are not supported in structs");
    for (int i = 0; i < st->nfields; i++)
      if (teeny__tok_is(name, st->fields[i].name))
        fail_at(ps, name->loc, "duplicate field '%.*s' in %s", name->len, name->p, st->name);
    st->fields = grow(ps, st->fields, st->nfields, cap, sizeof *st->fields);
    teeny_field *f = &st->fields[st->nfields++];
    f->name = tok_str(ps, name);
    f->loc = name->loc;
    f->type = ts;
    f->nleaves = ts->strct >= 0 ? ps->prog->structs[ts->strct].nleaves : 1;
    f->leaf = st->nfields > 1 ? st->fields[st->nfields - 2].leaf +
                                    st->fields[st->nfields - 2].nleaves : 0;
  } while (consume(ps, ","));
  expect(ps, ";", "after a field");
}

/* struct-body = "{" field-decl+ "}": appends st to the program (complete:
 * only then may other structs name it). */
static void struct_body(parser *ps, const char *name, teeny_loc loc) {
  teeny_struct st;
  memset(&st, 0, sizeof st);
  st.name = name;
  st.loc = loc;
  int cap = 0;
  teeny_token *lb = expect(ps, "{", "to begin the struct's fields");
  while (!is(ps, "}")) {
    if (ps->tok->kind == TK_EOF)
      fail_at(ps, lb->loc, "struct %s is not closed", name);
    field_decl(ps, &st, &cap);
  }
  advance(ps);
  if (st.nfields == 0)
    fail_at(ps, loc, "struct %s has no fields", name);
  struct_leaves(ps, &st);
  teeny_program *p = ps->prog;
  p->structs = grow(ps, p->structs, p->nstructs, &ps->scap, sizeof *p->structs);
  p->structs[p->nstructs++] = st;
}

static void check_struct_name(parser *ps, const char *name, teeny_loc loc) {
  for (int i = 0; i < ps->prog->nstructs; i++)
    if (strcmp(ps->prog->structs[i].name, name) == 0)
      fail_at(ps, loc, "redefinition of %s", name);
}

/* typedef-decl = "typedef" "struct" ident? struct-body ident ";"
 * struct-decl  = "struct" ident struct-body ";"
 * (a typedef'd struct is named by its typedef name; its tag, if any, is
 * C's alone: kernels do not write `struct tag` for it) */
static void struct_decl(parser *ps) {
  bool td = tok_eq(ps->tok, "typedef");
  teeny_token *kw = advance(ps);
  if (td && !consume(ps, "struct"))
    fail_at(ps, ps->tok->loc, "typedef only names structs here (typedef struct {...} "
                              "name;); a dtype parameter is TEENY_DTYPE(...)");
  teeny_token *tag = ps->tok->kind == TK_IDENT ? advance(ps) : NULL;
  if (!td && !tag)
    fail_at(ps, ps->tok->loc, "a struct needs a tag (struct name {...};) or a typedef");
  if (td) {
    teeny_token *body = ps->tok;
    int depth = 0; /* find the typedef name after the body first */
    const teeny_token *end = ps->toks + ps->ntoks - 1;
    const teeny_token *t = body;
    for (; t < end; t++) {
      depth += teeny__tok_is(t, "{") - teeny__tok_is(t, "}");
      if (depth == 0)
        break;
    }
    const teeny_token *nm = t + 1;
    if (t >= end || nm->kind != TK_IDENT || !teeny__tok_is(nm + 1, ";"))
      fail_at(ps, kw->loc, "expected 'typedef struct {...} name;'");
    check_new_name(ps, nm, "struct");
    const char *name = teeny__arena_strndup(ps->cx->arena, nm->p, (size_t)nm->len);
    check_struct_name(ps, name, nm->loc);
    struct_body(ps, name, nm->loc);
    advance(ps); /* the name */
  } else {
    const char *name = teeny__arena_printf(ps->cx->arena, "struct %.*s", tag->len, tag->p);
    check_struct_name(ps, name, tag->loc);
    struct_body(ps, name, tag->loc);
  }
  expect(ps, ";", td ? "after the typedef" : "after the struct");
}

/* item = ";" | dtype-decl | const-decl | backward-decl | kernel-decl
 *      | typedef-decl | struct-decl | function */
static void item(parser *ps) {
  teeny_token *t = ps->tok;
  if (consume(ps, ";"))
    return;
  if (tok_eq(t, "typedef") || (tok_eq(t, "struct") && t[1].kind == TK_IDENT &&
                               teeny__tok_is(t + 2, "{")))
    struct_decl(ps);
  else if (tok_eq(t, "TEENY_DTYPE"))
    dtype_decl(ps);
  else if (tok_eq(t, "TEENY_CONST"))
    const_decl(ps);
  else if (tok_eq(t, "TEENY_BACKWARD"))
    backward_decl(ps);
  else if (tok_eq(t, "TEENY_KERNEL"))
    kernel_decl(ps);
  else if (tok_eq(t, "TEENY_BIND"))
    fail_at(ps, t->loc, "TEENY_BIND(...) is written by the compiler into "
                        "generated sources; pass bindings with the request");
  else
    function(ps);
}

/* program = item* EOF */
teeny_program *teeny__parse(teeny_ctx *cx, teeny_token *toks, int ntoks) {
  parser *ps = teeny__arena_alloc(cx->arena, sizeof *ps);
  teeny_program *prog = teeny__arena_alloc(cx->arena, sizeof *prog);
  if (!ps || !prog || !toks || ntoks < 1 || toks[ntoks - 1].kind != TK_EOF) {
    teeny_loc none = {0, 0};
    teeny__error_at(cx, none, ps && prog ? "internal error: no token stream"
                                         : "out of memory");
    return NULL;
  }
  ps->cx = cx;
  ps->toks = toks;
  ps->ntoks = ntoks;
  ps->tok = toks;
  ps->prog = prog;
  if (setjmp(ps->fail))
    return NULL;
  while (ps->tok->kind != TK_EOF)
    item(ps);
  return prog;
}

int teeny__program_find_func(const teeny_program *p, const char *name) {
  for (int i = 0; p && i < p->nfuncs; i++)
    if (strcmp(p->funcs[i]->name, name) == 0)
      return i;
  return -1;
}

const teeny_struct *teeny__tyspec_struct(const teeny_program *p, const teeny_tyspec *ts) {
  return ts && ts->strct >= 0 && ts->strct < p->nstructs ? &p->structs[ts->strct] : NULL;
}

int teeny__tyspec_slots(const teeny_program *p, const teeny_tyspec *ts) {
  const teeny_struct *st = teeny__tyspec_struct(p, ts);
  return st ? st->nleaves : 1;
}

int teeny__program_find_generic(const teeny_program *p, const char *name) {
  for (int i = 0; p && i < p->ngenerics; i++)
    if (strcmp(p->generics[i].name, name) == 0)
      return i;
  return -1;
}
