/* libmemclient: the requests — blocking calls and their pipelined (submit) forms.
 * A blocking call is a submit whose slot it waits for itself, under the connection lock. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

/* Checks what the wire format cannot carry; the daemon judges everything else (sizes,
 * classes a device offers, ...) and says why in its error reply. Every field of *w is
 * written (no memset first: this runs once per element of large batches). */
int memclient_encode_alloc_req(const memclient_alloc_req *r, memd_wire_alloc_req *w)
{
    if (!r)
        return memclient_fail(-EINVAL, "allocation request is NULL");
    if ((unsigned)r->cls >= MEMD_CLASS_COUNT)
        return memclient_fail(-EINVAL, "unknown buffer class %d", (int)r->cls);
    if ((unsigned)r->scope >= MEMD_SCOPE_COUNT)
        return memclient_fail(-EINVAL, "unknown scope %d", (int)r->scope);
    if ((unsigned)r->dtype >= MEMD_DTYPE_COUNT)
        return memclient_fail(-EINVAL, "unknown dtype %d", (int)r->dtype);
    if (r->ndim > MEMD_MAX_DIMS)
        return memclient_fail(-EINVAL, "ndim %u over the maximum %d", r->ndim, MEMD_MAX_DIMS);
    if (r->flags &
        ~(uint32_t)(MEMCLIENT_ALLOC_SHARED | MEMCLIENT_ALLOC_AT | MEMCLIENT_ALLOC_RANGE_LOCKSTEP))
        return memclient_fail(-EINVAL, "unknown allocation flags 0x%x", r->flags);
    if ((r->flags & MEMCLIENT_ALLOC_RANGE_LOCKSTEP) && (r->nbank_set == 0 || r->per_bank))
        return memclient_fail(-EINVAL, "MEMCLIENT_ALLOC_RANGE_LOCKSTEP needs a bank set (the "
                              "banks its address is searched in) and is not per bank");
    if (r->sizes && (!r->per_bank || r->nbank_set == 0))
        return memclient_fail(-EINVAL, "sizes (per-core shard sizes) need per_bank and a bank "
                              "set: a size per bank of it");
    if ((r->flags & MEMCLIENT_ALLOC_SHARED) && (r->flags & MEMCLIENT_ALLOC_AT))
        return memclient_fail(-EINVAL, "an allocation at an address cannot be shared");
    size_t nlen = r->name ? strnlen(r->name, MEMD_NAME_MAX) : 0;
    if (nlen >= MEMD_NAME_MAX)
        return memclient_fail(-ENAMETOOLONG, "allocation name is %zu bytes or more, at most %d",
                              nlen, MEMD_NAME_MAX - 1);
    if ((r->flags & MEMCLIENT_ALLOC_SHARED) && nlen == 0)
        return memclient_fail(-EINVAL, "a shared allocation needs a name");
    w->device = r->device;
    w->cls = (uint8_t)r->cls;
    w->scope = (uint8_t)r->scope;
    w->dtype = (uint8_t)r->dtype;
    w->ndim = (uint8_t)r->ndim;
    w->bytes = r->bytes;
    for (unsigned i = 0; i < MEMD_MAX_DIMS; i++)
        w->shape[i] = i < r->ndim ? r->shape[i] : 0; /* unused dims go out as 0 */
    w->page_size = r->page_size;
    w->alignment = r->alignment;
    w->banks = r->banks;
    w->flags = (r->flags & MEMCLIENT_ALLOC_SHARED) ? MEMD_ALLOC_F_SHARED : 0;
    if (nlen)
        memcpy(w->name, r->name, nlen);
    memset(w->name + nlen, 0, sizeof(w->name) - nlen); /* NUL padded: no stray bytes */
    return 0;
}

static int begin_failed(memclient *c, int err, uint16_t op, uint32_t len)
{
    if (err == -EMSGSIZE)
        return memclient_fail(err, "%s request of %u bytes is over the daemon's frame limit of %u"
                              " bytes: split it", memd_wire_opcode_name(op), len,
                              c->info.max_frame);
    return memclient_fail(err, "%s request: %s", memd_wire_opcode_name(op),
                          memclient_strerror(err));
}

/* MEMCLIENT_CONNECT_RECONNECT: the request of slot *seq was cut off because the daemon
 * went away. Reconnects (reclaiming the session) and sends the request again, marked
 * as a retry, in a new slot (*seq). 0, or the error that ends the call. */
static int again(memclient *c, uint64_t *seq, const uint8_t *frame, size_t len)
{
    memclient_slot old = *memclient_slot_at(c, *seq);
    memclient_consume(c, *seq);
    int r = memclient_reconnect_locked(c, MEMCLIENT_RECONNECT_MS);
    if (r < 0 && r != -EISCONN)
        return r;
    if (memclient_resend(c, frame, len, &old, seq) < 0)
        return memclient_fail(-ENOMEM, "no memory to send a request again");
    return 0;
}

/* Waits for a blocking call's slot, retires it and returns its status (or result). The
 * call's frame is the last one queued; with auto_reconnect a copy of it is kept, to be
 * sent again if the daemon goes away before it answers. */
int memclient_finish(memclient *c, uint64_t seq)
{
    uint8_t *frame = NULL;
    size_t len = c->tx_len - c->last_frame;
    if (c->auto_reconnect && (frame = malloc(len)) != NULL)
        memcpy(frame, c->tx + c->last_frame, len);
    int r = memclient_wait(c, seq);
    memclient_slot *s = memclient_slot_at(c, seq);
    while (r < 0 && frame && s->cut && memclient_gone(r)) {
        int e = again(c, &seq, frame, len);
        if (e < 0) {
            free(frame);
            memclient_unlock(c);
            return e; /* recorded by memclient_reconnect_locked or again */
        }
        r = memclient_wait(c, seq);
        s = memclient_slot_at(c, seq);
    }
    free(frame);
    if (r < 0)
        memclient_fail_with(&s->err);
    else
        r = s->result;
    memclient_consume(c, seq);
    memclient_unlock(c);
    return r;
}

