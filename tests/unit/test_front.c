/*
 * tests/unit/test_front.c — the front end (dsl/lex.c, parse.c, resolve.c):
 * realistic kernels parse into the expected AST with names bound; every
 * class of bad source is rejected at the right line:col with a message that
 * says what is wrong; hostile inputs (deep nesting, truncations, limits)
 * never crash; and every kernel in examples/kernels/ goes through.
 *
 * Links only ctx/lex/parse/resolve and teeny_common, not teeny_dsl.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/front.h"

static teeny_arena arena;
static teeny_diags diags;
static teeny_ctx cx;

static void setup(void) {
  teeny__arena_init(&arena);
  teeny_diags_init(&diags);
  memset(&cx, 0, sizeof cx);
  cx.arena = &arena;
  cx.file = "<test>";
  cx.diags = &diags;
}

static void teardown(void) {
  teeny_diags_close(&diags);
  teeny__arena_free(&arena);
}

/* Reset the job state, so one test can run several sources. */
static void reset(void) {
  teardown();
  setup();
}

/* Lex, parse and resolve src[0, len); NULL if any stage reported errors. */
static teeny_program *front_n(const char *src, size_t len) {
  cx.text = src;
  cx.len = len;
  int n = 0;
  teeny_token *toks = teeny__lex(&cx, &n);
  if (!toks)
    return NULL;
  teeny_program *p = teeny__parse(&cx, toks, n);
  if (!p)
    return NULL;
  return teeny__resolve(&cx, p) == 0 ? p : NULL;
}

static teeny_program *front(const char *src) { return front_n(src, strlen(src)); }

/* src must go through without a diagnostic. */
static teeny_program *ok(const char *src) {
  teeny_program *p = front(src);
  ck_assert_msg(p != NULL && diags.n == 0, "unexpected error %d:%d: %s",
                diags.n ? diags.v[0].line : 0, diags.n ? diags.v[0].col : 0,
                diags.n ? diags.v[0].message : "(none)");
  ck_assert_int_eq(cx.nerrors, 0);
  return p;
}

static teeny_func *func(teeny_program *p, const char *name) {
  int i = teeny__program_find_func(p, name);
  ck_assert_msg(i >= 0, "no function '%s'", name);
  return p->funcs[i];
}

static teeny_stmt *body(teeny_func *f, int i) {
  ck_assert_int_lt(i, f->body->nbody);
  return f->body->body[i];
}

/* The ST_DECL of variable name anywhere in st (depth-first), or NULL. */
static teeny_stmt *find_decl(teeny_stmt *st, const char *name) {
  if (!st)
    return NULL;
  if (st->kind == ST_DECL && strcmp(st->name, name) == 0)
    return st;
  teeny_stmt *kids[] = {st->then, st->els, st->init, st->loop};
  for (size_t i = 0; i < TEENY_ARRAY_LEN(kids); i++) {
    teeny_stmt *d = find_decl(kids[i], name);
    if (d)
      return d;
  }
  for (int i = 0; i < st->nbody; i++) {
    teeny_stmt *d = find_decl(st->body[i], name);
    if (d)
      return d;
  }
  return NULL;
}

static teeny_stmt *decl(teeny_func *f, const char *name) {
  teeny_stmt *d = find_decl(f->body, name);
  ck_assert_msg(d != NULL, "no declaration of '%s' in '%s'", name, f->name);
  return d;
}

#define VECTOR_ADD                                                            \
  "#include <teeny/dsl.h>\n"                                                  \
  "\n"                                                                        \
  "TEENY_DTYPE(D, f32, f16, bf16);  /* dtype parameter */\n"                  \
  "TEENY_CONST(BLOCK_SIZE);         // i32 constant\n"                        \
  "\n"                                                                        \
  "TEENY_KERNEL(D, BLOCK_SIZE)\n"                                             \
  "void vector_add(ptr(D) a_ptr, ptr(D) b_ptr, ptr(D) out_ptr, i32 "          \
  "n_elements)\n"                                                             \
  "{\n"                                                                       \
  "    i32 pid = program_id(0);\n"                                            \
  "    tile(i32) offs = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE);\n"          \
  "    tile(bool) mask = offs < n_elements;\n"                                \
  "    tile(D) a = load(a_ptr + offs, mask, 0);\n"                            \
  "    tile(D) b = load(b_ptr + offs, mask, 0);\n"                            \
  "    store(out_ptr + offs, a + b, mask);\n"                                 \
  "}\n"

/* ---- positive parses ------------------------------------------------------------ */

START_TEST(vector_add_shape) {
  teeny_program *p = ok(VECTOR_ADD);
  ck_assert_int_eq(p->ngenerics, 2);
  ck_assert_str_eq(p->generics[0].name, "D");
  ck_assert(p->generics[0].is_dtype);
  ck_assert_int_eq(p->generics[0].nallowed, 3);
  ck_assert_int_eq(p->generics[0].allowed[2], TEENY_DT_BF16);
  ck_assert(!p->generics[1].is_dtype);
  ck_assert_int_eq(p->generics[1].loc.line, 4);
  ck_assert_int_eq(p->generics[1].loc.col, 13);
  ck_assert_int_eq(p->nfuncs, 1);
  teeny_func *f = p->funcs[0];
  ck_assert(f->is_kernel);
  ck_assert_int_eq(f->kernel_loc.line, 6);
  ck_assert_int_eq(f->nkgenerics, 2);
  ck_assert_int_eq(f->kgenerics[0], 0);
  ck_assert_int_eq(f->kgenerics[1], 1);
  ck_assert_int_eq(f->backward, -1);
  ck_assert(f->ret->is_void);
  ck_assert_int_eq(f->loc.line, 7);
  ck_assert_int_eq(f->loc.col, 6);
  ck_assert_int_eq(f->nparams, 4);
  ck_assert(f->params[0].type->is_ptr);
  ck_assert_int_eq(f->params[0].type->generic, 0);
  ck_assert_int_eq(f->params[3].type->dt, TEENY_DT_I32);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(f->params[i].var, i);
  ck_assert_int_eq(f->nvars, 9);
  ck_assert_str_eq(f->var_names[4], "pid");
  ck_assert_str_eq(f->var_names[8], "b");
  ck_assert_int_eq(f->body->nbody, 6);

  /* tile(i32) offs = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE); */
  teeny_stmt *offs = body(f, 1);
  ck_assert_int_eq(offs->kind, ST_DECL);
  ck_assert(offs->type->is_tile);
  ck_assert_int_eq(offs->type->dt, TEENY_DT_I32);
  ck_assert_int_eq(offs->var, 5);
  teeny_expr *e = offs->expr;
  ck_assert_int_eq(e->kind, EX_BINARY);
  ck_assert_int_eq(e->op, OP_ADD);
  ck_assert_int_eq(e->lhs->op, OP_MUL);
  ck_assert_int_eq(e->lhs->lhs->sym, SYM_VAR);
  ck_assert_int_eq(e->lhs->lhs->sym_index, 4);
  ck_assert_int_eq(e->lhs->rhs->sym, SYM_GENERIC);
  ck_assert_int_eq(e->lhs->rhs->sym_index, 1);
  ck_assert_int_eq(e->rhs->kind, EX_CALL);
  ck_assert_int_eq(e->rhs->sym, SYM_BUILTIN);
  ck_assert_int_eq(e->rhs->sym_index, BI_ARANGE);
  ck_assert_int_eq(e->rhs->nargs, 2);

  /* store(out_ptr + offs, a + b, mask); */
  teeny_stmt *st = body(f, 5);
  ck_assert_int_eq(st->kind, ST_EXPR);
  ck_assert_int_eq(st->expr->sym_index, BI_STORE);
  ck_assert_int_eq(st->expr->loc.line, 14);
  ck_assert_int_eq(st->expr->loc.col, 5);
  ck_assert_int_eq(st->expr->args[1]->lhs->sym_index, 7);
}
END_TEST

START_TEST(softmax_shape) {
  teeny_program *p = ok(
      "TEENY_DTYPE(D, f32, f16, bf16);\n"
      "TEENY_CONST(BLOCK);\n"
      "TEENY_KERNEL(D, BLOCK)\n"
      "void softmax(ptr(D) out, const ptr(D) in, i32 stride, i32 n_cols)\n"
      "{\n"
      "    i32 r = program_id(0);\n"
      "    tile(i32) cols = arange(0, BLOCK);\n"
      "    tile(bool) mask = cols < n_cols;\n"
      "    tile(f32) x = (tile(f32)) load(in + r * stride + cols, mask, -3.0e38f);\n"
      "    f32 m = max(x, 0);\n"
      "    tile(f32) e = exp(x - m);\n"
      "    f32 s = sum(e);\n"
      "    store(out + r * stride + cols, e / s, mask);\n"
      "}\n");
  teeny_func *f = func(p, "softmax");
  ck_assert(f->params[1].type->is_ptr);
  teeny_stmt *x = decl(f, "x");
  ck_assert_int_eq(x->expr->kind, EX_CAST);
  ck_assert(x->expr->type->is_tile);
  ck_assert_int_eq(x->expr->type->dt, TEENY_DT_F32);
  teeny_expr *ld = x->expr->lhs;
  ck_assert_int_eq(ld->sym_index, BI_LOAD);
  ck_assert_int_eq(ld->args[2]->kind, EX_UNARY);
  ck_assert_int_eq(ld->args[2]->op, OP_NEG);
  ck_assert_int_eq(ld->args[2]->lhs->lit_dt, TEENY_DT_F32);
  ck_assert_int_eq(decl(f, "m")->expr->sym_index, BI_MAX);
  ck_assert_int_eq(decl(f, "e")->expr->sym_index, BI_EXP);
  ck_assert_int_eq(decl(f, "s")->expr->sym_index, BI_SUM);
  ck_assert_int_eq(decl(f, "s")->expr->nargs, 1);
}
END_TEST

