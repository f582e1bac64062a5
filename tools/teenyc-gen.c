/*
 * tools/teenyc-gen.c — typed C host code from a kernel file: the C
 * counterpart of teenygrad's #[kernel], minus its positional, unchecked
 * arguments.  `teenyc-gen FILE -o DIR` writes DIR/STEM.teeny.h and
 * DIR/STEM.teeny.c (STEM: the file name without .c, or --name).
 *
 * Per kernel K of the file (teeny_source_inspect gives the generics, the
 * parameters and the backward pairs):
 *
 *   K_consts      one field per const generic (its dtype; int32_t when it
 *                 declares none), lower-cased
 *                 (BLOCK_SIZE -> block_size), set by designated initialiser
 *   K_dtypes      (only with two or more dtype generics) likewise for dtypes
 *   K_kernel      name, id, a field per dtype and const generic,
 *                 kernel_source, entry_point_source, source; `base` is the
 *                 runtime state (teeny_kernel, teeny/client.h)
 *   K_args        one field per kernel parameter, typed: a pointer to a
 *                 concrete dtype is teeny_dptr_f32 & co., to a generic one
 *                 teeny_dptr; scalars are their C type (f16/bf16: uint16_t
 *                 bits; a generic scalar: double, converted at launch)
 *   K_init(k, [dtype | dtypes,] [consts])   K_set_options(k, target, warps)
 *   K_compile(k, client)   K_launch(k, grid, stream, &args)   K_close(k)
 *   K_dispatch(out, [dtype,] [consts]) + K_dispatched, when a dtype generic
 *                 lists its dtypes or K has a TEENY_BACKWARD kernel: checks
 *                 the dtype against the lists (an error naming them) and
 *                 initialises the forward and backward kernels together.
 *
 * The .c holds the kernel file byte for byte (so its cache key is the one
 * teenyc computes from the file) and the function bodies.
 * Exit status: 0 ok, 1 errors in the kernel file, 2 usage, 3 I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "teeny/compile.h"

enum { EXIT_USER = 1, EXIT_USAGE = 2, EXIT_SYSTEM = 3 };
#define IDENT_MAX 96

static const char usage_text[] =
    "usage: teenyc-gen FILE -o DIR [--name STEM]\n"
    "\n"
    "Write DIR/STEM.teeny.h and DIR/STEM.teeny.c: a typed C API for every kernel\n"
    "of the kernel file FILE (STEM defaults to FILE's name without .c).\n"
    "\n"
    "  -o, --output DIR   where to write (must exist)\n"
    "  -n, --name STEM    base name of the generated files and of the\n"
    "                     STEM_file_source symbol (a C identifier)\n"
    "  -h, --help         show this help\n"
    "  -V, --version      show the version\n"
    "\n"
    "Per kernel K: K_consts, K_kernel, K_args, K_init, K_compile, K_launch,\n"
    "K_close, and K_dispatch where a dtype generic lists its dtypes or K has a\n"
    "TEENY_BACKWARD kernel.  CMake: teeny_add_kernels(TARGET FILES...) in\n"
    "cmake/TeenyKernels.cmake runs this for you.\n"
    "\n"
    "example:\n"
    "  teenyc-gen examples/kernels/vector_add.c -o build/gen\n"
    "  #include \"vector_add.teeny.h\"\n"
    "  vector_add_kernel k;\n"
    "  vector_add_init(&k, TEENY_DT_F32, (vector_add_consts){.block_size = 1024});\n";

/* What the generator works from. */
typedef struct gen {
  const char *path;              /* FILE as given */
  const char *base;              /* its last path component */
  char stem[IDENT_MAX];          /* STEM */
  const char *src;               /* the file's bytes */
  size_t len;
  const teeny_source_info *info; /* what it declares */
  char (*field)[IDENT_MAX];      /* per generic: its C field name */
} gen;

/* ---- names ------------------------------------------------------------------------ */

static const char *const c_words[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
    "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
    "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
    "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
    "true", "false", "name", "id", "kernel_source", "entry_point_source", "source",
    "base", "dtypes", "consts"};

