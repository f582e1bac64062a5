/*
 * client/cuda.c — the CUDA driver API, loaded with dlopen() at first use.
 *
 * Nothing here links against CUDA: the library builds and runs (compile
 * only) on machines without it, where every function below returns
 * TEENY_E_NOCUDA with a message saying which library could not be loaded.
 * The driver types are declared here with the sizes the driver ABI fixes
 * (CUresult int, CUdevice int, CUdeviceptr 64-bit, handles pointers).
 *
 * Global state, and why: the library handle, the resolved function table,
 * the device and its retained primary context live in one static struct
 * written once under pthread_once and read-only afterwards.  Modules and
 * device pointers belong to the process's context, not to a client, so
 * this cannot be per client.  $TEENY_CUDA_LIBRARY (tests: force a missing
 * library) and $TEENY_CUDA_DEVICE are read once, at that first use.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/cuda_api.h"
#include "common/common.h"
#include "teeny/client.h"

#define JIT_LOG_BYTES 8192
#define STATIC_SHARED_LIMIT (48 * 1024) /* more needs an opt-in attribute */

static teeny__cuda api;                         /* written once, by load() */
static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static atomic_bool api_loaded;                  /* load() ran and succeeded */

struct teeny_module {
  CUmodule mod;          /* the loaded module */
  char origin[160];      /* "cubin", or "ptx" and why not the cubin */
  CUfunction fn;         /* its entry point */
  unsigned threads;      /* threads per block */
  unsigned shared;       /* dynamic shared memory bytes */
  size_t nparams;        /* the entry point's parameter count */
};

/* ---- messages ------------------------------------------------------------- */

static int say(char *err, size_t errsz, int rc, const char *fmt, ...) TEENY_PRINTF(4, 5);
static int say(char *err, size_t errsz, int rc, const char *fmt, ...) {
  if (err && errsz) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsz, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* "call: CUDA_ERROR_X: description" for a failed driver call. */
int teeny__cuda_fail(char *err, size_t errsz, const char *call, CUresult r) {
  const char *name = NULL, *text = NULL;
  if (api.cuGetErrorName)
    api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(r, &text);
  return say(err, errsz, TEENY_E_CUDA, "%s: %s (%d): %s", call,
             name ? name : "CUDA_ERROR", r, text ? text : "unknown error");
}

/* ---- loading ---------------------------------------------------------------- */

static int resolve(void) {
#define CUDA_RESOLVE(name, sym, params)                                        \
  if (!(*(void **)&api.name = dlsym(api.lib, sym)))                           \
    return say(api.why, sizeof api.why, TEENY_E_NOCUDA,                       \
               "the CUDA driver library lacks %s", sym);
  CUDA_FUNCS(CUDA_RESOLVE)
#undef CUDA_RESOLVE
  return 0;
}

static int start_device(void) {
  const char *d = getenv("TEENY_CUDA_DEVICE");
  int ordinal = d && *d ? atoi(d) : 0;
  CUresult r = api.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    teeny__cuda_fail(api.why, sizeof api.why, "cuInit", r);
    return TEENY_E_NOCUDA;
  }
  if (r)
    return teeny__cuda_fail(api.why, sizeof api.why, "cuInit", r);
  if ((r = api.cuDeviceGet(&api.dev, ordinal)))
    return teeny__cuda_fail(api.why, sizeof api.why, "cuDeviceGet", r);
  if ((r = api.cuDevicePrimaryCtxRetain(&api.primary, api.dev)))
    return teeny__cuda_fail(api.why, sizeof api.why, "cuDevicePrimaryCtxRetain", r);
  int major = 0, minor = 0;
  if ((r = api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                    api.dev)) ||
      (r = api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                    api.dev)))
    return teeny__cuda_fail(api.why, sizeof api.why, "cuDeviceGetAttribute", r);
  snprintf(api.arch, sizeof api.arch, "sm_%d%d", major, minor);
  if (api.cuDeviceGetName(api.name, (int)sizeof api.name, api.dev))
    snprintf(api.name, sizeof api.name, "unknown GPU");
  return 0;
}

