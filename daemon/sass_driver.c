/*
 * daemon/sass_driver.c — cubins from the CUDA driver's own JIT, made in a
 * helper process (see sass.h): the daemon side (spawn, one exchange under
 * a deadline, close) and the helper side (teeny__jit_helper_main).
 *
 * Why a process: libcuda is never mapped into teenycd (it would bring a
 * GPU context, hundreds of MiB of device memory, and the driver's threads
 * into a daemon that otherwise needs no GPU), a driver crash costs one
 * cubin, and the context exists only while the helper runs — the lane
 * closes it when idle.  Exchanges are frames (proto/frame.h) over pipes:
 *   hello   helper -> lane, at start: status (i32, big-endian), then
 *           "driver 580.65.06\0sm_90" or a message
 *   job     lane -> helper: target "\0" PTX
 *   result  helper -> lane: status, then the cubin or the JIT's error log
 * The helper makes cubins for its own GPU (the primary context of
 * $TEENY_CUDA_DEVICE, default 0), so the lane sends it only jobs of that
 * architecture.  Load: one helper start per burst of work (a CUDA init,
 * ~0.2-1 s), then one exchange per cubin.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/sass.h"
#include "daemon/subproc.h"
#include "proto/frame.h"

#define JIT_MAX_FRAME (256u << 20) /* a PTX or a cubin */
#define HELLO_MS 60000             /* a CUDA init can take long on a busy node */
#define SLICE_MS 50                /* how often a wait looks at the stop flag */
#define READ_CHUNK 65536
#define JIT_LOG 8192

struct teeny_jit {
  char *exe;                      /* teenycd */
  teeny_log *log;                 /* for starts and deaths */
  const atomic_bool *stop;        /* give up waiting when set */
  pid_t pid;                      /* the helper, 0: none */
  int to, from;                   /* its stdin / stdout; -1: none */
  teeny_frame_reader rd;          /* its frames */
  char toolchain[TEENY_SASS_TC_LEN]; /* from its hello */
  char arch[16];                  /* from its hello */
};

/* ---- frames over pipes ---------------------------------------------------------- */

/* Wait for fd to be ready for ev until deadline_ns or the stop flag. */
static int wait_fd(const teeny_jit *j, int fd, short ev, uint64_t deadline_ns) {
  for (;;) {
    if (j->stop && atomic_load(j->stop))
      return TEENY_E_SHUTDOWN;
    uint64_t now = teeny__now_ns();
    if (now >= deadline_ns)
      return TEENY_E_TIMEOUT;
    uint64_t left = (deadline_ns - now) / 1000000 + 1;
    struct pollfd p = {fd, ev, 0};
    int r = poll(&p, 1, left < SLICE_MS ? (int)left : SLICE_MS);
    if (r > 0)
      return 0;
    if (r < 0 && errno != EINTR)
      return TEENY_E_IO;
  }
}

static int send_all(const teeny_jit *j, const char *p, size_t n, uint64_t deadline) {
  while (n) {
    ssize_t w = write(j->to, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
    } else if (w < 0 && errno == EAGAIN) {
      int rc = wait_fd(j, j->to, POLLOUT, deadline);
      if (rc)
        return rc;
    } else if (!(w < 0 && errno == EINTR)) {
      return TEENY_E_CLOSED;
    }
  }
  return 0;
}

/* The next frame from the helper (valid until the next read). */
static int recv_frame(teeny_jit *j, uint64_t deadline, const char **p, size_t *n) {
  char buf[READ_CHUNK];
  for (;;) {
    int rc = teeny_frame_reader_next(&j->rd, p, n);
    if (rc == 1)
      return 0;
    if (rc < 0)
      return rc;
    ssize_t r = read(j->from, buf, sizeof buf);
    if (r > 0) {
      if ((rc = teeny_frame_reader_feed(&j->rd, buf, (size_t)r)))
        return rc;
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
      return TEENY_E_CLOSED;
    } else if (errno == EAGAIN && (rc = wait_fd(j, j->from, POLLIN, deadline))) {
      return rc;
    }
  }
}

static int32_t get_i32(const char *p) {
  const unsigned char *u = (const unsigned char *)p;
  return (int32_t)((uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3]);
}

