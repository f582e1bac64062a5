/*
 * proto/mp.c — msgpack plumbing for the message codecs (see mp.h).
 *
 * The scanner is the security boundary: msgpack-c allocates an object array
 * of the size an array or map header *declares*, so a 5-byte header claiming
 * four billion elements would make it ask for ~100 GB.  The scanner walks
 * the bytes first, with an explicit stack and no allocation, and rejects
 * any count larger than the bytes left (every element takes at least one
 * byte), nesting past TEENY_PROTO_MAX_DEPTH, more than TEENY_PROTO_MAX_VALUES
 * values and trailing bytes.  After it, msgpack-c's tree costs at most
 * ~24 bytes per input byte and is bounded by the value cap.
 *
 * Decoded strings and arrays live in a teeny_msg_mem: a list of blocks with
 * a bump pointer, so a message is a handful of mallocs and one free walk.
 */
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/mp.h"

/* ---- owned memory -------------------------------------------------------------- */

#define MEM_BLOCK 2048u /* bytes of a shared block; bigger requests get their own */
#define MEM_ALIGN alignof(max_align_t)

struct teeny_msg_mem {
  teeny_msg_mem *next; /* older block */
  size_t size;         /* usable bytes in data */
  size_t used;         /* bytes handed out */
  max_align_t data[];  /* the memory */
};

static teeny_msg_mem *mem_block(size_t size) {
  teeny_msg_mem *b = teeny__malloc(sizeof *b + size);
  if (!b)
    return NULL;
  b->next = NULL;
  b->size = size;
  b->used = 0;
  return b;
}

