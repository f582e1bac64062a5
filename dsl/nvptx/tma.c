/*
 * dsl/nvptx/tma.c — loads and stores of a tensor_desc kernel parameter's
 * block through Hopper's Tensor Memory Accelerator (sm_90 and later).
 *
 * irgen_desc.c marks the load of a block of a tensor_desc(T, B0, ..)
 * kernel parameter with its tensormap parameter and offsets (op->tma); its
 * pointer tile and mask stay the block's, so every other engine ignores
 * the mark.  Here such a load becomes one `cp.async.bulk.tensor` issued by
 * thread 0 into a shared buffer, completed on an mbarrier that every
 * thread waits on, then read into the load's layout from shared memory; a
 * store writes the box to shared memory and thread 0 sends it as a bulk
 * group.
 * The tensormap is the CUtensorMap the client encoded from the same base,
 * shapes and strides (client/tensormap.c), passed by value: a 128-byte
 * .param, whose generic address is what the instruction takes.  The box
 * is the block; the TMA fills elements outside the tensor with zeros, as
 * the pointer lowering's mask does.
 *
 * The client encodes the tensormap only where the TMA can take the
 * tensor (16-byte aligned strides, ...: `encoded` below, and
 * client/tensormap.c, apply the same rules to the same values; the base
 * is 16-byte aligned, as every pointer parameter is assumed to be, so
 * LLVM folds that part of the test, and the client refuses another base:
 * a zero tensormap reaching the TMA is an illegal instruction); the kernel
 * tests those rules (uniform scalars), and that the access's box starts
 * on 16 bytes along the last dim, and takes the pointer lowering where
 * they fail, so any tensor and any offsets work.
 *
 * The emulator (g->emu) has no tensormap: thread 0 calls its runtime,
 * which copies the box from the base, shapes and strides (the same
 * parameters), and a barrier stands for the mbarrier.
 *
 * Taken only where nothing else is simpler or needed: a load the
 * pipeliner does not stage, of a tensor this kernel never writes (TMA
 * reads through the async proxy, which would need a proxy fence after the
 * kernel's own generic writes); a store outside loops to a tensor nothing
 * else in the kernel touches; rank 1 or 2, every box dim at most 256
 * elements, rows a multiple of 16 bytes, 64 KiB at most.  Everything else
 * keeps the pointer lowering.
 */
#include <stdio.h>

#include "dsl/nvptx/codegen.h"

#define TMA_MAX_BOX 256    /* elements per box dim (cuTensorMapEncodeTiled) */
#define TMA_MAX_BYTES 65536 /* a box we are willing to give shared memory */

/* The block's type: a load's result, a store's value. */
static teeny_type block_type(cg *g, const teeny_op *op) {
  return teeny__ir_type(g->f, op->code == IR_LOAD ? op->res[0] : op->args[1]);
}

/* The box rules (client/tensormap.c applies them too). */
static bool box_ok(teeny_type t) {
  if (t.rank < 1 || t.rank > 2 || t.dt == TEENY_DT_BOOL)
    return false;
  int es = teeny_dtype_size(t.dt);
  long bytes = es;
  for (int d = 0; d < t.rank; d++) {
    if (t.shape[d] > TMA_MAX_BOX)
      return false;
    bytes *= t.shape[d];
  }
  return (t.shape[t.rank - 1] * es) % 16 == 0 && bytes <= TMA_MAX_BYTES;
}

/* Does any access of the region other than `self` touch memory that
 * roots may point into (0: unknown, so anything)?  `self` in a loop counts
 * too: its runs would be bulk stores with no order between them. */
static bool touched_elsewhere(cg *g, const teeny_region *r, const teeny_op *self,
                              uint64_t roots, bool looping) {
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    bool loop = looping || op->code == IR_FOR || op->code == IR_WHILE;
    for (int k = 0; k < op->nregions; k++)
      if (touched_elsewhere(g, op->regions[k], self, roots, loop))
        return true;
    if (op == self && looping)
      return true;
    if (op == self || (op->code != IR_LOAD && op->code != IR_STORE &&
                       op->code != IR_ATOMIC_RMW && op->code != IR_ATOMIC_CAS))
      continue;
    uint64_t other = g->vi[op->args[0]].roots;
    if (!other || (other & roots))
      return true;
  }
  return false;
}

