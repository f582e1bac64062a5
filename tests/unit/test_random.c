/*
 * tests/unit/test_random.c — rand, randn, randint (dsl/irgen_random.c)
 * against a plain-C Philox written here from the algorithm's definition
 * (4x32 and 4x64, 10 rounds, Triton's key and round constants), for
 * assorted seeds (beyond 2^32 too) and offsets (negative, 64-bit): the
 * interpreter must match bit for bit (randn within the accuracy of log,
 * sqrt and cos), and the code generator on the emulator must match the
 * interpreter bit for bit.  tests/gpu/check.py compares with Triton's own
 * tl.rand on the GPU.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_util.h"

static void philox32(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    uint32_t c0 = c[0], c2 = c[2];
    c[0] = (uint32_t)(((uint64_t)0xCD9E8D57u * c2) >> 32) ^ c[1] ^ k0;
    c[2] = (uint32_t)(((uint64_t)0xD2511F53u * c0) >> 32) ^ c[3] ^ k1;
    c[1] = 0xCD9E8D57u * c2;
    c[3] = 0xD2511F53u * c0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

static void philox64(uint64_t c[4], uint64_t k0, uint64_t k1) {
  const uint64_t A = 0xD2E7470EE14C6C93ull, B = 0xCA5A826395121157ull;
  for (int r = 0; r < 10; r++) {
    uint64_t c0 = c[0], c2 = c[2];
    c[0] = (uint64_t)(((unsigned __int128)B * c2) >> 64) ^ c[1] ^ k0;
    c[2] = (uint64_t)(((unsigned __int128)A * c0) >> 64) ^ c[3] ^ k1;
    c[1] = B * c2;
    c[3] = A * c0;
    k0 += 0x9E3779B97F4A7C15ull;
    k1 += 0xBB67AE8584CAA73Bull;
  }
}

static float uniform32(uint32_t w) {
  int32_t x = (int32_t)w;
  if (x < 0)
    x = (int32_t)(-(int64_t)x - 1);
  return (float)x * 4.6566127342e-10f;
}

static const char src[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(u32) ri, ptr(f32) r, ptr(f32) rn, i64 seed, i32 base)\n"
    "{ tile(i32) o = base + program_id(0) * B + arange(0, B);\n"
    "  tile(i32) at = program_id(0) * B + arange(0, B);\n"
    "  store(ri + at, randint(seed, o)); store(r + at, rand(seed, o));\n"
    "  store(rn + at, randn(seed, o)); }\n"
    "TEENY_KERNEL(B)\n"
    "void k64(ptr(u64) ri, ptr(f32) r, i64 seed, i64 base)\n"
    "{ tile(i64) o = base + (i64)(program_id(0) * B + arange(0, B));\n"
    "  tile(i32) at = program_id(0) * B + arange(0, B);\n"
    "  store(ri + at, randint(seed, o)); store(r + at, rand(seed, o)); }\n"
    "typedef struct { tile(u32) w0, w1, w2, w3; } words;\n"
    "TEENY_KERNEL(B)\n"
    "void k4(ptr(u32) out, i64 seed, i32 base)\n"
    "{ tile(i32) at = program_id(0) * B + arange(0, B);\n"
    "  words w = randint4x(seed, base + at, words);\n"
    "  store(out + 4 * at, w.w0); store(out + 4 * at + 1, w.w1);\n"
    "  store(out + 4 * at + 2, w.w2); store(out + 4 * at + 3, w.w3); }\n";

static teeny_spec *spec(const char *kernel, const char *target) {
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  teeny_const_binding cb = {"B", 256};
  req.source = src, req.source_len = strlen(src), req.kernel = kernel;
  req.consts = &cb, req.nconsts = 1, req.target = target, req.num_warps = 4;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = teeny_spec_create(&req, &s, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_int_eq(rc, 0);
  teeny_diags_close(&d);
  return s;
}

static void run(teeny_spec *s, bool emu, teeny_interp_arg *a, size_t n, unsigned grid) {
  unsigned g[3] = {grid, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = emu ? teeny_spec_emulate(s, g, a, n, &d) : teeny_spec_interpret(s, g, a, n, &d);
  if (rc)
    ku_print_diags(&d);
  ck_assert_msg(rc == 0, "%s: %s", emu ? "emulate" : "interpret", teeny_strerror(rc));
  teeny_diags_close(&d);
}

enum { N = 1024 };

START_TEST(philox_4x32_matches) {
  static const long long seeds[] = {0, 1, 123, -7, 0x1234567890ll, 0x7fffffffffffffffll};
  static const int bases[] = {0, -512, 2147482624};
  for (size_t si = 0; si < sizeof seeds / sizeof *seeds; si++)
    for (size_t bi = 0; bi < sizeof bases / sizeof *bases; bi++) {
      teeny_spec *s = spec("k", "sm_90a");
      static uint32_t ri[N], ri2[N];
      static float r[N], r2[N], rn[N], rn2[N];
      teeny_interp_arg a[5];
      memset(a, 0, sizeof a);
      a[0].data = ri, a[0].bytes = sizeof ri;
      a[1].data = r, a[1].bytes = sizeof r;
      a[2].data = rn, a[2].bytes = sizeof rn;
      a[3].v.i = seeds[si];
      a[4].v.i = bases[bi];
      run(s, false, a, 5, N / 256);
      uint64_t seed = (uint64_t)seeds[si];
      for (int i = 0; i < N; i++) {
        uint32_t c[4] = {(uint32_t)(bases[bi] + i), 0, 0, 0};
        philox32(c, (uint32_t)seed, (uint32_t)(seed >> 32));
        ck_assert_msg(ri[i] == c[0], "randint seed %lld offset %d: %u, want %u", seeds[si],
                      bases[bi] + i, ri[i], c[0]);
        ck_assert_msg(r[i] == uniform32(c[0]), "rand [%d] = %.9g, want %.9g", i, r[i],
                      uniform32(c[0]));
        ck_assert(r[i] >= 0.0f && r[i] < 1.0f);
        double u1 = fmax(1.0e-7, uniform32(c[0])), u2 = uniform32(c[1]);
        double n = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        ck_assert_msg(fabs(rn[i] - n) <= 1e-5 * (1 + fabs(n)), "randn [%d] = %.9g, want %.9g",
                      i, rn[i], n);
      }
      a[0].data = ri2, a[1].data = r2, a[2].data = rn2;
      run(s, true, a, 5, N / 256);
      ck_assert(memcmp(ri, ri2, sizeof ri) == 0);
      ck_assert(memcmp(r, r2, sizeof r) == 0);
      for (int i = 0; i < N; i++) /* log/cos: our GPU code against libm, a few ulp */
        ck_assert_msg(fabsf(rn[i] - rn2[i]) <= 2e-6f * (1 + fabsf(rn[i])), "randn emu [%d]", i);
      teeny_spec_destroy(s);
    }
}
END_TEST

