/* memd daemon — PLAN: a plan problem to plan, or a precomputed plan to validate, answered
 * from the cache when the same problem was seen before; otherwise the pure engine plans
 * it within a capped time budget. Everything that costs O(n) runs in a job off the event
 * loop (model.h), in stages: the worker decodes and hashes the document; the loop looks
 * the key up (O(1)) and pins the entry found; the worker compares the problem with it
 * (or plans it), builds the reply and encodes the cache record; the loop caches and
 * answers (the reply's bytes handed over whole). A 1M-buffer plan, first or cached, so
 * costs the loop no more than a few hash lookups and list links. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "model_internal.h"
#include "wire.h"

static uint64_t mono_ns(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the document ---- */

static int decode(const memd_doc *d, memd_wire_plan_req *req, memd_plan_buffer **bufs_out,
                  uint64_t **offsets_out, memd_error *err)
{
    int rc = memd_wire_plan_req_get(d->p, d->len, req);
    if (rc == -EBADMSG)
        return memd_error_set(err, rc, "plan document of %zu bytes is shorter than its %u-byte "
                            "header", d->len, MEMD_WIRE_PLAN_REQ_SIZE);
    if (rc < 0)
        return memd_error_set(err, rc, "plan document: unknown flags 0x%x", req->flags);
    if (req->count > MEMD_PLAN_MAX_BUFFERS)
        return memd_error_set(err, -E2BIG, "plan of %u buffers: at most %u", req->count,
                            MEMD_PLAN_MAX_BUFFERS);
    if ((uint64_t)d->len != MEMD_WIRE_PLAN_REQ_SIZE + (uint64_t)req->count * MEMD_WIRE_PLAN_BUF_SIZE)
        return memd_error_set(err, -EBADMSG, "plan document of %zu bytes does not hold the %u "
                            "buffers its header announces (%llu bytes)", d->len, req->count,
                            (unsigned long long)(MEMD_WIRE_PLAN_REQ_SIZE +
                                                 (uint64_t)req->count * MEMD_WIRE_PLAN_BUF_SIZE));
    uint32_t n = req->count;
    memd_plan_buffer *b = calloc(n ? n : 1, sizeof *b);
    uint64_t *off = calloc(n ? n : 1, sizeof *off);
    if (!b || !off) {
        free(b);
        free(off);
        return memd_error_set(err, -ENOMEM, "daemon out of memory for a plan of %u buffers", n);
    }
    bool pre = req->flags & MEMD_PLAN_F_PRECOMPUTED;
    const uint8_t *p = d->p + MEMD_WIRE_PLAN_REQ_SIZE;
    for (uint32_t i = 0; i < n; i++, p += MEMD_WIRE_PLAN_BUF_SIZE) {
        memd_wire_plan_buf w;
        if (memd_wire_plan_buf_get(p, MEMD_WIRE_PLAN_BUF_SIZE, &w) < 0) {
            free(b);
            free(off);
            return memd_error_set(err, -EINVAL, "plan buffer %u: unknown flags 0x%x", i, w.flags);
        }
        b[i] = (memd_plan_buffer){.lower = w.lower, .upper = w.upper, .size = w.size,
                                  .align = w.align, .offset = w.offset,
                                  .pinned = w.flags & MEMD_PLAN_BUF_F_PINNED};
        if (pre)
            off[i] = w.offset;
    }
    memd_plan_canonical(b, n);
    *bufs_out = b;
    *offsets_out = off;
    return 0;
}