void *teeny__mem_alloc(teeny_msg_mem **m, size_t n) {
  if (n > SIZE_MAX / 2)
    return NULL;
  n = (n + MEM_ALIGN - 1) & ~(MEM_ALIGN - 1);
  teeny_msg_mem *b = *m;
  if (!b || b->size - b->used < n) {
    /* A big request gets a block of its own behind the head, so the head
     * keeps serving small ones. */
    bool own = n > MEM_BLOCK / 4;
    b = mem_block(own ? n : MEM_BLOCK);
    if (!b)
      return NULL;
    if (own && *m) {
      b->next = (*m)->next;
      (*m)->next = b;
    } else {
      b->next = *m;
      *m = b;
    }
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

void *teeny__mem_array(teeny_msg_mem **m, size_t count, size_t size) {
  if (size && count > SIZE_MAX / 2 / size)
    return NULL;
  return teeny__mem_alloc(m, count * size);
}

char *teeny__mem_strndup(teeny_msg_mem **m, const char *s, size_t n) {
  if (n == SIZE_MAX)
    return NULL;
  char *d = teeny__mem_alloc(m, n + 1);
  if (!d)
    return NULL;
  if (n)
    memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void teeny__mem_free(teeny_msg_mem **m) {
  teeny_msg_mem *b = *m;
  while (b) {
    teeny_msg_mem *next = b->next;
    teeny__free(b);
    b = next;
  }
  *m = NULL;
}

/* ---- the scanner --------------------------------------------------------------- */

typedef struct scan {
  const unsigned char *p; /* the message */
  size_t n;               /* its length */
  size_t off;             /* next byte */
  uint64_t left[TEENY_PROTO_MAX_DEPTH]; /* elements left per open container */
  int top;                /* open containers */
  size_t values;          /* values seen */
  char *err;              /* message sink or NULL */
} scan;

static int scan_fail(scan *s, const char *fmt, ...) TEENY_PRINTF(2, 3);
static int scan_fail(scan *s, const char *fmt, ...) {
  if (s->err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, TEENY_PROTO_ERR_LEN, fmt, ap);
    va_end(ap);
  }
  return TEENY_E_PROTO;
}

/* Read a big-endian field of `bytes` bytes. */
static int scan_uint(scan *s, int bytes, uint64_t *v) {
  if (s->n - s->off < (size_t)bytes)
    return scan_fail(s, "malformed msgpack: truncated at byte %zu", s->off);
  uint64_t x = 0;
  for (int i = 0; i < bytes; i++)
    x = x << 8 | s->p[s->off + (size_t)i];
  s->off += (size_t)bytes;
  *v = x;
  return 0;
}

/* How a type byte is laid out. */
typedef struct head {
  int size_bytes;   /* bytes of the size field after the type byte */
  int fixed;        /* payload bytes that do not depend on the size field */
  int kind;         /* 0 scalar, 1 size is payload bytes, 2 array, 3 map */
} head;

/* Layout of the type bytes 0xc0..0xdf; {0,0,-1} marks the invalid 0xc1. */
static const head heads[32] = {
    [0x00] = {0, 0, 0},  [0x01] = {0, 0, -1}, [0x02] = {0, 0, 0},
    [0x03] = {0, 0, 0},  [0x04] = {1, 0, 1},  [0x05] = {2, 0, 1},
    [0x06] = {4, 0, 1},  [0x07] = {1, 1, 1},  [0x08] = {2, 1, 1},
    [0x09] = {4, 1, 1},  [0x0a] = {0, 4, 0},  [0x0b] = {0, 8, 0},
    [0x0c] = {0, 1, 0},  [0x0d] = {0, 2, 0},  [0x0e] = {0, 4, 0},
    [0x0f] = {0, 8, 0},  [0x10] = {0, 1, 0},  [0x11] = {0, 2, 0},
    [0x12] = {0, 4, 0},  [0x13] = {0, 8, 0},  [0x14] = {0, 2, 0},
    [0x15] = {0, 3, 0},  [0x16] = {0, 5, 0},  [0x17] = {0, 9, 0},
    [0x18] = {0, 17, 0}, [0x19] = {1, 0, 1},  [0x1a] = {2, 0, 1},
    [0x1b] = {4, 0, 1},  [0x1c] = {2, 0, 2},  [0x1d] = {4, 0, 2},
    [0x1e] = {2, 0, 3},  [0x1f] = {4, 0, 3},
};

/* Decode the header at s->off: *skip gets the payload bytes to pass over,
 * *count the elements of a container (maps count keys and values). */
static int scan_head(scan *s, uint64_t *skip, uint64_t *count) {
  unsigned b = s->p[s->off++];
  *skip = *count = 0;
  if (b <= 0x7f || b >= 0xe0)
    return 0; /* fixint */
  if (b <= 0x8f) {
    *count = 2u * (b & 0x0f);
    return 0;
  }
  if (b <= 0x9f) {
    *count = b & 0x0f;
    return 0;
  }
  if (b <= 0xbf) {
    *skip = b & 0x1f;
    return 0;
  }
  head h = heads[b - 0xc0];
  if (h.kind < 0)
    return scan_fail(s, "malformed msgpack: invalid byte 0x%02x at byte %zu",
                     b, s->off - 1);
  uint64_t size = 0;
  int rc = scan_uint(s, h.size_bytes, &size);
  if (rc)
    return rc;
  *skip = (uint64_t)h.fixed + (h.kind == 1 ? size : 0);
  *count = h.kind == 2 ? size : h.kind == 3 ? 2 * size : 0;
  return 0;
}

/* One value finished: count it against its container, closing containers
 * that are now full. */
static void scan_complete(scan *s) {
  while (s->top > 0 && --s->left[s->top - 1] == 0)
    s->top--;
}

static int scan_value(scan *s) {
  if (s->off >= s->n)
    return scan_fail(s, "malformed msgpack: truncated at byte %zu", s->off);
  if (++s->values > TEENY_PROTO_MAX_VALUES)
    return scan_fail(s, "message has more than %u values",
                     TEENY_PROTO_MAX_VALUES);
  size_t at = s->off;
  uint64_t skip, count;
  int rc = scan_head(s, &skip, &count);
  if (rc)
    return rc;
  if (skip > s->n - s->off)
    return scan_fail(s, "malformed msgpack: value at byte %zu runs past the end",
                     at);
  s->off += (size_t)skip;
  if (count == 0) {
    scan_complete(s);
    return 0;
  }
  if (count > s->n - s->off)
    return scan_fail(s, "container at byte %zu declares %llu elements but only "
                     "%zu bytes follow", at, (unsigned long long)count,
                     s->n - s->off);
  if (s->top == TEENY_PROTO_MAX_DEPTH)
    return scan_fail(s, "message nests deeper than %d levels",
                     TEENY_PROTO_MAX_DEPTH);
  s->left[s->top++] = count;
  return 0;
}

static bool is_map_byte(unsigned char b) {
  return (b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf;
}

int teeny__mp_scan(const void *p, size_t n, char *err) {
  scan s;
  memset(&s, 0, sizeof s);
  s.p = p;
  s.n = n;
  s.err = err;
  if (n == 0)
    return scan_fail(&s, "empty message");
  if (!is_map_byte(s.p[0]))
    return scan_fail(&s, "message is not a msgpack map");
  do {
    int rc = scan_value(&s);
    if (rc)
      return rc;
  } while (s.top > 0);
  if (s.off != s.n)
    return scan_fail(&s, "%zu trailing bytes after the message", s.n - s.off);
  return 0;
}

/* ---- decoding ------------------------------------------------------------------ */

int teeny__dec_fail(teeny__dec *d, int code, const char *fmt, ...) {
  if (d->err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, TEENY_PROTO_ERR_LEN, fmt, ap);
    va_end(ap);
  }
  return code;
}

int teeny__dec_open(teeny__dec *d, teeny_msg_mem **mem, char *err,
                    const void *p, size_t n, const msgpack_object **root) {
  d->mem = mem;
  d->err = err;
  msgpack_unpacked_init(&d->up);
  if (err)
    err[0] = '\0';
  int rc = teeny__mp_scan(p, n, err);
  if (rc)
    return rc;
  size_t off = 0;
  msgpack_unpack_return r = msgpack_unpack_next(&d->up, p, n, &off);
  if (r == MSGPACK_UNPACK_NOMEM_ERROR)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory unpacking");
  if (r != MSGPACK_UNPACK_SUCCESS || off != n ||
      d->up.data.type != MSGPACK_OBJECT_MAP)
    return teeny__dec_fail(d, TEENY_E_PROTO, "malformed msgpack");
  *root = &d->up.data;
  return 0;
}

void teeny__dec_close(teeny__dec *d) { msgpack_unpacked_destroy(&d->up); }

/* "where.name" or "name" into out. */
static const char *path(char *out, size_t size, const char *where,
                        const char *name) {
  if (where)
    snprintf(out, size, "%s.%s", where, name);
  else
    snprintf(out, size, "%s", name);
  return out;
}

#define PATH(where, name) path((char[96]){0}, 96, where, name)

int teeny__dec_fields(teeny__dec *d, const msgpack_object *map,
                      const char *where, teeny__field *f, size_t n) {
  for (size_t j = 0; j < n; j++)
    f[j].v = NULL;
  for (uint32_t i = 0; i < map->via.map.size; i++) {
    const msgpack_object_kv *kv = &map->via.map.ptr[i];
    if (kv->key.type != MSGPACK_OBJECT_STR)
      return teeny__dec_fail(d, TEENY_E_PROTO, "%s%sfield names must be "
                             "strings", where ? where : "", where ? ": " : "");
    for (size_t j = 0; j < n; j++) {
      size_t len = strlen(f[j].name);
      if (kv->key.via.str.size != len ||
          memcmp(kv->key.via.str.ptr, f[j].name, len) != 0)
        continue;
      if (f[j].v)
        return teeny__dec_fail(d, TEENY_E_PROTO, "duplicate field '%s'",
                               PATH(where, f[j].name));
      f[j].v = &kv->val;
      break;
    }
  }
  return 0;
}

bool teeny__present(const teeny__field *f) {
  return f->v && f->v->type != MSGPACK_OBJECT_NIL;
}

static const char *type_name(const msgpack_object *v) {
  switch (v->type) {
  case MSGPACK_OBJECT_NIL: return "nil";
  case MSGPACK_OBJECT_BOOLEAN: return "boolean";
  case MSGPACK_OBJECT_POSITIVE_INTEGER: return "integer";
  case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "negative integer";
  case MSGPACK_OBJECT_FLOAT32: return "float";
  case MSGPACK_OBJECT_FLOAT64: return "float";
  case MSGPACK_OBJECT_STR: return "string";
  case MSGPACK_OBJECT_ARRAY: return "array";
  case MSGPACK_OBJECT_MAP: return "map";
  case MSGPACK_OBJECT_BIN: return "binary";
  case MSGPACK_OBJECT_EXT: return "extension";
  }
  return "unknown type";
}

/* 1: present; 0: absent and optional; <0: missing though required. */
static int need(teeny__dec *d, const char *where, const teeny__field *f,
                bool required) {
  if (teeny__present(f))
    return 1;
  if (!required)
    return 0;
  return teeny__dec_fail(d, TEENY_E_PROTO, "missing field '%s'",
                         PATH(where, f->name));
}

static int type_fail(teeny__dec *d, const char *where, const teeny__field *f,
                     const char *expected) {
  return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': expected %s, got %s",
                         PATH(where, f->name), expected, type_name(f->v));
}

static int range_fail(teeny__dec *d, const char *where, const teeny__field *f,
                      const char *what) {
  return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': %s out of range",
                         PATH(where, f->name), what);
}

