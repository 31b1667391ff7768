/* memd engine — a device: one range allocator per allocatable region of each bank
 * group. Lockstep means the group's banks share one address map, so one allocator per
 * region serves every bank; bank offsets only matter when reporting absolute addresses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

int memd_device_create(const memd_device_spec *spec, memd_device **out, memd_error *err)
{
    if (!out)
        return memd_error_set(err, -EINVAL, "no place for the device");
    *out = NULL;
    int rc = memd_device_spec_validate(spec, err);
    if (rc)
        return rc;

    memd_device *d = calloc(1, sizeof(*d));
    if (!d)
        return memd_error_set(err, -ENOMEM, "out of memory");
    d->oom_bank = UINT32_MAX;
    d->hint_walk = MEMD_HINT_WALK;
    rc = memd_device_spec_copy(&d->spec, spec);
    if (rc) {
        free(d);
        return memd_error_set(err, rc, "out of memory");
    }
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        const memd_bank_group_spec *g = &d->spec.groups[k];
        for (uint32_t i = 0; g->banks && i < g->nregions; i++) {
            const memd_region_spec *r = &g->regions[i];
            if (!r->allocatable)
                continue;
            rc = memd_range_create(r->base, r->size, g->alignment, &d->range[k][i]);
            if (rc) {
                memd_error_set(err, rc, "device '%s': cannot create allocator for %s region '%s'",
                               d->spec.name, memd_kind_name((memd_kind)k), r->name);
                memd_device_destroy(d);
                return rc;
            }
        }
    }
    *out = d;
    return 0;
}

void memd_device_destroy(memd_device *d)
{
    if (!d)
        return;
    memd_banks_destroy(d);
    memd_windows_destroy(d);
    memd_cuts_destroy(d);
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        for (int i = 0; i < MEMD_MAX_REGIONS; i++)
            memd_range_destroy(d->range[k][i]);
    memd_device_spec_free(&d->spec);
    free(d);
}

const memd_device_spec *memd_device_spec_of(const memd_device *d)
{
    return d ? &d->spec : NULL;
}

static memd_range *region_range(const memd_device *d, memd_kind kind, uint8_t region)
{
    if (!d || (unsigned)kind >= MEMD_KIND_COUNT || region >= MEMD_MAX_REGIONS)
        return NULL;
    return d->range[kind][region];
}

int memd_device_alloc(memd_device *d, const memd_alloc_req *req, memd_placement *out)
{
    memd_placement p;
    int rc = memd_device_footprint(d, req, &p);
    if (rc)
        return rc;
    d->oom_bank = UINT32_MAX;
    if (req->window) {
        if ((rc = memd_window_alloc(d, req, &p)) == 0)
            *out = p;
        return rc;
    }
    if (!memd_mode_lockstep(p.mode) || d->bank[p.kind][p.region]) {
        rc = memd_banks_alloc(d, req, &p);
        if (rc)
            return rc;
        *out = p;
        return 0;
    }
    /* Lockstep (range lockstep too: its set's maps are every bank's) in a region no
     * subset has used: the one map serves every bank. */
    memd_range *r = d->range[p.kind][p.region];
    const memd_class_policy *pol = &d->spec.policy[p.kind][req->cls];
    uint64_t align = memd_device_req_alignment(d, p.kind, req);
    if (p.mode == MEMD_BANKS_RANGE_LOCKSTEP && (rc = memd_banks_fill_set(d, &p, req)))
        return rc;
    rc = memd_range_alloc(r, p.size_per_bank, align, pol->dir, pol->fit, &p.address);
    if (rc) {
        memd_placement_fini(&p);
        return rc;
    }
    if (p.mode == MEMD_BANKS_RANGE_LOCKSTEP)
        d->ranged[p.kind][p.region]++;
    *out = p;
    return 0;
}

int memd_device_alloc_fixed(memd_device *d, const memd_alloc_req *req, uint64_t address,
                            memd_placement *out)
{
    memd_placement p;
    int rc = memd_device_footprint(d, req, &p);
    if (rc)
        return rc;
    uint64_t lo, hi;
    memd_region_span(d, p.kind, p.region, &lo, &hi);
    if (address & (memd_device_req_alignment(d, p.kind, req) - 1))
        return -EINVAL;
    if (address < lo || address > hi || p.size_per_bank > hi - address)
        return -ERANGE;
    p.address = address;
    if (p.mode != MEMD_BANKS_ALL && (rc = memd_banks_fill_set(d, &p, req)))
        return rc;
    for (uint32_t i = 0; p.addrs && i < p.nset; i++)
        p.addrs[i] = address; /* per bank: each piece where it was asked for */
    d->oom_bank = UINT32_MAX;
    if ((rc = memd_window_fixed(d, req, &p)) || (rc = memd_device_alloc_at(d, &p))) {
        memd_placement_fini(&p);
        return rc;
    }
    *out = p;
    return 0;
}

