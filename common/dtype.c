/*
 * common/dtype.c — dtype names, sizes and classes, shared by the compiler,
 * the protocol and the client.
 */
#include <string.h>

#include "common/common.h"

static const struct {
  const char *name; /* spelling in kernels and bindings */
  int size;         /* bytes per element */
} dtypes[TEENY_DT__COUNT] = {
    [TEENY_DT_VOID] = {"void", 0}, [TEENY_DT_BOOL] = {"bool", 1},
    [TEENY_DT_I8] = {"i8", 1},     [TEENY_DT_I16] = {"i16", 2},
    [TEENY_DT_I32] = {"i32", 4},   [TEENY_DT_I64] = {"i64", 8},
    [TEENY_DT_U8] = {"u8", 1},     [TEENY_DT_U16] = {"u16", 2},
    [TEENY_DT_U32] = {"u32", 4},   [TEENY_DT_U64] = {"u64", 8},
    [TEENY_DT_F16] = {"f16", 2},   [TEENY_DT_BF16] = {"bf16", 2},
    [TEENY_DT_F32] = {"f32", 4},   [TEENY_DT_F64] = {"f64", 8},
    [TEENY_DT_PTR] = {"ptr", 8},   [TEENY_DT_F8E4M3] = {"f8e4m3", 1},
    [TEENY_DT_F8E5M2] = {"f8e5m2", 1},
};

const char *teeny_dtype_name(teeny_dtype dt) {
  if ((int)dt < 0 || dt >= TEENY_DT__COUNT)
    return NULL;
  return dtypes[dt].name;
}

teeny_dtype teeny_dtype_parse(const char *name) {
  if (!name)
    return TEENY_DT_VOID;
  for (int i = TEENY_DT_BOOL; i < TEENY_DT__COUNT; i++)
    if (i != TEENY_DT_PTR && strcmp(dtypes[i].name, name) == 0)
      return (teeny_dtype)i;
  return TEENY_DT_VOID;
}

int teeny_dtype_size(teeny_dtype dt) {
  if ((int)dt < 0 || dt >= TEENY_DT__COUNT)
    return 0;
  return dtypes[dt].size;
}

bool teeny__dt_is_int(teeny_dtype dt) {
  return dt >= TEENY_DT_I8 && dt <= TEENY_DT_U64;
}

bool teeny__dt_is_signed(teeny_dtype dt) {
  return dt >= TEENY_DT_I8 && dt <= TEENY_DT_I64;
}

bool teeny__dt_is_float(teeny_dtype dt) {
  return (dt >= TEENY_DT_F16 && dt <= TEENY_DT_F64) || teeny__dt_is_fp8(dt);
}

int teeny__dt_bits(teeny_dtype dt) {
  return dt == TEENY_DT_BOOL ? 1 : 8 * teeny_dtype_size(dt);
}