int teeny__get_u64(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, uint64_t min, uint64_t max, uint64_t *out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  if (f->v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
    return range_fail(d, where, f, "negative value");
  if (f->v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
    return type_fail(d, where, f, "unsigned integer");
  uint64_t v = f->v->via.u64;
  if (v < min || v > max) {
    char what[80];
    snprintf(what, sizeof what, "%llu not in %llu..%llu", (unsigned long long)v,
             (unsigned long long)min, (unsigned long long)max);
    return range_fail(d, where, f, what);
  }
  *out = v;
  return 0;
}

int teeny__get_i64(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, int64_t min, int64_t max, int64_t *out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  int64_t v;
  if (f->v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
    if (f->v->via.u64 > (uint64_t)INT64_MAX)
      return range_fail(d, where, f, "value over 2^63-1");
    v = (int64_t)f->v->via.u64;
  } else if (f->v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
    v = f->v->via.i64;
  } else {
    return type_fail(d, where, f, "integer");
  }
  if (v < min || v > max) {
    char what[80];
    snprintf(what, sizeof what, "%lld not in %lld..%lld", (long long)v,
             (long long)min, (long long)max);
    return range_fail(d, where, f, what);
  }
  *out = v;
  return 0;
}

int teeny__get_int(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, int min, int max, int *out) {
  int64_t v = 0;
  int rc = teeny__get_i64(d, where, f, required, min, max, &v);
  if (rc == 0 && teeny__present(f))
    *out = (int)v;
  return rc;
}

int teeny__get_u32(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, uint32_t min, uint32_t max, uint32_t *out) {
  uint64_t v = 0;
  int rc = teeny__get_u64(d, where, f, required, min, max, &v);
  if (rc == 0 && teeny__present(f))
    *out = (uint32_t)v;
  return rc;
}

int teeny__get_bool(teeny__dec *d, const char *where, const teeny__field *f,
                    bool required, bool *out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  if (f->v->type != MSGPACK_OBJECT_BOOLEAN)
    return type_fail(d, where, f, "boolean");
  *out = f->v->via.boolean;
  return 0;
}

int teeny__get_ms(teeny__dec *d, const char *where, const teeny__field *f,
                  bool required, double max, double *out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  double v;
  switch (f->v->type) {
  case MSGPACK_OBJECT_POSITIVE_INTEGER:
    v = (double)f->v->via.u64;
    break;
  case MSGPACK_OBJECT_FLOAT32:
  case MSGPACK_OBJECT_FLOAT64:
    v = f->v->via.f64;
    break;
  case MSGPACK_OBJECT_NEGATIVE_INTEGER:
    return range_fail(d, where, f, "negative value");
  default:
    return type_fail(d, where, f, "number");
  }
  if (!isfinite(v) || v < 0 || v > max)
    return range_fail(d, where, f, "non-finite, negative or huge value");
  *out = v;
  return 0;
}

/* Copy a string or binary value of n bytes at p, checking length and NULs. */
static int copy_text(teeny__dec *d, const char *where, const teeny__field *f,
                     const char *p, size_t n, size_t maxlen, bool nul_ok,
                     int too_long, const char **out) {
  if (n > maxlen)
    return teeny__dec_fail(d, too_long, "field '%s': %zu bytes, more than %zu",
                           PATH(where, f->name), n, maxlen);
  if (!nul_ok && n && memchr(p, '\0', n))
    return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': contains a NUL byte",
                           PATH(where, f->name));
  char *s = teeny__mem_strndup(d->mem, p, n);
  if (!s)
    return teeny__dec_fail(d, TEENY_E_NOMEM, "out of memory");
  *out = s;
  return 0;
}

int teeny__get_str(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, size_t maxlen, const char **out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  if (f->v->type != MSGPACK_OBJECT_STR)
    return type_fail(d, where, f, "string");
  return copy_text(d, where, f, f->v->via.str.ptr, f->v->via.str.size, maxlen,
                   false, TEENY_E_PROTO, out);
}

int teeny__get_blob(teeny__dec *d, const char *where, const teeny__field *f,
                    bool required, size_t maxlen, bool limit_err,
                    const char **out, size_t *len) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  const char *p;
  size_t n;
  if (f->v->type == MSGPACK_OBJECT_STR) {
    p = f->v->via.str.ptr;
    n = f->v->via.str.size;
  } else if (f->v->type == MSGPACK_OBJECT_BIN) {
    p = f->v->via.bin.ptr;
    n = f->v->via.bin.size;
  } else {
    return type_fail(d, where, f, "binary or string");
  }
  rc = copy_text(d, where, f, p, n, maxlen, true,
                 limit_err ? TEENY_E_LIMIT : TEENY_E_PROTO, out);
  if (rc == 0)
    *len = n;
  return rc;
}

