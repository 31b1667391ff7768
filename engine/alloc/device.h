/* memd engine — a device: bank groups (DRAM, SRAM) sharing one lockstep address map,
 * regions with their own range allocators, a buffer-class policy and memory scopes.
 *
 * Lockstep: a bank group has ONE address map; a buffer of P pages of page size S spread
 * over B banks reserves ceil(P / B) * round_up(S, alignment) bytes at the same address
 * in every bank of the group. Bank i's absolute address of an allocation is
 * address + bank_offsets[i].
 *
 * Pure engine code: no I/O, no globals. The caller (daemon) owns handles, sessions and
 * names; the engine only places and releases ranges. */
#ifndef MEMD_ENGINE_DEVICE_H
#define MEMD_ENGINE_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "memd/types.h"
#include "names.h"
#include "range.h"

#define MEMD_MAX_REGIONS 8

typedef struct memd_region_spec {
    char name[MEMD_NAME_MAX]; /* "code", "data", "logging", "reserved", "buffers", ... */
    uint64_t base;            /* offset inside the bank's address space */
    uint64_t size;
    bool allocatable;         /* false for "reserved" (firmware, kernels) */
    uint64_t min_alloc;       /* min_allocation_size: a buffer takes at least this much
                                 per bank (tt-metal's allocators have one); 0: none */
} memd_region_spec;

/* The core a bank belongs to (tt-metal devices): logical and NOC coordinates. */
typedef struct memd_bank_core {
    uint16_t logical_x, logical_y;
    uint16_t noc_x, noc_y;
} memd_bank_core;

typedef struct memd_bank_group_spec {
    uint32_t banks;           /* 0: the device has no such bank group */
    uint64_t bank_size;
    uint64_t alignment;       /* minimum alignment of every allocation (DRAM_ALIGNMENT) */
    int64_t *bank_offsets;    /* banks entries, owned by the spec (may be NULL: all 0) */
    memd_bank_core *cores;    /* banks entries, owned (NULL: no core coordinates known) */
    uint64_t page_size;       /* default page of the group's model buffers; 0: one page */
    uint32_t nregions;
    memd_region_spec regions[MEMD_MAX_REGIONS];
} memd_bank_group_spec;

/* Where one buffer class goes in one bank group. */
typedef struct memd_class_policy {
    bool enabled;             /* false: this class may not use this bank group */
    uint8_t region;           /* index into the group's regions */
    memd_dir dir;
    memd_fit fit;
    uint64_t alignment;       /* 0: the group's alignment; else max(this, group's) */
    uint64_t page_size;       /* 0: the group's page_size */
} memd_class_policy;

typedef struct memd_texture_spec {
    bool enabled;             /* dram.texture offered */
    uint32_t max_width;       /* in texels */
    uint32_t max_height;
    uint64_t pitch_alignment; /* row pitch alignment in bytes, power of two */
} memd_texture_spec;

typedef struct memd_device_spec {
    uint32_t id;
    char name[MEMD_NAME_MAX];
    char arch[MEMD_NAME_MAX];
    memd_bank_group_spec groups[MEMD_KIND_COUNT];
    memd_class_policy policy[MEMD_KIND_COUNT][MEMD_CLASS_COUNT];
    memd_texture_spec texture;
    /* Described by tt-metal's descriptor files: where tt-metal's runtime and kernels
     * depend on its allocator's rules, the device keeps them (doc/ttmetal.md, "Where
     * tt-metal devices differ"): no bank sets in DRAM; the daemon adds no interleaved
     * buffers in a sub-device and a per-bank buffer's one address is 0. */
    bool ttmetal;
} memd_device_spec;

void memd_device_spec_free(memd_device_spec *spec); /* frees owned arrays, not spec itself */

typedef struct memd_device memd_device;

/* Validates the spec (regions inside the bank and not overlapping, policies naming
 * allocatable regions, powers of two, no overflow). On error returns -EINVAL (or -ENOMEM)
 * and sets err's code and message; its file and position are the caller's to fill. */
int memd_device_create(const memd_device_spec *spec, memd_device **out, memd_error *err);
void memd_device_destroy(memd_device *d);
const memd_device_spec *memd_device_spec_of(const memd_device *d);

/* Requests give bytes, or shape + dtype. dram.texture takes only shape + dtype: shape is
 * [height, width] or [height, width, 4] texels of 4 channels each; a row is width * 4 *
 * sizeof(dtype) bytes padded to the texture pitch alignment, every row is one page
 * (page_size 0 or the pitch) and the placement returns the pitch. */
