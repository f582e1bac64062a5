/*
 * tests/unit/test_codegen_cases.c — the IR the code generator tests compile:
 * tests/ir_samples.c's kernels in their configurations, plus hand-built IR
 * for the ops those do not reach (2-D reductions, argmax, scans, atomics,
 * control flow, casts, integer edges, math, views, every dot dtype).
 */
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_codegen.h"

char *teeny_cg_compile(teeny_ir_func *f, const char *target, int num_warps,
                       teeny_buf *err) {
  teeny_arena a;
  teeny_diags d;
  teeny__arena_init(&a);
  teeny_diags_init(&d);
  teeny_ctx cx = {.arena = &a, .file = "<ir>", .diags = &d};
  teeny_codegen_opts o = {target, num_warps, 0};
  teeny_codegen_out out;
  f->num_warps = num_warps;
  int rc = teeny__ir_verify(&cx, f);
  if (rc == 0)
    rc = teeny__codegen_ptx(&cx, f, &o, &out);
  if (rc) {
    teeny__buf_printf(err, "%s [%s, num_warps=%d]: %s\n", f->name, target, num_warps,
                      teeny_strerror(rc));
    for (size_t i = 0; i < d.n; i++) {
      char line[1024];
      teeny_diag_format(&d.v[i], line, sizeof line);
      teeny__buf_puts(err, line);
    }
    out.ptx = NULL;
  }
  teeny_diags_close(&d);
  teeny__arena_free(&a);
  return out.ptx;
}

/* ---- running a case two ways ------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

static int esize(teeny_dtype dt) { return dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(dt); }

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* f16/bf16 <-> double through teeny__round_dtype (exact once rounded) */
static uint16_t to_half(teeny_dtype dt, double x) {
  x = teeny__round_dtype(dt, x);
  float f = (float)x;
  uint32_t u = fbits(f);
  if (dt == TEENY_DT_BF16)
    return (uint16_t)(u >> 16);
  uint16_t s = (uint16_t)((u >> 16) & 0x8000);
  if (f != f)
    return 0x7E00;
  double a = fabs(x);
  if (a == 0)
    return s;
  if (isinf(a) || a >= 65520.0)
    return (uint16_t)(s | 0x7C00);
  int e;
  double m = frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
  if (e < -13)             /* subnormal: value = k 2^-24 */
    return (uint16_t)(s | (uint16_t)ldexp(a, 24));
  return (uint16_t)(s | (uint16_t)((e + 14) << 10) | ((uint16_t)ldexp(m, 11) & 1023));
}

static double from_half(teeny_dtype dt, uint16_t h) {
  if (dt == TEENY_DT_BF16)
    return bitsf((uint32_t)h << 16);
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 1024, e - 25);
  return s ? -v : v;
}

static void put(teeny_dtype dt, void *p, long i, double v) {
  char *b = (char *)p + i * esize(dt);
  switch (dt) {
  case TEENY_DT_BOOL: { uint8_t x = v != 0; memcpy(b, &x, 1); break; }
  case TEENY_DT_I8: case TEENY_DT_U8: { int8_t x = (int8_t)(int)v; memcpy(b, &x, 1); break; }
  case TEENY_DT_I16: case TEENY_DT_U16: { int16_t x = (int16_t)(int)v; memcpy(b, &x, 2); break; }
  case TEENY_DT_I32: case TEENY_DT_U32: { int32_t x = (int32_t)(long)v; memcpy(b, &x, 4); break; }
  case TEENY_DT_I64: case TEENY_DT_U64: { int64_t x = (int64_t)v; memcpy(b, &x, 8); break; }
  case TEENY_DT_F16: case TEENY_DT_BF16: { uint16_t x = to_half(dt, v); memcpy(b, &x, 2); break; }
  case TEENY_DT_F32: { float x = (float)v; memcpy(b, &x, 4); break; }
  case TEENY_DT_F64: memcpy(b, &v, 8); break;
  default: break;
  }
}

static double get(teeny_dtype dt, const void *p, long i) {
  const char *b = (const char *)p + i * esize(dt);
  switch (dt) {
  case TEENY_DT_BOOL: case TEENY_DT_U8: { uint8_t x; memcpy(&x, b, 1); return x; }
  case TEENY_DT_I8: { int8_t x; memcpy(&x, b, 1); return x; }
  case TEENY_DT_I16: { int16_t x; memcpy(&x, b, 2); return x; }
  case TEENY_DT_U16: { uint16_t x; memcpy(&x, b, 2); return x; }
  case TEENY_DT_I32: { int32_t x; memcpy(&x, b, 4); return x; }
  case TEENY_DT_U32: { uint32_t x; memcpy(&x, b, 4); return x; }
  case TEENY_DT_I64: { int64_t x; memcpy(&x, b, 8); return (double)x; }
  case TEENY_DT_U64: { uint64_t x; memcpy(&x, b, 8); return (double)x; }
  case TEENY_DT_F16: case TEENY_DT_BF16: { uint16_t x; memcpy(&x, b, 2); return from_half(dt, x); }
  case TEENY_DT_F32: { float x; memcpy(&x, b, 4); return x; }
  case TEENY_DT_F64: { double x; memcpy(&x, b, 8); return x; }
  default: return 0;
  }
}

static double initial(teeny_dtype dt, teeny_cg_fill fill, long i, uint64_t *rng) {
  bool f = teeny__dt_is_float(dt);
  switch (fill) {
  case CG_FILL_ZERO:
    return 0;
  case CG_FILL_INDEX:
    return f ? (double)i / 16 : (double)i;
  case CG_FILL_SMALL:
    return (double)(rng_next(rng) % 4);
  default:
    if (dt == TEENY_DT_BOOL)
      return (double)(rng_next(rng) & 1);
    if (f)
      return (double)(rng_next(rng) % 20001) / 10000.0 - 1.0;
    if (!teeny__dt_is_signed(dt))
      return (double)(rng_next(rng) % 41);
    return (double)(rng_next(rng) % 41) - 20.0;
  }
}

static bool close_enough(teeny_dtype dt, double a, double b, double tol) {
  if (a != a && b != b)
    return true;
  if (!teeny__dt_is_float(dt))
    return a == b;
  if (isinf(a) || isinf(b))
    return a == b;
  return fabs(a - b) <= tol * (1 + fabs(b));
}

/* Emulated runs get buffers that end at a PROT_NONE page (an overrun
 * faults) with the few bytes of 16-byte rounding filled with a canary (a
 * masked-off read shows up as a wrong value, a write as a changed canary). */
typedef struct guarded {
  void *map;      /* the mapping */
  size_t maplen;  /* its length */
  char *data;     /* 16-byte aligned, ends <= 15 bytes before the guard */
  size_t bytes;   /* requested size */
  size_t slack;   /* canary bytes after data + bytes */
} guarded;

#define CANARY 0x7F

static bool guarded_new(guarded *g, size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t rounded = (bytes + 15) & ~(size_t)15;
  size_t body = (rounded + page - 1) / page * page;
  g->maplen = body + page;
  g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g->map == MAP_FAILED)
    return false;
  mprotect((char *)g->map + body, page, PROT_NONE);
  g->data = (char *)g->map + body - rounded;
  g->bytes = bytes;
  g->slack = rounded - bytes;
  memset(g->data + bytes, CANARY, g->slack);
  return true;
}

static bool canary_ok(const guarded *g) {
  for (size_t i = 0; i < g->slack; i++)
    if ((unsigned char)g->data[g->bytes + i] != CANARY)
      return false;
  return true;
}

int teeny_cg_check(const teeny_cg_case *c, const char *target, int num_warps, teeny_buf *err) {
  teeny_ir_func *f = c->f;
  int n = f->nparams, rc = 0;
  teeny_interp_arg ia[TEENY_CG_MAX_PARAMS], ea[TEENY_CG_MAX_PARAMS];
  void *bufs[2][TEENY_CG_MAX_PARAMS] = {{0}};
  guarded gb[TEENY_CG_MAX_PARAMS];
  uint64_t rng = 12345;
  memset(ia, 0, sizeof ia);
  memset(gb, 0, sizeof gb);
  for (int i = 0; i < n; i++) {
    teeny_type t = teeny__ir_type(f, f->body->args[i]);
    if (t.dt != TEENY_DT_PTR) {
      if (teeny__dt_is_float(t.dt))
        ia[i].v.f = c->p[i].v;
      else
        ia[i].v.i = (int64_t)c->p[i].v;
      continue;
    }
    size_t bytes = (size_t)c->p[i].n * (size_t)esize(t.pointee);
    bufs[0][i] = teeny__calloc(bytes + 16, 1);
    if (!guarded_new(&gb[i], bytes))
      return -1;
    bufs[1][i] = gb[i].data;
    for (long e = 0; e < c->p[i].n; e++) {
      double v = initial(t.pointee, c->p[i].fill, e, &rng);
      put(t.pointee, bufs[0][i], e, v);
      put(t.pointee, bufs[1][i], e, v);
    }
    ia[i].data = bufs[0][i];
    ia[i].bytes = bytes;
  }
  memcpy(ea, ia, sizeof ia);
  for (int i = 0; i < n; i++)
    if (bufs[1][i])
      ea[i].data = bufs[1][i];
  teeny_arena a;
  teeny_diags d;
  teeny__arena_init(&a);
  teeny_diags_init(&d);
  teeny_ctx cx = {.arena = &a, .file = "<ir>", .diags = &d};
  teeny_codegen_opts o = {target, num_warps, 0};
  f->num_warps = num_warps;
  int r1 = teeny__interp_run(&cx, f, c->grid, ia, n);
  int r2 = r1 ? r1 : teeny__codegen_emulate(&cx, f, &o, c->grid, ea, n);
  if (r1 || r2) {
    teeny__buf_printf(err, "%s %s nw=%d: %s failed: %s\n", c->name, target, num_warps,
                      r1 ? "interpreter" : "emulator", teeny_strerror(r1 ? r1 : r2));
    for (size_t i = 0; i < d.n; i++) {
      char line[1024];
      teeny_diag_format(&d.v[i], line, sizeof line);
      teeny__buf_puts(err, line);
    }
    rc = -1;
  }
  for (int i = 0; i < n && rc == 0; i++) {
    if (!bufs[0][i])
      continue;
    teeny_dtype dt = teeny__ir_type(f, f->body->args[i]).pointee;
    int bad = 0;
    for (long e = 0; e < c->p[i].n; e++) {
      double want = get(dt, bufs[0][i], e), got = get(dt, bufs[1][i], e);
      if (!close_enough(dt, got, want, c->tol)) {
        if (bad++ < 8)
          teeny__buf_printf(err, "%s %s nw=%d: %s[%ld] = %.9g, interpreter says %.9g\n",
                            c->name, target, num_warps, f->param_names[i], e, got, want);
      }
    }
    if (bad) {
      teeny__buf_printf(err, "%s %s nw=%d: %d of %ld elements of %s differ\n", c->name,
                        target, num_warps, bad, c->p[i].n, f->param_names[i]);
      rc = -1;
    }
    if (!canary_ok(&gb[i])) {
      teeny__buf_printf(err, "%s %s nw=%d: wrote past the end of %s\n", c->name, target,
                        num_warps, f->param_names[i]);
      rc = -1;
    }
  }
  for (int i = 0; i < n; i++) {
    teeny__free(bufs[0][i]);
    if (gb[i].map)
      munmap(gb[i].map, gb[i].maplen);
  }
  teeny_diags_close(&d);
  teeny__arena_free(&a);
  return rc;
}

