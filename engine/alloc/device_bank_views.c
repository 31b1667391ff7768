/* memd engine — per-bank views of a split region (device.h): one bank's map is its own
 * pieces (d->bank) merged with the lockstep buffers (d->range); see device_banks.c.
 * Views are not hot paths: they walk the blocks. */
#include <errno.h>

#include "device_internal.h"

static bool bank_ok(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank)
{
    return d && (unsigned)kind < MEMD_KIND_COUNT && region < MEMD_MAX_REGIONS &&
           bank < d->spec.groups[kind].banks && d->range[kind][region];
}

/* The merged walk. At every position reached, no allocation of either map straddles
 * it (the two maps' allocations are disjoint): a position is the start of an
 * allocation of one of them, or free in both up to the nearer end of their two free
 * blocks. */
static int merged_walk(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                       memd_range_visit_fn fn, void *ctx)
{
    const memd_range *lock = d->range[kind][region], *own = d->bank[kind][region][bank];
    uint64_t lo, hi, m = d->spec.groups[kind].alignment;
    memd_region_span(d, kind, region, &lo, &hi);
    for (uint64_t pos = lo, s; pos < hi; pos += s) {
        int rc;
        if (memd_range_lookup(lock, pos, &s) == 0 || memd_range_lookup(own, pos, &s) == 0) {
            rc = fn(ctx, pos, s, true);
        } else {
            uint64_t at, b1, s1, b2, s2;
            if (!memd_range_fit_from(lock, m, 0, MEMD_DIR_BOTTOM_UP, pos, &at, &b1, &s1) ||
                at != pos ||
                !memd_range_fit_from(own, m, 0, MEMD_DIR_BOTTOM_UP, pos, &at, &b2, &s2) ||
                at != pos)
                return -EFAULT; /* inside an allocation: the maps overlap */
            s = (b1 + s1 < b2 + s2 ? b1 + s1 : b2 + s2) - pos;
            rc = fn(ctx, pos, s, false);
        }
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
    if (allocated)
        return 0;
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
    st->allocated += own.allocated;
    st->free = st->total - st->allocated;
    st->allocations += own.allocations;
    st->free_blocks = st->largest_free = st->largest_free_addr = 0;
    return merged_walk(d, kind, region, bank, free_stats, st) ? -EFAULT : 0;
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
            check_ctx lc = {c, NULL, 0}, pc = {c, lock, 0};
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
