/* memd daemon — DUMP: the whole map as tagged records (protocol.h), for memctl.
 * Everyone sees devices, bank groups, regions and blocks; allocations and sessions only
 * their own unless admin. Not on the hot path: it may allocate.
 *
 * A paged dump (MEMD_DUMP_F_PAGED) walks the handles from the cursor up, looking each
 * up in the handle map: handles are issued in increasing order and never reused, so
 * that order needs no index of its own and survives anything that happens between
 * pages. A page stops after PAGE_ALLOCS records, PAGE_BYTES bytes of allocation records
 * (fewer when the session's reply backlog has less room) or PAGE_SCAN handles looked
 * at, whichever comes first, which bounds the time one request holds the loop (handles
 * freed long ago cost a lookup each, once per dump). A bank-set buffer's ALLOC_BANK
 * records stay in their allocation's page; a pool's SUBALLOC records may go on over
 * several pages (a pool may hold 2^20 of them): the cursor is the handle shifted left
 * by SUB_BITS, plus how many of that pool's sub-allocations were sent. Blocks
 * (MEMD_DUMP_F_BLOCKS: 2 million at a million allocations) follow their region in the
 * first page while there are at most PAGE_ALLOCS of them (as before they were paged);
 * more follow the allocations, in pages of their own, resumed from the address where
 * the last page stopped (the session remembers it; another cursor walks to it).
 *
 * An unpaged dump is one reply: it may be no larger than the reply backlog
 * (max_reply_backlog, at least REPLY_MIN), refused before any work when the
 * allocations alone would pass it, and cut short (-E2BIG) as soon as it does, so no
 * dump costs the loop more than building a few MB. A reply that does not fit what is
 * left of the backlog waits (MEMD_DEFER) until the session reads its earlier ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "alloc.h"
#include "banklist.h"
#include "dispatch.h"
#include "error.h"
#include "event.h"
#include "malformed.h"
#include "memd-build-config.h"
#include "model.h"
#include "pool_books.h"
#include "reply.h"
#include "store.h"
#include "subdev.h"
#include "wire.h"

#define PAGE_ALLOCS 4096u   /* allocation records per page: about 0.7 MB */
#define PAGE_SCAN 65536u    /* handles looked at per page */
#define PAGE_BYTES (1u << 20) /* and about this many bytes: a per-bank buffer brings one
                                 ALLOC_BANK record per bank, a pool its sub-allocations */
#define PAGE_MIN (64u << 10)  /* a page smaller than this waits for the backlog instead */
#define REPLY_MIN (1u << 20)  /* an unpaged dump may always be this large */
#define SUB_BITS 21           /* cursor bits counting a pool's sub-allocations sent */
#define SUB_MASK ((UINT64_C(1) << SUB_BITS) - 1)
/* A paged dump's blocks come after its allocations, with cursors above theirs (a cursor
 * only grows): the bit, the region's number among every device's (kind, region) in
 * order, and how many of its blocks were sent. */
#define BLOCK_PHASE (UINT64_C(1) << 63)
#define BLOCKS_LATER (UINT64_C(1) << 62) /* an allocations' page's: blocks follow them */
#define BLOCK_SHIFT 32
#define BLOCK_SENT ((UINT64_C(1) << BLOCK_SHIFT) - 1)

/* The reply being built, and the length it may not pass (over: it tried to). */
typedef struct dump_out {
    memd_buf *b;
    size_t end;
    bool over;
} dump_out;

typedef struct dump_ctx {
    dump_out *out;
    uint32_t device;
    uint8_t kind, region;
    uint64_t start, end; /* what is left of the region: blocks outside are not shown */
} dump_ctx;

/* Appends n bytes; NULL if the buffer cannot grow or would pass its end. */
static uint8_t *put(dump_out *out, size_t n)
{
    if (n > out->end - out->b->len || out->b->len > out->end) {
        out->over = true;
        return NULL;
    }
    return memd_buf_append(out->b, n);
}

