/* memd daemon — ALLOC_BATCH and FREE_BATCH: all or nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "alloc.h"
#include "batch.h"
#include "dispatch.h"
#include "error.h"
#include "model.h"
#include "reply.h"
#include "store.h"
#include "wire.h"

void memd_batch_rollback(memd_state *st, memd_session *s, uint32_t k)
{
    while (k-- > 0)
        memd_hold_release(st, s->holds);
}

int memd_batch_again_begin(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                           uint32_t n, memd_buf *out, memd_batch_again *ag, int *ret)
{
    size_t have = memd_holds_of_request(s, h->id, NULL, 0);
    if (have == 0)
        return 0;
    memd_error err;
    memd_error_reset(&err);
    memd_hold **hs = have == n ? malloc(n * sizeof *hs) : NULL;
    if (!hs) {
        memd_error_set(&err, have == n ? -ENOMEM : -EIO,
                     "retried %s %llu of %u records: the session holds %zu from its "
                     "first sending", memd_wire_opcode_name(h->opcode),
                     (unsigned long long)h->id, n, have);
        *ret = memd_reply_fail(st, h, out, &err, false);
        return -1;
    }
    memd_holds_of_request(s, h->id, hs, n); /* newest first: reversed, record order */
    *ag = (memd_batch_again){hs, n, n};
    return 1;
}

memd_alloc *memd_batch_again_next(const memd_state *st, memd_batch_again *ag,
                                  const memd_wire_alloc_req *req)
{
    memd_alloc *a = NULL;
    if (req && (req->flags & MEMD_ALLOC_F_SHARED)) {
        for (size_t k = 0; k < ag->n && !a; k++) {
            memd_alloc *x = memd_hold_alloc(ag->hs[k]);
            if (x->shared && strcmp(memd_alloc_name(x), req->name) == 0 &&
                st->devs[x->dev].spec->id == req->device)
                a = x;
        }
    } else {
        while (ag->next > 0 && !a)
            if (!memd_hold_alloc(ag->hs[--ag->next])->shared)
                a = memd_hold_alloc(ag->hs[ag->next]);
    }
    /* Cannot happen for the same payload; answer something held. */
    return a ? a : memd_hold_alloc(ag->hs[0]);
}

/* A retried ALLOC_BATCH whose first sending was applied: its n holds back in the order
 * of the request's records. 1 with the reply queued, 0 when the first sending left no
 * trace (apply it as new), or the handler's result. */
static int alloc_batch_again(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                             const uint8_t *p, uint32_t n, memd_buf *out)
{
    memd_batch_again ag;
    int ret = 0, rc = memd_batch_again_begin(st, s, h, n, out, &ag, &ret);
    if (rc <= 0)
        return rc < 0 ? (ret < 0 ? ret : 1) : 0;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_BUFFER_SIZE);
    if (!o) {
        free(ag.hs);
        return -ENOMEM;
    }
    o = memd_wire_count_put(o, n);
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++, p += MEMD_WIRE_ALLOC_REQ_SIZE) {
        memd_wire_alloc_req req;
        bool ok = memd_wire_alloc_req_get(p, MEMD_WIRE_ALLOC_REQ_SIZE, &req) == 0;
        memd_wire_buffer b;
        memd_alloc_to_buffer(st, memd_batch_again_next(st, &ag, ok ? &req : NULL), &b);
        o = memd_wire_buffer_put(o, &b);
    }
    free(ag.hs);
    return 1;
}

static int alloc_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    uint32_t n = memd_wire_u32(p); /* dispatch checked it against the records */
    memd_error err;
    memd_error_reset(&err);
    if (MEMD_WIRE_COUNT_SIZE + (uint64_t)n * MEMD_WIRE_BUFFER_SIZE > MEMD_MAX_REPLY) {
        memd_error_set(&err, -E2BIG, "ALLOC_BATCH of %u records: the reply would exceed %u "
                                   "bytes; split the batch", n, MEMD_MAX_REPLY);
        return memd_reply_fail(st, h, out, &err, false);
    }
    if (h->status & MEMD_REQ_F_RETRY) {
        int rc = alloc_batch_again(st, s, h, p, n, out);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    size_t hdr_off = out->len;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_BUFFER_SIZE);
    if (!o)
        return -ENOMEM;
    o = memd_wire_count_put(o, n);
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++, p += MEMD_WIRE_ALLOC_REQ_SIZE) {
        memd_wire_alloc_req req;
        memd_alloc *a;
        int rc = memd_wire_alloc_req_get(p, MEMD_WIRE_ALLOC_REQ_SIZE, &req);
        if (rc < 0) {
            memd_batch_rollback(st, s, i);
            out->len = hdr_off;
            memd_error_set(&err, rc, "malformed ALLOC_BATCH request: record %u of %u has a "
                                   "field out of range or a string without its NUL", i, n);
            return memd_reply_fail(st, h, out, &err, true);
        }
        memd_alloc_request r;
        memd_alloc_request_of(&req, &r);
        rc = memd_model_check_alloc_name(req.name, &err);
        if (rc == 0)
            rc = memd_alloc_create(st, s, &r, &a, &err);
        if (rc < 0) {
            memd_batch_rollback(st, s, i);
            out->len = hdr_off;
            memd_alloc_failed(st, r.device, &err);
            /* Say which record failed; the reason follows. */
            char msg[sizeof err.msg];
            memcpy(msg, err.msg, sizeof msg);
            memd_error_set(&err, rc, "record %u of %u: %s (nothing allocated)", i, n, msg);
            return memd_reply_fail(st, h, out, &err, false);
        }
        s->holds->req = h->id;
        memd_wire_buffer b;
        memd_alloc_to_buffer(st, a, &b);
        o = memd_wire_buffer_put(o, &b);
    }
    return 0;
}

