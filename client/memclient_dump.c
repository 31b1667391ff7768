/* libmemclient: DUMP replies -> memclient_snapshot.
 * Two passes over the tagged records: count each kind (checking every tag and size), then
 * allocate the arrays once and decode into them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_internal.h"
#include "wire.h"

static void stats_from_wire(memclient_stats *o, const memd_wire_stats *w)
{
    o->total = w->total;
    o->allocated = w->allocated;
    o->free = w->free;
    o->largest_free = w->largest_free;
    o->largest_free_addr = w->largest_free_addr;
    o->free_blocks = w->free_blocks;
    o->allocations = w->allocations;
}

/* One decoder per record tag: each decodes its record (n bytes at p) into the next
 * element of its snapshot array, which the first pass sized. */

static int dec_server(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_server_rec w;
    int r = memd_wire_server_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_server *o = &s->server;
    memcpy(o->version, w.version, sizeof(o->version));
    o->start_ns = w.start_ns;
    o->now_ns = w.now_ns;
    o->sessions = w.sessions;
    o->pid = w.pid;
    o->requests = w.requests;
    o->allocs = w.allocs;
    o->frees = w.frees;
    o->alloc_failures = w.alloc_failures;
    o->protocol_errors = w.protocol_errors;
    o->sessions_total = w.sessions_total;
    o->bytes_in = w.bytes_in;
    o->bytes_out = w.bytes_out;
    return 0;
}

static int dec_device(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_device_rec w;
    int r = memd_wire_device_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_device *o = &s->devices[s->ndevices++];
    o->id = w.id;
    o->texture = w.texture != 0;
    memcpy(o->name, w.name, sizeof(o->name));
    memcpy(o->arch, w.arch, sizeof(o->arch));
    return 0;
}

static int dec_group(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_group_rec w;
    int r = memd_wire_group_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_group *o = &s->groups[s->ngroups++];
    o->device = w.device;
    o->kind = (memd_kind)w.kind;
    o->nregions = w.nregions;
    o->banks = w.banks;
    o->clients = w.clients;
    o->bank_size = w.bank_size;
    o->alignment = w.alignment;
    stats_from_wire(&o->stats, &w.stats);
    return 0;
}

static int dec_region(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_region_rec w;
    int r = memd_wire_region_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_region *o = &s->regions[s->nregions++];
    o->device = w.device;
    o->kind = (memd_kind)w.kind;
    o->region = w.region;
    o->allocatable = w.allocatable != 0;
    memcpy(o->name, w.name, sizeof(o->name));
    o->base = w.base;
    o->size = w.size;
    stats_from_wire(&o->stats, &w.stats);
    return 0;
}

static int dec_alloc(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_alloc_info w;
    int r = memd_wire_alloc_info_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_info_from_wire(&s->allocs[s->nallocs++], &w);
    return 0;
}

static int dec_block(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_block_rec w;
    int r = memd_wire_block_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_block *o = &s->blocks[s->nblocks++];
    o->device = w.device;
    o->kind = (memd_kind)w.kind;
    o->region = w.region;
    o->allocated = w.allocated != 0;
    o->address = w.address;
    o->size = w.size;
    return 0;
}

static int dec_session(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_session_rec w;
    int r = memd_wire_session_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_session_rec *o = &s->sessions[s->nsessions++];
    o->id = w.id;
    o->pid = w.pid;
    o->uid = w.uid;
    o->gid = w.gid;
    o->connected_ns = w.connected_ns;
    o->allocations = w.allocations;
    o->requests = w.requests;
    memcpy(o->comm, w.comm, sizeof(o->comm));
    memcpy(o->client_name, w.client_name, sizeof(o->client_name));
    o->orphaned = (w.flags & MEMD_SESSION_F_ORPHANED) != 0;
    o->reclaim_deadline_ns = w.reclaim_deadline_ns;
    o->subdev = w.subdev;
    return 0;
}

static int dec_plan(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_plan_rec w;
    int r = memd_wire_plan_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_plan_rec *o = &s->plans[s->nplans++];
    o->plan_id = w.plan_id;
    o->arena = w.arena;
    o->lower_bound = w.lower_bound;
    o->created_ns = w.created_ns;
    o->plan_us = w.plan_us;
    o->hits = w.hits;
    o->buffers = w.buffers;
    o->models = w.models;
    o->optimal = (w.flags & MEMD_PLAN_I_OPTIMAL) != 0;
    o->precomputed = (w.flags & MEMD_PLAN_I_PRECOMPUTED) != 0;
    memcpy(o->strategy, w.strategy, sizeof(o->strategy));
    return 0;
}

