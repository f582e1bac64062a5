/*
 * dsl/ir/interp.c — the CPU interpreter: runs verified tile IR on host buffers,
 * one program at a time, so kernel semantics are testable without a GPU and
 * GPU results have something exact to be compared with.
 *
 * Every value id owns one slot array of numel(type) elements (a
 * teeny_scalar: .u/.i for ints, bools and pointers, .f for floats),
 * allocated once per run.  SSA values inside loops and combine regions are
 * simply overwritten each time their op runs; loop-carried values are
 * copied through the loop op's own result slots, which no region can name,
 * so yields have parallel-copy semantics without extra temporaries.
 *
 * Invariant: a slot always holds its dtype's canonical value (dsl/ir/scalar.h:
 * ints wrapped and extended to 64 bits, bools 0/1, floats rounded to their
 * format).  What one element op computes — the language's edge cases
 * included (docs/dsl.md §4) — is dsl/ir/scalar.c, shared with constant
 * folding; this file is the machine around it.
 *
 * Pointers are not host addresses: pointer parameter i lives in its own
 * window of the interpreter's address space, 2^BUF_WINDOW_LOG2 bytes wide,
 * with the buffer's first byte at the window's middle.  An access is
 * checked against the buffer of the window it falls in, so a kernel that
 * runs off the end of one buffer is caught even where the caller's
 * buffers happen to be adjacent in host memory (the language has no
 * pointer casts or comparisons, so no kernel can tell).  Budgets on steps
 * and slot bytes stop runaway kernels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dsl/ir/ir.h"
#include "dsl/ir/scalar.h"

typedef teeny_scalar elem; /* one element of a value slot */

/* The int64 whose two's complement bits are u (without implementation-
 * defined conversions). */
static int64_t u2i(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* ---- float encodings ------------------------------------------------------------ */

/* IEEE binary16 bits of x (rounded first); NaN becomes the quiet NaN. */
static uint16_t f16_bits(double x) {
  x = teeny__scalar_round(TEENY_DT_F16, x);
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (isnan(x))
    return sign | 0x7e00;
  if (isinf(a))
    return sign | 0x7c00;
  if (a == 0)
    return sign;
  int e = ilogb(a);
  if (e < -14)
    return sign | (uint16_t)ldexp(a, 24); /* subnormal: m * 2^-24 */
  return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(a, 10 - e) - 1024);
}

static double f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double r;
  if (e == 0)
    r = ldexp(m, -24);
  else if (e == 31)
    r = m ? NAN : INFINITY;
  else
    r = ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -r : r;
}

