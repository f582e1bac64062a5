/*
 * bench/hostile.c — hostile kernels (tests/integration/hostile.c) against
 * the compiler's limits: for each, the time and peak resident memory of
 *   spec   teeny_spec_create (parse, resolve, bind, key: what teenycd runs
 *          in its own process for every request that misses its memory map)
 *   ir     teeny_spec_create + teeny_spec_compile(MLIR) (front end, IR
 *          generator, verifier, MLIR printer)
 *   ptx    the full compile through the library, no deadline, capped at
 *          --cap seconds (the cases teenycd stops with its time budget)
 *   daemon the compile through teenycd with --compile-timeout --timeout
 * plus the daemon's resident size after each case.  Each library stage
 * runs in a fresh child process (its peak RSS is wait4's ru_maxrss).
 * Prints a Markdown table; exits 1 if any answer differs from the one the
 * case expects.
 *
 *   teeny_bench_hostile [--teenycd PATH] [--timeout S] [--cap S]
 *                       [--only NAME] [--no-ptx] [--no-daemon]
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/compile.h"
#include "tests/integration/hostile.h"
#include "tests/integration/tclient.h"

typedef struct opts {
  int timeout_s;   /* daemon --compile-timeout */
  int cap_s;       /* library ptx stage cap */
  const char *only;/* one case */
  bool ptx;        /* run the ptx stage */
  bool daemon;     /* run the daemon stage */
} opts;

typedef struct result {
  int rc;          /* status (or 1: killed at the cap) */
  double ms;       /* wall time of the call */
  double mib;      /* peak RSS of the child */
  bool capped;     /* killed at the cap */
  char msg[200];   /* first error */
} result;

/* What the child sends back. */
typedef struct wire {
  int rc;
  double ms;
  char msg[200];
} wire;

enum { ST_SPEC, ST_IR, ST_PTX };

static void bindings(const hostile_case *hc, tc_compile *t, const char *src,
                     size_t n) {
  tc_compile_init(t, src, n, hc->kernel, hc->bindings);
  t->req.u.compile.req.num_warps = hc->num_warps;
}

static void first_error(const teeny_diags *d, int rc, char *out, size_t n) {
  for (size_t i = 0; i < d->n; i++)
    if (d->v[i].level == TEENY_DIAG_ERROR) {
      snprintf(out, n, "%s", d->v[i].message);
      return;
    }
  snprintf(out, n, "%s", rc ? teeny_strerror(rc) : "");
}

static void child(const hostile_case *hc, int stage, int fd) {
  size_t n;
  char *src = hc->gen(&n);
  tc_compile t;
  bindings(hc, &t, src, n);
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *spec = NULL;
  teeny_artifact *a = NULL;
  wire w;
  memset(&w, 0, sizeof w);
  uint64_t t0 = tc_now_us();
  w.rc = teeny_spec_create(&t.req.u.compile.req, &spec, &d);
  if (!w.rc && stage != ST_SPEC)
    w.rc = teeny_spec_compile(spec,
                              stage == ST_IR ? TEENY_EMIT_MLIR
                                             : TEENY_EMIT_MLIR | TEENY_EMIT_PTX,
                              &a, &d);
  w.ms = (double)(tc_now_us() - t0) / 1e3;
  first_error(&d, w.rc, w.msg, sizeof w.msg);
  if (write(fd, &w, sizeof w) != (ssize_t)sizeof w)
    _exit(3);
  _exit(0);
}

