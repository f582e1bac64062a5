/*
 * dsl/nvptx/tma.c — loads of a tensor_desc kernel parameter's block through
 * Hopper's Tensor Memory Accelerator (sm_90 and later).
 *
 * irgen_desc.c marks the load of a block of a tensor_desc(T, B0, ..)
 * kernel parameter with its tensormap parameter and offsets (op->tma); its
 * pointer tile and mask stay the block's, so every other engine ignores
 * the mark.  Here such a load becomes one `cp.async.bulk.tensor` issued by
 * thread 0 into a shared buffer, completed on an mbarrier that every
 * thread waits on, then read into the load's layout from shared memory.
 * The tensormap is the CUtensorMap the client encoded from the same base,
 * shapes and strides (client/tensormap.c), passed by value: a 128-byte
 * .param, whose generic address is what the instruction takes.  The box
 * is the block; the TMA fills elements outside the tensor with zeros, as
 * the pointer lowering's mask does.
 *
 * The client encodes the tensormap only where the TMA can take the
 * tensor (16-byte aligned base and strides, ...: `encoded` below, and
 * client/tensormap.c, apply the same rules to the same values); the kernel
 * tests those rules (uniform scalars) and takes the pointer lowering
 * where they fail, so any tensor the descriptor can describe works.
 *
 * The emulator (g->emu) has no tensormap: thread 0 calls its runtime,
 * which copies the box from the base, shapes and strides (the same
 * parameters), and a barrier stands for the mbarrier.
 *
 * Taken only where nothing else is simpler or needed: a load the
 * pipeliner does not stage, of a tensor this kernel never writes (TMA
 * reads through the async proxy, which would need a proxy fence after the
 * kernel's own generic writes), rank 1 or 2, every box dim at most 256
 * elements, rows a multiple of 16 bytes.  Everything else keeps the
 * pointer lowering.
 */
#include <stdio.h>

#include "dsl/nvptx/codegen.h"

#define TMA_MAX_BOX 256    /* elements per box dim (cuTensorMapEncodeTiled) */
#define TMA_MAX_BYTES 65536 /* a box we are willing to give shared memory */

static teeny_type res_type(cg *g, const teeny_op *op) {
  return teeny__ir_type(g->f, op->res[0]);
}

bool teeny__cg_tma_ok(cg *g, const teeny_op *op) {
  if (op->code != IR_LOAD || !op->tma || g->sm < 90 || op->nres != 1 ||
      g->vi[op->res[0]].prefetched)
    return false;
  teeny_type t = res_type(g, op);
  if (t.rank < 1 || t.rank > 2 || t.dt == TEENY_DT_BOOL)
    return false;
  int es = teeny_dtype_size(t.dt);
  long bytes = es;
  for (int d = 0; d < t.rank; d++) {
    if (t.shape[d] > TMA_MAX_BOX)
      return false;
    bytes *= t.shape[d];
  }
  if ((t.shape[t.rank - 1] * es) % 16 || bytes > TMA_MAX_BYTES)
    return false;
  return teeny__cg_readonly(g, op->args[0]);
}

/* The generic address of tensormap parameter i (PTX: its .param symbol,
 * named as the NVPTX back end names kernel parameters). */
static LLVMValueRef tensormap_addr(cg *g, int i) {
  char text[256];
  snprintf(text, sizeof text, "mov.b64 $0, %s_param_%d;\n\tcvta.param.u64 $0, $0;", g->f->name,
           i);
  return teeny__cg_asm(g, g->t_i64, text, "=l", NULL, 0, false);
}

static LLVMValueRef smem32(cg *g, LLVMValueRef p) {
  return LLVMBuildPtrToInt(g->b, p, g->t_i32, "");
}

/* Run the rest of the current block's code only in thread 0 until
 * thread0_end(g, join). */
static LLVMBasicBlockRef thread0_begin(cg *g) {
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.issue");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.issued");
  LLVMValueRef t0 = LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, teeny__cg_i32(g, 0), "");
  LLVMBuildCondBr(g->b, t0, then, join);
  LLVMPositionBuilderAtEnd(g->b, then);
  return join;
}

static void thread0_end(cg *g, LLVMBasicBlockRef join) {
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

/* Every thread waits until the mbarrier at bar completes its phase 0. */
static void mbarrier_wait(cg *g, LLVMValueRef bar) {
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.wait");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.ready");
  LLVMBuildBr(g->b, loop);
  LLVMPositionBuilderAtEnd(g->b, loop);
  LLVMValueRef ok = teeny__cg_asm(g, g->t_i32,
                                  "{\n\t.reg .pred p;\n\t"
                                  "mbarrier.try_wait.parity.shared::cta.b64 p, [$1], 0;\n\t"
                                  "selp.u32 $0, 1, 0, p;\n\t}",
                                  "=r,r,~{memory}", &bar, 1, true);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, ok, teeny__cg_i32(g, 0), ""), done, loop);
  LLVMPositionBuilderAtEnd(g->b, done);
}