/* A generic's field: its name lower-cased, with '_' appended where that is
 * a C keyword or one of the kernel struct's own fields. */
static void field_name(char *out, const char *name) {
  size_t n = 0;
  for (; name[n] && n + 2 < IDENT_MAX; n++)
    out[n] = (char)tolower((unsigned char)name[n]);
  out[n] = '\0';
  for (size_t i = 0; i < sizeof c_words / sizeof *c_words; i++)
    if (strcmp(out, c_words[i]) == 0) {
      out[n] = '_';
      out[n + 1] = '\0';
    }
}

static int check_fields(const gen *g) {
  for (size_t i = 0; i < g->info->ngenerics; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(g->field[i], g->field[j]) == 0) {
        fprintf(stderr, "teenyc-gen: %s: generics '%s' and '%s' both become field '%s'\n",
                g->path, g->info->generics[j].name, g->info->generics[i].name, g->field[i]);
        return EXIT_USER;
      }
  return 0;
}

static const char *c_scalar(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL: return "bool";
  case TEENY_DT_I8: return "int8_t";
  case TEENY_DT_I16: return "int16_t";
  case TEENY_DT_I32: return "int32_t";
  case TEENY_DT_I64: return "int64_t";
  case TEENY_DT_U8: return "uint8_t";
  case TEENY_DT_U16: return "uint16_t";
  case TEENY_DT_U32: return "uint32_t";
  case TEENY_DT_U64: return "uint64_t";
  case TEENY_DT_F16: return "uint16_t"; /* IEEE half bits */
  case TEENY_DT_BF16: return "uint16_t"; /* bfloat16 bits */
  case TEENY_DT_F8E4M3: return "uint8_t"; /* fp8 bits */
  case TEENY_DT_F8E5M2: return "uint8_t";
  case TEENY_DT_F32: return "float";
  default: return "double";
  }
}

/* The C type of a const generic's field: its dtype's (floats of any width
 * as float or double: the compiler rounds the value to the dtype). */
static const char *const_ctype(const teeny_generic_info *gi) {
  switch (gi->const_dtype) {
  case TEENY_DT_VOID: return "int32_t";
  case TEENY_DT_F16: case TEENY_DT_BF16: case TEENY_DT_F32: return "float";
  default: return c_scalar(gi->const_dtype);
  }
}

/* Float consts are bound as text (teeny/compile.h), kept in a field of
 * their own beside the value. */
static bool const_as_text(const teeny_generic_info *gi) {
  return !gi->is_dtype && gi->const_dtype >= TEENY_DT_F16 && gi->const_dtype <= TEENY_DT_F64;
}

/* The dtype as DSL source spells it, for comments. */
static const char *param_dtype(const gen *g, const teeny_param_info *p) {
  return p->generic >= 0 ? g->info->generics[p->generic].name : teeny_dtype_name(p->dtype);
}

/* The type of a parameter's field in K_args. */
static void arg_type(char *out, size_t size, const teeny_param_info *p) {
  if (p->kind == TEENY_PARAM_TENSORMAP) /* teeny_tensor_desc_make fills it */
    snprintf(out, size, "teeny_tensormap");
  else if (p->kind == TEENY_PARAM_POINTER && p->generic >= 0)
    snprintf(out, size, "teeny_dptr");
  else if (p->kind == TEENY_PARAM_POINTER)
    snprintf(out, size, "teeny_dptr_%s", teeny_dtype_name(p->dtype));
  else
    snprintf(out, size, "%s", p->generic >= 0 ? "double" : c_scalar(p->dtype));
}

/* Counts of a kernel's dtype and const generics. */
static void count_generics(const gen *g, const teeny_kernel_info *k, size_t *nd, size_t *nc) {
  *nd = *nc = 0;
  for (size_t i = 0; i < k->ngenerics; i++) {
    if (g->info->generics[k->generics[i]].is_dtype)
      ++*nd;
    else
      ++*nc;
  }
}

