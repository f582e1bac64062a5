/*
 * tools/teenyctl_json.c — every --json output of teenyctl, built as
 * jansson values and written by json_dumpf: jansson escapes, and the
 * output is valid UTF-8 ("Größe" stays "Größe").  Text from the daemon
 * need not be UTF-8 (PROTOCOL.md §4): a string jansson refuses is cleaned
 * first, each byte of an invalid sequence becoming U+FFFD, so the output
 * is always valid JSON.  Integral numbers are written as integers.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/teenyctl.h"

/* ---- values ---------------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at p[0..n), or 0 if there is none
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (!len || len > n)
    return 0;
  for (size_t i = 1; i < len; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
      (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
    return 0;
  return len;
}

/* s[0..n) with every invalid byte replaced by U+FFFD (malloc'ed; *m its
 * length). */
static char *utf8_clean(const char *s, size_t n, size_t *m) {
  char *out = malloc(3 * n + 1);
  size_t k = 0;
  if (!out)
    return NULL;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_seq((const unsigned char *)s + i, n - i);
    if (len) {
      memcpy(out + k, s + i, len);
      k += len;
      i += len;
    } else {
      memcpy(out + k, "\xef\xbf\xbd", 3);
      k += 3;
      i++;
    }
  }
  *m = k;
  return out;
}

/* A JSON string of s[0..n) (NULs allowed). */
static json_t *jblob(const char *s, size_t n) {
  json_t *v = json_stringn(s ? s : "", s ? n : 0);
  if (v)
    return v;
  size_t m;
  char *clean = utf8_clean(s, n, &m);
  v = clean ? json_stringn(clean, m) : NULL;
  free(clean);
  return v ? v : json_null();
}

static json_t *jstr(const char *s) { return jblob(s, s ? strlen(s) : 0); }

static json_t *jnum(double v) {
  if (!isfinite(v))
    return json_null();
  if (v == floor(v) && fabs(v) < 9e15)
    return json_integer((json_int_t)v);
  return json_real(v);
}

static json_t *juint(uint64_t v) {
  return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* Print v and a newline, then release it. */
static void emit(json_t *v) {
  if (!v) {
    fputs("null\n", stdout);
    return;
  }
  json_dumpf(v, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
  fputc('\n', stdout);
  json_decref(v);
}

/* ---- the outputs ------------------------------------------------------------------ */

void ctl_json_stats(const teeny_admin_reply *r) {
  json_t *o = json_object();
  for (size_t i = 0; i < r->ncounters; i++)
    json_object_set_new(o, r->counters[i].name, jnum(r->counters[i].value));
  if (r->store)
    json_object_set_new(o, "store", jstr(r->store));
  if (r->nhistograms) {
    json_t *hs = json_object();
    for (size_t i = 0; i < r->nhistograms; i++) {
      const teeny_histogram *h = &r->histograms[i];
      json_t *le = json_array(), *counts = json_array();
      for (size_t k = 0; k < h->nle; k++)
        json_array_append_new(le, json_real(h->le[k]));
      for (size_t k = 0; k <= h->nle; k++)
        json_array_append_new(counts, juint(h->counts[k]));
      json_object_set_new(hs, h->name,
                          json_pack("{s:o, s:o, s:o, s:o}", "le", le, "counts", counts,
                                    "sum", jnum(h->sum), "count", juint(h->count)));
    }
    json_object_set_new(o, "histograms", hs);
  }
  emit(o);
}

static json_t *entry_json(const teeny_cache_entry *e) {
  return json_pack("{s:o, s:o, s:o, s:o, s:i, s:o, s:I, s:I, s:o, s:I, s:o, s:o}",
                   "key", jstr(e->key), "name", jstr(e->name), "id", jstr(e->id),
                   "target", jstr(e->target), "num_warps", e->num_warps, "size",
                   juint(e->size), "created", (json_int_t)e->created, "last_used",
                   (json_int_t)e->last_used, "hits", juint(e->hits), "cubins",
                   (json_int_t)e->cubins, "cubin_bytes", juint(e->cubin_bytes),
                   "compile_ms", jnum(e->compile_ms));
}

static json_t *entries_json(const teeny_cache_entry *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(a, entry_json(&v[i]));
  return a;
}

void ctl_json_entries(const char *field, const teeny_cache_entry *v, size_t n,
                      uint64_t removed, uint64_t bytes, bool purge) {
  json_t *o = json_object();
  if (purge) {
    json_object_set_new(o, "removed", juint(removed));
    json_object_set_new(o, "bytes", juint(bytes));
  }
  json_object_set_new(o, field, entries_json(v, n));
  emit(o);
}

void ctl_json_show(const teeny_admin_reply *r) {
  json_t *o = json_object(), *cubins = json_array();
  json_object_set_new(o, "entry", entry_json(&r->entries[0]));
  for (size_t i = 0; i < r->ncubins; i++) {
    const teeny_cache_cubin *c = &r->cubins[i];
    json_array_append_new(cubins, json_pack("{s:o, s:o, s:o, s:I, s:o}", "arch", jstr(c->arch),
                                            "toolchain", jstr(c->toolchain), "size",
                                            juint(c->size), "created",
                                            (json_int_t)c->created, "sass_ms",
                                            jnum(c->sass_ms)));
  }
  json_object_set_new(o, "cubins", cubins);
  const char *names[] = {"source", "mlir", "ptx"};
  const char *texts[] = {r->source, r->mlir, r->ptx};
  size_t lens[] = {r->source_len, r->mlir_len, r->ptx_len};
  for (int i = 0; i < 3; i++)
    if (texts[i])
      json_object_set_new(o, names[i], jblob(texts[i], lens[i]));
  emit(o);
}

static json_t *tuned_json(const teeny_tuned_record *t) {
  json_t *consts = json_object();
  for (size_t i = 0; i < t->nconsts; i++)
    json_object_set_new(consts, t->consts[i].name, json_integer(t->consts[i].value));
  return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:o, s:I, s:I}", "kernel",
                   jstr(t->kernel), "digest", jstr(t->digest), "problem", jstr(t->problem),
                   "gpu", jstr(t->gpu), "driver", jstr(t->driver), "consts", consts,
                   "num_warps", t->num_warps, "best_ms", jnum(t->best_ms), "candidates",
                   (json_int_t)t->candidates, "created", (json_int_t)t->created);
}

