/*
 * tests/integration/reliability.c — see reliability.h.  Test code: plain
 * and strict.  The load generator checks every reply against an answer
 * computed in this process before the run (teeny_spec_create for keys,
 * teeny_spec_compile for PTX), never against another reply.
 */
#include <dirent.h>
#include <errno.h>
#include <msgpack.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "teeny/compile.h"
#include "tests/integration/reliability.h"

/* ---- processes ------------------------------------------------------------- */

long rel_status_kb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f)
    return -1;
  long v = -1;
  size_t fl = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, fl) == 0 && line[fl] == ':')
      v = strtol(line + fl + 1, NULL, 10);
  fclose(f);
  return v;
}

int rel_children(pid_t pid, pid_t *out, int max) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) && n < max) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "re");
    if (!f)
      continue;
    size_t r = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[r] = '\0';
    const char *rp = strrchr(buf, ')'); /* comm may hold spaces */
    char state;
    int ppid;
    if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == pid &&
        state != 'Z')
      out[n++] = (pid_t)atoi(e->d_name);
  }
  if (d)
    closedir(d);
  return n;
}

/* ---- the daemon ------------------------------------------------------------ */

double rel_counter(const char *sock, const char *name) {
  tclient c;
  tc_init(&c);
  if (tc_open(&c, sock))
    return -1;
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_STATS;
  teeny_msg_reply rep;
  double v = -1;
  if (!tc_call(&c, &req, &rep) && rep.status == 0) {
    const teeny_msg_stats_reply *s = &rep.u.stats;
    struct {
      const char *n;
      double v;
    } fixed[] = {{"requests", (double)s->requests},
                 {"hits", (double)s->hits},
                 {"memory_hits", (double)s->memory_hits},
                 {"disk_hits", (double)s->disk_hits},
                 {"misses", (double)s->misses},
                 {"compiles", (double)s->compiles},
                 {"joins", (double)s->joins},
                 {"errors", (double)s->errors},
                 {"entries", (double)s->entries},
                 {"bytes", (double)s->bytes},
                 {"evictions", (double)s->evictions}};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
      if (strcmp(fixed[i].n, name) == 0)
        v = fixed[i].v;
    for (size_t i = 0; i < s->nextra; i++)
      if (strcmp(s->extra[i].name, name) == 0)
        v = s->extra[i].value;
    teeny_msg_reply_free(&rep);
  }
  tc_close(&c);
  return v;
}

int rel_compile(tclient *c, const char *src, size_t n, const char *kernel,
                const char *const *bindings, char **error) {
  tc_compile t;
  tc_compile_init(&t, src, n, kernel, bindings);
  teeny_msg_reply rep;
  if (error)
    *error = NULL;
  int rc = tc_call(c, &t.req, &rep);
  if (rc)
    return rc;
  rc = rep.status;
  if (error && rep.error)
    *error = strdup(rep.error);
  teeny_msg_reply_free(&rep);
  return rc;
}

/* ---- files ----------------------------------------------------------------- */

typedef struct lines {
  char **v;
  size_t n, cap;
} lines;

static void walk(const char *dir, const char *rel, lines *out) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char path[2048], r[2048], line[2300];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    struct stat st;
    if (lstat(path, &st))
      continue;
    snprintf(line, sizeof line, "%s %o %lld %lld.%09ld %llu", r,
             (unsigned)st.st_mode, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
             (unsigned long long)st.st_ino);
    if (out->n == out->cap) {
      out->cap = out->cap ? out->cap * 2 : 64;
      out->v = realloc(out->v, out->cap * sizeof *out->v);
    }
    out->v[out->n++] = strdup(line);
    if (S_ISDIR(st.st_mode))
      walk(path, r, out);
  }
  if (d)
    closedir(d);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *rel_tree(const char *dir) {
  lines l = {0};
  walk(dir, "", &l);
  qsort(l.v, l.n, sizeof *l.v, cmp_str);
  size_t total = 1;
  for (size_t i = 0; i < l.n; i++)
    total += strlen(l.v[i]) + 1;
  char *s = malloc(total), *p = s;
  for (size_t i = 0; s && i < l.n; i++)
    p += sprintf(p, "%s\n", l.v[i]);
  if (s)
    *p = '\0';
  for (size_t i = 0; i < l.n; i++)
    free(l.v[i]);
  free(l.v);
  return s;
}

