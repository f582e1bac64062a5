/*
 * dsl/nvptx/codegen.h — the private interface of the LLVM back end
 * (the .c files of dsl/nvptx/; nothing else includes it, so only they need
 * the LLVM-C headers; the rest of the compiler asks through nvptx.h).  One
 * section per file, in the order data flows:
 *
 *   codegen.c   driver: target, module, kernel, passes, PTX, helpers
 *   layout.c    linear layouts: construction, algebra, thread coords
 *   analysis.c  per-value facts: axis info, pointer roots, layouts
 *   value.c     registers of values: scopes, remat, conversions, smem
 *   ops.c       element-wise ops on scalars (and so on registers)
 *   math.c      the math builtins (f32 fast paths, f64)
 *   mem.c       loads, stores, atomics
 *   reduce.c    reduce and scan
 *   index.c     gather and histogram: elements moved by computed indices
 *   dot.c       dot: wgmma (sm_90a), mma.sync (f16, bf16, tf32, i8), FMA
 *   tma.c       a tensor_desc parameter's block through the TMA (sm_90+)
 *   ctrl.c      regions, op dispatch, if/for/while
 *   order.c     program order between threads: where barriers must go
 *   debug.c     device_print and device_assert: vprintf, __assertfail
 *   repair.c    rewrites of the optimised IR around NVPTX back-end bugs
 *   cfg.c       the emitted PTX's flow graph: every loop has one entry
 *               (declared in nvptx.h: it reads text, not LLVM IR)
 *
 * Execution model (Triton's): one CTA per program; every thread computes
 * every scalar (scalars are uniform); a tile value is spread over the CTA
 * by a *linear layout* (below) and each thread keeps its elements as LLVM
 * values, one per "register".  See docs/perf-notes.md for the reasoning.
 *
 * Errors: teeny__cg_fail() reports a diagnostic and longjmps to the driver,
 * which disposes of the LLVM objects and returns the code.  All scratch
 * memory comes from the back end's own arena (freed at the end of the call;
 * an allocation failure longjmps the same way with TEENY_E_NOMEM).
 */
#ifndef TEENY_DSL_NVPTX_CODEGEN_H
#define TEENY_DSL_NVPTX_CODEGEN_H

#include <setjmp.h>

#include <llvm-c/Core.h>

#include "dsl/nvptx/nvptx.h"

/* ============================================================================
 * layouts
 *
 * Every tile shape is a power of two in every dim, so an element's row-major
 * flat index has log2(numel) bits.  A layout says, for each bit of a
 * thread's register index, lane id (5 bits) and warp id, which flat-index
 * bit it sets, or -1 when the bit does not move the element (the element is
 * then held more than once: a duplicate).  The element of (reg, lane, warp)
 * is the OR of those bits (the bits are distinct, so OR = XOR = ADD).  This
 * one form covers blocked layouts (16 bytes per thread along the contiguous
 * axis, lanes, warps, repeats), slices after a reduction, broadcasts, the
 * mma.sync fragments and anything a reshape or transpose makes of them.
 * ========================================================================== */

#define CG_MAX_REG_BITS 24 /* register bits of one layout (checked) */
#define CG_MAX_REGS_LOG2 10 /* a tile may take at most 1024 values per thread */
#define CG_LANE_BITS 5

typedef struct cg_layout {
  int rank;                           /* 1 or 2 */
  int shape[TEENY_MAX_RANK];          /* powers of two */
  int nreg;                           /* register bits: 1 << nreg values */
  int nwarp;                          /* warp bits: log2(num_warps) */
  signed char reg[CG_MAX_REG_BITS];   /* flat bit set by register bit i, or -1 */
  signed char lane[CG_LANE_BITS];     /* flat bit set by lane bit i, or -1 */
  signed char warp[CG_LANE_BITS];     /* flat bit set by warp bit i, or -1 */
  /* per-module caches, not part of the identity */
  LLVMValueRef tpart; /* this thread's flat-index bits (entry block) */
  LLVMValueRef owner; /* i1: lane/warp duplicate bits are all 0 (entry block) */
} cg_layout;

/* ============================================================================
 * the code generator's state (one per teeny__codegen_ptx call)
 * ========================================================================== */

/* One materialisation of a value: its registers in a layout, valid while
 * the scope it was made in is open (so it dominates every later use). */
typedef struct cg_regs {
  const cg_layout *L;   /* NULL: a scalar (v[0]) */
  int scope;            /* scope id it was created in */
  LLVMValueRef *v;      /* 1 << L->nreg values (1 for scalars) */
  struct cg_regs *next; /* other layouts of the same value */
} cg_regs;

