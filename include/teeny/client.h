/*
 * teeny/client.h — libteenyc-client: compile kernels through teenycd (or in
 * process), load and launch them through the CUDA driver, administer the
 * cache.  Link with `pkg-config --libs teenyc-client` or CMake's
 * find_package(teenyc) + teenyc::teenyc-client.
 *
 *   teeny_client *c;
 *   if (teeny_client_open(&c, NULL)) { puts(teeny_client_errmsg(c)); ... }
 *   teeny_client_result *r;
 *   if (teeny_client_compile(c, &req, TEENY_EMIT_PTX, &r) == 0) {
 *     teeny_module *m;
 *     teeny_module_load(&r->art, &m, err, sizeof err);
 *     teeny_launch(m, grid, NULL, args, err, sizeof err);
 *   }
 *   teeny_client_result_free(r);
 *   teeny_client_close(c);
 *
 * Modes (teeny_client_opts.mode, else $TEENYC_MODE, else auto):
 *   daemon    through teenycd's Unix socket (PROTOCOL.md); an error if it
 *             cannot be reached.  A call made while teenycd restarts
 *             waits for it to answer again, with backoff, for up to
 *             restart_wait_ms (default 10 s), and a request the stopping
 *             daemon refused (SHUTDOWN) is sent again to the next one.
 *   embedded  in process with the compiler library, against the same store
 *             teenycd uses (safe alongside a running daemon and other
 *             embedded processes: atomic renames, SQLite locking).
 *   offline   in process, no store at all (teenyc's historical behaviour).
 *   auto      daemon if reachable; else embedded if a store root is
 *             configured (cache_dir, $TEENYC_CACHE_DIR or $XDG_CACHE_HOME:
 *             an error if it cannot be opened) or the default root
 *             /var/cache/teenyc already exists and opens; else offline
 *             (auto never creates the system-wide store).  If the daemon
 *             goes away mid-session, auto continues in process the same
 *             way at once, and goes back to the daemon as soon as it
 *             answers again (looked for at most every 100 ms, at a call).
 *             teeny_client_notice() says which and why, in one line, for
 *             the caller to show.
 *
 * The daemon is found by socket discovery: the explicit socket_path only;
 * else $TEENYCD_SOCKET, then $XDG_RUNTIME_DIR/teenycd.sock, then
 * /run/teenycd/teenycd.sock — the first that answers.  When none does, the
 * message names each path and why it failed ("no such file", "permission
 * denied (add yourself to group teenyc, then log in again)").
 *
 * Embedded and offline modes compile with libteenyc-embedded (LLVM and
 * the store), which this library loads on first need from its own
 * directory: a client in daemon mode never maps the compiler.
 *
 * Threads.  Every function here may be called from any thread.  A client
 * has a mutex: calls that talk to the daemon or the store are serialised
 * per client (one request at a time on its connection, or one batch), while
 * memo hits take only the memo's own lock and never wait behind a compile.
 * For parallel cold compiles use teeny_client_compile_batch (one pipelined
 * round trip) or one client per thread.  Results are immutable and may be
 * shared between threads; free each once.  teeny_client_errmsg() is the
 * message of the last failed call on the client: with several threads on
 * one client, read result->error (compile) or pass your own client.
 *
 * Global state: the CUDA loader keeps the dlopen()ed libcuda handle, its
 * function table and the primary context in one structure initialised once
 * under pthread_once (it cannot be per client: modules outlive clients);
 * the embedded loader keeps libteenyc-embedded's handle the same way.
 * Nothing else is global.  The library never prints and never exits.
 *
 * Errors are teeny_err codes (teeny/error.h): 0 success, negative failure.
 */
#ifndef TEENY_CLIENT_H
#define TEENY_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "teeny/compile.h"
#include "teeny/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TEENY_CLIENT_VERSION_STRING TEENY_VERSION_STRING

/* ---- opening a client ------------------------------------------------------ */

typedef struct teeny_client teeny_client;

typedef enum teeny_client_mode {
  TEENY_MODE_DEFAULT = 0, /* $TEENYC_MODE if set, else auto */
  TEENY_MODE_AUTO,        /* daemon, else embedded, else offline (above) */
  TEENY_MODE_DAEMON,      /* through teenycd only */
  TEENY_MODE_EMBEDDED,    /* in process, against the store */
  TEENY_MODE_OFFLINE      /* in process, no store */
} teeny_client_mode;

