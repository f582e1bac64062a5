/*
 * dsl/api.c — include/teeny/compile.h on top of the compiler stages.
 *
 * A spec owns an arena holding a copy of the source, its AST and the
 * generated source; after teeny_spec_create it is never written again, so
 * any number of threads may compile or interpret it at once.  Each compile
 * or interpretation works in an arena of its own.  Out-of-memory inside a
 * stage longjmps to the entry point here (common/common.h), which frees the
 * job and returns TEENY_E_NOMEM.
 */
#include <ctype.h>
#include <string.h>

#include "dsl/front.h"
#include "dsl/nvptx/nvptx.h"
#include "teeny_build_id.h" /* generated: TEENY_COMPILER_BUILD_ID */

#ifndef TEENY_LLVM_VERSION_STRING
#define TEENY_LLVM_VERSION_STRING "none"
#endif

/* Memory one job may take before it is refused (hostile kernels). */
#define JOB_ARENA_LIMIT ((size_t)1 << 30)

struct teeny_spec {
  teeny_arena arena;       /* everything below lives here */
  const char *file;        /* for diagnostics */
  const char *text;        /* copy of the kernel source */
  size_t len;
  teeny_program *prog;     /* resolved AST */
  int k;                   /* the kernel's index in prog->funcs */
  teeny_bindings b;        /* the request's bindings */
  const char *id;          /* name__dtypes__consts */
  const char *entry;       /* {name}_entry_point */
  const char *target;
  int num_warps;
  char *source;            /* generated source */
  size_t source_len;
  char key[65];            /* sha256(source) */
  teeny_param *params;     /* entry point parameters */
  size_t nparams;
};

static const char *const known_targets[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};

const char *teeny_version(void) { return TEENY_VERSION_STRING; }
const char *teeny_llvm_version(void) { return TEENY_LLVM_VERSION_STRING; }

static bool valid_name(const char *s) {
  if (!s || !*s || strlen(s) > TEENY_MAX_NAME_LEN)
    return false;
  if (!(isalpha((unsigned char)*s) || *s == '_'))
    return false;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_'))
      return false;
  return true;
}

static const char *canonical_target(const char *t) {
  if (!t || !*t)
    return "sm_90a";
  for (size_t i = 0; i < TEENY_ARRAY_LEN(known_targets); i++)
    if (strcmp(t, known_targets[i]) == 0)
      return known_targets[i];
  return NULL;
}

static int check_request(const teeny_compile_req *req, teeny_diags *diags,
                         const char **target, int *num_warps) {
  const char *file = req->filename ? req->filename : "<source>";
  if (!req->source && req->source_len)
    return TEENY_E_INVAL;
  if (req->source_len > TEENY_MAX_SOURCE_BYTES) {
    teeny__diags_addf_at(diags, TEENY_DIAG_ERROR, file, NULL, 0, 0, 0,
                         "source is %zu bytes; the limit is %u", req->source_len,
                         TEENY_MAX_SOURCE_BYTES);
    return TEENY_E_LIMIT;
  }
  if (!valid_name(req->kernel)) {
    teeny__diags_addf_at(diags, TEENY_DIAG_ERROR, file, NULL, 0, 0, 0,
                         "invalid kernel name: a kernel name is a C identifier of at "
                         "most %d characters", TEENY_MAX_NAME_LEN);
    return TEENY_E_INVAL;
  }
  *target = canonical_target(req->target);
  if (!*target) {
    teeny__diags_addf_at(diags, TEENY_DIAG_ERROR, file, NULL, 0, 0, 0,
                         "unknown target '%.32s' (sm_80, sm_86, sm_89, sm_90, sm_90a)",
                         req->target);
    return TEENY_E_INVAL;
  }
  int w = req->num_warps ? req->num_warps : 4;
  if (w < 1 || w > 32 || (w & (w - 1))) {
    teeny__diags_addf_at(diags, TEENY_DIAG_ERROR, file, NULL, 0, 0, 0,
                         "num_warps must be 1, 2, 4, 8, 16 or 32, not %d", req->num_warps);
    return TEENY_E_INVAL;
  }
  *num_warps = w;
  return TEENY_OK;
}

