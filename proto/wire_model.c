/* memd wire codec: models, tensors, instances and their DUMP records (see wire.h).
 * Field order follows include/memd/protocol.h exactly; reserved fields go out as 0 and
 * are ignored on the way in (room to grow). */
#include "wire.h"

#include <errno.h>

uint8_t *memd_wire_model_req_put(uint8_t *p, const memd_wire_model_req *r)
{
    p = memd_wire_put_u32(p, r->device);
    *p++ = r->scope;
    *p++ = 0;
    p = memd_wire_put_u16(p, 0);
    p = memd_wire_put_u32(p, r->ntensors);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->code_bytes);
    return memd_wire_put_str(p, r->name, sizeof r->name);
}

int memd_wire_model_req_get(const uint8_t *p, size_t len, memd_wire_model_req *r)
{
    if (len < MEMD_WIRE_MODEL_REQ_SIZE)
        return -EBADMSG;
    r->device = memd_wire_u32(p);
    r->scope = p[4];
    r->pad0 = 0;
    r->pad1 = 0;
    r->ntensors = memd_wire_u32(p + 8);
    r->flags = memd_wire_u32(p + 12);
    r->plan_id = memd_wire_u64(p + 16);
    r->code_bytes = memd_wire_u64(p + 24);
    if (r->scope >= MEMD_SCOPE_COUNT || r->flags != 0)
        return -EINVAL;
    return memd_wire_get_str(p + 32, r->name, sizeof r->name);
}

uint8_t *memd_wire_tensor_put(uint8_t *p, const memd_wire_tensor *r)
{
    p = memd_wire_put_u64(p, r->size);
    p = memd_wire_put_u64(p, r->align);
    p = memd_wire_put_u64(p, r->lower);
    p = memd_wire_put_u64(p, r->upper);
    *p++ = r->role;
    *p++ = 0;
    p = memd_wire_put_u16(p, 0);
    return memd_wire_put_u32(p, r->alias_of);
}

int memd_wire_tensor_get(const uint8_t *p, size_t len, memd_wire_tensor *r)
{
    if (len < MEMD_WIRE_TENSOR_SIZE)
        return -EBADMSG;
    r->size = memd_wire_u64(p);
    r->align = memd_wire_u64(p + 8);
    r->lower = memd_wire_u64(p + 16);
    r->upper = memd_wire_u64(p + 24);
    r->role = p[32];
    r->pad0 = 0;
    r->pad1 = 0;
    r->alias_of = memd_wire_u32(p + 36);
    return r->role >= MEMD_TENSOR_ROLE_COUNT ? -EINVAL : 0;
}

#define MEMD_MODEL_I_KNOWN \
    (MEMD_MODEL_I_NEW | MEMD_MODEL_I_PLAN_OPTIMAL | MEMD_MODEL_I_PLAN_PRECOMPUTED)

uint8_t *memd_wire_model_info_put(uint8_t *p, const memd_wire_model_info *r)
{
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->lower_bound);
    p = memd_wire_put_u64(p, r->code_handle);
    p = memd_wire_put_u64(p, r->code_address);
    p = memd_wire_put_u64(p, r->code_bytes);
    p = memd_wire_put_u64(p, r->const_handle);
    p = memd_wire_put_u64(p, r->const_address);
    p = memd_wire_put_u64(p, r->const_bytes);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_u32(p, r->device);
    p = memd_wire_put_u32(p, r->users);
    p = memd_wire_put_u32(p, r->ntensors);
    p = memd_wire_put_u32(p, r->instances);
    p = memd_wire_put_u32(p, r->flags);
    p = memd_wire_put_u32(p, 0);
    p = memd_wire_put_str(p, r->name, sizeof r->name);
    return memd_wire_put_str(p, r->strategy, sizeof r->strategy);
}

