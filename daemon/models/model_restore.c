/* memd daemon — the model layer's records back from the state store at start, and
 * reclaims (the record formats: model_save.c).
 *
 * memd_models_init makes the layer's hooks call this file's: the store restores allocations and
 * sessions (orphans), then hands each record of the layer here, in kind order (counters,
 * plans, models, instances: each refers only to kinds before it), before it releases any
 * orphan. Every field and every reference is checked (a plan's key is computed again from
 * its problem; a model's plan, device and users, an instance's model, owner and buffers
 * must exist as recorded); a record that does not fit stops the start, as an allocation
 * record that does not fit does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "model_internal.h"
#include "model_record.h"
#include "wire.h"


typedef struct rd {
    const memd_record *r;
    memd_error *err;
} rd;

static const char *kind_name(uint8_t kind)
{
    return kind == MEMD_RECORD_PLAN ? "plan" : kind == MEMD_RECORD_MODEL ? "model"
                                           : kind == MEMD_RECORD_INSTANCE ? "instance"
                                                                          : "model counters";
}

static int bad(const rd *d, const char *why)
{
    return memd_error_set(d->err, -EINVAL, "%s record %llu: %s", kind_name(d->r->kind),
                          (unsigned long long)d->r->id, why);
}

static bool pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

static bool zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static memd_model *model_by_id(memd_models *ms, uint64_t id)
{
    for (memd_model *m = ms->models; m; m = m->next)
        if (m->id == id)
            return m;
    return NULL;
}

static int restore_ids(memd_models *ms, const rd *d)
{
    const memd_record *r = d->r;
    if (r->id != 0 || r->len != 16)
        return bad(d, "bad length or id");
    uint64_t mid = memd_wire_u64(r->data), iid = memd_wire_u64(r->data + 8);
    if (mid == 0 || iid == 0)
        return bad(d, "counters at 0");
    if (mid > ms->next_model_id)
        ms->next_model_id = mid;
    if (iid > ms->next_instance_id)
        ms->next_instance_id = iid;
    ms->saved_model_ids = mid;
    ms->saved_instance_ids = iid;
    return 0;
}

static int restore_plan(memd_models *ms, const rd *d)
{
    const memd_record *r = d->r;
    const uint8_t *p = r->data;
    if (r->len < PLAN_HEAD)
        return bad(d, "shorter than its header");
    uint32_t n = memd_wire_u32(p + 4);
    if (n > MEMD_PLAN_MAX_BUFFERS || r->len != PLAN_HEAD + (size_t)n * (PLAN_BUF + 8))
        return bad(d, "its length does not hold its buffers");
    if ((p[0] & ~3u) || !zero(p + 1, 3))
        return bad(d, "unknown flags");
    if (memd_plan_cache_get(ms, r->id))
        return bad(d, "recorded twice");
    memd_plan_entry *e = calloc(1, sizeof *e);
    memd_plan_buffer *b = calloc(n ? n : 1, sizeof *b);
    uint64_t *off = calloc(n ? n : 1, sizeof *off);
    if (!e || !b || !off) {
        free(e);
        free(b);
        free(off);
        return memd_error_set(d->err, -ENOMEM, "out of memory restoring plan %llu",
                              (unsigned long long)r->id);
    }
    e->bufs = b;
    e->offsets = off;
    e->n = n;
    e->id = r->id;
    e->precomputed = p[0] & 1;
    e->optimal = p[0] & 2;
    memd_le_fields_get(p, e, memd_models_plan_fields, MEMD_MODELS_PLAN_NFIELDS);
    int rc = memd_wire_get_str(p + 56, e->strategy, sizeof e->strategy) < 0
                 ? bad(d, "strategy without its NUL") : 0;
    const uint8_t *q = p + PLAN_HEAD, *offs = p + PLAN_HEAD + (size_t)n * PLAN_BUF;
    for (uint32_t i = 0; rc == 0 && i < n; i++, q += PLAN_BUF) {
        memd_le_fields_get(q, &b[i], memd_models_plan_buf_fields, MEMD_MODELS_PLAN_BUF_NFIELDS);
        b[i].pinned = q[40] == 1;
        off[i] = memd_wire_u64(offs + 8 * (size_t)i);
        if (q[40] > 1 || !zero(q + 41, 7) || !pow2(b[i].align) || (!b[i].pinned && b[i].offset != 0) || off[i] > e->arena ||
            b[i].size > e->arena - off[i])
            rc = bad(d, "a buffer out of range");
    }
    uint64_t key = 0;
    if (rc == 0 && (rc = memd_plan_key(b, off, n, e->precomputed, &key)) < 0)
        rc = memd_error_set(d->err, rc, "out of memory restoring plan %llu",
                            (unsigned long long)r->id);
    else if (rc == 0 && key != r->id)
        rc = bad(d, "its problem does not hash to its id");
    if (rc == 0 && (rc = memd_plan_cache_adopt(ms, e)) < 0)
        rc = memd_error_set(d->err, rc, "out of memory restoring plan %llu",
                            (unsigned long long)r->id);
    if (rc < 0) {
        free(b);
        free(off);
        free(e);
    }
    return rc;
}

/* The tensors of a model record into m (allocated), checked as a load checks them. */
static int restore_tensors(const rd *d, memd_model *m, const uint8_t *q, uint32_t nact)
{
    uint32_t act = 0, ph = 0;
    for (uint32_t i = 0; i < m->n; i++, q += MODEL_TENSOR) {
        memd_model_tensor *t = &m->t[i];
        memd_le_fields_get(q, t, memd_models_tensor_fields, MEMD_MODELS_TENSOR_NFIELDS);
        if (t->role >= MEMD_TENSOR_ROLE_COUNT || !zero(q + 45, 3) || !pow2(t->align))
            return bad(d, "a tensor out of range");
        switch (t->role) {
        case MEMD_TENSOR_ACTIVATION:
            if (t->ref != act++ || t->lower >= t->upper)
                return bad(d, "an activation out of order");
            break;
        case MEMD_TENSOR_WEIGHT:
            if (t->off > m->const_bytes || t->size > m->const_bytes - t->off)
                return bad(d, "a weight outside the constants");
            break;
        case MEMD_TENSOR_ALIAS:
            if (t->ref >= m->n || t->ref == i)
                return bad(d, "an alias of no tensor");
            break;
        default:
            if (t->ref != ph || ph >= m->nph)
                return bad(d, "a placeholder out of order");
            m->ph[ph++] = i;
            break;
        }
    }
    for (uint32_t i = 0; i < m->n; i++)
        if (m->t[i].role == MEMD_TENSOR_ALIAS && m->t[m->t[i].ref].role == MEMD_TENSOR_ALIAS)
            return bad(d, "an alias of an alias");
    if (act != nact || ph != m->nph)
        return bad(d, "its tensors do not match its plan or placeholder count");
    return 0;
}

