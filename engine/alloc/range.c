/* memd engine — range allocator (contract in range.h).
 *
 * Structure, and why:
 *  - Free blocks live in a B+tree of (addr, size) whose inner nodes carry the largest
 *    size below each child (range_bt.h). Exact first fit bottom-up is the first entry
 *    with size >= request, top-down the last: one descent through a few nodes (fanout
 *    32: three levels for 10k free blocks).
 *  - Allocated blocks are not nodes at all: a hash map (map.h) takes a live start
 *    address to its size. A free finds its free neighbours in the tree, at the
 *    position where the freed block would be inserted: the entry before it ends at
 *    addr, the entry at it starts at addr+size.
 *    Walking the map in address order (foreach) goes through the free blocks and, in
 *    each gap between them, from one allocation to the next by address + size.
 *    (Keeping allocations in the tree as well, weighted 0, was measured: 20 % slower, as
 *    every allocation then inserts into a leaf and every free deletes from one.)
 *  - Best fit needs the free blocks ordered by (size, addr), a second B+tree that costs a
 *    remove and an insert per free-block change. It is built the first time a best-fit
 *    request arrives on this range and maintained from then on, so a range used only
 *    for first fit never pays for it.
 *  - Tree nodes come from pools and the map grows geometrically; neither shrinks, so
 *    steady-state operations never call malloc. Everything an operation may need is
 *    reserved before it mutates anything: an -ENOMEM leaves the range unchanged.
 *
 * Alignment: a free block of size >= request may still not fit once its start is
 * aligned; the search then continues with the next candidate in placement order. An
 * aligned request costs O((1 + k) log n), k being the number of free blocks passed over:
 * blocks before the chosen one (in search order) whose size lies in
 * [n, n + align - min_align) and that cannot hold an aligned start. Every block boundary
 * is a multiple of min_align, so a block of size >= n + align - min_align always fits
 * and is never passed over; requests with align <= min_align have k = 0.
 * For first fit, once a search for an alignment passes over MEMD_RANGE_AIDX_WALK blocks
 * the range indexes the free blocks by their room for that alignment (range_align.h):
 * from then on the search is one descent, k = 0, and every free-block change costs one
 * more O(log n) update per index. Best fit still walks (sizes in the window above).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "place.h"
#include "range.h"
#include "range_align.h"
#include "range_bt.h"
#include "range_cur.h"

struct memd_range {
    memd_bt by_addr;  /* free blocks as (addr, size) */
    memd_bt by_size;  /* free blocks as (size, addr), once size_index is set */
    bool size_index;
    bool unmapped;    /* MEMD_RANGE_F_CALLER_SIZES: allocs stays empty */
    memd_range_aidx aidx; /* first-fit indexes for alignments that needed them */
    uint64_t probes;      /* free blocks examined by first-fit searches */
    memd_map allocs;  /* live allocations: alloc_key(start) -> size; spread */

    uint64_t base, size, min_align;
    uint64_t lo, hi;  /* usable, min_align-aligned: [lo, hi) */
    uint64_t allocated;
    uint64_t nallocs; /* live allocations when unmapped (else allocs.len) */
};

/* The map reserves key 0 and address 0 is common: plus one. No allocation starts at
 * 2^64 - 1 (it would end past the range), so keys never wrap to 0. */
static inline uint64_t alloc_key(uint64_t addr)
{
    return addr + 1;
}

/* The live allocation at addr (its size is the slot's value), or NULL. */
static inline memd_map_slot *alloc_at(const memd_range *r, uint64_t addr)
{
    return memd_map_lookup(&r->allocs, alloc_key(addr));
}

/* Live allocations. */
static inline uint64_t live(const memd_range *r)
{
    return r->unmapped ? r->nallocs : r->allocs.len;
}

/* Room in every free-block tree for as many free blocks as the range can have with
 * `allocs` allocations: one more (allocations separate them). Held from the allocation
 * on, a free only merges or inserts into room already there: frees never allocate, so
 * they cannot fail half-way through a buffer's pieces in several banks. */
static int hold_free(memd_range *r, uint64_t allocs)
{
    int rc = memd_bt_hold(&r->by_addr, allocs + 1);
    if (rc == 0 && r->size_index)
        rc = memd_bt_hold(&r->by_size, allocs + 1);
    if (rc == 0)
        rc = memd_range_aidx_hold(&r->aidx, allocs + 1);
    return rc;
}

/* ---------------------------------------------------------------- size index */

static void sidx_add(memd_range *r, uint64_t addr, uint64_t size)
{
    memd_bt_path p;
    memd_bt_seek(&r->by_size, size, addr, &p);
    memd_bt_insert(&r->by_size, &p, size, addr);
}

static void sidx_del(memd_range *r, uint64_t addr, uint64_t size)
{
    memd_bt_path p;
    memd_bt_seek(&r->by_size, size, addr, &p);
    memd_bt_settle(&r->by_size, &p); /* the entry exists: it is at p */
    memd_bt_delete(&r->by_size, &p);
}

/* Index every free block by (size, addr). On -ENOBUFS the index stays off. */
static int build_size_index(memd_range *r)
{
    memd_bt_clear(&r->by_size);
    if (memd_bt_hold(&r->by_size, live(r) + 1) < 0)
        return -ENOBUFS;
    memd_bt_path p;
    memd_bt_seek_k(&r->by_addr, 0, &p);
    for (bool ok = memd_bt_settle(&r->by_addr, &p); ok; ok = memd_bt_next(&r->by_addr, &p)) {
        uint64_t a, s;
        memd_bt_get(&r->by_addr, &p, &a, &s);
        if (memd_bt_reserve(&r->by_size, 1) < 0) {
            memd_bt_clear(&r->by_size);
            return -ENOBUFS;
        }
        sidx_add(r, a, s);
    }
    r->size_index = true;
    return 0;
}