/* After a submit: send if enough is queued, hand out the ticket. A transport failure
 * here is reported by the request's completion, so the submit itself succeeded. With
 * MEMCLIENT_CONNECT_RECONNECT the frame is kept until the request completes, to be sent
 * again if the daemon goes away first (memclient_complete). */
static int submitted(memclient *c, uint64_t seq, uint64_t *ticket)
{
    memclient_slot *s = memclient_slot_at(c, seq);
    if (c->auto_reconnect) {
        size_t len = c->tx_len - c->last_frame;
        if (!(s->frame = malloc(len))) {
            memclient_unbegin(c, seq);
            memclient_unlock(c);
            return memclient_fail(-ENOMEM, "no memory to keep a request for its retry");
        }
        memcpy(s->frame, c->tx + c->last_frame, len);
        s->frame_len = len;
    }
    c->pipelined++;
    if (ticket)
        *ticket = memclient_slot_at(c, seq)->id;
    memclient_send(c, false);
    memclient_unlock(c);
    return 0;
}

/* ---- ALLOC ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool has_banks(const memclient_alloc_req *r)
{
    return r && (r->nbank_set || r->per_bank);
}

/* The request's bank set, checked and sorted into ids (room for nbank_set, the wire wants
 * ids in order). 0, or the error recorded. */
static int sorted_set(const memclient_alloc_req *req, uint32_t *ids)
{
    if (req->nbank_set && !req->bank_set)
        return memclient_fail(-EINVAL, "nbank_set is %u but bank_set is NULL", req->nbank_set);
    if (req->nbank_set > MEMD_BANKSET_MAX)
        return memclient_fail(-EINVAL, "bank set of %u banks, at most %u", req->nbank_set,
                              MEMD_BANKSET_MAX);
    if (req->nbank_out && !req->bank_out)
        return memclient_fail(-EINVAL, "nbank_out is %u but bank_out is NULL", req->nbank_out);
    if (req->nbank_set) { /* per bank alone has no set: bank_set may be NULL */
        memcpy(ids, req->bank_set, sizeof(*ids) * req->nbank_set);
        qsort(ids, req->nbank_set, sizeof(*ids), cmp_u32);
    }
    for (uint32_t i = 1; i < req->nbank_set; i++)
        if (ids[i] == ids[i - 1])
            return memclient_fail(-EINVAL, "bank %u is in the bank set twice", ids[i]);
    /* sizes[i] goes with bank_set[i]: a set given in another order would mismatch them */
    for (uint32_t i = 1; req->sizes && i < req->nbank_set; i++)
        if (req->bank_set[i] <= req->bank_set[i - 1])
            return memclient_fail(-EINVAL, "with sizes, bank_set must be in increasing id "
                                  "order (%u comes after %u)", req->bank_set[i],
                                  req->bank_set[i - 1]);
    return 0;
}

/* The bank-set part of an ALLOC_BANKS payload (or of a batch element) after the
 * alloc_req; ids as sorted_set made them. */
static uint8_t *bankset_put(uint8_t *p, const memclient_alloc_req *req, const uint32_t *ids)
{
    uint32_t f = (req->per_bank ? MEMD_BANKSET_F_PER_BANK : 0) |
                 (req->flags & MEMCLIENT_ALLOC_RANGE_LOCKSTEP ? MEMD_BANKSET_F_RANGE_LOCKSTEP : 0) |
                 (req->sizes ? MEMD_BANKSET_F_SIZES : 0);
    memd_wire_bankset b = {f, has_banks(req) ? req->nbank_set : 0};
    p = memd_wire_bankset_put(p, &b, ids);
    return req->sizes ? memd_wire_bankset_sizes_put(p, req->sizes, b.count) : p;
}

/* A memd from before range lockstep (or per-core shard sizes) would drop the connection
 * on its flag. */
static int bankset_known(const memclient *c, const memclient_alloc_req *r)
{
    if ((r->flags & MEMCLIENT_ALLOC_RANGE_LOCKSTEP) &&
        !(c->welcome_flags & MEMD_WELCOME_F_RANGE_LOCKSTEP))
        return memclient_fail(-EOPNOTSUPP, "this memd does not offer range lockstep");
    if (r->sizes && !(c->welcome_flags & MEMD_WELCOME_F_SIZES))
        return memclient_fail(-EOPNOTSUPP, "this memd does not offer per-core shard sizes");
    return 0;
}

/* Only memclient_alloc and memclient_submit_alloc place at an address: 0 or the error. */
static int not_at(const memclient_alloc_req *r, const char *what)
{
    if (r && (r->flags & MEMCLIENT_ALLOC_AT))
        return memclient_fail(-EINVAL, "MEMCLIENT_ALLOC_AT is for memclient_alloc and "
                              "memclient_submit_alloc, not %s", what);
    return 0;
}

/* ALLOC_BANKS: the request, then the bank set sorted; with MEMCLIENT_ALLOC_AT, ALLOC_AT:
 * the address first (no set and not per bank: lockstep). */