/* Appends tag + room for its record. */
static uint8_t *rec(dump_out *out, uint32_t tag)
{
    uint8_t *p = put(out, MEMD_WIRE_TAG_SIZE + memd_wire_rec_size(tag));
    return p ? memd_wire_tag_put(p, tag) : NULL;
}

static void stats_from(const memd_range_stats *rs, memd_wire_stats *w)
{
    *w = (memd_wire_stats){.total = rs->total, .allocated = rs->allocated, .free = rs->free,
                           .largest_free = rs->largest_free,
                           .largest_free_addr = rs->largest_free_addr,
                           .free_blocks = rs->free_blocks, .allocations = rs->allocations};
}

static int put_server(const memd_state *st, dump_out *out)
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
    if (addr < c->start || addr >= c->end) /* a part given up: it holds no buffer */
        return 0;
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
                     dump_out *out)
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
                     uint32_t flags, dump_out *out)
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
        memd_region_cut cut = {0};
        bool cut_known = memd_device_region_cut(d, kind, (uint8_t)r, &cut) == 0;
        if ((flags & MEMD_DUMP_F_RANGES) && cut_known) {
            memd_wire_range_rec w = {.device = spec->id, .kind = (uint8_t)kind,
                                     .region = (uint8_t)r, .bottom = cut.bottom, .top = cut.top,
                                     .start = cut.start, .end = cut.end};
            if (!(p = rec(out, MEMD_REC_RANGE)))
                return -ENOMEM;
            memd_wire_range_rec_put(p, &w);
        }
        if ((flags & MEMD_DUMP_F_BANKS) && g->regions[r].allocatable) {
            int rc = put_banks(st, dev, kind, (uint8_t)r, out);
            if (rc < 0)
                return rc;
        }
        const memd_range *range = memd_device_region_range(d, kind, (uint8_t)r);
        if ((flags & MEMD_DUMP_F_BLOCKS) && range) {
            dump_ctx c = {.out = out, .device = spec->id, .kind = (uint8_t)kind,
                          .region = (uint8_t)r, .start = cut.start, .end = cut.end};
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
static int put_alloc_banks(const memd_state *st, const memd_alloc *a, dump_out *out)
{
    if (a->pl.mode == MEMD_BANKS_ALL)
        return 0;
    for (uint32_t i = 0; i < memd_alloc_nset(a); i++) {
        uint8_t *p = rec(out, MEMD_REC_ALLOC_BANK);
        if (!p)
            return -ENOMEM;
        memd_wire_alloc_bank_rec r = {.handle = a->handle, .bank_mode = (uint8_t)a->pl.mode};
        memd_bank_addr b;
        memd_alloc_bank_at(st, a, i, &b);
        memd_bank_addr_to_wire(&b, &r.bank);
        memd_wire_alloc_bank_rec_put(p, &r);
    }
    return 0;
}


/* A pool's sub-allocations, in address order, from the sent-th on (passing the first
 * skip over), until the reply reaches stop: then resume is the offset of the first one
 * not sent. */
typedef struct pool_ctx {
    dump_out *out;
    const memd_pool_books *b;
    uint64_t handle;
    size_t stop;
    uint64_t skip, sent, resume;
} pool_ctx;

static int visit_sub(void *vctx, uint64_t addr, uint64_t size, bool allocated)
{
    (void)size;
    pool_ctx *c = vctx;
    const memd_suballoc *sub = allocated ? memd_pool_books_find(c->b, addr) : NULL;
    if (!sub)
        return 0;
    if (c->skip) {
        c->skip--;
        return 0;
    }
    if (c->out->b->len >= c->stop && c->sent < SUB_MASK) {
        c->resume = addr;
        return 1;
    }
    uint8_t *p = rec(c->out, MEMD_REC_SUBALLOC);
    if (!p)
        return -ENOMEM;
    memd_wire_suballoc_rec r = {.pool = c->handle, .offset = sub->offset, .size = sub->size};
    memcpy(r.name, sub->name, sizeof r.name);
    memd_wire_suballoc_rec_put(p, &r);
    c->sent++;
    return 0;
}

static int put_pool(const memd_alloc *a, dump_out *out)
{
    const memd_pool_books *b = memd_pool_books_of(a);
    memd_wire_pool_rec r = {.handle = a->handle, .as_of_ns = b ? b->as_of_ns : a->created_ns,
                            .pooled_bytes = b ? b->pooled : 0, .reports = b ? b->reports : 0,
                            .suballocs = b ? (uint32_t)b->subs.len : 0};
    uint8_t *p = rec(out, MEMD_REC_POOL);
    if (!p)
        return -ENOMEM;
    memd_wire_pool_rec_put(p, &r);
    return 0;
}

/* Pool a's sub-allocations from the c->sent-th on: from offset from when the session
 * knows that one's offset (UINT64_MAX: it does not; then the first ones are passed
 * over). 1 when the page ended inside the pool. */
static int put_subs(const memd_alloc *a, pool_ctx *c, uint64_t from)
{
    if (!(c->b = memd_pool_books_of(a)))
        return 0;
    c->handle = a->handle;
    if (from != UINT64_MAX && memd_pool_books_find(c->b, from))
        return memd_range_foreach_from(c->b->range, from, visit_sub, c);
    c->skip = c->sent;
    return memd_range_foreach(c->b->range, visit_sub, c);
}

/* The allocations a session may see on a device (dev < 0: all), collected. */
typedef struct visible {
    const memd_session *s;
    int dev;
    memd_alloc **list;
    size_t n;
} visible;

static int add_visible(void *ctx, memd_alloc *a)
{
    visible *v = ctx;
    if ((v->dev < 0 || a->dev == (uint32_t)v->dev) && memd_may_access(v->s, a))
        v->list[v->n++] = a;
    return 0;
}

static int put_allocs(const memd_state *st, const memd_session *s, int dev, uint32_t flags,
                      dump_out *out)
{
    visible v = {.s = s, .dev = dev, .list = malloc((st->handles.len + 1) * sizeof *v.list)};
    if (!v.list)
        return -ENOMEM;
    (void)memd_handles_each(&st->handles, add_visible, &v);
    memd_alloc **list = v.list;
    size_t n = v.n;
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
        if (flags & MEMD_DUMP_F_BANKS)
            rc = put_alloc_banks(st, list[i], out);
    }
    for (size_t i = 0; i < n && rc == 0 && (flags & MEMD_DUMP_F_POOLS); i++) {
        if (!list[i]->pool)
            continue;
        rc = put_pool(list[i], out);
        pool_ctx c = {.out = out, .stop = SIZE_MAX};
        if (rc == 0 && (flags & MEMD_DUMP_F_SUBALLOCS))
            rc = put_subs(list[i], &c, UINT64_MAX);
    }
    free(list);
    return rc;
}