typedef struct teeny_client_opts {
  teeny_client_mode mode;  /* TEENY_MODE_DEFAULT: $TEENYC_MODE, else auto */
  const char *socket_path; /* only this socket; NULL: discovery (the first
                              of $TEENYCD_SOCKET, $XDG_RUNTIME_DIR/
                              teenycd.sock, /run/teenycd/teenycd.sock
                              that answers) */
  const char *cache_dir;   /* embedded store root; NULL: $TEENYC_CACHE_DIR,
                              $XDG_CACHE_HOME/teenyc, /var/cache/teenyc */
  const char *client_name; /* "program/version" sent in HELLO; NULL:
                              "libteenyc-client/<version>" */
  int timeout_ms;          /* connect and per-request limit; 0: none */
  long memo_entries;       /* memo capacity; 0: 4096; < 0: no memo */
  int restart_wait_ms;     /* daemon mode: how long a call waits for teenycd
                              to answer again (a restart) before it fails
                              with TEENY_E_CONNECT, retrying with backoff;
                              0: TEENY_CLIENT_RESTART_WAIT_MS; < 0: none */
} teeny_client_opts;

#define TEENY_CLIENT_RESTART_WAIT_MS 10000 /* default restart_wait_ms */

/* Open a client (opts may be NULL: all defaults).  Returns 0, or
 * TEENY_E_CONNECT (daemon mode and no daemon at any socket tried),
 * TEENY_E_PERM (daemon mode, and a socket refused us: not in its group),
 * TEENY_E_VERSION (the daemon speaks another protocol),
 * TEENY_E_STORE/IO/PERM (embedded: the store cannot be opened),
 * TEENY_E_UNSUPPORTED (embedded or offline: libteenyc-embedded cannot be
 * loaded), TEENY_E_INVAL (bad opts or $TEENYC_MODE), TEENY_E_NOMEM.  Whether or not it fails, *out gets a handle (NULL only
 * when memory ran out) whose teeny_client_errmsg() explains a failure; a
 * failed handle can only be closed.  Close every handle. */
int teeny_client_open(teeny_client **out, const teeny_client_opts *opts);
/* Close the connection or store, drop the memo.  NULL is a no-op. */
void teeny_client_close(teeny_client *c);

/* One line about the last failure on c ("" if none); "out of memory" for
 * c == NULL.  Valid until the next call on c. */
const char *teeny_client_errmsg(const teeny_client *c);
/* The mode c is working in now: DAEMON, EMBEDDED or OFFLINE. */
teeny_client_mode teeny_client_active_mode(const teeny_client *c);
/* "auto", "daemon", "embedded", "offline" (and "default"). */
const char *teeny_client_mode_name(teeny_client_mode m);
/* Parse a mode name; returns -1 for an unknown one. */
int teeny_client_mode_parse(const char *name);
/* The socket path used (daemon mode) or that would be ("" if unknown). */
const char *teeny_client_socket(const teeny_client *c);
/* One line on how c came to its mode when that was not the plain first
 * choice — auto mode fell back (why, and to what), or the store is
 * read-only for this process — else "".  Tools print it once on stderr. */
const char *teeny_client_notice(const teeny_client *c);
/* The store root used in embedded mode ("" in the other modes). */
const char *teeny_client_store_root(const teeny_client *c);

/* The first socket discovery tries: explicit if non-empty, else
 * $TEENYCD_SOCKET, else $XDG_RUNTIME_DIR/teenycd.sock (absolute only),
 * else /run/teenycd/teenycd.sock.  Returns 0 or TEENY_E_LIMIT (does not
 * fit in size bytes, or longer than a Unix socket path may be). */
int teeny_client_socket_path(const char *explicit_path, char *out, size_t size);

/* ---- compiling ----------------------------------------------------------------- */

/* emit bits: TEENY_EMIT_PTX, TEENY_EMIT_MLIR (teeny/compile.h) and: */
#define TEENY_EMIT_SOURCE (1u << 8)   /* fill art.source (generated source) */
/* flags, or-ed into emit: */
#define TEENY_CLIENT_FORCE (1u << 16)   /* recompile even if cached (no memo) */
#define TEENY_CLIENT_NO_MEMO (1u << 17) /* skip the memo for this call */

/* Where a result came from. */
typedef enum teeny_client_cache {
  TEENY_CLIENT_MISS = 0, /* compiled for this request */
  TEENY_CLIENT_MEMORY,   /* the daemon's in-memory map */
  TEENY_CLIENT_DISK,     /* the store (daemon or embedded) */
  TEENY_CLIENT_JOINED,   /* waited on another request's compile */
  TEENY_CLIENT_MEMO      /* this client's memo: no round trip at all */
} teeny_client_cache;

/* "miss", "memory", "disk", "joined", "memo". */
const char *teeny_client_cache_name(teeny_client_cache c);

/* A compile result.  Read-only: the memo and other callers may share the
 * memory it points to.  Free with teeny_client_result_free. */
