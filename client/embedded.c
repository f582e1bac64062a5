/*
 * client/embedded.c — compiling in process (embedded and offline modes);
 * the body of libteenyc-embedded, reached from the thin client only
 * through the table at the end of this file (client/embedded_api.h).
 *
 * Embedded mode does what teenycd does for a miss, against the same store:
 *
 *   teeny_spec_create -> key -> teeny_store_get -> hit: answer from disk
 *                                               -> else teeny_spec_compile
 *                                                  + teeny_store_put
 *
 * Safe next to a running daemon and other embedded processes: the store
 * writes files under temp names and renames them into place, and the
 * SQLite row (inserted after the rename, under SQLite's locking with a busy
 * timeout) is the commit point; a put that finds the key already stored by
 * someone else is a success.  The store is opened shared (store/share.c):
 * what this process creates stays manageable by the store's owner, or
 * nothing is written.  Embedded clients never take the daemon lock and
 * never evict (the daemon enforces the size cap); their hits are recorded
 * as uses in batches.  Offline mode is the same without a store.
 */
#include <stdio.h>
#include <string.h>

#include "client/embedded_api.h"
#include "common/common.h"
#include "dsl/nvptx/nvptx.h"
#include "store/store.h"
#include "teeny_build_id.h" /* generated: TEENY_COMPILER_BUILD_ID */

/* Uses recorded in memory before they are written to the index in one
 * transaction (and at close), so the daemon's LRU sees embedded hits. */
#define TOUCH_BATCH 32

struct teeny__estore {
  teeny_store *store; /* opened shared */
};

static int estore_open(teeny__estore **out, const char *root, char *err,
                       size_t errsz) {
  *out = NULL;
  teeny__estore *e = teeny__calloc(1, sizeof *e);
  if (!e) {
    snprintf(err, errsz, "out of memory");
    return TEENY_E_NOMEM;
  }
  teeny_store_opts o = {.root = root, .shared = true};
  char serr[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_create(&o, &e->store, serr);
  if (rc) {
    teeny__free(e);
    snprintf(err, errsz, "cannot open the store: %s", serr);
    return rc;
  }
  *out = e;
  return 0;
}

static void estore_close(teeny__estore *e) {
  if (!e)
    return;
  teeny_store_destroy(e->store);
  teeny__free(e);
}

static const char *estore_root(const teeny__estore *e) {
  return teeny_store_root(e->store);
}

static const char *estore_readonly(const teeny__estore *e) {
  return teeny_store_readonly(e->store);
}

/* The artifact of a store record, taking over its memory. */
static teeny_artifact *artifact_from_rec(teeny_store_rec *r) {
  teeny_artifact *a = teeny__calloc(1, sizeof *a);
  if (!a)
    return NULL;
  memcpy(a->key, r->key, sizeof a->key);
  a->name = r->name, r->name = NULL;
  a->id = r->id, r->id = NULL;
  a->entry = r->entry, r->entry = NULL;
  a->target = r->target, r->target = NULL;
  a->params = r->params, r->params = NULL;
  a->nparams = r->nparams, r->nparams = 0;
  a->ptx = r->ptx, r->ptx = NULL;
  a->ptx_len = a->ptx ? r->ptx_size : 0;
  a->mlir = r->mlir, r->mlir = NULL;
  a->mlir_len = a->mlir ? r->mlir_size : 0;
  a->source = r->src, r->src = NULL;
  a->source_len = a->source ? r->src_size : 0;
  a->num_warps = r->num_warps;
  a->threads_per_block = r->threads_per_block;
  a->shared_bytes = r->shared_bytes;
  a->compile_ns = (uint64_t)(r->compile_ms * 1e6);
  return a;
}

/* Answer from the store if key is there.  True with out filled. */
static bool from_store(teeny_store *s, const teeny_spec *spec, unsigned emit,
                       teeny__eresult *out) {
  char err[TEENY_STORE_ERR_LEN];
  const char *key = teeny_spec_key(spec);
  unsigned what = teeny_store_get_for_emit(emit, TEENY_EMIT_SOURCE);
  teeny_store_rec rec;
  memset(&rec, 0, sizeof rec);
  if (teeny_store_get(s, key, what, &rec, err) != 0)
    return false; /* not there, or unreadable: compile it afresh */
  out->art = artifact_from_rec(&rec);
  teeny_store_rec_close(&rec);
  if (!out->art)
    return false;
  out->cache = TEENY_CLIENT_DISK;
  teeny_store_touch(s, key);
  if (teeny_store_pending(s) >= TOUCH_BATCH) /* keep last-used fresh for LRU */
    teeny_store_flush(s, err);
  return true;
}

/* A store failure does not fail a compile that worked: say so instead. */
static void put_warning(teeny_diags *d, const char *file, int rc, const char *err) {
  char msg[TEENY_STORE_ERR_LEN + 96];
  snprintf(msg, sizeof msg, "not cached: the store refused the artifact (%s: %s)",
           teeny_err_name(rc), err);
  teeny_diags_add(d, TEENY_DIAG_WARNING, file ? file : "<source>", 0, 0, NULL, msg);
}

static int compile_fresh(teeny_store *s, const teeny_compile_req *req,
                         const teeny_spec *spec, unsigned emit,
                         teeny__eresult *out) {
  /* The store keeps all three artifacts, so embedded compiles both. */
  unsigned what = s ? TEENY_EMIT_PTX | TEENY_EMIT_MLIR
                    : emit & (TEENY_EMIT_PTX | TEENY_EMIT_MLIR);
  int rc = teeny_spec_compile(spec, what, &out->art, &out->diags);
  if (rc)
    return rc;
  if (s) {
    char err[TEENY_STORE_ERR_LEN] = "";
    int prc = teeny_store_put(s, out->art, NULL, NULL, NULL, err);
    if (prc)
      put_warning(&out->diags, req->filename, prc, err);
  }
  out->cache = TEENY_CLIENT_MISS;
  return 0;
}

static int compile(teeny__estore *e, const teeny_compile_req *req, unsigned emit,
                   teeny__eresult *out) {
  memset(out, 0, sizeof *out);
  teeny_diags_init(&out->diags);
  teeny_store *store = e ? e->store : NULL;
  teeny_spec *spec = NULL;
  int rc = teeny_spec_create(req, &spec, &out->diags);
  bool hit = !rc && store && !(emit & TEENY_CLIENT_FORCE) &&
             from_store(store, spec, emit, out);
  if (!rc && !hit)
    rc = compile_fresh(store, req, spec, emit, out);
  teeny_spec_destroy(spec);
  out->status = rc;
  return 0;
}

/* ---- the library's one export ------------------------------------------------ */

extern const teeny__embedded_api teeny_embedded_api_v1;
const teeny__embedded_api teeny_embedded_api_v1 = {
    .abi = TEENY__EMBEDDED_ABI,
    .version = TEENY_VERSION_STRING,
    .build_id = TEENY_COMPILER_BUILD_ID,
    .estore_open = estore_open,
    .estore_close = estore_close,
    .estore_root = estore_root,
    .estore_readonly = estore_readonly,
    .compile = compile,
    .codegen_ptx = teeny__codegen_ptx,
};
