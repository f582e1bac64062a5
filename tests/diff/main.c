/*
 * tests/diff/main.c — difffuzz, the differential fuzzer's command line:
 * options, the campaign loop (generate a kernel per seed, run it in the
 * executor, report, reduce failures and write reproducers), worker
 * processes for --jobs, replaying reproducers, and the summary.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/diff/gen.h"
#include "tests/diff/reduce.h"
#include "tests/diff/repro.h"
#include "tests/diff/run.h"

static const char usage_text[] =
    "usage: difffuzz [options]                  generate kernels and compare engines\n"
    "       difffuzz --replay FILE.txt...       rerun reproducers\n"
    "       difffuzz --print SEED               show the kernel and case of a seed\n"
    "\n"
    "Each seed gives one random, well-formed, race-free kernel of the kernel\n"
    "language (docs/dsl.md).  It runs in the CPU interpreter (the semantics) and\n"
    "in the engine on identical inputs (outputs poisoned first); every pointer\n"
    "argument must agree afterwards: integers exactly, floats exactly or within a\n"
    "tolerance derived from the operations (docs/reliability.md, \"Differential\n"
    "fuzzing\").  A failing kernel is reduced and written to --out.\n"
    "\n"
    "  --seed S          first seed (default 1); seed S+i is the i-th kernel\n"
    "  --count N         generate N kernels (default 100, or no limit with --seconds)\n"
    "  --seconds T       stop starting kernels after T seconds\n"
    "  --engine E        emu: the code generator's output on the host emulator\n"
    "                    (default; the device bundle's build has gpu only);\n"
    "                    gpu: PTX on the GPU through libcuda\n"
    "  -j, --jobs N      N worker processes (default 1)\n"
    "  --out DIR         write reduced reproducers (NAME.c, NAME.txt, NAME.ARG.npy)\n"
    "  --keep-going      go on after a failure (default: stop at the first)\n"
    "  --skip LIST       never generate these features (comma-separated):\n"
    "                    cast 2d shape reduce scan dot dot_f32 ctrl loop atomic\n"
    "                    atomic_shared helper order uniform gather math tanh special lock\n"
    "                    frem barrier sem fast prec hint rank3 desc\n"
    "  --no-reduce       report failures without reducing them\n"
    "  --reduce-max N    reduce at most N failures per category (default 2)\n"
    "  --timeout S       a kernel (or reduction candidate) may run S s (default 60)\n"
    "  --progress N      a progress line every N kernels (default 0: none)\n"
    "  -v, --verbose     a line per kernel; with --print, the case too\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 when every kernel agreed, 1 when any failed (a mismatch, an\n"
    "engine or code generator error, a crash, a timeout, or a kernel the\n"
    "front end rejected: a generator bug), 2 for a usage error.\n"
    "\n"
    "Replay: difffuzz --replay R.txt [--engine gpu] runs a reproducer again and\n"
    "exits 1 if it still fails; with --out DIR it is written there again with\n"
    "its inputs as .npy and the `teenyc run` command lines that replay it.\n"
    "On the GPU machine (static bundle; scripts/difffuzz-gpu does two passes):\n"
    "  bin/difffuzz --engine gpu --seed 1 --count 10000 -j 1 --keep-going --out repro\n"
    "Environment (GPU engine): TEENY_CUDA_JIT_OPT=0..4 sets the driver JIT's\n"
    "optimisation level; DFZ_GPU_PTX=FILE launches that PTX (same entry and\n"
    "parameters) instead of the generated one, to replay hand-edited PTX\n"
    "(tests/gpu/ptx_variants.py).\n";

/* ---- options and statistics ----------------------------------------------------------------------- */

typedef struct options {
  uint64_t seed;
  long count;
  double seconds;
  dfz_engine engine;
  int jobs;
  const char *out;
  bool keep_going, reduce, verbose;
  int reduce_max;
  double timeout;
  long progress;
  dfz_gen_opts gen;
} options;

#define MAX_CATS 64

typedef struct cat_count {
  int status;
  char cat[64];
  long n;
  uint64_t first_seed;
  char first_detail[160];
} cat_count;

