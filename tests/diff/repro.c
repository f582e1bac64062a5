/*
 * tests/diff/repro.c — the text form of a case (repro.h).
 *
 * One directive per line, '#' starts a comment:
 *   kernel NAME | target sm_90a | num_warps 4 | grid X Y Z | seed N
 *   shift N               (plain pointers' buffers start N elements past 16
 *                         bytes: compiled with teeny.unaligned)
 *   dtype NAME DTYPE      (a TEENY_DTYPE generic and its binding)
 *   const NAME VALUE
 *   param NAME DTYPE scalar VALUE
 *   param NAME DTYPE ptr COUNT FILL LO HI SEED TOL CATEGORY
 *   param NAME DTYPE tensormap RANK BLOCK...  (NAME_tensormap of a
 *                         tensor_desc(DTYPE, BLOCK...) parameter, BLOCK
 *                         const names; its other 2 x RANK launch
 *                         parameters follow as ptr and scalar lines)
 *   known TEXT            (a reproducer of a known, not yet fixed bug)
 *   source FILE           (the kernel, relative to the text file)
 *   source-inline         (the kernel is the rest of the text)
 * Parameters appear in the kernel's parameter order.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/diff/repro.h"

typedef struct tbuf {
  char *s;
  size_t n, cap;
} tbuf;

static void tb_printf(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(tbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = b->cap - b->n;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0)
      return;
    if (b->s && (size_t)k < room) {
      b->n += (size_t)k;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->n + (size_t)k + 1)
      cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns)
      abort();
    b->s = ns;
    b->cap = cap;
  }
}

char *dfz_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  tbuf b = {0};
  char chunk[65536];
  size_t k;
  tb_printf(&b, "%s", "");
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
    tb_printf(&b, "%.*s", (int)k, chunk);
  fclose(f);
  return b.s;
}

char *dfz_case_to_text(const dfz_case *c, const char *source_file) {
  tbuf b = {0};
  tb_printf(&b, "kernel %s\ntarget %s\nnum_warps %d\ngrid %u %u %u\n", c->kernel, c->target,
            c->num_warps, c->grid[0], c->grid[1], c->grid[2]);
  if (c->seed)
    tb_printf(&b, "seed %" PRIu64 "\n", c->seed);
  if (c->shift)
    tb_printf(&b, "shift %d\n", c->shift);
  if (c->gname[0])
    tb_printf(&b, "dtype %s %s\n", c->gname, teeny_dtype_name(c->gdt));
  for (int i = 0; i < c->nconsts; i++)
    tb_printf(&b, "const %s %" PRId64 "\n", c->consts[i].name, c->consts[i].value);
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    if (p->desc_rank > 0) {
      tb_printf(&b, "param %s %s tensormap %d", p->name, teeny_dtype_name(p->dt), p->desc_rank);
      for (int d = 0; d < p->desc_rank; d++)
        tb_printf(&b, " %s", p->desc_block[d]);
      tb_printf(&b, "\n");
      continue;
    }
    if (!p->is_ptr) {
      if (dfz_is_float(p->dt))
        tb_printf(&b, "param %s %s scalar %.17g\n", p->name, teeny_dtype_name(p->dt), p->fval);
      else
        tb_printf(&b, "param %s %s scalar %" PRId64 "\n", p->name, teeny_dtype_name(p->dt), p->ival);
      continue;
    }
    tb_printf(&b, "param %s %s ptr %zu %s %.17g %.17g %" PRIu64 " %.17g %s\n", p->name,
              teeny_dtype_name(p->dt), p->count, dfz_fill_name(p->fill.kind), p->fill.lo,
              p->fill.hi, p->fill.seed, p->tol, p->cat[0] ? p->cat : "-");
  }
  if (source_file)
    tb_printf(&b, "source %s\n", source_file);
  else
    tb_printf(&b, "source-inline\n%s", c->source ? c->source : "");
  return b.s;
}

static bool fail(char *err, size_t errsz, int line, const char *fmt, const char *arg) {
  int off = snprintf(err, errsz, "line %d: ", line);
  if (off >= 0 && (size_t)off < errsz)
    snprintf(err + off, errsz - (size_t)off, fmt, arg);
  return false;
}

static bool parse_param(dfz_case *c, char *rest, int line, char *err, size_t errsz) {
  if (c->nparams == DFZ_MAX_PARAMS)
    return fail(err, errsz, line, "%s", "too many parameters");
  dfz_param *p = &c->params[c->nparams];
  memset(p, 0, sizeof *p);
  char name[DFZ_NAME_LEN], dt[16], kind[16], fill[16], cat[DFZ_NAME_LEN];
  int used = 0;
  if (sscanf(rest, "%23s %15s %15s %n", name, dt, kind, &used) < 3)
    return fail(err, errsz, line, "%s", "param NAME DTYPE scalar|ptr ...");
  snprintf(p->name, sizeof p->name, "%s", name);
  p->dt = teeny_dtype_parse(dt);
  if (p->dt == TEENY_DT_VOID || p->dt == TEENY_DT_PTR)
    return fail(err, errsz, line, "unknown dtype '%s'", dt);
  char *v = rest + used;
  if (strcmp(kind, "scalar") == 0) {
    if (dfz_is_float(p->dt))
      p->fval = strtod(v, NULL);
    else
      p->ival = strtoll(v, NULL, 10);
  } else if (strcmp(kind, "tensormap") == 0) {
    char b[4][DFZ_NAME_LEN];
    int n = sscanf(v, "%d %23s %23s %23s %23s", &p->desc_rank, b[0], b[1], b[2], b[3]);
    if (p->desc_rank < 1 || p->desc_rank > 4 || n != 1 + p->desc_rank)
      return fail(err, errsz, line, "%s", "param NAME DTYPE tensormap RANK BLOCK...");
    for (int d = 0; d < p->desc_rank; d++)
      memcpy(p->desc_block[d], b[d], DFZ_NAME_LEN); /* %23s: terminated */
  } else if (strcmp(kind, "ptr") == 0) {
    p->is_ptr = true;
    unsigned long long seed;
    if (sscanf(v, "%zu %15s %lf %lf %llu %lf %23s", &p->count, fill, &p->fill.lo, &p->fill.hi,
               &seed, &p->tol, cat) != 7)
      return fail(err, errsz, line, "%s", "param NAME DTYPE ptr COUNT FILL LO HI SEED TOL CAT");
    p->fill.seed = seed;
    p->fill.kind = dfz_fill_parse(fill);
    if (p->fill.kind == DFZ_FILL__COUNT)
      return fail(err, errsz, line, "unknown fill '%s'", fill);
    snprintf(p->cat, sizeof p->cat, "%s", strcmp(cat, "-") ? cat : "");
  } else {
    return fail(err, errsz, line, "'%s': scalar, ptr or tensormap", kind);
  }
  c->nparams++;
  return true;
}

