/*
 * dsl/inspect.c — teeny_source_inspect: what a kernel file declares
 * (generics with their allowed dtypes, kernels with their TEENY_KERNEL
 * lists, parameters and backward pairs), for teenyc-gen.
 *
 * It runs the front end only (lex, parse, resolve: no bindings, no IR) and
 * copies the answer out of the AST into plain public structs that live in
 * one arena owned by the returned info, so the AST can go with the job.
 * Cost: that of parsing the file, microseconds to a millisecond.
 */
#include <string.h>

#include "dsl/front.h"

typedef struct inspect {
  teeny_source_info pub; /* must stay first: the caller's pointer */
  teeny_arena arena;     /* everything pub points at */
} inspect;

static void copy_generic(teeny_arena *a, teeny_generic_info *d, const teeny_generic *g) {
  d->name = teeny__arena_strdup(a, g->name);
  d->is_dtype = g->is_dtype;
  d->const_dtype = g->is_dtype ? TEENY_DT_VOID : g->cdt;
  d->nallowed = g->allowed ? (size_t)g->nallowed : 0;
  if (g->allowed) {
    teeny_dtype *v = teeny__arena_alloc(a, sizeof *v * (d->nallowed + 1));
    memcpy(v, g->allowed, sizeof *v * d->nallowed);
    d->allowed = v;
  }
}

/* Slot j of p (teeny__param_slot): a descriptor's shapes and strides are
 * never generic. */
static void copy_param(teeny_arena *a, const teeny_program *prog, teeny_param_info *d,
                       const teeny_param_decl *p, int j) {
  const teeny_tyspec *elem = teeny__param_elem(prog, p);
  const char *name;
  teeny_dtype dt;
  teeny__param_slot(a, p, j, elem->generic >= 0 ? TEENY_DT_VOID : elem->dt, &name, &d->kind,
                    &dt);
  d->name = teeny__arena_strdup(a, name);
  bool generic = elem->generic >= 0 && (j < 2 || !p->type->ndblock);
  d->generic = generic ? elem->generic : -1;
  d->dtype = generic ? TEENY_DT_VOID : dt;
}

/* Index among kernels of the function at funcs[f], or -1. */
static int kernel_index(const teeny_program *prog, int f) {
  if (f < 0 || !prog->funcs[f]->is_kernel)
    return -1;
  int k = 0;
  for (int i = 0; i < f; i++)
    k += prog->funcs[i]->is_kernel;
  return k;
}

static void copy_kernel(teeny_arena *a, const teeny_program *prog, teeny_kernel_info *d,
                        const teeny_func *fn) {
  d->name = teeny__arena_strdup(a, fn->name);
  d->line = fn->loc.line;
  int *gs = teeny__arena_alloc(a, sizeof *gs * ((size_t)fn->nkgenerics + 1));
  if (fn->nkgenerics) /* TEENY_KERNEL(): kgenerics may be NULL */
    memcpy(gs, fn->kgenerics, sizeof *gs * (size_t)fn->nkgenerics);
  d->generics = gs;
  d->ngenerics = (size_t)fn->nkgenerics;
  size_t n = 0;
  for (int i = 0; i < fn->nparams; i++)
    n += (size_t)teeny__param_nslots(&fn->params[i]);
  teeny_param_info *ps = teeny__arena_alloc(a, sizeof *ps * (n + 1));
  n = 0;
  for (int i = 0; i < fn->nparams; i++)
    for (int j = 0; j < teeny__param_nslots(&fn->params[i]); j++)
      copy_param(a, prog, &ps[n++], &fn->params[i], j);
  d->params = ps;
  d->nparams = n;
  d->backward = kernel_index(prog, fn->backward);
  d->forward = -1;
}

static void describe(inspect *in, const teeny_program *prog) {
  teeny_arena *a = &in->arena;
  teeny_generic_info *gs = teeny__arena_alloc(a, sizeof *gs * ((size_t)prog->ngenerics + 1));
  for (int i = 0; i < prog->ngenerics; i++)
    copy_generic(a, &gs[i], &prog->generics[i]);
  size_t nk = 0;
  for (int i = 0; i < prog->nfuncs; i++)
    nk += prog->funcs[i]->is_kernel;
  teeny_kernel_info *ks = teeny__arena_alloc(a, sizeof *ks * (nk + 1));
  for (int i = 0, k = 0; i < prog->nfuncs; i++)
    if (prog->funcs[i]->is_kernel)
      copy_kernel(a, prog, &ks[k++], prog->funcs[i]);
  for (size_t k = 0; k < nk; k++)
    if (ks[k].backward >= 0)
      ks[ks[k].backward].forward = (int)k;
  in->pub = (teeny_source_info){gs, (size_t)prog->ngenerics, ks, nk};
}

/* The front end in a scratch arena; the description in in->arena. */
static int front_end(inspect *in, teeny_arena *job, const char *src, size_t len,
                     const char *file, teeny_diags *diags) {
  teeny_ctx cx = {.arena = job, .file = file, .text = src, .len = len, .diags = diags};
  int ntoks;
  teeny_token *toks = teeny__lex(&cx, &ntoks);
  teeny_program *prog = toks ? teeny__parse(&cx, toks, ntoks) : NULL;
  if (!prog || teeny__resolve(&cx, prog) != TEENY_OK || cx.nerrors)
    return TEENY_E_COMPILE;
  describe(in, prog);
  return TEENY_OK;
}

/* The front end under an out-of-memory guard: allocation failure in either
 * arena longjmps back here.  in and job outlive the jump (they are the
 * caller's), so nothing here is clobbered. */
static int guarded(inspect *in, teeny_arena *job, const teeny_ctx *args) {
  jmp_buf oom;
  job->oom = in->arena.oom = &oom;
  if (setjmp(oom))
    return TEENY_E_NOMEM;
  return front_end(in, job, args->text, args->len, args->file, args->diags);
}

int teeny_source_inspect(const char *source, size_t len, const char *filename,
                         teeny_source_info **out, teeny_diags *diags) {
  *out = NULL;
  const char *file = filename ? filename : "<source>";
  if (!source && len)
    return TEENY_E_INVAL;
  if (len > TEENY_MAX_SOURCE_BYTES) {
    teeny__diags_addf_at(diags, TEENY_DIAG_ERROR, file, NULL, 0, 0, 0,
                         "source is %zu bytes; the limit is %u", len, TEENY_MAX_SOURCE_BYTES);
    return TEENY_E_LIMIT;
  }
  inspect *in = teeny__calloc(1, sizeof *in);
  if (!in)
    return TEENY_E_NOMEM;
  teeny_arena job;
  teeny__arena_init(&job);
  teeny__arena_init(&in->arena);
  teeny_ctx args = {.file = file, .text = source ? source : "", .len = len, .diags = diags};
  int rc = guarded(in, &job, &args);
  teeny__arena_free(&job);
  in->arena.oom = NULL;
  if (rc) {
    teeny__arena_free(&in->arena);
    teeny__free(in);
    return rc;
  }
  *out = &in->pub;
  return TEENY_OK;
}

void teeny_source_info_destroy(teeny_source_info *info) {
  if (!info)
    return;
  inspect *in = (inspect *)info;
  teeny__arena_free(&in->arena);
  teeny__free(in);
}
