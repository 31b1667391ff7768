/* libmemclient: why connect(2) said EACCES, from what is on disk. A fixed hint ("is this
 * user in group memd?") sent people the wrong way whenever the socket was someone else's
 * (a memd started by root on a private path, a unit with another SocketGroup=), so the
 * explanation names the real owner, group and mode and the one step that would help. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memclient_internal.h"

/* User and group names (numbers when there is no entry); reentrant: library code. */
static const char *name_or_id(const char *name, unsigned id, char *buf, size_t len)
{
    if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "%u", id);
    return buf;
}

static const char *user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    bool found = getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res;
    return name_or_id(found ? res->pw_name : NULL, (unsigned)uid, buf, len);
}

static const char *group_name(gid_t gid, char *buf, size_t len)
{
    struct group gr, *res = NULL;
    char tmp[4096];
    bool found = getgrgid_r(gid, &gr, tmp, sizeof tmp, &res) == 0 && res;
    return name_or_id(found ? res->gr_name : NULL, (unsigned)gid, buf, len);
}

/* Is gid among this process's groups (getgroups: what connect(2) checks)? */
static bool process_in_group(gid_t gid)
{
    if (getegid() == gid)
        return true;
    gid_t groups[NGROUPS_MAX];
    int n = getgroups(NGROUPS_MAX, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

/* The first folder on the way to path this process may not search, into dir; false if
 * every folder is searchable. */
static bool blocked_folder(const char *path, char *dir, size_t len)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        bool ok = access(p, X_OK) == 0 || errno != EACCES;
        if (!ok)
            snprintf(dir, len, "%s", p);
        *slash = '/';
        if (!ok)
            return true;
    }
    if (path[0] != '/' && access(".", X_OK) < 0 && errno == EACCES) {
        snprintf(dir, len, ".");
        return true;
    }
    return false;
}

void memclient_explain_eacces(const char *path, char *buf, size_t len)
{
    char dir[PATH_MAX], owner[64], group[64], me[64];
    struct stat st;
    if (blocked_folder(path, dir, sizeof dir)) {
        if (stat(dir, &st) == 0)
            snprintf(buf, len, " (folder %s is %s:%s mode %04o: this user may not enter it)",
                     dir, user_name(st.st_uid, owner, sizeof owner),
                     group_name(st.st_gid, group, sizeof group), (unsigned)(st.st_mode & 07777));
        else
            snprintf(buf, len, " (this user may not enter folder %s)", dir);
        return;
    }
    if (stat(path, &st) < 0) {
        if (len)
            buf[0] = '\0';
        return;
    }
    user_name(st.st_uid, owner, sizeof owner);
    group_name(st.st_gid, group, sizeof group);
    unsigned mode = (unsigned)(st.st_mode & 07777);
    user_name(getuid(), me, sizeof me);
    if ((st.st_mode & S_IWGRP) && st.st_gid != 0) {
        if (process_in_group(st.st_gid)) /* group is fine: something else (ACL, LSM) */
            snprintf(buf, len, " (socket %s:%s mode %04o)", owner, group, mode);
        else
            snprintf(buf, len, " (socket %s:%s mode %04o: add %s to group %s "
                     "(usermod -aG %s %s) and log in again)", owner, group, mode, me, group,
                     group, me);
        return;
    }
    /* No group access worth joining: only the owner (and root) get in. */
    snprintf(buf, len, " (socket %s:%s mode %04o: only %s may connect; run as %s, or serve "
             "it with group access: memd.socket's SocketGroup=memd, SocketMode=0660)", owner,
             group, mode, owner, owner);
}
