/*
 * tests/diff/ast.h — the program tree of a generated kernel: typed
 * expressions (each with its shape and value facts), statements, helper
 * functions and the kernel, the symbolic tile dims, and the case metadata
 * the launch needs.  The generator builds it, the reducer edits it in
 * place (statements marked dead, expression slots swapped), and
 * dfz_prog_print turns it into kernel source.
 */
#ifndef TEENY_TESTS_DIFF_AST_H
#define TEENY_TESTS_DIFF_AST_H

#include "tests/diff/dfz.h"
#include "tests/diff/facts.h"

/* ---- arena: everything of one program is freed at once --------------------- */

typedef struct dfz_arena {
  struct dfz_chunk *head;
} dfz_arena;

void *dfz_alloc(dfz_arena *a, size_t n); /* zeroed; aborts when out of memory */
char *dfz_strdup(dfz_arena *a, const char *s);
char *dfz_printf(dfz_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dfz_arena_free(dfz_arena *a);

/* ---- shapes: rank 0 (scalar) to 4; dims are indexes into the prog's dim table */

#define DFZ_MAX_DIMS 16
#define DFZ_DIM_ONE 0 /* dim 0 of every program is the literal 1 */

typedef struct dfz_shape {
  int rank;
  int d[4];
} dfz_shape;

/* A dim is mul * consts[ca] * consts[cb] (an index of -1 counts as 1). */
typedef struct dfz_dim {
  int ca, cb, mul;
  char text[80]; /* how a shape argument spells it: "1", "BM", "BM * BN", "2 * B" */
  int value;     /* its value under the current bindings */
} dfz_dim;

/* ---- expressions ------------------------------------------------------------------ */

typedef enum dfz_op {
  /* binary operators */
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_SHL, OP_SHR, OP_AND, OP_OR, OP_XOR,
  OP_LAND, OP_LOR, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  /* unary operators */
  OP_NEG, OP_BNOT, OP_LNOT,
  /* element-wise builtins */
  OP_WHERE, OP_MINIMUM, OP_MAXIMUM, OP_ABS, OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_SQRT,
  OP_RSQRT, OP_SIN, OP_COS, OP_TANH, OP_SIGMOID, OP_ERF, OP_ATAN, OP_FLOOR, OP_CEIL, OP_FMA, OP_CDIV,
  /* reductions, scans, products */
  OP_SUM, OP_MAX, OP_MIN, OP_ARGMAX, OP_ARGMIN, OP_REDUCE, OP_CUMSUM, OP_SCAN, OP_DOT,
  /* memory */
  OP_LOAD, OP_ATOMIC_ADD, OP_ATOMIC_MAX, OP_ATOMIC_MIN, OP_ATOMIC_XCHG, OP_ATOMIC_CAS, OP_STORE,
  /* tiles and shapes */
  OP_ARANGE, OP_ZEROS, OP_FULL, OP_COL, OP_ROW, OP_EXPAND_DIMS, OP_BROADCAST_TO, OP_RESHAPE,
  OP_TRANS, OP_PROGRAM_ID, OP_NUM_PROGRAMS,
  /* barrier(); the hardware approximations fast_exp ... fast_tanh */
  OP_BARRIER, OP_FAST_EXP, OP_FAST_EXP2, OP_FAST_LOG, OP_FAST_LOG2, OP_FAST_SIN, OP_FAST_COS,
  OP_FAST_TANH,
  /* joining tiles, histogram(x, bins [, mask]) (bins: the result's dim) */
  OP_JOIN, OP_INTERLEAVE, OP_CAT, OP_RAVEL, OP_HISTOGRAM, OP_GATHER, OP_FLIP, OP_SORT,
  /* permute(x, dims...): the dims in iarg, two bits each (OP_TRANS of rank 3
     or 4 spells the same) */
  OP_PERMUTE,
  /* load_tensor_descriptor(d, offsets...), store_tensor_descriptor(d,
     offsets..., value): a[0] the descriptor (a parameter's name, or the
     make_tensor_descriptor call as text) */
  OP_LOAD_DESC, OP_STORE_DESC,
  /* a helper call (text: the helper's name) */
  OP_CALL,
  OP__COUNT
} dfz_op;

const char *dfz_op_text(dfz_op op); /* "+", "where", "atomic_add", ... */

typedef enum dfz_ekind {
  EK_VAR,  /* text: the name */
  EK_LIT,  /* text: the literal as written ("3", "1.5f", "2u", "true") */
  EK_UN,   /* op a[0] */
  EK_BIN,  /* a[0] op a[1] */
  EK_CAST, /* (dt) a[0] */
  EK_COND, /* a[0] ? a[1] : a[2] */
  EK_CALL  /* op(a...), shape arguments from sh, axis in iarg, names in text
              (reduce/scan: the combine function; atomics, dot: trailing options) */
} dfz_ekind;

typedef struct dfz_expr dfz_expr;
struct dfz_expr {
  dfz_ekind kind;
  dfz_op op;
  bool pinned;         /* the reducer leaves this subtree alone (addresses, masks) */
  teeny_dtype dt;      /* TEENY_DT_PTR for pointers */
  teeny_dtype pointee; /* pointers: the element dtype */
  dfz_shape sh;
  dfz_fact f;          /* value facts (facts.h) */
  char *text;
  int iarg;            /* axis (reductions, expand_dims, program_id), -100: none;
                          permute: dim i of the result is a[0]'s (iarg >> 2i) & 3 */
  int n;
  dfz_expr *a[4];
};

/* ---- statements and functions ------------------------------------------------------ */

typedef enum dfz_skind {
  SK_DECL,   /* type name = e; */
  SK_ASSIGN, /* name aop e; */
  SK_EXPR,   /* e; (store, atomics, void helper calls) */
  SK_IF,     /* if (e) body else els */
  SK_FOR,    /* for (i32 name = e; name < e2; name += step) body */
  SK_WHILE,  /* while (e) body */
  SK_DO,     /* do body while (e); */
  SK_RETURN  /* return [e]; */
} dfz_skind;

typedef struct dfz_stmt dfz_stmt;

typedef struct dfz_block {
  dfz_stmt **v;
  int n, cap;
} dfz_block;

struct dfz_stmt {
  dfz_skind kind;
  bool pinned; /* never deleted (loop counters, their updates) */
  int group;   /* non-zero: deleted only together with the others of its group */
  bool dead;   /* deleted by the reducer: not printed */
  char *name;
  const char *aop;     /* "=", "+=", ... */
  teeny_dtype dt, pointee;
  bool tile;           /* SK_DECL: a tile(...) declaration */
  dfz_expr *e, *e2;
  int step;
  const char *step_text; /* SK_FOR: the step as written ("B"); NULL: step */
  dfz_block body, els;
};

typedef struct dfz_func {
  char *name;
  char *sig;      /* the whole signature: "static tile(f32) h0(tile(f32) a)" */
  bool is_kernel;
  bool dead;      /* removed by the reducer: not printed */
  dfz_block body;
} dfz_func;

/* One generated kernel with everything needed to run it. */
typedef struct dfz_prog {
  dfz_arena arena;
  dfz_dim dims[DFZ_MAX_DIMS];
  int ndims;
  dfz_func *funcs[24]; /* helpers in definition order, then the kernel */
  int nfuncs;
  dfz_case meta;       /* source is NULL here: dfz_prog_case prints it */
  char features[256];  /* comma-separated features the generator used */
} dfz_prog;

/* ---- building --------------------------------------------------------------------- */

dfz_expr *dfz_expr_new(dfz_prog *p, dfz_ekind kind, dfz_op op, teeny_dtype dt, dfz_shape sh);
dfz_stmt *dfz_stmt_new(dfz_prog *p, dfz_skind kind);
void dfz_block_add(dfz_prog *p, dfz_block *b, dfz_stmt *s);
dfz_func *dfz_func_new(dfz_prog *p, const char *name, const char *sig, bool is_kernel);
/* The dim mul * consts[ca] * consts[cb] (added if new; -1: no const). */
int dfz_dim_get(dfz_prog *p, int ca, int cb, int mul);
/* Recompute every dim's value after a change of p->meta.consts. */
void dfz_dims_update(dfz_prog *p);

static inline dfz_shape dfz_scalar_shape(void) { return (dfz_shape){0, {0, 0, 0, 0}}; }
static inline dfz_shape dfz_shape1(int d0) { return (dfz_shape){1, {d0, 0, 0, 0}}; }
static inline dfz_shape dfz_shape2(int d0, int d1) { return (dfz_shape){2, {d0, d1, 0, 0}}; }
static inline dfz_shape dfz_shape3(int d0, int d1, int d2) { return (dfz_shape){3, {d0, d1, d2, 0}}; }
bool dfz_shape_eq(dfz_shape a, dfz_shape b);
/* The shape of broadcasting a with b (docs/dsl.md §4); false if they do not. */
bool dfz_shape_broadcast(dfz_shape a, dfz_shape b, dfz_shape *out);
bool dfz_shape_fits(dfz_shape a, dfz_shape into); /* a broadcasts to into */
/* Elements of a shape under the current dim values. */
long dfz_shape_elems(const dfz_prog *p, dfz_shape s);

/* ---- printing ------------------------------------------------------------------------ */

/* The kernel source text (malloc'd). */
char *dfz_prog_print(const dfz_prog *p);
/* A case for the current tree: meta plus the printed source (caller frees
 * with dfz_case_free). */
void dfz_prog_case(const dfz_prog *p, dfz_case *out);
void dfz_prog_free(dfz_prog *p);

/* How p spells dt: the dtype generic's name for the dtype it is bound to
 * (p->meta.gname for p->meta.gdt), else the dtype's own name. */
const char *dfz_dtype_text(const dfz_prog *p, teeny_dtype dt);
/* "tile(f32)", "i32", "ptr(u8)", "tile(ptr(u8))" (spelt as dfz_dtype_text). */
void dfz_type_text(const dfz_prog *p, teeny_dtype dt, teeny_dtype pointee, bool tile, char *out,
                   size_t size);

#endif /* TEENY_TESTS_DIFF_AST_H */
