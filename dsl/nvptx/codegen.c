/*
 * dsl/nvptx/codegen.c — the driver of the NVPTX code generator: verified tile
 * IR -> LLVM IR (through the other codegen_*.c files) -> O3 -> PTX text.
 *
 * One LLVMContext per call, so concurrent compiles share nothing; the only
 * process-wide state is the NVPTX target registration, done once with
 * pthread_once.  A call costs a few milliseconds for small kernels; most of
 * it is LLVM's O3 pipeline and instruction selection.
 *
 * Failure: any stage calls teeny__cg_fail(), which records a diagnostic and
 * longjmps back here; the LLVM objects and the scratch arena are released on
 * every path.  Also owns the small helpers every other file uses (types,
 * constants, intrinsics, inline asm, barriers).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "dsl/nvptx/codegen.h"

/* ---- target registration (the one piece of process-wide state) ------------ */

static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;
static char llvm_version[32]; /* written once, under nvptx_once */

static void nvptx_init(void) {
  /* Process-wide LLVM options, set exactly once.  -nvptx-short-ptr:
   * 32-bit shared-memory pointers (as Triton uses), half the registers for
   * shared addresses.  -vectorize-slp=false: LLVM 19's SLP vectorizer
   * narrows `uitofp (sext i8 x to i32)` to `uitofp i8 x` when it packs two
   * of them (a negative i8 made unsigned converts as 246, not 2^32 - 10:
   * repro-gpu/reduce_bf16_dot_gpu); the pass builder's own switch for it
   * does not stop the pass.  Its only gain in our kernels was f16x2 adds in
   * element-wise f16 kernels (memory-bound); the benchmarked kernels' PTX
   * is the same without it (docs/perf-notes.md).  -disable-early-taildup:
   * the back end's early tail duplication copies a loop header that only
   * branches into both of its predecessors, which gives the loop two
   * entries, and ptxas miscompiles such loops around barriers (cfg.c; the
   * IR passes end with fix-irreducible for the same reason). */
  const char *argv[] = {"teenyc", "-nvptx-short-ptr", "-vectorize-slp=false",
                        "-disable-early-taildup"};
  LLVMParseCommandLineOptions(4, argv, NULL);
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  unsigned maj, min, pat;
  LLVMGetVersion(&maj, &min, &pat);
  snprintf(llvm_version, sizeof llvm_version, "%u.%u.%u", maj, min, pat);
}

const char *teeny__codegen_llvm_version(void) {
  pthread_once(&nvptx_once, nvptx_init);
  return llvm_version;
}

/* ---- diagnostics and scratch memory ----------------------------------------- */

void teeny__cg_fail(cg *g, int code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  teeny__error_at(g->cx, g->loc, "%s", msg);
  g->err = code;
  longjmp(g->fail, 1);
}

void *teeny__cg_alloc(cg *g, size_t n) {
  void *p = teeny__arena_alloc(&g->arena, n ? n : 1);
  if (!p) /* only when the arena has no oom handler */
    teeny__cg_fail(g, TEENY_E_NOMEM, "out of memory in the code generator");
  return p;
}

/* ---- types and constants ------------------------------------------------------------ */

LLVMTypeRef teeny__cg_type(cg *g, teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL:
    return g->t_i1;
  case TEENY_DT_I8:
  case TEENY_DT_U8:
    return g->t_i8;
  case TEENY_DT_I16:
  case TEENY_DT_U16:
    return g->t_i16;
  case TEENY_DT_I32:
  case TEENY_DT_U32:
    return g->t_i32;
  case TEENY_DT_I64:
  case TEENY_DT_U64:
    return g->t_i64;
  case TEENY_DT_F16:
    return g->t_f16;
  case TEENY_DT_BF16: /* the emulator keeps bf16 as bits (see ops.c) */
    return g->emu ? g->t_i16 : g->t_bf16;
  case TEENY_DT_F32:
    return g->t_f32;
  case TEENY_DT_F64:
    return g->t_f64;
  case TEENY_DT_F8E4M3: /* bits; arithmetic through f32 (fp8.c) */
  case TEENY_DT_F8E5M2:
    return g->t_i8;
  case TEENY_DT_PTR:
    return g->t_gptr;
  default:
    teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: no LLVM type for dtype %d",
                   (int)dt);
  }
}

