/*
 * daemon/heal.h — rebuilding a damaged index.db while teenycd serves.
 *
 * When a store handle of the lanes reports its index damaged (SQLite says
 * corrupt or not a database, or verify's quick_check fails), the daemon
 * holds its store and admin lanes (compiles and memory hits go on; store
 * work queues), waits for the store work running to end, releases every
 * handle's index connection, and rebuilds the index from objects/ in one
 * exclusive admin-lane job (teeny_store_rebuild_index: the damaged file is
 * moved aside for inspection, never deleted).  Then the lanes go on; each
 * handle reopens the new index at its next use.  Every rebuild is logged
 * and counted (stats: index_rebuilds).  A damaged index found at startup
 * is rebuilt before the daemon listens (teenycd.c, opts.heal).
 */
#ifndef TEENY_DAEMON_HEAL_H
#define TEENY_DAEMON_HEAL_H

#include "daemon/sched.h"

/* The lanes' on_damage callback (ctx: the scheduler).  Starts a rebuild
 * unless one is running or the daemon is stopping. */
void teeny__heal_start(void *ctx);

#endif /* TEENY_DAEMON_HEAL_H */