/* ", teeny_dtype d" / ", K_dtypes dtypes" / "" and ", K_consts consts" / "". */
static void generic_params(FILE *f, const gen *g, const teeny_kernel_info *k) {
  size_t nd, nc;
  count_generics(g, k, &nd, &nc);
  for (size_t i = 0; nd == 1 && i < k->ngenerics; i++)
    if (g->info->generics[k->generics[i]].is_dtype)
      fprintf(f, ", teeny_dtype %s", g->field[k->generics[i]]);
  if (nd > 1)
    fprintf(f, ", %s_dtypes dtypes", k->name);
  if (nc)
    fprintf(f, ", %s_consts consts", k->name);
}

/* The expression for generic gi's value inside K_init. */
static void generic_value(FILE *f, const gen *g, const teeny_kernel_info *k, int gi) {
  size_t nd, nc;
  count_generics(g, k, &nd, &nc);
  if (g->info->generics[gi].is_dtype && nd == 1)
    fprintf(f, "%s", g->field[gi]);
  else
    fprintf(f, "%s.%s", g->info->generics[gi].is_dtype ? "dtypes" : "consts", g->field[gi]);
}

static bool has_dispatch(const gen *g, const teeny_kernel_info *k) {
  if (k->forward >= 0)
    return false;
  if (k->backward >= 0)
    return true;
  for (size_t i = 0; i < k->ngenerics; i++)
    if (g->info->generics[k->generics[i]].nallowed)
      return true;
  return false;
}

/* ---- the header --------------------------------------------------------------------- */

static void emit_signature_comment(FILE *f, const gen *g, const teeny_kernel_info *k) {
  fprintf(f, "/* ---- %s(", k->name);
  for (size_t i = 0; i < k->nparams; i++) {
    const teeny_param_info *p = &k->params[i];
    fprintf(f, "%s%s%s%s %s", i ? ", " : "", p->kind == TEENY_PARAM_POINTER ? "ptr(" : "",
            param_dtype(g, p), p->kind == TEENY_PARAM_POINTER ? ")" : "", p->name);
  }
  fprintf(f, "), %s:%d ---- */\n\n", g->base, k->line);
}

static void emit_generic_structs(FILE *f, const gen *g, const teeny_kernel_info *k) {
  size_t nd, nc;
  count_generics(g, k, &nd, &nc);
  for (int pass = 0; pass < 2; pass++) {
    bool dt = pass == 0;
    if ((dt && nd < 2) || (!dt && nc == 0))
      continue;
    fprintf(f, "/* The %s generics of %s, by name: (%s_%s){.field = ...}. */\n",
            dt ? "dtype" : "const", k->name, k->name, dt ? "dtypes" : "consts");
    fprintf(f, "typedef struct %s_%s {\n", k->name, dt ? "dtypes" : "consts");
    for (size_t i = 0; i < k->ngenerics; i++) {
      const teeny_generic_info *gi = &g->info->generics[k->generics[i]];
      if (gi->is_dtype == dt)
        fprintf(f, "  %s %s; /* %s */\n", dt ? "teeny_dtype" : const_ctype(gi),
                g->field[k->generics[i]], gi->name);
    }
    fprintf(f, "} %s_%s;\n\n", k->name, dt ? "dtypes" : "consts");
  }
}

static void allowed_list(FILE *f, const teeny_generic_info *gi) {
  for (size_t j = 0; j < gi->nallowed; j++)
    fprintf(f, "%s%s", j ? ", " : "", teeny_dtype_name(gi->allowed[j]));
}

static void emit_kernel_struct(FILE *f, const gen *g, const teeny_kernel_info *k) {
  fprintf(f, "typedef struct %s_kernel {\n", k->name);
  fprintf(f, "  const char *name;               /* \"%s\" */\n", k->name);
  fprintf(f, "  const char *id;                 /* \"%s__...\", set by %s_init */\n",
          k->name, k->name);
  for (size_t i = 0; i < k->ngenerics; i++) {
    const teeny_generic_info *gi = &g->info->generics[k->generics[i]];
    fprintf(f, "  %s %s; /* %s generic %s", gi->is_dtype ? "teeny_dtype" : const_ctype(gi),
            g->field[k->generics[i]], gi->is_dtype ? "dtype" : "const", gi->name);
    if (gi->nallowed) {
      fprintf(f, " (");
      allowed_list(f, gi);
      fprintf(f, ")");
    }
    if (gi->const_dtype)
      fprintf(f, ", a %s", teeny_dtype_name(gi->const_dtype));
    fprintf(f, " */\n");
    if (const_as_text(gi))
      fprintf(f, "  char %s_text[32]; /* the same as text, for its binding */\n",
              g->field[k->generics[i]]);
  }
  fprintf(f, "  const char *kernel_source;      /* the kernel file, %s */\n", g->base);
  fprintf(f, "  const char *entry_point_source; /* the generated entry point */\n");
  fprintf(f, "  const char *source;             /* the whole generated source */\n");
  fprintf(f, "  teeny_kernel base;              /* runtime state (teeny/client.h) */\n");
  fprintf(f, "} %s_kernel;\n\n", k->name);
}

