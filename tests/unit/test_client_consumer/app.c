/* A minimal app on an installed teenyc: compile vector_add offline through
 * the generated typed API and print its id.  Exit 0 on success. */
#include <stdio.h>

#include "vector_add.teeny.h"

int main(void) {
  teeny_client_opts o = {.mode = TEENY_MODE_OFFLINE};
  teeny_client *c = NULL;
  vector_add_kernel k;
  int rc = teeny_client_open(&c, &o);
  if (!rc)
    rc = vector_add_init(&k, TEENY_DT_F32, (vector_add_consts){.block_size = 256});
  if (!rc)
    rc = vector_add_compile(&k, c);
  if (!rc)
    printf("%s %s\n", k.id, k.base.result->art.entry);
  else
    fprintf(stderr, "consumer: %s\n", k.base.err[0] ? k.base.err : teeny_client_errmsg(c));
  vector_add_close(&k);
  teeny_client_close(c);
  return rc ? 1 : 0;
}
