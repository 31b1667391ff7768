/* memd tests — reference model of the range allocator (see ref_range.h).
 *
 * Written for obviousness, not speed: arithmetic uses division instead of bit tricks,
 * the free list is a sorted array that is scanned linearly, and every update is an
 * explicit array insert/remove. Free blocks are kept maximal: two free blocks are never
 * adjacent, so "is this range free" is "does one free block contain it".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ref_range.h"

typedef struct ref_block {
    uint64_t addr, size;
} ref_block;

enum { SLOT_EMPTY = 0, SLOT_LIVE, SLOT_DEAD };

typedef struct ref_slot {
    uint64_t addr, size;
    int state;
} ref_slot;

struct ref_range {
    uint64_t base, size, min_align;
    uint64_t lo, hi; /* usable, aligned: [lo, hi) */
    ref_block *fb;   /* free blocks sorted by address */
    size_t nfb, capfb;
    ref_slot *used; /* allocations: open addressing, linear probing, tombstones */
    size_t ucap, nlive, ndead;
    uint64_t allocated;
};

static int is_pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

static size_t slot_home(const ref_range *r, uint64_t addr)
{
    uint64_t z = addr + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (size_t)(z % r->ucap);
}

static size_t used_find(const ref_range *r, uint64_t addr)
{
    size_t i = slot_home(r, addr);
    while (r->used[i].state != SLOT_EMPTY) {
        if (r->used[i].state == SLOT_LIVE && r->used[i].addr == addr)
            return i;
        i = (i + 1) % r->ucap;
    }
    return SIZE_MAX;
}

/* Only for addresses known not to be live. */
static void used_put(ref_range *r, uint64_t addr, uint64_t size)
{
    size_t i = slot_home(r, addr);
    while (r->used[i].state == SLOT_LIVE)
        i = (i + 1) % r->ucap;
    if (r->used[i].state == SLOT_DEAD)
        r->ndead--;
    r->used[i].addr = addr;
    r->used[i].size = size;
    r->used[i].state = SLOT_LIVE;
    r->nlive++;
}

/* Keep at most half the slots occupied (live or dead) after one more insert. */
static int used_reserve(ref_range *r)
{
    if ((r->nlive + r->ndead + 1) * 2 <= r->ucap)
        return 0;
    size_t ncap = 16;
    while (ncap < (r->nlive + 1) * 4)
        ncap *= 2;
    ref_slot *old = r->used;
    size_t ocap = r->ucap;
    r->used = calloc(ncap, sizeof(ref_slot));
    if (!r->used) {
        r->used = old;
        return -ENOMEM;
    }
    r->ucap = ncap;
    r->nlive = r->ndead = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].state == SLOT_LIVE)
            used_put(r, old[i].addr, old[i].size);
    free(old);
    return 0;
}

/* Room for one more free block. */
static int fb_reserve(ref_range *r)
{
    if (r->nfb < r->capfb)
        return 0;
    size_t ncap = r->capfb ? r->capfb * 2 : 16;
    ref_block *p = realloc(r->fb, ncap * sizeof(ref_block));
    if (!p)
        return -ENOMEM;
    r->fb = p;
    r->capfb = ncap;
    return 0;
}

static void fb_insert(ref_range *r, size_t i, uint64_t addr, uint64_t size)
{
    memmove(&r->fb[i + 1], &r->fb[i], (r->nfb - i) * sizeof(ref_block));
    r->fb[i].addr = addr;
    r->fb[i].size = size;
    r->nfb++;
}

static void fb_remove(ref_range *r, size_t i)
{
    memmove(&r->fb[i], &r->fb[i + 1], (r->nfb - i - 1) * sizeof(ref_block));
    r->nfb--;
}

