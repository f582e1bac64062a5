/*
 * tests/integration/it_cache.c — what the cache answers: miss, memory hit,
 * disk hit after a restart, force; PTX identical to the offline compiler's;
 * diagnostics passed through with file:line:col; LRU eviction under a
 * small --max-size.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/itest.h"

static const char *const va_f32[] = {"D=f32", "BLOCK_SIZE=1024", NULL};

/* One compile of vector_add f32/1024 on c; checks the reply shape and
 * returns its cache field, or -1.  key/ptx: copies of what came back. */
static int va_compile(tclient *c, const char *src, size_t n, unsigned flags,
                      const char *filename, char key[65], char **ptx) {
  tc_compile t;
  teeny_msg_reply rep;
  tc_compile_init(&t, src, n, "vector_add", va_f32);
  t.req.u.compile.flags = flags;
  t.req.u.compile.req.filename = filename;
  if (tc_call(c, &t.req, &rep))
    return -1;
  const teeny_artifact *a = &rep.u.compile.art;
  int cache = -1;
  if (rep.status == 0 && strlen(a->key) == 64 && a->ptx && a->ptx_len > 100 &&
      strcmp(a->entry, "vector_add_entry_point") == 0 &&
      strcmp(a->id, "vector_add__f32__1024") == 0 && a->nparams == 4 &&
      a->threads_per_block == 128 && !a->mlir && !a->source)
    cache = (int)rep.u.compile.cache;
  else
    fprintf(stderr, "unexpected compile reply: status %d %s\n", rep.status,
            rep.error ? rep.error : "");
  if (cache >= 0) {
    memcpy(key, a->key, 65);
    free(*ptx);
    *ptx = strndup(a->ptx, a->ptx_len);
  }
  teeny_msg_reply_free(&rep);
  return cache;
}

static int binding_order(tclient *c) {
  size_t n;
  char *src = tc_kernel_source("histogram", &n);
  const char *b1[] = {"BLOCK_SIZE=1024", "NUM_BINS=256", NULL};
  const char *b2[] = {"NUM_BINS=256", "BLOCK_SIZE=1024", NULL};
  teeny_msg_reply r1, r2;
  memset(&r1, 0, sizeof r1);
  memset(&r2, 0, sizeof r2);
  int ok = src && it_compile(c, src, n, "histogram", b1, 0, 0, &r1) == 0 &&
           it_compile(c, src, n, "histogram", b2, 0, 0, &r2) == 0 &&
           r1.status == 0 && r2.status == 0 &&
           r1.u.compile.cache == TEENY_CACHE_MISS &&
           r2.u.compile.cache == TEENY_CACHE_MEMORY &&
           strcmp(r1.u.compile.art.key, r2.u.compile.art.key) == 0 &&
           r1.u.compile.art.ptx_len == r2.u.compile.art.ptx_len &&
           memcmp(r1.u.compile.art.ptx, r2.u.compile.art.ptx,
                  r1.u.compile.art.ptx_len) == 0;
  if (!ok)
    fprintf(stderr, "binding order: %d/%s then %d/%s\n", r1.status,
            it_cache_name(r1.u.compile.cache), r2.status,
            it_cache_name(r2.u.compile.cache));
  teeny_msg_reply_free(&r1);
  teeny_msg_reply_free(&r2);
  free(src);
  return ok;
}

int it_hit_miss_force_restart(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  char k1[65], k2[65], *p1 = NULL, *p2 = NULL;
  teeny_msg_stats_reply st;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k1, &p1), ==, TEENY_CACHE_MISS);
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k2, &p2), ==, TEENY_CACHE_MEMORY);
  CHECK(strcmp(k1, k2) == 0 && strcmp(p1, p2) == 0);
  /* another file name: another request, the same key, found on disk */
  CHECK_INT(va_compile(&c, src, n, 0, "other.c", k2, &p2), ==,
            TEENY_CACHE_DISK);
  CHECK(strcmp(k1, k2) == 0 && strcmp(p1, p2) == 0);
  CHECK(it_stats(d.sock, &st) == 0);
  CHECK_INT(st.misses, ==, 1);
  CHECK_INT(st.compiles, ==, 1);
  CHECK_INT(st.memory_hits, ==, 1);
  CHECK_INT(st.disk_hits, ==, 1);
  CHECK_INT(st.hits, ==, 2);
  CHECK_INT(st.entries, ==, 1);
  CHECK(st.bytes > 0 && st.compile_ms_total > 0);
  CHECK(st.saved_ms_total > 0);
  /* force: compiled again, the same artifact, nothing added */
  CHECK_INT(va_compile(&c, src, n, TEENY_MSG_FORCE, NULL, k2, &p2), ==,
            TEENY_CACHE_MISS);
  CHECK(strcmp(k1, k2) == 0 && strcmp(p1, p2) == 0);
  CHECK(it_stats(d.sock, &st) == 0);
  CHECK_INT(st.compiles, ==, 2);
  CHECK_INT(st.entries, ==, 1);
  /* the request key sorts bindings: another order is the same request */
  CHECK(binding_order(&c));
  /* restart: the store keeps it; first a disk hit, then memory */
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k2, &p2), ==, TEENY_CACHE_DISK);
  CHECK(strcmp(k1, k2) == 0 && strcmp(p1, p2) == 0);
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k2, &p2), ==, TEENY_CACHE_MEMORY);
  CHECK(it_stats(d.sock, &st) == 0);
  CHECK_INT(st.compiles, ==, 0);
  CHECK_INT(st.disk_hits, ==, 1);
  CHECK_INT(st.entries, ==, 2);
  failed = false;