int rel_object_path(const char *cache, const char *key, const char *ext,
                    char *out, size_t n) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/objects/%.2s", cache, key);
  DIR *d = opendir(dir);
  struct dirent *e;
  char want[100];
  snprintf(want, sizeof want, "_%s.%s", key, ext);
  int rc = -1;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name), w = strlen(want);
    if (l > w && strcmp(e->d_name + l - w, want) == 0) {
      snprintf(out, n, "%s/%s", dir, e->d_name);
      rc = 0;
      break;
    }
  }
  if (d)
    closedir(d);
  return rc;
}

/* ---- the load generator ------------------------------------------------------ */

/* A kernel variant requests hit (and misses copy, with a nonce). */
typedef struct variant {
  const char *file;      /* examples/kernels/FILE.c */
  const char *kernel;    /* kernel name */
  const char *b[3];      /* bindings */
  char *src;             /* its source (malloc) */
  size_t len;
  char key[65];          /* expected key */
  char *ptx;             /* expected PTX (malloc) */
  size_t ptx_len;
} variant;

#define VA(d, bs) {"vector_add", "vector_add", {d, bs, NULL}, NULL, 0, "", NULL, 0}
#define SM(d, bs) {"softmax", "softmax", {d, bs, NULL}, NULL, 0, "", NULL, 0}
#define SC(d, bs) {"scale", "scale", {d, bs, NULL}, NULL, 0, "", NULL, 0}
static variant variants[] = {
    VA("D=f32", "BLOCK_SIZE=256"),  VA("D=f32", "BLOCK_SIZE=1024"),
    VA("D=f16", "BLOCK_SIZE=512"),  VA("D=bf16", "BLOCK_SIZE=2048"),
    SM("D=f32", "BLOCK_SIZE=256"),  SM("D=f32", "BLOCK_SIZE=1024"),
    SM("D=f16", "BLOCK_SIZE=512"),  SC("D=f32", "BLOCK_SIZE=1024"),
    SC("D=bf16", "BLOCK_SIZE=256"), SC("D=f16", "BLOCK_SIZE=4096"),
};
#define NVARIANTS (sizeof variants / sizeof *variants)

/* The bad requests and the status PROTOCOL.md documents for each. */
enum {
  BAD_NAME,       /* kernel "../../etc/passwd": NAME */
  BAD_LONG_NAME,  /* a 100-character kernel name: NAME */
  BAD_SYNTAX,     /* a syntax error: COMPILE with a located diagnostic */
  BAD_BINDING,    /* BLOCK_SIZE missing: BINDING */
  BAD_TARGET,     /* target sm_99: INVAL */
  BAD_WARPS,      /* num_warps 3: INVAL */
  BAD_OP,         /* op "frobnicate": UNSUPPORTED */
  BAD_SHOW,       /* show of a key prefix nobody has: NOTFOUND */
  BAD_PAYLOAD,    /* a frame that is not msgpack: PROTO, id 0 */
  BAD__COUNT
};
static const int bad_status[BAD__COUNT] = {
    TEENY_E_NAME,  TEENY_E_NAME,        TEENY_E_COMPILE,
    TEENY_E_BINDING, TEENY_E_INVAL,     TEENY_E_INVAL,
    TEENY_E_UNSUPPORTED, TEENY_E_NOTFOUND, TEENY_E_PROTO};

enum { K_HIT, K_MISS, K_BAD };

static int prepare_variants(const char *srcdir) {
  if (srcdir)
    setenv("TEENY_SOURCE_DIR", srcdir, 1);
  for (size_t i = 0; i < NVARIANTS; i++) {
    variant *v = &variants[i];
    if (v->ptx)
      continue;
    if (!(v->src = tc_kernel_source(v->file, &v->len)))
      return -1;
    tc_compile t;
    tc_compile_init(&t, v->src, v->len, v->kernel, v->b);
    teeny_artifact *a = NULL;
    teeny_diags d;
    teeny_diags_init(&d);
    int rc = teeny_compile(&t.req.u.compile.req, TEENY_EMIT_PTX, &a, &d);
    teeny_diags_close(&d);
    if (rc) {
      fprintf(stderr, "reference compile of %s failed: %d\n", v->kernel, rc);
      return -1;
    }
    memcpy(v->key, a->key, sizeof v->key);
    v->ptx = malloc(a->ptx_len);
    memcpy(v->ptx, a->ptx, a->ptx_len);
    v->ptx_len = a->ptx_len;
    teeny_artifact_destroy(a);
  }
  return 0;
}

