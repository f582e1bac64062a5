/*
 * tools/teenyc.c — the compiler CLI: compile one kernel of a kernel file
 * for one set of bindings and print what came out (the generated source,
 * MLIR, PTX, id, key, or a summary), or the diagnostics.
 *
 * It is a client of libteenyc-client (include/teeny/client.h) and works in
 * any of its modes: through teenycd, embedded against the store, or
 * offline (no store); every --emit prints the same bytes in every mode.
 * Exit status: 0 on success, 1 when the kernel or its bindings have
 * errors, 2 on a usage error, 3 on an I/O, connection or internal error,
 * 5 when teenycd's socket refuses us (not in its group).  auto mode's
 * fallback (why the daemon was not used, what is used instead) is said
 * once on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "teeny/client.h"

enum { EXIT_USER = 1, EXIT_USAGE = 2, EXIT_SYSTEM = 3, EXIT_SOCKET_PERM = 5 };
#define MAX_BINDINGS 64

static const char usage_text[] =
    "usage: teenyc FILE --kernel NAME [--dtype G=DTYPE]... [--const G=VALUE]...\n"
    "              [--target sm_90a] [--num-warps 4] [--num-stages N] [--debug]\n"
    "              [--emit WHAT] [-o OUT] [--arch sm_90]\n"
    "              [--mode MODE] [--socket PATH] [--cache-dir DIR] [--force]\n"
    "       teenyc run FILE --kernel NAME ... --grid X[,Y[,Z]] ...  (teenyc run --help)\n"
    "\n"
    "Compile one kernel of a teenyc kernel file (FILE, or - for stdin) for one\n"
    "set of bindings and print the result.\n"
    "\n"
    "options:\n"
    "  -k, --kernel NAME     the TEENY_KERNEL function to compile\n"
    "  -d, --dtype G=DTYPE   bind dtype generic G (bool, i8..i64, u8..u64, f16,\n"
    "                        bf16, f32, f64); repeat for each\n"
    "  -c, --const G=VALUE   bind const generic G to a value of its dtype (an\n"
    "                        i32 unless it declares one: 1024, 0x40, 1e-5,\n"
    "                        true); repeat for each\n"
    "  -t, --target T        sm_90a (default), sm_90, sm_89, sm_86, sm_80\n"
    "  -w, --num-warps N     warps per program: 1, 2, 4 (default), 8, 16, 32\n"
    "  -S, --num-stages N    cp.async pipeline depth of loops that feed dots,\n"
    "                        and N - 1 iterations of register prefetch in\n"
    "                        other loops, 2 to 8 (default: the code\n"
    "                        generator's choice; the option teeny.num_stages,\n"
    "                        part of the key)\n"
    "      --debug           compile device_assert checks in (part of the key)\n"
    "  -a, --arch ARCH       name this GPU architecture (sm_90 for an H200) in the\n"
    "                        request: the target defaults to its (sm_90a), and\n"
    "                        teenycd makes its cubin in the background and sends\n"
    "                        it with later replies (--emit cubin, info)\n"
    "  -e, --emit WHAT       what to print:\n"
    "                          ptx     PTX text (the cached .o artifact; default)\n"
    "                          mlir    Triton-dialect MLIR of the tile IR\n"
    "                          source  the generated source (whose SHA-256 is the key)\n"
    "                          id      the specialisation id, name__dtypes__consts\n"
    "                          key     the cache key (64 hex digits)\n"
    "                          info    a summary: id, key, entry, params, launch shape\n"
    "                          cubin   the cubin for --arch (binary), when teenycd\n"
    "                                  has made it (else exit 1: try again later)\n"
    "  -o, --output OUT      write to OUT instead of standard output\n"
    "  -m, --mode MODE       where to compile (default: $TEENYC_MODE, else auto):\n"
    "                          daemon    through teenycd (an error if unreachable)\n"
    "                          embedded  in this process, reading and filling the\n"
    "                                    store teenycd uses\n"
    "                          offline   in this process, no store at all\n"
    "                          auto      daemon if reachable; else embedded if a\n"
    "                                    store is configured (--cache-dir,\n"
    "                                    $TEENYC_CACHE_DIR, $XDG_CACHE_HOME) or\n"
    "                                    /var/cache/teenyc exists; else offline\n"
    "  -s, --socket PATH     teenycd's socket (default: the first that answers\n"
    "                        of $TEENYCD_SOCKET, $XDG_RUNTIME_DIR/teenycd.sock\n"
    "                        and /run/teenycd/teenycd.sock)\n"
    "  -C, --cache-dir DIR   the store for embedded mode (default:\n"
    "                        $TEENYC_CACHE_DIR, $XDG_CACHE_HOME/teenyc,\n"
    "                        /var/cache/teenyc)\n"
    "  -f, --force           compile even if the kernel is cached\n"
    "  -h, --help            show this help\n"
    "  -V, --version         show the version of teenyc, its protocol and LLVM\n"
    "\n"
    "Diagnostics go to standard error as file:line:col: error: message, with the\n"
    "source line and a caret.  --emit info also says where the result came from\n"
    "(miss, memory, disk, joined) and in which mode; when auto mode cannot use\n"
    "teenycd, one note on standard error says why and what it does instead.\n"
    "Exit status: 0 ok, 1 errors in the kernel or its bindings, 2 usage, 3 I/O,\n"
    "connection or internal error, 5 not allowed to connect to teenycd's socket.\n"
    "\n"
    "example:\n"
    "  teenyc examples/kernels/vector_add.c --kernel vector_add \\\n"
    "         --dtype D=f32 --const BLOCK_SIZE=1024 --emit ptx -o vector_add.ptx\n"
    "  TEENYC_MODE=offline teenyc examples/kernels/softmax.c -k softmax \\\n"
    "         -d D=f16 -c BLOCK_SIZE=1024 --emit mlir\n"
    "  teenyc --socket /tmp/t.sock examples/kernels/vector_add.c -k vector_add \\\n"
    "         -d D=f32 -c BLOCK_SIZE=1024 --emit info\n";

typedef struct options {
  const char *file;
  const char *output;
  const char *emit;
  teeny_client_opts client; /* mode, socket, cache dir */
  bool force;               /* --force */
  const char *arch;         /* --arch: the GPU the request names */
  teeny_compile_req req;
  teeny_dtype_binding dtypes[MAX_BINDINGS];
  teeny_const_binding consts[MAX_BINDINGS];
} options;

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "teenyc: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'teenyc --help'.\n");
  return EXIT_USAGE;
}

