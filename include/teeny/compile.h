/*
 * teeny/compile.h — the compiler library (libteeny-dsl) seen from outside.
 *
 * One request in (kernel source, kernel name, dtype and const bindings,
 * target, num_warps); diagnostics or artifacts out.  The work has two steps,
 * so that a cache can key on the first before paying for the second:
 *
 *   teeny_spec_create()   parse, check, bind generics, generate the entry
 *                         point and the full generated source; key = its
 *                         SHA-256.  Cheap (microseconds for small kernels).
 *   teeny_spec_compile()  build tile IR, print .mlir, lower to PTX.
 *
 * There is no global mutable state: every call owns its memory (an arena per
 * spec), so specs may be created and compiled on any threads at once.  A spec
 * itself is immutable after creation and may be shared between threads.
 */
#ifndef TEENY_COMPILE_H
#define TEENY_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "teeny/error.h"
#include "teeny/version.h" /* TEENY_VERSION_STRING, TEENY_PROTOCOL_VERSION */

#ifdef __cplusplus
extern "C" {
#endif

#define TEENY_IR_VERSION 1

/* Limits enforced by the front end (docs/dsl.md lists them all). */
#define TEENY_MAX_SOURCE_BYTES (1u << 20) /* kernel source text */
#define TEENY_MAX_NAME_LEN 64             /* kernel and generic names */

/* ---- dtypes ---------------------------------------------------------------- */

typedef enum teeny_dtype {
  TEENY_DT_VOID = 0, /* no value (statements, void helpers) */
  TEENY_DT_BOOL,
  TEENY_DT_I8,
  TEENY_DT_I16,
  TEENY_DT_I32,
  TEENY_DT_I64,
  TEENY_DT_U8,
  TEENY_DT_U16,
  TEENY_DT_U32,
  TEENY_DT_U64,
  TEENY_DT_F16,
  TEENY_DT_BF16,
  TEENY_DT_F32,
  TEENY_DT_F64,
  TEENY_DT_PTR, /* a pointer; its pointee is a separate field */
  TEENY_DT_F8E4M3, /* OCP FP8 E4M3 (torch.float8_e4m3fn); after PTR: the */
  TEENY_DT_F8E5M2, /* values above keep their numbers (ABI) */
  TEENY_DT__COUNT
} teeny_dtype;

/* "f32", "bf16", ...; NULL for out-of-range values. */
const char *teeny_dtype_name(teeny_dtype dt);
/* Parse a dtype name ("f32"); TEENY_DT_VOID if it names none. */
teeny_dtype teeny_dtype_parse(const char *name);
/* Size in bytes of one element (pointers: 8; void: 0). */
int teeny_dtype_size(teeny_dtype dt);

/* ---- diagnostics ---------------------------------------------------------- */

typedef enum teeny_diag_level {
  TEENY_DIAG_ERROR,
  TEENY_DIAG_WARNING,
  TEENY_DIAG_NOTE
} teeny_diag_level;

typedef struct teeny_diag {
  teeny_diag_level level;
  char *file;        /* file name as given in the request ("<source>") */
  int line, col;     /* 1-based; 0 when the message has no location */
  char *message;     /* one line, no trailing newline */
  char *source_line; /* text of the line, no newline; NULL without location */
} teeny_diag;

/* A growable list the caller owns: init it, pass it, close it. */
typedef struct teeny_diags {
  teeny_diag *v; /* the diagnostics, in the order found */
  size_t n;      /* how many */
  size_t cap;    /* allocated slots */
  size_t nerrors;/* how many have level TEENY_DIAG_ERROR */
} teeny_diags;

void teeny_diags_init(teeny_diags *d);
void teeny_diags_close(teeny_diags *d); /* frees every entry; d reusable */
/* Append a copy of the given fields.  Returns TEENY_E_NOMEM on failure. */
int teeny_diags_add(teeny_diags *d, teeny_diag_level level, const char *file,
                    int line, int col, const char *source_line,
                    const char *message);
/* "file:line:col: error: message\n  source line\n  ^\n" into buf (always
 * NUL-terminated when size > 0).  Returns the length it wanted, snprintf-like. */
size_t teeny_diag_format(const teeny_diag *dg, char *buf, size_t size);

/* ---- requests ----------------------------------------------------------------- */

/* A binding written as text: a TEENY_DTYPE parameter's dtype, or the value
 * of a TEENY_CONST as a literal of the constant's dtype.  Text is how a
 * float or bool constant is bound (an integer one may come either way):
 * {"EPS", "1e-5"}, {"IS_CAUSAL", "true"}, {"N", "-3"}, {"M", "0x40"}.  The
 * value read, not its spelling, is what the id and the key see. */
typedef struct teeny_dtype_binding {
  const char *name;  /* a TEENY_DTYPE parameter ("D"), or a TEENY_CONST */
  const char *dtype; /* "f16"; for a TEENY_CONST, its value as text */
} teeny_dtype_binding;

/* A TEENY_CONST bound by value, or a request option (TEENY_OPT_*). */
typedef struct teeny_const_binding {
  const char *name; /* a TEENY_CONST parameter ("BLOCK_SIZE"), or TEENY_OPT_* */
  int64_t value;    /* must fit the constant's dtype (i32 when it declares
                       none; bool: 0 or 1; a float one: an integer it holds
                       exactly) */
} teeny_const_binding;

/* Request options besides target and num_warps travel as const bindings
 * under reserved names, which no generic can have (they contain a '.'): a
 * request keeps its layout as options are added, and an option is part of
 * the generated source, so of the key, only when set. */
#define TEENY_OPT_DEBUG "teeny.debug" /* 1: device_assert checks are compiled
                                         in (0, the default: they are not) */
#define TEENY_OPT_NUM_STAGES "teeny.num_stages" /* Triton's num_stages: the
                                         shared-memory stages of the cp.async
                                         pipeline of loops that feed dots, 2
                                         to 8; 0 or absent: the code
                                         generator's choice (3, or 4 when a
                                         wgmma stays in flight; fewer when
                                         they do not fit).  A depth that does
                                         not fit is an error */
