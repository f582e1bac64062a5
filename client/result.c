/*
 * client/result.c — compile results.
 *
 * A result's memory lives in a reference-counted core: the decoded reply
 * (daemon mode: the artifact's strings point into the reply's own memory,
 * nothing is copied) or a teeny_artifact made in process (compiled, or
 * read from the store, by libteenyc-embedded).  The
 * memo holds one reference; every teeny_client_result handed to a caller
 * is a small wrapper with its own copy of the public fields (so a memo hit
 * can say "memo" without touching the shared core) and one reference.
 * Cores are immutable once built, so wrappers may be read from any thread.
 */
#include <string.h>

#include "client/client_int.h"

/* What a caller gets: the public fields first, so the pointer converts. */
typedef struct wrapper {
  teeny_client_result pub; /* must stay first */
  teeny__core *core;       /* the shared memory, one reference */
} wrapper;

teeny__core *teeny__core_new(void) {
  teeny__core *c = teeny__calloc(1, sizeof *c);
  if (!c)
    return NULL;
  atomic_init(&c->refs, 1);
  teeny_diags_init(&c->diags);
  return c;
}

void teeny__core_ref(teeny__core *c) {
  atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void teeny__core_unref(teeny__core *c) {
  if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
    return;
  teeny_msg_reply_free(&c->reply);
  teeny_artifact_destroy(c->art);
  teeny_diags_close(&c->diags);
  teeny__free(c->error);
  teeny__free(c);
}

static teeny_client_cache cache_of(teeny_msg_cache m) {
  switch (m) {
  case TEENY_CACHE_MEMORY: return TEENY_CLIENT_MEMORY;
  case TEENY_CACHE_DISK: return TEENY_CLIENT_DISK;
  case TEENY_CACHE_JOINED: return TEENY_CLIENT_JOINED;
  default: return TEENY_CLIENT_MISS;
  }
}

void teeny__core_from_reply(teeny__core *c, unsigned emit) {
  teeny_client_result *p = &c->pub;
  const teeny_msg_reply *r = &c->reply;
  p->status = r->status;
  p->error = r->status ? (r->error ? r->error : teeny_strerror(r->status)) : NULL;
  p->diags = r->diags;
  p->ndiags = r->ndiags;
  p->mode = TEENY_MODE_DAEMON;
  c->emit = emit & (TEENY_EMIT_PTX | TEENY_EMIT_MLIR | TEENY_EMIT_SOURCE);
  if (r->status)
    return;
  p->art = r->u.compile.art;
  p->cache = cache_of(r->u.compile.cache);
  p->compile_ms = (double)p->art.compile_ns / 1e6;
  p->cubin = r->u.compile.cubin; /* in the reply's memory, like the PTX */
  p->cubin_len = r->u.compile.cubin_len;
  p->cubin_arch = r->u.compile.cubin_arch;
  p->cubin_toolchain = r->u.compile.cubin_toolchain;
}

void teeny__core_from_eresult(teeny__core *c, teeny__eresult *e,
                              teeny_client_mode mode) {
  teeny_diags_close(&c->diags);
  c->diags = e->diags;
  teeny_diags_init(&e->diags);
  c->art = e->art;
  e->art = NULL;
  c->pub.mode = mode;
  c->pub.diags = c->diags.v;
  c->pub.ndiags = c->diags.n;
  if (!c->art)
    return;
  const teeny_artifact *a = c->art;
  c->pub.art = *a;
  c->pub.cache = e->cache;
  c->pub.compile_ms = (double)a->compile_ns / 1e6;
  c->emit = (a->source ? TEENY_EMIT_SOURCE : 0) | (a->ptx ? TEENY_EMIT_PTX : 0) |
            (a->mlir ? TEENY_EMIT_MLIR : 0);
}

int teeny__core_set_error(teeny__core *c, int status, const char *msg,
                          teeny_client_mode mode) {
  teeny__free(c->error);
  c->error = teeny__strdup(msg ? msg : teeny_strerror(status));
  c->pub.status = status;
  c->pub.error = c->error ? c->error : teeny_strerror(status);
  c->pub.mode = mode;
  c->pub.diags = c->diags.v;
  c->pub.ndiags = c->diags.n;
  return status;
}

teeny_client_result *teeny__result_wrap(teeny__core *c, int cache) {
  wrapper *w = teeny__malloc(sizeof *w);
  if (!w)
    return NULL;
  w->pub = c->pub;
  if (cache >= 0)
    w->pub.cache = (teeny_client_cache)cache;
  w->core = c;
  teeny__core_ref(c);
  return &w->pub;
}

void teeny_client_result_free(teeny_client_result *r) {
  if (!r)
    return;
  wrapper *w = (wrapper *)r;
  teeny__core_unref(w->core);
  teeny__free(w);
}

const char *teeny_client_cache_name(teeny_client_cache c) {
  static const char *const names[] = {"miss", "memory", "disk", "joined", "memo"};
  return (unsigned)c < TEENY_ARRAY_LEN(names) ? names[c] : "unknown";
}
