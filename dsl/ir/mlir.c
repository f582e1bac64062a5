/*
 * dsl/ir/mlir.c — tile IR -> Triton-dialect MLIR text (the `.mlir` artifact).
 *
 * Owns teeny__mlir_print(): one `module { "tt.func" ... }` per kernel, in
 * what Triton calls TTIR.  The text has two readers, and it is written for
 * both at once:
 *
 *   mlir-opt-19 --allow-unregistered-dialect   registers arith, math and scf
 *     but not tt, so arith/math/scf ops use their pretty syntax and every
 *     tt op (tt.func included) uses MLIR's generic form:
 *     "tt.load"(%a, %m) <{...properties...}> : (types) -> type
 *   Triton's own parser (triton.compile of a .ttir file)   needs the generic
 *     form's properties spelt exactly as Triton's op definitions declare
 *     them.  The spellings follow triton-lang/triton
 *     include/triton/Dialect/Triton/IR/TritonOps.td @ 0072ae0b3a48 and
 *     TritonAttrDefs.td @ 05a9ad5db671 (enum attributes are I32EnumAttrs,
 *     so they print as `N : i32`), and were checked against Triton 3.6.0
 *     (pip wheel, sm_90): every sample of tests/unit/test_mlir_samples.c
 *     parses, verifies and compiles to PTX, and the compiled vector_add,
 *     softmax, row_sum, matmul and f16 math kernels match torch.
 *
 * Where Triton 3.6 cannot lower an op that MLIR has, the text says the same
 * thing another way: float negation is -0.0 - x (no arith.negf), tanh is
 * libdevice's __nv_tanhf/__nv_tanh through tt.extern_elementwise (no
 * math.tanh), float atomic max/min split by sign into integer atomics as
 * tl.atomic_max does, and f16/bf16 transcendentals and division are
 * computed in f32 and rounded, as docs/dsl.md defines them.
 *
 * Names: a value prints as %<id>, a kernel parameter as %arg<N>, and the
 * few helper values an op needs (the zero of an integer negation, ...) as
 * %t<N>, numbered per printout.  Signedness lives in teeny dtypes, not in
 * MLIR's signless integers, so each op picks its signed or unsigned variant
 * (divsi/divui, cmpi slt/ult, extsi/extui, ...) from the operand dtype; bool
 * is i1 and counts as unsigned.  Constants are exact: integers print as the
 * signed value of their bits, floats as the shortest decimal that reads
 * back to the same value, inf and NaN as hex bit patterns.
 *
 * The printer trusts teeny__ir_verify(): it never fails, and an opcode it
 * does not know still prints (as "teeny.<name>") so the text stays
 * parseable and the problem shows up downstream.  No global state.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ir/ir.h"

/* Triton's I32EnumAttr values (TritonAttrDefs.td). */
enum {
  TT_CACHE_NONE = 1,      /* CacheModifier::NONE */
  TT_EVICT_NORMAL = 1,    /* EvictionPolicy::NORMAL */
  TT_SEM_RELAXED = 1,     /* MemSemantic::RELAXED */
  TT_SEM_ACQUIRE = 2,     /* MemSemantic::ACQUIRE */
  TT_SEM_RELEASE = 3,     /* MemSemantic::RELEASE */
  TT_SEM_ACQ_REL = 4,     /* MemSemantic::ACQUIRE_RELEASE (tl's default) */
  TT_SCOPE_GPU = 1,       /* MemSyncScope::GPU (tl's default) */
  TT_SCOPE_CTA = 2,       /* MemSyncScope::CTA */
  TT_SCOPE_SYS = 3,       /* MemSyncScope::SYSTEM */
  TT_RMW_AND = 1,         /* RMWOp: bitwise and */
  TT_RMW_OR = 2,          /* bitwise or */
  TT_RMW_XOR = 3,         /* bitwise xor */
  TT_RMW_ADD = 4,         /* integer add */
  TT_RMW_FADD = 5,        /* float add */
  TT_RMW_MAX = 6,         /* signed max */
  TT_RMW_MIN = 7,         /* signed min */
  TT_RMW_UMAX = 8,        /* unsigned max */
  TT_RMW_UMIN = 9,        /* unsigned min */
  TT_RMW_XCHG = 10,       /* exchange */
  TT_PRECISION_TF32 = 0,  /* InputPrecision::TF32 (f32 dot on tensor cores) */
  TT_PRECISION_TF32X3 = 1, /* InputPrecision::TF32x3 */
  TT_PRECISION_IEEE = 2   /* InputPrecision::IEEE */
};

/* A value ready to print: its name and its type. */
typedef struct val {
  char name[32];   /* "%12", "%arg0", "%t3" */
  teeny_type type; /* its MLIR type */
} val;

typedef struct printer {
  teeny_buf *out;         /* where the text goes */
  const teeny_ir_func *f; /* the function being printed */
  const char *file; /* file name for loc(...); NULL: print no locations */
  int indent;       /* spaces before the current op */
  int ntmp;         /* helper values named so far (%t0, %t1, ...) */
} printer;

static void print_region_ops(printer *p, const teeny_region *r,
                             teeny_opcode owner);

/* ---- names, types, literals ------------------------------------------------ */

static val value_of(const printer *p, int id) {
  val v;
  v.type = p->f->values[id].type;
  for (int i = 0; i < p->f->nparams; i++)
    if (p->f->body->args[i] == id) {
      snprintf(v.name, sizeof v.name, "%%arg%d", i);
      return v;
    }
  snprintf(v.name, sizeof v.name, "%%%d", id);
  return v;
}

/* A fresh helper value of type t. */
static val tmp_of(printer *p, teeny_type t) {
  val v;
  v.type = t;
  snprintf(v.name, sizeof v.name, "%%t%d", p->ntmp++);
  return v;
}

static void put_type(printer *p, teeny_type t) {
  teeny__type_print_mlir(p->out, t);
}

/* "(t1, t2)" */
static void put_type_list(printer *p, const val *vs, int n) {
  teeny__buf_putc(p->out, '(');
  for (int i = 0; i < n; i++) {
    if (i)
      teeny__buf_puts(p->out, ", ");
    put_type(p, vs[i].type);
  }
  teeny__buf_putc(p->out, ')');
}

/* "%a, %b" */
static void put_names(printer *p, const val *vs, int n) {
  for (int i = 0; i < n; i++)
    teeny__buf_printf(p->out, "%s%s", i ? ", " : "", vs[i].name);
}

/* An MLIR string literal: quotes, backslashes and non-printable bytes are
 * escaped as \" \\ and \XX. */
static void put_string(teeny_buf *b, const char *s) {
  teeny__buf_putc(b, '"');
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      teeny__buf_printf(b, "\\%c", *c);
    else if (*c < 0x20 || *c >= 0x7f)
      teeny__buf_printf(b, "\\%02X", *c);
    else
      teeny__buf_putc(b, (char)*c);
  }
  teeny__buf_putc(b, '"');
}

static bool is_unsigned_like(teeny_dtype dt) {
  return dt == TEENY_DT_BOOL || (teeny__dt_is_int(dt) && !teeny__dt_is_signed(dt));
}

/* The integer's bits as a signed value of its width (MLIR ints are
 * signless: u32 0xffffffff prints as -1 : i32). */
static long long int_bits(teeny_dtype dt, teeny_scalar v) {
  int w = teeny__dt_bits(dt);
  uint64_t u = v.u;
  if (w > 0 && w < 64) {
    uint64_t m = (UINT64_C(1) << w) - 1;
    u &= m;
    if ((u >> (w - 1)) & 1)
      u |= ~m;
  }
  return (long long)u;
}

