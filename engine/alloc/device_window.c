/* memd engine — sub-device windows (device.h, memd_device_window_open): tt-metal's
 * sub-device manager, whose sub-devices each get an allocator over the bottom
 * local_l1_size bytes of L1 on their own cores while the global allocator is shrunk from
 * the bottom by as much.
 *
 * The bottom is given up with device_cut.c's shrink, so global buffers cannot land there
 * and no placement code needs to know; each window is a map of its own over that part,
 * shared by its banks (a buffer in it is lockstep over its set there, as tt-metal's
 * sub-device allocators place sharded buffers). Windows of one region have disjoint
 * banks, so they share the addresses. A handful per device: lookups scan. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

static memd_window *window_of(const memd_device *d, uint32_t id)
{
    return d && id >= 1 && id <= d->nwin && d->win[id - 1].map ? &d->win[id - 1] : NULL;
}

static bool has_bank(const memd_window *w, uint32_t bank)
{
    uint32_t lo = 0, hi = w->nbanks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (w->banks[mid] == bank)
            return true;
        if (w->banks[mid] < bank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Both sorted: one merge walk. */
static bool disjoint(const memd_window *w, const uint32_t *banks, uint32_t n)
{
    for (uint32_t i = 0, j = 0; i < w->nbanks && j < n;) {
        if (w->banks[i] == banks[j])
            return false;
        if (w->banks[i] < banks[j])
            i++;
        else
            j++;
    }
    return true;
}

static uint32_t free_slot(memd_device *d)
{
    for (uint32_t i = 0; i < d->nwin; i++)
        if (!d->win[i].map)
            return i;
    memd_window *grown = realloc(d->win, sizeof(*grown) * (d->nwin + 1));
    if (!grown)
        return UINT32_MAX;
    d->win = grown;
    memset(&d->win[d->nwin], 0, sizeof(*grown));
    return d->nwin++;
}

int memd_device_window_open(memd_device *d, memd_kind k, uint8_t r, uint64_t bytes,
                            const uint32_t *banks, uint32_t nbanks, uint32_t *id,
                            memd_error *err)
{
    if (!d || (unsigned)k >= MEMD_KIND_COUNT || r >= MEMD_MAX_REGIONS || !d->range[k][r])
        return memd_error_set(err, -ENOENT, "no allocatable region %u in that bank group",
                              (unsigned)r);
    const memd_bank_group_spec *g = &d->spec.groups[k];
#define WHERE "device '%s' %s region '%s': "
#define WHO d->spec.name, memd_kind_name(k), g->regions[r].name
    for (uint32_t i = 0; i < nbanks; i++)
        if (banks[i] >= g->banks || (i && banks[i] <= banks[i - 1]))
            return memd_error_set(err, -EINVAL, WHERE "a window's banks must be strictly "
                                  "increasing ids below %u", WHO, g->banks);
    for (uint32_t i = 0; i < d->nwin; i++)
        if (d->win[i].map && d->win[i].kind == k && d->win[i].region == r &&
            !disjoint(&d->win[i], banks, nbanks))
            return memd_error_set(err, -EINVAL, WHERE "window %u has some of these banks "
                                  "already: windows share addresses, not banks", WHO, i + 1);
    if (d->cut[k][r][MEMD_END_BOTTOM].bytes > d->win_cut[k][r])
        return memd_error_set(err, -EBUSY, WHERE "its bottom was given up by a shrink: reset "
                              "it before carving sub-device windows there", WHO);
    if (nbanks == 0 || bytes == 0 || bytes % g->alignment)
        return memd_error_set(err, -EINVAL, WHERE "a window needs banks and a non-zero "
                              "multiple of the alignment %llu bytes, not %llu", WHO,
                              (unsigned long long)g->alignment, (unsigned long long)bytes);
#undef WHERE
#undef WHO
    uint32_t slot = free_slot(d);
    uint32_t *own = slot == UINT32_MAX ? NULL : malloc(sizeof(*own) * nbanks);
    if (!own)
        return memd_error_set(err, -ENOBUFS, "out of memory");
    memcpy(own, banks, sizeof(*own) * nbanks);
    uint64_t lo, hi;
    memd_region_span(d, k, r, &lo, &hi);
    uint32_t had = d->cut[k][r][MEMD_END_BOTTOM].n;
    int rc = 0;
    if (bytes > d->win_cut[k][r])
        rc = memd_cut_shrink(d, k, r, MEMD_END_BOTTOM, bytes - d->win_cut[k][r], err);
    memd_range *map = NULL;
    if (rc == 0 && (rc = memd_range_create(lo, bytes, g->alignment, &map)) < 0) {
        memd_cut_release(d, k, r, MEMD_END_BOTTOM, had);
        memd_error_set(err, -ENOBUFS, "out of memory");
        rc = -ENOBUFS;
    }
    if (rc < 0) {
        free(own);
        return rc;
    }
    if (bytes > d->win_cut[k][r])
        d->win_cut[k][r] = bytes;
    d->win[slot] = (memd_window){.map = map, .kind = k, .region = r, .lo = lo, .size = bytes,
                                 .banks = own, .nbanks = nbanks};
    *id = slot + 1;
    return 0;
}