/* Thread 0 copies the box at the op's offsets into buf (completing on
 * bar); PTX. */
static void issue_copy(cg *g, const teeny_op *op, teeny_type t, LLVMValueRef buf,
                       LLVMValueRef bar, int bytes) {
  LLVMValueRef b32 = smem32(g, bar);
  LLVMBasicBlockRef join = thread0_begin(g);
  teeny__cg_asm(g, g->t_void,
                "mbarrier.init.shared::cta.b64 [$0], 1;\n\t"
                "fence.mbarrier_init.release.cluster;\n\t"
                "fence.proxy.async.shared::cta;",
                "r,~{memory}", &b32, 1, true);
  thread0_end(g, join);
  teeny__cg_barrier(g); /* every thread sees the initialised mbarrier */
  join = thread0_begin(g);
  LLVMValueRef a[6] = {b32, teeny__cg_i32(g, bytes)};
  teeny__cg_asm(g, g->t_void, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
                "r,r,~{memory}", a, 2, true);
  int r = t.rank, n = 0;
  a[n++] = smem32(g, buf);
  a[n++] = tensormap_addr(g, op->tma - 1);
  for (int k = r - 1; k >= 0; k--) /* innermost first */
    a[n++] = teeny__cg_scalar(g, op->tma_off[k]);
  a[n++] = b32;
  char text[256];
  snprintf(text, sizeof text,
           "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
           " [$0], [$1, {%s}], [$%d];",
           r, r == 2 ? "$2, $3" : "$2", n - 1);
  teeny__cg_asm(g, g->t_void, text, r == 2 ? "r,l,r,r,r,~{memory}" : "r,l,r,r,~{memory}", a, n,
                true);
  thread0_end(g, join);
  mbarrier_wait(g, bar);
}

/* The emulator: thread 0 copies the box from the descriptor's base,
 * shapes and strides (the parameters after the tensormap), then a
 * barrier. */
static void emu_copy(cg *g, const teeny_op *op, teeny_type t, LLVMValueRef buf) {
  const teeny_region *body = g->f->body;
  int tm = op->tma - 1, r = t.rank;
  LLVMValueRef a[10];
  a[0] = buf;
  a[1] = teeny__cg_scalar(g, body->args[tm + 1]);                 /* base */
  a[2] = teeny__cg_i32(g, teeny_dtype_size(t.dt));
  a[3] = r == 2 ? teeny__cg_scalar(g, body->args[tm + 2]) : teeny__cg_i32(g, 1); /* outer shape */
  a[4] = teeny__cg_scalar(g, body->args[tm + r + 1]);               /* inner shape */
  a[5] = r == 2 ? teeny__cg_scalar(g, body->args[tm + 2 + r]) : teeny__cg_i64(g, 0); /* outer stride */
  a[6] = r == 2 ? teeny__cg_scalar(g, op->tma_off[0]) : teeny__cg_i32(g, 0);
  a[7] = teeny__cg_scalar(g, op->tma_off[r - 1]);
  a[8] = teeny__cg_i32(g, r == 2 ? t.shape[0] : 1);
  a[9] = teeny__cg_i32(g, t.shape[r - 1]);
  LLVMBasicBlockRef join = thread0_begin(g);
  teeny__cg_emu_call(g, "teeny_emu_tma_load", g->t_void, a, 10);
  thread0_end(g, join);
  teeny__cg_barrier(g);
}

/* Whether the client encoded the tensormap: the TMA's own conditions on
 * the parameters after it, which client/tensormap.c applies to the same
 * values (it leaves the tensormap zero otherwise): base 16-byte aligned,
 * every shape at least 1, every stride a multiple of 16 bytes below 2^40
 * and no smaller than the dim it steps over (no overlapping rows). */
