/*
 * bench/client.c — libteenyc-client's own costs, as an application sees
 * them: a memo hit (no round trip: the bar is <= 2 us), and a warm daemon
 * hit through the library (memo bypassed: encode, socket, decode).
 *
 *   teeny_bench_client [--socket PATH] [--calls N]
 *
 * Source: examples/kernels/vector_add.c (under $TEENY_SOURCE_DIR or .),
 * D=f32, BLOCK_SIZE=1024.  Without a reachable daemon only the memo is
 * measured (on an offline client).  Prints p50/p90/p99 per measurement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "teeny/client.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Time n compiles of req with emit; print percentiles. */
static int measure(teeny_client *c, const teeny_compile_req *req, unsigned emit, int n,
                   const char *what) {
  double *lat = malloc(sizeof *lat * (size_t)n);
  if (!lat)
    return 1;
  for (int i = 0; i < n; i++) {
    teeny_client_result *r = NULL;
    double t0 = now_ns();
    int rc = teeny_client_compile(c, req, emit, &r);
    lat[i] = now_ns() - t0;
    teeny_client_result_free(r);
    if (rc) {
      fprintf(stderr, "compile: %s\n", teeny_client_errmsg(c));
      free(lat);
      return 1;
    }
  }
  qsort(lat, (size_t)n, sizeof *lat, cmp);
  printf("%-46s p50 %8.2f us  p90 %8.2f us  p99 %8.2f us  (%d calls)\n", what,
         lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3, n);
  free(lat);
  return 0;
}

static char *read_kernel(size_t *len) {
  const char *root = getenv("TEENY_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/kernels/vector_add.c", root ? root : ".");
  FILE *f = fopen(path, "rb");
  static char buf[1 << 16];
  if (!f)
    return NULL;
  *len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  const char *sock = NULL;
  int calls = 100000;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--socket") == 0)
      sock = argv[++i];
    else if (strcmp(argv[i], "--calls") == 0)
      calls = atoi(argv[++i]);
  }
  size_t len;
  char *src = read_kernel(&len);
  if (!src || calls < 100) {
    fprintf(stderr, "usage: teeny_bench_client [--socket PATH] [--calls N>=100] "
                    "(run from the source tree or set TEENY_SOURCE_DIR)\n");
    return 2;
  }
  teeny_dtype_binding dt = {"D", "f32"};
  teeny_const_binding ct = {"BLOCK_SIZE", 1024};
  teeny_compile_req req = {.source = src, .source_len = len, .kernel = "vector_add",
                           .dtypes = &dt, .ndtypes = 1, .consts = &ct, .nconsts = 1};
  teeny_client_opts o = {.mode = TEENY_MODE_DAEMON, .socket_path = sock};
  teeny_client *c = NULL;
  bool daemon = teeny_client_open(&c, &o) == 0;
  if (!daemon) {
    printf("no daemon (%s): memo only, on an offline client\n", teeny_client_errmsg(c));
    teeny_client_close(c);
    o.mode = TEENY_MODE_OFFLINE;
    if (teeny_client_open(&c, &o))
      return 1;
  }
  int bad = measure(c, &req, TEENY_EMIT_PTX, 1, "first call (cold or daemon hit)");
  bad |= measure(c, &req, TEENY_EMIT_PTX, calls, "memo hit (no round trip; bar <= 2 us)");
  if (daemon)
    bad |= measure(c, &req, TEENY_EMIT_PTX | TEENY_CLIENT_NO_MEMO, calls / 5,
                   "daemon memory hit through the library");
  teeny_client_close(c);
  return bad;
}