/* What one process shares with the parent (a MAP_SHARED array). */
typedef struct proc_out {
  uint64_t sent, replies, wrong, lost, hits, misses, bad;
  uint64_t by_cache[4];
  int done;          /* finished its requests */
} proc_out;

/* One request in flight. */
typedef struct slot {
  int kind;          /* K_HIT, K_MISS, K_BAD */
  int what;          /* variant, or BAD_* */
  char key[65];      /* miss: its expected key */
  uint64_t t0;       /* sent at */
  bool busy;
} slot;

typedef struct client {
  tclient c;
  const rel_load_opts *o;
  proc_out *out;
  uint32_t *lat;     /* this process's latencies (us), one per request */
  uint8_t *kinds;    /* their kinds */
  int nlat;
  slot *slots;       /* by id: ids are 1..requests */
  unsigned rng;
  int payload_out;   /* a BAD_PAYLOAD is in flight (its reply has id 0) */
  uint64_t payload_id;
  char tmp[16384];
} client;

static unsigned next_rand(client *cl) {
  cl->rng = cl->rng * 1103515245u + 12345u;
  return (cl->rng >> 8) & 0xffffff;
}

static void pk_str(msgpack_packer *pk, const char *s) {
  msgpack_pack_str(pk, strlen(s));
  msgpack_pack_str_body(pk, s, strlen(s));
}

static int send_packed(client *cl, msgpack_sbuffer *sb) {
  unsigned char hdr[4] = {(unsigned char)(sb->size >> 24),
                          (unsigned char)(sb->size >> 16),
                          (unsigned char)(sb->size >> 8),
                          (unsigned char)sb->size};
  int rc = tc_send_raw(&cl->c, hdr, 4) ||
           tc_send_raw(&cl->c, sb->data, sb->size);
  msgpack_sbuffer_destroy(sb);
  return rc ? TEENY_E_IO : 0;
}

static int send_compile(client *cl, uint64_t id, const variant *v,
                        const char *src, size_t n, const char *kernel,
                        const char *const *b, const char *target, int warps) {
  tc_compile t;
  tc_compile_init(&t, src, n, kernel, b);
  t.req.id = id;
  t.req.u.compile.req.target = target;
  t.req.u.compile.req.num_warps = warps;
  (void)v;
  return tc_send(&cl->c, &t.req);
}

static int send_bad(client *cl, uint64_t id, int what) {
  const variant *v = &variants[0];
  static const char *const nobs[] = {"D=f32", NULL};
  char name[101];
  msgpack_sbuffer sb;
  msgpack_packer pk;
  switch (what) {
  case BAD_NAME:
    return send_compile(cl, id, v, v->src, v->len, "../../etc/passwd", v->b,
                        NULL, 0);
  case BAD_LONG_NAME:
    memset(name, 'k', 100);
    name[100] = '\0';
    return send_compile(cl, id, v, v->src, v->len, name, v->b, NULL, 0);
  case BAD_SYNTAX: {
    int k = snprintf(cl->tmp, sizeof cl->tmp, "%.*s\nvoid oops( {\n",
                     (int)v->len, v->src);
    return send_compile(cl, id, v, cl->tmp, (size_t)k, v->kernel, v->b, NULL,
                        0);
  }
  case BAD_BINDING:
    return send_compile(cl, id, v, v->src, v->len, v->kernel, nobs, NULL, 0);
  case BAD_TARGET:
    return send_compile(cl, id, v, v->src, v->len, v->kernel, v->b, "sm_99",
                        0);
  case BAD_WARPS:
    return send_compile(cl, id, v, v->src, v->len, v->kernel, v->b, NULL, 3);
  case BAD_OP:
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2);
    pk_str(&pk, "op");
    pk_str(&pk, "frobnicate");
    pk_str(&pk, "id");
    msgpack_pack_uint64(&pk, id);
    return send_packed(cl, &sb);
  case BAD_SHOW: {
    teeny_msg_request req;
    memset(&req, 0, sizeof req);
    req.op = TEENY_OP_SHOW;
    req.id = id;
    snprintf(name, sizeof name, "0000%08x%04x", next_rand(cl),
             (unsigned)getpid() & 0xffff);
    req.u.show.key = name;
    return tc_send(&cl->c, &req);
  }
  default: /* BAD_PAYLOAD */
    msgpack_sbuffer_init(&sb);
    msgpack_sbuffer_write(&sb, "\xc1\xc1\xc1", 3);
    cl->payload_out = 1;
    cl->payload_id = id;
    return send_packed(cl, &sb);
  }
}

