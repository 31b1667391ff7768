/* memd daemon — hash map from a non-zero u64 key to a u64 value (handle -> allocation
 * record, (device, uid) -> quota usage). Open addressing with linear probing and
 * backward-shift deletion: O(1) expected lookup, no tombstones, no allocation per
 * insert except when the table doubles. */
#ifndef MEMD_DAEMON_MAP_H
#define MEMD_DAEMON_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct memd_map_slot {
    uint64_t key; /* 0 = empty */
    uint64_t val;
} memd_map_slot;

typedef struct memd_map {
    memd_map_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t len;
} memd_map;

/* Handles are sequential: a multiplicative mix spreads them over the whole table, but
 * by runs of 8 consecutive keys, which keep 8 consecutive slots (128 bytes):
 * a batch's handles, and the state store's chunks of them (store_internal.h), are
 * then found without a cache miss each. Keys that step by 8 or more are mixed as
 * before, so no regular pattern of live handles piles up on one slot. */
static inline size_t memd_map_slot_of(uint64_t key, size_t cap)
{
    uint64_t run = key >> 3;
    run ^= run >> 33;
    run *= 0xff51afd7ed558ccdull;
    run ^= run >> 33;
    return (size_t)((run << 3) | (key & 7)) & (cap - 1);
}

/* Returns a pointer to the value of key, or NULL. Valid until the next insert/remove.
 * Inline: it is on every request's path. */
static inline uint64_t *memd_map_get(const memd_map *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return NULL;
    for (size_t i = memd_map_slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        memd_map_slot *s = &m->slots[i];
        if (s->key == key)
            return &s->val;
        if (s->key == 0)
            return NULL;
    }
}
/* Inserts or replaces. -EINVAL for key 0, -ENOMEM if the table cannot grow. */
int memd_map_put(memd_map *m, uint64_t key, uint64_t val);
/* Removes key; returns true if it was there. */
bool memd_map_remove(memd_map *m, uint64_t key);
void memd_map_free(memd_map *m);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

#endif