bool teeny__cg_tma_ok(cg *g, const teeny_op *op) {
  if (!op->tma || g->sm < 90 || !box_ok(block_type(g, op)))
    return false;
  if (op->code == IR_LOAD) /* TMA reads through the async proxy: no writes of ours to order */
    return op->nres == 1 && !g->vi[op->res[0]].prefetched && teeny__cg_readonly(g, op->args[0]);
  /* a store: nothing else of the kernel may touch what it writes (the async
   * proxy's writes are ordered with nothing of ours), and it runs once */
  uint64_t roots = g->vi[op->args[0]].roots;
  return op->code == IR_STORE && roots && !touched_elsewhere(g, g->f->body, op, roots, false);
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

/* The box operands of the op after the tensormap: its coordinates,
 * innermost first (PTX). */
static int box_coords(cg *g, const teeny_op *op, int r, LLVMValueRef *a) {
  for (int k = r - 1; k >= 0; k--)
    a[r - 1 - k] = teeny__cg_scalar(g, op->tma_off[k]);
  return r;
}

/* The kernel's one mbarrier for TMA loads, made at the first: a shared
 * variable of its own (exchanges reuse their buffer; this must persist),
 * initialised by thread 0 in the entry block (the first load's barrier
 * orders that before any use), with a phase bit per thread that every
 * load's wait flips in step (all threads run every load: its branch is
 * uniform).  Re-initialising it per load would be undefined. */
static LLVMValueRef mbarrier(cg *g) {
  if (g->tma_bar)
    return g->tma_bar;
  LLVMTypeRef t = LLVMArrayType2(g->t_i8, 8);
  g->tma_bar = LLVMAddGlobalInAddressSpace(g->mod, t, "teeny_tma_mbarrier", 3);
  LLVMSetInitializer(g->tma_bar, LLVMGetUndef(t));
  LLVMSetLinkage(g->tma_bar, LLVMInternalLinkage);
  LLVMSetAlignment(g->tma_bar, 8);
  LLVMBuilderRef keep = g->b;
  g->b = g->pb;
  LLVMValueRef a[2] = {smem32(g, g->tma_bar), g->tid};
  teeny__cg_asm(g, g->t_void,
                "{\n\t.reg .pred p;\n\tsetp.eq.u32 p, $1, 0;\n\t"
                "@p mbarrier.init.shared::cta.b64 [$0], 1;\n\t"
                "@p fence.mbarrier_init.release.cluster;\n\t}",
                "r,r,~{memory}", a, 2, true);
  g->tma_phase = LLVMBuildAlloca(g->b, g->t_i32, "tma.phase");
  LLVMBuildStore(g->b, teeny__cg_i32(g, 0), g->tma_phase);
  g->b = keep;
  return g->tma_bar;
}

/* Every thread waits until the mbarrier completes the phase its phase bit
 * names, and flips the bit. */
static void mbarrier_wait(cg *g, LLVMValueRef bar) {
  LLVMValueRef phase = LLVMBuildLoad2(g->b, g->t_i32, g->tma_phase, "");
  LLVMBuildStore(g->b, LLVMBuildXor(g->b, phase, teeny__cg_i32(g, 1), ""), g->tma_phase);
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.wait");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.ready");
  LLVMBuildBr(g->b, loop);
  LLVMPositionBuilderAtEnd(g->b, loop);
  LLVMValueRef a[2] = {smem32(g, bar), phase};
  LLVMValueRef ok = teeny__cg_asm(g, g->t_i32,
                                  "{\n\t.reg .pred p;\n\t"
                                  "mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\t"
                                  "selp.u32 $0, 1, 0, p;\n\t}",
                                  "=r,r,r,~{memory}", a, 2, true);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, ok, teeny__cg_i32(g, 0), ""), done, loop);
  LLVMPositionBuilderAtEnd(g->b, done);
}

/* Thread 0 copies the box at the op's offsets into buf (completing on
 * the kernel's mbarrier); every thread waits for it (PTX). */
