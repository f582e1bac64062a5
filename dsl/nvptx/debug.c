/*
 * dsl/nvptx/debug.c — device_print and device_assert (IR_PRINT, IR_ASSERT)
 * on the GPU: lines through the CUDA printf buffer (PTX's vprintf system
 * call: a format and a buffer of the arguments, each aligned to its size),
 * and failed assertions through __assertfail, which stops the grid.  The
 * host emulator gets the same buffers through its runtime (emu.c).
 *
 * Every element is printed (or checked) by the thread that holds it first
 * (a layout may hold an element in several threads), in one branch per
 * register, so a line is never printed twice; a print of scalars alone is
 * thread 0's.  The line is "pid (x, y, z) [idx (i[, j]) ]" and the user's
 * format rewritten for vprintf (dsl/ir/format.c), ending in one newline:
 * the interpreter writes the same text, in element order (the GPU's order
 * between threads is its own).  A failed assertion prints "file:line:
 * pid (...) idx (...) device_assert failed: message" first.  These are
 * debugging ops: no barrier, and no memory the memory model orders.
 */
#include <string.h>

#include "dsl/nvptx/codegen.h"

/* A NUL-terminated constant string, as a generic pointer. */
static LLVMValueRef cstring(cg *g, const char *s) {
  LLVMValueRef init = LLVMConstStringInContext(g->ctx, s, (unsigned)strlen(s), 0);
  LLVMValueRef gv = LLVMAddGlobalInAddressSpace(g->mod, LLVMTypeOf(init), "teeny_str",
                                                g->emu ? 0 : 1);
  LLVMSetInitializer(gv, init);
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetLinkage(gv, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
  if (g->emu)
    return gv;
  return LLVMConstAddrSpaceCast(gv, LLVMPointerTypeInContext(g->ctx, 0));
}

/* One printf argument: the value v of dtype dt as its teeny_fmt_arg. */
static LLVMValueRef as_arg(cg *g, LLVMValueRef v, teeny_dtype dt) {
  switch (teeny__fmt_arg(dt)) {
  case TEENY_FMT_F64: return teeny__cg_cast(g, v, dt, TEENY_DT_F64);
  case TEENY_FMT_PTR: return LLVMBuildPtrToInt(g->b, v, g->t_i64, "");
  case TEENY_FMT_W64: return v;
  default:
    return teeny__cg_cast(g, v, dt, teeny__dt_is_signed(dt) ? TEENY_DT_I32 : TEENY_DT_U32);
  }
}

/* vprintf(fmt, {args[0..n)}): the buffer is a struct of the arguments,
 * which LLVM lays out as vprintf reads it (each at its own alignment). */
static void call_vprintf(cg *g, const char *fmt, LLVMValueRef *args, int n) {
  LLVMTypeRef p0 = LLVMPointerTypeInContext(g->ctx, 0);
  LLVMValueRef buf = LLVMConstNull(p0);
  if (n) {
    LLVMTypeRef *ft = teeny__cg_alloc(g, sizeof *ft * (size_t)n);
    for (int i = 0; i < n; i++)
      ft[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef st = LLVMStructTypeInContext(g->ctx, ft, (unsigned)n, 0);
    LLVMBuilderRef keep = g->b;
    g->b = g->pb; /* allocas live in the entry block */
    LLVMValueRef a = LLVMBuildAlloca(g->b, st, "");
    g->b = keep;
    for (int i = 0; i < n; i++)
      LLVMBuildStore(g->b, args[i], LLVMBuildStructGEP2(g->b, st, a, (unsigned)i, ""));
    buf = g->emu ? a : LLVMBuildAddrSpaceCast(g->b, a, p0, "");
  }
  LLVMValueRef av[2] = {cstring(g, fmt), buf};
  if (g->emu) {
    teeny__cg_emu_call(g, "teeny_emu_vprintf", g->t_i32, av, 2);
    return;
  }
  LLVMTypeRef pt[2] = {p0, p0};
  LLVMTypeRef fty = LLVMFunctionType(g->t_i32, pt, 2, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, "vprintf");
  if (!fn)
    fn = LLVMAddFunction(g->mod, "vprintf", fty);
  LLVMBuildCall2(g->b, fty, fn, av, 2, "");
}

/* __assertfail(message, file, line, function, char size): the grid stops. */
static void call_assertfail(cg *g, const char *msg, const char *file, int line) {
  LLVMValueRef m = cstring(g, msg), f = cstring(g, file);
  if (g->emu) {
    LLVMValueRef av[4] = {m, f, teeny__cg_i32(g, line), teeny__cg_i32(g, g->loc.col)};
    teeny__cg_emu_call(g, "teeny_emu_assertfail", g->t_void, av, 4);
    return;
  }
  LLVMTypeRef p0 = LLVMPointerTypeInContext(g->ctx, 0);
  LLVMTypeRef pt[5] = {p0, p0, g->t_i32, p0, g->t_i64};
  LLVMTypeRef fty = LLVMFunctionType(g->t_void, pt, 5, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, "__assertfail");
  if (!fn)
    fn = LLVMAddFunction(g->mod, "__assertfail", fty);
  const char *name = g->f->name ? g->f->name : "kernel";
  LLVMValueRef av[5] = {m, f, teeny__cg_i32(g, line), cstring(g, name), teeny__cg_i64(g, 1)};
  LLVMBuildCall2(g->b, fty, fn, av, 5, "");
}

/* The vprintf format of op's line: [file:line: ] where, the user's text
 * (device_assert's after "device_assert failed: "), one newline. */
static const char *line_format(cg *g, const teeny_op *op, int rank, int first) {
  int n = op->nargs - first;
  teeny_fmt_arg *kinds = teeny__cg_alloc(g, sizeof *kinds * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    kinds[i] = teeny__fmt_arg(teeny__ir_type(g->f, op->args[first + i]).dt);
  teeny_buf b;
  teeny__buf_init(&b);
  if (op->code == IR_ASSERT)
    teeny__buf_puts(&b, "%s:%d: ");
  teeny__buf_puts(&b, "pid (%d, %d, %d) ");
  for (int d = 0; d < rank; d++)
    teeny__buf_puts(&b, d == 0 ? "idx (%d" : ", %d");
  if (rank)
    teeny__buf_puts(&b, ") ");
  if (op->code == IR_ASSERT)
    teeny__buf_puts(&b, "device_assert failed: ");
  size_t before = b.len;
  teeny__fmt_rewrite(&b, op->str, kinds, n);
  if (b.len == before || b.p[b.len - 1] != '\n')
    teeny__buf_putc(&b, '\n');
  if (b.oom)
    teeny__cg_fail(g, TEENY_E_NOMEM, "out of memory");
  char *s = teeny__cg_alloc(g, b.len + 1);
  memcpy(s, b.p, b.len + 1);
  teeny__buf_free(&b);
  return s;
}

/* The tile operands' layout (they share a shape), or NULL: all scalars. */
static const cg_layout *debug_layout(cg *g, const teeny_op *op) {
  for (int i = 0; i < op->nargs; i++)
    if (teeny__ir_type(g->f, op->args[i]).rank)
      return teeny__cg_use_layout(g, op->args[i]);
  return NULL;
}

/* Element r's line (and, for an assert, the stop), under `when`. */
static void emit_line(cg *g, const teeny_op *op, const cg_layout *L, long r,
                      LLVMValueRef **regs, const char *fmt, LLVMValueRef when) {
  int first = op->code == IR_ASSERT ? 1 : 0;
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "dbg");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "dbg.end");
  LLVMBuildCondBr(g->b, when, yes, done);
  LLVMPositionBuilderAtEnd(g->b, yes);
  LLVMValueRef *a = teeny__cg_alloc(g, sizeof *a * (size_t)(op->nargs + 8));
  int n = 0;
  const char *file = g->f->file ? g->f->file : "<source>";
  if (op->code == IR_ASSERT) {
    a[n++] = cstring(g, file);
    a[n++] = teeny__cg_i32(g, op->loc.line);
  }
  static const char *const ctaid[] = {"ctaid.x", "ctaid.y", "ctaid.z"};
  for (int d = 0; d < 3; d++)
    a[n++] = teeny__cg_sreg(g, ctaid[d]);
  if (L) {
    LLVMValueRef flat = teeny__cg_flat(g, L, r);
    for (int d = 0; d < L->rank; d++)
      a[n++] = teeny__cg_coord(g, L, flat, d);
  }
  for (int i = first; i < op->nargs; i++) {
    teeny_type t = teeny__ir_type(g->f, op->args[i]);
    a[n++] = as_arg(g, t.rank ? regs[i][r] : regs[i][0], t.dt);
  }
  call_vprintf(g, fmt, a, n);
  if (op->code == IR_ASSERT)
    call_assertfail(g, op->str, file, op->loc.line);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
}

void teeny__cg_emit_debug(cg *g, const teeny_op *op) {
  const cg_layout *L = debug_layout(g, op);
  bool as = op->code == IR_ASSERT;
  const char *fmt = line_format(g, op, L ? L->rank : 0, as ? 1 : 0);
  LLVMValueRef **regs = teeny__cg_alloc(g, sizeof *regs * (size_t)(op->nargs + 1));
  for (int i = 0; i < op->nargs; i++) {
    if (teeny__ir_type(g->f, op->args[i]).rank) {
      regs[i] = teeny__cg_get(g, op->args[i], L);
    } else {
      regs[i] = teeny__cg_alloc(g, sizeof *regs[i]);
      regs[i][0] = teeny__cg_scalar(g, op->args[i]);
    }
  }
  g->divergent++; /* no barrier may be reached in these branches */
  if (!L) {
    LLVMValueRef when = LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, teeny__cg_i32(g, 0), "");
    if (as)
      when = LLVMBuildAnd(g->b, when, LLVMBuildNot(g->b, regs[0][0], ""), "");
    emit_line(g, op, NULL, 0, regs, fmt, when);
  } else {
    LLVMValueRef owner = teeny__cg_owner(g, L);
    for (long r = 0; r < 1L << L->nreg; r++) {
      if (!teeny__cg_reg_owner(L, r))
        continue;
      LLVMValueRef when = owner;
      if (as) {
        bool tile = teeny__ir_type(g->f, op->args[0]).rank > 0;
        when = LLVMBuildAnd(g->b, when, LLVMBuildNot(g->b, regs[0][tile ? r : 0], ""), "");
      }
      emit_line(g, op, L, r, regs, fmt, when);
    }
  }
  g->divergent--;
}