/* Facts about a tile value along each dim (Triton's AxisInfo, re-derived):
 * contig: elements come in runs of this many consecutive values (pointer:
 *         consecutive addresses); the runs start at multiples of contig.
 * div:    the first value of each run is a multiple of div (pointers: in
 *         bytes); for scalars only div[0] is used.
 * cnst:   values are equal within aligned blocks of this many elements.
 * affine: within aligned blocks of this many elements, consecutive values
 *         differ by one amount known only at run time (`i * stride`): a
 *         vector access there checks contiguity at run time.
 * ustep:  1 when the amount of every affine run along the dim is the same
 *         over the whole tile (`a_ptr + col(rm) * sam + row(rk) * sak`
 *         steps by sak everywhere along dim 1), so one check of it holds
 *         for every vector of an access; 0: unknown.
 * mono:   bool tiles: within aligned runs of |mono| elements the value is
 *         true then false (mono > 0: `offs < n`) or false then true
 *         (mono < 0); 0: unknown.  A group is all true iff its last
 *         (first) element is. */
#define CG_MAXDIV (1 << 30)
typedef struct cg_axis {
  int contig[TEENY_MAX_RANK];
  int div[TEENY_MAX_RANK];
  int cnst[TEENY_MAX_RANK];
  int affine[TEENY_MAX_RANK];
  int ustep[TEENY_MAX_RANK];
  int mono[TEENY_MAX_RANK];
} cg_axis;

/* Strength of a value's natural layout, for choosing the layout of an
 * element-wise op from its operands (strongest wins, first on ties). */
enum {
  CG_STR_FREE = 0,   /* index math: computed on demand in any layout */
  CG_STR_WEAK = 1,   /* a default, or a broadcast of something stronger */
  CG_STR_DERIVED = 2, /* reduction and scan results */
  CG_STR_ANCHOR = 3  /* loads, atomics, dot */
};

typedef struct cg_vinfo {
  const cg_layout *nat;   /* tiles: natural (home) layout */
  int str;                /* CG_STR_* of nat */
  bool lazy;              /* recomputed per requested layout (see value.c) */
  cg_axis ax;             /* axis facts (tiles and int/ptr scalars) */
  uint64_t roots;         /* pointers: params they may point into */
  const cg_layout *want;  /* region args: layout a memory use asked for */
  int depth;              /* lazy values: length of the lazy chain below */
  bool prefetched;        /* loads: issued one loop iteration ahead (ctrl.c) */
  const struct cg_stile *astage; /* loads: this iteration's cp.async stage */
  LLVMValueRef *cp_delta; /* loads of a versioned loop: each owned group's first
                             address minus the first owned group's (i64,
                             loop-invariant; the fast copy's addresses) */
  bool cp_split;          /* loads of a versioned loop: the mask is
                             cp_inv & (range < splat(cp_ks)), cp_inv loop-
                             invariant and the range's largest value cp_kmax,
                             so in an iteration where cp_kmax < cp_ks the mask
                             is cp_inv (teeny__cg_async_mask_split) */
  int cp_inv, cp_ks, cp_kmax; /* (cp_inv -1: the mask is the k bound alone) */
  int cp_koff;            /* -1, or the bound is a descriptor's: (u32)(range +
                             splat(cp_koff)) < splat(cp_ks), cp_ks u32 */
  bool cp_whole;          /* loads of a versioned loop: the version test checked
                             that the fast copy's mask cp_whole_mask is the same
                             over each vector group (teeny__cg_async_whole_ok) */
  int cp_whole_mask;
} cg_vinfo;

/* One memory access since the last barrier (order.c). */
typedef struct cg_access {
  uint64_t roots;       /* written parameters it may touch */
  int ptr;              /* its pointer value (a tile or a scalar) */
  const cg_layout *L;   /* the layout its elements ran in; NULL: thread 0 alone */
  bool write;           /* a store or an atomic */
  bool owner_only;      /* each element by its first holder (stores, atomics) */
  signed char comm;     /* an atomic whose order cannot show (its old value
                           unused, integer add/max/min): its teeny_rmw_kind;
                           -1 otherwise */
} cg_access;

/* The accesses that may be pending at a point (union over the paths). */
typedef struct cg_order {
  cg_access *v;
  int n, cap;
  bool acquire;         /* an acquire since the last barrier, on some path */
  bool acquire_t0;      /* ... and thread 0's only (a scalar atomic) */
  cg_access cur;        /* the access of the op being lowered, until its
                           memory instruction is out (has_cur): a barrier of
                           the op's own (a layout exchange of its operands)
                           comes before that instruction, so it keeps it
                           pending */
  bool has_cur;
} cg_order;

