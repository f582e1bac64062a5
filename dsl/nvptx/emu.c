/*
 * dsl/nvptx/emu.c — runs the code generator's output on the host, so the
 * layouts, conversions, reductions and mma fragments it produces can be
 * checked against the interpreter on a machine without a GPU.
 *
 * The same lowering builds a host-triple module (g->emu): global and shared
 * pointers are plain pointers, llvm.nvvm.* intrinsics become host math or
 * calls into this file's runtime, and the few inline-PTX sites (predicated
 * accesses, tanh, tf32 rounding, mma) use host equivalents.  MCJIT compiles
 * it; each thread of a block is a ucontext coroutine that yields at
 * barriers and warp-collective ops (shuffles, mma), which complete when all
 * participants have arrived.  Rounds run the threads in ascending and
 * descending order by turns, so an access that a missing barrier leaves
 * unordered meets the other thread on one side or the other, on either
 * side of a barrier.  Blocks run one at a time, x fastest.
 *
 * Test-only speed (a few ms per block of 128 threads).  Nothing here is on
 * the PTX path: only the tests link this file (library teeny_codegen_emu);
 * the IR-building half is emu_ir.c, part of teeny_compiler.  No
 * global state: the runtime's state is the kernel's first parameter.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "dsl/nvptx/codegen.h"

/* ---- the runtime ------------------------------------------------------------------------ */

#define EMU_STACK (256 * 1024)

typedef struct emu_thread {
  ucontext_t uc;
  char *stack;
  bool done;
} emu_thread;

typedef struct emu_warp {
  uint32_t shfl[2][32];        /* deposited values, double-buffered by gen */
  uint32_t mma_in[2][32][10];  /* a0..a3 b0 b1 c0..c3 */
  uint32_t mma_out[2][32][4];
  int arrived;                 /* lanes at the current collective */
  unsigned gen;                /* collectives completed */
} emu_warp;

/* A warpgroup's wgmma in flight: every thread deposits its accumulator,
 * the last to arrive computes the product for all 128. */
typedef struct emu_wgroup {
  float acc[128][128];         /* [thread][register] */
  double A[64][32], B[32][256]; /* the operands, decoded (k16, or k32 for fp8) */
  uint64_t da, db;             /* the descriptors (uniform over the group) */
  int kind, ni;
  int tb;                      /* imm-trans-b: 1 B N-major, 0 K-major */
  int scale_d;                 /* 0: D = A B (the accumulator is not read) */
  bool ra;                     /* A from registers (a_words), not da */
  uint32_t a_words[128][4];    /* [thread][fragment register] */
  bool mixed;                  /* threads disagreed on the operands */
  int arrived;
  unsigned gen;
} emu_wgroup;

typedef struct emu {
  int nthreads, cur;
  emu_wgroup *wgroups;         /* nthreads / 128 of them */
  bool wg_error;               /* a wgmma was malformed (reported after the run) */
  int misaligned;              /* bytes of the first global access off its
                                  own size (a misaligned address on the GPU) */
  uint64_t misaligned_at;      /* its address */
  bool tma_error;              /* a TMA box the H200 refuses with an illegal
                                  instruction (tma_box) */
  unsigned ctaid[3], nctaid[3];
  emu_thread *th;
  emu_warp *warps;
  ucontext_t sched;
  void (*entry)(void *emu, void *argv);
  void *argv;
  int bar_arrived;
  unsigned bar_gen;
  int bar_acc;                 /* bar.red.and: the AND so far */
  int bar_res[2];              /* its result, by generation */
  bool progress;
  bool failed;                 /* a device_assert failed (__assertfail) */
  teeny_loc fail_loc;          /* its place in the source */
  char fail_msg[1200];         /* what the failure printed, and where */
  char last_line[512];         /* the last line vprintf printed */
} emu;

static void yield(emu *e) { swapcontext(&e->th[e->cur].uc, &e->sched); }

static int32_t rt_sreg(emu *e, int32_t which) {
  switch (which) {
  case 0:
    return e->cur;
  case 1:
  case 2:
    return 0;
  default:
    return (int32_t)(which < 6 ? e->ctaid[which - 3] : e->nctaid[which - 6]);
  }
}

static void rt_barrier(emu *e) {
  unsigned gen = e->bar_gen;
  e->progress = true;
  if (++e->bar_arrived == e->nthreads) {
    e->bar_arrived = 0;
    e->bar_gen++;
    return;
  }
  while (e->bar_gen == gen)
    yield(e);
}

/* bar.red.and.pred (llvm.nvvm.barrier0.and): a barrier whose result is
 * the AND of every thread's operand. */
static int32_t rt_barrier_and(emu *e, int32_t v) {
  unsigned gen = e->bar_gen;
  if (e->bar_arrived == 0)
    e->bar_acc = 1;
  e->bar_acc &= v != 0;
  e->progress = true;
  if (++e->bar_arrived == e->nthreads) {
    e->bar_res[gen & 1] = e->bar_acc;
    e->bar_arrived = 0;
    e->bar_gen++;
    return e->bar_acc;
  }
  while (e->bar_gen == gen)
    yield(e);
  return e->bar_res[gen & 1];
}