/* randint4x: all four words of Philox-4x32, in the interpreter and on the
 * emulator (Triton's tl.randint4x). */
START_TEST(randint4x_gives_all_words) {
  static uint32_t out[4 * N], out2[4 * N];
  for (int t = 0; t < 2; t++) {
    teeny_spec *s = spec("k4", t ? "sm_80" : "sm_90a");
    teeny_interp_arg a[3];
    memset(a, 0, sizeof a);
    a[0].data = out, a[0].bytes = sizeof out;
    a[1].v.i = 0x1234567890ll;
    a[2].v.i = -300;
    run(s, false, a, 3, N / 256);
    for (int i = 0; i < N; i++) {
      uint32_t c[4] = {(uint32_t)(i - 300), 0, 0, 0};
      philox32(c, 0x34567890u, 0x12u);
      for (int w = 0; w < 4; w++)
        ck_assert_msg(out[4 * i + w] == c[w], "randint4x word %d at %d: %u, want %u", w, i,
                      out[4 * i + w], c[w]);
    }
    a[0].data = out2;
    run(s, true, a, 3, N / 256);
    ck_assert(memcmp(out, out2, sizeof out) == 0);
    teeny_spec_destroy(s);
  }
}
END_TEST

START_TEST(philox_4x64_matches) {
  teeny_spec *s = spec("k64", "sm_80");
  static uint64_t ri[N], ri2[N];
  static float r[N], r2[N];
  teeny_interp_arg a[4];
  memset(a, 0, sizeof a);
  a[0].data = ri, a[0].bytes = sizeof ri;
  a[1].data = r, a[1].bytes = sizeof r;
  a[2].v.i = 0x0123456789abcdefll;
  a[3].v.i = 0x7ffffffffffffe00ll;
  run(s, false, a, 4, N / 256);
  for (int i = 0; i < N; i++) {
    uint64_t c[4] = {0x7ffffffffffffe00ull + (uint64_t)i, 0, 0, 0}; /* wraps past 2^63 */
    philox64(c, 0x0123456789abcdefull, 0);
    ck_assert_msg(ri[i] == c[0], "randint64 [%d]: %llu, want %llu", i, (unsigned long long)ri[i],
                  (unsigned long long)c[0]);
    int64_t x = (int64_t)c[0];
    if (x < 0)
      x = -x - 1;
    ck_assert(r[i] == (float)x * 1.0842020432385337e-19f);
  }
  a[0].data = ri2, a[1].data = r2;
  run(s, true, a, 4, N / 256);
  ck_assert(memcmp(ri, ri2, sizeof ri) == 0 && memcmp(r, r2, sizeof r) == 0);
  teeny_spec_destroy(s);
}
END_TEST

