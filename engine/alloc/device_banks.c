/* memd engine — bank subsets: uniform, range-lockstep and per-bank placement.
 *
 * A region starts with one lockstep map (d->range) serving every bank. The first subset
 * (RANGE) or per-bank (PER_BANK) buffer "splits" the region: every bank gets its own
 * range allocator holding that bank's pieces of bank-set buffers ONLY, and the region a
 * coverage map (cover.h) counting, per unit, the lockstep buffers and bank-set pieces
 * over it. The lockstep map keeps holding the lockstep buffers alone, as in an unsplit
 * region. A split costs O(B) allocator creations; the coverage is built at the first
 * lockstep request while bank-set buffers are there (O((L + P) log U) once, L lockstep
 * buffers, P pieces, U units of the region), so a region used only by bank-set buffers,
 * or whose lockstep buffers only come and go while it has none, never pays for it.
 * While a split region
 * has no bank-set buffer, lockstep buffers go straight to the lockstep map (and the
 * coverage, if built); once the lockstep operations since its last bank-set buffer went
 * have paid for a new split (banks + lockstep buffers), it un-splits (lockstep_done).
 * While split, with bank-set buffers:
 *  - ALL (lockstep): a unit of coverage 0 is free in every bank, so the coverage map's
 *    uncovered runs are the intersection of every bank's free space: memd_cover_fit
 *    places the buffer there with range.h's first / best fit rules, then it is reserved
 *    in the lockstep map and added to the coverage. O(log n + log U) for first fit (plus
 *    O(log U) per run long enough but failing alignment, as range.c without an
 *    alignment index); best fit visits every uncovered run long enough (O(runs log U)).
 *    A free is one lockstep-map free and one coverage removal. No per-bank allocator is
 *    touched.
 *  - PER_BANK: bank b's free space is the complement of its pieces and the lockstep
 *    buffers. While the lockstep map is empty that is the bank's allocator alone
 *    (memd_range_fit_cur, O(log n) for both fits); otherwise the bank's and the lockstep
 *    map's lists of free blocks are merged in placement order (memd_range_fit_both,
 *    range_cur.h): every overlap of two blocks large enough is a free block of the
 *    intersection, so first fit is the first overlap that holds the request and best
 *    fit the smallest: O(log n + m), m the blocks passed over (each a step inside a
 *    leaf through a cursor; the blocks the two disagree on before the result). Where
 *    those walks are long, first fit starts from the bank's bound instead (bank_hints.h,
 *    place_per_bank, hint_measure), passing only the blocks past its last answer. The
 *    piece is then carved from the bank's cursor (no second descent), and added to the
 *    coverage (once built): O(log U) per bank touched.
 *  - RANGE_LOCKSTEP (tt-metal's range lockstep): RANGE's search below, then reserved
 *    as a lockstep buffer (the lockstep map and the coverage): it may lie over pieces
 *    of banks outside its set, which the per-bank views and checks allow while the
 *    region holds one (d->ranged).
 *  - RANGE (tt-metal's uniform per-core): a leapfrog over the set's |S| allocators plus
 *    the lockstep map (unless it
 *    is empty): memd_range_fit_from gives, for one allocator, the first fitting start
 *    at or beyond a candidate x in the request's direction, and the candidate moves
 *    whenever a member rejects it until all accept the same x. Each member keeps a
 *    cursor (range_cur.h) on the block its last answer came from, and the candidate
 *    only moves one way, so a question costs a step or two inside a leaf, not a
 *    descent; after a move the member that moved it before is asked first (the
 *    lockstep map and one bank tend to take turns): O(|S| log n + m) for m moves,
 *    where seeking every question from the root was O(m log n). Carved in each bank of
 *    S from its cursor, added to the coverage once (one span covers the unit in
 *    whichever banks).
 *  - Best fit over an intersection walks every intersection block that fits (through
 *    the same cursors: O(members log n + blocks * members)) and takes the smallest,
 *    ties to the lowest (bottom-up) or highest (top-down) address: exact, not
 *    logarithmic.
 * Every change across several allocators is all or nothing: the search changes
 * nothing, then every allocator and the coverage reserve their memory for the change
 * (memd_range_reserve, memd_cover_reserve), and only then are the pieces reserved,
 * which can then no longer fail. An -ENOBUFS (the engine's own memory) leaves the
 * device as it was. Frees need no memory: each allocator held the room its pieces'
 * frees need when they were made, and the coverage only drops nodes.
 * Per-bank views (device_bank_views.c) merge a bank's pieces with the lockstep map. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"
#include "range_cur.h"

/* ---------------------------------------------------------------- placements */

