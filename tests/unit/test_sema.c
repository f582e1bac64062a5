/*
 * tests/unit/test_sema.c — type, shape and constness errors found while
 * building tile IR (irgen), each with its message and exact line:col, and
 * the binding-dependent cases that must compile.
 *
 * A case is a kernel body (or a whole source) with one '@' marking where
 * the error's caret must point; the '@' is removed before compiling.
 */
#include <check.h>

#include "kernel_util.h"

#define PREFIX                                                                 \
  "#include <teeny/dsl.h>\n"                                                   \
  "TEENY_DTYPE(D);\n"                                                          \
  "TEENY_CONST(B);\n"                                                          \
  "TEENY_KERNEL(D, B)\n"                                                       \
  "void k(ptr(D) x, ptr(D) y, i32 n)\n"                                        \
  "{\n"
#define PREFIX_LINES 6

/* A struct and helpers over it, then a kernel body (a whole source). */
#define SDEF                                                                   \
  "#include <teeny/dsl.h>\n"                                                   \
  "typedef struct { f32 a; i32 b; } pair;\n"                                   \
  "pair pick(pair x, pair y) { return x.a > y.a ? x : y; }\n"                   \
  "f32 wrong(pair x, pair y) { return x.a; }\n"                                 \
  "TEENY_KERNEL()\n"                                                           \
  "void k(ptr(f32) x, i32 n)\n"                                                \
  "{\n"

typedef struct sema_case {
  const char *body;     /* kernel body, or a whole source if whole is set */
  const char *bindings; /* NULL: D=f32,B=128 */
  const char *message;  /* expected substring of the first error */
  int whole;            /* 1: body is a complete source; 2: it has its own
                           prefix (SDEF) but no closing brace */
} sema_case;