fail:
  tc_close(&c);
  free(src);
  free(p1);
  free(p2);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- a corrupted entry is replaced, never served -------------------------------- */

/* Overwrite the first bytes of the stored PTX (same size, wrong hash). */
static int corrupt_ptx(const tdaemon *d, const char *key) {
  char path[512];
  snprintf(path, sizeof path, "%s/objects/%.2s/vector_add_%s.o", d->cache, key,
           key);
  FILE *f = fopen(path, "r+");
  if (!f)
    return -1;
  fputs("// corrupted", f);
  return fclose(f);
}

int it_corrupt_entry(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  size_t n;
  char *src = tc_kernel_source("vector_add", &n);
  char k1[65], k2[65], *p1 = NULL, *p2 = NULL;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k1, &p1), ==, TEENY_CACHE_MISS);
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(corrupt_ptx(&d, k1) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0); /* memory is empty: the store answers */
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(tc_verify(&c, false), ==, 1);
  /* not served: compiled again, the broken entry replaced */
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k2, &p2), ==, TEENY_CACHE_MISS);
  CHECK(strcmp(k1, k2) == 0 && strcmp(p1, p2) == 0);
  CHECK_INT(tc_verify(&c, false), ==, 0);
  /* and served from the store after the next restart */
  tc_close(&c);
  CHECK_INT(td_stop(&d), ==, 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(va_compile(&c, src, n, 0, NULL, k2, &p2), ==, TEENY_CACHE_DISK);
  CHECK(strcmp(p1, p2) == 0);
  failed = false;
fail:
  tc_close(&c);
  free(src);
  free(p1);
  free(p2);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- the daemon's PTX is the offline compiler's ------------------------------ */

/* Run teenyc on an example; its stdout (emit) into a malloc'd string. */
static char *teenyc_emit(const tdaemon *d, const char *file,
                         const char *kernel, const char *const *b,
                         const char *emit) {
  const char *bin = getenv("TEENYC_BIN");
  const char *srcdir = getenv("TEENY_SOURCE_DIR");
  char cmd[2048], out[256];
  snprintf(out, sizeof out, "%s/teenyc.out", d->dir);
  int k = snprintf(cmd, sizeof cmd, "'%s' '%s/examples/kernels/%s.c' -k %s",
                   bin ? bin : "teenyc", srcdir ? srcdir : ".", file, kernel);
  for (int i = 0; b[i]; i++) {
    bool is_const = b[i][strcspn(b[i], "=") + 1] >= '0' &&
                    b[i][strcspn(b[i], "=") + 1] <= '9';
    k += snprintf(cmd + k, sizeof cmd - (size_t)k, " %s %s",
                  is_const ? "-c" : "-d", b[i]);
  }
  snprintf(cmd + k, sizeof cmd - (size_t)k, " -e %s -o '%s'", emit, out);
  if (system(cmd) != 0) {
    fprintf(stderr, "failed: %s\n", cmd);
    return NULL;
  }
  return tc_read_file(out, NULL);
}

static int same_as_teenyc(tdaemon *d, tclient *c, const char *file,
                          const char *kernel, const char *const *b) {
  size_t n;
  char *src = tc_kernel_source(file, &n);
  char *ptx = teenyc_emit(d, file, kernel, b, "ptx");
  char *key = teenyc_emit(d, file, kernel, b, "key");
  teeny_msg_reply rep;
  memset(&rep, 0, sizeof rep);
  int ok = src && ptx && key &&
           it_compile(c, src, n, kernel, b, 0, 0, &rep) == 0 &&
           rep.status == 0 && rep.u.compile.art.ptx &&
           rep.u.compile.art.ptx_len == strlen(ptx) &&
           memcmp(rep.u.compile.art.ptx, ptx, strlen(ptx)) == 0 &&
           strncmp(key, rep.u.compile.art.key, 64) == 0;
  if (!ok)
    fprintf(stderr, "%s: daemon PTX/key differ from teenyc's\n", kernel);
  teeny_msg_reply_free(&rep);
  free(src);
  free(ptx);
  free(key);
  return ok;
}

int it_ptx_matches_teenyc(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK(same_as_teenyc(&d, &c, "vector_add", "vector_add", va_f32));
  const char *sb[] = {"D=f32", "BLOCK_SIZE=1024", NULL};
  CHECK(same_as_teenyc(&d, &c, "softmax", "softmax", sb));
  const char *cb[] = {"D=i32", "BLOCK_SIZE=1024", NULL};
  CHECK(same_as_teenyc(&d, &c, "cumsum", "cumsum_rows", cb));
  /* and from memory, byte for byte the same */
  CHECK(same_as_teenyc(&d, &c, "vector_add", "vector_add", va_f32));
  failed = false;
fail:
  tc_close(&c);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- diagnostics ------------------------------------------------------------- */

/* vector_add with "a + b" misspelt "a + bb" on one line. */
static char *broken_source(size_t *n, int *line, int *col) {
  char *src = tc_kernel_source("vector_add", n);
  char *at = src ? strstr(src, "a + b, mask") : NULL;
  if (!at)
    return NULL;
  size_t off = (size_t)(at - src) + 4;
  char *out = malloc(*n + 2);
  memcpy(out, src, off);
  out[off] = 'b';
  memcpy(out + off + 1, src + off, *n - off + 1);
  *n += 1;
  *line = 1;
  for (size_t i = 0; i < off; i++)
    *line += src[i] == '\n';
  size_t bol = off;
  while (bol && src[bol - 1] != '\n')
    bol--;
  *col = (int)(off - bol) + 1;
  free(src);
  return out;
}

int it_diagnostics(void) {
  tdaemon d;
  tclient c;
  teeny_msg_reply rep;
  bool failed = true;
  size_t n, vn;
  int line = 0, col = 0;
  char *src = broken_source(&n, &line, &col);
  char *vsrc = tc_kernel_source("vector_add", &vn);
  teeny_msg_stats_reply st;
  tc_init(&c);
  memset(&rep, 0, sizeof rep);
  CHECK(td_init(&d) == 0);
  CHECK(src && vsrc);
  CHECK(td_start(&d, NULL, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  tc_compile t;
  tc_compile_init(&t, src, n, "vector_add", va_f32);
  t.req.u.compile.req.filename = "kernels/broken.c";
  CHECK(tc_call(&c, &t.req, &rep) == 0);
  CHECK_INT(rep.status, ==, TEENY_E_COMPILE);
  CHECK(rep.ndiags >= 1);
  fprintf(stderr, "error: %s\n", rep.error);
  CHECK(strcmp(rep.diags[0].file, "kernels/broken.c") == 0);
  CHECK_INT(rep.diags[0].line, ==, line);
  CHECK(rep.diags[0].col >= col && rep.diags[0].col <= col + 2);
  CHECK(strstr(rep.diags[0].message, "bb") != NULL);
  CHECK(rep.diags[0].source_line && strstr(rep.diags[0].source_line, "a + bb"));
  char where[64];
  snprintf(where, sizeof where, "kernels/broken.c:%d:", line);
  CHECK(strstr(rep.error, where) != NULL);
  teeny_msg_reply_free(&rep);
  /* a missing binding */
  const char *half[] = {"D=f32", NULL};
  CHECK(it_compile(&c, vsrc, vn, "vector_add", half, 0, 0, &rep) == 0);
  CHECK_INT(rep.status, ==, TEENY_E_BINDING);
  CHECK(rep.ndiags >= 1);
  teeny_msg_reply_free(&rep);
  /* an unknown kernel */
  CHECK(it_compile(&c, vsrc, vn, "no_such_kernel", va_f32, 0, 0, &rep) == 0);
  CHECK(rep.status < 0);
  teeny_msg_reply_free(&rep);
  /* errors are counted, never stored; the daemon goes on */
  CHECK(it_compile(&c, vsrc, vn, "vector_add", va_f32, 0, 0, &rep) == 0);
  CHECK_INT(rep.status, ==, 0);
  CHECK(it_stats(d.sock, &st) == 0);
  CHECK_INT(st.errors, ==, 3);
  CHECK_INT(st.entries, ==, 1);
  failed = false;
fail:
  teeny_msg_reply_free(&rep);
  tc_close(&c);
  free(src);
  free(vsrc);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}

/* ---- eviction ------------------------------------------------------------------ */

/* Stored size of vector_add f32 with block bs: the three artifacts. */
static uint64_t stored_size(const char *src, size_t n, const char *bs,
                            char key[65]) {
  teeny_dtype_binding db = {"D", "f32"};
  teeny_const_binding cb = {"BLOCK_SIZE", atoll(bs)};
  teeny_compile_req r = {.source = src, .source_len = n, .kernel = "vector_add",
                         .dtypes = &db, .ndtypes = 1, .consts = &cb,
                         .nconsts = 1};
  teeny_artifact *a = NULL;
  if (teeny_compile(&r, TEENY_EMIT_PTX | TEENY_EMIT_MLIR, &a, NULL))
    return 0;
  uint64_t size = a->ptx_len + a->mlir_len + a->source_len;
  memcpy(key, a->key, 65);
  teeny_artifact_destroy(a);
  return size;
}

static int compile_bs(tclient *c, const char *src, size_t n, const char *bs) {
  char b1[32];
  snprintf(b1, sizeof b1, "BLOCK_SIZE=%s", bs);
  const char *b[] = {"D=f32", b1, NULL};
  teeny_msg_reply rep;
  if (it_compile(c, src, n, "vector_add", b, 0, 0, &rep))
    return -1;
  int cache = rep.status ? -1 : (int)rep.u.compile.cache;
  teeny_msg_reply_free(&rep);
  return cache;
}

/* Keys in the store, by listing. */
static int list_has(tclient *c, const char *key, size_t *count) {
  teeny_msg_request req;
  memset(&req, 0, sizeof req);
  req.op = TEENY_OP_LIST;
  teeny_msg_reply rep;
  if (tc_call(c, &req, &rep) || rep.status)
    return -1;
  int has = 0;
  for (size_t i = 0; i < rep.u.list.nentries; i++)
    has |= strcmp(rep.u.list.entries[i].key, key) == 0;
  *count = rep.u.list.nentries;
  teeny_msg_reply_free(&rep);
  return has;
}

int it_eviction_lru(void) {
  tdaemon d;
  tclient c;
  bool failed = true;
  size_t n, count = 0;
  char *src = tc_kernel_source("vector_add", &n);
  char ka[65], kb[65], kc[65], cap[32];
  teeny_msg_stats_reply st;
  tc_init(&c);
  CHECK(td_init(&d) == 0);
  CHECK(src != NULL);
  uint64_t sa = stored_size(src, n, "256", ka);
  uint64_t sb = stored_size(src, n, "512", kb);
  uint64_t sc = stored_size(src, n, "1024", kc);
  CHECK(sa && sb && sc);
  /* room for A+B and for A+C, not for all three */
  snprintf(cap, sizeof cap, "%llu",
           (unsigned long long)(sa + (sb > sc ? sb : sc)));
  const char *args[] = {"--max-size", cap, NULL};
  CHECK(td_start(&d, args, NULL) == 0);
  CHECK(tc_open(&c, d.sock) == 0);
  CHECK_INT(compile_bs(&c, src, n, "256"), ==, TEENY_CACHE_MISS);  /* A */
  CHECK_INT(compile_bs(&c, src, n, "512"), ==, TEENY_CACHE_MISS);  /* B */
  usleep(1100000); /* last-used times have one-second resolution */
  CHECK_INT(compile_bs(&c, src, n, "256"), ==, TEENY_CACHE_MEMORY); /* use A */
  CHECK_INT(compile_bs(&c, src, n, "1024"), ==, TEENY_CACHE_MISS); /* C */
  CHECK_INT(list_has(&c, ka, &count), ==, 1);
  CHECK_INT(list_has(&c, kc, &count), ==, 1);
  CHECK_INT(list_has(&c, kb, &count), ==, 0);
  CHECK_INT(count, ==, 2);
  CHECK(it_stats(d.sock, &st) == 0);
  CHECK_INT(st.evictions, ==, 1);
  CHECK(st.bytes <= sa + (sb > sc ? sb : sc));
  /* B left the store, not the in-memory map: eviction is the store's
   * business (the map's entries are still right answers, and the map has
   * its own LRU; integration_memcache_lru) */
  CHECK_INT(compile_bs(&c, src, n, "512"), ==, TEENY_CACHE_MEMORY);
  CHECK_INT(list_has(&c, kb, &count), ==, 0);
  failed = false;
fail:
  tc_close(&c);
  free(src);
  return td_fini(&d, failed) ? IT_FAIL : IT_PASS;
}