/* Does a request of n bytes aligned to a fit in free block b, and where does it go. */
static int fits(const ref_block *b, uint64_t n, uint64_t a, memd_dir dir, uint64_t *at)
{
    if (b->size < n)
        return 0;
    if (dir == MEMD_DIR_BOTTOM_UP) {
        uint64_t pad = b->addr % a == 0 ? 0 : a - b->addr % a;
        if (pad > b->size - n)
            return 0;
        *at = b->addr + pad;
    } else {
        uint64_t top = b->addr + b->size - n;
        uint64_t x = top - top % a;
        if (x < b->addr)
            return 0;
        *at = x;
    }
    return 1;
}

/* Allocate [at, at + n) from free block i; the caller reserved room. */
static void take(ref_range *r, size_t i, uint64_t at, uint64_t n)
{
    ref_block b = r->fb[i];
    uint64_t left = at - b.addr;
    uint64_t right = b.addr + b.size - (at + n);
    fb_remove(r, i);
    if (right > 0)
        fb_insert(r, i, at + n, right);
    if (left > 0)
        fb_insert(r, i, b.addr, left);
    used_put(r, at, n);
    r->allocated += n;
}

int ref_range_create(uint64_t base, uint64_t size, uint64_t min_align, ref_range **out)
{
    *out = NULL;
    if (size == 0 || !is_pow2(min_align) || size > UINT64_MAX - base)
        return -EINVAL;
    uint64_t end = base + size;
    uint64_t lo = base;
    if (base % min_align != 0) {
        if (min_align - base % min_align > UINT64_MAX - base)
            return -EINVAL;
        lo = base + (min_align - base % min_align);
    }
    uint64_t hi = end - end % min_align;
    if (lo >= hi)
        return -EINVAL;
    ref_range *r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    r->base = base;
    r->size = size;
    r->min_align = min_align;
    r->lo = lo;
    r->hi = hi;
    if (fb_reserve(r) < 0 || used_reserve(r) < 0) {
        ref_range_destroy(r);
        return -ENOMEM;
    }
    ref_range_reset(r);
    *out = r;
    return 0;
}

void ref_range_destroy(ref_range *r)
{
    if (!r)
        return;
    free(r->fb);
    free(r->used);
    free(r);
}

void ref_range_reset(ref_range *r)
{
    r->nfb = 1;
    r->fb[0].addr = r->lo;
    r->fb[0].size = r->hi - r->lo;
    memset(r->used, 0, r->ucap * sizeof(ref_slot));
    r->nlive = r->ndead = 0;
    r->allocated = 0;
}

int ref_range_alloc(ref_range *r, uint64_t size, uint64_t align, memd_dir dir, memd_fit fit,
                    uint64_t *addr)
{
    if (size == 0 || (align != 0 && !is_pow2(align)))
        return -EINVAL;
    if (dir != MEMD_DIR_BOTTOM_UP && dir != MEMD_DIR_TOP_DOWN)
        return -EINVAL;
    if (fit != MEMD_FIT_FIRST && fit != MEMD_FIT_BEST)
        return -EINVAL;
    uint64_t m = r->min_align;
    if (size % m != 0 && m - size % m > UINT64_MAX - size)
        return -EOVERFLOW;
    uint64_t n = size % m == 0 ? size : size + (m - size % m);
    uint64_t a = align > m ? align : m;
    if (fb_reserve(r) < 0 || used_reserve(r) < 0)
        return -ENOMEM;

    size_t chosen = SIZE_MAX;
    uint64_t chosen_at = 0;
    for (size_t k = 0; k < r->nfb; k++) {
        size_t i = dir == MEMD_DIR_BOTTOM_UP ? k : r->nfb - 1 - k;
        uint64_t at;
        if (!fits(&r->fb[i], n, a, dir, &at))
            continue;
        /* Scanning in placement order, a strictly smaller size is needed to replace the
         * current choice, so ties keep the block met first. */
        if (chosen == SIZE_MAX || (fit == MEMD_FIT_BEST && r->fb[i].size < r->fb[chosen].size)) {
            chosen = i;
            chosen_at = at;
        }
        if (fit == MEMD_FIT_FIRST)
            break;
    }
    if (chosen == SIZE_MAX)
        return -ENOMEM;
    take(r, chosen, chosen_at, n);
    *addr = chosen_at;
    return 0;
}