static void emit_args_struct(FILE *f, const gen *g, const teeny_kernel_info *k) {
  fprintf(f, "/* The arguments of %s, in order; designated initialisers name them. */\n",
          k->name);
  fprintf(f, "typedef struct %s_args {\n", k->name);
  for (size_t i = 0; i < k->nparams; i++) {
    const teeny_param_info *p = &k->params[i];
    char ty[48];
    arg_type(ty, sizeof ty, p);
    fprintf(f, "  %s %s; /* %s%s%s */\n", ty, p->name,
            p->kind == TEENY_PARAM_POINTER ? "ptr(" : "", param_dtype(g, p),
            p->kind == TEENY_PARAM_POINTER ? ")" : "");
  }
  if (k->nparams == 0)
    fprintf(f, "  char unused_; /* the kernel takes no arguments */\n");
  fprintf(f, "} %s_args;\n\n", k->name);
}

static void emit_prototypes(FILE *f, const gen *g, const teeny_kernel_info *k) {
  const char *n = k->name;
  fprintf(f, "/* Bind the generics and compute id, key and sources (no compile).  0 or a\n"
             " * teeny_err; k->base.err says why (e.g. a dtype outside the list). */\n");
  fprintf(f, "int %s_init(%s_kernel *k", n, n);
  generic_params(f, g, k);
  fprintf(f, ");\n");
  fprintf(f, "/* Target (NULL: sm_90a) and num_warps (0: 4), then re-init. */\n");
  fprintf(f, "int %s_set_options(%s_kernel *k, const char *target, int num_warps);\n", n, n);
  fprintf(f, "/* Compile through c (daemon, embedded or offline); once. */\n");
  fprintf(f, "int %s_compile(%s_kernel *k, teeny_client *c);\n", n, n);
  fprintf(f, "/* Launch on stream (NULL: default) over grid programs. */\n");
  fprintf(f, "int %s_launch(%s_kernel *k, teeny_grid grid, void *stream, const %s_args *args);\n",
          n, n, n);
  fprintf(f, "void %s_close(%s_kernel *k);\n\n", n, n);
}

static void emit_dispatch_decl(FILE *f, const gen *g, const teeny_kernel_info *k) {
  const char *n = k->name;
  const teeny_kernel_info *b = k->backward >= 0 ? &g->info->kernels[k->backward] : NULL;
  fprintf(f, "/* %s for the dtypes it supports%s%s. */\n", n, b ? " with its backward kernel " : "",
          b ? b->name : "");
  fprintf(f, "typedef struct %s_dispatched {\n", n);
  fprintf(f, "  %s_kernel forward;  /* the kernel for the dtype asked */\n", n);
  if (b)
    fprintf(f, "  %s_kernel backward; /* its TEENY_BACKWARD kernel */\n", b->name);
  fprintf(f, "  char error[TEENY_KERNEL_ERR_LEN]; /* why dispatch failed */\n");
  fprintf(f, "} %s_dispatched;\n\n", n);
  fprintf(f, "/* 0, or TEENY_E_BINDING (a dtype outside the supported list; out->error\n"
             " * names the list) or another init error.  Close with %s_dispatched_close. */\n",
          n);
  fprintf(f, "int %s_dispatch(%s_dispatched *out", n, n);
  generic_params(f, g, k);
  fprintf(f, ");\n");
  fprintf(f, "void %s_dispatched_close(%s_dispatched *out);\n\n", n, n);
}

