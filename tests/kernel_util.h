/*
 * tests/kernel_util.h — helpers for tests that compile the example kernels
 * through the public API: reading a kernel file, building a spec from
 * "D=f32"/"BLOCK=128" strings, random numbers, f16/bf16 bit conversions.
 * Header-only (static functions) so each test links just what it needs.
 */
#ifndef TEENY_TESTS_KERNEL_UTIL_H
#define TEENY_TESTS_KERNEL_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teeny/compile.h"

/* Read the file at `rel` under $TEENY_SOURCE_DIR (NUL-terminated, caller
 * frees); exits on failure (tests only). */
static inline char *ku_read_source(const char *rel, size_t *len) {
  const char *root = getenv("TEENY_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  static char buf[1 << 20];
  *len = fread(buf, 1, sizeof buf - 1, f);
  buf[*len] = '\0';
  fclose(f);
  char *copy = malloc(*len + 1);
  memcpy(copy, buf, *len + 1);
  return copy;
}

/* Read examples/kernels/NAME.c. */
static inline char *ku_read_example(const char *name, size_t *len) {
  char rel[512];
  snprintf(rel, sizeof rel, "examples/kernels/%s.c", name);
  return ku_read_source(rel, len);
}

/* Print diagnostics to stderr (so a failing test shows why). */
static inline void ku_print_diags(const teeny_diags *d) {
  for (size_t i = 0; i < d->n; i++) {
    char buf[2048];
    teeny_diag_format(&d->v[i], buf, sizeof buf);
    fputs(buf, stderr);
  }
}

/* Spec for kernel `kernel` of source text with bindings "D=f32,BLOCK=128"
 * (names bound to integers are const bindings by value, the rest text
 * bindings: dtypes, and constants such as EPS=1e-5), for target and
 * num_warps (NULL, 0: the defaults).  Returns the error code; *out is the
 * spec on success. */
static inline int ku_spec_for(const char *src, size_t len, const char *file,
                              const char *kernel, const char *bindings, const char *target,
                              int num_warps, teeny_spec **out, teeny_diags *diags) {
  teeny_dtype_binding dts[16];
  teeny_const_binding cts[16];
  size_t nd = 0, nc = 0;
  char tmp[512];
  snprintf(tmp, sizeof tmp, "%s", bindings ? bindings : "");
  static char names[32][64], values[32][64];
  int k = 0;
  for (char *tok = strtok(tmp, ","); tok && k < 32; tok = strtok(NULL, ","), k++) {
    char *eq = strchr(tok, '=');
    if (!eq)
      continue;
    *eq = '\0';
    snprintf(names[k], 64, "%s", tok);
    snprintf(values[k], 64, "%s", eq + 1);
    char *end;
    long long v = strtoll(values[k], &end, 10);
    if (*end == '\0' && *values[k])
      cts[nc++] = (teeny_const_binding){names[k], v};
    else
      dts[nd++] = (teeny_dtype_binding){names[k], values[k]};
  }
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.source_len = len;
  req.filename = file;
  req.kernel = kernel;
  req.dtypes = dts;
  req.ndtypes = nd;
  req.consts = cts;
  req.nconsts = nc;
  req.target = target;
  req.num_warps = num_warps;
  return teeny_spec_create(&req, out, diags);
}

/* The same for the default target and num_warps. */
static inline int ku_spec_src(const char *src, size_t len, const char *file,
                              const char *kernel, const char *bindings,
                              teeny_spec **out, teeny_diags *diags) {
  return ku_spec_for(src, len, file, kernel, bindings, NULL, 0, out, diags);
}

/* ---- random numbers: xorshift64*, seeded per test run ----------------------- */

typedef struct ku_rng {
  uint64_t s;
} ku_rng;

static inline uint64_t ku_next(ku_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * UINT64_C(2685821657736338717);
}

/* Uniform in [-1, 1). */
static inline float ku_uniform(ku_rng *r) {
  return (float)((double)(ku_next(r) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline int ku_range(ku_rng *r, int lo, int hi) {
  return lo + (int)(ku_next(r) % (uint64_t)(hi - lo));
}

/* f32 rounded to TF32 (10 mantissa bits, to nearest, ties away from zero):
 * what an f32 dot's operands become under the default prec_tf32. */
static inline double ku_tf32(double v) {
  float x = (float)v;
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u)
    u = (u + 0x1000u) & 0xffffe000u;
  memcpy(&x, &u, 4);
  return x;
}

/* ---- half precision bits ----------------------------------------------------- */

static inline float ku_f16_to_f32(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  float v;
  if (exp == 0)
    v = ldexpf((float)mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = ldexpf((float)(mant | 1024), exp - 25);
  return sign ? -v : v;
}

/* Round-to-nearest-even float -> f16 bits (via a double computation). */
static inline uint16_t ku_f32_to_f16(float f) {
  if (isnan(f))
    return 0x7e00;
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  double a = fabs((double)f);
  if (a == 0)
    return sign;
  int e;
  frexp(a, &e);
  int lead = e - 1 < -14 ? -14 : e - 1;
  double q = ldexp(1.0, lead - 10);
  double r = nearbyint(a / q) * q;
  if (r > 65504.0)
    return sign | 0x7c00;
  if (r < ldexp(1.0, -14)) /* subnormal */
    return sign | (uint16_t)(r / ldexp(1.0, -24));
  int ex;
  double m = frexp(r, &ex); /* r = m * 2^ex, m in [0.5, 1) */
  return sign | (uint16_t)((ex - 1 + 15) << 10) | (uint16_t)((m * 2048.0) - 1024.0);
}

static inline float ku_bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline uint16_t ku_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f))
    return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

/* ---- typed host buffers -------------------------------------------------------- */

/* Store v into element i of a buffer of dtype dt. */
static inline void ku_put(void *buf, teeny_dtype dt, size_t i, double v) {
  switch (dt) {
  case TEENY_DT_F32: ((float *)buf)[i] = (float)v; break;
  case TEENY_DT_F64: ((double *)buf)[i] = v; break;
  case TEENY_DT_F16: ((uint16_t *)buf)[i] = ku_f32_to_f16((float)v); break;
  case TEENY_DT_BF16: ((uint16_t *)buf)[i] = ku_f32_to_bf16((float)v); break;
  case TEENY_DT_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
  case TEENY_DT_U32: ((uint32_t *)buf)[i] = (uint32_t)(int64_t)v; break;
  case TEENY_DT_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
  case TEENY_DT_U64: ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
  case TEENY_DT_I16: ((int16_t *)buf)[i] = (int16_t)v; break;
  case TEENY_DT_U16: ((uint16_t *)buf)[i] = (uint16_t)(int64_t)v; break;
  case TEENY_DT_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
  case TEENY_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)(int64_t)v; break;
  case TEENY_DT_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
  default: abort();
  }
}

static inline double ku_get(const void *buf, teeny_dtype dt, size_t i) {
  switch (dt) {
  case TEENY_DT_F32: return ((const float *)buf)[i];
  case TEENY_DT_F64: return ((const double *)buf)[i];
  case TEENY_DT_F16: return ku_f16_to_f32(((const uint16_t *)buf)[i]);
  case TEENY_DT_BF16: return ku_bf16_to_f32(((const uint16_t *)buf)[i]);
  case TEENY_DT_I32: return ((const int32_t *)buf)[i];
  case TEENY_DT_U32: return ((const uint32_t *)buf)[i];
  case TEENY_DT_I64: return (double)((const int64_t *)buf)[i];
  case TEENY_DT_U64: return (double)((const uint64_t *)buf)[i];
  case TEENY_DT_I16: return ((const int16_t *)buf)[i];
  case TEENY_DT_U16: return ((const uint16_t *)buf)[i];
  case TEENY_DT_I8: return ((const int8_t *)buf)[i];
  case TEENY_DT_U8: return ((const uint8_t *)buf)[i];
  case TEENY_DT_BOOL: return ((const uint8_t *)buf)[i];
  default: abort();
  }
}

/* Relative error ||a - b|| / ||b|| over n values. */
static inline double ku_rel_err(const double *a, const double *b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  if (isnan(num))
    return INFINITY;
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

#endif
