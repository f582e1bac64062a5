/*
 * dsl/irgen.h — state shared by the three parts of the IR generator:
 *
 *   irgen.c          statements, control flow, variables, inlining
 *   irgen_expr.c     expressions: promotion, conversion, broadcasting, folding
 *   irgen_builtins.c the builtin functions
 *
 * The generator walks the resolved AST of one kernel under one set of
 * bindings and emits tile IR.  Every expression yields a `gval`: an IR value
 * or a compile-time constant (scalars, or uniform tiles such as zeros())
 * that is only materialised as an IR_CONST where an op needs it.  Constants
 * carry shapes and sizes through the program, which is how a const generic
 * or `BLOCK * 2` can size a tile.
 *
 * Variables live in per-activation slot arrays (resolve.c numbered them);
 * control flow merges slots into scf-style results.  Two extra slots per
 * activation track early returns: RET_FLAG (bool, "has returned") and
 * RET_VAL (the value returned so far).  Statements after a possible return
 * run under `if (!RET_FLAG)`.
 *
 * The first error stops generation: gen_fail() reports and longjmps out.
 */
#ifndef TEENY_DSL_IRGEN_H
#define TEENY_DSL_IRGEN_H

#include <setjmp.h>

#include "dsl/front.h"

typedef struct gval {
  int id;          /* IR value id; -1 for a constant not materialised */
  teeny_type type; /* static type; weak values have i32, i64 or f32 */
  bool weak;       /* literal or const generic: adopts the other dtype */
  bool is_const;   /* known at compile time (uniform if a tile) */
  teeny_scalar c;  /* the constant; weak floats keep full double precision */
} gval;

typedef struct gvar {
  bool defined;    /* assigned on every path that reaches here */
  teeny_dtype dt;  /* declared dtype (the pointee for pointers) */
  bool is_ptr;     /* declared as a pointer */
  bool is_tile;    /* declared as a tile */
  gval v;          /* current value, when defined */
} gvar;

typedef struct gframe {
  const teeny_func *fn;  /* the function this activation runs */
  gvar *vars;            /* [nslots] */
  int nslots;            /* fn->nvars + 2 */
  struct gframe *caller; /* NULL for the kernel */
} gframe;

#define RET_FLAG(fr) ((fr)->fn->nvars)
#define RET_VAL(fr) ((fr)->fn->nvars + 1)

typedef struct gen {
  teeny_ctx *cx;
  const teeny_program *prog;
  const teeny_bindings *b;
  teeny_ir_func *f;
  teeny_region *cur; /* where ops are appended */
  gframe *fr;        /* innermost activation */
  int depth;         /* helper inlining depth */
  jmp_buf fail;      /* gen_fail() jumps here */
} gen;

/* ---- irgen.c ---------------------------------------------------------------- */

_Noreturn void teeny__gen_fail(gen *g, teeny_loc loc, const char *fmt, ...) TEENY_PRINTF(3, 4);
/* Inline helper fn with already evaluated arguments; returns its value
 * (type void for void helpers). */
gval teeny__gen_inline(gen *g, const teeny_func *fn, const gval *args,
                       const teeny_loc *arglocs, int nargs, teeny_loc loc);
/* x = e, x op= e, x++ (statement level); returns a void value. */
gval teeny__gen_assign(gen *g, const teeny_expr *e);
/* Type string for messages. */
const char *teeny__gen_tstr(gen *g, teeny_type t);

/* ---- irgen_expr.c -------------------------------------------------------------- */

gval teeny__gen_expr(gen *g, const teeny_expr *e);
/* Evaluate e as a scalar condition (bool; ints and floats compare with 0). */
gval teeny__gen_cond(gen *g, const teeny_expr *e);
/* An IR value id for v in the current region (materialises constants). */
int teeny__gen_id(gen *g, gval v, teeny_loc loc);
gval teeny__gv_value(gen *g, int id);
gval teeny__gv_int(teeny_dtype dt, int64_t v);       /* strong int constant */
gval teeny__gv_bool(bool v);
gval teeny__gv_weak_int(int64_t v);
gval teeny__gv_weak_float(double v);
/* Explicit conversion (a cast): any numeric dtype to any other. */
gval teeny__gen_convert(gen *g, gval v, teeny_dtype dt, teeny_loc loc);
/* Implicit conversion: only value-preserving ones; `what` names the
 * context in the error ("initialise 'x'"). */
gval teeny__gen_implicit(gen *g, gval v, teeny_dtype dt, teeny_loc loc,
                         const char *what);
/* Broadcast v to a shape (scalar splat, leading 1s, stretch 1-dims). */
gval teeny__gen_broadcast(gen *g, gval v, int rank, const int *shape, teeny_loc loc);
/* The broadcast shape of a and b; false if they do not broadcast. */
bool teeny__broadcast_shape(teeny_type a, teeny_type b, int *rank, int *shape);
/* a op b with promotion, broadcasting and folding. */
gval teeny__gen_binop(gen *g, teeny_op_kind op, gval a, gval b, teeny_loc loc);
/* Common dtype of a and b for arithmetic (promotion table of docs/dsl.md). */
teeny_dtype teeny__gen_promote(gen *g, gval a, gval b, teeny_loc loc, const char *opname);
/* Convert a weak or typed value to dt for use as an operand (weak values
 * adopt dt with a range check; typed ones are cast). */
gval teeny__gen_operand(gen *g, gval v, teeny_dtype dt, teeny_loc loc);
/* Emit a single-result element-wise op on same-typed operands (folds
 * nothing). */
gval teeny__gen_op(gen *g, teeny_opcode code, const gval *args, int nargs,
                   teeny_type rt, teeny_loc loc);
/* Element-wise `code` over n operands (promoted, broadcast; binary ops of
 * constants fold).  args are updated in place. */
gval teeny__gen_elementwise(gen *g, teeny_opcode code, gval *args, int n,
                            teeny_loc loc, const char *name);
/* Require a compile-time integer; `what` describes it for the error. */
int64_t teeny__gen_const_int(gen *g, const teeny_expr *e, const char *what);

/* ---- irgen_builtins.c -------------------------------------------------------------- */

gval teeny__gen_builtin(gen *g, const teeny_expr *call);

/* ---- irgen_random.c ------------------------------------------------------------------ */

/* rand, randn or randint (which) of call e: Philox as Triton computes it. */
gval teeny__gen_random(gen *g, const teeny_expr *e, teeny_builtin which);

#endif /* TEENY_DSL_IRGEN_H */