/* ---------------------------------------------------------------- placement */

/* Placement inside one block: place.h (shared with the coverage map, cover.c). */
static inline bool place(uint64_t a, uint64_t s, uint64_t sz, uint64_t al, memd_dir dir,
                         uint64_t *at)
{
    return memd_place(a, s, sz, al, dir, at);
}

typedef struct pick {
    uint64_t addr, size; /* the chosen free block */
    uint64_t at;         /* where the allocation goes inside it */
} pick;

/* The first free block in direction dir that holds sz bytes aligned to al. *walked is
 * how many blocks the search passed over (0 through an index). */
static bool find_first(memd_range *r, uint64_t sz, uint64_t al, memd_dir dir,
                       memd_bt_path *p, pick *out, uint64_t *walked)
{
    int d = dir == MEMD_DIR_TOP_DOWN;
    *walked = 0;
    memd_bt *ix = al > r->min_align ? memd_range_aidx_get(&r->aidx, al) : NULL;
    if (ix) {
        memd_bt_path q;
        r->probes++;
        if (!memd_bt_fit(ix, sz, d, &q))
            return false;
        uint64_t a, room;
        memd_bt_get(ix, &q, &a, &room);
        memd_bt_seek_k(&r->by_addr, a, p);
        memd_bt_settle(&r->by_addr, p); /* indexed blocks are free blocks: it is at p */
        memd_bt_get(&r->by_addr, p, &out->addr, &out->size);
        return place(out->addr, out->size, sz, al, dir, &out->at); /* room >= sz: true */
    }
    if (!memd_bt_fit(&r->by_addr, sz, d, p))
        return false;
    do {
        r->probes++;
        memd_bt_get(&r->by_addr, p, &out->addr, &out->size);
        if (place(out->addr, out->size, sz, al, dir, &out->at))
            return true;
        (*walked)++;
    } while (memd_bt_fit_next(&r->by_addr, sz, d, p));
    return false;
}

static bool find_best(const memd_range *r, uint64_t sz, uint64_t al, memd_dir dir, pick *out)
{
    const memd_bt *t = &r->by_size;
    memd_bt_path p;
    memd_bt_seek_k(t, sz, &p);
    if (!memd_bt_settle(t, &p))
        return false;
    if (dir != MEMD_DIR_TOP_DOWN) {
        /* (size, addr) order is exactly "smallest, then lowest address". */
        do {
            memd_bt_get(t, &p, &out->size, &out->addr);
            if (place(out->addr, out->size, sz, al, dir, &out->at))
                return true;
        } while (memd_bt_next(t, &p));
        return false;
    }
    /* Top-down ties go to the highest address: walk each group of equal size from its
     * end, then go on to the next larger size. */
    for (;;) {
        uint64_t s, a;
        memd_bt_get(t, &p, &s, &a);
        memd_bt_seek(t, s, UINT64_MAX, &p); /* just past the group: no block starts at 2^64-1 */
        while (memd_bt_prev(t, &p)) {
            memd_bt_get(t, &p, &out->size, &out->addr);
            if (out->size != s)
                break;
            if (place(out->addr, out->size, sz, al, dir, &out->at))
                return true;
        }
        if (s == UINT64_MAX)
            return false;
        memd_bt_seek_k(t, s + 1, &p);
        if (!memd_bt_settle(t, &p))
            return false;
    }
}

/* Allocate [pk->at, pk->at + sz) out of the free block at p in by_addr. The caller
 * reserved one by_addr insert, two by_size inserts and one map slot. */
static inline __attribute__((always_inline)) void
carve_as(memd_range *r, memd_bt_path *p, const pick *pk, uint64_t sz, bool mapped)
{
    /* The map slot is likely a cache miss: start fetching it now and fill it after the
     * tree update, which runs meanwhile (measured: 2-3 % per pair over filling it first). */
    if (mapped)
        memd_map_prefetch(&r->allocs, alloc_key(pk->at));
    uint64_t lo_pad = pk->at - pk->addr, hi_pad = pk->size - lo_pad - sz;
    if (lo_pad == 0 && hi_pad == 0) {
        memd_bt_delete(&r->by_addr, p);
    } else if (lo_pad == 0) {
        memd_bt_set(&r->by_addr, p, pk->at + sz, hi_pad);
    } else {
        memd_bt_set(&r->by_addr, p, pk->addr, lo_pad);
        if (hi_pad != 0) {
            p->idx[r->by_addr.height - 1]++; /* just after the low part: still in order */
            memd_bt_insert(&r->by_addr, p, pk->at + sz, hi_pad);
        }
    }
    if (r->size_index) {
        sidx_del(r, pk->addr, pk->size);
        if (lo_pad != 0)
            sidx_add(r, pk->addr, lo_pad);
        if (hi_pad != 0)
            sidx_add(r, pk->at + sz, hi_pad);
    }
    if (r->aidx.n != 0) { /* the same three cases as by_addr above */
        if (lo_pad != 0) {
            memd_range_aidx_change(&r->aidx, pk->addr, pk->addr, lo_pad);
            if (hi_pad != 0)
                memd_range_aidx_change(&r->aidx, UINT64_MAX, pk->at + sz, hi_pad);
        } else {
            memd_range_aidx_change(&r->aidx, pk->addr, pk->at + sz, hi_pad);
        }
    }
    if (mapped)
        (void)memd_map_put(&r->allocs, alloc_key(pk->at), sz); /* reserved: cannot fail */
    else
        r->nallocs++;
    r->allocated += sz;
}

/* mapped is a constant in each copy: the mapped path pays nothing for the other. */
static void carve(memd_range *r, memd_bt_path *p, const pick *pk, uint64_t sz)
{
    if (r->unmapped)
        carve_as(r, p, pk, sz, false);
    else
        carve_as(r, p, pk, sz, true);
}