static void load(void) {
  const char *name = getenv("TEENY_CUDA_LIBRARY");
  if (!name || !*name)
    name = "libcuda.so.1";
  api.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!api.lib) {
    const char *why = dlerror();
    api.rc = say(api.why, sizeof api.why, TEENY_E_NOCUDA,
                 "CUDA driver not available: cannot load %s (%s); compiling "
                 "works, launching needs an NVIDIA driver",
                 name, why ? why : "not found");
    return;
  }
  api.rc = resolve();
  if (!api.rc)
    api.rc = start_device();
  atomic_store_explicit(&api_loaded, api.rc == 0, memory_order_release);
}

/* Load the driver once; then make sure this thread has a context. */
static int ready(char *err, size_t errsz) {
  pthread_once(&api_once, load);
  if (api.rc)
    return say(err, errsz, api.rc, "%s", api.why);
  CUcontext cur = NULL;
  CUresult r = api.cuCtxGetCurrent(&cur);
  if (r)
    return teeny__cuda_fail(err, errsz, "cuCtxGetCurrent", r);
  if (!cur && (r = api.cuCtxSetCurrent(api.primary)))
    return teeny__cuda_fail(err, errsz, "cuCtxSetCurrent", r);
  return 0;
}

int teeny_cuda_available(char *err, size_t errsz) { return ready(err, errsz); }

const teeny__cuda *teeny__cuda_get(int *rc, char *err, size_t errsz) {
  *rc = ready(err, errsz);
  return *rc ? NULL : &api;
}

const teeny__cuda *teeny__cuda_if_loaded(void) {
  return atomic_load_explicit(&api_loaded, memory_order_acquire) ? &api : NULL;
}

const char *teeny_target_for_arch(const char *arch) {
  char suffix;
  int n = teeny__arch_parse(arch, &suffix);
  if (n < 80 || suffix)
    return NULL;
  return n == 90 ? "sm_90a" /* wgmma and TMA: this GPU's own PTX */
         : n > 90 ? "sm_90"  /* newer GPUs run portable sm_90 PTX */
         : n >= 89 ? "sm_89"
         : n >= 86 ? "sm_86"
                   : "sm_80";
}

int teeny_cuda_target(char *target, size_t size, char *err, size_t errsz) {
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  const char *t = teeny_target_for_arch(api.arch);
  if (!t)
    return say(err, errsz, TEENY_E_UNSUPPORTED,
               "the GPU is %s, older than sm_80, the oldest target", api.arch);
  snprintf(target, size, "%s", t);
  return 0;
}

int teeny_cuda_arch(char *arch, size_t size, char *err, size_t errsz) {
  int rc = ready(err, errsz);
  if (!rc)
    snprintf(arch, size, "%s", api.arch);
  return rc;
}

int teeny_cuda_gpu(char *name, size_t nsize, char *driver, size_t dsize, char *err,
                   size_t errsz) {
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  if (name)
    snprintf(name, nsize, "%s", api.name);
  int v = 0;
  if (driver && !teeny__driver_version(driver, dsize)) {
    if (api.cuDriverGetVersion(&v))
      v = 0;
    snprintf(driver, dsize, "cuda-%d.%d", v / 1000, v % 1000 / 10);
  }
  return 0;
}

/* ---- modules --------------------------------------------------------------------- */

/* $TEENY_CUDA_JIT_OPT: the driver JIT's optimisation level, 0 to 4 (the
 * driver's default, 4, when unset): a diagnosis knob, so that a kernel that
 * differs on the GPU can be run with the JIT's optimiser off (it tells a
 * JIT problem from a PTX one).  -1 when unset or not a level. */
static int jit_opt_level(void) {
  const char *v = getenv("TEENY_CUDA_JIT_OPT");
  if (!v || v[0] < '0' || v[0] > '4' || v[1])
    return -1;
  return v[0] - '0';
}

