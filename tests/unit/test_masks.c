/*
 * tests/unit/test_masks.c — masks through the vector fast path of loads
 * and stores.  A group of a thread's consecutive elements is loaded or
 * stored with one vector access when the mask is true for all of them;
 * the code generator tests one element only where its analysis proves the
 * mask constant or monotone over the group (dsl/nvptx/analysis.c).  These
 * kernels compare runs of consecutive values that wrap in the comparison's
 * dtype (unsigned below 0, signed past INT_MAX, narrow casts), where such a
 * proof would be wrong: every masked-off element must keep `other` and be
 * left unwritten, as in the interpreter (difffuzz's
 * mask_unsigned_compare_row, and the class around it).
 */
#include <check.h>
#include <limits.h>
#include <stdint.h>

#include "kernel_run.h"

/* Row r of out is a load of iota x masked by one comparison of a wrapping
 * run (other: 7), stored under a second wrapping mask in rows 1 and 6. */
static const char wrap_1d[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(u32) x, ptr(u32) out, i32 s)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  store(out + o, load(x + o, ((u64) 0) < ((u64) (o - 10)), 7));\n"
    "  store(out + B + o, load(x + o, ((u32) (o - 3)) >= ((u32) 2), 7),\n"
    "        ((u32) (o - 5)) > ((u32) 1));\n"
    "  store(out + 2 * B + o, load(x + o, o + s < 0, 7));\n"
    "  store(out + 3 * B + o, load(x + o, o + s > s, 7));\n"
    "  store(out + 4 * B + o, load(x + o, ((i64) ((u32) (o - 10))) < 5, 7));\n"
    "  store(out + 5 * B + o, load(x + o, ((i8) (o + 120)) < 0, 7));\n"
    "  store(out + 6 * B + o, load(x + o), ((i16) (o + 32766)) >= 0); }\n";

/* The model's answer, element e of row r (s = INT_MAX - 9). */
static uint32_t want_1d(int r, int e) {
  bool m = true;
  switch (r) {
  case 0: m = (uint64_t)(int64_t)(e - 10) > 0; break;
  case 1: m = (uint32_t)(e - 3) >= 2; break;
  case 2: m = e >= 10; break;          /* INT_MAX - 9 + e wraps from e = 10 */
  case 3: m = e >= 1 && e < 10; break;
  case 4: m = e >= 10 && e < 15; break;
  case 5: m = (e + 120) % 256 >= 128; break;
  default: m = true; break;
  }
  return m ? (uint32_t)e : 7;
}

static void check_1d(void **out) {
  const uint32_t *o = out[1];
  for (int r = 0; r < 6; r++)
    for (int e = 0; e < 512; e++) {
      bool stored = r != 1 || (uint32_t)(e - 5) > 1;
      uint32_t want = stored ? want_1d(r, e) : 0xffffffffu;
      ck_assert_msg(o[r * 512 + e] == want, "row %d [%d] = %u, the model says %u", r, e,
                    o[r * 512 + e], want);
    }
  for (int e = 0; e < 512; e++) { /* i16 o + 32766 wraps from e = 2 to e = 65538 */
    uint32_t want = e < 2 ? (uint32_t)e : 0xffffffffu;
    ck_assert_msg(o[6 * 512 + e] == want, "row 6 [%d] = %u, the model says %u", e,
                  o[6 * 512 + e], want);
  }
}

START_TEST(wrapping_runs_1d) {
  kcase c = {"wrap_1d.c", wrap_1d, "k", "B=512", 1, {{512, 1}, {7 * 512, 3}}, {INT_MAX - 9}};
  kr_run_everywhere(&c, check_1d);
}
END_TEST

