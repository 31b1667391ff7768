/* libmemclient: DUMP replies -> memclient_snapshot.
 * Two passes over the tagged records: count each kind (checking every tag and size), then
 * allocate the arrays once and decode into them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

/* The records that go into their snapshot array as they are decode with
 * memclient_dec_<tag> (memclient_wire_gen.h); these two need more. */

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

static int dec_suballoc(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_suballoc_rec w;
    int r = memd_wire_suballoc_rec_get(p, n, &w);
    if (r < 0)
        return r;
    /* It follows its pool's record. */
    if (s->npools == 0 || s->pools[s->npools - 1].handle != w.pool)
        return -EBADMSG;
    memclient_suballoc_rec *o = &s->suballocs[s->nsuballocs++];
    *o = (memclient_suballoc_rec){.pool = w.pool, .offset = w.offset, .size = w.size,
                                  .as_of_ns = s->pools[s->npools - 1].as_of_ns};
    memcpy(o->name, w.name, sizeof o->name);
    return 0;
}

typedef int (*rec_decoder)(memclient_snapshot *s, const uint8_t *p, size_t n);

/* The tags this library knows; a newer daemon's other tags are refused (-EBADMSG). */
/* PAGE records never reach the parser: memclient_dump strips them off each page. */
#define NTAGS (MEMD_REC_SUBDEV_BANKS + 1)

static const rec_decoder decoders[NTAGS] = {
    [MEMD_REC_SERVER] = memclient_dec_server,
    [MEMD_REC_DEVICE] = memclient_dec_device,
    [MEMD_REC_GROUP] = memclient_dec_group,
    [MEMD_REC_REGION] = memclient_dec_region,
    [MEMD_REC_ALLOC] = memclient_dec_alloc,
    [MEMD_REC_BLOCK] = memclient_dec_block,
    [MEMD_REC_SESSION] = memclient_dec_session,
    [MEMD_REC_PLAN] = memclient_dec_plan,
    [MEMD_REC_MODEL] = memclient_dec_model,
    [MEMD_REC_INSTANCE] = memclient_dec_instance,
    [MEMD_REC_SESSION_USE] = memclient_dec_session_use,
    [MEMD_REC_POOL] = memclient_dec_pool,
    [MEMD_REC_SUBALLOC] = dec_suballoc,
    [MEMD_REC_BANK] = memclient_dec_bank,
    [MEMD_REC_ALLOC_BANK] = memclient_dec_alloc_bank,
    [MEMD_REC_SUBDEV] = memclient_dec_subdev,
    [MEMD_REC_SUBDEV_BANKS] = dec_subdev_banks,
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
    free(s->subdev_bank_ids);
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
