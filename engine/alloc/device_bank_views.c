/* memd engine — per-bank views of a split region (device.h): one bank's map is its own
 * pieces (d->bank) merged with the lockstep buffers (d->range), which a range-lockstep
 * buffer may overlap; see device_banks.c.
 * Views are not hot paths: they walk the blocks. */
#include <errno.h>

#include "device_internal.h"

static bool bank_ok(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank)
{
    return d && (unsigned)kind < MEMD_KIND_COUNT && region < MEMD_MAX_REGIONS &&
           bank < d->spec.groups[kind].banks && d->range[kind][region];
}

/* Whether pos is allocated in r, and where that (or the free block from pos) ends:
 * an allocation starting at pos, else the free block holding pos, else pos lies inside
 * an allocation (only when a range-lockstep buffer lies over a piece, so that the walk
 * stepped past the start of one), which runs to r's next free byte (hi: none). */
static bool taken(const memd_range *r, uint64_t pos, uint64_t hi, uint64_t m, uint64_t *end)
{
    uint64_t s, at, b, bs;
    if (memd_range_lookup(r, pos, &s) == 0) {
        *end = pos + s;
        return true;
    }
    if (!memd_range_fit_from(r, m, 0, MEMD_DIR_BOTTOM_UP, pos, &at, &b, &bs)) {
        *end = hi;
        return true;
    }
    *end = at == pos ? b + bs : at;
    return at != pos;
}

/* The merged walk: a position is allocated in either map (up to the further end when
 * in both: their union, one block) or free in both (up to the nearer end). Without
 * overlaps each allocated block is one allocation of one map. */
static int merged_walk(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                       memd_range_visit_fn fn, void *ctx)
{
    const memd_range *lock = d->range[kind][region], *own = d->bank[kind][region][bank];
    uint64_t lo, hi, m = d->spec.groups[kind].alignment;
    memd_region_span(d, kind, region, &lo, &hi);
    for (uint64_t pos = lo, s; pos < hi; pos += s) {
        uint64_t el, eo;
        bool tl = taken(lock, pos, hi, m, &el), to = taken(own, pos, hi, m, &eo);
        if (tl && to)
            s = (el > eo ? el : eo) - pos;
        else if (tl || to)
            s = (tl ? el : eo) - pos;
        else
            s = (el < eo ? el : eo) - pos;
        int rc = fn(ctx, pos, s, tl || to);
        if (rc)
            return rc;
    }
    return 0;
}

int memd_device_bank_foreach(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                             memd_range_visit_fn fn, void *ctx)
{
    if (!bank_ok(d, kind, region, bank))
        return -ENOENT;
    if (!fn)
        return -EINVAL;
    if (!d->bank[kind][region])
        return memd_range_foreach(d->range[kind][region], fn, ctx);
    return merged_walk(d, kind, region, bank, fn, ctx);
}

static int free_stats(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    memd_range_stats *st = ctx;
    if (allocated) {
        st->allocated += size;
        return 0;
    }
    st->free_blocks++;
    if (size > st->largest_free) { /* strictly: the lowest of equal blocks stays */
        st->largest_free = size;
        st->largest_free_addr = addr;
    }
    return 0;
}

static int bank_stats(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                      memd_range_stats *st)
{
    const memd_range *lock = d->range[kind][region];
    memd_range_stats own;
    memd_range_stats_get(lock, st);
    if (!d->bank[kind][region])
        return 0;
    memd_range_stats_get(d->bank[kind][region][bank], &own);
    if (own.allocations == 0) /* no pieces: the bank's map is the lockstep map */
        return 0;
    if (st->allocations == 0) {
        *st = own;
        return 0;
    }
    st->allocations += own.allocations;
    st->allocated = st->free_blocks = st->largest_free = st->largest_free_addr = 0;
    (void)merged_walk(d, kind, region, bank, free_stats, st); /* free_stats never stops it */
    st->free = st->total - st->allocated;
    return 0;
}

int memd_device_bank_stats(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                           memd_range_stats *st)
{
    if (!bank_ok(d, kind, region, bank) || !st)
        return -ENOENT;
    int rc = bank_stats(d, kind, region, bank, st);
    if (rc == 0) /* the parts given up hold nothing */
        memd_cut_stats(d, kind, region, st);
    return rc;
}

/* ---------------------------------------------------------------- check */

typedef struct check_ctx {
    const memd_cover *cover;
    const memd_range *lock; /* pieces: must be clear of the lockstep map; NULL: lockstep */
    uint64_t bytes;         /* allocated bytes seen */
} check_ctx;

static int check_span(void *vctx, uint64_t addr, uint64_t size, bool allocated)
{
    check_ctx *c = vctx;
    uint64_t f, at, b, bs;
    if (!allocated)
        return 0;
    c->bytes += size;
    /* Wholly covered: the first uncovered byte from addr on lies past it. */
    if (c->cover && memd_cover_next_free(c->cover, addr, &f) && f < addr + size)
        return -EFAULT;
    if (c->lock && (!memd_range_fit_from(c->lock, size, 0, MEMD_DIR_BOTTOM_UP, addr, &at, &b, &bs) ||
                    at != addr))
        return -EFAULT;
    return 0;
}

int memd_device_check(const memd_device *d)
{
    if (!d)
        return -EFAULT;
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        for (uint8_t r = 0; r < MEMD_MAX_REGIONS; r++) {
            const memd_range *lock = d->range[k][r];
            if (!lock)
                continue;
            if (memd_range_check(lock) < 0)
                return -EFAULT;
            if (!d->bank[k][r])
                continue;
            const memd_cover *c = d->cover[k][r];
            /* A range-lockstep buffer may lie over pieces outside its set. */
            check_ctx lc = {c, NULL, 0}, pc = {c, d->ranged[k][r] ? NULL : lock, 0};
            if (c && (memd_cover_check(c) < 0 || memd_range_foreach(lock, check_span, &lc) != 0))
                return -EFAULT;
            for (uint32_t b = 0; b < d->spec.groups[k].banks; b++)
                if (memd_range_check(d->bank[k][r][b]) < 0 ||
                    memd_range_foreach(d->bank[k][r][b], check_span, &pc) != 0)
                    return -EFAULT;
            /* Without a coverage (not built yet, or none needed while no bank-set buffer
             * is there) the pieces only have to be clear of the lockstep buffers (above).
             * No bank-set buffer counted exactly when no bank holds a piece. */
            uint64_t pieces = 0;
            for (uint32_t b = 0; b < d->spec.groups[k].banks; b++)
                pieces += memd_range_allocated(d->bank[k][r][b]);
            if ((d->subsets[k][r] == 0) != (pieces == 0))
                return -EFAULT;
            /* Nothing more is covered than the buffers and pieces there are. */
            if (c && memd_cover_weight(c) * d->spec.groups[k].alignment != lc.bytes + pc.bytes)
                return -EFAULT;
        }
    return 0;
}