static void issue_copy(cg *g, const teeny_op *op, teeny_type t, LLVMValueRef buf, int bytes) {
  LLVMValueRef bar = mbarrier(g), b32 = smem32(g, bar);
  LLVMBasicBlockRef join = thread0_begin(g);
  teeny__cg_fence_proxy_async(g); /* our earlier generic accesses of buf come first */
  LLVMValueRef a[6] = {b32, teeny__cg_i32(g, bytes)};
  teeny__cg_asm(g, g->t_void, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
                "r,r,~{memory}", a, 2, true);
  int r = t.rank, n = 0;
  a[n++] = smem32(g, buf);
  a[n++] = tensormap_addr(g, op->tma - 1);
  n += box_coords(g, op, r, a + n);
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

/* Thread 0 writes the box in buf to the op's offsets, in the tensor
 * (PTX): every thread's writes of buf are fenced for the async proxy
 * first; thread 0 waits until the copy has read buf. */
static void issue_store(cg *g, const teeny_op *op, teeny_type t, LLVMValueRef buf) {
  teeny__cg_fence_proxy_async(g);
  teeny__cg_barrier(g);
  LLVMBasicBlockRef join = thread0_begin(g);
  int r = t.rank;
  LLVMValueRef a[6];
  a[0] = tensormap_addr(g, op->tma - 1);
  int n = 1 + box_coords(g, op, r, a + 1);
  a[n++] = smem32(g, buf);
  char text[256];
  snprintf(text, sizeof text,
           "cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [$0, {%s}], [$%d];\n\t"
           "cp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;",
           r, r == 2 ? "$1, $2" : "$1", n - 1);
  teeny__cg_asm(g, g->t_void, text, r == 2 ? "l,r,r,r,~{memory}" : "l,r,r,~{memory}", a, n,
                true);
  thread0_end(g, join);
}

/* The emulator's copy between buf and the box of the tensor (fn:
 * teeny_emu_tma_load or _store), from the descriptor's base, shapes and
 * strides (the parameters after the tensormap), by thread 0 between
 * barriers. */
static void emu_box(cg *g, const teeny_op *op, teeny_type t, LLVMValueRef buf, const char *fn) {
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
  teeny__cg_barrier(g);
  LLVMBasicBlockRef join = thread0_begin(g);
  teeny__cg_emu_call(g, fn, g->t_void, a, 10);
  thread0_end(g, join);
  teeny__cg_barrier(g);
}

/* Whether the TMA takes this access: the client encoded the tensormap
 * (the TMA's own conditions on the parameters after it, which
 * client/tensormap.c applies to the same values, leaving the tensormap
 * zero otherwise: base 16-byte aligned, every shape at least 1, every
 * stride a multiple of 16 bytes below 2^40 and no smaller than the dim it
 * steps over), and the box starts on a 16-byte boundary along the last
 * dim. */
/* A TMA store's own conditions, found on the H200 by difffuzz (GPU
 * campaign 13, docs/reliability.md): its box must not start before the
 * tensor in any dim (an illegal instruction otherwise, where a load's box
 * may), and the tensor's last dim must be a multiple of 16 bytes long: the
 * TMA writes rows in whole 16-byte pieces, so it would overwrite what lies
 * past the last dim up to the next 16 bytes (Triton documents that as a
 * limitation of its TMA stores; here such a store takes the pointer path). */
static LLVMValueRef store_ok(cg *g, const teeny_op *op, int r, int es, int inner_shape) {
  LLVMValueRef bytes = LLVMBuildMul(g->b, teeny__cg_scalar(g, inner_shape), teeny__cg_i32(g, es), "");
  LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntEQ,
                                  LLVMBuildAnd(g->b, bytes, teeny__cg_i32(g, 15), ""),
                                  teeny__cg_i32(g, 0), "");
  for (int k = 0; k < r; k++)
    ok = LLVMBuildAnd(g->b, ok,
                      LLVMBuildICmp(g->b, LLVMIntSGE, teeny__cg_scalar(g, op->tma_off[k]),
                                    teeny__cg_i32(g, 0), ""),
                      "");
  return ok;
}

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
  /* and this access's box must start on 16 bytes along the last dim (the
   * H200 raises an illegal instruction otherwise: tests/gpu/lang_gpu.py's
   * desc_param reads a block 5 elements in) */
  LLVMValueRef start = LLVMBuildMul(g->b, teeny__cg_scalar(g, op->tma_off[r - 1]),
                                    teeny__cg_i32(g, es), "");
  ok = LLVMBuildAnd(g->b, ok,
                    LLVMBuildICmp(g->b, LLVMIntEQ,
                                  LLVMBuildAnd(g->b, start, teeny__cg_i32(g, 15), ""),
                                  teeny__cg_i32(g, 0), ""),
                    "");
  if (op->code == IR_STORE) /* what the H200's TMA stores need besides */
    ok = LLVMBuildAnd(g->b, ok, store_ok(g, op, r, es, body->args[tm + 1 + r]), "");
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

/* Elements of layout L per shared-memory access of a row-major box:
 * consecutive registers along the last dim, at most 16 bytes. */
static int box_vec(const cg_layout *L, int es) {
  int vb = 1 << teeny__cg_run_bits(L, L->rank - 1);
  while (vb * es > 16)
    vb >>= 1;
  return vb;
}

