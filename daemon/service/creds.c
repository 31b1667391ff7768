/* memd daemon — peer credentials of a client connection. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "creds.h"
#include "session.h"

/* Process name, best effort: the process may already be gone, which is not an error
 * for the session (the name is only shown to operators). */
static void read_comm(pid_t pid, char *out, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    memset(out, 0, n);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, out, n - 1);
    close(fd);
    if (r <= 0) {
        out[0] = '\0';
        return;
    }
    out[r] = '\0';
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
}

/* The process's cgroup from /proc/PID/cgroup, best effort like its name: the cgroup v2
 * entry ("0::/path"); on a host with only v1 hierarchies, the name=systemd one's path,
 * else the first listed. */
static void read_cgroup(pid_t pid, char *out, size_t n)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return;
    buf[r] = '\0';
    const char *best = NULL;
    int rank = 0; /* 3: v2, 2: name=systemd, 1: first */
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        int rk = !strncmp(line, "0::", 3) ? 3 : strstr(c1, ":name=systemd:") == c1 ? 2 : 1;
        if (rk > rank) {
            rank = rk;
            best = c2 + 1;
        }
    }
    if (best)
        snprintf(out, n, "%s", best);
}

int memd_session_creds(const memd_state *st, int fd, memd_session *s)
{
    struct ucred uc;
    socklen_t len = sizeof uc;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
        return -errno;
    s->pid = (uint32_t)uc.pid;
    s->uid = uc.uid;
    s->gid = uc.gid;
    gid_t groups[256];
    size_t ngroups = 0;
#ifdef SO_PEERGROUPS
    socklen_t glen = sizeof groups;
    /* Supplementary groups as of connect(); ERANGE (too many) leaves only the primary
     * group to decide, which errs on the side of no admin rights. */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
        ngroups = glen / sizeof groups[0];
#endif
    s->admin = memd_session_is_admin(st, s->uid, s->gid, groups, ngroups);
    s->ngroups = 0;
    for (size_t i = 0; i < ngroups && s->ngroups < MEMD_SESSION_GROUPS; i++)
        s->groups[s->ngroups++] = groups[i];
    read_comm(uc.pid, s->comm, sizeof s->comm);
    read_cgroup(uc.pid, s->cgroup, sizeof s->cgroup);
    return 0;
}
