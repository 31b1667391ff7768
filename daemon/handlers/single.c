/* memd daemon — ALLOC, FREE, QUERY, BANKS: one allocation per request. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "access.h"
#include "alloc.h"
#include "dispatch.h"
#include "error.h"
#include "malformed.h"
#include "model.h"
#include "oom.h"
#include "reply.h"
#include "wire.h"

static int handle_error(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                        const memd_session *s, uint64_t handle, const memd_alloc *a)
{
    memd_error err;
    memd_error_reset(&err);
    memd_access_error(s, handle, a, &err);
    return memd_reply_fail(st, h, out, &err, false);
}

/* The allocation an ALLOC or ALLOC_BANKS request (b NULL: plain) makes; for a retry
 * whose first sending was applied, the one that made (not a second one: a request that
 * was applied had a valid name and set). 0, or the error (counted as an allocation
 * failure) in *err. */
static int create_once(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const memd_wire_alloc_req *req, const memd_alloc_banks *b,
                       const uint64_t *at, memd_alloc **a, memd_error *err)
{
    int rc = memd_model_check_alloc_name(req->name, err);
    if (rc == 0 && b && b->nset == 0 && !b->per_bank)
        rc = memd_error_set(err, -EINVAL, b->range_lockstep ? "range lockstep needs a bank set "
                            "(the banks its address is searched in)"
                            : "an empty bank set is only valid per bank");
    memd_hold *first;
    if (rc == 0 && (h->status & MEMD_REQ_F_RETRY) &&
        memd_holds_of_request(s, h->id, &first, 1) == 1) {
        *a = memd_hold_alloc(first);
        return 0;
    }
    memd_alloc_request r;
    memd_alloc_request_of(req, &r);
    if (at) {
        r.fixed = true;
        r.address = *at;
    }
    if (rc == 0)
        rc = memd_alloc_create_banks(st, s, &r, b, a, err);
    if (rc < 0) {
        memd_alloc_failed(st, r.device, err);
        return rc;
    }
    s->holds->req = h->id; /* what a retry looks for */
    return 0;
}

int memd_op_alloc(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out)
{
    memd_wire_alloc_req req;
    int rc = memd_wire_alloc_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_alloc *a;
    memd_error err;
    memd_error_reset(&err);
    if (create_once(st, s, h, &req, NULL, NULL, &a, &err) < 0)
        return memd_reply_fail(st, h, out, &err, false);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_BUFFER_SIZE);
    if (!o)
        return -ENOMEM; /* the allocation stays with the session, released at close */
    memd_wire_buffer b;
    memd_alloc_to_buffer(st, a, &b);
    memd_wire_buffer_put(o, &b);
    return 0;
}

/* FREE, QUERY and BANKS carry one u64 handle: dispatch checked the length. */
int memd_op_free(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 memd_buf *out)
{
    uint64_t handle = memd_wire_u64(p);
    memd_alloc *a = memd_alloc_find(st, handle);
    memd_hold *hold = a ? memd_alloc_hold_of(a, s) : NULL;
    /* Its own model's or instance's buffer (an admin may still reclaim another's). */
    if (hold && memd_models_managed(st, handle)) {
        memd_error err;
        memd_error_reset(&err);
        memd_error_set(&err, -EBUSY, "handle %llu belongs to a loaded model or an instance: "
                     "release it with MODEL_UNLOAD or INSTANCE_RELEASE",
                     (unsigned long long)handle);
        return memd_reply_fail(st, h, out, &err, false);
    }
    if (hold)
        memd_hold_release(st, hold);
    else if (h->status & MEMD_REQ_F_RETRY)
        ; /* its first sending freed it (protocol.h) */
    else if (a && memd_may_reclaim(s, a))
        memd_alloc_reclaim(st, a, s); /* an admin frees what it does not hold outright */
    else if (a && s->admin) { /* bound to a sub-device the buffer is not charged to */
        memd_error err;
        memd_error_reset(&err);
        memd_reclaim_error(st, s, handle, a, &err);
        return memd_reply_fail(st, h, out, &err, false);
    } else
        return handle_error(st, h, out, s, handle, a);
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}

/* QUERY and BANKS: the allocation named by the request's handle when this session may
 * see it; else NULL, with the error reply queued and the handler's result in *ret. */
