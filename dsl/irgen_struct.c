/*
 * dsl/irgen_struct.c — struct values (docs/dsl.md §2, tuples): a value of a
 * struct is its leaves' values (gval.st, gval.leaves), and a variable of
 * one is a run of var slots, one per leaf (resolve.c numbered them), so
 * `if`, loops and early returns carry a struct exactly as they carry its
 * fields, and the IR never sees a struct at all.
 *
 * Here: declaring the slots of a struct variable, storing a struct value
 * into them and reading one back, member access (a variable's field is its
 * slots, found by resolve.c; any other value's is looked up by name), and
 * building a value from {...} (compound literals and initializers:
 * positional or designated fields, nested braces for struct fields; a
 * missing scalar field is 0, a missing tile or pointer field an error).
 * Each leaf converts as a variable of its declared type would.
 */
#include <string.h>

#include "dsl/irgen.h"

gval teeny__gv_struct(const teeny_struct *st, gval *leaves) {
  gval v = teeny__gv_void();
  v.st = st;
  v.leaves = leaves;
  return v;
}

/* The declaration of leaf i of st, in a variable of type tile(st) if tile. */
static void leaf_var(gen *g, gvar *v, const teeny_struct *st, int i, bool tile) {
  teeny__gen_declare_var(v, st->leaf_type[i], g->b);
  v->is_tile = v->is_tile || tile;
}

void teeny__gen_declare(gen *g, gframe *fr, int base, const teeny_tyspec *ts) {
  const teeny_struct *st = teeny__tyspec_struct(g->prog, ts);
  if (!st) {
    teeny__gen_declare_var(&fr->vars[base], ts, g->b);
    return;
  }
  for (int i = 0; i < st->nleaves; i++)
    leaf_var(g, &fr->vars[base + i], st, i, ts->is_tile);
  fr->vars[base].st = st;
}

void teeny__gen_store(gen *g, int base, const teeny_struct *st, gval x, teeny_loc loc,
                      const char *what, bool cast) {
  gvar *v = &g->fr->vars[base];
  if (!st) {
    teeny__gen_assign_var(g, v, x, loc, what, cast);
    return;
  }
  if (st->desc && teeny__gen_desc_fits(g, st, x.st)) {
    v->st = st = x.st; /* a descriptor variable takes its initialiser's block shape */
  } else if (x.st != st) {
    if (st->desc && st->info && x.st && x.st->desc == st->desc)
      teeny__gen_fail(g, loc, "cannot %s (%s) with %s: a descriptor's block shape is fixed "
                      "where it is declared", what, st->name, x.st->name);
    teeny__gen_fail(g, loc, "cannot %s (%s) with %s", what, st->name,
                    x.st ? x.st->name : teeny__gen_tstr(g, x.type));
  }
  for (int i = 0; i < st->nleaves; i++) {
    const char *w = teeny__arena_printf(g->cx->arena, "%s (field %s)", what, st->leaf_name[i]);
    teeny__gen_assign_var(g, &v[i], x.leaves[i], loc, w, cast);
  }
}

gval teeny__gen_slots_value(gen *g, int base, const teeny_struct *st, teeny_loc loc,
                            const char *name) {
  gvar *v = &g->fr->vars[base];
  int n = st ? st->nleaves : 1;
  for (int i = 0; i < n; i++)
    if (!v[i].defined)
      teeny__gen_fail(g, loc, "'%s%s%s' is used before it is assigned on every path", name,
                      st ? "." : "", st ? st->leaf_name[i] : "");
  if (!st)
    return v->v;
  if (st->desc && !st->info)
    teeny__gen_fail(g, loc, "'%s' (%s) has no block shape here: a descriptor gets it from "
                    "make_%s where the variable is declared (a kernel parameter cannot be "
                    "one)", name, st->name,
                    st->desc == TEENY_DESC_BLOCK ? "block_ptr" : "tensor_descriptor");
  gval *leaves = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)n);
  for (int i = 0; i < n; i++)
    leaves[i] = v[i].v;
  return teeny__gv_struct(st, leaves);
}

/* ---- fields ------------------------------------------------------------------------ */

static int field_index(gen *g, const teeny_struct *st, const char *name, teeny_loc loc) {
  for (int i = 0; i < st->nfields; i++)
    if (strcmp(st->fields[i].name, name) == 0)
      return i;
  teeny__gen_fail(g, loc, "%s has no field '%s'", st->name, name);
}

/* Field f of struct value x: a leaf's value, or a struct field's part. */
static gval field_of(gen *g, gval x, const teeny_field *f) {
  if (f->type->strct < 0)
    return x.leaves[f->leaf];
  return teeny__gv_struct(&g->prog->structs[f->type->strct], x.leaves + f->leaf);
}