typedef struct teeny_client_result {
  int status;              /* 0, or the request's negative teeny_err */
  const char *error;       /* status < 0: one line; else NULL */
  teeny_artifact art;      /* status 0: name, id, key, entry, target,
                              num_warps, params, threads_per_block,
                              shared_bytes, compile_ns; ptx, mlir, source
                              when emit asked for them (else NULL, 0 —
                              more may be present).  Never pass to
                              teeny_artifact_destroy */
  teeny_client_cache cache;/* where it came from */
  teeny_client_mode mode;  /* DAEMON, EMBEDDED or OFFLINE */
  double compile_ms;       /* how long its compile took (hits: back then) */
  const teeny_diag *diags; /* errors (status < 0) or warnings, in order */
  size_t ndiags;           /* how many */
  const char *cubin;       /* SASS for the client's GPU (teeny_client_arch)
                              when teenycd has one, else NULL: load with
                              teeny_module_load_result */
  size_t cubin_len;        /* its bytes */
  const char *cubin_arch;  /* the GPU it is for ("sm_90"), or NULL */
  const char *cubin_toolchain; /* what made it ("ptxas 13.0.88"), or NULL */
} teeny_client_result;

/* Compile req (teeny/compile.h) for the artifacts in emit, through the
 * daemon, the store or the compiler according to the mode; a repeat of an
 * identical request (every field compared byte for byte, emit a subset of
 * what was fetched) is answered from the client's memo with no round trip.
 * Returns 0 with *out a new result; or a negative teeny_err:
 *   - the request failed (TEENY_E_COMPILE, _BINDING, _INVAL, _NAME, _LIMIT,
 *     _LLVM, ...): *out is a result carrying status, error and diagnostics;
 *   - the transport failed (TEENY_E_CONNECT, _CLOSED, _TIMEOUT, _PROTO,
 *     _NOMEM, ...): *out is NULL.
 * Either way teeny_client_errmsg(c) has a one-line message.  A connection
 * lost before the reply (EPIPE, ECONNRESET, end of stream: a daemon
 * restart) is reopened and the request sent once more. */
int teeny_client_compile(teeny_client *c, const teeny_compile_req *req,
                         unsigned emit, teeny_client_result **out);

/* Compile n requests at once: all are sent before any reply is read (up to
 * the daemon's in-flight limit), replies are collected out of order by id;
 * memo hits are answered without being sent.  out[i] gets request i's
 * result, NULL only where a transport error left it unanswered.  Returns 0
 * when every request got a result (check each status), else the first
 * transport error; free every non-NULL out[i]. */
int teeny_client_compile_batch(teeny_client *c, const teeny_compile_req *reqs,
                               size_t n, unsigned emit,
                               teeny_client_result **out);

/* Release a result (NULL is a no-op). */
void teeny_client_result_free(teeny_client_result *r);

/* The GPU architecture c names in its compile requests ("sm_90"), so that
 * teenycd answers with that GPU's cubin beside the PTX and a request with
 * no target compiles for that GPU (teeny_target_for_arch) instead of
 * sm_90a.  Unless set, it is the CUDA device's (cuDeviceGetAttribute)
 * once this process has initialised CUDA through this library (any
 * teeny_cuda_* call, a module load) — compiling alone never initialises
 * CUDA — and "" before.  arch NULL or "" names none; anything but "sm_"
 * and 2 or 3 digits is TEENY_E_INVAL. */
int teeny_client_set_arch(teeny_client *c, const char *arch);
/* The architecture the next compile names ("" when none). */
const char *teeny_client_arch(teeny_client *c);
/* The compile target for a GPU architecture: "sm_90a" for sm_90, "sm_90"
 * for newer GPUs, "sm_89", "sm_86", "sm_80"; NULL for older or malformed
 * names. */
const char *teeny_target_for_arch(const char *arch);

/* Memo statistics of c. */
typedef struct teeny_client_memo_stats {
  uint64_t hits;    /* compiles answered from the memo */
  uint64_t misses;  /* compiles that looked and did not find */
  size_t entries;   /* results held now */
} teeny_client_memo_stats;
void teeny_client_memo_stats_get(teeny_client *c, teeny_client_memo_stats *out);
/* Drop every memoised result (results handed out stay valid). */
void teeny_client_memo_clear(teeny_client *c);

/* ---- administration (daemon mode; teenyctl is built on these) ------------ */

typedef enum teeny_admin_op {
  TEENY_ADMIN_PING,    /* liveness */
  TEENY_ADMIN_STATS,   /* counters (zero: also reset them; admin) */
  TEENY_ADMIN_LIST,    /* entries */
  TEENY_ADMIN_SHOW,    /* one entry by key prefix, with artifacts */
  TEENY_ADMIN_PURGE,   /* remove entries (admin) */
  TEENY_ADMIN_VERIFY,  /* check the store (repair: admin) */
  TEENY_ADMIN_SHUTDOWN, /* stop the daemon (admin) */
  TEENY_ADMIN_TUNED,   /* list tuning records (name: glob on kernels) */
  TEENY_ADMIN_TUNED_PURGE, /* remove tuning records: all, or name (admin) */
  TEENY_ADMIN_CONFIG   /* the daemon's resolved settings (a daemon older
                          than 0.1 answers TEENY_E_UNSUPPORTED) */
} teeny_admin_op;

