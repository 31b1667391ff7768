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

#include "error.h"
#include "state.h"

typedef struct memd_model_job memd_model_job;

/* Shared names of the form "model:NAME:code|const" hold models' code and constants. A
 * plain ALLOC may not take one (it could squat on a model's name with another size and
 * make every later load of that model fail): 0, or -EPERM with err filled.
 * Model names are scoped as shared names are (memd.yaml shared_names): per uid, a model
 * is (device, uid of its first loader, name), and its buffers' names are keyed by the
 * same uid; with global names, (device, name) for every uid. */
#define MEMD_MODEL_NAME_PREFIX "model:"
int memd_model_check_alloc_name(const char *name, memd_error *err);

/* True while s waits for a planning job or a parked MODEL_WAIT: its next frames must not
 * be dispatched. */
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


/* The asynchronous runner: run() must arrange for memd_model_job_execute(job) on a
 * worker and then memd_model_job_complete() on the loop; it returns 0, or a negative
 * errno when it cannot (the job then runs inline). */
typedef int (*memd_models_runner)(void *ctx, memd_model_job *job);
int memd_models_set_runner(memd_state *st, memd_models_runner run, void *ctx);

typedef struct memd_plan_entry memd_plan_entry;
/* Worker side: the job's next stage, pure (decoding, hashing, planning or validating,
 * the reply) on the job's private data and, pinned, its cache entry. */
void memd_model_job_execute(memd_model_job *job);
/* Loop side (the handlers' memd_model_job_complete): after a stage ran. Either queues
 * the next one (MEMD_MODELS_PLAN_QUEUED: complete is called again), or the job is done
 * and off the list: 0 with job->reply the reply's bytes (nothing when job->out is NULL:
 * the session went away), its plan cached; or the job's failure in err (its code
 * returned). The caller then frees it. */
int memd_model_job_step(memd_state *st, memd_model_job *job, memd_error *err);
void memd_model_job_free(memd_model_job *job);

/* The requests' domain calls (the handlers decode and answer). A negative errno comes
 * back with err filled, except -ENOMEM with err->code 0: memory ran short before
 * anything could be said (the handler closes the connection). */
typedef struct memd_model memd_model;
typedef struct memd_instance memd_instance;
typedef struct memd_doc memd_doc;

/* UPLOAD: one part of a document. */
typedef struct memd_upload_part {
    uint64_t upload_id, offset, total;
    const uint8_t *data;
    uint64_t len;
} memd_upload_part;
int memd_models_upload(memd_state *st, memd_session *s, const memd_upload_part *part,
                       memd_error *err);

/* PLAN: the document's problem from the cache or planned, as a job (*job; its reply goes
 * to out once complete, unless the session went away first): QUEUED on a worker, or
 * DONE (no runner) and ready for memd_model_job_step. The document is the job's (an
 * upload's data is taken). The reply is encode's, built on the worker: the whole frame
 * in *out (malloc'd; cap its allocated size), 0 or -ENOMEM. */
enum { MEMD_MODELS_PLAN_QUEUED = 1, MEMD_MODELS_PLAN_DONE };
typedef struct memd_plan_reply {
    uint8_t *data;
    size_t len, cap;
} memd_plan_reply;
typedef int (*memd_plan_reply_fn)(const memd_plan_entry *e, uint16_t op, uint64_t id,
                                  uint32_t flags, memd_plan_reply *out);
struct memd_buf;
int memd_models_plan(memd_state *st, memd_session *s, const memd_doc *doc,
                     struct memd_buf *out, uint16_t op, uint64_t req_id,
                     memd_plan_reply_fn encode, memd_model_job **job, memd_error *err);

/* MODEL_LOAD: the document's model, loaded for s (*fresh: loaded now, not shared). */
int memd_models_load(memd_state *st, memd_session *s, const memd_doc *doc, memd_model **out,
                     bool *fresh, memd_error *err);
/* MODEL_UNLOAD (retry: a resent request, whose first sending may have unloaded it). */
int memd_models_unload(memd_state *st, memd_session *s, uint64_t id, bool force, bool retry,
                       memd_error *err);
/* MODEL_INFO: the model s may see, or NULL with err filled. */
const memd_model *memd_models_info(const memd_state *st, const memd_session *s, uint64_t id,
                                   memd_error *err);
/* INSTANCE_CREATE: an idle instance of s's load of the model, or a new one (*reused says
 * which); a retry gets the one its first sending took (req: the request's id). */
int memd_models_instance_take(memd_state *st, memd_session *s, uint64_t model_id, uint64_t req,
                              bool retry, memd_instance **out, bool *reused, memd_error *err);
/* INSTANCE_RELEASE: back to idle, or freed (free_it). */
/* MODEL_SET_READY: s, the filler, says the constants are written. 0 (also when ready
 * already) or -errno with err. */
int memd_models_set_ready(memd_state *st, memd_session *s, uint64_t id, memd_error *err);
/* MODEL_WAIT (see proto/memd.toml, Model readiness): 1 answered now with *out (*fill:
 * s fills it now), 0 parked (memd_models_wait_poll answers it later), or -errno with err
 * (-ETIMEDOUT: still filling when timeout_ms ran out). now_ms: memd_mono_ms. */
int memd_models_wait(memd_state *st, memd_session *s, uint64_t id, uint32_t timeout_ms,
                     uint64_t req_id, uint64_t now_ms, memd_model **out, bool *fill,
                     memd_error *err);
/* s's parked MODEL_WAIT, if any: 0 it goes on waiting (or none), 1 answer it now with
 * *out and *fill, -errno answer it with err; *req_id is the request's id either way. */
int memd_models_wait_poll(memd_state *st, memd_session *s, uint64_t now_ms, uint64_t *req_id,
                          memd_model **out, bool *fill, memd_error *err);
/* Whether any MODEL_WAIT is parked (the service then looks at them after each event). */
bool memd_models_waiting(const memd_state *st);
/* The model's state for a dump: filling or ready, the filler and the number waiting. */
typedef struct memd_model_readiness {
    bool ready;
    uint32_t filler_session, filler_pid, waiters;
} memd_model_readiness;
void memd_models_readiness(const memd_state *st, const memd_model *m, memd_model_readiness *r);
int memd_models_instance_release(memd_state *st, memd_session *s, uint64_t id, bool free_it,
                                 bool retry, memd_error *err);

#endif