START_TEST(misuse_is_diagnosed) {
  static const char *const bad[][2] = {
      {"void k(ptr(f32) x) { store(x, rand(1.5f, 0)); }", "the seed of rand must be an integer"},
      {"void k(ptr(f32) x) { store(x, rand(1, (i8)3)); }", "the offsets of rand must be"},
      {"void k(ptr(u32) x) { store(x, bitcast(1.0f, u64)); }", "the widths differ"},
      {"void k(ptr(u32) x) { store(x, bitcast(1.0, u32)); }", "a definite dtype"},
      {"void k(ptr(u32) x) { store(x, umulhi(1.0f, 2u)); }", "umulhi multiplies integers"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[512];
    snprintf(text, sizeof text, "#include <teeny/dsl.h>\nTEENY_KERNEL()\n%s\n", bad[i][0]);
    teeny_compile_req req;
    memset(&req, 0, sizeof req);
    req.source = text, req.source_len = strlen(text), req.kernel = "k";
    teeny_diags d;
    teeny_diags_init(&d);
    teeny_spec *s = NULL;
    teeny_artifact *art = NULL;
    int rc = teeny_spec_create(&req, &s, &d);
    if (!rc)
      rc = teeny_spec_compile(s, TEENY_EMIT_MLIR, &art, &d);
    char msg[1024] = "";
    if (d.n)
      teeny_diag_format(&d.v[0], msg, sizeof msg);
    ck_assert_msg(rc != 0 && strstr(msg, bad[i][1]), "%s: got '%s'", bad[i][0], msg);
    teeny_artifact_destroy(art);
    teeny_spec_destroy(s);
    teeny_diags_close(&d);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("random");
  TCase *tc = tcase_create("all");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, philox_4x32_matches);
  tcase_add_test(tc, philox_4x64_matches);
  tcase_add_test(tc, randint4x_gives_all_words);
  tcase_add_test(tc, misuse_is_diagnosed);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