/* Every sub-device, whatever device was asked for: sessions name theirs by position.
 * With MEMD_DUMP_F_SUBDEV_BANKS each is followed by its whole bank list, with
 * MEMD_DUMP_F_SUBDEV_WINDOWS one that owns a window by the window. */
static int put_subdevs(const memd_state *st, uint32_t flags, dump_out *out)
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
        memd_format_bank_list(d->spec.banks, d->spec.nbanks, r.banks, sizeof r.banks);
        memd_wire_subdev_rec_put(p, &r);
        if (flags & MEMD_DUMP_F_SUBDEV_BANKS) {
            p = put(out, MEMD_WIRE_TAG_SIZE + MEMD_WIRE_SUBDEV_BANKS_REC_SIZE +
                             4 * (size_t)d->spec.nbanks);
            if (!p)
                return -ENOMEM;
            p = memd_wire_tag_put(p, MEMD_REC_SUBDEV_BANKS);
            memd_wire_subdev_banks_put(p, d->spec.banks, d->spec.nbanks);
        }
        memd_window_info wi;
        int dev = memd_state_dev_index(st, d->spec.device);
        if (!(flags & MEMD_DUMP_F_SUBDEV_WINDOWS) || !d->window || dev < 0 ||
            memd_device_window_info(st->devs[dev].dev, d->window, &wi) < 0)
            continue;
        if (!(p = rec(out, MEMD_REC_SUBDEV_WINDOW)))
            return -ENOMEM;
        memd_wire_subdev_window_rec w = {.start = wi.start, .bytes = wi.bytes,
                                         .allocated = wi.allocated,
                                         .allocations = wi.allocations, .region = wi.region};
        memd_wire_subdev_window_rec_put(p, &w);
    }
    return 0;
}


