/* memd daemon — listening socket (see listen.h). */
#include "listen.h"
#include "activation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A passed fd must be a listening Unix stream socket; anything else is a unit mistake
 * that should fail loudly rather than hang. */
static int check_passed(int fd, memd_error *err)
{
    int type = 0, acc = 0;
    socklen_t len = sizeof type;
    struct sockaddr_un sa;
    socklen_t salen = sizeof sa;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) < 0)
        return memd_error_set(err, -ENOTSOCK, "LISTEN_FDS: fd %d is not a socket: %s", fd,
                              strerror(errno));
    len = sizeof acc;
    if (type != SOCK_STREAM || sa.sun_family != AF_UNIX ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0 || !acc)
        return memd_error_set(err, -EINVAL,
                              "LISTEN_FDS: fd %d is not a listening Unix stream socket", fd);
    return 0;
}

/* Returns 1 when a socket was adopted, 0 when none was passed to this process. */
static int adopt(memd_listen *l, memd_error *err)
{
    int n = memd_listen_fds();
    if (n == 0)
        return 0;
    if (n < 0)
        return memd_error_set(err, -EINVAL, "LISTEN_FDS: expected a socket count (1-64)");
    int rc = check_passed(MEMD_LISTEN_FDS_START, err);
    if (rc < 0)
        return rc;
    for (int i = 1; i < n; i++)
        close(MEMD_LISTEN_FDS_START + i); /* memd.socket has one; extras are unused */
    l->fd = MEMD_LISTEN_FDS_START;
    l->activated = true;
    struct sockaddr_un sa;
    socklen_t salen = sizeof sa;
    if (getsockname(l->fd, (struct sockaddr *)&sa, &salen) == 0 && sa.sun_path[0])
        snprintf(l->path, sizeof l->path, "%s", sa.sun_path);
    return 1;
}

/* Is a server accepting on path? Connect refused means a stale socket file. */
static int probe(const struct sockaddr_un *sa)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int rc = connect(fd, (const struct sockaddr *)sa, sizeof *sa);
    int e = errno;
    close(fd);
    if (rc == 0 || e == EAGAIN || e == EINPROGRESS)
        return 1; /* alive (EAGAIN: alive with a full backlog) */
    return e == ECONNREFUSED ? 0 : -e;
}

static int bind_path(const char *path, memd_listen *l, memd_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof sa.sun_path) {
        return memd_error_set(err, n ? -ENAMETOOLONG : -EINVAL,
                              "socket path '%s' is %zu bytes; it must be 1..%zu", path, n,
                              sizeof sa.sun_path - 1);
    }
    memcpy(sa.sun_path, path, n + 1);

    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return memd_error_set(err, -EEXIST, "%s exists and is not a socket; not touching it",
                                  path);
        int alive = probe(&sa);
        if (alive > 0)
            return memd_error_set(err, -EADDRINUSE, "another memd is already listening on %s",
                                  path);
        if (alive < 0)
            return memd_error_set(err, alive, "cannot probe %s: %s", path, strerror(-alive));
        if (unlink(path) < 0 && errno != ENOENT)
            return memd_error_set(err, -errno, "cannot remove stale socket %s: %s", path,
                                  strerror(errno));
    }

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return memd_error_set(err, -errno, "socket: %s", strerror(errno));
    /* The umask makes bind create the file 0660 at once, so there is no window in which
     * others could connect; chmod then pins it regardless of the umask we inherited. */
    mode_t old = umask(0117);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    int e = errno;
    umask(old);
    if (rc < 0 || chmod(path, 0660) < 0 || listen(fd, SOMAXCONN) < 0 || stat(path, &st) < 0) {
        e = rc < 0 ? e : errno;
        memd_error_set(err, -e, "cannot listen on %s: %s", path, strerror(e));
        if (rc == 0)
            unlink(path);
        close(fd);
        return -e;
    }
    l->fd = fd;
    l->owns_path = true;
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    memcpy(l->path, path, n + 1);
    return 0;
}

int memd_listen_open(const char *path, memd_listen *l, memd_error *err)
{
    *l = (memd_listen){.fd = -1};
    int rc = adopt(l, err);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    return bind_path(path, l, err);
}

void memd_listen_close(memd_listen *l)
{
    struct stat st;
    if (l->owns_path && lstat(l->path, &st) == 0 && st.st_dev == l->dev &&
        st.st_ino == l->ino)
        unlink(l->path);
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    l->owns_path = false;
}