typedef struct memd_alloc_req {
    memd_class cls;
    memd_scope scope;
    uint64_t bytes;                  /* or 0 when shape + dtype are given */
    memd_dtype dtype;
    uint32_t ndim;
    uint64_t shape[MEMD_MAX_DIMS];
    uint64_t page_size;              /* 0: the whole buffer is one page */
    uint32_t banks;                  /* 0: every bank of the group (or of the bank set) */
    uint64_t alignment;              /* 0: the class policy's */
    /* Bank subsets. No set and not per_bank: lockstep over every bank (MEMD_BANKS_ALL).
     * A set (bank ids of the group, strictly increasing): one address free in every bank
     * of the set (MEMD_BANKS_RANGE, tt-metal's uniform per-core; a set of every bank is
     * plain lockstep). per_bank: an independent address in each bank of the set (every
     * bank without a set). range_lockstep, with a set and not per_bank: the address is
     * searched in the set's banks as RANGE, then reserved in every bank as lockstep
     * (MEMD_BANKS_RANGE_LOCKSTEP, tt-metal's range lockstep). The pages are spread over
     * the set's banks; `banks` must then be 0 or the set's size. */
    const uint32_t *bank_set;
    uint32_t nbank_set;
    bool per_bank;
    bool range_lockstep;
    /* A sub-device window's id (memd_device_window_open) to place the buffer in, with a
     * bank set inside the window's banks and not per bank or range lockstep; 0: none. */
    uint32_t window;
    /* Per-core shard sizes (tt-metal's set_per_core_shard_sizes): with per_bank and a
     * set, sizes[i] bytes for the piece in bank_set[i] (each > 0, rounded up as a page);
     * bytes, shape and page_size are then 0 and every piece is one page. NULL: every
     * piece is size_per_bank. */
    const uint64_t *sizes;
} memd_alloc_req;

typedef struct memd_placement {
    memd_kind kind;
    uint8_t region;
    uint64_t address;                /* same in every bank of the group */
    uint64_t size_per_bank;          /* bytes reserved in each bank */
    uint32_t banks;                  /* banks the data is spread over */
    uint64_t page_size;              /* effective page size (padded) */
    uint64_t pitch;                  /* dram.texture: row pitch in bytes; else 0 */
    /* Bank subsets (mode RANGE, RANGE_LOCKSTEP or PER_BANK; for ALL: 0 and NULL). set:
     * the nset bank ids (RANGE_LOCKSTEP: where its pages are, not what it reserves),
     * strictly increasing; addrs (PER_BANK only): addrs[i] is the address in bank set[i]
     * (`address` is then addrs[0]); sizes (PER_BANK only, may be NULL): sizes[i] is the
     * piece's bytes in bank set[i] (size_per_bank is then the largest). The arrays are
     * owned by the placement: memd_device_alloc allocates them, memd_placement_fini
     * frees them. */
    memd_bank_mode mode;
    uint32_t nset;
    uint32_t *set;
    uint64_t *addrs;
    uint64_t *sizes;
} memd_placement;

/* The modes that reserve their range in every bank of the group (in the lockstep map):
 * ALL and RANGE_LOCKSTEP. */
static inline bool memd_mode_lockstep(memd_bank_mode m)
{
    return m == MEMD_BANKS_ALL || m == MEMD_BANKS_RANGE_LOCKSTEP;
}

/* Frees a placement's bank arrays (not the space it holds in a device). */
void memd_placement_fini(memd_placement *p);
/* Deep copy into dst (dst's own arrays are not freed). 0 or -ENOMEM. */
int memd_placement_copy(memd_placement *dst, const memd_placement *src);
/* Address of the placement in bank `bank` of its group (absolute offsets not applied):
 * -ENOENT if the placement does not use that bank. */
int memd_placement_bank_addr(const memd_placement *p, uint32_t bank, uint64_t *addr);
/* Bytes piece i (of its set; any i for ALL) reserves in its bank. */
static inline uint64_t memd_placement_piece_size(const memd_placement *p, uint32_t i)
{
    return p->sizes ? p->sizes[i] : p->size_per_bank;
}
/* Bytes the placement reserves over all its banks: size_per_bank x banks, or the sum of
 * its pieces' sizes. */