/* inf and NaN as the dtype's bit pattern (0xFF800000 for -inf : f32); NaN
 * becomes the quiet NaN of the dtype, keeping the sign. */
static void put_float_hex(teeny_buf *b, teeny_dtype dt, double x) {
  bool nan = isnan(x);
  uint64_t bits, sign;
  int digits;
  switch (dt) {
  case TEENY_DT_F16:
    bits = nan ? 0x7E00 : 0x7C00, sign = 0x8000, digits = 4;
    break;
  case TEENY_DT_BF16:
    bits = nan ? 0x7FC0 : 0x7F80, sign = 0x8000, digits = 4;
    break;
  case TEENY_DT_F32:
    bits = nan ? 0x7FC00000 : 0x7F800000, sign = 0x80000000u, digits = 8;
    break;
  case TEENY_DT_F8E4M3: /* no infinities: the folded value saturated already */
  case TEENY_DT_F8E5M2:
    bits = nan || dt == TEENY_DT_F8E4M3 ? 0x7F : 0x7C, sign = 0x80, digits = 2;
    break;
  default:
    bits = nan ? UINT64_C(0x7FF8000000000000) : UINT64_C(0x7FF0000000000000);
    sign = UINT64_C(0x8000000000000000), digits = 16;
    break;
  }
  if (signbit(x))
    bits |= sign;
  teeny__buf_printf(b, "0x%0*llX", digits, (unsigned long long)bits);
}

/* The shortest %e form that reads back as the same value of dt (MLIR reads
 * a float literal as a double and rounds it to the type).  Always has a
 * '.', which MLIR requires of a float literal. */
static void put_float(teeny_buf *b, teeny_dtype dt, double x) {
  if (dt == TEENY_DT_F32)
    x = (float)x;
  if (isinf(x) || isnan(x)) {
    put_float_hex(b, dt, x);
    return;
  }
  char s[48];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(s, sizeof s, "%.*e", prec, x);
    double y = strtod(s, NULL);
    if (dt == TEENY_DT_F32 ? (float)y == (float)x : y == x)
      break;
  }
  teeny__buf_puts(b, s);
}

static void put_literal(teeny_buf *b, teeny_dtype dt, teeny_scalar v) {
  if (dt == TEENY_DT_BOOL)
    teeny__buf_puts(b, v.i ? "true" : "false");
  else if (teeny__dt_is_float(dt))
    put_float(b, dt, v.f);
  else
    teeny__buf_printf(b, "%lld", int_bits(dt, v));
}

/* ---- one line ---------------------------------------------------------------- */

static void line_begin(printer *p, const val *res, int nres) {
  teeny__buf_printf(p->out, "%*s", p->indent, "");
  if (nres) {
    put_names(p, res, nres);
    teeny__buf_puts(p->out, " = ");
  }
}

/* Ends an op: its location (when asked for and known) and the newline. */
static void line_end(printer *p, const teeny_op *op) {
  if (p->file && op && op->loc.line > 0) {
    teeny__buf_puts(p->out, " loc(");
    put_string(p->out, p->file);
    teeny__buf_printf(p->out, ":%d:%d)", op->loc.line, op->loc.col > 0 ? op->loc.col : 1);
  }
  teeny__buf_putc(p->out, '\n');
}

/* %r = arith.constant LIT : T | dense<LIT> : T | true */
static void emit_const(printer *p, const teeny_op *op, val r, teeny_scalar v) {
  line_begin(p, &r, 1);
  teeny__buf_puts(p->out, "arith.constant ");
  if (r.type.rank == 0 && r.type.dt == TEENY_DT_BOOL) {
    put_literal(p->out, r.type.dt, v); /* i1 literals carry their type */
  } else {
    if (r.type.rank)
      teeny__buf_puts(p->out, "dense<");
    put_literal(p->out, r.type.dt, v);
    teeny__buf_puts(p->out, r.type.rank ? "> : " : " : ");
    put_type(p, r.type);
  }
  line_end(p, op);
}

/* A helper constant of type t holding v (all bits of v.u / v.f matter). */
static val tmp_const(printer *p, const teeny_op *op, teeny_type t, teeny_scalar v) {
  val z = tmp_of(p, t);
  emit_const(p, op, z, v);
  return z;
}

static val tmp_zero(printer *p, const teeny_op *op, teeny_type t) {
  teeny_scalar z;
  memset(&z, 0, sizeof z);
  return tmp_const(p, op, t, z);
}

/* %r = mn %a : T */
static void emit_unary(printer *p, const teeny_op *op, val r, const char *mn, val a) {
  line_begin(p, &r, 1);
  teeny__buf_printf(p->out, "%s %s : ", mn, a.name);
  put_type(p, r.type);
  line_end(p, op);
}

/* %r = mn %a, %b : T */
static void emit_binary(printer *p, const teeny_op *op, val r, const char *mn,
                        val a, val b) {
  line_begin(p, &r, 1);
  teeny__buf_printf(p->out, "%s %s, %s : ", mn, a.name, b.name);
  put_type(p, a.type);
  line_end(p, op);
}

/* %r = mn %a : Ta to Tr */
static void emit_cast(printer *p, const teeny_op *op, val r, const char *mn, val a) {
  line_begin(p, &r, 1);
  teeny__buf_printf(p->out, "%s %s : ", mn, a.name);
  put_type(p, a.type);
  teeny__buf_puts(p->out, " to ");
  put_type(p, r.type);
  line_end(p, op);
}

/* %r = arith.cmpX pred, %a, %b : T */
static void emit_cmp(printer *p, const teeny_op *op, val r, const char *mn,
                     const char *pred, val a, val b) {
  line_begin(p, &r, 1);
  teeny__buf_printf(p->out, "%s %s, %s, %s : ", mn, pred, a.name, b.name);
  put_type(p, a.type);
  line_end(p, op);
}

/* %r = arith.select %c, %a, %b : T  (tile condition: Tc, T) */
static void emit_select(printer *p, const teeny_op *op, val r, val c, val a, val b) {
  line_begin(p, &r, 1);
  teeny__buf_printf(p->out, "arith.select %s, %s, %s : ", c.name, a.name, b.name);
  if (c.type.rank) {
    put_type(p, c.type);
    teeny__buf_puts(p->out, ", ");
  }
  put_type(p, r.type);
  line_end(p, op);
}

/* Generic form without regions: %r = "name"(%a, ...) <{props}> : (Ta, ...) -> Tr */
static void emit_generic(printer *p, const teeny_op *op, const val *res, int nres,
                         const char *name, const val *args, int nargs,
                         const char *props) {
  line_begin(p, res, nres);
  teeny__buf_printf(p->out, "\"%s\"(", name);
  put_names(p, args, nargs);
  teeny__buf_putc(p->out, ')');
  if (props && *props)
    teeny__buf_printf(p->out, " <{%s}>", props);
  teeny__buf_puts(p->out, " : ");
  put_type_list(p, args, nargs);
  teeny__buf_puts(p->out, " -> ");
  if (nres == 1)
    put_type(p, res[0].type);
  else
    put_type_list(p, res, nres);
  line_end(p, op);
}

/* ---- operands of the op being printed -------------------------------------- */

static val arg(const printer *p, const teeny_op *op, int i) {
  return value_of(p, op->args[i]);
}

