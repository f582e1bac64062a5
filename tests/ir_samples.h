/*
 * tests/ir_samples.h — hand-built tile IR for stage tests (ir_samples.c).
 *
 *   vector_add(a, b, out: ptr(dt); n: i32)      grid (cdiv(n, block))
 *   softmax(x, y: ptr(f32); n_cols, stride: i32) one row per program, n_cols <= block
 *   row_sum(x, out: ptr(f32); n_cols: i32)      for-loop over the row; out[row] = sum
 *   matmul(a, b: ptr(dt); c: ptr(f32); M, N, K) grid (cdiv(M,bm), cdiv(N,bn)), row-major
 */
#ifndef TEENY_TESTS_IR_SAMPLES_H
#define TEENY_TESTS_IR_SAMPLES_H

#include "dsl/ir/ir.h"

teeny_ir_func *teeny_sample_vector_add(teeny_arena *a, teeny_dtype dt, int block);
teeny_ir_func *teeny_sample_softmax(teeny_arena *a, int block);
teeny_ir_func *teeny_sample_row_sum_loop(teeny_arena *a, int block);
teeny_ir_func *teeny_sample_matmul(teeny_arena *a, teeny_dtype dt, int bm, int bn, int bk);

#endif
