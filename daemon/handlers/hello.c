/* memd daemon — HELLO: version, session id, limits, and the reclaim token. */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "error.h"
#include "malformed.h"
#include "memd-build-config.h"
#include "reply.h"
#include "store.h"
#include "text.h"
#include "wire.h"

int memd_op_hello(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out)
{
    memd_wire_hello hello;
    int rc = memd_wire_hello_get_any(p, h->len, &hello); /* with or without reclaim fields */
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    if (hello.min_version > MEMD_PROTO_VERSION) {
        memd_error err;
        memd_error_reset(&err);
        memd_error_set(&err, -EPROTONOSUPPORT,
                     "client needs protocol version %u..%u; this memd speaks 1..%u",
                     hello.min_version, hello.max_version, MEMD_PROTO_VERSION);
        return memd_reply_fail(st, h, out, &err, true);
    }
    size_t at;
    const char *why;
    if (memd_text_check(hello.client_name, &at, &why) < 0) {
        memd_error err;
        memd_error_reset(&err);
        memd_error_set(&err, -EINVAL, "client name: byte %zu is %s (0x%02x); names are UTF-8 "
                     "text without control characters",
                     at, why, (unsigned char)hello.client_name[at]);
        return memd_reply_fail(st, h, out, &err, false);
    }
    s->version = hello.max_version < MEMD_PROTO_VERSION ? hello.max_version : MEMD_PROTO_VERSION;
    memcpy(s->client_name, hello.client_name, sizeof s->client_name);
    s->pm_errors = (hello.flags & MEMD_HELLO_F_POSTMORTEM) != 0;
    memd_wire_welcome w = {.version = s->version, .session_id = s->id,
                           .max_frame = st->limits.max_frame, .ndevices = st->ndevs,
                           .flags = MEMD_WELCOME_F_OPS_2 | MEMD_WELCOME_F_HISTORY_2 |
                                    MEMD_WELCOME_F_RANGE_LOCKSTEP |
                                    MEMD_WELCOME_F_SUBDEV_WINDOWS | MEMD_WELCOME_F_SIZES};
    s->wants_notices = (hello.flags & MEMD_HELLO_F_NOTICES) != 0;
    if (s->wants_notices)
        w.flags |= MEMD_WELCOME_F_NOTICES;
    memd_wire_strset(w.server_version, sizeof w.server_version, MEMD_VERSION);
    memd_error err;
    memd_error_reset(&err);
    if ((rc = memd_store_hello(st, s, &hello, &w, &err)) < 0) /* token, reclaim */
        return memd_reply_fail(st, h, out, &err, false);
    /* A client that sent the short HELLO gets the short welcome it expects. */
    uint32_t wlen = h->len == MEMD_WIRE_HELLO_SIZE ? MEMD_WIRE_WELCOME_SIZE
                                                   : MEMD_WIRE_WELCOME_V1_SIZE;
    uint8_t full[MEMD_WIRE_WELCOME_SIZE];
    memd_wire_welcome_put(full, &w);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, wlen);
    if (!o)
        return -ENOMEM;
    memcpy(o, full, wlen);
    return 0;
}