/* A loop being lowered: the accesses its body may make before its first
 * barrier at the body's own level, which the latch checks against. */
typedef struct cg_order_frame {
  cg_order head;
  int depth;            /* g->rdepth of the body */
  bool open;            /* no barrier at that level yet */
  const teeny_op *loop; /* the IR_FOR (its step and carried values tell how
                           far a pointer moves per trip), or an IR_WHILE */
  struct cg_order_frame *up;
} cg_order_frame;

/* Longest chain of lazy values: deeper ones are made eagerly, so that
 * computing a value on demand never recurses without bound. */
#define CG_MAX_LAZY_DEPTH 64
/* Register values one compile may create (a bound on LLVM IR size). */
#define CG_MAX_WORK (1L << 22)

typedef struct cg {
  teeny_ctx *cx;
  const teeny_ir_func *f;
  teeny_arena arena;      /* back-end scratch; oom longjmps to fail */
  jmp_buf fail;           /* teeny__cg_fail() lands here */
  int err;                /* code carried by the longjmp */
  int num_warps, warp_bits;
  int num_stages;              /* requested cp.async stages (0: ours) */
  int sm;                 /* 80, 86, 89, 90 */
  bool emu;               /* host module for the emulator (emu.c) */
  char **ir_out;          /* teeny__codegen_llvm_ir: where the IR text goes */
  LLVMValueRef emu_arg;   /* emu: the runtime state, the kernel's first param */
  bool sm_a;              /* sm_90a */
  teeny_loc loc;          /* op being lowered, for diagnostics */
  /* LLVM */
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;       /* the current insertion point */
  LLVMBuilderRef pb;      /* end of the entry block (thread ids, constants) */
  LLVMValueRef fn;
  LLVMBasicBlockRef entry;
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_bf16, t_f32,
      t_f64, t_gptr, t_sptr;
  LLVMValueRef tid, lane, warp; /* i32, computed in the entry block */
  /* per value */
  cg_vinfo *vi;           /* [f->nvalues] */
  cg_regs **vals;         /* [f->nvalues] materialisations */
  uint64_t written;       /* params stored to or atomically updated */
  int *uses;              /* [f->nvalues] operands naming each value */
  /* interned layouts (pointer equality = layout equality) */
  cg_layout **layouts;
  int nlayouts, caplayouts;
  /* scopes */
  int scope;              /* current scope id */
  bool *scope_open;       /* [nscopes] */
  int nscopes, capscopes;
  /* shared memory: one buffer reused by every exchange */
  LLVMValueRef smem;      /* placeholder global, replaced at the end */
  int smem_bytes;         /* high-water mark */
  int smem_align;         /* alignment the buffers need (16, or CG_WG_ALIGN) */
  int smem_cur;           /* bytes handed out in the current exchange */
  long work;              /* register values created so far */
  /* double-buffered dot operands in for loops (dot.c, ctrl.c) */
  LLVMValueRef db_smem;   /* placeholder: placed after the exchange buffer */
  LLVMValueRef tma_bar;   /* tma.c: the mbarrier TMA loads complete on (its own
                             shared variable, initialised in the entry block) */
  LLVMValueRef tma_phase; /* tma.c: i32 alloca, the phase its next wait is for */
  int db_bytes;           /* top of the dot/stage buffers now in use (they
                             are freed, stack-like, when their loop ends) */
  int db_hwm;             /* their high-water mark */
  int smem_db_x;          /* exchange bytes used while some are in use: the
                             dot/stage buffers start there, and exchanges
                             outside their loops may reuse that memory */
  const teeny_region *db_body; /* the for body whose top-level dots may use them */
  LLVMValueRef db_phase;  /* i32 0/1: which half this iteration writes */
  int hide_lo, hide_hi;   /* scopes [lo, hi) are invisible (loop prefetch) */
  int fresh_from;         /* lazy values made in scopes before this are
                             invisible: recompute (mem.c fallbacks) */
  const cg_layout *fresh_L[8]; /* while recomputing: opaque copies of */
  LLVMValueRef fresh_tp[8];    /* thread coordinates, so LLVM cannot merge */
  int nfresh;                  /* the copies with (and extend) earlier values */
  /* a wgmma dot whose wait is deferred to the end of its loop iteration, so
   * that the next stage's copies are issued while the tensor cores work
   * (ctrl.c sets it, dot.c leaves its registers pending) */
  const teeny_op *hint_op;     /* the load or store being lowered, whose
                                  cache and eviction options its accesses
                                  carry (mem.c; NULL: none) */
  bool ordered_loads;          /* predicated loads keep their place (asm
                                  with side effects; ctrl.c) */
  bool cp_fast;                /* cp.async copies of a versioned loop's fast
                                  copy: every group is known aligned and
                                  contiguous (teeny__cg_async_layout_ok held
                                  in every thread); only masks are checked */
  const teeny_op *wg_defer;
  LLVMValueRef *wg_pend;       /* its accumulator registers, not yet waited,
                                  followed by wg_pend_extra A words (a
                                  register-A wgmma reads them until then) */
  const cg_layout *wg_pend_L;
  int wg_pend_extra;
  /* program order between threads (order.c) */
  cg_order ord;                /* accesses since the last barrier */
  cg_order_frame *frames;      /* the loops being lowered, innermost first */
  int rdepth;                  /* nesting depth of the region being lowered */
  int divergent;               /* > 0: inside a branch on thread-dependent data,
                                  where a barrier would deadlock (checked) */
} cg;