int memd_device_window_close(memd_device *d, uint32_t id)
{
    memd_window *w = window_of(d, id);
    if (!w)
        return -ENOENT;
    if (memd_range_allocated(w->map))
        return -EBUSY;
    memd_range_destroy(w->map);
    free(w->banks);
    memd_kind k = w->kind;
    uint8_t r = w->region;
    memset(w, 0, sizeof *w);
    for (uint32_t i = 0; i < d->nwin; i++)
        if (d->win[i].map && d->win[i].kind == k && d->win[i].region == r)
            return 0; /* the carved part stays as large as the first windows made it */
    d->win_cut[k][r] = 0;
    memd_cut_release(d, k, r, MEMD_END_BOTTOM, 0);
    return 0;
}

int memd_device_window_info(const memd_device *d, uint32_t id, memd_window_info *out)
{
    const memd_window *w = window_of(d, id);
    if (!w)
        return -ENOENT;
    memd_range_stats st;
    memd_range_stats_get(w->map, &st);
    *out = (memd_window_info){.kind = w->kind, .region = w->region, .start = w->lo,
                              .bytes = w->size, .allocated = st.allocated,
                              .allocations = st.allocations};
    return 0;
}

/* The placement's set lies in w's banks (a set of every bank when it has none). */
static bool set_inside(const memd_device *d, const memd_window *w, const memd_placement *p)
{
    if (!p->nset)
        return w->nbanks == d->spec.groups[w->kind].banks;
    for (uint32_t i = 0; i < p->nset; i++)
        if (!has_bank(w, p->set[i]))
            return false;
    return true;
}

int memd_window_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *p)
{
    memd_window *w = window_of(d, req->window);
    if (!w || w->kind != p->kind || w->region != p->region || req->per_bank ||
        req->range_lockstep)
        return -EINVAL;
    if (p->mode == MEMD_BANKS_ALL) /* a set of every bank: still the window's map */
        p->mode = MEMD_BANKS_RANGE;
    p->nset = req->nbank_set ? req->nbank_set : d->spec.groups[p->kind].banks;
    int rc = memd_banks_fill_set(d, p, req);
    if (rc)
        return rc;
    if (!set_inside(d, w, p)) {
        memd_placement_fini(p);
        return -EINVAL;
    }
    const memd_class_policy *pol = &d->spec.policy[p->kind][req->cls];
    rc = memd_range_alloc(w->map, p->size_per_bank, memd_device_req_alignment(d, p->kind, req),
                          pol->dir, pol->fit, &p->address);
    if (rc)
        memd_placement_fini(p);
    return rc;
}

/* The window p lies in: its region, its first bank, its address. */
static memd_window *holder(const memd_device *d, const memd_placement *p)
{
    if (!p->nset || p->mode != MEMD_BANKS_RANGE)
        return NULL;
    for (uint32_t i = 0; i < d->nwin; i++) {
        memd_window *w = &d->win[i];
        if (w->map && w->kind == p->kind && w->region == p->region && p->address >= w->lo &&
            p->address - w->lo < w->size && has_bank(w, p->set[0]))
            return w;
    }
    return NULL;
}

int memd_window_release(memd_device *d, const memd_placement *p)
{
    memd_window *w = holder(d, p);
    if (!w)
        return 0;
    return memd_range_free(w->map, p->address, NULL) == 0 ? 1 : -ENOENT;
}

/* p reserved in w's map: -ERANGE unless it lies wholly inside w, -EBUSY if taken. */
static int reserve_in(const memd_device *d, memd_window *w, const memd_placement *p)
{
    if (w->kind != p->kind || w->region != p->region || p->mode != MEMD_BANKS_RANGE ||
        !set_inside(d, w, p) || p->address < w->lo || p->address - w->lo > w->size ||
        p->size_per_bank > w->size - (p->address - w->lo))
        return -ERANGE;
    return memd_range_alloc_at(w->map, p->address, p->size_per_bank);
}

int memd_device_window_adopt(memd_device *d, uint32_t id, const memd_placement *p)
{
    memd_window *w = window_of(d, id);
    return w ? reserve_in(d, w, p) : -ENOENT;
}

int memd_window_reserve(memd_device *d, const memd_placement *p)
{
    memd_window *w = holder(d, p);
    if (!w)
        return 0;
    int rc = reserve_in(d, w, p);
    return rc < 0 ? rc : 1;
}

int memd_window_fixed(const memd_device *d, const memd_alloc_req *req, const memd_placement *p)
{
    const memd_window *w = holder(d, p);
    if (req->window)
        return w && w == window_of(d, req->window) ? 0 : -ERANGE;
    return w ? -EBUSY : 0;
}

void memd_windows_destroy(memd_device *d)
{
    for (uint32_t i = 0; i < d->nwin; i++) {
        memd_range_destroy(d->win[i].map);
        free(d->win[i].banks);
    }
    free(d->win);
}
