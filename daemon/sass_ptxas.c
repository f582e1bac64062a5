/*
 * daemon/sass_ptxas.c — cubins from the CUDA toolkit's ptxas (see sass.h).
 *
 * One ptxas process per cubin, posix_spawn()ed from the SASS lane's thread
 * in its own process group, on files in a private mkdtemp() directory
 * (in.ptx, out.cubin, and its messages in log.txt); the lane waits for it
 * with a deadline, checking the stop flag every few milliseconds, and
 * kills it at either.  ptxas is found once at startup and keyed by its
 * version ("Cuda compilation tools, release 13.0, V13.0.88" -> "ptxas
 * 13.0.88").  Load: one process per entry and architecture, tens of
 * milliseconds (vector_add) to seconds (a large matmul).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/sass.h"

extern char **environ;

#define DEFAULT_PTXAS "/usr/local/cuda/bin/ptxas"
#define POLL_NS 2000000 /* how often a wait looks at the child and stop */
#define LOG_MAX 2048    /* bytes of ptxas's messages kept for an error */

/* ---- running a child ------------------------------------------------------------- */

/* Spawn argv with stdout and stderr to log_path; *pid on success. */
static int spawn_logged(char *const argv[], const char *log_path, pid_t *pid,
                        char *why, size_t n) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log_path,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_init(&at);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&at, &none); /* our thread blocks signals */
  posix_spawnattr_setpgroup(&at, 0);      /* a terminal's ^C is the daemon's */
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  int e = posix_spawn(pid, argv[0], &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (e)
    snprintf(why, n, "cannot run %s: %s", argv[0], strerror(e));
  return e ? TEENY_E_IO : 0;
}

static void sleep_ns(long ns) {
  struct timespec ts = {0, ns};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Wait for pid until the deadline or *stop: its wait status in *st.  0,
 * TEENY_E_TIMEOUT or TEENY_E_SHUTDOWN (the child killed and reaped). */
static int wait_child(pid_t pid, uint64_t timeout_ms, const atomic_bool *stop,
                      int *st) {
  uint64_t deadline = teeny__now_ns() + timeout_ms * 1000000u;
  for (;;) {
    pid_t r = waitpid(pid, st, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR))
      return 0;
    bool stopping = stop && atomic_load(stop);
    if (stopping || (timeout_ms && teeny__now_ns() >= deadline)) {
      kill(pid, SIGKILL);
      while (waitpid(pid, st, 0) < 0 && errno == EINTR) {
      }
      return stopping ? TEENY_E_SHUTDOWN : TEENY_E_TIMEOUT;
    }
    sleep_ns(POLL_NS);
  }
}

/* The file at path, whole (NUL-terminated; teeny__free), or NULL. */
static char *slurp(const char *path, size_t max, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size > max) {
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  size_t size = (size_t)st.st_size, got = 0;
  char *buf = teeny__malloc(size + 1);
  while (buf && got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  if (buf)
    buf[got] = '\0';
  if (len)
    *len = got;
  return buf;
}

/* ---- finding ptxas --------------------------------------------------------------- */

static bool executable(const char *p) { return access(p, X_OK) == 0; }

/* given, else the first ptxas on $PATH, else DEFAULT_PTXAS. */
static bool locate(const char *given, char *out, size_t n) {
  if (given && *given) {
    snprintf(out, n, "%s", given);
    return executable(out);
  }
  const char *path = getenv("PATH");
  for (const char *p = path; p && *p;) {
    size_t len = strcspn(p, ":");
    if (len && len < n - 8) {
      snprintf(out, n, "%.*s/ptxas", (int)len, p);
      if (executable(out))
        return true;
    }
    p += len + (p[len] == ':');
  }
  snprintf(out, n, "%s", DEFAULT_PTXAS);
  return executable(out);
}

/* "V13.0.88" in ptxas --version's output -> "13.0.88". */
static bool parse_version(const char *text, char *out, size_t n) {
  for (const char *p = text; (p = strchr(p, 'V')); p++) {
    size_t len = strspn(p + 1, "0123456789.");
    if (len >= 3 && memchr(p + 1, '.', len)) {
      snprintf(out, n, "%.*s", (int)len, p + 1);
      return true;
    }
  }
  return false;
}

/* A private temp directory for one run. */
static int make_dir(char *dir, size_t n, char *why, size_t wn) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, n, "%s/teenycd-sass-XXXXXX", t && t[0] == '/' ? t : "/tmp");
  if (mkdtemp(dir))
    return 0;
  snprintf(why, wn, "cannot make a temp directory %s: %s", dir, strerror(errno));
  return TEENY_E_IO;
}

