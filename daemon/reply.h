/* memd daemon — appending reply frames to a session's output buffer. */
#ifndef MEMD_DAEMON_REPLY_H
#define MEMD_DAEMON_REPLY_H

#include "buf.h"
#include "memd/protocol.h"

/* Appends a success header for (op, id) with a payload of len bytes and returns the
 * payload to fill, or NULL if the buffer cannot grow. */
uint8_t *memd_reply_begin(memd_buf *out, uint16_t op, uint64_t id, uint32_t len);

/* Appends an error reply whose payload is *err (status taken from it). 0 or -ENOMEM. */
int memd_reply_error(memd_buf *out, uint16_t op, uint64_t id, const memd_wire_error *err);

/* Rewrites the payload length of the header at out->data + hdr_off to cover everything
 * appended after it (replies whose size is known only at the end, like DUMP). */
void memd_reply_patch_len(memd_buf *out, size_t hdr_off);

#endif
