/*
 * tests/integration/it_sass.c — cubins in the store (issue 16), against the
 * real teenycd with --sass ptxas and the toolkit's real ptxas: a cold
 * request is answered with PTX and no cubin, the cubin follows in the
 * background and a later request's reply carries it; a client naming
 * sm_90 gets the sm_90 cubin and one naming sm_80 never does (each gets
 * its own where the PTX allows); a corrupt cubin in the store is found by
 * verify, never served, and made again; cubins survive a restart.
 * Skipped (77) where ptxas is missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "tests/integration/itest.h"

static const char *const va_f32[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
#define PTXAS "/usr/local/cuda/bin/ptxas"

/* ptxas from $TEENY_PTXAS, $PATH or the toolkit; NULL (skip) if none. */
static const char *find_ptxas(void) {
  const char *e = getenv("TEENY_PTXAS");
  if (e && access(e, X_OK) == 0)
    return e;
  if (access(PTXAS, X_OK) == 0)
    return PTXAS;
  fprintf(stderr, "SKIP: no ptxas (set TEENY_PTXAS or install the CUDA toolkit)\n");
  return NULL;
}

static int start(tdaemon *d, const char *ptxas) {
  const char *args[] = {"--sass", "ptxas", "--ptxas", ptxas, "--workers", "2", NULL};
  return td_start(d, args, NULL);
}

/* One vector_add compile for a GPU of arch (NULL: none) and target (NULL:
 * the default, sm_90a); *rep is the caller's to free. */
static int va_compile(tclient *c, const char *src, size_t n, const char *target,
                      const char *arch, teeny_msg_reply *rep) {
  tc_compile t;
  tc_compile_init(&t, src, n, "vector_add", va_f32);
  t.req.u.compile.req.target = target;
  t.req.u.compile.arch = arch;
  int rc = tc_call(c, &t.req, rep);
  if (!rc && rep->status)
    fprintf(stderr, "compile: %d %s\n", rep->status, rep->error ? rep->error : "");
  return rc ? rc : rep->status;
}

/* A counter of a fresh stats reply (extras included), or -1. */
static double counter(const char *sock, const char *name) {
  tclient c;
  tc_init(&c);
  teeny_msg_request q = {.op = TEENY_OP_STATS};
  teeny_msg_reply r;
  double v = -1;
  if (tc_open(&c, sock) == 0 && tc_call(&c, &q, &r) == 0) {
    if (r.status == 0)
      for (size_t i = 0; i < r.u.stats.nextra; i++)
        if (strcmp(r.u.stats.extra[i].name, name) == 0)
          v = r.u.stats.extra[i].value;
    teeny_msg_reply_free(&r);
  }
  tc_close(&c);
  return v;
}

/* Wait (up to 30 s: ptxas under a loaded machine) for the counter to reach
 * want. */
static bool wait_counter(const char *sock, const char *name, double want) {
  for (int i = 0; i < 3000; i++) {
    if (counter(sock, name) >= want)
      return true;
    usleep(10000);
  }
  fprintf(stderr, "%s stayed at %g (want %g)\n", name, counter(sock, name), want);
  return false;
}

/* The reply carries a cubin for arch whose ELF header says that SM. */
static bool has_cubin(const teeny_msg_reply *rep, const char *arch) {
  const teeny_msg_compile_reply *c = &rep->u.compile;
  if (!c->cubin) {
    fprintf(stderr, "no cubin in the reply\n");
    return false;
  }
  bool ok = strcmp(c->cubin_arch, arch) == 0 &&
            strncmp(c->cubin_toolchain, "ptxas ", 6) == 0 &&
            teeny__cubin_sm(c->cubin, c->cubin_len) == teeny__arch_parse(arch, NULL) &&
            c->art.ptx && c->art.ptx_len > 100; /* the PTX always */
  if (!ok)
    fprintf(stderr, "cubin for %s by %s, ELF sm_%d\n", c->cubin_arch,
            c->cubin_toolchain, teeny__cubin_sm(c->cubin, c->cubin_len));
  return ok;
}

/* ---- the cold request does not wait; a later one gets the cubin --------------- */

