/*
 * tests/diff/gen_int.h — the generator's working state, shared by its
 * files: gen.c (the kernel skeleton, launch and buffers), gen_expr.c
 * (typed expressions under value facts), gen_mem.c (addresses, loads,
 * stores), gen_desc.c (tensor descriptors) and gen_seg.c (the statement
 * patterns: stores, reductions, control flow, loops, atomics, memory
 * ordering).
 *
 * Race freedom by construction: every pointer a program writes is either
 * its own tile of a global array (disjoint across programs) or its own
 * slot of a per-program region (pid * SLOT + ...); shared addresses are
 * touched only by commutative atomics whose old values are unused; a
 * buffer that is written is never read by another program.
 */
#ifndef TEENY_TESTS_DIFF_GEN_INT_H
#define TEENY_TESTS_DIFF_GEN_INT_H

#include "tests/diff/gen.h"

#define G_MAX_VARS 256
#define G_MAX_SCOPES 32

typedef enum gbuf_role {
  BR_IN,     /* read-only input */
  BR_OUT,    /* written, never read; poisoned first */
  BR_IO,     /* read and written by its own program (ordering patterns) */
  BR_ATOM,   /* atomics on addresses the program owns */
  BR_SHARED  /* atomics whose old values are unused, on shared addresses */
} gbuf_role;

typedef struct gbuf {
  int pi;          /* index in meta.params */
  teeny_dtype dt;
  gbuf_role role;
  dfz_fact cls;    /* IN, IO, ATOM: facts of every value it ever holds */
  long need;       /* elements its accesses need so far */
  double tol;      /* OUT: the largest tolerance of a store into it */
  int shared_ops;  /* SHARED: contributions per element bound (for sums) */
  unsigned taint;  /* G_T_* of the values loads from it give */
  bool desc_base;  /* NAME_base of a tensor_desc parameter: no name in the kernel */
} gbuf;

typedef struct gvar {
  char *name;
  teeny_dtype dt;
  dfz_shape sh;
  dfz_fact f;
  bool fixed;      /* never assigned (index variables, loop counters) */
  bool hidden;     /* not a leaf for expressions (loop-carried while in the body) */
  unsigned taint;  /* G_T_* bits: the patterns its value comes from */
} gvar;

/* Taints: a value read back from an ordering pattern, a flag, an atomic.
 * A buffer's mismatch category follows the taints of what is stored in
 * it (and of the branch conditions around the store). */
#define G_T_ORDER 1u
#define G_T_UNIFORM 2u
#define G_T_ATOMIC 4u
#define G_T_FREM 8u   /* a float remainder */
#define G_T_TANH 16u  /* tanh */

/* What an expression must be. */
typedef struct gwant {
  teeny_dtype dt;
  dfz_shape sh;     /* the result broadcasts to sh */
  bool exact_shape; /* ... and has exactly shape sh */
  bool exact;       /* err == 0 */
  bool intval;      /* integer-valued */
  double bound;     /* > 0: |value| <= bound and finite */
} gwant;

typedef enum glayout { LAY_1D, LAY_2D } glayout;

typedef struct gen {
  dfz_prog *p;
  dfz_rng r;
  unsigned skip;      /* features not to use */
  unsigned used;      /* features used */
  bool approx;        /* real-valued data and approximate math allowed */
  glayout lay;
  /* consts (indexes into meta.consts) and dims */
  int cB, cBM, cBN;
  int dB, dBM, dBN, dE;
  long nprog;         /* programs in the grid */
  long n, R, C, S;    /* 1-D size; 2-D rows, cols, row stride */
  /* scope */
  gvar vars[G_MAX_VARS];
  int nvars;
  int marks[G_MAX_SCOPES];
  int nmarks;
  dfz_block *cur;     /* statements go here */
  bool in_helper;     /* generating a helper body: element-wise on params only */
  int loop_depth;
  int uniq;
  gbuf bufs[DFZ_MAX_PARAMS];
  int nbufs;
  int nhelpers;
  int nest;           /* depth of segments inside branches and loops */
  bool exited;        /* an early return was emitted: some programs may not
                         reach what follows */
  int assign_floor;   /* variables below this index are not assigned (loop bodies) */
  unsigned ctl_taint; /* taints of the branch conditions around the current statement */
} gen;

