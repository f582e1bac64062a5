/*
 * bench/fake_libcuda.c — a stand-in for libcuda.so.1 for host-only timing
 * of the Python package's launch path (bench/python_launch.py builds it
 * with cc and points $TEENY_CUDA_LIBRARY at it).  Every entry point
 * libteenyc-client resolves (client/cuda_api.h) is here; they succeed and
 * do nothing, except cuLaunchKernel, which counts launches and keeps the
 * last one's grid, stream and first eight 8-byte argument slots so the
 * benchmark can check what the package packed, and cuModuleLoadDataEx,
 * which keeps the JIT options it was given (tests/unit/test_client_jit.c).
 * Never used by a test that claims to launch anything: it launches nothing.
 */
#include <stddef.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long u64;

static u64 launches;
static unsigned last_grid[3];
static void *last_stream;
static u64 last_args[8];
static size_t last_nargs;

u64 fake_launches(void) { return launches; }
void fake_last(unsigned grid[3], void **stream, u64 args[8]) {
  memcpy(grid, last_grid, sizeof last_grid);
  *stream = last_stream;
  memcpy(args, last_args, sizeof last_args);
}
void fake_set_nargs(size_t n) { last_nargs = n < 8 ? n : 8; }

static int ctx_token;
CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *n, int len, int d) {
  (void)d;
  strncpy(n, "fake GPU (bench/fake_libcuda.c)", (size_t)len - 1);
  n[len - 1] = 0;
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  *v = attr == 75 ? 9 : 0; /* sm_90 */
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &ctx_token; return 0; }
CUresult cuCtxGetCurrent(void **c) { *c = &ctx_token; return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
static int mod_token, fn_token;
static unsigned last_njit;
static int last_jit_opts[8];
static u64 last_jit_vals[8];
/* The JIT options of the last cuModuleLoadDataEx (tests/unit/test_client_jit.c). */
unsigned fake_last_jit(int opts[8], u64 vals[8]) {
  memcpy(opts, last_jit_opts, sizeof last_jit_opts);
  memcpy(vals, last_jit_vals, sizeof last_jit_vals);
  return last_njit;
}
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v) {
  (void)img;
  last_njit = n;
  for (unsigned i = 0; i < n && i < 8; i++) {
    last_jit_opts[i] = o[i];
    last_jit_vals[i] = (u64)(size_t)v[i];
  }
  *m = &mod_token;
  return 0;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)m; (void)name;
  *f = &fn_token;
  return 0;
}
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f; (void)a; (void)v; return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *s, void **params,
                        void **extra) {
  (void)f; (void)bx; (void)by; (void)bz; (void)shared; (void)extra;
  launches++;
  last_grid[0] = gx, last_grid[1] = gy, last_grid[2] = gz;
  last_stream = s;
  for (size_t i = 0; i < last_nargs; i++)
    memcpy(&last_args[i], params[i], sizeof last_args[i]);
  return 0;
}
CUresult cuMemAlloc_v2(u64 *p, size_t b) { (void)b; *p = 0x7f0000000000ull; return 0; }
CUresult cuMemFree_v2(u64 p) { (void)p; return 0; }
CUresult cuMemcpyHtoD_v2(u64 d, const void *s, size_t n) { (void)d; (void)s; (void)n; return 0; }
CUresult cuMemcpyDtoH_v2(void *d, u64 s, size_t n) { (void)s; memset(d, 0, n); return 0; }
CUresult cuMemsetD8_v2(u64 d, unsigned char v, size_t n) { (void)d; (void)v; (void)n; return 0; }
CUresult cuMemsetD8Async(u64 d, unsigned char v, size_t n, void *s) {
  (void)d; (void)v; (void)n; (void)s;
  return 0;
}
CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
static int ev_token;
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = &ev_token; return 0; }
CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 1; return 0; }
CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { (void)r; *s = "CUDA_ERROR_FAKE"; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake driver"; return 0; }