/* bfloat16 bits of x (rounded first): the top half of the f32 bits. */
static uint16_t bf16_bits(double x) {
  x = teeny__scalar_round(TEENY_DT_BF16, x);
  if (isnan(x))
    return signbit(x) ? 0xffc0 : 0x7fc0;
  float f = (float)x; /* exact: bf16 values are f32 values */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

static double bf16_value(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ---- element memory access ---------------------------------------------------- */

#define LOAD_AS(T, conv)                                                      \
  do {                                                                        \
    T x_;                                                                     \
    memcpy(&x_, p, sizeof x_);                                                \
    conv;                                                                     \
  } while (0)

/* The element of dtype dt stored at p (no alignment assumed). */
static elem mem_read(teeny_dtype dt, const unsigned char *p) {
  elem v;
  v.u = 0;
  switch (dt) {
  case TEENY_DT_BOOL: v.u = p[0] != 0; break;
  case TEENY_DT_I8: LOAD_AS(int8_t, v.i = x_); break;
  case TEENY_DT_I16: LOAD_AS(int16_t, v.i = x_); break;
  case TEENY_DT_I32: LOAD_AS(int32_t, v.i = x_); break;
  case TEENY_DT_I64: LOAD_AS(int64_t, v.i = x_); break;
  case TEENY_DT_U8: v.u = p[0]; break;
  case TEENY_DT_U16: LOAD_AS(uint16_t, v.u = x_); break;
  case TEENY_DT_U32: LOAD_AS(uint32_t, v.u = x_); break;
  case TEENY_DT_U64: LOAD_AS(uint64_t, v.u = x_); break;
  case TEENY_DT_F16: LOAD_AS(uint16_t, v.f = f16_value(x_)); break;
  case TEENY_DT_BF16: LOAD_AS(uint16_t, v.f = bf16_value(x_)); break;
  case TEENY_DT_F32: LOAD_AS(float, v.f = x_); break;
  case TEENY_DT_F64: LOAD_AS(double, v.f = x_); break;
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2: v.f = teeny__fp8_value(dt, p[0]); break;
  default: break;
  }
  return v;
}

#define STORE_AS(T, val)                                                      \
  do {                                                                        \
    T x_ = (val);                                                             \
    memcpy(p, &x_, sizeof x_);                                                \
  } while (0)

/* Store canonical element v of dtype dt at p. */
static void mem_write(teeny_dtype dt, unsigned char *p, elem v) {
  switch (dt) {
  case TEENY_DT_BOOL: p[0] = v.u != 0; break;
  case TEENY_DT_I8:
  case TEENY_DT_U8: p[0] = (unsigned char)v.u; break;
  case TEENY_DT_I16:
  case TEENY_DT_U16: STORE_AS(uint16_t, (uint16_t)v.u); break;
  case TEENY_DT_I32:
  case TEENY_DT_U32: STORE_AS(uint32_t, (uint32_t)v.u); break;
  case TEENY_DT_I64:
  case TEENY_DT_U64: STORE_AS(uint64_t, v.u); break;
  case TEENY_DT_F16: STORE_AS(uint16_t, f16_bits(v.f)); break;
  case TEENY_DT_BF16: STORE_AS(uint16_t, bf16_bits(v.f)); break;
  case TEENY_DT_F32: STORE_AS(float, (float)teeny__scalar_round(TEENY_DT_F32, v.f)); break;
  case TEENY_DT_F64: STORE_AS(double, v.f); break;
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2: p[0] = teeny__fp8_bits(dt, v.f); break;
  default: break;
  }
}

/* ---- the machine ------------------------------------------------------------------ */

/* Pointer parameter i's window is [(i + 1) << LOG2, (i + 2) << LOG2); its
 * buffer starts in the middle, so offsets of +-2^(LOG2 - 1) bytes stay in
 * the window and are reported against the right parameter. */
#define BUF_WINDOW_LOG2 40

typedef struct interp_buf {
  unsigned char *data; /* host memory of a pointer argument (NULL: none) */
  uint64_t base;       /* its address as a pointer value */
  size_t bytes;        /* its size */
  const char *name;    /* the parameter's name */
} interp_buf;

typedef struct interp {
  teeny_ctx *cx;            /* diagnostics */
  const teeny_ir_func *f;   /* the kernel */
  elem **slot;              /* [nvalues] slot arrays */
  interp_buf *bufs;         /* [nparams]: by parameter (scalars: empty) */
  int nbufs;
  unsigned grid[3];         /* programs along each axis */
  unsigned pid[3];          /* the program running now */
  uint64_t steps;           /* element operations so far */
  uint64_t max_steps;       /* budget */
  teeny_race *race;         /* the race detector (race.c), or NULL */
  FILE *print;              /* where device_print's lines go */
  teeny_arena arena;        /* its memory */
} interp;

static elem *val(interp *it, int id) { return it->slot[id]; }

static teeny_type type_of(interp *it, int id) { return it->f->values[id].type; }

static long numel(interp *it, int id) { return teeny__type_numel(type_of(it, id)); }

/* Report an error at loc and return err. */
static int fail(interp *it, teeny_loc loc, int err, const char *fmt, ...)
    TEENY_PRINTF(4, 5);
static int fail(interp *it, teeny_loc loc, int err, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  teeny__error_at(it->cx, loc, "%s", msg);
  return err;
}

/* Count n element operations of op (NULL: starting a program) against
 * the budget. */
static int charge(interp *it, const teeny_op *op, uint64_t n) {
  it->steps += n;
  if (it->steps <= it->max_steps)
    return TEENY_OK;
  return fail(it, op ? op->loc : (teeny_loc){0, 0}, TEENY_E_RUNTIME,
              "interpreter step limit exceeded (%llu element operations) "
              "at '%s'", (unsigned long long)it->max_steps,
              op ? teeny__opcode_name(op->code) : "program start");
}

/* Copy n values dst[i] := src[i] (whole slots; the types agree). */
static void copy_values(interp *it, const int *dst, const int *src, int n) {
  for (int i = 0; i < n; i++)
    if (dst[i] != src[i])
      memcpy(val(it, dst[i]), val(it, src[i]), sizeof(elem) * (size_t)numel(it, src[i]));
}

/* ---- memory ------------------------------------------------------------------------- */

static bool buf_holds(const interp_buf *b, uint64_t addr, size_t size) {
  return b->data && addr >= b->base && size <= b->bytes &&
         addr - b->base <= b->bytes - size;
}

/* The pointer parameter whose window holds addr, or NULL. */
static const interp_buf *window_of(const interp *it, uint64_t addr) {
  uint64_t w = addr >> BUF_WINDOW_LOG2;
  if (w < 1 || w > (uint64_t)it->nbufs)
    return NULL;
  const interp_buf *b = &it->bufs[w - 1];
  return b->name ? b : NULL;
}

static const char *access_name(const teeny_op *op) {
  static const char *const rmw[] = {"atomic_add", "atomic_max", "atomic_min", "atomic_xchg",
                                    "atomic_and", "atomic_or", "atomic_xor"};
  if (op->code == IR_ATOMIC_RMW && (unsigned)op->rmw < TEENY_ARRAY_LEN(rmw))
    return rmw[op->rmw];
  return teeny__opcode_name(op->code);
}

static int oob(interp *it, const teeny_op *op, uint64_t addr, size_t size,
               long lane) {
  const interp_buf *b = window_of(it, addr);
  const char *what = access_name(op);
  if (!b || !b->data)
    return fail(it, op->loc, TEENY_E_RUNTIME,
                "out-of-bounds %s: %zu bytes at address 0x%llx, which is in "
                "no buffer (program (%u, %u, %u), lane %ld)", what, size,
                (unsigned long long)addr, it->pid[0], it->pid[1], it->pid[2], lane);
  return fail(it, op->loc, TEENY_E_RUNTIME,
              "out-of-bounds %s: %zu bytes at offset %lld of '%s' (%zu bytes) "
              "(program (%u, %u, %u), lane %ld)", what, size,
              (long long)u2i(addr - b->base), b->name, b->bytes, it->pid[0],
              it->pid[1], it->pid[2], lane);
}

/* Host memory for `size` bytes at addr, or NULL after reporting an
 * out-of-bounds access by lane of op. */
static unsigned char *mem_at(interp *it, const teeny_op *op, uint64_t addr,
                             size_t size, long lane) {
  const interp_buf *b = window_of(it, addr);
  if (b && buf_holds(b, addr, size))
    return b->data + (addr - b->base);
  oob(it, op, addr, size, lane);
  return NULL;
}

/* ---- races (race.c) ------------------------------------------------------------ */

static const char *race_verb(int kind) {
  return kind == TEENY_RACE_READ ? "read" : kind == TEENY_RACE_WRITE ? "wrote"
                                                                      : "updated atomically";
}

/* Lane `lane` of op accesses addr (in bounds): a race with another
 * program is an error. */
static int race_check(interp *it, const teeny_op *op, uint64_t addr, size_t size,
                      teeny_race_kind kind, long lane) {
  if (!it->race)
    return TEENY_OK;
  const interp_buf *b = window_of(it, addr);
  uint64_t other;
  int with = teeny__race_access(it->race, (int)(b - it->bufs), (size_t)((addr - b->base) / size),
                                kind, &other);
  if (!with)
    return TEENY_OK;
  unsigned gx = it->grid[0], gy = it->grid[1];
  static const char *const now[] = {"", "reads", "writes", "updates atomically"};
  return fail(it, op->loc, TEENY_E_RUNTIME,
              "data race: program (%u, %u, %u) %s '%s'[%llu] (lane %ld), which program "
              "(%u, %u, %u) %s, and no atomic orders the two programs (docs/dsl.md §9)",
              it->pid[0], it->pid[1], it->pid[2], now[kind], b->name,
              (unsigned long long)((addr - b->base) / size), lane, (unsigned)(other % gx),
              (unsigned)(other / gx % gy), (unsigned)(other / gx / gy), race_verb(with));
}

/* (ptr [, mask [, other]]): off lanes read `other`, or 0. */
static int exec_load(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->args[0]).pointee;
  size_t size = (size_t)teeny_dtype_size(dt);
  const elem *p = val(it, op->args[0]);
  const elem *mask = op->nargs >= 2 ? val(it, op->args[1]) : NULL;
  const elem *other = op->nargs >= 3 ? val(it, op->args[2]) : NULL;
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->args[0]);
  for (long i = 0; i < n; i++) {
    if (mask && !mask[i].u) {
      r[i].u = 0;
      if (other)
        r[i] = other[i];
      continue;
    }
    unsigned char *m = mem_at(it, op, p[i].u, size, i);
    if (!m || race_check(it, op, p[i].u, size, TEENY_RACE_READ, i))
      return TEENY_E_RUNTIME;
    r[i] = mem_read(dt, m);
  }
  return TEENY_OK;
}

