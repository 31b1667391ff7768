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
    size_t cap;  /* power of two >= 64, or 0 */
    size_t len;  /* at most cap / 4, or 3 cap / 4 when spread */
    unsigned shift; /* 64 - log2(cap) */
    bool spread; /* set while empty: keys do not come in runs (see memd_map_slot_of) */
} memd_map;

/* Fibonacci hashing: the top bits of the product with 2^64 / phi; consecutive inputs
 * land far apart.
 * Handles are sequential, so by default a map hashes runs of 8 consecutive keys, which
 * keep 8 consecutive slots (128 bytes): a batch's handles, and the state store's chunks
 * of them (store_internal.h), are then found without a cache miss each, and the load
 * stays at most 1/4 so that full runs leave room between them.
 * A spread map hashes whole keys at a load up to 3/4: the range allocator's keys
 * (allocation addresses) have no such runs; hashing them by runs cost it about 5 % per
 * operation at 100k allocations, and the lower load halves its table. */
static inline size_t memd_map_slot_of(const memd_map *m, uint64_t key)
{
    if (m->spread)
        return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
    uint64_t run = (key >> 3) * 0x9E3779B97F4A7C15ull;
    return (size_t)(((run >> (m->shift + 3)) << 3) | (key & 7));
}

/* The slot holding key (non-zero), or the empty slot that ends its probe run. cap > 0.
 * The functions below are inline because they are on every request's path and on
 * every range allocation and free. */
static inline size_t memd_map_find(const memd_map *m, uint64_t key)
{
    size_t i = memd_map_slot_of(m, key);
    while (m->slots[i].key != key && m->slots[i].key != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* The slot holding key, or NULL. Valid until the next insert/remove. */
static inline memd_map_slot *memd_map_lookup(const memd_map *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return NULL;
    memd_map_slot *s = &m->slots[memd_map_find(m, key)];
    return s->key ? s : NULL;
}

/* Returns a pointer to the value of key, or NULL. Valid until the next insert/remove. */
static inline uint64_t *memd_map_get(const memd_map *m, uint64_t key)
{
    memd_map_slot *s = memd_map_lookup(m, key);
    return s ? &s->val : NULL;
}

/* Starts fetching key's home slot, for a caller with other work to do before the
 * lookup or insert: the slot is usually a cache miss. Always inlined: GCC 12 takes a
 * separate function that only prefetches for one without effects and drops the call
 * (the range allocator lost both its prefetches so, 3 % per operation). */
static inline __attribute__((always_inline)) void memd_map_prefetch(const memd_map *m,
                                                                    uint64_t key)
{
    if (m->cap)
        __builtin_prefetch(&m->slots[memd_map_slot_of(m, key)], 1);
}

/* Grows the table until n more keys fit (memd_map_reserve's slow path). -ENOMEM. */
int memd_map_grow(memd_map *m, size_t n);

/* Keys a table of m->cap slots takes: a quarter, or three quarters when spread (issue 14:
 * at a load of at most 1/2 the range allocator's address map alone cost up to 64 bytes
 * a live allocation, just after it doubled; at 3/4, linear probing's runs stay short for
 * keys hashed whole). */
static inline size_t memd_map_room(const memd_map *m)
{
    return m->spread ? m->cap - m->cap / 4 : m->cap / 4;
}

/* Makes room for n more keys: the next n inserts of new keys cannot fail. -ENOMEM. */
static inline int memd_map_reserve(memd_map *m, size_t n)
{
    return n <= memd_map_room(m) - m->len ? 0 : memd_map_grow(m, n);
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
    memd_map_slot *s = &m->slots[memd_map_find(m, key)];
    m->len += s->key == 0;
    s->key = key;
    s->val = val;
    return 0;
}

/* Removes the key in slot s, from memd_map_lookup: a caller that has looked the key up
 * needs no second search. */
void memd_map_remove_slot(memd_map *m, memd_map_slot *s);

/* Removes key; returns true if it was there. */
static inline bool memd_map_remove(memd_map *m, uint64_t key)
{
    memd_map_slot *s = memd_map_lookup(m, key);
    if (s)
        memd_map_remove_slot(m, s);
    return s != NULL;
}

/* Tables at least this large shrink once mostly empty (memd_map_trim). */
#define MEMD_MAP_TRIM_MIN 16384u

/* Halves the table while its keys would fill at most a quarter of the load limit of the
 * smaller one, down to MEMD_MAP_TRIM_MIN slots: a million keys removed give their
 * memory back. The check is one compare, for callers to make after a remove; a trim is
 * paid for by the removes that emptied the table (it needs 8x as many removes as the
 * last growth's inserts between two trims). On -ENOMEM the table stays as it is. */
int memd_map_trim_slow(memd_map *m);
static inline void memd_map_trim(memd_map *m)
{
    if (m->cap > MEMD_MAP_TRIM_MIN && m->len * (16u >> m->spread) < m->cap)
        (void)memd_map_trim_slow(m);
}

/* Removes every key and keeps the table. */
void memd_map_clear(memd_map *m);
/* Frees the table; the map is empty again and keeps its mode. */
void memd_map_free(memd_map *m);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

#endif
