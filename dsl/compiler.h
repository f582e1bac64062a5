/*
 * dsl/compiler.h — the internal interface of the kernel compiler, one
 * section per stage (chibicc style).  Data flows top to bottom:
 *
 *   lex.c      source text         -> tokens
 *   parse.c    tokens              -> AST (teeny_program)
 *   resolve.c  AST                 -> AST with names bound, binding-free checks
 *   spec.c     AST + bindings      -> id, entry point, generated source, key
 *   irgen.c    AST + bindings      -> tile IR (types, shapes, inlining)
 *   ir.c       tile IR data structure, builder, verifier
 *   mlir.c     tile IR             -> Triton-dialect MLIR text
 *   interp.c   tile IR             -> runs on host buffers
 *   scalar.c   one element's arithmetic and conversions (dsl/scalar.h),
 *              shared by irgen's constant folding and interp.c
 *   codegen_*  tile IR             -> PTX (the only part that links LLVM)
 *   api.c      include/teeny/compile.h on top of all of the above
 *
 * Every stage allocates from the job's arena (common/common.h) and reports
 * problems through teeny_ctx; none prints, exits or keeps global state.
 */
#ifndef TEENY_DSL_COMPILER_H
#define TEENY_DSL_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "teeny/compile.h"

/* ---- limits (documented in docs/dsl.md) ---------------------------------- */

#define TEENY_MAX_RANK 2            /* tiles are 1-D or 2-D */
#define TEENY_MAX_TILE_NUMEL (1 << 20) /* elements in one tile */
#define TEENY_MAX_NEST 200          /* parser nesting depth */
#define TEENY_MAX_TOKENS (1 << 20)  /* tokens in one source */
#define TEENY_MAX_INLINE_DEPTH 64   /* helper call depth */
#define TEENY_MAX_IR_OPS (1 << 20)  /* ops in one kernel after inlining */
#define TEENY_MAX_ERRORS 20         /* diagnostics before giving up */
#define TEENY_MAX_PARAMS 64         /* parameters of one function */
#define TEENY_MAX_GENERICS 32       /* generic parameters in one file */

/* ---- compile context (shared by every stage) ---------------------------------- */

typedef struct teeny_loc {
  int line; /* 1-based; 0: no location */
  int col;  /* 1-based, in bytes */
} teeny_loc;

typedef struct teeny_ctx {
  teeny_arena *arena;  /* everything of this job is allocated here */
  const char *file;    /* name for diagnostics */
  const char *text;    /* source text (not NUL-terminated) */
  size_t len;          /* its length */
  teeny_diags *diags;  /* sink; may be NULL */
  int nerrors;         /* errors reported so far */
} teeny_ctx;

/* Report an error at loc ("file:line:col: error: ...").  Always counts it;
 * the sink keeps at most TEENY_MAX_ERRORS. */
void teeny__error_at(teeny_ctx *cx, teeny_loc loc, const char *fmt, ...) TEENY_PRINTF(3, 4);
void teeny__note_at(teeny_ctx *cx, teeny_loc loc, const char *fmt, ...) TEENY_PRINTF(3, 4);

/* ============================================================================
 * lex.c — tokens
 * ========================================================================== */

typedef enum teeny_tok_kind {
  TK_IDENT,   /* names, keywords and type names alike */
  TK_INT,     /* integer literal */
  TK_FLOAT,   /* floating literal */
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
} teeny_token;

/* Tokenize cx->text.  Lines starting with #include or #pragma are skipped;
 * other preprocessor lines are errors.  Returns an array ending in TK_EOF
 * (*n counts it), or NULL after reporting errors. */
teeny_token *teeny__lex(teeny_ctx *cx, int *n);
/* True if tok's text is exactly s. */
bool teeny__tok_is(const teeny_token *tok, const char *s);

/* ============================================================================
 * parse.c — the AST
 * ========================================================================== */

/* A type as written: void, T, tile(T), ptr(T), T *, tile(ptr(T)). */
typedef struct teeny_tyspec {
  teeny_loc loc;
  bool is_void;     /* void */
  bool is_tile;     /* tile(...) */
  bool is_ptr;      /* ptr(...) or '*' */
  const char *base; /* element type name as written: "f32", "int", "D" */
  teeny_dtype dt;   /* builtin element dtype; VOID if base is a generic */
  int generic;      /* index into teeny_program.generics, or -1 */
} teeny_tyspec;

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
  EX_INCDEC  /* ++/-- on lhs: op is OP_ADD or OP_SUB; prefix flag */
} teeny_expr_kind;

