/* memd daemon — u64 hash map (see map.h). */
#include "map.h"

#include <errno.h>
#include <stdlib.h>

static void put_raw(memd_map_slot *slots, size_t cap, uint64_t key, uint64_t val)
{
    size_t i = memd_map_slot_of(key, cap);
    while (slots[i].key != 0 && slots[i].key != key)
        i = (i + 1) & (cap - 1);
    slots[i].key = key;
    slots[i].val = val;
}

static int grow(memd_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    memd_map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            put_raw(slots, cap, m->slots[i].key, m->slots[i].val);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int memd_map_put(memd_map *m, uint64_t key, uint64_t val)
{
    if (key == 0)
        return -EINVAL;
    /* Keep the load at most 1/4 so probe runs stay short (keys come in runs of 8,
     * map.h): 16 bytes a slot is cheap next to an allocation. Growing first may be
     * one resize early for a key that exists, which is harmless. */
    if ((m->len + 1) * 4 > m->cap) {
        int rc = grow(m);
        if (rc < 0)
            return rc;
    }
    size_t i = memd_map_slot_of(key, m->cap);
    while (m->slots[i].key != 0 && m->slots[i].key != key)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == 0)
        m->len++;
    m->slots[i].key = key;
    m->slots[i].val = val;
    return 0;
}

bool memd_map_remove(memd_map *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return false;
    size_t mask = m->cap - 1;
    size_t i = memd_map_slot_of(key, m->cap);
    while (m->slots[i].key != key) {
        if (m->slots[i].key == 0)
            return false;
        i = (i + 1) & mask;
    }
    /* Backward shift: move later members of the probe run into the hole when their
     * home slot does not lie cyclically between the hole and their position. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].key != 0; j = (j + 1) & mask) {
        size_t home = memd_map_slot_of(m->slots[j].key, m->cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = 0;
    m->slots[hole].val = 0;
    m->len--;
    return true;
}

void memd_map_free(memd_map *m)
{
    free(m->slots);
    *m = (memd_map){0};
}
