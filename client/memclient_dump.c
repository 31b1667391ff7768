/* libmemclient: DUMP replies -> memclient_snapshot.
 * Two passes over the tagged records: count each kind (checking every tag and size), then
 * allocate the arrays once and decode into them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

/* One decoder per record tag: each decodes its record (n bytes at p) into the next
 * element of its snapshot array, which the first pass sized. Most records are a plain
 * copy (memclient_wire_gen.c). */
#define COPY_DECODER(rec, mirror, array, count)                                            \
    static int dec_##rec(memclient_snapshot *s, const uint8_t *p, size_t n)                \
    {                                                                                      \
        memd_wire_##rec w;                                                                 \
        int r = memd_wire_##rec##_get(p, n, &w);                                           \
        if (r == 0)                                                                        \
            memclient_##mirror##_from_wire(&s->array[s->count++], &w);                     \
        return r;                                                                          \
    }

COPY_DECODER(device_rec, device, devices, ndevices)
COPY_DECODER(group_rec, group, groups, ngroups)
COPY_DECODER(region_rec, region, regions, nregions)
COPY_DECODER(alloc_info, alloc_info, allocs, nallocs)
COPY_DECODER(block_rec, block, blocks, nblocks)
COPY_DECODER(session_rec, session_rec, sessions, nsessions)
COPY_DECODER(plan_rec, plan_rec, plans, nplans)
COPY_DECODER(model_rec, model_rec, models, nmodels)
COPY_DECODER(instance_rec, instance_rec, instances, ninstances)
COPY_DECODER(bank_rec, bank_use, bank_use, nbank_use)
COPY_DECODER(alloc_bank_rec, alloc_bank, alloc_banks, nalloc_banks)
COPY_DECODER(subdev_rec, subdev_rec, subdevs, nsubdevs)
COPY_DECODER(session_use, session_use, usage, nusage)
COPY_DECODER(pool_rec, pool_rec, pools, npools)
COPY_DECODER(limit_rec, limit, limits, nlimits)
COPY_DECODER(failures_rec, failures, failures, nfailures)
COPY_DECODER(range_rec, range, ranges, nranges)
#undef COPY_DECODER

static int dec_server_rec(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_server_rec w;
    int r = memd_wire_server_rec_get(p, n, &w);
    if (r == 0)
        memclient_server_from_wire(&s->server, &w);
    return r;
}

/* The window of the SUBDEV record before it (the parser checks that). */
static int dec_subdev_window(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_subdev_window_rec w;
    int r = memd_wire_subdev_window_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_subdev_rec *d = &s->subdevs[s->nsubdevs - 1];
    d->window = w.bytes;
    d->window_start = w.start;
    d->window_region = w.region;
    d->window_allocated = w.allocated;
    d->window_allocations = w.allocations;
    return 0;
}

/* The whole bank list of the SUBDEV record just before it (the parser checks that). */
static int dec_subdev_banks(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    uint32_t count;
    const uint8_t *ids;
    int r = memd_wire_subdev_banks_get(p, n, &count, &ids);
    if (r < 0)
        return r;
    memclient_subdev_rec *d = &s->subdevs[s->nsubdevs - 1];
    if (count != d->nbanks)
        return -EBADMSG;
    /* A dump of one device carries every sub-device, but only that device's groups. */
    for (size_t i = 0; i < s->ngroups && count; i++)
        if (s->groups[i].device == d->device && s->groups[i].kind == d->kind &&
            memd_wire_u32(ids + 4 * (count - 1)) >= s->groups[i].banks)
            return -EINVAL;
    uint32_t *o = s->subdev_bank_ids + s->nsubdev_bank_ids;
    for (uint32_t i = 0; i < count; i++)
        o[i] = memd_wire_u32(ids + 4 * i);
    s->nsubdev_bank_ids += count;
    d->bank_ids = o;
    return 0;
}

