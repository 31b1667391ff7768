/* memd engine — bank subsets: range lockstep and per-bank placement.
 *
 * A region starts with one lockstep map (d->range) serving every bank. The first subset
 * (RANGE) or per-bank (PER_BANK) buffer "splits" the region: every bank gets its own
 * range allocator, and every lockstep buffer already placed is reserved in each of them
 * (O(L * B log n) once, L lockstep buffers, B banks). From then on:
 *  - PER_BANK: memd_range_alloc in each bank of the set, exact first/best fit per bank,
 *    O(log n) per bank touched.
 *  - RANGE: the first address free in every bank of the set. memd_range_fit_from gives,
 *    for one bank, the first fitting start at or beyond a candidate x in the direction of
 *    the request; the candidate moves to that start whenever a bank rejects it, round
 *    robin, until every bank of the set accepts the same x ("leapfrog" intersection).
 *    Cost: O((|S| + m) log n), m being how many times the candidate moves, bounded by
 *    the free blocks the banks disagree on below (bottom-up) or above (top-down) the
 *    result. It is exact first fit over the intersection of the banks' free space. Best
 *    fit walks every intersection block that fits (O(blocks * |S| log n)) and takes the
 *    smallest, ties to the lowest (bottom-up) or highest (top-down) address.
 *  - ALL (lockstep) in a split region: the same intersection over every bank, then the
 *    address is reserved in the lockstep map and in every bank: O((B + m) log n), where
 *    an unsplit region pays O(log n). A region stays split once split (so a workload
 *    that mixes modes never pays the replay twice).
 * The lockstep map keeps holding the lockstep buffers alone, so its placement of a
 * lockstep buffer and the split region's agree while no subset buffer is in the way. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

/* ---------------------------------------------------------------- placements */

void memd_placement_fini(memd_placement *p)
{
    if (!p)
        return;
    free(p->set);
    free(p->addrs);
    p->set = NULL;
    p->addrs = NULL;
}

int memd_placement_copy(memd_placement *dst, const memd_placement *src)
{
    memd_placement c = *src;
    c.set = NULL;
    c.addrs = NULL;
    if (src->set) {
        c.set = malloc(sizeof(*c.set) * src->nset);
        if (!c.set)
            return -ENOMEM;
        memcpy(c.set, src->set, sizeof(*c.set) * src->nset);
    }
    if (src->addrs) {
        c.addrs = malloc(sizeof(*c.addrs) * src->nset);
        if (!c.addrs) {
            free(c.set);
            return -ENOMEM;
        }
        memcpy(c.addrs, src->addrs, sizeof(*c.addrs) * src->nset);
    }
    *dst = c;
    return 0;
}

/* Index of bank in the placement's set, or -1. Sets are sorted: binary search. */
static int64_t set_index(const memd_placement *p, uint32_t bank)
{
    uint32_t lo = 0, hi = p->nset;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->set[mid] < bank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nset && p->set[lo] == bank ? (int64_t)lo : -1;
}

int memd_placement_bank_addr(const memd_placement *p, uint32_t bank, uint64_t *addr)
{
    if (!p || !addr)
        return -EINVAL;
    if (p->mode == MEMD_BANKS_ALL) {
        *addr = p->address;
        return 0;
    }
    int64_t i = p->set ? set_index(p, bank) : -1;
    if (i < 0)
        return -ENOENT;
    *addr = p->addrs ? p->addrs[i] : p->address;
    return 0;
}

/* ---------------------------------------------------------------- split regions */

static void drop_banks(memd_range **b, uint32_t n)
{
    for (uint32_t i = 0; b && i < n; i++)
        memd_range_destroy(b[i]);
    free(b);
}

void memd_banks_destroy(memd_device *d)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        for (int r = 0; r < MEMD_MAX_REGIONS; r++) {
            drop_banks(d->bank[k][r], d->spec.groups[k].banks);
            d->bank[k][r] = NULL;
        }
}

