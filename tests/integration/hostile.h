/*
 * tests/integration/hostile.h — hostile kernels: sources built to hit
 * every resource limit of the compiler (docs/dsl.md §7) or to make a legal
 * kernel as expensive as possible.  Shared by bench/hostile.c (which
 * measures time and peak memory of each through the library and through
 * teenycd) and the integration test hostile_kernels (a bounded run through
 * the daemon).
 *
 * Each case says what each stage must answer: teeny_spec_create (what the
 * daemon runs in-process), teeny_spec_compile with MLIR only (the front
 * end plus the IR generator), and the daemon with a short
 * --compile-timeout (PTX included, so legal-but-huge kernels end as
 * TEENY_E_TIMEOUT).  want_msg is a substring of the first error.
 */
#ifndef TEENY_TESTS_HOSTILE_H
#define TEENY_TESTS_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hostile_case {
  const char *name;               /* short name */
  const char *what;               /* the shape, one line */
  char *(*gen)(size_t *len);      /* the source (malloc; free it) */
  const char *kernel;             /* kernel to compile */
  const char *bindings[4];        /* "D=f32" style, NULL-terminated */
  int num_warps;                  /* 0: default */
  int want_spec;                  /* status of teeny_spec_create */
  int want_ir;                    /* ... then teeny_spec_compile(MLIR) */
  int want_daemon;                /* through teenycd (short timeout) */
  const char *want_msg;           /* substring of the error (or NULL) */
  bool big;                       /* a ~1 MiB source */
} hostile_case;

extern const hostile_case hostile_cases[];
extern const size_t hostile_ncases;

/* The framed compile request for hc with source src[0..n), encoded by
 * hand (msgpack-c), so that limits the C encoder enforces (1 MiB of
 * source) can be sent to the daemon.  *out is malloc'ed.  0 or -1. */
int hostile_frame(const hostile_case *hc, const char *src, size_t n,
                  uint64_t id, char **out, size_t *len);

/* A case by name, or NULL. */
const hostile_case *hostile_find(const char *name);

#endif /* TEENY_TESTS_HOSTILE_H */
