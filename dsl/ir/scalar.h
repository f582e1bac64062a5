/*
 * dsl/ir/scalar.h — the language's scalar semantics (docs/dsl.md §4), one
 * element at a time: integer and float arithmetic with every edge case
 * defined, comparisons, rounding to each float dtype, and conversions.
 *
 * The interpreter (interp.c) computes every element-wise op with these
 * functions and constant folding (irgen_expr.c) folds with them, so a
 * folded constant and the same expression computed at run time agree bit
 * for bit.  Values are teeny_scalars in canonical form: ints wrapped to
 * their dtype's width and sign- or zero-extended to 64 bits (.i/.u), bools
 * 0 or 1, floats (.f) exact values of their format.  Every function takes
 * canonical operands and returns a canonical result.
 */
#ifndef TEENY_DSL_IR_SCALAR_H
#define TEENY_DSL_IR_SCALAR_H

#include "dsl/ir/ir.h"

/* The integer (or bool) of dtype dt whose low bits are `bits`: wrapped to
 * dt's width and extended by its signedness; bool keeps bit 0. */
teeny_scalar teeny__scalar_int(teeny_dtype dt, uint64_t bits);

/* A value from outside (an argument, an IR constant) made canonical for
 * dt: ints wrapped, bools 0/1 (any non-zero is 1), floats rounded;
 * pointers are left alone. */
teeny_scalar teeny__scalar_normalize(teeny_dtype dt, teeny_scalar v);

/* x rounded to the float dtype dt: nearest, ties to even, past the largest
 * finite value to infinity, subnormals kept; f64 (and any non-float) as is. */
double teeny__scalar_round(teeny_dtype dt, double x);

/* a code b in dtype dt, for the binary element-wise opcodes IR_ADD..IR_MAX
 * and IR_UMULHI (ints: the high half of the unsigned product):
 * ints wrap; x / 0 is -1 and x % 0 is x; MIN / -1 is MIN and MIN % -1 is 0;
 * a shift by a negative amount or by the width or more gives 0 (-1 for >>
 * of a negative).  Floats: one IEEE operation, rounded to dt (% is fmod,
 * min/max ignore a NaN operand). */
teeny_scalar teeny__scalar_binop(teeny_opcode code, teeny_dtype dt,
                                 teeny_scalar a, teeny_scalar b);

/* code a in dtype dt.  Ints and bools: IR_NEG, IR_NOT (bool: flips),
 * IR_ABS, wrapping.  Floats: IR_NEG, IR_ABS, IR_FLOOR, IR_CEIL and the math
 * opcodes IR_EXP..IR_ERF, by libm in double rounded to dt (f16/bf16
 * through f32 first, as the GPU computes them in f32). */
teeny_scalar teeny__scalar_unop(teeny_opcode code, teeny_dtype dt, teeny_scalar a);

/* a * b + c with one rounding for f64, else in f32 rounded to dt. */
double teeny__scalar_fma(teeny_dtype dt, double a, double b, double c);

/* a pred b in dtype dt: ints by dt's signedness; floats ordered, except
 * CMP_NE, which is true when either is NaN. */
bool teeny__scalar_compare(teeny_cmp_pred pred, teeny_dtype dt, teeny_scalar a,
                           teeny_scalar b);

/* v of dtype `from` as dtype `to` (docs/dsl.md §4 "Conversions"): to bool
 * is `!= 0` (NaN is true); int to int wraps; int to float rounds the exact
 * integer once to nearest even (no detour through double); float to int
 * truncates toward zero and saturates, NaN gives 0; float to float rounds. */
teeny_scalar teeny__scalar_cast(teeny_dtype from, teeny_dtype to, teeny_scalar v);

/* v of dtype `from` with its bits read as dtype `to` of the same width (no
 * bool, no pointers): a NaN keeps its payload where the formats allow. */
teeny_scalar teeny__scalar_bitcast(teeny_dtype from, teeny_dtype to, teeny_scalar v);

#endif