bool dfz_case_from_text(const char *text, const char *dir, dfz_case *c, char *known,
                        size_t knownsz, char *err, size_t errsz) {
  memset(c, 0, sizeof *c);
  snprintf(c->target, sizeof c->target, "sm_90a");
  c->num_warps = 4;
  c->grid[0] = c->grid[1] = c->grid[2] = 1;
  if (known && knownsz)
    known[0] = '\0';
  const char *p = text;
  int line = 0;
  while (*p) {
    line++;
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    const char *next = eol ? eol + 1 : p + len;
    char key[32];
    int used = 0;
    if (buf[0] == '#' || sscanf(buf, "%31s %n", key, &used) < 1) {
      p = next;
      continue;
    }
    char *rest = buf + used;
    if (strcmp(key, "source-inline") == 0) {
      c->source = strdup(next);
      break;
    } else if (strcmp(key, "source") == 0) {
      char path[2048];
      snprintf(path, sizeof path, "%s%s%s", dir && *rest != '/' ? dir : "",
               dir && *rest != '/' ? "/" : "", rest);
      c->source = dfz_read_file(path);
      if (!c->source)
        return fail(err, errsz, line, "cannot read the kernel file %s", path);
    } else if (strcmp(key, "kernel") == 0) {
      snprintf(c->kernel, sizeof c->kernel, "%s", rest);
    } else if (strcmp(key, "target") == 0) {
      snprintf(c->target, sizeof c->target, "%s", rest);
    } else if (strcmp(key, "num_warps") == 0) {
      c->num_warps = atoi(rest);
    } else if (strcmp(key, "grid") == 0) {
      if (sscanf(rest, "%u %u %u", &c->grid[0], &c->grid[1], &c->grid[2]) != 3)
        return fail(err, errsz, line, "%s", "grid X Y Z");
    } else if (strcmp(key, "seed") == 0) {
      c->seed = strtoull(rest, NULL, 10);
    } else if (strcmp(key, "shift") == 0) {
      c->shift = atoi(rest);
      if (c->shift < 0 || c->shift > 8)
        return fail(err, errsz, line, "%s", "shift 0 to 8 (elements)");
    } else if (strcmp(key, "dtype") == 0) {
      char name[DFZ_NAME_LEN], dt[16];
      if (sscanf(rest, "%23s %15s", name, dt) != 2 || teeny_dtype_parse(dt) == TEENY_DT_VOID)
        return fail(err, errsz, line, "%s", "dtype NAME DTYPE");
      snprintf(c->gname, sizeof c->gname, "%s", name);
      c->gdt = teeny_dtype_parse(dt);
    } else if (strcmp(key, "const") == 0) {
      char name[DFZ_NAME_LEN];
      long long v;
      if (c->nconsts == DFZ_MAX_CONSTS || sscanf(rest, "%23s %lld", name, &v) != 2)
        return fail(err, errsz, line, "%s", "const NAME VALUE");
      snprintf(c->consts[c->nconsts].name, DFZ_NAME_LEN, "%s", name);
      c->consts[c->nconsts++].value = v;
    } else if (strcmp(key, "param") == 0) {
      if (!parse_param(c, rest, line, err, errsz))
        return false;
    } else if (strcmp(key, "known") == 0) {
      if (known && knownsz)
        snprintf(known, knownsz, "%s", rest);
    } else if (strcmp(key, "expect") != 0 && strcmp(key, "replay") != 0 &&
               strcmp(key, "teenyc") != 0) {
      return fail(err, errsz, line, "unknown directive '%s'", key);
    }
    p = next;
  }
  for (int i = 0; i < c->nparams; i++) /* a tensormap's other parameters follow it */
    for (int k = 1; c->params[i].desc_rank > 0 && k <= 2 * c->params[i].desc_rank; k++) {
      if (i + k >= c->nparams)
        return fail(err, errsz, line, "tensormap '%s' lacks its other parameters",
                    c->params[i].name);
      c->params[i + k].desc_part = true;
    }
  if (!c->source)
    return fail(err, errsz, line, "%s", "no source or source-inline line");
  if (!c->kernel[0])
    return fail(err, errsz, line, "%s", "no kernel line");
  return true;
}