/* Arrive at the warp's next collective; returns its buffer index. */
static int warp_arrive(emu *e, emu_warp *w, void (*last)(emu_warp *, int)) {
  unsigned gen = w->gen;
  e->progress = true;
  if (++w->arrived == 32) {
    if (last)
      last(w, (int)(gen & 1));
    w->arrived = 0;
    w->gen++;
  } else {
    while (w->gen == gen)
      yield(e);
  }
  return (int)(gen & 1);
}

static int32_t rt_shfl(emu *e, int32_t v, int32_t mask) {
  emu_warp *w = &e->warps[e->cur / 32];
  int lane = e->cur % 32;
  w->shfl[w->gen & 1][lane] = (uint32_t)v;
  int b = warp_arrive(e, w, NULL);
  return (int32_t)w->shfl[b][lane ^ (mask & 31)];
}

/* x & mask where LLVM's optimiser cannot look (the emulator's abs: see
 * float_abs in ops.c). */
static uint64_t rt_and(emu *e, uint64_t x, uint64_t mask) {
  (void)e;
  return x & mask;
}

/* fma of f16 or bf16 values (as doubles) rounded once to dt (the GPU's
 * fma.rn.f16/.bf16; LLVM on the host goes through f32 and rounds twice). */
static double rt_fma16(emu *e, double a, double b, double c, int32_t dt) {
  (void)e;
  return teeny__fma_dtype((teeny_dtype)dt, a, b, c);
}

static float rt_tanhf(emu *e, float x) {
  (void)e;
  return tanhf(x);
}

static float f16_to_f32(uint32_t h) {
  int s = (h >> 15) & 1, ex = (h >> 10) & 31, m = h & 1023;
  float v;
  if (ex == 0)
    v = ldexpf((float)m, -24);
  else if (ex == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexpf((float)(m | 1024), ex - 25);
  return s ? -v : v;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* The element of a packed word: 16-bit halves or bytes, low first. */
static float half_of(uint32_t w, int i, int kind) {
  uint32_t h = (w >> (16 * i)) & 0xFFFF;
  return kind == 2 ? bits_f32(h << 16) : f16_to_f32(h);
}

/* The bytes of one m16n8k32 (s8 or fp8): A [16][32], B [32][8] from the
 * PTX ISA's fragment layouts (the same for both), C as 32-bit words. */
typedef struct mma_k32 {
  uint8_t A[16][32], B[32][8];
  uint32_t C[16][8];
} mma_k32_frags;

static void mma_k32_gather(const emu_warp *w, int b, mma_k32_frags *f) {
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    const uint32_t *in = w->mma_in[b][l];
    for (int i = 0; i < 4; i++) /* C: (g, 2t+e), (g+8, 2t+e) */
      f->C[g + (i >> 1) * 8][2 * t + (i & 1)] = in[6 + i];
    for (int i = 0; i < 4; i++)
      for (int k = 0; k < 4; k++)
        f->A[g + (i & 1) * 8][4 * t + k + (i >> 1) * 16] = (uint8_t)(in[i] >> (8 * k));
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++)
        f->B[4 * t + k + 16 * i][g] = (uint8_t)(in[4 + i] >> (8 * k));
  }
}

/* The s8 form (s32 accumulators): integers throughout, the sum taken in
 * int64 and wrapped to 32 bits as PTX does without .satfinite (a double
 * converted with (int32_t) is undefined past the i32 range).  The fp8
 * form (kind 5, bit 4 set for an f8e5m2 A, bit 5 for B): every product
 * exact in double, the sum rounded once to f32. */
static void mma_k32(emu_warp *w, int b, int kind) {
  mma_k32_frags f;
  mma_k32_gather(w, b, &f);
  teeny_dtype fa = kind & 16 ? TEENY_DT_F8E5M2 : TEENY_DT_F8E4M3;
  teeny_dtype fb = kind & 32 ? TEENY_DT_F8E5M2 : TEENY_DT_F8E4M3;
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    for (int i = 0; i < 4; i++) {
      int r = g + (i >> 1) * 8, c = 2 * t + (i & 1);
      if ((kind & 15) == 4) {
        int64_t s = (int32_t)f.C[r][c];
        for (int k = 0; k < 32; k++)
          s += (int64_t)(int8_t)f.A[r][k] * (int8_t)f.B[k][c];
        w->mma_out[b][l][i] = (uint32_t)s; /* modulo 2^32 */
      } else {
        double s = bits_f32(f.C[r][c]);
        for (int k = 0; k < 32; k++)
          s += teeny__fp8_value(fa, f.A[r][k]) * teeny__fp8_value(fb, f.B[k][c]);
        w->mma_out[b][l][i] = f32_bits((float)s);
      }
    }
  }
}

/* D = A B + C for the whole warp, from the PTX ISA's fragment layouts.
 * kind: 1 f16, 2 bf16 (m16n8k16); 3 tf32 (m16n8k8); 4 s8 and 5 fp8
 * (m16n8k32). */