/* (ptr, value [, mask]).  Lanes of one store are unordered: two that write
 * one address with different values are a race (docs/dsl.md §9). */
static int exec_store(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->args[0]).pointee;
  size_t size = (size_t)teeny_dtype_size(dt);
  const elem *p = val(it, op->args[0]), *v = val(it, op->args[1]);
  const elem *mask = op->nargs >= 3 ? val(it, op->args[2]) : NULL;
  long n = numel(it, op->args[0]);
  if (it->race && n > 1)
    teeny__race_store_begin(it->race, n);
  for (long i = 0; i < n; i++) {
    if (mask && !mask[i].u)
      continue;
    unsigned char *m = mem_at(it, op, p[i].u, size, i);
    if (!m || race_check(it, op, p[i].u, size, TEENY_RACE_WRITE, i))
      return TEENY_E_RUNTIME;
    long j = it->race && n > 1 ? teeny__race_store_lane(it->race, p[i].u, v[i].u, i) : -1;
    if (j >= 0) {
      const interp_buf *b = window_of(it, p[i].u);
      return fail(it, op->loc, TEENY_E_RUNTIME,
                  "data race: lanes %ld and %ld of one store write '%s'[%llu] with different "
                  "values, and the lanes of one operation are unordered (docs/dsl.md §9; "
                  "program (%u, %u, %u))", j, i, b->name,
                  (unsigned long long)((p[i].u - b->base) / size), it->pid[0], it->pid[1],
                  it->pid[2]);
    }
    mem_write(dt, m, v[i]);
  }
  return TEENY_OK;
}

static void atomic_done(interp *it, const teeny_op *op) {
  if (it->race)
    teeny__race_atomic_done(it->race, op->sem == TEENY_SEM_ACQUIRE || op->sem == TEENY_SEM_ACQ_REL,
                            op->sem == TEENY_SEM_RELEASE || op->sem == TEENY_SEM_ACQ_REL);
}

static elem rmw_new(teeny_rmw_kind k, teeny_dtype dt, elem old, elem v) {
  switch (k) {
  case RMW_ADD: return teeny__scalar_binop(IR_ADD, dt, old, v);
  case RMW_AND: return teeny__scalar_binop(IR_AND, dt, old, v);
  case RMW_OR: return teeny__scalar_binop(IR_OR, dt, old, v);
  case RMW_XOR: return teeny__scalar_binop(IR_XOR, dt, old, v);
  case RMW_MAX: return teeny__scalar_binop(IR_MAX, dt, old, v);
  case RMW_MIN: return teeny__scalar_binop(IR_MIN, dt, old, v);
  default: return v;
  }
}

/* (ptr, value [, mask]) -> old.  Programs run one at a time and lanes in
 * index order, so the atomics are plain read-modify-writes; off lanes give
 * 0 and touch nothing. */
static int exec_atomic_rmw(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->args[0]).pointee;
  size_t size = (size_t)teeny_dtype_size(dt);
  const elem *p = val(it, op->args[0]), *v = val(it, op->args[1]);
  const elem *mask = op->nargs >= 3 ? val(it, op->args[2]) : NULL;
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->args[0]);
  for (long i = 0; i < n; i++) {
    r[i].u = 0;
    if (mask && !mask[i].u)
      continue;
    unsigned char *m = mem_at(it, op, p[i].u, size, i);
    if (!m || race_check(it, op, p[i].u, size, TEENY_RACE_ATOMIC, i))
      return TEENY_E_RUNTIME;
    r[i] = mem_read(dt, m);
    mem_write(dt, m, rmw_new(op->rmw, dt, r[i], v[i]));
  }
  atomic_done(it, op);
  return TEENY_OK;
}

/* (ptr, cmp, value [, mask]) -> old.  The comparison is on the stored bits
 * (as the GPU's atom.cas does), so for floats -0 != +0 and a NaN matches
 * itself; off lanes give 0 and touch nothing. */
static int exec_atomic_cas(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->args[0]).pointee;
  size_t size = (size_t)teeny_dtype_size(dt);
  const elem *p = val(it, op->args[0]), *c = val(it, op->args[1]);
  const elem *v = val(it, op->args[2]);
  const elem *mask = op->nargs >= 4 ? val(it, op->args[3]) : NULL;
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->args[0]);
  for (long i = 0; i < n; i++) {
    r[i].u = 0;
    if (mask && !mask[i].u)
      continue;
    unsigned char *m = mem_at(it, op, p[i].u, size, i);
    if (!m || race_check(it, op, p[i].u, size, TEENY_RACE_ATOMIC, i))
      return TEENY_E_RUNTIME;
    unsigned char want[8];
    mem_write(dt, want, c[i]);
    r[i] = mem_read(dt, m);
    if (memcmp(want, m, size) == 0)
      mem_write(dt, m, v[i]);
  }
  atomic_done(it, op);
  return TEENY_OK;
}

/* ---- values and shapes ---------------------------------------------------------------- */

static void fill(elem *r, long n, elem v) {
  for (long i = 0; i < n; i++)
    r[i] = v;
}

static int exec_const(interp *it, const teeny_op *op) {
  teeny_type t = type_of(it, op->res[0]);
  fill(val(it, op->res[0]), numel(it, op->res[0]), teeny__scalar_normalize(t.dt, op->cval));
  return TEENY_OK;
}

static int exec_grid_query(interp *it, const teeny_op *op) {
  unsigned v = op->code == IR_PROGRAM_ID ? it->pid[op->axis] : it->grid[op->axis];
  val(it, op->res[0])[0] = teeny__scalar_int(TEENY_DT_I32, v);
  return TEENY_OK;
}

static int exec_make_range(interp *it, const teeny_op *op) {
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i] = teeny__scalar_int(TEENY_DT_I32, (uint64_t)((int64_t)op->start + i));
  return TEENY_OK;
}

