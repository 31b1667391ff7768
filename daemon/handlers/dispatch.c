/* memd daemon — single-request handlers and the opcode switch (see dispatch.h). */
#include "dispatch.h"

#include <errno.h>
#include <string.h>

#include "access.h"
#include "alloc.h"
#include "errmsg.h"
#include "memd-build-config.h"
#include "model.h"
#include "reply.h"
#include "store.h"
#include "wire.h"

/* A frame that does not decode: the reply names the opcode and the reason. */
static int malformed(memd_state *st, const memd_wire_hdr *h, memd_buf *out, int rc)
{
    memd_wire_error err = {0};
    const char *why = rc == -EBADMSG ? "payload length does not match the opcode"
                      : rc == -E2BIG ? "too many records"
                                     : "a field is out of range or a string lacks its NUL";
    memd_err_set(&err, rc, "malformed %s request (%u payload bytes): %s",
                 memd_wire_opcode_name(h->opcode), h->len, why);
    return memd_reply_fail(st, h, out, &err, true);
}

static int handle_error(memd_state *st, const memd_wire_hdr *h, memd_buf *out,
                        const memd_session *s, uint64_t handle, const memd_alloc *a)
{
    memd_wire_error err = {0};
    memd_access_error(s, handle, a, &err);
    return memd_reply_fail(st, h, out, &err, false);
}

static int op_hello(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                    const uint8_t *p, memd_buf *out)
{
    memd_wire_hello hello;
    int rc = memd_wire_hello_get_any(p, h->len, &hello); /* with or without reclaim fields */
    if (rc < 0)
        return malformed(st, h, out, rc);
    if (hello.min_version > MEMD_PROTO_VERSION) {
        memd_wire_error err = {0};
        memd_err_set(&err, -EPROTONOSUPPORT,
                     "client needs protocol version %u..%u; this memd speaks 1..%u",
                     hello.min_version, hello.max_version, MEMD_PROTO_VERSION);
        return memd_reply_fail(st, h, out, &err, true);
    }
    s->version = hello.max_version < MEMD_PROTO_VERSION ? hello.max_version : MEMD_PROTO_VERSION;
    memcpy(s->client_name, hello.client_name, sizeof s->client_name);
    memd_wire_welcome w = {.version = s->version, .session_id = s->id,
                           .max_frame = st->limits.max_frame, .ndevices = st->ndevs};
    memd_wire_strset(w.server_version, sizeof w.server_version, MEMD_VERSION);
    memd_wire_error err = {0};
    if ((rc = memd_store_hello(st, s, &hello, &w, &err)) < 0) /* token, reclaim */
        return memd_reply_fail(st, h, out, &err, false);
    /* A client that sent the short HELLO gets the short welcome it expects. */
    uint32_t wlen = h->len == MEMD_WIRE_HELLO_SIZE ? MEMD_WIRE_WELCOME_SIZE
                                                   : MEMD_WIRE_WELCOME_V1_SIZE;
    uint8_t full[MEMD_WIRE_WELCOME_SIZE];
    memd_wire_welcome_put(full, &w);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, wlen);
    if (!o)
        return -ENOMEM;
    memcpy(o, full, wlen);
    return 0;
}

static int op_alloc(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                    const uint8_t *p, memd_buf *out)
{
    memd_wire_alloc_req req;
    int rc = h->len == MEMD_WIRE_ALLOC_REQ_SIZE ? memd_wire_alloc_req_get(p, h->len, &req)
                                                : -EBADMSG;
    if (rc < 0)
        return malformed(st, h, out, rc);
    memd_alloc *a;
    memd_wire_error err = {0};
    rc = memd_model_check_alloc_name(req.name, &err);
    if (rc == 0)
        rc = memd_alloc_create(st, s, &req, &a, &err);
    if (rc < 0) {
        st->ctr.alloc_failures++;
        return memd_reply_fail(st, h, out, &err, false);
    }
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_BUFFER_SIZE);
    if (!o)
        return -ENOMEM; /* the allocation stays with the session, released at close */
    memd_wire_buffer b;
    memd_alloc_to_buffer(a, &b);
    memd_wire_buffer_put(o, &b);
    return 0;
}

