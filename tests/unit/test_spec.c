/*
 * tests/unit/test_spec.c — specialisation: ids, the generated source and
 * its key, parameter lists, and every class of bad binding or request.
 *
 * The key must depend on exactly what decides the output: the same source
 * and bindings give the same key (whatever the file name or the order of
 * the bindings); any change to the source, a binding, the target,
 * num_warps or the compiler version gives another.
 */
#include <check.h>
#include <unistd.h>

#include "common/common.h"
#include "kernel_util.h"

static char *vadd_src;
static size_t vadd_len;

static void setup(void) { vadd_src = ku_read_example("vector_add", &vadd_len); }
static void teardown(void) { free(vadd_src); }

typedef struct req_opts {
  const char *src;
  const char *file;
  const char *kernel;
  const char *bindings;
  const char *target;
  int num_warps;
  const char *version;
} req_opts;

/* Build a request from o (defaults: vector_add, D=f32, BLOCK_SIZE=1024). */
static int make(const req_opts *o, teeny_spec **s, teeny_diags *d) {
  char bind[256];
  snprintf(bind, sizeof bind, "%s", o->bindings ? o->bindings : "D=f32,BLOCK_SIZE=1024");
  teeny_dtype_binding dts[8];
  teeny_const_binding cts[8];
  size_t nd = 0, nc = 0;
  static char store[8][2][64];
  int k = 0;
  for (char *t = strtok(bind, ","); t && k < 8; t = strtok(NULL, ","), k++) {
    char *eq = strchr(t, '=');
    *eq = '\0';
    snprintf(store[k][0], 64, "%s", t);
    snprintf(store[k][1], 64, "%s", eq + 1);
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    if (*end == '\0')
      cts[nc++] = (teeny_const_binding){store[k][0], v};
    else
      dts[nd++] = (teeny_dtype_binding){store[k][0], store[k][1]};
  }
  teeny_compile_req r;
  memset(&r, 0, sizeof r);
  r.source = o->src ? o->src : vadd_src;
  r.source_len = o->src ? strlen(o->src) : vadd_len;
  r.filename = o->file ? o->file : "vector_add.c";
  r.kernel = o->kernel ? o->kernel : "vector_add";
  r.dtypes = dts;
  r.ndtypes = nd;
  r.consts = cts;
  r.nconsts = nc;
  r.target = o->target;
  r.num_warps = o->num_warps;
  r.compiler_version = o->version;
  return teeny_spec_create(&r, s, d);
}

