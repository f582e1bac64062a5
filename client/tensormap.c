/*
 * client/tensormap.c — the launch arguments of a tensor_desc(T, B0, ..)
 * kernel parameter: a CUtensorMap for the Tensor Memory Accelerator, then
 * the tensor's base, shapes and strides (docs/dsl.md, "Tensor
 * descriptors").
 *
 * The kernel reads its block through the TMA only where the tensor meets
 * the TMA's rules, which it tests itself from the base, shapes and strides
 * (dsl/nvptx/tma.c, `encoded`), and uses plain loads elsewhere.  This file
 * applies the same rules to the same values: it encodes the tensormap
 * (cuTensorMapEncodeTiled, resolved from the driver when first needed)
 * exactly where they hold and leaves it zero where they do not, so the two
 * sides always agree, and a tensor the TMA cannot take still works.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "client/cuda_api.h"
#include "teeny/client.h"

#define TMA_MAX_BOX 256

/* cuTensorMapEncodeTiled's enums, as the driver ABI fixes them. */
enum {
  TM_UINT8 = 0, TM_UINT16 = 1, TM_UINT32 = 2, TM_UINT64 = 4, /* CUtensorMapDataType */
  TM_INTERLEAVE_NONE = 0, TM_SWIZZLE_NONE = 0, TM_L2_128B = 2, TM_OOB_ZERO = 0
};

typedef CUresult (*encode_fn)(void *map, int dtype, unsigned rank, void *base,
                              const unsigned long long *dims,
                              const unsigned long long *strides, const unsigned *box,
                              const unsigned *estrides, int interleave, int swizzle,
                              int l2, int oob);

static int fail(char *err, size_t errsz, int rc, const char *msg) {
  if (err && errsz)
    snprintf(err, errsz, "%s", msg);
  return rc;
}

/* The kernel's test (tma.c; the base is 16-byte aligned, as the kernel
 * assumes of every pointer and teeny_tensor_desc_make checks): shapes at least 1,
 * strides multiples of 16 bytes below 2^40 and no smaller than the dim
 * they step over; and the box: dims of at most 256, rows of a multiple of
 * 16 bytes. */
static bool tma_takes(const teeny_tensor_desc *d, int es, const int *block) {
  for (int k = 0; k < d->rank; k++)
    if (d->shape[k] < 1 || block[k] > TMA_MAX_BOX)
      return false;
  for (int k = 0; k + 1 < d->rank; k++) {
    int64_t s = d->stride[k];
    if (s < d->shape[k + 1] || s >= (1LL << 40) / es || (s * es) % 16)
      return false;
  }
  return (block[d->rank - 1] * es) % 16 == 0;
}

int teeny_tensor_desc_make(teeny_tensor_desc *d, teeny_dtype dt, teeny_dptr base, int rank,
                           const int64_t *shape, const int64_t *strides, const int *block,
                           char *err, size_t errsz) {
  memset(d, 0, sizeof *d);
  int es = teeny_dtype_size(dt);
  if (rank < 1 || rank > TEENY_TENSOR_DESC_MAX_RANK || es < 1 || es > 8 || dt == TEENY_DT_BOOL)
    return fail(err, errsz, TEENY_E_INVAL,
                "teeny_tensor_desc_make: rank 1 to 4 of a numeric dtype (not bool)");
  if (strides[rank - 1] != 1)
    return fail(err, errsz, TEENY_E_INVAL,
                "teeny_tensor_desc_make: the last dim must be contiguous (stride 1)");
  for (int k = 0; k < rank; k++) {
    if (shape[k] < 0 || shape[k] > INT32_MAX || block[k] < 1 || (block[k] & (block[k] - 1)))
      return fail(err, errsz, TEENY_E_INVAL,
                  "teeny_tensor_desc_make: shapes 0 to 2^31-1 and block dims powers of two");
    d->shape[k] = (int32_t)shape[k];
    d->stride[k] = strides[k];
  }
  if (base.addr % 16) /* the kernel assumes it of every pointer argument (docs/dsl.md),
                         and folds its own test of the TMA's rule */
    return fail(err, errsz, TEENY_E_INVAL,
                "teeny_tensor_desc_make: the base must be 16-byte aligned, as every pointer "
                "argument of a kernel");
  d->base = base;
  d->rank = rank;
  if (!tma_takes(d, es, block))
    return 0; /* the kernel uses plain loads: the tensormap stays zero */
  int rc;
  const teeny__cuda *api = teeny__cuda_get(&rc, err, errsz);
  if (!api)
    return rc;
  encode_fn encode;
  *(void **)&encode = dlsym(api->lib, "cuTensorMapEncodeTiled");
  if (!encode)
    return fail(err, errsz, TEENY_E_NOCUDA,
                "the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12 or later needed for "
                "tensor_desc parameters on this GPU)");
  unsigned long long dims[TEENY_TENSOR_DESC_MAX_RANK], gstrides[TEENY_TENSOR_DESC_MAX_RANK];
  unsigned box[TEENY_TENSOR_DESC_MAX_RANK], ones[TEENY_TENSOR_DESC_MAX_RANK];
  for (int k = 0; k < rank; k++) { /* innermost first */
    dims[k] = (unsigned long long)shape[rank - 1 - k];
    box[k] = (unsigned)block[rank - 1 - k];
    ones[k] = 1;
    if (k + 1 < rank)
      gstrides[k] = (unsigned long long)(strides[rank - 2 - k] * es);
  }
  static const int type_of_size[9] = {0, TM_UINT8, TM_UINT16, 0, TM_UINT32, 0, 0, 0, TM_UINT64};
  CUresult r = encode(&d->map, type_of_size[es], (unsigned)rank, (void *)(uintptr_t)base.addr,
                      dims, gstrides, box, ones, TM_INTERLEAVE_NONE, TM_SWIZZLE_NONE,
                      TM_L2_128B, TM_OOB_ZERO);
  if (r)
    return teeny__cuda_fail(err, errsz, "cuTensorMapEncodeTiled", r);
  d->tma = true;
  return 0;
}

size_t teeny_tensor_desc_args(teeny_tensor_desc *d, void **args) {
  size_t n = 0;
  args[n++] = &d->map;
  args[n++] = &d->base.addr;
  for (int k = 0; k < d->rank; k++)
    args[n++] = &d->shape[k];
  for (int k = 0; k + 1 < d->rank; k++)
    args[n++] = &d->stride[k];
  return n;
}