static void mma_compute(emu_warp *w, int b, int kind) {
  if ((kind & 15) >= 4) {
    mma_k32(w, b, kind);
    return;
  }
  double A[16][16] = {{0}}, B[16][8] = {{0}}, C[16][8];
  int K = kind == 3 ? 8 : 16;
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    uint32_t *in = w->mma_in[b][l];
    for (int i = 0; i < 4; i++) /* C: (g, 2t+e), (g+8, 2t+e) */
      C[g + (i >> 1) * 8][2 * t + (i & 1)] = bits_f32(in[6 + i]);
    if (kind == 3) {
      for (int i = 0; i < 4; i++)
        A[g + (i & 1) * 8][t + (i >> 1) * 4] = bits_f32(in[i]);
      for (int i = 0; i < 2; i++)
        B[t + 4 * i][g] = bits_f32(in[4 + i]);
    } else {
      for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++)
          A[g + (i & 1) * 8][2 * t + k + (i >> 1) * 8] = half_of(in[i], k, kind);
      for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
          B[2 * t + k + 8 * i][g] = half_of(in[4 + i], k, kind);
    }
  }
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    for (int i = 0; i < 4; i++) {
      int r = g + (i >> 1) * 8, c = 2 * t + (i & 1);
      double s = C[r][c];
      for (int k = 0; k < K; k++)
        s += A[r][k] * B[k][c];
      w->mma_out[b][l][i] = f32_bits((float)s);
    }
  }
}

static void rt_mma(emu *e, int32_t kind, int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                   int32_t b0, int32_t b1, int32_t c0, int32_t c1, int32_t c2, int32_t c3,
                   uint32_t *out) {
  emu_warp *w = &e->warps[e->cur / 32];
  int lane = e->cur % 32;
  uint32_t v[10] = {(uint32_t)a0, (uint32_t)a1, (uint32_t)a2, (uint32_t)a3, (uint32_t)b0,
                    (uint32_t)b1, (uint32_t)c0, (uint32_t)c1, (uint32_t)c2, (uint32_t)c3};
  int b = (int)(w->gen & 1);
  memcpy(w->mma_in[b][lane], v, sizeof v);
  unsigned gen = w->gen;
  e->progress = true;
  if (++w->arrived == 32) {
    mma_compute(w, b, kind);
    w->arrived = 0;
    w->gen++;
  } else {
    while (w->gen == gen)
      yield(e);
  }
  memcpy(out, w->mma_out[b][lane], 16);
}

/* ldmatrix: lane l names row l % 8 of matrix l / 8; lane l receives, of each
 * matrix, elements (l / 4, 2 (l % 4) + {0, 1}), or transposed
 * (2 (l % 4) + {0, 1}, l / 4). */
static void rt_ldmatrix(emu *e, const char *addr, int32_t trans, int32_t num, uint32_t *out) {
  emu_warp *w = &e->warps[e->cur / 32];
  int lane = e->cur % 32;
  int b = (int)(w->gen & 1);
  memcpy(&w->mma_in[b][lane][0], &addr, sizeof addr); /* a pointer in two words */
  unsigned gen = w->gen;
  e->progress = true;
  if (++w->arrived == 32) {
    w->arrived = 0;
    w->gen++;
  } else {
    while (w->gen == gen)
      yield(e);
  }
  for (int q = 0; q < num; q++) {
    uint16_t h[2];
    for (int j = 0; j < 2; j++) {
      int row = trans ? 2 * (lane % 4) + j : lane / 4;
      int col = trans ? lane / 4 : 2 * (lane % 4) + j;
      const char *rp;
      memcpy(&rp, &w->mma_in[b][8 * q + row][0], sizeof rp);
      memcpy(&h[j], rp + 2 * col, 2);
    }
    out[q] = (uint32_t)h[0] | (uint32_t)h[1] << 16;
  }
}

/* wgmma.mma_async m64nNk16 (f16/bf16 in, f32 accumulate) or m64nNk32
 * (fp8 in: kind 5, with bit 4 set for an f8e5m2 A, bit 5 for B; both
 * K-major) from two shared memory descriptors, written from the PTX ISA's description of the
 * matrix descriptor and its canonical swizzled layouts (independently of
 * the code generator's tile layout, which this checks): start address,
 * leading byte offset (MN-major: between swizzle-width column blocks) and
 * stride byte offset (between groups of 8 rows), each in 16-byte units;
 * the swizzle XORs address bits 4.. with the bits from 7 on (128-byte mode:
 * 3 bits, 64: 2, 32: 1).  A is K-major; B N-major (imm-trans-b = 1) or
 * K-major (imm-trans-b = 0, read like A).
 * Addresses are offsets in the block's shared buffer. */
static const unsigned char *wg_elem(const unsigned char *smem, uint64_t d, bool mn_major,
                                    int mn, int k, int es) {
  uint32_t start = (uint32_t)(d & 0x3FFF) << 4, lbo = (uint32_t)((d >> 16) & 0x3FFF) << 4;
  uint32_t sbo = (uint32_t)((d >> 32) & 0x3FFF) << 4;
  int mode = (int)(d >> 62);
  uint32_t S = mode == 1 ? 128 : mode == 2 ? 64 : 32, off;
  if (!mn_major) /* element (m, k) */
    off = start + (uint32_t)(mn >> 3) * sbo + (uint32_t)(mn & 7) * S + (uint32_t)(k * es);
  else /* element (k, n) */
    off = start + (uint32_t)(mn * es) / S * lbo + (uint32_t)(k >> 3) * sbo +
          (uint32_t)(k & 7) * S + (uint32_t)(mn * es) % S;
  off ^= ((off >> 7) & (S / 16 - 1)) << 4;
  return smem + off;
}

/* A from registers (the PTX ISA's A fragment of m64nNk16): thread t =
 * 32 q + l holds in register i rows 16 q + l / 4 + 8 (i & 1) and columns
 * 2 (l % 4) + 8 (i >> 1) + {0, 1} (low half first). */