/* ---- the cases ------------------------------------------------------------------------ */

static unsigned cdiv(long a, long b) { return (unsigned)((a + b - 1) / b); }

/* ---- a small IR builder for the cases below -------------------------------------- */

static const teeny_loc LC = {1, 1};

typedef struct bld {
  teeny_ir_func *f;
  teeny_region *r; /* where ops go */
} bld;

static teeny_type T(bld *b, int v) { return teeny__ir_type(b->f, v); }

static teeny_type tile(teeny_dtype dt, int m, int n) {
  int s[2] = {m, n};
  return teeny__type_tile(dt, n ? 2 : 1, s);
}

static int param(bld *b, const char *name, teeny_type t) {
  return teeny__ir_param_add(b->f, name, t);
}

static bld begin(teeny_arena *a, const char *name) {
  bld b;
  b.f = teeny__ir_func_new(a, name);
  b.r = b.f->body;
  return b;
}

static teeny_ir_func *end(bld *b) {
  teeny__ir_op_add(b->f, b->f->body, IR_RETURN, LC, NULL, 0, NULL, 0);
  return b->f;
}

static int cst(bld *b, teeny_type t, double v) {
  teeny_scalar s;
  if (teeny__dt_is_float(t.dt))
    s.f = v;
  else
    s.i = (int64_t)v;
  return teeny__ir_const(b->f, b->r, LC, t, s);
}

static int ci(bld *b, int v) { return cst(b, teeny__type_scalar(TEENY_DT_I32), v); }

static int op1(bld *b, teeny_opcode code, int x) {
  return teeny__ir_unary(b->f, b->r, code, LC, x, T(b, x));
}

static int op2(bld *b, teeny_opcode code, int x, int y) {
  return teeny__ir_binary(b->f, b->r, code, LC, x, y, T(b, x));
}

static int op3(bld *b, teeny_opcode code, int x, int y, int z) {
  teeny_type t = T(b, code == IR_SELECT ? y : x);
  return teeny__ir_op_add(b->f, b->r, code, LC, (int[]){x, y, z}, 3, &t, 1)->res[0];
}

static int cmp(bld *b, teeny_cmp_pred p, int x, int y) {
  teeny_type t = teeny__type_with_dtype(T(b, x), TEENY_DT_BOOL);
  teeny_op *o = teeny__ir_op_add(b->f, b->r, IR_CMP, LC, (int[]){x, y}, 2, &t, 1);
  o->pred = p;
  return o->res[0];
}

static int cast(bld *b, int x, teeny_dtype dt) {
  return teeny__ir_unary(b->f, b->r, IR_CAST, LC, x, teeny__type_with_dtype(T(b, x), dt));
}

static int to_shape(bld *b, teeny_opcode code, int x, int m, int n) {
  teeny_type t = teeny__type_with_shape(T(b, x), n ? 2 : 1, (int[]){m, n});
  return teeny__ir_unary(b->f, b->r, code, LC, x, t);
}

static int splat(bld *b, int x, int m, int n) { return to_shape(b, IR_SPLAT, x, m, n); }

static int expand(bld *b, int x, int axis) {
  teeny_type t = T(b, x);
  int s[2];
  for (int d = 0, j = 0; d < 2; d++)
    s[d] = d == axis ? 1 : t.shape[j++];
  teeny_op *o = teeny__ir_op_add(b->f, b->r, IR_EXPAND_DIMS, LC, &x, 1,
                                 (teeny_type[]){teeny__type_with_shape(t, 2, s)}, 1);
  o->axis = axis;
  return o->res[0];
}

static int range(bld *b, int start, int end) {
  teeny_type t = tile(TEENY_DT_I32, end - start, 0);
  teeny_op *o = teeny__ir_op_add(b->f, b->r, IR_MAKE_RANGE, LC, NULL, 0, &t, 1);
  o->start = start;
  o->end = end;
  return o->res[0];
}

static int pid(bld *b, int axis) {
  teeny_type t = teeny__type_scalar(TEENY_DT_I32);
  teeny_op *o = teeny__ir_op_add(b->f, b->r, IR_PROGRAM_ID, LC, NULL, 0, &t, 1);
  o->axis = axis;
  return o->res[0];
}

static int addptr(bld *b, int p, int off) {
  return teeny__ir_binary(b->f, b->r, IR_ADDPTR, LC, p, off, T(b, p));
}

/* p (scalar pointer) + offs (tile of offsets) */
static int ptr_tile(bld *b, int p, int offs) {
  teeny_type o = T(b, offs);
  teeny_type pt = teeny__type_with_shape(T(b, p), o.rank, o.shape);
  return addptr(b, teeny__ir_unary(b->f, b->r, IR_SPLAT, LC, p, pt), offs);
}

static int load(bld *b, int p, int mask, int other) {
  teeny_type t = teeny__type_with_dtype(T(b, p), T(b, p).pointee);
  int args[3] = {p, mask, other};
  int n = other >= 0 ? 3 : mask >= 0 ? 2 : 1;
  return teeny__ir_op_add(b->f, b->r, IR_LOAD, LC, args, n, &t, 1)->res[0];
}

static void store(bld *b, int p, int v, int mask) {
  int args[3] = {p, v, mask};
  teeny__ir_op_add(b->f, b->r, IR_STORE, LC, args, mask >= 0 ? 3 : 2, NULL, 0);
}

/* A region (acc..., x...) -> code(acc, x) for combines; n operands. */
static teeny_region *combine_region(bld *b, teeny_dtype dt, teeny_opcode code) {
  teeny_region *r = teeny__ir_region_new(b->f);
  teeny_type st = teeny__type_scalar(dt);
  int x = teeny__ir_region_arg_add(b->f, r, st);
  int y = teeny__ir_region_arg_add(b->f, r, st);
  int z = teeny__ir_binary(b->f, r, code, LC, x, y, st);
  teeny__ir_op_add(b->f, r, IR_YIELD, LC, &z, 1, NULL, 0);
  return r;
}

static int combine_op(bld *b, teeny_opcode opc, const int *xs, int n, int axis,
                      teeny_region *region, bool reverse, int *res) {
  teeny_type in = T(b, xs[0]);
  teeny_type rt[4];
  for (int i = 0; i < n; i++) {
    teeny_type t = T(b, xs[i]);
    if (opc == IR_SCAN) {
      rt[i] = t;
    } else {
      int s[2], k = 0;
      for (int d = 0; d < in.rank; d++)
        if (d != axis)
          s[k++] = in.shape[d];
      rt[i] = teeny__type_with_shape(t, k, s);
    }
  }
  teeny_op *o = teeny__ir_op_add(b->f, b->r, opc, LC, xs, n, rt, n);
  o->axis = axis;
  o->reverse = reverse;
  o->regions[0] = region;
  o->nregions = 1;
  for (int i = 0; i < n; i++)
    res[i] = o->res[i];
  return o->res[0];
}

static int reduce(bld *b, int x, int axis, teeny_opcode code) {
  int r;
  return combine_op(b, IR_REDUCE, &x, 1, axis, combine_region(b, T(b, x).dt, code), false, &r);
}

static int scan(bld *b, int x, int axis, teeny_opcode code, bool reverse) {
  int r;
  return combine_op(b, IR_SCAN, &x, 1, axis, combine_region(b, T(b, x).dt, code), reverse, &r);
}

/* offsets row * stride + col of an [m, n] tile: rows r0.., cols c0.. */
static int offs2(bld *b, int m, int n, int stride) {
  int rm = expand(b, range(b, 0, m), 1), cn = expand(b, range(b, 0, n), 0);
  int rs = op2(b, IR_MUL, rm, splat(b, stride, m, 1));
  return op2(b, IR_ADD, to_shape(b, IR_BROADCAST, rs, m, n), to_shape(b, IR_BROADCAST, cn, m, n));
}

/* ---- element-wise kernels --------------------------------------------------------------------- */

/* y[i] = op(x[i]) (or op(x[i], z[i]), select, fma ...) over n elements */
static teeny_ir_func *k_unary(teeny_arena *a, const char *name, teeny_dtype in,
                              teeny_dtype out, int block, teeny_opcode code) {
  bld b = begin(a, name);
  int px = param(&b, "x", teeny__type_ptr(in)), py = param(&b, "y", teeny__type_ptr(out));
  int n = param(&b, "n", teeny__type_scalar(TEENY_DT_I32));
  int offs = op2(&b, IR_ADD, splat(&b, op2(&b, IR_MUL, pid(&b, 0), ci(&b, block)), block, 0),
                 range(&b, 0, block));
  int mask = cmp(&b, CMP_LT, offs, splat(&b, n, block, 0));
  int x = load(&b, ptr_tile(&b, px, offs), mask, -1);
  int y = code == IR_CAST ? cast(&b, x, out) : op1(&b, code, x);
  store(&b, ptr_tile(&b, py, offs), y, mask);
  return end(&b);
}