/* What session s holds per (device, bank group): one SESSION_USE record for each where it
 * holds something, from the counts alloc.c keeps (O(devices x groups), not O(holds)). */
static int put_use(const memd_state *st, const memd_session *s, dump_out *out)
{
    if (!s->group_holds)
        return 0; /* never held anything */
    for (uint32_t d = 0; d < st->ndevs; d++) {
        for (int k = 0; k < MEMD_KIND_COUNT; k++) {
            const memd_group_use *g = &s->group_holds[(size_t)d * MEMD_KIND_COUNT + k];
            if (!g->holds)
                continue;
            memd_wire_session_use u = {.session_id = s->id, .device = st->devs[d].spec->id,
                                       .kind = (uint8_t)k, .allocations = g->holds,
                                       .bytes = g->bytes, .shared_bytes = g->shared_bytes};
            uint8_t *p = rec(out, MEMD_REC_SESSION_USE);
            if (!p)
                return -ENOMEM;
            memd_wire_session_use_put(p, &u);
        }
    }
    return 0;
}

_Static_assert(MEMD_SESSION_CGROUP_MAX == MEMD_CGROUP_MAX, "one cgroup path size");

static int put_cgroup(const memd_session *s, dump_out *out)
{
    uint8_t *p = rec(out, MEMD_REC_SESSION_CGROUP);
    if (!p)
        return -ENOMEM;
    memd_wire_session_cgroup r = {.session = s->id};
    memcpy(r.cgroup, s->cgroup, sizeof r.cgroup);
    memd_wire_session_cgroup_put(p, &r);
    return 0;
}

static int put_sessions(const memd_state *st, const memd_session *self, uint32_t flags,
                        dump_out *out)
{
    int rc = 0;
    for (const memd_session *s = st->sessions; s && rc == 0; s = s->next) {
        if (!self->admin && s != self)
            continue;
        uint8_t *p = rec(out, MEMD_REC_SESSION);
        if (!p) {
            rc = -ENOMEM;
            break;
        }
        memd_wire_session_rec r = {.id = s->id, .pid = s->pid, .uid = s->uid, .gid = s->gid,
                                   .connected_ns = s->connected_ns,
                                   .allocations = s->nholds, .requests = s->requests};
        memcpy(r.comm, s->comm, sizeof r.comm);
        memcpy(r.client_name, s->client_name, sizeof r.client_name);
        r.flags = memd_store_session_flags(st, s, &r.reclaim_deadline_ns); /* orphaned? */
        r.subdev = s->subdev;
        memd_wire_session_rec_put(p, &r);
        if (flags & MEMD_DUMP_F_CGROUPS)
            rc = put_cgroup(s, out);
        if (rc == 0 && (flags & MEMD_DUMP_F_USAGE))
            rc = put_use(st, s, out);
    }
    return rc;
}

/* The allocations with handles from *cursor on that s may see, up to a page's worth
 * (about limit bytes); *cursor becomes where the next page starts, or 0 when nothing
 * is left. */