/* Split "NAME=VALUE" in place; returns VALUE or NULL. */
static char *split_binding(char *s) {
  char *eq = strchr(s, '=');
  if (!eq || eq == s || !eq[1])
    return NULL;
  *eq = '\0';
  return eq + 1;
}

static int add_dtype(options *o, char *arg) {
  char *v = split_binding(arg);
  if (!v)
    return usage_error("--dtype wants NAME=DTYPE, got '%s'", arg);
  if (o->req.ndtypes == MAX_BINDINGS)
    return usage_error("too many --dtype bindings (%s)", "limit 64");
  o->dtypes[o->req.ndtypes++] = (teeny_dtype_binding){arg, v};
  return 0;
}

/* An integer value is bound as one; any other (0.01, true) as text, which
 * the compiler reads as the constant's dtype. */
static int add_const(options *o, char *arg) {
  char *v = split_binding(arg);
  if (!v)
    return usage_error("--const wants NAME=VALUE, got '%s'", arg);
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 0);
  if (errno || *end) {
    if (o->req.ndtypes == MAX_BINDINGS)
      return usage_error("too many --dtype and --const bindings (%s)", "limit 64");
    o->dtypes[o->req.ndtypes++] = (teeny_dtype_binding){arg, v};
    return 0;
  }
  if (o->req.nconsts == MAX_BINDINGS)
    return usage_error("too many --const bindings (%s)", "limit 64");
  o->consts[o->req.nconsts++] = (teeny_const_binding){arg, x};
  return 0;
}

/* A request option (TEENY_OPT_*): a const binding under its reserved name. */
static int add_option(options *o, const char *name, long long value) {
  if (o->req.nconsts == MAX_BINDINGS)
    return usage_error("too many --const bindings (%s)", "limit 64");
  o->consts[o->req.nconsts++] = (teeny_const_binding){name, value};
  return 0;
}

