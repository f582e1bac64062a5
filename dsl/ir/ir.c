/*
 * dsl/ir/ir.c — the tile IR: types, the builder and a dump.
 *
 * The data structures are in dsl/ir/ir.h; the verifier (the IR's contract)
 * is dsl/ir/verify.c.  Everything lives in the function's arena.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/ir/ir.h"

/* ---- types ------------------------------------------------------------------ */

teeny_type teeny__type_scalar(teeny_dtype dt) {
  teeny_type t;
  memset(&t, 0, sizeof t);
  t.dt = dt;
  return t;
}

teeny_type teeny__type_ptr(teeny_dtype pointee) {
  teeny_type t = teeny__type_scalar(TEENY_DT_PTR);
  t.pointee = pointee;
  return t;
}

teeny_type teeny__type_tile(teeny_dtype dt, int rank, const int *shape) {
  return teeny__type_with_shape(teeny__type_scalar(dt), rank, shape);
}

teeny_type teeny__type_with_dtype(teeny_type t, teeny_dtype dt) {
  t.dt = dt;
  if (dt != TEENY_DT_PTR)
    t.pointee = TEENY_DT_VOID;
  return t;
}

teeny_type teeny__type_with_shape(teeny_type t, int rank, const int *shape) {
  memset(t.shape, 0, sizeof t.shape);
  t.rank = rank;
  for (int i = 0; i < rank; i++)
    t.shape[i] = shape[i];
  return t;
}

bool teeny__type_eq(teeny_type a, teeny_type b) {
  if (a.dt != b.dt || a.rank != b.rank)
    return false;
  if (a.dt == TEENY_DT_PTR && a.pointee != b.pointee)
    return false;
  for (int i = 0; i < a.rank; i++)
    if (a.shape[i] != b.shape[i])
      return false;
  return true;
}

long teeny__type_numel(teeny_type t) {
  long n = 1;
  for (int i = 0; i < t.rank; i++)
    n *= t.shape[i];
  return n;
}

static const char *mlir_elem_name(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL:
    return "i1";
  case TEENY_DT_I8:
  case TEENY_DT_U8:
    return "i8";
  case TEENY_DT_I16:
  case TEENY_DT_U16:
    return "i16";
  case TEENY_DT_I32:
  case TEENY_DT_U32:
    return "i32";
  case TEENY_DT_I64:
  case TEENY_DT_U64:
    return "i64";
  case TEENY_DT_F16:
    return "f16";
  case TEENY_DT_BF16:
    return "bf16";
  case TEENY_DT_F32:
    return "f32";
  case TEENY_DT_F64:
    return "f64";
  case TEENY_DT_F8E4M3:
    return "f8E4M3FN";
  case TEENY_DT_F8E5M2:
    return "f8E5M2";
  default:
    return "none";
  }
}

static void print_mlir_elem(teeny_buf *b, teeny_type t) {
  if (t.dt == TEENY_DT_PTR)
    teeny__buf_printf(b, "!tt.ptr<%s>", mlir_elem_name(t.pointee));
  else
    teeny__buf_puts(b, mlir_elem_name(t.dt));
}

void teeny__type_print_mlir(teeny_buf *b, teeny_type t) {
  if (t.rank == 0) {
    print_mlir_elem(b, t);
    return;
  }
  teeny__buf_puts(b, "tensor<");
  for (int i = 0; i < t.rank; i++)
    teeny__buf_printf(b, "%dx", t.shape[i]);
  print_mlir_elem(b, t);
  teeny__buf_putc(b, '>');
}

const char *teeny__type_str(teeny_arena *a, teeny_type t) {
  char elem[32];
  if (t.dt == TEENY_DT_PTR)
    snprintf(elem, sizeof elem, "ptr(%s)", teeny_dtype_name(t.pointee));
  else
    snprintf(elem, sizeof elem, "%s", teeny_dtype_name(t.dt));
  if (t.rank == 0)
    return teeny__arena_strdup(a, elem);
  char dims[64];
  int n = 0;
  for (int i = 0; i < t.rank; i++)
    n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%d", i ? ", " : "", t.shape[i]);
  return teeny__arena_printf(a, "tile(%s)[%s]", elem, dims);
}

void teeny__ir_trans_perm(const teeny_op *op, int rank, int *perm) {
  bool set = false;
  for (int i = 0; i < rank; i++)
    set |= op->perm[i] != 0;
  for (int i = 0; i < rank; i++)
    perm[i] = set ? op->perm[i] : rank - 1 - i;
}

/* ---- building ------------------------------------------------------------------ */

static const char *const opcode_names[IR__COUNT] = {
#define TEENY_OPCODE(id, mnemonic) [IR_##id] = mnemonic,
#include "dsl/ir/opcodes.def"
#undef TEENY_OPCODE
};

const char *teeny__opcode_name(teeny_opcode code) {
  if ((int)code < 0 || code >= IR__COUNT)
    return "?";
  return opcode_names[code];
}

