/*
 * common/param.c — owned copies of an entry point's parameter list
 * (teeny_param arrays, as in teeny_artifact and the store's rows): a deep
 * copy and its free, shared by the compile API, the store and the daemon.
 */
#include "common/common.h"

teeny_param *teeny__params_dup(const teeny_param *v, size_t n) {
  teeny_param *p = teeny__calloc(n + 1, sizeof *p); /* +1: never calloc(0) */
  if (!p)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    p[i] = v[i];
    p[i].name = teeny__strdup(v[i].name ? v[i].name : "");
    if (!p[i].name) {
      teeny__params_free(p, i);
      return NULL;
    }
  }
  return p;
}

void teeny__params_free(teeny_param *p, size_t n) {
  for (size_t i = 0; p && i < n; i++)
    teeny__free(p[i].name);
  teeny__free(p);
}
