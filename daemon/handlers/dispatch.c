/* memd daemon — the dispatch table: opcode -> handler, after the opcode table's checks. */
#include "dispatch.h"

#include <errno.h>

#include "error.h"
#include "malformed.h"
#include "model.h"
#include "reply.h"
#include "wire.h"

typedef int (*memd_handler)(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                            const uint8_t *p, memd_buf *out);

static const memd_handler handlers[MEMD_OP_OPCODE_COUNT] = {
    [MEMD_OP_HELLO] = memd_op_hello,
    [MEMD_OP_ALLOC] = memd_op_alloc,
    [MEMD_OP_ALLOC_BATCH] = memd_op_alloc_batch,
    [MEMD_OP_ALLOC_BATCH_BANKS] = memd_op_alloc_batch_banks,
    [MEMD_OP_FREE] = memd_op_free,
    [MEMD_OP_FREE_BATCH] = memd_op_free_batch,
    [MEMD_OP_QUERY] = memd_op_query,
    [MEMD_OP_BANKS] = memd_op_banks,
    [MEMD_OP_ALLOC_BANKS] = memd_op_alloc_banks,
    [MEMD_OP_BANK_ADDRS] = memd_op_bank_addrs,
    [MEMD_OP_SUBDEV_DEFINE] = memd_op_subdev_define,
    [MEMD_OP_SUBDEV_BIND] = memd_op_subdev_bind,
    [MEMD_OP_DUMP] = memd_op_dump,
    [MEMD_OP_UPLOAD] = memd_op_upload,
    [MEMD_OP_PLAN] = memd_op_plan,
    [MEMD_OP_MODEL_LOAD] = memd_op_model_load,
    [MEMD_OP_MODEL_UNLOAD] = memd_op_model_unload,
    [MEMD_OP_MODEL_INFO] = memd_op_model_info,
    [MEMD_OP_INSTANCE_CREATE] = memd_op_instance_create,
    [MEMD_OP_INSTANCE_RELEASE] = memd_op_instance_release,
    [MEMD_OP_EVENTS] = memd_op_events,
    [MEMD_OP_POOL_REPORT] = memd_op_pool_report,
};

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out)
{
    st->ctr.requests++;
    st->now_ns = 0;
    s->requests++;
    memd_error err;
    memd_error_reset(&err);
    const memd_wire_op *o = memd_wire_op_of(h->opcode);
    /* An opcode the proto table knows but this table lacks is unknown here too. */
    if (!o || !handlers[h->opcode]) {
        memd_error_set(&err, -EBADRQC, "unknown opcode %u (this memd knows 1..%u)", h->opcode,
                     MEMD_OP_OPCODE_COUNT - 1);
        return memd_reply_fail(st, h, out, &err, true);
    }
    int rc = memd_wire_op_check_len(h->opcode, payload, h->len);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    if (o->admin_only && !s->admin) {
        memd_error_set(&err, -EPERM, "%s is for admins only (root or the admin group)",
                     o->name);
        return memd_reply_fail(st, h, out, &err, false);
    }
    return handlers[h->opcode](st, s, h, payload, out);
}
