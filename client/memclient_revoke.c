/* libmemclient: revocation notices (REVOKED frames, protocol.h "Revocation notices"):
 * queued as they come with replies, taken by memclient_revoked or handed to the
 * callback when the call that brought them ends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

int memclient_revoke_notices(memclient *c, const uint8_t *p, size_t len)
{
    if (len < MEMD_WIRE_COUNT_SIZE)
        return -EPROTO;
    uint32_t n = memd_wire_u32(p);
    if ((len - MEMD_WIRE_COUNT_SIZE) / MEMD_WIRE_REVOKE_NOTICE_SIZE != n ||
        (len - MEMD_WIRE_COUNT_SIZE) % MEMD_WIRE_REVOKE_NOTICE_SIZE)
        return -EPROTO;
    if (c->nrevoked + n > c->revoked_cap) {
        size_t cap = c->revoked_cap ? c->revoked_cap : 8;
        while (cap < c->nrevoked + n)
            cap *= 2;
        memclient_revoke *q = realloc(c->revoked, cap * sizeof *q);
        if (!q)
            return -ENOMEM;
        c->revoked = q;
        c->revoked_cap = cap;
    }
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++, p += MEMD_WIRE_REVOKE_NOTICE_SIZE) {
        memd_wire_revoke_notice w;
        if (memd_wire_revoke_notice_get(p, MEMD_WIRE_REVOKE_NOTICE_SIZE, &w) < 0)
            return -EPROTO;
        memclient_revoke_from_wire(&c->revoked[c->nrevoked++], &w);
    }
    return 0;
}

void memclient_revoke_unlock(memclient *c)
{
    memclient_revoke_fn fn = c->revoke_cb;
    /* The pool timer's own calls leave them to the caller's next one. */
    if (!fn || !c->nrevoked || (c->timer_on && pthread_equal(pthread_self(), c->timer))) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    void *arg = c->revoke_arg;
    memclient_revoke *q = c->revoked;
    size_t n = c->nrevoked;
    c->revoked = NULL;
    c->nrevoked = c->revoked_cap = 0;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++)
        fn(arg, &q[i]);
    free(q);
}

int memclient_revoked(memclient *c, memclient_revoke *out, size_t cap)
{
    if (!c || (!out && cap))
        return memclient_fail(-EINVAL, "memclient_revoked: %s is NULL", c ? "out" : "c");
    pthread_mutex_lock(&c->mu);
    size_t n = c->nrevoked < cap ? c->nrevoked : cap;
    if (n) {
        memcpy(out, c->revoked, n * sizeof *out);
        memmove(c->revoked, c->revoked + n, (c->nrevoked - n) * sizeof *out);
        c->nrevoked -= n;
    }
    pthread_mutex_unlock(&c->mu);
    return (int)n;
}

int memclient_set_revoke_cb(memclient *c, memclient_revoke_fn fn, void *arg)
{
    if (!c)
        return memclient_fail(-EINVAL, "memclient_set_revoke_cb: c is NULL");
    pthread_mutex_lock(&c->mu);
    c->revoke_cb = fn;
    c->revoke_arg = arg;
    memclient_revoke_unlock(c); /* what is queued goes to fn now */
    return 0;
}
