/* memd wire codec: the EVENTS request, its reply records, and DUMP's SESSION_USE record. */
#include <errno.h>
#include <string.h>

#include "wire.h"

uint8_t *memd_wire_events_req_put(uint8_t *p, const memd_wire_events_req *r)
{
    p = memd_wire_put_u64(p, r->since);
    p = memd_wire_put_u32(p, r->max);
    return memd_wire_put_u32(p, r->flags);
}

int memd_wire_events_req_get(const uint8_t *p, size_t len, memd_wire_events_req *r)
{
    if (len < MEMD_WIRE_EVENTS_REQ_SIZE)
        return -EBADMSG;
    r->since = memd_wire_u64(p);
    r->max = memd_wire_u32(p + 8);
    r->flags = memd_wire_u32(p + 12);
    return r->flags & ~(uint32_t)MEMD_EVENTS_F_WAIT ? -EINVAL : 0;
}

uint8_t *memd_wire_events_info_put(uint8_t *p, const memd_wire_events_info *r)
{
    p = memd_wire_put_u64(p, r->next_seq);
    p = memd_wire_put_u64(p, r->lost);
    p = memd_wire_put_u32(p, r->count);
    return memd_wire_put_u32(p, 0);
}

int memd_wire_events_info_get(const uint8_t *p, size_t len, memd_wire_events_info *r)
{
    if (len < MEMD_WIRE_EVENTS_INFO_SIZE)
        return -EBADMSG;
    r->next_seq = memd_wire_u64(p);
    r->lost = memd_wire_u64(p + 8);
    r->count = memd_wire_u32(p + 16);
    r->pad = 0;
    return 0;
}

uint8_t *memd_wire_event_put(uint8_t *p, const memd_wire_event *r)
{
    p = memd_wire_put_u64(p, r->seq);
    p = memd_wire_put_u64(p, r->time_ns);
    p = memd_wire_put_u32(p, r->type);
    p = memd_wire_put_u32(p, r->priority);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u32(p, r->uid);
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u32(p, r->device);
    p = memd_wire_put_u64(p, r->bytes);
    p = memd_wire_put_str(p, r->comm, sizeof r->comm);
    return memd_wire_put_str(p, r->message, sizeof r->message);
}

int memd_wire_event_get(const uint8_t *p, size_t len, memd_wire_event *r)
{
    if (len < MEMD_WIRE_EVENT_SIZE)
        return -EBADMSG;
    r->seq = memd_wire_u64(p);
    r->time_ns = memd_wire_u64(p + 8);
    r->type = memd_wire_u32(p + 16);
    r->priority = memd_wire_u32(p + 20);
    r->pid = memd_wire_u32(p + 24);
    r->uid = memd_wire_u32(p + 28);
    r->session_id = memd_wire_u32(p + 32);
    r->device = memd_wire_u32(p + 36);
    r->bytes = memd_wire_u64(p + 40);
    if (r->type == 0 || r->type >= MEMD_EVENT_TYPE_COUNT || r->priority > 7)
        return -EINVAL;
    int rc = memd_wire_get_str(p + 48, r->comm, sizeof r->comm);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 48 + sizeof r->comm, r->message, sizeof r->message);
}

uint8_t *memd_wire_session_use_put(uint8_t *p, const memd_wire_session_use *r)
{
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->kind;
    memset(p, 0, 3);
    p += 3;
    p = memd_wire_put_u32(p, r->allocations);
    p = memd_wire_put_u64(p, r->bytes);
    return memd_wire_put_u64(p, r->shared_bytes);
}

int memd_wire_session_use_get(const uint8_t *p, size_t len, memd_wire_session_use *r)
{
    if (len < MEMD_WIRE_SESSION_USE_SIZE)
        return -EBADMSG;
    memset(r, 0, sizeof *r);
    r->session_id = memd_wire_u32(p);
    r->device = memd_wire_u32(p + 4);
    r->kind = p[8];
    r->allocations = memd_wire_u32(p + 12);
    r->bytes = memd_wire_u64(p + 16);
    r->shared_bytes = memd_wire_u64(p + 24);
    return r->kind >= MEMD_KIND_COUNT ? -EINVAL : 0;
}