static void ctx_init(teeny_ctx *cx, teeny_arena *a, const char *file, const char *text,
                     size_t len, teeny_diags *diags) {
  memset(cx, 0, sizeof *cx);
  cx->arena = a;
  cx->file = file;
  cx->text = text;
  cx->len = len;
  cx->diags = diags;
}

/* Parse and resolve; find kernel `name`.  Returns 0 and sets spec->prog/k. */
static int front_end(teeny_ctx *cx, struct teeny_spec *spec, const char *name) {
  int ntoks;
  teeny_token *toks = teeny__lex(cx, &ntoks);
  if (!toks)
    return TEENY_E_COMPILE;
  spec->prog = teeny__parse(cx, toks, ntoks);
  if (!spec->prog || teeny__resolve(cx, spec->prog) != TEENY_OK || cx->nerrors)
    return TEENY_E_COMPILE;
  spec->k = teeny__program_find_func(spec->prog, name);
  if (spec->k < 0) {
    teeny_buf kernels;
    teeny__buf_init(&kernels);
    for (int i = 0; i < spec->prog->nfuncs; i++)
      if (spec->prog->funcs[i]->is_kernel)
        teeny__buf_printf(&kernels, "%s%s", kernels.len ? ", " : "", spec->prog->funcs[i]->name);
    teeny__error_at(cx, (teeny_loc){0, 0}, "no kernel named '%s' (kernels here: %s)", name,
                    kernels.len ? kernels.p : "none");
    teeny__buf_free(&kernels);
    return TEENY_E_NOTFOUND;
  }
  const teeny_func *fn = spec->prog->funcs[spec->k];
  if (!fn->is_kernel) {
    teeny__error_at(cx, fn->loc, "'%s' is a helper, not a kernel (mark it with TEENY_KERNEL(...))",
                    name);
    return TEENY_E_NOTFOUND;
  }
  return TEENY_OK;
}

static void make_params(struct teeny_spec *spec) {
  const teeny_func *fn = spec->prog->funcs[spec->k];
  size_t n = 0;
  for (int i = 0; i < fn->nparams; i++)
    n += (size_t)teeny__param_nslots(&fn->params[i]);
  spec->nparams = n;
  spec->params = teeny__arena_alloc(&spec->arena, sizeof(teeny_param) * (n + 1));
  n = 0;
  for (int i = 0; i < fn->nparams; i++) {
    const teeny_param_decl *p = &fn->params[i];
    teeny_dtype elem = teeny__tyspec_dtype(teeny__param_elem(spec->prog, p), &spec->b);
    for (int j = 0; j < teeny__param_nslots(p); j++, n++) {
      const char *name;
      teeny__param_slot(&spec->arena, p, j, elem, &name, &spec->params[n].kind,
                        &spec->params[n].dtype);
      spec->params[n].name = (char *)name;
    }
  }
}

/* TEENY_OPT_UNALIGNED names pointer parameters only. */
static int check_unaligned(teeny_ctx *cx, const struct teeny_spec *spec) {
  uint64_t bits = spec->b.unaligned;
  for (int i = 0; i < 64; i++) {
    if (!(bits >> i & 1))
      continue;
    if ((size_t)i >= spec->nparams || spec->params[i].kind != TEENY_PARAM_POINTER) {
      teeny__error_at(cx, (teeny_loc){0, 0}, "option %s=0x%llx: bit %d is %s, not a pointer parameter",
                      TEENY_OPT_UNALIGNED, (unsigned long long)bits, i,
                      (size_t)i >= spec->nparams ? "past the last parameter"
                                                 : spec->params[i].name);
      return TEENY_E_BINDING;
    }
  }
  return TEENY_OK;
}