/* ============================================================================
 * codegen.c — driver and helpers
 * ========================================================================== */

/* Report an error at loc (0,0: the current op) and unwind to the driver. */
_Noreturn void teeny__cg_fail(cg *g, int code, const char *fmt, ...) TEENY_PRINTF(3, 4);
/* Zeroed scratch memory (never NULL: unwinds with TEENY_E_NOMEM). */
void *teeny__cg_alloc(cg *g, size_t n);

LLVMTypeRef teeny__cg_type(cg *g, teeny_dtype dt);     /* register type */
LLVMTypeRef teeny__cg_memtype(cg *g, teeny_dtype dt);  /* in memory (bool: i8) */
LLVMValueRef teeny__cg_i32(cg *g, long long v);
LLVMValueRef teeny__cg_i64(cg *g, long long v);
LLVMValueRef teeny__cg_bool(cg *g, bool v);
/* A call of intrinsic name (overloaded on tys[0..nty)). */
LLVMValueRef teeny__cg_intrin(cg *g, const char *name, LLVMTypeRef *tys, int nty,
                              LLVMValueRef *args, int nargs);
/* Inline PTX: ret is the result type (void, a scalar or a struct). */
LLVMValueRef teeny__cg_asm(cg *g, LLVMTypeRef ret, const char *text,
                           const char *constraints, LLVMValueRef *args,
                           int nargs, bool side_effects);
LLVMValueRef teeny__cg_sreg(cg *g, const char *name); /* "tid.x" ... */
/* An empty asm with side effects that uses v[0..n): everything computing
 * them stays before it (registers of other types are left out). */
void teeny__cg_pin(cg *g, LLVMValueRef *v, long n);
/* Build the whole module (analysis, kernel, body, shared memory); may
 * unwind.  Sets out->shared_bytes. */
void teeny__cg_build_module(cg *g, teeny_codegen_out *out);
void teeny__cg_barrier(cg *g);
/* Memory register value <-> register value (bool <-> i8). */
LLVMValueRef teeny__cg_to_mem(cg *g, teeny_dtype dt, LLVMValueRef v);
LLVMValueRef teeny__cg_from_mem(cg *g, teeny_dtype dt, LLVMValueRef v);

/* ============================================================================
 * layout.c
 * ========================================================================== */

const cg_layout *teeny__cg_intern(cg *g, const cg_layout *L);
int teeny__cg_log2(long x);
/* Blocked: `vec` consecutive elements along `fast` per thread, then lanes,
 * then warps, then repeats; the other axis follows the fast one. */
const cg_layout *teeny__cg_blocked(cg *g, int rank, const int *shape, int fast,
                                   int vec);
/* The default layout of a tile type (16 bytes per thread along the last
 * axis, fewer when the tile is too small to give every thread that much). */
const cg_layout *teeny__cg_default(cg *g, teeny_type t);
/* The layout of reduce's result: L without `axis`, duplicate registers
 * dropped. */
const cg_layout *teeny__cg_slice(cg *g, const cg_layout *L, int axis);
/* For a view op (expand_dims, broadcast, reshape, trans) with operand type
 * src: the operand layout whose registers are the result's registers in
 * L (same register count). */
const cg_layout *teeny__cg_pullback(cg *g, const cg_layout *L,
                                    const teeny_op *op, teeny_type src);
/* The other way, for the analysis: the result layout of a view op whose
 * operand has layout L (broadcast dims go to new register bits). */
