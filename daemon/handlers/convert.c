/* memd daemon — wire <-> domain (see convert.h). */
#include "convert.h"

#include <string.h>

#include "wire.h"

_Static_assert(MEMD_ERROR_REPLY_MSG == sizeof(((memd_wire_error *)0)->message),
               "error.h's reply message length is the wire's");

void memd_error_to_wire(const memd_error *e, memd_wire_error *w)
{
    *w = (memd_wire_error){
        .status = e->code,
        .detail = e->detail,
        .requested = e->room.requested,
        .size_per_bank = e->room.size_per_bank,
        .allocated = e->room.allocated,
        .free = e->room.free,
        .largest_free = e->room.largest_free,
        .device = e->room.device,
        .cls = e->room.cls,
        .kind = e->room.kind,
        .region = e->room.region,
        .postmortem = e->room.postmortem,
    };
    memd_wire_strset(w->message, sizeof w->message, e->msg);
}

memd_alloc_banks memd_alloc_banks_of(const memd_wire_bankset *w, const uint8_t *raw,
                                     uint32_t *ids, uint64_t *sizes)
{
    const uint8_t *raw_sizes = memd_wire_bankset_sizes(w, raw);
    for (uint32_t i = 0; i < w->count; i++)
        ids[i] = memd_wire_u32(raw + 4 * (size_t)i);
    for (uint32_t i = 0; raw_sizes && i < w->count; i++)
        sizes[i] = memd_wire_u64(raw_sizes + 8 * (size_t)i);
    return (memd_alloc_banks){ids, w->count, (w->flags & MEMD_BANKSET_F_PER_BANK) != 0,
                              (w->flags & MEMD_BANKSET_F_RANGE_LOCKSTEP) != 0,
                              raw_sizes ? sizes : NULL};
}

void memd_pool_op_of(const memd_wire_pool_op *w, memd_pool_op *op)
{
    _Static_assert((int)MEMD_POOL_SUB_ALLOC == (int)MEMD_POOL_OP_ALLOC &&
                   (int)MEMD_POOL_SUB_FREE == (int)MEMD_POOL_OP_FREE &&
                   (int)MEMD_POOL_RESET == (int)MEMD_POOL_OP_RESET,
                   "the pool ops keep the wire's numbers");
    op->pool = w->pool;
    op->offset = w->offset;
    op->size = w->size;
    op->verb = (memd_pool_verb)w->op;
    memcpy(op->name, w->name, sizeof op->name);
}

void memd_alloc_to_buffer(const memd_state *st, const memd_alloc *a, memd_wire_buffer *b)
{
    *b = (memd_wire_buffer){
        .handle = a->handle,
        .address = memd_alloc_address(st, a),
        .size_per_bank = a->pl.size_per_bank,
        .page_size = a->pl.page_size,
        .pitch = memd_alloc_pitch(a),
        .banks = a->pl.banks,
        .refcount = a->refcount,
        .kind = (uint8_t)a->pl.kind,
        .region = a->pl.region,
        .bank_mode = (uint8_t)a->pl.mode,
    };
}

void memd_alloc_to_info(const memd_state *st, const memd_alloc *a, memd_wire_alloc_info *i)
{
    memset(i, 0, sizeof *i);
    memd_alloc_to_buffer(st, a, &i->buf);
    i->device = st->devs[a->dev].spec->id;
    i->cls = a->cls;
    i->scope = a->scope;
    i->flags = a->pool ? MEMD_ALLOC_I_POOL : 0;
    const memd_creator *c = memd_alloc_creator(a);
    i->pid = c->pid;
    i->uid = a->uid;
    i->gid = c->gid;
    i->session_id = c->session_id;
    i->created_ns = a->created_ns;
    memd_wire_strset(i->name, sizeof i->name, memd_alloc_name(a));
    memd_wire_strset(i->comm, sizeof i->comm, c->comm);
}

void memd_bank_addr_to_wire(const memd_bank_addr *b, memd_wire_bank_addr *w)
{
    *w = (memd_wire_bank_addr){.bank = b->bank, .logical_x = b->logical_x,
                               .logical_y = b->logical_y, .noc_x = b->noc_x,
                               .noc_y = b->noc_y, .address = b->address,
                               .absolute = b->absolute};
}

uint8_t *memd_alloc_put_bank_addrs(const memd_state *st, const memd_alloc *a, uint32_t n,
                                   uint8_t *o)
{
    o = memd_wire_count_put(o, n);
    for (uint32_t i = 0; i < n; i++) {
        memd_bank_addr b;
        memd_wire_bank_addr w;
        memd_alloc_bank_at(st, a, i, &b);
        memd_bank_addr_to_wire(&b, &w);
        o = memd_wire_bank_addr_put(o, &w);
    }
    return o;
}

void memd_event_to_wire(const memd_event_rec *e, memd_wire_event *w)
{
    *w = (memd_wire_event){.seq = e->seq, .time_ns = e->time_ns, .type = e->type,
                           .priority = e->priority, .pid = e->pid, .uid = e->uid,
                           .session_id = e->session_id, .device = e->device,
                           .bytes = e->bytes};
    memcpy(w->comm, e->comm, sizeof w->comm);
    memcpy(w->message, e->message, sizeof w->message);
}
