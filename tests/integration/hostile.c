/*
 * tests/integration/hostile.c — the hostile kernel generators and their
 * expected answers (see hostile.h).  "Big" sources are filled up to just
 * under the 1 MiB source limit.
 */
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teeny/error.h"
#include "tests/integration/hostile.h"

#define FILL (1000u * 1024) /* a big source: stay under 1 MiB */

typedef struct sb {
  char *p;
  size_t n, cap;
} sb;

static void sb_add(sb *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1)
      cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q)
      abort();
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void sb_puts(sb *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_printf(sb *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void sb_repeat(sb *b, const char *s, size_t times) {
  size_t n = strlen(s);
  for (size_t i = 0; i < times; i++)
    sb_add(b, s, n);
}

/* Repeat s until the source is about FILL bytes (leaving room for tail). */
static void sb_fill(sb *b, const char *s, size_t tail) {
  size_t n = strlen(s);
  while (b->n + n + tail < FILL)
    sb_add(b, s, n);
}

static char *sb_take(sb *b, size_t *len) {
  if (!b->p)
    sb_add(b, "", 0);
  *len = b->n;
  return b->p;
}

static const char HEAD[] = "#include <teeny/dsl.h>\n"
                           "TEENY_DTYPE(D);\n"
                           "TEENY_CONST(BLOCK_SIZE);\n";
static const char KERNEL[] =
    "TEENY_KERNEL(D, BLOCK_SIZE)\n"
    "void k(ptr(D) x_ptr, ptr(D) out_ptr, i32 n)\n"
    "{\n"
    "    i32 pid = program_id(0);\n"
    "    tile(i32) offs = pid * BLOCK_SIZE + arange(0, BLOCK_SIZE);\n"
    "    tile(bool) mask = offs < n;\n"
    "    tile(D) x = load(x_ptr + offs, mask, 0);\n";
static const char TAIL[] = "    store(out_ptr + offs, x, mask);\n}\n";

/* HEAD, extra (helpers), KERNEL, body, TAIL */
static void open_kernel(sb *b, const char *extra) {
  sb_puts(b, HEAD);
  if (extra)
    sb_puts(b, extra);
  sb_puts(b, KERNEL);
}

/* ---- generators ------------------------------------------------------------ */

static char *g_nest_parens(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_puts(&b, "    x = ");
  sb_repeat(&b, "(", 100000);
  sb_puts(&b, "x");
  sb_repeat(&b, ")", 100000);
  sb_puts(&b, ";\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_nest_blocks(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_repeat(&b, "{", 100000);
  sb_repeat(&b, "}", 100000);
  sb_puts(&b, "\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_op_chain(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_puts(&b, "    x = x");
  sb_fill(&b, " + x", 64);
  sb_puts(&b, ";\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_giant_tile(size_t *len) {
  sb b = {0};
  sb_puts(&b, HEAD);
  sb_puts(&b, "TEENY_KERNEL(D, BLOCK_SIZE)\n"
              "void k(ptr(D) x_ptr, ptr(D) out_ptr, i32 n)\n"
              "{\n"
              "    tile(i32) offs = arange(0, 1 << 24);\n"
              "    tile(D) x = load(x_ptr + offs, offs < n, 0);\n"
              "    store(out_ptr + offs, x, offs < n);\n"
              "}\n");
  return sb_take(&b, len);
}

/* The plain kernel, for bindings that are the problem. */
static char *g_plain(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_puts(&b, "    x = x * x + sin(x);\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_unrolled(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_puts(&b, "    tile(D) acc = x;\n");
  sb_repeat(&b, "    acc = acc * x + sin(acc);\n", 400);
  sb_puts(&b, "    x = acc;\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_straight(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_fill(&b, "    x = x * x + sin(x);\n", sizeof TAIL);
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_helper_calls(size_t *len) {
  sb b = {0};
  open_kernel(&b, "tile(D) h(tile(D) a) { return a * a + sin(a); }\n");
  sb_fill(&b, "    x = h(x);\n", sizeof TAIL);
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_helper_tree(size_t *len) {
  sb h = {0};
  sb_puts(&h, "tile(D) h0(tile(D) a) { return a * a + a; }\n");
  for (int i = 1; i < 40; i++)
    sb_printf(&h, "tile(D) h%d(tile(D) a) { return h%d(a) + h%d(a); }\n", i,
              i - 1, i - 1);
  sb b = {0};
  open_kernel(&b, h.p);
  sb_puts(&b, "    x = h39(x);\n");
  sb_puts(&b, TAIL);
  free(h.p);
  return sb_take(&b, len);
}

static char *g_helper_chain(size_t *len) {
  sb h = {0};
  sb_puts(&h, "tile(D) h0(tile(D) a) { return a * a + a; }\n");
  for (int i = 1; i < 200; i++)
    sb_printf(&h, "tile(D) h%d(tile(D) a) { return h%d(a); }\n", i, i - 1);
  sb b = {0};
  open_kernel(&b, h.p);
  sb_puts(&b, "    x = h199(x);\n");
  sb_puts(&b, TAIL);
  free(h.p);
  return sb_take(&b, len);
}

static char *g_recursion(size_t *len) {
  sb b = {0};
  open_kernel(&b, "tile(D) f(tile(D) a) { return f(a) + a; }\n");
  sb_puts(&b, "    x = f(x);\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_mutual(size_t *len) {
  sb b = {0};
  open_kernel(&b, "tile(D) f(tile(D) a) { return g(a) + a; }\n"
                  "tile(D) g(tile(D) a) { return f(a) * a; }\n");
  sb_puts(&b, "    x = f(x);\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_long_loop(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_puts(&b, "    for (i32 i = 0; i < 2000000000; i++) {\n"
              "        x = x * x + sin(x);\n"
              "    }\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_nested_loops(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  for (int i = 0; i < 60; i++)
    sb_printf(&b, "for (i32 j%d = 0; j%d < 1000000; j%d++) {\n", i, i, i);
  sb_puts(&b, "x = x * x + sin(x);\n");
  sb_repeat(&b, "}\n", 60);
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_empty_stmts(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_fill(&b, ";", sizeof TAIL);
  sb_puts(&b, "\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_many_vars(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  for (unsigned i = 0; b.n + 64 < FILL; i++)
    sb_printf(&b, "    tile(D) v%u = x;\n", i);
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_many_helpers(size_t *len) {
  sb b = {0};
  sb_puts(&b, HEAD);
  for (unsigned i = 0; b.n + 1024 < FILL; i++)
    sb_printf(&b, "tile(D) h%u(tile(D) a) { return a + a; }\n", i);
  sb_puts(&b, KERNEL);
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_long_name(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_puts(&b, "    tile(D) ");
  sb_repeat(&b, "v", 100000);
  sb_puts(&b, " = x;\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_many_errors(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  sb_fill(&b, "    x = nosuch;\n", sizeof TAIL);
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

static char *g_over_limit(size_t *len) {
  sb b = {0};
  open_kernel(&b, NULL);
  while (b.n <= (1u << 20))
    sb_puts(&b, "    /* padding padding padding padding padding */\n");
  sb_puts(&b, TAIL);
  return sb_take(&b, len);
}

/* ---- the table -------------------------------------------------------------- */

#define B1024 {"D=f32", "BLOCK_SIZE=1024", NULL}
#define OK 0
#define CE TEENY_E_COMPILE

const hostile_case hostile_cases[] = {
    {"nest_parens", "x = ((((...x...)))) 100 000 deep", g_nest_parens, "k",
     B1024, 0, CE, CE, CE, "nesting too deep", false},
    {"nest_blocks", "{{{{...}}}} 100 000 deep", g_nest_blocks, "k", B1024, 0,
     CE, CE, CE, "nesting too deep", false},
    {"op_chain_1m", "x = x + x + ... (1 MiB, 256k operators)", g_op_chain,
     "k", B1024, 0, CE, CE, CE, "nesting too deep", true},
    {"giant_tile", "arange(0, 1 << 24)", g_giant_tile, "k", B1024, 0, OK, CE,
     CE, "exceeds the limit", false},
    {"tile_per_thread", "BLOCK_SIZE=1<<20 with 4 warps (8192 values/thread)",
     g_plain, "k", {"D=f32", "BLOCK_SIZE=1048576", NULL}, 0, OK, OK,
     TEENY_E_UNSUPPORTED, "values per thread", false},
    {"unrolled_max_tile",
     "400 unrolled tile statements, 131072-element tiles (1024 values/thread)",
     g_unrolled, "k", {"D=f32", "BLOCK_SIZE=131072", NULL}, 4, OK, OK,
     TEENY_E_TIMEOUT, "time budget", false},
    {"straight_1m", "1 MiB of x = x * x + sin(x); (43k statements)",
     g_straight, "k", B1024, 0, OK, OK, TEENY_E_TIMEOUT, "time budget", true},
    {"helper_calls_1m", "1 MiB of x = h(x); (73k inlined calls)",
     g_helper_calls, "k", B1024, 0, OK, OK, TEENY_E_TIMEOUT, "time budget",
     true},
    {"helper_tree", "h39 -> 2 x h38 -> ... (2^39 inlined calls)",
     g_helper_tree, "k", B1024, 0, OK, CE, CE, "IR operations", false},
    {"helper_chain", "h199 -> h198 -> ... -> h0 (200 deep)", g_helper_chain,
     "k", B1024, 0, OK, CE, CE, "nested too deeply", false},
    {"recursion", "f calls f", g_recursion, "k", B1024, 0, CE, CE, CE,
     "recursive call", false},
    {"mutual_recursion", "f calls g calls f", g_mutual, "k", B1024, 0, CE, CE,
     CE, "recursive call", false},
    {"long_loop", "for i < 2 000 000 000 (not unrolled)", g_long_loop, "k",
     B1024, 0, OK, OK, OK, NULL, false},
    {"nested_loops", "60 nested loops of 10^6 iterations", g_nested_loops,
     "k", B1024, 0, OK, OK, OK, NULL, false},
    {"empty_stmts_1m", "1 MiB of ';' (a million tokens)", g_empty_stmts, "k",
     B1024, 0, OK, OK, OK, NULL, true},
    {"many_vars_1m", "1 MiB of tile(D) vN = x; (45k variables)", g_many_vars,
     "k", B1024, 0, OK, OK, OK, NULL, true},
    {"many_helpers_1m", "1 MiB of unused helpers (24k functions)",
     g_many_helpers, "k", B1024, 0, OK, OK, OK, NULL, true},
    {"long_name", "a 100 000-character identifier", g_long_name, "k", B1024, 0,
     CE, CE, CE, "too long", false},
    {"many_errors_1m", "1 MiB of x = nosuch; (60k errors)", g_many_errors,
     "k", B1024, 0, CE, CE, CE, "nosuch", true},
    {"source_over_limit", "1 MiB + a line of source", g_over_limit, "k",
     B1024, 0, TEENY_E_LIMIT, TEENY_E_LIMIT, TEENY_E_LIMIT, "source", true},
};
const size_t hostile_ncases = sizeof hostile_cases / sizeof *hostile_cases;

static void pk_str(msgpack_packer *pk, const char *s) {
  msgpack_pack_str(pk, strlen(s));
  msgpack_pack_str_body(pk, s, strlen(s));
}

int hostile_frame(const hostile_case *hc, const char *src, size_t n,
                  uint64_t id, char **out, size_t *len) {
  msgpack_sbuffer mb;
  msgpack_packer pk;
  msgpack_sbuffer_init(&mb);
  msgpack_packer_init(&pk, &mb, msgpack_sbuffer_write);
  size_t nd = 0, nc = 0;
  for (size_t i = 0; hc->bindings[i]; i++) {
    const char *v = strchr(hc->bindings[i], '=') + 1;
    if ((*v >= '0' && *v <= '9') || *v == '-')
      nc++;
    else
      nd++;
  }
  msgpack_pack_map(&pk, 7);
  pk_str(&pk, "op");
  pk_str(&pk, "compile");
  pk_str(&pk, "id");
  msgpack_pack_uint64(&pk, id);
  pk_str(&pk, "source");
  msgpack_pack_bin(&pk, n);
  msgpack_pack_bin_body(&pk, src, n);
  pk_str(&pk, "kernel");
  pk_str(&pk, hc->kernel);
  pk_str(&pk, "num_warps");
  msgpack_pack_uint32(&pk, (uint32_t)hc->num_warps);
  for (int pass = 0; pass < 2; pass++) {
    pk_str(&pk, pass ? "consts" : "dtypes");
    msgpack_pack_map(&pk, pass ? nc : nd);
    for (size_t i = 0; hc->bindings[i]; i++) {
      const char *b = hc->bindings[i], *v = strchr(b, '=') + 1;
      bool is_const = (*v >= '0' && *v <= '9') || *v == '-';
      if (is_const != (pass == 1))
        continue;
      msgpack_pack_str(&pk, (size_t)(v - 1 - b));
      msgpack_pack_str_body(&pk, b, (size_t)(v - 1 - b));
      if (is_const)
        msgpack_pack_int64(&pk, atoll(v));
      else
        pk_str(&pk, v);
    }
  }
  *len = mb.size + 4;
  *out = malloc(*len);
  if (!*out) {
    msgpack_sbuffer_destroy(&mb);
    return -1;
  }
  (*out)[0] = (char)(mb.size >> 24);
  (*out)[1] = (char)(mb.size >> 16);
  (*out)[2] = (char)(mb.size >> 8);
  (*out)[3] = (char)mb.size;
  memcpy(*out + 4, mb.data, mb.size);
  msgpack_sbuffer_destroy(&mb);
  return 0;
}

const hostile_case *hostile_find(const char *name) {
  for (size_t i = 0; i < hostile_ncases; i++)
    if (strcmp(hostile_cases[i].name, name) == 0)
      return &hostile_cases[i];
  return NULL;
}
