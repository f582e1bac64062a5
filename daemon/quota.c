/*
 * daemon/quota.c — per-uid connection and in-flight counts (see quota.h).
 */
#include <string.h>

#include "common/common.h"
#include "daemon/quota.h"

void teeny__quota_init(teeny_quota *q) { memset(q, 0, sizeof *q); }

static teeny_uid_use **slot(teeny_quota *q, uint32_t uid) {
  teeny_uid_use **p = &q->buckets[uid % TEENY_QUOTA_BUCKETS];
  while (*p && (*p)->uid != uid)
    p = &(*p)->next;
  return p;
}

teeny_uid_use *teeny__quota_get(teeny_quota *q, uint32_t uid) {
  teeny_uid_use **p = slot(q, uid);
  if (*p)
    return *p;
  teeny_uid_use *u = teeny__calloc(1, sizeof *u);
  if (!u)
    return NULL;
  u->uid = uid;
  *p = u;
  q->uids++;
  return u;
}

void teeny__quota_put(teeny_quota *q, teeny_uid_use *u) {
  if (!u || u->conns || u->inflight)
    return;
  teeny_uid_use **p = slot(q, u->uid);
  *p = u->next;
  q->uids--;
  teeny__free(u);
}

void teeny__quota_close(teeny_quota *q) {
  for (size_t i = 0; i < TEENY_QUOTA_BUCKETS; i++)
    for (teeny_uid_use *u = q->buckets[i], *nx; u; u = nx) {
      nx = u->next;
      teeny__free(u);
    }
  memset(q, 0, sizeof *q);
}