/* What a name refers to, filled in by resolve.c. */
typedef enum teeny_sym_kind {
  SYM_NONE,    /* unresolved */
  SYM_VAR,     /* local variable or parameter: sym_index is its var slot */
  SYM_GENERIC, /* a TEENY_CONST: sym_index into program generics */
  SYM_FUNC,    /* a helper function: sym_index into program funcs */
  SYM_BUILTIN, /* a builtin: sym_index is a teeny_builtin */
  SYM_DTYPE    /* a dtype name used as a call argument (zeros(f32, ...)) */
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
  ST_BREAK,    /* rejected by resolve.c with a clear message */
  ST_CONTINUE, /* likewise */
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
  bool is_dtype;            /* TEENY_DTYPE; else TEENY_CONST (i32) */
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
/* The builtin named name, or -1. */
int teeny__builtin_find(const char *name);

/* Bind every name (vars get slots, calls get builtins or helpers), check
 * arity, duplicates, recursion, break/continue, returns (value present iff
 * non-void; no return inside loops), TEENY_KERNEL lists and TEENY_BACKWARD
 * pairs.  Returns 0 or TEENY_E_COMPILE. */
int teeny__resolve(teeny_ctx *cx, teeny_program *prog);

/* ============================================================================
 * spec.c — bindings, id, entry point, generated source, key
 * ========================================================================== */

/* The values bound to a program's generics for one request. */
typedef struct teeny_bindings {
  teeny_dtype dt[TEENY_MAX_GENERICS]; /* dtype generics */
  int64_t val[TEENY_MAX_GENERICS];    /* const generics */
  bool bound[TEENY_MAX_GENERICS];     /* set for every generic of the kernel */
} teeny_bindings;

/* Check req's bindings against kernel k of prog: unknown names, missing
 * ones, ill-typed values, dtypes outside an allowed list.  Returns 0 or
 * TEENY_E_BINDING with diagnostics. */
int teeny__bind(teeny_ctx *cx, const teeny_program *prog, int k,
                const teeny_compile_req *req, teeny_bindings *out);
/* The dtype a written type names under b (builtin, or a bound generic). */
teeny_dtype teeny__tyspec_dtype(const teeny_tyspec *ts, const teeny_bindings *b);
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
 * ir.c — tile IR
 *
 * Typed SSA values with structured control flow, at the level of Triton's
 * TTIR.  Every value has a static type: a scalar (rank 0) or a tile of rank
 * 1..TEENY_MAX_RANK with power-of-two dims.  Operands of element-wise ops
 * have identical types: irgen inserts splats, broadcasts and casts.
 *
 * A region is one straight-line block of ops with block arguments; ops own
 * nested regions (if, for, while, reduce, scan).  Regions that produce
 * values end with IR_YIELD (or IR_CONDITION in a while's before-region).
 * Values are numbered per function; ids are dense from 0.
 * ========================================================================== */

typedef struct teeny_type {
  teeny_dtype dt;      /* element dtype; TEENY_DT_PTR for pointers */
  teeny_dtype pointee; /* dt == TEENY_DT_PTR: what it points to */
  int rank;            /* 0: scalar */
  int shape[TEENY_MAX_RANK];
} teeny_type;

typedef enum teeny_opcode {
#define TEENY_OPCODE(id, mnemonic) IR_##id,
#include "dsl/opcodes.def"
#undef TEENY_OPCODE
  IR__COUNT
} teeny_opcode;

typedef enum teeny_cmp_pred {
  CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE
} teeny_cmp_pred;

typedef enum teeny_rmw_kind {
  RMW_ADD, RMW_MAX, RMW_MIN, RMW_XCHG
} teeny_rmw_kind;

/* A compile-time scalar: which member is meaningful follows the dtype. */
typedef union teeny_scalar {
  int64_t i;  /* signed ints, bool */
  uint64_t u; /* unsigned ints */
  double f;   /* floats, already rounded to their dtype */
} teeny_scalar;

typedef struct teeny_region teeny_region;

typedef struct teeny_op {
  teeny_opcode code;
  teeny_loc loc;            /* source location it came from */
  int *args;                /* operand value ids */
  int nargs;
  int *res;                 /* result value ids */
  int nres;
  teeny_region *regions[2]; /* nested regions (NULL when unused) */
  int nregions;
  /* attributes */
  teeny_scalar cval;        /* IR_CONST value (tile consts are splats) */
  int axis;                 /* program_id, num_programs, expand_dims,
                               reduce, scan */
  int start, end;           /* IR_MAKE_RANGE */
  teeny_cmp_pred pred;      /* IR_CMP */
  teeny_rmw_kind rmw;       /* IR_ATOMIC_RMW */
  bool reverse;             /* IR_SCAN */
} teeny_op;

struct teeny_region {
  int *args;     /* block argument value ids */
  int nargs;
  teeny_op **ops;
  int nops;
  int cap;       /* allocated op slots */
};

typedef struct teeny_value {
  teeny_type type;
  teeny_op *def; /* defining op; NULL for block and function arguments */
} teeny_value;

typedef struct teeny_ir_func {
  const char *name;      /* entry symbol: "{kernel}_entry_point" */
  const char **param_names;
  int nparams;           /* function arguments = body->args */
  teeny_region *body;    /* body->args are the parameters */
  teeny_value *values;   /* indexed by value id */
  int nvalues;
  int cap;               /* allocated value slots */
  int nops;              /* ops created so far (limit TEENY_MAX_IR_OPS) */
  int num_warps;         /* launch shape the IR is compiled for */
  teeny_arena *arena;    /* where all of this lives */
} teeny_ir_func;

/* Types. */
teeny_type teeny__type_scalar(teeny_dtype dt);
teeny_type teeny__type_ptr(teeny_dtype pointee);
teeny_type teeny__type_tile(teeny_dtype dt, int rank, const int *shape);
teeny_type teeny__type_with_dtype(teeny_type t, teeny_dtype dt); /* keep shape */
teeny_type teeny__type_with_shape(teeny_type t, int rank, const int *shape);
bool teeny__type_eq(teeny_type a, teeny_type b);
long teeny__type_numel(teeny_type t); /* 1 for scalars */
/* "f32", "tensor<128xf32>", "!tt.ptr<f16>", "tensor<64x64x!tt.ptr<f16>>" */
void teeny__type_print_mlir(teeny_buf *b, teeny_type t);
/* "f32", "tile(f32)[128]", "ptr(f16)", "tile(ptr(f16))[64, 64]" for messages */
const char *teeny__type_str(teeny_arena *a, teeny_type t);

/* Functions, regions, values. */
teeny_ir_func *teeny__ir_func_new(teeny_arena *a, const char *name);
/* Add a function parameter of type t; returns its value id. */
int teeny__ir_param_add(teeny_ir_func *f, const char *name, teeny_type t);
teeny_region *teeny__ir_region_new(teeny_ir_func *f);
int teeny__ir_region_arg_add(teeny_ir_func *f, teeny_region *r, teeny_type t);
/* New op appended to r with the given operands and result types; the
 * results get fresh value ids.  Returns NULL only when the kernel passed
 * TEENY_MAX_IR_OPS (the caller reports it). */
teeny_op *teeny__ir_op_add(teeny_ir_func *f, teeny_region *r, teeny_opcode code,
                           teeny_loc loc, const int *args, int nargs,
                           const teeny_type *restypes, int nres);
static inline teeny_type teeny__ir_type(const teeny_ir_func *f, int v) {
  return f->values[v].type;
}

/* Convenience builders for single-result ops; each returns the result id
 * (or -1 past the op limit). */
int teeny__ir_const(teeny_ir_func *f, teeny_region *r, teeny_loc loc,
                    teeny_type t, teeny_scalar v);
int teeny__ir_unary(teeny_ir_func *f, teeny_region *r, teeny_opcode code,
                    teeny_loc loc, int a, teeny_type rt);
int teeny__ir_binary(teeny_ir_func *f, teeny_region *r, teeny_opcode code,
                     teeny_loc loc, int a, int b, teeny_type rt);

const char *teeny__opcode_name(teeny_opcode code); /* "add", "load", ... */

/* Check the IR's invariants (operand types, region shapes, terminators).
 * Problems are our bugs, reported as errors naming the op; returns 0 or
 * TEENY_E_INTERNAL. */
int teeny__ir_verify(teeny_ctx *cx, const teeny_ir_func *f);
/* A readable dump (for tests and `teenyc --emit ir`). */
void teeny__ir_dump(teeny_buf *b, const teeny_ir_func *f);

/* ============================================================================
 * irgen.c — AST + bindings -> tile IR
 * ========================================================================== */

/* Build the IR of kernel k of prog (helpers inlined) under bindings b.
 * Type, shape and constness errors are reported here.  Returns NULL after
 * reporting errors (or hitting a limit). */
teeny_ir_func *teeny__irgen(teeny_ctx *cx, const teeny_program *prog, int k,
                            const teeny_bindings *b, int num_warps);

/* ============================================================================
 * mlir.c — tile IR -> Triton-dialect MLIR text
 * ========================================================================== */

/* Append f as an MLIR module (tt.func, tt.*, arith.*, math.*, scf.*). */
void teeny__mlir_print(teeny_buf *out, const teeny_ir_func *f);
/* The same with each op's source location as loc("file":line:col) (ops at
 * line 0 get none).  Added by mlir.c for the .mlir artifact and `teenyc
 * --emit mlir`, so Triton's diagnostics point into the kernel source. */
void teeny__mlir_print_loc(teeny_buf *out, const teeny_ir_func *f, const char *file);

/* ============================================================================
 * interp.c — run tile IR on the CPU
 * ========================================================================== */

#define TEENY_INTERP_MAX_STEPS ((uint64_t)1 << 32) /* element ops per run */
#define TEENY_INTERP_MAX_BYTES ((size_t)1 << 30)   /* value storage per run */

/* Budgets of one run, so a runaway kernel cannot hang or exhaust the host;
 * a zero field takes the default above. */
typedef struct teeny_interp_opts {
  uint64_t max_steps; /* element operations over all programs */
  size_t max_bytes;   /* bytes of value slots (8 per element of every value) */
} teeny_interp_opts;

/* Run f (which passed teeny__ir_verify) over grid[0] x grid[1] x grid[2]
 * programs, one at a time, x fastest; args follow f's parameters (pointer
 * params: data/bytes; scalars: v, rounded to the param dtype).  Returns 0;
 * TEENY_E_RUNTIME with a diagnostic at the op (out-of-bounds access, bad
 * for-loop step, step budget); TEENY_E_INVAL (argument count, grid);
 * TEENY_E_LIMIT (value storage budget); TEENY_E_NOMEM.  Buffers may have
 * been partly written when an error is returned. */
int teeny__interp_run(teeny_ctx *cx, const teeny_ir_func *f,
                      const unsigned grid[3], const teeny_interp_arg *args,
                      int nargs);
/* The same with explicit budgets (o may be NULL). */
int teeny__interp_run_opts(teeny_ctx *cx, const teeny_ir_func *f,
                           const unsigned grid[3], const teeny_interp_arg *args,
                           int nargs, const teeny_interp_opts *o);

/* ============================================================================
 * codegen — tile IR -> PTX (codegen_llvm.c; codegen_none.c without LLVM)
 * ========================================================================== */

typedef struct teeny_codegen_opts {
  const char *target; /* "sm_90a", "sm_80", ... */
  int num_warps;      /* threads per block = 32 * num_warps */
} teeny_codegen_opts;

typedef struct teeny_codegen_out {
  char *ptx;          /* malloc'd PTX text (teeny__free) */
  size_t ptx_len;
  int shared_bytes;   /* dynamic shared memory per block */
} teeny_codegen_out;

/* Returns 0, TEENY_E_LLVM / TEENY_E_UNSUPPORTED with a diagnostic, or
 * TEENY_E_NOMEM. */
int teeny__codegen_ptx(teeny_ctx *cx, const teeny_ir_func *f,
                       const teeny_codegen_opts *o, teeny_codegen_out *out);
/* "19.1.7", or "none" in builds without the code generator. */
const char *teeny__codegen_llvm_version(void);
/* The optimised LLVM IR the PTX would be emitted from (*ir: teeny__malloc'd
 * text, NULL on error), for debugging the code generator and `--emit llvm`.
 * Only in builds with LLVM (teeny_compiler).  Returns as teeny__codegen_ptx. */
int teeny__codegen_llvm_ir(teeny_ctx *cx, const teeny_ir_func *f,
                           const teeny_codegen_opts *o, char **ir);
/* Test aid (dsl/codegen_emu.c, only in builds with LLVM: teeny_compiler):
 * run the code generator's output for f on the host — the same layouts,
 * conversions, reductions and mma fragments, JIT-compiled for the CPU with
 * each thread of a block a coroutine — over grid[0] x grid[1] x grid[2]
 * blocks, with args as for the interpreter.  Returns 0, TEENY_E_RUNTIME
 * (a block deadlocked), TEENY_E_LLVM, TEENY_E_UNSUPPORTED, TEENY_E_INVAL or
 * TEENY_E_NOMEM, with diagnostics.  Out-of-bounds accesses are not checked. */
int teeny__codegen_emulate(teeny_ctx *cx, const teeny_ir_func *f,
                           const teeny_codegen_opts *o, const unsigned grid[3],
                           const teeny_interp_arg *args, int nargs);

#endif /* TEENY_DSL_COMPILER_H */