typedef enum teeny_admin_sort {
  TEENY_ADMIN_SORT_USED = 0, /* most recently used first */
  TEENY_ADMIN_SORT_SIZE,     /* largest first */
  TEENY_ADMIN_SORT_HITS      /* most hits first */
} teeny_admin_sort;

typedef struct teeny_admin_req {
  teeny_admin_op op;      /* what to do */
  bool zero;              /* stats: reset the counters after reading */
  const char *name;       /* list, purge: glob on kernel names; NULL: all */
  unsigned limit;         /* list: at most this many in this reply; 0: the
                             daemon's page (10 000); follow next for more */
  teeny_admin_sort sort;  /* list: order */
  const char *key;        /* show: a key or a prefix (hex) */
  unsigned emit;          /* show: TEENY_EMIT_PTX/MLIR/SOURCE to include */
  bool all;               /* purge: everything */
  int64_t older_than_s;   /* purge: > 0: unused for this many seconds */
  int64_t to_size;        /* purge: >= 0 with has_to_size: LRU down to bytes */
  bool has_to_size;       /* purge: to_size given */
  bool repair;            /* verify: fix what it finds (admin) */
  const char *after;      /* list: a previous reply's next (the page after
                             it); NULL: the first page */
} teeny_admin_req;

typedef struct teeny_counter {
  const char *name; /* "requests", "hits", ..., "uptime_s", extras */
  double value;     /* its value */
} teeny_counter;

/* A histogram of a stats reply: counts per bucket (not cumulative); bucket
 * i holds values <= le[i], counts[nle] those above every bound. */
typedef struct teeny_histogram {
  const char *name;       /* "compile_seconds", "hit_seconds" */
  const double *le;       /* nle upper bounds, seconds, ascending */
  const uint64_t *counts; /* nle + 1 counts */
  size_t nle;
  double sum;             /* of the observed values, seconds */
  uint64_t count;         /* observations */
} teeny_histogram;

/* One of the daemon's resolved settings (config). */
typedef struct teeny_setting {
  const char *key;   /* its config-file key, "max_size" */
  const char *value; /* as the file would spell it, "2G"; "" when unset */
} teeny_setting;

typedef struct teeny_cache_entry {
  char key[65];       /* 64 hex digits */
  const char *name;   /* kernel name */
  const char *id;     /* name__dtypes__consts */
  const char *target; /* "sm_90a" */
  int num_warps;      /* as compiled */
  uint64_t size;      /* bytes of its artifacts */
  int64_t created;    /* Unix seconds */
  int64_t last_used;  /* Unix seconds */
  uint64_t hits;      /* times served from the cache */
  double compile_ms;  /* its compile time */
  uint32_t cubins;    /* cubins stored for it */
  uint64_t cubin_bytes; /* their bytes (not in size) */
} teeny_cache_entry;

/* One cubin of an entry (show). */
typedef struct teeny_cache_cubin {
  const char *arch;      /* "sm_90" */
  const char *toolchain; /* "ptxas 13.0.88", "driver 580.65.06" */
  uint64_t size;         /* bytes */
  int64_t created;       /* Unix seconds */
  double sass_ms;        /* time making it took */
} teeny_cache_cubin;

/* One tuning record (tuned). */
typedef struct teeny_tuned_record {
  const char *kernel;   /* kernel name */
  char digest[65];      /* teeny_tune_digest of the kernel */
  const char *problem;  /* the problem key */
  const char *gpu;      /* "NVIDIA H200" */
  const char *driver;   /* "580.65.06" */
  const teeny_const_binding *consts; /* the winner's consts */
  size_t nconsts;
  int num_warps;        /* and num_warps */
  double best_ms;       /* its median time */
  uint32_t candidates;  /* configurations timed */
  int64_t created;      /* Unix seconds */
} teeny_tuned_record;

typedef struct teeny_cache_problem {
  const char *key;     /* entry key, or a file no entry names */
  const char *problem; /* one line */
} teeny_cache_problem;