static int put_allocs_page(const memd_state *st, memd_session *s, int dev, uint32_t flags,
                           size_t limit, uint64_t *cursor, dump_out *out)
{
    uint64_t h = *cursor >> SUB_BITS, sent = *cursor & SUB_MASK, end = st->next_handle;
    uint64_t from = sent && s->dump_cursor == *cursor ? s->dump_offset : UINT64_MAX;
    bool subs = (flags & MEMD_DUMP_F_POOLS) && (flags & MEMD_DUMP_F_SUBALLOCS);
    uint32_t recs = 0;
    size_t start = out->b->len;
    for (uint32_t scanned = 0; h < end && scanned < PAGE_SCAN && recs < PAGE_ALLOCS &&
                               out->b->len - start < limit;
         h++, scanned++, sent = 0, from = UINT64_MAX) {
        const memd_alloc *a = h ? memd_alloc_find(st, h) : NULL;
        if (!a || (dev >= 0 && a->dev != (uint32_t)dev) || !memd_may_access(s, a))
            continue;
        if (sent == 0) { /* not a pool resumed in its sub-allocations */
            uint8_t *p = rec(out, MEMD_REC_ALLOC);
            if (!p)
                return -ENOMEM;
            memd_wire_alloc_info info;
            memd_alloc_to_info(st, a, &info);
            memd_wire_alloc_info_put(p, &info);
            recs++;
            /* A bank-set buffer's ALLOC_BANK records and a pool's record follow its
             * allocation, in the same page. */
            int rc = flags & MEMD_DUMP_F_BANKS ? put_alloc_banks(st, a, out) : 0;
            if (rc == 0 && (flags & MEMD_DUMP_F_POOLS) && a->pool)
                rc = put_pool(a, out);
            if (rc < 0)
                return rc;
        }
        if (!subs || !a->pool)
            continue;
        pool_ctx c = {.out = out, .stop = start + limit, .sent = sent};
        int rc = put_subs(a, &c, from);
        if (rc < 0)
            return rc;
        if (rc > 0) { /* the page ends inside the pool */
            *cursor = s->dump_cursor = h << SUB_BITS | c.sent;
            s->dump_offset = c.resume;
            return 0;
        }
    }
    *cursor = h < end ? h << SUB_BITS : 0;
    return 0;
}

/* A page of one region's blocks: from the sent-th on (passing the first skip over),
 * until the reply reaches stop: then resume is the address of the first one not sent. */
typedef struct block_page {
    dump_ctx c;
    size_t stop;
    uint64_t skip, sent, resume;
} block_page;

static int visit_block_page(void *vctx, uint64_t addr, uint64_t size, bool allocated)
{
    block_page *bp = vctx;
    if (bp->skip) {
        bp->skip--;
        return 0;
    }
    if (bp->c.out->b->len >= bp->stop && bp->sent < BLOCK_SENT) {
        bp->resume = addr;
        return 1;
    }
    int rc = visit_block(&bp->c, addr, size, allocated);
    bp->sent++;
    return rc;
}

/* The blocks from *cursor (BLOCK_PHASE) on, about limit bytes of them; *cursor becomes
 * where the next page starts, or 0 when none is left. */
static int put_blocks_page(const memd_state *st, memd_session *s, int dev, size_t limit,
                           uint64_t *cursor, dump_out *out)
{
    uint64_t want = (*cursor & ~BLOCK_PHASE) >> BLOCK_SHIFT, sent = *cursor & BLOCK_SENT;
    size_t stop = out->b->len + limit;
    uint64_t ord = 0;
    for (uint32_t i = 0; i < st->ndevs; i++) {
        const memd_device_spec *spec = st->devs[i].spec;
        for (int k = 0; k < MEMD_KIND_COUNT; k++) {
            for (uint32_t r = 0; r < spec->groups[k].nregions; r++) {
                uint64_t o = ord++;
                const memd_range *range =
                    memd_device_region_range(st->devs[i].dev, (memd_kind)k, (uint8_t)r);
                if (o < want || (dev >= 0 && i != (uint32_t)dev) || !range)
                    continue;
                memd_region_cut cut = {0};
                memd_device_region_cut(st->devs[i].dev, (memd_kind)k, (uint8_t)r, &cut);
                block_page bp = {.c = {.out = out, .device = spec->id, .kind = (uint8_t)k,
                                       .region = (uint8_t)r, .start = cut.start,
                                       .end = cut.end},
                                 .stop = stop, .sent = o == want ? sent : 0};
                int rc = -ENOENT;
                if (bp.sent && s->dump_cursor == *cursor)
                    rc = memd_range_foreach_from(range, s->dump_offset, visit_block_page, &bp);
                if (rc == -ENOENT || rc == -EINVAL) { /* walk to it: the map changed */
                    bp.skip = bp.sent;
                    rc = memd_range_foreach(range, visit_block_page, &bp);
                }
                if (rc < 0)
                    return rc;
                if (rc > 0) {
                    *cursor = s->dump_cursor = BLOCK_PHASE | o << BLOCK_SHIFT | bp.sent;
                    s->dump_offset = bp.resume;
                    return 0;
                }
            }
        }
    }
    *cursor = 0;
    return 0;
}