/* Element e of a tile of type t as one index per dim (row-major). */
static void unflatten(teeny_type t, long e, long *ix) {
  for (int d = t.rank - 1; d >= 0; d--) {
    ix[d] = e % t.shape[d];
    e /= t.shape[d];
  }
}

static long flatten_ix(teeny_type t, const long *ix) {
  long e = 0;
  for (int d = 0; d < t.rank; d++)
    e = e * t.shape[d] + ix[d];
  return e;
}

/* Stretch a's 1-dims to r's shape (same rank). */
static void broadcast(const elem *a, teeny_type at, elem *r, teeny_type rt) {
  long n = teeny__type_numel(rt), ix[TEENY_MAX_RANK];
  for (long e = 0; e < n; e++) {
    unflatten(rt, e, ix);
    for (int d = 0; d < rt.rank; d++)
      if (at.shape[d] == 1)
        ix[d] = 0;
    r[e] = a[flatten_ix(at, ix)];
  }
}

/* r[i0, i1, ..] = a[.., i_j at dim perm[j], ..] */
static void transpose(const teeny_op *op, const elem *a, teeny_type at, elem *r, teeny_type rt) {
  int perm[TEENY_MAX_RANK];
  teeny__ir_trans_perm(op, at.rank, perm);
  long n = teeny__type_numel(rt), ix[TEENY_MAX_RANK], src[TEENY_MAX_RANK];
  for (long e = 0; e < n; e++) {
    unflatten(rt, e, ix);
    for (int d = 0; d < rt.rank; d++)
      src[perm[d]] = ix[d];
    r[e] = a[flatten_ix(at, src)];
  }
}

static int exec_shape(interp *it, const teeny_op *op) {
  const elem *a = val(it, op->args[0]);
  elem *r = val(it, op->res[0]);
  teeny_type at = type_of(it, op->args[0]), rt = type_of(it, op->res[0]);
  long n = teeny__type_numel(rt);
  switch (op->code) {
  case IR_SPLAT:
    fill(r, n, a[0]);
    break;
  case IR_BROADCAST:
    broadcast(a, at, r, rt);
    break;
  case IR_TRANS:
    transpose(op, a, at, r, rt);
    break;
  default: /* expand_dims, reshape: same elements, row-major */
    memcpy(r, a, sizeof(elem) * (size_t)n);
    break;
  }
  return TEENY_OK;
}

/* ---- element-wise ops ---------------------------------------------------------------------- */

static int exec_unary(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->res[0]).dt;
  const elem *a = val(it, op->args[0]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i] = teeny__scalar_unop(op->code, dt, a[i]);
  return TEENY_OK;
}

static int exec_binary(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->res[0]).dt;
  const elem *a = val(it, op->args[0]), *b = val(it, op->args[1]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i] = teeny__scalar_binop(op->code, dt, a[i], b[i]);
  return TEENY_OK;
}

static int exec_bitcast(interp *it, const teeny_op *op) {
  teeny_dtype from = type_of(it, op->args[0]).dt, to = type_of(it, op->res[0]).dt;
  const elem *a = val(it, op->args[0]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i] = teeny__scalar_bitcast(from, to, a[i]);
  return TEENY_OK;
}

static int exec_fma(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->res[0]).dt;
  const elem *a = val(it, op->args[0]), *b = val(it, op->args[1]);
  const elem *c = val(it, op->args[2]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i].f = teeny__scalar_fma(dt, a[i].f, b[i].f, c[i].f);
  return TEENY_OK;
}

static int exec_cmp(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->args[0]).dt;
  const elem *a = val(it, op->args[0]), *b = val(it, op->args[1]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i].u = teeny__scalar_compare(op->pred, dt, a[i], b[i]);
  return TEENY_OK;
}

static int exec_select(interp *it, const teeny_op *op) {
  const elem *c = val(it, op->args[0]), *a = val(it, op->args[1]);
  const elem *b = val(it, op->args[2]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i] = c[i].u ? a[i] : b[i];
  return TEENY_OK;
}

static int exec_cast(interp *it, const teeny_op *op) {
  teeny_dtype from = type_of(it, op->args[0]).dt, to = type_of(it, op->res[0]).dt;
  const elem *a = val(it, op->args[0]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i] = teeny__scalar_cast(from, to, a[i]);
  return TEENY_OK;
}

/* (ptr, offset): ptr + offset * sizeof(pointee), wrapping like the GPU. */
static int exec_addptr(interp *it, const teeny_op *op) {
  uint64_t size = (uint64_t)teeny_dtype_size(type_of(it, op->args[0]).pointee);
  const elem *p = val(it, op->args[0]), *o = val(it, op->args[1]);
  elem *r = val(it, op->res[0]);
  long n = numel(it, op->res[0]);
  for (long i = 0; i < n; i++)
    r[i].u = p[i].u + o[i].u * size;
  return TEENY_OK;
}

/* ---- regions, reductions, dot ------------------------------------------------------------- */

static int exec_op(interp *it, const teeny_op *op);

/* Run r's ops up to its terminator (yield, condition or return), which is
 * stored in *term for the owner to interpret; NULL if r has none. */
static int exec_region(interp *it, const teeny_region *r, const teeny_op **term) {
  *term = NULL;
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    if (op->code == IR_YIELD || op->code == IR_CONDITION || op->code == IR_RETURN) {
      *term = op;
      return TEENY_OK;
    }
    int rc = exec_op(it, op);
    if (rc)
      return rc;
  }
  return TEENY_OK;
}

/* Run r and insist on a terminator with at least n + skip operands. */
static int exec_region_term(interp *it, const teeny_op *owner,
                            const teeny_region *r, int n, const teeny_op **term) {
  int rc = exec_region(it, r, term);
  if (rc)
    return rc;
  if (!*term || (*term)->nargs < n)
    return fail(it, owner->loc, TEENY_E_INTERNAL,
                "internal error: '%s' region ends without its terminator",
                teeny__opcode_name(owner->code));
  return TEENY_OK;
}

/* One application of a reduce/scan combine region: acc := fn(acc, x). */
static int combine(interp *it, const teeny_op *op, elem *acc, const elem *x) {
  const teeny_region *r = op->regions[0];
  int n = op->nargs;
  for (int j = 0; j < n; j++) {
    val(it, r->args[j])[0] = acc[j];
    val(it, r->args[n + j])[0] = x[j];
  }
  const teeny_op *y;
  int rc = exec_region_term(it, op, r, n, &y);
  if (rc)
    return rc;
  for (int j = 0; j < n; j++)
    acc[j] = val(it, y->args[j])[0];
  return TEENY_OK;
}

