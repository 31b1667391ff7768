/* libmemclient: the bank ids of a partition of logical cores. tt-metal's L1 bank ids are
 * shuffled over the grid, so a runtime that partitions cores must ask which banks lie
 * there; memd's per-bank records (a dump with MEMCLIENT_DUMP_BANKS) name each bank's
 * core. memctl and the Python package call this one (memctl on one snapshot for several
 * rectangles of cores). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "memclient_internal.h"

static bool among(uint32_t v, const uint32_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v)
            return true;
    return false;
}

static const memclient_group *group_of(const memclient_snapshot *s, uint32_t device,
                                       memd_kind kind)
{
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].device == device && s->groups[i].kind == kind)
            return &s->groups[i];
    return NULL;
}

/* Marks on[] the banks of g on the cores; 0, or the negative errno after its message. */
static int pick(const memclient_snapshot *s, const memclient_group *g, const uint32_t *xs,
                size_t nx, const uint32_t *ys, size_t ny, bool *on)
{
    bool seen = false;
    for (size_t i = 0; i < s->nbank_use; i++) {
        const memclient_bank_use *u = &s->bank_use[i];
        if (u->device != g->device || u->kind != g->kind)
            continue;
        if (u->bank >= g->banks)
            return memclient_fail(-EBADMSG, "memd named bank %u of a group of %u", u->bank,
                                  g->banks);
        if (u->logical_x == MEMD_NO_CORE)
            return memclient_fail(-ENODATA, "the %s banks of device %u have no core "
                                  "coordinates (tt-metal devices' do): give bank ids",
                                  memclient_kind_name(g->kind), g->device);
        seen = true;
        /* A bank appears once per allocatable region: marking it again is harmless. */
        if (among(u->logical_x, xs, nx) && among(u->logical_y, ys, ny))
            on[u->bank] = true;
    }
    if (!seen)
        return memclient_fail(-ENOENT, "device %u has no %s banks", g->device,
                              memclient_kind_name(g->kind));
    return 0;
}

int memclient_snapshot_banks_on_cores(const memclient_snapshot *s, uint32_t device,
                                      memd_kind kind, const uint32_t *xs, size_t nx,
                                      const uint32_t *ys, size_t ny, uint32_t *ids, size_t cap)
{
    if (!s || (unsigned)kind >= MEMD_KIND_COUNT || device == MEMCLIENT_ALL_DEVICES ||
        (nx && !xs) || (ny && !ys) || (cap && !ids))
        return memclient_fail(-EINVAL, "memclient_banks_on_cores: a snapshot, a bank group "
                              "and a device id, and arrays for the counts given");
    const memclient_group *g = group_of(s, device, kind);
    if (!g)
        return memclient_fail(-ENOENT, "device %u has no %s banks", device,
                              memclient_kind_name(kind));
    /* memd's groups have at most MEMD_BANKSET_MAX banks: so the count fits an int. */
    if (g->banks > MEMD_BANKSET_MAX)
        return memclient_fail(-EBADMSG, "memd named a group of %u banks", g->banks);
    bool *on = calloc(g->banks ? g->banks : 1, sizeof *on);
    if (!on)
        return memclient_fail(-ENOMEM, "memclient_banks_on_cores: out of memory");
    int r = pick(s, g, xs, nx, ys, ny, on);
    size_t n = 0;
    for (uint32_t b = 0; r == 0 && b < g->banks; b++)
        if (on[b]) {
            if (n < cap)
                ids[n] = b;
            n++;
        }
    if (r == 0 && n == 0)
        r = memclient_fail(-ENXIO, "no bank lies on these cores");
    free(on);
    return r < 0 ? r : (int)n;
}

int memclient_banks_on_cores(memclient *c, uint32_t device, memd_kind kind, const uint32_t *xs,
                             size_t nx, const uint32_t *ys, size_t ny, uint32_t *ids, size_t cap)
{
    if ((unsigned)kind >= MEMD_KIND_COUNT || device == MEMCLIENT_ALL_DEVICES ||
        (nx && !xs) || (ny && !ys) || (cap && !ids))
        return memclient_fail(-EINVAL, "memclient_banks_on_cores: a bank group and a device id, "
                              "and arrays for the counts given");
    memclient_snapshot *s;
    int r = memclient_dump(c, device, MEMCLIENT_DUMP_BANKS, &s);
    if (r < 0)
        return r;
    r = memclient_snapshot_banks_on_cores(s, device, kind, xs, nx, ys, ny, ids, cap);
    memclient_snapshot_free(s);
    return r;
}