/* The reason a job failed, naming the buffers involved. */
static void job_error(const memd_model_job *j, memd_error *err)
{
    const memd_plan_violation *v = &j->v;
    const char *what = j->precomputed ? "precomputed plan" : "plan problem";
    size_t a = v->a, b = v->b;
    if (j->rc == -ENOMEM) {
        memd_error_set(err, j->rc, "daemon out of memory planning %u buffers", j->n);
    } else if (v->issue == MEMD_PLAN_OVERLAP && a < j->n && b < j->n) {
        const memd_plan_buffer *x = &j->bufs[a], *y = &j->bufs[b];
        memd_error_set(err, -EINVAL,
                     "%s is invalid: buffers %zu and %zu overlap (buffer %zu: time [%llu,%llu) "
                     "bytes [%llu,+%llu); buffer %zu: time [%llu,%llu) bytes [%llu,+%llu))",
                     what, a, b, a, (unsigned long long)x->lower, (unsigned long long)x->upper,
                     (unsigned long long)j->offsets[a], (unsigned long long)x->size, b,
                     (unsigned long long)y->lower, (unsigned long long)y->upper,
                     (unsigned long long)j->offsets[b], (unsigned long long)y->size);
    } else if (v->issue == MEMD_PLAN_PIN_CONFLICT && a < j->n && b < j->n) {
        memd_error_set(err, -EINVAL, "%s is invalid: pinned buffers %zu and %zu overlap "
                     "(offsets %llu and %llu)", what, a, b,
                     (unsigned long long)j->bufs[a].offset, (unsigned long long)j->bufs[b].offset);
    } else if (v->issue != MEMD_PLAN_VALID && a < j->n) {
        const memd_plan_buffer *x = &j->bufs[a];
        memd_error_set(err, j->rc < 0 ? j->rc : -EINVAL,
                     "%s is invalid: buffer %zu: %s (time [%llu,%llu), size %llu, align %llu, "
                     "offset %llu)", what, a, memd_plan_issue_name(v->issue),
                     (unsigned long long)x->lower, (unsigned long long)x->upper,
                     (unsigned long long)x->size, (unsigned long long)x->align,
                     (unsigned long long)(j->precomputed ? j->offsets[a] : x->offset));
    } else {
        memd_error_set(err, j->rc, "%s of %u buffers failed: %s", what, j->n, strerror(-j->rc));
    }
}

/* ---- jobs ---- */

/* Worker: the document into the problem and its key. */
static void job_prepare(memd_model_job *j)
{
    memd_doc d = {.p = j->doc, .len = j->doc_len};
    memd_wire_plan_req req;
    j->rc = decode(&d, &req, &j->bufs, &j->offsets, &j->err);
    free(j->doc);
    j->doc = NULL;
    if (j->rc < 0)
        return;
    j->precomputed = req.flags & MEMD_PLAN_F_PRECOMPUTED;
    j->n = req.count;
    j->seed = req.seed;
    uint32_t ms_budget = req.budget_ms ? req.budget_ms : MEMD_PLAN_BUDGET_DEFAULT_MS;
    if (ms_budget > MEMD_PLAN_BUDGET_MAX_MS)
        ms_budget = MEMD_PLAN_BUDGET_MAX_MS;
    j->budget_ns = (uint64_t)ms_budget * 1000000ull;
    if (memd_plan_key(j->bufs, j->offsets, j->n, j->precomputed, &j->key) < 0)
        j->rc = memd_error_set(&j->err, -ENOMEM, "daemon out of memory hashing a plan");
}

/* Worker: plans (or validates) the job's problem. */
static void job_plan(memd_model_job *j)
{
    uint64_t t0 = mono_ns(NULL);
    j->v = (memd_plan_violation){0};
    j->res = (memd_plan_result){0};
    const char *strategy = "?";
    if (j->n == 0) {
        j->rc = 0;
        j->res.optimal = true;
        strategy = "empty";
    } else if (j->precomputed) {
        uint64_t arena = 0, lb = 0;
        j->rc = memd_plan_check(j->bufs, j->n, &j->v);
        if (j->rc == 0) {
            int r = memd_plan_validate(j->bufs, j->n, j->offsets, &j->v, &arena);
            j->rc = r == 1 ? -EINVAL : r;
        }
        if (j->rc == 0)
            j->rc = memd_plan_lower_bound(j->bufs, j->n, &lb);
        j->res.arena = arena;
        j->res.lower_bound = lb;
        j->res.optimal = j->rc == 0 && arena == lb;
        strategy = "precomputed";
    } else {
        memd_plan_opts o = {.seed = j->seed, .max_iterations = 0, .clock = mono_ns,
                            .budget_ns = j->budget_ns};
        j->rc = memd_plan_solve(j->bufs, j->n, &o, j->offsets, &j->res, &j->v);
        if (j->rc == 0 && j->res.strategy)
            strategy = j->res.strategy;
    }
    memset(j->strategy, 0, sizeof j->strategy);
    strncpy(j->strategy, strategy, sizeof j->strategy - 1);
    j->plan_us = (mono_ns(NULL) - t0) / 1000;
    if (j->rc < 0) {
        job_error(j, &j->err);
        return;
    }
    /* The job's plan as the entry it becomes: the reply, and the cache's record. */
    j->mine = (memd_plan_entry){.id = j->key, .bufs = j->bufs, .offsets = j->offsets,
                                .n = j->n, .precomputed = j->precomputed,
                                .optimal = j->res.optimal, .arena = j->res.arena,
                                .lower_bound = j->res.lower_bound,
                                .iterations = j->res.iterations, .plan_us = j->plan_us,
                                .created_ns = memd_now_ns()};
    memcpy(j->mine.strategy, j->strategy, sizeof j->mine.strategy);
    if (j->n > MEMD_PLAN_RECORD_AT_ONCE)
        return; /* recorded once a model uses it */
    j->rec = malloc(memd_models_plan_rec_len(j->n));
    if (j->rec) /* else the loop encodes it */
        memd_models_plan_rec_encode(&j->mine, j->rec);
}

