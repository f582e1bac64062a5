/*
 * common/common.h — helpers every part of teenyc links: arenas, growable
 * buffers, SHA-256, and the diagnostics list.
 *
 * Names: teeny__ marks functions internal to the project (not in
 * include/teeny/).  None of these keep global state.
 *
 * Memory policy (docs/architecture.md): a compile job allocates its AST, IR
 * and scratch strings from one arena and frees it at the end.  An arena
 * whose `oom` jump buffer is set longjmp()s there when malloc fails, so
 * compiler stages need not check every node allocation; the public entry
 * point that set the buffer turns the jump into TEENY_E_NOMEM.
 */
#ifndef TEENY_COMMON_H
#define TEENY_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "teeny/compile.h"
#include "teeny/error.h"

#define TEENY_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The system daemon's socket and store (systemd/teenycd.socket and
 * teenycd.service name the same paths). */
#define TEENY_SYSTEM_SOCKET "/run/teenycd/teenycd.sock"
#define TEENY_SYSTEM_STORE "/var/cache/teenyc"

#if defined(__GNUC__)
#define TEENY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TEENY_PRINTF(f, a)
#endif

/* TEENY_ASAN is 1 in a build with AddressSanitizer, which reserves
 * terabytes of address space: address-space limits cannot apply there. */
#if defined(__SANITIZE_ADDRESS__)
#define TEENY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEENY_ASAN 1
#endif
#endif
#ifndef TEENY_ASAN
#define TEENY_ASAN 0
#endif

/* ---- allocation (one wrapper, so tests can make it fail) ---------------- */

void *teeny__malloc(size_t n);
void *teeny__calloc(size_t n, size_t size);
void *teeny__realloc(void *p, size_t n);
void teeny__free(void *p);
char *teeny__strdup(const char *s);
char *teeny__strndup(const char *s, size_t n);
/* Test hook: after n more successful allocations on this thread, every
 * allocation fails; -1 turns failure off. */
void teeny__alloc_fail_after(long n);

/* ---- arenas ---------------------------------------------------------------- */

typedef struct teeny_arena_chunk teeny_arena_chunk;

typedef struct teeny_arena {
  teeny_arena_chunk *head; /* newest chunk first */
  size_t total;            /* bytes obtained from malloc so far */
  size_t limit;            /* 0: none; else allocations past it fail */
  jmp_buf *oom;            /* if set, failure longjmps here with 1 */
} teeny_arena;

void teeny__arena_init(teeny_arena *a);
void teeny__arena_free(teeny_arena *a); /* frees every chunk; a reusable */
/* Zeroed memory, 16-byte aligned.  On failure: longjmp(*oom) if set, else
 * NULL. */
void *teeny__arena_alloc(teeny_arena *a, size_t n);
void *teeny__arena_realloc(teeny_arena *a, void *old, size_t oldn, size_t n);
char *teeny__arena_strndup(teeny_arena *a, const char *s, size_t n);
char *teeny__arena_strdup(teeny_arena *a, const char *s);
char *teeny__arena_printf(teeny_arena *a, const char *fmt, ...) TEENY_PRINTF(2, 3);

/* ---- growable byte buffers (malloc-backed) ----------------------------------- */

typedef struct teeny_buf {
  char *p;    /* NUL-terminated when non-NULL */
  size_t len; /* bytes used, excluding the NUL */
  size_t cap; /* bytes allocated */
  bool oom;   /* set once any append failed; further appends do nothing */
} teeny_buf;

void teeny__buf_init(teeny_buf *b);
void teeny__buf_free(teeny_buf *b);
void teeny__buf_append(teeny_buf *b, const void *data, size_t n);
/* Make b's capacity at least cap bytes, exactly cap if it grows (so a
 * caller that accounts for memory controls each step).  False (and b->oom
 * set) when out of memory. */
bool teeny__buf_reserve(teeny_buf *b, size_t cap);
void teeny__buf_puts(teeny_buf *b, const char *s);
void teeny__buf_putc(teeny_buf *b, char c);
void teeny__buf_printf(teeny_buf *b, const char *fmt, ...) TEENY_PRINTF(2, 3);
void teeny__buf_vprintf(teeny_buf *b, const char *fmt, va_list ap);
/* Hand the string to the caller (who frees it with teeny__free); b is reset.
 * Returns NULL if any append failed. */
char *teeny__buf_take(teeny_buf *b, size_t *len);

/* ---- SHA-256 (OpenSSL EVP) ------------------------------------------------------ */

