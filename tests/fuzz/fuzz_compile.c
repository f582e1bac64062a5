/*
 * tests/fuzz/fuzz_compile.c — libFuzzer target for the whole compiler
 * short of LLVM: specialisation, IR generation (types, shapes, folding,
 * inlining, control flow), the IR verifier and the MLIR printer.
 *
 * Input: a first line "KERNEL NAME=VALUE..." (the request), then the kernel
 * source.  Values that parse as integers are const bindings, others dtype
 * bindings.  Besides crashes and sanitizer reports it traps on broken
 * contracts: a failure without a diagnostic, and any "internal error" (the
 * IR verifier rejecting what irgen built is our bug, whatever the input).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teeny/compile.h"

#define FUZZ_MAX_INPUT (64 * 1024)
#define MAX_BIND 8

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

typedef struct request {
  char line[256];                      /* the header line, split in place */
  char *kernel;
  teeny_dtype_binding dtypes[MAX_BIND];
  teeny_const_binding consts[MAX_BIND];
  size_t ndtypes, nconsts;
} request;

/* Parse the header line; returns the length consumed (incl. newline). */
static size_t parse_header(const unsigned char *data, size_t size, request *r) {
  memset(r, 0, sizeof *r);
  const unsigned char *nl = memchr(data, '\n', size);
  size_t n = nl ? (size_t)(nl - data) : size;
  size_t keep = n < sizeof r->line - 1 ? n : sizeof r->line - 1;
  memcpy(r->line, data, keep);
  r->line[keep] = '\0';
  char *save = NULL;
  r->kernel = strtok_r(r->line, " ", &save);
  for (char *t = strtok_r(NULL, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(t, '=');
    if (!eq)
      continue;
    *eq = '\0';
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    if (*end == '\0' && eq[1] && r->nconsts < MAX_BIND)
      r->consts[r->nconsts++] = (teeny_const_binding){t, v};
    else if (r->ndtypes < MAX_BIND)
      r->dtypes[r->ndtypes++] = (teeny_dtype_binding){t, eq + 1};
  }
  return nl ? n + 1 : size;
}

static void check_diags(const teeny_diags *d, int rc) {
  if (rc != 0 && rc != TEENY_E_NOMEM)
    CHECK(d->nerrors > 0);
  for (size_t i = 0; i < d->n; i++)
    CHECK(strstr(d->v[i].message, "internal error") == NULL);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size > FUZZ_MAX_INPUT)
    return 0;
  request r;
  size_t head = parse_header(data, size, &r);
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  req.source = (const char *)data + head;
  req.source_len = size - head;
  req.filename = "fuzz.c";
  req.kernel = r.kernel ? r.kernel : "k";
  req.dtypes = r.dtypes;
  req.ndtypes = r.ndtypes;
  req.consts = r.consts;
  req.nconsts = r.nconsts;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *spec = NULL;
  int rc = teeny_spec_create(&req, &spec, &d);
  check_diags(&d, rc);
  if (rc == 0) {
    CHECK(strlen(teeny_spec_key(spec)) == 64);
    teeny_artifact *a = NULL;
    rc = teeny_spec_compile(spec, TEENY_EMIT_MLIR, &a, &d);
    check_diags(&d, rc);
    if (rc == 0)
      CHECK(a && a->mlir && a->mlir_len > 0);
    teeny_artifact_destroy(a);
  }
  teeny_spec_destroy(spec);
  teeny_diags_close(&d);
  return 0;
}