typedef struct stats {
  long generated, compiled, ran, ok;
  long by_status[DFZ_STATUS__COUNT];
  cat_count cats[MAX_CATS];
  int ncats;
  double interp_s, engine_s;
  long reduced;
} stats;

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
  (void)sig;
  stop_requested = 1;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static cat_count *count_cat(stats *s, int status, const char *cat, uint64_t seed, const char *detail) {
  for (int i = 0; i < s->ncats; i++)
    if (s->cats[i].status == status && strcmp(s->cats[i].cat, cat) == 0) {
      s->cats[i].n++;
      return &s->cats[i];
    }
  if (s->ncats == MAX_CATS)
    return NULL;
  cat_count *c = &s->cats[s->ncats++];
  c->status = status;
  snprintf(c->cat, sizeof c->cat, "%s", cat);
  c->n = 1;
  c->first_seed = seed;
  snprintf(c->first_detail, sizeof c->first_detail, "%s", detail);
  for (char *q = c->first_detail; *q; q++)
    if (*q == '\n')
      *q = ' ';
  return c;
}

static void merge(stats *into, const stats *s) {
  into->generated += s->generated;
  into->compiled += s->compiled;
  into->ran += s->ran;
  into->ok += s->ok;
  into->interp_s += s->interp_s;
  into->engine_s += s->engine_s;
  into->reduced += s->reduced;
  for (int i = 0; i < DFZ_STATUS__COUNT; i++)
    into->by_status[i] += s->by_status[i];
  for (int i = 0; i < s->ncats; i++) {
    cat_count *c = count_cat(into, s->cats[i].status, s->cats[i].cat, s->cats[i].first_seed,
                             s->cats[i].first_detail);
    if (c) {
      c->n += s->cats[i].n - 1;
      if (s->cats[i].first_seed < c->first_seed) {
        c->first_seed = s->cats[i].first_seed;
        snprintf(c->first_detail, sizeof c->first_detail, "%s", s->cats[i].first_detail);
      }
    }
  }
}

static bool is_failure(dfz_status s) { return s != DFZ_OK && s != DFZ_UNSUPPORTED; }

/* ---- one kernel ----------------------------------------------------------------------------------------- */

static void reduce_and_write(const options *o, dfz_exec *x, dfz_prog *p, const dfz_outcome *out,
                             uint64_t seed) {
  dfz_outcome last = *out;
  dfz_reduce_stats rs = {0};
  if (o->reduce) {
    dfz_reduce_opts ro = {x, o->timeout, 0, 0, o->verbose};
    dfz_reduce(p, out, &ro, &last, &rs);
  }
  dfz_case c;
  memset(&c, 0, sizeof c);
  dfz_prog_case(p, &c);
  char name[128], err[512];
  snprintf(name, sizeof name, "seed%llu-%s-%s", (unsigned long long)seed, dfz_status_name(out->status),
           out->cat);
  if (dfz_repro_write(o->out, name, &c, &last, err, sizeof err))
    printf("  %s %s/%s.{c,txt} (%d runs, %.1f s)\n", o->reduce ? "reduced to" : "written to", o->out,
           name, rs.runs, rs.seconds);
  else
    printf("  %s\n", err);
  fflush(stdout);
  dfz_case_free(&c);
}

