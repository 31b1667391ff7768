/* memd daemon — INSTANCE_CREATE, INSTANCE_RELEASE. An instance is one inference in
 * flight: an internal arena sized by the model's plan plus one buffer per placeholder
 * (inputs, outputs, in-outs), all held by the creating session. Several may exist at
 * once (pipelining). Released instances stay allocated on the session's free list for
 * that model and are handed out again first (same addresses, nothing allocated), unless
 * released with MEMD_INST_F_FREE; unloading the model or closing the session frees them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "errmsg.h"
#include "model_internal.h"
#include "reply.h"
#include "wire.h"

static int alloc_one(memd_state *st, memd_session *s, const memd_model *m, memd_class cls,
                     uint64_t bytes, uint64_t align, memd_alloc **a, memd_wire_error *err)
{
    memd_wire_alloc_req w = {.device = st->devs[m->dev].spec->id, .cls = (uint8_t)cls,
                             .scope = m->scope, .bytes = bytes,
                             .alignment = align > 1 ? align : 0};
    return memd_alloc_create(st, s, &w, a, err);
}

/* Allocates a new instance's buffers: all or nothing. */
static int instance_new(memd_state *st, memd_models *ms, memd_model_use *u, memd_instance **out,
                        memd_wire_error *err)
{
    memd_model *m = u->m;
    memd_session *s = u->s;
    memd_instance *in = calloc(1, sizeof *in);
    uint64_t *ph_h = calloc(m->nph ? m->nph : 1, sizeof *ph_h);
    uint64_t *ph_a = calloc(m->nph ? m->nph : 1, sizeof *ph_a);
    if (!in || !ph_h || !ph_a) {
        free(in);
        free(ph_h);
        free(ph_a);
        return memd_err_set(err, -ENOMEM, "daemon out of memory for an instance");
    }
    in->ph_handle = ph_h;
    in->ph_address = ph_a;
    in->use = u;
    memd_alloc *a;
    int rc = 0;
    uint32_t done = 0;
    if (m->plan->arena) {
        rc = alloc_one(st, s, m, MEMD_CLASS_INTERNAL, m->plan->arena, m->arena_align, &a, err);
        if (rc == 0) {
            in->arena_handle = a->handle;
            in->arena_address = a->pl.address;
            in->arena_bytes = m->plan->arena;
        }
    }
    for (; rc == 0 && done < m->nph; done++) {
        const memd_model_tensor *t = &m->t[m->ph[done]];
        rc = alloc_one(st, s, m, MEMD_CLASS_PLACEHOLDER, t->size, t->align, &a, err);
        if (rc == 0) {
            ph_h[done] = a->handle;
            ph_a[done] = a->pl.address;
            in->ph_bytes += t->size;
        }
    }
    if (rc == 0) {
        rc = memd_models_manage(ms, in->arena_handle);
        for (uint32_t i = 0; rc == 0 && i < m->nph; i++)
            if ((rc = memd_models_manage(ms, ph_h[i])) < 0) {
                while (i-- > 0)
                    memd_models_unmanage(ms, ph_h[i]);
                memd_models_unmanage(ms, in->arena_handle);
            }
        if (rc == 0) {
            in->id = ms->next_instance_id++;
            if ((rc = memd_map_put(&ms->instances, in->id, (uint64_t)(uintptr_t)in)) < 0) {
                memd_models_unmanage(ms, in->arena_handle);
                for (uint32_t i = 0; i < m->nph; i++)
                    memd_models_unmanage(ms, ph_h[i]);
            }
        }
        if (rc < 0)
            memd_err_set(err, -ENOMEM, "daemon out of memory for an instance");
    } else {
        char msg[sizeof err->message];
        memcpy(msg, err->message, sizeof msg);
        memd_err_set(err, rc, "model %s instance: %s %s (nothing allocated)", m->name,
                     done < m->nph ? "placeholder" : "arena", msg);
    }
    if (rc < 0) {
        memd_models_release_handle(st, s, in->arena_handle);
        for (uint32_t i = 0; i < m->nph; i++)
            memd_models_release_handle(st, s, ph_h[i]);
        free(ph_h);
        free(ph_a);
        free(in);
        return rc;
    }
    in->next = u->insts;
    u->insts = in;
    m->instances++;
    *out = in;
    return 0;
}

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
    memd_wire_ref ref;
    int ret;
    if (memd_model_get_ref(st, h, p, out, 0, &ref, &ret) < 0)
        return ret;
    memd_wire_error err = {0};
    memd_models *ms = st->models;
    memd_model_use *u = ms ? memd_models_use_of(ms, s, ref.id) : NULL;
    if (!u) {
        memd_err_set(&err, -ENOENT, "this session has not loaded a model with id %llu",
                     (unsigned long long)ref.id);
        return memd_reply_fail(st, h, out, &err, false);
    }
    /* A retry whose first sending made an instance busy gets that one (model.h). */
    if (h->status & MEMD_REQ_F_RETRY)
        for (memd_instance *in = u->insts; in; in = in->next)
            if (in->busy && in->req == h->id)
                return reply(st, h, out, in, in->reused ? MEMD_INST_I_REUSED : 0);
    for (memd_instance *in = u->insts; in; in = in->next) {
        if (!in->busy) {
            in->busy = true;
            in->reused = true;
            in->req = h->id;
            memd_models_save_instance(ms, in);
            return reply(st, h, out, in, MEMD_INST_I_REUSED);
        }
    }
    memd_instance *in = NULL;
    if (instance_new(st, ms, u, &in, &err) < 0) {
        st->ctr.alloc_failures++;
        return memd_reply_fail(st, h, out, &err, false);
    }
    in->busy = true;
    in->req = h->id;
    memd_models_save_ids(ms);
    memd_models_save_instance(ms, in);
    return reply(st, h, out, in, 0);
}

int memd_op_instance_release(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                             const uint8_t *p, memd_buf *out)
{
    memd_wire_ref ref;
    int ret;
    if (memd_model_get_ref(st, h, p, out, MEMD_INST_F_FREE, &ref, &ret) < 0)
        return ret;
    memd_wire_error err = {0};
    memd_models *ms = st->models;
    uint64_t *v = ms ? memd_map_get(&ms->instances, ref.id) : NULL;
    memd_instance *in = v ? (memd_instance *)(uintptr_t)*v : NULL;
    bool retry = h->status & MEMD_REQ_F_RETRY;
    if (!in && retry)
        return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM; /* freed then */
    if (!in || in->use->s != s) {
        memd_err_set(&err, -ENOENT, "this session has no instance with id %llu",
                     (unsigned long long)ref.id);
        return memd_reply_fail(st, h, out, &err, false);
    }
    if (ref.flags & MEMD_INST_F_FREE) {
        memd_models_instance_destroy(st, ms, in);
    } else if (!in->busy && retry) {
        /* released by the first sending */
    } else if (!in->busy) {
        memd_err_set(&err, -EALREADY, "instance %llu is already released",
                     (unsigned long long)ref.id);
        return memd_reply_fail(st, h, out, &err, false);
    } else {
        in->busy = false;
        memd_models_save_instance(ms, in);
    }
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}
