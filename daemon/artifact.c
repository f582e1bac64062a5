/*
 * daemon/artifact.c — an owned copy of an artifact view: what a decoded
 * helper reply or remote entry points into becomes a teeny_artifact of its
 * own (teeny_artifact_destroy frees it).  Once per compile or fetch.
 */
#include <string.h>

#include "daemon/helper.h"

static char *dup_bytes(const char *s, size_t n) {
  if (!s)
    return NULL;
  char *d = teeny__malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

teeny_artifact *teeny__artifact_copy(const teeny_artifact *v) {
  teeny_artifact *a = teeny__calloc(1, sizeof *a);
  if (!a)
    return NULL;
  memcpy(a->key, v->key, sizeof a->key);
  a->num_warps = v->num_warps;
  a->threads_per_block = v->threads_per_block;
  a->shared_bytes = v->shared_bytes;
  a->compile_ns = v->compile_ns;
  a->name = teeny__strdup(v->name ? v->name : "");
  a->id = teeny__strdup(v->id ? v->id : "");
  a->entry = teeny__strdup(v->entry ? v->entry : "");
  a->target = teeny__strdup(v->target ? v->target : "");
  a->source = dup_bytes(v->source, v->source_len);
  a->source_len = v->source_len;
  a->mlir = dup_bytes(v->mlir, v->mlir_len);
  a->mlir_len = v->mlir_len;
  a->ptx = dup_bytes(v->ptx, v->ptx_len);
  a->ptx_len = v->ptx_len;
  a->params = teeny__params_dup(v->params, v->nparams);
  a->nparams = a->params ? v->nparams : 0;
  if (!a->name || !a->id || !a->entry || !a->target || !a->params ||
      (v->source && !a->source) || (v->mlir && !a->mlir) ||
      (v->ptx && !a->ptx)) {
    teeny_artifact_destroy(a);
    return NULL;
  }
  return a;
}