int memd_op_alloc_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    /* The batch's allocations share state store records (store.h). */
    memd_store_batch(st, true);
    int rc = alloc_batch(st, s, h, p, out);
    memd_store_batch(st, false);
    return rc;
}

int memd_batch_scratch(memd_state *st, uint32_t n)
{
    if (n <= st->scratch_cap)
        return 0;
    memd_alloc **sc = realloc(st->scratch, n * sizeof *sc);
    if (!sc)
        return -ENOMEM;
    st->scratch = sc;
    st->scratch_cap = n;
    return 0;
}

/* FREE_BATCH's handle i (of the handles at p), found by its first pass: kept in
 * st->scratch, or looked up again. */
static memd_alloc *listed(memd_state *st, bool kept, const uint8_t *p, uint32_t i)
{
    return kept ? st->scratch[i]
                : memd_alloc_find(st, memd_wire_u64(p + (size_t)i * MEMD_WIRE_HANDLE_SIZE));
}

int memd_op_free_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    uint32_t n = memd_wire_u32(p); /* dispatch checked it against the handles */
    memd_error err;
    memd_error_reset(&err);
    p += MEMD_WIRE_COUNT_SIZE;
    /* A retry of a batch its first sending freed (all or nothing: then the session holds
     * none of the handles) succeeds without touching anything (protocol.h). */
    if (h->status & MEMD_REQ_F_RETRY) {
        bool held = false;
        for (uint32_t i = 0; i < n && !held; i++) {
            memd_alloc *a = memd_alloc_find(st, memd_wire_u64(p + (size_t)i * MEMD_WIRE_HANDLE_SIZE));
            held = a && memd_alloc_hold_of(a, s);
        }
        if (!held)
            return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
    }
    /* Pass 1 checks everything, so pass 2 cannot fail half way. The mark catches a
     * handle listed twice, which could only be freed once; the marks go again before
     * anything returns. The records pass 1 finds are kept in st->scratch when it has (or
     * gets) room, else looked up again (a hash each): a free needs no memory (issue 27),
     * even when memd has none left. */
    bool kept = memd_batch_scratch(st, n) == 0;
    uint32_t i = 0;
    for (; i < n; i++) {
        uint64_t handle = memd_wire_u64(p + (size_t)i * MEMD_WIRE_HANDLE_SIZE);
        memd_alloc *a = memd_alloc_find(st, handle);
        if (kept)
            st->scratch[i] = a;
        if (!a)
            memd_error_set(&err, -ENOENT, "handle %u of %u: no allocation with handle %llu "
                                        "(nothing freed)", i, n, (unsigned long long)handle);
        else if (!memd_may_access(s, a) && a->uid != s->uid)
            memd_error_set(&err, -EPERM, "handle %u of %u: %llu belongs to another user, not "
                                       "to this session %u (nothing freed)",
                         i, n, (unsigned long long)handle, s->id);
        else if (!memd_may_access(s, a))
            memd_error_set(&err, -EPERM, "handle %u of %u: %llu belongs to session %u, not "
                                       "to this session %u (nothing freed)",
                         i, n, (unsigned long long)handle, memd_alloc_creator(a)->session_id,
                         s->id);
        else if (!memd_alloc_hold_of(a, s) && !memd_may_reclaim(s, a)) {
            memd_error why;
            memd_error_reset(&why);
            memd_reclaim_error(st, s, handle, a, &why);
            memd_error_set(&err, why.code, "handle %u of %u (nothing freed): %s", i, n,
                         why.msg);
        } else if (memd_models_managed(st, handle) && memd_alloc_hold_of(a, s))
            memd_error_set(&err, -EBUSY, "handle %u of %u: %llu belongs to a loaded model or "
                                       "an instance (nothing freed)",
                         i, n, (unsigned long long)handle);
        else if (a->marked)
            memd_error_set(&err, -EINVAL, "handle %u of %u: %llu is listed twice (nothing "
                                        "freed)", i, n, (unsigned long long)handle);
        else {
            a->marked = true;
            continue;
        }
        break;
    }
    for (uint32_t j = 0; j < i; j++)
        listed(st, kept, p, j)->marked = false;
    if (i < n)
        return memd_reply_fail(st, h, out, &err, false);
    for (i = 0; i < n; i++) {
        memd_alloc *a = listed(st, kept, p, i);
        memd_hold *hold = memd_alloc_hold_of(a, s);
        if (hold)
            memd_hold_release(st, hold);
        else
            memd_alloc_reclaim(st, a, s); /* admin */
    }
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}
