/*
 * tests/diff/ast.c — the program tree of ast.h: its arena, node
 * constructors, the symbolic dim table, and the printer that turns a tree
 * (skipping statements the reducer marked dead) into kernel source.
 * Expressions print fully parenthesised, so no precedence is ever in doubt.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/diff/ast.h"

/* ---- arena ------------------------------------------------------------------------ */

typedef struct dfz_chunk {
  struct dfz_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} dfz_chunk;

void *dfz_alloc(dfz_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (!a->head || a->head->used + n > a->head->cap) {
    size_t cap = n > 65536 ? n : 65536;
    dfz_chunk *c = malloc(sizeof *c + cap);
    if (!c) {
      fputs("difffuzz: out of memory\n", stderr);
      abort();
    }
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = a->head->data + a->head->used;
  a->head->used += n;
  memset(p, 0, n);
  return p;
}

char *dfz_strdup(dfz_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = dfz_alloc(a, n);
  memcpy(d, s, n);
  return d;
}

char *dfz_printf(dfz_arena *a, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return dfz_strdup(a, buf);
}

void dfz_arena_free(dfz_arena *a) {
  while (a->head) {
    dfz_chunk *n = a->head->next;
    free(a->head);
    a->head = n;
  }
}

/* ---- nodes -------------------------------------------------------------------------- */

dfz_expr *dfz_expr_new(dfz_prog *p, dfz_ekind kind, dfz_op op, teeny_dtype dt, dfz_shape sh) {
  dfz_expr *e = dfz_alloc(&p->arena, sizeof *e);
  e->kind = kind;
  e->op = op;
  e->dt = dt;
  e->sh = sh;
  e->iarg = -100;
  return e;
}

dfz_stmt *dfz_stmt_new(dfz_prog *p, dfz_skind kind) {
  dfz_stmt *s = dfz_alloc(&p->arena, sizeof *s);
  s->kind = kind;
  s->aop = "=";
  s->step = 1;
  return s;
}

void dfz_block_add(dfz_prog *p, dfz_block *b, dfz_stmt *s) {
  if (b->n == b->cap) {
    int cap = b->cap ? 2 * b->cap : 8;
    dfz_stmt **v = dfz_alloc(&p->arena, sizeof *v * (size_t)cap);
    if (b->n)
      memcpy(v, b->v, sizeof *v * (size_t)b->n);
    b->v = v;
    b->cap = cap;
  }
  b->v[b->n++] = s;
}

dfz_func *dfz_func_new(dfz_prog *p, const char *name, const char *sig, bool is_kernel) {
  dfz_func *f = dfz_alloc(&p->arena, sizeof *f);
  f->name = dfz_strdup(&p->arena, name);
  f->sig = dfz_strdup(&p->arena, sig);
  f->is_kernel = is_kernel;
  if (p->nfuncs < (int)(sizeof p->funcs / sizeof p->funcs[0]))
    p->funcs[p->nfuncs++] = f;
  return f;
}

/* ---- dims ----------------------------------------------------------------------------- */

static void dim_text(const dfz_prog *p, dfz_dim *d) {
  char a[DFZ_NAME_LEN + 4] = "", b[DFZ_NAME_LEN + 4] = "";
  if (d->ca >= 0)
    snprintf(a, sizeof a, "%s", p->meta.consts[d->ca].name);
  if (d->cb >= 0)
    snprintf(b, sizeof b, "%s", p->meta.consts[d->cb].name);
  if (d->ca < 0 && d->cb < 0)
    snprintf(d->text, sizeof d->text, "%d", d->mul);
  else if (d->mul == 1)
    snprintf(d->text, sizeof d->text, "%s%s%s", a, *a && *b ? " * " : "", b);
  else
    snprintf(d->text, sizeof d->text, "%d * %s%s%s", d->mul, a, *a && *b ? " * " : "", b);
}

static int dim_value(const dfz_prog *p, const dfz_dim *d) {
  long v = d->mul;
  if (d->ca >= 0)
    v *= p->meta.consts[d->ca].value;
  if (d->cb >= 0)
    v *= p->meta.consts[d->cb].value;
  return (int)v;
}

int dfz_dim_get(dfz_prog *p, int ca, int cb, int mul) {
  if (ca < 0 && cb >= 0) {
    ca = cb;
    cb = -1;
  }
  if (cb >= 0 && cb < ca) {
    int t = ca;
    ca = cb;
    cb = t;
  }
  for (int i = 0; i < p->ndims; i++)
    if (p->dims[i].ca == ca && p->dims[i].cb == cb && p->dims[i].mul == mul)
      return i;
  if (p->ndims == DFZ_MAX_DIMS)
    return DFZ_DIM_ONE; /* the generator checks dims it gets back */
  dfz_dim *d = &p->dims[p->ndims];
  d->ca = ca;
  d->cb = cb;
  d->mul = mul;
  dim_text(p, d);
  d->value = dim_value(p, d);
  return p->ndims++;
}

void dfz_dims_update(dfz_prog *p) {
  for (int i = 0; i < p->ndims; i++)
    p->dims[i].value = dim_value(p, &p->dims[i]);
}

bool dfz_shape_eq(dfz_shape a, dfz_shape b) {
  if (a.rank != b.rank)
    return false;
  for (int i = 0; i < a.rank; i++)
    if (a.d[i] != b.d[i])
      return false;
  return true;
}

bool dfz_shape_broadcast(dfz_shape a, dfz_shape b, dfz_shape *out) {
  dfz_shape r;
  r.rank = a.rank > b.rank ? a.rank : b.rank;
  r.d[0] = r.d[1] = DFZ_DIM_ONE;
  for (int i = 0; i < r.rank; i++) {
    int ia = a.rank - 1 - i, ib = b.rank - 1 - i, ir = r.rank - 1 - i;
    int da = ia >= 0 ? a.d[ia] : DFZ_DIM_ONE, db = ib >= 0 ? b.d[ib] : DFZ_DIM_ONE;
    if (da != db && da != DFZ_DIM_ONE && db != DFZ_DIM_ONE)
      return false;
    r.d[ir] = da == DFZ_DIM_ONE ? db : da;
  }
  *out = r;
  return true;
}

bool dfz_shape_fits(dfz_shape a, dfz_shape into) {
  dfz_shape r;
  return dfz_shape_broadcast(a, into, &r) && dfz_shape_eq(r, into);
}

long dfz_shape_elems(const dfz_prog *p, dfz_shape s) {
  long n = 1;
  for (int i = 0; i < s.rank; i++)
    n *= p->dims[s.d[i]].value;
  return n;
}

/* ---- printing -------------------------------------------------------------------------- */

typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s) {
  size_t k = strlen(s);
  if (b->n + k + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->n + k + 1 > cap)
      cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      fputs("difffuzz: out of memory\n", stderr);
      abort();
    }
    b->s = ns;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, k + 1);
  b->n += k;
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  sb_put(b, tmp);
}