/* Returns true if the kernel failed. */
static bool one_kernel(const options *o, dfz_exec *x, uint64_t seed, stats *st) {
  dfz_prog p;
  dfz_generate(seed, &o->gen, &p);
  dfz_case c;
  memset(&c, 0, sizeof c);
  dfz_prog_case(&p, &c);
  dfz_outcome out;
  dfz_exec_run(x, &c, o->timeout, &out);
  st->generated++;
  st->by_status[out.status]++;
  if (out.status != DFZ_INVALID)
    st->compiled++;
  if (out.status == DFZ_OK || out.status == DFZ_MISMATCH)
    st->ran++;
  if (out.status == DFZ_OK)
    st->ok++;
  st->interp_s += out.interp_s;
  st->engine_s += out.engine_s;
  bool failed = is_failure(out.status);
  if (o->verbose || failed) {
    printf("seed %llu: %s%s%s (interp %.0f ms, engine %.0f ms) [%s]\n", (unsigned long long)seed,
           dfz_status_name(out.status), out.cat[0] ? " " : "", out.cat, out.interp_s * 1e3,
           out.engine_s * 1e3, p.features);
    if (failed)
      printf("  %s%s", out.detail, out.detail[0] && out.detail[strlen(out.detail) - 1] != '\n' ? "\n" : "");
    fflush(stdout);
  }
  if (failed || out.status == DFZ_UNSUPPORTED) {
    /* a deadlock in a kernel with the flag pattern is likely issue 11's
     * defect 1b: counted apart (the reducer still matches the plain cat) */
    char cat[80];
    snprintf(cat, sizeof cat, "%s%s", out.cat,
             out.status == DFZ_ENGINE_ERROR && strstr(p.features, " uniform") ? "+uniform" : "");
    cat_count *cc = count_cat(st, out.status, cat, seed, out.detail);
    if (failed && o->out && cc && cc->n <= o->reduce_max) {
      reduce_and_write(o, x, &p, &out, seed);
      st->reduced++;
    }
  }
  dfz_case_free(&c);
  dfz_prog_free(&p);
  return failed;
}

/* Seeds first, first + step, ... until count, time or a stop. */
static bool campaign(const options *o, uint64_t first, int step, long count, stats *st) {
  dfz_exec *x = dfz_exec_start(o->engine);
  double t0 = now_s();
  bool any = false;
  for (long i = 0; count < 0 || i < count; i++) {
    if (stop_requested || (o->seconds > 0 && now_s() - t0 >= o->seconds))
      break;
    if (one_kernel(o, x, first + (uint64_t)i * (uint64_t)step, st)) {
      any = true;
      if (!o->keep_going)
        break;
    }
    if (o->progress > 0 && (i + 1) % o->progress == 0) {
      printf("[progress] seed %llu: %ld kernels, %ld ok, %ld failed, %.0f s\n",
             (unsigned long long)(first + (uint64_t)i * (uint64_t)step), st->generated, st->ok,
             st->generated - st->ok - st->by_status[DFZ_UNSUPPORTED], now_s() - t0);
      fflush(stdout);
    }
  }
  dfz_exec_stop(x);
  return any;
}

/* --jobs N: N workers, worker w takes seeds seed + w, seed + w + N, ... */
static bool run_jobs(const options *o, stats *total) {
  int n = o->jobs;
  pid_t pids[64];
  int fds[64];
  for (int w = 0; w < n; w++) {
    int pf[2];
    if (pipe(pf))
      return true;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      close(pf[0]);
      stats st;
      memset(&st, 0, sizeof st);
      long count = o->count < 0 ? -1 : (o->count - w + n - 1) / n;
      bool failed = campaign(o, o->seed + (uint64_t)w, n, count, &st);
      ssize_t k = write(pf[1], &st, sizeof st);
      (void)k;
      _exit(failed ? 1 : 0);
    }
    close(pf[1]);
    pids[w] = pid;
    fds[w] = pf[0];
  }
  bool any = false;
  for (int left = n; left > 0; left--) {
    int st = 0;
    pid_t pid = wait(&st);
    if (pid < 0)
      break;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1) {
      any = true;
      if (!o->keep_going)
        for (int w = 0; w < n; w++)
          kill(pids[w], SIGTERM);
    }
  }
  for (int w = 0; w < n; w++) {
    stats s;
    if (read(fds[w], &s, sizeof s) == (ssize_t)sizeof s)
      merge(total, &s);
    close(fds[w]);
  }
  return any;
}

