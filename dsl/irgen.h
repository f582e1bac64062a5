/*
 * dsl/irgen.h — state shared by the parts of the IR generator:
 *
 *   irgen.c          statements, if, early returns, variables, inlining
 *   irgen_loop.c     loops, and their early exits (break, continue, return)
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
 * control flow merges slots into scf-style results.  Extra slots per
 * activation track early returns: RET_FLAG (bool, "has returned") and
 * RET_VAL (the value returned so far).  A loop with `break` or `continue`
 * has a flag slot for each (resolve.c made them).  These are the *exit
 * flags*: statements after a possible exit run under `if (!flags)`, and a
 * loop that may be left early tests its flags with its condition
 * (irgen_loop.c).
 *
 * The first error stops generation: gen_fail() reports and longjmps out.
 */
#ifndef TEENY_DSL_IRGEN_H
#define TEENY_DSL_IRGEN_H

#include <setjmp.h>

#include "dsl/front.h"

typedef struct gval gval;
struct gval {
  int id;          /* IR value id; -1 for a constant not materialised */
  teeny_type type; /* static type; weak values have i32, i64 or f32 */
  bool weak;       /* literal or const generic: adopts the other dtype */
  bool is_const;   /* known at compile time (uniform if a tile) */
  teeny_scalar c;  /* the constant; weak floats keep full double precision */
  const teeny_struct *st; /* a struct value: its struct (type is void) */
  gval *leaves;    /* a struct value: its st->nleaves leaf values */
};

typedef struct gvar {
  bool defined;    /* assigned on every path that reaches here */
  teeny_dtype dt;  /* declared dtype (the pointee for pointers) */
  bool is_ptr;     /* declared as a pointer */
  bool is_tile;    /* declared as a tile */
  gval v;          /* current value, when defined */
  const teeny_struct *st; /* the first slot of a struct variable: its struct
                             (the variable is st->nleaves slots) */
} gvar;

/* A loop whose body is being generated: its exit flags. */
typedef struct gloop {
  int brk;               /* slot of its break flag, or -1 */
  int cont;              /* slot of its continue flag, or -1 */
  struct gloop *up;      /* the loop around it in the same function */
} gloop;

typedef struct gframe {
  const teeny_func *fn;  /* the function this activation runs */
  gvar *vars;            /* [nslots] */
  int nslots;            /* fn->nvars + 1 + nret */
  int nret;              /* RET_VAL's slots: a struct's leaves, or 1 */
  gloop *loop;           /* innermost loop being generated, or NULL */
  struct gframe *caller; /* NULL for the kernel */
} gframe;

#define RET_FLAG(fr) ((fr)->fn->nvars)
#define RET_VAL(fr) ((fr)->fn->nvars + 1) /* the first of fr->nret */
#define IS_RET_VAL(fr, s) ((s) >= RET_VAL(fr) && (s) < RET_VAL(fr) + (fr)->nret)

typedef struct gen {
  teeny_ctx *cx;
  const teeny_program *prog;
  const teeny_bindings *b;
  teeny_ir_func *f;
  teeny_region *cur; /* where ops are appended */
  gframe *fr;        /* innermost activation */
  int depth;         /* helper inlining depth */
  jmp_buf fail;      /* gen_fail() jumps here */
  const teeny_struct *descs[64]; /* descriptor specialisations (irgen_desc.c) */
  int ndescs;
} gen;

/* ---- irgen.c ---------------------------------------------------------------- */

_Noreturn void teeny__gen_fail(gen *g, teeny_loc loc, const char *fmt, ...) TEENY_PRINTF(3, 4);

/* Which slots a piece of code assigns (before generating it). */
typedef struct gscan {
  bool *assigned; /* [nslots] assigned somewhere inside (exit flags too) */
  bool *declared; /* [nslots] declared inside (so local to it) */
  bool returns;   /* contains a return */
  bool calls;     /* contains a call whose value may change between two
                     evaluations with the same arguments: a helper, a load,
                     an atomic (for loop-invariance checks) */
  const teeny_program *prog; /* for the slots of struct declarations */
} gscan;

