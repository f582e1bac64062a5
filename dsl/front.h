/*
 * dsl/front.h — the front end of the kernel compiler, one section per
 * stage (chibicc style).  Data flows top to bottom:
 *
 *   lex.c      source text         -> tokens
 *   parse.c    tokens              -> AST (teeny_program)
 *   resolve.c  AST                 -> AST with names bound, binding-free checks
 *   spec.c     AST + bindings      -> id, entry point, generated source, key
 *              (bindval.c: the values of const bindings)
 *   irgen*.c   AST + bindings      -> tile IR (dsl/ir/ir.h: types, shapes, inlining;
 *              dsl/irgen.h lists the parts)
 *
 * Below it: dsl/ir/ (the tile IR, verifier, MLIR printer, interpreter) and
 * dsl/nvptx/ (tile IR -> PTX, the only code that links LLVM).  api.c puts
 * include/teeny/compile.h on top of all three; inspect.c answers
 * teeny_source_inspect from the front end alone.
 */
#ifndef TEENY_DSL_FRONT_H
#define TEENY_DSL_FRONT_H

#include "dsl/ir/ir.h"

/* ---- limits of the front end (documented in docs/dsl.md) ----------------- */

#define TEENY_MAX_NEST 200          /* parser nesting depth */
#define TEENY_MAX_TOKENS (1 << 20)  /* tokens in one source */
#define TEENY_MAX_INLINE_DEPTH 64   /* helper call depth */
#define TEENY_MAX_GENERICS 32       /* generic parameters in one file */

/* ============================================================================
 * lex.c — tokens
 * ========================================================================== */

typedef enum teeny_tok_kind {
  TK_IDENT,   /* names, keywords and type names alike */
  TK_INT,     /* integer literal */
  TK_FLOAT,   /* floating literal */
  TK_STRING,  /* string literal (only device_print, device_assert and
                 static_assert take one): sval, slen, escapes decoded */
  TK_PUNCT,   /* operators and punctuation */
  TK_EOF
} teeny_tok_kind;

typedef struct teeny_token {
  teeny_tok_kind kind;
  const char *p;   /* start in the source text */
  int len;         /* length in bytes */
  teeny_loc loc;   /* where it starts */
  uint64_t ival;   /* TK_INT value (two's complement bits) */
  double fval;     /* TK_FLOAT value */
  teeny_dtype lit_dt; /* forced by a suffix (1u: u32, 1.0f: f32); VOID: weak */
  const char *sval;   /* TK_STRING: the bytes (NUL-terminated, arena) */
  int slen;           /* TK_STRING: how many (no NUL inside) */
} teeny_token;

#define TEENY_MAX_STRING 1024 /* bytes of one string literal (after joining) */

/* Tokenize cx->text.  Lines starting with #include or #pragma are skipped;
 * other preprocessor lines are errors.  Returns an array ending in TK_EOF
 * (*n counts it), or NULL after reporting errors. */
teeny_token *teeny__lex(teeny_ctx *cx, int *n);
/* True if tok's text is exactly s. */
bool teeny__tok_is(const teeny_token *tok, const char *s);

/* ============================================================================
 * parse.c — the AST
 * ========================================================================== */

/* A type as written: void, T, tile(T), ptr(T), T *, tile(ptr(T)), S,
 * struct S, tile(S) (S a struct: every field a tile). */
typedef struct teeny_tyspec {
  teeny_loc loc;
  bool is_void;     /* void */
  bool is_tile;     /* tile(...) */
  bool is_ptr;      /* ptr(...) or '*' */
  const char *base; /* element type name as written: "f32", "int", "D", "S" */
  teeny_dtype dt;   /* builtin element dtype; VOID if base is a generic or struct */
  int generic;      /* index into teeny_program.generics, or -1 */
  int strct;        /* index into teeny_program.structs, or -1 */
  struct teeny_expr **dblock; /* tensor_desc(T, B0, ..) of a kernel parameter:
                                 its block dims (constant expressions) */
  int ndblock;                /* their count (the rank); 0 elsewhere */
} teeny_tyspec;

/* A struct (docs/dsl.md §2, tuples): named fields of scalars, tiles,
 * pointers and other structs.  Values of it are flattened into their
 * *leaves*, the fields that are not structs, in declaration order: a
 * variable of it has one var slot per leaf, and so control flow, loops and
 * reduce carry a struct as its leaves. */
typedef struct teeny_field {
  const char *name;
  teeny_loc loc;
  teeny_tyspec *type;
  int leaf;            /* its first leaf in the struct */
  int nleaves;         /* 1, or a struct field's leaves */
} teeny_field;