static int dec_suballoc_rec(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_suballoc_rec w;
    int r = memd_wire_suballoc_rec_get(p, n, &w);
    if (r < 0)
        return r;
    /* It follows its pool's record. */
    if (s->npools == 0 || s->pools[s->npools - 1].handle != w.pool)
        return -EBADMSG;
    memclient_suballoc_rec *o = &s->suballocs[s->nsuballocs++];
    memclient_suballoc_rec_from_wire(o, &w);
    o->as_of_ns = s->pools[s->npools - 1].as_of_ns;
    return 0;
}

/* The cgroup of the SESSION record just before it. */
static int dec_session_cgroup(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_session_cgroup w;
    int r = memd_wire_session_cgroup_get(p, n, &w);
    if (r < 0)
        return r;
    if (s->nsessions == 0 || s->sessions[s->nsessions - 1].id != w.session)
        return -EBADMSG;
    _Static_assert(sizeof s->sessions->cgroup == sizeof w.cgroup, "one cgroup size");
    memcpy(s->sessions[s->nsessions - 1].cgroup, w.cgroup, sizeof w.cgroup);
    return 0;
}

typedef int (*rec_decoder)(memclient_snapshot *s, const uint8_t *p, size_t n);

/* The tags this library knows; a newer daemon's other tags are refused (-EBADMSG). */
/* PAGE records never reach the parser: memclient_dump strips them off each page. */
#define NTAGS MEMD_REC_TAG_END

static const rec_decoder decoders[NTAGS] = {
    [MEMD_REC_SERVER] = dec_server_rec,     [MEMD_REC_DEVICE] = dec_device_rec,
    [MEMD_REC_GROUP] = dec_group_rec,       [MEMD_REC_REGION] = dec_region_rec,
    [MEMD_REC_ALLOC] = dec_alloc_info,      [MEMD_REC_BLOCK] = dec_block_rec,
    [MEMD_REC_SESSION] = dec_session_rec,   [MEMD_REC_PLAN] = dec_plan_rec,
    [MEMD_REC_MODEL] = dec_model_rec,       [MEMD_REC_INSTANCE] = dec_instance_rec,
    [MEMD_REC_SESSION_USE] = dec_session_use,
    [MEMD_REC_POOL] = dec_pool_rec,         [MEMD_REC_SUBALLOC] = dec_suballoc_rec,
    [MEMD_REC_BANK] = dec_bank_rec,         [MEMD_REC_ALLOC_BANK] = dec_alloc_bank_rec,
    [MEMD_REC_SUBDEV] = dec_subdev_rec,     [MEMD_REC_SUBDEV_BANKS] = dec_subdev_banks,
    [MEMD_REC_SESSION_CGROUP] = dec_session_cgroup,
    [MEMD_REC_LIMIT] = dec_limit_rec,       [MEMD_REC_FAILURES] = dec_failures_rec,
    [MEMD_REC_RANGE] = dec_range_rec,       [MEMD_REC_SUBDEV_WINDOW] = dec_subdev_window,
};

static bool known(uint32_t tag)
{
    return tag < NTAGS && decoders[tag];
}