uint64_t memd_placement_bytes(const memd_placement *p);

/* The bank group a scope uses: 0, or -EINVAL for an unknown scope. */
int memd_scope_kind(memd_scope s, memd_kind *k);

/* Footprint only (no state change): resolves scope -> bank group, class -> region and
 * policy, shape/dtype/texture -> bytes, lockstep sizing. Errors: -EINVAL (bad request),
 * -EOPNOTSUPP (scope or class not offered by this device), -EOVERFLOW, -E2BIG (texture
 * over the device's limits, or larger than the region: then *out is filled, its
 * size_per_bank over the region's size, and out->banks > 0). */
int memd_device_footprint(const memd_device *d, const memd_alloc_req *req, memd_placement *out);

/* Footprint + placement. -ENOMEM when the region has no room (use
 * memd_device_region_stats / memd_device_oom_bank to report why), -ENOBUFS when the
 * engine's own memory is short (nothing changed). On success the
 * caller owns out's bank arrays (memd_placement_fini). */
int memd_device_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *out);

/* Footprint + placement at a given address (tt-metal's allocate_at_address), in any
 * mode: lockstep, a range set, or per bank (each piece at `address`, independent after).
 * The class's direction and fit play no part. -EINVAL: the request is malformed or
 * `address` is not a multiple of its alignment; -ERANGE: the buffer would not lie inside
 * its region; -EBUSY: some of the range is taken in a bank it needs; nothing changes on
 * failure (memd_device_describe_fixed_error says which). */
int memd_device_alloc_fixed(memd_device *d, const memd_alloc_req *req, uint64_t address,
                            memd_placement *out);

/* Reserve a known placement again (state restore), any mode: -EBUSY if it overlaps,
 * -EINVAL if it does not fit the group, -ENOBUFS as memd_device_alloc. Nothing changes
 * on failure. */
int memd_device_alloc_at(memd_device *d, const memd_placement *p);

/* Release a lockstep (MEMD_BANKS_ALL) placement. -ENOENT if none there. A
 * RANGE_LOCKSTEP placement goes through memd_device_release. */
int memd_device_free(memd_device *d, memd_kind kind, uint8_t region, uint64_t address);
/* Release a placement of any mode (its arrays stay: memd_placement_fini). -ENOENT if
 * it is not held; never fails otherwise and never allocates (the placement held the
 * room its release needs). */
int memd_device_release(memd_device *d, const memd_placement *p);

/* The bank the last memd_device_alloc -ENOMEM ran out of room in, or UINT32_MAX when
 * the group's lockstep map as a whole had no room. */
uint32_t memd_device_oom_bank(const memd_device *d);

/* The work bank-set searches did since the device was made: the m in their
 * O(log n + m) costs (README, "Bank subsets"). merges: per-bank searches that merged a
 * bank's free blocks with the lockstep map's (a per-bank request with lockstep buffers
 * in its region searches once per bank of its set), merge_blocks: the blocks they looked
 * at; ranges: range-lockstep searches (first or best fit over a set's intersection),
 * range_questions: the questions their leapfrogs put to a member (one bank's or the
 * lockstep map's first fitting start from a candidate). memd-bench-alloc --banks prints
 * them per search. */
typedef struct memd_device_walks {
    uint64_t merges, merge_blocks;
    uint64_t ranges, range_questions;
} memd_device_walks;
void memd_device_walks_get(const memd_device *d, memd_device_walks *w);

/* Per-bank views. A region is "split" once a subset or per-bank buffer used it: from
 * then on each bank's map is its own pieces of bank-set buffers plus the lockstep
 * buffers (device_banks.c); before that every bank's map is the region's lockstep map.
 * It goes back to unsplit some lockstep operations after its last bank-set buffer went
 * (as many as its banks plus its lockstep buffers then: device_banks.c).
 * Stats of one bank of one region (-ENOENT: no such allocatable region or bank): used
 * bytes are the union of its pieces and the lockstep buffers (a range-lockstep buffer
 * may lie over a piece of a bank outside its set), allocations count both, free blocks
 * are the gaps between them. O(1) for an unsplit region or a bank with no pieces, else
 * a walk over the bank's blocks. */
bool memd_device_region_split(const memd_device *d, memd_kind kind, uint8_t region);
int memd_device_bank_stats(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                           memd_range_stats *st);
/* Every block of one bank's map (its pieces and the lockstep buffers as allocations,
 * the free gaps between them) in address order, as memd_range_foreach: fn's non-zero
 * return stops the walk and is returned; -ENOENT for no such region or bank. Where a
 * range-lockstep buffer lies over a piece, their union is one allocated block.
 * O(blocks log n). */