/* Everything one allocation may need, and the room its free will need, before anything
 * changes. -ENOBUFS: the allocator's own memory is short (not the range's room). */
static int reserve_alloc(memd_range *r)
{
    int rc = memd_bt_reserve(&r->by_addr, 1);
    if (rc == 0 && r->size_index)
        rc = memd_bt_reserve(&r->by_size, 2);
    if (rc == 0)
        rc = memd_range_aidx_reserve(&r->aidx, 2);
    if (rc == 0 && !r->unmapped)
        rc = memd_map_reserve(&r->allocs, 1);
    if (rc == 0)
        rc = hold_free(r, live(r) + 1);
    return rc ? -ENOBUFS : 0;
}

/* The free block containing [addr, addr + sz), if any, and its path in by_addr. */
static bool find_containing(const memd_range *r, uint64_t addr, uint64_t sz, memd_bt_path *p,
                            pick *out)
{
    const memd_bt *t = &r->by_addr;
    memd_bt_seek_k(t, addr, p);
    memd_bt_path q = *p;
    bool found = false;
    if (memd_bt_settle(t, p)) {
        memd_bt_get(t, p, &out->addr, &out->size);
        found = out->addr == addr;
    }
    if (!found) { /* the last free block starting below addr */
        if (!memd_bt_prev(t, &q))
            return false;
        *p = q;
        memd_bt_get(t, p, &out->addr, &out->size);
    }
    out->at = addr;
    return out->size >= sz && addr - out->addr <= out->size - sz;
}

/* ---------------------------------------------------------------- API */

int memd_range_create(uint64_t base, uint64_t size, uint64_t min_align, memd_range **out)
{
    return memd_range_create_flags(base, size, min_align, 0, out);
}

int memd_range_create_flags(uint64_t base, uint64_t size, uint64_t min_align, unsigned flags,
                            memd_range **out)
{
    if (!out)
        return -EINVAL;
    *out = NULL;
    if ((flags & ~(unsigned)MEMD_RANGE_F_CALLER_SIZES) != 0 || size == 0 || min_align == 0 || (min_align & (min_align - 1)) != 0 ||
        base > UINT64_MAX - size || base > UINT64_MAX - (min_align - 1))
        return -EINVAL;
    uint64_t lo = (base + (min_align - 1)) & ~(min_align - 1);
    uint64_t hi = (base + size) & ~(min_align - 1);
    if (lo >= hi)
        return -EINVAL; /* not one aligned unit to hand out */

    memd_range *r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    r->base = base;
    r->size = size;
    r->min_align = min_align;
    r->allocs.spread = true;
    r->unmapped = flags & MEMD_RANGE_F_CALLER_SIZES;
    r->lo = lo;
    r->hi = hi;
    bool ok = memd_bt_init(&r->by_addr) == 0;
    ok = ok && memd_bt_init(&r->by_size) == 0;
    if (!ok) {
        memd_range_destroy(r);
        return -ENOMEM;
    }
    memd_range_reset(r);
    *out = r;
    return 0;
}

void memd_range_destroy(memd_range *r)
{
    if (!r)
        return;
    memd_bt_fini(&r->by_addr);
    memd_bt_fini(&r->by_size);
    memd_range_aidx_fini(&r->aidx);
    memd_map_free(&r->allocs);
    free(r);
}

void memd_range_reset(memd_range *r)
{
    memd_map_clear(&r->allocs);
    memd_map_trim(&r->allocs);
    r->allocated = 0;
    r->nallocs = 0;
    /* An empty tree's root leaf always has room for one entry: no reserve needed. The
     * pools an emptied range grew go back (issue 27: memory returns once clients go);
     * alignment indexes are rebuilt when a walk needs them again. */
    memd_bt_path p;
    memd_bt_clear_shrink(&r->by_addr);
    memd_bt_seek_k(&r->by_addr, r->lo, &p);
    memd_bt_insert(&r->by_addr, &p, r->lo, r->hi - r->lo);
    memd_bt_clear_shrink(&r->by_size);
    if (r->size_index)
        sidx_add(r, r->lo, r->hi - r->lo);
    memd_range_aidx_fini(&r->aidx);
}

/* The search behind memd_range_alloc and memd_range_fit_cur: validates, rounds the size up
 * (*sz), reserves what carving needs when `carving`, and finds the block (*pk, and its
 * path *p in by_addr). -ENOMEM when nothing fits. */
static int search(memd_range *r, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                  bool carving, memd_bt_path *p, pick *pk, uint64_t *sz)
{
    if (!r || size == 0 || (align & (align - 1)) != 0 ||
        (dir != MEMD_DIR_BOTTOM_UP && dir != MEMD_DIR_TOP_DOWN) ||
        (fit != MEMD_FIT_FIRST && fit != MEMD_FIT_BEST))
        return -EINVAL;
    uint64_t m = r->min_align;
    if (size > UINT64_MAX - (m - 1))
        return -EOVERFLOW;
    *sz = (size + (m - 1)) & ~(m - 1);
    uint64_t al = align > m ? align : m;

    int rc = 0;
    if (fit == MEMD_FIT_BEST && !r->size_index)
        rc = build_size_index(r);
    if (rc == 0 && carving)
        rc = reserve_alloc(r);
    if (rc < 0)
        return rc;

    uint64_t walked = 0;
    bool found;
    if (fit == MEMD_FIT_BEST) {
        found = find_best(r, *sz, al, dir, pk);
        if (found) {
            memd_bt_seek_k(&r->by_addr, pk->addr, p);
            memd_bt_settle(&r->by_addr, p); /* the block is in by_addr: it is at p */
        }
    } else {
        found = find_first(r, *sz, al, dir, p, pk, &walked);
    }
    if (found && carving)
        carve(r, p, pk, *sz);
    /* A costly walk makes the alignment worth an index (built after the carve, which
     * reserved room only in the indexes it had); without memory or a free slot the
     * walk simply stays. */
    if (walked >= MEMD_RANGE_AIDX_WALK)
        (void)memd_range_aidx_build(&r->aidx, al, &r->by_addr, live(r) + 1);
    return found ? 0 : -ENOMEM;
}

