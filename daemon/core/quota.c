/* memd daemon — per-uid quotas (see quota.h). */
#include "quota.h"

#include <errno.h>

static uint64_t quota_key(uint32_t dev, uint32_t uid)
{
    return (uint64_t)(dev + 1) << 32 | uid; /* never 0 */
}

uint64_t memd_quota_used(const memd_state *st, uint32_t dev, uint32_t uid)
{
    uint64_t *v = memd_map_get(&st->quota, quota_key(dev, uid));
    return v ? *v : 0;
}

int memd_quota_reserve(memd_state *st, uint32_t dev, uint32_t uid)
{
    uint64_t key = quota_key(dev, uid);
    if (memd_map_get(&st->quota, key))
        return 0;
    return memd_map_put(&st->quota, key, 0) < 0 ? -ENOMEM : 0;
}

void memd_quota_add(memd_state *st, uint32_t dev, uint32_t uid, uint64_t bytes)
{
    uint64_t key = quota_key(dev, uid);
    uint64_t *v = memd_map_get(&st->quota, key);
    if (v)
        *v += bytes;
    else
        (void)memd_map_put(&st->quota, key, bytes); /* memd_quota_reserve made the slot */
}

void memd_quota_sub(memd_state *st, uint32_t dev, uint32_t uid, uint64_t bytes)
{
    uint64_t key = quota_key(dev, uid);
    uint64_t *v = memd_map_get(&st->quota, key);
    if (!v)
        return;
    if (*v <= bytes)
        memd_map_remove(&st->quota, key);
    else
        *v -= bytes;
}