static int parse_args(int argc, char **argv, options *o) {
  static const struct option longopts[] = {
      {"kernel", required_argument, NULL, 'k'}, {"dtype", required_argument, NULL, 'd'},
      {"const", required_argument, NULL, 'c'},  {"target", required_argument, NULL, 't'},
      {"num-warps", required_argument, NULL, 'w'}, {"emit", required_argument, NULL, 'e'},
      {"num-stages", required_argument, NULL, 'S'},
      {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},      {"mode", required_argument, NULL, 'm'},
      {"socket", required_argument, NULL, 's'}, {"cache-dir", required_argument, NULL, 'C'},
      {"force", no_argument, NULL, 'f'},        {"debug", no_argument, NULL, 'G'},
      {"arch", required_argument, NULL, 'a'},
      {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->emit = "ptx";
  o->req.dtypes = o->dtypes;
  o->req.consts = o->consts;
  int c, rc;
  while ((c = getopt_long(argc, argv, "k:d:c:t:w:S:e:o:hVm:s:C:fa:", longopts, NULL)) != -1) {
    switch (c) {
    case 'k': o->req.kernel = optarg; break;
    case 'd': if ((rc = add_dtype(o, optarg))) return rc; break;
    case 'c': if ((rc = add_const(o, optarg))) return rc; break;
    case 'G': if ((rc = add_option(o, TEENY_OPT_DEBUG, 1))) return rc; break;
    case 't': o->req.target = optarg; break;
    case 'w': {
      char *end;
      long w = strtol(optarg, &end, 10);
      if (*end || w <= 0 || w > 32)
        return usage_error("--num-warps wants 1, 2, 4, 8, 16 or 32, got '%s'", optarg);
      o->req.num_warps = (int)w;
      break;
    }
    case 'S': {
      char *end;
      long s = strtol(optarg, &end, 10);
      if (*end || s < 2 || s > 8)
        return usage_error("--num-stages wants 2 to 8, got '%s'", optarg);
      if ((rc = add_option(o, TEENY_OPT_NUM_STAGES, s)))
        return rc;
      break;
    }
    case 'e': o->emit = optarg; break;
    case 'o': o->output = optarg; break;
    case 'm': {
      int m = teeny_client_mode_parse(optarg);
      if (m < 0)
        return usage_error("unknown --mode '%s' (auto, daemon, embedded, offline)", optarg);
      o->client.mode = (teeny_client_mode)m;
      break;
    }
    case 's': o->client.socket_path = optarg; break;
    case 'C': o->client.cache_dir = optarg; break;
    case 'f': o->force = true; break;
    case 'a': o->arch = optarg; break;
    case 'h': fputs(usage_text, stdout); exit(0);
    case 'V':
      printf("teenyc %s (protocol %d, LLVM %s)\n", TEENY_VERSION_STRING, TEENY_PROTOCOL_VERSION,
             teeny_llvm_version());
      exit(0);
    default: return usage_error("%s", "bad option");
    }
  }
  if (optind + 1 != argc)
    return usage_error("%s", optind >= argc ? "no kernel file given" : "more than one file given");
  o->file = argv[optind];
  if (!o->req.kernel)
    return usage_error("%s", "--kernel NAME is required");
  static const char *const emits[] = {"ptx", "mlir", "source", "id", "key", "info", "cubin"};
  if (strcmp(o->emit, "cubin") == 0 && !o->arch)
    return usage_error("%s", "--emit cubin needs --arch");
  for (size_t i = 0; i < sizeof emits / sizeof *emits; i++)
    if (strcmp(o->emit, emits[i]) == 0)
      return 0;
  return usage_error("unknown --emit '%s' (ptx, mlir, source, id, key, info, cubin)", o->emit);
}

/* Read a whole file (or stdin for "-"), refusing more than the source limit. */
static char *read_source(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "teenyc: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = TEENY_MAX_SOURCE_BYTES + 1;
  char *buf = malloc(cap);
  size_t n = buf ? fread(buf, 1, cap, f) : 0;
  int err = ferror(f);
  if (f != stdin)
    fclose(f);
  if (!buf || err) {
    fprintf(stderr, "teenyc: cannot read %s\n", path);
    free(buf);
    return NULL;
  }
  if (n > TEENY_MAX_SOURCE_BYTES) {
    fprintf(stderr, "teenyc: %s is larger than the %u-byte source limit\n", path,
            TEENY_MAX_SOURCE_BYTES);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static void print_diags(const teeny_diag *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char buf[2048];
    teeny_diag_format(&v[i], buf, sizeof buf);
    fputs(buf, stderr);
  }
}

static void print_info(FILE *out, const teeny_client_result *r) {
  const teeny_artifact *a = &r->art;
  fprintf(out, "id:         %s\nkey:        %s\nentry:      %s\ntarget:     %s\n", a->id,
          a->key, a->entry, a->target);
  fprintf(out, "num_warps:  %d (%d threads per program)\n", a->num_warps,
          a->threads_per_block);
  fprintf(out, "shared:     %d bytes\n", a->shared_bytes);
  fprintf(out, "params:    ");
  for (size_t i = 0; i < a->nparams; i++)
    fprintf(out, " %s%s%s %s%s", a->params[i].kind == TEENY_PARAM_TENSORMAP ? "tensormap(" : "",
            teeny_dtype_name(a->params[i].dtype),
            a->params[i].kind == TEENY_PARAM_POINTER     ? " *"
            : a->params[i].kind == TEENY_PARAM_TENSORMAP ? ")"
                                                         : "",
            a->params[i].name,
            i + 1 < a->nparams ? "," : "");
  fprintf(out, "\nptx:        %zu bytes\nmlir:       %zu bytes\ncompile:    %.3f ms\n",
          a->ptx_len, a->mlir_len, r->compile_ms);
  fprintf(out, "cache:      %s\nmode:       %s\n", teeny_client_cache_name(r->cache),
          teeny_client_mode_name(r->mode));
  if (r->cubin)
    fprintf(out, "cubin:      %zu bytes for %s (%s)\n", r->cubin_len, r->cubin_arch,
            r->cubin_toolchain);
}

static unsigned emit_flags(const char *emit) {
  if (strcmp(emit, "mlir") == 0)
    return TEENY_EMIT_MLIR;
  if (strcmp(emit, "info") == 0)
    return TEENY_EMIT_MLIR | TEENY_EMIT_PTX;
  if (strcmp(emit, "ptx") == 0 || strcmp(emit, "cubin") == 0)
    return TEENY_EMIT_PTX;
  if (strcmp(emit, "source") == 0)
    return TEENY_EMIT_SOURCE;
  return 0;
}

static int write_output(const options *o, const teeny_client_result *r) {
  const teeny_artifact *a = &r->art;
  FILE *out = o->output ? fopen(o->output, "wb") : stdout;
  if (!out) {
    fprintf(stderr, "teenyc: cannot write %s: %s\n", o->output, strerror(errno));
    return EXIT_SYSTEM;
  }
  if (strcmp(o->emit, "ptx") == 0)
    fwrite(a->ptx, 1, a->ptx_len, out);
  else if (strcmp(o->emit, "cubin") == 0)
    fwrite(r->cubin, 1, r->cubin_len, out);
  else if (strcmp(o->emit, "mlir") == 0)
    fwrite(a->mlir, 1, a->mlir_len, out);
  else if (strcmp(o->emit, "source") == 0)
    fwrite(a->source, 1, a->source_len, out);
  else if (strcmp(o->emit, "id") == 0)
    fprintf(out, "%s\n", a->id);
  else if (strcmp(o->emit, "key") == 0)
    fprintf(out, "%s\n", a->key);
  else
    print_info(out, r);
  int bad = ferror(out);
  if (out != stdout)
    bad |= fclose(out);
  if (bad) {
    fprintf(stderr, "teenyc: error writing %s\n", o->output ? o->output : "standard output");
    return EXIT_SYSTEM;
  }
  return 0;
}

static int exit_for(int rc) {
  switch (rc) {
  case TEENY_E_COMPILE:
  case TEENY_E_BINDING:
  case TEENY_E_NOTFOUND:
  case TEENY_E_INVAL:
  case TEENY_E_NAME:
  case TEENY_E_LIMIT:
  case TEENY_E_UNSUPPORTED:
  case TEENY_E_LLVM:
    return EXIT_USER;
  default:
    return EXIT_SYSTEM;
  }
}

/* Was daemon mode asked for (--mode, else $TEENYC_MODE)? */
static bool daemon_only(const options *o) {
  const char *env = getenv("TEENYC_MODE");
  if (o->client.mode != TEENY_MODE_DEFAULT)
    return o->client.mode == TEENY_MODE_DAEMON;
  return env && teeny_client_mode_parse(env) == TEENY_MODE_DAEMON;
}

/* Compile through the client; print diagnostics; write the output. */
static int run(options *o) {
  o->client.client_name = "teenyc/" TEENY_VERSION_STRING;
  o->client.memo_entries = -1; /* one compile per process: no memo */
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  int status;
  int rc = teeny_client_open(&c, &o->client);
  if (rc) {
    fprintf(stderr, "teenyc: %s\n", teeny_client_errmsg(c));
    status = rc == TEENY_E_INVAL ? EXIT_USAGE
             : rc == TEENY_E_PERM && daemon_only(o) ? EXIT_SOCKET_PERM
                                                    : EXIT_SYSTEM;
    goto done;
  }
  if (*teeny_client_notice(c))
    fprintf(stderr, "teenyc: note: %s\n", teeny_client_notice(c));
  if (o->arch && (rc = teeny_client_set_arch(c, o->arch))) {
    fprintf(stderr, "teenyc: --arch: %s\n", teeny_client_errmsg(c));
    status = EXIT_USAGE;
    goto done;
  }
  unsigned emit = emit_flags(o->emit) | (o->force ? TEENY_CLIENT_FORCE : 0);
  rc = teeny_client_compile(c, &o->req, emit, &r);
  if (r)
    print_diags(r->diags, r->ndiags);
  if (rc) {
    bool shown = false;
    for (size_t i = 0; r && i < r->ndiags; i++)
      shown |= r->diags[i].level == TEENY_DIAG_ERROR;
    if (!shown)
      fprintf(stderr, "teenyc: %s\n", teeny_client_errmsg(c));
    status = exit_for(rc);
    if (!r && rc != TEENY_E_NOMEM)
      status = EXIT_SYSTEM; /* no answer at all: connection, I/O */
  } else if (strcmp(o->emit, "cubin") == 0 && !r->cubin) {
    fprintf(stderr, "teenyc: no %s cubin yet%s\n", o->arch,
            r->mode == TEENY_MODE_DAEMON ? " (teenycd makes it in the background: ask again)"
                                         : " (only teenycd makes cubins)");
    status = EXIT_USER;
  } else {
    status = write_output(o, r);
  }
done:
  teeny_client_result_free(r);
  teeny_client_close(c);
  return status;
}

/* `teenyc run ...` is the program teenyc-run (tools/teenyc_run.c), next to
 * this one: it links the code generator's host emulator, which a compiler
 * client that may only talk to teenycd must not map. */
static int exec_run(char **argv) {
  char self[4096], path[4096 + 16];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  argv[0] = "teenyc-run";
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0';
      snprintf(path, sizeof path, "%s/teenyc-run", self);
      execv(path, argv);
    }
  }
  execvp("teenyc-run", argv);
  fprintf(stderr, "teenyc: cannot run teenyc-run (for 'teenyc run'): %s\n", strerror(errno));
  return EXIT_SYSTEM;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "run") == 0)
    return exec_run(argv + 1);
  options o;
  int rc = parse_args(argc, argv, &o);
  if (rc)
    return rc;
  size_t len;
  char *src = read_source(o.file, &len);
  if (!src)
    return EXIT_SYSTEM;
  o.req.source = src;
  o.req.source_len = len;
  o.req.filename = strcmp(o.file, "-") == 0 ? "<stdin>" : o.file;
  int status = run(&o);
  free(src);
  return status;
}