/* The reproducer's shape: a row mask broadcast over a 2-D tile. */
static const char wrap_2d[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(BM); TEENY_CONST(BN);\n"
    "TEENY_KERNEL(BM, BN)\n"
    "void k(ptr(u32) x, ptr(u32) out, i32 s)\n"
    "{ tile(i32) c = row(arange(0, BN));\n"
    "  tile(i32) o = col(arange(0, BM)) * BN + c;\n"
    "  store(out + o, load(x + o, ((u64) 0) < ((u64) (c - 10)), 7));\n"
    "  store(out + BM * BN + o, load(x + o, c + s < 0, 7)); }\n";

static void check_2d(void **out) {
  const uint32_t *o = out[1];
  for (int i = 0; i < 4 * 64; i++) {
    int e = i % 64;
    uint32_t w0 = e == 10 ? 7 : (uint32_t)i, w1 = e >= 10 ? (uint32_t)i : 7;
    ck_assert_msg(o[i] == w0, "[%d] = %u, the model says %u", i, o[i], w0);
    ck_assert_msg(o[256 + i] == w1, "[%d] = %u, the model says %u", 256 + i, o[256 + i], w1);
  }
}

START_TEST(wrapping_runs_2d) {
  kcase c = {"wrap_2d.c", wrap_2d, "k", "BM=4,BN=64", 1, {{256, 1}, {512, 0}}, {INT_MAX - 9}};
  kr_run_everywhere(&c, check_2d);
}
END_TEST

/* cp.async groups under a loop-invariant mask (dsl/nvptx/mem.c
 * teeny__cg_async_whole_ok): A masked along its vector axis k by `rk <
 * KV` in every k tile, B along n by `rn < NV` and the k bound.  Where KV
 * and NV are multiples of 8 the version test lets the fast copy copy each
 * group whole or zero-fill it; where they are not (37, 45), a group is
 * partly masked and the block must take the general copy, whose fallback
 * keeps the masked-off elements 0: copying such a group whole would add
 * A's columns 37..39 into the dot.  K = 200 ends in a partial k tile. */
#define INV_MASK_KERNEL(BMASK)                                                          \
  "#include <teeny/dsl.h>\n"                                                            \
  "TEENY_CONST(BM); TEENY_CONST(BN); TEENY_CONST(BK);\n"                                \
  "TEENY_KERNEL(BM, BN, BK)\n"                                                          \
  "void k(ptr(f16) a_ptr, ptr(f16) b_ptr, ptr(f32) c_ptr, i32 K, i32 KV, i32 NV,\n"     \
  "       i32 sa, i32 sb)\n"                                                            \
  "{ tile(i32) rm = arange(0, BM), rn = arange(0, BN), rk = arange(0, BK);\n"           \
  "  tile(ptr(f16)) a = a_ptr + col(rm) * sa + row(rk);\n"                              \
  "  tile(ptr(f16)) b = b_ptr + col(rk) * sb + row(rn);\n"                              \
  "  tile(f32) acc = zeros(f32, BM, BN);\n"                                             \
  "  for (i32 k = 0; k < K; k += BK) {\n"                                               \
  "    acc = dot(load(a, row(rk) < KV, 0), load(b, " BMASK " & (col(rk) < K - k), 0),\n" \
  "              acc);\n"                                                               \
  "    a += BK;\n"                                                                      \
  "    b += BK * sb;\n"                                                                 \
  "  }\n"                                                                               \
  "  store(c_ptr + col(rm) * BN + row(rn), acc); }\n"

static const char inv_mask[] = INV_MASK_KERNEL("(row(rn) < NV)");
static const char inv_mask_nonmono[] = INV_MASK_KERNEL("(row(rn) != NV)");

static long long inv_k, inv_kv, inv_nv;

/* The model's c: sum over k < K with k % 64 < KV of a[m][k] * b[k][n],
 * n < NV (the fills are i % 7 - 3, so every sum is exact). */
static void check_inv_mask(void **out) {
  const float *c = out[2];
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < 64; n++) {
      double want = 0;
      for (long k = 0; k < inv_k && n < inv_nv; k++)
        if (k % 64 < inv_kv) {
          long ia = m * 256L + k, ib = k * 72L + n;
          want += (double)(ia % 7 - 3) * (double)(ib % 7 - 3);
        }
      ck_assert_msg(c[m * 64 + n] == (float)want, "c[%d][%d] = %g, the model says %g (K %lld, KV %lld, NV %lld)",
                    m, n, c[m * 64 + n], want, inv_k, inv_kv, inv_nv);
    }
}

START_TEST(loop_invariant_masks_over_copy_groups) {
  static const long long cases[][3] = {{192, 40, 48}, {192, 37, 45}, {192, 40, 45}, {200, 64, 56},
                                       {200, 16, 64}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    inv_k = cases[i][0];
    inv_kv = cases[i][1];
    inv_nv = cases[i][2];
    kcase c = {"inv_mask.c", inv_mask, "k", "BM=64,BN=64,BK=64", 1,
               {{64 * 256, 2}, {inv_k * 72, 2}, {64 * 64, 0}},
               {inv_k, inv_kv, inv_nv, 256, 72}};
    kr_run_everywhere(&c, check_inv_mask);
  }
  /* the fast copy of the monotone mask has no per-element fallback (16-bit
   * loads): fewer of them than where the mask is not monotone */
  char *mono = kr_text(inv_mask, "k", "BM=64,BN=64,BK=64", "sm_90a");
  char *other = kr_text(inv_mask_nonmono, "k", "BM=64,BN=64,BK=64", "sm_90a");
  int nm = kr_count(mono, "ld.global.nc.b16"), no = kr_count(other, "ld.global.nc.b16");
  free(mono);
  free(other);
  ck_assert_msg(nm < no, "%d per-element loads with a monotone invariant mask, %d without", nm, no);
}
END_TEST

/* Triton tutorial 03's k loop: `for k in range(0, cdiv(K, BK))` with
 * the k bound as the only mask of A and B (`rk < K - k * BK`), which the
 * fast copy splits with no invariant part (full k tiles unmasked, the
 * partial last one masked): K = 200 ends in a tile of 8, K = 192 has none,
 * K = 40 has only the partial one.  B rows 72 wide, A rows 256. */
