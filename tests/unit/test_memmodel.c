/*
 * tests/unit/test_memmodel.c — the memory and execution model (docs/dsl.md
 * §9) through the real code generator.  Each kernel runs in the
 * interpreter (the model) and on the host emulator of the generated code
 * (every thread of a block a coroutine; the emulator switches threads at
 * every barrier and memory access, so a missing barrier shows up as a wrong
 * answer or a deadlock), for sm_90a and sm_80 and several warp counts, and
 * every buffer must agree bit for bit.  Where the model fixes the answer,
 * the interpreter's is checked too.  The PTX is checked for what the model
 * asks of atomics (sem and scope) and for barriers only where they are
 * needed.
 *
 * The kernels reproduce issue 11's defects: scalar loads that were not
 * uniform, a tile store and a later load of the same address by another
 * thread, relaxed atomics, and the layer-norm backward lock pattern.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/nvptx/nvptx.h"
#include "kernel_run.h"

/* ---- defect 1: a scalar load is one value in every lane ------------------------------- */

static const char scalar_then_store[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) flag, ptr(i32) out)\n"
    "{ i32 c = load(flag); store(flag, c + 1); store(out + arange(0, B), c); }\n";

static void check_zero_out(void **out) {
  const int32_t *flag = out[0], *o = out[1];
  ck_assert_int_eq(flag[0], 1);
  for (int i = 0; i < 128; i++)
    ck_assert_msg(o[i] == 0, "out[%d] = %d, the model says 0", i, o[i]);
}

START_TEST(scalar_load_is_uniform) {
  kcase c = {"scalar_then_store.c", scalar_then_store, "k", "B=128", 1, {{1, 0}, {128, 0}}, {0}};
  kr_run_everywhere(&c, check_zero_out);
}
END_TEST

static const char branch_on_load[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) flag, ptr(i32) out)\n"
    "{ i32 c = load(flag);\n"
    "  if (c == 0) { atomic_xchg(flag, 1); }\n"
    "  store(out + arange(0, B), c); }\n";

START_TEST(branch_on_scalar_load_does_not_deadlock) {
  kcase c = {"branch_on_load.c", branch_on_load, "k", "B=128", 1, {{1, 0}, {128, 0}}, {0}};
  kr_run_everywhere(&c, check_zero_out);
}
END_TEST

/* ---- defect 2: a tile store, then a load of one element by another thread ----------- */

static const char store_then_scalar[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(f32) x, i32 j)\n"
    "{ tile(i32) o = arange(0, B); store(x + o, load(x + o) + 1.0f);\n"
    "  f32 v = load(x + j); store(x + j, v * 10.0f); }\n";

static void check_store_then_scalar(void **out) {
  const float *x = out[0];
  for (int i = 0; i < 128; i++) {
    float want = i == 77 ? (77.0f + 1.0f) * 10.0f : (float)i + 1.0f;
    ck_assert_msg(x[i] == want, "x[%d] = %g, the model says %g", i, x[i], want);
  }
}

START_TEST(tile_store_then_scalar_load) {
  kcase c = {"store_then_scalar.c", store_then_scalar, "k", "B=128", 1, {{128, 1}}, {77}};
  kr_run_everywhere(&c, check_store_then_scalar);
}
END_TEST

/* A Liger-style cross-entropy gradient: write the row, then fix up the
 * element at the target index; several rows, odd width. */
static const char ce_fixup[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(f32) grad, ptr(i32) target, i32 n)\n"
    "{ i32 row = program_id(0);\n"
    "  tile(i32) o = arange(0, B);\n"
    "  tile(bool) m = o < n;\n"
    "  ptr(f32) g = grad + row * n;\n"
    "  store(g + o, (f32)o * 0.5f, m);\n"
    "  i32 t = load(target + row);\n"
    "  f32 v = load(g + t);\n"
    "  store(g + t, v - 1.0f); }\n";

START_TEST(row_store_then_fixup) {
  kcase c = {"ce_fixup.c", ce_fixup, "k", "B=256", 5, {{5 * 201, 0}, {5, 2}}, {201}};
  /* targets: i % 7 - 3 gives -3..3; use positive ones by shifting below */
  c.bufs[1].fill = 1; /* target[row] = row */
  kr_run_everywhere(&c, NULL);
}
END_TEST

