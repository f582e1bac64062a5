/*
 * client/cuda_api.h — the CUDA driver as libteenyc-client sees it: the
 * types and constants of the driver ABI it uses, and the function table
 * that client/cuda.c fills once with dlsym().  Shared by cuda.c (loading,
 * modules, launches, memory), cuda_bench.c (timing with events) and
 * tensormap.c (TMA descriptors); no other file may use it.
 */
#ifndef TEENY_CLIENT_CUDA_API_H
#define TEENY_CLIENT_CUDA_API_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_EVENT_DEFAULT = 0,
};

/* X(name, symbol, parameters) for every driver entry point used. */
#define CUDA_FUNCS(X)                                                          \
  X(cuInit, "cuInit", (unsigned flags))                                       \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int *v))                       \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * d, int ordinal))                  \
  X(cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice d))    \
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
  X(cuMemsetD8Async, "cuMemsetD8Async",                                       \
    (CUdeviceptr d, unsigned char v, size_t n, CUstream s))                   \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream s))                 \
  X(cuEventCreate, "cuEventCreate", (CUevent * e, unsigned flags))            \
  X(cuEventRecord, "cuEventRecord", (CUevent e, CUstream s))                  \
  X(cuEventSynchronize, "cuEventSynchronize", (CUevent e))                    \
  X(cuEventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent a, CUevent b)) \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent e))                         \
  X(cuGetErrorName, "cuGetErrorName", (CUresult r, const char **s))           \
  X(cuGetErrorString, "cuGetErrorString", (CUresult r, const char **s))

typedef struct teeny__cuda {
  void *lib;             /* dlopen handle; NULL when absent */
  int rc;                /* 0, TEENY_E_NOCUDA or TEENY_E_CUDA */
  char why[512];         /* the message for rc */
  CUdevice dev;          /* the device used */
  CUcontext primary;     /* its retained primary context */
  char arch[16];         /* "sm_90": its compute capability */
  char name[128];        /* "NVIDIA H200" */
#define CUDA_FIELD(name, sym, params) CUresult(*name) params;
  CUDA_FUNCS(CUDA_FIELD)
#undef CUDA_FIELD
} teeny__cuda;

/* The driver, loaded once (process-wide, under pthread_once), with a
 * context current on this thread: the table, or NULL with err filled
 * (TEENY_E_NOCUDA or TEENY_E_CUDA in *rc). */
const teeny__cuda *teeny__cuda_get(int *rc, char *err, size_t errsz);
/* The table if the driver was already loaded and works, else NULL; never
 * loads it (for callers that must not initialise CUDA, like compiles). */
const teeny__cuda *teeny__cuda_if_loaded(void);
/* "call: CUDA_ERROR_X (n): description" into err; returns TEENY_E_CUDA. */
int teeny__cuda_fail(char *err, size_t errsz, const char *call, CUresult r);

#endif /* TEENY_CLIENT_CUDA_API_H */
