/*
 * daemon/peer.c — peer credentials and the admin check (see peer.h).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/peer.h"

#define MAX_GROUPS 1024

int teeny__peer_get(int fd, teeny_peer *p) {
  struct ucred cr;
  socklen_t len = sizeof cr;
  memset(p, 0, sizeof *p);
  p->admin = -1;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || len != sizeof cr)
    return TEENY_E_IO;
  p->pid = cr.pid;
  p->uid = cr.uid;
  p->gid = cr.gid;
  return 0;
}

static int lookup_group(const char *group, gid_t *gid, char *name,
                        size_t namesz) {
  char buf[16384];
  struct group gr, *res = NULL;
  char *end;
  unsigned long num = strtoul(group, &end, 10);
  if (*group && !*end) {
    *gid = (gid_t)num;
    if (!getgrgid_r(*gid, &gr, buf, sizeof buf, &res) && res)
      snprintf(name, namesz, "%s", res->gr_name);
    else
      snprintf(name, namesz, "%lu", num);
    return 0;
  }
  if (getgrnam_r(group, &gr, buf, sizeof buf, &res) || !res)
    return TEENY_E_NOTFOUND;
  *gid = res->gr_gid;
  snprintf(name, namesz, "%s", res->gr_name);
  return 0;
}

int teeny__admin_policy_init(teeny_admin_policy *pol, const char *group,
                             char *err, size_t errsz) {
  memset(pol, 0, sizeof *pol);
  pol->daemon_uid = getuid();
  if (!group || !*group)
    return 0;
  if (lookup_group(group, &pol->group_gid, pol->group, sizeof pol->group)) {
    snprintf(err, errsz, "unknown admin group '%.64s'", group);
    return TEENY_E_NOTFOUND;
  }
  pol->has_group = true;
  return 0;
}

/* Is uid (whose primary group is gid) a member of want? */
static bool user_in_group(uid_t uid, gid_t gid, gid_t want) {
  char buf[16384];
  struct passwd pw, *res = NULL;
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) || !res)
    return false;
  gid_t groups[MAX_GROUPS];
  int n = MAX_GROUPS;
  if (getgrouplist(res->pw_name, gid, groups, &n) < 0)
    n = MAX_GROUPS; /* truncated list: check what we have */
  for (int i = 0; i < n; i++)
    if (groups[i] == want)
      return true;
  return false;
}

static bool decide(const teeny_admin_policy *pol, const teeny_peer *p) {
  if (p->uid == 0 || p->uid == pol->daemon_uid)
    return true;
  if (!pol->has_group)
    return false;
  if (p->gid == pol->group_gid)
    return true;
  return user_in_group(p->uid, p->gid, pol->group_gid);
}

bool teeny__peer_is_admin(const teeny_admin_policy *pol, teeny_peer *p) {
  if (p->admin < 0)
    p->admin = decide(pol, p);
  return p->admin == 1;
}

void teeny__perm_message(const teeny_admin_policy *pol, const char *op,
                         char *buf, size_t n) {
  if (pol->has_group)
    snprintf(buf, n, "permission denied: %s needs root, uid %u or group %s",
             op, (unsigned)pol->daemon_uid, pol->group);
  else
    snprintf(buf, n,
             "permission denied: %s needs root or uid %u (no admin group is "
             "configured)",
             op, (unsigned)pol->daemon_uid);
}