int it_sass_background(void) {
  const char *ptxas = find_ptxas();
  if (!ptxas)
    return IT_SKIP;
  tdaemon d;
  tclient c;
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  bool failed = true;
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(start(&d, ptxas) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  /* cold: compiled and answered with PTX only; the cubin is not awaited */
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK_INT(rep.u.compile.cache, ==, TEENY_CACHE_MISS);
  CHECK(rep.u.compile.cubin == NULL);
  CHECK(rep.u.compile.art.ptx != NULL);
  teeny_msg_reply_free(&rep);
  CHECK(wait_counter(d.sock, "cubins", 1));
  CHECK(wait_counter(d.sock, "sass_made", 1));
  /* the in-memory reply was forgotten: the store answers, with the cubin */
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK_INT(rep.u.compile.cache, ==, TEENY_CACHE_DISK);
  CHECK(has_cubin(&rep, "sm_90"));
  teeny_msg_reply_free(&rep);
  /* and then from memory, still with it */
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK_INT(rep.u.compile.cache, ==, TEENY_CACHE_MEMORY);
  CHECK(has_cubin(&rep, "sm_90"));
  teeny_msg_reply_free(&rep);
  /* a client that names no GPU (an old one) gets the PTX alone */
  CHECK_INT(va_compile(&c, src, n, NULL, NULL, &rep), ==, 0);
  CHECK(rep.u.compile.cubin == NULL);
  teeny_msg_reply_free(&rep);
  CHECK_INT(counter(d.sock, "sass_made"), ==, 1); /* once per key and arch */
  /* a new process after a restart: from the store, with the cubin */
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(start(&d, ptxas) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK_INT(rep.u.compile.cache, ==, TEENY_CACHE_DISK);
  CHECK(has_cubin(&rep, "sm_90"));
  teeny_msg_reply_free(&rep);
  CHECK_INT(counter(d.sock, "sass_made"), ==, 0); /* nothing made again */
  CHECK_INT(tc_verify(&c, false), ==, 0);
  failed = false;
fail:
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- which GPU gets which cubin --------------------------------------------------- */

int it_sass_arch(void) {
  const char *ptxas = find_ptxas();
  if (!ptxas)
    return IT_SKIP;
  tdaemon d;
  tclient c;
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  bool failed = true;
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(start(&d, ptxas) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  /* sm_90a PTX (the default target): an sm_90 cubin, and none for sm_80 */
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  teeny_msg_reply_free(&rep);
  CHECK(wait_counter(d.sock, "cubins", 1));
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_80", &rep), ==, 0);
  CHECK(rep.u.compile.cubin == NULL); /* sm_90a PTX cannot run there at all */
  teeny_msg_reply_free(&rep);
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK(has_cubin(&rep, "sm_90"));
  teeny_msg_reply_free(&rep);
  /* sm_80 PTX runs on both: each GPU gets its own cubin, never the other's */
  CHECK_INT(va_compile(&c, src, n, "sm_80", "sm_80", &rep), ==, 0);
  teeny_msg_reply_free(&rep);
  CHECK_INT(va_compile(&c, src, n, "sm_80", "sm_90", &rep), ==, 0);
  teeny_msg_reply_free(&rep);
  CHECK(wait_counter(d.sock, "cubins", 3));
  CHECK_INT(va_compile(&c, src, n, "sm_80", "sm_80", &rep), ==, 0);
  CHECK(has_cubin(&rep, "sm_80"));
  teeny_msg_reply_free(&rep);
  CHECK_INT(va_compile(&c, src, n, "sm_80", "sm_90", &rep), ==, 0);
  CHECK(has_cubin(&rep, "sm_90"));
  teeny_msg_reply_free(&rep);
  /* a GPU name that is not one is refused, not stored */
  CHECK_INT(va_compile(&c, src, n, NULL, "../../etc", &rep), ==, TEENY_E_INVAL);
  teeny_msg_reply_free(&rep);
  CHECK_INT(tc_verify(&c, false), ==, 0);
  failed = false;
fail:
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a corrupt cubin: found, never served, made again ------------------------------ */

/* Flip one byte in the middle of key's sm_90 cubin (same size, wrong hash). */
static int corrupt_cubin(const tdaemon *d, const char *key) {
  char path[512];
  snprintf(path, sizeof path, "%s/objects/%.2s/vector_add_%s.sm_90.cubin", d->cache,
           key, key);
  FILE *f = fopen(path, "r+");
  if (!f)
    return -1;
  fseek(f, 200, SEEK_SET);
  int ch = fgetc(f);
  fseek(f, 200, SEEK_SET);
  fputc(ch ^ 0x5a, f);
  return fclose(f);
}

int it_sass_corrupt(void) {
  const char *ptxas = find_ptxas();
  if (!ptxas)
    return IT_SKIP;
  tdaemon d;
  tclient c;
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  bool failed = true;
  size_t n;
  char *src = tc_kernel_source("vector_add", &n), key[65] = "", *good = NULL;
  size_t good_len = 0;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(start(&d, ptxas) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  memcpy(key, rep.u.compile.art.key, 65);
  teeny_msg_reply_free(&rep);
  CHECK(wait_counter(d.sock, "cubins", 1));
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK(has_cubin(&rep, "sm_90"));
  good_len = rep.u.compile.cubin_len;
  CHECK((good = malloc(good_len)) != NULL);
  memcpy(good, rep.u.compile.cubin, good_len);
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(corrupt_cubin(&d, key) == 0);
  CHECK(start(&d, ptxas) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(tc_verify(&c, false), ==, 1); /* verify sees it */
  /* get sees it too: the reply has no cubin (never a corrupt one), the bad
   * one is dropped and made again in the background */
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK_INT(rep.u.compile.cache, ==, TEENY_CACHE_DISK);
  CHECK(rep.u.compile.cubin == NULL);
  teeny_msg_reply_free(&rep);
  CHECK(wait_counter(d.sock, "sass_made", 1));
  CHECK_INT(tc_verify(&c, false), ==, 0);
  CHECK_INT(va_compile(&c, src, n, NULL, "sm_90", &rep), ==, 0);
  CHECK(has_cubin(&rep, "sm_90"));
  CHECK_INT(rep.u.compile.cubin_len, ==, good_len); /* ptxas is deterministic */
  CHECK(memcmp(rep.u.compile.cubin, good, good_len) == 0);
  teeny_msg_reply_free(&rep);
  failed = false;
fail:
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  free(src);
  free(good);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
