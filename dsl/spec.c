/*
 * dsl/spec.c — specialisation: check a request's bindings against a
 * kernel's generics, name the specialisation (its id), and write the
 * generated source whose SHA-256 is the cache key.
 *
 * The generated source is the single description of everything that
 * decides the compiled output: compiler, IR and LLVM versions, target,
 * num_warps, the bindings, the kernel source and the entry point.  Nothing
 * that does not change the output goes in (in particular not the file
 * name, so the same kernel compiled from two paths shares one entry).
 */
#include <string.h>

#include "dsl/front.h"

/* ---- bindings ------------------------------------------------------------ */

static bool kernel_lists(const teeny_func *fn, int g) {
  for (int i = 0; i < fn->nkgenerics; i++)
    if (fn->kgenerics[i] == g)
      return true;
  return false;
}

static void list_dtypes(teeny_buf *b, const teeny_generic *g) {
  for (int i = 0; i < g->nallowed; i++)
    teeny__buf_printf(b, "%s%s", i ? ", " : "", teeny_dtype_name(g->allowed[i]));
}

static bool dtype_allowed(const teeny_generic *g, teeny_dtype dt) {
  if (!g->allowed)
    return true;
  for (int i = 0; i < g->nallowed; i++)
    if (g->allowed[i] == dt)
      return true;
  return false;
}

static const teeny_loc NOLOC = {0, 0};

static const char *const_dtype_name(const teeny_generic *g) {
  return teeny_dtype_name(g->cdt == TEENY_DT_VOID ? TEENY_DT_I32 : g->cdt);
}

/* Find the generic a binding names, reporting why it cannot be bound.
 * by_text: a text binding (a dtype's name, or a const's value); else an
 * integer one.  Returns its index or -1. */
static int binding_target(teeny_ctx *cx, const teeny_program *prog,
                          const teeny_func *fn, const char *name, bool by_text,
                          const teeny_bindings *out) {
  int g = name ? teeny__program_find_generic(prog, name) : -1;
  if (g < 0) {
    teeny__error_at(cx, NOLOC, "binding '%s': the source declares no generic named '%s'",
                    name ? name : "(null)", name ? name : "(null)");
    return -1;
  }
  const teeny_generic *gen = &prog->generics[g];
  if (!kernel_lists(fn, g)) {
    teeny__error_at(cx, NOLOC,
                    "extra binding '%s': kernel '%s' is not specialised on it "
                    "(its TEENY_KERNEL list does not name '%s')",
                    name, fn->name, name);
    return -1;
  }
  if (gen->is_dtype && !by_text) {
    teeny__error_at(cx, NOLOC, "binding '%s': '%s' is a dtype generic; bind it with a "
                    "dtype (--dtype %s=f32)", name, name, name);
    return -1;
  }
  if (out->bound[g]) {
    teeny__error_at(cx, NOLOC, "binding '%s' is given twice", name);
    return -1;
  }
  return g;
}

/* A const bound by text: its value read as the const's dtype. */
static void bind_const_text(teeny_ctx *cx, const teeny_generic *gen, int g,
                            const teeny_dtype_binding *d, teeny_bindings *out) {
  const char *why;
  if (teeny__const_from_text(gen, d->dtype, &out->val[g], &why) != 0)
    teeny__error_at(cx, NOLOC, "binding %s=%s: '%s' %s %s (TEENY_CONST(%s%s%s))", d->name,
                    d->dtype ? d->dtype : "", d->dtype ? d->dtype : "", why,
                    const_dtype_name(gen), gen->name, gen->cdt ? ", " : "",
                    gen->cdt ? teeny_dtype_name(gen->cdt) : "");
  out->bound[g] = true; /* named, if wrongly: not also "not bound" */
}

static void bind_dtypes(teeny_ctx *cx, const teeny_program *prog,
                        const teeny_func *fn, const teeny_compile_req *req,
                        teeny_bindings *out) {
  for (size_t i = 0; i < req->ndtypes; i++) {
    const teeny_dtype_binding *d = &req->dtypes[i];
    int g = binding_target(cx, prog, fn, d->name, true, out);
    if (g < 0)
      continue;
    const teeny_generic *gen = &prog->generics[g];
    if (!gen->is_dtype) {
      bind_const_text(cx, gen, g, d, out);
      continue;
    }
    teeny_dtype dt = teeny_dtype_parse(d->dtype);
    if (dt == TEENY_DT_VOID) {
      teeny__error_at(cx, NOLOC,
                      "binding %s=%s: '%s' is not a dtype (bool, i8, i16, i32, i64, "
                      "u8, u16, u32, u64, f16, bf16, f32, f64)",
                      d->name, d->dtype ? d->dtype : "", d->dtype ? d->dtype : "");
      continue;
    }
    if (!dtype_allowed(gen, dt)) {
      teeny_buf b;
      teeny__buf_init(&b);
      list_dtypes(&b, gen);
      teeny__error_at(cx, gen->loc, "binding %s=%s is not allowed: '%s' accepts only %s",
                      d->name, d->dtype, d->name, b.p ? b.p : "");
      teeny__buf_free(&b);
      continue;
    }
    out->dt[g] = dt;
    out->bound[g] = true;
  }
}

