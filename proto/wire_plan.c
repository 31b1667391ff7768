/* memd wire codec: uploads, plan problems, plan replies and DUMP plan records (see
 * wire.h). Field order follows include/memd/protocol.h exactly; reserved fields go out
 * as 0 and are ignored on the way in (room to grow). */
#include "wire.h"

#include <errno.h>

uint8_t *memd_wire_upload_put(uint8_t *p, const memd_wire_upload *r)
{
    p = memd_wire_put_u64(p, r->upload_id);
    p = memd_wire_put_u64(p, r->total);
    return memd_wire_put_u64(p, r->offset);
}

int memd_wire_upload_get(const uint8_t *p, size_t len, memd_wire_upload *r)
{
    if (len < MEMD_WIRE_UPLOAD_SIZE)
        return -EBADMSG;
    r->upload_id = memd_wire_u64(p);
    r->total = memd_wire_u64(p + 8);
    r->offset = memd_wire_u64(p + 16);
    return r->upload_id == 0 ? -EINVAL : 0;
}

#define MEMD_PLAN_F_KNOWN (MEMD_PLAN_F_PRECOMPUTED)

uint8_t *memd_wire_plan_req_put(uint8_t *p, const memd_wire_plan_req *r)
{
    p = memd_wire_put_u32(p, r->count);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, r->budget_ms);
    p = memd_wire_put_u32(p, 0);
    return memd_wire_put_u64(p, r->seed);
}

int memd_wire_plan_req_get(const uint8_t *p, size_t len, memd_wire_plan_req *r)
{
    if (len < MEMD_WIRE_PLAN_REQ_SIZE)
        return -EBADMSG;
    r->count = memd_wire_u32(p);
    r->flags = memd_wire_u32(p + 4);
    r->budget_ms = memd_wire_u32(p + 8);
    r->pad = 0;
    r->seed = memd_wire_u64(p + 16);
    return (r->flags & ~(uint32_t)MEMD_PLAN_F_KNOWN) ? -EINVAL : 0;
}

uint8_t *memd_wire_plan_buf_put(uint8_t *p, const memd_wire_plan_buf *r)
{
    p = memd_wire_put_u64(p, r->lower);
    p = memd_wire_put_u64(p, r->upper);
    p = memd_wire_put_u64(p, r->size);
    p = memd_wire_put_u64(p, r->align);
    p = memd_wire_put_u64(p, r->offset);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_u32(p, 0);
}

int memd_wire_plan_buf_get(const uint8_t *p, size_t len, memd_wire_plan_buf *r)
{
    if (len < MEMD_WIRE_PLAN_BUF_SIZE)
        return -EBADMSG;
    r->lower = memd_wire_u64(p);
    r->upper = memd_wire_u64(p + 8);
    r->size = memd_wire_u64(p + 16);
    r->align = memd_wire_u64(p + 24);
    r->offset = memd_wire_u64(p + 32);
    r->flags = memd_wire_u32(p + 40);
    r->pad = 0;
    return (r->flags & ~(uint32_t)MEMD_PLAN_BUF_F_PINNED) ? -EINVAL : 0;
}

#define MEMD_PLAN_I_KNOWN (MEMD_PLAN_I_CACHED | MEMD_PLAN_I_OPTIMAL | MEMD_PLAN_I_PRECOMPUTED)

uint8_t *memd_wire_plan_info_put(uint8_t *p, const memd_wire_plan_info *r)
{
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->lower_bound);
    p = memd_wire_put_u64(p, r->iterations);
    p = memd_wire_put_u64(p, r->plan_us);
    p = memd_wire_put_u32(p, r->count);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_str(p, r->strategy, sizeof r->strategy);
}

int memd_wire_plan_info_get(const uint8_t *p, size_t len, memd_wire_plan_info *r)
{
    if (len < MEMD_WIRE_PLAN_INFO_SIZE)
        return -EBADMSG;
    r->plan_id = memd_wire_u64(p);
    r->arena = memd_wire_u64(p + 8);
    r->lower_bound = memd_wire_u64(p + 16);
    r->iterations = memd_wire_u64(p + 24);
    r->plan_us = memd_wire_u64(p + 32);
    r->count = memd_wire_u32(p + 40);
    r->flags = memd_wire_u32(p + 44);
    if (r->flags & ~(uint32_t)MEMD_PLAN_I_KNOWN)
        return -EINVAL;
    return memd_wire_get_str(p + 48, r->strategy, sizeof r->strategy);
}

uint8_t *memd_wire_plan_rec_put(uint8_t *p, const memd_wire_plan_rec *r)
{
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->lower_bound);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_u64(p, r->plan_us);
    p = memd_wire_put_u64(p, r->hits);
    p = memd_wire_put_u32(p, r->buffers);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, r->models);
    p = memd_wire_put_u32(p, 0);
    return memd_wire_put_str(p, r->strategy, sizeof r->strategy);
}

int memd_wire_plan_rec_get(const uint8_t *p, size_t len, memd_wire_plan_rec *r)
{
    if (len < MEMD_WIRE_PLAN_REC_SIZE)
        return -EBADMSG;
    r->plan_id = memd_wire_u64(p);
    r->arena = memd_wire_u64(p + 8);
    r->lower_bound = memd_wire_u64(p + 16);
    r->created_ns = memd_wire_u64(p + 24);
    r->plan_us = memd_wire_u64(p + 32);
    r->hits = memd_wire_u64(p + 40);
    r->buffers = memd_wire_u32(p + 48);
    r->flags = memd_wire_u32(p + 52);
    r->models = memd_wire_u32(p + 56);
    r->pad = 0;
    if (r->flags & ~(uint32_t)MEMD_PLAN_I_KNOWN)
        return -EINVAL;
    return memd_wire_get_str(p + 64, r->strategy, sizeof r->strategy);
}