/* ---- gen.c: names, scope, parameters, buffers ------------------------------------ */

char *g_name(gen *g, const char *prefix);
gvar *g_var_add(gen *g, const char *name, teeny_dtype dt, dfz_shape sh, dfz_fact f, bool fixed);
gvar *g_var_find(gen *g, const char *name);
void g_scope_push(gen *g);
void g_scope_pop(gen *g);
void g_emit(gen *g, dfz_stmt *s);
bool g_on(gen *g, dfz_feature f);          /* enabled? */
void g_use(gen *g, dfz_feature f);         /* record its use */
/* A new helper function, placed before the kernel. */
dfz_func *g_helper_new(gen *g, const char *name, const char *sig);
/* A new pointer parameter. */
gbuf *g_buf_new(gen *g, const char *prefix, teeny_dtype dt, gbuf_role role);
/* An existing input of dtype dt, or a new one (random fill by the mode). */
gbuf *g_buf_input(gen *g, teeny_dtype dt);
gbuf *g_buf_input_new(gen *g, teeny_dtype dt); /* always a new one */
/* A new kernel parameter (named prefix + a number), or NULL when there is no room. */
dfz_param *g_param_new(gen *g, const char *prefix, bool is_ptr, teeny_dtype dt);
void g_buf_need(gbuf *b, long elems);
const char *g_buf_name(gen *g, const gbuf *b);
/* A dim of mul * the product of d0's and d1's consts, or -1 if it is not
 * expressible in the dim table. */
int g_dim_mul(gen *g, int d0, int d1);
int g_dim_value(gen *g, int d);

/* ---- gen_expr.c: expressions -------------------------------------------------------- */

gwant g_want(teeny_dtype dt, dfz_shape sh);
dfz_expr *gx(gen *g, gwant w, int depth);
/* One production forced (a segment that is about a reduction, a dot...),
 * falling back to gx when it cannot meet w. */
typedef enum gprod { GP_REDUCE, GP_SCAN, GP_DOT, GP_SHAPE, GP_MATH, GP_HELPER, GP_RANK3 } gprod;
dfz_expr *gx_forced(gen *g, gprod which, gwant w, int depth);
/* Helpers for building nodes with facts. */
dfz_expr *gx_var(gen *g, const gvar *v);
dfz_expr *gx_int_lit(gen *g, teeny_dtype dt, long v);   /* typed (cast) unless i32 */
dfz_expr *gx_weak_lit(gen *g, teeny_dtype ctx, long v); /* weak: takes ctx's dtype */
dfz_expr *gx_dim_lit(gen *g, int dim);                  /* "(2 * BN)" as an i32 value */
dfz_expr *gx_bin(gen *g, dfz_op op, dfz_expr *a, dfz_expr *b);   /* NULL if refused */
dfz_expr *gx_call(gen *g, dfz_op op, int n, dfz_expr **args);     /* NULL if refused */
dfz_expr *gx_cast(gen *g, dfz_expr *e, teeny_dtype to);          /* NULL if refused */
dfz_expr *gx_arange(gen *g, int dim);
dfz_expr *gx_col(gen *g, dfz_expr *e);
dfz_expr *gx_row(gen *g, dfz_expr *e);
dfz_expr *gx_zeros(gen *g, teeny_dtype dt, dfz_shape sh);
dfz_expr *gx_full(gen *g, teeny_dtype dt, long v, dfz_shape sh);
dfz_expr *gx_broadcast(gen *g, dfz_expr *e, dfz_shape sh);
/* Result shape of broadcasting a with b; false if they do not broadcast. */
bool g_broadcast(dfz_shape a, dfz_shape b, dfz_shape *out);
bool g_fits(dfz_shape a, dfz_shape into); /* a broadcasts to into */
teeny_dtype g_promote(teeny_dtype a, teeny_dtype b);
teeny_dtype g_sum_dtype(teeny_dtype dt);
/* A random dtype for values (all 13; floats more often in approx mode). */
teeny_dtype g_rand_dtype(gen *g);
/* Make e satisfy w (clamp, floor, cast, broadcast_to); NULL if impossible. */
dfz_expr *gx_fix(gen *g, dfz_expr *e, gwant w);

