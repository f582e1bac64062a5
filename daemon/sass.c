/*
 * daemon/sass.c — the SASS lane (see sass.h): a queue the loop fills, one
 * thread that empties it, and a uv_async that brings each result back.
 *
 * Locking: mu guards the queue, the job running, the done list, the
 * failed ring and the driver's toolchain and architecture (which the loop
 * reads in teeny__sass_outdated).  The driver helper is first tried at the
 * first job, not at start-up: a daemon whose clients never name a GPU
 * never starts one.  Until then a stored ptxas cubin is wanted anyway, and
 * the job, once the driver is known, does nothing if it is good enough.  The store handle, the ptxas and the
 * driver helper belong to the thread.  Jobs are deduplicated against the
 * queue and the running job by a linear scan (the queue holds at most
 * SASS_QUEUE_MAX), and against the failed ring the same way: wants come
 * only from store hits and compiles, never from memory hits.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "daemon/sass.h"

#define SASS_QUEUE_MAX 1024  /* jobs waiting; more are dropped (asked again later) */
#define SASS_FAILED_MAX 1024 /* (key, arch) pairs not to try again */
#define SASS_IDLE_MS 5000    /* close the driver helper after this long idle */

typedef struct job {
  struct job *next;                     /* queue order */
  char key[TEENY_STORE_KEY_LEN + 1];    /* the entry */
  char arch[TEENY_STORE_ARCH_MAX + 1];  /* the GPU */
  char target[TEENY_STORE_ARCH_MAX + 1];/* the SASS target (ptxas -arch) */
  char *ptx;                            /* the PTX, or NULL: from the store */
  size_t ptx_len;                       /* its bytes */
} job;

typedef struct pair {
  char key[TEENY_STORE_KEY_LEN + 1];
  char arch[TEENY_STORE_ARCH_MAX + 1];
} pair;

struct teeny_sass {
  teeny_sass_opts o;           /* options (exe and ptxas are ours below) */
  char *exe;                   /* owned copy */
  teeny_store *st;             /* the lane's handle */
  teeny_ptxas ptxas;           /* found at create */
  bool have_ptxas;             /* ptxas is usable */
  teeny_jit *jit;              /* the driver helper */
  bool driver_failed;          /* its hello failed: no driver or GPU */
  bool driver_known;           /* the helper was tried (mu) */
  pthread_t thread;            /* the lane */
  bool started;                /* thread runs */
  pthread_mutex_t mu;          /* see the top of the file */
  pthread_cond_t cv;           /* work arrived, or stop */
  job *head, *tail;            /* the queue (mu) */
  size_t nqueued;              /* its length (mu) */
  job *running;                /* the job being made (mu) */
  teeny_sass_done *done;       /* results for the loop (mu) */
  size_t ndone, done_cap;
  pair failed[SASS_FAILED_MAX];/* ring of failures (mu) */
  size_t nfailed;              /* entries used */
  size_t failed_at;            /* next slot */
  char driver_tc[TEENY_SASS_TC_LEN]; /* the driver's toolchain, "" unknown (mu) */
  char driver_arch[16];        /* its GPU (mu) */
  atomic_bool stop;            /* teeny__sass_stop was called */
  uv_async_t async;            /* done results are waiting */
  bool async_open;             /* async is initialised and not closed */
  teeny_sass_counts counts;    /* loop side */
};

static const char *const mode_names[] = {"auto", "driver", "ptxas", "off"};

int teeny__sass_mode_parse(const char *s) {
  for (size_t i = 0; s && i < TEENY_ARRAY_LEN(mode_names); i++)
    if (strcmp(s, mode_names[i]) == 0)
      return (int)i;
  return -1;
}

const char *teeny__sass_mode_name(teeny_sass_mode m) {
  return (unsigned)m < TEENY_ARRAY_LEN(mode_names) ? mode_names[m] : "?";
}

static bool uses_driver(const teeny_sass *s) {
  return s->o.mode == TEENY_SASS_AUTO || s->o.mode == TEENY_SASS_DRIVER;
}

static bool uses_ptxas(const teeny_sass *s) {
  return s->have_ptxas && (s->o.mode == TEENY_SASS_AUTO || s->o.mode == TEENY_SASS_PTXAS);
}

/* ---- the loop side ---------------------------------------------------------------- */

static bool same(const char *key, const char *arch, const char *k2, const char *a2) {
  return memcmp(key, k2, TEENY_STORE_KEY_LEN) == 0 && strcmp(arch, a2) == 0;
}

