/*
 * tests/unit/test_client_gen_typed.c — what the C compiler checks in
 * teenyc-gen's typed API.  As written this file compiles (-Werror); each
 * WRONG=N below is one mistake teenygrad's positional launch would let
 * through, and ctest expects the compile to fail (WILL_FAIL):
 *   1  a pointer of the wrong element type (f16 where the kernel takes f32)
 *   2  an untyped device pointer where the element type is known
 *   3  a misspelt argument name
 *   4  another kernel's argument struct
 *   5  a pointer passed for a scalar
 *   6  a misspelt const name
 */
#include "layernorm.teeny.h"
#include "vector_add.teeny.h"

int launch_layernorm(layernorm_kernel *k, teeny_dptr x, teeny_dptr stats, int rows);
int launch_layernorm(layernorm_kernel *k, teeny_dptr x, teeny_dptr stats, int rows) {
  layernorm_args a = {
      .x_ptr = x, .y_ptr = x, .w_ptr = x, .b_ptr = x,
#if WRONG == 1
      .mean_ptr = TEENY_DPTR_AS(f16, stats),
#elif WRONG == 2
      .mean_ptr = stats,
#else
      .mean_ptr = TEENY_DPTR_AS(f32, stats),
#endif
      .rstd_ptr = TEENY_DPTR_AS(f32, stats),
#if WRONG == 3
      .n_col = 128,
#elif WRONG == 5
      .n_cols = x,
#else
      .n_cols = 128,
#endif
      .stride = 128, .eps = 1e-5f};
  teeny_grid g = {.x = (unsigned)rows};
#if WRONG == 4
  vector_add_args v = {.a_ptr = x, .b_ptr = x, .out_ptr = x, .n_elements = 1};
  (void)a;
  return layernorm_launch(k, g, NULL, &v);
#else
  return layernorm_launch(k, g, NULL, &a);
#endif
}

int make_vector_add(vector_add_kernel *k);
int make_vector_add(vector_add_kernel *k) {
#if WRONG == 6
  return vector_add_init(k, TEENY_DT_F32, (vector_add_consts){.block = 1024});
#else
  return vector_add_init(k, TEENY_DT_F32, (vector_add_consts){.block_size = 1024});
#endif
}
