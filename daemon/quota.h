/*
 * daemon/quota.h — what each uid holds of the daemon: open connections
 * and requests in flight, against --max-connections-per-uid and
 * --max-inflight-per-uid, so that one local user cannot take every
 * connection slot or every worker's queue from the others.
 *
 * One record per uid with at least one open connection (a small chained
 * hash table); the server takes it at accept and puts it back when the
 * connection is freed.  Loop thread only.
 */
#ifndef TEENY_DAEMON_QUOTA_H
#define TEENY_DAEMON_QUOTA_H

#include <stdint.h>

typedef struct teeny_uid_use {
  uint32_t uid;               /* whose */
  uint64_t conns;             /* connections open */
  uint64_t inflight;          /* replies owed over all of them */
  struct teeny_uid_use *next; /* bucket chain */
} teeny_uid_use;

#define TEENY_QUOTA_BUCKETS 64

typedef struct teeny_quota {
  teeny_uid_use *buckets[TEENY_QUOTA_BUCKETS]; /* by uid */
  uint64_t uids;                                /* records */
} teeny_quota;

void teeny__quota_init(teeny_quota *q);
/* The record of uid, created with zero counts if missing; NULL when out of
 * memory.  Every get is paired with a put. */
teeny_uid_use *teeny__quota_get(teeny_quota *q, uint32_t uid);
/* Drop a record that holds nothing any more. */
void teeny__quota_put(teeny_quota *q, teeny_uid_use *u);
/* Free every record (at exit).  */
void teeny__quota_close(teeny_quota *q);

#endif /* TEENY_DAEMON_QUOTA_H */
