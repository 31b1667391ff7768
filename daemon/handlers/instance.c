/* memd daemon — INSTANCE_CREATE, INSTANCE_RELEASE: instances of a loaded model, answered
 * with the instance's arena and every tensor's address. */
#include <errno.h>

#include "dispatch.h"
#include "model_req.h"
#include "wire.h"

static int reply(memd_state *st, const memd_wire_hdr *h, memd_buf *out, const memd_instance *in,
                 uint32_t flags)
{
    const memd_model *m = in->use->m;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_INSTANCE_INFO_SIZE +
                                      m->n * MEMD_WIRE_TENSOR_ADDR_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_instance_info ii = {.instance_id = in->id, .model_id = m->id,
                                  .arena_handle = in->arena_handle,
                                  .arena_address = in->arena_address,
                                  .arena_bytes = in->arena_bytes, .ntensors = m->n,
                                  .flags = flags};
    o = memd_wire_instance_info_put(o, &ii);
    uint64_t cst = memd_models_handle_address(st, m->const_handle);
    for (uint32_t i = 0; i < m->n; i++) {
        const memd_model_tensor *t = &m->t[i];
        if (t->role == MEMD_TENSOR_ALIAS)
            t = &m->t[t->ref];
        memd_wire_tensor_addr ta = {0};
        switch (t->role) {
        case MEMD_TENSOR_ACTIVATION:
            ta.address = in->arena_address + m->plan->offsets[t->ref];
            ta.handle = in->arena_handle;
            break;
        case MEMD_TENSOR_WEIGHT:
            ta.address = cst + t->off;
            ta.handle = m->const_handle;
            break;
        default:
            ta.address = in->ph_address[t->ref];
            ta.handle = in->ph_handle[t->ref];
            break;
        }
        o = memd_wire_tensor_addr_put(o, &ta);
    }
    return 0;
}

int memd_op_instance_create(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                            const uint8_t *p, memd_buf *out)
{
    memd_model_req q;
    if (memd_model_get_ref(st, h, p, out, 0, &q) < 0)
        return q.ret;
    memd_instance *in;
    bool reused;
    if (memd_models_instance_take(st, s, q.ref.id, h->id, h->status & MEMD_REQ_F_RETRY, &in,
                                  &reused, &q.err) < 0)
        return memd_reply_fail(st, h, out, &q.err, false);
    return reply(st, h, out, in, reused ? MEMD_INST_I_REUSED : 0);
}

int memd_op_instance_release(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                             const uint8_t *p, memd_buf *out)
{
    return memd_model_ref_call(st, s, h, p, out, MEMD_INST_F_FREE, memd_models_instance_release);
}
