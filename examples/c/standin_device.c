/* EXAMPLE ONLY: standin-device, the stand-in for a device driver that the examples write
 * weights into (see standin.h). It creates one memfd per bank, sized to the bank
 * (sparse: only the pages written take memory), serves them on a Unix socket and runs
 * until SIGINT or SIGTERM. A real runtime has no such program: its driver is the device.
 *
 *   standin-device --banks 12 --bank-size 1073741824 /tmp/dev.sock
 */
#include "standin.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char USAGE[] =
    "usage: standin-device --banks N --bank-size BYTES SOCKET\n"
    "Serves N memfds of BYTES each (one per bank) to whoever connects to SOCKET.\n";

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

/* A whole decimal (or 0x) number in [min, max], else 0 after printing why. */
static int parse_u64(const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = s ? strtoull(s, &end, 0) : 0;
    if (!s || errno || end == s || *end || s[0] == '-' || v < min || v > max) {
        fprintf(stderr, "standin-device: %s must be a number from %" PRIu64 " to %" PRIu64
                        ", not '%s'\n", what, min, max, s ? s : "");
        return 0;
    }
    *out = v;
    return 1;
}

/* Sends the hello and every bank's memfd to one client. */
static void serve(int client, const standin_device *dev)
{
    char text[128];
    int len = snprintf(text, sizeof text, STANDIN_HELLO, dev->banks, dev->bank_size);
    union {
        char buf[CMSG_SPACE(sizeof(int) * STANDIN_MAX_BANKS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = text, .iov_len = (size_t)len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = CMSG_SPACE(sizeof(int) * dev->banks)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * dev->banks);
    memcpy(CMSG_DATA(cm), dev->fd, sizeof(int) * dev->banks);
    if (sendmsg(client, &msg, MSG_NOSIGNAL) < 0)
        fprintf(stderr, "standin-device: sending the banks: %s\n", strerror(errno));
}

int main(int argc, char **argv)
{
    uint64_t banks = 0, bank_size = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--banks")) {
            if (!parse_u64("--banks", i + 1 < argc ? argv[++i] : NULL, 1, STANDIN_MAX_BANKS, &banks))
                return 2;
        } else if (!strcmp(argv[i], "--bank-size")) {
            if (!parse_u64("--bank-size", i + 1 < argc ? argv[++i] : NULL, 1, UINT64_MAX / 2, &bank_size))
                return 2;
        } else if (argv[i][0] == '-' || path) {
            fputs(USAGE, stderr);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path || !banks || !bank_size) {
        fputs(USAGE, stderr);
        return 2;
    }
    standin_device dev = {.banks = (uint32_t)banks, .bank_size = bank_size};
    for (uint32_t b = 0; b < dev.banks; b++) {
        char name[32];
        snprintf(name, sizeof name, "standin-bank%u", b);
        dev.fd[b] = memfd_create(name, MFD_CLOEXEC);
        if (dev.fd[b] < 0 || ftruncate(dev.fd[b], (off_t)bank_size) < 0) {
            fprintf(stderr, "standin-device: bank %u: %s\n", b, strerror(errno));
            return 1;
        }
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "standin-device: %s: path too long\n", path);
        return 2;
    }
    strcpy(sa.sun_path, path);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 16) < 0) {
        fprintf(stderr, "standin-device: %s: %s\n", path, strerror(errno));
        return 1;
    }
    /* The stop signals are blocked but while ppoll waits, so none is lost between the
     * check of `stopping` and the wait. */
    struct sigaction act = {.sa_handler = on_stop};
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGTERM, &act, NULL);
    sigset_t stop, waiting;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &waiting);
    printf("stand-in device: %u banks of %" PRIu64 " bytes on %s\n", dev.banks, bank_size, path);
    fflush(stdout);
    while (!stopping) {
        struct pollfd pfd = {.fd = s, .events = POLLIN};
        if (ppoll(&pfd, 1, NULL, &waiting) < 0)
            continue; /* EINTR: a stop signal */
        int client = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0) {
            fprintf(stderr, "standin-device: accept: %s\n", strerror(errno));
            continue;
        }
        serve(client, &dev);
        close(client);
    }
    close(s);
    unlink(path);
    standin_close(&dev);
    return 0;
}