#define TEENY_OPT_UNALIGNED "teeny.unaligned" /* bit i set: entry-point
                                         parameter i, a pointer, may not be
                                         16-byte aligned (Triton's
                                         divisibility specialisation, the
                                         other way round): the code
                                         generator then assumes only its
                                         element alignment.  0 or absent:
                                         every pointer is 16-byte aligned.
                                         A bit on a parameter that is no
                                         pointer is an error */

typedef struct teeny_compile_req {
  const char *source;  /* kernel source text (need not be NUL-terminated) */
  size_t source_len;   /* its length in bytes, <= TEENY_MAX_SOURCE_BYTES */
  const char *filename;/* for diagnostics; NULL means "<source>" */
  const char *kernel;  /* name of a TEENY_KERNEL function in the source */
  const teeny_dtype_binding *dtypes; /* dtype bindings */
  size_t ndtypes;
  const teeny_const_binding *consts; /* const bindings */
  size_t nconsts;
  const char *target;  /* "sm_90a" (default when NULL), "sm_90", "sm_80", ... */
  int num_warps;       /* 1, 2, 4, 8, 16 or 32; 0 means the default, 4 */
  const char *compiler_version; /* NULL: this build's; set only by tests */
} teeny_compile_req;

/* ---- kernel parameters ---------------------------------------------------------- */

typedef enum teeny_param_kind {
  TEENY_PARAM_SCALAR,   /* passed by value */
  TEENY_PARAM_POINTER,  /* a device pointer to elements of dtype */
  TEENY_PARAM_TENSORMAP /* a CUtensorMap (128 bytes, 64-aligned) by value: the
                           first of the 1 + 2 x rank parameters a kernel's
                           tensor_desc(T, B0, ..) parameter becomes (then its
                           base, shapes and all strides but the last, which
                           is 1; docs/dsl.md); dtype is T.
                           teeny_tensor_desc_encode (client.h) fills it */
} teeny_param_kind;

typedef struct teeny_param {
  char *name;            /* as in the kernel source */
  teeny_param_kind kind; /* scalar or pointer */
  teeny_dtype dtype;     /* scalar type, or the pointee type of a pointer */
} teeny_param;

/* ---- specs: a parsed, bound kernel ----------------------------------------------- */

typedef struct teeny_spec teeny_spec;

/* Parse and check req's source, bind its generics and generate the source.
 * On success *out owns a new spec (free with teeny_spec_destroy) and 0 is
 * returned.  On failure *out is NULL, diagnostics (if any) are appended to
 * diags, and one of TEENY_E_COMPILE, TEENY_E_BINDING, TEENY_E_INVAL (bad
 * target, num_warps or kernel name), TEENY_E_LIMIT or TEENY_E_NOMEM is
 * returned.  diags may be NULL. */