typedef struct teeny_admin_reply {
  int status;                 /* 0 or a negative teeny_err */
  const char *error;          /* status < 0: one line */
  teeny_counter *counters;    /* stats: every counter, PROTOCOL.md order
                                 first, then extras as the daemon sent them */
  size_t ncounters;
  teeny_cache_entry *entries; /* list: the entries; show: the one entry */
  size_t nentries;
  const char **candidates;    /* show, TEENY_E_AMBIGUOUS: matching keys */
  size_t ncandidates;
  const char *source, *mlir, *ptx; /* show: as asked; else NULL */
  size_t source_len, mlir_len, ptx_len;
  uint64_t removed, bytes;    /* purge: entries and bytes removed */
  uint64_t checked, repaired; /* verify */
  teeny_cache_problem *problems; /* verify: what was found */
  size_t nproblems;
  const char *next;           /* list: more entries follow (pass it as
                                 after); NULL: this was the last page */
  teeny_cache_cubin *cubins;  /* show: the entry's cubins */
  size_t ncubins;
  const char *cubin;          /* show with cubin_arch: that cubin */
  size_t cubin_len;
  teeny_tuned_record *tuned;  /* tuned: the records, newest first */
  size_t ntuned;              /* (tuned_purge: removed counts them) */
  const char *store;          /* stats: the store's root; NULL from an
                                 older daemon */
  teeny_histogram *histograms; /* stats: compile time and hit latency;
                                  NULL, 0 from an older daemon */
  size_t nhistograms;
  teeny_setting *settings;    /* config: every setting, the daemon's order */
  size_t nsettings;
} teeny_admin_reply;

/* Send one admin request to the daemon (any mode's client may call this; a
 * client not in daemon mode gets TEENY_E_UNSUPPORTED).  Returns 0, or the
 * reply's status (then *out still has the reply: error, candidates), or a
 * transport error (then *out is NULL).  Free *out with
 * teeny_admin_reply_free.  Requests other than shutdown are resent once
 * after a lost connection. */
int teeny_client_admin(teeny_client *c, const teeny_admin_req *req,
                       teeny_admin_reply **out);
/* show with a cubin: teeny_client_admin for TEENY_ADMIN_SHOW of key, and
 * the bytes of its cubin for arch in (*out)->cubin. */
int teeny_client_show_cubin(teeny_client *c, const char *key, const char *arch,
                            teeny_admin_reply **out);
void teeny_admin_reply_free(teeny_admin_reply *r); /* NULL is a no-op */
/* The counter named name in a stats reply; NAN when absent. */
double teeny_admin_counter(const teeny_admin_reply *r, const char *name);

/* ---- CUDA: loading and launching (libcuda is dlopen()ed at first use) ----- */

/* A device address (CUdeviceptr).  Typed variants below let generated
 * launch functions check element types at compile time. */
typedef struct teeny_dptr {
  uint64_t addr; /* 0: null */
} teeny_dptr;

#define TEENY_DTYPE_NAMES(X)                                                  \
  X(bool) X(i8) X(i16) X(i32) X(i64) X(u8) X(u16) X(u32) X(u64) X(f16)       \
  X(bf16) X(f32) X(f64)
#define TEENY__DPTR_TYPE(t) typedef struct teeny_dptr_##t { uint64_t addr; } teeny_dptr_##t;
TEENY_DTYPE_NAMES(TEENY__DPTR_TYPE)
#undef TEENY__DPTR_TYPE
/* A typed device pointer from an untyped one: TEENY_DPTR_AS(f32, p). */
#define TEENY_DPTR_AS(t, p) ((teeny_dptr_##t){(p).addr})

/* A launch grid in programs; 0 counts as 1, so (teeny_grid){.x = n} is 1-D. */
typedef struct teeny_grid {
  unsigned x, y, z;
} teeny_grid;

typedef struct teeny_module teeny_module;

/* Every CUDA function takes err (may be NULL), a buffer of errsz bytes that
 * gets one line naming the failing call ("cuModuleLoadDataEx:
 * CUDA_ERROR_INVALID_PTX: ...", with the JIT log).  Without libcuda they
 * return TEENY_E_NOCUDA.  The library to load is $TEENY_CUDA_LIBRARY if
 * set (read once), else "libcuda.so.1"; the device is $TEENY_CUDA_DEVICE
 * (default 0); $TEENY_CUDA_JIT_OPT (0 to 4), when set, is the driver JIT's
 * optimisation level for PTX loads (a diagnosis knob: with 0, a result that
 * changes points at the JIT rather than the PTX).  The current context of the calling thread is used; if it
 * has none, the device's primary context is made current. */

/* 0 if libcuda loads, initialises and has a device; else TEENY_E_NOCUDA or
 * TEENY_E_CUDA with the reason. */
int teeny_cuda_available(char *err, size_t errsz);
/* The compile target for the device: teeny_target_for_arch of its
 * architecture ("sm_90a" on an H200).  TEENY_E_UNSUPPORTED for devices
 * older than sm_80. */
int teeny_cuda_target(char *target, size_t size, char *err, size_t errsz);
/* The device's architecture, "sm_" + its compute capability ("sm_90"). */
int teeny_cuda_arch(char *arch, size_t size, char *err, size_t errsz);
/* The device's name ("NVIDIA H200") and the driver's version ("580.65.06",
 * from /proc/driver/nvidia/version, else "cuda-13.0"); either may be NULL. */
int teeny_cuda_gpu(char *name, size_t nsize, char *driver, size_t dsize, char *err,
                   size_t errsz);

