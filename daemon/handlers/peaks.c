/* memd daemon — PEAKS and PEAKS_RESET: the high-water marks (core/peak.h). */
#include <errno.h>
#include <stdio.h>

#include "alloc.h"
#include "dispatch.h"
#include "malformed.h"
#include "peak.h"
#include "pool_books.h"
#include "wire.h"

typedef struct sink {
    uint8_t *o;                    /* NULL: count only */
    uint32_t n;
} sink;

static void put(sink *k, const memd_wire_peak_rec *r)
{
    if (k->o)
        k->o = memd_wire_peak_rec_put(k->o, r);
    k->n++;
}

static void put_use(sink *k, uint8_t what, uint32_t device, uint8_t kind, uint8_t region,
                    uint64_t current, const memd_peak *p)
{
    memd_wire_peak_rec r = {.what = what, .kind = kind, .region = region, .device = device,
                            .current = current, .peak = p->bytes, .peak_ns = p->at_ns};
    put(k, &r);
}

/* One session's bank groups (those it has held something in) and pools. */
static void put_session(const memd_state *st, const memd_session *s, int dev, sink *k)
{
    for (uint32_t d = 0; s->group_holds && d < st->ndevs; d++) {
        if (dev >= 0 && d != (uint32_t)dev)
            continue;
        for (uint8_t g = 0; g < MEMD_KIND_COUNT; g++) {
            const memd_group_use *u = &s->group_holds[(size_t)d * MEMD_KIND_COUNT + g];
            if (!u->peak.bytes)
                continue;
            memd_wire_peak_rec r = {.what = MEMD_PEAK_SESSION, .kind = g,
                                    .device = st->devs[d].spec->id, .session_id = s->id,
                                    .pid = s->pid, .current = u->bytes, .peak = u->peak.bytes,
                                    .peak_ns = u->peak.at_ns};
            put(k, &r);
        }
    }
    for (const memd_hold *h = s->holds; h; h = h->next) {
        const memd_alloc *a = memd_hold_alloc(h);
        const memd_pool_books *b = memd_pool_books_of(a);
        if (!b || (dev >= 0 && a->dev != (uint32_t)dev))
            continue;
        memd_wire_peak_rec r = {.what = MEMD_PEAK_POOL, .kind = a->pl.kind,
                                .region = a->pl.region, .device = st->devs[a->dev].spec->id,
                                .session_id = s->id, .pid = s->pid, .pool = a->handle,
                                .current = b->pooled, .peak = b->peak.bytes,
                                .peak_ns = b->peak.at_ns};
        put(k, &r);
    }
}

/* The bank groups and allocatable regions of dev (-1: every device), then the sessions
 * self may see (its own; an admin every one). */
static void put_all(const memd_state *st, const memd_session *self, int dev, sink *k)
{
    for (uint32_t d = 0; d < st->ndevs; d++) {
        if (dev >= 0 && d != (uint32_t)dev)
            continue;
        const memd_dev *x = &st->devs[d];
        for (uint8_t g = 0; g < MEMD_KIND_COUNT; g++) {
            const memd_bank_group_spec *gs = &x->spec->groups[g];
            if (!gs->banks)
                continue;
            put_use(k, MEMD_PEAK_GROUP, x->spec->id, g, 0, x->group[g].bytes, &x->group[g].peak);
            for (uint8_t r = 0; r < gs->nregions; r++)
                if (gs->regions[r].allocatable)
                    put_use(k, MEMD_PEAK_REGION, x->spec->id, g, r, x->regions[g][r].bytes,
                            &x->regions[g][r].peak);
        }
    }
    for (const memd_session *s = st->sessions; s; s = s->next)
        if (self->admin || s == self)
            put_session(st, s, dev, k);
}

/* A PEAKS or PEAKS_RESET request: the fields, the device's index (-1 for every one) and
 * rc < 0 with err set when it names no device (refused, still answered). */
typedef struct peaks_req {
    memd_wire_peaks_req q;
    int dev, rc;
    memd_error err;
} peaks_req;

/* Decodes the request and resolves its device; false once the malformed reply is queued,
 * the handler's result in *ret. */
static bool decode(memd_state *st, const memd_wire_hdr *h, const uint8_t *p, memd_buf *out,
                   peaks_req *r, int *ret)
{
    memd_error_reset(&r->err);
    r->dev = -1;
    r->rc = memd_wire_peaks_req_get(p, h->len, &r->q);
    if (r->rc < 0) {
        *ret = memd_malformed(st, h, out, r->rc);
        return false;
    }
    if (r->q.device != UINT32_MAX) {
        r->dev = memd_state_dev_index(st, r->q.device);
        if (r->dev < 0)
            r->rc = memd_error_set(&r->err, r->dev, "no device %u (%u configured)", r->q.device,
                                   st->ndevs);
    }
    return true;
}

int memd_op_peaks(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out)
{
    peaks_req r;
    int rc;
    if (!decode(st, h, p, out, &r, &rc))
        return rc;
    rc = r.rc;
    if (rc == 0 && r.q.session != 0)
        rc = memd_error_set(&r.err, -EINVAL, "PEAKS takes session 0 (it is PEAKS_RESET's), not %u",
                            r.q.session);
    sink k = {0};
    if (rc == 0) {
        put_all(st, s, r.dev, &k);
        size_t len = MEMD_WIRE_COUNT_SIZE + (size_t)k.n * MEMD_WIRE_PEAK_REC_SIZE;
        if (len > st->reply_room)
            rc = memd_error_set(&r.err, -E2BIG, "PEAKS reply of %zu bytes (%u records) is over "
                                "the reply backlog (%zu bytes): ask for one device", len, k.n,
                                st->reply_room);
    }
    if (rc < 0)
        return memd_reply_fail(st, h, out, &r.err, false);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + k.n * MEMD_WIRE_PEAK_REC_SIZE);
    if (!o)
        return -ENOMEM;
    o = memd_wire_put_u32(o, k.n);
    k = (sink){.o = memd_wire_put_u32(o, 0)};
    put_all(st, s, r.dev, &k);
    return 0;
}

int memd_op_peaks_reset(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    peaks_req r;
    int rc;
    if (!decode(st, h, p, out, &r, &rc))
        return rc;
    rc = r.rc;
    memd_session *only = s;
    if (rc == 0 && r.q.session != 0 && r.q.session != s->id) {
        if (!s->admin)
            rc = memd_error_set(&r.err, -EPERM, "only an admin resets the peaks of %s (a session "
                                "resets its own: session 0)", r.q.session == MEMD_PEAKS_ALL
                                ? "every session" : "another session");
        else if (r.q.session == MEMD_PEAKS_ALL)
            only = NULL;
        else {
            for (only = st->sessions; only && only->id != r.q.session; only = only->next)
                ;
            if (!only)
                rc = memd_error_set(&r.err, -ENOENT, "no session %u", r.q.session);
        }
    }
    if (rc == 0)
        memd_peaks_reset(st, r.dev, only);
    return memd_reply_done(st, h, out, &r.err, rc);
}