int memd_wire_model_info_get(const uint8_t *p, size_t len, memd_wire_model_info *r)
{
    if (len < MEMD_WIRE_MODEL_INFO_SIZE)
        return -EBADMSG;
    r->model_id = memd_wire_u64(p);
    r->plan_id = memd_wire_u64(p + 8);
    r->arena = memd_wire_u64(p + 16);
    r->lower_bound = memd_wire_u64(p + 24);
    r->code_handle = memd_wire_u64(p + 32);
    r->code_address = memd_wire_u64(p + 40);
    r->code_bytes = memd_wire_u64(p + 48);
    r->const_handle = memd_wire_u64(p + 56);
    r->const_address = memd_wire_u64(p + 64);
    r->const_bytes = memd_wire_u64(p + 72);
    r->created_ns = memd_wire_u64(p + 80);
    r->device = memd_wire_u32(p + 88);
    r->users = memd_wire_u32(p + 92);
    r->ntensors = memd_wire_u32(p + 96);
    r->instances = memd_wire_u32(p + 100);
    r->flags = memd_wire_u32(p + 104);
    r->pad = 0;
    if (r->flags & ~(uint32_t)MEMD_MODEL_I_KNOWN)
        return -EINVAL;
    int rc = memd_wire_get_str(p + 112, r->name, sizeof r->name);
    if (rc < 0)
        return rc;
    return memd_wire_get_str(p + 112 + sizeof r->name, r->strategy, sizeof r->strategy);
}

uint8_t *memd_wire_tensor_info_put(uint8_t *p, const memd_wire_tensor_info *r)
{
    p = memd_wire_put_u64(p, r->value);
    p = memd_wire_put_u64(p, r->size);
    *p++ = r->role;
    *p++ = 0;
    p = memd_wire_put_u16(p, 0);
    return memd_wire_put_u32(p, r->alias_of);
}

int memd_wire_tensor_info_get(const uint8_t *p, size_t len, memd_wire_tensor_info *r)
{
    if (len < MEMD_WIRE_TENSOR_INFO_SIZE)
        return -EBADMSG;
    r->value = memd_wire_u64(p);
    r->size = memd_wire_u64(p + 8);
    r->role = p[16];
    r->pad0 = 0;
    r->pad1 = 0;
    r->alias_of = memd_wire_u32(p + 20);
    return r->role >= MEMD_TENSOR_ROLE_COUNT ? -EINVAL : 0;
}

uint8_t *memd_wire_ref_put(uint8_t *p, const memd_wire_ref *r)
{
    p = memd_wire_put_u64(p, r->id);
    p = memd_wire_put_u32(p, r->flags);
    return memd_wire_put_u32(p, 0);
}

/* Flags are checked by the opcode's handler: each opcode knows its own. */
int memd_wire_ref_get(const uint8_t *p, size_t len, memd_wire_ref *r)
{
    if (len < MEMD_WIRE_REF_SIZE)
        return -EBADMSG;
    r->id = memd_wire_u64(p);
    r->flags = memd_wire_u32(p + 8);
    r->pad = 0;
    return 0;
}

uint8_t *memd_wire_instance_info_put(uint8_t *p, const memd_wire_instance_info *r)
{
    p = memd_wire_put_u64(p, r->instance_id);
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->arena_handle);
    p = memd_wire_put_u64(p, r->arena_address);
    p = memd_wire_put_u64(p, r->arena_bytes);
    p = memd_wire_put_u32(p, r->ntensors);
    return memd_wire_put_u32(p, r->flags);
}

int memd_wire_instance_info_get(const uint8_t *p, size_t len, memd_wire_instance_info *r)
{
    if (len < MEMD_WIRE_INSTANCE_INFO_SIZE)
        return -EBADMSG;
    r->instance_id = memd_wire_u64(p);
    r->model_id = memd_wire_u64(p + 8);
    r->arena_handle = memd_wire_u64(p + 16);
    r->arena_address = memd_wire_u64(p + 24);
    r->arena_bytes = memd_wire_u64(p + 32);
    r->ntensors = memd_wire_u32(p + 40);
    r->flags = memd_wire_u32(p + 44);
    return (r->flags & ~(uint32_t)MEMD_INST_I_REUSED) ? -EINVAL : 0;
}