const cg_layout *teeny__cg_pushforward(cg *g, const cg_layout *L,
                                       const teeny_op *op, teeny_type dst);
/* Can values in A be re-indexed into B within each thread?  If so and map
 * is non-NULL, map[rb] is A's register for B's register rb. */
bool teeny__cg_free_conv(const cg_layout *A, const cg_layout *B, int *map);
/* Flat-index bits of register r (a constant). */
long teeny__cg_reg_bits(const cg_layout *L, long r);
/* i32 flat index bits owned by this thread (lanes and warps). */
LLVMValueRef teeny__cg_tpart(cg *g, const cg_layout *L);
/* i1: this thread is the first holder of its elements. */
LLVMValueRef teeny__cg_owner(cg *g, const cg_layout *L);
/* Registers whose duplicate register bits are all 0. */
bool teeny__cg_reg_owner(const cg_layout *L, long r);
/* r with its duplicate register bits cleared (the register it copies). */
long teeny__cg_dup_src(const cg_layout *L, long r);
/* i32 flat index of register r in this thread. */
LLVMValueRef teeny__cg_flat(cg *g, const cg_layout *L, long r);
/* Coordinate along dim d of a flat index. */
LLVMValueRef teeny__cg_coord(cg *g, const cg_layout *L, LLVMValueRef flat, int d);
/* Flat bit of (dim d, bit k) and back. */
int teeny__cg_flatbit(int rank, const int *shape, int d, int k);
void teeny__cg_dimbit(int rank, const int *shape, int b, int *d, int *k);
/* Number of low register bits that walk consecutive elements along dim d
 * from its bit 0 (the vector width is 1 << that). */
int teeny__cg_run_bits(const cg_layout *L, int d);
/* Debug text of a layout (scratch memory). */
const char *teeny__cg_layout_str(cg *g, const cg_layout *L);

/* ============================================================================
 * analysis.c
 * ========================================================================== */

/* Fill g->vi (axis facts, pointer roots, layouts, laziness) and g->written. */
void teeny__cg_analyze(cg *g);
/* The layout to take value id in when the consumer has no preference. */
const cg_layout *teeny__cg_use_layout(cg *g, int id);
/* The layout a load/store/atomic uses for its pointer tile. */
const cg_layout *teeny__cg_mem_layout(cg *g, const teeny_op *op);

/* ============================================================================
 * value.c
 * ========================================================================== */

/* Open a scope (for a nested region); returns the scope to restore. */
int teeny__cg_scope_push(cg *g);
void teeny__cg_scope_pop(cg *g, int saved);
/* Registers of value id in layout L (scalars: L ignored, one value). */
LLVMValueRef *teeny__cg_get(cg *g, int id, const cg_layout *L);
LLVMValueRef teeny__cg_scalar(cg *g, int id);
/* Record registers for value id (regs must have 1 << L->nreg entries). */
void teeny__cg_set(cg *g, int id, const cg_layout *L, LLVMValueRef *regs);
void teeny__cg_set_scalar(cg *g, int id, LLVMValueRef v);
LLVMValueRef *teeny__cg_regs_new(cg *g, const cg_layout *L);
/* Move registers of dtype dt from layout A to B (same shape). */
LLVMValueRef *teeny__cg_convert(cg *g, LLVMValueRef *src, const cg_layout *A,
                                const cg_layout *B, teeny_dtype dt);
/* Shared memory: start an exchange (barrier), take bytes, address of an
 * offset. */
void teeny__cg_smem_begin(cg *g);
int teeny__cg_smem_take(cg *g, int bytes, int align);
/* Bytes of the dot/stage buffers (offset from their start); the caller
 * that opens a loop restores g->db_bytes when the loop ends. */
int teeny__cg_db_take(cg *g, int bytes, int align);
LLVMValueRef teeny__cg_smem_ptr(cg *g, LLVMValueRef byte_off);
/* Store/load `n` consecutive elements (n * size <= 16) at an address. */
void teeny__cg_smem_store(cg *g, LLVMValueRef addr, teeny_dtype dt,
                          LLVMValueRef *v, int n);
void teeny__cg_smem_load(cg *g, LLVMValueRef addr, teeny_dtype dt,
                         LLVMValueRef *out, int n);
/* Value broadcast from thread 0 to the whole CTA. */
LLVMValueRef teeny__cg_bcast_thread0(cg *g, LLVMValueRef v, teeny_dtype dt);

/* ============================================================================
 * ops.c
 * ========================================================================== */