static val res(const printer *p, const teeny_op *op, int i) {
  return value_of(p, op->res[i]);
}

/* The first min(nargs, max) operands of op as vals; returns how many. */
static int args_of(const printer *p, const teeny_op *op, val *out, int max) {
  int n = op->nargs < max ? op->nargs : max;
  for (int i = 0; i < n; i++)
    out[i] = arg(p, op, i);
  return n;
}

/* Lists of any length, straight from the op (regions may carry many
 * values): names or types of operands [from, nargs) or of all results. */
static void put_arg_names(printer *p, const teeny_op *op, int from) {
  for (int i = from; i < op->nargs; i++)
    teeny__buf_printf(p->out, "%s%s", i > from ? ", " : "", arg(p, op, i).name);
}

static void put_arg_types(printer *p, const teeny_op *op, int from) {
  for (int i = from; i < op->nargs; i++) {
    if (i > from)
      teeny__buf_puts(p->out, ", ");
    put_type(p, arg(p, op, i).type);
  }
}

static void put_res_names(printer *p, const teeny_op *op) {
  for (int i = 0; i < op->nres; i++)
    teeny__buf_printf(p->out, "%s%s", i ? ", " : "", res(p, op, i).name);
}

/* "T" for one result, "(T1, T2)" otherwise */
static void put_res_types(printer *p, const teeny_op *op) {
  if (op->nres != 1)
    teeny__buf_putc(p->out, '(');
  for (int i = 0; i < op->nres; i++) {
    if (i)
      teeny__buf_puts(p->out, ", ");
    put_type(p, res(p, op, i).type);
  }
  if (op->nres != 1)
    teeny__buf_putc(p->out, ')');
}

/* Indentation and "%r1, %r2 = " for op's results (nothing without). */
static void op_begin(printer *p, const teeny_op *op) {
  teeny__buf_printf(p->out, "%*s", p->indent, "");
  put_res_names(p, op);
  if (op->nres)
    teeny__buf_puts(p->out, " = ");
}

/* Generic form of any op without regions, all operands and results. */
static void emit_generic_op(printer *p, const teeny_op *op, const char *name) {
  op_begin(p, op);
  teeny__buf_printf(p->out, "\"%s\"(", name);
  put_arg_names(p, op, 0);
  teeny__buf_puts(p->out, ") : (");
  put_arg_types(p, op, 0);
  teeny__buf_puts(p->out, ") -> ");
  put_res_types(p, op);
  line_end(p, op);
}

/* ---- element-wise ops ---------------------------------------------------------- */

static const char *binary_mnemonic(teeny_opcode code, teeny_dtype dt) {
  bool fl = teeny__dt_is_float(dt), sg = teeny__dt_is_signed(dt);
  switch (code) {
  case IR_ADD: return fl ? "arith.addf" : "arith.addi";
  case IR_SUB: return fl ? "arith.subf" : "arith.subi";
  case IR_MUL: return fl ? "arith.mulf" : "arith.muli";
  case IR_DIV: return fl ? "arith.divf" : sg ? "arith.divsi" : "arith.divui";
  case IR_REM: return fl ? "arith.remf" : sg ? "arith.remsi" : "arith.remui";
  case IR_AND: return "arith.andi";
  case IR_OR: return "arith.ori";
  case IR_XOR: return "arith.xori";
  case IR_SHL: return "arith.shli";
  case IR_SHR: return sg ? "arith.shrsi" : "arith.shrui";
  case IR_MIN: return fl ? "arith.minnumf" : sg ? "arith.minsi" : "arith.minui";
  case IR_MAX: return fl ? "arith.maxnumf" : sg ? "arith.maxsi" : "arith.maxui";
  default: return NULL;
  }
}

static const char *math_mnemonic(teeny_opcode code) {
  switch (code) {
  case IR_EXP: return "math.exp";
  case IR_EXP2: return "math.exp2";
  case IR_LOG: return "math.log";
  case IR_LOG2: return "math.log2";
  case IR_SQRT: return "math.sqrt";
  case IR_RSQRT: return "math.rsqrt";
  case IR_SIN: return "math.sin";
  case IR_COS: return "math.cos";
  case IR_ERF: return "math.erf";
  case IR_FLOOR: return "math.floor";
  case IR_CEIL: return "math.ceil";
  default: return NULL;
  }
}

/* neg: -0.0 - x for floats (exact, and -(+0) is -0; Triton 3.6 cannot
 * lower arith.negf), 0 - x for ints. */
static void print_neg(printer *p, const teeny_op *op) {
  val a = arg(p, op, 0), r = res(p, op, 0);
  teeny_scalar z;
  memset(&z, 0, sizeof z);
  if (teeny__dt_is_float(a.type.dt))
    z.f = -0.0;
  val zero = tmp_const(p, op, a.type, z);
  emit_binary(p, op, r, teeny__dt_is_float(a.type.dt) ? "arith.subf" : "arith.subi",
              zero, a);
}

static bool is_half(teeny_dtype dt) {
  return dt == TEENY_DT_F16 || dt == TEENY_DT_BF16;
}

/* The PTX of an f32 fast_* function, as the code generator emits it, for
 * tt.elementwise_inline_asm (so Triton computes the same approximation). */
static const char *fast_asm(teeny_opcode code) {
  switch (code) {
  case IR_EXP: return "mul.f32 $0, $1, 0f3FB8AA3B; ex2.approx.f32 $0, $0;";
  case IR_EXP2: return "ex2.approx.f32 $0, $1;";
  case IR_LOG: return "lg2.approx.f32 $0, $1; mul.f32 $0, $0, 0f3F317218;";
  case IR_LOG2: return "lg2.approx.f32 $0, $1;";
  case IR_SIN: return "sin.approx.f32 $0, $1;";
  case IR_COS: return "cos.approx.f32 $0, $1;";
  case IR_TANH: return "tanh.approx.f32 $0, $1;";
  default: return NULL;
  }
}

/* libdevice's accurate function for the accurate forms whose math.* op
 * Triton lowers to a hardware approximation (math.exp, math.log, ...) or
 * not at all (math.tanh); NULL where the math op is already accurate
 * enough and matches the code generator (exp2, sqrt, rsqrt, erf). */
static const char *libdevice_name(teeny_opcode code, bool f64) {
  switch (code) {
  case IR_EXP: return f64 ? "__nv_exp" : "__nv_expf";
  case IR_LOG: return f64 ? "__nv_log" : "__nv_logf";
  case IR_LOG2: return f64 ? "__nv_log2" : "__nv_log2f";
  case IR_SIN: return f64 ? "__nv_sin" : "__nv_sinf";
  case IR_COS: return f64 ? "__nv_cos" : "__nv_cosf";
  case IR_TANH: return f64 ? "__nv_tanh" : "__nv_tanhf";
  case IR_ERFC: return f64 ? "__nv_erfc" : "__nv_erfcf";
  case IR_LOG1P: return f64 ? "__nv_log1p" : "__nv_log1pf";
  case IR_EXPM1: return f64 ? "__nv_expm1" : "__nv_expm1f";
  case IR_POW: return f64 ? "__nv_pow" : "__nv_powf";
  case IR_ASIN: return f64 ? "__nv_asin" : "__nv_asinf";
  case IR_ACOS: return f64 ? "__nv_acos" : "__nv_acosf";
  case IR_ATAN: return f64 ? "__nv_atan" : "__nv_atanf";
  case IR_ATAN2: return f64 ? "__nv_atan2" : "__nv_atan2f";
  default: return NULL;
  }
}