static void wgmma_regs_a(emu_wgroup *w) {
  for (int t = 0; t < 128; t++) {
    int q = t / 32, l = t % 32;
    for (int i = 0; i < 4; i++)
      for (int e = 0; e < 2; e++) {
        uint16_t h = (uint16_t)(w->a_words[t][i] >> (16 * e));
        w->A[16 * q + l / 4 + 8 * (i & 1)][2 * (l % 4) + 8 * (i >> 1) + e] = half_of(h, 0, w->kind);
      }
  }
}

/* Operand element (mn, k) of descriptor d: a 16-bit float of the kind,
 * or an fp8 (kind 5) of the format that bit `fbit` of the kind selects. */
static double wg_value(const emu_wgroup *w, const unsigned char *smem, uint64_t d, bool mn_major,
                       int mn, int k, int fbit) {
  if ((w->kind & 15) == 5)
    return teeny__fp8_value((w->kind >> fbit) & 1 ? TEENY_DT_F8E5M2 : TEENY_DT_F8E4M3,
                            *wg_elem(smem, d, mn_major, mn, k, 1));
  uint16_t h;
  memcpy(&h, wg_elem(smem, d, mn_major, mn, k, 2), 2);
  return half_of(h, 0, w->kind);
}

static void wgmma_compute(emu_wgroup *w, const unsigned char *smem) {
  double (*A)[32] = w->A, (*B)[256] = w->B;
  int K = (w->kind & 15) == 5 ? 32 : 16;
  if (w->ra)
    wgmma_regs_a(w);
  for (int m = 0; m < 64 && !w->ra; m++)
    for (int k = 0; k < K; k++)
      A[m][k] = wg_value(w, smem, w->da, false, m, k, 4);
  for (int k = 0; k < K; k++)
    for (int n = 0; n < w->ni; n++)
      B[k][n] = wg_value(w, smem, w->db, w->tb != 0, n, k, 5);
  for (int t = 0; t < 128; t++) {
    int wq = t / 32, l = t % 32;
    for (int j = 0; j < w->ni / 8; j++)
      for (int i = 0; i < 4; i++) { /* register 4j + 2h + e */
        int row = 16 * wq + l / 4 + 8 * (i >> 1), col = 8 * j + 2 * (l % 4) + (i & 1);
        double acc = w->scale_d ? w->acc[t][4 * j + i] : 0.0;
        for (int k = 0; k < K; k++)
          acc += A[row][k] * B[k][col];
        w->acc[t][4 * j + i] = (float)acc;
      }
  }
}

static void wgmma_run(emu *e, int32_t kind, int32_t ni, int64_t da, const uint32_t *aw,
                      int64_t db, int32_t tb, int32_t scale_d, const unsigned char *smem,
                      float *acc) {
  emu_wgroup *w = &e->wgroups[e->cur / 128];
  int t = e->cur % 128;
  if (ni < 8 || ni > 256 || ni % 8 || e->nthreads % 128 ||
      ((kind & 15) == 5 && (tb || aw))) { /* fp8: K-major, from shared memory */
    e->wg_error = true;
    return;
  }
  if (w->arrived == 0) {
    w->da = (uint64_t)da;
    w->db = (uint64_t)db;
    w->kind = kind;
    w->ni = ni;
    w->tb = tb;
    w->scale_d = scale_d;
    w->ra = aw != NULL;
    w->mixed = false;
  } else if (w->da != (uint64_t)da || w->db != (uint64_t)db || w->ni != ni || w->tb != tb ||
             w->scale_d != scale_d || w->ra != (aw != NULL)) {
    w->mixed = true;
  }
  if (aw)
    memcpy(w->a_words[t], aw, sizeof w->a_words[t]);
  memcpy(w->acc[t], acc, sizeof(float) * (size_t)(ni / 2));
  unsigned gen = w->gen;
  e->progress = true;
  if (++w->arrived == 128) {
    if (w->mixed)
      e->wg_error = true;
    else
      wgmma_compute(w, smem);
    w->arrived = 0;
    w->gen++;
  } else {
    while (w->gen == gen)
      yield(e);
  }
  memcpy(acc, w->acc[t], sizeof(float) * (size_t)(ni / 2));
}

static void rt_wgmma(emu *e, int32_t kind, int32_t ni, int64_t da, int64_t db, int32_t tb,
                     int32_t scale_d, const unsigned char *smem, float *acc) {
  wgmma_run(e, kind, ni, da, NULL, db, tb, scale_d, smem, acc);
}

/* wgmma with A from registers: aw, this thread's 4 fragment words. */
static void rt_wgmma_ra(emu *e, int32_t kind, int32_t ni, const uint32_t *aw, int64_t db,
                        int32_t tb, int32_t scale_d, const unsigned char *smem, float *acc) {
  wgmma_run(e, kind, ni, 0, aw, db, tb, scale_d, smem, acc);
}

/* ---- driving blocks ------------------------------------------------------------------------ */

/* ---- vprintf and __assertfail (debug.c) -------------------------------------------------- */

/* One conversion of a vprintf format at fmt ('%' already read): copies it
 * into spec and returns its argument's size (4, or 8 for "ll", doubles
 * and pointers) and letter; 0 for "%%". */
