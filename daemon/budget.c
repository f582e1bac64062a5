/*
 * daemon/budget.c — the memory budget's counters (see budget.h).
 */
#include <stdio.h>

#include "daemon/budget.h"

void teeny__budget_init(teeny_budget *b, uint64_t limit) {
  *b = (teeny_budget){.limit = limit};
}

static void note_peak(teeny_budget *b) {
  if (b->used > b->peak)
    b->peak = b->used;
}

bool teeny__budget_take(teeny_budget *b, uint64_t n) {
  if (n > b->limit || b->used > b->limit - n) {
    b->refused++;
    return false;
  }
  b->used += n;
  note_peak(b);
  return true;
}

void teeny__budget_give(teeny_budget *b, uint64_t n) {
  b->used = n < b->used ? b->used - n : 0;
}

void teeny__budget_move(teeny_budget *b, uint64_t old, uint64_t now) {
  teeny__budget_give(b, old);
  b->used += now;
  note_peak(b);
}

bool teeny__budget_take_big(teeny_budget *b, uint64_t n) {
  if (teeny__budget_never(b, n) || b->big > b->limit / 2 - n ||
      !teeny__budget_take(b, n))
    return false;
  b->big += n;
  return true;
}

void teeny__budget_give_big(teeny_budget *b, uint64_t n) {
  b->big = n < b->big ? b->big - n : 0;
  teeny__budget_give(b, n);
}

bool teeny__budget_never(const teeny_budget *b, uint64_t n) {
  return n > b->limit / 2;
}

void teeny__budget_message(const teeny_budget *b, const char *what,
                           uint64_t n, char *buf, size_t size) {
  snprintf(buf, size,
           "%s of %llu bytes refused: the daemon's memory budget of %llu "
           "bytes (--memory-budget) is in use",
           what, (unsigned long long)n, (unsigned long long)b->limit);
}