static memd_alloc *accessible(memd_state *st, const memd_session *s, const memd_wire_hdr *h,
                              const uint8_t *p, memd_buf *out, int *ret)
{
    uint64_t handle = memd_wire_u64(p);
    memd_alloc *a = memd_alloc_find(st, handle);
    if (!a || !memd_may_access(s, a)) {
        *ret = handle_error(st, h, out, s, handle, a);
        return NULL;
    }
    return a;
}

int memd_op_query(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out)
{
    int ret;
    memd_alloc *a = accessible(st, s, h, p, out, &ret);
    if (!a)
        return ret;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_ALLOC_INFO_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_alloc_info info;
    memd_alloc_to_info(st, a, &info);
    memd_wire_alloc_info_put(o, &info);
    return 0;
}

int memd_op_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out)
{
    int ret;
    memd_alloc *a = accessible(st, s, h, p, out, &ret);
    if (!a)
        return ret;
    /* Lockstep: the first `banks` banks, as before; a bank set: its banks in id order. */
    uint32_t n = a->pl.mode == MEMD_BANKS_ALL ? a->pl.banks : memd_alloc_nset(a);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_HANDLE_SIZE);
    if (!o)
        return -ENOMEM;
    o = memd_wire_count_put(o, n);
    for (uint32_t i = 0; i < n; i++) {
        memd_bank_addr b;
        memd_alloc_bank_at(st, a, i, &b);
        o = memd_wire_put_u64(o, b.absolute);
    }
    return 0;
}

int memd_op_bank_addrs(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    int ret;
    memd_alloc *a = accessible(st, s, h, p, out, &ret);
    if (!a)
        return ret;
    uint32_t n = memd_alloc_bank_count(st, a);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + (size_t)n * MEMD_WIRE_BANK_ADDR_SIZE);
    if (!o)
        return -ENOMEM;
    memd_alloc_put_bank_addrs(st, a, n, o);
    return 0;
}

/* ALLOC_BANKS's payload at p (len bytes); for ALLOC_AT, at its address, where an empty
 * set without PER_BANK is plain lockstep. */
static int alloc_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                       size_t len, const uint64_t *at, memd_buf *out)
{
    memd_wire_alloc_req req;
    memd_wire_bankset bs;
    const uint8_t *raw;
    int rc = memd_wire_alloc_banks_get(p, len, &req, &bs, &raw);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    const uint8_t *raw_sizes = memd_wire_bankset_sizes(&bs, raw);
    uint32_t *ids = bs.count ? malloc(sizeof(*ids) * bs.count) : NULL;
    uint64_t *sizes = raw_sizes && bs.count ? malloc(sizeof(*sizes) * bs.count) : NULL;
    if (bs.count && (!ids || (raw_sizes && !sizes))) {
        free(ids);
        free(sizes);
        memd_self_oom(&err);
        return memd_reply_fail(st, h, out, &err, false);
    }
    memd_alloc_banks b = memd_alloc_banks_of(&bs, raw, ids, sizes);
    bool lockstep = at && !memd_alloc_banks_any(&b);
    memd_alloc *a;
    rc = raw_sizes && bs.count == 0
             ? memd_error_set(&err, -EINVAL, "per-core shard sizes need a bank set (a size "
                              "per bank of it)")
             : create_once(st, s, h, &req, lockstep ? NULL : &b, at, &a, &err);
    free(ids);
    free(sizes);
    if (rc < 0)
        return memd_reply_fail(st, h, out, &err, false);
    uint32_t n = lockstep ? 0 : memd_alloc_bank_count(st, a);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_BUFFER_SIZE + MEMD_WIRE_COUNT_SIZE +
                                      (size_t)n * MEMD_WIRE_BANK_ADDR_SIZE);
    if (!o)
        return -ENOMEM; /* the allocation stays with the session, released at close */
    memd_wire_buffer wb;
    memd_alloc_to_buffer(st, a, &wb);
    o = memd_wire_buffer_put(o, &wb);
    memd_alloc_put_bank_addrs(st, a, n, o);
    return 0;
}

int memd_op_alloc_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    return alloc_banks(st, s, h, p, h->len, NULL, out);
}

int memd_op_alloc_at(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                     memd_buf *out)
{
    uint64_t at = memd_wire_u64(p); /* dispatch checked the minimum length */
    return alloc_banks(st, s, h, p + MEMD_WIRE_ADDRESS_SIZE, h->len - MEMD_WIRE_ADDRESS_SIZE, &at,
                       out);
}