/* Lower element-wise op `code` on scalar LLVM values of the operands'
 * dtypes; res_dt is the result dtype (cast, cmp); pred for cmp. */
LLVMValueRef teeny__cg_scalar_op(cg *g, const teeny_op *op, const teeny_dtype *adt,
                                 teeny_dtype res_dt, LLVMValueRef *a);
/* A math builtin (exp ... erf, sqrt, floor, ceil) on one value of float
 * dtype dt (math.c); fast: the hardware approximation (fast_exp, ...). */
LLVMValueRef teeny__cg_math(cg *g, teeny_opcode code, teeny_dtype dt, bool fast,
                           LLVMValueRef x);
/* atan2(y, x) and x^y of float dtype dt (math.c). */
LLVMValueRef teeny__cg_atan2(cg *g, teeny_dtype dt, LLVMValueRef y, LLVMValueRef x);
LLVMValueRef teeny__cg_pow(cg *g, teeny_dtype dt, LLVMValueRef x, LLVMValueRef y);
/* Element-wise convert of one value. */
LLVMValueRef teeny__cg_cast(cg *g, LLVMValueRef v, teeny_dtype from, teeny_dtype to);
/* fp8.c: f8e4m3/f8e5m2 bits (i8) to f32, exactly; f32 to fp8 bits, nearest
 * even, saturating (as common/fp8.c). */
LLVMValueRef teeny__cg_fp8_to_f32(cg *g, LLVMValueRef bits, teeny_dtype dt);
LLVMValueRef teeny__cg_f32_to_fp8(cg *g, LLVMValueRef f, teeny_dtype dt);
/* Constant of dtype dt. */
LLVMValueRef teeny__cg_const(cg *g, teeny_dtype dt, teeny_scalar s);
/* Whether op is element-wise (one register out per register in). */
bool teeny__cg_is_elementwise(teeny_opcode code);
/* Emit an element-wise op whose result is a tile (eager) or a scalar. */
void teeny__cg_emit_elementwise(cg *g, const teeny_op *op);
/* The same per register for a requested layout (used by remat). */
LLVMValueRef *teeny__cg_elementwise_regs(cg *g, const teeny_op *op,
                                         const cg_layout *L);

/* ============================================================================
 * mem.c
 * ========================================================================== */

void teeny__cg_emit_load(cg *g, const teeny_op *op);
/* The registers a tile load produces, in its natural layout; extra (a
 * uniform i1, or NULL) is ANDed into the mask (loop prefetching). */
LLVMValueRef *teeny__cg_load_regs(cg *g, const teeny_op *op, LLVMValueRef extra);
/* cp.async pipelining (sm_80+; the emulator copies synchronously). */
void teeny__cg_cp_async_commit(cg *g);
void teeny__cg_cp_async_wait(cg *g, int pending);
/* Can this tile load be a cp.async into a row-major stage tile (zero or no
 * `other`, vector groups of 4, 8 or 16 bytes along the columns)? */
bool teeny__cg_async_ok(cg *g, const teeny_op *op, int axis);
/* Issue it into stage tile t (extra: a uniform i1 ANDed into the mask). */
void teeny__cg_load_async(cg *g, const teeny_op *op, LLVMValueRef extra,
                          const struct cg_stile *t);
/* For loop versioning: the i1 under which op's vector groups are aligned
 * and contiguous now and after moving by inc elements (or NULL: nothing
 * to check). */
LLVMValueRef teeny__cg_async_layout_ok(cg *g, const teeny_op *op, LLVMValueRef inc);
void teeny__cg_async_mask_split(cg *g, const teeny_op *op, const teeny_region *body);
LLVMValueRef teeny__cg_async_whole_ok(cg *g, const teeny_op *op, const teeny_region *body);
/* No store or atomic of the kernel can write where ptr points. */
bool teeny__cg_readonly(cg *g, int ptr);
void teeny__cg_emit_store(cg *g, const teeny_op *op);
/* The store through its pointer tile (what emit_store does unless the TMA
 * takes it). */
void teeny__cg_emit_pointer_store(cg *g, const teeny_op *op);
void teeny__cg_emit_atomic(cg *g, const teeny_op *op);

/* ============================================================================
 * reduce.c
 * ========================================================================== */

void teeny__cg_emit_reduce(cg *g, const teeny_op *op);
/*
 * index.c
 */
/* gather through shared memory; histogram: bins there, counted with shared
 * atomics */