/* reduce: left fold along axis in index order.  scan: inclusive prefix in
 * index order, or from the end when op->reverse. */
static int exec_combine(interp *it, const teeny_op *op) {
  int n = op->nargs;
  teeny_type in = type_of(it, op->args[0]);
  if (n > TEENY_MAX_PARAMS)
    return fail(it, op->loc, TEENY_E_INTERNAL, "internal error: too many operands");
  long outer = 1, len = in.shape[op->axis], inner = 1;
  for (int d = 0; d < op->axis; d++)
    outer *= in.shape[d];
  for (int d = op->axis + 1; d < in.rank; d++)
    inner *= in.shape[d];
  bool scan = op->code == IR_SCAN, rev = scan && op->reverse;
  elem acc[TEENY_MAX_PARAMS], x[TEENY_MAX_PARAMS];
  for (long o = 0; o < outer; o++)
    for (long i = 0; i < inner; i++)
      for (long k = 0; k < len; k++) {
        long at = (o * len + (rev ? len - 1 - k : k)) * inner + i;
        for (int j = 0; j < n; j++)
          x[j] = val(it, op->args[j])[at];
        if (k == 0) {
          memcpy(acc, x, sizeof(elem) * (size_t)n);
        } else {
          int rc = combine(it, op, acc, x);
          if (rc)
            return rc;
        }
        for (int j = 0; j < n; j++)
          if (scan)
            val(it, op->res[j])[at] = acc[j];
          else if (k == len - 1)
            val(it, op->res[j])[o * inner + i] = acc[j];
      }
  return TEENY_OK;
}

/* An element of dtype dt as a double (for dots of mixed classes). */
static double as_double(teeny_dtype dt, elem v) {
  if (teeny__dt_is_float(dt))
    return v.f;
  return teeny__dt_is_signed(dt) ? (double)v.i : (double)v.u;
}

/* f32 rounded to TF32 (10 mantissa bits) to nearest, ties away from zero,
 * as cvt.rna.tf32.f32 does; inf and NaN stay. */
static float tf32_rna(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u)
    u = (u + 0x1000u) & 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

/* The part of an f32 operand one pass of the dot multiplies: all of it
 * (0), its TF32 rounding (1), or what that leaves, rounded again (2). */
static float tf32_part(float x, int part) {
  float hi = tf32_rna(x);
  return part == 1 ? hi : tf32_rna(x - hi); /* x - hi is exact */
}

/* s + sum_k a[k] * b[k*N] in f32, the product rounded and then the sum
 * (explicit casts, so no compiler contracts them into an fma); operands
 * first reduced to the TF32 parts pa, pb (0: as they are). */
static float dot_pass(teeny_dtype ad, const elem *a, const elem *b, float s, long K, long N,
                      int pa, int pb) {
  const teeny_dtype f32 = TEENY_DT_F32;
  for (long k = 0; k < K; k++) {
    float x = (float)as_double(ad, a[k]), y = (float)as_double(ad, b[k * N]);
    if (pa)
      x = tf32_part(x, pa);
    if (pb)
      y = tf32_part(y, pb);
    float p = (float)teeny__scalar_round(f32, (double)x * (double)y);
    s = (float)teeny__scalar_round(f32, (double)s + (double)p);
  }
  return s;
}

/* One output element of a float dot: acc + sum_k a[m,k] * b[k,n], as the
 * GPU computes it (docs/dsl.md §5): f16/bf16 operands multiply exactly and
 * sum in f32; f32 operands by the dot's input precision: tf32 (operands
 * rounded to TF32), tf32x3 (a_lo.b_hi, then a_hi.b_lo, then a_hi.b_hi, each
 * a pass over k), ieee (fmaf per k, in k order, as the FMA path does); in
 * f64 when an operand or acc is f64. */
static double dot_float(teeny_dtype ad, teeny_dtype cd, teeny_prec prec, const elem *a,
                        const elem *b, double c, long K, long N) {
  if (ad == TEENY_DT_F64 || cd == TEENY_DT_F64) {
    for (long k = 0; k < K; k++)
      c += as_double(ad, a[k]) * as_double(ad, b[k * N]);
    return c;
  }
  float s = (float)teeny__scalar_round(TEENY_DT_F32, c);
  if (ad != TEENY_DT_F32)
    return dot_pass(ad, a, b, s, K, N, 0, 0);
  switch (prec) {
  case TEENY_PREC_IEEE:
    for (long k = 0; k < K; k++)
      s = fmaf((float)as_double(ad, a[k]), (float)as_double(ad, b[k * N]), s);
    return s;
  case TEENY_PREC_TF32X3:
    s = dot_pass(ad, a, b, s, K, N, 2, 1);
    s = dot_pass(ad, a, b, s, K, N, 1, 2);
    return dot_pass(ad, a, b, s, K, N, 1, 1);
  default:
    return dot_pass(ad, a, b, s, K, N, 1, 1);
  }
}

/* gather: out[.., i, ..] = src[.., index[.., i, ..], ..] along the axis; an
 * index out of range gives 0. */
static int exec_gather(interp *it, const teeny_op *op) {
  teeny_type st = type_of(it, op->args[0]), rt = type_of(it, op->res[0]);
  long n = teeny__type_numel(rt);
  int rc = charge(it, op, (uint64_t)n);
  if (rc)
    return rc;
  const elem *src = val(it, op->args[0]), *idx = val(it, op->args[1]);
  elem *r = val(it, op->res[0]);
  long len = st.shape[op->axis], ix[TEENY_MAX_RANK];
  for (long e = 0; e < n; e++) {
    long k = idx[e].i;
    if (k < 0 || k >= len) {
      r[e] = teeny__scalar_cast(TEENY_DT_I32, rt.dt, (elem){.i = 0});
      continue;
    }
    unflatten(rt, e, ix);
    ix[op->axis] = k;
    r[e] = src[flatten_ix(st, ix)];
  }
  return TEENY_OK;
}

