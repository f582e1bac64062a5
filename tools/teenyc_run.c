/*
 * tools/teenyc_run.c — teenyc-run, which `teenyc run` executes (so that
 * teenyc itself maps no code generator): one launch of a kernel on the CPU,
 * from the command line, with buffers from .npy files or made on the spot,
 * written back as .npy.  The interpreter (the language's semantics, with
 * its bounds and race checks) runs it by default; `--engine emu` runs the
 * real code generator's output on the host emulator instead, and `--engine
 * both` runs each on its own copy of the buffers and compares them, so a
 * reproducer of a miscompile is one command.  Triton users reach for
 * TRITON_INTERPRET=1 for this.
 *
 * Over include/teeny/compile.h only: teeny_spec_create, then
 * teeny_spec_interpret or teeny_spec_emulate.  Exit status: 0 ok; 1 the
 * kernel, its bindings, its arguments or its run failed (compile errors,
 * out-of-bounds accesses, races, a bad .npy, a dtype mismatch with a
 * parameter, the two engines disagreeing); 2 usage; 3 I/O.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "teeny/compile.h"
#include "tools/npy.h"

enum { EXIT_USER = 1, EXIT_USAGE = 2, EXIT_SYSTEM = 3 };
#define MAX_ITEMS 64

static const char usage_text[] =
    "usage: teenyc run FILE --kernel NAME [--dtype G=DTYPE]... [--const G=VALUE]...\n"
    "                  --grid X[,Y[,Z]] [--arg NAME=FILE.npy|NAME=VALUE]...\n"
    "                  [--fill NAME=COUNT[:zeros|iota|random[:SEED]]]...\n"
    "                  [--engine interp|emu|both] [--tol REL] [--atol ABS] [--out DIR]\n"
    "                  [--target T]\n"
    "                  [--num-warps N] [--debug] [--quiet]\n"
    "\n"
    "Run one launch of a kernel on the CPU and write its buffers back.\n"
    "\n"
    "options:\n"
    "  -k, --kernel NAME     the TEENY_KERNEL function to run\n"
    "  -d, --dtype G=DTYPE   bind dtype generic G; repeat for each\n"
    "  -c, --const G=VALUE   bind const generic G (1024, 1e-5, true); repeat\n"
    "  -g, --grid X[,Y[,Z]]  programs along each axis (default 1)\n"
    "  -a, --arg NAME=FILE.npy   a pointer parameter's buffer, from a .npy file\n"
    "                            of the parameter's dtype (bf16: '<u2' bits)\n"
    "      --arg NAME=VALUE      a scalar parameter (an integer, a float,\n"
    "                            true or false)\n"
    "  -f, --fill NAME=COUNT[:KIND[:SEED]]\n"
    "                        a pointer parameter's buffer of COUNT elements:\n"
    "                        zeros (default), iota (0, 1, 2, ...) or random\n"
    "                        (floats in [-1, 1), ints in [-100, 100], with SEED)\n"
    "  -e, --engine E        interp (default): the interpreter, which checks\n"
    "                        bounds and races; emu: the code generator's output\n"
    "                        on the host emulator (bounds unchecked); both: each\n"
    "                        on a copy, then compare, exit 1 if they differ\n"
    "      --tol REL         with both: elements agree within REL relative error\n"
    "      --atol ABS        ... plus ABS absolute error (defaults 0: bit for bit;\n"
    "                        NaN equals NaN)\n"
    "      --no-compare NAME with both: do not compare buffer NAME (one that\n"
    "                        holds addresses, which differ between the engines)\n"
    "  -o, --out DIR         write every pointer argument as DIR/NAME.npy\n"
    "  -t, --target T        sm_90a (default), sm_90, sm_89, sm_86, sm_80\n"
    "  -w, --num-warps N     warps per program (default 4)\n"
    "      --debug           check device_assert (compiled in; part of the key)\n"
    "  -q, --quiet           print nothing on success\n"
    "  -h, --help            show this help\n"
    "  -V, --version         show the version\n"
    "\n"
    "Without --out, each pointer argument is summarised on standard output.\n"
    "Exit status: 0 ok, 1 the kernel or its run failed (diagnostics on\n"
    "standard error), 2 usage, 3 I/O.\n"
    "\n"
    "example:\n"
    "  teenyc run examples/kernels/vector_add.c -k vector_add -d D=f32 \\\n"
    "      -c BLOCK_SIZE=1024 --grid 3 --fill a_ptr=3000:iota \\\n"
    "      --fill b_ptr=3000:random:7 --fill out_ptr=3000 --arg n_elements=3000 \\\n"
    "      --out /tmp/va --engine both\n";

typedef struct item {
  char *name;
  char *value;
  bool fill;             /* --fill (else --arg) */
} item;

