/* libmemclient: plans, models and instances (see client.h, "plans and models").
 * Documents (plan problems, model descriptions) that do not fit one frame go to the
 * daemon as UPLOAD parts, pipelined, then the request names the upload. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

static uint64_t upload_seq;

/* Per process is unique enough: ids only need to differ within one session. */
static uint64_t next_upload_id(void)
{
    return __atomic_add_fetch(&upload_seq, 1, __ATOMIC_RELAXED);
}

/* Waits for slot seq, records its error, retires it. */
static int wait_one(memclient *c, uint64_t seq, int *first)
{
    int r = memclient_wait(c, seq);
    memclient_slot *s = memclient_slot_at(c, seq);
    if (r < 0 && *first == 0) {
        *first = r;
        memclient_fail_with(&s->err);
    }
    memclient_consume(c, seq);
    return r;
}

/* Sends op with document doc (inline, or uploaded first) and takes its reply payload. */
static int doc_call(memclient *c, uint16_t op, const uint8_t *doc, size_t len,
                    memclient_raw *raw)
{
    int r, err = 0, first = 0;
    uint64_t seq;
    *raw = (memclient_raw){0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint32_t maxf = c->info.max_frame;
    if (len <= (size_t)maxf - MEMD_WIRE_DOC_SIZE && maxf >= MEMD_WIRE_DOC_SIZE) {
        uint8_t *p = memclient_begin(c, op, (uint32_t)(MEMD_WIRE_DOC_SIZE + len),
                                     MEMCLIENT_OUT_RAW, raw, 1, true, &seq, &err);
        if (!p) {
            memclient_unlock(c);
            return memclient_fail(err, "%s request: %s", memd_wire_opcode_name(op),
                                  memclient_strerror(err));
        }
        p = memd_wire_put_u64(p, 0);
        memcpy(p, doc, len);
        /* One frame: sent again as a retry after a restart (MEMCLIENT_CONNECT_RECONNECT).
         * An uploaded document is not: its parts died with the daemon. */
        return memclient_finish(c, seq);
    }
    if (len > MEMD_UPLOAD_MAX || maxf <= MEMD_WIRE_UPLOAD_SIZE) {
        memclient_unlock(c);
        return memclient_fail(-EFBIG, "%s document of %zu bytes: at most %u bytes can be "
                              "uploaded", memd_wire_opcode_name(op), len, MEMD_UPLOAD_MAX);
    }
    uint64_t id = next_upload_id(), first_seq = 0;
    size_t chunk = maxf - MEMD_WIRE_UPLOAD_SIZE, parts = 0;
    for (size_t off = 0; off < len; off += chunk, parts++) {
        size_t part = len - off < chunk ? len - off : chunk;
        uint8_t *p = memclient_begin(c, MEMD_OP_UPLOAD, (uint32_t)(MEMD_WIRE_UPLOAD_SIZE + part),
                                     MEMCLIENT_OUT_NONE, NULL, 0, true, &seq, &err);
        if (!p)
            break;
        if (parts == 0)
            first_seq = seq;
        memd_wire_upload u = {.upload_id = id, .total = len, .offset = off};
        p = memd_wire_upload_put(p, &u);
        memcpy(p, doc + off, part);
        memclient_send(c, false); /* parts go out while the next are encoded */
    }
    uint64_t doc_seq = 0;
    bool have_doc = false;
    if (!err) {
        uint8_t *p = memclient_begin(c, op, MEMD_WIRE_DOC_SIZE, MEMCLIENT_OUT_RAW, raw, 1, true,
                                     &doc_seq, &err);
        if (p) {
            memd_wire_put_u64(p, id);
            have_doc = true;
        }
    }
    /* Every part begun has a slot to retire, whatever happened after it. */
    for (size_t i = 0; i < parts; i++)
        wait_one(c, first_seq + i, &first);
    if (have_doc) {
        int d = 0;
        wait_one(c, doc_seq, &d);
        if (first == 0)
            first = d;
        else if (raw->data) {
            free(raw->data);
            *raw = (memclient_raw){0};
        }
    }
    memclient_unlock(c);
    if (err && first == 0)
        return memclient_fail(err, "%s upload: %s", memd_wire_opcode_name(op),
                              memclient_strerror(err));
    return first;
}

/* A request with a memd_wire_ref payload. */
static int ref_call(memclient *c, uint16_t op, uint64_t id, uint32_t flags,
                    memclient_raw *raw)
{
    int r, err = 0;
    uint64_t seq;
    if (raw)
        *raw = (memclient_raw){0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, op, MEMD_WIRE_REF_SIZE,
                                 raw ? MEMCLIENT_OUT_RAW : MEMCLIENT_OUT_NONE, raw, raw ? 1 : 0,
                                 true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return memclient_fail(err, "%s request: %s", memd_wire_opcode_name(op),
                              memclient_strerror(err));
    }
    memd_wire_ref ref = {.id = id, .flags = flags};
    memd_wire_ref_put(p, &ref);
    return memclient_finish(c, seq);
}

static int bad_reply(memclient_raw *raw, uint16_t op)
{
    free(raw->data);
    raw->data = NULL;
    return memclient_fail(-EBADMSG, "malformed %s reply", memd_wire_opcode_name(op));
}

int memclient_page_size(memclient *c, uint32_t device, memd_scope scope, memd_class cls,
                        uint64_t *page_size, uint64_t *alignment, uint32_t *banks)
{
    if ((unsigned)scope >= MEMD_SCOPE_COUNT || (unsigned)cls >= MEMD_CLASS_COUNT)
        return memclient_fail(-EINVAL, "memclient_page_size: unknown scope %d or class %d",
                              (int)scope, (int)cls);
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_PAGE_SIZE, MEMD_WIRE_PAGE_REQ_SIZE,
                                 MEMCLIENT_OUT_RAW, &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return memclient_fail(err, "PAGE_SIZE request: %s", memclient_strerror(err));
    }
    memd_wire_page_req q = {.device = device, .scope = (uint8_t)scope, .cls = (uint8_t)cls};
    memd_wire_page_req_put(p, &q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    memd_wire_page_info pi;
    if (memd_wire_page_info_get(raw.data, raw.len, &pi) < 0 || raw.len != MEMD_WIRE_PAGE_INFO_SIZE)
        return bad_reply(&raw, MEMD_OP_PAGE_SIZE);
    free(raw.data);
    if (page_size)
        *page_size = pi.page_size;
    if (alignment)
        *alignment = pi.alignment;
    if (banks)
        *banks = pi.banks;
    return 0;
}

/* The page a model's buffers use: d->page_size, or the device's default for its arena. */
static int model_page(memclient *c, const memclient_model_desc *d, uint64_t *page)
{
    *page = d->page_size == MEMCLIENT_MODEL_ONE_PAGE ? 0 : d->page_size;
    /* The daemon checks it against the group; a plan with it as alignment needs this. */
    if (*page & (*page - 1))
        return memclient_fail(-EINVAL, "model %s: page size %llu is not a power of two",
                              d->name, (unsigned long long)*page);
    if (d->page_size)
        return 0;
    return memclient_page_size(c, d->device, d->scope, MEMD_CLASS_INTERNAL, page, NULL, NULL);
}

/* An activation's alignment in the plan and the document: it starts on a page. */
static uint64_t act_align(uint64_t align, uint64_t page)
{
    return align > page ? align : page;
}

/* ---- plans ---- */

int memclient_plan_submit(memclient *c, const memclient_plan_buffer *bufs, size_t n,
                          const memclient_plan_opts *opts, memclient_plan_info *out,
                          uint64_t *offsets)
{
    if (!out || (n && !bufs))
        return memclient_fail(-EINVAL, "memclient_plan_submit: NULL argument");
    if (n > MEMD_PLAN_MAX_BUFFERS)
        return memclient_fail(-E2BIG, "plan of %zu buffers: at most %u", n,
                              MEMD_PLAN_MAX_BUFFERS);
    memclient_plan_opts o = opts ? *opts : (memclient_plan_opts){0};
    if (o.flags & ~(unsigned)MEMCLIENT_PLAN_PRECOMPUTED)
        return memclient_fail(-EINVAL, "unknown plan flags 0x%x", o.flags);
    size_t len = MEMD_WIRE_PLAN_REQ_SIZE + n * MEMD_WIRE_PLAN_BUF_SIZE;
    uint8_t *doc = malloc(len);
    if (!doc)
        return memclient_fail(-ENOMEM, "out of memory for a plan of %zu buffers", n);
    memd_wire_plan_req req = {
        .count = (uint32_t)n, .budget_ms = o.budget_ms, .seed = o.seed,
        .flags = (o.flags & MEMCLIENT_PLAN_PRECOMPUTED) ? MEMD_PLAN_F_PRECOMPUTED : 0};
    uint8_t *p = memd_wire_plan_req_put(doc, &req);
    for (size_t i = 0; i < n; i++) {
        memd_wire_plan_buf b = {.lower = bufs[i].lower, .upper = bufs[i].upper,
                                .size = bufs[i].size, .align = bufs[i].alignment,
                                .offset = bufs[i].offset,
                                .flags = bufs[i].pinned ? MEMD_PLAN_BUF_F_PINNED : 0};
        p = memd_wire_plan_buf_put(p, &b);
    }
    memclient_raw raw;
    int r = doc_call(c, MEMD_OP_PLAN, doc, len, &raw);
    free(doc);
    if (r < 0)
        return r;
    memd_wire_plan_info pi;
    if (memd_wire_plan_info_get(raw.data, raw.len, &pi) < 0 || pi.count != n ||
        raw.len != MEMD_WIRE_PLAN_INFO_SIZE + (size_t)pi.count * 8)
        return bad_reply(&raw, MEMD_OP_PLAN);
    memclient_plan_info_from_wire(out, &pi);
    if (offsets)
        for (size_t i = 0; i < n; i++)
            offsets[i] = memd_wire_u64(raw.data + MEMD_WIRE_PLAN_INFO_SIZE + 8 * i);
    free(raw.data);
    return 0;
}

/* ---- models ---- */

static int decode_model(memclient_raw *raw, uint16_t op, memclient_model_info *out,
                        memclient_tensor_info *tensors, size_t cap)
{
    memd_wire_model_info mi;
    if (memd_wire_model_info_get(raw->data, raw->len, &mi) < 0 ||
        raw->len != MEMD_WIRE_MODEL_INFO_SIZE + (size_t)mi.ntensors * MEMD_WIRE_TENSOR_INFO_SIZE)
        return bad_reply(raw, op);
    if (out) {
        *out = (memclient_model_info){0}; /* plan_cached is the caller's */
        memclient_model_info_from_wire(out, &mi);
    }
    const uint8_t *p = raw->data + MEMD_WIRE_MODEL_INFO_SIZE;
    for (size_t i = 0; tensors && i < mi.ntensors && i < cap; i++, p += MEMD_WIRE_TENSOR_INFO_SIZE) {
        memd_wire_tensor_info ti;
        if (memd_wire_tensor_info_get(p, MEMD_WIRE_TENSOR_INFO_SIZE, &ti) < 0)
            return bad_reply(raw, op);
        memclient_tensor_info_from_wire(&tensors[i], &ti);
    }
    free(raw->data);
    raw->data = NULL;
    return (int)mi.ntensors;
}

/* The MODEL_LOAD document from a description and its derived lifetimes. A model of one
 * page sends the header of before page sizes (its page_size would be 0), which every
 * daemon reads. */
static uint8_t *model_doc(const memclient_model_desc *d, const memclient_tensor_life *life,
                          uint64_t plan_id, uint64_t page, size_t *len)
{
    size_t head = page ? MEMD_WIRE_MODEL_REQ_SIZE : MEMD_WIRE_MODEL_REQ_V1_SIZE;
    *len = head + d->ntensors * MEMD_WIRE_TENSOR_SIZE;
    uint8_t *doc = malloc(*len + MEMD_WIRE_MODEL_REQ_SIZE - head); /* room to put it whole */
    if (!doc)
        return NULL;
    memd_wire_model_req req = {.device = d->device, .scope = (uint8_t)d->scope,
                               .ntensors = (uint32_t)d->ntensors, .plan_id = plan_id,
                               .code_bytes = d->code_bytes, .page_size = page};
    memd_wire_strset(req.name, sizeof req.name, d->name);
    memd_wire_model_req_put(doc, &req);
    uint8_t *p = doc + head;
    for (size_t i = 0; i < d->ntensors; i++) {
        const memclient_tensor_life *l = &life[i];
        bool alias = l->alias_of != MEMCLIENT_NO_TENSOR;
        bool act = !alias && d->tensors[i].role == MEMCLIENT_TENSOR_ACTIVATION;
        memd_wire_tensor t = {.size = l->size, .align = act ? act_align(l->alignment, page)
                                                           : l->alignment,
                              .lower = act ? l->lower : 0, .upper = act ? l->upper : 0,
                              .role = alias ? MEMD_TENSOR_ALIAS : (uint8_t)d->tensors[i].role,
                              .alias_of = alias ? l->alias_of : MEMD_NO_TENSOR};
        p = memd_wire_tensor_put(p, &t);
    }
    return doc;
}

int memclient_model_load(memclient *c, const memclient_model_desc *d,
                         const memclient_plan_opts *opts, memclient_model_info *out,
                         memclient_tensor_info *tensors)
{
    if (!d || !out)
        return memclient_fail(-EINVAL, "memclient_model_load: NULL argument");
    size_t nlen = d->name ? strlen(d->name) : 0;
    if (nlen == 0 || nlen > MEMD_MODEL_NAME_MAX)
        return memclient_fail(nlen ? -ENAMETOOLONG : -EINVAL, "model name must have 1..%d "
                              "bytes", MEMD_MODEL_NAME_MAX);
    if ((unsigned)d->scope >= MEMD_SCOPE_COUNT)
        return memclient_fail(-EINVAL, "unknown scope %d", (int)d->scope);
    if (d->ntensors > MEMD_MODEL_MAX_TENSORS)
        return memclient_fail(-E2BIG, "a model has at most %u tensors",
                              MEMD_MODEL_MAX_TENSORS);
    memclient_tensor_life *life = calloc(d->ntensors ? d->ntensors : 1, sizeof *life);
    memclient_plan_buffer *bufs = calloc(d->ntensors ? d->ntensors : 1, sizeof *bufs);
    if (!life || !bufs) {
        free(life);
        free(bufs);
        return memclient_fail(-ENOMEM, "out of memory for model %s", d->name);
    }
    uint64_t page = 0;
    int r = model_page(c, d, &page);
    if (r == 0)
        r = memclient_model_lifetimes(d, life, NULL);
    size_t nb = 0;
    for (size_t i = 0; r == 0 && i < d->ntensors; i++) {
        if (d->tensors[i].role != MEMCLIENT_TENSOR_ACTIVATION ||
            life[i].alias_of != MEMCLIENT_NO_TENSOR)
            continue;
        bufs[nb++] = (memclient_plan_buffer){.lower = life[i].lower, .upper = life[i].upper,
                                             .size = life[i].size,
                                             .alignment = act_align(life[i].alignment, page),
                                             .offset = d->offsets ? d->offsets[i] : 0};
    }
    memclient_plan_opts po = opts ? *opts : (memclient_plan_opts){0};
    if (d->offsets)
        po.flags |= MEMCLIENT_PLAN_PRECOMPUTED;
    memclient_plan_info pi = {0};
    uint8_t *doc = NULL;
    size_t len = 0;
    /* The plan may be evicted between PLAN and MODEL_LOAD (a busy cache): once more. */
    for (int attempt = 0; r == 0 && attempt < 2; attempt++) {
        if ((r = memclient_plan_submit(c, bufs, nb, &po, &pi, NULL)) < 0)
            break;
        free(doc);
        if (!(doc = model_doc(d, life, pi.plan_id, page, &len))) {
            r = memclient_fail(-ENOMEM, "out of memory for model %s", d->name);
            break;
        }
        memclient_raw raw;
        r = doc_call(c, MEMD_OP_MODEL_LOAD, doc, len, &raw);
        if (r == -ENOENT && attempt == 0)
            continue;
        if (r == 0) {
            r = decode_model(&raw, MEMD_OP_MODEL_LOAD, out, tensors, d->ntensors);
            if (r >= 0) {
                out->plan_cached = pi.cached;
                out->page_size = page;
                r = 0;
            }
        }
        break;
    }
    free(doc);
    free(life);
    free(bufs);
    return r;
}

int memclient_model_query(memclient *c, uint64_t model_id, memclient_model_info *out,
                          memclient_tensor_info *tensors, size_t cap)
{
    if (cap && !tensors)
        return memclient_fail(-EINVAL, "memclient_model_query: tensors is NULL");
    memclient_raw raw;
    int r = ref_call(c, MEMD_OP_MODEL_INFO, model_id, 0, &raw);
    if (r < 0)
        return r;
    return decode_model(&raw, MEMD_OP_MODEL_INFO, out, tensors, cap);
}

int memclient_model_unload(memclient *c, uint64_t model_id, unsigned flags)
{
    if (flags & ~(unsigned)MEMCLIENT_MODEL_FORCE)
        return memclient_fail(-EINVAL, "unknown unload flags 0x%x", flags);
    return ref_call(c, MEMD_OP_MODEL_UNLOAD, model_id,
                    (flags & MEMCLIENT_MODEL_FORCE) ? MEMD_MODEL_F_FORCE : 0, NULL);
}

int memclient_model_set_ready(memclient *c, uint64_t model_id)
{
    return ref_call(c, MEMD_OP_MODEL_SET_READY, model_id, 0, NULL);
}

int memclient_model_wait(memclient *c, uint64_t model_id, int timeout_ms,
                         memclient_model_info *out, memclient_tensor_info *tensors, size_t cap)
{
    if (cap && !tensors)
        return memclient_fail(-EINVAL, "memclient_model_wait: tensors is NULL");
    if (timeout_ms < -1)
        return memclient_fail(-EINVAL, "memclient_model_wait: timeout of %d ms (-1: no limit)",
                              timeout_ms);
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_MODEL_WAIT, MEMD_WIRE_MODEL_WAIT_SIZE,
                                 MEMCLIENT_OUT_RAW, &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return memclient_fail(err, "MODEL_WAIT request: %s", memclient_strerror(err));
    }
    memd_wire_model_wait w = {
        .model_id = model_id,
        .timeout_ms = timeout_ms < 0 ? MEMD_MODEL_WAIT_FOREVER : (uint32_t)timeout_ms};
    memd_wire_model_wait_put(p, &w);
    /* memd holds the request that long by design, and answers an expired wait on its
     * next timer tick (250 ms) at the latest: the call timeout comes on top of both. */
    memclient_slot_at(c, seq)->hold_ms = timeout_ms < 0 ? -1 : (int)timeout_ms + 250;
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    return decode_model(&raw, MEMD_OP_MODEL_WAIT, out, tensors, cap);
}

