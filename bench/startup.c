/*
 * bench/startup.c — new process to first kernel done, and where the time
 * goes (issue 16): CUDA init (cuInit, primary context), the teenycd call
 * (connect, HELLO, compile: a warm store answers with the PTX and, once it
 * has made it, the cubin for this GPU), module load (the cubin: no JIT; or
 * the PTX: the driver's JIT), and the launch (buffers, launch, sync).
 *
 *   teeny_bench_startup [--kernel vector_add|matmul] [--runs N]
 *                       [--expect-ms MS] [--child]
 *
 * The parent fork()s and exec()s itself --child RUNS times, one fresh
 * process each (so nothing is warm but teenycd's store and the OS's page
 * cache), times each from fork to exit, and prints the median of every
 * phase; --expect-ms says whether the median total met a target.  Run it
 * with CUDA's JIT cache off (CUDA_CACHE_DISABLE=1) against a warm teenycd
 * ($TEENYCD_SOCKET): scripts/gpu-check --startup-only.  A child prints one
 * line: "phases cuda_init teenycd module_load launch total origin".
 * Exit status: 0 (target met, or none), 1 (missed, or a failure), 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_kernels.h"

#define MAX_RUNS 200

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- one fresh process --------------------------------------------------------- */

static int child(const char *kernel) {
  char err[2048] = "";
  double t0 = now_ms(), t1, t2, t3, t4;
  bk_case k;
  teeny_client *c = NULL;
  teeny_client_result *r = NULL;
  teeny_module *m = NULL;
  int rc = bk_init(&k, kernel, 0) ? 1 : 0;
  if (!rc && teeny_cuda_available(err, sizeof err)) /* 1: CUDA init */
    rc = 1;
  t1 = now_ms();
  teeny_client_opts o = {.mode = TEENY_MODE_DAEMON, .client_name = "teeny_bench_startup"};
  if (!rc && (teeny_client_open(&c, &o) ||
              teeny_client_compile(c, &k.req, TEENY_EMIT_PTX, &r))) { /* 2: teenycd */
    snprintf(err, sizeof err, "%s", teeny_client_errmsg(c));
    rc = 1;
  }
  t2 = now_ms();
  if (!rc && teeny_module_load_result(r, &m, err, sizeof err)) /* 3: module */
    rc = 1;
  t3 = now_ms();
  unsigned g[3] = {1, 1, 1};
  if (!rc) { /* 4: buffers, launch, wait */
    teeny_grid grid = bk_grid(&k, strcmp(kernel, "matmul") ? 1024 : 128, 256);
    g[0] = grid.x;
    rc = bk_alloc(&k, err, sizeof err) || teeny_launch(m, g, NULL, k.args, err, sizeof err) ||
         teeny_cuda_sync(err, sizeof err);
  }
  t4 = now_ms();
  if (rc)
    fprintf(stderr, "teeny_bench_startup: %s\n", err);
  else
    printf("phases %.3f %.3f %.3f %.3f %.3f %s\n", t1 - t0, t2 - t1, t3 - t2, t4 - t3,
           t4 - t0, strncmp(teeny_module_origin(m), "cubin", 5) == 0 ? "cubin" : "ptx");
  teeny_module_unload(m);
  teeny_client_result_free(r);
  teeny_client_close(c);
  bk_close(&k);
  return rc;
}

/* ---- the parent ------------------------------------------------------------------ */

typedef struct run {
  double phase[5]; /* cuda_init, teenycd, module_load, launch, in-process total */
  double wall;     /* fork to exit */
  char origin[8];  /* cubin or ptx */
} run;

/* Start one child and read its line. */
static int one_run(const char *self, const char *kernel, run *out) {
  int p[2];
  if (pipe(p))
    return -1;
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], STDOUT_FILENO);
    close(p[0]);
    execl(self, self, "--child", "--kernel", kernel, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  char line[512] = "";
  FILE *f = fdopen(p[0], "r");
  bool got = f && fgets(line, sizeof line, f);
  if (f)
    fclose(f);
  int st = 0;
  waitpid(pid, &st, 0);
  out->wall = now_ms() - t0;
  if (!got || !WIFEXITED(st) || WEXITSTATUS(st) ||
      sscanf(line, "phases %lf %lf %lf %lf %lf %7s", &out->phase[0], &out->phase[1],
             &out->phase[2], &out->phase[3], &out->phase[4], out->origin) != 6)
    return -1;
  return 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int parent(const char *self, const char *kernel, int runs, double expect) {
  static run rs[MAX_RUNS];
  int cubins = 0;
  for (int i = 0; i < runs; i++) {
    if (one_run(self, kernel, &rs[i])) {
      fprintf(stderr, "teeny_bench_startup: run %d of %s failed\n", i, kernel);
      return 1;
    }
    cubins += strcmp(rs[i].origin, "cubin") == 0;
  }
  double v[MAX_RUNS], med[6];
  for (int p = 0; p < 6; p++) {
    for (int i = 0; i < runs; i++)
      v[i] = p < 5 ? rs[i].phase[p] : rs[i].wall;
    med[p] = median(v, runs);
  }
  printf("%-10s new process -> first kernel done, median of %d (CUDA_CACHE_DISABLE=%s):\n",
         kernel, runs, getenv("CUDA_CACHE_DISABLE") ? getenv("CUDA_CACHE_DISABLE") : "unset");
  printf("  %-12s %9.1f ms\n  %-12s %9.3f ms\n  %-12s %9.1f ms   (%d of %d loaded the cubin)\n"
         "  %-12s %9.1f ms\n  %-12s %9.1f ms   (in process: %.1f ms)\n",
         "CUDA init", med[0], "teenycd", med[1], "module load", med[2], cubins, runs,
         "launch", med[3], "total", med[5], med[4]);
  if (expect <= 0)
    return 0;
  bool met = med[5] <= expect;
  printf("  target %.0f ms: %s\n", expect, met ? "met" : "MISSED");
  return met ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *kernel = "vector_add";
  int runs = 11;
  double expect = 0;
  bool is_child = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--child"))
      is_child = true;
    else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
      kernel = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--expect-ms") && i + 1 < argc)
      expect = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: teeny_bench_startup [--kernel vector_add|matmul] [--runs N] "
                      "[--expect-ms MS]\n");
      return 2;
    }
  }
  if (is_child)
    return child(kernel);
  if (runs < 1 || runs > MAX_RUNS)
    runs = 11;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 1;
  self[n] = '\0';
  return parent(self, kernel, runs, expect);
}