typedef struct replay_ctx {
    memd_range **bank;
    uint32_t nbanks;
} replay_ctx;

static int replay_block(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    replay_ctx *c = ctx;
    if (!allocated)
        return 0;
    for (uint32_t i = 0; i < c->nbanks; i++) {
        int rc = memd_range_alloc_at(c->bank[i], addr, size);
        if (rc)
            return rc;
    }
    return 0;
}

/* One allocator per bank, each holding the lockstep buffers placed so far. */
static int split(memd_device *d, memd_kind k, uint8_t r)
{
    if (d->bank[k][r])
        return 0;
    const memd_bank_group_spec *g = &d->spec.groups[k];
    const memd_region_spec *rs = &g->regions[r];
    memd_range **b = calloc(g->banks, sizeof(*b));
    if (!b)
        return -ENOMEM;
    int rc = 0;
    for (uint32_t i = 0; i < g->banks && rc == 0; i++)
        rc = memd_range_create(rs->base, rs->size, g->alignment, &b[i]);
    replay_ctx c = {b, g->banks};
    if (rc == 0)
        rc = memd_range_foreach(d->range[k][r], replay_block, &c);
    if (rc) {
        drop_banks(b, g->banks);
        return rc < 0 ? rc : -ENOMEM;
    }
    d->bank[k][r] = b;
    return 0;
}

bool memd_device_region_split(const memd_device *d, memd_kind kind, uint8_t region)
{
    return d && (unsigned)kind < MEMD_KIND_COUNT && region < MEMD_MAX_REGIONS &&
           d->bank[kind][region] != NULL;
}

const memd_range *memd_device_bank_range(const memd_device *d, memd_kind kind, uint8_t region,
                                         uint32_t bank)
{
    if (!d || (unsigned)kind >= MEMD_KIND_COUNT || region >= MEMD_MAX_REGIONS ||
        bank >= d->spec.groups[kind].banks || !d->range[kind][region])
        return NULL;
    return d->bank[kind][region] ? d->bank[kind][region][bank] : d->range[kind][region];
}

int memd_device_bank_stats(const memd_device *d, memd_kind kind, uint8_t region, uint32_t bank,
                           memd_range_stats *st)
{
    const memd_range *r = memd_device_bank_range(d, kind, region, bank);
    if (!r || !st)
        return -ENOENT;
    memd_range_stats_get(r, st);
    return 0;
}

/* ---------------------------------------------------------------- intersection */

/* The banks a search runs over: set[0..n) of b, or b[0..n) when set is NULL. */
typedef struct bankv {
    memd_range **b;
    const uint32_t *set;
    uint32_t n;
} bankv;

static inline memd_range *bv_at(const bankv *v, uint32_t j)
{
    return v->b[v->set ? v->set[j] : j];
}

static inline uint32_t bv_id(const bankv *v, uint32_t j)
{
    return v->set ? v->set[j] : j;
}

/* The first start from `from` on, in direction dir, where [x, x + sz) is free in every
 * bank of v (leapfrog: see the top of the file). false: bank index *fail has no room. */
static bool common_fit(const bankv *v, uint64_t sz, uint64_t al, memd_dir dir, uint64_t from,
                       uint64_t *at, uint32_t *fail)
{
    uint64_t x = from, b, bs, y;
    uint32_t agree = 0;
    for (uint32_t j = 0; agree < v->n; j = j + 1 == v->n ? 0 : j + 1) {
        if (!memd_range_fit_from(bv_at(v, j), sz, al, dir, x, &y, &b, &bs)) {
            *fail = j;
            return false;
        }
        if (agree && y == x) {
            agree++;
        } else {
            x = y;
            agree = 1;
        }
    }
    *at = x;
    return true;
}