static void model_free(memd_model *m)
{
    free(m->t);
    free(m->ph);
    free(m);
}

static int restore_model(memd_state *st, memd_models *ms, const rd *d)
{
    const memd_record *r = d->r;
    const uint8_t *p = r->data;
    if (r->len < MODEL_HEAD)
        return bad(d, "shorter than its header");
    uint32_t n = memd_wire_u32(p + 76), nph = memd_wire_u32(p + 80), k = memd_wire_u32(p + 84);
    if (n == 0 || n > MEMD_MODEL_MAX_TENSORS || nph > n || k == 0 ||
        (r->len != MODEL_HEAD + (size_t)n * MODEL_TENSOR + (size_t)k * 4 &&
         r->len != MODEL_HEAD + (size_t)n * MODEL_TENSOR + (size_t)k * 4 + 4))
        return bad(d, "its length does not hold its tensors and users");
    if (r->id == 0 || model_by_id(ms, r->id))
        return bad(d, "id 0 or recorded twice");
    int dev = memd_state_dev_index(st, memd_wire_u32(p + 72));
    memd_plan_entry *pl = memd_plan_cache_get(ms, memd_wire_u64(p + 16));
    if (dev < 0)
        return bad(d, "its device is not configured");
    if (!pl)
        return bad(d, "its plan has no record");
    if (p[88] >= MEMD_SCOPE_COUNT || p[89] > 64 || p[90] > 1 || p[91] ||
        (p[90] == 0 && memd_wire_u32(p + 92) != 0))
        return bad(d, "bad scope, page size or readiness");
    memd_model *m = calloc(1, sizeof *m);
    if (!m || !(m->t = calloc(n, sizeof *m->t)) || !(m->ph = calloc(nph ? nph : 1, sizeof *m->ph))) {
        if (m)
            model_free(m);
        return memd_error_set(d->err, -ENOMEM, "out of memory restoring model %llu",
                              (unsigned long long)r->id);
    }
    memd_le_fields_get(p, m, memd_models_model_fields, MEMD_MODELS_MODEL_NFIELDS);
    m->id = r->id;
    m->plan = pl;
    m->dev = (uint32_t)dev;
    m->page_size = p[89] ? 1ull << (p[89] - 1) : 0; /* log2 + 1, checked above */
    m->ready = p[90] == 0;
    /* A filler that is no session any more (released meanwhile) leaves the job open. */
    m->filler = memd_models_session_by_id(st, memd_wire_u32(p + 92)) ? memd_wire_u32(p + 92) : 0;
    int rc = 0;
    if (memd_wire_get_str(p + 96, m->name, sizeof m->name) < 0 || !m->name[0])
        rc = bad(d, "bad name");
    else if (!pow2(m->const_align) || !pow2(m->arena_align))
        rc = bad(d, "bad alignment");
    else
        rc = restore_tensors(d, m, p + MODEL_HEAD, pl->n);
    /* Its users: sessions restored before (orphans), each holding its shared buffers. */
    const uint8_t *q = p + MODEL_HEAD + (size_t)n * MODEL_TENSOR;
    /* The first loader's uid follows the users (records from before it: uid 0). */
    m->uid = r->len == MODEL_HEAD + (size_t)n * MODEL_TENSOR + (size_t)k * 4 + 4
                 ? memd_wire_u32(q + 4 * (size_t)k) : 0;
    memd_session **users = rc == 0 ? calloc(k, sizeof *users) : NULL;
    if (rc == 0 && !users)
        rc = memd_error_set(d->err, -ENOMEM, "out of memory restoring model %llu",
                            (unsigned long long)r->id);
    /* (A buffer an admin reclaimed meanwhile is gone: the next load allocates it anew.) */
    const memd_alloc *code = m->code_handle ? memd_alloc_find(st, m->code_handle) : NULL;
    const memd_alloc *cst = m->const_handle ? memd_alloc_find(st, m->const_handle) : NULL;
    for (uint32_t i = 0; rc == 0 && i < k; i++) {
        users[i] = memd_models_session_by_id(st, memd_wire_u32(q + 4 * (size_t)i));
        for (uint32_t j = 0; users[i] && j < i; j++)
            if (users[j] == users[i])
                users[i] = NULL;
        if (!users[i])
            rc = bad(d, "a user session without a record, or listed twice");
        else if ((code && !memd_alloc_hold_of(code, users[i])) ||
                 (cst && !memd_alloc_hold_of(cst, users[i])))
            rc = bad(d, "a user that does not hold the model's code or constants");
    }
    memd_model_use **uses = rc == 0 ? calloc(k, sizeof *uses) : NULL;
    for (uint32_t i = 0; rc == 0 && i < k; i++)
        if (!uses || !(uses[i] = calloc(1, sizeof *uses[i])))
            rc = memd_error_set(d->err, -ENOMEM, "out of memory restoring model %llu",
                                (unsigned long long)r->id);
    if (rc == 0 && (memd_models_manage(ms, m->code_handle) < 0 ||
                    memd_models_manage(ms, m->const_handle) < 0))
        rc = memd_error_set(d->err, -ENOMEM, "out of memory restoring model %llu",
                            (unsigned long long)r->id);
    if (rc < 0) {
        for (uint32_t i = 0; uses && i < k; i++)
            free(uses[i]);
        free(uses);
        free(users);
        model_free(m);
        return rc;
    }
    for (uint32_t i = 0; i < k; i++) {
        uses[i]->m = m;
        uses[i]->s = users[i];
        uses[i]->next = ms->uses;
        ms->uses = uses[i];
    }
    m->users = k;
    memd_plan_cache_ref(ms, pl);
    m->next = ms->models;
    ms->models = m;
    if (m->id >= ms->next_model_id)
        ms->next_model_id = m->id + 1;
    free(uses);
    free(users);
    return 0;
}

