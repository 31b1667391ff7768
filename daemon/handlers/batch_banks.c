/* memd daemon — ALLOC_BATCH_BANKS: a batch whose elements may have bank sets (range
 * lockstep, per bank) beside plain ones; all or nothing, as ALLOC_BATCH.
 *
 * The frame is untrusted and its elements vary in size, so a first pass walks all of it
 * (every element decodes, the lengths add up, every bank set is strictly increasing)
 * before anything is allocated; the second pass allocates each element exactly as its
 * own ALLOC_BANKS (or ALLOC) would (sub-device rules, quotas, limits, names) and undoes
 * them all when one fails. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "batch.h"
#include "dispatch.h"
#include "error.h"
#include "model.h"
#include "reply.h"
#include "store.h"
#include "wire.h"

/* Element i of n at p (len bytes left); its size in *used. A malformed one queues the
 * error reply (the connection closes) and returns -1 with *ret set. */
static int elem_at(memd_state *st, const memd_wire_hdr *h, memd_buf *out, const uint8_t *p,
                   size_t len, uint32_t i, uint32_t n, memd_wire_alloc_req *req,
                   memd_wire_bankset *bs, const uint8_t **ids, size_t *used, int *ret)
{
    int rc = memd_wire_alloc_banks_elem_get(p, len, req, bs, ids, used);
    if (rc == 0)
        return 0;
    memd_error err;
    memd_error_reset(&err);
    if (rc == -EBADMSG)
        memd_error_set(&err, rc, "malformed ALLOC_BATCH_BANKS request (%u payload bytes): "
                     "element %u of %u is cut short (%zu bytes left)", h->len, i, n, len);
    else
        memd_error_set(&err, rc, "malformed ALLOC_BATCH_BANKS request: element %u of %u has "
                     "unknown bank-set flags, a set over %u banks, a field out of range or "
                     "a string without its NUL", i, n, MEMD_BANKSET_MAX);
    *ret = memd_reply_fail(st, h, out, &err, true);
    return -1;
}

/* What the engine would refuse only after the elements before it were allocated: a set
 * not strictly increasing, a shared bank set. 0, or the error in *err. */
static int elem_judge(const memd_wire_alloc_req *req, const memd_wire_bankset *bs,
                      const uint8_t *ids, uint32_t i, uint32_t n, memd_error *err)
{
    for (uint32_t k = 1; k < bs->count; k++) {
        uint32_t a = memd_wire_u32(ids + 4 * (size_t)(k - 1)), b = memd_wire_u32(ids + 4 * (size_t)k);
        if (a == b)
            return memd_error_set(err, -EINVAL, "element %u of %u: bank %u is in the bank set "
                                "twice (nothing allocated)", i, n, b);
        if (b < a)
            return memd_error_set(err, -EINVAL, "element %u of %u: bank ids must be strictly "
                                "increasing, %u comes after %u (nothing allocated)", i, n, b, a);
    }
    if ((bs->flags & MEMD_BANKSET_F_SIZES) && bs->count == 0)
        return memd_error_set(err, -EINVAL, "element %u of %u: per-core shard sizes need a "
                            "bank set, a size per bank of it (nothing allocated)", i, n);
    if ((bs->count || bs->flags) && (req->flags & MEMD_ALLOC_F_SHARED))
        return memd_error_set(err, -EINVAL, "element %u of %u: a bank-set allocation cannot "
                            "be shared (nothing allocated)", i, n);
    return 0;
}

/* Pass 1. 0 with the largest set in *max_set; -1 with the handler's result in *ret (the
 * error reply queued). */
static int check_frame(memd_state *st, const memd_wire_hdr *h, const uint8_t *p,
                       memd_buf *out, uint32_t n, uint32_t *max_set, int *ret)
{
    memd_error err;
    memd_error_reset(&err);
    int first = 0; /* the first element refused, reported once the frame proved whole */
    size_t off = MEMD_WIRE_COUNT_SIZE;
    *max_set = 0;
    for (uint32_t i = 0; i < n; i++) {
        memd_wire_alloc_req req;
        memd_wire_bankset bs;
        const uint8_t *ids;
        size_t used;
        if (elem_at(st, h, out, p + off, h->len - off, i, n, &req, &bs, &ids, &used, ret) < 0)
            return -1;
        if (first == 0)
            first = elem_judge(&req, &bs, ids, i, n, &err);
        if (bs.count > *max_set)
            *max_set = bs.count;
        off += used;
    }
    if (off != h->len) {
        memd_error_set(&err, -EBADMSG, "malformed ALLOC_BATCH_BANKS request (%u payload bytes): "
                     "%zu bytes follow its %u element(s)", h->len, h->len - off, n);
        *ret = memd_reply_fail(st, h, out, &err, true);
        return -1;
    }
    if (first < 0) {
        *ret = memd_reply_fail(st, h, out, &err, false);
        return -1;
    }
    return 0;
}

/* The banks an element's reply lists: a bank-set buffer's, none for a plain one. */
static uint32_t listed_banks(const memd_state *st, const memd_alloc *a)
{
    return a->pl.mode == MEMD_BANKS_ALL ? 0 : memd_alloc_bank_count(st, a);
}

