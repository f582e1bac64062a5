/*
 * dsl/resolve.c — name binding and the checks that need no bindings
 * (dsl/front.h, resolve.c section), plus the builtin table.
 *
 * One walk over each function, in source order: parameters get var slots
 * 0..nparams-1 and every declaration a fresh slot; each name used as a
 * value is bound to, in this order, a variable in scope, a const generic,
 * a helper function or a builtin, and each called name to a helper, else
 * a builtin: user names shadow builtins (docs/dsl.md §1).  The walk also records every
 * function's calls and the generics it uses; then come the whole-program
 * checks: no recursion on the call graph, every kernel lists the generics it
 * uses (directly or through helpers), and TEENY_BACKWARD pairs are kernels
 * with equal generic lists.
 *
 * INFINITY and NAN, which teeny/dsl.h defines as float constants, are the
 * only other names a value may have: resolve.c accepts them and leaves them
 * SYM_NONE (sym_index -1); irgen gives them their values.
 *
 * It keeps going after an error, so that one run reports several, and stops
 * after TEENY_MAX_ERRORS.  Names are looked up through hash maps, so the work
 * is linear in the size of the program; the tree walks recurse no deeper
 * than parse.c's nesting limit allows and the call graph is walked with an
 * explicit stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dsl/front.h"

/* ---- builtins -------------------------------------------------------------------- */

static const teeny_builtin_info builtins[BI__COUNT] = {
#define TEENY_BUILTIN(id, name, minargs, maxargs) [BI_##id] = {name, minargs, maxargs},
#include "dsl/builtins.def"
#undef TEENY_BUILTIN
};

const teeny_builtin_info *teeny__builtin_info(teeny_builtin b) {
  if ((int)b < 0 || b >= BI__COUNT)
    return NULL;
  return &builtins[b];
}

int teeny__builtin_find(const char *name) {
  for (int i = 0; i < BI__COUNT; i++)
    if (strcmp(builtins[i].name, name) == 0)
      return i;
  return -1;
}

/* ---- options ---------------------------------------------------------------------- */

static const teeny_option_info options[OPT__COUNT] = {
#define TEENY_OPTION(id, name, group, value) [OPT_##id] = {name, OPTG_##group, value},
#include "dsl/options.def"
#undef TEENY_OPTION
};

const teeny_option_info *teeny__option_info(teeny_option o) {
  if ((int)o < 0 || o >= OPT__COUNT)
    return NULL;
  return &options[o];
}

int teeny__option_find(const char *name) {
  for (int i = 0; i < OPT__COUNT; i++)
    if (strcmp(options[i].name, name) == 0)
      return i;
  return -1;
}

unsigned teeny__builtin_option_groups(teeny_builtin b) {
  switch (b) {
  case BI_ATOMIC_ADD: case BI_ATOMIC_MAX: case BI_ATOMIC_MIN: case BI_ATOMIC_XCHG:
  case BI_ATOMIC_CAS: case BI_ATOMIC_AND: case BI_ATOMIC_OR: case BI_ATOMIC_XOR:
    return OPTG_SEM | OPTG_SCOPE;
  case BI_DOT:
    return OPTG_PREC;
  case BI_LOAD: case BI_STORE: case BI_LOAD_TENSOR_DESCRIPTOR: case BI_STORE_TENSOR_DESCRIPTOR:
    return OPTG_CACHE | OPTG_EVICT;
  default:
    return 0;
  }
}

int teeny__call_positional(const teeny_expr *e) {
  int n = e->nargs;
  while (n > 0 && e->args[n - 1]->kind == EX_NAME && e->args[n - 1]->sym == SYM_OPTION)
    n--;
  return n;
}

static const char *group_name(unsigned g) {
  switch (g) {
  case OPTG_SEM: return "memory semantics (sem_*)";
  case OPTG_SCOPE: return "scope (scope_*)";
  case OPTG_PREC: return "input precision (prec_*)";
  case OPTG_CACHE: return "cache (cache_*)";
  default: return "eviction (evict_*)";
  }
}

/* Who takes options of group g, for "takes no options" errors. */
static const char *group_owner(unsigned g) {
  switch (g) {
  case OPTG_PREC: return "dot";
  case OPTG_CACHE: case OPTG_EVICT: return "load and store";
  default: return "the atomics";
  }
}

/* The cache operators PTX has for a load (ld) and for a store (st). */
static bool cache_fits(int b, teeny_cache c) {
  if (b == BI_LOAD || b == BI_LOAD_TENSOR_DESCRIPTOR)
    return c == TEENY_CACHE_CA || c == TEENY_CACHE_CG || c == TEENY_CACHE_CS ||
           c == TEENY_CACHE_CV;
  return c == TEENY_CACHE_WB || c == TEENY_CACHE_CG || c == TEENY_CACHE_CS ||
         c == TEENY_CACHE_WT;
}

/* ---- state ----------------------------------------------------------------------- */

/* String -> int hash map (open addressing; keys are never removed). */
typedef struct name_map {
  const char **keys; /* NULL: empty slot */
  int *vals;         /* value of each key */
  int cap;           /* slots, a power of two (0 before the first put) */
  int n;             /* keys stored */
} name_map;

typedef struct call_edge {
  int callee;    /* index of the helper called */
  teeny_loc loc; /* the call site */
} call_edge;

typedef struct generic_use {
  int generic;   /* generic index */
  teeny_loc loc; /* its first direct use in the function */
} generic_use;

/* What the walk learns about one function. */
typedef struct func_info {
  call_edge *calls;  /* helper calls, in source order */
  int ncalls, ccap;  /* how many; allocated */
  generic_use *uses; /* first direct use of each generic, in source order */
  int nuses, ucap;   /* how many; allocated */
  uint64_t direct;   /* generics used directly: bit g for generic g */
  uint64_t all;      /* directly or through helpers (after the DFS) */
} func_info;

/* A variable in scope. */
typedef struct binding {
  const char *name; /* as declared */
  int slot;         /* its var slot (a struct's: its first leaf's) */
  const teeny_tyspec *type; /* as declared */
  int scope;        /* depth of the scope that declared it */
  teeny_loc loc;    /* where */
  int shadowed;     /* binding this one hides, or -1 */
} binding;