static LLVMValueRef encoded(cg *g, const teeny_op *op, teeny_type t) {
  const teeny_region *body = g->f->body;
  int tm = op->tma - 1, r = t.rank, es = teeny_dtype_size(t.dt);
  LLVMValueRef base = teeny__cg_scalar(g, body->args[tm + 1]);
  base = LLVMBuildPtrToInt(g->b, base, g->t_i64, "");
  LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntEQ,
                                  LLVMBuildAnd(g->b, base, teeny__cg_i64(g, 15), ""),
                                  teeny__cg_i64(g, 0), "");
  for (int k = 0; k < r; k++) {
    LLVMValueRef n = teeny__cg_scalar(g, body->args[tm + 2 + k]);
    ok = LLVMBuildAnd(g->b, ok, LLVMBuildICmp(g->b, LLVMIntSGT, n, teeny__cg_i32(g, 0), ""), "");
  }
  for (int k = 0; k + 1 < r; k++) {
    LLVMValueRef st = teeny__cg_scalar(g, body->args[tm + 2 + r + k]);
    LLVMValueRef inner = LLVMBuildSExt(g->b, teeny__cg_scalar(g, body->args[tm + 3 + k]),
                                       g->t_i64, "");
    LLVMValueRef bytes = LLVMBuildMul(g->b, st, teeny__cg_i64(g, es), "");
    LLVMValueRef c1 = LLVMBuildICmp(g->b, LLVMIntEQ,
                                    LLVMBuildAnd(g->b, bytes, teeny__cg_i64(g, 15), ""),
                                    teeny__cg_i64(g, 0), "");
    LLVMValueRef c2 = LLVMBuildICmp(g->b, LLVMIntULT, st,
                                    teeny__cg_i64(g, (1LL << 40) / es), "");
    LLVMValueRef c3 = LLVMBuildICmp(g->b, LLVMIntSGE, st, inner, "");
    ok = LLVMBuildAnd(g->b, ok, LLVMBuildAnd(g->b, c1, LLVMBuildAnd(g->b, c2, c3, ""), ""), "");
  }
  return ok;
}

/* The TMA's copy of the block, read into layout L. */
static LLVMValueRef *tma_regs(cg *g, const teeny_op *op, teeny_type t, const cg_layout *L) {
  int es = teeny_dtype_size(t.dt);
  long numel = 1;
  for (int d = 0; d < t.rank; d++)
    numel *= t.shape[d];
  int bytes = (int)(numel * es);
  teeny__cg_smem_begin(g); /* the previous exchange's readers are done */
  int off = teeny__cg_smem_take(g, bytes, 128);
  int mb = teeny__cg_smem_take(g, 8, 8);
  LLVMValueRef buf = teeny__cg_smem_ptr(g, teeny__cg_i32(g, off));
  if (g->emu)
    emu_copy(g, op, t, buf);
  else
    issue_copy(g, op, t, buf, teeny__cg_smem_ptr(g, teeny__cg_i32(g, mb)), bytes);
  /* the box is row-major in buf */
  int vb = 1 << teeny__cg_run_bits(L, L->rank - 1);
  while (vb * es > 16)
    vb >>= 1;
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r += vb) {
    long s = teeny__cg_dup_src(L, r);
    if (s != r) {
      for (int i = 0; i < vb; i++)
        out[r + i] = out[s + i];
      continue;
    }
    LLVMValueRef o = LLVMBuildMul(g->b, teeny__cg_flat(g, L, r), teeny__cg_i32(g, es), "");
    o = LLVMBuildAdd(g->b, o, teeny__cg_i32(g, off), "");
    teeny__cg_smem_load(g, teeny__cg_smem_ptr(g, o), t.dt, out + r, vb);
  }
  return out;
}

/* The TMA where the client could encode the tensormap, else the pointer
 * lowering (a uniform branch), joined register by register. */
void teeny__cg_emit_tma_load(cg *g, const teeny_op *op) {
  teeny_type t = res_type(g, op);
  const cg_layout *L = g->vi[op->res[0]].nat;
  LLVMValueRef ok = encoded(g, op, t);
  LLVMBasicBlockRef bb[2] = {LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma"),
                             LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.pointers")};
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.join"), ends[2];
  LLVMBuildCondBr(g->b, ok, bb[0], bb[1]);
  LLVMValueRef *regs[2];
  cg_order before = teeny__cg_order_save(g), after[2];
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->b, bb[k]);
    teeny__cg_order_restore(g, &before);
    int saved = teeny__cg_scope_push(g);
    regs[k] = k == 0 ? tma_regs(g, op, t, L) : teeny__cg_load_regs(g, op, NULL);
    teeny__cg_scope_pop(g, saved);
    ends[k] = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, join);
    after[k] = teeny__cg_order_save(g);
  }
  teeny__cg_order_restore(g, &after[0]);
  teeny__cg_order_join(g, &after[1]);
  LLVMPositionBuilderAtEnd(g->b, join);
  long n = 1L << L->nreg;
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  for (long r = 0; r < n; r++) {
    out[r] = LLVMBuildPhi(g->b, LLVMTypeOf(regs[0][r]), "");
    LLVMAddIncoming(out[r], &regs[0][r], &ends[0], 1);
    LLVMAddIncoming(out[r], &regs[1][r], &ends[1], 1);
  }
  teeny__cg_set(g, op->res[0], L, out);
}