/* Send request id (1-based); fills its slot. */
static int send_one(client *cl, uint64_t id) {
  const rel_load_opts *o = cl->o;
  slot *s = &cl->slots[id];
  memset(s, 0, sizeof *s);
  unsigned r = next_rand(cl) % 1000;
  if ((int)r < o->bad_permille) {
    s->kind = K_BAD;
    s->what = (int)(next_rand(cl) % BAD__COUNT);
    if (s->what == BAD_PAYLOAD && cl->payload_out)
      s->what = BAD_NAME; /* one id-0 reply outstanding at a time */
  } else if ((int)r < o->bad_permille + o->miss_permille) {
    s->kind = K_MISS;
    s->what = (int)(next_rand(cl) % NVARIANTS);
  } else {
    s->kind = K_HIT;
    s->what = (int)(next_rand(cl) % NVARIANTS);
  }
  s->busy = true;
  s->t0 = tc_now_us();
  cl->out->sent++;
  const variant *v = &variants[s->what];
  switch (s->kind) {
  case K_BAD:
    cl->out->bad++;
    return send_bad(cl, id, s->what);
  case K_MISS: {
    cl->out->misses++;
    int k = snprintf(cl->tmp, sizeof cl->tmp, "%.*s/* nonce %d-%llu-%u */\n",
                     (int)v->len, v->src, (int)getpid(),
                     (unsigned long long)id, o->seed);
    tc_compile t;
    tc_compile_init(&t, cl->tmp, (size_t)k, v->kernel, v->b);
    teeny_spec *spec = NULL;
    if (teeny_spec_create(&t.req.u.compile.req, &spec, NULL))
      return TEENY_E_INTERNAL;
    memcpy(s->key, teeny_spec_key(spec), sizeof s->key);
    teeny_spec_destroy(spec);
    return send_compile(cl, id, v, cl->tmp, (size_t)k, v->kernel, v->b, NULL,
                        0);
  }
  default:
    cl->out->hits++;
    memcpy(s->key, v->key, sizeof s->key);
    return send_compile(cl, id, v, v->src, v->len, v->kernel, v->b, NULL, 0);
  }
}

static bool check_good(client *cl, const slot *s, const teeny_msg_reply *rep) {
  const variant *v = &variants[s->what];
  const teeny_artifact *a = &rep->u.compile.art;
  bool ok = rep->status == 0 && strcmp(a->key, s->key) == 0 && a->ptx &&
            a->ptx_len == v->ptx_len &&
            memcmp(a->ptx, v->ptx, v->ptx_len) == 0 &&
            (unsigned)rep->u.compile.cache < 4;
  if (ok)
    cl->out->by_cache[rep->u.compile.cache]++;
  else
    fprintf(stderr, "load: wrong answer to a %s of %s (status %d %s, key "
                    "%.16s vs %.16s)\n",
            s->kind == K_HIT ? "hit" : "miss", v->kernel, rep->status,
            rep->error ? rep->error : "", rep->status ? "" : a->key, s->key);
  return ok;
}

static bool check_bad(const slot *s, const teeny_msg_reply *rep) {
  bool ok = rep->status == bad_status[s->what] && rep->error && *rep->error;
  if (ok && s->what == BAD_SYNTAX)
    ok = rep->ndiags > 0 && rep->diags[0].line > 0;
  if (!ok)
    fprintf(stderr, "load: bad request %d answered %d (%s), want %d\n",
            s->what, rep->status, rep->error ? rep->error : "",
            bad_status[s->what]);
  return ok;
}