bool dfz_repro_read(const char *txt_path, dfz_case *c, char *known, size_t knownsz, char *err,
                    size_t errsz) {
  char *text = dfz_read_file(txt_path);
  if (!text) {
    snprintf(err, errsz, "cannot read %s: %s", txt_path, strerror(errno));
    return false;
  }
  char dir[2048];
  snprintf(dir, sizeof dir, "%s", txt_path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(dir, sizeof dir, ".");
  bool ok = dfz_case_from_text(text, dir, c, known, knownsz, err, errsz);
  free(text);
  return ok;
}

/* ---- .npy ----------------------------------------------------------------------------- */

static const char *npy_descr(teeny_dtype dt) {
  switch (dt) {
  case TEENY_DT_BOOL: return "|b1";
  case TEENY_DT_I8: return "|i1";
  case TEENY_DT_I16: return "<i2";
  case TEENY_DT_I32: return "<i4";
  case TEENY_DT_I64: return "<i8";
  case TEENY_DT_U8: return "|u1";
  case TEENY_DT_U16: return "<u2";
  case TEENY_DT_U32: return "<u4";
  case TEENY_DT_U64: return "<u8";
  case TEENY_DT_F16: return "<f2";
  case TEENY_DT_BF16: return "<u2"; /* numpy has no bfloat16: the raw bits */
  case TEENY_DT_F32: return "<f4";
  default: return "<f8";
  }
}

static bool write_npy(const char *path, const dfz_param *p) {
  size_t bytes = p->count * (size_t)dfz_esize(p->dt);
  void *data = malloc(bytes ? bytes : 1);
  if (!data)
    return false;
  dfz_fill_buffer(&p->fill, p->dt, data, p->count);
  char header[256];
  int hl = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                    npy_descr(p->dt), p->count);
  int total = 10 + hl + 1;
  int pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(data);
    return false;
  }
  unsigned short hlen = (unsigned short)(hl + pad + 1);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(hlen & 0xff, f);
  fputc(hlen >> 8, f);
  fwrite(header, 1, (size_t)hl, f);
  for (int i = 0; i < pad; i++)
    fputc(' ', f);
  fputc('\n', f);
  fwrite(data, 1, bytes, f);
  free(data);
  return fclose(f) == 0;
}

