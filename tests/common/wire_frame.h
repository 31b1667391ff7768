/* memd tests — one request frame in a buffer, for the tests that build frames by hand
 * (the dispatch unit tests and the raw-socket integration tests). Header-only: the
 * codec it needs is linked by those suites, not by memd-test-common. */
#ifndef MEMD_TESTS_WIRE_FRAME_H
#define MEMD_TESTS_WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "wire.h"

/* Writes a version-1 header and len bytes of payload to buf; returns the frame's size. */
static inline size_t frame(uint8_t *buf, uint16_t op, uint64_t id, const void *payload,
                           uint32_t len)
{
    memd_wire_hdr h = {.magic = MEMD_PROTO_MAGIC, .version = 1, .opcode = op, .id = id,
                       .len = len};
    memd_wire_hdr_put(buf, &h);
    if (len)
        memcpy(buf + MEMD_HDR_SIZE, payload, len);
    return MEMD_HDR_SIZE + len;
}

#endif