static int conv_at(const char **fmt, char *spec, size_t n, char *letter) {
  const char *f = *fmt;
  size_t k = 0;
  spec[k++] = '%';
  while (*f && !strchr("diuxXocfFeEgGaAps%", *f) && k + 2 < n)
    spec[k++] = *f++;
  *letter = *f;
  spec[k++] = *f ? *f++ : '\0';
  spec[k] = '\0';
  *fmt = f;
  if (*letter == '%')
    return 0;
  bool wide = k >= 4 && spec[k - 2] == 'l' && spec[k - 3] == 'l';
  return wide || strchr("fFeEgGaAps", *letter) ? 8 : 4;
}

/* CUDA's vprintf: fmt's conversions read buf, each argument at its own
 * alignment; the text goes to stderr, where the interpreter's goes. */
static int32_t rt_vprintf(emu *e, const char *fmt, const unsigned char *buf) {
  char out[4096], spec[32];
  size_t len = 0, at = 0;
  while (*fmt && len + 1 < sizeof out) {
    if (*fmt != '%') {
      out[len++] = *fmt++;
      continue;
    }
    fmt++;
    char c;
    int size = conv_at(&fmt, spec, sizeof spec, &c);
    int w = 0;
    if (size == 0) {
      w = snprintf(out + len, sizeof out - len, "%%");
    } else {
      at = (at + (size_t)size - 1) / (size_t)size * (size_t)size;
      uint64_t v = 0;
      memcpy(&v, buf + at, (size_t)size);
      at += (size_t)size;
      double d;
      memcpy(&d, &v, sizeof d);
      if (strchr("fFeEgGaA", c))
        w = snprintf(out + len, sizeof out - len, spec, d);
      else if (c == 'p')
        w = snprintf(out + len, sizeof out - len, spec, (void *)(uintptr_t)v);
      else if (c == 's') /* the file name of an assert's line */
        w = snprintf(out + len, sizeof out - len, spec, (const char *)(uintptr_t)v);
      else if (size == 8)
        w = snprintf(out + len, sizeof out - len, spec, (long long)v);
      else
        w = snprintf(out + len, sizeof out - len, spec, (int)(int32_t)(uint32_t)v);
    }
    if (w > 0)
      len += (size_t)w < sizeof out - len ? (size_t)w : sizeof out - len - 1;
  }
  fwrite(out, 1, len, stderr);
  fflush(stderr);
  while (len && out[len - 1] == '\n')
    len--;
  snprintf(e->last_line, sizeof e->last_line, "%.*s", (int)len, out);
  return (int32_t)len;
}

/* __assertfail stops the grid: the first failure is kept (the line this
 * thread just printed, which has the values), this thread ends here, and
 * the run stops after the block (run_grid). */
static void rt_assertfail(emu *e, const char *msg, const char *file, int32_t line,
                          int32_t col) {
  if (!e->failed) { /* the line is "file:line: WHERE device_assert failed: TEXT" */
    e->failed = true;
    e->fail_loc = (teeny_loc){line, col};
    const char *tag = strstr(e->last_line, " device_assert failed: ");
    const char *where = strstr(e->last_line, ": pid (");
    if (tag && where && where < tag)
      snprintf(e->fail_msg, sizeof e->fail_msg, "device_assert failed: %s (%.*s)",
               tag + strlen(" device_assert failed: "), (int)(tag - where - 2), where + 2);
    else
      snprintf(e->fail_msg, sizeof e->fail_msg, "device_assert failed: %s (%s:%d)", msg, file,
               line);
  }
  e->th[e->cur].done = true;
  e->progress = true;
  swapcontext(&e->th[e->cur].uc, &e->sched); /* never resumed */
}