/* Receive one reply and check it.  0, or a transport error. */
static int recv_one(client *cl) {
  const char *p;
  size_t n;
  int rc = tc_recv_frame(&cl->c, 120000, &p, &n);
  if (rc)
    return rc;
  teeny_msg_reply env;
  char err[TEENY_PROTO_ERR_LEN];
  if (teeny_msg_reply_decode(p, n, TEENY_OP_NONE, &env, err)) {
    cl->out->wrong++;
    fprintf(stderr, "load: undecodable reply: %s\n", err);
    return 0;
  }
  uint64_t id = env.id;
  teeny_msg_reply_free(&env);
  if (id == 0 && cl->payload_out) {
    id = cl->payload_id;
    cl->payload_out = 0;
  }
  if (id == 0 || id > (uint64_t)cl->o->requests || !cl->slots[id].busy) {
    cl->out->wrong++;
    fprintf(stderr, "load: reply with unexpected id %llu\n",
            (unsigned long long)id);
    return 0;
  }
  slot *s = &cl->slots[id];
  s->busy = false;
  cl->out->replies++;
  teeny_proto_op op = s->kind != K_BAD              ? TEENY_OP_COMPILE
                      : s->what == BAD_SHOW         ? TEENY_OP_SHOW
                      : s->what == BAD_OP || s->what == BAD_PAYLOAD
                          ? TEENY_OP_NONE
                          : TEENY_OP_COMPILE;
  teeny_msg_reply rep;
  bool ok = teeny_msg_reply_decode(p, n, op, &rep, err) == 0;
  if (ok) {
    ok = s->kind == K_BAD ? check_bad(s, &rep) : check_good(cl, s, &rep);
    teeny_msg_reply_free(&rep);
  } else {
    fprintf(stderr, "load: undecodable reply: %s\n", err);
  }
  cl->out->wrong += !ok;
  uint64_t us = tc_now_us() - s->t0;
  cl->lat[cl->nlat] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
  cl->kinds[cl->nlat++] = (uint8_t)s->kind;
  return 0;
}