static int generate_source(teeny_ctx *cx, struct teeny_spec *spec,
                           const teeny_compile_req *req) {
  spec->id = teeny__spec_id(cx, spec->prog, spec->k, &spec->b);
  spec->entry = teeny__arena_printf(&spec->arena, "%s_entry_point",
                                    spec->prog->funcs[spec->k]->name);
  teeny_spec_opts o = {spec->target, spec->num_warps,
                       req->compiler_version ? req->compiler_version : TEENY_VERSION_STRING,
                       TEENY_COMPILER_BUILD_ID, TEENY_LLVM_VERSION_STRING};
  teeny_buf src;
  teeny__buf_init(&src);
  teeny__spec_source(&src, cx, spec->prog, spec->k, &spec->b, spec->id, &o);
  if (src.oom) {
    teeny__buf_free(&src);
    return TEENY_E_NOMEM;
  }
  spec->source = teeny__arena_strndup(&spec->arena, src.p, src.len);
  spec->source_len = src.len;
  teeny__buf_free(&src);
  return teeny__sha256_hex(spec->source, spec->source_len, spec->key);
}

int teeny_spec_create(const teeny_compile_req *req, teeny_spec **out, teeny_diags *diags) {
  *out = NULL;
  const char *target;
  int num_warps;
  int rc = check_request(req, diags, &target, &num_warps);
  if (rc)
    return rc;
  struct teeny_spec *spec = teeny__calloc(1, sizeof *spec);
  if (!spec)
    return TEENY_E_NOMEM;
  teeny__arena_init(&spec->arena);
  spec->arena.limit = JOB_ARENA_LIMIT;
  jmp_buf oom;
  spec->arena.oom = &oom;
  if (setjmp(oom)) {
    teeny__arena_free(&spec->arena);
    teeny__free(spec);
    return TEENY_E_NOMEM;
  }
  spec->target = target;
  spec->num_warps = num_warps;
  spec->file = teeny__arena_strdup(&spec->arena, req->filename ? req->filename : "<source>");
  spec->text = teeny__arena_strndup(&spec->arena, req->source ? req->source : "", req->source_len);
  spec->len = req->source_len;
  teeny_ctx cx;
  ctx_init(&cx, &spec->arena, spec->file, spec->text, spec->len, diags);
  rc = front_end(&cx, spec, req->kernel);
  if (!rc && teeny__bind(&cx, spec->prog, spec->k, req, &spec->b))
    rc = TEENY_E_BINDING;
  if (!rc) {
    make_params(spec);
    rc = check_unaligned(&cx, spec);
  }
  if (!rc)
    rc = generate_source(&cx, spec, req);
  spec->arena.oom = NULL;
  if (rc) {
    teeny__arena_free(&spec->arena);
    teeny__free(spec);
    return rc;
  }
  *out = spec;
  return TEENY_OK;
}

void teeny_spec_destroy(teeny_spec *spec) {
  if (!spec)
    return;
  teeny__arena_free(&spec->arena);
  teeny__free(spec);
}

const char *teeny_spec_name(const teeny_spec *s) { return s->prog->funcs[s->k]->name; }
const char *teeny_spec_id(const teeny_spec *s) { return s->id; }
const char *teeny_spec_key(const teeny_spec *s) { return s->key; }
const char *teeny_spec_entry(const teeny_spec *s) { return s->entry; }
const char *teeny_spec_target(const teeny_spec *s) { return s->target; }
int teeny_spec_num_warps(const teeny_spec *s) { return s->num_warps; }
int teeny_spec_num_stages(const teeny_spec *s) { return s->b.num_stages; }
size_t teeny_spec_nparams(const teeny_spec *s) { return s->nparams; }

const char *teeny_spec_source(const teeny_spec *s, size_t *len) {
  if (len)
    *len = s->source_len;
  return s->source;
}

const teeny_param *teeny_spec_param(const teeny_spec *s, size_t i) {
  return i < s->nparams ? &s->params[i] : NULL;
}

/* ---- compiling -------------------------------------------------------------------- */

void teeny_artifact_destroy(teeny_artifact *a) {
  if (!a)
    return;
  teeny__params_free(a->params, a->nparams);
  teeny__free(a->name);
  teeny__free(a->id);
  teeny__free(a->entry);
  teeny__free(a->target);
  teeny__free(a->source);
  teeny__free(a->mlir);
  teeny__free(a->ptx);
  teeny__free(a);
}