int memd_range_alloc(memd_range *r, uint64_t size, uint64_t align, memd_dir dir,
                     memd_fit fit, uint64_t *addr)
{
    memd_bt_path p;
    pick pk;
    uint64_t sz;
    int rc = addr ? search(r, size, align, dir, fit, true, &p, &pk, &sz) : -EINVAL;
    if (rc == 0)
        *addr = pk.at;
    return rc;
}

int memd_range_fit_cur(memd_range *r, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                       uint64_t *addr, memd_range_cur *c)
{
    pick pk;
    uint64_t sz;
    c->set = false;
    int rc = addr ? search(r, size, align, dir, fit, false, &c->p, &pk, &sz) : -EINVAL;
    if (rc == 0) {
        *addr = pk.at;
        c->set = true;
    }
    return rc;
}

int memd_range_reserve(memd_range *r)
{
    return r ? reserve_alloc(r) : -EINVAL;
}

/* memd_range_alloc_at, starting from the block at cursor c when it holds the span (a
 * search just chose that block: no second descent), else sought from the root. */
static inline __attribute__((always_inline)) int
alloc_at_from(memd_range *r, const memd_range_cur *c, uint64_t addr, uint64_t size)
{
    if (!r || size == 0)
        return -EINVAL;
    uint64_t m = r->min_align;
    if ((addr & (m - 1)) != 0 || size > UINT64_MAX - (m - 1))
        return -EINVAL;
    uint64_t sz = (size + (m - 1)) & ~(m - 1);
    /* addr and sz are multiples of min_align, so lying inside [base, base + size) is the
     * same as lying inside [lo, hi). */
    if (addr < r->lo || addr > r->hi || sz > r->hi - addr)
        return -EINVAL;
    int rc = reserve_alloc(r);
    if (rc < 0)
        return rc;
    memd_bt_path p;
    pick pk;
    if (c && c->set) {
        p = c->p;
        memd_bt_get(&r->by_addr, &p, &pk.addr, &pk.size);
        pk.at = addr;
        if (pk.addr <= addr && pk.size >= sz && addr - pk.addr <= pk.size - sz) {
            carve(r, &p, &pk, sz);
            return 0;
        }
    }
    if (!find_containing(r, addr, sz, &p, &pk))
        return -EBUSY;
    carve(r, &p, &pk, sz);
    return 0;
}

int memd_range_alloc_at(memd_range *r, uint64_t addr, uint64_t size)
{
    return alloc_at_from(r, NULL, addr, size);
}

int memd_range_alloc_at_cur(memd_range *r, const memd_range_cur *c, uint64_t addr, uint64_t size)
{
    return alloc_at_from(r, c, addr, size);
}

/* A cursor's fast path. p is the block the previous search on the cursor chose, for a
 * `from` no further in direction dir than now. Every block before it in direction dir
 * failed that search, and fails this one (its window can only have shrunk), so the
 * answer is in p's block or beyond. Bottom-up the first candidate is the first block
 * ending above from (p's, or one of the next few), top-down the first starting at or
 * below from; its window is cut at from as in memd_range_fit_from. true: placed in the
 * block now at p (*a, *s, *x): CUR_PLACED; CUR_TRIED: p is the candidate block and did
 * not fit (the search goes on with the blocks past it); CUR_LOST: the short walk did
 * not reach the candidate (a seek follows, from wherever p stopped). */
#define CUR_WALK 4

static inline bool cur_window(const memd_bt *t, const memd_bt_path *p, uint64_t from,
                              uint64_t sz, memd_dir dir, uint64_t *a, uint64_t *s,
                              uint64_t *wa, uint64_t *ws)
{
    memd_bt_get(t, p, a, s);
    if (dir != MEMD_DIR_TOP_DOWN) {
        if (*a + *s <= from)
            return false;
        *wa = *a > from ? *a : from;
        *ws = *a + *s - *wa;
        return true;
    }
    if (*a > from)
        return false;
    uint64_t end = *a + *s < from + sz ? *a + *s : from + sz;
    *wa = *a;
    *ws = end - *a; /* from + sz > a: not 0 */
    return true;
}

enum { CUR_LOST, CUR_TRIED, CUR_PLACED };

static int cur_step(const memd_bt *t, memd_bt_path *p, uint64_t from, uint64_t sz, uint64_t al,
                    memd_dir dir, uint64_t *a, uint64_t *s, uint64_t *x)
{
    uint64_t wa, ws;
    for (unsigned k = 0; k < CUR_WALK; k++) {
        if (cur_window(t, p, from, sz, dir, a, s, &wa, &ws))
            return place(wa, ws, sz, al, dir, x) ? CUR_PLACED : CUR_TRIED;
        if (!(dir == MEMD_DIR_TOP_DOWN ? memd_bt_prev(t, p) : memd_bt_next(t, p)))
            return CUR_LOST;
    }
    return CUR_LOST;
}