gval teeny__gen_member(gen *g, const teeny_expr *e) {
  if (e->sym == SYM_VAR) { /* a variable's field: its own slots */
    const teeny_struct *st = teeny__tyspec_struct(g->prog, e->type);
    const teeny_func *fn = g->fr->fn;
    const char *name = fn->var_names ? fn->var_names[e->sym_index] : e->name;
    if (st) /* "w.pos.x" names the first leaf: show "w.pos" */
      name = teeny__arena_printf(g->cx->arena, "%.*s",
                                 (int)(strlen(name) - strlen(st->leaf_name[0]) - 1), name);
    return teeny__gen_slots_value(g, e->sym_index, st, e->loc, name);
  }
  gval x = teeny__gen_expr_any(g, e->lhs);
  if (!x.st)
    teeny__gen_fail(g, e->loc, "'.%s' of a value that is not a struct (%s)", e->name,
                    teeny__gen_tstr(g, x.type));
  return field_of(g, x, &x.st->fields[field_index(g, x.st, e->name, e->loc)]);
}

/* ---- {...} ---------------------------------------------------------------------------- */

static gval init_of(gen *g, const teeny_expr *e, const teeny_struct *st, bool tile);

/* Leaf value x for leaf i of st (tile: in a tile(st)), converted as a
 * variable of its type would be. */
static gval leaf_value(gen *g, const teeny_struct *st, int i, bool tile, gval x,
                       teeny_loc loc) {
  gvar tmp;
  leaf_var(g, &tmp, st, i, tile);
  const char *what = teeny__arena_printf(g->cx->arena, "initialise field '%s' of %s",
                                         st->leaf_name[i], st->name);
  teeny__gen_assign_var(g, &tmp, x, loc, what, false);
  return tmp.v;
}

/* A field left out of {...}: a scalar's is 0; a tile's shape is unknown. */
static gval missing_leaf(gen *g, const teeny_struct *st, int i, bool tile, teeny_loc loc) {
  gvar tmp;
  leaf_var(g, &tmp, st, i, tile);
  if (tmp.is_tile || tmp.is_ptr)
    teeny__gen_fail(g, loc, "field '%s' of %s needs a value: a %s has no zero here", 
                    st->leaf_name[i], st->name, tmp.is_ptr ? "pointer" : "tile's shape");
  return teeny__gv_int(tmp.dt == TEENY_DT_VOID ? TEENY_DT_I32 : tmp.dt, 0);
}

/* One initializer of field f, into leaves[f->leaf ...]. */
static void init_field(gen *g, const teeny_expr *a, const teeny_struct *st,
                       const teeny_field *f, bool tile, gval *leaves) {
  if (f->type->strct >= 0) {
    const teeny_struct *sub = &g->prog->structs[f->type->strct];
    bool t = tile || f->type->is_tile;
    gval v = a->kind == EX_INIT ? init_of(g, a, sub, t) : teeny__gen_expr_any(g, a);
    if (v.st != sub)
      teeny__gen_fail(g, a->loc, "field '%s' of %s is %s; this is %s", f->name, st->name,
                      sub->name, v.st ? v.st->name : teeny__gen_tstr(g, v.type));
    for (int k = 0; k < sub->nleaves; k++)
      leaves[f->leaf + k] = leaf_value(g, st, f->leaf + k, tile, v.leaves[k], a->loc);
    return;
  }
  if (a->kind == EX_INIT)
    teeny__gen_fail(g, a->loc, "field '%s' of %s is not a struct: no braces", f->name,
                    st->name);
  leaves[f->leaf] = leaf_value(g, st, f->leaf, tile, teeny__gen_expr(g, a), a->loc);
}

static gval init_of(gen *g, const teeny_expr *e, const teeny_struct *st, bool tile) {
  gval *leaves = teeny__arena_alloc(g->cx->arena, sizeof(gval) * (size_t)st->nleaves);
  bool *set = teeny__arena_alloc(g->cx->arena, sizeof(bool) * (size_t)st->nfields);
  int pos = 0;
  for (int i = 0; i < e->nargs; i++) {
    const teeny_expr *a = e->args[i];
    int k = e->desig && e->desig[i] ? field_index(g, st, e->desig[i], a->loc) : pos;
    if (k >= st->nfields)
      teeny__gen_fail(g, a->loc, "too many initializers for %s (%d fields)", st->name,
                      st->nfields);
    if (set[k])
      teeny__gen_fail(g, a->loc, "field '%s' of %s is initialised twice", st->fields[k].name,
                      st->name);
    set[k] = true;
    pos = k + 1;
    init_field(g, a, st, &st->fields[k], tile, leaves);
  }
  for (int k = 0; k < st->nfields; k++) {
    const teeny_field *f = &st->fields[k];
    for (int j = 0; !set[k] && j < f->nleaves; j++)
      leaves[f->leaf + j] = missing_leaf(g, st, f->leaf + j, tile, e->loc);
  }
  return teeny__gv_struct(st, leaves);
}

gval teeny__gen_init(gen *g, const teeny_expr *e) {
  const teeny_struct *st = teeny__tyspec_struct(g->prog, e->type);
  if (!st)
    teeny__gen_fail(g, e->loc, "a braced list needs a struct type: (S){...}");
  return init_of(g, e, st, e->type->is_tile);
}