static int put_page_end(uint64_t next, dump_out *out)
{
    uint8_t *p = rec(out, MEMD_REC_PAGE);
    if (!p)
        return -ENOMEM;
    memd_wire_page_rec r = {.next = next};
    memd_wire_page_rec_put(p, &r);
    return 0;
}

/* The map up to the allocations: SERVER, then per device its groups and regions. */
static int build_head(const memd_state *st, int dev, uint32_t flags, dump_out *out)
{
    int rc = put_server(st, out);
    const uint32_t *clients = st->group_clients; /* kept up to date by alloc.c */
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
    if (rc == 0 && (flags & MEMD_DUMP_F_BANKS))
        rc = put_subdevs(st, flags, out);
    if (rc == 0)
        rc = memd_dump_limits(st, dev, flags, out->b);
    return rc;
}

static int build(const memd_state *st, const memd_session *s, int dev, uint32_t flags,
                 dump_out *out)
{
    int rc = build_head(st, dev, flags, out);
    if (rc == 0)
        rc = put_allocs(st, s, dev, flags, out);
    if (rc == 0)
        rc = put_sessions(st, s, flags, out);
    if (rc == 0 && (flags & MEMD_DUMP_F_MODELS))
        rc = memd_models_dump(st, s, out->b);
    return rc;
}

/* Blocks in the regions a dump shows, from the counters (O(regions)). */
static uint64_t count_blocks(const memd_state *st, int dev)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < st->ndevs; i++) {
        const memd_device_spec *spec = st->devs[i].spec;
        for (int k = 0; k < MEMD_KIND_COUNT && (dev < 0 || i == (uint32_t)dev); k++) {
            for (uint32_t r = 0; r < spec->groups[k].nregions; r++) {
                memd_range_stats rs;
                if (memd_device_region_stats(st->devs[i].dev, (memd_kind)k, (uint8_t)r, &rs) == 0)
                    n += rs.allocations + rs.free_blocks;
            }
        }
    }
    return n;
}

/* One page from *cursor (protocol.h): the head, allocations, then blocks; the tail
 * (sessions, models) comes with the last. */
static int build_page(const memd_state *st, memd_session *s, int dev, uint32_t flags,
                      uint64_t cursor, size_t limit, dump_out *out)
{
    bool later = cursor ? (cursor & (BLOCK_PHASE | BLOCKS_LATER)) != 0
                        : (flags & MEMD_DUMP_F_BLOCKS) && count_blocks(st, dev) > PAGE_ALLOCS;
    int rc = cursor == 0 ? build_head(st, dev, later ? flags & ~MEMD_DUMP_F_BLOCKS : flags, out)
                         : 0;
    if (rc == 0 && !(cursor & BLOCK_PHASE)) {
        size_t start = out->b->len;
        cursor &= ~BLOCKS_LATER;
        rc = put_allocs_page(st, s, dev, flags, limit, &cursor, out);
        if (rc == 0 && cursor == 0 && later) {
            cursor = BLOCK_PHASE; /* the blocks, in what is left of the page */
            limit -= out->b->len - start < limit ? out->b->len - start : limit;
        } else if (cursor && later) {
            cursor |= BLOCKS_LATER;
        }
    }
    if (rc == 0 && (cursor & BLOCK_PHASE))
        rc = put_blocks_page(st, s, dev, limit, &cursor, out);
    if (rc == 0 && cursor == 0)
        rc = put_sessions(st, s, flags, out);
    if (rc == 0 && cursor == 0 && (flags & MEMD_DUMP_F_MODELS))
        rc = memd_models_dump(st, s, out->b);
    if (rc == 0)
        rc = put_page_end(cursor, out);
    return rc;
}

