/*
 * dsl/ir/ir.h — the tile IR layer of the kernel compiler, one section per
 * file of dsl/ir/ (chibicc style).  Everything above it (the front end in
 * dsl/, the NVPTX back end in dsl/nvptx/) builds on what is declared here:
 *
 *   ctx.c      the compile context and its diagnostics, shared by every stage
 *   ir.c       tile IR data structure, builder, dump
 *   verify.c   the IR contract every consumer relies on
 *   mlir.c     tile IR -> Triton-dialect MLIR text
 *   interp.c   tile IR -> runs on host buffers
 *   format.c   device_print/device_assert formats, for all of the above
 *   scalar.c   one element's arithmetic and conversions (dsl/ir/scalar.h),
 *              shared by irgen's constant folding and interp.c
 *
 * Every stage allocates from the job's arena (common/common.h) and reports
 * problems through teeny_ctx; none prints, exits or keeps global state.
 */
#ifndef TEENY_DSL_IR_IR_H
#define TEENY_DSL_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/common.h"
#include "teeny/compile.h"

/* ---- limits the IR enforces (documented in docs/dsl.md) ------------------ */

#define TEENY_MAX_RANK 4            /* tiles are 1-D to 4-D */
#define TEENY_MAX_TILE_NUMEL (1 << 20) /* elements in one tile */
#define TEENY_MAX_IR_OPS (1 << 20)  /* ops in one kernel after inlining */
#define TEENY_MAX_ERRORS 20         /* diagnostics before giving up */
#define TEENY_MAX_PARAMS 64         /* parameters of one function */

/* ============================================================================
 * ctx.c — the compile context (shared by every stage)
 * ========================================================================== */

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
#include "dsl/ir/opcodes.def"
#undef TEENY_OPCODE
  IR__COUNT
} teeny_opcode;

typedef enum teeny_cmp_pred {
  CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE
} teeny_cmp_pred;

typedef enum teeny_rmw_kind {
  RMW_ADD, RMW_MAX, RMW_MIN, RMW_XCHG, RMW_AND, RMW_OR, RMW_XOR
} teeny_rmw_kind;

/* An atomic's memory semantics and scope (docs/dsl.md §9).  Zero is the
 * default, Triton's: acq_rel at gpu scope. */
typedef enum teeny_sem {
  TEENY_SEM_ACQ_REL, TEENY_SEM_RELAXED, TEENY_SEM_ACQUIRE, TEENY_SEM_RELEASE
} teeny_sem;

typedef enum teeny_scope {
  TEENY_SCOPE_GPU, TEENY_SCOPE_CTA, TEENY_SCOPE_SYS
} teeny_scope;

/* How an f32 dot multiplies (Triton's input_precision); zero, the default,
 * is tf32 as in Triton.  Other dtypes ignore it. */
typedef enum teeny_prec {
  TEENY_PREC_TF32, TEENY_PREC_TF32X3, TEENY_PREC_IEEE
} teeny_prec;

/* Cache operators and eviction priorities of a load or store (Triton's
 * cache_modifier and eviction_policy): hints only, the values are the
 * same.  Zero is the default (none given). */
typedef enum teeny_cache {
  TEENY_CACHE_NONE, TEENY_CACHE_CA, TEENY_CACHE_CG, TEENY_CACHE_CS, TEENY_CACHE_CV,
  TEENY_CACHE_WB, TEENY_CACHE_WT
} teeny_cache;

typedef enum teeny_evict {
  TEENY_EVICT_NONE, TEENY_EVICT_NORMAL, TEENY_EVICT_FIRST, TEENY_EVICT_LAST
} teeny_evict;

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
  teeny_sem sem;            /* IR_ATOMIC_RMW, IR_ATOMIC_CAS */
  teeny_scope scope;        /* IR_ATOMIC_RMW, IR_ATOMIC_CAS */
  teeny_prec prec;          /* IR_DOT */
  teeny_cache cache;        /* IR_LOAD, IR_STORE */
  teeny_evict evict;        /* IR_LOAD, IR_STORE */
  bool fast;                /* math ops: the hardware approximation
                               (fast_exp, ...) instead of the accurate one */
  bool reverse;             /* IR_SCAN */
  signed char perm[TEENY_MAX_RANK]; /* IR_TRANS: result dim i is source dim
                               perm[i] (Triton's tt.trans order); all zero:
                               the dims reversed (a 2-D transpose) */
  const char *str;          /* IR_PRINT: the format; IR_ASSERT: the message
                               (a format too; format.c) */
  int tma;                  /* IR_LOAD, IR_STORE of the block of a tensor_desc
                               kernel parameter: 1 + the index of its
                               tensormap parameter; 0 otherwise.  The op's
                               pointers and mask are the block's, so an engine
                               may ignore this; the code generator may copy
                               the block with the Tensor Memory Accelerator */
  int tma_off[TEENY_MAX_RANK]; /* its offsets (i32 scalar value ids), dim 0 first */
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
  const char *file;      /* the source file, for IR_ASSERT's message (set
                            only when the kernel has one: it is then part of
                            the generated source, so of the key) */
  teeny_arena *arena;    /* where all of this lives */
  uint64_t unaligned;    /* bit i: pointer parameter i may be off 16 bytes
                            (TEENY_OPT_UNALIGNED; else each is 16-byte
                            aligned, docs/dsl.md) */
  uint64_t tensormaps;   /* bit i: parameter i is a tensormap (ptr(u8) in the
                            IR, never dereferenced: 128 bytes by value in
                            the PTX, read only by the TMA) */
  struct teeny_ir_tmap { /* [i]: tensormap parameter i's tensor_desc block */
    int rank;            /* 0 where parameter i is no tensormap */
    int block[TEENY_MAX_RANK];
  } *tmaps;              /* 64 entries (as the bits above), NULL when none */
} teeny_ir_func;

