/* memd opcode table: one row per request opcode, generated from proto/memd.toml.
 *
 * The daemon judges every request's payload length by its row before decoding it, asks
 * it whether a request may change what the state store records, and prints its name;
 * libmemclient prints the names. Adding an opcode means adding it to proto/memd.toml
 * and writing its handler, memd_op_<name> (daemon/handlers/): the build generates the
 * row and the dispatch table's entry. */
#ifndef MEMD_PROTO_OPCODES_H
#define MEMD_PROTO_OPCODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memd/protocol.h"

/* How a request payload's length is judged. */
typedef enum memd_wire_shape {
    MEMD_WIRE_SHAPE_FIXED = 1, /* exactly len bytes (or len_v1, when not 0) */
    MEMD_WIRE_SHAPE_MIN,       /* a len-byte (or len_v1) record, then any data bytes */
    MEMD_WIRE_SHAPE_COUNT,     /* u32 count, u32 0, then count records of len bytes */
    MEMD_WIRE_SHAPE_DOC,       /* u64 upload id; a document follows only when it is 0 */
} memd_wire_shape;

typedef struct memd_wire_op {
    const char *name;
    memd_wire_shape shape;
    uint32_t len;     /* see shape; DOC: MEMD_WIRE_DOC_SIZE */
    uint32_t len_v1;  /* FIXED, MIN: an older (shorter) record still accepted, else 0 */
    bool mutating;    /* may change the allocation map or what the state store records */
    bool admin_only;  /* refused to sessions that are not admin */
    bool batch;       /* many requests in one, all or nothing */
} memd_wire_op;

/* The rows, by opcode (wire_gen.c); an unused number has a NULL name. */
extern const memd_wire_op memd_wire_ops[MEMD_OP_OPCODE_COUNT];

/* The row of opcode, NULL when it is not one. */
const memd_wire_op *memd_wire_op_of(uint32_t opcode);
bool memd_wire_opcode_valid(uint32_t opcode);
const char *memd_wire_opcode_name(uint32_t opcode); /* "?" for unknown */
/* False for an unknown opcode: it gets an error reply and changes nothing. */
bool memd_wire_opcode_mutating(uint32_t opcode);

/* Whether len payload bytes at p have the shape of opcode's requests: 0, -EBADMSG when
 * not, -EBADRQC for an unknown opcode. Only lengths (and a COUNT's count, a DOC's id)
 * are looked at: the records themselves are the decoders' to judge. */
int memd_wire_op_check_len(uint32_t opcode, const uint8_t *p, size_t len);

#endif