/* z = x op y for ints (edge cases: zero divisors, over-wide shifts) */
static teeny_ir_func *k_binary(teeny_arena *a, const char *name, teeny_dtype dt, int block,
                               teeny_opcode code) {
  bld b = begin(a, name);
  int px = param(&b, "x", teeny__type_ptr(dt)), py = param(&b, "y", teeny__type_ptr(dt));
  int pz = param(&b, "z", teeny__type_ptr(dt));
  int n = param(&b, "n", teeny__type_scalar(TEENY_DT_I32));
  int offs = op2(&b, IR_ADD, splat(&b, op2(&b, IR_MUL, pid(&b, 0), ci(&b, block)), block, 0),
                 range(&b, 0, block));
  int mask = cmp(&b, CMP_LT, offs, splat(&b, n, block, 0));
  int x = load(&b, ptr_tile(&b, px, offs), mask, -1);
  int y = load(&b, ptr_tile(&b, py, offs), mask, -1);
  store(&b, ptr_tile(&b, pz, offs), op2(&b, code, x, y), mask);
  return end(&b);
}

/* z = where(x < y, fma(x, y, x), max(x, y) - min(x, y)) on one dtype */
static teeny_ir_func *k_select(teeny_arena *a, teeny_dtype dt, int block) {
  bld b = begin(a, "select_fma");
  int px = param(&b, "x", teeny__type_ptr(dt)), py = param(&b, "y", teeny__type_ptr(dt));
  int pz = param(&b, "z", teeny__type_ptr(dt));
  int offs = range(&b, 0, block);
  int x = load(&b, ptr_tile(&b, px, offs), -1, -1);
  int y = load(&b, ptr_tile(&b, py, offs), -1, -1);
  int f = op3(&b, IR_FMA, x, y, x);
  int d = op2(&b, IR_SUB, op2(&b, IR_MAX, x, y), op2(&b, IR_MIN, x, y));
  store(&b, ptr_tile(&b, pz, offs), op3(&b, IR_SELECT, cmp(&b, CMP_LT, x, y), f, d), -1);
  return end(&b);
}

/* y = (i32) (x * 1000) saturating etc.: x scaled so casts hit the edges */
static teeny_ir_func *k_cast_scaled(teeny_arena *a, const char *name, teeny_dtype to,
                                    double scale) {
  bld b = begin(a, name);
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_F32)), py = param(&b, "y", teeny__type_ptr(to));
  int offs = range(&b, 0, 256);
  int x = load(&b, ptr_tile(&b, px, offs), -1, -1);
  int s = op2(&b, IR_MUL, x, cst(&b, T(&b, x), scale));
  store(&b, ptr_tile(&b, py, offs), cast(&b, s, to), -1);
  return end(&b);
}

/* y = op(x * s) on f64, s = 700 for exp (down to subnormals and up to
 * overflow), 1e300 for the logs (x < 0 gives NaN) */
static teeny_ir_func *k_scaled_math(teeny_arena *a, const char *name, teeny_opcode code) {
  bld b = begin(a, name);
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_F64));
  int py = param(&b, "y", teeny__type_ptr(TEENY_DT_F64));
  int offs = range(&b, 0, 512);
  int x = load(&b, ptr_tile(&b, px, offs), -1, -1);
  double sc = code == IR_EXP ? 760 : code == IR_EXP2 ? 1100 : 1e300;
  if (code == IR_LOG || code == IR_LOG2 || code == IR_RSQRT)
    x = op1(&b, IR_ABS, x);
  int xs = op2(&b, IR_MUL, x, cst(&b, T(&b, x), sc));
  if (code == IR_LOG || code == IR_LOG2) /* and the subnormal range */
    xs = op3(&b, IR_SELECT, cmp(&b, CMP_LT, x, cst(&b, T(&b, x), 0.3)),
             op2(&b, IR_MUL, x, cst(&b, T(&b, x), 1e-310)), xs);
  store(&b, ptr_tile(&b, py, offs), op1(&b, code, xs), -1);
  return end(&b);
}

/* z = (x * 10000) % y */
static teeny_ir_func *k_fremscaled(teeny_arena *a, const char *name, teeny_dtype dt) {
  bld b = begin(a, name);
  int px = param(&b, "x", teeny__type_ptr(dt)), py = param(&b, "y", teeny__type_ptr(dt));
  int pz = param(&b, "z", teeny__type_ptr(dt));
  int offs = range(&b, 0, 256);
  int x = load(&b, ptr_tile(&b, px, offs), -1, -1);
  int y = load(&b, ptr_tile(&b, py, offs), -1, -1);
  int xs = op2(&b, IR_MUL, x, cst(&b, T(&b, x), 10000.0));
  store(&b, ptr_tile(&b, pz, offs), op2(&b, IR_REM, xs, y), -1);
  return end(&b);
}

/* ---- 2-D kernels: row softmax, column sums, transposes, reshapes ---------------------- */

/* rows of [R, C] per program: y = softmax(x, axis 1); s[row] = row sums */
static teeny_ir_func *k_softmax2d(teeny_arena *a, int R, int C) {
  bld b = begin(a, "softmax2d");
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_F32));
  int py = param(&b, "y", teeny__type_ptr(TEENY_DT_F32));
  int ps = param(&b, "s", teeny__type_ptr(TEENY_DT_F32));
  int ncols = param(&b, "n_cols", teeny__type_scalar(TEENY_DT_I32));
  int row0 = op2(&b, IR_MUL, pid(&b, 0), ci(&b, R));
  int rows = op2(&b, IR_ADD, splat(&b, row0, R, 0), range(&b, 0, R));
  int cols = range(&b, 0, C);
  int r2 = expand(&b, rows, 1), c2 = expand(&b, cols, 0);
  int off = op2(&b, IR_ADD,
                to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, r2, splat(&b, ncols, R, 1)), R, C),
                to_shape(&b, IR_BROADCAST, c2, R, C));
  int mask = to_shape(&b, IR_BROADCAST, cmp(&b, CMP_LT, c2, splat(&b, ncols, 1, C)), R, C);
  int x = load(&b, ptr_tile(&b, px, off), mask, cst(&b, tile(TEENY_DT_F32, R, C), -INFINITY));
  int m = reduce(&b, x, 1, IR_MAX);
  int d = op2(&b, IR_SUB, x, to_shape(&b, IR_BROADCAST, expand(&b, m, 1), R, C));
  int e = op1(&b, IR_EXP, d);
  int s = reduce(&b, e, 1, IR_ADD);
  int y = op2(&b, IR_DIV, e, to_shape(&b, IR_BROADCAST, expand(&b, s, 1), R, C));
  store(&b, ptr_tile(&b, py, off), y, mask);
  store(&b, ptr_tile(&b, ps, rows), s, -1);
  return end(&b);
}

/* column sums and maxima of one [M, N] tile; also its transpose and a reshape */
static teeny_ir_func *k_colsum(teeny_arena *a, teeny_dtype dt, int M, int N) {
  bld b = begin(a, "colsum_trans");
  int px = param(&b, "x", teeny__type_ptr(dt));
  int pc = param(&b, "c", teeny__type_ptr(dt)), pm = param(&b, "m", teeny__type_ptr(dt));
  int pt = param(&b, "t", teeny__type_ptr(dt)), pr = param(&b, "r", teeny__type_ptr(dt));
  int off = offs2(&b, M, N, ci(&b, N));
  int x = load(&b, ptr_tile(&b, px, off), -1, -1);
  store(&b, ptr_tile(&b, pc, range(&b, 0, N)), reduce(&b, x, 0, IR_ADD), -1);
  store(&b, ptr_tile(&b, pm, range(&b, 0, N)), reduce(&b, x, 0, IR_MAX), -1);
  int xt = to_shape(&b, IR_TRANS, x, N, M);            /* t[j][i] = x[i][j] */
  store(&b, ptr_tile(&b, pt, offs2(&b, N, M, ci(&b, M))), xt, -1);
  int flat = to_shape(&b, IR_RESHAPE, op2(&b, IR_ADD, x, x), M * N, 0);
  int back = to_shape(&b, IR_RESHAPE, flat, N, M);     /* same elements, row-major */
  store(&b, ptr_tile(&b, pr, offs2(&b, N, M, ci(&b, M))), back, -1);
  return end(&b);
}

/* argmax along axis 1 with ties to the first index, and the max itself */
static teeny_ir_func *k_argmax(teeny_arena *a, int M, int N) {
  bld b = begin(a, "argmax");
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_I32));
  int pi = param(&b, "idx", teeny__type_ptr(TEENY_DT_I32));
  int pv = param(&b, "val", teeny__type_ptr(TEENY_DT_I32));
  int x = load(&b, ptr_tile(&b, px, offs2(&b, M, N, ci(&b, N))), -1, -1);
  int idx = to_shape(&b, IR_BROADCAST, expand(&b, range(&b, 0, N), 0), M, N);
  teeny_region *r = teeny__ir_region_new(b.f);
  teeny_type st = teeny__type_scalar(TEENY_DT_I32);
  int v1 = teeny__ir_region_arg_add(b.f, r, st), i1 = teeny__ir_region_arg_add(b.f, r, st);
  int v2 = teeny__ir_region_arg_add(b.f, r, st), i2 = teeny__ir_region_arg_add(b.f, r, st);
  bld rb = {b.f, r};
  int gt = cmp(&rb, CMP_GT, v1, v2);
  int eq = op2(&rb, IR_AND, cmp(&rb, CMP_EQ, v1, v2), cmp(&rb, CMP_LT, i1, i2));
  int take1 = op2(&rb, IR_OR, gt, eq);
  int ov = op3(&rb, IR_SELECT, take1, v1, v2), oi = op3(&rb, IR_SELECT, take1, i1, i2);
  teeny__ir_op_add(b.f, r, IR_YIELD, LC, (int[]){ov, oi}, 2, NULL, 0);
  int res[2];
  combine_op(&b, IR_REDUCE, (int[]){x, idx}, 2, 1, r, false, res);
  store(&b, ptr_tile(&b, pv, range(&b, 0, M)), res[0], -1);
  store(&b, ptr_tile(&b, pi, range(&b, 0, M)), res[1], -1);
  return end(&b);
}