/* ---- gen_mem.c: addresses, loads, stores ---------------------------------------------- */

/* b + off (off NULL: b itself), pinned. */
dfz_expr *g_ptr(gen *g, gbuf *b, dfz_expr *off);
/* load(ptr [, mask [, other]]) of b (its values have b's facts). */
dfz_expr *g_load_node(gen *g, gbuf *b, dfz_expr *ptr, dfz_expr *mask, bool other);
/* store(ptr, value [, mask]) as an expression. */
dfz_expr *g_store_node(gen *g, dfz_expr *ptr, dfz_expr *value, dfz_expr *mask);
/* The program's own slot of `elems` (a dim) in b: b + pid * elems + local(sh). */
dfz_expr *g_slot_ptr(gen *g, gbuf *b, dfz_shape sh, int elems_dim);
/* Local offsets of a row-major tile of shape sh: arange / col*D1+row. */
dfz_expr *g_local_offs(gen *g, dfz_shape sh);
/* An exact i32 index in [0, len) of shape sh (scalar: uniform), computed
 * from data as ((x % len) + len) % len; pinned. */
dfz_expr *g_index(gen *g, dfz_shape sh, long len);
/* The same with len the dim `dim` (it follows the consts when reduced). */
dfz_expr *g_index_dim(gen *g, dfz_shape sh, int dim);
/* A load of dtype dt, shape broadcasting to sh, from a (new or reused) input. */
dfz_expr *g_load_input(gen *g, teeny_dtype dt, dfz_shape sh);
/* store(p, value [, mask]) as a statement; records the tolerance in b. */
void g_store(gen *g, gbuf *b, dfz_expr *ptr, dfz_expr *value, dfz_expr *mask);
/* Any store expression of value into b as a statement, its tolerance recorded in b. */
void g_store_emit(gen *g, gbuf *b, dfz_expr *store, const dfz_expr *value);
/* Store value (any shape that has a slot dim) into a fresh output's slot. */
void g_store_slot(gen *g, dfz_expr *value, const char *cat);
/* Store value (broadcasting to the program's tile) into a fresh output's
 * global tile, masked at the edges. */
void g_store_global(gen *g, dfz_expr *value, const char *cat);
/* The taints of what e reads (variables, loads, atomics). */
unsigned g_taint(gen *g, const dfz_expr *e);
/* Set b's mismatch category from the taints t of a value stored into it. */
void g_taint_cat(gen *g, gbuf *b, unsigned t);
/* The elements dim of a shape (-1 when not expressible). */
int g_shape_dim(gen *g, dfz_shape sh);
/* The dtype of a fresh output for value (its own, or one the store
 * converts it to exactly enough), or TEENY_DT_VOID when none will do. */
teeny_dtype g_out_dtype(gen *g, const dfz_expr *value);
/* The variable name as an expression (NULL if not in scope). */
dfz_expr *g_var_expr(gen *g, const char *name);
/* e marked pinned (the reducer keeps it as it is); NULL stays NULL. */
dfz_expr *g_pin(dfz_expr *e);

/* ---- gen_desc.c: tensor descriptors ------------------------------------------------------- */

/* The program's tile (1-D [B], 2-D [BM, BN]) loaded through a descriptor
 * over a new or existing input of dtype dt (a descriptor made in the
 * kernel, or a tensor_desc parameter), NULL when sh cannot take it. */
dfz_expr *g_desc_load(gen *g, teeny_dtype dt, dfz_shape sh);
/* value stored through a descriptor into a fresh output; false (nothing
 * emitted) when it cannot be. */
bool g_desc_store(gen *g, dfz_expr *value, const char *cat);

/* ---- gen_seg.c: statement patterns ----------------------------------------------------- */

void g_segment(gen *g);

#endif /* TEENY_TESTS_DIFF_GEN_INT_H */
