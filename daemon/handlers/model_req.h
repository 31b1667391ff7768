/* memd daemon — the model handlers' requests (model.c, instance.c, plan.c): decoded
 * once, refused with one error reply. */
#ifndef MEMD_DAEMON_MODEL_REQ_H
#define MEMD_DAEMON_MODEL_REQ_H

#include "dispatch.h"
#include "model_internal.h"

/* A model-layer request as the handlers decode it: its reference (MODEL_UNLOAD,
 * MODEL_INFO, INSTANCE_CREATE, INSTANCE_RELEASE) or document (PLAN, MODEL_LOAD), the
 * error the model layer fills (reset), and, when the request was refused, the handler's
 * return value (its error reply queued). */
typedef struct memd_model_req {
    memd_wire_ref ref;
    memd_doc doc;
    memd_error err;
    int ret;
} memd_model_req;
/* Decodes the reference into q->ref, refusing flags outside known_flags: 0, or a negative
 * errno with q->ret set. */
int memd_model_get_ref(memd_state *st, const memd_wire_hdr *h, const uint8_t *p, memd_buf *out,
                       uint32_t known_flags, memd_model_req *q);
/* Reads the model document into q->doc (memd_models_doc_done frees it), likewise. */
int memd_model_get_doc(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out, memd_model_req *q);
/* The model layer's calls that take a reference, one flag and the retry bit, and answer
 * with an empty reply: MODEL_UNLOAD, INSTANCE_RELEASE. */
typedef int (*memd_model_ref_fn)(memd_state *st, memd_session *s, uint64_t id, bool flag,
                                 bool retry, memd_error *err);
/* Decodes the reference (flag: the one flag it may carry), calls fn, queues the reply. */
int memd_model_ref_call(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out, uint32_t flag, memd_model_ref_fn fn);

#endif