LLVMTypeRef teeny__cg_memtype(cg *g, teeny_dtype dt) {
  return dt == TEENY_DT_BOOL ? g->t_i8 : teeny__cg_type(g, dt);
}

LLVMValueRef teeny__cg_i32(cg *g, long long v) {
  return LLVMConstInt(g->t_i32, (unsigned long long)v, 1);
}

LLVMValueRef teeny__cg_i64(cg *g, long long v) {
  return LLVMConstInt(g->t_i64, (unsigned long long)v, 1);
}

LLVMValueRef teeny__cg_bool(cg *g, bool v) { return LLVMConstInt(g->t_i1, v, 0); }

LLVMValueRef teeny__cg_to_mem(cg *g, teeny_dtype dt, LLVMValueRef v) {
  return dt == TEENY_DT_BOOL ? LLVMBuildZExt(g->b, v, g->t_i8, "") : v;
}

LLVMValueRef teeny__cg_from_mem(cg *g, teeny_dtype dt, LLVMValueRef v) {
  if (dt != TEENY_DT_BOOL)
    return v;
  return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->t_i8, 0, 0), "");
}

/* ---- intrinsics, inline asm, special registers ------------------------------------ */

LLVMValueRef teeny__cg_intrin(cg *g, const char *name, LLVMTypeRef *tys, int nty,
                              LLVMValueRef *args, int nargs) {
  if (g->emu && strncmp(name, "llvm.nvvm.", 10) == 0)
    return teeny__cg_emu_intrin(g, name, args, nargs);
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id)
    teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: unknown intrinsic %s", name);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, tys, (size_t)nty);
  LLVMTypeRef fty = LLVMIntrinsicGetType(g->ctx, id, tys, (size_t)nty);
  return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef teeny__cg_asm(cg *g, LLVMTypeRef ret, const char *text,
                           const char *constraints, LLVMValueRef *args,
                           int nargs, bool side_effects) {
  LLVMTypeRef *pt = teeny__cg_alloc(g, sizeof *pt * (size_t)(nargs + 1));
  for (int i = 0; i < nargs; i++)
    pt[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)nargs, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), constraints,
                                     strlen(constraints), side_effects, 0,
                                     LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)nargs, "");
}

void teeny__cg_pin(cg *g, LLVMValueRef *v, long n) {
  if (g->emu || n <= 0)
    return;
  LLVMValueRef *args = teeny__cg_alloc(g, sizeof *args * (size_t)n);
  char *cons = teeny__cg_alloc(g, (size_t)n * 2 + 16);
  int k = 0;
  size_t c = 0;
  for (long i = 0; i < n && k < 256; i++) {
    LLVMTypeRef t = LLVMTypeOf(v[i]);
    char l = t == g->t_f32 ? 'f' : t == g->t_i32 ? 'r' : t == g->t_f64 ? 'd'
             : t == g->t_i64 ? 'l' : 0;
    if (!l)
      continue;
    cons[c++] = k ? ',' : l;
    if (k)
      cons[c++] = l;
    args[k++] = v[i];
  }
  cons[c] = '\0';
  if (k)
    teeny__cg_asm(g, g->t_void, "", cons, args, k, true);
}

LLVMValueRef teeny__cg_sreg(cg *g, const char *name) {
  char full[64];
  snprintf(full, sizeof full, "llvm.nvvm.read.ptx.sreg.%s", name);
  return teeny__cg_intrin(g, full, NULL, 0, NULL, 0);
}