typedef struct resolver {
  teeny_ctx *cx;         /* errors, arena */
  teeny_program *prog;   /* being resolved */
  func_info *info;       /* [prog->nfuncs] */
  name_map funcs;        /* function name -> its first definition */
  name_map generics;     /* generic name -> its first declaration */
  name_map vars;         /* variable name -> innermost binding, or -1 */
  binding *binds;        /* visible bindings, innermost last */
  int nbinds, bcap;      /* how many; allocated */
  int scope;             /* current scope depth (params: 1) */
  teeny_stmt **loops;    /* loops around the current statement, innermost last */
  int nloops, lcap;      /* how many; allocated */
  int fi;                /* index of the function being walked */
  teeny_func *fn;        /* that function */
  const char **slots;    /* names of fn's var slots */
  int nslots, scap;      /* how many; allocated */
  jmp_buf oom;           /* running out of memory unwinds here */
} resolver;

/* How an expression is used, which decides what it may be. */
typedef enum use_ctx {
  USE_VALUE,    /* an ordinary operand */
  USE_STMT,     /* a whole expression statement, for init or step */
  USE_DTYPE_ARG /* where a dtype may stand for a value: zeros/full, sizeof, is_float ... */
} use_ctx;

typedef struct sym {
  teeny_sym_kind kind;      /* SYM_NONE if unknown */
  int index;                /* var slot, generic, function or builtin */
  const teeny_tyspec *type; /* SYM_VAR: its declared type */
} sym;

static void verr(resolver *r, teeny_diag_level lvl, teeny_loc loc,
                 const char *fmt, va_list ap) {
  char msg[640];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (lvl == TEENY_DIAG_NOTE)
    teeny__note_at(r->cx, loc, "%s", msg);
  else
    teeny__error_at(r->cx, loc, "%s", msg);
}

