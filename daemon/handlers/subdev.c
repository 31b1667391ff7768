/* memd daemon — SUBDEV_DEFINE (admin only: dispatch checks) and SUBDEV_BIND. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "error.h"
#include "malformed.h"
#include "reply.h"
#include "subdev.h"
#include "wire.h"

static int fail(memd_state *st, const memd_wire_hdr *h, memd_buf *out, int rc, const char *msg)
{
    memd_error err;
    memd_error_reset(&err);
    memd_error_set(&err, rc, "%s", msg);
    return memd_reply_fail(st, h, out, &err, false);
}

int memd_op_subdev_define(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                          const uint8_t *p, memd_buf *out)
{
    memd_wire_subdev_def d;
    const uint8_t *raw;
    int rc = memd_wire_subdev_def_get(p, h->len, &d, &raw);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_subdev_spec sd = {.device = d.device, .kind = (memd_kind)d.kind, .budget = d.budget,
                           .window = d.window, .nbanks = d.count};
    memcpy(sd.name, d.name, sizeof sd.name);
    if (!sd.name[0])
        return fail(st, h, out, -EINVAL, "a sub-device needs a name");
    for (int i = 0; i < MEMD_SUBDEV_OVERLAPS; i++)
        if (d.overlap[i][0])
            memcpy(sd.overlap[sd.noverlap++], d.overlap[i], MEMD_NAME_MAX);
    if (d.count == 0)
        return fail(st, h, out, -EINVAL, "a sub-device needs at least one bank");
    sd.banks = malloc(sizeof(*sd.banks) * d.count);
    if (!sd.banks)
        return fail(st, h, out, -ENOMEM, "daemon out of memory");
    for (uint32_t i = 0; i < d.count; i++) {
        sd.banks[i] = memd_wire_u32(raw + 4 * (size_t)i);
        if (i && sd.banks[i] <= sd.banks[i - 1]) {
            free(sd.banks);
            return fail(st, h, out, -EINVAL, "sub-device banks must be strictly increasing");
        }
    }
    /* Room in the state store first, as for an allocation: what it cannot keep is
     * refused, not forgotten by the next restart. */
    memd_error perr;
    memd_error_reset(&perr);
    if ((rc = memd_hooks_prepare(st, s, &perr)) < 0) {
        memd_subdev_spec_free(&sd);
        return memd_reply_fail(st, h, out, &perr, false);
    }
    char msg[192];
    rc = memd_subdev_define(st, s, &sd, msg, sizeof msg);
    memd_subdev_spec_free(&sd); /* taken over on success: nothing left then */
    if (rc < 0)
        return fail(st, h, out, rc, msg);
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}

int memd_op_subdev_bind(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    char name[MEMD_NAME_MAX];
    int rc = memd_wire_get_str(p, name, sizeof name);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    int i = memd_subdev_find(st, name);
    memd_error err;
    memd_error_reset(&err);
    if (i < 0) {
        memd_error_set(&err, -ENOENT, "no sub-device '%s'", name);
        return memd_reply_fail(st, h, out, &err, false);
    }
    /* A binding is stored with the session: room first, as for an allocation. */
    if ((rc = memd_hooks_prepare(st, s, &err)) == 0)
        rc = memd_subdev_bind(st, s, (uint32_t)i, &err);
    return memd_reply_done(st, h, out, &err, rc);
}
