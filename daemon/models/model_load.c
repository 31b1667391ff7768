/* memd daemon — MODEL_LOAD, MODEL_UNLOAD, MODEL_INFO. A model is (device, uid, name), or
 * (device, name) when shared names are global (model.h): the
 * first load checks the description against its plan, lays the weights out in one
 * constants buffer and allocates code and constants as shared named buffers; every
 * later load of the same content (any session) just takes a hold on them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device.h"
#include "digest.h"
#include "error.h"
#include "event.h"
#include "model_internal.h"
#include "names.h"
#include "wire.h"

#define MODEL_SEED 0x6d656d642d6d646cull /* "memd-mdl" */

static bool name_ok(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > MEMD_MODEL_NAME_MAX)
        return false;
    for (const char *c = n; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return false;
    return true;
}

static bool pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* A decoded, checked description (not yet a model). */
typedef struct desc {
    memd_wire_model_req req;
    memd_model_tensor *t;
    uint32_t nact, nph;
    uint64_t hash;
    size_t head;                   /* header bytes in the document: v1 or current */
} desc;

/* A model's page size: 0, or one its scope's bank group can interleave. */
static int check_page(const memd_state *st, const memd_wire_model_req *r, memd_error *err)
{
    memd_kind kind;
    const memd_device_spec *spec = st->devs[memd_state_dev_index(st, r->device)].spec;
    if (r->page_size == 0)
        return 0;
    if (memd_scope_kind((memd_scope)r->scope, &kind) < 0 || spec->groups[kind].banks == 0)
        return memd_error_set(err, -EOPNOTSUPP, "model %s: device '%s' does not offer scope %s",
                              r->name, spec->name, memd_scope_name((memd_scope)r->scope));
    const memd_bank_group_spec *g = &spec->groups[kind];
    const char *why = memd_page_size_problem(g, r->page_size);
    if (why)
        return memd_error_set(err, -EINVAL, "model %s: page size %llu %s (%s of device '%s': a "
                              "power of two from %llu to %llu bytes)", r->name,
                              (unsigned long long)r->page_size, why, memd_kind_name(kind),
                              spec->name, (unsigned long long)g->alignment,
                              (unsigned long long)g->bank_size);
    return 0;
}

/* The header: name, device, tensor count, and a length that holds exactly those tensors
 * after a header of today's size or of the v1 size (no page size: 0). */
static int decode_header(memd_state *st, const memd_doc *d, memd_wire_model_req *r,
                         size_t *head, memd_error *err)
{
    /* Which header it is follows from the length, which must hold the tensors exactly. */
    uint32_t n = d->len >= MEMD_WIRE_MODEL_REQ_V1_SIZE ? memd_wire_u32(d->p + 8) : 0;
    *head = d->len == MEMD_WIRE_MODEL_REQ_V1_SIZE + (uint64_t)n * MEMD_WIRE_TENSOR_SIZE
                ? MEMD_WIRE_MODEL_REQ_V1_SIZE : MEMD_WIRE_MODEL_REQ_SIZE;
    int rc = memd_wire_model_req_get(d->p, d->len < *head ? d->len : *head, r);
    if (rc < 0)
        return memd_error_set(err, rc, rc == -EBADMSG ? "model document of %zu bytes is shorter "
                            "than its header" : "model document: bad scope, flags or name "
                            "(%zu bytes)", d->len);
    if (!name_ok(r->name))
        return memd_error_set(err, -EINVAL, "model name '%s': 1..%d characters of A-Z a-z 0-9 . _ -",
                            r->name, MEMD_MODEL_NAME_MAX);
    if (memd_state_dev_index(st, r->device) < 0)
        return memd_error_set(err, -ENODEV, "model %s: no device %u (%u configured)", r->name,
                            r->device, st->ndevs);
    if (r->ntensors == 0 || r->ntensors > MEMD_MODEL_MAX_TENSORS)
        return memd_error_set(err, -E2BIG, "model %s: %u tensors, expected 1..%u", r->name,
                            r->ntensors, MEMD_MODEL_MAX_TENSORS);
    uint64_t want = *head + (uint64_t)r->ntensors * MEMD_WIRE_TENSOR_SIZE;
    if (d->len != want)
        return memd_error_set(err, -EBADMSG, "model %s: document of %zu bytes does not hold the "
                            "%u tensors its header announces (%llu bytes)", r->name, d->len,
                            r->ntensors, (unsigned long long)want);
    return check_page(st, r, err);
}