int memd_device_bank_lowest(const memd_device *d, memd_kind kind, uint32_t bank, uint64_t *addr)
{
    if (!d || (unsigned)kind >= MEMD_KIND_COUNT || bank >= d->spec.groups[kind].banks)
        return -ENOENT;
    bool found = false;
    for (uint8_t i = 0; i < d->spec.groups[kind].nregions; i++) {
        const memd_range *r = region_range(d, kind, i);
        memd_range **b = d->bank[kind][i];
        uint64_t a;
        /* A split region: the bank's own pieces beside the lockstep map. */
        if (r && memd_cut_lowest(d, kind, i, &a) && (!found || a < *addr))
            *addr = a, found = true;
        if (b && memd_range_lowest(b[bank], &a) && (!found || a < *addr))
            *addr = a, found = true;
    }
    return found ? 0 : -ENODATA;
}

void memd_device_walks_get(const memd_device *d, memd_device_walks *w)
{
    *w = d->walks;
}

uint32_t memd_device_oom_bank(const memd_device *d)
{
    return d ? d->oom_bank : UINT32_MAX;
}

int memd_device_alloc_at(memd_device *d, const memd_placement *p)
{
    if (!d || !p || (unsigned)p->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    const memd_bank_group_spec *g = &d->spec.groups[p->kind];
    if (p->banks == 0 || p->banks > g->banks || p->size_per_bank == 0)
        return -EINVAL;
    if (!region_range(d, p->kind, p->region))
        return -EINVAL;
    int rw = memd_window_reserve(d, p);
    if (rw != 0)
        return rw < 0 ? rw : 0;
    return memd_lockstep_alloc_at(d, p);
}

int memd_device_release(memd_device *d, const memd_placement *p)
{
    if (!d || !p || (unsigned)p->kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    if (!region_range(d, p->kind, p->region))
        return -ENOENT;
    int rw = memd_window_release(d, p);
    if (rw != 0)
        return rw < 0 ? rw : 0;
    if (!memd_mode_lockstep(p->mode))
        return memd_banks_release(d, p);
    int rc = memd_device_free(d, p->kind, p->region, p->address);
    if (rc == 0 && p->mode == MEMD_BANKS_RANGE_LOCKSTEP)
        d->ranged[p->kind][p->region]--;
    return rc;
}

int memd_device_free(memd_device *d, memd_kind kind, uint8_t region, uint64_t address)
{
    if (!d || (unsigned)kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    if (!region_range(d, kind, region))
        return -ENOENT;
    return memd_lockstep_free(d, kind, region, address);
}

int memd_device_bank_address(const memd_device *d, memd_kind kind, uint32_t bank,
                             uint64_t address, uint64_t *out)
{
    if (!d || !out || (unsigned)kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    const memd_bank_group_spec *g = &d->spec.groups[kind];
    if (bank >= g->banks)
        return -ERANGE;
    int64_t off = g->bank_offsets ? g->bank_offsets[bank] : 0;
    uint64_t abs;
    if (off >= 0) {
        if (__builtin_add_overflow(address, (uint64_t)off, &abs))
            return -ERANGE;
    } else {
        uint64_t neg = (uint64_t)(-(off + 1)) + 1;
        if (address < neg)
            return -ERANGE;
        abs = address - neg;
    }
    *out = abs;
    return 0;
}

int memd_device_region_stats(const memd_device *d, memd_kind kind, uint8_t region,
                             memd_range_stats *st)
{
    memd_range *r = region_range(d, kind, region);
    if (!r || !st)
        return -ENOENT;
    memd_range_stats_get(r, st);
    memd_cut_stats(d, kind, region, st);
    st->allocations += d->subsets[kind][region];
    return 0;
}

int memd_device_region_largest_free(const memd_device *d, memd_kind kind, uint8_t region,
                                    size_t n, uint64_t *addr, uint64_t *size)
{
    memd_range *r = region_range(d, kind, region);
    if (!r)
        return -ENOENT;
    return (int)memd_range_largest_free(r, n, addr, size);
}

int memd_device_group_stats(const memd_device *d, memd_kind kind, memd_range_stats *st)
{
    if (!d || !st || (unsigned)kind >= MEMD_KIND_COUNT)
        return -EINVAL;
    memset(st, 0, sizeof(*st));
    bool any = false;
    for (int i = 0; i < MEMD_MAX_REGIONS; i++) {
        memd_range *r = d->range[kind][i];
        if (!r)
            continue;
        memd_range_stats s;
        memd_range_stats_get(r, &s);
        memd_cut_stats(d, kind, (uint8_t)i, &s);
        st->total += s.total;
        st->allocated += s.allocated;
        st->free += s.free;
        st->free_blocks += s.free_blocks;
        st->allocations += s.allocations + d->subsets[kind][i];
        /* Regions are disjoint, so the lowest-addressed largest block wins ties. */
        if (s.largest_free > st->largest_free ||
            (s.largest_free == st->largest_free && s.largest_free &&
             s.largest_free_addr < st->largest_free_addr)) {
            st->largest_free = s.largest_free;
            st->largest_free_addr = s.largest_free_addr;
        }
        any = true;
    }
    return any ? 0 : -ENOENT;
}

const memd_range *memd_device_region_range(const memd_device *d, memd_kind kind, uint8_t region)
{
    return region_range(d, kind, region);
}