/* A binding under a reserved name (TEENY_OPT_*): a request option. */
static bool bind_option(teeny_ctx *cx, const teeny_const_binding *c, teeny_bindings *out) {
  if (!c->name || strncmp(c->name, "teeny.", 6) != 0)
    return false;
  if (strcmp(c->name, TEENY_OPT_UNALIGNED) == 0) {
    out->unaligned = (uint64_t)c->value; /* its bits are checked against the parameters */
  } else if (strcmp(c->name, TEENY_OPT_NUM_STAGES) == 0) {
    if (c->value != 0 && (c->value < 2 || c->value > 8))
      teeny__error_at(cx, NOLOC, "option %s=%lld: num_stages is 2 to 8 (or 0: the code "
                      "generator's choice)", c->name, (long long)c->value);
    else
      out->num_stages = (int)c->value;
  } else if (strcmp(c->name, TEENY_OPT_DEBUG) != 0) {
    teeny__error_at(cx, NOLOC, "binding '%s': unknown option (the options are %s, %s, %s)",
                    c->name, TEENY_OPT_DEBUG, TEENY_OPT_NUM_STAGES, TEENY_OPT_UNALIGNED);
  } else if (c->value != 0 && c->value != 1) {
    teeny__error_at(cx, NOLOC, "option %s=%lld: it is 0 (off) or 1 (on)", c->name,
                    (long long)c->value);
  } else {
    out->debug = c->value == 1;
  }
  return true;
}

static void bind_consts(teeny_ctx *cx, const teeny_program *prog,
                        const teeny_func *fn, const teeny_compile_req *req,
                        teeny_bindings *out) {
  for (size_t i = 0; i < req->nconsts; i++) {
    const teeny_const_binding *c = &req->consts[i];
    if (bind_option(cx, c, out))
      continue;
    int g = binding_target(cx, prog, fn, c->name, false, out);
    if (g < 0)
      continue;
    const teeny_generic *gen = &prog->generics[g];
    const char *why;
    if (teeny__const_from_int(gen, c->value, &out->val[g], &why) != 0)
      teeny__error_at(cx, NOLOC, "binding %s=%lld %s %s%s", c->name, (long long)c->value,
                      why, const_dtype_name(gen),
                      teeny__dt_is_float(gen->cdt) ? "; bind it as text (\"0.1\")" : "");
    out->bound[g] = true; /* named, if wrongly: not also "not bound" */
  }
}

int teeny__bind(teeny_ctx *cx, const teeny_program *prog, int k,
                const teeny_compile_req *req, teeny_bindings *out) {
  memset(out, 0, sizeof *out);
  const teeny_func *fn = prog->funcs[k];
  int before = cx->nerrors;
  bind_dtypes(cx, prog, fn, req, out);
  bind_consts(cx, prog, fn, req, out);
  for (int i = 0; i < fn->nkgenerics; i++) {
    int g = fn->kgenerics[i];
    const teeny_generic *gen = &prog->generics[g];
    if (!out->bound[g])
      teeny__error_at(cx, fn->kernel_loc,
                      "generic '%s' of kernel '%s' is not bound (pass %s %s=...)",
                      gen->name, fn->name, gen->is_dtype ? "--dtype" : "--const",
                      gen->name);
  }
  return cx->nerrors > before ? TEENY_E_BINDING : TEENY_OK;
}

teeny_dtype teeny__tyspec_dtype(const teeny_tyspec *ts, const teeny_bindings *b) {
  if (ts->is_void)
    return TEENY_DT_VOID;
  if (ts->generic >= 0)
    return b->dt[ts->generic];
  return ts->dt;
}

/* ---- id and generated source ------------------------------------------------ */

const char *teeny__spec_id(teeny_ctx *cx, const teeny_program *prog, int k,
                           const teeny_bindings *b) {
  const teeny_func *fn = prog->funcs[k];
  teeny_buf id;
  teeny__buf_init(&id);
  teeny__buf_puts(&id, fn->name);
  for (int i = 0; i < fn->nkgenerics; i++) {
    int g = fn->kgenerics[i];
    if (prog->generics[g].is_dtype)
      teeny__buf_printf(&id, "__%s", teeny_dtype_name(b->dt[g]));
    else
      teeny__buf_printf(&id, "__%s", teeny__const_text(cx->arena, &prog->generics[g], b->val[g]));
  }
  const char *s = teeny__arena_strndup(cx->arena, id.p ? id.p : "", id.len);
  teeny__buf_free(&id);
  return s;
}

int teeny__param_nslots(const teeny_param_decl *p) {
  return p->type->ndblock ? 1 + 2 * p->type->ndblock : 1;
}

const teeny_tyspec *teeny__param_elem(const teeny_program *prog, const teeny_param_decl *p) {
  const teeny_struct *st = teeny__tyspec_struct(prog, p->type);
  return st && st->desc ? st->leaf_type[0] : p->type;
}