/* In place through two differently shaped views of one buffer. */
static const char two_views[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(M); TEENY_CONST(N);\n"
    "TEENY_KERNEL(M, N)\n"
    "void k(ptr(i32) x)\n"
    "{ tile(i32) r = arange(0, M), c = arange(0, N);\n"
    "  tile(ptr(i32)) p = x + col(r) * N + row(c);\n"
    "  store(p, load(p) * 2);\n"
    "  tile(i32) flat = arange(0, M * N);\n"
    "  tile(i32) v = load(x + flat);\n"
    "  store(x + (M * N - 1 - flat), v + 1); }\n";

START_TEST(in_place_two_views) {
  kcase c = {"two_views.c", two_views, "k", "M=16,N=32", 1, {{512, 1}}, {0}};
  kr_run_everywhere(&c, NULL);
}
END_TEST

/* Scalar and tile accesses of one buffer in a loop: the next trip's first
 * access must see this trip's last. */
static const char loop_mix[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(f32) x, i32 trips)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  for (i32 k = 0; k < trips; k++) {\n"
    "    store(x + o, load(x + o) + 1.0f);\n"
    "    i32 j = (k * 37) % B;\n"
    "    f32 v = load(x + j);\n"
    "    store(x + j, v * 2.0f);\n"
    "  }\n"
    "  i32 w = 0;\n"
    "  while (w < trips) { f32 y = load(x + w); store(x + o, load(x + o) + y); w = w + 1; } }\n";

START_TEST(loop_scalar_and_tile) {
  kcase c = {"loop_mix.c", loop_mix, "k", "B=64", 1, {{64, 2}}, {5}};
  kr_run_everywhere(&c, NULL);
}
END_TEST

/* ---- defect 2 where an access's operands are made in its layout ------------------- */

/* Tiles whose elements several threads hold (a broadcast column or row, a
 * reduction's slice) are converted through shared memory before they are
 * stored; the conversion's barriers come before the store, so they must
 * not end it (order.c): each tile store here is followed by a scalar
 * store, load or atomic of one of its elements, which must come after it
 * (difffuzz's order_replicated_store_scalar_store). */
static const char replicated[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(BM); TEENY_CONST(BN);\n"
    "TEENY_KERNEL(BM, BN)\n"
    "void k(ptr(i32) io, ptr(f32) x, ptr(i32) out, i32 j)\n"
    "{ tile(i32) rm = arange(0, BM), rn = arange(0, BN);\n"
    "  tile(i32) o = col(rm) * BN + row(rn);\n"
    "  i32 n = BM * BN;\n"
    "  tile(i32) bc = broadcast_to((i32) load(x + col(rm)), BM, BN);\n"
    "  tile(i32) br = broadcast_to(row((i32) load(x + rn)), BM, BN);\n"
    "  store(io + o, bc); store(io + j, -1);\n"
    "  store(io + n + o, br); store(out, load(io + n + j));\n"
    "  store(io + 2 * n + o, bc); atomic_add(io + 2 * n + j, 100);\n"
    "  store(io + 3 * n + rm, sum(br + bc, 1)); store(out + 1, load(io + 3 * n + j % BM));\n"
    "  tile(bool) m = broadcast_to(col(sum(bc, 1) > -1000), BM, BN);\n"
    "  tile(i32) v = load(io + 4 * n + o, m, 0); store(io + 4 * n + j, -5);\n"
    "  store(out + 2 + o, v); }\n";

START_TEST(replicated_store_then_scalar) {
  static const char *const shapes[] = {"BM=2,BN=2", "BM=16,BN=16", "BM=4,BN=64"};
  for (int i = 0; i < 3; i++) {
    kcase c = {"replicated.c", replicated, "k", shapes[i], 1,
               {{5 * 1024, 1}, {64, 1}, {2 + 1024, 3}}, {3}};
    kr_run_everywhere(&c, NULL);
  }
}
END_TEST

/* A dot result (the mma layout) stored as 8- or 16-bit elements, then a
 * scalar load of one (difffuzz's order_narrow_dot_store_scalar_load). */
static const char narrow_dot[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_DTYPE(D); TEENY_CONST(B);\n"
    "TEENY_KERNEL(D, B)\n"
    "void k(ptr(D) io, ptr(D) out, ptr(f32) a, i32 j)\n"
    "{ tile(i32) o = col(arange(0, B)) * B + row(arange(0, B));\n"
    "  tile(f32) x = load(a + o);\n"
    "  store(io + o, (tile(D)) dot(x, x, full(f32, 4, B, B)));\n"
    "  store(out, load(io + j)); }\n";

START_TEST(narrow_dot_store_then_scalar) {
  static const char *const bind[] = {"D=u8,B=16", "D=i16,B=16", "D=f16,B=32", "D=bf16,B=16"};
  for (int i = 0; i < 4; i++) {
    kcase c = {"narrow_dot.c", narrow_dot, "k", bind[i], 1, {{1024, 0}, {1, 3}, {1024, 2}}, {36}};
    kr_run_everywhere(&c, NULL);
  }
}
END_TEST

/* ---- atomics -------------------------------------------------------------------------------- */

/* Old values of a tile atomic on distinct addresses, then a masked CAS. */
static const char tile_atomics[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) c, ptr(i32) out, i32 n)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(i32) old = atomic_add(c + o, o, o < n);\n"
    "  tile(i32) was = atomic_cas(c + o, old + o, -o, o < n - 3, sem_relaxed);\n"
    "  store(out + o, old * 1000 + was); }\n";

/* and/or/xor with old values on distinct addresses and without on one
 * shared address; bf16 add (a CAS loop before sm_90 and on the host). */
static const char bit_atomics[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) c, ptr(i64) w, ptr(bf16) h, ptr(i32) out)\n"
    "{ tile(i32) o = arange(0, B);\n"
    "  tile(i32) a = atomic_and(c + o, 5 + o);\n"
    "  tile(i32) b = atomic_or(c + o, o * 3, o < 100, sem_relaxed);\n"
    "  tile(i32) x = atomic_xor(c + o, 0x55);\n"
    "  atomic_or(w, (i64)1 << (o % 64), sem_relaxed);\n"
    "  atomic_xor(w + 1, (i64)o);\n"
    "  tile(bf16) old = atomic_add(h + o, (bf16)(0.5f * o));\n"
    "  store(out + o, a + 7 * b + 31 * x + (i32)(f32)old); }\n";

START_TEST(bitwise_and_bf16_atomics) {
  kcase c = {"bit_atomics.c", bit_atomics, "k", "B=128", 1,
             {{128, 2}, {2, 0}, {128, 1}, {128, 0}}, {0}};
  kr_run_everywhere(&c, NULL);
}
END_TEST

START_TEST(tile_atomics_old_values) {
  kcase c = {"tile_atomics.c", tile_atomics, "k", "B=128", 1, {{128, 2}, {128, 0}}, {100}};
  kr_run_everywhere(&c, NULL);
}
END_TEST

/* Triton's tutorial 05 lock: spin on a CAS, read the count, the first
 * program stores, later ones accumulate, barrier, release. */
static const char lock_accumulate[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(i32) lock, ptr(i32) count, ptr(f32) dw, i32 n)\n"
    "{ i32 pid = program_id(0);\n"
    "  tile(i32) o = arange(0, B);\n"
    "  tile(bool) m = o < n;\n"
    "  tile(f32) part = (f32)(o + pid);\n"
    "  while (atomic_cas(lock, 0, 1) == 1) { }\n"
    "  i32 cnt = load(count);\n"
    "  if (cnt == 0) { atomic_xchg(count, 1); }\n"
    "  else { part = part + load(dw + o, m, 0.0f); }\n"
    "  store(dw + o, part, m);\n"
    "  barrier();\n"
    "  atomic_xchg(lock, 0); }\n";

static void check_lock(void **out) {
  const int32_t *lock = out[0], *count = out[1];
  const float *dw = out[2];
  ck_assert_int_eq(lock[0], 0);
  ck_assert_int_eq(count[0], 1);
  for (int i = 0; i < 100; i++) { /* sum over 6 programs of i + pid */
    float want = (float)(6 * i + 15);
    ck_assert_msg(dw[i] == want, "dw[%d] = %g, want %g", i, dw[i], want);
  }
}

START_TEST(lock_pattern) {
  kcase c = {"lock.c", lock_accumulate, "k", "B=128", 6, {{1, 0}, {1, 0}, {128, 0}}, {100}};
  kr_run_everywhere(&c, check_lock);
}
END_TEST

/* A thread-0 atomic before a spin lock (tests/diff/repro-gpu/
 * lock_replicated_rmw_*): LLVM's jump threading sent the threads that skip
 * the atomic from the entry straight into the loop's barrier block, past
 * its header, and ptxas miscompiled that two-entry loop on the H200 (the
 * index exchanged through shared memory after it came out stale, a
 * different wrong value each run, in a single block).  The values agree in
 * both engines, and every loop of the PTX has one entry on each target
 * and warp count (the code generator refuses the PTX otherwise). */
static const char atomic_then_lock[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_CONST(E);\n"
    "TEENY_KERNEL(B, E)\n"
    "void k(ptr(i64) hist, ptr(i32) lock, ptr(f32) acc, ptr(f32) in, i32 n)\n"
    "{ i32 pid = program_id(0);\n"
    "  atomic_min(hist, (i64)5, sem_acq_rel);\n"
    "  while (atomic_cas(lock, 0, 1, scope_sys, sem_acquire) == 1) { }\n"
    "  tile(i32) o = (pid % 3) * E + arange(0, E);\n"
    "  tile(i32) i = (((tile(i32))min(broadcast_to((u32)n, B, E), 0)) % 230 + 230) % 230;\n"
    "  store(acc + o, load(acc + o) + load(in + i));\n"
    "  atomic_xchg(lock, 0, sem_acq_rel); }\n";

static void check_atomic_then_lock(void **out) {
  const int64_t *hist = out[0];
  const int32_t *lock = out[1];
  const float *acc = out[2];
  ck_assert_int_eq(hist[0], 0);
  ck_assert_int_eq(lock[0], 0);
  for (int j = 0; j < 48; j++) /* two programs per slot, each adding in[386 % 230] */
    ck_assert_msg(acc[j] == 312.0f, "acc[%d] = %g, want 312", j, acc[j]);
}

/* Every loop of c's PTX has one entry, on sm_90a and sm_80 at 1 to 8
 * warps (the compile is refused otherwise, so kr_ptx fails first); the PTX
 * holds must_have once, if given. */
static void expect_one_entry_loops(const kcase *c, const char *must_have) {
  static const char *const targets[] = {"sm_90a", "sm_80"};
  for (int t = 0; t < 2; t++)
    for (int w = 1; w <= 8; w *= 2) {
      char *ptx = kr_ptx(c, targets[t], w), why[200];
      int r = teeny__ptx_check_reducible(ptx, why, sizeof why);
      ck_assert_msg(r == 0, "%s, %d warps: %s", targets[t], w, r == 1 ? why : "not followed");
      if (must_have)
        ck_assert_int_eq(kr_count(ptx, must_have), 1);
      free(ptx);
    }
}

START_TEST(atomic_then_lock_loop_has_one_entry) {
  kcase c = {"atomic_lock.c", atomic_then_lock, "k", "B=8,E=16", 6,
             {{1, 0}, {1, 0}, {48, 0}, {230, 1}}, {386}};
  kr_run_everywhere(&c, check_atomic_then_lock);
  expect_one_entry_loops(&c, "atom.acquire.sys.global.cas");
}
END_TEST

/* The other way a loop got two entries: the back end's early tail
 * duplication copied a header that only branches (here the loop test,
 * whose bound is a thread-0 load after a reduction) into the entry and the
 * latch.  difffuzz seed 181002550 (--skip order), reduced by deleting
 * lines while the compile was still refused; the code generator now runs
 * with -disable-early-taildup, and the PTX has single-entry loops. */
static const char taildup_header[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_CONST(E);\n"
    "TEENY_KERNEL(B, E)\n"
    "void kern(i32 n, f16 s0, ptr(i32) in6, ptr(u64) out8, ptr(f32) in9, ptr(i32) in10,\n"
    "          ptr(i32) out12, ptr(f32) out13, ptr(f32) out14, ptr(i64) in15, ptr(i32) in16,\n"
    "          ptr(i32) in17, ptr(i32) in18, ptr(bool) in19, ptr(i32) out20, ptr(f64) out22,\n"
    "          ptr(bool) out24)\n"
    "{\n"
    "i32 pid = program_id(0);\n"
    "for (i32 k5 = ((i32) 0); k5 < minimum(load((in6 + (((((i32) sum(broadcast_to(minimum(\n"
    "     maximum(ceil((((f32) pid) % ((u32) pid))), -64), 64), E), -1)) % 44) + 44) % 44)),\n"
    "     evict_first), ((i32) 2)); k5 += 1) {\n"
    "if (((bool) argmin(((tile(i32)) (load((in6 + ((pid * E) + arange(0, E)))) * ((bf16) k5))), -1))) {\n"
    "}\n"
    "}\n"
    "}\n";

START_TEST(tail_duplicated_header_keeps_one_entry) {
  kcase c = {"taildup.c", taildup_header, "kern", "B=64,E=8", 1, {{0, 0}}, {0}};
  expect_one_entry_loops(&c, NULL);
}
END_TEST

/* ---- what the PTX says -------------------------------------------------------------------- */

/* Cache operators and eviction priorities: the PTX access carries the
 * operator (a .cv load drops .nc), evict_first / evict_last an L2 policy
 * from createpolicy; the .mlir says Triton's CacheModifier and
 * EvictionPolicy numbers; the values are unchanged (interpreter against
 * emulator). */
static const char hinted[] =
    "#include <teeny/dsl.h>\n"
    "TEENY_CONST(B);\n"
    "TEENY_KERNEL(B)\n"
    "void k(ptr(f32) x, ptr(f32) y, ptr(f32) out, i32 n)\n"
    "{ tile(i32) o = program_id(0) * B + arange(0, B);\n"
    "  tile(f32) a = load(x + o, o < n, 0.0f, cache_cg, evict_last);\n"
    "  tile(f32) b = load(y + o, cache_cv);\n"
    "  f32 s = load(x, cache_ca);\n"
    "  store(out + o, a + b + s, o < n, cache_cs, evict_first);\n"
    "  store(out + n + program_id(0), s, cache_wt); }\n";

START_TEST(cache_hints_reach_ptx_and_mlir) {
  static const char *const want[] = {
      "ld.global.cg.nc.L2::cache_hint.", "ld.global.cv.", "ld.global.ca.nc.",
      "st.global.cs.L2::cache_hint.", "st.global.wt.",
      "createpolicy.fractional.L2::evict_last.b64", "createpolicy.fractional.L2::evict_first.b64",
      "cache = 3 : i32, evict = 3 : i32", "cache = 7 : i32, evict = 1 : i32",
      "cache = 2 : i32, evict = 1 : i32", "cache = 5 : i32, evict = 2 : i32",
      "cache = 6 : i32, evict = 1 : i32"};
  static const char *const targets[] = {"sm_90a", "sm_80"};
  for (int t = 0; t < 2; t++) {
    char *text = kr_text(hinted, "k", "B=256", targets[t]);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      ck_assert_msg(strstr(text, want[i]), "%s: no '%s' in\n%s", targets[t], want[i], text);
    ck_assert_msg(!strstr(text, "ld.global.cv.nc"), "a .cv load kept .nc");
    free(text);
  }
  kcase c = {"hinted.c", hinted, "k", "B=256", 2, {{300, 1}, {512, 2}, {600, 3}}, {300}};
  kr_run_everywhere(&c, NULL);
}
END_TEST

START_TEST(atomics_carry_sem_and_scope) {
  static const char src[] =
      "#include <teeny/dsl.h>\n"
      "TEENY_CONST(B);\n"
      "TEENY_KERNEL(B)\n"
      "void k(ptr(i32) c, ptr(f32) f)\n"
      "{ tile(i32) o = arange(0, B);\n"
      "  atomic_add(c + o, 1);\n"
      "  atomic_max(c + o, o, sem_relaxed, scope_cta);\n"
      "  atomic_add(f + o, 1.0f, o < 7, scope_sys, sem_release);\n"
      "  atomic_xchg(c, 3, sem_acquire); }\n";
  char *t = kr_text(src, "k", "B=128", "sm_90a");
  ck_assert_msg(strstr(t, "atom.acq_rel.gpu.global.add.u32"), "default is acq_rel, gpu:\n%s", t);
  ck_assert(strstr(t, "atom.relaxed.cta.global.max.s32"));
  ck_assert(strstr(t, "atom.release.sys.global.add.f32"));
  ck_assert(strstr(t, "atom.acquire.gpu.global.exch.b32"));
  /* Triton's enum values in the .mlir artifact: relaxed 1, acquire 2,
   * release 3, acq_rel 4; gpu 1, cta 2, sys 3 */
  ck_assert(strstr(t, "scope = 2 : i32, sem = 1 : i32"));
  ck_assert(strstr(t, "scope = 3 : i32, sem = 3 : i32"));
  free(t);
}
END_TEST

START_TEST(barriers_only_where_needed) {
  /* element-wise, in place through one layout: no barrier */
  static const char inplace[] =
      "#include <teeny/dsl.h>\n"
      "TEENY_CONST(B);\n"
      "TEENY_KERNEL(B)\n"
      "void k(ptr(f32) x, ptr(f32) y, i32 n)\n"
      "{ tile(i32) o = program_id(0) * B + arange(0, B); tile(bool) m = o < n;\n"
      "  store(x + o, load(x + o, m) * 2.0f + load(y + o, m), m); }\n";
  char *t = kr_text(inplace, "k", "B=1024", "sm_90a");
  ck_assert_msg(kr_count(t, "bar.sync") == 0, "an in-place element-wise kernel needs no barrier:\n%s", t);
  free(t);
  /* store then a scalar load of the same buffer: a barrier */
  t = kr_text(store_then_scalar, "k", "B=128", "sm_90a");
  ck_assert_msg(kr_count(t, "bar.sync") >= 1, "store then load needs a barrier");
  free(t);
  /* barrier() is bar.sync and gpu.barrier in the .mlir */
  static const char explicit_barrier[] =
      "#include <teeny/dsl.h>\n"
      "TEENY_KERNEL()\n"
      "void k(ptr(f32) x) { barrier(); store(x, 1.0f); }\n";
  t = kr_text(explicit_barrier, "k", "", "sm_80");
  ck_assert(kr_count(t, "bar.sync") == 1);
  ck_assert(strstr(t, "gpu.barrier"));
  free(t);
  /* a relaxed scalar atomic whose old value is unused: no broadcast */
  static const char counter[] =
      "#include <teeny/dsl.h>\n"
      "TEENY_KERNEL()\n"
      "void k(ptr(i32) c) { atomic_add(c, 1, sem_relaxed); }\n";
  t = kr_text(counter, "k", "", "sm_90a");
  ck_assert_msg(kr_count(t, "bar.sync") == 0, "an unused relaxed atomic needs no barrier:\n%s", t);
  free(t);
}
END_TEST

/* ---- what the model leaves undefined: the interpreter reports it -------------------- */

/* Run c in the interpreter only; returns the code and the first message. */
static int interpret_only(const kcase *c, char *msg, size_t cap) {
  teeny_spec *s = kr_spec(c, "sm_90a", 4);
  size_t np = teeny_spec_nparams(s);
  teeny_interp_arg ia[MAXP];
  void *bufs[MAXP] = {0};
  int pi = 0, si = 0;
  for (size_t i = 0; i < np; i++) {
    const teeny_param *p = teeny_spec_param(s, i);
    memset(&ia[i], 0, sizeof ia[i]);
    if (p->kind == TEENY_PARAM_POINTER) {
      const buf_spec *b = &c->bufs[pi++];
      ia[i].bytes = (size_t)b->n * kr_esize(p->dtype);
      ia[i].data = bufs[i] = calloc(1, ia[i].bytes + 1);
      kr_fill(bufs[i], p->dtype, b->n, b->fill);
    } else {
      ia[i].v.i = c->scalars[si++];
    }
  }
  unsigned grid[3] = {c->grid ? c->grid : 1, 1, 1};
  teeny_diags d;
  teeny_diags_init(&d);
  int rc = teeny_spec_interpret(s, grid, ia, np, &d);
  msg[0] = '\0';
  if (d.n)
    teeny_diag_format(&d.v[0], msg, cap);
  teeny_diags_close(&d);
  for (size_t i = 0; i < np; i++)
    free(bufs[i]);
  teeny_spec_destroy(s);
  return rc;
}

static void expect_race(const kcase *c, const char *what) {
  char msg[2048];
  int rc = interpret_only(c, msg, sizeof msg);
  ck_assert_msg(rc == TEENY_E_RUNTIME, "%s: a race should stop the interpreter, got %s",
                c->name, teeny_strerror(rc));
  ck_assert_msg(strstr(msg, "data race") && strstr(msg, what), "%s: message: %s", c->name, msg);
}

static void expect_no_race(const kcase *c) {
  char msg[2048];
  int rc = interpret_only(c, msg, sizeof msg);
  ck_assert_msg(rc == 0, "%s: no race, but: %s", c->name, msg);
}

START_TEST(races_are_reported) {
  /* two lanes of one store, one address, different values */
  kcase lanes = {"lanes.c",
                 "#include <teeny/dsl.h>\n"
                 "TEENY_KERNEL()\n"
                 "void k(ptr(i32) x) { tile(i32) o = arange(0, 16); store(x + o / 4, o); }\n",
                 "k", "", 1, {{4, 0}}, {0}};
  expect_race(&lanes, "lanes 0 and 1 of one store write 'x'[0]");
  /* ... with equal values it is fine */
  kcase same = lanes;
  same.src = "#include <teeny/dsl.h>\n"
             "TEENY_KERNEL()\n"
             "void k(ptr(i32) x) { tile(i32) o = arange(0, 16); store(x + o / 4, o / 4); }\n";
  expect_no_race(&same);
  /* two programs write one address */
  kcase both = {"both.c",
                "#include <teeny/dsl.h>\n"
                "TEENY_KERNEL()\n"
                "void k(ptr(i32) x) { store(x, program_id(0)); }\n",
                "k", "", 2, {{1, 0}}, {0}};
  expect_race(&both, "program (1, 0, 0) writes 'x'[0] (lane 0), which program (0, 0, 0) wrote");
  /* a program reads what another wrote, nothing ordering them */
  kcase reads = {"reads.c",
                 "#include <teeny/dsl.h>\n"
                 "TEENY_KERNEL()\n"
                 "void k(ptr(i32) x, ptr(i32) y) { i32 p = program_id(0);\n"
                 "  if (p == 0) { store(x, 5); } else { store(y + p, load(x)); } }\n",
                 "k", "", 3, {{1, 0}, {3, 0}}, {0}};
  expect_race(&reads, "reads 'x'[0]");
  /* the same through a flag: release after the store, acquire before the load */
  kcase flag = reads;
  flag.src = "#include <teeny/dsl.h>\n"
             "TEENY_KERNEL()\n"
             "void k(ptr(i32) x, ptr(i32) y, ptr(i32) f) { i32 p = program_id(0);\n"
             "  if (p == 0) { store(x, 5); atomic_xchg(f, 1, sem_release); }\n"
             "  else { while (atomic_add(f, 0, sem_acquire) == 0) { } store(y + p, load(x)); } }\n";
  flag.bufs[2] = (buf_spec){1, 0};
  expect_no_race(&flag);
  /* relaxed atomics order nothing */
  kcase relaxed = flag;
  relaxed.src = "#include <teeny/dsl.h>\n"
                "TEENY_KERNEL()\n"
                "void k(ptr(i32) x, ptr(i32) y, ptr(i32) f) { i32 p = program_id(0);\n"
                "  if (p == 0) { store(x, 5); atomic_xchg(f, 1, sem_relaxed); }\n"
                "  else { while (atomic_add(f, 0, sem_relaxed) == 0) { } store(y + p, load(x)); } }\n";
  expect_race(&relaxed, "reads 'x'[0]");
  /* atomics on one address from every program: no race; the lock: none */
  kcase counter = {"counter.c",
                   "#include <teeny/dsl.h>\n"
                   "TEENY_KERNEL()\n"
                   "void k(ptr(i32) c) { atomic_add(c, 1, sem_relaxed); }\n",
                   "k", "", 8, {{1, 0}}, {0}};
  expect_no_race(&counter);
  kcase lock = {"lock.c", lock_accumulate, "k", "B=128", 6, {{1, 0}, {1, 0}, {128, 0}}, {100}};
  expect_no_race(&lock);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("memmodel");
  TCase *tc = tcase_create("model");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, scalar_load_is_uniform);
  tcase_add_test(tc, branch_on_scalar_load_does_not_deadlock);
  tcase_add_test(tc, tile_store_then_scalar_load);
  tcase_add_test(tc, row_store_then_fixup);
  tcase_add_test(tc, replicated_store_then_scalar);
  tcase_add_test(tc, narrow_dot_store_then_scalar);
  tcase_add_test(tc, in_place_two_views);
  tcase_add_test(tc, loop_scalar_and_tile);
  tcase_add_test(tc, tile_atomics_old_values);
  tcase_add_test(tc, bitwise_and_bf16_atomics);
  tcase_add_test(tc, lock_pattern);
  tcase_add_test(tc, atomic_then_lock_loop_has_one_entry);
  tcase_add_test(tc, tail_duplicated_header_keeps_one_entry);
  tcase_add_test(tc, atomics_carry_sem_and_scope);
  tcase_add_test(tc, cache_hints_reach_ptx_and_mlir);
  tcase_add_test(tc, barriers_only_where_needed);
  tcase_add_test(tc, races_are_reported);
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