/* Tensor i (wire record p) into ds->t[i], checked on its own; its canonical encoding
 * goes to *e. */
static int decode_tensor(desc *ds, uint32_t i, const uint8_t *p, uint8_t **e,
                         memd_error *err)
{
    const char *name = ds->req.name;
    memd_wire_tensor w;
    memd_model_tensor *t = &ds->t[i];
    if (memd_wire_tensor_get(p, MEMD_WIRE_TENSOR_SIZE, &w) < 0)
        return memd_error_set(err, -EINVAL, "model %s: tensor %u: unknown role %u", name, i, p[32]);
    t->role = w.role;
    t->size = w.size;
    t->align = w.align ? w.align : 1;
    if (w.role == MEMD_TENSOR_ALIAS) {
        if (w.alias_of >= ds->req.ntensors || w.alias_of == i)
            return memd_error_set(err, -EINVAL, "model %s: tensor %u: alias of tensor %u, "
                                "which does not exist", name, i, w.alias_of);
        t->ref = w.alias_of;
        t->align = 1;
    } else if (w.alias_of != MEMD_NO_TENSOR) {
        return memd_error_set(err, -EINVAL, "model %s: tensor %u: alias_of %u on a tensor "
                            "that is not an alias", name, i, w.alias_of);
    } else if (w.size == 0) {
        return memd_error_set(err, -EINVAL, "model %s: tensor %u: size 0", name, i);
    } else if (!pow2(t->align) || t->align > (1ull << 32)) {
        return memd_error_set(err, -EINVAL, "model %s: tensor %u: alignment %llu is not a "
                            "power of two up to 4 GiB", name, i, (unsigned long long)w.align);
    } else if (w.role == MEMD_TENSOR_ACTIVATION && w.lower >= w.upper) {
        return memd_error_set(err, -EINVAL, "model %s: tensor %u: lifetime [%llu,%llu) is "
                            "empty", name, i, (unsigned long long)w.lower,
                            (unsigned long long)w.upper);
    } else if (w.role == MEMD_TENSOR_ACTIVATION && t->align < ds->req.page_size) {
        /* The plan must start every tensor on a page of the arena. */
        return memd_error_set(err, -EINVAL, "model %s: tensor %u: alignment %llu is below the "
                            "model's page size %llu (plan activations with the page size as "
                            "their alignment)", name, i, (unsigned long long)t->align,
                            (unsigned long long)ds->req.page_size);
    }
    if (w.role == MEMD_TENSOR_ACTIVATION) {
        t->lower = w.lower;
        t->upper = w.upper;
        t->ref = ds->nact++;
    } else if (w.role >= MEMD_TENSOR_INPUT && w.role <= MEMD_TENSOR_INOUT) {
        t->ref = ds->nph++;
    }
    memd_wire_tensor c = {.size = t->size, .align = t->align, .lower = t->lower,
                          .upper = t->upper, .role = t->role,
                          .alias_of = w.role == MEMD_TENSOR_ALIAS ? w.alias_of : MEMD_NO_TENSOR};
    *e = memd_wire_tensor_put(*e, &c);
    return 0;
}

/* Aliases point at a non-alias of at least their size (checked once all are read). */
static int check_aliases(const desc *ds, memd_error *err)
{
    for (uint32_t i = 0; i < ds->req.ntensors; i++) {
        const memd_model_tensor *t = &ds->t[i];
        if (t->role != MEMD_TENSOR_ALIAS)
            continue;
        const memd_model_tensor *src = &ds->t[t->ref];
        if (src->role == MEMD_TENSOR_ALIAS)
            return memd_error_set(err, -EINVAL, "model %s: tensor %u: alias of tensor %u, itself "
                                "an alias (name the tensor that holds the data)", ds->req.name, i,
                                t->ref);
        if (t->size > src->size)
            return memd_error_set(err, -EINVAL, "model %s: tensor %u: alias of %llu bytes is "
                                "larger than its source tensor %u (%llu bytes)", ds->req.name, i,
                                (unsigned long long)t->size, t->ref,
                                (unsigned long long)src->size);
    }
    return 0;
}

/* Decodes and checks the document; computes the content hash over its canonical
 * re-encoding (reserved fields zero, alignment 0 read as 1, lifetimes only for
 * activations), so equal models hash equal whatever their padding bytes said. */