void memd_placement_fini(memd_placement *p)
{
    if (!p)
        return;
    free(p->set);
    free(p->addrs);
    free(p->sizes);
    p->set = NULL;
    p->addrs = NULL;
    p->sizes = NULL;
}

uint64_t memd_placement_bytes(const memd_placement *p)
{
    if (!p->sizes)
        return p->size_per_bank * p->banks;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < p->nset; i++)
        sum += p->sizes[i];
    return sum;
}

static uint64_t *u64_dup(const uint64_t *src, uint32_t n)
{
    uint64_t *c = malloc(sizeof(*c) * n);
    if (c)
        memcpy(c, src, sizeof(*c) * n);
    return c;
}

int memd_placement_copy(memd_placement *dst, const memd_placement *src)
{
    memd_placement c = *src;
    c.set = NULL;
    c.addrs = NULL;
    c.sizes = NULL;
    if (src->set) {
        c.set = malloc(sizeof(*c.set) * src->nset);
        if (!c.set)
            return -ENOMEM;
        memcpy(c.set, src->set, sizeof(*c.set) * src->nset);
    }
    if ((src->addrs && !(c.addrs = u64_dup(src->addrs, src->nset))) ||
        (src->sizes && !(c.sizes = u64_dup(src->sizes, src->nset)))) {
        memd_placement_fini(&c);
        return -ENOMEM;
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

/* Back to one map: the per-bank allocators and the coverage go (all empty, or the
 * device is going). */
static __attribute__((cold, noinline)) void unsplit(memd_device *d, memd_kind k, uint8_t r)
{
    drop_banks(d->bank[k][r], d->spec.groups[k].banks);
    d->bank[k][r] = NULL;
    memd_cover_destroy(d->cover[k][r]);
    d->cover[k][r] = NULL;
    memd_hints_destroy(d->hints[k][r]);
    d->hints[k][r] = NULL;
}

void memd_banks_destroy(memd_device *d)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        for (int r = 0; r < MEMD_MAX_REGIONS; r++)
            unsplit(d, (memd_kind)k, (uint8_t)r);
}

/* Adds every allocation it visits to the coverage, once. */
static int cover_block(void *ctx, uint64_t addr, uint64_t size, bool allocated)
{
    return allocated ? memd_cover_add(ctx, addr, size, 1) : 0;
}

/* The region's coverage, built at the first lockstep request in a split region that
 * holds bank-set buffers: every lockstep buffer and every bank's pieces, O((L + P) log U)
 * once. Until then range and per-bank buffers pay nothing for it; once built it is kept
 * until the region un-splits. On failure nothing changes. */
static int ensure_cover(memd_device *d, memd_kind k, uint8_t r)
{
    if (d->cover[k][r])
        return 0;
    const memd_bank_group_spec *g = &d->spec.groups[k];
    uint64_t lo, hi;
    memd_region_span(d, k, r, &lo, &hi);
    memd_cover *c = NULL;
    int rc = memd_cover_create(lo, g->alignment, (hi - lo) / g->alignment, &c);
    if (rc == 0)
        rc = memd_range_foreach(d->range[k][r], cover_block, c);
    for (uint32_t i = 0; i < g->banks && rc == 0; i++)
        rc = memd_range_foreach(d->bank[k][r][i], cover_block, c);
    if (rc) {
        memd_cover_destroy(c);
        return -ENOBUFS; /* cover_block fails only for memory */
    }
    d->cover[k][r] = c;
    return 0;
}

/* Lockstep operations an emptied split region waits for before it un-splits: the
 * banks plus the lockstep buffers there, what a new split and coverage would cost. */
static void idle_budget(memd_device *d, memd_kind k, uint8_t r)
{
    memd_range_stats st;
    memd_range_stats_get(d->range[k][r], &st);
    d->idle[k][r] = d->spec.groups[k].banks + st.allocations;
}

/* A lockstep buffer was placed or released in split region (k, r). Once the region has
 * no bank-set buffer left and the lockstep operations since have paid for a new split
 * (idle_budget), it un-splits: lockstep placement is the plain lockstep map's again
 * (the same placements: the coverage's uncovered runs were exactly its free blocks),
 * at its cost. Waiting keeps a bank-set buffer that comes and goes from splitting and
 * building the coverage over and over: amortized O(log U) per operation. */
static inline void lockstep_done(memd_device *d, memd_kind k, uint8_t r)
{
    if (__builtin_expect(d->subsets[k][r] == 0, 0) && d->bank[k][r] && --d->idle[k][r] == 0)
        unsplit(d, k, r);
}

/* An empty allocator per bank (the coverage waits for a lockstep request: ensure_cover). */
static int split(memd_device *d, memd_kind k, uint8_t r)
{
    if (d->bank[k][r])
        return 0;
    idle_budget(d, k, r); /* used if the bank-set request fails and none is left */
    const memd_bank_group_spec *g = &d->spec.groups[k];
    const memd_region_spec *rs = &g->regions[r];
    memd_range **b = calloc(g->banks, sizeof(*b));
    if (!b)
        return -ENOBUFS;
    int rc = 0;
    for (uint32_t i = 0; i < g->banks && rc == 0; i++)
        rc = memd_range_create(rs->base, rs->size, g->alignment, &b[i]);
    if (rc) {
        drop_banks(b, g->banks);
        return -ENOBUFS; /* the spec's region was valid: only memory fails */
    }
    d->bank[k][r] = b;
    return 0;
}

bool memd_device_region_split(const memd_device *d, memd_kind kind, uint8_t region)
{
    return d && (unsigned)kind < MEMD_KIND_COUNT && region < MEMD_MAX_REGIONS &&
           d->bank[kind][region] != NULL;
}

/* ---------------------------------------------------------------- intersection */

/* The allocators a search runs over: banks set[0..n) of b (b[0..n) when set is NULL),
 * then the lockstep map as member n unless lock is NULL (an empty map is left out).
 * asked (unless NULL) counts the questions put to members (memd_device_walks). */
typedef struct bankv {
    memd_range **b;
    const uint32_t *set;
    uint32_t n;
    memd_range *lock;
    uint64_t *asked;
} bankv;

static inline uint32_t bv_members(const bankv *v)
{
    return v->n + (v->lock != NULL);
}

static inline memd_range *bv_at(const bankv *v, uint32_t j)
{
    return j == v->n ? v->lock : v->b[v->set ? v->set[j] : j];
}

/* Member j's first fitting start from `from` on: through its cursor cur[j] when the
 * search has cursors (every member's `from` moves one way during a search, and nothing
 * changes until it ends: range_cur.h), else sought from the root. */
static inline bool member_fit(const bankv *v, memd_range_cur *cur, uint32_t j, uint64_t sz,
                              uint64_t al, memd_dir dir, uint64_t from, uint64_t *at,
                              uint64_t *b, uint64_t *bs)
{
    if (cur)
        return memd_range_fit_from_cur(bv_at(v, j), &cur[j], sz, al, dir, from, at, b, bs);
    return memd_range_fit_from(bv_at(v, j), sz, al, dir, from, at, b, bs);
}

/* The first start from `from` on, in direction dir, where [x, x + sz) is free in every
 * member of v (leapfrog: see the top of the file). false: member *fail has no room.
 * Members are asked in the cyclic order ord (identity when NULL); when one moves the
 * candidate, the one that moved it before is asked next: in a range search the
 * lockstep map and one bank tend to take turns, and the others mostly agree. Any order
 * gives the same start (the least one every member accepts). */
static bool common_fit(const bankv *v, memd_range_cur *cur, uint32_t *ord, uint64_t sz,
                       uint64_t al, memd_dir dir, uint64_t from, uint64_t *at, uint32_t *fail)
{
    uint64_t x = from, b, bs, y;
    uint32_t agree = 0, n = bv_members(v), pm = UINT32_MAX; /* pm: position of the last mover */
    for (uint32_t k = 0; agree < n; k = k + 1 == n ? 0 : k + 1) {
        uint32_t j = ord ? ord[k] : k;
        if (v->asked)
            ++*v->asked;
        if (!member_fit(v, cur, j, sz, al, dir, x, &y, &b, &bs)) {
            *fail = j;
            return false;
        }
        if (agree && y == x) {
            agree++;
            continue;
        }
        x = y;
        agree = 1;
        uint32_t nx = k + 1 == n ? 0 : k + 1;
        if (ord && pm != UINT32_MAX && pm != k && pm != nx) {
            uint32_t t = ord[nx];
            ord[nx] = ord[pm];
            ord[pm] = t;
        }
        pm = k;
    }
    *at = x;
    return true;
}

/* The free block of the intersection holding the common start x. */
static void common_block(const bankv *v, memd_range_cur *cur, uint64_t sz, uint64_t al,
                         memd_dir dir, uint64_t x, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    for (uint32_t j = 0; j < bv_members(v); j++) {
        uint64_t y, b, bs;
        (void)member_fit(v, cur, j, sz, al, dir, x, &y, &b, &bs); /* y == x */
        if (b > *lo)
            *lo = b;
        if (b + bs < *hi)
            *hi = b + bs;
    }
}

/* Best fit over the intersection: every intersection block that fits, in direction
 * order; the first smallest wins. */
static bool common_best(const bankv *v, memd_range_cur *cur, uint32_t *ord, uint64_t sz,
                        uint64_t al, memd_dir dir, uint64_t *at, uint32_t *fail)
{
    bool found = false;
    uint64_t best = 0, from = dir == MEMD_DIR_TOP_DOWN ? UINT64_MAX : 0, x, lo, hi;
    while (common_fit(v, cur, ord, sz, al, dir, from, &x, fail)) {
        common_block(v, cur, sz, al, dir, x, &lo, &hi);
        if (!found || hi - lo < best) {
            found = true;
            best = hi - lo;
            *at = x;
        }
        /* The member that bounds the block uses the byte at hi (below lo): the next
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

/* First or best fit over the intersection, member j searched through cursor cur[j]
 * (fresh ones; NULL: every question sought from the root, the same placement). After
 * a first fit every bank member's cursor is on its block holding the start found, which
 * the commit then carves without a second descent (memd_range_alloc_at_cur). */
static bool common_place(const bankv *v, memd_range_cur *cur, uint32_t *ord, uint64_t sz,
                         uint64_t al, const memd_class_policy *pol, uint64_t *at, uint32_t *fail)
{
    for (uint32_t j = 0; cur && j < bv_members(v); j++)
        cur[j].set = false;
    for (uint32_t j = 0; ord && j < bv_members(v); j++)
        ord[j] = j;
    if (pol->fit == MEMD_FIT_BEST)
        return common_best(v, cur, ord, sz, al, pol->dir, at, fail);
    return common_fit(v, cur, ord, sz, al, pol->dir, pol->dir == MEMD_DIR_TOP_DOWN ? UINT64_MAX : 0,
                      at, fail);
}

/* Cursors for a search over up to this many members live on the stack (2.3 KiB); larger
 * sets take them from the heap, or without memory search without them. */
#define LOCAL_CURSORS 17

typedef struct cursors {
    memd_range_cur local[LOCAL_CURSORS], *c;
    uint32_t local_ord[LOCAL_CURSORS], *ord; /* common_fit's order of asking */
} cursors;

static void cursors_init(cursors *cs, uint32_t n)
{
    bool small = n <= LOCAL_CURSORS;
    cs->c = small ? cs->local : malloc(sizeof(*cs->c) * n);
    cs->ord = small ? cs->local_ord : malloc(sizeof(*cs->ord) * n);
    for (uint32_t j = 0; cs->c && j < n; j++)
        cs->c[j].set = false;
}

static void cursors_fini(cursors *cs)
{
    if (cs->c != cs->local) {
        free(cs->c);
        free(cs->ord);
    }
}

/* The bank an -ENOMEM names for a lockstep or range request over set[0..n) (every bank
 * when set is NULL): the first without room of its own (its pieces and the lockstep
 * buffers), else, when only the banks' disagreement left no common address, the one
 * with the most bytes in pieces (the lowest id of those). O(n) leapfrogs, on failure
 * only. */
static uint32_t blame(const memd_device *d, memd_kind k, uint8_t r, const uint32_t *set,
                      uint32_t n, uint64_t sz, uint64_t al)
{
    memd_range **b = d->bank[k][r];
    uint32_t fullest = set ? set[0] : 0;
    uint64_t most = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t id = set ? set[j] : j, fail;
        bankv v = {b, &id, 1, d->range[k][r], NULL};
        uint64_t at;
        memd_range_cur cur[2] = {MEMD_RANGE_CUR_INIT, MEMD_RANGE_CUR_INIT};
        if (!common_fit(&v, cur, NULL, sz, al, MEMD_DIR_BOTTOM_UP, 0, &at, &fail))
            return id;
        uint64_t used = memd_range_allocated(b[id]);
        if (used > most) {
            most = used;
            fullest = id;
        }
    }
    return fullest;
}

static uint64_t req_size(const memd_device *d, const memd_placement *p)
{
    uint64_t m = d->spec.groups[p->kind].alignment;
    return (p->size_per_bank + (m - 1)) & ~(m - 1);
}

/* Piece i of a bank-set placement: its address in bank set[i]. */
static inline uint64_t piece_addr(const memd_placement *p, uint32_t i)
{
    return p->addrs ? p->addrs[i] : p->address;
}

/* Piece i's size: its own (footprint rounded it), else the request's sz. */
static inline uint64_t piece_size(const memd_placement *p, uint32_t i, uint64_t sz)
{
    return p->sizes ? p->sizes[i] : sz;
}

/* Spans a bank-set buffer adds to the coverage: each piece of a per-bank buffer, one
 * for a range buffer (the same span in every bank of its set), counted once per bank
 * (cover_occupants) so that the coverage's weight is the pieces' own. */
static inline uint32_t cover_spans(const memd_placement *p)
{
    return p->mode == MEMD_BANKS_PER_BANK ? p->nset : 1;
}

static inline uint32_t cover_occupants(const memd_placement *p)
{
    return p->mode == MEMD_BANKS_PER_BANK ? 1 : p->nset;
}

/* Reserve a bank-set buffer whose pieces are known free: every bank and the coverage
 * reserve their memory first, so nothing fails once something changed. */
static int commit_pieces(memd_device *d, const memd_placement *p, uint64_t sz,
                         const memd_range_cur *cur)
{
    memd_range **b = d->bank[p->kind][p->region];
    memd_cover *c = d->cover[p->kind][p->region];
    int rc = c && memd_cover_reserve(c, cover_spans(p)) < 0 ? -ENOBUFS : 0;
    for (uint32_t i = 0; i < p->nset && rc == 0; i++)
        rc = memd_range_reserve(b[p->set[i]]);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < p->nset; i++)
        (void)memd_range_alloc_at_cur(b[p->set[i]], cur ? &cur[i] : NULL, piece_addr(p, i),
                                      piece_size(p, i, sz)); /* free, reserved */
    for (uint32_t i = 0; c && i < cover_spans(p); i++)
        (void)memd_cover_add(c, piece_addr(p, i), piece_size(p, i, sz),
                             cover_occupants(p)); /* reserved */
    d->subsets[p->kind][p->region]++;
    return 0;
}

/* Reserve a range-lockstep buffer whose range is free in its set's banks and the
 * lockstep map: in the lockstep map (every bank's, for every later request) and the
 * coverage, like a lockstep buffer; it may lie over other banks' pieces. */
static int commit_ranged(memd_device *d, const memd_placement *p, uint64_t sz)
{
    memd_kind k = p->kind;
    uint8_t r = p->region;
    memd_cover *c = d->cover[k][r];
    if (c && memd_cover_reserve(c, 1) < 0)
        return -ENOBUFS;
    int rc = memd_range_alloc_at(d->range[k][r], p->address, sz);
    if (rc)
        return rc;
    if (c)
        (void)memd_cover_add(c, p->address, sz, 1); /* reserved */
    d->ranged[k][r]++;
    lockstep_done(d, k, r);
    return 0;
}

/* ---------------------------------------------------------------- alloc / free */

int memd_banks_fill_set(const memd_device *d, memd_placement *p, const memd_alloc_req *req)
{
    p->set = malloc(sizeof(*p->set) * p->nset);
    if (!p->set)
        return -ENOBUFS;
    for (uint32_t i = 0; i < p->nset; i++)
        p->set[i] = req->nbank_set ? req->bank_set[i] : i;
    if (p->mode == MEMD_BANKS_PER_BANK) {
        p->addrs = malloc(sizeof(*p->addrs) * p->nset);
        p->sizes = req->sizes ? malloc(sizeof(*p->sizes) * p->nset) : NULL;
        if (!p->addrs || (req->sizes && !p->sizes)) {
            memd_placement_fini(p);
            return -ENOBUFS;
        }
        for (uint32_t i = 0; p->sizes && i < p->nset; i++)
            (void)memd_piece_bytes(d, p, req->sizes[i], &p->sizes[i]); /* footprint checked */
    }
    return 0;
}

/* Lockstep in a split region: the coverage's uncovered runs. */
static int alloc_lockstep(memd_device *d, const memd_class_policy *pol, uint64_t sz,
                          uint64_t al, memd_placement *p)
{
    memd_range *lock = d->range[p->kind][p->region];
    int rc;
    if (__builtin_expect(d->subsets[p->kind][p->region] == 0, 0) &&
        !d->cover[p->kind][p->region]) {
        /* No piece anywhere: the lockstep map's free blocks are every bank's. */
        rc = memd_range_alloc(lock, sz, al, pol->dir, pol->fit, &p->address);
        if (rc == 0)
            lockstep_done(d, p->kind, p->region);
        return rc;
    }
    rc = ensure_cover(d, p->kind, p->region);
    memd_cover *c = d->cover[p->kind][p->region];
    if (rc == 0 && memd_cover_reserve(c, 1) < 0)
        rc = -ENOBUFS;
    if (rc)
        return rc;
    rc = memd_cover_fit(c, sz, al, pol->dir, pol->fit, &p->address, NULL, NULL);
    if (rc == -ENOMEM)
        d->oom_bank = blame(d, p->kind, p->region, NULL, d->spec.groups[p->kind].banks, sz, al);
    if (rc == 0)
        rc = memd_range_alloc_at(lock, p->address, sz);
    if (rc == 0) {
        (void)memd_cover_add(c, p->address, sz, 1); /* reserved */
        lockstep_done(d, p->kind, p->region);
    }
    return rc;
}

/* Bounds (bank_hints.h) make a merged per-bank search skip the blocks below its bank's
 * last answer, but cost upkeep on every free: they pay only where the merges walk long
 * (many live buffers). hint_credit sums walked - hint_walk over a region's unbounded
 * searches (mean blocks per bank of one request; while bounds exist, one request in
 * HINT_PROBE still searches unbounded and counts that many times), kept within
 * [0, HINT_CREDIT]: bounds are made when it reaches the top and dropped at 0. The same
 * placements either way. The credit is wide because walks vary a lot from one search to
 * the next (memd-bench-alloc --banks mixed --live 30000: with 2048 a region made and
 * dropped its bounds 44 times in 20k pairs, with 32768 once and for good). */
#define HINT_PROBE 32
#define HINT_CREDIT 32768

static void hints_make(memd_device *d, memd_kind k, uint8_t r)
{
    /* Without memory: no bounds, the same placements. */
    (void)memd_hints_create(d->spec.groups[k].banks, d->spec.groups[k].alignment, &d->hints[k][r]);
    d->hint_probe[k][r] = HINT_PROBE;
}

static void hint_measure(memd_device *d, memd_kind k, uint8_t r, uint64_t walked, int64_t weight)
{
    int64_t c = d->hint_credit[k][r] + ((int64_t)walked - (int64_t)d->hint_walk) * weight;
    c = c < 0 ? 0 : c > HINT_CREDIT ? HINT_CREDIT : c;
    d->hint_credit[k][r] = c;
    if (c == HINT_CREDIT && !d->hints[k][r]) {
        hints_make(d, k, r);
    } else if (c == 0 && d->hints[k][r]) {
        memd_hints_destroy(d->hints[k][r]);
        d->hints[k][r] = NULL;
    }
}

/* Per bank: each bank's own first / best fit clear of the lockstep buffers; nothing
 * changes until every bank has its address. cur[i] (if any) ends on bank set[i]'s
 * chosen block. */
static int place_per_bank(memd_device *d, const memd_class_policy *pol, uint64_t sz,
                          uint64_t al, memd_placement *p, memd_range_cur *cur)
{
    memd_kind k = p->kind;
    uint8_t r = p->region;
    memd_range **b = d->bank[k][r], *lock = d->range[k][r];
    bool alone = memd_range_allocated(lock) == 0, down = pol->dir == MEMD_DIR_TOP_DOWN;
    /* First fit with lockstep buffers: from the bank's bound, if the region keeps them
     * (always with hint_walk 0). */
    bool first = !alone && pol->fit == MEMD_FIT_FIRST, gauge = first && d->hint_walk;
    if (first && !d->hint_walk && !d->hints[k][r])
        hints_make(d, k, r);
    memd_hints *h = first ? d->hints[k][r] : NULL;
    bool probe = h && gauge && --d->hint_probe[k][r] == 0;
    if (probe)
        d->hint_probe[k][r] = HINT_PROBE;
    bool learn = h && al == d->spec.groups[k].alignment;
    uint64_t walked = 0;
    uint32_t i;
    for (i = 0; i < p->nset; i++) {
        bool ok;
        if (alone) {
            memd_range_cur spare, *c = cur ? &cur[i] : &spare;
            int rc = memd_range_fit_cur(b[p->set[i]], piece_size(p, i, sz), al, pol->dir,
                                        pol->fit, &p->addrs[i], c);
            if (rc && rc != -ENOMEM)
                return rc;
            ok = rc == 0;
        } else {
            /* The bank and the lockstep map: two lists of free blocks merged. */
            memd_range_cur own, spare;
            uint64_t none = down ? UINT64_MAX : 0, from = none, w;
            uint64_t psz = piece_size(p, i, sz);
            if (h) /* applies the frees the bank has not seen: before a probe too */
                from = memd_hints_start(h, p->set[i], pol->dir, psz);
            int rc = memd_range_fit_both_from(b[p->set[i]], &own, lock, &spare, psz, al, pol->dir,
                                              pol->fit, probe ? none : from, &p->addrs[i], &w);
            if (rc && rc != -ENOMEM)
                return rc;
            ok = rc == 0;
            walked += w;
            d->walks.merges++;
            d->walks.merge_blocks += w;
            if (ok && learn)
                memd_hints_found(h, p->set[i], pol->dir, psz, p->addrs[i]);
            if (cur)
                cur[i] = own;
        }
        if (!ok) {
            d->oom_bank = p->set[i];
            break;
        }
    }
    if (gauge && (!h || probe))
        hint_measure(d, k, r, walked / (i < p->nset ? i + 1 : p->nset), h ? HINT_PROBE : 1);
    if (i < p->nset)
        return -ENOMEM;
    p->address = p->addrs[0];
    return 0;
}

int memd_banks_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *p)
{
    int rc = split(d, p->kind, p->region);
    if (rc)
        return rc;
    const memd_class_policy *pol = &d->spec.policy[p->kind][req->cls];
    uint64_t al = memd_device_req_alignment(d, p->kind, req), sz = req_size(d, p);
    if (p->mode == MEMD_BANKS_ALL)
        return alloc_lockstep(d, pol, sz, al, p);
    if ((rc = memd_banks_fill_set(d, p, req)))
        return rc;
    /* One cursor per bank of the set, and one for the lockstep map (RANGE). */
    cursors cs;
    cursors_init(&cs, p->nset + 1);
    if (p->mode == MEMD_BANKS_PER_BANK) {
        rc = place_per_bank(d, pol, sz, al, p, cs.c);
    } else { /* RANGE and RANGE_LOCKSTEP: the same search over the set */
        memd_range *lock = d->range[p->kind][p->region];
        bankv v = {d->bank[p->kind][p->region], p->set, p->nset,
                   memd_range_allocated(lock) ? lock : NULL, &d->walks.range_questions};
        d->walks.ranges++;
        uint32_t fail;
        if (!common_place(&v, cs.c, cs.ord, sz, al, pol, &p->address, &fail)) {
            d->oom_bank = blame(d, p->kind, p->region, p->set, p->nset, sz, al);
            rc = -ENOMEM;
        }
    }
    if (rc == 0)
        rc = p->mode == MEMD_BANKS_RANGE_LOCKSTEP ? commit_ranged(d, p, sz)
                                                  : commit_pieces(d, p, sz, cs.c);
    cursors_fini(&cs);
    if (rc)
        memd_placement_fini(p);
    return rc;
}

