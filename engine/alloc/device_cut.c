/* memd engine — a region's allocatable range shrunk from either end and restored
 * (device.h, memd_device_region_shrink): tt-metal's shrink_size / reset_size.
 *
 * The part given up is a lockstep reservation of no buffer at that end of what is left:
 * every bank's map (the lockstep map, or the coverage of a split region) then has it
 * taken, so no placement code needs to know about it, and giving up costs what an
 * alloc-at costs, O(log n). Each shrink adds one reservation; a reset releases them.
 * Statistics and lowest addresses leave them out: they hold nothing. */
#include <errno.h>
#include <stdlib.h>

#include "device_internal.h"

static const memd_range *lockstep(const memd_device *d, memd_kind k, uint8_t r)
{
    if (!d || (unsigned)k >= MEMD_KIND_COUNT || r >= MEMD_MAX_REGIONS)
        return NULL;
    return d->range[k][r];
}

/* [*from, *to): what is left of the region between the parts given up. */
static void left(const memd_device *d, memd_kind k, uint8_t r, uint64_t *from, uint64_t *to)
{
    memd_region_span(d, k, r, from, to);
    *from += d->cut[k][r][MEMD_END_BOTTOM].bytes;
    *to -= d->cut[k][r][MEMD_END_TOP].bytes;
}

/* The buffers met in [a, b): the lowest start and the highest end. */
typedef struct occupied {
    uint64_t a, b, low, high;
    bool found;
} occupied;

static int visit(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    occupied *o = ctx;
    if (addr >= o->b)
        return 1;
    if (!allocated || addr + size <= o->a)
        return 0;
    if (!o->found || addr < o->low)
        o->low = addr;
    if (!o->found || addr + size > o->high)
        o->high = addr + size;
    o->found = true;
    return 0;
}

/* Every bank of a split region (its pieces beside the lockstep map), else the lockstep
 * map: a walk, only to say why a shrink was refused. */
static void find_occupied(const memd_device *d, memd_kind k, uint8_t r, occupied *o)
{
    uint32_t banks = d->bank[k][r] ? d->spec.groups[k].banks : 1;
    for (uint32_t i = 0; i < banks; i++)
        (void)memd_device_bank_foreach(d, k, r, i, visit, o);
}

static int grow(memd_cut *c)
{
    if (c->n < c->cap)
        return 0;
    uint32_t cap = c->cap ? 2 * c->cap : 4;
    uint64_t *at = realloc(c->at, sizeof(*at) * cap);
    if (!at)
        return -ENOMEM;
    c->at = at;
    uint64_t *len = realloc(c->len, sizeof(*len) * cap);
    if (!len)
        return -ENOMEM;
    c->len = len;
    c->cap = cap;
    return 0;
}

int memd_device_region_shrink(memd_device *d, memd_kind k, uint8_t r, memd_end end,
                              uint64_t bytes, memd_error *err)
{
    if (lockstep(d, k, r) && end == MEMD_END_BOTTOM && d->win_cut[k][r])
        return memd_error_set(err, -EBUSY, "device '%s' %s region '%s': its bottom is carved "
                              "for sub-device windows; shrink from the top",
                              d->spec.name, memd_kind_name(k), d->spec.groups[k].regions[r].name);
    return memd_cut_shrink(d, k, r, end, bytes, err);
}