static int decode(memd_state *st, const memd_doc *d, desc *ds, memd_error *err)
{
    memd_wire_model_req *r = &ds->req;
    int rc = decode_header(st, d, r, &ds->head, err);
    if (rc < 0)
        return rc;
    ds->t = calloc(r->ntensors, sizeof *ds->t);
    /* The canonical form has today's header whatever the document's was. */
    size_t len = d->len - ds->head + MEMD_WIRE_MODEL_REQ_SIZE;
    uint8_t *enc = malloc(len);
    if (!ds->t || !enc) {
        free(enc);
        return memd_error_set(err, -ENOMEM, "daemon out of memory for model %s", r->name);
    }
    uint8_t *e = memd_wire_model_req_put(enc, r);
    const uint8_t *p = d->p + ds->head;
    for (uint32_t i = 0; i < r->ntensors && rc == 0; i++, p += MEMD_WIRE_TENSOR_SIZE)
        rc = decode_tensor(ds, i, p, &e, err);
    if (rc == 0)
        rc = check_aliases(ds, err);
    if (rc == 0)
        ds->hash = memd_digest64(enc, len, MODEL_SEED);
    free(enc);
    return rc;
}

/* The plan must be exactly the activations, in order. */
static int check_plan(const desc *ds, const memd_plan_entry *pl, memd_error *err)
{
    const char *name = ds->req.name;
    if (pl->n != ds->nact)
        return memd_error_set(err, -EINVAL, "model %s: plan %016llx has %u buffers, the model "
                            "%u activations", name, (unsigned long long)pl->id, pl->n, ds->nact);
    for (uint32_t i = 0; i < ds->req.ntensors; i++) {
        const memd_model_tensor *t = &ds->t[i];
        if (t->role != MEMD_TENSOR_ACTIVATION)
            continue;
        const memd_plan_buffer *b = &pl->bufs[t->ref];
        if (b->size != t->size || b->align != t->align || b->lower != t->lower ||
            b->upper != t->upper)
            return memd_error_set(err, -EINVAL, "model %s: tensor %u (activation %u) does not "
                                "match plan %016llx: size %llu/%llu, align %llu/%llu, time "
                                "[%llu,%llu)/[%llu,%llu)", name, i, t->ref,
                                (unsigned long long)pl->id, (unsigned long long)t->size,
                                (unsigned long long)b->size, (unsigned long long)t->align,
                                (unsigned long long)b->align, (unsigned long long)t->lower,
                                (unsigned long long)t->upper, (unsigned long long)b->lower,
                                (unsigned long long)b->upper);
    }
    return 0;
}

/* A new model record from a checked description: weights laid out bottom-up, each at
 * its alignment and on a page boundary, in one constants buffer. */
static int build(const desc *ds, memd_plan_entry *pl, uint32_t dev, memd_model **out,
                 memd_error *err)
{
    memd_model *m = calloc(1, sizeof *m);
    uint32_t *ph = calloc(ds->nph ? ds->nph : 1, sizeof *ph);
    if (!m || !ph) {
        free(m);
        free(ph);
        return memd_error_set(err, -ENOMEM, "daemon out of memory for model %s", ds->req.name);
    }
    m->t = ds->t;
    m->n = ds->req.ntensors;
    m->nph = ds->nph;
    m->ph = ph;
    m->dev = dev;
    m->scope = ds->req.scope;
    m->hash = ds->hash;
    m->plan = pl;
    m->code_bytes = ds->req.code_bytes;
    m->page_size = ds->req.page_size;
    memcpy(m->name, ds->req.name, sizeof m->name);
    m->const_align = 1;
    m->arena_align = 1;
    uint64_t off = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        memd_model_tensor *t = &m->t[i];
        if (t->role == MEMD_TENSOR_WEIGHT) {
            uint64_t a = t->align > m->page_size ? t->align : m->page_size;
            if (off > UINT64_MAX - (a - 1) || (off = (off + a - 1) & ~(a - 1)) > UINT64_MAX - t->size) {
                free(ph);
                free(m);
                return memd_error_set(err, -EOVERFLOW, "model %s: weights overflow 64 bits",
                                    ds->req.name);
            }
            t->off = off;
            off += t->size;
            if (a > m->const_align)
                m->const_align = a;
        } else if (t->role == MEMD_TENSOR_ACTIVATION && t->align > m->arena_align) {
            m->arena_align = t->align;
        } else if (t->role >= MEMD_TENSOR_INPUT && t->role <= MEMD_TENSOR_INOUT) {
            ph[t->ref] = i;
        }
    }
    m->const_bytes = off;
    *out = m;
    return 0;
}

