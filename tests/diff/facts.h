/*
 * tests/diff/facts.h — what the generator knows about a value, so that the
 * interpreter and a correct GPU must agree on it: an interval that holds
 * the interpreter's value, a bound on how far a correct engine's value
 * may be from it, and whether it is integer-valued.  facts.c has one
 * transfer function per operation (the error model of docs/reliability.md)
 * and says no to operations whose result two correct implementations may
 * legitimately disagree on (a comparison of approximate values, a sum that
 * may overflow, ...).
 */
#ifndef TEENY_TESTS_DIFF_FACTS_H
#define TEENY_TESTS_DIFF_FACTS_H

#include <stdbool.h>

#include "teeny/compile.h"

typedef struct dfz_fact {
  double lo, hi; /* the interpreter's value lies in [lo, hi]; an infinite end
                    means infinities and NaN are possible */
  double err;    /* |interpreter - engine| <= err; 0: bit-identical (NaN = NaN) */
  bool intval;   /* integer-valued (always true for integer dtypes) */
} dfz_fact;

dfz_fact dfz_fact_const(double v);
dfz_fact dfz_fact_range(double lo, double hi, bool intval);
/* Any value of dt (floats: including infinities and NaN). */
dfz_fact dfz_fact_any(teeny_dtype dt);
/* The smallest facts that cover both. */
dfz_fact dfz_fact_hull(dfz_fact a, dfz_fact b);
bool dfz_fact_finite(dfz_fact f);
double dfz_fact_mag(dfz_fact f); /* max |value| (infinite when not finite) */
/* a is at least as good as b everywhere (b's facts hold for a). */
bool dfz_fact_within(dfz_fact a, dfz_fact b);

/* The facts of op (a dfz_op of ast.h) applied to args whose common
 * (promoted) dtype is adt, giving a result of dtype rdt.  n is the
 * number of elements a reduction or scan combines, or K of a dot.
 * Returns false when the result would not be reproducible within a
 * bound: the generator must not emit it. */
bool dfz_fact_op(int op, teeny_dtype rdt, teeny_dtype adt, const dfz_fact *args, int nargs,
                 long n, dfz_fact *out);
/* A dot of K = k with an input precision (f32 operands; dot's prec_* option). */
enum { DFZ_PREC_TF32, DFZ_PREC_TF32X3, DFZ_PREC_IEEE };
bool dfz_fact_dot(teeny_dtype rdt, teeny_dtype adt, const dfz_fact *args, int nargs, long k,
                  int prec, dfz_fact *out);
/* A conversion from dtype `from` to `to` (explicit casts, stores). */
bool dfz_fact_cast(teeny_dtype from, teeny_dtype to, dfz_fact a, dfz_fact *out);
/* Tolerance for a value with facts f stored into a buffer of dtype dt. */
double dfz_fact_store_tol(dfz_fact f, teeny_dtype value_dt, teeny_dtype dt);

#endif /* TEENY_TESTS_DIFF_FACTS_H */
