/* memd daemon — per-uid quotas (see quota.h); who is charged is alloc.c's rule: every
 * uid holding an allocation, once. */
#include "quota.h"

#include <errno.h>

#include "alloc.h"

/* One slot per (device, bank group, uid): DRAM and SRAM are separate address spaces, so
 * a uid's DRAM buffers do not count against its SRAM (issue 27). */
static uint64_t quota_key(uint32_t dev, memd_kind kind, uint32_t uid)
{
    return ((uint64_t)dev * MEMD_KIND_COUNT + kind + 1) << 32 | uid; /* never 0 */
}

uint64_t memd_quota_used(const memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid)
{
    uint64_t *v = memd_map_get(&st->quota, quota_key(dev, kind, uid));
    return v ? *v : 0;
}

int memd_quota_reserve(memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid)
{
    uint64_t key = quota_key(dev, kind, uid);
    if (memd_map_get(&st->quota, key))
        return 0;
    return memd_map_put(&st->quota, key, 0) < 0 ? -ENOMEM : 0;
}

void memd_quota_add(memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid, uint64_t bytes)
{
    uint64_t key = quota_key(dev, kind, uid);
    uint64_t *v = memd_map_get(&st->quota, key);
    if (v)
        *v += bytes;
    else
        (void)memd_map_put(&st->quota, key, bytes); /* memd_quota_reserve made the slot */
}

void memd_quota_sub(memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid, uint64_t bytes)
{
    uint64_t key = quota_key(dev, kind, uid);
    uint64_t *v = memd_map_get(&st->quota, key);
    if (!v)
        return;
    if (*v <= bytes)
        memd_map_remove(&st->quota, key);
    else
        *v -= bytes;
}

/* Charges every uid holding a its size once (alloc.c): a hold whose uid an earlier hold
 * of a already counted is skipped. */
static int recount_one(void *ctx, memd_alloc *a)
{
    memd_map *m = ctx;
    for (const memd_hold *h = memd_alloc_holders(a); h; h = memd_alloc_next_holder(a, h)) {
        const memd_hold *e = memd_alloc_holders(a);
        while (e != h && e->session->uid != h->session->uid)
            e = memd_alloc_next_holder(a, e);
        if (e != h)
            continue;
        uint64_t key = quota_key(a->dev, (memd_kind)a->pl.kind, h->session->uid);
        uint64_t *v = memd_map_get(m, key);
        if (v)
            *v += a->pl.size_per_bank;
        else if (memd_map_put(m, key, a->pl.size_per_bank) < 0)
            return -ENOMEM;
    }
    return 0;
}

int memd_quota_recount(memd_state *st)
{
    memd_map m = {0};
    if (memd_handles_each(&st->handles, recount_one, &m) < 0) {
        memd_map_free(&m);
        return -ENOMEM;
    }
    memd_map_free(&st->quota);
    st->quota = m;
    return 0;
}