/* Tensor descriptors and block pointers (docs/dsl.md §5) are structs the
 * parser makes, one per element type (tensor_desc(T), block_ptr(T)): their
 * leaves are the run-time parts, TEENY_MAX_RANK of each (base; shape i32;
 * strides i64; a block pointer's offsets i32).  The compile-time part, the
 * rank and block shape, is on the specialisations irgen_desc.c makes. */
typedef enum teeny_desc_kind {
  TEENY_DESC_NONE,   /* a user's struct */
  TEENY_DESC_TENSOR, /* tensor_desc(T) */
  TEENY_DESC_BLOCK   /* block_ptr(T) */
} teeny_desc_kind;

typedef struct teeny_desc_info {
  const struct teeny_struct *family; /* the parser's tensor_desc(T) / block_ptr(T) */
  int rank;
  int block[TEENY_MAX_RANK];         /* the block shape */
} teeny_desc_info;

typedef struct teeny_struct {
  const char *name;            /* "welford" (typedef) or "struct welford" */
  teeny_desc_kind desc;        /* a descriptor family or specialisation */
  const teeny_desc_info *info; /* a specialisation's static part; NULL otherwise */
  teeny_loc loc;
  teeny_field *fields;
  int nfields;
  int nleaves;
  const teeny_tyspec **leaf_type; /* [nleaves]: each leaf's type (not a struct) */
  const char **leaf_name;         /* [nleaves]: "mean", "pos.x" */
} teeny_struct;

#define TEENY_MAX_LEAVES 64 /* leaves of one struct */

typedef enum teeny_op_kind {
  /* binary */
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_SHL, OP_SHR,
  OP_BITAND, OP_BITOR, OP_BITXOR, OP_LOGAND, OP_LOGOR,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  /* unary */
  OP_NEG, OP_PLUS, OP_BITNOT, OP_LOGNOT,
  OP_NONE /* plain '=' in EX_ASSIGN */
} teeny_op_kind;

typedef enum teeny_expr_kind {
  EX_INT,    /* integer literal: ival, lit_dt */
  EX_FLOAT,  /* float literal: fval, lit_dt */
  EX_BOOL,   /* true / false: ival */
  EX_NAME,   /* name; resolved into sym */
  EX_UNARY,  /* op lhs */
  EX_BINARY, /* lhs op rhs */
  EX_COND,   /* cond ? lhs : rhs */
  EX_CALL,   /* name(args...): builtin or helper */
  EX_CAST,   /* (type) lhs */
  EX_ASSIGN, /* lhs = rhs, or lhs op= rhs (op != OP_NONE) */
  EX_INCDEC, /* ++/-- on lhs: op is OP_ADD or OP_SUB; prefix flag */
  EX_STRING, /* string literal: name (NUL-terminated bytes), ival its length */
  EX_SIZEOF, /* sizeof(type): type; sizeof expr: lhs (element size, bytes) */
  EX_MEMBER, /* lhs.name: a field of a struct value */
  EX_INIT    /* {args...} of struct `type` (a compound literal (S){...} or
                an initializer); desig[i]: args[i]'s field name, or NULL */
} teeny_expr_kind;

/* What a name refers to, filled in by resolve.c. */
typedef enum teeny_sym_kind {
  SYM_NONE,    /* unresolved */
  SYM_VAR,     /* local variable or parameter: sym_index is its var slot */
  SYM_GENERIC, /* a TEENY_CONST: sym_index into program generics */
  SYM_FUNC,    /* a helper function: sym_index into program funcs */
  SYM_BUILTIN, /* a builtin: sym_index is a teeny_builtin */
  SYM_DTYPE,   /* a dtype name used as a call argument (zeros(f32, ...)) */
  SYM_OPTION   /* an option constant as a trailing builtin argument:
                  sym_index is a teeny_option */
} teeny_sym_kind;

typedef struct teeny_expr teeny_expr;
struct teeny_expr {
  teeny_expr_kind kind;
  teeny_loc loc;
  teeny_op_kind op;     /* EX_UNARY, EX_BINARY, EX_ASSIGN, EX_INCDEC */
  bool prefix;          /* EX_INCDEC: ++x rather than x++ */
  teeny_expr *lhs;      /* operand / assigned name / cast operand */
  teeny_expr *rhs;      /* second operand / assigned value */
  teeny_expr *cond;     /* EX_COND condition */
  teeny_expr **args;    /* EX_CALL arguments */
  int nargs;
  const char *name;     /* EX_NAME and EX_CALL callee */
  uint64_t ival;        /* EX_INT, EX_BOOL */
  double fval;          /* EX_FLOAT */
  teeny_dtype lit_dt;   /* literal suffix dtype; VOID means weak */
  teeny_tyspec *type;   /* EX_CAST target; EX_NAME used as a type argument */
  teeny_sym_kind sym;   /* resolve.c: what name refers to */
  int sym_index;        /* resolve.c: var slot, generic, func or builtin */
  int nslots;           /* resolve.c, SYM_VAR names and members of a
                           variable: the var slots they cover (a struct's
                           leaves; 1 otherwise) */
  const char **desig;   /* EX_INIT: designators (.field = ...), or NULL */
};