int memd_device_bank_foreach(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                             memd_range_visit_fn fn, void *ctx);
/* Verify every allocator of the device (memd_range_check), each split region's coverage
 * map (memd_cover_check), that every lockstep buffer and bank-set piece is covered there,
 * that nothing else is (the coverage's weight is theirs), and that no piece overlaps a
 * lockstep buffer while the region holds no range-lockstep buffer (which may lie over
 * pieces outside its set). O(n log n) per bank. 0 or -EFAULT. */
int memd_device_check(const memd_device *d);

/* The lowest address of bank `bank` that a buffer occupies (lockstep buffers and
 * bank-set pieces, over every allocatable region of group `kind`): tt-metal's
 * lowest_occupied_address(bank). 0 with *addr, -ENODATA when the bank holds nothing,
 * -ENOENT for no such group or bank. O(log n) per region. */
int memd_device_bank_lowest(const memd_device *d, memd_kind kind, uint32_t bank, uint64_t *addr);

/* The allocatable range of a region, tt-metal's shrink_size / reset_size (the sub-device
 * manager gives the bottom of L1 to its sub-devices this way). Shrinking gives up
 * `bytes` more at one end of what is left: that part must hold no buffer in any bank
 * (-EBUSY; err names the lowest address occupied there, from the bottom, or the end of
 * the highest, from the top). bytes: a non-zero multiple of the group's alignment
 * (-EINVAL), at most what is left (-ERANGE). -ENOENT: no such allocatable region;
 * -ENOMEM / -ENOBUFS: nothing changed. The part given up is a lockstep reservation of
 * no buffer: O(log n) as alloc-at; statistics and lowest addresses leave it out. */
typedef enum memd_end { MEMD_END_BOTTOM = 0, MEMD_END_TOP = 1 } memd_end;
int memd_device_region_shrink(memd_device *d, memd_kind kind, uint8_t region, memd_end end,
                              uint64_t bytes, memd_error *err);
/* Gives back everything given up at the ends in `ends` (bit 1 << MEMD_END_*): never
 * fails. -ENOENT: no such allocatable region. */
int memd_device_region_reset(memd_device *d, memd_kind kind, uint8_t region, unsigned ends);
/* A region's parts given up and what is left: [start, end) of the group's map. */
typedef struct memd_region_cut {
    uint64_t bottom, top;
    uint64_t start, end;
    uint64_t window; /* of bottom: carved for sub-device windows (memd_device_window_open) */
} memd_region_cut;
/* 0, or -ENOENT for a region that is not allocatable. */
int memd_device_region_cut(const memd_device *d, memd_kind kind, uint8_t region,
                           memd_region_cut *out);

/* Sub-device windows: tt-metal's sub-device manager local L1. A window owns
 * [start, start + bytes) of its banks, start the bottom of the region's span; the
 * region gives the bottom up (as memd_device_region_shrink) as far as its largest window
 * reaches, so no other buffer lands there, and windows of disjoint bank sets share those
 * addresses as tt-metal's sub-devices share local L1. A request with `window` is placed
 * in its window's own map (lockstep over the request's bank set there), at an address
 * too (memd_device_alloc_fixed: inside its window, else -ERANGE; a request without
 * `window` gets -EBUSY inside one); memd_device_alloc_at (a restore) and
 * memd_device_release of a placement inside a window go to its map by themselves. Open: banks strictly increasing, disjoint
 * from every other window's in the region (-EINVAL), bytes as a shrink's; -EBUSY (err
 * names the buffer) when the part to give up holds one, or when the bottom was given up
 * by memd_device_region_shrink (windows own it). *id: the window's (from 1). O(log n). */
int memd_device_window_open(memd_device *d, memd_kind kind, uint8_t region, uint64_t bytes,
                            const uint32_t *banks, uint32_t nbanks, uint32_t *id,
                            memd_error *err);
/* -EBUSY while it holds a buffer, -ENOENT for no such window. The region gets its bottom
 * back when its last window closes. */
