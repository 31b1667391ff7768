/* memd reports: figures derived from a snapshot. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banklist.h"
#include "report.h"

double memd_report_fragmentation(const memclient_stats *st)
{
    if (st->free == 0)
        return 0.0;
    return 100.0 * (1.0 - (double)st->largest_free / (double)st->free);
}

double memd_report_group_fragmentation(const memclient_snapshot *s, const memclient_group *g)
{
    uint64_t free = 0, largest = 0;
    for (size_t r = 0; r < s->nregions; r++) {
        const memclient_region *reg = &s->regions[r];
        if (reg->device != g->device || reg->kind != g->kind || !reg->allocatable)
            continue;
        free += reg->stats.free;
        largest += reg->stats.largest_free;
    }
    if (free == 0)
        return 0.0;
    return 100.0 * (1.0 - (double)largest / (double)free);
}

double memd_report_gap_pct(uint64_t arena, uint64_t lower_bound)
{
    if (lower_bound == 0)
        return 0.0;
    return 100.0 * ((double)arena - (double)lower_bound) / (double)lower_bound;
}

const char *memd_report_region_name(const memclient_snapshot *s, uint32_t device,
                                    memd_kind kind, uint32_t region, char *buf, size_t len)
{
    const memclient_region *r = memclient_snapshot_region(s, device, kind, region);
    if (r)
        return r->name;
    snprintf(buf, len, "#%" PRIu32, region);
    return buf;
}

bool memd_report_subdev_shown(const memclient_snapshot *s, size_t i)
{
    for (size_t d = 0; d < s->ndevices; d++)
        if (s->devices[d].id == s->subdevs[i].device)
            return true;
    return false;
}

size_t memd_report_subdevs_shown(const memclient_snapshot *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nsubdevs; i++)
        n += memd_report_subdev_shown(s, i);
    return n;
}

char *memd_report_subdev_banks(const memclient_subdev_rec *d)
{
    if (!d->bank_ids)
        return strdup(d->banks);
    /* An item is at most ",4294967295-4294967295" (22 bytes): this never cuts. */
    size_t cap = (size_t)d->nbanks * 24 + 4;
    char *buf = malloc(cap);
    if (buf)
        memd_format_bank_list(d->bank_ids, d->nbanks, buf, cap);
    return buf;
}
