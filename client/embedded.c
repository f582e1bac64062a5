/*
 * client/embedded.c — compiling in process (embedded and offline modes).
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
 * someone else is a success.  Embedded clients never take the daemon lock
 * and never evict (the daemon enforces the size cap); their hits are
 * recorded as uses in batches.  Offline mode is the same without a store.
 */
#include <stdio.h>
#include <string.h>

#include "client/client_int.h"

/* Uses recorded in memory before they are written to the index in one
 * transaction (and at close), so the daemon's LRU sees embedded hits. */
#define TOUCH_BATCH 32

int teeny__embedded_open(teeny_store **out, const char *root, char *err,
                         size_t errsz) {
  teeny_store_opts o = {.root = root};
  char serr[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_create(&o, out, serr);
  if (rc)
    return teeny__seterr(err, errsz, rc, "cannot open the store: %s", serr);
  return 0;
}

/* Answer from the store if key is there.  Returns true with c filled. */
static bool from_store(teeny_store *s, const teeny_spec *spec, unsigned emit,
                       teeny__core *c) {
  char err[TEENY_STORE_ERR_LEN];
  const char *key = teeny_spec_key(spec);
  unsigned what = teeny_store_get_for_emit(emit, TEENY_EMIT_SOURCE);
  if (teeny_store_get(s, key, what, &c->rec, err) != 0)
    return false; /* not there, or unreadable: compile it afresh */
  teeny_store_touch(s, key);
  if (teeny_store_pending(s) >= TOUCH_BATCH) /* keep last-used fresh for LRU */
    teeny_store_flush(s, err);
  teeny__core_from_rec(c, emit, TEENY_MODE_EMBEDDED);
  return true;
}

/* A store failure does not fail a compile that worked: say so instead. */
static void put_warning(teeny__core *c, const char *file, int rc, const char *err) {
  char msg[TEENY_STORE_ERR_LEN + 96];
  snprintf(msg, sizeof msg, "not cached: the store refused the artifact (%s: %s)",
           teeny_err_name(rc), err);
  teeny_diags_add(&c->diags, TEENY_DIAG_WARNING, file ? file : "<source>", 0, 0,
                  NULL, msg);
}

static int compile_fresh(teeny_store *s, const teeny_compile_req *req,
                         const teeny_spec *spec, unsigned emit, teeny__core *c,
                         teeny_client_mode mode) {
  /* The store keeps all three artifacts, so embedded compiles both. */
  unsigned what = s ? TEENY_EMIT_PTX | TEENY_EMIT_MLIR
                    : emit & (TEENY_EMIT_PTX | TEENY_EMIT_MLIR);
  teeny_artifact *a = NULL;
  int rc = teeny_spec_compile(spec, what, &a, &c->diags);
  if (rc)
    return rc;
  if (s) {
    char err[TEENY_STORE_ERR_LEN] = "";
    int prc = teeny_store_put(s, a, NULL, NULL, NULL, err);
    if (prc)
      put_warning(c, req->filename, prc, err);
  }
  teeny__core_from_artifact(c, a, TEENY_CLIENT_MISS, mode);
  return 0;
}

/* The message of a failed spec: its first error diagnostic, if any. */
static const char *first_error(const teeny_diags *d) {
  for (size_t i = 0; i < d->n; i++)
    if (d->v[i].level == TEENY_DIAG_ERROR)
      return d->v[i].message;
  return NULL;
}

int teeny__embedded_compile(teeny_store *store, const teeny_compile_req *req,
                            unsigned emit, teeny__core **out) {
  teeny_client_mode mode = store ? TEENY_MODE_EMBEDDED : TEENY_MODE_OFFLINE;
  teeny__core *c = teeny__core_new();
  if (!c)
    return TEENY_E_NOMEM;
  teeny_spec *spec = NULL;
  int rc = teeny_spec_create(req, &spec, &c->diags);
  bool hit = !rc && store && !(emit & TEENY_CLIENT_FORCE) &&
             from_store(store, spec, emit, c);
  if (!rc && !hit)
    rc = compile_fresh(store, req, spec, emit, c, mode);
  if (rc)
    teeny__core_set_error(c, rc, first_error(&c->diags), mode);
  teeny_spec_destroy(spec);
  *out = c;
  return 0;
}