#define MATMUL                                                                \
  "TEENY_DTYPE(T, f16, bf16, f32);\n"                                         \
  "TEENY_CONST(BM);\n"                                                        \
  "TEENY_CONST(BN);\n"                                                        \
  "TEENY_CONST(BK);\n"                                                        \
  "TEENY_KERNEL(T, BM, BN, BK)\n"                                             \
  "void matmul(T *a, T *b, f32 *c, i32 M, i32 N, i32 K)\n"                    \
  "{\n"                                                                       \
  "    i32 pm = program_id(0), pn = program_id(1);\n"                         \
  "    tile(i32) rm = pm * BM + arange(0, BM);\n"                             \
  "    tile(i32) rn = pn * BN + arange(0, BN);\n"                             \
  "    tile(i32) rk = arange(0, BK);\n"                                       \
  "    tile(f32) acc = zeros(f32, BM, BN);\n"                                 \
  "    for (i32 k = 0; k < K; k += BK) {\n"                                   \
  "        tile(ptr(T)) pa = a + col(rm) * K + row(rk + k);\n"                \
  "        tile(T) ta = load(pa, col(rm < M) & row(rk + k < K), 0);\n"        \
  "        tile(T) tb = load(b + col(rk + k) * N + row(rn),\n"                \
  "                          col(rk + k < K) & row(rn < N), 0);\n"            \
  "        acc = dot(ta, tb, acc);\n"                                         \
  "    }\n"                                                                   \
  "    store(c + col(rm) * N + row(rn), acc, col(rm < M) & row(rn < N));\n"   \
  "}\n"

START_TEST(matmul_shape) {
  teeny_program *p = ok(MATMUL);
  teeny_func *f = func(p, "matmul");
  ck_assert_int_eq(f->nkgenerics, 4);
  ck_assert(f->params[0].type->is_ptr);
  ck_assert_int_eq(f->params[0].type->generic, 0);
  ck_assert_int_eq(f->params[2].type->dt, TEENY_DT_F32);
  /* i32 pm = ..., pn = ...;  -> an unscoped block of two decls */
  teeny_stmt *two = body(f, 0);
  ck_assert_int_eq(two->kind, ST_BLOCK);
  ck_assert(!two->scoped);
  ck_assert_int_eq(two->nbody, 2);
  ck_assert_str_eq(two->body[1]->name, "pn");
  ck_assert_int_eq(two->body[1]->name_loc.col, 29);
  teeny_stmt *acc = decl(f, "acc");
  teeny_expr *z = acc->expr;
  ck_assert_int_eq(z->sym_index, BI_ZEROS);
  ck_assert_int_eq(z->args[0]->kind, EX_NAME);
  ck_assert_int_eq(z->args[0]->sym, SYM_DTYPE);
  ck_assert_int_eq(z->args[0]->type->dt, TEENY_DT_F32);
  ck_assert_int_eq(z->args[1]->sym, SYM_GENERIC);
  teeny_stmt *loop = body(f, 5);
  ck_assert_int_eq(loop->kind, ST_FOR);
  ck_assert_int_eq(loop->init->kind, ST_DECL);
  ck_assert_str_eq(loop->init->name, "k");
  int k = loop->init->var;
  ck_assert_int_eq(loop->cond->op, OP_LT);
  ck_assert_int_eq(loop->step->kind, EX_ASSIGN);
  ck_assert_int_eq(loop->step->op, OP_ADD);
  ck_assert_int_eq(loop->step->lhs->sym_index, k);
  teeny_stmt *pa = decl(f, "pa");
  ck_assert(pa->type->is_tile && pa->type->is_ptr);
  ck_assert_int_eq(pa->type->generic, 0);
  /* row(rk + k): k is the loop variable */
  ck_assert_int_eq(pa->expr->rhs->sym_index, BI_ROW);
  ck_assert_int_eq(pa->expr->rhs->args[0]->rhs->sym_index, k);
  teeny_stmt *upd = loop->loop->body[3];
  ck_assert_int_eq(upd->expr->kind, EX_ASSIGN);
  ck_assert_int_eq(upd->expr->op, OP_NONE);
  ck_assert_int_eq(upd->expr->rhs->sym_index, BI_DOT);
  ck_assert_int_eq(upd->expr->rhs->nargs, 3);
  ck_assert_int_eq(upd->expr->lhs->sym_index, acc->var);
}
END_TEST

START_TEST(helper_with_tile_param_and_early_return) {
  teeny_program *p = ok(
      "TEENY_DTYPE(D);\n"
      "static inline tile(f32) leaky(tile(f32) x, f32 slope, i32 on)\n"
      "{\n"
      "    if (!on)\n"
      "        return x;\n"
      "    return where(x > 0, x, x * slope);\n"
      "}\n"
      "TEENY_CONST(N);\n"
      "TEENY_KERNEL(D, N)\n"
      "void act(ptr(D) p, i32 on)\n"
      "{\n"
      "    tile(i32) o = arange(0, N);\n"
      "    tile(f32) v = leaky((tile(f32))load(p + o), 0.1f, on);\n"
      "    store(p + o, v);\n"
      "}\n");
  teeny_func *h = func(p, "leaky");
  ck_assert(!h->is_kernel);
  ck_assert(h->ret->is_tile);
  ck_assert(h->params[0].type->is_tile);
  teeny_stmt *s0 = body(h, 0);
  ck_assert_int_eq(s0->kind, ST_IF);
  ck_assert_int_eq(s0->cond->op, OP_LOGNOT);
  ck_assert_int_eq(s0->then->kind, ST_RETURN);
  ck_assert_ptr_null(s0->els);
  ck_assert_int_eq(body(h, 1)->expr->sym_index, BI_WHERE);
  teeny_func *k = func(p, "act");
  teeny_expr *call = decl(k, "v")->expr;
  ck_assert_int_eq(call->sym, SYM_FUNC);
  ck_assert_int_eq(call->sym_index, 0);
  ck_assert_int_eq(call->args[0]->kind, EX_CAST);
  ck_assert_int_eq(call->args[1]->lit_dt, TEENY_DT_F32);
}
END_TEST

START_TEST(reduce_scan_with_combine_helper) {
  teeny_program *p = ok(
      "f32 add2(f32 a, f32 b) { return a + b; }\n"
      "TEENY_CONST(N);\n"
      "TEENY_KERNEL(N)\n"
      "void rsum(ptr(f32) x, ptr(f32) out)\n"
      "{\n"
      "    tile(f32) v = load(x + arange(0, N));\n"
      "    f32 s = reduce(v, 0, add2);\n"
      "    tile(f32) c = scan(v, -1, add2);\n"
      "    tile(i32) am = argmax(col(v) + row(v), 1);\n"
      "    store(out, s + sum(c) + cumsum(v, 0));\n"
      "}\n");
  teeny_func *k = func(p, "rsum");
  teeny_expr *r = decl(k, "s")->expr;
  ck_assert_int_eq(r->sym_index, BI_REDUCE);
  ck_assert_int_eq(r->args[2]->kind, EX_NAME);
  ck_assert_int_eq(r->args[2]->sym, SYM_FUNC);
  ck_assert_int_eq(r->args[2]->sym_index, 0);
  ck_assert_int_eq(decl(k, "c")->expr->args[2]->sym, SYM_FUNC);
  ck_assert_int_eq(decl(k, "am")->expr->args[0]->lhs->sym_index, BI_COL);
}
END_TEST

START_TEST(atomics) {
  teeny_program *p = ok(
      "TEENY_CONST(N);\n"
      "TEENY_KERNEL(N)\n"
      "void hist(ptr(i32) bins, ptr(i32) keys, ptr(i32) lock, i32 n)\n"
      "{\n"
      "    tile(i32) o = program_id(0) * N + arange(0, N);\n"
      "    tile(bool) m = o < n;\n"
      "    tile(i32) k = load(keys + o, m, 0);\n"
      "    tile(i32) old = atomic_add(bins + k, 1, m);\n"
      "    atomic_max(bins + k, old, m);\n"
      "    atomic_min(bins + k, old);\n"
      "    atomic_xchg(bins, 3);\n"
      "    i32 was = atomic_cas(lock, 0, 1);\n"
      "}\n");
  teeny_func *f = func(p, "hist");
  ck_assert_int_eq(decl(f, "old")->expr->sym_index, BI_ATOMIC_ADD);
  ck_assert_int_eq(body(f, 4)->expr->sym_index, BI_ATOMIC_MAX);
  ck_assert_int_eq(body(f, 5)->expr->sym_index, BI_ATOMIC_MIN);
  ck_assert_int_eq(body(f, 6)->expr->sym_index, BI_ATOMIC_XCHG);
  ck_assert_int_eq(decl(f, "was")->expr->sym_index, BI_ATOMIC_CAS);
}
END_TEST