static int alloc_banks_begin(memclient *c, const memd_wire_alloc_req *w,
                             const memclient_alloc_req *req, memclient_buffer *out, bool waited,
                             uint64_t *seq)
{
    bool at = (req->flags & MEMCLIENT_ALLOC_AT) != 0;
    uint16_t op = at ? MEMD_OP_ALLOC_AT : MEMD_OP_ALLOC_BANKS;
    if (req->nbank_set > MEMD_BANKSET_MAX)
        return sorted_set(req, NULL); /* says why, before a huge malloc */
    int known = bankset_known(c, req);
    if (known < 0)
        return known;
    uint32_t *ids = malloc(sizeof(*ids) * (req->nbank_set ? req->nbank_set : 1));
    if (!ids)
        return memclient_fail(-ENOMEM, "out of memory");
    int err = sorted_set(req, ids);
    if (err < 0) {
        free(ids);
        return err;
    }
    uint32_t len = (at ? MEMD_WIRE_ADDRESS_SIZE : 0) + MEMD_WIRE_ALLOC_REQ_SIZE +
                   MEMD_WIRE_BANKSET_SIZE + (req->sizes ? 12u : 4u) * req->nbank_set;
    uint8_t *p = memclient_begin(c, op, len, MEMCLIENT_OUT_BUFFER_BANKS, out, 1, waited, seq, &err);
    if (!p) {
        free(ids);
        return begin_failed(c, err, op, len);
    }
    if (req->bank_out) /* the reply's bank list goes there (else req may be gone by then) */
        memclient_slot_at(c, *seq)->reqs = req;
    if (at)
        p = memd_wire_put_u64(p, req->address);
    bankset_put(memd_wire_alloc_req_put(p, w), req, ids);
    free(ids);
    return 0;
}

static int alloc_begin(memclient *c, const memd_wire_alloc_req *w, memclient_buffer *out,
                       bool waited, uint64_t *seq)
{
    int err = 0;
    uint8_t *p = memclient_begin(c, MEMD_OP_ALLOC, MEMD_WIRE_ALLOC_REQ_SIZE, MEMCLIENT_OUT_BUFFER,
                                 out, 1, waited, seq, &err);
    if (!p)
        return begin_failed(c, err, MEMD_OP_ALLOC, MEMD_WIRE_ALLOC_REQ_SIZE);
    memd_wire_alloc_req_put(p, w);
    return 0;
}

int memclient_alloc(memclient *c, const memclient_alloc_req *req, memclient_buffer *out)
{
    memd_wire_alloc_req w;
    uint64_t seq;
    int r;
    if (!out)
        return memclient_fail(-EINVAL, "memclient_alloc: out is NULL");
    if ((r = memclient_encode_alloc_req(req, &w)) < 0 || (r = memclient_lock(c)) < 0)
        return r;
    r = has_banks(req) || (req->flags & MEMCLIENT_ALLOC_AT)
            ? alloc_banks_begin(c, &w, req, out, true, &seq)
            : alloc_begin(c, &w, out, true, &seq);
    if (r < 0) {
        memclient_unlock(c);
        return r;
    }
    return memclient_finish(c, seq);
}