/* s takes a hold on one of m's shared buffers (creating it on the first load). */
static int acquire(memd_state *st, memd_session *s, const memd_model *m, memd_class cls,
                   uint64_t bytes, uint64_t align, uint64_t *handle, memd_error *err)
{
    char name[MEMD_NAME_MAX];
    memd_alloc_request w = {.device = st->devs[m->dev].spec->id, .cls = (uint8_t)cls,
                            .scope = m->scope, .bytes = bytes,
                            .page_size = cls == MEMD_CLASS_CODE ? 0 : m->page_size,
                            .alignment = align > 1 ? align : 0, .shared = true, .name = name};
    /* name_ok bounds the model name to MEMD_MODEL_NAME_MAX, so this always fits. */
    snprintf(name, sizeof name, MEMD_MODEL_NAME_PREFIX "%.*s:%s", MEMD_MODEL_NAME_MAX, m->name,
             cls == MEMD_CLASS_CODE ? "code" : "const");
    memd_alloc *a;
    int rc = memd_alloc_create(st, s, &w, &a, err);
    if (rc < 0) {
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        memd_error_set(err, rc, "model %s %s: %s", m->name,
                     cls == MEMD_CLASS_CODE ? "code" : "constants", msg);
        return rc;
    }
    *handle = a->handle;
    return 0;
}

/* The model of that name s may load: its uid's, or anyone's when names are global. */
static memd_model *find_model(const memd_state *st, memd_models *ms, uint32_t dev,
                              const memd_session *s, const char *name)
{
    for (memd_model *m = ms->models; m; m = m->next)
        if (m->dev == dev && (st->names.global || m->uid == s->uid) && strcmp(m->name, name) == 0)
            return m;
    return NULL;
}

/* Session s starts using m: holds on its code and constants, a use record. */
static int attach(memd_state *st, memd_models *ms, memd_session *s, memd_model *m,
                  memd_error *err)
{
    memd_model_use *u = calloc(1, sizeof *u);
    if (!u)
        return memd_error_set(err, -ENOMEM, "daemon out of memory for model %s", m->name);
    uint64_t code = 0, cst = 0;
    int rc = 0;
    if (m->code_bytes)
        rc = acquire(st, s, m, MEMD_CLASS_CODE, m->code_bytes, 0, &code, err);
    if (rc == 0 && m->const_bytes)
        rc = acquire(st, s, m, MEMD_CLASS_CONSTANT, m->const_bytes, m->const_align, &cst, err);
    if (rc < 0) {
        memd_models_release_handle(st, s, code);
        free(u);
        return rc;
    }
    /* Only an admin reclaim can free a model's shared buffer while it has users; the
     * next load then allocated a new one, which the model uses from now on. */
    if (code != m->code_handle) {
        memd_models_unmanage(ms, m->code_handle);
        if (memd_models_manage(ms, code) < 0)
            goto nomem;
        m->code_handle = code;
    }
    if (cst != m->const_handle) {
        memd_models_unmanage(ms, m->const_handle);
        if (memd_models_manage(ms, cst) < 0)
            goto nomem;
        m->const_handle = cst;
    }
    u->m = m;
    u->s = s;
    u->next = ms->uses;
    ms->uses = u;
    m->users++;
    return 0;
nomem:
    memd_models_release_handle(st, s, code);
    memd_models_release_handle(st, s, cst);
    free(u);
    return memd_error_set(err, -ENOMEM, "daemon out of memory for model %s", m->name);
}

/* The event log's line for a load that took (bytes: its code and constants). */
static void loaded(memd_state *st, memd_session *s, const memd_model *m, bool fresh)
{
    memd_models_record(st, s, MEMD_HIST_MODEL_LOAD, m, NULL);
    const memd_device_spec *spec = st->devs[m->dev].spec;
    memd_event(st, s, MEMD_EVENT_MODEL_LOAD, LOG_INFO, spec->id, m->code_bytes + m->const_bytes,
               "model %s %s on device %u by session %u (pid %u, %s): %llu bytes of code, %llu "
               "of constants, arena %llu bytes", m->name, fresh ? "loaded" : "shared",
               spec->id, s->id, s->pid, s->comm[0] ? s->comm : "?",
               (unsigned long long)m->code_bytes, (unsigned long long)m->const_bytes,
               (unsigned long long)m->plan->arena);
}

