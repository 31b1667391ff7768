/* memd opcode table: see opcodes.h. */
#include "opcodes.h"

#include <errno.h>

#include "wire.h"

const memd_wire_op *memd_wire_op_of(uint32_t op)
{
    return op < MEMD_OP_OPCODE_COUNT && memd_wire_ops[op].name ? &memd_wire_ops[op] : NULL;
}

bool memd_wire_opcode_valid(uint32_t op)
{
    return memd_wire_op_of(op) != NULL;
}

const char *memd_wire_opcode_name(uint32_t op)
{
    const memd_wire_op *o = memd_wire_op_of(op);
    return o ? o->name : "?";
}

bool memd_wire_opcode_mutating(uint32_t op)
{
    const memd_wire_op *o = memd_wire_op_of(op);
    return o && o->mutating;
}

int memd_wire_op_check_len(uint32_t op, const uint8_t *p, size_t len)
{
    const memd_wire_op *o = memd_wire_op_of(op);
    if (!o)
        return -EBADRQC;
    uint32_t n;
    switch (o->shape) {
    case MEMD_WIRE_SHAPE_FIXED:
        return len == o->len || (o->len_v1 && len == o->len_v1) ? 0 : -EBADMSG;
    case MEMD_WIRE_SHAPE_MIN:
        return len >= (o->len_v1 ? o->len_v1 : o->len) ? 0 : -EBADMSG; /* the rest: its codec */
    case MEMD_WIRE_SHAPE_COUNT:
        return memd_wire_count_get(p, len, o->len, UINT32_MAX, &n);
    case MEMD_WIRE_SHAPE_DOC:
        /* A named upload is the document: nothing may follow its id. */
        if (len < MEMD_WIRE_DOC_SIZE)
            return -EBADMSG;
        return memd_wire_u64(p) == 0 || len == MEMD_WIRE_DOC_SIZE ? 0 : -EBADMSG;
    }
    return -EBADMSG;
}