/* inclusive scans: 1-D over n, and along axis 1 / axis 0 (reversed) of [M, N] */
static teeny_ir_func *k_scan(teeny_arena *a, teeny_dtype dt, int n, int M, int N) {
  bld b = begin(a, "scans");
  int px = param(&b, "x", teeny__type_ptr(dt)), py = param(&b, "y", teeny__type_ptr(dt));
  int pr = param(&b, "rows", teeny__type_ptr(dt)), pc = param(&b, "cols", teeny__type_ptr(dt));
  int o1 = range(&b, 0, n);
  int x = load(&b, ptr_tile(&b, px, o1), -1, -1);
  store(&b, ptr_tile(&b, py, o1), scan(&b, x, 0, IR_ADD, false), -1);
  int o2 = offs2(&b, M, N, ci(&b, N));
  int x2 = load(&b, ptr_tile(&b, px, o2), -1, -1);
  store(&b, ptr_tile(&b, pr, o2), scan(&b, x2, 1, IR_ADD, false), -1);
  store(&b, ptr_tile(&b, pc, o2), scan(&b, x2, 0, IR_MAX, true), -1);
  return end(&b);
}

/* ---- atomics ------------------------------------------------------------------------------------------ */

/* counts[x[i] mod 8] += 1 (i32, colliding); fsum[i mod 4] += x (f32);
 * old values of fmax/imax on distinct addresses; a scalar atomic add */
static teeny_ir_func *k_atomics(teeny_arena *a, int block) {
  bld b = begin(a, "atomics");
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_F32));
  int pcnt = param(&b, "counts", teeny__type_ptr(TEENY_DT_I32));
  int pf = param(&b, "fsum", teeny__type_ptr(TEENY_DT_F32));
  int pm = param(&b, "fmax", teeny__type_ptr(TEENY_DT_F32));
  int pold = param(&b, "old", teeny__type_ptr(TEENY_DT_F32));
  int ptot = param(&b, "total", teeny__type_ptr(TEENY_DT_I32));
  int n = param(&b, "n", teeny__type_scalar(TEENY_DT_I32));
  int offs = op2(&b, IR_ADD, splat(&b, op2(&b, IR_MUL, pid(&b, 0), ci(&b, block)), block, 0),
                 range(&b, 0, block));
  int mask = cmp(&b, CMP_LT, offs, splat(&b, n, block, 0));
  int x = load(&b, ptr_tile(&b, px, offs), mask, -1);
  teeny_type ti = T(&b, offs);
  int bucket = op2(&b, IR_AND, offs, cst(&b, ti, 7));
  int one = cst(&b, ti, 1);
  teeny_op *o;
  o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_RMW, LC,
                       (int[]){ptr_tile(&b, pcnt, bucket), one, mask}, 3, &ti, 1);
  o->rmw = RMW_ADD;
  int fb = op2(&b, IR_AND, offs, cst(&b, ti, 3));
  teeny_type tf = T(&b, x);
  o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_RMW, LC,
                       (int[]){ptr_tile(&b, pf, fb), op2(&b, IR_MUL, x, cst(&b, tf, 0.25)), mask}, 3, &tf, 1);
  o->rmw = RMW_ADD;
  o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_RMW, LC,
                       (int[]){ptr_tile(&b, pm, offs), x, mask}, 3, &tf, 1);
  o->rmw = RMW_MAX;
  store(&b, ptr_tile(&b, pold, offs), o->res[0], mask);
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_RMW, LC, (int[]){ptot, ci(&b, 1)}, 2, &i32, 1);
  o->rmw = RMW_ADD;
  return end(&b);
}

/* cas/xchg/min on distinct addresses: old values are deterministic */
static teeny_ir_func *k_cas(teeny_arena *a, int block) {
  bld b = begin(a, "cas_xchg");
  int pa = param(&b, "a", teeny__type_ptr(TEENY_DT_I32));
  int pb = param(&b, "b", teeny__type_ptr(TEENY_DT_F32));
  int pc = param(&b, "c", teeny__type_ptr(TEENY_DT_I64));
  int pold = param(&b, "old", teeny__type_ptr(TEENY_DT_I32));
  int offs = range(&b, 0, block);
  teeny_type ti = T(&b, offs);
  int cmpv = op2(&b, IR_AND, offs, cst(&b, ti, 3));  /* a[i] == (i & 3) sometimes */
  teeny_op *o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_CAS, LC,
                                 (int[]){ptr_tile(&b, pa, offs), cmpv, op1(&b, IR_NEG, offs)}, 3, &ti, 1);
  store(&b, ptr_tile(&b, pold, offs), o->res[0], -1);
  int fb = cast(&b, offs, TEENY_DT_F32);
  teeny_type tf = T(&b, fb);
  o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_RMW, LC, (int[]){ptr_tile(&b, pb, offs), fb}, 2, &tf, 1);
  o->rmw = RMW_MIN;
  int c64 = cast(&b, offs, TEENY_DT_I64);
  teeny_type t64 = T(&b, c64);
  o = teeny__ir_op_add(b.f, b.r, IR_ATOMIC_RMW, LC, (int[]){ptr_tile(&b, pc, offs), c64}, 2, &t64, 1);
  o->rmw = RMW_XCHG;
  store(&b, ptr_tile(&b, pc, op2(&b, IR_ADD, offs, cst(&b, ti, block))), o->res[0], -1);
  return end(&b);
}

/* ---- control flow -------------------------------------------------------------------------------------- */

/* acc = x; while (sum(acc) < limit) acc = acc * 2 + 1; if (flag) acc = -acc */
static teeny_ir_func *k_while_if(teeny_arena *a, int block) {
  bld b = begin(a, "while_if");
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_F32));
  int py = param(&b, "y", teeny__type_ptr(TEENY_DT_F32));
  int plim = param(&b, "limit", teeny__type_scalar(TEENY_DT_F32));
  int pflag = param(&b, "flag", teeny__type_scalar(TEENY_DT_I32));
  int offs = range(&b, 0, block);
  int x = op1(&b, IR_ABS, load(&b, ptr_tile(&b, px, offs), -1, -1));
  teeny_type tf = T(&b, x);
  teeny_op *w = teeny__ir_op_add(b.f, b.r, IR_WHILE, LC, &x, 1, &tf, 1);
  teeny_region *before = teeny__ir_region_new(b.f), *after = teeny__ir_region_new(b.f);
  int acc = teeny__ir_region_arg_add(b.f, before, tf);
  bld bb = {b.f, before};
  int s = reduce(&bb, acc, 0, IR_ADD);
  int go = cmp(&bb, CMP_LT, s, plim);
  teeny__ir_op_add(b.f, before, IR_CONDITION, LC, (int[]){go, acc}, 2, NULL, 0);
  int acc2 = teeny__ir_region_arg_add(b.f, after, tf);
  bld ab = {b.f, after};
  int nxt = op2(&ab, IR_ADD, op2(&ab, IR_MUL, acc2, cst(&ab, tf, 2.0)), cst(&ab, tf, 1.0));
  teeny__ir_op_add(b.f, after, IR_YIELD, LC, &nxt, 1, NULL, 0);
  w->regions[0] = before;
  w->regions[1] = after;
  w->nregions = 2;
  int flag = cmp(&b, CMP_NE, pflag, ci(&b, 0));
  teeny_op *iff = teeny__ir_op_add(b.f, b.r, IR_IF, LC, &flag, 1, &tf, 1);
  teeny_region *th = teeny__ir_region_new(b.f), *el = teeny__ir_region_new(b.f);
  bld tb = {b.f, th};
  int neg = op1(&tb, IR_NEG, w->res[0]);
  teeny__ir_op_add(b.f, th, IR_YIELD, LC, &neg, 1, NULL, 0);
  teeny__ir_op_add(b.f, el, IR_YIELD, LC, &w->res[0], 1, NULL, 0);
  iff->regions[0] = th;
  iff->regions[1] = el;
  iff->nregions = 2;
  store(&b, ptr_tile(&b, py, offs), iff->res[0], -1);
  return end(&b);
}

/* a pointer tile carried through a for loop (Triton's `ptrs += BLOCK`) and
 * a scalar accumulator: y[i] = sum over chunks, z = count of chunks */
static teeny_ir_func *k_ptr_loop(teeny_arena *a, int block) {
  bld b = begin(a, "ptr_loop");
  int px = param(&b, "x", teeny__type_ptr(TEENY_DT_F16));
  int py = param(&b, "y", teeny__type_ptr(TEENY_DT_F32));
  int pz = param(&b, "z", teeny__type_ptr(TEENY_DT_I32));
  int nch = param(&b, "chunks", teeny__type_scalar(TEENY_DT_I32));
  int offs = range(&b, 0, block);
  int p0 = ptr_tile(&b, px, offs);
  int acc0 = cst(&b, tile(TEENY_DT_F32, block, 0), 0.0);
  int cnt0 = ci(&b, 0);
  teeny_type rt[3] = {T(&b, p0), T(&b, acc0), T(&b, cnt0)};
  teeny_op *loop = teeny__ir_op_add(b.f, b.r, IR_FOR, LC,
                                    (int[]){ci(&b, 0), nch, ci(&b, 1), p0, acc0, cnt0}, 6, rt, 3);
  teeny_region *body = teeny__ir_region_new(b.f);
  teeny__ir_region_arg_add(b.f, body, teeny__type_scalar(TEENY_DT_I32));
  int p = teeny__ir_region_arg_add(b.f, body, rt[0]);
  int acc = teeny__ir_region_arg_add(b.f, body, rt[1]);
  int cnt = teeny__ir_region_arg_add(b.f, body, rt[2]);
  bld lb = {b.f, body};
  int v = cast(&lb, load(&lb, p, -1, -1), TEENY_DT_F32);
  int acc2 = op2(&lb, IR_ADD, acc, v);
  int p2 = addptr(&lb, p, splat(&lb, ci(&lb, block), block, 0));
  int cnt2 = op2(&lb, IR_ADD, cnt, ci(&lb, 1));
  teeny__ir_op_add(b.f, body, IR_YIELD, LC, (int[]){p2, acc2, cnt2}, 3, NULL, 0);
  loop->regions[0] = body;
  loop->nregions = 1;
  store(&b, ptr_tile(&b, py, offs), loop->res[1], -1);
  store(&b, pz, loop->res[2], -1);
  return end(&b);
}

