/*
 * client/embedded_api.h — the one interface between libteenyc-client (thin:
 * no LLVM, no SQLite) and libteenyc-embedded (the compiler's NVPTX back end
 * and the store, for embedded and offline modes).
 *
 * libteenyc-embedded exports a single symbol, teeny_embedded_api_v1, a
 * constant table of the functions below; the thin client finds it on first
 * need (client/embedded_load.c: dlopen, or a direct reference in the static
 * library, which folds both in).  Both libraries are linked from the same
 * objects of one build, so the compiler's structures (teeny_ctx, tile IR)
 * and the public ones (teeny_artifact, teeny_diags) may cross: the loader
 * refuses a table whose abi, version or compiler build id differs from the
 * client's own.  Memory crossing the boundary comes from teeny__malloc (the
 * C library's malloc) on both sides, so either side may free it.
 */
#ifndef TEENY_CLIENT_EMBEDDED_API_H
#define TEENY_CLIENT_EMBEDDED_API_H

#include <stddef.h>
#include <stdint.h>

#include "teeny/client.h"

/* Bump on any change to the table or to what crosses it. */
#define TEENY__EMBEDDED_ABI 1
/* The exported table's name (dlsym) and the library's soname. */
#define TEENY__EMBEDDED_SYMBOL "teeny_embedded_api_v1"
#define TEENY__EMBEDDED_SONAME "libteenyc-embedded.so.0"

struct teeny_ctx;
struct teeny_ir_func;
struct teeny_codegen_opts;
struct teeny_codegen_out;

/* An embedded store (a teeny_store opened for sharing with its owner). */
typedef struct teeny__estore teeny__estore;

/* What one in-process compile produced. */
typedef struct teeny__eresult {
  int status;              /* 0, or the request's negative teeny_err */
  teeny_artifact *art;     /* status 0: owned by the caller
                              (teeny_artifact_destroy) */
  teeny_client_cache cache;/* TEENY_CLIENT_MISS or TEENY_CLIENT_DISK */
  teeny_diags diags;       /* errors (status < 0) or warnings; the caller
                              closes them */
} teeny__eresult;

typedef struct teeny__embedded_api {
  uint32_t abi;            /* TEENY__EMBEDDED_ABI */
  const char *version;     /* TEENY_VERSION_STRING */
  const char *build_id;    /* TEENY_COMPILER_BUILD_ID */

  /* Open the store at root (NULL: the environment's) for embedded use:
   * it writes only what the store's owner could still manage, else it
   * opens read-only (estore_readonly says why).  Returns 0 or a teeny_err
   * with err set; *out is NULL on failure. */
  int (*estore_open)(teeny__estore **out, const char *root, char *err,
                     size_t errsz);
  void (*estore_close)(teeny__estore *s); /* NULL is a no-op */
  const char *(*estore_root)(const teeny__estore *s);
  /* NULL when embedded puts may write; else one line saying why not. */
  const char *(*estore_readonly)(const teeny__estore *s);

  /* Compile req for emit (TEENY_EMIT_* | TEENY_CLIENT_FORCE) in process:
   * with s non-NULL, look the key up first and put a fresh compile (a
   * failed or refused put is a warning diagnostic).  Fills *out, whose
   * status is the request's outcome (TEENY_E_NOMEM included); returns 0. */
  int (*compile)(teeny__estore *s, const teeny_compile_req *req,
                 unsigned emit, teeny__eresult *out);

  /* The NVPTX code generator itself (dsl/nvptx/nvptx.h's
   * teeny__codegen_ptx), for teeny_spec_compile called on the thin
   * client's own front end. */
  int (*codegen_ptx)(struct teeny_ctx *cx, const struct teeny_ir_func *f,
                     const struct teeny_codegen_opts *o,
                     struct teeny_codegen_out *out);
} teeny__embedded_api;

/* The table, or NULL with the reason in err (errsz bytes): the library
 * could not be found or loaded, or belongs to another build.  Loads it at
 * the first call (pthread_once); later calls return the same answer. */
const teeny__embedded_api *teeny__embedded_get(char *err, size_t errsz);

#endif /* TEENY_CLIENT_EMBEDDED_API_H */