START_TEST(loops_and_branches) {
  teeny_program *p = ok(
      "TEENY_KERNEL()\n"
      "void flow(ptr(i32) p, i32 n)\n"
      "{\n"
      "    i32 i = 0;\n"
      "    while (i < n) { i += 2; }\n"
      "    do i--; while (i > 0);\n"
      "    for (;;) ;\n"
      "    for (i = 0; i < n; ++i) {}\n"
      "    if (i == 1) i = 2;\n"
      "    else if (i == -1) { i = -2; }\n"
      "    else i = 0;\n"
      "    i32 c = i > 0 ? 1 : i < 0 ? -1 : 0;\n"
      "    store(p, c);\n"
      "    return;\n"
      "}\n");
  teeny_func *f = func(p, "flow");
  teeny_stmt *w = body(f, 1);
  ck_assert_int_eq(w->kind, ST_WHILE);
  ck_assert_int_eq(w->loop->kind, ST_BLOCK);
  ck_assert_int_eq(w->loop->body[0]->expr->kind, EX_ASSIGN);
  teeny_stmt *d = body(f, 2);
  ck_assert_int_eq(d->kind, ST_DO);
  ck_assert_int_eq(d->loop->expr->kind, EX_INCDEC);
  ck_assert(!d->loop->expr->prefix);
  ck_assert_int_eq(d->loop->expr->op, OP_SUB);
  ck_assert_int_eq(d->cond->op, OP_GT);
  teeny_stmt *inf = body(f, 3);
  ck_assert_ptr_null(inf->init);
  ck_assert_ptr_null(inf->cond);
  ck_assert_ptr_null(inf->step);
  ck_assert_int_eq(inf->loop->kind, ST_EMPTY);
  teeny_stmt *fr = body(f, 4);
  ck_assert_int_eq(fr->init->kind, ST_EXPR);
  ck_assert_int_eq(fr->init->expr->kind, EX_ASSIGN);
  ck_assert(fr->step->prefix);
  teeny_stmt *chain = body(f, 5);
  ck_assert_int_eq(chain->kind, ST_IF);
  ck_assert_int_eq(chain->els->kind, ST_IF);
  ck_assert_int_eq(chain->els->els->kind, ST_EXPR);
  teeny_expr *c = decl(f, "c")->expr;
  ck_assert_int_eq(c->kind, EX_COND);
  ck_assert_int_eq(c->rhs->kind, EX_COND); /* right-associative */
  ck_assert_int_eq(c->rhs->lhs->kind, EX_UNARY);
  ck_assert_int_eq(body(f, 8)->kind, ST_RETURN);
}
END_TEST

START_TEST(precedence_and_casts) {
  teeny_program *p = ok(
      "void f(i32 a, i32 b, f32 x)\n"
      "{\n"
      "    bool r = a + b * 2 << 1 < 5 == a > b & a | b ^ 3 && a || !b;\n"
      "    i32 s = a - b - 1;\n"
      "    f64 y = (f64)(i32)x + (double)-x + (float)~a;\n"
      "    const i32 q = -(a % b) / +b;\n"
      "}\n");
  teeny_func *f = func(p, "f");
  teeny_expr *e = decl(f, "r")->expr;
  /* ((..&&..) || !b) */
  ck_assert_int_eq(e->op, OP_LOGOR);
  ck_assert_int_eq(e->rhs->op, OP_LOGNOT);
  teeny_expr *land = e->lhs;
  ck_assert_int_eq(land->op, OP_LOGAND);
  teeny_expr *bor = land->lhs; /* (..&..) | (b ^ 3) */
  ck_assert_int_eq(bor->op, OP_BITOR);
  ck_assert_int_eq(bor->rhs->op, OP_BITXOR);
  teeny_expr *band = bor->lhs; /* (.. == a > b) & a */
  ck_assert_int_eq(band->op, OP_BITAND);
  teeny_expr *eq = band->lhs;
  ck_assert_int_eq(eq->op, OP_EQ);
  ck_assert_int_eq(eq->rhs->op, OP_GT);
  ck_assert_int_eq(eq->lhs->op, OP_LT);
  ck_assert_int_eq(eq->lhs->lhs->op, OP_SHL);
  ck_assert_int_eq(eq->lhs->lhs->lhs->op, OP_ADD);
  ck_assert_int_eq(eq->lhs->lhs->lhs->rhs->op, OP_MUL);
  teeny_expr *s = decl(f, "s")->expr; /* (a - b) - 1 */
  ck_assert_int_eq(s->lhs->op, OP_SUB);
  ck_assert_int_eq(s->rhs->kind, EX_INT);
  teeny_expr *y = decl(f, "y")->expr;
  teeny_expr *c1 = y->lhs->lhs;
  ck_assert_int_eq(c1->kind, EX_CAST);
  ck_assert_int_eq(c1->type->dt, TEENY_DT_F64);
  ck_assert_int_eq(c1->lhs->kind, EX_CAST);
  ck_assert_int_eq(c1->lhs->type->dt, TEENY_DT_I32);
  ck_assert_int_eq(y->lhs->rhs->lhs->op, OP_NEG);
  ck_assert_int_eq(y->rhs->type->dt, TEENY_DT_F32);
  teeny_expr *q = decl(f, "q")->expr;
  ck_assert_int_eq(q->op, OP_DIV);
  ck_assert_int_eq(q->lhs->op, OP_NEG);
  ck_assert_int_eq(q->rhs->op, OP_PLUS);
}
END_TEST

START_TEST(all_literal_forms) {
  const char *src = "123 0x1F 017 0 7u 8l 9ul 10ull 11LL 12lu 13U "
                    "18446744073709551615ul 9223372036854775807 "
                    "1.0 1. .5 1e-5 2.5E+3 0x1p3 0x1.8p1 1.5f 3E2F true";
  cx.text = src;
  cx.len = strlen(src);
  int n = 0;
  teeny_token *t = teeny__lex(&cx, &n);
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(n, 24); /* 23 tokens and TK_EOF */
  uint64_t ivals[] = {123, 31, 15, 0, 7, 8, 9, 10, 11, 12, 13, UINT64_MAX,
                      INT64_MAX};
  teeny_dtype idts[] = {TEENY_DT_VOID, TEENY_DT_VOID, TEENY_DT_VOID,
                        TEENY_DT_VOID, TEENY_DT_U32,  TEENY_DT_I64,
                        TEENY_DT_U64,  TEENY_DT_U64,  TEENY_DT_I64,
                        TEENY_DT_U64,  TEENY_DT_U32,  TEENY_DT_U64,
                        TEENY_DT_VOID};
  for (int i = 0; i < 13; i++) {
    ck_assert_int_eq(t[i].kind, TK_INT);
    ck_assert_uint_eq(t[i].ival, ivals[i]);
    ck_assert_int_eq(t[i].lit_dt, idts[i]);
  }
  double fvals[] = {1.0, 1.0, 0.5, 1e-5, 2500.0, 8.0, 3.0, 1.5, 300.0};
  for (int i = 0; i < 9; i++) {
    ck_assert_int_eq(t[13 + i].kind, TK_FLOAT);
    ck_assert_double_eq(t[13 + i].fval, fvals[i]);
    ck_assert_int_eq(t[13 + i].lit_dt, i >= 7 ? TEENY_DT_F32 : TEENY_DT_VOID);
  }
  ck_assert_int_eq(t[22].kind, TK_IDENT);
  ck_assert_int_eq(t[22].loc.col, (int)strlen(src) - 3);
  ck_assert(teeny__tok_is(&t[22], "true"));
  ck_assert_int_eq(t[n - 1].kind, TK_EOF);

  /* and through the parser, into the AST */
  reset();
  teeny_program *p = ok("void f() { u64 a = 9ul; f32 b = .5f; bool c = false; }");
  teeny_func *f = func(p, "f");
  ck_assert_int_eq(decl(f, "a")->expr->kind, EX_INT);
  ck_assert_int_eq(decl(f, "a")->expr->lit_dt, TEENY_DT_U64);
  ck_assert_int_eq(decl(f, "b")->expr->kind, EX_FLOAT);
  ck_assert_double_eq(decl(f, "b")->expr->fval, 0.5);
  ck_assert_int_eq(decl(f, "c")->expr->kind, EX_BOOL);
  ck_assert_uint_eq(decl(f, "c")->expr->ival, 0);
}
END_TEST

START_TEST(punctuators_and_locations) {
  const char *src = "a<<=b>>=c...d->e++--f+=g|=h^=i&&j||k!=l\n"
                    "  /* x\n y */ #pragma once\n"
                    "#include <teeny/dsl.h>\n"
                    "\t z // tail\n";
  cx.text = src;
  cx.len = strlen(src);
  int n = 0;
  teeny_token *t = teeny__lex(&cx, &n);
  ck_assert_ptr_nonnull(t);
  const char *want[] = {"a", "<<=", "b", ">>=", "c", "...", "d", "->", "e",
                        "++", "--", "f", "+=", "g", "|=", "h", "^=", "i",
                        "&&", "j", "||", "k", "!=", "l", "z"};
  ck_assert_int_eq(n, (int)TEENY_ARRAY_LEN(want) + 1);
  for (size_t i = 0; i < TEENY_ARRAY_LEN(want); i++)
    ck_assert_msg(teeny__tok_is(&t[i], want[i]), "token %zu is not %s", i,
                  want[i]);
  ck_assert_int_eq(t[24].loc.line, 5);
  ck_assert_int_eq(t[24].loc.col, 3);
  ck_assert_int_eq(t[3].loc.col, 6);
}
END_TEST