static void summary(const options *o, const stats *s, double secs) {
  printf("\ndifffuzz summary (%s engine, seeds from %llu):\n",
         o->engine == DFZ_ENGINE_GPU ? "gpu" : o->engine == DFZ_ENGINE_INTERP ? "interp" : "emu",
         (unsigned long long)o->seed);
  printf("  kernels generated %ld, compiled %ld, run both ways %ld, agreed %ld\n", s->generated,
         s->compiled, s->ran, s->ok);
  printf("  mismatches %ld, code generator errors %ld, engine errors %ld, crashes %ld, "
         "timeouts %ld\n",
         s->by_status[DFZ_MISMATCH], s->by_status[DFZ_CODEGEN_ERROR], s->by_status[DFZ_ENGINE_ERROR],
         s->by_status[DFZ_CRASH], s->by_status[DFZ_TIMEOUT]);
  printf("  invalid kernels (generator errors) %ld, unsupported by the code generator %ld\n",
         s->by_status[DFZ_INVALID], s->by_status[DFZ_UNSUPPORTED]);
  for (int i = 0; i < s->ncats; i++)
    printf("    %-13s %-16s %6ld  (first: seed %llu: %.100s)\n", dfz_status_name(s->cats[i].status),
           s->cats[i].cat, s->cats[i].n, (unsigned long long)s->cats[i].first_seed,
           s->cats[i].first_detail);
  printf("  time %.1f s (%.1f kernels/s; interpreter %.1f s, engine %.1f s), reduced %ld\n", secs,
         secs > 0 ? (double)s->generated / secs : 0.0, s->interp_s, s->engine_s, s->reduced);
  fflush(stdout);
}

/* ---- replay and print ---------------------------------------------------------------------------------- */

/* --replay with --out: the reproducer again, with its .npy inputs and the
 * teenyc run command lines, under --out. */
static void rewrite_repro(const options *o, const char *file, const dfz_case *c,
                          const dfz_outcome *out) {
  char name[256], err[512];
  const char *base = strrchr(file, '/');
  snprintf(name, sizeof name, "%s", base ? base + 1 : file);
  char *dot = strrchr(name, '.');
  if (dot)
    *dot = '\0';
  if (dfz_repro_write(o->out, name, c, out, err, sizeof err))
    printf("  written to %s/%s.{c,txt}\n", o->out, name);
  else
    printf("  %s\n", err);
}

static int replay(const options *o, int nfiles, char **files) {
  dfz_exec *x = dfz_exec_start(o->engine);
  int bad = 0;
  for (int i = 0; i < nfiles; i++) {
    dfz_case c;
    char known[256], err[1024];
    if (!dfz_repro_read(files[i], &c, known, sizeof known, err, sizeof err)) {
      fprintf(stderr, "difffuzz: %s: %s\n", files[i], err);
      bad++;
      continue;
    }
    dfz_outcome out;
    dfz_exec_run(x, &c, o->timeout, &out);
    bool failed = is_failure(out.status);
    printf("%s: %s%s%s", files[i], dfz_status_name(out.status), out.cat[0] ? " " : "", out.cat);
    if (known[0])
      printf(" (known: %s)", known);
    printf("\n");
    if (failed || o->verbose)
      printf("  %s%s", out.detail, out.detail[0] && out.detail[strlen(out.detail) - 1] != '\n' ? "\n" : "");
    bad += failed;
    if (o->out)
      rewrite_repro(o, files[i], &c, &out);
    dfz_case_free(&c);
  }
  dfz_exec_stop(x);
  return bad ? 1 : 0;
}

static int print_seed(const options *o, uint64_t seed) {
  dfz_prog p;
  dfz_generate(seed, &o->gen, &p);
  dfz_case c;
  memset(&c, 0, sizeof c);
  dfz_prog_case(&p, &c);
  fputs(c.source, stdout);
  if (o->verbose) {
    char *t = dfz_case_to_text(&c, "-");
    printf("/* case:\n%s*/\n", t);
    free(t);
  }
  dfz_case_free(&c);
  dfz_prog_free(&p);
  return 0;
}

/* Is there a GPU?  Asked in a child: CUDA must not be initialised in a
 * process that forks the executors afterwards. */
