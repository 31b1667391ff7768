/* memd daemon — request dispatch: decoded request -> engine call -> reply.
 *
 * Each handler appends exactly one reply frame to `out`. Return values:
 *   0               continue with the next frame
 *   MEMD_CLOSE      the frame was malformed (or the peer cannot be served): the error
 *                   reply is queued; close the connection once it is flushed
 *   MEMD_PENDING    the reply comes later (a planning job, model.h): dispatch no more
 *                   frames of this session until it is there
 *   negative errno  the reply could not be built (daemon out of memory): close now */
#ifndef MEMD_DAEMON_DISPATCH_H
#define MEMD_DAEMON_DISPATCH_H

#include <stdbool.h>

#include "buf.h"
#include "state.h"

#define MEMD_CLOSE 1
#define MEMD_PENDING 2

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out);

/* Processes every complete frame in in[0, len): stops at a partial frame, after a frame
 * that closes the connection, or once out holds more than out_high unsent bytes
 * (backpressure: the rest waits until the client reads). *consumed is the number of
 * bytes of whole frames handled. Returns as memd_dispatch. */
int memd_frames_process(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                        memd_buf *out, size_t out_high, size_t *consumed);

/* The connection ended (EOF) with len > 0 bytes of an unfinished frame in in: queues an
 * error reply saying so. */
void memd_frames_truncated(memd_state *st, const uint8_t *in, size_t len, memd_buf *out);

/* Handlers in their own files. */
int memd_dispatch_alloc_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                              const uint8_t *p, memd_buf *out);
int memd_dispatch_free_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                             const uint8_t *p, memd_buf *out);
int memd_dispatch_dump(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out);

/* Shared by the handlers: an error reply for h; close_after says whether the frame was
 * malformed (counted as a protocol error, returns MEMD_CLOSE) or not (returns 0). */
int memd_dispatch_fail(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                       memd_wire_error *err, bool close_after);

/* Whether s may see/free a (it holds it, or is admin). */
bool memd_dispatch_may_access(const memd_session *s, const memd_alloc *a);

#endif
