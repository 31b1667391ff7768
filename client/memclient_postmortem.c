/* libmemclient: post-mortems of out-of-memory refusals (POSTMORTEM). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

static int request(memclient *c, uint64_t id, memclient_raw *raw)
{
    uint8_t p[MEMD_WIRE_PM_REQ_SIZE];
    memd_wire_pm_req q = {.id = id};
    memd_wire_pm_req_put(p, &q);
    return memclient_raw_call(c, MEMD_OP_POSTMORTEM, p, sizeof p, "POSTMORTEM", 0, raw);
}

int memclient_postmortems(memclient *c, memclient_postmortem **out, size_t *n)
{
    if (!out || !n)
        return memclient_fail(-EINVAL, "memclient_postmortems: out or n is NULL");
    *out = NULL;
    *n = 0;
    memclient_raw raw;
    int r = request(c, 0, &raw);
    if (r < 0)
        return r;
    uint32_t count = raw.len >= MEMD_WIRE_COUNT_SIZE ? memd_wire_u32(raw.data) : 0;
    if (raw.len != MEMD_WIRE_COUNT_SIZE + (size_t)count * MEMD_WIRE_POSTMORTEM_SIZE)
        return memclient_bad_reply(&raw, "POSTMORTEM");
    memclient_postmortem *v = calloc(count ? count : 1, sizeof *v);
    if (!v) {
        free(raw.data);
        return memclient_fail(-ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < count; i++) {
        memd_wire_postmortem w;
        if (memd_wire_postmortem_get(raw.data + MEMD_WIRE_COUNT_SIZE +
                                         (size_t)i * MEMD_WIRE_POSTMORTEM_SIZE,
                                     MEMD_WIRE_POSTMORTEM_SIZE, &w) < 0) {
            free(v);
            return memclient_bad_reply(&raw, "POSTMORTEM");
        }
        memclient_postmortem_from_wire(&v[i], &w);
    }
    free(raw.data);
    *out = v;
    *n = count;
    return 0;
}

/* The records after the postmortem record, as its counts say. 0 or -EBADMSG. */
static int parse_report(const uint8_t *p, size_t len, memclient_postmortem_report *out)
{
    const memclient_postmortem *in = &out->info;
    if (len != (size_t)in->nholders * MEMD_WIRE_HOLDER_REC_SIZE +
                   (size_t)in->nfree * MEMD_WIRE_PM_BLOCK_SIZE +
                   (size_t)in->nevents * MEMD_WIRE_HIST_EVENT_SIZE)
        return -EBADMSG;
    out->holders = calloc(in->nholders + 1u, sizeof *out->holders);
    out->free_blocks = calloc(in->nfree + 1u, sizeof *out->free_blocks);
    out->events = calloc(in->nevents + 1u, sizeof *out->events);
    if (!out->holders || !out->free_blocks || !out->events)
        return -ENOMEM;
    for (uint32_t i = 0; i < in->nholders; i++, p += MEMD_WIRE_HOLDER_REC_SIZE) {
        memd_wire_holder_rec w;
        if (memd_wire_holder_rec_get(p, MEMD_WIRE_HOLDER_REC_SIZE, &w) < 0)
            return -EBADMSG;
        memclient_holder_from_wire(&out->holders[i], &w);
    }
    for (uint32_t i = 0; i < in->nfree; i++, p += MEMD_WIRE_PM_BLOCK_SIZE) {
        memd_wire_pm_block w;
        if (memd_wire_pm_block_get(p, MEMD_WIRE_PM_BLOCK_SIZE, &w) < 0)
            return -EBADMSG;
        memclient_free_block_from_wire(&out->free_blocks[i], &w);
    }
    for (uint32_t i = 0; i < in->nevents; i++, p += MEMD_WIRE_HIST_EVENT_SIZE) {
        memd_wire_hist_event w;
        if (memd_wire_hist_event_get(p, MEMD_WIRE_HIST_EVENT_SIZE, &w) < 0)
            return -EBADMSG;
        memclient_hist_event_from_wire(&out->events[i], &w);
    }
    return 0;
}

int memclient_postmortem_get(memclient *c, uint64_t id, memclient_postmortem_report *out)
{
    if (!out)
        return memclient_fail(-EINVAL, "memclient_postmortem_get: out is NULL");
    *out = (memclient_postmortem_report){0};
    if (id == 0)
        return memclient_fail(-EINVAL, "post-mortem ids start at 1");
    memclient_raw raw;
    int r = request(c, id, &raw);
    if (r < 0)
        return r;
    memd_wire_postmortem w;
    if (memd_wire_postmortem_get(raw.data, raw.len, &w) < 0)
        return memclient_bad_reply(&raw, "POSTMORTEM");
    memclient_postmortem_from_wire(&out->info, &w);
    r = parse_report(raw.data + MEMD_WIRE_POSTMORTEM_SIZE, raw.len - MEMD_WIRE_POSTMORTEM_SIZE,
                     out);
    free(raw.data);
    if (r < 0) {
        memclient_postmortem_report_free(out);
        return memclient_fail(r, r == -ENOMEM ? "out of memory" : "malformed POSTMORTEM reply");
    }
    return 0;
}

void memclient_postmortem_report_free(memclient_postmortem_report *r)
{
    if (!r)
        return;
    free(r->holders);
    free(r->free_blocks);
    free(r->events);
    *r = (memclient_postmortem_report){0};
}
