/*
 * dsl/nvptx/index.c — ops whose elements move by computed indices, through
 * shared memory: gather (and flip, which the front end makes a gather) and
 * histogram.
 *
 * Both put a tile in shared memory at its elements' flat indices, stored
 * by each element's first holder, and read it back after a barrier: gather
 * reads the source element each of its index's elements names, histogram
 * counts into bins with shared atomics.  The region is an exchange's
 * (teeny__cg_smem_begin: a barrier first, so the previous readers are
 * done); the next exchange's barrier protects these reads.
 */
#include "dsl/nvptx/codegen.h"

static int esize(teeny_dtype dt) { return dt == TEENY_DT_BOOL ? 1 : teeny_dtype_size(dt); }

/* smem + base + flat * es */
static LLVMValueRef at(cg *g, int base, LLVMValueRef flat, int es) {
  return teeny__cg_smem_ptr(g, LLVMBuildAdd(g->b, teeny__cg_i32(g, base),
                                            LLVMBuildMul(g->b, flat, teeny__cg_i32(g, es), ""), ""));
}

/* Instructions built between if_open and if_close run only where cond
 * holds. */
static LLVMBasicBlockRef if_open(cg *g, LLVMValueRef cond, const char *name) {
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "join");
  LLVMBuildCondBr(g->b, cond, then, join);
  LLVMPositionBuilderAtEnd(g->b, then);
  g->divergent++;
  return join;
}

static void if_close(cg *g, LLVMBasicBlockRef join) {
  g->divergent--;
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

/* ---- gather -------------------------------------------------------------------------------------
 * out[e] = src[f(e)]: f is idx[e] along the axis and e's own coordinate off
 * it; an index out of [0, n) reads element 0 and gives 0 (branchless). */

void teeny__cg_emit_gather(cg *g, const teeny_op *op) {
  teeny_type st = teeny__ir_type(g->f, op->args[0]), rt = teeny__ir_type(g->f, op->res[0]);
  const cg_layout *Ls = teeny__cg_use_layout(g, op->args[0]);
  LLVMValueRef *sv = teeny__cg_get(g, op->args[0], Ls);
  const cg_layout *Lo = g->vi[op->res[0]].nat;
  LLVMValueRef *iv = teeny__cg_get(g, op->args[1], Lo);
  int es = esize(st.dt);
  teeny__cg_smem_begin(g);
  int base = teeny__cg_smem_take(g, (int)(teeny__type_numel(st) * es), 16);
  LLVMValueRef owner = teeny__cg_owner(g, Ls);
  bool all = LLVMIsAConstantInt(owner) != NULL;
  LLVMBasicBlockRef join = all ? NULL : if_open(g, owner, "gather.put");
  for (long r = 0; r < (1L << Ls->nreg); r++)
    if (teeny__cg_reg_owner(Ls, r))
      teeny__cg_smem_store(g, at(g, base, teeny__cg_flat(g, Ls, r), es), st.dt, &sv[r], 1);
  if (join)
    if_close(g, join);
  teeny__cg_barrier(g);
  int n = st.shape[op->axis];
  /* elements after the axis: the same count in src and the result */
  long inner = 1;
  for (int d = op->axis + 1; d < rt.rank; d++)
    inner *= rt.shape[d];
  int rhigh = teeny__cg_log2(inner * rt.shape[op->axis]);
  int shigh = teeny__cg_log2(inner * st.shape[op->axis]);
  LLVMValueRef *out = teeny__cg_regs_new(g, Lo);
  LLVMValueRef zero = teeny__cg_const(g, st.dt, (teeny_scalar){.u = 0});
  for (long r = 0; r < (1L << Lo->nreg); r++) {
    long s = teeny__cg_dup_src(Lo, r);
    if (s != r) {
      out[r] = out[s];
      continue;
    }
    LLVMValueRef k = iv[r];
    LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntULT, k, teeny__cg_i32(g, n), "");
    k = LLVMBuildSelect(g->b, ok, k, teeny__cg_i32(g, 0), "");
    /* src's flat index: the result's with the axis's index replaced by k */
    LLVMValueRef flat = k;
    if (st.rank > 1) {
      LLVMValueRef e = teeny__cg_flat(g, Lo, r);
      flat = LLVMBuildMul(g->b, k, teeny__cg_i32(g, (int)inner), "");
      if (inner > 1) /* the dims after the axis */
        flat = LLVMBuildAdd(g->b, flat, LLVMBuildAnd(g->b, e, teeny__cg_i32(g, (int)inner - 1), ""),
                            "");
      if (op->axis > 0) /* the dims before it */
        flat = LLVMBuildAdd(g->b, flat,
                            LLVMBuildShl(g->b, LLVMBuildLShr(g->b, e, teeny__cg_i32(g, rhigh), ""),
                                         teeny__cg_i32(g, shigh), ""),
                            "");
    }
    LLVMValueRef v;
    teeny__cg_smem_load(g, at(g, base, flat, es), st.dt, &v, 1);
    out[r] = LLVMBuildSelect(g->b, ok, v, zero, "");
  }
  teeny__cg_set(g, op->res[0], Lo, out);
}