int ref_range_alloc_at(ref_range *r, uint64_t addr, uint64_t size)
{
    uint64_t m = r->min_align;
    if (size == 0 || addr % m != 0)
        return -EINVAL;
    if (size % m != 0 && m - size % m > UINT64_MAX - size)
        return -EINVAL;
    uint64_t n = size % m == 0 ? size : size + (m - size % m);
    if (addr < r->lo || addr > r->hi || n > r->hi - addr)
        return -EINVAL;
    if (fb_reserve(r) < 0 || used_reserve(r) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < r->nfb; i++) {
        const ref_block *b = &r->fb[i];
        if (b->addr <= addr && addr - b->addr < b->size) {
            if (n > b->size - (addr - b->addr))
                return -EBUSY;
            take(r, i, addr, n);
            return 0;
        }
    }
    return -EBUSY;
}

int ref_range_free(ref_range *r, uint64_t addr, uint64_t *size_out)
{
    size_t u = used_find(r, addr);
    if (u == SIZE_MAX)
        return -ENOENT;
    if (fb_reserve(r) < 0)
        return -ENOMEM;
    uint64_t n = r->used[u].size;
    r->used[u].state = SLOT_DEAD;
    r->nlive--;
    r->ndead++;
    r->allocated -= n;

    /* p = number of free blocks below addr (binary search over the sorted array). */
    size_t lo = 0, hi = r->nfb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->fb[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t p = lo;
    fb_insert(r, p, addr, n);
    if (p + 1 < r->nfb && r->fb[p].addr + r->fb[p].size == r->fb[p + 1].addr) {
        r->fb[p].size += r->fb[p + 1].size;
        fb_remove(r, p + 1);
    }
    if (p > 0 && r->fb[p - 1].addr + r->fb[p - 1].size == r->fb[p].addr) {
        r->fb[p - 1].size += r->fb[p].size;
        fb_remove(r, p);
    }
    if (size_out)
        *size_out = n;
    return 0;
}

int ref_range_lookup(const ref_range *r, uint64_t addr, uint64_t *size_out)
{
    size_t u = used_find(r, addr);
    if (u == SIZE_MAX)
        return -ENOENT;
    if (size_out)
        *size_out = r->used[u].size;
    return 0;
}

void ref_range_stats_get(const ref_range *r, memd_range_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->total = r->hi - r->lo;
    st->allocated = r->allocated;
    st->free = st->total - r->allocated;
    for (size_t i = 0; i < r->nfb; i++) {
        if (r->fb[i].size > st->largest_free) { /* strict: the lowest address wins ties */
            st->largest_free = r->fb[i].size;
            st->largest_free_addr = r->fb[i].addr;
        }
    }
    st->free_blocks = r->nfb;
    st->allocations = r->nlive;
}

static int cmp_block(const void *a, const void *b)
{
    uint64_t x = ((const ref_block *)a)->addr, y = ((const ref_block *)b)->addr;
    return (x > y) - (x < y);
}

int ref_range_foreach(const ref_range *r, memd_range_visit_fn fn, void *ctx)
{
    ref_block *live = malloc((r->nlive + 1) * sizeof(ref_block));
    if (!live)
        return -ENOMEM;
    size_t nl = 0;
    for (size_t i = 0; i < r->ucap; i++) {
        if (r->used[i].state == SLOT_LIVE) {
            live[nl].addr = r->used[i].addr;
            live[nl].size = r->used[i].size;
            nl++;
        }
    }
    qsort(live, nl, sizeof(ref_block), cmp_block);
    size_t i = 0, j = 0;
    int rc = 0;
    while (rc == 0 && (i < r->nfb || j < nl)) {
        if (j == nl || (i < r->nfb && r->fb[i].addr < live[j].addr)) {
            rc = fn(ctx, r->fb[i].addr, r->fb[i].size, false);
            i++;
        } else {
            rc = fn(ctx, live[j].addr, live[j].size, true);
            j++;
        }
    }
    free(live);
    return rc;
}
