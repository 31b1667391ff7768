/* memd opcode table: see opcodes.h. */
#include "opcodes.h"

#include <errno.h>

#include "wire.h"

static const memd_wire_op ops[MEMD_OP_OPCODE_COUNT] = {
    /* A HELLO records the session in the state store; a reclaim takes an orphan's
     * allocations over. */
    [MEMD_OP_HELLO] = {"HELLO", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_HELLO_SIZE,
                       MEMD_WIRE_HELLO_V1_SIZE, true, false},
    [MEMD_OP_ALLOC] = {"ALLOC", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_ALLOC_REQ_SIZE, 0, true, false},
    [MEMD_OP_ALLOC_BATCH] = {"ALLOC_BATCH", MEMD_WIRE_SHAPE_COUNT, MEMD_WIRE_ALLOC_REQ_SIZE, 0,
                             true, false},
    [MEMD_OP_FREE] = {"FREE", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_HANDLE_SIZE, 0, true, false},
    [MEMD_OP_FREE_BATCH] = {"FREE_BATCH", MEMD_WIRE_SHAPE_COUNT, MEMD_WIRE_HANDLE_SIZE, 0, true,
                            false},
    [MEMD_OP_QUERY] = {"QUERY", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_HANDLE_SIZE, 0, false, false},
    [MEMD_OP_BANKS] = {"BANKS", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_HANDLE_SIZE, 0, false, false},
    [MEMD_OP_DUMP] = {"DUMP", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_DUMP_REQ_SIZE,
                      MEMD_WIRE_DUMP_REQ_V1_SIZE, false, false},
    /* Uploads and the plan cache live in the daemon's memory only: no device memory, no
     * store record. */
    [MEMD_OP_UPLOAD] = {"UPLOAD", MEMD_WIRE_SHAPE_MIN, MEMD_WIRE_UPLOAD_SIZE, 0, false, false},
    [MEMD_OP_PLAN] = {"PLAN", MEMD_WIRE_SHAPE_DOC, MEMD_WIRE_DOC_SIZE, 0, false, false},
    [MEMD_OP_MODEL_LOAD] = {"MODEL_LOAD", MEMD_WIRE_SHAPE_DOC, MEMD_WIRE_DOC_SIZE, 0, true,
                            false},
    [MEMD_OP_MODEL_UNLOAD] = {"MODEL_UNLOAD", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_REF_SIZE, 0,
                              true, false},
    [MEMD_OP_MODEL_INFO] = {"MODEL_INFO", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_REF_SIZE, 0, false,
                            false},
    [MEMD_OP_INSTANCE_CREATE] = {"INSTANCE_CREATE", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_REF_SIZE,
                                 0, true, false},
    /* With MEMD_INST_F_FREE it frees the instance's buffers. */
    [MEMD_OP_INSTANCE_RELEASE] = {"INSTANCE_RELEASE", MEMD_WIRE_SHAPE_FIXED,
                                  MEMD_WIRE_REF_SIZE, 0, true, false},
    /* Everyone may read the event log; the handler shows others only their uid's. */
    [MEMD_OP_EVENTS] = {"EVENTS", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_EVENTS_REQ_SIZE, 0, false,
                        false},
    /* Pool books are visibility only, not in the state store. */
    [MEMD_OP_POOL_REPORT] = {"POOL_REPORT", MEMD_WIRE_SHAPE_COUNT, MEMD_WIRE_POOL_OP_SIZE, 0,
                             false, false},
    /* The bank set's length is checked by its decoder (count x u32 after the header). */
    [MEMD_OP_ALLOC_BANKS] = {"ALLOC_BANKS", MEMD_WIRE_SHAPE_MIN,
                             MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE, 0, true, false},
    [MEMD_OP_BANK_ADDRS] = {"BANK_ADDRS", MEMD_WIRE_SHAPE_FIXED, MEMD_WIRE_HANDLE_SIZE, 0, false,
                            false},
    /* A defined sub-device is a state store record (core's, MEMD_RECORD_SUBDEV). */
    [MEMD_OP_SUBDEV_DEFINE] = {"SUBDEV_DEFINE", MEMD_WIRE_SHAPE_MIN, MEMD_WIRE_SUBDEV_DEF_SIZE, 0,
                               true, true},
    /* A binding by request is a state store record (core's, MEMD_RECORD_SUBDEV_BIND). */
    [MEMD_OP_SUBDEV_BIND] = {"SUBDEV_BIND", MEMD_WIRE_SHAPE_FIXED, MEMD_NAME_MAX, 0, true,
                             false},
    /* Elements of varying size (their bank sets): the handler walks and checks them all
     * before it allocates anything. */
    [MEMD_OP_ALLOC_BATCH_BANKS] = {"ALLOC_BATCH_BANKS", MEMD_WIRE_SHAPE_MIN,
                                   MEMD_WIRE_COUNT_SIZE, 0, true, false},
};

const memd_wire_op *memd_wire_op_of(uint32_t op)
{
    return op < MEMD_OP_OPCODE_COUNT && ops[op].name ? &ops[op] : NULL;
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
        return len >= o->len ? 0 : -EBADMSG;
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