#define TEENY_SHA256_HEX_LEN 64
/* hex gets 64 lowercase hex digits and a NUL.  Returns 0 or TEENY_E_INTERNAL. */
int teeny__sha256_hex(const void *data, size_t len, char hex[65]);

/* ---- dtype classes (dtype.c) --------------------------------------------------- */

bool teeny__dt_is_int(teeny_dtype dt);    /* i8..u64 (not bool) */
bool teeny__dt_is_signed(teeny_dtype dt); /* i8..i64 */
bool teeny__dt_is_float(teeny_dtype dt);  /* f8e4m3, f8e5m2, f16, bf16, f32, f64 */
bool teeny__dt_is_fp8(teeny_dtype dt);    /* f8e4m3, f8e5m2 (fp8.c) */
int teeny__dt_bits(teeny_dtype dt);       /* bool: 1; ptr: 64; void: 0 */
/* x rounded to float dtype dt (f16, bf16, f32: nearest-even, overflow to
 * inf); other dtypes return x.  (fpround.c) */
double teeny__round_dtype(teeny_dtype dt, double x);
/* fma(a, b, c) of values of float dtype dt, rounded once to dt as the GPU's
 * fma.rn.f16/.bf16/.f32/.f64 do (fp8: in f32, then rounded).  (fpround.c) */
double teeny__fma_dtype(teeny_dtype dt, double a, double b, double c);

/* ---- 8-bit floats (fp8.c) ------------------------------------------------------- */

/* The value of fp8 bits (NaN and, for e5m2, infinities included). */
double teeny__fp8_value(teeny_dtype dt, uint8_t bits);
/* x rounded to fp8 dtype dt: through f32, nearest-even, saturating to the
 * largest finite value (infinities too); NaN stays NaN. */
uint8_t teeny__fp8_bits(teeny_dtype dt, double x);
double teeny__fp8_round(teeny_dtype dt, double x);
/* The largest finite value: 448 (e4m3), 57344 (e5m2). */
double teeny__fp8_max(teeny_dtype dt);

/* ---- diagnostics helpers ---------------------------------------------------------- */

/* Add a diagnostic whose source line is cut out of text at line (1-based).
 * Any of diags/text may be NULL. */
int teeny__diags_addf_at(teeny_diags *diags, teeny_diag_level level,
                         const char *file, const char *text, size_t text_len,
                         int line, int col, const char *fmt, ...) TEENY_PRINTF(8, 9);

/* Time in nanoseconds from CLOCK_MONOTONIC. */
uint64_t teeny__now_ns(void);

/* ---- users and groups (ids.c) --------------------------------------------------- */

/* The name of user u / group g into out ("1234" when it has none). */
void teeny__user_name(uid_t u, char *out, size_t size);
void teeny__group_name(gid_t g, char *out, size_t size);
/* Is user u in group g (its primary group, or a listed member)?  False
 * when the system does not know u or g. */
bool teeny__user_in_group(uid_t u, gid_t g);

/* ---- GPU architectures and cubins (arch.c) -------------------------------------- */

/* The number of "sm_90a" (90) and its suffix ('a', 'f' or '\0'); -1 when
 * arch is not "sm_" + 2 or 3 digits + an optional 'a' or 'f'. */
int teeny__arch_parse(const char *arch, char *suffix);
/* The SASS target for PTX compiled for ptx_target on a GPU named arch
 * ("sm_90", no suffix): ptx_target itself when arch-specific and the same
 * number, else "sm_<arch's number>" when arch >= ptx_target; false (out
 * untouched) when that GPU cannot run that PTX. */
bool teeny__sass_target(const char *ptx_target, const char *arch, char *out,
                        size_t n);
/* The SM number a cubin's ELF header names (90 for sm_90 and sm_90a), or
 * -1 when data is not a CUDA ELF. */
int teeny__cubin_sm(const void *data, size_t len);
/* The NVIDIA kernel driver's version ("580.65.06") from
 * /proc/driver/nvidia/version; false where there is none. */
bool teeny__driver_version(char *out, size_t n);

/* ---- parameter lists (param.c) ----------------------------------------------- */

/* An owned deep copy of v[0..n) (n + 1 entries, the last zeroed), or NULL
 * when out of memory. */
teeny_param *teeny__params_dup(const teeny_param *v, size_t n);
/* Free a copy of n entries (NULL is a no-op). */
void teeny__params_free(teeny_param *p, size_t n);

#endif /* TEENY_COMMON_H */