int memd_cut_shrink(memd_device *d, memd_kind k, uint8_t r, memd_end end, uint64_t bytes,
                    memd_error *err)
{
    if (!lockstep(d, k, r) || (end != MEMD_END_BOTTOM && end != MEMD_END_TOP))
        return memd_error_set(err, -ENOENT, "no allocatable region %u in that bank group",
                              (unsigned)r);
    const memd_bank_group_spec *g = &d->spec.groups[k];
    const char *side = end == MEMD_END_BOTTOM ? "bottom" : "top";
#define WHERE "device '%s' %s region '%s': "
#define WHO d->spec.name, memd_kind_name(k), g->regions[r].name
    if (bytes == 0 || bytes % g->alignment)
        return memd_error_set(err, -EINVAL,
                              WHERE "shrink by a non-zero multiple of the alignment %llu, not %llu",
                              WHO, (unsigned long long)g->alignment, (unsigned long long)bytes);
    uint64_t from, to;
    left(d, k, r, &from, &to);
    if (bytes > to - from)
        return memd_error_set(err, -ERANGE,
                              WHERE "cannot give up %llu bytes from the %s: [0x%llx, 0x%llx) "
                              "is left",
                              WHO, (unsigned long long)bytes, side, (unsigned long long)from,
                              (unsigned long long)to);
    memd_cut *c = &d->cut[k][r][end];
    if (grow(c) < 0)
        return memd_error_set(err, -ENOMEM, "out of memory");
    uint64_t at = end == MEMD_END_BOTTOM ? from : to - bytes;
    memd_placement p = {.kind = k, .region = r, .address = at, .size_per_bank = bytes,
                        .banks = g->banks, .page_size = bytes, .mode = MEMD_BANKS_ALL};
    int rc = memd_lockstep_alloc_at(d, &p);
    if (rc == -EBUSY) {
        occupied o = {.a = at, .b = at + bytes};
        find_occupied(d, k, r, &o);
        return memd_error_set(err, -EBUSY,
                              WHERE "cannot give up [0x%llx, 0x%llx) from the %s: %s 0x%llx",
                              WHO, (unsigned long long)at, (unsigned long long)(at + bytes), side,
                              end == MEMD_END_BOTTOM ? "a buffer there starts at"
                                                     : "a buffer there ends at",
                              (unsigned long long)(end == MEMD_END_BOTTOM ? o.low : o.high));
    }
    if (rc < 0)
        return memd_error_set(err, rc, WHERE "out of memory", WHO);
#undef WHERE
#undef WHO
    c->at[c->n] = at;
    c->len[c->n++] = bytes;
    c->bytes += bytes;
    return 0;
}

int memd_device_region_reset(memd_device *d, memd_kind k, uint8_t r, unsigned ends)
{
    if (!lockstep(d, k, r))
        return -ENOENT;
    if (d->win_cut[k][r]) /* the windows' part stays */
        ends &= ~(1u << MEMD_END_BOTTOM);
    for (int e = MEMD_END_BOTTOM; e <= MEMD_END_TOP; e++) {
        if (ends & (1u << e))
            memd_cut_release(d, k, r, (memd_end)e, 0);
    }
    return 0;
}

int memd_device_region_cut(const memd_device *d, memd_kind k, uint8_t r, memd_region_cut *out)
{
    if (!lockstep(d, k, r))
        return -ENOENT;
    out->bottom = d->cut[k][r][MEMD_END_BOTTOM].bytes;
    out->top = d->cut[k][r][MEMD_END_TOP].bytes;
    out->window = d->win_cut[k][r];
    left(d, k, r, &out->start, &out->end);
    return 0;
}

bool memd_cut_lowest(const memd_device *d, memd_kind k, uint8_t r, uint64_t *addr)
{
    const memd_range *lock = d->range[k][r];
    if (!d->cut[k][r][MEMD_END_BOTTOM].n && !d->cut[k][r][MEMD_END_TOP].n)
        return memd_range_lowest(lock, addr);
    uint64_t from, to, at, blk, size;
    left(d, k, r, &from, &to);
    uint64_t a = from;
    /* Free at `from`: the first buffer is where that free block ends. */
    if (from < to && memd_range_fit_from(lock, d->spec.groups[k].alignment, 0, MEMD_DIR_BOTTOM_UP, from,
                                        &at, &blk, &size) &&
        at == from)
        a = blk + size;
    if (a >= to) /* only the part given up at the top */
        return false;
    *addr = a;
    return true;
}

void memd_cut_release(memd_device *d, memd_kind k, uint8_t r, memd_end end, uint32_t keep)
{
    memd_cut *c = &d->cut[k][r][end];
    while (c->n > keep) {
        c->n--;
        (void)memd_lockstep_free(d, k, r, c->at[c->n]); /* held: never fails */
        c->bytes -= c->len[c->n];
    }
}

void memd_cuts_destroy(memd_device *d)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        for (int r = 0; r < MEMD_MAX_REGIONS; r++)
            for (int e = 0; e < 2; e++) {
                free(d->cut[k][r][e].at);
                free(d->cut[k][r][e].len);
            }
}