typedef struct run_opts {
  const char *file, *out, *engine;
  bool quiet;
  double tol, atol;          /* --tol, --atol */
  const char *skip[MAX_ITEMS]; /* --no-compare */
  int nskip;
  unsigned grid[3];
  teeny_compile_req req;
  teeny_dtype_binding dtypes[MAX_ITEMS];
  teeny_const_binding consts[MAX_ITEMS];
  item items[MAX_ITEMS];
  int nitems;
} run_opts;

/* One parameter's argument, and for pointers its buffer. */
typedef struct buffer {
  void *data;
  size_t count, bytes;
  int ndim;
  size_t shape[NPY_MAX_DIMS];
} buffer;

static int usage(const char *fmt, const char *arg) {
  fprintf(stderr, "teenyc run: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'teenyc run --help'.\n");
  return EXIT_USAGE;
}

static int user_error(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "teenyc run: ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  return EXIT_USER;
}

static char *split(char *s) {
  char *eq = strchr(s, '=');
  if (!eq || eq == s || !eq[1])
    return NULL;
  *eq = '\0';
  return eq + 1;
}

static int parse_grid(const char *s, unsigned grid[3]) {
  grid[0] = grid[1] = grid[2] = 1;
  const char *p = s;
  for (int d = 0; d < 3; d++) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || errno || v == 0 || v > 0x7fffffff)
      return usage("--grid wants X[,Y[,Z]] of positive integers, got '%s'", s);
    grid[d] = (unsigned)v;
    if (*end == '\0')
      return 0;
    if (*end != ',')
      break;
    p = end + 1;
  }
  return usage("--grid wants X[,Y[,Z]] of positive integers, got '%s'", s);
}

