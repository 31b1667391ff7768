/* memd daemon — CONTEXT (what a session's requests are about) and HISTORY (a page of the
 * flight recorder, core/history.h). */
#include <errno.h>
#include <string.h>

#include "convert.h"
#include "dispatch.h"
#include "error.h"
#include "history.h"
#include "malformed.h"
#include "reply.h"
#include "text.h"
#include "wire.h"

/* The most records one reply carries (~860 KB): well under the client's reply limit. */
#define HISTORY_PAGE 1024u

/* 0, or -EINVAL with err naming the field: UTF-8 without control characters, but for
 * the line breaks between a stack's frames (lines true). */
static int check_text(const char *field, const char *s, size_t cap, bool lines,
                      memd_error *err)
{
    char line[MEMD_STACK_MAX];
    size_t len = strnlen(s, cap);
    memcpy(line, s, len);
    line[len] = '\0';
    for (size_t i = 0; lines && i < len; i++)
        if (line[i] == '\n')
            line[i] = ' ';
    size_t at;
    const char *why;
    if (memd_text_check(line, &at, &why) < 0)
        return memd_error_set(err, -EINVAL, "%s: %s at byte %zu", field, why, at);
    return 0;
}

int memd_op_context(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                    memd_buf *out)
{
    memd_wire_context_req req;
    int rc = memd_wire_context_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    if ((rc = check_text("context", req.context, sizeof req.context, false, &err)) < 0 ||
        (rc = check_text("stack", req.stack, sizeof req.stack, true, &err)) < 0)
        return memd_reply_fail(st, h, out, &err, false);
    if ((rc = memd_history_set_context(st, s, req.context, req.stack)) < 0)
        memd_error_set(&err, rc, "the flight recorder is out of room for contexts");
    return memd_reply_done(st, h, out, &err, rc);
}

typedef struct page {
    memd_buf *out;
    uint32_t count;
    uint32_t rec_size;             /* the whole hist_event, or its v1 part */
} page;

static void who_to_wire(const memd_hist_who *w, memd_wire_hist_event *e)
{
    e->session_id = w->session_id;
    e->pid = w->pid;
    e->uid = w->uid;
    memcpy(e->comm, w->comm, sizeof e->comm);
    memcpy(e->client_name, w->client_name, sizeof e->client_name);
}

/* Copies at most cap - 1 bytes of s[0, len) into a NUL-padded field of cap bytes. */
static void put_str(char *dst, size_t cap, const char *s, size_t len)
{
    if (len > cap - 1)
        len = cap - 1;
    memcpy(dst, s, len);
}

/* The fields of a record about no single buffer's hold (core's memd_hist_obj). */
static void object_to_wire(const memd_hist_rec *r, memd_wire_hist_event *e)
{
    e->bytes = r->size_per_bank;
    switch (r->type) {
    case MEMD_HIST_POOL_REPORT:
        e->handle = r->handle;
        e->address = r->address;
        e->count = r->banks;
        e->added = r->actor;
        e->removed = (uint32_t)r->status;
        break;
    case MEMD_HIST_INSTANCE_CREATE:
    case MEMD_HIST_INSTANCE_RELEASE:
        e->model_id = r->address;
        e->id = r->handle;
        break;
    case MEMD_HIST_MODEL_LOAD:
    case MEMD_HIST_MODEL_UNLOAD:
        e->id = r->handle;
        break;
    default: /* the sub-device's */
        e->count = r->banks;
        break;
    }
}

void memd_hist_view_to_wire(const memd_hist_view *v, memd_wire_hist_event *out)
{
    const memd_hist_rec *r = v->rec;
    bool fail = r->type == MEMD_HIST_FAIL;
    memd_wire_hist_event e = {
        .seq = v->seq, .time_ns = r->time_ns, .type = r->type, .cls = r->cls,
        .kind = r->kind, .region = r->region, .device = r->device};
    if (r->type > MEMD_HIST_REVOKE) {
        object_to_wire(r, &e);
    } else {
        e.handle = fail ? 0 : r->handle;
        e.address = r->address;
        e.size_per_bank = r->size_per_bank;
        e.bytes = fail ? r->handle : r->size_per_bank * r->banks;
        e.status = r->status;
        e.banks = r->banks;
    }
    who_to_wire(v->who, &e);
    if (v->actor) {
        e.actor_session = v->actor->session_id;
        e.actor_pid = v->actor->pid;
        e.actor_uid = v->actor->uid;
    }
    put_str(e.name, sizeof e.name, v->name, strlen(v->name));
    put_str(e.context, sizeof e.context, v->context, v->context_len);
    const char *stack = v->context[v->context_len] ? v->context + v->context_len + 1 : "";
    put_str(e.stack, sizeof e.stack, stack, strlen(stack));
    *out = e;
}

static int put_record(void *ctx, const memd_hist_view *v)
{
    page *pg = ctx;
    uint8_t *p = memd_buf_append(pg->out, pg->rec_size);
    if (!p)
        return -ENOMEM;
    memd_wire_hist_event e;
    memd_hist_view_to_wire(v, &e);
    uint8_t whole[MEMD_WIRE_HIST_EVENT_SIZE];
    memd_wire_hist_event_put(whole, &e);
    memcpy(p, whole, pg->rec_size); /* a v1 reader gets the fields it knows */
    pg->count++;
    return 0;
}

int memd_op_history(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                    memd_buf *out)
{
    memd_wire_history_req req;
    int rc = memd_wire_history_req_get_any(p, h->len, &req); /* 64 bytes: no flags */
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    size_t hdr_off = out->len;
    uint8_t *info = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_HISTORY_INFO_SIZE);
    if (!info)
        return -ENOMEM;
    size_t info_off = (size_t)(info - out->data);
    memd_hist_filter f = {.since_ns = req.since_ns, .device = req.device, .pid = req.pid,
                          .client = req.client, .all = req.flags & MEMD_HISTORY_F_ALL};
    page pg = {.out = out, .rec_size = f.all ? MEMD_WIRE_HIST_EVENT_SIZE
                                             : MEMD_WIRE_HIST_EVENT_V1_SIZE};
    memd_wire_history_info hi = {.capacity = memd_history_capacity(st),
                                 .record_size = sizeof(memd_hist_rec)};
    uint32_t max = req.max == 0 || req.max > HISTORY_PAGE ? HISTORY_PAGE : req.max;
    hi.next_seq = memd_history_read(st, s, req.since, max, &f, &hi.lost, put_record, &pg);
    hi.count = pg.count;
    memd_wire_history_info_put(out->data + info_off, &hi); /* out->data may have moved */
    memd_reply_patch_len(out, hdr_off);
    return 0;
}
