/* memd — writing a whole buffer to a file descriptor. */
#ifndef MEMD_COMMON_FDIO_H
#define MEMD_COMMON_FDIO_H

#include <stdbool.h>
#include <stddef.h>

/* Writes buf[0, len) to fd, again after a short write or EINTR. sock: fd is a socket,
 * written with send(MSG_NOSIGNAL) so a peer that went away is -EPIPE, not SIGPIPE.
 * 0, or a negative errno. */
int memd_write_all(int fd, const void *buf, size_t len, bool sock);

#endif
