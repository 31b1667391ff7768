/* memd daemon — MODEL_LOAD, MODEL_UNLOAD, MODEL_INFO: the model layer's loads, answered
 * with the model's info record and its tensors. */
#include <errno.h>
#include <string.h>

#include "dispatch.h"
#include "model_req.h"
#include "wire.h"

int memd_model_reply_info(memd_state *st, uint16_t op, uint64_t id, memd_buf *out,
                          const memd_model *m, uint32_t flags)
{
    uint8_t *o = memd_reply_begin(out, op, id,
                                  MEMD_WIRE_MODEL_INFO_SIZE + m->n * MEMD_WIRE_TENSOR_INFO_SIZE);
    if (!o)
        return -ENOMEM;
    uint64_t const_addr = memd_models_handle_address(st, m->const_handle);
    memd_wire_model_info mi = {
        .model_id = m->id, .plan_id = m->plan->id, .arena = m->plan->arena,
        .lower_bound = m->plan->lower_bound, .code_handle = m->code_handle,
        .code_address = memd_models_handle_address(st, m->code_handle),
        .code_bytes = m->code_bytes, .const_handle = m->const_handle,
        .const_address = const_addr, .const_bytes = m->const_bytes,
        .created_ns = m->created_ns, .device = st->devs[m->dev].spec->id, .users = m->users,
        .ntensors = m->n, .instances = m->instances, .flags = flags};
    if (m->plan->optimal)
        mi.flags |= MEMD_MODEL_I_PLAN_OPTIMAL;
    if (m->plan->precomputed)
        mi.flags |= MEMD_MODEL_I_PLAN_PRECOMPUTED;
    memcpy(mi.name, m->name, sizeof mi.name);
    memcpy(mi.strategy, m->plan->strategy, sizeof mi.strategy);
    mi.strategy[sizeof mi.strategy - 1] = '\0';
    o = memd_wire_model_info_put(o, &mi);
    for (uint32_t i = 0; i < m->n; i++) {
        const memd_model_tensor *t = &m->t[i];
        const memd_model_tensor *src = t->role == MEMD_TENSOR_ALIAS ? &m->t[t->ref] : t;
        memd_wire_tensor_info ti = {.size = t->size, .role = t->role,
                                    .alias_of = t->role == MEMD_TENSOR_ALIAS ? t->ref
                                                                             : MEMD_NO_TENSOR};
        if (src->role == MEMD_TENSOR_WEIGHT)
            ti.value = const_addr + src->off;
        else if (src->role == MEMD_TENSOR_ACTIVATION)
            ti.value = m->plan->offsets[src->ref];
        o = memd_wire_tensor_info_put(o, &ti);
    }
    return 0;
}

int memd_model_get_doc(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out, memd_model_req *q)
{
    memd_error_reset(&q->err);
    int rc = memd_models_doc(st, s, h, p, &q->doc, &q->err);
    if (rc < 0)
        q->ret = memd_reply_fail(st, h, out, &q->err, false);
    return rc;
}

int memd_op_model_load(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    memd_model_req q;
    if (memd_model_get_doc(st, s, h, p, out, &q) < 0)
        return q.ret;
    memd_model *m;
    bool fresh;
    int rc = memd_models_load(st, s, &q.doc, &m, &fresh, &q.err);
    memd_models_doc_done(st, &q.doc);
    if (rc < 0)
        return memd_reply_fail(st, h, out, &q.err, false);
    return memd_model_reply_info(st, h->opcode, h->id, out, m, fresh ? MEMD_MODEL_I_NEW : 0);
}

int memd_model_get_ref(memd_state *st, const memd_wire_hdr *h, const uint8_t *p, memd_buf *out,
                       uint32_t known_flags, memd_model_req *q)
{
    memd_wire_ref *ref = &q->ref;
    (void)memd_wire_ref_get(p, h->len, ref); /* dispatch checked the length */
    memd_error_reset(&q->err);
    if (ref->flags & ~known_flags) {
        memd_error_set(&q->err, -EINVAL, "malformed %s request: unknown flags 0x%x",
                       memd_wire_opcode_name(h->opcode), ref->flags & ~known_flags);
        q->ret = memd_reply_fail(st, h, out, &q->err, true);
        return -EINVAL;
    }
    return 0;
}

int memd_model_ref_call(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out, uint32_t flag, memd_model_ref_fn fn)
{
    memd_model_req q;
    if (memd_model_get_ref(st, h, p, out, flag, &q) < 0)
        return q.ret;
    return memd_reply_done(st, h, out, &q.err,
                           fn(st, s, q.ref.id, q.ref.flags & flag, h->status & MEMD_REQ_F_RETRY,
                              &q.err));
}

int memd_op_model_unload(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                         const uint8_t *p, memd_buf *out)
{
    return memd_model_ref_call(st, s, h, p, out, MEMD_MODEL_F_FORCE, memd_models_unload);
}

int memd_op_model_info(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    memd_model_req q;
    if (memd_model_get_ref(st, h, p, out, 0, &q) < 0)
        return q.ret;
    const memd_model *m = memd_models_info(st, s, q.ref.id, &q.err);
    if (!m)
        return memd_reply_fail(st, h, out, &q.err, false);
    return memd_model_reply_info(st, h->opcode, h->id, out, m, 0);
}
