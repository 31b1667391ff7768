/* memd daemon — post-mortems of out-of-memory refusals (postmortem.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "holders.h"
#include "postmortem.h"

#define NS_PER_MS 1000000ull
#define MINUTE_NS (60000ull * NS_PER_MS)

static memd_postmortems *books(memd_state *st)
{
    if (!st->postmortems) {
        st->postmortems = calloc(1, sizeof *st->postmortems);
        if (st->postmortems)
            st->postmortems->next_id = 1;
    }
    return st->postmortems;
}

static bool out_of_memory(int rc, const memd_error *err)
{
    return (rc == -ENOMEM && (err->detail == MEMD_ERR_DETAIL_NOMEM ||
                              err->detail == MEMD_ERR_DETAIL_LIMIT)) ||
           rc == -EDQUOT;
}

/* Within the rate limits? At most one per interval per uid and per_minute in a minute,
 * counted over the snapshots kept and pending (a failure path, not the hot one: at most
 * limits.postmortems + MEMD_PM_PENDING to look at). */
static bool allowed(const memd_state *st, const memd_postmortems *pm, uint32_t uid,
                    uint64_t now)
{
    uint64_t interval = (uint64_t)st->limits.postmortem_interval_ms * NS_PER_MS;
    uint32_t per_minute = st->limits.postmortems_per_minute, recent = 0;
    for (uint32_t i = 0; i < pm->nsaved + pm->npending; i++) {
        bool saved = i < pm->nsaved;
        uint64_t t = saved ? pm->saved[i].time_ns : pm->pending[i - pm->nsaved].time_ns;
        uint32_t u = saved ? pm->saved[i].uid : pm->pending[i - pm->nsaved].uid;
        if (u == uid && t + interval > now)
            return false;
        recent += t + MINUTE_NS > now;
    }
    return per_minute == 0 || recent < per_minute;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void memd_postmortem_capture(memd_state *st, const memd_session *s,
                             const memd_alloc_request *w, const memd_alloc_banks *b, int rc,
                             memd_error *err)
{
    int dev = memd_state_dev_index(st, w->device);
    if (st->limits.postmortems == 0 || !out_of_memory(rc, err) || dev < 0 ||
        err->room.kind >= MEMD_KIND_COUNT || w->cls >= MEMD_CLASS_COUNT)
        return;
    const memd_device_spec *spec = st->devs[dev].spec;
    const memd_bank_group_spec *g = &spec->groups[err->room.kind];
    memd_postmortems *pm = books(st);
    uint64_t now = memd_state_now(st);
    if (!pm || pm->npending == MEMD_PM_PENDING || err->room.region >= g->nregions ||
        !allowed(st, pm, s->uid, now))
        return;
    memd_postmortem *p = &pm->pending[pm->npending++];
    memset(p, 0, sizeof *p);
    p->id = pm->next_id++;
    p->time_ns = now;
    p->hist_next = memd_history_next_seq(st);
    p->status = rc;
    p->detail = err->detail;
    p->room = err->room;
    p->alignment = w->alignment;
    p->region_base = g->regions[err->room.region].base;
    p->region_size = g->regions[err->room.region].size;
    p->banks = b && b->nset ? b->nset : w->banks ? w->banks : g->banks;
    p->scope = w->scope;
    p->dir = (uint8_t)spec->policy[err->room.kind][w->cls].dir;
    p->admin = s->admin;
    p->session_id = s->id;
    p->pid = s->pid;
    p->uid = s->uid;
    copy_str(p->region_name, sizeof p->region_name, g->regions[err->room.region].name);
    copy_str(p->comm, sizeof p->comm, s->comm);
    copy_str(p->client_name, sizeof p->client_name, s->client_name);
    copy_str(p->cgroup, sizeof p->cgroup, s->cgroup);
    memd_region_holder top[MEMD_PM_HOLDERS];
    p->nholders = (uint32_t)memd_region_top_holders(st, (uint32_t)dev, err->room.kind,
                                                    err->room.region, top, MEMD_PM_HOLDERS);
    for (uint32_t i = 0; i < p->nholders; i++) {
        const memd_session *h = top[i].s;
        p->holders[i] = (memd_pm_holder){.bytes = top[i].bytes, .session_id = h->id,
                                         .pid = h->pid, .uid = h->uid};
        copy_str(p->holders[i].comm, sizeof p->holders[i].comm, h->comm);
        copy_str(p->holders[i].client_name, sizeof p->holders[i].client_name, h->client_name);
    }
    int nfree = memd_device_region_largest_free(st->devs[dev].dev, err->room.kind,
                                                err->room.region, MEMD_PM_BLOCKS, p->free_addr,
                                                p->free_size);
    p->nfree = nfree > 0 ? (uint32_t)nfree : 0;
    err->room.postmortem = p->id;
    /* The message last: the caller appends the id to its log line, not to the reply. */
    copy_str(p->message, sizeof p->message, err->msg);
}

const memd_postmortem *memd_postmortem_pending(const memd_state *st, uint32_t *n)
{
    *n = st->postmortems ? st->postmortems->npending : 0;
    return st->postmortems ? st->postmortems->pending : NULL;
}

void memd_postmortem_settled(memd_state *st)
{
    if (st->postmortems)
        st->postmortems->npending = 0;
}

int memd_postmortem_keep(memd_state *st, const memd_pm_saved *in)
{
    memd_postmortems *pm = books(st);
    uint32_t bound = st->limits.postmortems;
    if (!pm || bound == 0) {
        free(in->data);
        return -ENOMEM;
    }
    /* The oldest go first (a bound lowered by a reload drops the surplus too), then the
     * array takes the bound's size. */
    memd_pm_saved *v = pm->saved;
    while (pm->nsaved >= bound) {
        if (pm->ndropped < MEMD_PM_PENDING)
            pm->dropped[pm->ndropped++] = v[0].id;
        free(v[0].data);
        memmove(v, v + 1, --pm->nsaved * sizeof *v);
    }
    if (pm->cap != bound) {
        if (!(v = realloc(pm->saved, (size_t)bound * sizeof *v))) {
            free(in->data);
            return -ENOMEM;
        }
        pm->saved = v;
        pm->cap = bound;
    }
    v[pm->nsaved++] = *in;
    if (in->id >= pm->next_id)
        pm->next_id = in->id + 1;
    return 0;
}

memd_pm_saved *memd_postmortem_saved(memd_state *st, uint32_t *n)
{
    *n = st->postmortems ? st->postmortems->nsaved : 0;
    return st->postmortems ? st->postmortems->saved : NULL;
}

const memd_pm_saved *memd_postmortem_find(const memd_state *st, uint64_t id)
{
    const memd_postmortems *pm = st->postmortems;
    for (uint32_t i = 0; pm && i < pm->nsaved; i++)
        if (pm->saved[i].id == id)
            return &pm->saved[i];
    return NULL;
}

uint64_t memd_postmortem_take_dropped(memd_state *st)
{
    memd_postmortems *pm = st->postmortems;
    return pm && pm->ndropped ? pm->dropped[--pm->ndropped] : 0;
}

void memd_postmortem_free(memd_state *st)
{
    memd_postmortems *pm = st->postmortems;
    if (!pm)
        return;
    for (uint32_t i = 0; i < pm->nsaved; i++)
        free(pm->saved[i].data);
    free(pm->saved);
    free(pm);
    st->postmortems = NULL;
}