static teeny_artifact *artifact_new(const struct teeny_spec *s) {
  teeny_artifact *a = teeny__calloc(1, sizeof *a);
  if (!a)
    return NULL;
  memcpy(a->key, s->key, sizeof a->key);
  a->num_warps = s->num_warps;
  a->threads_per_block = 32 * s->num_warps;
  a->name = teeny__strdup(teeny_spec_name(s));
  a->id = teeny__strdup(s->id);
  a->entry = teeny__strdup(s->entry);
  a->target = teeny__strdup(s->target);
  a->source = teeny__strndup(s->source, s->source_len);
  a->source_len = s->source_len;
  a->params = teeny__params_dup(s->params, s->nparams);
  a->nparams = a->params ? s->nparams : 0;
  if (!a->name || !a->id || !a->entry || !a->target || !a->source || !a->params) {
    teeny_artifact_destroy(a);
    return NULL;
  }
  return a;
}

/* Build IR and the requested outputs into a. */
static int lower(teeny_ctx *cx, const struct teeny_spec *s, unsigned emit, teeny_artifact *a) {
  teeny_ir_func *f = teeny__irgen(cx, s->prog, s->k, &s->b, s->num_warps);
  if (!f)
    return cx->nerrors ? TEENY_E_COMPILE : TEENY_E_INTERNAL;
  if (emit & TEENY_EMIT_MLIR) {
    teeny_buf m;
    teeny__buf_init(&m);
    teeny__mlir_print(&m, f);
    a->mlir = teeny__buf_take(&m, &a->mlir_len);
    if (!a->mlir)
      return TEENY_E_NOMEM;
  }
  if (emit & TEENY_EMIT_PTX) {
    teeny_codegen_opts o = {s->target, s->num_warps, s->b.num_stages};
    teeny_codegen_out out = {NULL, 0, 0};
    int rc = teeny__codegen_ptx(cx, f, &o, &out);
    if (rc)
      return rc;
    a->ptx = out.ptx;
    a->ptx_len = out.ptx_len;
    a->shared_bytes = out.shared_bytes;
  }
  return TEENY_OK;
}

/* One job on a spec (lowering it, interpreting it): fn runs with a context
 * over a fresh arena of at most JOB_ARENA_LIMIT bytes, freed afterwards; an
 * allocation failure anywhere inside is TEENY_E_NOMEM. */
typedef int (*job_fn)(teeny_ctx *cx, const struct teeny_spec *s, void *arg);

static int run_job(const struct teeny_spec *s, teeny_diags *diags, job_fn fn, void *arg) {
  teeny_arena arena;
  teeny__arena_init(&arena);
  arena.limit = JOB_ARENA_LIMIT;
  jmp_buf oom;
  arena.oom = &oom;
  int rc;
  if (setjmp(oom)) {
    rc = TEENY_E_NOMEM;
  } else {
    teeny_ctx cx;
    ctx_init(&cx, &arena, s->file, s->text, s->len, diags);
    rc = fn(&cx, s, arg);
  }
  teeny__arena_free(&arena);
  return rc;
}

typedef struct lower_job {
  unsigned emit;
  teeny_artifact *a;
} lower_job;

static int lower_in_job(teeny_ctx *cx, const struct teeny_spec *s, void *arg) {
  lower_job *j = arg;
  return lower(cx, s, j->emit, j->a);
}

int teeny_spec_compile(const teeny_spec *spec, unsigned emit, teeny_artifact **out,
                       teeny_diags *diags) {
  *out = NULL;
  uint64_t t0 = teeny__now_ns();
  teeny_artifact *a = artifact_new(spec);
  if (!a)
    return TEENY_E_NOMEM;
  lower_job job = {emit, a};
  int rc = run_job(spec, diags, lower_in_job, &job);
  if (rc) {
    teeny_artifact_destroy(a);
    return rc;
  }
  a->compile_ns = teeny__now_ns() - t0;
  *out = a;
  return TEENY_OK;
}