int teeny_spec_create(const teeny_compile_req *req, teeny_spec **out,
                      teeny_diags *diags);
void teeny_spec_destroy(teeny_spec *spec); /* NULL is a no-op */

const char *teeny_spec_name(const teeny_spec *spec);  /* "vector_add" */
const char *teeny_spec_id(const teeny_spec *spec);    /* "vector_add__f32__1024" */
const char *teeny_spec_key(const teeny_spec *spec);   /* 64 hex digits */
const char *teeny_spec_entry(const teeny_spec *spec); /* "vector_add_entry_point" */
const char *teeny_spec_target(const teeny_spec *spec);
int teeny_spec_num_warps(const teeny_spec *spec);
int teeny_spec_num_stages(const teeny_spec *spec); /* TEENY_OPT_NUM_STAGES; 0: the code
                                                      generator's choice */
/* The generated source (the .c artifact); *len gets its length if non-NULL. */
const char *teeny_spec_source(const teeny_spec *spec, size_t *len);
size_t teeny_spec_nparams(const teeny_spec *spec);
const teeny_param *teeny_spec_param(const teeny_spec *spec, size_t i);
/* The block shape of entry-point parameter i when it is the tensormap of a
 * tensor_desc(T, B0, ..) kernel parameter: *rank gets r and block[0 .. r)
 * the bound values of B0 .. B[r-1] (what teeny_tensor_desc_make takes);
 * for any other parameter *rank is 0.  Evaluating them builds the
 * kernel's tile IR (about as long as the front end's part of a compile):
 * a specialisation that cannot be built fails here with TEENY_E_COMPILE
 * and diagnostics, as its compile would.  TEENY_E_INVAL: i out of range. */
#define TEENY_SPEC_MAX_RANK 4
int teeny_spec_param_block(const teeny_spec *spec, size_t i, int *rank,
                           int block[TEENY_SPEC_MAX_RANK], teeny_diags *diags);

/* ---- artifacts ---------------------------------------------------------------- */

enum {
  TEENY_EMIT_MLIR = 1u << 0, /* fill artifact->mlir */
  TEENY_EMIT_PTX = 1u << 1   /* fill artifact->ptx */
};

typedef struct teeny_artifact {
  char *name;            /* kernel name */
  char *id;              /* name__dtypes__consts */
  char key[65];          /* sha256 of source, hex, NUL-terminated */
  char *entry;           /* entry symbol in the PTX */
  char *target;          /* e.g. "sm_90a" */
  int num_warps;
  char *source;          /* generated C source (.c artifact) */
  size_t source_len;
  char *mlir;            /* Triton-dialect MLIR (.mlir); NULL if not emitted */
  size_t mlir_len;
  char *ptx;             /* PTX text (.o); NULL if not emitted */
  size_t ptx_len;
  teeny_param *params;   /* entry point parameters, in order */
  size_t nparams;
  int threads_per_block; /* 32 * num_warps */
  int shared_bytes;      /* dynamic shared memory the launch must pass */
  uint64_t compile_ns;   /* wall time of teeny_spec_compile */
} teeny_artifact;

/* Lower spec to the artifacts named by emit (TEENY_EMIT_*).  On success *out
 * owns a new artifact.  On failure *out is NULL and diagnostics explain
 * (TEENY_E_COMPILE for shape/dtype errors found while building IR,
 * TEENY_E_LLVM, TEENY_E_UNSUPPORTED if PTX was asked of a build without the
 * code generator, TEENY_E_LIMIT, TEENY_E_NOMEM). */
int teeny_spec_compile(const teeny_spec *spec, unsigned emit,
                       teeny_artifact **out, teeny_diags *diags);
void teeny_artifact_destroy(teeny_artifact *a); /* NULL is a no-op */

/* spec_create + spec_compile in one call. */
int teeny_compile(const teeny_compile_req *req, unsigned emit,
                  teeny_artifact **out, teeny_diags *diags);

/* ---- the CPU interpreter ------------------------------------------------------------ */