static void put_i32(teeny_buf *b, int32_t v) {
  uint32_t u = (uint32_t)v;
  char x[4] = {(char)(u >> 24), (char)(u >> 16), (char)(u >> 8), (char)u};
  teeny__buf_append(b, x, 4);
}

/* ---- the daemon side ------------------------------------------------------------ */

teeny_jit *teeny__jit_create(const char *exe, teeny_log *log, const atomic_bool *stop) {
  teeny_jit *j = teeny__calloc(1, sizeof *j);
  if (!j || !(j->exe = teeny__strdup(exe ? exe : ""))) {
    teeny__free(j);
    return NULL;
  }
  j->log = log;
  j->stop = stop;
  j->to = j->from = -1;
  return j;
}

bool teeny__jit_running(const teeny_jit *j) { return j && j->pid > 0; }
const char *teeny__jit_toolchain(const teeny_jit *j) { return j->toolchain; }
const char *teeny__jit_arch(const teeny_jit *j) { return j->arch; }

/* Kill (after grace_ms for it to exit by itself) and reap the helper. */
static void reap(teeny_jit *j, int grace_ms) {
  if (j->to >= 0)
    close(j->to);
  if (j->from >= 0)
    close(j->from);
  j->to = j->from = -1;
  teeny_frame_reader_free(&j->rd);
  for (int waited = 0; j->pid > 0 && waited < grace_ms; waited += 10) {
    if (waitpid(j->pid, NULL, WNOHANG) == j->pid)
      j->pid = 0;
    else
      usleep(10000);
  }
  if (j->pid > 0) {
    kill(j->pid, SIGKILL);
    while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  j->pid = 0;
  j->toolchain[0] = j->arch[0] = '\0';
}

void teeny__jit_close(teeny_jit *j) {
  if (j && (j->pid > 0 || j->to >= 0))
    reap(j, 2000);
}

void teeny__jit_destroy(teeny_jit *j) {
  if (!j)
    return;
  teeny__jit_close(j);
  teeny__free(j->exe);
  teeny__free(j);
}

static int spawn_helper(teeny_jit *j, char *why, size_t n) {
  char ppid[24];
  snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
  char *argv[] = {j->exe, (char *)TEENY_SASS_HELPER_FLAG, ppid, NULL};
  int rc = teeny__subproc_spawn(j->exe, argv, &j->pid, &j->to, &j->from, why, n);
  if (rc)
    j->pid = 0;
  else
    teeny_frame_reader_init(&j->rd, JIT_MAX_FRAME);
  return rc;
}

/* The hello: toolchain and arch, or why the driver cannot be used. */
static int read_hello(teeny_jit *j, uint64_t deadline, char *why, size_t n) {
  const char *p;
  size_t len;
  int rc = recv_frame(j, deadline, &p, &len);
  if (rc) {
    snprintf(why, n, "the driver helper %s before it said hello",
             rc == TEENY_E_TIMEOUT ? "timed out" : "died");
    return TEENY_E_INTERNAL;
  }
  if (len < 4)
    return TEENY_E_INTERNAL;
  int32_t st = get_i32(p);
  const char *text = p + 4;
  size_t tlen = strnlen(text, len - 4);
  if (st) {
    snprintf(why, n, "%.*s", (int)tlen, text);
    return st;
  }
  snprintf(j->toolchain, sizeof j->toolchain, "%.*s", (int)tlen, text);
  const char *arch = tlen + 1 < len - 4 ? text + tlen + 1 : "";
  snprintf(j->arch, sizeof j->arch, "%.*s", (int)strnlen(arch, len - 5 - tlen), arch);
  return 0;
}

int teeny__jit_start(teeny_jit *j, uint64_t timeout_ms, char *why, size_t n) {
  if (j->pid > 0)
    return 0;
  (void)timeout_ms;
  int rc = spawn_helper(j, why, n);
  if (!rc)
    rc = read_hello(j, teeny__now_ns() + (uint64_t)HELLO_MS * 1000000u, why, n);
  if (rc) {
    reap(j, 200);
    return rc;
  }
  TEENY_LOGI(j->log, "SASS: the driver's JIT is ready (%s, %s, helper pid %ld)",
             j->toolchain, j->arch, (long)j->pid);
  return 0;
}

int teeny__jit_run(teeny_jit *j, const char *target, const char *ptx, size_t len,
                   uint64_t timeout_ms, char **cubin, size_t *cubin_len, char *why,
                   size_t n) {
  *cubin = NULL;
  *cubin_len = 0;
  uint64_t deadline = teeny__now_ns() + (timeout_ms ? timeout_ms : 600000) * 1000000u;
  teeny_buf b;
  teeny__buf_init(&b);
  size_t at = teeny_frame_begin(&b);
  teeny__buf_append(&b, target, strlen(target) + 1);
  teeny__buf_append(&b, ptx, len);
  int rc = b.oom ? TEENY_E_NOMEM : teeny_frame_end(&b, at, JIT_MAX_FRAME);
  const char *p = NULL;
  size_t plen = 0;
  if (!rc && !(rc = send_all(j, b.p, b.len, deadline)))
    rc = recv_frame(j, deadline, &p, &plen);
  teeny__buf_free(&b);
  if (rc) {
    snprintf(why, n, "the driver helper %s",
             rc == TEENY_E_TIMEOUT    ? "ran past --sass-timeout and was killed"
             : rc == TEENY_E_SHUTDOWN ? "was stopped"
                                      : "died");
    reap(j, 0);
    return rc == TEENY_E_TIMEOUT || rc == TEENY_E_SHUTDOWN ? rc : TEENY_E_INTERNAL;
  }
  if (plen < 4)
    return TEENY_E_INTERNAL;
  int32_t st = get_i32(p);
  if (st) {
    snprintf(why, n, "%.*s", (int)(plen - 4), p + 4);
    return st;
  }
  if (!(*cubin = teeny__malloc(plen - 4 + 1)))
    return TEENY_E_NOMEM;
  memcpy(*cubin, p + 4, plen - 4);
  *cubin_len = plen - 4;
  return 0;
}

/* ---- the helper side: the driver, dlopen()ed --------------------------------------- */

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUlinkState;

enum {
  CU_ATTR_CC_MAJOR = 75, /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
  CU_ATTR_CC_MINOR = 76,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_INPUT_PTX = 1
};

#define JIT_FUNCS(X)                                                           \
  X(cuInit, "cuInit", (unsigned flags))                                       \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int *v))                       \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * d, int ordinal))                  \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *v, int a, CUdevice d)) \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * c, CUdevice d)) \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext c))                        \
  X(cuLinkCreate, "cuLinkCreate_v2", (unsigned n, int *opts, void **vals, CUlinkState *s)) \
  X(cuLinkAddData, "cuLinkAddData_v2",                                        \
    (CUlinkState s, int type, void *data, size_t size, const char *name,      \
     unsigned n, int *opts, void **vals))                                     \
  X(cuLinkComplete, "cuLinkComplete", (CUlinkState s, void **cubin, size_t *size)) \
  X(cuLinkDestroy, "cuLinkDestroy", (CUlinkState s))                          \
  X(cuGetErrorName, "cuGetErrorName", (CUresult r, const char **s))