int memclient_alloc_wire(memclient *c, const memd_wire_alloc_req *w, memclient_buffer *out)
{
    uint64_t seq;
    int r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = alloc_begin(c, w, out, true, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return memclient_finish(c, seq);
}

int memclient_submit_alloc(memclient *c, const memclient_alloc_req *req, memclient_buffer *out,
                           uint64_t *ticket)
{
    memd_wire_alloc_req w;
    uint64_t seq;
    int r;
    if (!out)
        return memclient_fail(-EINVAL, "memclient_submit_alloc: out is NULL");
    if ((r = memclient_encode_alloc_req(req, &w)) < 0 || (r = memclient_lock(c)) < 0)
        return r;
    r = has_banks(req) || (req->flags & MEMCLIENT_ALLOC_AT)
            ? alloc_banks_begin(c, &w, req, out, false, &seq)
            : alloc_begin(c, &w, out, false, &seq);
    if (r < 0) {
        memclient_unlock(c);
        return r;
    }
    return submitted(c, seq, ticket);
}

/* ---- ALLOC_BATCH ---- */

static int batch_len(size_t n, size_t rec, uint32_t *len)
{
    if (n > UINT32_MAX || n > (UINT32_MAX - MEMD_WIRE_COUNT_SIZE) / rec)
        return -EMSGSIZE;
    *len = (uint32_t)(MEMD_WIRE_COUNT_SIZE + n * rec);
    return 0;
}

/* Batch element i could not be encoded: records the element's error with its index (and
 * element_failed takes the frame back). */
static int element_error(size_t i)
{
    memclient_error e;
    char prefix[48];
    memclient_last_error(&e);
    snprintf(prefix, sizeof(prefix), "batch element %zu", i);
    memclient_error_prefix(&e, prefix);
    return memclient_fail_with(&e);
}

static int element_failed(memclient *c, uint64_t seq, size_t i)
{
    memclient_unbegin(c, seq);
    return element_error(i);
}

/* ALLOC_BATCH_BANKS: a batch with a bank-set element; each element an ALLOC_BANKS
 * payload (a plain one with the empty set, not per bank). */
static int alloc_batch_banks_begin(memclient *c, const memclient_alloc_req *reqs, size_t n,
                                   memclient_buffer *out, bool waited, uint64_t *seq)
{
    uint64_t len = MEMD_WIRE_COUNT_SIZE;
    uint32_t max_set = 1;
    bool want_banks = false;
    for (size_t i = 0; i < n; i++) {
        want_banks |= reqs[i].bank_out != NULL;
        uint32_t k = has_banks(&reqs[i]) ? reqs[i].nbank_set : 0;
        if (k > MEMD_BANKSET_MAX || bankset_known(c, &reqs[i]) < 0) {
            if (k > MEMD_BANKSET_MAX)
                sorted_set(&reqs[i], NULL); /* records why, before a huge malloc */
            return element_error(i);
        }
        len += MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE +
               (reqs[i].sizes ? 12ull : 4ull) * k; /* an id, and a size with it */
        max_set = k > max_set ? k : max_set;
    }
    if (n > UINT32_MAX || len > UINT32_MAX)
        return begin_failed(c, -EMSGSIZE, MEMD_OP_ALLOC_BATCH_BANKS, UINT32_MAX);
    uint32_t *ids = malloc(sizeof(*ids) * max_set);
    if (!ids)
        return memclient_fail(-ENOMEM, "out of memory");
    int err = 0;
    uint8_t *p = memclient_begin(c, MEMD_OP_ALLOC_BATCH_BANKS, (uint32_t)len,
                                 MEMCLIENT_OUT_BUFFERS_BANKS, out, n, waited, seq, &err);
    if (!p) {
        free(ids);
        return begin_failed(c, err, MEMD_OP_ALLOC_BATCH_BANKS, (uint32_t)len);
    }
    if (want_banks) /* the reply's bank lists go there (else reqs may be gone by then) */
        memclient_slot_at(c, *seq)->reqs = reqs;
    p = memd_wire_count_put(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        memd_wire_alloc_req w;
        bool banks = has_banks(&reqs[i]);
        if (not_at(&reqs[i], "batches") < 0 ||
            memclient_encode_alloc_req(&reqs[i], &w) < 0 || (banks && sorted_set(&reqs[i], ids) < 0)) {
            free(ids);
            return element_failed(c, *seq, i);
        }
        p = bankset_put(memd_wire_alloc_req_put(p, &w), &reqs[i], ids);
    }
    free(ids);
    return 0;
}

static int alloc_batch_begin(memclient *c, const memclient_alloc_req *reqs, size_t n,
                             memclient_buffer *out, bool waited, uint64_t *seq)
{
    for (size_t i = 0; i < n; i++)
        if (has_banks(&reqs[i]))
            return alloc_batch_banks_begin(c, reqs, n, out, waited, seq);
    uint32_t len;
    int err = batch_len(n, MEMD_WIRE_ALLOC_REQ_SIZE, &len);
    if (err < 0)
        return begin_failed(c, err, MEMD_OP_ALLOC_BATCH, UINT32_MAX);
    uint8_t *p = memclient_begin(c, MEMD_OP_ALLOC_BATCH, len, MEMCLIENT_OUT_BUFFERS, out, n,
                                 waited, seq, &err);
    if (!p)
        return begin_failed(c, err, MEMD_OP_ALLOC_BATCH, len);
    p = memd_wire_count_put(p, (uint32_t)n);
    /* One pass: validate and encode each element in place. A frame is all or nothing, so
     * an invalid element takes the whole frame back out of the send buffer. */
    for (size_t i = 0; i < n; i++) {
        memd_wire_alloc_req w;
        if (not_at(&reqs[i], "batches") < 0 || memclient_encode_alloc_req(&reqs[i], &w) < 0)
            return element_failed(c, *seq, i);
        p = memd_wire_alloc_req_put(p, &w);
    }
    return 0;
}

int memclient_alloc_batch(memclient *c, const memclient_alloc_req *reqs, size_t n,
                          memclient_buffer *out)
{
    uint64_t seq;
    int r;
    if (n > 0 && (!reqs || !out))
        return memclient_fail(-EINVAL, "memclient_alloc_batch: NULL array");
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = alloc_batch_begin(c, reqs, n, out, true, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return memclient_finish(c, seq);
}

int memclient_submit_alloc_batch(memclient *c, const memclient_alloc_req *reqs, size_t n,
                                 memclient_buffer *out, uint64_t *ticket)
{
    uint64_t seq;
    int r;
    if (n > 0 && (!reqs || !out))
        return memclient_fail(-EINVAL, "memclient_submit_alloc_batch: NULL array");
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = alloc_batch_begin(c, reqs, n, out, false, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return submitted(c, seq, ticket);
}

/* ---- FREE, FREE_BATCH ---- */

static int free_begin(memclient *c, uint64_t handle, bool waited, uint64_t *seq)
{
    int err = 0;
    uint8_t *p = memclient_begin(c, MEMD_OP_FREE, MEMD_WIRE_HANDLE_SIZE, MEMCLIENT_OUT_NONE, NULL,
                                 0, waited, seq, &err);
    if (!p)
        return begin_failed(c, err, MEMD_OP_FREE, MEMD_WIRE_HANDLE_SIZE);
    memd_wire_handle_put(p, handle);
    return 0;
}

int memclient_free(memclient *c, uint64_t handle)
{
    uint64_t seq;
    int r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = free_begin(c, handle, true, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return memclient_finish(c, seq);
}

int memclient_submit_free(memclient *c, uint64_t handle, uint64_t *ticket)
{
    uint64_t seq;
    int r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = free_begin(c, handle, false, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return submitted(c, seq, ticket);
}

static int free_batch_begin(memclient *c, const uint64_t *handles, size_t n, bool waited,
                            uint64_t *seq)
{
    uint32_t len;
    int err = batch_len(n, MEMD_WIRE_HANDLE_SIZE, &len);
    if (err < 0)
        return begin_failed(c, err, MEMD_OP_FREE_BATCH, UINT32_MAX);
    uint8_t *p = memclient_begin(c, MEMD_OP_FREE_BATCH, len, MEMCLIENT_OUT_NONE, NULL, 0, waited,
                                 seq, &err);
    if (!p)
        return begin_failed(c, err, MEMD_OP_FREE_BATCH, len);
    p = memd_wire_count_put(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        p = memd_wire_handle_put(p, handles[i]);
    return 0;
}

int memclient_free_batch(memclient *c, const uint64_t *handles, size_t n)
{
    uint64_t seq;
    int r;
    if (n > 0 && !handles)
        return memclient_fail(-EINVAL, "memclient_free_batch: NULL array");
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = free_batch_begin(c, handles, n, true, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return memclient_finish(c, seq);
}

int memclient_submit_free_batch(memclient *c, const uint64_t *handles, size_t n,
                                uint64_t *ticket)
{
    uint64_t seq;
    int r;
    if (n > 0 && !handles)
        return memclient_fail(-EINVAL, "memclient_submit_free_batch: NULL array");
    if ((r = memclient_lock(c)) < 0)
        return r;
    if ((r = free_batch_begin(c, handles, n, false, &seq)) < 0) {
        memclient_unlock(c);
        return r;
    }
    return submitted(c, seq, ticket);
}

/* ---- QUERY, BANKS, DUMP ---- */

static int handle_call(memclient *c, uint16_t op, uint64_t handle, memclient_out_kind kind,
                       void *out, size_t n)
{
    uint64_t seq;
    int err = 0, r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, op, MEMD_WIRE_HANDLE_SIZE, kind, out, n, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return begin_failed(c, err, op, MEMD_WIRE_HANDLE_SIZE);
    }
    memd_wire_handle_put(p, handle);
    return memclient_finish(c, seq);
}

int memclient_query(memclient *c, uint64_t handle, memclient_alloc_info *out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_query: out is NULL");
    return handle_call(c, MEMD_OP_QUERY, handle, MEMCLIENT_OUT_INFO, out, 1);
}

int memclient_bank_addresses(memclient *c, uint64_t handle, uint64_t *addrs, size_t cap)
{
    if (cap > 0 && !addrs)
        return memclient_fail(-EINVAL, "memclient_bank_addresses: addrs is NULL");
    return handle_call(c, MEMD_OP_BANKS, handle, MEMCLIENT_OUT_BANKS, addrs, cap);
}

int memclient_bank_info(memclient *c, uint64_t handle, memclient_bank *out, size_t cap)
{
    if (cap > 0 && !out)
        return memclient_fail(-EINVAL, "memclient_bank_info: out is NULL");
    return handle_call(c, MEMD_OP_BANK_ADDRS, handle, MEMCLIENT_OUT_BANK_INFO, out, cap);
}

/* One page of a paged DUMP (protocol.h) into raw. */
static int dump_page(memclient *c, const memd_wire_dump_req *q, memclient_raw *raw)
{
    uint64_t seq;
    int err = 0, r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_DUMP, MEMD_WIRE_DUMP_REQ_SIZE, MEMCLIENT_OUT_RAW,
                                 raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return begin_failed(c, err, MEMD_OP_DUMP, MEMD_WIRE_DUMP_REQ_SIZE);
    }
    memd_wire_dump_req_put(p, q);
    return memclient_finish(c, seq);
}

/* Where a page's records end: before its PAGE record, which must be the last one and
 * names the next cursor (*next; 0 when the reply has none: the whole dump at once). */
static int page_end(const uint8_t *p, size_t len, size_t *end, uint64_t *next)
{
    *end = len;
    *next = 0;
    for (size_t off = 0; off < len;) {
        uint32_t tag;
        size_t rec;
        int r = memd_wire_tag_get(p + off, len - off, &tag, &rec);
        if (r < 0)
            return r;
        if (tag == MEMD_REC_PAGE) {
            memd_wire_page_rec pr;
            if (off + MEMD_WIRE_TAG_SIZE + rec != len ||
                memd_wire_page_rec_get(p + off + MEMD_WIRE_TAG_SIZE, rec, &pr) < 0)
                return -EBADMSG;
            *end = off;
            *next = pr.next;
            return 0;
        }
        off += MEMD_WIRE_TAG_SIZE + rec;
    }
    return 0;
}

/* The dump comes in pages (a million allocations do not fit one reply, and building
 * them at once would stall the daemon's other clients); their records are gathered
 * and parsed as one. */
int memclient_dump(memclient *c, uint32_t device, unsigned flags, memclient_snapshot **out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_dump: out is NULL");
    *out = NULL;
    if (flags & ~(unsigned)MEMCLIENT_DUMP_ALL)
        return memclient_fail(-EINVAL, "unknown dump flags 0x%x", flags);
    memd_wire_dump_req q = {
        .device = device,
        .flags = ((flags & MEMCLIENT_DUMP_BLOCKS) ? MEMD_DUMP_F_BLOCKS : 0) |
                 ((flags & MEMCLIENT_DUMP_MODELS) ? MEMD_DUMP_F_MODELS : 0) |
                 ((flags & MEMCLIENT_DUMP_USAGE) ? MEMD_DUMP_F_USAGE : 0) |
                 ((flags & (MEMCLIENT_DUMP_POOLS | MEMCLIENT_DUMP_SUBALLOCS)) ? MEMD_DUMP_F_POOLS
                                                                               : 0) |
                 ((flags & MEMCLIENT_DUMP_SUBALLOCS) ? MEMD_DUMP_F_SUBALLOCS : 0) |
                 ((flags & MEMCLIENT_DUMP_BANKS)
                      ? MEMD_DUMP_F_BANKS | MEMD_DUMP_F_SUBDEV_BANKS |
                            ((c->welcome_flags & MEMD_WELCOME_F_SUBDEV_WINDOWS)
                                 ? MEMD_DUMP_F_SUBDEV_WINDOWS : 0)
                      : 0) |
                 ((flags & MEMCLIENT_DUMP_CGROUPS) ? MEMD_DUMP_F_CGROUPS : 0) |
                 ((flags & MEMCLIENT_DUMP_LIMITS) ? MEMD_DUMP_F_LIMITS : 0) |
                 ((flags & MEMCLIENT_DUMP_FAILURES) ? MEMD_DUMP_F_FAILURES : 0) |
                 ((flags & MEMCLIENT_DUMP_RANGES) ? MEMD_DUMP_F_RANGES : 0) |
                 MEMD_DUMP_F_PAGED,
    };
    uint8_t *all = NULL;
    size_t len = 0, cap = 0;
    int r;
    for (;;) {
        memclient_raw raw = {0};
        if ((r = dump_page(c, &q, &raw)) < 0)
            break;
        size_t end;
        uint64_t next;
        if ((r = page_end(raw.data, raw.len, &end, &next)) == 0 && next != 0 && next <= q.cursor)
            r = -EPROTO; /* a cursor must move on */
        if (r == 0 && len + end > cap) {
            size_t ncap = cap ? cap : 1u << 16;
            while (ncap < len + end)
                ncap *= 2;
            uint8_t *n = realloc(all, ncap);
            if (!n)
                r = -ENOMEM;
            else
                all = n, cap = ncap;
        }
        if (r == 0) {
            memcpy(all + len, raw.data, end);
            len += end;
        }
        free(raw.data);
        if (r < 0) {
            memclient_fail(r, "DUMP reply: %s", memclient_strerror(r));
            break;
        }
        if (next == 0) {
            r = memclient_snapshot_parse(all ? all : (const uint8_t *)"", len, out);
            if (r < 0)
                memclient_fail(r, "DUMP reply: %s", memclient_strerror(r));
            else if (((flags & MEMCLIENT_DUMP_MODEL_STATE) &&
                      (r = memclient_model_states(c, device, *out)) < 0) ||
                     ((flags & MEMCLIENT_DUMP_PEAKS) &&
                      (r = memclient_peaks(c, device, &(*out)->peaks, &(*out)->npeaks)) < 0)) {
                memclient_snapshot_free(*out);
                *out = NULL;
            }
            break;
        }
        q.cursor = next;
    }
    free(all);
    return r;
}

int memclient_region_holders(memclient *c, uint32_t device, memd_kind kind, uint32_t region,
                             memclient_holder *out, size_t cap)
{
    if (cap && !out)
        return memclient_fail(-EINVAL, "memclient_region_holders: out is NULL");
    if ((unsigned)kind >= MEMD_KIND_COUNT || region > UINT8_MAX)
        return memclient_fail(-EINVAL, "no bank group %d region %u", (int)kind, region);
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_REGION_HOLDERS, MEMD_WIRE_HOLDERS_REQ_SIZE,
                                 MEMCLIENT_OUT_RAW, &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return begin_failed(c, err, MEMD_OP_REGION_HOLDERS, MEMD_WIRE_HOLDERS_REQ_SIZE);
    }
    memd_wire_holders_req q = {.device = device, .kind = (uint8_t)kind, .region = (uint8_t)region,
                               .max = (uint16_t)(cap < MEMD_HOLDERS_MAX ? cap : MEMD_HOLDERS_MAX)};
    memd_wire_holders_req_put(p, &q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    uint32_t n = raw.len >= MEMD_WIRE_COUNT_SIZE ? memd_wire_u32(raw.data) : 0;
    bool ok = raw.len == MEMD_WIRE_COUNT_SIZE + (size_t)n * MEMD_WIRE_HOLDER_REC_SIZE && n <= cap;
    for (uint32_t i = 0; ok && i < n; i++) {
        memd_wire_holder_rec w;
        ok = memd_wire_holder_rec_get(raw.data + MEMD_WIRE_COUNT_SIZE +
                                          (size_t)i * MEMD_WIRE_HOLDER_REC_SIZE,
                                      MEMD_WIRE_HOLDER_REC_SIZE, &w) == 0;
        if (ok)
            memclient_holder_from_wire(&out[i], &w);
    }
    free(raw.data);
    if (!ok)
        return memclient_fail(-EBADMSG, "malformed REGION_HOLDERS reply");
    return (int)n;
}

/* ---- completion ---- */

int memclient_flush(memclient *c)
{
    int r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    r = memclient_send(c, true);
    memclient_unlock(c);
    if (r < 0)
        return memclient_fail(r, "sending to %s: %s", c->info.socket_path, memclient_strerror(r));
    return 0;
}

/* MEMCLIENT_CONNECT_RECONNECT: the daemon went away with submitted requests unanswered.
 * Reconnects (reclaiming the session) and sends every one of them again, in order, as
 * retries (memd answers one it had done with what it did). 0, or the error that ends
 * them. */
static int resend_submitted(memclient *c)
{
    int r = memclient_reconnect_locked(c, MEMCLIENT_RECONNECT_MS);
    if (r < 0 && r != -EISCONN)
        return r;
    for (uint64_t q = c->head, end = c->tail; q != end; q++) {
        memclient_slot *s = memclient_slot_at(c, q);
        if (s->consumed || !s->cut || !s->frame)
            continue;
        uint64_t nseq;
        if (memclient_resend(c, s->frame, s->frame_len, s, &nseq) < 0)
            return memclient_fail(-ENOMEM, "no memory to send a request again");
        memclient_slot_at(c, q)->frame = NULL; /* the new slot owns it (the ring may move) */
        memclient_consume(c, q);
    }
    return 0;
}

int memclient_complete(memclient *c, memclient_completion *out)
{
    if (!c || !out)
        return memclient_fail(-EINVAL, "memclient_complete: NULL argument");
    /* No dead check: requests cut off by a transport failure still complete, with that
     * failure as their status. */
    pthread_mutex_lock(&c->mu);
    if (c->pipelined == 0) {
        pthread_mutex_unlock(&c->mu);
        return memclient_fail(-ENOENT, "no submitted request is outstanding");
    }
    /* Slots at the head taken by blocking callers are retired; the oldest untaken one is
     * a submitted request (a blocking caller never leaves the lock with its slot untaken). */
    uint64_t seq = c->head;
    while (memclient_slot_at(c, seq)->consumed)
        seq++;
    memclient_slot *s = memclient_slot_at(c, seq);
    int status = memclient_wait(c, seq);
    while (status < 0 && s->cut && s->frame && memclient_gone(status)) {
        uint64_t id = s->id;
        if (resend_submitted(c) < 0)
            break; /* it completes with the failure that cut it */
        /* Its retry: the one live slot with its request id. */
        seq = c->head;
        while (seq != c->tail &&
               (memclient_slot_at(c, seq)->consumed || memclient_slot_at(c, seq)->id != id))
            seq++;
        if (seq == c->tail) { /* cannot happen */
            pthread_mutex_unlock(&c->mu);
            return memclient_fail(-EPROTO, "memclient_complete: request %llu lost its slot",
                                  (unsigned long long)id);
        }
        s = memclient_slot_at(c, seq);
        status = memclient_wait(c, seq);
    }
    out->ticket = s->id;
    out->status = status;
    if (status < 0)
        memclient_fail_with(&s->err);
    memclient_consume(c, seq);
    c->pipelined--;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

size_t memclient_pending(memclient *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    size_t n = c->pipelined;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---- SUBDEV_DEFINE, SUBDEV_BIND ---- */

/* A request whose reply is empty: payload built by the caller into p. */
static int empty_call(memclient *c, uint16_t op, const uint8_t *payload, uint32_t len)
{
    uint64_t seq;
    int err = 0, r;
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, op, len, MEMCLIENT_OUT_NONE, NULL, 0, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return begin_failed(c, err, op, len);
    }
    memcpy(p, payload, len);
    return memclient_finish(c, seq);
}

int memclient_subdev_define(memclient *c, const memclient_subdev *sd)
{
    if (!sd || !sd->name || !*sd->name || strlen(sd->name) >= MEMD_NAME_MAX)
        return memclient_fail(-EINVAL, "a sub-device needs a name of 1 to %d bytes",
                              MEMD_NAME_MAX - 1);
    if (sd->nbanks == 0 || !sd->banks || sd->nbanks > MEMD_BANKSET_MAX)
        return memclient_fail(-EINVAL, "a sub-device needs 1 to %u banks", MEMD_BANKSET_MAX);
    memd_wire_subdev_def d = {.device = sd->device, .kind = (uint8_t)sd->kind,
                              .budget = sd->budget, .count = sd->nbanks,
                              .window = sd->window};
    memd_wire_strset(d.name, sizeof d.name, sd->name);
    for (int i = 0; i < MEMD_SUBDEV_OVERLAPS; i++)
        if (sd->overlap[i]) {
            if (strlen(sd->overlap[i]) >= MEMD_NAME_MAX)
                return memclient_fail(-EINVAL, "overlap name too long");
            memd_wire_strset(d.overlap[i], sizeof d.overlap[i], sd->overlap[i]);
        }
    /* A memd from before windows reads only the 344-byte definition: sent without one. */
    if (sd->window && !(c->welcome_flags & MEMD_WELCOME_F_SUBDEV_WINDOWS))
        return memclient_fail(-EOPNOTSUPP, "this memd has no sub-device windows");
    size_t fixed = sd->window ? MEMD_WIRE_SUBDEV_DEF_SIZE : MEMD_WIRE_SUBDEV_DEF_V1_SIZE;
    size_t len = fixed + 4 * (size_t)sd->nbanks;
    uint8_t *buf = malloc(MEMD_WIRE_SUBDEV_DEF_SIZE + 4 * (size_t)sd->nbanks);
    uint32_t *ids = malloc(sizeof(*ids) * sd->nbanks);
    if (!buf || !ids) {
        free(buf);
        free(ids);
        return memclient_fail(-ENOMEM, "out of memory");
    }
    memcpy(ids, sd->banks, sizeof(*ids) * sd->nbanks);
    qsort(ids, sd->nbanks, sizeof(*ids), cmp_u32);
    memd_wire_subdev_def_put(buf, &d, ids);
    memmove(buf + fixed, buf + MEMD_WIRE_SUBDEV_DEF_SIZE, 4 * (size_t)sd->nbanks);
    free(ids);
    int r = empty_call(c, MEMD_OP_SUBDEV_DEFINE, buf, (uint32_t)len);
    free(buf);
    return r;
}

int memclient_set_context(memclient *c, const char *context, const char *stack)
{
    if (!context)
        context = "";
    if (!stack)
        stack = "";
    if (strlen(context) >= MEMD_CONTEXT_MAX || strlen(stack) >= MEMD_STACK_MAX)
        return memclient_fail(-EINVAL, "a context has at most %d bytes, a stack %d",
                              MEMD_CONTEXT_MAX - 1, MEMD_STACK_MAX - 1);
    uint8_t p[MEMD_WIRE_CONTEXT_REQ_SIZE];
    memd_wire_context_req q = {0};
    memcpy(q.context, context, strlen(context));
    memcpy(q.stack, stack, strlen(stack));
    memd_wire_context_req_put(p, &q);
    return empty_call(c, MEMD_OP_CONTEXT, p, sizeof p);
}

int memclient_subdev_bind(memclient *c, const char *name)
{
    if (!name || !*name || strlen(name) >= MEMD_NAME_MAX)
        return memclient_fail(-EINVAL, "a sub-device name has 1 to %d bytes", MEMD_NAME_MAX - 1);
    uint8_t p[MEMD_NAME_MAX];
    memd_wire_put_str(p, name, sizeof p);
    return empty_call(c, MEMD_OP_SUBDEV_BIND, p, sizeof p);
}

/* ---- LIMIT_SET, LIMIT_CLEAR ---- */

static int limit_call(memclient *c, uint16_t op, const char *cgroup, uint32_t device,
                      memd_kind kind, uint8_t flags, uint64_t max)
{
    if (!cgroup || cgroup[0] != '/' || strlen(cgroup) >= MEMD_CGROUP_MAX)
        return memclient_fail(-EINVAL, "a cgroup path starts with '/' and has at most %d bytes",
                              MEMD_CGROUP_MAX - 1);
    memd_wire_limit_def d = {.device = device, .kind = (uint8_t)kind, .flags = flags,
                             .max = max};
    memd_wire_strset(d.cgroup, sizeof d.cgroup, cgroup);
    uint8_t p[MEMD_WIRE_LIMIT_DEF_SIZE];
    memd_wire_limit_def_put(p, &d);
    return empty_call(c, op, p, sizeof p);
}

int memclient_limit_set(memclient *c, const char *cgroup, uint32_t device, memd_kind kind,
                        uint64_t max)
{
    if ((unsigned)kind >= MEMD_KIND_COUNT)
        return memclient_fail(-EINVAL, "bank group %d: expected dram or sram", (int)kind);
    return limit_call(c, MEMD_OP_LIMIT_SET, cgroup, device, kind, 0, max);
}

/* ---- PEAKS, PEAKS_RESET ---- */

_Static_assert((int)MEMCLIENT_PEAK_GROUP == MEMD_PEAK_GROUP &&
                   (int)MEMCLIENT_PEAK_REGION == MEMD_PEAK_REGION &&
                   (int)MEMCLIENT_PEAK_SESSION == MEMD_PEAK_SESSION &&
                   (int)MEMCLIENT_PEAK_POOL == MEMD_PEAK_POOL && MEMCLIENT_PEAKS_ALL == MEMD_PEAKS_ALL,
               "client.h says what protocol.h says");

int memclient_peaks(memclient *c, uint32_t device, memclient_peak **out, size_t *n)
{
    if (!out || !n)
        return memclient_fail(-EINVAL, "memclient_peaks: NULL argument");
    *out = NULL;
    *n = 0;
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_PEAKS, MEMD_WIRE_PEAKS_REQ_SIZE, MEMCLIENT_OUT_RAW,
                                 &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return begin_failed(c, err, MEMD_OP_PEAKS, MEMD_WIRE_PEAKS_REQ_SIZE);
    }
    memd_wire_peaks_req q = {.device = device};
    memd_wire_peaks_req_put(p, &q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    uint32_t count = raw.len >= MEMD_WIRE_COUNT_SIZE ? memd_wire_u32(raw.data) : 0;
    bool ok = raw.len == MEMD_WIRE_COUNT_SIZE + (size_t)count * MEMD_WIRE_PEAK_REC_SIZE;
    memclient_peak *v = ok ? calloc(count ? count : 1, sizeof *v) : NULL;
    for (uint32_t i = 0; v && i < count; i++) {
        memd_wire_peak_rec w;
        if (memd_wire_peak_rec_get(raw.data + MEMD_WIRE_COUNT_SIZE +
                                       (size_t)i * MEMD_WIRE_PEAK_REC_SIZE,
                                   MEMD_WIRE_PEAK_REC_SIZE, &w) < 0) {
            ok = false;
            break;
        }
        memclient_peak_from_wire(&v[i], &w);
    }
    free(raw.data);
    if (!ok) {
        free(v);
        return memclient_fail(-EBADMSG, "malformed PEAKS reply");
    }
    if (!v)
        return memclient_fail(-ENOMEM, "PEAKS reply: %u records", count);
    *out = v;
    *n = count;
    return 0;
}

int memclient_peaks_reset(memclient *c, uint32_t device, uint32_t session)
{
    memd_wire_peaks_req q = {.device = device, .session = session};
    uint8_t p[MEMD_WIRE_PEAKS_REQ_SIZE];
    memd_wire_peaks_req_put(p, &q);
    return empty_call(c, MEMD_OP_PEAKS_RESET, p, sizeof p);
}

const char *memclient_peak_what_name(unsigned what)
{
    static const char *const names[MEMD_PEAK_WHAT_COUNT] = {
        [MEMD_PEAK_GROUP] = "group", [MEMD_PEAK_REGION] = "region",
        [MEMD_PEAK_SESSION] = "session", [MEMD_PEAK_POOL] = "pool"};
    return what < MEMD_PEAK_WHAT_COUNT ? names[what] : "?";
}

int memclient_limit_clear(memclient *c, const char *cgroup, uint32_t device, memd_kind kind)
{
    uint8_t flags = (device == MEMCLIENT_ALL_DEVICES ? MEMD_LIMIT_F_ANY_DEVICE : 0) |
                    ((unsigned)kind >= MEMD_KIND_COUNT ? MEMD_LIMIT_F_ANY_GROUP : 0);
    return limit_call(c, MEMD_OP_LIMIT_CLEAR, cgroup, device == MEMCLIENT_ALL_DEVICES ? 0 : device,
                      (unsigned)kind >= MEMD_KIND_COUNT ? MEMD_KIND_DRAM : kind, flags, 0);
}