START_TEST(scopes_and_slots) {
  teeny_program *p = ok(
      "TEENY_CONST(N);\n"
      "i32 twice(i32 x) { return x + x; }\n"
      "void f(i32 x)\n"
      "{\n"
      "    i32 y = x;\n"
      "    { i32 x = 2; y = x + N; }\n"
      "    for (i32 y = 0; y < 3; y++) { i32 x = y; }\n"
      "    for (i32 y = 0; y < 3; y++) ;\n"
      "    i32 twice = 3;\n"
      "    y = twice + x;\n"
      "}\n");
  teeny_func *f = func(p, "f");
  ck_assert_int_eq(f->nvars, 7);
  ck_assert_int_eq(decl(f, "y")->var, 1);
  teeny_stmt *inner = body(f, 1);
  ck_assert_int_eq(inner->body[0]->var, 2);
  teeny_expr *sum = inner->body[1]->expr->rhs;
  ck_assert_int_eq(sum->lhs->sym_index, 2); /* the inner x */
  ck_assert_int_eq(sum->rhs->sym, SYM_GENERIC);
  ck_assert_int_eq(inner->body[1]->expr->lhs->sym_index, 1);
  teeny_stmt *loop = body(f, 2);
  ck_assert_int_eq(loop->init->var, 3);
  ck_assert_int_eq(loop->loop->body[0]->var, 4);
  ck_assert_int_eq(loop->loop->body[0]->expr->sym_index, 3);
  ck_assert_int_eq(body(f, 3)->init->var, 5);
  teeny_expr *last = body(f, 5)->expr;
  ck_assert_int_eq(last->lhs->sym_index, 1);     /* the outer y again */
  ck_assert_int_eq(last->rhs->lhs->sym, SYM_VAR); /* the variable twice */
  ck_assert_int_eq(last->rhs->lhs->sym_index, 6);
  ck_assert_int_eq(last->rhs->rhs->sym_index, 0); /* the parameter */
  ck_assert_str_eq(f->var_names[6], "twice");
}
END_TEST

START_TEST(file_level_forms) {
  teeny_program *p = ok(
      "#include <teeny/dsl.h>\n"
      "  #pragma once\n"
      ";\n"
      "TEENY_DTYPE(D, float, double);\n"
      "TEENY_CONST(N);\n"
      "TEENY_BACKWARD(fwd, bwd);\n"
      "TEENY_KERNEL(D, N) void fwd(D *x, const D * const y) "
      "{ store(x, load(y + arange(0, N))); }\n"
      "TEENY_KERNEL(D, N) static void bwd(ptr(D) x) "
      "{ tile(D) t = full(D, 1, N); store(x + arange(0, N), t); }\n"
      "TEENY_KERNEL() void plain(void) {}\n"
      "void helper(_Bool b, int i, float f, double d, bf16 h) {}\n");
  ck_assert_int_eq(p->nbackwards, 1);
  ck_assert_str_eq(p->backwards[0].fwd, "fwd");
  ck_assert_int_eq(p->backwards[0].bwd_loc.col, 21);
  teeny_func *fwd = func(p, "fwd");
  ck_assert_int_eq(fwd->backward, teeny__program_find_func(p, "bwd"));
  ck_assert_int_eq(func(p, "bwd")->backward, -1);
  ck_assert_int_eq(p->generics[0].allowed[0], TEENY_DT_F32);
  ck_assert_int_eq(p->generics[0].allowed[1], TEENY_DT_F64);
  ck_assert(fwd->params[1].type->is_ptr);
  teeny_expr *full = decl(func(p, "bwd"), "t")->expr;
  ck_assert_int_eq(full->args[0]->sym, SYM_DTYPE);
  ck_assert_int_eq(full->args[0]->type->generic, 0);
  ck_assert_int_eq(func(p, "plain")->nparams, 0);
  ck_assert_int_eq(func(p, "plain")->nkgenerics, 0);
  teeny_func *h = func(p, "helper");
  teeny_dtype want[] = {TEENY_DT_BOOL, TEENY_DT_I32, TEENY_DT_F32,
                        TEENY_DT_F64, TEENY_DT_BF16};
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(h->params[i].type->dt, want[i]);
  ck_assert_int_eq(teeny__program_find_generic(p, "N"), 1);
  ck_assert_int_eq(teeny__program_find_generic(p, "M"), -1);
  ck_assert_int_eq(teeny__program_find_func(p, "nope"), -1);
}
END_TEST

START_TEST(predefined_float_constants) {
  teeny_program *p = ok("void f() { f32 x = -INFINITY; f32 y = NAN + x; }");
  teeny_expr *inf = decl(func(p, "f"), "x")->expr->lhs;
  ck_assert_int_eq(inf->kind, EX_NAME);
  ck_assert_str_eq(inf->name, "INFINITY");
  ck_assert_int_eq(inf->sym, SYM_NONE); /* irgen gives it its value */
  ck_assert_int_eq(inf->sym_index, -1);
}
END_TEST

START_TEST(user_names_shadow_builtins) {
  /* a helper named like a builtin is called instead of it; a generic and a
   * variable named like one are values, and a call still reaches the
   * builtin (on the host, the builtins are macros: the same) */
  teeny_program *p = ok("TEENY_CONST(sum);\n"
                        "f32 tanh(f32 x) { return x; }\n"
                        "void f(ptr(f32) q) {\n"
                        "  i32 program_id = program_id(0);\n"
                        "  f32 max = tanh(load(q + program_id + sum));\n"
                        "  f32 y = max(full(f32, max, 16));\n"
                        "}");
  teeny_func *f = func(p, "f");
  teeny_expr *pid = decl(f, "program_id")->expr;
  ck_assert_int_eq(pid->sym, SYM_BUILTIN);
  ck_assert_int_eq(pid->sym_index, BI_PROGRAM_ID);
  teeny_expr *t = decl(f, "max")->expr;
  ck_assert_int_eq(t->sym, SYM_FUNC);
  ck_assert_int_eq(t->sym_index, teeny__program_find_func(p, "tanh"));
  teeny_expr *sum = t->args[0]->args[0]->rhs; /* load(q + program_id + sum) */
  ck_assert_int_eq(sum->sym, SYM_GENERIC);
  ck_assert_int_eq(t->args[0]->args[0]->lhs->rhs->sym, SYM_VAR);
  teeny_expr *m = decl(f, "y")->expr;
  ck_assert_int_eq(m->sym, SYM_BUILTIN);
  ck_assert_int_eq(m->sym_index, BI_MAX);
  ck_assert_int_eq(m->args[0]->args[1]->sym, SYM_VAR);
  /* #undef lines (for the host compiler) are skipped */
  ok("#undef tanh\nf32 tanh(f32 x) { return x; }\n");
}
END_TEST

START_TEST(struct_slots) {
  /* a struct variable takes a slot per leaf; a field of one is its slots */
  teeny_program *p = ok("typedef struct { f32 x; f32 y; } pt;\n"
                        "typedef struct { pt a; tile(i32) n; pt b; } seg;\n"
                        "void f(seg s) {\n"
                        "  tile(seg) t = s;\n"
                        "  t.b.y = t.a.x;\n"
                        "  pt q = (pt){.y = 1.0f, .x = 2.0f};\n"
                        "}");
  ck_assert_int_eq(p->nstructs, 2);
  const teeny_struct *seg = &p->structs[1];
  ck_assert_str_eq(seg->name, "seg");
  ck_assert_int_eq(seg->nleaves, 5);
  ck_assert_str_eq(seg->leaf_name[3], "b.x");
  ck_assert(seg->leaf_type[2]->is_tile); /* n */
  teeny_func *f = func(p, "f");
  ck_assert_int_eq(f->params[0].var, 0);
  ck_assert_int_eq(decl(f, "t")->var, 5);
  ck_assert_str_eq(f->var_names[5 + 4], "t.b.y");
  teeny_expr *as = body(f, 1)->expr; /* t.b.y = t.a.x */
  ck_assert_int_eq(as->lhs->sym, SYM_VAR);
  ck_assert_int_eq(as->lhs->sym_index, 5 + 4);
  ck_assert_int_eq(as->lhs->nslots, 1);
  ck_assert_int_eq(as->rhs->sym_index, 5);
  ck_assert_int_eq(as->rhs->lhs->nslots, 2); /* t.a */
  ck_assert_int_eq(decl(f, "t")->expr->nslots, 5);
  teeny_expr *lit = decl(f, "q")->expr;
  ck_assert_int_eq(lit->kind, EX_INIT);
  ck_assert_str_eq(lit->desig[0], "y");
  ck_assert_int_eq(f->nvars, 12);
}
END_TEST

START_TEST(typed_const_decl) {
  teeny_program *p = ok("TEENY_CONST(N);\nTEENY_CONST(EPS, f32);\nTEENY_CONST(ON, _Bool);\n");
  ck_assert_int_eq(p->generics[0].cdt, TEENY_DT_VOID); /* a weak i32 */
  ck_assert_int_eq(p->generics[1].cdt, TEENY_DT_F32);
  ck_assert_int_eq(p->generics[2].cdt, TEENY_DT_BOOL);
  ck_assert(!p->generics[1].is_dtype);
}
END_TEST