static int restore_instance(memd_state *st, memd_models *ms, const rd *d)
{
    const memd_record *r = d->r;
    const uint8_t *p = r->data;
    if (r->len < INST_HEAD)
        return bad(d, "shorter than its header");
    uint32_t nph = memd_wire_u32(p + 44);
    if (r->len != INST_HEAD + (size_t)nph * INST_PH)
        return bad(d, "its length does not hold its placeholders");
    if (r->id == 0 || memd_map_get(&ms->instances, r->id))
        return bad(d, "id 0 or recorded twice");
    if (p[48] > 1 || p[49] > 1 || !zero(p + 50, 6))
        return bad(d, "bad busy or reused flag");
    memd_session *s = memd_models_session_by_id(st, memd_wire_u32(p + 40));
    memd_model_use *u = s ? memd_models_use_of(ms, s, memd_wire_u64(p)) : NULL;
    if (!u)
        return bad(d, "its owner session did not load its model");
    if (nph != u->m->nph)
        return bad(d, "another placeholder count than its model");
    memd_instance *in = memd_models_instance_new(u);
    if (!in)
        return memd_error_set(d->err, -ENOMEM, "out of memory restoring instance %llu",
                              (unsigned long long)r->id);
    uint64_t *ph_h = in->ph_handle, *ph_a = in->ph_address;
    in->id = r->id;
    in->busy = p[48];
    in->reused = p[49];
    memd_le_fields_get(p, in, memd_models_inst_fields, MEMD_MODELS_INST_NFIELDS);
    /* Each of its buffers is an allocation its owner holds, where it was. */
    int rc = 0;
    const memd_alloc *a = in->arena_handle ? memd_alloc_find(st, in->arena_handle) : NULL;
    if (in->arena_bytes != u->m->plan->arena ||
        (in->arena_handle && (!a || !memd_alloc_hold_of(a, s) || a->pl.address != in->arena_address)) ||
        (!in->arena_handle && in->arena_bytes))
        rc = bad(d, "its arena is not an allocation its owner holds");
    const uint8_t *q = p + INST_HEAD;
    uint64_t bytes = 0;
    for (uint32_t i = 0; rc == 0 && i < nph; i++, q += INST_PH) {
        ph_h[i] = memd_wire_u64(q);
        ph_a[i] = memd_wire_u64(q + 8);
        a = ph_h[i] ? memd_alloc_find(st, ph_h[i]) : NULL;
        bytes += u->m->t[u->m->ph[i]].size;
        if (!a || !memd_alloc_hold_of(a, s) || a->pl.address != ph_a[i])
            rc = bad(d, "a placeholder is not an allocation its owner holds");
    }
    if (rc == 0 && bytes != in->ph_bytes)
        rc = bad(d, "its placeholder bytes do not add up");
    if (rc == 0 && memd_map_put(&ms->instances, in->id, (uint64_t)(uintptr_t)in) < 0)
        rc = memd_error_set(d->err, -ENOMEM, "out of memory restoring instance %llu",
                            (unsigned long long)r->id);
    for (uint32_t i = 0; rc == 0 && i <= nph; i++) {
        if (memd_models_manage(ms, i < nph ? ph_h[i] : in->arena_handle) < 0) {
            while (i-- > 0)
                memd_models_unmanage(ms, ph_h[i]);
            memd_map_remove(&ms->instances, in->id);
            rc = memd_error_set(d->err, -ENOMEM, "out of memory restoring instance %llu",
                                (unsigned long long)r->id);
        }
    }
    if (memd_models_instance_built(in, rc) < 0)
        return rc;
    if (in->id >= ms->next_instance_id)
        ms->next_instance_id = in->id + 1;
    return 0;
}