static void err(resolver *r, teeny_loc loc, const char *fmt, ...) TEENY_PRINTF(3, 4);
static void err(resolver *r, teeny_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verr(r, TEENY_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
}

static void note(resolver *r, teeny_loc loc, const char *fmt, ...) TEENY_PRINTF(3, 4);
static void note(resolver *r, teeny_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verr(r, TEENY_DIAG_NOTE, loc, fmt, ap);
  va_end(ap);
}

static bool stopped(const resolver *r) {
  return r->cx->nerrors >= TEENY_MAX_ERRORS;
}

static void *alloc(resolver *r, size_t n) {
  void *p = teeny__arena_alloc(r->cx->arena, n);
  if (!p) {
    teeny_loc none = {0, 0};
    teeny__error_at(r->cx, none, "out of memory");
    longjmp(r->oom, 1);
  }
  return p;
}

/* v (n elements of size bytes, *cap allocated) with room for one more. */
static void *grow(resolver *r, void *v, int n, int *cap, size_t size) {
  if (n < *cap)
    return v;
  int ncap = *cap ? *cap * 2 : 8;
  void *nv = alloc(r, size * (size_t)ncap);
  if (v)
    memcpy(nv, v, size * (size_t)n);
  *cap = ncap;
  return nv;
}

static bool loc_before(teeny_loc a, teeny_loc b) {
  return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* ---- name maps -------------------------------------------------------------------- */

static uint32_t hash_name(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* The value slot of key, or NULL. */
static int *map_find(const name_map *m, const char *key) {
  if (m->cap == 0)
    return NULL;
  uint32_t mask = (uint32_t)m->cap - 1;
  for (uint32_t i = hash_name(key) & mask;; i = (i + 1) & mask) {
    if (!m->keys[i])
      return NULL;
    if (strcmp(m->keys[i], key) == 0)
      return &m->vals[i];
  }
}

static void map_insert(name_map *m, const char *key, int val) {
  uint32_t mask = (uint32_t)m->cap - 1;
  uint32_t i = hash_name(key) & mask;
  while (m->keys[i])
    i = (i + 1) & mask;
  m->keys[i] = key;
  m->vals[i] = val;
  m->n++;
}

/* Set key's value, adding the key if new; the map stays at most half full. */
static void map_put(resolver *r, name_map *m, const char *key, int val) {
  int *v = map_find(m, key);
  if (v) {
    *v = val;
    return;
  }
  if (2 * (m->n + 1) > m->cap) {
    name_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->n = 0;
    m->keys = alloc(r, sizeof *m->keys * (size_t)m->cap);
    m->vals = alloc(r, sizeof *m->vals * (size_t)m->cap);
    for (int i = 0; i < old.cap; i++)
      if (old.keys[i])
        map_insert(m, old.keys[i], old.vals[i]);
  }
  map_insert(m, key, val);
}

static int map_get(const name_map *m, const char *key) {
  int *v = map_find(m, key);
  return v ? *v : -1;
}

/* ---- "did you mean" -------------------------------------------------------------- */

typedef struct suggestion {
  const char *name; /* the unknown name */
  const char *best; /* closest candidate so far, or NULL */
  int dist;         /* its edit distance */
} suggestion;

/* Levenshtein distance; names are at most TEENY_MAX_NAME_LEN bytes. */
static int edit_distance(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  if (na > TEENY_MAX_NAME_LEN || nb > TEENY_MAX_NAME_LEN)
    return TEENY_MAX_NAME_LEN + 1;
  int prev[TEENY_MAX_NAME_LEN + 1], cur[TEENY_MAX_NAME_LEN + 1];
  for (size_t j = 0; j <= nb; j++)
    prev[j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    cur[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      int del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, sizeof(int) * (nb + 1));
  }
  return prev[nb];
}

/* Keep cand if it is close to s->name: at most 2 edits, and fewer than
 * half the name's length (no "did you mean 'b'" for 'a'). */
static void consider(suggestion *s, const char *cand) {
  int d = edit_distance(s->name, cand);
  if (d == 0 || d > 2 || 2 * d >= (int)strlen(s->name))
    return;
  if (!s->best || d < s->dist) {
    s->best = cand;
    s->dist = d;
  }
}

static void consider_values(resolver *r, suggestion *s) {
  consider(s, "INFINITY");
  consider(s, "NAN");
  for (int i = r->nbinds - 1; i >= 0; i--)
    consider(s, r->binds[i].name);
  for (int i = 0; i < r->prog->ngenerics; i++)
    if (!r->prog->generics[i].is_dtype)
      consider(s, r->prog->generics[i].name);
}

static void consider_callables(resolver *r, suggestion *s) {
  for (int i = 0; i < r->prog->nfuncs; i++)
    if (!r->prog->funcs[i]->is_kernel)
      consider(s, r->prog->funcs[i]->name);
  for (int i = 0; i < BI__COUNT; i++)
    consider(s, builtins[i].name);
}

/* "unknown <what> 'x'", with "; did you mean 'y'?" when s found one. */
static void unknown(resolver *r, teeny_loc loc, const char *what,
                    const suggestion *s) {
  if (s->best)
    err(r, loc, "unknown %s '%s'; did you mean '%s'?", what, s->name, s->best);
  else
    err(r, loc, "unknown %s '%s'", what, s->name);
}

/* ---- scopes, slots, uses ------------------------------------------------------------ */

static sym lookup(const resolver *r, const char *name) {
  sym s = {SYM_NONE, -1, NULL};
  int b = map_get(&r->vars, name);
  if (b >= 0) {
    s.kind = SYM_VAR;
    s.index = r->binds[b].slot;
    s.type = r->binds[b].type;
  } else if ((s.index = map_get(&r->generics, name)) >= 0) {
    s.kind = SYM_GENERIC;
  } else if ((s.index = map_get(&r->funcs, name)) >= 0) {
    s.kind = SYM_FUNC;
  } else if ((s.index = teeny__builtin_find(name)) >= 0) {
    s.kind = SYM_BUILTIN;
  }
  return s;
}

/* What `name(...)` calls: a helper, else a builtin (a helper of the same
 * name shadows the builtin).  Variables and generics cannot be called, so
 * they do not hide either, as in C, where the builtins are macros of
 * teeny/dsl.h: `i32 program_id = program_id(0);` calls the builtin.  Only
 * when there is no function of the name is the variable or generic
 * returned, for the error. */
static sym lookup_callable(const resolver *r, const char *name) {
  sym s = {SYM_FUNC, map_get(&r->funcs, name), NULL};
  if (s.index >= 0)
    return s;
  if ((s.index = teeny__builtin_find(name)) >= 0) {
    s.kind = SYM_BUILTIN;
    return s;
  }
  return lookup(r, name);
}

/* INFINITY or NAN (see the file comment). */
static bool predefined_constant(const char *name) {
  return strcmp(name, "INFINITY") == 0 || strcmp(name, "NAN") == 0;
}

/* An option constant where a value belongs. */
static bool misplaced_option(resolver *r, const teeny_expr *e) {
  int o = teeny__option_find(e->name);
  if (o < 0)
    return false;
  err(r, e->loc, "'%s' is an option, not a value: write it as the last "
                 "argument of %s", e->name,
      options[o].group == OPTG_PREC ? "dot" : "an atomic");
  return true;
}

static void push_scope(resolver *r) { r->scope++; }

static void pop_scope(resolver *r) {
  while (r->nbinds > 0 && r->binds[r->nbinds - 1].scope == r->scope) {
    binding *b = &r->binds[--r->nbinds];
    map_put(r, &r->vars, b->name, b->shadowed);
  }
  r->scope--;
}

/* Declare a variable (or parameter) in the current scope; returns its new
 * var slot.  A second declaration in the same scope is an error. */
static int bind(resolver *r, const char *name, const teeny_tyspec *type, teeny_loc loc,
                bool param) {
  int top = map_get(&r->vars, name);
  if (top >= 0 && r->binds[top].scope == r->scope) {
    if (param)
      err(r, loc, "duplicate parameter '%s' in '%s'", name, r->fn->name);
    else
      err(r, loc, "redeclaration of '%s' in the same scope", name);
    note(r, r->binds[top].loc, "'%s' was declared here", name);
  }
  const teeny_struct *st = teeny__tyspec_struct(r->prog, type);
  int slot = r->nslots, n = st ? st->nleaves : 1;
  for (int i = 0; i < n; i++) { /* a struct: one slot per leaf, "w.mean" */
    r->slots = grow(r, (void *)r->slots, r->nslots, &r->scap, sizeof *r->slots);
    r->slots[r->nslots++] =
        st ? teeny__arena_printf(r->cx->arena, "%s.%s", name, st->leaf_name[i]) : name;
  }
  r->binds = grow(r, r->binds, r->nbinds, &r->bcap, sizeof *r->binds);
  binding *b = &r->binds[r->nbinds];
  b->name = name;
  b->slot = slot;
  b->type = type;
  b->scope = r->scope;
  b->loc = loc;
  b->shadowed = top;
  map_put(r, &r->vars, name, r->nbinds++);
  return slot;
}

/* A var slot no name refers to (a loop's break or continue flag). */
static int hidden_slot(resolver *r, const char *what) {
  r->slots = grow(r, (void *)r->slots, r->nslots, &r->scap, sizeof *r->slots);
  r->slots[r->nslots] = what;
  return r->nslots++;
}

static void use_generic(resolver *r, int g, teeny_loc loc) {
  func_info *fi = &r->info[r->fi];
  if (g < 0 || g >= 64 || (fi->direct & ((uint64_t)1 << g)))
    return;
  uint64_t bit = (uint64_t)1 << g;
  fi->direct |= bit;
  fi->uses = grow(r, fi->uses, fi->nuses, &fi->ucap, sizeof *fi->uses);
  fi->uses[fi->nuses].generic = g;
  fi->uses[fi->nuses++].loc = loc;
}

/* A type's generics: its own, or its struct's leaves'.  Block dims
 * (tensor_desc(T, B0, ..)) belong to kernel parameters only. */
static void use_type(resolver *r, const teeny_tyspec *ts) {
  if (ts && ts->ndblock)
    err(r, ts->loc, "a block shape in the type (tensor_desc(T, dims...)) is for kernel "
                    "parameters; a variable takes its block shape from make_tensor_descriptor");
  if (ts && ts->generic >= 0)
    use_generic(r, ts->generic, ts->loc);
  const teeny_struct *st = teeny__tyspec_struct(r->prog, ts);
  for (int i = 0; st && i < st->nleaves; i++)
    if (st->leaf_type[i]->generic >= 0)
      use_generic(r, st->leaf_type[i]->generic, ts->loc);
}

static void add_call(resolver *r, int callee, teeny_loc loc) {
  func_info *fi = &r->info[r->fi];
  fi->calls = grow(r, fi->calls, fi->ncalls, &fi->ccap, sizeof *fi->calls);
  fi->calls[fi->ncalls].callee = callee;
  fi->calls[fi->ncalls++].loc = loc;
}

/* ---- expressions ------------------------------------------------------------------ */

static void expr(resolver *r, teeny_expr *e, use_ctx ctx);

/* A name used as a value. */
static void name_expr(resolver *r, teeny_expr *e, use_ctx ctx) {
  if (e->type) { /* a dtype, as parse.c marked it */
    use_type(r, e->type);
    if (ctx != USE_DTYPE_ARG)
      err(r, e->loc, "'%s' is a dtype, not a value", e->name);
    return;
  }
  sym s = lookup(r, e->name);
  if (s.kind == SYM_GENERIC) {
    const teeny_generic *g = &r->prog->generics[s.index];
    if (g->is_dtype) {
      err(r, e->loc, "'%s' is used before its TEENY_DTYPE(...) declaration; "
                     "declare generics above their first use", e->name);
      return;
    }
    if (loc_before(e->loc, g->loc))
      err(r, e->loc, "'%s' is used before its TEENY_CONST(...) declaration; "
                     "declare generics above their first use", e->name);
    use_generic(r, s.index, e->loc);
  } else if (s.kind == SYM_FUNC) {
    err(r, e->loc, "'%s' is a function, not a value; call it as %s(...)",
        e->name, e->name);
  } else if (s.kind == SYM_BUILTIN) {
    err(r, e->loc, "'%s' is a builtin function, not a value", e->name);
  } else if (s.kind == SYM_NONE) {
    if (predefined_constant(e->name) || misplaced_option(r, e))
      return;
    suggestion sg = {e->name, NULL, 0};
    consider_values(r, &sg);
    unknown(r, e->loc, "name", &sg);
    return;
  }
  e->sym = s.kind;
  e->sym_index = s.index;
  if (s.kind == SYM_VAR)
    e->nslots = teeny__tyspec_slots(r->prog, s.type);
}

/* The declared type of a variable, or of a field of one (NULL: e is not
 * such, or is not resolved). */
static const teeny_tyspec *var_type(resolver *r, const teeny_expr *e) {
  if (e->kind == EX_NAME && e->sym == SYM_VAR)
    return lookup(r, e->name).type;
  if (e->kind == EX_MEMBER && e->sym == SYM_VAR)
    return e->type;
  return NULL;
}

/* lhs.name: on a variable (or a field of one) the field's slots are found
 * now (sym SYM_VAR, sym_index its first slot, nslots, type the field's
 * type, made a tile in a tile(S)); on any other struct value, irgen looks
 * the field up. */
static void member_expr(resolver *r, teeny_expr *e) {
  expr(r, e->lhs, USE_VALUE);
  const teeny_tyspec *t = var_type(r, e->lhs);
  if (!t)
    return;
  const teeny_struct *st = teeny__tyspec_struct(r->prog, t);
  if (!st) {
    err(r, e->loc, "'.%s' of a value that is not a struct (%s)", e->name,
        t->base ? t->base : "?");
    return;
  }
  for (int i = 0; i < st->nfields; i++) {
    const teeny_field *f = &st->fields[i];
    if (strcmp(f->name, e->name) != 0)
      continue;
    teeny_tyspec *ft = alloc(r, sizeof *ft);
    *ft = *f->type;
    ft->is_tile = ft->is_tile || t->is_tile;
    e->sym = SYM_VAR;
    e->sym_index = e->lhs->sym_index + f->leaf;
    e->nslots = f->nleaves;
    e->type = ft;
    return;
  }
  suggestion sg = {e->name, NULL, 0};
  for (int i = 0; i < st->nfields; i++)
    consider(&sg, st->fields[i].name);
  if (sg.best)
    err(r, e->loc, "%s has no field '%s'; did you mean '%s'?", st->name, e->name, sg.best);
  else
    err(r, e->loc, "%s has no field '%s'", st->name, e->name);
}

/* The target of an assignment or of ++/--: a variable, or a field of one. */
static void target(resolver *r, teeny_expr *t, const char *what) {
  if (t->kind == EX_MEMBER) {
    int before = r->cx->nerrors;
    expr(r, t, USE_VALUE);
    if (t->sym != SYM_VAR && r->cx->nerrors == before)
      err(r, t->loc, "the target of %s must be a variable or a field of one", what);
    return;
  }
  if (t->kind != EX_NAME || t->type) {
    err(r, t->loc, "the target of %s must be a variable", what);
    return;
  }
  sym s = lookup(r, t->name);
  switch (s.kind) {
  case SYM_VAR:
    t->sym = s.kind;
    t->sym_index = s.index;
    t->nslots = teeny__tyspec_slots(r->prog, s.type);
    return;
  case SYM_GENERIC:
    err(r, t->loc, "cannot assign to '%s': it is a generic, not a variable",
        t->name);
    return;
  case SYM_FUNC:
    err(r, t->loc, "cannot assign to function '%s'", t->name);
    return;
  case SYM_BUILTIN:
    err(r, t->loc, "cannot assign to builtin '%s'", t->name);
    return;
  default: {
    if (predefined_constant(t->name)) {
      err(r, t->loc, "cannot assign to constant '%s'", t->name);
      return;
    }
    suggestion sg = {t->name, NULL, 0};
    consider_values(r, &sg);
    unknown(r, t->loc, "name", &sg);
  }
  }
}

/* "'f' takes 2 arguments, but 3 were given" unless n is in [lo, hi]. */
static void check_arity(resolver *r, const teeny_expr *e, int lo, int hi) {
  if (e->nargs >= lo && (hi < 0 || e->nargs <= hi))
    return;
  const char *given = e->nargs == 1 ? "was" : "were";
  if (hi < 0)
    err(r, e->loc, "'%s' takes at least %d argument%s, but %d %s given", e->name, lo,
        lo == 1 ? "" : "s", e->nargs, given);
  else if (lo == hi)
    err(r, e->loc, "'%s' takes %d argument%s, but %d %s given", e->name, lo,
        lo == 1 ? "" : "s", e->nargs, given);
  else
    err(r, e->loc, "'%s' takes %d to %d arguments, but %d %s given", e->name,
        lo, hi, e->nargs, given);
}

/* The third argument of reduce/scan: a helper of two parameters. */
static void combine_fn(resolver *r, const teeny_expr *call, teeny_expr *a) {
  if (a->kind != EX_NAME || a->type) {
    err(r, a->loc, "the third argument of %s must name a helper function of "
                   "two parameters", call->name);
    return;
  }
  sym s = lookup_callable(r, a->name);
  if (s.kind == SYM_NONE) {
    suggestion sg = {a->name, NULL, 0};
    consider_callables(r, &sg);
    unknown(r, a->loc, "function", &sg);
    return;
  }
  if (s.kind != SYM_FUNC) {
    err(r, a->loc, "the combine function of %s must be a helper defined in "
                   "this file; '%s' is a %s", call->name, a->name,
        s.kind == SYM_BUILTIN ? "builtin" : s.kind == SYM_VAR ? "variable"
                                                              : "generic");
    return;
  }
  const teeny_func *f = r->prog->funcs[s.index];
  if (f->is_kernel)
    err(r, a->loc, "kernel '%s' cannot be called; only helpers can", a->name);
  else if (f->nparams != 2)
    err(r, a->loc, "the combine function '%s' of %s must take 2 parameters, "
                   "not %d", a->name, call->name, f->nparams);
  else if (f->ret->is_void)
    err(r, a->loc, "the combine function '%s' of %s must return a value",
        a->name, call->name);
  else {
    a->sym = SYM_FUNC;
    a->sym_index = s.index;
    add_call(r, s.index, a->loc);
  }
}

/* The first argument of zeros/full: a dtype, builtin or generic. */
static void dtype_arg(resolver *r, const teeny_expr *call, teeny_expr *a) {
  expr(r, a, USE_DTYPE_ARG);
  if (a->kind != EX_NAME || !a->type)
    err(r, a->loc, "the %s argument of %s must be a dtype (f32, D, ...)",
        call->sym_index == BI_BITCAST ? "second" : "first", call->name);
  else if (a->type->is_void || a->type->is_tile || a->type->is_ptr)
    err(r, a->loc, "the %s argument of %s must be a dtype, not '%s'",
        call->sym_index == BI_BITCAST ? "second" : "first", call->name, a->name);
}

/* The last argument of split / randint4x: the struct type of the result,
 * with n leaves (C has no tuples: `pair p = split(x, pair);`). */
static void struct_arg(resolver *r, const teeny_expr *call, teeny_expr *a, int n) {
  expr(r, a, USE_DTYPE_ARG);
  const teeny_struct *st = a->kind == EX_NAME && a->type ? teeny__tyspec_struct(r->prog, a->type)
                                                         : NULL;
  if (!st || a->type->is_tile || a->type->is_ptr || st->nleaves != n)
    err(r, a->loc, "the last argument of %s must be a struct type of %d fields for its "
                   "result (typedef struct { tile(T) %s; } S;)",
        call->name, n, n == 2 ? "a, b" : "w0, w1, w2, w3");
}

/* Option constants at the end of e's arguments: mark them SYM_OPTION and
 * check them (allowed for the builtin, one per group, nothing after them).
 * A name that is a variable or generic in scope is not an option. */
static void trailing_options(resolver *r, teeny_expr *e, int b) {
  unsigned allowed = teeny__builtin_option_groups((teeny_builtin)b), seen = 0;
  int first = -1;
  for (int i = 0; i < e->nargs; i++) {
    teeny_expr *a = e->args[i];
    int o = a->kind == EX_NAME && !a->type ? teeny__option_find(a->name) : -1;
    if (o < 0 || lookup(r, a->name).kind != SYM_NONE) {
      if (first >= 0)
        err(r, a->loc, "argument '%s' of %s comes after an option; options "
                       "(%s) go last", a->kind == EX_NAME ? a->name : "...",
            e->name, e->args[first]->name);
      continue;
    }
    const teeny_option_info *oi = &options[o];
    if (!(allowed & oi->group)) {
      if (allowed)
        err(r, a->loc, "%s takes no %s option; '%s' does not apply", e->name,
            group_name(oi->group), a->name);
      else
        err(r, a->loc, "%s takes no options; '%s' is an option of %s", e->name,
            a->name, group_owner(oi->group));
    } else if (seen & oi->group) {
      err(r, a->loc, "a second %s option ('%s') in one call of %s",
          group_name(oi->group), a->name, e->name);
    }
    else if (oi->group == OPTG_CACHE && !cache_fits(b, (teeny_cache)oi->value))
      err(r, a->loc, "%s takes no '%s': a %s's cache operators are %s", e->name, a->name,
          b == BI_LOAD || b == BI_LOAD_TENSOR_DESCRIPTOR ? "load" : "store",
          b == BI_LOAD || b == BI_LOAD_TENSOR_DESCRIPTOR ? "cache_ca, cache_cg, cache_cs and cache_cv"
                       : "cache_wb, cache_cg, cache_cs and cache_wt");
    seen |= oi->group;
    a->sym = SYM_OPTION;
    a->sym_index = o;
    if (first < 0)
      first = i;
  }
}

/* The position of b's message (a string literal), or -1. */
static int message_position(int b) {
  switch (b) {
  case BI_DEVICE_PRINT: return 0;
  case BI_DEVICE_ASSERT: case BI_STATIC_ASSERT: return 1;
  default: return -1;
  }
}

/* Builtins whose arguments may be dtypes as well as values. */
static bool takes_dtypes(int b) {
  return b == BI_IS_FLOAT || b == BI_IS_INT || b == BI_IS_SIGNED || b == BI_IS_UNSIGNED ||
         b == BI_SAME_DTYPE;
}

static void message_arg(resolver *r, const teeny_expr *call, const teeny_expr *a) {
  if (a->kind != EX_STRING)
    err(r, a->loc, "the message of %s must be a string literal (\"...\")", call->name);
}

static void builtin_call(resolver *r, teeny_expr *e, int b) {
  e->sym = SYM_BUILTIN;
  e->sym_index = b;
  trailing_options(r, e, b);
  int npos = teeny__call_positional(e);
  int given = e->nargs;
  e->nargs = npos; /* arity counts positional arguments */
  check_arity(r, e, builtins[b].minargs, builtins[b].maxargs);
  e->nargs = given;
  bool dtype_first = b == BI_ZEROS || b == BI_FULL;
  bool dtype_second = b == BI_BITCAST;
  bool fn_third = b == BI_REDUCE || b == BI_SCAN;
  int msg = message_position(b);
  for (int i = 0; i < npos && !stopped(r); i++) {
    if ((i == 0 && dtype_first) || (i == 1 && dtype_second))
      dtype_arg(r, e, e->args[i]);
    else if (i == 2 && fn_third)
      combine_fn(r, e, e->args[i]);
    else if ((b == BI_SPLIT && i == 1) || (b == BI_RANDINT4X && i == 2))
      struct_arg(r, e, e->args[i], b == BI_SPLIT ? 2 : 4);
    else if (i == msg)
      message_arg(r, e, e->args[i]);
    else
      expr(r, e->args[i], takes_dtypes(b) ? USE_DTYPE_ARG : USE_VALUE);
  }
}

static void call_expr(resolver *r, teeny_expr *e) {
  sym s = lookup_callable(r, e->name);
  if (s.kind == SYM_BUILTIN) {
    builtin_call(r, e, s.index);
    return;
  }
  if (s.kind == SYM_FUNC) {
    const teeny_func *f = r->prog->funcs[s.index];
    if (f->is_kernel) {
      err(r, e->loc, "kernel '%s' cannot be called; only helpers can", e->name);
    } else {
      check_arity(r, e, f->nparams, f->nparams);
      e->sym = SYM_FUNC;
      e->sym_index = s.index;
      add_call(r, s.index, e->loc);
    }
  } else if (s.kind == SYM_VAR) {
    err(r, e->loc, "'%s' is a variable, not a function", e->name);
  } else if (s.kind == SYM_GENERIC) {
    err(r, e->loc, "'%s' is a generic, not a function", e->name);
  } else {
    suggestion sg = {e->name, NULL, 0};
    consider_callables(r, &sg);
    unknown(r, e->loc, "function", &sg);
  }
  for (int i = 0; i < e->nargs && !stopped(r); i++)
    expr(r, e->args[i], USE_VALUE);
}

static void expr(resolver *r, teeny_expr *e, use_ctx ctx) {
  if (!e || stopped(r))
    return;
  switch (e->kind) {
  case EX_INT:
  case EX_FLOAT:
  case EX_BOOL:
    return;
  case EX_NAME:
    name_expr(r, e, ctx);
    return;
  case EX_UNARY:
    expr(r, e->lhs, USE_VALUE);
    return;
  case EX_BINARY:
    expr(r, e->lhs, USE_VALUE);
    expr(r, e->rhs, USE_VALUE);
    return;
  case EX_COND:
    expr(r, e->cond, USE_VALUE);
    expr(r, e->lhs, USE_VALUE);
    expr(r, e->rhs, USE_VALUE);
    return;
  case EX_CAST:
    use_type(r, e->type);
    expr(r, e->lhs, USE_VALUE);
    return;
  case EX_CALL:
    call_expr(r, e);
    return;
  case EX_ASSIGN:
    if (ctx != USE_STMT)
      err(r, e->loc, "assignment inside an expression is not supported; make "
                     "it a statement");
    target(r, e->lhs, "an assignment");
    expr(r, e->rhs, USE_VALUE);
    return;
  case EX_INCDEC:
    if (ctx != USE_STMT)
      err(r, e->loc, "assignment ('%s') inside an expression is not "
                     "supported; make it a statement",
          e->op == OP_ADD ? "++" : "--");
    target(r, e->lhs, e->op == OP_ADD ? "'++'" : "'--'");
    return;
  case EX_STRING:
    err(r, e->loc, "a string literal can only be the message of device_print, "
                   "device_assert or static_assert");
    return;
  case EX_MEMBER:
    member_expr(r, e);
    return;
  case EX_INIT: /* designators are checked against the struct in irgen */
    use_type(r, e->type);
    for (int i = 0; i < e->nargs && !stopped(r); i++)
      expr(r, e->args[i], USE_VALUE);
    return;
  case EX_SIZEOF: /* sizeof(T) or sizeof x: a dtype or a value */
    use_type(r, e->type);
    expr(r, e->lhs, USE_DTYPE_ARG);
    return;
  }
}

/* ---- statements -------------------------------------------------------------------- */

static void stmt(resolver *r, teeny_stmt *st);

static void block_items(resolver *r, teeny_stmt *blk) {
  for (int i = 0; i < blk->nbody && !stopped(r); i++)
    stmt(r, blk->body[i]);
}

/* A declaration's name is in scope from its declarator on, as in C: an
 * initializer that reads the variable reads the new one. */
static void decl(resolver *r, teeny_stmt *st) {
  use_type(r, st->type);
  st->var = bind(r, st->name, st->type, st->name_loc, false);
  expr(r, st->expr, USE_VALUE);
}

static void return_stmt(resolver *r, teeny_stmt *st) {
  if (st->expr && r->fn->ret->is_void)
    err(r, st->expr->loc, "'return' with a value in '%s', which returns void",
        r->fn->name);
  else if (!st->expr && !r->fn->ret->is_void)
    err(r, st->loc, "'return' without a value in '%s', which returns a value",
        r->fn->name);
  expr(r, st->expr, USE_VALUE);
}

/* The body of loop st: break and continue inside it (and not inside a
 * loop nested in it) are st's. */
static void loop_body(resolver *r, teeny_stmt *st) {
  r->loops = grow(r, r->loops, r->nloops, &r->lcap, sizeof *r->loops);
  r->loops[r->nloops++] = st;
  stmt(r, st->loop);
  r->nloops--;
}

/* break/continue: the innermost loop's flag slot (made at its first use). */
static void jump_stmt(resolver *r, teeny_stmt *st) {
  bool brk = st->kind == ST_BREAK;
  if (r->nloops == 0) {
    err(r, st->loc, "'%s' outside a loop", brk ? "break" : "continue");
    return;
  }
  teeny_stmt *loop = r->loops[r->nloops - 1];
  int *flag = brk ? &loop->brk_slot : &loop->cont_slot;
  if (*flag < 0)
    *flag = hidden_slot(r, brk ? "(break)" : "(continue)");
  st->var = *flag;
}

static void stmt(resolver *r, teeny_stmt *st) {
  if (!st || stopped(r))
    return;
  switch (st->kind) {
  case ST_BLOCK:
    if (st->scoped)
      push_scope(r);
    block_items(r, st);
    if (st->scoped)
      pop_scope(r);
    return;
  case ST_DECL:
    decl(r, st);
    return;
  case ST_EXPR:
    expr(r, st->expr, USE_STMT);
    return;
  case ST_IF:
    expr(r, st->cond, USE_VALUE);
    stmt(r, st->then);
    stmt(r, st->els);
    return;
  case ST_FOR: /* the init declaration is scoped to the loop */
    push_scope(r);
    stmt(r, st->init);
    expr(r, st->cond, USE_VALUE);
    expr(r, st->step, USE_STMT);
    loop_body(r, st);
    pop_scope(r);
    return;
  case ST_WHILE:
    expr(r, st->cond, USE_VALUE);
    loop_body(r, st);
    return;
  case ST_DO:
    loop_body(r, st);
    expr(r, st->cond, USE_VALUE);
    return;
  case ST_RETURN:
    return_stmt(r, st);
    return;
  case ST_BREAK:
  case ST_CONTINUE:
    jump_stmt(r, st);
    return;
  case ST_EMPTY:
    return;
  }
}

/* A loop condition written as always true: none (for (;;)), or a nonzero
 * literal (while (1), while (true)). */
static bool cond_always_true(const teeny_expr *c) {
  return !c || ((c->kind == EX_INT || c->kind == EX_BOOL) && c->ival != 0);
}

/* Does st return on every path?  A list does if its last statement does;
 * an if/else does if both branches do; a loop that cannot end but by a
 * return (always-true condition, no break) does, as in C.  Other loops
 * never count (their body may not run), and other constant conditions are
 * not special. */
static bool always_returns(const teeny_stmt *st) {
  if (!st)
    return false;
  switch (st->kind) {
  case ST_RETURN:
    return true;
  case ST_FOR:
  case ST_WHILE:
  case ST_DO:
    return cond_always_true(st->cond) && st->brk_slot < 0;
  case ST_BLOCK:
    return st->nbody > 0 && always_returns(st->body[st->nbody - 1]);
  case ST_IF:
    return st->els && always_returns(st->then) && always_returns(st->els);
  default:
    return false;
  }
}

static void kernel_signature(resolver *r, const teeny_func *f) {
  if (!f->ret->is_void)
    err(r, f->ret->loc, "kernel '%s' must return void", f->name);
  for (int i = 0; i < f->nparams; i++) {
    const teeny_tyspec *ts = f->params[i].type;
    const teeny_struct *st = teeny__tyspec_struct(r->prog, ts);
    if (st && st->desc == TEENY_DESC_TENSOR && !ts->ndblock)
      err(r, f->params[i].loc, "kernel parameter '%s' needs its block shape in the type: "
                               "tensor_desc(T, B0, B1, ..), constant powers of two",
          f->params[i].name);
    else if (ts->is_tile || (ts->strct >= 0 && !ts->ndblock))
      err(r, f->params[i].loc, "kernel parameter '%s' cannot be a %s; "
                               "kernels take scalars, pointers and tensor descriptors",
          f->params[i].name, ts->strct >= 0 ? "struct" : "tile");
  }
}

/* A kernel parameter's type: its generics, and the block dims of a
 * tensor_desc(T, B0, ..) (constant expressions of the generics). */
static void param_type(resolver *r, const teeny_func *f, teeny_tyspec *ts) {
  if (!f->is_kernel || !ts->ndblock) {
    use_type(r, ts);
    return;
  }
  int n = ts->ndblock;
  ts->ndblock = 0; /* use_type's check is for other places */
  use_type(r, ts);
  ts->ndblock = n;
  for (int d = 0; d < n; d++)
    expr(r, ts->dblock[d], USE_VALUE);
}

static void resolve_func(resolver *r, int fi) {
  teeny_func *f = r->prog->funcs[fi];
  r->fi = fi;
  r->fn = f;
  r->slots = NULL;
  r->nslots = r->scap = 0;
  r->nloops = 0;
  use_type(r, f->ret);
  push_scope(r); /* parameters and the body's outermost block share it */
  for (int i = 0; i < f->nparams; i++) {
    param_type(r, f, f->params[i].type);
    f->params[i].var = bind(r, f->params[i].name, f->params[i].type, f->params[i].loc, true);
  }
  block_items(r, f->body);
  pop_scope(r);
  f->nvars = r->nslots;
  f->var_names = r->slots;
  if (f->is_kernel)
    kernel_signature(r, f);
  else if (!f->ret->is_void && !always_returns(f->body))
    err(r, f->loc, "non-void helper '%s' may reach the end of its body "
                   "without returning a value", f->name);
}

/* ---- file-level checks -------------------------------------------------------------- */

static void check_generic_names(resolver *r) {
  for (int i = 0; i < r->prog->ngenerics; i++) {
    const teeny_generic *g = &r->prog->generics[i];
    int prev = map_get(&r->generics, g->name);
    if (prev >= 0) {
      err(r, g->loc, "redefinition of generic '%s'", g->name);
      note(r, r->prog->generics[prev].loc, "'%s' was first declared here",
           g->name);
    } else {
      map_put(r, &r->generics, g->name, i);
    }
  }
}

static void check_func_names(resolver *r) {
  for (int i = 0; i < r->prog->nfuncs; i++) {
    const teeny_func *f = r->prog->funcs[i];
    int g = map_get(&r->generics, f->name);
    int prev = map_get(&r->funcs, f->name);
    if (g >= 0) {
      err(r, f->loc, "function '%s' has the name of a generic", f->name);
      note(r, r->prog->generics[g].loc, "'%s' is declared here", f->name);
    } else if (prev >= 0) {
      err(r, f->loc, "redefinition of function '%s'", f->name);
      note(r, r->prog->funcs[prev]->loc, "'%s' was first defined here",
           f->name);
    } else {
      map_put(r, &r->funcs, f->name, i);
    }
  }
}

/* Append printf-style to buf (size bytes, *len used), silently truncating. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
    TEENY_PRINTF(4, 5);
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...) {
  if (*len + 1 >= size)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *len, size - *len, fmt, ap);
  va_end(ap);
  if (n > 0)
    *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

static void generic_list(const resolver *r, const teeny_func *f, char *buf,
                         size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < f->nkgenerics; i++)
    append(buf, size, &len, "%s%s", i ? ", " : "",
           r->prog->generics[f->kgenerics[i]].name);
}

/* The kernel a TEENY_BACKWARD pair names, or -1 after an error. */
static int backward_kernel(resolver *r, const char *name, teeny_loc loc) {
  int f = map_get(&r->funcs, name);
  if (f < 0) {
    suggestion sg = {name, NULL, 0};
    for (int i = 0; i < r->prog->nfuncs; i++)
      consider(&sg, r->prog->funcs[i]->name);
    if (sg.best)
      err(r, loc, "TEENY_BACKWARD names '%s', which is not a function in this "
                  "file; did you mean '%s'?", name, sg.best);
    else
      err(r, loc, "TEENY_BACKWARD names '%s', which is not a function in this "
                  "file", name);
    return -1;
  }
  if (!r->prog->funcs[f]->is_kernel) {
    err(r, loc, "'%s' in TEENY_BACKWARD(...) is not a kernel; mark it with "
                "TEENY_KERNEL(...)", name);
    return -1;
  }
  return f;
}

static bool same_generics(const teeny_func *a, const teeny_func *b) {
  if (a->nkgenerics != b->nkgenerics)
    return false;
  for (int i = 0; i < a->nkgenerics; i++)
    if (a->kgenerics[i] != b->kgenerics[i])
      return false;
  return true;
}

static void check_backwards(resolver *r) {
  for (int i = 0; i < r->prog->nbackwards && !stopped(r); i++) {
    const teeny_backward_decl *b = &r->prog->backwards[i];
    int fi = backward_kernel(r, b->fwd, b->fwd_loc);
    int bi = backward_kernel(r, b->bwd, b->bwd_loc);
    if (fi < 0 || bi < 0)
      continue;
    teeny_func *fwd = r->prog->funcs[fi], *bwd = r->prog->funcs[bi];
    char la[512], lb[512];
    generic_list(r, fwd, la, sizeof la);
    generic_list(r, bwd, lb, sizeof lb);
    if (fi == bi)
      err(r, b->bwd_loc, "kernel '%s' cannot be its own backward kernel",
          b->bwd);
    else if (!same_generics(fwd, bwd))
      err(r, b->bwd_loc, "TEENY_BACKWARD(%s, %s): the kernels' generic lists "
                         "differ: TEENY_KERNEL(%s) and TEENY_KERNEL(%s)",
          b->fwd, b->bwd, la, lb);
    else if (fwd->backward >= 0)
      err(r, b->fwd_loc, "kernel '%s' already has a backward kernel ('%s')",
          b->fwd, r->prog->funcs[fwd->backward]->name);
    else
      fwd->backward = bi;
  }
}

/* Report the cycle closed by call c: stack[from..n-1] then c's callee. */
static void report_cycle(resolver *r, const int *stack, int n,
                         const call_edge *c) {
  int from = n - 1;
  while (from > 0 && stack[from] != c->callee)
    from--;
  char path[600];
  size_t len = 0;
  path[0] = '\0';
  for (int i = from; i < n; i++) {
    if (i - from == 8 && n - from > 9) {
      append(path, sizeof path, &len, "... -> ");
      i = n - 1;
    }
    append(path, sizeof path, &len, "'%s' -> ", r->prog->funcs[stack[i]]->name);
  }
  append(path, sizeof path, &len, "'%s'", r->prog->funcs[c->callee]->name);
  err(r, c->loc, "recursive call: %s; helpers are inlined and cannot recurse",
      path);
}

/* Depth-first search of the call graph with an explicit stack.  Reports the
 * first cycle and returns false; otherwise fills every info[].all (a
 * function's generics, its callees' included) in post-order and returns
 * true. */
static bool check_recursion(resolver *r) {
  int n = r->prog->nfuncs;
  if (n == 0)
    return true;
  enum { WHITE, GREY, BLACK };
  unsigned char *color = alloc(r, (size_t)n);
  int *stack = alloc(r, sizeof *stack * (size_t)n);
  int *next = alloc(r, sizeof *next * (size_t)n); /* next edge of stack[i] */
  for (int root = 0; root < n; root++) {
    if (color[root] != WHITE)
      continue;
    int sp = 0;
    stack[sp] = root;
    next[sp++] = 0;
    color[root] = GREY;
    while (sp > 0) {
      func_info *fi = &r->info[stack[sp - 1]];
      if (next[sp - 1] < fi->ncalls) {
        const call_edge *c = &fi->calls[next[sp - 1]++];
        if (color[c->callee] == GREY) {
          report_cycle(r, stack, sp, c);
          return false;
        }
        if (color[c->callee] == WHITE) {
          color[c->callee] = GREY;
          stack[sp] = c->callee;
          next[sp++] = 0;
        }
        continue;
      }
      fi->all = fi->direct;
      for (int i = 0; i < fi->ncalls; i++)
        fi->all |= r->info[fi->calls[i].callee].all;
      color[stack[--sp]] = BLACK;
    }
  }
  return true;
}

/* Kernel k uses generic g but does not list it: say where it comes from. */
static void unlisted_generic(resolver *r, const teeny_func *k, int ki, int g) {
  const func_info *fi = &r->info[ki];
  const char *gname = r->prog->generics[g].name;
  for (int i = 0; i < fi->nuses; i++) {
    if (fi->uses[i].generic == g) {
      err(r, fi->uses[i].loc, "kernel '%s' uses generic '%s' but "
                              "TEENY_KERNEL(...) does not list it",
          k->name, gname);
      note(r, k->kernel_loc, "add '%s' to this TEENY_KERNEL(...)", gname);
      return;
    }
  }
  for (int i = 0; i < fi->ncalls; i++) {
    const call_edge *c = &fi->calls[i];
    if (r->info[c->callee].all & ((uint64_t)1 << g)) {
      err(r, c->loc, "kernel '%s' uses generic '%s' (through helper '%s') but "
                     "TEENY_KERNEL(...) does not list it",
          k->name, gname, r->prog->funcs[c->callee]->name);
      note(r, k->kernel_loc, "add '%s' to this TEENY_KERNEL(...)", gname);
      return;
    }
  }
}

static void check_kernel_generics(resolver *r) {
  for (int ki = 0; ki < r->prog->nfuncs && !stopped(r); ki++) {
    const teeny_func *k = r->prog->funcs[ki];
    if (!k->is_kernel)
      continue;
    uint64_t listed = 0;
    for (int i = 0; i < k->nkgenerics; i++)
      listed |= (uint64_t)1 << k->kgenerics[i];
    uint64_t missing = r->info[ki].all & ~listed;
    for (int g = 0; g < r->prog->ngenerics && g < 64; g++)
      if (missing & ((uint64_t)1 << g))
        unlisted_generic(r, k, ki, g);
  }
}

int teeny__resolve(teeny_ctx *cx, teeny_program *prog) {
  int before = cx->nerrors;
  resolver *r = teeny__arena_alloc(cx->arena, sizeof *r);
  if (!r) {
    teeny_loc none = {0, 0};
    teeny__error_at(cx, none, "out of memory");
    return TEENY_E_COMPILE;
  }
  r->cx = cx;
  r->prog = prog;
  if (setjmp(r->oom))
    return TEENY_E_COMPILE;
  r->info = alloc(r, sizeof *r->info * (size_t)(prog->nfuncs + 1));
  check_generic_names(r);
  check_func_names(r);
  for (int i = 0; i < prog->nfuncs && !stopped(r); i++)
    resolve_func(r, i);
  check_backwards(r);
  if (!stopped(r) && check_recursion(r))
    check_kernel_generics(r);
  return cx->nerrors > before ? TEENY_E_COMPILE : 0;
}