static void key_of(const req_opts *o, char key[65]) {
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = make(o, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_int_eq(rc, 0);
  memcpy(key, teeny_spec_key(s), 65);
  teeny_spec_destroy(s);
  teeny_diags_close(&d);
}

START_TEST(key_is_stable_and_ignores_file_name_and_binding_order) {
  char a[65], b[65], c[65];
  req_opts o = {0};
  key_of(&o, a);
  key_of(&o, b);
  ck_assert_str_eq(a, b);
  ck_assert_int_eq(strlen(a), 64);
  o.file = "/somewhere/else/kernel.c";
  key_of(&o, c);
  ck_assert_str_eq(a, c);
  o.file = NULL;
  o.bindings = "BLOCK_SIZE=1024,D=f32";
  key_of(&o, c);
  ck_assert_str_eq(a, c);
}
END_TEST

START_TEST(key_changes_with_everything_that_matters) {
  char base[65], k[65];
  req_opts o = {0};
  key_of(&o, base);

  char *edited = malloc(vadd_len + 2);
  memcpy(edited, vadd_src, vadd_len);
  memcpy(edited + vadd_len, " \0", 2); /* one trailing space */
  req_opts e = {.src = edited};
  key_of(&e, k);
  ck_assert_str_ne(base, k);
  free(edited);

  req_opts d = {.bindings = "D=f16,BLOCK_SIZE=1024"};
  key_of(&d, k);
  ck_assert_str_ne(base, k);
  req_opts c = {.bindings = "D=f32,BLOCK_SIZE=512"};
  key_of(&c, k);
  ck_assert_str_ne(base, k);
  req_opts t = {.target = "sm_80"};
  key_of(&t, k);
  ck_assert_str_ne(base, k);
  req_opts w = {.num_warps = 8};
  key_of(&w, k);
  ck_assert_str_ne(base, k);
  req_opts v = {.version = "99.0.0"};
  key_of(&v, k);
  ck_assert_str_ne(base, k);
  /* num_stages, an option bound under its reserved name */
  req_opts st = {.bindings = "D=f32,BLOCK_SIZE=1024,teeny.num_stages=4"};
  key_of(&st, k);
  ck_assert_str_ne(base, k);
  char k2[65];
  req_opts st2 = {.bindings = "D=f32,BLOCK_SIZE=1024,teeny.num_stages=2"};
  key_of(&st2, k2);
  ck_assert_str_ne(k, k2);
  ck_assert_str_ne(base, k2);
  /* the defaults are explicit values: naming them changes nothing */
  req_opts same = {.target = "sm_90a", .num_warps = 4, .version = TEENY_VERSION_STRING};
  key_of(&same, k);
  ck_assert_str_eq(base, k);
  req_opts st0 = {.bindings = "D=f32,BLOCK_SIZE=1024,teeny.num_stages=0"}; /* automatic */
  key_of(&st0, k);
  ck_assert_str_eq(base, k);
  /* the option is in the header of the generated source, not in the id */
  teeny_spec *s;
  teeny_diags dg;
  teeny_diags_init(&dg);
  ck_assert_int_eq(make(&st, &s, &dg), 0);
  ck_assert_int_eq(teeny_spec_num_stages(s), 4);
  ck_assert_str_eq(teeny_spec_id(s), "vector_add__f32__1024");
  ck_assert_ptr_nonnull(strstr(teeny_spec_source(s, NULL), " * num_stages: 4\n */\n"));
  teeny_spec_destroy(s);
  /* unaligned pointers (TEENY_OPT_UNALIGNED): their own key, in the header */
  req_opts un = {.bindings = "D=f32,BLOCK_SIZE=1024,teeny.unaligned=2"};
  key_of(&un, k2);
  ck_assert_str_ne(base, k2);
  ck_assert_int_eq(make(&un, &s, &dg), 0);
  ck_assert_ptr_nonnull(strstr(teeny_spec_source(s, NULL), " * unaligned pointers: 0x2\n"));
  teeny_spec_destroy(s);
  req_opts un0 = {.bindings = "D=f32,BLOCK_SIZE=1024,teeny.unaligned=0"};
  key_of(&un0, k2);
  ck_assert_str_eq(base, k2);
  teeny_diags_close(&dg);
}
END_TEST

START_TEST(id_entry_params_and_source) {
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  req_opts o = {0};
  ck_assert_int_eq(make(&o, &s, &d), 0);
  ck_assert_str_eq(teeny_spec_id(s), "vector_add__f32__1024");
  ck_assert_str_eq(teeny_spec_entry(s), "vector_add_entry_point");
  ck_assert_str_eq(teeny_spec_name(s), "vector_add");
  ck_assert_str_eq(teeny_spec_target(s), "sm_90a");
  ck_assert_int_eq(teeny_spec_num_warps(s), 4);
  ck_assert_uint_eq(teeny_spec_nparams(s), 4);
  const teeny_param *p0 = teeny_spec_param(s, 0), *p3 = teeny_spec_param(s, 3);
  ck_assert_str_eq(p0->name, "a_ptr");
  ck_assert_int_eq(p0->kind, TEENY_PARAM_POINTER);
  ck_assert_int_eq(p0->dtype, TEENY_DT_F32);
  ck_assert_str_eq(p3->name, "n_elements");
  ck_assert_int_eq(p3->kind, TEENY_PARAM_SCALAR);
  ck_assert_int_eq(p3->dtype, TEENY_DT_I32);
  ck_assert_ptr_null(teeny_spec_param(s, 4));
  size_t len;
  const char *src = teeny_spec_source(s, &len);
  ck_assert_uint_eq(strlen(src), len);
  ck_assert(strstr(src, "void vector_add_entry_point(f32 *a_ptr, f32 *b_ptr, f32 *out_ptr, "
                        "i32 n_elements)\n{ vector_add(a_ptr, b_ptr, out_ptr, n_elements); }") != NULL);
  ck_assert(strstr(src, "TEENY_BIND(D, f32);\nTEENY_BIND(BLOCK_SIZE, 1024);") != NULL);
  ck_assert(strstr(src, "target: sm_90a  num_warps: 4") != NULL);
  ck_assert(strstr(src, "teenyc " TEENY_VERSION_STRING) != NULL);
  ck_assert(strstr(src, "vector_add.c") == NULL); /* no file name in the key */
  char hex[65];
  teeny__sha256_hex(src, len, hex);
  ck_assert_str_eq(hex, teeny_spec_key(s));
  teeny_spec_destroy(s);
  teeny_diags_close(&d);
}
END_TEST

/* A tensor_desc parameter's block: the bound values of its dim
 * expressions, on its tensormap slot only; the IR generator's errors
 * about them reach the caller. */
START_TEST(tensor_desc_blocks) {
  static const char src[] =
      "#include <teeny/dsl.h>\n"
      "TEENY_DTYPE(D, f32, f16);\n"
      "TEENY_CONST(B);\n"
      "TEENY_KERNEL(D, B)\n"
      "void k(f32 *out, tensor_desc(D, B, 4 * B, 2) x, tensor_desc(D, 64) y) {\n"
      "    store(out + program_id(0), sum(sum(sum(load_tensor_descriptor(x, 0, 0, 0), 2), 1), 0)\n"
      "          + sum(load_tensor_descriptor(y, 0), 0));\n"
      "}\n";
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  req_opts o = {.src = src, .kernel = "k", .bindings = "D=f16,B=8"};
  int rc = make(&o, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_int_eq(rc, 0);
  ck_assert_uint_eq(teeny_spec_nparams(s), 1 + 7 + 3);
  int rank = -1, block[TEENY_SPEC_MAX_RANK] = {0};
  ck_assert_int_eq(teeny_spec_param_block(s, 0, &rank, block, &d), 0);
  ck_assert_int_eq(rank, 0); /* out: a pointer */
  ck_assert_int_eq(teeny_spec_param_block(s, 2, &rank, block, &d), 0);
  ck_assert_int_eq(rank, 0); /* x_base */
  ck_assert_int_eq(teeny_spec_param(s, 1)->kind, TEENY_PARAM_TENSORMAP);
  ck_assert_int_eq(teeny_spec_param_block(s, 1, &rank, block, &d), 0);
  ck_assert_int_eq(rank, 3);
  ck_assert_int_eq(block[0], 8);
  ck_assert_int_eq(block[1], 32);
  ck_assert_int_eq(block[2], 2);
  ck_assert_int_eq(teeny_spec_param_block(s, 8, &rank, block, &d), 0);
  ck_assert_int_eq(rank, 1);
  ck_assert_int_eq(block[0], 64);
  ck_assert_int_eq(teeny_spec_param_block(s, 11, &rank, block, &d), TEENY_E_INVAL);
  teeny_spec_destroy(s);
  o.bindings = "D=f32,B=6"; /* 4 x 6 is no power of two */
  ck_assert_int_eq(make(&o, &s, &d), 0);
  ck_assert_int_eq(teeny_spec_param_block(s, 1, &rank, block, &d), TEENY_E_COMPILE);
  ck_assert_int_eq(rank, 0);
  bool said = false;
  for (size_t i = 0; i < d.n; i++)
    said |= strstr(d.v[i].message, "not a power of two") != NULL;
  ck_assert(said);
  teeny_spec_destroy(s);
  teeny_diags_close(&d);
}
END_TEST

START_TEST(generated_source_is_host_c) {
  /* the .c artifact is itself C11 against dsl.h (for f32 bindings, whose
   * host types agree) */
  if (system("command -v cc >/dev/null 2>&1") != 0)
    return;
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  req_opts o = {0};
  ck_assert_int_eq(make(&o, &s, &d), 0);
  char path[] = "/tmp/teeny-gen-XXXXXX.c";
  int fd = mkstemps(path, 2);
  ck_assert_int_ge(fd, 0);
  size_t len;
  const char *src = teeny_spec_source(s, &len);
  ck_assert_int_eq(write(fd, src, len), (ssize_t)len);
  close(fd);
  const char *root = getenv("TEENY_SOURCE_DIR");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cc -std=c11 -fsyntax-only -Wall -Werror -I%s/include %s",
           root ? root : ".", path);
  ck_assert_int_eq(system(cmd), 0);
  unlink(path);
  teeny_spec_destroy(s);
  teeny_diags_close(&d);
}
END_TEST

START_TEST(negative_const_in_id) {
  const char *src = "#include <teeny/dsl.h>\nTEENY_CONST(S);\nTEENY_KERNEL(S)\n"
                    "void shift(ptr(i32) x)\n{\n    store(x, S);\n}\n";
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  req_opts o = {.src = src, .kernel = "shift", .bindings = "S=-5"};
  ck_assert_int_eq(make(&o, &s, &d), 0);
  ck_assert_str_eq(teeny_spec_id(s), "shift__-5");
  teeny_spec_destroy(s);
  teeny_diags_close(&d);
}
END_TEST

START_TEST(typed_consts_in_id_source_and_key) {
  /* typed consts: the id and the TEENY_BIND lines show the value read, so
   * two spellings of it share a key; an int binding of a float const is
   * its value; the debug option is in the source (so in the key) only
   * when set */
  static const char src[] = "#include <teeny/dsl.h>\nTEENY_CONST(EPS, f32);\n"
                            "TEENY_CONST(ON, bool);\nTEENY_CONST(BIG, i64);\n"
                            "TEENY_CONST(H, f16);\nTEENY_KERNEL(EPS, ON, BIG, H)\n"
                            "void k(ptr(f32) x)\n{\n    store(x, EPS);\n}\n";
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  req_opts o = {.src = src, .kernel = "k", .bindings = "EPS=1e-5,ON=true,BIG=5000000000,H=0.1"};
  ck_assert_int_eq(make(&o, &s, &d), 0);
  ck_assert_str_eq(teeny_spec_id(s), "k__1e-05__true__5000000000__0.1");
  const char *gen = teeny_spec_source(s, NULL);
  ck_assert_ptr_nonnull(strstr(gen, "TEENY_BIND(EPS, 1e-05);\nTEENY_BIND(ON, true);\n"
                                    "TEENY_BIND(BIG, 5000000000);\nTEENY_BIND(H, 0.1);\n"));
  ck_assert_ptr_null(strstr(gen, "debug"));
  teeny_spec_destroy(s);
  char a[65], b[65], c[65];
  key_of(&o, a);
  req_opts o2 = {.src = src, .kernel = "k", .bindings = "EPS=0.00001,ON=1,BIG=5000000000,H=0.09998"};
  key_of(&o2, b); /* 0.1 and 0.09998 are one f16 */
  ck_assert_str_eq(a, b);
  req_opts o3 = {.src = src, .kernel = "k", .bindings = "EPS=2e-5,ON=1,BIG=5000000000,H=0.1"};
  key_of(&o3, c);
  ck_assert_str_ne(a, c);
  req_opts o4 = {.src = src, .kernel = "k", .bindings = "EPS=2,ON=false,BIG=-1,H=-0x1p-3"};
  ck_assert_int_eq(make(&o4, &s, &d), 0);
  ck_assert_str_eq(teeny_spec_id(s), "k__2__false__-1__-0.125");
  teeny_spec_destroy(s);
  req_opts o5 = {.src = src, .kernel = "k",
                 .bindings = "EPS=1e-5,ON=true,BIG=5000000000,H=0.1,teeny.debug=1"};
  ck_assert_int_eq(make(&o5, &s, &d), 0);
  ck_assert_ptr_nonnull(strstr(teeny_spec_source(s, NULL), "debug: on"));
  ck_assert_str_ne(teeny_spec_key(s), a);
  teeny_spec_destroy(s);
  req_opts o6 = {.src = src, .kernel = "k",
                 .bindings = "EPS=1e-5,ON=true,BIG=5000000000,H=0.1,teeny.debug=0"};
  key_of(&o6, c); /* off is the default: the same key */
  ck_assert_str_eq(a, c);
  teeny_diags_close(&d);
}
END_TEST

/* ---- bad requests ------------------------------------------------------------------- */

typedef struct bad_req {
  req_opts o;
  int rc;
  const char *message;
} bad_req;

static const char list_src[] = "#include <teeny/dsl.h>\nTEENY_DTYPE(D, f32, f16);\nTEENY_CONST(B);\n"
                               "TEENY_KERNEL(D, B)\nvoid k(ptr(D) x)\n{\n    store(x, B);\n}\n"
                               "i32 helper(i32 a) { return a; }\n";

static const char typed_src[] = "#include <teeny/dsl.h>\nTEENY_CONST(EPS, f32);\n"
                                "TEENY_CONST(ON, bool);\nTEENY_CONST(W, i8);\n"
                                "TEENY_CONST(BIG, i64);\nTEENY_KERNEL(EPS, ON, W, BIG)\n"
                                "void k(ptr(f32) x)\n{\n    store(x, EPS);\n}\n";

static const bad_req bad_reqs[] = {
    {{.bindings = "BLOCK_SIZE=1024"}, TEENY_E_BINDING, "generic 'D' of kernel 'vector_add' is not bound"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,E=f16"}, TEENY_E_BINDING, "declares no generic named 'E'"},
    {{.bindings = "D=f32,BLOCK_SIZE=f16"}, TEENY_E_BINDING,
     "binding BLOCK_SIZE=f16: 'f16' is not an integer of i32 (TEENY_CONST(BLOCK_SIZE))"},
    {{.bindings = "D=4,BLOCK_SIZE=1024"}, TEENY_E_BINDING, "is a dtype generic"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,teeny.num_stages=1"}, TEENY_E_BINDING,
     "option teeny.num_stages=1: num_stages is 2 to 8 (or 0: the code generator's choice)"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,teeny.num_stages=9"}, TEENY_E_BINDING,
     "option teeny.num_stages=9: num_stages is 2 to 8"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,teeny.stages=3"}, TEENY_E_BINDING,
     "binding 'teeny.stages': unknown option (the options are teeny.debug, teeny.num_stages, "
     "teeny.unaligned)"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,teeny.unaligned=8"}, TEENY_E_BINDING,
     "option teeny.unaligned=0x8: bit 3 is n_elements, not a pointer parameter"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,teeny.unaligned=16"}, TEENY_E_BINDING,
     "bit 4 is past the last parameter"},
    {{.bindings = "D=f33,BLOCK_SIZE=1024"}, TEENY_E_BINDING, "'f33' is not a dtype"},
    {{.bindings = "D=f32,BLOCK_SIZE=1024,D=f16"}, TEENY_E_BINDING, "given twice"},
    {{.bindings = "D=f32,BLOCK_SIZE=4294967296"}, TEENY_E_BINDING, "does not fit in i32"},
    {{.src = list_src, .kernel = "k", .bindings = "D=bf16,B=1"}, TEENY_E_BINDING,
     "accepts only f32, f16"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=abc,ON=1,W=3,BIG=1"}, TEENY_E_BINDING,
     "binding EPS=abc: 'abc' is not a number of f32 (TEENY_CONST(EPS, f32))"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1e39,ON=1,W=3,BIG=1"}, TEENY_E_BINDING,
     "'1e39' is out of the range of f32"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=16777217,ON=1,W=3,BIG=1"},
     TEENY_E_BINDING, "binding EPS=16777217 is not exactly representable in f32; bind it as text"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=2,W=3,BIG=1"}, TEENY_E_BINDING,
     "binding ON=2 does not fit in bool"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=yes,W=3,BIG=1"}, TEENY_E_BINDING,
     "'yes' is not true, false, 1 or 0, as a value of bool"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=1,W=300,BIG=1"}, TEENY_E_BINDING,
     "binding W=300 does not fit in i8"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=1,W=0x80,BIG=1"}, TEENY_E_BINDING,
     "'0x80' does not fit in i8"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=1,W=1,BIG=1.5"}, TEENY_E_BINDING,
     "'1.5' is not an integer of i64"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=1,W=1,BIG=1,teeny.debug=2"},
     TEENY_E_BINDING, "option teeny.debug=2: it is 0 (off) or 1 (on)"},
    {{.src = typed_src, .kernel = "k", .bindings = "EPS=1,ON=1,W=1,BIG=1,teeny.fast=1"},
     TEENY_E_BINDING, "binding 'teeny.fast': unknown option"},
    {{.target = "sm_70"}, TEENY_E_INVAL, "unknown target"},
    {{.num_warps = 3}, TEENY_E_INVAL, "num_warps must be"},
    {{.num_warps = 64}, TEENY_E_INVAL, "num_warps must be"},
    {{.kernel = "../../etc/passwd"}, TEENY_E_INVAL, "invalid kernel name"},
    {{.kernel = "vector_sub"}, TEENY_E_NOTFOUND, "no kernel named 'vector_sub' (kernels here: vector_add)"},
    {{.src = list_src, .kernel = "helper", .bindings = "D=f32,B=1"}, TEENY_E_NOTFOUND,
     "is a helper, not a kernel"},
};

START_TEST(bad_requests) {
  const bad_req *b = &bad_reqs[_i];
  teeny_spec *s = (teeny_spec *)1;
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = make(&b->o, &s, &d);
  ck_assert_msg(rc == b->rc, "case %d: got %s, want %s", _i, teeny_err_name(rc),
                teeny_err_name(b->rc));
  ck_assert_ptr_null(s);
  ck_assert_uint_ge(d.n, 1);
  bool found = false;
  for (size_t i = 0; i < d.n; i++)
    found = found || strstr(d.v[i].message, b->message) != NULL;
  ck_assert_msg(found, "case %d: no diagnostic contains '%s' (first: %s)", _i, b->message,
                d.v[0].message);
  teeny_diags_close(&d);
}
END_TEST

START_TEST(oversized_source_refused) {
  size_t n = TEENY_MAX_SOURCE_BYTES + 1;
  char *big = malloc(n);
  memset(big, ' ', n);
  teeny_compile_req r;
  memset(&r, 0, sizeof r);
  r.source = big;
  r.source_len = n;
  r.kernel = "k";
  teeny_spec *s;
  teeny_diags d;
  teeny_diags_init(&d);
  ck_assert_int_eq(teeny_spec_create(&r, &s, &d), TEENY_E_LIMIT);
  ck_assert(strstr(d.v[0].message, "limit") != NULL);
  teeny_diags_close(&d);
  free(big);
}
END_TEST

START_TEST(out_of_memory_is_reported_not_fatal) {
  /* fail the N-th allocation for N = 0, 1, 2, ... until a compile succeeds:
   * every failure must be a clean TEENY_E_NOMEM */
  int ok_at = -1;
  for (long n = 0; n < 5000 && ok_at < 0; n += (n < 200 ? 1 : 37)) {
    teeny_spec *s = NULL;
    teeny_diags d;
    teeny_diags_init(&d);
    req_opts o = {0};
    teeny__alloc_fail_after(n);
    int rc = make(&o, &s, &d);
    teeny_artifact *a = NULL;
    if (rc == 0)
      rc = teeny_spec_compile(s, TEENY_EMIT_MLIR, &a, &d);
    teeny__alloc_fail_after(-1);
    ck_assert_msg(rc == 0 || rc == TEENY_E_NOMEM, "after %ld allocations: %s", n,
                  teeny_err_name(rc));
    if (rc == 0)
      ok_at = (int)n;
    teeny_artifact_destroy(a);
    teeny_spec_destroy(s);
    teeny_diags_close(&d);
  }
  ck_assert_int_ge(ok_at, 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("spec");
  TCase *tc = tcase_create("all");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, key_is_stable_and_ignores_file_name_and_binding_order);
  tcase_add_test(tc, key_changes_with_everything_that_matters);
  tcase_add_test(tc, id_entry_params_and_source);
  tcase_add_test(tc, tensor_desc_blocks);
  tcase_add_test(tc, generated_source_is_host_c);
  tcase_add_test(tc, negative_const_in_id);
  tcase_add_test(tc, typed_consts_in_id_source_and_key);
  tcase_add_loop_test(tc, bad_requests, 0, (int)(sizeof bad_reqs / sizeof *bad_reqs));
  tcase_add_test(tc, oversized_source_refused);
  tcase_add_test(tc, out_of_memory_is_reported_not_fatal);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