/* One float math op on f32/f64 operands a[0..n): fast forms as inline PTX,
 * accurate ones through libdevice where Triton's math.* lowering would be
 * approximate (docs/dsl.md §5, accuracy). */
static void emit_math(printer *p, const teeny_op *op, val r, const val *a, int n) {
  const char *lib = libdevice_name(op->code, r.type.dt == TEENY_DT_F64);
  char props[160];
  if (op->fast && fast_asm(op->code)) {
    snprintf(props, sizeof props,
             "asm_string = \"%s\", constraints = \"=f,f\", packed_element = 1 : i32, "
             "pure = true", fast_asm(op->code));
    emit_generic(p, op, &r, 1, "tt.elementwise_inline_asm", a, 1, props);
  } else if (lib) {
    snprintf(props, sizeof props,
             "libname = \"\", libpath = \"\", pure = true, symbol = \"%s\"", lib);
    emit_generic(p, op, &r, 1, "tt.extern_elementwise", a, n, props);
  } else if (n == 2 && (op->fast || r.type.dt == TEENY_DT_F64)) {
    emit_binary(p, op, r, "arith.divf", a[0], a[1]); /* Triton: div.full (f32), div.rn (f64) */
  } else if (n == 2) { /* `/` is correctly rounded: Triton's precise division */
    emit_generic(p, op, &r, 1, "tt.precise_divf", a, 2, NULL);
  } else {
    emit_unary(p, op, r, math_mnemonic(op->code), a[0]);
  }
}

/* Transcendentals and division: f16/bf16 are computed in f32 and rounded
 * (docs/dsl.md; Triton 3.6 also cannot lower f16 divf).  Rounding an f32
 * quotient or square root to f16 is still correctly rounded. */
static void print_float_math(printer *p, const teeny_op *op) {
  val a[2], r = res(p, op, 0);
  int n = args_of(p, op, a, 2);
  if (!is_half(r.type.dt)) {
    emit_math(p, op, r, a, n);
    return;
  }
  teeny_type wt = teeny__type_with_dtype(r.type, TEENY_DT_F32);
  val w[2];
  for (int i = 0; i < n; i++) {
    w[i] = tmp_of(p, wt);
    emit_cast(p, op, w[i], "arith.extf", a[i]);
  }
  val wr = tmp_of(p, wt);
  emit_math(p, op, wr, w, n);
  emit_cast(p, op, r, "arith.truncf", wr);
}

/* not: x ^ all-ones (true for bool). */
static void print_not(printer *p, const teeny_op *op) {
  val a = arg(p, op, 0), r = res(p, op, 0);
  teeny_scalar ones;
  ones.u = ~UINT64_C(0);
  val m = tmp_const(p, op, a.type, ones);
  emit_binary(p, op, r, "arith.xori", a, m);
}

/* abs: absf / absi; an unsigned value is its own absolute value. */
static void print_abs(printer *p, const teeny_op *op) {
  val a = arg(p, op, 0), r = res(p, op, 0);
  if (teeny__dt_is_float(a.type.dt))
    emit_unary(p, op, r, "math.absf", a);
  else if (is_unsigned_like(a.type.dt))
    emit_cast(p, op, r, "arith.bitcast", a);
  else
    emit_unary(p, op, r, "math.absi", a);
}

static const char *cmp_pred(teeny_cmp_pred pred, teeny_dtype dt) {
  static const char *const fl[] = {"oeq", "une", "olt", "ole", "ogt", "oge"};
  static const char *const sg[] = {"eq", "ne", "slt", "sle", "sgt", "sge"};
  static const char *const us[] = {"eq", "ne", "ult", "ule", "ugt", "uge"};
  if ((int)pred < 0 || pred > CMP_GE)
    pred = CMP_EQ;
  if (teeny__dt_is_float(dt))
    return fl[pred];
  return teeny__dt_is_signed(dt) ? sg[pred] : us[pred];
}

/* cmp: cmpf with ordered predicates (une for !=, true for NaN as in C),
 * cmpi signed or unsigned; pointers compare as their i64 addresses. */
static void print_cmp(printer *p, const teeny_op *op) {
  val a = arg(p, op, 0), b = arg(p, op, 1), r = res(p, op, 0);
  teeny_dtype dt = a.type.dt;
  if (dt == TEENY_DT_PTR) {
    teeny_type it = teeny__type_with_dtype(a.type, TEENY_DT_I64);
    val ia = tmp_of(p, it), ib = tmp_of(p, it);
    emit_generic(p, op, &ia, 1, "tt.ptr_to_int", &a, 1, NULL);
    emit_generic(p, op, &ib, 1, "tt.ptr_to_int", &b, 1, NULL);
    a = ia, b = ib, dt = TEENY_DT_U64;
  }
  const char *mn = teeny__dt_is_float(dt) ? "arith.cmpf" : "arith.cmpi";
  emit_cmp(p, op, r, mn, cmp_pred(op->pred, dt), a, b);
}

/* cast to bool: x != 0 (une for floats, so NaN is true as in C). */
static void print_cast_to_bool(printer *p, const teeny_op *op, val a, val r) {
  val z = tmp_zero(p, op, a.type);
  if (teeny__dt_is_float(a.type.dt))
    emit_cmp(p, op, r, "arith.cmpf", "une", a, z);
  else
    emit_cmp(p, op, r, "arith.cmpi", "ne", a, z);
}

/* tt.fp_to_fp, Triton's conversion to and from fp8 (rtne when it
 * narrows; our rounding saturates, as Triton's lowering on Hopper does). */
static void emit_fp_to_fp(printer *p, const teeny_op *op, val r, val a) {
  bool narrows = teeny__dt_is_fp8(r.type.dt); /* never fp8 -> fp8 (see below) */
  emit_generic(p, op, &r, 1, "tt.fp_to_fp", &a, 1, narrows ? "rounding = 1 : i32" : NULL);
}

/* float -> float: extf/truncf; f16 <-> bf16 goes through f32; fp8 by
 * tt.fp_to_fp (fp8 to fp8 through f32, as the compiler computes it). */
static void print_cast_float(printer *p, const teeny_op *op, val a, val r) {
  int sb = teeny__dt_bits(a.type.dt), db = teeny__dt_bits(r.type.dt);
  if (teeny__dt_is_fp8(a.type.dt) && teeny__dt_is_fp8(r.type.dt)) {
    val w = tmp_of(p, teeny__type_with_dtype(a.type, TEENY_DT_F32));
    emit_fp_to_fp(p, op, w, a);
    emit_fp_to_fp(p, op, r, w);
  } else if (teeny__dt_is_fp8(a.type.dt) || teeny__dt_is_fp8(r.type.dt)) {
    emit_fp_to_fp(p, op, r, a);
  } else if (sb < db) {
    emit_cast(p, op, r, "arith.extf", a);
  } else if (sb > db) {
    emit_cast(p, op, r, "arith.truncf", a);
  } else {
    val w = tmp_of(p, teeny__type_with_dtype(a.type, TEENY_DT_F32));
    emit_cast(p, op, w, "arith.extf", a);
    emit_cast(p, op, r, "arith.truncf", w);
  }
}

/* cast: the arith conversion the two dtypes call for.  Ints extend by the
 * source's signedness; float -> int rounds toward zero (fptosi/fptoui by the
 * target's signedness); same MLIR type (i32 <-> u32, f32 -> f32) is a
 * no-op bitcast. */