static int client_main(const rel_load_opts *o, int idx, proc_out *out,
                       uint32_t *lat, uint8_t *kinds) {
  client cl;
  memset(&cl, 0, sizeof cl);
  cl.o = o;
  cl.out = out;
  cl.lat = lat;
  cl.kinds = kinds;
  cl.rng = o->seed * 7919u + (unsigned)idx * 104729u + 1;
  cl.slots = calloc((size_t)o->requests + 1, sizeof *cl.slots);
  tc_init(&cl.c);
  if (!cl.slots || tc_open(&cl.c, o->sock))
    return 1;
  int inflight = 0, rc = 0;
  uint64_t next = 1;
  while (next <= (uint64_t)o->requests || inflight) {
    while (next <= (uint64_t)o->requests && inflight < o->window) {
      if ((rc = send_one(&cl, next)))
        break;
      next++;
      inflight++;
    }
    if (rc || (rc = recv_one(&cl)))
      break;
    inflight--;
  }
  for (uint64_t i = 1; i <= (uint64_t)o->requests; i++)
    out->lost += cl.slots[i].busy;
  if (rc)
    fprintf(stderr, "load: client %d stopped: %s\n", idx, teeny_strerror(rc));
  tc_close(&cl.c);
  free(cl.slots);
  out->done = rc == 0;
  return rc ? 1 : 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static double pct(const uint32_t *v, size_t n, double p) {
  if (!n)
    return 0;
  size_t i = (size_t)(p * (double)(n - 1));
  return v[i];
}

int rel_load_run(const rel_load_opts *o, rel_load_result *r) {
  memset(r, 0, sizeof *r);
  if (prepare_variants(o->srcdir))
    return -1;
  size_t nreq = (size_t)o->procs * (size_t)o->requests;
  size_t bytes = sizeof(proc_out) * (size_t)o->procs +
                 nreq * (sizeof(uint32_t) + sizeof(uint8_t));
  void *shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    return -1;
  proc_out *outs = shared;
  uint32_t *lat = (uint32_t *)(outs + o->procs);
  uint8_t *kinds = (uint8_t *)(lat + nreq);
  pid_t *pids = calloc((size_t)o->procs, sizeof *pids);
  r->rss_start_kb = r->rss_max_kb =
      o->daemon_pid ? rel_status_kb(o->daemon_pid, "VmRSS") : -1;
  uint64_t t0 = tc_now_us();
  fflush(NULL);
  for (int i = 0; i < o->procs; i++) {
    pids[i] = fork();
    if (pids[i] == 0)
      _exit(client_main(o, i, &outs[i],
                        lat + (size_t)i * (size_t)o->requests,
                        kinds + (size_t)i * (size_t)o->requests));
  }
  int left = o->procs;
  uint64_t last_print = t0;
  while (left) {
    for (int i = 0; i < o->procs; i++) {
      int st;
      if (pids[i] > 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        pids[i] = 0;
        left--;
        if (!WIFEXITED(st) || WEXITSTATUS(st))
          r->failed_procs++;
      }
    }
    if (o->daemon_pid) {
      long kb = rel_status_kb(o->daemon_pid, "VmRSS");
      if (kb > r->rss_max_kb)
        r->rss_max_kb = kb;
    }
    uint64_t now = tc_now_us();
    if (!o->quiet && now - last_print > 5000000) {
      uint64_t done = 0;
      for (int i = 0; i < o->procs; i++)
        done += outs[i].replies;
      fprintf(stderr, "load: %llu/%zu replies after %.0f s; daemon RSS %ld "
                      "KiB (max %ld)\n",
              (unsigned long long)done, nreq, (double)(now - t0) / 1e6,
              o->daemon_pid ? rel_status_kb(o->daemon_pid, "VmRSS") : -1L,
              r->rss_max_kb);
      last_print = now;
    }
    usleep((useconds_t)(o->sample_ms > 0 ? o->sample_ms : 50) * 1000);
  }
  r->seconds = (double)(tc_now_us() - t0) / 1e6;
  r->rss_end_kb = o->daemon_pid ? rel_status_kb(o->daemon_pid, "VmRSS") : -1;
  size_t nl = 0, nh = 0;
  uint32_t *all = malloc(nreq * sizeof *all), *hit = malloc(nreq * sizeof *hit);
  for (int i = 0; i < o->procs; i++) {
    proc_out *p = &outs[i];
    r->sent += p->sent;
    r->replies += p->replies;
    r->wrong += p->wrong;
    r->lost += p->lost;
    r->hits += p->hits;
    r->misses += p->misses;
    r->bad += p->bad;
    for (int c = 0; c < 4; c++)
      r->by_cache[c] += p->by_cache[c];
    /* requests a dead client never sent count as lost too */
    r->lost += (uint64_t)o->requests - p->sent;
    const uint32_t *pl = lat + (size_t)i * (size_t)o->requests;
    const uint8_t *pk = kinds + (size_t)i * (size_t)o->requests;
    for (uint64_t j = 0; j < p->replies && j < (uint64_t)o->requests; j++) {
      all[nl++] = pl[j];
      if (pk[j] == K_HIT)
        hit[nh++] = pl[j];
    }
  }
  qsort(all, nl, sizeof *all, cmp_u32);
  qsort(hit, nh, sizeof *hit, cmp_u32);
  r->p50_us = pct(all, nl, 0.50);
  r->p99_us = pct(all, nl, 0.99);
  r->p999_us = pct(all, nl, 0.999);
  r->max_us = nl ? all[nl - 1] : 0;
  r->hit_p50_us = pct(hit, nh, 0.50);
  r->hit_p99_us = pct(hit, nh, 0.99);
  free(all);
  free(hit);
  free(pids);
  munmap(shared, bytes);
  return 0;
}

void rel_load_print(const rel_load_opts *o, const rel_load_result *r) {
  printf("load: %d processes x %d requests (window %d; %d/1000 cold "
         "compiles, %d/1000 bad requests)\n",
         o->procs, o->requests, o->window, o->miss_permille, o->bad_permille);
  printf("  sent %llu, replies %llu, wrong %llu, lost %llu, failed clients "
         "%d\n",
         (unsigned long long)r->sent, (unsigned long long)r->replies,
         (unsigned long long)r->wrong, (unsigned long long)r->lost,
         r->failed_procs);
  printf("  kinds: %llu hits, %llu misses, %llu bad; good replies: %llu "
         "miss, %llu memory, %llu disk, %llu joined\n",
         (unsigned long long)r->hits, (unsigned long long)r->misses,
         (unsigned long long)r->bad, (unsigned long long)r->by_cache[0],
         (unsigned long long)r->by_cache[1],
         (unsigned long long)r->by_cache[2],
         (unsigned long long)r->by_cache[3]);
  printf("  %.1f s, %.0f requests/s\n", r->seconds,
         r->seconds > 0 ? (double)r->replies / r->seconds : 0.0);
  printf("  latency (all): p50 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f "
         "us\n",
         r->p50_us, r->p99_us, r->p999_us, r->max_us);
  printf("  latency (hits): p50 %.0f us, p99 %.0f us\n", r->hit_p50_us,
         r->hit_p99_us);
  printf("  daemon VmRSS: start %ld KiB, max %ld KiB, end %ld KiB\n",
         r->rss_start_kb, r->rss_max_kb, r->rss_end_kb);
}