static int exec_histogram(interp *it, const teeny_op *op) {
  long n = teeny__type_numel(type_of(it, op->args[0]));
  long bins = teeny__type_numel(type_of(it, op->res[0]));
  int rc = charge(it, op, (uint64_t)(n + bins));
  if (rc)
    return rc;
  const elem *x = val(it, op->args[0]);
  elem *r = val(it, op->res[0]);
  for (long b = 0; b < bins; b++)
    r[b] = teeny__scalar_int(TEENY_DT_I32, 0);
  for (long i = 0; i < n; i++)
    if (x[i].i >= 0 && x[i].i < bins)
      r[x[i].i] = teeny__scalar_int(TEENY_DT_I32, r[x[i].i].u + 1);
  return TEENY_OK;
}

/* (a[M,K], b[K,N], acc[M,N]) -> acc + a.b, one
 * matrix (r may not alias the operands).  Integer operands (i8) multiply
 * and accumulate with wrapping in the int acc dtype (i32). */
static void dot_matrix(const teeny_op *op, teeny_type at, teeny_type ct, const elem *a,
                       const elem *b, const elem *c, elem *r, long M, long K, long N) {
  bool ints = !teeny__dt_is_float(at.dt) && !teeny__dt_is_float(ct.dt);
  for (long m = 0; m < M; m++)
    for (long j = 0; j < N; j++) {
      elem cv = c[m * N + j];
      if (ints) {
        uint64_t s = cv.u;
        for (long k = 0; k < K; k++)
          s += a[m * K + k].u * b[k * N + j].u;
        r[m * N + j] = teeny__scalar_int(ct.dt, s);
      } else {
        double s = dot_float(at.dt, ct.dt, op->prec, a + m * K, b + j,
                             as_double(ct.dt, cv), K, N);
        r[m * N + j] = teeny__scalar_cast(TEENY_DT_F64, ct.dt, (elem){.f = s});
      }
    }
}

/* A batched dot ([B,M,K] x [B,K,N]) is B independent products. */
static int exec_dot(interp *it, const teeny_op *op) {
  teeny_type at = type_of(it, op->args[0]), ct = type_of(it, op->res[0]);
  int lo = at.rank - 2;
  long B = lo ? at.shape[0] : 1, M = at.shape[lo], K = at.shape[lo + 1], N = ct.shape[lo + 1];
  int rc = charge(it, op, (uint64_t)B * (uint64_t)M * (uint64_t)N * (uint64_t)K);
  if (rc)
    return rc;
  const elem *a = val(it, op->args[0]), *b = val(it, op->args[1]), *c = val(it, op->args[2]);
  elem *r = val(it, op->res[0]);
  for (long i = 0; i < B; i++)
    dot_matrix(op, at, ct, a + i * M * K, b + i * K * N, c + i * M * N, r + i * M * N, M, K, N);
  return TEENY_OK;
}

/* ---- device_print, device_assert -------------------------------------------------------------- */

/* "pid (x, y, z) " and, for element e of a tile of type t, "idx (i, j) ". */
static void put_where(interp *it, teeny_buf *b, teeny_type t, long e) {
  teeny__buf_printf(b, "pid (%u, %u, %u) ", it->pid[0], it->pid[1], it->pid[2]);
  if (t.rank == 0)
    return;
  long ix[TEENY_MAX_RANK];
  unflatten(t, e, ix);
  teeny__buf_puts(b, "idx (");
  for (int d = 0; d < t.rank; d++)
    teeny__buf_printf(b, "%s%ld", d ? ", " : "", ix[d]);
  teeny__buf_puts(b, ") ");
}

/* Element e of op's values from args[first..]: the format's text in b. */
static void format_elem(interp *it, teeny_buf *b, const teeny_op *op, int first, long e) {
  teeny_dtype dts[TEENY_FMT_MAX_ARGS];
  elem vals[TEENY_FMT_MAX_ARGS];
  int n = op->nargs - first;
  for (int i = 0; i < n && i < TEENY_FMT_MAX_ARGS; i++) {
    teeny_type t = type_of(it, op->args[first + i]);
    dts[i] = t.dt;
    vals[i] = val(it, op->args[first + i])[t.rank ? e : 0];
  }
  teeny__fmt_values(b, op->str, dts, vals, n);
}

/* The type of op's tile operands (they share one), or a scalar's. */
static teeny_type debug_shape(interp *it, const teeny_op *op) {
  for (int i = 0; i < op->nargs; i++)
    if (type_of(it, op->args[i]).rank)
      return type_of(it, op->args[i]);
  return teeny__type_scalar(TEENY_DT_I32);
}

/* One line per element (one per program if all values are scalars), in
 * element order, each ending in exactly one newline. */
static int exec_print(interp *it, const teeny_op *op) {
  teeny_type t = debug_shape(it, op);
  long n = teeny__type_numel(t);
  size_t flen = strlen(op->str);
  bool nl = flen && op->str[flen - 1] == '\n';
  teeny_buf b;
  teeny__buf_init(&b);
  for (long e = 0; e < n; e++) {
    b.len = 0;
    put_where(it, &b, t, e);
    format_elem(it, &b, op, 0, e);
    if (!nl)
      teeny__buf_putc(&b, '\n');
    fwrite(b.p, 1, b.len, it->print);
  }
  fflush(it->print);
  teeny__buf_free(&b);
  return TEENY_OK;
}

/* The first element where the condition is false stops the run, with its
 * message formatted from that element's values. */
static int exec_assert(interp *it, const teeny_op *op) {
  teeny_type t = debug_shape(it, op);
  teeny_type ct = type_of(it, op->args[0]);
  const elem *c = val(it, op->args[0]);
  long n = teeny__type_numel(t);
  for (long e = 0; e < n; e++) {
    if (c[ct.rank ? e : 0].u)
      continue;
    teeny_buf b;
    teeny__buf_init(&b);
    format_elem(it, &b, op, 1, e);
    while (b.len && b.p[b.len - 1] == '\n')
      b.p[--b.len] = '\0';
    teeny__buf_puts(&b, " (");
    put_where(it, &b, t, e);
    if (b.p && b.len) /* the last space closes the parenthesis */
      b.p[b.len - 1] = ')';
    int rc = fail(it, op->loc, TEENY_E_RUNTIME, "device_assert failed: %s", b.p ? b.p : "");
    teeny__buf_free(&b);
    return rc;
  }
  return TEENY_OK;
}

/* ---- control flow --------------------------------------------------------------------------- */

static int exec_if(interp *it, const teeny_op *op) {
  const teeny_region *r = op->regions[val(it, op->args[0])[0].u ? 0 : 1];
  const teeny_op *y;
  int rc = exec_region_term(it, op, r, op->nres, &y);
  if (rc)
    return rc;
  copy_values(it, op->res, y->args, op->nres);
  return TEENY_OK;
}