/* A stored placement's set: valid ids, strictly increasing. */
static bool set_ok(const memd_device *d, const memd_placement *p)
{
    uint32_t banks = d->spec.groups[p->kind].banks;
    if (p->mode == MEMD_BANKS_ALL)
        return true;
    if (p->nset == 0 || p->nset > banks || !p->set ||
        (p->mode == MEMD_BANKS_PER_BANK) != (p->addrs != NULL) ||
        (p->sizes && p->mode != MEMD_BANKS_PER_BANK))
        return false;
    for (uint32_t i = 0; i < p->nset; i++)
        if (p->set[i] >= banks || (i && p->set[i] <= p->set[i - 1]))
            return false;
    return true;
}

/* [addr, addr + sz) is free in allocator r. */
static bool free_at(const memd_range *r, uint64_t addr, uint64_t sz)
{
    uint64_t at, b, bs;
    return memd_range_fit_from(r, sz, 0, MEMD_DIR_BOTTOM_UP, addr, &at, &b, &bs) && at == addr;
}

int memd_banks_alloc_at(memd_device *d, const memd_placement *p)
{
    if ((unsigned)p->mode >= MEMD_BANKS_MODE_COUNT || !set_ok(d, p))
        return -EINVAL;
    memd_range *lock = d->range[p->kind][p->region];
    uint64_t sz = req_size(d, p);
    if (p->mode == MEMD_BANKS_RANGE_LOCKSTEP && !d->bank[p->kind][p->region]) {
        int rc = memd_range_alloc_at(lock, p->address, sz); /* unsplit: one map */
        if (rc == 0)
            d->ranged[p->kind][p->region]++;
        return rc;
    }
    int rc = split(d, p->kind, p->region);
    if (rc)
        return rc;
    memd_range **b = d->bank[p->kind][p->region];
    if (p->mode == MEMD_BANKS_ALL) {
        if (d->subsets[p->kind][p->region] == 0 && !d->cover[p->kind][p->region]) {
            if ((rc = memd_range_alloc_at(lock, p->address, sz)) == 0) /* as alloc_lockstep */
                lockstep_done(d, p->kind, p->region);
            return rc;
        }
        if ((rc = ensure_cover(d, p->kind, p->region)))
            return rc;
        memd_cover *c = d->cover[p->kind][p->region];
        if ((rc = memd_cover_probe(c, p->address, sz)))
            return rc;
        if (memd_cover_reserve(c, 1) < 0)
            return -ENOBUFS;
        if ((rc = memd_range_alloc_at(lock, p->address, sz)))
            return rc;
        (void)memd_cover_add(c, p->address, sz, 1); /* reserved */
        lockstep_done(d, p->kind, p->region);
        return 0;
    }
    uint64_t lo, hi, m = d->spec.groups[p->kind].alignment;
    memd_region_span(d, p->kind, p->region, &lo, &hi);
    for (uint32_t i = 0; i < p->nset; i++) {
        uint64_t a = piece_addr(p, i), s = piece_size(p, i, sz);
        if ((a & (m - 1)) != 0 || a < lo || a > hi || s == 0 || (s & (m - 1)) != 0 ||
            s > hi - a)
            return -EINVAL;
    }
    for (uint32_t i = 0; i < p->nset; i++)
        if (!free_at(b[p->set[i]], piece_addr(p, i), piece_size(p, i, sz)) ||
            !free_at(lock, piece_addr(p, i), piece_size(p, i, sz)))
            return -EBUSY;
    if (p->mode == MEMD_BANKS_RANGE_LOCKSTEP)
        return commit_ranged(d, p, sz);
    return commit_pieces(d, p, sz, NULL);
}

