/* memd daemon — the error reply to a malformed request. */
#ifndef MEMD_DAEMON_MALFORMED_H
#define MEMD_DAEMON_MALFORMED_H

#include "buf.h"
#include "memd/protocol.h"
#include "state.h"

/* Queues the error reply (status rc) to h, a request that does not decode, and returns
 * MEMD_CLOSE (-ENOMEM if it cannot be queued). The message names the opcode, the payload
 * length and why: for -EBADMSG the shape the opcode table expects, otherwise a field out
 * of range or a string without its NUL. */
int memd_malformed(memd_state *st, const memd_wire_hdr *h, memd_buf *out, int rc);

#endif
