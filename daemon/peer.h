/*
 * daemon/peer.h — who is on the other end of a connection, and whether
 * they may run admin operations (purge, verify --repair, shutdown).
 *
 * Identity comes only from the kernel (SO_PEERCRED, taken when the
 * connection is accepted), never from anything the client says.  Admin
 * means: uid 0, the daemon's own uid, or a member of the configured admin
 * group (primary group, or supplementary groups from getgrouplist on the
 * peer's user name).  Group membership is looked up once per connection, at
 * its first admin request, since NSS lookups may be slow.
 */
#ifndef TEENY_DAEMON_PEER_H
#define TEENY_DAEMON_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct teeny_peer {
  pid_t pid; /* peer process id at connect time */
  uid_t uid; /* peer effective uid */
  gid_t gid; /* peer effective gid */
  int admin; /* -1: not decided yet; 0: no; 1: yes */
} teeny_peer;

typedef struct teeny_admin_policy {
  uid_t daemon_uid; /* our own uid: always admin */
  bool has_group;   /* an admin group is configured */
  gid_t group_gid;  /* its gid */
  char group[64];   /* its name, for messages */
} teeny_admin_policy;

/* Credentials of the Unix socket fd.  0 or TEENY_E_IO. */
int teeny__peer_get(int fd, teeny_peer *p);

/* Resolve group (a name or a number; NULL or "": none).  0, or
 * TEENY_E_NOTFOUND with "unknown group 'g'" in err. */
int teeny__admin_policy_init(teeny_admin_policy *pol, const char *group,
                             char *err, size_t errsz);

/* Whether p is an admin under pol (decided once, then cached in p). */
bool teeny__peer_is_admin(const teeny_admin_policy *pol, teeny_peer *p);

/* "permission denied: OP needs root, uid N or group G" into buf. */
void teeny__perm_message(const teeny_admin_policy *pol, const char *op,
                         char *buf, size_t n);

#endif /* TEENY_DAEMON_PEER_H */