int memd_device_window_close(memd_device *d, uint32_t id);
typedef struct memd_window_info {
    memd_kind kind;
    uint8_t region;
    uint64_t start, bytes;
    uint64_t allocated, allocations; /* in its map (per bank) */
} memd_window_info;
/* -ENOENT for no such window. */
int memd_device_window_info(const memd_device *d, uint32_t id, memd_window_info *out);
/* Reserves a placement held in the global maps (restored before its window opened) in
 * window id instead: it must lie inside the window and its set in the window's banks
 * (-ERANGE), and be free there (-EBUSY). The caller released it from the global maps. */
int memd_device_window_adopt(memd_device *d, uint32_t id, const memd_placement *p);

/* Absolute address of `address` in bank `bank` of group `kind`; -ERANGE on a bad bank. */
int memd_device_bank_address(const memd_device *d, memd_kind kind, uint32_t bank,
                             uint64_t address, uint64_t *out);

/* Statistics of one region (allocatable regions only; -ENOENT otherwise) and of the whole
 * bank group (sums over its allocatable regions; largest_free is the max). The byte and
 * block figures are the lockstep map's, the same in every bank; allocations also counts
 * the bank-set buffers, whose bytes differ per bank (memd_device_bank_stats). */
int memd_device_region_stats(const memd_device *d, memd_kind kind, uint8_t region,
                             memd_range_stats *st);
int memd_device_group_stats(const memd_device *d, memd_kind kind, memd_range_stats *st);
/* The (at most n, n <= 32) largest free blocks of a region's lockstep map, largest first
 * (memd_range_largest_free). How many, or -ENOENT as memd_device_region_stats. */
int memd_device_region_largest_free(const memd_device *d, memd_kind kind, uint8_t region,
                                    size_t n, uint64_t *addr, uint64_t *size);

/* The range allocator behind one region (for block-level reports); NULL if none. */
const memd_range *memd_device_region_range(const memd_device *d, memd_kind kind, uint8_t region);


/* A one-line reason for rc, the error memd_device_footprint/alloc returned for req:
 * names the device, scope and class, and for -ENOMEM the region's free space, e.g.
 * "device 'wormhole_b0' does not offer scope dram.texture". Writes into buf; returns it. */
const char *memd_device_describe_error(const memd_device *d, const memd_alloc_req *req, int rc,
                                       char *buf, size_t len);

/* The same for memd_device_alloc_fixed's error rc at address. */
const char *memd_device_describe_fixed_error(const memd_device *d, const memd_alloc_req *req,
                                             uint64_t address, int rc, char *buf, size_t len);

/* --- Spec helpers (used by the descriptor loaders and check-config). --- */

/* Upper bound on banks per group: keeps bank_offsets allocations sane for any input. */
#define MEMD_MAX_BANKS 65536u

/* The checks memd_device_create makes, without building anything: 0 or -EINVAL + err. */
int memd_device_spec_validate(const memd_device_spec *spec, memd_error *err);

/* Deep copy (bank_offsets included). 0 or -ENOMEM; dst is left empty on failure. */
int memd_device_spec_copy(memd_device_spec *dst, const memd_device_spec *src);

/* Fills spec->policy with the defaults, from the region names of each bank group:
 *   DRAM: code -> "code" bottom-up (no "code" region: "data" top-down, as tt-metal puts
 *         program binaries), constant -> "data" bottom-up, placeholder and internal ->
 *         "data" top-down (the two grow towards each other), logging -> "logging"
 *         bottom-up (a fixed carve-out);
 *   SRAM: code, constant, placeholder, internal -> "buffers" top-down; logging disabled.
 * A class whose region does not exist (or is not allocatable) is disabled. Fit: first,
 * alignment: the group's. */
void memd_device_spec_default_policy(memd_device_spec *spec);

/* Page sizes. A page is what tt-metal interleaves: page i of a buffer lives in bank
 * i % banks. A default page size (group or class) and a model's page size must be a power
 * of two, at least the group's alignment (so pages need no padding and a tensor that
 * starts on a page boundary starts a bank's page) and at most a bank. NULL when page is
 * such a size, else why not ("is not a power of two", ...). */
const char *memd_page_size_problem(const memd_bank_group_spec *g, uint64_t page);
/* The default page size of class cls in group kind: the class policy's, else the
 * group's; 0: one page. */
uint64_t memd_device_page_size(const memd_device_spec *spec, memd_kind kind, memd_class cls);

/* Index of the region called name in g, or -ENOENT. */
int memd_region_find(const memd_bank_group_spec *g, const char *name);


#endif
