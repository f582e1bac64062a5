/*
 * examples/example.c — helpers shared by the example apps (example.h).
 * Plain and dependency-free: apps print, the library never does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example.h"

teeny_client *ex_open(const char *app) {
  teeny_client_opts o = {.client_name = app};
  teeny_client *c = NULL;
  if (teeny_client_open(&c, &o)) {
    fprintf(stderr, "%s: %s\n", app, teeny_client_errmsg(c));
    teeny_client_close(c);
    return NULL;
  }
  return c;
}

const char *ex_target(int *gpu, char *why, size_t whysz) {
  static char target[16]; /* the apps are single-threaded */
  *gpu = teeny_cuda_available(why, whysz) == 0;
  if (!*gpu)
    return NULL;
  if (teeny_cuda_target(target, sizeof target, why, whysz)) {
    *gpu = 0;
    return NULL;
  }
  return target;
}

int ex_compile(const char *app, teeny_client *c, teeny_kernel *k, int gpu, const char *why) {
  double t0 = ex_now_ms();
  if (teeny_kernel_compile(k, c)) {
    fprintf(stderr, "%s: %s\n", app, k->err);
    return -1;
  }
  double call_ms = ex_now_ms() - t0;
  const teeny_client_result *r = k->result;
  printf("%-11s %-34s key %.12s  cache %-6s  compile %8.3f ms  call %8.3f ms  via %s\n", app,
         r->art.id, r->art.key, teeny_client_cache_name(r->cache), r->compile_ms, call_ms,
         teeny_client_mode_name(r->mode));
  if (gpu)
    return 1;
  size_t n = strcspn(why, "(;"); /* the reason's first clause */
  while (n && why[n - 1] == ' ')
    n--;
  printf("%-11s no GPU here (%.*s): compile only\n", app, (int)n, why);
  return 0;
}

double ex_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void ex_random(float *x, size_t n, uint32_t seed) {
  uint32_t s = seed ? seed : 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    x[i] = (float)(s >> 8) / (float)(1u << 23) - 1.0f;
  }
}

uint16_t ex_f16(float f) {
  teeny_scalar_slot s;
  teeny_scalar_pack(&s, TEENY_DT_F16, f);
  return s.half;
}

float ex_f32(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = exp == 0    ? ldexpf((float)man, -24)
            : exp == 31 ? (man ? NAN : INFINITY)
                        : ldexpf((float)(man | 0x400), exp - 25);
  return sign ? -v : v;
}

double ex_max_rel_err(const float *a, const float *b, size_t n, double floor) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]) / fmax(fabs((double)b[i]), floor);
    if (!(d <= worst)) /* NaN counts as the worst */
      worst = isnan(d) ? INFINITY : d;
  }
  return worst;
}

void ex_report_rate(const char *app, const char *what, double units, double ms,
                    const char *unit) {
  double scale = strcmp(unit, "TFLOP/s") == 0 ? 1e12 : 1e9;
  printf("%-11s %-34s %10.1f %s  (%.3f ms per launch)\n", app, what, units / (ms / 1e3) / scale,
         unit, ms);
}

long ex_arg(int argc, char **argv, const char *name, long def) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0) {
      long v = strtol(argv[i + 1], NULL, 0);
      return v > 0 ? v : def;
    }
  return def;
}