static const sema_case bad[] = {
    /* gather and flip */
    {"    tile(f32) g = gather(zeros(f32, 16), @zeros(f32, 16), 0);\n", 0,
     "gather's index must be integers", 0},
    {"    tile(f32) g = @gather(zeros(f32, 16, 4), zeros(i32, 16), 0);\n", 0,
     "must have the rank of", 0},
    {"    tile(f32) g = @gather(zeros(f32, 16, 4), zeros(i32, 8, 8), 0);\n", 0,
     "must match", 0},
    {"    tile(f32) g = gather(zeros(f32, 16), zeros(i32, 16), @1);\n", 0, "out of range", 0},
    {"    tile(f32) f = flip(zeros(f32, 4, 4), @2);\n", 0, "out of range", 0},
    {"    f32 f = flip(@1.0f);\n", 0, "flip needs a tile", 0},
    {"    tile(f32) s = sort(zeros(f32, 16), n @> 0);\n", 0, "must be a constant bool", 0},
    {"    tile(f32) t = @permute(zeros(f32, 4, 8), 1);\n", 0, "needs 2 dims", 0},
    {"    tile(f32) t = permute(zeros(f32, 4, 8), 1, @1);\n", 0, "must be a permutation", 0},
    {"    tile(f32) t = split(zeros(f32, 4, 2), @f32);\n", 0, "must be a struct type of 2 fields", 0},
    {SDEF "    pair p = split(@zeros(f32, 4, 4), pair);\n", "", "split needs a tile whose last dim is 2", 2},
    {SDEF "    pair p = split(@zeros(f32, 4, 2, 4), pair);\n", "", "split needs a tile whose last dim is 2", 2},
    /* histogram */
    {"    tile(i32) h = histogram(@zeros(f32, 16), 8);\n", 0, "1-D tile of integers", 0},
    {"    tile(i32) h = histogram(zeros(i32, 16), @12);\n", 0, "not a power of two", 0},
    {"    tile(i32) h = histogram(@zeros(i32, 4, 4), 8);\n", 0, "1-D tile of integers", 0},
    {"    tile(i32) h = histogram(zeros(i32, 16), 8, @zeros(bool, 1, 16));\n", 0,
     "does not fit", 0},
    {"    tile(i32) h = histogram(zeros(i32, 16), @n);\n", 0, "bin count", 0},
    /* joining tiles */
    {"    tile(f32) m = zeros(f32, 2, 4, 4, 2);\n    tile(f32) j = @join(m, m);\n", 0,
     "would make a tile of rank 5 (at most 4)", 0},
    {"    tile(f32) j = @interleave(1.0f, 2.0f);\n", 0, "interleave needs tiles", 0},
    /* tiles of rank 3 and 4 */
    {"    tile(f32) z = @zeros(f32, 2, 2, 2, 2, 2);\n", 0, "'zeros' takes 2 to 5 arguments", 0},
    {"    tile(f32) e = @expand_dims(zeros(f32, 2, 2, 2, 2), 0);\n", 0,
     "would make a tile of rank 5", 0},
    {"    tile(f32) t = trans(@zeros(f32, 2, 4, 8));\n", 0, "trans(x) needs a 2-D tile", 0},
    {"    tile(f32) t = @trans(zeros(f32, 2, 4, 8), 0, 1);\n", 0, "needs 3 dims, got 2", 0},
    {"    tile(f32) t = trans(zeros(f32, 2, 4, 8), 0, @3, 1);\n", 0, "out of range", 0},
    {"    tile(f32) t = permute(zeros(f32, 2, 4, 8), 2, 0, @2);\n", 0, "must be a permutation", 0},
    {"    tile(f32) c = @dot(zeros(f32, 2, 16, 16), zeros(f32, 4, 16, 16));\n", 0,
     "batch dims differ", 0},
    {"    tile(f32) c = @dot(zeros(f32, 2, 16, 16), zeros(f32, 16, 16));\n", 0,
     "dot needs two 2-D tiles", 0},
    {"    tile(f32) c = @dot(zeros(f32, 2, 2, 16, 16), zeros(f32, 2, 2, 16, 16));\n", 0,
     "or two 3-D ones", 0},
    {"    tile(f32) s = sum(zeros(f32, 2, 4, 8), @3);\n", 0, "out of range", 0},
    {"    tile(f32) v = @view(zeros(f32, 2, 4, 8), 8, 4);\n", 0, "view of tile(f32)[2, 4, 8] to "
     "tile(f32)[8, 4] changes the element count", 0},
    /* tensor descriptors and block pointers */
#define TD "    tensor_desc(D) d = make_tensor_descriptor(x, n, 1, 64);\n"
#define BP "    block_ptr(D) p = make_block_ptr(x, n, 1, 0, 64, 0);\n"
    {"    tensor_desc(D) d = make_tensor_descriptor(x, n, 1, @48);\n", 0,
     "block dim 48 is not a power of two", 0},
    {"    tensor_desc(D) d = @make_tensor_descriptor(x, n, 1, 64, 2);\n", 0,
     "takes the base pointer, then the shape, strides and block shape", 0},
    {"    tensor_desc(D) d = make_tensor_descriptor(@n, n, 1, 64);\n", 0,
     "base must be a pointer", 0},
    {"    tensor_desc(D) d = make_tensor_descriptor(x, n, @1.5f, 64);\n", 0,
     "stride must be an integer scalar", 0},
    {"    @tensor_desc(D) d;\n", 0, "must be initialised where it is declared", 0},
    {"    tensor_desc(@tile(D)) d = make_tensor_descriptor(x, n, 1, 64);\n", 0,
     "takes the element dtype", 0},
    {TD "    tile(D) v = @load_tensor_descriptor(d, 0, 0);\n", 0,
     "takes 1 offset (one per dim), not 2", 0},
    {TD "    d @= make_tensor_descriptor(x, n, 1, 32);\n", 0,
     "a descriptor's block shape is fixed where it is declared", 0},
    {TD "    tensor_desc(f16) e = @d;\n", 0, "cannot initialise 'e' (tensor_desc(f16))", 0},
    {"    tensor_desc(D) d = @make_block_ptr(x, n, 1, 0, 64, 0);\n", 0, "with block_ptr(f32)[64]",
     0},
    {TD "    tile(D) v = load(@d);\n", 0, "(a tensor descriptor uses load_tensor_descriptor)", 0},
    {TD "    store(@d, 1.0f);\n", 0, "(a tensor descriptor uses store_tensor_descriptor)", 0},
    {TD "    tile(D) v = @d + 1;\n", 0, "a tensor descriptor (tensor_desc(f32)[64]) cannot be used here",
     0},
    {"    tile(D) v = load_tensor_descriptor(@x, 0);\n", 0, "needs a tensor_desc", 0},
    {"    block_ptr(D) p = make_block_ptr(x, n, 1, 0, 64, @1);\n", 0,
     "order must be a permutation of 0 .. 0", 0},
    {BP "    tile(D) v = load(p, n @> 0);\n", 0, "load of a block pointer takes no mask", 0},
    {BP "    store(p, 1.0f, n @> 0);\n", 0, "store of a block pointer takes no mask", 0},
    {BP "    p = @advance(p, 1, 2);\n", 0, "takes 1 offset (one per dim), not 2", 0},
#undef TD
#undef BP
    {"    tile(f32) j = @cat(zeros(f32, 4), zeros(f32, 8));\n", 0,
     "cat needs two tiles of one shape", 0},
    {"    tile(f32) j = cat(@1.0f, zeros(f32, 8));\n", 0, "cat needs a tile", 0},
    {"    f32 s = ravel(@1.0f);\n", 0, "ravel needs a tile", 0},
    {"    tile(i32) j = join(@x, x);\n", 0, "join joins numbers", 0},
    /* cache and eviction options: the right builtin, one per group */
    {"    tile(i32) r = arange(0, B);\n    tile(D) a = load(x + r, @cache_wb);\n", 0,
     "load takes no 'cache_wb'", 0},
    {"    tile(i32) r = arange(0, B);\n    store(x + r, load(y + r), r < n, @cache_cv);\n", 0,
     "store takes no 'cache_cv'", 0},
    {"    tile(i32) r = arange(0, B);\n    tile(D) a = load(x + r, cache_cg, @cache_ca);\n", 0,
     "a second cache (cache_*) option", 0},
    {"    tile(i32) r = arange(0, B);\n    tile(D) a = atomic_add(x + r, 1, @evict_last);\n",
     0, "atomic_add takes no eviction (evict_*) option", 0},
    {"    tile(i32) r = arange(0, B);\n    tile(D) a = exp(load(y + r), @cache_cg);\n", 0,
     "is an option of load and store", 0},
    {"    tile(f32) a = zeros(f32, 64) @+ zeros(f32, 32);\n", 0, "shape mismatch", 0},
    {"    tile(f32) a = zeros(f32, 64);\n    a @= zeros(f32, 32);\n", 0, "shape mismatch", 0},
    {"    tile(f16) a = @zeros(f32, 64);\n", 0, "dtype mismatch", 0},
    {"    tile(D) a = @zeros(f32, 64);\n", "D=f16,B=128", "dtype mismatch", 0},
    {"    tile(i32) r = arange(0, @n);\n", 0, "non-constant tile size", 0},
    {"    tile(i32) r = @arange(0, 100);\n", 0, "not a power of two", 0},
    {"    tile(i32) r = @arange(0, B);\n", "D=f32,B=100", "not a power of two", 0},
    {"    tile(f32) z = zeros(f32, @48);\n", 0, "not a power of two", 0},
    {"    tile(f32) z = @zeros(f32, 2048, 1024);\n", 0, "exceeds the limit", 0},
    {"    tile(i32) r = arange(0, 16);\n    if (r @< 8) { }\n", 0, "condition must be a scalar", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(f32) e = exp(@r);\n", 0, "floating-point", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(f32) e = asin(@r);\n", 0, "floating-point", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(f32) e = atan2(@r, 1.0f);\n", 0,
     "atan2 needs floating-point operands", 0},
    {"    f32 e = @atan2(1.0f);\n", 0, "'atan2' takes 2 arguments", 0},
    {"    f32 a = 1.0f;\n    f32 b = a @& a;\n", 0, "'&' needs integer", 0},
    {"    i32 r = @arange(0, 16);\n", 0, "is a scalar", 0},
    {"    tile(f32) t = @1.0f;\n", 0, "from a scalar", 0},
    {"    i32 v;\n    i32 w = @v + 1;\n", 0, "used before it is assigned", 0},
    {"    i32 v;\n    if (n > 0) { v = 1; }\n    i32 w = @v;\n", 0, "used before it is assigned", 0},
    {"    tile(f32) a = zeros(f32, 32, 16);\n    tile(f32) b = zeros(f32, 32, 16);\n"
     "    tile(f32) c = @dot(a, b);\n", 0, "inner dims differ", 0},
    {"    tile(f16) a = zeros(f16, 16, 16);\n    tile(f32) b = zeros(f32, 16, 16);\n"
     "    tile(f32) c = @dot(a, b);\n", 0, "dtype mismatch", 0},
    {"    tile(f32) a = zeros(f32, 8, 16);\n    tile(f32) b = zeros(f32, 16, 16);\n"
     "    tile(f32) c = @dot(a, b);\n", 0, ">= 16", 0},
    {"    tile(f32) t;\n    @if (n > 0) { t = zeros(f32, 16); } else { t = zeros(f32, 32); }\n",
     0, "on one branch", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(D) v = load(x + r, @r);\n", 0, "mask must be bool", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(i32) v = load(@r);\n", 0, "needs a pointer", 0},
    {"    ptr(D) p = x @* 2;\n", 0, "not defined on pointers", 0},
    {"    ptr(D) p = x @+ 1.5;\n", 0, "offsets must be integers", 0},
    {"    ptr(i32) p = @(ptr(i32)) n;\n", 0, "only an i64 or u64 address can become a pointer, not i32", 0},
    {"    i32 a = @(i32) x;\n", 0, "a pointer converts to i64 or u64 only, not i32", 0},
    {"    i64 a = @x;\n", 0, "cannot initialise 'a' (i64) with a pointer", 0},
    {"    tile(f32) z = zeros(f32, 16);\n    f32 s = sum(z, @1);\n", 0, "out of range", 0},
    {"    i32 p = program_id(@3);\n", 0, "grid axis", 0},
    {"    store(x, @x);\n", 0, "stores numbers", 0},
    {"    tile(i8) r = (tile(i8))arange(0, 16);\n    tile(i8) t = r @+ 300;\n", 0,
     "does not fit in i8", 0},
    {"    i32 z = 4 @/ 0;\n", 0, "division by zero", 0},
    {"    tile(i32) r = arange(0, 16);\n    @atomic_max(x + r, 1.0f);\n", "D=f16,B=128",
     "not available for f16", 0},
    {"    tile(f32) z = zeros(f32, 16);\n    tile(f32) t = trans(@z);\n", 0, "2-D", 0},
    {"    tile(f32) z = zeros(f32, 16);\n    tile(f32) t = @reshape(z, 32);\n", 0,
     "element count", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(i32) w = where(@r, r, r);\n", 0,
     "condition must be bool", 0},
    {"    tile(f32) t = @(tile(f32))1.0f;\n", 0, "cannot cast a scalar to a tile", 0},
    {"    tile(f32) z = zeros(f32, 16);\n    tile(f32) t = full(f32, @z, 16);\n", 0,
     "must be a number", 0},
    {"    f32 a = 1.0f;\n    f32 b = a @<< 1;\n", 0, "'<<' needs integer", 0},
    {"    i64 big = 1;\n    i32 small = @big;\n", 0, "dtype mismatch", 0},
    {"    u32 u = 1u;\n    i32 s = @u;\n", 0, "dtype mismatch", 0},
    {"    i32 k2 = 3;\n    f32 f = @k2;\n", 0, "dtype mismatch", 0},
    {"    tile(i32) r = arange(0, 16);\n    tile(f32) v = (f32)r;\n    tile(i32) w = @v;\n", 0,
     "dtype mismatch", 0},
    {"#include <teeny/dsl.h>\n"
     "f16 half(f16 a) { return a; }\n"
     "TEENY_KERNEL()\n"
     "void k(ptr(f16) x)\n"
     "{\n"
     "    store(x, half(@1.0f));\n"
     "}\n",
     "", "dtype mismatch", 1},
    {"#include <teeny/dsl.h>\n"
     "i32 comb(f32 a, f32 b) { return 0; }\n"
     "TEENY_KERNEL()\n"
     "void k(ptr(f32) x)\n"
     "{\n"
     "    store(x, reduce(zeros(f32, 16), 0, @comb));\n"
     "}\n",
     "", "must return a scalar f32", 1},
    {"#include <teeny/dsl.h>\n"
     "tile(f32) pick(i32 c)\n"
     "{\n"
     "    if (c > 0) { return zeros(f32, 16); }\n"
     "    return @zeros(f32, 32);\n"
     "}\n"
     "TEENY_KERNEL()\n"
     "void k(ptr(f32) x, i32 n)\n"
     "{\n"
     "    store(x + arange(0, 16), pick(n));\n"
     "}\n",
     "", "shape mismatch", 1},
    /* device_print, device_assert, static_assert (docs/dsl.md §5) */
    {"    device_print(@\"n %y\", n);\n", 0, "bad format for device_print: unknown conversion '%y'", 0},
    {"    device_print(@\"%d and %d\", n);\n", 0, "has 2 conversions, but 1 value follows", 0},
    {"    device_print(\"%d\", n, @n);\n", 0, "has 1 conversion, but 2 values follow", 0},
    {"    device_print(\"%d\", @1.5f);\n", 0, "'%d' prints an integer or bool, but this value is f32", 0},
    {"    device_print(\"%f\", @n);\n", 0, "'%f' prints a float (cast it: (f32)x), but this value is i32", 0},
    {"    device_print(@\"%ld\", n);\n", 0, "length modifiers are not needed", 0},
    {"    device_print(@\"%s\", n);\n", 0, "kernels have no strings to print", 0},
    {"    device_print(@\"%*d\", n);\n", 0, "'*' widths are not supported", 0},
    {"    device_print(\"%p\", @n);\n", 0, "'%p' prints a pointer", 0},
    {"    device_print(\"%d\", zeros(f32, 16) @+ 1.0f);\n", 0, "but this value is tile(f32)[16]", 0},
    {"    @device_print(\"%d %d\", arange(0, 16), arange(0, 32));\n", 0,
     "the tiles device_print prints do not broadcast", 0},
    {"    static_assert(B @< 100, \"B is too big\");\n", 0, "static assertion failed: B is too big", 0},
    {"    static_assert(n @> 0, \"positive\");\n", 0, "static_assert needs a condition known at compile time", 0},
    {"    device_assert(@x, \"a pointer\");\n", 0, "device_assert's condition must be a bool or a number", 0},
    {"    device_assert(n > 0, \"%f\", @n);\n", 0, "'%f' prints a float", 0},
    {"    device_assert(n > 0, \"%f\", @n);\n", "D=f32,B=128,teeny.debug=1", "'%f' prints a float", 0},
    /* structs (tuples) */
    {SDEF "    pair p = {1.0f, 2, @3};\n", "", "too many initializers for pair (2 fields)", 2},
    {SDEF "    pair p = {.a = 1.0f, .q = @2};\n", "", "pair has no field 'q'", 2},
    {SDEF "    pair p = {.b = 1, .a = 1.0f, .b = @2};\n", "", "field 'b' of pair is initialised twice", 2},
    {SDEF "    tile(pair) p = @{.b = arange(0, 16)};\n", "",
     "field 'a' of pair needs a value: a tile's shape has no zero here", 2},
    {SDEF "    pair p;\n    f32 y = p@.a;\n", "", "'p.a' is used before it is assigned", 2},
    {SDEF "    pair p = {1.0f, 2};\n    pair q = @p + p;\n", "", "a struct value (pair) cannot be used here", 2},
    {SDEF "    pair p;\n    p @= 1.0f;\n", "", "cannot assign to 'p' (pair) with f32", 2},
    {SDEF "    pair p = {1.0f, 2};\n    p @+= p;\n", "", "'p' is a struct (pair): only '=' assigns one", 2},
    {SDEF "    pair p = {1.0f, 2};\n    i32 k = 3;\n    k @= p;\n", "",
     "cannot assign to 'k' (i32) with a value of pair", 2},
    {SDEF "    pair p = {1.0f, @1.5f};\n", "", "dtype mismatch", 2},
    {SDEF "    pair p = {1.0f, 2};\n    f32 s = reduce(@p, 0, pick);\n", "",
     "reduce needs tiles, but field 'a' of pair is f32", 2},
    {SDEF "    tile(pair) t = {zeros(f32, 16), arange(0, 16)};\n"
     "    pair r = reduce(t, 0, @wrong);\n", "", "combine function 'wrong' must return pair, not f32", 2},
    {SDEF "    tile(pair) t = {zeros(f32, 16), arange(0, 16)};\n    tile(i32) r = arange(0, 16);\n"
     "    tile(pair) u = r > 3 @? t : t;\n", "", "'?:' between structs needs a scalar condition", 2},
    {SDEF "    pair p = {1.0f, 2};\n    pair q = p@.a;\n", "", "cannot initialise 'q' (pair) with f32", 2},
    /* a value returned inside a loop is carried out of it: what is
     * returned after the loop must have its shape */
    {"#include <teeny/dsl.h>\n"
     "tile(f32) pick(ptr(f32) x, i32 n)\n"
     "{\n"
     "    for (i32 i = 0; i < n; i++) {\n"
     "        if (load(x + i) > 0.0f) { return zeros(f32, 16); }\n"
     "    }\n"
     "    return @zeros(f32, 32);\n"
     "}\n"
     "TEENY_KERNEL()\n"
     "void k(ptr(f32) x, i32 n)\n"
     "{\n"
     "    store(x + arange(0, 16), pick(x, n));\n"
     "}\n",
     "", "shape mismatch", 1},
    {"#include <teeny/dsl.h>\n"
     "tile(f32) twice(tile(f32) t) { return t + t; }\n"
     "TEENY_KERNEL()\n"
     "void k(ptr(f32) x)\n"
     "{\n"
     "    store(x, twice(@1.0f));\n"
     "}\n",
     "", "from a scalar", 1},
};