void ctl_json_tuned(const teeny_admin_reply *r, bool purge) {
  if (purge) {
    emit(json_pack("{s:o}", "removed", juint(r->removed)));
    return;
  }
  json_t *a = json_array();
  for (size_t i = 0; i < r->ntuned; i++)
    json_array_append_new(a, tuned_json(&r->tuned[i]));
  emit(json_pack("{s:o}", "records", a));
}

void ctl_json_verify(const teeny_admin_reply *r) {
  json_t *a = json_array();
  for (size_t i = 0; i < r->nproblems; i++)
    json_array_append_new(a, json_pack("{s:o, s:o}", "key", jstr(r->problems[i].key),
                                       "problem", jstr(r->problems[i].problem)));
  emit(json_pack("{s:o, s:o, s:o}", "checked", juint(r->checked), "repaired",
                 juint(r->repaired), "problems", a));
}

void ctl_json_config(const teeny_admin_reply *r) {
  json_t *o = json_object();
  for (size_t i = 0; i < r->nsettings; i++)
    json_object_set_new(o, r->settings[i].key, jstr(r->settings[i].value));
  emit(o);
}

void ctl_json_ping(const char *socket, double ms) {
  emit(json_pack("{s:b, s:o, s:f}", "ok", 1, "socket", jstr(socket), "ms", ms));
}

void ctl_json_ok(void) { emit(json_pack("{s:b}", "ok", 1)); }

void ctl_json_error(int rc, const char *msg, const teeny_admin_reply *r,
                    const char *const *cands, size_t ncands) {
  json_t *o = json_pack("{s:i, s:o, s:o}", "status", rc, "error", jstr(teeny_err_name(rc)),
                        "message", jstr(msg));
  if (r && r->ncandidates) {
    cands = r->candidates;
    ncands = r->ncandidates;
  }
  if (o && ncands) {
    json_t *a = json_array();
    for (size_t i = 0; i < ncands; i++)
      json_array_append_new(a, jstr(cands[i]));
    json_object_set_new(o, "candidates", a);
  }
  emit(o);
}
