/* memd daemon — request dispatch: decoded request -> engine call -> reply.
 *
 * Handlers append exactly one reply frame to `out` and return as reply.h says (0,
 * MEMD_CLOSE, MEMD_PENDING or a negative errno). */
#ifndef MEMD_DAEMON_DISPATCH_H
#define MEMD_DAEMON_DISPATCH_H

#include "buf.h"
#include "reply.h"
#include "state.h"

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out);

/* Handlers in their own files. */
int memd_op_alloc_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out);
int memd_op_free_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out);
int memd_op_dump(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 memd_buf *out);

#endif