static void thread_main(unsigned hi, unsigned lo) {
  emu *e = (emu *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
  e->entry(e, e->argv);
  e->th[e->cur].done = true;
  e->progress = true;
}

/* Run one block; returns false on a deadlock. */
static bool run_block(emu *e) {
  for (int t = 0; t < e->nthreads; t++) {
    emu_thread *th = &e->th[t];
    getcontext(&th->uc);
    th->uc.uc_stack.ss_sp = th->stack;
    th->uc.uc_stack.ss_size = EMU_STACK;
    th->uc.uc_link = &e->sched;
    th->done = false;
    uintptr_t p = (uintptr_t)e;
    makecontext(&th->uc, (void (*)(void))thread_main, 2, (unsigned)(p >> 32),
                (unsigned)(p & 0xFFFFFFFFu));
  }
  memset(e->warps, 0, sizeof *e->warps * (size_t)(e->nthreads / 32));
  for (int i = 0; i < e->nthreads / 128; i++) {
    e->wgroups[i].arrived = 0;
    e->wgroups[i].gen = 0;
  }
  e->bar_arrived = 0;
  for (unsigned round = 0;; round++) {
    int alive = 0;
    e->progress = false;
    for (int i = 0; i < e->nthreads; i++) {
      int t = round & 1 ? e->nthreads - 1 - i : i;
      if (e->th[t].done)
        continue;
      alive++;
      e->cur = t;
      swapcontext(&e->sched, &e->th[t].uc);
    }
    if (!alive || e->failed)
      return true;
    if (!e->progress)
      return false;
  }
}

/* ---- JIT ------------------------------------------------------------------------------------ */

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static void host_init(void) {
  LLVMLinkInMCJIT();
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
}

/* void teeny_emu_entry(ptr emu, ptr argv): loads 16-byte slots, calls the kernel */
static void make_entry_wrapper(cg *g) {
  LLVMTypeRef p0 = LLVMPointerTypeInContext(g->ctx, 0);
  LLVMTypeRef pt[2] = {p0, p0};
  LLVMValueRef w = LLVMAddFunction(g->mod, "teeny_emu_entry",
                                   LLVMFunctionType(g->t_void, pt, 2, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, w, "e"));
  int n = g->f->nparams;
  LLVMValueRef *args = teeny__cg_alloc(g, sizeof *args * (size_t)(n + 1));
  args[0] = LLVMGetParam(w, 0);
  LLVMTypeRef fty = LLVMGlobalGetValueType(g->fn);
  LLVMTypeRef *ptys = teeny__cg_alloc(g, sizeof *ptys * (size_t)(n + 1));
  LLVMGetParamTypes(fty, ptys);
  for (int i = 0; i < n; i++) {
    LLVMValueRef off = teeny__cg_i64(g, 16LL * i);
    LLVMValueRef slot = LLVMBuildGEP2(b, g->t_i8, LLVMGetParam(w, 1), &off, 1, "");
    args[i + 1] = LLVMBuildLoad2(b, ptys[i + 1], slot, "");
  }
  LLVMBuildCall2(b, fty, g->fn, args, (unsigned)n + 1, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
}

static uint16_t f32_to_half_bits(float f) {
  uint32_t u = f32_bits(f), s = (u >> 16) & 0x8000;
  int ex = (int)((u >> 23) & 255) - 127 + 15;
  uint32_t m = u & 0x7FFFFF;
  if (((u >> 23) & 255) == 255)
    return (uint16_t)(s | 0x7C00 | (m ? 0x200 : 0));
  if (ex >= 31)
    return (uint16_t)(s | 0x7C00);
  if (ex <= 0) { /* subnormal: shift in the implicit bit, round to nearest even */
    if (ex < -10)
      return (uint16_t)s;
    m |= 0x800000;
    int sh = 14 - ex;
    uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
    if (rem > half || (rem == half && (r & 1)))
      r++;
    return (uint16_t)(s | r);
  }
  uint32_t r = ((uint32_t)ex << 10) | (m >> 13), rem = m & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
    r++;
  return (uint16_t)(s | r);
}

static void fill_slot(teeny_dtype dt, const teeny_interp_arg *a, unsigned char *slot) {
  if (dt == TEENY_DT_PTR) {
    memcpy(slot, &a->data, sizeof a->data);
  } else if (dt == TEENY_DT_F32) {
    float f = (float)a->v.f;
    memcpy(slot, &f, 4);
  } else if (dt == TEENY_DT_F64) {
    memcpy(slot, &a->v.f, 8);
  } else if (dt == TEENY_DT_F16 || dt == TEENY_DT_BF16) {
    float f = (float)a->v.f;
    uint16_t h = dt == TEENY_DT_F16 ? f32_to_half_bits(f)
                                    : (uint16_t)((f32_bits(f) + 0x7FFF + ((f32_bits(f) >> 16) & 1)) >> 16);
    memcpy(slot, &h, 2);
  } else if (dt == TEENY_DT_BOOL) {
    slot[0] = a->v.i != 0;
  } else {
    memcpy(slot, &a->v.u, 8);
  }
}

/* cp.async.bulk.tensor between the row-major [b0, b1] box at smem and the
 * box at (c0, c1) of the row-major tensor at base ([s0, s1], outer stride
 * st0 elements, es bytes each), as the H200's TMA does it (tma.c): a load
 * fills what lies outside the tensor with zeros; a store writes inside,
 * and in whole 16-byte pieces of a row, so also past the last dim up to
 * the next 16 bytes.  A box must start on 16 bytes along its last dim,
 * and a store's box not before the tensor in any dim: the GPU raises an
 * illegal instruction otherwise, and so does this (tma_error). */
static void tma_box(emu *e, unsigned char *smem, unsigned char *base, int32_t es, int32_t s0,
                    int32_t s1, int64_t st0, int32_t c0, int32_t c1, int32_t b0, int32_t b1,
                    bool store) {
  if ((int64_t)c1 * es % 16 || (store && (c0 < 0 || c1 < 0))) {
    e->tma_error = true;
    return;
  }
  int64_t end1 = store ? ((int64_t)s1 * es + 15) / 16 * 16 / es : s1;
  for (int32_t i = 0; i < b0; i++)
    for (int32_t j = 0; j < b1; j++) {
      int64_t r = (int64_t)c0 + i, c = (int64_t)c1 + j;
      unsigned char *box = smem + ((size_t)i * (size_t)b1 + (size_t)j) * (size_t)es;
      if (r < 0 || r >= s0 || c < 0 || c >= end1) {
        if (!store)
          memset(box, 0, (size_t)es);
        continue;
      }
      unsigned char *mem = base + (size_t)(r * st0 + c) * (size_t)es;
      memcpy(store ? mem : box, store ? box : mem, (size_t)es);
    }
}

/* A global access of `bytes` (2 to 16) at an address off that size: the
 * GPU faults ("misaligned address"); the run fails after the block. */
static void rt_misaligned(emu *e, uint64_t addr, int32_t bytes) {
  if (!e->misaligned) {
    e->misaligned = bytes;
    e->misaligned_at = addr;
  }
}

static void rt_tma_load(emu *e, unsigned char *dst, unsigned char *base, int32_t es, int32_t s0,
                        int32_t s1, int64_t st0, int32_t c0, int32_t c1, int32_t b0, int32_t b1) {
  tma_box(e, dst, base, es, s0, s1, st0, c0, c1, b0, b1, false);
}

static void rt_tma_store(emu *e, unsigned char *src, unsigned char *base, int32_t es, int32_t s0,
                         int32_t s1, int64_t st0, int32_t c0, int32_t c1, int32_t b0, int32_t b1) {
  tma_box(e, src, base, es, s0, s1, st0, c0, c1, b0, b1, true);
}

static const struct {
  const char *name;
  void *fn;
} runtime[] = {
    {"teeny_emu_misaligned", (void *)rt_misaligned},
    {"teeny_emu_tma_load", (void *)rt_tma_load}, {"teeny_emu_tma_store", (void *)rt_tma_store},
    {"teeny_emu_sreg", (void *)rt_sreg},   {"teeny_emu_barrier", (void *)rt_barrier},
    {"teeny_emu_shfl", (void *)rt_shfl},   {"teeny_emu_mma", (void *)rt_mma},
    {"teeny_emu_tanhf", (void *)rt_tanhf}, {"teeny_emu_ldmatrix", (void *)rt_ldmatrix},
    {"teeny_emu_wgmma", (void *)rt_wgmma}, {"teeny_emu_wgmma_ra", (void *)rt_wgmma_ra},
    {"teeny_emu_barrier_and", (void *)rt_barrier_and},
    {"teeny_emu_and", (void *)rt_and},     {"teeny_emu_fma16", (void *)rt_fma16},
    {"teeny_emu_vprintf", (void *)rt_vprintf}, {"teeny_emu_assertfail", (void *)rt_assertfail},
};

static int run_grid(cg *g, void (*entry)(void *, void *), const unsigned grid[3],
                    void *argv) {
  emu e;
  memset(&e, 0, sizeof e);
  e.nthreads = 32 * g->num_warps;
  e.th = teeny__cg_alloc(g, sizeof *e.th * (size_t)e.nthreads);
  e.warps = teeny__cg_alloc(g, sizeof *e.warps * (size_t)g->num_warps);
  e.wgroups = teeny__cg_alloc(g, sizeof *e.wgroups * (size_t)(g->num_warps / 4 + 1));
  for (int t = 0; t < e.nthreads; t++)
    e.th[t].stack = teeny__cg_alloc(g, EMU_STACK);
  e.entry = entry;
  e.argv = argv;
  for (int d = 0; d < 3; d++)
    e.nctaid[d] = grid[d];
  for (unsigned z = 0; z < grid[2]; z++)
    for (unsigned y = 0; y < grid[1]; y++)
      for (unsigned x = 0; x < grid[0]; x++) {
        e.ctaid[0] = x, e.ctaid[1] = y, e.ctaid[2] = z;
        if (!run_block(&e)) {
          teeny__error_at(g->cx, (teeny_loc){0, 0},
                          "emulator: block (%u, %u, %u) deadlocked (threads wait at "
                          "different barriers or collectives)",
                          x, y, z);
          return TEENY_E_RUNTIME;
        }
        if (e.failed) {
          teeny__error_at(g->cx, e.fail_loc, "%s", e.fail_msg);
          return TEENY_E_RUNTIME;
        }
        if (e.misaligned) {
          teeny__error_at(g->cx, (teeny_loc){0, 0},
                          "emulator: block (%u, %u, %u): a %d-byte global access at 0x%llx "
                          "is not aligned to its size (a misaligned address on the GPU)",
                          x, y, z, e.misaligned, (unsigned long long)e.misaligned_at);
          return TEENY_E_RUNTIME;
        }
        if (e.tma_error) {
          teeny__error_at(g->cx, (teeny_loc){0, 0},
                          "emulator: block (%u, %u, %u): a TMA box starts off a 16-byte "
                          "boundary along its last dim, or a TMA store's box before the "
                          "tensor (an illegal instruction on the GPU)",
                          x, y, z);
          return TEENY_E_RUNTIME;
        }
        if (e.wg_error) {
          teeny__error_at(g->cx, (teeny_loc){0, 0},
                          "emulator: block (%u, %u, %u): a wgmma's threads disagreed on "
                          "its descriptors or shape",
                          x, y, z);
          return TEENY_E_RUNTIME;
        }
      }
  return TEENY_OK;
}

static int jit_and_run(cg *g, LLVMTargetMachineRef tm, const unsigned grid[3],
                       void *argv) {
  char *msg = NULL;
  if (LLVMVerifyModule(g->mod, LLVMReturnStatusAction, &msg)) {
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "emulator: invalid LLVM IR: %.400s", msg);
    LLVMDisposeMessage(msg);
    return TEENY_E_LLVM;
  }
  LLVMDisposeMessage(msg);
  /* O1: no vectorisers on the host.  With x86's 128-bit vectors LLVM 19's
   * SLP vectoriser pairs up a thread's elements and miscompiles narrowed
   * conversions: `uitofp (sext i32 x to i64)` with x in [-63, 0] becomes
   * `uitofp <2 x i8>` (255 for 2^64 - 1; u16 -> f16 likewise: difffuzz's
   * emu_u64_to_bf16 and emu_u16_to_f16), a host-only wrong answer (the
   * NVPTX pipeline, 32-bit vector registers, leaves the same IR scalar).
   * LLVMPassBuilderOptionsSetSLPVectorization(0) does not keep it out of
   * default<O2>; O1 emulates no slower (less to compile). */
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(g->mod, "default<O1>", tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (err) {
    char *em = LLVMGetErrorMessage(err);
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "emulator: passes failed: %s", em);
    LLVMDisposeErrorMessage(em);
    return TEENY_E_LLVM;
  }
  struct LLVMMCJITCompilerOptions jo;
  LLVMInitializeMCJITCompilerOptions(&jo, sizeof jo);
  jo.OptLevel = 1;
  LLVMExecutionEngineRef ee;
  LLVMModuleRef mod = g->mod;
  msg = NULL;
  if (LLVMCreateMCJITCompilerForModule(&ee, mod, &jo, sizeof jo, &msg)) {
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "emulator: JIT failed: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return TEENY_E_LLVM;
  }
  g->mod = NULL; /* the engine owns it now (and frees it) */
  for (size_t i = 0; i < TEENY_ARRAY_LEN(runtime); i++) {
    LLVMValueRef fn = LLVMGetNamedFunction(mod, runtime[i].name);
    if (fn)
      LLVMAddGlobalMapping(ee, fn, runtime[i].fn);
  }
  uint64_t addr = LLVMGetFunctionAddress(ee, "teeny_emu_entry");
  int rc = TEENY_E_LLVM;
  if (addr) {
    void (*entry)(void *, void *);
    memcpy(&entry, &addr, sizeof entry);
    rc = run_grid(g, entry, grid, argv);
  } else {
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "emulator: no entry point after JIT");
  }
  LLVMDisposeExecutionEngine(ee);
  return rc;
}

