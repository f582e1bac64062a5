/*
 * daemon/ops.h — the requests that read or change the store as a whole:
 * stats, list, show, purge, verify.
 *
 * Each runs as one job in a lane (lanes.h: stats in the store lane, the
 * scans in the admin lane; SQLite and file reads never on the loop
 * thread); the worker also encodes the reply frame, so the loop only
 * copies bytes.  Purge and a repairing verify make the in-memory map forget
 * the keys they removed (purge --all empties it).  The server has already
 * checked admin rights and the in-flight limits.
 */
#ifndef TEENY_DAEMON_OPS_H
#define TEENY_DAEMON_OPS_H

#include "daemon/sched.h"
#include "daemon/stats.h"
#include "proto/msg.h"

/* Answer a stats request: snap holds the loop's counters; the store adds
 * entries and bytes. */
void teeny__ops_stats(teeny_sched *s, teeny_conn *c, uint64_t id,
                      const teeny_stats_snap *snap);
/* Answer list, show, purge or verify (req is moved: *req is zeroed). */
void teeny__ops_store(teeny_sched *s, teeny_conn *c, teeny_msg_request *req);

#endif /* TEENY_DAEMON_OPS_H */
