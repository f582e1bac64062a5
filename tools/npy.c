/*
 * tools/npy.c — reading and writing .npy files (tools/npy.h).
 *
 * A .npy file is the magic "\x93NUMPY", a version (1.0: a 2-byte header
 * length; 2.0 and 3.0: 4 bytes), a header that is a Python dict literal
 * ({'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }) padded
 * with spaces to a multiple of 64 bytes and ended by '\n', then the raw
 * data.  Only what kernels can use is accepted: little-endian (or
 * single-byte) scalar dtypes in C order; anything else is refused with a
 * message saying what was found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/npy.h"

#define NPY_HEADER_MAX 65536 /* longer headers are not arrays we can use */

const char *npy_descr(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL: return "|b1";
  case TEENY_DT_I8: return "|i1";
  case TEENY_DT_U8: return "|u1";
  case TEENY_DT_I16: return "<i2";
  case TEENY_DT_U16: return "<u2";
  case TEENY_DT_I32: return "<i4";
  case TEENY_DT_U32: return "<u4";
  case TEENY_DT_I64: return "<i8";
  case TEENY_DT_U64: return "<u8";
  case TEENY_DT_F16: return "<f2";
  case TEENY_DT_BF16: return "<u2";
  case TEENY_DT_F8E4M3: /* numpy has no fp8: the bits */
  case TEENY_DT_F8E5M2: return "|u1";
  case TEENY_DT_F32: return "<f4";
  case TEENY_DT_F64: return "<f8";
  default: return NULL;
  }
}

static int fail(char *err, size_t errsz, const char *fmt, const char *a, const char *b) {
  snprintf(err, errsz, fmt, a, b);
  return -1;
}

/* The value after 'key': in the header dict (a pointer into h), or NULL. */
static const char *dict_value(const char *h, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "'%s'", key);
  const char *p = strstr(h, pat);
  if (!p)
    return NULL;
  p += strlen(pat);
  while (*p == ' ')
    p++;
  if (*p != ':')
    return NULL;
  p++;
  while (*p == ' ')
    p++;
  return p;
}

static int parse_header(const char *h, npy_array *a, const char *path, char *err,
                        size_t errsz) {
  const char *d = dict_value(h, "descr");
  if (!d || *d != '\'')
    return fail(err, errsz, "%s: no 'descr' in the .npy header%s", path, "");
  d++;
  size_t n = strcspn(d, "'");
  if (n == 0 || n >= sizeof a->descr || d[n] != '\'')
    return fail(err, errsz, "%s: the .npy dtype is not a simple scalar dtype (%s)", path, h);
  memcpy(a->descr, d, n);
  a->descr[n] = '\0';
  const char *f = dict_value(h, "fortran_order");
  if (!f || strncmp(f, "False", 5) != 0)
    return fail(err, errsz, "%s: only C-order arrays are supported (fortran_order is %s)",
                path, f && strncmp(f, "True", 4) == 0 ? "True" : "missing");
  const char *s = dict_value(h, "shape");
  if (!s || *s != '(')
    return fail(err, errsz, "%s: no 'shape' in the .npy header%s", path, "");
  s++;
  a->ndim = 0;
  a->count = 1;
  for (;;) {
    while (*s == ' ' || *s == ',')
      s++;
    if (*s == ')')
      break;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || a->ndim == NPY_MAX_DIMS)
      return fail(err, errsz, "%s: cannot read the .npy shape (%s)", path, h);
    a->shape[a->ndim++] = (size_t)v;
    if (v && a->count > (size_t)-1 / v)
      return fail(err, errsz, "%s: the .npy shape is too large%s", path, "");
    a->count *= (size_t)v;
    s = end;
  }
  char kind = a->descr[1];
  if ((a->descr[0] != '<' && a->descr[0] != '|') ||
      (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f'))
    return fail(err, errsz, "%s: dtype '%s' is not a little-endian bool, int or float", path,
                a->descr);
  a->itemsize = (size_t)atoi(a->descr + 2);
  if (a->itemsize != 1 && a->itemsize != 2 && a->itemsize != 4 && a->itemsize != 8)
    return fail(err, errsz, "%s: dtype '%s' has an unsupported size", path, a->descr);
  return 0;
}

int npy_read(const char *path, npy_array *a, char *err, size_t errsz) {
  memset(a, 0, sizeof *a);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, errsz, "cannot open %s: %s", path, strerror(errno));
  unsigned char pre[10];
  char *hdr = NULL;
  int rc = -1;
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    fail(err, errsz, "%s is not a .npy file (no \\x93NUMPY magic)%s", path, "");
    goto out;
  }
  size_t hlen;
  if (pre[6] == 1) {
    if (fread(pre + 8, 1, 2, f) != 2)
      goto truncated;
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  } else if (pre[6] == 2 || pre[6] == 3) {
    unsigned char l[4];
    if (fread(l, 1, 4, f) != 4)
      goto truncated;
    hlen = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
  } else {
    fail(err, errsz, "%s: unknown .npy format version%s", path, "");
    goto out;
  }
  if (hlen > NPY_HEADER_MAX) {
    fail(err, errsz, "%s: the .npy header is too long%s", path, "");
    goto out;
  }
  hdr = malloc(hlen + 1);
  if (!hdr || fread(hdr, 1, hlen, f) != hlen)
    goto truncated;
  hdr[hlen] = '\0';
  if (parse_header(hdr, a, path, err, errsz))
    goto out;
  size_t bytes = a->count * a->itemsize;
  a->data = malloc(bytes ? bytes : 1);
  if (!a->data) {
    fail(err, errsz, "%s: out of memory%s", path, "");
    goto out;
  }
  if (fread(a->data, 1, bytes, f) != bytes)
    goto truncated;
  if (fgetc(f) != EOF) {
    fail(err, errsz, "%s: more data than its shape says%s", path, "");
    goto out;
  }
  rc = 0;
  goto out;
truncated:
  fail(err, errsz, "%s is truncated (shorter than its header says)%s", path, "");
out:
  free(hdr);
  fclose(f);
  if (rc)
    npy_free(a);
  return rc;
}

int npy_write(const char *path, teeny_dtype dt, const void *data, size_t count, int ndim,
              const size_t *shape, char *err, size_t errsz) {
  const char *descr = npy_descr(dt);
  if (!descr)
    return fail(err, errsz, "%s: dtype %s has no .npy form", path, teeny_dtype_name(dt));
  char dims[256];
  size_t n = 0;
  if (ndim <= 0) {
    n = (size_t)snprintf(dims, sizeof dims, "%zu,", count);
  } else {
    for (int i = 0; i < ndim && n < sizeof dims; i++)
      n += (size_t)snprintf(dims + n, sizeof dims - n, "%zu%s", shape[i],
                            ndim == 1 || i + 1 < ndim ? ", " : "");
  }
  char hdr[512];
  int h = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                   descr, dims);
  size_t total = 10 + (size_t)h + 1, pad = (64 - total % 64) % 64;
  size_t hlen = (size_t)h + pad + 1;
  FILE *f = fopen(path, "wb");
  if (!f)
    return fail(err, errsz, "cannot create %s: %s", path, strerror(errno));
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                           (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
  size_t bytes = count * (size_t)teeny_dtype_size(dt);
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)h, f) == (size_t)h;
  for (size_t i = 0; ok && i < pad; i++)
    ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF && fwrite(data, 1, bytes, f) == bytes;
  if (fclose(f) != 0 || !ok)
    return fail(err, errsz, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

void npy_free(npy_array *a) {
  free(a->data);
  a->data = NULL;
}
