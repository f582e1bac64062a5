/*
 * tests/diff/gpu.c — the GPU engine: a case's spec compiled to PTX,
 * loaded and launched through libteenyc-client's CUDA driver wrapper
 * (include/teeny/client.h, libcuda opened with dlopen), on device copies
 * of the same host buffers the interpreter got, copied back afterwards.
 * Scalars are passed as their C values (f16/bf16 as their bits); the
 * tensormap of a tensor_desc parameter is encoded as a client would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teeny/client.h"
#include "tests/diff/repro.h"
#include "tests/diff/run.h"

const char *dfz_gpu_target(char *buf, size_t size) {
  if (teeny_cuda_target(buf, size, NULL, 0) != 0)
    return NULL;
  return buf;
}

static void scalar_bits(const dfz_param *p, uint64_t *slot) {
  *slot = 0;
  if (dfz_is_float(p->dt))
    dfz_put(p->dt, slot, 0, p->fval);
  else if (p->dt == TEENY_DT_BOOL)
    dfz_put_bits(p->dt, slot, 0, p->ival != 0);
  else
    dfz_put_bits(p->dt, slot, 0, (uint64_t)p->ival);
}

/* $DFZ_GPU_PTX: a PTX file launched in place of the generated one (the
 * entry and parameters must be the same), so that hand-edited PTX can be
 * replayed against the interpreter: how tests/gpu/ptx_variants.py tells
 * which PTX forms the driver's JIT gets wrong.  Test use only. */
static int ptx_override(teeny_artifact *a, char *err, size_t errsz) {
  const char *path = getenv("DFZ_GPU_PTX");
  if (!path || !*path)
    return 0;
  char *text = dfz_read_file(path);
  if (!text || !*text) {
    snprintf(err, errsz, "DFZ_GPU_PTX: cannot read %s, or it is empty", path);
    free(text);
    return -1;
  }
  free(a->ptx);
  a->ptx = text;
  a->ptx_len = strlen(text);
  return 0;
}

/* The tensormap of the tensor_desc parameter at i, as a client encodes it
 * (teeny_tensor_desc_make): its base (param i + 1) on the device, its
 * shapes and strides from the next parameters, its block from the consts
 * the parameter's type names. */
static int encode_desc(const dfz_case *c, int i, const teeny_dptr *dp, teeny_tensor_desc *d,
                       char *err, size_t errsz) {
  const dfz_param *p = &c->params[i];
  int r = p->desc_rank, block[4];
  int64_t shape[4], strides[4];
  for (int k = 0; k < r; k++) {
    shape[k] = c->params[i + 2 + k].ival;
    strides[k] = k + 1 < r ? c->params[i + 2 + r + k].ival : 1;
    block[k] = -1;
    for (int j = 0; j < c->nconsts; j++)
      if (strcmp(c->consts[j].name, p->desc_block[k]) == 0)
        block[k] = (int)c->consts[j].value;
    if (block[k] < 0) {
      snprintf(err, errsz, "%s: no const '%s' for its block", p->name, p->desc_block[k]);
      return -1;
    }
  }
  return teeny_tensor_desc_make(d, p->dt, dp[i + 1], r, shape, strides, block, err, errsz);
}

dfz_status dfz_gpu_run(const dfz_case *c, const teeny_spec *spec, dfz_bufs *b, char *err,
                       size_t errsz) {
  teeny_artifact *a = NULL;
  teeny_module *m = NULL;
  teeny_dptr dp[DFZ_MAX_PARAMS], mem[DFZ_MAX_PARAMS]; /* dp: mem + the case's shift */
  uint64_t slots[DFZ_MAX_PARAMS];
  void *argv[DFZ_MAX_PARAMS];
  teeny_tensor_desc *descs[DFZ_MAX_PARAMS];
  dfz_status st = DFZ_OK;
  memset(dp, 0, sizeof dp);
  memset(mem, 0, sizeof mem);
  memset(descs, 0, sizeof descs);
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_compile(spec, TEENY_EMIT_PTX, &a, &d);
  if (rc) {
    int off = snprintf(err, errsz, "ptx: %s: ", teeny_strerror(rc));
    dfz_diags_text(&d, err + off, errsz > (size_t)off ? errsz - (size_t)off : 0);
    teeny_diags_close(&d);
    return rc == TEENY_E_UNSUPPORTED ? DFZ_UNSUPPORTED : DFZ_CODEGEN_ERROR;
  }
  teeny_diags_close(&d);
  if (ptx_override(a, err, errsz)) {
    st = DFZ_ENGINE_ERROR;
    goto out;
  }
  if (teeny_module_load(a, &m, err, errsz)) {
    st = DFZ_CODEGEN_ERROR;
    goto out;
  }
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    if (p->desc_rank > 0)
      continue; /* once its base is on the device */
    if (!p->is_ptr) {
      scalar_bits(p, &slots[i]);
      argv[i] = &slots[i];
      continue;
    }
    size_t shift = dfz_case_shift_bytes(c, i), bytes = shift + (b->bytes[i] ? b->bytes[i] : 1);
    if (teeny_cuda_alloc(&mem[i], bytes, err, errsz)) {
      st = DFZ_ENGINE_ERROR;
      goto out;
    }
    dp[i].addr = mem[i].addr + shift;
    if (
        teeny_cuda_to_device(dp[i], b->data[i], b->bytes[i], err, errsz)) {
      st = DFZ_ENGINE_ERROR;
      goto out;
    }
    argv[i] = &dp[i];
  }
  for (int i = 0; i < c->nparams; i++)
    if (c->params[i].desc_rank > 0) {
      if (!(descs[i] = malloc(sizeof *descs[i])) || encode_desc(c, i, dp, descs[i], err, errsz)) {
        st = DFZ_ENGINE_ERROR;
        goto out;
      }
      argv[i] = &descs[i]->map;
    }
  if (teeny_launch(m, c->grid, NULL, argv, err, errsz) || teeny_cuda_sync(err, errsz)) {
    st = DFZ_ENGINE_ERROR;
    goto out;
  }
  for (int i = 0; i < c->nparams; i++)
    if (c->params[i].is_ptr && teeny_cuda_to_host(b->data[i], dp[i], b->bytes[i], err, errsz)) {
      st = DFZ_ENGINE_ERROR;
      goto out;
    }
out:
  for (int i = 0; i < c->nparams; i++)
    if (c->params[i].is_ptr)
      teeny_cuda_free(mem[i]);
  for (int i = 0; i < c->nparams; i++)
    free(descs[i]);
  teeny_module_unload(m);
  teeny_artifact_destroy(a);
  return st;
}
