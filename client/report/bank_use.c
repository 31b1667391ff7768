/* memd reports: a bank group's use over its banks and an allocation's device bytes, when
 * bank subsets make banks differ (see report.h). */
#include "report.h"

uint64_t memd_report_bank_allocated(const memclient_snapshot *s, const memclient_group *g,
                                    uint32_t bank)
{
    uint64_t in_bank = 0;
    bool seen = false;
    for (size_t i = 0; i < s->nbank_use; i++) {
        const memclient_bank_use *u = &s->bank_use[i];
        if (u->device == g->device && u->kind == g->kind && u->bank == bank) {
            in_bank += u->stats.allocated;
            seen = true;
        }
    }
    return seen ? in_bank : g->stats.allocated;
}

void memd_report_group_use(const memclient_snapshot *s, const memclient_group *g,
                           memd_report_group_bytes *out)
{
    /* Lockstep: every bank holds the group's map. */
    *out = (memd_report_group_bytes){.used = g->stats.allocated * g->banks,
                                     .total = g->stats.total * g->banks,
                                     .used_max_bank = g->stats.allocated,
                                     .used_min_bank = g->stats.allocated,
                                     .total_per_bank = g->stats.total};
    if (!s->nbank_use || !g->banks)
        return;
    /* Per bank: the BANK records, one per bank and allocatable region. */
    uint64_t used = 0, max = 0, min = UINT64_MAX;
    for (uint32_t b = 0; b < g->banks; b++) {
        uint64_t in_bank = memd_report_bank_allocated(s, g, b);
        used += in_bank;
        max = in_bank > max ? in_bank : max;
        min = in_bank < min ? in_bank : min;
    }
    out->used = used;
    out->used_max_bank = max;
    out->used_min_bank = min;
}

void memd_report_region_bank_range(const memclient_snapshot *s, const memclient_region *r,
                                   uint64_t *min, uint64_t *max)
{
    *min = UINT64_MAX;
    *max = 0;
    for (size_t i = 0; i < s->nbank_use; i++) {
        const memclient_bank_use *u = &s->bank_use[i];
        if (u->device != r->device || u->kind != r->kind || u->region != r->region)
            continue;
        *min = u->stats.allocated < *min ? u->stats.allocated : *min;
        *max = u->stats.allocated > *max ? u->stats.allocated : *max;
    }
    if (*min == UINT64_MAX)
        *min = *max = r->stats.allocated;
}

uint64_t memd_report_alloc_bytes(const memclient_snapshot *s, const memclient_alloc_info *a)
{
    if (a->buf.bank_mode != MEMD_BANKS_ALL) {
        /* The bank set's size: its ALLOC_BANK entries when dumped, else the spread. */
        uint64_t n = 0;
        for (size_t i = 0; i < s->nalloc_banks; i++)
            n += s->alloc_banks[i].handle == a->buf.handle;
        return a->buf.size_per_bank * (n ? n : a->buf.banks);
    }
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].device == a->device && s->groups[i].kind == a->buf.kind)
            return a->buf.size_per_bank * s->groups[i].banks;
    return a->buf.size_per_bank;
}

const memclient_group *memd_report_device_group(const memclient_snapshot *s, uint32_t device,
                                                size_t *i, memd_report_group_bytes *u)
{
    while (*i < s->ngroups) {
        const memclient_group *g = &s->groups[(*i)++];
        if (g->device == device) {
            memd_report_group_use(s, g, u);
            return g;
        }
    }
    return NULL;
}