/* (lb, ub, step, init...): iv runs from lb while iv < ub by step; the
 * carried values live in the op's results between iterations.  An iv
 * whose next step would wrap ends the loop. */
static int exec_for(interp *it, const teeny_op *op) {
  teeny_dtype dt = type_of(it, op->args[0]).dt;
  elem iv = val(it, op->args[0])[0], ub = val(it, op->args[1])[0];
  elem step = val(it, op->args[2])[0];
  int n = op->nargs - 3;
  const teeny_region *body = op->regions[0];
  bool positive = teeny__dt_is_signed(dt) ? step.i > 0 : step.u > 0;
  if (teeny__scalar_compare(CMP_LT, dt, iv, ub) && !positive)
    return fail(it, op->loc, TEENY_E_RUNTIME,
                "for-loop step must be positive (got %lld)",
                teeny__dt_is_signed(dt) ? (long long)step.i : 0LL);
  copy_values(it, op->res, op->args + 3, n);
  while (teeny__scalar_compare(CMP_LT, dt, iv, ub)) {
    const teeny_op *y;
    int rc = charge(it, op, 1);
    if (rc)
      return rc;
    val(it, body->args[0])[0] = iv;
    copy_values(it, body->args + 1, op->res, n);
    if ((rc = exec_region_term(it, op, body, n, &y)))
      return rc;
    copy_values(it, op->res, y->args, n);
    elem next = teeny__scalar_int(dt, iv.u + step.u);
    if (!teeny__scalar_compare(CMP_LT, dt, iv, next))
      break;
    iv = next;
  }
  return TEENY_OK;
}

/* (init...): before(carried) -> condition(c, fwd...); c: after(fwd) yields
 * the next carried values; !c: the results are fwd. */
static int exec_while(interp *it, const teeny_op *op) {
  const teeny_region *before = op->regions[0], *after = op->regions[1];
  copy_values(it, before->args, op->args, op->nargs);
  for (;;) {
    const teeny_op *c, *y;
    int rc = charge(it, op, 1);
    if (rc)
      return rc;
    if ((rc = exec_region_term(it, op, before, 1 + op->nres, &c)))
      return rc;
    if (!val(it, c->args[0])[0].u) {
      copy_values(it, op->res, c->args + 1, op->nres);
      return TEENY_OK;
    }
    copy_values(it, after->args, c->args + 1, op->nres);
    if ((rc = exec_region_term(it, op, after, op->nargs, &y)))
      return rc;
    copy_values(it, before->args, y->args, op->nargs);
  }
}

/* ---- dispatch ------------------------------------------------------------------------------- */

/* Element operations an op is charged: its result's size, else its first
 * operand's. */
static uint64_t op_cost(interp *it, const teeny_op *op) {
  if (op->nres)
    return (uint64_t)numel(it, op->res[0]);
  return op->nargs ? (uint64_t)numel(it, op->args[0]) : 1;
}