int memclient_model_states(memclient *c, uint32_t device, memclient_snapshot *s)
{
    int r, err = 0;
    uint64_t seq;
    memclient_raw raw = {0};
    if ((r = memclient_lock(c)) < 0)
        return r;
    uint8_t *p = memclient_begin(c, MEMD_OP_MODEL_STATES, MEMD_WIRE_MODEL_STATES_REQ_SIZE,
                                 MEMCLIENT_OUT_RAW, &raw, 1, true, &seq, &err);
    if (!p) {
        memclient_unlock(c);
        return memclient_fail(err, "MODEL_STATES request: %s", memclient_strerror(err));
    }
    memd_wire_model_states_req q = {.device = device};
    memd_wire_model_states_req_put(p, &q);
    if ((r = memclient_finish(c, seq)) < 0)
        return r;
    uint32_t n = raw.len >= MEMD_WIRE_COUNT_SIZE ? memd_wire_u32(raw.data) : 0;
    if (raw.len < MEMD_WIRE_COUNT_SIZE ||
        raw.len != MEMD_WIRE_COUNT_SIZE + (size_t)n * MEMD_WIRE_MODEL_STATE_REC_SIZE)
        return bad_reply(&raw, MEMD_OP_MODEL_STATES);
    const uint8_t *q8 = raw.data + MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++, q8 += MEMD_WIRE_MODEL_STATE_REC_SIZE) {
        memd_wire_model_state_rec w;
        if (memd_wire_model_state_rec_get(q8, MEMD_WIRE_MODEL_STATE_REC_SIZE, &w) < 0)
            return bad_reply(&raw, MEMD_OP_MODEL_STATES);
        memclient_model_state st;
        memclient_model_state_from_wire(&st, &w);
        /* A model loaded or gone between the two requests has no record or no state. */
        for (size_t k = 0; k < s->nmodels; k++) {
            memclient_model_rec *m = &s->models[k];
            if (m->model_id != st.model_id)
                continue;
            m->state_known = 1;
            m->ready = st.ready;
            m->filler_session = st.filler_session;
            m->filler_pid = st.filler_pid;
            m->waiters = st.waiters;
        }
    }
    free(raw.data);
    return 0;
}