/* ---- histogram ---------------------------------------------------------------------------------
 * The bins live in shared memory for the op: zeroed by all threads, then
 * every element's first holder adds 1 to its bin with a shared atomic
 * (atom.shared.add: elements that meet in a bin from different threads
 * are counted exactly), then each thread reads its result elements.  An
 * element out of [0, bins) is not counted (the front end sends masked-off
 * and out-of-range ones as -1).  Barriers before (the exchange region's),
 * after zeroing and after counting. */

void teeny__cg_emit_histogram(cg *g, const teeny_op *op) {
  const cg_layout *L = teeny__cg_use_layout(g, op->args[0]);
  LLVMValueRef *x = teeny__cg_get(g, op->args[0], L);
  teeny_type rt = teeny__ir_type(g->f, op->res[0]);
  int bins = rt.shape[0], nthreads = 32 * g->num_warps;
  const cg_layout *Lout = g->vi[op->res[0]].nat;
  teeny__cg_smem_begin(g);
  int base = teeny__cg_smem_take(g, bins * 4, 16);
  LLVMValueRef zero = teeny__cg_i32(g, 0);
  for (int i = 0; i < bins; i += nthreads) {
    LLVMValueRef bin = LLVMBuildAdd(g->b, g->tid, teeny__cg_i32(g, i), "");
    LLVMValueRef addr = at(g, base, bin, 4);
    if (bins - i >= nthreads) {
      teeny__cg_smem_store(g, addr, TEENY_DT_I32, &zero, 1);
      continue;
    }
    LLVMBasicBlockRef join =
        if_open(g, LLVMBuildICmp(g->b, LLVMIntULT, bin, teeny__cg_i32(g, bins), ""), "hist.zero");
    teeny__cg_smem_store(g, addr, TEENY_DT_I32, &zero, 1);
    if_close(g, join);
  }
  teeny__cg_barrier(g);
  LLVMValueRef owner = teeny__cg_owner(g, L);
  for (long r = 0; r < (1L << L->nreg); r++) {
    if (!teeny__cg_reg_owner(L, r))
      continue;
    LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, x[r], teeny__cg_i32(g, bins), "");
    in = LLVMBuildAnd(g->b, in, owner, "");
    LLVMBasicBlockRef join = if_open(g, in, "hist.add");
    LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpAdd, at(g, base, x[r], 4), teeny__cg_i32(g, 1),
                       LLVMAtomicOrderingMonotonic, 0);
    if_close(g, join);
  }
  teeny__cg_barrier(g);
  long nout = 1L << Lout->nreg;
  LLVMValueRef *out = teeny__cg_regs_new(g, Lout);
  for (long r = 0; r < nout; r++) {
    long s = teeny__cg_dup_src(Lout, r);
    if (s != r) {
      out[r] = out[s];
      continue;
    }
    teeny__cg_smem_load(g, at(g, base, teeny__cg_flat(g, Lout, r), 4), TEENY_DT_I32, &out[r], 1);
  }
  teeny__cg_set(g, op->res[0], Lout, out);
}