typedef struct driver {
#define JIT_FIELD(name, sym, params) CUresult(*name) params;
  JIT_FUNCS(JIT_FIELD)
#undef JIT_FIELD
} driver;

static const char *err_name(const driver *d, CUresult r) {
  const char *s = NULL;
  if (d->cuGetErrorName)
    d->cuGetErrorName(r, &s);
  return s ? s : "CUDA_ERROR";
}

/* Load libcuda, start the device: 0, or a status with why. */
static int driver_open(driver *d, char *arch, size_t an, char *why, size_t n) {
  const char *lib = getenv("TEENY_CUDA_LIBRARY");
  void *h = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(why, n, "no CUDA driver (%s)", dlerror());
    return TEENY_E_NOCUDA;
  }
#define JIT_RESOLVE(name, sym, params)                                         \
  if (!(*(void **)&d->name = dlsym(h, sym))) {                                \
    snprintf(why, n, "the CUDA driver lacks %s", sym);                        \
    return TEENY_E_NOCUDA;                                                    \
  }
  JIT_FUNCS(JIT_RESOLVE)
#undef JIT_RESOLVE
  const char *dev = getenv("TEENY_CUDA_DEVICE");
  CUdevice device;
  CUcontext ctx;
  int major = 0, minor = 0;
  CUresult r = d->cuInit(0);
  if (!r)
    r = d->cuDeviceGet(&device, dev && *dev ? atoi(dev) : 0);
  if (!r)
    r = d->cuDeviceGetAttribute(&major, CU_ATTR_CC_MAJOR, device);
  if (!r)
    r = d->cuDeviceGetAttribute(&minor, CU_ATTR_CC_MINOR, device);
  if (!r)
    r = d->cuDevicePrimaryCtxRetain(&ctx, device);
  if (!r)
    r = d->cuCtxSetCurrent(ctx);
  if (r) {
    snprintf(why, n, "CUDA driver: %s (%d) while starting the device", err_name(d, r), r);
    return r == 100 ? TEENY_E_NOCUDA : TEENY_E_CUDA; /* 100: no device */
  }
  snprintf(arch, an, "sm_%d%d", major, minor);
  return 0;
}

