/*
 * client/kernel.c — teeny_kernel, the runtime under the typed kernels that
 * teenyc-gen writes.  A generated `name_kernel` struct embeds one as
 * `base`: the generated code fills the request (source, kernel name,
 * bindings from the typed consts struct), and this file turns it into an
 * id, a key and a generated source (teeny_kernel_prepare), a compiled
 * result (teeny_kernel_compile, through any client mode) and launches
 * (teeny_kernel_launch, loading the module on first use).
 *
 * entry_point_source is the tail of the generated source after the
 * compiler's "generated entry point" marker (dsl/spec.c writes it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "teeny/client.h"

#define ENTRY_MARKER "/* ---- generated entry point ---- */\n"

static int kerr(teeny_kernel *k, int rc, const char *what, const char *detail) {
  int n = snprintf(k->err, sizeof k->err, "%s: %s%s%s",
                   k->req.kernel ? k->req.kernel : "kernel", what,
                   detail ? ": " : "", detail ? detail : "");
  if (n >= (int)sizeof k->err) /* a long detail is cut; mark the cut */
    memcpy(k->err + sizeof k->err - 4, "...", 4);
  return rc;
}

/* The first error of d as "file:line:col: message" (or NULL). */
static const char *first_diag(const teeny_diag *v, size_t n, char *buf, size_t size) {
  for (size_t i = 0; i < n; i++) {
    if (v[i].level != TEENY_DIAG_ERROR)
      continue;
    if (v[i].line)
      snprintf(buf, size, "%s:%d:%d: %s", v[i].file, v[i].line, v[i].col, v[i].message);
    else
      snprintf(buf, size, "%s", v[i].message);
    return buf;
  }
  return NULL;
}

static void drop_compiled(teeny_kernel *k) {
  teeny_module_unload(k->module);
  k->module = NULL;
  teeny_client_result_free(k->result);
  k->result = NULL;
}

void teeny_kernel_close(teeny_kernel *k) {
  if (!k)
    return;
  drop_compiled(k);
  teeny__free(k->id);
  teeny__free(k->source);
  k->id = k->source = NULL;
  k->entry_point_source = NULL;
  k->key[0] = '\0';
}

static const char *entry_of(const char *src) {
  const char *at = NULL;
  for (const char *p = src; (p = strstr(p, ENTRY_MARKER)); p++)
    at = p;
  return at ? at + strlen(ENTRY_MARKER) : src + strlen(src);
}

int teeny_kernel_prepare(teeny_kernel *k) {
  teeny_kernel_close(k);
  k->req.dtypes = k->dtypes;
  k->req.consts = k->consts;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *spec = NULL;
  int rc = teeny_spec_create(&k->req, &spec, &d);
  if (rc) {
    char buf[TEENY_KERNEL_ERR_LEN];
    kerr(k, rc, teeny_strerror(rc), first_diag(d.v, d.n, buf, sizeof buf));
    goto done;
  }
  size_t len;
  const char *src = teeny_spec_source(spec, &len);
  k->id = teeny__strdup(teeny_spec_id(spec));
  k->source = teeny__strndup(src, len);
  if (!k->id || !k->source) {
    rc = kerr(k, TEENY_E_NOMEM, "out of memory", NULL);
    teeny_kernel_close(k);
    goto done;
  }
  snprintf(k->key, sizeof k->key, "%s", teeny_spec_key(spec));
  k->entry_point_source = entry_of(k->source);
  k->err[0] = '\0';
done:
  teeny_spec_destroy(spec);
  teeny_diags_close(&d);
  return rc;
}

int teeny_kernel_set_options(teeny_kernel *k, const char *target, int num_warps) {
  k->req.target = target;
  k->req.num_warps = num_warps;
  return teeny_kernel_prepare(k);
}

