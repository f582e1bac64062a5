/*
 * tests/diff/bufs.c — what a run of a case needs before it starts: the
 * spec from the case's source, bindings, target and num_warps; host
 * buffers filled as the case says (guarded ones for engines that do not
 * check bounds: each ends at a PROT_NONE page, its 16-byte rounding
 * filled with a canary); the kernel arguments; diagnostics as text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/diff/run.h"

#define CANARY 0x5A

void dfz_diags_text(const teeny_diags *d, char *out, size_t size) {
  size_t off = 0;
  if (size)
    out[0] = '\0';
  for (size_t i = 0; d && i < d->n && i < 4 && off + 1 < size; i++) {
    char line[1024];
    teeny_diag_format(&d->v[i], line, sizeof line);
    off += (size_t)snprintf(out + off, size - off, "%s", line);
  }
}

teeny_spec *dfz_case_spec(const dfz_case *c, char *err, size_t errsz) {
  teeny_const_binding cb[DFZ_MAX_CONSTS + 1];
  int nc = c->nconsts;
  for (int i = 0; i < c->nconsts; i++) {
    cb[i].name = c->consts[i].name;
    cb[i].value = c->consts[i].value;
  }
  uint64_t off16 = dfz_case_unaligned(c);
  if (off16)
    cb[nc++] = (teeny_const_binding){TEENY_OPT_UNALIGNED, (int64_t)off16};
  teeny_compile_req req;
  memset(&req, 0, sizeof req);
  req.source = c->source;
  req.source_len = c->source ? strlen(c->source) : 0;
  req.filename = "<difffuzz>";
  req.kernel = c->kernel;
  req.consts = cb;
  req.nconsts = (size_t)nc;
  teeny_dtype_binding db = {c->gname, teeny_dtype_name(c->gdt)};
  if (c->gname[0]) {
    req.dtypes = &db;
    req.ndtypes = 1;
  }
  req.target = c->target;
  req.num_warps = c->num_warps;
  teeny_diags d;
  teeny_diags_init(&d);
  teeny_spec *s = NULL;
  int rc = teeny_spec_create(&req, &s, &d);
  if (rc) {
    int off = snprintf(err, errsz, "%s: ", teeny_strerror(rc));
    dfz_diags_text(&d, err + off, errsz > (size_t)off ? errsz - (size_t)off : 0);
  }
  teeny_diags_close(&d);
  return rc ? NULL : s;
}

/* ---- buffers ------------------------------------------------------------------------------ */

/* Buffer i: bytes starting `shift` bytes past a 16-byte boundary, the
 * rest of its last 16 bytes a canary, then a PROT_NONE page. */
static bool guarded_alloc(dfz_bufs *b, int i, size_t bytes, size_t shift) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t rounded = (shift + bytes + 15) & ~(size_t)15;
  size_t body = (rounded + page - 1) / page * page;
  if (body == 0)
    body = page;
  b->maplen[i] = body + page;
  b->map[i] = mmap(NULL, b->maplen[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b->map[i] == MAP_FAILED) {
    b->map[i] = NULL;
    return false;
  }
  mprotect((char *)b->map[i] + body, page, PROT_NONE);
  b->data[i] = (char *)b->map[i] + body - rounded + shift;
  b->slack[i] = rounded - shift - bytes;
  memset((char *)b->data[i] + bytes, CANARY, b->slack[i]);
  return true;
}

bool dfz_bufs_make(const dfz_case *c, bool guarded, dfz_bufs *b) {
  memset(b, 0, sizeof *b);
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    if (p->desc_rank > 0) { /* a zero tensormap: host engines read base, shapes, strides */
      b->bytes[i] = 128;
      if (!(b->data[i] = calloc(1, 128)))
        return false;
      continue;
    }
    if (!p->is_ptr)
      continue;
    size_t bytes = p->count * (size_t)dfz_esize(p->dt);
    b->bytes[i] = bytes;
    if (guarded) {
      if (!guarded_alloc(b, i, bytes, dfz_case_shift_bytes(c, i)))
        return false;
    } else {
      b->data[i] = malloc(bytes ? bytes : 1);
      if (!b->data[i])
        return false;
    }
    dfz_fill_buffer(&p->fill, p->dt, b->data[i], p->count);
  }
  return true;
}

bool dfz_bufs_canary_ok(const dfz_case *c, const dfz_bufs *b, int *which) {
  for (int i = 0; i < c->nparams; i++) {
    if (!b->map[i])
      continue;
    const unsigned char *t = (const unsigned char *)b->data[i] + b->bytes[i];
    for (size_t k = 0; k < b->slack[i]; k++)
      if (t[k] != CANARY) {
        *which = i;
        return false;
      }
  }
  return true;
}

void dfz_bufs_free(const dfz_case *c, dfz_bufs *b) {
  for (int i = 0; i < c->nparams; i++) {
    if (b->map[i])
      munmap(b->map[i], b->maplen[i]);
    else
      free(b->data[i]);
    b->data[i] = b->map[i] = NULL;
  }
}

void dfz_case_args(const dfz_case *c, const dfz_bufs *b, teeny_interp_arg *args) {
  for (int i = 0; i < c->nparams; i++) {
    const dfz_param *p = &c->params[i];
    memset(&args[i], 0, sizeof args[i]);
    if (p->is_ptr || p->desc_rank > 0) {
      args[i].data = b->data[i];
      args[i].bytes = b->bytes[i];
    } else if (dfz_is_float(p->dt)) {
      args[i].v.f = p->fval;
    } else if (p->dt == TEENY_DT_U64) {
      args[i].v.u = (uint64_t)p->ival;
    } else {
      args[i].v.i = p->ival;
    }
  }
}