void teeny__cg_barrier(cg *g) {
  if (g->divergent)
    teeny__cg_fail(g, TEENY_E_INTERNAL, "internal error: a barrier under a branch that "
                   "threads take apart (it would deadlock)");
  teeny__cg_intrin(g, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
  teeny__cg_order_barrier(g);
}

/* ---- targets ---------------------------------------------------------------------- */

/* "sm_90a" -> sm 90, arch-specific; NULL for targets we do not emit for. */
static const char *parse_target(const char *t, int *sm, bool *arch_a) {
  static const struct {
    const char *name;
    int sm;
    bool a;
  } known[] = {{"sm_90a", 90, true}, {"sm_90", 90, false}, {"sm_89", 89, false},
               {"sm_86", 86, false}, {"sm_80", 80, false}};
  if (!t || !*t)
    t = "sm_90a";
  for (size_t i = 0; i < TEENY_ARRAY_LEN(known); i++)
    if (strcmp(t, known[i].name) == 0) {
      *sm = known[i].sm;
      *arch_a = known[i].a;
      return known[i].name;
    }
  return NULL;
}

/* Does r (nested regions included) hold a dot of two fp8 tiles (irgen's
 * form: both operands casts of fp8 tiles)?  On sm_89 and sm_90 it may run
 * on fp8 mma.sync (dot.c), which needs PTX ISA 8.4. */
static bool has_f8_dot(const teeny_ir_func *f, const teeny_region *r) {
  for (int i = 0; i < r->nops; i++) {
    const teeny_op *op = r->ops[i];
    if (op->code == IR_DOT) {
      int n = 0;
      for (int k = 0; k < 2; k++) {
        const teeny_op *d = f->values[op->args[k]].def;
        n += d && d->code == IR_CAST && teeny__dt_is_fp8(teeny__ir_type(f, d->args[0]).dt);
      }
      if (n == 2)
        return true;
    }
    for (int k = 0; k < op->nregions; k++)
      if (op->regions[k] && has_f8_dot(f, op->regions[k]))
        return true;
  }
  return false;
}

static LLVMTargetMachineRef make_target_machine(cg *g, const char *cpu) {
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &msg)) {
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "LLVM has no NVPTX target: %s",
                    msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return NULL;
  }
  /* PTX ISA 8.0: the oldest that sm_90a accepts; every CUDA 12+ driver
   * loads it (docs/perf-notes.md).  8.4 (CUDA 12.4 drivers) only for an
   * fp8 dot on sm_89 or sm_90, whose mma.sync form it introduced. */
  bool v84 = g->sm >= 89 && !g->sm_a && has_f8_dot(g->f, g->f->body);
  return LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", cpu, v84 ? "+ptx84" : "+ptx80",
                                 LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                 LLVMCodeModelDefault);
}

/* ---- the kernel function ------------------------------------------------------------ */

static void init_types(cg *g) {
  g->t_void = LLVMVoidTypeInContext(g->ctx);
  g->t_i1 = LLVMInt1TypeInContext(g->ctx);
  g->t_i8 = LLVMInt8TypeInContext(g->ctx);
  g->t_i16 = LLVMInt16TypeInContext(g->ctx);
  g->t_i32 = LLVMInt32TypeInContext(g->ctx);
  g->t_i64 = LLVMInt64TypeInContext(g->ctx);
  g->t_f16 = LLVMHalfTypeInContext(g->ctx);
  g->t_bf16 = LLVMBFloatTypeInContext(g->ctx);
  g->t_f32 = LLVMFloatTypeInContext(g->ctx);
  g->t_f64 = LLVMDoubleTypeInContext(g->ctx);
  g->t_gptr = LLVMPointerTypeInContext(g->ctx, g->emu ? 0 : 1);
  g->t_sptr = LLVMPointerTypeInContext(g->ctx, g->emu ? 0 : 3);
}

static void add_attr(cg *g, LLVMValueRef fn, unsigned idx, const char *name,
                     uint64_t val) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  if (kind)
    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(g->ctx, kind, val));
}

/* !nvvm.annotations = !{!{ptr @fn, !"key", i32 val}} */
static void annotate(cg *g, const char *key, int val) {
  LLVMMetadataRef md[3] = {
      LLVMValueAsMetadata(g->fn),
      LLVMMDStringInContext2(g->ctx, key, strlen(key)),
      LLVMValueAsMetadata(teeny__cg_i32(g, val))};
  LLVMValueRef node = LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, md, 3));
  LLVMAddNamedMetadataOperand(g->mod, "nvvm.annotations", node);
}