static void print_cast(printer *p, const teeny_op *op) {
  val a = arg(p, op, 0), r = res(p, op, 0);
  teeny_dtype s = a.type.dt, d = r.type.dt;
  int sb = teeny__dt_bits(s), db = teeny__dt_bits(d);
  bool sf = teeny__dt_is_float(s), df = teeny__dt_is_float(d);
  if (s == d || (!sf && !df && sb == db && s != TEENY_DT_BOOL && d != TEENY_DT_BOOL))
    emit_cast(p, op, r, "arith.bitcast", a);
  else if (d == TEENY_DT_BOOL)
    print_cast_to_bool(p, op, a, r);
  else if (sf && df)
    print_cast_float(p, op, a, r);
  else if (sf)
    emit_cast(p, op, r, teeny__dt_is_signed(d) ? "arith.fptosi" : "arith.fptoui", a);
  else if (df)
    emit_cast(p, op, r, teeny__dt_is_signed(s) ? "arith.sitofp" : "arith.uitofp", a);
  else if (sb < db)
    emit_cast(p, op, r, teeny__dt_is_signed(s) ? "arith.extsi" : "arith.extui", a);
  else
    emit_cast(p, op, r, "arith.trunci", a);
}

/* Pointer constants (null pointers) go through an i64. */
static void print_const(printer *p, const teeny_op *op) {
  val r = res(p, op, 0);
  if (r.type.dt != TEENY_DT_PTR) {
    emit_const(p, op, r, op->cval);
    return;
  }
  val i = tmp_const(p, op, teeny__type_with_dtype(r.type, TEENY_DT_I64), op->cval);
  emit_generic(p, op, &r, 1, "tt.int_to_ptr", &i, 1, NULL);
}

/* ---- tt ops ------------------------------------------------------------------- */

static void print_axis_op(printer *p, const teeny_op *op, const char *name) {
  char props[48];
  val r = res(p, op, 0), a[1];
  int n = args_of(p, op, a, 1);
  snprintf(props, sizeof props, "axis = %d : i32", op->axis);
  emit_generic(p, op, &r, 1, name, a, n, props);
}

static void print_make_range(printer *p, const teeny_op *op) {
  char props[64];
  val r = res(p, op, 0);
  snprintf(props, sizeof props, "end = %d : i32, start = %d : i32", op->end, op->start);
  emit_generic(p, op, &r, 1, "tt.make_range", NULL, 0, props);
}

/* splat, broadcast, reshape, trans, addptr: operands in, one result out. */
static void print_simple_tt(printer *p, const teeny_op *op, const char *name,
                            const char *props) {
  val a[3], r = res(p, op, 0);
  int n = args_of(p, op, a, 3);
  emit_generic(p, op, &r, 1, name, a, n, props);
}

/* tt.trans with its order (result dim i is source dim order[i]). */
static void print_trans(printer *p, const teeny_op *op) {
  int rank = arg(p, op, 0).type.rank, perm[TEENY_MAX_RANK];
  teeny__ir_trans_perm(op, rank, perm);
  char props[64] = "order = array<i32: ";
  size_t n = strlen(props);
  for (int i = 0; i < rank; i++)
    n += (size_t)snprintf(props + n, sizeof props - n, "%s%d", i ? ", " : "", perm[i]);
  snprintf(props + n, sizeof props - n, ">");
  print_simple_tt(p, op, "tt.trans", props);
}

/* Triton's CacheModifier (NONE 1, CA 2, CG 3, WB 4, CS 5, WT 6, CV 7) and
 * EvictionPolicy (NORMAL 1, EVICT_FIRST 2, EVICT_LAST 3) of op's hints. */
static int tt_cache(const teeny_op *op) {
  static const int v[] = {[TEENY_CACHE_NONE] = TT_CACHE_NONE, [TEENY_CACHE_CA] = 2,
                          [TEENY_CACHE_CG] = 3, [TEENY_CACHE_WB] = 4, [TEENY_CACHE_CS] = 5,
                          [TEENY_CACHE_WT] = 6, [TEENY_CACHE_CV] = 7};
  return v[op->cache];
}

static int tt_evict(const teeny_op *op) {
  return op->evict == TEENY_EVICT_FIRST ? 2 : op->evict == TEENY_EVICT_LAST ? 3 : TT_EVICT_NORMAL;
}

/* Bool memory is i8 memory, as Triton's front end makes it (it never loads
 * or stores through !tt.ptr<i1>, and its lowering of one aborts): the
 * pointer bit-cast to i8 elements, a bool value widened to i8.  Returns
 * whether ptr points at bools; *a is then the i8 pointer. */
static bool bool_memory(printer *p, const teeny_op *op, val *a) {
  if (a->type.pointee != TEENY_DT_BOOL)
    return false;
  teeny_type t = a->type;
  t.pointee = TEENY_DT_I8;
  val ip = tmp_of(p, t);
  emit_generic(p, op, &ip, 1, "tt.bitcast", a, 1, NULL);
  *a = ip;
  return true;
}

static val bool_to_i8(printer *p, const teeny_op *op, val v) {
  val w = tmp_of(p, teeny__type_with_dtype(v.type, TEENY_DT_I8));
  emit_cast(p, op, w, "arith.extui", v);
  return w;
}

/* tt.load: operandSegmentSizes says which of mask and other are present. */
static void print_load(printer *p, const teeny_op *op) {
  char props[200];
  val a[3], r = res(p, op, 0);
  int n = args_of(p, op, a, 3);
  bool bools = bool_memory(p, op, &a[0]);
  if (bools && n >= 3)
    a[2] = bool_to_i8(p, op, a[2]);
  snprintf(props, sizeof props,
           "boundaryCheck = array<i32>, cache = %d : i32, evict = %d : i32, "
           "isVolatile = false, operandSegmentSizes = array<i32: 1, %d, %d>",
           tt_cache(op), tt_evict(op), n >= 2, n >= 3);
  if (!bools) {
    emit_generic(p, op, &r, 1, "tt.load", a, n, props);
    return;
  }
  val w = tmp_of(p, teeny__type_with_dtype(r.type, TEENY_DT_I8));
  emit_generic(p, op, &w, 1, "tt.load", a, n, props);
  emit_cmp(p, op, r, "arith.cmpi", "ne", w, tmp_zero(p, op, w.type));
}

static void print_store(printer *p, const teeny_op *op) {
  char props[120];
  val a[3];
  int n = args_of(p, op, a, 3);
  if (bool_memory(p, op, &a[0]))
    a[1] = bool_to_i8(p, op, a[1]);
  snprintf(props, sizeof props,
           "boundaryCheck = array<i32>, cache = %d : i32, evict = %d : i32",
           tt_cache(op), tt_evict(op));
  emit_generic(p, op, NULL, 0, "tt.store", a, n, props);
}

/* An atomic's sem and scope as Triton's enum values. */
static int tt_sem(const teeny_op *op) {
  static const int v[] = {TT_SEM_ACQ_REL, TT_SEM_RELAXED, TT_SEM_ACQUIRE, TT_SEM_RELEASE};
  return v[op->sem];
}

static int tt_scope(const teeny_op *op) {
  static const int v[] = {TT_SCOPE_GPU, TT_SCOPE_CTA, TT_SCOPE_SYS};
  return v[op->scope];
}

