/* memd daemon — POSTMORTEM, and the encoding of captured post-mortems (pm_reply.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "dispatch.h"
#include "history.h"
#include "log.h"
#include "malformed.h"
#include "pm_reply.h"
#include "postmortem.h"
#include "reply.h"
#include "wire.h"

_Static_assert(MEMD_PM_HOLDERS == MEMD_HOLDERS_MAX, "holders kept = the wire's bound");
_Static_assert(MEMD_PM_BLOCKS == MEMD_PM_BLOCKS_MAX, "free blocks kept = the wire's bound");

/* How far back the recorder is searched for the device's last events: a bounded walk
 * on a failure path that the rate limit keeps rare. */
#define EVENT_WINDOW 4096u

typedef struct last_events {
    uint64_t until;                /* records from this one on came after the refusal */
    memd_wire_hist_event ev[MEMD_PM_EVENTS_MAX]; /* a ring: the last ones seen */
    uint32_t n, head;
} last_events;

static int keep_event(void *ctx, const memd_hist_view *v)
{
    last_events *le = ctx;
    if (v->seq >= le->until)
        return -1;
    memd_hist_view_to_wire(v, &le->ev[(le->head + le->n) % MEMD_PM_EVENTS_MAX]);
    if (le->n < MEMD_PM_EVENTS_MAX)
        le->n++;
    else
        le->head = (le->head + 1) % MEMD_PM_EVENTS_MAX;
    return 0;
}

static void to_wire(const memd_postmortem *p, uint32_t nevents, memd_wire_postmortem *w)
{
    *w = (memd_wire_postmortem){
        .id = p->id, .time_ns = p->time_ns, .requested = p->room.requested,
        .size_per_bank = p->room.size_per_bank, .alignment = p->alignment,
        .region_base = p->region_base, .region_size = p->region_size, .allocated = p->room.allocated, .free = p->room.free,
        .largest_free = p->room.largest_free, .status = p->status, .detail = p->detail,
        .device = p->room.device, .banks = p->banks, .session_id = p->session_id,
        .pid = p->pid, .uid = p->uid, .nholders = p->nholders, .nfree = p->nfree,
        .nevents = nevents, .cls = p->room.cls, .kind = p->room.kind,
        .region = p->room.region, .scope = p->scope, .dir = p->dir};
    memd_wire_strset(w->region_name, sizeof w->region_name, p->region_name);
    memd_wire_strset(w->comm, sizeof w->comm, p->comm);
    memd_wire_strset(w->client_name, sizeof w->client_name, p->client_name);
    memd_wire_strset(w->cgroup, sizeof w->cgroup, p->cgroup);
    memd_wire_strset(w->message, sizeof w->message, p->message);
}

/* p as a POSTMORTEM get reply's payload, in out (its data malloc'd). 0 or -ENOMEM. */
static int encode(const memd_state *st, const memd_postmortem *p, memd_pm_saved *out)
{
    last_events *le = calloc(1, sizeof *le);
    if (!le)
        return -ENOMEM;
    /* The events its session could read with HISTORY: an admin's, all; others', theirs. */
    memd_session viewer = {.uid = p->uid, .admin = p->admin};
    memd_hist_filter f = {.device = p->room.device, .client = ""};
    uint64_t lost;
    le->until = p->hist_next;
    memd_history_read(st, &viewer, p->hist_next > EVENT_WINDOW ? p->hist_next - EVENT_WINDOW : 1,
                      0, &f, &lost, keep_event, le);
    size_t len = MEMD_WIRE_POSTMORTEM_SIZE + (size_t)p->nholders * MEMD_WIRE_HOLDER_REC_SIZE +
                 (size_t)p->nfree * MEMD_WIRE_PM_BLOCK_SIZE +
                 (size_t)le->n * MEMD_WIRE_HIST_EVENT_SIZE;
    uint8_t *data = malloc(len), *o = data;
    if (!data) {
        free(le);
        return -ENOMEM;
    }
    memd_wire_postmortem w;
    to_wire(p, le->n, &w);
    o = memd_wire_postmortem_put(o, &w);
    for (uint32_t i = 0; i < p->nholders; i++) {
        const memd_pm_holder *h = &p->holders[i];
        memd_wire_holder_rec r = {.bytes = h->bytes, .session_id = h->session_id,
                                  .pid = h->pid, .uid = h->uid};
        memd_wire_strset(r.comm, sizeof r.comm, h->comm);
        memd_wire_strset(r.client_name, sizeof r.client_name, h->client_name);
        o = memd_wire_holder_rec_put(o, &r);
    }
    for (uint32_t i = 0; i < p->nfree; i++)
        o = memd_wire_pm_block_put(o, &(memd_wire_pm_block){.address = p->free_addr[i],
                                                             .size = p->free_size[i]});
    for (uint32_t i = 0; i < le->n; i++)
        o = memd_wire_hist_event_put(o, &le->ev[(le->head + i) % MEMD_PM_EVENTS_MAX]);
    free(le);
    *out = (memd_pm_saved){.id = p->id, .time_ns = p->time_ns, .uid = p->uid, .data = data,
                           .len = len};
    return 0;
}

void memd_pm_settle(memd_state *st)
{
    uint32_t n;
    const memd_postmortem *p = memd_postmortem_pending(st, &n);
    for (uint32_t i = 0; i < n; i++) {
        memd_pm_saved s;
        if (encode(st, &p[i], &s) < 0 || memd_postmortem_keep(st, &s) < 0)
            memd_log(LOG_WARNING, "post-mortem %llu: out of memory, not kept",
                     (unsigned long long)p[i].id);
    }
    memd_postmortem_settled(st);
}

static bool visible(const memd_session *s, const memd_pm_saved *v)
{
    return s->admin || v->uid == s->uid;
}

int memd_op_postmortem(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                       const uint8_t *p, memd_buf *out)
{
    memd_wire_pm_req req;
    int rc = memd_wire_pm_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_pm_settle(st);
    uint32_t n, count = 0;
    const memd_pm_saved *v = memd_postmortem_saved(st, &n);
    if (req.id != 0) {
        const memd_pm_saved *one = memd_postmortem_find(st, req.id);
        if (!one || !visible(s, one)) {
            memd_error err;
            memd_error_reset(&err);
            memd_error_set(&err, -ENOENT, "no post-mortem %llu%s", (unsigned long long)req.id,
                           s->admin ? "" : " of this uid");
            return memd_reply_fail(st, h, out, &err, false);
        }
        uint8_t *o = memd_reply_begin(out, h->opcode, h->id, (uint32_t)one->len);
        if (!o)
            return -ENOMEM;
        memcpy(o, one->data, one->len);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++)
        count += visible(s, &v[i]);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id,
                                  MEMD_WIRE_COUNT_SIZE + count * MEMD_WIRE_POSTMORTEM_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_put_u32(o, count);
    memd_wire_put_u32(o + 4, 0);
    o += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++)
        if (visible(s, &v[i])) {
            memcpy(o, v[i].data, MEMD_WIRE_POSTMORTEM_SIZE); /* the record, not the rest */
            o += MEMD_WIRE_POSTMORTEM_SIZE;
        }
    return 0;
}
