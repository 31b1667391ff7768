/* libmemclient: error texts and the per-thread record of the last failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "memclient_internal.h"

/* Per thread, like errno: a call's failure details stay readable by the thread that made
 * the call, whatever other threads do meanwhile. */
static __thread memclient_error tls_last;

/* memd's meaning of the codes its replies use; anything else falls back to libc. */
static const struct {
    int err;
    const char *text;
} memd_texts[] = {
    {ENOMEM, "out of device memory: no free block in the region is large enough"},
    {EPERM, "permission denied: the allocation belongs to another session"},
    {EACCES, "permission denied by the daemon"},
    {ENOENT, "no such allocation, or no socket at that path"},
    {ENODEV, "no such device"},
    {EEXIST, "a shared allocation of that name exists with another class or size"},
    {EMFILE, "the session holds the daemon's maximum number of allocations"},
    {EUSERS, "the daemon serves its maximum number of sessions"},
    {EBADRQC, "the daemon does not know this request"},
    {EINVAL, "invalid request"},
    {EOPNOTSUPP, "scope or buffer class not offered by this device"},
    {EDQUOT, "the user's memory quota on this device would be exceeded"},
    {E2BIG, "request too large for the device or the protocol"},
    {EMSGSIZE, "frame over the size limit"},
    {EPROTO, "protocol error: the daemon sent something unexpected"},
    {EPROTONOSUPPORT, "no protocol version in common with the daemon"},
    {EBADMSG, "malformed message"},
    {ENOTCONN, "connection closed after an earlier error"},
    {ECONNRESET, "connection closed by the daemon"},
    {EPIPE, "connection closed by the daemon"},
    {ECONNREFUSED, "connection refused: no daemon is listening on the socket"},
    {EOVERFLOW, "size overflows"},
    {ENAMETOOLONG, "name or path too long"},
};

const char *memclient_strerror(int err)
{
    if (err == 0)
        return "success";
    if (err < 0)
        err = -err;
    for (size_t i = 0; i < sizeof(memd_texts) / sizeof(memd_texts[0]); i++)
        if (memd_texts[i].err == err)
            return memd_texts[i].text;
    const char *s = strerrordesc_np(err);
    return s ? s : "unknown error";
}

int memclient_last_error(memclient_error *out)
{
    if (out)
        *out = tls_last;
    return tls_last.status;
}

static void vset(memclient_error *e, int err, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vset(memclient_error *e, int err, const char *fmt, va_list ap)
{
    memset(e, 0, sizeof(*e));
    e->status = err;
    if (fmt)
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
    else
        snprintf(e->message, sizeof(e->message), "%s", memclient_strerror(err));
}

void memclient_error_set(memclient_error *e, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(e, err, fmt, ap);
    va_end(ap);
}

int memclient_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(&tls_last, err, fmt, ap);
    va_end(ap);
    return err;
}

int memclient_fail_with(const memclient_error *e)
{
    tls_last = *e;
    return e->status;
}

void memclient_error_prefix(memclient_error *e, const char *prefix)
{
    char msg[sizeof(e->message)];
    memcpy(msg, e->message, sizeof(msg));
    msg[sizeof(msg) - 1] = '\0';
    /* Long messages are cut: the prefix says where, the tail is the daemon's detail. */
    if (snprintf(e->message, sizeof(e->message), "%s: %s", prefix, msg) >= (int)sizeof(e->message))
        e->message[sizeof(e->message) - 1] = '\0';
}