static bool is_tensormap(const teeny_ir_func *f, int i) {
  return i < 64 && (f->tensormaps >> i & 1);
}

/* The alignment pointer parameter i of type t is assumed to have. */
static int param_align(const teeny_ir_func *f, int i, teeny_type t) {
  if (i >= 64 || !(f->unaligned >> i & 1))
    return 16;
  return t.pointee == TEENY_DT_BOOL ? 1 : teeny_dtype_size(t.pointee);
}

/* Parameters: pointers are addrspace(1), 16-byte aligned (docs/dsl.md;
 * those of f->unaligned: their elements' alignment), and
 * noalias + readonly when the kernel never writes through them (which lets
 * loads use the non-coherent path).  bool travels as a byte. */
static void make_function(cg *g) {
  const teeny_ir_func *f = g->f;
  int skip = g->emu ? 1 : 0; /* the emulator passes its state first */
  LLVMTypeRef *pt = teeny__cg_alloc(g, sizeof *pt * (size_t)(f->nparams + 2));
  if (g->emu)
    pt[0] = LLVMPointerTypeInContext(g->ctx, 0);
  for (int i = 0; i < f->nparams; i++) {
    teeny_type t = teeny__ir_type(f, f->body->args[i]);
    pt[skip + i] = t.dt == TEENY_DT_BOOL ? g->t_i8 : teeny__cg_type(g, t.dt);
    if (is_tensormap(f, i) && !g->emu) /* byval: .param .align 64 .b8 [128] */
      pt[skip + i] = LLVMPointerTypeInContext(g->ctx, 0);
  }
  LLVMTypeRef fty = LLVMFunctionType(g->t_void, pt, (unsigned)(f->nparams + skip), 0);
  g->fn = LLVMAddFunction(g->mod, f->name, fty);
  if (g->emu) {
    g->emu_arg = LLVMGetParam(g->fn, 0);
    return;
  }
  LLVMSetFunctionCallConv(g->fn, LLVMPTXKernelCallConv);
  for (int i = 0; i < f->nparams; i++) {
    teeny_type t = teeny__ir_type(f, f->body->args[i]);
    unsigned idx = (unsigned)i + 1;
    if (is_tensormap(f, i)) { /* read only by the TMA (tma.c names it in its asm) */
      unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
      LLVMAddAttributeAtIndex(g->fn, idx, LLVMCreateTypeAttribute(g->ctx, byval,
                                                                  LLVMArrayType2(g->t_i8, 128)));
      add_attr(g, g->fn, idx, "align", 64);
      continue;
    }
    if (t.dt != TEENY_DT_PTR)
      continue;
    add_attr(g, g->fn, idx, "nocapture", 0);
    add_attr(g, g->fn, idx, "align", param_align(f, i, t));
    if (i >= 64 || !(g->written & (1ull << i))) {
      if (i < 64) {
        add_attr(g, g->fn, idx, "noalias", 0);
        add_attr(g, g->fn, idx, "readonly", 0);
      }
    }
  }
  add_attr(g, g->fn, (unsigned)LLVMAttributeFunctionIndex, "nounwind", 0);
  annotate(g, "kernel", 1);
  annotate(g, "reqntidx", 32 * g->num_warps); /* .reqntid N, 1, 1 (implies max) */
}

/* The entry block holds parameter conversions, thread ids and per-layout
 * thread coordinates (g->pb appends there); the body starts in "body". */
