/* memd engine — u64 hash map (see map.h). */
#include "map.h"

#include <stdlib.h>
#include <string.h>

static int grow_once(memd_map *m)
{
    if (m->cap > SIZE_MAX / 2 / sizeof(memd_map_slot))
        return -ENOMEM;
    size_t cap = m->cap ? m->cap * 2 : 64;
    memd_map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            slots[memd_map_find(slots, cap, m->slots[i].key)] = m->slots[i];
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

/* 16 bytes a slot at load 1/4 is cheap next to what a key stands for. */
int memd_map_grow(memd_map *m, size_t n)
{
    if (n > SIZE_MAX / 4 - m->len)
        return -ENOMEM;
    while ((m->len + n) * 4 > m->cap) {
        int rc = grow_once(m);
        if (rc < 0)
            return rc;
    }
    return 0;
}

bool memd_map_remove(memd_map *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return false;
    size_t mask = m->cap - 1;
    size_t hole = memd_map_find(m->slots, m->cap, key);
    if (m->slots[hole].key == 0)
        return false;
    /* Backward shift: move later members of the probe run into the hole when their
     * home slot does not lie cyclically between the hole and their position. */
    for (size_t j = (hole + 1) & mask; m->slots[j].key != 0; j = (j + 1) & mask) {
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

void memd_map_clear(memd_map *m)
{
    if (m->cap)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->len = 0;
}

void memd_map_free(memd_map *m)
{
    free(m->slots);
    *m = (memd_map){0};
}