static void run_stage(const hostile_case *hc, int stage, int cap_s,
                      result *r) {
  memset(r, 0, sizeof *r);
  int p[2];
  if (pipe(p)) {
    r->rc = 1;
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    if (cap_s)
      alarm((unsigned)cap_s);
    child(hc, stage, p[1]);
  }
  close(p[1]);
  wire w;
  memset(&w, 0, sizeof w);
  ssize_t got = read(p[0], &w, sizeof w);
  close(p[0]);
  int st = 0;
  struct rusage ru;
  wait4(pid, &st, 0, &ru);
  r->mib = (double)ru.ru_maxrss / 1024.0;
  if (got != (ssize_t)sizeof w) {
    r->capped = WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
    r->rc = 1;
    r->ms = cap_s * 1e3;
    snprintf(r->msg, sizeof r->msg, "%s",
             r->capped ? "killed at the cap" : "child died");
    return;
  }
  r->rc = w.rc;
  r->ms = w.ms;
  memcpy(r->msg, w.msg, sizeof r->msg);
  r->msg[sizeof r->msg - 1] = '\0';
}

/* ---- the daemon -------------------------------------------------------------- */

static long status_kb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long v = -1;
  size_t fl = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, fl) == 0 && line[fl] == ':')
      v = strtol(line + fl + 1, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

static void run_daemon(const hostile_case *hc, tdaemon *d, result *r,
                       long *rss_kb, long *hwm_kb) {
  memset(r, 0, sizeof *r);
  size_t n;
  char *src = hc->gen(&n);
  tclient c;
  tc_init(&c);
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  r->rc = tc_open(&c, d->sock);
  char *frame = NULL;
  size_t flen = 0;
  if (!r->rc && hostile_frame(hc, src, n, 77, &frame, &flen))
    r->rc = TEENY_E_NOMEM;
  uint64_t t0 = tc_now_us();
  if (!r->rc && tc_send_raw(&c, frame, flen))
    r->rc = TEENY_E_IO;
  if (!r->rc)
    r->rc = tc_recv(&c, TEENY_OP_COMPILE, &rep, 600000);
  free(frame);
  r->ms = (double)(tc_now_us() - t0) / 1e3;
  if (!r->rc) {
    r->rc = rep.status;
    snprintf(r->msg, sizeof r->msg, "%s", rep.error ? rep.error : "");
  } else {
    snprintf(r->msg, sizeof r->msg, "transport: %s", teeny_strerror(r->rc));
  }
  teeny_msg_reply_free(&rep);
  if (!r->rc && tc_ping(&c))
    snprintf(r->msg, sizeof r->msg, "ping failed after the case");
  tc_close(&c);
  free(src);
  *rss_kb = status_kb(d->pid, "VmRSS");
  *hwm_kb = status_kb(d->pid, "VmHWM");
}

/* ---- output -------------------------------------------------------------------- */

static const char *sname(int rc) { return rc <= 0 ? teeny_err_name(rc) : "-"; }

static bool check(const char *stage, const hostile_case *hc, int want,
                  const result *r) {
  bool ok = r->rc == want && !r->capped;
  if (ok && want && hc->want_msg && !strstr(r->msg, hc->want_msg))
    ok = false;
  if (!ok)
    fprintf(stderr, "%s %s: got %s (%s), want %s with '%s'\n", hc->name,
            stage, sname(r->rc), r->msg, sname(want),
            hc->want_msg ? hc->want_msg : "");
  return ok;
}

static void cell(char *out, size_t n, const result *r, bool with_status) {
  if (r->capped)
    snprintf(out, n, "> %.0f s (capped), %.0f MiB", r->ms / 1e3, r->mib);
  else if (with_status)
    snprintf(out, n, "%s, %.0f ms, %.0f MiB", r->rc ? sname(r->rc) : "ok",
             r->ms, r->mib);
  else
    snprintf(out, n, "%.0f ms, %.0f MiB", r->ms, r->mib);
}

int main(int argc, char **argv) {
  opts o = {10, 120, NULL, true, true};
  static const struct option lo[] = {
      {"teenycd", required_argument, NULL, 'd'},
      {"timeout", required_argument, NULL, 't'},
      {"cap", required_argument, NULL, 'c'},
      {"only", required_argument, NULL, 'o'},
      {"no-ptx", no_argument, NULL, 'P'},
      {"no-daemon", no_argument, NULL, 'D'},
      {NULL, 0, NULL, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (ch) {
    case 'd': setenv("TEENYCD_BIN", optarg, 1); break;
    case 't': o.timeout_s = atoi(optarg); break;
    case 'c': o.cap_s = atoi(optarg); break;
    case 'o': o.only = optarg; break;
    case 'P': o.ptx = false; break;
    case 'D': o.daemon = false; break;
    default:
      fprintf(stderr, "usage: teeny_bench_hostile [--teenycd PATH] "
                      "[--timeout S] [--cap S] [--only NAME] [--no-ptx] "
                      "[--no-daemon]\n");
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  tdaemon d;
  memset(&d, 0, sizeof d);
  char tbuf[32];
  snprintf(tbuf, sizeof tbuf, "%ds", o.timeout_s);
  const char *args[] = {"--compile-timeout", tbuf, "--workers", "2",
                        "--log-level", "info", NULL};
  long rss0 = 0;
  if (o.daemon) {
    if (td_init(&d) || td_start(&d, args, NULL)) {
      fprintf(stderr, "cannot start teenycd (set --teenycd or TEENYCD_BIN)\n");
      return 1;
    }
    rss0 = status_kb(d.pid, "VmRSS");
  }
  result base;
  memset(&base, 0, sizeof base);
  {
    const hostile_case *hc = hostile_find("long_loop"); /* a tiny source */
    run_stage(hc, ST_SPEC, 0, &base);
  }
  printf("| case | shape | spec (in teenycd) | IR (front end + irgen) | PTX, "
         "library, no deadline | teenycd, --compile-timeout %d s | teenycd "
         "RSS after (peak) |\n",
         o.timeout_s);
  printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  printf("| (baseline: a small kernel) | | %.1f ms, %.0f MiB | | | | %.0f MiB "
         "at start |\n",
         base.ms, base.mib, (double)rss0 / 1024);
  int bad = 0;
  for (size_t i = 0; i < hostile_ncases; i++) {
    const hostile_case *hc = &hostile_cases[i];
    if (o.only && strcmp(o.only, hc->name) != 0)
      continue;
    result rs, ri, rp, rd;
    char cs[96], ci[96], cp[96] = "-", cd[160] = "-", cr[64] = "-";
    run_stage(hc, ST_SPEC, 0, &rs);
    bad += !check("spec", hc, hc->want_spec, &rs);
    run_stage(hc, ST_IR, 0, &ri);
    bad += !check("ir", hc, hc->want_ir, &ri);
    cell(cs, sizeof cs, &rs, true);
    cell(ci, sizeof ci, &ri, true);
    if (o.ptx && !ri.rc) {
      run_stage(hc, ST_PTX, o.cap_s, &rp);
      cell(cp, sizeof cp, &rp, true);
      if (rp.rc && !rp.capped)
        snprintf(cp + strlen(cp), sizeof cp - strlen(cp), ": %.40s", rp.msg);
    }
    if (o.daemon) {
      long rss, hwm;
      run_daemon(hc, &d, &rd, &rss, &hwm);
      bad += !check("daemon", hc, hc->want_daemon, &rd);
      snprintf(cd, sizeof cd, "%s in %.2f s%s%.60s",
               rd.rc ? sname(rd.rc) : "ok", rd.ms / 1e3, rd.rc ? ": " : "",
               rd.rc ? rd.msg : "");
      snprintf(cr, sizeof cr, "%.0f MiB (%.0f MiB)", (double)rss / 1024,
               (double)hwm / 1024);
    }
    printf("| %s | %s | %s | %s | %s | %s | %s |\n", hc->name, hc->what, cs,
           ci, cp, cd, cr);
    fflush(stdout);
  }
  if (o.daemon) {
    if (td_stop(&d) != 0)
      fprintf(stderr, "teenycd did not stop cleanly\n"), bad++;
    td_fini(&d, bad != 0);
  }
  printf("\n%d unexpected answer(s)\n", bad);
  return bad ? 1 : 0;
}