/* mu held: is (key, arch) queued, running or failed? */
static bool known(const teeny_sass *s, const char *key, const char *arch) {
  if (s->running && same(key, arch, s->running->key, s->running->arch))
    return true;
  for (const job *j = s->head; j; j = j->next)
    if (same(key, arch, j->key, j->arch))
      return true;
  for (size_t i = 0; i < s->nfailed; i++)
    if (same(key, arch, s->failed[i].key, s->failed[i].arch))
      return true;
  return false;
}

static job *job_new(const char *key, const char *arch, const char *target,
                    const char *ptx, size_t len) {
  job *j = teeny__calloc(1, sizeof *j);
  if (!j)
    return NULL;
  snprintf(j->key, sizeof j->key, "%s", key);
  snprintf(j->arch, sizeof j->arch, "%s", arch);
  snprintf(j->target, sizeof j->target, "%s", target);
  if (ptx && !(j->ptx = teeny__malloc(len + 1))) {
    teeny__free(j);
    return NULL;
  }
  if (ptx) {
    memcpy(j->ptx, ptx, len);
    j->ptx[len] = '\0';
    j->ptx_len = len;
  }
  return j;
}

static void job_free(job *j) {
  if (j)
    teeny__free(j->ptx);
  teeny__free(j);
}

/* mu held: may a toolchain make cubins for arch (as far as we know)? */
static bool can_make(const teeny_sass *s, const char *arch) {
  bool driver = uses_driver(s) && !s->driver_failed &&
                (!s->driver_arch[0] || strcmp(s->driver_arch, arch) == 0);
  return driver || uses_ptxas(s);
}