static int parse(int argc, char **argv, run_opts *o) {
  static const struct option longopts[] = {
      {"kernel", required_argument, NULL, 'k'}, {"dtype", required_argument, NULL, 'd'},
      {"const", required_argument, NULL, 'c'},  {"grid", required_argument, NULL, 'g'},
      {"arg", required_argument, NULL, 'a'},    {"fill", required_argument, NULL, 'f'},
      {"engine", required_argument, NULL, 'e'}, {"out", required_argument, NULL, 'o'},
      {"target", required_argument, NULL, 't'}, {"num-warps", required_argument, NULL, 'w'},
      {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {"tol", required_argument, NULL, 'T'},    {"atol", required_argument, NULL, 'A'},
      {"no-compare", required_argument, NULL, 'N'},
      {"debug", no_argument, NULL, 'G'},        {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->grid[0] = o->grid[1] = o->grid[2] = 1;
  o->engine = "interp";
  int c, rc;
  optind = 1;
  while ((c = getopt_long(argc, argv, "k:d:c:g:a:f:e:o:t:w:qhV", longopts, NULL)) != -1) {
    char *v;
    switch (c) {
    case 'k': o->req.kernel = optarg; break;
    case 'd':
      if (!(v = split(optarg)) || o->req.ndtypes == MAX_ITEMS)
        return usage("--dtype wants NAME=DTYPE, got '%s'", optarg);
      o->dtypes[o->req.ndtypes++] = (teeny_dtype_binding){optarg, v};
      break;
    case 'c': { /* an integer by value, anything else (1e-5, true) as text */
      if (!(v = split(optarg)) || o->req.nconsts == MAX_ITEMS || o->req.ndtypes == MAX_ITEMS)
        return usage("--const wants NAME=VALUE, got '%s'", optarg);
      char *end;
      errno = 0;
      long long x = strtoll(v, &end, 0);
      if (errno || *end)
        o->dtypes[o->req.ndtypes++] = (teeny_dtype_binding){optarg, v};
      else
        o->consts[o->req.nconsts++] = (teeny_const_binding){optarg, x};
      break;
    }
    case 'G':
      if (o->req.nconsts == MAX_ITEMS)
        return usage("too many bindings (%s)", "--debug");
      o->consts[o->req.nconsts++] = (teeny_const_binding){TEENY_OPT_DEBUG, 1};
      break;
    case 'g':
      if ((rc = parse_grid(optarg, o->grid)))
        return rc;
      break;
    case 'a':
    case 'f':
      if (!(v = split(optarg)) || o->nitems == MAX_ITEMS)
        return usage(c == 'a' ? "--arg wants NAME=FILE.npy or NAME=VALUE, got '%s'"
                              : "--fill wants NAME=COUNT[:KIND[:SEED]], got '%s'", optarg);
      o->items[o->nitems++] = (item){optarg, v, c == 'f'};
      break;
    case 'e':
      if (strcmp(optarg, "interp") && strcmp(optarg, "emu") && strcmp(optarg, "both"))
        return usage("--engine is interp, emu or both, not '%s'", optarg);
      o->engine = optarg;
      break;
    case 'o': o->out = optarg; break;
    case 't': o->req.target = optarg; break;
    case 'w': o->req.num_warps = atoi(optarg); break;
    case 'q': o->quiet = true; break;
    case 'N':
      if (o->nskip == MAX_ITEMS)
        return usage("too many --no-compare (%s)", "limit 64");
      o->skip[o->nskip++] = optarg;
      break;
    case 'T':
    case 'A': {
      char *end;
      double t = strtod(optarg, &end);
      if (*end || end == optarg || !(t >= 0))
        return usage("--tol and --atol want an error >= 0, got '%s'", optarg);
      *(c == 'T' ? &o->tol : &o->atol) = t;
      break;
    }
    case 'h': fputs(usage_text, stdout); exit(0);
    case 'V':
      printf("teenyc run %s (protocol %d, LLVM %s)\n", TEENY_VERSION_STRING,
             TEENY_PROTOCOL_VERSION, teeny_llvm_version());
      exit(0);
    default: return usage("%s", "unknown option");
    }
  }
  if (optind != argc - 1)
    return usage("%s", optind >= argc ? "no kernel file given" : "more than one kernel file given");
  o->file = argv[optind];
  if (!o->req.kernel)
    return usage("%s", "--kernel NAME is required");
  o->req.dtypes = o->dtypes;
  o->req.consts = o->consts;
  return 0;
}

/* ---- arguments ------------------------------------------------------------------------ */

static const item *find_item(const run_opts *o, const char *name) {
  for (int i = 0; i < o->nitems; i++)
    if (strcmp(o->items[i].name, name) == 0)
      return &o->items[i];
  return NULL;
}

/* Element i of a buffer of dtype dt from a double (rounding as the
 * interpreter's stores do: through the f32/f16 bit layouts). */
static void put(void *buf, teeny_dtype dt, size_t i, double v);

static uint64_t next_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(2685821657736338717);
}

static int fill_buffer(const item *it, teeny_dtype dt, buffer *b) {
  char spec[128];
  snprintf(spec, sizeof spec, "%s", it->value);
  char *kind = strchr(spec, ':'), *seed = NULL;
  if (kind) {
    *kind++ = '\0';
    seed = strchr(kind, ':');
    if (seed)
      *seed++ = '\0';
  }
  char *end;
  errno = 0;
  unsigned long long n = strtoull(spec, &end, 10);
  if (errno || *end || end == spec || n > ((size_t)1 << 34))
    return user_error("--fill %s: '%s' is not an element count", it->name, spec);
  if (kind && strcmp(kind, "zeros") && strcmp(kind, "iota") && strcmp(kind, "random"))
    return user_error("--fill %s: '%s' is not zeros, iota or random", it->name, kind);
  uint64_t s = seed ? strtoull(seed, NULL, 10) * 2654435761u + 1 : 88172645463325252ull;
  b->count = (size_t)n;
  b->bytes = b->count * (size_t)teeny_dtype_size(dt);
  b->data = calloc(1, b->bytes ? b->bytes : 1);
  if (!b->data)
    return user_error("--fill %s: cannot allocate %s", it->name, spec);
  bool is_float = dt == TEENY_DT_F16 || dt == TEENY_DT_BF16 || dt == TEENY_DT_F32 ||
                  dt == TEENY_DT_F64 || dt == TEENY_DT_F8E4M3 || dt == TEENY_DT_F8E5M2;
  bool is_unsigned = dt == TEENY_DT_U8 || dt == TEENY_DT_U16 || dt == TEENY_DT_U32 ||
                     dt == TEENY_DT_U64 || dt == TEENY_DT_BOOL;
  for (size_t i = 0; kind && strcmp(kind, "zeros") && i < b->count; i++) {
    double v;
    if (strcmp(kind, "iota") == 0) {
      v = (double)i;
    } else {
      uint64_t r = next_random(&s);
      if (is_float)
        v = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
      else if (dt == TEENY_DT_BOOL)
        v = (double)(r & 1);
      else
        v = (double)(int64_t)(r % 201) - (is_unsigned ? 0 : 100);
    }
    put(b->data, dt, i, v);
  }
  return 0;
}

static int load_npy(const item *it, teeny_dtype dt, buffer *b) {
  npy_array a;
  char err[512];
  if (npy_read(it->value, &a, err, sizeof err))
    return user_error("--arg %s: %s", it->name, err);
  const char *want = npy_descr(dt);
  if (!want || strcmp(a.descr, want) != 0) {
    fprintf(stderr, "teenyc run: --arg %s: %s holds dtype '%s', but the parameter is %s "
                    "('%s')\n", it->name, it->value, a.descr, teeny_dtype_name(dt),
            want ? want : "?");
    npy_free(&a);
    return EXIT_USER;
  }
  b->data = a.data;
  b->count = a.count;
  b->bytes = a.count * a.itemsize;
  b->ndim = a.ndim;
  memcpy(b->shape, a.shape, sizeof b->shape);
  return 0;
}

static int scalar_value(const item *it, teeny_dtype dt, teeny_interp_arg *arg) {
  const char *v = it->value;
  char *end;
  errno = 0;
  if (dt == TEENY_DT_BOOL && (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)) {
    arg->v.i = v[0] == 't';
    return 0;
  }
  if (dt == TEENY_DT_F16 || dt == TEENY_DT_BF16 || dt == TEENY_DT_F32 || dt == TEENY_DT_F64) {
    arg->v.f = strtod(v, &end);
  } else if (dt == TEENY_DT_U64) {
    arg->v.u = strtoull(v, &end, 0);
  } else {
    arg->v.i = strtoll(v, &end, 0);
  }
  if (errno || *end || end == v)
    return user_error("--arg %s: '%s' is not a value of the parameter's dtype", it->name, v);
  return 0;
}

/* Every parameter's argument, in order; buffers get copies for `both`. */
static int make_args(const run_opts *o, const teeny_spec *s, teeny_interp_arg *args,
                     buffer *bufs) {
  size_t np = teeny_spec_nparams(s);
  for (int i = 0; i < o->nitems; i++) {
    bool known = false;
    for (size_t j = 0; j < np && !known; j++)
      known = strcmp(teeny_spec_param(s, j)->name, o->items[i].name) == 0;
    if (!known)
      return user_error("'%s' is not a parameter of '%s'", o->items[i].name, o->req.kernel);
  }
  for (size_t j = 0; j < np; j++) {
    const teeny_param *p = teeny_spec_param(s, j);
    const item *it = find_item(o, p->name);
    memset(&args[j], 0, sizeof args[j]);
    if (p->kind == TEENY_PARAM_TENSORMAP) { /* host engines read the base, shapes, strides */
      if (it)
        return user_error("'%s' is made from the descriptor's other parameters; give %s",
                          p->name, "NAME_base, NAME_shape<k> and NAME_stride<k>");
      if (!(bufs[j].data = calloc(1, 128)))
        return EXIT_SYSTEM;
      args[j].data = bufs[j].data;
      args[j].bytes = bufs[j].bytes = 128;
      continue;
    }
    if (!it)
      return user_error("no --arg or --fill for parameter '%s' (%s)", p->name,
                        p->kind == TEENY_PARAM_POINTER ? "a pointer: give a buffer" : "a scalar");
    int rc;
    if (p->kind == TEENY_PARAM_SCALAR) {
      if (it->fill)
        return user_error("--fill %s: '%s' is a scalar; use --arg NAME=VALUE", p->name, p->name);
      if ((rc = scalar_value(it, p->dtype, &args[j])))
        return rc;
      continue;
    }
    size_t len = strlen(it->value);
    bool npy = !it->fill && len > 4 && strcmp(it->value + len - 4, ".npy") == 0;
    if (!it->fill && !npy)
      return user_error("--arg %s: a pointer parameter takes a .npy file or --fill, not '%s'",
                        p->name, it->value);
    rc = it->fill ? fill_buffer(it, p->dtype, &bufs[j]) : load_npy(it, p->dtype, &bufs[j]);
    if (rc)
      return rc;
    args[j].data = bufs[j].data;
    args[j].bytes = bufs[j].bytes;
  }
  return 0;
}

/* ---- output --------------------------------------------------------------------------- */

static double get(const void *buf, teeny_dtype dt, size_t i);

static void summarise(const teeny_param *p, const buffer *b) {
  double sum = 0;
  printf("%s: %s[%zu]", p->name, teeny_dtype_name(p->dtype), b->count);
  for (size_t i = 0; i < b->count; i++)
    sum += get(b->data, p->dtype, i);
  printf("  sum %.9g  first", sum);
  for (size_t i = 0; i < b->count && i < 8; i++)
    printf(" %.9g", get(b->data, p->dtype, i));
  printf("%s\n", b->count > 8 ? " ..." : "");
}

static int write_out(const run_opts *o, const teeny_spec *s, const buffer *bufs) {
  if (o->out && mkdir(o->out, 0777) && errno != EEXIST) {
    fprintf(stderr, "teenyc run: cannot create %s: %s\n", o->out, strerror(errno));
    return EXIT_SYSTEM;
  }
  for (size_t j = 0; j < teeny_spec_nparams(s); j++) {
    const teeny_param *p = teeny_spec_param(s, j);
    if (p->kind != TEENY_PARAM_POINTER)
      continue;
    if (!o->out) {
      if (!o->quiet)
        summarise(p, &bufs[j]);
      continue;
    }
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s.npy", o->out, p->name);
    if (npy_write(path, p->dtype, bufs[j].data, bufs[j].count, bufs[j].ndim, bufs[j].shape,
                  err, sizeof err)) {
      fprintf(stderr, "teenyc run: %s\n", err);
      return EXIT_SYSTEM;
    }
    if (!o->quiet)
      printf("%s: %s[%zu] -> %s\n", p->name, teeny_dtype_name(p->dtype), bufs[j].count, path);
  }
  return 0;
}

/* Buffers of the interpreter (a) and the emulator (b) compared bit for
 * bit (NaN equal to NaN); prints the first differences. */
static bool skipped(const run_opts *o, const char *name) {
  for (int i = 0; i < o->nskip; i++)
    if (strcmp(o->skip[i], name) == 0)
      return true;
  return false;
}

static int compare(const run_opts *o, const teeny_spec *s, const buffer *a, const buffer *b) {
  long differ = 0;
  double tol = o->tol, atol = o->atol;
  for (size_t j = 0; j < teeny_spec_nparams(s); j++) {
    const teeny_param *p = teeny_spec_param(s, j);
    if (p->kind != TEENY_PARAM_POINTER || skipped(o, p->name))
      continue;
    size_t es = (size_t)teeny_dtype_size(p->dtype);
    for (size_t i = 0; i < a[j].count; i++) {
      double x = get(a[j].data, p->dtype, i), y = get(b[j].data, p->dtype, i);
      bool same = memcmp((char *)a[j].data + i * es, (char *)b[j].data + i * es, es) == 0 ||
                  (isnan(x) && isnan(y)) ||
                  (tol + atol > 0 && fabs(x - y) <= atol + tol * fmax(fabs(x), fabs(y)));
      if (!same && differ++ < 10)
        fprintf(stderr, "teenyc run: %s[%zu]: interpreter %.9g, emulator %.9g\n", p->name, i,
                x, y);
    }
  }
  if (differ) {
    fprintf(stderr, "teenyc run: the interpreter and the emulator differ in %ld elements\n",
            differ);
    return EXIT_USER;
  }
  return 0;
}

static void print_diags(const teeny_diags *d) {
  for (size_t i = 0; i < d->n; i++) {
    char buf[2048];
    teeny_diag_format(&d->v[i], buf, sizeof buf);
    fputs(buf, stderr);
  }
}

#ifdef TEENY_NO_EMULATOR /* a build without LLVM has no code generator to emulate */
int teeny_spec_emulate(const teeny_spec *spec, const unsigned grid[3],
                       const teeny_interp_arg *args, size_t nargs, teeny_diags *diags) {
  (void)spec, (void)grid, (void)args, (void)nargs, (void)diags;
  fprintf(stderr, "teenyc run: this teenyc was built without LLVM: no --engine emu\n");
  return TEENY_E_UNSUPPORTED;
}
#endif

static int launch(const run_opts *o, const teeny_spec *s, bool emu, teeny_interp_arg *args) {
  teeny_diags d;
  teeny_diags_init(&d);
  size_t np = teeny_spec_nparams(s);
  int rc = emu ? teeny_spec_emulate(s, o->grid, args, np, &d)
               : teeny_spec_interpret(s, o->grid, args, np, &d);
  print_diags(&d);
  teeny_diags_close(&d);
  if (rc)
    fprintf(stderr, "teenyc run: the %s stopped: %s\n", emu ? "emulator" : "interpreter",
            teeny_strerror(rc));
  return rc ? (rc == TEENY_E_NOMEM || rc == TEENY_E_INTERNAL ? EXIT_SYSTEM : EXIT_USER) : 0;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "teenyc run: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  char *buf = malloc(TEENY_MAX_SOURCE_BYTES + 1);
  size_t n = buf ? fread(buf, 1, TEENY_MAX_SOURCE_BYTES + 1, f) : 0;
  fclose(f);
  if (!buf || n > TEENY_MAX_SOURCE_BYTES) {
    fprintf(stderr, "teenyc run: cannot read %s (or larger than %u bytes)\n", path,
            TEENY_MAX_SOURCE_BYTES);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static void free_buffers(buffer *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(b[i].data);
}

int main(int argc, char **argv) {
  run_opts o;
  int rc = parse(argc, argv, &o);
  if (rc)
    return rc;
  size_t len;
  char *src = read_file(o.file, &len);
  if (!src)
    return EXIT_SYSTEM;
  o.req.source = src;
  o.req.source_len = len;
  o.req.filename = o.file;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  rc = teeny_spec_create(&o.req, &s, &d);
  print_diags(&d);
  teeny_diags_close(&d);
  if (rc) {
    free(src);
    return rc == TEENY_E_NOMEM ? EXIT_SYSTEM : EXIT_USER;
  }
  size_t np = teeny_spec_nparams(s);
  teeny_interp_arg *args = calloc(np + 1, sizeof *args), *args2 = calloc(np + 1, sizeof *args2);
  buffer *bufs = calloc(np + 1, sizeof *bufs), *bufs2 = calloc(np + 1, sizeof *bufs2);
  rc = args && args2 && bufs && bufs2 ? make_args(&o, s, args, bufs) : EXIT_SYSTEM;
  bool both = strcmp(o.engine, "both") == 0;
  for (size_t j = 0; !rc && both && j < np; j++) { /* the emulator's copy */
    args2[j] = args[j];
    if (!bufs[j].data)
      continue;
    bufs2[j] = bufs[j];
    bufs2[j].data = malloc(bufs[j].bytes ? bufs[j].bytes : 1);
    if (!bufs2[j].data) {
      rc = EXIT_SYSTEM;
      break;
    }
    memcpy(bufs2[j].data, bufs[j].data, bufs[j].bytes);
    args2[j].data = bufs2[j].data;
  }
  if (!rc)
    rc = launch(&o, s, strcmp(o.engine, "emu") == 0, args);
  if (!rc && both)
    rc = launch(&o, s, true, args2);
  if (!rc && both)
    rc = compare(&o, s, bufs, bufs2);
  if (!rc)
    rc = write_out(&o, s, bufs);
  if (bufs)
    free_buffers(bufs, np);
  if (bufs2)
    free_buffers(bufs2, np);
  free(bufs);
  free(bufs2);
  free(args);
  free(args2);
  teeny_spec_destroy(s);
  free(src);
  return rc;
}

/* ---- element access (the interpreter's memory layouts) ------------------------------ */

static uint16_t f16_from(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
  if (a > 0x7f800000) /* NaN */
    return (uint16_t)(sign | 0x7e00);
  if (a >= 0x477ff000) /* rounds to inf */
    return (uint16_t)(sign | 0x7c00);
  if (a < 0x38800000) { /* subnormal or zero: round |x| * 2^24 to an integer */
    double m = fabs(x) * 16777216.0;
    return (uint16_t)(sign | (uint32_t)nearbyint(m));
  }
  uint32_t r = a + 0xfff + ((a >> 13) & 1); /* round to nearest even at bit 13 */
  return (uint16_t)(sign | ((r - 0x38000000) >> 13));
}

static double f16_to(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double r = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -r : r;
}

static uint16_t bf16_from(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000)
    return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static double bf16_to(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The value of fp8 bits (OCP e4m3: no infinities, S.1111.111 NaN; e5m2:
 * IEEE-like), and the code nearest to x (ties to the even code, past the
 * largest finite value saturating to it, as the language rounds). */
static double fp8_value(teeny_dtype dt, unsigned b) {
  bool e4 = dt == TEENY_DT_F8E4M3;
  int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  unsigned e = (b >> mbits) & (e4 ? 15u : 31u), m = b & ((1u << mbits) - 1);
  double v;
  if ((e4 && e == 15 && m == 7) || (!e4 && e == 31 && m))
    v = NAN;
  else if (!e4 && e == 31)
    v = INFINITY;
  else if (e == 0)
    v = ldexp((double)m, 1 - bias - mbits);
  else
    v = ldexp((double)((1u << mbits) + m), (int)e - bias - mbits);
  return (b & 0x80) ? -v : v;
}

static uint8_t fp8_from(teeny_dtype dt, double x) {
  bool e4 = dt == TEENY_DT_F8E4M3;
  if (isnan(x))
    return e4 ? 0x7f : 0x7e;
  unsigned sign = signbit(x) ? 0x80u : 0u, top = e4 ? 0x7eu : 0x7bu; /* largest finite */
  double a = fabs((double)(float)x);
  if (a >= fp8_value(dt, top))
    return (uint8_t)(sign | top);
  unsigned lo = 0, hi = top; /* the largest code whose value is <= a */
  while (lo < hi) {
    unsigned mid = (lo + hi + 1) / 2;
    if (fp8_value(dt, mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  double below = a - fp8_value(dt, lo), above = fp8_value(dt, lo + 1) - a;
  unsigned c = below < above ? lo : above < below ? lo + 1 : (lo % 2 ? lo + 1 : lo);
  return (uint8_t)(sign | c);
}

#define PUT(T)                                                                 \
  do {                                                                         \
    T t_ = (T)v;                                                               \
    memcpy((char *)buf + i * sizeof t_, &t_, sizeof t_);                       \
  } while (0)

static void put(void *buf, teeny_dtype dt, size_t i, double v) {
  switch (dt) {
  case TEENY_DT_BOOL: ((unsigned char *)buf)[i] = v != 0; break;
  case TEENY_DT_I8: PUT(int8_t); break;
  case TEENY_DT_U8: PUT(uint8_t); break;
  case TEENY_DT_I16: PUT(int16_t); break;
  case TEENY_DT_U16: PUT(uint16_t); break;
  case TEENY_DT_I32: PUT(int32_t); break;
  case TEENY_DT_U32: PUT(uint32_t); break;
  case TEENY_DT_I64: PUT(int64_t); break;
  case TEENY_DT_U64: PUT(uint64_t); break;
  case TEENY_DT_F32: PUT(float); break;
  case TEENY_DT_F64: PUT(double); break;
  case TEENY_DT_F16: {
    uint16_t h = f16_from(v);
    memcpy((char *)buf + 2 * i, &h, 2);
    break;
  }
  case TEENY_DT_BF16: {
    uint16_t h = bf16_from(v);
    memcpy((char *)buf + 2 * i, &h, 2);
    break;
  }
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2:
    ((uint8_t *)buf)[i] = fp8_from(dt, v);
    break;
  default: break;
  }
}

#define GET(T)                                                                 \
  do {                                                                         \
    T t_;                                                                      \
    memcpy(&t_, (const char *)buf + i * sizeof t_, sizeof t_);                 \
    return (double)t_;                                                         \
  } while (0)

static double get(const void *buf, teeny_dtype dt, size_t i) {
  uint16_t h;
  switch (dt) {
  case TEENY_DT_BOOL: return ((const unsigned char *)buf)[i];
  case TEENY_DT_I8: GET(int8_t);
  case TEENY_DT_U8: GET(uint8_t);
  case TEENY_DT_I16: GET(int16_t);
  case TEENY_DT_U16: GET(uint16_t);
  case TEENY_DT_I32: GET(int32_t);
  case TEENY_DT_U32: GET(uint32_t);
  case TEENY_DT_I64: GET(int64_t);
  case TEENY_DT_U64: GET(uint64_t);
  case TEENY_DT_F32: GET(float);
  case TEENY_DT_F64: GET(double);
  case TEENY_DT_F16:
    memcpy(&h, (const char *)buf + 2 * i, 2);
    return f16_to(h);
  case TEENY_DT_BF16:
    memcpy(&h, (const char *)buf + 2 * i, 2);
    return bf16_to(h);
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2:
    return fp8_value(dt, ((const uint8_t *)buf)[i]);
  default: return 0;
  }
}
