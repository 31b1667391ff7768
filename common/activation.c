/* memd — systemd socket activation (see activation.h). */
#include "activation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

int memd_listen_fds(void)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds)
        return 0;
    char *end;
    long p = strtol(pid, &end, 10);
    bool ours = !*end && p == (long)getpid();
    long n = strtol(fds, &end, 10);
    bool count = !*end && n >= 1 && n <= 64;
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (!ours)
        return 0;
    if (!count)
        return -EINVAL;
    for (long i = 0; i < n; i++)
        (void)fcntl(MEMD_LISTEN_FDS_START + (int)i, F_SETFD, FD_CLOEXEC);
    return (int)n;
}
