/* memd — writing a whole buffer to a file descriptor (fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

int memd_write_all(int fd, const void *buf, size_t len, bool sock)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