/* One kernel argument for the interpreter, in parameter order. */
typedef struct teeny_interp_arg {
  void *data;   /* pointer params: host buffer */
  size_t bytes; /* pointer params: its size; accesses outside are errors */
  union {
    int64_t i;  /* integer and bool scalars */
    uint64_t u; /* unsigned scalars */
    double f;   /* float scalars (rounded to the param's dtype) */
  } v;
} teeny_interp_arg;

/* Run spec's kernel over grid[0] x grid[1] x grid[2] programs, one at a time,
 * on host buffers.  Returns 0, or TEENY_E_RUNTIME with a diagnostic (an
 * out-of-bounds access names its source line), TEENY_E_COMPILE, TEENY_E_INVAL
 * (wrong argument count or grid), TEENY_E_NOMEM. */
int teeny_spec_interpret(const teeny_spec *spec, const unsigned grid[3],
                         const teeny_interp_arg *args, size_t nargs,
                         teeny_diags *diags);

/* The same launch through the real code generator: spec's kernel is lowered
 * for its target as for PTX (layouts, conversions, reductions, mma
 * fragments, barriers) but JIT-compiled for this CPU, each thread of a block
 * a coroutine, and run over the grid on the same host buffers.  For
 * checking the code generator against the interpreter without a GPU (the
 * differential tests, `teenyc run --engine emu`).  Only in programs that
 * link the emulator library (teeny_codegen_emu; not part of libteenyc-client).
 * Returns as teeny_spec_interpret, TEENY_E_RUNTIME also when a block
 * deadlocks; out-of-bounds accesses are not checked. */
int teeny_spec_emulate(const teeny_spec *spec, const unsigned grid[3],
                       const teeny_interp_arg *args, size_t nargs,
                       teeny_diags *diags);

/* ---- inspecting a kernel file (teenyc-gen) -------------------------------------- */

/* What a kernel file declares, for tools that generate host code from it.
 * Everything is owned by the teeny_source_info and read-only. */
typedef struct teeny_generic_info {
  const char *name;           /* "D", "BLOCK_SIZE" */
  bool is_dtype;              /* TEENY_DTYPE; else TEENY_CONST */
  teeny_dtype const_dtype;    /* TEENY_CONST(N, T): T; TEENY_DT_VOID for
                                 TEENY_CONST(N), an i32 (a weak one) */
  const teeny_dtype *allowed; /* TEENY_DTYPE(D, f32, f16): the list; NULL: any */
  size_t nallowed;            /* its length */
} teeny_generic_info;

typedef struct teeny_param_info {
  const char *name;      /* as in the source */
  teeny_param_kind kind; /* scalar or pointer */
  teeny_dtype dtype;     /* its (pointee) dtype; TEENY_DT_VOID when generic */
  int generic;           /* index into generics when the dtype is one; else -1 */
} teeny_param_info;

typedef struct teeny_kernel_info {
  const char *name;               /* the kernel function */
  int line;                       /* 1-based line of its name */
  const int *generics;            /* TEENY_KERNEL's list, in order: indexes
                                     into teeny_source_info.generics */
  size_t ngenerics;
  const teeny_param_info *params; /* its parameters, in order */
  size_t nparams;
  int backward;                   /* index into kernels of its TEENY_BACKWARD
                                     kernel, or -1 */
  int forward;                    /* index of the kernel this is the backward
                                     of, or -1 */
} teeny_kernel_info;

typedef struct teeny_source_info {
  const teeny_generic_info *generics; /* every generic, in source order */
  size_t ngenerics;
  const teeny_kernel_info *kernels;   /* every kernel, in source order */
  size_t nkernels;
} teeny_source_info;

/* Parse and resolve a kernel file (no bindings, no IR) and describe its
 * generics, kernels, parameters and backward pairs.  filename (NULL:
 * "<source>") is for diagnostics.  Returns 0 with *out owning a new info
 * (free with teeny_source_info_destroy), or TEENY_E_COMPILE / TEENY_E_LIMIT
 * / TEENY_E_NOMEM with diagnostics; *out is NULL on failure. */
int teeny_source_inspect(const char *source, size_t len, const char *filename,
                         teeny_source_info **out, teeny_diags *diags);
void teeny_source_info_destroy(teeny_source_info *info); /* NULL is a no-op */

/* The library's version ("0.1.0"), LLVM's version ("19.1.7" or "none"). */
const char *teeny_version(void);
const char *teeny_llvm_version(void);

#ifdef __cplusplus
}
#endif
#endif /* TEENY_COMPILE_H */