void teeny__cg_emit_gather(cg *g, const teeny_op *op);
void teeny__cg_emit_histogram(cg *g, const teeny_op *op);
void teeny__cg_emit_scan(cg *g, const teeny_op *op);
/* Run a combine region on scalars: out = region(acc..., x...). */
void teeny__cg_combine(cg *g, const teeny_region *r, int n, LLVMValueRef *acc,
                       LLVMValueRef *x, LLVMValueRef *out);

/* ============================================================================
 * dot.c
 * ========================================================================== */

/* The layout dot's result gets (mma fragments or a blocked one). */
const cg_layout *teeny__cg_dot_layout(cg *g, const teeny_op *op);
void teeny__cg_emit_dot(cg *g, const teeny_op *op);
/* An operand tile staged in shared memory, in the layout Hopper's wgmma
 * reads through a swizzled descriptor (and that ldmatrix reads without
 * bank conflicts): columns are cut into blocks of blk = min(row bytes, 128)
 * bytes, each stored as R rows of blk bytes (block b at b * R * blk); a
 * row's 16-byte chunks are XORed with the row's phase (row / per_phase) %
 * max_phase, which is the 128-, 64- or 32-byte swizzle of the PTX ISA when
 * the tile starts at a multiple of 8 * blk bytes of shared memory. */
typedef struct cg_stile {
  int base;           /* byte offset in the shared exchange buffer */
  LLVMValueRef rbase; /* or, when set, in the dot/stage buffers (i32) */
  int R, C, es;       /* rows, columns, element bytes */
  int row_bytes;      /* C * es */
  int blk;            /* bytes of a column block's rows */
  int per_phase;      /* rows that share one 128-byte line */
  int max_phase;      /* distinct chunk permutations */
  bool tr;            /* holds the transpose of the operand: its element
                         (r, c) is stored at (c, r); R, C and the fields
                         above describe the stored tile (a K-major wgmma
                         B operand: [N, K] stored for a [K, N] operand) */
} cg_stile;

/* Shared-memory alignment of a tile that wgmma reads (the swizzle is a
 * function of the address bits, so 8 rows of 128 bytes must start on a
 * multiple of 1024). */
#define CG_WG_ALIGN 1024

/* take: allocate it in the exchange buffer aligned to `align` (else it
 * starts at `at`). */
cg_stile teeny__cg_stile(cg *g, int R, int C, teeny_dtype dt, bool take, int at, int align);
/* The same tile, holding the transpose of an [R, C] operand (tr). */
cg_stile teeny__cg_stile_tr(cg *g, int R, int C, teeny_dtype dt, bool take, int at, int align);
/* Shared address of element (row, col) of the operand. */
LLVMValueRef teeny__cg_stile_addr(cg *g, const cg_stile *t, LLVMValueRef row,
                                  LLVMValueRef col);
/* Whether dot uses mma.sync or wgmma (and so stages its operands in shared
 * memory), and whether wgmma (sm_90a: its tiles must be CG_WG_ALIGN
 * aligned and published with fence.proxy.async). */
bool teeny__cg_dot_uses_mma(cg *g, const teeny_op *op);
bool teeny__cg_dot_uses_wgmma(cg *g, const teeny_op *op);
/* Whether dot's B operand, held in layout L, is staged K-major (a
 * transposed tile, teeny__cg_stile_tr): when L runs along K and the dot
 * is a wgmma (read with imm-trans-b = 0) or an 8-bit mma.sync (i8, fp8:
 * read by ldmatrix without .trans), so the tile is written 16 bytes at a
 * time, or copied by cp.async, instead of element by element. */
bool teeny__cg_dot_b_kmajor(cg *g, const teeny_op *dot, const cg_layout *L);
/* The value a dot reads as operand i (0: A, 1: B): its argument, or, on
 * Hopper's fp8 wgmma, the fp8 tile that argument (an f16 cast) converts. */
int teeny__cg_dot_operand(cg *g, const teeny_op *dot, int i);
/* Whether wgmma dot reads its A operand from registers (its registers are
 * in the instruction's A fragment layout, e.g. the result of an earlier
 * dot with the same row split, cast to 16 bits). */
bool teeny__cg_wg_a_regs(cg *g, const teeny_op *dot);
/* Before a for loop (after its leading barrier): the operands of the
 * body's top-level wgmma dots that are made outside the loop and used only
 * there (attention's Q) are written once to tiles of the loop's dot
 * buffers, published, then one barrier; their astage points at the tile
 * (ids[0..n), n returned; the caller clears them after the loop).  So the
 * loop does not store, fence and barrier for them every iteration. */
int teeny__cg_wg_hoist(cg *g, const teeny_region *body, int *ids, int max);
/* fence.proxy.async.shared::cta: this thread's shared-memory writes become
 * visible to the tensor cores' reads (after the next barrier). */