/* Load a's PTX (cuModuleLoadDataEx, JIT error log captured into err) and
 * find its entry symbol.  Keeps a's launch shape (threads_per_block,
 * shared_bytes) and parameter count; a need not outlive the module.
 * Returns 0 (*out owns the module), TEENY_E_INVAL (no PTX in a),
 * TEENY_E_NOCUDA, TEENY_E_CUDA, TEENY_E_NOMEM. */
int teeny_module_load(const teeny_artifact *a, teeny_module **out, char *err,
                      size_t errsz);
/* Load a compile result: its cubin when teeny_cubin_usable says it is for
 * this device (cuModuleLoadDataEx of the SASS: no JIT), else — or when the
 * driver refuses it — its PTX, as teeny_module_load.  A cubin for another
 * GPU is never given to the driver.  Returns as teeny_module_load. */
int teeny_module_load_result(const teeny_client_result *r, teeny_module **out,
                             char *err, size_t errsz);
/* How m was loaded: "cubin", "ptx", or "ptx (the cubin was refused: ...)". */
const char *teeny_module_origin(const teeny_module *m);
/* May cubin[0..len), which the reply says is for cubin_arch, be loaded on
 * a device of device_arch?  Only when both names agree and the cubin's ELF
 * header (EM_CUDA, its SM) says the same; else false with why (may be
 * NULL) saying which check failed. */
bool teeny_cubin_usable(const char *cubin, size_t len, const char *cubin_arch,
                        const char *device_arch, char *why, size_t whysz);
/* cuModuleUnload; NULL is a no-op. */
void teeny_module_unload(teeny_module *m);
/* Launch grid[0] x grid[1] x grid[2] programs (0 counts as 1) of
 * threads_per_block threads with shared_bytes of dynamic shared memory on
 * stream (a CUstream; NULL: the default stream).  args has one pointer per
 * kernel parameter, as for cuLaunchKernel.  Asynchronous: errors of the
 * kernel itself show up at the next synchronisation. */
int teeny_launch(teeny_module *m, const unsigned grid[3], void *stream,
                 void **args, char *err, size_t errsz);

/* ---- tensor descriptors: the arguments of a tensor_desc kernel parameter ---- */

/* A kernel parameter tensor_desc(T, B0, .., B[r-1]) takes 1 + 2r launch
 * arguments (the entry point's parameters NAME_tensormap, NAME_base,
 * NAME_shape<k>, NAME_stride<k>): a CUtensorMap by value, the tensor's
 * base, its r shapes (int32_t) and the strides of dims 0 .. r-2 (int64_t,
 * in elements; the last dim is contiguous).  teeny_tensor_desc holds them
 * all; teeny_tensor_desc_args points the launch's argument array at them.
 * On sm_90 and later the kernel reads its blocks through the Tensor Memory
 * Accelerator where the tensor allows it (strides 16-byte aligned, rows no shorter than the next dim, box dims <= 256 with rows of
 * a multiple of 16 bytes): there, and only there, the tensormap is encoded;
 * elsewhere it stays zero and the kernel uses plain loads (it makes the
 * same test itself).  block must be the kernel parameter's block shape:
 * the TMA copies the tensormap's box. */
#define TEENY_TENSOR_DESC_MAX_RANK 4
typedef struct __attribute__((aligned(64))) teeny_tensormap {
  uint64_t opaque[16]; /* CUtensorMap: 128 bytes, 64-aligned */
} teeny_tensormap;

typedef struct teeny_tensor_desc {
  teeny_tensormap map;                        /* NAME_tensormap */
  teeny_dptr base;                            /* NAME_base */
  int32_t shape[TEENY_TENSOR_DESC_MAX_RANK];  /* NAME_shape<k> */
  int64_t stride[TEENY_TENSOR_DESC_MAX_RANK]; /* NAME_stride<k>, elements; [rank-1] is 1 */
  int rank;
  bool tma;                                   /* the tensormap is encoded */
} teeny_tensor_desc;

/* Describe the rank-dim tensor of dtype dt at base (shape, strides in
 * elements, strides[rank-1] == 1) read and written in blocks of block.
 * Returns 0, TEENY_E_INVAL (rank outside 1..4, bool, a last stride other
 * than 1, a block dim not a power of two, a shape outside 0..2^31-1, a
 * base not 16-byte aligned: kernels assume it of every pointer), or
 * where the TMA can take the tensor TEENY_E_NOCUDA / TEENY_E_CUDA (no
 * driver, a driver without cuTensorMapEncodeTiled, or one that refused). */
int teeny_tensor_desc_make(teeny_tensor_desc *d, teeny_dtype dt, teeny_dptr base, int rank,
                           const int64_t *shape, const int64_t *strides, const int *block,
                           char *err, size_t errsz);
/* Point args[0 .. 1 + 2 x rank) at d's launch arguments (d must outlive
 * the launch call); returns how many. */
