/* memd engine — u64 hash map (see map.h). */
#include "map.h"

#include <stdlib.h>
#include <string.h>

/* Moves every key into a table of cap slots. */
static int rehash(memd_map *m, size_t cap)
{
    memd_map other = {.cap = cap, .len = m->len, .spread = m->spread};
    other.shift = 64 - (unsigned)__builtin_ctzll(other.cap);
    other.slots = calloc(other.cap, sizeof(*other.slots));
    if (!other.slots)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            other.slots[memd_map_find(&other, m->slots[i].key)] = m->slots[i];
    free(m->slots);
    *m = other;
    return 0;
}

static int grow_once(memd_map *m)
{
    if (m->cap > SIZE_MAX / 2 / sizeof(memd_map_slot))
        return -ENOMEM;
    return rehash(m, m->cap ? m->cap * 2 : 64);
}

int memd_map_trim_slow(memd_map *m)
{
    size_t per_key = m->spread ? 2 : 4, cap = m->cap;
    /* The smallest table the keys fill to at most half its load limit. */
    while (cap / 2 >= MEMD_MAP_TRIM_MIN && m->len * per_key * 2 <= cap / 2)
        cap /= 2;
    return cap == m->cap ? 0 : rehash(m, cap);
}

/* 16 bytes a slot at a load of 1/4 (or 3/4) is cheap next to what a key stands for. */
int memd_map_grow(memd_map *m, size_t n)
{
    if (n > SIZE_MAX / 4 - m->len)
        return -ENOMEM;
    while (m->len + n > memd_map_room(m)) {
        int rc = grow_once(m);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void memd_map_remove_slot(memd_map *m, memd_map_slot *s)
{
    size_t mask = m->cap - 1;
    size_t hole = (size_t)(s - m->slots);
    /* Backward shift: move later members of the probe run into the hole when their
     * home slot does not lie cyclically between the hole and their position. */
    for (size_t j = (hole + 1) & mask; m->slots[j].key != 0; j = (j + 1) & mask) {
        size_t home = memd_map_slot_of(m, m->slots[j].key);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = 0;
    m->slots[hole].val = 0;
    m->len--;
}

void memd_map_clear(memd_map *m)
{
    if (m->cap)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->len = 0;
}

void memd_map_free(memd_map *m)
{
    free(m->slots);
    *m = (memd_map){.spread = m->spread};
}