void teeny__cg_fence_proxy_async(cg *g);
/* Wait for the deferred wgmma dot (g->wg_defer) and rebind its result to
 * the waited registers; nothing if none is pending. */
void teeny__cg_wgmma_finish(cg *g);
/* Instead, keep the deferred dot's group in flight (its result stays bound
 * to registers the tensor cores still write, which only the next
 * iteration's dot may take as its accumulator) and wait for the groups
 * before it: `wgmma.wait_group 1` (ctrl.c, a loop whose stages
 * allow it). */
void teeny__cg_wgmma_wait_prev(cg *g);
/* Wait for every wgmma group, passing v[0..n) (the in-flight result)
 * through the wait. */
void teeny__cg_wgmma_wait_all(cg *g, LLVMValueRef *v, long n);

/* ============================================================================
 * tma.c — a tensor_desc parameter's block loaded by the TMA (sm_90+)
 * ========================================================================== */

/* May load or store op (marked by irgen_desc.c: op->tma) go through the
 * TMA? */
bool teeny__cg_tma_ok(cg *g, const teeny_op *op);
/* Such a load or store: the TMA, or its pointer lowering where the
 * tensormap or the offset does not allow it (a uniform run-time test). */
void teeny__cg_emit_tma(cg *g, const teeny_op *op);

/* ============================================================================
 * emu.c — the emulator's side of code generation (g->emu)
 * ========================================================================== */

/* An llvm.nvvm.* intrinsic as host code or a call into the runtime. */
LLVMValueRef teeny__cg_emu_intrin(cg *g, const char *name, LLVMValueRef *args,
                                  int nargs);
/* Call runtime function name(emu, args...) returning ret. */
LLVMValueRef teeny__cg_emu_call(cg *g, const char *name, LLVMTypeRef ret,
                                LLVMValueRef *args, int nargs);

/* ============================================================================
 * order.c — program order between the threads of a block (docs/dsl.md §9)
 * ========================================================================== */

/* Before access a: a barrier if it conflicts with a pending access (or an
 * acquire is pending); then a is pending.  Read-only parameters are never
 * recorded (a->roots == 0).  Called once a's operands are made, right
 * before its instructions: making a tile operand in a's layout may convert
 * it through shared memory, whose barriers would otherwise end a before
 * a's instructions even run (order_replicated_store_scalar_store). */
void teeny__cg_order_access(cg *g, const cg_access *a);
/* Before a release atomic (thread 0's alone when scalar): a barrier if any
 * other thread's access is pending. */
void teeny__cg_order_release(cg *g, bool scalar);
/* After an acquire atomic: the next access by other threads waits. */
void teeny__cg_order_acquired(cg *g, bool scalar);
/* teeny__cg_barrier calls it: nothing is pending any more. */
void teeny__cg_order_barrier(cg *g);
/* The current op's memory instruction is emitted: later barriers order it. */
void teeny__cg_order_done(cg *g);
/* The pending set, for if/else joins (save, restore, union). */
cg_order teeny__cg_order_save(cg *g);
void teeny__cg_order_restore(cg *g, const cg_order *s);
void teeny__cg_order_join(cg *g, const cg_order *s);
/* Loops: push a frame as the body starts (g->rdepth already the body's);
 * at the latch, a barrier if what is pending conflicts with what the next
 * trip may do before its first barrier; pop when the loop is done. */
cg_order_frame *teeny__cg_order_frame_push(cg *g, const teeny_op *loop);
void teeny__cg_order_latch(cg *g, const cg_order_frame *f);
void teeny__cg_order_frame_pop(cg *g, cg_order_frame *f);

/* ============================================================================
 * debug.c
 * ========================================================================== */

/* IR_PRINT and IR_ASSERT: each element's line through vprintf (an
 * assert's only where its condition is false, then __assertfail). */
void teeny__cg_emit_debug(cg *g, const teeny_op *op);

/* ============================================================================
 * ctrl.c
 * ========================================================================== */

/* Lower the ops of r in order (terminators are left to the owner). */
void teeny__cg_emit_region(cg *g, const teeny_region *r);

/* ============================================================================
 * repair.c
 * ========================================================================== */

/* After the passes, before PTX emission on the GPU (not the emulator):
 * rewrite the IR forms LLVM 19's NVPTX back end lowers wrongly. */
void teeny__cg_repair_nvptx(LLVMModuleRef m);

#endif /* TEENY_DSL_NVPTX_CODEGEN_H */