/* The reply for st->scratch[0..n); -E2BIG (nothing queued) past MEMD_MAX_REPLY. */
static int put_reply(memd_state *st, const memd_wire_hdr *h, uint32_t n, memd_buf *out)
{
    uint64_t len = MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++)
        len += MEMD_WIRE_BUFFER_SIZE + MEMD_WIRE_COUNT_SIZE +
               (uint64_t)listed_banks(st, st->scratch[i]) * MEMD_WIRE_BANK_ADDR_SIZE;
    if (len > MEMD_MAX_REPLY)
        return -E2BIG;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, (uint32_t)len);
    if (!o)
        return -ENOMEM;
    o = memd_wire_count_put(o, n);
    for (uint32_t i = 0; i < n; i++) {
        const memd_alloc *a = st->scratch[i];
        memd_wire_buffer b;
        memd_alloc_to_buffer(st, a, &b);
        o = memd_wire_buffer_put(o, &b);
        o = memd_alloc_put_bank_addrs(st, a, listed_banks(st, a), o);
    }
    return 0;
}

/* One element of a frame pass 1 checked: its request, bank set and encoded bank ids. */
typedef struct elem {
    memd_wire_alloc_req req;
    memd_wire_bankset bs;
    const uint8_t *ids;
} elem;

/* The element at *off, *off then past it. */
static void next_elem(const memd_wire_hdr *h, const uint8_t *p, size_t *off, elem *e)
{
    size_t used = 0;
    (void)memd_wire_alloc_banks_elem_get(p + *off, h->len - *off, &e->req, &e->bs, &e->ids,
                                         &used);
    *off += used;
}

/* A retried batch whose first sending was applied: its buffers in record order. 1 with
 * the reply queued, 0 to apply it as new, or the handler's result. */
static int again(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 uint32_t n, memd_buf *out)
{
    memd_batch_again ag;
    int ret = 0, rc = memd_batch_again_begin(st, s, h, n, out, &ag, &ret);
    if (rc <= 0)
        return rc < 0 ? (ret < 0 ? ret : 1) : 0;
    size_t off = MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++) {
        elem e;
        next_elem(h, p, &off, &e);
        st->scratch[i] = memd_batch_again_next(st, &ag, &e.req);
    }
    free(ag.hs);
    rc = put_reply(st, h, n, out);
    if (rc == -E2BIG) { /* cannot be: the first sending's reply fitted */
        memd_error err;
        memd_error_reset(&err);
        memd_error_set(&err, rc, "retried ALLOC_BATCH_BANKS: the reply would exceed %u bytes",
                     MEMD_MAX_REPLY);
        return memd_reply_fail(st, h, out, &err, false) < 0 ? -ENOMEM : 1;
    }
    return rc < 0 ? rc : 1;
}

/* Pass 2: element i's allocation into st->scratch[i]; ids and sizes have room for every
 * set. */
static int apply(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 uint32_t n, uint32_t *ids, uint64_t *sizes, memd_buf *out)
{
    memd_error err;
    memd_error_reset(&err);
    size_t off = MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++) {
        elem e;
        next_elem(h, p, &off, &e);
        memd_alloc_banks b = memd_alloc_banks_of(&e.bs, e.ids, ids, sizes);
        memd_alloc_request r;
        memd_alloc_request_of(&e.req, &r);
        int rc = memd_model_check_alloc_name(e.req.name, &err);
        if (rc == 0)
            rc = memd_alloc_create_banks(st, s, &r, memd_alloc_banks_any(&b) ? &b : NULL,
                                         &st->scratch[i], &err);
        if (rc < 0) {
            memd_batch_rollback(st, s, i);
            memd_alloc_failed(st, r.device, &err);
            char msg[sizeof err.msg];
            memcpy(msg, err.msg, sizeof msg);
            /* Said first: the reason may be long enough to be cut. */
            memd_error_set(&err, rc, "element %u of %u, nothing allocated: %s", i, n, msg);
            return memd_reply_fail(st, h, out, &err, false);
        }
        s->holds->req = h->id;
    }
    int rc = put_reply(st, h, n, out);
    if (rc == -E2BIG) {
        memd_batch_rollback(st, s, n);
        memd_error_set(&err, rc, "ALLOC_BATCH_BANKS of %u elements: the reply (their bank "
                     "addresses) would exceed %u bytes; split the batch (nothing allocated)",
                     n, MEMD_MAX_REPLY);
        return memd_reply_fail(st, h, out, &err, false);
    }
    return rc;
}

static int alloc_batch_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                             const uint8_t *p, memd_buf *out)
{
    uint32_t n = memd_wire_u32(p); /* dispatch checked the count prefix is there */
    uint32_t max_set;
    int ret = 0;
    if (check_frame(st, h, p, out, n, &max_set, &ret) < 0)
        return ret;
    if (memd_batch_scratch(st, n) < 0)
        return -ENOMEM;
    if (h->status & MEMD_REQ_F_RETRY) {
        int rc = again(st, s, h, p, n, out);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    uint32_t *ids = malloc(sizeof *ids * (max_set ? max_set : 1));
    uint64_t *sizes = malloc(sizeof *sizes * (max_set ? max_set : 1));
    ret = ids && sizes ? apply(st, s, h, p, n, ids, sizes, out) : -ENOMEM;
    free(ids);
    free(sizes);
    return ret;
}

int memd_op_alloc_batch_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                              const uint8_t *p, memd_buf *out)
{
    /* The batch's allocations share state store records (store.h). */
    memd_store_batch(st, true);
    int rc = alloc_batch_banks(st, s, h, p, out);
    memd_store_batch(st, false);
    return rc;
}
