/* memd daemon — LIMIT_SET and LIMIT_CLEAR (admin only: dispatch checks). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cglimit.h"
#include "dispatch.h"
#include "error.h"
#include "malformed.h"
#include "names.h"
#include "reply.h"
#include "wire.h"

/* The preamble of both: decodes the request, resolves its device (UINT32_MAX for any,
 * with the flag) and makes room in the state store first, as for an allocation: what it
 * cannot keep is refused, not forgotten by the next restart. < 0 with err->code unset:
 * a malformed request. */
static int begin(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 bool clear, memd_wire_limit_def *d, uint32_t *dev, memd_error *err)
{
    memd_error_reset(err);
    int rc = memd_wire_limit_def_get(p, h->len, d);
    if (rc < 0)
        return rc;
    *dev = UINT32_MAX;
    if (!(d->flags & MEMD_LIMIT_F_ANY_DEVICE)) {
        int i = memd_state_dev_index(st, d->device);
        if (i < 0)
            return memd_error_set(err, i, "no device %u (%u configured)", d->device, st->ndevs);
        *dev = (uint32_t)i;
    }
    if (!clear && d->flags)
        return memd_error_set(err, -EINVAL, "LIMIT_SET takes no flags (they are LIMIT_CLEAR's)");
    return memd_hooks_prepare(st, s, err);
}

int memd_op_limit_set(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                      memd_buf *out)
{
    memd_wire_limit_def d;
    uint32_t dev;
    memd_error err;
    int rc = begin(st, s, h, p, false, &d, &dev, &err);
    if (rc < 0 && !err.code)
        return memd_malformed(st, h, out, rc);
    if (rc == 0)
        rc = memd_cglimit_set(st, d.cgroup, dev, d.kind, d.max, MEMD_CGLIMIT_REQUEST, &err);
    return memd_reply_done(st, h, out, &err, rc);
}

int memd_op_limit_clear(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    memd_wire_limit_def d;
    uint32_t dev;
    memd_error err;
    int rc = begin(st, s, h, p, true, &d, &dev, &err);
    if (rc < 0 && !err.code)
        return memd_malformed(st, h, out, rc);
    uint8_t kind = (d.flags & MEMD_LIMIT_F_ANY_GROUP) ? MEMD_KIND_COUNT : d.kind;
    if (rc == 0 && memd_cglimit_clear(st, d.cgroup, dev, kind) == 0) {
        char where[48] = "any device";
        if (dev != UINT32_MAX)
            snprintf(where, sizeof where, "device %u", d.device);
        rc = memd_error_set(&err, -ENOENT, "cgroup %.*s has no limit on %s%s%s", 100, d.cgroup,
                            where, kind == MEMD_KIND_COUNT ? "" : " ",
                            kind == MEMD_KIND_COUNT ? "" : memd_kind_name((memd_kind)kind));
    }
    return memd_reply_done(st, h, out, &err, rc);
}
