/*
 * dsl/ir/race.c — the interpreter's race detector: what the memory model
 * (docs/dsl.md §9) leaves undefined, found while interp.c runs a launch.
 *
 * The interpreter runs programs one at a time and ops in order, which is
 * one legal execution; a GPU may run others.  Where the model does not
 * order two accesses of one address, the answers can differ, so the
 * interpreter reports them instead of quietly picking one:
 *
 *   lanes    two lanes of one store write one address with different
 *            values (a table of the op's addresses, reused per store);
 *   programs an address accessed by two programs, at least one of them
 *            writing, with no atomic that could order them: the earlier
 *            program made no release after its access, or the later one
 *            no acquire before its own.  Atomics do not race with each
 *            other.  This over-approximates what orders two programs (a
 *            release on one location and an acquire on another count), so
 *            it reports only races that no synchronisation explains.
 *
 * Shadow memory: per element of each pointer argument, its last plain or
 * atomic writer and last plain reader (program + 1, and how many releases
 * that program had made by then), made when the buffer is first touched
 * and bounded by RACE_SHADOW_MAX bytes in all (buffers past that are not
 * checked).  Programs are numbered x + y gx + z gx gy.
 */
#include <string.h>

#include "dsl/ir/ir.h"

#define RACE_SHADOW_MAX ((size_t)256 << 20) /* bytes of shadow in all */

typedef struct shadow {
  uint32_t wprog, wrel; /* last writer (program + 1; 0: none), its releases then */
  uint32_t rprog, rrel; /* last plain reader, likewise */
  uint8_t watomic;      /* the last write was an atomic */
} shadow;

typedef struct lane_slot {
  uint64_t addr;        /* 0: empty (addresses are never 0) */
  uint64_t bits;        /* the value written */
  long lane;
} lane_slot;

struct teeny_race {
  teeny_arena *arena;
  int nbufs;
  size_t *elems;        /* [nbufs] elements of each buffer */
  shadow **sh;          /* [nbufs] shadow, made when first touched */
  bool *off;            /* [nbufs] not checked: over the shadow budget */
  size_t shadow_bytes;
  uint32_t *rel;        /* [nprograms] releases each program has made */
  uint64_t nprograms;
  uint32_t cur;         /* program running now (number + 1) */
  bool acquired;        /* it has made an acquire */
  lane_slot *lanes;     /* the current store's addresses */
  size_t lane_cap;      /* slots (a power of two), 0 before the first store */
  uint64_t epoch;       /* lanes are live when tagged with this store's epoch */
  uint64_t *tag;        /* [lane_cap] */
};

teeny_race *teeny__race_new(teeny_arena *a, int nbufs, const size_t *elems,
                            uint64_t nprograms) {
  if (nprograms * sizeof(uint32_t) > RACE_SHADOW_MAX)
    return NULL; /* too many programs to keep count of */
  teeny_race *r = teeny__arena_alloc(a, sizeof *r);
  if (!r)
    return NULL;
  r->arena = a;
  r->nbufs = nbufs;
  r->elems = teeny__arena_alloc(a, sizeof *r->elems * (size_t)(nbufs + 1));
  r->sh = teeny__arena_alloc(a, sizeof *r->sh * (size_t)(nbufs + 1));
  r->off = teeny__arena_alloc(a, sizeof *r->off * (size_t)(nbufs + 1));
  r->nprograms = nprograms;
  r->rel = teeny__arena_alloc(a, sizeof *r->rel * (size_t)(nprograms + 1));
  if (!r->elems || !r->sh || !r->off || !r->rel)
    return NULL;
  memcpy(r->elems, elems, sizeof *elems * (size_t)nbufs);
  return r;
}

void teeny__race_program(teeny_race *r, uint64_t program) {
  r->cur = (uint32_t)(program + 1);
  r->acquired = false;
}

void teeny__race_atomic_done(teeny_race *r, bool acquire, bool release) {
  if (acquire)
    r->acquired = true;
  if (release && r->rel)
    r->rel[r->cur - 1]++;
}

/* The shadow of buffer b, made on first use; NULL when it is not checked. */
static shadow *shadow_of(teeny_race *r, int b) {
  if (!r->rel || b < 0 || b >= r->nbufs || r->off[b])
    return NULL;
  if (!r->sh[b]) {
    size_t bytes = sizeof(shadow) * (r->elems[b] + 1);
    if (r->shadow_bytes + bytes > RACE_SHADOW_MAX) {
      r->off[b] = true;
      return NULL;
    }
    r->sh[b] = teeny__arena_alloc(r->arena, bytes);
    if (!r->sh[b]) {
      r->off[b] = true;
      return NULL;
    }
    r->shadow_bytes += bytes;
  }
  return r->sh[b];
}

/* Did program p (number + 1) release after it had made `rel` releases,
 * and has the current program acquired since it started? */
static bool ordered(const teeny_race *r, uint32_t p, uint32_t rel) {
  return r->rel[p - 1] > rel && r->acquired;
}

int teeny__race_access(teeny_race *r, int b, size_t e, teeny_race_kind kind,
                       uint64_t *other) {
  shadow *sh = shadow_of(r, b);
  if (!sh || e >= r->elems[b])
    return 0;
  shadow *s = &sh[e];
  uint32_t me = r->cur, myrel = r->rel[me - 1];
  bool atomic = kind == TEENY_RACE_ATOMIC, writes = kind != TEENY_RACE_READ;
  /* against the last write (two atomics never race) */
  if (s->wprog && s->wprog != me && !(atomic && s->watomic) && !ordered(r, s->wprog, s->wrel)) {
    *other = s->wprog - 1;
    return s->watomic ? TEENY_RACE_ATOMIC : TEENY_RACE_WRITE;
  }
  /* a write against the last plain read */
  if (writes && s->rprog && s->rprog != me && !ordered(r, s->rprog, s->rrel)) {
    *other = s->rprog - 1;
    return TEENY_RACE_READ;
  }
  if (writes) {
    s->wprog = me;
    s->wrel = myrel;
    s->watomic = atomic;
  } else {
    s->rprog = me;
    s->rrel = myrel;
  }
  return 0;
}

/* ---- lanes of one store ------------------------------------------------------------- */

void teeny__race_store_begin(teeny_race *r, long nlanes) {
  size_t want = 16;
  while (want < 2 * (size_t)nlanes)
    want *= 2;
  if (want > r->lane_cap) {
    r->lanes = teeny__arena_alloc(r->arena, sizeof *r->lanes * want);
    r->tag = teeny__arena_alloc(r->arena, sizeof *r->tag * want);
    r->lane_cap = r->lanes && r->tag ? want : 0;
  }
  r->epoch++;
}

long teeny__race_store_lane(teeny_race *r, uint64_t addr, uint64_t bits, long lane) {
  if (!r->lane_cap)
    return -1; /* no memory for the table: unchecked */
  size_t mask = r->lane_cap - 1;
  size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & mask;
  while (r->tag[i] == r->epoch) {
    lane_slot *s = &r->lanes[i];
    if (s->addr == addr)
      return s->bits == bits ? -1 : s->lane;
    i = (i + 1) & mask;
  }
  r->tag[i] = r->epoch;
  r->lanes[i] = (lane_slot){addr, bits, lane};
  return -1;
}