static int on_restore(void *data, const memd_record *r, memd_error *err)
{
    memd_state *st = data;
    memd_models *ms = st->models;
    rd d = {.r = r, .err = err};
    if (r->kind < MEMD_RECORD_MODELS_META || r->kind > MEMD_RECORD_INSTANCE)
        return 0;
    if (r->version != VERSION)
        return memd_error_set(err, -EINVAL, "%s record %llu: version %u, this memd reads %u",
                              kind_name(r->kind), (unsigned long long)r->id, r->version,
                              VERSION);
    int rc;
    switch (r->kind) {
    case MEMD_RECORD_MODELS_META: rc = restore_ids(ms, &d); break;
    case MEMD_RECORD_PLAN: rc = restore_plan(ms, &d); break;
    case MEMD_RECORD_MODEL: rc = restore_model(st, ms, &d); break;
    default: rc = restore_instance(st, ms, &d); break;
    }
    return rc < 0 ? rc : 1;
}

static void on_reclaimed(void *data, memd_session *o, memd_session *s)
{
    memd_models *ms = ((memd_state *)data)->models;
    /* Same session id, so the records stay as they are. */
    for (memd_model_use *u = ms->uses; u; u = u->next)
        if (u->s == o)
            u->s = s;
}

static const memd_state_events restore_events = {
    .record_restore = on_restore,
    .session_reclaimed = on_reclaimed,
};

int memd_models_init(memd_state *st)
{
    memd_models *ms = memd_models_of(st);
    if (!ms)
        return -ENOMEM;
    ms->restore = &restore_events;
    return 0;
}
