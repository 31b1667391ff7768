/* memd daemon — request dispatch: decoded request -> engine call -> reply.
 *
 * memd_dispatch looks the opcode up in the opcode table (proto/opcodes.h), rejects a
 * payload whose length does not have the opcode's shape (and an admin-only opcode from
 * a session that is not admin), then runs the opcode's handler. So a handler may read
 * the fixed fields of its shape without checking the length again.
 *
 * Handlers append exactly one reply frame to `out` and return as reply.h says (0,
 * MEMD_CLOSE, MEMD_PENDING or a negative errno). Whether a request can change what the
 * state store records: memd_wire_opcode_mutating (opcodes.h). */
#ifndef MEMD_DAEMON_DISPATCH_H
#define MEMD_DAEMON_DISPATCH_H

#include "buf.h"
#include "reply.h"
#include "state.h"

typedef int (*memd_handler)(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                            const uint8_t *p, memd_buf *out);
/* Every opcode's handler, memd_op_<name> (dispatch_table.c, generated from
 * proto/memd.toml); NULL for numbers that are not opcodes. */
extern const memd_handler memd_handlers[MEMD_OP_OPCODE_COUNT];

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out);

/* The handlers of this folder (the models' are in model.h). */
int memd_op_hello(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out);
int memd_op_alloc(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out);
int memd_op_free(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 memd_buf *out);
int memd_op_query(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out);
int memd_op_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                  memd_buf *out);
int memd_op_alloc_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out);
int memd_op_bank_addrs(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out);
int memd_op_subdev_define(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                          const uint8_t *p, memd_buf *out);
int memd_op_subdev_bind(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out);
int memd_op_alloc_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out);
int memd_op_free_batch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out);
/* ALLOC_BATCH_BANKS (batch_banks.c): ALLOC_BATCH whose elements may have bank sets. */
int memd_op_alloc_batch_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                              const uint8_t *p, memd_buf *out);
int memd_op_pool_report(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out);
int memd_op_dump(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 memd_buf *out);
/* EVENTS (events.c): the event log, the session's own uid's or, for an admin, all. With
 * MEMD_EVENTS_F_WAIT and nothing to give, no reply: the session is parked (s->ewait). */
int memd_op_events(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                   memd_buf *out);
/* Answers s's parked EVENTS request into out when an event came for it, or with an empty
 * page once now_ms reached its deadline (UINT64_MAX: at once). true if it answered. */
bool memd_events_answer_parked(memd_state *st, memd_session *s, uint64_t now_ms, memd_buf *out);

#endif
