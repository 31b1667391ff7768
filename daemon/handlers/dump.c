/* memd daemon — DUMP: the whole map as tagged records (protocol.h), for memctl.
 * Everyone sees devices, bank groups, regions and blocks; allocations and sessions only
 * their own unless admin. Not on the hot path: it may allocate. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "alloc.h"
#include "dispatch.h"
#include "errmsg.h"
#include "malformed.h"
#include "memd-build-config.h"
#include "model.h"
#include "reply.h"
#include "store.h"
#include "subdev.h"
#include "wire.h"

typedef struct dump_ctx {
    memd_buf *out;
    uint32_t device;
    uint8_t kind, region;
} dump_ctx;

/* Appends tag + room for its record; NULL if the buffer cannot grow. */
static uint8_t *rec(memd_buf *out, uint32_t tag)
{
    uint8_t *p = memd_buf_append(out, MEMD_WIRE_TAG_SIZE + memd_wire_rec_size(tag));
    return p ? memd_wire_tag_put(p, tag) : NULL;
}

static void stats_from(const memd_range_stats *rs, memd_wire_stats *w)
{
    *w = (memd_wire_stats){.total = rs->total, .allocated = rs->allocated, .free = rs->free,
                           .largest_free = rs->largest_free,
                           .largest_free_addr = rs->largest_free_addr,
                           .free_blocks = rs->free_blocks, .allocations = rs->allocations};
}

static int put_server(const memd_state *st, memd_buf *out)
{
    uint8_t *p = rec(out, MEMD_REC_SERVER);
    if (!p)
        return -ENOMEM;
    memd_wire_server_rec r = {
        .start_ns = st->start_ns, .now_ns = memd_now_ns(), .sessions = st->nsessions,
        .pid = (uint32_t)getpid(), .requests = st->ctr.requests, .allocs = st->ctr.allocs,
        .frees = st->ctr.frees, .alloc_failures = st->ctr.alloc_failures,
        .protocol_errors = st->ctr.protocol_errors, .sessions_total = st->ctr.sessions_total,
        .bytes_in = st->ctr.bytes_in, .bytes_out = st->ctr.bytes_out};
    memd_wire_strset(r.version, sizeof r.version, MEMD_VERSION);
    memd_wire_server_rec_put(p, &r);
    return 0;
}

static int visit_block(void *vctx, uint64_t addr, uint64_t size, bool allocated)
{
    dump_ctx *c = vctx;
    uint8_t *p = rec(c->out, MEMD_REC_BLOCK);
    if (!p)
        return -ENOMEM;
    memd_wire_block_rec b = {.device = c->device, .kind = c->kind, .region = c->region,
                             .allocated = allocated, .address = addr, .size = size};
    memd_wire_block_rec_put(p, &b);
    return 0;
}

/* BANK records: every bank's own map of one allocatable region. */
static int put_banks(const memd_state *st, uint32_t dev, memd_kind kind, uint8_t region,
                     memd_buf *out)
{
    const memd_device_spec *spec = st->devs[dev].spec;
    const memd_bank_group_spec *g = &spec->groups[kind];
    for (uint32_t b = 0; b < g->banks; b++) {
        memd_range_stats rs;
        if (memd_device_bank_stats(st->devs[dev].dev, kind, region, b, &rs) < 0)
            return 0;
        uint8_t *p = rec(out, MEMD_REC_BANK);
        if (!p)
            return -ENOMEM;
        memd_wire_bank_rec r = {.device = spec->id, .kind = (uint8_t)kind, .region = region,
                                .bank = b, .logical_x = MEMD_NO_CORE,
                                .logical_y = MEMD_NO_CORE, .noc_x = MEMD_NO_CORE,
                                .noc_y = MEMD_NO_CORE};
        if (g->cores) {
            r.logical_x = g->cores[b].logical_x;
            r.logical_y = g->cores[b].logical_y;
            r.noc_x = g->cores[b].noc_x;
            r.noc_y = g->cores[b].noc_y;
        }
        stats_from(&rs, &r.stats);
        memd_wire_bank_rec_put(p, &r);
    }
    return 0;
}