bool memd_range_fit_from_cur(const memd_range *r, memd_range_cur *c, uint64_t size,
                             uint64_t align, memd_dir dir, uint64_t from, uint64_t *at,
                             uint64_t *blk, uint64_t *blk_size)
{
    uint64_t m = r->min_align;
    if (size == 0 || size > UINT64_MAX - (m - 1) || (align & (align - 1)) != 0)
        return false;
    uint64_t sz = (size + (m - 1)) & ~(m - 1);
    uint64_t al = align > m ? align : m;
    if (sz > r->hi - r->lo)
        return false;
    const memd_bt *t = &r->by_addr;
    memd_bt_path *p = &c->p, q;
    uint64_t a, s, x;
    bool had = c->set;
    c->set = false;
    /* Top-down: the buffer may end no higher than from + sz. */
    if (dir == MEMD_DIR_TOP_DOWN && from > r->hi - sz)
        from = r->hi - sz;
    int step = had ? cur_step(t, p, from, sz, al, dir, &a, &s, &x) : CUR_LOST;
    if (step == CUR_PLACED)
        goto found;
    if (step == CUR_TRIED)
        goto scan;
    if (dir != MEMD_DIR_TOP_DOWN) {
        /* The last block starting below `from` may still hold a start >= from. */
        if (had)
            memd_bt_seek_k_near(t, from, p);
        else
            memd_bt_seek_k(t, from, p);
        q = *p;
        if (memd_bt_prev(t, &q)) {
            memd_bt_get(t, &q, &a, &s);
            if (a + s > from && place(from, a + s - from, sz, al, dir, &x)) {
                *p = q;
                goto found;
            }
        }
        if (!memd_bt_settle(t, p))
            return false;
        memd_bt_get(t, p, &a, &s);
        if (place(a, s, sz, al, dir, &x))
            goto found;
        goto scan;
    }
    if (had)
        memd_bt_seek_k_near(t, from + 1, p);
    else
        memd_bt_seek_k(t, from + 1, p);
    if (!memd_bt_prev(t, p))
        return false; /* no free block starts at or below from */
    memd_bt_get(t, p, &a, &s);
    uint64_t end = a + s < from + sz ? a + s : from + sz;
    if (end > a && place(a, end - a, sz, al, dir, &x))
        goto found;
scan:
    while (memd_bt_fit_next(t, sz, dir == MEMD_DIR_TOP_DOWN, p)) {
        memd_bt_get(t, p, &a, &s);
        if (place(a, s, sz, al, dir, &x))
            goto found;
    }
    return false;
found:
    c->set = true;
    *at = x;
    *blk = a;
    *blk_size = s;
    return true;
}

/* The first (dir's order) free block of r of at least sz bytes, or the next one after
 * the block at c; c then is on it, and [*a, *e) is the block. */
static inline __attribute__((always_inline)) bool
both_block(const memd_range *r, memd_range_cur *c, uint64_t sz, memd_dir dir, bool next,
           uint64_t *a, uint64_t *e)
{
    int d = dir == MEMD_DIR_TOP_DOWN;
    if (next) { /* most steps stay in the leaf: scan it here, the tree only past its end */
        const memd_bt *t = &r->by_addr;
        unsigned lv = t->height - 1;
        const memd_bt_node *lf = &t->node[c->p.node[lv]];
        uint32_t i = c->p.idx[lv];
        if (!d) {
            for (uint32_t j = i + 1; j < lf->n; j++)
                if (lf->v[j] >= sz) {
                    c->p.idx[lv] = j;
                    *a = lf->k[j];
                    *e = *a + lf->v[j];
                    return true;
                }
        } else {
            for (uint32_t j = i; j-- > 0;)
                if (lf->v[j] >= sz) {
                    c->p.idx[lv] = j;
                    *a = lf->k[j];
                    *e = *a + lf->v[j];
                    return true;
                }
        }
    }
    bool ok = next ? memd_bt_fit_next(&r->by_addr, sz, d, &c->p) : memd_bt_fit(&r->by_addr, sz, d, &c->p);
    c->set = ok;
    if (ok) {
        uint64_t s;
        memd_bt_get(&r->by_addr, &c->p, a, &s);
        *e = *a + s;
    }
    return ok;
}

/* both_block's first block for a search from `from` on (first fit from a bound,
 * memd_range_fit_both_from): bottom-up the first block of at least sz bytes that ends
 * above from, top-down the last one that starts at or below from; the window the merge
 * then clips at from. */
static bool both_first(const memd_range *r, memd_range_cur *c, uint64_t sz, memd_dir dir,
                       uint64_t from, uint64_t *a, uint64_t *e)
{
    const memd_bt *t = &r->by_addr;
    int d = dir == MEMD_DIR_TOP_DOWN;
    uint64_t s;
    c->set = false;
    if (!d) {
        memd_bt_seek_k(t, from, &c->p);
        memd_bt_path q = c->p;
        if (memd_bt_prev(t, &q)) { /* the block starting below from may reach past it */
            memd_bt_get(t, &q, a, &s);
            if (*a + s > from && s >= sz) {
                c->p = q;
                goto found;
            }
        }
        if (!memd_bt_settle(t, &c->p))
            return false;
    } else {
        memd_bt_seek_k(t, from + 1, &c->p); /* from < UINT64_MAX: the caller's */
        if (!memd_bt_prev(t, &c->p))
            return false;
    }
    memd_bt_get(t, &c->p, a, &s);
    if (s < sz) {
        if (!memd_bt_fit_next(t, sz, d, &c->p))
            return false;
        memd_bt_get(t, &c->p, a, &s);
    }
found:
    c->set = true;
    *e = *a + s;
    return true;
}

/* The merge of memd_range_fit_both(_from), validated arguments, sz rounded. `bounded`
 * is a constant in each copy: the unbounded one is the plain merge. */