static int op_free(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                   memd_buf *out)
{
    uint64_t handle;
    int rc = memd_wire_handle_get(p, h->len, &handle);
    if (rc < 0)
        return malformed(st, h, out, rc);
    memd_alloc *a = memd_alloc_find(st, handle);
    memd_hold *hold = a ? memd_alloc_hold_of(a, s) : NULL;
    /* Its own model's or instance's buffer (an admin may still reclaim another's). */
    if (hold && memd_models_managed(st, handle)) {
        memd_wire_error err = {0};
        memd_err_set(&err, -EBUSY, "handle %llu belongs to a loaded model or an instance: "
                     "release it with MODEL_UNLOAD or INSTANCE_RELEASE",
                     (unsigned long long)handle);
        return memd_reply_fail(st, h, out, &err, false);
    }
    if (hold)
        memd_hold_release(st, hold);
    else if (a && s->admin)
        memd_alloc_reclaim(st, a); /* an admin frees what it does not hold outright */
    else
        return handle_error(st, h, out, s, handle, a);
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}

/* QUERY and BANKS: the allocation named by the request's handle when this session may
 * see it; else NULL, with the error reply queued and the handler's result in *ret. */
static memd_alloc *accessible(memd_state *st, const memd_session *s, const memd_wire_hdr *h,
                              const uint8_t *p, memd_buf *out, int *ret)
{
    uint64_t handle;
    int rc = memd_wire_handle_get(p, h->len, &handle);
    if (rc < 0) {
        *ret = malformed(st, h, out, rc);
        return NULL;
    }
    memd_alloc *a = memd_alloc_find(st, handle);
    if (!a || !memd_may_access(s, a)) {
        *ret = handle_error(st, h, out, s, handle, a);
        return NULL;
    }
    return a;
}

static int op_query(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                    const uint8_t *p, memd_buf *out)
{
    int ret;
    memd_alloc *a = accessible(st, s, h, p, out, &ret);
    if (!a)
        return ret;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_ALLOC_INFO_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_alloc_info info;
    memd_alloc_to_info(st, a, &info);
    memd_wire_alloc_info_put(o, &info);
    return 0;
}

static int op_banks(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                    const uint8_t *p, memd_buf *out)
{
    int ret;
    memd_alloc *a = accessible(st, s, h, p, out, &ret);
    if (!a)
        return ret;
    uint32_t n = a->pl.banks;
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_HANDLE_SIZE);
    if (!o)
        return -ENOMEM;
    o = memd_wire_count_put(o, n);
    const memd_device *d = st->devs[a->dev].dev;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t addr = 0;
        /* Cannot fail for i < banks of a live placement; 0 would show a bug plainly. */
        (void)memd_device_bank_address(d, a->pl.kind, i, a->pl.address, &addr);
        o = memd_wire_put_u64(o, addr);
    }
    return 0;
}

int memd_dispatch(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                  const uint8_t *payload, memd_buf *out)
{
    st->ctr.requests++;
    st->now_ns = 0;
    s->requests++;
    switch (h->opcode) {
    case MEMD_OP_HELLO: return op_hello(st, s, h, payload, out);
    case MEMD_OP_ALLOC: return op_alloc(st, s, h, payload, out);
    case MEMD_OP_ALLOC_BATCH: return memd_op_alloc_batch(st, s, h, payload, out);
    case MEMD_OP_FREE: return op_free(st, s, h, payload, out);
    case MEMD_OP_FREE_BATCH: return memd_op_free_batch(st, s, h, payload, out);
    case MEMD_OP_QUERY: return op_query(st, s, h, payload, out);
    case MEMD_OP_BANKS: return op_banks(st, s, h, payload, out);
    case MEMD_OP_DUMP: return memd_op_dump(st, s, h, payload, out);
    case MEMD_OP_UPLOAD: return memd_op_upload(st, s, h, payload, out);
    case MEMD_OP_PLAN: return memd_op_plan(st, s, h, payload, out);
    case MEMD_OP_MODEL_LOAD: return memd_op_model_load(st, s, h, payload, out);
    case MEMD_OP_MODEL_UNLOAD: return memd_op_model_unload(st, s, h, payload, out);
    case MEMD_OP_MODEL_INFO: return memd_op_model_info(st, s, h, payload, out);
    case MEMD_OP_INSTANCE_CREATE: return memd_op_instance_create(st, s, h, payload, out);
    case MEMD_OP_INSTANCE_RELEASE: return memd_op_instance_release(st, s, h, payload, out);
    default: {
        memd_wire_error err = {0};
        memd_err_set(&err, -EBADRQC, "unknown opcode %u (this memd knows 1..%u)", h->opcode,
                     MEMD_OP_OPCODE_COUNT - 1);
        return memd_reply_fail(st, h, out, &err, true);
    }
    }
}