static void emit_rmw(printer *p, const teeny_op *op, val r, int kind,
                     const val *a, int n) {
  char props[96];
  snprintf(props, sizeof props, "atomic_rmw_op = %d : i32, scope = %d : i32, sem = %d : i32",
           kind, tt_scope(op), tt_sem(op));
  emit_generic(p, op, &r, 1, "tt.atomic_rmw", a, n, props);
}

/* Float atomic max/min have no hardware instruction; like tl.atomic_max,
 * split by sign: on the int bits, max is a signed max where the value is
 * non-negative and an unsigned min where it is negative (min: signed min /
 * unsigned max). */
static void print_atomic_float_minmax(printer *p, const teeny_op *op, val ptr,
                                      val v, int nargs) {
  teeny_dtype it = teeny__dt_bits(v.type.dt) == 64 ? TEENY_DT_I64 : TEENY_DT_I32;
  teeny_type ity = teeny__type_with_dtype(v.type, it);
  teeny_type bty = teeny__type_with_dtype(v.type, TEENY_DT_BOOL);
  teeny_type ipty = ptr.type;
  ipty.pointee = it;
  val iptr = tmp_of(p, ipty), iv = tmp_of(p, ity);
  emit_generic(p, op, &iptr, 1, "tt.bitcast", &ptr, 1, NULL);
  emit_generic(p, op, &iv, 1, "tt.bitcast", &v, 1, NULL);
  val zero = tmp_zero(p, op, ity);
  val pos = tmp_of(p, bty), neg = tmp_of(p, bty);
  emit_cmp(p, op, pos, "arith.cmpi", "sge", iv, zero);
  emit_cmp(p, op, neg, "arith.cmpi", "slt", iv, zero);
  val pmask = pos, nmask = neg;
  if (nargs == 3) {
    val m = arg(p, op, 2);
    pmask = tmp_of(p, bty), nmask = tmp_of(p, bty);
    emit_binary(p, op, pmask, "arith.andi", m, pos);
    emit_binary(p, op, nmask, "arith.andi", m, neg);
  }
  bool max = op->rmw == RMW_MAX;
  val pr = tmp_of(p, ity), nr = tmp_of(p, ity), sel = tmp_of(p, ity);
  emit_rmw(p, op, pr, max ? TT_RMW_MAX : TT_RMW_MIN, (val[]){iptr, iv, pmask}, 3);
  emit_rmw(p, op, nr, max ? TT_RMW_UMIN : TT_RMW_UMAX, (val[]){iptr, iv, nmask}, 3);
  emit_select(p, op, sel, pos, pr, nr);
  val r = res(p, op, 0);
  emit_generic(p, op, &r, 1, "tt.bitcast", &sel, 1, NULL);
}

static void print_atomic_rmw(printer *p, const teeny_op *op) {
  val a[3], r = res(p, op, 0);
  int n = args_of(p, op, a, 3);
  teeny_dtype dt = a[1].type.dt;
  bool fl = teeny__dt_is_float(dt), us = is_unsigned_like(dt);
  int kind;
  switch (op->rmw) {
  case RMW_ADD:
    kind = fl ? TT_RMW_FADD : TT_RMW_ADD;
    break;
  case RMW_MAX:
  case RMW_MIN:
    if (fl && teeny__dt_bits(dt) >= 32) {
      print_atomic_float_minmax(p, op, a[0], a[1], n);
      return;
    }
    if (op->rmw == RMW_MAX)
      kind = us ? TT_RMW_UMAX : TT_RMW_MAX;
    else
      kind = us ? TT_RMW_UMIN : TT_RMW_MIN;
    break;
  case RMW_AND: kind = TT_RMW_AND; break;
  case RMW_OR: kind = TT_RMW_OR; break;
  case RMW_XOR: kind = TT_RMW_XOR; break;
  default:
    kind = TT_RMW_XCHG;
    break;
  }
  emit_rmw(p, op, r, kind, a, n);
}

/* A masked atomic_cas has no TTIR form (Triton's atomic_cas takes no
 * mask, and a CAS on a masked-off lane's address may be out of bounds), so
 * it prints as teeny.atomic_cas with the mask as its fourth operand. */
static void print_atomic_cas(printer *p, const teeny_op *op) {
  char props[48];
  val a[4], r = res(p, op, 0);
  int n = args_of(p, op, a, 4);
  snprintf(props, sizeof props, "scope = %d : i32, sem = %d : i32", tt_scope(op),
           tt_sem(op));
  emit_generic(p, op, &r, 1, n == 4 ? "teeny.atomic_cas" : "tt.atomic_cas", a, n, props);
}

/* tt.gather: Triton's op (an index out of range is undefined there; 0 here). */
static void print_gather(printer *p, const teeny_op *op) {
  char props[40];
  val a[2], r = res(p, op, 0);
  int n = args_of(p, op, a, 2);
  snprintf(props, sizeof props, "axis = %d : i32", op->axis);
  emit_generic(p, op, &r, 1, "tt.gather", a, n, props);
}

/* tt.histogram: Triton's op of the same meaning for values in range (the
 * front end turns the others, and masked-off ones, into -1). */
static void print_histogram(printer *p, const teeny_op *op) {
  val a[1], r = res(p, op, 0);
  int n = args_of(p, op, a, 1);
  emit_generic(p, op, &r, 1, "tt.histogram", a, n, NULL);
}

static void print_barrier(printer *p, const teeny_op *op) {
  line_begin(p, NULL, 0);
  teeny__buf_puts(p->out, "gpu.barrier");
  line_end(p, op);
}

/* device_print as tt.print: Triton formats the values itself, so the
 * format goes in as the prefix, verbatim. */
static void print_print(printer *p, const teeny_op *op) {
  teeny_buf props;
  teeny__buf_init(&props);
  teeny__buf_puts(&props, "hex = false, isSigned = array<i32");
  for (int i = 0; i < op->nargs; i++) {
    teeny_dtype dt = arg(p, op, i).type.dt;
    teeny__buf_printf(&props, "%s %d", i ? "," : ":",
                      teeny__dt_is_int(dt) && teeny__dt_is_signed(dt));
  }
  teeny__buf_puts(&props, ">, prefix = ");
  put_string(&props, op->str ? op->str : "");
  op_begin(p, op);
  teeny__buf_puts(p->out, "\"tt.print\"(");
  put_arg_names(p, op, 0);
  teeny__buf_printf(p->out, ") <{%s}> : (", props.p ? props.p : "");
  put_arg_types(p, op, 0);
  teeny__buf_puts(p->out, ") -> ()");
  line_end(p, op);
  teeny__buf_free(&props);
}

/* device_assert as tt.assert: its condition and message (tt.assert has
 * no values to show). */
static void print_assert(printer *p, const teeny_op *op) {
  teeny_buf msg;
  teeny__buf_init(&msg);
  put_string(&msg, op->str ? op->str : "");
  val c = arg(p, op, 0);
  op_begin(p, op);
  teeny__buf_printf(p->out, "\"tt.assert\"(%s) <{message = %s}> : (", c.name,
                    msg.p ? msg.p : "\"\"");
  put_type(p, c.type);
  teeny__buf_puts(p->out, ") -> ()");
  line_end(p, op);
  teeny__buf_free(&msg);
}

static void print_dot(printer *p, const teeny_op *op) {
  char props[80];
  val a[3], r = res(p, op, 0);
  int n = args_of(p, op, a, 3);
  static const int prec[] = {TT_PRECISION_TF32, TT_PRECISION_TF32X3, TT_PRECISION_IEEE};
  snprintf(props, sizeof props, "inputPrecision = %d : i32, maxNumImpreciseAcc = 0 : i32",
           prec[op->prec]);
  emit_generic(p, op, &r, 1, "tt.dot", a, n, props);
}

