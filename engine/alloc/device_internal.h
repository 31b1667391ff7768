/* memd engine — private parts of the device model shared by device*.c. */
#ifndef MEMD_ENGINE_DEVICE_INTERNAL_H
#define MEMD_ENGINE_DEVICE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "bank_hints.h"
#include "cover.h"
#include "device.h"

/* The part of a region given up at one end (device_cut.c): lockstep reservations that
 * hold no buffer, one per shrink since the last reset, [at[i], at[i] + len[i]). */
typedef struct memd_cut {
    uint64_t bytes;   /* their sum */
    uint32_t n, cap;
    uint64_t *at, *len;
} memd_cut;

/* A sub-device window (device_window.c): its own map over [lo, lo + size) of its banks;
 * map NULL: a free slot. */
typedef struct memd_window {
    memd_range *map;
    memd_kind kind;
    uint8_t region;
    uint64_t lo, size;
    uint32_t *banks, nbanks;
} memd_window;

struct memd_device {
    memd_device_spec spec; /* deep copy: the device never points into the caller's spec */
    /* One allocator per allocatable region; NULL for reserved regions and absent groups. */
    memd_range *range[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    /* Once a region is split (device_banks.c): one allocator per bank, holding that
     * bank's pieces of bank-set buffers only, and a coverage map of every lockstep
     * buffer and every bank-set buffer's spans; NULL before. range[][] holds the
     * lockstep buffers (alone) either way. */
    memd_range **bank[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    memd_cover *cover[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    /* First-fit bounds for per-bank searches that meet lockstep buffers (bank_hints.h):
     * made once such searches walk long (device_banks.c, hint_measure), dropped when
     * they no longer do; while they exist every free in the region tells them. */
    memd_hints *hints[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    int64_t hint_credit[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    uint32_t hint_probe[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    /* Blocks per merged per-bank search above which bounds pay for their upkeep
     * (MEMD_HINT_WALK); 0: bounds always (tests use it to exercise them). */
    uint32_t hint_walk;
    /* Live bank-set buffers (uniform RANGE and per bank) per region: not in range[][],
     * but counted in its statistics' allocations. */
    uint64_t subsets[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    /* Live RANGE_LOCKSTEP buffers per region (in range[][]): while there are any, a
     * piece may lie under a lockstep-map buffer (memd_device_check). */
    uint64_t ranged[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    /* A split region without bank-set buffers: lockstep operations left before it goes
     * back to one map (device_banks.c, unsplit). */
    uint64_t idle[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    /* Given up at the bottom [MEMD_END_BOTTOM] and the top [MEMD_END_TOP] of each region. */
    memd_cut cut[MEMD_KIND_COUNT][MEMD_MAX_REGIONS][2];
    /* Sub-device windows, slot i is id i + 1; the bottom given up for them per region. */
    memd_window *win;
    uint32_t nwin;
    uint64_t win_cut[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
    uint32_t oom_bank; /* memd_device_oom_bank */
    memd_device_walks walks;
};

/* Measured (memd-bench-alloc --banks mixed, CPU time): at 1k live buffers a merged
 * per-bank search looks at ~3.5 blocks and bounds cost ~6 % more; at 10k ~94 blocks (32
 * with bounds) and they cost 0-4 % more; at 30k ~400 (~77 with bounds), 6-12 % less. */
#define MEMD_HINT_WALK 128

static inline bool memd_is_pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* round_up(v, a) for a power of two a; false on overflow. */
static inline bool memd_round_up(uint64_t v, uint64_t a, uint64_t *out)
{
    uint64_t r = (v + (a - 1)) & ~(a - 1);
    if (r < v)
        return false;
    *out = r;
    return true;
}

static inline bool memd_mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* [*lo, *hi): the aligned span of an allocatable region, its allocators' usable range. */
static inline void memd_region_span(const memd_device *d, memd_kind k, uint8_t r, uint64_t *lo,
                                    uint64_t *hi)
{
    const memd_bank_group_spec *g = &d->spec.groups[k];
    uint64_t m = g->alignment;
    *lo = (g->regions[r].base + (m - 1)) & ~(m - 1);
    *hi = (g->regions[r].base + g->regions[r].size) & ~(m - 1);
}

/* The alignment a request's start address honours: max(group, class policy, request).
 * The request must have passed memd_device_footprint. */
uint64_t memd_device_req_alignment(const memd_device *d, memd_kind kind, const memd_alloc_req *req);

/* device_banks.c: placement once a region is split, or for a subset / per-bank request. */
int memd_banks_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *p);
int memd_banks_alloc_at(memd_device *d, const memd_placement *p);
/* A bank-set placement's arrays from its request: set (every bank without one), and for
 * PER_BANK addrs to fill and the request's sizes rounded. 0 or -ENOMEM (p's arrays
 * freed). */
int memd_banks_fill_set(const memd_device *d, memd_placement *p, const memd_alloc_req *req);
/* A per-core shard size as the piece p (kind and region known) reserves: at least the
 * region's min_alloc, rounded up to the group's alignment. false on overflow. */
bool memd_piece_bytes(const memd_device *d, const memd_placement *p, uint64_t bytes,
                      uint64_t *out);
int memd_banks_release(memd_device *d, const memd_placement *p);

/* The lockstep map's own alloc-at and free at an address in every bank of a region (a
 * split region's coverage, else its range), below sub-device windows: memd_device_alloc_at
 * and memd_device_free end here, and the allocatable range's cut (device_cut.c) reserves
 * and gives back through them without calling into device.c. The region is valid. */
static inline int memd_lockstep_alloc_at(memd_device *d, const memd_placement *p)
{
    if (p->mode != MEMD_BANKS_ALL || d->bank[p->kind][p->region])
        return memd_banks_alloc_at(d, p);
    return memd_range_alloc_at(d->range[p->kind][p->region], p->address, p->size_per_bank);
}

static inline int memd_lockstep_free(memd_device *d, memd_kind kind, uint8_t region,
                                     uint64_t address)
{
    if (d->bank[kind][region]) {
        memd_placement p = {.kind = kind, .region = region, .address = address,
                            .mode = MEMD_BANKS_ALL};
        return memd_banks_release(d, &p);
    }
    return memd_range_free(d->range[kind][region], address, NULL);
}
void memd_banks_destroy(memd_device *d);

/* device_cut.c: the lowest address the region's lockstep map holds a buffer at, the
 * parts given up not counted (false: none); frees the cuts' arrays. */
bool memd_cut_lowest(const memd_device *d, memd_kind kind, uint8_t region, uint64_t *addr);
void memd_cuts_destroy(memd_device *d);
/* The shrink without the windows' check (device_window.c carves with it), and the
 * release of the parts given up at one end after the first `keep`. */
int memd_cut_shrink(memd_device *d, memd_kind k, uint8_t r, memd_end end, uint64_t bytes,
                    memd_error *err);
void memd_cut_release(memd_device *d, memd_kind k, uint8_t r, memd_end end, uint32_t keep);

/* device_window.c: placement in a window (req->window); reserve (a restored buffer) and
 * release there: 1 when p is a window's, 0 when it is not, or a negative errno; where a
 * fixed placement may go (a window's session in its window, -ERANGE outside; anyone else
 * outside every window, -EBUSY inside); teardown. */
int memd_window_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *p);
int memd_window_reserve(memd_device *d, const memd_placement *p);
int memd_window_release(memd_device *d, const memd_placement *p);
int memd_window_fixed(const memd_device *d, const memd_alloc_req *req, const memd_placement *p);
void memd_windows_destroy(memd_device *d);

/* Takes the cuts out of a region's statistics (here: the bank views use it too, and
 * device_cut.c uses them). */
static inline void memd_cut_stats(const memd_device *d, memd_kind k, uint8_t r,
                                  memd_range_stats *st)
{
    for (int e = MEMD_END_BOTTOM; e <= MEMD_END_TOP; e++) {
        const memd_cut *c = &d->cut[k][r][e];
        st->total -= c->bytes;
        st->allocated -= c->bytes;
        st->allocations -= c->n;
    }
}

#endif