static int put_group(const memd_state *st, uint32_t dev, memd_kind kind, uint32_t clients,
                     uint32_t flags, memd_buf *out)
{
    const memd_device_spec *spec = st->devs[dev].spec;
    const memd_bank_group_spec *g = &spec->groups[kind];
    const memd_device *d = st->devs[dev].dev;
    memd_range_stats rs = {0};
    (void)memd_device_group_stats(d, kind, &rs);
    memd_wire_group_rec gr = {.device = spec->id, .kind = (uint8_t)kind,
                              .nregions = (uint8_t)g->nregions, .banks = g->banks,
                              .clients = clients, .bank_size = g->bank_size,
                              .alignment = g->alignment};
    stats_from(&rs, &gr.stats);
    uint8_t *p = rec(out, MEMD_REC_GROUP);
    if (!p)
        return -ENOMEM;
    memd_wire_group_rec_put(p, &gr);
    for (uint32_t r = 0; r < g->nregions; r++) {
        memd_wire_region_rec rr = {.device = spec->id, .kind = (uint8_t)kind,
                                   .region = (uint8_t)r,
                                   .allocatable = g->regions[r].allocatable,
                                   .base = g->regions[r].base, .size = g->regions[r].size};
        memcpy(rr.name, g->regions[r].name, sizeof rr.name);
        if (g->regions[r].allocatable &&
            memd_device_region_stats(d, kind, (uint8_t)r, &rs) == 0)
            stats_from(&rs, &rr.stats);
        if (!(p = rec(out, MEMD_REC_REGION)))
            return -ENOMEM;
        memd_wire_region_rec_put(p, &rr);
        if ((flags & MEMD_DUMP_F_BANKS) && g->regions[r].allocatable) {
            int rc = put_banks(st, dev, kind, (uint8_t)r, out);
            if (rc < 0)
                return rc;
        }
        const memd_range *range = memd_device_region_range(d, kind, (uint8_t)r);
        if ((flags & MEMD_DUMP_F_BLOCKS) && range) {
            dump_ctx c = {.out = out, .device = spec->id, .kind = (uint8_t)kind,
                          .region = (uint8_t)r};
            int rc = memd_range_foreach(range, visit_block, &c);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int cmp_handle(const void *a, const void *b)
{
    uint64_t x = (*(const memd_alloc *const *)a)->handle;
    uint64_t y = (*(const memd_alloc *const *)b)->handle;
    return x < y ? -1 : x > y;
}

/* ALLOC_BANK records: the banks of a subset or per-bank allocation. */
static int put_alloc_banks(const memd_state *st, const memd_alloc *a, memd_buf *out)
{
    if (a->pl.mode == MEMD_BANKS_ALL)
        return 0;
    for (uint32_t i = 0; i < a->pl.nset; i++) {
        uint8_t *p = rec(out, MEMD_REC_ALLOC_BANK);
        if (!p)
            return -ENOMEM;
        memd_wire_alloc_bank_rec r = {.handle = a->handle, .bank_mode = (uint8_t)a->pl.mode};
        memd_alloc_bank_at(st, a, i, &r.bank);
        memd_wire_alloc_bank_rec_put(p, &r);
    }
    return 0;
}

static int put_allocs(const memd_state *st, const memd_session *s, int dev, bool banks,
                      memd_buf *out)
{
    memd_alloc **list = malloc((st->handles.len + 1) * sizeof *list);
    if (!list)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < st->handles.cap; i++) {
        if (!st->handles.slots[i].key)
            continue;
        memd_alloc *a = (memd_alloc *)(uintptr_t)st->handles.slots[i].val;
        if ((dev < 0 || a->dev == (uint32_t)dev) && memd_may_access(s, a))
            list[n++] = a;
    }
    qsort(list, n, sizeof *list, cmp_handle);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        uint8_t *p = rec(out, MEMD_REC_ALLOC);
        if (!p) {
            rc = -ENOMEM;
            break;
        }
        memd_wire_alloc_info info;
        memd_alloc_to_info(st, list[i], &info);
        memd_wire_alloc_info_put(p, &info);
        if (banks)
            rc = put_alloc_banks(st, list[i], out);
    }
    free(list);
    return rc;
}

/* "0-31,40": the bank list as memctl --bank-set writes it, cut with "..." if long. */
static void bank_list_str(const uint32_t *b, uint32_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && b[j] == b[j - 1] + 1)
            j++;
        char item[32];
        int w = j - i > 1 ? snprintf(item, sizeof item, "%s%u-%u", i ? "," : "", b[i], b[j - 1])
                          : snprintf(item, sizeof item, "%s%u", i ? "," : "", b[i]);
        if (used + (size_t)w + 4 >= cap) {
            snprintf(buf + used, cap - used, "...");
            return;
        }
        memcpy(buf + used, item, (size_t)w + 1);
        used += (size_t)w;
        i = j;
    }
}

/* Every sub-device, whatever device was asked for: sessions name theirs by position. */
static int put_subdevs(const memd_state *st, memd_buf *out)
{
    for (uint32_t i = 0; i < st->nsubdevs; i++) {
        const memd_subdev *d = &st->subdevs[i];
        uint8_t *p = rec(out, MEMD_REC_SUBDEV);
        if (!p)
            return -ENOMEM;
        memd_wire_subdev_rec r = {.device = d->spec.device, .kind = (uint8_t)d->spec.kind,
                                  .from_config = d->from_config, .nbanks = d->spec.nbanks,
                                  .sessions = d->sessions, .budget = d->spec.budget,
                                  .used = d->used, .allocations = d->allocations};
        memcpy(r.name, d->spec.name, sizeof r.name);
        bank_list_str(d->spec.banks, d->spec.nbanks, r.banks, sizeof r.banks);
        memd_wire_subdev_rec_put(p, &r);
    }
    return 0;
}

