/*
 * teeny/dsl.h — the host side of the teenyc kernel language.
 *
 * A kernel file is ordinary C11.  Included here, it compiles with any C11
 * compiler (`gcc -std=c11 -fsyntax-only -Wall -Werror`), which type-checks
 * names, arity and element types: on the host a tile of T is just a T and a
 * pointer tile is just a T *.  Nothing on the host ever calls a kernel.
 *
 * teenycd reads the same text with its own front end (dsl/), which knows the
 * real meaning of every name below: tiles have static shapes, generics are
 * bound per request, builtins lower to tile IR.  docs/dsl.md is the reference.
 *
 * Lower-case builtins (load, store, exp, sum, ...) are macros here (over
 * prototypes where a value of a type is needed).  Include this header only
 * from kernel files.
 */
#ifndef TEENY_DSL_H
#define TEENY_DSL_H

#include <stdint.h>

/* A helper may take the name of a builtin (docs/dsl.md §1): `#undef tanh`
 * before defining it, since the builtins are macros here.  C compilers know
 * the math names as library functions and warn when a file defines one
 * with other types; in a kernel file that is intended. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wincompatible-library-redeclaration"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wbuiltin-declaration-mismatch"
#endif

/* ---- element types ------------------------------------------------------ */

typedef _Bool bool;
typedef int8_t i8;
typedef int16_t i16;
typedef int32_t i32;
typedef int64_t i64;
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef float f16;  /* host stand-in: only the device has real halves */
typedef float bf16; /* host stand-in */
typedef float f32;
typedef double f64;

#define true ((bool)1)
#define false ((bool)0)
#ifndef INFINITY
#define INFINITY (__builtin_inff())
#endif
#ifndef NAN
#define NAN (__builtin_nanf(""))
#endif

/* tile(T): a block-wide tile of T (shape inferred); ptr(T): pointer to T. */
#define tile(T) T
#define ptr(T) T *

/* ---- generics, kernels ---------------------------------------------------- */

#define TEENY__ARG1(a, ...) a
#define TEENY__ARG2(a, b, ...) b

/* TEENY_DTYPE(D) or TEENY_DTYPE(D, f32, f16): a dtype parameter, optionally
 * restricted to the listed dtypes.  On the host every dtype parameter is f32. */
#define TEENY_DTYPE(name, ...) typedef float name
/* TEENY_CONST(N): an i32 compile-time constant, bound per request;
 * TEENY_CONST(N, T): one of dtype T (bool, an integer or a float dtype). */
#define TEENY_CONST(...)                                                       \
  extern const TEENY__ARG2(__VA_ARGS__, i32, ~) TEENY__ARG1(__VA_ARGS__, ~)
/* TEENY_KERNEL(G...): the next function is a kernel; G lists, in order, the
 * generic parameters its id is specialised on. */
#define TEENY_KERNEL(...)
/* TEENY_BACKWARD(fwd, bwd): bwd is the backward kernel of fwd. */
#define TEENY_BACKWARD(fwd, bwd) extern const int teeny__backward_##fwd##_##bwd
/* TEENY_BIND(G, value): a binding, as written into generated sources. */
#define TEENY_BIND(name, value) extern const int teeny__bind_##name

/* ---- host type-checking helpers (not part of the language) --------------- */

static inline int teeny__args(int n, ...) { return n * 0; }
#define TEENY__FIRST(a, ...) (a)
#define TEENY__SECOND(a, b, ...) (b)
#define TEENY__ELEM(...) (*(teeny__args(0, __VA_ARGS__) + TEENY__FIRST(__VA_ARGS__, 0)))

/* ---- program, ranges, constructors ---------------------------------------- */

/* Every builtin is a macro, so that a variable may take its name and still
 * call it (`i32 program_id = program_id(0);`), as in the language. */
i32 teeny__program_id(i32 axis);
i32 teeny__num_programs(i32 axis);
i32 teeny__arange(i32 start, i32 end);
#define program_id(axis) teeny__program_id(axis)
#define num_programs(axis) teeny__num_programs(axis)
#define arange(start, end) teeny__arange(start, end)
#define zeros(T, ...) ((T)teeny__args(0, __VA_ARGS__))
#define full(T, value, ...) ((T)(value) + (T)teeny__args(0, __VA_ARGS__))

/* ---- shape --------------------------------------------------------------- */