/* ---- regions ------------------------------------------------------------------- */

/* "^bb0(%a: T, ...):" one level left of the ops it heads. */
static void print_block_header(printer *p, const teeny_region *r) {
  teeny__buf_printf(p->out, "%*s^bb0(", p->indent > 2 ? p->indent - 2 : 0, "");
  for (int i = 0; i < r->nargs; i++) {
    val v = value_of(p, r->args[i]);
    teeny__buf_printf(p->out, "%s%s: ", i ? ", " : "", v.name);
    put_type(p, v.type);
  }
  teeny__buf_puts(p->out, "):\n");
}

/* The ops of r, one level deeper than the op that owns it. */
static void print_nested(printer *p, const teeny_region *r, teeny_opcode owner,
                         bool header) {
  p->indent += 2;
  if (header && r->nargs)
    print_block_header(p, r);
  print_region_ops(p, r, owner);
  p->indent -= 2;
}

/* tt.reduce / tt.scan: %r = "tt.reduce"(%x) <{axis}> ({ ^bb0(...): ... }) : (T) -> R */
static void print_combine(printer *p, const teeny_op *op) {
  bool scan = op->code == IR_SCAN;
  op_begin(p, op);
  teeny__buf_printf(p->out, "\"%s\"(", scan ? "tt.scan" : "tt.reduce");
  put_arg_names(p, op, 0);
  teeny__buf_printf(p->out, ") <{axis = %d : i32", op->axis);
  if (scan)
    teeny__buf_printf(p->out, ", reverse = %s", op->reverse ? "true" : "false");
  teeny__buf_puts(p->out, "}> ({\n");
  if (op->nregions > 0 && op->regions[0]) {
    p->indent += 2;
    print_block_header(p, op->regions[0]);
    print_region_ops(p, op->regions[0], op->code);
    p->indent -= 2;
  }
  teeny__buf_printf(p->out, "%*s}) : (", p->indent, "");
  put_arg_types(p, op, 0);
  teeny__buf_puts(p->out, ") -> ");
  put_res_types(p, op);
  line_end(p, op);
}

/* " -> (T1, T2)" for scf ops, which always parenthesise */
static void put_result_types(printer *p, const teeny_op *op) {
  teeny__buf_puts(p->out, " -> (");
  for (int i = 0; i < op->nres; i++) {
    if (i)
      teeny__buf_puts(p->out, ", ");
    put_type(p, res(p, op, i).type);
  }
  teeny__buf_putc(p->out, ')');
}

/* scf.if %c [-> (T...)] { ... } else { ... } */
static void print_if(printer *p, const teeny_op *op) {
  op_begin(p, op);
  teeny__buf_printf(p->out, "scf.if %s", arg(p, op, 0).name);
  if (op->nres)
    put_result_types(p, op);
  teeny__buf_puts(p->out, " {\n");
  if (op->nregions > 0 && op->regions[0])
    print_nested(p, op->regions[0], IR_IF, false);
  teeny__buf_printf(p->out, "%*s} else {\n", p->indent, "");
  if (op->nregions > 1 && op->regions[1])
    print_nested(p, op->regions[1], IR_IF, false);
  teeny__buf_printf(p->out, "%*s}", p->indent, "");
  line_end(p, op);
}

/* scf.for %iv = %lb to %ub step %s [iter_args(%a = %init, ...) -> (T...)] : Tiv {
 * The body's first argument is the induction variable, the rest are the
 * carried values. */
static void print_for(printer *p, const teeny_op *op) {
  const teeny_region *body = op->nregions > 0 ? op->regions[0] : NULL;
  if (!body || body->nargs != op->nargs - 2)
    return; /* not verified IR; nothing sensible to print */
  op_begin(p, op);
  val iv = value_of(p, body->args[0]);
  teeny__buf_printf(p->out, "scf.for %s = %s to %s step %s", iv.name, arg(p, op, 0).name,
                    arg(p, op, 1).name, arg(p, op, 2).name);
  if (op->nargs > 3) {
    teeny__buf_puts(p->out, " iter_args(");
    for (int i = 3; i < op->nargs; i++)
      teeny__buf_printf(p->out, "%s%s = %s", i > 3 ? ", " : "",
                        value_of(p, body->args[i - 2]).name, arg(p, op, i).name);
    teeny__buf_putc(p->out, ')');
    put_result_types(p, op);
  }
  teeny__buf_puts(p->out, " : ");
  put_type(p, iv.type);
  teeny__buf_puts(p->out, " {\n");
  print_nested(p, body, IR_FOR, false);
  teeny__buf_printf(p->out, "%*s}", p->indent, "");
  line_end(p, op);
}

/* scf.while (%b = %init, ...) : (T...) -> (R...) { before } do { ^bb0(...): after } */
static void print_while(printer *p, const teeny_op *op) {
  const teeny_region *before = op->nregions > 0 ? op->regions[0] : NULL;
  const teeny_region *after = op->nregions > 1 ? op->regions[1] : NULL;
  if (!before || !after || before->nargs != op->nargs)
    return; /* not verified IR */
  op_begin(p, op);
  teeny__buf_puts(p->out, "scf.while ");
  if (op->nargs) {
    teeny__buf_putc(p->out, '(');
    for (int i = 0; i < op->nargs; i++)
      teeny__buf_printf(p->out, "%s%s = %s", i ? ", " : "",
                        value_of(p, before->args[i]).name, arg(p, op, i).name);
    teeny__buf_puts(p->out, ") ");
  }
  teeny__buf_puts(p->out, ": (");
  for (int i = 0; i < op->nargs; i++) {
    if (i)
      teeny__buf_puts(p->out, ", ");
    put_type(p, arg(p, op, i).type);
  }
  teeny__buf_putc(p->out, ')');
  put_result_types(p, op);
  teeny__buf_puts(p->out, " {\n");
  print_nested(p, before, IR_WHILE, false);
  teeny__buf_printf(p->out, "%*s} do {\n", p->indent, "");
  print_nested(p, after, IR_WHILE, true);
  teeny__buf_printf(p->out, "%*s}", p->indent, "");
  line_end(p, op);
}

/* yield: the terminator of the owner's region. */
static void print_yield(printer *p, const teeny_op *op, teeny_opcode owner) {
  if (owner == IR_REDUCE || owner == IR_SCAN) {
    emit_generic_op(p, op, owner == IR_SCAN ? "tt.scan.return" : "tt.reduce.return");
    return;
  }
  teeny__buf_printf(p->out, "%*sscf.yield", p->indent, "");
  if (op->nargs) {
    teeny__buf_putc(p->out, ' ');
    put_arg_names(p, op, 0);
    teeny__buf_puts(p->out, " : ");
    put_arg_types(p, op, 0);
  }
  line_end(p, op);
}

/* condition: scf.condition(%c) %fwd... : T... */
static void print_condition(printer *p, const teeny_op *op) {
  if (op->nargs < 1)
    return; /* not verified IR */
  teeny__buf_printf(p->out, "%*sscf.condition(%s)", p->indent, "", arg(p, op, 0).name);
  if (op->nargs > 1) {
    teeny__buf_putc(p->out, ' ');
    put_arg_names(p, op, 1);
    teeny__buf_puts(p->out, " : ");
    put_arg_types(p, op, 1);
  }
  line_end(p, op);
}