typedef enum teeny_stmt_kind {
  ST_BLOCK,    /* { body... } */
  ST_DECL,     /* type name [= init] (one declarator per node) */
  ST_EXPR,     /* expr; */
  ST_IF,       /* if (cond) then [else els] */
  ST_FOR,      /* for (init; cond; step) body */
  ST_WHILE,    /* while (cond) body */
  ST_DO,       /* do body while (cond); */
  ST_RETURN,   /* return [expr]; */
  ST_BREAK,    /* break;  var: the flag slot of the loop it leaves */
  ST_CONTINUE, /* continue;  var: the flag slot of the loop it continues */
  ST_EMPTY     /* ; */
} teeny_stmt_kind;

typedef struct teeny_stmt teeny_stmt;
struct teeny_stmt {
  teeny_stmt_kind kind;
  teeny_loc loc;
  teeny_stmt **body;   /* ST_BLOCK statements */
  int nbody;
  bool scoped;         /* ST_BLOCK: opens a scope (false for split decls) */
  teeny_tyspec *type;  /* ST_DECL */
  const char *name;    /* ST_DECL variable name */
  teeny_loc name_loc;  /* ST_DECL where the name is */
  int var;             /* ST_DECL: var slot (resolve.c) */
  teeny_expr *expr;    /* ST_EXPR, ST_RETURN value, ST_DECL init */
  teeny_expr *cond;    /* ST_IF, ST_FOR (may be NULL), ST_WHILE, ST_DO */
  teeny_stmt *then;    /* ST_IF */
  teeny_stmt *els;     /* ST_IF, may be NULL */
  teeny_stmt *init;    /* ST_FOR: a decl, an expr statement, or NULL */
  teeny_expr *step;    /* ST_FOR, may be NULL */
  teeny_stmt *loop;    /* ST_FOR, ST_WHILE, ST_DO body */
  int brk_slot;        /* loops: var slot of the flag a `break` of this
                          loop sets (resolve.c), or -1 when it has none */
  int cont_slot;       /* loops: the same for `continue` */
};

typedef struct teeny_param_decl {
  teeny_tyspec *type;
  const char *name;
  teeny_loc loc;
  int var;             /* var slot (resolve.c) */
} teeny_param_decl;

typedef struct teeny_func {
  const char *name;
  teeny_loc loc;            /* of the name */
  teeny_tyspec *ret;        /* return type */
  teeny_param_decl *params;
  int nparams;
  teeny_stmt *body;         /* ST_BLOCK */
  bool is_kernel;           /* preceded by TEENY_KERNEL(...) */
  teeny_loc kernel_loc;     /* of TEENY_KERNEL */
  int *kgenerics;           /* TEENY_KERNEL's list: generic indices in order */
  int nkgenerics;
  int backward;             /* func index of its backward kernel, or -1 */
  int nvars;                /* var slots used (resolve.c) */
  const char **var_names;   /* [nvars] names of the slots (resolve.c) */
} teeny_func;

typedef struct teeny_generic {
  const char *name;
  teeny_loc loc;
  bool is_dtype;            /* TEENY_DTYPE; else TEENY_CONST */
  teeny_dtype cdt;          /* TEENY_CONST(N, T): T; VOID for TEENY_CONST(N),
                               a weak i32 */
  teeny_dtype *allowed;     /* TEENY_DTYPE(D, f32, f16): the list; NULL: any */
  int nallowed;
} teeny_generic;

/* A TEENY_BACKWARD(fwd, bwd) pair as written (parse.c).  The kernels may be
 * defined later in the file, so resolve.c checks the pair and sets
 * teeny_func.backward. */
typedef struct teeny_backward_decl {
  const char *fwd;   /* forward kernel name */
  teeny_loc fwd_loc; /* where fwd is written */
  const char *bwd;   /* backward kernel name */
  teeny_loc bwd_loc; /* where bwd is written */
} teeny_backward_decl;