/* examples/kernels/layernorm.c as IR: three passes over a row in BLOCK
 * chunks (loads prefetched several iterations ahead, the loop unrolled),
 * reductions, scalar stores; rows of any length and stride */
typedef struct forloop {
  teeny_op *op;
  bld body;     /* where the body's ops go */
  int iv;       /* the induction variable */
  int arg;      /* the carried value (or -1) */
} forloop;

static forloop for_begin(bld *b, int lb, int ub, int step, int init) {
  forloop f;
  int n = init >= 0 ? 1 : 0;
  teeny_type rt = init >= 0 ? T(b, init) : teeny__type_scalar(TEENY_DT_I32);
  f.op = teeny__ir_op_add(b->f, b->r, IR_FOR, LC, (int[]){lb, ub, step, init}, 3 + n, &rt, n);
  teeny_region *body = teeny__ir_region_new(b->f);
  f.iv = teeny__ir_region_arg_add(b->f, body, teeny__type_scalar(TEENY_DT_I32));
  f.arg = n ? teeny__ir_region_arg_add(b->f, body, rt) : -1;
  f.body.f = b->f;
  f.body.r = body;
  return f;
}

static int for_end(forloop *f, int yield) {
  teeny__ir_op_add(f->body.f, f->body.r, IR_YIELD, LC, &yield, yield >= 0 ? 1 : 0, NULL, 0);
  f->op->regions[0] = f->body.r;
  f->op->nregions = 1;
  return yield >= 0 ? f->op->res[0] : -1;
}

static teeny_ir_func *k_layernorm(teeny_arena *a, teeny_dtype D, int B) {
  bld b = begin(a, "layernorm");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32), f32 = teeny__type_scalar(TEENY_DT_F32);
  int px = param(&b, "x", teeny__type_ptr(D)), py = param(&b, "y", teeny__type_ptr(D));
  int pw = param(&b, "w", teeny__type_ptr(D)), pb = param(&b, "b", teeny__type_ptr(D));
  int pmean = param(&b, "mean", teeny__type_ptr(TEENY_DT_F32));
  int prstd = param(&b, "rstd", teeny__type_ptr(TEENY_DT_F32));
  int stride = param(&b, "stride", i32), ncols = param(&b, "n_cols", i32);
  int eps = param(&b, "eps", f32);
  int row = pid(&b, 0);
  int xr = addptr(&b, px, op2(&b, IR_MUL, row, stride));
  int yr = addptr(&b, py, op2(&b, IR_MUL, row, stride));
  teeny_type tf = tile(TEENY_DT_F32, B, 0), td = tile(D, B, 0);
  /* pass 1: sums */
  forloop l1 = for_begin(&b, ci(&b, 0), ncols, ci(&b, B), cst(&b, tf, 0));
  int cols = op2(&l1.body, IR_ADD, splat(&l1.body, l1.iv, B, 0), range(&l1.body, 0, B));
  int m = cmp(&l1.body, CMP_LT, cols, splat(&l1.body, ncols, B, 0));
  int v = cast(&l1.body, load(&l1.body, ptr_tile(&l1.body, xr, cols), m, cst(&l1.body, td, 0)),
               TEENY_DT_F32);
  int acc = for_end(&l1, op2(&l1.body, IR_ADD, l1.arg, v));
  int nf = cast(&b, ncols, TEENY_DT_F32);
  int mean = op2(&b, IR_DIV, reduce(&b, acc, 0, IR_ADD), nf);
  /* pass 2: squared deviations */
  forloop l2 = for_begin(&b, ci(&b, 0), ncols, ci(&b, B), cst(&b, tf, 0));
  cols = op2(&l2.body, IR_ADD, splat(&l2.body, l2.iv, B, 0), range(&l2.body, 0, B));
  m = cmp(&l2.body, CMP_LT, cols, splat(&l2.body, ncols, B, 0));
  v = cast(&l2.body, load(&l2.body, ptr_tile(&l2.body, xr, cols), m, cst(&l2.body, td, 0)),
           TEENY_DT_F32);
  int d = op3(&l2.body, IR_SELECT, m, op2(&l2.body, IR_SUB, v, splat(&l2.body, mean, B, 0)),
              cst(&l2.body, tf, 0));
  int sq = for_end(&l2, op2(&l2.body, IR_ADD, l2.arg, op2(&l2.body, IR_MUL, d, d)));
  int var = op2(&b, IR_DIV, reduce(&b, sq, 0, IR_ADD), nf);
  int rstd = op1(&b, IR_RSQRT, op2(&b, IR_ADD, var, eps));
  store(&b, addptr(&b, pmean, row), mean, -1);
  store(&b, addptr(&b, prstd, row), rstd, -1);
  /* pass 3: normalise */
  forloop l3 = for_begin(&b, ci(&b, 0), ncols, ci(&b, B), -1);
  bld *lb = &l3.body;
  cols = op2(lb, IR_ADD, splat(lb, l3.iv, B, 0), range(lb, 0, B));
  m = cmp(lb, CMP_LT, cols, splat(lb, ncols, B, 0));
  int w = cast(lb, load(lb, ptr_tile(lb, pw, cols), m, cst(lb, td, 0)), TEENY_DT_F32);
  int bb = cast(lb, load(lb, ptr_tile(lb, pb, cols), m, cst(lb, td, 0)), TEENY_DT_F32);
  int xv = cast(lb, load(lb, ptr_tile(lb, xr, cols), m, cst(lb, td, 0)), TEENY_DT_F32);
  int yv = op2(lb, IR_ADD, op2(lb, IR_MUL, op2(lb, IR_MUL, op2(lb, IR_SUB, xv, splat(lb, mean, B, 0)),
                                               splat(lb, rstd, B, 0)), w), bb);
  store(lb, ptr_tile(lb, yr, cols), cast(lb, yv, D), m);
  for_end(&l3, -1);
  return end(&b);
}

/* examples/kernels/matmul.c as IR: any strides (row-major or not: the
 * vector accesses check contiguity at run time), grouped program order,
 * pointer tiles advanced in the loop, masked edges, C in D */
static teeny_ir_func *k_matmul_strided(teeny_arena *a, teeny_dtype D, int BM, int BN, int BK,
                                       int GM) {
  bld b = begin(a, "matmul_strided");
  teeny_type i32 = teeny__type_scalar(TEENY_DT_I32);
  int pa = param(&b, "a", teeny__type_ptr(D)), pb = param(&b, "b", teeny__type_ptr(D));
  int pc = param(&b, "c", teeny__type_ptr(D));
  int M = param(&b, "M", i32), N = param(&b, "N", i32), K = param(&b, "K", i32);
  int sam = param(&b, "stride_am", i32), sak = param(&b, "stride_ak", i32);
  int sbk = param(&b, "stride_bk", i32), sbn = param(&b, "stride_bn", i32);
  int scm = param(&b, "stride_cm", i32), scn = param(&b, "stride_cn", i32);
  (void)scn;
  int pid0 = pid(&b, 0);
#define CDIV(x, y) op2(&b, IR_DIV, op2(&b, IR_ADD, x, ci(&b, (y) - 1)), ci(&b, y))
  int npm = CDIV(M, BM), npn = CDIV(N, BN);
  int nig = op2(&b, IR_MUL, ci(&b, GM), npn);
  int gid = op2(&b, IR_DIV, pid0, nig);
  int fpm = op2(&b, IR_MUL, gid, ci(&b, GM));
  int gsm = op2(&b, IR_MIN, op2(&b, IR_SUB, npm, fpm), ci(&b, GM));
  int pim = op2(&b, IR_REM, pid0, nig);
  int pidm = op2(&b, IR_ADD, fpm, op2(&b, IR_REM, pim, gsm));
  int pidn = op2(&b, IR_DIV, pim, gsm);
#undef CDIV
  int rm = op2(&b, IR_ADD, splat(&b, op2(&b, IR_MUL, pidm, ci(&b, BM)), BM, 0), range(&b, 0, BM));
  int rn = op2(&b, IR_ADD, splat(&b, op2(&b, IR_MUL, pidn, ci(&b, BN)), BN, 0), range(&b, 0, BN));
  int rk = range(&b, 0, BK);
  int cm = expand(&b, rm, 1), rkr = expand(&b, rk, 0), rkc = expand(&b, rk, 1), rnr = expand(&b, rn, 0);
  int aoff = op2(&b, IR_ADD, to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, cm, splat(&b, sam, BM, 1)), BM, BK),
                 to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, rkr, splat(&b, sak, 1, BK)), BM, BK));
  int boff = op2(&b, IR_ADD, to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, rkc, splat(&b, sbk, BK, 1)), BK, BN),
                 to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, rnr, splat(&b, sbn, 1, BN)), BK, BN));
  int a0 = ptr_tile(&b, pa, aoff), b0 = ptr_tile(&b, pb, boff);
  int acc0 = cst(&b, tile(TEENY_DT_F32, BM, BN), 0.0);
  teeny_type rt[3] = {T(&b, a0), T(&b, b0), T(&b, acc0)};
  teeny_op *loop = teeny__ir_op_add(b.f, b.r, IR_FOR, LC, (int[]){ci(&b, 0), K, ci(&b, BK), a0, b0, acc0},
                                    6, rt, 3);
  teeny_region *body = teeny__ir_region_new(b.f);
  int k = teeny__ir_region_arg_add(b.f, body, i32);
  int ap = teeny__ir_region_arg_add(b.f, body, rt[0]), bp = teeny__ir_region_arg_add(b.f, body, rt[1]);
  int acc = teeny__ir_region_arg_add(b.f, body, rt[2]);
  bld lb = {b.f, body};
  int kleft = op2(&lb, IR_SUB, K, k);
  teeny_type bmk = tile(TEENY_DT_BOOL, BM, BK), bkn = tile(TEENY_DT_BOOL, BK, BN);
  int am = op2(&lb, IR_AND,
               teeny__ir_unary(b.f, body, IR_BROADCAST, LC, cmp(&lb, CMP_LT, cm, splat(&lb, M, BM, 1)), bmk),
               teeny__ir_unary(b.f, body, IR_BROADCAST, LC, cmp(&lb, CMP_LT, rkr, splat(&lb, kleft, 1, BK)), bmk));
  int bm = op2(&lb, IR_AND,
               teeny__ir_unary(b.f, body, IR_BROADCAST, LC, cmp(&lb, CMP_LT, rkc, splat(&lb, kleft, BK, 1)), bkn),
               teeny__ir_unary(b.f, body, IR_BROADCAST, LC, cmp(&lb, CMP_LT, rnr, splat(&lb, N, 1, BN)), bkn));
  int av = load(&lb, ap, am, cst(&lb, tile(D, BM, BK), 0));
  int bv = load(&lb, bp, bm, cst(&lb, tile(D, BK, BN), 0));
  teeny_type at = T(&lb, acc);
  int acc2 = teeny__ir_op_add(b.f, body, IR_DOT, LC, (int[]){av, bv, acc}, 3, &at, 1)->res[0];
  int ap2 = addptr(&lb, ap, splat(&lb, op2(&lb, IR_MUL, ci(&lb, BK), sak), BM, BK));
  int bp2 = addptr(&lb, bp, splat(&lb, op2(&lb, IR_MUL, ci(&lb, BK), sbk), BK, BN));
  teeny__ir_op_add(b.f, body, IR_YIELD, LC, (int[]){ap2, bp2, acc2}, 3, NULL, 0);
  loop->regions[0] = body;
  loop->nregions = 1;
  int coff = op2(&b, IR_ADD, to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, cm, splat(&b, scm, BM, 1)), BM, BN),
                 to_shape(&b, IR_BROADCAST, op2(&b, IR_MUL, rnr, splat(&b, scn, 1, BN)), BM, BN));
  teeny_type bmn = tile(TEENY_DT_BOOL, BM, BN);
  int cmask = op2(&b, IR_AND,
                  to_shape(&b, IR_BROADCAST, cmp(&b, CMP_LT, cm, splat(&b, M, BM, 1)), BM, BN),
                  to_shape(&b, IR_BROADCAST, cmp(&b, CMP_LT, rnr, splat(&b, N, 1, BN)), BM, BN));
  (void)bmn;
  store(&b, ptr_tile(&b, pc, coff), cast(&b, loop->res[2], D), cmask);
  return end(&b);
}