uint8_t *memd_wire_tensor_addr_put(uint8_t *p, const memd_wire_tensor_addr *r)
{
    p = memd_wire_put_u64(p, r->address);
    return memd_wire_put_u64(p, r->handle);
}

int memd_wire_tensor_addr_get(const uint8_t *p, size_t len, memd_wire_tensor_addr *r)
{
    if (len < MEMD_WIRE_TENSOR_ADDR_SIZE)
        return -EBADMSG;
    r->address = memd_wire_u64(p);
    r->handle = memd_wire_u64(p + 8);
    return 0;
}

uint8_t *memd_wire_model_rec_put(uint8_t *p, const memd_wire_model_rec *r)
{
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->plan_id);
    p = memd_wire_put_u64(p, r->code_handle);
    p = memd_wire_put_u64(p, r->const_handle);
    p = memd_wire_put_u64(p, r->code_bytes);
    p = memd_wire_put_u64(p, r->const_bytes);
    p = memd_wire_put_u64(p, r->arena);
    p = memd_wire_put_u64(p, r->created_ns);
    p = memd_wire_put_u32(p, r->device);
    p = memd_wire_put_u32(p, r->users);
    p = memd_wire_put_u32(p, r->ntensors);
    p = memd_wire_put_u32(p, r->instances);
    return memd_wire_put_str(p, r->name, sizeof r->name);
}

int memd_wire_model_rec_get(const uint8_t *p, size_t len, memd_wire_model_rec *r)
{
    if (len < MEMD_WIRE_MODEL_REC_SIZE)
        return -EBADMSG;
    r->model_id = memd_wire_u64(p);
    r->plan_id = memd_wire_u64(p + 8);
    r->code_handle = memd_wire_u64(p + 16);
    r->const_handle = memd_wire_u64(p + 24);
    r->code_bytes = memd_wire_u64(p + 32);
    r->const_bytes = memd_wire_u64(p + 40);
    r->arena = memd_wire_u64(p + 48);
    r->created_ns = memd_wire_u64(p + 56);
    r->device = memd_wire_u32(p + 64);
    r->users = memd_wire_u32(p + 68);
    r->ntensors = memd_wire_u32(p + 72);
    r->instances = memd_wire_u32(p + 76);
    return memd_wire_get_str(p + 80, r->name, sizeof r->name);
}

uint8_t *memd_wire_instance_rec_put(uint8_t *p, const memd_wire_instance_rec *r)
{
    p = memd_wire_put_u64(p, r->instance_id);
    p = memd_wire_put_u64(p, r->model_id);
    p = memd_wire_put_u64(p, r->arena_handle);
    p = memd_wire_put_u64(p, r->arena_address);
    p = memd_wire_put_u64(p, r->arena_bytes);
    p = memd_wire_put_u64(p, r->placeholder_bytes);
    p = memd_wire_put_u32(p, r->session_id);
    p = memd_wire_put_u32(p, r->pid);
    p = memd_wire_put_u32(p, r->placeholders);
    return memd_wire_put_u32(p, r->busy);
}

int memd_wire_instance_rec_get(const uint8_t *p, size_t len, memd_wire_instance_rec *r)
{
    if (len < MEMD_WIRE_INSTANCE_REC_SIZE)
        return -EBADMSG;
    r->instance_id = memd_wire_u64(p);
    r->model_id = memd_wire_u64(p + 8);
    r->arena_handle = memd_wire_u64(p + 16);
    r->arena_address = memd_wire_u64(p + 24);
    r->arena_bytes = memd_wire_u64(p + 32);
    r->placeholder_bytes = memd_wire_u64(p + 40);
    r->session_id = memd_wire_u32(p + 48);
    r->pid = memd_wire_u32(p + 52);
    r->placeholders = memd_wire_u32(p + 56);
    r->busy = memd_wire_u32(p + 60);
    return r->busy > 1 ? -EINVAL : 0;
}