START_TEST(loop_exit_flags) {
  /* break and continue get their own loop's flag slot */
  teeny_program *p = ok("void f(i32 n) {\n"
                        "  for (i32 i = 0; i < n; i++) {\n"
                        "    while (n) { if (i) break; continue; }\n"
                        "    if (i == 3) continue;\n"
                        "    if (i == 4) break;\n"
                        "  }\n"
                        "}");
  teeny_func *f = func(p, "f");
  teeny_stmt *outer = body(f, 0);
  ck_assert_int_eq(outer->kind, ST_FOR);
  teeny_stmt *inner = outer->loop->body[0];
  ck_assert_int_eq(inner->kind, ST_WHILE);
  ck_assert_int_ge(outer->brk_slot, 0);
  ck_assert_int_ge(outer->cont_slot, 0);
  ck_assert_int_ge(inner->brk_slot, 0);
  ck_assert_int_ge(inner->cont_slot, 0);
  ck_assert_int_ne(outer->brk_slot, inner->brk_slot);
  ck_assert_int_eq(inner->loop->body[0]->then->var, inner->brk_slot);
  ck_assert_int_eq(inner->loop->body[1]->var, inner->cont_slot);
  ck_assert_int_eq(outer->loop->body[1]->then->var, outer->cont_slot);
  ck_assert_int_eq(outer->loop->body[2]->then->var, outer->brk_slot);
  ck_assert_int_eq(f->nvars, 6); /* n, i and four flags */
  /* a loop without exits has no flags; one left only by return counts
   * as returning */
  p = ok("i32 g(i32 n) { while (n) { n--; } for (;;) { if (n) return n; } }");
  ck_assert_int_eq(body(func(p, "g"), 0)->brk_slot, -1);
  ck_assert_int_eq(body(func(p, "g"), 0)->cont_slot, -1);
}
END_TEST

START_TEST(builtin_table) {
  ck_assert_int_eq(teeny__builtin_find("load"), BI_LOAD);
  ck_assert_int_eq(teeny__builtin_find("dot"), BI_DOT);
  ck_assert_int_eq(teeny__builtin_find("nope"), -1);
  const teeny_builtin_info *bi = teeny__builtin_info(BI_FULL);
  ck_assert_str_eq(bi->name, "full");
  ck_assert_int_eq(bi->minargs, 3);
  ck_assert_int_eq(bi->maxargs, 6); /* full(T, value, d0 .. d3) */
  ck_assert_ptr_null(teeny__builtin_info(BI__COUNT));
  for (int i = 0; i < BI__COUNT; i++)
    ck_assert_int_eq(teeny__builtin_find(teeny__builtin_info(i)->name), i);
}
END_TEST

/* ---- bad sources -------------------------------------------------------------- */

typedef struct bad_case {
  const char *src;  /* the source */
  size_t len;       /* its length; 0: strlen */
  int line, col;    /* where the first error must be */
  const char *msg;  /* a substring of its message */
} bad_case;

#define KP "TEENY_KERNEL() void k(ptr(i32) p, i32 x) "