/* Build the source of case c (without the '@'), and the marker's line:col. */
static char *case_source(const sema_case *c, int *line, int *col) {
  size_t n = strlen(PREFIX) + strlen(c->body) + 8;
  char *src = malloc(n);
  snprintf(src, n, "%s%s%s", c->whole ? "" : PREFIX, c->body, c->whole == 1 ? "" : "}\n");
  char *at = strchr(src, '@');
  ck_assert_msg(at != NULL, "case without marker: %s", c->body);
  *line = 1;
  *col = 1;
  for (char *p = src; p < at; p++) {
    if (*p == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
  memmove(at, at + 1, strlen(at + 1) + 1);
  return src;
}

/* Compile through spec + IR (no PTX); returns the code, fills d. */
static int compile_case(const char *src, const char *bindings, teeny_diags *d) {
  teeny_spec *s = NULL;
  int rc = ku_spec_src(src, strlen(src), "case.c", "k", bindings, &s, d);
  if (rc)
    return rc;
  teeny_artifact *a = NULL;
  rc = teeny_spec_compile(s, TEENY_EMIT_MLIR, &a, d);
  teeny_artifact_destroy(a);
  teeny_spec_destroy(s);
  return rc;
}

START_TEST(semantic_errors) {
  const sema_case *c = &bad[_i];
  int line, col;
  char *src = case_source(c, &line, &col);
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = compile_case(src, c->bindings ? c->bindings : "D=f32,B=128", &d);
  ck_assert_msg(rc == TEENY_E_COMPILE, "case %d: expected a compile error, got %s\n%s", _i,
                teeny_strerror(rc), src);
  ck_assert_msg(d.nerrors >= 1, "case %d: no diagnostic", _i);
  const teeny_diag *g = &d.v[0];
  ck_assert_msg(strstr(g->message, c->message) != NULL,
                "case %d: message '%s' lacks '%s'\n%s", _i, g->message, c->message, src);
  ck_assert_msg(g->line == line && g->col == col, "case %d: at %d:%d, expected %d:%d (%s)\n%s",
                _i, g->line, g->col, line, col, g->message, src);
  ck_assert_ptr_nonnull(g->source_line);
  teeny_diags_close(&d);
  free(src);
}
END_TEST

/* Programs that must compile: binding-dependent and promotion cases. */
static const char *const good_bodies[] = {
    /* widening implicit conversions */
    "    i32 a = 1;\n    i64 b = a;\n    bool t = true;\n    i32 c = t;\n"
    "    f16 h = (f16)1.5;\n    f32 f = h;\n    u8 u = (u8)3;\n    i16 s = u;\n",
    /* weak literals adopt the other operand's dtype */
    "    tile(i32) r = arange(0, 16);\n    tile(i8) q = (tile(i8))r + 1;\n"
    "    tile(f16) h = (tile(f16))r * 0.5;\n    store(x + r, (tile(D))h, r < n);\n",
    /* shapes from constant arithmetic and const locals */
    "    i32 half = B / 2;\n    tile(i32) r = arange(0, half * 2);\n"
    "    tile(f32) z = zeros(f32, B, half);\n    store(x + r, (tile(D))sum(z, 1), r < n);\n",
    /* a constant condition builds only the taken branch: the other is ill-typed */
    "    if (B > 1000) { tile(i32) bad = arange(0, 100); }\n"
    "    tile(i32) r = arange(0, B);\n    store(x + r, load(y + r, r < n), r < n);\n",
    /* early return, loops with carried tiles, while and do-while */
    "    i32 pid = program_id(0);\n    if (pid * B >= n) return;\n"
    "    tile(f32) acc = zeros(f32, B);\n    for (i32 i = 0; i < 4; i++) { acc += 1.0f; }\n"
    "    i32 j = 0;\n    while (j < 3) { acc = acc * 2.0f; j += 1; }\n"
    "    do { j -= 1; } while (j > 0);\n"
    "    tile(i32) r = pid * B + arange(0, B);\n    store(x + r, (tile(D))acc, r < n);\n",
    /* (void)x: evaluated and discarded, as C's idiom for an unused parameter */
    "    (void)n;\n    (void)y;\n    tile(i32) r = arange(0, B);\n    (void)(r + 1);\n"
    "    store(x + r, load(y + r), r < n);\n",
    /* cache and eviction options on loads and stores, scalar and tile */
    "    tile(i32) r = arange(0, B);\n    tile(D) a = load(y + r, r < n, 0, cache_cg, evict_last);\n"
    "    D s = load(y, cache_ca);\n    tile(D) b = load(y + r, evict_first, cache_cv);\n"
    "    store(x + r, a + b + s, r < n, cache_cs, evict_first);\n    store(x, s, cache_wt);\n"
    "    store(x + 1, s, cache_wb, evict_normal);\n",
    /* broadcasting row/col, 2-D reductions, argmax, cumsum, where, ternary */
    "    tile(i32) r = arange(0, 16);\n    tile(i32) m = col(r) * 16 + row(r);\n"
    "    tile(f32) v = (tile(f32))m;\n    tile(i32) am = argmax(v, 1);\n"
    "    tile(f32) cs = cumsum(v, 1);\n    tile(f32) w = where(m > 3, cs, 0.0f);\n"
    "    tile(f32) t = n > 0 ? w : v;\n    store(x + r, (tile(D))(sum(t, 0) + (tile(f32))am), r < n);\n",
};

START_TEST(programs_that_compile) {
  const char *bindings[] = {"D=f32,B=128", "D=f16,B=64", "D=bf16,B=16"};
  for (int b = 0; b < 3; b++) {
    size_t n = strlen(PREFIX) + strlen(good_bodies[_i]) + 8;
    char *src = malloc(n);
    snprintf(src, n, "%s%s}\n", PREFIX, good_bodies[_i]);
    teeny_diags d;
    teeny_diags_init(&d);
    int rc = compile_case(src, bindings[b], &d);
    if (rc)
      ku_print_diags(&d);
    ck_assert_msg(rc == 0, "good case %d [%s]: %s\n%s", _i, bindings[b], teeny_strerror(rc), src);
    teeny_diags_close(&d);
    free(src);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sema");
  TCase *tc = tcase_create("irgen");
  tcase_add_loop_test(tc, semantic_errors, 0, (int)(sizeof bad / sizeof *bad));
  tcase_add_loop_test(tc, programs_that_compile, 0,
                      (int)(sizeof good_bodies / sizeof *good_bodies));
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
