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
#include "convert.h"
#include "model.h"
#include "reply.h"
#include "state.h"

typedef int (*memd_handler)(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                            const uint8_t *p, memd_buf *out);
/* Every opcode's handler, memd_op_<name> (dispatch_table.c, generated from
 * proto/memd.toml); NULL for numbers that are not opcodes. */
extern const memd_handler memd_handlers[MEMD_OP_OPCODE_COUNT];

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out);

/* Every opcode's handler, memd_op_<name> (handlers_gen.h). EVENTS (events.c) with
 * MEMD_EVENTS_F_WAIT and nothing to give sends no reply: the session is parked
 * (s->ewait). PLAN (plan.c) may return MEMD_PENDING while the planner works. */
#include "handlers_gen.h"

/* revoked.c: s's queued revocation notices as one REVOKED frame (request id 0), sent
 * before its next reply; the queue empties. 0, or -ENOMEM (they stay queued). */
int memd_reply_notices(memd_session *s, memd_buf *out);

/* Loop side of a planning job (model.h): caches its result, appends the reply for the
 * job's session if it is still there (*resume = that session, else NULL) and frees the
 * job. 0, or -ENOMEM when the reply could not be built (close the connection). */
int memd_model_job_complete(memd_state *st, memd_model_job *job, memd_session **resume);
/* The MODEL_LOAD / MODEL_INFO / MODEL_WAIT reply for request (op, id): m's info record
 * (flags: MEMD_MODEL_I_NEW or 0) and its tensors. 0 or -ENOMEM. */
int memd_model_reply_info(memd_state *st, uint16_t op, uint64_t id, memd_buf *out,
                          const memd_model *m, uint32_t flags);
/* Answers s's parked MODEL_WAIT into out when it has its answer (model_ready.c: ready,
 * the fill job handed to it, or now_ms past its deadline). true if it answered. */
bool memd_model_wait_answer(memd_state *st, memd_session *s, uint64_t now_ms, memd_buf *out);
/* DUMP records of the cgroup limits (MEMD_DUMP_F_LIMITS) and the refusals per device
 * (MEMD_DUMP_F_FAILURES; of device index dev, or all for -1): dump_limits.c. */
int memd_dump_limits(const memd_state *st, int dev, uint32_t flags, memd_buf *out);
/* DUMP records (MEMD_DUMP_F_MODELS, model_dump.c): plans, then the models and instances
 * s may see. */
int memd_models_dump(const memd_state *st, const memd_session *s, memd_buf *out);

/* Answers s's parked EVENTS request into out when an event came for it, or with an empty
 * page once now_ms reached its deadline (UINT64_MAX: at once). true if it answered. */
bool memd_events_answer_parked(memd_state *st, memd_session *s, uint64_t now_ms, memd_buf *out);

#endif