static inline __attribute__((always_inline)) int
fit_both_as(const memd_range *r1, memd_range_cur *c1, const memd_range *r2, memd_range_cur *c2,
            uint64_t sz, uint64_t al, memd_dir dir, memd_fit fit, bool bounded, uint64_t from,
            uint64_t *addr, uint64_t *walked)
{
    bool down = dir == MEMD_DIR_TOP_DOWN, found = false;
    /* Top-down the buffer may end no higher than from + sz. */
    uint64_t a1, e1, a2, e2, x, best = 0, steps = 2,
             cap = bounded && down && from < UINT64_MAX - sz ? from + sz : UINT64_MAX;
    memd_range_cur k1 = *c1, k2 = *c2; /* the cursors on the best overlap so far */
    *walked = 0;
    if (bounded ? !both_first(r1, c1, sz, dir, from, &a1, &e1) || !both_first(r2, c2, sz, dir, from, &a2, &e2)
                : !both_block(r1, c1, sz, dir, false, &a1, &e1) || !both_block(r2, c2, sz, dir, false, &a2, &e2))
        return -ENOMEM;
    for (;;) {
        /* Overlaps come in placement order; each is a whole free block of the
         * intersection (both blocks are whole free blocks), cut at the bound. */
        uint64_t lo = a1 > a2 ? a1 : a2, hi = e1 < e2 ? e1 : e2;
        if (bounded && !down && lo < from)
            lo = from;
        if (bounded && hi > cap)
            hi = cap;
        if (hi > lo && memd_place(lo, hi - lo, sz, al, dir, &x) && (!found || hi - lo < best)) {
            found = true;
            best = hi - lo;
            *addr = x;
            if (fit == MEMD_FIT_FIRST) {
                *walked = steps;
                return 0;
            }
            k1 = *c1;
            k2 = *c2;
            if (best == sz) /* nothing fits in less */
                break;
        }
        /* The block that ends first in placement order can overlap nothing further. */
        bool one = down ? a1 >= a2 : e1 <= e2;
        steps++;
        if (one ? !both_block(r1, c1, sz, dir, true, &a1, &e1)
                : !both_block(r2, c2, sz, dir, true, &a2, &e2))
            break;
    }
    *walked = steps;
    if (!found)
        return -ENOMEM;
    *c1 = k1;
    *c2 = k2;
    return 0;
}

int memd_range_fit_both_from(const memd_range *r1, memd_range_cur *c1, const memd_range *r2,
                             memd_range_cur *c2, uint64_t size, uint64_t align, memd_dir dir,
                             memd_fit fit, uint64_t from, uint64_t *addr, uint64_t *walked)
{
    uint64_t spare;
    bool down = dir == MEMD_DIR_TOP_DOWN, bounded = from != (down ? UINT64_MAX : 0);
    if (!r1 || !r2 || !c1 || !c2 || !addr || r1->min_align != r2->min_align || size == 0 ||
        (align & (align - 1)) != 0 || (dir != MEMD_DIR_BOTTOM_UP && dir != MEMD_DIR_TOP_DOWN) ||
        (fit != MEMD_FIT_FIRST && fit != MEMD_FIT_BEST) || (fit == MEMD_FIT_BEST && bounded))
        return -EINVAL;
    uint64_t m = r1->min_align;
    if (size > UINT64_MAX - (m - 1))
        return -EOVERFLOW;
    uint64_t sz = (size + (m - 1)) & ~(m - 1), al = align > m ? align : m;
    if (!walked)
        walked = &spare;
    if (bounded)
        return fit_both_as(r1, c1, r2, c2, sz, al, dir, fit, true, from, addr, walked);
    return fit_both_as(r1, c1, r2, c2, sz, al, dir, fit, false, from, addr, walked);
}

int memd_range_fit_both(const memd_range *r1, memd_range_cur *c1, const memd_range *r2,
                        memd_range_cur *c2, uint64_t size, uint64_t align, memd_dir dir,
                        memd_fit fit, uint64_t *addr)
{
    return memd_range_fit_both_from(r1, c1, r2, c2, size, align, dir, fit,
                                    dir == MEMD_DIR_TOP_DOWN ? UINT64_MAX : 0, addr, NULL);
}

bool memd_range_fit_from(const memd_range *r, uint64_t size, uint64_t align, memd_dir dir,
                         uint64_t from, uint64_t *at, uint64_t *blk, uint64_t *blk_size)
{
    memd_range_cur c = MEMD_RANGE_CUR_INIT;
    return memd_range_fit_from_cur(r, &c, size, align, dir, from, at, blk, blk_size);
}

/* A free block beside a freed one, and where it sits: a path to its leaf and its
 * index there. */
typedef struct side {
    memd_bt_path *path;
    uint32_t idx;
    uint64_t a, s;
    bool touches; /* it ends where the freed block starts, or starts where it ends */
} side;

/* The free blocks on both sides of [addr, addr + sz), whose insert position in by_addr
 * is p: the entry there may start at its end, the one before it may end at its start.
 * Both are almost always in p's leaf and are read in place; only at a leaf edge does
 * the second path q walk to the neighbouring leaf. (Copying p costs more than it
 * seems: right after the seek, its wide loads cannot be forwarded from the seek's
 * narrow stores.) */
static inline __attribute__((always_inline)) void find_sides(const memd_bt *t, memd_bt_path *p, memd_bt_path *q, uint64_t addr,
                       uint64_t sz, side *left, side *right)
{
    unsigned lv = t->height - 1;
    const memd_bt_node *leaf = &t->node[p->node[lv]];
    uint32_t i = p->idx[lv];
    bool have_left, have_right;
    *left = (side){.path = p, .idx = i - 1};
    *right = (side){.path = p, .idx = i};
    if (i > 0) {
        left->a = leaf->k[i - 1];
        left->s = leaf->v[i - 1];
        have_left = true;
    } else {
        *q = *p;
        have_left = memd_bt_prev(t, q);
        if (have_left) {
            memd_bt_get(t, q, &left->a, &left->s);
            left->path = q;
            left->idx = q->idx[lv];
        }
    }
    if (i < leaf->n) {
        right->a = leaf->k[i];
        right->s = leaf->v[i];
        have_right = true;
    } else { /* i == n > 0 here, or an empty tree: q is free for the right side */
        *q = *p;
        have_right = memd_bt_settle(t, q);
        if (have_right) {
            memd_bt_get(t, q, &right->a, &right->s);
            right->path = q;
            right->idx = q->idx[lv];
        }
    }
    left->touches = have_left && left->a + left->s == addr;
    right->touches = have_right && right->a == addr + sz;
}