/* cuModuleLoadDataEx with both JIT logs captured into err on failure. */
static int jit_load(CUmodule *mod, const char *ptx, char *err, size_t errsz) {
  char *info = teeny__calloc(1, JIT_LOG_BYTES);
  char *elog = teeny__calloc(1, JIT_LOG_BYTES);
  if (!info || !elog) {
    teeny__free(info);
    teeny__free(elog);
    return say(err, errsz, TEENY_E_NOMEM, "out of memory");
  }
  int opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                CU_JIT_OPTIMIZATION_LEVEL};
  int level = jit_opt_level();
  void *vals[] = {info, (void *)(uintptr_t)JIT_LOG_BYTES, elog,
                  (void *)(uintptr_t)JIT_LOG_BYTES, (void *)(uintptr_t)(level < 0 ? 0 : level)};
  CUresult r = api.cuModuleLoadDataEx(mod, ptx, level < 0 ? 4 : 5, opts, vals);
  int rc = 0;
  if (r) {
    char head[256];
    teeny__cuda_fail(head, sizeof head, "cuModuleLoadDataEx", r);
    rc = say(err, errsz, TEENY_E_CUDA, "%s; JIT log: %s%s%s", head,
             elog[0] ? elog : "(empty)", info[0] ? "; info: " : "", info);
  }
  teeny__free(info);
  teeny__free(elog);
  return rc;
}

static int find_entry(teeny_module *m, const teeny_artifact *a, char *err, size_t errsz) {
  CUresult r = api.cuModuleGetFunction(&m->fn, m->mod, a->entry);
  if (r) {
    char head[256];
    teeny__cuda_fail(head, sizeof head, "cuModuleGetFunction", r);
    return say(err, errsz, TEENY_E_CUDA, "%s (entry '%s')", head, a->entry);
  }
  if (m->shared > STATIC_SHARED_LIMIT &&
      (r = api.cuFuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  (int)m->shared)))
    return teeny__cuda_fail(err, errsz, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
  return 0;
}

/* A module for a's launch shape, not loaded yet. */
static teeny_module *module_new(const teeny_artifact *a) {
  teeny_module *m = teeny__calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->threads = (unsigned)a->threads_per_block;
  m->shared = a->shared_bytes > 0 ? (unsigned)a->shared_bytes : 0;
  m->nparams = a->nparams;
  snprintf(m->origin, sizeof m->origin, "ptx");
  return m;
}

/* Load r's cubin into m (it was judged usable): 0, or the driver's error. */
static int cubin_load(teeny_module *m, const teeny_client_result *r, char *err,
                      size_t errsz) {
  CUresult c = api.cuModuleLoadDataEx(&m->mod, r->cubin, 0, NULL, NULL);
  if (c)
    return teeny__cuda_fail(err, errsz, "cuModuleLoadDataEx(cubin)", c);
  int rc = find_entry(m, &r->art, err, errsz);
  if (rc) {
    api.cuModuleUnload(m->mod);
    m->mod = NULL;
  }
  return rc;
}

const char *teeny_module_origin(const teeny_module *m) { return m ? m->origin : ""; }

int teeny_module_load_result(const teeny_client_result *r, teeny_module **out, char *err,
                             size_t errsz) {
  *out = NULL;
  if (!r || r->status)
    return say(err, errsz, TEENY_E_INVAL, "teeny_module_load_result: no compiled result");
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  char why[160] = "";
  if (!teeny_cubin_usable(r->cubin, r->cubin_len, r->cubin_arch, api.arch, why, sizeof why))
    return teeny_module_load(&r->art, out, err, errsz); /* never a wrong cubin */
  teeny_module *m = module_new(&r->art);
  if (!m)
    return say(err, errsz, TEENY_E_NOMEM, "out of memory");
  char cerr[256] = "";
  if (cubin_load(m, r, cerr, sizeof cerr) == 0) {
    snprintf(m->origin, sizeof m->origin, "cubin");
    *out = m;
    return 0;
  }
  teeny__free(m); /* the driver refused it: the PTX still works */
  if ((rc = teeny_module_load(&r->art, out, err, errsz)))
    return rc;
  snprintf((*out)->origin, sizeof (*out)->origin, "ptx (the cubin was refused: %.120s)",
           cerr);
  return 0;
}