int teeny_compile(const teeny_compile_req *req, unsigned emit, teeny_artifact **out,
                  teeny_diags *diags) {
  teeny_spec *spec;
  *out = NULL;
  int rc = teeny_spec_create(req, &spec, diags);
  if (rc)
    return rc;
  rc = teeny_spec_compile(spec, emit, out, diags);
  teeny_spec_destroy(spec);
  return rc;
}

/* ---- tensor_desc blocks ------------------------------------------------------------ */

_Static_assert(TEENY_SPEC_MAX_RANK == TEENY_MAX_RANK, "teeny/compile.h's rank is the IR's");

typedef struct block_job {
  size_t param;
  int *rank;
  int *block;
} block_job;

/* The block dims are const expressions of the kernel's bindings: the IR
 * generator evaluates them (and checks them) as it binds the parameter. */
static int block_in_job(teeny_ctx *cx, const struct teeny_spec *s, void *arg) {
  block_job *j = arg;
  teeny_ir_func *f = teeny__irgen(cx, s->prog, s->k, &s->b, s->num_warps);
  if (!f)
    return cx->nerrors ? TEENY_E_COMPILE : TEENY_E_INTERNAL;
  const struct teeny_ir_tmap *t = f->tmaps && j->param < 64 ? &f->tmaps[j->param] : NULL;
  if (!t || !t->rank)
    return TEENY_E_INTERNAL; /* the spec's parameter kinds come from the same slots */
  *j->rank = t->rank;
  memcpy(j->block, t->block, sizeof t->block[0] * (size_t)t->rank);
  return TEENY_OK;
}

int teeny_spec_param_block(const teeny_spec *spec, size_t i, int *rank,
                           int block[TEENY_SPEC_MAX_RANK], teeny_diags *diags) {
  *rank = 0;
  if (i >= spec->nparams)
    return TEENY_E_INVAL;
  if (spec->params[i].kind != TEENY_PARAM_TENSORMAP)
    return TEENY_OK;
  block_job job = {i, rank, block};
  int rc = run_job(spec, diags, block_in_job, &job);
  if (rc)
    *rank = 0;
  return rc;
}

/* The spec's IR in a job of its own, handed to fn with the arguments
 * checked against its parameters (the interpreter and the emulator). */
typedef struct ir_job {
  const unsigned *grid;
  const teeny_interp_arg *args;
  size_t nargs;
  teeny__spec_ir_fn fn;
  void *arg;
} ir_job;

static int ir_in_job(teeny_ctx *cx, const struct teeny_spec *s, void *arg) {
  ir_job *j = arg;
  teeny_ir_func *f = teeny__irgen(cx, s->prog, s->k, &s->b, s->num_warps);
  if (!f)
    return TEENY_E_COMPILE;
  if (j->nargs != s->nparams) {
    teeny__error_at(cx, (teeny_loc){0, 0}, "'%s' takes %zu arguments; %zu were given",
                    teeny_spec_name(s), s->nparams, j->nargs);
    return TEENY_E_INVAL;
  }
  return j->fn(cx, f, s->target, j->grid, j->args, (int)j->nargs, j->arg);
}

int teeny__spec_run_ir(const teeny_spec *spec, const unsigned grid[3],
                       const teeny_interp_arg *args, size_t nargs, teeny_diags *diags,
                       teeny__spec_ir_fn fn, void *arg) {
  ir_job job = {grid, args, nargs, fn, arg};
  return run_job(spec, diags, ir_in_job, &job);
}

static int interpret_ir(teeny_ctx *cx, const teeny_ir_func *f, const char *target,
                        const unsigned grid[3], const teeny_interp_arg *args, int nargs,
                        void *arg) {
  (void)target;
  (void)arg;
  return teeny__interp_run(cx, f, grid, args, nargs);
}

int teeny_spec_interpret(const teeny_spec *spec, const unsigned grid[3],
                         const teeny_interp_arg *args, size_t nargs, teeny_diags *diags) {
  return teeny__spec_run_ir(spec, grid, args, nargs, diags, interpret_ir, NULL);
}