static const bad_case bad_cases[] = {
    /* ---- lexer ---- */
    {"void f() { i32 x = \"hi\"; }", 0, 1, 20,
     "a string literal can only be the message of device_print, device_assert or static_assert"},
    {"void f() { device_print(\"a\\qb\"); }", 0, 1, 27, "unknown escape '\\q' in a string literal"},
    {"void f() { device_print(\"abc); }", 0, 1, 25, "unterminated string literal"},
    {"void f() { device_print(\"a\\0b\"); }", 0, 1, 25, "string literals may not hold byte 0x00"},
    {"void f(i32 x) { device_print(x); }", 0, 1, 30,
     "the message of device_print must be a string literal"},
    {"void f(i32 x) { device_assert(x, x); }", 0, 1, 34,
     "the message of device_assert must be a string literal"},
    {"void f(i32 x) { static_assert(x); }", 0, 1, 17,
     "'static_assert' takes 2 arguments, but 1 was given"},
    {"void f() { device_assert(); }", 0, 1, 12,
     "'device_assert' takes at least 2 arguments, but 0 were given"},
    {"void f() { i32 s = sizeof(void); }", 0, 1, 27, "sizeof(void) has no size"},
    {"void f() { _Static_assert(1, \"\"); }", 0, 1, 12, "write static_assert(condition"},
    {"void f() { i32 x = 'a'; }", 0, 1, 20, "are not part of the kernel language"},
    {"#define N 4\n", 0, 1, 1,
     "preprocessor directive '#define' is not supported: teenyc has no preprocessor"},
    {"void f() {}\n  #if X\n", 0, 2, 3, "directive '#if' is not supported"},
    {"void f() {}\n  /* oops\n\n", 0, 2, 3, "unterminated comment"},
    {"void f() {\0}", 12, 1, 11, "invalid character (byte 0x00)"},
    {"void f() { i32 \xc3\xa9 = 1; }", 0, 1, 16, "invalid character (byte 0xc3)"},
    {"void f() {\x1b}", 0, 1, 11, "invalid character (byte 0x1b)"},
    {"void f() { @ }", 0, 1, 12, "unexpected character '@'"},
    {"void f() { i32 x = 1; # }", 0, 1, 23, "unexpected '#'"},
    {"i64 f() { return 9223372036854775808; }", 0, 1, 18,
     "integer literal too large"},
    {"void f() { u64 x = 18446744073709551616ul; }", 0, 1, 20,
     "integer literal too large"},
    {"void f() { u32 x = 5000000000u; }", 0, 1, 20, "too large for u32"},
    {"void f() { i32 x = 09; }", 0, 1, 21, "invalid digit '9' in octal literal"},
    {"void f() { i32 x = 12abc; }", 0, 1, 20, "invalid suffix 'abc' on integer literal"},
    {"void f() { f32 x = 1e; }", 0, 1, 20, "exponent of floating literal has no digits"},
    {"void f() { f64 x = 1.0L; }", 0, 1, 20, "invalid suffix 'L' on floating literal"},
    {"void f() { f64 x = 1e999; }", 0, 1, 20, "floating literal out of range"},
    {"void f() { i32 x = 0x; }", 0, 1, 20, "hex literal has no digits"},
    {"void f() {\n  i32 a_name_that_is_far_too_long_for_teenyc_because_it_goes_on_and_on_and_on = 1; }",
     0, 2, 7, "is too long"},
    /* ---- parser ---- */
    {"void f() { i32 x = 1 }", 0, 1, 22, "expected ';' after declaration, found '}'"},
    {"void f(i32 x) {\n  x = 1\n}", 0, 3, 1, "expected ';' after expression, found '}'"},
    {"void f(ptr(f32) p) { f32 x = p[0]; }", 0, 1, 31,
     "indexing is not supported; use load() with a pointer offset"},
    {"void f(i32 p) { i32 x = p.y; }", 0, 1, 26, "'.y' of a value that is not a struct (i32)"},
    {"void f(ptr(f32) p) { f32 x = p->y; }", 0, 1, 31, "'->' is not supported"},
    {"void f() { tile(tile(f32)) x; }", 0, 1, 17, "tile(tile(...)) is not allowed"},
    {"void f(ptr(ptr(f32)) p) {}", 0, 1, 12, "pointers to pointers are not supported"},
    {"void f(f32 **p) {}", 0, 1, 13, "pointers to pointers are not supported"},
    {"void f(ptr(tile(f32)) p) {}", 0, 1, 12, "ptr(tile(...)) is not allowed"},
    {"void f(void *p) {}", 0, 1, 13, "pointers to void"},
    {"void f(foo x) {}", 0, 1, 8, "unknown type name 'foo'"},
    {"TEENY_CONST(N);\nvoid f(N x) {}", 0, 2, 8, "'N' is a constant (TEENY_CONST), not a type"},
    {"void f(D x) {}\nTEENY_DTYPE(D);", 0, 1, 8,
     "'D' is used before its TEENY_DTYPE(...) declaration"},
    {"TEENY_KERNEL(D) void k() {}", 0, 1, 14, "TEENY_KERNEL names 'D'"},
    {"TEENY_DTYPE(D);\nTEENY_KERNEL(D, D) void k() {}", 0, 2, 17,
     "TEENY_KERNEL lists 'D' twice"},
    {"TEENY_KERNEL();\nvoid k() {}", 0, 1, 15,
     "expected a function after TEENY_KERNEL(...), found ';'"},
    {"TEENY_DTYPE(D, f33);", 0, 1, 16, "'f33' is not a builtin dtype"},
    {"TEENY_DTYPE(D, f32, float);", 0, 1, 21, "dtype 'f32' is listed twice"},
    {"TEENY_CONST(A, B);", 0, 1, 16, "'B' is not a builtin dtype; a constant has a builtin dtype"},
    {"TEENY_DTYPE(D);\nTEENY_CONST(A, D);", 0, 2, 16, "'D' is not a builtin dtype"},
    {"TEENY_CONST(A, f32, i32);", 0, 1, 19, "TEENY_CONST takes a name and a dtype"},
    {"TEENY_DTYPE(f32);", 0, 1, 13, "'f32' is a dtype name and cannot name a generic"},
    {"TEENY_BIND(D, f32);", 0, 1, 1, "TEENY_BIND(...) is written by the compiler"},
    {"void f(i32 x) { switch (x) {} }", 0, 1, 17, "'switch' is not supported"},
    {"void f() { goto out; }", 0, 1, 12, "'goto' is not supported"},
    {"void f() { unsigned x = 1; }", 0, 1, 12, "'unsigned' is not supported in kernels; use u8"},
    {"void f(i32 n) { for (i32 i = 0; i < n; i++, n--) {} }", 0, 1, 43,
     "the comma operator is not supported"},
    {"void f(i32 x) { i32 y = &x; }", 0, 1, 25, "taking an address ('&') is not supported"},
    {"void f(ptr(i32) p) { i32 y = *p; }", 0, 1, 30, "dereferencing ('*') is not supported"},
    {"void f() { void x; }", 0, 1, 17, "variable 'x' is declared void"},
    {"void f() { f32 a[4]; }", 0, 1, 17, "arrays are not supported"},
    {"i32 x = 1;", 0, 1, 7, "variables at file level are not supported"},
    {"void f(i32 x);", 0, 1, 14, "function declarations without a body are not supported"},
    {"void f(i32 x) { if (x) i32 y = 1; }", 0, 1, 24,
     "a declaration cannot be the body of 'if'"},
    {"void f() { else {} }", 0, 1, 12, "'else' without a matching 'if'"},
    {"void f() { g(1, 2; }", 0, 1, 18, "expected ')' after the arguments of 'g', found ';'"},
    {"void f() {\n  i32 x = 1;\n", 0, 3, 1,
     "expected '}' to close the block opened at line 1, found end of file"},
    {"void f() { i32 f32 = 1; }", 0, 1, 16, "'f32' is a dtype name and cannot name a variable"},
    {"void f(i32 tile) {}", 0, 1, 12, "'tile' is a reserved word"},
    {"void f(i32 x, ...) {}", 0, 1, 15, "variadic functions are not supported"},
    {"void f(i32 x) { f32 y = f32(x); }", 0, 1, 25, "'f32' is a type, not a function"},
    {"void f() { out: ; }", 0, 1, 12, "labels are not supported"},
    {"void f() { TEENY_DTYPE(D); }", 0, 1, 12, "TEENY_DTYPE(...) belongs at file level"},
    {"void f() { static i32 x; }", 0, 1, 12, "'static' is only allowed before a function"},
    {"void f(i32 x) { x++ ++; }", 0, 1, 21, "expected ';' after expression, found '++'"},
    {"void f() {} }", 0, 1, 13, "expected a function, TEENY_DTYPE"},
    {"void f(i32 x) { i32 y = x ? 1; }", 0, 1, 30, "expected ':' in a conditional expression"},
    {"void f(i32 x) { if x {} }", 0, 1, 20, "expected '(' after 'if', found 'x'"},
    {"void f() { i32 x = ; }", 0, 1, 20, "expected an expression, found ';'"},
    {"void f() { i32 x = return; }", 0, 1, 20, "expected an expression, found 'return'"},
    {"void f() { do {} while (1) }", 0, 1, 28, "expected ';' after 'do ... while (...)'"},
    /* ---- structs ---- */
    {"void f() { struct T x; }", 0, 1, 19, "unknown struct 'T'"},
    {"typedef struct { } S;", 0, 1, 20, "struct S has no fields"},
    {"typedef struct { f32 a; i32 a; } S;", 0, 1, 29, "duplicate field 'a' in S"},
    {"typedef struct { f32 a[4]; } S;", 0, 1, 23, "arrays and bit-fields are not supported"},
    {"typedef f32 real;", 0, 1, 9, "typedef only names structs here"},
    {"typedef struct { f32 a; } S;\nvoid f(ptr(S) p) {}", 0, 2, 12,
     "pointers to structs are not supported"},
    {"typedef struct { f32 a; } S;\nvoid f(S *p) {}", 0, 2, 10,
     "pointers to structs are not supported"},
    {"typedef struct { f32 a; } S;\nvoid f(S s) { f32 y = s.b; }", 0, 2, 24,
     "S has no field 'b'"},
    {"void f(i32 x) { i32 y = x.a; }", 0, 1, 26, "'.a' of a value that is not a struct"},
    {"typedef struct { f32 a; } S;\nTEENY_KERNEL() void k(S s) {}", 0, 2, 25,
     "kernel parameter 's' cannot be a struct"},
    {"typedef struct { f32 a; } S;\nvoid f(S s) { s.a.b = 1.0f; }", 0, 2, 18,
     "'.b' of a value that is not a struct"},
    {"struct S { f32 a; };\nstruct S { f32 b; };", 0, 2, 8, "redefinition of struct S"},
    {"typedef struct { f32 a; } S;\nvoid f() { i32 S = 1; }", 0, 2, 16,
     "'S' is a struct type and cannot name a variable"},
    {"void f(i32 x) { i32 y = (i32){x}; }", 0, 1, 26, "only structs have compound literals"},
    {"void f(i32 x) { i32 y = {x}; }", 0, 1, 25, "only structs take a braced initializer"},
    {"typedef struct { f32 a; } S;\nvoid f(f32 x) { S s = (S)x; }", 0, 2, 23,
     "a struct cannot be converted from a value"},
    {"typedef struct { f32 a; } S;\nvoid f(S s) { f32 y = s->a; }", 0, 2, 24,
     "'->' is not supported: there are no pointers to structs"},
    /* ---- resolver ---- */
    {"void k(ptr(i32) p, i32 n_elements)\n{\n    i32 x = n_element;\n}", 0, 3, 13,
     "unknown name 'n_element'; did you mean 'n_elements'?"},
    {"void k(ptr(i32) p) { i32 v = lod(p); }", 0, 1, 30,
     "unknown function 'lod'; did you mean 'load'?"},
    {"void k() { i32 v = q; }", 0, 1, 20, "unknown name 'q'"},
    {"TEENY_DTYPE(D);\nvoid f() { i32 x = D; }", 0, 2, 20, "'D' is a dtype, not a value"},
    {"void f() { i32 x = f32 + 1; }", 0, 1, 20, "'f32' is a dtype, not a value"},
    {"void f(i32 x) { x(2); }", 0, 1, 17, "'x' is a variable, not a function"},
    {"TEENY_CONST(N);\nvoid f() { N(2); }", 0, 2, 12, "'N' is a generic, not a function"},
    {KP "{ i32 v = load(); }", 0, 1, 52, "'load' takes 1 to 3 arguments, but 0 were given"},
    {KP "{ i32 v = program_id(0, 1); }", 0, 1, 52,
     "'program_id' takes 1 argument, but 2 were given"},
    {"i32 h(i32 a, i32 b) { return a; }\nvoid f() { i32 v = h(1); }", 0, 2, 20,
     "'h' takes 2 arguments, but 1 was given"},
    {"TEENY_KERNEL() void k() {}\nvoid f() { k(); }", 0, 2, 12,
     "kernel 'k' cannot be called; only helpers can"},
    {KP "{ f32 s = reduce(load(p), 0, max); }", 0, 1, 71,
     "the combine function of reduce must be a helper"},
    {"i32 h3(i32 a, i32 b, i32 c) { return a; }\n" KP "{ i32 s = reduce(load(p), 0, h3); }",
     0, 2, 71, "the combine function 'h3' of reduce must take 2 parameters"},
    {"void h2(i32 a, i32 b) {}\n" KP "{ i32 s = scan(load(p), 0, h2); }", 0, 2, 69,
     "must return a value"},
    {KP "{ i32 s = reduce(load(p), 0, 3); }", 0, 1, 71,
     "the third argument of reduce must name a helper"},
    {"void f(i32 x) { i32 y = (x = 2); }", 0, 1, 28,
     "assignment inside an expression is not supported; make it a statement"},
    {"void f(i32 x) { if (x += 1) {} }", 0, 1, 23,
     "assignment inside an expression is not supported"},
    {"void g(i32 a) {}\nvoid f(i32 x) { g(x++); }", 0, 2, 20,
     "inside an expression is not supported; make it a statement"},
    {"void f(i32 x) { i32 y = 0; y = x = 1; }", 0, 1, 34,
     "assignment inside an expression is not supported"},
    {"TEENY_CONST(N);\nvoid f() { N = 3; }", 0, 2, 12, "cannot assign to 'N'"},
    {"void g() {}\nvoid f() { g = 3; }", 0, 2, 12, "cannot assign to function 'g'"},
    {"void f(i32 x) { x + 1 = 2; }", 0, 1, 19, "the target of an assignment must be a variable"},
    {"void f() { 3++; }", 0, 1, 12, "the target of '++' must be a variable"},
    {"void f(i32 x) { if (x) { break; } }", 0, 1, 26, "'break' outside a loop"},
    {"void f(i32 x) {\n  while (x) { }\n  continue;\n}", 0, 3, 3, "'continue' outside a loop"},
    {"i32 g(i32 a, i32 b) { break; return a; }", 0, 1, 23, "'break' outside a loop"},
    {"void f() { return 1; }", 0, 1, 19, "'return' with a value in 'f', which returns void"},
    {"i32 f() { return; }", 0, 1, 11, "'return' without a value in 'f'"},
    {"i32 f(i32 x) {\n  if (x) return 1;\n}", 0, 1, 5,
     "non-void helper 'f' may reach the end of its body without returning a value"},
    {"i32 f(i32 x) {\n  if (x) return 1; else { x = 2; }\n}", 0, 1, 5,
     "may reach the end of its body"},
    {"i32 f(i32 x) { while (1) { if (x) break; } }", 0, 1, 5, "may reach the end of its body"},
    {"i32 f(i32 x) { while (x) { return 1; } }", 0, 1, 5, "may reach the end of its body"},
    {"i32 f(i32 x) { return f(x - 1); }", 0, 1, 23,
     "recursive call: 'f' -> 'f'; helpers are inlined and cannot recurse"},
    {"i32 f(i32 x) { return g(x); }\ni32 g(i32 x) { return f(x); }", 0, 2, 23,
     "recursive call: 'f' -> 'g' -> 'f'; helpers are inlined and cannot recurse"},
    {"f32 c(f32 a, f32 b) { return sum(scan(a, 0, c)); }", 0, 1, 45,
     "recursive call: 'c' -> 'c'"},
    {"TEENY_KERNEL() i32 k() { return 1; }", 0, 1, 16, "kernel 'k' must return void"},
    {"TEENY_KERNEL() void k(tile(f32) x) {}", 0, 1, 33,
     "kernel parameter 'x' cannot be a tile"},
    {"TEENY_DTYPE(D);\nTEENY_KERNEL() void k(ptr(D) p) {}", 0, 2, 23,
     "kernel 'k' uses generic 'D' but TEENY_KERNEL(...) does not list it"},
    {"TEENY_CONST(N);\ni32 h() { return N; }\nTEENY_KERNEL() void k(ptr(i32) p) { store(p, h()); }",
     0, 3, 46, "kernel 'k' uses generic 'N' (through helper 'h') but TEENY_KERNEL(...) does not list it"},
    {"TEENY_DTYPE(D);\nTEENY_CONST(N);\nf32 h1() { return (D)1; }\nf32 h2() { return h1(); }\n"
     "TEENY_KERNEL(N) void k(ptr(f32) p) { store(p, h2()); }",
     0, 5, 47, "uses generic 'D' (through helper 'h2')"},
    {"TEENY_BACKWARD(f, g);\nvoid f() {}\nTEENY_KERNEL() void g() {}", 0, 1, 16,
     "'f' in TEENY_BACKWARD(...) is not a kernel"},
    {"TEENY_BACKWARD(fwd, bwdd);\nTEENY_KERNEL() void fwd() {}\nTEENY_KERNEL() void bwd() {}",
     0, 1, 21, "TEENY_BACKWARD names 'bwdd', which is not a function in this file; did you mean 'bwd'?"},
    {"TEENY_DTYPE(D);\nTEENY_BACKWARD(f, g);\nTEENY_KERNEL(D) void f(ptr(D) p) {}\n"
     "TEENY_KERNEL() void g() {}", 0, 2, 19, "the kernels' generic lists differ"},
    {"TEENY_KERNEL() void f() {}\nTEENY_BACKWARD(f, f);", 0, 2, 19,
     "cannot be its own backward kernel"},
    {"void f() {}\nvoid f() {}", 0, 2, 6, "redefinition of function 'f'"},
    {"TEENY_CONST(N);\nTEENY_DTYPE(N);", 0, 2, 13, "redefinition of generic 'N'"},
    {"TEENY_CONST(g);\nvoid g() {}", 0, 2, 6, "function 'g' has the name of a generic"},
    {"void f(i32 a, f32 a) {}", 0, 1, 19, "duplicate parameter 'a' in 'f'"},
    {"void f(i32 a) { i32 a = 1; }", 0, 1, 21, "redeclaration of 'a' in the same scope"},
    {"void f() { i32 b; { i32 c; } f32 b; }", 0, 1, 34, "redeclaration of 'b'"},
    {"void f() { i32 x = N; }\nTEENY_CONST(N);", 0, 1, 20,
     "'N' is used before its TEENY_CONST(...) declaration"},
    {"void f(i32 x) { tile(f32) z = zeros(x, 4); }", 0, 1, 37,
     "the first argument of zeros must be a dtype"},
    {"void f() { tile(f32) z = zeros(tile(f32), 4); }", 0, 1, 32,
     "the first argument of zeros must be a dtype, not 'tile(f32)'"},
    {"void f() { tile(f32) z = full(4, 1.0, 4); }", 0, 1, 31,
     "the first argument of full must be a dtype"},
    {"void h() {}\nvoid f() { i32 y = h; }", 0, 2, 20, "'h' is a function, not a value"},
    {"void f() { i32 y = exp; }", 0, 1, 20, "'exp' is a builtin function, not a value"},
    {"void f(i32 n) { for (i32 i = 0; i < n; i++) {} i = 1; }", 0, 1, 48, "unknown name 'i'"},
    {"void f() { i32 x = 1, x = 2; }", 0, 1, 23, "redeclaration of 'x'"},
    {"void f() { f32 x = (D)1; }", 0, 1, 21, "unknown type name 'D'"},
    {"TEENY_CONST(N);\nvoid f(i32 y) { f32 x = (N)y; }", 0, 2, 26,
     "'N' is a constant (TEENY_CONST), not a type"},
    {"void f() { f32 NAN = 1.0; }", 0, 1, 16, "'NAN' is a reserved word"},
    {"void f() { INFINITY = 1.0; }", 0, 1, 12, "cannot assign to constant 'INFINITY'"},
    {"void f() { f32 x = INFINITE; }", 0, 1, 20,
     "unknown name 'INFINITE'; did you mean 'INFINITY'?"},
};