int memd_banks_release(memd_device *d, const memd_placement *p)
{
    memd_range **b = d->bank[p->kind][p->region], *lock = d->range[p->kind][p->region];
    memd_cover *c = d->cover[p->kind][p->region];
    memd_hints *h = d->hints[p->kind][p->region];
    uint64_t sz, lo, hi;
    if (p->mode == MEMD_BANKS_ALL) {
        /* Unchanged on failure. With bounds, every bank's hear of the freed block. */
        int rc = h ? memd_range_free_block(lock, p->address, &sz, &lo, &hi)
                   : memd_range_free(lock, p->address, &sz);
        if (rc == 0 && h)
            memd_hints_shared_freed(h, lo, hi);
        if (rc == 0 && c) /* a coverage holds every lockstep buffer */
            memd_cover_drop(c, p->address, sz, 1); /* added with the buffer */
        if (rc == 0)
            lockstep_done(d, p->kind, p->region);
        return rc;
    }
    if (!b || !set_ok(d, p))
        return -ENOENT;
    /* All or nothing: every piece is there before any change; frees never fail. */
    for (uint32_t i = 0; i < p->nset; i++)
        if (memd_range_lookup(b[p->set[i]], piece_addr(p, i), &sz) < 0)
            return -ENOENT;
    for (uint32_t i = 0; i < p->nset; i++) { /* there: cannot fail */
        if (!h) {
            (void)memd_range_free(b[p->set[i]], piece_addr(p, i), NULL);
        } else {
            (void)memd_range_free_block(b[p->set[i]], piece_addr(p, i), NULL, &lo, &hi);
            memd_hints_own_freed(h, p->set[i], lo, hi);
        }
    }
    for (uint32_t i = 0; c && i < cover_spans(p); i++) /* added with it */
        memd_cover_drop(c, piece_addr(p, i), piece_size(p, i, sz), cover_occupants(p));
    if (--d->subsets[p->kind][p->region] == 0)
        idle_budget(d, p->kind, p->region);
    return 0;
}