int memclient_snapshot_parse(const uint8_t *p, size_t len, memclient_snapshot **out)
{
    size_t count[NTAGS] = {0}, nids = 0;
    size_t off = 0;
    uint32_t prev = 0;
    while (off < len) {
        uint32_t tag;
        size_t rec;
        int r = memd_wire_tag_get(p + off, len - off, &tag, &rec);
        if (r < 0)
            return r;
        if (!known(tag) || (tag == MEMD_REC_SERVER) != (off == 0))
            return -EBADMSG; /* SERVER comes first, exactly once */
        if (tag == MEMD_REC_SUBDEV_BANKS && prev != MEMD_REC_SUBDEV)
            return -EBADMSG; /* one list, right after its sub-device */
        if (tag == MEMD_REC_RANGE && prev != MEMD_REC_REGION)
            return -EBADMSG; /* right after its region */
        if (tag == MEMD_REC_SUBDEV_WINDOW && prev != MEMD_REC_SUBDEV &&
            prev != MEMD_REC_SUBDEV_BANKS)
            return -EBADMSG; /* after its sub-device (and its bank list) */
        if (tag == MEMD_REC_SUBDEV_BANKS)
            nids += (rec - MEMD_WIRE_SUBDEV_BANKS_REC_SIZE) / 4;
        count[tag]++;
        prev = tag;
        off += MEMD_WIRE_TAG_SIZE + rec;
    }
    if (count[MEMD_REC_SERVER] != 1)
        return -EBADMSG;

    memclient_snapshot *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    /* calloc(0) may return NULL: ask for at least one element so NULL means failure. */
#define ALLOC_ARRAY(field, tag)                                                            \
    if (!(s->field = calloc(count[tag] ? count[tag] : 1, sizeof(*s->field)))) {            \
        memclient_snapshot_free(s);                                                        \
        return -ENOMEM;                                                                    \
    }
    ALLOC_ARRAY(devices, MEMD_REC_DEVICE)
    ALLOC_ARRAY(groups, MEMD_REC_GROUP)
    ALLOC_ARRAY(regions, MEMD_REC_REGION)
    ALLOC_ARRAY(allocs, MEMD_REC_ALLOC)
    ALLOC_ARRAY(blocks, MEMD_REC_BLOCK)
    ALLOC_ARRAY(sessions, MEMD_REC_SESSION)
    ALLOC_ARRAY(plans, MEMD_REC_PLAN)
    ALLOC_ARRAY(models, MEMD_REC_MODEL)
    ALLOC_ARRAY(instances, MEMD_REC_INSTANCE)
    ALLOC_ARRAY(bank_use, MEMD_REC_BANK)
    ALLOC_ARRAY(alloc_banks, MEMD_REC_ALLOC_BANK)
    ALLOC_ARRAY(subdevs, MEMD_REC_SUBDEV)
    ALLOC_ARRAY(usage, MEMD_REC_SESSION_USE)
    ALLOC_ARRAY(pools, MEMD_REC_POOL)
    ALLOC_ARRAY(suballocs, MEMD_REC_SUBALLOC)
    ALLOC_ARRAY(limits, MEMD_REC_LIMIT)
    ALLOC_ARRAY(failures, MEMD_REC_FAILURES)
    ALLOC_ARRAY(ranges, MEMD_REC_RANGE)
#undef ALLOC_ARRAY
    if (!(s->subdev_bank_ids = calloc(nids ? nids : 1, sizeof *s->subdev_bank_ids))) {
        memclient_snapshot_free(s);
        return -ENOMEM;
    }

    for (off = 0; off < len;) {
        uint32_t tag;
        size_t rec;
        int r = memd_wire_tag_get(p + off, len - off, &tag, &rec);
        if (r == 0)
            r = decoders[tag](s, p + off + MEMD_WIRE_TAG_SIZE, rec); /* known: pass 1 */
        if (r < 0) {
            memclient_snapshot_free(s);
            return r;
        }
        off += MEMD_WIRE_TAG_SIZE + rec;
    }
    *out = s;
    return 0;
}

void memclient_snapshot_free(memclient_snapshot *s)
{
    if (!s)
        return;
    free(s->devices);
    free(s->groups);
    free(s->regions);
    free(s->allocs);
    free(s->blocks);
    free(s->sessions);
    free(s->plans);
    free(s->models);
    free(s->instances);
    free(s->bank_use);
    free(s->alloc_banks);
    free(s->subdevs);
    free(s->usage);
    free(s->pools);
    free(s->suballocs);
    free(s->ranges);
    free(s->subdev_bank_ids);
    free(s->limits);
    free(s->failures);
    free(s->peaks);
    free(s);
}

const memclient_region *memclient_snapshot_region(const memclient_snapshot *s, uint32_t device,
                                                  memd_kind kind, uint32_t region)
{
    if (!s)
        return NULL;
    for (size_t i = 0; i < s->nregions; i++) {
        const memclient_region *r = &s->regions[i];
        if (r->device == device && r->kind == kind && r->region == region)
            return r;
    }
    return NULL;
}