gscan teeny__gen_scan_new(gen *g);
void teeny__gen_scan_stmt(const teeny_stmt *s, gscan *si);
void teeny__gen_scan_expr(const teeny_expr *e, gscan *si);
/* The slots merged after the scanned code: assigned inside and not
 * declared there; a return adds RET_FLAG and RET_VAL. */
bool *teeny__gen_scan_merged(gen *g, gscan *si);
/* Does e read any slot marked in set? */
bool teeny__gen_expr_reads(const teeny_expr *e, const bool *set);

gvar *teeny__gen_vars_save(gen *g);
void teeny__gen_vars_restore(gen *g, const gvar *saved);
/* An op appended to r (fails past the op limit). */
teeny_op *teeny__gen_add_op(gen *g, teeny_region *r, teeny_opcode code, teeny_loc loc,
                            const int *args, int nargs, const teeny_type *rt, int nres);
/* Append term (IR_YIELD, or IR_CONDITION with cond_id first) of the values
 * of slots[0..n) to r; placeholders of types[] stand in for RET_VAL where
 * no path returned. */
void teeny__gen_yield_slots(gen *g, teeny_region *r, const int *slots,
                            const teeny_type *types, int n, teeny_opcode term,
                            int cond_id, teeny_loc loc);
/* if (cond) { ts } else { es }, merging the slots marked in asg; the exit
 * flags clear[0..nclear) are known false at the start of the then-branch
 * (the guard of the code after a possible exit). */
void teeny__gen_branches(gen *g, gval cond, teeny_stmt *const *ts, int tn,
                         teeny_stmt *const *es, int en, const bool *asg,
                         teeny_loc loc, const int *clear, int nclear);
void teeny__gen_stmt(gen *g, const teeny_stmt *s);
/* A variable of declared type ts: its slots [base, ...) in frame fr get
 * their dtypes (a struct: one per leaf, tiles in a tile(S)). */
void teeny__gen_declare(gen *g, gframe *fr, int base, const teeny_tyspec *ts);
void teeny__gen_declare_var(gvar *v, const teeny_tyspec *ts, const teeny_bindings *b);
/* Give slot v a new value x: implicit conversion to its dtype (explicit
 * when cast: compound assignment), tile/scalar agreement, broadcasting to
 * its shape once it has one; what says what happens, for messages. */
void teeny__gen_assign_var(gen *g, gvar *v, gval x, teeny_loc loc, const char *what,
                           bool cast);
/* The same for the variable (or field) at slots [base, ...) of the current
 * frame: x must be a value of struct st when st is set, and each leaf is
 * assigned. */
void teeny__gen_store(gen *g, int base, const teeny_struct *st, gval x, teeny_loc loc,
                      const char *what, bool cast);
/* Point slot at a value (no conversion: flags and region arguments). */
void teeny__gen_slot_set(gen *g, int slot, gval v);
/* The value of the variable (or field) in slots [base, ...): a struct
 * value from its leaves when st is set; name is for errors. */
gval teeny__gen_slots_value(gen *g, int base, const teeny_struct *st, teeny_loc loc,
                            const char *name);
/* The value of a struct (aggregate) from its leaves. */
gval teeny__gv_struct(const teeny_struct *st, gval *leaves);

/* ---- irgen_struct.c ------------------------------------------------------------ */

/* lhs.name, and {...} of a struct (a compound literal or an initializer). */
gval teeny__gen_member(gen *g, const teeny_expr *e);
gval teeny__gen_init(gen *g, const teeny_expr *e);

/* ---- irgen_loop.c ------------------------------------------------------------ */

void teeny__gen_for(gen *g, const teeny_stmt *s);
/* while and do-while */
void teeny__gen_while(gen *g, const teeny_stmt *s);
/* break / continue: the loop's flag is set. */
void teeny__gen_jump(gen *g, const teeny_stmt *s);
/* Inline helper fn with already evaluated arguments; returns its value
 * (type void for void helpers). */
