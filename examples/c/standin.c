/* EXAMPLE ONLY: opening the stand-in device (standin.h). */
#include "standin.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int standin_open(const char *path, standin_device *dev)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "stand-in device %s: path too long\n", path);
        return -ENAMETOOLONG;
    }
    strcpy(sa.sun_path, path);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        fprintf(stderr, "stand-in device %s: %s (is standin-device running?)\n", path,
                strerror(e));
        if (s >= 0)
            close(s);
        return -e;
    }
    char text[128] = {0};
    union { /* aligned for cmsghdr */
        char buf[CMSG_SPACE(sizeof(int) * STANDIN_MAX_BANKS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = text, .iov_len = sizeof text - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
    int e = n < 0 ? errno : 0;
    close(s);
    struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
    size_t nfd = cm && cm->cmsg_type == SCM_RIGHTS ? (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;
    *dev = (standin_device){0};
    if (nfd)
        memcpy(dev->fd, CMSG_DATA(cm), nfd * sizeof(int));
    if (n <= 0 || (msg.msg_flags & MSG_CTRUNC) ||
        sscanf(text, STANDIN_HELLO, &dev->banks, &dev->bank_size) != 2 || dev->banks != nfd) {
        fprintf(stderr, "stand-in device %s: %s\n", path,
                e ? strerror(e) : "not a stand-in device's answer");
        for (size_t i = 0; i < nfd; i++)
            close(dev->fd[i]);
        return e ? -e : -EPROTO;
    }
    return 0;
}

void standin_close(standin_device *dev)
{
    for (uint32_t b = 0; b < dev->banks; b++)
        close(dev->fd[b]);
    dev->banks = 0;
}