teeny_ir_func *teeny__ir_func_new(teeny_arena *a, const char *name) {
  teeny_ir_func *f = teeny__arena_alloc(a, sizeof *f);
  if (!f)
    return NULL;
  f->arena = a;
  f->name = teeny__arena_strdup(a, name);
  f->num_warps = 4;
  f->body = teeny__ir_region_new(f);
  return f;
}

static int value_new(teeny_ir_func *f, teeny_type t, teeny_op *def) {
  if (f->nvalues == f->cap) {
    int cap = f->cap ? f->cap * 2 : 64;
    teeny_value *v = teeny__arena_realloc(f->arena, f->values,
                                          sizeof *v * (size_t)f->cap,
                                          sizeof *v * (size_t)cap);
    if (!v)
      return -1;
    f->values = v;
    f->cap = cap;
  }
  f->values[f->nvalues].type = t;
  f->values[f->nvalues].def = def;
  return f->nvalues++;
}

teeny_region *teeny__ir_region_new(teeny_ir_func *f) {
  return teeny__arena_alloc(f->arena, sizeof(teeny_region));
}

int teeny__ir_region_arg_add(teeny_ir_func *f, teeny_region *r, teeny_type t) {
  int v = value_new(f, t, NULL);
  if (v < 0)
    return -1;
  int *args = teeny__arena_realloc(f->arena, r->args,
                                   sizeof(int) * (size_t)r->nargs,
                                   sizeof(int) * (size_t)(r->nargs + 1));
  if (!args)
    return -1;
  args[r->nargs++] = v;
  r->args = args;
  return v;
}

int teeny__ir_param_add(teeny_ir_func *f, const char *name, teeny_type t) {
  int v = teeny__ir_region_arg_add(f, f->body, t);
  if (v < 0)
    return -1;
  const char **names = teeny__arena_realloc(
      f->arena, (void *)f->param_names, sizeof(char *) * (size_t)f->nparams,
      sizeof(char *) * (size_t)(f->nparams + 1));
  if (!names)
    return -1;
  names[f->nparams++] = teeny__arena_strdup(f->arena, name);
  f->param_names = names;
  return v;
}

teeny_op *teeny__ir_op_add(teeny_ir_func *f, teeny_region *r, teeny_opcode code,
                           teeny_loc loc, const int *args, int nargs,
                           const teeny_type *restypes, int nres) {
  if (f->nops >= TEENY_MAX_IR_OPS)
    return NULL;
  teeny_op *op = teeny__arena_alloc(f->arena, sizeof *op);
  if (!op)
    return NULL;
  op->code = code;
  op->loc = loc;
  op->axis = 0;
  if (nargs) {
    op->args = teeny__arena_alloc(f->arena, sizeof(int) * (size_t)nargs);
    if (!op->args)
      return NULL;
    memcpy(op->args, args, sizeof(int) * (size_t)nargs);
  }
  op->nargs = nargs;
  if (nres) {
    op->res = teeny__arena_alloc(f->arena, sizeof(int) * (size_t)nres);
    if (!op->res)
      return NULL;
    for (int i = 0; i < nres; i++) {
      op->res[i] = value_new(f, restypes[i], op);
      if (op->res[i] < 0)
        return NULL;
    }
  }
  op->nres = nres;
  if (r->nops == r->cap) {
    int cap = r->cap ? r->cap * 2 : 8;
    teeny_op **ops = teeny__arena_realloc(f->arena, r->ops,
                                          sizeof *ops * (size_t)r->cap,
                                          sizeof *ops * (size_t)cap);
    if (!ops)
      return NULL;
    r->ops = ops;
    r->cap = cap;
  }
  r->ops[r->nops++] = op;
  f->nops++;
  return op;
}

int teeny__ir_const(teeny_ir_func *f, teeny_region *r, teeny_loc loc,
                    teeny_type t, teeny_scalar v) {
  teeny_op *op = teeny__ir_op_add(f, r, IR_CONST, loc, NULL, 0, &t, 1);
  if (!op)
    return -1;
  op->cval = v;
  return op->res[0];
}

int teeny__ir_unary(teeny_ir_func *f, teeny_region *r, teeny_opcode code,
                    teeny_loc loc, int a, teeny_type rt) {
  teeny_op *op = teeny__ir_op_add(f, r, code, loc, &a, 1, &rt, 1);
  return op ? op->res[0] : -1;
}

int teeny__ir_binary(teeny_ir_func *f, teeny_region *r, teeny_opcode code,
                     teeny_loc loc, int a, int b, teeny_type rt) {
  int args[2] = {a, b};
  teeny_op *op = teeny__ir_op_add(f, r, code, loc, args, 2, &rt, 1);
  return op ? op->res[0] : -1;
}

/* ---- dump ------------------------------------------------------------------------------ */

static void dump_region(teeny_buf *b, const teeny_ir_func *f,
                        const teeny_region *r, int indent);