/* Types. */
teeny_type teeny__type_scalar(teeny_dtype dt);
teeny_type teeny__type_ptr(teeny_dtype pointee);
teeny_type teeny__type_tile(teeny_dtype dt, int rank, const int *shape);
teeny_type teeny__type_with_dtype(teeny_type t, teeny_dtype dt); /* keep shape */
teeny_type teeny__type_with_shape(teeny_type t, int rank, const int *shape);
bool teeny__type_eq(teeny_type a, teeny_type b);
/* IR_TRANS's permutation for a source of this rank (op->perm, or the
 * dims reversed where it is unset). */
void teeny__ir_trans_perm(const teeny_op *op, int rank, int *perm);
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
 * mlir.c — tile IR -> Triton-dialect MLIR text
 * ========================================================================== */

/* Append f as an MLIR module (tt.func, tt.*, arith.*, math.*, scf.*). */
void teeny__mlir_print(teeny_buf *out, const teeny_ir_func *f);
/* The same with each op's source location as loc("file":line:col) (ops at
 * line 0 get none).  Added by mlir.c for the .mlir artifact and `teenyc
 * --emit mlir`, so Triton's diagnostics point into the kernel source. */
void teeny__mlir_print_loc(teeny_buf *out, const teeny_ir_func *f, const char *file);

/* ============================================================================
 * format.c — the formats of device_print and device_assert
 * ========================================================================== */

#define TEENY_FMT_MAX_ARGS 16 /* conversions in one format */

/* One conversion of a format: fmt[start, end) is "%-8.3f", conv 'f'. */
typedef struct teeny_fmt_conv {
  int start, end; /* byte offsets in the format */
  char conv;      /* d i u x X o c f F e E g G a A p */
} teeny_fmt_conv;

/* How a value is passed to printf/vprintf: a 32-bit word (ints of 32 bits
 * or fewer, bool), a 64-bit one ("ll"), a double (every float), a pointer. */
typedef enum teeny_fmt_arg {
  TEENY_FMT_W32, TEENY_FMT_W64, TEENY_FMT_F64, TEENY_FMT_PTR
} teeny_fmt_arg;

/* Parse fmt into out[0..max): the conversion count, or -1 with err set
 * (unknown conversion, length modifier, '*', %s, too many). */
int teeny__fmt_parse(const char *fmt, teeny_fmt_conv *out, int max, char *err, size_t errsz);
/* Can conversion conv print a value of dtype dt (TEENY_DT_PTR: pointer)? */
bool teeny__fmt_accepts(char conv, teeny_dtype dt);
teeny_fmt_arg teeny__fmt_arg(teeny_dtype dt);
/* Append fmt (valid) with conversion i given kinds[i]'s length modifier:
 * the format printf/vprintf reads ("%%" kept). */
void teeny__fmt_rewrite(teeny_buf *b, const char *fmt, const teeny_fmt_arg *kinds, int n);
/* Append fmt (valid) formatted with one element's values: vals[i] of
 * dtype dts[i] ("%%" printed as '%'). */
void teeny__fmt_values(teeny_buf *b, const char *fmt, const teeny_dtype *dts,
                       const teeny_scalar *vals, int n);

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
  bool no_race_check; /* skip race.c's checks */
  FILE *print;        /* where device_print writes; NULL: stderr */
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
 * race.c — the interpreter's race detector (docs/dsl.md §9.1)
 * ========================================================================== */

typedef struct teeny_race teeny_race;

typedef enum teeny_race_kind {
  TEENY_RACE_READ = 1, /* a plain load */
  TEENY_RACE_WRITE,    /* a plain store */
  TEENY_RACE_ATOMIC    /* an atomic (reads and writes) */
} teeny_race_kind;

/* State for one launch: nbufs pointer arguments of elems[i] elements,
 * nprograms programs.  Lives in a (the launch's arena). */
teeny_race *teeny__race_new(teeny_arena *a, int nbufs, const size_t *elems,
                            uint64_t nprograms);
/* Program number `program` starts (numbered x + y gx + z gx gy). */
void teeny__race_program(teeny_race *r, uint64_t program);
/* The running program finished an atomic that acquires and/or releases. */
void teeny__race_atomic_done(teeny_race *r, bool acquire, bool release);
/* The running program accesses element e of buffer b.  0, or the kind of
 * the other program's access it races with (*other: that program). */
int teeny__race_access(teeny_race *r, int b, size_t e, teeny_race_kind kind,
                       uint64_t *other);
/* A store of nlanes lanes starts; then per active lane: -1, or the earlier
 * lane of this store that wrote addr with other bits. */
void teeny__race_store_begin(teeny_race *r, long nlanes);
long teeny__race_store_lane(teeny_race *r, uint64_t addr, uint64_t bits, long lane);

#endif /* TEENY_DSL_IR_IR_H */