/* The free block of the intersection holding the common start x. */
static void common_block(const bankv *v, uint64_t sz, uint64_t al, memd_dir dir, uint64_t x,
                         uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    for (uint32_t j = 0; j < v->n; j++) {
        uint64_t y, b, bs;
        (void)memd_range_fit_from(bv_at(v, j), sz, al, dir, x, &y, &b, &bs); /* y == x */
        if (b > *lo)
            *lo = b;
        if (b + bs < *hi)
            *hi = b + bs;
    }
}

/* Best fit over the intersection: every intersection block that fits, in direction
 * order; the first smallest wins. */
static bool common_best(const bankv *v, uint64_t sz, uint64_t al, memd_dir dir, uint64_t *at,
                        uint32_t *fail)
{
    bool found = false;
    uint64_t best = 0, from = dir == MEMD_DIR_TOP_DOWN ? UINT64_MAX : 0, x, lo, hi;
    while (common_fit(v, sz, al, dir, from, &x, fail)) {
        common_block(v, sz, al, dir, x, &lo, &hi);
        if (!found || hi - lo < best) {
            found = true;
            best = hi - lo;
            *at = x;
        }
        /* The bank that bounds the block uses the byte at hi (below lo): the next
         * candidate lies wholly past it. */
        if (dir == MEMD_DIR_TOP_DOWN) {
            if (lo < sz)
                break;
            from = lo - sz;
        } else {
            if (hi == UINT64_MAX)
                break;
            from = hi;
        }
    }
    return found;
}

static uint64_t req_size(const memd_device *d, const memd_placement *p)
{
    uint64_t m = d->spec.groups[p->kind].alignment;
    return (p->size_per_bank + (m - 1)) & ~(m - 1);
}

/* Reserve [addr, addr + sz) in banks [0, n) of v at addrs[j] (or addr); on failure
 * undo the ones done. */
