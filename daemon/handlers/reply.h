/* memd daemon — appending reply frames to a session's output buffer. */
#ifndef MEMD_DAEMON_REPLY_H
#define MEMD_DAEMON_REPLY_H

#include <stdbool.h>

#include "buf.h"
#include "error.h"
#include "memd/protocol.h"

typedef struct memd_state memd_state;

/* What a request handler returns (handlers append exactly one reply frame to out):
 *   0               continue with the next frame
 *   MEMD_CLOSE      the frame was malformed (or the peer cannot be served): the error
 *                   reply is queued; close the connection once it is flushed
 *   MEMD_PENDING    the reply comes later (a planning job, model.h): dispatch no more
 *                   frames of this session until it is there
 *   negative errno  the reply could not be built (daemon out of memory): close now */
#define MEMD_CLOSE 1
#define MEMD_PENDING 2
/*   MEMD_DEFER      no reply yet: the reply would not fit st->reply_room; the frame stays
 *                   unread until the session's unsent replies drain (only while there
 *                   are some, so it cannot wait forever) */
#define MEMD_DEFER 3

/* Bytes of unsent replies a session may have (config max_reply_backlog, default 4 MiB):
 * reading stops past it, and no single reply is built larger. */
size_t memd_reply_backlog(const memd_state *st);

/* Appends a success header for (op, id) with a payload of len bytes and returns the
 * payload to fill, or NULL if the buffer cannot grow. */
uint8_t *memd_reply_begin(memd_buf *out, uint16_t op, uint64_t id, uint32_t len);

/* Appends an error reply whose payload is *err converted to the wire (status: its code);
 * appended: the whole record, else the 248 bytes of before post-mortems (a client that did
 * not ask for it in its HELLO takes only those). 0 or -ENOMEM. */
int memd_reply_error(memd_buf *out, uint16_t op, uint64_t id, const memd_error *err,
                     bool appended);

/* Rewrites the payload length of the header at out->data + hdr_off to cover everything
 * appended after it (replies whose size is known only at the end, like DUMP). */
void memd_reply_patch_len(memd_buf *out, size_t hdr_off);

/* An error reply for h; close_after says whether the frame was malformed (counted as a
 * protocol error, returns MEMD_CLOSE) or not (returns 0). -ENOMEM if it cannot be
 * queued. */
int memd_reply_fail(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                    const memd_error *err, bool close_after);

/* Appends a DUMP record's tag and room for the record; NULL if out cannot grow. */
uint8_t *memd_dump_rec(memd_buf *out, uint32_t tag);

/* The reply of a request whose success carries nothing: rc < 0, err's error reply (as
 * memd_reply_fail, not closing); else an empty success. */
int memd_reply_done(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                    const memd_error *err, int rc);

/* A domain call's failure rc: the error reply when err says why (err->code set), else
 * rc (memory ran short before anything could be said: close the connection). */
int memd_reply_fail_said(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                         const memd_error *err, int rc);

#endif
