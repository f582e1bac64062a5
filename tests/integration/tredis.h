/*
 * tests/integration/tredis.h — a real redis-server for a test: started on
 * a Unix socket in a temporary directory with persistence off, stopped or
 * killed by the test; direct commands through hiredis (to look at, corrupt
 * or replace entries); and a silent listener that accepts and never
 * answers.  Tests skip, with a message, where redis-server is absent.
 */
#ifndef TEENY_TESTS_TREDIS_H
#define TEENY_TESTS_TREDIS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct tredis {
  pid_t pid;       /* running redis-server, or 0 */
  char dir[128];   /* mkdtemp directory */
  char sock[160];  /* dir/redis.sock */
  char url[180];   /* unix://dir/redis.sock */
} tredis;

/* Is redis-server on the PATH?  (false: print why, and skip.) */
bool tr_available(void);
/* Make the directory and start redis-server; wait until it answers PING.
 * 0 or -1 (its log printed). */
int tr_start(tredis *r);
/* SIGKILL it (mid-storm) and reap it. */
void tr_kill(tredis *r);
/* Stop it if running and remove the directory. */
void tr_fini(tredis *r);

/* One command (printf-style, as redisCommand) on a new connection: the
 * reply's integer, or the length of a string reply, or -1 on an error
 * reply or failure; *str (if non-NULL) gets a malloc'ed copy of a string
 * reply (free it) and *len its length. */
long long tr_cmd(const tredis *r, char **str, size_t *len, const char *fmt, ...);
/* The keys that match pattern, as one malloc'ed string of lines (free). */
char *tr_keys(const tredis *r, const char *pattern, int *n);

/* A listener that accepts connections and never answers (and never
 * closes them), on dir/silent.sock. */
typedef struct tsilent {
  int fd;            /* the listener */
  int conns[64];     /* accepted, held open */
  int nconns;        /* how many */
  bool stop;         /* ask the thread to end */
  pthread_t thread;  /* accept loop */
  char path[200];    /* its socket */
  char url[220];     /* unix://path */
} tsilent;
int ts_start(tsilent *s, const char *dir);
void ts_stop(tsilent *s);

#endif /* TEENY_TESTS_TREDIS_H */