static void dump_op(teeny_buf *b, const teeny_ir_func *f, const teeny_op *op,
                    int indent) {
  teeny__buf_printf(b, "%*s", indent, "");
  for (int i = 0; i < op->nres; i++)
    teeny__buf_printf(b, "%s%%%d", i ? ", " : "", op->res[i]);
  if (op->nres)
    teeny__buf_puts(b, " = ");
  teeny__buf_puts(b, teeny__opcode_name(op->code));
  for (int i = 0; i < op->nargs; i++)
    teeny__buf_printf(b, "%s%%%d", i ? ", " : " ", op->args[i]);
  switch (op->code) {
  case IR_CONST: {
    teeny_dtype dt = f->values[op->res[0]].type.dt;
    if (teeny__dt_is_float(dt))
      teeny__buf_printf(b, " %.17g", op->cval.f);
    else if (dt == TEENY_DT_U64)
      teeny__buf_printf(b, " %llu", (unsigned long long)op->cval.u);
    else
      teeny__buf_printf(b, " %lld", (long long)op->cval.i);
    break;
  }
  case IR_PROGRAM_ID: case IR_NUM_PROGRAMS: case IR_EXPAND_DIMS:
  case IR_GATHER:
    teeny__buf_printf(b, " axis %d", op->axis);
    break;
  case IR_REDUCE: case IR_SCAN:
    teeny__buf_printf(b, " axis=%d", op->axis);
    break;
  case IR_TRANS: {
    int rank = f->values[op->args[0]].type.rank, perm[TEENY_MAX_RANK];
    teeny__ir_trans_perm(op, rank, perm);
    if (rank > 2)
      for (int i = 0; i < rank; i++)
        teeny__buf_printf(b, "%s%d", i ? "," : " order ", perm[i]);
    break;
  }
  case IR_MAKE_RANGE:
    teeny__buf_printf(b, " [%d, %d)", op->start, op->end);
    break;
  case IR_CMP: {
    static const char *p[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    teeny__buf_printf(b, " %s", p[op->pred]);
    break;
  }
  case IR_ATOMIC_RMW:
  case IR_ATOMIC_CAS: {
    static const char *k[] = {"add", "max", "min", "xchg", "and", "or", "xor"};
    static const char *sem[] = {"acq_rel", "relaxed", "acquire", "release"};
    static const char *scope[] = {"gpu", "cta", "sys"};
    if (op->code == IR_ATOMIC_RMW)
      teeny__buf_printf(b, " %s", k[op->rmw]);
    teeny__buf_printf(b, " %s %s", sem[op->sem], scope[op->scope]);
    break;
  }
  case IR_LOAD:
  case IR_STORE: {
    static const char *cache[] = {"", "ca", "cg", "cs", "cv", "wb", "wt"};
    static const char *evict[] = {"", "evict_normal", "evict_first", "evict_last"};
    if (op->cache)
      teeny__buf_printf(b, " %s", cache[op->cache]);
    if (op->evict)
      teeny__buf_printf(b, " %s", evict[op->evict]);
    break;
  }
  case IR_DOT: {
    static const char *prec[] = {"tf32", "tf32x3", "ieee"};
    if (op->prec)
      teeny__buf_printf(b, " %s", prec[op->prec]);
    break;
  }
  case IR_PRINT:
  case IR_ASSERT: /* the format, bytes outside printable ASCII as \xHH */
    teeny__buf_puts(b, " \"");
    for (const char *c = op->str ? op->str : ""; *c; c++)
      if (*c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\')
        teeny__buf_putc(b, *c);
      else
        teeny__buf_printf(b, "\\x%02x", (unsigned char)*c);
    teeny__buf_putc(b, '"');
    break;
  default:
    if (op->fast)
      teeny__buf_puts(b, " fast");
    break;
  }
  if (op->nres) {
    teeny__buf_puts(b, " :");
    for (int i = 0; i < op->nres; i++) {
      teeny__buf_putc(b, ' ');
      teeny__type_print_mlir(b, f->values[op->res[i]].type);
    }
  }
  teeny__buf_putc(b, '\n');
  for (int k = 0; k < op->nregions; k++)
    if (op->regions[k]) {
      teeny__buf_printf(b, "%*s{", indent + 2, "");
      for (int i = 0; i < op->regions[k]->nargs; i++)
        teeny__buf_printf(b, "%s%%%d", i ? ", " : " ^(", op->regions[k]->args[i]);
      teeny__buf_puts(b, op->regions[k]->nargs ? ")\n" : "\n");
      dump_region(b, f, op->regions[k], indent + 4);
      teeny__buf_printf(b, "%*s}\n", indent + 2, "");
    }
}

static void dump_region(teeny_buf *b, const teeny_ir_func *f,
                        const teeny_region *r, int indent) {
  for (int i = 0; i < r->nops; i++)
    dump_op(b, f, r->ops[i], indent);
}

void teeny__ir_dump(teeny_buf *b, const teeny_ir_func *f) {
  teeny__buf_printf(b, "func %s(", f->name);
  for (int i = 0; i < f->nparams; i++) {
    teeny__buf_printf(b, "%s%%%d ", i ? ", " : "", f->body->args[i]);
    teeny__type_print_mlir(b, f->values[f->body->args[i]].type);
    teeny__buf_printf(b, " %s", f->param_names[i]);
  }
  teeny__buf_puts(b, ")\n");
  dump_region(b, f, f->body, 2);
}
