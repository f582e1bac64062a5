/*
 * dsl/nvptx/cfg.c — the shape of the control flow in emitted PTX: each
 * function's basic blocks and branch edges, and whether every loop is
 * entered only through its header (a reducible flow graph).
 *
 * Why: LLVM's jump threading can give a loop two entries.  A kernel that
 * does a scalar atomic in thread 0 before a spin loop whose body is again
 * "thread 0 does the CAS, then a barrier" gets an edge from the entry
 * straight into the loop's barrier block, past its header (the other
 * threads are known to skip the CAS).  That is legal PTX, but NVIDIA's
 * assembler, at -O1 and above, miscompiles such a loop around `bar.sync`:
 * values exchanged through shared memory after it came out stale, changing
 * from run to run, in a single block (docs/reliability.md, the
 * lock_replicated_rmw reproducers).  The back end's early tail
 * duplication made the same shape by copying a loop header that only
 * branches into the entry and the latch.  codegen.c therefore makes the IR
 * reducible (LLVM's fix-irreducible pass), turns early tail duplication
 * off, and checks the PTX with teeny__ptx_check_reducible before handing
 * it out.
 *
 * The parse is of what LLVM's NVPTX printer writes: a function body is the
 * brace block after `.entry`/`.func`; statements end in ';'; `NAME:`
 * starts a block; `[@[!]%p] bra[.uni] L`, `ret` and `exit` end one.  An
 * indirect branch (`brx.idx`) is not followed (the check answers -1).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "dsl/nvptx/nvptx.h"

typedef struct blk {
  const char *name; /* its label (not NUL-terminated: name_len), or NULL */
  int name_len;
  const char *tgt;  /* a branch's target label, or NULL */
  int tgt_len;
  int succ[2], nsucc;
  bool fall;        /* control may run on into the next block */
  bool done;        /* ended by a branch, ret or exit */
} blk;

typedef struct flow {
  blk *b;
  int n, cap;
  bool indirect; /* a brx.idx: edges unknown */
} flow;

static bool flow_grow(flow *f) {
  if (f->n < f->cap)
    return true;
  int cap = f->cap ? 2 * f->cap : 64;
  blk *nb = teeny__realloc(f->b, sizeof *nb * (size_t)cap);
  if (!nb)
    return false;
  f->b = nb;
  f->cap = cap;
  return true;
}

/* A new block after the current one; the current falls into it unless a
 * terminator said otherwise. */
static blk *flow_open(flow *f, const char *name, int len) {
  if (f->n > 0 && !f->b[f->n - 1].done)
    f->b[f->n - 1].fall = true;
  if (!flow_grow(f))
    return NULL;
  blk *b = &f->b[f->n++];
  memset(b, 0, sizeof *b);
  b->name = name;
  b->name_len = len;
  return b;
}

static bool ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.' || c == '%';
}

static const char *skip_space(const char *s, const char *e) {
  while (s < e && isspace((unsigned char)*s))
    s++;
  return s;
}

/* One statement [s, e) (no ';'): a label, a branch, a return or anything
 * else (ignored).  Returns false on allocation failure. */