size_t teeny_tensor_desc_args(teeny_tensor_desc *d, void **args);

/* Device memory and synchronisation, for apps and tests. */
int teeny_cuda_alloc(teeny_dptr *p, size_t bytes, char *err, size_t errsz);
void teeny_cuda_free(teeny_dptr p); /* null is a no-op */
int teeny_cuda_to_device(teeny_dptr dst, const void *src, size_t bytes,
                         char *err, size_t errsz);
int teeny_cuda_to_host(void *dst, teeny_dptr src, size_t bytes, char *err,
                       size_t errsz);
int teeny_cuda_memset(teeny_dptr dst, unsigned char byte, size_t bytes,
                      char *err, size_t errsz);
/* Wait for all work on the current context (cuCtxSynchronize). */
int teeny_cuda_sync(char *err, size_t errsz);

/* ---- autotuning: one tuning run per node (client/tune.c) ------------------- */

/* One candidate configuration: consts bound on top of the base request's
 * (same names replace), and num_warps (0: the base request's).  Request
 * options travel as consts too, so num_stages is tuned by naming it:
 * {TEENY_OPT_NUM_STAGES, 3} among a configuration's consts. */
typedef struct teeny_tune_config {
  const teeny_const_binding *consts; /* tuned consts */
  size_t nconsts;                    /* how many */
  int num_warps;                     /* 0: the base request's */
} teeny_tune_config;

/* What a timer is given for one candidate. */
typedef struct teeny_tune_bench {
  const teeny_client_result *result; /* the candidate, compiled (cubin too
                                        when teenycd has one) */
  const teeny_tune_config *config;   /* which configuration it is */
  size_t index;                      /* its index in the request */
  teeny_grid grid;                   /* its launch grid */
  void *stream;                      /* the caller's stream */
  void **args;                       /* the launch arguments */
  size_t nargs;                      /* how many */
  int warmup_ms, rep_ms;             /* as in the request */
} teeny_tune_bench;

/* Time one candidate: its median time in *ms.  0, or an error with err
 * (the candidate is then left out).  The default, teeny_tune_time_cuda,
 * does what triton.testing.do_bench does on the caller's stream: load the
 * module (cubin or PTX), launch once, estimate the time of one launch from
 * five, run warmup_ms worth of launches, then rep_ms worth, each after
 * clearing the L2 cache (a 256 MiB memset) and between two CUDA events,
 * and take the median. */
typedef int (*teeny_tune_timer)(void *ctx, const teeny_tune_bench *b, double *ms,
                                char *err, size_t errsz);
int teeny_tune_time_cuda(void *ctx, const teeny_tune_bench *b, double *ms, char *err,
                         size_t errsz);

/* The launch grid of a configuration into *out (consts decide it:
 * cdiv(n, BLOCK)). */
typedef void (*teeny_tune_grid_fn)(void *ctx, const teeny_tune_config *c,
                                   teeny_grid *out);

typedef struct teeny_tune_req {
  const teeny_compile_req *base;     /* kernel, source, dtype bindings,
                                        target; consts that are not tuned */
  const teeny_tune_config *configs;  /* the candidates */
  size_t nconfigs;                   /* how many (>= 1) */
  const char *problem;               /* the problem key: the sizes that
                                        decide the choice ("M=4096 N=4096") */
  teeny_tune_grid_fn grid;           /* the grid of a configuration */
  void *grid_ctx;                    /* its argument */
  void **args;                       /* launch arguments (as teeny_launch) */
  size_t nargs;                      /* how many */
  void *stream;                      /* the caller's stream; NULL: default */
  int warmup_ms, rep_ms;             /* 0: 25 and 100, as do_bench */
  int wait_ms;                       /* how long to wait on another
                                        process's tuning; 0: the daemon's
                                        --tune-timeout */
  teeny_tune_timer timer;            /* NULL: teeny_tune_time_cuda */
  void *timer_ctx;                   /* its argument */
  const char *gpu;                   /* NULL: the device's name */
  const char *driver;                /* NULL: the driver's version */
} teeny_tune_req;

/* How the winner was found. */
typedef enum teeny_tune_source {
  TEENY_TUNE_TUNED = 0, /* timed here and recorded in teenycd */
  TEENY_TUNE_RECORDED,  /* teenycd had a record: nothing timed */
  TEENY_TUNE_JOINED,    /* another process was tuning it: waited for it */
  TEENY_TUNE_LOCAL      /* timed here, not recorded (no daemon, an old one,
                           or another process's tuning timed out) */
} teeny_tune_source;

typedef struct teeny_tune_result {
  int status;                 /* 0 or the negative teeny_err */
  const char *error;          /* status < 0: one line */
  size_t index;               /* the winner in the request's configs, or
                                 SIZE_MAX when it is not among them (a
                                 record made from another list) */
  teeny_tune_config config;   /* the winner (owned by the result) */
  double best_ms;             /* its median time */
  uint32_t candidates;        /* configurations timed */
  teeny_tune_source source;   /* see above */
  const double *times_ms;     /* tuned or local: each configuration's
                                 median (NAN where it failed); else NULL */
  double lookup_ms;           /* the round trips to teenycd (waiting
                                 included) */
} teeny_tune_result;