#define col(x) (x)                 /* x[:, None] */
#define row(x) (x)                 /* x[None, :] */
#define expand_dims(x, axis) ((x) + teeny__args(0, axis))
#define broadcast_to(x, ...) ((x) + teeny__args(0, __VA_ARGS__))
/* trans(x): [M, N] to [N, M]; trans(x, dims...) is permute */
#define trans(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
#define reshape(x, ...) ((x) + teeny__args(0, __VA_ARGS__))
#define view(x, ...) ((x) + teeny__args(0, __VA_ARGS__)) /* reshape's older name */
#define join(a, b) ((a) + (b))       /* [S...], [S...] -> [S..., 2] */
#define interleave(a, b) ((a) + (b)) /* [.., N] twice -> [.., 2N]: a0 b0 a1 b1 ... */
#define cat(a, b) ((a) + (b))        /* along axis 0: a's rows, then b's */
#define ravel(x) (x)                 /* to one axis, row-major */
#define gather(src, index, axis) ((src) + teeny__args(0, index, axis))
#define sort(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
#define permute(x, ...) ((x) + teeny__args(0, __VA_ARGS__))
/* split(x, S): x [..., 2] as a struct S of its two halves (C has no tuples) */
#define split(x, S) ((S){(x), (x)})
#define flip(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
/* histogram(x, bins [, mask]): i32 counts of 0 .. bins-1 */
#define histogram(x, ...) ((i32)(x) + teeny__args(0, __VA_ARGS__))

/* ---- memory ---------------------------------------------------------------- */

/* load(p [, mask [, other]]) and store(p, value [, mask]) */
/* tensor descriptors and block pointers: pointers here (docs/dsl.md §5) */
#define TEENY__DESC_ELEM(T, ...) T
#define tensor_desc(...) TEENY__DESC_ELEM(__VA_ARGS__, 0) * /* (T), or (T, block...) */
#define block_ptr(T) T *
#define make_tensor_descriptor(base, ...) ((base) + teeny__args(0, __VA_ARGS__))
#define load_tensor_descriptor(d, ...) (*(teeny__args(0, __VA_ARGS__) + (d)))
#define store_tensor_descriptor(d, ...) ((void)(d), (void)teeny__args(0, __VA_ARGS__))
#define make_block_ptr(base, ...) ((base) + teeny__args(0, __VA_ARGS__))
#define advance(p, ...) ((p) + teeny__args(0, __VA_ARGS__))
#define load(...) TEENY__ELEM(__VA_ARGS__)
#define store(...) ((void)teeny__args(0, __VA_ARGS__))
/* Atomics return the old values and are often used as statements, so on
 * the host they are calls (no -Wunused-value), chosen by pointee type: an
 * atomic on an unsupported dtype does not compile here either. */
static inline i32 teeny__atom_i32(i32 *p, ...) { return *p; }
static inline u32 teeny__atom_u32(u32 *p, ...) { return *p; }
static inline i64 teeny__atom_i64(i64 *p, ...) { return *p; }
static inline u64 teeny__atom_u64(u64 *p, ...) { return *p; }
static inline f32 teeny__atom_f32(f32 *p, ...) { return *p; }
static inline f64 teeny__atom_f64(f64 *p, ...) { return *p; }
#define TEENY__ATOM(p)                                                         \
  _Generic((p), i32 *: teeny__atom_i32, u32 *: teeny__atom_u32,                \
           i64 *: teeny__atom_i64, u64 *: teeny__atom_u64,                     \
           f32 *: teeny__atom_f32, f64 *: teeny__atom_f64)
#define atomic_add(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_max(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_min(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_xchg(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_and(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_or(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_xor(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)
#define atomic_cas(p, ...) TEENY__ATOM(p)(p, __VA_ARGS__)

/* Options, written as the last arguments of the builtins that take them
 * (docs/dsl.md §9): an atomic's memory semantics and scope, the input
 * precision of an f32 dot, a load's or store's cache operator and
 * eviction priority. */
enum teeny_option {
  sem_relaxed, sem_acquire, sem_release, sem_acq_rel,
  scope_cta, scope_gpu, scope_sys,
  prec_tf32, prec_tf32x3, prec_ieee,
  cache_ca, cache_cg, cache_cs, cache_cv, cache_wb, cache_wt,
  evict_normal, evict_first, evict_last
};

/* barrier(): every lane of the program arrives before any goes on. */
static inline void teeny__barrier(void) {}
#define barrier() teeny__barrier()

/* ---- element-wise ------------------------------------------------------------ */