/* The teenyc run command line for engine (interp or emu). */
static void teenyc_command(tbuf *b, const char *name, const dfz_case *c, const char *engine) {
  tb_printf(b, "teenyc run %s.c --kernel %s --target %s --num-warps %d", name, c->kernel,
            c->target, c->num_warps);
  if (c->gname[0])
    tb_printf(b, " --dtype %s=%s", c->gname, teeny_dtype_name(c->gdt));
  for (int i = 0; i < c->nconsts; i++)
    tb_printf(b, " --const %s=%" PRId64, c->consts[i].name, c->consts[i].value);
  if (dfz_case_unaligned(c)) /* the same kernel (teenyc run's buffers are aligned) */
    tb_printf(b, " --const %s=%" PRIu64, TEENY_OPT_UNALIGNED, dfz_case_unaligned(c));
  tb_printf(b, " --grid %u,%u,%u", c->grid[0], c->grid[1], c->grid[2]);
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    if (p->desc_rank > 0)
      continue; /* teenyc run makes it */
    if (!p->is_ptr) {
      if (dfz_is_float(p->dt))
        tb_printf(b, " --arg %s=%.17g", p->name, p->fval);
      else
        tb_printf(b, " --arg %s=%" PRId64, p->name, p->ival);
    } else if (p->fill.kind == DFZ_FILL_ZEROS || p->fill.kind == DFZ_FILL_POISON) {
      tb_printf(b, " --fill %s=%zu:zeros", p->name, p->count);
    } else if (p->fill.kind == DFZ_FILL_IOTA) {
      tb_printf(b, " --fill %s=%zu:iota", p->name, p->count);
    } else {
      tb_printf(b, " --arg %s=%s.%s.npy", p->name, name, p->name);
    }
  }
  if (strcmp(engine, "both") == 0) {
    double tol = 0;
    for (int i = 0; i < c->nparams; i++)
      if (c->params[i].is_ptr && c->params[i].tol > tol)
        tol = c->params[i].tol;
    if (tol > 0)
      tb_printf(b, " --atol %.9g", tol);
    tb_printf(b, " --engine both\n");
    return;
  }
  tb_printf(b, " --engine %s --out %s.%s\n", engine, name, engine);
}

bool dfz_repro_write(const char *dir, const char *name, const dfz_case *c, const dfz_outcome *o,
                     char *err, size_t errsz) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s.c", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fputs(c->source, f) < 0 || fclose(f) != 0) {
    snprintf(err, errsz, "cannot write %s: %s", path, strerror(errno));
    return false;
  }
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    if (!p->is_ptr || p->fill.kind == DFZ_FILL_ZEROS || p->fill.kind == DFZ_FILL_POISON ||
        p->fill.kind == DFZ_FILL_IOTA)
      continue;
    snprintf(path, sizeof path, "%s/%s.%s.npy", dir, name, p->name);
    if (!write_npy(path, p)) {
      snprintf(err, errsz, "cannot write %s", path);
      return false;
    }
  }
  tbuf b = {0};
  tb_printf(&b, "# difffuzz reproducer: %s (%s)\n", o ? o->cat : "?",
            o ? dfz_status_name(o->status) : "?");
  if (o && o->detail[0]) {
    char line[512];
    snprintf(line, sizeof line, "%.500s", o->detail);
    for (char *q = line; *q; q++)
      if (*q == '\n')
        *q = ' ';
    tb_printf(&b, "# %s\n", line);
  }
  tb_printf(&b, "# replay (interpreter against the emulator): difffuzz --replay %s.txt\n", name);
  tb_printf(&b, "# the same with teenyc run: both engines, compared (exit 1 if they differ;\n"
               "# --atol is the largest buffer tolerance), then each writing every pointer\n"
               "# argument as .npy:\n# ");
  teenyc_command(&b, name, c, "both");
  tb_printf(&b, "# ");
  teenyc_command(&b, name, c, "interp");
  tb_printf(&b, "# ");
  teenyc_command(&b, name, c, "emu");
  if (o)
    tb_printf(&b, "expect %s %s\n", dfz_status_name(o->status), o->cat);
  char src[256];
  snprintf(src, sizeof src, "%s.c", name);
  char *body = dfz_case_to_text(c, src);
  tb_printf(&b, "%s", body);
  free(body);
  snprintf(path, sizeof path, "%s/%s.txt", dir, name);
  f = fopen(path, "wb");
  bool ok = f && fputs(b.s, f) >= 0;
  if (f && fclose(f) != 0)
    ok = false;
  if (!ok)
    snprintf(err, errsz, "cannot write %s: %s", path, strerror(errno));
  free(b.s);
  return ok;
}
