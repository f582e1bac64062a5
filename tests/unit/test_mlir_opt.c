/*
 * tests/unit/test_mlir_opt.c — the printed MLIR parses and verifies: every
 * sample of test_mlir_samples.c, with and without locations, goes through
 * `mlir-opt-19 --allow-unregistered-dialect FILE -o /dev/null` (arith, math
 * and scf are verified for real there; tt ops are checked for syntax only).
 * Exit 0: all accepted; 1: some rejected (mlir-opt's messages and the
 * numbered text are shown); 77: mlir-opt-19 is not installed (skipped).
 *
 * `test_mlir_opt --write DIR` instead writes DIR/NAME.ttir (and
 * NAME.loc.ttir) for a check with Triton's own parser on a GPU machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir_samples.h"

teeny_ir_func *teeny_test_mlir_sample(teeny_arena *a, int i, const char **name);

extern char **environ;

/* The first executable `name` on $PATH into out; false if none. */
static bool find_in_path(const char *name, char *out, size_t n) {
  const char *path = getenv("PATH");
  if (!path || !*path)
    path = "/usr/bin:/bin";
  while (*path) {
    const char *end = strchr(path, ':');
    size_t len = end ? (size_t)(end - path) : strlen(path);
    snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", name);
    if (access(out, X_OK) == 0)
      return true;
    path += len + (end != NULL);
  }
  return false;
}

static bool write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  if (!fp)
    return false;
  bool ok = fputs(text, fp) >= 0;
  return fclose(fp) == 0 && ok;
}

static void dump_file(const char *path) {
  FILE *fp = fopen(path, "r");
  char line[4096];
  if (!fp)
    return;
  while (fgets(line, sizeof line, fp))
    fputs(line, stderr);
  fclose(fp);
}

static void dump_numbered(const char *text) {
  int n = 1;
  fprintf(stderr, "%4d  ", n);
  for (const char *c = text; *c; c++) {
    fputc(*c, stderr);
    if (*c == '\n' && c[1])
      fprintf(stderr, "%4d  ", ++n);
  }
}

/* Run `tool --allow-unregistered-dialect file -o /dev/null` with stderr to
 * errpath.  Returns the exit status, or -1 if it could not run. */
static int run_mlir_opt(const char *tool, const char *file, const char *errpath) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char *argv[] = {(char *)tool, "--allow-unregistered-dialect", (char *)file, "-o",
                  "/dev/null", NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return -1;
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Check one printout; returns true if mlir-opt accepted it. */
static bool check_text(const char *tool, const char *dir, const char *label,
                       const char *text) {
  char file[512], err[520];
  snprintf(file, sizeof file, "%s/teeny-mlir-%ld-%s.mlir", dir, (long)getpid(), label);
  snprintf(err, sizeof err, "%s.err", file);
  if (!write_file(file, text)) {
    fprintf(stderr, "FAIL %s: cannot write %s\n", label, file);
    return false;
  }
  int rc = run_mlir_opt(tool, file, err);
  bool ok = rc == 0;
  if (ok) {
    printf("ok   %s\n", label);
  } else {
    fprintf(stderr, "FAIL %s: %s exited with %d\n", label, tool, rc);
    dump_file(err);
    dump_numbered(text);
  }
  unlink(file);
  unlink(err);
  return ok;
}

/* Print sample i plain and with locations into plain/loc; false past the end. */
static bool print_sample(teeny_arena *a, int i, const char **name, teeny_buf *plain,
                         teeny_buf *loc) {
  teeny_ir_func *f = teeny_test_mlir_sample(a, i, name);
  if (!f)
    return false;
  char file[96];
  snprintf(file, sizeof file, "%s.c", *name);
  teeny__mlir_print(plain, f);
  teeny__mlir_print_loc(loc, f, file);
  return true;
}

static int write_all(const char *dir) {
  teeny_arena a;
  teeny__arena_init(&a);
  const char *name;
  int bad = 0;
  for (int i = 0;; i++) {
    teeny_buf plain, loc;
    teeny__buf_init(&plain);
    teeny__buf_init(&loc);
    bool more = print_sample(&a, i, &name, &plain, &loc);
    if (more) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s.ttir", dir, name);
      bad += !write_file(path, plain.p);
      snprintf(path, sizeof path, "%s/%s.loc.ttir", dir, name);
      bad += !write_file(path, loc.p);
    }
    teeny__buf_free(&plain);
    teeny__buf_free(&loc);
    if (!more)
      break;
  }
  teeny__arena_free(&a);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write") == 0)
    return write_all(argv[2]);
  char tool[4096];
  if (!find_in_path("mlir-opt-19", tool, sizeof tool)) {
    printf("SKIP: mlir-opt-19 not found\n");
    return 77;
  }
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  teeny_arena a;
  teeny__arena_init(&a);
  int failed = 0, n = 0;
  const char *name;
  for (int i = 0;; i++, n++) {
    teeny_buf plain, loc;
    teeny__buf_init(&plain);
    teeny__buf_init(&loc);
    bool more = print_sample(&a, i, &name, &plain, &loc);
    if (more) {
      char label[128];
      failed += !check_text(tool, dir, name, plain.p);
      snprintf(label, sizeof label, "%s+loc", name);
      failed += !check_text(tool, dir, label, loc.p);
    }
    teeny__buf_free(&plain);
    teeny__buf_free(&loc);
    if (!more)
      break;
  }
  teeny__arena_free(&a);
  printf("%d of %d printouts accepted by %s\n", 2 * n - failed, 2 * n, tool);
  return failed ? 1 : 0;
}
