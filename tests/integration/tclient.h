/*
 * tests/integration/tclient.h — a small blocking client of teenycd for the
 * integration tests and bench/daemon, built on teeny_proto, plus the
 * harness that starts and stops the real teenycd binary.
 *
 * The client speaks frames over a blocking Unix socket: send a request
 * (ids are assigned when 0), receive the next reply (any id, for the
 * pipelining tests) or call (send, then wait for that id).  It also sends
 * raw bytes, so tests can send malformed frames.  The harness runs teenycd
 * from $TEENYCD_BIN on a socket and store inside a mkdtemp directory, with
 * its log in that directory (printed when a test fails).
 */
#ifndef TEENY_TESTS_TCLIENT_H
#define TEENY_TESTS_TCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/frame.h"
#include "proto/msg.h"

/* ---- the client ------------------------------------------------------------ */

typedef struct tclient {
  int fd;                 /* the socket, -1 when closed */
  teeny_frame_reader rd;  /* frames in */
  char buf[256 * 1024];   /* read buffer (fed to rd) */
  char *payload;          /* the last frame received (owned copy) */
  size_t plen;            /* its length */
  size_t pcap;            /* allocated */
  uint64_t next_id;       /* next id to assign */
  teeny_buf out;          /* encode buffer */
} tclient;

/* A closed client (tc_close is then a no-op). */
void tc_init(tclient *c);
/* Connect (no hello).  0 or -1 (errno set). */
int tc_connect(tclient *c, const char *path);
/* Connect and complete hello.  0 or a negative status. */
int tc_open(tclient *c, const char *path);
void tc_close(tclient *c);

/* Write n raw bytes.  0 or -1. */
int tc_send_raw(tclient *c, const void *p, size_t n);
/* Encode and send req (req->id 0: the next id is assigned and stored).
 * 0 or a negative teeny_err. */
int tc_send(tclient *c, teeny_msg_request *req);
/* The next frame's payload (valid until the next receive).  0,
 * TEENY_E_CLOSED (peer closed), TEENY_E_TIMEOUT, or a framing error. */
int tc_recv_frame(tclient *c, int timeout_ms, const char **p, size_t *n);
/* The next reply, decoded as an answer to op.  0 (free rep with
 * teeny_msg_reply_free) or an error as above / from the decoder. */
int tc_recv(tclient *c, teeny_proto_op op, teeny_msg_reply *rep,
            int timeout_ms);
/* Send req, then receive replies until the one with its id.  0 or an
 * error; rep->status is the server's status. */
int tc_call(tclient *c, teeny_msg_request *req, teeny_msg_reply *rep);
/* tc_call waiting at most timeout_ms for each frame (tc_call: 60 s). */
int tc_call_timeout(tclient *c, teeny_msg_request *req, teeny_msg_reply *rep,
                    int timeout_ms);
/* True when the server closed the connection within timeout_ms (pending
 * frames are skipped). */
bool tc_closed(tclient *c, int timeout_ms);

/* A compile request over borrowed pointers.  bindings: "D=f32",
 * "BLOCK_SIZE=1024" style, NULL-terminated; dtype or const is decided by
 * whether the value starts with a digit or '-'. */
typedef struct tc_compile {
  teeny_msg_request req;              /* op compile */
  teeny_dtype_binding dtypes[16];     /* storage */
  teeny_const_binding consts[16];     /* storage */
  char names[32][64];                 /* binding names */
  char values[16][16];                /* dtype values */
} tc_compile;
void tc_compile_init(tc_compile *t, const char *source, size_t len,
                     const char *kernel, const char *const *bindings);

/* Convenience ops: 0 and *out filled, or a negative status. */
int tc_stats(tclient *c, teeny_msg_stats_reply *out);
int tc_ping(tclient *c);
/* The status of a received reply, its error text copied to err (n bytes);
 * the reply is freed. */
int tc_reply_status(teeny_msg_reply *rep, char *err, size_t n);
/* verify (with repair as asked) over c: the problems found, each printed
 * to stderr, or -1 when the call fails. */
int tc_verify(tclient *c, bool repair);
/* verify over a new connection to sock (-1 if it cannot connect). */
int tc_verify_at(const char *sock, bool repair);

/* ---- files ----------------------------------------------------------------- */

/* Read a whole file (NUL-terminated, free()).  NULL on error. */
char *tc_read_file(const char *path, size_t *len);
/* $TEENY_SOURCE_DIR/examples/kernels/NAME.c */
char *tc_kernel_source(const char *name, size_t *len);
/* Monotonic microseconds. */
uint64_t tc_now_us(void);

/* ---- the daemon ------------------------------------------------------------ */

typedef struct tdaemon {
  pid_t pid;          /* running teenycd, or 0 */
  char dir[128];      /* mkdtemp directory */
  char sock[160];     /* dir/s.sock */
  char cache[160];    /* dir/cache */
  char log[160];      /* dir/teenycd.log */
  uid_t run_uid;      /* run teenycd as this user (0: as we are) */
  gid_t run_gid;      /* ... and group */
} tdaemon;

/* Make the temp directory (under $TMPDIR or /tmp).  0 or -1. */
int td_init(tdaemon *d);
/* Start teenycd --socket --cache-dir --log-file, then args (NULL-ended,
 * may be NULL), with extra environment entries env (NULL-ended, may be
 * NULL); wait until the socket answers.  0 or -1 (the log is printed). */
int td_start(tdaemon *d, const char *const *args, const char *const *env);
/* Start without waiting (for tests that expect it to fail or that wait
 * themselves).  The pid, or -1. */
pid_t td_spawn(tdaemon *d, const char *const *args, const char *const *env,
               int fd3);
/* SIGTERM and wait: the exit status (as from waitpid), or -1. */
int td_stop(tdaemon *d);
/* SIGKILL and reap. */
void td_kill(tdaemon *d);
/* Wait for pid to exit within timeout_ms: its raw wait status, or -1. */
int td_wait(pid_t pid, int timeout_ms);
/* Stop it if running (an unclean exit is a failure), print the log if
 * failed, remove the directory.  Returns whether the test failed. */
bool td_fini(tdaemon *d, bool failed);
/* Print the daemon's log to stderr. */
void td_dump_log(const tdaemon *d);

#endif /* TEENY_TESTS_TCLIENT_H */