int teeny__get_enum(teeny__dec *d, const char *where, const teeny__field *f,
                    bool required, const char *const *names, int n, int *out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  if (f->v->type != MSGPACK_OBJECT_STR)
    return type_fail(d, where, f, "string");
  const char *p = f->v->via.str.ptr;
  size_t len = f->v->via.str.size;
  for (int i = 0; i < n; i++) {
    if (strlen(names[i]) == len && memcmp(names[i], p, len) == 0) {
      *out = i;
      return 0;
    }
  }
  char ex[TEENY__EXCERPT_LEN];
  teeny__excerpt(p, len, ex);
  return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': unknown value '%s'",
                         PATH(where, f->name), ex);
}

static int hex_lower(int c) {
  if (c >= '0' && c <= '9')
    return c;
  if (c >= 'a' && c <= 'f')
    return c;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 'a';
  return -1;
}

int teeny__get_key(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, char out[65]) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  if (f->v->type != MSGPACK_OBJECT_STR)
    return type_fail(d, where, f, "string");
  const char *p = f->v->via.str.ptr;
  if (f->v->via.str.size != 64)
    goto bad;
  for (int i = 0; i < 64; i++) {
    int c = hex_lower((unsigned char)p[i]);
    if (c < 0)
      goto bad;
    out[i] = (char)c;
  }
  out[64] = '\0';
  return 0;