static const char *const op_texts[OP__COUNT] = {
    [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_REM] = "%",
    [OP_SHL] = "<<", [OP_SHR] = ">>", [OP_AND] = "&", [OP_OR] = "|", [OP_XOR] = "^",
    [OP_LAND] = "&&", [OP_LOR] = "||", [OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",
    [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=", [OP_NEG] = "-", [OP_BNOT] = "~",
    [OP_LNOT] = "!", [OP_WHERE] = "where", [OP_MINIMUM] = "minimum", [OP_MAXIMUM] = "maximum",
    [OP_ABS] = "abs", [OP_EXP] = "exp", [OP_EXP2] = "exp2", [OP_LOG] = "log",
    [OP_LOG2] = "log2", [OP_SQRT] = "sqrt", [OP_RSQRT] = "rsqrt", [OP_SIN] = "sin",
    [OP_COS] = "cos", [OP_TANH] = "tanh", [OP_SIGMOID] = "sigmoid", [OP_ERF] = "erf", [OP_ATAN] = "atan",
    [OP_FLOOR] = "floor", [OP_CEIL] = "ceil", [OP_FMA] = "fma", [OP_CDIV] = "cdiv",
    [OP_SUM] = "sum", [OP_MAX] = "max", [OP_MIN] = "min", [OP_ARGMAX] = "argmax",
    [OP_ARGMIN] = "argmin", [OP_REDUCE] = "reduce", [OP_CUMSUM] = "cumsum", [OP_SCAN] = "scan",
    [OP_DOT] = "dot", [OP_LOAD] = "load", [OP_ATOMIC_ADD] = "atomic_add",
    [OP_ATOMIC_MAX] = "atomic_max", [OP_ATOMIC_MIN] = "atomic_min",
    [OP_ATOMIC_XCHG] = "atomic_xchg", [OP_ATOMIC_CAS] = "atomic_cas", [OP_STORE] = "store",
    [OP_ARANGE] = "arange", [OP_ZEROS] = "zeros", [OP_FULL] = "full", [OP_COL] = "col",
    [OP_ROW] = "row", [OP_EXPAND_DIMS] = "expand_dims", [OP_BROADCAST_TO] = "broadcast_to",
    [OP_RESHAPE] = "reshape", [OP_TRANS] = "trans", [OP_JOIN] = "join",
    [OP_INTERLEAVE] = "interleave", [OP_CAT] = "cat", [OP_RAVEL] = "ravel",
    [OP_HISTOGRAM] = "histogram", [OP_GATHER] = "gather", [OP_FLIP] = "flip",
    [OP_SORT] = "sort", [OP_PERMUTE] = "permute", [OP_PROGRAM_ID] = "program_id",
    [OP_NUM_PROGRAMS] = "num_programs", [OP_BARRIER] = "barrier", [OP_FAST_EXP] = "fast_exp",
    [OP_FAST_EXP2] = "fast_exp2", [OP_FAST_LOG] = "fast_log", [OP_FAST_LOG2] = "fast_log2",
    [OP_FAST_SIN] = "fast_sin", [OP_FAST_COS] = "fast_cos", [OP_FAST_TANH] = "fast_tanh",
    [OP_LOAD_DESC] = "load_tensor_descriptor", [OP_STORE_DESC] = "store_tensor_descriptor",
    [OP_CALL] = "call"};

const char *dfz_op_text(dfz_op op) {
  return op >= 0 && op < OP__COUNT && op_texts[op] ? op_texts[op] : "?";
}

const char *dfz_dtype_text(const dfz_prog *p, teeny_dtype dt) {
  if (p && p->meta.gname[0] && dt == p->meta.gdt)
    return p->meta.gname;
  return teeny_dtype_name(dt);
}

void dfz_type_text(const dfz_prog *p, teeny_dtype dt, teeny_dtype pointee, bool tile, char *out,
                   size_t size) {
  char base[48];
  if (dt == TEENY_DT_PTR)
    snprintf(base, sizeof base, "ptr(%s)", dfz_dtype_text(p, pointee));
  else
    snprintf(base, sizeof base, "%s", dfz_dtype_text(p, dt));
  if (tile)
    snprintf(out, size, "tile(%s)", base);
  else
    snprintf(out, size, "%s", base);
}

static void print_dims(sbuf *b, const dfz_prog *p, dfz_shape sh) {
  for (int i = 0; i < sh.rank; i++)
    sb_printf(b, "%s%s", i ? ", " : "", p->dims[sh.d[i]].text);
}

static void print_expr(sbuf *b, const dfz_prog *p, const dfz_expr *e);

static void print_args(sbuf *b, const dfz_prog *p, const dfz_expr *e, int from) {
  for (int i = from; i < e->n; i++) {
    if (i > from)
      sb_put(b, ", ");
    print_expr(b, p, e->a[i]);
  }
}

static void print_call(sbuf *b, const dfz_prog *p, const dfz_expr *e) {
  const char *name = e->op == OP_CALL ? e->text : dfz_op_text(e->op);
  sb_printf(b, "%s(", name);
  switch (e->op) {
  case OP_ARANGE:
    sb_printf(b, "0, %s", p->dims[e->sh.d[0]].text);
    break;
  case OP_ZEROS:
    sb_printf(b, "%s, ", dfz_dtype_text(p, e->dt));
    print_dims(b, p, e->sh);
    break;
  case OP_FULL:
    sb_printf(b, "%s, ", dfz_dtype_text(p, e->dt));
    print_expr(b, p, e->a[0]);
    sb_put(b, ", ");
    print_dims(b, p, e->sh);
    break;
  case OP_BROADCAST_TO:
  case OP_RESHAPE:
    print_expr(b, p, e->a[0]);
    sb_put(b, ", ");
    print_dims(b, p, e->sh);
    break;
  case OP_EXPAND_DIMS:
  case OP_ARGMAX:
  case OP_ARGMIN:
    print_expr(b, p, e->a[0]);
    sb_printf(b, ", %d", e->iarg);
    break;
  case OP_PROGRAM_ID:
  case OP_NUM_PROGRAMS:
    sb_printf(b, "%d", e->iarg);
    break;
  case OP_SUM:
  case OP_MAX:
  case OP_MIN:
  case OP_CUMSUM:
    print_expr(b, p, e->a[0]);
    if (e->iarg != -100)
      sb_printf(b, ", %d", e->iarg);
    break;
  case OP_REDUCE:
  case OP_SCAN:
    print_expr(b, p, e->a[0]);
    sb_printf(b, ", %d, %s", e->iarg, e->text);
    break;
  case OP_PERMUTE:
  case OP_TRANS:
    print_expr(b, p, e->a[0]);
    if (e->op == OP_PERMUTE || e->a[0]->sh.rank > 2)
      for (int i = 0; i < e->a[0]->sh.rank; i++)
        sb_printf(b, ", %d", e->iarg >> (2 * i) & 3);
    break;
  case OP_GATHER:
  case OP_FLIP:
    print_args(b, p, e, 0);
    if (e->op == OP_GATHER || e->iarg != -100)
      sb_printf(b, ", %d", e->iarg);
    break;
  case OP_HISTOGRAM:
    print_expr(b, p, e->a[0]);
    sb_printf(b, ", %s", p->dims[e->sh.d[0]].text);
    if (e->n > 1) {
      sb_put(b, ", ");
      print_expr(b, p, e->a[1]);
    }
    break;
  default:
    print_args(b, p, e, 0);
    if (e->text && e->op != OP_CALL) /* options: sem_..., scope_..., prec_... */
      sb_printf(b, "%s%s", e->n ? ", " : "", e->text);
    break;
  }
  sb_put(b, ")");
}

static void print_expr(sbuf *b, const dfz_prog *p, const dfz_expr *e) {
  char t[48];
  switch (e->kind) {
  case EK_VAR:
  case EK_LIT:
    sb_put(b, e->text);
    break;
  case EK_UN:
    sb_printf(b, "(%s ", dfz_op_text(e->op));
    print_expr(b, p, e->a[0]);
    sb_put(b, ")");
    break;
  case EK_BIN:
    sb_put(b, "(");
    print_expr(b, p, e->a[0]);
    sb_printf(b, " %s ", dfz_op_text(e->op));
    print_expr(b, p, e->a[1]);
    sb_put(b, ")");
    break;
  case EK_CAST:
    dfz_type_text(p, e->dt, e->pointee, e->iarg == 1, t, sizeof t);
    sb_printf(b, "((%s) ", t);
    print_expr(b, p, e->a[0]);
    sb_put(b, ")");
    break;
  case EK_COND:
    sb_put(b, "(");
    print_expr(b, p, e->a[0]);
    sb_put(b, " ? ");
    print_expr(b, p, e->a[1]);
    sb_put(b, " : ");
    print_expr(b, p, e->a[2]);
    sb_put(b, ")");
    break;
  case EK_CALL:
    print_call(b, p, e);
    break;
  }
}

static void indent(sbuf *b, int depth) {
  for (int i = 0; i < depth; i++)
    sb_put(b, "    ");
}

static void print_block(sbuf *b, const dfz_prog *p, const dfz_block *blk, int depth);

static void print_stmt(sbuf *b, const dfz_prog *p, const dfz_stmt *s, int depth) {
  char t[48];
  indent(b, depth);
  switch (s->kind) {
  case SK_DECL:
    dfz_type_text(p, s->dt, s->pointee, s->tile, t, sizeof t);
    sb_printf(b, "%s %s", t, s->name);
    if (s->e) {
      sb_put(b, " = ");
      print_expr(b, p, s->e);
    }
    sb_put(b, ";\n");
    break;
  case SK_ASSIGN:
    sb_printf(b, "%s %s ", s->name, s->aop);
    print_expr(b, p, s->e);
    sb_put(b, ";\n");
    break;
  case SK_EXPR:
    print_expr(b, p, s->e);
    sb_put(b, ";\n");
    break;
  case SK_RETURN:
    sb_put(b, "return");
    if (s->e) {
      sb_put(b, " ");
      print_expr(b, p, s->e);
    }
    sb_put(b, ";\n");
    break;
  case SK_IF:
    sb_put(b, "if (");
    print_expr(b, p, s->e);
    sb_put(b, ") {\n");
    print_block(b, p, &s->body, depth + 1);
    indent(b, depth);
    if (s->els.n) {
      sb_put(b, "} else {\n");
      print_block(b, p, &s->els, depth + 1);
      indent(b, depth);
    }
    sb_put(b, "}\n");
    break;
  case SK_FOR:
    sb_printf(b, "for (i32 %s = ", s->name);
    print_expr(b, p, s->e);
    sb_printf(b, "; %s < ", s->name);
    print_expr(b, p, s->e2);
    if (s->step_text)
      sb_printf(b, "; %s += %s) {\n", s->name, s->step_text);
    else
      sb_printf(b, "; %s += %d) {\n", s->name, s->step);
    print_block(b, p, &s->body, depth + 1);
    indent(b, depth);
    sb_put(b, "}\n");
    break;
  case SK_WHILE:
    sb_put(b, "while (");
    print_expr(b, p, s->e);
    sb_put(b, ") {\n");
    print_block(b, p, &s->body, depth + 1);
    indent(b, depth);
    sb_put(b, "}\n");
    break;
  case SK_DO:
    sb_put(b, "do {\n");
    print_block(b, p, &s->body, depth + 1);
    indent(b, depth);
    sb_put(b, "} while (");
    print_expr(b, p, s->e);
    sb_put(b, ");\n");
    break;
  }
}

static void print_block(sbuf *b, const dfz_prog *p, const dfz_block *blk, int depth) {
  for (int i = 0; i < blk->n; i++)
    if (!blk->v[i]->dead)
      print_stmt(b, p, blk->v[i], depth);
}

char *dfz_prog_print(const dfz_prog *p) {
  sbuf b = {0};
  if (p->meta.seed)
    sb_printf(&b, "/* difffuzz seed %llu: %s */\n", (unsigned long long)p->meta.seed,
              p->features);
  sb_put(&b, "#include <teeny/dsl.h>\n\n");
  if (p->meta.gname[0])
    sb_printf(&b, "TEENY_DTYPE(%s);\n", p->meta.gname);
  for (int i = 0; i < p->meta.nconsts; i++)
    sb_printf(&b, "TEENY_CONST(%s);\n", p->meta.consts[i].name);
  sb_put(&b, "\n");
  for (int i = 0; i < p->nfuncs; i++) {
    const dfz_func *f = p->funcs[i];
    if (f->dead)
      continue;
    if (f->is_kernel) {
      sb_put(&b, "TEENY_KERNEL(");
      if (p->meta.gname[0])
        sb_printf(&b, "%s%s", p->meta.gname, p->meta.nconsts ? ", " : "");
      for (int c = 0; c < p->meta.nconsts; c++)
        sb_printf(&b, "%s%s", c ? ", " : "", p->meta.consts[c].name);
      sb_put(&b, ")\n");
    }
    if (f->is_kernel) {
      sb_printf(&b, "void %s(", f->name);
      for (int k = 0; k < p->meta.nparams; k++) {
        const dfz_param *pa = &p->meta.params[k];
        char t[48];
        if (pa->desc_rank > 0) { /* tensor_desc(T, block...) NAME: 1 + 2 x rank launch params */
          size_t n = strlen(pa->name) - strlen("_tensormap");
          sb_printf(&b, "%stensor_desc(%s", k ? ", " : "", dfz_dtype_text(p, pa->dt));
          for (int d = 0; d < pa->desc_rank; d++)
            sb_printf(&b, ", %s", pa->desc_block[d]);
          sb_printf(&b, ") %.*s", (int)n, pa->name);
          k += 2 * pa->desc_rank;
          continue;
        }
        dfz_type_text(p, pa->is_ptr ? TEENY_DT_PTR : pa->dt, pa->dt, false, t, sizeof t);
        sb_printf(&b, "%s%s %s", k ? ", " : "", t, pa->name);
      }
      sb_put(&b, ")\n{\n");
    } else {
      sb_printf(&b, "%s\n{\n", f->sig);
    }
    print_block(&b, p, &f->body, 1);
    sb_put(&b, "}\n\n");
  }
  return b.s;
}

void dfz_prog_case(const dfz_prog *p, dfz_case *out) {
  dfz_case_copy(out, &p->meta);
  free(out->source);
  out->source = dfz_prog_print(p);
}

void dfz_prog_free(dfz_prog *p) {
  dfz_arena_free(&p->arena);
  dfz_case_free(&p->meta);
}