static LLVMBasicBlockRef make_entry(cg *g) {
  g->entry = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "body");
  g->pb = LLVMCreateBuilderInContext(g->ctx);
  LLVMPositionBuilderAtEnd(g->pb, g->entry);
  LLVMBuilderRef keep = g->b;
  g->b = g->pb;
  g->tid = teeny__cg_sreg(g, "tid.x");
  g->lane = LLVMBuildAnd(g->b, g->tid, teeny__cg_i32(g, 31), "lane");
  g->warp = LLVMBuildLShr(g->b, g->tid, teeny__cg_i32(g, 5), "warp");
  const teeny_ir_func *f = g->f;
  for (int i = 0; i < f->nparams; i++) {
    int id = f->body->args[i];
    LLVMValueRef p = LLVMGetParam(g->fn, (unsigned)(i + (g->emu ? 1 : 0)));
    LLVMSetValueName2(p, f->param_names[i], strlen(f->param_names[i]));
    if (teeny__ir_type(f, id).dt == TEENY_DT_BOOL)
      p = teeny__cg_from_mem(g, TEENY_DT_BOOL, p);
    teeny__cg_set_scalar(g, id, p);
  }
  g->b = keep;
  LLVMPositionBuilderAtEnd(g->b, body);
  return body;
}

/* Swap the placeholder shared buffers for a real one: the exchange buffer
 * from 0, the dot/stage buffers of loops after the part of it used while
 * they are (exchanges outside those loops, e.g. the conversion of a matmul
 * result, reuse their memory: each loop starts with a barrier, and each
 * exchange starts with one).  Static when it fits the 48 KiB static limit,
 * else dynamic (the launcher passes the size).  Aligned as the wgmma tiles
 * need. */
static void finish_smem(cg *g, teeny_codegen_out *out) {
  int align = g->smem_align > 16 ? g->smem_align : 16;
  int xbytes = (g->smem_db_x + align - 1) & ~(align - 1);
  int all = (g->smem_bytes + align - 1) & ~(align - 1);
  int bytes = xbytes + g->db_hwm > all ? xbytes + g->db_hwm : all;
  if (bytes == 0) {
    LLVMDeleteGlobal(g->smem);
    LLVMDeleteGlobal(g->db_smem);
    return;
  }
  if (bytes > 227 * 1024)
    teeny__cg_fail(g, TEENY_E_UNSUPPORTED,
                   "kernel needs %d bytes of shared memory (the limit is "
                   "232448); use smaller tiles",
                   bytes);
  LLVMValueRef gv;
  if (g->emu) { /* the emulator runs one block at a time */
    LLVMTypeRef at = LLVMArrayType2(g->t_i8, (uint64_t)bytes);
    gv = LLVMAddGlobal(g->mod, at, "teeny_smem");
    LLVMSetInitializer(gv, LLVMConstNull(at));
    LLVMSetLinkage(gv, LLVMInternalLinkage);
  } else if (bytes <= 48 * 1024) {
    LLVMTypeRef at = LLVMArrayType2(g->t_i8, (uint64_t)bytes);
    gv = LLVMAddGlobalInAddressSpace(g->mod, at, "teeny_smem", 3);
    LLVMSetInitializer(gv, LLVMGetUndef(at));
    LLVMSetLinkage(gv, LLVMInternalLinkage);
  } else {
    gv = LLVMAddGlobalInAddressSpace(g->mod, LLVMArrayType2(g->t_i8, 0),
                                     "teeny_dyn_smem", 3);
    LLVMSetLinkage(gv, LLVMExternalLinkage);
    out->shared_bytes = bytes;
  }
  LLVMSetAlignment(gv, (unsigned)align);
  LLVMReplaceAllUsesWith(g->smem, gv);
  LLVMDeleteGlobal(g->smem);
  LLVMValueRef off = teeny__cg_i32(g, xbytes);
  LLVMReplaceAllUsesWith(g->db_smem, LLVMConstGEP2(g->t_i8, gv, &off, 1));
  LLVMDeleteGlobal(g->db_smem);
  g->smem = gv;
}

/* The PTX's loops each have one entry (cfg.c says why it matters): a wrong
 * answer is worse than a refused kernel. */
