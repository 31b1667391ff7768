/* memd daemon — what the state store keeps of the model layer, so that plans, models and
 * instances survive a restart as what they are (not as plain allocations). Saving here,
 * restoring in model_restore.c.
 *
 * The layer never calls the store: it hands each changed record to core
 * (memd_hooks_record_put, hooks.h), which passes it to whoever keeps records, and it gets
 * them back at start through its record_restore hook, after the store has restored the
 * allocations and sessions (orphans) and before it releases any orphan, so an orphan
 * released then (its process gone, or later: not reclaimed within the grace period)
 * lets go of its models and instances exactly as a session that closed. A reclaim moves
 * them to the reclaiming session (session_reclaimed hook).
 *
 * Records, kind and id in hooks.h, version 1, little-endian (field by field):
 *   MODELS_META id 0   0 u64 model ids below this   8 u64 instance ids below this
 *   PLAN id = plan id   0 u8 flags (1 precomputed, 2 optimal)   1..3 0   4 u32 buffers n
 *                       8 u64 arena  16 lower bound  24 iterations  32 plan us
 *                       40 created ns  48 hits  56 strategy[32]
 *                       88 n x (u64 lower, upper, size, align, offset, u8 pinned, 7 x 0)
 *                       then n x u64 offset
 *   MODEL id = model id 0 u64 content hash  8 created ns  16 plan id  24 code bytes
 *                       32 constant bytes  40 constant align  48 arena align
 *                       56 code handle  64 constants handle  72 u32 device id
 *                       76 u32 tensors n  80 u32 placeholders  84 u32 users k
 *                       88 u8 scope  89 u8 page: 0 none, else log2(page size) + 1
 *                       90 u8 flags (1: filling)  91 0
 *                       92 u32 filler session (filling; 0: nobody)  96 name[64]
 *                       (after the users below: u32 uid, the first loader's; a record
 *                       without it is uid 0's)
 *                       160 n x (u64 size, align, lower, upper, offset, u32 ref, u8 role,
 *                       3 x 0), then k x u32 session id (the sessions using it)
 *   INSTANCE id         0 u64 model id  8 arena handle  16 arena address  24 arena bytes
 *                       32 placeholder bytes  40 u32 owner session  44 u32 placeholders p
 *                       48 u8 busy  49 u8 reused  50..55 0  56 u64 request id (the
 *                       INSTANCE_CREATE that made it busy)  64 p x (u64 handle, u64 address)
 * Restoring checks every field and every reference (the plan's key is computed again
 * from its problem; a model's plan, device and users, an instance's model, owner and
 * buffers must exist as recorded), so a record that does not fit stops the start, like
 * an allocation record that does not. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "model_internal.h"
#include "model_record.h"
#include "wire.h"

#define IDS_STEP 1024u /* ids are recorded ahead, so few loads rewrite the counters */

/* ---- saving ---- */

static uint8_t *enc_buf(memd_models *ms, size_t n)
{
    if (n > ms->enc_cap) {
        uint8_t *b = realloc(ms->enc, n);
        if (!b)
            return NULL;
        ms->enc = b;
        ms->enc_cap = n;
    }
    return ms->enc;
}

static void put(memd_models *ms, uint8_t kind, uint64_t id, const uint8_t *p, size_t len)
{
    memd_record r = {.kind = kind, .version = VERSION, .id = id, .data = p, .len = len};
    memd_hooks_record_put(ms->st, &r);
}

/* No memory to encode: the store keeps the old record (or none); logged once. */
static void enc_failed(memd_models *ms, const char *what, uint64_t id)
{
    if (!ms->enc_failed)
        memd_log(LOG_ERR, "no memory to record %s %llu in the state store: after a restart "
                          "it may come back stale or as plain allocations",
                 what, (unsigned long long)id);
    ms->enc_failed = true;
}

void memd_models_save_gone(memd_models *ms, uint8_t kind, uint64_t id)
{
    if (!ms->quiet)
        put(ms, kind, id, NULL, 0);
}

void memd_models_save_ids(memd_models *ms)
{
    if (ms->quiet || (ms->next_model_id <= ms->saved_model_ids &&
                      ms->next_instance_id <= ms->saved_instance_ids))
        return;
    ms->saved_model_ids = ms->next_model_id + IDS_STEP;
    ms->saved_instance_ids = ms->next_instance_id + IDS_STEP;
    uint8_t b[16];
    memd_wire_put_u64(b, ms->saved_model_ids);
    memd_wire_put_u64(b + 8, ms->saved_instance_ids);
    put(ms, MEMD_RECORD_MODELS_META, 0, b, sizeof b);
}

