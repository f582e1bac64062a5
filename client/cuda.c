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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "teeny/client.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

#define JIT_LOG_BYTES 8192
#define STATIC_SHARED_LIMIT (48 * 1024) /* more needs an opt-in attribute */

/* X(name, symbol, return, parameters) for every driver entry point used. */
#define CUDA_FUNCS(X)                                                          \
  X(cuInit, "cuInit", (unsigned flags))                                       \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * d, int ordinal))                  \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *v, int attr, CUdevice d)) \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * c, CUdevice d)) \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * c))                      \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext c))                        \
  X(cuCtxSynchronize, "cuCtxSynchronize", (void))                             \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                 \
    (CUmodule * m, const void *image, unsigned n, int *opts, void **vals))    \
  X(cuModuleGetFunction, "cuModuleGetFunction",                               \
    (CUfunction * f, CUmodule m, const char *name))                           \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule m))                           \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attr, int v)) \
  X(cuLaunchKernel, "cuLaunchKernel",                                         \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,        \
     unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,    \
     void **extra))                                                            \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * p, size_t bytes))             \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr p))                               \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr d, const void *s, size_t n)) \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *d, CUdeviceptr s, size_t n))      \
  X(cuMemsetD8, "cuMemsetD8_v2", (CUdeviceptr d, unsigned char v, size_t n))  \
  X(cuGetErrorName, "cuGetErrorName", (CUresult r, const char **s))           \
  X(cuGetErrorString, "cuGetErrorString", (CUresult r, const char **s))

typedef struct cuda_api {
  void *lib;             /* dlopen handle; NULL when absent */
  int rc;                /* 0, TEENY_E_NOCUDA or TEENY_E_CUDA */
  char why[512];         /* the message for rc */
  CUdevice dev;          /* the device used */
  CUcontext primary;     /* its retained primary context */
#define CUDA_FIELD(name, sym, params) CUresult(*name) params;
  CUDA_FUNCS(CUDA_FIELD)
#undef CUDA_FIELD
} cuda_api;

static cuda_api api;                            /* written once, by load() */
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

struct teeny_module {
  CUmodule mod;          /* the loaded module */
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
static int cuda_fail(char *err, size_t errsz, const char *call, CUresult r) {
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
    cuda_fail(api.why, sizeof api.why, "cuInit", r);
    return TEENY_E_NOCUDA;
  }
  if (r)
    return cuda_fail(api.why, sizeof api.why, "cuInit", r);
  if ((r = api.cuDeviceGet(&api.dev, ordinal)))
    return cuda_fail(api.why, sizeof api.why, "cuDeviceGet", r);
  if ((r = api.cuDevicePrimaryCtxRetain(&api.primary, api.dev)))
    return cuda_fail(api.why, sizeof api.why, "cuDevicePrimaryCtxRetain", r);
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
}

/* Load the driver once; then make sure this thread has a context. */
static int ready(char *err, size_t errsz) {
  pthread_once(&api_once, load);
  if (api.rc)
    return say(err, errsz, api.rc, "%s", api.why);
  CUcontext cur = NULL;
  CUresult r = api.cuCtxGetCurrent(&cur);
  if (r)
    return cuda_fail(err, errsz, "cuCtxGetCurrent", r);
  if (!cur && (r = api.cuCtxSetCurrent(api.primary)))
    return cuda_fail(err, errsz, "cuCtxSetCurrent", r);
  return 0;
}

int teeny_cuda_available(char *err, size_t errsz) { return ready(err, errsz); }

int teeny_cuda_target(char *target, size_t size, char *err, size_t errsz) {
  int rc = ready(err, errsz);
  if (rc)
    return rc;
  int major = 0, minor = 0;
  CUresult r = api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        api.dev);
  if (!r)
    r = api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, api.dev);
  if (r)
    return cuda_fail(err, errsz, "cuDeviceGetAttribute", r);
  const char *t = major >= 9                  ? "sm_90a"
                  : major == 8 && minor >= 9  ? "sm_89"
                  : major == 8 && minor >= 6  ? "sm_86"
                  : major == 8                ? "sm_80"
                                              : NULL;
  if (!t)
    return say(err, errsz, TEENY_E_UNSUPPORTED,
               "compute capability %d.%d is older than sm_80, the oldest target", major,
               minor);
  snprintf(target, size, "%s", t);
  return 0;
}

/* ---- modules --------------------------------------------------------------------- */

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
                CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {info, (void *)(uintptr_t)JIT_LOG_BYTES, elog,
                  (void *)(uintptr_t)JIT_LOG_BYTES};
  CUresult r = api.cuModuleLoadDataEx(mod, ptx, 4, opts, vals);
  int rc = 0;
  if (r) {
    char head[256];
    cuda_fail(head, sizeof head, "cuModuleLoadDataEx", r);
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
    cuda_fail(head, sizeof head, "cuModuleGetFunction", r);
    return say(err, errsz, TEENY_E_CUDA, "%s (entry '%s')", head, a->entry);
  }
  if (m->shared > STATIC_SHARED_LIMIT &&
      (r = api.cuFuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  (int)m->shared)))
    return cuda_fail(err, errsz, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
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
  teeny_module *m = teeny__calloc(1, sizeof *m);
  char *ptx = teeny__strndup(a->ptx, a->ptx_len); /* the driver wants a NUL */
  if (!m || !ptx) {
    rc = say(err, errsz, TEENY_E_NOMEM, "out of memory");
    goto fail;
  }
  m->threads = (unsigned)a->threads_per_block;
  m->shared = a->shared_bytes > 0 ? (unsigned)a->shared_bytes : 0;
  m->nparams = a->nparams;
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
  return r ? cuda_fail(err, errsz, "cuLaunchKernel", r) : 0;
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
    return cuda_fail(err, errsz, "cuMemAlloc", r);
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
  return rc ? rc : r ? cuda_fail(err, errsz, "cuMemcpyHtoD", r) : 0;
}

int teeny_cuda_to_host(void *dst, teeny_dptr src, size_t bytes, char *err, size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuMemcpyDtoH(dst, src.addr, bytes);
  return rc ? rc : r ? cuda_fail(err, errsz, "cuMemcpyDtoH", r) : 0;
}

int teeny_cuda_memset(teeny_dptr dst, unsigned char byte, size_t bytes, char *err,
                      size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuMemsetD8(dst.addr, byte, bytes);
  return rc ? rc : r ? cuda_fail(err, errsz, "cuMemsetD8", r) : 0;
}

int teeny_cuda_sync(char *err, size_t errsz) {
  int rc = ready(err, errsz);
  CUresult r = rc ? 0 : api.cuCtxSynchronize();
  return rc ? rc : r ? cuda_fail(err, errsz, "cuCtxSynchronize", r) : 0;
}