/* Autotune req's kernel for req->problem on this GPU, once per node: ask
 * teenycd for the record of (kernel digest, problem, GPU name, driver);
 * if there is one, return it (one round trip, nothing timed); if another
 * process is tuning that key, wait for its winner (up to wait_ms); else
 * compile every configuration through c (cached like any compile), time
 * each with the timer, tell teenycd the winner and return it.  Without a
 * daemon it tunes in process and records nothing.  The candidates are
 * launched with the caller's arguments, so they must tolerate being run
 * many times (outputs are overwritten).  Returns 0 with *out (free with
 * teeny_tune_result_free); or an error: TEENY_E_INVAL (no configs, no
 * problem key, a NULL grid), TEENY_E_NOCUDA (no GPU to name or time on),
 * TEENY_E_COMPILE and friends (no configuration compiled), TEENY_E_CUDA
 * (none could be timed) — with *out carrying status and error when it
 * could be allocated.  c's lock is held while it waits on another process. */
int teeny_client_tune(teeny_client *c, const teeny_tune_req *req,
                      teeny_tune_result **out);
void teeny_tune_result_free(teeny_tune_result *r); /* NULL is a no-op */
/* The digest tuning records are keyed by: sha256 over the kernel name,
 * its source and its dtype bindings (sorted by name), as 64 hex digits.
 * Consts and num_warps are not in it: they are what is tuned. */
int teeny_tune_digest(const teeny_compile_req *base, char out[65]);
/* "tuned", "recorded", "joined", "local". */
const char *teeny_tune_source_name(teeny_tune_source s);

/* ---- typed kernels: the runtime under teenyc-gen's generated code ---------- */

#define TEENY_KERNEL_MAX_GENERICS 32
#define TEENY_KERNEL_ERR_LEN 512

/* One specialisation of one kernel.  Generated code embeds it as `base`
 * in each typed kernel struct and fills req and the bindings; apps use the
 * typed wrappers (name_init, name_compile, name_launch, name_close). */
typedef struct teeny_kernel {
  teeny_compile_req req;  /* source, filename, kernel, bindings, target */
  teeny_dtype_binding dtypes[TEENY_KERNEL_MAX_GENERICS]; /* req.dtypes */
  teeny_const_binding consts[TEENY_KERNEL_MAX_GENERICS]; /* req.consts */
  char *id;               /* name__dtypes__consts (teeny_kernel_prepare) */
  char key[65];           /* cache key of the generated source */
  char *source;           /* the generated source */
  const char *entry_point_source; /* its generated entry point (in source) */
  teeny_client_result *result;    /* after teeny_kernel_compile */
  teeny_module *module;   /* loaded at the first launch */
  char err[TEENY_KERNEL_ERR_LEN]; /* the last failure, one line */
} teeny_kernel;

/* Check k's bindings against the kernel and compute id, key, source and
 * entry_point_source (teeny_spec_create: microseconds, no compile).
 * Returns 0 or a teeny_err with k->err set (e.g. a dtype outside the
 * kernel's list). */
int teeny_kernel_prepare(teeny_kernel *k);
/* Change target (NULL: default) and num_warps (0: default), then prepare
 * again. */
int teeny_kernel_set_options(teeny_kernel *k, const char *target,
                             int num_warps);
/* Compile k through c (PTX); on failure k->err has the message and the
 * first diagnostic.  A second call is a no-op once compiled. */
int teeny_kernel_compile(teeny_kernel *k, teeny_client *c);
/* Launch the compiled kernel (loading its module at the first call);
 * nargs must be its parameter count.  TEENY_E_INVAL if not compiled. */
int teeny_kernel_launch(teeny_kernel *k, teeny_grid grid, void *stream,
                        void **args, size_t nargs);
/* Free what k owns (result, module, strings); k may be prepared again. */
void teeny_kernel_close(teeny_kernel *k);

/* Storage for a scalar argument whose dtype is a generic: the value is
 * converted to dt when the launch packs it. */
typedef union teeny_scalar_slot {
  int8_t i8; int16_t i16; int32_t i32; int64_t i64;
  uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
  float f32; double f64; uint16_t half; bool b;
} teeny_scalar_slot;
/* Convert v to dt into s (f16/bf16 rounded to nearest even, fp8 as the
 * language converts: nearest even, saturating) and return a pointer to it
 * for the launch's argument array. */
void *teeny_scalar_pack(teeny_scalar_slot *s, teeny_dtype dt, double v);

#ifdef __cplusplus
}
#endif
#endif /* TEENY_CLIENT_H */
