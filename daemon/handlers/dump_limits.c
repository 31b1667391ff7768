/* memd daemon — DUMP records of the cgroup limits (MEMD_DUMP_F_LIMITS: every one, for
 * everyone, as `cat dmem.max` is) and of the refused allocations per device and reason
 * (MEMD_DUMP_F_FAILURES). */
#include <errno.h>
#include <string.h>

#include "cglimit.h"
#include "dispatch.h"
#include "reply.h"
#include "wire.h"

static int put_limits(const memd_state *st, int dev, memd_buf *out)
{
    uint32_t n;
    const memd_cglimit *v = memd_cglimit_list(st, &n);
    for (uint32_t i = 0; i < n; i++) {
        const memd_cglimit *l = &v[i];
        if (dev >= 0 && l->dev != (uint32_t)dev)
            continue;
        uint8_t *p = memd_dump_rec(out, MEMD_REC_LIMIT);
        if (!p)
            return -ENOMEM;
        memd_wire_limit_rec r = {.device = st->devs[l->dev].spec->id, .kind = l->kind,
                                 .from_config = l->from_config, .max = l->max,
                                 .current = l->current, .peak = l->peak};
        _Static_assert(sizeof r.cgroup == sizeof l->cgroup, "one cgroup path size");
        memcpy(r.cgroup, l->cgroup, sizeof r.cgroup);
        memd_wire_limit_rec_put(p, &r);
    }
    return 0;
}

static int put_failures(const memd_state *st, int dev, memd_buf *out)
{
    for (uint32_t i = 0; i < st->ndevs; i++) {
        if (dev >= 0 && i != (uint32_t)dev)
            continue;
        uint8_t *p = memd_dump_rec(out, MEMD_REC_FAILURES);
        if (!p)
            return -ENOMEM;
        const uint64_t *f = st->devs[i].failures;
        memd_wire_failures_rec r = {.device = st->devs[i].spec->id,
                                    .no_room = f[MEMD_FAIL_NO_ROOM],
                                    .quota = f[MEMD_FAIL_QUOTA],
                                    .limit = f[MEMD_FAIL_LIMIT],
                                    .too_large = f[MEMD_FAIL_TOO_LARGE],
                                    .other = f[MEMD_FAIL_OTHER]};
        memd_wire_failures_rec_put(p, &r);
    }
    return 0;
}

int memd_dump_limits(const memd_state *st, int dev, uint32_t flags, memd_buf *out)
{
    int rc = 0;
    if (flags & MEMD_DUMP_F_LIMITS)
        rc = put_limits(st, dev, out);
    if (rc == 0 && (flags & MEMD_DUMP_F_FAILURES))
        rc = put_failures(st, dev, out);
    return rc;
}