static void remove_dir(const char *dir) {
  static const char *const names[] = {"in.ptx", "out.cubin", "log.txt"};
  char p[4200];
  for (size_t i = 0; i < TEENY_ARRAY_LEN(names); i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
}

int teeny__ptxas_find(const char *given, teeny_ptxas *out, char *why, size_t n) {
  memset(out, 0, sizeof *out);
  if (!locate(given, out->path, sizeof out->path)) {
    snprintf(why, n, "no ptxas (%s): install the CUDA toolkit or give --ptxas",
             given && *given ? given : "not on $PATH nor at " DEFAULT_PTXAS);
    return TEENY_E_NOTFOUND;
  }
  char dir[4096], log[4200];
  int rc = make_dir(dir, sizeof dir, why, n);
  if (rc)
    return rc;
  snprintf(log, sizeof log, "%s/log.txt", dir);
  char *argv[] = {out->path, (char *)"--version", NULL};
  pid_t pid;
  int st = 0;
  if (!(rc = spawn_logged(argv, log, &pid, why, n)))
    rc = wait_child(pid, 10000, NULL, &st);
  char *text = rc ? NULL : slurp(log, LOG_MAX, NULL);
  char version[32];
  if (!rc && (!text || !WIFEXITED(st) || WEXITSTATUS(st) ||
              !parse_version(text, version, sizeof version))) {
    snprintf(why, n, "%s --version did not say its version", out->path);
    rc = TEENY_E_IO;
  }
  if (!rc)
    snprintf(out->toolchain, sizeof out->toolchain, "ptxas %s", version);
  teeny__free(text);
  remove_dir(dir);
  return rc;
}

/* ---- one cubin ------------------------------------------------------------------- */

static int write_file(const char *path, const char *data, size_t len, char *why,
                      size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  size_t done = 0;
  while (fd >= 0 && done < len) {
    ssize_t w = write(fd, data + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    done += (size_t)w;
  }
  int e = errno;
  if (fd >= 0)
    close(fd);
  if (fd >= 0 && done == len)
    return 0;
  snprintf(why, n, "cannot write %s: %s", path, strerror(e));
  return TEENY_E_IO;
}

/* ptxas's own words, flattened to one line, as the failure's message. */
static int refused(const char *log, int st, char *why, size_t n) {
  char *text = slurp(log, 1 << 20, NULL);
  if (text)
    for (char *c = text; *c; c++)
      if (*c == '\n' || *c == '\t')
        *c = ' ';
  if (WIFSIGNALED(st))
    snprintf(why, n, "ptxas died (signal %d)", WTERMSIG(st));
  else
    snprintf(why, n, "ptxas failed (status %d): %.400s",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, text && *text ? text : "no output");
  teeny__free(text);
  return TEENY_E_COMPILE;
}

int teeny__ptxas_run(const teeny_ptxas *p, const char *target, const char *ptx,
                     size_t len, uint64_t timeout_ms, const atomic_bool *stop,
                     char **cubin, size_t *cubin_len, char *why, size_t n) {
  *cubin = NULL;
  *cubin_len = 0;
  char dir[4096], in[4200], out[4200], log[4200], arch[48];
  int rc = make_dir(dir, sizeof dir, why, n);
  if (rc)
    return rc;
  snprintf(in, sizeof in, "%s/in.ptx", dir);
  snprintf(out, sizeof out, "%s/out.cubin", dir);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  snprintf(arch, sizeof arch, "-arch=%s", target);
  char *argv[] = {(char *)p->path, arch, (char *)"-o", out, in, NULL};
  pid_t pid;
  int st = 0;
  if (!(rc = write_file(in, ptx, len, why, n)) &&
      !(rc = spawn_logged(argv, log, &pid, why, n)) &&
      (rc = wait_child(pid, timeout_ms, stop, &st)))
    snprintf(why, n, rc == TEENY_E_TIMEOUT
                         ? "ptxas ran past --sass-timeout and was killed"
                         : "the daemon is stopping");
  if (!rc && (!WIFEXITED(st) || WEXITSTATUS(st)))
    rc = refused(log, st, why, n);
  if (!rc && !(*cubin = slurp(out, 1u << 30, cubin_len))) {
    snprintf(why, n, "ptxas wrote no cubin");
    rc = TEENY_E_IO;
  }
  remove_dir(dir);
  return rc;
}