#define where(c, a, b) ((c) ? (a) : (b))
#define minimum(a, b) ((a) < (b) ? (a) : (b))
#define maximum(a, b) ((a) > (b) ? (a) : (b))
#define abs(x) ((x) < 0 ? -(x) : (x))
#define exp(x) ((x) + 0.0f)
#define exp2(x) ((x) + 0.0f)
#define log(x) ((x) + 0.0f)
#define log2(x) ((x) + 0.0f)
#define sqrt(x) ((x) + 0.0f)
#define rsqrt(x) ((x) + 0.0f)
#define sin(x) ((x) + 0.0f)
#define cos(x) ((x) + 0.0f)
#define tanh(x) ((x) + 0.0f)
#define sigmoid(x) ((x) + 0.0f)
#define erf(x) ((x) + 0.0f)
#define floor(x) ((x) + 0.0f)
#define ceil(x) ((x) + 0.0f)
/* the hardware approximations (docs/dsl.md §5, accuracy) */
#define fast_exp(x) ((x) + 0.0f)
#define fast_exp2(x) ((x) + 0.0f)
#define fast_log(x) ((x) + 0.0f)
#define fast_log2(x) ((x) + 0.0f)
#define fast_sin(x) ((x) + 0.0f)
#define fast_cos(x) ((x) + 0.0f)
#define fast_tanh(x) ((x) + 0.0f)
#define fma(a, b, c) ((a) * (b) + (c))
#define log1p(x) ((x) + 0.0f)
#define expm1(x) ((x) + 0.0f)
#define erfc(x) ((x) + 0.0f)
#define pow(x, y) ((x) * (y) + 0.0f)
#define asin(x) ((x) + 0.0f)
#define acos(x) ((x) + 0.0f)
#define atan(x) ((x) + 0.0f)
#define atan2(y, x) ((y) * (x) + 0.0f)
#define isnan(x) ((x) != (x))
#define isinf(x) ((x) == (x))
#define clamp(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
#define div_rn(a, b) ((a) / (b) + 0.0f)
#define fdiv(a, b) ((a) / (b) + 0.0f)
/* umulhi(a, b): the high half of the unsigned product (32- or 64-bit ints) */
#define umulhi(a, b) ((a) * (b))
/* bitcast(x, T): x's bits as dtype T of the same width */
#define bitcast(x, T) ((T)(x))
/* rand(seed, offsets) in [0, 1), randn(...) ~ N(0, 1), randint(...): u32
 * (u64 for 64-bit offsets): Philox, the same numbers as Triton's */
#define rand(seed, offset) ((f32)(seed) + (f32)(offset))
#define randn(seed, offset) ((f32)(seed) + (f32)(offset))
#define randint(seed, offset) ((u32)(seed) + (u32)(offset))
/* randint4x(seed, offset, S): the four Philox words in a struct S of four u32 tiles */
#define randint4x(seed, offset, S) ((S){randint(seed, offset), randint(seed, offset), randint(seed, offset), randint(seed, offset)})
#define cdiv(a, b) (((a) + (b) - 1) / (b))

/* ---- dtype introspection, checks, printing ------------------------------------ */

/* is_float(T) ... same_dtype(A, B): T a dtype or a value; in a kernel they
 * are constants, so an `if` on them builds only the branch taken (on the
 * host both branches must type-check, with every dtype generic an f32). */
#define is_float(x) ((bool)(sizeof(x) != 0))
#define is_int(x) ((bool)(sizeof(x) != 0))
#define is_signed(x) ((bool)(sizeof(x) != 0))
#define is_unsigned(x) ((bool)(sizeof(x) != 0))
#define same_dtype(a, b) ((bool)(sizeof(a) + sizeof(b) != 0))
/* static_assert(cond, "message") in a function body: checked when the
 * kernel is built (on the host, only type-checked). */
#undef static_assert
#define static_assert(c, msg) ((void)sizeof((c) ? 1 : 0), (void)sizeof(msg))
/* device_print("format", values...), device_assert(cond, "message",
 * values...): printf formats without length modifiers (docs/dsl.md §5). */
static inline void teeny__device_print(const char *fmt, ...) { (void)fmt; }
static inline void teeny__device_assert(int cond, const char *fmt, ...) {
  (void)cond;
  (void)fmt;
}
#define device_print(...) teeny__device_print(__VA_ARGS__)
#define device_assert(...) teeny__device_assert(__VA_ARGS__)

/* ---- reductions, scans, dot ---------------------------------------------------- */

/* sum(x) and sum(x, axis): the axis is optional, so the macros take
 * everything as __VA_ARGS__ (C11 needs at least one argument there). */
#define sum(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
#define max(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
#define min(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
#define argmax(x, axis) ((i32)teeny__args(0, x, axis))
#define argmin(x, axis) ((i32)teeny__args(0, x, axis))
/* reduce/scan(x, axis, fn): x a tile, or a struct of tiles (a tuple) that
 * fn combines field by field. */
#define reduce(x, axis, fn) ((void)sizeof(axis), fn((x), (x)))
#define cumsum(...) (TEENY__FIRST(__VA_ARGS__, 0) + teeny__args(0, __VA_ARGS__))
#define scan(x, axis, fn) ((void)sizeof(axis), fn((x), (x)))
/* dot(a, b [, acc]): a is [M, K], b is [K, N]; the result is [M, N]. */
#define dot(a, ...) ((a) * TEENY__FIRST(__VA_ARGS__, 0))

#endif /* TEENY_DSL_H */
