/*
 * tests/diff/dfz.h — the differential fuzzer's shared vocabulary: a test
 * case (kernel text, bindings, launch, arguments with their fills and
 * tolerances), the outcome of running one, element values of every dtype,
 * and the deterministic random numbers everything is derived from.
 *
 * The fuzzer (difffuzz) generates kernels in the kernel language
 * (docs/dsl.md), runs each in the CPU interpreter (the semantics) and in
 * the real code generator (host emulator or GPU), and compares every
 * pointer argument afterwards.  Files: gen*.c generate, ast.c holds and
 * prints the program tree, facts.c bounds values and errors, run.c and
 * gpu.c execute, check.c compares, sandbox.c isolates runs in child
 * processes, reduce.c shrinks failures, repro.c reads and writes
 * reproducers, main.c is the command line.
 */
#ifndef TEENY_TESTS_DIFF_DFZ_H
#define TEENY_TESTS_DIFF_DFZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "teeny/compile.h"

#define DFZ_MAX_PARAMS 48
#define DFZ_MAX_CONSTS 8
#define DFZ_NAME_LEN 24

/* ---- random numbers: splitmix64, one stream per use ------------------------ */

typedef struct dfz_rng {
  uint64_t s;
} dfz_rng;

static inline uint64_t dfz_next(dfz_rng *r) {
  uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline int dfz_below(dfz_rng *r, int n) { return (int)(dfz_next(r) % (uint64_t)n); }
/* Uniform in [lo, hi]. */
static inline int dfz_range(dfz_rng *r, int lo, int hi) { return lo + dfz_below(r, hi - lo + 1); }
/* True with probability pct/100. */
static inline bool dfz_chance(dfz_rng *r, int pct) { return dfz_below(r, 100) < pct; }
/* Uniform double in [0, 1). */
static inline double dfz_unit(dfz_rng *r) { return (double)(dfz_next(r) >> 11) / 9007199254740992.0; }

/* ---- element values (values.c) --------------------------------------------------- */

int dfz_esize(teeny_dtype dt);              /* bytes of one element (bool: 1) */
bool dfz_is_float(teeny_dtype dt);
bool dfz_is_fp8(teeny_dtype dt);
bool dfz_is_signed(teeny_dtype dt);         /* signed integers (not floats, not bool) */
bool dfz_is_int(teeny_dtype dt);            /* integers and bool */
int dfz_bits(teeny_dtype dt);               /* integer width (bool: 1) */
int dfz_precision(teeny_dtype dt);          /* float significand bits (f16 11, bf16 8, ...) */
double dfz_max_finite(teeny_dtype dt);      /* largest finite value (ints: largest value) */
double dfz_min_value(teeny_dtype dt);       /* smallest value (floats: -max_finite) */
double dfz_round(teeny_dtype dt, double x); /* round to dt's nearest value (floats only) */
/* Bound on one rounding error in dt for results of magnitude <= m. */
double dfz_ulp(teeny_dtype dt, double m);

/* One element as a double, or as exact 64-bit integer bits. */
double dfz_get(teeny_dtype dt, const void *buf, size_t i);
uint64_t dfz_get_bits(teeny_dtype dt, const void *buf, size_t i);
void dfz_put(teeny_dtype dt, void *buf, size_t i, double v);
void dfz_put_bits(teeny_dtype dt, void *buf, size_t i, uint64_t bits);
/* "12", "-3", "1.5", "nan", "inf": an element for messages. */
void dfz_format(teeny_dtype dt, const void *buf, size_t i, char *out, size_t size);

/* ---- fills: how a buffer starts --------------------------------------------------- */

typedef enum dfz_fill_kind {
  DFZ_FILL_POISON,   /* all bytes 0xff (NaN, -1): outputs, written before read */
  DFZ_FILL_ZEROS,
  DFZ_FILL_IOTA,     /* element i is i (wrapped or rounded to the dtype) */
  DFZ_FILL_INTS,     /* uniform integers in [lo, hi] */
  DFZ_FILL_REALS,    /* uniform reals in [lo, hi), rounded to the dtype */
  DFZ_FILL_BITS,     /* uniform random bit patterns (ints: the full range) */
  DFZ_FILL_SPECIAL,  /* floats: a mix of 0, -0, +-inf, NaN, subnormals, huge, small ints */
  DFZ_FILL__COUNT
} dfz_fill_kind;

typedef struct dfz_fill {
  dfz_fill_kind kind;
  double lo, hi;  /* INTS, REALS */
  uint64_t seed;  /* INTS, REALS, BITS, SPECIAL */
} dfz_fill;

const char *dfz_fill_name(dfz_fill_kind k); /* "poison", "zeros", ... */
dfz_fill_kind dfz_fill_parse(const char *name); /* DFZ_FILL__COUNT if unknown */
void dfz_fill_buffer(const dfz_fill *f, teeny_dtype dt, void *buf, size_t count);

/* ---- a case: one kernel launch to compare ----------------------------------------- */

typedef struct dfz_param {
  char name[DFZ_NAME_LEN];
  bool is_ptr;
  teeny_dtype dt;      /* scalar dtype, or the pointee (tensormaps: the element) */
  /* the tensormap of a tensor_desc parameter (NAME_tensormap, followed by
   * its other 2 x desc_rank launch parameters, docs/dsl.md): the rank and
   * the consts that name its block, one per dim; 0 for every other param */
  int desc_rank;
  char desc_block[4][DFZ_NAME_LEN];
  bool desc_part;      /* NAME_base, NAME_shape<k>, NAME_stride<k> of one */
  /* pointers */
  size_t count;        /* elements */
  dfz_fill fill;
  double tol;          /* largest |interp - engine| accepted per element; 0: equal */
  char cat[DFZ_NAME_LEN]; /* what the kernel does to it (the mismatch category) */
  /* scalars */
  double fval;         /* float scalars */
  int64_t ival;        /* integer and bool scalars */
} dfz_param;

typedef struct dfz_const {
  char name[DFZ_NAME_LEN];
  int64_t value;
} dfz_const;

typedef struct dfz_case {
  uint64_t seed;            /* the generator's seed (0 when read from a file) */
  char gname[DFZ_NAME_LEN]; /* a TEENY_DTYPE generic ("" if none) */
  teeny_dtype gdt;          /* ... bound to this dtype */
  char *source;             /* kernel text (malloc'd) */
  char kernel[DFZ_NAME_LEN];
  dfz_const consts[DFZ_MAX_CONSTS];
  int nconsts;
  char target[16];          /* "sm_90a", "sm_80" */
  int num_warps;
  unsigned grid[3];
  dfz_param params[DFZ_MAX_PARAMS];
  int nparams;
  int shift;                /* elements every plain pointer's buffer starts
                               past a 16-byte boundary (0 to 3), compiled
                               for with teeny.unaligned naming them all */
} dfz_case;

void dfz_case_free(dfz_case *c);      /* frees source; c reusable */
void dfz_case_copy(dfz_case *dst, const dfz_case *src);
dfz_param *dfz_case_param(dfz_case *c, const char *name);
/* Bytes buffer i of c starts past a 16-byte boundary (0 but for plain
 * pointers of a shifted case), and the teeny.unaligned bits of c. */
size_t dfz_case_shift_bytes(const dfz_case *c, int i);
uint64_t dfz_case_unaligned(const dfz_case *c);

/* ---- outcomes ----------------------------------------------------------------------- */

typedef enum dfz_status {
  DFZ_OK,             /* compiled, ran both ways, every buffer agreed */
  DFZ_MISMATCH,       /* a buffer differs */
  DFZ_INVALID,        /* the front end or the interpreter rejected it: a generator bug */
  DFZ_CODEGEN_ERROR,  /* the interpreter ran it, the code generator did not compile it */
  DFZ_ENGINE_ERROR,   /* the engine failed at run time (deadlock, launch error) */
  DFZ_CRASH,          /* the run died on a signal */
  DFZ_TIMEOUT,        /* the run took longer than its budget */
  DFZ_UNSUPPORTED,    /* the code generator answered UNSUPPORTED (counted, not a bug) */
  DFZ_STATUS__COUNT
} dfz_status;

const char *dfz_status_name(dfz_status s);

typedef struct dfz_outcome {
  dfz_status status;
  char cat[64];        /* mismatch: the category of the first differing buffer;
                          errors: a short class ("deadlock", "spec", ...) */
  char detail[2048];   /* what differed, or the diagnostics */
  double interp_s, engine_s; /* time spent in each */
} dfz_outcome;

/* Engines on the other side of the comparison. */
typedef enum dfz_engine { DFZ_ENGINE_EMU, DFZ_ENGINE_GPU, DFZ_ENGINE_INTERP } dfz_engine;

#endif /* TEENY_TESTS_DIFF_DFZ_H */
