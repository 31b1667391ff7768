/* memd daemon — plans and models in the service: the plan cache, chunked document
 * uploads, model loads (shared code + constants), instances (arena + placeholders).
 *
 * Everything a session creates here is made of ordinary allocation records (alloc.c):
 * ownership, release on disconnect, quotas, limits and persistence apply to them as to
 * any other allocation. The records here only remember which allocations form which
 * model or instance; they keep handles, never pointers, to allocation records.
 *
 * Planning runs off the event loop: a PLAN request that misses the cache becomes a job
 * with a private copy of the problem; a runner (model_work.c: uv_queue_work) executes it
 * on a worker thread with the pure engine and completes it on the loop, which appends
 * the reply. Meanwhile the session's later frames wait (replies stay in order) while
 * every other session is served. Without a runner (unit tests) jobs run inline. */
#ifndef MEMD_DAEMON_MODEL_H
#define MEMD_DAEMON_MODEL_H

#include <stdbool.h>

#include "buf.h"
#include "state.h"

typedef struct memd_model_job memd_model_job;

/* Handlers (dispatch.h conventions; PLAN may return MEMD_PENDING). */
int memd_op_upload(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                   const uint8_t *p, memd_buf *out);
int memd_op_plan(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                 const uint8_t *p, memd_buf *out);
int memd_op_model_load(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out);
int memd_op_model_unload(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                         const uint8_t *p, memd_buf *out);
int memd_op_model_info(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out);
int memd_op_instance_create(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                            const uint8_t *p, memd_buf *out);
int memd_op_instance_release(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                             const uint8_t *p, memd_buf *out);

/* Shared names of the form "model:NAME:code|const" hold models' code and constants. A
 * plain ALLOC may not take one (it could squat on a model's name with another size and
 * make every later load of that model fail): 0, or -EPERM with err filled. */
#define MEMD_MODEL_NAME_PREFIX MEMD_GLOBAL_NAME_PREFIX /* state.h: global names */
int memd_model_check_alloc_name(const char *name, memd_wire_error *err);

/* True while s waits for a planning job: its next frames must not be dispatched. */
bool memd_models_busy(const memd_state *st, const memd_session *s);

/* The model layer listens to core (hooks.h) from its first use: a session that goes
 * away loses its instances, model loads and uploads before its other holds, and
 * memd_state_fini frees the plan cache and everything else. Its plans, models and
 * instances are records the state store keeps (model_persist.c); memd_models_init
 * makes the layer listen from the start, so that it is there to take them back when
 * the store restores (call it before memd_store_open). 0 or -ENOMEM. */
int memd_models_init(memd_state *st);

/* Whether handle is part of a loaded model or an instance: its holders release such
 * buffers with MODEL_UNLOAD / INSTANCE_RELEASE, not FREE (an admin that does not hold
 * one may still reclaim it). */
bool memd_models_managed(const memd_state *st, uint64_t handle);

/* DUMP records (MEMD_DUMP_F_MODELS): plans, then the models and instances s may see. */
int memd_models_dump(const memd_state *st, const memd_session *s, memd_buf *out);

/* The asynchronous runner: run() must arrange for memd_model_job_execute(job) on a
 * worker and then memd_model_job_complete() on the loop; it returns 0, or a negative
 * errno when it cannot (the job then runs inline). */
typedef int (*memd_models_runner)(void *ctx, memd_model_job *job);
int memd_models_set_runner(memd_state *st, memd_models_runner run, void *ctx);

/* Worker side: pure planning/validation on the job's private data (no daemon state). */
void memd_model_job_execute(memd_model_job *job);
/* Loop side: caches the result, appends the reply for the job's session if it is still
 * there (*resume = that session, else NULL) and frees the job. 0, or -ENOMEM when the
 * reply could not be built (the caller closes the session's connection). */
int memd_model_job_complete(memd_state *st, memd_model_job *job, memd_session **resume);

#endif
