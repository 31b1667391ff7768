/* libmemclient: connecting (socket path resolution, HELLO negotiation), disconnecting,
 * and the per-connection lock every public call takes. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "memclient_internal.h"
#include "memd-build-config.h"
#include "wire.h"

const char *memclient_default_socket(void)
{
    return MEMD_DEFAULT_SOCKET;
}

bool memclient_gone(int err)
{
    return err == -ECONNRESET || err == -EPIPE || err == -ENOTCONN || err == -ECONNABORTED;
}

int memclient_lock(memclient *c)
{
    if (!c)
        return memclient_fail(-EINVAL, "no connection (NULL)");
    pthread_mutex_lock(&c->mu);
    if (c->dead && c->auto_reconnect && memclient_gone(c->dead)) {
        int r = memclient_reconnect_locked(c, MEMCLIENT_RECONNECT_MS);
        if (r < 0 && r != -EISCONN) {
            pthread_mutex_unlock(&c->mu);
            return r; /* its error is recorded */
        }
    }
    if (c->dead) {
        int dead = c->dead;
        pthread_mutex_unlock(&c->mu);
        return memclient_fail(-ENOTCONN, "connection to %s is closed after an earlier error (%s)",
                              c->info.socket_path, memclient_strerror(dead));
    }
    if (atomic_load_explicit(&c->pools_dirty, memory_order_relaxed))
        c->pool_hooks->queue(c); /* only pools set the flag: the hooks are there */
    return 0;
}

void memclient_unlock(memclient *c)
{
    memclient_revoke_unlock(c);
}

/* What to do about a failed connect to path, in buf: " (...)" or "". */
static const char *hint(int err, const char *path, char *buf, size_t len)
{
    switch (err) {
    case -ENOENT:
    case -ECONNREFUSED:
        return " (is memd running? the socket comes from --socket, $" MEMCLIENT_SOCKET_ENV
               ", or the default " MEMD_DEFAULT_SOCKET ")";
    case -EACCES:
        memclient_explain_eacces(path, buf, len);
        return buf;
    default:
        return "";
    }
}

/* connect(2) that survives a signal: after EINTR the connection completes in the
 * background, so wait for it and read its result. */
static int connect_unix(int fd, const struct sockaddr_un *sa)
{
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
        return 0;
    if (errno != EINTR)
        return -errno;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            return -errno;
        return -soerr;
    }
}

/* HELLO: negotiates the version and learns the session's id and reclaim token; with
 * reclaim, asks for the session c had before the daemon restarted. The slot is retired
 * either way, so a refused reclaim can be followed by a plain HELLO. */
static int hello(memclient *c, bool reclaim)
{
    /* NOTICES: it reads REVOKED frames; POSTMORTEM: the error record's postmortem field. */
    memd_wire_hello h = {.min_version = 1, .max_version = MEMD_PROTO_VERSION,
                         .flags = MEMD_HELLO_F_NOTICES | MEMD_HELLO_F_POSTMORTEM};
    memcpy(h.client_name, c->client_name, sizeof(h.client_name));
    if (reclaim) {
        h.flags |= MEMD_HELLO_F_RECLAIM;
        h.reclaim_session = c->info.session_id;
        memcpy(h.reclaim_token, c->token, sizeof(h.reclaim_token));
    }
    memd_wire_welcome w;
    uint64_t seq;
    int err = 0;
    uint8_t *p = memclient_begin(c, MEMD_OP_HELLO, MEMD_WIRE_HELLO_SIZE, MEMCLIENT_OUT_WELCOME,
                                 &w, 1, true, &seq, &err);
    if (!p)
        return memclient_fail(err, "HELLO to %s: %s", c->info.socket_path,
                              memclient_strerror(err));
    memd_wire_hello_put(p, &h);
    int r = memclient_wait(c, seq);
    memclient_slot *s = memclient_slot_at(c, seq);
    if (r < 0) {
        memclient_error e = s->err;
        memclient_consume(c, seq);
        char prefix[160];
        snprintf(prefix, sizeof(prefix), "HELLO to %.120s failed", c->info.socket_path);
        memclient_error_prefix(&e, prefix);
        return memclient_fail_with(&e);
    }
    memclient_consume(c, seq); /* the decoder checked w.version is one we speak */
    memclient_session_info_from_wire(&c->info, &w);
    c->welcome_flags = w.flags; /* no PERSISTENT from a memd without a state store */
    memcpy(c->token, w.token, sizeof(c->token));
    return 0;
}

int memclient_connect_named(const char *path, const char *client_name, memclient **out)
{
    return memclient_connect_flags(path, client_name, 0, out);
}

/* $MEMD_TIMEOUT_MS: unset or empty is no timeout; anything but a whole number of
 * milliseconds in [0, INT_MAX] is refused (a typo must not mean "wait forever"). */