typedef struct teeny_program {
  teeny_generic *generics;
  int ngenerics;
  teeny_struct *structs;          /* struct types, in source order (parse.c) */
  int nstructs;
  teeny_func **funcs;
  int nfuncs;
  teeny_backward_decl *backwards; /* TEENY_BACKWARD pairs in source order (parse.c) */
  int nbackwards;                 /* how many */
} teeny_program;

/* Parse tokens into a program.  Returns NULL after reporting errors. */
teeny_program *teeny__parse(teeny_ctx *cx, teeny_token *toks, int ntoks);
/* Index of the function named name, or -1. */
int teeny__program_find_func(const teeny_program *p, const char *name);
/* Index of the generic named name, or -1. */
int teeny__program_find_generic(const teeny_program *p, const char *name);
/* The struct a written type names, or NULL. */
const teeny_struct *teeny__tyspec_struct(const teeny_program *p, const teeny_tyspec *ts);
/* The var slots a variable of type ts takes: its struct's leaves, or 1. */
int teeny__tyspec_slots(const teeny_program *p, const teeny_tyspec *ts);

/* ============================================================================
 * resolve.c — name binding and the checks that need no bindings
 * ========================================================================== */

typedef enum teeny_builtin {
#define TEENY_BUILTIN(id, name, minargs, maxargs) BI_##id,
#include "dsl/builtins.def"
#undef TEENY_BUILTIN
  BI__COUNT
} teeny_builtin;

typedef struct teeny_builtin_info {
  const char *name; /* as written in kernels */
  int minargs;      /* fewest arguments */
  int maxargs;      /* most arguments; -1: any number */
} teeny_builtin_info;

const teeny_builtin_info *teeny__builtin_info(teeny_builtin b);

/* Option constants (dsl/options.def) and the groups they come in. */
typedef enum teeny_option_group {
  OPTG_SEM = 1,   /* memory semantics of an atomic */
  OPTG_SCOPE = 2, /* the threads an atomic synchronises with */
  OPTG_PREC = 4,  /* input precision of an f32 dot */
  OPTG_CACHE = 8, /* cache operator of a load or store */
  OPTG_EVICT = 16 /* eviction priority of a load or store */
} teeny_option_group;

typedef enum teeny_option {
#define TEENY_OPTION(id, name, group, value) OPT_##id,
#include "dsl/options.def"
#undef TEENY_OPTION
  OPT__COUNT
} teeny_option;

typedef struct teeny_option_info {
  const char *name;         /* as written: "sem_relaxed" */
  teeny_option_group group; /* one of OPTG_* */
  int value;                /* the IR attribute: a teeny_sem, teeny_scope, teeny_prec,
                               teeny_cache or teeny_evict */
} teeny_option_info;

const teeny_option_info *teeny__option_info(teeny_option o);
/* The option named name, or -1. */
int teeny__option_find(const char *name);
/* The option groups builtin b accepts after its positional arguments (an
 * OR of OPTG_*; 0: none). */
unsigned teeny__builtin_option_groups(teeny_builtin b);
/* Positional arguments of a resolved builtin call: e->nargs less the
 * trailing option arguments. */
int teeny__call_positional(const teeny_expr *e);
/* The builtin named name, or -1. */
int teeny__builtin_find(const char *name);

/* Bind every name (vars get slots, calls get builtins or helpers), check
 * arity, duplicates, recursion, break/continue (inside a loop; each gets
 * its loop's flag slot), returns (value present iff non-void),
 * TEENY_KERNEL lists and TEENY_BACKWARD pairs.  Returns 0 or
 * TEENY_E_COMPILE. */
int teeny__resolve(teeny_ctx *cx, teeny_program *prog);

/* ============================================================================
 * spec.c — bindings, id, entry point, generated source, key
 * ========================================================================== */

/* The values bound to a program's generics for one request, and the
 * request's options that travel as bindings (TEENY_OPT_*). */
typedef struct teeny_bindings {
  teeny_dtype dt[TEENY_MAX_GENERICS]; /* dtype generics */
  teeny_scalar val[TEENY_MAX_GENERICS]; /* const generics: .i for untyped
                                           ones and signed ints and bool, .u
                                           unsigned, .f floats (rounded) */
  bool bound[TEENY_MAX_GENERICS];     /* set for every generic of the kernel */
  bool debug;                         /* TEENY_OPT_DEBUG: device_assert on */
  int num_stages;                     /* TEENY_OPT_NUM_STAGES: 0 (the code
                                         generator's choice) or 2 .. 8 */
  uint64_t unaligned;                 /* TEENY_OPT_UNALIGNED: bit i, entry
                                         parameter i may be off 16 bytes */
} teeny_bindings;

