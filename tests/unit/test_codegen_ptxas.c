/*
 * tests/unit/test_codegen_ptxas.c — every case of test_codegen_cases.c,
 * compiled for sm_90a and sm_80 with 1, 4 and 8 warps, must be accepted by
 * NVIDIA's assembler (`ptxas -arch=<target> -v`), which must not report
 * serialising a wgmma pipeline.  Prints one line per
 * kernel with ptxas's register, spill and shared-memory figures.
 *
 * ptxas is looked for in PATH, then /usr/local/cuda/bin.  Without it the
 * test prints "SKIP: ptxas not found" and exits 77 (ctest SKIP_RETURN_CODE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_codegen.h"

static int find_ptxas(char *out, size_t n) {
  const char *path = getenv("PATH");
  char buf[4096];
  snprintf(buf, sizeof buf, "%s:/usr/local/cuda/bin", path ? path : "");
  for (char *save = NULL, *dir = strtok_r(buf, ":", &save); dir;
       dir = strtok_r(NULL, ":", &save)) {
    snprintf(out, n, "%s/ptxas", *dir ? dir : ".");
    if (access(out, X_OK) == 0)
      return 0;
  }
  return -1;
}

/* Run ptxas on text; its output goes to log.  Returns its exit status. */
static int run_ptxas(const char *ptxas, const char *target, const char *text,
                     char *log, size_t nlog) {
  char src[] = "/tmp/teeny_cg_XXXXXX";
  int fd = mkstemp(src);
  if (fd < 0)
    return -1;
  size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) {
    close(fd);
    unlink(src);
    return -1;
  }
  close(fd);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v '%s' -o /dev/null 2>&1", ptxas, target, src);
  FILE *p = popen(cmd, "r");
  size_t got = 0;
  if (p) {
    got = fread(log, 1, nlog - 1, p);
    int st = pclose(p);
    log[got] = '\0';
    unlink(src);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  unlink(src);
  return -1;
}

/* "Used 40 registers, ..." and the spill line, squeezed to one line. */
static void summary(const char *log, char *out, size_t n) {
  const char *u = strstr(log, "Used ");
  const char *s = strstr(log, "bytes stack frame");
  const char *e;
  size_t k = 0;
  out[0] = '\0';
  if (s) {
    const char *b = s;
    while (b > log && b[-1] != '\n')
      b--;
    while (*b == ' ')
      b++;
    e = strchr(b, '\n');
    k += (size_t)snprintf(out + k, n - k, "%.*s; ", (int)(e ? e - b : (long)strlen(b)), b);
  }
  if (u && k < n) {
    e = strchr(u, '\n');
    snprintf(out + k, n - k, "%.*s", (int)(e ? e - u : (long)strlen(u)), u);
  }
}

int main(void) {
  char ptxas[4096];
  if (find_ptxas(ptxas, sizeof ptxas)) {
    printf("SKIP: ptxas not found\n");
    return 77;
  }
  static const char *targets[] = {"sm_90a", "sm_80"};
  static const int warps[] = {1, 4, 8};
  teeny_arena a;
  teeny__arena_init(&a);
  teeny_cg_case cases[256];
  int n = teeny_cg_cases(&a, cases, 256), failures = 0;
  static char log[1 << 16];
  int done = 0;
  for (int i = 0; i < n; i++)
    for (int t = 0; t < 2; t++)
      for (int w = 0; w < 3; w++) {
        if (warps[w] < cases[i].min_warps)
          continue;
        done++;
        teeny_buf err;
        teeny__buf_init(&err);
        char *ptx = teeny_cg_compile(cases[i].f, targets[t], warps[w], &err);
        if (!ptx) {
          printf("FAIL %s %s nw=%d: code generation failed\n%s", cases[i].name,
                 targets[t], warps[w], err.p ? err.p : "");
          failures++;
          teeny__buf_free(&err);
          continue;
        }
        teeny__buf_free(&err);
        int rc = run_ptxas(ptxas, targets[t], ptx, log, sizeof log);
        char line[512];
        summary(log, line, sizeof line);
        if (rc != 0) {
          printf("FAIL %s %s nw=%d: ptxas rejected the PTX (status %d):\n%s\n",
                 cases[i].name, targets[t], warps[w], rc, log);
          failures++;
        } else if (strstr(log, "warpgroup.wait is injected") ||
                   (strstr(log, "wgmma") && strstr(log, "serialized") &&
                    !strstr(log, "insufficient register resources"))) {
          /* ptxas found an access to registers an in-flight wgmma writes,
           * on some path of the control-flow graph (C7514/C7515/C7517),
           * and waits there: correct, but the pipelining of
           * nvptx/dot.c/ctrl.c is lost.  (C7511, too few registers, is
           * the tile's size: 128x256 with 4 warps spills anyway.) */
          printf("FAIL %s %s nw=%d: ptxas serialized the wgmma pipeline:\n%s\n",
                 cases[i].name, targets[t], warps[w], log);
          failures++;
        } else {
          printf("ok   %-26s %-6s nw=%d  %s\n", cases[i].name, targets[t], warps[w], line);
        }
        teeny__free(ptx);
      }
  teeny__arena_free(&a);
  printf("%d kernels, %d failures\n", done, failures);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