static int check_reducible(cg *g, teeny_codegen_out *out) {
  char why[200];
  int r = teeny__ptx_check_reducible(out->ptx, why, sizeof why);
  if (r == -2)
    return TEENY_E_NOMEM;
  if (r != 1)
    return TEENY_OK;
  teeny__error_at(g->cx, (teeny_loc){0, 0},
                  "internal error: the PTX enters a loop past its header (at %s), which "
                  "NVIDIA's assembler miscompiles around barriers; please report this kernel",
                  why);
  teeny__free(out->ptx);
  out->ptx = NULL;
  out->ptx_len = 0;
  return TEENY_E_INTERNAL;
}

static int optimise_and_emit(cg *g, LLVMTargetMachineRef tm,
                             teeny_codegen_out *out) {
  char *msg = NULL;
  if (LLVMVerifyModule(g->mod, LLVMReturnStatusAction, &msg)) {
    teeny__error_at(g->cx, (teeny_loc){0, 0},
                    "internal error: generated LLVM IR is invalid: %.400s",
                    msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return TEENY_E_LLVM;
  }
  LLVMDisposeMessage(msg);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* fix-irreducible: jump threading can enter a loop past its header,
   * which ptxas miscompiles around barriers (cfg.c); this gives every
   * such loop one header again (the back end's early tail duplication,
   * which could undo it, is off: nvptx_init). */
  LLVMErrorRef e = LLVMRunPasses(g->mod, "default<O3>,function(fix-irreducible)", tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *em = LLVMGetErrorMessage(e);
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "LLVM optimisation failed: %s", em);
    LLVMDisposeErrorMessage(em);
    return TEENY_E_LLVM;
  }
  teeny__cg_repair_nvptx(g->mod); /* repair.c: around NVPTX back-end bugs */
  if (g->ir_out) { /* teeny__codegen_llvm_ir: the optimised IR instead */
    char *text = LLVMPrintModuleToString(g->mod);
    *g->ir_out = teeny__strdup(text);
    LLVMDisposeMessage(text);
    return *g->ir_out ? TEENY_OK : TEENY_E_NOMEM;
  }
  LLVMMemoryBufferRef buf = NULL;
  msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, g->mod, LLVMAssemblyFile, &msg,
                                          &buf)) {
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "LLVM PTX emission failed: %s",
                    msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return TEENY_E_LLVM;
  }
  size_t n = LLVMGetBufferSize(buf);
  out->ptx = teeny__malloc(n + 1);
  if (!out->ptx) {
    LLVMDisposeMemoryBuffer(buf);
    return TEENY_E_NOMEM;
  }
  memcpy(out->ptx, LLVMGetBufferStart(buf), n);
  out->ptx[n] = '\0';
  out->ptx_len = strlen(out->ptx); /* the buffer may carry a trailing NUL */
  LLVMDisposeMemoryBuffer(buf);
  return check_reducible(g, out);
}

/* Everything that may unwind: build the module and lower the body. */
void teeny__cg_build_module(cg *g, teeny_codegen_out *out) {
  teeny__cg_scope_push(g); /* the function body's scope */
  init_types(g);
  teeny__cg_analyze(g);
  make_function(g);
  g->b = LLVMCreateBuilderInContext(g->ctx);
  make_entry(g);
  g->smem = LLVMAddGlobalInAddressSpace(g->mod, LLVMArrayType2(g->t_i8, 0),
                                        "teeny_smem_placeholder", g->emu ? 0 : 3);
  LLVMSetLinkage(g->smem, LLVMExternalLinkage);
  g->db_smem = LLVMAddGlobalInAddressSpace(g->mod, LLVMArrayType2(g->t_i8, 0),
                                           "teeny_dbuf_placeholder", g->emu ? 0 : 3);
  LLVMSetLinkage(g->db_smem, LLVMExternalLinkage);
  teeny__cg_emit_region(g, g->f->body);
  LLVMBuildRetVoid(g->b);
  LLVMBuildBr(g->pb, LLVMGetNextBasicBlock(g->entry));
  finish_smem(g, out);
}

/* The code an unwind carries (the arena's oom jump carries none). */
static int unwound(cg *g) {
  if (!g->err)
    teeny__error_at(g->cx, (teeny_loc){0, 0}, "out of memory in the code generator");
  return g->err ? g->err : TEENY_E_NOMEM;
}