void teeny__param_slot(teeny_arena *a, const teeny_param_decl *p, int j, teeny_dtype elem,
                       const char **name, teeny_param_kind *kind, teeny_dtype *dt) {
  int r = p->type->ndblock;
  if (!r) {
    *name = p->name;
    *kind = p->type->is_ptr ? TEENY_PARAM_POINTER : TEENY_PARAM_SCALAR;
    *dt = elem;
  } else if (j == 0) {
    *name = teeny__arena_printf(a, "%s_tensormap", p->name);
    *kind = TEENY_PARAM_TENSORMAP;
    *dt = elem;
  } else if (j == 1) {
    *name = teeny__arena_printf(a, "%s_base", p->name);
    *kind = TEENY_PARAM_POINTER;
    *dt = elem;
  } else {
    bool shape = j < 2 + r;
    *name = teeny__arena_printf(a, "%s_%s%d", p->name, shape ? "shape" : "stride",
                                shape ? j - 2 : j - 2 - r);
    *kind = TEENY_PARAM_SCALAR;
    *dt = shape ? TEENY_DT_I32 : TEENY_DT_I64;
  }
}

static void write_param(teeny_buf *out, const teeny_param_decl *p,
                        const teeny_bindings *b) {
  if (p->type->ndblock) { /* tensor_desc(T, B0, ..): the block is in the kernel's source */
    teeny__buf_printf(out, "%s %s", p->type->base, p->name);
    return;
  }
  teeny_dtype dt = teeny__tyspec_dtype(p->type, b);
  teeny__buf_printf(out, "%s %s%s", teeny_dtype_name(dt), p->type->is_ptr ? "*" : "",
                    p->name);
}

static void write_entry_point(teeny_buf *out, const teeny_func *fn,
                              const teeny_bindings *b) {
  teeny__buf_printf(out, "void %s_entry_point(", fn->name);
  for (int i = 0; i < fn->nparams; i++) {
    if (i)
      teeny__buf_puts(out, ", ");
    write_param(out, &fn->params[i], b);
  }
  if (fn->nparams == 0)
    teeny__buf_puts(out, "void");
  teeny__buf_printf(out, ")\n{ %s(", fn->name);
  for (int i = 0; i < fn->nparams; i++)
    teeny__buf_printf(out, "%s%s", i ? ", " : "", fn->params[i].name);
  teeny__buf_puts(out, "); }\n");
}

/* " * debug: on (device_assert checked, file F)": F's bytes outside
 * printable ASCII, and '*', as '?' (the comment must not end early). */
static void debug_line(teeny_buf *out, const char *file) {
  teeny__buf_puts(out, " * debug: on (device_assert checked, file ");
  for (const char *c = file ? file : "<source>"; *c; c++)
    teeny__buf_putc(out, *c >= 0x20 && *c < 0x7f && *c != '*' ? *c : '?');
  teeny__buf_puts(out, ")\n");
}

void teeny__spec_source(teeny_buf *out, teeny_ctx *cx, const teeny_program *prog,
                        int k, const teeny_bindings *b, const char *id,
                        const teeny_spec_opts *o) {
  const teeny_func *fn = prog->funcs[k];
  teeny__buf_printf(out,
                    "/* teenyc generated source: do not edit.\n"
                    " * compiler: teenyc %s (build %s, tile IR %d), LLVM %s\n"
                    " * kernel: %s  id: %s\n"
                    " * target: %s  num_warps: %d\n",
                    o->compiler_version, o->build_id, TEENY_IR_VERSION, o->llvm_version,
                    fn->name, id, o->target, o->num_warps);
  if (b->debug) /* failed asserts name the file, so it decides the output */
    debug_line(out, cx->file);
  if (b->num_stages) /* only when set: the keys of other requests stay as they were */
    teeny__buf_printf(out, " * num_stages: %d\n", b->num_stages);
  if (b->unaligned) /* the same */
    teeny__buf_printf(out, " * unaligned pointers: 0x%llx\n", (unsigned long long)b->unaligned);
  teeny__buf_puts(out, " */\n");
  teeny__buf_puts(out, "#include <teeny/dsl.h>\n");
  for (int i = 0; i < fn->nkgenerics; i++) {
    int g = fn->kgenerics[i];
    const teeny_generic *gen = &prog->generics[g];
    if (gen->is_dtype)
      teeny__buf_printf(out, "TEENY_BIND(%s, %s);\n", gen->name, teeny_dtype_name(b->dt[g]));
    else
      teeny__buf_printf(out, "TEENY_BIND(%s, %s);\n", gen->name,
                        teeny__const_text(cx->arena, gen, b->val[g]));
  }
  teeny__buf_puts(out, "/* ---- kernel source ---- */\n");
  teeny__buf_append(out, cx->text, cx->len);
  if (cx->len == 0 || cx->text[cx->len - 1] != '\n')
    teeny__buf_putc(out, '\n');
  teeny__buf_puts(out, "/* ---- generated entry point ---- */\n");
  write_entry_point(out, fn, b);
}