int teeny_kernel_compile(teeny_kernel *k, teeny_client *c) {
  if (k->result)
    return 0;
  if (!k->id)
    return kerr(k, TEENY_E_INVAL, "not prepared", "call its _init first");
  teeny_client_result *r = NULL;
  int rc = teeny_client_compile(c, &k->req, TEENY_EMIT_PTX, &r);
  if (rc) {
    char buf[TEENY_KERNEL_ERR_LEN];
    const char *d = r ? first_diag(r->diags, r->ndiags, buf, sizeof buf) : NULL;
    kerr(k, rc, "compile failed", d ? d : teeny_client_errmsg(c));
    teeny_client_result_free(r);
    return rc;
  }
  k->result = r;
  return 0;
}

int teeny_kernel_launch(teeny_kernel *k, teeny_grid grid, void *stream, void **args,
                        size_t nargs) {
  if (!k->result)
    return kerr(k, TEENY_E_INVAL, "not compiled", "call its _compile first");
  if (nargs != k->result->art.nparams) {
    char why[96];
    snprintf(why, sizeof why, "%zu arguments packed, the entry point takes %zu", nargs,
             k->result->art.nparams);
    return kerr(k, TEENY_E_INVAL, "launch", why);
  }
  const teeny_artifact *a = &k->result->art;
  for (size_t i = 0; i < nargs; i++) { /* kernels assume it of every pointer (docs/dsl.md) */
    uint64_t addr;
    if (a->params[i].kind != TEENY_PARAM_POINTER || !args[i])
      continue;
    memcpy(&addr, args[i], sizeof addr);
    if (addr % 16) {
      char why[TEENY_MAX_NAME_LEN + 96];
      snprintf(why, sizeof why, "%s = 0x%llx is not 16-byte aligned, as kernels assume every "
               "pointer argument is", a->params[i].name, (unsigned long long)addr);
      return kerr(k, TEENY_E_INVAL, "launch", why);
    }
  }
  int rc = 0;
  if (!k->module &&
      (rc = teeny_module_load_result(k->result, &k->module, k->err, sizeof k->err)))
    return rc; /* the cubin for this GPU when teenycd has one, else the PTX */
  const unsigned g[3] = {grid.x, grid.y, grid.z};
  return teeny_launch(k->module, g, stream, args, k->err, sizeof k->err);
}

/* ---- scalar arguments of generic dtype ------------------------------------------ */

static uint16_t f16_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (exp == 0xff)
    return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) { /* subnormal or zero: shift with rounding to nearest even */
    if (e < -10)
      return (uint16_t)sign;
    man |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    half += rem > mid || (rem == mid && (half & 1));
    return (uint16_t)(sign | half);
  }
  uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  h += rem > 0x1000u || (rem == 0x1000u && (h & 1)); /* may carry into exp: ok */
  return (uint16_t)h;
}

static uint16_t bf16_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (isnan(f))
    return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

void *teeny_scalar_pack(teeny_scalar_slot *s, teeny_dtype dt, double v) {
  memset(s, 0, sizeof *s);
  switch (dt) {
  case TEENY_DT_BOOL: s->b = v != 0; break;
  case TEENY_DT_I8: s->i8 = (int8_t)v; break;
  case TEENY_DT_I16: s->i16 = (int16_t)v; break;
  case TEENY_DT_I32: s->i32 = (int32_t)v; break;
  case TEENY_DT_I64: s->i64 = (int64_t)v; break;
  case TEENY_DT_U8: s->u8 = (uint8_t)v; break;
  case TEENY_DT_U16: s->u16 = (uint16_t)v; break;
  case TEENY_DT_U32: s->u32 = (uint32_t)v; break;
  case TEENY_DT_U64: s->u64 = (uint64_t)v; break;
  case TEENY_DT_F16: s->half = f16_bits((float)v); break;
  case TEENY_DT_BF16: s->half = bf16_bits((float)v); break;
  case TEENY_DT_F64: s->f64 = v; break;
  case TEENY_DT_F8E4M3:
  case TEENY_DT_F8E5M2: s->u8 = teeny__fp8_bits(dt, v); break;
  default: s->f32 = (float)v; break;
  }
  return s;
}
