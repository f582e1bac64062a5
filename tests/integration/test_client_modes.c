/*
 * tests/integration/test_client_modes.c — how libteenyc-client finds its
 * way: the thin library maps no compiler until one is needed (daemon mode
 * never loads libteenyc-embedded or LLVM, /proc/self/maps says), socket
 * discovery ($TEENYCD_SOCKET, the per-user socket, the system socket; the
 * first that answers; what was tried and why each failed), and auto
 * mode's fallback and its one notice.
 *
 * Run by client_itest (test_client.c's table), against the real teenycd.
 */
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/client.h"
#include "tests/integration/itest.h"

/* An example kernel's request (D and BLOCK_SIZE bound); src is owned. */
typedef struct kreq {
  teeny_compile_req req;
  teeny_dtype_binding dt;
  teeny_const_binding ct;
  char *src;
} kreq;

static int kreq_init(kreq *k, const char *kernel, const char *dtype, int64_t block) {
  size_t len;
  memset(k, 0, sizeof *k);
  if (!(k->src = tc_kernel_source(kernel, &len)))
    return -1;
  k->dt = (teeny_dtype_binding){"D", dtype};
  k->ct = (teeny_const_binding){"BLOCK_SIZE", block};
  k->req = (teeny_compile_req){.source = k->src, .source_len = len, .filename = kernel,
                               .kernel = kernel, .dtypes = &k->dt, .ndtypes = 1,
                               .consts = &k->ct, .nconsts = 1};
  return 0;
}

/* A client of mode on socket (NULL: discovery); NULL if open fails. */
static teeny_client *open_client(teeny_client_mode mode, const char *socket) {
  teeny_client_opts o = {.mode = mode, .socket_path = socket, .memo_entries = -1,
                         .timeout_ms = 60000, .client_name = "client_itest/modes"};
  teeny_client *c = NULL;
  if (teeny_client_open(&c, &o) == 0)
    return c;
  fprintf(stderr, "open: %s\n", teeny_client_errmsg(c));
  teeny_client_close(c);
  return NULL;
}

/* Is a file whose path contains needle mapped into this process? */
static bool mapped(const char *needle) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f))
    found = strstr(line, needle) != NULL;
  if (f)
    fclose(f);
  return found;
}

int it_client_thin_maps(void); /* run by test_client.c's main */
int it_client_thin_maps(void) {
  tdaemon d;
  teeny_client *c = NULL, *off = NULL;
  teeny_client_result *r = NULL;
  teeny_admin_reply *ar = NULL;
  kreq v = {0};
  bool failed = true;
  CHECK(td_init(&d) == 0 && td_start(&d, NULL, NULL) == 0);
  CHECK(kreq_init(&v, "vector_add", "f32", 256) == 0);
  CHECK(!mapped("libteenyc-embedded") && !mapped("libLLVM"));
  CHECK((c = open_client(TEENY_MODE_DAEMON, d.sock)) != NULL);
  CHECK_INT(teeny_client_compile(c, &v.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK(r->art.ptx_len > 0);
  teeny_admin_req q = {.op = TEENY_ADMIN_STATS};
  CHECK_INT(teeny_client_admin(c, &q, &ar), ==, 0);
  /* the front end runs in process without the back end: keys, typed kernels */
  teeny_spec *spec = NULL;
  CHECK_INT(teeny_spec_create(&v.req, &spec, NULL), ==, 0);
  CHECK(strcmp(teeny_spec_key(spec), r->art.key) == 0);
  teeny_spec_destroy(spec);
  CHECK(!mapped("libteenyc-embedded") && !mapped("libLLVM") && !mapped("libsqlite3"));
  /* an in-process compile loads the compiler, and only then */
  CHECK((off = open_client(TEENY_MODE_OFFLINE, NULL)) != NULL);
  CHECK(mapped("libteenyc-embedded") && mapped("libLLVM"));
  teeny_client_result_free(r);
  r = NULL;
  CHECK_INT(teeny_client_compile(off, &v.req, TEENY_EMIT_PTX, &r), ==, 0);
  CHECK_INT(r->mode, ==, TEENY_MODE_OFFLINE);
  failed = false;
fail:
  teeny_admin_reply_free(ar);
  teeny_client_result_free(r);
  teeny_client_close(c);
  teeny_client_close(off);
  free(v.src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
