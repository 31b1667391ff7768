/* memd daemon — REVOKED: the notice frame memd sends a session before its next reply
 * when an admin freed what it held (core/revoke.h); never a request. */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "error.h"
#include "reply.h"
#include "revoke.h"
#include "wire.h"

int memd_op_revoked(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                    memd_buf *out)
{
    (void)s;
    (void)p;
    memd_error err;
    memd_error_reset(&err);
    memd_error_set(&err, -EINVAL, "REVOKED is a notice memd sends, not a request");
    return memd_reply_fail(st, h, out, &err, false);
}

int memd_reply_notices(memd_session *s, memd_buf *out)
{
    uint32_t len = MEMD_WIRE_COUNT_SIZE + s->nnotes * MEMD_WIRE_REVOKE_NOTICE_SIZE;
    uint8_t *p = memd_reply_begin(out, MEMD_OP_REVOKED, 0, len);
    if (!p)
        return -ENOMEM; /* kept for the next reply */
    memd_wire_put_u32(p, s->nnotes);
    memd_wire_put_u32(p + 4, 0);
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < s->nnotes; i++, p += MEMD_WIRE_REVOKE_NOTICE_SIZE) {
        const memd_revoke_note *n = &s->notes[i];
        memd_wire_revoke_notice w = {.handle = n->handle, .time_ns = n->time_ns,
                                     .device = n->device, .actor_session = n->session,
                                     .actor_pid = n->pid, .actor_uid = n->uid};
        memcpy(w.actor_comm, n->comm, sizeof w.actor_comm);
        memcpy(w.actor_client, n->client_name, sizeof w.actor_client);
        memd_wire_revoke_notice_put(p, &w);
    }
    s->nnotes = 0;
    return 0;
}