static bool gpu_usable(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char t[16];
    if (!dfz_gpu_target(t, sizeof t)) {
      fprintf(stderr, "difffuzz: --engine gpu: no usable GPU (libcuda missing or no device)\n");
      _exit(1);
    }
    printf("difffuzz: GPU target %s\n", t);
    fflush(stdout);
    _exit(0);
  }
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* ---- main -------------------------------------------------------------------------------------------------- */

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "difffuzz: ");
  fprintf(stderr, msg, arg);
  fprintf(stderr, "\n(difffuzz --help for the options)\n");
  return 2;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"seed", required_argument, NULL, 's'},     {"count", required_argument, NULL, 'n'},
      {"seconds", required_argument, NULL, 't'},  {"engine", required_argument, NULL, 'e'},
      {"jobs", required_argument, NULL, 'j'},     {"out", required_argument, NULL, 'o'},
      {"keep-going", no_argument, NULL, 'k'},     {"skip", required_argument, NULL, 'S'},
      {"no-reduce", no_argument, NULL, 'R'},      {"reduce-max", required_argument, NULL, 'M'},
      {"timeout", required_argument, NULL, 'T'},  {"progress", required_argument, NULL, 'P'},
      {"replay", no_argument, NULL, 'r'},         {"print", required_argument, NULL, 'p'},
      {"verbose", no_argument, NULL, 'v'},        {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  options o;
  memset(&o, 0, sizeof o);
  o.seed = 1;
  o.count = -2; /* not given */
  o.jobs = 1;
  o.reduce = true;
  o.reduce_max = 2;
  o.timeout = 60;
#ifdef DFZ_NO_EMULATOR
  o.engine = DFZ_ENGINE_GPU; /* the device bundle has no host emulator */
#endif
  bool do_replay = false, do_print = false;
  uint64_t print_which = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "j:vh", longopts, NULL)) != -1) {
    switch (ch) {
    case 's': o.seed = strtoull(optarg, NULL, 10); break;
    case 'n': o.count = strtol(optarg, NULL, 10); if (o.count < 0) return usage_error("bad --count '%s'", optarg); break;
    case 't': o.seconds = strtod(optarg, NULL); break;
    case 'e':
#ifdef DFZ_NO_EMULATOR
      if (strcmp(optarg, "emu") == 0)
        return usage_error("%s", "this build (the device bundle) has no emulator: --engine gpu");
#endif
      if (strcmp(optarg, "emu") == 0) o.engine = DFZ_ENGINE_EMU;
      else if (strcmp(optarg, "gpu") == 0) o.engine = DFZ_ENGINE_GPU;
      else if (strcmp(optarg, "interp") == 0) o.engine = DFZ_ENGINE_INTERP;
      else return usage_error("unknown --engine '%s' (emu or gpu)", optarg);
      break;
    case 'j': o.jobs = atoi(optarg); if (o.jobs < 1 || o.jobs > 64) return usage_error("bad --jobs '%s' (1-64)", optarg); break;
    case 'o': o.out = optarg; break;
    case 'k': o.keep_going = true; break;
    case 'S': {
      const char *bad = NULL;
      if (!dfz_feature_parse(optarg, &o.gen.skip, &bad))
        return usage_error("unknown feature '%s' in --skip", bad);
      break;
    }
    case 'R': o.reduce = false; break;
    case 'M': o.reduce_max = atoi(optarg); break;
    case 'T': o.timeout = strtod(optarg, NULL); break;
    case 'P': o.progress = strtol(optarg, NULL, 10); break;
    case 'r': do_replay = true; break;
    case 'p': do_print = true; print_which = strtoull(optarg, NULL, 10); break;
    case 'v': o.verbose = true; break;
    case 'h': fputs(usage_text, stdout); return 0;
    default: return usage_error("%s", "bad option");
    }
  }
  if (do_print)
    return print_seed(&o, print_which);
  if (o.out && mkdir(o.out, 0755) != 0 && errno != EEXIST)
    return usage_error("cannot create --out directory '%s'", o.out);
  if (do_replay) {
    if (optind >= argc)
      return usage_error("%s", "--replay needs reproducer files (NAME.txt)");
    return replay(&o, argc - optind, argv + optind);
  }
  if (optind < argc)
    return usage_error("unexpected argument '%s'", argv[optind]);
  if (o.count == -2)
    o.count = o.seconds > 0 ? -1 : 100;
  if (o.engine == DFZ_ENGINE_GPU && !gpu_usable())
    return 2;
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  setvbuf(stdout, NULL, _IOLBF, 0);
  stats st;
  memset(&st, 0, sizeof st);
  double t0 = now_s();
  bool any = o.jobs > 1 ? run_jobs(&o, &st) : campaign(&o, o.seed, 1, o.count, &st);
  summary(&o, &st, now_s() - t0);
  return any ? 1 : 0;
}