START_TEST(bad_source) {
  const bad_case *c = &bad_cases[_i];
  size_t len = c->len ? c->len : strlen(c->src);
  teeny_program *p = front_n(c->src, len);
  ck_assert_msg(p == NULL, "case %d was accepted: %s", _i, c->src);
  ck_assert_msg(diags.n >= 1 && cx.nerrors >= 1, "case %d: no diagnostic", _i);
  const teeny_diag *d = &diags.v[0];
  ck_assert_msg(d->level == TEENY_DIAG_ERROR, "case %d: first is not an error", _i);
  ck_assert_msg(strstr(d->message, c->msg) != NULL,
                "case %d: message \"%s\" lacks \"%s\"", _i, d->message, c->msg);
  ck_assert_msg(d->line == c->line && d->col == c->col,
                "case %d (\"%s\"): at %d:%d, want %d:%d", _i, d->message,
                d->line, d->col, c->line, c->col);
}
END_TEST

START_TEST(errors_keep_going_and_stop_at_limit) {
  /* resolve.c reports several errors in one run... */
  ck_assert_ptr_null(front("void f() { i32 a = x1; i32 b = x2; i32 c = x3; }"));
  ck_assert_int_eq(cx.nerrors, 3);
  ck_assert_uint_eq(diags.nerrors, 3);
  ck_assert_int_eq(diags.v[2].col, 44);
  /* ...but stops after TEENY_MAX_ERRORS. */
  reset();
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__buf_puts(&b, "void f() {\n");
  for (int i = 0; i < 1000; i++)
    teeny__buf_printf(&b, "  i32 v%d = unknown%d;\n", i, i);
  teeny__buf_puts(&b, "}\n");
  ck_assert_ptr_null(front(b.p));
  ck_assert_int_eq(cx.nerrors, TEENY_MAX_ERRORS);
  ck_assert_uint_le(diags.n, TEENY_MAX_ERRORS);
  teeny__buf_free(&b);
}
END_TEST

START_TEST(notes_point_at_the_first_definition) {
  ck_assert_ptr_null(front("void f() {}\n\nvoid f() {}"));
  ck_assert_uint_eq(diags.n, 2);
  ck_assert_int_eq(diags.v[1].level, TEENY_DIAG_NOTE);
  ck_assert_int_eq(diags.v[1].line, 1);
  ck_assert_int_eq(diags.v[1].col, 6);
}
END_TEST

/* ---- hostile inputs ------------------------------------------------------------- */

/* "void f() { <prefix x n> <middle> <suffix x n> }" */
static char *nested(const char *prefix, const char *middle, const char *suffix,
                    int n) {
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__buf_puts(&b, "void f(i32 x) { ");
  for (int i = 0; i < n; i++)
    teeny__buf_puts(&b, prefix);
  teeny__buf_puts(&b, middle);
  for (int i = 0; i < n; i++)
    teeny__buf_puts(&b, suffix);
  teeny__buf_puts(&b, " }");
  return teeny__buf_take(&b, NULL);
}

static void expect_too_deep(const char *prefix, const char *middle,
                            const char *suffix, int n) {
  reset();
  char *src = nested(prefix, middle, suffix, n);
  ck_assert_ptr_null(front(src));
  ck_assert_msg(diags.n >= 1 && strstr(diags.v[0].message,
                                       "nesting too deep (limit 200)"),
                "%s...: %s", prefix, diags.n ? diags.v[0].message : "(none)");
  teeny__free(src);
}

START_TEST(deep_nesting_is_an_error_not_a_crash) {
  expect_too_deep("(", "x", ")", 100000);
  expect_too_deep("-", "x", "", 100000);
  expect_too_deep("++", "x", "", 100000);
  expect_too_deep("x ? x : ", "x", "", 100000);
  expect_too_deep("x = ", "x", "", 100000);
  expect_too_deep("x + ", "x", "", 100000);
  expect_too_deep("(f32)", "x", "", 100000);
  expect_too_deep("sum(", "x", ")", 100000);
  expect_too_deep("{", "", "}", 100000);
  expect_too_deep("if (x) ", ";", "", 100000);
  expect_too_deep("while (x) ", ";", "", 100000);
  expect_too_deep("tile(", "f32", ")", 100000);
  /* exact place of the limit: 201 nested parentheses */
  reset();
  char *src = nested("(", "x", ")", 201);
  ck_assert_ptr_null(front(src));
  ck_assert_int_eq(diags.v[0].line, 1);
  ck_assert_int_eq(diags.v[0].col, 17 + 200);
  teeny__free(src);
  /* and 150 are fine */
  reset();
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__buf_puts(&b, "void f(i32 x) { i32 y = ");
  for (int i = 0; i < 150; i++)
    teeny__buf_putc(&b, '(');
  teeny__buf_putc(&b, 'x');
  for (int i = 0; i < 150; i++)
    teeny__buf_putc(&b, ')');
  teeny__buf_puts(&b, "; }");
  ck_assert_ptr_nonnull(front(b.p));
  teeny__buf_free(&b);
}
END_TEST