/* x = range; 300 times x = x * 3 + i (a long chain of lazy index math) */
static teeny_ir_func *k_chain(teeny_arena *a, int block, int len) {
  bld b = begin(a, "chain");
  int py = param(&b, "y", teeny__type_ptr(TEENY_DT_I32));
  int x = range(&b, 0, block);
  for (int i = 0; i < len; i++)
    x = op2(&b, IR_ADD, op2(&b, IR_MUL, x, cst(&b, T(&b, x), 3)), cst(&b, T(&b, x), i));
  store(&b, ptr_tile(&b, py, range(&b, 0, block)), x, -1);
  return end(&b);
}

/* ---- dot ------------------------------------------------------------------------------------------------ */

/* c = a[M,K] . b[K,N] (+ c when acc) over one tile, full tiles only */
static teeny_ir_func *k_dot(teeny_arena *a, const char *name, teeny_dtype dt, teeny_dtype acc,
                            int M, int N, int K) {
  bld b = begin(a, name);
  int pa = param(&b, "a", teeny__type_ptr(dt)), pb = param(&b, "b", teeny__type_ptr(dt));
  int pc = param(&b, "c", teeny__type_ptr(acc));
  int x = load(&b, ptr_tile(&b, pa, offs2(&b, M, K, ci(&b, K))), -1, -1);
  int y = load(&b, ptr_tile(&b, pb, offs2(&b, K, N, ci(&b, N))), -1, -1);
  int cptr = ptr_tile(&b, pc, offs2(&b, M, N, ci(&b, N)));
  int c0 = load(&b, cptr, -1, -1);
  teeny_type ct = T(&b, c0);
  int r = teeny__ir_op_add(b.f, b.r, IR_DOT, LC, (int[]){x, y, c0}, 3, &ct, 1)->res[0];
  store(&b, cptr, r, -1);
  return end(&b);
}

typedef struct case_list {
  teeny_cg_case *v;
  int n, max;
} case_list;

static teeny_cg_case *add(case_list *l, const char *name, teeny_ir_func *f,
                          unsigned gx, unsigned gy, double tol) {
  static teeny_cg_case dummy;
  if (l->n >= l->max)
    return &dummy;
  teeny_cg_case *c = &l->v[l->n++];
  memset(c, 0, sizeof *c);
  c->name = name;
  c->f = f;
  c->grid[0] = gx;
  c->grid[1] = gy;
  c->grid[2] = 1;
  c->tol = tol;
  return c;
}

static void buf(teeny_cg_case *c, int i, long n, teeny_cg_fill fill) {
  c->p[i].n = n;
  c->p[i].fill = fill;
}

static void val(teeny_cg_case *c, int i, double v) { c->p[i].v = v; }

static void vector_add(case_list *l, const char *name, teeny_arena *a, teeny_dtype dt,
                       int block, long n) {
  teeny_cg_case *c = add(l, name, teeny_sample_vector_add(a, dt, block), cdiv(n, block), 1, 1e-6);
  buf(c, 0, n, CG_FILL_RANDOM);
  buf(c, 1, n, CG_FILL_RANDOM);
  buf(c, 2, n, CG_FILL_ZERO);
  val(c, 3, (double)n);
}

/* vector_add with cache and eviction hints on its accesses (the loads
 * cache_cg + evict_last and cache_cv, the store cache_cs + evict_first):
 * ptxas must take the qualifiers, and the values do not change. */
static void hinted_vector_add(case_list *l, const char *name, teeny_arena *a, long n) {
  teeny_ir_func *f = teeny_sample_vector_add(a, TEENY_DT_F32, 1024);
  int loads = 0;
  for (int i = 0; i < f->body->nops; i++) {
    teeny_op *op = f->body->ops[i];
    if (op->code == IR_LOAD) {
      op->cache = loads++ ? TEENY_CACHE_CV : TEENY_CACHE_CG;
      op->evict = loads == 1 ? TEENY_EVICT_LAST : TEENY_EVICT_NONE;
    } else if (op->code == IR_STORE) {
      op->cache = TEENY_CACHE_CS;
      op->evict = TEENY_EVICT_FIRST;
    }
  }
  teeny_cg_case *c = add(l, name, f, cdiv(n, 1024), 1, 1e-6);
  buf(c, 0, n, CG_FILL_RANDOM);
  buf(c, 1, n, CG_FILL_RANDOM);
  buf(c, 2, n, CG_FILL_ZERO);
  val(c, 3, (double)n);
}

static void softmax(case_list *l, const char *name, teeny_arena *a, int block,
                    int ncols, int stride, int rows) {
  teeny_cg_case *c = add(l, name, teeny_sample_softmax(a, block), (unsigned)rows, 1, 2e-5);
  buf(c, 0, (long)rows * stride, CG_FILL_RANDOM);
  buf(c, 1, (long)rows * stride, CG_FILL_ZERO);
  val(c, 2, ncols);
  val(c, 3, stride);
}

static void matmul(case_list *l, const char *name, teeny_arena *a, teeny_dtype dt, int bm,
                   int bn, int bk, int M, int N, int K, double tol) {
  teeny_cg_case *c = add(l, name, teeny_sample_matmul(a, dt, bm, bn, bk), cdiv(M, bm),
                         cdiv(N, bn), tol);
  buf(c, 0, (long)M * K, CG_FILL_RANDOM);
  buf(c, 1, (long)K * N, CG_FILL_RANDOM);
  buf(c, 2, (long)M * N, CG_FILL_ZERO);
  val(c, 3, M);
  val(c, 4, N);
  val(c, 5, K);
}