static int dec_model(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_model_rec w;
    int r = memd_wire_model_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_model_rec *o = &s->models[s->nmodels++];
    o->model_id = w.model_id;
    o->plan_id = w.plan_id;
    o->code_handle = w.code_handle;
    o->const_handle = w.const_handle;
    o->code_bytes = w.code_bytes;
    o->const_bytes = w.const_bytes;
    o->arena = w.arena;
    o->created_ns = w.created_ns;
    o->device = w.device;
    o->users = w.users;
    o->ntensors = w.ntensors;
    o->instances = w.instances;
    memcpy(o->name, w.name, sizeof(o->name));
    return 0;
}

static int dec_instance(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_instance_rec w;
    int r = memd_wire_instance_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_instance_rec *o = &s->instances[s->ninstances++];
    o->instance_id = w.instance_id;
    o->model_id = w.model_id;
    o->arena_handle = w.arena_handle;
    o->arena_address = w.arena_address;
    o->arena_bytes = w.arena_bytes;
    o->placeholder_bytes = w.placeholder_bytes;
    o->session_id = w.session_id;
    o->pid = w.pid;
    o->placeholders = w.placeholders;
    o->busy = w.busy != 0;
    return 0;
}

static int dec_bank(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_bank_rec w;
    int r = memd_wire_bank_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_bank_use *o = &s->bank_use[s->nbank_use++];
    o->device = w.device;
    o->kind = (memd_kind)w.kind;
    o->region = w.region;
    o->bank = w.bank;
    o->logical_x = w.logical_x;
    o->logical_y = w.logical_y;
    o->noc_x = w.noc_x;
    o->noc_y = w.noc_y;
    stats_from_wire(&o->stats, &w.stats);
    return 0;
}

static int dec_alloc_bank(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_alloc_bank_rec w;
    int r = memd_wire_alloc_bank_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_alloc_bank *o = &s->alloc_banks[s->nalloc_banks++];
    o->handle = w.handle;
    o->mode = (memd_bank_mode)w.bank_mode;
    memclient_bank_from_wire(&o->bank, &w.bank);
    return 0;
}

static int dec_subdev(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_subdev_rec w;
    int r = memd_wire_subdev_rec_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_subdev_rec *o = &s->subdevs[s->nsubdevs++];
    memcpy(o->name, w.name, sizeof o->name);
    o->device = w.device;
    o->kind = (memd_kind)w.kind;
    o->from_config = w.from_config != 0;
    o->nbanks = w.nbanks;
    o->sessions = w.sessions;
    o->budget = w.budget;
    o->used = w.used;
    o->allocations = w.allocations;
    memcpy(o->banks, w.banks, sizeof o->banks);
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

static int dec_use(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_session_use w;
    int r = memd_wire_session_use_get(p, n, &w);
    if (r < 0)
        return r;
    memclient_session_use *o = &s->usage[s->nusage++];
    o->session_id = w.session_id;
    o->device = w.device;
    o->kind = (memd_kind)w.kind;
    o->allocations = w.allocations;
    o->bytes = w.bytes;
    o->shared_bytes = w.shared_bytes;
    return 0;
}

static int dec_pool(memclient_snapshot *s, const uint8_t *p, size_t n)
{
    memd_wire_pool_rec w;
    int r = memd_wire_pool_rec_get(p, n, &w);
    if (r < 0)
        return r;
    s->pools[s->npools++] = (memclient_pool_rec){.handle = w.handle, .as_of_ns = w.as_of_ns,
                                                 .pooled_bytes = w.pooled_bytes,
                                                 .reports = w.reports,
                                                 .suballocs = w.suballocs};
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
    [MEMD_REC_SERVER] = dec_server,   [MEMD_REC_DEVICE] = dec_device,
    [MEMD_REC_GROUP] = dec_group,     [MEMD_REC_REGION] = dec_region,
    [MEMD_REC_ALLOC] = dec_alloc,     [MEMD_REC_BLOCK] = dec_block,
    [MEMD_REC_SESSION] = dec_session, [MEMD_REC_PLAN] = dec_plan,
    [MEMD_REC_MODEL] = dec_model,     [MEMD_REC_INSTANCE] = dec_instance,
    [MEMD_REC_SESSION_USE] = dec_use,
    [MEMD_REC_POOL] = dec_pool,       [MEMD_REC_SUBALLOC] = dec_suballoc,
    [MEMD_REC_BANK] = dec_bank,       [MEMD_REC_ALLOC_BANK] = dec_alloc_bank,
    [MEMD_REC_SUBDEV] = dec_subdev,   [MEMD_REC_SUBDEV_BANKS] = dec_subdev_banks,
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