bad:
  return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': expected 64 hex digits",
                         PATH(where, f->name));
}

static int get_container(teeny__dec *d, const char *where,
                         const teeny__field *f, bool required, size_t max,
                         msgpack_object_type t, const msgpack_object **out) {
  int rc = need(d, where, f, required);
  if (rc <= 0)
    return rc;
  if (f->v->type != t)
    return type_fail(d, where, f, t == MSGPACK_OBJECT_MAP ? "map" : "array");
  size_t n = t == MSGPACK_OBJECT_MAP ? f->v->via.map.size : f->v->via.array.size;
  if (n > max)
    return teeny__dec_fail(d, TEENY_E_PROTO, "field '%s': %zu entries, more "
                           "than %zu", PATH(where, f->name), n, max);
  *out = f->v;
  return 0;
}

int teeny__get_map(teeny__dec *d, const char *where, const teeny__field *f,
                   bool required, size_t max, const msgpack_object **out) {
  return get_container(d, where, f, required, max, MSGPACK_OBJECT_MAP, out);
}

int teeny__get_array(teeny__dec *d, const char *where, const teeny__field *f,
                     bool required, size_t max, const msgpack_object **out) {
  return get_container(d, where, f, required, max, MSGPACK_OBJECT_ARRAY, out);
}

void teeny__excerpt(const char *p, size_t n, char out[TEENY__EXCERPT_LEN]) {
  size_t k = n > 32 ? 32 : n;
  for (size_t i = 0; i < k; i++) {
    unsigned char c = (unsigned char)p[i];
    out[i] = c >= 0x20 && c < 0x7f && c != '\'' ? (char)c : '?';
  }
  if (n > k)
    memcpy(out + k, "...", 3), k += 3;
  out[k] = '\0';
}

/* ---- emit sets ------------------------------------------------------------------ */

static const struct {
  const char *name;
  unsigned bit;
} emits[] = {
    {"ptx", TEENY_MSG_EMIT_PTX},
    {"mlir", TEENY_MSG_EMIT_MLIR},
    {"source", TEENY_MSG_EMIT_SOURCE},
};