static int exec_op(interp *it, const teeny_op *op) {
  int rc = charge(it, op, op_cost(it, op));
  if (rc)
    return rc;
  switch (op->code) {
  case IR_CONST: return exec_const(it, op);
  case IR_PROGRAM_ID:
  case IR_NUM_PROGRAMS: return exec_grid_query(it, op);
  case IR_MAKE_RANGE: return exec_make_range(it, op);
  case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE:
  case IR_TRANS: return exec_shape(it, op);
  case IR_NEG: case IR_NOT: case IR_ABS: case IR_EXP: case IR_EXP2:
  case IR_LOG: case IR_LOG2: case IR_SQRT: case IR_RSQRT: case IR_SIN:
  case IR_COS: case IR_TANH: case IR_ERF: case IR_FLOOR: case IR_CEIL:
  case IR_ERFC: case IR_LOG1P: case IR_EXPM1: case IR_ASIN: case IR_ACOS: case IR_ATAN:
    return exec_unary(it, op);
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM:
  case IR_AND: case IR_OR: case IR_XOR: case IR_SHL: case IR_SHR:
  case IR_MIN: case IR_MAX: case IR_UMULHI: case IR_POW: case IR_ATAN2:
    return exec_binary(it, op);
  case IR_BITCAST: return exec_bitcast(it, op);
  case IR_INTTOPTR:
  case IR_PTRTOINT:
  case IR_PTRCAST: /* pointers are their addresses */
    copy_values(it, op->res, op->args, 1);
    return TEENY_OK;
  case IR_FMA: return exec_fma(it, op);
  case IR_CMP: return exec_cmp(it, op);
  case IR_SELECT: return exec_select(it, op);
  case IR_CAST: return exec_cast(it, op);
  case IR_ADDPTR: return exec_addptr(it, op);
  case IR_LOAD: return exec_load(it, op);
  case IR_STORE: return exec_store(it, op);
  case IR_ATOMIC_RMW: return exec_atomic_rmw(it, op);
  case IR_ATOMIC_CAS: return exec_atomic_cas(it, op);
  case IR_BARRIER: return TEENY_OK; /* lanes run in op order already */
  case IR_PRINT: return exec_print(it, op);
  case IR_ASSERT: return exec_assert(it, op);
  case IR_REDUCE:
  case IR_SCAN: return exec_combine(it, op);
  case IR_DOT: return exec_dot(it, op);
  case IR_HISTOGRAM: return exec_histogram(it, op);
  case IR_GATHER: return exec_gather(it, op);
  case IR_IF: return exec_if(it, op);
  case IR_FOR: return exec_for(it, op);
  case IR_WHILE: return exec_while(it, op);
  default:
    return fail(it, op->loc, TEENY_E_INTERNAL,
                "internal error: the interpreter cannot run '%s' here",
                teeny__opcode_name(op->code));
  }
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int check_call(interp *it, const unsigned grid[3],
                      const teeny_interp_arg *args, int nargs) {
  const teeny_ir_func *f = it->f;
  teeny_loc none = {0, 0};
  if (nargs != f->nparams || f->body->nargs != f->nparams)
    return fail(it, none, TEENY_E_INVAL, "kernel '%s' takes %d arguments, got %d",
                f->name, f->nparams, nargs);
  if (nargs > 0 && !args)
    return fail(it, none, TEENY_E_INVAL, "no arguments given");
  if (!grid)
    return fail(it, none, TEENY_E_INVAL, "no grid given");
  for (int d = 0; d < 3; d++)
    if (grid[d] == 0 || grid[d] > (unsigned)INT32_MAX)
      return fail(it, none, TEENY_E_INVAL,
                  "grid dimension %d is %u; it must be 1..2147483647", d, grid[d]);
  for (int i = 0; i < f->nparams; i++) {
    teeny_type t = type_of(it, f->body->args[i]);
    if (t.rank != 0 || t.dt <= TEENY_DT_VOID || t.dt >= TEENY_DT__COUNT)
      return fail(it, none, TEENY_E_INVAL,
                  "parameter '%s' must be a scalar or a pointer", f->param_names[i]);
  }
  return TEENY_OK;
}

/* One slot array per value, carved from a single block (*block). */
static int alloc_slots(interp *it, size_t max_bytes, elem **block) {
  const teeny_ir_func *f = it->f;
  size_t total = 0;
  for (int v = 0; v < f->nvalues; v++)
    total += (size_t)teeny__type_numel(f->values[v].type) * sizeof(elem);
  if (total > max_bytes)
    return fail(it, (teeny_loc){0, 0}, TEENY_E_LIMIT,
                "kernel '%s' needs %zu bytes of interpreter value storage; "
                "the limit is %zu", f->name, total, max_bytes);
  it->slot = teeny__calloc((size_t)f->nvalues + 1, sizeof *it->slot);
  *block = teeny__calloc(total ? total / sizeof(elem) : 1, sizeof(elem));
  if (!it->slot || !*block)
    return TEENY_E_NOMEM;
  elem *p = *block;
  for (int v = 0; v < f->nvalues; v++) {
    it->slot[v] = p;
    p += teeny__type_numel(f->values[v].type);
  }
  return TEENY_OK;
}

/* Parameter values, and the buffer table of the pointer parameters. */
static int bind_args(interp *it, const teeny_interp_arg *args) {
  const teeny_ir_func *f = it->f;
  it->bufs = teeny__calloc((size_t)f->nparams + 1, sizeof *it->bufs);
  if (!it->bufs)
    return TEENY_E_NOMEM;
  it->nbufs = f->nparams;
  for (int i = 0; i < f->nparams; i++) {
    teeny_type t = type_of(it, f->body->args[i]);
    elem *slot = val(it, f->body->args[i]);
    if (t.dt != TEENY_DT_PTR) {
      elem v;
      v.u = args[i].v.u;
      if (teeny__dt_is_float(t.dt))
        v.f = args[i].v.f;
      slot[0] = teeny__scalar_normalize(t.dt, v);
      continue;
    }
    uint64_t base = ((uint64_t)i + 1) << BUF_WINDOW_LOG2 |
                    UINT64_C(1) << (BUF_WINDOW_LOG2 - 1);
    slot[0].u = base;
    if (args[i].bytes >= UINT64_C(1) << (BUF_WINDOW_LOG2 - 1))
      return fail(it, (teeny_loc){0, 0}, TEENY_E_INVAL,
                  "buffer of parameter '%s' is too large for the interpreter "
                  "(%zu bytes; at most 2^%d)", f->param_names[i], args[i].bytes,
                  BUF_WINDOW_LOG2 - 1);
    /* no data: every access through it is out of bounds */
    it->bufs[i] = (interp_buf){args[i].data, base, args[i].data ? args[i].bytes : 0,
                               f->param_names[i]};
  }
  return TEENY_OK;
}

/* The race detector over the pointer arguments' elements. */
static teeny_race *race_new(interp *it) {
  size_t *elems = teeny__arena_alloc(&it->arena, sizeof *elems * (size_t)(it->nbufs + 1));
  if (!elems)
    return NULL;
  for (int i = 0; i < it->nbufs; i++) {
    teeny_type t = type_of(it, it->f->body->args[i]);
    if (t.dt == TEENY_DT_PTR && it->bufs[i].data)
      elems[i] = it->bufs[i].bytes / (size_t)teeny_dtype_size(t.pointee);
  }
  uint64_t n = (uint64_t)it->grid[0] * it->grid[1] * it->grid[2];
  return teeny__race_new(&it->arena, it->nbufs, elems, n);
}

static int run_programs(interp *it) {
  for (unsigned z = 0; z < it->grid[2]; z++)
    for (unsigned y = 0; y < it->grid[1]; y++)
      for (unsigned x = 0; x < it->grid[0]; x++) {
        const teeny_op *term;
        it->pid[0] = x;
        it->pid[1] = y;
        it->pid[2] = z;
        if (it->race)
          teeny__race_program(it->race, x + (uint64_t)it->grid[0] * (y + (uint64_t)it->grid[1] * z));
        int rc = charge(it, NULL, 1); /* even an empty kernel costs a step */
        if (!rc)
          rc = exec_region(it, it->f->body, &term);
        if (rc)
          return rc;
      }
  return TEENY_OK;
}

int teeny__interp_run_opts(teeny_ctx *cx, const teeny_ir_func *f,
                           const unsigned grid[3], const teeny_interp_arg *args,
                           int nargs, const teeny_interp_opts *o) {
  interp it;
  memset(&it, 0, sizeof it);
  it.cx = cx;
  it.f = f;
  it.max_steps = o && o->max_steps ? o->max_steps : TEENY_INTERP_MAX_STEPS;
  it.print = o && o->print ? o->print : stderr; /* the kernel's own output */
  size_t max_bytes = o && o->max_bytes ? o->max_bytes : TEENY_INTERP_MAX_BYTES;
  elem *block = NULL;
  int rc = check_call(&it, grid, args, nargs);
  if (rc)
    return rc;
  memcpy(it.grid, grid, sizeof it.grid);
  teeny__arena_init(&it.arena); /* no oom jump: the detector gives up instead */
  if (!(rc = alloc_slots(&it, max_bytes, &block)) && !(rc = bind_args(&it, args))) {
    if (!(o && o->no_race_check))
      it.race = race_new(&it);
    rc = run_programs(&it);
  }
  teeny__arena_free(&it.arena);
  teeny__free(block);
  teeny__free(it.slot);
  teeny__free(it.bufs);
  return rc;
}

int teeny__interp_run(teeny_ctx *cx, const teeny_ir_func *f,
                      const unsigned grid[3], const teeny_interp_arg *args,
                      int nargs) {
  return teeny__interp_run_opts(cx, f, grid, args, nargs, NULL);
}
