/*
 * tests/lang/shadow.c — user names that are also builtin names (docs/dsl.md
 * §1): the user's name shadows the builtin.  On the host the builtins are
 * macros, so the helper's name is #undef'd first; a variable or generic
 * needs nothing.
 */
#include <teeny/dsl.h>

TEENY_CONST(sum); /* a generic named like a builtin */

#undef tanh
/* A helper named like a builtin: calls reach it, not the builtin. */
tile(f32) tanh(tile(f32) x) { return x * 2.0f + 1.0f; }

TEENY_KERNEL(sum)
void shadow(ptr(f32) x, ptr(f32) out)
{
    i32 program_id = program_id(0);     /* a variable; the call is the builtin */
    tile(i32) offs = program_id * sum + arange(0, sum);
    tile(f32) max = tanh(load(x + offs)); /* the helper */
    store(out + offs, max + max(max));    /* the variable, and the builtin */
}