static bool flow_statement(flow *f, const char *s, const char *e) {
  s = skip_space(s, e);
  if (s == e)
    return true;
  const char *p = s;
  while (p < e && ident_char(*p))
    p++;
  if (p > s && p < e && *p == ':' && (p + 1 == e || p[1] != ':')) { /* a label, perhaps with a statement after it */
    if (!flow_open(f, s, (int)(p - s)))
      return false;
    return flow_statement(f, p + 1, e);
  }
  bool cond = false;
  if (*s == '@') { /* a guard predicate */
    cond = true;
    while (s < e && !isspace((unsigned char)*s))
      s++;
    s = skip_space(s, e);
  }
  const char *op = s;
  while (s < e && !isspace((unsigned char)*s))
    s++;
  size_t oplen = (size_t)(s - op);
  blk *cur = &f->b[f->n - 1];
  if (oplen >= 3 && strncmp(op, "brx", 3) == 0) {
    f->indirect = true;
    return true;
  }
  bool bra = oplen >= 3 && strncmp(op, "bra", 3) == 0 && (oplen == 3 || op[3] == '.');
  bool ret = (oplen == 3 && strncmp(op, "ret", 3) == 0) ||
             (oplen == 4 && strncmp(op, "exit", 4) == 0) ||
             (oplen == 4 && strncmp(op, "trap", 4) == 0);
  if (!bra && !ret)
    return true;
  if (bra) {
    const char *t = skip_space(s, e), *te = t;
    while (te < e && ident_char(*te))
      te++;
    cur->tgt = t;
    cur->tgt_len = (int)(te - t);
  }
  cur->done = true;
  cur->fall = cond;
  return flow_open(f, NULL, 0) != NULL;
}

/* The blocks of one function body [s, e) (inside its outer braces). */
static bool flow_parse(flow *f, const char *s, const char *e) {
  if (!flow_open(f, NULL, 0))
    return false;
  const char *st = s;
  for (const char *p = s; p < e; p++) {
    if (*p == '/' && p + 1 < e && p[1] == '/') { /* a comment: to the end of line */
      if (!flow_statement(f, st, p))
        return false;
      while (p < e && *p != '\n')
        p++;
      st = p;
    } else if (*p == ';' || *p == '{' || *p == '}' || *p == '\n') {
      /* statements end at ';'; inline asm's braces and line ends also
       * separate (a label stands on its own line) */
      if (*p == '\n' && p > st && !memchr(st, ':', (size_t)(p - st)))
        continue; /* a statement may span lines; only labels end at '\n' */
      if (!flow_statement(f, st, p))
        return false;
      st = p + 1;
    }
  }
  return flow_statement(f, st, e);
}

static int flow_find(const flow *f, const char *name, int len) {
  for (int i = 0; i < f->n; i++)
    if (f->b[i].name && f->b[i].name_len == len && memcmp(f->b[i].name, name, (size_t)len) == 0)
      return i;
  return -1;
}

static void flow_link(flow *f) {
  for (int i = 0; i < f->n; i++) {
    blk *b = &f->b[i];
    b->nsucc = 0;
    if (b->tgt) {
      int t = flow_find(f, b->tgt, b->tgt_len);
      if (t >= 0)
        b->succ[b->nsucc++] = t;
    }
    if (b->fall && i + 1 < f->n)
      b->succ[b->nsucc++] = i + 1;
  }
}

/* Depth-first from block 0: reverse postorder into rpo (returns its
 * length), po[i] the postorder number of block i (-1 if unreached);
 * stack, next and post are scratch of f->n each. */
static int flow_order(const flow *f, int *rpo, int *po, int *stack, int *next, int *post) {
  for (int i = 0; i < f->n; i++)
    po[i] = -1, next[i] = -1;
  int sp = 0, count = 0;
  stack[sp++] = 0;
  next[0] = 0; /* next[i] >= 0: seen */
  while (sp) {
    int u = stack[sp - 1];
    if (next[u] < f->b[u].nsucc) {
      int v = f->b[u].succ[next[u]++];
      if (next[v] < 0) {
        next[v] = 0;
        stack[sp++] = v;
      }
      continue;
    }
    po[u] = count;
    post[count++] = u;
    sp--;
  }
  for (int i = 0; i < count; i++)
    rpo[i] = post[count - 1 - i];
  return count;
}

/* Immediate dominators (Cooper, Harvey and Kennedy's iteration over the
 * reverse postorder); idom[0] = 0, -1 for unreached blocks. */