/* Check req's bindings against kernel k of prog: unknown names, missing
 * ones, ill-typed values (a const by value, or by text in req->dtypes:
 * parsed as its dtype), dtypes outside an allowed list, options.  Returns
 * 0 or TEENY_E_BINDING with diagnostics. */
int teeny__bind(teeny_ctx *cx, const teeny_program *prog, int k,
                const teeny_compile_req *req, teeny_bindings *out);
/* The dtype a written type names under b (builtin, or a bound generic). */
teeny_dtype teeny__tyspec_dtype(const teeny_tyspec *ts, const teeny_bindings *b);
/* Const generic g's value from an integer binding, or from a text one
 * (a literal of its dtype: "1e-5", "true", "0x40").  0, or -1 with *why
 * set to what is wrong, as "<value> <why> <dtype>" ("does not fit in"). */
int teeny__const_from_int(const teeny_generic *g, int64_t v, teeny_scalar *out,
                          const char **why);
int teeny__const_from_text(const teeny_generic *g, const char *s, teeny_scalar *out,
                           const char **why);
/* The canonical text of const generic g's bound value: what the id and the
 * TEENY_BIND line show, so that two spellings of one value ("0.01",
 * "1e-2") give one key.  Shortest text that reads back to the value. */
const char *teeny__const_text(teeny_arena *a, const teeny_generic *g, teeny_scalar v);
/* The entry-point parameters kernel parameter p becomes: 1, or for a
 * tensor_desc(T, B0, .., B[r-1]) 1 + 2r: its tensormap
 * (TEENY_PARAM_TENSORMAP), base pointer, shapes (i32) and the strides of
 * dims 0 .. r-2 (i64, in elements; the last dim is contiguous, as the TMA
 * needs), named NAME_tensormap, NAME_base, NAME_shape<k>, NAME_stride<k>. */
int teeny__param_nslots(const teeny_param_decl *p);
/* Slot j of p: its name (arena string), kind and dtype; elem is p's dtype
 * (a pointer's pointee, a descriptor's element) under the bindings. */
void teeny__param_slot(teeny_arena *a, const teeny_param_decl *p, int j, teeny_dtype elem,
                       const char **name, teeny_param_kind *kind, teeny_dtype *dt);
/* p's element dtype as written: its own, or a descriptor's element type. */
const teeny_tyspec *teeny__param_elem(const teeny_program *prog, const teeny_param_decl *p);
/* "vector_add__f32__1024" (arena string). */
const char *teeny__spec_id(teeny_ctx *cx, const teeny_program *prog, int k,
                           const teeny_bindings *b);
/* What decides the output, besides the source and the bindings. */
typedef struct teeny_spec_opts {
  const char *target;           /* "sm_90a" */
  int num_warps;                /* 4 */
  const char *compiler_version; /* "0.1.0" */
  const char *build_id;         /* hash of the compiler's sources */
  const char *llvm_version;     /* "19.1.7" */
} teeny_spec_opts;
/* Append the generated source of kernel k (header comment, prelude,
 * bindings, the source text cx->text, entry point) to out. */
void teeny__spec_source(teeny_buf *out, teeny_ctx *cx, const teeny_program *prog,
                        int k, const teeny_bindings *b, const char *id,
                        const teeny_spec_opts *o);

/* ============================================================================
 * irgen.c — AST + bindings -> tile IR
 * ========================================================================== */

/* Build the IR of kernel k of prog (helpers inlined) under bindings b.
 * Type, shape and constness errors are reported here.  Returns NULL after
 * reporting errors (or hitting a limit). */
teeny_ir_func *teeny__irgen(teeny_ctx *cx, const teeny_program *prog, int k,
                            const teeny_bindings *b, int num_warps);

/* ============================================================================
 * api.c — include/teeny/compile.h; and for the runners beside it
 * (teeny_spec_interpret here, teeny_spec_emulate in emulate.c): run fn on
 * the spec's IR in a job of its own (arena, out-of-memory unwinding), after
 * checking the argument count.  Returns what fn returns, or the job's error.
 * ========================================================================== */

typedef int (*teeny__spec_ir_fn)(teeny_ctx *cx, const teeny_ir_func *f, const char *target,
                                 const unsigned grid[3], const teeny_interp_arg *args,
                                 int nargs, void *arg);
int teeny__spec_run_ir(const teeny_spec *spec, const unsigned grid[3],
                       const teeny_interp_arg *args, size_t nargs, teeny_diags *diags,
                       teeny__spec_ir_fn fn, void *arg);

#endif /* TEENY_DSL_FRONT_H */
