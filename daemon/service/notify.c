/* memd daemon — sd_notify (see notify.h). */
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int memd_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path)
        return -EINVAL;
    memcpy(sa.sun_path, path, n);
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract namespace: no trailing NUL in the length */
    else
        salen++;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    ssize_t r = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
    int rc = r < 0 ? -errno : 1;
    close(fd);
    return rc;
}

int memd_notifyf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return memd_notify(buf);
}

uint64_t memd_notify_watchdog_usec(void)
{
    const char *us = getenv("WATCHDOG_USEC");
    if (!us || !*us)
        return 0;
    const char *pid = getenv("WATCHDOG_PID");
    if (pid && *pid && strtol(pid, NULL, 10) != (long)getpid())
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(us, &end, 10);
    if (errno || *end || v == 0)
        return 0;
    return v;
}