static void emit_header(FILE *f, const gen *g) {
  fprintf(f, "/* %s.teeny.h — typed host API for the kernels of %s.\n"
             " * Generated by teenyc-gen %s; do not edit. */\n",
          g->stem, g->base, teeny_version());
  char guard[IDENT_MAX];
  for (size_t i = 0; i < sizeof guard; i++)
    if (!(guard[i] = (char)toupper((unsigned char)g->stem[i])))
      break;
  fprintf(f, "#ifndef TEENY_GEN_%s_H\n#define TEENY_GEN_%s_H\n\n", guard, guard);
  fprintf(f, "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n");
  fprintf(f, "#include <teeny/client.h>\n\n");
  fprintf(f, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  fprintf(f, "/* %s byte for byte (the cache key depends on every byte). */\n", g->base);
  fprintf(f, "extern const char %s_file_source[];\nextern const size_t %s_file_source_len;\n\n",
          g->stem, g->stem);
  for (size_t i = 0; i < g->info->nkernels; i++) {
    const teeny_kernel_info *k = &g->info->kernels[i];
    emit_signature_comment(f, g, k);
    emit_generic_structs(f, g, k);
    emit_kernel_struct(f, g, k);
    emit_args_struct(f, g, k);
    emit_prototypes(f, g, k);
  }
  for (size_t i = 0; i < g->info->nkernels; i++)
    if (has_dispatch(g, &g->info->kernels[i]))
      emit_dispatch_decl(f, g, &g->info->kernels[i]);
  fprintf(f, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

/* ---- the source ----------------------------------------------------------------------- */

/* s[0..n) as a C string literal, one source line per line of output. */
static void emit_literal(FILE *f, const char *s, size_t n, const char *indent) {
  fprintf(f, "%s\"", indent);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '\n') {
      if (i + 1 < n)
        fprintf(f, "\\n\"\n%s\"", indent);
      else
        fputs("\\n", f);
    } else if (ch == '"' || ch == '\\') {
      fprintf(f, "\\%c", ch);
    } else if (ch == '?') {
      fputs("\\?", f); /* no trigraphs */
    } else if (ch < 0x20 || ch >= 0x7f) {
      fprintf(f, "\\%03o", ch);
    } else {
      fputc(ch, f);
    }
  }
  fputs("\"", f);
}

static void emit_init(FILE *f, const gen *g, const teeny_kernel_info *k) {
  const char *n = k->name;
  fprintf(f, "int %s_init(%s_kernel *k", n, n);
  generic_params(f, g, k);
  fprintf(f, ") {\n  memset(k, 0, sizeof *k);\n");
  fprintf(f, "  k->name = \"%s\";\n  k->kernel_source = %s_file_source;\n", n, g->stem);
  fprintf(f, "  teeny_compile_req *r = &k->base.req;\n");
  fprintf(f, "  r->source = %s_file_source;\n  r->source_len = %s_file_source_len;\n", g->stem,
          g->stem);
  fprintf(f, "  r->filename =");
  emit_literal(f, g->base, strlen(g->base), " ");
  fprintf(f, ";\n  r->kernel = \"%s\";\n", n);
  for (size_t i = 0; i < k->ngenerics; i++) {
    int gi = k->generics[i];
    const teeny_generic_info *x = &g->info->generics[gi];
    fprintf(f, "  k->%s = ", g->field[gi]);
    generic_value(f, g, k, gi);
    fprintf(f, ";\n");
    if (x->is_dtype)
      fprintf(f, "  k->base.dtypes[r->ndtypes++] = (teeny_dtype_binding){\"%s\", "
                 "teeny_dtype_name(k->%s) ? teeny_dtype_name(k->%s) : \"(invalid)\"};\n",
              x->name, g->field[gi], g->field[gi]);
    else if (const_as_text(x)) /* %.9g / %.17g: the value exactly */
      fprintf(f, "  snprintf(k->%s_text, sizeof k->%s_text, \"%%.%dg\", (double)k->%s);\n"
                 "  k->base.dtypes[r->ndtypes++] = (teeny_dtype_binding){\"%s\", k->%s_text};\n",
              g->field[gi], g->field[gi], x->const_dtype == TEENY_DT_F64 ? 17 : 9,
              g->field[gi], x->name, g->field[gi]);
    else
      fprintf(f, "  k->base.consts[r->nconsts++] = (teeny_const_binding){\"%s\", k->%s};\n",
              x->name, g->field[gi]);
  }
  fprintf(f, "  return %s_set_options(k, NULL, 0);\n}\n\n", n);
}

static void emit_small_fns(FILE *f, const teeny_kernel_info *k) {
  const char *n = k->name;
  fprintf(f, "int %s_set_options(%s_kernel *k, const char *target, int num_warps) {\n"
             "  int rc = teeny_kernel_set_options(&k->base, target, num_warps);\n"
             "  k->id = k->base.id;\n  k->source = k->base.source;\n"
             "  k->entry_point_source = k->base.entry_point_source;\n  return rc;\n}\n\n",
          n, n);
  fprintf(f, "int %s_compile(%s_kernel *k, teeny_client *c) {\n"
             "  return teeny_kernel_compile(&k->base, c);\n}\n\n", n, n);
  fprintf(f, "void %s_close(%s_kernel *k) {\n  teeny_kernel_close(&k->base);\n"
             "  k->id = k->source = k->entry_point_source = NULL;\n}\n\n", n, n);
}

static void emit_launch(FILE *f, const gen *g, const teeny_kernel_info *k) {
  const char *n = k->name;
  fprintf(f, "int %s_launch(%s_kernel *k, teeny_grid grid, void *stream, const %s_args *args) {\n",
          n, n, n);
  fprintf(f, "  void *params[%zu];\n", k->nparams ? k->nparams : 1);
  for (size_t i = 0; i < k->nparams; i++) {
    const teeny_param_info *p = &k->params[i];
    if (p->kind == TEENY_PARAM_POINTER)
      fprintf(f, "  params[%zu] = (void *)&args->%s.addr;\n", i, p->name);
    else if (p->kind == TEENY_PARAM_TENSORMAP)
      fprintf(f, "  params[%zu] = (void *)&args->%s;\n", i, p->name);
    else if (p->generic >= 0)
      fprintf(f, "  teeny_scalar_slot s%zu;\n  params[%zu] = teeny_scalar_pack(&s%zu, k->%s, "
                 "args->%s);\n", i, i, i, g->field[p->generic], p->name);
    else
      fprintf(f, "  params[%zu] = (void *)&args->%s;\n", i, p->name);
  }
  if (k->nparams == 0)
    fprintf(f, "  (void)args;\n  params[0] = NULL;\n");
  fprintf(f, "  return teeny_kernel_launch(&k->base, grid, stream, params, %zu);\n}\n\n",
          k->nparams);
}

/* The dtype check of one generic with a list, inside K_dispatch. */
static void emit_dtype_check(FILE *f, const gen *g, const teeny_kernel_info *k, int gi) {
  const teeny_generic_info *x = &g->info->generics[gi];
  fprintf(f, "  switch (");
  generic_value(f, g, k, gi);
  fprintf(f, ") {\n ");
  for (size_t j = 0; j < x->nallowed; j++) {
    char up[16];
    snprintf(up, sizeof up, "%s", teeny_dtype_name(x->allowed[j]));
    for (char *p = up; *p; p++)
      *p = (char)toupper((unsigned char)*p);
    fprintf(f, " case TEENY_DT_%s:", up);
  }
  fprintf(f, "\n    break;\n  default:\n    snprintf(out->error, sizeof out->error,\n"
             "             \"%s: dtype %%s is not supported for %s (supported: ", k->name,
          x->name);
  allowed_list(f, x);
  fprintf(f, ")\",\n             teeny_dtype_name(");
  generic_value(f, g, k, gi);
  fprintf(f, ") ? teeny_dtype_name(");
  generic_value(f, g, k, gi);
  fprintf(f, ") : \"(invalid)\");\n    return TEENY_E_BINDING;\n  }\n");
}

/* Arguments passing K's generics on to kernel b (same list, so same shape). */
static void forward_generics(FILE *f, const gen *g, const teeny_kernel_info *k,
                             const teeny_kernel_info *b) {
  size_t nd, nc;
  count_generics(g, k, &nd, &nc);
  for (size_t i = 0; nd == 1 && i < k->ngenerics; i++)
    if (g->info->generics[k->generics[i]].is_dtype)
      fprintf(f, ", %s", g->field[k->generics[i]]);
  for (int pass = 0; pass < 2; pass++) {
    bool dt = pass == 0;
    if ((dt && nd < 2) || (!dt && nc == 0))
      continue;
    fprintf(f, ", (%s_%s){", b->name, dt ? "dtypes" : "consts");
    for (size_t i = 0, first = 1; i < k->ngenerics; i++) {
      int gi = k->generics[i];
      if (g->info->generics[gi].is_dtype != dt)
        continue;
      fprintf(f, "%s.%s = %s.%s", first ? "" : ", ", g->field[gi], dt ? "dtypes" : "consts",
              g->field[gi]);
      first = 0;
    }
    fprintf(f, "}");
  }
}

static void emit_dispatch(FILE *f, const gen *g, const teeny_kernel_info *k) {
  const char *n = k->name;
  const teeny_kernel_info *b = k->backward >= 0 ? &g->info->kernels[k->backward] : NULL;
  fprintf(f, "int %s_dispatch(%s_dispatched *out", n, n);
  generic_params(f, g, k);
  fprintf(f, ") {\n  memset(out, 0, sizeof *out);\n");
  for (size_t i = 0; i < k->ngenerics; i++)
    if (g->info->generics[k->generics[i]].nallowed)
      emit_dtype_check(f, g, k, k->generics[i]);
  fprintf(f, "  int rc = %s_init(&out->forward", n);
  forward_generics(f, g, k, k);
  fprintf(f, ");\n  if (rc) {\n    snprintf(out->error, sizeof out->error, \"%%s\", "
             "out->forward.base.err);\n    return rc;\n  }\n");
  if (b) {
    fprintf(f, "  rc = %s_init(&out->backward", b->name);
    forward_generics(f, g, k, b);
    fprintf(f, ");\n  if (rc)\n    snprintf(out->error, sizeof out->error, \"%%s\", "
               "out->backward.base.err);\n");
  }
  fprintf(f, "  return rc;\n}\n\n");
  fprintf(f, "void %s_dispatched_close(%s_dispatched *out) {\n  %s_close(&out->forward);\n", n,
          n, n);
  if (b)
    fprintf(f, "  %s_close(&out->backward);\n", b->name);
  fprintf(f, "}\n\n");
}

static void emit_source(FILE *f, const gen *g) {
  fprintf(f, "/* %s.teeny.c — typed host API for the kernels of %s.\n"
             " * Generated by teenyc-gen %s; do not edit. */\n",
          g->stem, g->base, teeny_version());
  fprintf(f, "#include <stdio.h>\n#include <string.h>\n\n#include \"%s.teeny.h\"\n\n", g->stem);
  fprintf(f, "const char %s_file_source[] =\n", g->stem);
  emit_literal(f, g->src, g->len, "    ");
  fprintf(f, ";\nconst size_t %s_file_source_len = %zu;\n\n", g->stem, g->len);
  for (size_t i = 0; i < g->info->nkernels; i++) {
    const teeny_kernel_info *k = &g->info->kernels[i];
    emit_init(f, g, k);
    emit_small_fns(f, k);
    emit_launch(f, g, k);
    if (has_dispatch(g, k))
      emit_dispatch(f, g, k);
  }
}

/* ---- files ------------------------------------------------------------------------------ */

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "teenyc-gen: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = TEENY_MAX_SOURCE_BYTES + 1;
  char *buf = malloc(cap);
  size_t n = buf ? fread(buf, 1, cap, f) : 0;
  bool bad = !buf || ferror(f) || n > TEENY_MAX_SOURCE_BYTES;
  fclose(f);
  if (bad) {
    fprintf(stderr, "teenyc-gen: cannot read %s (or larger than %u bytes)\n", path,
            TEENY_MAX_SOURCE_BYTES);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

/* Write text to path through a temp file and rename, so a build never
 * sees half a file. */
static int write_file(const char *path, const char *text, size_t n) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(text, 1, n, f) == n;
  ok = f && fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    fprintf(stderr, "teenyc-gen: cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    return EXIT_SYSTEM;
  }
  return 0;
}

static int emit_file(const char *dir, const gen *g, const char *ext,
                     void (*emit)(FILE *, const gen *)) {
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  if (!f)
    return EXIT_SYSTEM;
  emit(f, g);
  bool bad = ferror(f);
  fclose(f);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.teeny.%s", dir, g->stem, ext);
  int rc = bad ? EXIT_SYSTEM : write_file(path, text, n);
  free(text);
  return rc;
}

/* ---- main ------------------------------------------------------------------------------ */

static bool is_ident(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
    return false;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_'))
      return false;
  return true;
}

static int set_stem(gen *g, const char *name) {
  if (!name) {
    snprintf(g->stem, sizeof g->stem, "%s", g->base);
    char *dot = strrchr(g->stem, '.');
    if (dot && strcmp(dot, ".c") == 0)
      *dot = '\0';
    for (char *p = g->stem; *p; p++)
      if (!isalnum((unsigned char)*p) && *p != '_')
        *p = '_';
  } else {
    snprintf(g->stem, sizeof g->stem, "%s", name);
  }
  if (!is_ident(g->stem)) {
    fprintf(stderr, "teenyc-gen: '%s' is not a C identifier; pass --name STEM\n", g->stem);
    return EXIT_USAGE;
  }
  return 0;
}

static int print_diags(const teeny_diags *d) {
  for (size_t i = 0; i < d->n; i++) {
    char buf[2048];
    teeny_diag_format(&d->v[i], buf, sizeof buf);
    fputs(buf, stderr);
  }
  return EXIT_USER;
}

static int generate(gen *g, const char *dir) {
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_source_info *info = NULL;
  int status = 0;
  if (teeny_source_inspect(g->src, g->len, g->path, &info, &d)) {
    status = print_diags(&d);
    goto done;
  }
  g->info = info;
  g->field = calloc(info->ngenerics + 1, sizeof *g->field);
  if (!g->field) {
    status = EXIT_SYSTEM;
    goto done;
  }
  for (size_t i = 0; i < info->ngenerics; i++)
    field_name(g->field[i], info->generics[i].name);
  if (info->nkernels == 0)
    fprintf(stderr, "teenyc-gen: warning: %s has no TEENY_KERNEL function\n", g->path);
  status = check_fields(g);
  if (!status)
    status = emit_file(dir, g, "h", emit_header);
  if (!status)
    status = emit_file(dir, g, "c", emit_source);
done:
  free(g->field);
  teeny_source_info_destroy(info);
  teeny_diags_close(&d);
  return status;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                           {"name", required_argument, NULL, 'n'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"version", no_argument, NULL, 'V'},
                                           {NULL, 0, NULL, 0}};
  const char *dir = NULL, *name = NULL;
  int c;
  while ((c = getopt_long(argc, argv, "o:n:hV", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': dir = optarg; break;
    case 'n': name = optarg; break;
    case 'h': fputs(usage_text, stdout); return 0;
    case 'V':
      printf("teenyc-gen %s (protocol %d)\n", TEENY_VERSION_STRING, TEENY_PROTOCOL_VERSION);
      return 0;
    default: fputs("Try 'teenyc-gen --help'.\n", stderr); return EXIT_USAGE;
    }
  }
  if (optind + 1 != argc || !dir) {
    fprintf(stderr, "teenyc-gen: need one kernel FILE and -o DIR\nTry 'teenyc-gen --help'.\n");
    return EXIT_USAGE;
  }
  gen g = {.path = argv[optind]};
  const char *slash = strrchr(g.path, '/');
  g.base = slash ? slash + 1 : g.path;
  int status = set_stem(&g, name);
  if (status)
    return status;
  char *src = read_file(g.path, &g.len);
  if (!src)
    return EXIT_SYSTEM;
  g.src = src;
  status = generate(&g, dir);
  free(src);
  return status;
}