void memd_model_job_execute(memd_model_job *j)
{
    if (j->stage == MEMD_JOB_PREPARE) {
        job_prepare(j);
        return;
    }
    /* A pinned entry with the same key: the same problem (or, once in 2^64, another). */
    j->cached = j->hit && memd_plan_cache_same(j->hit, j->bufs, j->offsets, j->n,
                                                j->precomputed);
    if (!j->cached)
        job_plan(j);
    if (j->rc == 0 && j->encode(j->cached ? j->hit : &j->mine, j->op, j->req_id,
                                j->cached ? MEMD_PLAN_I_CACHED : 0, &j->reply) < 0)
        j->rc = memd_error_set(&j->err, -ENOMEM, "daemon out of memory for a plan reply");
}

/* Runs the job's next stage on a worker, or here when the runner cannot take it. */
static void job_run(memd_models *ms, memd_model_job *j)
{
    if (!ms->run || ms->run(ms->run_ctx, j) < 0)
        memd_model_job_execute(j);
    else
        j->queued = true;
}

static void job_unlink(memd_models *ms, memd_model_job *j)
{
    for (memd_model_job **pp = &ms->jobs; *pp; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            ms->njobs--;
            break;
        }
    }
}

int memd_model_job_step(memd_state *st, memd_model_job *j, memd_error *err)
{
    memd_models *ms = st->models; /* exists: the job was made through it */
    j->queued = false;
    if (j->stage == MEMD_JOB_PREPARE && j->rc == 0 && j->out) {
        /* The key's entry, pinned while a worker compares the problem with it. */
        j->stage = MEMD_JOB_ANSWER;
        if ((j->hit = memd_plan_cache_get(ms, j->key)))
            j->hit->pins++;
        job_run(ms, j);
        if (j->queued)
            return MEMD_MODELS_PLAN_QUEUED;
    }
    job_unlink(ms, j);
    memd_plan_entry *hit = j->hit;
    j->hit = NULL;
    if (hit)
        hit->pins--;
    if (j->rc < 0) {
        *err = j->err;
        return j->rc;
    }
    if (j->cached) {
        hit->hits++;
        memd_plan_cache_touch(ms, hit);
    } else if (j->stage == MEMD_JOB_ANSWER && !memd_plan_cache_get(ms, j->key)) {
        /* Not cached when another job cached the key meanwhile (the same problem, most
         * likely: comparing would cost the loop O(n)) or out of memory: the plan is
         * still good for this request. A job whose session went away before it was
         * planned is not planned. */
        memd_plan_cache_insert(ms, j);
    }
    memd_plan_cache_trim(ms); /* the plan is in the reply: the cache may let it go */
    return 0;
}

/* ---- the request ---- */

int memd_models_plan(memd_state *st, memd_session *s, const memd_doc *doc,
                     struct memd_buf *out, uint16_t op, uint64_t req_id,
                     memd_plan_reply_fn encode, memd_model_job **job, memd_error *err)
{
    memd_models *ms = memd_models_of(st);
    if (!ms)
        return -ENOMEM;
    memd_model_job *j = calloc(1, sizeof *j);
    if (!j)
        return memd_error_set(err, -ENOMEM, "daemon out of memory for a planning job");
    *j = (memd_model_job){.s = s, .out = out, .req_id = req_id, .op = op, .encode = encode,
                          .doc_len = doc->len};
    memd_error_reset(&j->err);
    /* The document goes with the job: an upload's is handed over, a frame's (at most
     * max_frame bytes) copied. */
    if (doc->up) {
        j->doc = doc->up->data;
        doc->up->data = NULL;
    } else if (!(j->doc = malloc(doc->len ? doc->len : 1))) {
        free(j);
        return memd_error_set(err, -ENOMEM, "daemon out of memory for a planning job");
    } else {
        memcpy(j->doc, doc->p, doc->len);
    }
    j->next = ms->jobs;
    ms->jobs = j;
    ms->njobs++;
    *job = j;
    job_run(ms, j);
    return j->queued ? MEMD_MODELS_PLAN_QUEUED : MEMD_MODELS_PLAN_DONE;
}