START_TEST(every_prefix_of_a_kernel_is_handled) {
  const char *srcs[] = {VECTOR_ADD, MATMUL};
  for (size_t s = 0; s < TEENY_ARRAY_LEN(srcs); s++) {
    size_t len = strlen(srcs[s]);
    for (size_t n = 0; n < len; n++) {
      reset();
      teeny_program *p = front_n(srcs[s], n);
      /* a prefix either is a whole program or has a diagnostic */
      ck_assert_msg(p != NULL || diags.n >= 1, "prefix %zu: no diagnostic", n);
    }
  }
}
END_TEST

START_TEST(token_and_size_limits) {
  size_t n = (size_t)TEENY_MAX_TOKENS;
  char *src = teeny__malloc(n);
  memset(src, ';', n);
  ck_assert_ptr_null(front_n(src, n));
  ck_assert(strstr(diags.v[0].message, "too many tokens") != NULL);
  ck_assert_int_eq(diags.v[0].col, TEENY_MAX_TOKENS);
  reset();
  ck_assert_ptr_nonnull(front_n(src, n - 1)); /* exactly the limit */
  teeny__free(src);
  reset();
  ck_assert_ptr_null(front_n("", TEENY_MAX_SOURCE_BYTES + 1));
  ck_assert(strstr(diags.v[0].message, "too large") != NULL);
  reset();
  teeny_program *p = ok("");
  ck_assert_int_eq(p->nfuncs, 0);
}
END_TEST

START_TEST(parameter_and_generic_limits) {
  teeny_buf b;
  teeny__buf_init(&b);
  teeny__buf_puts(&b, "void f(");
  for (int i = 0; i <= TEENY_MAX_PARAMS; i++)
    teeny__buf_printf(&b, "%si32 p%d", i ? ", " : "", i);
  teeny__buf_puts(&b, ") {}");
  ck_assert_ptr_null(front(b.p));
  ck_assert(strstr(diags.v[0].message, "too many parameters") != NULL);
  teeny__buf_free(&b);
  reset();
  teeny__buf_init(&b);
  for (int i = 0; i <= TEENY_MAX_GENERICS; i++)
    teeny__buf_printf(&b, "TEENY_CONST(G%d);\n", i);
  ck_assert_ptr_null(front(b.p));
  ck_assert(strstr(diags.v[0].message, "too many generics (limit 32)") != NULL);
  ck_assert_int_eq(diags.v[0].line, TEENY_MAX_GENERICS + 1);
  teeny__buf_free(&b);
}
END_TEST

/* Hostile inputs: every construct cut off at end of file, odd line endings,
 * continued directives, extreme literals.  Each must either go through with
 * no diagnostic or fail with an error diagnostic inside the source.  Inputs
 * on which the fuzzer (tests/fuzz/fuzz_dsl.c) finds a crash are added here;
 * so far it has found none. */
static const char *const hostile_inputs[] = {
    "TEENY_KERNEL(",
    "TEENY_DTYPE(D",
    "void f(",
    "#include",
    "/*",
    "//",
    "void f() { f64 x = 0x1p",
    "void f() { f64 x = 1e+",
    ".",
    "..",
    "\\\n",
    ".5.",
    "void f(tile(",
    "TEENY_BACKWARD(a,b);",
    "void f() { tile(f32) z = zeros(f32); }",
    "int main(void) { return 0; }",
    "void f() { x",
    "void f() { (",
    "void f() { (f32",
    "void f() { (tile(f32)",
    "void f(i32 x) { x = x ?",
    "i32 f() { return 1 ? 2 : 3 ? 4 :",
    "TEENY_KERNEL() TEENY_KERNEL() void k() {}",
    "TEENY_DTYPE(D); TEENY_KERNEL(D) void k(D d) { D x = d; }",
    "void f() { f32 x = (D)1; }",
    "void f() { 1 = 2; }",
    "void f() { ++(x); }",
    "void f() { i32 a; a++; ++a; a--; --a; a <<= 1; a >>= 1; a %= 2; a ^= a; a |= 1; a &= 1; }",
    "void f() { return; } void g() { f(); } TEENY_BACKWARD(f, g);",
    "TEENY_CONST(N); TEENY_KERNEL(N, N) void k() {}",
    "void f() {}\r\nvoid g() {}\r\n",
    "#pragma x \\\n continued\nvoid f() {}",
    "# include <x>\n#  pragma once\nvoid f() {}",
    "void f() { f32 x = 1.0e-400; }",
    "void f() { f32 x = 0x1.fffffffffffffp1023; }",
    "void f() { i32 x = 0xFFFFFFFFFFFFFFFFFFFF; }",
    "f32 r(f32 a, f32 b) { return reduce(a, 0, r); }",
    "void f() { i32 tile = 1; }",
    "void f(ptr(f32) p) { f32 *q = p; ptr(f32) const r = q; }",
    "void f(i32 x) { if (x) {} else if (x) {} else {} }",
    "void f() { sum(); max(1,2,3); dot(1); }",
};

START_TEST(hostile_input) {
  const char *src = hostile_inputs[_i];
  teeny_program *p = front(src);
  if (p) {
    ck_assert_uint_eq(diags.n, 0);
    return;
  }
  ck_assert_msg(diags.n >= 1 && diags.v[0].level == TEENY_DIAG_ERROR,
                "input %d: failed without an error: %s", _i, src);
  int lines = 1;
  for (const char *c = src; *c; c++)
    lines += *c == '\n';
  ck_assert_int_ge(diags.v[0].line, 1);
  ck_assert_int_le(diags.v[0].line, lines);
  ck_assert_int_ge(diags.v[0].col, 1);
}
END_TEST

/* ---- examples/kernels --------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  teeny_buf b;
  teeny__buf_init(&b);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    teeny__buf_append(&b, chunk, n);
  fclose(f);
  return teeny__buf_take(&b, len);
}

START_TEST(example_kernels) {
  const char *root = getenv("TEENY_SOURCE_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/kernels", root ? root : ".");
  DIR *d = opendir(dir);
  int seen = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    size_t nl = strlen(de->d_name);
    if (nl < 3 || strcmp(de->d_name + nl - 2, ".c") != 0)
      continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    size_t len = 0;
    char *src = read_file(path, &len);
    ck_assert_msg(src != NULL, "cannot read %s", path);
    reset();
    cx.file = de->d_name;
    teeny_program *p = front_n(src, len);
    ck_assert_msg(p != NULL, "%s:%d:%d: %s", de->d_name,
                  diags.n ? diags.v[0].line : 0, diags.n ? diags.v[0].col : 0,
                  diags.n ? diags.v[0].message : "(no diagnostic)");
    ck_assert_msg(p->nfuncs > 0, "%s has no functions", de->d_name);
    teeny__free(src);
    seen++;
  }
  if (d)
    closedir(d);
  if (seen == 0)
    fprintf(stderr, "test_front: no kernels in %s; example_kernels skipped\n", dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("front");
  TCase *tc = tcase_create("all");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, vector_add_shape);
  tcase_add_test(tc, softmax_shape);
  tcase_add_test(tc, matmul_shape);
  tcase_add_test(tc, helper_with_tile_param_and_early_return);
  tcase_add_test(tc, reduce_scan_with_combine_helper);
  tcase_add_test(tc, atomics);
  tcase_add_test(tc, loops_and_branches);
  tcase_add_test(tc, precedence_and_casts);
  tcase_add_test(tc, all_literal_forms);
  tcase_add_test(tc, punctuators_and_locations);
  tcase_add_test(tc, scopes_and_slots);
  tcase_add_test(tc, file_level_forms);
  tcase_add_test(tc, predefined_float_constants);
  tcase_add_test(tc, builtin_table);
  tcase_add_test(tc, user_names_shadow_builtins);
  tcase_add_test(tc, loop_exit_flags);
  tcase_add_test(tc, typed_const_decl);
  tcase_add_test(tc, struct_slots);
  tcase_add_loop_test(tc, bad_source, 0, (int)TEENY_ARRAY_LEN(bad_cases));
  tcase_add_test(tc, errors_keep_going_and_stop_at_limit);
  tcase_add_test(tc, notes_point_at_the_first_definition);
  tcase_add_test(tc, deep_nesting_is_an_error_not_a_crash);
  tcase_add_test(tc, every_prefix_of_a_kernel_is_handled);
  tcase_add_test(tc, token_and_size_limits);
  tcase_add_test(tc, parameter_and_generic_limits);
  tcase_add_loop_test(tc, hostile_input, 0, (int)TEENY_ARRAY_LEN(hostile_inputs));
  tcase_add_test(tc, example_kernels);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