static LLVMTargetMachineRef host_tm(void) {
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef t;
  char *msg = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (!LLVMGetTargetFromTriple(triple, &t, &msg))
    tm = LLVMCreateTargetMachine(t, triple, "generic", "", LLVMCodeGenLevelDefault,
                                 LLVMRelocDefault, LLVMCodeModelJITDefault);
  LLVMDisposeMessage(msg);
  LLVMDisposeMessage(triple);
  return tm;
}

/* The code an unwind carries (the arena's oom jump carries none); out of
 * line, since gcc's -Wclobbered flags temporaries after a setjmp. */
static int unwound(cg *g) {
  if (!g->err)
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "out of memory in the emulator");
  return g->err ? g->err : TEENY_E_NOMEM;
}

/* Build (may unwind) and run; argv holds the kernel's 16-byte slots. */
static int emulate(cg *g, LLVMTargetMachineRef tm, const unsigned grid[3], void *argv) {
  if (setjmp(g->fail))
    return unwound(g);
  teeny_codegen_out out = {0};
  teeny__cg_build_module(g, &out);
  make_entry_wrapper(g);
  return jit_and_run(g, tm, grid, argv);
}

int teeny__codegen_emulate(teeny_ctx *cx, const teeny_ir_func *f,
                           const teeny_codegen_opts *o, const unsigned grid[3],
                           const teeny_interp_arg *args, int nargs) {
  int nw = o && o->num_warps ? o->num_warps : 4;
  if (nw < 1 || nw > 32 || (nw & (nw - 1)) || nargs != f->nparams || !grid[0] ||
      !grid[1] || !grid[2]) {
    teeny__error_at(cx, (teeny_loc){0, 0}, "emulator: bad num_warps, grid or arguments");
    return TEENY_E_INVAL;
  }
  pthread_once(&host_once, host_init);
  LLVMTargetMachineRef tm = host_tm();
  if (!tm) {
    teeny__error_at(cx, (teeny_loc){0, 0}, "emulator: no host target in LLVM");
    return TEENY_E_LLVM;
  }
  cg *g = teeny__calloc(1, sizeof *g);
  unsigned char *argv = teeny__calloc((size_t)nargs + 1, 16);
  if (!g || !argv) {
    teeny__free(g);
    teeny__free(argv);
    LLVMDisposeTargetMachine(tm);
    return TEENY_E_NOMEM;
  }
  for (int i = 0; i < nargs; i++)
    fill_slot(teeny__ir_type(f, f->body->args[i]).dt, &args[i], argv + 16 * i);
  g->cx = cx;
  g->f = f;
  g->emu = true;
  g->sm = 90; /* sm_90a unless told otherwise: wgmma through the reference */
  g->sm_a = true;
  if (o && o->target && strcmp(o->target, "sm_90a") != 0) {
    g->sm_a = false;
    g->sm = strcmp(o->target, "sm_90") == 0 ? 90 : strcmp(o->target, "sm_80") == 0 ? 80 : 86;
  }
  g->num_warps = nw;
  g->warp_bits = teeny__cg_log2(nw);
  teeny__arena_init(&g->arena);
  g->arena.oom = &g->fail;
  g->ctx = LLVMContextCreate();
  g->mod = LLVMModuleCreateWithNameInContext(f->name, g->ctx);
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMSetTarget(g->mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(g->mod, td);
  LLVMDisposeTargetData(td);
  int rc = emulate(g, tm, grid, argv);
  if (g->b)
    LLVMDisposeBuilder(g->b);
  if (g->pb)
    LLVMDisposeBuilder(g->pb);
  if (g->mod)
    LLVMDisposeModule(g->mod);
  LLVMContextDispose(g->ctx);
  LLVMDisposeTargetMachine(tm);
  teeny__arena_free(&g->arena);
  teeny__free(g);
  teeny__free(argv);
  return rc;
}