/* An opcode this printer does not know: still parseable, fails in Triton. */
static void print_unknown(printer *p, const teeny_op *op) {
  char name[48];
  snprintf(name, sizeof name, "teeny.%s", teeny__opcode_name(op->code));
  emit_generic_op(p, op, name);
}

/* ---- the op switch ---------------------------------------------------------------- */

static void print_op(printer *p, const teeny_op *op, teeny_opcode owner) {
  switch (op->code) {
  case IR_CONST:
    print_const(p, op);
    return;
  case IR_PROGRAM_ID:
    print_axis_op(p, op, "tt.get_program_id");
    return;
  case IR_NUM_PROGRAMS:
    print_axis_op(p, op, "tt.get_num_programs");
    return;
  case IR_MAKE_RANGE:
    print_make_range(p, op);
    return;
  case IR_SPLAT:
    print_simple_tt(p, op, "tt.splat", NULL);
    return;
  case IR_BROADCAST:
    print_simple_tt(p, op, "tt.broadcast", NULL);
    return;
  case IR_EXPAND_DIMS:
    print_axis_op(p, op, "tt.expand_dims");
    return;
  case IR_RESHAPE:
    print_simple_tt(p, op, "tt.reshape", NULL);
    return;
  case IR_TRANS:
    print_trans(p, op);
    return;
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM:
  case IR_AND: case IR_OR: case IR_XOR: case IR_SHL: case IR_SHR:
  case IR_MIN: case IR_MAX: {
    val a = arg(p, op, 0);
    if (op->code == IR_DIV && teeny__dt_is_float(a.type.dt)) {
      print_float_math(p, op);
      return;
    }
    emit_binary(p, op, res(p, op, 0), binary_mnemonic(op->code, a.type.dt), a,
                arg(p, op, 1));
    return;
  }
  case IR_NEG:
    print_neg(p, op);
    return;
  case IR_NOT:
    print_not(p, op);
    return;
  case IR_CMP:
    print_cmp(p, op);
    return;
  case IR_SELECT:
    emit_select(p, op, res(p, op, 0), arg(p, op, 0), arg(p, op, 1), arg(p, op, 2));
    return;
  case IR_CAST:
    print_cast(p, op);
    return;
  case IR_EXP: case IR_EXP2: case IR_LOG: case IR_LOG2: case IR_SQRT:
  case IR_RSQRT: case IR_SIN: case IR_COS: case IR_TANH: case IR_ERF:
  case IR_ERFC: case IR_LOG1P: case IR_EXPM1: case IR_POW:
  case IR_ASIN: case IR_ACOS: case IR_ATAN: case IR_ATAN2:
    print_float_math(p, op);
    return;
  case IR_FLOOR: case IR_CEIL: /* exact in any precision */
    emit_unary(p, op, res(p, op, 0), math_mnemonic(op->code), arg(p, op, 0));
    return;
  case IR_ABS:
    print_abs(p, op);
    return;
  case IR_UMULHI:
    print_simple_tt(p, op, "tt.mulhiui", NULL);
    return;
  case IR_INTTOPTR:
    print_simple_tt(p, op, "tt.int_to_ptr", NULL);
    return;
  case IR_PTRTOINT:
    print_simple_tt(p, op, "tt.ptr_to_int", NULL);
    return;
  case IR_PTRCAST:
    print_simple_tt(p, op, "tt.bitcast", NULL);
    return;
  case IR_BITCAST:
    print_simple_tt(p, op, "tt.bitcast", NULL);
    return;
  case IR_FMA: {
    val r = res(p, op, 0);
    line_begin(p, &r, 1);
    teeny__buf_printf(p->out, "math.fma %s, %s, %s : ", arg(p, op, 0).name,
                      arg(p, op, 1).name, arg(p, op, 2).name);
    put_type(p, r.type);
    line_end(p, op);
    return;
  }
  case IR_ADDPTR:
    print_simple_tt(p, op, "tt.addptr", NULL);
    return;
  case IR_LOAD:
    print_load(p, op);
    return;
  case IR_STORE:
    print_store(p, op);
    return;
  case IR_ATOMIC_RMW:
    print_atomic_rmw(p, op);
    return;
  case IR_ATOMIC_CAS:
    print_atomic_cas(p, op);
    return;
  case IR_BARRIER:
    print_barrier(p, op);
    return;
  case IR_PRINT:
    print_print(p, op);
    return;
  case IR_ASSERT:
    print_assert(p, op);
    return;
  case IR_REDUCE:
  case IR_SCAN:
    print_combine(p, op);
    return;
  case IR_DOT:
    print_dot(p, op);
    return;
  case IR_HISTOGRAM:
    print_histogram(p, op);
    return;
  case IR_GATHER:
    print_gather(p, op);
    return;
  case IR_IF:
    print_if(p, op);
    return;
  case IR_FOR:
    print_for(p, op);
    return;
  case IR_WHILE:
    print_while(p, op);
    return;
  case IR_YIELD:
    print_yield(p, op, owner);
    return;
  case IR_CONDITION:
    print_condition(p, op);
    return;
  case IR_RETURN:
    emit_generic_op(p, op, "tt.return");
    return;
  default:
    print_unknown(p, op);
    return;
  }
}

static void print_region_ops(printer *p, const teeny_region *r, teeny_opcode owner) {
  for (int i = 0; i < r->nops; i++)
    print_op(p, r->ops[i], owner);
}

/* ---- the function ---------------------------------------------------------------- */

static bool is_ptr_param(teeny_type t) {
  return t.rank == 0 && t.dt == TEENY_DT_PTR;
}

/* <{arg_attrs = [...], function_type = (...) -> (), sym_name, sym_visibility}> */
static void print_func_props(printer *p) {
  const teeny_ir_func *f = p->f;
  teeny__buf_puts(p->out, "<{");
  if (f->nparams) {
    teeny__buf_puts(p->out, "arg_attrs = [");
    for (int i = 0; i < f->nparams; i++)
      teeny__buf_printf(p->out, "%s%s", i ? ", " : "",
                        is_ptr_param(f->values[f->body->args[i]].type)
                            ? "{tt.divisibility = 16 : i32}" : "{}");
    teeny__buf_puts(p->out, "], ");
  }
  teeny__buf_puts(p->out, "function_type = (");
  for (int i = 0; i < f->nparams; i++) {
    if (i)
      teeny__buf_puts(p->out, ", ");
    put_type(p, f->values[f->body->args[i]].type);
  }
  teeny__buf_puts(p->out, ") -> (), sym_name = ");
  put_string(p->out, f->name ? f->name : "kernel");
  teeny__buf_puts(p->out, ", sym_visibility = \"public\"}>");
}

static void print_module(teeny_buf *out, const teeny_ir_func *f, const char *file) {
  printer p = {out, f, file, 0, 0};
  teeny__buf_puts(out, "module {\n  \"tt.func\"() ");
  print_func_props(&p);
  teeny__buf_puts(out, " ({\n");
  p.indent = 4;
  if (f->body->nargs)
    print_block_header(&p, f->body);
  print_region_ops(&p, f->body, IR__COUNT);
  teeny__buf_puts(out, "  }) : () -> ()\n}\n");
}

void teeny__mlir_print(teeny_buf *out, const teeny_ir_func *f) {
  print_module(out, f, NULL);
}

void teeny__mlir_print_loc(teeny_buf *out, const teeny_ir_func *f, const char *file) {
  print_module(out, f, file);
}