gval teeny__gen_inline(gen *g, const teeny_func *fn, const gval *args,
                       const teeny_loc *arglocs, int nargs, teeny_loc loc);
/* x = e, x op= e, x++ (statement level); returns a void value. */
gval teeny__gen_assign(gen *g, const teeny_expr *e);
/* Type string for messages. */
const char *teeny__gen_tstr(gen *g, teeny_type t);

/* ---- irgen_expr.c -------------------------------------------------------------- */

/* An expression's value; a struct value is an error here (teeny__gen_expr_any
 * takes them too: initialisers, assignments, arguments, returns, fields,
 * reduce). */
gval teeny__gen_expr(gen *g, const teeny_expr *e);
gval teeny__gen_expr_any(gen *g, const teeny_expr *e);
/* Evaluate e as a scalar condition (bool; ints and floats compare with 0). */
gval teeny__gen_cond(gen *g, const teeny_expr *e);
/* An IR value id for v in the current region (materialises constants). */
int teeny__gen_id(gen *g, gval v, teeny_loc loc);
gval teeny__gv_value(gen *g, int id);
gval teeny__gv_int(teeny_dtype dt, int64_t v);       /* strong int constant */
gval teeny__gv_bool(bool v);
gval teeny__gv_void(void);                            /* no value */
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

/* The type of a dtype written as a value (zeros(f32, ...), sizeof(D)), or
 * of an expression, which is built where nothing runs it (as C's sizeof
 * does not evaluate its operand): scalar type of the dtype, or the value's. */
teeny_type teeny__gen_type_of(gen *g, const teeny_expr *e);

/* ---- irgen_builtins.c -------------------------------------------------------------- */

#define TEENY_MAX_COMBINE 8 /* values one reduce or scan combines (a struct's leaves) */

gval teeny__gen_builtin(gen *g, const teeny_expr *call);
/* A struct value of the struct type named by call's argument i, from n
 * leaf values converted to its fields' dtypes. */
gval teeny__gen_struct_of(gen *g, const teeny_expr *call, int i, gval *vals, int n);

/* ---- irgen_debug.c ------------------------------------------------------------------ */

gval teeny__gen_device_print(gen *g, const teeny_expr *call);
gval teeny__gen_device_assert(gen *g, const teeny_expr *call);
gval teeny__gen_static_assert(gen *g, const teeny_expr *call);

/* ---- irgen_random.c ------------------------------------------------------------------ */

/* rand, randn or randint (which) of call e: Philox as Triton computes it. */
gval teeny__gen_random(gen *g, const teeny_expr *e, teeny_builtin which);

/* ---- irgen_desc.c: tensor descriptors and block pointers ---------------------- */

gval teeny__gen_make_desc(gen *g, const teeny_expr *call, teeny_desc_kind k);
gval teeny__gen_desc_load(gen *g, const teeny_expr *call);
gval teeny__gen_desc_store(gen *g, const teeny_expr *call);
gval teeny__gen_advance(gen *g, const teeny_expr *call);
/* A tensor_desc(T, B0, ..) kernel parameter: its IR parameters (the
 * tensormap, base, shapes, strides: teeny__param_slot) added to the
 * function, and the descriptor made of them. */
gval teeny__gen_desc_param(gen *g, const teeny_param_decl *p);
/* load(p) / store(p, v) where p (argument 0, evaluated: d) is a struct value */
gval teeny__gen_block_load(gen *g, const teeny_expr *call, gval d);
gval teeny__gen_block_store(gen *g, const teeny_expr *call, gval d);
/* May a variable whose struct is want (a descriptor family or
 * specialisation) take a value of struct have? */
bool teeny__gen_desc_fits(gen *g, const teeny_struct *want, const teeny_struct *have);

#endif /* TEENY_DSL_IRGEN_H */