size_t memd_models_plan_rec_len(uint32_t n)
{
    return PLAN_HEAD + (size_t)n * (PLAN_BUF + 8);
}

void memd_models_plan_rec_encode(const memd_plan_entry *e, uint8_t *p)
{
    memset(p, 0, memd_models_plan_rec_len(e->n));
    p[0] = (uint8_t)((e->precomputed ? 1 : 0) | (e->optimal ? 2 : 0));
    memd_le_fields_put(p, e, memd_models_plan_fields, MEMD_MODELS_PLAN_NFIELDS);
    memd_wire_put_str(p + 56, e->strategy, sizeof e->strategy);
    uint8_t *q = p + PLAN_HEAD;
    for (uint32_t i = 0; i < e->n; i++, q += PLAN_BUF) {
        memd_le_fields_put(q, &e->bufs[i], memd_models_plan_buf_fields,
                           MEMD_MODELS_PLAN_BUF_NFIELDS);
        q[40] = e->bufs[i].pinned;
    }
    for (uint32_t i = 0; i < e->n; i++)
        q = memd_wire_put_u64(q, e->offsets[i]);
}

void memd_models_save_plan(memd_models *ms, const memd_plan_entry *e, const uint8_t *rec)
{
    if (ms->quiet)
        return;
    size_t len = memd_models_plan_rec_len(e->n);
    if (!rec) {
        uint8_t *p = enc_buf(ms, len);
        if (!p) {
            enc_failed(ms, "plan", e->id);
            return;
        }
        memd_models_plan_rec_encode(e, p);
        rec = p;
    }
    put(ms, MEMD_RECORD_PLAN, e->id, rec, len);
}

void memd_models_save_model(memd_models *ms, const memd_model *m)
{
    if (ms->quiet)
        return;
    size_t len = MODEL_HEAD + (size_t)m->n * MODEL_TENSOR + (size_t)m->users * 4 + 4;
    uint8_t *p = enc_buf(ms, len);
    if (!p) {
        enc_failed(ms, "model", m->id);
        return;
    }
    memset(p, 0, len);
    memd_le_fields_put(p, m, memd_models_model_fields, MEMD_MODELS_MODEL_NFIELDS);
    memd_wire_put_u64(p + 16, m->plan->id);
    memd_wire_put_u32(p + 72, ms->st->devs[m->dev].spec->id);
    p[89] = m->page_size ? (uint8_t)(__builtin_ctzll(m->page_size) + 1) : 0; /* log2 + 1 */
    p[90] = m->ready ? 0 : 1; /* 0 in records from before readiness: ready */
    memd_wire_put_u32(p + 92, m->ready ? 0 : m->filler);
    memd_wire_put_str(p + 96, m->name, sizeof m->name);
    uint8_t *q = p + MODEL_HEAD;
    for (uint32_t i = 0; i < m->n; i++, q += MODEL_TENSOR)
        memd_le_fields_put(q, &m->t[i], memd_models_tensor_fields, MEMD_MODELS_TENSOR_NFIELDS);
    uint32_t k = 0;
    for (const memd_model_use *u = ms->uses; u && k < m->users; u = u->next)
        if (u->m == m) {
            q = memd_wire_put_u32(q, u->s->id);
            k++;
        }
    memd_wire_put_u32(q, m->uid);
    memd_wire_put_u32(p + 84, k);
    put(ms, MEMD_RECORD_MODEL, m->id, p, MODEL_HEAD + (size_t)m->n * MODEL_TENSOR + k * 4u + 4);
}

void memd_models_save_instance(memd_models *ms, const memd_instance *in)
{
    if (ms->quiet)
        return;
    const memd_model *m = in->use->m;
    size_t len = INST_HEAD + (size_t)m->nph * INST_PH;
    uint8_t *p = enc_buf(ms, len);
    if (!p) {
        enc_failed(ms, "instance", in->id);
        return;
    }
    memset(p, 0, INST_HEAD);
    memd_wire_put_u64(p, m->id);
    memd_le_fields_put(p, in, memd_models_inst_fields, MEMD_MODELS_INST_NFIELDS);
    memd_wire_put_u32(p + 40, in->use->s->id);
    memd_wire_put_u32(p + 44, m->nph);
    p[48] = in->busy;
    p[49] = in->reused;
    uint8_t *q = p + INST_HEAD;
    for (uint32_t i = 0; i < m->nph; i++) {
        q = memd_wire_put_u64(q, in->ph_handle[i]);
        q = memd_wire_put_u64(q, in->ph_address[i]);
    }
    put(ms, MEMD_RECORD_INSTANCE, in->id, p, len);
}