/* The shared address of register r's element in the box at off. */
static LLVMValueRef box_addr(cg *g, const cg_layout *L, long r, int es, int off) {
  LLVMValueRef o = LLVMBuildMul(g->b, teeny__cg_flat(g, L, r), teeny__cg_i32(g, es), "");
  return teeny__cg_smem_ptr(g, LLVMBuildAdd(g->b, o, teeny__cg_i32(g, off), ""));
}

static int box_bytes(teeny_type t) {
  long numel = 1;
  for (int d = 0; d < t.rank; d++)
    numel *= t.shape[d];
  return (int)(numel * teeny_dtype_size(t.dt));
}

/* The TMA's copy of the block, read into layout L. */
static LLVMValueRef *tma_load_regs(cg *g, const teeny_op *op, teeny_type t, const cg_layout *L) {
  int es = teeny_dtype_size(t.dt), bytes = box_bytes(t);
  teeny__cg_smem_begin(g); /* the previous exchange's readers are done */
  int off = teeny__cg_smem_take(g, bytes, 128);
  LLVMValueRef buf = teeny__cg_smem_ptr(g, teeny__cg_i32(g, off));
  if (g->emu)
    emu_box(g, op, t, buf, "teeny_emu_tma_load");
  else
    issue_copy(g, op, t, buf, bytes);
  int vb = box_vec(L, es);
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r += vb) {
    long s = teeny__cg_dup_src(L, r);
    if (s != r) {
      for (int i = 0; i < vb; i++)
        out[r + i] = out[s + i];
      continue;
    }
    teeny__cg_smem_load(g, box_addr(g, L, r, es, off), t.dt, out + r, vb);
  }
  return out;
}

/* The block's values (layout L) written row-major to shared memory, and
 * from there by the TMA. */
static void tma_store(cg *g, const teeny_op *op, teeny_type t, const cg_layout *L) {
  int es = teeny_dtype_size(t.dt), bytes = box_bytes(t);
  LLVMValueRef *v = teeny__cg_get(g, op->args[1], L);
  teeny__cg_smem_begin(g);
  int off = teeny__cg_smem_take(g, bytes, 128);
  int vb = box_vec(L, es);
  for (long r = 0; r < (1L << L->nreg); r += vb)
    if (teeny__cg_reg_owner(L, r))
      teeny__cg_smem_store(g, box_addr(g, L, r, es, off), t.dt, v + r, vb);
  LLVMValueRef buf = teeny__cg_smem_ptr(g, teeny__cg_i32(g, off));
  if (g->emu)
    emu_box(g, op, t, buf, "teeny_emu_tma_store");
  else
    issue_store(g, op, t, buf);
}

/* The TMA where the client could encode the tensormap, else the pointer
 * lowering (a uniform branch); a load's registers joined by phis. */
void teeny__cg_emit_tma(cg *g, const teeny_op *op) {
  teeny_type t = block_type(g, op);
  bool load = op->code == IR_LOAD;
  const cg_vinfo *vi = &g->vi[load ? op->res[0] : op->args[1]];
  const cg_layout *L = vi->nat ? vi->nat : teeny__cg_mem_layout(g, op);
  LLVMValueRef ok = encoded(g, op, t);
  LLVMBasicBlockRef bb[2] = {LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma"),
                             LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.pointers")};
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "tma.join"), ends[2];
  LLVMBuildCondBr(g->b, ok, bb[0], bb[1]);
  LLVMValueRef *regs[2] = {NULL, NULL};
  cg_order before = teeny__cg_order_save(g), after[2];
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->b, bb[k]);
    teeny__cg_order_restore(g, &before);
    int saved = teeny__cg_scope_push(g);
    if (load)
      regs[k] = k == 0 ? tma_load_regs(g, op, t, L) : teeny__cg_load_regs(g, op, NULL);
    else if (k == 0)
      tma_store(g, op, t, L);
    else
      teeny__cg_emit_pointer_store(g, op);
    teeny__cg_scope_pop(g, saved);
    ends[k] = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, join);
    after[k] = teeny__cg_order_save(g);
  }
  teeny__cg_order_restore(g, &after[0]);
  teeny__cg_order_join(g, &after[1]);
  LLVMPositionBuilderAtEnd(g->b, join);
  if (!load)
    return;
  LLVMValueRef *out = teeny__cg_regs_new(g, L);
  for (long r = 0; r < (1L << L->nreg); r++) {
    out[r] = LLVMBuildPhi(g->b, LLVMTypeOf(regs[0][r]), "");
    LLVMAddIncoming(out[r], &regs[0][r], &ends[0], 1);
    LLVMAddIncoming(out[r], &regs[1][r], &ends[1], 1);
  }
  teeny__cg_set(g, op->res[0], L, out);
}