static int env_timeout(int *out)
{
    const char *v = getenv(MEMCLIENT_TIMEOUT_ENV);
    *out = 0;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long ms = strtol(v, &end, 10);
    if (errno || *end || end == v || ms < 0 || ms > INT_MAX)
        return memclient_fail(-EINVAL, "$" MEMCLIENT_TIMEOUT_ENV "=%s: not a number of "
                              "milliseconds (0: no timeout)", v);
    *out = (int)ms;
    return 0;
}

int memclient_connect_flags(const char *path, const char *client_name, unsigned flags,
                            memclient **out)
{
    int timeout_ms;
    if (out)
        *out = NULL;
    int r = env_timeout(&timeout_ms);
    return r < 0 ? r : memclient_connect_timeout(path, client_name, flags, timeout_ms, out);
}

int memclient_set_timeout(memclient *c, int timeout_ms)
{
    if (!c)
        return memclient_fail(-EINVAL, "no connection (NULL)");
    if (timeout_ms < 0)
        return memclient_fail(-EINVAL, "timeout of %d ms: 0 (none) or more", timeout_ms);
    pthread_mutex_lock(&c->mu);
    c->timeout_ms = timeout_ms;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

int memclient_connect_timeout(const char *path, const char *client_name, unsigned flags,
                              int timeout_ms, memclient **out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_connect: out is NULL");
    *out = NULL;
    if (timeout_ms < 0)
        return memclient_fail(-EINVAL, "timeout of %d ms: 0 (none) or more", timeout_ms);
    if (flags & ~(unsigned)MEMCLIENT_CONNECT_RECONNECT)
        return memclient_fail(-EINVAL, "unknown connect flags 0x%x", flags);
    if (!path || !*path)
        path = getenv(MEMCLIENT_SOCKET_ENV);
    if (!path || !*path)
        path = MEMD_DEFAULT_SOCKET;

    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t plen = strlen(path);
    if (plen >= sizeof(sa.sun_path))
        return memclient_fail(-ENAMETOOLONG, "socket path is %zu bytes, at most %zu: %s", plen,
                              sizeof(sa.sun_path) - 1, path);
    memcpy(sa.sun_path, path, plen + 1);

    memclient *c = calloc(1, sizeof(*c));
    if (!c)
        return memclient_fail(-ENOMEM, "out of memory");
    memcpy(c->info.socket_path, path, plen + 1);
    c->auto_reconnect = (flags & MEMCLIENT_CONNECT_RECONNECT) != 0;
    c->timeout_ms = timeout_ms;
    c->next_id = 1;
    c->slots_cap = 16;
    c->slots = calloc(c->slots_cap, sizeof(*c->slots));
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!c->slots || c->fd < 0 || pthread_mutex_init(&c->mu, NULL) != 0) {
        int err = c->fd < 0 ? -errno : -ENOMEM;
        if (c->fd >= 0)
            close(c->fd);
        free(c->slots);
        free(c);
        return memclient_fail(err, "cannot create a socket: %s", memclient_strerror(err));
    }
    memd_wire_strset(c->client_name, sizeof(c->client_name),
                     client_name ? client_name : program_invocation_short_name);
    int r = connect_unix(c->fd, &sa);
    if (r < 0) {
        char why[256];
        memclient_fail(r, "cannot connect to %s: %s%s", path, strerror(-r),
                       hint(r, path, why, sizeof why));
    } else {
        r = hello(c, false);
    }
    if (r < 0) {
        memclient_error e;
        memclient_last_error(&e);
        memclient_disconnect(c);
        return memclient_fail_with(&e); /* disconnect must not hide the reason */
    }
    *out = c;
    return 0;
}

int memclient_connect(const char *path, memclient **out)
{
    return memclient_connect_named(path, NULL, out);
}

long memclient_now_ms(void)
{
    return (long)(memclient_now_ns() / 1000000u);
}

static bool past(long deadline)
{
    return deadline >= 0 && memclient_now_ms() >= deadline;
}

static void pause_20ms(void)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 20 * 1000000L};
    nanosleep(&pause, NULL);
}

/* A new socket connected to c's path, retrying while the daemon is not (yet) there
 * until deadline (-1: none); r on a single attempt (timeout 0), else -ETIMEDOUT. */
static int connect_again(memclient *c, long deadline, int timeout_ms, int *fd_out)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, c->info.socket_path, sizeof(sa.sun_path) - 1);
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -errno;
        int r = connect_unix(fd, &sa);
        if (r == 0) {
            *fd_out = fd;
            return 0;
        }
        close(fd);
        /* Not there yet (restarting): the socket is missing or nobody listens. */
        if (r != -ECONNREFUSED && r != -ENOENT && r != -EAGAIN)
            return r;
        if (past(deadline))
            return timeout_ms > 0 ? -ETIMEDOUT : r;
        pause_20ms();
    }
}