int teeny__get_emit(teeny__dec *d, const teeny__field *f, unsigned *out) {
  const msgpack_object *a = NULL;
  int rc = teeny__get_array(d, NULL, f, false, TEENY_PROTO_MAX_EMIT, &a);
  if (rc || !a)
    return rc;
  static const char *const names[] = {"ptx", "mlir", "source"};
  unsigned emit = 0;
  for (uint32_t i = 0; i < a->via.array.size; i++) {
    char name[32];
    snprintf(name, sizeof name, "emit[%u]", (unsigned)i);
    teeny__field e = {name, &a->via.array.ptr[i]};
    int which = 0;
    rc = teeny__get_enum(d, NULL, &e, true, names, 3, &which);
    if (rc)
      return rc;
    emit |= emits[which].bit;
  }
  *out = emit;
  return 0;
}

size_t teeny__emit_count(unsigned emit) {
  size_t n = 0;
  for (size_t i = 0; i < TEENY_ARRAY_LEN(emits); i++)
    n += (emit & emits[i].bit) != 0;
  return n;
}

void teeny__kv_emit(teeny__enc *e, unsigned emit) {
  teeny__put_str(e, "emit");
  teeny__put_array(e, teeny__emit_count(emit));
  for (size_t i = 0; i < TEENY_ARRAY_LEN(emits); i++)
    if (emit & emits[i].bit)
      teeny__put_str(e, emits[i].name);
}

/* ---- encoding ------------------------------------------------------------------ */

static int buf_sink(void *data, const char *p, size_t n) {
  teeny_buf *b = data;
  teeny__buf_append(b, p, n);
  return b->oom ? -1 : 0;
}

void teeny__enc_init(teeny__enc *e, teeny_buf *out) {
  e->out = out;
  e->start = out->len;
  msgpack_packer_init(&e->pk, out, buf_sink);
}

int teeny__enc_end(teeny__enc *e, int rc) {
  if (rc == 0 && e->out->oom)
    rc = TEENY_E_NOMEM;
  if (rc && e->out->p && e->start <= e->out->len) {
    e->out->len = e->start;
    e->out->p[e->start] = '\0';
  }
  return rc;
}

void teeny__put_map(teeny__enc *e, size_t n) {
  msgpack_pack_map(&e->pk, n);
}

void teeny__put_array(teeny__enc *e, size_t n) {
  msgpack_pack_array(&e->pk, n);
}

void teeny__put_strn(teeny__enc *e, const char *s, size_t n) {
  msgpack_pack_str(&e->pk, n);
  msgpack_pack_str_body(&e->pk, s, n);
}

void teeny__put_str(teeny__enc *e, const char *s) {
  if (s)
    teeny__put_strn(e, s, strlen(s));
  else
    msgpack_pack_nil(&e->pk);
}

void teeny__put_bin(teeny__enc *e, const void *p, size_t n) {
  msgpack_pack_bin(&e->pk, n);
  msgpack_pack_bin_body(&e->pk, p, n);
}

void teeny__put_u64(teeny__enc *e, uint64_t v) { msgpack_pack_uint64(&e->pk, v); }

void teeny__put_i64(teeny__enc *e, int64_t v) { msgpack_pack_int64(&e->pk, v); }

void teeny__put_f64(teeny__enc *e, double v) { msgpack_pack_double(&e->pk, v); }

void teeny__put_bool(teeny__enc *e, bool v) {
  if (v)
    msgpack_pack_true(&e->pk);
  else
    msgpack_pack_false(&e->pk);
}

void teeny__kv_str(teeny__enc *e, const char *k, const char *v) {
  teeny__put_str(e, k);
  teeny__put_str(e, v);
}

void teeny__kv_bin(teeny__enc *e, const char *k, const void *p, size_t n) {
  teeny__put_str(e, k);
  teeny__put_bin(e, p, n);
}

void teeny__kv_u64(teeny__enc *e, const char *k, uint64_t v) {
  teeny__put_str(e, k);
  teeny__put_u64(e, v);
}

void teeny__kv_i64(teeny__enc *e, const char *k, int64_t v) {
  teeny__put_str(e, k);
  teeny__put_i64(e, v);
}

void teeny__kv_f64(teeny__enc *e, const char *k, double v) {
  teeny__put_str(e, k);
  teeny__put_f64(e, v);
}

void teeny__kv_bool(teeny__enc *e, const char *k, bool v) {
  teeny__put_str(e, k);
  teeny__put_bool(e, v);
}

bool teeny__str_ok(const char *s, size_t maxlen) {
  return s && strnlen(s, maxlen + 1) <= maxlen;
}