/* Makes [addr, addr + sz) free, one block with the sides that touch it. The caller
 * reserved one by_addr and one by_size insert. */
static inline __attribute__((always_inline)) void merge_free(memd_range *r, memd_bt_path *p, side *left, side *right, uint64_t addr,
                       uint64_t sz)
{
    memd_bt *t = &r->by_addr;
    unsigned lv = t->height - 1;
    if (left->touches && right->touches) {
        left->path->idx[lv] = left->idx;
        memd_bt_set(t, left->path, left->a, left->s + sz + right->s); /* keeps paths valid */
        right->path->idx[lv] = right->idx;
        memd_bt_delete(t, right->path);
    } else if (left->touches) {
        left->path->idx[lv] = left->idx;
        memd_bt_set(t, left->path, left->a, left->s + sz);
    } else if (right->touches) {
        right->path->idx[lv] = right->idx;
        memd_bt_set(t, right->path, addr, sz + right->s);
    } else {
        memd_bt_insert(t, p, addr, sz);
    }
    if (r->aidx.n != 0) { /* the same four cases as by_addr above */
        if (left->touches) {
            memd_range_aidx_change(&r->aidx, left->a, left->a,
                                   left->s + sz + (right->touches ? right->s : 0));
            if (right->touches)
                memd_range_aidx_change(&r->aidx, right->a, right->a, 0);
        } else if (right->touches) {
            memd_range_aidx_change(&r->aidx, right->a, addr, sz + right->s);
        } else {
            memd_range_aidx_change(&r->aidx, UINT64_MAX, addr, sz);
        }
    }
    if (!r->size_index)
        return;
    uint64_t na = left->touches ? left->a : addr, ns = sz;
    if (left->touches) {
        sidx_del(r, left->a, left->s);
        ns += left->s;
    }
    if (right->touches) {
        sidx_del(r, right->a, right->s);
        ns += right->s;
    }
    sidx_add(r, na, ns);
}

/* memd_range_free; *blk_lo / *blk_hi (when blk_lo is not NULL) get the free block the
 * span became part of. */
static inline __attribute__((always_inline)) int
free_as(memd_range *r, uint64_t addr, uint64_t *size_out, uint64_t *blk_lo, uint64_t *blk_hi)
{
    if (!r || r->unmapped)
        return -EINVAL;
    /* The tree search below needs only addr: let the map slot's cache miss overlap it. */
    memd_map_prefetch(&r->allocs, alloc_key(addr));
    memd_bt_path p, q;
    memd_bt_seek_k(&r->by_addr, addr, &p);
    memd_map_slot *a = alloc_at(r, addr);
    if (!a)
        return -ENOENT;
    uint64_t sz = a->val;
    memd_map_remove_slot(&r->allocs, a);
    r->allocated -= sz;
    side left, right;
    find_sides(&r->by_addr, &p, &q, addr, sz, &left, &right);
    if (blk_lo) {
        *blk_lo = left.touches ? left.a : addr;
        *blk_hi = right.touches ? right.a + right.s : addr + sz;
    }
    merge_free(r, &p, &left, &right, addr, sz); /* room held by reserve_alloc */
    if (r->allocs.len == 0)
        memd_range_reset(r); /* gives the trees' pools back too */
    else
        memd_map_trim(&r->allocs); /* a mostly empty table gives its memory back */
    if (size_out)
        *size_out = sz;
    return 0;
}

int memd_range_free(memd_range *r, uint64_t addr, uint64_t *size_out)
{
    return free_as(r, addr, size_out, NULL, NULL);
}

int memd_range_free_block(memd_range *r, uint64_t addr, uint64_t *size_out, uint64_t *blk_lo,
                          uint64_t *blk_hi)
{
    if (!blk_lo || !blk_hi)
        return -EINVAL;
    return free_as(r, addr, size_out, blk_lo, blk_hi);
}

int memd_range_free_sized(memd_range *r, uint64_t addr, uint64_t size)
{
    if (!r || !r->unmapped || size == 0 || size > UINT64_MAX - (r->min_align - 1))
        return -EINVAL;
    uint64_t sz = (size + (r->min_align - 1)) & ~(r->min_align - 1);
    if ((addr & (r->min_align - 1)) != 0 || addr < r->lo || addr > r->hi ||
        sz > r->hi - addr)
        return -ENOENT;
    memd_bt_path p, q;
    memd_bt_seek_k(&r->by_addr, addr, &p);
    side left, right;
    find_sides(&r->by_addr, &p, &q, addr, sz, &left, &right);
    /* Without a map, what can be checked is that no byte of the span is free already
     * (the neighbours found are the free blocks just below and above addr). */
    if ((left.s != 0 && left.a + left.s > addr) || (right.s != 0 && right.a < addr + sz))
        return -ENOENT;
    r->allocated -= sz;
    r->nallocs--;
    merge_free(r, &p, &left, &right, addr, sz); /* room held by reserve_alloc */
    if (r->nallocs == 0)
        memd_range_reset(r);
    return 0;
}

int memd_range_lookup(const memd_range *r, uint64_t addr, uint64_t *size_out)
{
    if (!r || r->unmapped)
        return -EINVAL;
    const memd_map_slot *a = alloc_at(r, addr);
    if (!a)
        return -ENOENT;
    if (size_out)
        *size_out = a->val;
    return 0;
}

void memd_range_stats_get(const memd_range *r, memd_range_stats *st)
{
    st->total = r->hi - r->lo;
    st->allocated = r->allocated;
    st->free = st->total - r->allocated;
    st->largest_free = memd_bt_max(&r->by_addr);
    st->largest_free_addr = 0;
    if (st->largest_free != 0) {
        memd_bt_path p;
        uint64_t s;
        memd_bt_fit(&r->by_addr, st->largest_free, 0, &p);
        memd_bt_get(&r->by_addr, &p, &st->largest_free_addr, &s);
    }
    st->free_blocks = r->by_addr.count;
    st->allocations = r->unmapped ? r->nallocs : r->allocs.len;
}