/* What an unpaged dump holds at least: the allocations' records (all devices). */
static size_t unpaged_floor(const memd_state *st, const memd_session *s, int dev)
{
    size_t n = dev >= 0 ? 0 : s->admin ? st->handles.len : s->nholds;
    return n * (MEMD_WIRE_TAG_SIZE + memd_wire_rec_size(MEMD_REC_ALLOC));
}

int memd_op_dump(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                 memd_buf *out)
{
    memd_wire_dump_req req;
    int rc = memd_wire_dump_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    int dev = -1;
    if (req.device != UINT32_MAX && (dev = memd_state_dev_index(st, req.device)) < 0) {
        memd_error_set(&err, -ENODEV, "no device %u (%u configured)", req.device, st->ndevs);
        return memd_reply_fail(st, h, out, &err, false);
    }
    bool paged = req.flags & MEMD_DUMP_F_PAGED;
    if (paged && st->next_handle > UINT64_MAX >> (SUB_BITS + 2)) {
        memd_error_set(&err, -EOVERFLOW, "handles past 2^%d do not fit a dump cursor",
                       62 - SUB_BITS);
        return memd_reply_fail(st, h, out, &err, false);
    }
    /* The reply may take what is left of the backlog; with nothing unsent, all of it. */
    size_t backlog = memd_reply_backlog(st), room = st->reply_room;
    size_t cap = paged ? MEMD_MAX_REPLY : backlog > REPLY_MIN ? backlog : REPLY_MIN;
    size_t want = paged ? PAGE_MIN : unpaged_floor(st, s, dev);
    if (!paged && want > cap) {
        memd_error_set(&err, -E2BIG, "dump of over %zu bytes larger than %zu (max_reply_backlog): "
                       "ask for it in pages (MEMD_DUMP_F_PAGED), as memctl and libmemclient do",
                       want, cap);
        return memd_reply_fail(st, h, out, &err, false);
    }
    if (want > room && room < backlog)
        return MEMD_DEFER;
    size_t hdr_off = out->len;
    if (!memd_reply_begin(out, h->opcode, h->id, 0))
        return -ENOMEM;
    dump_out o = {.b = out, .end = out->len + cap};
    if (paged)
        rc = build_page(st, s, dev, req.flags, req.cursor,
                        room < PAGE_BYTES ? (room > PAGE_MIN ? room : PAGE_MIN) : PAGE_BYTES, &o);
    else
        rc = build(st, s, dev, req.flags, &o);
    if (o.over)
        rc = -E2BIG;
    if (!paged && rc == 0 && out->len - hdr_off > room && room < backlog) {
        out->len = hdr_off; /* it waits for the earlier replies to go */
        return MEMD_DEFER;
    }
    if (rc < 0) {
        out->len = hdr_off;
        if (rc == -E2BIG)
            memd_error_set(&err, rc, "dump larger than %zu bytes: %s", cap,
                           paged ? "ask for one device or leave out blocks"
                                 : "ask for it in pages (MEMD_DUMP_F_PAGED), as memctl and "
                                   "libmemclient do");
        else
            memd_error_set(&err, rc, "dump failed: daemon out of memory");
        return memd_reply_fail(st, h, out, &err, false);
    }
    memd_reply_patch_len(out, hdr_off);
    return 0;
}