static void flow_dominators(const flow *f, const int *rpo, int n, const int *po, int *idom) {
  for (int i = 0; i < f->n; i++)
    idom[i] = -1;
  idom[0] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (int k = 1; k < n; k++) {
      int v = rpo[k], nd = -1;
      for (int u = 0; u < f->n; u++) { /* predecessors of v */
        if (idom[u] < 0)
          continue;
        for (int s = 0; s < f->b[u].nsucc; s++) {
          if (f->b[u].succ[s] != v)
            continue;
          if (nd < 0) {
            nd = u;
            continue;
          }
          int a = u, b = nd;
          while (a != b) {
            while (po[a] < po[b])
              a = idom[a];
            while (po[b] < po[a])
              b = idom[b];
          }
          nd = a;
        }
      }
      if (nd >= 0 && idom[v] != nd) {
        idom[v] = nd;
        changed = true;
      }
    }
  }
}

static bool dominates(const int *idom, int a, int b) {
  for (;;) {
    if (a == b)
      return true;
    if (b == 0 || idom[b] < 0)
      return false;
    b = idom[b];
  }
}

static void name_of(const blk *b, char *out, size_t n) {
  if (b->name)
    snprintf(out, n, "%.*s", b->name_len, b->name);
  else
    snprintf(out, n, "(unlabelled block)");
}

/* 0 reducible, 1 not (why says where), -1 unknown, -2 out of memory.  A
 * retreating edge u -> v (v an ancestor of u in the depth-first tree, so
 * po[v] >= po[u]) whose target does not dominate u enters a loop past its
 * header. */
static int flow_check(flow *f, char *why, size_t wn) {
  flow_link(f);
  size_t sz = sizeof(int) * (size_t)f->n;
  int *rpo = teeny__malloc(sz), *po = teeny__malloc(sz), *stack = teeny__malloc(sz);
  int *next = teeny__malloc(sz), *post = teeny__malloc(sz), *idom = teeny__malloc(sz);
  int rc = -2;
  if (rpo && po && stack && next && post && idom) {
    int n = flow_order(f, rpo, po, stack, next, post);
    flow_dominators(f, rpo, n, po, idom);
    rc = 0;
    for (int u = 0; rc == 0 && u < f->n; u++) {
      if (po[u] < 0)
        continue;
      for (int s = 0; s < f->b[u].nsucc; s++) {
        int v = f->b[u].succ[s];
        if (po[v] >= po[u] && !dominates(idom, v, u)) {
          char a[64], b[64];
          name_of(&f->b[v], a, sizeof a);
          name_of(&f->b[u], b, sizeof b);
          snprintf(why, wn, "%s, from %s", a, b);
          rc = 1;
          break;
        }
      }
    }
  }
  teeny__free(rpo);
  teeny__free(po);
  teeny__free(stack);
  teeny__free(next);
  teeny__free(post);
  teeny__free(idom);
  return rc;
}

/* The end of the brace block that starts at s ('{'), or NULL. */
static const char *block_end(const char *s) {
  int depth = 0;
  for (const char *p = s; *p; p++) {
    if (*p == '{')
      depth++;
    else if (*p == '}' && --depth == 0)
      return p;
  }
  return NULL;
}

int teeny__ptx_check_reducible(const char *ptx, char *why, size_t wn) {
  if (wn)
    why[0] = '\0';
  const char *p = ptx;
  int result = 0;
  while (result == 0) {
    const char *en = strstr(p, ".entry "), *fn = strstr(p, ".func ");
    const char *h = !en ? fn : !fn ? en : en < fn ? en : fn;
    if (!h)
      break;
    /* a definition has its body before the next ';' at the header's level */
    const char *brace = strchr(h, '{'), *semi = strchr(h, ';');
    if (!brace || (semi && semi < brace)) {
      p = semi ? semi + 1 : h + 1;
      continue;
    }
    const char *end = block_end(brace);
    if (!end)
      return -1;
    flow f = {0};
    if (!flow_parse(&f, brace + 1, end))
      result = -2;
    else if (f.indirect)
      result = -1;
    else
      result = flow_check(&f, why, wn);
    teeny__free(f.b);
    p = end + 1;
  }
  return result;
}