/* ---- instances ---- */

int memclient_instance_create(memclient *c, uint64_t model_id, memclient_instance *out,
                              memclient_tensor_addr *addrs, size_t cap)
{
    if (!out || (cap && !addrs))
        return memclient_fail(-EINVAL, "memclient_instance_create: NULL argument");
    memclient_raw raw;
    int r = ref_call(c, MEMD_OP_INSTANCE_CREATE, model_id, 0, &raw);
    if (r < 0)
        return r;
    memd_wire_instance_info ii;
    if (memd_wire_instance_info_get(raw.data, raw.len, &ii) < 0 ||
        raw.len != MEMD_WIRE_INSTANCE_INFO_SIZE + (size_t)ii.ntensors * MEMD_WIRE_TENSOR_ADDR_SIZE)
        return bad_reply(&raw, MEMD_OP_INSTANCE_CREATE);
    memclient_instance_from_wire(out, &ii);
    const uint8_t *p = raw.data + MEMD_WIRE_INSTANCE_INFO_SIZE;
    for (size_t i = 0; i < ii.ntensors && i < cap; i++, p += MEMD_WIRE_TENSOR_ADDR_SIZE) {
        memd_wire_tensor_addr ta;
        memd_wire_tensor_addr_get(p, MEMD_WIRE_TENSOR_ADDR_SIZE, &ta);
        memclient_tensor_addr_from_wire(&addrs[i], &ta);
    }
    free(raw.data);
    return (int)ii.ntensors;
}

int memclient_instance_release(memclient *c, uint64_t instance_id, unsigned flags)
{
    if (flags & ~(unsigned)MEMCLIENT_INSTANCE_FREE)
        return memclient_fail(-EINVAL, "unknown release flags 0x%x", flags);
    return ref_call(c, MEMD_OP_INSTANCE_RELEASE, instance_id,
                    (flags & MEMCLIENT_INSTANCE_FREE) ? MEMD_INST_F_FREE : 0, NULL);
}
