/*
 * common/ids.c — users and groups by number, for messages and sharing
 * decisions: their names (the number itself when the system knows none)
 * and whether a user belongs to a group.  Reentrant (the _r lookups);
 * called when opening stores and explaining refused sockets, never on a
 * hot path.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

void teeny__user_name(uid_t u, char *out, size_t size) {
  struct passwd pw, *pr = NULL;
  char buf[4096];
  if (getpwuid_r(u, &pw, buf, sizeof buf, &pr) == 0 && pr)
    snprintf(out, size, "%s", pr->pw_name);
  else
    snprintf(out, size, "%u", (unsigned)u);
}

void teeny__group_name(gid_t g, char *out, size_t size) {
  struct group gr, *gp = NULL;
  char buf[16384];
  if (getgrgid_r(g, &gr, buf, sizeof buf, &gp) == 0 && gp)
    snprintf(out, size, "%s", gp->gr_name);
  else
    snprintf(out, size, "%u", (unsigned)g);
}

bool teeny__user_in_group(uid_t u, gid_t g) {
  struct passwd pw, *pr = NULL;
  struct group gr, *gp = NULL;
  char pbuf[4096], gbuf[16384];
  if (getpwuid_r(u, &pw, pbuf, sizeof pbuf, &pr) != 0 || !pr)
    return false;
  if (pr->pw_gid == g)
    return true;
  if (getgrgid_r(g, &gr, gbuf, sizeof gbuf, &gp) != 0 || !gp)
    return false;
  for (char **m = gp->gr_mem; *m; m++)
    if (strcmp(*m, pr->pw_name) == 0)
      return true;
  return false;
}