static int put_sessions(const memd_state *st, const memd_session *self, memd_buf *out)
{
    for (const memd_session *s = st->sessions; s; s = s->next) {
        if (!self->admin && s != self)
            continue;
        uint8_t *p = rec(out, MEMD_REC_SESSION);
        if (!p)
            return -ENOMEM;
        memd_wire_session_rec r = {.id = s->id, .pid = s->pid, .uid = s->uid, .gid = s->gid,
                                   .connected_ns = s->connected_ns,
                                   .allocations = s->nholds, .requests = s->requests};
        memcpy(r.comm, s->comm, sizeof r.comm);
        memcpy(r.client_name, s->client_name, sizeof r.client_name);
        r.flags = memd_store_session_flags(st, s, &r.reclaim_deadline_ns); /* orphaned? */
        r.subdev = s->subdev;
        memd_wire_session_rec_put(p, &r);
    }
    return 0;
}

/* Sessions holding something per (device, bank group). */
static uint32_t *count_clients(const memd_state *st)
{
    uint32_t *clients = calloc((size_t)st->ndevs * MEMD_KIND_COUNT, sizeof *clients);
    uint64_t *seen = calloc((size_t)st->ndevs * MEMD_KIND_COUNT, sizeof *seen);
    if (!clients || !seen) {
        free(clients);
        free(seen);
        return NULL;
    }
    uint64_t visit = 0;
    for (const memd_session *s = st->sessions; s; s = s->next) {
        visit++;
        for (const memd_hold *h = s->holds; h; h = h->next) {
            size_t i = (size_t)h->alloc->dev * MEMD_KIND_COUNT + h->alloc->pl.kind;
            if (seen[i] != visit) {
                seen[i] = visit;
                clients[i]++;
            }
        }
    }
    free(seen);
    return clients;
}

static int build(const memd_state *st, const memd_session *s, int dev, uint32_t flags,
                 memd_buf *out)
{
    int rc = put_server(st, out);
    uint32_t *clients = count_clients(st);
    if (!clients)
        return -ENOMEM;
    for (uint32_t i = 0; i < st->ndevs && rc == 0; i++) {
        if (dev >= 0 && i != (uint32_t)dev)
            continue;
        const memd_device_spec *spec = st->devs[i].spec;
        uint8_t *p = rec(out, MEMD_REC_DEVICE);
        if (!p) {
            rc = -ENOMEM;
            break;
        }
        memd_wire_device_rec d = {.id = spec->id, .texture = spec->texture.enabled};
        memcpy(d.name, spec->name, sizeof d.name);
        memcpy(d.arch, spec->arch, sizeof d.arch);
        memd_wire_device_rec_put(p, &d);
        for (int k = 0; k < MEMD_KIND_COUNT && rc == 0; k++)
            if (spec->groups[k].banks)
                rc = put_group(st, i, (memd_kind)k, clients[i * MEMD_KIND_COUNT + k], flags,
                               out);
    }
    free(clients);
    if (rc == 0 && (flags & MEMD_DUMP_F_BANKS))
        rc = put_subdevs(st, out);
    if (rc == 0)
        rc = put_allocs(st, s, dev, (flags & MEMD_DUMP_F_BANKS) != 0, out);
    if (rc == 0)
        rc = put_sessions(st, s, out);
    if (rc == 0 && (flags & MEMD_DUMP_F_MODELS))
        rc = memd_models_dump(st, s, out);
    return rc;
}

int memd_op_dump(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 memd_buf *out)
{
    memd_wire_dump_req req;
    int rc = memd_wire_dump_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_wire_error err = {0};
    int dev = -1;
    if (req.device != UINT32_MAX && (dev = memd_state_dev_index(st, req.device)) < 0) {
        memd_err_set(&err, -ENODEV, "no device %u (%u configured)", req.device, st->ndevs);
        return memd_reply_fail(st, h, out, &err, false);
    }
    size_t hdr_off = out->len;
    if (!memd_reply_begin(out, h->opcode, h->id, 0))
        return -ENOMEM;
    rc = build(st, s, dev, req.flags, out);
    if (rc == 0 && out->len - hdr_off - MEMD_HDR_SIZE > MEMD_MAX_REPLY)
        rc = -E2BIG;
    if (rc < 0) {
        out->len = hdr_off;
        memd_err_set(&err, rc, rc == -E2BIG ? "dump larger than %u bytes: ask for one device "
                                              "or leave out blocks"
                                            : "dump failed: daemon out of memory (limit %u)",
                     MEMD_MAX_REPLY);
        return memd_reply_fail(st, h, out, &err, false);
    }
    memd_reply_patch_len(out, hdr_off);
    return 0;
}