int teeny_module_load(const teeny_artifact *a, teeny_module **out, char *err,
                      size_t errsz) {
  *out = NULL;
  if (!a || !a->ptx || !a->entry || a->threads_per_block <= 0)
    return say(err, errsz, TEENY_E_INVAL,
               "teeny_module_load: the artifact has no PTX (compile with TEENY_EMIT_PTX)");
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  teeny_module *m = module_new(a);
  char *ptx = teeny__strndup(a->ptx, a->ptx_len); /* the driver wants a NUL */
  if (!m || !ptx) {
    rc = say(err, errsz, TEENY_E_NOMEM, "out of memory");
    goto fail;
  }
  if ((rc = jit_load(&m->mod, ptx, err, errsz)))
    goto fail;
  if ((rc = find_entry(m, a, err, errsz)))
    goto fail;
  teeny__free(ptx);
  *out = m;
  return 0;
fail:
  if (m && m->mod)
    api.cuModuleUnload(m->mod);
  teeny__free(m);
  teeny__free(ptx);
  return rc;
}

void teeny_module_unload(teeny_module *m) {
  if (!m)
    return;
  if (ready(NULL, 0) == 0)
    api.cuModuleUnload(m->mod);
  teeny__free(m);
}

int teeny_launch(teeny_module *m, const unsigned grid[3], void *stream, void **args,
                 char *err, size_t errsz) {
  if (!m || !grid || (m->nparams && !args))
    return say(err, errsz, TEENY_E_INVAL, "teeny_launch: no module, grid or arguments");
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  unsigned g[3];
  for (int i = 0; i < 3; i++)
    g[i] = grid[i] ? grid[i] : 1;
  CUresult r = api.cuLaunchKernel(m->fn, g[0], g[1], g[2], m->threads, 1, 1, m->shared,
                                  stream, args, NULL);
  return r ? teeny__cuda_fail(err, errsz, "cuLaunchKernel", r) : 0;
}

/* ---- memory ------------------------------------------------------------------------- */

int teeny_cuda_alloc(teeny_dptr *p, size_t bytes, char *err, size_t errsz) {
  p->addr = 0;
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  CUdeviceptr d = 0;
  CUresult r = api.cuMemAlloc(&d, bytes ? bytes : 1);
  if (r)
    return teeny__cuda_fail(err, errsz, "cuMemAlloc", r);
  p->addr = d;
  return 0;
}

void teeny_cuda_free(teeny_dptr p) {
  if (p.addr && ready(NULL, 0) == 0)
    api.cuMemFree(p.addr);
}

int teeny_cuda_to_device(teeny_dptr dst, const void *src, size_t bytes, char *err,
                         size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuMemcpyHtoD(dst.addr, src, bytes);
  return rc ? rc : r ? teeny__cuda_fail(err, errsz, "cuMemcpyHtoD", r) : 0;
}

int teeny_cuda_to_host(void *dst, teeny_dptr src, size_t bytes, char *err, size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuMemcpyDtoH(dst, src.addr, bytes);
  return rc ? rc : r ? teeny__cuda_fail(err, errsz, "cuMemcpyDtoH", r) : 0;
}

int teeny_cuda_memset(teeny_dptr dst, unsigned char byte, size_t bytes, char *err,
                      size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuMemsetD8(dst.addr, byte, bytes);
  return rc ? rc : r ? teeny__cuda_fail(err, errsz, "cuMemsetD8", r) : 0;
}

int teeny_cuda_sync(char *err, size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuCtxSynchronize();
  return rc ? rc : r ? teeny__cuda_fail(err, errsz, "cuCtxSynchronize", r) : 0;
}