static const char tutorial03_k[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(BM); TEENY_CONST(BN); TEENY_CONST(BK);\n"
    "TEENY_KERNEL(BM, BN, BK)\n"
    "void k(ptr(f16) a_ptr, ptr(f16) b_ptr, ptr(f32) c_ptr, i32 K, i32 sa, i32 sb)\n"
    "{ tile(i32) rm = arange(0, BM), rn = arange(0, BN), rk = arange(0, BK);\n"
    "  tile(ptr(f16)) a = a_ptr + col(rm) * sa + row(rk);\n"
    "  tile(ptr(f16)) b = b_ptr + col(rk) * sb + row(rn);\n"
    "  tile(f32) acc = zeros(f32, BM, BN);\n"
    "  for (i32 k = 0; k < cdiv(K, BK); k++) {\n"
    "    tile(f16) av = load(a, row(rk) < K - k * BK, 0);\n"
    "    tile(f16) bv = load(b, col(rk) < K - k * BK, 0);\n"
    "    acc = dot(av, bv, acc);\n"
    "    a += BK;\n"
    "    b += BK * sb;\n"
    "  }\n"
    "  store(c_ptr + col(rm) * BN + row(rn), acc); }\n";

static void check_tutorial03_k(void **out) {
  const float *c = out[2];
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < 64; n++) {
      double want = 0;
      for (long k = 0; k < inv_k; k++)
        want += (double)((m * 256L + k) % 7 - 3) * (double)((k * 72L + n) % 7 - 3);
      ck_assert_msg(c[m * 64 + n] == (float)want, "c[%d][%d] = %g, the model says %g (K %lld)", m,
                    n, c[m * 64 + n], want, inv_k);
    }
}

START_TEST(tutorial03_k_bound_alone) {
  static const long long ks[] = {200, 192, 40};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    inv_k = ks[i];
    kcase c = {"tutorial03_k.c", tutorial03_k, "k", "BM=64,BN=64,BK=64", 1,
               {{64 * 256, 2}, {inv_k * 72, 2}, {64 * 64, 0}}, {inv_k, 256, 72}};
    kr_run_everywhere(&c, check_tutorial03_k);
  }
}
END_TEST

/* Pointers off 16 bytes (teeny.unaligned names them all): every buffer
 * of the emulator's run starts `shift` elements (1 or 3) past a 16-byte
 * boundary.  A 1-D add, a reduction loop (the fast copy's version test)
 * and a strided 2-D tile must still agree with the interpreter, each
 * access testing its alignment at run time rather than assuming it (the
 * emulator fails an access off its own size, as the GPU faults on it). */
static const char unaligned[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_DTYPE(D, f32, f16);\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(D, B)\n"
    "void k(ptr(D) a, ptr(D) b, ptr(D) out, ptr(f32) sums, i32 n, i32 stride)\n"
    "{ i32 pid = program_id(0);\n"
    "  tile(i32) o = pid * B + arange(0, B);\n"
    "  store(out + o, load(a + o, o < n, 0) + load(b + o, o < n, 0), o < n);\n"
    "  tile(f32) acc = zeros(f32, B);\n"
    "  for (i32 off = 0; off < n; off += B) {\n"
    "    tile(i32) c = off + arange(0, B);\n"
    "    acc += (f32)load(a + c, c < n, 0); }\n"
    "  store(sums + pid, sum(acc, 0));\n"
    "  tile(D) t = load(a + col(arange(0, 8)) * stride + row(arange(0, B)));\n"
    "  store(out + n + pid * 8 * B + col(arange(0, 8)) * B + row(arange(0, B)), t); }\n";

START_TEST(unaligned_pointers) {
  static const char *const binds[] = {"D=f32,B=64,teeny.unaligned=15",
                                      "D=f16,B=64,teeny.unaligned=15",
                                      "D=f16,B=256,teeny.unaligned=7"};
  static const int shifts[] = {1, 3};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 2; j++) {
      int blk = i == 2 ? 256 : 64, grid = (1000 + blk - 1) / blk;
      kcase c = {"unaligned.c", unaligned, "k", binds[i], (unsigned)grid,
                 {{1000, 2}, {1000, 1}, {1000 + grid * 8 * blk, 3}, {grid, 0}}, {1000, 104}};
      kr_run_everywhere_shifted(&c, shifts[j], NULL);
    }
    /* its accesses test alignment at run time; the aligned kernel's do not */
    kcase c = {"unaligned.c", unaligned, "k", binds[i], 1, {{0, 0}}, {0}};
    char *ptx = kr_ptx(&c, "sm_90a", 4);
    ck_assert_int_gt(kr_count(ptx, "and.b64"), 0);
    free(ptx);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("masks");
  TCase *tc = tcase_create("wrap");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, wrapping_runs_1d);
  tcase_add_test(tc, wrapping_runs_2d);
  tcase_add_test(tc, loop_invariant_masks_over_copy_groups);
  tcase_add_test(tc, tutorial03_k_bound_alone);
  tcase_add_test(tc, unaligned_pointers);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
