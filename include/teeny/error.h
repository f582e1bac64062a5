/*
 * teeny/error.h — the one numbered error enum of teenyc.
 *
 * Every library function that can fail returns a teeny_err: 0 is success,
 * errors are negative.  The numbers are stable: they travel in protocol
 * replies (proto/PROTOCOL.md) and are never renumbered; new codes are added
 * at the end.  Detail goes into a caller's message buffer or diagnostics list;
 * teeny_strerror() names the class.
 */
#ifndef TEENY_ERROR_H
#define TEENY_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* XX(NAME, number, message) */
#define TEENY_ERRNO_MAP(XX)                                                   \
  XX(OK, 0, "success")                                                        \
  XX(NOMEM, -1, "out of memory")                                              \
  XX(INVAL, -2, "invalid argument")                                           \
  XX(COMPILE, -3, "kernel source has errors (see diagnostics)")              \
  XX(BINDING, -4, "bad dtype or const binding (see diagnostics)")            \
  XX(LIMIT, -5, "a size or resource limit was exceeded")                      \
  XX(IO, -6, "input/output error")                                            \
  XX(NOSPC, -7, "no space left on device")                                    \
  XX(NOTFOUND, -8, "not found")                                               \
  XX(AMBIGUOUS, -9, "ambiguous prefix")                                       \
  XX(PERM, -10, "permission denied")                                          \
  XX(PROTO, -11, "protocol error")                                            \
  XX(VERSION, -12, "unsupported protocol version")                            \
  XX(TOOBIG, -13, "message too large")                                        \
  XX(CONNECT, -14, "cannot reach the daemon")                                 \
  XX(CLOSED, -15, "connection closed")                                        \
  XX(BUSY, -16, "resource busy")                                              \
  XX(TIMEOUT, -17, "timed out")                                               \
  XX(CANCELLED, -18, "cancelled")                                             \
  XX(LLVM, -19, "LLVM code generation failed")                                \
  XX(STORE, -20, "cache store error")                                         \
  XX(CORRUPT, -21, "corrupt data")                                            \
  XX(NAME, -22, "invalid kernel name")                                        \
  XX(RUNTIME, -23, "kernel runtime error (interpreter or emulator)")          \
  XX(NOCUDA, -24, "CUDA driver not available")                                \
  XX(CUDA, -25, "CUDA driver error")                                          \
  XX(UNSUPPORTED, -26, "not supported")                                       \
  XX(SHUTDOWN, -27, "daemon is shutting down")                                \
  XX(INTERNAL, -28, "internal error")

typedef enum teeny_err {
#define TEENY__ERR_ENUM(name, num, msg) TEENY_E_##name = num,
  TEENY_ERRNO_MAP(TEENY__ERR_ENUM)
#undef TEENY__ERR_ENUM
  TEENY_E__LAST = -29 /* never use: one below the last code */
} teeny_err;

#define TEENY_OK TEENY_E_OK

/* A static message for err ("unknown error" for numbers not in the map). */
const char *teeny_strerror(int err);
/* The symbolic name without prefix, e.g. "NOMEM"; "UNKNOWN" if unmapped. */
const char *teeny_err_name(int err);

#ifdef __cplusplus
}
#endif
#endif /* TEENY_ERROR_H */