int teeny_cg_cases(teeny_arena *a, teeny_cg_case *out, int max) {
  case_list l = {out, 0, max};
  vector_add(&l, "vector_add_f32_1024", a, TEENY_DT_F32, 1024, 2999);
  vector_add(&l, "vector_add_f16_1024", a, TEENY_DT_F16, 1024, 2051);
  vector_add(&l, "vector_add_f32_128", a, TEENY_DT_F32, 128, 1001);
  hinted_vector_add(&l, "vector_add_hinted", a, 2999);
  softmax(&l, "softmax_1024", a, 1024, 1000, 1001, 3);
  softmax(&l, "softmax_4096_aligned", a, 4096, 4096, 4096, 2);
  softmax(&l, "softmax_16384", a, 16384, 16000, 16003, 2);
  teeny_cg_case *c = add(&l, "row_sum_256", teeny_sample_row_sum_loop(a, 256), 2, 1, 1e-5);
  buf(c, 0, 1400, CG_FILL_RANDOM);
  buf(c, 1, 2, CG_FILL_ZERO);
  val(c, 2, 700);
  matmul(&l, "matmul_f16_64", a, TEENY_DT_F16, 64, 64, 32, 70, 90, 50, 1e-4);
  matmul(&l, "matmul_f32_32", a, TEENY_DT_F32, 32, 32, 16, 40, 36, 50, 2e-2);
  matmul(&l, "matmul_bf16_128", a, TEENY_DT_BF16, 128, 128, 32, 130, 140, 70, 1e-3);
  /* the benchmark's tile: 4 cp.async stages feeding wgmma m64n256k16 (two
   * warpgroups along M with 8 warps; M repeats with 4) */
  matmul(&l, "matmul_f16_128x256x64", a, TEENY_DT_F16, 128, 256, 64, 100, 200, 150, 1e-4);
  l.v[l.n - 1].min_warps = 4;
  /* 8 k steps (the last one masked): the 4 stages of a loop whose wgmma
   * stays in flight across the back edge wrap around twice */
  matmul(&l, "matmul_f16_wg_long", a, TEENY_DT_F16, 128, 128, 64, 70, 130, 460, 1e-4);
  l.v[l.n - 1].min_warps = 4;
  /* the example kernel: row-major A and B (unit strides), then B transposed
   * (stride_bn = K: the runtime contiguity check must fall back) */
  for (int tr = 0; tr < 11; tr++) {
    /* 3 k steps; B transposed; 128 tiles; fewer k steps than stages (K =
     * 40: a masked tail; K = 16: one partial step); BLOCK_K 64 (wgmma on
     * sm_90a), row-major and B transposed (the cp.async fallback).
     * Loop versioning (nvptx/ctrl.c): K = 96, 40, 16 and 136 have every
     * row 16-byte aligned (the fast copy of the loop, masked edges and k
     * tails included); K = 140 aligns every other row of A (threads
     * disagree: the block must take the general copy together); B
     * transposed is not contiguous (general copy).  The fast copy's split
     * mask (nvptx/mem.c teeny__cg_async_mask_split: full k tiles check
     * only the M/N bounds): K = 24 < BLOCK_K 64 (no full tile at all), K =
     * 264 (four full tiles, then 8 of 64), mma.sync K = 200 (six full
     * tiles of 32, then 8) */
    static const int kk[] = {96, 96, 96, 40, 16, 140, 140, 136, 24, 264, 200};
    bool wg = tr >= 5 && tr != 10;
    int Mm = 100, Nn = 72, Kk = kk[tr], bmn = tr == 2 || wg ? 128 : 64;
    int bk = wg ? 64 : 32;
    static const char *const nm[] = {"matmul_strided", "matmul_strided_bt",
                                     "matmul_strided_128", "matmul_strided_k40",
                                     "matmul_strided_k16", "matmul_strided_wg",
                                     "matmul_strided_wg_bt", "matmul_strided_wg_al",
                                     "matmul_strided_wg_k24", "matmul_strided_wg_k264",
                                     "matmul_strided_k200"};
    c = add(&l, nm[tr], k_matmul_strided(a, TEENY_DT_F16, bmn, bmn, bk, 8),
            cdiv(Mm, bmn) * cdiv(Nn, bmn), 1, 3e-3);
    c->min_warps = wg ? 4 : 0;
    buf(c, 0, (long)Mm * Kk, CG_FILL_RANDOM);
    buf(c, 1, (long)Kk * Nn, CG_FILL_RANDOM);
    buf(c, 2, (long)Mm * Nn, CG_FILL_ZERO);
    val(c, 3, Mm);
    val(c, 4, Nn);
    val(c, 5, Kk);
    val(c, 6, Kk);           /* stride_am */
    val(c, 7, 1);            /* stride_ak */
    val(c, 8, tr == 1 || tr == 6 ? 1 : Nn);  /* stride_bk */
    val(c, 9, tr == 1 || tr == 6 ? Kk : 1);  /* stride_bn */
    val(c, 10, Nn);          /* stride_cm */
    val(c, 11, 1);           /* stride_cn */
  }

  /* every element dtype through vector_add's masked 1-D path */
  static const teeny_dtype vdt[] = {TEENY_DT_BF16, TEENY_DT_F64, TEENY_DT_I8, TEENY_DT_I16,
                                    TEENY_DT_I64, TEENY_DT_U8};
  static const char *const vname[] = {"vector_add_bf16", "vector_add_f64", "vector_add_i8",
                                      "vector_add_i16", "vector_add_i64", "vector_add_u8"};
  for (int i = 0; i < 6; i++)
    vector_add(&l, vname[i], a, vdt[i], 512, 1537);

  /* math on f32, f16, bf16 */
  static const teeny_opcode mops[] = {IR_EXP, IR_EXP2, IR_LOG, IR_LOG2, IR_SQRT, IR_RSQRT,
                                      IR_SIN, IR_COS, IR_TANH, IR_ERF, IR_ABS, IR_FLOOR,
                                      IR_CEIL, IR_NEG};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(mops); i++) {
    const char *nm = teeny__arena_printf(a, "math_%s_f32", teeny__opcode_name(mops[i]));
    teeny_cg_case *m = add(&l, nm, k_unary(a, nm, TEENY_DT_F32, TEENY_DT_F32, 256, mops[i]),
                           4, 1, 2e-6);
    buf(m, 0, 1000, CG_FILL_RANDOM);
    buf(m, 1, 1000, CG_FILL_ZERO);
    val(m, 2, 1000);
  }
  static const teeny_opcode hops[] = {IR_EXP, IR_SQRT, IR_TANH, IR_ERF, IR_FLOOR};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(hops); i++)
    for (int h = 0; h < 2; h++) {
      teeny_dtype dt = h ? TEENY_DT_BF16 : TEENY_DT_F16;
      const char *nm = teeny__arena_printf(a, "math_%s_%s", teeny__opcode_name(hops[i]),
                                           teeny_dtype_name(dt));
      teeny_cg_case *m = add(&l, nm, k_unary(a, nm, dt, dt, 256, hops[i]), 2, 1,
                             h ? 1e-2 : 2e-3);
      buf(m, 0, 500, CG_FILL_RANDOM);
      buf(m, 1, 500, CG_FILL_ZERO);
      val(m, 2, 500);
    }

  /* f64 exp/exp2/log/log2/rsqrt, over a wide range (x scaled by 700) */
  static const teeny_opcode dops[] = {IR_EXP, IR_EXP2, IR_LOG, IR_LOG2, IR_RSQRT};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(dops); i++) {
    const char *nm = teeny__arena_printf(a, "math_%s_f64", teeny__opcode_name(dops[i]));
    teeny_cg_case *m = add(&l, nm, k_scaled_math(a, nm, dops[i]), 1, 1, 1e-15);
    buf(m, 0, 512, CG_FILL_RANDOM);
    buf(m, 1, 512, CG_FILL_ZERO);
  }

  /* casts, with saturation and rounding edges */
  static const struct { teeny_dtype from, to; } casts[] = {
      {TEENY_DT_I32, TEENY_DT_F32}, {TEENY_DT_F16, TEENY_DT_F32}, {TEENY_DT_F32, TEENY_DT_BF16},
      {TEENY_DT_I64, TEENY_DT_I8},  {TEENY_DT_U8, TEENY_DT_I32},  {TEENY_DT_F32, TEENY_DT_BOOL},
      {TEENY_DT_BOOL, TEENY_DT_F32}, {TEENY_DT_I32, TEENY_DT_U64}, {TEENY_DT_BF16, TEENY_DT_F16},
      {TEENY_DT_I8, TEENY_DT_BOOL}, {TEENY_DT_F64, TEENY_DT_F32}, {TEENY_DT_I16, TEENY_DT_F16}};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(casts); i++) {
    const char *nm = teeny__arena_printf(a, "cast_%s_%s", teeny_dtype_name(casts[i].from),
                                         teeny_dtype_name(casts[i].to));
    teeny_cg_case *m = add(&l, nm, k_unary(a, nm, casts[i].from, casts[i].to, 256, IR_CAST),
                           2, 1, 0);
    buf(m, 0, 300, CG_FILL_RANDOM);
    buf(m, 1, 300, CG_FILL_ZERO);
    val(m, 2, 300);
  }
  static const struct { teeny_dtype to; double scale; } sat[] = {
      {TEENY_DT_I8, 1000}, {TEENY_DT_U8, 1000}, {TEENY_DT_I32, 1e10}, {TEENY_DT_U32, 1e10},
      {TEENY_DT_F16, 1e5}, {TEENY_DT_I64, 1e20}, {TEENY_DT_U16, 1e5}};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(sat); i++) {
    const char *nm = teeny__arena_printf(a, "cast_sat_f32_%s", teeny_dtype_name(sat[i].to));
    teeny_cg_case *m = add(&l, nm, k_cast_scaled(a, nm, sat[i].to, sat[i].scale), 1, 1, 0);
    buf(m, 0, 256, CG_FILL_RANDOM);
    buf(m, 1, 256, CG_FILL_ZERO);
  }

  /* integer ops with zero divisors, MIN/-1 and over-wide shifts */
  static const teeny_opcode iops[] = {IR_DIV, IR_REM, IR_SHL, IR_SHR, IR_MIN, IR_MAX,
                                      IR_AND, IR_OR, IR_XOR, IR_MUL, IR_SUB};
  static const teeny_dtype idts[] = {TEENY_DT_I32, TEENY_DT_U32, TEENY_DT_I8, TEENY_DT_I64,
                                     TEENY_DT_U16};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(iops); i++)
    for (size_t d = 0; d < TEENY_ARRAY_LEN(idts); d++) {
      const char *nm = teeny__arena_printf(a, "int_%s_%s", teeny__opcode_name(iops[i]),
                                           teeny_dtype_name(idts[d]));
      teeny_cg_case *m = add(&l, nm, k_binary(a, nm, idts[d], 128, iops[i]), 2, 1, 0);
      buf(m, 0, 250, CG_FILL_RANDOM);
      buf(m, 1, 250, CG_FILL_RANDOM);
      buf(m, 2, 250, CG_FILL_ZERO);
      val(m, 3, 250);
    }
  /* float % (C's fmod) on f32 and f64, quotients up to ~1e4 */
  for (int d = 0; d < 2; d++) {
    teeny_dtype dt = d ? TEENY_DT_F64 : TEENY_DT_F32;
    const char *nm = d ? "float_rem_f64" : "float_rem_f32";
    teeny_cg_case *m = add(&l, nm, k_fremscaled(a, nm, dt), 1, 1, 0);
    buf(m, 0, 256, CG_FILL_RANDOM);
    buf(m, 1, 256, CG_FILL_RANDOM);
    buf(m, 2, 256, CG_FILL_ZERO);
  }
  for (int h = 0; h < 2; h++) {
    teeny_cg_case *m = add(&l, h ? "select_fma_f16" : "select_fma_f32",
                           k_select(a, h ? TEENY_DT_F16 : TEENY_DT_F32, 512), 1, 1,
                           h ? 2e-3 : 1e-6);
    buf(m, 0, 512, CG_FILL_RANDOM);
    buf(m, 1, 512, CG_FILL_RANDOM);
    buf(m, 2, 512, CG_FILL_ZERO);
  }

  /* 2-D: reductions along either axis, views */
  c = add(&l, "softmax2d_4x64", k_softmax2d(a, 4, 64), 3, 1, 2e-5);
  buf(c, 0, 600, CG_FILL_RANDOM);
  buf(c, 1, 600, CG_FILL_ZERO);
  buf(c, 2, 12, CG_FILL_ZERO);
  val(c, 3, 50);
  c = add(&l, "softmax2d_16x256", k_softmax2d(a, 16, 256), 2, 1, 2e-5);
  buf(c, 0, 32 * 256, CG_FILL_RANDOM);
  buf(c, 1, 32 * 256, CG_FILL_ZERO);
  buf(c, 2, 32, CG_FILL_ZERO);
  val(c, 3, 256);
  static const struct { teeny_dtype dt; int m, n; double tol; } cs[] = {
      {TEENY_DT_F32, 32, 64, 1e-5}, {TEENY_DT_I32, 16, 16, 0}, {TEENY_DT_F16, 64, 32, 3e-2}, /* f16 sums: order-dependent rounding */
      {TEENY_DT_I8, 8, 128, 0}};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(cs); i++) {
    const char *nm = teeny__arena_printf(a, "colsum_trans_%s_%dx%d",
                                         teeny_dtype_name(cs[i].dt), cs[i].m, cs[i].n);
    c = add(&l, nm, k_colsum(a, cs[i].dt, cs[i].m, cs[i].n), 1, 1, cs[i].tol);
    long mn = (long)cs[i].m * cs[i].n;
    buf(c, 0, mn, cs[i].dt == TEENY_DT_I8 ? CG_FILL_SMALL : CG_FILL_RANDOM);
    buf(c, 1, cs[i].n, CG_FILL_ZERO);
    buf(c, 2, cs[i].n, CG_FILL_ZERO);
    buf(c, 3, mn, CG_FILL_ZERO);
    buf(c, 4, mn, CG_FILL_ZERO);
  }
  c = add(&l, "argmax_8x64", k_argmax(a, 8, 64), 1, 1, 0);
  buf(c, 0, 8 * 64, CG_FILL_SMALL);
  buf(c, 1, 8, CG_FILL_ZERO);
  buf(c, 2, 8, CG_FILL_ZERO);
  c = add(&l, "argmax_64x16", k_argmax(a, 64, 16), 1, 1, 0);
  buf(c, 0, 64 * 16, CG_FILL_SMALL);
  buf(c, 1, 64, CG_FILL_ZERO);
  buf(c, 2, 64, CG_FILL_ZERO);
  for (int f = 0; f < 2; f++) {
    c = add(&l, f ? "scans_f32" : "scans_i32", k_scan(a, f ? TEENY_DT_F32 : TEENY_DT_I32, 512, 16, 32),
            1, 1, 1e-5);
    buf(c, 0, 512, CG_FILL_RANDOM);
    buf(c, 1, 512, CG_FILL_ZERO);
    buf(c, 2, 512, CG_FILL_ZERO);
    buf(c, 3, 512, CG_FILL_ZERO);
  }

  /* atomics */
  c = add(&l, "atomics", k_atomics(a, 256), 4, 1, 1e-4);
  buf(c, 0, 1000, CG_FILL_RANDOM);
  buf(c, 1, 8, CG_FILL_ZERO);
  buf(c, 2, 4, CG_FILL_ZERO);
  buf(c, 3, 1024, CG_FILL_RANDOM);
  buf(c, 4, 1024, CG_FILL_ZERO);
  buf(c, 5, 1, CG_FILL_ZERO);
  val(c, 6, 1000);
  c = add(&l, "cas_xchg", k_cas(a, 128), 1, 1, 0);
  buf(c, 0, 128, CG_FILL_SMALL);
  buf(c, 1, 128, CG_FILL_RANDOM);
  buf(c, 2, 256, CG_FILL_RANDOM);
  buf(c, 3, 128, CG_FILL_ZERO);

  /* control flow */
  c = add(&l, "while_if", k_while_if(a, 128), 1, 1, 1e-5);
  buf(c, 0, 128, CG_FILL_RANDOM);
  buf(c, 1, 128, CG_FILL_ZERO);
  val(c, 2, 5000.0);
  val(c, 3, 1);
  c = add(&l, "ptr_loop", k_ptr_loop(a, 256), 1, 1, 1e-6);
  buf(c, 0, 3 * 256, CG_FILL_RANDOM);
  buf(c, 1, 256, CG_FILL_ZERO);
  buf(c, 2, 1, CG_FILL_ZERO);
  val(c, 3, 3);

  c = add(&l, "lazy_chain", k_chain(a, 256, 300), 1, 1, 0);
  buf(c, 0, 256, CG_FILL_ZERO);

  /* layernorm: row lengths that make 1, 2, 3, 7 and 9 iterations of the
   * chunk loop (so every exit of the unrolled body runs), a partial last
   * chunk, odd row strides (misaligned rows: the vector accesses fall back)
   * and aligned ones */
  static const struct { const char *nm; teeny_dtype dt; int block, ncols, stride; double tol; } lns[] = {
      {"layernorm_f32_256_odd", TEENY_DT_F32, 256, 1795, 1797, 2e-5},
      {"layernorm_f32_128_aligned", TEENY_DT_F32, 128, 1152, 1152, 2e-5},
      {"layernorm_f16_256", TEENY_DT_F16, 256, 2300, 2304, 4e-3},
      {"layernorm_f16_512_odd", TEENY_DT_F16, 512, 700, 701, 4e-3},
      {"layernorm_bf16_128", TEENY_DT_BF16, 128, 100, 104, 3e-2},
      {"layernorm_f32_64_short", TEENY_DT_F32, 64, 130, 131, 2e-5}};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(lns); i++) {
    int rows = 3;
    c = add(&l, lns[i].nm, k_layernorm(a, lns[i].dt, lns[i].block), (unsigned)rows, 1, lns[i].tol);
    long nx = (long)rows * lns[i].stride;
    buf(c, 0, nx, CG_FILL_RANDOM);
    buf(c, 1, nx, CG_FILL_ZERO);
    buf(c, 2, lns[i].ncols, CG_FILL_RANDOM);
    buf(c, 3, lns[i].ncols, CG_FILL_RANDOM);
    buf(c, 4, rows, CG_FILL_ZERO);
    buf(c, 5, rows, CG_FILL_ZERO);
    val(c, 6, lns[i].stride);
    val(c, 7, lns[i].ncols);
    val(c, 8, 1e-5);
  }

  /* dot: every dtype, the mma shapes and the FMA fallback */
  static const struct { const char *nm; teeny_dtype dt, acc; int m, n, k; double tol; } dots[] = {
      {"dot_f16_64x64x32", TEENY_DT_F16, TEENY_DT_F32, 64, 64, 32, 1e-4},
      {"dot_bf16_32x32x32", TEENY_DT_BF16, TEENY_DT_F32, 32, 32, 32, 1e-4},
      {"dot_tf32_32x64x16", TEENY_DT_F32, TEENY_DT_F32, 32, 64, 16, 2e-2},
      {"dot_i8_32x32x64", TEENY_DT_I8, TEENY_DT_I32, 32, 32, 64, 0},
      {"dot_f64_16x16x16", TEENY_DT_F64, TEENY_DT_F64, 16, 16, 16, 1e-12},
      {"dot_f16_16x16x16", TEENY_DT_F16, TEENY_DT_F32, 16, 16, 16, 1e-4},
      {"dot_f16_16x8x32", TEENY_DT_F16, TEENY_DT_F32, 16, 8, 32, 1e-4},
      {"dot_f32_8x16x16_fma", TEENY_DT_F32, TEENY_DT_F32, 8, 16, 16, 1e-5},
      {"dot_i8_16x16x16_fma", TEENY_DT_I8, TEENY_DT_I32, 16, 16, 16, 0},
      {"dot_f16_128x128x64", TEENY_DT_F16, TEENY_DT_F32, 128, 128, 64, 1e-4},
      /* wgmma (sm_90a, 4 and 8 warps; 128-byte swizzles only, K and the
       * columns of a warpgroup >= 64): two K blocks of A, warpgroups along
       * M and along N, several instructions along M and along N (N = 512:
       * two of n256), bf16; and shapes that stay on mma.sync there */
      {"dot_f16_64x16x16", TEENY_DT_F16, TEENY_DT_F32, 64, 16, 16, 1e-4},
      {"dot_bf16_128x64x64", TEENY_DT_BF16, TEENY_DT_F32, 128, 64, 64, 1e-4},
      {"dot_f16_64x128x128", TEENY_DT_F16, TEENY_DT_F32, 64, 128, 128, 1e-4},
      {"dot_f16_128x64x64", TEENY_DT_F16, TEENY_DT_F32, 128, 64, 64, 1e-4},
      {"dot_f16_64x512x64", TEENY_DT_F16, TEENY_DT_F32, 64, 512, 64, 1e-4}};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(dots); i++) {
    c = add(&l, dots[i].nm, k_dot(a, dots[i].nm, dots[i].dt, dots[i].acc, dots[i].m, dots[i].n,
                                  dots[i].k), 1, 1, dots[i].tol);
    c->min_warps = (long)dots[i].m * dots[i].n > 16384 ? 4 : 0;
    buf(c, 0, (long)dots[i].m * dots[i].k, CG_FILL_RANDOM);
    buf(c, 1, (long)dots[i].k * dots[i].n, CG_FILL_RANDOM);
    buf(c, 2, (long)dots[i].m * dots[i].n, CG_FILL_RANDOM);
  }
  return l.n;
}
