/* memd engine — hash map from a non-zero u64 key to a u64 value: the daemon's handle
 * and quota tables, and the range allocator's live allocations (start -> size).
 * Open addressing with linear probing and backward-shift deletion: O(1) expected
 * lookup, no tombstones, no allocation per insert except when the table doubles, and
 * the table never shrinks (clear keeps it), so steady traffic never calls malloc. */
#ifndef MEMD_ENGINE_MAP_H
#define MEMD_ENGINE_MAP_H

#include <errno.h>
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
    size_t len; /* at most cap / 4 */
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

/* The slot holding key (non-zero), or the empty slot that ends its probe run. cap > 0.
 * The functions below are inline because they are on every request's path and on
 * every range allocation and free. */
static inline size_t memd_map_find(const memd_map_slot *slots, size_t cap, uint64_t key)
{
    size_t i = memd_map_slot_of(key, cap);
    while (slots[i].key != key && slots[i].key != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

/* Returns a pointer to the value of key, or NULL. Valid until the next insert/remove. */
static inline uint64_t *memd_map_get(const memd_map *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return NULL;
    memd_map_slot *s = &m->slots[memd_map_find(m->slots, m->cap, key)];
    return s->key ? &s->val : NULL;
}

/* Starts fetching key's home slot, for a caller with other work to do before the
 * lookup or insert: the slot is usually a cache miss. */
static inline void memd_map_prefetch(const memd_map *m, uint64_t key)
{
    if (m->cap)
        __builtin_prefetch(&m->slots[memd_map_slot_of(key, m->cap)], 1);
}

/* Grows the table until n more keys fit (memd_map_reserve's slow path). -ENOMEM. */
int memd_map_grow(memd_map *m, size_t n);

/* Makes room for n more keys: the next n inserts of new keys cannot fail. -ENOMEM.
 * The load stays at most 1/4 so probe runs stay short (keys come in runs of 8, above). */
static inline int memd_map_reserve(memd_map *m, size_t n)
{
    return n <= m->cap / 4 - m->len ? 0 : memd_map_grow(m, n);
}

/* Inserts or replaces. -EINVAL for key 0, -ENOMEM if the table cannot grow. Growing
 * first may be one resize early for a key that exists, which is harmless. */
static inline int memd_map_put(memd_map *m, uint64_t key, uint64_t val)
{
    if (key == 0)
        return -EINVAL;
    int rc = memd_map_reserve(m, 1);
    if (rc < 0)
        return rc;
    memd_map_slot *s = &m->slots[memd_map_find(m->slots, m->cap, key)];
    m->len += s->key == 0;
    s->key = key;
    s->val = val;
    return 0;
}

/* Removes key; returns true if it was there. */
bool memd_map_remove(memd_map *m, uint64_t key);
/* Removes every key and keeps the table. */
void memd_map_clear(memd_map *m);
void memd_map_free(memd_map *m);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

#endif