/* "driver 580.65.06" (else the CUDA version the driver reports). */
static void driver_toolchain(const driver *d, char *out, size_t n) {
  char v[64];
  int cv = 0;
  if (teeny__driver_version(v, sizeof v))
    snprintf(out, n, "driver %s", v);
  else if (d->cuDriverGetVersion(&cv) == 0)
    snprintf(out, n, "driver cuda-%d.%d", cv / 1000, cv % 1000 / 10);
  else
    snprintf(out, n, "driver unknown");
}

/* JIT one PTX; the frame to send back goes into out. */
static void jit_one(void *ctx, const char *ptx, size_t len, teeny_buf *out) {
  const driver *d = ctx;
  static char log[JIT_LOG];
  log[0] = '\0';
  int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(uintptr_t)sizeof log};
  CUlinkState st = NULL;
  void *cubin = NULL;
  size_t size = 0;
  char *copy = teeny__strndup(ptx, len); /* the driver wants a NUL */
  CUresult r = copy ? d->cuLinkCreate(2, opts, vals, &st) : 2;
  if (!r)
    r = d->cuLinkAddData(st, CU_JIT_INPUT_PTX, copy, len + 1, "teenyc.ptx", 0, NULL, NULL);
  if (!r)
    r = d->cuLinkComplete(st, &cubin, &size);
  size_t at = teeny_frame_begin(out);
  put_i32(out, r ? TEENY_E_CUDA : 0);
  if (r)
    teeny__buf_printf(out, "cuLink: %s (%d): %s", err_name(d, r), r, log[0] ? log : "no log");
  else
    teeny__buf_append(out, cubin, size); /* owned by the link state */
  teeny_frame_end(out, at, JIT_MAX_FRAME);
  if (st)
    d->cuLinkDestroy(st);
  teeny__free(copy);
}

/* The hello frame: status, then toolchain "\0" arch, or the reason. */
static void hello(teeny_buf *out, int st, const char *a, const char *b) {
  size_t at = teeny_frame_begin(out);
  put_i32(out, st);
  teeny__buf_append(out, a, strlen(a) + 1);
  teeny__buf_append(out, b, strlen(b));
  teeny_frame_end(out, at, 0);
}

/* teeny_subproc_fn: one job frame, target "\0" PTX. */
static void serve_job(void *ctx, const char *p, size_t n, teeny_buf *out) {
  size_t tlen = strnlen(p, n);
  if (tlen < n)
    jit_one(ctx, p + tlen + 1, n - tlen - 1, out);
  else
    hello(out, TEENY_E_PROTO, "a job without a target", "");
}

int teeny__jit_helper_main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "teenycd: %s is for teenycd's own use\n", TEENY_SASS_HELPER_FLAG);
    return 2;
  }
  int out_fd = teeny__subproc_enter(argv[2]);
  if (out_fd <= 0)
    return out_fd == 0 ? 0 : 1;
  driver d;
  memset(&d, 0, sizeof d);
  char arch[16] = "", why[512] = "", tc[TEENY_SASS_TC_LEN];
  int rc = driver_open(&d, arch, sizeof arch, why, sizeof why);
  teeny_buf out;
  teeny__buf_init(&out);
  if (rc)
    hello(&out, rc, why, "");
  else {
    driver_toolchain(&d, tc, sizeof tc);
    hello(&out, 0, tc, arch);
  }
  int status = out.oom || teeny__subproc_write(out_fd, out.p, out.len) ? 1 : 0;
  teeny__buf_free(&out);
  if (rc || status)
    return rc ? 0 : 1;
  return teeny__subproc_serve(out_fd, JIT_MAX_FRAME, serve_job, &d);
}