void teeny__sass_want(teeny_sass *s, const char *key, const char *ptx_target,
                      const char *arch, const char *ptx, size_t ptx_len) {
  char target[TEENY_STORE_ARCH_MAX + 1];
  if (!s || s->o.mode == TEENY_SASS_OFF || atomic_load(&s->stop) ||
      teeny_store_key_check(key) || teeny_store_arch_check(arch) ||
      !teeny__sass_target(ptx_target, arch, target, sizeof target))
    return;
  pthread_mutex_lock(&s->mu);
  bool take = can_make(s, arch) && !known(s, key, arch) && s->nqueued < SASS_QUEUE_MAX;
  pthread_mutex_unlock(&s->mu);
  job *j = take ? job_new(key, arch, target, ptx, ptx_len) : NULL;
  if (!j)
    return;
  pthread_mutex_lock(&s->mu);
  if (known(s, key, arch)) { /* never: only the loop adds; kept for safety */
    pthread_mutex_unlock(&s->mu);
    job_free(j);
    return;
  }
  if (s->tail)
    s->tail->next = j;
  else
    s->head = j;
  s->tail = j;
  s->nqueued++;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* "driver" of "driver 580.65.06". */
static size_t kind_len(const char *tc) { return strcspn(tc, " "); }

bool teeny__sass_outdated(teeny_sass *s, const char *arch, const char *tc) {
  if (!s || !tc || s->o.mode == TEENY_SASS_OFF)
    return false;
  char cur[TEENY_SASS_TC_LEN] = "";
  pthread_mutex_lock(&s->mu);
  if (uses_driver(s) && s->driver_tc[0] && strcmp(s->driver_arch, arch) == 0)
    snprintf(cur, sizeof cur, "%s", s->driver_tc);
  pthread_mutex_unlock(&s->mu);
  if (!cur[0] && uses_ptxas(s))
    snprintf(cur, sizeof cur, "%s", s->ptxas.toolchain);
  if (!cur[0] || strcmp(cur, tc) == 0)
    return false;
  bool cur_driver = strncmp(cur, "driver", kind_len(cur)) == 0 && kind_len(cur) == 6;
  bool tc_driver = strncmp(tc, "driver", kind_len(tc)) == 0 && kind_len(tc) == 6;
  if (cur_driver != tc_driver)
    return cur_driver; /* the driver's replaces ptxas's, never the reverse */
  return true;         /* same kind, another version */
}

/* The driver may be used but was not tried yet: a stored ptxas cubin may
 * be the driver's to replace (the lane decides once it has tried). */
static bool driver_untried(teeny_sass *s) {
  if (!s || !uses_driver(s))
    return false;
  pthread_mutex_lock(&s->mu);
  bool untried = !s->driver_known;
  pthread_mutex_unlock(&s->mu);
  return untried;
}

int teeny__sass_lookup(teeny_sass *s, teeny_store *st, const char *key,
                       const char *ptx_target, const char *arch,
                       teeny_store_cubin *out, bool *want) {
  memset(out, 0, sizeof *out);
  *want = false;
  char target[TEENY_STORE_ARCH_MAX + 1];
  if (!arch || !teeny__sass_target(ptx_target, arch, target, sizeof target))
    return TEENY_E_NOTFOUND; /* that GPU cannot run this PTX at all */
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_cubin_get(st, key, arch, true, out, err);
  if (rc == TEENY_E_CORRUPT) { /* never served: dropped, made again */
    int rm = teeny_store_cubin_remove(st, key, arch, NULL);
    TEENY_LOGW(s ? s->o.log : NULL, "%s cubin of %.16s... failed its checks (%s); %s",
               arch, key, err, rm ? "could not remove it" : "removed");
  } else if (rc && rc != TEENY_E_NOTFOUND) {
    TEENY_LOGW(s ? s->o.log : NULL, "reading the %s cubin of %.16s...: %s", arch, key,
               err);
  }
  *want = rc != 0 || teeny__sass_outdated(s, arch, out->toolchain) ||
          (!rc && driver_untried(s) && strncmp(out->toolchain, "driver ", 7) != 0);
  return rc ? TEENY_E_NOTFOUND : 0;
}

void teeny__sass_counts(teeny_sass *s, teeny_sass_counts *out) {
  memset(out, 0, sizeof *out);
  if (!s)
    return;
  *out = s->counts;
  pthread_mutex_lock(&s->mu);
  out->queued = s->nqueued + (s->running != NULL);
  pthread_mutex_unlock(&s->mu);
}

static void on_async(uv_async_t *h) {
  teeny_sass *s = h->data;
  pthread_mutex_lock(&s->mu);
  teeny_sass_done *v = s->done;
  size_t n = s->ndone;
  s->done = NULL;
  s->ndone = s->done_cap = 0;
  pthread_mutex_unlock(&s->mu);
  for (size_t i = 0; i < n; i++) {
    s->counts.made += v[i].stored;
    s->counts.failed += !v[i].stored && !v[i].skipped;
    s->counts.ms_total += v[i].ms;
    if (s->o.done)
      s->o.done(s->o.ctx, &v[i]);
  }
  teeny__free(v);
}

/* ---- the lane's thread ------------------------------------------------------------- */

/* mu held: hand d to the loop. */
static void post_done(teeny_sass *s, const teeny_sass_done *d) {
  if (s->ndone == s->done_cap) {
    size_t cap = s->done_cap ? 2 * s->done_cap : 16;
    teeny_sass_done *nv = teeny__realloc(s->done, cap * sizeof *nv);
    if (!nv)
      return; /* the loop just does not hear of it: the store has it anyway */
    s->done = nv;
    s->done_cap = cap;
  }
  s->done[s->ndone++] = *d;
}

/* mu held: remember a failure (the oldest is forgotten when full). */
static void remember_failure(teeny_sass *s, const job *j) {
  pair *p = &s->failed[s->failed_at];
  snprintf(p->key, sizeof p->key, "%s", j->key);
  snprintf(p->arch, sizeof p->arch, "%s", j->arch);
  s->failed_at = (s->failed_at + 1) % SASS_FAILED_MAX;
  if (s->nfailed < SASS_FAILED_MAX)
    s->nfailed++;
}

/* Start the driver helper if it may be used and is not running. */
static void driver_start(teeny_sass *s) {
  if (!uses_driver(s) || s->driver_failed || teeny__jit_running(s->jit))
    return;
  char why[512] = "";
  int rc = teeny__jit_start(s->jit, s->o.timeout_ms, why, sizeof why);
  pthread_mutex_lock(&s->mu);
  s->driver_known = true;
  if (rc) {
    s->driver_failed = true;
    s->driver_tc[0] = s->driver_arch[0] = '\0';
  } else {
    snprintf(s->driver_tc, sizeof s->driver_tc, "%s", teeny__jit_toolchain(s->jit));
    snprintf(s->driver_arch, sizeof s->driver_arch, "%s", teeny__jit_arch(s->jit));
  }
  pthread_mutex_unlock(&s->mu);
  if (rc)
    TEENY_LOGI(s->o.log, "SASS: not using the driver's JIT (%s)%s", why,
               uses_ptxas(s) ? "; ptxas makes the cubins" : "");
}

/* The PTX of j: its own, or read (and checked) from the store. */
static int job_ptx(teeny_sass *s, job *j, char *why, size_t n) {
  if (j->ptx)
    return 0;
  teeny_store_rec r;
  char err[TEENY_STORE_ERR_LEN] = "";
  int rc = teeny_store_get(s->st, j->key, TEENY_STORE_GET_PTX | TEENY_STORE_GET_VERIFY,
                           &r, err);
  if (rc) {
    snprintf(why, n, "cannot read the PTX: %s", err);
    return rc;
  }
  j->ptx = r.ptx;
  j->ptx_len = r.ptx_size;
  r.ptx = NULL;
  teeny_store_rec_close(&r);
  return 0;
}

/* Make j's cubin with the best toolchain for its architecture. */
static int make_cubin(teeny_sass *s, job *j, char **cubin, size_t *len, char *tc,
                      char *why, size_t n) {
  bool driver = teeny__jit_running(s->jit) && strcmp(teeny__jit_arch(s->jit), j->arch) == 0;
  if (driver) {
    snprintf(tc, TEENY_SASS_TC_LEN, "%s", teeny__jit_toolchain(s->jit));
    return teeny__jit_run(s->jit, j->target, j->ptx, j->ptx_len, s->o.timeout_ms, cubin,
                          len, why, n);
  }
  if (!uses_ptxas(s)) {
    snprintf(why, n, "no toolchain for %s (--sass %s%s)", j->arch,
             teeny__sass_mode_name(s->o.mode),
             s->have_ptxas ? "" : "; no ptxas");
    return TEENY_E_UNSUPPORTED;
  }
  snprintf(tc, TEENY_SASS_TC_LEN, "%s", s->ptxas.toolchain);
  return teeny__ptxas_run(&s->ptxas, j->target, j->ptx, j->ptx_len, s->o.timeout_ms,
                          &s->stop, cubin, len, why, n);
}

/* Is a cubin as good as this lane would make stored already?  (A want
 * may come before the driver was tried.) */
static bool good_enough(teeny_sass *s, const job *j) {
  teeny_store_cubin c;
  if (teeny_store_cubin_get(s->st, j->key, j->arch, false, &c, NULL) != TEENY_OK)
    return false;
  bool fine = !teeny__sass_outdated(s, j->arch, c.toolchain);
  teeny_store_cubin_close(&c);
  return fine;
}

/* One job: make, check, store.  True when a cubin was stored; *skipped
 * when the stored one needs no replacing after all. */
static bool run_job(teeny_sass *s, job *j, double *ms, bool *skipped) {
  uint64_t t0 = teeny__now_ns();
  char why[640] = "", tc[TEENY_SASS_TC_LEN] = "", err[TEENY_STORE_ERR_LEN] = "";
  char *cubin = NULL;
  size_t len = 0;
  driver_start(s); /* on the first job: learn what the driver offers */
  if ((*skipped = good_enough(s, j)))
    return false;
  int rc = job_ptx(s, j, why, sizeof why);
  if (!rc)
    rc = make_cubin(s, j, &cubin, &len, tc, why, sizeof why);
  *ms = (double)(teeny__now_ns() - t0) / 1e6;
  if (!rc && teeny__cubin_sm(cubin, len) != teeny__arch_parse(j->arch, NULL)) {
    snprintf(why, sizeof why, "the cubin is not for %s (ELF says sm_%d)", j->arch,
             teeny__cubin_sm(cubin, len));
    rc = TEENY_E_INTERNAL;
  }
  if (!rc && (rc = teeny_store_cubin_put(s->st, j->key, j->arch, tc, cubin, len, *ms,
                                         NULL, err)))
    snprintf(why, sizeof why, "cannot store it: %s", err);
  teeny__free(cubin);
  if (rc && rc != TEENY_E_SHUTDOWN)
    TEENY_LOGW(s->o.log, "SASS: no %s cubin for %.16s... (%s): %s", j->arch, j->key,
               teeny_err_name(rc), why);
  else if (!rc)
    TEENY_LOGD(s->o.log, "SASS: %s cubin of %.16s... (%zu bytes, %s) in %.1f ms",
               j->arch, j->key, len, tc, *ms);
  return rc == 0;
}

/* mu held: wait for a job (closing an idle driver helper); NULL at stop. */
static job *next_job(teeny_sass *s) {
  while (!s->head && !atomic_load(&s->stop)) {
    if (!teeny__jit_running(s->jit)) {
      pthread_cond_wait(&s->cv, &s->mu);
      continue;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += SASS_IDLE_MS / 1000;
    if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT && !s->head) {
      pthread_mutex_unlock(&s->mu);
      teeny__jit_close(s->jit); /* its GPU context goes with it */
      pthread_mutex_lock(&s->mu);
    }
  }
  if (atomic_load(&s->stop))
    return NULL;
  job *j = s->head;
  s->head = j->next;
  if (!s->head)
    s->tail = NULL;
  s->nqueued--;
  s->running = j;
  return j;
}

static void *lane(void *arg) {
  teeny_sass *s = arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the loop's */
  pthread_mutex_lock(&s->mu);
  job *j;
  while ((j = next_job(s))) {
    pthread_mutex_unlock(&s->mu);
    teeny_sass_done d = {.stored = false};
    snprintf(d.key, sizeof d.key, "%s", j->key);
    snprintf(d.arch, sizeof d.arch, "%s", j->arch);
    d.stored = run_job(s, j, &d.ms, &d.skipped);
    pthread_mutex_lock(&s->mu);
    if (!d.stored && !d.skipped && !atomic_load(&s->stop))
      remember_failure(s, j);
    s->running = NULL;
    job_free(j);
    post_done(s, &d);
    if (s->async_open)
      uv_async_send(&s->async);
  }
  pthread_mutex_unlock(&s->mu);
  teeny__jit_close(s->jit);
  return NULL;
}

/* ---- lifetime --------------------------------------------------------------------- */

static void find_ptxas(teeny_sass *s) {
  if (s->o.mode != TEENY_SASS_AUTO && s->o.mode != TEENY_SASS_PTXAS)
    return;
  char why[512] = "";
  s->have_ptxas = teeny__ptxas_find(s->o.ptxas, &s->ptxas, why, sizeof why) == 0;
  if (s->have_ptxas)
    TEENY_LOGI(s->o.log, "SASS: %s at %s", s->ptxas.toolchain, s->ptxas.path);
  else
    TEENY_LOGI(s->o.log, "SASS: %s", why);
}

int teeny__sass_create(const teeny_sass_opts *o, teeny_sass **out, char *err) {
  *out = NULL;
  teeny_sass *s = teeny__calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, TEENY_STORE_ERR_LEN, "out of memory");
    return TEENY_E_NOMEM;
  }
  s->o = *o;
  s->o.ptxas = NULL;
  atomic_init(&s->stop, false);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  int rc = TEENY_E_NOMEM;
  if (!(s->exe = teeny__strdup(o->exe ? o->exe : "")) ||
      !(s->jit = teeny__jit_create(s->exe, o->log, &s->stop))) {
    snprintf(err, TEENY_STORE_ERR_LEN, "out of memory");
    goto fail;
  }
  s->o.exe = s->exe;
  if ((rc = teeny_store_create(o->store, &s->st, err)))
    goto fail;
  s->o.ptxas = o->ptxas;
  find_ptxas(s);
  s->o.ptxas = NULL; /* not kept: find_ptxas copied the path */
  if (o->mode != TEENY_SASS_OFF) {
    if ((rc = pthread_create(&s->thread, NULL, lane, s))) {
      snprintf(err, TEENY_STORE_ERR_LEN, "cannot start the SASS lane: %s", strerror(rc));
      rc = TEENY_E_INTERNAL;
      goto fail;
    }
    s->started = true;
  }
  uv_async_init(o->loop, &s->async, on_async);
  s->async.data = s;
  pthread_mutex_lock(&s->mu);
  s->async_open = true; /* the thread posts only after this */
  pthread_mutex_unlock(&s->mu);
  *out = s;
  return 0;
fail:
  teeny__sass_destroy(s);
  return rc;
}

void teeny__sass_stop(teeny_sass *s) {
  if (!s || atomic_load(&s->stop))
    return;
  pthread_mutex_lock(&s->mu);
  atomic_store(&s->stop, true);
  job *q = s->head;
  s->head = s->tail = NULL;
  s->nqueued = 0;
  pthread_cond_signal(&s->cv);
  if (s->async_open) {
    s->async_open = false;
    uv_close((uv_handle_t *)&s->async, NULL);
  }
  pthread_mutex_unlock(&s->mu);
  while (q) {
    job *nx = q->next;
    job_free(q);
    q = nx;
  }
}

void teeny__sass_destroy(teeny_sass *s) {
  if (!s)
    return;
  pthread_mutex_lock(&s->mu);
  atomic_store(&s->stop, true);
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  if (s->started)
    pthread_join(s->thread, NULL);
  for (job *j = s->head, *nx; j; j = nx) {
    nx = j->next;
    job_free(j);
  }
  teeny__free(s->done);
  teeny__jit_destroy(s->jit);
  teeny_store_destroy(s->st);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  teeny__free(s->exe);
  teeny__free(s);
}
