/*
 * daemon/budget.h — the daemon's memory budget (--memory-budget, default
 * 1 GiB): one limit over what clients can make it hold, in total, whoever
 * they are.
 *
 * Charged against it: the body buffers of request frames being read, the
 * reply bytes queued for clients that have not read them yet, and the
 * decoded compile requests waiting for their answer.  The in-memory map
 * has its own cap (--memcache-size) and is not counted here.
 *
 *   frames   A frame that fits in one read (256 KiB) is charged as it is
 *            buffered.  A larger one must be admitted when its length
 *            prefix arrives: its whole length is reserved, and the frames
 *            being read may together hold at most half the budget.  A
 *            frame that does not fit waits, its connection's reading
 *            paused (back-pressure), until memory frees; one that waits
 *            past --read-timeout, or that could never fit, is refused with
 *            a reply naming the budget and the connection is closed.
 *   replies  A reply that would take the total over the budget is replaced
 *            by a BUSY error naming the budget (same id: every request
 *            still gets exactly one reply).
 *   requests A compile request whose source cannot be charged is answered
 *            BUSY the same way.
 *
 * Loop thread only: plain counters.
 */
#ifndef TEENY_DAEMON_BUDGET_H
#define TEENY_DAEMON_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEENY_BUDGET_SMALL_FRAME (256u * 1024) /* read in one chunk */

typedef struct teeny_budget {
  uint64_t limit;   /* bytes */
  uint64_t used;    /* charged now (frames, replies, requests) */
  uint64_t big;     /* of which reserved by big frames being read */
  uint64_t peak;    /* the highest used so far */
  uint64_t refused; /* frames, replies and requests refused for it */
} teeny_budget;

void teeny__budget_init(teeny_budget *b, uint64_t limit);
/* Charge n bytes if the total stays within the limit: true; else false
 * (counted as a refusal). */
bool teeny__budget_take(teeny_budget *b, uint64_t n);
/* Give back n bytes taken. */
void teeny__budget_give(teeny_budget *b, uint64_t n);
/* Re-charge a holding that changed from old to now bytes (memory that is
 * already allocated: it may go over the limit; the next take says no). */
void teeny__budget_move(teeny_budget *b, uint64_t old, uint64_t now);
/* Reserve a big frame of n bytes: within half the limit for all big
 * frames and within the whole.  True if reserved. */
bool teeny__budget_take_big(teeny_budget *b, uint64_t n);
void teeny__budget_give_big(teeny_budget *b, uint64_t n);
/* A frame of n bytes could never be admitted (over half the limit). */
bool teeny__budget_never(const teeny_budget *b, uint64_t n);
/* "WHAT of N bytes refused: the daemon's memory budget of M bytes
 * (--memory-budget) is in use" into buf. */
void teeny__budget_message(const teeny_budget *b, const char *what,
                           uint64_t n, char *buf, size_t size);

#endif /* TEENY_DAEMON_BUDGET_H */