/* The part that may unwind; no locals live across the setjmp (nor
 * temporaries: gcc's -Wclobbered flags a compound literal here). */
static int run(cg *g, LLVMTargetMachineRef tm, teeny_codegen_out *out) {
  if (setjmp(g->fail))
    return unwound(g);
  teeny__cg_build_module(g, out);
  return optimise_and_emit(g, tm, out);
}

static int check_opts(teeny_ctx *cx, const teeny_codegen_opts *o, int *sm,
                      bool *arch_a, const char **cpu) {
  *cpu = parse_target(o ? o->target : NULL, sm, arch_a);
  if (!*cpu) {
    teeny__error_at(cx, (teeny_loc){0, 0},
                    "unknown target '%s' (sm_90a, sm_90, sm_89, sm_86, sm_80)",
                    o->target);
    return TEENY_E_UNSUPPORTED;
  }
  int nw = o && o->num_warps ? o->num_warps : 4;
  if (nw < 1 || nw > 32 || (nw & (nw - 1))) {
    teeny__error_at(cx, (teeny_loc){0, 0},
                    "num_warps must be a power of two from 1 to 32 (got %d)", nw);
    return TEENY_E_UNSUPPORTED;
  }
  return TEENY_OK;
}

static int codegen(teeny_ctx *cx, const teeny_ir_func *f, const teeny_codegen_opts *o,
                   teeny_codegen_out *out, char **ir_out);

int teeny__codegen_ptx(teeny_ctx *cx, const teeny_ir_func *f,
                       const teeny_codegen_opts *o, teeny_codegen_out *out) {
  return codegen(cx, f, o, out, NULL);
}

int teeny__codegen_llvm_ir(teeny_ctx *cx, const teeny_ir_func *f,
                           const teeny_codegen_opts *o, char **ir) {
  teeny_codegen_out out;
  *ir = NULL;
  return codegen(cx, f, o, &out, ir);
}

static int codegen(teeny_ctx *cx, const teeny_ir_func *f, const teeny_codegen_opts *o,
                   teeny_codegen_out *out, char **ir_out) {
  out->ptx = NULL;
  out->ptx_len = 0;
  out->shared_bytes = 0;
  int sm = 0;
  bool arch_a = false;
  const char *cpu;
  int rc = check_opts(cx, o, &sm, &arch_a, &cpu);
  if (rc)
    return rc;
  pthread_once(&nvptx_once, nvptx_init);

  cg *g = teeny__calloc(1, sizeof *g);
  if (!g)
    return TEENY_E_NOMEM;
  g->cx = cx;
  g->f = f;
  g->ir_out = ir_out;
  g->sm = sm;
  g->sm_a = arch_a;
  g->num_warps = o && o->num_warps ? o->num_warps : 4;
  g->num_stages = o ? o->num_stages : 0;
  g->warp_bits = teeny__cg_log2(g->num_warps);
  teeny__arena_init(&g->arena);
  g->arena.oom = &g->fail;
  LLVMTargetMachineRef tm = make_target_machine(g, cpu);
  if (!tm) {
    teeny__free(g);
    return TEENY_E_LLVM;
  }
  g->ctx = LLVMContextCreate();
  g->mod = LLVMModuleCreateWithNameInContext(f->name, g->ctx);
  LLVMSetTarget(g->mod, "nvptx64-nvidia-cuda");
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(g->mod, td);
  LLVMDisposeTargetData(td);

  rc = run(g, tm, out);
  if (g->b)
    LLVMDisposeBuilder(g->b);
  if (g->pb)
    LLVMDisposeBuilder(g->pb);
  LLVMContextDispose(g->ctx); /* also frees the module */
  LLVMDisposeTargetMachine(tm);
  teeny__arena_free(&g->arena);
  teeny__free(g);
  if (rc) {
    teeny__free(out->ptx);
    out->ptx = NULL;
    out->ptx_len = 0;
  }
  return rc;
}
