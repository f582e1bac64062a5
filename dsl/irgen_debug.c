/*
 * dsl/irgen_debug.c — the builtins that check and show a kernel
 * (docs/dsl.md §5): static_assert, checked when the kernel is built;
 * device_print, an IR_PRINT of a format and its values; device_assert, an
 * IR_ASSERT only when the request's debug option is on (its condition and
 * values are still type-checked when it is off, in a region no one runs).
 *
 * Formats are printf's without length modifiers (dsl/ir/format.c): each
 * conversion must suit its value's dtype, which is checked here, at the
 * value's location.  Tile values broadcast to one shape: one line (or one
 * check) per element; scalars alone give one line per program.
 */
#include <string.h>

#include "dsl/irgen.h"

/* The conversions of the message at args[at] (a string literal). */
static int message_convs(gen *g, const teeny_expr *e, int at, teeny_fmt_conv *conv) {
  const teeny_expr *m = e->args[at];
  char err[160];
  int n = teeny__fmt_parse(m->name, conv, TEENY_FMT_MAX_ARGS, err, sizeof err);
  if (n < 0)
    teeny__gen_fail(g, m->loc, "bad format for %s: %s", e->name, err);
  if (n != e->nargs - at - 1)
    teeny__gen_fail(g, n < e->nargs - at - 1 ? e->args[at + 1 + n]->loc : m->loc,
                    "the format of %s has %d conversion%s, but %d value%s follow%s", e->name,
                    n, n == 1 ? "" : "s", e->nargs - at - 1, e->nargs - at - 1 == 1 ? "" : "s",
                    e->nargs - at - 1 == 1 ? "s" : "");
  return n;
}

static const char *conv_hint(char conv) {
  if (conv == 'p')
    return "a pointer";
  return strchr("fFeEgGaA", conv) ? "a float (cast it: (f32)x)" : "an integer or bool";
}

/* Value i of the message's values, checked against its conversion. */
static gval message_value(gen *g, const teeny_expr *a, const teeny_fmt_conv *c,
                          const char *name) {
  gval v = teeny__gen_expr(g, a);
  if (v.type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, a->loc, "%s cannot print a void value", name);
  if (v.weak) /* a literal prints as what it is: i32 (i64), f32 */
    v = teeny__gen_operand(g, v, v.type.dt, a->loc);
  teeny_dtype dt = v.type.dt;
  if (!teeny__fmt_accepts(c->conv, dt))
    teeny__gen_fail(g, a->loc, "'%%%c' prints %s, but this value is %s", c->conv,
                    conv_hint(c->conv), teeny__gen_tstr(g, v.type));
  return v;
}

/* Broadcast the tiles among v[0..n) to one shape (scalars stay scalars). */
static void common_shape(gen *g, gval *v, int n, teeny_loc loc, const char *name) {
  int rank = 0, shape[TEENY_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    teeny_type cur = teeny__type_tile(TEENY_DT_I32, rank, shape);
    if (v[i].type.rank && !teeny__broadcast_shape(cur, v[i].type, &rank, shape))
      teeny__gen_fail(g, loc, "shape mismatch: the tiles %s prints do not broadcast (%s)",
                      name, teeny__gen_tstr(g, v[i].type));
  }
  for (int i = 0; rank && i < n; i++)
    if (v[i].type.rank)
      v[i] = teeny__gen_broadcast(g, v[i], rank, shape, loc);
}

static void emit(gen *g, teeny_opcode code, const teeny_expr *e, gval *v, int n,
                 const char *str) {
  int *ids = teeny__arena_alloc(g->cx->arena, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    ids[i] = teeny__gen_id(g, v[i], e->loc);
  teeny_op *op = teeny__gen_add_op(g, g->cur, code, e->loc, ids, n, NULL, 0);
  op->str = str;
}

/* device_print("format", values...) */
gval teeny__gen_device_print(gen *g, const teeny_expr *e) {
  teeny_fmt_conv conv[TEENY_FMT_MAX_ARGS];
  int n = message_convs(g, e, 0, conv);
  gval *v = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    v[i] = message_value(g, e->args[i + 1], &conv[i], e->name);
  common_shape(g, v, n, e->loc, e->name);
  emit(g, IR_PRINT, e, v, n, e->args[0]->name);
  return teeny__gv_void();
}

/* The condition, and the values, of device_assert(cond, "message", ...). */
static void assert_operands(gen *g, const teeny_expr *e, gval *v, int n,
                            const teeny_fmt_conv *conv) {
  v[0] = teeny__gen_expr(g, e->args[0]);
  if (v[0].type.dt == TEENY_DT_PTR || v[0].type.dt == TEENY_DT_VOID)
    teeny__gen_fail(g, e->args[0]->loc, "device_assert's condition must be a bool or a "
                                        "number, not %s", teeny__gen_tstr(g, v[0].type));
  if (v[0].type.dt != TEENY_DT_BOOL || v[0].weak)
    v[0] = teeny__gen_binop(g, OP_NE, v[0], teeny__gv_weak_int(0), e->args[0]->loc);
  for (int i = 0; i < n; i++)
    v[i + 1] = message_value(g, e->args[i + 2], &conv[i], e->name);
  common_shape(g, v, n + 1, e->loc, e->name);
}

/* device_assert(cond, "message", values...): checked only when the
 * request's debug option is on; otherwise built where nothing runs it. */
gval teeny__gen_device_assert(gen *g, const teeny_expr *e) {
  teeny_fmt_conv conv[TEENY_FMT_MAX_ARGS];
  int n = message_convs(g, e, 1, conv);
  gval *v = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)(n + 2));
  teeny_region *cur = g->cur;
  if (!g->b->debug)
    g->cur = teeny__ir_region_new(g->f);
  assert_operands(g, e, v, n, conv);
  bool always = v[0].is_const && v[0].c.i;
  if (g->b->debug && !always) {
    emit(g, IR_ASSERT, e, v, n + 1, e->args[1]->name);
    g->f->file = g->cx->file;
  }
  g->cur = cur;
  return teeny__gv_void();
}

/* static_assert(cond, "message"): cond must be known now, and true. */
gval teeny__gen_static_assert(gen *g, const teeny_expr *e) {
  gval c = teeny__gen_cond(g, e->args[0]);
  if (!c.is_const)
    teeny__gen_fail(g, e->args[0]->loc, "static_assert needs a condition known at compile "
                                        "time (constants, sizeof, is_float(...)); this one "
                                        "depends on run-time values: use device_assert");
  if (!c.c.i)
    teeny__gen_fail(g, e->args[0]->loc, "static assertion failed: %s", e->args[1]->name);
  return teeny__gv_void();
}