static int reserve_each(const bankv *v, const uint64_t *addrs, uint64_t addr, uint64_t sz)
{
    for (uint32_t j = 0; j < v->n; j++) {
        int rc = memd_range_alloc_at(bv_at(v, j), addrs ? addrs[j] : addr, sz);
        if (rc) {
            while (j-- > 0)
                (void)memd_range_free(bv_at(v, j), addrs ? addrs[j] : addr, NULL);
            return rc;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- alloc / free */

static int fill_set(memd_placement *p, const memd_alloc_req *req)
{
    p->set = malloc(sizeof(*p->set) * p->nset);
    if (!p->set)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nset; i++)
        p->set[i] = req->nbank_set ? req->bank_set[i] : i;
    if (p->mode == MEMD_BANKS_PER_BANK) {
        p->addrs = malloc(sizeof(*p->addrs) * p->nset);
        if (!p->addrs) {
            memd_placement_fini(p);
            return -ENOMEM;
        }
    }
    return 0;
}

int memd_banks_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *p)
{
    int rc = split(d, p->kind, p->region);
    if (rc)
        return rc;
    memd_range **b = d->bank[p->kind][p->region];
    const memd_class_policy *pol = &d->spec.policy[p->kind][req->cls];
    uint64_t al = memd_device_req_alignment(d, p->kind, req), sz = req_size(d, p);

    if (p->mode == MEMD_BANKS_PER_BANK) {
        if ((rc = fill_set(p, req)))
            return rc;
        for (uint32_t i = 0; i < p->nset; i++) {
            rc = memd_range_alloc(b[p->set[i]], sz, al, pol->dir, pol->fit, &p->addrs[i]);
            if (rc) {
                if (rc == -ENOMEM)
                    d->oom_bank = p->set[i];
                while (i-- > 0)
                    (void)memd_range_free(b[p->set[i]], p->addrs[i], NULL);
                memd_placement_fini(p);
                return rc;
            }
        }
        p->address = p->addrs[0];
        d->subsets[p->kind][p->region]++;
        return 0;
    }

    bankv v = {b, req->nbank_set ? req->bank_set : NULL,
               p->mode == MEMD_BANKS_ALL ? d->spec.groups[p->kind].banks : p->nset};
    uint32_t fail = 0;
    bool ok = pol->fit == MEMD_FIT_BEST ? common_best(&v, sz, al, pol->dir, &p->address, &fail)
                                        : common_fit(&v, sz, al, pol->dir,
                                                     pol->dir == MEMD_DIR_TOP_DOWN ? UINT64_MAX : 0,
                                                     &p->address, &fail);
    if (!ok) {
        d->oom_bank = bv_id(&v, fail);
        return -ENOMEM;
    }
    if (p->mode == MEMD_BANKS_ALL) {
        /* Free in every bank, so free in the lockstep map, which holds a subset of them. */
        rc = memd_range_alloc_at(d->range[p->kind][p->region], p->address, sz);
        if (rc)
            return rc;
        rc = reserve_each(&v, NULL, p->address, sz);
        if (rc)
            (void)memd_range_free(d->range[p->kind][p->region], p->address, NULL);
        return rc;
    }
    if ((rc = fill_set(p, req)))
        return rc;
    rc = reserve_each(&v, NULL, p->address, sz);
    if (rc)
        memd_placement_fini(p);
    else
        d->subsets[p->kind][p->region]++;
    return rc;
}

/* A stored placement's set: valid ids, strictly increasing. */
static bool set_ok(const memd_device *d, const memd_placement *p)
{
    uint32_t banks = d->spec.groups[p->kind].banks;
    if (p->mode == MEMD_BANKS_ALL)
        return true;
    if (p->nset == 0 || p->nset > banks || !p->set ||
        (p->mode == MEMD_BANKS_PER_BANK) != (p->addrs != NULL))
        return false;
    for (uint32_t i = 0; i < p->nset; i++)
        if (p->set[i] >= banks || (i && p->set[i] <= p->set[i - 1]))
            return false;
    return true;
}

int memd_banks_alloc_at(memd_device *d, const memd_placement *p)
{
    if ((unsigned)p->mode >= MEMD_BANKS_MODE_COUNT || !set_ok(d, p))
        return -EINVAL;
    int rc = split(d, p->kind, p->region);
    if (rc)
        return rc;
    memd_range **b = d->bank[p->kind][p->region];
    uint64_t sz = req_size(d, p);
    if (p->mode == MEMD_BANKS_ALL) {
        bankv v = {b, NULL, d->spec.groups[p->kind].banks};
        rc = memd_range_alloc_at(d->range[p->kind][p->region], p->address, sz);
        if (rc == 0 && (rc = reserve_each(&v, NULL, p->address, sz)))
            (void)memd_range_free(d->range[p->kind][p->region], p->address, NULL);
        return rc;
    }
    bankv v = {b, p->set, p->nset};
    rc = reserve_each(&v, p->addrs, p->address, sz);
    if (rc == 0)
        d->subsets[p->kind][p->region]++;
    return rc;
}

int memd_banks_release(memd_device *d, const memd_placement *p)
{
    memd_range **b = d->bank[p->kind][p->region];
    if (p->mode == MEMD_BANKS_ALL) {
        int rc = memd_range_free(d->range[p->kind][p->region], p->address, NULL);
        if (rc)
            return rc;
        for (uint32_t i = 0; i < d->spec.groups[p->kind].banks; i++)
            (void)memd_range_free(b[i], p->address, NULL);
        return 0;
    }
    if (!b || !set_ok(d, p))
        return -ENOENT;
    /* Check the whole set first: a release is all or nothing. */
    for (uint32_t i = 0; i < p->nset; i++)
        if (memd_range_lookup(b[p->set[i]], p->addrs ? p->addrs[i] : p->address, NULL) < 0)
            return -ENOENT;
    int rc = 0;
    for (uint32_t i = 0; i < p->nset; i++) {
        int r = memd_range_free(b[p->set[i]], p->addrs ? p->addrs[i] : p->address, NULL);
        if (r && !rc)
            rc = r;
    }
    d->subsets[p->kind][p->region]--; /* the set was checked whole: it is gone */
    return rc;
}