size_t memd_range_largest_free(const memd_range *r, size_t n, uint64_t *addr, uint64_t *size)
{
    return memd_bt_top_v(&r->by_addr, n, addr, size);
}

/* Every block in address order: the free blocks from the tree, and in each gap before,
 * between and after them the allocations chained by address + size. Stops at the first
 * non-zero return; a gap the allocations cannot tile exactly means a broken map
 * (-EFAULT). */
/* The blocks from cur on: cur is the start of a block (the range's, a free block's or,
 * with a map, an allocation's). */
static int walk(const memd_range *r, uint64_t cur, memd_range_visit_fn fn, void *ctx)
{
    const memd_bt *t = &r->by_addr;
    memd_bt_path p;
    memd_bt_seek_k(t, cur, &p);
    bool more = memd_bt_settle(t, &p);
    for (;;) {
        uint64_t fa = r->hi, fs = 0;
        if (more)
            memd_bt_get(t, &p, &fa, &fs);
        if (r->unmapped && cur < fa) { /* no map: the allocated span is one block */
            int rc = fn(ctx, cur, fa - cur, true);
            if (rc != 0)
                return rc;
            cur = fa;
        }
        while (cur < fa) {
            const memd_map_slot *a = alloc_at(r, cur);
            if (!a || a->val > fa - cur)
                return -EFAULT;
            int rc = fn(ctx, cur, a->val, true);
            if (rc != 0)
                return rc;
            cur += a->val;
        }
        if (!more)
            return cur == r->hi ? 0 : -EFAULT;
        if (cur != fa)
            return -EFAULT;
        int rc = fn(ctx, fa, fs, false);
        if (rc != 0)
            return rc;
        cur = fa + fs;
        more = memd_bt_next(t, &p);
    }
}

int memd_range_foreach(const memd_range *r, memd_range_visit_fn fn, void *ctx)
{
    if (!r || !fn)
        return -EINVAL;
    return walk(r, r->lo, fn, ctx);
}

int memd_range_foreach_from(const memd_range *r, uint64_t from, memd_range_visit_fn fn,
                            void *ctx)
{
    if (!r || !fn || r->unmapped || from < r->lo || from > r->hi)
        return -EINVAL;
    if (from == r->hi)
        return 0;
    if (!alloc_at(r, from)) {
        /* Not an allocation's start: only a free block's will do. */
        memd_bt_path p;
        memd_bt_seek_k(&r->by_addr, from, &p);
        uint64_t fa, fs;
        if (!memd_bt_settle(&r->by_addr, &p))
            return -ENOENT;
        memd_bt_get(&r->by_addr, &p, &fa, &fs);
        if (fa != from)
            return -ENOENT;
    }
    return walk(r, from, fn, ctx);
}

typedef struct check_ctx {
    const memd_range *r;
    uint64_t allocs, allocated, frees;
    bool prev_free;
} check_ctx;

static int check_block(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    check_ctx *c = ctx;
    uint64_t m = c->r->min_align;
    if (size == 0 || (addr & (m - 1)) != 0 || (size & (m - 1)) != 0)
        return -EFAULT;
    if (!allocated) {
        if (c->prev_free) /* two free neighbours should have been coalesced */
            return -EFAULT;
        if (c->r->size_index) {
            memd_bt_path p;
            uint64_t s, a;
            memd_bt_seek(&c->r->by_size, size, addr, &p);
            if (!memd_bt_settle(&c->r->by_size, &p))
                return -EFAULT;
            memd_bt_get(&c->r->by_size, &p, &s, &a);
            if (s != size || a != addr)
                return -EFAULT;
        }
        c->frees++;
    } else {
        c->allocs++;
        c->allocated += size;
    }
    c->prev_free = !allocated;
    return 0;
}

int memd_range_check(const memd_range *r)
{
    if (!r || memd_bt_check(&r->by_addr) < 0)
        return -EFAULT;
    if (r->size_index &&
        (memd_bt_check(&r->by_size) < 0 || r->by_size.count != r->by_addr.count))
        return -EFAULT;
    if (memd_range_aidx_check(&r->aidx, &r->by_addr) < 0)
        return -EFAULT;
    check_ctx c = {.r = r};
    if (walk(r, r->lo, check_block, &c) != 0)
        return -EFAULT;
    bool counts = r->unmapped ? c.allocs <= r->nallocs && (c.allocs != 0) == (r->nallocs != 0)
                              : c.allocs == r->allocs.len;
    if (!counts || c.allocated != r->allocated || c.frees != r->by_addr.count)
        return -EFAULT;
    return 0;
}

uint64_t memd_range_allocated(const memd_range *r)
{
    return r->allocated;
}

bool memd_range_lowest(const memd_range *r, uint64_t *addr)
{
    if (r->allocated == 0)
        return false;
    /* Free blocks coalesce: the first one, if it starts the range, ends at the lowest
     * allocation; else the range starts with one. */
    memd_bt_path p;
    memd_bt_seek_k(&r->by_addr, r->lo, &p);
    uint64_t k = 0, v = 0;
    if (memd_bt_settle(&r->by_addr, &p))
        memd_bt_get(&r->by_addr, &p, &k, &v);
    *addr = v && k == r->lo ? k + v : r->lo;
    return true;
}

uint64_t memd_range_base(const memd_range *r)
{
    return r->base;
}

uint64_t memd_range_size(const memd_range *r)
{
    return r->size;
}

uint64_t memd_range_min_align(const memd_range *r)
{
    return r->min_align;
}

uint64_t memd_range_probes(const memd_range *r)
{
    return r->probes;
}
