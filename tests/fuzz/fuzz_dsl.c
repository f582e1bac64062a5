/*
 * tests/fuzz/fuzz_dsl.c — libFuzzer target for the kernel-language front
 * end: the input (its first 64 KiB) is kernel source, run through lex,
 * parse and resolve with a fresh arena and diagnostics list, as a compile
 * job would.
 *
 * Besides crashes, sanitizer reports, leaks and hangs, it traps on broken
 * contracts: a stage that fails must have reported an error; one that
 * succeeds must have reported none; a resolved program must have every name
 * bound to something in range (the later stages index arrays with these),
 * variables and fields inside their function's slots, break and continue
 * a flag slot each.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dsl/front.h"

#define FUZZ_MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

static void check_expr(const teeny_program *p, const teeny_func *f,
                       const teeny_expr *e) {
  if (!e)
    return;
  switch (e->sym) {
  case SYM_VAR: /* a variable, or a field of one: its slots */
    CHECK(e->sym_index >= 0 && e->nslots >= 1 &&
          e->sym_index + e->nslots <= f->nvars);
    break;
  case SYM_GENERIC:
    CHECK(e->sym_index >= 0 && e->sym_index < p->ngenerics);
    break;
  case SYM_FUNC:
    CHECK(e->sym_index >= 0 && e->sym_index < p->nfuncs);
    CHECK(!p->funcs[e->sym_index]->is_kernel);
    break;
  case SYM_BUILTIN:
    CHECK(teeny__builtin_info((teeny_builtin)e->sym_index) != NULL);
    break;
  case SYM_DTYPE:
    CHECK(e->type != NULL);
    break;
  case SYM_OPTION: /* a trailing option name of a builtin call */
    CHECK(e->kind == EX_NAME &&
          teeny__option_info((teeny_option)e->sym_index) != NULL);
    break;
  case SYM_NONE: /* only the predefined float constants */
    CHECK(e->kind != EX_NAME || strcmp(e->name, "INFINITY") == 0 ||
          strcmp(e->name, "NAN") == 0);
    CHECK(e->kind != EX_CALL);
    break;
  }
  check_expr(p, f, e->lhs);
  check_expr(p, f, e->rhs);
  check_expr(p, f, e->cond);
  for (int i = 0; i < e->nargs; i++)
    check_expr(p, f, e->args[i]);
}

static void check_stmt(const teeny_program *p, const teeny_func *f,
                       const teeny_stmt *st) {
  if (!st)
    return;
  if (st->kind == ST_BREAK || st->kind == ST_CONTINUE)
    CHECK(st->var >= f->nparams && st->var < f->nvars);
  if (st->kind == ST_DECL)
    CHECK(st->var >= f->nparams && st->var < f->nvars);
  if (st->kind == ST_FOR || st->kind == ST_WHILE || st->kind == ST_DO) {
    CHECK(st->brk_slot == -1 || (st->brk_slot >= 0 && st->brk_slot < f->nvars));
    CHECK(st->cont_slot == -1 || (st->cont_slot >= 0 && st->cont_slot < f->nvars));
  }
  for (int i = 0; i < st->nbody; i++)
    check_stmt(p, f, st->body[i]);
  check_expr(p, f, st->expr);
  check_expr(p, f, st->cond);
  check_expr(p, f, st->step);
  check_stmt(p, f, st->then);
  check_stmt(p, f, st->els);
  check_stmt(p, f, st->init);
  check_stmt(p, f, st->loop);
}

static void check_program(const teeny_program *p) {
  for (int i = 0; i < p->nfuncs; i++) {
    const teeny_func *f = p->funcs[i];
    CHECK(f->nvars >= f->nparams);
    for (int j = 0; j < f->nparams; j++) /* in order; a struct takes a slot per leaf */
      CHECK(f->params[j].var >= 0 && f->params[j].var < f->nvars &&
            (j == 0 ? f->params[j].var == 0 : f->params[j].var > f->params[j - 1].var));
    for (int j = 0; j < f->nkgenerics; j++)
      CHECK(f->kgenerics[j] >= 0 && f->kgenerics[j] < p->ngenerics);
    CHECK(f->backward < p->nfuncs);
    check_stmt(p, f, f->body);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT)
    size = FUZZ_MAX_INPUT;
  teeny_arena arena;
  teeny_diags diags;
  teeny__arena_init(&arena);
  teeny_diags_init(&diags);
  teeny_ctx cx;
  memset(&cx, 0, sizeof cx);
  cx.arena = &arena;
  cx.file = "<fuzz>";
  cx.text = (const char *)data;
  cx.len = size;
  cx.diags = &diags;

  int n = 0;
  teeny_token *toks = teeny__lex(&cx, &n);
  teeny_program *prog = toks ? teeny__parse(&cx, toks, n) : NULL;
  int rc = prog ? teeny__resolve(&cx, prog) : TEENY_E_COMPILE;
  if (rc == 0) {
    CHECK(cx.nerrors == 0 && diags.nerrors == 0);
    check_program(prog);
  } else {
    CHECK(cx.nerrors > 0 && diags.nerrors > 0);
    CHECK(diags.v[0].level == TEENY_DIAG_ERROR);
  }

  teeny_diags_close(&diags);
  teeny__arena_free(&arena);
  return 0;
}