/* Connects c again and says HELLO, asking for the old session when reclaim. A daemon
 * that is going away may still accept on its socket and then hang up: that is a daemon
 * not there yet, retried until deadline like a missing socket. 0, or the HELLO's error
 * with the connection alive (refused), or an error with c dead (nobody to reach). */
static int reattach(memclient *c, long deadline, int timeout_ms, bool reclaim)
{
    for (;;) {
        int fd = -1, r = connect_again(c, deadline, timeout_ms, &fd);
        char why[256];
        if (r < 0)
            return memclient_fail(r, "cannot reconnect to %s: %s%s", c->info.socket_path,
                                  strerror(-r), hint(r, c->info.socket_path, why, sizeof why));
        /* Everything in flight failed when the connection died (memclient_kill): start
         * the stream afresh on the new socket. */
        close(c->fd);
        c->fd = fd;
        c->dead = 0;
        c->tx_off = c->tx_len = 0;
        c->rx_off = c->rx_len = 0;
        c->info.protocol_version = 0;
        r = hello(c, reclaim);
        if (r == 0 || (c->dead != -ECONNRESET && c->dead != -EPIPE))
            return r;
        if (past(deadline))
            return timeout_ms > 0 ? memclient_fail(-ETIMEDOUT, "cannot reconnect to %s: the "
                                                   "daemon kept closing new connections",
                                                   c->info.socket_path)
                                  : r;
        pause_20ms();
    }
}

int memclient_reconnect(memclient *c, int timeout_ms)
{
    if (!c)
        return memclient_fail(-EINVAL, "no connection (NULL)");
    pthread_mutex_lock(&c->mu);
    int rc = memclient_reconnect_locked(c, timeout_ms);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int memclient_reconnect_locked(memclient *c, int timeout_ms)
{
    if (!c->dead) {
        /* No call has failed yet, but the daemon may be gone: it hung up on us. */
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN | POLLRDHUP};
        if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)))
            memclient_kill(c, -ECONNRESET, "the daemon closed the connection");
    }
    if (!c->dead) {
        return memclient_fail(-EISCONN, "the connection to %s is alive: nothing to reconnect",
                              c->info.socket_path);
    }
    long deadline = timeout_ms < 0 ? -1 : memclient_now_ms() + timeout_ms;
    uint32_t old_id = c->info.session_id;
    bool reclaim = (c->welcome_flags & MEMD_WELCOME_F_PERSISTENT) != 0;
    int rc = reattach(c, deadline, timeout_ms, reclaim);
    /* Nobody to reach, reclaimed, or a plain HELLO that failed: that is the answer. */
    if (c->dead || (reclaim ? rc == 0 : rc < 0)) {
        if (!c->dead && rc == 0 && c->pool_hooks)
            c->pool_hooks->resync(c); /* memd's pool books start empty after a restart */
        return rc;
    }
    char why[256] = "the daemon keeps no state across restarts";
    if (reclaim) {
        /* Refused: the connection is fine, the session is gone. Start a new one on it. */
        memclient_error e;
        memclient_last_error(&e);
        snprintf(why, sizeof(why), "%s", e.message);
        int r2 = hello(c, false);
        if (r2 < 0)
            return r2;
    } else {
        rc = -ESTALE;
    }
    return memclient_fail(rc, "every old handle is void: session %u was not reclaimed, the "
                              "connection has a new, empty session %u (%.150s)",
                          old_id, c->info.session_id, why);
}

void memclient_disconnect(memclient *c)
{
    if (!c)
        return;
    if (c->pool_hooks)
        c->pool_hooks->close(c);
    close(c->fd);
    pthread_mutex_destroy(&c->mu);
    for (uint64_t q = c->head; q != c->tail; q++) /* submitted, never completed */
        free(memclient_slot_at(c, q)->frame);
    free(c->tx);
    free(c->rx);
    free(c->slots);
    free(c->revoked);
    free(c);
}

int memclient_session(memclient *c, memclient_session_info *out)
{
    if (!c || !out)
        return memclient_fail(-EINVAL, "memclient_session: NULL argument");
    pthread_mutex_lock(&c->mu);
    *out = c->info;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

size_t memclient_max_alloc_batch(memclient *c)
{
    if (!c || c->info.max_frame < MEMD_WIRE_COUNT_SIZE)
        return 0;
    return (c->info.max_frame - MEMD_WIRE_COUNT_SIZE) / MEMD_WIRE_ALLOC_REQ_SIZE;
}

size_t memclient_max_free_batch(memclient *c)
{
    if (!c || c->info.max_frame < MEMD_WIRE_COUNT_SIZE)
        return 0;
    return (c->info.max_frame - MEMD_WIRE_COUNT_SIZE) / MEMD_WIRE_HANDLE_SIZE;
}