int memd_models_load(memd_state *st, memd_session *s, const memd_doc *doc, memd_model **out,
                     bool *fresh, memd_error *err)
{
    memd_models *ms = memd_models_of(st);
    desc ds = {0};
    int rc = ms ? decode(st, doc, &ds, err) : memd_error_set(err, -ENOMEM, "daemon out of memory");
    if (rc < 0) {
        free(ds.t);
        return rc;
    }
    uint32_t dev = (uint32_t)memd_state_dev_index(st, ds.req.device);
    memd_model *m = find_model(st, ms, dev, s, ds.req.name);
    *fresh = !m;
    if (m) {
        free(ds.t);
        if (m->hash != ds.hash)
            return memd_error_set(err, -EEXIST, "model %s is loaded on device %u with other "
                                  "content (%u tensors, plan %016llx); unload it everywhere "
                                  "or choose another name", m->name, ds.req.device, m->n,
                                  (unsigned long long)m->plan->id);
        /* Loading what the session already uses is a no-op that answers the same. */
        if (!memd_models_use_of(ms, s, m->id)) {
            if ((rc = attach(st, ms, s, m, err)) < 0)
                return rc;
            memd_models_save_model(ms, m);
            loaded(st, s, m, false);
        }
        /* A filling model nobody fills is this loader's to fill (model_ready.c). */
        *fresh = memd_models_take_fill(st, ms, s, m);
        *out = m;
        return 0;
    }
    memd_plan_entry *pl = memd_plan_cache_get(ms, ds.req.plan_id);
    if (!pl)
        rc = memd_error_set(err, -ENOENT, "model %s: plan %016llx is not in the daemon's cache "
                          "(never submitted, or evicted): submit it with PLAN first",
                          ds.req.name, (unsigned long long)ds.req.plan_id);
    else
        rc = check_plan(&ds, pl, err);
    if (rc == 0)
        rc = build(&ds, pl, dev, &m, err);
    if (rc < 0) {
        free(ds.t);
        return rc;
    }
    m->id = ms->next_model_id++;
    m->uid = s->uid;
    m->created_ns = memd_state_now(st);
    m->filler = s->id; /* filling until s sends MODEL_SET_READY */
    memd_plan_cache_ref(ms, pl);
    m->next = ms->models;
    ms->models = m;
    if ((rc = attach(st, ms, s, m, err)) < 0) {
        /* Nobody uses it: take it out again (attach released what it took). */
        ms->models = m->next;
        memd_plan_cache_unref(ms, pl);
        free(m->t);
        free(m->ph);
        free(m);
        return rc;
    }
    memd_plan_cache_touch(ms, pl);
    memd_models_save_ids(ms);
    memd_models_save_model(ms, m);
    loaded(st, s, m, true);
    *out = m;
    return 0;
}

int memd_models_unload(memd_state *st, memd_session *s, uint64_t id, bool force, bool retry,
                       memd_error *err)
{
    memd_models *ms = st->models;
    memd_model_use *u = ms ? memd_models_use_of(ms, s, id) : NULL;
    if (!u && retry)
        return 0; /* unloaded by the first sending */
    if (!u)
        return memd_error_set(err, -ENOENT, "this session has not loaded a model with id %llu",
                              (unsigned long long)id);
    unsigned busy = 0;
    for (const memd_instance *in = u->insts; in; in = in->next)
        busy += in->busy;
    if (busy && !force)
        return memd_error_set(err, -EBUSY, "model %s: this session has %u instances in use; "
                              "release them or unload with FORCE", u->m->name, busy);
    memd_models_use_release(st, ms, u);
    return 0;
}

const memd_model *memd_models_info(const memd_state *st, const memd_session *s, uint64_t id,
                                   memd_error *err)
{
    memd_models *ms = st->models;
    memd_model *m = NULL;
    if (ms && s->admin) {
        for (m = ms->models; m && m->id != id; m = m->next) {
        }
    } else if (ms) {
        memd_model_use *u = memd_models_use_of(ms, s, id);
        m = u ? u->m : NULL;
    }
    if (!m)
        memd_error_set(err, -ENOENT, "%s model with id %llu",
                       s->admin ? "no" : "this session has not loaded a", (unsigned long long)id);
    return m;
}

int memd_model_check_alloc_name(const char *name, memd_error *err)
{
    /* Checked for every record of a batch, and most names are empty: one byte decides. */
    if (name[0] != MEMD_MODEL_NAME_PREFIX[0] ||
        strncmp(name, MEMD_MODEL_NAME_PREFIX, strlen(MEMD_MODEL_NAME_PREFIX)) != 0)
        return 0;
    return memd_error_set(err, -EPERM,
                        "allocation name '%s': names starting with '" MEMD_MODEL_NAME_PREFIX
                        "' belong to loaded models", name);
}
